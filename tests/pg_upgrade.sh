#!/usr/bin/env bash
# pg_upgrade of a cluster with columnar tables (15 -> 15, as a major-version upgrade runs
# it), in copy and in link mode: indexes, a primary key referenced by a foreign key,
# CHECK and unique constraints, a partitioned table with columnar and heap partitions,
# table options and deleted rows (folded into masks by VACUUM, and marks not yet folded)
# come through; every table reads the same rows, its indexes are valid, match the table
# (amcheck's heapallindexed) and are used, and it takes writes.
# Runs its own clusters; called by scripts/test.sh (make test).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
# shellcheck source=tests/sample_tables.sh
source "$TOP/tests/sample_tables.sh"
OLD_PORT=${UPGRADE_TEST_PORT:-54318}
NEW_PORT=$((OLD_PORT + 1))
OLD=$($CLUSTER dir upgrade_old)
NEW=$($CLUSTER dir upgrade_new)
old() { DIR=$OLD PORT=$OLD_PORT psql_ "$@"; }
new() { DIR=$NEW PORT=$NEW_PORT psql_ "$@"; }

populate() {
    old -c "CREATE EXTENSION pgcolumnar"
    sample_tables_create old
}

upgrade() {  # upgrade MODE: pg_upgrade from a populated old cluster into a new one
    local mode=$1
    $CLUSTER destroy upgrade_old
    $CLUSTER destroy upgrade_new
    $CLUSTER start upgrade_old "$OLD_PORT" test
    populate
    before=$(old -c "$SAMPLE_FINGERPRINT")
    $CLUSTER stop upgrade_old
    # An initialized, stopped cluster with the same settings (the library preloaded).
    $CLUSTER start upgrade_new "$NEW_PORT" test
    $CLUSTER stop upgrade_new
    local work flag=""
    # Copying is pg_upgrade's default (PostgreSQL 15 has no --copy).
    [ "$mode" = link ] && flag=--link
    work=$(mktemp -d)
    chown postgres "$work"
    if ! (cd "$work" && runuser -u postgres -- "$PG_BIN/pg_upgrade" -b "$PG_BIN" -B "$PG_BIN" \
            -d "$OLD/data" -D "$NEW/data" -p "$OLD_PORT" -P "$NEW_PORT" -s "$work" $flag \
            >"$work/pg_upgrade.out" 2>&1); then
        echo "test pg_upgrade_$mode ... FAILED: pg_upgrade failed"
        tail -n 20 "$work/pg_upgrade.out"
        find "$NEW/data" -name '*.log' -path '*pg_upgrade_output.d*' -exec tail -n 20 {} \; 2>/dev/null
        failures=$((failures + 1))
        rm -rf "$work"
        return
    fi
    rm -rf "$work"
    check "pg_upgrade_$mode" ok ok
    $CLUSTER start upgrade_new "$NEW_PORT" test
    check "rows_options_indexes_$mode" "$before" "$(new -c "$SAMPLE_FINGERPRINT")"
    sample_tables_check "$mode" new
    $CLUSTER destroy upgrade_new
    $CLUSTER destroy upgrade_old
}

trap '$CLUSTER destroy upgrade_old; $CLUSTER destroy upgrade_new' EXIT
upgrade copy
upgrade link

echo "pg_upgrade: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
