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
      Output: '0.1.0'::text
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
    Custom Scan (ColumnarScan) on m
      Columns Read: 3 of 5: id, host, usage
      Pushed Filter: ((usage > '90'::double precision) AND (host = 'host_7'::text))
      Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    // Partly pushed: numeric stays with the executor.
    insta::assert_snapshot!(db.explain(off, "SELECT id FROM m WHERE usage > 90 AND note = 3"), @r"
    Custom Scan (ColumnarScan) on m
      Filter: (note = '3'::numeric)
      Columns Read: 3 of 5: id, usage, note
      Pushed Filter: (usage > '90'::double precision)
      Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    // Not pushed at all.
    insta::assert_snapshot!(db.explain(off, "SELECT id FROM m WHERE usage * 2 > 180"), @r"
    Custom Scan (ColumnarScan) on m
      Filter: ((usage * '2'::double precision) > '180'::double precision)
      Columns Read: 2 of 5: id, usage
    ");
    // A point lookup: one fetch costs less than decoding the one vector zone maps leave.
    insta::assert_snapshot!(db.explain(off, "SELECT host FROM m WHERE id = 77"), @r"
    Index Scan using m_id on m
      Index Cond: (id = 77)
    ");
    // A range zone maps narrow to a few vectors: the scan reads just those.
    insta::assert_snapshot!(db.explain(off, "SELECT host FROM m WHERE id BETWEEN 1000 AND 5000"), @r"
    Custom Scan (ColumnarScan) on m
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
              ->  Custom Scan (ColumnarScan) on m
                    Columns Read: 1 of 5: usage
                    Pushed Filter: (usage < (probe.k)::double precision)
                    Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    insta::assert_snapshot!(db.explain(off, "SELECT k, (SELECT count(*) FROM m WHERE m.usage < probe.k) FROM probe"), @r"
    Seq Scan on probe
      SubPlan 1
        ->  Custom Scan (ColumnarAgg) on m
              Batch Fold: yes
              Strategy: fold
              Aggregates: count(*)
              Columns Read: 1 of 5: usage
              Pushed Filter: (usage < ($0)::double precision)
    ");
    // Parallel: a ColumnarScan under core's partial aggregate (the fold off), and
    // partial ColumnarAggs.
    insta::assert_snapshot!(db.query("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
        SET max_parallel_workers_per_gather = 2; SET pgcolumnar.enable_vector_agg = off;
        EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE usage > 50"), @r"
    Finalize Aggregate
      ->  Gather
            Workers Planned: 2
            ->  Partial Aggregate
                  ->  Parallel Custom Scan (ColumnarScan) on m
                        Columns Read: 1 of 5: usage
                        Pushed Filter: (usage > '50'::double precision)
                        Row Groups: 2 total, 0 pruned at plan time (vectors: 98 total, 0 pruned)
    ");
    insta::assert_snapshot!(db.query("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
        SET max_parallel_workers_per_gather = 2; EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE usage > 50"), @r"
    Finalize Aggregate
      ->  Gather
            Workers Planned: 2
            ->  Parallel Custom Scan (ColumnarAgg) on m
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
    insta::assert_snapshot!(names.join(" "), @"io decode filter output total");
    let sum: f64 = parts[..4].iter().map(|(_, v)| v).sum();
    assert!((sum - parts[4].1).abs() < 0.02, "{components}");
    // The scan node's total cost is the components' total.
    let scan = plan.lines().find(|l| l.contains("ColumnarScan")).unwrap();
    let total: f64 = scan.split("..").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!((total - parts[4].1).abs() < 0.02, "{scan} vs {components}");
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
    Custom Scan (ColumnarAgg) on e
      Batch Fold: yes
      Strategy: metadata
      Aggregates: count(*), min(id), max(ts)
      Columns Read: 2 of 6: id, ts
    "#);
    insta::assert_snapshot!(serial("SELECT count(*), avg(usage), sum(n), bool_and(ok) FROM e WHERE usage > 50"), @r#"
    Custom Scan (ColumnarAgg) on e
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
            ->  Custom Scan (ColumnarAgg) on e
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
    Custom Scan (ColumnarAgg) on e
      Batch Fold: yes
      Strategy: hash
      Aggregates: avg(usage) FILTER (WHERE ok)
      Group Key: date_trunc('hour'::text, ts), host
      Columns Read: 5 of 6: id, ts, host, usage, ok
      Pushed Filter: (id > 500)
    "#
    );
    insta::assert_snapshot!(serial("SELECT date_bin('15 minutes', ts, '2024-01-01'), min(host) FROM e GROUP BY 1"), @r#"
    Custom Scan (ColumnarAgg) on e
      Batch Fold: yes
      Strategy: hash
      Aggregates: min(host)
      Group Key: date_bin('00:15:00'::interval, ts, '2024-01-01 00:00:00+00'::timestamp with time zone)
      Columns Read: 2 of 6: ts, host
    "#);
    // Shapes core's Agg runs: DISTINCT, grouping sets, an expression as key or argument,
    // a WHERE clause the scan cannot evaluate.
    insta::assert_snapshot!(serial("SELECT count(DISTINCT host) FROM e"), @r#"
    Aggregate
      ->  Custom Scan (ColumnarScan) on e
            Columns Read: 1 of 6: host
    "#);
    insta::assert_snapshot!(serial("SELECT host, count(*) FROM e GROUP BY ROLLUP (host)"), @r#"
    MixedAggregate
      Hash Key: host
      Group Key: ()
      ->  Custom Scan (ColumnarScan) on e
            Columns Read: 1 of 6: host
    "#);
    insta::assert_snapshot!(serial("SELECT id % 2, sum(usage * 2) FROM e GROUP BY 1"), @r#"
    HashAggregate
      Group Key: (id % 2)
      ->  Result
            ->  Custom Scan (ColumnarScan) on e
                  Columns Read: 2 of 6: id, usage
    "#);
    insta::assert_snapshot!(serial("SELECT sum(usage) FROM e WHERE usage + 1 > 50"), @r#"
    Aggregate
      ->  Custom Scan (ColumnarScan) on e
            Filter: ((usage + '1'::double precision) > '50'::double precision)
            Columns Read: 1 of 6: usage
    "#);
}
