"""quals_push_down on heap tables: the seed thread's own cases.

`SELECT count(*) FROM t WHERE i = 50000` (one row matches) and `... WHERE i >= 2` (every
row but one matches) on heap tables `t (i int)` of 1M and 10M rows, each with the
table's `quals_push_down` option on (PushedSeqScan: heapam tests the clause as a scan
key) and reset (core's sequential scan), runs interleaved, serial and with 2 workers.
Targets: at least 40% less time when one row matches, at most 3% more when all do.

`bench/run.py --heap-pushdown-only` runs it alone; `make bench` runs it after the joins.
Tables are named `hpd_<rows>`.
"""

from __future__ import annotations

import statistics
import time

from plan_choice import _with

SIZES = (1_000_000, 10_000_000)
QUERIES = (("one row", "SELECT count(*) FROM {t} WHERE i = 50000"),
           ("all rows", "SELECT count(*) FROM {t} WHERE i >= 2"))
MODES = (("serial", "0"), ("parallel", "2"))


def table(rows: int) -> str:
    return f"hpd_{rows}"


def load(conn, log) -> None:
    for rows in SIZES:
        t = table(rows)
        have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (t,)).fetchone()[0]
        if have and conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == rows:
            continue
        log(f"heap pushdown: loading {t}")
        conn.execute(f"DROP TABLE IF EXISTS {t}")
        conn.execute(f"CREATE TABLE {t} (i int)")
        conn.execute(f"INSERT INTO {t} SELECT g FROM generate_series(1, {rows}) g")
        conn.execute(f"VACUUM ANALYZE {t}")


def _plan(conn, sql: str) -> str:
    plan = "\n".join(line for (line,) in conn.execute(f"EXPLAIN (COSTS OFF) {sql}"))
    for node in ("Parallel Custom Scan (PgColumnarPushedSeqScan)", "Custom Scan (PgColumnarPushedSeqScan)", "Parallel Seq Scan",
                 "Seq Scan"):
        if node in plan:
            return node.replace("Custom Scan (PgColumnarPushedSeqScan)", "PushedSeqScan")
    return "?"


def run(conn, runs: int, log) -> list[dict]:
    """Per table, query and mode: the median of each side, interleaved run by run."""
    load(conn, log)
    out = []
    for rows in SIZES:
        t = table(rows)
        for name, sql_t in QUERIES:
            sql = sql_t.format(t=t)
            for mode, workers in MODES:
                settings = [("max_parallel_workers_per_gather", workers)]
                times = {"core": [], "pushed": []}
                plans = {}
                for side in ("core", "pushed"):
                    conn.execute(f"ALTER TABLE {t} RESET (quals_push_down)" if side == "core"
                                 else f"ALTER TABLE {t} SET (quals_push_down = on)")
                    plans[side] = _with(conn, settings, lambda: _plan(conn, sql))
                for _ in range(runs + 1):
                    for side in ("core", "pushed"):
                        conn.execute(f"ALTER TABLE {t} RESET (quals_push_down)" if side == "core"
                                     else f"ALTER TABLE {t} SET (quals_push_down = on)")

                        def timed():
                            t0 = time.perf_counter()
                            conn.execute(sql).fetchall()
                            return (time.perf_counter() - t0) * 1000

                        times[side].append(_with(conn, settings, timed))
                # The first round warms the cache and is dropped.
                core = statistics.median(times["core"][1:])
                pushed = statistics.median(times["pushed"][1:])
                row = {"rows": rows, "query": name, "sql": sql_t, "mode": mode, "core_ms": core,
                       "pushed_ms": pushed, "ratio": pushed / core, "core_plan": plans["core"],
                       "pushed_plan": plans["pushed"]}
                out.append(row)
                log(f"heap pushdown {t:14} {name:8} {mode:8} core {core:8.1f} ms ({plans['core']}), "
                    f"pushed {pushed:8.1f} ms ({plans['pushed']}): {pushed / core:.3f}")
        conn.execute(f"ALTER TABLE {t} RESET (quals_push_down)")
    return out


def render(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    out = ["### quals_push_down on heap tables", "",
           "The seed thread's cases: `count(*)` over a heap table `t (i int)` with the clause pushed "
           "to heapam as a scan key (PushedSeqScan, the table's `quals_push_down` on) and without "
           "(core's sequential scan), runs interleaved, median after a warm-up. \"time / core\" below "
           "1 means faster; targets: at most 0.60 when one row matches, at most 1.03 when all do.", "",
           "| rows | query | mode | core ms | pushed ms | time / core | plans (core / pushed) |",
           "|---:|---|---|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| {r['rows']:,} | {r['query']}: `{r['sql'].format(t='t')}` | {r['mode']} | {r['core_ms']:,.1f} "
                   f"| {r['pushed_ms']:,.1f} | {r['ratio']:.3f} | {r['core_plan']} / {r['pushed_plan']} |")
    return out + [""]
