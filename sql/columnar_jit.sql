-- JIT thresholds compare the plan's cost outside pgcolumnar's nodes: the work of
-- ColumnarScan, ColumnarAgg and LastPoint is compiled Rust JIT cannot improve, so their
-- cost alone must not make a plan pay for compiling (and a parallel worker for loading
-- LLVM). pgcolumnar.jit_excludes_columnar = off restores core's rule.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE jit_col (g int, v float8, t text) USING columnar;
INSERT INTO jit_col SELECT i % 10, i / 7.0, 'k' || (i % 3) FROM generate_series(1, 50000) i;
CREATE TABLE jit_heap AS SELECT * FROM jit_col;
ANALYZE jit_col, jit_heap;

-- Which steps of JIT the plan would take ('none' if it is not compiled), and which of
-- pgcolumnar's nodes it runs.
CREATE FUNCTION jit_steps(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE p jsonb; steps text;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
  IF NOT (p->0) ? 'JIT' THEN
    steps := 'none';
  ELSE
    SELECT string_agg(key, ',' ORDER BY key) INTO steps
      FROM jsonb_each(p->0->'JIT'->'Options') WHERE value = 'true';
  END IF;
  RETURN steps || ' / ' || CASE
    WHEN p::text LIKE '%PgColumnarAgg%' THEN 'ColumnarAgg'
    WHEN p::text LIKE '%PgColumnarScan%' THEN 'ColumnarScan'
    ELSE 'core' END;
END $$;

-- Thresholds between the plans' costs outside our nodes and their whole costs.
SET jit = on;
SET jit_above_cost = 500;
SET jit_inline_above_cost = 3000;
SET jit_optimize_above_cost = 3000;
-- The fold's cost is all ours: no JIT.
SELECT jit_steps('SELECT g, sum(v) * 2 + 1, count(*) FROM jit_col GROUP BY g');
-- core's Agg over a ColumnarScan: the Agg's own cost is still below the threshold.
SET pgcolumnar.enable_vector_agg = off;
SELECT jit_steps('SELECT g, sum(v) * 2 + 1, count(*) FROM jit_col GROUP BY g');
-- The same query on heap: its whole cost counts, and is above.
SELECT jit_steps('SELECT g, sum(v) * 2 + 1, count(*) FROM jit_heap GROUP BY g');
RESET pgcolumnar.enable_vector_agg;
-- Core's rule on request (a threshold below the fold's whole cost).
SET pgcolumnar.jit_excludes_columnar = off;
SET jit_above_cost = 300;
SELECT jit_steps('SELECT g, sum(v) * 2 + 1, count(*) FROM jit_col GROUP BY g');
SET jit_above_cost = 500;
RESET pgcolumnar.jit_excludes_columnar;
-- Work above our nodes that passes a threshold is still compiled: a hash join with a
-- heap table on an expression is compiled, but not inlined or optimized (the whole
-- plan's cost passes jit_inline_above_cost, the part outside the ColumnarScan does
-- not) until the thresholds come down to that part.
SELECT jit_steps('SELECT count(*) FROM jit_col a JOIN jit_heap b ON a.v = b.v * 2 + 1');
SET jit_inline_above_cost = 2000;
SELECT jit_steps('SELECT count(*) FROM jit_col a JOIN jit_heap b ON a.v = b.v * 2 + 1');
SET jit_optimize_above_cost = 2000;
SELECT jit_steps('SELECT count(*) FROM jit_col a JOIN jit_heap b ON a.v = b.v * 2 + 1');
-- What other settings switched off stays off.
SET jit_tuple_deforming = off;
SELECT jit_steps('SELECT count(*) FROM jit_col a JOIN jit_heap b ON a.v = b.v * 2 + 1');
SET jit = off;
SELECT jit_steps('SELECT count(*) FROM jit_col a JOIN jit_heap b ON a.v = b.v * 2 + 1');
RESET jit;
SET jit_above_cost = -1;
SELECT jit_steps('SELECT count(*) FROM jit_col a JOIN jit_heap b ON a.v = b.v * 2 + 1');
RESET ALL;

-- Results do not depend on it.
SET max_parallel_workers_per_gather = 0;
SET jit_above_cost = 0;
SELECT g, sum(v), count(*) FROM jit_col GROUP BY g ORDER BY g LIMIT 3;
SET pgcolumnar.jit_excludes_columnar = off;
SELECT g, sum(v), count(*) FROM jit_col GROUP BY g ORDER BY g LIMIT 3;
RESET ALL;

-- Parallel workers of a partial fold compile nothing either.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET jit_above_cost = 10;
SELECT jit_steps('SELECT sum(v) * 2 + 1 FROM jit_col');
SET pgcolumnar.jit_excludes_columnar = off;
SELECT jit_steps('SELECT sum(v) * 2 + 1 FROM jit_col');
RESET ALL;

-- An eagerly aggregated join: the fold is ours, its child (a heap scan here) is not,
-- so the child's cost still counts toward the thresholds.
CREATE TABLE jit_keys (id int PRIMARY KEY, note text);
INSERT INTO jit_keys SELECT i, 'n' || i FROM generate_series(0, 99999) i;
ANALYZE jit_keys;
SET max_parallel_workers_per_gather = 0;
SET jit = on;
SET jit_inline_above_cost = -1;
SET jit_optimize_above_cost = -1;
SET jit_above_cost = 1000;
SELECT jit_steps('SELECT k.id, count(c.v) FROM jit_keys k LEFT JOIN jit_col c ON c.g = k.id GROUP BY k.id');
SET jit_above_cost = 5000;
SELECT jit_steps('SELECT k.id, count(c.v) FROM jit_keys k LEFT JOIN jit_col c ON c.g = k.id GROUP BY k.id');
RESET ALL;
DROP TABLE jit_col, jit_heap, jit_keys;
DROP FUNCTION jit_steps(text);
DROP EXTENSION pgcolumnar;
