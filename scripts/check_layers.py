#!/usr/bin/env python3
"""The crate's layers, checked from its imports (`make lint` runs this).

- `src/storage/format/` is the pure on-disk format: its code never mentions pgrx or
  pg_sys, and imports nothing of the crate outside `storage::format`.
- `src/exec/filter/` (pushed filters) is pure as well: no pgrx or pg_sys, and it imports
  only itself, `storage::format`, the `storage::read::vector_filter` traits and the
  vector expressions of `exec::expr` (pure too: no pgrx or pg_sys there); the one
  exception, by name, is `exec/filter/operands.rs`, which evaluates the operands'
  values through PostgreSQL (it may use pgrx and any layer below `exec`).
- `storage` imports neither `exec` nor `planner`; `exec` does not import `planner`.
- No planner path file (`src/planner/*_path.rs`) imports another path file.
- Of the fold's internals (`exec::agg`), `planner` imports only `exec::agg::spec`: what
  a ColumnarAgg computes (AggPlan, AggSpec, KeySpec, ...) and what the planner asks of
  it (`AggSpec::bytes_per_group`); kernels, states, grouping stay the executor's.
- `storage` is built of rooms (`STORAGE_ROOMS`, bottom up), each a folder: every file of
  `storage` lives in one, and a room imports only the rooms below it (so no cycle among
  rooms, and `format` and `catalog` stay below the rooms that use them).
- Inside a room, files import each other without cycles (`format`, whose `encoding`
  has its own pure rules, counts as one unit).

A module reference is a path starting with `crate::` or `super::` in code (comments and
string literals are ignored), including the items of grouped `use` statements.
Exits 1 and prints each violation, or prints a one-line summary.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# storage's rooms, bottom up: a room may import the rooms before it in this list.
STORAGE_ROOMS = ["format", "shared", "catalog", "relation", "write", "read", "change", "glue"]
# Rooms whose files count as one unit in the cycle check among files.
WHOLE_ROOMS = ("format",)


def module_path(path):
    """src/storage/format/encoding/vector.rs -> ['storage', 'format', 'encoding', 'vector']"""
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return rel


# Raw strings, strings, char literals and comments, in one pass so that each is seen
# whole (a `//` in a string, a quote in a comment, a string continued by a backslash).
TOKENS = re.compile(
    r"""(?P<raw>r(?P<hashes>\#*)".*?"(?P=hashes))
      | (?P<string>"(?:\\.|[^"\\])*")
      | (?P<char>'(?:\\.|[^'\\\n])')
      | (?P<line>//[^\n]*)
      | (?P<block>/\*.*?\*/)""",
    re.S | re.X,
)


def code_of(text):
    """The text without comments and string literals (so their words are not paths)."""
    return TOKENS.sub(lambda m: '""' if m.group("raw") or m.group("string") else " ", text)


def expand_use(tree):
    """'a::{b, c::{d, e}}' -> ['a::b', 'a::c::d', 'a::c::e']"""
    tree = tree.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree, flags=re.S)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in items:
        if item.strip():
            out += expand_use(prefix + item.strip())
    return out


def references(path):
    """Absolute module paths (lists of names) that the file's code refers to."""
    code = code_of(open(path).read())
    # A file's module path: storage/a.rs is storage::a, storage/format/mod.rs is
    # storage::format; either way each `super` drops one level of it.
    here = module_path(path)
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        paths += expand_use(m.group(1))
    paths += re.findall(r"\b(?:crate|super)(?:::\w+)+", code)
    refs = []
    for p in paths:
        parts = [x.strip() for x in p.split("::") if x.strip()]
        if not parts or parts[0] not in ("crate", "super"):
            continue
        if parts[0] == "crate":
            target = parts[1:]
        else:
            ups = 0
            while parts and parts[0] == "super":
                parts, ups = parts[1:], ups + 1
            target = here[: len(here) - ups] + parts
        refs.append([t for t in target if t not in ("self", "*")])
    return refs


def is_path_file(module):
    """A planner path file: src/planner/*_path.rs (one custom path each)."""
    return len(module) == 2 and module[0] == "planner" and module[1].endswith("_path")


def unit(path):
    """The unit of the cycle check among a room's files: ['storage', 'read', 'fetch', ...]
    -> 'read::fetch'; the whole room for `format`."""
    if path[1] in WHOLE_ROOMS or len(path) < 3:
        return path[1]
    return f"{path[1]}::{path[2]}"


def main():
    problems = []
    storage_edges = {}
    files = []
    for dirpath, _, names in os.walk(ROOT):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".rs")]
    for path in sorted(files):
        here = module_path(path)
        rel = os.path.relpath(path, os.path.join(ROOT, ".."))
        code = code_of(open(path).read())
        refs = references(path)
        if here[:2] == ["storage", "format"]:
            if re.search(r"\b(pgrx|pg_sys)\b", code):
                problems.append(f"{rel}: the format layer mentions pgrx/pg_sys")
            for r in refs:
                if r[:2] != ["storage", "format"]:
                    problems.append(f"{rel}: the format layer imports {'::'.join(r)}")
        if here[:1] == ["storage"]:
            for r in refs:
                if r[:1] in (["exec"], ["planner"]):
                    problems.append(f"{rel}: storage imports {'::'.join(r)}")
            if len(here) == 2 and here[1] not in STORAGE_ROOMS:
                problems.append(f"{rel}: a storage file outside the rooms {', '.join(STORAGE_ROOMS)}")
            if len(here) >= 2 and here[1] in STORAGE_ROOMS:
                room = here[1]
                for r in refs:
                    if r[:1] != ["storage"] or len(r) < 2 or r[1] == room:
                        continue
                    if r[1] in STORAGE_ROOMS and STORAGE_ROOMS.index(r[1]) > STORAGE_ROOMS.index(room):
                        problems.append(f"{rel}: room {room} imports {'::'.join(r)}, from a room above it")
                # Files of one room import each other without cycles.
                src = unit(here)
                for r in refs:
                    if r[:2] == here[:2] and len(r) >= 3 and unit(r) != src:
                        storage_edges.setdefault(src, set()).add(unit(r))
        if here[:2] == ["exec", "filter"] and here != ["exec", "filter", "operands"]:
            # Pushed filters are pure too: kernels and zone verdicts, unit-tested.
            if re.search(r"\b(pgrx|pg_sys)\b", code):
                problems.append(f"{rel}: exec::filter mentions pgrx/pg_sys")
            for r in refs:
                if r[:2] not in (["exec", "filter"], ["exec", "expr"], ["storage", "format"]) and r[:3] != ["storage", "read", "vector_filter"]:
                    problems.append(f"{rel}: exec::filter imports {'::'.join(r)}")
        if here[:2] == ["exec", "expr"] and re.search(r"\b(pgrx|pg_sys)\b", code):
            # Expressions are evaluated by the filter kernels: pure as they are.
            problems.append(f"{rel}: exec::expr mentions pgrx/pg_sys")
        if here[:1] == ["planner"]:
            for r in refs:
                if r[:2] == ["exec", "agg"] and len(r) > 2 and r[2] != "spec":
                    problems.append(f"{rel}: the planner imports exec::agg internals ({'::'.join(r)})")
        if here[:1] == ["exec"]:
            for r in refs:
                if r[:1] == ["planner"]:
                    problems.append(f"{rel}: exec imports {'::'.join(r)}")
        if is_path_file(here):
            # Each path file plans one node; what several share lives beside them
            # (relation, aggregates, custompath, upper_scan), not in another path file.
            for r in refs:
                if is_path_file(r[:2]) and r[1] != here[1]:
                    problems.append(f"{rel}: a path file imports another path file, {'::'.join(r)}")
    # Cycles among the files of a storage room (Tarjan's strongly connected components).
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(storage_edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(storage_edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        ties = [f"{a} -> {b}" for a in comp for b in sorted(storage_edges.get(a, ())) if b in comp]
        problems.append(f"storage files import each other in a cycle: {', '.join(comp)} ({'; '.join(ties)})")
    if problems:
        print("\n".join(dict.fromkeys(problems)))
        sys.exit(1)
    print(f"layers ok: {len(files)} files; storage's {len(STORAGE_ROOMS)} rooms import downward, their files form no cycle")


if __name__ == "__main__":
    main()
