/* SPDX-License-Identifier: MIT */
/*
 * npu_cmd.h - the command stream: what a job's command buffer holds.
 *
 * Written by libnpu, read only by the firmware and the engines; the kernel
 * never parses it. A command buffer is a sequence of commands, each starting
 * with struct npu_cmd_hdr and taking hdr.size bytes (a multiple of 8, at
 * least 8, at most NPU_CMD_MAX_SIZE). Commands run in order; a malformed or
 * unknown one ends the job with NPU_JOB_INVALID_CMD and the completion's
 * error_offset names it. Addresses are device virtual addresses in the
 * job's context. Documentation/command-stream.rst explains it.
 */
#ifndef NPU_CMD_H
#define NPU_CMD_H

#include "npu_types.h"

/**
 * enum npu_cmd_op - command opcodes, 1 to 63; NPU_REG_FW_CMD_CAPS bit n is
 * op n, NPU_REG_FW_CMD_CAPS_HI bit n op 32 + n.
 */
enum npu_cmd_op {
	NPU_CMD_NOP = 1,	/* any size >= 8; pads a buffer */
	NPU_CMD_DMA_COPY = 2,	/* struct npu_cmd_dma_copy */
	NPU_CMD_DMA_FILL = 3,	/* struct npu_cmd_dma_fill */
	NPU_CMD_TIMESTAMP = 4,	/* struct npu_cmd_timestamp */
	NPU_CMD_BARRIER = 5,	/* wait for earlier engine work; 8 bytes */
	/* N-d inference commands, ONNX's semantics: npu_cmd_nd.h. */
	NPU_CMD_BINARY = 6,	/* struct npu_cmd_binary: fp32 arithmetic, broadcast */
	NPU_CMD_ACTIVATION = 7,	/* struct npu_cmd_activation: fp32, or 8-bit by table */
	NPU_CMD_COPY = 8,	/* struct npu_cmd_copy: strided copy (transpose, slice) */
	NPU_CMD_SOFTMAX = 9,	/* struct npu_cmd_softmax: fp32, log-softmax */
	NPU_CMD_NORM = 10,	/* struct npu_cmd_norm: layer norm, RMS norm */
	NPU_CMD_MATMUL = 11,	/* struct npu_cmd_matmul: batched, two activations */
	NPU_CMD_QDQ = 12,	/* struct npu_cmd_qdq: ONNX's (de)quantize, requantize */
	NPU_CMD_REDUCE = 13,	/* struct npu_cmd_reduce: sum, mean, max, arg max .. */
	NPU_CMD_CAST = 14,	/* struct npu_cmd_cast: ONNX's Cast */
	NPU_CMD_GATHER = 15,	/* struct npu_cmd_gather: rows by index (embeddings) */
	/* Tensor operations (the tensor engine); see npu_quant.h for the arithmetic. */
	NPU_CMD_GEMM_I8 = 16,	/* struct npu_cmd_gemm_i8 */
	NPU_CMD_CONV2D_I8 = 17,	/* struct npu_cmd_conv2d_i8 (also depthwise) */
	NPU_CMD_POOL_I8 = 18,	/* struct npu_cmd_pool_i8: max or average */
	NPU_CMD_ELTWISE_I8 = 19, /* struct npu_cmd_eltwise_i8: add or mul */
	NPU_CMD_QUANTIZE = 20,	/* struct npu_cmd_quantize: fp32 <-> int8 */
	NPU_CMD_SOFTMAX_I8 = 21, /* struct npu_cmd_softmax_i8 */
	NPU_CMD_TRANSPOSE = 22,	/* struct npu_cmd_transpose */
	NPU_CMD_PAD = 23,	/* struct npu_cmd_pad */
	NPU_CMD_CONCAT = 24,	/* struct npu_cmd_concat: one input of a concat */
	/* Training: fp32 (bf16 inputs where flagged), npu_cmd_train.h. */
	NPU_CMD_GEMM_F32 = 25,	/* struct npu_cmd_gemm_f32 */
	NPU_CMD_CONV2D_F32 = 26, /* struct npu_cmd_conv2d_f32: forward and gradients */
	NPU_CMD_POOL_F32 = 27,	/* struct npu_cmd_pool_f32: forward and gradients */
	NPU_CMD_ELTWISE_F32 = 28, /* struct npu_cmd_eltwise_f32 */
	NPU_CMD_REDUCE_F32 = 29, /* struct npu_cmd_reduce_f32 */
	NPU_CMD_XENT_F32 = 30,	/* struct npu_cmd_xent_f32: softmax cross-entropy */
	NPU_CMD_OPTIM_F32 = 31,	/* struct npu_cmd_optim_f32: SGD, Adam, AdamW */
	/* More N-d inference commands (NPU_REG_FW_CMD_CAPS_HI): npu_cmd_nd.h. */
	NPU_CMD_CONV = 32,	/* struct npu_cmd_conv: N-d, groups, transposed */
	NPU_CMD_POOL = 33,	/* struct npu_cmd_pool: N-d max or average, padded */
	NPU_CMD_WHERE = 34,	/* struct npu_cmd_where: select with broadcasting */
	/* Gradients of the N-d ops for training: npu_cmd_train.h. */
	NPU_CMD_SOFTMAX_BWD = 35, /* struct npu_cmd_softmax_bwd: softmax's, log-softmax's */
	NPU_CMD_NORM_BWD = 36,	/* struct npu_cmd_norm_bwd: layer norm's */
	NPU_CMD_ACT_BWD = 37,	/* struct npu_cmd_act_bwd: an activation's */
	/* More N-d inference commands: npu_cmd_nd.h. */
	NPU_CMD_PAD_ND = 38,	/* struct npu_cmd_pad_nd: constant, reflect, edge; crops */
	NPU_CMD_RESIZE = 39,	/* struct npu_cmd_resize: ONNX's Resize through a taps table */
};
#define NPU_CMD_MAX_SIZE	256

/*
 * NPU_TENSOR_CMDS(X) - every tensor-engine command, once: X(OP, op, class)
 * for NPU_CMD_OP, its struct npu_cmd_op, and its class: INFER (inference,
 * offered under NPU_HW_CAP_INT8, every profile) or TRAIN (under
 * NPU_HW_CAP_TRAIN, the full profile only). The firmware's dispatch and
 * capability bits, the engine's table of handlers (npu_op_run() for each,
 * so a command without one fails to link), its training check and the
 * fuzzer's list are made from it.
 */
#define NPU_TENSOR_CMDS(X)							\
	X(BINARY, binary, INFER) X(ACTIVATION, activation, INFER)		\
	X(COPY, copy, INFER) X(SOFTMAX, softmax, INFER) X(NORM, norm, INFER)	\
	X(MATMUL, matmul, INFER) X(QDQ, qdq, INFER) X(REDUCE, reduce, INFER)	\
	X(CAST, cast, INFER) X(GATHER, gather, INFER)				\
	X(CONV, conv, INFER) X(POOL, pool, INFER) X(WHERE, where, INFER)	\
	X(GEMM_I8, gemm_i8, INFER) X(CONV2D_I8, conv2d_i8, INFER)		\
	X(POOL_I8, pool_i8, INFER) X(ELTWISE_I8, eltwise_i8, INFER)		\
	X(QUANTIZE, quantize, INFER) X(SOFTMAX_I8, softmax_i8, INFER)		\
	X(TRANSPOSE, transpose, INFER) X(PAD, pad, INFER) X(CONCAT, concat, INFER) \
	X(GEMM_F32, gemm_f32, TRAIN) X(CONV2D_F32, conv2d_f32, TRAIN)		\
	X(POOL_F32, pool_f32, TRAIN) X(ELTWISE_F32, eltwise_f32, TRAIN)		\
	X(REDUCE_F32, reduce_f32, TRAIN) X(XENT_F32, xent_f32, TRAIN)		\
	X(OPTIM_F32, optim_f32, TRAIN) X(SOFTMAX_BWD, softmax_bwd, TRAIN)	\
	X(NORM_BWD, norm_bwd, TRAIN) X(ACT_BWD, act_bwd, TRAIN)		\
	X(PAD_ND, pad_nd, INFER) X(RESIZE, resize, INFER)

#define NPU_CMD_CLASS_INFER	1
#define NPU_CMD_CLASS_TRAIN	2
#define NPU_CMD_CAP_IF_(OP, op, cls, want) \
	| (NPU_CMD_CLASS_##cls == (want) ? 1ull << NPU_CMD_##OP : 0ull)
#define NPU_CMD_CAP_INFER_(OP, op, cls)	NPU_CMD_CAP_IF_(OP, op, cls, NPU_CMD_CLASS_INFER)
#define NPU_CMD_CAP_TRAIN_(OP, op, cls)	NPU_CMD_CAP_IF_(OP, op, cls, NPU_CMD_CLASS_TRAIN)
/*
 * The tensor commands' capability bits (64: NPU_REG_FW_CMD_CAPS, then
 * NPU_REG_FW_CMD_CAPS_HI): inference, training, all.
 */
#define NPU_CMD_CAPS_INFER	(0ull NPU_TENSOR_CMDS(NPU_CMD_CAP_INFER_))
#define NPU_CMD_CAPS_TRAIN	(0ull NPU_TENSOR_CMDS(NPU_CMD_CAP_TRAIN_))
#define NPU_CMD_CAPS_TENSOR	(NPU_CMD_CAPS_INFER | NPU_CMD_CAPS_TRAIN)
/* Whether opcode @op (any 32-bit value) is a tensor command of caps mask @caps. */
#define NPU_CMD_IN(caps, op)	((op) < 64 && ((caps) >> (op) & 1u))

/**
 * struct npu_cmd_hdr - first 8 bytes of every command.
 * @op: enum npu_cmd_op.
 * @size: bytes of the command including this header.
 */
struct npu_cmd_hdr {
	uint32_t op;
	uint32_t size;
};

/**
 * struct npu_cmd_dma_copy - copy @len bytes from @src to @dst.
 * @hdr: op NPU_CMD_DMA_COPY, size 32.
 * @src: source VA (readable).
 * @dst: destination VA (writable).
 * @len: bytes, at most NPU_DMA_MAX_LEN. Overlapping ranges give an
 *	unspecified result in the overlap.
 */
struct npu_cmd_dma_copy {
	struct npu_cmd_hdr hdr;
	uint64_t src;
	uint64_t dst;
	uint64_t len;
};

/**
 * struct npu_cmd_dma_fill - fill @len bytes at @dst with @pattern.
 * @hdr: op NPU_CMD_DMA_FILL, size 32.
 * @dst: destination VA (writable).
 * @len: bytes, at most NPU_DMA_MAX_LEN; byte i gets byte (i % 4) of
 *	@pattern in little-endian order.
 * @pattern: 32-bit pattern.
 * @reserved: must be zero.
 */
struct npu_cmd_dma_fill {
	struct npu_cmd_hdr hdr;
	uint64_t dst;
	uint64_t len;
	uint32_t pattern;
	uint32_t reserved;
};

/**
 * struct npu_cmd_timestamp - write the device time (ns, 64-bit) to @dst.
 * @hdr: op NPU_CMD_TIMESTAMP, size 16.
 * @dst: destination VA, 8-byte aligned.
 */
struct npu_cmd_timestamp {
	struct npu_cmd_hdr hdr;
	uint64_t dst;
};

/**
 * struct npu_cmd_gemm_i8 - int8 GEMM / fully connected layer, TFLite int8
 * semantics: for every row m < @m and output channel n < @n,
 *
 *   acc = bias[n] + sum_k (a[m][k] - a_zero) * b[n][k]
 *   out[m][n] = clamp(out_zero + requant(acc, mult[n], shift[n]), act_min, act_max)
 *
 * with requant() as npu_requant_scale(). Weights are symmetric (zero point
 * 0), stored output-channel major like TFLite's FullyConnected filter.
 * @hdr: op NPU_CMD_GEMM_I8, size 96.
 * @a: int8 activations, @m rows of @k, rows @lda bytes apart.
 * @b: int8 weights, @n rows of @k, rows @ldb bytes apart.
 * @bias: int32 per output channel, or 0 for none; 4-byte aligned.
 * @out: int8 output, @m rows of @n, rows @ldc bytes apart.
 * @quant: struct npu_quant_ch per output channel (or one, with
 *	NPU_GEMM_PER_TENSOR); 4-byte aligned.
 * @m: rows; @n: output channels; @k: depth. 1 to NPU_TENSOR_MAX_DIM each.
 * @lda: >= @k; @ldb: >= @k; @ldc: >= @n.
 * @a_zero: activation zero point, -128..127.
 * @out_zero: output zero point, -128..127.
 * @act_min: lower clamp, -128..@act_max (fused ReLU: out_zero).
 * @act_max: upper clamp, @act_min..127.
 * @flags: NPU_GEMM_*.
 * @reserved: zero.
 */
struct npu_cmd_gemm_i8 {
	struct npu_cmd_hdr hdr;
	uint64_t a;
	uint64_t b;
	uint64_t bias;
	uint64_t out;
	uint64_t quant;
	uint32_t m;
	uint32_t n;
	uint32_t k;
	uint32_t lda;
	uint32_t ldb;
	uint32_t ldc;
	int32_t a_zero;
	int32_t out_zero;
	int32_t act_min;
	int32_t act_max;
	uint32_t flags;
	uint32_t reserved;
};
#define NPU_GEMM_PER_TENSOR	(1u << 0)	/* one npu_quant_ch for all channels */
/*
 * ONNX's requantization instead of TFLite's (npu_requant_onnx_i8): each
 * npu_quant_ch's mult holds the bits of a finite fp32 multiplier >= 0 and
 * its shift is 0. Devices with NPU_HW_CAP_REQUANT_ONNX only.
 */
#define NPU_GEMM_REQUANT_ONNX	(1u << 1)
#define NPU_TENSOR_MAX_DIM	65536
/* No operand may be larger: bounds what a command makes the device allocate. */
#define NPU_TENSOR_MAX_BYTES	(256u << 20)
/* Multiply-accumulates one command may ask for: bounds the host time it takes. */
#define NPU_TENSOR_MAX_MACS	(1ull << 33)

/**
 * struct npu_cmd_conv2d_i8 - int8 2-D convolution, NHWC, TFLite int8
 * semantics (ConvPerChannel / DepthwiseConvPerChannel): for every batch b,
 * output position (y, x) and output channel o,
 *
 *   acc = bias[o] + sum over (ky, kx, i) of
 *         w[o][ky][kx][i] * (in[b][y*sh - pt + ky*dh][x*sw - pl + kx*dw][i] - in_zero)
 *   out[b][y][x][o] = clamp(out_zero + requant(acc, mult[o], shift[o]))
 *
 * where input positions outside the image are skipped (zero-point padding).
 * With NPU_CONV_DEPTHWISE the filter is [1][kh][kw][out_c], out_c a
 * multiple of in_c, and output channel o reads input channel o / (out_c /
 * in_c) only. With @groups G > 1 (ONNX's group), the channels split into
 * G groups: output channel o reads the in_c / G input channels of group
 * o / (out_c / G) only, i running over those. Tensors are packed (no
 * strides).
 * @hdr: op NPU_CMD_CONV2D_I8, size 136.
 * @in: int8 input [batch][in_h][in_w][in_c].
 * @filter: int8 [out_c][k_h][k_w][in_c / groups] (depthwise:
 *	[1][k_h][k_w][out_c]).
 * @bias: int32 [out_c], or 0 for none; 4-byte aligned.
 * @out: int8 output [batch][out_h][out_w][out_c].
 * @quant: struct npu_quant_ch [out_c] (or one with NPU_CONV_PER_TENSOR).
 * @batch, @in_h, @in_w, @in_c, @out_h, @out_w, @out_c: dimensions, >= 1.
 * @k_h, @k_w: filter size, 1..64.
 * @stride_h, @stride_w: 1..64.
 * @dil_h, @dil_w: dilation, 1..64.
 * @pad_top, @pad_left: positions before the image, 0..255.
 * @in_zero, @out_zero: zero points, -128..127.
 * @act_min, @act_max: clamp, -128 <= act_min <= act_max <= 127.
 * @flags: NPU_CONV_*. NPU_CONV_CONST_W (NPU_HW_CAP_CONST_WEIGHTS)
 *	promises @filter constant under @wgen, as NPU_CONVF_CONST_W does
 *	(npu_cmd_train.h): the engine may keep it packed between commands.
 * @groups: 0 or 1 (one group), or G dividing in_c and out_c, not with
 *	NPU_CONV_DEPTHWISE; G > 1 needs NPU_HW_CAP_CONV_GROUPS.
 * @wgen: with NPU_CONV_CONST_W, the generation of @filter's values; else 0.
 */
struct npu_cmd_conv2d_i8 {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t filter;
	uint64_t bias;
	uint64_t out;
	uint64_t quant;
	uint32_t batch, in_h, in_w, in_c;
	uint32_t out_h, out_w, out_c;
	uint32_t k_h, k_w;
	uint32_t stride_h, stride_w;
	uint32_t dil_h, dil_w;
	uint32_t pad_top, pad_left;
	int32_t in_zero, out_zero;
	int32_t act_min, act_max;
	uint32_t flags;
	uint32_t groups;
	uint32_t wgen;
};
#define NPU_CONV_PER_TENSOR	(1u << 0)
#define NPU_CONV_DEPTHWISE	(1u << 1)
#define NPU_CONV_REQUANT_ONNX	(1u << 2)	/* as NPU_GEMM_REQUANT_ONNX */
#define NPU_CONV_CONST_W	(1u << 3)	/* @filter constant under @wgen */
#define NPU_CONV_MAX_KERNEL	64
#define NPU_CONV_MAX_PAD	255

/**
 * struct npu_cmd_pool_i8 - int8 max or average pooling, NHWC, TFLite
 * semantics: over the window positions inside the input (padding is
 * skipped), the maximum, or the sum divided by their count rounding half
 * away from zero; then clamped. Input and output share their
 * quantization. A window with no position inside the input is malformed.
 * @hdr: op NPU_CMD_POOL_I8, size 88.
 * @in: int8 [batch][in_h][in_w][c]; @out: int8 [batch][out_h][out_w][c].
 * @batch, @in_h, @in_w, @c, @out_h, @out_w: dimensions, >= 1.
 * @k_h, @k_w, @stride_h, @stride_w: 1..64 (average: k_h * k_w <= 4096).
 * @pad_top, @pad_left: 0..255.
 * @act_min, @act_max: clamp.
 * @flags: NPU_POOL_AVG for average, else max.
 * @reserved: zero.
 */
struct npu_cmd_pool_i8 {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t batch, in_h, in_w, c;
	uint32_t out_h, out_w;
	uint32_t k_h, k_w, stride_h, stride_w;
	uint32_t pad_top, pad_left;
	int32_t act_min, act_max;
	uint32_t flags;
	uint32_t reserved;
};
#define NPU_POOL_AVG		(1u << 0)

/**
 * struct npu_cmd_eltwise_i8 - elementwise int8 add or mul of two tensors,
 * @count elements, with numpy's broadcasting where @rank is 1 to 4 (the
 * output's dims @out_dims, the inputs' each equal or 1); TFLite int8
 * semantics:
 *   add: a' = npu_requant_scale((a - a_zero) << left_shift, a_mult, a_shift),
 *        likewise b', out = out_zero + requant(a' + b', out_mult, out_shift);
 *   mul: out = out_zero + requant((a - a_zero) * (b - b_zero), out_mult, out_shift);
 * then clamped.
 * @hdr: op NPU_CMD_ELTWISE_I8, size 144.
 * @a, @b: int8 inputs; @out: int8 output (may alias an input when no
 *	input broadcasts).
 * @count: output elements, >= 1 (with broadcasting: the product of
 *	@out_dims).
 * @op: NPU_ELT_ADD or NPU_ELT_MUL.
 * @a_zero, @b_zero, @out_zero: zero points.
 * @act_min, @act_max: clamp.
 * @a_mult, @a_shift, @b_mult, @b_shift: input rescaling (add only).
 * @out_mult, @out_shift: output requantization.
 * @left_shift: 0..20, headroom before rescaling (add; TFLite uses 20).
 * With @op NPU_ELT_ADD_ONNX or NPU_ELT_MUL_ONNX the arithmetic is ONNX's
 * (npu_eltwise_onnx_i8): @a_mult, @b_mult and @out_mult hold the bits of
 * finite fp32 scales > 0, every shift and @left_shift are 0. With
 * NPU_ELT_ADD_ORT it is onnxruntime's QLinearAdd (npu_eltwise_ort_add_i8,
 * on the stored values, zero points 0): @a_mult, @b_mult and @out_mult
 * hold the bits of a_scale / c_scale, b_scale / c_scale and the fixed
 * part, @a_shift the values' offset (0, or 128 for uint8 stored as int8),
 * @b_shift its mode (0: both vectors, 1: b, 2: a one value per span).
 * Both: devices with NPU_HW_CAP_REQUANT_ONNX only.
 * @rank: 0 (no broadcasting) or 1..4.
 * @out_dims, @a_dims, @b_dims: with @rank, 1..NPU_TENSOR_MAX_DIM; zero past it.
 * @reserved: zero.
 */
struct npu_cmd_eltwise_i8 {
	struct npu_cmd_hdr hdr;
	uint64_t a;
	uint64_t b;
	uint64_t out;
	uint32_t count;
	uint32_t op;
	int32_t a_zero, b_zero, out_zero;
	int32_t act_min, act_max;
	int32_t a_mult, a_shift, b_mult, b_shift;
	int32_t out_mult, out_shift;
	uint32_t left_shift;
	uint32_t rank;
	uint32_t out_dims[4];
	uint32_t a_dims[4];
	uint32_t b_dims[4];
	uint32_t reserved;
};
#define NPU_ELT_ADD		1
#define NPU_ELT_MUL		2
#define NPU_ELT_ADD_ONNX	3
#define NPU_ELT_MUL_ONNX	4
#define NPU_ELT_ADD_ORT		5

/**
 * struct npu_cmd_quantize - fp32 to int8 or back, TFLite semantics:
 *   quantize:   q = clamp(round((float)x / (float)scale) + zero_point, -128, 127)
 *               with round() half away from zero;
 *   dequantize: x = (float)(scale * (q - zero_point)) computed in double.
 * @hdr: op NPU_CMD_QUANTIZE, size 48.
 * @in: fp32 (quantize) or int8 (dequantize) elements, 4-byte aligned for fp32.
 * @out: int8 or fp32 (4-byte aligned) elements.
 * @count: elements, >= 1.
 * @dir: NPU_QUANTIZE or NPU_DEQUANTIZE.
 * @scale: the scale, an IEEE double (finite, > 0), as its bits.
 * @zero_point: -128..127.
 * @reserved: zero.
 */
struct npu_cmd_quantize {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t count;
	uint32_t dir;
	uint64_t scale_bits;
	int32_t zero_point;
	uint32_t reserved;
};
#define NPU_QUANTIZE		1
#define NPU_DEQUANTIZE		2

/**
 * struct npu_cmd_softmax_i8 - int8 softmax over the last dimension, TFLite
 * semantics (npu_softmax_i8_row() in npu_quant.h); the output has scale
 * 1/256 and zero point -128.
 * @hdr: op NPU_CMD_SOFTMAX_I8, size 48.
 * @in, @out: int8 [rows][depth].
 * @rows: >= 1; @depth: 1..65536.
 * @beta_mult, @beta_left_shift: input scaling (left shift 0..31).
 * @diff_min: differences below it give 0; <= 0.
 * @reserved: zero.
 */
struct npu_cmd_softmax_i8 {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t rows;
	uint32_t depth;
	int32_t beta_mult;
	int32_t beta_left_shift;
	int32_t diff_min;
	uint32_t reserved;
};

#define NPU_LAYOUT_MAX_RANK	4

/**
 * struct npu_cmd_transpose - permute the dimensions of a packed tensor:
 * out dimension i is in dimension perm[i] (TFLite Transpose).
 * @hdr: op NPU_CMD_TRANSPOSE, size 64.
 * @in, @out: packed tensors.
 * @rank: 1..4; @elem_size: 1, 2 or 4 bytes.
 * @dims: input dimensions (>= 1), entries past @rank zero.
 * @perm: a permutation of 0..rank-1, entries past @rank zero.
 */
struct npu_cmd_transpose {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t rank;
	uint32_t elem_size;
	uint32_t dims[NPU_LAYOUT_MAX_RANK];
	uint32_t perm[NPU_LAYOUT_MAX_RANK];
};

/**
 * struct npu_cmd_pad - pad an int8 tensor with a constant (TFLite Pad:
 * the constant is the zero point for a quantized tensor). Output dimension
 * i is before[i] + dims[i] + after[i].
 * @hdr: op NPU_CMD_PAD, size 88.
 * @in, @out: packed int8 tensors.
 * @rank: 1..4.
 * @value: the pad value, -128..127.
 * @dims: input dimensions (>= 1); @before, @after: padding (<= 65536 each);
 *	entries past @rank zero.
 * @reserved: zero.
 */
struct npu_cmd_pad {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t rank;
	int32_t value;
	uint32_t dims[NPU_LAYOUT_MAX_RANK];
	uint32_t before[NPU_LAYOUT_MAX_RANK];
	uint32_t after[NPU_LAYOUT_MAX_RANK];
	uint32_t reserved[2];
};

/**
 * struct npu_cmd_concat - place one input of a concatenation in the output
 * (TFLite Concatenation, one command per input). Seen as @outer rows, the
 * input's rows of @in_row bytes go to bytes [@offset, @offset + @in_row) of
 * the output's rows of @out_row bytes; the rest of the output is untouched.
 * For axis a of packed tensors: @outer is the product of the dimensions
 * before a, @in_row and @out_row the bytes from a on, and @offset the bytes
 * of the inputs before this one along a. Reshape needs no command: packed
 * tensors reshape in place.
 * @hdr: op NPU_CMD_CONCAT, size 40.
 * @in, @out: packed tensors.
 * @outer: rows, 1..NPU_CONCAT_MAX_ROWS (each row is one MMU walk: the
 *	bound keeps one command from holding the host for long).
 * @in_row: >= 1; @out_row: >= @offset + @in_row.
 * @offset: the input's place in each output row.
 */
#define NPU_CONCAT_MAX_ROWS	(1u << 22)

struct npu_cmd_concat {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t outer;
	uint32_t in_row;
	uint32_t out_row;
	uint32_t offset;
};

/**
 * struct npu_quant_ch - requantization of one output channel.
 * @mult: Q31 multiplier, 0 or in [2^30, 2^31).
 * @shift: power-of-two exponent, -31..30.
 */
struct npu_quant_ch {
	int32_t mult;
	int32_t shift;
};

#include "npu_cmd_nd.h"
#include "npu_cmd_train.h"

#endif /* NPU_CMD_H */
