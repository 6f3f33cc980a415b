#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""qop.py make OUT | after OUT - onnxruntime's QOperator ops (domain
com.microsoft, as quantize_static's QOperator form writes them), one node
a case: QLinearAdd and QLinearMul (broadcasting, ranks 2 to 5), QLinearConcat,
QLinearGlobalAveragePool (NCHW and channels_last), QLinearAveragePool,
QLinearSoftmax (opset 12 and 13 semantics), QGemm (per tensor and per
column, transB, alpha, quantized or fp32 output), uint8 and int8; and
the fused ops of its optimizer that its QDQ and dynamic forms become:
DynamicQuantizeMatMul (B per tensor or per column, zero points, bias),
FusedConv (each activation, the sum input), FusedMatMul's transBatch; and
what transformers and language models use: MatMulNBits (2, 4 and 8 bits,
zero points, bias, K not a multiple of the block), RotaryEmbedding (both
layouts, interleaved, a partial rotary dim), MultiHeadAttention and
Attention (bias, masks of 1s and 0s or of lengths, attention_bias,
causal), EmbedLayerNormalization (segments, mask_index, embedding_sum,
position ids). A
quantized output is dequantized by its own scale, so that check.py counts
its differences in output steps. onnxruntime gives the expected outputs
(cases.sh)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import caselib

rng = np.random.default_rng(5)
TYPES = {np.uint8: TP.UINT8, np.int8: TP.INT8, np.float32: TP.FLOAT, np.int64: TP.INT64,
         np.int32: TP.INT32}


def save(out, name, node, feeds, inits, yq=True):
    """@node writes "y" (8-bit, then dequantized with its scale and zero
    point, inputs "ys" and "yz"), or with @yq False fp32 "out"."""
    nodes = [node]
    if yq:
        nodes.append(helper.make_node("DequantizeLinear", ["y", "ys", "yz"], ["out"]))
    caselib.save(out, name, nodes, feeds, inits, [("out", TP.FLOAT)],
                 [("", 13), ("com.microsoft", 1)])


def q(shape, dt):
    return (rng.integers(0, 256, shape) - (128 if dt == np.int8 else 0)).astype(dt)


def qp(dt, s):
    """A scale and a zero point near the middle of @dt's range."""
    return np.float32(s), np.array(rng.integers(100, 150) - (128 if dt == np.int8 else 0), dt)


def ms(op, ins, **attrs):
    return helper.make_node(op, ins, ["y"], domain="com.microsoft", **attrs)


def make(out):
    for dt in (np.uint8, np.int8):
        t = "u8" if dt == np.uint8 else "s8"
        for op in ("QLinearAdd", "QLinearMul"):
            for sa, sb in (((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (1, 3, 1, 1)),
                           ((1, 8), (4, 1, 8)), ((2, 3, 4, 5, 2), (5, 2))):
                (as_, az), (bs, bz) = qp(dt, 0.05), qp(dt, 0.03)
                ys, yz = qp(dt, 0.08 if op == "QLinearAdd" else 0.2)
                save(out, "%s_%s_%s_%s" % (op, t, "x".join(map(str, sa)), "x".join(map(str, sb))),
                     ms(op, ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]),
                     {"a": q(sa, dt), "b": q(sb, dt)},
                     {"as": as_, "az": az, "bs": bs, "bz": bz, "ys": ys, "yz": yz})
        # the first input already in the output's quantization, the others not
        ys, yz = qp(dt, 0.05)
        ins, inits, feeds = ["ys", "yz"], {"ys": ys, "yz": yz}, {}
        for i, (k, s) in enumerate(((2, 0.05), (3, 0.02), (1, 0.07))):
            s, z = (ys, yz) if i == 0 else qp(dt, s)
            ins += ["x%d" % i, "s%d" % i, "z%d" % i]
            inits.update({"s%d" % i: s, "z%d" % i: z})
            feeds["x%d" % i] = q((2, k, 3, 3), dt)
        save(out, "QLinearConcat_" + t, ms("QLinearConcat", ins, axis=1), feeds, inits)
        for cl in (0, 1):
            (xs, xz), (ys, yz) = qp(dt, 0.04), qp(dt, 0.01)
            save(out, "QLinearGlobalAveragePool_%s_cl%d" % (t, cl),
                 ms("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], channels_last=cl),
                 {"x": q((2, 8, 5, 6), dt)}, {"xs": xs, "xz": xz, "ys": ys, "yz": yz})
        for cip in (0, 1):
            (xs, xz), (ys, yz) = qp(dt, 0.04), qp(dt, 0.03)
            save(out, "QLinearAveragePool_%s_cip%d" % (t, cip),
                 ms("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], kernel_shape=[3, 3],
                    strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=cip),
                 {"x": q((1, 4, 9, 9), dt)}, {"xs": xs, "xz": xz, "ys": ys, "yz": yz})
        for opset, axis in ((13, -1), (12, 1), (13, 1)):
            xs, xz = qp(dt, 0.1)
            ys, yz = np.float32(1 / 256), np.array(0 if dt == np.uint8 else -128, dt)
            save(out, "QLinearSoftmax_%s_opset%d_axis%d" % (t, opset, axis),
                 ms("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], axis=axis, opset=opset),
                 {"x": q((2, 3, 10), dt)}, {"xs": xs, "xz": xz, "ys": ys, "yz": yz})
    # QGemm as quantize_static writes it: A uint8, B int8 constant
    for pc in (0, 1):
        for tb in (0, 1):
            for yq in (0, 1):
                for alpha in (1.0, 0.5):
                    K, N = 16, 6
                    inits = {"as": np.float32(0.02), "az": np.array(120, np.uint8),
                             "b": q((N, K) if tb else (K, N), np.int8),
                             "bs": rng.uniform(0.01, 0.03, N).astype(np.float32) if pc
                             else np.float32(0.02),
                             "bz": np.zeros(N, np.int8) if pc else np.array(0, np.int8),
                             "c": rng.integers(-500, 500, N).astype(np.int32)}
                    ins = ["a", "as", "az", "b", "bs", "bz", "c"]
                    if yq:
                        inits.update({"ys": np.float32(0.1), "yz": np.array(128, np.uint8)})
                        ins += ["ys", "yz"]
                    node = helper.make_node("QGemm", ins, ["y" if yq else "out"],
                                            domain="com.microsoft", transB=tb, alpha=alpha)
                    save(out, "QGemm_%s_transB%d_%s_alpha%g" % ("per_column" if pc else "per_tensor",
                                                                 tb, "q" if yq else "fp32", alpha),
                         node, {"a": q((4, K), np.uint8)}, inits, yq=bool(yq))


def make_fused(out):
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)   # noqa: E731
    for pc in (0, 1):
        for zp in (0, 1):
            for bias in (0, 1):
                K, N = 12, 5
                inits = {"b": q((K, N), np.int8),
                         "bs": rng.uniform(0.01, 0.03, N).astype(np.float32) if pc
                         else np.float32(0.02)}
                ins = ["a", "b", "bs"]
                if zp or bias:
                    inits["bz"] = (rng.integers(-3, 3, N).astype(np.int8) if pc
                                   else np.array(2, np.int8)) if zp else None
                    ins.append("bz" if zp else "")
                if bias:
                    inits["bias"] = f(N)
                    ins.append("bias")
                inits = {k: v for k, v in inits.items() if v is not None}
                save(out, "DynamicQuantizeMatMul_%s_zp%d_bias%d" % (
                    "per_column" if pc else "per_tensor", zp, bias),
                    helper.make_node("DynamicQuantizeMatMul", ins, ["out"],
                                     domain="com.microsoft"),
                    {"a": f(3, 4, K)}, inits, yq=False)
    for act, params in (("", []), ("Relu", []), ("Tanh", []), ("Sigmoid", []),
                        ("LeakyRelu", [0.1]), ("Clip", [-0.5, 0.7]), ("HardSigmoid", [0.3, 0.4])):
        for z in (0, 1):
            attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}
            if act:
                attrs["activation"] = act
            if params:
                attrs["activation_params"] = params
            feeds = {"x": f(1, 3, 6, 6)}
            if z:
                feeds["z"] = f(1, 4, 6, 6)
            save(out, "FusedConv_%s_z%d" % (act or "none", z),
                 helper.make_node("FusedConv", ["x", "w", "b"] + (["z"] if z else []), ["out"],
                                  domain="com.microsoft", **attrs),
                 feeds, {"w": f(4, 3, 3, 3), "b": f(4)}, yq=False)
    for ta, tb in ((1, 0), (0, 1), (1, 1)):
        save(out, "FusedMatMul_transBatch%d%d" % (ta, tb),
             helper.make_node("FusedMatMul", ["a", "b"], ["out"], domain="com.microsoft",
                              transBatchA=ta, transBatchB=tb, transB=tb, alpha=0.5),
             # A [2][3][4][5] as op(A) sees it; B [2][3][6][5] with transB, else
             # [2][3][5][6] (onnxruntime wants one rank, 3 or more, with transBatch)
             {"a": f(4, 2, 3, 5) if ta else f(2, 3, 4, 5)},
             {"b": f(6, 2, 3, 5) if tb else f(2, 3, 5, 6)}, yq=False)


def make_llm(out):
    """MatMulNBits, RotaryEmbedding, MultiHeadAttention and Attention."""
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)   # noqa: E731
    for bits, K, bs, zp, bias in ((4, 64, 32, False, False), (4, 80, 32, True, True),
                                  (8, 48, 16, True, False), (2, 64, 32, False, True)):
        N = 6
        blocks = (K + bs - 1) // bs
        blob = bs * bits // 8
        inits = {"b": rng.integers(0, 256, (N, blocks, blob)).astype(np.uint8),
                 "s": rng.uniform(0.01, 0.05, N * blocks).astype(np.float32)}
        ins = ["a", "b", "s"]
        if zp or bias:
            zrow = (blocks * bits + 7) // 8
            inits["zp"] = rng.integers(0, 256, N * zrow).astype(np.uint8) if zp else None
            ins.append("zp" if zp else "")
        if bias:
            ins += ["", "bias"]
            inits["bias"] = f(N)
        inits = {k: v for k, v in inits.items() if v is not None}
        save(out, "MatMulNBits_%dbit_K%d_zp%d_bias%d" % (bits, K, zp, bias),
             helper.make_node("MatMulNBits", ins, ["out"], domain="com.microsoft", K=K, N=N,
                              bits=bits, block_size=bs),
             {"a": f(2, 3, K)}, inits, yq=False)
    for name, shape, attrs, rd in (("bsd", (2, 5, 32), {"num_heads": 2}, 16),
                                   ("bsd_interleaved", (2, 5, 32), {"num_heads": 2,
                                                                    "interleaved": 1}, 16),
                                   ("bnsh_partial", (2, 2, 5, 16), {"rotary_embedding_dim": 8,
                                                                  "num_heads": 2}, 8)):
        half = rd // 2
        inits = {"cos": np.cos(np.arange(12)[:, None] * 0.3 / (1 + np.arange(half))).astype(
                     np.float32),
                 "sin": np.sin(np.arange(12)[:, None] * 0.3 / (1 + np.arange(half))).astype(
                     np.float32)}
        save(out, "RotaryEmbedding_" + name,
             helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["out"],
                              domain="com.microsoft", **attrs),
             {"x": f(*shape), "pos": rng.integers(0, 12, (2, 5)).astype(np.int64)}, inits,
             yq=False)
    B, S, L, D = 2, 4, 6, 16
    for name, mask, bias, ab, uni in (("plain", None, False, False, 0),
                                      ("bias_mask", "2d", True, False, 0),
                                      ("attention_bias", None, False, True, 0)):
        feeds = {"q": f(B, S, D), "k": f(B, L, D), "v": f(B, L, D)}
        ins = ["q", "k", "v", "bias" if bias else "", "mask" if mask else "",
               "ab" if ab else ""]
        inits = {}
        if bias:
            inits["bias"] = f(3 * D)
        if mask:
            feeds["mask"] = np.array([[1] * L, [1] * 3 + [0] * (L - 3)], np.int32)
        if ab:
            feeds["ab"] = f(1, 2, S, L)
        while not ins[-1]:
            ins.pop()
        save(out, "MultiHeadAttention_" + name,
             helper.make_node("MultiHeadAttention", ins, ["out"], domain="com.microsoft",
                              num_heads=2, unidirectional=uni), feeds, inits, yq=False)
    # EmbedLayerNormalization: with segments and a mask (mask_index), without
    # (embedding_sum), with position ids
    V, P, Hd = 30, 8, 16
    for name, seg, mask, pid in (("segments_mask", True, True, False),
                                 ("plain_sum", False, False, False),
                                 ("position_ids", True, False, True)):
        feeds = {"ids": rng.integers(0, V, (2, 5)).astype(np.int32)}
        inits = {"we": f(V, Hd), "pe": f(P, Hd), "gamma": f(Hd), "beta": f(Hd)}
        ins = ["ids", "", "we", "pe", "", "gamma", "beta", "", ""]
        if seg:
            feeds["seg"] = rng.integers(0, 2, (2, 5)).astype(np.int32)
            inits["se"] = f(2, Hd)
            ins[1], ins[4] = "seg", "se"
        if mask:
            feeds["mask"] = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
            ins[7] = "mask"
        if pid:
            feeds["pid"] = rng.integers(0, P, (2, 5)).astype(np.int32)
            ins[8] = "pid"
        while not ins[-1]:
            ins.pop()
        outs = ["out", "mask_index" if mask else "", "" if mask else "esum"]
        while not outs[-1]:
            outs.pop()
        node = helper.make_node("EmbedLayerNormalization", ins, outs, domain="com.microsoft",
                                epsilon=1e-5)
        g = helper.make_graph([node], name,
                              [helper.make_tensor_value_info(k, TYPES[v.dtype.type], v.shape)
                               for k, v in feeds.items()],
                              [helper.make_tensor_value_info(o, TP.INT32 if o == "mask_index"
                                                             else TP.FLOAT, None)
                               for o in outs if o],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                helper.make_opsetid("com.microsoft", 1)])
        d = os.path.join(out, "EmbedLayerNormalization_" + name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for i, (k, v) in enumerate(feeds.items()):
            with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as fo:
                fo.write(numpy_helper.from_array(v, k).SerializeToString())
    H = 16
    for name, mask, uni in (("plain", None, 0), ("mask_2d", "2d", 0), ("mask_lengths", "1d", 0),
                            ("causal", None, 1)):
        feeds = {"x": f(B, S, H)}
        ins = ["x", "w", "b"]
        if mask == "2d":
            feeds["mask"] = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], np.int32)
            ins.append("mask")
        elif mask == "1d":
            feeds["mask"] = np.array([4, 2], np.int32)
            ins.append("mask")
        save(out, "Attention_" + name,
             helper.make_node("Attention", ins, ["out"], domain="com.microsoft", num_heads=2,
                              unidirectional=uni),
             feeds, {"w": f(H, 3 * H), "b": f(3 * H)}, yq=False)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
        make_fused(sys.argv[2])
        make_llm(sys.argv[2])
