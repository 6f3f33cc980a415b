// SPDX-License-Identifier: MIT
/*
 * qdq.c - QDQ folding (qdq.h). The pattern, as ONNX's quantizers write it:
 *
 *   x_q --dequantize--> x --conv2d or fully_connected--> y --quantize--> y_q
 *                          w = dequantize(w_q), b = dequantize(b_q)
 *
 * where x and y feed nothing else, w_q is int8 with zero point 0 (per
 * tensor, or per output channel along dimension 0), and b_q is int32 at
 * the scale x_q's scale times w_q's (per channel). A ReLU between the op
 * and the quantize is fused too (the int8 op's clamp). The float op then
 * runs as the int8 op on x_q, w_q, b_q into y_q, with y_q's quantization:
 * the arithmetic the quantized model means, without ever making x or y.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_quant.h"
#include "passes/qdq.h"

/* The constant's per-channel scale @c (or its one scale). */
static double scale_of(const struct ir_tensor *t, uint32_t c)
{
	return t->cscales ? t->cscales[c] : t->d.scale;
}

/* Int8 weights, symmetric, per tensor or per output channel (dimension 0). */
static int weights_ok(const npu_graph *g, int w)
{
	const struct ir_tensor *t;

	if (w < 0 || !g->t[w].cdata || g->t[w].qsrc < 0)
		return 0;
	t = &g->t[g->t[w].qsrc];
	return t->d.dtype == NPU_DT_INT8 && t->d.zero_point == 0 &&
	       (!t->cscales || t->d.quant_dim == 0);
}

/* Every channel's requantization (x * w[c] / y) representable: else no folding. */
static int multipliers_ok(const struct ir_tensor *wq, double sx, double sy)
{
	uint32_t n = wq->cscales ? wq->d.dims[0] : 1;

	for (uint32_t c = 0; c < n; c++) {
		double sw = scale_of(wq, c);
		int32_t m;
		int sh;

		if (!(sw > 0) || !isfinite(sw) ||
		    npu_quantize_multiplier(sx * sw / sy, &m, &sh))
			return 0;
	}
	return 1;
}

/* Whether a node strictly between @from and @to writes @t (or, with @reads, touches it). */
static int touched(const npu_graph *g, int from, int to, int t, int reads)
{
	for (int k = from + 1; k < to; k++) {
		const struct ir_node *n = &g->n[k];

		for (uint32_t j = 0; j < n->nout; j++)
			if (n->out[j] >= 0 && ir_root(g, n->out[j]) == ir_root(g, t))
				return 1;
		for (uint32_t j = 0; reads && j < n->nin; j++)
			if (n->in[j] >= 0 && ir_root(g, n->in[j]) == ir_root(g, t))
				return 1;
	}
	return 0;
}

static int same_shape(const npu_graph *g, int a, int b)
{
	return g->t[a].d.rank == g->t[b].d.rank &&
	       !memcmp(g->t[a].d.dims, g->t[b].d.dims, sizeof(uint32_t) * g->t[a].d.rank);
}

/* An int32 bias at the input's scale times the weights', channel by channel. */
static int bias_ok(const npu_graph *g, int b, double sx, const struct ir_tensor *wq,
		   uint32_t channels)
{
	const struct ir_tensor *t;

	if (b < 0)
		return 1;
	if (!g->t[b].cdata || g->t[b].qsrc < 0)
		return 0;
	t = &g->t[g->t[b].qsrc];
	if (t->d.dtype != NPU_DT_INT32 || t->d.zero_point != 0 || ir_count(g, g->t[b].qsrc) != channels ||
	    (t->cscales && t->d.dims[t->d.quant_dim] != channels))
		return 0;
	for (uint32_t c = 0; c < channels; c++) {
		double want = sx * scale_of(wq, wq->cscales ? c : 0);
		double got = scale_of(t, t->cscales ? c : 0);

		if (!(fabs(got - want) <= 1e-6 * want))
			return 0;
	}
	return 1;
}

int qdq_find(const npu_graph *g, const unsigned char *dead, struct qdq_node *q)
{
	int *uses = calloc((size_t)g->nt + 1, sizeof(int)), *producer, *consumer, count = 0;

	producer = malloc(sizeof(int) * ((size_t)g->nt + 1));
	consumer = malloc(sizeof(int) * ((size_t)g->nt + 1));
	for (int i = 0; i < g->nn; i++)
		q[i] = (struct qdq_node){ QDQ_NONE, -1, -1, -1, -1, -1, NPU_ACT_NONE, -1 };
	if (!uses || !producer || !consumer)
		goto out;	/* no folding: the graph runs as it is */
	for (int t = 0; t < g->nt; t++)
		producer[t] = consumer[t] = -1;
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];

		for (uint32_t k = 0; k < n->nin && !(dead && dead[i]); k++)
			if (n->in[k] >= 0) {
				uses[n->in[k]]++;
				consumer[n->in[k]] = i;
			}
		for (uint32_t k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				producer[n->out[k]] = i;
	}
	for (int i = 0; i < g->nn; i++) {
		const struct ir_node *n = &g->n[i];
		int x, y, d, qn, w, b, relu = -1, r = -1;
		const struct ir_tensor *wq;
		uint32_t channels;

		if ((n->op != IR_CONV2D && n->op != IR_FC) || n->backward ||
		    g->t[n->in[0]].d.dtype != NPU_DT_FLOAT32)
			continue;
		x = n->in[0];
		y = n->out[0];
		w = n->in[1];
		b = n->in[2];
		d = producer[x];
		qn = consumer[y];
		/* A ReLU of its own between the op and the quantize: fused as the clamp. */
		if (qn >= 0 && g->n[qn].op == IR_RELU && n->a.act == NPU_ACT_NONE && uses[y] == 1 &&
		    same_shape(g, y, g->n[qn].out[0])) {
			relu = qn;
			r = g->n[relu].out[0];
			qn = uses[r] == 1 && !ir_declared(g, r, 2) ? consumer[r] : -1;
		}
		if (d < 0 || g->n[d].op != IR_DEQUANTIZE || uses[x] != 1 || qn < 0 ||
		    g->n[qn].op != IR_QUANTIZE || uses[y] != 1 || g->t[x].alias >= 0 ||
		    g->t[y].alias >= 0 || ir_declared(g, x, 3) || ir_declared(g, y, 2) ||
		    q[d].role != QDQ_NONE || q[qn].role != QDQ_NONE || !weights_ok(g, w) ||
		    (relu >= 0 && (q[relu].role != QDQ_NONE || g->t[r].alias >= 0)))
			continue;
		wq = &g->t[g->t[w].qsrc];
		channels = wq->d.dims[0];
		/*
		 * The int8 op reads x_q where the dequantize did and writes y_q where
		 * the quantize did: nothing in between may change x_q or see y_q.
		 */
		if (!(d < i && i < qn) || (relu >= 0 && !(i < relu && relu < qn)) ||
		    touched(g, d, i, g->n[d].in[0], 0) || touched(g, i, qn, g->n[qn].out[0], 1) ||
		    !bias_ok(g, b, g->t[g->n[d].in[0]].d.scale, wq, channels) ||
		    !multipliers_ok(wq, g->t[g->n[d].in[0]].d.scale, g->t[g->n[qn].out[0]].d.scale))
			continue;
		q[d] = (struct qdq_node){ QDQ_FUSED, i, -1, -1, -1, -1, NPU_ACT_NONE, -1 };
		q[qn] = q[d];
		if (relu >= 0)
			q[relu] = q[d];
		q[i] = (struct qdq_node){ QDQ_OP, -1, g->n[d].in[0], g->t[w].qsrc,
					  b >= 0 ? g->t[b].qsrc : -1, g->n[qn].out[0],
					  relu >= 0 ? NPU_ACT_RELU : n->a.act, r };
		count++;
	}
out:
	free(uses);
	free(producer);
	free(consumer);
	return count;
}
