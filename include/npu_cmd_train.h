/* SPDX-License-Identifier: MIT */
/*
 * npu_cmd_train.h - the training commands of the command stream (ops 25 to
 * 31, and 35 to 37 for the gradients of the N-d ops): fp32 tensors, bf16
 * inputs where a flag says so, fp32 accumulation.
 * Included by npu_cmd.h; Documentation/command-stream.rst and
 * Documentation/training.rst explain them.
 *
 * Tensors are packed, row-major (NHWC for images), 4-byte aligned (bf16:
 * 2-byte). Floating-point scalars travel as their IEEE bits in a uint32.
 * bf16 is the top half of an fp32; converting to it rounds to nearest,
 * ties to even, and keeps NaN a NaN.
 */
#ifndef NPU_CMD_TRAIN_H
#define NPU_CMD_TRAIN_H

#include "npu_cmd.h"	/* struct npu_cmd_hdr (it includes this file at its end) */

/**
 * struct npu_cmd_gemm_f32 - C = alpha * op(A) * op(B) + beta * C.
 * op(A) is m x k: A as stored (@m rows of @k, @lda elements apart) or, with
 * NPU_GEMMF_TRANS_A, the transpose of A stored as @k rows of @m. op(B) is
 * k x n: B (@k rows of @n) or, with NPU_GEMMF_TRANS_B, B stored as @n rows
 * of @k. C is fp32, @m rows of @n, @ldc apart. With beta == 0, C is not
 * read (a NaN there does not propagate), as in BLAS.
 * @hdr: op NPU_CMD_GEMM_F32, size 72.
 * @a, @b: fp32, or bf16 with NPU_GEMMF_BF16.
 * @c: fp32.
 * @m, @n, @k: 1..NPU_TENSOR_MAX_DIM.
 * @lda, @ldb, @ldc: row strides in elements, at least the row length.
 * @flags: NPU_GEMMF_*. NPU_GEMMF_CONST_B (the engine's
 *	NPU_HW_CAP_CONST_WEIGHTS) promises B constant under @wgen, as
 *	NPU_CONVF_CONST_W does the convolution's weights: the engine may keep
 *	op(B) packed from one command to the next.
 * @alpha, @beta: fp32 bits, finite.
 * @wgen: with NPU_GEMMF_CONST_B, the generation of B's values; else 0.
 */
struct npu_cmd_gemm_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t a;
	uint64_t b;
	uint64_t c;
	uint32_t m;
	uint32_t n;
	uint32_t k;
	uint32_t lda;
	uint32_t ldb;
	uint32_t ldc;
	uint32_t flags;
	uint32_t alpha;
	uint32_t beta;
	uint32_t wgen;
};
#define NPU_GEMMF_TRANS_A	(1u << 0)
#define NPU_GEMMF_TRANS_B	(1u << 1)
#define NPU_GEMMF_BF16		(1u << 2)	/* A and B are bf16 */
#define NPU_GEMMF_CONST_B	(1u << 3)

/**
 * struct npu_cmd_conv2d_f32 - 2-D convolution (cross-correlation, NHWC,
 * zero padding, no bias) and its two gradients. With
 *
 *   y[b][oy][ox][o] = sum over (ky, kx, i) of
 *                     w[o][ky][kx][i] * x[b][oy*sh - pt + ky*dh][ox*sw - pl + kx*dw][i]
 *
 * (positions outside the image count as 0), @mode says which tensor is
 * written from the other two:
 *   NPU_CONVF_FWD:        y = conv(x, w)
 *   NPU_CONVF_BWD_DATA:   x = dL/dx, given y = dL/dy and w
 *   NPU_CONVF_BWD_FILTER: w = dL/dw, given x and y = dL/dy
 * The written tensor is overwritten whole. The forward mode may finish
 * each output in the same command, in this order, as the separate
 * NPU_CMD_ELTWISE_F32 commands would (the same bits, without the round
 * trip through memory):
 *   NPU_CONVF_BIAS: y[b][oy][ox][o] += bias[o] (NPU_ELTF_BIAS);
 *   NPU_CONVF_RELU: y = y < 0 ? 0 : y (NPU_ELTF_RELU: NaN and -0 kept);
 *   NPU_CONVF_CLAMP: y = y < lo ? lo : y > hi ? hi : y (a NaN kept), lo
 *	and hi the fp32 values @clamp_lo and @clamp_hi hold (ReLU6: 0, 6).
 * With @groups G > 1 (ONNX's group) the channels split into G groups:
 * output channel o reads only the in_c / G input channels of its group
 * o / (out_c / G), i running over those in the sum above, and @w is
 * [out_c][k_h][k_w][in_c / G]. A depthwise convolution is G = in_c.
 * NPU_CONVF_CONST_W (forward mode; the engine's NPU_HW_CAP_CONST_WEIGHTS)
 * promises that the @w this command reads in its context holds the same
 * values on every command that names it with the same @wgen: the engine
 * may then keep @w converted for its kernels from one command to the
 * next (docs: command-stream.rst, "Constant weights"). It keeps it until
 * the context's translations are invalidated (NPU_REG_MMU_INVALIDATE), a
 * reset, or it needs the room; a host that rewrites @w must change @wgen.
 * Results never depend on whether the engine kept it, as long as the
 * promise holds.
 * @hdr: op NPU_CMD_CONV2D_F32, size 128; 112, the form without @groups
 *	and the clamp (one group, no NPU_CONVF_CLAMP); or 104, the form
 *	without @bias either (then no epilogue flag). The 128-byte form
 *	needs NPU_HW_CAP_CONVF_GROUPS.
 * @x: [batch][in_h][in_w][in_c]; @w: [out_c][k_h][k_w][in_c / groups];
 * @y: [batch][out_h][out_w][out_c]. The two inputs are bf16 with
 *	NPU_CONVF_BF16; the output is fp32.
 * @batch, @in_h, @in_w, @in_c, @out_h, @out_w, @out_c: >= 1.
 * @k_h, @k_w, @stride_h, @stride_w, @dil_h, @dil_w: 1..64.
 * @pad_top, @pad_left: 0..255. The output size must be the one these give:
 *	out_h = (in_h + 2 * pad_top - dil_h * (k_h - 1) - 1) / stride_h + 1.
 * @mode: NPU_CONVF_FWD, NPU_CONVF_BWD_DATA or NPU_CONVF_BWD_FILTER.
 * @flags: NPU_CONVF_BF16, and in the forward mode NPU_CONVF_BIAS,
 *	NPU_CONVF_RELU, NPU_CONVF_CLAMP and NPU_CONVF_CONST_W, or 0.
 * @wgen: with NPU_CONVF_CONST_W, the generation of @w's values (any
 *	number the host changes when it rewrites them); else 0.
 * @bias: with NPU_CONVF_BIAS, @out_c fp32 values (4-byte aligned); else 0.
 * @groups: 0 or 1 (one group), or G dividing in_c and out_c.
 * @clamp_lo, @clamp_hi: with NPU_CONVF_CLAMP, fp32 bits, lo <= hi and
 *	neither a NaN; else 0.
 * @reserved: 0.
 */
struct npu_cmd_conv2d_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t x;
	uint64_t w;
	uint64_t y;
	uint32_t batch, in_h, in_w, in_c;
	uint32_t out_h, out_w, out_c;
	uint32_t k_h, k_w;
	uint32_t stride_h, stride_w;
	uint32_t dil_h, dil_w;
	uint32_t pad_top, pad_left;
	uint32_t mode;
	uint32_t flags;
	uint32_t wgen;
	uint64_t bias;
	uint32_t groups;
	uint32_t clamp_lo, clamp_hi;
	uint32_t reserved;
};
#define NPU_CONVF_FWD		1
#define NPU_CONVF_BWD_DATA	2
#define NPU_CONVF_BWD_FILTER	3
#define NPU_CONVF_BF16		(1u << 0)
#define NPU_CONVF_BIAS		(1u << 1)
#define NPU_CONVF_RELU		(1u << 2)
#define NPU_CONVF_CONST_W	(1u << 3)
#define NPU_CONVF_CLAMP		(1u << 4)
/* The sizes of the command's first form, without @bias, and its second, without @groups. */
#define NPU_CONVF_SIZE_V1	104
#define NPU_CONVF_SIZE_V2	112

/**
 * struct npu_cmd_pool_f32 - max or average pooling (no padding) and their
 * gradients, NHWC, windows of k_h x k_w every stride.
 *   NPU_POOLF_MAX, NPU_POOLF_AVG:         y = pool(x)
 *   NPU_POOLF_MAX_BWD: dx = gradient: each window's dy goes to its first
 *	largest x in row-major window order (ties: the first), summed where
 *	windows overlap;
 *   NPU_POOLF_AVG_BWD: dx = each window's dy / (k_h * k_w) spread over it.
 * @hdr: op NPU_CMD_POOL_F32, size 88.
 * @x: [batch][in_h][in_w][c]; @y: [batch][out_h][out_w][c] (the output
 *	of the forward modes, dy in the backward ones); @dx: like @x, written
 *	by the backward modes (0 in the forward ones).
 * @batch, @in_h, @in_w, @c, @out_h, @out_w: >= 1, out_h = (in_h - k_h) /
 *	stride_h + 1 and the same for w.
 * @k_h, @k_w, @stride_h, @stride_w: 1..64, k <= the input size.
 * @mode: NPU_POOLF_*.
 * @reserved: zero.
 */
struct npu_cmd_pool_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t x;
	uint64_t y;
	uint64_t dx;
	uint32_t batch, in_h, in_w, c;
	uint32_t out_h, out_w;
	uint32_t k_h, k_w;
	uint32_t stride_h, stride_w;
	uint32_t mode;
	uint32_t reserved[3];
};
#define NPU_POOLF_MAX		1
#define NPU_POOLF_AVG		2
#define NPU_POOLF_MAX_BWD	3
#define NPU_POOLF_AVG_BWD	4

/**
 * struct npu_cmd_eltwise_f32 - one elementwise op over @count elements:
 *   NPU_ELTF_ADD:      out = a + b          NPU_ELTF_SUB: out = a - b
 *   NPU_ELTF_MUL:      out = a * b          NPU_ELTF_AXPY: out = alpha * a + b
 *   NPU_ELTF_SCALE:    out = alpha * a      NPU_ELTF_RELU: out = max(a, 0)
 *   NPU_ELTF_RELU_BWD: out = a > 0 ? b : 0  (a: the forward input, b: dy)
 *   NPU_ELTF_BIAS:     out[r][c] = a[r][c] + b[c] for rows of @cols
 *   NPU_ELTF_TO_BF16:  out (bf16) = a rounded; NPU_ELTF_FROM_BF16: out = a (bf16)
 * RELU keeps a NaN; a NaN in RELU_BWD's a gives 0.
 * @hdr: op NPU_CMD_ELTWISE_F32, size 48.
 * @a, @b, @out: the operands (b: 0 for the one-input ops); out may be a or b.
 * @count: elements, >= 1, a multiple of @cols for NPU_ELTF_BIAS.
 * @op: NPU_ELTF_*.
 * @cols: NPU_ELTF_BIAS's row length (b's length), else 0.
 * @alpha: fp32 bits, finite (AXPY and SCALE; else 0).
 */
struct npu_cmd_eltwise_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t a;
	uint64_t b;
	uint64_t out;
	uint32_t count;
	uint32_t op;
	uint32_t cols;
	uint32_t alpha;
};
#define NPU_ELTF_ADD		1
#define NPU_ELTF_SUB		2
#define NPU_ELTF_MUL		3
#define NPU_ELTF_AXPY		4
#define NPU_ELTF_SCALE		5
#define NPU_ELTF_RELU		6
#define NPU_ELTF_RELU_BWD	7
#define NPU_ELTF_BIAS		8
#define NPU_ELTF_TO_BF16	9
#define NPU_ELTF_FROM_BF16	10

/**
 * struct npu_cmd_reduce_f32 - sums over a [rows][cols] matrix:
 *   NPU_REDF_ROWS: out[c] = sum over r of in[r][c] (a bias gradient);
 *   NPU_REDF_COLS: out[r] = sum over c of in[r][c].
 * Sums run in index order in fp32. With NPU_REDF_ACCUMULATE the sums are
 * added to what out holds.
 * @hdr: op NPU_CMD_REDUCE_F32, size 40.
 * @in, @out: fp32.
 * @rows, @cols: >= 1.
 * @op: NPU_REDF_ROWS or NPU_REDF_COLS.
 * @flags: NPU_REDF_ACCUMULATE or 0.
 */
struct npu_cmd_reduce_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t rows;
	uint32_t cols;
	uint32_t op;
	uint32_t flags;
};
#define NPU_REDF_ROWS		1
#define NPU_REDF_COLS		2
#define NPU_REDF_ACCUMULATE	(1u << 0)

/**
 * struct npu_cmd_xent_f32 - softmax cross-entropy over rows of logits with
 * integer labels, forward and backward in one pass:
 *   loss[r] = log(sum over c of exp(z[r][c] - max_r)) - (z[r][label[r]] - max_r)
 *   dz[r][c] = grad_scale * (softmax(z[r])[c] - (c == label[r]))
 * A label outside 0..classes-1 fails the command.
 * @hdr: op NPU_CMD_XENT_F32, size 56.
 * @logits: fp32 [rows][classes]; @labels: int32 [rows].
 * @loss: fp32 [rows], or 0 to skip; @dlogits: fp32 [rows][classes], or 0.
 * @rows: >= 1; @classes: 1..65536.
 * @grad_scale: fp32 bits, finite (1 / rows for the mean loss).
 * @reserved: zero.
 */
struct npu_cmd_xent_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t logits;
	uint64_t labels;
	uint64_t loss;
	uint64_t dlogits;
	uint32_t rows;
	uint32_t classes;
	uint32_t grad_scale;
	uint32_t reserved;
};

/**
 * struct npu_cmd_optim_f32 - a fused optimizer step on @count fp32 master
 * weights w with gradients g, as PyTorch defines them:
 *   NPU_OPT_SGD:   g' = g + wd * w; m = mu * m + g' (mu = beta1; skipped,
 *                  m = g', when mu is 0); w -= lr * m
 *   NPU_OPT_ADAM:  g' = g + wd * w; m = b1 * m + (1 - b1) * g';
 *                  v = b2 * v + (1 - b2) * g' * g';
 *                  w -= lr * (m / c1) / (sqrt(v / c2) + eps)
 *   NPU_OPT_ADAMW: w -= lr * wd * w; then ADAM with wd = 0
 * where c1 = 1 - b1^step and c2 = 1 - b2^step are computed in double and
 * rounded to fp32; everything else is fp32 in the order written.
 * @hdr: op NPU_CMD_OPTIM_F32, size 80.
 * @w, @g: fp32 [count]; @m: fp32 [count] state (0 for SGD without
 *	momentum); @v: fp32 [count] (Adam only, else 0).
 * @count: >= 1.
 * @algo: NPU_OPT_*.
 * @lr, @beta1, @beta2, @eps, @wd: fp32 bits, finite; 0 <= beta < 1,
 *	eps > 0 for Adam.
 * @step: Adam's step count, from 1; 0 for SGD.
 * @reserved: zero.
 */
struct npu_cmd_optim_f32 {
	struct npu_cmd_hdr hdr;
	uint64_t w;
	uint64_t g;
	uint64_t m;
	uint64_t v;
	uint32_t count;
	uint32_t algo;
	uint32_t lr;
	uint32_t beta1;
	uint32_t beta2;
	uint32_t eps;
	uint32_t wd;
	uint32_t step;
	uint32_t reserved[2];
};
#define NPU_OPT_SGD		1
#define NPU_OPT_ADAM		2
#define NPU_OPT_ADAMW		3

/**
 * struct npu_cmd_softmax_bwd - the gradient of NPU_CMD_SOFTMAX along the
 * middle dim of [@outer][@axis][@inner], from its output y and the
 * output's gradient dy: softmax dx = y (dy - sum(dy y)), log-softmax
 * dx = dy - exp(y) sum(dy), the sums along the axis. Each value is
 * computed in double and rounded once.
 * @hdr: op NPU_CMD_SOFTMAX_BWD, size 48.
 * @y, @dy, @dx: fp32.
 * @outer, @axis, @inner: >= 1, the product at most NPU_TENSOR_MAX_BYTES / 4.
 * @flags: NPU_SOFTMAX_LOG: log-softmax's.
 */
struct npu_cmd_softmax_bwd {
	struct npu_cmd_hdr hdr;
	uint64_t y;
	uint64_t dy;
	uint64_t dx;
	uint32_t outer;
	uint32_t axis;
	uint32_t inner;
	uint32_t flags;
};

/**
 * struct npu_cmd_norm_bwd - the gradients of NPU_CMD_NORM's layer
 * normalisation over rows of @norm, from its input x, its scale, the
 * mean and inverse deviation it wrote for each row, and the output's
 * gradient dy. With xh = (x - mean) inv_std and g = dy scale:
 *   dx = inv_std (g - mean(g) - xh mean(g xh)), the means along the row;
 *   dscale = sum over rows of dy xh; dbias = sum over rows of dy.
 * Sums in double, each value rounded once.
 * @hdr: op NPU_CMD_NORM_BWD, size 88.
 * @x, @dy: fp32 [@rows][@norm]; @scale: fp32 [@norm];
 * @mean, @inv_std: fp32 [@rows].
 * @dx: fp32 [@rows][@norm], or 0 for none; @dscale, @dbias: fp32 [@norm],
 *	or 0 for none. At least one of the three.
 * @rows, @norm: >= 1, the product at most NPU_TENSOR_MAX_BYTES / 4.
 * @reserved: zero.
 */
struct npu_cmd_norm_bwd {
	struct npu_cmd_hdr hdr;
	uint64_t x;
	uint64_t scale;
	uint64_t mean;
	uint64_t inv_std;
	uint64_t dy;
	uint64_t dx;
	uint64_t dscale;
	uint64_t dbias;
	uint32_t rows;
	uint32_t norm;
	uint32_t reserved[2];
};

/**
 * struct npu_cmd_act_bwd - the gradient of an fp32 function of
 * NPU_CMD_ACTIVATION: dx = dy f'(x), from its input x, in double, rounded
 * once. Where f is not differentiable the one-sided derivative from the
 * right is taken, except clip's, which passes dy on lo <= x <= hi
 * (PyTorch's); floor, ceil, round and sign give 0.
 * @hdr: op NPU_CMD_ACT_BWD, size 56.
 * @x, @dy, @dx: fp32 [@count].
 * @count: 1..NPU_TENSOR_MAX_BYTES / 4.
 * @fn: an NPU_ACTFN_* whose derivative npu_actfn_has_grad() says exists.
 * @alpha, @beta, @lo, @hi: as NPU_CMD_ACTIVATION's for @fn.
 */
struct npu_cmd_act_bwd {
	struct npu_cmd_hdr hdr;
	uint64_t x;
	uint64_t dy;
	uint64_t dx;
	uint32_t count;
	uint32_t fn;
	uint32_t alpha;
	uint32_t beta;
	uint32_t lo;
	uint32_t hi;
};

NPU_STATIC_ASSERT(sizeof(struct npu_cmd_gemm_f32) == 72, "gemm_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_conv2d_f32) == 128, "conv2d_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_pool_f32) == 88, "pool_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_eltwise_f32) == 48, "eltwise_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_reduce_f32) == 40, "reduce_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_xent_f32) == 56, "xent_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_optim_f32) == 80, "optim_f32 layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_softmax_bwd) == 48, "softmax_bwd layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_norm_bwd) == 88, "norm_bwd layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_act_bwd) == 56, "act_bwd layout");

#endif /* NPU_CMD_TRAIN_H */
