# SPDX-License-Identifier: MIT
"""npu.Graph and npu.Plan: graphs built, trained and quantized from Python,
checked against numpy in float64 (forward values, gradients, SGD and Adam
steps as PyTorch defines them), on each backend this machine has.

Environment: NPU_PY_PROVIDERS as test_npu.py's (NPUExecutionProvider ->
the "npu" backend, OpenCLExecutionProvider -> "opencl", CPU -> "cpu").
"""
import math
import os
import threading

import numpy as np
import pytest

import npu

_BY_PROVIDER = {"NPUExecutionProvider": "npu", "OpenCLExecutionProvider": "opencl",
                "CPUExecutionProvider": "cpu"}
_PROVIDERS = [p for p in os.environ.get("NPU_PY_PROVIDERS", "").split(",") if p] or \
    npu.get_available_providers()
BACKENDS = [_BY_PROVIDER[p] for p in _PROVIDERS]


def rng(seed=1):
    return np.random.default_rng(seed)


def softmax64(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def mlp(rows=8, k=5, n=4, seed=1, relu=False):
    """logits = x w^T + b and its cross-entropy; (graph, ids, values)."""
    r = rng(seed)
    w0 = r.standard_normal((n, k)).astype(np.float32) * 0.5
    b0 = r.standard_normal(n).astype(np.float32) * 0.1
    g = npu.Graph()
    x = g.input((rows, k))
    labels = g.input((rows,), "int32")
    w, b = g.param(w0), g.param(b0)
    logits = g.dense(x, w, b, relu=relu)
    loss = g.cross_entropy(logits, labels)
    xv = r.standard_normal((rows, k)).astype(np.float32)
    yv = (np.arange(rows) % n).astype(np.int32)
    return g, dict(x=x, labels=labels, w=w, b=b, logits=logits, loss=loss), \
        dict(x=xv, labels=yv, w=w0, b=b0)


def grads64(v):
    """The mean cross-entropy's gradients for w and b, in float64."""
    x, w, b = (v[k].astype(np.float64) for k in ("x", "w", "b"))
    p = softmax64(x @ w.T + b)
    p[np.arange(len(x)), v["labels"]] -= 1.0
    p /= len(x)
    return p.T @ x, p.sum(axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_matches_float64(backend):
    g, t, v = mlp(relu=True)
    plan = g.compile(backend, strict=True)
    (z,) = plan.forward({t["x"]: v["x"]}, fetch=[t["logits"]])
    want = np.maximum(v["x"].astype(np.float64) @ v["w"].T + v["b"], 0)
    assert z.shape == (8, 4) and z.dtype == np.float32
    np.testing.assert_allclose(z, want, rtol=1e-5, atol=1e-5)
    assert plan.placement()[0] == backend
    assert "dense" in plan.report


def conv_pool64(x, w, b):
    """NHWC 3x3 convolution (padding 1), ReLU, 2x2 max pooling: float64."""
    n, h, wd, c = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = np.zeros((n, h, wd, w.shape[0]))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nhwc,oc->nhwo", xp[:, i:i + h, j:j + wd, :], w[:, i, j, :])
    y = np.maximum(y + b, 0)
    return y.reshape(n, h // 2, 2, wd // 2, 2, -1).max(axis=(2, 4))


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_pool_forward_matches_float64(backend):
    r = rng(2)
    xv = r.standard_normal((2, 6, 6, 3)).astype(np.float32)
    wv = r.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
    bv = r.standard_normal(4).astype(np.float32) * 0.1
    g = npu.Graph()
    x = g.input(xv.shape)
    y = g.max_pool(g.conv2d(x, g.constant(wv), g.constant(bv), pad=1, relu=True), 2)
    assert g.shape(y) == (2, 3, 3, 4)
    g.outputs = [y]
    plan = g.compile(backend, strict=True)
    np.testing.assert_allclose(plan.run(x, xv, y), conv_pool64(xv, wv, bv), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sgd_step_and_gradients_match_float64(backend):
    g, t, v = mlp()
    g.backward(t["loss"])
    gw, gb = g.grad(t["w"]), g.grad(t["b"])
    g.optimizer("sgd", lr=0.5)
    plan = g.compile(backend, strict=True)
    loss, dw, db = plan.train({t["x"]: v["x"], t["labels"]: v["labels"]},
                              fetch=[t["loss"], gw, gb])
    want_dw, want_db = grads64(v)
    np.testing.assert_allclose(dw, want_dw, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(db, want_db, rtol=1e-4, atol=1e-6)
    z = v["x"].astype(np.float64) @ v["w"].T + v["b"]
    want_loss = -np.log(softmax64(z)[np.arange(8), v["labels"]])
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(plan.read(t["w"]), v["w"] - 0.5 * want_dw, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(plan.read(t["b"]), v["b"] - 0.5 * want_db, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adam_steps_match_pytorch_definition(backend):
    g, t, v = mlp(seed=3)
    g.backward(t["loss"])
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    g.optimizer("adam", lr=lr, beta1=b1, beta2=b2, eps=eps)
    plan = g.compile(backend, strict=True)
    w, b = v["w"].astype(np.float64), v["b"].astype(np.float64)
    m = [np.zeros_like(w), np.zeros_like(b)]
    s = [np.zeros_like(w), np.zeros_like(b)]
    for step in (1, 2, 3):
        plan.train({t["x"]: v["x"], t["labels"]: v["labels"]})
        grads = grads64(dict(v, w=w, b=b))
        params = [w, b]
        for i, gr in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * gr
            s[i] = b2 * s[i] + (1 - b2) * gr * gr
            mhat, shat = m[i] / (1 - b1 ** step), s[i] / (1 - b2 ** step)
            params[i] = params[i] - lr * mhat / (np.sqrt(shat) + eps)
        w, b = params
    np.testing.assert_allclose(plan.read(t["w"]), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(plan.read(t["b"]), b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_lowers_the_loss_and_set_lr_holds_it(backend):
    g, t, v = mlp(rows=16, k=6, n=3, seed=4)
    g.backward(t["loss"])
    g.optimizer("adam", lr=0.05)
    plan = g.compile(backend)
    feed = {t["x"]: v["x"], t["labels"]: v["labels"]}
    (first,) = plan.forward(feed, fetch=[t["loss"]])
    for _ in range(30):
        plan.train(feed)
    (trained,) = plan.forward(feed, fetch=[t["loss"]])
    assert trained.mean() < 0.5 * first.mean()
    w = plan.read(t["w"])
    plan.set_lr(0.0)
    plan.train(feed)
    np.testing.assert_array_equal(plan.read(t["w"]), w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_quantized_graph_runs_and_matches_the_cpu_reference(backend, tmp_path):
    g, t, v = mlp(rows=8, k=16, n=5, seed=5)
    g.backward(t["loss"])
    g.optimizer("adam")
    plan = g.compile(backend)
    r = rng(6)
    for _ in range(4):
        plan.forward({t["x"]: r.standard_normal((8, 16)).astype(np.float32)})
        plan.observe()
    q, qin, qout = plan.quantize(t["x"], t["logits"])
    assert q.dtype(qin) == "float32" and q.shape(qout) == (8, 5)
    qplan = q.compile(backend)
    qc, cin, cout = plan.quantize(t["x"], t["logits"])
    ref = qc.compile("cpu")
    x = r.standard_normal((8, 16)).astype(np.float32)
    z8 = qplan.run(qin, x, qout)
    np.testing.assert_array_equal(z8, ref.run(cin, x, cout))
    (z32,) = plan.forward({t["x"]: x}, fetch=[t["logits"]])
    assert np.abs(z8 - z32).max() < 0.1 * np.abs(z32).max() + 0.05
    # Saved as ONNX (QDQ), the session gives the int8 graph's outputs.
    path = str(tmp_path / "q.onnx")
    q.save(path)
    sess = npu.InferenceSession(path, providers=["CPUExecutionProvider"])
    (zs,) = sess.run(None, {sess.get_inputs()[0].name: x})
    np.testing.assert_allclose(zs, z8, atol=0.05 * np.abs(z8).max())


@pytest.mark.parametrize("backend", BACKENDS)
def test_transformer_blocks_match_float64(backend):
    r = rng(7)
    a = r.standard_normal((2, 4, 8)).astype(np.float32)
    bm = r.standard_normal((2, 4, 8)).astype(np.float32)
    g = npu.Graph()
    x, y = g.input(a.shape), g.input(bm.shape)
    att = g.softmax(g.matmul(x, y, trans_b=True, alpha=0.5))
    ctx = g.matmul(att, y)
    out = g.gelu(g.layer_norm(g.add(ctx, x), eps=1e-5))
    g.outputs = [out]
    plan = g.compile(backend)
    (got,) = plan.forward({x: a, y: bm}, fetch=[out])
    a64, b64 = a.astype(np.float64), bm.astype(np.float64)
    h = softmax64(0.5 * a64 @ b64.transpose(0, 2, 1)) @ b64 + a64
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    want = h / 2 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_ops_and_casts(backend):
    g = npu.Graph()
    x = g.input((2, 3, 4))
    t = g.transpose(x, (2, 0, 1))
    m = g.mean(x, 2)
    b = g.cast(x, "bfloat16")
    back = g.cast(b, "float32")
    r = g.reshape(x, (6, 4))
    assert g.shape(t) == (4, 2, 3) and g.shape(m) == (2, 3, 1) and g.dtype(b) == "bfloat16"
    g.outputs = [t, m, back, r]
    plan = g.compile(backend)
    xv = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11) / 3
    tv, mv, bv, rv = plan.forward({x: xv}, fetch=[t, m, back, r])
    np.testing.assert_array_equal(tv, xv.transpose(2, 0, 1))
    np.testing.assert_allclose(mv[..., 0], xv.astype(np.float64).mean(2), rtol=1e-6)
    # bf16 keeps fp32's top 16 bits, rounded to nearest even: worked here in integers
    bits = xv.view(np.uint32).astype(np.uint64)
    want = ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(bv, want)
    np.testing.assert_array_equal(plan.read(b), (want.view(np.uint32) >> 16).astype(np.uint16))
    np.testing.assert_array_equal(rv, xv.reshape(6, 4))


def test_graph_errors_are_exceptions_with_libnpu_s_reason():
    g = npu.Graph()
    x = g.input((4, 3))
    w = g.constant(np.zeros((2, 5), np.float32))
    with pytest.raises(npu.NPUError) as e:
        g.dense(x, w)
    assert "fully_connected" in str(e.value) and g.error
    with pytest.raises(npu.InvalidArgument):
        g.input((2,), "complex64")
    with pytest.raises(npu.NPUError):
        g.shape(999)
    with pytest.raises(npu.NPUError):
        g.grad(x)  # no backward graph
    with pytest.raises(npu.InvalidArgument):
        g.optimizer("lion")
    with pytest.raises(ValueError):
        g.constant(np.zeros(3, np.float32), dtype="float32", quant_dim=0,
                   channel_scales=np.ones(2))
    g = npu.Graph()  # the refused dense's output is left without a shape
    x = g.input((4, 3))
    y = g.relu(x)
    plan = g.compile("cpu")
    with pytest.raises(ValueError):
        plan.write(x, np.zeros(5, np.float32))
    with pytest.raises(TypeError):
        plan.write(x, np.zeros((4, 3), np.float64))
    with pytest.raises(TypeError):
        plan.run(x, [[1, 2, 3]] * 4, y)  # a list is not an array of float32
    with pytest.raises(npu.NPUError):
        plan.read(12345)
    with pytest.raises(npu.NPUError):
        g.compile("no-such-backend")
    with pytest.raises(npu.NPUError):
        plan.quantize(x, y)  # never calibrated


def test_plans_of_many_graphs_run_from_threads():
    errors = []

    def work(seed):
        try:
            g, t, v = mlp(seed=seed)
            g.backward(t["loss"])
            g.optimizer("sgd", lr=0.1)
            plan = g.compile("cpu")
            for _ in range(20):
                plan.train({t["x"]: v["x"], t["labels"]: v["labels"]})
            want = v["w"] - 0.1 * grads64(v)[0]
            assert np.isfinite(plan.read(t["w"])).all() and want.shape == (4, 5)
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
