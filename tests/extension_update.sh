#!/usr/bin/env bash
# ALTER EXTENSION pgcolumnar UPDATE with data in place. For every released version
# frozen in sql/ (pgcolumnar--X.sql): install it, fill the sample tables
# (tests/sample_tables.sh) and a non-superuser's table, update to the library's version;
# the update must leave the same SQL objects as a new install (tests/extension_members.sql),
# every table the same rows, its indexes valid and used, and take writes. Then the
# pre-release 0.1.0 installs: those with 0.2.0's or 0.3.0's objects update, others are
# refused, and nothing reads or writes a columnar table under a version the library does
# not support (older: update first; newer: a newer library) unless the check is off.
# Runs its own cluster; called by scripts/test.sh (make test, upgrade-test level).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
# shellcheck source=tests/sample_tables.sh
source "$TOP/tests/sample_tables.sh"
own_cluster ext_update "${EXTENSION_UPDATE_TEST_PORT:-54324}"
DB=postgres
db() { psql_ -d "$DB" "$@"; }
as_alice() { psql_ -d "$DB" -U alice "$@"; }
members() { psql_ -d "$1" -f "$TOP/tests/extension_members.sql"; }
version_of() { psql_ -d "$1" -c "SELECT extversion FROM pg_extension WHERE extname = 'pgcolumnar'"; }
# same_objects NAME DB: DB has the objects of the new install (the difference printed if not).
same_objects() {
    local got
    got=$(members "$2")
    if [ "$got" = "$fresh" ]; then
        check "$1" "same" "same"
    else
        check "$1" "the objects of a new install" "other objects"
        diff <(echo "$fresh") <(echo "$got")
    fi
}
sqlstate() { "$@" -v VERBOSITY=sqlstate 2>&1 | grep -oE '\b[0-9A-Z]{5}\b' | tail -n 1; }

trap '$CLUSTER destroy ext_update' EXIT
$CLUSTER destroy ext_update
$CLUSTER start ext_update "$PORT" test
current=$(sed -nE 's/^version = "(.*)"/\1/p' "$TOP/Cargo.toml" | head -n 1)
psql_ -c "CREATE ROLE alice LOGIN" -c "CREATE DATABASE fresh"
psql_ -d fresh -c "CREATE EXTENSION pgcolumnar"
check "new_install_version" "$current" "$(version_of fresh)"
fresh=$(members fresh)

# Updating from each released version, with data in place.
released=$(cd "$TOP/sql" && ls pgcolumnar--*.sql | grep -vE '^pgcolumnar--.*--' |
           sed -E 's/^pgcolumnar--(.*)\.sql$/\1/' | sort -V)
[ -n "$released" ] || check "released_versions_found" "some" "none"
for from in $released; do
    DB=from_$(echo "$from" | tr . _)
    psql_ -c "CREATE DATABASE $DB" -c "GRANT CREATE ON DATABASE $DB TO alice"
    db -c "CREATE EXTENSION pgcolumnar VERSION '$from'"
    check "install_$from" "$from" "$(version_of "$DB")"
    # The library reads and writes tables under the older objects.
    sample_tables_create db
    as_alice -c "CREATE SCHEMA alice" \
             -c "CREATE TABLE alice.readings (id int PRIMARY KEY, v numeric) USING columnar" \
             -c "INSERT INTO alice.readings SELECT g, g / 7.0 FROM generate_series(1, 5000) g" \
             -c "DELETE FROM alice.readings WHERE id % 5 = 0"
    before=$(db -c "$SAMPLE_FINGERPRINT" -c "SELECT count(*), sum(v) FROM alice.readings")
    db -c "ALTER EXTENSION pgcolumnar UPDATE"
    check "update_${from}_version" "$current" "$(version_of "$DB")"
    same_objects "update_${from}_same_objects_as_new" "$DB"
    check "update_${from}_rows" "$before" \
        "$(db -c "$SAMPLE_FINGERPRINT" -c "SELECT count(*), sum(v) FROM alice.readings")"
    sample_tables_check "update_$from" db
    # What the versions after 0.2.0 added works, for the owner of a table: she sees
    # her table alone (its schema is on her search_path).
    check "update_${from}_table_stats" "readings|4000|1000" \
        "$(as_alice -c "SELECT relation, rows - deleted_rows, deleted_rows FROM pgcolumnar.table_stats")"
    check "update_${from}_writes_as_owner" "4001" \
        "$(as_alice -c "INSERT INTO alice.readings VALUES (5001, 1)" -c "VACUUM alice.readings" \
                    -c "SELECT count(*) FROM alice.readings")"
done

# The comparison of objects sees a difference an update script could leave.
psql_ -d fresh -c "ALTER FUNCTION pgcolumnar.table_summary(oid) COST 5"
check "members_see_a_difference" "differ" "$([ "$fresh" = "$(members fresh)" ] && echo same || echo differ)"
psql_ -d fresh -c "ALTER FUNCTION pgcolumnar.table_summary(oid) COST 1"

# A pre-release install (0.1.0) is refused until updated, and updates when its tables
# are those of 0.2.0 (the builds since da535f4 and since 51446d1, which have 0.3.0's
# objects, and some before).
# (0.3.0 is the newest such shape: the builds that called themselves 0.1.0 came before it.)
for shape in 0.2.0 0.3.0; do
    DB=pre_$(echo "$shape" | tr . _)
    psql_ -c "CREATE DATABASE $DB"
    db -c "CREATE EXTENSION pgcolumnar VERSION '$shape'" \
       -c "CREATE TABLE m (id int, v text) USING columnar" \
       -c "INSERT INTO m SELECT g, g::text FROM generate_series(1, 1000) g" \
       -c "UPDATE pg_extension SET extversion = '0.1.0' WHERE extname = 'pgcolumnar'"
    if [ "$shape" = 0.2.0 ]; then
        # Builds before da535f4 lacked two diagnostic functions, and earlier ones had
        # functions 0.2.0 does not: functions are made 0.2.0's, the tables decide.
        db -c "ALTER EXTENSION pgcolumnar DROP FUNCTION pgcolumnar.chunk_directories_parsed()" \
           -c "ALTER EXTENSION pgcolumnar DROP FUNCTION pgcolumnar.stats(regclass)" \
           -c "DROP FUNCTION pgcolumnar.chunk_directories_parsed()" \
           -c "DROP FUNCTION pgcolumnar.stats(regclass)" \
           -c "CREATE FUNCTION pgcolumnar.stats(rel regclass) RETURNS TABLE (attname text) LANGUAGE sql AS 'SELECT NULL::text'" \
           -c "CREATE FUNCTION pgcolumnar.old_counter() RETURNS int LANGUAGE sql AS 'SELECT 1'" \
           -c "ALTER EXTENSION pgcolumnar ADD FUNCTION pgcolumnar.stats(regclass)" \
           -c "ALTER EXTENSION pgcolumnar ADD FUNCTION pgcolumnar.old_counter()"
        check "pre_release_other_functions" "1|false" \
            "$(db -c "SELECT pgcolumnar.old_counter() || '|' || (to_regproc('pgcolumnar.chunk_directories_parsed') IS NOT NULL)")"
    fi
    check "pre_release_${shape}_refused" "0A000" "$(sqlstate db -c "SELECT count(*) FROM m")"
    check "pre_release_${shape}_says_update" "HINT:  Run ALTER EXTENSION pgcolumnar UPDATE." \
        "$(db -c "SELECT count(*) FROM m" 2>&1 | grep HINT)"
    db -c "ALTER EXTENSION pgcolumnar UPDATE"
    check "pre_release_${shape}_updated" "$current" "$(version_of "$DB")"
    same_objects "pre_release_${shape}_same_objects_as_new" "$DB"
    check "pre_release_${shape}_rows" "1001|501501" \
        "$(db -c "INSERT INTO m VALUES (1001, 'x')" -c "SELECT count(*) || '|' || sum(id) FROM m")"
done
# Builds before da535f4 had other metadata tables: their update is refused, naming the
# difference, and the install stays as it was.
DB=pre_other
psql_ -c "CREATE DATABASE $DB"
db -c "CREATE EXTENSION pgcolumnar VERSION '0.2.0'" \
   -c "ALTER TABLE pgcolumnar.row_mark DROP COLUMN successors" \
   -c "UPDATE pg_extension SET extversion = '0.1.0' WHERE extname = 'pgcolumnar'"
check "pre_release_other_refused" "0A000" "$(sqlstate db -c "ALTER EXTENSION pgcolumnar UPDATE")"
check "pre_release_other_names_it" "DETAIL:  Missing: column row_mark.successors bytea." \
    "$(db -c "ALTER EXTENSION pgcolumnar UPDATE" 2>&1 | grep DETAIL)"
check "pre_release_other_unchanged" "0.1.0" "$(version_of "$DB")"

# Objects of a version newer than the library (a downgraded library): refused, with the
# hint to install a newer one; a superuser may turn the check off to dump the tables.
DB=newer
psql_ -c "CREATE DATABASE $DB"
db -c "CREATE EXTENSION pgcolumnar" -c "CREATE TABLE m (id int) USING columnar" \
   -c "INSERT INTO m SELECT generate_series(1, 10)" \
   -c "UPDATE pg_extension SET extversion = '99.0.0' WHERE extname = 'pgcolumnar'"
check "newer_refused" "0A000" "$(sqlstate db -c "INSERT INTO m VALUES (11)")"
check "newer_says_install" "HINT:  Install the pgcolumnar library of version 99.0.0 or later, and restart the server." \
    "$(db -c "SELECT * FROM m" 2>&1 | grep HINT)"
check "check_off_reads" "10" "$(db -c "SET pgcolumnar.enable_version_checks = off" -c "SELECT count(*) FROM m")"
check "check_off_superuser_only" "42501" \
    "$(sqlstate psql_ -d "$DB" -U alice -c "SET pgcolumnar.enable_version_checks = off")"

echo "extension_update: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
