/* SPDX-License-Identifier: MIT */
/*
 * ocl_priv.h - the OpenCL backend inside libnpu: the device and its one
 * program (ocl.c), and each op enqueued on buffers already on the device
 * (ocl_ops.c), which the graph (graph_ocl.c) and the one-call helpers use.
 */
#ifndef OCL_PRIV_H
#define OCL_PRIV_H

#include "npu.h"
#include "backends/opencl/ocl_api.h"
#include "backends/opencl/ocl_flags.h"
#include "ref/ref_nd.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

#define OCL_MAX_KERNELS	32

struct npu_ocl {
	struct ocl_api api;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	cl_program prog;			/* every kernel of libnpu, built once */
	struct {
		const char *name;
		cl_kernel k;
	} kern[OCL_MAX_KERNELS];
	int nkern;
	cl_mem flag;		/* set by a kernel that met bad data; read by ocl_finish */
	cl_mem dummy;		/* bound where an op has no such operand */
	int unified;		/* the device works in host memory: buffers wrap it */
	int fp64;		/* cl_khr_fp64: dequantize can round as the reference */
	int exact_div;		/* correctly rounded fp32 division and sqrt */
	cl_ulong max_alloc;
	char name[128], driver[64];
	int no_zero_copy;	/* NPU_OCL_NO_ZERO_COPY=1 */
	/*
	 * Work-group tiles in local memory (nd_matmul_f32_tiles): by default
	 * where the device's local memory is its own (a GPU's), not global
	 * memory (a CPU's); NPU_OCL_TILES=1 or 0 says otherwise, where the
	 * device can run them (@tiles_fit).
	 */
	int tiles, tiles_fit;
	char cache_dir[448];	/* the binary cache (ocl_cache.c); "" for none */
	char cache_note[512];	/* where it is, or why there is none */
	unsigned int builds, cache_hits;	/* programs built from source, loaded */
	unsigned long to_device, to_host;	/* crossings: ocl_to_device/to_host calls */
	char why[8192];				/* the last error, with a build log */
};

/* The OpenCL C source of every kernel (generated from libnpu/src/kernels). */
extern const char ocl_program_src[];

/*
 * Build @src for the device, from the binary cache when it has it; on a
 * compile error, NPU_EIO with the compiler's log in @why.
 */
int ocl_build(struct npu_ocl *o, const char *src, const char *opts, cl_program *out,
	      char *why, size_t len);
/* ocl_cache.c: choose and check the cache folder (at open). */
void ocl_cache_open(struct npu_ocl *o);
/* The program built from @src with @opts, from the cache, or NULL. */
cl_program ocl_cache_load(struct npu_ocl *o, const char *src, const char *opts);
/* Keep @prog's binary for next time. */
void ocl_cache_store(struct npu_ocl *o, cl_program prog, const char *src, const char *opts);
/* The kernel called @name, building the program on first use. */
int ocl_kernel(struct npu_ocl *o, const char *name, cl_kernel *k);

/* One kernel argument: @size bytes at @val (a cl_mem's address for buffers). */
struct karg {
	size_t size;
	const void *val;
};

#define KMEM(m)	{ sizeof(cl_mem), &(m) }
#define KVAL(v)	{ sizeof(v), &(v) }

/* Enqueue kernel @name over @n work-items (@dims 1) or @global[2]; 0 or NPU_EIO. */
int ocl_enqueue(struct npu_ocl *o, const char *name, const struct karg *args, cl_uint nargs,
		cl_uint dims, const size_t *global);
/* ... in work-groups of @local (@global whole groups of it). */
int ocl_enqueue_local(struct npu_ocl *o, const char *name, const struct karg *args,
		      cl_uint nargs, cl_uint dims, const size_t *global, const size_t *local);
/*
 * A buffer of @size bytes. With @host on a device that shares host
 * memory, the buffer is @host itself (no copies); otherwise device memory,
 * filled from @host when @copy.
 */
cl_mem ocl_buffer(struct npu_ocl *o, size_t size, void *host, int copy);
int ocl_write(struct npu_ocl *o, cl_mem m, size_t size, const void *src);
int ocl_read(struct npu_ocl *o, cl_mem m, size_t size, void *dst);
/*
 * Make buffer @m (from ocl_buffer with @host) current on the device, or
 * @host current from it: a copy, or on a buffer that wraps @host, a map
 * and unmap, which is how OpenCL hands wrapped memory between the two.
 */
int ocl_to_device(struct npu_ocl *o, cl_mem m, size_t size, const void *host);
int ocl_to_host(struct npu_ocl *o, cl_mem m, size_t size, void *host);
/* Wait for what is queued; NPU_EINVAL if a kernel flagged bad data. */
int ocl_finish(struct npu_ocl *o);
/* An eventfd that becomes readable when what is queued now has run. */
int ocl_fence_fd(struct npu_ocl *o);
void ocl_release(struct npu_ocl *o, cl_mem *m, size_t n);

/* ocl_nd.c: the N-dimensional ops (ir/nd_params.h) on device buffers (NULL: absent). */
/* @relu: then negatives made zero (NPU_EF_RELU); for an fp32 arithmetic op only. */
int ocl_nd_binary(struct npu_ocl *o, const struct nd_binary *p, cl_mem a, cl_mem b, cl_mem y,
		  int relu);
int ocl_nd_unary(struct npu_ocl *o, const struct nd_unary *p, cl_mem x, cl_mem y);
/* y[i] = table[x[i]] over @count bytes (a quantized activation). */
int ocl_nd_lut(struct npu_ocl *o, uint64_t count, cl_mem x, cl_mem table, cl_mem y);
int ocl_nd_matmul(struct npu_ocl *o, const struct nd_matmul *p, cl_mem a, cl_mem b, cl_mem azp,
		  cl_mem bzp, cl_mem y);
int ocl_nd_conv(struct npu_ocl *o, const struct nd_conv *p, cl_mem x, cl_mem w, cl_mem bias,
		cl_mem xzp, cl_mem wzp, cl_mem y);
int ocl_nd_pool(struct npu_ocl *o, const struct nd_pool *p, cl_mem x, cl_mem y, cl_mem idx);
int ocl_nd_softmax(struct npu_ocl *o, const struct nd_softmax *p, cl_mem x, cl_mem mask,
		   cl_mem y);
int ocl_nd_layernorm(struct npu_ocl *o, const struct nd_layernorm *p, cl_mem x, cl_mem scale,
		     cl_mem bias, cl_mem y, cl_mem mean, cl_mem inv);
int ocl_nd_pad(struct npu_ocl *o, const struct nd_pad *p, cl_mem x, cl_mem y);
/* Resize reads a table of its taps, made once by the host (compile). */
size_t ocl_nd_resize_table_bytes(const struct nd_resize *p);
void ocl_nd_resize_table(const struct nd_resize *p, float *tab);
int ocl_nd_resize(struct npu_ocl *o, const struct nd_resize *p, cl_mem x, cl_mem table,
		  cl_mem y);
int ocl_nd_qdq(struct npu_ocl *o, const struct nd_qdq *p, cl_mem x, cl_mem scale, cl_mem zp,
	       cl_mem y);
int ocl_nd_where(struct npu_ocl *o, const struct nd_where *p, cl_mem c, cl_mem a, cl_mem b,
		 cl_mem y);
int ocl_nd_copy(struct npu_ocl *o, const struct nd_copy *p, cl_mem x, cl_mem y);
int ocl_nd_gather(struct npu_ocl *o, const struct nd_gather *p, cl_mem x, cl_mem idx, cl_mem y);
int ocl_nd_reduce(struct npu_ocl *o, const struct nd_reduce *p, cl_mem x, cl_mem y);
/* The gradients (kernels/ops_nd_grad.cl): tensors in their kernels' order. */
int ocl_nd_softmax_grad(struct npu_ocl *o, const struct nd_softmax *p, cl_mem y, cl_mem dy,
			cl_mem dx);
int ocl_nd_layernorm_grad(struct npu_ocl *o, const struct nd_layernorm *p, cl_mem const *m);
int ocl_nd_unary_grad(struct npu_ocl *o, const struct nd_unary *p, cl_mem x, cl_mem dy,
		      cl_mem dx);

/* ocl_ops.c: each op on device buffers (NULL: no such operand), validated first. */
int ocl_gemm_i8(struct npu_ocl *o, const struct npu_gemm_i8 *p, cl_mem a, cl_mem b,
		cl_mem bias, cl_mem mult, cl_mem shift, cl_mem out);
/*
 * Weights a kernel keeps transformed from run to run while they stay
 * constant (npu_backend_env.fixed): made again when the buffer or the
 * generation (npu_run_args.consts_written) moves.
 */
struct ocl_kept {
	cl_mem m;		/* the transformed copy, or NULL */
	cl_mem src;		/* the buffer it was made from */
	uint64_t gen;		/* the generation it was made at */
};

/* @kept: the filter kept packed while constant (generation @gen), or NULL. */
int ocl_conv2d_i8(struct npu_ocl *o, const struct npu_conv2d_i8 *p, cl_mem in, cl_mem filter,
		  cl_mem bias, cl_mem mult, cl_mem shift, cl_mem out, struct ocl_kept *kept,
		  uint64_t gen);
int ocl_pool_i8(struct npu_ocl *o, const struct npu_pool_i8 *p, cl_mem in, cl_mem out);
int ocl_eltwise_i8(struct npu_ocl *o, const struct npu_eltwise_i8 *p, cl_mem a, cl_mem b,
		   cl_mem out);
int ocl_softmax_i8(struct npu_ocl *o, const struct npu_softmax_i8 *p, cl_mem in, cl_mem out);
int ocl_quantize(struct npu_ocl *o, const struct npu_quantize *p, cl_mem in, cl_mem out);
int ocl_pad(struct npu_ocl *o, const struct npu_pad *p, cl_mem in, cl_mem out);
int ocl_transpose(struct npu_ocl *o, const struct npu_transpose *p, cl_mem in, cl_mem out);
int ocl_concat(struct npu_ocl *o, const struct npu_concat *p, const cl_mem *in, cl_mem out);
int ocl_gemm_f32(struct npu_ocl *o, const struct npu_gemm_f32 *p, cl_mem a, cl_mem b,
		 cl_mem c);
/* What a forward fp32 convolution does beyond npu_conv2d_f32's sums. */
struct ocl_conv_ext {
	struct ocl_kept *kept;	/* its weights kept packed, or NULL if they may change */
	uint64_t gen;		/* their generation (npu_run_args.consts_written) */
	cl_mem bias;		/* out_c values added to the sums (NPU_EF_BIAS), or NULL */
	int relu;		/* then negatives made zero (NPU_EF_RELU) */
};

/* @ext: NULL for the sums alone; only for NPU_CONV_FORWARD. */
int ocl_conv2d_f32(struct npu_ocl *o, const struct npu_conv2d_f32 *p, enum npu_conv_pass pass,
		   cl_mem x, cl_mem w, cl_mem y, const struct ocl_conv_ext *ext);
int ocl_pool_f32(struct npu_ocl *o, const struct npu_pool_f32 *p, cl_mem x, cl_mem y,
		 cl_mem dx);
int ocl_eltwise_f32(struct npu_ocl *o, const struct npu_eltwise_f32 *p, cl_mem a, cl_mem b,
		    cl_mem out);
int ocl_reduce_f32(struct npu_ocl *o, const struct npu_reduce_f32 *p, cl_mem in, cl_mem out);
int ocl_xent_f32(struct npu_ocl *o, const struct npu_xent_f32 *p, cl_mem logits,
		 cl_mem labels, cl_mem loss, cl_mem dlogits);
int ocl_optim_f32(struct npu_ocl *o, const struct npu_optim_f32 *p, cl_mem w, cl_mem g,
		  cl_mem m, cl_mem v);

#pragma GCC visibility pop

#endif /* OCL_PRIV_H */
