# Sourced by the shell test scripts that run clusters of their own (crash_recovery.sh,
# pg_upgrade.sh, autovacuum_merge.sh, memory_bounds.sh), after they set TOP: `check NAME EXPECTED ACTUAL`
# prints one "test NAME ... ok" or "... FAILED" line, the form scripts/test.sh counts,
# and keeps the tallies in `passed` and `failures`; `own_cluster NAME PORT` names a
# cluster of scripts/cluster.sh (DIR, PORT) that `psql_` then queries.
failures=0
passed=0
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PG_BIN=$("$PG_CONFIG" --bindir)
CLUSTER="$TOP/scripts/cluster.sh"

own_cluster() {  # own_cluster NAME PORT
    DIR=$($CLUSTER dir "$1")
    PORT=$2
}

psql_() { "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$DIR/socket" -p "$PORT" -U postgres -d postgres "$@"; }

check() {  # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then
        echo "test $1 ... ok (${3//$'\n'/ })"
        passed=$((passed + 1))
    else
        echo "test $1 ... FAILED: expected '$2', got '$3'"
        failures=$((failures + 1))
    fi
}

sigkill_cluster() {  # sigkill_cluster DIR: SIGKILL its postmaster; the children exit when they notice
    local dir=$1 pid
    pid=$(head -n 1 "$dir/data/postmaster.pid")
    kill -9 "$pid"
    for _ in $(seq 1 100); do
        pgrep -u postgres -f -- "-D $dir/data" >/dev/null || break
        sleep 0.1
    done
    pkill -9 -u postgres -f -- "$dir/data" 2>/dev/null || true
    sleep 0.5
    # A killed postmaster may linger as a zombie nobody reaps in a container, which
    # keeps its lock files looking alive; it is dead, so remove them.
    rm -f "$dir/data/postmaster.pid" "$dir"/socket/.s.PGSQL.*.lock
}
