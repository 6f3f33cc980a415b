// SPDX-License-Identifier: MIT
/*
 * onnx_reduce.c - ONNX's reductions (ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp) over any set of axes, with keepdims and the opset-13
 * form of ReduceSum (axes as an input, noop_with_empty_axes), and ArgMax
 * and ArgMin (select_last_index): one nd_reduce node each.
 */
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* The node as a reduction by @fn over the dims in @mask of input 0 into output 0. */
static int reduce_node(struct onnx *o, enum nd_reduce_fn fn, uint32_t mask, int keepdims,
		       int select_last)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	struct nd_reduce *p = &at.nd.rd;
	int arg = fn == ND_R_ARGMAX || fn == ND_R_ARGMIN, t, y;
	uint32_t rank = 0, dims[NPU_MAX_RANK];

	for (uint32_t d = 0; d < x->rank; d++)
		if (!(mask >> d & 1))
			dims[rank++] = x->dims[d];
		else if (keepdims)
			dims[rank++] = 1;
	*p = (struct nd_reduce){ .fn = fn, .dtype = x->dt, .rank = x->rank ? x->rank : 1,
				 .mask = x->rank ? mask : 0, .select_last = !!select_last };
	memcpy(p->in, x->dims, sizeof(uint32_t) * x->rank);
	if (!x->rank)
		p->in[0] = 1;
	y = onnx_output(o, 0, arg ? NPU_DT_INT64 : x->dt, rank, dims);
	t = y < 0 ? y : onnx_in_t(o, 0);
	if (y < 0 || t < 0)
		return y < 0 ? y : t;
	/* the output holds the kept dims' elements whatever its shape says */
	return onnx_node(o, IR_ND_REDUCE, &t, 1, &y, 1, &at);
}

static int reduce(struct onnx *o, enum nd_reduce_fn fn)
{
	struct oval *x = onnx_in(o, 0);
	int64_t axes[NPU_MAX_RANK + 1], keepdims, noop = 0;
	uint32_t n = 0, mask = 0;
	/* ReduceSum reads its axes from an input from opset 13, the others from 18 */
	int from_input = (fn == ND_R_SUM && o->opset >= 13) || o->opset >= 18;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32 | I32 | I64 | U8 | I8, "the input"));
	TRY(onnx_attr_i(o, "keepdims", 1, &keepdims));
	if (from_input) {
		TRY(onnx_attr_i(o, "noop_with_empty_axes", 0, &noop));
		if (onnx_has_in(o, 1)) {
			struct oval *a;

			TRY(onnx_in_static(o, 1, "axes", &a));
			TRY(onnx_want_dt(o, a, I64, "axes"));
			if (a->count > NPU_MAX_RANK)
				return onnx_fail(o, NPU_EINVAL, "%llu axes",
						 (unsigned long long)a->count);
			n = (uint32_t)a->count;
			for (uint32_t i = 0; i < n; i++)
				axes[i] = onnx_get_i(a, i);
		}
	} else {
		TRY(onnx_attr_ints(o, "axes", axes, NPU_MAX_RANK + 1, &n));
	}
	if (!n && noop)		/* no axes and told so: the input as it is */
		return onnx_reshape_to(o, x->rank, x->dims);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ax;

		TRY(onnx_norm_axis(o, axes[i], x->rank, 0, &ax));
		if (mask & (1u << ax))
			return onnx_fail(o, NPU_EINVAL, "axis %lld given twice", (long long)axes[i]);
		mask |= 1u << ax;
	}
	if (!n)			/* no axes: all of them */
		mask = (1u << x->rank) - 1;
	return reduce_node(o, fn, mask, (int)keepdims, 0);
}

int onnx_op_reduce_sum(struct onnx *o) { return reduce(o, ND_R_SUM); }
int onnx_op_reduce_mean(struct onnx *o)
{
	int r = onnx_fuse_layernorm(o);	/* a decomposed LayerNormalization */

	return r ? (r < 0 ? r : 0) : reduce(o, ND_R_MEAN);
}
int onnx_op_reduce_max(struct onnx *o) { return reduce(o, ND_R_MAX); }
int onnx_op_reduce_min(struct onnx *o) { return reduce(o, ND_R_MIN); }
int onnx_op_reduce_prod(struct onnx *o) { return reduce(o, ND_R_PROD); }
int onnx_op_reduce_sum_square(struct onnx *o) { return reduce(o, ND_R_SUM_SQUARE); }
int onnx_op_reduce_l1(struct onnx *o) { return reduce(o, ND_R_L1); }
int onnx_op_reduce_l2(struct onnx *o) { return reduce(o, ND_R_L2); }
int onnx_op_reduce_log_sum(struct onnx *o) { return reduce(o, ND_R_LOG_SUM); }
int onnx_op_reduce_log_sum_exp(struct onnx *o) { return reduce(o, ND_R_LOG_SUM_EXP); }

static int arg(struct onnx *o, enum nd_reduce_fn fn)
{
	struct oval *x = onnx_in(o, 0);
	int64_t a, keepdims, last;
	uint32_t axis;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32 | I32 | I64 | U8 | I8, "the input"));
	if (!x->rank)
		return onnx_fail(o, NPU_EINVAL, "a scalar input");
	TRY(onnx_attr_i(o, "axis", 0, &a));
	TRY(onnx_attr_i(o, "keepdims", 1, &keepdims));
	TRY(onnx_attr_i(o, "select_last_index", 0, &last));
	TRY(onnx_norm_axis(o, a, x->rank, 0, &axis));
	return reduce_node(o, fn, 1u << axis, (int)keepdims, (int)last);
}

int onnx_op_argmax(struct onnx *o) { return arg(o, ND_R_ARGMAX); }
int onnx_op_argmin(struct onnx *o) { return arg(o, ND_R_ARGMIN); }
