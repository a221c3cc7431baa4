#!/usr/bin/env bash
# Differential "parity" suite: every tests/parity/*.sql runs twice, each time in a fresh
# database with pgcolumnar created, once with default_table_access_method = heap and once
# with = columnar (through PGOPTIONS). Both outputs must be identical after EXPLAIN plans
# are dropped (plan shapes differ by access method, the rows must not).
#
#   tests/parity/run.sh [HOST [PORT]]      default: $PGHOST / $PGPORT, user postgres
#   PARITY_ONLY=name tests/parity/run.sh   one file (name without .sql)
#
# Prints `test parity/NAME ... ok` or `... FAILED` per file, then
# `parity: N statements, M differ`. Outputs and diffs go to target/parity/.
#
# known_gaps.sql holds statements that columnar answers differently on purpose or by a
# known bug (tests/parity/README.md). Its diff is compared with the recorded
# tests/parity/known_gaps.diff: `ok` while the gaps are exactly those recorded, `FAILED`
# when one changes (fixed or different), so a fix shows up and the record is updated
# (copy target/parity/known_gaps.diff over it). Its differing statements are counted
# apart in the summary and are not an error by themselves.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$TOP/tests/parity
OUT=$TOP/target/parity
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PG_BIN=$("$PG_CONFIG" --bindir)
export PGHOST=${1:-${PGHOST:?give the host or socket directory as \$1 or PGHOST}}
export PGPORT=${2:-${PGPORT:-5432}}
export PGUSER=${PGUSER:-postgres}
PSQL=(env PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres)

rm -rf "$OUT"
mkdir -p "$OUT"

# stmt_starts FILE: the first line of every statement (and psql meta-command) of FILE,
# in order. Statements end with a `;` at the end of a line outside dollar quotes.
stmt_starts() {
    awk '
        { line = $0; sub(/[ \t\r]+$/, "", line) }
        in_copy { if (line == "\\.") in_copy = 0; next }
        !in_stmt {
            if (line ~ /^[ \t]*$/ || line ~ /^[ \t]*--/) next
            print $0
            if (line ~ /^\\/) next
            in_stmt = 1; in_dollar = 0
        }
        in_stmt {
            n = gsub(/\$\$/, "&", line)
            if (n % 2 == 1) in_dollar = !in_dollar
            if (!in_dollar && line ~ /;[ \t]*(--.*)?$/) {
                in_stmt = 0
                if (toupper(line) ~ /FROM STDIN/) in_copy = 1
            }
        }' "$1"
}

# normalize: drops EXPLAIN output (from the QUERY PLAN header to its row count).
normalize() {
    awk '
        /^ +QUERY PLAN *$/ { skip = 1; print "<plan>"; next }
        skip && /^\([0-9]+ rows?\)$/ { skip = 0; next }
        skip { next }
        { print }'
}

# split_blocks STARTS OUTPUT: prints OUTPUT with a line "@@@stmt N" before the echo of
# each statement, matched in order against STARTS.
split_blocks() {
    awk -v starts="$1" '
        BEGIN { n = 0; while ((getline l < starts) > 0) s[++n] = l; i = 1 }
        i <= n && $0 == s[i] { print "@@@stmt " i; i++ }
        { print }' "$2"
}

# count_differing A B: how many statement blocks differ between two split outputs.
count_differing() {
    awk '
        FNR == 1 { f++; k = 0 }
        /^@@@stmt / { k = $2; next }
        { blk[f, k] = blk[f, k] "\n" $0; if (k > max) max = k }
        END { d = 0; for (k = 0; k <= max; k++) if (blk[1, k] != blk[2, k]) d++; print d }' "$1" "$2"
}

run_one() {  # run_one NAME AM: fresh database, extension, the file; output on stdout
    local name=$1 am=$2 db="parity_$1_$2"
    "${PSQL[@]}" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" -c "CREATE DATABASE \"$db\"" \
        || return 1
    "${PSQL[@]}" -d "$db" -c "CREATE EXTENSION pgcolumnar" || return 1
    # Relative path, so error lines (psql:FILE:LINE:) read the same wherever the checkout is.
    (cd "$TOP" && PGOPTIONS="-c default_table_access_method=$am" \
        "$PG_BIN/psql" -X -a -q -v ON_ERROR_STOP=0 -d "$db" -f "tests/parity/$name.sql" 2>&1)
    local rc=$?
    "${PSQL[@]}" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null
    return $rc
}

total=0 differ=0 gaps=0 failed=0
for f in "$DIR"/*.sql; do
    name=$(basename "$f" .sql)
    [ -n "${PARITY_ONLY:-}" ] && [ "$name" != "$PARITY_ONLY" ] && continue
    stmt_starts "$f" >"$OUT/$name.starts"
    setup_failed=0
    for am in heap columnar; do
        run_one "$name" "$am" | normalize >"$OUT/$name.$am.out"
        [ "${PIPESTATUS[0]}" -eq 0 ] || setup_failed=1
        split_blocks "$OUT/$name.starts" "$OUT/$name.$am.out" >"$OUT/$name.$am.blocks"
    done
    n=$(wc -l <"$OUT/$name.starts")
    d=$(count_differing "$OUT/$name.heap.blocks" "$OUT/$name.columnar.blocks")
    diff "$OUT/$name.heap.out" "$OUT/$name.columnar.out" >"$OUT/$name.diff"
    rc=$?
    total=$((total + n))
    if [ $setup_failed -eq 1 ]; then
        printf 'test parity/%-28s ... FAILED (a run did not complete: see target/parity/%s.*.out)\n' "$name" "$name"
        failed=$((failed + 1))
        continue
    fi
    if [ "$name" = known_gaps ]; then
        gaps=$((gaps + d))
        if cmp -s "$OUT/$name.diff" "$DIR/known_gaps.diff"; then rc=0; else rc=1; fi
    else
        differ=$((differ + d))
    fi
    if [ $rc -eq 0 ]; then
        printf 'test parity/%-28s ... ok (%d statements, %d differ)\n' "$name" "$n" "$d"
        rm -f "$OUT/$name.diff"
    else
        printf 'test parity/%-28s ... FAILED (%d statements, %d differ)\n' "$name" "$n" "$d"
        failed=$((failed + 1))
    fi
done

for d in "$OUT"/*.diff; do
    [ -f "$d" ] || continue
    echo "--- $(basename "$d") (heap <, columnar >)"
    cat "$d"
done
echo "parity: $total statements, $differ differ (plus $gaps known gaps in known_gaps.sql)"
[ $failed -eq 0 ]
