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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

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
static int onnx_op_ms_gelu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	return unary_of(o, ND_GELU, 0, x, NULL);
}

/* FastGelu: the tanh GELU of X, or of X + bias. */
static int onnx_op_ms_fastgelu(struct onnx *o)
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
static int onnx_op_ms_biasgelu(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1), s;

	if (!a || !b)
		return onnx_fail(o, NPU_EINVAL, "A and B are needed");
	TRY(onnx_want_dt(o, a, F32, "A"));
	TRY(onnx_binary_of(o, ND_ADD, a, b, &s));
	return unary_of(o, ND_GELU, 0, &s, NULL);
}

/* QuickGelu: x * sigmoid(alpha x), alpha 1.702 by default. */
static int onnx_op_ms_quickgelu(struct onnx *o)
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
static int onnx_op_ms_simplified_ln(struct onnx *o)
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

static int onnx_op_ms_skip_ln(struct onnx *o)
{
	return skip_norm(o, 0);
}

static int onnx_op_ms_skip_simplified_ln(struct onnx *o)
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

static int onnx_op_ms_qlinear_sigmoid(struct onnx *o)
{
	return qlinear_unary(o, ND_SIGMOID, 0);
}

static int onnx_op_ms_qlinear_leakyrelu(struct onnx *o)
{
	float alpha;

	TRY(onnx_attr_f(o, "alpha", 0.01f, &alpha));
	if (!isfinite(alpha))
		return onnx_fail(o, NPU_EINVAL, "alpha %g", alpha);
	return qlinear_unary(o, ND_LEAKY_RELU, alpha);
}

/*
 * The rest of the QOperator form, each computed as what it stands for
 * where it does not fold into the int8 op of its QDQ pattern (onnx_qdq.c):
 * its 8-bit operands dequantized, the float op of the default domain
 * imported on them (the node's own attributes), its result quantized into
 * output 0 - the DQ -> op -> Q that onnxruntime's quantizer replaced.
 */

/* A lowering's own value: output 0's name with @tag and @k. */
/* A constant @name of @dt, @rank dims @dims, its values copied from @data. */
int onnx_named_const(struct onnx *o, const char *name, enum npu_dtype dt, uint32_t rank,
		       const uint32_t *dims, const void *data)
{
	struct oval *v = onnx_add(o, name, dt, rank, dims);
	size_t bytes;

	if (!v)
		return NPU_EINVAL;
	bytes = v->count * onnx_elem_size(dt);
	TRY(onnx_charge(o, bytes));
	v->data = malloc(bytes ? bytes : 1);
	if (!v->data)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	memcpy(v->data, data, bytes);
	return 0;
}

const char *onnx_own_name(struct onnx *o, const char *tag, uint32_t k, char *buf, size_t len)
{
	snprintf(buf, len, "%s#%s%u", N->output[0], tag, k);
	return buf;
}

/* A node of the default domain (@op, its inputs and outputs) imported now. */
int onnx_lower_as_n(struct onnx *o, const char *op, const char **in, size_t nin,
		       const char **out, size_t nout, Onnx__AttributeProto **attrs, size_t nattrs,
		       int64_t opset)
{
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;

	n.name = N->name;
	n.op_type = (char *)op;
	n.n_input = nin;
	n.input = (char **)in;
	n.n_output = nout;
	n.output = (char **)out;
	n.n_attribute = nattrs;
	n.attribute = attrs;
	return onnx_import_as(o, &n, opset);
}

/* The same with one output. */
int onnx_lower_as(struct onnx *o, const char *op, const char **in, size_t nin, const char *out,
		     Onnx__AttributeProto **attrs, size_t nattrs, int64_t opset)
{
	return onnx_lower_as_n(o, op, in, nin, &out, 1, attrs, nattrs, opset);
}

/* Input @i with its scale and zero point (@i + 1, @i + 2) dequantized into @name. */
static int dq_into(struct onnx *o, uint32_t i, const char *name, int64_t axis)
{
	Onnx__AttributeProto ax = ONNX__ATTRIBUTE_PROTO__INIT, *ap = &ax;
	const char *in[3];
	struct oval *x = onnx_in(o, i);

	if (!x || !onnx_has_in(o, i + 1))
		return onnx_fail(o, NPU_EINVAL, "input %u and its scale are needed", i);
	TRY(onnx_want_dt(o, x, U8 | I8 | (axis == -2 ? I32 : 0), "a quantized operand"));
	in[0] = N->input[i];
	in[1] = N->input[i + 1];
	in[2] = i + 2 < N->n_input ? N->input[i + 2] : "";
	ax.name = (char *)"axis";
	ax.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	ax.has_i = 1;
	ax.i = axis;
	return onnx_lower_as(o, "DequantizeLinear", in, 3, name, &ap, axis >= 0, 0);
}

/* @name quantized by inputs @i (scale) and @i + 1 (zero point) into output 0. */
static int q_out(struct onnx *o, const char *name, uint32_t i)
{
	const char *in[3] = { name, N->input[i], i + 1 < N->n_input ? N->input[i + 1] : "" };

	if (!onnx_has_in(o, i))
		return onnx_fail(o, NPU_EINVAL, "the output's scale is needed");
	return onnx_lower_as(o, "QuantizeLinear", in, 3, N->output[0], NULL, 0, 0);
}

/* The node's attributes but those named in @drop (space-separated), into @a. */
size_t onnx_attrs_but(struct onnx *o, const char *drop, Onnx__AttributeProto **a, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < N->n_attribute && n < max; i++) {
		const char *name = N->attribute[i]->name;
		const char *p = strstr(drop, name);
		size_t len = strlen(name);

		if (p && (p == drop || p[-1] == ' ') && (!p[len] || p[len] == ' '))
			continue;
		a[n++] = N->attribute[i];
	}
	return n;
}

/*
 * DQ of the operands at @qin (each followed by its scale and zero point),
 * @op of them (and of the inputs named in @extra, after them), Q by the
 * inputs from @yi into output 0.
 */
static int qlinear_lowered(struct onnx *o, const char *op, const uint32_t *qin, uint32_t nq,
			   uint32_t yi, const char *drop, int64_t opset)
{
	char names[IR_MAX_IN][96], fname[96];
	const char *in[IR_MAX_IN];
	Onnx__AttributeProto *a[16];

	if (nq > IR_MAX_IN)
		return onnx_fail(o, NPU_ENOTSUP, "%u operands (at most %d)", nq, IR_MAX_IN);
	if (!N->n_output || !N->output[0][0])
		return onnx_fail(o, NPU_EINVAL, "output 0 has no name");
	for (uint32_t k = 0; k < nq; k++) {
		in[k] = onnx_own_name(o, "dq", k, names[k], sizeof(names[k]));
		TRY(dq_into(o, qin[k], in[k], -1));
	}
	onnx_own_name(o, "f", 0, fname, sizeof(fname));
	TRY(onnx_lower_as(o, op, in, nq, fname, a, onnx_attrs_but(o, drop, a, 16), opset));
	return q_out(o, fname, yi);
}

static int onnx_op_ms_qlinear_add(struct onnx *o)
{
	int r = onnx_fold_qlinear_eltwise(o, 0);

	if (r)
		return r < 0 ? r : 0;
	return qlinear_lowered(o, "Add", (uint32_t[]){ 0, 3 }, 2, 6, "", 0);
}

static int onnx_op_ms_qlinear_mul(struct onnx *o)
{
	int r = onnx_fold_qlinear_eltwise(o, 1);

	if (r)
		return r < 0 ? r : 0;
	return qlinear_lowered(o, "Mul", (uint32_t[]){ 0, 3 }, 2, 6, "", 0);
}

/* QLinearConcat: Y's scale and zero point, then each input's three. */
static int onnx_op_ms_qlinear_concat(struct onnx *o)
{
	uint32_t q[IR_MAX_IN], n = 0;

	if (N->n_input < 5 || (N->n_input - 2) % 3)
		return onnx_fail(o, NPU_EINVAL, "%zu inputs (Y's scale and zero point, then "
				 "three for each input)", N->n_input);
	for (uint32_t i = 2; i < N->n_input && n < IR_MAX_IN; i += 3)
		q[n++] = i;
	if ((N->n_input - 2) / 3 > IR_MAX_IN)
		return onnx_fail(o, NPU_ENOTSUP, "%zu inputs (at most %d)", (N->n_input - 2) / 3,
				 IR_MAX_IN);
	return qlinear_lowered(o, "Concat", q, n, 0, "", 0);
}

/* QLinearGlobalAveragePool: NCHW, or with channels_last NHWC. */
static int onnx_op_ms_qlinear_gap(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t last;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_attr_i(o, "channels_last", 0, &last));
	if (x->rank < 3)
		return onnx_fail(o, NPU_EINVAL, "X of rank %u (at least 3)", x->rank);
	if (!last) {
		uint32_t yd[NPU_MAX_RANK];
		int r;

		for (uint32_t i = 0; i < x->rank; i++)
			yd[i] = i < 2 ? x->dims[i] : 1;
		r = onnx_fold_qlinear_global_average(o, yd);
		if (r)
			return r < 0 ? r : 0;
		return qlinear_lowered(o, "GlobalAveragePool", (uint32_t[]){ 0 }, 1, 3,
				       "channels_last", 0);
	}
	{	/* the mean over the dims between N and C */
		Onnx__AttributeProto ax = ONNX__ATTRIBUTE_PROTO__INIT, *ap = &ax;
		int64_t axes[NPU_MAX_RANK];
		char dq[96], f[96];
		const char *in[1] = { onnx_own_name(o, "dq", 0, dq, sizeof(dq)) };

		for (uint32_t i = 1; i + 1 < x->rank; i++)
			axes[i - 1] = i;
		ax.name = (char *)"axes";
		ax.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		ax.n_ints = x->rank - 2;
		ax.ints = axes;
		TRY(dq_into(o, 0, dq, -1));
		onnx_own_name(o, "f", 0, f, sizeof(f));
		TRY(onnx_lower_as(o, "ReduceMean", in, 1, f, &ap, 1, 13));
		return q_out(o, f, 3);
	}
}

static int onnx_op_ms_qlinear_avgpool(struct onnx *o)
{
	int64_t last;

	TRY(onnx_attr_i(o, "channels_last", 0, &last));
	if (last)
		return onnx_fail(o, NPU_ENOTSUP, "channels_last (NHWC)");
	return qlinear_lowered(o, "AveragePool", (uint32_t[]){ 0 }, 1, 3, "channels_last", 0);
}

/* QLinearSoftmax: Softmax as opset @opset defines it (before 13: over the dims from axis). */
static int onnx_op_ms_qlinear_softmax(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int64_t opset, axis;
	uint32_t ax;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_attr_i(o, "opset", 0, &opset));
	if (opset < 1 || opset > ONNX_MAX_OPSET)
		return onnx_fail(o, NPU_EINVAL, "attribute 'opset' %lld", (long long)opset);
	TRY(onnx_attr_i(o, "axis", opset < 13 ? 1 : -1, &axis));
	TRY(onnx_norm_axis(o, axis, x->rank, 0, &ax));
	if (opset < 13 || ax + 1 == x->rank) {	/* over the trailing dims from ax */
		int r = onnx_fold_qlinear_softmax(o, ax);

		if (r)
			return r < 0 ? r : 0;
	}
	return qlinear_lowered(o, "Softmax", (uint32_t[]){ 0 }, 1, 3, "opset", opset);
}

/*
 * QGemm: alpha op(A) op(B) + C, C int32 of scale a_scale * b_scale (b's per
 * column where B has a scale a column), y quantized by its scale and zero
 * point, or fp32 where they are absent.
 */
static int onnx_op_ms_qgemm(struct onnx *o)
{
	struct oval *a = onnx_in(o, 0), *as = onnx_in(o, 1), *b = onnx_in(o, 3), *bs = onnx_in(o, 4);
	struct oval *c = onnx_has_in(o, 6) ? onnx_in(o, 6) : NULL;
	int64_t ta, tb;
	float alpha;
	int yq = onnx_has_in(o, 7);
	char names[3][96], f[96];
	const char *in[3];
	Onnx__AttributeProto *at[4];

	if (!a || !as || !b || !bs)
		return onnx_fail(o, NPU_EINVAL, "A, B and their scales are needed");
	TRY(onnx_attr_i(o, "transA", 0, &ta));
	TRY(onnx_attr_i(o, "transB", 0, &tb));
	TRY(onnx_attr_f(o, "alpha", 1.0f, &alpha));
	if (yq && alpha == 1.0f && !ta) {
		int r = onnx_fold_qgemm(o, !!tb);

		if (r)
			return r < 0 ? r : 0;
	}
	if (b->rank != 2)
		return onnx_fail(o, NPU_EINVAL, "B must be a matrix");
	in[0] = onnx_own_name(o, "dq", 0, names[0], sizeof(names[0]));
	in[1] = onnx_own_name(o, "dq", 1, names[1], sizeof(names[1]));
	TRY(dq_into(o, 0, in[0], -1));
	TRY(dq_into(o, 3, in[1], bs->count > 1 ? (tb ? 0 : 1) : -1));
	if (c) {	/* C is in the accumulator, so scaled by alpha too: alpha a_scale b_scale */
		char sname[96];
		struct oval *s;

		if (!as->data || !bs->data || as->count != 1)
			return onnx_fail(o, NPU_ENOTSUP, "scales known only at run time");
		TRY(onnx_want_dt(o, c, I32, "C"));
		if (bs->count > 1 && (c->rank != 1 || c->count != bs->count))
			return onnx_fail(o, NPU_EINVAL, "C must be one value a column of B");
		s = onnx_add(o, onnx_own_name(o, "cs", 0, sname, sizeof(sname)), NPU_DT_FLOAT32,
			     bs->count > 1 ? 1 : 0, (uint32_t[]){ (uint32_t)bs->count });
		if (!s)
			return NPU_EINVAL;
		TRY(onnx_charge(o, bs->count * 4));
		s->data = calloc(bs->count, sizeof(float));
		if (!s->data)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint64_t i = 0; i < bs->count; i++)
			((float *)s->data)[i] = alpha * (float)onnx_get_f(as, 0) *
						 (float)onnx_get_f(bs, i);
		{
			const char *cin[2] = { N->input[6], s->name };
			Onnx__AttributeProto ax = ONNX__ATTRIBUTE_PROTO__INIT, *ap = &ax;

			ax.name = (char *)"axis";
			ax.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
			ax.i = 0;
			in[2] = onnx_own_name(o, "dq", 2, names[2], sizeof(names[2]));
			TRY(onnx_lower_as(o, "DequantizeLinear", cin, 2, in[2], &ap, bs->count > 1, 0));
		}
	}
	if (!yq)
		return onnx_lower_as(o, "Gemm", in, c ? 3 : 2, N->output[0], at,
				 onnx_attrs_but(o, "", at, 4), 0);
	onnx_own_name(o, "f", 0, f, sizeof(f));
	TRY(onnx_lower_as(o, "Gemm", in, c ? 3 : 2, f, at, onnx_attrs_but(o, "", at, 4), 0));
	return q_out(o, f, 7);
}

/*
 * FusedConv (onnxruntime's optimizer writes it for a Conv and the
 * activation after it, and an Add between): activation(Conv(X, W, B) + Z),
 * the activation one of Relu, Tanh, Sigmoid, LeakyRelu (alpha), Clip (min,
 * max) and HardSigmoid (alpha, beta), its parameters in activation_params.
 */
static int onnx_op_ms_fusedconv(struct onnx *o)
{
	static const struct {
		const char *name;
		uint32_t fn, nparams;
	} acts[] = {
		{ "Relu", ND_RELU, 0 }, { "Tanh", ND_TANH, 0 }, { "Sigmoid", ND_SIGMOID, 0 },
		{ "LeakyRelu", ND_LEAKY_RELU, 1 }, { "Clip", ND_CLIP, 2 },
		{ "HardSigmoid", ND_HARD_SIGMOID, 2 },
	};
	const Onnx__AttributeProto *ap = onnx_attr(o, "activation_params");
	Onnx__AttributeProto *a[8];
	char act[16], cname[96];
	const char *in[3];
	struct nd_unary u = { 0 };
	struct oval *conv, *z = onnx_has_in(o, 3) ? onnx_in(o, 3) : NULL, sum;
	size_t k, nin = N->n_input < 3 ? N->n_input : 3;

	if (N->n_input < 2 || !N->n_output || !N->output[0][0])
		return onnx_fail(o, NPU_EINVAL, "X and W, and an output, are needed");
	TRY(onnx_attr_s(o, "activation", "", act, sizeof(act)));
	for (k = 0; *act && k < sizeof(acts) / sizeof(acts[0]); k++)
		if (!strcmp(act, acts[k].name))
			break;
	if (*act && k == sizeof(acts) / sizeof(acts[0]))
		return onnx_fail(o, NPU_ENOTSUP, "activation '%s'", act);
	if (*act && acts[k].nparams && (!ap || ap->n_floats < acts[k].nparams))
		return onnx_fail(o, NPU_EINVAL, "activation %s needs %u activation_params", act,
				 acts[k].nparams);
	for (size_t i = 0; i < nin; i++)
		in[i] = N->input[i];
	TRY(onnx_lower_as(o, "Conv", in, nin, onnx_own_name(o, "conv", 0, cname, sizeof(cname)), a,
		      onnx_attrs_but(o, "activation activation_params", a, 8), 0));
	conv = onnx_find(o, cname);
	if (!conv)
		return onnx_fail(o, NPU_EINVAL, "the convolution's output");
	if (z) {
		struct oval *res = *act ? &sum : NULL;

		TRY(onnx_binary_of(o, ND_ADD, conv, z, res));
		conv = res;
	}
	if (!*act) {
		if (z)
			return 0;	/* the sum is output 0 already */
		return onnx_lower_as(o, "Identity", (const char *[]){ cname }, 1, N->output[0], NULL,
				 0, 0);
	}
	u.fn = acts[k].fn;
	if (u.fn == ND_CLIP) {
		u.lo = ap->floats[0];
		u.hi = ap->floats[1];
	} else if (acts[k].nparams) {
		u.alpha = ap->floats[0];
		u.beta = acts[k].nparams > 1 ? ap->floats[1] : 0;
	}
	return onnx_unary_of(o, &u, conv, NULL);
}

/*
 * DynamicQuantizeMatMul (onnxruntime's optimizer's fusion of what
 * quantize_dynamic writes): A quantized as DynamicQuantizeLinear does, its
 * MatMulInteger with B (int8 or uint8, B's zero point), the int32 product
 * made fp32 and scaled by a_scale * b_scale (b's per column where it has
 * one a column), plus the bias: the ops it was fused from.
 */
static int onnx_op_ms_dynamic_quantize_matmul(struct onnx *o)
{
	char n[7][96];
	const char *q[3], *mm[4], *in[2];
	struct oval *bs = onnx_in(o, 2);

	if (N->n_input < 3 || !bs || !N->n_output || !N->output[0][0])
		return onnx_fail(o, NPU_EINVAL, "A, B, b_scale and an output are needed");
	for (uint32_t i = 0; i < 3; i++)
		q[i] = onnx_own_name(o, "dq", i, n[i], sizeof(n[i]));
	TRY(onnx_lower_as_n(o, "DynamicQuantizeLinear", (const char *[]){ N->input[0] }, 1, q, 3,
			NULL, 0, 0));
	mm[0] = q[0];
	mm[1] = N->input[1];
	mm[2] = q[2];
	mm[3] = onnx_has_in(o, 3) ? N->input[3] : "";
	TRY(onnx_lower_as(o, "MatMulInteger", mm, mm[3][0] ? 4 : 3,
			  onnx_own_name(o, "mm", 0, n[3], 96), NULL, 0, 0));
	{
		Onnx__AttributeProto to = ONNX__ATTRIBUTE_PROTO__INIT, *ap = &to;

		to.name = (char *)"to";
		to.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		to.i = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
		TRY(onnx_lower_as(o, "Cast", (const char *[]){ n[3] }, 1, onnx_own_name(o, "f", 0, n[4], 96),
			      &ap, 1, 0));
	}
	in[0] = q[1];
	in[1] = N->input[2];
	TRY(onnx_lower_as(o, "Mul", in, 2, onnx_own_name(o, "s", 0, n[5], 96), NULL, 0, 0));
	in[0] = n[4];
	in[1] = n[5];
	if (!onnx_has_in(o, 4))
		return onnx_lower_as(o, "Mul", in, 2, N->output[0], NULL, 0, 0);
	TRY(onnx_lower_as(o, "Mul", in, 2, onnx_own_name(o, "y", 0, n[6], 96), NULL, 0, 0));
	in[0] = n[6];
	in[1] = N->input[4];
	return onnx_lower_as(o, "Add", in, 2, N->output[0], NULL, 0, 0);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_ms_ops[] = {
	/* onnxruntime's, registered in the default domain: RMS norm */
	ONNX_OP("SimplifiedLayerNormalization", onnx_op_ms_simplified_ln,
	        "axis epsilon stash_type", 1),
	ONNX_MS_OP("Gelu", onnx_op_ms_gelu, "", 1),
	ONNX_MS_OP("FastGelu", onnx_op_ms_fastgelu, "", 1),
	ONNX_MS_OP("BiasGelu", onnx_op_ms_biasgelu, "", 1),
	ONNX_MS_OP("QuickGelu", onnx_op_ms_quickgelu, "alpha", 1),
	ONNX_MS_OP("SkipLayerNormalization", onnx_op_ms_skip_ln, "epsilon", 1),
	ONNX_MS_OP("SkipSimplifiedLayerNormalization", onnx_op_ms_skip_simplified_ln, "epsilon", 1),
	ONNX_MS_OP("QLinearSigmoid", onnx_op_ms_qlinear_sigmoid, "", 1),
	ONNX_MS_OP("QLinearLeakyRelu", onnx_op_ms_qlinear_leakyrelu, "alpha", 1),
	ONNX_MS_OP("QLinearAdd", onnx_op_ms_qlinear_add, "", 1),
	ONNX_MS_OP("QLinearMul", onnx_op_ms_qlinear_mul, "", 1),
	ONNX_MS_OP("QLinearConcat", onnx_op_ms_qlinear_concat, "axis", 1),
	ONNX_MS_OP("QLinearGlobalAveragePool", onnx_op_ms_qlinear_gap, "channels_last", 1),
	ONNX_MS_OP("QLinearAveragePool", onnx_op_ms_qlinear_avgpool,
	           "auto_pad ceil_mode channels_last count_include_pad kernel_shape pads "
	           "strides", 1),
	ONNX_MS_OP("QLinearSoftmax", onnx_op_ms_qlinear_softmax, "axis opset", 1),
	ONNX_MS_OP("QGemm", onnx_op_ms_qgemm, "alpha transA transB", 1),
	ONNX_MS_OP("DynamicQuantizeMatMul", onnx_op_ms_dynamic_quantize_matmul, "", 1),
	ONNX_MS_OP("FusedConv", onnx_op_ms_fusedconv,
	           "activation activation_params auto_pad dilations group kernel_shape pads "
	           "strides", 1),
	ONNX_OP_END
};
