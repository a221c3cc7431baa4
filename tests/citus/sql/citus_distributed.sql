-- pgcolumnar tables distributed by Citus (a coordinator and two workers, set up by
-- scripts/citus-test.sh), used by an application role that is not a superuser. Every
-- result is compared with a local heap table holding the same rows; the plans of the
-- shards (citus.explain_all_tasks) show that pgcolumnar's nodes ran on every shard.

-- What each shard's plan ran: the custom scan lines of every task, with shard numbers
-- and ports taken out (they depend on the cluster, not on the plan).
CREATE FUNCTION task_nodes(q text) RETURNS TABLE (node text, tasks bigint) LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL citus.explain_all_tasks = on;
  RETURN QUERY
    SELECT n, count(*) FROM (
      SELECT regexp_replace(regexp_replace(trim(l), '_[0-9]+', '_N', 'g'), '->  ', '') AS n
        FROM (SELECT "QUERY PLAN" AS l FROM explain_lines(q)) p
       WHERE l ~ 'Custom Scan|Seq Scan|Index|Hash Join|Merge Join|Nested Loop') s
     GROUP BY n ORDER BY n;
END $$;
CREATE FUNCTION explain_lines(q text) RETURNS TABLE ("QUERY PLAN" text) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;
-- Rows of two queries that are not in both (none when they agree).
CREATE FUNCTION differences(a text, b text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM (((%s) EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL (%s))) d', a, b, b, a) INTO n;
  RETURN n;
END $$;

CREATE ROLE regress_citus_app LOGIN;
GRANT CREATE ON SCHEMA public TO regress_citus_app;
GRANT EXECUTE ON FUNCTION task_nodes(text), explain_lines(text), differences(text, text) TO regress_citus_app;
SET ROLE regress_citus_app;
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;

-- The TSBS cpu table, columnar and hash-distributed, and its local heap twin.
CREATE TABLE cpu (
  ts timestamptz NOT NULL, hostname text NOT NULL,
  usage_user float8, usage_system float8, usage_idle float8, usage_nice float8,
  usage_iowait float8, usage_irq float8, usage_softirq float8, usage_steal float8
) USING columnar;
SELECT create_distributed_table('cpu', 'hostname', shard_count => 4);
CREATE TABLE cpu_local (LIKE cpu);
INSERT INTO cpu_local
SELECT '2026-01-01'::timestamptz + (g / 40) * interval '10 s', 'host_' || (g % 40),
       (g * 7) % 100, (g * 13) % 100, (g * 3) % 100, (g * 11) % 100,
       (g * 17) % 100, (g * 19) % 100, (g * 23) % 100, (g * 29) % 100
  FROM generate_series(0, 59999) g;
-- \copy through the coordinator, which routes each row to its shard.
-- (\copy takes its file name literally: relative to where scripts/citus-test.sh runs.)
\copy cpu_local TO 'target/citus/cpu.csv' CSV
\copy cpu FROM 'target/citus/cpu.csv' CSV
SELECT count(*) FROM cpu;
SELECT logicalrelid, partmethod, colocationid > 0 AS colocated, repmodel
  FROM pg_dist_partition WHERE logicalrelid = 'cpu'::regclass;
SELECT count(*) AS shards, count(DISTINCT nodeport) AS nodes
  FROM pg_dist_shard JOIN pg_dist_shard_placement USING (shardid) WHERE logicalrelid = 'cpu'::regclass;
-- Every shard is a pgcolumnar table on its worker.
SELECT DISTINCT result FROM run_command_on_shards('cpu',
  $$SELECT a.amname || ' ' || a.amhandler FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '%s'::regclass$$);

-- TSBS-style queries: the same rows as the heap table, and pgcolumnar's nodes in every task.
-- q1: single-groupby-1-1-1 (one host, one hour, max per minute).
SELECT differences(
  $$SELECT date_trunc('minute', ts) AS minute, max(usage_user) FROM cpu
     WHERE hostname = 'host_7' AND ts >= '2026-01-01 01:00' AND ts < '2026-01-01 02:00' GROUP BY 1$$,
  $$SELECT date_trunc('minute', ts) AS minute, max(usage_user) FROM cpu_local
     WHERE hostname = 'host_7' AND ts >= '2026-01-01 01:00' AND ts < '2026-01-01 02:00' GROUP BY 1$$);
SELECT * FROM task_nodes($$SELECT date_trunc('minute', ts) AS minute, max(usage_user) FROM cpu
     WHERE hostname = 'host_7' AND ts >= '2026-01-01 01:00' AND ts < '2026-01-01 02:00' GROUP BY 1$$);
-- q3: cpu-max-all-8 (all columns' max per hour for some hosts).
SELECT differences(
  $$SELECT hostname, date_trunc('hour', ts), max(usage_user), max(usage_system), max(usage_idle),
           max(usage_nice), max(usage_iowait), max(usage_irq), max(usage_softirq), max(usage_steal)
      FROM cpu WHERE hostname IN ('host_1', 'host_2', 'host_3', 'host_4', 'host_5', 'host_6', 'host_7', 'host_8')
     GROUP BY 1, 2$$,
  $$SELECT hostname, date_trunc('hour', ts), max(usage_user), max(usage_system), max(usage_idle),
           max(usage_nice), max(usage_iowait), max(usage_irq), max(usage_softirq), max(usage_steal)
      FROM cpu_local WHERE hostname IN ('host_1', 'host_2', 'host_3', 'host_4', 'host_5', 'host_6', 'host_7', 'host_8')
     GROUP BY 1, 2$$);
-- q4: double-groupby-1 (avg per host and hour): grouped on the shards by the distribution column.
SELECT differences(
  $$SELECT hostname, date_trunc('hour', ts) AS hour, avg(usage_user) FROM cpu GROUP BY 1, 2$$,
  $$SELECT hostname, date_trunc('hour', ts) AS hour, avg(usage_user) FROM cpu_local GROUP BY 1, 2$$);
SELECT * FROM task_nodes($$SELECT hostname, date_trunc('hour', ts) AS hour, avg(usage_user) FROM cpu GROUP BY 1, 2$$);
-- q5: high-cpu-all: rows above a threshold.
SELECT differences($$SELECT * FROM cpu WHERE usage_user > 97.0$$, $$SELECT * FROM cpu_local WHERE usage_user > 97.0$$);
SELECT * FROM task_nodes($$SELECT * FROM cpu WHERE usage_user > 97.0$$);
-- q6: count and average under a filter: partial aggregates on the shards, merged on the coordinator.
SELECT count(*), avg(usage_system), sum(usage_idle), min(ts), max(ts) FROM cpu WHERE usage_user > 90.0;
SELECT count(*), avg(usage_system), sum(usage_idle), min(ts), max(ts) FROM cpu_local WHERE usage_user > 90.0;
SELECT * FROM task_nodes($$SELECT count(*), avg(usage_system), sum(usage_idle) FROM cpu WHERE usage_user > 90.0$$);
-- q7: lastpoint (each host's latest row).
SELECT differences(
  $$SELECT DISTINCT ON (hostname) * FROM cpu ORDER BY hostname, ts DESC$$,
  $$SELECT DISTINCT ON (hostname) * FROM cpu_local ORDER BY hostname, ts DESC$$);
SELECT * FROM task_nodes($$SELECT DISTINCT ON (hostname) * FROM cpu ORDER BY hostname, ts DESC$$);
-- q8: groupby-orderby-limit (the latest minutes before a time).
SELECT date_trunc('minute', ts) AS minute, max(usage_user) FROM cpu
 WHERE ts < '2026-01-01 03:00' GROUP BY 1 ORDER BY 1 DESC LIMIT 5;
SELECT date_trunc('minute', ts) AS minute, max(usage_user) FROM cpu_local
 WHERE ts < '2026-01-01 03:00' GROUP BY 1 ORDER BY 1 DESC LIMIT 5;
-- A TPC-H-style aggregate (q1's shape): grouped sums, averages and counts.
SELECT differences(
  $$SELECT usage_nice > 50 AS flag, round(usage_irq / 25) AS bucket, sum(usage_user), sum(usage_user * (100 - usage_steal)),
           avg(usage_system), avg(usage_idle), count(*) FROM cpu WHERE ts <= '2026-01-01 04:00' GROUP BY 1, 2$$,
  $$SELECT usage_nice > 50 AS flag, round(usage_irq / 25) AS bucket, sum(usage_user), sum(usage_user * (100 - usage_steal)),
           avg(usage_system), avg(usage_idle), count(*) FROM cpu_local WHERE ts <= '2026-01-01 04:00' GROUP BY 1, 2$$);
SELECT * FROM task_nodes($$SELECT usage_nice > 50, round(usage_irq / 25), sum(usage_user), avg(usage_system), count(*)
  FROM cpu WHERE ts <= '2026-01-01 04:00' GROUP BY 1, 2$$);

-- INSERT ... SELECT between co-located distributed tables runs on the shards; from the
-- local table it goes through the coordinator.
CREATE TABLE cpu_hot (LIKE cpu) USING pgcolumnar;
SELECT create_distributed_table('cpu_hot', 'hostname', colocate_with => 'cpu');
INSERT INTO cpu_hot SELECT * FROM cpu WHERE usage_user >= 95;
INSERT INTO cpu_hot SELECT * FROM cpu_local WHERE usage_user < 2;
CREATE TABLE cpu_hot_local AS SELECT * FROM cpu_local WHERE usage_user >= 95 OR usage_user < 2;
SELECT differences($$SELECT * FROM cpu_hot$$, $$SELECT * FROM cpu_hot_local$$);
SELECT count(*), sum(usage_user) FROM cpu_hot;

-- UPDATE and DELETE by key (router queries to one shard) and across shards; the heap twin
-- gets the same changes.
UPDATE cpu SET usage_user = -1 WHERE hostname = 'host_3' AND ts < '2026-01-01 00:10';
UPDATE cpu_local SET usage_user = -1 WHERE hostname = 'host_3' AND ts < '2026-01-01 00:10';
DELETE FROM cpu WHERE hostname = 'host_5' AND usage_idle > 50;
DELETE FROM cpu_local WHERE hostname = 'host_5' AND usage_idle > 50;
UPDATE cpu SET usage_steal = usage_steal + 1 WHERE usage_iowait = 0;
UPDATE cpu_local SET usage_steal = usage_steal + 1 WHERE usage_iowait = 0;
DELETE FROM cpu WHERE usage_softirq = 99;
DELETE FROM cpu_local WHERE usage_softirq = 99;
SELECT differences($$SELECT * FROM cpu$$, $$SELECT * FROM cpu_local$$);
SELECT count(*) FROM cpu;

-- MERGE from a co-located distributed table (Citus runs it on the shards).
CREATE TABLE cpu_fix (hostname text NOT NULL, ts timestamptz NOT NULL, usage_user float8);
SELECT create_distributed_table('cpu_fix', 'hostname', colocate_with => 'cpu');
INSERT INTO cpu_fix SELECT hostname, ts, 100 FROM cpu_local WHERE hostname IN ('host_8', 'host_9') AND ts < '2026-01-01 00:05';
MERGE INTO cpu c USING cpu_fix f ON c.hostname = f.hostname AND c.ts = f.ts
  WHEN MATCHED THEN UPDATE SET usage_user = f.usage_user;
UPDATE cpu_local c SET usage_user = 100 WHERE hostname IN ('host_8', 'host_9') AND ts < '2026-01-01 00:05';
SELECT differences($$SELECT * FROM cpu$$, $$SELECT * FROM cpu_local$$);

-- A co-located join with a heap table distributed the same way.
CREATE TABLE host_info (hostname text NOT NULL, region text, rack int);
SELECT create_distributed_table('host_info', 'hostname', colocate_with => 'cpu');
INSERT INTO host_info SELECT 'host_' || h, CASE WHEN h % 3 = 0 THEN 'eu' ELSE 'us' END, h % 5 FROM generate_series(0, 39) h;
CREATE TABLE host_info_local AS SELECT * FROM host_info;
SELECT differences(
  $$SELECT region, count(*), avg(usage_user) FROM cpu JOIN host_info USING (hostname) WHERE usage_user > 80 GROUP BY region$$,
  $$SELECT region, count(*), avg(usage_user) FROM cpu_local JOIN host_info_local USING (hostname) WHERE usage_user > 80 GROUP BY region$$);
SELECT * FROM task_nodes($$SELECT region, count(*) FROM cpu JOIN host_info USING (hostname) WHERE usage_user > 80 GROUP BY region$$);
-- A reference table (a copy on every node) of pgcolumnar, joined on a column that is not
-- the distribution column.
CREATE TABLE racks (rack int, rack_name text) USING columnar;
SELECT create_reference_table('racks');
INSERT INTO racks SELECT r, 'rack ' || r FROM generate_series(0, 4) r;
SELECT differences(
  $$SELECT rack_name, count(*), max(usage_system) FROM cpu JOIN host_info USING (hostname) JOIN racks USING (rack) GROUP BY rack_name$$,
  $$SELECT 'rack ' || rack, count(*), max(usage_system) FROM cpu_local JOIN host_info_local USING (hostname) GROUP BY rack$$);
-- A repartition join (on columns that are not the distribution column) between two
-- columnar tables.
SET citus.enable_repartition_joins = on;
SELECT differences(
  $$SELECT count(*), sum(a.usage_system) FROM cpu a JOIN cpu_hot b ON a.ts = b.ts AND a.usage_idle = b.usage_idle$$,
  $$SELECT count(*), sum(a.usage_system) FROM cpu_local a JOIN cpu_hot_local b ON a.ts = b.ts AND a.usage_idle = b.usage_idle$$);
SELECT count(*), sum(a.usage_system) FROM cpu a JOIN cpu_hot b ON a.ts = b.ts AND a.usage_idle = b.usage_idle;
RESET citus.enable_repartition_joins;

RESET ROLE;
