// SPDX-License-Identifier: MIT
/*
 * ptq.c - the post-training quantization pass: an fp32 graph's forward part
 * becomes an int8 graph (TFLite's scheme), from the activation ranges that
 * calibration observed (exec/calibrate.c) and the trained weights:
 * activations asymmetric per tensor from their observed range (widened to
 * hold 0), weights symmetric per output channel (max |w| / 127), biases
 * int32 at the input scale times the weight scale, ReLU fused as the
 * output clamp, pooling and reshape keeping their input's quantization.
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

/* The int8 twin of forward node @o; map[] takes fp32 tensors to int8 ones. */
static int quantize_node(const struct ptq_in *p, const struct ir_node *o, npu_graph *q, int *map)
{
	const npu_graph *g = p->g;
	int in = o->nin && o->in[0] >= 0 ? map[o->in[0]] : -1, y = o->out[0], out, w, b, err;

	if (o->op == IR_XENT)
		return 0;	/* training only */
	if (in < 0)
		return NPU_EINVAL;	/* not reached from the input */
	switch (o->op) {
	case IR_FC:
	case IR_CONV2D:
		out = act_tensor(p, q, y);
		if (out < 0)
			return out;
		err = quant_weights(p, o, q, q->t[in].d.scale, &w, &b);
		if (err)
			return err;
		err = o->op == IR_FC ?
			npu_graph_fully_connected(q, in, w, b, out, o->a.act) :
			npu_graph_conv2d_ex(q, in, w, b, out, &(struct npu_conv2d_attrs){
				.stride = { o->a.stride[0], o->a.stride[1] },
				.dilation = { o->a.dilation[0], o->a.dilation[1] },
				.pad = { o->a.pad[0], o->a.pad[1], o->a.pad[2], o->a.pad[3] },
				.act = o->a.act });
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
	npu_graph *q;
	int *map, fin, fout, qin, err = 0;

	q = npu_graph_new();
	map = malloc(sizeof(int) * (size_t)g->nt);
	if (!q || !map) {
		err = NPU_ENOMEM;
		goto fail;
	}
	for (int i = 0; i < g->nt; i++)
		map[i] = -1;
	/* fp32 in, quantized over the calibration data's range. */
	fin = npu_graph_tensor(q, &g->t[in].d);
	qin = act_tensor(p, q, in);
	err = fin < 0 ? fin : qin < 0 ? qin : npu_graph_quantize(q, fin, qin);
	map[in] = qin;
	for (int i = 0; i < g->nn && !err; i++)
		if (!g->n[i].backward)
			err = quantize_node(p, &g->n[i], q, map);
	if (!err && map[out] < 0)
		err = NPU_EINVAL;	/* out is not computed from in */
	if (err)
		goto fail;
	fout = npu_graph_tensor(q, &g->t[out].d);	/* and fp32 out */
	err = fout < 0 ? fout : npu_graph_dequantize(q, map[out], fout);
	if (!err)
		err = npu_graph_inputs(q, &fin, 1);
	if (!err)
		err = npu_graph_outputs(q, &fout, 1);
	if (err)
		goto fail;
	free(map);
	*qg = q;
	*q_in = fin;
	*q_out = fout;
	return 0;
fail:
	free(map);
	npu_graph_free(q);
	return err;
}
