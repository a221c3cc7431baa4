#!/usr/bin/env bash
# An upgrade as users run it: tables written by an earlier release's library, then the
# current library installed in its place, the server restarted and ALTER EXTENSION
# UPDATE run. The sample tables (tests/sample_tables.sh) and trickle-written rows must
# read the same, refuse nothing but the version check before the update, keep valid
# indexes, take writes and merge.
#
#   tests/library_upgrade.sh COMMIT    (make library-upgrade-test FROM=COMMIT)
#
# Builds COMMIT's library (a git worktree; cached in target/library-upgrade/COMMIT),
# installs it into PG_CONFIG's PostgreSQL for the first half, and puts the current build
# back at the end (scripts/install.sh), also on failure. Not part of `make test`: it
# needs the repository's history and a second build (~5 minutes); run it before a release
# against the previous one (0.2.0: da535f4).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
# shellcheck source=tests/sample_tables.sh
source "$TOP/tests/sample_tables.sh"
FROM=${1:?usage: tests/library_upgrade.sh COMMIT}
commit=$(git -C "$TOP" rev-parse --short=12 "$FROM^{commit}") || exit 2
own_cluster library_upgrade "${LIBRARY_UPGRADE_TEST_PORT:-54325}"
CACHE="$TOP/target/library-upgrade/$commit"
PKGLIB=$("$PG_CONFIG" --pkglibdir)
EXTDIR=$("$PG_CONFIG" --sharedir)/extension

if [ ! -f "$CACHE/stage$PKGLIB/pgcolumnar.so" ]; then
    rm -rf "$CACHE"
    mkdir -p "$CACHE"
    git -C "$TOP" worktree add --detach "$CACHE/src" "$commit" >/dev/null || exit 2
    (cd "$CACHE/src" && CARGO_TARGET_DIR="$CACHE/target" \
        cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$CACHE/stage" >"$CACHE/build.log" 2>&1) ||
        { tail -n 20 "$CACHE/build.log"; exit 2; }
    git -C "$TOP" worktree remove --force "$CACHE/src"
fi

# Installs a stage's files as scripts/install.sh does: beside their destination, renamed.
install_stage() {
    (cd "$1" && find . -type f) | while read -r f; do
        cp "$1/$f" "/${f#./}.new.$$" && mv -f "/${f#./}.new.$$" "/${f#./}"
    done
}
restore() {
    $CLUSTER destroy library_upgrade
    # The earlier release's scripts go (they may name versions this one calls otherwise).
    rm -f "$EXTDIR"/pgcolumnar--*.sql
    bash "$TOP/scripts/install.sh" >/dev/null
}
trap restore EXIT

$CLUSTER destroy library_upgrade
install_stage "$CACHE/stage"
$CLUSTER start library_upgrade "$PORT" test || exit 1
old_version=$(psql_ -c "CREATE EXTENSION pgcolumnar" -c "SELECT pgcolumnar.version()")
sample_tables_create psql_
# Rows of single-row transactions (a row group and a row-number reservation each).
for i in $(seq 1 40); do psql_ -c "INSERT INTO t VALUES (300000 + $i, 'trickle', 1, 1)"; done
before=$(psql_ -c "$SAMPLE_FINGERPRINT")
$CLUSTER stop library_upgrade

bash "$TOP/scripts/install.sh" >/dev/null
$CLUSTER start library_upgrade "$PORT" test || exit 1
current=$(sed -nE 's/^version = "(.*)"/\1/p' "$TOP/Cargo.toml" | head -n 1)
check "library_${old_version}_to_$current" "$current" "$(psql_ -c "SELECT pgcolumnar.version()")"
psql_ -c "ALTER EXTENSION pgcolumnar UPDATE"
check "extension_updated" "$current" \
    "$(psql_ -c "SELECT extversion FROM pg_extension WHERE extname = 'pgcolumnar'")"
check "same_rows" "$before" "$(psql_ -c "$SAMPLE_FINGERPRINT")"
# Before the checks' writes: the 40 trickle rows are merged into the table's groups.
check "trickle_merged" "40|true" \
    "$(psql_ -c "VACUUM t" -c "SELECT count(*) || '|' || (SELECT row_groups < 10 FROM pgcolumnar.stats('t') WHERE attname = 'id')
                             FROM t WHERE host = 'trickle'")"
psql_ -c "DELETE FROM t WHERE host = 'trickle'" -c "VACUUM t"
sample_tables_check upgraded psql_
# Reservations of the old library's transactions are gone (a merge keeps its own until
# the next VACUUM).
check "old_reservations_removed" "0" \
    "$(psql_ -c "VACUUM t" -c "VACUUM t" -c "VACUUM p1" -c "VACUUM p1" -c "SELECT count(*) FROM pgcolumnar.row_reservation")"

echo "library_upgrade from $commit: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
