-- Queries: window functions, LATERAL, subqueries, aggregates, DISTINCT ON, ORDER BY/LIMIT.
CREATE TABLE emp (id int PRIMARY KEY, dept text, name text, salary numeric, hired date, boss int);
INSERT INTO emp SELECT g, (ARRAY['eng','ops','sales','hr'])[1 + g % 4], 'e' || lpad(g::text, 3, '0'),
  1000 + (g * 37) % 500, date '2020-01-01' + (g * 13) % 1000, NULLIF(g / 10, 0)
  FROM generate_series(1, 120) g;
CREATE TABLE dept (name text PRIMARY KEY, floor int);
INSERT INTO dept VALUES ('eng', 3), ('ops', 1), ('sales', 2), ('legal', 4);
ANALYZE emp, dept;
-- aggregates, GROUP BY, HAVING, grouping sets
SELECT dept, count(*), sum(salary), round(avg(salary), 3), min(hired), max(hired) FROM emp GROUP BY dept ORDER BY dept;
SELECT dept, count(*) FROM emp GROUP BY dept HAVING sum(salary) > 38000 ORDER BY dept;
SELECT dept, extract(year FROM hired) AS y, count(*) FROM emp GROUP BY ROLLUP (dept, y) ORDER BY dept NULLS LAST, y NULLS LAST;
SELECT dept, boss IS NULL AS top, count(*) FROM emp GROUP BY CUBE (dept, boss IS NULL) ORDER BY 1 NULLS LAST, 2 NULLS LAST;
SELECT string_agg(name, ',' ORDER BY name) FILTER (WHERE id < 8), array_agg(id ORDER BY id DESC) FILTER (WHERE id > 115) FROM emp;
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY salary), mode() WITHIN GROUP (ORDER BY dept) FROM emp;
SELECT count(DISTINCT dept), count(DISTINCT boss), bool_and(salary > 900), bool_or(salary > 1490) FROM emp;
SELECT jsonb_agg(id ORDER BY id) FROM emp WHERE id % 17 = 0;
SELECT stddev_samp(salary)::numeric(12,6), var_pop(salary)::numeric(14,4), corr(id, salary)::numeric(10,8) FROM emp;
-- window functions
SELECT id, dept, salary, rank() OVER w, dense_rank() OVER w, row_number() OVER w
  FROM emp WINDOW w AS (PARTITION BY dept ORDER BY salary DESC, id) ORDER BY dept, salary DESC, id LIMIT 15;
SELECT id, salary, sum(salary) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
  lag(salary) OVER (ORDER BY id), lead(salary, 2, 0) OVER (ORDER BY id) FROM emp WHERE id <= 12 ORDER BY id;
SELECT dept, id, first_value(name) OVER p, last_value(name) OVER p, nth_value(name, 2) OVER p
  FROM emp WINDOW p AS (PARTITION BY dept ORDER BY id RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
  ORDER BY dept, id LIMIT 10;
SELECT ntile(4) OVER (ORDER BY salary, id) AS q, count(*) OVER (PARTITION BY dept), id FROM emp ORDER BY id LIMIT 10;
SELECT hired, salary, avg(salary) OVER (ORDER BY hired RANGE BETWEEN '30 days' PRECEDING AND CURRENT ROW)::numeric(10,2)
  FROM emp ORDER BY hired, id LIMIT 10;
SELECT * FROM (SELECT id, dept, row_number() OVER (PARTITION BY dept ORDER BY salary DESC, id) rn FROM emp) t WHERE rn <= 2 ORDER BY dept, rn;
-- DISTINCT, DISTINCT ON, ORDER BY/LIMIT/OFFSET
SELECT DISTINCT dept FROM emp ORDER BY dept;
SELECT DISTINCT ON (dept) dept, id, salary FROM emp ORDER BY dept, salary DESC, id;
SELECT id, name FROM emp ORDER BY salary DESC, id LIMIT 5 OFFSET 3;
SELECT id FROM emp ORDER BY id DESC FETCH FIRST 3 ROWS ONLY;
SELECT salary FROM emp ORDER BY salary DESC FETCH FIRST 2 ROWS WITH TIES;
SELECT id, boss FROM emp WHERE id < 25 ORDER BY boss NULLS FIRST, id DESC;
-- joins, subqueries, LATERAL
SELECT d.name, count(e.id) FROM dept d LEFT JOIN emp e ON e.dept = d.name GROUP BY d.name ORDER BY d.name;
SELECT e.dept, d.floor FROM emp e FULL JOIN dept d ON e.dept = d.name GROUP BY 1, 2 ORDER BY 1 NULLS LAST, 2;
SELECT e.id, b.name AS boss_name FROM emp e JOIN emp b ON b.id = e.boss WHERE e.id % 25 = 0 ORDER BY e.id;
SELECT id FROM emp e WHERE salary > (SELECT avg(salary) FROM emp x WHERE x.dept = e.dept) AND id < 30 ORDER BY id;
SELECT name FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.dept = d.name) ORDER BY 1;
SELECT name FROM dept d WHERE EXISTS (SELECT 1 FROM emp e WHERE e.dept = d.name AND e.salary > 1495) ORDER BY 1;
SELECT id FROM emp WHERE dept IN (SELECT name FROM dept WHERE floor > 2) AND id < 20 ORDER BY id;
SELECT id FROM emp WHERE boss NOT IN (SELECT id FROM emp WHERE id > 5) ORDER BY id;
SELECT id, salary FROM emp WHERE salary = ANY (SELECT max(salary) FROM emp GROUP BY dept) ORDER BY id;
SELECT id, (SELECT floor FROM dept WHERE name = e.dept) FROM emp e WHERE id < 6 ORDER BY id;
SELECT d.name, top.* FROM dept d, LATERAL (SELECT id, salary FROM emp e WHERE e.dept = d.name ORDER BY salary DESC, id LIMIT 2) top ORDER BY d.name, top.salary DESC, top.id;
SELECT d.name, x.cnt FROM dept d LEFT JOIN LATERAL (SELECT count(*) AS cnt FROM emp e WHERE e.dept = d.name AND e.salary > d.floor * 400) x ON true ORDER BY 1;
SELECT e.id, g FROM emp e CROSS JOIN LATERAL generate_series(1, e.id % 3) g WHERE e.id < 6 ORDER BY 1, 2;
SELECT * FROM emp e JOIN LATERAL (SELECT e.salary * 2 AS dbl) s ON s.dbl > 2980 ORDER BY e.id;
SELECT a.id, b.id FROM emp a JOIN emp b ON a.salary = b.salary AND a.id < b.id ORDER BY 1, 2 LIMIT 10;
SELECT count(*) FROM emp a, emp b WHERE a.dept = b.dept AND a.hired < b.hired;
-- set operations
SELECT dept FROM emp UNION SELECT name FROM dept ORDER BY 1;
SELECT dept FROM emp INTERSECT SELECT name FROM dept ORDER BY 1;
SELECT name FROM dept EXCEPT SELECT dept FROM emp ORDER BY 1;
SELECT boss FROM emp WHERE id < 15 UNION ALL SELECT floor FROM dept ORDER BY 1 NULLS FIRST;
-- expressions over columns
SELECT id, CASE WHEN salary > 1400 THEN 'high' WHEN salary > 1200 THEN 'mid' ELSE 'low' END, coalesce(boss, -1), greatest(id, boss), nullif(dept, 'eng')
  FROM emp WHERE id % 11 = 0 ORDER BY id;
SELECT count(*) FROM emp WHERE name LIKE 'e01%' OR name ~ '^e1[01]9$';
SELECT count(*) FROM emp WHERE hired BETWEEN '2020-06-01' AND '2021-06-01' AND dept <> 'hr';
SELECT id FROM emp WHERE (dept, boss) = ('eng', 4) ORDER BY id;
SELECT id FROM emp WHERE salary IS DISTINCT FROM 1037 AND id < 3 ORDER BY id;
SELECT id, boss FROM emp WHERE boss IS NULL ORDER BY id;
-- views and materialized views over the table
CREATE VIEW emp_v AS SELECT dept, count(*) AS n, sum(salary) AS total FROM emp GROUP BY dept;
SELECT * FROM emp_v ORDER BY dept;
CREATE MATERIALIZED VIEW emp_mv AS SELECT dept, max(salary) AS top FROM emp GROUP BY dept;
SELECT * FROM emp_mv ORDER BY dept;
UPDATE emp SET salary = salary + 1000 WHERE id = 1;
REFRESH MATERIALIZED VIEW emp_mv;
SELECT * FROM emp_mv ORDER BY dept;
CREATE UNIQUE INDEX emp_mv_dept ON emp_mv (dept);
REFRESH MATERIALIZED VIEW CONCURRENTLY emp_mv;
SELECT * FROM emp_mv ORDER BY dept;
CREATE VIEW emp_upd AS SELECT id, name, salary FROM emp WHERE dept = 'ops';
UPDATE emp_upd SET salary = 0 WHERE id = 1;
UPDATE emp_upd SET salary = 1 WHERE id = 2 RETURNING *;
INSERT INTO emp_upd VALUES (500, 'via-view', 1);
SELECT id, dept, name, salary FROM emp WHERE id IN (1, 2, 500) ORDER BY id;
-- parallel query
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TABLE big AS SELECT g AS id, g % 97 AS k, md5(g::text) AS t FROM generate_series(1, 50000) g;
ANALYZE big;
SELECT k, count(*), sum(id) FROM big GROUP BY k ORDER BY k LIMIT 5;
SELECT count(*), sum(id), max(t) FROM big WHERE k = 13;
SELECT count(*) FROM big b JOIN emp e ON b.id = e.id;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP VIEW emp_v, emp_upd;
DROP MATERIALIZED VIEW emp_mv;
DROP TABLE emp, dept, big;
