#!/bin/bash
# SPDX-License-Identifier: MIT
# node-tests.sh [npu-onnx-test OPTIONS] - ONNX's own node tests (Debian's
# libonnx-testdata) through build/tools/npu-onnx-test, as TAP: every case
# whose ops libnpu imports, leaving out the _expanded ones (the same op
# written as a function of others) and training mode. A case must pass;
# only those below may be skipped, each for what libnpu does not have,
# and those whose data is of an element type libnpu does not have (the
# message names it: double, 16-bit and unsigned wider
# integers, strings).
# The last line says the counts.
set -u
cd "$(dirname "$0")/../.."

NODE=${NPU_ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
TOOL=${NPU_ONNX_TEST:-build/tools/npu-onnx-test}
cases=()
for d in "$NODE"/test_*; do
	case ${d##*/} in *_expanded | *training*) continue ;; esac
	cases+=("$d")
done
if [ ${#cases[@]} = 0 ]; then
	echo "not ok 1 - ONNX node tests found in $NODE"
	echo "1..1"
	exit 1
fi
# Allowed to be skipped (or to fail reading their data), and why.
declare -A may_skip=(
	[test_identity_opt]="an optional, not a tensor"
	[test_identity_sequence]="a sequence, not a tensor"
	[test_if_opt]="an optional, not a tensor"
	[test_if_seq]="a sequence, not a tensor"
	[test_loop13_seq]="a sequence, not a tensor"
	[test_loop16_seq_none]="an optional sequence, not a tensor"
	# Scan's first form: a batch dim and sequence_lens, which opset 9 dropped
	[test_scan_sum]="Scan of opset 8"
	# libnpu has no empty tensor but a reshape's
	[test_constantofshape_int_shape_zero]="an empty graph output"
	[test_slice_start_out_of_bounds]="an empty slice"
	[test_split_zero_size_splits]="empty parts"
	# how many slices a run-time condition keeps is data: dynamic shapes
	[test_compress_0]="a run-time condition"
	[test_compress_1]="a run-time condition"
	[test_compress_default_axis]="a run-time condition"
	[test_compress_negative_axis]="a run-time condition"
	[test_maxunpool_export_with_output_shape]="a run-time output_shape"
	# a tensor holds at most NPU_MAX_RANK (6) dims, an ABI's size
	[test_nllloss_NCd1d2d3d4d5_mean_weight]="a tensor of rank 7"
	[test_nllloss_NCd1d2d3d4d5_none_no_weight]="a tensor of rank 7"
	[test_sce_NCd1d2d3d4d5_mean_weight]="a tensor of rank 7"
	[test_sce_NCd1d2d3d4d5_mean_weight_log_prob]="a tensor of rank 7"
	[test_sce_NCd1d2d3d4d5_none_no_weight]="a tensor of rank 7"
	[test_sce_NCd1d2d3d4d5_none_no_weight_log_prob]="a tensor of rank 7"
)
no_type='element type (double|int16|uint16|uint32|uint64|string) is not supported'

out=$("$TOOL" "$@" --importable "${cases[@]}")
rc=$?
n=0 pass=0 fail=0 skip=0 summary=
while IFS= read -r line; do
	case $line in
	"PASS "*)
		n=$((n + 1)) pass=$((pass + 1))
		echo "ok $n - ${line#PASS }" ;;
	"SKIP "* | "FAIL "*)
		n=$((n + 1)) name=${line#???? } name=${name%%:*}
		if [ -n "${may_skip[$name]:-}" ]; then
			skip=$((skip + 1))
			echo "ok $n - $name # SKIP ${may_skip[$name]}"
		elif [[ $line =~ $no_type ]]; then
			skip=$((skip + 1))
			echo "ok $n - $name # SKIP ${BASH_REMATCH[1]} data"
		else
			fail=$((fail + 1))
			echo "not ok $n - ${line#???? }"
		fi ;;
	"# not selected "*) ;;
	*" passed, "*" failed, "*" skipped") summary=$line ;;
	*) echo "# $line" ;;
	esac
done <<< "$out"
# A tool that crashed, or never ran, fails here whatever it printed.
if [ -z "$summary" ] || [ "$rc" -gt 1 ] || [ $((pass + skip)) = 0 ]; then
	n=$((n + 1)) fail=$((fail + 1))
	echo "not ok $n - $TOOL ran every case and exited 0 or 1 (status $rc)"
fi
echo "# ONNX node tests ($*): $pass passed, $fail failed, $skip skipped"
echo "1..$n"
[ "$fail" = 0 ]
