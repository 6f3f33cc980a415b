// SPDX-License-Identifier: MIT
/*
 * onnx_mask.c - ONNX ops that are a mask and a choice: Trilu (a causal
 * mask), OneHot (routing, labels), IsNaN and IsInf. Each is lowered onto the IR's own
 * comparisons and Where, with what is known at load (the triangle, the
 * classes) made constants, so every backend runs them as it runs those,
 * the NPU included, with nothing new to implement.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

/* A scalar of @dt, element @i of the static @v (0 without one), as a value of the node's own. */
static int scalar_of(struct onnx *o, enum npu_dtype dt, const struct oval *v, uint64_t i,
		     struct oval *res)
{
	uint8_t buf[8] = { 0 };
	size_t es = ir_elem_size(dt);
	int t;

	if (v)
		memcpy(buf, (const uint8_t *)v->data + i * es, es);
	t = onnx_const(o, dt, 1, buf);
	if (t < 0)
		return t;
	onnx_temp_val(res, t, dt, 0, NULL);
	return 0;
}

/*
 * Trilu (14): the upper (or lower) triangle of the last two dims from
 * diagonal k on, the rest 0: Where(mask, x, 0) with the [N][M] mask made
 * at load, k being known then.
 */
static int onnx_op_trilu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *kv, mv, zero;
	uint32_t r, n, m;
	int64_t upper, k = 0;
	uint8_t *mask;
	int t;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (x->rank < 2)
		return onnx_fail(o, NPU_EINVAL, "an input of rank %u (2 or more)", x->rank);
	TRY(onnx_attr_i(o, "upper", 1, &upper));
	if (onnx_has_in(o, 1)) {
		TRY(onnx_in_static(o, 1, "k", &kv));
		if (kv->dt != NPU_DT_INT64 || kv->count != 1)
			return onnx_fail(o, NPU_EINVAL, "k must be one int64");
		k = onnx_get_i(kv, 0);
	}
	if (!x->count)		/* nothing to mask */
		return onnx_reshape_to(o, x->rank, x->dims);
	r = x->rank;
	n = x->dims[r - 2];
	m = x->dims[r - 1];
	TRY(onnx_charge(o, (uint64_t)n * m));
	mask = malloc((size_t)n * m);
	if (!mask)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < m; j++) {
			int64_t d = (int64_t)j - i;	/* the diagonal it lies on */

			mask[(size_t)i * m + j] = upper ? d >= k : d <= k;
		}
	t = onnx_const_shaped(o, NPU_DT_BOOL, 2, (uint32_t[]){ n, m }, mask);
	free(mask);
	if (t < 0)
		return t;
	onnx_temp_val(&mv, t, NPU_DT_BOOL, 2, (uint32_t[]){ n, m });
	TRY(scalar_of(o, x->dt, NULL, 0, &zero));
	return onnx_where_of(o, &mv, x, &zero, NULL);
}

/*
 * OneHot (11): indices [...] and depth d give [..., d, ...] (at axis) of
 * on where the index (made positive, -d to d - 1) is the class, else off;
 * an index out of range matches none. As Where(Equal(i', classes), on,
 * off), i' = Where(i < 0, i + d, i): comparisons of the indices' type
 * (float ones cast to int64 first) against the classes [0, d) made at load.
 */
static int onnx_op_onehot(struct onnx *o)
{
	struct oval *ix = onnx_in(o, 0), *dv, *vals, zero, neg, wrapped, adj, unsq, cls, hit, cast;
	struct oval on, off;
	uint32_t rank, axis, ud[NPU_MAX_RANK];
	int64_t axis_attr, depth, *classes;
	int t;

	if (!ix || !onnx_has_in(o, 1) || !onnx_has_in(o, 2))
		return onnx_fail(o, NPU_EINVAL, "indices, depth and values are needed");
	TRY(onnx_want_dt(o, ix, I32 | I64 | F32, "the indices"));
	if (ix->dt == NPU_DT_FLOAT32) {	/* cast to int64 first, as ONNX says: truncated */
		TRY(onnx_cast_of(o, ix, NPU_DT_INT64, &cast));
		ix = &cast;
	}
	TRY(onnx_in_static(o, 1, "depth", &dv));
	TRY(onnx_in_static(o, 2, "values", &vals));
	if (dv->count != 1 || dv->dt == NPU_DT_BOOL)
		return onnx_fail(o, NPU_EINVAL, "depth must be one number");
	depth = dv->dt == NPU_DT_FLOAT32 ? (int64_t)onnx_get_f(dv, 0) : onnx_get_i(dv, 0);
	if (depth < 1 || depth > (int64_t)IR_MAX_DIM)
		return onnx_fail(o, NPU_EINVAL, "depth %lld (1 to %u)", (long long)depth, IR_MAX_DIM);
	if (vals->count != 2)
		return onnx_fail(o, NPU_EINVAL, "values must be [off, on]");
	if (ix->rank + 1 > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "an output of rank %u (at most %d)", ix->rank + 1,
				 NPU_MAX_RANK);
	TRY(onnx_attr_i(o, "axis", -1, &axis_attr));
	TRY(onnx_norm_axis(o, axis_attr, ix->rank + 1, 0, &axis));
	rank = ix->rank + 1;
	for (uint32_t d = 0, s = 0; d < rank; d++) {
		ud[d] = d == axis ? 1 : ix->dims[s];
		s += d != axis;
	}
	/* i' = Where(i < 0, i + d, i) */
	TRY(scalar_of(o, ix->dt, NULL, 0, &zero));
	TRY(onnx_binary_of(o, ND_LESS, ix, &zero, &neg));
	{
		int64_t d64 = depth;
		int32_t d32 = (int32_t)depth;
		int dt_ = onnx_const(o, ix->dt, 1, ix->dt == NPU_DT_INT64 ? (void *)&d64 :
				     (void *)&d32);
		struct oval dval;

		if (dt_ < 0)
			return dt_;
		onnx_temp_val(&dval, dt_, ix->dt, 0, NULL);
		TRY(onnx_binary_of(o, ND_ADD, ix, &dval, &wrapped));
	}
	TRY(onnx_where_of(o, &neg, &wrapped, ix, &adj));
	/* Equal(i' with a 1 at axis, the classes along axis) */
	onnx_temp_val(&unsq, adj.id, ix->dt, rank, ud);
	TRY(onnx_charge(o, (uint64_t)depth * 8));
	classes = malloc((size_t)depth * sizeof(*classes));
	if (!classes)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	{
		uint32_t cd[NPU_MAX_RANK];
		int32_t *c32 = (int32_t *)classes;

		for (int64_t c = 0; c < depth; c++) {
			if (ix->dt == NPU_DT_INT64)
				classes[c] = c;
			else
				c32[c] = (int32_t)c;
		}
		for (uint32_t d = 0; d < rank; d++)
			cd[d] = d == axis ? (uint32_t)depth : 1;
		t = onnx_const_shaped(o, ix->dt, rank, cd, classes);
		free(classes);
		if (t < 0)
			return t;
		onnx_temp_val(&cls, t, ix->dt, rank, cd);
	}
	TRY(onnx_binary_of(o, ND_EQUAL, &unsq, &cls, &hit));
	/* Where(hit, on, off) */
	TRY(scalar_of(o, vals->dt, vals, 1, &on));
	TRY(scalar_of(o, vals->dt, vals, 0, &off));
	return onnx_where_of(o, &hit, &on, &off, NULL);
}

/* A float scalar constant as a value of the node's own. */
static int f32_scalar(struct onnx *o, float v, struct oval *out)
{
	int t = onnx_const(o, NPU_DT_FLOAT32, 1, &v);

	if (t < 0)
		return t;
	onnx_temp_val(out, t, NPU_DT_FLOAT32, 0, NULL);
	return 0;
}

/* IsNaN (9, 13): Not(Equal(x, x)), NaN being the one value unequal to itself. */
static int onnx_op_isnan(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), eq;
	struct ir_attrs at = { 0 };
	int y;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "the input"));
	TRY(onnx_binary_of(o, ND_EQUAL, x, x, &eq));
	at.nd.un = (struct nd_unary){ .fn = ND_NOT, .dtype = NPU_DT_BOOL,
				      .count = x->count ? x->count : 1 };
	y = onnx_output(o, 0, NPU_DT_BOOL, x->rank, x->dims);
	return y < 0 ? y : onnx_node(o, IR_ND_UNARY, &eq.id, 1, &y, 1, &at);
}

/*
 * IsInf (10): x == +inf, x == -inf, or both (Or), as detect_positive and
 * detect_negative ask; neither: x == NaN, which nothing is.
 */
static int onnx_op_isinf(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), pinf, ninf, p, n;
	int64_t neg, pos;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "the input"));
	TRY(onnx_attr_i(o, "detect_negative", 1, &neg));
	TRY(onnx_attr_i(o, "detect_positive", 1, &pos));
	TRY(f32_scalar(o, pos ? INFINITY : neg ? -INFINITY : NAN, &pinf));
	if (!(pos && neg))
		return onnx_binary_of(o, ND_EQUAL, x, &pinf, NULL);
	TRY(f32_scalar(o, -INFINITY, &ninf));
	TRY(onnx_binary_of(o, ND_EQUAL, x, &pinf, &p));
	TRY(onnx_binary_of(o, ND_EQUAL, x, &ninf, &n));
	return onnx_binary_of(o, ND_OR, &p, &n, NULL);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_mask_ops[] = {
	ONNX_OP("Trilu", onnx_op_trilu, "upper", 14),
	ONNX_OP("OneHot", onnx_op_onehot, "axis", 11),
	ONNX_OP("IsNaN", onnx_op_isnan, "", 9),
	ONNX_OP("IsInf", onnx_op_isinf, "detect_negative detect_positive", 10),
	ONNX_OP_END
};
