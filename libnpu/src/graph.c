// SPDX-License-Identifier: MIT
/*
 * graph.c - int8 graphs (fp32 at the edges, through quantize and
 * dequantize): tensors and ops, and each op's command parameters worked
 * out at compile time (graph_run.c places and runs them). Quantization
 * parameters are derived as TFLite does (QuantizeMultiplier of in * w /
 * out, activation ranges from the output's scale and zero point).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"
#include "npu_cmd.h"
#include "npu_quant.h"

npu_graph *npu_graph_new(void)
{
	return calloc(1, sizeof(npu_graph));
}

void npu_graph_free(npu_graph *g)
{
	if (!g)
		return;
	npu_plan_free(g->plan);
	for (int i = 0; i < g->nt; i++) {
		free(g->t[i].cscales);
		free(g->t[i].cdata);
	}
	for (int i = 0; i < g->nops; i++) {
		free(g->ops[i].ins);
		free(g->ops[i].axis_dims);
	}
	free(g->t);
	free(g->ops);
	free(g);
}

size_t graph_elem_size(enum npu_dtype dt)
{
	return dt == NPU_DT_INT8 ? 1 : 4;
}

int npu_graph_tensor(npu_graph *g, const struct npu_tensor_desc *d)
{
	struct tensor *t, *nt;
	size_t n = 1;

	if (!g || !d || g->compiled || d->rank < 1 || d->rank > 4 ||
	    (d->dtype != NPU_DT_INT8 && d->dtype != NPU_DT_INT32 && d->dtype != NPU_DT_FLOAT32))
		return NPU_EINVAL;
	for (uint32_t i = 0; i < d->rank; i++) {
		if (!d->dims[i] || d->dims[i] > 65536)
			return NPU_EINVAL;
		n *= d->dims[i];
		if (n > (256u << 20))
			return NPU_E2BIG;
	}
	/* Activations: int8 with a quantization; fp32 and int32 without. */
	if (!d->data && d->dtype == NPU_DT_INT8 &&
	    (!(d->scale > 0) || d->zero_point < -128 || d->zero_point > 127))
		return NPU_EINVAL;
	nt = realloc(g->t, sizeof(*g->t) * (size_t)(g->nt + 1));
	if (!nt)
		return NPU_ENOMEM;
	g->t = nt;
	t = &g->t[g->nt];
	memset(t, 0, sizeof(*t));
	t->alias = -1;
	t->grad = -1;
	t->d = *d;
	t->bytes = n * graph_elem_size(d->dtype);
	if (d->data) {
		t->cdata = malloc(t->bytes);
		if (!t->cdata)
			return NPU_ENOMEM;
		memcpy(t->cdata, d->data, t->bytes);
	}
	if (d->channel_scales && d->quant_dim >= d->rank)
		return NPU_EINVAL;
	if (d->channel_scales) {
		size_t nc = d->dims[d->quant_dim];

		t->cscales = malloc(sizeof(float) * nc);
		if (!t->cscales) {
			free(t->cdata);
			return NPU_ENOMEM;
		}
		memcpy(t->cscales, d->channel_scales, sizeof(float) * nc);
	}
	t->d.data = NULL;
	t->d.channel_scales = NULL;
	return g->nt++;
}

int graph_valid_id(const npu_graph *g, int id, int constant)
{
	return id >= 0 && id < g->nt && (constant < 0 || !!g->t[id].cdata == constant);
}

int graph_act_of(const npu_graph *g, int id, enum npu_dtype dt)
{
	return graph_valid_id(g, id, 0) && g->t[id].d.dtype == dt;
}

int graph_add_op(npu_graph *g, const struct op *o)
{
	struct op *n;

	n = realloc(g->ops, sizeof(*g->ops) * (size_t)(g->nops + 1));
	if (!n)
		return NPU_ENOMEM;
	g->ops = n;
	g->ops[g->nops++] = *o;
	return 0;
}

int graph_add_tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims)
{
	struct npu_tensor_desc d = { .dtype = dt, .rank = rank, .scale = 1.0f };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return npu_graph_tensor(g, &d);
}

int graph_root(const npu_graph *g, int id)
{
	return g->t[id].alias >= 0 ? g->t[id].alias : id;
}

int npu_graph_conv2d(npu_graph *g, int in, int filter, int bias, int out, uint32_t stride,
		     uint32_t pad, int depthwise, enum npu_activation act)
{
	struct op o = { .kind = OP_CONV, .in = in, .in2 = filter, .bias = bias, .out = out,
			.stride = stride, .pad = pad, .depthwise = depthwise, .act = act };
	const struct npu_tensor_desc *i, *f, *y;

	if (g && !g->compiled && graph_valid_id(g, in, 0) && g->t[in].d.dtype == NPU_DT_FLOAT32)
		return depthwise ? NPU_EINVAL	/* no fp32 depthwise convolution */
				 : graph_conv_f32(g, in, filter, bias, out, stride, pad, act);
	if (!g || g->compiled || !graph_act_of(g, in, NPU_DT_INT8) ||
	    !graph_valid_id(g, filter, 1) || !graph_act_of(g, out, NPU_DT_INT8) ||
	    (bias >= 0 && !graph_valid_id(g, bias, 1)) || !stride || stride > 64 || pad > 255)
		return NPU_EINVAL;
	i = &g->t[in].d;
	f = &g->t[filter].d;
	y = &g->t[out].d;
	if (i->rank != 4 || f->rank != 4 || y->rank != 4 || f->dtype != NPU_DT_INT8 ||
	    i->dims[0] != y->dims[0] || f->dims[1] > 64 || f->dims[2] > 64 ||
	    (depthwise ? f->dims[0] != 1 || f->dims[3] != y->dims[3] ||
			 y->dims[3] % i->dims[3]
		       : f->dims[0] != y->dims[3] || f->dims[3] != i->dims[3]) ||
	    i->dims[1] + 2 * pad < f->dims[1] || i->dims[2] + 2 * pad < f->dims[2] ||
	    y->dims[1] != (i->dims[1] + 2 * pad - f->dims[1]) / stride + 1 ||
	    y->dims[2] != (i->dims[2] + 2 * pad - f->dims[2]) / stride + 1)
		return NPU_EINVAL;
	if (bias >= 0 && (g->t[bias].d.dtype != NPU_DT_INT32 || g->t[bias].bytes != 4 * y->dims[3]))
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_fully_connected(npu_graph *g, int in, int weights, int bias, int out,
			      enum npu_activation act)
{
	struct op o = { .kind = OP_FC, .in = in, .in2 = weights, .bias = bias, .out = out,
			.act = act };
	const struct npu_tensor_desc *w, *y;

	if (g && !g->compiled && graph_valid_id(g, in, 0) && g->t[in].d.dtype == NPU_DT_FLOAT32)
		return graph_fc_f32(g, in, weights, bias, out, act);
	if (!g || g->compiled || !graph_act_of(g, in, NPU_DT_INT8) || !graph_valid_id(g, weights, 1) ||
	    !graph_act_of(g, out, NPU_DT_INT8) || (bias >= 0 && !graph_valid_id(g, bias, 1)))
		return NPU_EINVAL;
	w = &g->t[weights].d;
	y = &g->t[out].d;
	/* in is [batch][...] flattened to [batch][k]; w is [n][k]; out [batch][n]. */
	if (w->rank != 2 || w->dtype != NPU_DT_INT8 || y->rank != 2 || y->dims[1] != w->dims[0] ||
	    g->t[in].bytes != (size_t)y->dims[0] * w->dims[1] || g->t[in].d.dims[0] != y->dims[0])
		return NPU_EINVAL;
	if (bias >= 0 && (g->t[bias].d.dtype != NPU_DT_INT32 || g->t[bias].bytes != 4 * w->dims[0]))
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_pool(npu_graph *g, int in, int out, uint32_t k, uint32_t stride, int average)
{
	struct op o = { .kind = OP_POOL, .in = in, .out = out, .k = k, .stride = stride,
			.average = average };
	const struct npu_tensor_desc *i, *y;

	if (g && !g->compiled && graph_valid_id(g, in, 0) && g->t[in].d.dtype == NPU_DT_FLOAT32)
		return graph_pool_f32(g, in, out, k, stride, average);
	if (!g || g->compiled || !graph_act_of(g, in, NPU_DT_INT8) ||
	    !graph_act_of(g, out, NPU_DT_INT8) || !k || k > 64 || !stride || stride > 64)
		return NPU_EINVAL;
	i = &g->t[in].d;
	y = &g->t[out].d;
	if (i->rank != 4 || y->rank != 4 || i->dims[0] != y->dims[0] || i->dims[3] != y->dims[3] ||
	    i->dims[1] < k || i->dims[2] < k || y->dims[1] != (i->dims[1] - k) / stride + 1 ||
	    y->dims[2] != (i->dims[2] - k) / stride + 1 || i->scale != y->scale ||
	    i->zero_point != y->zero_point)
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_add(npu_graph *g, int a, int b, int out, enum npu_activation act)
{
	struct op o = { .kind = OP_ADD, .in = a, .in2 = b, .out = out, .act = act };

	if (!g || g->compiled || !graph_act_of(g, a, NPU_DT_INT8) ||
	    !graph_act_of(g, b, NPU_DT_INT8) || !graph_act_of(g, out, NPU_DT_INT8) ||
	    g->t[a].bytes != g->t[b].bytes || g->t[a].bytes != g->t[out].bytes)
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_softmax(npu_graph *g, int in, int out, float beta)
{
	struct op o = { .kind = OP_SOFTMAX, .in = in, .out = out, .beta = beta };
	const struct npu_tensor_desc *y;

	if (!g || g->compiled || !graph_act_of(g, in, NPU_DT_INT8) || !graph_act_of(g, out, NPU_DT_INT8) ||
	    !(beta > 0) ||
	    g->t[in].bytes != g->t[out].bytes)
		return NPU_EINVAL;
	y = &g->t[out].d;
	/* TFLite's int8 softmax output: scale 1/256, zero point -128. */
	if (y->scale != 1.0f / 256 || y->zero_point != -128 || y->dims[y->rank - 1] > 65536)
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

int npu_graph_concat(npu_graph *g, const int *ins, uint32_t count, int out, uint32_t axis)
{
	struct op o = { .kind = OP_CONCAT, .bias = -1, .out = out, .nin = count, .axis = axis };
	const struct npu_tensor_desc *y;
	uint32_t total = 0;
	int err;

	if (!g || g->compiled || !ins || !count || count > NPU_CONCAT_MAX_INPUTS ||
	    !graph_act_of(g, out, NPU_DT_INT8) || axis >= g->t[out].d.rank)
		return NPU_EINVAL;
	y = &g->t[out].d;
	for (uint32_t i = 0; i < count; i++) {
		const struct npu_tensor_desc *x;

		if (!graph_valid_id(g, ins[i], -1))
			return NPU_EINVAL;
		x = &g->t[ins[i]].d;
		/* Shared quantization: the bytes are copied, not rescaled. */
		if (x->dtype != NPU_DT_INT8 || x->rank != y->rank || x->scale != y->scale ||
		    x->zero_point != y->zero_point)
			return NPU_EINVAL;
		for (uint32_t d = 0; d < y->rank; d++)
			if (d != axis && x->dims[d] != y->dims[d])
				return NPU_EINVAL;
		total += x->dims[axis];
	}
	if (total != y->dims[axis])
		return NPU_EINVAL;
	o.in = ins[0];
	o.ins = malloc(sizeof(int) * count);
	o.axis_dims = malloc(sizeof(uint32_t) * count);
	if (!o.ins || !o.axis_dims) {
		free(o.ins);
		free(o.axis_dims);
		return NPU_ENOMEM;
	}
	for (uint32_t i = 0; i < count; i++) {
		o.ins[i] = ins[i];
		o.axis_dims[i] = g->t[ins[i]].d.dims[axis];
	}
	err = graph_add_op(g, &o);
	if (err) {
		free(o.ins);
		free(o.axis_dims);
	}
	return err;
}

/* Same dtype (int8) and quantization: the layout ops move bytes only. */
static int same_quant(const npu_graph *g, int in, int out)
{
	const struct npu_tensor_desc *x = &g->t[in].d, *y = &g->t[out].d;

	return x->dtype == NPU_DT_INT8 && y->dtype == NPU_DT_INT8 && x->rank == y->rank &&
	       x->scale == y->scale && x->zero_point == y->zero_point;
}

int npu_graph_pad(npu_graph *g, int in, int out, const uint32_t *before, const uint32_t *after)
{
	struct op o = { .kind = OP_PAD, .in = in, .bias = -1, .out = out };
	const struct npu_tensor_desc *x, *y;

	if (!g || g->compiled || !graph_valid_id(g, in, -1) || !graph_valid_id(g, out, 0) || !before ||
	    !after || !same_quant(g, in, out))
		return NPU_EINVAL;
	x = &g->t[in].d;
	y = &g->t[out].d;
	for (uint32_t d = 0; d < x->rank; d++) {
		if (before[d] > 65536 || after[d] > 65536 ||
		    (uint64_t)before[d] + x->dims[d] + after[d] != y->dims[d])
			return NPU_EINVAL;
		o.lo[d] = before[d];
		o.hi[d] = after[d];
	}
	return graph_add_op(g, &o);
}

int npu_graph_transpose(npu_graph *g, int in, int out, const uint32_t *perm)
{
	struct op o = { .kind = OP_TRANSPOSE, .in = in, .bias = -1, .out = out };
	const struct npu_tensor_desc *x, *y;
	uint32_t seen = 0;

	if (!g || g->compiled || !graph_valid_id(g, in, -1) || !graph_valid_id(g, out, 0) || !perm ||
	    !same_quant(g, in, out))
		return NPU_EINVAL;
	x = &g->t[in].d;
	y = &g->t[out].d;
	for (uint32_t d = 0; d < x->rank; d++) {
		if (perm[d] >= x->rank || (seen & (1u << perm[d])) ||
		    y->dims[d] != x->dims[perm[d]])
			return NPU_EINVAL;
		seen |= 1u << perm[d];
		o.lo[d] = perm[d];
	}
	return graph_add_op(g, &o);
}

static int add_quantize(npu_graph *g, int in, int out, enum npu_dtype from, enum npu_dtype to)
{
	struct op o = { .kind = OP_QUANTIZE, .in = in, .bias = -1, .out = out };
	const struct npu_tensor_desc *x, *y;

	if (!g || g->compiled || !graph_act_of(g, in, from) || !graph_act_of(g, out, to))
		return NPU_EINVAL;
	x = &g->t[in].d;
	y = &g->t[out].d;
	if (x->rank != y->rank || memcmp(x->dims, y->dims, sizeof(uint32_t) * x->rank))
		return NPU_EINVAL;
	return graph_add_op(g, &o);
}

/*
 * Packed tensors reshape in place: @out becomes another view of @in's
 * storage (of the tensor @in views, for a chain), and the op moves nothing.
 */
int npu_graph_reshape(npu_graph *g, int in, int out)
{
	struct op o = { .kind = OP_RESHAPE, .in = in, .in2 = -1, .bias = -1, .out = out };
	const struct npu_tensor_desc *x, *y;
	int err;

	if (!g || g->compiled || !graph_valid_id(g, in, 0) || !graph_valid_id(g, out, 0) || in == out ||
	    g->t[out].alias >= 0)
		return NPU_EINVAL;
	x = &g->t[in].d;
	y = &g->t[out].d;
	if (x->dtype != y->dtype || g->t[in].bytes != g->t[out].bytes ||
	    (x->dtype == NPU_DT_INT8 && (x->scale != y->scale || x->zero_point != y->zero_point)))
		return NPU_EINVAL;
	for (int i = 0; i < g->nt; i++)
		if (g->t[i].alias == out)
			return NPU_EINVAL;	/* already viewed: it must own storage */
	err = graph_add_op(g, &o);
	if (!err)
		g->t[out].alias = g->t[in].alias >= 0 ? g->t[in].alias : in;
	return err;
}

int npu_graph_quantize(npu_graph *g, int in, int out)
{
	return add_quantize(g, in, out, NPU_DT_FLOAT32, NPU_DT_INT8);
}

int npu_graph_dequantize(npu_graph *g, int in, int out)
{
	return add_quantize(g, in, out, NPU_DT_INT8, NPU_DT_FLOAT32);
}

/* TFLite's CalculateActivationRangeQuantized. */
static void act_range(enum npu_activation act, const struct npu_tensor_desc *y, int32_t *lo,
		      int32_t *hi)
{
	int32_t q0 = y->zero_point + (int32_t)roundf(0.0f / y->scale);
	int32_t q6 = y->zero_point + (int32_t)fminf(roundf(6.0f / y->scale), 1e6f);

	*lo = -128;
	*hi = 127;
	if (act != NPU_ACT_NONE)
		*lo = q0 > -128 ? q0 : -128;
	if (act == NPU_ACT_RELU6)
		*hi = q6 < 127 ? q6 : 127;
}

/* Per-channel multipliers for in * w[c] / out; one for per-tensor weights. */
static int channel_quant(struct op *o, const struct tensor *in, const struct tensor *w,
			 const struct tensor *out, uint32_t channels)
{
	uint32_t n = w->cscales ? channels : 1;

	if (w->cscales && w->d.dims[w->d.quant_dim] != channels)
		return NPU_EINVAL;	/* scales along the wrong dimension */
	o->mult = calloc(n, sizeof(int32_t));
	o->shift = calloc(n, sizeof(int32_t));
	if (!o->mult || !o->shift)
		return NPU_ENOMEM;
	for (uint32_t c = 0; c < n; c++) {
		double ws = w->cscales ? w->cscales[c] : w->d.scale;
		int sh;

		if (!(ws > 0) || npu_quantize_multiplier((double)in->d.scale * ws / out->d.scale,
							 &o->mult[c], &sh))
			return NPU_EINVAL;
		o->shift[c] = sh;
	}
	return (int)n;
}

static int prepare_i8(npu_graph *g, struct op *o);

int graph_prepare_op(npu_graph *g, struct op *o)
{
	if (o->kind >= OP_CONV_F32)
		return graph_lower_f32(g, o);
	return prepare_i8(g, o);
}

/* An int8 op's command parameters, from its tensors' quantization. */
static int prepare_i8(npu_graph *g, struct op *o)
{
	struct tensor *in = &g->t[o->in], *out = &g->t[o->out];
	int32_t lo, hi;
	int n;

	act_range(o->act, &out->d, &lo, &hi);
	switch (o->kind) {
	case OP_CONV: {
		struct tensor *f = &g->t[o->in2];
		struct npu_conv2d_i8 *c = &o->p.conv;

		n = channel_quant(o, in, f, out, out->d.dims[3]);
		if (n < 0)
			return n;
		*c = (struct npu_conv2d_i8){
			in->d.dims[0], in->d.dims[1], in->d.dims[2], in->d.dims[3],
			out->d.dims[1], out->d.dims[2], out->d.dims[3],
			f->d.dims[1], f->d.dims[2], o->stride, o->stride, 1, 1, o->pad, o->pad,
			in->d.zero_point, out->d.zero_point, lo, hi, n == 1, o->depthwise,
		};
		return 0;
	}
	case OP_FC: {
		struct tensor *w = &g->t[o->in2];

		n = channel_quant(o, in, w, out, w->d.dims[0]);
		if (n < 0)
			return n;
		o->p.gemm = (struct npu_gemm_i8){ out->d.dims[0], w->d.dims[0], w->d.dims[1],
						  in->d.zero_point, out->d.zero_point, lo, hi, n == 1 };
		return 0;
	}
	case OP_POOL:
		o->p.pool = (struct npu_pool_i8){
			in->d.dims[0], in->d.dims[1], in->d.dims[2], in->d.dims[3],
			out->d.dims[1], out->d.dims[2], o->k, o->k, o->stride, o->stride, 0, 0,
			-128, 127, o->average,
		};
		return 0;
	case OP_ADD: {
		struct tensor *b = &g->t[o->in2];
		struct npu_eltwise_i8 *e = &o->p.elt;
		double twice_max = 2.0 * fmax(in->d.scale, b->d.scale);
		int sa, sb, so;

		memset(e, 0, sizeof(*e));
		e->count = (uint32_t)out->bytes;
		e->a_zero = in->d.zero_point;
		e->b_zero = b->d.zero_point;
		e->out_zero = out->d.zero_point;
		e->act_min = lo;
		e->act_max = hi;
		e->left_shift = 20;
		if (npu_quantize_multiplier(in->d.scale / twice_max, &e->a_mult, &sa) ||
		    npu_quantize_multiplier(b->d.scale / twice_max, &e->b_mult, &sb) ||
		    npu_quantize_multiplier(twice_max / ((1 << 20) * (double)out->d.scale),
					    &e->out_mult, &so))
			return NPU_EINVAL;
		e->a_shift = sa;
		e->b_shift = sb;
		e->out_shift = so;
		return 0;
	}
	case OP_SOFTMAX:	/* over the last dimension */
		o->p.sm.depth = in->d.dims[in->d.rank - 1];
		o->p.sm.rows = (uint32_t)(in->bytes / o->p.sm.depth);
		return npu_softmax_params(in->d.scale, o->beta, &o->p.sm);
	case OP_PAD:
		o->p.pad = (struct npu_pad){ .rank = in->d.rank, .value = in->d.zero_point };
		memcpy(o->p.pad.dims, in->d.dims, sizeof(uint32_t) * in->d.rank);
		memcpy(o->p.pad.before, o->lo, sizeof(uint32_t) * in->d.rank);
		memcpy(o->p.pad.after, o->hi, sizeof(uint32_t) * in->d.rank);
		return 0;
	case OP_TRANSPOSE:
		o->p.tr = (struct npu_transpose){ .rank = in->d.rank, .elem_size = 1 };
		memcpy(o->p.tr.dims, in->d.dims, sizeof(uint32_t) * in->d.rank);
		memcpy(o->p.tr.perm, o->lo, sizeof(uint32_t) * in->d.rank);
		return 0;
	case OP_RESHAPE:
		return 0;
	case OP_QUANTIZE: {
		int deq = in->d.dtype == NPU_DT_INT8;	/* the int8 side's quantization */
		const struct npu_tensor_desc *q = deq ? &in->d : &out->d;

		o->p.q = (struct npu_quantize){ .count = (uint32_t)(out->bytes / graph_elem_size(out->d.dtype)),
						.dequantize = deq, .scale = q->scale,
						.zero_point = q->zero_point };
		return 0;
	}
	case OP_CONCAT:
		o->p.cat = (struct npu_concat){ .rank = out->d.rank, .elem_size = 1,
						.axis = o->axis, .count = o->nin,
						.axis_dims = o->axis_dims };
		for (uint32_t d = 0; d < out->d.rank; d++)
			o->p.cat.dims[d] = d == o->axis ? 0 : out->d.dims[d];
		return 0;
	default:	/* the fp32 ops are lowered elsewhere */
		return NPU_EINVAL;
	}
}

