#!/usr/bin/env bash
# Manages the project's local PostgreSQL clusters, run by the `postgres` OS user
# (PostgreSQL refuses to run as root).
#
#   cluster.sh start   NAME PORT PROFILE   init if needed, (re)write settings, (re)start
#   cluster.sh stop    NAME                stop if running
#   cluster.sh destroy NAME                stop and delete
#   cluster.sh dir     NAME                print the cluster's folder
#
# PROFILE is `analytics` (the long-lived `make run` cluster), `test` (throwaway), `citus`
# (a node of the citus test level: Citus preloaded before pgcolumnar) or `citus-bench` (a
# node of `make bench-citus`).
# Clusters live in .pgdata/ of the checkout, or under /tmp when the postgres user cannot
# reach the checkout's path. Sockets live beside the data; TCP listens on 127.0.0.1 only.
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PG_BIN=$("$PG_CONFIG" --bindir)
TOP=$(cd "$(dirname "$0")/.." && pwd)
# The postgres user may not be able to enter the checkout: run everything from /.
cd /

# Servers start with RUST_BACKTRACE set on purpose: it is common on developer machines,
# and the extension must keep Rust backtraces out of its errors' DETAIL anyway (the
# regression outputs would show them).
as_postgres() { runuser -u postgres -- env RUST_BACKTRACE=1 "$@"; }

base_dir() {
    if as_postgres test -x "$TOP" 2>/dev/null; then
        echo "$TOP/.pgdata"
    else
        echo "/tmp/pgcolumnar-$(printf %s "$TOP" | sha1sum | cut -c1-12)"
    fi
}

settings() {
    local port=$1 profile=$2 sock=$3
    cat <<CONF
# Written by scripts/cluster.sh at every start; edit the script, not this file.
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock'
shared_preload_libraries = 'pgcolumnar'
max_parallel_workers_per_gather = 2
max_parallel_workers = 4
max_worker_processes = 8
random_page_cost = 1.1
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
CONF
    case $profile in
        analytics) cat <<CONF
shared_buffers = 4GB
# Parallel queries take their shared memory from here instead of making and removing a
# segment each (docs/explain.md#huge-pages).
min_dynamic_shared_memory = 64MB
work_mem = 256MB
maintenance_work_mem = 1GB
effective_cache_size = 16GB
max_wal_size = 8GB
checkpoint_timeout = 15min
CONF
        ;;
        test) cat <<CONF
# Parallel columnar plans are made for 2 cores whatever this machine has, so that the
# tests' EXPLAIN output is the same everywhere.
pgcolumnar.parallel_cores = 2
shared_buffers = 512MB
work_mem = 64MB
maintenance_work_mem = 256MB
max_wal_size = 2GB
CONF
        ;;
        # A publisher or subscriber of the `logical` test level (tests/logical_decoding.sh):
        # logical decoding on, room for a few slots and subscriptions.
        logical) cat <<CONF
shared_buffers = 256MB
work_mem = 32MB
max_wal_size = 2GB
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_logical_replication_workers = 6
logical_decoding_work_mem = 64kB
CONF
        ;;
        # A node of the `citus` test level's cluster (coordinator or worker): Citus must be
        # preloaded first (the later setting wins), three of them share the machine.
        citus) cat <<CONF
shared_preload_libraries = 'citus,pgcolumnar'
# As the test profile: parallel columnar plans made for 2 cores on any machine.
pgcolumnar.parallel_cores = 2
shared_buffers = 128MB
work_mem = 16MB
max_wal_size = 1GB
max_connections = 100
citus.shard_replication_factor = 1
# Logical decoding, for shard moves and splits that do not block writes (Citus's
# default).
wal_level = logical
CONF
        # Splits decode through Citus's own output plugin: PostgreSQL builds that have
        # output_plugin_libraries (15.20 has it) load only the plugins it lists.
        if as_postgres "$PG_BIN/postgres" --describe-config 2>/dev/null | grep '^output_plugin_libraries' >/dev/null; then
            echo "output_plugin_libraries = 'pgoutput, test_decoding, citus'"
        fi
        ;;
        # A node of `make bench-citus` (bench/citus.py): coordinator and both workers get
        # exactly these settings, sized so that three servers holding the 10M-row TSBS
        # table (local copy on the coordinator, shards on the workers) fit in memory
        # together. Serial plans on every node: the benchmark measures Citus's overhead
        # over the single-node table, not parallel speed-up.
        citus-bench) cat <<CONF
shared_preload_libraries = 'citus,pgcolumnar'
shared_buffers = 2GB
work_mem = 256MB
maintenance_work_mem = 1GB
effective_cache_size = 8GB
max_wal_size = 8GB
checkpoint_timeout = 15min
max_connections = 200
max_parallel_workers_per_gather = 0
citus.shard_replication_factor = 1
CONF
        ;;
        *) echo "cluster.sh: unknown profile '$profile'" >&2; exit 2 ;;
    esac
}

cmd=${1:?usage: cluster.sh start|stop|destroy|dir NAME ...}
name=${2:?cluster name required}
base=$(base_dir)
dir=$base/$name
data=$dir/data

running() { [ -f "$data/postmaster.pid" ] && as_postgres "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; }

# With `huge_pages = try` a server that needs more huge pages than the machine reserved
# takes 4 kB pages for all of its shared memory, without a word in its log; say so when
# some were reserved (docs/explain.md#huge-pages).
check_huge_pages() {
    local port=$1 reserved needed
    reserved=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
    [ "${reserved:-0}" -gt 0 ] || return 0
    needed=$(as_postgres "$PG_BIN/psql" -X -qAt -h "$dir/socket" -p "$port" -d postgres \
        -c "SHOW shared_memory_size_in_huge_pages" 2>/dev/null) || return 0
    if [ -n "$needed" ] && [ "$needed" -gt "$reserved" ]; then
        echo "cluster.sh: $name needs $needed huge pages and the machine reserves $reserved:" \
            "its shared memory is in 4 kB pages (sysctl -w vm.nr_hugepages=$((needed * 21 / 20)))" >&2
    fi
}

case $cmd in
    dir) echo "$dir" ;;
    start)
        port=${3:?port required}; profile=${4:?profile required}
        mkdir -p "$base"
        chown postgres:postgres "$base"
        if [ ! -f "$data/PG_VERSION" ]; then
            as_postgres mkdir -p "$dir/socket"
            as_postgres "$PG_BIN/initdb" -D "$data" --auth=trust --username=postgres \
                --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
                || { cat "$dir/initdb.log" >&2; exit 1; }
            echo "include_if_exists = 'pgcolumnar.conf'" | as_postgres tee -a "$data/postgresql.conf" >/dev/null
        fi
        settings "$port" "$profile" "$dir/socket" | as_postgres tee "$data/pgcolumnar.conf" >/dev/null
        if running; then
            as_postgres "$PG_BIN/pg_ctl" -D "$data" -l "$dir/server.log" -w -m fast restart >/dev/null
        else
            as_postgres "$PG_BIN/pg_ctl" -D "$data" -l "$dir/server.log" -w start >/dev/null \
                || { tail -n 20 "$dir/server.log" >&2; exit 1; }
        fi
        check_huge_pages "$port"
        ;;
    stop) if running; then as_postgres "$PG_BIN/pg_ctl" -D "$data" -w -m fast stop >/dev/null; fi ;;
    destroy)
        if running; then as_postgres "$PG_BIN/pg_ctl" -D "$data" -w -m immediate stop >/dev/null; fi
        rm -rf "$dir"
        ;;
    *) echo "cluster.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
