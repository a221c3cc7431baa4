#!/usr/bin/env bash
# Installs what building and testing pgcolumnar needs, skipping whatever is already there.
# Idempotent: on a provisioned machine it only checks and returns in about a second.
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGRX_VERSION=0.18.0
# liblz4-dev libzstd-dev libkrb5-dev patch: building Citus for the citus test level;
# valgrind: bench/logical_cost.py counts instructions with it.
APT_PACKAGES=(postgresql-15 postgresql-server-dev-15 libclang-dev clang sudo liblz4-dev libzstd-dev libkrb5-dev patch valgrind)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "provision: apt-get install ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! cargo pgrx --version 2>/dev/null | grep -qF "$PGRX_VERSION"; then
    echo "provision: cargo install cargo-pgrx $PGRX_VERSION (takes several minutes)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked
fi

PGRX_HOME=${PGRX_HOME:-$HOME/.pgrx}
if ! grep -qsF "pg15 = \"$PG_CONFIG\"" "$PGRX_HOME/config.toml"; then
    echo "provision: cargo pgrx init --pg15 $PG_CONFIG"
    cargo pgrx init --pg15 "$PG_CONFIG"
fi
