"""Trickle ingest: writes of a few rows at a time, heap against columnar, and whether
autovacuum merges the small row groups they leave.

The table is issue 28's, `(time timestamptz, host text, v1, v2, v3 float8)` with a btree
on `(host, time DESC)`, once as heap and once `USING columnar`:

1. Throughput: pgbench, 4 clients, `SECONDS` each, of single-row `INSERT`s and of
   100-row `INSERT ... SELECT`s, heap and columnar alternating over two rounds on
   emptied tables, each run starting after a checkpoint with no autovacuum worker left
   running (one merging the previous columnar run's row groups slowed the next heap
   run), with `synchronous_commit = off` for the benchmark's sessions (the
   cluster keeps `fsync` on; this leaves out the commit's wait for the disk, which both
   pay alike).
2. Merging: `TRICKLE_ROWS` single-row transactions (4 clients) into a columnar table with
   autovacuum's default settings, then nothing done by hand. The same rows are copied
   into a second columnar table in one statement (the "bulk-loaded" table). Every 10 s
   for `WATCH_SECONDS` after the last insert: the trickled table's row groups and a
   filtered aggregate on both tables (a new connection each time: its first run, then a
   warm second run).

3. Bulk load: COPY of the TSBS table (`--copy-rows`, 10M rows, the file `make bench`
   loads, through COPY FROM STDIN) into a new heap table and a new columnar table, and
   into a columnar table with `pgcolumnar.enable_parallel_copy = off` (PostgreSQL's
   row-by-row COPY), two rounds.

`bench/run.py --ingest-only` runs it (`make bench-ingest`; `make bench-changes` ends with
it) and writes bench/results/<date>-ingest.json; BENCHMARKS.md shows the newest.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
import time

import psycopg

SECONDS = 15
CLIENTS = 4
TRICKLE_ROWS = 2_000_000
WATCH_SECONDS = 180
QUERY = "SELECT host, count(*), avg(v1) FROM {t} WHERE v2 > 0.9 GROUP BY host"

SINGLE = ("single-row INSERT",
          "\\set h random(1, 100)\n"
          "INSERT INTO :tbl VALUES (now(), 'host_' || :h, random(), random(), random());\n")
BATCH = ("100-row INSERT ... SELECT",
         "\\set h random(1, 100)\n"
         "INSERT INTO :tbl SELECT now() + g * interval '1 ms', 'host_' || :h, random(), random(), random()"
         " FROM generate_series(1, 100) g;\n")


def create(conn, table: str, columnar: bool) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(f"CREATE TABLE {table} (time timestamptz, host text, v1 float8, v2 float8, v3 float8)"
                 + (" USING columnar" if columnar else ""))
    conn.execute(f"CREATE INDEX ON {table} (host, time DESC)")


def pgbench(args, db: str, script: str, table: str, *, seconds: int | None = None,
            transactions: int | None = None) -> float:
    """Runs `script` against `table`; returns its tps."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    os.chmod(f.name, 0o644)
    limit = ["-T", str(seconds)] if seconds else ["-t", str(transactions)]
    cmd = [os.path.join(args.pg_bin, "pgbench"), "-h", args.host, "-p", str(args.port), "-U", "postgres",
           "-n", "-c", str(CLIENTS), "-j", "2", *limit, "-f", f.name, "-D", f"tbl={table}", db]
    env = dict(os.environ, PGOPTIONS="-c synchronous_commit=off")
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    if not m:
        raise RuntimeError(f"pgbench printed no tps:\n{out}")
    return float(m.group(1))


def connect(args, db: str) -> psycopg.Connection:
    return psycopg.connect(host=args.host, port=args.port, user="postgres", dbname=db, autocommit=True,
                           prepare_threshold=None)


def timed(conn, sql: str) -> float:
    t0 = time.perf_counter()
    conn.execute(sql).fetchall()
    return (time.perf_counter() - t0) * 1000


def query_times(args, db: str, table: str) -> tuple[float, float]:
    """The filtered aggregate on a new connection: its first run and a second one (ms)."""
    with connect(args, db) as c:
        return timed(c, QUERY.format(t=table)), timed(c, QUERY.format(t=table))


def row_groups(conn, table: str) -> int:
    return conn.execute("SELECT row_groups FROM pgcolumnar.stats(%s) WHERE attname = 'time'",
                        (table,)).fetchone()[0]


def quiesce(conn) -> None:
    """Waits until no autovacuum worker runs: one still merging the previous run's row
    groups would slow the next run down, whichever table it writes."""
    while conn.execute("SELECT count(*) FROM pg_stat_activity "
                       "WHERE backend_type = 'autovacuum worker'").fetchone()[0]:
        time.sleep(1)
    conn.execute("CHECKPOINT")


def throughput(args, db: str, conn, log) -> list[dict]:
    out = []
    for name, script in (SINGLE, BATCH):
        rounds = []
        for r in range(2):
            tps = {}
            for side, columnar in (("heap", False), ("columnar", True)):
                table = f"ing_{side}"
                create(conn, table, columnar)
                quiesce(conn)
                tps[side] = pgbench(args, db, script, table, seconds=args.ingest_seconds)
            log(f"ingest: {name}, round {r + 1}: heap {tps['heap']:,.0f} tps, columnar {tps['columnar']:,.0f} tps")
            rounds.append(tps)
        out.append({"workload": name, "rounds": rounds,
                    "ratio": statistics.mean(t["columnar"] / t["heap"] for t in rounds)})
    return out


def trickle(args, db: str, conn, log) -> dict:
    rows = args.trickle_rows
    create(conn, "ing_trickle", True)
    log(f"ingest: {rows:,} single-row transactions into ing_trickle ({CLIENTS} clients)")
    t0 = time.perf_counter()
    tps = pgbench(args, db, SINGLE[1], "ing_trickle", transactions=rows // CLIENTS)
    last_insert = time.perf_counter()
    groups_at_end = row_groups(conn, "ing_trickle")
    log(f"ingest: trickle took {last_insert - t0:.0f} s ({tps:,.0f} tps), {groups_at_end:,} row groups")
    conn.execute("DROP TABLE IF EXISTS ing_bulk")
    conn.execute("CREATE TABLE ing_bulk (LIKE ing_trickle) USING columnar")
    conn.execute("INSERT INTO ing_bulk SELECT * FROM ing_trickle ORDER BY time")
    conn.execute("CREATE INDEX ON ing_bulk (host, time DESC)")
    conn.execute("ANALYZE ing_bulk")
    bulk = [query_times(args, db, "ing_bulk") for _ in range(3)]
    bulk_first = statistics.median(b[0] for b in bulk)
    bulk_warm = statistics.median(b[1] for b in bulk)
    log(f"ingest: bulk-loaded copy: {row_groups(conn, 'ing_bulk')} row groups, query {bulk_first:.1f} ms first, "
        f"{bulk_warm:.1f} ms warm")
    timeline = []
    while True:
        since = time.perf_counter() - last_insert
        first, warm = query_times(args, db, "ing_trickle")
        vac = conn.execute("SELECT autovacuum_count, autoanalyze_count FROM pg_stat_user_tables "
                           "WHERE relname = 'ing_trickle'").fetchone()
        point = {"seconds": round(since), "row_groups": row_groups(conn, "ing_trickle"), "first_ms": first,
                 "warm_ms": warm, "autovacuums": vac[0], "autoanalyzes": vac[1]}
        timeline.append(point)
        log(f"ingest: +{point['seconds']} s: {point['row_groups']:,} row groups, query {first:.1f} ms first, "
            f"{warm:.1f} ms warm, {vac[0]} autovacuums")
        if since >= args.watch_seconds:
            break
        time.sleep(max(0.0, 10 - (time.perf_counter() - last_insert - since)))
    return {"rows": rows, "tps": tps, "seconds": last_insert - t0, "row_groups_at_end": groups_at_end,
            "bulk_row_groups": row_groups(conn, "ing_bulk"), "bulk_first_ms": bulk_first,
            "bulk_warm_ms": bulk_warm, "timeline": timeline}


def bulk_copy(args, conn, log, copy) -> dict:
    """COPY of the TSBS file into heap, columnar, and columnar through PostgreSQL's COPY."""
    path, create_table_sql, copy_file = copy
    rounds = []
    for i in range(2):
        r = {}
        for name, columnar, parallel in (("heap", False, True), ("columnar", True, True),
                                         ("columnar_serial", True, False)):
            table = f"copy_{name}"
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(create_table_sql(table) + (" USING columnar" if columnar else ""))
            conn.execute(f"SET pgcolumnar.enable_parallel_copy = {'on' if parallel else 'off'}")
            conn.execute("CHECKPOINT")
            r[name] = copy_file(conn, table, path)
            log(f"COPY round {i + 1}: {name} {r[name]:.1f} s")
        conn.execute("RESET pgcolumnar.enable_parallel_copy")
        rounds.append(r)
        for name in r:
            conn.execute(f"DROP TABLE copy_{name}")
    mean = {k: statistics.mean(r[k] for r in rounds) for k in rounds[0]}
    return {"rows": args.copy_rows, "rounds": rounds, "mean_s": mean,
            "ratio": mean["columnar"] / mean["heap"], "serial_ratio": mean["columnar_serial"] / mean["heap"]}


def run(args, log, copy=None) -> dict:
    db = "pgcolumnar_ingest"
    with psycopg.connect(host=args.host, port=args.port, user="postgres", dbname="postgres",
                         autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db}")
        admin.execute(f"CREATE DATABASE {db}")
    with connect(args, db) as conn:
        conn.execute("CREATE EXTENSION pgcolumnar")
        settings = dict(conn.execute("SELECT name, setting FROM pg_settings WHERE name IN ('fsync', "
                                     "'autovacuum_naptime', 'autovacuum_vacuum_insert_threshold', "
                                     "'autovacuum_vacuum_insert_scale_factor', 'shared_buffers')").fetchall())
        result = {"throughput": throughput(args, db, conn, log), "trickle": trickle(args, db, conn, log),
                  "settings": settings, "clients": CLIENTS, "seconds": args.ingest_seconds}
        if copy:
            result["copy"] = bulk_copy(args, conn, log, copy)
        conn.execute("DROP TABLE ing_heap, ing_columnar")
    return result


def render(result: dict | None) -> list[str]:
    """The section of BENCHMARKS.md."""
    if not result:
        return []
    s = result["settings"]
    out = [f"## Ingest: trickle writes and COPY (`make bench-changes`, {result['date']}, commit `{result['commit']}`)", "",
           "`bench/ingest.py`: the table `(time timestamptz, host text, v1, v2, v3 float8)` with a btree on "
           f"`(host, time DESC)`, heap and columnar; pgbench with {result['clients']} clients "
           f"(`-j 2`), {result['seconds']} s a run, `synchronous_commit = off` in the benchmark's sessions "
           f"(the cluster: `fsync = {s.get('fsync')}`), two rounds alternating heap and columnar on emptied tables, each run after a checkpoint and with no autovacuum worker running.",
           "", "| workload | round | heap tps | columnar tps | columnar / heap |", "|---|---|---:|---:|---:|"]
    for w in result["throughput"]:
        for i, r in enumerate(w["rounds"]):
            out.append(f"| {w['workload']} | {i + 1} | {r['heap']:,.0f} | {r['columnar']:,.0f} | "
                       f"{r['columnar'] / r['heap']:.2f}x |")
        out.append(f"| {w['workload']} | mean | | | **{w['ratio']:.2f}x** |")
    t = result["trickle"]
    out += ["", f"### Merging after {t['rows']:,} single-row transactions", "",
            f"{t['rows']:,} single-row INSERTs ({result['clients']} clients, {t['tps']:,.0f} tps, "
            f"{t['seconds']:.0f} s) left {t['row_groups_at_end']:,} row groups. Then nothing was done by hand; "
            f"autovacuum ran with its defaults (`autovacuum_naptime = {s.get('autovacuum_naptime')} s`, "
            f"`autovacuum_vacuum_insert_threshold = {s.get('autovacuum_vacuum_insert_threshold')}`, "
            f"`autovacuum_vacuum_insert_scale_factor = {s.get('autovacuum_vacuum_insert_scale_factor')}`). "
            f"The same rows copied into a columnar table in one statement: {t['bulk_row_groups']} row groups, "
            f"`{QUERY.format(t='t')}` {t['bulk_first_ms']:.1f} ms on a new connection, {t['bulk_warm_ms']:.1f} ms "
            "warm (medians of 3 connections). An autovacuum that ends with many small row groups left (written "
            "while it merged) is not reported done and comes back on its next round.", "",
            "| seconds after the last insert | row groups | autovacuums reported done | first run | warm | "
            "warm / bulk-loaded |",
            "|---:|---:|---:|---:|---:|---:|"]
    for p in t["timeline"]:
        out.append(f"| {p['seconds']} | {p['row_groups']:,} | {p['autovacuums']} | {p['first_ms']:.1f} ms | "
                   f"{p['warm_ms']:.1f} ms | {p['warm_ms'] / t['bulk_warm_ms']:.2f}x |")
    within = next((p for p in t["timeline"] if p["warm_ms"] <= 1.2 * t["bulk_warm_ms"]), None)
    out += ["", (f"Within 1.2x of the bulk-loaded table {within['seconds']} s after the last insert."
                 if within else "Not within 1.2x of the bulk-loaded table in the time watched."), ""]
    c = result.get("copy")
    if c:
        out += [f"### COPY of the TSBS table ({c['rows']:,} rows)", "",
                "COPY FROM STDIN of the file `make bench` loads, into a new table each time (no index), "
                "two rounds. *columnar*: pgcolumnar's COPY path (a batch of rows at a time, columns parsed "
                "on rayon's threads while the next batch is read); *columnar, serial*: the same table type with "
                "`pgcolumnar.enable_parallel_copy = off` (PostgreSQL's row-by-row COPY).", "",
                "| round | heap | columnar | columnar, serial |", "|---|---:|---:|---:|"]
        for i, r in enumerate(c["rounds"]):
            out.append(f"| {i + 1} | {r['heap']:.1f} s | {r['columnar']:.1f} s | {r['columnar_serial']:.1f} s |")
        m = c["mean_s"]
        out += [f"| mean | {m['heap']:.1f} s | {m['columnar']:.1f} s (**{c['ratio']:.2f}x** heap) | "
                f"{m['columnar_serial']:.1f} s ({c['serial_ratio']:.2f}x) |", ""]
    return out
