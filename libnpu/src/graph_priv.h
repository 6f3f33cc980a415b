/* SPDX-License-Identifier: MIT */
/*
 * graph_priv.h - what graph.c (tensors, int8 ops, compile and run) and
 * graph_train.c (fp32 ops, the backward graph, optimizers) share.
 *
 * A graph is a list of tensors and a list of ops run in order. An int8 op
 * is one tensor command; an fp32 op is lowered at compile time into a few
 * steps, each one training command (struct fstep). Each op is placed on a
 * backend: the NPU when the firmware has all its commands, else OpenCL
 * (graph_ocl.c), else the CPU reference.
 *
 * A tensor's storage may be current on the host (the NPU's buffers are
 * mapped there, so the NPU and the CPU share it) and in an OpenCL buffer;
 * struct tensor's @valid says which, on the tensor whose storage it is
 * (graph_root). Data moves only when an op on the other side reads it.
 */
#ifndef GRAPH_PRIV_H
#define GRAPH_PRIV_H

#include "npu.h"
#include "npu_priv.h"
#include "ocl_priv.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

enum op_kind {
	OP_CONV, OP_FC, OP_POOL, OP_ADD, OP_SOFTMAX, OP_CONCAT, OP_PAD, OP_TRANSPOSE, OP_QUANTIZE,
	OP_RESHAPE,
	/* fp32 (graph_train.c): forward ... */
	OP_CONV_F32, OP_FC_F32, OP_POOL_F32, OP_RELU_F32, OP_XENT,
	/* ... and what npu_graph_backward and npu_graph_optimizer add */
	OP_CONV_F32_BWD, OP_FC_F32_BWD, OP_POOL_F32_BWD, OP_RELU_F32_BWD, OP_OPTIM,
};

enum { TENSOR_ON_HOST = 1, TENSOR_ON_OCL = 2 };

struct tensor {
	struct npu_tensor_desc d;
	float *cscales;
	void *cdata;
	size_t bytes;
	npu_buffer *buf;		/* device plans */
	void *host;			/* CPU view: the mapping, or malloc'd */
	int alias;			/* a reshape's output: the tensor whose
					 * storage it is, else -1 */
	cl_mem mem;			/* its OpenCL buffer, once an op there uses it */
	int valid;			/* TENSOR_ON_HOST | TENSOR_ON_OCL: current copies */
	int param;			/* trained by npu_graph_optimizer */
	int grad;			/* its gradient tensor, else -1 */
};

/* One training command of a lowered fp32 op; t[] are its tensors (-1: none). */
enum fstep_kind { FS_GEMM, FS_CONV, FS_POOL, FS_ELT, FS_REDUCE, FS_XENT, FS_OPTIM };

struct fstep {
	enum fstep_kind kind;
	int t[4];
	union {
		struct npu_gemm_f32 gemm;	/* t: A, B, C */
		struct {
			struct npu_conv2d_f32 p;
			enum npu_conv_pass pass;
		} conv;				/* t: x, w, y */
		struct npu_pool_f32 pool;	/* t: x, y, dx */
		struct npu_eltwise_f32 elt;	/* t: a, b, out */
		struct npu_reduce_f32 red;	/* t: in, out */
		struct npu_xent_f32 xent;	/* t: logits, labels, loss, dlogits */
		struct npu_optim_f32 opt;	/* t: w, g, m, v */
	} p;
};

struct op {
	enum op_kind kind;
	int in, in2, bias, out;
	uint32_t stride, pad, k;
	int depthwise, average;
	enum npu_activation act;
	float beta;
	int *ins;			/* concat: its inputs, and their sizes */
	uint32_t *axis_dims;		/* along the axis; owned by the op */
	uint32_t nin, axis;
	uint32_t lo[4], hi[4];		/* pad: before/after; transpose: lo = perm */
	/* fp32 ops: gradients (-1: not needed) and optimizer state */
	int gin, gw, gb, gout;
	int m, v;
	struct npu_optim_f32 opt;
	int backward;			/* added by npu_graph_backward/optimizer */
	/* compiled */
	enum npu_backend backend;
	int32_t *mult, *shift;
	npu_buffer *qbuf;
	cl_mem qmem[2];			/* OpenCL: mult and shift */
	struct fstep *steps;		/* fp32 ops: their commands */
	int nsteps;
	union {
		struct npu_conv2d_i8 conv;
		struct npu_gemm_i8 gemm;
		struct npu_pool_i8 pool;
		struct npu_eltwise_i8 elt;
		struct npu_softmax_i8 sm;
		struct npu_concat cat;
		struct npu_pad pad;
		struct npu_transpose tr;
		struct npu_quantize q;
	} p;
};

struct npu_graph {
	struct tensor *t;
	int nt;
	struct op *ops;
	int nops;
	int compiled;
	int has_backward;
	npu_plan *plan;			/* the live plan, if compiled */
	char report[8192];		/* the last compile's placement */
};

struct npu_plan {
	npu_graph *g;
	npu_device *dev;
	npu_cmdbuf *cb;
	npu_ocl *ocl;			/* when ops run on OpenCL */
	int ocl_pending;		/* kernels queued since the last wait */
	uint64_t cycles;
	uint32_t train_steps;		/* training runs so far: Adam's step */
	float *lo, *hi;			/* observed ranges per tensor (graph_quant.c) */
	int observed;
};

int graph_valid_id(const npu_graph *g, int id, int constant);
/* An activation (not a constant) of type @dt. */
int graph_act_of(const npu_graph *g, int id, enum npu_dtype dt);
int graph_add_op(npu_graph *g, const struct op *o);
/* A tensor of the graph's own (gradients, optimizer state): zeros. */
int graph_add_tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims);
/* The tensor whose storage @id is (itself, or what its view aliases). */
int graph_root(const npu_graph *g, int id);
size_t graph_elem_size(enum npu_dtype dt);

/* Work out an op's command parameters (int8) or lower it into steps (fp32). */
int graph_prepare_op(npu_graph *g, struct op *o);
/* A tensor's device VA (0 for -1, or on the CPU). */
uint64_t graph_va(const npu_plan *p, int id);
/* Run the forward ops, and the backward ones too with @train. */
int graph_exec(npu_plan *p, int train);

/* The tensors step @step of @o reads and writes (@step -1: an int8 op); counts back. */
#define GRAPH_MAX_IO	(NPU_CONCAT_MAX_INPUTS + 4)
void graph_op_io(const npu_graph *g, const struct op *o, int step, int *rd, int *nrd, int *wr,
		 int *nwr);
/* Make tensor @id current on the host (waiting for OpenCL if it must); 0 or an error. */
int graph_sync_host(npu_plan *p, int id);

/* graph_ocl.c */
/* Whether OpenCL can run @o; if not, *why says so. */
int graph_ocl_can_run(const npu_plan *p, const struct op *o, const char **why);
/* Make tensor @id current in its OpenCL buffer (made on first use). */
int graph_ocl_upload(npu_plan *p, int id);
/* Bring tensor @id back to the host if only OpenCL has it. */
int graph_ocl_download(npu_plan *p, int id);
/* An OpenCL buffer for @id that the op will write whole (nothing copied in). */
int graph_ocl_output(npu_plan *p, int id);
/* What an op placed on OpenCL needs there before it runs (its multipliers). */
int graph_ocl_prepare(npu_plan *p, struct op *o);
/* Enqueue op @o (step @step, -1: an int8 op) on OpenCL. */
int graph_ocl_run(npu_plan *p, const struct op *o, int step);
/* Wait for what is queued on OpenCL. */
int graph_ocl_wait(npu_plan *p);
void graph_ocl_free(npu_plan *p);

/* graph_train.c */
int graph_fc_f32(npu_graph *g, int in, int w, int b, int out, enum npu_activation act);
int graph_conv_f32(npu_graph *g, int in, int w, int b, int out, uint32_t stride, uint32_t pad,
		   enum npu_activation act);
int graph_pool_f32(npu_graph *g, int in, int out, uint32_t k, uint32_t stride, int average);
/* Lower an fp32 op into its steps (o->steps); 0 or an error. */
int graph_lower_f32(npu_graph *g, struct op *o);
/* The firmware command each step needs. */
uint32_t graph_step_cmd(const struct fstep *s);
int graph_step_emit(npu_plan *p, const struct fstep *s);
int graph_step_run(npu_plan *p, const struct fstep *s);
/* An optimizer step's parameters now: Adam's step count is the plan's. */
struct npu_optim_f32 graph_optim_now(const npu_plan *p, const struct fstep *s);
const char *graph_op_name_f32(const struct op *o);

#pragma GCC visibility pop

#endif /* GRAPH_PRIV_H */
