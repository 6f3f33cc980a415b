#!/bin/bash
# SPDX-License-Identifier: MIT
# test_tap_lib.sh - tests/tap-lib.sh, which counts every other test, on
# programs that go wrong in each way it must catch. TAP on stdout.
cd "$(dirname "$0")/../.."
n=0
fails=0
check() { # check DESCRIPTION PASS FAIL SKIP CMD...
	local desc=$1 want="$2 $3 $4" got
	shift 4
	got=$(TAP_LOGS=$(mktemp -d) bash -c '. tests/tap-lib.sh; tap_run t "$@" >/dev/null 2>&1
		echo "$tap_pass $tap_fail $tap_skip"' _ "$@")
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc: counted $got, want $want (pass fail skip)"
		fails=$((fails + 1))
	fi
}
check "a missing program fails (no plan, status 127)" 0 2 0 /nonexistent/test
check "a crash after a pass fails" 1 2 0 bash -c 'echo "ok 1 - a"; echo "1..2"; kill -SEGV $$'
check "fewer results than the plan fail" 1 1 0 bash -c 'echo "1..3"; echo "ok 1 - a"'
check "no plan fails" 1 1 0 bash -c 'echo "ok 1 - a"'
check "two plans fail" 1 1 0 bash -c 'echo "1..1"; echo "ok 1 - a"; echo "1..1"'
check "exit 1 without a failed result fails" 1 1 0 bash -c 'echo "ok 1 - a"; echo "1..1"; exit 1'
check "exit 1 after a failed result is that failure" 0 1 0 \
	bash -c 'echo "not ok 1 - a"; echo "1..1"; exit 1'
check "SKIP counts as a skip, not a pass (kselftest and TAP forms)" 1 0 2 \
	bash -c 'echo "1..3"; echo "ok 1 a # SKIP no device"; echo "ok 2 - b # skip x"; echo "ok 3 c"'
check "a good program passes" 2 0 0 bash -c 'echo "1..2"; echo "ok 1 - a"; echo "ok 2 - b"'
echo "1..$n"
[ "$fails" = 0 ]
