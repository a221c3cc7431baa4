//! ColumnarScan: reads only the columns a query uses, and says so in EXPLAIN.

mod common;

use common::{Cluster, Database};

const COLUMNS: usize = 12;

fn setup(db: &Database<'_>) {
    let cols: Vec<String> = (1..=COLUMNS).map(|i| format!("c{i} float8")).collect();
    db.query(&format!("CREATE TABLE wide ({}) USING columnar", cols.join(", ")));
    // Random doubles: every column stores about the same number of bytes.
    let values: Vec<String> = (1..=COLUMNS).map(|i| format!("random() * {i}")).collect();
    db.query(&format!("INSERT INTO wide SELECT {} FROM generate_series(1, 300000)", values.join(", ")));
    db.query("ANALYZE wide");
}

/// Shared buffers (hit + read) of the plan's scan node.
fn scan_buffers(plan: &str) -> u64 {
    let scan_at = plan.find(" on wide").expect("a scan of wide");
    let line = plan[scan_at..].lines().find(|l| l.contains("Buffers: shared")).expect("a Buffers line");
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| *k == "hit" || *k == "read")
        .map(|(_, v)| v.trim_end_matches(',').parse::<u64>().unwrap())
        .sum()
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn one_column_reads_an_eighth_of_the_buffers_of_twelve() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_projection");
    setup(&db);
    let options = "ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF";
    let one = db.explain(options, "SELECT sum(c1) FROM wide");
    // A ColumnarScan under core's Agg, or a ColumnarAgg: both read one column.
    let columnar = one.contains("ColumnarScan") || one.contains("ColumnarAgg");
    assert!(columnar && one.contains("Columns Read: 1 of 12: c1"), "{one}");
    let sums: Vec<String> = (1..=COLUMNS).map(|i| format!("sum(c{i})")).collect();
    let all = db.explain(options, &format!("SELECT {} FROM wide", sums.join(", ")));
    let (b1, b12) = (scan_buffers(&one), scan_buffers(&all));
    assert!(b1 * 8 <= b12, "1 column read {b1} buffers, 12 columns {b12}:\n{one}\n{all}");
    // The same answer as a full sequential scan (serial, so floats add up in one order).
    let serial = "SET max_parallel_workers_per_gather = 0;";
    let via_scan = db.query(&format!("{serial} SELECT sum(c1) FROM wide"));
    let via_seq =
        db.query(&format!("{serial} SET pgcolumnar.enable_columnar_scan = off; SELECT sum(c1) FROM wide"));
    assert_eq!(via_scan, via_seq);
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn explain_shows_the_columns_read() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_scan_explain");
    setup(&db);
    insta::assert_snapshot!(
        db.explain("COSTS OFF", "SELECT c1, c2 FROM wide WHERE c3 > 1.5"),
        @r"
    Custom Scan (PgColumnarScan) on wide
      Columns Read: 3 of 12: c1, c2, c3
      Pushed Filter: (c3 > '1.5'::double precision)
      Row Groups: 3 total, 0 pruned at plan time (vectors: 147 total, 0 pruned)
    "
    );
    insta::assert_snapshot!(
        db.explain("COSTS OFF", "SELECT c1 FROM wide WHERE c3 > 1.5 AND abs(c1) + c2 > 1"),
        @r"
    Custom Scan (PgColumnarScan) on wide
      Filter: ((abs(c1) + c2) > '1'::double precision)
      Columns Read: 3 of 12: c1, c2, c3
      Pushed Filter: (c3 > '1.5'::double precision)
      Row Groups: 3 total, 0 pruned at plan time (vectors: 147 total, 0 pruned)
    "
    );
    db.query("ALTER TABLE wide SET (quals_push_down = off)");
    insta::assert_snapshot!(
        db.explain("COSTS OFF", "SELECT c1, c2 FROM wide WHERE c3 > 1.5"),
        @r"
    Custom Scan (PgColumnarScan) on wide
      Filter: (c3 > '1.5'::double precision)
      Columns Read: 3 of 12: c1, c2, c3
      Zone Map Filter: (c3 > '1.5'::double precision)
    "
    );
    insta::assert_snapshot!(
        db.query("SET max_parallel_workers_per_gather = 0; EXPLAIN (COSTS OFF) SELECT count(*) FROM wide"),
        @r"
    Custom Scan (PgColumnarAgg) on wide
      Batch Fold: yes
      Strategy: metadata
      Aggregates: count(*)
      Columns Read: 0 of 12
    "
    );
}
