#!/usr/bin/env python3
"""Row output: ns per row of a scan that hands every row to the executor, heap's Seq Scan
against pgcolumnar's PgColumnarScan (`make bench-rows`).

Per type (int4, int8, float8, numeric(15,2), date, short low-cardinality text, long
unique text, char(10)) it loads a heap table and a columnar twin with the same rows, 17
columns of that type (`c1` .. `c17`), and times

    SELECT c1, ..., ck FROM t OFFSET <more than N>

for k = 1, 4 and 16. The OFFSET makes a Limit node pull every row of the scan and
discard it, so nothing is aggregated or sent to the client; the scan projects k of the
17 columns, so heap deforms them (a plain `SELECT *` would let heap hand its buffer
tuple up without deforming anything). Serial, JIT off, warm (one untimed run first),
median of --runs. The ns per row come from the backend's CPU time while the executor
ran (`log_executor_stats`), which other processes sharing the cores do not inflate; wall
time is shown beside it. The plans are checked with EXPLAIN: heap's a Seq Scan, columnar's a
Custom Scan (PgColumnarScan).

    bench/row_output.py [--rows N] [--runs R] [--types int4,text_long] [--widths 1,4,16]
                        [--host SOCKETDIR] [--port P] [--reload]

Tables are `ro_<type>_heap` / `ro_<type>_col`; they are reused when they hold --rows
rows (--reload loads them again).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench_venv import ensure_venv_and_reexec  # beside this script; standard library only

if __name__ == "__main__":
    ensure_venv_and_reexec(__file__)

import argparse  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import REPO_DIR, pg_connect  # noqa: E402

COLUMNS = 17
WIDTHS = (1, 4, 16)

# Per type: its SQL type and the value of column k (1-based) of row i, in SQL. Values
# vary by row and column, roughly as business data does (small codes, keys, prices,
# dates, flags and names).
TYPES = {
    "int4": ("int4", "((i * 7 + {k} * 13) % 1000003)::int4"),
    "int8": ("int8", "(i::int8 * 1000 + {k})"),
    "float8": ("float8", "((i % 100003) * 0.01 + {k})::float8"),
    "numeric": ("numeric(15,2)", "((i % 100003) * 1.01 + {k})::numeric(15,2)"),
    "date": ("date", "(date '1992-01-01' + ((i * 3 + {k}) % 2526))"),
    "text_short": ("text", "(array['AIR','MAIL','SHIP','TRUCK','RAIL','FOB','REG AIR'])[(i + {k}) % 7 + 1]"),
    "text_long": ("text", "('Customer#' || lpad((i * 17 + {k})::text, 12, '0') || ' clerk ' || {k})"),
    "char10": ("char(10)", "('C' || ((i + {k}) % 50))::char(10)"),
}

SETTINGS = [
    ("max_parallel_workers_per_gather", "0"),
    ("jit", "off"),
    ("pgcolumnar.enable_columnar_scan", "on"),
]


def table(kind: str, am: str) -> str:
    return f"ro_{kind}_{am}"


def loaded_rows(conn, name: str) -> int | None:
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()[0]
    return conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0] if exists else None


def load(conn, kind: str, rows: int, reload: bool) -> None:
    sql_type, value = TYPES[kind]
    heap, col = table(kind, "heap"), table(kind, "col")
    if not reload and loaded_rows(conn, heap) == rows and loaded_rows(conn, col) == rows:
        return
    cols = ", ".join(f"c{k} {sql_type}" for k in range(1, COLUMNS + 1))
    values = ", ".join(value.format(k=k) for k in range(1, COLUMNS + 1))
    t0 = time.perf_counter()
    for name in (heap, col):
        conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(f"CREATE TABLE {heap} ({cols})")
    conn.execute(f"CREATE TABLE {col} ({cols}) USING columnar")
    conn.execute(f"INSERT INTO {heap} SELECT {values} FROM generate_series(1, {rows}) i")
    conn.execute(f"INSERT INTO {col} SELECT * FROM {heap}")
    for name in (heap, col):
        conn.execute(f"VACUUM ANALYZE {name}")
    print(f"loaded {kind}: {rows:,} rows x {COLUMNS} columns in {time.perf_counter() - t0:.1f} s", flush=True)


def query(name: str, width: int, rows: int) -> str:
    return f"SELECT {', '.join(f'c{k}' for k in range(1, width + 1))} FROM {name} OFFSET {rows + 1}"


def check_plan(conn, sql: str, expected: str) -> None:
    plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN (COSTS OFF) {sql}").fetchall())
    if expected not in plan:
        sys.exit(f"bench-rows: expected `{expected}` in the plan of {sql}:\n{plan}")


EXECUTOR_STATS = re.compile(r"([0-9.]+) s user, ([0-9.]+) s system, ([0-9.]+) s elapsed")


class ExecutorStats:
    """The backend's CPU time per query: `log_executor_stats` reports the executor's
    getrusage() difference, sent to the client as a LOG notice. CPU time, unlike wall
    time, does not grow when other processes share the cores."""

    def __init__(self, conn):
        self.last: tuple[float, float] | None = None
        conn.add_notice_handler(self.notice)
        conn.execute("SET log_executor_stats = on")
        conn.execute("SET client_min_messages = log")

    def notice(self, diag) -> None:
        text = f"{diag.message_primary or ''} {diag.message_detail or ''}"
        if m := EXECUTOR_STATS.search(text):
            self.last = (float(m[1]) + float(m[2]), float(m[3]))

    def run(self, conn, sql: str) -> tuple[float, float]:
        """(CPU seconds, elapsed seconds) of the executor running `sql`."""
        self.last = None
        conn.execute(sql)
        if self.last is None:
            sys.exit("bench-rows: no executor statistics came back (log_executor_stats needs a superuser)")
        return self.last


def ns_per_row(conn, stats: ExecutorStats, sql: str, rows: int, runs: int) -> tuple[float, float]:
    """Median (CPU, wall) ns per row over `runs` runs after a warm-up."""
    stats.run(conn, sql)
    times = [stats.run(conn, sql) for _ in range(runs)]
    return (statistics.median(t[0] for t in times) * 1e9 / rows,
            statistics.median(t[1] for t in times) * 1e9 / rows)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--runs", type=int, default=5, help="timed runs per query after 1 warm-up")
    p.add_argument("--types", default=",".join(TYPES), help="comma-separated subset of " + ", ".join(TYPES))
    p.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    p.add_argument("--host", default=str(REPO_DIR / ".pgdata" / "run" / "socket"),
                   help="PostgreSQL host or socket directory")
    p.add_argument("--port", type=int, default=54315)
    p.add_argument("--reload", action="store_true", help="load the tables even when they hold --rows rows")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    kinds = args.types.split(",")
    widths = [int(w) for w in args.widths.split(",")]
    if unknown := [k for k in kinds if k not in TYPES]:
        sys.exit(f"bench-rows: unknown types {unknown}")
    if bad := [w for w in widths if not 1 <= w < COLUMNS]:
        sys.exit(f"bench-rows: widths must lie in 1..{COLUMNS - 1}, not {bad}")
    conn = pg_connect(args)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgcolumnar")
    for name, value in SETTINGS:
        conn.execute(f"SET {name} = '{value}'")
    for kind in kinds:
        load(conn, kind, args.rows, args.reload)
    stats = ExecutorStats(conn)
    print(f"\nns per row (backend CPU time; wall time in brackets), {args.rows:,} rows, serial, "
          f"median of {args.runs} warm runs (Seq Scan on heap vs PgColumnarScan)\n")
    print(f"| {'type':<10} | {'columns':>7} | {'heap':>13} | {'columnar':>13} | {'columnar/heap':>13} |")
    print(f"|{'-' * 12}|{'-' * 8}:|{'-' * 14}:|{'-' * 14}:|{'-' * 14}:|")
    worst = 0.0
    for kind in kinds:
        for width in widths:
            heap_sql = query(table(kind, "heap"), width, args.rows)
            col_sql = query(table(kind, "col"), width, args.rows)
            check_plan(conn, heap_sql, f"Seq Scan on {table(kind, 'heap')}")
            check_plan(conn, col_sql, f"Custom Scan (PgColumnarScan) on {table(kind, 'col')}")
            heap, heap_wall = ns_per_row(conn, stats, heap_sql, args.rows, args.runs)
            col, col_wall = ns_per_row(conn, stats, col_sql, args.rows, args.runs)
            worst = max(worst, col / heap)
            cells = f"{heap:>5.1f} ({heap_wall:>5.1f}) | {col:>5.1f} ({col_wall:>5.1f})"
            print(f"| {kind:<10} | {width:>7} | {cells} | {col / heap:>13.2f} |", flush=True)
    print(f"\nworst columnar/heap: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
