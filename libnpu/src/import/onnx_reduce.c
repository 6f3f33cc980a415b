// SPDX-License-Identifier: MIT
/*
 * onnx_reduce.c - ONNX's reductions (ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp) over any set of axes, with keepdims and the opset-13
 * form of ReduceSum (axes as an input, noop_with_empty_axes), and ArgMax
 * and ArgMin (select_last_index): one nd_reduce node each; CumSum as a
 * reduction too.
 */
#include <stdlib.h>
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

static int onnx_op_reduce_sum(struct onnx *o) { return reduce(o, ND_R_SUM); }
static int onnx_op_reduce_mean(struct onnx *o)
{
	int r = onnx_fuse_layernorm(o);	/* a decomposed LayerNormalization */

	return r ? (r < 0 ? r : 0) : reduce(o, ND_R_MEAN);
}
static int onnx_op_reduce_max(struct onnx *o) { return reduce(o, ND_R_MAX); }
static int onnx_op_reduce_min(struct onnx *o) { return reduce(o, ND_R_MIN); }
static int onnx_op_reduce_prod(struct onnx *o) { return reduce(o, ND_R_PROD); }
static int onnx_op_reduce_sum_square(struct onnx *o) { return reduce(o, ND_R_SUM_SQUARE); }
static int onnx_op_reduce_l1(struct onnx *o) { return reduce(o, ND_R_L1); }
static int onnx_op_reduce_l2(struct onnx *o) { return reduce(o, ND_R_L2); }
static int onnx_op_reduce_log_sum(struct onnx *o) { return reduce(o, ND_R_LOG_SUM); }
static int onnx_op_reduce_log_sum_exp(struct onnx *o) { return reduce(o, ND_R_LOG_SUM_EXP); }

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

static int onnx_op_argmax(struct onnx *o) { return arg(o, ND_R_ARGMAX); }
static int onnx_op_argmin(struct onnx *o) { return arg(o, ND_R_ARGMIN); }

/*
 * CumSum (11, 14): the running sums along an axis known at load, with
 * exclusive and reverse. As a reduction of a masked broadcast: x viewed
 * [outer][1][n][inner] times the [n][n] 0/1 mask of the terms each sum
 * takes, summed over the third dim: fp32 in index order in fp32 (a
 * forward sum is then onnxruntime's running sum exactly), integers
 * exact. It costs n times the elements of x, so a long axis is refused
 * rather than asked of memory.
 */
static int onnx_op_cumsum(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *av;
	struct ir_attrs mul = { 0 }, red = { 0 };
	struct nd_binary *b = &mul.nd.bin;
	struct nd_reduce *r = &red.nd.rd;
	int64_t exclusive, reverse, a;
	uint32_t axis;
	uint64_t outer, n, inner;
	size_t es;
	uint8_t *mask;
	int t[2], prod, y;

	if (!x || !onnx_has_in(o, 1))
		return onnx_fail(o, NPU_EINVAL, "x and axis are needed");
	TRY(onnx_want_dt(o, x, F32 | I32 | I64, "x"));
	TRY(onnx_in_static(o, 1, "axis", &av));
	if (av->count != 1 || (av->dt != NPU_DT_INT32 && av->dt != NPU_DT_INT64))
		return onnx_fail(o, NPU_EINVAL, "axis must be one int32 or int64");
	TRY(onnx_attr_i(o, "exclusive", 0, &exclusive));
	TRY(onnx_attr_i(o, "reverse", 0, &reverse));
	a = onnx_get_i(av, 0);
	TRY(onnx_norm_axis(o, a, x->rank ? x->rank : 1, 0, &axis));
	if (!x->count)
		return onnx_reshape_to(o, x->rank, x->dims);
	outer = x->rank ? onnx_prod(x->dims, 0, axis) : 1;
	n = x->rank ? x->dims[axis] : 1;
	inner = x->count / outer / n;
	if (n > 4096 || x->count * n > ONNX_MAX_ELEMS)
		return onnx_fail(o, NPU_ENOTSUP, "a running sum over %llu elements of %llu (libnpu "
				 "lowers CumSum to n times its input: 4096 and 2^28 at most)",
				 (unsigned long long)n, (unsigned long long)x->count);
	es = ir_elem_size(x->dt);
	TRY(onnx_charge(o, n * n * es));
	mask = calloc(n * n, es);
	if (!mask)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		for (uint64_t j = 0; j < n; j++) {
			/* sum i takes term j */
			int take = reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
			uint8_t *e = mask + (i * n + j) * es;

			if (!take)
				continue;
			if (x->dt == NPU_DT_FLOAT32)
				memcpy(e, &(float){ 1.0f }, 4);
			else if (x->dt == NPU_DT_INT32)
				memcpy(e, &(int32_t){ 1 }, 4);
			else
				memcpy(e, &(int64_t){ 1 }, 8);
		}
	t[1] = onnx_const_shaped(o, x->dt, 2, (uint32_t[]){ (uint32_t)n, (uint32_t)n }, mask);
	free(mask);
	t[0] = t[1] < 0 ? t[1] : onnx_in_t(o, 0);
	if (t[0] < 0)
		return t[0];
	*b = (struct nd_binary){ .fn = ND_MUL, .dtype = x->dt, .rank = 4,
				 .out = { (uint32_t)outer, (uint32_t)n, (uint32_t)n, (uint32_t)inner },
				 .a = { (uint32_t)outer, 1, (uint32_t)n, (uint32_t)inner },
				 .b = { 1, (uint32_t)n, (uint32_t)n, 1 } };
	prod = onnx_temp(o, x->dt, 4, b->out);
	if (prod < 0)
		return prod;
	TRY(onnx_node(o, IR_ND_BINARY, t, 2, &prod, 1, &mul));
	*r = (struct nd_reduce){ .fn = x->dt == NPU_DT_FLOAT32 ? ND_R_SUM_F32 : ND_R_SUM,
				 .dtype = x->dt, .rank = 4, .mask = 1u << 2 };
	memcpy(r->in, b->out, sizeof(b->out[0]) * 4);
	y = onnx_output(o, 0, x->dt, x->rank, x->dims);
	if (y < 0)
		return y;
	return onnx_node(o, IR_ND_REDUCE, &prod, 1, &y, 1, &red);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_reduce_ops[] = {
	ONNX_OP("ReduceSum", onnx_op_reduce_sum, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceMean", onnx_op_reduce_mean, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceMax", onnx_op_reduce_max, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceMin", onnx_op_reduce_min, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceProd", onnx_op_reduce_prod, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceSumSquare", onnx_op_reduce_sum_square,
	        "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceL1", onnx_op_reduce_l1, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceL2", onnx_op_reduce_l2, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceLogSum", onnx_op_reduce_log_sum, "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ReduceLogSumExp", onnx_op_reduce_log_sum_exp,
	        "axes keepdims noop_with_empty_axes", 1),
	ONNX_OP("ArgMax", onnx_op_argmax, "axis keepdims select_last_index", 1),
	ONNX_OP("ArgMin", onnx_op_argmin, "axis keepdims select_last_index", 1),
	ONNX_OP("CumSum", onnx_op_cumsum, "exclusive reverse", 11),
	ONNX_OP_END
};
