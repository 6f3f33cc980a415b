// SPDX-License-Identifier: MIT
/*
 * onnx_shape.c - the shape arithmetic of exported models, done as the
 * model is loaded: Shape, Gather, ConstantOfShape, and Concat of constants
 * compute constants; Unsqueeze and Squeeze are reshapes. PyTorch writes
 * x.view(x.size(0), -1) as Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape: with static shapes that chain is constants (the Gather, and
 * any other op of constants, computed by onnx_eval.c), and the Reshape
 * gets its shape.
 */
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"
#include "ref/ref_nd.h"

#define N	(o->node)

struct oval *onnx_static_out(struct onnx *o, uint32_t i, enum npu_dtype dt, uint32_t rank,
			     const uint32_t *dims)
{
	uint64_t n = onnx_prod(dims, 0, rank);
	struct oval *v;

	if (n > ONNX_MAX_ELEMS) {
		onnx_fail(o, NPU_E2BIG, "an output of %llu elements", (unsigned long long)n);
		return NULL;
	}
	if (i >= N->n_output || !*N->output[i]) {
		onnx_fail(o, NPU_EINVAL, "no output %u", i);
		return NULL;
	}
	if (onnx_charge(o, n * onnx_elem_size(dt)))
		return NULL;
	v = onnx_add(o, N->output[i], dt, rank, dims);
	if (!v)
		return NULL;
	v->data = calloc(n * onnx_elem_size(dt) + 1, 1);
	if (!v->data)
		onnx_fail(o, NPU_ENOMEM, "out of memory");
	return v->data ? v : NULL;
}

/* A constant: known when the model is loaded, and not a graph input. */
static int is_const(const struct oval *v)
{
	return v && v->data && v->input < 0;
}

int onnx_op_shape(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *v;
	int64_t start, end, r;
	uint32_t n;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	r = x->rank;
	TRY(onnx_attr_i(o, "start", 0, &start));
	TRY(onnx_attr_i(o, "end", r, &end));
	/* negative: from the end; then clamped to [0, rank] (opset 15) */
	start = start < 0 ? start + r : start;
	end = end < 0 ? end + r : end;
	start = start < 0 ? 0 : start > r ? r : start;
	end = end < start ? start : end > r ? r : end;
	n = (uint32_t)(end - start);
	v = onnx_static_out(o, 0, NPU_DT_INT64, 1, &n);
	if (!v)
		return o->err;
	for (uint32_t i = 0; i < n; i++)
		((int64_t *)v->data)[i] = x->dims[start + i];
	return 0;
}

/*
 * The axes of Unsqueeze or Squeeze (an attribute before opset 13, input 1
 * from it; none given: 0 of them), made positive against @rank (which for
 * Unsqueeze counts them: @extra), each once: 0 or an error.
 */
static int read_axes(struct onnx *o, uint32_t rank, int extra, uint32_t *axes, uint32_t *n)
{
	int64_t a[NPU_MAX_RANK + 1];
	uint32_t k = 0;

	*n = 0;
	if (o->opset < 13) {
		TRY(onnx_attr_ints(o, "axes", a, NPU_MAX_RANK + 1, &k));
	} else if (onnx_has_in(o, 1)) {
		struct oval *v;

		TRY(onnx_in_static(o, 1, "axes", &v));
		TRY(onnx_want_dt(o, v, I64, "axes"));
		if (v->count > NPU_MAX_RANK + 1)
			return onnx_fail(o, NPU_ENOTSUP, "%llu axes", (unsigned long long)v->count);
		k = (uint32_t)v->count;
		for (uint32_t i = 0; i < k; i++)
			a[i] = onnx_get_i(v, i);
	}
	if (extra)
		rank += k;
	if (rank > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "an output of rank %u (at most %d)", rank,
				 NPU_MAX_RANK);
	for (uint32_t i = 0; i < k; i++) {
		TRY(onnx_norm_axis(o, a[i], rank, 0, &axes[i]));
		for (uint32_t j = 0; j < i; j++)
			if (axes[j] == axes[i])
				return onnx_fail(o, NPU_EINVAL, "axis %lld given twice",
						 (long long)a[i]);
	}
	*n = k;
	return 0;
}

int onnx_op_unsqueeze(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	uint32_t axes[NPU_MAX_RANK + 1], n, rank, dims[NPU_MAX_RANK + 1], k = 0;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	/* an axis counts in the output: the input's rank and the axes */
	TRY(read_axes(o, x->rank, 1, axes, &n));
	if (!n)
		return onnx_fail(o, NPU_EINVAL, "no axes");
	rank = x->rank + n;
	for (uint32_t d = 0; d < rank; d++) {
		int at = 0;

		for (uint32_t i = 0; i < n; i++)
			at |= axes[i] == d;
		dims[d] = at ? 1 : x->dims[k++];
	}
	return onnx_reshape_to(o, rank, dims);
}

int onnx_op_squeeze(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	uint32_t axes[NPU_MAX_RANK + 1], n, dims[NPU_MAX_RANK], rank = 0;

	if (!x)
		return onnx_fail(o, NPU_EINVAL, "no input");
	TRY(read_axes(o, x->rank, 0, axes, &n));
	for (uint32_t d = 0; d < x->rank; d++) {
		int drop = !n && x->dims[d] == 1;	/* no axes: every dim of 1 */

		for (uint32_t i = 0; i < n; i++)
			if (axes[i] == d) {
				if (x->dims[d] != 1)
					return onnx_fail(o, NPU_EINVAL, "axis %u has %u values, not 1",
							 d, x->dims[d]);
				drop = 1;
			}
		if (!drop)
			dims[rank++] = x->dims[d];
	}
	return onnx_reshape_to(o, rank, dims);
}

int onnx_op_constantofshape(struct onnx *o)
{
	const Onnx__AttributeProto *attr = onnx_attr(o, "value");
	struct npu_array val = { .dtype = NPU_DT_FLOAT32 };
	struct oval *s, *v;
	uint32_t dims[NPU_MAX_RANK];
	float zero = 0;
	char why[256];
	size_t es;

	TRY(onnx_in_static(o, 0, "input", &s));
	TRY(onnx_want_dt(o, s, I64, "input"));
	if (s->rank > 1 || s->count > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "a shape of %llu dims (at most %d)",
				 (unsigned long long)s->count, NPU_MAX_RANK);
	for (uint32_t i = 0; i < s->count; i++) {
		int64_t d = onnx_get_i(s, i);

		if (d < 0 || d > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "dim %u is %lld", i, (long long)d);
		dims[i] = (uint32_t)d;
	}
	if (attr) {
		if (attr->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !attr->t)
			return onnx_fail(o, NPU_EINVAL, "attribute 'value' is not a tensor");
		if (onnx_array(attr->t, &val, why, sizeof(why)))
			return onnx_fail(o, NPU_ENOTSUP, "attribute 'value': %s", why);
		if (onnx_widen_f16(&val)) {	/* float16: computed in fp32 */
			npu_array_free(&val);
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		}
		if (val.bytes != onnx_elem_size(val.dtype)) {
			npu_array_free(&val);
			return onnx_fail(o, NPU_EINVAL, "attribute 'value' must hold one value");
		}
	}
	v = onnx_static_out(o, 0, val.dtype, (uint32_t)s->count, dims);
	es = onnx_elem_size(val.dtype);
	for (uint64_t i = 0; v && i < v->count; i++)
		memcpy((char *)v->data + i * es, attr ? val.data : (const void *)&zero, es);
	if (attr)
		npu_array_free(&val);
	return v ? 0 : o->err;
}

int onnx_const_concat(struct onnx *o, uint32_t axis, uint32_t rank, const uint32_t *dims)
{
	struct oval *v;
	uint64_t outer = onnx_prod(dims, 0, axis), inner = onnx_prod(dims, axis + 1, rank);
	size_t es, off = 0;

	for (uint32_t i = 0; i < N->n_input; i++)
		if (!is_const(onnx_in(o, i)))
			return 0;
	v = onnx_static_out(o, 0, onnx_in(o, 0)->dt, rank, dims);
	if (!v)
		return o->err;
	es = onnx_elem_size(v->dt);
	for (uint64_t p = 0; p < outer; p++)
		for (uint32_t i = 0; i < N->n_input; i++) {
			const struct oval *x = onnx_in(o, i);
			size_t len = (size_t)x->dims[axis] * inner * es;

			memcpy((char *)v->data + off, (const char *)x->data + p * len, len);
			off += len;
		}
	return 1;
}

/*
 * ScatterND of constants (a mask built at export time, as Swin's shifted
 * windows build theirs): data copied, then each index tuple's slice
 * replaced by (or, with reduction add / mul, combined with) its update.
 * Known when the model is loaded; at run time it is not supported.
 */
int onnx_const_value(struct onnx *o, struct oval *v)
{
	if (is_const(v))
		return 1;
	if (!v || v->data || !v->dq_x || !is_const(v->dq_x) || !is_const(v->dq_s) ||
	    (v->dq_z && !is_const(v->dq_z)))
		return 0;
	if (onnx_charge(o, v->count * 4))
		return o->err;
	v->data = calloc(v->count + 1, 4);
	if (!v->data)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	if (ref_nd_qdq(&v->dq, v->dq_x->data, v->dq_s->data, v->dq_z ? v->dq_z->data : NULL,
		       v->data))
		return onnx_fail(o, NPU_EINVAL, "a dequantized constant");
	return 1;
}

/*
 * ScatterND of values known only at run time: each index tuple's place
 * as a row of data viewed [rows][slice] (each part through a Gather of
 * 0..dim-1, which counts a negative one from the end and fails the run on
 * one out of range, as onnxruntime does), then ScatterElements of the
 * updates' rows along that axis, with the reduction asked for.
 */
static int scatternd_run_time(struct onnx *o, struct oval *x, struct oval *idx, uint32_t k,
			      const char *red)
{
	uint32_t q = idx->rank - 1, rows = (uint32_t)onnx_prod(x->dims, 0, k);
	uint32_t slice = (uint32_t)onnx_prod(x->dims, k, x->rank);
	uint32_t nu = (uint32_t)onnx_prod(idx->dims, 0, q);
	char n[12][96], flat[96] = "";
	int64_t stride = 1, shp[2];
	Onnx__AttributeProto ax = ONNX__ATTRIBUTE_PROTO__INIT, *axp = &ax;
	Onnx__AttributeProto rd = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[2] = { &ax, &rd };

	ax.name = (char *)"axis";
	ax.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	for (uint32_t d = k; d-- > 0; stride *= x->dims[d]) {
		int64_t *ar = malloc(sizeof(int64_t) * x->dims[d]), dv = d;
		char part[96], g[96], s[96], m[96], sum[96];
		int err;

		if (!ar)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < x->dims[d]; i++)
			ar[i] = i;
		err = onnx_named_const(o, onnx_own_name(o, "ar", d, n[0], 96), NPU_DT_INT64, 1,
				  &x->dims[d], ar);
		free(ar);
		if (err)
			return err;
		/* part d of every tuple, then through the Gather that checks it */
		TRY(onnx_named_const(o, onnx_own_name(o, "d", d, n[1], 96), NPU_DT_INT64, 0, NULL, &dv));
		ax.i = (int64_t)q;
		TRY(onnx_lower_as(o, "Gather", (const char *[]){ N->input[1], n[1] }, 2,
				  onnx_own_name(o, "part", d, part, 96), &axp, 1, 0));
		ax.i = 0;
		TRY(onnx_lower_as(o, "Gather", (const char *[]){ n[0], part }, 2,
				  onnx_own_name(o, "idx", d, g, 96), &axp, 1, 0));
		TRY(onnx_named_const(o, onnx_own_name(o, "st", d, s, 96), NPU_DT_INT64, 0, NULL, &stride));
		TRY(onnx_lower_as(o, "Mul", (const char *[]){ g, s }, 2,
				  onnx_own_name(o, "off", d, m, 96), NULL, 0, 0));
		if (*flat) {
			TRY(onnx_lower_as(o, "Add", (const char *[]){ flat, m }, 2,
					  onnx_own_name(o, "flat", d, sum, 96), NULL, 0, 0));
			memcpy(flat, sum, sizeof(flat));
		} else {
			memcpy(flat, m, sizeof(flat));
		}
	}
	/* the rows [nu][1], each repeated along the slice: ScatterElements' indices */
	shp[0] = nu, shp[1] = 1;
	TRY(onnx_named_const(o, onnx_own_name(o, "s1", 0, n[2], 96), NPU_DT_INT64, 1,
			(uint32_t[]){ 2 }, shp));
	TRY(onnx_lower_as(o, "Reshape", (const char *[]){ flat, n[2] }, 2,
			  onnx_own_name(o, "rows", 0, n[3], 96), NULL, 0, 0));
	shp[1] = slice;
	TRY(onnx_named_const(o, onnx_own_name(o, "s2", 0, n[4], 96), NPU_DT_INT64, 1,
			(uint32_t[]){ 2 }, shp));
	TRY(onnx_lower_as(o, "Expand", (const char *[]){ n[3], n[4] }, 2,
			  onnx_own_name(o, "ix", 0, n[5], 96), NULL, 0, 0));
	TRY(onnx_lower_as(o, "Reshape", (const char *[]){ N->input[2], n[4] }, 2,
			  onnx_own_name(o, "up", 0, n[6], 96), NULL, 0, 0));
	shp[0] = rows;
	TRY(onnx_named_const(o, onnx_own_name(o, "s3", 0, n[7], 96), NPU_DT_INT64, 1,
			(uint32_t[]){ 2 }, shp));
	TRY(onnx_lower_as(o, "Reshape", (const char *[]){ N->input[0], n[7] }, 2,
			  onnx_own_name(o, "data", 0, n[8], 96), NULL, 0, 0));
	ax.i = 0;
	rd.name = (char *)"reduction";
	rd.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
	rd.s.data = (uint8_t *)red;
	rd.s.len = strlen(red);
	TRY(onnx_lower_as(o, "ScatterElements", (const char *[]){ n[8], n[5], n[6] }, 3,
			  onnx_own_name(o, "sc", 0, n[9], 96), attrs, 2, 18));
	{	/* back into data's shape, as output 0 */
		int64_t *xs = malloc(sizeof(int64_t) * x->rank);
		int err;

		if (!xs)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		for (uint32_t d = 0; d < x->rank; d++)
			xs[d] = x->dims[d];
		err = onnx_named_const(o, onnx_own_name(o, "s4", 0, n[10], 96), NPU_DT_INT64, 1, &x->rank,
				  xs);
		free(xs);
		if (err)
			return err;
	}
	return onnx_lower_as(o, "Reshape", (const char *[]){ n[9], n[10] }, 2, N->output[0], NULL,
			     0, 0);
}

int onnx_op_scatternd(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *idx = onnx_in(o, 1), *up = onnx_in(o, 2), *v;
	char red[8];
	uint32_t k, q;
	uint64_t slice, n;
	size_t es;
	int c[3];

	if (!x || !idx || !up)
		return onnx_fail(o, NPU_EINVAL, "three inputs are needed");
	TRY(onnx_want_dt(o, idx, I64, "the indices"));
	TRY(onnx_attr_s(o, "reduction", "none", red, sizeof(red)));
	if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") &&
	    strcmp(red, "max") && strcmp(red, "min"))
		return onnx_fail(o, NPU_ENOTSUP, "reduction '%s'", red);
	if (up->dt != x->dt || !idx->rank)
		return onnx_fail(o, NPU_EINVAL, "updates of another type, or indices of rank 0");
	k = idx->dims[idx->rank - 1];
	q = idx->rank - 1;
	if (!k || k > x->rank || up->rank != q + x->rank - k)
		return onnx_fail(o, NPU_EINVAL, "indices of %u dims into rank %u, updates of rank %u",
				 k, x->rank, up->rank);
	for (uint32_t d = 0; d < up->rank; d++)
		if (up->dims[d] != (d < q ? idx->dims[d] : x->dims[k + d - q]))
			return onnx_fail(o, NPU_EINVAL, "updates' dim %u is %u", d, up->dims[d]);
	if (strcmp(red, "none") && x->dt != NPU_DT_FLOAT32 && x->dt != NPU_DT_INT64 &&
	    x->dt != NPU_DT_INT32)
		return onnx_fail(o, NPU_ENOTSUP, "reduction of %s", onnx_dtype_name(x->dt));
	c[0] = onnx_const_value(o, x);
	c[1] = onnx_const_value(o, idx);
	c[2] = onnx_const_value(o, up);
	if (c[0] < 0 || c[1] < 0 || c[2] < 0)
		return o->err;
	/*
	 * known at load: computed now; else (and for max and min, which the
	 * loop below lacks: its nodes are computed at load instead) at run time
	 */
	if (!c[0] || !c[1] || !c[2] || !strcmp(red, "max") || !strcmp(red, "min"))
		return scatternd_run_time(o, x, idx, k, red);
	v = onnx_static_out(o, 0, x->dt, x->rank, x->dims);
	if (!v)
		return o->err;
	es = onnx_elem_size(x->dt);
	slice = onnx_prod(x->dims, k, x->rank);
	n = onnx_prod(idx->dims, 0, q);
	memcpy(v->data, x->data, x->count * es);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = 0;

		for (uint32_t d = 0; d < k; d++) {
			int64_t j = ((const int64_t *)idx->data)[i * k + d];

			j = j < 0 ? j + x->dims[d] : j;
			if (j < 0 || j >= x->dims[d])
				return onnx_fail(o, NPU_EINVAL, "index %lld out of dim %u",
						 (long long)j, d);
			off = off * x->dims[d] + (uint64_t)j;
		}
		for (uint64_t e = 0; e < slice; e++) {
			uint64_t at = off * slice + e, from = i * slice + e;

			if (!strcmp(red, "none")) {
				memcpy((char *)v->data + at * es, (const char *)up->data + from * es,
				       es);
			} else if (x->dt == NPU_DT_FLOAT32) {
				float *a = (float *)v->data + at, b = ((const float *)up->data)[from];

				*a = red[0] == 'a' ? *a + b : *a * b;
			} else {
				int64_t a = onnx_get_i(v, at), b = onnx_get_i(up, from);
				int64_t r = red[0] == 'a' ? (int64_t)((uint64_t)a + (uint64_t)b) :
					    (int64_t)((uint64_t)a * (uint64_t)b);

				if (x->dt == NPU_DT_INT64)
					((int64_t *)v->data)[at] = r;
				else
					((int32_t *)v->data)[at] = (int32_t)r;
			}
		}
	}
	return 0;
}

/* This file's ops in the importer's registry (onnx.h, struct onnx_op). */
const struct onnx_op onnx_shape_ops[] = {
	ONNX_OP("Shape", onnx_op_shape, "start end", 1),
	ONNX_OP("ScatterND", onnx_op_scatternd, "reduction", 11),
	ONNX_OP("Unsqueeze", onnx_op_unsqueeze, "axes", 1),
	ONNX_OP("Squeeze", onnx_op_squeeze, "axes", 1),
	ONNX_OP("ConstantOfShape", onnx_op_constantofshape, "value", 9),
	ONNX_OP_END
};
