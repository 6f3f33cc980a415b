// SPDX-License-Identifier: MIT
/*
 * ptq.c - the post-training quantization pass: an fp32 graph's forward part
 * becomes an int8 graph, from the activation ranges that calibration
 * observed (exec/calibrate.c) and the trained weights, with ONNX's
 * arithmetic (QuantizeLinear and DequantizeLinear rounding half to even,
 * dense layers and convolutions requantized as ONNX's QDQ form is, an fp32
 * multiplier), so that the model npu_model_save writes loads back into
 * the same kernels and gives the same bits (and onnxruntime nearly so):
 * activations asymmetric per tensor from their observed range (widened to
 * hold 0), weights symmetric per output channel (max |w| / 127), biases
 * int32 at the input scale times the weight scale, ReLU fused as the
 * output clamp, pooling, reshape and transposes keeping their input's
 * quantization. The other N-d ops (layer norm, softmax, GELU, matmuls of
 * two activations, broadcast arithmetic, means) stay fp32 between a
 * dequantize and a quantize (as onnxruntime's QDQ networks run them), so
 * the multiply-accumulates of dense layers and convolutions are int8.
 * The graph takes and returns fp32 (quantize and dequantize at the edges),
 * so it replaces the float one where it is used.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/ptq.h"

/* An int8 activation like fp32 tensor @id, quantized over its observed range. */
static int act_tensor(const struct ptq_in *p, npu_graph *q, int id)
{
	struct npu_tensor_desc d = p->g->t[id].d;
	double lo = fmin(p->lo[id], 0.0), hi = fmax(p->hi[id], 0.0), scale;
	double zp;

	if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi))
		return NPU_EINVAL;	/* never observed, or not finite */
	scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
	zp = round(-128.0 - lo / scale);
	d.dtype = NPU_DT_INT8;
	d.scale = (float)scale;
	d.zero_point = (int32_t)fmin(127, fmax(-128, zp));
	d.data = NULL;
	d.channel_scales = NULL;
	return npu_graph_tensor(q, &d);
}

/* An int8 activation with @like's quantization and @shape's dimensions. */
static int same_quant_tensor(npu_graph *q, int like, const struct npu_tensor_desc *shape)
{
	struct npu_tensor_desc d = *shape;
	const struct npu_tensor_desc *l = &q->t[like].d;

	d.dtype = NPU_DT_INT8;
	d.scale = l->scale;
	d.zero_point = l->zero_point;
	d.data = NULL;
	d.channel_scales = NULL;
	return npu_graph_tensor(q, &d);
}

/*
 * The int8 weights (per output channel, dims[0]) and int32 bias of a dense
 * or convolution layer, as constants of @q; input scale @in_scale.
 */
static int quant_weights(const struct ptq_in *p, const struct ir_node *o, npu_graph *q,
			 float in_scale, int *w_id, int *b_id)
{
	const npu_graph *g = p->g;
	const struct ir_tensor *w = &g->t[o->in[1]];
	int bias = o->in[2];
	uint32_t oc = w->d.dims[0];
	size_t per = w->bytes / 4 / oc;
	const float *wf = p->host[o->in[1]];
	int8_t *wq = malloc(w->bytes / 4);
	float *scales = malloc(sizeof(float) * oc);
	int32_t *bq = malloc(sizeof(int32_t) * oc);
	int err = 0;

	if (!wq || !scales || !bq) {
		err = NPU_ENOMEM;
		goto out;
	}
	for (uint32_t c = 0; c < oc; c++) {
		float mx = 0.0f;

		for (size_t i = 0; i < per; i++)
			mx = fmaxf(mx, fabsf(wf[c * per + i]));
		scales[c] = mx > 0.0f ? mx / 127.0f : 1.0f;
		for (size_t i = 0; i < per; i++)
			wq[c * per + i] = (int8_t)fmaxf(-127.0f, fminf(127.0f,
						roundf(wf[c * per + i] / scales[c])));
		if (bias >= 0) {
			double b = round(((const float *)p->host[bias])[c] /
					 ((double)in_scale * scales[c]));

			bq[c] = (int32_t)fmax(-2147483648.0, fmin(2147483647.0, b));
		}
	}
	{
		struct npu_tensor_desc dw = w->d, db = { .dtype = NPU_DT_INT32, .rank = 1,
							 .dims = { oc } };

		dw.dtype = NPU_DT_INT8;
		dw.data = wq;
		dw.channel_scales = scales;
		dw.quant_dim = 0;
		dw.scale = 1.0f;
		dw.zero_point = 0;
		*w_id = npu_graph_tensor(q, &dw);
		db.data = bq;
		*b_id = bias >= 0 ? npu_graph_tensor(q, &db) : -1;
		if (*w_id < 0 || (bias >= 0 && *b_id < 0))
			err = *w_id < 0 ? *w_id : *b_id;
	}
out:
	free(wq);
	free(scales);
	free(bq);
	return err;
}

/*
 * ONNX's QuantizeLinear (@quantize) of fp32 @x into int8 @y, or
 * DequantizeLinear of int8 @x into fp32 @y, per tensor: the int8 tensor's
 * scale and zero point as the op's constants.
 */
static int qdq(npu_graph *q, int x, int y, int quantize)
{
	float scale = q->t[quantize ? y : x].d.scale;	/* copies: adding tensors moves q->t */
	int8_t zp = (int8_t)q->t[quantize ? y : x].d.zero_point;
	struct npu_tensor_desc sd = { .dtype = NPU_DT_FLOAT32, .rank = 1, .dims = { 1 },
				      .scale = 1.0f, .data = &scale };
	struct npu_tensor_desc zd = { .dtype = NPU_DT_INT8, .rank = 1, .dims = { 1 },
				      .scale = 1.0f, .data = &zp };
	struct ir_node n;

	ir_node_init(&n, IR_ND_QDQ);
	n.in[0] = x;
	n.in[1] = npu_graph_tensor(q, &sd);
	n.in[2] = npu_graph_tensor(q, &zd);
	if (n.in[1] < 0 || n.in[2] < 0)
		return n.in[1] < 0 ? n.in[1] : n.in[2];
	n.nin = 3;
	n.out[0] = y;
	n.nout = 1;
	n.a.nd.qdq = (struct nd_qdq){ .mode = quantize ? ND_QUANTIZE : ND_DEQUANTIZE,
				      .qdtype = NPU_DT_INT8, .outer = 1, .axis = 1,
				      .inner = ir_count(q, x) };
	return ir_add_node(q, &n);
}

/* An int8 dense layer or convolution like @o, with ONNX's requantization. */
static int int8_layer(npu_graph *q, const struct ir_node *o, int in, int w, int b, int out)
{
	struct ir_node n;

	ir_node_init(&n, o->op);
	n.in[0] = in;
	n.in[1] = w;
	n.in[2] = b;
	n.nin = 3;
	n.out[0] = out;
	n.nout = 1;
	memcpy(n.a.stride, o->a.stride, sizeof(n.a.stride));
	memcpy(n.a.dilation, o->a.dilation, sizeof(n.a.dilation));
	memcpy(n.a.pad, o->a.pad, sizeof(n.a.pad));
	n.a.groups = o->a.groups;
	n.a.act = o->a.act;
	n.a.requant = NPU_REQUANT_ONNX;
	return ir_add_node(q, &n);
}

/* Each tensor of the fp32 graph in the int8 one: as int8 (i8), as fp32 (f32), or -1. */
struct ptq_map {
	int *i8, *f32;
};

/* fp32 tensor @id of @p->g as an int8 tensor of @q: quantized where it is only fp32. */
static int want_i8(const struct ptq_in *p, npu_graph *q, struct ptq_map *m, int id)
{
	int t;

	if (id < 0 || m->i8[id] >= 0 || m->f32[id] < 0)
		return id < 0 ? NPU_EINVAL : m->i8[id] >= 0 ? m->i8[id] : NPU_EINVAL;
	t = act_tensor(p, q, id);
	if (t < 0 || qdq(q, m->f32[id], t, 1))
		return t < 0 ? t : NPU_EINVAL;
	return m->i8[id] = t;
}

/* ... as an fp32 tensor of @q: dequantized, or a constant's current values. */
static int want_f32(const struct ptq_in *p, npu_graph *q, struct ptq_map *m, int id)
{
	struct npu_tensor_desc d;
	int t;

	if (id < 0 || m->f32[id] >= 0)
		return id < 0 ? -1 : m->f32[id];
	d = p->g->t[id].d;
	d.data = NULL;
	if (p->g->t[id].cdata)
		d.data = p->host[id];	/* a trained parameter, as it is now */
	else if (m->i8[id] < 0)
		return NPU_EINVAL;	/* not reached from the input */
	t = npu_graph_tensor(q, &d);
	if (t >= 0 && !d.data && qdq(q, m->i8[id], t, 0))
		return NPU_EINVAL;
	return t < 0 ? t : (m->f32[id] = t);
}

/*
 * An fp32 N-d node as it is, on fp32 inputs; an int8 copy (a transpose)
 * keeps its input's quantization when that is int8.
 */
static int nd_node(const struct ptq_in *p, const struct ir_node *o, npu_graph *q,
		   struct ptq_map *m)
{
	struct ir_node n = *o;
	int y = o->out[0], i8 = o->op == IR_ND_COPY && m->i8[o->in[0]] >= 0;
	struct npu_tensor_desc d = p->g->t[y].d;

	for (uint32_t i = 0; i < n.nin; i++) {
		n.in[i] = i8 ? m->i8[o->in[i]] : want_f32(p, q, m, o->in[i]);
		if (o->in[i] >= 0 && n.in[i] < 0)
			return n.in[i] < 0 ? n.in[i] : NPU_EINVAL;
	}
	for (uint32_t i = 1; i < IR_MAX_OUT; i++)
		n.out[i] = -1;	/* no layer norm statistics: training's */
	n.nout = 1;
	n.backward = 0;
	for (int i = 0; i < IR_MAX_OUT; i++)
		n.a.acc[i] = -1;
	d.data = NULL;
	if (i8) {
		n.out[0] = same_quant_tensor(q, n.in[0], &d);
		n.a.nd.cp.dtype = NPU_DT_INT8;
	} else {
		n.out[0] = npu_graph_tensor(q, &d);
	}
	if (n.out[0] < 0 || ir_add_node(q, &n))
		return n.out[0] < 0 ? n.out[0] : NPU_EINVAL;
	if (i8)
		m->i8[y] = n.out[0];
	else
		m->f32[y] = n.out[0];
	return 0;
}

/* The int8 twin of forward node @o. */
static int quantize_node(const struct ptq_in *p, const struct ir_node *o, npu_graph *q,
			 struct ptq_map *m)
{
	const npu_graph *g = p->g;
	int in, y = o->out[0], out, w, b, err, *map = m->i8;

	if (o->op == IR_XENT)
		return 0;	/* training only */
	if (ir_op_is_nd(o->op))
		return nd_node(p, o, q, m);
	if (o->op == IR_RESHAPE && m->i8[o->in[0]] < 0) {	/* of an fp32 tensor */
		struct npu_tensor_desc d = g->t[y].d;

		in = want_f32(p, q, m, o->in[0]);
		d.data = NULL;
		out = in < 0 ? in : npu_graph_tensor(q, &d);
		if (out < 0 || npu_graph_reshape(q, in, out))
			return out < 0 ? out : NPU_EINVAL;
		m->f32[y] = out;
		return 0;
	}
	in = o->nin ? want_i8(p, q, m, o->in[0]) : NPU_EINVAL;
	if (in < 0)
		return in;	/* not reached from the input */
	switch (o->op) {
	case IR_FC:
	case IR_CONV2D:
		out = act_tensor(p, q, y);
		if (out < 0)
			return out;
		err = quant_weights(p, o, q, q->t[in].d.scale, &w, &b);
		if (err)
			return err;
		err = int8_layer(q, o, in, w, b, out);
		break;
	case IR_POOL:
		out = same_quant_tensor(q, in, &g->t[y].d);
		err = out < 0 ? out : npu_graph_pool_ex(q, in, out, &(struct npu_pool_attrs){
				.kernel = { o->a.kernel[0], o->a.kernel[1] },
				.stride = { o->a.stride[0], o->a.stride[1] },
				.pad = { o->a.pad[0], o->a.pad[1], o->a.pad[2], o->a.pad[3] },
				.average = o->a.average });
		break;
	case IR_RESHAPE:
		out = same_quant_tensor(q, in, &g->t[y].d);
		err = out < 0 ? out : npu_graph_reshape(q, in, out);
		break;
	default:
		return NPU_EINVAL;	/* no int8 form (a ReLU not fused into a layer) */
	}
	if (!err)
		map[y] = out;
	return err;
}

int ptq_build(const struct ptq_in *p, int in, int out, npu_graph **qg, int *q_in, int *q_out)
{
	const npu_graph *g = p->g;
	struct ptq_map m;
	npu_graph *q;
	int fin, fout, err = 0;

	q = npu_graph_new();
	m.i8 = malloc(sizeof(int) * (size_t)g->nt);
	m.f32 = malloc(sizeof(int) * (size_t)g->nt);
	if (!q || !m.i8 || !m.f32) {
		err = NPU_ENOMEM;
		goto fail;
	}
	for (int i = 0; i < g->nt; i++)
		m.i8[i] = m.f32[i] = -1;
	/* fp32 in, quantized (over the calibration data's range) where int8 ops read it. */
	fin = npu_graph_tensor(q, &g->t[in].d);
	err = fin < 0 ? fin : 0;
	m.f32[in] = fin;
	for (int i = 0; i < g->nn && !err; i++)
		if (!g->n[i].backward)
			err = quantize_node(p, &g->n[i], q, &m);
	if (!err && m.i8[out] < 0 && m.f32[out] < 0)
		err = NPU_EINVAL;	/* out is not computed from in */
	if (err)
		goto fail;
	fout = m.f32[out];	/* and fp32 out */
	if (fout < 0) {
		fout = npu_graph_tensor(q, &g->t[out].d);
		err = fout < 0 ? fout : qdq(q, m.i8[out], fout, 0);
	}
	if (!err)
		err = npu_graph_inputs(q, &fin, 1);
	if (!err)
		err = npu_graph_outputs(q, &fout, 1);
	if (err)
		goto fail;
	free(m.i8);
	free(m.f32);
	*qg = q;
	*q_in = fin;
	*q_out = fout;
	return 0;
fail:
	free(m.i8);
	free(m.f32);
	npu_graph_free(q);
	return err;
}
