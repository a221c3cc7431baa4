#!/usr/bin/env python3
"""pgcolumnar under Citus (`make bench-citus`): the TSBS table distributed over two
workers on this machine against the same table on one node.

    bench/citus.py [--rows 10000000] [--hosts 400] [--runs 5] [--shard-counts 2,8,32]
                   [--port 54330] [--keep | --reuse] [--queries q7] [--render-only]

1. Starts three servers with scripts/cluster.sh, profile `citus-bench` (the same settings
   on each; `max_parallel_workers_per_gather = 0` on all): a coordinator on --port and
   two workers on the next two ports, each preloading 'citus,pgcolumnar'. Clusters from
   an earlier run are destroyed first; at the end they are destroyed (--keep leaves them
   running, with the tables loaded).
2. Loads bench/.data/cpu-<rows>-<hosts>.tsv (bench/run.py generates it) into
   - `cpu_local`: a columnar table on the coordinator (the single-node table), and
   - `cpu_dist_s<N>` for each shard count N: a columnar table distributed by hostname
     (`create_distributed_table(..., shard_count => N)`), its shards on the two workers;
   each by COPY through the coordinator, then the btree index on (hostname, time DESC)
   (propagated to the shards) and ANALYZE, as bench/run.py loads `cpu_col`.
3. Runs bench/queries/q*.sql on every table: one warm-up each, then --runs rounds, each
   round running the query once on the local table and once on every distributed
   configuration (each table with Citus's default executor settings and, with more
   shards than workers, also with `citus.max_adaptive_executor_pool_size = --pool-size`),
   so that noise on the shared machine hits all of them; the median of the client wall
   times (query sent until every row fetched) is reported, and the local table's with
   `max_parallel_workers_per_gather = 2` on the coordinator (the same two cores).
4. Checks that every distributed configuration returns the local table's rows (floats to
   a relative 1e-9; q8's ties at the LIMIT as bench/run.py compares them). The local
   columnar table is the reference: `make bench` checks it against heap.
5. CPU time per query of each server (its processes' user + system time from /proc, over
   about a second of repeated runs): the coordinator and the workers for a distributed
   query, the coordinator alone for the local one.
6. EXPLAIN ANALYZE (TIMING OFF) of each query with `citus.explain_all_tasks = on`: the
   coordinator's planning time, the bytes the workers sent, the plan nodes each shard ran,
   each task's time as it ran under Citus; and each task's query run alone on its worker
   (EXPLAIN ANALYZE there): the shard's own work. The same on the local table.
7. Measures the fixed cost of a distributed query: count(*) of an empty distributed
   table (every shard; and one shard, by its key) against an empty local table.
8. Writes bench/results/<date>-citus-<rows>.json, prints the BENCHMARKS.md section and
   rewrites BENCHMARKS.md (bench/run.py renders the section from the newest result, so
   `make bench` keeps it).

--keep leaves the servers running with the tables loaded; --reuse then measures again on
them (load figures from the newest result); --queries q7 looks at some queries only
(printed, nothing written).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_venv import ensure_venv_and_reexec  # beside this script; standard library only

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
CLUSTER = REPO_DIR / "scripts" / "cluster.sh"
NODES = ("bench-citus-coord", "bench-citus-w1", "bench-citus-w2")
PROFILE = "citus-bench"

if __name__ == "__main__":
    ensure_venv_and_reexec(__file__)

sys.path.insert(0, str(BENCH_DIR))
import psycopg  # noqa: E402

import run  # noqa: E402  (bench/run.py: data, table DDL, COPY, timing, result checks)
from citus_report import CPU_SECONDS, EXPLAIN_RUNS, LOCAL, TRIVIAL_RUNS, dist_table, render, render_all, results  # noqa: E402


def log(msg: str) -> None:
    print(f"bench-citus: {msg}", flush=True)


def dist_configs(shard_counts: list[int], pool_size: int | None) -> list[dict]:
    """The distributed configurations measured: each table with Citus's default executor
    settings, and, where a worker holds more than one shard of it, also with at most
    pool_size connections per worker (citus.max_adaptive_executor_pool_size: as many
    tasks at a time on a worker as it has cores)."""
    out = []
    for n in shard_counts:
        out.append({"key": f"s{n}", "shards": n, "settings": {}})
        if pool_size and n > 2:
            out.append({"key": f"s{n}-pool{pool_size}", "shards": n,
                        "settings": {"citus.max_adaptive_executor_pool_size": str(pool_size)}})
    return out


# --------------------------------------------------------------------------------------
# The three servers
# --------------------------------------------------------------------------------------

def cluster(*args) -> str:
    return subprocess.run([str(CLUSTER), *args], check=True, capture_output=True, text=True).stdout.strip()


def socket_dir(i: int) -> str:
    return cluster("dir", NODES[i]) + "/socket"


def connect(i: int, port: int) -> psycopg.Connection:
    # prepare_threshold=None as in bench/run.py: no prepared plan carries over.
    conn = psycopg.connect(host=socket_dir(i), port=port + i, user="postgres", dbname="postgres",
                           autocommit=True, prepare_threshold=None)
    conn.execute("SET TimeZone = 'UTC'")
    return conn


def start_nodes(port: int) -> None:
    for i, name in enumerate(NODES):
        cluster("destroy", name)
        cluster("start", name, str(port + i), PROFILE)
    for i in range(3):
        with connect(i, port) as c:
            c.execute("CREATE EXTENSION citus")
            c.execute("CREATE EXTENSION pgcolumnar")
    with connect(0, port) as c:
        c.execute("SELECT citus_set_coordinator_host('127.0.0.1', %s)", (port,))
        for i in (1, 2):
            c.execute("SELECT citus_add_node('127.0.0.1', %s)", (port + i,))
    log(f"coordinator on {port}, workers on {port + 1} and {port + 2} (profile {PROFILE})")


def destroy_nodes() -> None:
    for name in NODES:
        cluster("destroy", name)


SETTINGS = ("shared_buffers", "work_mem", "maintenance_work_mem", "effective_cache_size",
            "max_parallel_workers_per_gather", "jit", "shared_preload_libraries")


def node_settings(port: int) -> dict:
    """The settings that matter here, read from every node; they must agree."""
    per_node = []
    for i in range(3):
        with connect(i, port) as c:
            per_node.append(dict(c.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
                (list(SETTINGS),)).fetchall()))
    if any(s != per_node[0] for s in per_node):
        sys.exit(f"bench-citus: the nodes' settings differ: {per_node}")
    return per_node[0]


def build_info(conn) -> dict:
    """What ran: the library the servers loaded is identified by its hash, beside the
    commit of this checkout (the library is installed from a build, not from here)."""
    libdir = conn.execute("SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'").fetchone()[0]
    so = Path(libdir) / "pgcolumnar.so"
    return {
        "postgres": conn.execute("SHOW server_version").fetchone()[0],
        "citus": conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'citus'").fetchone()[0],
        "pgcolumnar": conn.execute("SELECT pgcolumnar.version()").fetchone()[0],
        "pgcolumnar_so_sha256": hashlib.sha256(so.read_bytes()).hexdigest()[:16],
        "pgcolumnar_so_mtime": dt.datetime.fromtimestamp(so.stat().st_mtime, dt.timezone.utc)
                                 .strftime("%Y-%m-%d %H:%M UTC"),
        # scripts/install.sh records the commit it built from beside the library.
        "pgcolumnar_built_from": (so.parent / "pgcolumnar.build").read_text().strip()
                                 if (so.parent / "pgcolumnar.build").exists() else None,
        "checkout_commit": run.git_commit(),
    }


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------

def load_table(conn, table: str, data: Path, shards: int | None) -> dict:
    m = {}
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(run.create_table_sql(table) + " USING columnar")
    if shards:
        m["distribute_s"] = run.pg_timed(
            conn, f"SELECT create_distributed_table('{table}', 'hostname', shard_count => {shards})")
    m["copy_s"] = run.pg_copy_file(conn, table, data)
    m["index_s"] = run.pg_timed(conn, f"CREATE INDEX {table}_hostname_time ON {table} (hostname, time DESC)")
    m["analyze_s"] = run.pg_timed(conn, f"ANALYZE {table}")
    if shards:
        # citus_table_size: the shards' pg_table_size summed (pg_table_size on the
        # coordinator's shell table would be 0).
        m["table_bytes"] = conn.execute(f"SELECT citus_table_size('{table}')").fetchone()[0]
        m["total_bytes"] = conn.execute(f"SELECT citus_total_relation_size('{table}')").fetchone()[0]
        m["shard_rows"] = {
            f"{r[0]}": int(r[1]) for r in conn.execute(
                f"SELECT shardid, result FROM run_command_on_shards('{table}', 'SELECT count(*) FROM %s') "
                "ORDER BY shardid").fetchall()}
        m["shard_nodes"] = {
            f"{r[0]}": int(r[1]) for r in conn.execute(
                "SELECT shardid, nodeport FROM citus_shards WHERE table_name = %s::regclass ORDER BY shardid",
                (table,)).fetchall()}
    else:
        m["table_bytes"] = conn.execute(f"SELECT pg_table_size('{table}')").fetchone()[0]
        m["total_bytes"] = conn.execute(f"SELECT pg_total_relation_size('{table}')").fetchone()[0]
    where = f"{shards} shards" if shards else "one node"
    log(f"{table} ({where}): COPY {m['copy_s']:.1f} s, index {m['index_s']:.1f} s, "
        f"ANALYZE {m['analyze_s']:.1f} s, {m['total_bytes'] / 1e6:,.0f} MB")
    return m


def reuse_load(conn, args, shard_counts: list[int]) -> dict:
    """--reuse: the servers of a --keep run, with its tables; their load figures are that
    run's (the newest result of these rows)."""
    for table in [LOCAL] + [dist_table(n) for n in shard_counts]:
        count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        if count != args.rows:
            sys.exit(f"bench-citus: --reuse: {table} has {count:,} rows, not {args.rows:,}")
    previous = [m for m in results() if m["rows"] == args.rows]
    if not previous or any(f"s{n}" not in previous[-1]["load"] for n in shard_counts):
        sys.exit("bench-citus: --reuse: no earlier result with these tables' load figures")
    log(f"reusing the loaded tables; load figures from the result of {previous[-1]['date']}")
    return previous[-1]["load"]


def load_all(conn, data: Path, shard_counts: list[int]) -> dict:
    load = {"local": load_table(conn, LOCAL, data, None)}
    for n in shard_counts:
        load[f"s{n}"] = load_table(conn, dist_table(n), data, n)
    # Empty tables of the same shapes: the fixed cost of a query with nothing to read.
    conn.execute("DROP TABLE IF EXISTS cpu_empty_local")
    conn.execute(run.create_table_sql("cpu_empty_local") + " USING columnar")
    for n in shard_counts:
        t = f"cpu_empty_s{n}"
        conn.execute(f"DROP TABLE IF EXISTS {t}")
        conn.execute(run.create_table_sql(t) + " USING columnar")
        conn.execute(f"SELECT create_distributed_table('{t}', 'hostname', shard_count => {n})")
    return load


# --------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------

TASK_START = re.compile(r"^\s+->\s+Task$")
TASK_NODE = re.compile(r"^\s+Node: host=\S+ port=(\d+)")
TASK_EXEC = re.compile(r"^\s+Execution Time: ([\d.]+) ms")
TASK_PLAN = re.compile(r"^\s+Planning Time: ([\d.]+) ms")
TOP_EXEC = re.compile(r"^Execution Time: ([\d.]+) ms")
TOP_PLAN = re.compile(r"^Planning Time: ([\d.]+) ms")
# pg_size_pretty's text: "16 bytes", "94 kB", "2 MB" (rounded by it).
RECEIVED = re.compile(r"^\s+Tuple data received from nodes: (\d+) (bytes|kB|MB|GB)")
SIZE_UNITS = {"bytes": 1, "kB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
TASK_COUNT = re.compile(r"^\s+Task Count: (\d+)")
SHARD_ID = re.compile(r" (?:on|FROM) (?:public\.)?\w+_(\d{6,})\b")


def parse_explain(lines: list[str]) -> dict:
    """Per task (in shard order): worker port, execution time on the worker, shard id and
    the pgcolumnar / scan nodes it ran; the whole query's execution and planning time."""
    tasks, cur = [], None
    out = {"tasks": tasks, "bytes_received": None, "task_count": None}
    for line in lines:
        if TASK_START.match(line):
            cur = {"port": None, "exec_ms": None, "plan_ms": None, "shard": None, "lines": []}
            tasks.append(cur)
            continue
        if m := TOP_EXEC.match(line):
            out["exec_ms"] = float(m.group(1))
        elif m := TOP_PLAN.match(line):
            out["plan_ms"] = float(m.group(1))
        elif m := RECEIVED.match(line):
            out["bytes_received"] = int(m.group(1)) * SIZE_UNITS[m.group(2)]
        elif m := TASK_COUNT.match(line):
            out["task_count"] = int(m.group(1))
        if cur is None:
            continue
        cur["lines"].append(line)
        if m := TASK_NODE.match(line):
            cur["port"] = int(m.group(1))
        elif m := TASK_EXEC.match(line):
            cur["exec_ms"] = float(m.group(1))
        elif m := TASK_PLAN.match(line):
            cur["plan_ms"] = float(m.group(1))
        elif (m := SHARD_ID.search(line)) and cur["shard"] is None:
            cur["shard"] = m.group(1)
    for t in tasks:
        t["plan"] = run.summarize_plan(t.pop("lines"))
    return out


def explain_analyze(conn, sql: str) -> list[str]:
    # TIMING OFF: no clock reads per row and node; Execution Time is still measured.
    return [r[0] for r in conn.execute(f"EXPLAIN (ANALYZE, TIMING OFF) {sql}")]


def explain_runs(conn, sql: str, distributed: bool, keep_text: bool = False) -> dict:
    """EXPLAIN ANALYZE EXPLAIN_RUNS times after one discarded run: median of each task's
    planning and execution time on its worker (tasks matched by position: shard order),
    of the query's; one plan text kept."""
    explain_analyze(conn, sql)
    runs = [parse_explain(lines) for lines in (explain_analyze(conn, sql) for _ in range(EXPLAIN_RUNS))]
    text = "\n".join(explain_analyze(conn, sql)) if keep_text else None
    first = runs[0]
    out = {
        "exec_ms": statistics.median(r["exec_ms"] for r in runs),
        "plan_ms": statistics.median(r.get("plan_ms", 0.0) for r in runs),
        "bytes_received": first["bytes_received"],
        "task_count": first["task_count"],
    }
    if distributed:
        tasks = []
        for k, t in enumerate(first["tasks"]):
            def med(field):
                v = [r["tasks"][k][field] for r in runs if k < len(r["tasks"]) and r["tasks"][k][field] is not None]
                return statistics.median(v) if v else None
            tasks.append({"shard": t["shard"], "port": t["port"], "plan": t["plan"],
                          "exec_ms": med("exec_ms"), "plan_ms": med("plan_ms")})
        out["tasks"] = tasks
    if text:
        out["explain"] = text
    return out


TASK_QUERY = re.compile(r"^\s+Query: (.*)$")


def tasks_alone(coord, workers: dict, sql: str) -> list[dict]:
    """Each task of the distributed query run by itself on its worker (EXPLAIN ANALYZE,
    TIMING OFF; one discarded run, median of EXPLAIN_RUNS): the shard's work without the
    other tasks competing for the two cores, as on a worker with a core per task. The
    task queries are the ones Citus sends (EXPLAIN VERBOSE with explain_all_tasks)."""
    tasks, query = [], None
    for (line,) in coord.execute(f"EXPLAIN (VERBOSE, COSTS OFF) {sql}"):
        if m := TASK_QUERY.match(line):
            query = m.group(1)
        elif (m := TASK_NODE.match(line)) and query:
            tasks.append({"port": int(m.group(1)), "query": query})
            query = None
    for t in tasks:
        conn = workers[t["port"]]
        explain_analyze(conn, t["query"])
        runs = [parse_explain(explain_analyze(conn, t["query"])) for _ in range(EXPLAIN_RUNS)]
        t["plan_ms"] = statistics.median(r["plan_ms"] for r in runs)
        t["exec_ms"] = statistics.median(r["exec_ms"] for r in runs)
        t["shard"] = m.group(1) if (m := SHARD_ID.search(t["query"] + " ")) else None
    return tasks


# CPU time: the machine is shared (the two workers with each other, with the coordinator
# and with other work), so wall times carry the load of the moment; CPU time per query
# does not, and says what the distributed query costs against the local one.
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cluster_cpu_ticks(i: int) -> int:
    """User + system CPU ticks of node i's server: its postmaster, the postmaster's
    children alive now, and (cutime + cstime) the ones that exited, such as connections
    Citus closed after a query."""
    data = Path(cluster("dir", NODES[i])) / "data"
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        elif ppid == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total


def cpu_per_query(conn, sql: str, wall_ms: float) -> dict:
    """CPU ms per execution on the coordinator's server and on the workers' servers."""
    runs = max(3, int(CPU_SECONDS * 1000 / max(wall_ms, 0.05)))
    before = [cluster_cpu_ticks(i) for i in range(3)]
    t0 = time.perf_counter()
    for _ in range(runs):
        conn.execute(sql).fetchall()
    wall = (time.perf_counter() - t0) * 1000 / runs
    after = [cluster_cpu_ticks(i) for i in range(3)]
    ms = [(a - b) * 1000 / CLK_TCK / runs for a, b in zip(after, before)]
    return {"runs": runs, "wall_ms": wall, "coordinator_ms": ms[0], "workers_ms": ms[1] + ms[2]}


def timed(conn, sql: str) -> tuple[float, list]:
    t0 = time.perf_counter()
    rows = conn.execute(sql).fetchall()
    return (time.perf_counter() - t0) * 1000, rows


def same_rows(q: run.Query, ref, got) -> bool:
    a, b = run.canonical_rows(q, ref), run.canonical_rows(q, got)
    if re.search(r"\bLIMIT\b", q.sql, re.I):
        return run.top_n_with_ties_equal(a, b)
    return run.rows_equal(a, b)


def measure_queries(conns: dict, queries, configs: list[dict], runs: int) -> tuple[list[dict], list[str]]:
    """conns: 'serial' and 'parallel' (the local table), one per distributed configuration
    (by its key); all on the coordinator."""
    targets = [("local", LOCAL, conns["serial"])] + \
              [(c["key"], dist_table(c["shards"]), conns[c["key"]]) for c in configs]
    results, problems = [], []
    for q in queries:
        r = {"query": q.name, "sql": q.sql, "times_ms": {}, "explain": {}}
        rows = {}
        for key, table, conn in targets:  # warm-up; its rows are the ones compared
            _, rows[key] = timed(conn, q.for_table(table))
            r["times_ms"][key] = []
        for key, _, _ in targets[1:]:
            if not same_rows(q, rows["local"], rows[key]):
                problems.append(f"{q.name}: {key} returns {len(rows[key])} rows, "
                                f"not the local table's {len(rows['local'])} (or other values)\n    {q.sql}")
        r["rows"] = len(rows["local"])
        # Local parallel: the same two cores the workers share, in one query.
        _ = timed(conns["parallel"], q.for_table(LOCAL))
        r["times_ms"]["local_parallel"] = []
        for _ in range(runs):
            for key, table, conn in targets:
                r["times_ms"][key].append(timed(conn, q.for_table(table))[0])
            r["times_ms"]["local_parallel"].append(timed(conns["parallel"], q.for_table(LOCAL))[0])
        r["explain"]["local"] = explain_runs(conns["serial"], q.for_table(LOCAL), False)
        for i, (key, table, conn) in enumerate(targets[1:]):
            # One plan text per query (the first configuration's: the fewest shards), for
            # the docs; 32 tasks' plans for every query would bloat the result file.
            r["explain"][key] = explain_runs(conn, q.for_table(table), True, keep_text=i == 0)
        r["alone"] = {}
        for c in configs:  # per table: the executor settings do not change a task's work
            if f"s{c['shards']}" not in r["alone"]:
                r["alone"][f"s{c['shards']}"] = tasks_alone(conns[c["key"]], conns["workers"],
                                                            q.for_table(dist_table(c["shards"])))
        med = {k: statistics.median(v) for k, v in r["times_ms"].items()}
        r["cpu"] = {key: cpu_per_query(conn, q.for_table(table), med[key]) for key, table, conn in targets}
        log(f"{q.name:3} local {med['local']:8.1f} ms" + "".join(
            f"   {k} {med[k]:8.1f} ms ({med[k] / med['local']:.2f}x)" for k, _, _ in targets[1:])
            + f"   local parallel {med['local_parallel']:8.1f} ms")
        results.append(r)
    return results, problems


def measure_fixed_cost(conns: dict, configs: list[dict]) -> dict:
    """Client wall time of queries that read nothing: what every query pays."""
    def med(conn, sql):
        timed(conn, sql)
        return statistics.median(timed(conn, sql)[0] for _ in range(TRIVIAL_RUNS))
    out = {"select1_ms": med(conns["serial"], "SELECT 1"),
           "local_count_ms": med(conns["serial"], "SELECT count(*) FROM cpu_empty_local")}
    for c in configs:
        t, conn = f"cpu_empty_s{c['shards']}", conns[c["key"]]
        out[c["key"]] = {"all_shards_ms": med(conn, f"SELECT count(*) FROM {t}"),
                         "one_shard_ms": med(conn, f"SELECT count(*) FROM {t} WHERE hostname = 'host_1'")}
    log("fixed cost: " + json.dumps(out))
    return out


def run_bench(args) -> int:
    shard_counts = [int(s) for s in args.shard_counts.split(",")]
    configs = dist_configs(shard_counts, args.pool_size)
    queries = [q for q in run.load_queries() if not args.queries or q.name in args.queries.split(",")]
    data = run.generate_data(args.rows, args.hosts)
    load_before = os.getloadavg()
    if not args.reuse:
        start_nodes(args.port)
    try:
        coord = connect(0, args.port)
        info = build_info(coord)
        settings = node_settings(args.port)
        citus_settings = dict(coord.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('citus.max_adaptive_executor_pool_size', "
            "'citus.max_cached_conns_per_worker', 'citus.enable_binary_protocol', "
            "'citus.executor_slow_start_interval')").fetchall())
        log(f"loading {args.rows:,} rows: {LOCAL} (one node) and " +
            ", ".join(dist_table(n) for n in shard_counts) + " (distributed by hostname)")
        load = reuse_load(coord, args, shard_counts) if args.reuse else load_all(coord, data, shard_counts)
        conns = {"serial": coord, "parallel": connect(0, args.port),
                 "workers": {args.port + i: connect(i, args.port) for i in (1, 2)}}
        # On the coordinator only, for this session: the workers keep their serial plans.
        conns["parallel"].execute("SET max_parallel_workers_per_gather = 2")
        for c in configs:
            conn = conns[c["key"]] = connect(0, args.port)
            for name, value in c["settings"].items():
                conn.execute(f"SET {name} = {value}")
            conn.execute("SET citus.explain_all_tasks = on")
            conn.execute("SET citus.explain_analyze_sort_method = 'taskId'")
        fixed = measure_fixed_cost(conns, configs)
        results, problems = measure_queries(conns, queries, configs, args.runs)
    finally:
        if not (args.keep or args.reuse):
            destroy_nodes()
    for p in problems:
        print("bench-citus: RESULTS DIFFER: " + p, file=sys.stderr)
    if problems:
        return 1
    date = dt.date.today().isoformat()
    partial = bool(args.queries)
    result = {
        "kind": "citus", "date": date, "rows": args.rows, "hosts": args.hosts, "runs": args.runs,
        "shard_counts": shard_counts, "configs": configs, "build": info, "settings": settings,
        "citus_settings": citus_settings,
        # The machine is shared: its load average (1, 5, 15 min) before and after the run.
        "machine": {"nproc": os.cpu_count(), "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        # --reuse: measured on the tables of an earlier --keep run, whose load figures these are.
        "load_reused": args.reuse, "load": load, "fixed_cost": fixed, "queries": results,
    }
    if partial:  # --queries: a look at some queries, not a result for BENCHMARKS.md
        print("\n".join(render(result)))
        return 0
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{date}-citus-{args.rows}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {path.relative_to(REPO_DIR)}")
    print("\n".join(render(result)))
    run.render_benchmarks_md()
    return 0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--hosts", type=int, default=400)
    p.add_argument("--runs", type=int, default=5, help="interleaved timed rounds after one warm-up (default 5)")
    p.add_argument("--shard-counts", default="2,8,32",
                   help="distributed tables to load, one per shard count (default 2,8,32)")
    p.add_argument("--pool-size", type=int, default=1,
                   help="also run each table with more shards than workers with at most this many "
                        "connections per worker (citus.max_adaptive_executor_pool_size; default 1: "
                        "the two workers share two cores; 0: not)")
    p.add_argument("--port", type=int, default=int(os.environ.get("CITUS_BENCH_PORT", 54330)),
                   help="the coordinator's port; the workers take the next two (default 54330)")
    p.add_argument("--keep", action="store_true", help="leave the three servers running at the end")
    p.add_argument("--reuse", action="store_true",
                   help="measure again on the servers and tables a --keep run left (no restart, no load)")
    p.add_argument("--queries", default=None,
                   help="only these queries, e.g. q7 (printed only: no result file, BENCHMARKS.md unchanged)")
    p.add_argument("--render-only", action="store_true", help="print the newest result's section")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    if args.render_only:
        print("\n".join(render_all()))
        return 0
    return run_bench(args)


if __name__ == "__main__":
    sys.exit(main())
