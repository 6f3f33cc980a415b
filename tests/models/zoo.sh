#!/bin/bash
# SPDX-License-Identifier: MIT
# zoo.sh [--tap] [--backend B]... [--runs N] [NAME...] - the model zoo: makes
# the networks that are missing (gen.py, Debian's torch and torchvision;
# genai.py, decoders in onnxruntime-genai's form; the
# variants of an fp32 one: NAME_int8_qdq, NAME_int8_qop, NAME_int8_dynamic,
# NAME_fp16, NAME_external and NAME_int4 by quantize.py, NAME_ort_extended
# by onnxruntime's own optimizer, ort-optimize.js) and their expected
# outputs (ort-run.js, npm's
# onnxruntime-node, which setup-deps installs), in $NPU_ZOO (default
# $NPU_CACHE/models, outside the clone), then checks NAME... (all by
# default) with check.py on each backend (cpu, opencl and onednn by default).
# Exits non-zero if any failed.
#   zoo.sh --make-only [NAME...]   make them, check nothing
set -u
cd "$(dirname "$0")/../.."
CACHE=${NPU_CACHE:-$HOME/.cache/npu}
ZOO=${NPU_ZOO:-$CACHE/models}
ORT=$CACHE/npm/onnxruntime-node-$(cat scripts/onnxruntime-version)
PY=/usr/bin/python3	# Debian's, where python3-torch is

args=() names=() make_only=
while [ $# -gt 0 ]; do
	case $1 in
	--tap) args+=(--tap) ;;
	--backend | --runs) args+=("$1" "$2"); shift ;;
	--make-only) make_only=1 ;;
	-*) echo "zoo.sh: unknown option $1" >&2; exit 2 ;;
	*) names+=("$1") ;;
	esac
	shift
done
# onnxruntime's quantizer's forms of the fp32 networks (quantize.py)
QDQ="resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 shufflenet_v2 squeezenet regnet_y_400mf normnet vit bert kws_lstm"
DYNAMIC="vit bert"
# and its QOperator format (the quantized kernels as com.microsoft's ops)
QOPERATOR="resnet50 squeezenet mobilenet_v3_small"
# and in float16 (onnxconverter-common's converter's form)
FP16="squeezenet mobilenet_v2 vit bert kws_gru gpt"
# with their weights as external data (in a file beside the model)
EXTERNAL="resnet50 bert"
# with weight-only int4 MatMulNBits (onnxruntime's MatMul4BitsQuantizer's form)
INT4="gpt llm_gqa"
# as onnxruntime's own optimizer saves them (level extended: its contrib ops)
ORT_EXTENDED="bert vit kws_gru mobilenet_v3_small bert_int8_dynamic mobilenet_v3_small_int8_qdq"
# (an optimized network's source is made too)
only=$(IFS=,; echo "${names[*]:-}")
[ -n "$only" ] && only=$only,$(for n in "${names[@]}"; do echo "${n%_ort_extended}"; done | paste -sd,)
base=$(for n in "${names[@]}"; do echo "$n" |
	sed 's/_ort_extended$//; s/_int8_qdq$//; s/_int8_dynamic$//; s/_int8_qop$//; s/_fp16$//;
	s/_external$//; s/_int4$//'; done |
	sort -u | paste -sd,)
mkdir -p "$ZOO"
export NODE_PATH=$ORT/node_modules
"$PY" tests/models/gen.py --out "$ZOO" ${base:+--only "$base"} || gen_failed=1
"$PY" tests/models/genai.py --out "$ZOO" ${base:+--only "$base"} || gen_failed=1
# what quantize.py made is made again when quantize.py changes (the sum in
# each network it made says which one made it)
# (and onnxruntime's version, whose runs calibrate it)
ORT_VERSION=$(cat scripts/onnxruntime-version)
# what made a network's expected outputs: that version, run by this ort-run.js
ORT_STAMP="$ORT_VERSION $(sha256sum tests/models/ort-run.js | cut -c1-16)"
qsum=$(cat tests/models/quantize.py scripts/onnxruntime-version | sha256sum | cut -c1-16)
quantize() { # MODE NAME SUFFIX
	local out=$ZOO/$2_int8_$3
	case $3 in fp16 | external | int4) out=$ZOO/$2_$3 ;; esac
	[ -f "$ZOO/$2/model.onnx" ] || return 0
	[ -n "$only" ] && [[ ",$only," != *",${out##*/},"* ]] && return 0
	[ -f "$out/model.onnx" ] && [ "$(cat "$out/quantize.sum" 2>/dev/null)" = "$qsum" ] && return 0
	[ -f "$ORT/.done" ] || { echo "zoo.sh: $ORT missing: run scripts/setup-deps" >&2; exit 1; }
	echo "zoo.sh: ${out##*/}" >&2
	rm -rf "$out"
	if "$PY" tests/models/quantize.py "$1" "$ZOO/$2" "$out"; then
		echo "$qsum" >"$out/quantize.sum"
	else
		rm -rf "$out"
		gen_failed=1
	fi
}
for n in $QDQ; do quantize static "$n" qdq; done
for n in $DYNAMIC; do quantize dynamic "$n" dynamic; done
for n in $QOPERATOR; do quantize qoperator "$n" qop; done
for n in $FP16; do quantize fp16 "$n" fp16; done
for n in $EXTERNAL; do quantize external "$n" external; done
for n in $INT4; do quantize int4 "$n" int4; done
for n in $ORT_EXTENDED; do	# made again with onnxruntime's version
	out=$ZOO/${n}_ort_extended
	[ -f "$ZOO/$n/model.onnx" ] || continue
	[ -n "$only" ] && [[ ",$only," != *",${out##*/},"* ]] && continue
	[ "$(cat "$out/made" 2>/dev/null)" = "$ORT_VERSION" ] && continue
	echo "zoo.sh: ${out##*/}" >&2
	rm -rf "$out"
	if node tests/models/ort-optimize.js "$ZOO/$n" "$out" extended; then
		echo "$ORT_VERSION" >"$out/made"
	else
		rm -rf "$out"
		gen_failed=1
	fi
done
cases=()
for d in "$ZOO"/*/; do
	d=${d%/} n=${d##*/}
	[ -n "$only" ] && [[ ",$only," != *",$n,"* ]] && continue
	[ -f "$d/model.onnx" ] || continue
	cases+=("$d")
	# the expected outputs are onnxruntime's of the version pinned now
	[ -f "$d/test_data_set_0/output_0.basic.pb" ] &&
		[ "$(cat "$d/ort.version" 2>/dev/null)" = "$ORT_STAMP" ] && continue
	[ -f "$ORT/.done" ] || { echo "zoo.sh: $ORT missing: run scripts/setup-deps" >&2; exit 1; }
	node tests/models/ort-run.js "$d" 2>/dev/null || { echo "zoo.sh: ort-run.js $d failed" >&2; exit 1; }
	echo "$ORT_STAMP" >"$d/ort.version"
done
[ -n "$make_only" ] && exit ${gen_failed:-0}
[ ${#cases[@]} -gt 0 ] || { echo "zoo.sh: no networks in $ZOO" >&2; exit 1; }
"$PY" tests/models/check.py "${args[@]}" "${cases[@]}" || exit 1
exit ${gen_failed:-0}
