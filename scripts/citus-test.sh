#!/usr/bin/env bash
# The `citus` test level: pgcolumnar under Citus, a coordinator and two workers on this
# machine, each preloading 'citus,pgcolumnar'. Builds Citus from ../shared/vendor/citus
# first (scripts/citus-build.sh: cached after the first build, about 6 minutes on 2
# cores), then runs pg_regress over tests/citus/sql -> tests/citus/expected on the
# coordinator (results in target/citus), then tests/citus_moves.sh (shard moves and splits
# through logical replication under concurrent writes).
#
# Ports: CITUS_PORT (coordinator, default 54320) and the next two (workers).
# Exit status 77 = skipped (no vendored Citus source or a missing build dependency); the
# reason is printed. scripts/test.sh reports that as SKIPPED, or as a failure under CI.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
PG_BIN=$("$PG_CONFIG" --bindir)
PG_REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
PORT=${CITUS_PORT:-54320}
CLUSTER=scripts/cluster.sh
NODES=(citus-coord citus-w1 citus-w2)
DB=pgcolumnar_citus
OUT=$TOP/target/citus

mkdir -p "$TOP/target"
scripts/citus-build.sh 2>&1 | tee "$TOP/target/citus-build.out"
case ${PIPESTATUS[0]} in
    0) ;;
    3) echo "citus: SKIPPED, Citus cannot be built here: $(head -n 1 "$TOP/target/citus-build.out" | sed 's/^citus-build: //')"
       exit 77 ;;
    *) echo "citus: building Citus failed"; exit 1 ;;
esac

cleanup() { for n in "${NODES[@]}"; do $CLUSTER destroy "$n"; done; }
[ -n "${CITUS_KEEP:-}" ] || trap cleanup EXIT
start=$(date +%s)
for i in 0 1 2; do
    $CLUSTER destroy "${NODES[$i]}"
    $CLUSTER start "${NODES[$i]}" $((PORT + i)) citus || { echo "citus: node ${NODES[$i]} did not start"; exit 1; }
done
echo "citus: coordinator on $PORT, workers on $((PORT + 1)) and $((PORT + 2)) started in $(( $(date +%s) - start )) s"

psql_on() {
    local i=$1; shift
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$($CLUSTER dir "${NODES[$i]}")/socket" -p $((PORT + i)) -U postgres "$@"
}

# Every node gets the database and both extensions (Citus needs its extension in each
# worker's database before the node is added; pgcolumnar must exist wherever shards live).
for i in 0 1 2; do
    psql_on "$i" -d postgres -c "CREATE DATABASE $DB" || exit 1
    psql_on "$i" -d "$DB" -c "CREATE EXTENSION citus" -c "CREATE EXTENSION pgcolumnar" || exit 1
done
psql_on 0 -d "$DB" \
    -c "SELECT citus_set_coordinator_host('127.0.0.1', $PORT)" \
    -c "SELECT citus_add_node('127.0.0.1', $((PORT + 1)))" \
    -c "SELECT citus_add_node('127.0.0.1', $((PORT + 2)))" >/dev/null || exit 1

rm -rf "$OUT"
mkdir -p "$OUT"
tests=$(cd tests/citus/sql && ls ./*.sql | sed -e 's|^\./||' -e 's/\.sql$//')
# shellcheck disable=SC2086
"$PG_REGRESS" --bindir="$PG_BIN" --host="$($CLUSTER dir "${NODES[0]}")/socket" --port="$PORT" \
    --user=postgres --use-existing --dbname="$DB" --inputdir="$TOP/tests/citus" --outputdir="$OUT" $tests
rc=$?
[ $rc -ne 0 ] && [ -f "$OUT/regression.diffs" ] && cat "$OUT/regression.diffs"
# Non-blocking shard moves and splits under concurrent writes.
bash tests/citus_moves.sh "$PORT" "$DB" || rc=1
exit $rc
