#!/bin/bash
# SPDX-License-Identifier: MIT
# cases.sh - ops over what their attributes and inputs allow, one node a
# case, against onnxruntime (npm's onnxruntime-node, as the zoo's), as TAP:
#   rnn.py      RNN, GRU, LSTM,
#   control.py  If, Loop, Scan, and
#   scatter.py  ScatterND of run-time values,
#   image.py    Col2Im, AffineGrid, GridSample, Pad's wrap,
#   einsum.py   Einsum's diagonals and one-sided sums,
#   gqa.py      onnxruntime's GroupQueryAttention, and
#   classic.py  LpPool, LRN, Hardmax, Compress, Upsample ...: npu-onnx-test
#               on the CPU
#               reference under ASan and UBSan, and on OpenCL with nothing
#               allowed to fall back;
#   qop.py  onnxruntime's QOperator ops: check.py (int8 within 2 output
#           steps, as the zoo's networks) on the CPU and OpenCL.
# Each generator's cases and their expected outputs are made once into
# $NPU_CACHE/op-cases/NAME, again when the generator, ort-run.js or
# onnxruntime's version changes. A case with a file "oracle" names the
# case onnxruntime runs in its place (the generator's "after" step makes
# its outputs from that one's).
set -u
cd "$(dirname "$0")/../.."
CACHE=${NPU_CACHE:-$HOME/.cache/npu}
ORT=$CACHE/npm/onnxruntime-node-$(cat scripts/onnxruntime-version)
export NODE_PATH=$ORT/node_modules
n=0 failed=0
say() { # OK|NOT TEXT
	n=$((n + 1))
	[ "$1" = OK ] && echo "ok $n - $2" || { failed=$((failed + 1)); echo "not ok $n - $2"; }
}
for gen in rnn qop control scatter image einsum gqa classic; do
	out=$CACHE/op-cases/$gen
	sum=$(cat tests/ops/$gen.py tests/ops/caselib.py tests/models/ort-run.js \
		scripts/onnxruntime-version |
		sha256sum | cut -c1-16)
	if [ "$(cat "$out/made" 2>/dev/null)" != "$sum" ]; then
		rm -rf "$out"
		made=1
		if [ ! -f "$ORT/.done" ]; then
			say NOT "$gen: $ORT missing: run scripts/setup-deps"; made=
		elif ! /usr/bin/python3 tests/ops/$gen.py make "$out"; then
			say NOT "$gen: making the cases"; made=
		fi
		for d in "$out"/*/; do
			[ -n "$made" ] || break
			[ -f "$d/oracle" ] && continue
			node tests/models/ort-run.js "$d" >/dev/null 2>"$out.err" ||
				{ say NOT "$gen: onnxruntime on $(basename "$d"): $(tail -1 "$out.err")"; made=; }
		done
		[ -n "$made" ] && ! /usr/bin/python3 tests/ops/$gen.py after "$out" &&
			{ say NOT "$gen: the cases' outputs"; made=; }
		[ -n "$made" ] || continue
		echo "$sum" >"$out/made"
	fi
	case $gen in
	rnn | control | scatter | image | einsum | gqa | classic)
		for b in cpu opencl; do
			tool=build/tools/npu-onnx-test strict=--strict
			[ $b = cpu ] && tool=build/tests/npu-onnx-test-san strict=
			while IFS= read -r line; do
				case $line in
				"PASS "*) say OK "$gen on $b: ${line#PASS }" ;;
				"FAIL "* | "SKIP "*) say NOT "$gen on $b: ${line#???? }" ;;
				esac
			done < <("$tool" --backend $b $strict "$out"/*/ 2>&1)
		done ;;
	*)
		while IFS= read -r line; do
			case $line in
			"ok "*) say OK "$gen: ${line#ok * - }" ;;
			"not ok "*) say NOT "$gen: ${line#not ok * - }" ;;
			esac
		done < <(/usr/bin/python3 tests/models/check.py --tap --runs 1 --backend cpu \
			--backend opencl "$out"/*/ 2>&1) ;;
	esac
done
echo "1..$n"
[ $failed = 0 ]
