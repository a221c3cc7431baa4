#!/usr/bin/env bash
# Builds the extension (release) and installs it into PG_CONFIG's PostgreSQL.
# Each file is copied beside its destination and renamed over it: running servers keep
# the library they mapped (an in-place overwrite could crash them), and new servers
# load the new one.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
STAGE="$TOP/target/install-stage"

rm -rf "$STAGE"
cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$STAGE" >/dev/null
# The released versions' scripts, frozen in sql/ (pgrx copies the update scripts
# pgcolumnar--A--B.sql, not these): CREATE EXTENSION ... VERSION installs any of them,
# and tests/extension_update.sh updates from each. The version being built must not be
# one of them: pgrx generates its script from the code.
version=$(sed -nE 's/^version = "(.*)"/\1/p' "$TOP/Cargo.toml" | head -n 1)
if [ -e "$TOP/sql/pgcolumnar--$version.sql" ]; then
    echo "sql/pgcolumnar--$version.sql freezes version $version, released: give Cargo.toml the next version" >&2
    exit 1
fi
extdir="$STAGE$("$PG_CONFIG" --sharedir)/extension"
for f in "$TOP"/sql/pgcolumnar--*.sql; do
    cp "$f" "$extdir/"
done
# Scripts of versions no longer shipped (the pre-release 0.1.0's) must not stay installable.
for f in "$("$PG_CONFIG" --sharedir)"/extension/pgcolumnar--*.sql; do
    if [ -e "$f" ] && [ ! -e "$extdir/$(basename "$f")" ]; then rm -f "$f"; fi
done
cd "$STAGE"
find . -type f | while read -r f; do
    dest="/${f#./}"
    mkdir -p "$(dirname "$dest")"
    tmp="$dest.new.$$"
    cp "$f" "$tmp"
    mv -f "$tmp" "$dest"
done
# Which source the installed library was built from, for benchmarks that report it
# (bench/citus.py): the commit, "+dirty" when src/ or sql/ had uncommitted changes.
pkglibdir=$("$PG_CONFIG" --pkglibdir)
commit=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$TOP" status --porcelain -- src sql Cargo.toml Cargo.lock 2>/dev/null)" ] && commit="$commit+dirty"
echo "$commit $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$pkglibdir/pgcolumnar.build.new.$$"
mv -f "$pkglibdir/pgcolumnar.build.new.$$" "$pkglibdir/pgcolumnar.build"
echo "installed pgcolumnar into $pkglibdir (built from $commit)"
