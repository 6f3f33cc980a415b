// SPDX-License-Identifier: MIT
/*
 * onnx_qdq.c - QDQ folding as a model is read: DequantizeLinear -> Conv,
 * Gemm or MatMul (-> Relu) -> QuantizeLinear, the form onnxruntime's
 * quantizer writes, becomes libnpu's int8 convolution or fully connected
 * op with ONNX's requantization (an fp32 multiplier x_scale * w_scale /
 * y_scale, ties to even), which is how onnxruntime runs it too
 * (QLinearConv). The NPU, OpenCL and the CPU reference then all run it in
 * int8. uint8 activations run as int8 with the zero point moved by 128
 * (x - zp = (x ^ 0x80) - (zp - 128), exactly); uint8 weights with zero
 * point 128 likewise become symmetric int8 ones.
 *
 * Nothing here is required for correctness: whenever a condition does not
 * hold, the float op is imported and the dequantized values are made.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* A per-tensor static scale and zero point of a dequantized value, or 0. */
static int per_tensor(const struct oval *v, float *scale, int32_t *zp)
{
	if (!v || !v->dq_x || v->dq.axis != 1 || !v->dq_s->data || v->dq_s->count != 1)
		return 0;
	*scale = ((const float *)v->dq_s->data)[0];
	*zp = v->dq_z ? (int32_t)onnx_get_i(v->dq_z, 0) : 0;
	return *scale > 0 && isfinite(*scale);
}

/* The nodes after the current one that read @name, and the last of them; -1 if an output. */
static int readers(struct onnx *o, const char *name, int *last)
{
	const struct onnx_use *u;
	size_t n;

	if (onnx_graph_output(o, name))
		return -1;
	n = onnx_uses_after(o, name, o->node_index, &u);
	if (n)
		*last = u[n - 1].node;
	return (int)n;
}

/*
 * The QuantizeLinear that alone reads the current node's output (through
 * a Relu alone, *@relu), per tensor with static parameters: its index, or
 * -1. *@ys, *@yz, *@ydt: its scale, zero point and type.
 */
static int sole_quantize(struct onnx *o, int *relu, float *ys, int32_t *yz, enum npu_dtype *ydt)
{
	const Onnx__NodeProto *q;
	const char *name = N->n_output == 1 ? N->output[0] : NULL;
	int j = -1;

	*relu = -1;
	if (!name || readers(o, name, &j) != 1)
		return -1;
	if (!strcmp(o->gp->node[j]->op_type, "Relu") && o->gp->node[j]->n_output == 1 &&
	    !o->gp->node[j]->n_attribute) {
		*relu = j;
		if (readers(o, o->gp->node[j]->output[0], &j) != 1)
			return -1;
	}
	q = o->gp->node[j];
	if (strcmp(q->op_type, "QuantizeLinear") || (q->domain && *q->domain) || q->n_input < 2 ||
	    q->n_output != 1 || q->n_attribute > 1 ||
	    strcmp(q->input[0], *relu >= 0 ? o->gp->node[*relu]->output[0] : name))
		return -1;
	{
		struct oval *s = onnx_find(o, q->input[1]);
		struct oval *z = q->n_input > 2 ? onnx_find(o, q->input[2]) : NULL;

		if (!s || !s->data || s->dt != NPU_DT_FLOAT32 || s->count != 1 ||
		    (q->n_input > 2 && q->input[2][0] && (!z || !z->data || z->count != 1)))
			return -1;
		*ys = ((const float *)s->data)[0];
		*ydt = z ? z->dt : NPU_DT_UINT8;
		*yz = z ? (int32_t)onnx_get_i(z, 0) : 0;
		if (!(*ys > 0) || !isfinite(*ys) || (*ydt != NPU_DT_INT8 && *ydt != NPU_DT_UINT8))
			return -1;
	}
	return j;
}

/*
 * The int8 tensor libnpu's int8 ops read for quantized value @v, its
 * quantization (@scale, @zp of @v's type) set, NCHW when @nchw: @v's own
 * tensor (int8), or a flipped copy (uint8). -1 when @v already has an int8
 * tensor of another quantization, or is a constant; else an error.
 */
/*
 * A quantized constant (an epsilon, a scale) as an int8 operand: a copy of
 * its own, uint8 values flipped, so that the value's tensor stays as the
 * model stored it.
 */
static int q8_const(struct onnx *o, const struct oval *v, float scale, int32_t zp,
		    uint32_t rank, const uint32_t *dims, int nchw)
{
	uint64_t n = v->count ? v->count : 1;
	int32_t zp8 = v->dt == NPU_DT_UINT8 ? zp - 128 : zp;
	int8_t *q;
	int t;

	if ((v->dt != NPU_DT_INT8 && v->dt != NPU_DT_UINT8) || zp8 < -128 || zp8 > 127)
		return -1;
	q = malloc(n);
	if (!q)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		q[i] = v->dt == NPU_DT_UINT8 ? (int8_t)(((const uint8_t *)v->data)[i] - 128) :
		       ((const int8_t *)v->data)[i];
	t = onnx_const_shaped(o, NPU_DT_INT8, rank, dims, q);
	free(q);
	if (t >= 0) {
		o->g->t[t].d.scale = scale;
		o->g->t[t].d.zero_point = zp8;
		o->g->t[t].d.layout = nchw ? NPU_LAYOUT_NCHW : NPU_LAYOUT_NHWC;
	}
	return t;
}

static int q8_tensor(struct onnx *o, struct oval *v, float scale, int32_t zp, int nchw)
{
	int32_t zp8 = v->dt == NPU_DT_UINT8 ? zp - 128 : zp;
	struct npu_tensor_desc *d;
	int t;

	if (v->i8 >= 0) {
		d = &o->g->t[v->i8].d;
		return d->scale == scale && d->zero_point == zp8 &&
		       (d->layout == NPU_LAYOUT_NCHW) == !!nchw ? v->i8 : -1;
	}
	if ((v->dt != NPU_DT_INT8 && v->dt != NPU_DT_UINT8) || zp8 < -128 || zp8 > 127 ||
	    (nchw && v->rank != 4))
		return -1;
	if (v->data && v->input < 0)
		return q8_const(o, v, scale, zp, v->rank, v->dims, nchw);
	t = onnx_tensor(o, v);
	if (t < 0)
		return t;
	if (v->dt == NPU_DT_UINT8) {
		struct ir_attrs a = { 0 };
		int u = t;

		t = onnx_temp(o, NPU_DT_INT8, v->rank, v->dims);
		if (t < 0)
			return t;
		a.nd.un = (struct nd_unary){ .fn = ND_FLIP128, .dtype = NPU_DT_UINT8,
					     .count = v->count };
		TRY(onnx_node(o, IR_ND_UNARY, &u, 1, &t, 1, &a));
	}
	/* an int8 activation's quantization is what its dequantization says */
	d = &o->g->t[t].d;
	d->scale = scale;
	d->zero_point = zp8;
	d->layout = nchw ? NPU_LAYOUT_NCHW : NPU_LAYOUT_NHWC;
	v->i8 = t;
	return t;
}

/* The folded op's output: int8 (or uint8 flipped), named as the QuantizeLinear's. */
static int q8_output(struct onnx *o, const char *name, enum npu_dtype ydt, float ys, int32_t yz,
		     uint32_t rank, const uint32_t *dims, int nchw, struct oval **out)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_INT8, .rank = rank, .scale = ys,
				     .zero_point = ydt == NPU_DT_UINT8 ? yz - 128 : yz,
				     .layout = nchw ? NPU_LAYOUT_NCHW : NPU_LAYOUT_NHWC };
	struct oval *v;
	int id;

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	id = ir_add_desc(o->g, &d);
	if (id < 0)
		return onnx_fail(o, id, "%s", o->g->err);
	v = onnx_add(o, name, ydt, rank, dims);
	if (!v)
		return NPU_EINVAL;
	v->i8 = id;
	if (ydt == NPU_DT_INT8) {
		v->id = id;
		npu_graph_set_tensor_name(o->g, id, v->name);
	}
	*out = v;
	return id;
}

/* Weights: a constant int8 (or uint8 with zero points of 128), per tensor or per @axis. */
struct qweights {
	int8_t *w;		/* as int8, symmetric (malloc'd) */
	float *scales;		/* @n of them */
	uint32_t n;
};

static int q8_weights(const struct oval *v, uint32_t axis, uint32_t channels, struct qweights *q)
{
	const struct oval *x = v->dq_x;
	int flip = x && x->dt == NPU_DT_UINT8;

	memset(q, 0, sizeof(*q));
	if (!x || !x->data || x->input >= 0 || (x->dt != NPU_DT_INT8 && x->dt != NPU_DT_UINT8) ||
	    !v->dq_s->data)
		return 0;
	q->n = (uint32_t)v->dq_s->count;
	if (q->n != 1 && (q->n != channels || v->dq.axis != channels || v->dq.axis == 1 ||
			  (axis == 0 ? v->dq.outer != 1 : v->dq.inner != 1)))
		return 0;
	for (uint32_t c = 0; c < q->n; c++) {
		float s = ((const float *)v->dq_s->data)[c];
		int64_t z = v->dq_z ? onnx_get_i(v->dq_z, c) : 0;

		if (!(s > 0) || !isfinite(s) || z != (flip ? 128 : 0))
			return 0;
	}
	q->w = malloc(x->count);
	q->scales = malloc(sizeof(float) * q->n);
	if (!q->w || !q->scales) {
		free(q->w);
		free(q->scales);
		return -1;
	}
	for (uint64_t i = 0; i < x->count; i++)
		q->w[i] = (int8_t)(((const uint8_t *)x->data)[i] ^ (flip ? 0x80 : 0));
	memcpy(q->scales, v->dq_s->data, sizeof(float) * q->n);
	return 1;
}

/* An int32 bias dequantized with the scales x_scale * w_scale (onnxruntime's). */
static int q8_bias(struct onnx *o, const struct oval *b, float xs, const struct qweights *w,
		   uint32_t channels, int *id)
{
	const struct oval *x = b ? b->dq_x : NULL;
	struct npu_tensor_desc d = { .dtype = NPU_DT_INT32, .rank = 1, .dims = { channels } };

	*id = -1;
	if (!b)
		return 1;
	if (!x || !x->data || x->input >= 0 || x->dt != NPU_DT_INT32 || x->count != channels ||
	    (b->dq_s && !b->dq_s->data))
		return 0;
	for (uint32_t c = 0; c < channels && b->dq_s; c++) {	/* QLinearConv's: implied */
		float s = ((const float *)b->dq_s->data)[b->dq_s->count == 1 ? 0 : c];
		float want = xs * w->scales[w->n == 1 ? 0 : c];

		if ((b->dq_z && onnx_get_i(b->dq_z, b->dq_z->count == 1 ? 0 : c)) ||
		    fabsf(s - want) > 1e-6f * want)
			return 0;
	}
	d.scale = xs * w->scales[0];
	d.data = x->data;
	*id = ir_add_desc(o->g, &d);
	return *id < 0 ? onnx_fail(o, *id, "%s", o->g->err) : 1;
}

/*
 * A folded op's int8 operands: x's int8 tensor (t[0]; NCHW when @nchw),
 * the weights (*@q, per output channel along @axis, @channels of them)
 * and the bias tensor (t[2]). 1, 0 when one of them does not fold (*@q
 * then freed), or an error.
 */
static int fold_operands(struct onnx *o, struct oval *x, float xs, int32_t xz,
			 const struct oval *wv, const struct oval *b, uint32_t axis,
			 uint32_t channels, int nchw, struct qweights *q, int *t)
{
	int r = q8_weights(wv, axis, channels, q);

	if (r <= 0)
		return r < 0 ? onnx_fail(o, NPU_ENOMEM, "out of memory") : 0;
	r = q8_bias(o, b, xs, q, channels, &t[2]);
	if (r > 0)
		t[0] = q8_tensor(o, x->dq_x, xs, xz, nchw);
	if (r <= 0 || t[0] < 0) {
		free(q->w);
		free(q->scales);
		return r < 0 ? r : t[0] < -1 ? t[0] : 0;
	}
	return 1;
}

/* Mark the Relu and QuantizeLinear the folded op took in as done. */
static void took(struct onnx *o, int relu, int qnode)
{
	if (relu >= 0)
		o->done[relu] = 1;
	if (qnode >= 0)
		o->done[qnode] = 1;
}

/* Where a folded op's result goes: a name, its quantization, the nodes it took in. */
struct qout {
	const char *name;
	float ys;
	int32_t yz;
	enum npu_dtype ydt;
	int relu, qn;		/* node indexes, or -1 */
};

static int fold_conv(struct onnx *o, struct oval *x, struct oval *wv, struct oval *b,
		     const struct window *w, uint32_t group, const uint32_t *ydims,
		     const struct qout *qo)
{
	struct npu_tensor_desc fd = { .dtype = NPU_DT_INT8, .rank = 4 };
	struct ir_attrs a = { 0 };
	struct qweights q;
	struct oval *y;
	float xs;
	int32_t xz;
	uint32_t oc = ydims[1], ic, kh, kw, icg;
	int depthwise, t[3], yt, r;

	if (w->nsp != 2 || !per_tensor(x, &xs, &xz) || !wv || !wv->dq_x || (b && !b->dq_x))
		return 0;
	for (int i = 0; i < 2; i++)
		if (w->k[i] > 64 || w->s[i] > 64 || w->d[i] > 64 || w->lo[i] > 255 || w->hi[i] > 255)
			return 0;
	ic = x->dims[1];
	kh = wv->dims[2];
	kw = wv->dims[3];
	icg = ic / group;
	depthwise = group > 1 && group == ic;
	r = fold_operands(o, x, xs, xz, wv, b, 0, oc, 1, &q, t);
	if (r <= 0)
		return r;
	/* the filter as libnpu's: OHWI, or [1][k_h][k_w][out_c] depthwise */
	{
		int8_t *f = malloc((size_t)oc * icg * kh * kw);

		if (!f) {
			free(q.w);
			free(q.scales);
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		}
		for (uint32_t m = 0; m < oc; m++)
			for (uint32_t c = 0; c < icg; c++)
				for (uint32_t i = 0; i < kh; i++)
					for (uint32_t j = 0; j < kw; j++) {
						int8_t v = q.w[(((size_t)m * icg + c) * kh + i) * kw + j];

						if (depthwise)
							f[((size_t)i * kw + j) * oc + m] = v;
						else
							f[(((size_t)m * kh + i) * kw + j) * icg + c] = v;
					}
		fd.dims[0] = depthwise ? 1 : oc;
		fd.dims[1] = kh;
		fd.dims[2] = kw;
		fd.dims[3] = depthwise ? oc : icg;
		fd.data = f;
		fd.scale = q.scales[0];
		fd.channel_scales = q.n > 1 ? q.scales : NULL;
		fd.quant_dim = depthwise ? 3 : 0;
		t[1] = ir_add_desc_take(o->g, &fd, f);	/* the graph's now */
		if (t[1] < 0)
			free(f);
	}
	free(q.w);
	free(q.scales);
	if (t[1] < 0)
		return onnx_fail(o, t[1], "%s", o->g->err);
	yt = q8_output(o, qo->name, qo->ydt, qo->ys, qo->yz, 4, ydims, 1, &y);
	if (yt < 0)
		return yt;
	a.stride[0] = (uint32_t)w->s[0];
	a.stride[1] = (uint32_t)w->s[1];
	a.dilation[0] = (uint32_t)w->d[0];
	a.dilation[1] = (uint32_t)w->d[1];
	a.pad[0] = (uint32_t)w->lo[0];
	a.pad[1] = (uint32_t)w->lo[1];
	a.pad[2] = (uint32_t)w->hi[0];
	a.pad[3] = (uint32_t)w->hi[1];
	a.depthwise = depthwise;
	a.groups = depthwise ? 1 : group;
	a.act = qo->relu >= 0 ? NPU_ACT_RELU : NPU_ACT_NONE;
	a.requant = NPU_REQUANT_ONNX;
	TRY(onnx_node(o, IR_CONV2D, t, 3, &yt, 1, &a));
	took(o, qo->relu, qo->qn);
	return 1;
}

/*
 * The current node's x and w (inputs 0 and 1) dequantized, and the
 * QuantizeLinear after it: 1, or 0 when the pattern is not there.
 */
static int qdq_pattern(struct onnx *o, struct oval **x, struct oval **wv, struct qout *qo)
{
	*x = onnx_in(o, 0);
	*wv = onnx_in(o, 1);
	if (!*x || !(*x)->dq_x || !*wv || !(*wv)->dq_x)
		return 0;
	qo->qn = sole_quantize(o, &qo->relu, &qo->ys, &qo->yz, &qo->ydt);
	if (qo->qn < 0)
		return 0;
	qo->name = o->gp->node[qo->qn]->output[0];
	return 1;
}

int onnx_fold_conv(struct onnx *o, const struct window *w, uint32_t group, const uint32_t *ydims)
{
	struct qout qo;
	struct oval *x, *wv;

	if (!qdq_pattern(o, &x, &wv, &qo))
		return 0;
	return fold_conv(o, x, wv, onnx_has_in(o, 2) ? onnx_in(o, 2) : NULL, w, group, ydims,
			 &qo);
}

static int fold_gemm(struct onnx *o, struct oval *x, struct oval *wv, struct oval *b,
		     int trans_b, const struct qout *qo)
{
	struct npu_tensor_desc wd = { .dtype = NPU_DT_INT8, .rank = 2 };
	struct ir_attrs a = { 0 };
	struct qweights q;
	struct oval *y;
	float xs;
	int32_t xz;
	uint32_t k, n, ydims[2];
	int t[3], yt, r;

	if (!per_tensor(x, &xs, &xz) || x->rank != 2 || !wv || !wv->dq_x || wv->rank != 2 ||
	    (b && !b->dq_x) || (b && b->rank > 2))
		return 0;
	k = x->dims[1];
	n = trans_b ? wv->dims[0] : wv->dims[1];
	if ((trans_b ? wv->dims[1] : wv->dims[0]) != k || (b && b->count != n))
		return 0;
	/* per column of B [k][n] (axis 1), or per row of B^T [n][k] (axis 0) */
	r = fold_operands(o, x, xs, xz, wv, b, trans_b ? 0 : 1, n, 0, &q, t);
	if (r <= 0)
		return r;
	{
		int8_t *f = malloc((size_t)n * k);

		if (!f) {
			free(q.w);
			free(q.scales);
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		}
		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < k; j++)
				f[(size_t)i * k + j] = trans_b ? q.w[(size_t)i * k + j] :
								 q.w[(size_t)j * n + i];
		wd.dims[0] = n;
		wd.dims[1] = k;
		wd.data = f;
		wd.scale = q.scales[0];
		wd.channel_scales = q.n > 1 ? q.scales : NULL;
		t[1] = ir_add_desc_take(o->g, &wd, f);	/* the graph's now */
		if (t[1] < 0)
			free(f);
	}
	free(q.w);
	free(q.scales);
	if (t[1] < 0)
		return onnx_fail(o, t[1], "%s", o->g->err);
	ydims[0] = x->dims[0];
	ydims[1] = n;
	yt = q8_output(o, qo->name, qo->ydt, qo->ys, qo->yz, 2, ydims, 0, &y);
	if (yt < 0)
		return yt;
	a.act = qo->relu >= 0 ? NPU_ACT_RELU : NPU_ACT_NONE;
	a.requant = NPU_REQUANT_ONNX;
	TRY(onnx_node(o, IR_FC, t, 3, &yt, 1, &a));
	took(o, qo->relu, qo->qn);
	return 1;
}

int onnx_fold_gemm(struct onnx *o, int trans_b)
{
	struct qout qo;
	struct oval *x, *wv;

	if (!qdq_pattern(o, &x, &wv, &qo))
		return 0;
	return fold_gemm(o, x, wv, onnx_has_in(o, 2) ? onnx_in(o, 2) : NULL, trans_b, &qo);
}

/*
 * QLinearConv and QLinearMatMul are QDQ folded already: their operands
 * stand in for dequantized values (scales and zero points given), their
 * output is the quantized one. @xi, @wi, @yi: the inputs where x, w and y
 * begin (each followed by its scale and zero point); @bi: the bias's, or -1.
 */
static int qlinear_operand(struct onnx *o, uint32_t i, struct oval *fake)
{
	struct oval *x = onnx_in(o, i), *s = onnx_in(o, i + 1), *z = onnx_in(o, i + 2);

	memset(fake, 0, sizeof(*fake));
	if (!x || !s || !s->data || s->dt != NPU_DT_FLOAT32 || (z && (!z->data || z->dt != x->dt ||
								     z->count != s->count)))
		return 0;
	fake->name = x->name;
	fake->dt = NPU_DT_FLOAT32;
	fake->rank = x->rank;
	memcpy(fake->dims, x->dims, sizeof(x->dims));
	fake->count = x->count;
	fake->id = fake->i8 = fake->input = -1;
	fake->dq_x = x;
	fake->dq_s = s;
	fake->dq_z = z;
	fake->dq.mode = ND_DEQUANTIZE;
	fake->dq.qdtype = x->dt;
	if (s->count == 1) {
		fake->dq.outer = x->count;
		fake->dq.axis = fake->dq.inner = 1;
	} else {	/* per output channel: W's first dim, or B's last (columns) */
		uint32_t axis = i == 3 && x->rank == 4 ? 0 : x->rank - 1;

		if (!x->rank || s->count != x->dims[axis])
			return 0;
		fake->dq.outer = onnx_prod(x->dims, 0, axis);
		fake->dq.axis = x->dims[axis];
		fake->dq.inner = onnx_prod(x->dims, axis + 1, x->rank);
	}
	return 1;
}

static int qlinear_out(struct onnx *o, uint32_t i, struct qout *qo)
{
	struct oval *s = onnx_in(o, i), *z = onnx_in(o, i + 1);

	if (!s || !s->data || s->count != 1 || s->dt != NPU_DT_FLOAT32 || !z || !z->data ||
	    z->count != 1 || (z->dt != NPU_DT_INT8 && z->dt != NPU_DT_UINT8) || !N->n_output)
		return 0;
	qo->name = N->output[0];
	qo->ys = ((const float *)s->data)[0];
	qo->yz = (int32_t)onnx_get_i(z, 0);
	qo->ydt = z->dt;
	qo->relu = qo->qn = -1;
	return qo->ys > 0 && isfinite(qo->ys);
}

int onnx_fold_qlinearconv(struct onnx *o, const struct window *w, uint32_t group,
			  const uint32_t *ydims)
{
	struct oval x, wv, b, *bq = onnx_has_in(o, 8) ? onnx_in(o, 8) : NULL;
	struct qout qo;

	if (!qlinear_operand(o, 0, &x) || !qlinear_operand(o, 3, &wv) || !qlinear_out(o, 6, &qo))
		return 0;
	if (bq) {	/* int32, its scales implied: x_scale * w_scale */
		memset(&b, 0, sizeof(b));
		b.dq_x = bq;
		b.count = bq->count;
		b.rank = bq->rank;
	}
	return fold_conv(o, &x, &wv, bq ? &b : NULL, w, group, ydims, &qo);
}

int onnx_fold_qlinearmatmul(struct onnx *o)
{
	struct oval a, b;
	struct qout qo;

	if (!qlinear_operand(o, 0, &a) || !qlinear_operand(o, 3, &b) || !qlinear_out(o, 6, &qo))
		return 0;
	return fold_gemm(o, &a, &b, NULL, 0, &qo);
}

/*
 * DequantizeLinear -> MaxPool -> QuantizeLinear of the same scale and zero
 * point is libnpu's int8 max pool: the maximum commutes with both, and
 * quantizing a dequantized int8 value gives it back exactly (|q| <= 255:
 * two fp32 roundings stay far below half a step). Ceil mode becomes more
 * padding after the input, which an int8 pool skips as ONNX does.
 */
int onnx_fold_maxpool(struct onnx *o, const struct window *w, const uint32_t *ydims)
{
	struct oval *x = onnx_in(o, 0), *y;
	struct ir_attrs a = { 0 };
	struct qout qo;
	float xs;
	int32_t xz;
	int t, yt;

	if (!x || w->nsp != 2 || !per_tensor(x, &xs, &xz) || N->n_output != 1)
		return 0;
	qo.qn = sole_quantize(o, &qo.relu, &qo.ys, &qo.yz, &qo.ydt);
	if (qo.qn < 0 || qo.relu >= 0 || qo.ys != xs || qo.yz != xz || qo.ydt != x->dq_x->dt)
		return 0;
	for (int i = 0; i < 2; i++) {
		int64_t in = x->dims[2 + i];
		/* the padding after the input that gives ceil mode's last window */
		int64_t hi = (int64_t)(ydims[2 + i] - 1) * w->s[i] + w->k[i] - in - w->lo[i];

		if (w->d[i] != 1 || w->k[i] > 64 || w->s[i] > 64 || w->lo[i] >= w->k[i] ||
		    hi >= w->k[i] || w->lo[i] > 255)
			return 0;
		a.kernel[i] = (uint32_t)w->k[i];
		a.stride[i] = (uint32_t)w->s[i];
		a.pad[i] = (uint32_t)w->lo[i];
		a.pad[2 + i] = (uint32_t)(hi > 0 ? hi : 0);
	}
	t = q8_tensor(o, x->dq_x, xs, xz, 1);
	if (t < 0)
		return t < -1 ? t : 0;
	qo.name = o->gp->node[qo.qn]->output[0];
	yt = q8_output(o, qo.name, qo.ydt, qo.ys, qo.yz, 4, ydims, 1, &y);
	if (yt < 0)
		return yt;
	TRY(onnx_node(o, IR_POOL, &t, 1, &yt, 1, &a));
	took(o, -1, qo.qn);
	return 1;
}

/* An N-d binary op of two tensors of @rank dims (@ad, @bd) into one of @yd. */
static int nd_bin(struct onnx *o, enum nd_fn fn, enum npu_dtype dt, uint32_t rank,
		  const uint32_t *ad, const uint32_t *bd, const uint32_t *yd, int a, int b, int y)
{
	struct ir_attrs at = { 0 };
	int in[2] = { a, b };

	at.nd.bin = (struct nd_binary){ .fn = fn, .dtype = dt, .rank = rank };
	memcpy(at.nd.bin.out, yd, sizeof(uint32_t) * rank);
	memcpy(at.nd.bin.a, ad, sizeof(uint32_t) * rank);
	memcpy(at.nd.bin.b, bd, sizeof(uint32_t) * rank);
	return onnx_node(o, IR_ND_BINARY, in, 2, &y, 1, &at);
}

/* A reduction @fn of tensor @x (@rank dims @dims, of @dt) over the axes in @mask into @y. */
static int nd_red(struct onnx *o, enum nd_reduce_fn fn, enum npu_dtype dt, uint32_t rank,
		  const uint32_t *dims, uint32_t mask, int x, int y)
{
	struct ir_attrs at = { 0 };

	at.nd.rd = (struct nd_reduce){ .fn = fn, .dtype = dt, .rank = rank, .mask = mask };
	memcpy(at.nd.rd.in, dims, sizeof(uint32_t) * rank);
	return onnx_node(o, IR_ND_REDUCE, &x, 1, &y, 1, &at);
}

/* @v's int8 tensor (quantized @scale, @zp), NCHW where it already is or at rank 4. */
static int q8_in(struct onnx *o, struct oval *v, float scale, int32_t zp)
{
	return q8_tensor(o, v, scale, zp, v->i8 >= 0 ?
			 o->g->t[v->i8].d.layout == NPU_LAYOUT_NCHW : v->rank == 4);
}

/* A constant of int8 tensor @t's zero point (uint8's moved by 128). */
static int q8_zero_const(struct onnx *o, int t)
{
	int8_t z = (int8_t)o->g->t[t].d.zero_point;	/* copied: g->t may move */

	return onnx_const(o, NPU_DT_INT8, 1, &z);
}

/* int8 tensor @t of @count values widened into int32 tensor @wide. */
static int widen(struct onnx *o, int t, uint64_t count, int wide)
{
	struct ir_attrs a = { 0 };

	a.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = NPU_DT_INT8,
				     .odtype = NPU_DT_INT32, .count = count };
	return onnx_node(o, IR_ND_UNARY, &t, 1, &wide, 1, &a);
}

/* @x quantized (or an int32 @x requantized) per tensor into int8 tensor @y: @count values. */
static int quantize_into(struct onnx *o, enum nd_qdq_mode mode, int x, int scale, int zp,
			 uint64_t count, int y)
{
	struct ir_attrs a = { 0 };
	int in[3] = { x, scale, zp };

	a.nd.qdq = (struct nd_qdq){ .mode = mode, .qdtype = NPU_DT_INT8, .outer = 1, .axis = 1,
				    .inner = count };
	return onnx_node(o, IR_ND_QDQ, in, 3, &y, 1, &a);
}

/*
 * DQ -> GlobalAveragePool -> Q, as onnxruntime fuses it into its
 * QLinearGlobalAveragePool (MLAS): the int32 sum of each channel's values
 * less zero point x image size, times one fp32 multiplier x_scale /
 * (y_scale * (float)image size), rounded half to even, plus y's zero
 * point, saturated. The fp32 mean of the unfolded ops rounds differently
 * near halves, and a network's last layers magnify a step there. Made of
 * the N-dimensional ops (cast, sum, add, requantize), integers exact.
 * Where onnxruntime refuses the parameters (a multiplier outside
 * [2^-32, 256), 2^24 pixels or more), the float ops are imported. 1 when
 * folded, else 0 or an error.
 */
static int fold_global_average(struct onnx *o, struct oval *x, const uint32_t *ydims,
			       struct qout qo)
{
	struct oval *y;
	uint32_t ones[ND_MAX_RANK];
	uint64_t n;
	int32_t xz, bias;
	float xs, m;
	int t, wide, sum, c[3], yt;

	if (x->rank < 3 || x->rank > ND_MAX_RANK || !per_tensor(x, &xs, &xz))
		return 0;
	n = onnx_prod(x->dims, 2, x->rank);
	if (qo.ydt != x->dq_x->dt || !n || n >= (1u << 24))
		return 0;
	m = xs / (qo.ys * (float)n);
	if (!(m >= 0x1p-32f && m < 256.0f))
		return 0;
	t = q8_in(o, x->dq_x, xs, xz);
	if (t < 0)
		return t < -1 ? t : 0;
	/* the int8 tensor's zero point (uint8's moved by 128) */
	bias = -o->g->t[t].d.zero_point * (int32_t)n;
	for (uint32_t i = 0; i < x->rank; i++)
		ones[i] = 1;
	wide = onnx_temp(o, NPU_DT_INT32, x->rank, x->dims);
	sum = onnx_temp(o, NPU_DT_INT32, x->rank, ydims);
	c[0] = onnx_const(o, NPU_DT_INT32, 1, &bias);
	c[1] = onnx_const(o, NPU_DT_FLOAT32, 1, &m);
	yt = q8_output(o, qo.name, qo.ydt, qo.ys, qo.yz, x->rank, ydims, x->rank == 4, &y);
	c[2] = yt < 0 ? yt : q8_zero_const(o, yt);
	if (wide < 0 || sum < 0 || c[0] < 0 || c[1] < 0 || c[2] < 0)
		return c[2] < 0 ? c[2] : NPU_EINVAL;
	TRY(widen(o, t, x->count, wide));
	TRY(nd_red(o, ND_R_SUM, NPU_DT_INT32, x->rank, x->dims, ((1u << x->rank) - 1) & ~3u,
		   wide, sum));
	TRY(nd_bin(o, ND_ADD, NPU_DT_INT32, x->rank, ydims, ones, ydims, sum, c[0], sum));
	TRY(quantize_into(o, ND_REQUANTIZE, sum, c[1], c[2], y->count, yt));
	took(o, -1, qo.qn);
	return 1;
}

/*
 * The current node between a DQ per tensor (input 0, *@x) and a Q that
 * alone reads its one output (*@qo), no Relu between: 1, else 0.
 */
static int dq_op_q(struct onnx *o, struct oval **x, struct qout *qo)
{
	float xs;
	int32_t xz;

	*x = onnx_in(o, 0);
	if (!*x || !per_tensor(*x, &xs, &xz) || N->n_output != 1)
		return 0;
	qo->qn = sole_quantize(o, &qo->relu, &qo->ys, &qo->yz, &qo->ydt);
	if (qo->qn < 0 || qo->relu >= 0)
		return 0;
	qo->name = o->gp->node[qo->qn]->output[0];
	return 1;
}

int onnx_fold_global_average(struct onnx *o, const uint32_t *ydims)
{
	struct oval *x;
	struct qout qo;

	return dq_op_q(o, &x, &qo) ? fold_global_average(o, x, ydims, qo) : 0;
}

/*
 * DQ -> Softmax over the trailing @d values (from @axis on) -> Q, as
 * onnxruntime fuses it into its QLinearSoftmax: a table of 256 fp32
 * exponentials e(k) = exp((k + s) * x_scale), k = x - max(x) of each row
 * and s = max(0, ln(FLT_MAX / d) - 5) / x_scale worked out in double; the
 * row's sum of them in fp32 in order; each e(k) * floor(1 / y_scale) / sum
 * in fp32, rounded half to even, plus y's zero point. The same for int8
 * and uint8 (k is a difference of stored values). Made of the N-d ops:
 * cast, max, sub, add, gather from the table, an fp32 sum, mul, div and a
 * quantize with scale 1. Where e(k) * floor(1 / y_scale) can overflow
 * fp32 (y_scale below about 1 / (148 d)), onnxruntime's kernel converts
 * infinity to an integer, which C leaves undefined (x86 gives 0): that
 * softmax is not folded but computed as ONNX defines it, in fp32 between
 * the DQ and the Q. 1 when folded, else 0 or an error.
 */
static int fold_softmax(struct onnx *o, struct oval *x, uint32_t axis, struct qout qo)
{
	struct oval *y;
	struct ir_attrs a = { 0 };
	uint32_t rank, rd[ND_MAX_RANK], all[ND_MAX_RANK], mask = 0;
	uint64_t d;
	float xs, table[256], ysf, unit = 1.0f;
	int32_t xz, c255 = 255;
	double s;
	int t, wide, mx, idx, vt, sum, c[5], yt;

	if (!x->rank || x->rank > ND_MAX_RANK || !per_tensor(x, &xs, &xz) ||
	    qo.ydt != x->dq_x->dt)
		return 0;
	rank = x->rank;
	d = onnx_prod(x->dims, axis, rank);
	ysf = floorf(1.0f / qo.ys);
	if (!d || d > (1u << 24) || !(ysf >= 1.0f && ysf < 0x1p24f))
		return 0;
	s = fmax(0.0, log((double)(FLT_MAX / (float)d)) - 5.0) / (double)xs;
	for (int i = 0; i < 256; i++)
		table[i] = (float)exp(((double)i - 255 + s) * (double)xs);
	if (!isfinite(table[255] * ysf))
		return 0;
	t = q8_in(o, x->dq_x, xs, xz);
	if (t < 0)
		return t < -1 ? t : 0;
	for (uint32_t i = 0; i < rank; i++) {
		rd[i] = i < axis ? x->dims[i] : 1;
		all[i] = 1;
		mask |= i >= axis ? 1u << i : 0;
	}
	wide = onnx_temp(o, NPU_DT_INT32, rank, x->dims);
	mx = onnx_temp(o, NPU_DT_INT32, rank, rd);
	idx = onnx_temp(o, NPU_DT_INT32, rank, x->dims);
	vt = onnx_temp(o, NPU_DT_FLOAT32, rank, x->dims);
	sum = onnx_temp(o, NPU_DT_FLOAT32, rank, rd);
	c[0] = onnx_const(o, NPU_DT_INT32, 1, &c255);
	c[1] = onnx_const(o, NPU_DT_FLOAT32, 256, table);
	c[2] = onnx_const(o, NPU_DT_FLOAT32, 1, &ysf);
	c[3] = onnx_const(o, NPU_DT_FLOAT32, 1, &unit);
	yt = q8_output(o, qo.name, qo.ydt, qo.ys, qo.yz, rank, x->dims, rank == 4, &y);
	c[4] = yt < 0 ? yt : q8_zero_const(o, yt);
	if (wide < 0 || mx < 0 || idx < 0 || vt < 0 || sum < 0 || c[0] < 0 || c[1] < 0 ||
	    c[2] < 0 || c[3] < 0 || c[4] < 0)
		return c[4] < 0 ? c[4] : NPU_EINVAL;
	/* k = x - max(x) + 255: the index of e(k) in the table */
	TRY(widen(o, t, x->count, wide));
	TRY(nd_red(o, ND_R_MAX, NPU_DT_INT32, rank, x->dims, mask, wide, mx));
	TRY(nd_bin(o, ND_SUB, NPU_DT_INT32, rank, x->dims, rd, x->dims, wide, mx, idx));
	TRY(nd_bin(o, ND_ADD, NPU_DT_INT32, rank, x->dims, all, x->dims, idx, c[0], idx));
	memset(&a, 0, sizeof(a));
	a.nd.ga = (struct nd_gather){ .dtype = NPU_DT_FLOAT32, .idt = NPU_DT_INT32, .outer = 1,
				      .axis = 256, .inner = 1, .nidx = x->count };
	{
		int in[2] = { c[1], idx };

		TRY(onnx_node(o, IR_ND_GATHER, in, 2, &vt, 1, &a));
	}
	TRY(nd_red(o, ND_R_SUM_F32, NPU_DT_FLOAT32, rank, x->dims, mask, vt, sum));
	TRY(nd_bin(o, ND_MUL, NPU_DT_FLOAT32, rank, x->dims, all, x->dims, vt, c[2], vt));
	TRY(nd_bin(o, ND_DIV, NPU_DT_FLOAT32, rank, x->dims, rd, x->dims, vt, sum, vt));
	TRY(quantize_into(o, ND_QUANTIZE, vt, c[3], c[4], x->count, yt));
	took(o, -1, qo.qn);
	return 1;
}

int onnx_fold_softmax(struct onnx *o, uint32_t axis)
{
	struct oval *x;
	struct qout qo;

	return dq_op_q(o, &x, &qo) ? fold_softmax(o, x, axis, qo) : 0;
}

/*
 * QuantizeLinear of a value dequantized per tensor with the same scale,
 * zero point and type: the quantized value itself (exact, as above).
 * 1 when so, else 0.
 */
int onnx_fold_requantize(struct onnx *o)
{
	struct oval *x = onnx_in(o, 0), *s = onnx_in(o, 1), *z = onnx_in(o, 2), *q, *v;
	float xs;
	int32_t xz;

	if (!x || !per_tensor(x, &xs, &xz) || !s || !s->data || s->count != 1 ||
	    s->dt != NPU_DT_FLOAT32 || ((const float *)s->data)[0] != xs ||
	    (z ? !z->data || z->count != 1 || z->dt != x->dq_x->dt || onnx_get_i(z, 0) != xz :
		 x->dq_x->dt != NPU_DT_UINT8 || xz) || N->n_output != 1)
		return 0;
	q = x->dq_x;
	if (q->data && q->input < 0)
		return 0;	/* a constant: the plain path folds it */
	if (q->id < 0 && q->i8 < 0 && onnx_tensor(o, q) < 0)
		return NPU_EINVAL;
	v = onnx_add(o, N->output[0], q->dt, q->rank, q->dims);
	if (!v)
		return NPU_EINVAL;
	v->id = q->id;
	v->i8 = q->i8;
	return 1;
}

/* A new int8 tensor of @rank, @dims, quantized as int8 tensor @src (NCHW at rank 4). */
static int q8_like(struct onnx *o, int src, uint32_t rank, const uint32_t *dims)
{
	struct npu_tensor_desc d = { .dtype = NPU_DT_INT8, .rank = rank,
				     .scale = o->g->t[src].d.scale,
				     .zero_point = o->g->t[src].d.zero_point,
				     .layout = rank == 4 ? NPU_LAYOUT_NCHW : NPU_LAYOUT_NHWC };
	int id;

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	id = ir_add_desc(o->g, &d);
	return id < 0 ? onnx_fail(o, id, "%s", o->g->err) : id;
}

/*
 * The current node's output as the lazy dequantization of int8 tensor @t8
 * (@rank, @dims), quantized as dequantized value @x is: the quantized value
 * under a name no model can give (a control character), the float one
 * made only if read as floats.
 */
static int lazy_dequantized(struct onnx *o, const struct oval *x, int t8, uint32_t rank,
			    const uint32_t *dims, uint32_t out)
{
	enum npu_dtype qdt = x->dq_x->dt;
	struct oval *hidden, *v;
	char name[512];

	snprintf(name, sizeof(name), "%s\x1fquantized", N->output[out]);
	hidden = onnx_add(o, name, qdt, rank, dims);
	v = hidden ? onnx_add(o, N->output[out], NPU_DT_FLOAT32, rank, dims) : NULL;
	if (!v)
		return NPU_EINVAL;
	hidden->i8 = t8;
	hidden->id = qdt == NPU_DT_INT8 ? t8 : -1;
	v->dq_x = hidden;
	v->dq_s = x->dq_s;
	v->dq_z = x->dq_z;
	v->dq = x->dq;
	onnx_dq_hold(v);
	v->dq.outer = v->count;
	return 1;
}

/*
 * Input 0 as an int8 tensor (*@src) when it is a value dequantized per
 * tensor, not a constant, and output @out is named: 1; else 0 or an error.
 * A data movement op on it then moves the int8 value (lazy_dequantized).
 */
static int movable(struct onnx *o, uint32_t out, int *src)
{
	struct oval *x = onnx_in(o, 0);
	float xs;
	int32_t xz;

	if (!x || x->id >= 0 || !per_tensor(x, &xs, &xz) || out >= N->n_output ||
	    !N->output[out][0] || strlen(N->output[out]) > 400 ||
	    (x->dq_x->data && x->dq_x->input < 0))
		return 0;
	*src = q8_in(o, x->dq_x, xs, xz);
	return *src >= 0 ? 1 : *src < -1 ? *src : 0;
}

/*
 * A reshape (Reshape, Flatten) of a value dequantized per tensor: the
 * quantized value is reshaped (a view: nothing moves) and the result is a
 * lazy dequantization of that, so that an int8 op after it still reads
 * int8 (DQ -> Flatten -> Gemm -> Q). 1 when so, else 0 or an error.
 */
int onnx_fold_reshape(struct onnx *o, uint32_t rank, const uint32_t *dims)
{
	int src, view, r = rank && N->n_output == 1 ? movable(o, 0, &src) : 0;

	if (r <= 0)
		return r;
	view = q8_like(o, src, rank, dims);
	if (view < 0)
		return view;
	TRY(onnx_node(o, IR_RESHAPE, &src, 1, &view, 1, NULL));
	return lazy_dequantized(o, onnx_in(o, 0), view, rank, dims, 0);
}

/*
 * A Transpose (rank 2 to 4) of a value dequantized per tensor: the
 * quantized value transposed (libnpu's int8 transpose, an NPU command; the
 * bytes move, nothing is computed) and dequantized lazily, so that int8
 * ops around it read int8 (QDQ transformers' heads). 1 when so, else 0 or
 * an error.
 */
int onnx_fold_transpose(struct onnx *o, const uint32_t *perm, const uint32_t *ydims)
{
	struct oval *x = onnx_in(o, 0);
	struct ir_attrs at = { 0 };
	int src, out, r = x && x->rank >= 2 && x->rank <= 4 && N->n_output == 1 ?
			  movable(o, 0, &src) : 0;

	if (r <= 0)
		return r;
	out = q8_like(o, src, x->rank, ydims);
	if (out < 0)
		return out;
	memcpy(at.perm, perm, sizeof(uint32_t) * x->rank);
	TRY(onnx_node(o, IR_TRANSPOSE, &src, 1, &out, 1, &at));
	return lazy_dequantized(o, x, out, x->rank, ydims, 0);
}

/*
 * A strided copy (Slice, Split, Expand, Tile, a Transpose past rank 4) of
 * a value dequantized per tensor into output @out: the int8 value copied
 * (@p, in elements) and dequantized lazily. 1 when so, else 0 or an error.
 */
int onnx_fold_copy(struct onnx *o, uint32_t out, const struct nd_copy *p, uint32_t rank,
		   const uint32_t *dims)
{
	struct ir_attrs at = { 0 };
	int src, y, r = rank ? movable(o, out, &src) : 0;

	if (r <= 0)
		return r;
	y = q8_like(o, src, rank, dims);
	if (y < 0)
		return y;
	at.nd.cp = *p;
	at.nd.cp.dtype = NPU_DT_INT8;
	TRY(onnx_node(o, IR_ND_COPY, &src, 1, &y, 1, &at));
	return lazy_dequantized(o, onnx_in(o, 0), y, rank, dims, out);
}

/*
 * An operand of an int8 add or mul of rank @rank: the quantized value, or
 * a constant of lower rank made @rank (@dims, ones before), as an NCHW
 * output's operands must all be rank 4. -1 when neither.
 */
static int eltwise_operand(struct onnx *o, struct oval *v, float scale, int32_t zp,
			   uint32_t rank, const uint32_t *dims)
{
	struct oval *q = v->dq_x;

	if (v->rank == rank)
		return q8_tensor(o, q, scale, zp, rank == 4);
	if (rank == 4 && !(q->data && q->input < 0))
		return -1;
	return q8_const(o, q, scale, zp, rank, dims, rank == 4);
}

/*
 * DQ(a) and DQ(b) -> Add or Mul (-> Relu) -> Q: libnpu's int8 add or mul
 * with ONNX's arithmetic (npu_eltwise_onnx_i8: the fp32 steps of the
 * unfolded ops, bit for bit). Operands per-tensor quantized, activations
 * or constants, broadcasting numpy's way up to rank 4 (NCHW at rank 4,
 * where an operand of lower rank must be a constant). 1 when folded, else
 * 0 or an error.
 */
static int fold_eltwise(struct onnx *o, struct oval *a, struct oval *b, int mul, struct qout qo)
{
	struct oval *y;
	struct ir_attrs at = { 0 };
	uint32_t ydims[NPU_MAX_RANK], ad[NPU_MAX_RANK], bd[NPU_MAX_RANK], rank;
	float as, bs;
	int32_t az, bz;
	int t[2], yt, nchw;

	if (!per_tensor(a, &as, &az) || !per_tensor(b, &bs, &bz))
		return 0;
	rank = a->rank > b->rank ? a->rank : b->rank;
	if (!rank || rank > 4)	/* the int8 add's rank: 4 */
		return 0;
	for (uint32_t d = 0; d < rank; d++) {	/* aligned to the right */
		ad[d] = d + a->rank >= rank ? a->dims[d + a->rank - rank] : 1;
		bd[d] = d + b->rank >= rank ? b->dims[d + b->rank - rank] : 1;
		if (ad[d] != bd[d] && ad[d] != 1 && bd[d] != 1)
			return 0;
		ydims[d] = ad[d] > bd[d] ? ad[d] : bd[d];
	}
	nchw = rank == 4;
	t[0] = eltwise_operand(o, a, as, az, rank, ad);
	t[1] = t[0] < 0 ? t[0] : eltwise_operand(o, b, bs, bz, rank, bd);
	if (t[0] < 0 || t[1] < 0)
		return t[0] < -1 ? t[0] : t[1] < -1 ? t[1] : 0;
	yt = q8_output(o, qo.name, qo.ydt, qo.ys, qo.yz, rank, ydims, nchw, &y);
	if (yt < 0)
		return yt;
	at.act = qo.relu >= 0 ? NPU_ACT_RELU : NPU_ACT_NONE;
	at.requant = NPU_REQUANT_ONNX;
	/*
	 * An add of one 8-bit type that onnxruntime fuses into its QLinearAdd
	 * (a Relu between only when the output's zero point is the type's
	 * least value, where onnxruntime drops it): its arithmetic, so that
	 * deep residual networks agree with onnxruntime's to the bit.
	 */
	if (!mul && a->dq_x->dt == qo.ydt && b->dq_x->dt == qo.ydt &&
	    (qo.relu < 0 || qo.yz == (qo.ydt == NPU_DT_UINT8 ? 0 : -128))) {
		int d = (int)rank - 1;

		at.requant = NPU_REQUANT_ORT;
		at.offset = qo.ydt == NPU_DT_UINT8 ? 128 : 0;
		/*
		 * onnxruntime swaps the operands where a is one value for each
		 * span of the innermost dimension that is more than 1 (its
		 * broadcasting in the model's shapes, NCHW; npu_quant.h).
		 */
		while (d > 0 && ydims[d] == 1)
			d--;
		at.ort_swap = ydims[d] > 1 && ad[d] == 1 && bd[d] > 1;
	}
	TRY(onnx_node(o, mul ? IR_MUL : IR_ADD, t, 2, &yt, 1, &at));
	took(o, qo.relu, qo.qn);
	return 1;
}

int onnx_fold_eltwise(struct onnx *o, int mul)
{
	struct oval *a = onnx_in(o, 0), *b = onnx_in(o, 1);
	struct qout qo;

	if (!a || !b || !a->dq_x || !b->dq_x)
		return 0;
	qo.qn = sole_quantize(o, &qo.relu, &qo.ys, &qo.yz, &qo.ydt);
	if (qo.qn < 0)
		return 0;
	qo.name = o->gp->node[qo.qn]->output[0];
	return fold_eltwise(o, a, b, mul, qo);
}

/*
 * onnxruntime's QOperator ops (quantize_static's QOperator form), each as
 * the fold of DQ -> op -> Q it stands for: the same int8 ops, the same
 * arithmetic. 1 when folded, 0 when not (the caller computes it between a
 * DQ and a Q in fp32), or an error.
 */
int onnx_fold_qlinear_eltwise(struct onnx *o, int mul)
{
	struct oval a, b;
	struct qout qo;

	if (!qlinear_operand(o, 0, &a) || !qlinear_operand(o, 3, &b) || !qlinear_out(o, 6, &qo) ||
	    a.dq_s->count != 1 || b.dq_s->count != 1)
		return 0;
	return fold_eltwise(o, &a, &b, mul, qo);
}

int onnx_fold_qlinear_global_average(struct onnx *o, const uint32_t *ydims)
{
	struct oval x;
	struct qout qo;

	if (!qlinear_operand(o, 0, &x) || !qlinear_out(o, 3, &qo) || x.dq_s->count != 1)
		return 0;
	return fold_global_average(o, &x, ydims, qo);
}

int onnx_fold_qlinear_softmax(struct onnx *o, uint32_t axis)
{
	struct oval x;
	struct qout qo;

	if (!qlinear_operand(o, 0, &x) || !qlinear_out(o, 3, &qo) || x.dq_s->count != 1)
		return 0;
	return fold_softmax(o, &x, axis, qo);
}

int onnx_fold_qgemm(struct onnx *o, int trans_b)
{
	struct oval a, b, c, *cq = onnx_has_in(o, 6) ? onnx_in(o, 6) : NULL;
	struct qout qo;

	if (!qlinear_operand(o, 0, &a) || !qlinear_operand(o, 3, &b) || !qlinear_out(o, 7, &qo))
		return 0;
	if (cq) {	/* int32, its scales implied: a_scale * b_scale */
		if (cq->dt != NPU_DT_INT32)
			return 0;
		memset(&c, 0, sizeof(c));
		c.dq_x = cq;
		c.count = cq->count;
		c.rank = cq->rank;
	}
	return fold_gemm(o, &a, &b, cq ? &c : NULL, trans_b, &qo);
}

/*
 * A fold of DQ -> op -> Q whose output has its input's shape (an
 * activation, a layer norm), per tensor and with nothing between the op
 * and the Q: input 0 as its int8 tensor (*@t, dequantized with *@xs) and
 * the output as the Q's (*@yt, quantized as @qo says). 1 when the pattern
 * holds, 0 when not, or an error.
 */
static int fold_same_shape(struct onnx *o, struct qout *qo, float *xs, int *t, int *yt)
{
	struct oval *x = onnx_in(o, 0), *y;
	int32_t xz;
	int nchw;

	if (!x || !per_tensor(x, xs, &xz) || N->n_output != 1)
		return 0;
	qo->qn = sole_quantize(o, &qo->relu, &qo->ys, &qo->yz, &qo->ydt);
	if (qo->qn < 0 || qo->relu >= 0)	/* a Relu after the op: two ops */
		return 0;
	nchw = x->rank == 4;
	*t = q8_tensor(o, x->dq_x, *xs, xz, nchw);
	if (*t < 0)
		return *t < -1 ? *t : 0;
	qo->name = o->gp->node[qo->qn]->output[0];
	*yt = q8_output(o, qo->name, qo->ydt, qo->ys, qo->yz, x->rank, x->dims, nchw, &y);
	return *yt < 0 ? *yt : 1;
}

/*
 * DQ -> a function of fp32 (an activation: Sigmoid, Tanh, HardSwish, Erf,
 * Exp, ...) -> Q, per tensor: one op on the 8-bit values whose steps are
 * the unfolded ops' (struct nd_unary's quant), which every backend runs
 * through a 256-entry table, so the tensor stays 8-bit. 1 when folded,
 * else 0 or an error.
 */
int onnx_fold_unary(struct onnx *o, const struct nd_unary *un)
{
	struct ir_attrs at = { 0 };
	struct qout qo;
	float xs;
	int t, yt, r = fold_same_shape(o, &qo, &xs, &t, &yt);

	if (r <= 0)
		return r;
	at.nd.un = *un;
	at.nd.un.dtype = NPU_DT_INT8;
	at.nd.un.odtype = 0;
	at.nd.un.count = o->g->t[t].bytes;
	at.nd.un.quant = 1;
	at.nd.un.xs = xs;
	at.nd.un.xz = o->g->t[t].d.zero_point;
	at.nd.un.ys = qo.ys;
	at.nd.un.yz = o->g->t[yt].d.zero_point;
	TRY(onnx_node(o, IR_ND_UNARY, &t, 1, &yt, 1, &at));
	took(o, -1, qo.qn);
	return 1;
}

int onnx_fold_layernorm(struct onnx *o, const struct nd_layernorm *p)
{
	struct ir_attrs at = { 0 };
	struct qout qo;
	float xs;
	int t[3] = { -1, -1, -1 }, yt[3] = { -1, -1, -1 };
	int r = fold_same_shape(o, &qo, &xs, &t[0], &yt[0]);

	if (r <= 0)
		return r;
	t[1] = onnx_in_t(o, 1);
	t[2] = t[1] < 0 ? t[1] : onnx_has_in(o, 2) ? onnx_in_t(o, 2) : -1;
	if (t[1] < 0 || t[2] < -1)
		return t[1] < 0 ? t[1] : t[2];
	at.nd.ln = *p;
	at.nd.ln.xdt = at.nd.ln.ydt = NPU_DT_INT8;
	at.nd.ln.xs = xs;
	at.nd.ln.xz = o->g->t[t[0]].d.zero_point;
	at.nd.ln.ys = qo.ys;
	at.nd.ln.yz = o->g->t[yt[0]].d.zero_point;
	TRY(onnx_node(o, IR_ND_LAYERNORM, t, 3, yt, 3, &at));
	took(o, -1, qo.qn);
	return 1;
}
