// SPDX-License-Identifier: MIT
/*
 * onnx_norm.c - the norms of classic networks, each lowered onto element
 * functions, reductions and a sum over a window, as ONNX defines them:
 * LRN (AlexNet's and GoogLeNet's local response normalization),
 * MeanVarianceNormalization (its function body, op for op),
 * LpNormalization, LpPool and GlobalLpPool. They run where the ops they
 * become run, the NPU included.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/*
 * LRN: y = x / (bias + alpha / size * sum of x^2 over the size channels
 * about c: from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2))^beta.
 * The squares padded with zeros along the channels, summed over size
 * shifted slices.
 */
static int onnx_op_lrn(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	int64_t size, lo, hi, pads[2 * NPU_MAX_RANK] = { 0 };
	float alpha, beta, bias;
	const char *sq, *pd, *sum = NULL, *y;

	TRY(onnx_attr_i(o, "size", 0, &size));
	TRY(onnx_attr_f(o, "alpha", 1e-4f, &alpha));
	TRY(onnx_attr_f(o, "beta", 0.75f, &beta));
	TRY(onnx_attr_f(o, "bias", 1.0f, &bias));
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	if (x->rank < 3 || size < 1 || size > 1024)
		return onnx_fail(o, NPU_EINVAL, "X of rank %u (at least 3) or size %lld", x->rank,
				 (long long)size);
	lo = (size - 1) / 2;
	hi = size - 1 - lo;
	pads[1] = lo;
	pads[x->rank + 1] = hi;
	sq = em_op2(&e, "Mul", N->input[0], N->input[0]);
	pd = em_op2(&e, "Pad", sq, em_cst(&e, NPU_DT_INT64, pads, 2 * x->rank));
	for (int64_t k = 0; k < size; k++) {
		int64_t st = k, en = k + x->dims[1], ax = 1;
		const char *sl = em_to(&e, "Slice", (const char *[]){ pd,
				       em_cst(&e, NPU_DT_INT64, &st, 1),
				       em_cst(&e, NPU_DT_INT64, &en, 1),
				       em_cst(&e, NPU_DT_INT64, &ax, 1) }, 4, NULL, NULL);

		sum = sum ? em_op2(&e, "Add", sum, sl) : sl;
	}
	y = em_op2(&e, "Add", em_fc(&e, bias), em_op2(&e, "Mul", em_fc(&e, alpha / (float)size),
							sum));
	y = em_op2(&e, "Pow", y, em_fc(&e, beta));
	em_to(&e, "Div", (const char *[]){ N->input[0], y }, 2, NULL, N->output[0]);
	return em_done(&e);
}

/*
 * MeanVarianceNormalization, as ONNX's function body: (x - mean) /
 * (sqrt(mean(x^2) - mean(x)^2) + 1e-9) over ``axes`` (0, 2, 3 by default).
 */
static int onnx_op_mvn(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	int64_t axes[NPU_MAX_RANK] = { 0, 2, 3 };
	uint32_t na = 0;
	Onnx__AttributeProto a[2], *ap[2];
	const char *m, *m2, *ex2, *sd, *y0;

	TRY(onnx_attr_ints(o, "axes", axes, NPU_MAX_RANK, &na));
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	if (!na)
		na = 3;
	for (uint32_t i = 0; i < na; i++)
		if (axes[i] < -(int64_t)x->rank || axes[i] >= (int64_t)x->rank)
			return onnx_fail(o, NPU_EINVAL, "axes[%u] %lld for rank %u", i,
					 (long long)axes[i], x->rank);
	ap[0] = em_ints_attr(&a[0], "axes", axes, na);
	ap[1] = em_int_attr(&a[1], "keepdims", 1);
	/* ReduceMean takes its axes as an attribute at opset 13 */
	m = em_fresh(&e);
	if (m && !e.err)
		e.err = onnx_lower_as(o, "ReduceMean", (const char *[]){ N->input[0] }, 1, m, ap,
				      2, 13);
	m2 = em_op2(&e, "Pow", e.err ? NULL : m, em_fc(&e, 2.0f));
	ex2 = em_fresh(&e);
	if (ex2 && !e.err)
		e.err = onnx_lower_as(o, "ReduceMean", (const char *[]){
				      em_op2(&e, "Pow", N->input[0], em_fc(&e, 2.0f)) }, 1, ex2,
				      ap, 2, 13);
	sd = em_op1(&e, "Sqrt", em_op2(&e, "Sub", e.err ? NULL : ex2, m2));
	y0 = em_op2(&e, "Sub", N->input[0], m);
	em_to(&e, "Div", (const char *[]){ y0, em_op2(&e, "Add", sd, em_fc(&e, 1e-9f)) }, 2, NULL,
	      N->output[0]);
	return em_done(&e);
}

/*
 * LpNormalization: x / ||x||_p along ``axis`` (p 1: the sum of |x|; 2:
 * the root of the sum of squares), 0 where the norm is 0 (onnxruntime's).
 */
static int onnx_op_lp_normalization(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	int64_t axis, p;
	uint32_t ax;
	Onnx__AttributeProto kd;
	const char *t, *nrm, *zero;

	TRY(onnx_attr_i(o, "axis", -1, &axis));
	TRY(onnx_attr_i(o, "p", 2, &p));
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	if (p != 1 && p != 2)
		return onnx_fail(o, NPU_EINVAL, "p %lld (1 or 2)", (long long)p);
	TRY(onnx_norm_axis(o, axis, x->rank, 0, &ax));
	axis = ax;
	t = p == 1 ? em_op1(&e, "Abs", N->input[0]) :
	    em_op2(&e, "Mul", N->input[0], N->input[0]);
	nrm = em_to(&e, "ReduceSum", (const char *[]){ t, em_cst(&e, NPU_DT_INT64, &axis, 1) }, 2,
		    em_int_attr(&kd, "keepdims", 1), NULL);
	if (p == 2)
		nrm = em_op1(&e, "Sqrt", nrm);
	zero = em_fc(&e, 0.0f);
	em_to(&e, "Where", (const char *[]){ em_op2(&e, "Equal", nrm, zero), zero,
		     em_op2(&e, "Div", N->input[0], nrm) }, 3, NULL, N->output[0]);
	return em_done(&e);
}

/* |x|^p (x^2 for 2), and its sum's p-th root. */
static const char *lp_pow(struct onnx_emit *e, const char *x, int64_t p)
{
	return p == 2 ? em_op2(e, "Mul", x, x) :
	       em_op2(e, "Pow", em_op1(e, "Abs", x), em_fc(e, (float)p));
}

static const char *lp_root(struct onnx_emit *e, const char *s, int64_t p)
{
	return p == 1 ? s : p == 2 ? em_op1(e, "Sqrt", s) :
	       em_op2(e, "Pow", s, em_fc(e, 1.0f / (float)p));
}

/* GlobalLpPool: (sum of |x|^p over the spatial dims)^(1/p). */
static int onnx_op_global_lp_pool(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	int64_t p, axes[NPU_MAX_RANK];
	Onnx__AttributeProto kd;
	const char *s;

	TRY(onnx_attr_i(o, "p", 2, &p));
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	if (x->rank < 3 || p < 1 || p > 64)
		return onnx_fail(o, NPU_EINVAL, "X of rank %u (at least 3) or p %lld", x->rank,
				 (long long)p);
	for (uint32_t d = 2; d < x->rank; d++)
		axes[d - 2] = d;
	s = em_to(&e, "ReduceSum", (const char *[]){ lp_pow(&e, N->input[0], p),
		  em_cst(&e, NPU_DT_INT64, axes, x->rank - 2) }, 2,
		  em_int_attr(&kd, "keepdims", 1), NULL);
	em_to(&e, "Identity", (const char *[]){ lp_root(&e, s, p) }, 1, NULL, N->output[0]);
	return em_done(&e);
}

/*
 * LpPool: (sum of |x|^p over each window)^(1/p), the padding zeros: the
 * window's sum is a depthwise convolution by ones (its strides, pads,
 * dilations and auto_pad, the node's own attributes). ceil_mode 1 (18) is
 * refused: a convolution has no such mode.
 */
static int onnx_op_lp_pool(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	int64_t p, ceil, k[ND_MAX_SP];
	uint32_t nk = 0, wd[2 + ND_MAX_SP];
	uint64_t taps = 1;
	Onnx__AttributeProto *at[8], gr;
	const char *w, *s, *c;
	float *ones;
	size_t na;

	TRY(onnx_attr_i(o, "p", 2, &p));
	TRY(onnx_attr_i(o, "ceil_mode", 0, &ceil));
	TRY(onnx_attr_ints(o, "kernel_shape", k, ND_MAX_SP, &nk));
	if (ceil)
		return onnx_fail(o, NPU_ENOTSUP, "ceil_mode 1");
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "X"));
	if (x->rank < 3 || nk != x->rank - 2 || p < 1 || p > 64)
		return onnx_fail(o, NPU_EINVAL, "X of rank %u, kernel_shape of %u dims, p %lld",
				 x->rank, nk, (long long)p);
	wd[0] = x->dims[1];
	wd[1] = 1;
	for (uint32_t i = 0; i < nk; i++) {
		if (k[i] < 1 || k[i] > 1024)
			return onnx_fail(o, NPU_EINVAL, "kernel_shape[%u] %lld", i, (long long)k[i]);
		wd[2 + i] = (uint32_t)k[i];
		taps *= (uint64_t)k[i];
	}
	ones = malloc(sizeof(float) * (size_t)(taps * x->dims[1]));
	if (!ones)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < taps * x->dims[1]; i++)
		ones[i] = 1.0f;
	w = em_fresh(&e);
	if (w && !e.err)
		e.err = onnx_named_const(o, w, NPU_DT_FLOAT32, x->rank, wd, ones);
	free(ones);
	/* the node's window attributes, as they are, and one group a channel */
	na = onnx_attrs_but(o, "p ceil_mode", at, 7);
	at[na++] = em_int_attr(&gr, "group", x->dims[1]);
	s = lp_pow(&e, N->input[0], p);
	c = em_fresh(&e);
	if (c && s && w && !e.err)
		e.err = onnx_lower_as(o, "Conv", (const char *[]){ s, w }, 2, c, at, na, 13);
	em_to(&e, "Identity", (const char *[]){ e.err ? NULL : lp_root(&e, c, p) }, 1, NULL,
	      N->output[0]);
	return em_done(&e);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_norm_ops[] = {
	ONNX_OP("LRN", onnx_op_lrn, "alpha beta bias size", 1),
	ONNX_OP("MeanVarianceNormalization", onnx_op_mvn, "axes", 9),
	ONNX_OP("LpNormalization", onnx_op_lp_normalization, "axis p", 1),
	ONNX_OP("GlobalLpPool", onnx_op_global_lp_pool, "p", 2),
	ONNX_OP("LpPool", onnx_op_lp_pool, "auto_pad ceil_mode dilations kernel_shape p pads "
		"strides", 2),
	ONNX_OP_END
};
