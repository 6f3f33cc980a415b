/* SPDX-License-Identifier: MIT */
/*
 * ir.h - libnpu's intermediate representation: a graph of tensors and
 * nodes, data only. A tensor has a shape, a dtype, its quantization (per
 * tensor, or per channel along one axis) and, for a constant, its bytes.
 * A node is an op of the registry (ops.c) with its inputs, outputs and
 * attributes. The graph declares its inputs and outputs. Nothing here
 * knows a backend: plans (plan/) hold what compiling and running need.
 *
 * The graph is built by the importers (import/) and by passes that add to
 * it (autodiff); it is frozen by the first compile, after which any
 * number of plans may share it.
 */
#ifndef NPU_IR_H
#define NPU_IR_H

#include <stdint.h>

#include "npu.h"
#include "base/base.h"
#include "ir/nd_params.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

struct kern_node;

#define IR_MAX_RANK	NPU_MAX_RANK
/* A dim's largest size (a flattened image: 3 * 224 * 224); 2^28 elements in all. */
#define IR_MAX_DIM	(1u << 24)
#define IR_MAX_IN	NPU_CONCAT_MAX_INPUTS
#define IR_MAX_OUT	3

/* The ops of the registry (ops.c); the order means nothing but for the N-d ops' range. */
enum ir_op {
	IR_CONV2D,		/* in: x, w, bias?; out: y. int8 or fp32 */
	IR_FC,			/* in: x, w, bias?; out: y */
	IR_POOL,		/* in: x; out: y */
	IR_ADD,			/* in: a, b; out: y (int8, numpy broadcasting) */
	IR_MUL,			/* in: a, b; out: y (int8, numpy broadcasting) */
	IR_SOFTMAX,		/* in: x; out: y (int8) */
	IR_CONCAT,		/* in: x0..xn; out: y */
	IR_PAD,			/* in: x; out: y */
	IR_TRANSPOSE,		/* in: x; out: y */
	IR_QUANTIZE,		/* in: x fp32; out: y int8 */
	IR_DEQUANTIZE,		/* in: x int8; out: y fp32 */
	IR_RESHAPE,		/* in: x; out: y, a view of x */
	IR_RELU,		/* in: x; out: y (fp32) */
	IR_XENT,		/* in: logits, labels; out: loss, dlogits? */
	IR_CONV2D_GRAD,		/* in: x, w, bias?, y, dy; out: dx?, dw?, db? */
	IR_FC_GRAD,		/* as IR_CONV2D_GRAD */
	IR_POOL_GRAD,		/* in: x, y, dy; out: dx */
	IR_RELU_GRAD,		/* in: x, y, dy; out: dx */
	IR_OPTIM,		/* in: w, g, m?, v?; out: w (m, v updated in place) */
	/*
	 * The N-dimensional ops of models (ONNX's semantics, NCHW as given),
	 * each one kernel whose parameters (a.nd) the importer works out.
	 */
	IR_ND_BINARY,		/* in: a, b; out: y */
	IR_ND_UNARY,		/* in: x; out: y */
	IR_ND_MATMUL,		/* in: a, b, a_zp?, b_zp?; out: y */
	IR_ND_CONV,		/* in: x, w, bias?, x_zp?, w_zp?; out: y */
	IR_ND_POOL,		/* in: x; out: y */
	IR_ND_SOFTMAX,		/* in: x; out: y */
	IR_ND_LAYERNORM,	/* in: x, scale, bias?; out: y, mean?, inv_std_dev? */
	IR_ND_PAD,		/* in: x; out: y */
	IR_ND_RESIZE,		/* in: x; out: y */
	IR_ND_QDQ,		/* in: x, scale, zp?; out: y */
	IR_ND_WHERE,		/* in: cond, a, b; out: y */
	IR_ND_COPY,		/* in: x; out: y (strided: transpose, slice, expand, tile) */
	IR_ND_GATHER,		/* in: x, indices; out: y */
	IR_ND_REDUCE,		/* in: x; out: y */
	/* Their gradients (autodiff_nd.c), fp32. */
	IR_ND_SOFTMAX_GRAD,	/* in: y, dy; out: dx */
	IR_ND_LAYERNORM_GRAD,	/* in: x, scale, mean, inv_std_dev, dy; out: dx?, dscale?, dbias? */
	IR_ND_UNARY_GRAD,	/* in: x, dy; out: dx */
	IR_CUSTOM,		/* an app's op, run by a backend that claims it */
	IR_KERNEL,		/* one kernel, its parameters given (a one-call op) */
	IR_NUM_OPS
};

/* Whether @op is one of the N-dimensional ops (IR_ND_*: one kernel each, dims as given). */
static inline int ir_op_is_nd(enum ir_op op)
{
	return op >= IR_ND_BINARY && op <= IR_ND_UNARY_GRAD;
}

/*
 * An op's attributes, in one struct for every op: each op's verifier and
 * lowering read the ones it has (ir_node_init sets their defaults).
 */
struct ir_attrs {
	uint32_t kernel[2];		/* pooling window: h, w */
	uint32_t stride[2];		/* h, w */
	uint32_t dilation[2];		/* h, w */
	uint32_t pad[4];		/* top, left, bottom, right */
	int depthwise;			/* convolution: the filter is [1][k_h][k_w][out_c] */
	uint32_t groups;		/* convolution: 1, or G groups of in_c / G channels */
	enum npu_activation act;	/* fused after the op */
	uint32_t requant;		/* int8 conv2d, dense, add, mul: enum npu_requant */
	int32_t offset;			/* add, onnxruntime's arithmetic: 128 for uint8 values */
	int32_t ort_swap;		/* ... and a one value per span: operands swapped */
	int average;			/* pooling: average, else max */
	float beta;			/* softmax */
	uint32_t axis;			/* concat */
	int as_given;			/* concat: an NCHW tensor is the array its dims say (ONNX's) */
	uint32_t perm[IR_MAX_RANK];	/* transpose: out dim d = in dim perm[d] */
	uint32_t before[IR_MAX_RANK], after[IR_MAX_RANK];	/* pad */
	struct npu_optim_f32 opt;	/* optimizer */
	int acc[IR_MAX_OUT];		/* gradients: where out[i] is added, or -1 */
	struct kern_node *kn;		/* kernel node: the kernel (owned) */
	char *custom;			/* custom op: its name (owned) */
	void *blob;			/* custom op: its attribute bytes (owned) */
	size_t blob_len;
	union {				/* the IR_ND_* ops: their kernel's parameters */
		struct nd_binary bin;
		struct nd_unary un;
		struct nd_matmul mm;
		struct nd_conv conv;
		struct nd_pool pool;
		struct nd_softmax sm;
		struct nd_layernorm ln;
		struct nd_pad pad;
		struct nd_resize rs;
		struct nd_qdq qdq;
		struct nd_where wh;
		struct nd_copy cp;
		struct nd_gather ga;
		struct nd_reduce rd;
	} nd;
};

struct ir_node {
	enum ir_op op;
	int in[IR_MAX_IN];		/* tensor ids, -1 for an absent optional one */
	uint32_t nin;
	int out[IR_MAX_OUT];
	uint32_t nout;
	struct ir_attrs a;
	int backward;			/* added by autodiff: runs only when training */
	int layout_out;			/* the layout pass's transpose back to NCHW */
};

struct ir_tensor {
	struct npu_tensor_desc d;	/* data and channel_scales point at the copies below */
	float *cscales;			/* per-channel scales (owned), or NULL */
	void *cdata;			/* a constant's bytes (owned), or NULL */
	size_t bytes;
	int alias;			/* a reshape's output: the tensor whose storage it is, else -1 */
	int param;			/* trained by the optimizer */
	int grad;			/* its gradient tensor, else -1 */
	int qsrc;			/* a dequantized constant: its int8 or int32 source, else -1 */
	int twin;			/* an NCHW tensor: its NHWC twin (layout.c), else -1 */
	char *name;			/* a model's name for it (owned), or NULL */
	int scalar;			/* an ONNX scalar (rank 0), held as [1] */
};

struct npu_graph {
	struct ir_tensor *t;
	int nt;
	struct ir_node *n;
	int nn;
	int *inputs, *outputs;		/* declared, in order */
	uint32_t ninputs, noutputs;
	int frozen;			/* compiled once: no more changes */
	int has_backward;
	/* Objects that live and die with the graph (its plans): freed with it. */
	struct ir_attached {
		void *obj;
		void (*free)(void *obj);
	} *attached;
	int nattached;
	struct npu_text report;		/* the last compile's placement report */
	char err[NPU_ERRMSG_LEN];	/* the last failure's message */
};

/* ---- the registry (ops.c) --------------------------------------------- */

enum {
	IR_F_VIEW = 1 << 0,		/* moves no data: the output is a view */
	IR_F_TRAIN = 1 << 1,		/* training only (a loss, a gradient, a step) */
	IR_F_INPLACE = 1 << 2,		/* updates a constant in place (the weights) */
};

/*
 * struct ir_op_desc - one op of the registry.
 * @name: its name in reports (label() may refine it per node).
 * @min_in, @max_in, @min_out, @max_out: how many inputs and outputs.
 * @flags: IR_F_*.
 * @verify: checks a node against the tensors' shapes, dtypes and
 *	quantization; 0, or an error with a message in the graph.
 * @shape: the dims (*@rank of them) of output 0 from the inputs and the
 *	attributes, for an output whose shape is left to be inferred (rank
 *	0); *@rank stays 0 when it cannot tell. NULL: the output's shape
 *	must be given.
 * @label: a name that says more (depthwise, fp32), or NULL.
 * @grad: the op that computes its gradient (autodiff), or -1 for none.
 * @backward: instead of @grad, adds the nodes that compute the gradients
 *	of node @node's inputs (those @need marks) from its output's
 *	(autodiff_nd.c); with @check, only says whether it can (0, or an
 *	error with a message) and adds nothing.
 */
struct ir_op_desc {
	const char *name;
	uint32_t min_in, max_in, min_out, max_out;
	unsigned int flags;
	int (*verify)(npu_graph *g, const struct ir_node *n);
	void (*shape)(const npu_graph *g, const struct ir_node *n, uint32_t *dims, uint32_t *rank);
	const char *(*label)(const npu_graph *g, const struct ir_node *n);
	int grad;
	int (*backward)(npu_graph *g, int node, const int *need, int check);
};

/* The entry of @op, or NULL for a value that is not an op. */
const struct ir_op_desc *ir_op(enum ir_op op);
/* A node's name in reports. */
const char *ir_node_label(const npu_graph *g, const struct ir_node *n);

/* ---- building (graph.c) ----------------------------------------------- */

/* Record @err with a message in the graph (and the thread's last error). */
int ir_fail(npu_graph *g, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 0 if the graph may still change; NPU_EBUSY (with a message) once frozen. */
int ir_mutable(npu_graph *g);
int ir_valid_id(const npu_graph *g, int id);
int ir_is_const(const npu_graph *g, int id);
/* An activation (not a constant) of type @dt. */
int ir_act_of(const npu_graph *g, int id, enum npu_dtype dt);
/*
 * Whether @t's storage is that of a declared input (@what 1), output (2)
 * or either (3): @t itself, or a view of one, or one a view of it.
 */
int ir_declared(const npu_graph *g, int t, int what);
/* Verify @n against the registry and append it; 0 or an error. */
int ir_add_node(npu_graph *g, struct ir_node *n);
/* Check a tensor's description and add it (npu_graph_tensor); its id, or an error. */
int ir_add_desc(npu_graph *g, const struct npu_tensor_desc *d);
/*
 * The same, a constant's bytes not copied: the graph takes @take (d->data,
 * malloc'd, at least the tensor's size) as its own, and frees it. On a
 * failure @take stays the caller's.
 */
int ir_add_desc_take(npu_graph *g, const struct npu_tensor_desc *d, void *take);
/*
 * NCHW data of dims @dim (elements of @es bytes) transposed to NHWC, as
 * the layout pass twins a constant (an OIHW filter becomes OHWI):
 * malloc'd, or NULL.
 */
void *ir_to_nhwc(const void *src, const uint32_t *dim, size_t es);
/*
 * A tensor of @bytes bytes with no shape (int8, rank 1): a kernel node's
 * operand, which its parameters describe. @data: its constant contents.
 */
int ir_add_raw(npu_graph *g, size_t bytes, const void *data);
/*
 * An activation of no elements (a dim of 0): a model's empty tensor. Only
 * a reshape may read or write one (no other op's check takes a dim of 0),
 * and a graph may declare it an input or output.
 */
int ir_add_empty(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims);
/* A zero-filled activation of the graph's own (gradients, optimizer state). */
int ir_add_tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims);
/* The tensor whose storage @id is (itself, or what its view aliases). */
int ir_root(const npu_graph *g, int id);
size_t ir_elem_size(enum npu_dtype dt);
uint64_t ir_count(const npu_graph *g, int id);
/* A node with every input and output absent (-1). */
void ir_node_init(struct ir_node *n, enum ir_op op);
/* Free what a node owns (a custom op's name and attributes). */
void ir_node_release(struct ir_node *n);
/*
 * The layout pass (layout.c), as node @n is added: NCHW inputs replaced by
 * their NHWC twins, an NCHW output by a twin (*@nchw_out: the NCHW tensor,
 * else -1); after the node, layout_out adds the transpose that writes it.
 */
int layout_in(npu_graph *g, struct ir_node *n, int *nchw_out);
int layout_out(npu_graph *g, const struct ir_node *n, int nchw);
/* Tie @obj's life to the graph's (freed by @free with it), or untie it. */
int ir_attach(npu_graph *g, void *obj, void (*free)(void *obj));
void ir_detach(npu_graph *g, void *obj);

#pragma GCC visibility pop

#endif /* NPU_IR_H */
