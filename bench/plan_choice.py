"""Planner choice quality: does the planner pick the fastest plan for columnar tables?

Each query runs with the plan the planner chooses and with every alternative forced by
settings (ColumnarScan with and without pushed quals, core's sequential scan, index
scan, bitmap scan), serial and with 2 workers. The report gives, per query and mode,
the chosen plan's time over the fastest forced one's (1.00 = the best was chosen).
`bench/run.py` runs it on the tables it loaded; BENCHMARKS.md keeps the table.
"""

from __future__ import annotations

import re
import statistics
import time

# The shapes users have: selective and not, index-friendly, wide and narrow projections.
# `{t}` is the table; times are the TSBS data's (one row per host every 10 s from
# 2024-01-01).
QUERIES = [
    ("point", "one host at one instant (index-friendly)",
     "SELECT * FROM {t} WHERE hostname = 'host_7' AND time = '2024-01-01 10:00:00+00'"),
    ("host-hour", "one host, one hour (q1's filter)",
     "SELECT max(usage_user) FROM {t} WHERE hostname = 'host_1' AND time >= '2024-01-01' "
     "AND time < '2024-01-01 01:00:00+00'"),
    ("host-all", "one host, all time, 3 columns",
     "SELECT count(*), max(usage_user), min(usage_system) FROM {t} WHERE hostname = 'host_9'"),
    ("day", "all hosts, one day, narrow",
     "SELECT count(*), avg(usage_user) FROM {t} WHERE time >= '2024-01-02' AND time < '2024-01-03'"),
    ("q6", "10% of rows, 2 columns (q6)",
     "SELECT count(*), avg(usage_system) FROM {t} WHERE usage_user > 90.0"),
    ("keeps-all", "a filter every row passes",
     "SELECT count(*), avg(usage_system) FROM {t} WHERE usage_user >= 0"),
    ("wide-rare", "0.1% of rows, every column",
     "SELECT * FROM {t} WHERE usage_user > 99.9 AND usage_system < 50"),
    ("or-in", "OR of an IN list and a range",
     "SELECT count(*) FROM {t} WHERE hostname IN ('host_1', 'host_2') OR usage_idle < 0.5"),
]

# Forced alternatives: settings that leave one access path for the table.
OFF_CORE = [("enable_seqscan", "off"), ("enable_indexscan", "off"), ("enable_indexonlyscan", "off"),
            ("enable_bitmapscan", "off")]
ALTERNATIVES = {
    "ColumnarScan": OFF_CORE,
    "ColumnarScan, push-down off": OFF_CORE + [("pgcolumnar.quals_push_down", "off")],
    "Seq Scan": [("pgcolumnar.enable_columnar_scan", "off"), ("enable_indexscan", "off"),
                 ("enable_indexonlyscan", "off"), ("enable_bitmapscan", "off")],
    "Index Scan": [("pgcolumnar.enable_columnar_scan", "off"), ("enable_seqscan", "off"),
                   ("enable_bitmapscan", "off")],
    "Bitmap Scan": [("pgcolumnar.enable_columnar_scan", "off"), ("enable_seqscan", "off"),
                    ("enable_indexscan", "off"), ("enable_indexonlyscan", "off")],
}

SCAN = re.compile(r"Custom Scan \(ColumnarScan\)|Seq Scan|Index Only Scan|Index Scan|Bitmap Heap Scan")


def timed(conn, sql: str, runs: int) -> float:
    """Median milliseconds of `runs` executions after a warm-up."""
    conn.execute(sql).fetchall()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _scan_of(conn, sql: str) -> str:
    for (line,) in conn.execute(f"EXPLAIN (COSTS OFF) {sql}"):
        m = SCAN.search(line)
        if m:
            return m.group(0).replace("Custom Scan (ColumnarScan)", "ColumnarScan")
    return "?"


def _pushed(conn, sql: str) -> bool:
    return any("Pushed Filter" in line for (line,) in conn.execute(f"EXPLAIN (COSTS OFF) {sql}"))


def _with(conn, settings, fn):
    conn.execute("RESET ALL")
    for name, value in settings:
        conn.execute(f"SET {name} = {value}")
    try:
        return fn()
    finally:
        conn.execute("RESET ALL")


def run(conn, tables: list[str], runs: int, log) -> list[dict]:
    """One row per (table, query, mode): the chosen plan, every alternative's time."""
    out = []
    for table in tables:
        for name, what, sql_t in QUERIES:
            sql = sql_t.format(t=table)
            for mode, workers in (("serial", "0"), ("parallel", "2")):
                base = [("max_parallel_workers_per_gather", workers)]
                chosen_scan = _with(conn, base, lambda: _scan_of(conn, sql))
                pushed = _with(conn, base, lambda: _pushed(conn, sql))
                chosen_ms = _with(conn, base, lambda: timed(conn, sql, runs))
                forced = {}
                for alt, settings in ALTERNATIVES.items():
                    scan = _with(conn, base + settings, lambda: _scan_of(conn, sql))
                    # A forced alternative the planner cannot make (no such path) is skipped.
                    wanted = alt.split(",")[0].replace("Bitmap Scan", "Bitmap Heap Scan")
                    if not scan.startswith(wanted):
                        continue
                    forced[alt] = _with(conn, base + settings, lambda: timed(conn, sql, runs))
                best_alt = min(forced, key=forced.get)
                row = {"table": table, "query": name, "what": what, "mode": mode,
                       "chosen": chosen_scan + (" (pushed)" if pushed else ""), "chosen_ms": chosen_ms,
                       "forced": forced, "best": best_alt, "ratio": chosen_ms / forced[best_alt]}
                out.append(row)
                log(f"plan choice {table:10} {name:9} {mode:8} chosen {row['chosen']:22} "
                    f"{chosen_ms:9.1f} ms; best {best_alt} {forced[best_alt]:.1f} ms; ratio {row['ratio']:.2f}")
    return out


def render(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    worst = max(r["ratio"] for r in rows)
    out = ["### Planner choice quality", "",
           "Each query with the plan the planner chose, and with each alternative forced by "
           "settings (median of runs after a warm-up). \"ratio\" is the chosen plan's time over "
           f"the fastest forced one's: 1.00 means the best plan was chosen. Worst ratio: {worst:.2f} "
           "(target: at most 1.5).", "",
           "| table | query | mode | chosen | chosen ms | fastest forced | its ms | ratio |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| `{r['table']}` | {r['query']}: {r['what']} | {r['mode']} | {r['chosen']} "
                   f"| {r['chosen_ms']:,.1f} | {r['best']} | {r['forced'][r['best']]:,.1f} | {r['ratio']:.2f} |")
    out.append("")
    return out
