-- Table options and shard moves of a distributed pgcolumnar table: options set on the
-- distributed table reach every shard and the table's copy on every worker; a shard
-- moved through logical replication (Citus's default when the table has a replica
-- identity) or with block_writes keeps its rows, indexes and options; so do splits.
-- (tests/citus_moves.sh moves and splits shards under concurrent writes.)
-- Runs after citus_distributed, whose application role it uses.
SET citus.explain_all_tasks = on;
-- The lines of a query's plan (all tasks) that match a pattern, shard numbers and ports out.
CREATE FUNCTION plan_lines(q text, pattern text) RETURNS TABLE (line text, tasks bigint) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
    SELECT regexp_replace(trim(l), '_[0-9]+', '_N', 'g'), count(*)
      FROM (SELECT "QUERY PLAN" AS l FROM explain_lines(q)) p WHERE l ~ pattern GROUP BY 1 ORDER BY 1;
END $$;
-- Each shard's options, as one line per distinct answer.
CREATE FUNCTION shard_options(t regclass) RETURNS TABLE (options text, shards bigint) LANGUAGE sql AS $$
  SELECT coalesce(result, '(none)'), count(*) FROM run_command_on_shards(t,
    $c$SELECT string_agg(option || '=' || value, ', ' ORDER BY option) FROM pgcolumnar.options WHERE relid = '%s'::regclass$c$)
   GROUP BY 1 ORDER BY 1
$$;
-- A shard move that may fail, with the error's shard numbers and node addresses taken out.
CREATE FUNCTION try_move(shard bigint, from_port int, to_port int, mode text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM citus_move_shard_placement(shard, '127.0.0.1', from_port, '127.0.0.1', to_port, shard_transfer_mode => mode::citus.shard_transfer_mode);
  RETURN 'moved';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '_[0-9]+', '_N', 'g');
END $$;
CREATE FUNCTION try_split(shard bigint, mode text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM citus_split_shard_by_split_points(shard,
    ARRAY[((shardminvalue::bigint + shardmaxvalue::bigint) / 2)::text],
    ARRAY[(SELECT nodeid FROM pg_dist_node WHERE groupid = 1), (SELECT nodeid FROM pg_dist_node WHERE groupid = 2)],
    shard_transfer_mode => mode::citus.shard_transfer_mode)
  FROM pg_dist_shard WHERE shardid = shard;
  RETURN 'split';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '_[0-9]+', '_N', 'g');
END $$;
GRANT EXECUTE ON FUNCTION plan_lines(text, text), shard_options(regclass) TO regress_citus_app;
SELECT nodeport AS worker1 FROM pg_dist_node WHERE groupid = 1 \gset
SELECT nodeport AS worker2 FROM pg_dist_node WHERE groupid = 2 \gset

SET ROLE regress_citus_app;
CREATE TABLE metrics (ts int NOT NULL, host text NOT NULL, v float8) USING columnar;
SELECT create_distributed_table('metrics', 'host', shard_count => 4, colocate_with => 'none');
-- ts is a permutation of 1..20000, inserted out of order.
INSERT INTO metrics SELECT (g * 7919) % 20000 + 1, 'h' || (g % 10), g % 97 FROM generate_series(1, 20000) g;
CREATE INDEX metrics_host_ts ON metrics (host, ts);
CREATE TABLE metrics_local AS SELECT * FROM metrics;

-- Options set on the distributed table: here, on every shard, on every worker's copy.
ALTER TABLE metrics SET (sort_by = 'ts', quals_push_down = off);
SELECT option, value FROM pgcolumnar.options WHERE relid = 'metrics'::regclass ORDER BY option;
SELECT * FROM shard_options('metrics');
SELECT DISTINCT success, result FROM run_command_on_workers(
  $$SELECT string_agg(option || '=' || value, ', ' ORDER BY option) FROM pgcolumnar.options WHERE relid = 'public.metrics'::regclass$$);
-- quals_push_down = off is in force on every shard: the filter is the executor's.
SELECT * FROM plan_lines($$SELECT * FROM metrics WHERE v > 95$$, 'Custom Scan \(PgColumnar|Filter');
-- RESET reaches them too: every shard pushes the filter down again.
ALTER TABLE metrics RESET (quals_push_down);
SELECT * FROM shard_options('metrics');
SELECT * FROM plan_lines($$SELECT * FROM metrics WHERE v > 95$$, 'Custom Scan \(PgColumnar|Filter');
-- sort_by is in force on the shards: VACUUM FULL (run on every shard) stores rows in ts order.
SELECT DISTINCT result FROM run_command_on_shards('metrics',
  $$SELECT bool_and(ts > prev) FROM (SELECT ts, lag(ts) OVER () AS prev FROM %s) s WHERE prev IS NOT NULL$$);
VACUUM FULL metrics;
SELECT DISTINCT result FROM run_command_on_shards('metrics',
  $$SELECT bool_and(ts > prev) FROM (SELECT ts, lag(ts) OVER () AS prev FROM %s) s WHERE prev IS NOT NULL$$);
RESET ROLE;

-- Moving a shard through logical replication: 'auto' needs a replica identity (Citus's
-- rule, as for heap tables); 'force_logical' moves it without one, and with one 'auto'
-- moves it back.
SELECT min(shardid) AS moved FROM pg_dist_shard JOIN pg_dist_placement USING (shardid)
 WHERE logicalrelid = 'metrics'::regclass AND groupid = 1 \gset
SELECT try_move(:moved, :worker1, :worker2, 'auto');
SELECT try_move(:moved, :worker1, :worker2, 'force_logical');
SELECT groupid FROM pg_dist_placement WHERE shardid = :moved;
SELECT differences($$SELECT * FROM metrics$$, $$SELECT * FROM metrics_local$$);
ALTER TABLE metrics REPLICA IDENTITY FULL;
SELECT try_move(:moved, :worker2, :worker1, 'auto');
SELECT groupid FROM pg_dist_placement WHERE shardid = :moved;
SELECT differences($$SELECT * FROM metrics$$, $$SELECT * FROM metrics_local$$);
SELECT * FROM shard_options('metrics');
-- block_writes moves it, with every row, index and option.
SELECT try_move(:moved, :worker1, :worker2, 'block_writes');
SELECT groupid FROM pg_dist_placement WHERE shardid = :moved;
SET ROLE regress_citus_app;
SELECT (SELECT count(*) FROM metrics) AS rows, (SELECT count(*) FROM metrics_local) AS heap_rows;
SELECT differences($$SELECT * FROM metrics$$, $$SELECT * FROM metrics_local$$);
SELECT * FROM shard_options('metrics');
SELECT DISTINCT regexp_replace(result, '_[0-9]+', '_N', 'g') AS indexes FROM run_command_on_shards('metrics',
  $$SELECT string_agg(indexrelid::regclass::text, ', ') FROM pg_index WHERE indrelid = '%s'::regclass$$);
-- The moved shard still runs the fast paths; lookups by the indexed columns agree.
SELECT * FROM plan_lines($$SELECT count(*), sum(v) FROM metrics WHERE v > 95$$, 'Custom Scan \(PgColumnar');
SELECT (SELECT sum(v) FROM metrics WHERE v > 95) = (SELECT sum(v) FROM metrics_local WHERE v > 95) AS sums_equal;
SELECT count(*) FROM metrics WHERE host = 'h3' AND ts BETWEEN 100 AND 300;
SELECT count(*) FROM metrics_local WHERE host = 'h3' AND ts BETWEEN 100 AND 300;
RESET ROLE;

-- Splitting a shard, through logical replication and with block_writes: the new shards
-- hold every row and take the table's options.
SELECT try_split(:moved, 'force_logical');
SELECT count(*) AS shards FROM pg_dist_shard WHERE logicalrelid = 'metrics'::regclass;
SELECT differences($$SELECT * FROM metrics$$, $$SELECT * FROM metrics_local$$);
SELECT max(shardid) AS moved FROM pg_dist_shard WHERE logicalrelid = 'metrics'::regclass \gset
SELECT try_split(:moved, 'block_writes');
SELECT count(*) AS shards FROM pg_dist_shard WHERE logicalrelid = 'metrics'::regclass;
SET ROLE regress_citus_app;
SELECT differences($$SELECT * FROM metrics$$, $$SELECT * FROM metrics_local$$);
SELECT * FROM shard_options('metrics');
SELECT * FROM plan_lines($$SELECT count(*), sum(v) FROM metrics WHERE v > 95$$, 'Custom Scan \(PgColumnar');
RESET ROLE;
