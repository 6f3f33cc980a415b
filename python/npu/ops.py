# SPDX-License-Identifier: MIT
"""One op on numpy arrays, in one call, placed as libnpu places any op: on
the NPU when its firmware has it, else OpenCL, else the CPU reference
($NPU_BACKEND and $NPU_STRICT as for graphs).

The int8 ops are libnpu's one-call helpers (npu_run_* of npu.h), TFLite's
arithmetic, their parameters named as the C structs' fields. The fp32 ops
are one-op graphs (npu.Graph), compiled once per shape and kept."""

import threading

import numpy as np

from . import _npu
from .errors import _wrap
from .graph import Graph

__all__ = [
    "gemm_i8", "conv2d_i8", "pool_i8", "softmax_i8", "eltwise_i8", "quantize",
    "dequantize", "transpose", "pad_i8", "concat", "quantize_multiplier",
    "matmul", "dense", "conv2d", "max_pool", "avg_pool", "relu", "softmax",
    "layer_norm", "gelu", "add", "mul", "sub", "div",
]


def _wrapped(fn):
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _npu.Error as e:
            raise _wrap(e) from None
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


gemm_i8 = _wrapped(_npu.gemm_i8)
conv2d_i8 = _wrapped(_npu.conv2d_i8)
pool_i8 = _wrapped(_npu.pool_i8)
softmax_i8 = _wrapped(_npu.softmax_i8)
eltwise_i8 = _wrapped(_npu.eltwise_i8)
quantize = _wrapped(_npu.quantize)
dequantize = _wrapped(_npu.dequantize)
transpose = _wrapped(_npu.transpose)
pad_i8 = _wrapped(_npu.pad_i8)
concat = _wrapped(_npu.concat)
quantize_multiplier = _wrapped(_npu.quantize_multiplier)

# fp32 ops: (name, shapes, attributes) -> (plan, input ids, output id).
_plans = {}
_lock = threading.Lock()
_MAX_PLANS = 64


def _f32(x):
    return np.ascontiguousarray(x, dtype=np.float32)


def _one_op(key, arrays, build, constants=()):
    """Run the one-op graph ``build(g, inputs, constants) -> output`` on
    ``arrays``; its plan is kept per shape, unless it has ``constants``
    (weights: part of the plan)."""
    arrays = [_f32(a) for a in arrays]
    constants = [None if c is None else _f32(c) for c in constants]
    key = (key,) + tuple(a.shape for a in arrays)
    with _lock:
        entry = None if constants else _plans.get(key)
        if entry is None:
            g = Graph()
            ins = [g.input(a.shape) for a in arrays]
            out = build(g, ins, [None if c is None else g.constant(c) for c in constants])
            g.outputs = [out]
            entry = (g.compile(), ins, out, threading.Lock())
            if not constants:
                if len(_plans) >= _MAX_PLANS:
                    _plans.pop(next(iter(_plans)))
                _plans[key] = entry
    plan, ins, out, lock = entry
    with lock:  # a plan runs one call at a time
        for t, a in zip(ins, arrays):
            plan.write(t, a)
        return plan.forward(fetch=[out])[0]


def matmul(a, b, trans_b=False, alpha=1.0):
    """alpha * a @ b (b transposed with trans_b), numpy's batch broadcasting."""
    return _one_op(("matmul", bool(trans_b), float(alpha)), [a, b],
                   lambda g, i, c: g.matmul(i[0], i[1], trans_b, alpha))


def dense(x, w, b=None, relu=False):
    """x @ w.T + b: a fully connected layer, w [n][k] and b [n] its weights."""
    return _one_op(("dense", bool(relu)), [x], lambda g, i, c: g.dense(i[0], c[0], c[1], relu),
                   [w, b])


def conv2d(x, w, b=None, stride=1, pad=0, dilation=1, groups=0, relu=False):
    """NHWC x, OHWI weights w: a 2-D convolution with zero padding."""
    return _one_op(("conv2d",), [x], lambda g, i, c: g.conv2d(
        i[0], c[0], c[1], stride, pad, dilation, relu, groups), [w, b])


def max_pool(x, kernel, stride=None):
    """NHWC max pooling, no padding."""
    return _one_op(("max_pool", str(kernel), str(stride)), [x],
                   lambda g, i, c: g.max_pool(i[0], kernel, stride))


def avg_pool(x, kernel, stride=None):
    """NHWC average pooling, no padding."""
    return _one_op(("avg_pool", str(kernel), str(stride)), [x],
                   lambda g, i, c: g.avg_pool(i[0], kernel, stride))


def relu(x):
    return _one_op(("relu",), [x], lambda g, i, c: g.relu(i[0]))


def softmax(x):
    """Over the last dim."""
    return _one_op(("softmax",), [x], lambda g, i, c: g.softmax(i[0]))


def layer_norm(x, scale=None, bias=None, eps=1e-5):
    """Over the last dim, with optional per-entry scale and bias."""
    arrays = [x] + [a for a in (scale, bias) if a is not None]

    def build(g, i, c):
        rest = iter(i[1:])
        return g.layer_norm(i[0], next(rest) if scale is not None else None,
                            next(rest) if bias is not None else None, eps)
    return _one_op(("layer_norm", scale is None, bias is None, float(eps)), arrays, build)


def gelu(x, tanh_approx=False):
    return _one_op(("gelu", bool(tanh_approx)), [x], lambda g, i, c: g.gelu(i[0], tanh_approx))


def add(a, b):
    """a + b with numpy broadcasting."""
    return _one_op(("add",), [a, b], lambda g, i, c: g.add(i[0], i[1]))


def mul(a, b):
    return _one_op(("mul",), [a, b], lambda g, i, c: g.mul(i[0], i[1]))


def sub(a, b):
    return _one_op(("sub",), [a, b], lambda g, i, c: g.sub(i[0], i[1]))


def div(a, b):
    return _one_op(("div",), [a, b], lambda g, i, c: g.div(i[0], i[1]))
