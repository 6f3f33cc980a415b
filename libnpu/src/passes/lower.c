// SPDX-License-Identifier: MIT
/*
 * lower.c - nodes into kernels (lower.h). Int8 nodes take their command
 * parameters from their tensors' quantization as TFLite does
 * (QuantizeMultiplier of in * w / out, activation ranges from the output's
 * scale and zero point); fp32 nodes become training commands; a gradient
 * written to a temporary (its tensor feeds several ops) is added into the
 * gradient it belongs to.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_quant.h"
#include "passes/lower.h"
#include "ir/kern_params.h"

/* ---- building kernels ------------------------------------------------------ */

#define MAX_KERNS 8

static struct kern *kern(struct lnode *l, enum kern_kind kind, int nt, const int *t)
{
	struct kern *k = &l->k[l->nk++];

	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->nt = nt;
	for (int i = 0; i < KERN_MAX_T; i++)
		k->t[i] = i < nt ? t[i] : -1;
	return k;
}

#define KERN(l, kind, ...) \
	kern((l), (kind), (int)(sizeof((int[]){ __VA_ARGS__ }) / sizeof(int)), (int[]){ __VA_ARGS__ })

static const struct npu_tensor_desc *D(const npu_graph *g, int id)
{
	return &g->t[id].d;
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

/*
 * Per-channel multipliers for in * w[c] / out; one for per-tensor weights.
 * ONNX's requantization: the fp32 product in * w, divided by out in fp32,
 * its bits in mult and a shift of 0 (onnxruntime's QLinearConv).
 */
static int channel_quant(npu_graph *g, struct lnode *l, int in, int w, int out,
			 uint32_t channels, uint32_t requant)
{
	const struct ir_tensor *wt = &g->t[w];
	uint32_t n = wt->cscales ? channels : 1;

	if (wt->cscales && wt->d.dims[wt->d.quant_dim] != channels)
		return ir_fail(g, NPU_EINVAL, "tensor %d: %u per-channel scales along dimension %u "
			       "for %u output channels", w, wt->d.dims[wt->d.quant_dim],
			       wt->d.quant_dim, channels);
	l->mult = calloc(n, sizeof(int32_t));
	l->shift = calloc(n, sizeof(int32_t));
	if (!l->mult || !l->shift)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	for (uint32_t c = 0; c < n; c++) {
		double ws = wt->cscales ? wt->cscales[c] : wt->d.scale;
		int sh;

		if (requant == NPU_REQUANT_ONNX) {
			float m = D(g, in)->scale * (float)ws / D(g, out)->scale;

			l->mult[c] = npu_f32_bits(m);
			if (!(ws > 0) || !npu_onnx_mult_valid(l->mult[c]))
				return ir_fail(g, NPU_EINVAL, "tensor %d: weight scale %g of channel "
					       "%u gives no fp32 multiplier", w, ws, c);
			continue;
		}
		if (!(ws > 0) || npu_quantize_multiplier((double)D(g, in)->scale * ws /
							 D(g, out)->scale, &l->mult[c], &sh))
			return ir_fail(g, NPU_EINVAL, "tensor %d: weight scale %g of channel %u "
				       "gives no requantization multiplier", w, ws, c);
		l->shift[c] = sh;
	}
	return (int)n;
}

static int lower_conv_i8(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	int x = n->in[0], w = n->in[1], y = n->out[0];
	const struct npu_tensor_desc *in = D(g, x), *f = D(g, w), *out = D(g, y);
	int32_t lo, hi;
	int nq = channel_quant(g, l, x, w, y, out->dims[3], n->a.requant);
	struct kern *k;

	if (nq < 0)
		return nq;
	act_range(n->a.act, out, &lo, &hi);
	k = KERN(l, K_CONV_I8, x, w, n->in[2], y);
	k->p.conv = (struct npu_conv2d_i8){
		.batch = in->dims[0], .in_h = in->dims[1], .in_w = in->dims[2],
		.in_c = in->dims[3], .out_h = out->dims[1], .out_w = out->dims[2],
		.out_c = out->dims[3], .k_h = f->dims[1], .k_w = f->dims[2],
		.stride_h = n->a.stride[0], .stride_w = n->a.stride[1],
		.dil_h = n->a.dilation[0], .dil_w = n->a.dilation[1],
		.pad_top = n->a.pad[0], .pad_left = n->a.pad[1],
		.in_zero = in->zero_point, .out_zero = out->zero_point, .act_min = lo,
		.act_max = hi, .per_tensor = nq == 1, .depthwise = n->a.depthwise,
		.groups = n->a.groups > 1 ? n->a.groups : 0, .requant = n->a.requant,
	};
	k->mult = l->mult;
	k->shift = l->shift;
	k->nq = (uint32_t)nq;
	return 0;
}

static int lower_fc_i8(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	int x = n->in[0], w = n->in[1], y = n->out[0];
	const struct npu_tensor_desc *wd = D(g, w), *out = D(g, y);
	int32_t lo, hi;
	int nq = channel_quant(g, l, x, w, y, wd->dims[0], n->a.requant);
	struct kern *k;

	if (nq < 0)
		return nq;
	act_range(n->a.act, out, &lo, &hi);
	k = KERN(l, K_GEMM_I8, x, w, n->in[2], y);
	k->p.gemm = (struct npu_gemm_i8){
		.m = out->dims[0], .n = wd->dims[0], .k = wd->dims[1],
		.a_zero = D(g, x)->zero_point, .out_zero = out->zero_point, .act_min = lo,
		.act_max = hi, .per_tensor = nq == 1, .requant = n->a.requant,
	};
	k->mult = l->mult;
	k->shift = l->shift;
	k->nq = (uint32_t)nq;
	return 0;
}

static int lower_add_i8(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	const struct npu_tensor_desc *a = D(g, n->in[0]), *b = D(g, n->in[1]), *y = D(g, n->out[0]);
	struct npu_eltwise_i8 *e = &KERN(l, K_ELT_I8, n->in[0], n->in[1], n->out[0])->p.elt;
	double twice_max = 2.0 * fmax(a->scale, b->scale);
	int sa, sb, so;

	e->count = (uint32_t)g->t[n->out[0]].bytes;
	e->a_zero = a->zero_point;
	e->b_zero = b->zero_point;
	e->out_zero = y->zero_point;
	act_range(n->a.act, y, &e->act_min, &e->act_max);
	if (g->t[n->in[0]].bytes != e->count || g->t[n->in[1]].bytes != e->count ||
	    a->rank != y->rank || b->rank != y->rank) {
		/* Broadcasting: both inputs at the output's rank, 1s in front. */
		e->rank = y->rank;
		for (uint32_t d = 0; d < y->rank; d++) {
			e->out_dims[d] = y->dims[d];
			e->a_dims[d] = d + a->rank >= y->rank ? a->dims[d + a->rank - y->rank] : 1;
			e->b_dims[d] = d + b->rank >= y->rank ? b->dims[d + b->rank - y->rank] : 1;
		}
	}
	if (n->a.requant == NPU_REQUANT_ORT && n->op == IR_ADD) {
		/* onnxruntime's QLinearAdd: its fp32 ratios and fixed part, worked out as it does */
		float rac = a->scale / y->scale, rbc = b->scale / y->scale;
		int32_t off = n->a.offset;
		float za = (float)(a->zero_point + off), zb = (float)(b->zero_point + off);
		float zc = (float)(y->zero_point + off);

		e->requant = NPU_REQUANT_ORT;
		e->a_mult = npu_f32_bits(rac);
		e->b_mult = npu_f32_bits(rbc);
		e->a_shift = off;
		/* a one value per span in the model's shapes (whatever the layout): swapped */
		e->b_shift = n->a.ort_swap ? 2 : 0;
		/* the fixed part, contracted as onnxruntime's build does (npu_quant.h) */
		e->out_mult = npu_f32_bits(e->b_shift == 2 ? zc - fmaf(rbc, zb, rac * za) :
					   zc - fmaf(rac, za, rbc * zb));
		e->left_shift = 0;
		if (!npu_eltwise_i8_valid(e))
			return ir_fail(g, NPU_EINVAL, "add: the scales give no onnxruntime "
				       "arithmetic");
		return 0;
	}
	if (n->a.requant == NPU_REQUANT_ONNX) {	/* ONNX's: the three fp32 scales */
		e->requant = NPU_REQUANT_ONNX;
		e->mul = n->op == IR_MUL;
		e->a_mult = npu_f32_bits(a->scale);
		e->b_mult = npu_f32_bits(b->scale);
		e->out_mult = npu_f32_bits(y->scale);
		return 0;
	}
	if (n->op == IR_MUL) {	/* TFLite Mul: x * y, requantized by in_a * in_b / out */
		int so;

		e->mul = 1;
		if (npu_quantize_multiplier((double)a->scale * b->scale / y->scale, &e->out_mult,
					    &so))
			return ir_fail(g, NPU_EINVAL, "mul: the scales give no requantization "
				       "multiplier");
		e->out_shift = so;
		return 0;
	}
	e->left_shift = 20;
	if (npu_quantize_multiplier(a->scale / twice_max, &e->a_mult, &sa) ||
	    npu_quantize_multiplier(b->scale / twice_max, &e->b_mult, &sb) ||
	    npu_quantize_multiplier(twice_max / ((1 << 20) * (double)y->scale), &e->out_mult, &so))
		return ir_fail(g, NPU_EINVAL, "add: the scales give no requantization multiplier");
	e->a_shift = sa;
	e->b_shift = sb;
	e->out_shift = so;
	return 0;
}

static int lower_i8(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	int x = n->in[0], y = n->out[0];
	const struct npu_tensor_desc *in = D(g, x);
	struct kern *k;

	switch (n->op) {
	case IR_POOL:
		KERN(l, K_POOL_I8, x, y)->p.pool = (struct npu_pool_i8){
			in->dims[0], in->dims[1], in->dims[2], in->dims[3],
			D(g, y)->dims[1], D(g, y)->dims[2], n->a.kernel[0], n->a.kernel[1],
			n->a.stride[0], n->a.stride[1], n->a.pad[0], n->a.pad[1], -128, 127,
			n->a.average,
		};
		return 0;
	case IR_SOFTMAX:	/* over the last dimension */
		k = KERN(l, K_SOFTMAX_I8, x, y);
		k->p.sm.depth = in->dims[in->rank - 1];
		k->p.sm.rows = (uint32_t)(g->t[x].bytes / k->p.sm.depth);
		if (npu_softmax_params(in->scale, n->a.beta, &k->p.sm))
			return ir_fail(g, NPU_EINVAL, "softmax: input scale %g and beta %g give no "
				       "parameters", in->scale, n->a.beta);
		return 0;
	case IR_PAD:
		k = KERN(l, K_PAD, x, y);
		k->p.pad = (struct npu_pad){ .rank = in->rank, .value = in->zero_point };
		memcpy(k->p.pad.dims, in->dims, sizeof(uint32_t) * in->rank);
		memcpy(k->p.pad.before, n->a.before, sizeof(uint32_t) * in->rank);
		memcpy(k->p.pad.after, n->a.after, sizeof(uint32_t) * in->rank);
		return 0;
	case IR_TRANSPOSE:
		k = KERN(l, K_TRANSPOSE, x, y);
		k->p.tr = (struct npu_transpose){ .rank = in->rank,
						  .elem_size = (uint32_t)ir_elem_size(in->dtype) };
		memcpy(k->p.tr.dims, in->dims, sizeof(uint32_t) * in->rank);
		memcpy(k->p.tr.perm, n->a.perm, sizeof(uint32_t) * in->rank);
		return 0;
	case IR_QUANTIZE:
	case IR_DEQUANTIZE: {
		int deq = n->op == IR_DEQUANTIZE;	/* the int8 side's quantization */
		const struct npu_tensor_desc *q = deq ? in : D(g, y);

		KERN(l, K_QUANTIZE, x, y)->p.q = (struct npu_quantize){
			.count = (uint32_t)ir_count(g, y), .dequantize = deq, .scale = q->scale,
			.zero_point = q->zero_point };
		return 0;
	}
	case IR_CONCAT: {
		const struct npu_tensor_desc *o = D(g, y);

		l->axis_dims = malloc(sizeof(uint32_t) * n->nin);
		if (!l->axis_dims)
			return ir_fail(g, NPU_ENOMEM, "out of memory");
		k = kern(l, K_CONCAT, (int)n->nin, n->in);
		k->t[n->nin] = y;
		k->nt = (int)n->nin + 1;
		for (uint32_t i = 0; i < n->nin; i++)
			l->axis_dims[i] = D(g, n->in[i])->dims[n->a.axis];
		k->p.cat = (struct npu_concat){ .rank = o->rank,
						.elem_size = (uint32_t)ir_elem_size(o->dtype),
						.axis = n->a.axis,
						.count = n->nin, .axis_dims = l->axis_dims };
		for (uint32_t d = 0; d < o->rank; d++)
			k->p.cat.dims[d] = d == n->a.axis ? 0 : o->dims[d];
		return 0;
	}
	default:
		return ir_fail(g, NPU_EINVAL, "%s: no int8 lowering", ir_node_label(g, n));
	}
}

/* ---- fp32 ------------------------------------------------------------------ */

static void elt(struct lnode *l, enum npu_eltwise_f32_op op, int a, int b, int out,
		uint64_t count, uint32_t cols)
{
	KERN(l, K_ELT_F32, a, b, out)->p.felt =
		(struct npu_eltwise_f32){ (uint32_t)count, op, cols, 0.0f };
}

static void gemm(struct lnode *l, int a, int b, int c, uint32_t m, uint32_t n, uint32_t k,
		 int ta, int tb)
{
	KERN(l, K_GEMM_F32, a, b, c)->p.fgemm = (struct npu_gemm_f32){ m, n, k, ta, tb, 0, 1.0f,
								       0.0f };
}

static struct npu_conv2d_f32 conv_params(const npu_graph *g, const struct ir_node *n)
{
	const struct npu_tensor_desc *i = D(g, n->in[0]), *f = D(g, n->in[1]);
	const struct npu_tensor_desc *y = D(g, n->op == IR_CONV2D ? n->out[0] : n->in[3]);

	return (struct npu_conv2d_f32){
		i->dims[0], i->dims[1], i->dims[2], i->dims[3], y->dims[1], y->dims[2], y->dims[3],
		f->dims[1], f->dims[2], n->a.stride[0], n->a.stride[1], 1, 1, n->a.pad[0],
		n->a.pad[1], 0, n->a.groups,
	};
}

static void conv(struct lnode *l, const struct npu_conv2d_f32 *p, enum npu_conv_pass pass,
		 int x, int w, int y)
{
	struct kern *k = KERN(l, K_CONV_F32, x, w, y);

	k->p.fconv.p = *p;
	k->p.fconv.pass = pass;
}

static void pool(const npu_graph *g, const struct ir_node *n, struct lnode *l,
		 enum npu_pool_f32_mode mode, int x, int y, int dx)
{
	const struct npu_tensor_desc *i = D(g, n->in[0]);
	const struct npu_tensor_desc *o = D(g, n->op == IR_POOL ? n->out[0] : n->in[1]);

	KERN(l, K_POOL_F32, x, y, dx)->p.fpool = (struct npu_pool_f32){
		i->dims[0], i->dims[1], i->dims[2], i->dims[3], o->dims[1], o->dims[2],
		n->a.kernel[0], n->a.kernel[1], n->a.stride[0], n->a.stride[1], mode };
}

static int lower_f32(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	int fc = n->op == IR_FC || n->op == IR_FC_GRAD;
	int layer = fc || n->op == IR_CONV2D || n->op == IR_CONV2D_GRAD;
	/* The layer's output y: the node's, or (a gradient) its input 3. */
	int y = n->op == IR_FC_GRAD || n->op == IR_CONV2D_GRAD ? n->in[3] : n->out[0];
	uint64_t n_out = layer ? ir_count(g, y) : 0;
	uint32_t cols = !layer ? 0 : fc ? D(g, y)->dims[1] : D(g, y)->dims[3];
	uint32_t rows = cols ? (uint32_t)(n_out / cols) : 0;
	uint32_t k = fc ? D(g, n->in[1])->dims[1] : 0;
	int relu = n->a.act == NPU_ACT_RELU;
	struct npu_conv2d_f32 cp;
	struct kern *kp;

	switch (n->op) {
	case IR_FC:		/* out = in w^T (+ b) (ReLU) */
		gemm(l, n->in[0], n->in[1], y, rows, cols, k, 0, 1);
		break;
	case IR_CONV2D:
		cp = conv_params(g, n);
		conv(l, &cp, NPU_CONV_FORWARD, n->in[0], n->in[1], y);
		break;
	case IR_POOL:
		pool(g, n, l, n->a.average ? NPU_FPOOL_AVG : NPU_FPOOL_MAX, n->in[0], n->out[0], -1);
		return 0;
	case IR_RELU:
		elt(l, NPU_EF_RELU, n->in[0], -1, n->out[0], ir_count(g, n->out[0]), 0);
		return 0;
	case IR_XENT: {
		uint32_t r = D(g, n->in[0])->dims[0];

		kp = KERN(l, K_XENT_F32, n->in[0], n->in[1], n->out[0], n->out[1]);
		kp->p.xent = (struct npu_xent_f32){ r, D(g, n->in[0])->dims[1], 1.0f / (float)r };
		return 0;
	}
	case IR_OPTIM:
		KERN(l, K_OPTIM_F32, n->in[0], n->in[1], n->in[2], n->in[3])->p.opt = n->a.opt;
		return 0;
	case IR_FC_GRAD:
	case IR_CONV2D_GRAD: {
		int dy = n->in[4], dx = n->out[0], dw = n->out[1], db = n->out[2];

		if (relu)	/* through the ReLU first: y > 0 exactly where x > 0 */
			elt(l, NPU_EF_RELU_BACKWARD, y, dy, dy, n_out, 0);
		if (fc) {
			if (dw >= 0)		/* dw = dy^T x */
				gemm(l, dy, n->in[0], dw, cols, k, rows, 1, 0);
			if (dx >= 0)		/* dx = dy w */
				gemm(l, dy, n->in[1], dx, rows, k, cols, 0, 0);
		} else {
			cp = conv_params(g, n);
			if (dw >= 0)
				conv(l, &cp, NPU_CONV_BACKWARD_FILTER, n->in[0], dw, dy);
			if (dx >= 0)
				conv(l, &cp, NPU_CONV_BACKWARD_DATA, dx, n->in[1], dy);
		}
		if (db >= 0) {		/* db = sum over rows of dy */
			kp = KERN(l, K_REDUCE_F32, dy, db);
			kp->p.red = (struct npu_reduce_f32){ rows, cols, 0, 0 };
		}
		break;
	}
	case IR_POOL_GRAD:
		pool(g, n, l, n->a.average ? NPU_FPOOL_AVG_BACKWARD : NPU_FPOOL_MAX_BACKWARD,
		     n->in[0], n->in[2], n->out[0]);
		break;
	case IR_RELU_GRAD:
		elt(l, NPU_EF_RELU_BACKWARD, n->in[1], n->in[2], n->out[0], ir_count(g, n->in[0]), 0);
		break;
	default:
		return ir_fail(g, NPU_EINVAL, "%s: no fp32 lowering", ir_node_label(g, n));
	}
	if (n->op == IR_FC || n->op == IR_CONV2D) {
		if (n->in[2] >= 0)
			elt(l, NPU_EF_BIAS, y, n->in[2], y, n_out, cols);
		if (relu)
			elt(l, NPU_EF_RELU, y, -1, y, n_out, 0);
		return 0;
	}
	/* Gradients that went to temporaries are added where they belong. */
	for (uint32_t i = 0; i < n->nout; i++)
		if (n->a.acc[i] >= 0 && n->out[i] >= 0)
			elt(l, NPU_EF_ADD, n->a.acc[i], n->out[i], n->a.acc[i],
			    ir_count(g, n->a.acc[i]), 0);
	return 0;
}

/*
 * An N-dimensional op: one kernel, its parameters the node's (kern_of_nd);
 * a gradient that went to a temporary is then added where it belongs.
 */
static int lower_nd(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	struct kern *k = &l->k[l->nk];
	int err = kern_of_nd(n, k);

	if (err)
		return err;
	l->nk++;
	for (uint32_t i = 0; n->backward && i < n->nout; i++)
		if (n->a.acc[i] >= 0 && n->out[i] >= 0)
			elt(l, NPU_EF_ADD, n->a.acc[i], n->out[i], n->a.acc[i],
			    ir_count(g, n->a.acc[i]), 0);
	return 0;
}

static int lower_node(npu_graph *g, const struct ir_node *n, struct lnode *l)
{
	l->k = calloc(MAX_KERNS, sizeof(*l->k));
	if (!l->k)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	if (ir_op_is_nd(n->op))
		return lower_nd(g, n, l);
	switch (n->op) {
	case IR_KERNEL:		/* one kernel already: as it is */
		l->k[l->nk++] = n->a.kn->k;
		return 0;
	case IR_RESHAPE:	/* a view: nothing runs */
	case IR_CUSTOM:		/* the backend that claims it runs it whole */
		return 0;
	case IR_CONV2D:
		return g->t[n->in[0]].d.dtype == NPU_DT_FLOAT32 ? lower_f32(g, n, l) :
								  lower_conv_i8(g, n, l);
	case IR_FC:
		return g->t[n->in[0]].d.dtype == NPU_DT_FLOAT32 ? lower_f32(g, n, l) :
								  lower_fc_i8(g, n, l);
	case IR_POOL:
		return g->t[n->in[0]].d.dtype == NPU_DT_FLOAT32 ? lower_f32(g, n, l) :
								  lower_i8(g, n, l);
	case IR_ADD:
	case IR_MUL:
		return lower_add_i8(g, n, l);
	case IR_SOFTMAX:
	case IR_PAD:
	case IR_TRANSPOSE:
	case IR_QUANTIZE:
	case IR_DEQUANTIZE:
	case IR_CONCAT:
		return lower_i8(g, n, l);
	case IR_RELU:
	case IR_XENT:
	case IR_CONV2D_GRAD:
	case IR_FC_GRAD:
	case IR_POOL_GRAD:
	case IR_RELU_GRAD:
	case IR_OPTIM:
		return lower_f32(g, n, l);
	default:	/* the N-d ops, above */
		break;
	}
	return ir_fail(g, NPU_EINVAL, "node op %d has no lowering", (int)n->op);
}

/* A float op that QDQ folding runs as int8, on the int8 tensors around it. */
static int lower_qdq(npu_graph *g, const struct ir_node *n, const struct qdq_node *q,
		     struct lnode *l)
{
	struct ir_node i8 = *n;

	l->k = calloc(MAX_KERNS, sizeof(*l->k));
	if (!l->k)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	i8.in[0] = q->x;
	i8.in[1] = q->w;
	i8.in[2] = q->b;
	i8.out[0] = q->y;
	i8.a.act = q->act;
	return n->op == IR_FC ? lower_fc_i8(g, &i8, l) : lower_conv_i8(g, &i8, l);
}

int lower_graph(npu_graph *g, const struct qdq_node *q, struct lowered *l)
{
	l->nn = g->nn;
	l->n = calloc((size_t)g->nn + 1, sizeof(*l->n));
	if (!l->n)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	for (int i = 0; i < g->nn; i++) {
		int err;

		if (q && q[i].role == QDQ_FUSED)
			continue;	/* runs inside the int8 op: no kernels */
		err = q && q[i].role == QDQ_OP ? lower_qdq(g, &g->n[i], &q[i], &l->n[i]) :
						 lower_node(g, &g->n[i], &l->n[i]);
		if (err)
			return err;
	}
	return 0;
}

static int in_place(const struct kern *k, enum npu_eltwise_f32_op op, int dst)
{
	return k->kind == K_ELT_F32 && k->p.felt.op == op && k->t[0] == dst && k->t[2] == dst;
}

int lower_epilogue(const struct lnode *l, int s, int dst, int *bias, int *relu)
{
	int i = s;

	*bias = -1;
	*relu = 0;
	if (i < l->nk && in_place(&l->k[i], NPU_EF_BIAS, dst))
		*bias = l->k[i++].t[1];
	if (i < l->nk && in_place(&l->k[i], NPU_EF_RELU, dst)) {
		*relu = 1;
		i++;
	}
	return i - s;
}

int lower_conv_forward(const struct kern *k)
{
	return k->kind == K_CONV_F32 && k->p.fconv.pass == NPU_CONV_FORWARD;
}

int lower_binary_f32(const struct kern *k)
{
	return k->kind == K_ND_BINARY && nd_binary_arith_f32(&k->p.bin);
}

/*
 * The output of node @l when its last kernel can take a ReLU after it: an
 * fp32 forward convolution (its bias with it, no ReLU of its own) or, with
 * @binary, an fp32 arithmetic op; -1 otherwise.
 */
static int relu_taker(const struct lnode *l, int binary)
{
	int bias, relu;

	if (binary && l->nk == 1 && lower_binary_f32(&l->k[0]))
		return l->k[0].t[2];
	if (!l->nk || !lower_conv_forward(&l->k[0]) ||
	    1 + lower_epilogue(l, 1, l->k[0].t[2], &bias, &relu) != l->nk || relu)
		return -1;
	return l->k[0].t[2];
}

int lower_act_out(const struct kern *k)
{
	return k->kind == K_ELT_F32 ? k->t[2] : k->t[1];
}

/* Kernel @k as an activation of fp32 @y into another tensor: enum lower_act, or 0. */
static int act_of(const struct kern *k, int y)
{
	const struct nd_unary *u = &k->p.un;

	if (k->kind == K_ELT_F32 && k->p.felt.op == NPU_EF_RELU && k->t[0] == y)
		return LOWER_ACT_RELU;
	/* a clamp the convolution takes: bounds in order, neither a NaN */
	if (k->kind == K_ND_UNARY && u->fn == ND_CLIP && u->dtype == NPU_DT_FLOAT32 &&
	    nd_unary_out_dt(u) == NPU_DT_FLOAT32 && u->lo <= u->hi && k->t[0] == y)
		return LOWER_ACT_CLIP;
	return 0;
}

int lower_relu_after(const npu_graph *g, const struct lowered *low, const int *nodes,
		     uint32_t count, uint32_t i, int binary, int clip)
{
	const struct lnode *l, *r;
	int y, act;

	if (i + 1 >= count || (y = relu_taker(&low->n[nodes[i]], binary)) < 0)
		return 0;
	l = &low->n[nodes[i]];
	r = &low->n[nodes[i + 1]];
	act = r->nk == 1 ? act_of(&r->k[0], y) : 0;
	if (act == LOWER_ACT_CLIP && (!clip || !lower_conv_forward(&l->k[0])))
		return 0;	/* only the NPU's convolution takes a clamp */
	return act && lower_act_out(&r->k[0]) != y &&
	       ir_count(g, lower_act_out(&r->k[0])) == ir_count(g, y) &&
	       lower_sole_reader(g, low, y) ? act : 0;
}

int lower_sole_reader(const npu_graph *g, const struct lowered *low, int t)
{
	int root = ir_root(g, t), readers = 0;

	if (!g->noutputs || ir_declared(g, root, 2))
		return 0;
	for (int j = 0; j < g->nn; j++)
		for (uint32_t k = 0; k < g->n[j].nin && low->n[j].nk; k++)
			readers += g->n[j].in[k] >= 0 && ir_root(g, g->n[j].in[k]) == root;
	return readers == 1;
}

void lower_node_free(struct lnode *l)
{
	free(l->k);
	free(l->mult);
	free(l->shift);
	free(l->axis_dims);
	memset(l, 0, sizeof(*l));
}

void lower_free(struct lowered *l)
{
	for (int i = 0; l->n && i < l->nn; i++)
		lower_node_free(&l->n[i]);
	free(l->n);
	l->n = NULL;
	l->nn = 0;
}
