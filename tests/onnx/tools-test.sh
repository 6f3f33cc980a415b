#!/bin/bash
# SPDX-License-Identifier: MIT
# tools-test.sh - npu-run and npu-onnx-test from the command line, as TAP:
# npu-run's outputs (output_N.pb) are what npu-onnx-test expects of the
# same case, inputs bind by name and by position, and every bad command
# line or file is refused with a message and a non-zero status.
set -u
cd "$(dirname "$0")/../.."

RUN=build/tools/npu-run
TEST=build/tools/npu-onnx-test
NODE=${NPU_ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0

t() { # t DESCRIPTION COMMAND...
	n=$((n + 1))
	if "${@:2}" > "$tmp/out" 2>&1; then
		echo "ok $n - $1"
	else
		fail=$((fail + 1))
		echo "not ok $n - $1"
		sed 's/^/# /' "$tmp/out"
	fi
}
fails() { ! "$@"; }

c=$NODE/test_conv_with_strides_padding
t "npu-run writes the outputs of a node test" \
	"$RUN" "$c/model.onnx" --backend cpu --iterations 3 --input x="$c/test_data_set_0/input_0.pb" \
	--input W="$c/test_data_set_0/input_1.pb" --output-dir "$tmp/run"
mkdir -p "$tmp/case/test_data_set_0"
cp "$c/model.onnx" "$tmp/case/"
cp "$c"/test_data_set_0/input_*.pb "$tmp/case/test_data_set_0/"
cp "$tmp/run/output_0.pb" "$tmp/case/test_data_set_0/"
t "npu-onnx-test takes npu-run's output_0.pb as the expected one" "$TEST" "$tmp/case"
t "npu-run's output matches ONNX's expected output" \
	sh -c "cp '$c/test_data_set_0/output_0.pb' '$tmp/case/test_data_set_0/' && '$TEST' '$tmp/case'"
t "npu-run prints the placement, p50/p90 latency and modeled cycles" \
	sh -c "'$RUN' '$c/model.onnx' --backend cpu --input '$c/test_data_set_0/input_0.pb' \
		--input '$c/test_data_set_0/input_1.pb' | grep -q 'latency: p50 .* p90 .*' &&
	       '$RUN' '$c/model.onnx' --backend cpu --input '$c/test_data_set_0/input_0.pb' \
		--input '$c/test_data_set_0/input_1.pb' | grep -q 'modeled NPU cycles per run'"
t "npu-run refuses an input without a value, naming it" \
	sh -c "! '$RUN' '$c/model.onnx' --backend cpu --input '$c/test_data_set_0/input_0.pb' \
		2> '$tmp/err' && grep -q \"no value for input 'W'\" '$tmp/err'"
t "npu-run refuses an unknown backend" fails "$RUN" "$c/model.onnx" --backend gpu
t "npu-run refuses a file that is not a model" fails "$RUN" /etc/hostname
t "npu-run refuses a missing input file" fails "$RUN" "$c/model.onnx" --input x=/nonexistent.pb
t "npu-onnx-test fails (status 1) a case whose expected output differs" \
	sh -c "cp '$NODE/test_relu/test_data_set_0/output_0.pb' '$tmp/case/test_data_set_0/' &&
	       '$TEST' '$tmp/case' | grep -q '^FAIL case:'; '$TEST' '$tmp/case' >/dev/null; [ \$? = 1 ]"
t "npu-onnx-test fails a folder with no cases" fails "$TEST" "$tmp/run"
echo "1..$n"
[ "$fail" = 0 ]
