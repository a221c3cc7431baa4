#!/usr/bin/env bash
# The `make run` demo: the extension's version, then heap vs columnar on a 1M-row TSBS
# sample (bench/run.py --demo: loads demo_cpu_heap and demo_cpu_col afresh, runs the
# benchmark queries once on each, prints both sizes and an EXPLAIN ANALYZE).
# Called by the Makefile with PG_BIN, RUN_SOCK and RUN_PORT set.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
"$PG_BIN/psql" -X -h "$RUN_SOCK" -p "$RUN_PORT" -U postgres -d postgres -f "$TOP/scripts/demo.sql"
exec "$TOP/bench/run.py" --demo --host "$RUN_SOCK" --port "$RUN_PORT"
