//! EXPLAIN output that users see, pinned with insta snapshots.

mod common;

use common::Cluster;

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn version_is_folded_to_a_constant_at_plan_time() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_version");
    // version() is immutable, so the planner replaces the call with its value.
    insta::assert_snapshot!(
        db.explain("VERBOSE, COSTS OFF", "SELECT pgcolumnar.version()"),
        @r"
    Result
      Output: '0.4.0'::text
    "
    );
}

/// A columnar table and its btree, for the plan shapes of pushed filters.
fn pushdown_table(db: &common::Database<'_>) {
    db.query(
        "CREATE TABLE m (id int, host text, usage float8, note numeric, r int) USING columnar;
         INSERT INTO m SELECT g, 'host_' || g % 50, (g % 1000) / 10.0, g % 7, hashint4(g)
           FROM generate_series(1, 200000) g;
         CREATE INDEX m_id ON m (id);
         CREATE INDEX m_r ON m (r);
         ANALYZE m;
         CREATE TABLE probe (k int); INSERT INTO probe VALUES (1), (2), (3); ANALYZE probe;",
    );
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn pushed_filter_plan_shapes() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_pushdown");
    pushdown_table(&db);
    let off = "COSTS OFF";
    // Pushed whole.
    insta::assert_snapshot!(db.explain(off, "SELECT id FROM m WHERE host = 'host_7' AND usage > 90"), @r"
    Custom Scan (PgColumnarScan) on m
      Columns Read: 3 of 5: id, host, usage
      Pushed Filter: ((usage > '90'::double precision) AND (host = 'host_7'::text))
      Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    // Partly pushed: a function of a column stays with the executor.
    insta::assert_snapshot!(db.explain(off, "SELECT id FROM m WHERE usage > 90 AND abs(note) + 1 = 4"), @r"
    Custom Scan (PgColumnarScan) on m
      Filter: ((abs(note) + '1'::numeric) = '4'::numeric)
      Columns Read: 3 of 5: id, usage, note
      Pushed Filter: (usage > '90'::double precision)
      Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    // Not pushed at all.
    insta::assert_snapshot!(db.explain(off, "SELECT id FROM m WHERE abs(usage) * 2 > 180"), @r"
    Custom Scan (PgColumnarScan) on m
      Filter: ((abs(usage) * '2'::double precision) > '180'::double precision)
      Columns Read: 2 of 5: id, usage
    ");
    // A point lookup: one fetch costs less than decoding the one vector zone maps leave.
    insta::assert_snapshot!(db.explain(off, "SELECT host FROM m WHERE id = 77"), @r"
    Index Scan using m_id on m
      Index Cond: (id = 77)
    ");
    // A range zone maps narrow to a few vectors: the scan reads just those.
    insta::assert_snapshot!(db.explain(off, "SELECT host FROM m WHERE id BETWEEN 1000 AND 5000"), @r"
    Custom Scan (PgColumnarScan) on m
      Columns Read: 2 of 5: id, host
      Pushed Filter: ((id >= 1000) AND (id <= 5000))
      Row Groups: 2 total, 1 pruned at plan time (vectors: 98 total, 95 pruned)
    ");
    // A lookup by a column whose values are spread over every vector: the index wins.
    insta::assert_snapshot!(db.explain(off, "SELECT host FROM m WHERE r = hashint4(77)"), @r"
    Index Scan using m_r on m
      Index Cond: (r = '-1172168408'::integer)
    ");
    // Parameterized: the outer row's value is pushed, into a ColumnarScan (the fold off)
    // and into a ColumnarAgg.
    insta::assert_snapshot!(db.query("SET pgcolumnar.enable_vector_agg = off;
        EXPLAIN (COSTS OFF) SELECT k, (SELECT count(*) FROM m WHERE m.usage < probe.k) FROM probe"), @r"
    Seq Scan on probe
      SubPlan 1
        ->  Aggregate
              ->  Custom Scan (PgColumnarScan) on m
                    Columns Read: 1 of 5: usage
                    Pushed Filter: (usage < (probe.k)::double precision)
                    Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    insta::assert_snapshot!(db.explain(off, "SELECT k, (SELECT count(*) FROM m WHERE m.usage < probe.k) FROM probe"), @r"
    Seq Scan on probe
      SubPlan 1
        ->  Custom Scan (PgColumnarAgg) on m
              Batch Fold: yes
              Strategy: fold
              Aggregates: count(*)
              Columns Read: 1 of 5: usage
              Pushed Filter: (usage < ($0)::double precision)
    ");
    // Parallel: a ColumnarScan under core's partial aggregate (the fold off), and
    // partial ColumnarAggs. One worker beside the leader: the test cluster plans for 2
    // cores (`pgcolumnar.parallel_cores`).
    insta::assert_snapshot!(db.query("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
        SET max_parallel_workers_per_gather = 2; SET pgcolumnar.enable_vector_agg = off;
        EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE usage > 50"), @r"
    Finalize Aggregate
      ->  Gather
            Workers Planned: 1
            ->  Partial Aggregate
                  ->  Parallel Custom Scan (PgColumnarScan) on m
                        Columns Read: 1 of 5: usage
                        Pushed Filter: (usage > '50'::double precision)
                        Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    insta::assert_snapshot!(db.query("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
        SET max_parallel_workers_per_gather = 2; EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE usage > 50"), @r"
    Finalize Aggregate
      ->  Gather
            Workers Planned: 1
            ->  Parallel Custom Scan (PgColumnarAgg) on m
                  Batch Fold: yes
                  Strategy: fold
                  Partial: yes (transition states for Finalize Aggregate)
                  Aggregates: PARTIAL count(*)
                  Columns Read: 1 of 5: usage
                  Pushed Filter: (usage > '50'::double precision)
    ");
}

/// The cost components EXPLAIN VERBOSE shows add up to the scan's own cost, and name
/// the paths the ColumnarScan was weighed against.
#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn verbose_cost_components() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_costs");
    pushdown_table(&db);
    let plan = db.explain("VERBOSE", "SELECT id FROM m WHERE host = 'host_7' AND usage > 90");
    let line = |label: &str| {
        plan.lines()
            .find_map(|l| l.trim().strip_prefix(label).map(str::to_string))
            .unwrap_or_else(|| panic!("no {label} in\n{plan}"))
    };
    let components = line("Cost Components: ");
    let parts: Vec<(String, f64)> = components
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    let names: Vec<&str> = parts.iter().map(|(k, _)| k.as_str()).collect();
    insta::assert_snapshot!(names.join(" "), @"io decode filter output metadata total");
    let sum: f64 = parts[..5].iter().map(|(_, v)| v).sum();
    assert!((sum - parts[5].1).abs() < 0.02, "{components}");
    // The scan node's total cost is the components' total, and its start-up the metadata's.
    let scan = plan.lines().find(|l| l.contains("ColumnarScan")).unwrap();
    let costs = scan.split("cost=").nth(1).unwrap();
    let startup: f64 = costs.split("..").next().unwrap().parse().unwrap();
    let total: f64 = costs.split("..").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!((total - parts[5].1).abs() < 0.02, "{scan} vs {components}");
    assert!((startup - parts[4].1).abs() < 0.02, "{scan} vs {components}");
    let selectivity: f64 = line("Pushed Filter Selectivity: ").parse().unwrap();
    assert!(selectivity > 0.0 && selectivity < 0.01, "{selectivity}");
    let considered = line("Paths Considered: ");
    assert!(considered.contains("Seq Scan: "), "{considered}");
}

/// ColumnarAgg's EXPLAIN for each shape it folds, and core's plan for shapes it leaves.
#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn fold_plan_shapes() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_fold");
    db.query(
        "CREATE TABLE e (id int, ts timestamptz, host text, usage float8, n numeric, ok bool) USING columnar;
         INSERT INTO e SELECT g, timestamptz '2024-01-01 00:00+00' + g * interval '10 s', 'host_' || g % 50,
             (g % 1000) / 10.0, g % 7, g % 3 = 0
           FROM generate_series(1, 100000) g;
         ANALYZE e;",
    );
    let serial = |q: &str| {
        db.query(&format!(
            "SET max_parallel_workers_per_gather = 0; SET timezone = 'UTC'; EXPLAIN (COSTS OFF) {q}"
        ))
    };
    // Without GROUP BY: zone maps answer count and integer min/max of whole vectors;
    // with a filter (or other aggregates) the values are folded.
    insta::assert_snapshot!(serial("SELECT count(*), min(id), max(ts) FROM e"), @r#"
    Custom Scan (PgColumnarAgg) on e
      Batch Fold: yes
      Strategy: metadata
      Aggregates: count(*), min(id), max(ts)
      Columns Read: 2 of 6: id, ts
    "#);
    insta::assert_snapshot!(serial("SELECT count(*), avg(usage), sum(n), bool_and(ok) FROM e WHERE usage > 50"), @r#"
    Custom Scan (PgColumnarAgg) on e
      Batch Fold: yes
      Strategy: fold
      Aggregates: count(*), avg(usage), sum(n), bool_and(ok)
      Columns Read: 3 of 6: usage, n, ok
      Pushed Filter: (usage > '50'::double precision)
    "#);
    // GROUP BY a column, a time bucket, several keys; HAVING, FILTER, ORDER BY / LIMIT.
    insta::assert_snapshot!(
        serial("SELECT host, max(usage) FROM e GROUP BY host HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 3"),
        @r#"
    Limit
      ->  Sort
            Sort Key: (max(usage)) DESC
            ->  Custom Scan (PgColumnarAgg) on e
                  Filter: ((count(*)) > 1)
                  Batch Fold: yes
                  Strategy: hash
                  Aggregates: max(usage), count(*)
                  Group Key: host
                  Columns Read: 2 of 6: host, usage
    "#
    );
    insta::assert_snapshot!(
        serial("SELECT date_trunc('hour', ts), host, avg(usage) FILTER (WHERE ok) FROM e WHERE id > 500 GROUP BY 1, 2"),
        @r#"
    Custom Scan (PgColumnarAgg) on e
      Batch Fold: yes
      Strategy: hash
      Aggregates: avg(usage) FILTER (WHERE ok)
      Group Key: date_trunc('hour'::text, ts), host
      Columns Read: 5 of 6: id, ts, host, usage, ok
      Pushed Filter: (id > 500)
    "#
    );
    insta::assert_snapshot!(serial("SELECT date_bin('15 minutes', ts, '2024-01-01'), min(host) FROM e GROUP BY 1"), @r#"
    Custom Scan (PgColumnarAgg) on e
      Batch Fold: yes
      Strategy: hash
      Aggregates: min(host)
      Group Key: date_bin('00:15:00'::interval, ts, '2024-01-01 00:00:00+00'::timestamp with time zone)
      Columns Read: 2 of 6: ts, host
    "#);
    // count(DISTINCT col) is folded.
    insta::assert_snapshot!(serial("SELECT count(DISTINCT host) FROM e"), @r#"
    Custom Scan (PgColumnarAgg) on e
      Batch Fold: yes
      Strategy: fold
      Aggregates: count(DISTINCT host)
      Columns Read: 1 of 6: host
    "#);
    // An arithmetic key of integers, and arithmetic in an argument.
    insta::assert_snapshot!(serial("SELECT id % 2, sum(usage * 2) FROM e GROUP BY 1"), @r#"
    Custom Scan (PgColumnarAgg) on e
      Batch Fold: yes
      Strategy: hash
      Aggregates: sum((usage * '2'::double precision))
      Group Key: (id % 2)
      Columns Read: 2 of 6: id, usage
    "#);
    // Shapes core's Agg runs: other DISTINCT aggregates, grouping sets, a float
    // expression as key, a WHERE clause the scan cannot evaluate.
    insta::assert_snapshot!(serial("SELECT string_agg(DISTINCT host, ',') FROM e"), @r#"
    Aggregate
      ->  Custom Scan (PgColumnarScan) on e
            Columns Read: 1 of 6: host
    "#);
    insta::assert_snapshot!(serial("SELECT host, count(*) FROM e GROUP BY ROLLUP (host)"), @r#"
    MixedAggregate
      Hash Key: host
      Group Key: ()
      ->  Custom Scan (PgColumnarScan) on e
            Columns Read: 1 of 6: host
    "#);
    insta::assert_snapshot!(serial("SELECT usage * 2, count(*) FROM e GROUP BY 1"), @r#"
    HashAggregate
      Group Key: (usage * '2'::double precision)
      ->  Result
            ->  Custom Scan (PgColumnarScan) on e
                  Columns Read: 1 of 6: usage
    "#);
    insta::assert_snapshot!(serial("SELECT sum(usage) FROM e WHERE abs(usage) + 1 > 50"), @r#"
    Aggregate
      ->  Custom Scan (PgColumnarScan) on e
            Filter: ((abs(usage) + '1'::double precision) > '50'::double precision)
            Columns Read: 1 of 6: usage
    "#);
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn last_point_plan_shapes() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_last_point");
    db.query(
        "CREATE TABLE e (id int, ts timestamptz, host text, usage float8) USING columnar;
         INSERT INTO e SELECT g, timestamptz '2024-01-01 00:00+00' + g * interval '10 s', 'host_' || g % 50,
             (g % 1000) / 10.0
           FROM generate_series(1, 100000) g;
         CREATE TABLE eh AS SELECT * FROM e;
         CREATE INDEX eh_host_ts ON eh (host, ts DESC);
         ANALYZE e, eh;",
    );
    let explain = |options: &str, q: &str| {
        let plan = db.query(&format!(
            "SET max_parallel_workers_per_gather = 0; SET timezone = 'UTC'; EXPLAIN ({options}) {q}"
        ));
        // The sort's memory is the platform's.
        plan.lines().filter(|l| !l.contains("Sort Method")).collect::<Vec<_>>().join("\n")
    };
    let plan = |q: &str| explain("COSTS OFF", q);
    // Columnar: zone maps, newest first; LastPoint's rows come unordered, core sorts them.
    insta::assert_snapshot!(plan("SELECT DISTINCT ON (host) host, ts, usage FROM e ORDER BY host, ts DESC"), @r#"
    Sort
      Sort Key: host, ts DESC
      ->  Custom Scan (PgColumnarLastPoint) on e
            Strategy: zone maps, best rows first
            Key: host
            Best Row By: ts DESC
            Columns Ranked: ts, host
    "#);
    // What it read: one vector ranked, the 48 others passed by once their keys showed
    // nothing newer could be in them; the other column fetched for the 50 winners.
    insta::assert_snapshot!(
        explain(
            "ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF",
            "SELECT DISTINCT ON (host) host, ts, usage FROM e ORDER BY host, ts DESC"
        ),
        @r#"
    Sort (actual rows=50 loops=1)
      Sort Key: host, ts DESC
      ->  Custom Scan (PgColumnarLastPoint) on e (actual rows=50 loops=1)
            Strategy: zone maps, best rows first
            Key: host
            Best Row By: ts DESC
            Columns Ranked: ts, host
            Row Groups Read: 1
            Row Groups Skipped: 0
            Vectors Read: 1
            Vectors Skipped by Zone Maps: 0
            Vectors Skipped by Keys: 48
            Rows Ranked: 1696
            Rows Fetched: 50
    "#
    );
    // max per key, a pushed filter, HAVING on the result.
    insta::assert_snapshot!(
        plan("SELECT host, max(ts) FROM e WHERE usage > 10 GROUP BY host HAVING max(ts) > '2024-01-01'"),
        @r#"
    Custom Scan (PgColumnarLastPoint) on e
      Filter: ((max(ts)) > '2024-01-01 00:00:00+00'::timestamp with time zone)
      Strategy: zone maps, best rows first
      Key: host
      Best Row By: max(ts)
      Columns Ranked: ts, host, usage
      Pushed Filter: (usage > '10'::double precision)
    "#
    );
    // Heap with a btree on (host, ts DESC): a skip scan, forward for ts DESC, backward
    // for ts; a WHERE clause tested on the rows the descents reach.
    insta::assert_snapshot!(plan("SELECT DISTINCT ON (host) host, ts FROM eh ORDER BY host, ts DESC LIMIT 10"), @r#"
    Limit
      ->  Sort
            Sort Key: host, ts DESC
            ->  Custom Scan (PgColumnarLastPoint) on eh
                  Strategy: index skip scan (forward)
                  Index: eh_host_ts
                  Key: host
                  Best Row By: ts DESC
    "#);
    insta::assert_snapshot!(plan("SELECT DISTINCT ON (host) host, ts FROM eh WHERE usage < 50 ORDER BY host, ts"), @r#"
    Sort
      Sort Key: host, ts
      ->  Custom Scan (PgColumnarLastPoint) on eh
            Strategy: index skip scan (backward)
            Index: eh_host_ts
            Key: host
            Best Row By: ts
            Filter: (usage < '50'::double precision)
    "#);
    // One descent per key, plus those that find the NULL keys and the end.
    insta::assert_snapshot!(
        explain(
            "ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF",
            "SELECT DISTINCT ON (host) host, ts FROM eh ORDER BY host, ts DESC"
        ),
        @r#"
    Sort (actual rows=50 loops=1)
      Sort Key: host, ts DESC
      ->  Custom Scan (PgColumnarLastPoint) on eh (actual rows=50 loops=1)
            Strategy: index skip scan (forward)
            Index: eh_host_ts
            Key: host
            Best Row By: ts DESC
            Index Descents: 52
            Rows Examined: 50
    "#
    );
    // VERBOSE shows what was weighed.
    let verbose =
        explain("VERBOSE", "SELECT DISTINCT ON (host) host, ts, usage FROM e ORDER BY host, ts DESC");
    for field in ["Estimated Keys: 50", "Estimated Rows Ranked:", "LastPoint Cost:", "Core Cost:"] {
        assert!(verbose.contains(field), "{verbose}");
    }
    // A third sort key breaks ties: core's plan.
    insta::assert_snapshot!(plan("SELECT DISTINCT ON (host) host, ts, usage FROM e ORDER BY host, ts DESC, usage"), @r#"
    Unique
      ->  Sort
            Sort Key: host, ts DESC, usage
            ->  Custom Scan (PgColumnarScan) on e
                  Columns Read: 3 of 4: ts, host, usage
    "#);
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn heap_pushed_plan_shapes() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_heap_pushed");
    db.query(
        "CREATE TABLE h (i int, t text) WITH (quals_push_down = on);
         INSERT INTO h SELECT g, 'v' || (g % 10) FROM generate_series(1, 100000) g;",
    );
    db.query("VACUUM ANALYZE h");
    let explain = |options: &str, q: &str| {
        db.query(&format!("SET max_parallel_workers_per_gather = 0; EXPLAIN ({options}) {q}"))
    };
    // The pushed clause apart from the executor's.
    insta::assert_snapshot!(explain("COSTS OFF", "SELECT count(*) FROM h WHERE i > 99000 AND t LIKE 'v1%'"), @r#"
    Aggregate
      ->  Custom Scan (PgColumnarPushedSeqScan) on h
            Filter: (t ~~ 'v1%'::text)
            Pushed Filter: (i > 99000)
    "#);
    // With ANALYZE, the rows heapam rejected and those the executor's Filter did; the
    // clause is shown as written (heapam tests it as `i > 99000`).
    insta::assert_snapshot!(
        explain("ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF", "SELECT count(*) FROM h WHERE 99000 < i AND t LIKE 'v1%'"),
        @r#"
    Aggregate (actual rows=1 loops=1)
      ->  Custom Scan (PgColumnarPushedSeqScan) on h (actual rows=100 loops=1)
            Filter: (t ~~ 'v1%'::text)
            Rows Removed by Filter: 900
            Pushed Filter: (99000 < i)
            Rows Removed by Pushed Filter: 99000
    "#
    );
    // VERBOSE: the estimate of what the pushed clauses keep.
    let verbose = explain("VERBOSE", "SELECT i FROM h WHERE i = 5");
    assert!(
        verbose.contains("Pushed Filter: (i = 5)") && verbose.contains("Pushed Filter Selectivity: 0.0000"),
        "{verbose}"
    );
}
