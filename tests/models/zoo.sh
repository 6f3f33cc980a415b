#!/bin/bash
# SPDX-License-Identifier: MIT
# zoo.sh [--tap] [--backend B]... [--runs N] [NAME...] - the model zoo: makes
# the networks that are missing (gen.py, Debian's torch and torchvision) and
# their expected outputs (ort-run.js, npm's onnxruntime-node, which
# setup-deps installs), in $NPU_ZOO (default $NPU_CACHE/models, outside the
# clone), then checks NAME... (all by default) with check.py on each
# backend (cpu and opencl by default). Exits non-zero if any failed.
#   zoo.sh --make-only [NAME...]   make them, check nothing
set -u
cd "$(dirname "$0")/../.."
CACHE=${NPU_CACHE:-$HOME/.cache/npu}
ZOO=${NPU_ZOO:-$CACHE/models}
ORT=$CACHE/npm/onnxruntime-node-1.20.1
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
only=$(IFS=,; echo "${names[*]:-}")
mkdir -p "$ZOO"
"$PY" tests/models/gen.py --out "$ZOO" ${only:+--only "$only"} || gen_failed=1
cases=()
for d in "$ZOO"/*/; do
	d=${d%/} n=${d##*/}
	[ -n "$only" ] && [[ ",$only," != *",$n,"* ]] && continue
	[ -f "$d/model.onnx" ] || continue
	cases+=("$d")
	[ -f "$d/test_data_set_0/output_0.pb" ] && continue
	[ -f "$ORT/.done" ] || { echo "zoo.sh: $ORT missing: run scripts/setup-deps" >&2; exit 1; }
	NODE_PATH=$ORT/node_modules node tests/models/ort-run.js "$d" || exit 1
done
[ -n "$make_only" ] && exit ${gen_failed:-0}
[ ${#cases[@]} -gt 0 ] || { echo "zoo.sh: no networks in $ZOO" >&2; exit 1; }
"$PY" tests/models/check.py "${args[@]}" "${cases[@]}" || exit 1
exit ${gen_failed:-0}
