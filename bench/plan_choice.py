"""Planner choice quality: does the planner pick the fastest plan for columnar tables?

Each query runs with the plan the planner chooses and with every alternative forced by
settings (ColumnarAgg, ColumnarScan with and without pushed quals, LastPoint by zone maps
or skip scan, core's sequential scan, index scan, bitmap scan), serial and with 2
workers. The report gives, per query and mode,
the chosen plan's time over the fastest forced one's (1.00 = the best was chosen).
`bench/run.py` runs it on the tables it loaded; BENCHMARKS.md keeps the table.
"""

from __future__ import annotations

import random
import re
import statistics
import time

import psycopg

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
    ("few-groups", "peak per host, 400 groups, whole table (q8's)",
     "SELECT hostname, max(usage_user) FROM {t} GROUP BY 1"),
    ("hour-groups", "hourly average per host over 12 hours (q4's)",
     "SELECT date_trunc('hour', time), hostname, avg(usage_user) FROM {t} "
     "WHERE time >= '2024-01-01' AND time < '2024-01-01 12:00:00+00' GROUP BY 1, 2"),
    ("many-groups", "per host per minute over 6 hours, 144k groups",
     "SELECT date_trunc('minute', time), hostname, max(usage_user), count(*) FROM {t} "
     "WHERE time < '2024-01-01 06:00:00+00' GROUP BY 1, 2"),
    ("last-point", "each host's latest row (q7)",
     "SELECT DISTINCT ON (hostname) hostname, time, usage_user FROM {t} ORDER BY hostname, time DESC"),
    ("latest-time", "each host's latest time",
     "SELECT hostname, max(time) FROM {t} GROUP BY 1"),
    ("wide-expr", "TPC-H q1's shape: expressions in many aggregates, a few groups",
     "SELECT hostname LIKE 'host_1%', sum(usage_user), sum(usage_user * (1 - usage_system / 100)), "
     "sum(usage_user * (1 - usage_system / 100) * (1 + usage_idle / 100)), avg(usage_user), "
     "avg(usage_system), avg(usage_idle), count(*) FROM {t} WHERE time <= '2024-01-02' GROUP BY 1"),
]

# Forced alternatives: settings that leave one access path for the table (and, but for
# ColumnarAgg, core's Agg above it).
OFF_CORE = [("enable_seqscan", "off"), ("enable_indexscan", "off"), ("enable_indexonlyscan", "off"),
            ("enable_bitmapscan", "off")]
NO_FOLD = [("pgcolumnar.enable_vector_agg", "off")]
NO_LAST = [("pgcolumnar.enable_last_point", "off")]
ALTERNATIVES = {
    # LastPoint by zone maps (the skip scan honours enable_indexscan), or by a skip scan
    # of the btree (zone maps need ColumnarScan).
    "LastPoint, zone maps": [("enable_indexscan", "off")],
    "LastPoint, skip scan": [("pgcolumnar.enable_columnar_scan", "off")],
    "ColumnarAgg": OFF_CORE + NO_LAST,
    "ColumnarAgg, serial": OFF_CORE + NO_LAST + [("pgcolumnar.enable_parallel_vector_agg", "off")],
    "ColumnarScan": OFF_CORE + NO_FOLD + NO_LAST,
    "ColumnarScan, push-down off": OFF_CORE + NO_FOLD + NO_LAST + [("pgcolumnar.quals_push_down", "off")],
    "Seq Scan": NO_FOLD + NO_LAST + [("pgcolumnar.enable_columnar_scan", "off"), ("enable_indexscan", "off"),
                                     ("enable_indexonlyscan", "off"), ("enable_bitmapscan", "off")],
    "Index Scan": NO_FOLD + NO_LAST + [("pgcolumnar.enable_columnar_scan", "off"), ("enable_seqscan", "off"),
                                       ("enable_bitmapscan", "off")],
    "Bitmap Scan": NO_FOLD + NO_LAST + [("pgcolumnar.enable_columnar_scan", "off"), ("enable_seqscan", "off"),
                                        ("enable_indexscan", "off"), ("enable_indexonlyscan", "off")],
}

SCAN = re.compile(r"Custom Scan \(PgColumnarAgg\)|Custom Scan \(PgColumnarScan\)|Seq Scan|Index Only Scan|"
                  r"Index Scan|Bitmap Heap Scan")


def timed(conn, sql: str, runs: int) -> float:
    """Median milliseconds of `runs` executions after a warm-up."""
    conn.execute(sql).fetchall()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        conn.execute(sql).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


# Sub-millisecond plans differ by less than the machine's jitter from one call to the
# next: every plan of a query is run in turn, round after round (a drift of the machine's
# speed then reaches all of them alike), until each has `runs` runs and this much time.
MIN_TOTAL_MS = 200.0
MAX_ROUNDS = 60
# A short plan timed right after another plan's long run (an index scan of a million
# rows, say) was timed up to 2.5x slower than the same plan timed after a short one (the
# long run leaves the CPU caches full of its data and its memory returned to the
# system): with a fixed order, the plan that followed the heaviest one (the chosen plan,
# first in the list) lost by that much. So each round runs the plans in its own order
# (shuffled, seeded: the same for every run of the suite), and a plan whose last time
# was below SHORT_MS runs once more, untimed, right before each timed run.
SHORT_MS = 10.0


def timed_in_turn(conn, sql: str, plans: dict[str, list], runs: int, limit_ms: float) -> dict[str, float]:
    """Median milliseconds of each plan (settings) of `sql`, timed in turn after a
    warm-up of each. A plan that runs past `limit_ms` (statement_timeout) is stopped and
    recorded as `limit_ms`, and not run again."""
    samples: dict[str, list[float]] = {name: [] for name in plans}
    stopped: dict[str, float] = {}

    def once(name: str, warm: bool) -> None:
        settings = plans[name] + [("statement_timeout", str(int(limit_ms)))]
        short = not warm and samples[name] and samples[name][-1] < SHORT_MS

        def run() -> float:
            if short:
                _one(conn, sql)
            return _one(conn, sql)

        try:
            t = _with(conn, settings, run)
        except psycopg.errors.QueryCanceled:
            stopped[name] = limit_ms
            return
        if not warm:
            samples[name].append(t)

    for name in plans:
        once(name, warm=True)
    order = random.Random(len(plans))
    for round_ in range(MAX_ROUNDS):
        live = [n for n in plans if n not in stopped]
        if not live:
            break
        if round_ >= runs and all(sum(samples[n]) >= MIN_TOTAL_MS for n in live):
            break
        order.shuffle(live)
        for name in live:
            once(name, warm=False)
    out = {n: statistics.median(v) for n, v in samples.items() if v and n not in stopped}
    out.update(stopped)
    return out


def _one(conn, sql: str) -> float:
    t0 = time.perf_counter()
    conn.execute(sql).fetchall()
    return (time.perf_counter() - t0) * 1000


def _scan_of(conn, sql: str) -> str:
    lines = [line for (line,) in conn.execute(f"EXPLAIN (COSTS OFF) {sql}")]
    if any("Custom Scan (PgColumnarLastPoint)" in line for line in lines):
        return "LastPoint, skip scan" if any("index skip scan" in line for line in lines) else "LastPoint, zone maps"
    for line in lines:
        m = SCAN.search(line)
        if m:
            if m.group(0) == "Custom Scan (PgColumnarAgg)":
                return "ColumnarAgg (parallel)" if "Parallel Custom Scan" in line else "ColumnarAgg"
            return m.group(0).replace("Custom Scan (PgColumnarScan)", "ColumnarScan")
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
                chosen = chosen_scan + (" (pushed)" if pushed else "")
                # A first timing bounds the alternatives: one slower than this cannot be
                # the fastest, so it is stopped there and recorded as at least that slow.
                first_ms = _with(conn, base, lambda: timed(conn, sql, 1))
                limit_ms = max(3 * first_ms, 100)
                plans = {CHOSEN: base}
                for alt, settings in ALTERNATIVES.items():
                    scan = _with(conn, base + settings, lambda: _scan_of(conn, sql))
                    # A forced alternative the planner cannot make (no such path) is skipped,
                    # and so is the one that gives the chosen plan again: timing the same
                    # plan twice would only measure noise.
                    wanted = alt if alt.startswith("LastPoint") else alt.split(",")[0]
                    if not scan.startswith(wanted.replace("Bitmap Scan", "Bitmap Heap Scan")):
                        continue
                    if same_plan(chosen, alt) and _plan_text(conn, base + settings, sql) == _plan_text(
                        conn, base, sql
                    ):
                        continue
                    plans[alt] = base + settings
                times = timed_in_turn(conn, sql, plans, runs, limit_ms)
                chosen_ms = times.pop(CHOSEN)
                row = {"table": table, "query": name, "what": what, "mode": mode,
                       "chosen": chosen, "chosen_ms": chosen_ms, "forced": times}
                best_alt, best_ms, row["ratio"] = ratio(row)
                out.append(row)
                log(f"plan choice {table:10} {name:9} {mode:8} chosen {row['chosen']:22} "
                    f"{chosen_ms:9.1f} ms; best {best_alt} {best_ms:.1f} ms; ratio {row['ratio']:.2f}")
    return out


CHOSEN = "(chosen)"


def _plan_text(conn, settings, sql: str) -> list[str]:
    return _with(conn, settings, lambda: [line for (line,) in conn.execute(f"EXPLAIN (COSTS OFF) {sql}")])


def same_plan(chosen: str, alternative: str) -> bool:
    """Whether forcing `alternative` gives the plan that was chosen."""
    if chosen.startswith("LastPoint"):
        return alternative == chosen
    if chosen.startswith("ColumnarAgg"):
        if "(parallel)" in chosen:
            return alternative == "ColumnarAgg"
        return alternative in ("ColumnarAgg", "ColumnarAgg, serial")
    if chosen.startswith("ColumnarScan"):
        pushed = chosen.endswith("(pushed)")
        return alternative == ("ColumnarScan" if pushed else "ColumnarScan, push-down off")
    return chosen == alternative.replace("Bitmap Scan", "Bitmap Heap Scan")


def ratio(row: dict) -> tuple[str, float, float]:
    """(fastest alternative, its time, chosen time over it). The forced run of the plan
    that was chosen is the same plan timed again: the chosen run stands for it, so a
    best choice is exactly 1.00 rather than timing noise."""
    forced = {alt: (row["chosen_ms"] if same_plan(row["chosen"], alt) else ms)
              for alt, ms in row["forced"].items()}
    forced[row["chosen"]] = row["chosen_ms"]
    best = min(forced, key=forced.get)
    return best, forced[best], row["chosen_ms"] / forced[best]


def render(rows: list[dict], commit: str | None = None) -> list[str]:
    """The suite's section; `commit`: the code it ran on, when not the section's own
    (a `--plan-choice-only` run on tables an earlier run loaded)."""
    if not rows:
        return []
    worst = max(ratio(r)[2] for r in rows)
    heading = "### Planner choice quality" + (f" (run alone later, commit `{commit}`)" if commit else "")
    out = [heading, "",
           "Each query with the plan the planner chose, and with each alternative forced by "
           "settings that gives another plan. The plans of a query run in turn, round after "
           "round, until each has the runs asked for and 200 ms of runs (sub-millisecond plans "
           "get many); the median after a warm-up. An alternative is stopped at 3 times the "
           "chosen plan's first time, as it cannot be the fastest then. \"ratio\" is the chosen plan's "
           "time over the fastest plan's: 1.00 means the best plan was chosen. Worst ratio: "
           f"{worst:.2f} (target: at most 1.5).", "",
           "| table | query | mode | chosen | chosen ms | fastest forced | its ms | ratio |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        best, best_ms, q = ratio(r)
        out.append(f"| `{r['table']}` | {r['query']}: {r['what']} | {r['mode']} | {r['chosen']} "
                   f"| {r['chosen_ms']:,.1f} | {best} | {best_ms:,.1f} | {q:.2f} |")
    out.append("")
    return out
