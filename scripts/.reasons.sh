#!/bin/sh
# In the guest: why each op of each zoo network stays off the NPU.
for d in $HOME_MODELS/*/; do
	n=$(basename $d)
	args=""
	for f in $d/test_data_set_0/input_*.pb; do args="$args --input $f"; done
	build/tools/npu-run $d/model.onnx --backend npu --report $args 2>&1 | grep -E " (cpu|opencl) +\(" | sed "s/^/REASON $n: /"
done
