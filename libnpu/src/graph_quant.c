// SPDX-License-Identifier: MIT
/*
 * graph_quant.c - post-training quantization: an fp32 graph's forward part
 * becomes an int8 graph (TFLite's scheme), calibrated on data it has run.
 *
 * npu_plan_observe folds the range of every fp32 activation of a forward
 * run into the plan; npu_plan_quantize then builds the int8 graph:
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

#include "graph_priv.h"

/* Tensors a forward op reads or writes (activations only). */
static void op_acts(const struct op *o, int *a, int *b)
{
	*a = o->in;
	*b = o->kind == OP_XENT ? -1 : o->out;
}

/*
 * An fp32's bits as an unsigned key in the same order as the values, so the
 * scan below compares integers: on an emulated CPU (as in the VM) float
 * comparisons are far slower than integer ones.
 */
static uint32_t order_key(uint32_t bits)
{
	return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

/* Widen [*lo, *hi] to hold the @n values at @f, NaNs skipped. */
static void fold_range(const float *f, size_t n, float *lo, float *hi)
{
	uint32_t kmin = UINT32_MAX, kmax = 0, bits;

	for (size_t e = 0; e < n; e++) {
		uint32_t key;

		memcpy(&bits, &f[e], sizeof(bits));
		if ((bits & 0x7fffffffu) > 0x7f800000u)
			continue;	/* NaN */
		key = order_key(bits);
		kmin = key < kmin ? key : kmin;
		kmax = key > kmax ? key : kmax;
	}
	if (kmin > kmax)
		return;		/* nothing but NaN */
	for (int end = 0; end < 2; end++) {
		uint32_t key = end ? kmax : kmin;
		float v;

		bits = key & 0x80000000u ? key & 0x7fffffffu : ~key;
		memcpy(&v, &bits, sizeof(v));
		if (end ? v > *hi : v < *lo)
			*(end ? hi : lo) = v;
	}
}

int npu_plan_observe(npu_plan *p)
{
	npu_graph *g;
	int err;

	if (!p)
		return NPU_EINVAL;
	g = p->g;
	if (!p->lo) {
		/* Both or neither: a later call must not find one without the other. */
		float *lo = malloc(sizeof(float) * (size_t)g->nt);
		float *hi = malloc(sizeof(float) * (size_t)g->nt);

		if (!lo || !hi) {
			free(lo);
			free(hi);
			return NPU_ENOMEM;
		}
		for (int i = 0; i < g->nt; i++) {
			lo[i] = INFINITY;
			hi[i] = -INFINITY;
		}
		p->lo = lo;
		p->hi = hi;
	}
	for (int i = 0; i < g->nops; i++) {
		const struct op *o = &g->ops[i];
		int ids[2];

		if (o->backward)
			continue;
		op_acts(o, &ids[0], &ids[1]);
		for (int k = 0; k < 2; k++) {
			const struct tensor *t;
			const float *f;

			if (ids[k] < 0 || g->t[ids[k]].d.dtype != NPU_DT_FLOAT32 ||
			    g->t[ids[k]].cdata)
				continue;
			t = &g->t[ids[k]];
			err = graph_sync_host(p, ids[k]);
			if (err)
				return err;
			f = t->host;
			fold_range(f, t->bytes / 4, &p->lo[ids[k]], &p->hi[ids[k]]);
		}
	}
	p->observed = 1;
	return 0;
}

/* An int8 activation like fp32 tensor @id, quantized over its observed range. */
static int act_tensor(const npu_plan *p, npu_graph *q, int id)
{
	const struct tensor *t = &p->g->t[id];
	struct npu_tensor_desc d = t->d;
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
static int quant_weights(const npu_graph *g, const struct op *o, npu_graph *q, float in_scale,
			 int *w_id, int *b_id)
{
	const struct tensor *w = &g->t[o->in2];
	uint32_t oc = w->d.dims[0];
	size_t per = w->bytes / 4 / oc;
	const float *wf = w->host;
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
		if (o->bias >= 0) {
			double b = round(((const float *)g->t[o->bias].host)[c] /
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
		*b_id = o->bias >= 0 ? npu_graph_tensor(q, &db) : -1;
		if (*w_id < 0 || (o->bias >= 0 && *b_id < 0))
			err = *w_id < 0 ? *w_id : *b_id;
	}
out:
	free(wq);
	free(scales);
	free(bq);
	return err;
}

/* The int8 twin of forward op @o; map[] takes fp32 tensors to int8 ones. */
static int quantize_op(const npu_plan *p, const struct op *o, npu_graph *q, int *map)
{
	const npu_graph *g = p->g;
	int in = map[o->in], out, w, b, err;

	if (o->kind == OP_XENT)
		return 0;	/* training only */
	if (in < 0)
		return NPU_EINVAL;	/* not reached from the input */
	switch (o->kind) {
	case OP_FC_F32:
	case OP_CONV_F32:
		out = act_tensor(p, q, o->out);
		if (out < 0)
			return out;
		err = quant_weights(g, o, q, q->t[in].d.scale, &w, &b);
		if (err)
			return err;
		err = o->kind == OP_FC_F32 ?
			npu_graph_fully_connected(q, in, w, b, out, o->act) :
			npu_graph_conv2d(q, in, w, b, out, o->stride, o->pad, 0, o->act);
		break;
	case OP_POOL_F32:
		out = same_quant_tensor(q, in, &g->t[o->out].d);
		err = out < 0 ? out : npu_graph_pool(q, in, out, o->k, o->stride, o->average);
		break;
	case OP_RESHAPE:
		out = same_quant_tensor(q, in, &g->t[o->out].d);
		err = out < 0 ? out : npu_graph_reshape(q, in, out);
		break;
	default:
		return NPU_EINVAL;	/* no int8 form (a ReLU not fused into a layer) */
	}
	if (!err)
		map[o->out] = out;
	return err;
}

int npu_plan_quantize(const npu_plan *p, int in, int out, npu_graph **qg, int *q_in, int *q_out)
{
	const npu_graph *g;
	npu_graph *q;
	int *map, fin, fout, qin, err = 0;

	if (!p || !qg || !q_in || !q_out || !p->observed)
		return NPU_EINVAL;
	g = p->g;
	if (!graph_act_of(g, in, NPU_DT_FLOAT32) || !graph_act_of(g, out, NPU_DT_FLOAT32))
		return NPU_EINVAL;
	/* The trained weights, wherever they were last written (not a change to the plan). */
	for (int i = 0; i < g->nt; i++) {
		err = graph_sync_host((npu_plan *)p, i);
		if (err)
			return err;
	}
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
	for (int i = 0; i < g->nops && !err; i++)
		if (!g->ops[i].backward)
			err = quantize_op(p, &g->ops[i], q, map);
	if (!err && map[out] < 0)
		err = NPU_EINVAL;	/* out is not computed from in */
	if (err)
		goto fail;
	fout = npu_graph_tensor(q, &g->t[out].d);	/* and fp32 out */
	err = fout < 0 ? fout : npu_graph_dequantize(q, map[out], fout);
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
