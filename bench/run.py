#!/usr/bin/env python3
"""pgcolumnar benchmark runner (behind `make bench` and the `make run` demo).

Generates TSBS cpu-only rows with bench/tsbs-gen, loads them into a PostgreSQL heap
table, a columnar table and DuckDB, runs bench/queries/q*.sql on every engine in serial
and parallel mode, checks that all engines return the same results, and writes
bench/results/<date>-<rows>.{csv,json,png} plus BENCHMARKS.md at the repository root.

    bench/run.py [--rows N] [--hosts H] [--runs R] [--host SOCKETDIR] [--port P]
    bench/run.py --demo      1M rows, heap vs columnar only, one run each, no files written
    bench/run.py --joins-only [--join-rows N] [--reload]
                             the join benchmark (bench/joins.py) alone: star-schema joins
                             and index fetches, heap vs columnar; bench/results/<date>-joins-<rows>.json

It needs only the standard library to start: it creates bench/.venv, installs
bench/requirements.txt into it (once; again only when that file changes) and re-executes
itself with the venv's interpreter.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_venv import ensure_venv_and_reexec  # beside this script; standard library only

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
RESULTS_DIR = BENCH_DIR / "results"
QUERIES_DIR = BENCH_DIR / "queries"
GEN_DIR = BENCH_DIR / "tsbs-gen"


if __name__ == "__main__":
    ensure_venv_and_reexec(__file__)

# Third-party imports: only reached inside the venv.
import csv  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from decimal import Decimal  # noqa: E402

import psycopg  # noqa: E402

sys.path.insert(0, str(BENCH_DIR))
import from_disk  # noqa: E402
import heap_pushdown  # noqa: E402
import ingest  # noqa: E402
import logical_cost  # noqa: E402
import logical_overhead  # noqa: E402
import citus_report  # noqa: E402
import joins  # noqa: E402
import plan_choice  # noqa: E402
import tpch  # noqa: E402
from units import mb  # noqa: E402

CPU_DDL = (GEN_DIR / "cpu.sql").read_text()
HEAP_TABLE, COL_TABLE, SORTED_TABLE = "cpu_heap", "cpu_col", "cpu_sorted"
# The sorted table's key: each row group is stored by host, then time (rows arrive in
# time order, so row groups still follow time).
SORT_BY = "hostname, time"
FLOAT_RTOL = 1e-9
DEFAULT_JOIN_ROWS = 6_000_000


# --------------------------------------------------------------------------------------
# Configurations measured: one (engine, mode) pair each.
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    engine: str          # heap | columnar | columnar-noscan | columnar-sorted | duckdb
    mode: str            # serial | parallel
    table: str
    settings: tuple = () # (name, value) pairs applied before the queries
    queries: tuple = ()  # the queries it runs (names); empty: all

    @property
    def label(self) -> str:
        return f"{self.engine}/{self.mode}"


ENGINE_TITLES = {
    "heap": "heap",
    "columnar": "columnar",
    "columnar-noscan": "columnar, ColumnarScan, ColumnarAgg and LastPoint off",
    "heap-core": "heap, LastPoint off (core's plan)",
    "columnar-zones": "columnar, index scans off (LastPoint by zone maps)",
    "columnar-sorted": f"columnar, sort_by = '{SORT_BY}'",
    "duckdb": "DuckDB",
}


# Queries a LastPoint answers (each key's latest row).
LAST_POINT_QUERIES = ("q7",)


def pg_configs(heap: str, col: str, sorted_col: str | None = None) -> list[Config]:
    configs = []
    for mode, workers in (("serial", 0), ("parallel", 2)):
        w = ("max_parallel_workers_per_gather", str(workers))
        configs += [
            Config("heap", mode, heap, (w,)),
            Config("columnar", mode, col, (w, ("pgcolumnar.enable_columnar_scan", "on"))),
            Config("columnar-noscan", mode, col, (w, ("pgcolumnar.enable_columnar_scan", "off"),
                                                   ("pgcolumnar.enable_vector_agg", "off"),
                                                   ("pgcolumnar.enable_last_point", "off"))),
        ]
        if mode == "serial":
            # Core's plan on heap for the queries LastPoint answers: the yardstick of
            # its targets (heap itself runs LastPoint's skip scan on its btree).
            configs.append(Config("heap-core", mode, heap, (w, ("pgcolumnar.enable_last_point", "off")),
                                  LAST_POINT_QUERIES))
            # The columnar table without its btree's help: LastPoint by zone maps.
            configs.append(Config("columnar-zones", mode, col, (w, ("enable_indexscan", "off")),
                                  LAST_POINT_QUERIES))
        if sorted_col:
            configs.append(Config("columnar-sorted", mode, sorted_col,
                                  (w, ("pgcolumnar.enable_columnar_scan", "on"))))
    return configs


def duckdb_configs() -> list[Config]:
    return [Config("duckdb", "serial", "cpu", (("threads", "1"),)),
            Config("duckdb", "parallel", "cpu", (("threads", "2"),))]


# --------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------

@dataclass
class Query:
    name: str
    comment: str
    sql: str             # with the table called `cpu`

    def for_table(self, table: str) -> str:
        return re.sub(r"\bcpu\b", table, self.sql)

    @property
    def ordered(self) -> bool:
        return re.search(r"\bORDER\s+BY\b", self.sql, re.I) is not None


def load_queries() -> list[Query]:
    queries = []
    for path in sorted(QUERIES_DIR.glob("q*.sql"), key=lambda p: int(p.stem[1:])):
        lines = path.read_text().splitlines()
        comment = " ".join(l[2:].strip() for l in lines if l.startswith("--"))
        sql = " ".join(l.strip() for l in lines if l.strip() and not l.startswith("--"))
        queries.append(Query(path.stem, comment, sql))
    return queries


# --------------------------------------------------------------------------------------
# Data generation
# --------------------------------------------------------------------------------------

def build_generator() -> Path:
    """Build tsbs-gen in release mode (cargo is a no-op when it is up to date)."""
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    target = GEN_DIR / "target"
    subprocess.run([cargo, "build", "--release", "--quiet", "--manifest-path",
                    str(GEN_DIR / "Cargo.toml"), "--target-dir", str(target)], check=True)
    return target / "release" / "tsbs-gen"


def generate_data(rows: int, hosts: int) -> Path:
    """Write the COPY text once per (rows, hosts); the generator is deterministic."""
    DATA_DIR.mkdir(exist_ok=True)
    path = DATA_DIR / f"cpu-{rows}-{hosts}.tsv"
    if path.exists():
        return path
    gen = build_generator()
    tmp = path.with_suffix(".tmp")
    t0 = time.perf_counter()
    with open(tmp, "wb") as out:
        subprocess.run([str(gen), "--rows", str(rows), "--hosts", str(hosts)], stdout=out, check=True)
    tmp.rename(path)
    log(f"generated {rows:,} rows ({path.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - t0:.1f} s")
    return path


# --------------------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------------------

def pg_connect(args) -> psycopg.Connection:
    # prepare_threshold=None: psycopg would otherwise prepare a statement run 5 times, and
    # PostgreSQL keeps a prepared plan across SET, so the next configuration (same SQL, other
    # GUCs) would silently reuse the previous one's plan.
    try:
        conn = psycopg.connect(host=args.host, port=args.port, user="postgres", dbname="postgres",
                               autocommit=True, prepare_threshold=None)
    except psycopg.OperationalError as e:
        sys.exit(f"bench: cannot connect to PostgreSQL at {args.host}:{args.port} ({e}).\n"
                 "Start the cluster first: `make run` (or `make start`).")
    conn.execute("SET TimeZone = 'UTC'")
    return conn


def create_table_sql(table: str) -> str:
    """cpu.sql's CREATE TABLE with another name (its comments also say `cpu`)."""
    return re.sub(r"CREATE TABLE cpu\b", f"CREATE TABLE {table}", CPU_DDL)


def pg_copy_file(conn, table: str, path: Path) -> float:
    t0 = time.perf_counter()
    with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN") as copy, open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            copy.write(chunk)
    return time.perf_counter() - t0


def pg_timed(conn, sql: str) -> float:
    t0 = time.perf_counter()
    conn.execute(sql)
    return time.perf_counter() - t0


def pg_load(conn, data: Path, heap: str, col: str, sorted_col: str | None = None) -> dict:
    """(Re)create and load the heap and columnar tables; return timings and sizes."""
    m = {}
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgcolumnar")
    for table in (heap, col, sorted_col):
        if table:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(create_table_sql(heap))
    conn.execute(create_table_sql(col) + " USING columnar")

    m["heap_copy_s"] = pg_copy_file(conn, heap, data)
    log(f"heap COPY {m['heap_copy_s']:.1f} s")
    m["heap_index_s"] = pg_timed(conn, f"CREATE INDEX {heap}_hostname_time ON {heap} (hostname, time DESC)")
    log(f"heap index {m['heap_index_s']:.1f} s")
    m["heap_vacuum_analyze_s"] = pg_timed(conn, f"VACUUM ANALYZE {heap}")
    m["columnar_copy_s"] = pg_copy_file(conn, col, data)
    log(f"columnar COPY {m['columnar_copy_s']:.1f} s")
    m["columnar_index_s"] = pg_timed(conn, f"CREATE INDEX {col}_hostname_time ON {col} (hostname, time DESC)")
    log(f"columnar index {m['columnar_index_s']:.1f} s")
    m["columnar_analyze_s"] = pg_timed(conn, f"ANALYZE {col}")
    if sorted_col:
        conn.execute(create_table_sql(sorted_col) + " USING columnar")
        conn.execute(f"ALTER TABLE {sorted_col} SET (sort_by = '{SORT_BY}')")
        m["sorted_copy_s"] = pg_copy_file(conn, sorted_col, data)
        log(f"sorted columnar COPY {m['sorted_copy_s']:.1f} s")
        m["sorted_index_s"] = pg_timed(
            conn, f"CREATE INDEX {sorted_col}_hostname_time ON {sorted_col} (hostname, time DESC)")
        m["sorted_analyze_s"] = pg_timed(conn, f"ANALYZE {sorted_col}")

    # The load leaves gigabytes of dirty buffers: written out now, not by the checkpointer
    # on the second core while parallel queries are being timed.
    conn.execute("CHECKPOINT")
    size = lambda sql: conn.execute(sql).fetchone()[0]
    m["heap_table_bytes"] = size(f"SELECT pg_table_size('{heap}')")
    m["heap_index_bytes"] = size(f"SELECT pg_indexes_size('{heap}')")
    m["heap_total_bytes"] = size(f"SELECT pg_total_relation_size('{heap}')")
    m["columnar_table_bytes"] = size(f"SELECT pg_table_size('{col}')")
    m["columnar_index_bytes"] = size(f"SELECT pg_indexes_size('{col}')")
    m["columnar_total_bytes"] = size(f"SELECT pg_total_relation_size('{col}')")
    if sorted_col:
        m["sorted_table_bytes"] = size(f"SELECT pg_table_size('{sorted_col}')")
        m["sorted_index_bytes"] = size(f"SELECT pg_indexes_size('{sorted_col}')")
        m["sorted_total_bytes"] = size(f"SELECT pg_total_relation_size('{sorted_col}')")
    return m


def pg_apply(conn, config: Config) -> None:
    # From the defaults: a setting of the previous configuration must not carry over.
    conn.execute("RESET ALL")
    for name, value in config.settings:
        conn.execute(f"SET {name} = {value}")


# --------------------------------------------------------------------------------------
# DuckDB
# --------------------------------------------------------------------------------------

DUCKDB_TYPES = {"timestamptz": "TIMESTAMPTZ", "text": "VARCHAR", "double precision": "DOUBLE"}


def duckdb_columns() -> dict:
    """Column name -> DuckDB type, read from cpu.sql so both engines share one schema."""
    cols = {}
    for name, pgtype in re.findall(r"^\s+(\w+)\s+(timestamptz|text|double precision)", CPU_DDL, re.M):
        cols[name] = DUCKDB_TYPES[pgtype]
    return cols


def duckdb_open(path: Path):
    import duckdb
    conn = duckdb.connect(str(path))
    conn.execute("SET TimeZone = 'UTC'")
    return conn


def duckdb_load(data: Path, rows: int, hosts: int) -> tuple[Path, dict]:
    """Load the same file into a fresh DuckDB database (default threads, i.e. all cores)."""
    path = DATA_DIR / f"cpu-{rows}-{hosts}.duckdb"
    for p in (path, Path(str(path) + ".wal")):
        p.unlink(missing_ok=True)
    conn = duckdb_open(path)
    cols = duckdb_columns()
    conn.execute("CREATE TABLE cpu (" + ", ".join(f'"{c}" {t}' for c, t in cols.items()) + ")")
    # tsbs-gen writes no NULLs, quotes, backslashes or tabs inside values, so COPY text
    # reads as tab-separated CSV without quoting.
    columns = "{" + ", ".join(f"'{c}': '{t}'" for c, t in cols.items()) + "}"
    t0 = time.perf_counter()
    conn.execute(f"INSERT INTO cpu SELECT * FROM read_csv('{data}', delim='\t', header=false, "
                 f"quote='', escape='', columns={columns})")
    conn.execute("CHECKPOINT")
    load_s = time.perf_counter() - t0
    conn.close()
    log(f"DuckDB load {load_s:.1f} s")
    return path, {"duckdb_load_s": load_s, "duckdb_file_bytes": path.stat().st_size}


def duckdb_apply(conn, config: Config) -> None:
    for name, value in config.settings:
        conn.execute(f"SET {name} = {value}")


# --------------------------------------------------------------------------------------
# Running and checking queries
# --------------------------------------------------------------------------------------

@dataclass
class Measurement:
    config: Config
    query: str
    times_ms: list[float] = field(default_factory=list)
    rows: list = field(default_factory=list)
    plan: str = ""      # PostgreSQL's scan and gather nodes, e.g. "Gather + Parallel Seq Scan"

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)


def run_query(execute, sql: str, runs: int, warmup: bool) -> tuple[list[float], list]:
    """Client-side wall time of execute+fetch; the warm-up's rows are the ones checked."""
    rows = execute(sql) if warmup else None
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = execute(sql)
        times.append((time.perf_counter() - t0) * 1000)
        rows = rows if rows is not None else r
    return times, rows


PLAN_NODES = re.compile(r"Custom Scan \(PgColumnarAgg\)|Custom Scan \(PgColumnarScan\)|Custom Scan \(PgColumnarLastPoint\)|"
                        r"index skip scan|zone maps, best rows first|Parallel Seq Scan|Seq Scan|Parallel Index Only Scan|"
                        r"Parallel Index Scan|Index Only Scan|Index Scan|Bitmap Heap Scan|Gather Merge|Gather")


def summarize_plan(explain_lines: list[str]) -> str:
    """The plan's access and gather nodes, top down: what decides heap vs columnar here."""
    nodes = []
    for line in explain_lines:
        m = PLAN_NODES.search(line)
        if m and m.group(0) not in nodes:
            nodes.append(m.group(0))
    names = {"Custom Scan (PgColumnarScan)": "ColumnarScan", "Custom Scan (PgColumnarAgg)": "ColumnarAgg",
             "index skip scan": "LastPoint (skip scan)", "zone maps, best rows first": "LastPoint (zone maps)"}
    # A LastPoint is named by its strategy (an EXPLAIN field below the node).
    return " + ".join(names.get(n, n) for n in nodes if n != "Custom Scan (PgColumnarLastPoint)")


def run_all(configs, queries, execute_for, runs: int, warmup: bool, explain=None) -> list[Measurement]:
    out = []
    for config in configs:
        execute = execute_for(config)
        line = []
        for q in queries:
            if config.queries and q.name not in config.queries:
                continue
            sql = q.for_table(config.table)
            plan = summarize_plan(explain(sql)) if explain else ""
            times, rows = run_query(execute, sql, runs, warmup)
            out.append(Measurement(config, q.name, times, rows, plan))
            line.append(f"{q.name} {statistics.median(times):,.1f}")
        log(f"{config.label:26} " + "  ".join(line) + "  (ms)")
    return out


def normalize_value(v):
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dt.datetime):
        return v.astimezone(dt.timezone.utc) if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)
    return v


def values_equal(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and (isinstance(a, float) or isinstance(b, float)):
        return math.isclose(a, b, rel_tol=FLOAT_RTOL, abs_tol=1e-12)
    return a == b


def rows_equal(a, b) -> bool:
    return len(a) == len(b) and all(len(x) == len(y) and all(map(values_equal, x, y)) for x, y in zip(a, b))


def canonical_rows(query: Query, rows) -> list:
    rows = [tuple(normalize_value(v) for v in r) for r in rows]
    if not query.ordered:
        rows.sort(key=lambda r: tuple((v is None, str(v) if not isinstance(v, (int, float)) else v) for v in r))
    return rows


def top_n_with_ties_equal(a, b) -> bool:
    """q8's ORDER BY mx DESC LIMIT 20 may pick any of the hosts tied at the 20th value
    (many hosts reach the clamp at 100), so compare the mx column in order and the
    hostnames only of the rows strictly above the last mx."""
    if len(a) != len(b) or not all(values_equal(x[-1], y[-1]) for x, y in zip(a, b)):
        return False
    if not a:
        return True
    last = a[-1][-1]
    above = lambda rows: sorted(r[0] for r in rows if r[-1] > last and not values_equal(r[-1], last))
    return above(a) == above(b)


def check_results(queries, measurements, reference_mode: str = "serial") -> list[str]:
    """Compare every configuration's rows with heap's in reference_mode; return mismatch messages."""
    by_query = {q.name: q for q in queries}
    reference = {m.query: m for m in measurements if m.config.engine == "heap" and m.config.mode == reference_mode}
    problems = []
    for m in measurements:
        q = by_query[m.query]
        ref = reference[m.query]
        if m is ref:
            continue
        a, b = canonical_rows(q, ref.rows), canonical_rows(q, m.rows)
        same = top_n_with_ties_equal(a, b) if re.search(r"\bLIMIT\b", q.sql, re.I) else rows_equal(a, b)
        if not same:
            first = next((i for i, (x, y) in enumerate(zip(a, b)) if not rows_equal([x], [y])), min(len(a), len(b)))
            problems.append(
                f"{q.name} differs on {m.config.label} from heap/{reference_mode}: {len(b)} vs {len(a)} rows; "
                f"first difference at row {first}: {b[first] if first < len(b) else None!r} vs "
                f"{a[first] if first < len(a) else None!r}\n    {q.sql}")
    return problems


# --------------------------------------------------------------------------------------
# Output: CSV, JSON, chart, BENCHMARKS.md
# --------------------------------------------------------------------------------------

def log(msg: str) -> None:
    print(f"bench: {msg}", flush=True)


def git_commit() -> str:
    def git(*a):
        return subprocess.run(["git", "-C", str(REPO_DIR), *a], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    # src/ may carry uncommitted work: say so rather than attribute it to the commit.
    return commit + ("+dirty" if git("status", "--porcelain", "--", "src", "Cargo.toml") else "")


def cpu_description() -> str:
    """The CPU's name, family and model, and its widest vector extension: a cloud machine
    may name only the vendor ("AMD EPYC"), and the figures differ by generation (Zen 3
    has no AVX-512, Zen 4 has)."""
    info = Path("/proc/cpuinfo").read_text()
    field = lambda name: (m.group(1).strip() if (m := re.search(rf"^{name}\s*:\s*(.*)$", info, re.M)) else None)
    name = field("model name") or platform.machine()
    flags = set((field("flags") or "").split())
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else None
    detail = [f"family {field('cpu family')} model {field('model')}" if field("cpu family") else None, vector]
    detail = [d for d in detail if d]
    return f"{name}; {', '.join(detail)}" if detail else name


def machine_info(conn) -> dict:
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    settings = dict(conn.execute(
        "SELECT name, current_setting(name) FROM pg_settings WHERE name IN "
        "('shared_buffers','min_dynamic_shared_memory','work_mem','max_parallel_workers_per_gather','jit','effective_cache_size')").fetchall())
    import duckdb
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu_description(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "postgres": conn.execute("SHOW server_version").fetchone()[0],
        "pgcolumnar": conn.execute("SELECT pgcolumnar.version()").fetchone()[0],
        "duckdb": duckdb.__version__,
        "commit": git_commit(),
        "pg_settings": settings,
        "huge_pages_mib": huge_pages_in_use_mib(),
    }


def huge_pages_in_use_mib() -> int:
    """The memory in huge pages that processes have mapped or reserved (on this machine,
    the cluster's shared memory when `huge_pages = try` found them). Parallel workers and
    first queries on a new connection map each shared buffer they read, and unmap them
    on exit: with 4 kB pages that costs them several ms (docs/explain.md, Parallel scans)."""
    info = dict(re.findall(r"(\w+):\s+(\d+)", Path("/proc/meminfo").read_text()))
    pages = int(info.get("HugePages_Total", 0)) - int(info.get("HugePages_Free", 0)) + int(info.get("HugePages_Rsvd", 0))
    return pages * int(info.get("Hugepagesize", 0)) // 1024


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def result_rows(measurements, rows: int, hosts: int, date: str) -> list[dict]:
    median = {(m.config.engine, m.config.mode, m.query): m.median_ms for m in measurements}
    out = []
    for m in measurements:
        e, mode, q = m.config.engine, m.config.mode, m.query
        out.append({
            "date": date, "rows": rows, "hosts": hosts, "engine": e, "mode": mode, "query": q,
            "median_ms": round(m.median_ms, 3),
            "min_ms": round(min(m.times_ms), 3), "max_ms": round(max(m.times_ms), 3),
            "runs": len(m.times_ms),
            "ratio_to_heap": fmt_ratio(ratio(m.median_ms, median.get(("heap", mode, q)))),
            "ratio_to_duckdb": fmt_ratio(ratio(m.median_ms, median.get(("duckdb", mode, q)))),
            "plan": m.plan,
        })
    return out


def fmt_ratio(r):
    return "" if r is None else round(r, 4)


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def draw_chart(path: Path, rows: list[dict], title: str) -> None:
    """Grouped bars per query: each engine's median time divided by heap's, log scale."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    queries = sorted({r["query"] for r in rows}, key=lambda q: int(q[1:]))
    engines = [e for e in ("columnar", "columnar-noscan", "columnar-sorted", "duckdb")
               if any(r["engine"] == e for r in rows)]
    modes = [m for m in ("serial", "parallel") if any(r["mode"] == m for r in rows)]
    fig, axes = plt.subplots(1, len(modes), figsize=(6.5 * len(modes), 4.5), sharey=True, squeeze=False)
    width = 0.8 / len(engines)
    for ax, mode in zip(axes[0], modes):
        for i, engine in enumerate(engines):
            vals = {r["query"]: float(r["ratio_to_heap"]) for r in rows
                    if r["engine"] == engine and r["mode"] == mode and r["ratio_to_heap"] != ""}
            xs = [k + (i - (len(engines) - 1) / 2) * width for k in range(len(queries))]
            ax.bar(xs, [vals.get(q, math.nan) for q in queries], width, label=ENGINE_TITLES[engine])
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(queries)), queries)
        ax.set_title(f"{mode}")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0][0].set_ylabel("time / heap time (log; below 1 = faster than heap)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt_ms(v) -> str:
    v = float(v)
    return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


def fmt_x(v) -> str:
    return "" if v in ("", None) else f"{float(v):.2f}×"


SHORT_TITLES = {"heap": "heap", "columnar": "columnar", "columnar-noscan": "scan off",
                "columnar-sorted": "sorted", "duckdb": "DuckDB", "heap-core": "heap, core plan",
                "columnar-zones": "columnar, zone maps"}


def last_point_section(rows: list[dict]) -> list[str]:
    """LastPoint's queries against core's plan on heap (its targets' yardstick)."""
    ms = {(r["engine"], r["query"]): float(r["median_ms"]) for r in rows if r["mode"] == "serial"}
    queries = sorted({q for (e, q) in ms if e == "heap-core"}, key=lambda q: int(q[1:]))
    if not queries:
        return []
    engines = [e for e in ("heap", "columnar", "columnar-zones", "columnar-sorted", "duckdb")
               if any((e, q) in ms for q in queries)]
    out = ["### LastPoint: each host's latest row (serial)", "",
           "Core's plan on the heap table (`pgcolumnar.enable_last_point = off`) against the plan "
           "chosen with LastPoint on (\"Plans chosen\" below says which: a skip scan over the btree "
           "`(hostname, time DESC)` that every table has, or zone maps), and against the columnar table "
           "with index scans off, where LastPoint reads its zone maps. \"× faster\" is core's time "
           "over each.", "",
           "| query | heap, core plan ms | " + " | ".join(f"{SHORT_TITLES[e]} ms" for e in engines) + " | "
           + " | ".join(f"{SHORT_TITLES[e]} × faster" for e in engines) + " |",
           "|---|---:|" + "---:|" * (2 * len(engines))]
    for q in queries:
        core = ms[("heap-core", q)]
        line = [q, fmt_ms(core)] + [fmt_ms(ms[(e, q)]) if (e, q) in ms else "" for e in engines]
        line += [f"{core / ms[(e, q)]:,.0f}×" if (e, q) in ms and ms[(e, q)] > 0 else "" for e in engines]
        out.append("| " + " | ".join(line) + " |")
    return out + [""]


def markdown_mode_table(rows: list[dict], mode: str) -> list[str]:
    """Absolute medians, then each engine / heap, then heap and columnar / DuckDB."""
    cell = {(r["engine"], r["query"]): r for r in rows
            if r["mode"] == mode and r["engine"] not in ("heap-core", "columnar-zones")}
    engines = [e for e in ("heap", "columnar", "columnar-noscan", "columnar-sorted", "duckdb")
               if any(k[0] == e for k in cell)]
    vs_heap = [e for e in engines if e != "heap"]
    vs_duck = [e for e in ("heap", "columnar", "columnar-sorted") if "duckdb" in engines and e in engines]
    head = ["query"] + [f"{SHORT_TITLES[e]} ms" for e in engines]
    head += [f"{SHORT_TITLES[e]} / heap" for e in vs_heap] + [f"{SHORT_TITLES[e]} / DuckDB" for e in vs_duck]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for q in sorted({k[1] for k in cell}, key=lambda q: int(q[1:])):
        line = [q] + [fmt_ms(cell[(e, q)]["median_ms"]) for e in engines]
        line += [fmt_x(cell[(e, q)]["ratio_to_heap"]) for e in vs_heap]
        line += [fmt_x(cell[(e, q)]["ratio_to_duckdb"]) for e in vs_duck]
        out.append("| " + " | ".join(line) + " |")
    return out


def markdown_plans_table(rows: list[dict]) -> list[str]:
    """Which scan PostgreSQL chose per configuration (absent in runs before it was recorded)."""
    plan = {(r["engine"], r["mode"], r["query"]): r.get("plan", "") for r in rows}
    if not any(plan.values()):
        return []
    cols = [(e, m) for m in ("serial", "parallel") for e in ("heap", "columnar", "columnar-noscan", "columnar-sorted")
            if any(k[0] == e and k[1] == m for k in plan)]
    out = ["### Plans chosen", "", "PostgreSQL's access and Gather nodes (`EXPLAIN`) in each configuration.", "",
           "| query | " + " | ".join(f"{SHORT_TITLES[e]} {m}" for e, m in cols) + " |",
           "|---|" + "---|" * len(cols)]
    for q in sorted({k[2] for k in plan}, key=lambda q: int(q[1:])):
        out.append(f"| {q} | " + " | ".join(plan.get((e, m, q), "") or "" for e, m in cols) + " |")
    return out + [""]


def where_columnar_loses(rows: list[dict]) -> list[str]:
    """Facts computed from the numbers, so the text can never contradict the tables."""
    out = []
    for mode in ("serial", "parallel"):
        col = {r["query"]: float(r["ratio_to_heap"]) for r in rows
               if r["engine"] == "columnar" and r["mode"] == mode and r["ratio_to_heap"] != ""}
        if not col:
            continue
        slower = [f"{q} ({v:.2f}×)" for q, v in sorted(col.items(), key=lambda kv: int(kv[0][1:])) if v > 1.0]
        faster = [q for q, v in col.items() if v <= 1.0]
        duck = {r["query"]: float(r["ratio_to_duckdb"]) for r in rows
                if r["engine"] == "columnar" and r["mode"] == mode and r["ratio_to_duckdb"] != ""}
        geo = lambda vs: math.exp(sum(map(math.log, vs)) / len(vs))
        text = (f"- **{mode}**: columnar is faster than heap on {len(faster)} of {len(col)} queries "
                f"(geometric mean of time / heap: {geo(list(col.values())):.2f}×)")
        text += f"; slower on {', '.join(slower)}." if slower else "; slower on none."
        if duck:
            text += (f" Against DuckDB it is {geo(list(duck.values())):.1f}× slower (geometric mean), "
                     f"{min(duck.values()):.1f}× to {max(duck.values()):.1f}× per query.")
        out.append(text)
    out += parallel_speedups(rows)
    return out


def parallel_speedups(rows: list[dict]) -> list[str]:
    """Geometric mean of parallel / serial time per engine: how much 2 workers buy."""
    ms = {(r["engine"], r["mode"], r["query"]): float(r["median_ms"]) for r in rows}
    parts = []
    for engine in ("heap", "columnar", "columnar-noscan", "columnar-sorted", "duckdb"):
        pairs = [(ms[(e, "parallel", q)], ms[(e, "serial", q)]) for (e, m, q) in ms
                 if e == engine and m == "serial" and (e, "parallel", q) in ms]
        if pairs:
            g = math.exp(sum(math.log(p / s) for p, s in pairs) / len(pairs))
            parts.append(f"{ENGINE_TITLES[engine]} {g:.2f}×")
    return ["- **parallel / serial time** (geometric mean over the queries; below 1 = parallelism helps): "
            + ", ".join(parts) + "."] if parts else []


def columnar_index_cell(load: dict) -> str:
    # Runs before columnar indexes existed have no index timing.
    return f"{load['columnar_index_s']:.1f} s" if "columnar_index_s" in load else "no index (older run)"


def columnar_size_cell(load: dict) -> str:
    if "columnar_index_bytes" not in load:
        return mb(load["columnar_total_bytes"])
    return (f"{mb(load['columnar_table_bytes'])} + {mb(load['columnar_index_bytes'])} index "
            f"= {mb(load['columnar_total_bytes'])}")


def render_run_section(meta: dict, rows: list[dict], png: str) -> list[str]:
    m, load = meta["machine"], meta["load"]
    out = [f"## {meta['rows']:,} rows, {meta['hosts']} hosts ({meta['date']}, commit `{m['commit']}`)", ""]
    out += [f"Median of {meta['runs']} runs after 1 warm-up, client-side wall time in ms "
            f"(query sent, all rows fetched), after a CHECKPOINT that writes out what the load "
            f"left dirty; each PostgreSQL configuration on a connection of its own. All engines returned the same results "
            f"(floats to a relative {FLOAT_RTOL:g}).", ""]
    out += ["### Load and size", "",
            "| table | load | index build | size | size / heap (with index) |", "|---|---|---|---|---|"]
    heap_total = load["heap_total_bytes"]
    out.append(f"| PostgreSQL heap `{HEAP_TABLE}` | {load['heap_copy_s']:.1f} s COPY "
               f"(+ {load['heap_vacuum_analyze_s']:.1f} s VACUUM ANALYZE) | {load['heap_index_s']:.1f} s "
               f"| {mb(load['heap_table_bytes'])} + {mb(load['heap_index_bytes'])} index = {mb(heap_total)} | 1.00× |")
    out.append(f"| PostgreSQL columnar `{COL_TABLE}` | {load['columnar_copy_s']:.1f} s COPY "
               f"(+ {load['columnar_analyze_s']:.1f} s ANALYZE) | {columnar_index_cell(load)} "
               f"| {columnar_size_cell(load)} | {load['columnar_total_bytes'] / heap_total:.2f}× |")
    if "sorted_copy_s" in load:
        out.append(f"| PostgreSQL columnar `{SORTED_TABLE}`, sort_by `{SORT_BY}` | {load['sorted_copy_s']:.1f} s COPY "
                   f"(+ {load['sorted_analyze_s']:.1f} s ANALYZE) | {load['sorted_index_s']:.1f} s "
                   f"| {mb(load['sorted_table_bytes'])} + {mb(load['sorted_index_bytes'])} index "
                   f"= {mb(load['sorted_total_bytes'])} | {load['sorted_total_bytes'] / heap_total:.2f}× |")
    if "duckdb_load_s" in load:
        out.append(f"| DuckDB | {load['duckdb_load_s']:.1f} s | none | {mb(load['duckdb_file_bytes'])} "
                   f"(database file) | {load['duckdb_file_bytes'] / heap_total:.2f}× |")
    col_table = load.get("columnar_table_bytes", load["columnar_total_bytes"])
    out += ["", f"Columnar vs heap, tables without their indexes: {col_table / load['heap_table_bytes']:.2f}× "
            f"the size. The columnar size is `pg_total_relation_size`; it leaves out the small "
            f"metadata rows in `pgcolumnar.row_group` and `pgcolumnar.chunk`.", ""]
    for mode, desc in (("serial", "`max_parallel_workers_per_gather = 0`; DuckDB `threads = 1`"),
                       ("parallel", "`max_parallel_workers_per_gather = 2`; DuckDB `threads = 2`")):
        if any(r["mode"] == mode for r in rows):
            out += [f"### {mode.capitalize()} ({desc})", "",
                    "\"scan off\": the columnar table with `pgcolumnar.enable_columnar_scan`, `enable_vector_agg` and `enable_last_point` off; "
                    f"\"sorted\": the columnar table `{SORTED_TABLE}` loaded with `sort_by = '{SORT_BY}'`. "
                    "Ratios below 1 mean faster.", ""] + markdown_mode_table(rows, mode) + [""]
    out += last_point_section(rows)
    out += render_first_runs(meta.get("first_run", []))
    out += from_disk.render(meta.get("from_disk", []), meta.get("from_disk_commit"), ENGINE_TITLES)
    out += render_parallel_pairs(meta.get("parallel_pairs", []), meta.get("parallel_pairs_commit"))
    out += render_duckdb_pairs(meta.get("duckdb_pairs", []), meta.get("duckdb_pairs_commit"))
    out += markdown_plans_table(rows)
    out += ["### Where columnar stands", ""] + where_columnar_loses(rows) + [""]
    out += plan_choice.render(meta.get("plan_choice", []), meta.get("plan_choice_commit"))
    out += [f"![time / heap time per query, log scale]({png})", ""]
    return out


def render_decode(rows: list[dict]) -> list[str]:
    """The codecs' decode throughput (`bench/calibrate.py --decode-only`)."""
    out = ["## Decode throughput per codec (`bench/calibrate.py --decode-only`)", "",
           "Each codec's own decode (no general compression, no vector frame) of TSBS-like "
           "columns of 204,800 values in vectors of 2,048, one core, release build, best of 5 "
           "(`bench/encoding/measure.rs`), on the machine of the newest `make bench`. The "
           "writer's chooser took its `decode_ns` figures from this measurement (on the earlier "
           "2-core Intel Xeon machine, whose AVX-512 decoded ALP_rd lanes at 1.6 values/ns): "
           "with `compress_for = 'scan'` (the default) a codec 1 ns/value faster wins when it "
           "stores at most 0.5 byte/value more; with `'size'` the smallest wins.",
           "", "| column | codec | values/ns | bytes/value |", "|---|---|---:|---:|"]
    out += [f"| {r['column']} | {r['codec']} | {r['values_per_ns']:.2f} | {r['bytes_per_value']:.2f} |"
            for r in rows]
    return out + [""]


def render_benchmarks_md() -> None:
    """BENCHMARKS.md from the newest result of each data size in bench/results/."""
    latest = {}
    for meta_path in sorted(RESULTS_DIR.glob("*-*.json")):
        meta = json.loads(meta_path.read_text())
        if "rows" not in meta or "date" not in meta or meta.get("kind") in ("joins", "tpch", "citus", "logical"):
            continue  # calibration.json and the like; the join, TPC-H and Citus benchmarks' results
        latest[meta["rows"]] = (meta_path, meta)  # sorted by date: the last one wins
    if not latest:
        return
    # The same day's runs of several sizes: the largest (the headline run) describes the machine.
    newest_meta = max((m for _, m in latest.values()), key=lambda m: (m["date"], m["rows"]))
    m = newest_meta["machine"]
    queries = load_queries()
    out = [
        "# Benchmarks",
        "",
        "<!-- Generated by bench/run.py (`make bench`); edits are overwritten. -->",
        "",
        "TSBS cpu-only data (`bench/tsbs-gen`: one row per host every 10 s, 10 tags and 10 "
        "float metrics per row) in three engines on the same machine and in the same run:",
        "",
        f"- **heap**: a PostgreSQL heap table `{HEAP_TABLE}` with a btree index on `(hostname, time DESC)`;",
        f"- **columnar**: `{COL_TABLE} USING columnar` with the same btree index, read by ColumnarScan "
        "and ColumnarAgg (`pgcolumnar.enable_columnar_scan = on`), and the same table with both off "
        "(a plain sequential scan that decodes every column, under PostgreSQL's Agg);",
        f"- **sorted**: `{SORTED_TABLE} USING columnar` with `sort_by = '{SORT_BY}'` set before "
        "its COPY (each row group is stored by host, then time; rows arrive in time order, so "
        "row groups still follow time), same index, ColumnarScan on;",
        "- **DuckDB** (embedded, its own database file), as the reference for what a columnar engine can reach.",
        "",
        f"In `{COL_TABLE}` rows stay in TSBS's time order, so zone maps on `hostname` cannot skip "
        f"anything there; in `{SORTED_TABLE}` they skip the vectors of other hosts. ColumnarScan "
        "evaluates the WHERE clauses it can on vectors (`quals_push_down`, on by default) and "
        "runs in parallel. Aggregates over one columnar table are folded over vectors inside "
        "the scan (ColumnarAgg, the batch fold) when that costs less than PostgreSQL's Agg; "
        "each host's latest row (q7) is found by LastPoint, by zone maps on columnar tables "
        "and a skip scan of the btree on heap; \"scan off\" turns them all off (a sequential "
        "scan that decodes every column, then Agg or Sort).",
        "",
        "Run it with `make bench` (10M rows, 400 hosts; `make bench ROWS=1000000` for a quick run). "
        "Raw numbers: `bench/results/<date>-<rows>.csv` (per engine, mode and query) and `.json` "
        "(machine, load times, sizes).",
        "",
        "## Machine",
        "",
        f"- {m['nproc']} cores ({m['cpu']}), {m['memory_gib']} GiB memory",
        f"- PostgreSQL {m['postgres']}, pgcolumnar {m['pgcolumnar']}, DuckDB {m['duckdb']}",
        "- PostgreSQL settings: " + ", ".join(f"`{k} = {v}`" for k, v in sorted(m["pg_settings"].items()))
        + " (the `make run` cluster's; JIT is PostgreSQL's default)",
        "- Huge pages in use: " + (f"{m['huge_pages_mib']} MiB" if m.get("huge_pages_mib") else
                                   "none (shared memory in 4 kB pages)" if "huge_pages_mib" in m else "not recorded"),
        "",
        "## Queries",
        "",
        "| query | what | SQL |",
        "|---|---|---|",
    ]
    out += [f"| {q.name} | {q.comment} | `{q.sql}` |" for q in queries]
    out.append("")
    for rows_count in sorted(latest, reverse=True):
        meta_path, meta = latest[rows_count]
        csv_rows = read_csv(meta_path.with_suffix(".csv"))
        png = meta_path.with_suffix(".png").relative_to(REPO_DIR)
        out += render_run_section(meta, csv_rows, str(png))
    # A comparison with TimescaleDB, run by hand (it is in no registry this benchmark may
    # install from): one file per run; the newest is shown.
    timescaledb = sorted(RESULTS_DIR.glob("*-timescaledb.md"))
    if timescaledb:
        out += [timescaledb[-1].read_text().rstrip(), ""]
    decode = RESULTS_DIR / "decode_throughput.json"
    if decode.exists():
        out += render_decode(json.loads(decode.read_text()))
    # Row changes and point lookups (`make bench-changes`) are recorded by hand, one file
    # per run; the newest is shown.
    changes = sorted(RESULTS_DIR.glob("*-changes.md"))
    if changes:
        out += ["", changes[-1].read_text().rstrip(), ""]
    out += ingest.render(newest_ingest())
    logical = newest_result("logical")
    out += logical_overhead.render(logical)
    out += logical_cost.render((logical or {}).get("cost"))
    newest_joins = newest_joins_result()
    if newest_joins:
        out += [""] + joins.render(newest_joins[1])
    out += [""] + heap_pushdown.render(newest_heap_pushdown())
    # `make bench-tpch`'s sections, from its newest result of each scale factor: each
    # benchmark rewrites the whole file from bench/results, so each keeps the other's.
    tpch_section = tpch.render_all()
    if tpch_section:
        out += [""] + tpch_section
    # `make bench-citus`'s section (bench/citus_report.py), from its newest result.
    citus_section = citus_report.render_all()
    if citus_section:
        out += [""] + citus_section
    (REPO_DIR / "BENCHMARKS.md").write_text("\n".join(out))
    log("wrote BENCHMARKS.md")


def joins_results() -> list[tuple[Path, dict]]:
    """The join benchmark's results (bench/joins.py), oldest first."""
    out = []
    for path in RESULTS_DIR.glob("*-joins-*.json"):
        meta = json.loads(path.read_text())
        if meta.get("kind") == "joins" and "date" in meta:
            out.append((path, meta))
    return sorted(out, key=lambda pm: (pm[1]["date"], pm[0].stat().st_mtime))


def newest_joins_result(rows: int | None = None) -> tuple[Path, dict] | None:
    found = [pm for pm in joins_results() if rows is None or pm[1].get("rows") == rows]
    return found[-1] if found else None


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------

def make_pg_executor(conn):
    def for_config(config):
        pg_apply(conn, config)
        return lambda sql: conn.execute(sql).fetchall()
    return for_config


class FreshConnections:
    """A new connection per configuration. What a session loaded stays with it: after one
    JIT-compiled query (heap's serial plans are costly enough), every parallel worker of
    that session loads the JIT's library too, about 10 ms a query, which would be charged
    to whichever configuration ran after it."""

    def __init__(self, args):
        self.args, self.conn = args, None

    def for_config(self, config):
        self.close()
        self.conn = pg_connect(self.args)
        pg_apply(self.conn, config)
        conn = self.conn
        return lambda sql: conn.execute(sql).fetchall()

    def explain(self, sql):
        return [r[0] for r in self.conn.execute(f"EXPLAIN (COSTS OFF) {sql}")]

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def make_duckdb_executor(conn):
    def for_config(config):
        duckdb_apply(conn, config)
        return lambda sql: conn.execute(sql).fetchall()
    return for_config


def run_benchmark(args) -> int:
    queries = load_queries()
    data = generate_data(args.rows, args.hosts)
    conn = pg_connect(args)
    load = pg_load(conn, data, HEAP_TABLE, COL_TABLE, SORTED_TABLE)
    duck_path, duck_load = duckdb_load(data, args.rows, args.hosts)
    load.update(duck_load)

    log(f"running {len(queries)} queries, 1 warm-up + {args.runs} runs each")
    fresh = FreshConnections(args)
    measurements = run_all(pg_configs(HEAP_TABLE, COL_TABLE, SORTED_TABLE), queries, fresh.for_config,
                           args.runs, True, explain=fresh.explain)
    fresh.close()
    duck = duckdb_open(duck_path)
    measurements += run_all(duckdb_configs(), queries, make_duckdb_executor(duck), args.runs, True)
    duck.close()

    problems = check_results(queries, measurements)
    if problems:
        print("bench: RESULTS DIFFER between engines:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    log("results agree across all engines and modes")
    choice = plan_choice.run(conn, [COL_TABLE, SORTED_TABLE], args.runs, log)
    log("first runs on new connections")
    first = first_runs(args)
    log("parallel speed-up, serial and parallel taking turns")
    pairs = parallel_pairs(args)
    log("columnar and DuckDB taking turns")
    duck_pairs = duckdb_pairs(args)
    log("queries read from disk")
    disk = from_disk_runs(args)
    # Those runs restart the server, which ended this connection.
    conn = pg_connect(args)

    date = dt.date.today().isoformat()
    RESULTS_DIR.mkdir(exist_ok=True)
    base = RESULTS_DIR / f"{date}-{args.rows}"
    rows = result_rows(measurements, args.rows, args.hosts, date)
    write_csv(base.with_suffix(".csv"), rows)
    meta = {"date": date, "rows": args.rows, "hosts": args.hosts, "runs": args.runs,
            "machine": machine_info(conn), "load": load, "plan_choice": choice, "first_run": first,
            "parallel_pairs": pairs, "duckdb_pairs": duck_pairs, "from_disk": disk, "from_disk_commit": git_commit()}
    base.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    draw_chart(base.with_suffix(".png"), rows, f"{args.rows:,} rows: query time / heap time")
    log(f"wrote {base.relative_to(REPO_DIR)}.csv, .json, .png")
    # The join benchmark (bench/joins.py); its tables are reloaded like the TSBS ones.
    status = 0
    if not args.no_joins:
        join_rows = args.join_rows or min(DEFAULT_JOIN_ROWS, args.rows)
        status = run_joins(conn, args, join_rows, reload=True)
    run_heap_pushdown(conn, args)
    render_benchmarks_md()
    return status


def run_heap_pushdown(conn, args) -> None:
    """The heap quals_push_down cases (bench/heap_pushdown.py); writes
    bench/results/<date>-heap-pushdown.json."""
    rows = heap_pushdown.run(conn, args.runs, log)
    path = RESULTS_DIR / f"{dt.date.today().isoformat()}-heap-pushdown.json"
    path.write_text(json.dumps({"date": dt.date.today().isoformat(), "commit": git_commit(),
                                "results": rows}, indent=2) + "\n")
    log(f"wrote {path.relative_to(REPO_DIR)}")


def run_ingest(args) -> None:
    """Trickle ingest (bench/ingest.py); writes bench/results/<date>-ingest.json."""
    copy_data = generate_data(args.copy_rows, args.hosts)
    result = ingest.run(args, log, copy=(copy_data, create_table_sql, pg_copy_file))
    result.update(date=dt.date.today().isoformat(), commit=git_commit())
    path = RESULTS_DIR / f"{result['date']}-ingest.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {path.relative_to(REPO_DIR)}")


def run_logical(args) -> None:
    """The write overhead of wal_level = logical, timed (bench/logical_overhead.py) and
    counted (bench/logical_cost.py); writes bench/results/<date>-logical.json."""
    result = logical_overhead.run(args, log)
    log("logical cost: counting instructions and WAL per transaction (bench/logical_cost.py)")
    result["cost"] = logical_cost.run(args, log)
    result.update(date=dt.date.today().isoformat(), commit=git_commit())
    path = RESULTS_DIR / f"{result['date']}-logical.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {path.relative_to(REPO_DIR)}")


def newest_result(kind: str) -> dict | None:
    found = sorted(RESULTS_DIR.glob(f"*-{kind}.json"))
    return json.loads(found[-1].read_text()) if found else None


def newest_ingest() -> dict | None:
    return newest_result("ingest")


def newest_heap_pushdown() -> list[dict]:
    found = sorted(RESULTS_DIR.glob("*-heap-pushdown.json"))
    return json.loads(found[-1].read_text())["results"] if found else []


def run_joins(conn, args, rows: int, reload: bool) -> int:
    """Load (unless the jb_ tables already hold `rows` rows and not `reload`) and run the
    join benchmark; write bench/results/<date>-joins-<rows>.json."""
    if reload or not joins.loaded(conn, rows):
        log(f"joins: loading the star schema, {rows:,} fact rows, heap and columnar")
        load = joins.load(conn, rows, log)
    else:
        log(f"joins: the jb_ tables already hold {rows:,} fact rows; not reloading (--reload to force)")
        previous = newest_joins_result(rows)
        load = json.loads(json.dumps(previous[1].get("load", {}))) if previous else {}
        joins.merge_sizes(load, joins.sizes(conn))
        load["reused"] = True
    log(f"joins: {len(joins.QUERIES)} queries, chosen and forced plans, serial and parallel, "
        f"first run + {args.runs} runs each")
    try:
        result = joins.run(conn, rows, args.runs, log)
    except joins.ResultMismatch as e:
        print(f"bench: JOIN RESULTS DIFFER between plans: {e}", file=sys.stderr)
        return 1
    date = dt.date.today().isoformat()
    result.update(date=date, machine=machine_info(conn), load=load)
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{date}-joins-{rows}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {path.relative_to(REPO_DIR)}")
    return 0


def run_joins_only(args) -> int:
    conn = pg_connect(args)
    status = run_joins(conn, args, args.join_rows or DEFAULT_JOIN_ROWS, args.reload)
    if status == 0:
        render_benchmarks_md()
    return status


def add_to_newest_result(args, key: str, what: str, measure) -> int:
    """Runs `measure()` on the tables `run_benchmark` left loaded and records it as `key`
    (with the library's commit as `<key>_commit`) in the newest <date>-<rows>.json (the
    suite's own results, not the joins' or Citus's), then rewrites BENCHMARKS.md."""
    newest = sorted(p for p in RESULTS_DIR.glob(f"*-{args.rows}.json")
                    if re.fullmatch(rf"\d{{4}}-\d{{2}}-\d{{2}}-{args.rows}\.json", p.name))
    if not newest:
        sys.exit(f"bench: no result for {args.rows} rows to add {what} to")
    meta = json.loads(newest[-1].read_text())
    meta[key] = measure()
    meta[f"{key}_commit"] = git_commit()
    newest[-1].write_text(json.dumps(meta, indent=2) + "\n")
    render_benchmarks_md()
    return 0


def run_plan_choice_only(args) -> int:
    """The planner choice suite alone, on the tables `run_benchmark` left loaded."""
    conn = pg_connect(args)
    return add_to_newest_result(args, "plan_choice", "the planner choice suite",
                                lambda: plan_choice.run(conn, [COL_TABLE, SORTED_TABLE], args.runs, log))


# Queries whose first run on a new connection the decode-speed issue targets (q1-q3),
# and the point lookup.
FIRST_RUN_QUERIES = ("q1", "q2", "q3", "q9")
FIRST_RUN_CONNECTIONS = 11


def first_runs(args) -> list[dict]:
    """Per engine (serial) and query, the time of its first run on a new connection
    (median over FIRST_RUN_CONNECTIONS connections, each running that one query once):
    what an application that connects per request sees. The tables are in the OS page
    cache and shared buffers (each query runs once on a connection of its own before
    the timed ones: the runs before may have pushed its pages out of shared buffers,
    and the first timed connection would pay for reading them back); the backend's own
    caches are empty. The engines take turns, connection by connection, so that the
    machine's slower moments fall on all of them."""
    queries = [q for q in load_queries() if q.name in FIRST_RUN_QUERIES]
    configs = [c for c in pg_configs(HEAP_TABLE, COL_TABLE, SORTED_TABLE)
               if c.mode == "serial" and c.engine in ("heap", "columnar", "columnar-sorted")]

    def once(config, sql) -> float:
        conn = pg_connect(args)
        pg_apply(conn, config)
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        ms = (time.perf_counter() - t0) * 1000
        conn.close()
        return ms

    out = []
    for q in queries:
        sqls = [q.for_table(config.table) for config in configs]
        for config, sql in zip(configs, sqls):
            once(config, sql)
        times: list[list[float]] = [[] for _ in configs]
        for _ in range(FIRST_RUN_CONNECTIONS):
            for i, (config, sql) in enumerate(zip(configs, sqls)):
                times[i].append(once(config, sql))
        for config, sql, ts in zip(configs, sqls, times):
            # The same query warm, on the last connection's successor.
            conn = pg_connect(args)
            warm = run_query(make_pg_executor(conn)(config), sql, 5, True)[0]
            conn.close()
            out.append({"engine": config.engine, "query": q.name, "connections": len(ts),
                        "first_ms": statistics.median(ts), "warm_ms": statistics.median(warm)})
    return out


def render_first_runs(first: list[dict]) -> list[str]:
    if not first:
        return []
    t = {(r["engine"], r["query"]): r for r in first}
    engines = [e for e in ("heap", "columnar", "columnar-sorted") if any(k[0] == e for k in t)]
    # Results before 2026-12-05 took 5 connections, one engine after the other, without
    # a run first to bring the query's pages into shared buffers.
    connections = first[0].get("connections", 5)
    how = ("the engines taking turns, after one untimed run of the query each to bring its pages "
           "into shared buffers" if "connections" in first[0] else "one engine after the other")
    out = ["### First run on a new connection (serial)", "",
           f"Median of {connections} new connections, each running the query once "
           f"(the tables in shared buffers and the OS cache; the backend's caches empty; {how}), "
           "against the same query warm. Ratios to heap's first run.", "",
           "| query | " + " | ".join(f"{ENGINE_TITLES[e]} first / warm ms" for e in engines)
           + " | " + " | ".join(f"{ENGINE_TITLES[e]} / heap, first" for e in engines if e != "heap") + " |",
           "|---|" + "---:|" * (2 * len(engines) - 1)]
    for q in FIRST_RUN_QUERIES:
        if ("heap", q) not in t:
            continue
        cells = [f"{t[(e, q)]['first_ms']:.1f} / {t[(e, q)]['warm_ms']:.1f}" for e in engines]
        heap = t[("heap", q)]["first_ms"]
        cells += [f"{t[(e, q)]['first_ms'] / heap:.2f}×" for e in engines if e != "heap"]
        out.append(f"| {q} | " + " | ".join(cells) + " |")
    return out + [""]


def run_once(execute, sql: str) -> float:
    """One timed run of `sql` (ms)."""
    return run_query(execute, sql, 1, False)[0][0]


def take_turns(run_a, run_b, pairs: int) -> tuple[list[float], list[float], float]:
    """Runs `run_a` and `run_b` (each times one run, in ms) alternately, `pairs` pairs
    after one untimed pair: their times, and the median of the pairs' a / b ratios. Both
    runs of a pair meet the machine in the same state."""
    a, b = [], []
    for i in range(pairs + 1):
        ta, tb = run_a(), run_b()
        if i > 0:
            a.append(ta)
            b.append(tb)
    return a, b, statistics.median(x / y for x, y in zip(a, b))


# Queries whose parallel speed-up the decode-speed issue targets, and how many
# serial/parallel pairs time each.
PARALLEL_PAIR_QUERIES = ("q6", "q8")
PARALLEL_PAIRS = 12


def parallel_pairs(args) -> list[dict]:
    """Per engine and query, serial and parallel runs taking turns on one connection
    (serial, parallel, serial, ...; PARALLEL_PAIRS pairs after one untimed run of each),
    and the median of the pairs' ratios. The main tables time every serial
    configuration before every parallel one, minutes apart: on a machine whose speed
    moves by 2x from one minute to the next, their ratio measures the machine as much
    as the plan. A pair's two runs are a second apart."""
    queries = [q for q in load_queries() if q.name in PARALLEL_PAIR_QUERIES]
    configs = pg_configs(HEAP_TABLE, COL_TABLE, SORTED_TABLE)
    out = []
    for engine in ("heap", "columnar", "columnar-sorted"):
        serial = next(c for c in configs if c.engine == engine and c.mode == "serial")
        parallel = next(c for c in configs if c.engine == engine and c.mode == "parallel")
        for q in queries:
            conn = pg_connect(args)
            execute = make_pg_executor(conn)
            sql = q.for_table(serial.table)
            serial_ms, parallel_ms, speedup = take_turns(lambda: run_once(execute(serial), sql),
                                                         lambda: run_once(execute(parallel), sql), PARALLEL_PAIRS)
            conn.close()
            out.append({"engine": engine, "query": q.name, "pairs": PARALLEL_PAIRS,
                        "serial_ms": statistics.median(serial_ms),
                        "parallel_ms": statistics.median(parallel_ms), "speedup": speedup})
            log(f"parallel pairs {engine:16} {q.name}: serial {out[-1]['serial_ms']:,.1f} ms, "
                f"parallel {out[-1]['parallel_ms']:,.1f} ms, median pair {out[-1]['speedup']:.2f}x")
    return out


def render_pairs(title: str, commit: str | None, intro: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    """A section of runs taking turns: its title (with the library's commit), what was
    paired, and a table."""
    at = f" (library of `{commit}`)" if commit else ""
    return ([f"### {title}{at}", "", intro, "", "| " + " | ".join(columns) + " |",
             "|" + "---|" * (len(columns) - 3) + "---:|" * 3]
            + ["| " + " | ".join(r) + " |" for r in rows] + [""])


def render_parallel_pairs(pairs: list[dict], commit: str | None) -> list[str]:
    if not pairs:
        return []
    intro = (f"Serial (`max_parallel_workers_per_gather = 0`) and parallel (`= 2`) runs of the same query "
             f"alternating on one connection, {pairs[0]['pairs']} pairs after one untimed run of each; "
             "\"speed-up\" is the median of the pairs' serial / parallel ratios. Unlike the tables above, "
             "which time all serial configurations before all parallel ones, both runs of a pair meet "
             "the machine in the same state.")
    rows = [[ENGINE_TITLES.get(r["engine"], r["engine"]), r["query"], f"{r['serial_ms']:,.1f}",
             f"{r['parallel_ms']:,.1f}", f"{r['speedup']:.2f}×"] for r in pairs]
    return render_pairs("Parallel speed-up, serial and parallel taking turns", commit, intro,
                        ["engine", "query", "serial ms", "parallel ms", "speed-up"], rows)


# Queries whose time against DuckDB's the decode-speed issue targets, and how many
# columnar/DuckDB pairs time each.
DUCKDB_PAIR_QUERIES = ("q4", "q5", "q6", "q8")
DUCKDB_PAIRS = 12


def duckdb_pairs(args) -> list[dict]:
    """Per query, serial runs of the columnar table and of DuckDB (`threads = 1`)
    taking turns (DUCKDB_PAIRS pairs after one untimed run of each), and the median of
    the pairs' ratios. The main tables time every engine after the other, minutes
    apart; on this machine the same query on one connection moves between 72 and 128
    ms from one second to the next (and DuckDB's between 64 and 120), so only runs a
    second apart compare the engines and not the machine's moments."""
    queries = [q for q in load_queries() if q.name in DUCKDB_PAIR_QUERIES]
    col = next(c for c in pg_configs(HEAP_TABLE, COL_TABLE, SORTED_TABLE)
               if c.engine == "columnar" and c.mode == "serial")
    duck_config = next(c for c in duckdb_configs() if c.mode == "serial")
    duck = duckdb_open(DATA_DIR / f"cpu-{args.rows}-{args.hosts}.duckdb")
    run_duck = make_duckdb_executor(duck)(duck_config)
    out = []
    for q in queries:
        conn = pg_connect(args)
        run_col = make_pg_executor(conn)(col)
        col_sql, duck_sql = q.for_table(col.table), q.for_table(duck_config.table)
        col_ms, duck_ms, ratio = take_turns(lambda: run_once(run_col, col_sql),
                                            lambda: run_once(run_duck, duck_sql), DUCKDB_PAIRS)
        conn.close()
        out.append({"query": q.name, "pairs": DUCKDB_PAIRS, "columnar_ms": statistics.median(col_ms),
                    "duckdb_ms": statistics.median(duck_ms), "ratio": ratio})
        log(f"duckdb pairs {q.name}: columnar {out[-1]['columnar_ms']:,.1f} ms, "
            f"DuckDB {out[-1]['duckdb_ms']:,.1f} ms, median pair {out[-1]['ratio']:.2f}x")
    duck.close()
    return out


def render_duckdb_pairs(pairs: list[dict], commit: str | None) -> list[str]:
    if not pairs:
        return []
    intro = (f"Serial runs of the columnar table (`max_parallel_workers_per_gather = 0`) and of DuckDB "
             f"(`threads = 1`) alternating, {pairs[0]['pairs']} pairs after one untimed run of each; "
             "\"columnar / DuckDB\" is the median of the pairs' ratios. The tables above time one "
             "engine after the other, minutes apart, and this machine's speed moves by up to 2x "
             "from one second to the next: the two runs of a pair meet it in the same state.")
    rows = [[r["query"], f"{r['columnar_ms']:,.1f}", f"{r['duckdb_ms']:,.1f}", f"{r['ratio']:.2f}×"]
            for r in pairs]
    return render_pairs("Columnar and DuckDB taking turns (serial)", commit, intro,
                        ["query", "columnar ms", "DuckDB ms", "columnar / DuckDB"], rows)


def run_duckdb_pairs_only(args) -> int:
    """The paired DuckDB comparison alone, on the tables `run_benchmark` left loaded."""
    return add_to_newest_result(args, "duckdb_pairs", "the DuckDB pairs", lambda: duckdb_pairs(args))


def run_parallel_pairs_only(args) -> int:
    """The paired parallel measurement alone, on the tables `run_benchmark` left loaded."""
    return add_to_newest_result(args, "parallel_pairs", "the parallel pairs", lambda: parallel_pairs(args))


def run_first_runs_only(args) -> int:
    """The first-run measurement alone, on the tables `run_benchmark` left loaded."""
    return add_to_newest_result(args, "first_run", "the first runs", lambda: first_runs(args))


def from_disk_runs(args) -> list[dict]:
    """Each query on heap, columnar and the sorted table, serial, read from disk
    (bench/from_disk.py)."""
    queries = load_queries()
    configs = [c for c in pg_configs(HEAP_TABLE, COL_TABLE, SORTED_TABLE)
               if c.mode == "serial" and c.engine in ("heap", "columnar", "columnar-sorted")]
    return from_disk.run(args, lambda: pg_connect(args), pg_apply, queries, configs, log)


def run_from_disk_only(args) -> int:
    """The runs from disk alone, on the tables `run_benchmark` left loaded."""
    return add_to_newest_result(args, "from_disk", "the runs from disk", lambda: from_disk_runs(args))


def run_tpch(args) -> int:
    """TPC-H (bench/tpch.py): bench/results/<date>-tpch-sf<SF>.{json,csv}, then BENCHMARKS.md."""
    if args.from_disk_only:
        status = tpch.run_from_disk_only(args, lambda: pg_connect(args), log, git_commit())
    else:
        conn = pg_connect(args)
        status = tpch.run(conn, args, log, machine_info(conn), lambda: pg_connect(args))
    render_benchmarks_md()
    return status


def run_demo(args) -> int:
    """The `make run` demo: heap vs columnar on a 1M-row sample, one run each."""
    queries = load_queries()
    data = generate_data(args.rows, args.hosts)
    conn = pg_connect(args)
    heap, col = "demo_cpu_heap", "demo_cpu_col"
    log(f"loading {args.rows:,} rows into {heap} (heap + btree index) and {col} (columnar)")
    load = pg_load(conn, data, heap, col)
    configs = [c for c in pg_configs(heap, col) if c.mode == "parallel" and c.engine != "columnar-noscan"]
    measurements = run_all(configs, queries, make_pg_executor(conn), runs=1, warmup=False)
    problems = check_results(queries, measurements, reference_mode="parallel")
    t = {(m.config.engine, m.query): m.times_ms[0] for m in measurements}
    print()
    print(f"{'query':6} {'heap ms':>10} {'columnar ms':>12} {'col / heap':>11}   what")
    for q in queries:
        h, c = t[("heap", q.name)], t[("columnar", q.name)]
        print(f"{q.name:6} {h:10,.1f} {c:12,.1f} {c / h:10.2f}×   {q.comment}")
    print()
    print(f"size: heap {mb(load['heap_total_bytes'])} (table {mb(load['heap_table_bytes'])} + "
          f"index {mb(load['heap_index_bytes'])}), columnar {mb(load['columnar_total_bytes'])} "
          f"(table {mb(load['columnar_table_bytes'])} + index {mb(load['columnar_index_bytes'])}): "
          f"{load['columnar_total_bytes'] / load['heap_total_bytes']:.2f}× heap with indexes, "
          f"{load['columnar_table_bytes'] / load['heap_table_bytes']:.2f}× table to table")
    print(f"load: heap COPY {load['heap_copy_s']:.1f} s + index {load['heap_index_s']:.1f} s, "
          f"columnar COPY {load['columnar_copy_s']:.1f} s")
    print("One run each, parallel plan allowed; the columnar table has no sort_by here. "
          "`make bench` measures properly (also a sorted table, and against DuckDB).")
    q6 = next(q for q in queries if q.name == "q6")
    print(f"\nEXPLAIN (ANALYZE, COSTS OFF) {q6.for_table(col)}")
    pg_apply(conn, next(c for c in configs if c.engine == "columnar"))
    for (line,) in conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {q6.for_table(col)}"):
        print("  " + line)
    if problems:
        print("bench: RESULTS DIFFER between heap and columnar:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    return 0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=None, help="rows to generate (default 10000000; demo 1000000)")
    p.add_argument("--hosts", type=int, default=400)
    p.add_argument("--runs", type=int, default=None, help="timed runs per query after 1 warm-up (default 5; --tpch 3)")
    p.add_argument("--host", default=os.environ.get("PGHOST", str(REPO_DIR / ".pgdata" / "run" / "socket")),
                   help="PostgreSQL host or socket directory")
    p.add_argument("--port", type=int, default=int(os.environ.get("PGPORT", 54315)))
    p.add_argument("--demo", action="store_true", help="the `make run` demo: heap vs columnar, 1 run each")
    p.add_argument("--render-only", action="store_true", help="rewrite BENCHMARKS.md from bench/results")
    p.add_argument("--plan-choice-only", action="store_true",
                   help="run the planner choice suite on the tables loaded by the last run, "
                        "record it in the newest result and rewrite BENCHMARKS.md")
    p.add_argument("--first-runs-only", action="store_true",
                   help="time q1-q3 and q9 on new connections on the tables loaded by the last run, "
                        "record it in the newest result and rewrite BENCHMARKS.md")
    p.add_argument("--from-disk-only", action="store_true",
                   help="only the queries read from disk (restarts the server, drops the OS cache: root), "
                        "on the tables a full run left; added to the newest result (with --tpch: the newest "
                        "TPC-H result of --sf)")
    p.add_argument("--parallel-pairs-only", action="store_true",
                   help="time q6 and q8 serial and parallel taking turns on the tables loaded by the last run, "
                        "record it in the newest result and rewrite BENCHMARKS.md")
    p.add_argument("--duckdb-pairs-only", action="store_true",
                   help="time q4, q5, q6 and q8 on the columnar table and in DuckDB taking turns (serial) on "
                        "the tables loaded by the last run, record it in the newest result and rewrite "
                        "BENCHMARKS.md")
    p.add_argument("--joins-only", action="store_true",
                   help="run only the join benchmark (bench/joins.py), write "
                        "bench/results/<date>-joins-<rows>.json and rewrite BENCHMARKS.md")
    p.add_argument("--join-rows", type=int, default=None,
                   help=f"fact rows of the join benchmark (default {DEFAULT_JOIN_ROWS:,}; "
                        f"in a full run min({DEFAULT_JOIN_ROWS:,}, --rows))")
    p.add_argument("--heap-pushdown-only", action="store_true",
                   help="run only the heap quals_push_down cases (bench/heap_pushdown.py), write "
                        "bench/results/<date>-heap-pushdown.json and rewrite BENCHMARKS.md")
    p.add_argument("--ingest-only", action="store_true",
                   help="run only the trickle-ingest benchmark (bench/ingest.py), write "
                        "bench/results/<date>-ingest.json and rewrite BENCHMARKS.md")
    p.add_argument("--logical-only", action="store_true",
                   help="run only the wal_level = logical write-overhead benchmark (bench/logical_overhead.py; "
                        "restarts the cluster before each of its visits), write bench/results/<date>-logical.json and rewrite "
                        "BENCHMARKS.md")
    p.add_argument("--logical-seconds", type=int, default=logical_overhead.SECONDS,
                   help=f"with --logical-only: seconds per pgbench run (default {logical_overhead.SECONDS})")
    p.add_argument("--ingest-seconds", type=int, default=ingest.SECONDS,
                   help=f"with --ingest-only: seconds per pgbench run (default {ingest.SECONDS})")
    p.add_argument("--copy-rows", type=int, default=10_000_000,
                   help="with --ingest-only: rows of the TSBS table COPY loads (default 10000000)")
    p.add_argument("--trickle-rows", type=int, default=ingest.TRICKLE_ROWS,
                   help=f"with --ingest-only: single-row transactions before watching merges "
                        f"(default {ingest.TRICKLE_ROWS:,})")
    p.add_argument("--watch-seconds", type=int, default=ingest.WATCH_SECONDS,
                   help=f"with --ingest-only: how long to watch after the last insert (default {ingest.WATCH_SECONDS})")
    p.add_argument("--pg-bin", default=os.path.dirname(shutil.which("pgbench") or "/usr/lib/postgresql/15/bin/"),
                   help="PostgreSQL's bin directory, for pgbench (the Makefile passes pg_config's)")
    p.add_argument("--no-joins", action="store_true",
                   help="skip the join benchmark (BENCHMARKS.md keeps its newest results)")
    p.add_argument("--reload", action="store_true",
                   help="with --joins-only: reload the jb_ tables even when they hold --join-rows rows")
    p.add_argument("--tpch", action="store_true",
                   help="run TPC-H instead (bench/tpch.py): heap, columnar and DuckDB, serial and parallel; "
                        "write bench/results/<date>-tpch-sf<SF>.{json,csv} and rewrite BENCHMARKS.md")
    p.add_argument("--sf", type=float, default=1.0, help="with --tpch: the scale factor (default 1)")
    p.add_argument("--queries", default=None, help="with --tpch: only these queries, e.g. q1,q6")
    p.add_argument("--serial-only", action="store_true", help="with --tpch: skip the parallel configurations")
    p.add_argument("--no-plan-choice", action="store_true",
                   help="with --tpch: skip the planner choice suite on the columnar schema")
    p.add_argument("--no-from-disk", action="store_true",
                   help="with --tpch: skip the queries read from disk (run as root, they restart the server)")
    p.add_argument("--statement-timeout", type=int, default=tpch.DEFAULT_TIMEOUT_S,
                   help=f"with --tpch: statement_timeout per query run, seconds (default {tpch.DEFAULT_TIMEOUT_S})")
    p.add_argument("--tpch-reuse", action="store_true",
                   help="with --tpch: keep the tpch_heap / tpch_col schemas and the DuckDB file when they "
                        "hold this scale factor (load figures are then the previous result's)")
    args = p.parse_args()
    if args.runs is None:
        args.runs = 3 if args.tpch else 5
    if args.rows is None:
        args.rows = 1_000_000 if args.demo else 10_000_000
    return args


def main() -> int:
    args = parse_args()
    if args.render_only:
        render_benchmarks_md()
        return 0
    if args.tpch:
        return run_tpch(args)
    if args.plan_choice_only:
        return run_plan_choice_only(args)
    if args.first_runs_only:
        return run_first_runs_only(args)
    if args.from_disk_only:
        return run_from_disk_only(args)
    if args.parallel_pairs_only:
        return run_parallel_pairs_only(args)
    if args.duckdb_pairs_only:
        return run_duckdb_pairs_only(args)
    if args.joins_only:
        return run_joins_only(args)
    if args.ingest_only:
        run_ingest(args)
        render_benchmarks_md()
        return 0
    if args.logical_only:
        run_logical(args)
        render_benchmarks_md()
        return 0
    if args.heap_pushdown_only:
        run_heap_pushdown(pg_connect(args), args)
        render_benchmarks_md()
        return 0
    return run_demo(args) if args.demo else run_benchmark(args)


if __name__ == "__main__":
    sys.exit(main())
