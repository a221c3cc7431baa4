"""Queries read from disk (part of `bench/run.py`; `--from-disk-only` runs it alone).

The other tables of the benchmark time queries whose data is in shared buffers and the
operating system's cache. A table larger than memory, or one not read for a while, is
read from disk: there what matters is how many bytes a query reads and how well the
reads keep the device busy. Before each timed query the cluster is restarted (shared
buffers emptied) and the operating system's page cache dropped
(`/proc/sys/vm/drop_caches`, which needs root; without it the section is skipped). The
engines take turns, query by query, so that the machine's slower moments fall on all of
them. Each run also records the bytes the backend read from storage (`read_bytes` of
/proc/<pid>/io: its own reads and the read-ahead they started).
"""

from __future__ import annotations

import os
import statistics
import time

import server

# Timed runs per engine and query (each after a restart and a dropped cache).
RUNS = 3

DROP_CACHES = "/proc/sys/vm/drop_caches"


def can_drop_caches() -> bool:
    return os.access(DROP_CACHES, os.W_OK)


def restart_cold(args, conn_factory) -> None:
    """Restarts the cluster the benchmark runs on (with the options it was started with)
    and then drops the operating system's cache."""
    with conn_factory() as c:
        data = c.execute("SHOW data_directory").fetchone()[0]
    server.restart(args, data)
    os.sync()
    with open(DROP_CACHES, "w") as f:
        f.write("3\n")


def backend_read_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


def run(args, conn_factory, apply, queries, configs, log, runs: int = RUNS) -> list[dict]:
    """Per configuration and query: the median time of `runs` runs from disk, and the
    median bytes read. `apply(conn, config)` sets a configuration on a connection; a query
    is run as `q.for_table(config.table)`."""
    if not can_drop_caches():
        log(f"from disk: skipped ({DROP_CACHES} is not writable: run as root)")
        return []
    out = []
    for q in queries:
        times: dict[str, list[float]] = {c.engine: [] for c in configs}
        reads: dict[str, list[int]] = {c.engine: [] for c in configs}
        for _ in range(runs):
            for config in configs:
                restart_cold(args, conn_factory)
                with conn_factory() as conn:
                    apply(conn, config)
                    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
                    before = backend_read_bytes(pid)
                    t0 = time.perf_counter()
                    conn.execute(q.for_table(config.table)).fetchall()
                    times[config.engine].append((time.perf_counter() - t0) * 1000)
                    reads[config.engine].append(backend_read_bytes(pid) - before)
        for config in configs:
            out.append({"engine": config.engine, "query": q.name, "runs": runs,
                        "ms": statistics.median(times[config.engine]),
                        "read_bytes": int(statistics.median(reads[config.engine]))})
        log(f"from disk: {q.name} " + ", ".join(f"{c.engine} {statistics.median(times[c.engine]):,.0f} ms"
                                                 for c in configs))
    return out


def render(rows: list[dict], commit: str | None, titles: dict[str, str]) -> list[str]:
    if not rows:
        return []
    t = {(r["engine"], r["query"]): r for r in rows}
    engines = [e for e in ("heap", "columnar", "columnar-sorted") if any(k[0] == e for k in t)]
    queries = sorted({r["query"] for r in rows}, key=lambda q: int(q[1:]))
    lib = f" (library of `{commit[:12]}`)" if commit else ""
    runs = rows[0]["runs"]
    out = [f"### Read from disk (serial){lib}", "",
           (f"Median of {runs} runs, each" if runs > 1 else "One run of each query,") + " on a new connection after a restart of the server (shared "
           "buffers empty) and with the operating system's page cache dropped: the data is read from the "
           "disk (a virtual disk here, about 1 GB/s). \"MB read\": what the backend read from storage "
           "(`/proc/<pid>/io`), read-ahead included. Ratios to heap.", "",
           "| query | " + " | ".join(f"{titles[e]} ms" for e in engines) + " | "
           + " | ".join(f"{titles[e]} / heap" for e in engines if e != "heap") + " | "
           + " | ".join(f"{titles[e]} MB read" for e in engines) + " |",
           "|---|" + "---:|" * (3 * len(engines) - 1)]
    for q in queries:
        if ("heap", q) not in t:
            continue
        heap = t[("heap", q)]["ms"]
        cells = [f"{t[(e, q)]['ms']:,.0f}" for e in engines]
        cells += [f"{t[(e, q)]['ms'] / heap:.2f}×" for e in engines if e != "heap"]
        cells += [f"{t[(e, q)]['read_bytes'] / 1e6:,.0f}" for e in engines]
        out.append(f"| {q} | " + " | ".join(cells) + " |")
    out.append("")
    return out
