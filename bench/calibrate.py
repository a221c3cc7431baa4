#!/usr/bin/env python3
"""Calibrates the ColumnarScan and ColumnarAgg cost constants (`src/planner/cost.rs`) on this machine.

Loads a 2M-row table into heap and columnar, times a few scans (serial, warm, median of
runs), converts the times into PostgreSQL cost units with the heap sequential scan as
the yardstick (its EXPLAIN cost over its time), and prints the constants cost.rs uses,
as multiples of `cpu_operator_cost` and `cpu_tuple_cost`. The result is written to
bench/results/calibration.json; cost.rs cites it.

It also prints each codec's decode throughput (values per ns on one core) and size on
TSBS-like columns, from `bench/encoding/measure.rs` (a release build of the unit test):
the figures the encoding chooser's `decode_ns` come from (`--decode-only` for those
alone, without a cluster). BENCHMARKS.md keeps them.

    bench/calibrate.py [--host SOCKETDIR] [--port P] [--runs R] [--decode-only]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
VENV = BENCH_DIR / ".venv"

if __name__ == "__main__" and Path(sys.prefix).resolve() != VENV.resolve():
    python = VENV / "bin" / "python"
    if not python.exists():
        # run.py creates the venv (and installs psycopg) on its first start.
        import subprocess
        subprocess.run([sys.executable, str(BENCH_DIR / "run.py"), "--render-only"], check=True)
    os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import psycopg  # noqa: E402

sys.path.insert(0, str(BENCH_DIR))
from plan_choice import timed  # noqa: E402

ROWS = 2_000_000
CPU_OPERATOR_COST = 0.0025
CPU_TUPLE_COST = 0.01


def plan_cost(conn, sql: str) -> float:
    line = conn.execute(f"EXPLAIN {sql}").fetchone()[0]
    return float(line.split("..")[1].split()[0])


def decode_throughput() -> list[dict]:
    """Per codec and column: values/ns and bytes/value, from the `decode:` lines of the
    measure test (release build, one core)."""
    import subprocess
    run = subprocess.run(
        ["cargo", "test", "--release", "--lib", "--features", "measure",
         "encoding::measure::decode_throughput", "--", "--nocapture"],
        cwd=BENCH_DIR.parent, capture_output=True, text=True, check=True)
    rows = []
    for line in (run.stdout + run.stderr).splitlines():
        if not line.startswith("decode: "):
            continue
        # decode: <column, may hold spaces> <Codec> <v> values/ns <b> bytes/value
        words = line[len("decode: "):].split()
        rows.append({"column": " ".join(words[:-5]), "codec": words[-5],
                     "values_per_ns": float(words[-4]), "bytes_per_value": float(words[-2])})
    return rows


def print_decode(rows: list[dict]) -> None:
    print(f"{'column':<20} {'codec':<14} {'values/ns':>10} {'bytes/value':>12}")
    for r in rows:
        print(f"{r['column']:<20} {r['codec']:<14} {r['values_per_ns']:>10.2f} {r['bytes_per_value']:>12.2f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default=os.environ.get("PGHOST", str(BENCH_DIR.parent / ".pgdata" / "run" / "socket")))
    p.add_argument("--port", type=int, default=int(os.environ.get("PGPORT", 54315)))
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--decode-only", action="store_true", help="only the codecs' decode throughput")
    args = p.parse_args()
    decode = decode_throughput()
    print_decode(decode)
    out = BENCH_DIR / "results" / "decode_throughput.json"
    out.write_text(json.dumps(decode, indent=2) + "\n")
    print(f"wrote {out.relative_to(BENCH_DIR.parent)}")
    if args.decode_only:
        return 0
    conn = psycopg.connect(host=args.host, port=args.port, user="postgres", dbname="postgres",
                           autocommit=True, prepare_threshold=None)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgcolumnar")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    conn.execute("SET jit = off")
    # The scan's own constants are measured under core's Agg (the fold is measured below).
    conn.execute("SET pgcolumnar.enable_vector_agg = off")
    for t, using in (("cal_heap", ""), ("cal_col", "USING columnar")):
        conn.execute(f"DROP TABLE IF EXISTS {t}")
        conn.execute(f"CREATE TABLE {t} (k int, s int, f float8, g float8, h text) {using}")
    conn.execute(f"INSERT INTO cal_heap SELECT (hashint4(g) & 2147483647), g, random(), random(), "
                 f"'v' || (g % 300) FROM generate_series(1, {ROWS}) g")
    conn.execute("INSERT INTO cal_col SELECT * FROM cal_heap")
    # Long text (md5 hashes, stored as byte strings in zstd frames), apart: heap's rows,
    # the yardstick, stay as before.
    conn.execute("DROP TABLE IF EXISTS cal_text")
    conn.execute("CREATE TABLE cal_text (t text) USING columnar")
    conn.execute(f"INSERT INTO cal_text SELECT md5(g::text) FROM generate_series(1, {ROWS}) g")
    conn.execute("CREATE INDEX ON cal_col (k)")
    conn.execute("CREATE INDEX ON cal_col (s)")
    conn.execute("VACUUM ANALYZE cal_heap")
    conn.execute("ANALYZE cal_col")
    conn.execute("ANALYZE cal_text")

    # The yardstick: milliseconds per cost unit of a heap sequential scan.
    heap_sql = "SELECT count(*) FROM cal_heap"
    ms_per_unit = timed(conn, heap_sql, args.runs) / plan_cost(conn, heap_sql)

    # ColumnarScan: rows out with nothing decoded; one column decoded and tested once or
    # twice (an OR), keeping no row: f is uniform in [0, 1), so zone maps, which keep a
    # vector's minimum and maximum, rule out no vector for these values.
    out_ms = timed(conn, "SELECT count(*) FROM cal_col", args.runs)
    one_ms = timed(conn, "SELECT count(*) FROM cal_col WHERE f = 0.5", args.runs)
    two_ms = timed(conn, "SELECT count(*) FROM cal_col WHERE f = 0.5 OR f = 0.25", args.runs)
    text_ms = timed(conn, "SELECT count(*) FROM cal_col WHERE h = 'v1x'", args.runs)
    filter_ms = max(two_ms - one_ms, 0.0) / ROWS
    decode_ms = max(one_ms - filter_ms * ROWS, 0.0) / ROWS
    output_ms = out_ms / ROWS
    # Decoding by how a column is stored (cost::decode_per_value): integers (k, bit-packed;
    # 2^30 - 1 lies inside every vector's range and in no row), and md5 text per byte it
    # takes stored ('8' sorts inside every vector's range too).
    # A test on packed integers costs less than one on floats: it is measured the same
    # way (a second test) and taken off.
    int_ms = timed(conn, "SELECT count(*) FROM cal_col WHERE k = 1073741823", args.runs)
    int2_ms = timed(conn, "SELECT count(*) FROM cal_col WHERE k = 1073741823 OR k = 1073741822", args.runs)
    int_decode_ms = max(int_ms - max(int2_ms - int_ms, 0.0), 0.0) / ROWS
    text_bytes = conn.execute("SELECT stored_bytes::float8 / rows FROM pgcolumnar.stats('cal_text') "
                              "WHERE attname = 't'").fetchone()[0]
    long_text_ms = timed(conn, "SELECT count(*) FROM cal_text WHERE t = '8'", args.runs)
    byte_ms = max(long_text_ms / ROWS - filter_ms - int_decode_ms, 0.0) / text_bytes

    # The batch fold (ColumnarAgg): one aggregate over one column (decode and fold), four
    # over the same column (three more folds), and a GROUP BY on a 300-value text column
    # (its dictionary codes decoded, a group found per row).
    conn.execute("SET pgcolumnar.enable_vector_agg = on")
    fold1_ms = timed(conn, "SELECT sum(f) FROM cal_col", args.runs)
    fold4_ms = timed(conn, "SELECT sum(f), max(f), min(f), count(f) FROM cal_col", args.runs)
    grouped_ms = timed(conn, "SELECT h, sum(f) FROM cal_col GROUP BY h", args.runs)
    # The same folds by a leader and two workers (a Gather over partial folds), priced as
    # cost.rs prices them: the serial time over the speed-up (1 + CORE_SCALING x (the
    # share - 1), the share being core's divisor, at most the machine's cores), plus
    # parallel_setup_cost, plus a start-up per worker. Two folds of different sizes (one
    # column, three) give both unknowns: the speed-up from how much the larger fold's
    # extra work costs serial and parallel, the start-up from what is left.
    # (parallel_setup_cost = 0 forces the plan and zeroes cost.rs's start-up too.)
    fold3_sql = "SELECT sum(f), sum(g), max(k) FROM cal_col"
    fold3_ms = timed(conn, fold3_sql, args.runs)
    conn.execute("SET max_parallel_workers_per_gather = 2")
    for setting in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size"):
        conn.execute(f"SET {setting} = 0")
    parallel_ms = timed(conn, "SELECT sum(f) FROM cal_col", args.runs)
    parallel3_ms = timed(conn, fold3_sql, args.runs)
    for sql in ("SELECT sum(f) FROM cal_col", fold3_sql):
        plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN {sql}"))
        assert "Parallel Custom Scan (PgColumnarAgg)" in plan, plan
    for setting in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size"):
        conn.execute(f"RESET {setting}")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    share = min(2.4, os.cpu_count() or 1)
    speedup = max(fold3_ms - fold1_ms, 0.0) / max(parallel3_ms - parallel_ms, 1e-6)
    print(f"folds serial {fold1_ms:.1f} / {fold3_ms:.1f} ms, parallel {parallel_ms:.1f} / {parallel3_ms:.1f} ms")
    scaling = min(max((speedup - 1) / (share - 1), 0.0), 1.0) if share > 1 else 0.0
    speedup = 1 + (share - 1) * scaling
    worker_ms = max(parallel_ms - fold1_ms / speedup - 1000 * ms_per_unit, 0.0) / 2
    conn.execute("SET pgcolumnar.enable_vector_agg = off")
    fold_ms = max(fold4_ms - fold1_ms, 0.0) / 3 / ROWS
    group_ms = max(grouped_ms - fold1_ms - decode_ms * ROWS, 0.0) / ROWS

    # Fetches through the index: 2,000 random keys, each in its own vector. Warm: the
    # vectors are in the backend's fetch cache (median of runs after a warm-up); cold:
    # the first run on a new connection, which opens (reads, decodes) each vector.
    fetch_off = ("SET pgcolumnar.enable_columnar_scan = off", "SET enable_seqscan = off",
                 "SET enable_bitmapscan = off", "SET max_parallel_workers_per_gather = 0", "SET jit = off")
    for setting in fetch_off:
        conn.execute(setting)
    keys = [r[0] for r in conn.execute("SELECT k FROM cal_col TABLESAMPLE SYSTEM (1) LIMIT 2000")]
    key_list = f"'{{{','.join(map(str, keys))}}}'::int[]"
    fetch_sql = f"SELECT sum(f) FROM cal_col WHERE k = ANY ({key_list})"
    fetch3_sql = f"SELECT sum(f), sum(g), max(h) FROM cal_col WHERE k = ANY ({key_list})"
    fetch_ms = timed(conn, fetch_sql, args.runs) / max(len(keys), 1)
    fetch3_ms = timed(conn, fetch3_sql, args.runs) / max(len(keys), 1)

    def cold_ms_per_key(sql: str) -> float:
        cold = []
        for _ in range(args.runs):
            with psycopg.connect(host=args.host, port=args.port, user="postgres", dbname="postgres",
                                 autocommit=True, prepare_threshold=None) as fresh:
                for setting in fetch_off:
                    fresh.execute(setting)
                fresh.execute("SELECT count(*) FROM cal_col WHERE k = -1")  # relcache, catalogs
                t0 = time.perf_counter()
                fresh.execute(sql).fetchall()
                cold.append((time.perf_counter() - t0) * 1000 / max(len(keys), 1))
        return statistics.median(cold)

    cold_ms = cold_ms_per_key(fetch_sql)
    # Each cold fetch opens the vectors of k (the index qual, kept for rechecks) and f.
    open_ms = max(cold_ms - fetch_ms, 0.0) / 2
    # And of k and h, a text column (stored as byte strings: decompressed and decoded).
    text_sql = f"SELECT max(h) FROM cal_col WHERE k = ANY ({key_list})"
    text_warm_ms = timed(conn, text_sql, args.runs) / max(len(keys), 1)
    open_bytes_ms = max(cold_ms_per_key(text_sql) - text_warm_ms - open_ms, 0.0)
    value_ms = max(fetch3_ms - fetch_ms, 0.0) / 3
    # Fetches of consecutive rows: every vector is opened once for 2,048 of them, so
    # this is the cost of a fetch itself.
    seq_rows = 200_000
    seq_sql = f"SELECT sum(f) FROM cal_col WHERE s BETWEEN 1000001 AND {1000000 + seq_rows}"
    row_ms = timed(conn, seq_sql, args.runs) / seq_rows
    conn.execute("RESET ALL")

    unit = lambda ms: ms / ms_per_unit  # noqa: E731
    result = {
        "rows": ROWS,
        "ms_per_cost_unit": ms_per_unit,
        "measured_ns": {
            "output_per_row": output_ms * 1e6,
            "decode_per_value, floats": decode_ms * 1e6,
            "decode_per_value, integers": int_decode_ms * 1e6,
            f"decode_per_stored_byte, md5 text ({text_bytes:.1f} bytes a value)": byte_ms * 1e6,
            "filter_per_value": filter_ms * 1e6,
            "text_equality_per_row (decode as dictionary codes + test, no row kept)": text_ms / ROWS * 1e6,
            "fetch_per_row_one_column, each in its own vector, warm": fetch_ms * 1e6,
            "fetch_per_row_four_columns, each in its own vector, warm": fetch3_ms * 1e6,
            "fetch_per_row_one_column, each in its own vector, cold": cold_ms * 1e6,
            "open a vector of byte strings, beyond a fixed-width one": open_bytes_ms * 1e6,
            "fetch_per_row_one_column, consecutive rows": row_ms * 1e6,
            "fold_per_value (ColumnarAgg)": fold_ms * 1e6,
            "group_per_row, one text key (ColumnarAgg)": group_ms * 1e6,
            "worker start-up (a parallel ColumnarAgg's, per worker)": worker_ms * 1e6,
        },
        "constants": {
            "DECODE_FLOAT (x cpu_operator_cost)": unit(decode_ms) / CPU_OPERATOR_COST,
            "DECODE_INTEGER (x cpu_operator_cost)": unit(int_decode_ms) / CPU_OPERATOR_COST,
            "DECODE_PER_STORED_BYTE (x cpu_operator_cost)": unit(byte_ms) / CPU_OPERATOR_COST,
            "FILTER_PER_VALUE (x cpu_operator_cost)": unit(filter_ms) / CPU_OPERATOR_COST,
            "output per row (x cpu_tuple_cost)": unit(output_ms) / CPU_TUPLE_COST,
            "OPEN_PER_VECTOR (x cpu_operator_cost)": unit(open_ms) / CPU_OPERATOR_COST,
            "OPEN_BYTES_PER_VECTOR (x cpu_operator_cost)": unit(open_bytes_ms) / CPU_OPERATOR_COST,
            "FETCH_PER_VALUE (x cpu_tuple_cost)": unit(value_ms) / CPU_TUPLE_COST,
            "FETCH_PER_ROW (x cpu_tuple_cost)": unit(fetch_ms - value_ms) / CPU_TUPLE_COST,
            "FOLD_PER_VALUE (x cpu_operator_cost)": unit(fold_ms) / CPU_OPERATOR_COST,
            "GROUP_PER_KEY (x cpu_operator_cost)": unit(group_ms) / CPU_OPERATOR_COST,
            "WORKER_STARTUP (x parallel_setup_cost)": unit(worker_ms) / 1000,
            "CORE_SCALING (of each further core)": scaling,
        },
    }
    for t in ("cal_heap", "cal_col", "cal_text"):
        conn.execute(f"DROP TABLE {t}")
    out = BENCH_DIR / "results" / "calibration.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"wrote {out.relative_to(BENCH_DIR.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
