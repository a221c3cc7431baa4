//! Differential test of LastPoint: generated rows in a columnar table and two heap
//! copies (one with btrees on (key, time)), loaded in batches written out of time
//! order, with keys that only old batches hold, NULL keys and times, and the winners
//! of a first query deleted; generated DISTINCT ON and per-key max / min queries run on
//! each and with LastPoint off, results compared exactly.

mod common;

use common::{Cluster, Database, Rng};
use std::fmt::Write;

const DDL: &str = "id int, g int, h text, ts timestamptz, v int, f float8";
const BATCH_ROWS: u64 = 40_000;
const BATCHES: u64 = 6;

/// Batch `b` of the rows: times rise with `id` (each row its own second, so no two rows
/// tie), keys from a range that depends on the batch: the oldest batch alone holds
/// keys 40-59 and texts `only-*`.
fn batch(rng: &mut Rng, b: u64) -> Vec<u8> {
    let mut out = String::new();
    let shuffled = b != 4 && rng.chance(30);
    let mut ids: Vec<u64> = (b * BATCH_ROWS..(b + 1) * BATCH_ROWS).collect();
    if shuffled {
        for i in (1..ids.len()).rev() {
            ids.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    // Batch 4 reports its keys round robin, in a fixed order and never NULL: its key
    // vectors repeat byte for byte (LastPoint then knows their keys without decoding).
    let round_robin = b == 4;
    for id in ids {
        let g = if round_robin {
            id % 12
        } else if b == 0 && rng.chance(5) {
            40 + rng.below(20)
        } else {
            rng.below(if b.is_multiple_of(2) { 40 } else { 12 })
        };
        let h = if round_robin {
            format!("host-{}", id % 400)
        } else if b == 0 && rng.chance(2) {
            format!("only-{}", rng.below(30))
        } else {
            format!("host-{}", rng.below(if b == 3 { 3000 } else { 400 }))
        };
        let null = |rng: &mut Rng, v: String| {
            if rng.chance(1) && !round_robin {
                "\\N".to_string()
            } else {
                v
            }
        };
        let ts = (1_704_067_200 + id * 3).to_string();
        writeln!(
            out,
            "{id}\t{}\t{}\t{}\t{}\t{}",
            null(rng, g.to_string()),
            null(rng, h),
            null(rng, ts),
            rng.below(1000),
            (rng.below(2_000_000) as f64 - 1e6) / 7.0
        )
        .unwrap();
    }
    out.into_bytes()
}

fn predicate(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => format!("v < {}", rng.below(1000)),
        1 => format!("v BETWEEN {} AND {}", rng.below(500), 500 + rng.below(500)),
        2 => format!("f > {}", rng.below(200_000) as i64 - 100_000),
        3 => format!("ts < to_timestamp({})", 1_704_067_200 + rng.below(BATCH_ROWS * BATCHES * 3)),
        4 => format!("g IN ({}, {}, {})", rng.below(60), rng.below(60), rng.below(60)),
        5 => format!("h LIKE 'host-{}%'", rng.below(10)),
        6 => "v::text LIKE '%3'".to_string(),
        _ => format!("v <> {} AND f < {}", rng.below(1000), rng.below(100_000)),
    }
}

/// Queries with `{T}` for the table, each returning a digest of its sorted rows.
fn queries(rng: &mut Rng, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| {
            let key = rng.pick(&["g", "h"]);
            let filter = if rng.chance(60) { format!("WHERE {}", predicate(rng)) } else { String::new() };
            let inner = if rng.chance(70) {
                let order = rng.pick(&["DESC", "", "DESC NULLS LAST", "NULLS FIRST"]);
                // Times are unique but for NULLs: a key whose best time is NULL may have
                // several such rows, and any of them may be the answer.
                let rest = ", CASE WHEN ts IS NOT NULL THEN id END, CASE WHEN ts IS NOT NULL THEN v END";
                format!("SELECT DISTINCT ON ({key}) {key}, ts{rest} FROM {{T}} {filter} ORDER BY {key}, ts {order}")
            } else {
                let agg = rng.pick(&["max", "min"]);
                let col = rng.pick(&["ts", "id"]);
                format!("SELECT {key}, {agg}({col}) FROM {{T}} {filter} GROUP BY {key}")
            };
            format!("SELECT count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM ({inner}) x")
        })
        .collect()
}

fn setup(db: &Database<'_>, rng: &mut Rng) {
    db.query(&format!(
        "CREATE TABLE lp_col ({DDL}) USING columnar; CREATE TABLE lp_heap ({DDL}); CREATE TABLE lp_idx ({DDL});"
    ));
    // Batches in a shuffled order: some row groups hold older times than earlier ones.
    let mut order: Vec<u64> = (0..BATCHES).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for b in order {
        let rows = batch(rng, b);
        // Times as epoch seconds, converted on the way in.
        for t in ["lp_col", "lp_heap", "lp_idx"] {
            db.query(&format!("CREATE TEMP TABLE load ({DDL_LOAD})"));
            db.copy_in("load", &rows);
            db.query(&format!(
                "INSERT INTO {t} SELECT id, g, h, to_timestamp(ts), v, f FROM load; DROP TABLE load"
            ));
        }
    }
    // The winners of the newest-first query lose their rows: the next best must win.
    let ids = db.query(
        "SELECT string_agg(id::text, ',') FROM (SELECT DISTINCT ON (g) id FROM lp_heap ORDER BY g, ts DESC) x",
    );
    for t in ["lp_col", "lp_heap", "lp_idx"] {
        db.query(&format!("DELETE FROM {t} WHERE id IN ({}) OR id % 997 = 0", ids.trim()));
    }
    db.query(
        "CREATE INDEX ON lp_idx (g, ts); CREATE INDEX ON lp_idx (h, ts DESC); CREATE INDEX ON lp_col (h, ts);
         ANALYZE lp_col; ANALYZE lp_heap; ANALYZE lp_idx",
    );
}

const DDL_LOAD: &str = "id int, g int, h text, ts float8, v int, f float8";

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn last_point_matches_heap_on_generated_queries() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_last_point");
    let mut rng = Rng(0x5eed_1a57);
    setup(&db, &mut rng);
    let session = "SET max_parallel_workers_per_gather = 0;";
    let qs = queries(&mut rng, 120);
    let mut mismatches = Vec::new();
    let mut used = [0usize; 2];
    for q in &qs {
        let heap = db.query(&format!(
            "{session} SET pgcolumnar.enable_last_point = off; {}",
            q.replace("{T}", "lp_heap")
        ));
        for (table, settings) in [
            ("lp_col", "SET pgcolumnar.enable_last_point = on;"),
            ("lp_col", "SET pgcolumnar.enable_last_point = on; SET pgcolumnar.enable_columnar_scan = off;"),
            ("lp_col", "SET pgcolumnar.enable_last_point = off;"),
            ("lp_idx", "SET pgcolumnar.enable_last_point = on;"),
        ] {
            let sql = format!("{session} {settings} {}", q.replace("{T}", table));
            let got = db.query(&sql);
            if got != heap {
                mismatches.push(format!("{q}\n  {table} ({settings}):\n{got}\n  heap:\n{heap}"));
            }
            let plan =
                db.query(&format!("{session} {settings} EXPLAIN (COSTS OFF) {}", q.replace("{T}", table)));
            if plan.contains("zone maps") {
                used[0] += 1;
            }
            if plan.contains("index skip scan") {
                used[1] += 1;
            }
            db.query("RESET pgcolumnar.enable_columnar_scan; RESET pgcolumnar.enable_last_point");
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} queries differ:\n{}",
        mismatches.len(),
        qs.len(),
        mismatches.join("\n")
    );
    // Not vacuous: both sources ran for many of the queries.
    assert!(
        used[0] > qs.len() / 3 && used[1] > qs.len() / 4,
        "zone maps {}, skip scans {}",
        used[0],
        used[1]
    );
}
