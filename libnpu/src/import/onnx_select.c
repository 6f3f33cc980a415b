// SPDX-License-Identifier: MIT
/*
 * onnx_select.c - ops that pick elements by index or by a condition,
 * lowered onto comparisons, Where and gathers: Hardmax (the first
 * maximum's one-hot), ReverseSequence (each entry's first sequence_lens
 * steps reversed), Compress (the slices a condition known at load keeps),
 * EyeLike and Size (constants of the input's static shape), opset 7's
 * Upsample (opset 10's Resize) and MaxUnpool (a scatter at MaxPool's
 * indices). They run where the ops they become run.
 */
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/*
 * Hardmax: 1 at the first maximum along ``axis``, 0 elsewhere. Before 13
 * the input is a matrix [prod(:axis)][prod(axis:)], its rows one-hot.
 */
static int onnx_op_hardmax(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	int64_t axis, len, two[2];
	uint32_t ax;
	int64_t *ar;
	Onnx__AttributeProto a[3], *ap[3];
	const char *in = N->input[0], *am, *r, *oh;

	TRY(onnx_attr_i(o, "axis", o->opset >= 13 ? -1 : 1, &axis));
	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(onnx_want_dt(o, x, F32, "the input"));
	TRY(onnx_norm_axis(o, axis, x->rank, 0, &ax));
	if (o->opset < 13) {	/* coerced to 2-D: one axis of everything from axis on */
		two[0] = (int64_t)onnx_prod(x->dims, 0, ax);
		two[1] = (int64_t)onnx_prod(x->dims, ax, x->rank);
		in = em_shaped(&e, in, 2, two);
		ax = 1;
		len = two[1];
	} else {
		len = x->dims[ax];
	}
	ap[0] = em_int_attr(&a[0], "axis", ax);
	ap[1] = em_int_attr(&a[1], "keepdims", 1);
	ap[2] = em_int_attr(&a[2], "select_last_index", 0);
	am = em_fresh(&e);
	if (am && in && !e.err)
		e.err = onnx_lower_as(o, "ArgMax", &in, 1, am, ap, 3, 13);
	/* the index along the axis, shaped to broadcast against ArgMax's */
	ar = malloc(sizeof(int64_t) * (size_t)(len ? len : 1));
	if (!ar) {
		em_done(&e);
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < len; i++)
		ar[i] = i;
	r = em_cst(&e, NPU_DT_INT64, ar, (uint32_t)len);
	free(ar);
	{
		int64_t rd[NPU_MAX_RANK];
		uint32_t rank = o->opset < 13 ? 2 : x->rank;

		for (uint32_t i = 0; i < rank; i++)
			rd[i] = i == ax ? len : 1;
		r = em_shaped(&e, r, rank, rd);
	}
	oh = em_to(&e, "Cast", (const char *[]){ em_op2(&e, "Equal", r, e.err ? NULL : am) }, 1,
		   em_int_attr(&a[0], "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT), NULL);
	if (o->opset < 13) {
		int64_t dims[NPU_MAX_RANK];

		for (uint32_t i = 0; i < x->rank; i++)
			dims[i] = x->dims[i];
		oh = em_shaped(&e, oh, x->rank, dims);
	}
	em_to(&e, "Identity", &oh, 1, NULL, N->output[0]);
	return em_done(&e);
}

/*
 * ReverseSequence: along time_axis, entry b's first sequence_lens[b]
 * steps reversed, the rest as they are: a GatherElements by the index
 * t < len ? len - 1 - t : t, computed at run time from the lengths.
 */
static int onnx_op_reverse_sequence(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *sl = onnx_in(o, 1);
	struct onnx_emit e = { .o = o };
	int64_t ba, ta, *ar, td[NPU_MAX_RANK], bd[NPU_MAX_RANK], xd[NPU_MAX_RANK];
	Onnx__AttributeProto a;
	const char *t, *len, *rev, *idx;

	TRY(onnx_attr_i(o, "batch_axis", 1, &ba));
	TRY(onnx_attr_i(o, "time_axis", 0, &ta));
	if (!x || !sl)
		return onnx_fail(o, NPU_EINVAL, "input and sequence_lens are needed");
	TRY(onnx_want_dt(o, sl, I64, "sequence_lens"));
	if (x->rank < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta ||
	    sl->rank != 1 || sl->dims[0] != x->dims[ba])
		return onnx_fail(o, NPU_EINVAL, "input of rank >= 2, batch_axis and time_axis 0 "
				 "and 1, sequence_lens [batch]");
	ar = malloc(sizeof(int64_t) * x->dims[ta]);
	if (!ar)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < x->dims[ta]; i++)
		ar[i] = i;
	for (uint32_t i = 0; i < x->rank; i++) {
		td[i] = i == ta ? x->dims[ta] : 1;
		bd[i] = i == ba ? x->dims[ba] : 1;
		xd[i] = x->dims[i];
	}
	t = em_shaped(&e, em_cst(&e, NPU_DT_INT64, ar, x->dims[ta]), x->rank, td);
	free(ar);
	len = em_shaped(&e, N->input[1], x->rank, bd);
	rev = em_op2(&e, "Sub", em_op2(&e, "Sub", len, em_cst(&e, NPU_DT_INT64, (int64_t[]){ 1 },
							     0)), t);
	idx = em_where(&e, em_op2(&e, "Less", t, len), rev, t);
	idx = em_op2(&e, "Expand", idx, em_cst(&e, NPU_DT_INT64, xd, x->rank));
	em_to(&e, "GatherElements", (const char *[]){ N->input[0], idx }, 2,
	      em_int_attr(&a, "axis", ta), N->output[0]);
	return em_done(&e);
}

/*
 * Compress: the slices along ``axis`` (the input flattened without one)
 * where the condition is true. How many is data: the condition must be
 * known at load (a run-time count comes with dynamic shapes); then it is
 * a Gather by the kept indices.
 */
static int onnx_op_compress(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *c = onnx_in(o, 1);
	struct onnx_emit e = { .o = o };
	int64_t axis, *keep;
	uint32_t ax, n = 0, len;
	int has_axis = onnx_attr(o, "axis") != NULL;
	Onnx__AttributeProto a;
	const char *in = N->input[0];

	TRY(onnx_attr_i(o, "axis", 0, &axis));
	if (!x || !c)
		return onnx_fail(o, NPU_EINVAL, "input and condition are needed");
	TRY(onnx_want_dt(o, c, 1u << NPU_DT_BOOL, "condition"));
	if (c->rank != 1 || onnx_const_value(o, c) <= 0)
		return onnx_fail(o, NPU_ENOTSUP, "a condition known only at run time (how many "
				 "slices it keeps is data: dynamic shapes)");
	if (has_axis) {
		TRY(onnx_norm_axis(o, axis, x->rank, 0, &ax));
		len = x->dims[ax];
	} else {	/* the input flattened */
		int64_t all = (int64_t)x->count;

		in = em_shaped(&e, in, 1, &all);
		ax = 0;
		len = (uint32_t)x->count;
	}
	if (c->dims[0] > len)
		return onnx_fail(o, NPU_EINVAL, "a condition of %u for %u slices", c->dims[0], len);
	keep = malloc(sizeof(int64_t) * (c->dims[0] + 1));
	if (!keep)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < c->dims[0]; i++)
		if (onnx_get_i(c, i))
			keep[n++] = i;
	if (!n) {
		free(keep);
		return onnx_fail(o, NPU_ENOTSUP, "a condition that keeps nothing (an empty output)");
	}
	em_to(&e, "Gather", (const char *[]){ in, em_cst(&e, NPU_DT_INT64, keep, n) }, 2,
	      em_int_attr(&a, "axis", ax), N->output[0]);
	free(keep);
	return em_done(&e);
}

/* EyeLike: the input's 2-D shape, ones on diagonal k; of ``dtype`` or the input's. */
static int onnx_op_eye_like(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *y;
	int64_t k, dtype;
	enum npu_dtype dt;
	size_t es;
	char *v;

	TRY(onnx_attr_i(o, "k", 0, &k));
	TRY(onnx_attr_i(o, "dtype", 0, &dtype));
	if (!x || x->rank != 2)
		return onnx_fail(o, NPU_EINVAL, "an input of rank 2 is needed");
	dt = dtype ? onnx_dtype_from(dtype) : x->dt;
	if (!dt || dt == NPU_DT_FLOAT16 || dt == NPU_DT_BFLOAT16)
		return onnx_fail(o, NPU_ENOTSUP, "dtype %lld", (long long)dtype);
	es = onnx_elem_size(dt);
	y = onnx_static_out(o, 0, dt, 2, x->dims);
	if (!y)
		return NPU_EINVAL;
	v = y->data;
	for (uint32_t r = 0; r < x->dims[0]; r++) {
		int64_t c = (int64_t)r + k;

		if (c < 0 || c >= x->dims[1])
			continue;
		if (dt == NPU_DT_FLOAT32)
			((float *)v)[(size_t)r * x->dims[1] + c] = 1.0f;
		else	/* a little-endian 1 of the integer or bool type */
			v[((size_t)r * x->dims[1] + c) * es] = 1;
	}
	return 0;
}

/* Size: the input's element count, an int64 scalar known at load. */
static int onnx_op_size(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *y;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	y = onnx_static_out(o, 0, NPU_DT_INT64, 0, NULL);
	if (!y)
		return NPU_EINVAL;
	*(int64_t *)y->data = (int64_t)x->count;
	return 0;
}

/*
 * Upsample (7, 9; deprecated at 10): opset 10's Resize of the same scales
 * (an attribute at 7, an input at 9) and mode, whose coordinates are
 * asymmetric and nearest rounds down, as Upsample's were.
 */
static int onnx_op_upsample(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	struct onnx_emit e = { .o = o };
	const Onnx__AttributeProto *sa = onnx_attr(o, "scales");
	Onnx__AttributeProto *mode = (Onnx__AttributeProto *)onnx_attr(o, "mode");
	const char *scales;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	if (o->opset < 9) {
		if (!sa || sa->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS ||
		    sa->n_floats != x->rank)
			return onnx_fail(o, NPU_EINVAL, "scales must be %u floats", x->rank);
		scales = em_cst(&e, NPU_DT_FLOAT32, sa->floats, (uint32_t)sa->n_floats);
	} else {
		if (!onnx_has_in(o, 1))
			return onnx_fail(o, NPU_EINVAL, "no scales input");
		scales = N->input[1];
	}
	if (scales && !e.err)
		e.err = onnx_lower_as(o, "Resize", (const char *[]){ N->input[0], scales }, 2,
				      N->output[0], mode ? &mode : NULL, mode ? 1 : 0, 10);
	return em_done(&e);
}

/*
 * MaxUnpool (9, 11): zeros of the output's shape (``output_shape`` where
 * given and known at load, else each spatial dim (in - 1) * stride +
 * kernel - pads), X's values written at their MaxPool indices (flat over
 * the whole output): a ScatterElements over it flattened.
 */
static int onnx_op_max_unpool(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *ix = onnx_in(o, 1);
	struct onnx_emit e = { .o = o };
	int64_t k[ND_MAX_SP], st[ND_MAX_SP], pd[2 * ND_MAX_SP] = { 0 }, yd[NPU_MAX_RANK];
	int64_t xflat;
	uint32_t nk = 0, ns = 0, np = 0, nsp;
	uint64_t total = 1;
	Onnx__AttributeProto a;
	const char *z, *y;
	float *zeros;

	TRY(onnx_attr_ints(o, "kernel_shape", k, ND_MAX_SP, &nk));
	TRY(onnx_attr_ints(o, "strides", st, ND_MAX_SP, &ns));
	TRY(onnx_attr_ints(o, "pads", pd, 2 * ND_MAX_SP, &np));
	if (!x || !ix)
		return onnx_fail(o, NPU_EINVAL, "X and I are needed");
	TRY(onnx_want_dt(o, x, F32, "X"));
	TRY(onnx_want_dt(o, ix, I64, "I"));
	nsp = x->rank - 2;
	if (x->rank < 3 || x->rank - 2 > ND_MAX_SP || nk != nsp || (ns && ns != nsp) ||
	    (np && np != 2 * nsp) || ix->count != x->count)
		return onnx_fail(o, NPU_EINVAL, "X of rank %u with kernel_shape, strides and pads "
				 "of its spatial dims, and I of its shape", x->rank);
	yd[0] = x->dims[0];
	yd[1] = x->dims[1];
	for (uint32_t i = 0; i < nsp; i++)
		yd[2 + i] = ((int64_t)x->dims[2 + i] - 1) * (ns ? st[i] : 1) + k[i] - pd[i] -
			    pd[nsp + i];
	if (onnx_has_in(o, 2)) {	/* output_shape, known at load */
		struct oval *os = onnx_in(o, 2);

		if (os->dt != NPU_DT_INT64 || os->count != x->rank || onnx_const_value(o, os) <= 0)
			return onnx_fail(o, NPU_ENOTSUP, "output_shape of %u values known at load",
					 x->rank);
		for (uint32_t i = 0; i < x->rank; i++)
			yd[i] = onnx_get_i(os, i);
	}
	for (uint32_t i = 0; i < x->rank; i++) {
		if (yd[i] < 1 || yd[i] > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "output dim %u: %lld", i, (long long)yd[i]);
		total *= (uint64_t)yd[i];
	}
	if (total > ONNX_MAX_ELEMS)
		return onnx_fail(o, NPU_EINVAL, "an output of %llu elements",
				 (unsigned long long)total);
	zeros = calloc((size_t)total, sizeof(float));
	if (!zeros)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	z = em_cst(&e, NPU_DT_FLOAT32, zeros, (uint32_t)total);
	free(zeros);
	xflat = (int64_t)x->count;
	y = em_to(&e, "ScatterElements", (const char *[]){ z,
		  em_shaped(&e, N->input[1], 1, &xflat), em_shaped(&e, N->input[0], 1, &xflat) }, 3,
		  em_int_attr(&a, "axis", 0), NULL);
	em_to(&e, "Reshape", (const char *[]){ y, em_cst(&e, NPU_DT_INT64, yd, x->rank) }, 2, NULL,
	      N->output[0]);
	return em_done(&e);
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_select_ops[] = {
	ONNX_OP("Hardmax", onnx_op_hardmax, "axis", 1),
	ONNX_OP("ReverseSequence", onnx_op_reverse_sequence, "batch_axis time_axis", 10),
	ONNX_OP("Compress", onnx_op_compress, "axis", 9),
	ONNX_OP("EyeLike", onnx_op_eye_like, "dtype k", 9),
	ONNX_OP("Size", onnx_op_size, "", 1),
	ONNX_OP("Upsample", onnx_op_upsample, "mode scales", 7),
	ONNX_OP("MaxUnpool", onnx_op_max_unpool, "kernel_shape pads strides", 9),
	ONNX_OP_END
};
