"""Planner choice quality on TPC-H: does the planner pick the fastest plan for the
22 queries on the columnar schema?

Each query runs (serial) with the plan the planner chooses, then with each alternative
a setting forces: no nested loops, no hash joins, no merge joins, no index scans, no
join filters, no ColumnarAgg, core's scans instead of ColumnarScan. An alternative
whose plan is the chosen one (or another alternative's) is not timed again; the plans
of a query run in turn, round after round (`plan_choice.timed_in_turn`). The
ratio is the chosen plan's time over the fastest plan's: 1.00 means the best plan was
chosen. `bench/tpch.py` runs it after the timed queries; BENCHMARKS.md keeps the table
beside the TSBS suite's (`plan_choice.py`).
"""

from __future__ import annotations

from plan_choice import CHOSEN, timed, timed_in_turn

ALTERNATIVES = {
    "no nested loop": [("enable_nestloop", "off")],
    "no hash join": [("enable_hashjoin", "off")],
    "no merge join": [("enable_mergejoin", "off")],
    "no index scan": [("enable_indexscan", "off"), ("enable_indexonlyscan", "off"),
                      ("enable_bitmapscan", "off")],
    "no join filter": [("pgcolumnar.enable_join_filter", "off")],
    "no ColumnarAgg": [("pgcolumnar.enable_vector_agg", "off")],
    "core scans": [("pgcolumnar.enable_columnar_scan", "off")],
}


def _settings(conn, schema: str, settings) -> None:
    conn.execute("RESET ALL")
    conn.execute(f"SET search_path = {schema}")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    for name, value in settings:
        conn.execute(f"SET {name} = {value}")


def _plan(conn, sql: str) -> str:
    return "\n".join(line for (line,) in conn.execute(f"EXPLAIN (COSTS OFF) {sql}"))


def run(conn, schema: str, queries, runs: int, log) -> list[dict]:
    """One row per query: the chosen plan's time and each distinct alternative's, all
    timed in turn (`plan_choice.timed_in_turn`) so that a drift of the machine's speed
    reaches them alike."""
    out = []
    base = [("search_path", schema), ("max_parallel_workers_per_gather", "0")]
    for q in queries:
        _settings(conn, schema, [])
        chosen_plan = _plan(conn, q.sql)
        # An alternative slower than this cannot be the fastest: it is stopped there and
        # recorded as at least that slow.
        limit_ms = max(3 * timed(conn, q.sql, 1), 200)
        plans = {CHOSEN: base}
        seen = {chosen_plan}
        for alt, settings in ALTERNATIVES.items():
            _settings(conn, schema, settings)
            plan = _plan(conn, q.sql)
            # One that gives a plan already in the list would only time it again.
            if plan in seen:
                continue
            seen.add(plan)
            plans[alt] = base + settings
        conn.execute("RESET ALL")
        forced = timed_in_turn(conn, q.sql, plans, runs, limit_ms)
        chosen_ms = forced.pop(CHOSEN)
        best = min(forced, key=forced.get) if forced else None
        best_ms = forced[best] if best else chosen_ms
        row = {"query": q.name, "chosen_ms": round(chosen_ms, 3),
               "forced": {k: round(v, 3) for k, v in forced.items()},
               "best": best if best and best_ms < chosen_ms else "chosen",
               "ratio": round(chosen_ms / min(best_ms, chosen_ms), 3)}
        out.append(row)
        log(f"tpch plan choice {q.name:4} chosen {chosen_ms:9.1f} ms; fastest {row['best']} "
            f"{min(best_ms, chosen_ms):.1f} ms; ratio {row['ratio']:.2f}")
    return out


def render(rows: list[dict] | None) -> list[str]:
    if not rows:
        return []
    worst = max(r["ratio"] for r in rows)
    out = ["### Planner choice quality (TPC-H, columnar, serial)", "",
           "Each query with the plan the planner chose, and with each alternative a setting forces "
           "(" + ", ".join(f"`{a}`" for a in ALTERNATIVES) + "; one not timed when its plan is the chosen "
           "one or an earlier alternative's; the plans of a query run in turn, round after round, until "
           "each has the runs asked for and 200 ms of runs; stopped at 3 times the chosen plan's first "
           "time, as it cannot be the fastest then). "
           "\"ratio\" is the chosen plan's time over the fastest plan's: 1.00 means the best plan was "
           f"chosen. Worst ratio: {worst:.2f} (target: at most 1.5).", "",
           "| query | chosen ms | fastest | its ms | ratio | alternatives timed |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        best_ms = r["forced"].get(r["best"], r["chosen_ms"])
        alts = ", ".join(f"{a} {ms:,.0f}" for a, ms in r["forced"].items()) or "none differ"
        out.append(f"| {r['query']} | {r['chosen_ms']:,.1f} | {r['best']} | {best_ms:,.1f} | "
                   f"{r['ratio']:.2f} | {alts} |")
    out.append("")
    return out
