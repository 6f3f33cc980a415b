/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - kernels, the IR's lowest level: the operations every backend
 * implements, each one NPU command, one CPU reference function and one
 * OpenCL kernel, with all its parameters worked out. The lowering pass
 * turns nodes into kernels; a kernel node (a one-call op) is one already.
 * The kernel registry (kernel.c) says, for each kind, its name, its
 * firmware command, its cost and which of its tensors it reads and
 * writes; each implementation keeps its own table of the kinds it runs
 * (the CPU reference's is ref/ref_kern.c, and has them all).
 */
#ifndef NPU_KERNEL_H
#define NPU_KERNEL_H

#include "ir/ir.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

enum kern_kind {
	K_GEMM_I8,		/* t: a, b, bias, out */
	K_CONV_I8,		/* t: in, filter, bias, out */
	K_POOL_I8,		/* t: in, out */
	K_ELT_I8,		/* t: a, b, out */
	K_SOFTMAX_I8,		/* t: in, out */
	K_QUANTIZE,		/* t: in, out */
	K_PAD,			/* t: in, out */
	K_TRANSPOSE,		/* t: in, out */
	K_CONCAT,		/* t: in0 .. in(n-1), out */
	K_GEMM_F32,		/* t: A, B, C */
	K_CONV_F32,		/* t: x, w, y */
	K_POOL_F32,		/* t: x, y (dy), dx */
	K_ELT_F32,		/* t: a, b, out */
	K_REDUCE_F32,		/* t: in, out */
	K_XENT_F32,		/* t: logits, labels, loss, dlogits */
	K_OPTIM_F32,		/* t: w, g, m, v */
	/* The N-dimensional kernels (ir/nd_params.h): their NPU commands are N-d ones. */
	K_ND_BINARY,		/* t: a, b, y */
	K_ND_UNARY,		/* t: x, y */
	K_ND_MATMUL,		/* t: a, b, a_zp, b_zp, y */
	K_ND_CONV,		/* t: x, w, bias, x_zp, w_zp, y */
	K_ND_POOL,		/* t: x, y */
	K_ND_SOFTMAX,		/* t: x, y */
	K_ND_LAYERNORM,		/* t: x, scale, bias, y, mean, inv_std_dev */
	K_ND_PAD,		/* t: x, y */
	K_ND_RESIZE,		/* t: x, y */
	K_ND_QDQ,		/* t: x, scale, zp, y */
	K_ND_WHERE,		/* t: cond, a, b, y */
	K_ND_COPY,		/* t: x, y */
	K_ND_GATHER,		/* t: x, indices, y */
	K_ND_REDUCE,		/* t: x, y */
	K_ND_SOFTMAX_GRAD,	/* t: y, dy, dx */
	K_ND_LAYERNORM_GRAD,	/* t: x, scale, mean, inv_std, dy, dx, dscale, dbias */
	K_ND_UNARY_GRAD,	/* t: x, dy, dx */
	K_NUM
};

#define KERN_MAX_T	(IR_MAX_IN + 1)

struct kern {
	enum kern_kind kind;
	int t[KERN_MAX_T];		/* tensor ids, -1: none */
	int nt;
	union {
		struct npu_gemm_i8 gemm;
		struct npu_conv2d_i8 conv;
		struct npu_pool_i8 pool;
		struct npu_eltwise_i8 elt;
		struct npu_softmax_i8 sm;
		struct npu_quantize q;
		struct npu_pad pad;
		struct npu_transpose tr;
		struct npu_concat cat;		/* axis_dims: the node's */
		struct npu_gemm_f32 fgemm;
		struct {
			struct npu_conv2d_f32 p;
			enum npu_conv_pass pass;
		} fconv;
		struct npu_pool_f32 fpool;
		struct npu_eltwise_f32 felt;
		struct npu_reduce_f32 red;
		struct npu_xent_f32 xent;
		struct npu_optim_f32 opt;
		struct nd_binary bin;
		struct nd_unary un;
		struct nd_matmul mm;
		struct nd_conv nconv;
		struct nd_pool npool;
		struct nd_softmax nsm;
		struct nd_layernorm ln;
		struct nd_pad npad;
		struct nd_resize rs;
		struct nd_qdq qdq;
		struct nd_where wh;
		struct nd_copy cp;
		struct nd_gather ga;
		struct nd_reduce rd;
	} p;
	const int32_t *mult, *shift;	/* int8 GEMM and convolution: the node's */
	uint32_t nq;			/* their entries */
};

/* What an optimizer step of a run brings (ref_kern_run). */
struct kern_step {
	uint32_t train_step;
	int lr_set;
	float lr;
};

/*
 * struct kern_desc - one kind of kernel: its one line in the registry
 * (kernel.c), which every layer that needs a kind's piece reads.
 * @name: for messages.
 * @cmd: the NPU command that runs it (npu_cmd.h), or 0 for none (an N-d
 *	kind: its main one; the NPU backend's pack_nd() picks, e.g. CAST for a cast).
 * @nin: for an N-dimensional kernel, how many tensors it reads (its node's
 *	inputs, absent ones -1), the rest written; 0 for the others.
 * @nout: for an N-dimensional kernel, how many it writes.
 * @nd_op: for an N-dimensional kernel, its IR op (IR_ND_*).
 * @macs: whether its work counts as multiply-accumulates in reports.
 * @work: MACs or elements (0 for layout: bytes are costed apart).
 * @valid: a one-call op's checks; NULL for kinds made from nodes only.
 * @io: the tensors read and written, where not the rule (N-d: inputs then
 *	outputs; others: the last written).
 */
struct kern_desc {
	const char *name;
	uint32_t cmd;
	int nin;
	int nout;
	enum ir_op nd_op;
	int macs;
	uint64_t (*work)(const struct kern *k);
	int (*valid)(const struct kern *k);
	void (*io)(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr);
};

/*
 * 0 when every kind has its pieces (a name, a cost, a command or an IR op
 * of its own); else NPU_EINVAL and, in @why, the first missing.
 */
int kern_registry_check(char *why, size_t len);
const struct kern_desc *kern_desc(enum kern_kind kind);

#define KERN_MAX_IO	(KERN_MAX_T + 1)
/* The tensors kernel @k reads and writes, counted in *@nrd and *@nwr. */
void kern_io(const struct kern *k, int *rd, int *nrd, int *wr, int *nwr);

/* A kernel node's kernel and the arrays its parameters point at (owned). */
struct kern_node {
	struct kern k;
	int32_t *mult, *shift;
	uint32_t *axis_dims;
};

/*
 * Add a node that runs @k as it is (a one-call op): its tensors t[0..nt-2]
 * are read and t[nt-1] written; @mult, @shift (k->nq entries) and a
 * concat's axis_dims are copied. The reference's checks run first.
 */
int ir_add_kernel(npu_graph *g, const struct kern *k);
/*
 * The kernel of an N-dimensional node (IR_ND_*): its tensors in the order
 * its kernel takes them, its parameters the node's. 0, or NPU_EINVAL for
 * a node that is not one (an op forgotten here fails, never runs as nothing).
 */
int kern_of_nd(const struct ir_node *n, struct kern *k);
/* Whether a kernel's parameters pass the reference's checks. */
int kern_valid(const struct kern *k);

/* Work (MACs or elements) and bytes of a kernel: what backends' costs start from. */
uint64_t kern_work(const struct kern *k);
/* Its multiply-accumulates (a matrix product's or a convolution's), else 0. */
uint64_t kern_macs(const struct kern *k);
uint64_t kern_bytes(const npu_graph *g, const struct kern *k);

/* An optimizer kernel's parameters for this run: Adam's step, a new rate. */
struct npu_optim_f32 kern_optim_now(const struct kern *k, uint32_t train_step, int lr_set,
				    float lr);

#pragma GCC visibility pop

#endif /* NPU_KERNEL_H */
