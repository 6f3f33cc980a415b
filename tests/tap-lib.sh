# SPDX-License-Identifier: MIT
# tap-lib.sh - sourced by scripts/run-checks (host) and tests/vm/guest-tests.sh
# (guest): runs a test program, checks everything it reports, and prints its
# results as one flat TAP stream with the program's name on each line.
#
# A program passes only if it exits 0, prints exactly one plan ("1..N") and
# exactly N results. A crash, a missing binary, a short or missing plan or a
# non-zero exit with no "not ok" (or by a signal) each add one failure of their own, so a
# program that dies cannot take its results with it. "ok ... # SKIP" (any
# case, as TAP and kselftest write it) counts as a skip, not a pass.
#
#   tap_run NAME CMD...   run CMD, print its results as "[NAME] ..." lines
#   tap_ok NAME DESC / tap_not_ok NAME DESC   one result of the caller's
#   tap_pass tap_fail tap_skip               the counts so far
# Every program's whole output is kept in $TAP_LOGS/NAME.log.

tap_pass=0
tap_fail=0
tap_skip=0
TAP_LOGS=${TAP_LOGS:-build/logs}

tap_ok() { tap_pass=$((tap_pass + 1)); echo "ok - [$1] $2"; }
tap_not_ok() { tap_fail=$((tap_fail + 1)); echo "not ok - [$1] $2"; }

# tap_count NAME LOG: count and echo the results in LOG; sets tap_results and tap_plan.
tap_count() {
	local name=$1 log=$2 line desc re='^(not )?ok( [0-9]+)?( -)? ?(.*)$'

	tap_results=0
	tap_failed=0
	tap_plan=
	tap_plans=0
	while IFS= read -r line; do
		if [[ $line =~ ^1\.\.([0-9]+) ]]; then
			tap_plan=${BASH_REMATCH[1]}
			tap_plans=$((tap_plans + 1))
		elif [[ $line =~ $re ]]; then
			tap_results=$((tap_results + 1))
			desc=${BASH_REMATCH[4]}
			if [ -n "${BASH_REMATCH[1]}" ]; then
				tap_not_ok "$name" "$desc"
				tap_failed=$((tap_failed + 1))
			elif [[ ${desc,,} == *"# skip"* ]]; then
				tap_skip=$((tap_skip + 1))
				echo "ok - [$name] $desc"
			else
				tap_ok "$name" "$desc"
			fi
		elif [[ $line == \#* ]]; then
			echo "[$name] $line"
		fi
	done < "$log"
}

tap_run() {
	local name=$1 log rc t0=$SECONDS
	shift

	mkdir -p "$TAP_LOGS"
	log=$TAP_LOGS/$name.log
	"$@" > "$log" 2>&1
	rc=$?
	# Where make check's minutes go: one comment line per program.
	echo "# [$name] took $((SECONDS - t0)) s"
	tap_count "$name" "$log"
	if [ "$tap_plans" != 1 ]; then
		tap_not_ok "$name" "prints one plan (it printed $tap_plans; log: $log)"
	elif [ "$tap_results" != "$tap_plan" ]; then
		tap_not_ok "$name" "prints its plan's $tap_plan results (it printed $tap_results; log: $log)"
	fi
	# Exiting 1 after a "not ok" is how a program says it failed; a signal
	# or an exit without a failed result is a failure of its own.
	if [ "$rc" != 0 ] && { [ "$rc" -gt 125 ] || [ "$tap_failed" = 0 ]; }; then
		tap_not_ok "$name" "exits with status 0 (it exited with $rc; log: $log)"
		tail -n 20 "$log" | sed "s|^|[$name] # |"
	elif [ "$tap_failed" != 0 ] && [ -n "${TAP_FAIL_TAIL:-}" ]; then
		# In the guest: why, where a reader of its results on the host
		# (CI) sees it: comment lines, which the host's tap_count passes
		# on (it drops the "[name] # ..." lines above).
		grep -v '^ok ' "$log" | tail -n 30 | sed "s|^|# [$name] |"
	fi
	return 0
}
