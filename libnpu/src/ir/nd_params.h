/* SPDX-License-Identifier: MIT */
/*
 * nd_params.h - the parameters of the IR's N-dimensional ops, with ONNX's
 * semantics over packed row-major arrays (NCHW, as ONNX lays them out):
 * what every implementation of them (the CPU reference, the NPU packer,
 * OpenCL, oneDNN) reads, and the counts and types they imply. The
 * vocabulary the importer and the passes speak; nothing here runs a kernel.
 *
 * A kernel takes its tensors in the order its struct kern lists them
 * (kernel.h); -1 there for an absent optional one.
 */
#ifndef NPU_ND_PARAMS_H
#define NPU_ND_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"
#include "ir/nd_fn.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

#define ND_MAX_RANK	NPU_MAX_RANK
#define ND_MAX_SP	3	/* spatial dimensions of a window op */

/* A copy's rank: a tile splits each of the tensor's dims in two. */
#define ND_COPY_RANK	(2 * ND_MAX_RANK)

/*
 * t: a, b, y. @a and @b: dims aligned to @rank (leading 1s), 1 to broadcast.
 * The output is of @dtype, or bool for a comparison (nd_binary_out_dt).
 */
struct nd_binary {
	uint32_t fn, dtype, rank;
	uint32_t out[ND_MAX_RANK], a[ND_MAX_RANK], b[ND_MAX_RANK];
};

/*
 * t: x, y. Clip's bounds: @lo, @hi for fp32, @ilo, @ihi for integers. The
 * output is of @dtype; a cast's of @odtype (0 for the others). With
 * @quant, a function of fp32 on 8-bit values (@dtype int8 or uint8, in
 * and out): y = QuantizeLinear(f(DequantizeLinear(x, @xs, @xz)), @ys,
 * @yz), each step as ONNX's (nd_dequantize_one, nd_quantize_one), the
 * function as for fp32 - DQ -> activation -> Q, which every backend may
 * run through a 256-entry table.
 */
struct nd_unary {
	uint32_t fn, dtype, odtype;
	uint64_t count;
	float alpha, beta, lo, hi;
	int32_t ilo, ihi;
	uint32_t quant;
	float xs, ys;
	int32_t xz, yz;
};

/*
 * t: a, b, a_zp, b_zp, y. Batched: @brank batch dims of the output, and of
 * each operand aligned to them (1 to broadcast); each batch is
 * alpha * op(A)[m][k] * op(B)[k][n]. fp32, or uint8/int8 operands with
 * zero points (per tensor, or per row of A / column of B) into int32.
 */
struct nd_matmul {
	uint32_t brank;
	uint32_t ob[ND_MAX_RANK], ab[ND_MAX_RANK], bb[ND_MAX_RANK];
	uint32_t m, n, k, trans_a, trans_b;
	uint32_t adt, bdt;
	uint32_t azp_n, bzp_n;		/* zero points: 1, m (A's) or n (B's) */
	float alpha;
};

/*
 * t: x, w, bias, x_zp, w_zp, y. x [batch][in_c][in...], y [batch][out_c]
 * [out...]; w [out_c][in_c/groups][k...], or for a transposed convolution
 * [in_c][out_c/groups][k...]. @pad: the padding before each spatial dim
 * (the output's size already says what is after).
 * An int32 accumulator is requantized by a separate kernel (nd_qdq). fp32, or uint8/int8
 * with zero points (w's per tensor or per output channel) into int32.
 */
struct nd_conv {
	uint32_t nsp, batch, in_c, out_c, groups, transpose;
	uint32_t in[ND_MAX_SP], out[ND_MAX_SP], k[ND_MAX_SP], s[ND_MAX_SP], d[ND_MAX_SP];
	int32_t pad[ND_MAX_SP];		/* < 0: the output starts before the input */
	uint32_t xdt, wdt;
	uint32_t wzp_n;			/* w's zero points: 1 or out_c */
};

/*
 * t: x, y, indices. A window of @k taps @d apart, stride @s, the input
 * padded by @lo before and @hi after (a window may reach past @hi: ceil
 * mode). Average: over the taps inside the input, or with
 * @count_include_pad over those inside the padded input. Max may also
 * write each maximum's index (int64, the first of equal ones) into the
 * whole input flattened, its spatial dims in reverse with @col_major
 * (ONNX's storage_order 1).
 */
struct nd_pool {
	uint32_t nsp, batch, c, average, count_include_pad, dtype, col_major;
	uint32_t in[ND_MAX_SP], out[ND_MAX_SP], k[ND_MAX_SP], s[ND_MAX_SP], d[ND_MAX_SP];
	uint32_t lo[ND_MAX_SP], hi[ND_MAX_SP];
};

/*
 * t: x, mask (or -1), y. [outer][axis][inner], normalised along axis;
 * @log: log-softmax. With a mask (@inner 1): row r of x plus, in fp32,
 * row (r / @mask_div) % @mask_rows of the mask [@mask_rows][@axis] first
 * (attention's additive mask, as an Add broadcasting it gives).
 */
struct nd_softmax {
	uint64_t outer, axis, inner;
	uint32_t log;
	uint64_t mask_div, mask_rows;	/* 0 without a mask */
};

/*
 * t: x, scale, bias, y, mean, inv_std_dev. Rows of @norm elements. x and y
 * fp32, or int8 where @xdt / @ydt say so: x dequantized ((x - @xz) * @xs
 * in fp32), y quantized from its fp32 value (y / @ys rounded half to even,
 * + @yz, saturated), ONNX's steps (DQ -> LayerNormalization -> Q).
 */
struct nd_layernorm {
	uint64_t outer, norm;
	float eps;
	uint32_t xdt, ydt;		/* 0 or NPU_DT_FLOAT32: fp32 */
	float xs, ys;
	int32_t xz, yz;
};

enum nd_pad_mode { ND_PAD_CONSTANT, ND_PAD_REFLECT, ND_PAD_EDGE };

/* t: x, y. @before < 0 crops. The constant: @fval (fp32) or @ival. */
struct nd_pad {
	uint32_t rank, mode, dtype;
	uint32_t in[ND_MAX_RANK], out[ND_MAX_RANK];
	int32_t before[ND_MAX_RANK];
	float fval;
	int32_t ival;
};

enum nd_resize_mode { ND_RESIZE_NEAREST, ND_RESIZE_LINEAR, ND_RESIZE_CUBIC };
enum nd_resize_coord {
	ND_COORD_HALF_PIXEL, ND_COORD_ASYMMETRIC, ND_COORD_PYTORCH_HALF_PIXEL,
	ND_COORD_TF_HALF_PIXEL_FOR_NN, ND_COORD_ALIGN_CORNERS, ND_COORD_TF_CROP_AND_RESIZE,
	ND_COORD_HALF_PIXEL_SYMMETRIC,	/* opset 19's: half_pixel about the centre */
};
enum nd_nearest {
	ND_NEAREST_ROUND_PREFER_FLOOR, ND_NEAREST_ROUND_PREFER_CEIL, ND_NEAREST_FLOOR,
	ND_NEAREST_CEIL,
};

/* t: x, y. ONNX Resize, every dimension with its own @scale. */
struct nd_resize {
	uint32_t rank, mode, coord, nearest, exclude_outside, dtype;
	uint32_t in[ND_MAX_RANK], out[ND_MAX_RANK];
	double scale[ND_MAX_RANK];
	double roi_lo[ND_MAX_RANK], roi_hi[ND_MAX_RANK];
	float cubic_a, extrapolation;
};

/* t: cond (bool), a, b, y: y = cond ? a : b, each operand broadcast to @out. */
struct nd_where {
	uint32_t rank, dtype;
	uint32_t out[ND_MAX_RANK], c[ND_MAX_RANK], a[ND_MAX_RANK], b[ND_MAX_RANK];
};

/*
 * t: x, y. y, packed row-major over @dims, is x at element offset @off +
 * sum(index[d] * @st[d]); a stride may be 0 (a broadcast) or negative (a
 * reversed slice). Transpose, Slice, Expand, Tile and Split are this.
 */
struct nd_copy {
	uint32_t rank, dtype;
	uint32_t dims[ND_COPY_RANK];
	int64_t off, st[ND_COPY_RANK];
};

/*
 * t: x, indices (int32 or int64), y.
 * Gather (@elements 0): x [outer][axis][inner], y [outer][nidx][inner].
 * GatherElements (1): x of @rank dims @xd, indices and y of dims @id; y's
 * element at index i is x's at i with i[@ax] replaced by the index there.
 * A negative index counts from the end; one still out of range fails the
 * run with a message, as ONNX makes it an error and onnxruntime raises it
 * (no backend reads outside x, and none gives a silent 0).
 */
struct nd_gather {
	uint32_t elements, dtype, idt;
	uint64_t outer, axis, inner, nidx;
	uint32_t rank, ax;
	uint32_t xd[ND_MAX_RANK], id[ND_MAX_RANK];
};

/*
 * t: x, y. enum nd_reduce_fn over the dims of @in set in @mask (bit d: dim
 * d), y shaped as @in with those dims 1. Floats sum in double; integers
 * wrap as numpy's do; the arg reductions give int64, the first index of
 * the extreme (the last with @select_last).
 */
struct nd_reduce {
	uint32_t fn, dtype, rank, mask, select_last;
	uint32_t in[ND_MAX_RANK];
};

enum nd_qdq_mode {
	ND_DEQUANTIZE,		/* (x - zp) * scale, in fp32 */
	ND_QUANTIZE,		/* fp32 x / scale, rounded half to even, + zp, saturated */
	ND_REQUANTIZE,		/* int32 x * scale (a multiplier), rounded likewise */
	ND_REQUANTIZE_Q31,	/* int32 x by TFLite's (mult, shift) pairs, the scale int32 */
};

/*
 * t: x, scale, zp, y. ONNX's QuantizeLinear and DequantizeLinear, and the
 * requantization of an integer accumulator as onnxruntime's QLinearConv
 * and QLinearMatMul do it (ONNX requantization: an fp32 multiplier
 * x_scale * w_scale / y_scale, the product rounded half to even).
 * [outer][axis][inner] with one scale and zero point per entry of the
 * axis, or @axis 1 for per tensor. ND_REQUANTIZE_Q31 is TFLite's
 * (MultiplyByQuantizedMultiplier, npu_quant.h): the scale holds @axis
 * (multiplier, shift) pairs of int32.
 */
struct nd_qdq {
	uint32_t mode, qdtype;
	uint64_t outer, axis, inner;
};

/* A binary op's output dtype: bool for a comparison, else its inputs'. */
uint32_t nd_binary_out_dt(uint32_t fn, uint32_t dt);
/*
 * Whether @p is fp32 arithmetic (add, sub, mul, div, max, min): what a
 * backend may end with a ReLU in the same kernel.
 */
int nd_binary_arith_f32(const struct nd_binary *p);
/* A unary op's output dtype. */
uint32_t nd_unary_out_dt(const struct nd_unary *p);
/* The element counts of a copy's output, a where's output, a reduction's output. */
uint64_t nd_copy_count(const struct nd_copy *p);
uint64_t nd_where_count(const struct nd_where *p, int which);
uint64_t nd_reduce_count(const struct nd_reduce *p, int out);
/* The element size of a dtype (ir_elem_size's, for the references). */
size_t nd_elem_size(uint32_t dt);
/* Elements of a binary op's operand (0: a, 1: b, 2: y). */
uint64_t nd_binary_count(const struct nd_binary *p, int which);
/* The product of @n dims. */
uint64_t nd_prod(const uint32_t *d, uint32_t n);
/* Work of each kernel, for costs: MACs or elements. */
uint64_t nd_conv_macs(const struct nd_conv *p);
uint64_t nd_pool_taps(const struct nd_pool *p);

#pragma GCC visibility pop

#endif /* NPU_ND_PARAMS_H */
