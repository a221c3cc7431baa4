"""Joins and random access: star-schema joins on heap and on columnar tables.

A fact table shaped like TPC-H's lineitem (16 columns) with two dimensions, loaded twice
with the same data: all heap (`jb_*_heap`) and all columnar (`jb_*_col`, btree indexes
on the same columns). Each query runs with the plan the planner chooses and with each
join / access shape forced by settings (nested loop over an index or a bitmap, hash
join, merge join), serial and with 2 workers. It answers two questions:

- does the planner pick the fastest plan for columnar tables, and is each query no
  slower than on heap (targets: chosen within 1.5x of the fastest forced plan);
- what a scattered index fetch costs on columnar against heap, per fetched row
  (target: within 2x of heap), warm and on a fresh connection (cold per-backend caches:
  pgcolumnar keeps opened vectors per backend, `pgcolumnar.fetch_cache_size`).

`bench/run.py --joins-only` runs it alone; `make bench` runs it after the planner choice
suite. Every table is prefixed `jb_`.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import time
from decimal import Decimal

import psycopg

from plan_choice import _with

FLOAT_RTOL = 1e-9
MODES = (("serial", "0"), ("parallel", "2"))
# JIT off for every plan: forcing a shape leaves some node disabled (a dimension without
# a usable index still gets a Seq Scan, priced at disable_cost = 1e10), which pushes the
# plan's cost over jit_above_cost, so only forced plans would pay 50-100 ms of JIT
# compilation per run.
COMMON = [("jit", "off")]
VARIANTS = {"heap": "heap", "columnar": "col"}  # variant -> table suffix
DOC_ROWS = 100_000
PART_ROWS = 65_536
SUPP_ROWS = 10_000


def tables(variant: str) -> dict:
    sfx = VARIANTS[variant]
    return {"f": f"jb_fact_{sfx}", "p": f"jb_part_{sfx}", "s": f"jb_supp_{sfx}", "d": f"jb_doc_{sfx}"}


# --------------------------------------------------------------------------------------
# Schema and data
# --------------------------------------------------------------------------------------

FACT_DDL = """CREATE TABLE {t} (
    id bigint, pk int, sk int, qty int,
    price numeric(15,2), disc numeric(15,2), tax numeric(15,2), extra numeric(15,2),
    flag char(1), status char(1), d1 date, d2 date, d3 date,
    instr char(25), mode char(10), cmt varchar(44))"""

# pk: 65,536 keys hashed over the whole table (rows/65,536 rows each, none adjacent);
# sk: 10,000 keys, hashed independently. Dates spread over 7 years (1992-1998).
FACT_INSERT = """INSERT INTO {t}
SELECT i,
       (hashint4(i::int) & 65535) + 1,
       (hashint4((i * 7)::int) % 10000 + 10000) % 10000 + 1,
       (i % 50)::int + 1,
       ((i * 7919) % 100000 + 90000)::numeric / 100,
       (i % 11)::numeric / 100,
       (i % 9)::numeric / 100,
       ((i * 31) % 10000)::numeric / 100,
       chr(65 + (i % 3)::int),
       chr(70 + (i % 2)::int * 9),
       date '1992-01-01' + ((i * 17) % 2557)::int,
       date '1992-01-01' + ((i * 17) % 2557)::int + (i % 90)::int + 1,
       date '1992-01-01' + ((i * 17) % 2557)::int + (i % 30)::int + 1,
       (ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'])[(i % 4)::int + 1],
       (ARRAY['AIR', 'FOB', 'MAIL', 'RAIL', 'REG AIR', 'SHIP', 'TRUCK'])[(i % 7)::int + 1],
       'cmt ' || md5(i::text)
FROM generate_series(1::bigint, {rows}) AS g(i)"""

PART_DDL = "CREATE TABLE {t} (pk int NOT NULL, region int, brand text)"
PART_INSERT = (f"INSERT INTO {{t}} SELECT g, g % 50, 'Brand#' || (g % 5 + 1) || (g % 25 / 5 + 1) "
               f"FROM generate_series(1, {PART_ROWS}) AS g")
SUPP_DDL = "CREATE TABLE {t} (sk int NOT NULL, nation int, name text)"
SUPP_INSERT = (f"INSERT INTO {{t}} SELECT g, g % 25, 'Supplier#' || lpad(g::text, 9, '0') "
               f"FROM generate_series(1, {SUPP_ROWS}) AS g")

# doc: a ~300-byte jsonb object first, so reaching `b` in a heap tuple means stepping
# over it; a columnar fetch decodes only the columns the plan reads.
DOC_DDL = "CREATE TABLE {t} (doc jsonb, a int, b int, c text)"
DOC_INSERT = f"""INSERT INTO {{t}}
SELECT jsonb_build_object('id', i, 'name', 'doc-' || md5(i::text), 'kind', (ARRAY['a', 'b', 'c'])[i % 3 + 1],
                          'tags', jsonb_build_array(md5((i * 3)::text), md5((i * 5)::text)),
                          'score', i % 997,
                          'text', md5((i * 7)::text) || md5((i * 11)::text) || md5((i * 13)::text)),
       i % 1000,
       hashint4(i) & 1048575,
       'c-' || (i % 5000)
FROM generate_series(1, {DOC_ROWS}) AS g(i)"""


def _timed_sql(conn, sql: str) -> float:
    t0 = time.perf_counter()
    conn.execute(sql)
    return time.perf_counter() - t0


def load(conn, rows: int, log) -> dict:
    """(Re)create the heap and columnar star schemas; return load timings and sizes."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgcolumnar")
    conn.execute("RESET ALL")
    out = {"rows": rows}
    conn.execute("DROP TABLE IF EXISTS jb_keys")
    conn.execute("CREATE TABLE jb_keys (a int)")
    conn.execute("INSERT INTO jb_keys SELECT generate_series(0, 999)")
    conn.execute("VACUUM ANALYZE jb_keys")
    for variant in VARIANTS:
        t = tables(variant)
        columnar = variant == "columnar"
        using = " USING columnar" if columnar else ""
        for name in t.values():
            conn.execute(f"DROP TABLE IF EXISTS {name}")
        m = {}
        conn.execute(FACT_DDL.format(t=t["f"]) + using)
        m["fact_insert_s"] = _timed_sql(conn, FACT_INSERT.format(t=t["f"], rows=rows))
        log(f"joins: {t['f']} {rows:,} rows inserted in {m['fact_insert_s']:.1f} s")
        m["fact_index_s"] = (
            _timed_sql(conn, f"CREATE INDEX {t['f']}_pk_sk ON {t['f']} (pk, sk)")
            + _timed_sql(conn, f"CREATE INDEX {t['f']}_sk ON {t['f']} (sk)"))
        log(f"joins: {t['f']} indexes (pk, sk) and (sk) built in {m['fact_index_s']:.1f} s")
        t0 = time.perf_counter()
        for ddl, insert, name, key in ((PART_DDL, PART_INSERT, t["p"], "pk"),
                                       (SUPP_DDL, SUPP_INSERT, t["s"], "sk")):
            conn.execute(ddl.format(t=name) + using)
            conn.execute(insert.format(t=name))
            conn.execute(f"ALTER TABLE {name} ADD PRIMARY KEY ({key})")
        m["dims_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        conn.execute(DOC_DDL.format(t=t["d"]) + using)
        conn.execute(DOC_INSERT.format(t=t["d"]))
        conn.execute(f"CREATE INDEX {t['d']}_a ON {t['d']} (a)")
        m["doc_s"] = time.perf_counter() - t0
        analyze = "ANALYZE" if columnar else "VACUUM ANALYZE"
        m["analyze_s"] = sum(_timed_sql(conn, f"{analyze} {name}") for name in t.values())
        out[variant] = m
        log(f"joins: {variant} dimensions {m['dims_s']:.1f} s, {t['d']} {m['doc_s']:.1f} s, "
            f"{analyze} {m['analyze_s']:.1f} s")
    merge_sizes(out, sizes(conn))
    return out


def sizes(conn) -> dict:
    """Table and index bytes of every jb_ table, per variant."""
    out = {}
    for variant in VARIANTS:
        out[variant] = {}
        for key, name in tables(variant).items():
            table, index = conn.execute(
                f"SELECT pg_table_size('{name}'), pg_indexes_size('{name}')").fetchone()
            out[variant][f"{key}_table_bytes"] = table
            out[variant][f"{key}_index_bytes"] = index
    return out


def merge_sizes(load_info: dict, measured: dict) -> None:
    for variant, values in measured.items():
        load_info.setdefault(variant, {}).update(values)


def loaded(conn, rows: int) -> bool:
    """Whether every jb_ table exists and both fact tables hold `rows` rows."""
    names = ["jb_keys"] + [n for v in VARIANTS for n in tables(v).values()]
    for name in names:
        if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is None:
            return False
    return all(conn.execute(f"SELECT count(*) FROM {tables(v)['f']}").fetchone()[0] == rows
               for v in VARIANTS)


# --------------------------------------------------------------------------------------
# Queries and plan shapes
# --------------------------------------------------------------------------------------

# (name, what, SQL); {f} fact, {p} part, {s} supp, {d} doc. "doc" marks queries whose
# "fact" side (the table fetched through the index) is the doc table.
QUERIES = [
    ("j1", "1,311 parts (2%), 3 columns",
     "SELECT sum(f.price * (1 - f.disc)) FROM {p} p JOIN {f} f ON f.pk = p.pk "
     "WHERE p.region = 7 AND f.qty < 40 AND f.d1 > date '1993-01-01'"),
    ("j2", "40 parts (0.06%), 6 columns",
     "SELECT count(*), sum(f.qty), sum(f.price), avg(f.disc), max(f.d2), min(f.instr) "
     "FROM {p} p JOIN {f} f ON f.pk = p.pk "
     "WHERE p.region = 7 AND p.pk < 2000 AND f.qty < 40 AND f.d1 > date '1993-01-01'"),
    ("j3", "two dimensions",
     "SELECT count(*), sum(f.price) FROM {p} p JOIN {f} f ON f.pk = p.pk JOIN {s} s ON s.sk = f.sk "
     "WHERE p.region = 7 AND s.nation = 3"),
    ("j4", "correlated max through an index",
     "SELECT sum((SELECT max(f.price) FROM {f} f WHERE f.sk = s.sk)) FROM {s} s WHERE s.nation = 3"),
    ("j5", "correlated max, jsonb first column",
     "SELECT sum((SELECT max(b) FROM {d} d WHERE d.a = k.a)) FROM jb_keys k"),
    # Whole rows (every column, the md5 text among them) of 4 keys, as an application
    # reads its records; hashed to one value so that every plan's rows compare.
    ("j6", "4 parts' rows whole (16 columns)",
     "SELECT count(*), md5(string_agg(f::text, ',' ORDER BY f.id)) FROM {f} f "
     "WHERE f.pk IN (77, 1077, 2077, 3077)"),
]
DOC_QUERIES = {"j5"}
# No join: a correlated subquery per outer row (j4, j5), or one table's rows by key (j6).
SUBPLAN_QUERIES = {"j4", "j5", "j6"}

NL_BASE = [("enable_hashjoin", "off"), ("enable_mergejoin", "off"), ("enable_memoize", "off")]
# Turning scans off also slows the dimension tables' scans (read through their keys
# then), so it is only the fallback when the planner puts the fact table outside.
SCANS_OFF = [("enable_seqscan", "off"), ("pgcolumnar.enable_columnar_scan", "off")]
INDEX_ONLY = [("enable_bitmapscan", "off")]
BITMAP_ONLY = [("enable_indexscan", "off"), ("enable_indexonlyscan", "off")]


def _nested_loop(plan) -> bool:
    return "Nested Loop" in (plan["join"] or "")


def _index_fetch(plan) -> bool:
    return plan["scan"].endswith("Index Scan") and "Index Cond" in plan["scan_details"]


def _bitmap_fetch(plan) -> bool:
    return plan["scan"].endswith("Bitmap Heap Scan") and "Recheck Cond" in plan["scan_details"]


# key -> (title, candidate settings (the first that gives the intended shape is used),
# does the EXPLAIN show the intended shape?)
JOIN_SHAPES = {
    "nl_index": ("Nested Loop + index", [NL_BASE + INDEX_ONLY, NL_BASE + INDEX_ONLY + SCANS_OFF],
                 lambda p: _nested_loop(p) and _index_fetch(p)),
    "nl_bitmap": ("Nested Loop + bitmap", [NL_BASE + BITMAP_ONLY, NL_BASE + BITMAP_ONLY + SCANS_OFF],
                  lambda p: _nested_loop(p) and _bitmap_fetch(p)),
    "hash": ("Hash Join", [[("enable_nestloop", "off"), ("enable_mergejoin", "off")]],
             lambda p: "Hash Join" in (p["join"] or "")),
    "merge": ("Merge Join", [[("enable_nestloop", "off"), ("enable_hashjoin", "off")]],
              lambda p: "Merge Join" in (p["join"] or "")),
}
SUBPLAN_SHAPES = {
    "index": ("Index Scan", [INDEX_ONLY + SCANS_OFF], _index_fetch),
    "bitmap": ("Bitmap Scan", [BITMAP_ONLY + SCANS_OFF], _bitmap_fetch),
    "scan": ("Scan", [[("enable_indexscan", "off"), ("enable_bitmapscan", "off"),
                       ("enable_indexonlyscan", "off")]],
             lambda p: p["scan"].endswith(("Seq Scan", "ColumnarScan"))),
}
RANDOM_ACCESS_SHAPES = ("nl_index", "index")  # the shape whose fetches are counted
SHAPE_TITLES = {k: v[0] for k, v in (*JOIN_SHAPES.items(), *SUBPLAN_SHAPES.items())}


def shapes_for(query: str) -> dict:
    return SUBPLAN_SHAPES if query in SUBPLAN_QUERIES else JOIN_SHAPES


# --------------------------------------------------------------------------------------
# EXPLAIN
# --------------------------------------------------------------------------------------

SCAN_NODE = re.compile(r"^(?P<name>.*?)(?: using \S+)? on (?P<rel>\S+)(?: \S+)?$")


def explain_lines(conn, sql: str, settings) -> list[str]:
    return _with(conn, settings, lambda: [r[0] for r in conn.execute(f"EXPLAIN (COSTS OFF) {sql}")])


def parse_plan(lines: list[str]) -> list[dict]:
    """EXPLAIN text as a list of nodes: name, relation (for scans) and detail lines."""
    nodes = []
    for i, line in enumerate(lines):
        text = line.strip()
        if i == 0 or text.startswith("->"):
            text = text.removeprefix("->").strip()
            m = SCAN_NODE.match(text)
            name, rel = (m.group("name"), m.group("rel")) if m else (text, None)
            name = name.replace("Custom Scan (PgColumnarScan)", "ColumnarScan")
            nodes.append({"name": name, "rel": rel, "details": []})
        elif nodes:
            nodes[-1]["details"].append(text)
    return nodes


def summarize(lines: list[str], fact: str) -> dict:
    """The first join node and the scan node on `fact` (the table fetched by the query);
    `label` is e.g. "Hash Join / ColumnarScan", "Gather + Nested Loop / Index Scan"."""
    nodes = parse_plan(lines)
    join = next((n["name"] for n in nodes
                 if any(j in n["name"] for j in ("Nested Loop", "Hash Join", "Merge Join"))), None)
    scan = next((n for n in nodes if n["rel"] == fact), None)
    memoize = any(n["name"] == "Memoize" for n in nodes)
    plan = {"join": join, "scan": scan["name"] if scan else "?",
            "scan_details": " ".join(scan["details"]) if scan else ""}
    label = plan["scan"] if join is None else f"{join} / {plan['scan']}"
    label = label.replace(" / ", " / Memoize / ", 1) if memoize and join else label
    gather = any(n["name"].startswith("Gather") for n in nodes)
    plan["label"] = f"Gather + {label}" if gather else label
    return plan


def _fact_index_scans(conn, sql: str, settings, fact: str, timing: bool) -> list[dict] | None:
    """The Index Scan nodes on `fact` in EXPLAIN ANALYZE's JSON (None if cancelled)."""
    try:
        (plan,) = _with(conn, settings, lambda: conn.execute(
            f"EXPLAIN (ANALYZE, TIMING {'ON' if timing else 'OFF'}, FORMAT JSON) {sql}").fetchone())
    except psycopg.errors.QueryCanceled:
        return None
    if isinstance(plan, str):
        plan = json.loads(plan)
    found = []

    def walk(node):
        if node.get("Node Type") in ("Index Scan", "Index Only Scan") and node.get("Relation Name") == fact:
            found.append(node)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return found


def fetched_rows(conn, sql: str, settings, fact: str) -> int | None:
    """Rows read from `fact` by its Index Scan nodes, those the filter removed included
    (EXPLAIN ANALYZE's per-loop averages times loops, so off by rounding)."""
    nodes = _fact_index_scans(conn, sql, settings, fact, timing=False)
    if nodes is None:
        return None
    return round(sum((n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0)) * n.get("Actual Loops", 0)
                     for n in nodes))


def index_node_ms(conn, sql: str, settings, fact: str) -> float | None:
    """Time spent in those Index Scan nodes alone (EXPLAIN ANALYZE with timing: per-loop
    average times loops, summed over the processes of a parallel plan). The query's time
    also holds the rest of the plan, e.g. the forced shape's full index scan of a
    dimension, which can outweigh a few fact fetches."""
    nodes = _fact_index_scans(conn, sql, settings, fact, timing=True)
    if not nodes:
        return None
    return sum(n.get("Actual Total Time", 0) * n.get("Actual Loops", 0) for n in nodes)


# --------------------------------------------------------------------------------------
# Timing and checking
# --------------------------------------------------------------------------------------

class ResultMismatch(Exception):
    pass


def _run_once(conn, sql: str):
    """(ms, rows) or (None, None) when statement_timeout cancelled it."""
    t0 = time.perf_counter()
    try:
        rows = conn.execute(sql).fetchall()
    except psycopg.errors.QueryCanceled:
        return None, None
    return (time.perf_counter() - t0) * 1000, rows


def measure(conn, sql: str, settings, runs: int, limit_ms: float | None) -> dict:
    """One warm-up on the long-lived connection (shared buffers then hold what this plan
    reads), then the first run on a fresh connection (cold per-backend caches: catalog,
    pgcolumnar's opened vectors) and `runs` more runs there; their median. With a
    limit, a run cancelled by statement_timeout counts as `limit_ms` and `timed_out`."""
    limit = [("statement_timeout", str(int(limit_ms)))] if limit_ms else []
    out = {"first_ms": limit_ms, "first_timed_out": True, "median_ms": limit_ms,
           "timed_out": True, "times_ms": [], "rows": None}
    try:
        out["rows"] = _with(conn, settings + limit, lambda: conn.execute(sql).fetchall())
    except psycopg.errors.QueryCanceled:
        return out
    fresh = psycopg.connect(conn.info.dsn, autocommit=True, prepare_threshold=None)
    try:
        for name, value in settings + limit:
            fresh.execute(f"SET {name} = {value}")
        first, _ = _run_once(fresh, sql)
        if first is not None:
            out["first_ms"], out["first_timed_out"] = first, False
        for _ in range(max(runs, 1)):
            ms, _ = _run_once(fresh, sql)
            if ms is None:
                return out  # median_ms = limit, timed_out
            out["times_ms"].append(ms)
    finally:
        fresh.close()
    out["median_ms"], out["timed_out"] = statistics.median(out["times_ms"]), False
    return out


# Rows no query read before: j6's whole rows, and one column at a time, of 4 new part
# keys per query. The shared buffers hold both tables (the runs above read them), but the
# rows' vectors are mostly not yet opened by any backend: on a table larger than the
# fetch caches, that is what every scattered fetch of an application costs. The same
# keys for heap and columnar; no key twice in the run.
FRESH_QUERIES = 30
FRESH_WARMUP = 3
FRESH_SETS = [
    ("whole rows (16 columns)", "md5(string_agg(f::text, ',' ORDER BY f.id))"),
    ("no column (visibility only)", "count(*)"),
    ("qty (int, bit-packed)", "sum(f.qty)"),
    ("price (numeric(15,2))", "sum(f.price)"),
    ("instr (char(25), 4 values)", "max(f.instr)"),
    ("cmt (varchar(44), md5 text)", "max(f.cmt)"),
]
FRESH_SETTINGS = [("max_parallel_workers_per_gather", "0"), ("enable_seqscan", "off"),
                  ("enable_bitmapscan", "off"), ("enable_indexonlyscan", "off"),
                  ("pgcolumnar.enable_columnar_scan", "off")] + COMMON


def fresh_fetches(conn, log) -> list[dict]:
    """For each of FRESH_SETS, heap and columnar: the median ms of FRESH_QUERIES queries
    each fetching the rows of 4 part keys never fetched before in the run, on one warm
    connection, and the rows they fetched; raises ResultMismatch when heap and columnar
    differ."""
    need = len(FRESH_SETS) * (FRESH_QUERIES + FRESH_WARMUP) * 4
    keys = iter(random.Random(29).sample(range(1, 65537), need))
    out = []
    for title, expr in FRESH_SETS:
        batches = [[next(keys) for _ in range(4)] for _ in range(FRESH_QUERIES + FRESH_WARMUP)]
        entry = {"columns": title, "expr": expr}
        answers = {}
        for variant in VARIANTS:
            f = tables(variant)["f"]
            c = psycopg.connect(conn.info.dsn, autocommit=True, prepare_threshold=None)
            try:
                for name, value in FRESH_SETTINGS:
                    c.execute(f"SET {name} = {value}")
                times, rows, answers[variant] = [], 0, []
                for n, ks in enumerate(batches):
                    sql = (f"SELECT count(*), {expr} FROM {f} f "
                           f"WHERE f.pk IN ({', '.join(map(str, ks))})")
                    ms, result = _run_once(c, sql)
                    answers[variant].append(result)
                    if n >= FRESH_WARMUP:
                        times.append(ms)
                        rows += result[0][0]
                plan = "\n".join(r[0] for r in c.execute("EXPLAIN " + sql).fetchall())
            finally:
                c.close()
            if "Index Scan" not in plan:
                raise ResultMismatch(f"fresh fetches ({title}) on {f} did not use an index scan:\n{plan}")
            entry[variant] = {"median_ms": statistics.median(times), "rows_per_query": rows / len(times)}
            log(f"joins fresh keys {title:30} {variant:8} {entry[variant]['median_ms']:8.2f} ms "
                f"for {entry[variant]['rows_per_query']:.0f} rows")
        if not all(rows_equal(a, b) for a, b in zip(answers["heap"], answers["columnar"])):
            raise ResultMismatch(f"fresh fetches ({title}): heap and columnar returned different rows")
        out.append(entry)
    return out


def values_equal(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=FLOAT_RTOL, abs_tol=1e-12)
    return a == b  # Decimal, int, str, date: exactly


def rows_equal(a, b) -> bool:
    return len(a) == len(b) and all(len(x) == len(y) and all(map(values_equal, x, y)) for x, y in zip(a, b))


def _json_value(v):
    return str(v) if isinstance(v, Decimal) or not isinstance(v, (int, float, str, type(None))) else v


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------

def run(conn, rows: int, runs: int, log) -> dict:
    """Every query, mode, variant and plan shape; raises ResultMismatch when two plans of
    a query return different rows."""
    out = {"kind": "joins", "rows": rows, "runs": runs,
           "queries": [{"name": n, "what": w, "sql": s} for n, w, s in QUERIES], "results": []}
    for qname, what, sql_t in QUERIES:
        reference = None  # (label, rows)

        def check(label, result_rows):
            nonlocal reference
            if result_rows is None:
                return
            if reference is None:
                reference = (label, result_rows)
            elif not rows_equal(reference[1], result_rows):
                raise ResultMismatch(f"{qname}: {label} returned {result_rows!r}, "
                                     f"{reference[0]} returned {reference[1]!r}\n    {sql_t}")

        for mode, workers in MODES:
            for variant in VARIANTS:
                t = tables(variant)
                sql = sql_t.format(**t)
                fact = t["d"] if qname in DOC_QUERIES else t["f"]
                base = [("max_parallel_workers_per_gather", workers)] + COMMON
                chosen_lines = explain_lines(conn, sql, base)
                chosen = measure(conn, sql, base, runs, None)
                chosen["plan"] = summarize(chosen_lines, fact)["label"]
                check(f"{variant}/{mode}/chosen", chosen.pop("rows"))
                # A forced plan slower than this cannot be the fastest: it is stopped there.
                limit_ms = max(3 * chosen["median_ms"], 2000)
                forced = {}
                for key, (title, candidates, intended) in shapes_for(qname).items():
                    for settings in candidates:
                        lines = explain_lines(conn, sql, base + settings)
                        plan = summarize(lines, fact)
                        if intended(plan):
                            break
                    if not intended(plan):
                        forced[key] = {"skipped": True, "plan": plan["label"]}
                        log(f"joins {qname} {mode:8} {variant:8} {title:20} skipped: the planner made "
                            f"{plan['label']}")
                        continue
                    m = measure(conn, sql, base + settings, runs, limit_ms)
                    check(f"{variant}/{mode}/{title}", m.pop("rows"))
                    m["plan"] = plan["label"]
                    m["same_as_chosen"] = lines == chosen_lines
                    if key in RANDOM_ACCESS_SHAPES and not m["timed_out"]:
                        limited = base + settings + [("statement_timeout", str(int(4 * limit_ms)))]
                        m["fetched_rows"] = fetched_rows(conn, sql, limited, fact)
                        m["index_node_ms"] = index_node_ms(conn, sql, limited, fact)
                    forced[key] = m
                    log(f"joins {qname} {mode:8} {variant:8} {title:20} {fmt_ms(m['median_ms'], m['timed_out']):>9} ms "
                        f"(first {fmt_ms(m['first_ms'], m['first_timed_out'])}) {plan['label']}")
                entry = {"query": qname, "what": what, "mode": mode, "variant": variant,
                         "chosen": chosen, "forced": forced, "limit_ms": limit_ms}
                best, best_ms, best_to, ratio = fastest_forced(entry)
                tail = (f"fastest forced {SHAPE_TITLES[best]} {fmt_ms(best_ms, best_to)} ms; ratio {ratio:.2f}"
                        if best else "no forced plan")
                log(f"joins {qname} {mode:8} {variant:8} chosen {chosen['plan']:34} "
                    f"{fmt_ms(chosen['median_ms']):>9} ms (first {fmt_ms(chosen['first_ms'])}); {tail}")
                out["results"].append(entry)
        if reference is not None:
            out["queries"][[q["name"] for q in out["queries"]].index(qname)]["result"] = \
                [[_json_value(v) for v in r] for r in reference[1]]
        log(f"joins {qname}: every plan returned the same result")
    out["fresh"] = fresh_fetches(conn, log)
    return out


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------

def fmt_ms(ms, timed_out: bool = False) -> str:
    if ms is None:
        return "n/a"
    text = f"{ms:,.1f}" if ms < 100 else f"{ms:,.0f}"
    return f"≥ {text}" if timed_out else text


def fastest_forced(entry: dict) -> tuple[str | None, float | None, bool, float | None]:
    """(fastest forced shape, its ms, whether it timed out, chosen ms over it). A forced
    plan identical to the chosen one is the same plan timed again: the chosen run stands
    for it, so choosing the best plan gives exactly 1.00 rather than timing noise."""
    chosen_ms = entry["chosen"]["median_ms"]
    cands = {k: ((chosen_ms, False) if m.get("same_as_chosen") else (m["median_ms"], m["timed_out"]))
             for k, m in entry["forced"].items() if not m.get("skipped")}
    if not cands:
        return None, None, False, None
    best = min(cands, key=lambda k: cands[k][0])
    ms, timed_out = cands[best]
    return best, ms, timed_out, chosen_ms / ms


def _random_access(entry: dict) -> dict | None:
    for key in RANDOM_ACCESS_SHAPES:
        m = entry["forced"].get(key)
        if m is not None:
            return m
    return None


def _per_row_us(m: dict | None, field: str) -> float | None:
    if not m or m.get("skipped") or not m.get("fetched_rows"):
        return None
    timed_out = m["first_timed_out"] if field == "first_ms" else m["timed_out"]
    return None if timed_out or m.get(field) is None else m[field] * 1000 / m["fetched_rows"]


def _fmt_us(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _fmt_x(a, b) -> str:
    return "n/a" if a is None or b is None else f"{a / b:.2f}×"


def _ms_cell(m: dict) -> str:
    return f"{fmt_ms(m['median_ms'], m['timed_out'])} ({fmt_ms(m['first_ms'], m['first_timed_out'])})"


def render(result: dict) -> list[str]:
    """The "Joins and random access" section of BENCHMARKS.md."""
    if not result or not result.get("results"):
        return []
    commit = result.get("machine", {}).get("commit", "?")
    by = {(e["query"], e["mode"], e["variant"]): e for e in result["results"]}
    queries = [q["name"] for q in result["queries"]]
    out = [f"## Joins and random access ({result['rows']:,} fact rows, {result.get('date', '?')}, "
           f"commit `{commit}`)", "",
           "`bench/joins.py`: a star schema shaped like TPC-H, loaded twice with the same data, all heap "
           "(`jb_*_heap`) and all columnar (`jb_*_col`, same btree indexes). `jb_fact_*`: "
           f"{result['rows']:,} rows of 16 columns like `lineitem`, part key `pk` hashed over 65,536 "
           "values (so a key's rows are scattered over the whole table), supplier key `sk` over "
           "10,000; btrees on `(pk, sk)` and `(sk)`. `jb_part_*` (65,536 rows, `region = pk % 50`) "
           "and `jb_supp_*` (10,000 rows, `nation = sk % 25`) with primary keys. `jb_doc_*`: "
           "100,000 rows of `(doc jsonb, a int, b int, c text)`, a ~300-byte jsonb first, btree "
           "on `(a)`; `jb_keys`: 0..999.", "",
           "Each query runs with the plan the planner chose and with each shape forced by settings "
           "(Nested Loop + index: hash/merge join, memoize and bitmap scans off, and seq scans "
           "and ColumnarScan too when the planner would otherwise scan the fact table outside "
           "the loop; Nested Loop + bitmap: the same with bitmap scans on and index scans off; "
           "Hash Join: nested loop and merge join off; Merge Join: nested loop and hash join "
           "off; for the queries without a join, j4–j6, Index Scan and Bitmap Scan with seq scans "
           "and ColumnarScan off, and Scan with index and bitmap scans off). A "
           "forced shape the planner does not make is skipped; one slower than max(3 × chosen, 2 s) "
           "is stopped there (≥). `jit = off` for every plan (a forced plan's disabled nodes "
           "are priced at 1e10, which would turn JIT compilation on for forced plans only). Times: median of "
           f"{result['runs']} runs, in parentheses the first run on a fresh connection (cold "
           "per-backend caches, shared buffers warm), client-side wall time in ms. Every plan of a "
           "query returned the same result.", "",
           "**Targets**: every chosen plan within 1.5× of the fastest forced plan, and each query "
           "no slower than on heap; scattered index fetches within 2× of heap per fetched row.", "",
           "| query | what | SQL |", "|---|---|---|"]
    out += [f"| {q['name']} | {q['what']} | `{q['sql']}` |" for q in result["queries"]]
    out += [""] + _render_load(result.get("load", {}))
    facts = []
    for mode, workers in MODES:
        if not any(k[1] == mode for k in by):
            continue
        out += [f"### Joins, {mode} (`max_parallel_workers_per_gather = {workers}`)", "",
                "| query | heap chosen | heap ms | columnar chosen | columnar ms | columnar / heap "
                "| fastest forced columnar | its ms | chosen / fastest |",
                "|---|---|---:|---|---:|---:|---|---:|---:|"]
        worst, slower = None, []
        for q in queries:
            h, c = by.get((q, mode, "heap")), by.get((q, mode, "columnar"))
            if not h or not c:
                continue
            best, best_ms, best_to, ratio = fastest_forced(c)
            vs_heap = c["chosen"]["median_ms"] / h["chosen"]["median_ms"]
            if vs_heap > 1:
                slower.append(f"{q} ({vs_heap:.2f}×)")
            if ratio is not None and (worst is None or ratio > worst[1]):
                worst = (q, ratio)
            out.append(f"| {q} | {h['chosen']['plan']} | {_ms_cell(h['chosen'])} | {c['chosen']['plan']} "
                       f"| {_ms_cell(c['chosen'])} | {vs_heap:.2f}× "
                       f"| {SHAPE_TITLES.get(best, 'none') if best else 'none'}"
                       f"{' (the chosen plan)' if best and c['forced'][best].get('same_as_chosen') else ''} "
                       f"| {fmt_ms(best_ms, best_to)} | {'n/a' if ratio is None else f'{ratio:.2f}'} |")
        out.append("")
        text = f"- **{mode}**: "
        text += (f"worst chosen / fastest forced {worst[1]:.2f} ({worst[0]}; target ≤ 1.5)"
                 if worst else "no forced plan")
        text += "; columnar slower than heap on " + (", ".join(slower) if slower else "none") + "."
        facts.append(text)
    out += ["### Random access: index fetches per row", "",
            "The Nested Loop + index shape (Index Scan for j4–j6) of each query: rows read from the fact "
            "(doc) table through the index (those the filter then removed included; EXPLAIN ANALYZE's "
            "per-loop averages times loops; heap and columnar may pick different join orders, hence "
            "different counts), and µs per fetched row = time × 1000 / rows, median of "
            "runs and first run on a fresh connection. The query's time also holds the rest of the "
            "plan (the forced shape scans a dimension through its primary key, which can outweigh a "
            "few fetches), so the last three columns divide the time of the fact (doc) Index Scan "
            "nodes alone, from one EXPLAIN ANALYZE with timing, by the same rows (EXPLAIN rounds a node's "
            "per-loop time to 1 µs: coarse when each loop fetches only a few rows).", "",
            "| query | mode | fetched rows | heap µs/row | heap first | columnar µs/row | columnar first "
            "| columnar / heap | first-run ratio | index node µs/row, heap | columnar | columnar / heap |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    worst_ra = worst_node = None
    for q in queries:
        for mode, _ in MODES:
            h, c = by.get((q, mode, "heap")), by.get((q, mode, "columnar"))
            if not h or not c:
                continue
            hm, cm = _random_access(h), _random_access(c)
            hu, hf = _per_row_us(hm, "median_ms"), _per_row_us(hm, "first_ms")
            cu, cf = _per_row_us(cm, "median_ms"), _per_row_us(cm, "first_ms")
            hr, cr = (hm or {}).get("fetched_rows"), (cm or {}).get("fetched_rows")
            rows = (f"{hr:,}" if hr else "n/a") if hr == cr or not cr else \
                f"{cr:,}" if not hr else f"heap {hr:,}, columnar {cr:,}"
            if cu is not None and hu is not None and (worst_ra is None or cu / hu > worst_ra[2]):
                worst_ra = (q, mode, cu / hu)
            hn, cn = _per_row_us(hm, "index_node_ms"), _per_row_us(cm, "index_node_ms")
            if cn is not None and hn and (worst_node is None or cn / hn > worst_node[2]):
                worst_node = (q, mode, cn / hn)
            out.append(f"| {q} | {mode} | {rows} | {_fmt_us(hu)} | {_fmt_us(hf)} "
                       f"| {_fmt_us(cu)} | {_fmt_us(cf)} | {_fmt_x(cu, hu)} | {_fmt_x(cf, hf)} "
                       f"| {_fmt_us(hn)} | {_fmt_us(cn)} | {_fmt_x(cn, hn)} |")
    out.append("")
    if worst_ra:
        text = (f"- **random access**: worst columnar / heap per fetched row {worst_ra[2]:.2f}× "
                f"({worst_ra[0]}, {worst_ra[1]}) by query time")
        if worst_node:
            text += f", {worst_node[2]:.2f}× ({worst_node[0]}, {worst_node[1]}) by index node time"
        facts.append(text + "; target ≤ 2.")
    out += _render_fresh(result.get("fresh"), facts)
    out += ["### Where the joins stand", ""] + facts + [""]
    out += ["<details><summary>Every plan measured</summary>", "",
            "| query | mode | table | plan shape | plan | ms (first) |", "|---|---|---|---|---|---:|"]
    for q in queries:
        for mode, _ in MODES:
            for variant in VARIANTS:
                e = by.get((q, mode, variant))
                if not e:
                    continue
                out.append(f"| {q} | {mode} | {variant} | chosen | {e['chosen']['plan']} | {_ms_cell(e['chosen'])} |")
                for key, m in e["forced"].items():
                    cell = "skipped (not made)" if m.get("skipped") else _ms_cell(m)
                    out.append(f"| {q} | {mode} | {variant} | {SHAPE_TITLES.get(key, key)} | {m['plan']} | {cell} |")
    out += ["", "</details>", ""]
    return out


def _render_fresh(fresh: list[dict] | None, facts: list[str]) -> list[str]:
    """The "rows fetched for the first time" table; adds its worst ratio to `facts`."""
    if not fresh:
        return []
    out = ["### Random access: rows no query read before", "",
           f"The table above repeats each query, so from its second run a columnar fetch finds "
           f"the rows' vectors opened already. Here each of {FRESH_QUERIES} queries (after "
           f"{FRESH_WARMUP} warm-ups, on one connection, serial Index Scan) reads the rows of 4 part "
           "keys that no query of the run read before, the same keys on both tables: what an "
           "application's scattered reads cost once the table outgrows the fetch caches. The shared "
           "buffers hold both tables. Median ms per query, and µs per fetched row.", "",
           "| columns read | rows per query | heap ms | heap µs/row | columnar ms | columnar µs/row "
           "| columnar / heap |", "|---|---:|---:|---:|---:|---:|---:|"]
    whole = None
    for e in fresh:
        h, c = e["heap"], e["columnar"]
        rows = c["rows_per_query"]
        hu, cu = h["median_ms"] * 1000 / rows if rows else None, c["median_ms"] * 1000 / rows if rows else None
        out.append(f"| {e['columns']} | {rows:,.0f} | {h['median_ms']:.2f} | {_fmt_us(hu)} "
                   f"| {c['median_ms']:.2f} | {_fmt_us(cu)} | {_fmt_x(cu, hu)} |")
        if e is fresh[0] and cu is not None and hu:
            whole = cu / hu
    out.append("")
    if whole is not None:
        facts.append(f"- **rows read for the first time**: whole rows {whole:.2f}× heap per fetched row "
                     "(target ≤ 2).")
    return out


def _render_load(load: dict) -> list[str]:
    if "heap" not in load or "columnar" not in load:
        return []
    mb = lambda n: f"{n / 1e6:,.1f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"

    def secs(m, k):
        return f"{m[k]:.1f} s" if k in m else "n/a"

    out = ["### Load and size", ""]
    if load.get("reused"):
        out += ["The tables were already loaded; load times are from the run that loaded them "
                "(n/a when unknown).", ""]
    out += ["| | heap | columnar | columnar / heap |", "|---|---:|---:|---:|"]
    h, c = load["heap"], load["columnar"]
    for label, key in (("fact INSERT … SELECT generate_series", "fact_insert_s"),
                       ("fact indexes (pk, sk), (sk)", "fact_index_s")):
        ratio = f"{c[key] / h[key]:.2f}×" if key in h and key in c and h[key] else "n/a"
        out.append(f"| {label} | {secs(h, key)} | {secs(c, key)} | {ratio} |")
    for label, key in (("fact", "f"), ("part", "p"), ("supp", "s"), ("doc", "d")):
        if f"{key}_table_bytes" not in h:
            continue
        for what, suffix in (("table", "table_bytes"), ("indexes", "index_bytes")):
            hv, cv = h[f"{key}_{suffix}"], c[f"{key}_{suffix}"]
            out.append(f"| {label} {what} | {mb(hv)} | {mb(cv)} | {cv / hv:.2f}× |")
    return out + [""]
