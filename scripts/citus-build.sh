#!/usr/bin/env bash
# Builds Citus from the vendored source (../shared/vendor/citus: a tarball and a patch) and
# installs it into PG_CONFIG's PostgreSQL, for the `citus` test level and `make bench-citus`.
#
#   citus-build.sh          build + install unless this version is already installed
#   citus-build.sh --check  exit 0 when installed, 3 when the source is missing, 1 otherwise
#
# The build is cached: a stamp file beside citus.so records which tarball + patch it was
# built from, so a second run is a no-op. The first build takes about 6 minutes on 2 cores.
# Exit status 3 means "cannot build here" (no vendored source, or a missing build
# dependency); callers report the level as skipped, loudly, with the reason printed here.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
VENDOR=${CITUS_VENDOR_DIR:-$TOP/../shared/vendor/citus}
VERSION=13.2.2
TARBALL=$VENDOR/citus-$VERSION.tar.gz
PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
STAMP=$PKGLIBDIR/citus.pgcolumnar-build
BUILD=$TOP/target/citus-build

if [ ! -f "$TARBALL" ]; then
    if [ -f "$PKGLIBDIR/citus.so" ]; then
        echo "citus-build: no Citus source at $TARBALL; using the Citus installed in $PKGLIBDIR"
        exit 0
    fi
    echo "citus-build: no Citus source at $TARBALL (the vendored ../shared/vendor/citus is missing) and no Citus installed in $PKGLIBDIR" >&2
    exit 3
fi
# The stamp names the exact inputs: a changed tarball or patch rebuilds.
want=$(cat "$TARBALL" "$VENDOR"/*.patch 2>/dev/null | sha256sum | cut -c1-16)
want="citus $VERSION $want"
if [ -f "$PKGLIBDIR/citus.so" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
    echo "citus-build: Citus $VERSION already installed in $PKGLIBDIR (cached build)"
    exit 0
fi
[ "${1:-}" = --check ] && exit 1

missing=()
for h in lz4.h zstd.h krb5.h; do
    [ -f "/usr/include/$h" ] || missing+=("$h")
done
[ -f "$("$PG_CONFIG" --includedir-server)/postgres.h" ] || missing+=("postgres.h (postgresql-server-dev-15)")
command -v make >/dev/null && command -v gcc >/dev/null || missing+=("make/gcc")
if [ ${#missing[@]} -gt 0 ]; then
    echo "citus-build: cannot build Citus, missing: ${missing[*]}" >&2
    echo "citus-build: apt-get install liblz4-dev libzstd-dev libkrb5-dev postgresql-server-dev-15 build-essential" >&2
    exit 3
fi

echo "citus-build: building Citus $VERSION into $PKGLIBDIR (first time: about 6 minutes on 2 cores)"
start=$(date +%s)
rm -rf "$BUILD"
mkdir -p "$BUILD"
tar -xzf "$TARBALL" -C "$BUILD"
src=$(find "$BUILD" -mindepth 1 -maxdepth 1 -type d | head -n 1)
for p in "$VENDOR"/*.patch; do
    [ -f "$p" ] && patch -d "$src" -p1 --quiet <"$p"
done
log=$BUILD/build.log
(
    cd "$src"
    ./configure --without-libcurl PG_CONFIG="$PG_CONFIG"
    make -j"$(nproc)"
    make install
) >"$log" 2>&1 || { tail -n 40 "$log" >&2; echo "citus-build: build failed, log in $log" >&2; exit 1; }
echo "$want" >"$STAMP"
echo "citus-build: Citus $VERSION installed in $(( $(date +%s) - start )) s"
