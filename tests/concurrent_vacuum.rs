//! VACUUM running while other sessions update the table keeps every row and every
//! change. Lazy VACUUM is hidden from other backends' snapshots (PROC_IN_VACUUM), and
//! ours writes metadata in a transaction: readers that took its uncommitted writes for
//! aborted ones once brought deleted row versions back (thousands of extra rows after
//! twenty seconds of this workload).

mod common;

use common::Cluster;

const SECONDS: u64 = 12;

/// Fewer commits than this a second (from 4 clients of one-row UPDATEs) means the
/// workload barely ran beside the VACUUMs, and the totals below would hold trivially.
const MIN_COMMITS_PER_SECOND: u64 = 10;

#[test]
#[ignore = "needs the cluster of `make integration-test`"]
fn vacuum_under_concurrent_updates_keeps_rows_and_totals() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("pgcolumnar_concurrent_vacuum");
    db.query(
        "CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL) USING columnar \
           WITH (autovacuum_enabled = off); \
         INSERT INTO account SELECT g, 1000 FROM generate_series(1, 50) g",
    );
    // One row a transaction: no deadlocks; each adds one to the total.
    let script = "\\set a random(1, 50)\nUPDATE account SET balance = balance + 1 WHERE id = :a;\n";
    let report = std::thread::scope(|s| {
        let bench = s.spawn(|| {
            cluster.pgbench(
                "pgcolumnar_concurrent_vacuum",
                script,
                &["-c", "4", "-j", "2", "-T", &SECONDS.to_string()],
            )
        });
        let started = std::time::Instant::now();
        let mut vacuums = 0;
        while started.elapsed().as_secs() < SECONDS {
            db.query("VACUUM account");
            vacuums += 1;
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let report = bench.join().unwrap();
        assert!(vacuums > 10, "only {vacuums} VACUUMs ran");
        report
    });
    // Each transaction pgbench counts as processed is one committed UPDATE (a client
    // whose transaction fails aborts, and pgbench then fails).
    let commits: u64 = report
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.split('/').next()?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no transaction count in:\n{report}"));
    assert!(
        commits >= SECONDS * MIN_COMMITS_PER_SECOND,
        "only {commits} UPDATEs committed in {SECONDS} s:\n{report}"
    );
    let total = 50_000 + commits;
    assert_eq!(
        db.query("SELECT count(*), count(DISTINCT id), sum(balance) FROM account").trim(),
        format!("50|50|{total}")
    );
    // The same through the primary key, row by row.
    assert_eq!(
        db.query(
            "SET enable_seqscan = off; SET enable_bitmapscan = off; \
             SELECT count(*) FROM generate_series(1, 50) k, LATERAL (SELECT * FROM account WHERE id = k) a"
        )
        .trim(),
        "50"
    );
    db.query("VACUUM account");
    assert_eq!(db.query("SELECT count(*), sum(balance) FROM account").trim(), format!("50|{total}"));
}
