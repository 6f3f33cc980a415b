# SPDX-License-Identifier: MIT
"""Graphs from Python: build, train (autodiff, SGD, Adam), quantize, run.

A thin layer over libnpu's graph API (npu.h, npu_train.h) through
``_npu.Graph``: a tensor is its id (an int), an op method adds the op and
returns its output, whose shape libnpu infers. Everything is computed by
libnpu; Documentation/python.rst shows a whole training loop::

    g = npu.Graph()
    x = g.input((64, 784))
    labels = g.input((64,), "int32")
    h = g.dense(x, g.param(w1), g.param(b1), relu=True)
    logits = g.dense(h, g.param(w2), g.param(b2))
    loss = g.cross_entropy(logits, labels)
    g.backward(loss)
    g.optimizer("adam", lr=1e-3)
    plan = g.compile()
    plan.train({x: images, labels: classes})
"""

import numpy as np

from . import _npu
from .errors import InvalidArgument, _NPU_EINVAL, _wrap

# dtype names (numpy's, and "bfloat16") -> enum npu_dtype, and back.
_DTYPES = {
    "float32": _npu.DT_FLOAT32, "int8": _npu.DT_INT8, "uint8": _npu.DT_UINT8,
    "int32": _npu.DT_INT32, "int64": _npu.DT_INT64, "bool": _npu.DT_BOOL,
    "bfloat16": _npu.DT_BFLOAT16, "float16": _npu.DT_FLOAT16,
}
_NAMES = {v: k for k, v in _DTYPES.items()}
_BACKENDS = {
    "auto": _npu.BACKEND_AUTO, "npu": _npu.BACKEND_NPU, "opencl": _npu.BACKEND_OPENCL,
    "cpu": _npu.BACKEND_CPU, "onednn": _npu.BACKEND_ONEDNN,
}
_OPTIMIZERS = {"sgd": _npu.OPTIM_SGD, "adam": _npu.OPTIM_ADAM, "adamw": _npu.OPTIM_ADAMW}


def _dtype(d):
    name = d if isinstance(d, str) else np.dtype(d).name
    if name not in _DTYPES:
        raise InvalidArgument("no dtype %r here (%s)" % (d, ", ".join(_DTYPES)), _NPU_EINVAL)
    return _DTYPES[name]


def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _npu.Error as e:
        raise _wrap(e) from None


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _pads(p):
    """One padding for every side, (height, width), or (top, left, bottom, right)."""
    if isinstance(p, int):
        return (p,) * 4
    p = tuple(p)
    return p * 2 if len(p) == 2 else p


_REGISTRY = None


def _registry():
    """libnpu's registry of ops, read once: [(name, domain, opset, attrs)]."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _npu.op_info()
    return _REGISTRY


def _methods():
    """Graph's methods made from the registry: ONNX's default domain first,
    then onnxruntime's ops under the names the default domain leaves."""
    m = {}
    for n, d, v, a in sorted(_registry(), key=lambda e: e[1] is not None):
        m.setdefault(n, (d, v, a))
    return m


class Graph:
    """A libnpu graph: tensors (ids) and ops, compiled into Plans."""

    def __init__(self, _graph=None):
        self._g = _graph if _graph is not None else _npu.Graph()

    # ---- tensors -------------------------------------------------------

    def activation(self, shape=(), dtype="float32", scale=1.0, zero_point=0, layout="nhwc"):
        """A tensor ops write or a run feeds; shape () lets the op that
        writes it infer it. int8 ones have a scale and zero point."""
        return _call(self._g.tensor, _dtype(dtype), tuple(shape), None, scale, zero_point,
                     None, 0, _npu.LAYOUT_NCHW if layout == "nchw" else _npu.LAYOUT_NHWC)

    def input(self, shape, dtype="float32", name=None, scale=1.0, zero_point=0):
        """An activation the caller feeds, declared among the graph's inputs."""
        t = self.activation(shape, dtype, scale, zero_point)
        if name:
            _call(self._g.set_name, t, name)
        _call(self._g.declare, False, self._g.declared(False) + [t])
        return t

    def constant(self, value, dtype=None, scale=1.0, zero_point=0, channel_scales=None,
                 quant_dim=0):
        """A constant holding ``value`` (copied), of its dtype unless one is
        given: weights, biases (int32 for int8 layers), tables."""
        value = np.asarray(value)
        dt = _dtype(dtype if dtype is not None else value.dtype)
        store = np.uint16 if dt == _npu.DT_BFLOAT16 else np.dtype(_NAMES[dt])
        data = np.ascontiguousarray(value, dtype=store)
        cs = None if channel_scales is None else np.ascontiguousarray(channel_scales,
                                                                       dtype=np.float32)
        return _call(self._g.tensor, dt, data.shape, data, scale, zero_point, cs, quant_dim)

    def param(self, value):
        """A trainable fp32 constant with ``value`` as its initial value."""
        t = self.constant(np.asarray(value, dtype=np.float32))
        _call(self._g.param, t)
        return t

    def shape(self, t):
        return _call(self._g.info, t)[1]

    def dtype(self, t):
        return _NAMES[_call(self._g.info, t)[0]]

    def quantization(self, t):
        """(scale, zero_point) of an int8 tensor."""
        return tuple(_call(self._g.info, t)[2:])

    def name(self, t):
        return self._g.name(t)

    def set_name(self, t, name):
        _call(self._g.set_name, t, name)

    @property
    def inputs(self):
        return self._g.declared(False)

    @inputs.setter
    def inputs(self, ids):
        _call(self._g.declare, False, list(ids))

    @property
    def outputs(self):
        return self._g.declared(True)

    @outputs.setter
    def outputs(self, ids):
        _call(self._g.declare, True, list(ids))

    # ---- ops: each returns its output tensor ------------------------------

    def _out(self, dtype="float32", scale=1.0, zero_point=0, out=None):
        return out if out is not None else self.activation((), dtype, scale, zero_point)

    def _like(self, t, out=None, shape=(), **q):
        """An output of ``t``'s dtype (and quantization, unless given), of
        ``shape`` (): inferred by the op, as libnpu's int8 and layer ops do;
        the N-dimensional fp32 ops get theirs from here)."""
        if out is not None:
            return out
        dt, _, scale, zp = _call(self._g.info, t)
        return self.activation(shape, _NAMES[dt], q.get("scale", scale),
                               q.get("zero_point", zp))

    def _same(self, x, out=None, **q):
        return self._like(x, out, self.shape(x), **q)

    def dense(self, x, w, b=None, relu=False, out=None, **q):
        """x [.., k] times w [n][k] transposed, plus b [n]: fully connected."""
        y = self._like(x, out, **q)
        _call(self._g.fully_connected, x, w, -1 if b is None else b, y,
              _npu.ACT_RELU if relu else _npu.ACT_NONE)
        return y

    def conv2d(self, x, w, b=None, stride=1, pad=0, dilation=1, relu=False, groups=0,
               depthwise=False, out=None, **q):
        """NHWC x, OHWI w [out_c][k_h][k_w][in_c / groups], zero padding."""
        y = self._like(x, out, **q)
        _call(self._g.conv2d, x, w, -1 if b is None else b, y, stride=_pair(stride),
              pad=_pads(pad), dilation=_pair(dilation), depthwise=depthwise,
              act=_npu.ACT_RELU if relu else _npu.ACT_NONE, groups=groups)
        return y

    def max_pool(self, x, kernel, stride=None, pad=0, out=None):
        y = self._like(x, out)
        _call(self._g.pool, x, y, _pair(kernel), _pair(stride or kernel), _pads(pad), False)
        return y

    def avg_pool(self, x, kernel, stride=None, pad=0, out=None):
        y = self._like(x, out)
        _call(self._g.pool, x, y, _pair(kernel), _pair(stride or kernel), _pads(pad), True)
        return y

    def relu(self, x, out=None):
        y = self._same(x, out)
        _call(self._g.relu, x, y)
        return y

    def _binary(self, fn, a, b, out, act=None, **q):
        shape = ()
        if self.dtype(a) == "float32":  # numpy's broadcast, as libnpu's
            shape = np.broadcast_shapes(self.shape(a), self.shape(b))
        y = self._like(a, out, shape, **q)
        _call(fn, a, b, y) if act is None else _call(fn, a, b, y, act)
        return y

    def add(self, a, b, relu=False, out=None, **q):
        return self._binary(self._g.add, a, b, out, _npu.ACT_RELU if relu else 0, **q)

    def mul(self, a, b, relu=False, out=None, **q):
        return self._binary(self._g.mul, a, b, out, _npu.ACT_RELU if relu else 0, **q)

    def sub(self, a, b, out=None):
        return self._binary(self._g.sub, a, b, out)

    def div(self, a, b, out=None):
        return self._binary(self._g.div, a, b, out)

    def softmax(self, x, beta=1.0, out=None, **q):
        """Over the last dim (int8: out scale 1/256, zero point -128)."""
        if out is None and self.dtype(x) == "int8":
            q.setdefault("scale", 1.0 / 256)
            q.setdefault("zero_point", -128)
        y = self._same(x, out, **q)
        _call(self._g.softmax, x, y, beta)
        return y

    def layer_norm(self, x, scale=None, bias=None, eps=1e-5, out=None):
        """Over the last dim; ``scale`` (default ones) and ``bias`` (or
        none) hold one value per entry of it."""
        if scale is None:
            scale = self.constant(np.ones(self.shape(x)[-1:], np.float32))
        y = self._same(x, out)
        _call(self._g.layer_norm, x, scale,
              -1 if bias is None else bias, y, eps)
        return y

    def gelu(self, x, tanh_approx=False, out=None):
        y = self._same(x, out)
        _call(self._g.gelu, x, y, tanh_approx)
        return y

    def matmul(self, a, b, trans_b=False, alpha=1.0, out=None, **q):
        """a [..][m][k] x b [..][k][n] (or [..][n][k] with trans_b), times alpha."""
        sa, sb = self.shape(a), self.shape(b)
        shape = ()
        if len(sa) >= 2 and len(sb) >= 2:
            shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + \
                (sa[-2], sb[-2] if trans_b else sb[-1])
        if out is None and self.dtype(a) == "bfloat16":
            out = self.activation(shape, "float32")
        y = self._like(a, out, shape, **q)
        _call(self._g.matmul, a, b, y, trans_b, alpha)
        return y

    def transpose(self, x, perm, out=None):
        """Out dim d is x's dim perm[d]."""
        shape = self.shape(x)
        y = self._like(x, out, tuple(shape[p] for p in perm) if
                       sorted(perm) == list(range(len(shape))) else ())
        _call(self._g.transpose, x, y, list(perm))
        return y

    def reshape(self, x, shape, out=None):
        """A view of x with another shape (same element count)."""
        if out is None:
            dt, _, scale, zp = _call(self._g.info, x)
            out = self.activation(shape, _NAMES[dt], scale, zp)
        _call(self._g.reshape, x, out)
        return out

    def concat(self, xs, axis, out=None):
        y = self._like(xs[0], out)
        _call(self._g.concat, list(xs), y, axis)
        return y

    def pad(self, x, before, after, out=None):
        y = self._like(x, out)
        _call(self._g.pad, x, y, list(before), list(after))
        return y

    def quantize(self, x, scale, zero_point=0, dtype="int8", out=None):
        """fp32 -> int8 with this scale and zero point."""
        y = out if out is not None else self._out(dtype, scale, zero_point)
        _call(self._g.quantize, x, y)
        return y

    def dequantize(self, q, out=None):
        y = out if out is not None else self._out("float32")
        _call(self._g.dequantize, q, y)
        return y

    def cast(self, x, dtype, out=None):
        y = out if out is not None else self.activation(self.shape(x), dtype)
        _call(self._g.cast, x, y)
        return y

    def mean(self, x, axis, out=None):
        """The mean over dim ``axis``, kept as a dim of 1."""
        shape = list(self.shape(x))
        if 0 <= axis < len(shape):
            shape[axis] = 1
        y = self._like(x, out, tuple(shape))
        _call(self._g.mean, x, y, axis)
        return y

    # ---- training ---------------------------------------------------------

    def cross_entropy(self, logits, labels, out=None):
        """Softmax cross-entropy per row of logits [rows][classes] with int32
        labels [rows]: the loss [rows] whose mean training minimises."""
        y = out if out is not None else self.activation((self.shape(logits)[0],))
        _call(self._g.xent, logits, labels, y)
        return y

    # ---- any op of libnpu's registry, by its ONNX name --------------------

    def op(self, op_type, *inputs, outputs=1, domain=None, opset=0, **attrs):
        """Any op of libnpu's registry (``npu.Graph.ops()``), with ONNX's
        semantics, as a model's node is imported (npu_graph_op): tensors
        are arrays in the order their dims say; ``inputs`` are tensor ids
        (None for an absent optional one); attributes are keywords (an
        int, a float, a str, or a list of ints or of floats); ``opset`` 0
        is the newest libnpu knows. Returns the output's id, or a tuple of
        ``outputs`` ids."""
        ids = _call(self._g.op, op_type, domain, opset,
                    [-1 if i is None else i for i in inputs], outputs, attrs)
        return ids[0] if outputs == 1 else tuple(ids)

    @staticmethod
    def ops():
        """The registry: {name: (domain, first opset, attribute names)};
        onnxruntime's ops (domain "com.microsoft") under "com.microsoft.NAME"."""
        return {(n if d is None else d + "." + n): (d, v, a) for n, d, v, a in _registry()}

    def __getattr__(self, name):
        """Each op of the registry is a method named as ONNX names it:
        ``g.Tanh(x)``, ``g.Einsum(a, b, equation="ij,jk->ik")``,
        ``g.TopK(x, k, outputs=2)``, ``g.GroupQueryAttention(...)`` (made
        from the registry, not written one by one)."""
        entry = _methods().get(name)
        if entry is None or name.startswith("_"):
            raise AttributeError("%r: no attribute or op of libnpu's registry %r"
                                 % (type(self).__name__, name))
        domain, opset, attrs = entry

        def method(*inputs, outputs=1, opset=0, **kw):
            return self.op(name, *inputs, outputs=outputs, domain=domain, opset=opset, **kw)
        method.__name__ = name
        method.__doc__ = "%s%s, from opset %d; attributes: %s (Graph.op)" % (
            name, " (%s)" % domain if domain else "", opset, ", ".join(attrs) or "none")
        return method

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_methods()))

    def backward(self, loss):
        """Append the backward graph of the mean of ``loss``."""
        _call(self._g.backward, loss)

    def grad(self, t):
        """The gradient tensor of ``t`` (after backward)."""
        return _call(self._g.grad, t)

    def optimizer(self, algo="adam", lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                  weight_decay=0.0, momentum=None):
        """A step for every parameter: "sgd" (``momentum``, or none),
        "adam" or "adamw", as PyTorch defines them."""
        if algo not in _OPTIMIZERS:
            raise InvalidArgument("no optimizer %r (%s)" % (algo, ", ".join(_OPTIMIZERS)),
                                  _NPU_EINVAL)
        if algo == "sgd":
            beta1 = momentum or 0.0
        _call(self._g.optimizer, _OPTIMIZERS[algo], lr, beta1, beta2, eps, weight_decay)

    # ---- compiling, saving -------------------------------------------------

    def compile(self, backend="auto", strict=False, reuse_memory=False):
        """A Plan: the ops placed ("auto": the NPU, else OpenCL, else the CPU;
        or "npu", "opencl", "onednn", "cpu", or a registered backend's name)."""
        if backend in _BACKENDS:
            p = _call(self._g.compile, _BACKENDS[backend], strict, reuse_memory)
        else:
            p = _call(self._g.compile, _npu.BACKEND_AUTO, strict, reuse_memory, backend)
        return Plan(p, self)

    def save(self, path):
        """The graph (inputs and outputs declared) as an ONNX model."""
        _call(self._g.save, path)

    @property
    def report(self):
        """The last compile's placement report (also when it failed)."""
        return self._g.report

    @property
    def error(self):
        return self._g.error


class Plan:
    """A compiled graph: runs, training steps, calibration, quantization."""

    def __init__(self, plan, graph):
        self._p = plan
        self.graph = graph

    def write(self, t, value):
        """Tensor ``t``'s values (an input, labels, a parameter)."""
        _call(self._p.write, t, np.asarray(value))

    def read(self, t):
        """Tensor ``t``'s values: an output, a parameter, a gradient."""
        return _call(self._p.read, t)

    def _feed(self, feeds):
        for t, v in (feeds or {}).items():
            self.write(t, v)

    def forward(self, feeds=None, fetch=()):
        """Write ``feeds`` ({tensor: array}), run the forward ops, and read
        the tensors in ``fetch``."""
        self._feed(feeds)
        _call(self._p.exec, False)
        return [self.read(t) for t in fetch]

    def train(self, feeds=None, fetch=()):
        """One training step: forward, backward, optimizer."""
        self._feed(feeds)
        _call(self._p.exec, True)
        return [self.read(t) for t in fetch]

    def run(self, inp, value, out):
        """One input in, one output back: npu_plan_run."""
        return _call(self._p.run, inp, np.asarray(value), out)

    def set_lr(self, lr):
        _call(self._p.set_lr, lr)

    def observe(self):
        """Fold the last forward run's activation ranges into calibration."""
        _call(self._p.observe)

    def quantize(self, inp, out):
        """The int8 graph of this calibrated fp32 plan, from ``inp`` to the
        logits ``out``: (Graph, its fp32 input, its fp32 output)."""
        g, qi, qo = _call(self._p.quantize, inp, out)
        return Graph(g), qi, qo

    def stats(self):
        return _call(self._p.stats)

    def placement(self):
        """The backend of each op, in the order the ops were added."""
        return self._p.backends()

    @property
    def report(self):
        return self._p.report

    @property
    def cycles(self):
        """Modeled NPU cycles of the last run (0 off the NPU)."""
        return self._p.cycles
