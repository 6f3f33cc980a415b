# SPDX-License-Identifier: MIT
"""npu.ops: one op on numpy arrays in one call, wherever libnpu places it
(the NPU in the guest, OpenCL or the CPU on the host), against oracles
written here from TFLite's definitions (int64 numpy) and numpy in float64.
"""
import math

import numpy as np
import pytest

import npu
from npu import ops


def rng(seed):
    return np.random.default_rng(seed)


def i8(r, shape):
    return r.integers(-128, 128, size=shape, dtype=np.int64).astype(np.int8)


# ---- TFLite's requantization, from its definition ------------------------

def srdhm(a, b):
    """SaturatingRoundingDoublingHighMul of int64 arrays (b a Q31 int32)."""
    ab = a.astype(np.int64) * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    q = ab + nudge
    # C's division truncates toward zero; numpy's // floors.
    res = np.where(q >= 0, q // (1 << 31), -((-q) // (1 << 31)))
    return np.where((a == -2 ** 31) & (b == -2 ** 31), 2 ** 31 - 1, res)


def rdbpot(x, exponent):
    """RoundingDivideByPOT: x / 2^exponent, ties away from zero."""
    if exponent == 0:
        return x
    mask = (1 << exponent) - 1
    rem = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (rem > threshold)


def requant(acc, mult, shift):
    """MultiplyByQuantizedMultiplier: shift > 0 left, < 0 right."""
    left = max(shift, 0)
    return rdbpot(srdhm(acc * (1 << left), mult), max(-shift, 0))


def test_quantize_multiplier_is_tflite_s():
    for real in (0.5, 0.25, 0.0009765625, 0.3, 1.7, 1e-6):
        m, s = ops.quantize_multiplier(real)
        assert 2 ** 30 <= m < 2 ** 31
        assert abs(m * 2.0 ** (s - 31) - real) <= real * 2 ** -30
    with pytest.raises(ValueError):
        ops.quantize_multiplier(-1.0)


def test_gemm_i8_matches_the_definition():
    r = rng(1)
    a, b = i8(r, (7, 33)), i8(r, (5, 33))
    bias = r.integers(-5000, 5000, size=5).astype(np.int32)
    mult = np.array([ops.quantize_multiplier(s)[0] for s in (0.01, 0.02, 0.005, 0.03, 0.011)],
                    np.int32)
    shift = np.array([ops.quantize_multiplier(s)[1] for s in (0.01, 0.02, 0.005, 0.03, 0.011)],
                     np.int32)
    got = ops.gemm_i8(a, b, bias, mult, shift, a_zero=3, out_zero=-2, act_min=-100,
                      act_max=120)
    acc = (a.astype(np.int64) - 3) @ b.astype(np.int64).T + bias
    want = np.stack([requant(acc[:, j], int(mult[j]), int(shift[j])) for j in range(5)], 1)
    np.testing.assert_array_equal(got, np.clip(want - 2, -100, 120).astype(np.int8))
    # One multiplier for every channel.
    got = ops.gemm_i8(a, b, None, mult[:1], shift[:1])
    want = requant((a.astype(np.int64)) @ b.astype(np.int64).T, int(mult[0]), int(shift[0]))
    np.testing.assert_array_equal(got, np.clip(want, -128, 127).astype(np.int8))


def test_conv2d_i8_matches_the_definition():
    r = rng(2)
    x, w = i8(r, (1, 6, 5, 3)), i8(r, (4, 3, 3, 3))
    bias = r.integers(-2000, 2000, size=4).astype(np.int32)
    m, s = ops.quantize_multiplier(0.004)
    got = ops.conv2d_i8(x, w, bias, np.array([m], np.int32), np.array([s], np.int32),
                        stride=(2, 1), pad=(1, 1), in_zero=-1, out_zero=4)
    assert got.shape == (1, 3, 5, 4)
    xp = np.pad(x.astype(np.int64) + 1, ((0, 0), (1, 1), (1, 1), (0, 0)))
    acc = np.zeros((1, 3, 5, 4), np.int64)
    for oy in range(3):
        for ox in range(5):
            win = xp[0, 2 * oy:2 * oy + 3, ox:ox + 3, :]
            acc[0, oy, ox] = np.einsum("hwc,ohwc->o", win, w.astype(np.int64))
    want = np.clip(requant(acc + bias, m, s) + 4, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(got, want)


def test_pool_i8_max_and_average():
    r = rng(3)
    x = i8(r, (2, 6, 6, 5))
    got = ops.pool_i8(x, (2, 2), (2, 2))
    np.testing.assert_array_equal(got, x.reshape(2, 3, 2, 3, 2, 5).max(axis=(2, 4)))
    got = ops.pool_i8(x, (3, 3), (3, 3), average=True)
    s = x.astype(np.int64).reshape(2, 2, 3, 2, 3, 5).sum(axis=(2, 4))
    want = np.where(s >= 0, (s + 4) // 9, -((-s + 4) // 9))  # ties away from zero
    np.testing.assert_array_equal(got, want.astype(np.int8))


def test_quantize_and_dequantize():
    x = np.array([0.0, 0.25, 0.75, -0.25, -0.75, 100.0, -100.0, 1.3], np.float32)
    q = ops.quantize(x, 0.5, 1)
    # round(x / scale) half away from zero, plus the zero point, saturated
    np.testing.assert_array_equal(q, np.array([1, 2, 3, 0, -1, 127, -128, 4], np.int8))
    np.testing.assert_array_equal(ops.dequantize(q, 0.5, 1),
                                  (q.astype(np.float64) - 1) * 0.5)


def test_softmax_i8_is_softmax_within_a_step():
    r = rng(4)
    x = i8(r, (3, 10))
    got = ops.softmax_i8(x, 0.1)
    want = np.exp(0.1 * x) / np.exp(0.1 * x).sum(axis=1, keepdims=True)
    assert got.dtype == np.int8 and got.shape == x.shape
    assert np.abs((got.astype(np.float64) + 128) / 256 - want).max() <= 1.5 / 256


def test_eltwise_i8_mul_with_broadcasting():
    r = rng(5)
    a, b = i8(r, (2, 3, 4)), i8(r, (4,))
    m, s = ops.quantize_multiplier(0.01)
    got = ops.eltwise_i8(a, b, mul=True, a_zero=1, b_zero=-2, out_zero=3, out_mult=m,
                         out_shift=s)
    prod = (a.astype(np.int64) - 1) * (b.astype(np.int64) + 2)
    np.testing.assert_array_equal(got, np.clip(requant(prod, m, s) + 3, -128, 127))
    with pytest.raises(ValueError):
        ops.eltwise_i8(a, i8(r, (3,)), mul=True)


def test_transpose_pad_concat_are_numpy_s():
    r = rng(6)
    x = r.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(ops.transpose(x, (2, 0, 1)), x.transpose(2, 0, 1))
    q = i8(r, (2, 3))
    np.testing.assert_array_equal(ops.pad_i8(q, (1, 0), (0, 2), value=-7),
                                  np.pad(q, ((1, 0), (0, 2)), constant_values=-7))
    parts = [r.integers(0, 9, size=(2, n, 3)).astype(np.int16) for n in (1, 4, 2)]
    np.testing.assert_array_equal(ops.concat(parts, 1), np.concatenate(parts, 1))


def test_int8_op_errors_are_clear():
    a = np.zeros((2, 3), np.int8)
    one = np.array([1 << 30], np.int32)
    with pytest.raises(TypeError):
        ops.gemm_i8(a.astype(np.int16), a, None, one, one)
    with pytest.raises(ValueError):
        ops.gemm_i8(a, np.zeros((2, 4), np.int8), None, one, one)
    with pytest.raises(ValueError):
        ops.gemm_i8(a, a, np.zeros(5, np.int32), one, one)
    with pytest.raises(ValueError):
        ops.conv2d_i8(np.zeros((1, 2, 2, 1), np.int8), np.zeros((1, 3, 3, 1), np.int8), None,
                      one, one)
    with pytest.raises(ValueError):
        ops.transpose(np.zeros((2, 2), np.float32), (0, 0, 1))
    with pytest.raises(TypeError):
        ops.transpose(np.zeros((2, 2)), (0, 1))  # 8-byte elements
    with pytest.raises(npu.NPUError):
        ops.pool_i8(np.zeros((1, 4, 4, 1), np.int8), (2, 2), (2, 2), act_min=5, act_max=-5)


# ---- fp32 ops against numpy in float64 -----------------------------------

def test_fp32_ops_match_float64():
    r = rng(7)
    a = r.standard_normal((2, 3, 5)).astype(np.float32)
    b = r.standard_normal((5, 4)).astype(np.float32)
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.matmul(a, b), a.astype(np.float64) @ b, **tol)
    np.testing.assert_allclose(ops.matmul(a, b.T.copy(), trans_b=True, alpha=0.5),
                               0.5 * (a.astype(np.float64) @ b), **tol)
    x = r.standard_normal((6, 5)).astype(np.float32)
    w = r.standard_normal((3, 5)).astype(np.float32)
    bias = r.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(ops.dense(x, w, bias, relu=True),
                               np.maximum(x.astype(np.float64) @ w.T + bias, 0), **tol)
    np.testing.assert_allclose(ops.relu(x), np.maximum(x, 0), **tol)
    z = x.astype(np.float64)
    e = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(ops.softmax(x), e / e.sum(1, keepdims=True), **tol)
    ln = (z - z.mean(1, keepdims=True)) / np.sqrt(z.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ops.layer_norm(x), ln, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ops.gelu(x), z / 2 * (1 + np.vectorize(math.erf)(z / 2 ** 0.5)),
                               **tol)
    row = r.standard_normal(5).astype(np.float32) + 3
    np.testing.assert_allclose(ops.add(x, row), z + row, **tol)
    np.testing.assert_allclose(ops.sub(x, row), z - row, **tol)
    np.testing.assert_allclose(ops.mul(x, row), z * row, **tol)
    np.testing.assert_allclose(ops.div(x, row), z / row, **tol)
    img = r.standard_normal((1, 4, 4, 2)).astype(np.float32)
    np.testing.assert_allclose(ops.max_pool(img, 2), img.reshape(1, 2, 2, 2, 2, 2)
                               .max(axis=(2, 4)), **tol)
    np.testing.assert_allclose(ops.avg_pool(img, 2), img.astype(np.float64)
                               .reshape(1, 2, 2, 2, 2, 2).mean(axis=(2, 4)), **tol)
    k = r.standard_normal((3, 1, 1, 2)).astype(np.float32)  # a 1x1 convolution
    np.testing.assert_allclose(ops.conv2d(img, k), img.astype(np.float64) @ k[:, 0, 0, :].T,
                               **tol)
    # Same shapes again: the kept plan, fresh values.
    x2 = r.standard_normal((6, 5)).astype(np.float32)
    np.testing.assert_allclose(ops.relu(x2), np.maximum(x2, 0), **tol)
    with pytest.raises(npu.NPUError):
        ops.matmul(a, np.zeros((4, 4), np.float32))
