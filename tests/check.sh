# Sourced by the shell test scripts (crash_recovery.sh, pg_upgrade.sh): `check NAME
# EXPECTED ACTUAL` prints one "test NAME ... ok" or "... FAILED" line, the form
# scripts/test.sh counts, and keeps the tallies in `passed` and `failures`.
failures=0
passed=0

check() {  # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then
        echo "test $1 ... ok (${3//$'\n'/ })"
        passed=$((passed + 1))
    else
        echo "test $1 ... FAILED: expected '$2', got '$3'"
        failures=$((failures + 1))
    fi
}
