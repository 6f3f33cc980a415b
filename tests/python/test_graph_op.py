# SPDX-License-Identifier: MIT
"""npu.Graph's methods made from libnpu's registry (npu_graph_op): every
op the ONNX importer knows is a method named as ONNX names it, with ONNX's
semantics, checked against numpy in float64 on each backend this machine
has; refusals raise npu's errors and leave the graph as it was."""
import numpy as np
import pytest

import npu
from test_graph import BACKENDS


def run(g, feeds, fetch, backend):
    g.outputs = list(fetch)
    return g.compile(backend, strict=True).forward(feeds, fetch)


@pytest.mark.parametrize("backend", BACKENDS)
def test_element_functions(backend):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    g = npu.Graph()
    t = g.input(x.shape)
    ys = [g.Tanh(t), g.Exp(t), g.HardSigmoid(t, alpha=0.25, beta=0.5)]
    got = run(g, {t: x}, ys, backend)
    x64 = x.astype(np.float64)
    for y, want in zip(got, [np.tanh(x64), np.exp(x64),
                             np.clip(0.25 * x64 + 0.5, 0, 1)]):
        assert y.shape == x.shape
        np.testing.assert_allclose(y, want, rtol=4e-7, atol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lowered_ops(backend):
    """Einsum, Reshape by a constant shape, TopK's two outputs."""
    r = np.random.default_rng(3)
    a = r.standard_normal((2, 3)).astype(np.float32)
    w = r.standard_normal((3, 4)).astype(np.float32)
    g = npu.Graph()
    ta = g.input(a.shape)
    mm = g.Einsum(ta, g.constant(w), equation="ij,jk->ik")
    flat = g.Reshape(mm, g.constant(np.array([8], np.int64)))
    vals, idx = g.TopK(flat, g.constant(np.array([3], np.int64)), outputs=2)
    got_mm, got_v, got_i = run(g, {ta: a}, [mm, vals, idx], backend)
    want = a.astype(np.float64) @ w
    np.testing.assert_allclose(got_mm, want, rtol=1e-5, atol=1e-6)
    order = np.argsort(-want.reshape(-1), kind="stable")[:3]
    assert list(got_i) == list(order)
    np.testing.assert_allclose(got_v, want.reshape(-1)[order], rtol=1e-5, atol=1e-6)


def test_registry_and_docs():
    ops = npu.Graph.ops()
    assert "Conv" in ops and "dilations" in ops["Conv"][2]
    assert ops["com.microsoft.GroupQueryAttention"][0] == "com.microsoft"
    g = npu.Graph()
    assert "GroupQueryAttention" in dir(g) and "Tanh" in dir(g)
    assert "alpha" in g.LeakyRelu.__doc__
    with pytest.raises(AttributeError):
        g.NoSuchOp


def test_refusals_leave_the_graph():
    g = npu.Graph()
    x = g.input((1, 2, 4, 4))
    w = g.constant(np.zeros((3, 5, 3, 3), np.float32))
    before = g.report
    with pytest.raises(npu.InvalidGraph):
        g.Conv(x, w)                    # 5 input channels for 2
    with pytest.raises(npu.NotImplemented):
        g.Tanh(x, no_such=1)
    with pytest.raises(npu.NotImplemented):
        g.op("NoSuchOp", x)
    with pytest.raises(TypeError):
        g.LeakyRelu(x, alpha=object())
    assert g.report == before
    y = g.Relu(x)
    assert g.shape(y) == (1, 2, 4, 4)
