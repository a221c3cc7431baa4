"""TPC-H in PostgreSQL heap, pgcolumnar and DuckDB, in the same run (`make bench-tpch`).

`bench/run.py --tpch [--sf 1] [--runs 3]` runs it (run.py provides the virtualenv, the
connection and BENCHMARKS.md):

1. bench/tpch-gen writes the eight tables at scale factor SF as CSV into
   bench/.data/tpch-sf<SF>/ (once; the files are kept).
2. The schema (bench/tpch/schema.sql) is created twice in the same database, in schema
   `tpch_heap` (heap) and `tpch_col` (`default_table_access_method = columnar`); each is
   loaded by COPY, then bench/tpch/indexes.sql (primary keys, foreign-key indexes), then
   VACUUM ANALYZE, each step timed. DuckDB loads the same files into a fresh database file.
3. The 22 queries (bench/tpch/queries/q<N>.sql, the spec's validation parameters; a
   bench/tpch/queries/duckdb/q<N>.sql replaces one for DuckDB where it needs other text)
   run with `search_path` set to either schema: serial (`max_parallel_workers_per_gather
   = 0`, DuckDB `threads = 1`) and parallel (the cluster's settings, DuckDB `threads = 2`),
   one warm-up and the median of `--runs` timed runs each, every configuration of a
   query after the other so drift hits them alike.
4. Every result is compared with heap/serial's: PostgreSQL results exactly (numerics with
   their display scale, char(n) with its padding), DuckDB's by value (numerics exactly,
   its doubles to a relative 1e-9, strings without char(n)'s trailing blanks), rows in the
   order the query's ORDER BY gives. A difference is printed and the run exits 1 (the
   results are still written, with the differences in them).
5. EXPLAIN of each query in each PostgreSQL configuration, once, records the plan and its
   pgcolumnar nodes (PgColumnarAgg, PgColumnarScan, their pushed filters).
6. Each query once more on heap and columnar, serial, read from disk: the server restarted
   and the operating system's cache dropped before each (bench/from_disk.py; as root only,
   `--no-from-disk` skips it, `--from-disk-only` reruns it alone on the loaded schemas).
7. Writes bench/results/<date>-tpch-sf<SF>.json and .csv; run.py then rewrites
   BENCHMARKS.md, whose TPC-H sections `render_all` draws from the newest result of
   each scale factor.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import psycopg

import from_disk
import tpch_plan_choice
from units import mb

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
TPCH_DIR = BENCH_DIR / "tpch"
QUERIES_DIR = TPCH_DIR / "queries"
GEN_DIR = BENCH_DIR / "tpch-gen"
DATA_DIR = BENCH_DIR / ".data"
RESULTS_DIR = BENCH_DIR / "results"

TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")
SCHEMAS = {"heap": "tpch_heap", "columnar": "tpch_col"}
ENGINES = ("heap", "columnar", "duckdb")
MODES = ("serial", "parallel")
DUCKDB_THREADS = {"serial": 1, "parallel": 2}
FLOAT_RTOL = 1e-9
DEFAULT_TIMEOUT_S = 1800
# Runs from disk per query and engine.
FROM_DISK_RUNS = 1


def sf_label(sf: float) -> str:
    """1.0 -> "1", 0.1 -> "0.1": the scale factor as file names and headings show it."""
    return f"{sf:g}"


# --------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------

@dataclass
class Query:
    name: str
    title: str
    sql: str
    duckdb_sql: str

    @property
    def ordered(self) -> bool:
        return re.search(r"\border\s+by\b", self.sql, re.I) is not None


def _read_sql(path: Path) -> tuple[str, str]:
    lines = path.read_text().splitlines()
    title = " ".join(l[2:].strip() for l in lines if l.startswith("--"))
    sql = "\n".join(l for l in lines if not l.startswith("--")).strip().rstrip(";")
    return title, sql


def load_queries() -> list[Query]:
    queries = []
    for path in sorted(QUERIES_DIR.glob("q*.sql"), key=lambda p: int(p.stem[1:])):
        title, sql = _read_sql(path)
        variant = QUERIES_DIR / "duckdb" / path.name
        queries.append(Query(path.stem, title, sql, _read_sql(variant)[1] if variant.exists() else sql))
    return queries


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------

def build_generator() -> Path:
    """Build tpch-gen in release mode (cargo is a no-op when it is up to date)."""
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    target = GEN_DIR / "target"
    subprocess.run([cargo, "build", "--release", "--locked", "--quiet", "--manifest-path",
                    str(GEN_DIR / "Cargo.toml"), "--target-dir", str(target)], check=True)
    return target / "release" / "tpch-gen"


def generate(sf: float, log) -> Path:
    """The CSV files of scale factor sf, written once (tpch-gen renames each file into
    place when it is complete, so the files that exist are whole)."""
    out = DATA_DIR / f"tpch-sf{sf_label(sf)}"
    missing = [t for t in TABLES if not (out / f"{t}.csv").exists()]
    if missing:
        gen = build_generator()
        log(f"tpch: generating SF {sf_label(sf)} ({', '.join(missing)}) into {out.relative_to(REPO_DIR)}")
        t0 = time.perf_counter()
        subprocess.run([str(gen), "--sf", str(sf), "--dir", str(out), "--tables", ",".join(missing)], check=True)
        log(f"tpch: generated in {time.perf_counter() - t0:.1f} s")
    return out


# --------------------------------------------------------------------------------------
# PostgreSQL
# --------------------------------------------------------------------------------------

def _timed(conn, sql: str) -> float:
    t0 = time.perf_counter()
    conn.execute(sql)
    return time.perf_counter() - t0


def _statements(path: Path) -> list[str]:
    text = "\n".join(l for l in path.read_text().splitlines() if not l.lstrip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def pg_schema_sizes(conn, schema: str) -> dict:
    row = conn.execute(
        "SELECT coalesce(sum(pg_table_size(c.oid)), 0), coalesce(sum(pg_indexes_size(c.oid)), 0), "
        "coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
        (schema,)).fetchone()
    return {"table_bytes": int(row[0]), "index_bytes": int(row[1]), "total_bytes": int(row[2])}


def pg_load_schema(conn, engine: str, data: Path, log) -> dict:
    """(Re)create schema SCHEMAS[engine] and load it: COPY, indexes, VACUUM ANALYZE."""
    schema = SCHEMAS[engine]
    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    conn.execute(f"CREATE SCHEMA {schema}")
    conn.execute(f"SET search_path = {schema}")
    # The same DDL for both schemas: the access method comes from the session.
    conn.execute(f"SET default_table_access_method = {'columnar' if engine == 'columnar' else 'heap'}")
    for stmt in _statements(TPCH_DIR / "schema.sql"):
        conn.execute(stmt)
    m = {"copy_s": {}}
    for table in TABLES:
        t0 = time.perf_counter()
        with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN (FORMAT csv)") as copy, \
                open(data / f"{table}.csv", "rb") as f:
            while chunk := f.read(1 << 20):
                copy.write(chunk)
        m["copy_s"][table] = time.perf_counter() - t0
    m["copy_total_s"] = sum(m["copy_s"].values())
    m["index_s"] = sum(_timed(conn, stmt) for stmt in _statements(TPCH_DIR / "indexes.sql"))
    m["vacuum_analyze_s"] = sum(_timed(conn, f"VACUUM ANALYZE {t}") for t in TABLES)
    m.update(pg_schema_sizes(conn, schema))
    conn.execute("RESET ALL")
    log(f"tpch: {engine:8} COPY {m['copy_total_s']:.1f} s (lineitem {m['copy_s']['lineitem']:.1f} s), "
        f"indexes {m['index_s']:.1f} s, VACUUM ANALYZE {m['vacuum_analyze_s']:.1f} s, "
        f"{m['total_bytes'] / 1e6:,.0f} MB with indexes")
    return m


def pg_loaded(conn, sf: float) -> bool:
    """Both schemas hold a complete load of this scale factor (the comment is set last)."""
    want = f"tpch sf={sf_label(sf)}"
    got = conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = ANY(%s) "
                       "AND obj_description(oid, 'pg_namespace') = %s",
                       (list(SCHEMAS.values()), want)).fetchone()[0]
    return got == len(SCHEMAS)


def pg_mark_loaded(conn, sf: float) -> None:
    for schema in SCHEMAS.values():
        conn.execute(f"COMMENT ON SCHEMA {schema} IS 'tpch sf={sf_label(sf)}'")


def pg_settings(conn, engine: str, mode: str, timeout_s: int) -> None:
    # From the cluster's defaults each time: nothing carries over between configurations.
    conn.execute("RESET ALL")
    conn.execute(f"SET search_path = {SCHEMAS[engine]}")
    conn.execute(f"SET statement_timeout = '{timeout_s}s'")
    if mode == "serial":
        conn.execute("SET max_parallel_workers_per_gather = 0")


CUSTOM_SCAN = re.compile(r"Custom Scan \((\w+)\)")


def plan_summary(lines: list[str]) -> dict:
    """The pgcolumnar nodes of an EXPLAIN, and which of them carry pushed filters.

    A `Filter:` line right below a pgcolumnar node (before the next node) is a qual the
    node could not push: it runs row by row on the rows the node produced."""
    nodes, current = [], None
    for line in lines:
        m = CUSTOM_SCAN.search(line)
        if m:
            current = {"node": m.group(1), "pushed_filter": False, "filter": False}
            nodes.append(current)
        elif "->" in line:
            current = None
        elif current is not None:
            if line.strip().startswith("Pushed Filter:"):
                current["pushed_filter"] = True
            elif line.strip().startswith("Filter:"):
                current["filter"] = True
    return {
        "nodes": nodes,
        "parallel": any("Gather" in l for l in lines),
    }


def plan_short(summary: dict | None) -> str:
    """"Agg(pf), Scan x3 (pf 2, f 1)": pgcolumnar nodes, pf = with a pushed filter, f =
    with a filter left above the node."""
    if not summary:
        return ""
    parts = []
    for name, short in (("PgColumnarAgg", "Agg"), ("PgColumnarScan", "Scan"), ("PgColumnarLastPoint", "LastPoint")):
        ns = [n for n in summary["nodes"] if n["node"] == name]
        if not ns:
            continue
        pf, f = sum(n["pushed_filter"] for n in ns), sum(n["filter"] for n in ns)
        detail = ", ".join(s for s in (f"pf {pf}" if pf else "", f"f {f}" if f else "") if s)
        parts.append(f"{short}{f' ×{len(ns)}' if len(ns) > 1 else ''}{f' ({detail})' if detail else ''}")
    others = sorted({n["node"] for n in summary["nodes"]} - {"PgColumnarAgg", "PgColumnarScan", "PgColumnarLastPoint"})
    return ", ".join(parts + others) or "none"


# --------------------------------------------------------------------------------------
# DuckDB
# --------------------------------------------------------------------------------------

def duckdb_path(sf: float) -> Path:
    return DATA_DIR / f"tpch-sf{sf_label(sf)}.duckdb"


def duckdb_load(data: Path, sf: float, log) -> dict:
    """A fresh database file from the same CSV files (DuckDB's default threads)."""
    import duckdb
    path = duckdb_path(sf)
    for p in (path, Path(str(path) + ".wal")):
        p.unlink(missing_ok=True)
    conn = duckdb.connect(str(path))
    for stmt in _statements(TPCH_DIR / "schema.sql"):
        conn.execute(stmt)
    t0 = time.perf_counter()
    for table in TABLES:
        conn.execute(f"COPY {table} FROM '{data / (table + '.csv')}' (FORMAT csv, HEADER false, QUOTE '\"')")
    conn.execute("CHECKPOINT")
    load_s = time.perf_counter() - t0
    conn.close()
    log(f"tpch: DuckDB load {load_s:.1f} s, {path.stat().st_size / 1e6:,.0f} MB")
    return {"load_s": load_s, "file_bytes": path.stat().st_size}


# --------------------------------------------------------------------------------------
# Comparing results
# --------------------------------------------------------------------------------------

def _pg_value_equal(a, b) -> bool:
    # Between PostgreSQL configurations: the same value and the same text, so a numeric's
    # display scale and a char(n)'s padding count.
    return type(a) is type(b) and a == b and (not isinstance(a, Decimal) or str(a) == str(b))


def _duckdb_value_equal(ref, got) -> bool:
    """A PostgreSQL value against DuckDB's: DuckDB has no char(n) padding and returns some
    numerics (avg, division) as doubles, extract() as an integer."""
    if isinstance(ref, str) and isinstance(got, str):
        return ref.rstrip(" ") == got.rstrip(" ")
    if isinstance(ref, (Decimal, int)) and isinstance(got, (Decimal, int)) and not isinstance(ref, bool):
        return Decimal(ref) == Decimal(got)
    if isinstance(ref, (Decimal, int, float)) and isinstance(got, (Decimal, int, float)):
        return math.isclose(float(ref), float(got), rel_tol=FLOAT_RTOL, abs_tol=1e-12)
    return ref == got


def _sort_key(row) -> tuple:
    return tuple((v is None, str(v) if not isinstance(v, (int, float, Decimal)) else float(v)) for v in row)


def compare(query: Query, ref: list, got: list, duckdb: bool) -> str | None:
    """None when `got` equals heap/serial's `ref`; else where they first differ."""
    equal = _duckdb_value_equal if duckdb else _pg_value_equal
    if not query.ordered:
        ref, got = sorted(ref, key=_sort_key), sorted(got, key=_sort_key)
    for i, (r, g) in enumerate(zip(ref, got)):
        if len(r) != len(g) or not all(map(equal, r, g)):
            return f"row {i}: {tuple(g)!r}, heap/serial: {tuple(r)!r}"
    if len(ref) != len(got):
        return f"{len(got)} rows, heap/serial {len(ref)}"
    return None


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------

@dataclass
class Run:
    engine: str
    mode: str
    query: str
    times_ms: list
    rows: list | None           # None: timed out
    plan: list | None = None    # EXPLAIN lines (PostgreSQL)

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times_ms) if self.times_ms else None


def _measure(execute, sql: str, runs: int) -> tuple[list, list]:
    rows = execute(sql)  # the warm-up; its rows are the ones compared
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        execute(sql)
        times.append((time.perf_counter() - t0) * 1000)
    return times, rows


def run_queries(conn, duck, queries: list[Query], runs: int, timeout_s: int, modes, log) -> list[Run]:
    out = []
    for q in queries:
        line = []
        for mode in modes:
            for engine in ENGINES:
                if engine == "duckdb":
                    duck.execute(f"SET threads = {DUCKDB_THREADS[mode]}")
                    times, rows = _measure(lambda s: duck.execute(s).fetchall(), q.duckdb_sql, runs)
                    out.append(Run(engine, mode, q.name, times, rows))
                else:
                    pg_settings(conn, engine, mode, timeout_s)
                    plan = [r[0] for r in conn.execute(f"EXPLAIN {q.sql}")]
                    try:
                        times, rows = _measure(lambda s: conn.execute(s).fetchall(), q.sql, runs)
                    except psycopg.errors.QueryCanceled:
                        log(f"tpch: {q.name} {engine}/{mode} passed statement_timeout = {timeout_s} s")
                        times, rows = [], None
                    out.append(Run(engine, mode, q.name, times, rows, plan))
                ms = out[-1].median_ms
                line.append(f"{engine[:3]}/{mode[:3]} {'timeout' if ms is None else f'{ms:,.0f}'}")
        log(f"tpch: {q.name:4} " + "  ".join(line) + "  (ms)")
    conn.execute("RESET ALL")
    return out


def check(queries: list[Query], results: list[Run]) -> list[dict]:
    by_name = {q.name: q for q in queries}
    ref = {r.query: r for r in results if r.engine == "heap" and r.mode == "serial"}
    problems = []
    for r in results:
        base = ref[r.query]
        if r is base or r.rows is None or base.rows is None:
            continue
        diff = compare(by_name[r.query], base.rows, r.rows, r.engine == "duckdb")
        if diff:
            problems.append({"query": r.query, "engine": r.engine, "mode": r.mode, "difference": diff})
    return problems


def _json_rows(rows: list | None, limit: int = 5) -> list | None:
    """The first rows of a result, JSON-safe, for the record of a difference."""
    if rows is None:
        return None
    conv = lambda v: str(v) if isinstance(v, (Decimal, dt.date)) else v
    return [[conv(v) for v in row] for row in rows[:limit]]


@dataclass
class _DiskQuery:
    """A query as `from_disk.run` runs it: the schema is chosen by `search_path`."""
    name: str
    sql: str

    def for_table(self, _schema: str) -> str:
        return self.sql


@dataclass
class _DiskConfig:
    engine: str
    table: str


def from_disk_runs(args, connect, queries: list[Query], log) -> list[dict]:
    """Each query on heap and columnar, serial, read from disk (bench/from_disk.py):
    once per query and engine (SF 1's heap queries read a gigabyte each); [] without root."""
    configs = [_DiskConfig(engine, SCHEMAS[engine]) for engine in ("heap", "columnar")]
    apply = lambda conn, c: pg_settings(conn, c.engine, "serial", args.statement_timeout)
    disk_queries = [_DiskQuery(q.name, q.sql) for q in queries]
    return from_disk.run(args, connect, apply, disk_queries, configs, log, runs=FROM_DISK_RUNS)


def run_from_disk_only(args, connect, log, commit: str) -> int:
    """The runs from disk alone, added to the newest result of the scale factor (on the
    schemas it loaded)."""
    sf = args.sf
    newest = [p for p, r in results() if r["sf"] == sf]
    if not newest:
        sys.exit(f"bench: no TPC-H result at SF {sf_label(sf)} to add the runs from disk to")
    result = json.loads(newest[-1].read_text())
    names = {q["query"] for q in result["queries"]}
    queries = [q for q in load_queries() if q.name in names]
    result["from_disk"] = from_disk_runs(args, connect, queries, log)
    result["from_disk_commit"] = commit
    newest[-1].write_text(json.dumps(result, indent=1) + "\n")
    return 0


def run(conn, args, log, machine: dict, connect) -> int:
    """The whole benchmark; returns the exit status (1 when a result differs). `connect()`
    opens a new connection (the runs from disk restart the server)."""
    sf = args.sf
    queries = load_queries()
    if args.queries:
        wanted = set(args.queries.split(","))
        queries = [q for q in queries if q.name in wanted]
    data = generate(sf, log)
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgcolumnar")
    previous = newest_result(sf)
    if args.tpch_reuse and pg_loaded(conn, sf) and duckdb_path(sf).exists() and previous:
        log(f"tpch: reusing the loaded SF {sf_label(sf)} schemas and DuckDB file (--tpch-reuse)")
        load = dict(previous["load"], reused=True)
        for engine in ("heap", "columnar"):
            load[engine].update(pg_schema_sizes(conn, SCHEMAS[engine]))
    else:
        load = {engine: pg_load_schema(conn, engine, data, log) for engine in ("heap", "columnar")}
        pg_mark_loaded(conn, sf)
        load["duckdb"] = duckdb_load(data, sf, log)

    import duckdb
    duck = duckdb.connect(str(duckdb_path(sf)), read_only=True)
    modes = ("serial",) if args.serial_only else MODES
    log(f"tpch: {len(queries)} queries, {', '.join(modes)}, 1 warm-up + {args.runs} runs each, "
        f"statement_timeout {args.statement_timeout} s")
    # Other work on the machine slows every engine alike only roughly: recorded so a
    # reader knows how far to trust the times (ratios hold up better).
    loadavg = [round(os.getloadavg()[0], 2)]
    results = run_queries(conn, duck, queries, args.runs, args.statement_timeout, modes, log)
    loadavg.append(round(os.getloadavg()[0], 2))
    duck.close()
    choice = None if args.no_plan_choice else tpch_plan_choice.run(
        conn, SCHEMAS["columnar"], queries, args.runs, log)
    # Last: it restarts the server, which ends `conn`.
    disk = [] if args.no_from_disk else from_disk_runs(args, connect, queries, log)

    problems = check(queries, results)
    for p in problems:
        ref = next(r for r in results if r.query == p["query"] and r.engine == "heap" and r.mode == "serial")
        got = next(r for r in results if r.query == p["query"] and r.engine == p["engine"] and r.mode == p["mode"])
        p["heap_rows"], p["rows"] = _json_rows(ref.rows), _json_rows(got.rows)

    date = dt.date.today().isoformat()
    result = {
        "kind": "tpch", "date": date, "sf": sf, "runs": args.runs, "statement_timeout_s": args.statement_timeout,
        "machine": machine, "loadavg_1min": loadavg, "load": load,
        "queries": [{"query": q.name, "title": q.title} for q in queries],
        "results": [{"engine": r.engine, "mode": r.mode, "query": r.query,
                     "median_ms": None if r.median_ms is None else round(r.median_ms, 3),
                     "times_ms": [round(t, 3) for t in r.times_ms], "timed_out": r.rows is None,
                     "plan_summary": plan_summary(r.plan) if r.plan else None,
                     "plan": r.plan} for r in results],
        "mismatches": problems,
        "plan_choice": choice,
        "from_disk": disk,
        "from_disk_commit": machine.get("commit"),
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    # Not Path.with_suffix: SF 0.1 has a point of its own.
    base = f"{date}-tpch-sf{sf_label(sf)}"
    (RESULTS_DIR / f"{base}.json").write_text(json.dumps(result, indent=1) + "\n")
    write_csv(RESULTS_DIR / f"{base}.csv", result)
    log(f"tpch: wrote {(RESULTS_DIR / base).relative_to(REPO_DIR)}.json, .csv")
    timed_out = [f"{r.query} {r.engine}/{r.mode}" for r in results if r.rows is None]
    if timed_out:
        log(f"tpch: timed out, not compared: {', '.join(timed_out)}")
    if problems:
        print("bench: TPC-H RESULTS DIFFER FROM HEAP/SERIAL:", file=sys.stderr)
        for p in problems:
            print(f"  {p['query']} on {p['engine']}/{p['mode']}: {p['difference']}", file=sys.stderr)
        return 1
    log("tpch: every result equals heap/serial's")
    return 0


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------

def _medians(result: dict) -> dict:
    return {(r["engine"], r["mode"], r["query"]): r["median_ms"] for r in result["results"]}


def _ratio(a, b):
    return a / b if a is not None and b else None


def write_csv(path: Path, result: dict) -> None:
    med = _medians(result)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["date", "sf", "engine", "mode", "query", "median_ms", "min_ms", "max_ms", "runs",
                    "ratio_to_heap", "ratio_to_duckdb", "columnar_nodes"])
        for r in result["results"]:
            e, mode, q, ms = r["engine"], r["mode"], r["query"], r["median_ms"]
            fmt = lambda x: "" if x is None else round(x, 4)
            w.writerow([result["date"], result["sf"], e, mode, q, "" if ms is None else ms,
                        min(r["times_ms"], default=""), max(r["times_ms"], default=""), len(r["times_ms"]),
                        fmt(_ratio(ms, med.get(("heap", mode, q)))), fmt(_ratio(ms, med.get(("duckdb", mode, q)))),
                        plan_short(r["plan_summary"]) if e == "columnar" else ""])


def results() -> list[tuple[Path, dict]]:
    """The TPC-H results in bench/results, oldest first."""
    out = []
    for path in RESULTS_DIR.glob("*-tpch-sf*.json"):
        meta = json.loads(path.read_text())
        if meta.get("kind") == "tpch":
            out.append((path, meta))
    return sorted(out, key=lambda pm: (pm[1]["date"], pm[0].stat().st_mtime))


def newest_result(sf: float | None = None) -> dict | None:
    found = [m for _, m in results() if sf is None or m["sf"] == sf]
    return found[-1] if found else None


def render_all() -> list[str]:
    """The TPC-H sections of BENCHMARKS.md: the newest result of each scale factor,
    largest first (like the TSBS sections, one per data size)."""
    newest = {}
    for _, meta in results():
        newest[meta["sf"]] = meta  # oldest first: the last one wins
    out = []
    for sf in sorted(newest, reverse=True):
        out += render(newest[sf])
    return out


def _ms(v) -> str:
    return "timeout" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


def _x(v) -> str:
    return "" if v is None else f"{v:.2f}"


def render(result: dict | None) -> list[str]:
    """The TPC-H section of BENCHMARKS.md (empty without a result)."""
    if not result:
        return []
    sf, load, m = sf_label(result["sf"]), result["load"], result["machine"]
    med = _medians(result)
    # The title without its parameters (the query files list them).
    titles = {q["query"]: q["title"].split(" (")[0] for q in result["queries"]}
    plans = {(r["mode"], r["query"]): r["plan_summary"] for r in result["results"] if r["engine"] == "columnar"}
    out = [f"## TPC-H SF {sf} ({result['date']}, commit `{m['commit']}`)", "",
           "The 22 TPC-H queries (the spec's validation parameters; q15's view as a CTE) on the same "
           "data (`bench/tpch-gen`, dbgen's output) in a heap schema `tpch_heap` and a columnar schema "
           "`tpch_col` (both with primary keys and foreign-key indexes, `VACUUM ANALYZE`d) and in "
           "DuckDB (embedded, its own file, no indexes). Run it with `make bench-tpch` (`SF=` for "
           "another scale factor). Median of "
           f"{result['runs']} run{'s' if result['runs'] != 1 else ''} after 1 warm-up, client-side wall time in ms (query sent, all rows "
           "fetched). Ratios are time ÷ time: below 1 columnar is faster. Columnar plan: the "
           "pgcolumnar nodes in the columnar plan (`Agg` PgColumnarAgg, `Scan` PgColumnarScan; "
           "`pf n`: n of them with a pushed filter, `f n`: n with a `Filter` left above them).", ""]
    if "loadavg_1min" in result:
        start, end = result["loadavg_1min"]
        out += [f"1-minute load average of the machine ({m['nproc']} cores): {start:.1f} when the queries "
                f"started, {end:.1f} when they ended.", ""]
    if result.get("mismatches"):
        out += ["**Results that differ from heap/serial:**", ""]
        out += [f"- {p['query']} on {p['engine']}/{p['mode']}: {p['difference']}" for p in result["mismatches"]]
        out.append("")
    else:
        out += ["Every configuration returned heap/serial's result (PostgreSQL exactly; DuckDB by value, "
                f"its doubles to a relative {FLOAT_RTOL:g}).", ""]
    out += ["### Load and size", "", "| | COPY | indexes | VACUUM ANALYZE | tables | indexes | total |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for engine in ("heap", "columnar"):
        l = load[engine]
        out.append(f"| {engine} `{SCHEMAS[engine]}` | {l['copy_total_s']:.1f} s | {l['index_s']:.1f} s "
                   f"| {l['vacuum_analyze_s']:.1f} s | {mb(l['table_bytes'])} | {mb(l['index_bytes'])} "
                   f"| {mb(l['total_bytes'])} |")
    d = load["duckdb"]
    out += [f"| DuckDB | {d['load_s']:.1f} s | | | | | {mb(d['file_bytes'])} (file) |", ""]
    if load.get("reused"):
        out += ["(Tables reused from an earlier load of the same data: load times are that load's.)", ""]
    parallel_workers = m.get("pg_settings", {}).get("max_parallel_workers_per_gather", "?")
    for mode, desc in (("serial", "`max_parallel_workers_per_gather = 0`; DuckDB `threads = 1`"),
                       ("parallel", f"the cluster's settings, `max_parallel_workers_per_gather = {parallel_workers}`; "
                                    "DuckDB `threads = 2`")):
        names = [q["query"] for q in result["queries"] if (("heap", mode, q["query"]) in med)]
        if not names:
            continue
        out += [f"### {mode.capitalize()} ({desc})", "",
                "| query | heap | columnar | DuckDB | columnar ÷ heap | columnar ÷ DuckDB | columnar plan | |",
                "|---|---:|---:|---:|---:|---:|---|---|"]
        tot = {e: 0.0 for e in ENGINES}
        complete = {e: True for e in ENGINES}
        for q in names:
            h, c, k = (med.get((e, mode, q)) for e in ENGINES)
            for e, v in zip(ENGINES, (h, c, k)):
                if v is None:
                    complete[e] = False
                else:
                    tot[e] += v
            out.append(f"| {q} | {_ms(h)} | {_ms(c)} | {_ms(k)} | {_x(_ratio(c, h))} | {_x(_ratio(c, k))} "
                       f"| {plan_short(plans.get((mode, q)))} | {titles.get(q, '')} |")
        cell = lambda e: f"{tot[e]:,.0f}" + ("" if complete[e] else " (without timeouts)")
        out += [f"| **total** | **{cell('heap')}** | **{cell('columnar')}** | **{cell('duckdb')}** "
                f"| **{_x(_ratio(tot['columnar'], tot['heap']))}** | **{_x(_ratio(tot['columnar'], tot['duckdb']))}** | | |",
                ""]
    out += from_disk.render(result.get("from_disk", []), result.get("from_disk_commit"),
                            {"heap": "heap", "columnar": "columnar"})
    out += tpch_plan_choice.render(result.get("plan_choice"))
    return out
