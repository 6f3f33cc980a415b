#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""quantize.py static|qoperator|dynamic|fp16|external|int4 FP32_CASE OUT_CASE - int8 (and other)
versions of a zoo
network as onnxruntime's quantizer writes them, written here with the onnx
package (onnxruntime's Python quantizer is not in Debian):

static: quantize_static's QDQ format, per_channel=True - activations uint8
  (asymmetric, the range observed by running the fp32 model through
  onnxruntime on the case's input: ort-run.js), weights of Conv, Gemm and
  MatMul int8 symmetric per output channel (reduce_range: [-64, 64]), biases int32 at x_scale *
  w_scale; QuantizeLinear -> DequantizeLinear on every float input and
  output of the ops in QOPS (Conv, Gemm, MatMul of two activations too,
  Add, Mul, Concat, pools, Resize, Softmax, activations, data movement);
  data movement's output quantized as its input; a Relu or Clip alone
  reading an op's output removed (the output's range clamps). A tensor
  keeps its name as the DequantizeLinear's output, so graph outputs stay.
qoperator: quantize_static's QOperator format (quant_format=QOperator):
  static's quantization, each DequantizeLinear -> op -> QuantizeLinear of
  an op with a quantized kernel written as that kernel (QLinearConv,
  QLinearMatMul, QGemm, QLinearAdd, QLinearMul, QLinearConcat,
  QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid,
  QLinearLeakyRelu, QLinearSoftmax; com.microsoft's but the first two),
  data movement run on the 8-bit values themselves, and the
  DequantizeLinear and QuantizeLinear nodes left unread removed.
fp16: the model in float16 as onnxconverter-common's float16 converter
  writes it (keep_io_types off): every float initializer, Constant and
  ConstantOfShape value, graph input and output float16, Casts to float
  made Casts to float16 (Resize's scales, which ONNX wants fp32, kept).
int4: weight-only int4 as onnxruntime's MatMul4BitsQuantizer writes it
  (its defaults but a block of 32: asymmetric): each MatMul by a constant
  [K][N] weight becomes com.microsoft's MatMulNBits, bits 4, its columns
  quantized in blocks of 32 along K, a scale and a zero point a block
  (the zero points packed two to a byte, the values likewise, low first).
external: the model with its weights as external data, as exporters write
  a model over protobuf's 2 GB: every initializer in one file beside it
  (weights.bin, each at its offset and length).
dynamic: quantize_dynamic's form for MatMul by a constant:
  DynamicQuantizeLinear(A) -> MatMulInteger(A, B int8, A's zero point, 0)
  -> Cast to float -> Mul by A's scale * B's.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
# the ops quantize_static quantizes by default (its QLinearOps and QDQ registries)
QOPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "MaxPool", "AveragePool",
        "GlobalAveragePool", "Resize", "Softmax", "Relu", "Clip", "LeakyRelu", "Sigmoid",
        "Split", "Pad", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather",
        "GatherElements", "Where"}
# its Direct8BitOp and kin: the output quantized as the input
SAME = {"Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice", "AveragePool", "MaxPool",
        "Resize", "Split", "Gather", "GatherElements"}
# its QDQRemovableActivation: removed where it alone reads its input
REMOVABLE = {"Relu", "Clip"}


def float_tensors(model):
    m = shape_inference.infer_shapes(model)
    types = {}
    for v in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        types[v.name] = v.type.tensor_type.elem_type
    return types


def ranges(case, model, names):
    """min and max of each tensor in @names, run by onnxruntime on the case's input."""
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    del aug.graph.output[:]
    for n in names:
        aug.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "test_data_set_0"))
        onnx.save(aug, os.path.join(tmp, "model.onnx"))
        src = os.path.join(case, "test_data_set_0")
        for f in os.listdir(src):
            if f.startswith("input_"):
                shutil.copy(os.path.join(src, f), os.path.join(tmp, "test_data_set_0", f))
        env = dict(os.environ)
        with open(os.path.join(HERE, "..", "..", "scripts", "onnxruntime-version")) as f:
            ort = "onnxruntime-node-" + f.read().strip()
        env.setdefault("NODE_PATH", os.path.join(os.environ.get(
            "NPU_CACHE", os.path.expanduser("~/.cache/npu")), "npm", ort, "node_modules"))
        subprocess.run(["node", os.path.join(HERE, "ort-run.js"), tmp], check=True,
                       stderr=subprocess.DEVNULL, env=env)
        out = {}
        for i, n in enumerate(names):
            a = numpy_helper.to_array(onnx.load_tensor(
                os.path.join(tmp, "test_data_set_0", "output_%d.pb" % i)))
            a = a[np.isfinite(a)]       # an attention mask's -inf: not a range
            out[n] = (float(a.min()), float(a.max())) if a.size else (0.0, 0.0)
        return out


def act_params(lo, hi):
    """onnxruntime's uint8 asymmetric parameters: the range widened to hold 0."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


# Weights in [-64, 64]: quantize_*(reduce_range=True), which onnxruntime
# asks for on x86 without VNNI. There its u8s8 kernels add two products of
# 8 bits in 16 (vpmaddubsw) and saturate past 32767, so with full-range
# weights the expected outputs would depend on the host that made them
# (onnxruntime's, not the ONNX arithmetic: BERT's dynamic MatMulInteger
# 1.5e-2 off on an AVX2 host); 2 x 255 x 64 = 32640 fits on every host.
WMAX = 64.0


def weight_q(w, axis):
    """int8 symmetric per channel along @axis: values and scales."""
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    scale = np.abs(moved).max(1) / WMAX
    scale[scale == 0] = 1.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -WMAX, WMAX).astype(np.int8)
    return q, scale.astype(np.float32)


def static(case, out):
    save(static_model(case), case, out)


def static_model(case):
    model = onnx.load(os.path.join(case, "model.onnx"))
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    # onnxruntime's quantizer reads a model its optimizer has cleaned: an
    # Identity of an initializer (torch writes one where two layers' biases
    # are equal) is that initializer, and a bias stays int32
    outputs = {o.name for o in g.output}
    alias = {n.output[0]: n.input[0] for n in g.node
             if n.op_type == "Identity" and n.input[0] in inits and n.output[0] not in outputs}
    kept = [n for n in g.node if not (n.op_type == "Identity" and n.output[0] in alias)]
    for n in kept:
        for i, x in enumerate(n.input):
            n.input[i] = alias.get(x, x)
    del g.node[:]
    g.node.extend(kept)
    types = float_tensors(model)
    weights = {}        # name -> (node, input index, axis)
    acts = []
    for n in g.node:
        if n.op_type not in QOPS:
            continue
        for i, name in enumerate(n.input):
            if not name:
                continue
            if name in inits:
                if n.op_type == "Conv" and i == 1:
                    weights[name] = (n, 0)
                elif n.op_type == "Gemm" and i == 1 and inits[name].dims.__len__() == 2:
                    trans = any(a.name == "transB" and a.i for a in n.attribute)
                    weights[name] = (n, 0 if trans else 1)
                elif n.op_type == "MatMul" and i == 1 and len(inits[name].dims) == 2:
                    weights[name] = (n, 1)
                continue
            if types.get(name) == TensorProto.FLOAT and name not in acts:
                acts.append(name)
        for name in n.output:
            if types.get(name) == TensorProto.FLOAT and name not in acts:
                acts.append(name)
    rng = ranges(case, model, acts)
    qp = {name: act_params(*rng[name]) for name in acts}
    # a Relu or Clip alone reading an op's output goes: the op writes the
    # activation's output, whose range (quantized, so clamped) does its work
    graph_outputs = {o.name for o in g.output}
    readers = {}
    for n in g.node:
        for x in n.input:
            readers[x] = readers.get(x, 0) + 1
    producer = {o: n for n in g.node for o in n.output}
    removed = []
    for n in g.node:
        u = n.input[0] if n.op_type in REMOVABLE and n.input else ""
        up = producer.get(u)
        if (up is not None and up.op_type in QOPS and readers.get(u) == 1 and
                u not in graph_outputs and u in qp and n.output[0] in qp):
            up.output[list(up.output).index(u)] = n.output[0]
            removed.append(n)
            acts.remove(u)
            del qp[u]
    for n in removed:
        g.node.remove(n)
    for n in g.node:
        if n.op_type in SAME and n.input and n.input[0] in qp:
            for o in n.output:
                if o in qp:
                    qp[o] = qp[n.input[0]]
    new_inits, pre, post = [], {}, []
    params = {}
    for name in acts:
        s, z = qp[name]
        params[name] = s
        new_inits += [numpy_helper.from_array(np.array(s), name + "_scale"),
                      numpy_helper.from_array(np.array(z), name + "_zero_point")]
    graph_inputs = {i.name for i in g.input}
    rename = {}
    for name in acts:
        src = name
        if name in graph_inputs:
            rename[name] = name + "_dq"     # consumers read the dequantized input
            dst = name + "_dq"
        else:
            src = name + "_f"               # the producer writes _f, DQ writes the name
            dst = name
        q = helper.make_node("QuantizeLinear", [src, name + "_scale", name + "_zero_point"],
                             [name + "_q"], name=name + "_Q")
        dq = helper.make_node("DequantizeLinear", [name + "_q", name + "_scale",
                                                   name + "_zero_point"], [dst], name=name + "_DQ")
        pre.setdefault(name, []).extend([q, dq])
    # weights and biases
    drop = set()
    quantized = set()
    for wname, (n, axis) in weights.items():
        w = numpy_helper.to_array(inits[wname]).astype(np.float32)
        q, s = weight_q(w, axis)
        new_inits += [numpy_helper.from_array(q, wname + "_quantized"),
                      numpy_helper.from_array(s, wname + "_scale"),
                      numpy_helper.from_array(np.zeros(s.shape, np.int8), wname + "_zero_point")]
        post.append(helper.make_node("DequantizeLinear", [wname + "_quantized", wname + "_scale",
                                                          wname + "_zero_point"], [wname + "_dq"],
                                     name=wname + "_DQ", axis=axis))
        drop.add(wname)
        for i, x in enumerate(n.input):
            if x == wname:
                n.input[i] = wname + "_dq"
        bias = n.input[2] if len(n.input) > 2 and n.op_type in ("Conv", "Gemm") else ""
        if bias in inits and n.input[0] in params and len(s) > 1:
            b = numpy_helper.to_array(inits[bias]).astype(np.float64)
            bs = (params[n.input[0]] * s).astype(np.float32)
            if b.shape == bs.shape:
                bq = np.rint(b / bs).astype(np.int32)
                # one int32 bias for each layer, though they share the floats
                name, k = bias, 1
                while name + "_quantized" in quantized:
                    name, k = "%s_%d" % (bias, k), k + 1
                quantized.add(name + "_quantized")
                bias = name
                new_inits += [numpy_helper.from_array(bq, bias + "_quantized"),
                              numpy_helper.from_array(bs, bias + "_scale"),
                              numpy_helper.from_array(np.zeros(bs.shape, np.int32),
                                                      bias + "_zero_point")]
                post.append(helper.make_node("DequantizeLinear", [bias + "_quantized",
                                                                  bias + "_scale",
                                                                  bias + "_zero_point"],
                                             [bias + "_dq"], name=bias + "_DQ", axis=0))
                n.input[2] = bias + "_dq"
    # the nodes, in order, each quantized output right after its producer
    nodes = list(post)
    for name in acts:
        if name in graph_inputs:
            nodes += pre[name]
    for n in g.node:
        for i, x in enumerate(n.input):
            if x in rename:
                n.input[i] = rename[x]
        outs = [o for o in n.output if o in pre and o not in graph_inputs]
        for i, o in enumerate(n.output):
            if o in outs:
                n.output[i] = o + "_f"
        nodes.append(n)
        for o in outs:
            nodes += pre[o]
    del g.node[:]
    g.node.extend(nodes)
    read = {x for n in g.node for x in n.input}
    keep = [t for t in g.initializer if t.name in read]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    return model


def set_nodes(g, nodes):
    """@g's nodes made @nodes, the initializers no node reads any more dropped."""
    del g.node[:]
    g.node.extend(nodes)
    read = {x for n in g.node for x in n.input}
    keep = [t for t in g.initializer if t.name in read]
    del g.initializer[:]
    g.initializer.extend(keep)


# op -> its QOperator kernel (com.microsoft's but QLinearConv and QLinearMatMul)
QLINEAR = {"Conv": "QLinearConv", "MatMul": "QLinearMatMul", "Gemm": "QGemm",
           "Add": "QLinearAdd", "Mul": "QLinearMul", "Concat": "QLinearConcat",
           "GlobalAveragePool": "QLinearGlobalAveragePool", "AveragePool": "QLinearAveragePool",
           "Sigmoid": "QLinearSigmoid", "LeakyRelu": "QLinearLeakyRelu",
           "Softmax": "QLinearSoftmax"}
# data movement quantize_static runs on the 8-bit values (its Direct8BitOp)
DIRECT = {"MaxPool", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Resize",
          "Flatten", "Gather", "Split"}


def qoperator(case, out):
    model = static_model(case)
    g = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    dq = {n.output[0]: n for n in g.node if n.op_type == "DequantizeLinear"}
    readers = {}
    for n in g.node:
        for x in n.input:
            readers.setdefault(x, []).append(n)
    inits = {t.name for t in g.initializer}

    def sole_q(name):
        r = readers.get(name, [])
        return r[0] if len(r) == 1 and r[0].op_type == "QuantizeLinear" else None

    def q8(name):       # the 8-bit value and its scale and zero point
        d = dq.get(name)
        return list(d.input) if d is not None else None

    nodes, gone = [], set()
    for n in g.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            nodes.append(n)
            continue
        q = sole_q(n.output[0]) if len(n.output) == 1 else None
        ins = [q8(x) if x else None for x in n.input]
        op = n.op_type
        new = None
        if op in DIRECT and ins and ins[0] is not None:
            if all(sole_q(o) is not None for o in n.output):
                outs = [sole_q(o).output[0] for o in n.output]
                for o in n.output:
                    gone.add(sole_q(o).name)
                rest = [x if x else "" for x in n.input[1:]]
                rest = [q8(x)[0] if x and q8(x) and x not in inits else x for x in rest]
                if op == "Gather" and q8(n.input[1]):
                    rest = list(n.input[1:])
                new = helper.make_node(op, [ins[0][0]] + rest, outs, name=n.name)
                new.attribute.extend(n.attribute)
        elif op in QLINEAR and q is not None:
            y = [q.input[1], q.input[2]]
            floats = [i for i, x in enumerate(n.input) if x]
            if op in ("Conv", "Gemm"):
                ok = ins[0] and ins[1] and (len(n.input) < 3 or not n.input[2] or ins[2])
                if op == "Gemm":
                    ok = ok and not any(a.name == "transA" and a.i for a in n.attribute)
                if ok:
                    b = [ins[2][0]] if len(n.input) > 2 and n.input[2] else []
                    if op == "Conv":
                        args = ins[0] + ins[1] + y + b
                    else:
                        args = ins[0] + ins[1] + (b if b else [""]) + y
                    new = helper.make_node(QLINEAR[op], args, [q.output[0]], name=n.name,
                                           domain="" if op == "Conv" else "com.microsoft")
                    new.attribute.extend(a for a in n.attribute if a.name != "beta")
            elif all(ins[i] is not None for i in floats):
                if op == "MatMul":
                    args = ins[0] + ins[1] + y
                elif op in ("Add", "Mul"):
                    args = ins[0] + ins[1] + y
                elif op == "Concat":
                    args = y + [x for i in floats for x in ins[i]]
                else:
                    args = ins[0] + y
                new = helper.make_node(QLINEAR[op], args, [q.output[0]], name=n.name,
                                       domain="" if op == "MatMul" else "com.microsoft")
                new.attribute.extend(n.attribute)
                if op == "Softmax":
                    new.attribute.append(helper.make_attribute("opset", opset))
        if new is None:
            nodes.append(n)
        else:
            nodes.append(new)
            if q is not None:
                gone.add(q.name)
    nodes = [n for n in nodes if n.name not in gone or n.op_type != "QuantizeLinear"]
    # what no one reads any more goes (the graph's outputs are read)
    while True:
        read = {x for n in nodes for x in n.input} | {o.name for o in g.output}
        keep = [n for n in nodes if n.op_type not in ("QuantizeLinear", "DequantizeLinear")
                or any(o in read for o in n.output)]
        if len(keep) == len(nodes):
            break
        nodes = keep
    set_nodes(g, nodes)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    save(model, case, out, check=False)


def dynamic(case, out):
    model = onnx.load(os.path.join(case, "model.onnx"))
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, new_inits = [], []
    for n in g.node:
        b = n.input[1] if n.op_type == "MatMul" else ""
        if b not in inits or len(inits[b].dims) != 2:
            nodes.append(n)
            continue
        w = numpy_helper.to_array(inits[b]).astype(np.float32)
        s = np.float32(max(np.abs(w).max(), 1e-8) / WMAX)
        p = n.name or n.output[0]
        new_inits += [numpy_helper.from_array(np.clip(np.rint(w / s), -WMAX, WMAX).astype(np.int8),
                                              b + "_quantized"),
                      numpy_helper.from_array(np.array(s), b + "_scale"),
                      numpy_helper.from_array(np.array(0, np.int8), b + "_zero_point")]
        a = n.input[0]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [a], [p + "_aq", p + "_as", p + "_az"],
                             name=p + "_QuantizeLinear"),
            helper.make_node("MatMulInteger", [p + "_aq", b + "_quantized", p + "_az",
                                               b + "_zero_point"], [p + "_acc"],
                             name=p + "_MatMulInteger"),
            helper.make_node("Cast", [p + "_acc"], [p + "_accf"], to=TensorProto.FLOAT,
                             name=p + "_Cast"),
            helper.make_node("Mul", [p + "_as", b + "_scale"], [p + "_s"], name=p + "_Scale"),
            helper.make_node("Mul", [p + "_accf", p + "_s"], [n.output[0]], name=p + "_Mul"),
        ]
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    save(model, case, out)


def fp16(case, out):
    model = onnx.load(os.path.join(case, "model.onnx"))
    g = model.graph
    F, H = TensorProto.FLOAT, TensorProto.FLOAT16
    keep = {n.input[2] for n in g.node if n.op_type == "Resize" and len(n.input) > 2}

    def half(t):
        if t.data_type == F and t.name not in keep:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16),
                                               t.name))
    for t in g.initializer:
        half(t)
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                half(a.t)
            elif n.op_type == "Cast" and a.name == "to" and a.i == F:
                a.i = H
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == F:
            v.type.tensor_type.elem_type = H
    save(model, case, out)
    d = os.path.join(out, "test_data_set_0")
    for f in os.listdir(d):     # the inputs in float16 too
        t = onnx.TensorProto()
        with open(os.path.join(d, f), "rb") as fi:
            t.ParseFromString(fi.read())
        if t.data_type == F:
            a = numpy_helper.to_array(t).astype(np.float16)
            with open(os.path.join(d, f), "wb") as fo:
                fo.write(numpy_helper.from_array(a, t.name).SerializeToString())


def int4(case, out, block=32):
    model = onnx.load(os.path.join(case, "model.onnx"))
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes = []
    for n in g.node:
        w = inits.get(n.input[1]) if n.op_type == "MatMul" and len(n.input) == 2 else None
        if w is None or len(w.dims) != 2 or w.data_type != TensorProto.FLOAT:
            nodes.append(n)
            continue
        W = numpy_helper.to_array(w).astype(np.float32)        # [K][N]
        K, N = W.shape
        blocks = (K + block - 1) // block
        Wp = np.zeros((blocks * block, N), np.float32)
        Wp[:K] = W
        Wb = Wp.reshape(blocks, block, N)
        lo = np.minimum(Wb.min(1), 0)
        hi = np.maximum(Wb.max(1), 0)
        scale = np.where(hi > lo, (hi - lo) / 15, 1.0).astype(np.float32)   # [blocks][N]
        zp = np.clip(np.rint(-lo / scale), 0, 15).astype(np.uint8)
        q = np.clip(np.rint(Wb / scale[:, None, :]) + zp[:, None, :], 0, 15).astype(np.uint8)
        q = q.transpose(2, 0, 1)                                  # [N][blocks][block]
        packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
        zt = zp.T                                                 # [N][blocks]
        if blocks % 2:
            zt = np.concatenate([zt, np.zeros((N, 1), np.uint8)], 1)
        zpk = (zt[:, 0::2] | (zt[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
        base = n.input[1]
        g.initializer.extend([numpy_helper.from_array(packed, base + "_q4"),
                              numpy_helper.from_array(scale.T.reshape(-1).copy(), base + "_scales"),
                              numpy_helper.from_array(zpk, base + "_zp")])
        nodes.append(helper.make_node("MatMulNBits", [n.input[0], base + "_q4", base + "_scales",
                                                      base + "_zp"], list(n.output),
                                      name=n.name + "_Q4", domain="com.microsoft", K=K, N=N,
                                      bits=4, block_size=block))
    set_nodes(g, nodes)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    save(model, case, out, check=False)


def external(case, out):
    save(onnx.load(os.path.join(case, "model.onnx")), case, out, external=True)


def save(model, case, out, check=True, external=False):
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    del model.graph.value_info[:]
    if check:   # (the checker knows no com.microsoft op)
        onnx.checker.check_model(model)
    onnx.save_model(model, os.path.join(out, "model.onnx"), save_as_external_data=external,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    src = os.path.join(case, "test_data_set_0")
    for f in os.listdir(src):
        if f.startswith("input_"):
            shutil.copy(os.path.join(src, f), os.path.join(out, "test_data_set_0", f))


if __name__ == "__main__":
    modes = {"static": static, "qoperator": qoperator, "dynamic": dynamic, "fp16": fp16,
             "external": external, "int4": int4}
    if len(sys.argv) != 4 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    modes[sys.argv[1]](sys.argv[2], sys.argv[3])
