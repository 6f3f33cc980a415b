// SPDX-License-Identifier: MIT
/*
 * builder.c - the C builder API, libnpu's first importer: each call adds a
 * tensor or a node to the IR, the node checked by the registry (ir/ops.c)
 * so that a bad one is refused at once with a message that names what is
 * wrong (npu_graph_error).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "import/builder_nd.h"

int npu_graph_tensor_v(size_t size, npu_graph *g, const struct npu_tensor_desc *ud)
{
	struct npu_tensor_desc d;
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!ud)
		return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: no description");
	err = npu_struct_in(&d, sizeof(d), ud, size);
	if (err)
		return ir_fail(g, err, "npu_graph_tensor: a struct npu_tensor_desc of %zu bytes", size);
	return ir_add_desc(g, &d);
}

static void unary(enum ir_op op, int in, int out, struct ir_node *n)
{
	ir_node_init(n, op);
	n->in[0] = in;
	n->nin = 1;
	n->out[0] = out;
	n->nout = 1;
}

int npu_graph_conv2d_ex_v(size_t size, npu_graph *g, int in, int filter, int bias, int out,
			  const struct npu_conv2d_attrs *ua)
{
	struct npu_conv2d_attrs a;
	struct ir_node n;
	int err;

	if (!ua)
		return ir_fail(g, NPU_EINVAL, "conv2d: no attributes");
	err = npu_struct_in(&a, sizeof(a), ua, size);
	if (err)
		return ir_fail(g, err, "conv2d: a struct npu_conv2d_attrs of %zu bytes", size);
	unary(IR_CONV2D, in, out, &n);
	n.in[1] = filter;
	n.in[2] = bias;
	n.nin = 3;
	memcpy(n.a.stride, a.stride, sizeof(n.a.stride));
	memcpy(n.a.dilation, a.dilation, sizeof(n.a.dilation));
	memcpy(n.a.pad, a.pad, sizeof(n.a.pad));
	for (int i = 0; i < 2; i++)
		n.a.dilation[i] = n.a.dilation[i] ? n.a.dilation[i] : 1;
	n.a.depthwise = a.depthwise;
	n.a.act = a.act;
	n.a.groups = a.groups ? a.groups : 1;
	return ir_add_node(g, &n);
}

int npu_graph_conv2d(npu_graph *g, int in, int filter, int bias, int out, uint32_t stride,
		     uint32_t pad, int depthwise, enum npu_activation act)
{
	struct npu_conv2d_attrs a = {
		.stride = { stride, stride }, .dilation = { 1, 1 },
		.pad = { pad, pad, pad, pad }, .depthwise = depthwise, .act = act,
	};

	return npu_graph_conv2d_ex(g, in, filter, bias, out, &a);
}

int npu_graph_fully_connected(npu_graph *g, int in, int weights, int bias, int out,
			      enum npu_activation act)
{
	struct ir_node n;

	unary(IR_FC, in, out, &n);
	n.in[1] = weights;
	n.in[2] = bias;
	n.nin = 3;
	n.a.act = act;
	return ir_add_node(g, &n);
}

int npu_graph_pool_ex_v(size_t size, npu_graph *g, int in, int out,
			const struct npu_pool_attrs *ua)
{
	struct npu_pool_attrs a;
	struct ir_node n;
	int err;

	if (!ua)
		return ir_fail(g, NPU_EINVAL, "pool: no attributes");
	err = npu_struct_in(&a, sizeof(a), ua, size);
	if (err)
		return ir_fail(g, err, "pool: a struct npu_pool_attrs of %zu bytes", size);
	unary(IR_POOL, in, out, &n);
	memcpy(n.a.kernel, a.kernel, sizeof(n.a.kernel));
	memcpy(n.a.stride, a.stride, sizeof(n.a.stride));
	memcpy(n.a.pad, a.pad, sizeof(n.a.pad));
	n.a.average = a.average;
	return ir_add_node(g, &n);
}

int npu_graph_pool(npu_graph *g, int in, int out, uint32_t k, uint32_t stride, int average)
{
	struct npu_pool_attrs a = {
		.kernel = { k, k }, .stride = { stride, stride }, .average = average,
	};

	return npu_graph_pool_ex(g, in, out, &a);
}

/* An fp32 tensor: the N-d ops of builder_nd.c take it. */
static int is_f32(const npu_graph *g, int id)
{
	return ir_valid_id(g, id) && g->t[id].d.dtype == NPU_DT_FLOAT32;
}

int npu_graph_add(npu_graph *g, int a, int b, int out, enum npu_activation act)
{
	struct ir_node n;

	if (is_f32(g, a))
		return builder_binary_f32(g, ND_ADD, a, b, out, act);
	unary(IR_ADD, a, out, &n);
	n.in[1] = b;
	n.nin = 2;
	n.a.act = act;
	return ir_add_node(g, &n);
}

int npu_graph_mul(npu_graph *g, int a, int b, int out, enum npu_activation act)
{
	struct ir_node n;

	if (is_f32(g, a))
		return builder_binary_f32(g, ND_MUL, a, b, out, act);
	unary(IR_MUL, a, out, &n);
	n.in[1] = b;
	n.nin = 2;
	n.a.act = act;
	return ir_add_node(g, &n);
}

int npu_graph_softmax(npu_graph *g, int in, int out, float beta)
{
	struct ir_node n;

	if (is_f32(g, in))
		return builder_softmax_f32(g, in, out, beta);
	unary(IR_SOFTMAX, in, out, &n);
	n.a.beta = beta;
	return ir_add_node(g, &n);
}

int npu_graph_concat(npu_graph *g, const int *ins, uint32_t count, int out, uint32_t axis)
{
	struct ir_node n;

	if (!ins || !count || count > IR_MAX_IN)
		return ir_fail(g, NPU_EINVAL, "concatenation: %u inputs (1-%d)", count, IR_MAX_IN);
	unary(IR_CONCAT, ins[0], out, &n);
	memcpy(n.in, ins, sizeof(int) * count);
	n.nin = count;
	n.a.axis = axis;
	return ir_add_node(g, &n);
}

int npu_graph_pad(npu_graph *g, int in, int out, const uint32_t *before, const uint32_t *after)
{
	struct ir_node n;

	if (!before || !after || !ir_valid_id(g, in))
		return ir_fail(g, NPU_EINVAL, "pad: no input, or no padding given");
	unary(IR_PAD, in, out, &n);
	memcpy(n.a.before, before, sizeof(uint32_t) * g->t[in].d.rank);
	memcpy(n.a.after, after, sizeof(uint32_t) * g->t[in].d.rank);
	return ir_add_node(g, &n);
}

int npu_graph_transpose(npu_graph *g, int in, int out, const uint32_t *perm)
{
	struct ir_node n;

	if (!perm || !ir_valid_id(g, in))
		return ir_fail(g, NPU_EINVAL, "transpose: no input, or no permutation given");
	if (is_f32(g, in))
		return builder_transpose_f32(g, in, out, perm);
	unary(IR_TRANSPOSE, in, out, &n);
	memcpy(n.a.perm, perm, sizeof(uint32_t) * g->t[in].d.rank);
	return ir_add_node(g, &n);
}

/*
 * Packed tensors reshape in place: @out becomes another view of @in's
 * storage (of the tensor @in views, for a chain), and the op moves nothing.
 */
int npu_graph_reshape(npu_graph *g, int in, int out)
{
	struct ir_node n;

	unary(IR_RESHAPE, in, out, &n);
	return ir_add_node(g, &n);
}

int npu_graph_quantize(npu_graph *g, int in, int out)
{
	struct ir_node n;

	unary(IR_QUANTIZE, in, out, &n);
	return ir_add_node(g, &n);
}

/*
 * A constant dequantized (ONNX's DequantizeLinear of weights or a bias):
 * computed at once, as the reference dequantizes (in double, stored as
 * float), per tensor or per channel along quant_dim. @out becomes an fp32
 * constant that remembers its source, so that QDQ folding can run the
 * int8 op on the source itself.
 */
/* A tensor nothing refers to yet: no node, no view, no declaration. */
static int fresh(const npu_graph *g, int t)
{
	if (g->t[t].alias >= 0)
		return 0;
	for (int i = 0; i < g->nt; i++)
		if (g->t[i].alias == t)
			return 0;
	for (int i = 0; i < g->nn; i++) {
		for (uint32_t k = 0; k < g->n[i].nin; k++)
			if (g->n[i].in[k] == t)
				return 0;
		for (uint32_t k = 0; k < g->n[i].nout; k++)
			if (g->n[i].out[k] == t)
				return 0;
	}
	return !ir_declared(g, t, 3);
}

static int dequantize_constant(npu_graph *g, int in, int out)
{
	const struct ir_tensor *x = &g->t[in];
	struct ir_tensor *y = &g->t[out];
	uint64_t n = ir_count(g, in), inner = 1;
	uint32_t nc = 1;
	float *f;

	if ((x->d.dtype != NPU_DT_INT8 && x->d.dtype != NPU_DT_INT32) ||
	    y->d.dtype != NPU_DT_FLOAT32 || y->cdata || y->d.rank != x->d.rank ||
	    memcmp(y->d.dims, x->d.dims, sizeof(uint32_t) * x->d.rank))
		return ir_fail(g, NPU_EINVAL, "dequantize: a constant int8 or int32 tensor into an "
			       "fp32 activation of its shape");
	if (!fresh(g, out))
		return ir_fail(g, NPU_EINVAL, "dequantize: the output (tensor %d) of a constant's "
			       "dequantize becomes a constant: no op may use it yet, and it may not "
			       "be a view or declared", out);
	if (!x->cscales && !(x->d.scale > 0))
		return ir_fail(g, NPU_EINVAL, "dequantize: tensor %d has no scale", in);
	if (x->cscales) {
		nc = x->d.dims[x->d.quant_dim];
		for (uint32_t d = x->d.quant_dim + 1; d < x->d.rank; d++)
			inner *= x->d.dims[d];
	}
	f = malloc(sizeof(float) * n);
	if (!f)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++) {
		uint32_t c = x->cscales ? (uint32_t)(i / inner % nc) : 0;
		double s = x->cscales ? x->cscales[c] : x->d.scale;
		int64_t q = x->d.dtype == NPU_DT_INT8 ? ((const int8_t *)x->cdata)[i] :
						       ((const int32_t *)x->cdata)[i];

		f[i] = (float)(s * (double)(q - x->d.zero_point));
	}
	y->cdata = f;
	y->d.data = f;
	y->qsrc = in;
	return 0;
}

int npu_graph_dequantize(npu_graph *g, int in, int out)
{
	struct ir_node n;
	int err = ir_mutable(g);

	if (err)
		return err;
	if (ir_is_const(g, in) && ir_valid_id(g, out))
		return dequantize_constant(g, in, out);
	unary(IR_DEQUANTIZE, in, out, &n);
	return ir_add_node(g, &n);
}

int npu_graph_relu(npu_graph *g, int in, int out)
{
	struct ir_node n;

	unary(IR_RELU, in, out, &n);
	return ir_add_node(g, &n);
}

int npu_graph_xent(npu_graph *g, int logits, int labels, int loss)
{
	struct ir_node n;

	unary(IR_XENT, logits, loss, &n);
	n.in[1] = labels;
	n.nin = 2;
	return ir_add_node(g, &n);
}

int npu_graph_param(npu_graph *g, int id)
{
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!ir_is_const(g, id) || g->t[id].d.dtype != NPU_DT_FLOAT32)
		return ir_fail(g, NPU_EINVAL, "npu_graph_param: tensor %d is not an fp32 constant",
			       id);
	g->t[id].param = 1;
	return 0;
}

int npu_graph_custom(npu_graph *g, const char *op, const int *ins, uint32_t nin,
		     const int *outs, uint32_t nout, const void *attr, size_t attr_len)
{
	struct ir_node n;
	int err;

	if (!op || !*op || (nin && !ins) || !outs || !nout || nin > IR_MAX_IN ||
	    nout > IR_MAX_OUT || (attr_len && !attr) || attr_len > (1u << 20))
		return ir_fail(g, NPU_EINVAL, "npu_graph_custom: a name, 0-%d inputs, 1-%d outputs "
			       "and at most 1 MiB of attributes", IR_MAX_IN, IR_MAX_OUT);
	ir_node_init(&n, IR_CUSTOM);
	if (nin)
		memcpy(n.in, ins, sizeof(int) * nin);
	memcpy(n.out, outs, sizeof(int) * nout);
	n.nin = nin;
	n.nout = nout;
	n.a.custom = strdup(op);
	n.a.blob = attr_len ? malloc(attr_len) : NULL;
	if (!n.a.custom || (attr_len && !n.a.blob)) {
		ir_node_release(&n);
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	}
	if (attr_len)
		memcpy(n.a.blob, attr, attr_len);
	n.a.blob_len = attr_len;
	err = ir_add_node(g, &n);
	if (err)
		ir_node_release(&n);
	return err;
}
