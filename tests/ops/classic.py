#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""classic.py make OUT - ops of classic and older exports that ONNX's node
tests leave uncovered, one node a case: LpPool (p 1, 2, 3; strides,
pads, auto_pad, dilations), GlobalLpPool, LpNormalization (rows of
zeros too), LRN of several sizes, MeanVarianceNormalization over
other axes, Hardmax before and after opset 13, EyeLike's offsets and
dtypes, Compress by a condition known at load, opset 7's Upsample (its
scales an attribute) and opset 9's linear one, MaxUnpool of MaxPool's
indices into its own and a given output shape. onnxruntime gives the
expected outputs (cases.sh)."""
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

import caselib

rng = np.random.default_rng(21)


def save(out, name, op, feeds, consts, opset, otype=TP.FLOAT, **attrs):
    ins = list(feeds) + list(consts)
    node = helper.make_node(op, ins, ["y"], **attrs)
    caselib.save(out, name, [node], feeds, consts, [("y", otype)], [("", opset)], 8)


def f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def make(out):
    x = f(2, 3, 7, 8)
    for p in (1, 2, 3):
        save(out, "lppool_p%d" % p, "LpPool", {"x": x}, {}, 11, kernel_shape=[3, 2], p=p,
             strides=[2, 1], pads=[1, 0, 1, 1])
        save(out, "globallppool_p%d" % p, "GlobalLpPool", {"x": x}, {}, 11, p=p)
    save(out, "lppool_same_upper", "LpPool", {"x": x}, {}, 11, kernel_shape=[2, 3],
         auto_pad="SAME_UPPER", strides=[2, 2])
    save(out, "lppool_dilated", "LpPool", {"x": x}, {}, 18, kernel_shape=[2, 2],
         dilations=[2, 3], p=2)
    z = f(3, 4, 5)
    z[1, :, 2] = 0          # a row of zeros: its norm 0
    for p in (1, 2):
        for axis in (-1, 1):
            save(out, "lpnormalization_p%d_axis%d" % (p, axis), "LpNormalization", {"x": z},
                 {}, 11, p=p, axis=axis)
    for size in (1, 3, 5):       # (onnxruntime takes odd sizes only)
        save(out, "lrn_size%d" % size, "LRN", {"x": x}, {}, 13, size=size, alpha=2e-3,
             beta=0.6, bias=1.5)
    save(out, "mvn_axes", "MeanVarianceNormalization", {"x": x}, {}, 13, axes=[1, 3])
    save(out, "hardmax_opset11_axis1", "Hardmax", {"x": f(2, 3, 4)}, {}, 11, axis=1)
    ties = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], np.float32)
    save(out, "hardmax_ties", "Hardmax", {"x": ties}, {}, 13)
    for k, dt in ((-1, None), (2, TP.INT64), (1, TP.INT32)):
        attrs = {"k": k}
        if dt is not None:
            attrs["dtype"] = dt
        save(out, "eyelike_k%d_%s" % (k, "input" if dt is None else str(dt)), "EyeLike",
             {"x": f(4, 5)}, {}, 13, TP.FLOAT if dt is None else dt, **attrs)
    save(out, "compress_axis", "Compress", {"x": f(3, 5, 2)},
         {"c": np.array([1, 0, 1, 1], bool)}, 11, axis=1)
    save(out, "compress_flat", "Compress", {"x": f(2, 3)},
         {"c": np.array([0, 1, 0, 0, 1], bool)}, 11)
    save(out, "upsample_opset7", "Upsample", {"x": f(1, 2, 3, 4)}, {}, 7,
         scales=[1.0, 1.0, 2.0, 1.5], mode="nearest")
    save(out, "upsample_opset9_linear", "Upsample", {"x": f(1, 2, 3, 4)},
         {"s": np.array([1, 1, 2, 2], np.float32)}, 9, mode="linear")

    # MaxPool's indices of a 2x2, stride-2 pooling, worked out here (flat
    # over the whole input), unpooled into its own and a given shape
    x = f(1, 2, 8, 10)
    win = x.reshape(1, 2, 4, 2, 5, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 4, 5, 4)
    arg = win.argmax(-1)
    n, c, r, q = np.indices(arg.shape)
    idx = (((n * 2 + c) * 8 + 2 * r + arg // 2) * 10 + 2 * q + arg % 2).astype(np.int64)
    for name, shape in (("maxunpool", None), ("maxunpool_output_shape", [1, 2, 9, 11])):
        if shape:       # the same places in the larger output
            rr, cc = (idx % 80) // 10, idx % 10
            ix = (((n * 2 + c) * 9 + rr) * 11 + cc).astype(np.int64)
        else:
            ix = idx
        consts = {"s": np.array(shape, np.int64)} if shape else {}
        save(out, name, "MaxUnpool", {"x": win.max(-1), "i": ix}, consts, 11,
             kernel_shape=[2, 2], strides=[2, 2])

if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
