// SPDX-License-Identifier: MIT
/*
 * ops.c - the registry of ops: for each, its name, how many inputs and
 * outputs it takes, the checks of a node against its tensors (shapes,
 * dtypes, quantization; each failure with its own message), the shape of
 * its output when the graph leaves it to be inferred, the name a report
 * gives it and the op of its gradient. An op missing here cannot be
 * added to a graph, so no later stage meets an op it does not know.
 */
#include <stdio.h>
#include <string.h>

#include "ir/kernel.h"
#include "ir/ops_nd.h"

#define T(id)	(&g->t[id].d)

static const char *dt_name(enum npu_dtype dt)
{
	return dt == NPU_DT_INT8 ? "int8" : dt == NPU_DT_INT32 ? "int32" :
	       dt == NPU_DT_FLOAT32 ? "fp32" : "?";
}

/* An activation input or output of dtype @dt, else a message naming it. */
static int want_act(npu_graph *g, const struct ir_node *n, int id, enum npu_dtype dt,
		    const char *role)
{
	const char *op = ir_op(n->op)->name;

	if (!ir_valid_id(g, id))
		return ir_fail(g, NPU_EINVAL, "%s: %s: no tensor %d", op, role, id);
	if (g->t[id].cdata)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) must be an activation, not a "
			       "constant", op, role, id);
	if (g->t[id].d.dtype != dt)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) is %s, wants %s", op, role, id,
			       dt_name(g->t[id].d.dtype), dt_name(dt));
	return 0;
}

static int want_const(npu_graph *g, const struct ir_node *n, int id, enum npu_dtype dt,
		      const char *role)
{
	const char *op = ir_op(n->op)->name;

	if (!ir_valid_id(g, id))
		return ir_fail(g, NPU_EINVAL, "%s: %s: no tensor %d", op, role, id);
	if (!g->t[id].cdata)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) must be a constant", op, role,
			       id);
	if (g->t[id].d.dtype != dt)
		return ir_fail(g, NPU_EINVAL, "%s: %s (tensor %d) is %s, wants %s", op, role, id,
			       dt_name(g->t[id].d.dtype), dt_name(dt));
	return 0;
}

static int want_rank(npu_graph *g, const struct ir_node *n, int id, uint32_t rank,
		     const char *role)
{
	if (T(id)->rank != rank)
		return ir_fail(g, NPU_EINVAL, "%s: %s has rank %u, wants %u", ir_op(n->op)->name,
			       role, T(id)->rank, rank);
	return 0;
}

#define TRY(x) do { int e_ = (x); if (e_) return e_; } while (0)

/* The kernels of eltwise, concat, pad and transpose take at most 4 dims. */
#define KERN_RANK	4

static int want_kernel_rank(npu_graph *g, const struct ir_node *n, int id)
{
	if (T(id)->rank > KERN_RANK)
		return ir_fail(g, NPU_ENOTSUP, "%s: rank %u (at most %d)", ir_op(n->op)->name,
			       T(id)->rank, KERN_RANK);
	return 0;
}

/*
 * One spatial dimension of a window op: @in padded by @lo + @hi, a window
 * of @k taps @dil apart, stride @s; *@out the size it gives, or an error.
 */
static int window_out(npu_graph *g, const struct ir_node *n, const char *dim, uint32_t in,
		      uint32_t lo, uint32_t hi, uint32_t k, uint32_t dil, uint32_t s, uint32_t *out)
{
	uint64_t span = (uint64_t)dil * (k - 1) + 1, padded = (uint64_t)in + lo + hi;

	if (!k || k > 64 || !s || s > 64 || !dil || dil > 64 || lo > 255 || hi > 255)
		return ir_fail(g, NPU_EINVAL, "%s: %s: kernel %u, stride %u, dilation %u or padding "
			       "%u+%u out of range (kernel, stride, dilation 1-64; padding 0-255)",
			       ir_op(n->op)->name, dim, k, s, dil, lo, hi);
	if (padded < span)
		return ir_fail(g, NPU_EINVAL, "%s: %s: the window (%llu) is larger than the padded "
			       "input (%llu)", ir_op(n->op)->name, dim, (unsigned long long)span,
			       (unsigned long long)padded);
	*out = (uint32_t)((padded - span) / s + 1);
	return 0;
}

static int check_out_dim(npu_graph *g, const struct ir_node *n, const char *dim, uint32_t got,
			 uint32_t want)
{
	if (got != want)
		return ir_fail(g, NPU_EINVAL, "%s: the output's %s is %u, the op gives %u",
			       ir_op(n->op)->name, dim, got, want);
	return 0;
}

/* ---- convolution and dense ---------------------------------------------- */

static int verify_conv(npu_graph *g, const struct ir_node *n)
{
	const struct ir_attrs *a = &n->a;
	int x = n->in[0], w = n->in[1], b = n->in[2], y = n->out[0];
	int f32 = ir_valid_id(g, x) && T(x)->dtype == NPU_DT_FLOAT32;
	enum npu_dtype dt = f32 ? NPU_DT_FLOAT32 : NPU_DT_INT8;
	const struct npu_tensor_desc *i, *f, *o;
	uint32_t oh, ow;

	TRY(want_act(g, n, x, dt, "input"));
	TRY(want_const(g, n, w, dt, "filter"));
	TRY(want_act(g, n, y, dt, "output"));
	if (b >= 0)
		TRY(want_const(g, n, b, f32 ? NPU_DT_FLOAT32 : NPU_DT_INT32, "bias"));
	TRY(want_rank(g, n, x, 4, "the input"));
	TRY(want_rank(g, n, w, 4, "the filter"));
	TRY(want_rank(g, n, y, 4, "the output"));
	i = T(x);
	f = T(w);
	o = T(y);
	if (a->act != NPU_ACT_NONE && a->act != NPU_ACT_RELU && (f32 || a->act != NPU_ACT_RELU6))
		return ir_fail(g, NPU_EINVAL, "conv2d: activation %d is not supported%s", a->act,
			       f32 ? " in fp32 (none or ReLU)" : "");
	if (f32 && (a->depthwise || a->pad[0] != a->pad[2] || a->pad[1] != a->pad[3] ||
		    a->dilation[0] != 1 || a->dilation[1] != 1))
		return ir_fail(g, NPU_EINVAL, "conv2d (fp32): only symmetric padding, no dilation "
			       "and no depthwise filter");
	if (i->dims[0] != o->dims[0])
		return ir_fail(g, NPU_EINVAL, "conv2d: batch %u in, %u out", i->dims[0], o->dims[0]);
	if (a->groups != 1 && (a->depthwise || !a->groups || i->dims[3] % a->groups ||
				o->dims[3] % a->groups))
		return ir_fail(g, NPU_EINVAL, "conv2d: %u groups: not depthwise, and dividing "
			       "in_c (%u) and out_c (%u)", a->groups, i->dims[3], o->dims[3]);
	if (a->groups > 1) {
		if (f->dims[0] != o->dims[3] || f->dims[3] != i->dims[3] / a->groups)
			return ir_fail(g, NPU_EINVAL, "conv2d: the grouped filter [%u][%u][%u][%u] must "
				       "be [out_c %u][k_h][k_w][in_c / groups %u]", f->dims[0],
				       f->dims[1], f->dims[2], f->dims[3], o->dims[3],
				       i->dims[3] / a->groups);
	} else if (a->depthwise) {
		if (f->dims[0] != 1 || f->dims[3] != o->dims[3] || o->dims[3] % i->dims[3])
			return ir_fail(g, NPU_EINVAL, "depthwise_conv2d: the filter must be [1][k_h]"
				       "[k_w][out_c] with out_c (%u) a multiple of in_c (%u)",
				       o->dims[3], i->dims[3]);
	} else if (f->dims[0] != o->dims[3] || f->dims[3] != i->dims[3]) {
		return ir_fail(g, NPU_EINVAL, "conv2d: the filter [%u][%u][%u][%u] must be "
			       "[out_c %u][k_h][k_w][in_c %u]", f->dims[0], f->dims[1], f->dims[2],
			       f->dims[3], o->dims[3], i->dims[3]);
	}
	TRY(window_out(g, n, "height", i->dims[1], a->pad[0], a->pad[2], f->dims[1],
		       a->dilation[0], a->stride[0], &oh));
	TRY(window_out(g, n, "width", i->dims[2], a->pad[1], a->pad[3], f->dims[2],
		       a->dilation[1], a->stride[1], &ow));
	TRY(check_out_dim(g, n, "height", o->dims[1], oh));
	TRY(check_out_dim(g, n, "width", o->dims[2], ow));
	if (b >= 0 && ir_count(g, b) != o->dims[3])
		return ir_fail(g, NPU_EINVAL, "conv2d: the bias has %llu entries for %u channels",
			       (unsigned long long)ir_count(g, b), o->dims[3]);
	return 0;
}

static int verify_fc(npu_graph *g, const struct ir_node *n)
{
	int x = n->in[0], w = n->in[1], b = n->in[2], y = n->out[0];
	int f32 = ir_valid_id(g, x) && T(x)->dtype == NPU_DT_FLOAT32;
	enum npu_dtype dt = f32 ? NPU_DT_FLOAT32 : NPU_DT_INT8;
	const struct npu_tensor_desc *wd, *yd;

	TRY(want_act(g, n, x, dt, "input"));
	TRY(want_const(g, n, w, dt, "weights"));
	TRY(want_act(g, n, y, dt, "output"));
	if (b >= 0)
		TRY(want_const(g, n, b, f32 ? NPU_DT_FLOAT32 : NPU_DT_INT32, "bias"));
	TRY(want_rank(g, n, w, 2, "the weights"));
	TRY(want_rank(g, n, y, 2, "the output"));
	if (n->a.act != NPU_ACT_NONE && n->a.act != NPU_ACT_RELU && (f32 || n->a.act != NPU_ACT_RELU6))
		return ir_fail(g, NPU_EINVAL, "fully_connected: activation %d is not supported",
			       n->a.act);
	wd = T(w);
	yd = T(y);
	/* in is [batch][...] flattened to [batch][k]; w is [n][k]; out [batch][n]. */
	if (yd->dims[1] != wd->dims[0] || T(x)->dims[0] != yd->dims[0] ||
	    ir_count(g, x) != (uint64_t)yd->dims[0] * wd->dims[1])
		return ir_fail(g, NPU_EINVAL, "fully_connected: input of %llu elements, weights "
			       "[%u][%u] and output [%u][%u] do not agree",
			       (unsigned long long)ir_count(g, x), wd->dims[0], wd->dims[1],
			       yd->dims[0], yd->dims[1]);
	if (b >= 0 && ir_count(g, b) != wd->dims[0])
		return ir_fail(g, NPU_EINVAL, "fully_connected: the bias has %llu entries for %u "
			       "outputs", (unsigned long long)ir_count(g, b), wd->dims[0]);
	return 0;
}

/* ---- pooling, elementwise, softmax ------------------------------------ */

static int verify_pool(npu_graph *g, const struct ir_node *n)
{
	const struct ir_attrs *a = &n->a;
	int x = n->in[0], y = n->out[0];
	int f32 = ir_valid_id(g, x) && T(x)->dtype == NPU_DT_FLOAT32;
	const struct npu_tensor_desc *i, *o;
	uint32_t oh, ow;

	TRY(want_act(g, n, x, f32 ? NPU_DT_FLOAT32 : NPU_DT_INT8, "input"));
	TRY(want_act(g, n, y, f32 ? NPU_DT_FLOAT32 : NPU_DT_INT8, "output"));
	TRY(want_rank(g, n, x, 4, "the input"));
	TRY(want_rank(g, n, y, 4, "the output"));
	i = T(x);
	o = T(y);
	if (f32 && (a->pad[0] || a->pad[1] || a->pad[2] || a->pad[3]))
		return ir_fail(g, NPU_EINVAL, "pool (fp32): no padding");
	if (i->dims[0] != o->dims[0] || i->dims[3] != o->dims[3])
		return ir_fail(g, NPU_EINVAL, "pool: [%u][.][.][%u] in, [%u][.][.][%u] out",
			       i->dims[0], i->dims[3], o->dims[0], o->dims[3]);
	if (!f32 && (i->scale != o->scale || i->zero_point != o->zero_point))
		return ir_fail(g, NPU_EINVAL, "pool: input and output must share their "
			       "quantization");
	TRY(window_out(g, n, "height", i->dims[1], a->pad[0], a->pad[2], a->kernel[0], 1,
		       a->stride[0], &oh));
	TRY(window_out(g, n, "width", i->dims[2], a->pad[1], a->pad[3], a->kernel[1], 1,
		       a->stride[1], &ow));
	TRY(check_out_dim(g, n, "height", o->dims[1], oh));
	return check_out_dim(g, n, "width", o->dims[2], ow);
}

/*
 * The shape @a and @b broadcast to, numpy's way (dims aligned to the
 * right, each 1 or the other's); 0 when they do not.
 */
static uint32_t broadcast(const npu_graph *g, int a, int b, uint32_t *dims)
{
	const struct npu_tensor_desc *x = T(a), *y = T(b);
	uint32_t rank = x->rank > y->rank ? x->rank : y->rank;

	for (uint32_t d = 0; d < rank; d++) {
		uint32_t da = d + x->rank >= rank ? x->dims[d + x->rank - rank] : 1;
		uint32_t db = d + y->rank >= rank ? y->dims[d + y->rank - rank] : 1;

		if (da != db && da != 1 && db != 1)
			return 0;
		dims[d] = da > db ? da : db;
	}
	return rank;
}

static int verify_eltwise(npu_graph *g, const struct ir_node *n)
{
	const char *op = ir_op(n->op)->name;
	uint32_t dims[IR_MAX_RANK], rank;

	/* Either input may be a constant (a bias-like addend, a scale). */
	for (int i = 0; i < 2; i++) {
		if (!ir_valid_id(g, n->in[i]) || T(n->in[i])->dtype != NPU_DT_INT8)
			return ir_fail(g, NPU_EINVAL, "%s: input %c must be an int8 tensor", op,
				       'a' + i);
		/* A constant operand is quantized as an activation is: one scale, a zero point. */
		if (g->t[n->in[i]].cdata && (g->t[n->in[i]].cscales || !(T(n->in[i])->scale > 0) ||
					      T(n->in[i])->zero_point < -128 ||
					      T(n->in[i])->zero_point > 127))
			return ir_fail(g, NPU_EINVAL, "%s: constant input %c needs one scale > 0 and "
				       "a zero point in -128..127", op, 'a' + i);
	}
	TRY(want_act(g, n, n->out[0], NPU_DT_INT8, "output"));
	TRY(want_kernel_rank(g, n, n->in[0]));
	TRY(want_kernel_rank(g, n, n->in[1]));
	rank = broadcast(g, n->in[0], n->in[1], dims);
	if (!rank)
		return ir_fail(g, NPU_EINVAL, "%s: inputs of shapes that do not broadcast", op);
	if (T(n->out[0])->rank != rank || memcmp(T(n->out[0])->dims, dims, sizeof(uint32_t) * rank))
		return ir_fail(g, NPU_EINVAL, "%s: the output's shape is not the inputs' broadcast "
			       "one", op);
	if (n->a.act != NPU_ACT_NONE && n->a.act != NPU_ACT_RELU && n->a.act != NPU_ACT_RELU6)
		return ir_fail(g, NPU_EINVAL, "%s: activation %d is not supported", op, n->a.act);
	return 0;
}

static int verify_softmax(npu_graph *g, const struct ir_node *n)
{
	const struct npu_tensor_desc *y;

	TRY(want_act(g, n, n->in[0], NPU_DT_INT8, "input"));
	TRY(want_act(g, n, n->out[0], NPU_DT_INT8, "output"));
	if (!(n->a.beta > 0))
		return ir_fail(g, NPU_EINVAL, "softmax: beta must be > 0");
	if (g->t[n->in[0]].bytes != g->t[n->out[0]].bytes)
		return ir_fail(g, NPU_EINVAL, "softmax: input and output differ in size");
	y = T(n->out[0]);
	/* TFLite's int8 softmax output: scale 1/256, zero point -128. */
	if (y->scale != 1.0f / 256 || y->zero_point != -128)
		return ir_fail(g, NPU_EINVAL, "softmax: the output's quantization must be scale "
			       "1/256, zero point -128 (TFLite's)");
	if (y->dims[y->rank - 1] > 65536)
		return ir_fail(g, NPU_EINVAL, "softmax: the last dimension is over 65536");
	return 0;
}

/* ---- layout ------------------------------------------------------------ */

/* Same dtype (int8) and quantization: the layout ops move bytes only. */
static int same_quant(npu_graph *g, const struct ir_node *n, int in, int out)
{
	const struct npu_tensor_desc *x = T(in), *y = T(out);

	if (x->dtype != NPU_DT_INT8 || y->dtype != NPU_DT_INT8 || x->rank != y->rank ||
	    x->scale != y->scale || x->zero_point != y->zero_point)
		return ir_fail(g, NPU_EINVAL, "%s: input and output must be int8 of one rank and "
			       "one quantization", ir_op(n->op)->name);
	return 0;
}

/* Concatenation copies bytes: any dtype, int8 with one quantization. */
static int verify_concat(npu_graph *g, const struct ir_node *n)
{
	int y = n->out[0];
	uint64_t total = 0;

	if (!ir_valid_id(g, y))
		return ir_fail(g, NPU_EINVAL, "concatenation: no output tensor %d", y);
	TRY(want_act(g, n, y, T(y)->dtype, "output"));
	TRY(want_kernel_rank(g, n, y));
	if (n->a.axis >= T(y)->rank)
		return ir_fail(g, NPU_EINVAL, "concatenation: axis %u of a rank-%u output",
			       n->a.axis, T(y)->rank);
	for (uint32_t i = 0; i < n->nin; i++) {
		int x = n->in[i];

		if (!ir_valid_id(g, x))
			return ir_fail(g, NPU_EINVAL, "concatenation: input %u: no tensor %d", i, x);
		if (T(y)->dtype == NPU_DT_INT8)
			TRY(same_quant(g, n, x, y));	/* copied, not rescaled */
		else if (T(x)->dtype != T(y)->dtype || T(x)->rank != T(y)->rank)
			return ir_fail(g, NPU_EINVAL, "concatenation: input %u's dtype or rank is not "
				       "the output's", i);
		for (uint32_t d = 0; d < T(y)->rank; d++)
			if (d != n->a.axis && T(x)->dims[d] != T(y)->dims[d])
				return ir_fail(g, NPU_EINVAL, "concatenation: input %u differs from "
					       "the output in dimension %u", i, d);
		total += T(x)->dims[n->a.axis];
	}
	if (total != T(y)->dims[n->a.axis])
		return ir_fail(g, NPU_EINVAL, "concatenation: the inputs sum to %llu along the "
			       "axis, the output has %u", (unsigned long long)total,
			       T(y)->dims[n->a.axis]);
	return 0;
}

static int verify_pad(npu_graph *g, const struct ir_node *n)
{
	int x = n->in[0], y = n->out[0];

	if (!ir_valid_id(g, x))
		return ir_fail(g, NPU_EINVAL, "pad: no input tensor %d", x);
	TRY(want_act(g, n, y, NPU_DT_INT8, "output"));
	TRY(same_quant(g, n, x, y));
	TRY(want_kernel_rank(g, n, x));
	for (uint32_t d = 0; d < T(x)->rank; d++)
		if (n->a.before[d] > 65536 || n->a.after[d] > 65536 ||
		    (uint64_t)n->a.before[d] + T(x)->dims[d] + n->a.after[d] != T(y)->dims[d])
			return ir_fail(g, NPU_EINVAL, "pad: dimension %u: %u + %u + %u is not the "
				       "output's %u", d, n->a.before[d], T(x)->dims[d],
				       n->a.after[d], T(y)->dims[d]);
	return 0;
}

static int verify_transpose(npu_graph *g, const struct ir_node *n)
{
	int x = n->in[0], y = n->out[0];
	uint32_t seen = 0;

	if (!ir_valid_id(g, x))
		return ir_fail(g, NPU_EINVAL, "transpose: no input tensor %d", x);
	TRY(want_act(g, n, y, T(x)->dtype, "output"));	/* bytes move: any dtype */
	if (T(x)->rank != T(y)->rank)
		return ir_fail(g, NPU_EINVAL, "transpose: input and output differ in rank");
	TRY(want_kernel_rank(g, n, x));
	if (T(x)->dtype == NPU_DT_INT8)
		TRY(same_quant(g, n, x, y));
	for (uint32_t d = 0; d < T(x)->rank; d++) {
		uint32_t p = n->a.perm[d];

		if (p >= T(x)->rank || (seen & (1u << p)))
			return ir_fail(g, NPU_EINVAL, "transpose: perm is not a permutation of "
				       "0..%u", T(x)->rank - 1);
		if (T(y)->dims[d] != T(x)->dims[p])
			return ir_fail(g, NPU_EINVAL, "transpose: output dimension %u is %u, input "
				       "dimension %u is %u", d, T(y)->dims[d], p, T(x)->dims[p]);
		seen |= 1u << p;
	}
	return 0;
}

static int same_shape(npu_graph *g, const struct ir_node *n, int x, int y)
{
	if (T(x)->rank != T(y)->rank ||
	    memcmp(T(x)->dims, T(y)->dims, sizeof(uint32_t) * T(x)->rank))
		return ir_fail(g, NPU_EINVAL, "%s: input and output differ in shape",
			       ir_op(n->op)->name);
	return 0;
}

static int verify_quantize(npu_graph *g, const struct ir_node *n)
{
	TRY(want_act(g, n, n->in[0], NPU_DT_FLOAT32, "input"));
	TRY(want_act(g, n, n->out[0], NPU_DT_INT8, "output"));
	return same_shape(g, n, n->in[0], n->out[0]);
}

static int verify_dequantize(npu_graph *g, const struct ir_node *n)
{
	TRY(want_act(g, n, n->in[0], NPU_DT_INT8, "input"));
	TRY(want_act(g, n, n->out[0], NPU_DT_FLOAT32, "output"));
	return same_shape(g, n, n->in[0], n->out[0]);
}

static int verify_reshape(npu_graph *g, const struct ir_node *n)
{
	int x = n->in[0], y = n->out[0];
	const struct npu_tensor_desc *a, *b;

	if (!ir_valid_id(g, x) || !ir_valid_id(g, y) || ir_is_const(g, x) || x == y)
		return ir_fail(g, NPU_EINVAL, "reshape: wants two distinct activations");
	a = T(x);
	b = T(y);
	if (a->dtype != b->dtype || g->t[x].bytes != g->t[y].bytes ||
	    (a->dtype == NPU_DT_INT8 && (a->scale != b->scale || a->zero_point != b->zero_point)))
		return ir_fail(g, NPU_EINVAL, "reshape: dtype, size and quantization must agree");
	if (g->t[y].alias >= 0)
		return ir_fail(g, NPU_EINVAL, "reshape: the output is already a view");
	for (int i = 0; i < g->nt; i++)
		if (g->t[i].alias == y)
			return ir_fail(g, NPU_EINVAL, "reshape: the output is viewed by another "
				       "reshape: it must own storage");
	return 0;
}

/* ---- training ---------------------------------------------------------- */

static int verify_relu(npu_graph *g, const struct ir_node *n)
{
	TRY(want_act(g, n, n->in[0], NPU_DT_FLOAT32, "input"));
	TRY(want_act(g, n, n->out[0], NPU_DT_FLOAT32, "output"));
	if (g->t[n->in[0]].bytes != g->t[n->out[0]].bytes)
		return ir_fail(g, NPU_EINVAL, "relu: input and output differ in size");
	return 0;
}

static int verify_xent(npu_graph *g, const struct ir_node *n)
{
	const struct npu_tensor_desc *z;

	TRY(want_act(g, n, n->in[0], NPU_DT_FLOAT32, "logits"));
	TRY(want_act(g, n, n->in[1], NPU_DT_INT32, "labels"));
	TRY(want_act(g, n, n->out[0], NPU_DT_FLOAT32, "loss"));
	TRY(want_rank(g, n, n->in[0], 2, "the logits"));
	z = T(n->in[0]);
	if (z->dims[1] > 65536 || ir_count(g, n->in[1]) != z->dims[0] ||
	    ir_count(g, n->out[0]) != z->dims[0])
		return ir_fail(g, NPU_EINVAL, "softmax_xent: logits [%u][%u] want %u labels and "
			       "losses (at most 65536 classes)", z->dims[0], z->dims[1], z->dims[0]);
	return 0;
}

/* Nodes that autodiff builds from checked ones: their ids must exist. */
static int verify_ids(npu_graph *g, const struct ir_node *n)
{
	for (uint32_t i = 0; i < n->nin; i++)
		if (n->in[i] >= 0 && !ir_valid_id(g, n->in[i]))
			return ir_fail(g, NPU_EINVAL, "%s: input %u: no tensor %d",
				       ir_op(n->op)->name, i, n->in[i]);
	for (uint32_t i = 0; i < n->nout; i++)
		if (n->out[i] >= 0 && !ir_valid_id(g, n->out[i]))
			return ir_fail(g, NPU_EINVAL, "%s: output %u: no tensor %d",
				       ir_op(n->op)->name, i, n->out[i]);
	return 0;
}

static int verify_custom(npu_graph *g, const struct ir_node *n)
{
	if (!n->a.custom || !*n->a.custom)
		return ir_fail(g, NPU_EINVAL, "custom op without a name");
	for (uint32_t i = 0; i < n->nin; i++)
		if (!ir_valid_id(g, n->in[i]))
			return ir_fail(g, NPU_EINVAL, "%s: input %u: no tensor %d", n->a.custom, i,
				       n->in[i]);
	for (uint32_t i = 0; i < n->nout; i++)
		if (!ir_valid_id(g, n->out[i]))
			return ir_fail(g, NPU_EINVAL, "%s: output %u: no tensor %d", n->a.custom, i,
				       n->out[i]);
	return 0;
}

static int verify_kernel(npu_graph *g, const struct ir_node *n)
{
	if (!n->a.kn || !kern_valid(&n->a.kn->k))
		return ir_fail(g, NPU_EINVAL, "kernel node without valid parameters");
	return verify_ids(g, n);
}

/* ---- shape inference ---------------------------------------------------- */

/*
 * Each shape function gives the dims of output 0 from the inputs and the
 * attributes, or leaves *rank 0 when the inputs are not what the op takes
 * (its check then says why).
 */
static int rank_is(const npu_graph *g, int id, uint32_t rank)
{
	return ir_valid_id(g, id) && g->t[id].d.rank == rank;
}

/* One spatial output dimension, or 0 when the window does not fit. */
static uint32_t window(uint32_t in, uint32_t lo, uint32_t hi, uint32_t k, uint32_t dil,
		       uint32_t s)
{
	uint64_t span = (uint64_t)(dil ? dil : 1) * (k ? k - 1 : 0) + 1;
	uint64_t padded = (uint64_t)in + lo + hi;

	return k && s && padded >= span ? (uint32_t)((padded - span) / s + 1) : 0;
}

static void shape_conv(const npu_graph *g, const struct ir_node *n, uint32_t *d, uint32_t *rank)
{
	const struct npu_tensor_desc *x, *w;

	if (!rank_is(g, n->in[0], 4) || !rank_is(g, n->in[1], 4))
		return;
	x = T(n->in[0]);
	w = T(n->in[1]);
	d[0] = x->dims[0];
	d[1] = window(x->dims[1], n->a.pad[0], n->a.pad[2], w->dims[1], n->a.dilation[0],
		      n->a.stride[0]);
	d[2] = window(x->dims[2], n->a.pad[1], n->a.pad[3], w->dims[2], n->a.dilation[1],
		      n->a.stride[1]);
	d[3] = n->a.depthwise ? w->dims[3] : w->dims[0];
	*rank = d[1] && d[2] ? 4 : 0;
}

static void shape_fc(const npu_graph *g, const struct ir_node *n, uint32_t *d, uint32_t *rank)
{
	if (!ir_valid_id(g, n->in[0]) || !rank_is(g, n->in[1], 2))
		return;
	d[0] = T(n->in[0])->dims[0];
	d[1] = T(n->in[1])->dims[0];
	*rank = 2;
}

static void shape_pool(const npu_graph *g, const struct ir_node *n, uint32_t *d, uint32_t *rank)
{
	const struct npu_tensor_desc *x;

	if (!rank_is(g, n->in[0], 4))
		return;
	x = T(n->in[0]);
	d[0] = x->dims[0];
	d[1] = window(x->dims[1], n->a.pad[0], n->a.pad[2], n->a.kernel[0], 1, n->a.stride[0]);
	d[2] = window(x->dims[2], n->a.pad[1], n->a.pad[3], n->a.kernel[1], 1, n->a.stride[1]);
	d[3] = x->dims[3];
	*rank = d[1] && d[2] ? 4 : 0;
}

/* The shape of input 0, unchanged (elementwise ops, quantize, softmax). */
static void shape_same(const npu_graph *g, const struct ir_node *n, uint32_t *d, uint32_t *rank)
{
	if (!ir_valid_id(g, n->in[0]) || !T(n->in[0])->rank)
		return;
	memcpy(d, T(n->in[0])->dims, sizeof(uint32_t) * IR_MAX_RANK);
	*rank = T(n->in[0])->rank;
}

static void shape_concat(const npu_graph *g, const struct ir_node *n, uint32_t *d,
			 uint32_t *rank)
{
	uint64_t sum = 0;

	shape_same(g, n, d, rank);
	if (!*rank || n->a.axis >= *rank)
		return;
	for (uint32_t i = 0; i < n->nin; i++) {
		if (!ir_valid_id(g, n->in[i]) || T(n->in[i])->rank != *rank)
			return;
		sum += T(n->in[i])->dims[n->a.axis];
	}
	d[n->a.axis] = sum <= 65536 ? (uint32_t)sum : 0;
	*rank = sum <= 65536 ? *rank : 0;
}

static void shape_pad(const npu_graph *g, const struct ir_node *n, uint32_t *d, uint32_t *rank)
{
	shape_same(g, n, d, rank);
	for (uint32_t i = 0; i < *rank; i++) {
		uint64_t v = (uint64_t)d[i] + n->a.before[i] + n->a.after[i];

		d[i] = v <= 65536 ? (uint32_t)v : 0;
	}
}

static void shape_transpose(const npu_graph *g, const struct ir_node *n, uint32_t *d,
			    uint32_t *rank)
{
	shape_same(g, n, d, rank);
	for (uint32_t i = 0; i < *rank; i++)
		d[i] = n->a.perm[i] < *rank ? T(n->in[0])->dims[n->a.perm[i]] : 0;
}

static void shape_eltwise(const npu_graph *g, const struct ir_node *n, uint32_t *d,
			  uint32_t *rank)
{
	if (ir_valid_id(g, n->in[0]) && ir_valid_id(g, n->in[1]))
		*rank = broadcast(g, n->in[0], n->in[1], d);
}

static void shape_xent(const npu_graph *g, const struct ir_node *n, uint32_t *d, uint32_t *rank)
{
	if (!rank_is(g, n->in[0], 2))
		return;
	d[0] = T(n->in[0])->dims[0];
	*rank = 1;
}

/* ---- names in reports ------------------------------------------------- */

static int is_f32(const npu_graph *g, const struct ir_node *n)
{
	return g->t[n->in[0]].d.dtype == NPU_DT_FLOAT32;
}

static const char *label_conv(const npu_graph *g, const struct ir_node *n)
{
	return is_f32(g, n) ? "conv2d (fp32)" : n->a.depthwise ? "depthwise_conv2d" : "conv2d";
}

static const char *label_fc(const npu_graph *g, const struct ir_node *n)
{
	return is_f32(g, n) ? "dense (fp32)" : "fully_connected";
}

static const char *label_pool(const npu_graph *g, const struct ir_node *n)
{
	if (is_f32(g, n))
		return n->a.average ? "average_pool (fp32)" : "max_pool (fp32)";
	return n->a.average ? "average_pool" : "max_pool";
}

static const char *label_pool_grad(const npu_graph *g, const struct ir_node *n)
{
	(void)g;
	return n->a.average ? "average_pool grad" : "max_pool grad";
}

static const char *label_optim(const npu_graph *g, const struct ir_node *n)
{
	(void)g;
	return n->a.opt.algo == NPU_OPTIM_SGD ? "sgd step" : "adam step";
}

static const char *label_kernel(const npu_graph *g, const struct ir_node *n)
{
	(void)g;
	return kern_desc(n->a.kn->k.kind)->name;
}

static const char *label_custom(const npu_graph *g, const struct ir_node *n)
{
	(void)g;
	return n->a.custom;
}

/* ---- the registry -------------------------------------------------------- */

#define OP(nm, in_lo, in_hi, out_lo, out_hi) \
	.name = (nm), .min_in = (in_lo), .max_in = (in_hi), .min_out = (out_lo), .max_out = (out_hi)

static const struct ir_op_desc registry[IR_NUM_OPS] = {
	[IR_CONV2D] = { OP("conv2d", 2, 3, 1, 1), .verify = verify_conv, .shape = shape_conv,
			.label = label_conv, .grad = IR_CONV2D_GRAD },
	[IR_FC] = { OP("fully_connected", 2, 3, 1, 1), .verify = verify_fc, .shape = shape_fc,
		    .label = label_fc, .grad = IR_FC_GRAD },
	[IR_POOL] = { OP("pool", 1, 1, 1, 1), .verify = verify_pool, .shape = shape_pool,
		      .label = label_pool, .grad = IR_POOL_GRAD },
	[IR_ADD] = { OP("add", 2, 2, 1, 1), .verify = verify_eltwise, .shape = shape_eltwise,
		     .grad = -1 },
	[IR_MUL] = { OP("mul", 2, 2, 1, 1), .verify = verify_eltwise, .shape = shape_eltwise,
		     .grad = -1 },
	[IR_SOFTMAX] = { OP("softmax", 1, 1, 1, 1), .verify = verify_softmax, .shape = shape_same,
			 .grad = -1 },
	[IR_CONCAT] = { OP("concatenation", 1, IR_MAX_IN, 1, 1), .verify = verify_concat,
			.shape = shape_concat, .grad = -1 },
	[IR_PAD] = { OP("pad", 1, 1, 1, 1), .verify = verify_pad, .shape = shape_pad, .grad = -1 },
	[IR_TRANSPOSE] = { OP("transpose", 1, 1, 1, 1), .verify = verify_transpose,
			   .shape = shape_transpose, .grad = -1 },
	[IR_QUANTIZE] = { OP("quantize", 1, 1, 1, 1), .verify = verify_quantize,
			  .shape = shape_same, .grad = -1 },
	[IR_DEQUANTIZE] = { OP("dequantize", 1, 1, 1, 1), .verify = verify_dequantize,
			    .shape = shape_same, .grad = -1 },
	/* A reshape's output shape is the new shape: it must be given. */
	[IR_RESHAPE] = { OP("reshape", 1, 1, 1, 1), .flags = IR_F_VIEW, .verify = verify_reshape,
			 .grad = IR_RESHAPE },
	[IR_RELU] = { OP("relu (fp32)", 1, 1, 1, 1), .verify = verify_relu, .shape = shape_same,
		      .grad = IR_RELU_GRAD },
	[IR_XENT] = { OP("softmax_xent", 2, 2, 1, 2), .flags = IR_F_TRAIN, .verify = verify_xent,
		      .shape = shape_xent, .grad = -1 },
	/* Autodiff makes these with their tensors: nothing to infer. */
	[IR_CONV2D_GRAD] = { OP("conv2d grad", 5, 5, 3, 3), .flags = IR_F_TRAIN,
			     .verify = verify_ids, .grad = -1 },
	[IR_FC_GRAD] = { OP("dense grad", 5, 5, 3, 3), .flags = IR_F_TRAIN, .verify = verify_ids,
			 .grad = -1 },
	[IR_POOL_GRAD] = { OP("pool grad", 3, 3, 1, 1), .flags = IR_F_TRAIN, .verify = verify_ids,
			   .label = label_pool_grad, .grad = -1 },
	[IR_RELU_GRAD] = { OP("relu grad", 3, 3, 1, 1), .flags = IR_F_TRAIN, .verify = verify_ids,
			   .grad = -1 },
	[IR_OPTIM] = { OP("optimizer step", 4, 4, 1, 1), .flags = IR_F_TRAIN | IR_F_INPLACE,
		       .verify = verify_ids, .label = label_optim, .grad = -1 },
	[IR_ND_BINARY] = { OP("binary", 2, 2, 1, 1), .verify = verify_nd_binary,
			   .label = label_nd, .grad = -1, .backward = backward_nd_binary },
	[IR_ND_UNARY] = { OP("unary", 1, 1, 1, 1), .verify = verify_nd_unary, .label = label_nd,
			  .grad = -1, .backward = backward_nd_unary },
	[IR_ND_MATMUL] = { OP("matmul", 2, 4, 1, 1), .verify = verify_nd_matmul,
			   .label = label_nd, .grad = -1, .backward = backward_nd_matmul },
	[IR_ND_CONV] = { OP("conv", 2, 5, 1, 1), .verify = verify_nd_conv, .label = label_nd,
			 .grad = -1 },
	[IR_ND_POOL] = { OP("pool", 1, 1, 1, 2), .verify = verify_nd_pool, .label = label_nd,
			 .grad = -1 },
	[IR_ND_SOFTMAX] = { OP("softmax", 1, 2, 1, 1), .verify = verify_nd_softmax,
			    .label = label_nd, .grad = -1, .backward = backward_nd_softmax },
	[IR_ND_LAYERNORM] = { OP("layer_norm", 2, 3, 1, 3), .verify = verify_nd_layernorm,
			      .label = label_nd, .grad = -1, .backward = backward_nd_layernorm },
	[IR_ND_PAD] = { OP("pad", 1, 1, 1, 1), .verify = verify_nd_pad, .grad = -1 },
	[IR_ND_RESIZE] = { OP("resize", 1, 1, 1, 1), .verify = verify_nd_resize, .grad = -1 },
	[IR_ND_QDQ] = { OP("qdq", 2, 3, 1, 1), .verify = verify_nd_qdq, .label = label_nd,
			.grad = -1 },
	[IR_ND_WHERE] = { OP("where", 3, 3, 1, 1), .verify = verify_nd_where, .grad = -1 },
	[IR_ND_COPY] = { OP("copy", 1, 1, 1, 1), .verify = verify_nd_copy, .label = label_nd,
			 .grad = -1, .backward = backward_nd_copy },
	[IR_ND_GATHER] = { OP("gather", 2, 2, 1, 1), .verify = verify_nd_gather,
			   .label = label_nd, .grad = -1 },
	[IR_ND_REDUCE] = { OP("reduce", 1, 1, 1, 1), .verify = verify_nd_reduce,
			   .label = label_nd, .grad = -1, .backward = backward_nd_reduce },
	/* Autodiff makes these (autodiff_nd.c). */
	[IR_ND_SOFTMAX_GRAD] = { OP("softmax grad", 2, 2, 1, 1), .flags = IR_F_TRAIN,
				 .verify = verify_nd_softmax_grad, .grad = -1 },
	[IR_ND_LAYERNORM_GRAD] = { OP("layer_norm grad", 5, 5, 1, 3), .flags = IR_F_TRAIN,
				   .verify = verify_nd_layernorm_grad, .grad = -1 },
	[IR_ND_UNARY_GRAD] = { OP("activation grad", 2, 2, 1, 1), .flags = IR_F_TRAIN,
			       .verify = verify_nd_unary_grad, .grad = -1 },
	[IR_CUSTOM] = { OP("custom", 0, IR_MAX_IN, 1, IR_MAX_OUT), .verify = verify_custom,
			.label = label_custom, .grad = -1 },
	[IR_KERNEL] = { OP("kernel", 1, IR_MAX_IN, 1, 1), .verify = verify_kernel,
			.label = label_kernel, .grad = -1 },
};

const struct ir_op_desc *ir_op(enum ir_op op)
{
	if ((unsigned int)op >= IR_NUM_OPS || !registry[op].name || !registry[op].verify)
		return NULL;
	return &registry[op];
}

const char *ir_node_label(const npu_graph *g, const struct ir_node *n)
{
	const struct ir_op_desc *d = ir_op(n->op);

	return d->label ? d->label(g, n) : d->name;
}
