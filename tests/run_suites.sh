#!/usr/bin/env bash
# make test's second half: the 0.3.1 (classic) and 0.4.0 (v1) suites at the same time, each in its
# own virtual environment and log. Most of each suite waits on subprocesses (a script, a worker, a
# build), so on 2 cores the two overlap well: about 30 min together instead of 45 one after the other.
# Each log is printed whole when both are done, 0.3.1 first; the exit code is non-zero if either failed.
set -u
cd "$(dirname "$0")/.."
logs=.test-logs
mkdir -p "$logs"
suite() {
    local v=$1
    PATH="$PWD/.venv/vf$v/bin:$PATH" .venv/vf$v/bin/python -m pytest ${PYTEST_ARGS:-} >"$logs/vf$v.log" 2>&1
    echo $? >"$logs/vf$v.rc"
}
start=$SECONDS
suite 031 &
suite 040 &
wait
status=0
for v in 031 040; do
    echo "==== verifiers $v suite (.venv/vf$v) ===="
    cat "$logs/vf$v.log"
    rc=$(cat "$logs/vf$v.rc")
    echo "==== verifiers $v suite: exit $rc ===="
    [ "$rc" = 0 ] || status=1
done
echo "both suites: $((SECONDS - start)) s"
exit $status
