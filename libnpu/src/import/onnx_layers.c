// SPDX-License-Identifier: MIT
/*
 * onnx_layers.c - fp32 Conv, Relu, MaxPool / AveragePool, Gemm and MatMul
 * of a model as libnpu's own layer ops (conv2d, relu, pool,
 * fully_connected) where their attributes fit them: those have NPU
 * commands (the full profile's fp32 ones), so an fp32 CNN runs on the
 * NPU, and on OpenCL and the CPU with those ops' kernels. A rank-4 input
 * of a layer is tagged NCHW (its data is ONNX's, in the order its dims
 * say), and the layout pass meets it with an NHWC twin; the N-dimensional
 * ops and concat read every tensor as the array its dims describe, so the
 * tag changes nothing for them. Where an op does not fit (dilations,
 * asymmetric padding, padded or ceil-mode pooling, weights not
 * known at load time), the N-dimensional op is imported instead.
 */
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

/* Spatial sizes past this stay N-dimensional (the layer commands' fields are narrow). */
#define LAYER_MAX_WINDOW	64

/* @v is an fp32 activation a layer op can read. */
static int fits_act(const struct oval *v, uint32_t rank)
{
	return v && v->dt == NPU_DT_FLOAT32 && (!rank || v->rank == rank) && v->rank &&
	       !(v->data && v->input < 0) && !v->dq_x;
}

/* @v's values are known at load time (a constant, or an input's fixed value). */
static int is_const(const struct oval *v)
{
	return v && v->data && v->dt == NPU_DT_FLOAT32 && !v->dq_x;
}

/* @v's tensor, tagged NCHW at rank 4 when @nchw: its id, or an error. */
static int act_tensor(struct onnx *o, struct oval *v, int nchw)
{
	int t = onnx_tensor(o, v);

	if (t >= 0 && nchw && v->rank == 4)
		o->g->t[t].d.layout = NPU_LAYOUT_NCHW;
	return t;
}

/* Output 0, fp32, NCHW when @nchw. */
static int act_output(struct onnx *o, uint32_t rank, const uint32_t *dims, int nchw)
{
	int y = onnx_output(o, 0, NPU_DT_FLOAT32, rank, dims);

	if (y >= 0 && nchw)
		o->g->t[y].d.layout = NPU_LAYOUT_NCHW;
	return y;
}

/*
 * A constant of fp32 @data with @rank dims @dims in @layout: @v's bytes
 * (taken by the graph where it can), or with @v NULL, malloc'd @data the
 * graph takes (freed on a failure).
 */
static int constant(struct onnx *o, struct oval *v, void *data, uint32_t rank,
		    const uint32_t *dims, uint32_t layout)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_FLOAT32, .rank = rank, .data = data,
				     .layout = layout };
	int id;

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	if (v)
		return onnx_const_of(o, &d, v);
	id = ir_add_desc_take(o->g, &d, data);
	if (id < 0) {
		free(data);
		return onnx_fail(o, id, "%s", o->g->err);
	}
	return id;
}

/* A 1-D bias of @n values: [n], or [1][n]. */
static int fits_bias(const struct oval *b, uint32_t n)
{
	return is_const(b) && b->count == n &&
	       (b->rank == 1 || (b->rank == 2 && b->dims[0] == 1));
}

int onnx_layer_conv(struct onnx *o, const struct window *w, uint32_t group,
		    const uint32_t *ydims)
{
	struct oval *x = onnx_in(o, 0), *wv = onnx_in(o, 1);
	struct oval *b = onnx_has_in(o, 2) ? onnx_in(o, 2) : NULL;
	struct ir_attrs a = { 0 };
	int t[3] = { -1, -1, -1 }, y;

	if (!fits_act(x, 4) || w->nsp != 2 || !is_const(wv) ||
	    (b && !(is_const(b) && b->rank == 1 && b->count == ydims[1])))
		return 0;
	for (int i = 0; i < 2; i++)
		if (w->d[i] != 1 || w->lo[i] != w->hi[i] || w->lo[i] > LAYER_MAX_WINDOW ||
		    w->k[i] > LAYER_MAX_WINDOW || w->s[i] > LAYER_MAX_WINDOW)
			return 0;
	t[0] = act_tensor(o, x, 1);
	if (t[0] < 0)
		return t[0];
	/*
	 * The filter OIHW made OHWI here, as the layout pass would twin it:
	 * the graph holds the one copy the op reads, not both.
	 */
	{
		uint32_t ohwi[4] = { wv->dims[0], wv->dims[2], wv->dims[3], wv->dims[1] };
		void *f = ir_to_nhwc(wv->data, wv->dims, sizeof(float));

		if (!f)
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		t[1] = constant(o, NULL, f, 4, ohwi, NPU_LAYOUT_NHWC);
		if (t[1] < 0)
			return t[1];
	}
	if (b) {
		t[2] = constant(o, b, b->data, 1, &ydims[1], NPU_LAYOUT_NHWC);
		if (t[2] < 0)
			return t[2];
	}
	y = act_output(o, 4, ydims, 1);
	if (y < 0)
		return y;
	a.stride[0] = (uint32_t)w->s[0];
	a.stride[1] = (uint32_t)w->s[1];
	a.dilation[0] = a.dilation[1] = 1;
	a.groups = group;
	a.pad[0] = a.pad[2] = (uint32_t)w->lo[0];
	a.pad[1] = a.pad[3] = (uint32_t)w->lo[1];
	TRY(onnx_node(o, IR_CONV2D, t, 3, &y, 1, &a));
	return 1;
}

int onnx_layer_relu(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0);
	int t, y;

	if (!fits_act(x, 0))
		return 0;
	/*
	 * In the input's layout, tagged as it is: an NCHW one (a layer's
	 * output) is met by its twin, so conv -> relu -> pool takes no
	 * round trip; any other is an array, element by element.
	 */
	t = act_tensor(o, x, 0);
	if (t < 0)
		return t;
	y = act_output(o, x->rank, x->dims, o->g->t[t].d.layout == NPU_LAYOUT_NCHW);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_RELU, &t, 1, &y, 1, NULL));
	return 1;
}

int onnx_layer_pool(struct onnx *o, const struct window *w, const uint32_t *ydims, int average)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs a = { 0 };
	int t, y;

	if (!fits_act(x, 4) || w->nsp != 2)
		return 0;
	for (int i = 0; i < 2; i++) {
		/* no padding, and no window past the input (ceil mode) */
		if (w->d[i] != 1 || w->lo[i] || w->hi[i] || w->k[i] > LAYER_MAX_WINDOW ||
		    w->s[i] > LAYER_MAX_WINDOW ||
		    ((int64_t)ydims[2 + i] - 1) * w->s[i] + w->k[i] > x->dims[2 + i])
			return 0;
		a.kernel[i] = (uint32_t)w->k[i];
		a.stride[i] = (uint32_t)w->s[i];
	}
	a.average = average;
	t = act_tensor(o, x, 1);
	if (t < 0)
		return t;
	y = act_output(o, 4, ydims, 1);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_POOL, &t, 1, &y, 1, &a));
	return 1;
}

int onnx_layer_gemm(struct onnx *o, int trans_b)
{
	struct oval *x = onnx_in(o, 0), *wv = onnx_in(o, 1);
	struct oval *b = onnx_has_in(o, 2) ? onnx_in(o, 2) : NULL;
	uint32_t k, n, wdims[2], ydims[NPU_MAX_RANK], xdims[2];
	const float *src;
	float *wt;
	int t[3] = { -1, -1, -1 }, y, flat, badd = -1;
	const char *out = NULL;

	if (!fits_act(x, 0) || x->rank < 2 || !is_const(wv) || wv->rank != 2)
		return 0;
	k = x->dims[x->rank - 1];
	n = trans_b ? wv->dims[0] : wv->dims[1];
	if ((trans_b ? wv->dims[1] : wv->dims[0]) != k || (b && !fits_bias(b, n)) || !k ||
	    x->count / k > UINT32_MAX)
		return 0;
	t[0] = act_tensor(o, x, 0);
	if (t[0] < 0)
		return t[0];
	/*
	 * A MatMul of a stack of matrices by one constant (a transformer's
	 * linear layer, [batch][tokens][k] x [k][n]) is one dense layer over
	 * all their rows: the input seen as [rows][k] and the output as
	 * [..][n], both views.
	 */
	xdims[0] = (uint32_t)(x->count / k);
	xdims[1] = k;
	flat = x->rank > 2;
	if (flat) {
		int v = onnx_temp(o, NPU_DT_FLOAT32, 2, xdims);

		if (v < 0)
			return v;
		TRY(onnx_node(o, IR_RESHAPE, &t[0], 1, &v, 1, NULL));
		t[0] = v;
	}
	/* the weights as a dense layer's: [n][k] */
	wt = malloc(sizeof(float) * ((size_t)n * k + 1));
	if (!wt)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	src = wv->data;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < k; j++)
			wt[(size_t)i * k + j] = src[trans_b ? (size_t)i * k + j : (size_t)j * n + i];
	wdims[0] = n;
	wdims[1] = k;
	t[1] = constant(o, NULL, wt, 2, wdims, NPU_LAYOUT_NHWC);
	if (t[1] < 0)
		return t[1];
	if (!b) {	/* MatMul -> Add of a row: a transformer's bias, taken in */
		badd = onnx_bias_after(o, n, x->rank, &b);
		out = badd >= 0 ? o->gp->node[badd]->output[0] : NULL;
	}
	if (b) {
		t[2] = constant(o, b, b->data, 1, &n, NPU_LAYOUT_NHWC);
		if (t[2] < 0)
			return t[2];
	}
	ydims[0] = xdims[0];
	ydims[1] = n;
	y = flat ? onnx_temp(o, NPU_DT_FLOAT32, 2, ydims) :
	    out ? onnx_output_named(o, out, NPU_DT_FLOAT32, 2, ydims) : act_output(o, 2, ydims, 0);
	if (y < 0)
		return y;
	TRY(onnx_node(o, IR_FC, t, 3, &y, 1, NULL));
	if (flat) {
		int z;

		memcpy(ydims, x->dims, sizeof(uint32_t) * x->rank);
		ydims[x->rank - 1] = n;
		z = out ? onnx_output_named(o, out, NPU_DT_FLOAT32, x->rank, ydims) :
			  act_output(o, x->rank, ydims, 0);
		if (z < 0)
			return z;
		TRY(onnx_node(o, IR_RESHAPE, &y, 1, &z, 1, NULL));
	}
	if (badd >= 0)
		o->done[badd] = 1;
	return 1;
}
