#!/bin/bash
# SPDX-License-Identifier: MIT
# cases.sh - the recurrent ops' cases (cases.py) against onnxruntime
# (npm's onnxruntime-node, as the zoo's) on the CPU reference under ASan
# and UBSan, and on OpenCL with nothing allowed to fall back, as TAP. The
# cases and their expected outputs are made once into $NPU_CACHE/rnn-cases,
# again when cases.py, ort-run.js or onnxruntime's version changes.
set -u
cd "$(dirname "$0")/../.."
CACHE=${NPU_CACHE:-$HOME/.cache/npu}
ORT=$CACHE/npm/onnxruntime-node-$(cat scripts/onnxruntime-version)
OUT=$CACHE/rnn-cases
sum=$(cat tests/rnn/cases.py tests/models/ort-run.js scripts/onnxruntime-version |
	sha256sum | cut -c1-16)
if [ "$(cat "$OUT/made" 2>/dev/null)" != "$sum" ]; then
	[ -f "$ORT/.done" ] || { echo "not ok 1 - $ORT missing: run scripts/setup-deps"; echo "1..1"; exit 1; }
	rm -rf "$OUT" "${OUT}_l0"
	/usr/bin/python3 tests/rnn/cases.py "$OUT" || { echo "not ok 1 - cases.py"; echo "1..1"; exit 1; }
	export NODE_PATH=$ORT/node_modules
	for d in "$OUT"/* "${OUT}_l0"/*; do
		[ -f "${OUT}_l0/${d##*/}/model.onnx" ] && [ "${d%/*}" = "$OUT" ] && continue
		node tests/models/ort-run.js "$d" >/dev/null 2>"$OUT.err" ||
			{ echo "not ok 1 - onnxruntime on ${d##*/}: $(tail -1 "$OUT.err")"; echo "1..1"; exit 1; }
	done
	# layout 1's outputs: [B][T][D][H] and [B][D][H] from layout 0's
	/usr/bin/python3 - "$OUT" <<'PY' || { echo "not ok 1 - layout 1's outputs"; echo "1..1"; exit 1; }
import glob, os, sys
import numpy as np, onnx
from onnx import numpy_helper as nh
out = sys.argv[1]
for f in glob.glob(out + "_l0/*/test_data_set_0/output_*.pb"):
    t = onnx.TensorProto()
    with open(f, "rb") as fi:
        t.ParseFromString(fi.read())
    a = nh.to_array(t)
    a = a.transpose(2, 0, 1, 3) if a.ndim == 4 else a.transpose(1, 0, 2)
    with open(out + f[len(out) + 3:], "wb") as fo:
        fo.write(nh.from_array(np.ascontiguousarray(a), t.name).SerializeToString())
PY
	echo "$sum" >"$OUT/made"
fi
n=0 failed=0
for b in cpu opencl; do
	tool=build/tools/npu-onnx-test strict=--strict
	[ $b = cpu ] && tool=build/tests/npu-onnx-test-san strict=
	while IFS= read -r line; do
		case $line in
		"PASS "*) n=$((n + 1)); echo "ok $n - $b: ${line#PASS }" ;;
		"FAIL "* | "SKIP "*) n=$((n + 1)) failed=$((failed + 1)); echo "not ok $n - $b: ${line#???? }" ;;
		esac
	done < <("$tool" --backend $b $strict "$OUT"/*/ 2>&1)
done
echo "1..$n"
[ $failed = 0 ]
