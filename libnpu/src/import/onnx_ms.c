// SPDX-License-Identifier: MIT
/*
 * onnx_ms.c - the contrib ops onnxruntime's transformer optimizer writes
 * (domain com.microsoft, and SimplifiedLayerNormalization, which it
 * registers in the default domain), from their published definitions:
 * the GELU family, and layer and RMS normalization with the residual add
 * before them. Each is lowered onto the IR's own ops, so every backend
 * runs it as it runs those, the NPU included.
 */
#include <math.h>
#include <string.h>

#include "import/onnx.h"

/* @fn of @x into a value of the node's own, or output 0 with @res NULL. */
static int unary_of(struct onnx *o, enum nd_fn fn, float alpha, struct oval *x,
		    struct oval *res)
{
	struct nd_unary u = { .fn = fn, .alpha = alpha };

	return onnx_unary_of(o, &u, x, res);
}

/* Input @i plus input @j (and @k where given): the residual adds before a norm. */
static int sum_of(struct onnx *o, uint32_t i, uint32_t j, uint32_t k, struct oval *res)
{
	struct oval *a = onnx_in(o, i), *b = onnx_in(o, j), *c = k ? onnx_in(o, k) : NULL, ab;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "input and skip are needed");
	TRY(onnx_want_dt(o, a, F32, "input"));
	if (!c)
		return onnx_binary_of(o, ND_ADD, a, b, res);
	TRY(onnx_binary_of(o, ND_ADD, a, b, &ab));
	return onnx_binary_of(o, ND_ADD, &ab, c, res);
}

/* com.microsoft's Gelu: the exact (erf) GELU. */
int onnx_op_ms_gelu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	return unary_of(o, ND_GELU, 0, x, NULL);
}

/* FastGelu: the tanh GELU of X, or of X + bias. */
int onnx_op_ms_fastgelu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), s;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	if (!onnx_has_in(o, 1))
		return unary_of(o, ND_GELU_TANH, 0, x, NULL);
	TRY(onnx_binary_of(o, ND_ADD, x, onnx_in(o, 1), &s));
	return unary_of(o, ND_GELU_TANH, 0, &s, NULL);
}

/* BiasGelu: the exact GELU of A + B. */
int onnx_op_ms_biasgelu(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), s;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "A and B are needed");
	TRY(onnx_want_dt(o, a, F32, "A"));
	TRY(onnx_binary_of(o, ND_ADD, a, b, &s));
	return unary_of(o, ND_GELU, 0, &s, NULL);
}

/* QuickGelu: x * sigmoid(alpha x), alpha 1.702 by default. */
int onnx_op_ms_quickgelu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), ax, s;
	float alpha;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_attr_f(o, "alpha", 1.702f, &alpha));
	if (!isfinite(alpha))
		return onnx_fail(o, NPU_EINVAL, "alpha %g", alpha);
	TRY(unary_of(o, ND_AFFINE, alpha, x, &ax));
	TRY(unary_of(o, ND_SIGMOID, 0, &ax, &s));
	return onnx_binary_of(o, ND_MUL, x, &s, NULL);
}

/*
 * A layer norm of @x over its last dim with @gamma (and @beta) into
 * output 0; RMS (no mean taken away, no beta) with @rms: x / sqrt(mean(x^2)
 * + eps) * gamma, as the Simplified forms define it.
 */
static int norm_last(struct onnx *o, struct oval *x, struct oval *gamma, struct oval *beta,
		     int rms)
{
	uint32_t n = x->rank ? x->dims[x->rank - 1] : 1;
	float eps;

	TRY(onnx_attr_f(o, "epsilon", 1e-5f, &eps));
	if (!gamma || gamma->count != n || (beta && beta->count != n) || !x->rank)
		return onnx_fail(o, NPU_EINVAL, "gamma (and beta) of the last dim's %u values", n);
	if (!(eps >= 0) || !isfinite(eps))
		return onnx_fail(o, NPU_EINVAL, "epsilon %g", eps);
	if (!rms) {
		struct ir_attrs at = { 0 };
		int t[3] = { onnx_tensor(o, x), onnx_tensor(o, gamma),
			     beta ? onnx_tensor(o, beta) : -1 };
		int y[3] = { onnx_output(o, 0, NPU_DT_FLOAT32, x->rank, x->dims), -1, -1 };

		if (t[0] < 0 || t[1] < 0 || (beta && t[2] < 0) || y[0] < 0)
			return y[0] < 0 ? y[0] : NPU_EINVAL;
		at.nd.ln = (struct nd_layernorm){ .outer = x->count / n, .norm = n, .eps = eps };
		return onnx_node(o, IR_ND_LAYERNORM, t, 3, y, 3, &at);
	}
	{	/* x / sqrt(mean(x^2) + eps) * gamma */
		struct oval sq, ms, e, r, rt, xn;
		struct ir_attrs at = { 0 };
		uint32_t md[NPU_MAX_RANK];
		int ms_t, et;

		TRY(onnx_binary_of(o, ND_MUL, x, x, &sq));
		memcpy(md, x->dims, sizeof(md));
		md[x->rank - 1] = 1;
		ms_t = onnx_temp(o, NPU_DT_FLOAT32, x->rank, md);
		if (ms_t < 0)
			return ms_t;
		at.nd.rd = (struct nd_reduce){ .fn = ND_R_MEAN, .dtype = NPU_DT_FLOAT32,
					       .rank = x->rank, .mask = 1u << (x->rank - 1) };
		memcpy(at.nd.rd.in, x->dims, sizeof(uint32_t) * x->rank);
		TRY(onnx_node(o, IR_ND_REDUCE, &sq.id, 1, &ms_t, 1, &at));
		onnx_temp_val(&ms, ms_t, NPU_DT_FLOAT32, x->rank, md);
		et = onnx_const(o, NPU_DT_FLOAT32, 1, &eps);
		if (et < 0)
			return et;
		onnx_temp_val(&e, et, NPU_DT_FLOAT32, 0, NULL);
		TRY(onnx_binary_of(o, ND_ADD, &ms, &e, &r));
		TRY(unary_of(o, ND_SQRT, 0, &r, &rt));
		TRY(onnx_binary_of(o, ND_DIV, x, &rt, &xn));
		return onnx_binary_of(o, ND_MUL, &xn, gamma, NULL);
	}
}

/* SimplifiedLayerNormalization (default domain): RMS normalization over the last dim. */
int onnx_op_ms_simplified_ln(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t axis;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_attr_i(o, "axis", -1, &axis));
	if (axis != -1 && axis != (int64_t)x->rank - 1)
		return onnx_fail(o, NPU_ENOTSUP, "axis %lld (the last only)", (long long)axis);
	if (o->node->n_output > 1)
		return onnx_fail(o, NPU_ENOTSUP, "its inv_std_var output");
	return norm_last(o, x, onnx_in(o, 1), NULL, 1);
}

/*
 * SkipLayerNormalization and SkipSimplifiedLayerNormalization: the norm of
 * input + skip (+ bias); the sum is output 3 where asked for.
 */
static int skip_norm(struct onnx *o, int rms)
{
	struct oval s, *gamma = onnx_in(o, 2), *beta = rms ? NULL : onnx_in(o, 3);
	uint32_t bias_in = rms ? 3 : 4;

	for (uint32_t i = 1; i < o->node->n_output && i < 3; i++)
		if (*o->node->output[i])
			return onnx_fail(o, NPU_ENOTSUP, "its mean and inv_std_var outputs");
	TRY(sum_of(o, 0, 1, onnx_has_in(o, bias_in) ? bias_in : 0, &s));
	if (o->node->n_output > 3 && *o->node->output[3]) {	/* the sum, as asked */
		int y = onnx_output(o, 3, NPU_DT_FLOAT32, s.rank, s.dims);
		struct ir_attrs at = { 0 };

		if (y < 0)
			return y;
		at.nd.cp = (struct nd_copy){ .rank = 1, .dtype = NPU_DT_FLOAT32,
					     .dims = { (uint32_t)s.count }, .st = { 1 } };
		TRY(onnx_node(o, IR_ND_COPY, &s.id, 1, &y, 1, &at));
	}
	return norm_last(o, &s, gamma, beta, rms);
}

int onnx_op_ms_skip_ln(struct onnx *o)
{
	return skip_norm(o, 0);
}

int onnx_op_ms_skip_simplified_ln(struct onnx *o)
{
	return skip_norm(o, 1);
}

/*
 * The QOperator form of a function (quantize_static's QLinearSigmoid,
 * QLinearLeakyRelu): X, its scale and zero point, Y's, all per tensor and
 * known at load; y = Q(f(DQ(x))) on the 8-bit values, which every backend
 * runs through a 256-entry table, as onnxruntime does.
 */
static int qlinear_unary(struct onnx *o, enum nd_fn fn, float alpha)
{
	struct oval *x = onnx_in(o, 0), *s[2], *z[2] = { NULL, NULL };
	struct ir_attrs at = { 0 };
	struct nd_unary *p = &at.nd.un;
	int t, y;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, U8 | I8, "X"));
	for (uint32_t k = 0; k < 2; k++) {
		TRY(onnx_in_static(o, 1 + 2 * k, k ? "Y_scale" : "X_scale", &s[k]));
		if (onnx_has_in(o, 2 + 2 * k))
			TRY(onnx_in_static(o, 2 + 2 * k, k ? "Y_zero_point" : "X_zero_point", &z[k]));
		if (s[k]->dt != NPU_DT_FLOAT32 || s[k]->count != 1 ||
		    (z[k] && (z[k]->dt != x->dt || z[k]->count != 1)))
			return onnx_fail(o, NPU_EINVAL, "scales and zero points one value each, the "
					 "zero points of X's type");
	}
	*p = (struct nd_unary){ .fn = fn, .dtype = x->dt, .count = x->count ? x->count : 1,
				.alpha = alpha, .quant = 1, .xs = (float)onnx_get_f(s[0], 0),
				.ys = (float)onnx_get_f(s[1], 0),
				.xz = z[0] ? (int32_t)onnx_get_i(z[0], 0) : 0,
				.yz = z[1] ? (int32_t)onnx_get_i(z[1], 0) : 0 };
	y = onnx_output(o, 0, x->dt, x->rank, x->dims);
	t = y < 0 ? y : onnx_in_t(o, 0);
	if (y < 0 || t < 0)
		return y < 0 ? y : t;
	return onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, &at);
}

int onnx_op_ms_qlinear_sigmoid(struct onnx *o)
{
	return qlinear_unary(o, ND_SIGMOID, 0);
}

int onnx_op_ms_qlinear_leakyrelu(struct onnx *o)
{
	float alpha;

	TRY(onnx_attr_f(o, "alpha", 0.01f, &alpha));
	if (!isfinite(alpha))
		return onnx_fail(o, NPU_EINVAL, "alpha %g", alpha);
	return qlinear_unary(o, ND_LEAKY_RELU, alpha);
}
