#!/bin/bash
# SPDX-License-Identifier: MIT
# test-trace.sh - NPU_TRACE on the host (TAP): the timeline of an ONNX
# model's runs through npu-run, checked by check-trace.py against the
# run's own placement report: on the CPU reference (each op its span), on
# OpenCL with copies at the boundaries, a file cut short by SIGKILL, "%p"
# in the name, and a path that cannot be written (the run goes on).
# Needs test_onnx's cases (build/tests/onnx-cases) and npu-run.
set -u
cd "$(dirname "$0")/../.."
run=build/tools/npu-run
c=build/tests/onnx-cases/test_fp32_cnn
check=tests/trace/check-trace.py
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$d/out"; }
t() { # description, command...
	local what=$1
	shift
	if "$@" >"$d/out" 2>&1; then ok "$what"; else not_ok "$what"; fi
}

model() { # trace, backend, iterations, [env...]
	local tr=$1 b=$2 it=$3
	shift 3
	env "$@" NPU_TRACE="$tr" $run $c/model.onnx --backend "$b" --report \
		--input $c/test_data_set_0/input_0.pb --iterations "$it" >"$d/report"
}

t "cpu: compile, each run's partition and each op's own span" \
	sh -c "$(declare -f model); run=$run c=$c d=$d; model $d/cpu.json cpu 3 &&
		/usr/bin/python3 $check $d/cpu.json $d/report --runs 3"
t "opencl (copies at the boundaries): the partitions and the copies" \
	sh -c "$(declare -f model); run=$run c=$c d=$d; model $d/ocl.json opencl 2 NPU_STRICT=1 \
		NPU_OCL_NO_ZERO_COPY=1 && /usr/bin/python3 $check $d/ocl.json $d/report --runs 2 --copies"

# Killed mid-run: what it wrote loads without the closing bracket.
crash() {
	$run $c/model.onnx --backend cpu --report --input $c/test_data_set_0/input_0.pb \
		>$d/report || return
	NPU_TRACE=$d/crash.json $run $c/model.onnx --backend cpu \
		--input $c/test_data_set_0/input_0.pb --iterations 1000000 >/dev/null &
	local pid=$! i c
	for i in $(seq 600); do
		c=$(grep -c '"name": "nodes"' $d/crash.json 2>/dev/null)
		[ "${c:-0}" -ge 5 ] && break
		sleep 0.05
	done
	kill -9 $pid
	wait $pid 2>/dev/null
	/usr/bin/python3 $check $d/crash.json $d/report --partial --runs 5
}
t "killed with SIGKILL mid-run: the file still loads, its runs whole" crash
t "%p in NPU_TRACE names the file after the process" \
	sh -c "NPU_TRACE=$d/p-%p.json $run $c/model.onnx --backend cpu \
		--input $c/test_data_set_0/input_0.pb >/dev/null & pid=\$!; wait \$pid &&
		/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' $d/p-\$pid.json"
t "a trace file that cannot be written: said once, and the run goes on" \
	sh -c "NPU_TRACE=$d/no/such/dir/t.json $run $c/model.onnx --backend cpu \
		--input $c/test_data_set_0/input_0.pb 2>$d/err >/dev/null &&
		grep -q 'libnpu: NPU_TRACE=$d/no/such/dir/t.json: No such file or directory' $d/err"
echo "1..$n"
