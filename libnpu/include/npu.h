/* SPDX-License-Identifier: MIT */
/*
 * npu.h - libnpu, the userspace library of the open NPU stack.
 *
 * The core: find NPUs, read what they are, allocate buffers the NPU and
 * the CPU share, build command buffers, submit jobs with dependencies,
 * wait for them and read their status; graphs compiled into plans that
 * run on the NPU, OpenCL, the CPU or an application's backend. Every
 * function returns 0 or a negative NPU_E* code; npu_strerror() turns a
 * code into a message, and npu_last_error() (or npu_graph_error(),
 * npu_plan_error()) says what exactly went wrong. Objects are not
 * thread-safe; use one per thread or lock around them.
 *
 * ABI (Documentation/libnpu.rst, "ABI policy"): structs the caller
 * allocates are passed with their size: a function taking one is a macro
 * over a *_v function whose first argument is the struct's sizeof as the
 * caller was built, so that a struct may grow at its end without
 * breaking programs built against an older npu.h. Initialize structs by
 * field name. The soname (libnpu.so.N) changes only when an existing
 * symbol changes meaning.
 */
#ifndef NPU_H
#define NPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header belongs to; npu_version() says the library's. */
#define NPU_VERSION_MAJOR 2	/* the soname: libnpu.so.2 */
#define NPU_VERSION_MINOR 6	/* additions */
#define NPU_VERSION_PATCH 0

/** Error codes (negative return values). */
enum npu_error {
	NPU_OK = 0,
	NPU_ENODEV = -1,	/* no NPU (or no such index) */
	NPU_EINVAL = -2,	/* an argument is invalid */
	NPU_ENOMEM = -3,	/* out of memory (host or device) */
	NPU_EIO = -4,		/* the driver refused or failed; see errno */
	NPU_ETIMEDOUT = -5,	/* the wait ended before the job */
	NPU_EJOB = -6,		/* a job finished with an error status */
	NPU_E2BIG = -7,		/* larger than the device allows */
	NPU_ENOSPC = -8,	/* a command buffer is full */
	NPU_EBUSY = -9,		/* still in use (e.g. by a pending job) */
	NPU_ENOTSUP = -10,	/* the backend asked for cannot run an op (strict placement) */
};

/** Returns a static, human-readable message for an npu_error code. */
const char *npu_strerror(int err);
/**
 * What the calling thread's last failed libnpu call said, in detail
 * ("conv2d: the filter [8][3][3][4] must be [out_c 8][k_h][k_w][in_c 3]"),
 * or "" if none failed yet.
 */
const char *npu_last_error(void);
/** The library's version at run time: major << 16 | minor << 8 | patch. */
uint32_t npu_version(void);

/* Words of npu_device_info.cmd_caps: more bits than the opcode space. */
#define NPU_CMD_CAPS_WORDS 4

typedef struct npu_device npu_device;
typedef struct npu_buffer npu_buffer;
typedef struct npu_cmdbuf npu_cmdbuf;
typedef struct npu_job npu_job;

/* ---------------------------------------------------------------- */
/* Devices                                                           */
/* ---------------------------------------------------------------- */

/** Number of NPUs: /dev/accel nodes whose driver is "npu". */
int npu_device_count(void);

/**
 * Open NPU number @index (0-based, in /dev/accel order). Threads may share
 * a device; each command buffer, job, graph and plan is used by one thread
 * at a time.
 */
int npu_open(int index, npu_device **dev);
void npu_close(npu_device *dev);

struct npu_device_info {
	char node[64];		/* e.g. /dev/accel/accel0 */
	uint32_t hw_version;	/* major << 16 | minor */
	uint32_t fw_version;	/* major << 16 | minor << 8 | patch */
	uint32_t fw_api;	/* major << 16 | minor */
	uint32_t num_rings;
	uint32_t sram_size;
	uint32_t max_cmd_size;
	uint64_t max_buffer_size;
	/* bit n % 64 of word n / 64: command opcode n supported; see npu_device_has_command */
	uint64_t cmd_caps[NPU_CMD_CAPS_WORDS];
	uint32_t fw_caps;	/* NPU_FW_CAP_* (npu_fw.h): e.g. ONNX's requantization */
	uint32_t reserved;	/* zero */
};
int npu_device_info_v(size_t size, npu_device *dev, struct npu_device_info *info);
#define npu_device_info(...) npu_device_info_v(sizeof(struct npu_device_info), __VA_ARGS__)
/** Whether the device's firmware runs command opcode @opcode (npu_cmd.h): 1 or 0. */
int npu_device_has_command(const npu_device *dev, uint32_t opcode);

/* ---------------------------------------------------------------- */
/* Buffers: memory the CPU maps and the NPU addresses by device VA.  */
/* ---------------------------------------------------------------- */

int npu_buffer_alloc(npu_device *dev, size_t size, npu_buffer **buf);
void npu_buffer_free(npu_buffer *buf);
/** CPU mapping (made on first use, kept until free); NULL on failure. */
void *npu_buffer_map(npu_buffer *buf);
uint64_t npu_buffer_va(const npu_buffer *buf);
size_t npu_buffer_size(const npu_buffer *buf);
/** Export as a dma-buf file descriptor (the caller closes it). */
int npu_buffer_export(npu_buffer *buf, int *dmabuf_fd);
/**
 * Import a dma-buf (from this or another device or process). A dma-buf of
 * a buffer this same npu_device already holds yields that buffer's handle:
 * keep only one of the two npu_buffer objects.
 */
int npu_buffer_import(npu_device *dev, int dmabuf_fd, npu_buffer **buf);

/* ---------------------------------------------------------------- */
/* Command buffers (the firmware's command stream, npu_cmd.h)        */
/* ---------------------------------------------------------------- */

/** A command buffer of up to @capacity bytes of commands. */
int npu_cmdbuf_new(npu_device *dev, size_t capacity, npu_cmdbuf **cb);
void npu_cmdbuf_free(npu_cmdbuf *cb);
/** Forget the commands; fails with NPU_EBUSY while a job still uses them. */
int npu_cmdbuf_reset(npu_cmdbuf *cb);
size_t npu_cmdbuf_used(const npu_cmdbuf *cb);

int npu_cmd_nop(npu_cmdbuf *cb);
int npu_cmd_copy(npu_cmdbuf *cb, uint64_t dst_va, uint64_t src_va, uint64_t len);
int npu_cmd_fill(npu_cmdbuf *cb, uint64_t dst_va, uint64_t len, uint32_t pattern);
int npu_cmd_timestamp(npu_cmdbuf *cb, uint64_t dst_va);
int npu_cmd_barrier(npu_cmdbuf *cb);

/* ---------------------------------------------------------------- */
/* Int8 tensor operations (TFLite int8 semantics, Documentation/     */
/* quantization.rst)                                                 */
/* ---------------------------------------------------------------- */

/**
 * An int8 GEMM / fully connected layer: out[m][n] = requant(bias[n] +
 * sum_k (a[m][k] - a_zero) * b[n][k]) + out_zero, clamped to
 * [act_min, act_max]; a is m x k, b (weights) n x k, out m x n, all
 * row-major and packed; per output channel multiplier and shift (or one
 * for all with @per_tensor).
 */
/**
 * How an int8 op's accumulator becomes int8 (Documentation/onnx.rst,
 * "Requantization: two modes"): TFLite's Q31 multiplier and shift, or
 * ONNX's fp32 multiplier rounded half to even, whose bits then stand in
 * the multiplier array (npu_f32 bits) and whose shifts are 0.
 */
enum npu_requant {
	NPU_REQUANT_TFLITE = 0,
	NPU_REQUANT_ONNX = 1,
	NPU_REQUANT_ORT = 2,	/* eltwise add only: onnxruntime's QLinearAdd (npu_quant.h) */
};

struct npu_gemm_i8 {
	uint32_t m, n, k;
	int32_t a_zero, out_zero;
	int32_t act_min, act_max;
	int per_tensor;
	uint32_t requant;	/* enum npu_requant */
};

/** Append a GEMM on device buffers (by VA); @quant_va: npu_quant_ch[]. */
int npu_cmd_gemm_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_gemm_i8 *p, uint64_t a_va,
		    uint64_t b_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va);
#define npu_cmd_gemm_i8(...) npu_cmd_gemm_i8_v(sizeof(struct npu_gemm_i8), __VA_ARGS__)

/**
 * The CPU reference: plain, obviously correct C, the oracle every other
 * implementation is compared with. @bias may be NULL; @mult and @shift
 * have n entries (1 with per_tensor).
 */
int npu_ref_gemm_i8_v(size_t size, const struct npu_gemm_i8 *p, const int8_t *a, const int8_t *b,
		    const int32_t *bias, const int32_t *mult, const int32_t *shift,
		    int8_t *out);
#define npu_ref_gemm_i8(...) npu_ref_gemm_i8_v(sizeof(struct npu_gemm_i8), __VA_ARGS__)

/**
 * An int8 2-D convolution, NHWC (TFLite Conv2D / DepthwiseConv2D int8):
 * input [batch][in_h][in_w][in_c], filter [out_c][k_h][k_w][in_c] (or
 * [1][k_h][k_w][out_c] when @depthwise, out_c a multiple of in_c), output
 * [batch][out_h][out_w][out_c]; zero-point padding of @pad_top, @pad_left
 * (the bottom and right follow from the output size).
 */
struct npu_conv2d_i8 {
	uint32_t batch, in_h, in_w, in_c;
	uint32_t out_h, out_w, out_c;
	uint32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w;
	uint32_t pad_top, pad_left;
	int32_t in_zero, out_zero, act_min, act_max;
	int per_tensor, depthwise;
	uint32_t groups;	/* 0 or 1: none; G: G convolutions of in_c/G channels
				 * each, filter [out_c][k_h][k_w][in_c/G] (not on the NPU) */
	uint32_t requant;	/* enum npu_requant */
};

int npu_cmd_conv2d_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_conv2d_i8 *p, uint64_t in_va,
		      uint64_t filter_va, uint64_t bias_va, uint64_t quant_va, uint64_t out_va);
#define npu_cmd_conv2d_i8(...) npu_cmd_conv2d_i8_v(sizeof(struct npu_conv2d_i8), __VA_ARGS__)
/** The CPU reference of the convolution (see npu_ref_gemm_i8). */
int npu_ref_conv2d_i8_v(size_t size, const struct npu_conv2d_i8 *p, const int8_t *in, const int8_t *filter,
		      const int32_t *bias, const int32_t *mult, const int32_t *shift,
		      int8_t *out);
#define npu_ref_conv2d_i8(...) npu_ref_conv2d_i8_v(sizeof(struct npu_conv2d_i8), __VA_ARGS__)

/**
 * Int8 max or average pooling, NHWC (TFLite MaxPool2D / AveragePool2D):
 * input and output share their quantization.
 */
struct npu_pool_i8 {
	uint32_t batch, in_h, in_w, c, out_h, out_w;
	uint32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
	int32_t act_min, act_max;
	int average;
};

int npu_cmd_pool_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_pool_i8 *p, uint64_t in_va,
		    uint64_t out_va);
#define npu_cmd_pool_i8(...) npu_cmd_pool_i8_v(sizeof(struct npu_pool_i8), __VA_ARGS__)
int npu_ref_pool_i8_v(size_t size, const struct npu_pool_i8 *p, const int8_t *in, int8_t *out);
#define npu_ref_pool_i8(...) npu_ref_pool_i8_v(sizeof(struct npu_pool_i8), __VA_ARGS__)

/**
 * Int8 elementwise add or mul (TFLite Add / Mul). With @rank 0 the three
 * tensors have @count elements each. With @rank 1-4 the output is
 * @out_dims (@count their product) and each input broadcasts to it as
 * numpy does: its dims (@a_dims, @b_dims, aligned to the right, the
 * missing ones 1) are 1 or the output's. The NPU's command has no
 * broadcasting (npu_cmd_eltwise_i8 refuses @rank); the CPU reference and
 * OpenCL have it.
 */
struct npu_eltwise_i8 {
	uint32_t count;
	int mul;			/* 0: add, 1: mul */
	int32_t a_zero, b_zero, out_zero, act_min, act_max;
	int32_t a_mult, a_shift, b_mult, b_shift;	/* add only */
	int32_t out_mult, out_shift;
	uint32_t left_shift;		/* add only; TFLite uses 20 */
	uint32_t rank;			/* 0: same shapes; 1-4: broadcasting */
	uint32_t out_dims[4], a_dims[4], b_dims[4];
	/*
	 * enum npu_requant: ONNX's (DQ -> Add / Mul -> Q in fp32, ties to
	 * even), the mults then the bits of the fp32 scales of a, b and the
	 * output, shifts and left_shift 0. onnxruntime's QLinearAdd (add
	 * only; npu_eltwise_ort_add_i8): a_mult, b_mult and out_mult the bits
	 * of a_scale / c_scale, b_scale / c_scale and the fixed part,
	 * a_shift the values' offset (0, or 128 for uint8 stored as int8),
	 * b_shift its mode (0 both vectors, 1 b, 2 a one value per span),
	 * out_shift and left_shift 0.
	 */
	uint32_t requant;
};

int npu_cmd_eltwise_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_eltwise_i8 *p, uint64_t a_va,
		       uint64_t b_va, uint64_t out_va);
#define npu_cmd_eltwise_i8(...) npu_cmd_eltwise_i8_v(sizeof(struct npu_eltwise_i8), __VA_ARGS__)
int npu_ref_eltwise_i8_v(size_t size, const struct npu_eltwise_i8 *p, const int8_t *a, const int8_t *b,
		       int8_t *out);
#define npu_ref_eltwise_i8(...) npu_ref_eltwise_i8_v(sizeof(struct npu_eltwise_i8), __VA_ARGS__)

/**
 * fp32 <-> int8 (TFLite Quantize / Dequantize): q = clamp(round(x / scale)
 * + zero_point) with round half away from zero, in float; x = scale * (q -
 * zero_point) in double, stored as float. NaN quantizes to the zero point,
 * out-of-range values saturate.
 */
struct npu_quantize {
	uint32_t count;
	int dequantize;		/* 0: fp32 -> int8, 1: int8 -> fp32 */
	double scale;
	int32_t zero_point;
	uint32_t reserved;	/* zero: the struct has no tail padding to grow into */
};

int npu_cmd_quantize_v(size_t size, npu_cmdbuf *cb, const struct npu_quantize *p, uint64_t in_va,
		     uint64_t out_va);
#define npu_cmd_quantize(...) npu_cmd_quantize_v(sizeof(struct npu_quantize), __VA_ARGS__)
int npu_ref_quantize_v(size_t size, const struct npu_quantize *p, const void *in, void *out);
#define npu_ref_quantize(...) npu_ref_quantize_v(sizeof(struct npu_quantize), __VA_ARGS__)

/**
 * Int8 softmax over the last dimension (TFLite Softmax, int8 in, int8 out
 * with scale 1/256 and zero point -128). npu_softmax_params() computes
 * @beta_mult, @beta_left_shift and @diff_min from the input scale and beta
 * as TFLite's PreprocessSoftmaxScaling and CalculateInputRadius do.
 */
struct npu_softmax_i8 {
	uint32_t rows, depth;
	int32_t beta_mult, beta_left_shift, diff_min;
};

int npu_softmax_params_v(size_t size, double input_scale, double beta, struct npu_softmax_i8 *p);
#define npu_softmax_params(...) npu_softmax_params_v(sizeof(struct npu_softmax_i8), __VA_ARGS__)
int npu_cmd_softmax_i8_v(size_t size, npu_cmdbuf *cb, const struct npu_softmax_i8 *p, uint64_t in_va,
		       uint64_t out_va);
#define npu_cmd_softmax_i8(...) npu_cmd_softmax_i8_v(sizeof(struct npu_softmax_i8), __VA_ARGS__)
int npu_ref_softmax_i8_v(size_t size, const struct npu_softmax_i8 *p, const int8_t *in, int8_t *out);
#define npu_ref_softmax_i8(...) npu_ref_softmax_i8_v(sizeof(struct npu_softmax_i8), __VA_ARGS__)

/** Permute the dimensions of a packed tensor: out dim i = in dim perm[i]. */
struct npu_transpose {
	uint32_t rank;			/* 1..4 */
	uint32_t elem_size;		/* 1, 2 or 4 bytes */
	uint32_t dims[4], perm[4];	/* entries past rank zero */
};

int npu_cmd_transpose_v(size_t size, npu_cmdbuf *cb, const struct npu_transpose *p, uint64_t in_va,
		      uint64_t out_va);
#define npu_cmd_transpose(...) npu_cmd_transpose_v(sizeof(struct npu_transpose), __VA_ARGS__)
int npu_ref_transpose_v(size_t size, const struct npu_transpose *p, const void *in, void *out);
#define npu_ref_transpose(...) npu_ref_transpose_v(sizeof(struct npu_transpose), __VA_ARGS__)

/** Pad an int8 tensor with a constant (the zero point, for TFLite Pad). */
struct npu_pad {
	uint32_t rank;
	uint32_t dims[4], before[4], after[4];	/* entries past rank zero */
	int32_t value;
};

int npu_cmd_pad_v(size_t size, npu_cmdbuf *cb, const struct npu_pad *p, uint64_t in_va, uint64_t out_va);
#define npu_cmd_pad(...) npu_cmd_pad_v(sizeof(struct npu_pad), __VA_ARGS__)
int npu_ref_pad_v(size_t size, const struct npu_pad *p, const int8_t *in, int8_t *out);
#define npu_ref_pad(...) npu_ref_pad_v(sizeof(struct npu_pad), __VA_ARGS__)

#define NPU_CONCAT_MAX_INPUTS	64

/**
 * Concatenate packed tensors along @axis (TFLite Concatenation; quantized
 * inputs must share the output's scale and zero point). The inputs agree
 * on every dimension but @axis; input i has @axis_dims[i] there, and the
 * output the sum. The dimensions before @axis multiply to at most 2^22.
 * Reshape needs no command: packed tensors reshape in place (graphs:
 * npu_graph_reshape).
 */
struct npu_concat {
	uint32_t rank;			/* 1..4 */
	uint32_t elem_size;		/* 1, 2 or 4 bytes */
	uint32_t axis;			/* < rank */
	uint32_t count;			/* inputs, 1..NPU_CONCAT_MAX_INPUTS */
	uint32_t dims[4];		/* shared dims; [axis] ignored, past rank 0 */
	const uint32_t *axis_dims;	/* @count sizes along @axis, >= 1 each */
};

/* One NPU command per input; @in_va holds @count addresses. */
int npu_cmd_concat_v(size_t size, npu_cmdbuf *cb, const struct npu_concat *p, const uint64_t *in_va,
		   uint64_t out_va);
#define npu_cmd_concat(...) npu_cmd_concat_v(sizeof(struct npu_concat), __VA_ARGS__)
int npu_ref_concat_v(size_t size, const struct npu_concat *p, const void *const *in, void *out);
#define npu_ref_concat(...) npu_ref_concat_v(sizeof(struct npu_concat), __VA_ARGS__)

/*
 * One-call helpers: one op on host arrays, compiled as a one-node graph
 * and placed like any graph: on @dev's NPU when its firmware has the op,
 * otherwise on OpenCL, otherwise on the CPU reference, as NPU_BACKEND and
 * NPU_STRICT say (strict with neither: NPU_ENOTSUP). Same arguments as
 * the npu_ref_* functions, and the same NPU_EINVAL for bad parameters
 * whatever runs them; NPU_EJOB for a failed NPU job. Buffers are made per
 * call; NPU_ENOMEM when a size does not fit.
 */
int npu_run_gemm_i8_v(size_t size, npu_device *dev, const struct npu_gemm_i8 *p, const int8_t *a,
		    const int8_t *b, const int32_t *bias, const int32_t *mult,
		    const int32_t *shift, int8_t *out);
#define npu_run_gemm_i8(...) npu_run_gemm_i8_v(sizeof(struct npu_gemm_i8), __VA_ARGS__)
int npu_run_conv2d_i8_v(size_t size, npu_device *dev, const struct npu_conv2d_i8 *p, const int8_t *in,
		      const int8_t *filter, const int32_t *bias, const int32_t *mult,
		      const int32_t *shift, int8_t *out);
#define npu_run_conv2d_i8(...) npu_run_conv2d_i8_v(sizeof(struct npu_conv2d_i8), __VA_ARGS__)
int npu_run_pool_i8_v(size_t size, npu_device *dev, const struct npu_pool_i8 *p, const int8_t *in,
		    int8_t *out);
#define npu_run_pool_i8(...) npu_run_pool_i8_v(sizeof(struct npu_pool_i8), __VA_ARGS__)
int npu_run_softmax_i8_v(size_t size, npu_device *dev, const struct npu_softmax_i8 *p, const int8_t *in,
		       int8_t *out);
#define npu_run_softmax_i8(...) npu_run_softmax_i8_v(sizeof(struct npu_softmax_i8), __VA_ARGS__)
int npu_run_eltwise_i8_v(size_t size, npu_device *dev, const struct npu_eltwise_i8 *p, const int8_t *a,
		       const int8_t *b, int8_t *out);
#define npu_run_eltwise_i8(...) npu_run_eltwise_i8_v(sizeof(struct npu_eltwise_i8), __VA_ARGS__)
int npu_run_quantize_v(size_t size, npu_device *dev, const struct npu_quantize *p, const void *in,
		     void *out);
#define npu_run_quantize(...) npu_run_quantize_v(sizeof(struct npu_quantize), __VA_ARGS__)
int npu_run_transpose_v(size_t size, npu_device *dev, const struct npu_transpose *p, const void *in,
		      void *out);
#define npu_run_transpose(...) npu_run_transpose_v(sizeof(struct npu_transpose), __VA_ARGS__)
int npu_run_pad_v(size_t size, npu_device *dev, const struct npu_pad *p, const int8_t *in, int8_t *out);
#define npu_run_pad(...) npu_run_pad_v(sizeof(struct npu_pad), __VA_ARGS__)
int npu_run_concat_v(size_t size, npu_device *dev, const struct npu_concat *p, const void *const *in,
		   void *out);
#define npu_run_concat(...) npu_run_concat_v(sizeof(struct npu_concat), __VA_ARGS__)

/* ---------------------------------------------------------------- */
/* Graphs: tensors and ops, compiled for a device (placement by the  */
/* firmware's capabilities) or for the CPU reference, then run.      */
/* ---------------------------------------------------------------- */

typedef struct npu_graph npu_graph;
typedef struct npu_plan npu_plan;

/**
 * An int8 tensor, NHWC for 4-D activations. Activations have a scale and
 * zero point; constant weights (data != NULL) are symmetric with one scale
 * per output channel (channel_scales along @quant_dim: 0 for conv and FC
 * weights, 3 for a depthwise filter [1][k_h][k_w][c], as TFLite's
 * quantized_dimension) or @scale for all.
 * Int32 bias constants use dtype NPU_DT_INT32 and scale in * weight.
 * NPU_DT_FLOAT32 activations (no scale or zero point) enter and leave the
 * int8 part of a graph through quantize and dequantize ops. An activation
 * of rank 0 has its shape inferred by the op that writes it (dtype and
 * quantization stay as given); npu_graph_tensor_info reads it back.
 */
/* The most dimensions a tensor has (ONNX's 3-D convolutions: N, C, D, H, W). */
#define NPU_MAX_RANK	6

enum npu_dtype {
	NPU_DT_INT8 = 1,
	NPU_DT_INT32 = 2,
	NPU_DT_FLOAT32 = 3,
	NPU_DT_UINT8 = 4,	/* ONNX's uint8: plain integers, or quantized ones */
	NPU_DT_INT64 = 5,	/* ONNX's shapes, indexes and token ids */
	NPU_DT_BOOL = 6,	/* one byte, 0 or 1: ONNX's masks and comparisons */
	NPU_DT_BFLOAT16 = 7,	/* the top half of an fp32: cast and matmul operands */
	NPU_DT_FLOAT16 = 8,	/* IEEE binary16: cast to and from fp32 (a model's fp16 I/O) */
};

/**
 * The order of a rank-4 tensor's dims. Ops work in NHWC (filters OHWI);
 * an NCHW tensor (ONNX's; an OIHW filter) gives its dims in that order,
 * and the graph converts it where an op meets it: a transpose is added
 * into an NHWC twin of an input (once per tensor; a constant's twin is a
 * transposed constant), and an op writes an NHWC twin of an NCHW output
 * that a transpose then writes. Only conv2d, pool, quantize, dequantize,
 * relu, and add and mul on NCHW operands alone, convert; other ops refuse
 * NCHW tensors (Documentation/libnpu.rst, "Layout"). Transpose, reshape
 * and custom ops see the dims as given.
 */
enum npu_layout { NPU_LAYOUT_NHWC = 0, NPU_LAYOUT_NCHW = 1 };

struct npu_tensor_desc {
	enum npu_dtype dtype;
	uint32_t rank;			/* 1..NPU_MAX_RANK; 0: inferred by the op that writes it */
	uint32_t dims[NPU_MAX_RANK];
	float scale;
	int32_t zero_point;
	const float *channel_scales;	/* dims[quant_dim] entries (weights), or NULL */
	const void *data;		/* constant contents, or NULL */
	uint32_t quant_dim;		/* the channel dimension: 0, or 3 for depthwise */
	uint32_t layout;		/* enum npu_layout: how a rank-4 tensor's dims go */
};

enum npu_activation { NPU_ACT_NONE = 0, NPU_ACT_RELU = 1, NPU_ACT_RELU6 = 2 };

/**
 * A graph is data: tensors and ops, checked as they are added (a refused
 * op's reason is in npu_graph_error). Compiling it makes a plan, which
 * holds everything a run needs; a graph may have many plans at once (for
 * different devices or backends), and cannot change while one is alive.
 */
npu_graph *npu_graph_new(void);
/** Free the graph and every plan compiled from it that is still alive. */
void npu_graph_free(npu_graph *g);
/** Add a tensor; returns its id (>= 0) or a negative error. */
int npu_graph_tensor_v(size_t size, npu_graph *g, const struct npu_tensor_desc *t);
#define npu_graph_tensor(...) npu_graph_tensor_v(sizeof(struct npu_tensor_desc), __VA_ARGS__)
/** What the last failed call on @g said ("" if none did). */
const char *npu_graph_error(const npu_graph *g);
/**
 * Declare the graph's inputs and outputs (activation ids, in order), as
 * npu_plan_execute binds them and an importer or exporter reads them.
 */
int npu_graph_inputs(npu_graph *g, const int *ids, uint32_t n);
int npu_graph_outputs(npu_graph *g, const int *ids, uint32_t n);

/* Ops; each returns 0 or an error. Shapes are checked as ops are added. */

/**
 * struct npu_conv2d_attrs - a convolution's attributes.
 * @stride: height, width (1-64).
 * @dilation: height, width (1-64; 0 reads as 1).
 * @pad: top, left, bottom, right (0-255): zero-point padding, so
 *	out_h = (in_h + top + bottom - dil_h * (k_h - 1) - 1) / stride_h + 1.
 * @depthwise: the filter is [1][k_h][k_w][out_c], out_c a multiple of in_c
 *	(TFLite DepthwiseConv2D; ONNX Conv with group = in_c).
 * @act: the activation fused after it.
 * @groups: 0 or 1, or G (not with @depthwise): G convolutions, each of
 *	in_c / G input channels into out_c / G outputs; the filter is
 *	[out_c][k_h][k_w][in_c / G] (ONNX Conv's group; int8 or fp32, a
 *	depthwise fp32 one G = in_c; on the NPU from firmware 1.4.0 for
 *	int8, 1.6.0 for fp32).
 */
struct npu_conv2d_attrs {
	uint32_t stride[2];
	uint32_t dilation[2];
	uint32_t pad[4];
	int depthwise;
	enum npu_activation act;
	uint32_t groups;
};
int npu_graph_conv2d_ex_v(size_t size, npu_graph *g, int in, int filter, int bias, int out,
			  const struct npu_conv2d_attrs *a);
#define npu_graph_conv2d_ex(...) \
	npu_graph_conv2d_ex_v(sizeof(struct npu_conv2d_attrs), __VA_ARGS__)
/** npu_graph_conv2d_ex with one stride and the same padding on every side. */
int npu_graph_conv2d(npu_graph *g, int in, int filter, int bias, int out, uint32_t stride,
		     uint32_t pad, int depthwise, enum npu_activation act);
int npu_graph_fully_connected(npu_graph *g, int in, int weights, int bias, int out,
			      enum npu_activation act);
/**
 * struct npu_pool_attrs - a pooling's attributes: @kernel and @stride
 * (height, width: 1-64), @pad (top, left, bottom, right; int8 only), max
 * or @average.
 */
struct npu_pool_attrs {
	uint32_t kernel[2];
	uint32_t stride[2];
	uint32_t pad[4];
	int average;
};
int npu_graph_pool_ex_v(size_t size, npu_graph *g, int in, int out,
			const struct npu_pool_attrs *a);
#define npu_graph_pool_ex(...) npu_graph_pool_ex_v(sizeof(struct npu_pool_attrs), __VA_ARGS__)
/** npu_graph_pool_ex with a square window, one stride and no padding. */
int npu_graph_pool(npu_graph *g, int in, int out, uint32_t k, uint32_t stride, int average);
/*
 * Int8 add and mul (TFLite Add / Mul), with numpy broadcasting: @out's
 * shape is the one @a's and @b's broadcast to (rank 0: inferred). Only
 * equal shapes run on the NPU; broadcasting runs on OpenCL or the CPU.
 */
int npu_graph_add(npu_graph *g, int a, int b, int out, enum npu_activation act);
int npu_graph_mul(npu_graph *g, int a, int b, int out, enum npu_activation act);
int npu_graph_softmax(npu_graph *g, int in, int out, float beta);
/**
 * Concatenate @count int8 tensors (ids in @ins) along @axis into @out; all
 * share @out's scale and zero point and every dimension but @axis.
 */
int npu_graph_concat(npu_graph *g, const int *ins, uint32_t count, int out, uint32_t axis);
/**
 * Pad @in with its zero point (TFLite Pad): out dim d is before[d] + in
 * dim d + after[d], for the @in's rank entries of @before and @after.
 */
int npu_graph_pad(npu_graph *g, int in, int out, const uint32_t *before, const uint32_t *after);
/** Permute dimensions (TFLite Transpose): out dim d is in dim perm[d]. */
int npu_graph_transpose(npu_graph *g, int in, int out, const uint32_t *perm);
/**
 * Reshape (TFLite Reshape): @out, of @in's dtype, quantization and element
 * count, becomes a view of @in's storage; nothing moves. @out must not
 * already be viewed by another reshape.
 */
int npu_graph_reshape(npu_graph *g, int in, int out);
/**
 * fp32 -> int8 (TFLite Quantize) into @out's scale and zero point; @in is
 * an NPU_DT_FLOAT32 activation of the same shape.
 */
int npu_graph_quantize(npu_graph *g, int in, int out);
/** int8 -> fp32 (TFLite Dequantize) from @in's scale and zero point. */
int npu_graph_dequantize(npu_graph *g, int in, int out);

/** Where an op runs. */
enum npu_backend {
	NPU_BACKEND_AUTO = 0,	/* the NPU, else OpenCL, else oneDNN, else the CPU reference */
	NPU_BACKEND_NPU = 1,
	NPU_BACKEND_OPENCL = 2,
	NPU_BACKEND_CPU = 3,	/* libnpu's reference: the results others are checked by */
	NPU_BACKEND_NONE = 4,	/* nothing runs (a reshape: a view) */
	NPU_BACKEND_CUSTOM = 5,	/* a backend an application registered (npu_backend.h) */
	NPU_BACKEND_ONEDNN = 6,	/* the fast CPU backend: fp32 layers on oneDNN, if installed */
};

/**
 * struct npu_compile_opts - how npu_graph_compile_opts places ops.
 * @backend: NPU_BACKEND_AUTO lets every backend claim every op and picks
 *	the cheapest placement, counting the crossings between backends;
 *	backends are asked in order (the NPU if there is a device, OpenCL,
 *	an application's, oneDNN, the CPU reference), a later one only for
 *	ops the earlier ones cannot run. Naming a backend starts there. With
 *	AUTO the environment may name one: NPU_BACKEND=npu, opencl, onednn,
 *	cpu, auto or an application's backend, for testing an app unchanged.
 * @strict: fail with NPU_ENOTSUP, the op and the reason in the report and
 *	npu_graph_error, instead of falling back from the first backend (the
 *	NPU if there is a device, else OpenCL). NPU_STRICT=1 sets it too.
 * @backend_name: a backend by name (an application's), instead of @backend.
 * @pin: @npin backend names, one per op in the order added (NULL entries
 *	and ops past @npin are placed freely): op i runs on @pin[i] or the
 *	compile fails, saying why. For tests and for comparing backends.
 * @reuse_memory: intermediate activations (neither declared inputs or
 *	outputs nor read before an op writes them) share storage when their
 *	lifetimes do not overlap. The graph must declare its outputs; the
 *	plan's own intermediates cannot then be read or written
 *	(npu_plan_read, npu_plan_observe refuse them).
 */
struct npu_compile_opts {
	enum npu_backend backend;
	int strict;
	const char *backend_name;
	const char *const *pin;
	uint32_t npin;
	int reuse_memory;
};

/**
 * Compile: lower the ops, place them (see struct npu_compile_opts; @opts
 * may be NULL), allocate the tensors (device buffers shared with the CPU;
 * OpenCL buffers that wrap host memory where the device shares it),
 * upload constants, compile each backend's partitions (maximal runs of
 * consecutive ops placed on it). A run submits each partition once and
 * moves data only where a tensor crosses from one backend to another.
 */
int npu_graph_compile_opts_v(size_t size, npu_graph *g, npu_device *dev,
			     const struct npu_compile_opts *opts, npu_plan **plan);
#define npu_graph_compile_opts(...) \
	npu_graph_compile_opts_v(sizeof(struct npu_compile_opts), __VA_ARGS__)
/** Compile with the default options: AUTO, or what NPU_BACKEND says. */
int npu_graph_compile(npu_graph *g, npu_device *dev, npu_plan **plan);
/** The last compile's placement report, also when it failed (strict mode says why). */
const char *npu_graph_report(const npu_graph *g);
/** Where op @op (in the order added) runs (enum npu_backend), or a negative error. */
int npu_plan_op_backend(const npu_plan *plan, int op);
/**
 * The name of the backend op @op runs on ("none" for a view, "folded" for
 * an op computed from constants when the plan was compiled), or NULL.
 */
const char *npu_plan_node_backend(const npu_plan *plan, int op);
/**
 * Run with one input and one output activation tensor (by id), their data
 * packed in the tensors' dtypes: int8_t, or float for NPU_DT_FLOAT32.
 * Softmax normalises over the last dimension.
 */
int npu_plan_run(npu_plan *plan, int in, const void *in_data, int out, void *out_data);
/**
 * Run the graph's declared inputs (@in[i] holds input i's bytes) into its
 * declared outputs (@out[i]).
 */
int npu_plan_execute(npu_plan *plan, const void *const *in, void *const *out);
/**
 * npu_plan_execute in two halves, so that the host works while the device
 * does: npu_plan_start copies the declared inputs from @in (the caller
 * may reuse its buffers at once), starts every partition and returns with
 * the last ones' work still in flight (the NPU's job, OpenCL's queue; a
 * partition on the CPU runs inside the call). npu_plan_wait waits for it
 * and copies the declared outputs into @out (NULL: they stay in the plan,
 * for npu_plan_read). Between the two, every other call on the plan that
 * runs it or moves its data (npu_plan_start, _execute, _run, _exec,
 * _write, _read) fails with NPU_EBUSY; freeing it waits for the run. A
 * failed start leaves nothing in flight. One run per plan at a time:
 * plans compiled from the same graph run side by side.
 */
int npu_plan_start(npu_plan *plan, const void *const *in);
int npu_plan_wait(npu_plan *plan, void *const *out);
/**
 * A file descriptor that polls readable (POLLIN) once the work of the run
 * in flight (npu_plan_start) has ended, so that an event loop (poll,
 * epoll, a Python asyncio reader) learns when npu_plan_wait will not
 * block; the caller closes it, and still calls npu_plan_wait. It works
 * when the work in flight is on one backend that gives fences as file
 * descriptors (the NPU: its job's sync_file; OpenCL: an eventfd its queue
 * signals) or on none (every partition ran inside the start: the
 * descriptor is readable at once). NPU_EINVAL without a run in flight;
 * NPU_ENOTSUP, saying why, when work is in flight on two backends at once
 * or on one that gives no descriptor. Since 2.4.
 */
int npu_plan_fence_fd(npu_plan *plan);
/**
 * Where tensor @id (an activation: a declared input or output, or another
 * npu_plan_read could read) is kept on the host side of the plan: on the
 * NPU the device buffer its commands read and write, mapped; on OpenCL a
 * buffer a device that shares host memory uses in place. Given as @in[i]
 * or @out[i] of npu_plan_execute, npu_plan_start or npu_plan_wait (or to
 * npu_plan_write and npu_plan_read), it moves no bytes: the caller writes
 * an input there before the start, and reads an output there after the
 * wait. The plan is told an input changed only by such a call: writes
 * into it otherwise may go unseen by a backend holding its own copy. Not
 * to be written while a run is in flight. NULL (npu_plan_error says why)
 * for a constant (npu_plan_write changes it), an intermediate whose
 * storage is reused or that is never made, and while a run is in flight.
 * Valid until the plan is freed. Since 2.4.
 */
void *npu_plan_buffer(npu_plan *plan, int id);
/**
 * The placement report: one line per op (where it runs, and why), the
 * OpenCL device if one is used, and the submissions per run. Valid until
 * the plan is freed.
 */
const char *npu_plan_report(const npu_plan *plan);
/** What the last failed call on @plan said ("" if none did). */
const char *npu_plan_error(const npu_plan *plan);
/** Modeled NPU cycles of the last run (0 off the NPU). */
uint64_t npu_plan_cycles(const npu_plan *plan);

/** What a plan's runs cost in crossings, counted since it was compiled. */
struct npu_plan_stats {
	uint64_t runs;			/* forward and training runs */
	uint64_t partitions;		/* partitions executed */
	uint64_t copies_in, bytes_in;	/* host -> a backend's own memory */
	uint64_t copies_out, bytes_out;	/* a backend's own memory -> host */
	uint64_t cycles;		/* modeled NPU cycles of the last run */
	uint64_t storage_bytes;		/* the tensors' storage, after any reuse */
	uint64_t tensor_bytes;		/* what it would be without reuse */
	/* partitions started while another backend's work was in flight (2.3) */
	uint64_t overlapped;
};
int npu_plan_stats_v(size_t size, const npu_plan *plan, struct npu_plan_stats *s);
#define npu_plan_stats(...) npu_plan_stats_v(sizeof(struct npu_plan_stats), __VA_ARGS__)
void npu_plan_free(npu_plan *plan);

/* ---- models (ONNX) ----------------------------------------------- */

/**
 * struct npu_array - a tensor's values on the host, as an ONNX TensorProto
 * file holds them (the test data of ONNX's test sets, npu-run's inputs and
 * outputs).
 * @name: the tensor's name ("" for none); owned by the array.
 * @dtype: int8, uint8, int32, int64 or fp32.
 * @rank, @dims: its shape (rank 0: a scalar, one element).
 * @data: the elements, packed, row-major; owned by the array.
 * @bytes: their size.
 */
struct npu_array {
	char *name;
	enum npu_dtype dtype;
	uint32_t rank;
	uint32_t dims[NPU_MAX_RANK];
	void *data;
	size_t bytes;
};
/** Read an ONNX TensorProto (file or memory); free it with npu_array_free. */
int npu_array_load(const char *path, struct npu_array *a);
int npu_array_load_mem(const void *buf, size_t len, struct npu_array *a);
/** Write @a as an ONNX TensorProto file. */
int npu_array_save(const char *path, const struct npu_array *a);
void npu_array_free(struct npu_array *a);

/**
 * struct npu_model_opts - how npu_model_load reads a model.
 * @fixed: @nfixed values of graph inputs known when the model is loaded,
 *	each bound by its name (or, with an empty name, by its position
 *	among the graph's inputs that are not initializers). A value is used
 *	only where an op needs one at load time (a shape, pads, scales,
 *	Clip's bounds); the input stays an input of the graph wherever an op
 *	reads it as data.
 * @base_dir: the folder a model's external data (tensors in files beside
 *	it) is read from; a location must name a file inside it (no absolute
 *	path, no "..", no symbolic link out of it). npu_model_load takes the
 *	model's own folder where this is NULL; npu_model_load_mem refuses
 *	external data without it.
 */
struct npu_model_opts {
	const struct npu_array *fixed;
	uint32_t nfixed;
	const char *base_dir;
};

/**
 * Load an ONNX model (opsets 7-17, static shapes) into a new graph *@g,
 * its inputs and outputs declared in the model's order (an input used
 * only for its fixed value is not one). @opts may be NULL. On failure
 * npu_last_error names the node, its op and what was refused; the error
 * is NPU_ENOTSUP for what libnpu does not implement (an op, an attribute,
 * a dtype), NPU_EINVAL for a malformed model. Documentation/onnx.rst
 * lists the ops and their limits.
 */
int npu_model_load_v(size_t size, const char *path, const struct npu_model_opts *opts,
		     npu_graph **g);
#define npu_model_load(...) npu_model_load_v(sizeof(struct npu_model_opts), __VA_ARGS__)
int npu_model_load_mem_v(size_t size, const void *buf, size_t len,
			 const struct npu_model_opts *opts, npu_graph **g);
#define npu_model_load_mem(...) npu_model_load_mem_v(sizeof(struct npu_model_opts), __VA_ARGS__)

/**
 * Write @g (its inputs and outputs declared) as an ONNX model (opset 13) at
 * @path: int8 layers in QDQ form, which npu_model_load folds back into
 * int8 ops and onnxruntime runs as QLinearConv and the like; the model's
 * inputs and outputs in the graph's shapes (NHWC). Its arithmetic is
 * ONNX's: quantization rounds ties to even and requantization is ONNX's,
 * so a value on a tie may differ by one step from the graph's (TFLite's).
 * NPU_ENOTSUP names an op it cannot write. Documentation/onnx.rst.
 */
int npu_model_save(const npu_graph *g, const char *path);

/** The @i-th ONNX op npu_model_load imports (from 0), or NULL past the last. */
const char *npu_model_op(unsigned int i);

/**
 * struct npu_op_info - an op of the registry that npu_model_load and
 * npu_graph_op share (Documentation/onnx.rst).
 * @name: its name in @domain.
 * @domain: NULL for ONNX's default domain, else its name ("com.microsoft").
 * @min_opset: the first opset of the default domain it is imported from.
 * @attrs: the attributes it reads, space-separated (any other is refused).
 */
struct npu_op_info {
	const char *name;
	const char *domain;
	int min_opset;
	const char *attrs;
};

/** Op @i of the registry (from 0) in *@info: 0, or NPU_EINVAL past the last. */
int npu_op_info_v(size_t size, unsigned int i, struct npu_op_info *info);
#define npu_op_info(...) npu_op_info_v(sizeof(struct npu_op_info), __VA_ARGS__)

/** The types of struct npu_attr. */
enum npu_attr_type {
	NPU_ATTR_INT = 1,
	NPU_ATTR_FLOAT = 2,
	NPU_ATTR_STRING = 3,
	NPU_ATTR_INTS = 4,
	NPU_ATTR_FLOATS = 5,
};

/**
 * struct npu_attr - one attribute of an op added with npu_graph_op, as
 * ONNX's AttributeProto: @name, @type (enum npu_attr_type) and the value
 * of that type: @i, @f, @s (a C string), or @n values at @ints or @floats.
 */
struct npu_attr {
	const char *name;
	uint32_t type;
	uint32_t n;
	int64_t i;
	float f;
	const char *s;
	const int64_t *ints;
	const float *floats;
};

/**
 * npu_graph_op - add op @op_type of @domain (NULL: ONNX's default) to @g,
 * with ONNX's semantics at @opset (0: the newest libnpu knows), as
 * npu_model_load imports a model's node: every op of the registry
 * (npu_op_info) is an op of the graph API. Tensors are read as arrays in
 * the order their dims say (ONNX's), whatever their layout tag.
 * @in: @nin tensor ids, -1 for an absent optional input; a constant
 *	input is also its value where the op needs one at load (Reshape's
 *	shape, Slice's starts), and an op of constants is computed here.
 * @out: filled with the @nout outputs' new tensors (shapes and dtypes the
 *	op's), ONNX's order; an output the op leaves out fails.
 * @attrs: @nattr attributes.
 * On a failure the graph is as it was and npu_last_error says why
 * (NPU_ENOTSUP for an op or a form libnpu does not have).
 */
int npu_graph_op_v(size_t attr_size, npu_graph *g, const char *op_type, const char *domain,
		   int64_t opset, const int *in, uint32_t nin, int *out, uint32_t nout,
		   const struct npu_attr *attrs, uint32_t nattr);
#define npu_graph_op(...) npu_graph_op_v(sizeof(struct npu_attr), __VA_ARGS__)

/** A tensor's name (a model's, or set by npu_graph_tensor_name), or NULL. */
const char *npu_graph_tensor_name(const npu_graph *g, int id);
int npu_graph_set_tensor_name(npu_graph *g, int id, const char *name);
/** The declared inputs (@output 0) or outputs (1): their count, or the id of the @i-th. */
int npu_graph_io_count(const npu_graph *g, int output);
int npu_graph_io(const npu_graph *g, int output, uint32_t i);
/**
 * An array shaped as declared input or output @i (name, dtype and shape,
 * rank 0 for an ONNX scalar), its data zeroed: where to put an input's
 * values, or to receive an output's. Free it with npu_array_free.
 */
int npu_graph_io_array(const npu_graph *g, int output, uint32_t i, struct npu_array *a);

/* ---------------------------------------------------------------- */
/* Jobs                                                              */
/* ---------------------------------------------------------------- */

struct npu_submit_opts {
	unsigned int ring;		/* hardware queue */
	npu_job *const *deps;		/* jobs that must finish first */
	size_t ndeps;
	npu_buffer *const *buffers;	/* buffers the job uses (kept alive) */
	size_t nbuffers;
	unsigned int flags;		/* NPU_SUBMIT_* */
};

/*
 * npu_job_wait polls: it watches the job's result in memory the driver
 * writes when the job ends, spinning on the CPU with no system call, for up
 * to NPU_POLL_SPIN_NS; only a job still running after that is waited for in
 * the kernel. For short jobs whose waiter would otherwise sleep and wake
 * (a scheduler round trip); it burns a CPU while it spins.
 */
#define NPU_SUBMIT_POLL		(1u << 0)
#define NPU_POLL_SPIN_NS	2000000

/**
 * Submit the commands of @cb; @opts may be NULL. Up to NPU_JOBS_MAX jobs of a
 * device are alive at once (submitted and not yet freed, or freed before
 * they ended); beyond that npu_submit waits for a freed one to end, and
 * returns NPU_EBUSY only when every one is held.
 */
#define NPU_JOBS_MAX 4096
int npu_submit_v(size_t size, npu_device *dev, npu_cmdbuf *cb,
		 const struct npu_submit_opts *opts, npu_job **job);
#define npu_submit(...) npu_submit_v(sizeof(struct npu_submit_opts), __VA_ARGS__)

/**
 * Submit the commands of @n command buffers (@cbs; one may appear more
 * than once) as one batch, @jobs[i] the job of @cbs[i]: one system call
 * and one doorbell, the device running them in order. Each job has its own
 * result (npu_job_result) and is waited for and freed as from npu_submit
 * with @opts (shared by all, NULL for none), but their fences signal
 * together, when the batch's last command buffer ends; a job waited for
 * with NPU_SUBMIT_POLL sees its own result as soon as it is written. At
 * most NPU_BATCH_MAX. On error no job is left: on a kernel without
 * batches (its max_cmds_per_job is 0), where each is submitted alone,
 * those already submitted are waited for and freed.
 */
#define NPU_BATCH_MAX 32
int npu_submit_batch_v(size_t size, npu_device *dev, npu_cmdbuf *const *cbs, unsigned int n,
		       const struct npu_submit_opts *opts, npu_job **jobs);
#define npu_submit_batch(dev, cbs, n, opts, jobs) \
	npu_submit_batch_v(sizeof(struct npu_submit_opts), dev, cbs, n, opts, jobs)

/** Wait up to @timeout_ns (negative: forever); NPU_ETIMEDOUT if not done. */
int npu_job_wait(npu_job *job, int64_t timeout_ns);

enum npu_job_state {
	NPU_JOB_STATE_PENDING = 0,
	NPU_JOB_STATE_DONE = 1,
	NPU_JOB_STATE_INVALID_COMMAND = 2,
	NPU_JOB_STATE_MMU_FAULT = 3,
	NPU_JOB_STATE_BUS_ERROR = 4,
	NPU_JOB_STATE_ABORTED = 5,
	NPU_JOB_STATE_TIMED_OUT = 6,
	NPU_JOB_STATE_OVER_LIMIT = 7,	/* over the device's per-command budget */
};

struct npu_job_result {
	enum npu_job_state state;
	uint32_t error_offset;	/* failing command's byte offset */
	uint64_t fault_va;	/* for NPU_JOB_STATE_MMU_FAULT */
	uint64_t device_ns;	/* device time the job took */
	uint64_t cycles;	/* NPU cycles the performance model predicts */
	uint64_t bytes;		/* bytes the engines moved */
};

/** The job's outcome (state NPU_JOB_STATE_PENDING while it runs); returns 0. */
int npu_job_result_v(size_t size, npu_job *job, struct npu_job_result *res);
#define npu_job_result(...) npu_job_result_v(sizeof(struct npu_job_result), __VA_ARGS__)
/**
 * A file descriptor (a Linux sync_file) that polls readable (POLLIN) once
 * the job has ended, for an event loop; the caller closes it. It holds the
 * job's fence, not the job: freeing the job first changes nothing. Since
 * 2.4.
 */
int npu_job_fence_fd(npu_job *job);
/** Free the job (waits for nothing: a running job keeps running). */
void npu_job_free(npu_job *job);

/** Human-readable name of a job state. */
const char *npu_job_state_name(enum npu_job_state s);

#ifdef __cplusplus
}
#endif

#include "npu_train.h"	/* the training operations */
#include "npu_ocl.h"	/* the OpenCL backend */
#include "npu_backend.h"	/* writing a backend */

#endif /* NPU_H */
