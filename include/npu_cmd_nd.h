/* SPDX-License-Identifier: MIT */
/*
 * npu_cmd_nd.h - the N-dimensional inference commands of the command
 * stream (ops 6 to 15, 32 to 34, 38 and 39): the ops whole networks bring besides convolutions
 * and fully connected layers, with ONNX's semantics over packed row-major
 * tensors (as ONNX lays them out), so that a network need not leave the
 * NPU for its residual adds, activations, attention, normalisation,
 * quantization steps and data movement. Inference commands: every profile
 * has them. Included by npu_cmd.h; Documentation/command-stream.rst
 * explains them.
 *
 * Floating-point scalars travel as their IEEE bits in a uint32. Operands
 * are 4-byte aligned where their elements are 4 bytes or more; no operand
 * may exceed NPU_TENSOR_MAX_BYTES (256 MiB, the engine's bound). Where a
 * command lists dims, entries past its rank are zero.
 *
 * fp32 results: elementwise arithmetic is IEEE fp32 (bit-exact); the
 * functions (activations, softmax, normalisation, reductions) are computed
 * in double and rounded once, within 2 ulp of an fp64 loop's result
 * rounded to fp32. Integer results are exact.
 */
#ifndef NPU_CMD_ND_H
#define NPU_CMD_ND_H

#include "npu_cmd.h"	/* struct npu_cmd_hdr (it includes this file at its end) */
#include "npu_elemfn.h"	/* the element functions: NPU_BIN_*, NPU_ACTFN_* */

#define NPU_ND_MAX_RANK		6	/* elementwise, matmul batches, reductions */
#define NPU_COPY_MAX_RANK	12	/* a copy: a tile splits each dim in two */

/* Element types of the N-d commands. */
enum npu_nd_dtype {
	NPU_ND_F32 = 1,
	NPU_ND_I8 = 2,
	NPU_ND_U8 = 3,
	NPU_ND_I32 = 4,
	NPU_ND_I64 = 5,		/* NPU_CMD_CAST and NPU_CMD_BINARY only */
	NPU_ND_BOOL = 6,	/* one byte, 0 or 1; NPU_CMD_CAST only */
	NPU_ND_BF16 = 7,	/* the top half of an fp32; NPU_CMD_MATMUL and NPU_CMD_CAST */
	NPU_ND_F16 = 8,		/* IEEE binary16; NPU_CMD_CAST only */
};

/**
 * struct npu_cmd_binary - elementwise arithmetic with numpy's
 * broadcasting: out[i] = a[i'] fn b[i''], where i' and i'' are i with the
 * index of each dim of size 1 in a (or b) replaced by 0. fp32 (IEEE), or
 * int32 or int64 wrapping as two's complement (division truncating, by 0
 * giving 0; no pow), or bool for and, or, xor. The comparisons and the
 * logic write bool (one byte, 0 or 1).
 * @hdr: op NPU_CMD_BINARY, size 120.
 * @a, @b: @dtype elements; @out: @dtype's or bool; packed over their dims.
 * @fn: enum npu_binfn_code (npu_elemfn.h, which says what each computes).
 * @rank: 1..NPU_ND_MAX_RANK.
 * @dtype: NPU_ND_F32, NPU_ND_I32 or NPU_ND_I64; NPU_ND_BOOL for the logic.
 * @flags: NPU_BIN_F_RELU (fp32 arithmetic: ADD to MIN, and POW): then
 *	out = out < 0 ? 0 : out, as NPU_ELTF_RELU (NaN and -0 kept); or 0.
 * @out_dims: 1..NPU_TENSOR_MAX_DIM each.
 * @a_dims, @b_dims: each dim equal to out's or 1.
 */
struct npu_cmd_binary {
	struct npu_cmd_hdr hdr;
	uint64_t a;
	uint64_t b;
	uint64_t out;
	uint32_t fn;
	uint32_t rank;
	uint32_t dtype;
	uint32_t flags;
	uint32_t out_dims[NPU_ND_MAX_RANK];
	uint32_t a_dims[NPU_ND_MAX_RANK];
	uint32_t b_dims[NPU_ND_MAX_RANK];
};
#define NPU_BIN_F_RELU	(1u << 0)

/**
 * struct npu_cmd_activation - an elementwise function of one tensor:
 * fp32 in and out through a function of enum npu_actfn_code, or 8-bit in and out through a
 * 256-entry table (NPU_ACTFN_TABLE: out[i] = table[(uint8_t)in[i]]), which
 * is how an int8 network runs any activation: libnpu fills the table with
 * the function of each dequantized value, quantized again.
 * @hdr: op NPU_CMD_ACTIVATION, size 56.
 * @in, @out: @count elements (fp32, or bytes with NPU_ACTFN_TABLE).
 * @table: 256 bytes with NPU_ACTFN_TABLE, else 0.
 * @count: 1..NPU_TENSOR_MAX_BYTES / 4.
 * @fn: enum npu_actfn_code (npu_elemfn.h, which says what each computes
 *	and which parameters it reads), or NPU_ACTFN_TABLE.
 * @alpha, @beta: fp32 bits: leaky ReLU's slope (alpha), hard-sigmoid's
 *	and affine's alpha * x + beta ...; 0 where @fn reads none.
 * @lo, @hi: fp32 bits: clip's bounds (lo <= hi, neither NaN); else 0.
 */
struct npu_cmd_activation {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint64_t table;
	uint32_t count;
	uint32_t fn;
	uint32_t alpha;
	uint32_t beta;
	uint32_t lo;
	uint32_t hi;
};


/**
 * struct npu_cmd_copy - data movement as the DMA engine does it, one
 * strided gather: the output, packed over @dims, takes at each index
 * (i0 .. i(rank-1)) the input element @off + sum(i_d * @st[d]). A stride
 * may be 0 (broadcast: Expand) or negative (a reversed slice); Transpose
 * (any rank, the channel shuffle included), Slice, Split, Expand and Tile
 * are each one copy. Every element read must lie in [0, @in_count).
 * @hdr: op NPU_CMD_COPY, size 192.
 * @in, @out: tensors of @elem_size-byte elements.
 * @off: first input element.
 * @in_count: input elements, 1..NPU_TENSOR_MAX_BYTES / @elem_size.
 * @rank: 1..NPU_COPY_MAX_RANK.
 * @elem_size: 1, 2, 4 or 8.
 * @dims: 1..NPU_TENSOR_MAX_DIM each; @st: strides in elements.
 */
struct npu_cmd_copy {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	int64_t off;
	uint64_t in_count;
	uint32_t rank;
	uint32_t elem_size;
	uint32_t dims[NPU_COPY_MAX_RANK];
	int64_t st[NPU_COPY_MAX_RANK];
};

/**
 * struct npu_cmd_softmax - fp32 softmax (or log-softmax) along the middle
 * dim of [@outer][@axis][@inner], ONNX's Softmax: each value less the
 * maximum along the axis, exponentiated and divided by their sum. With a
 * @mask (size 56, devices with NPU_HW_CAP_SOFTMAX_MASK), attention's
 * additive mask first: row r of the input (@inner 1) plus, in fp32, row
 * (r / @mask_div) % @mask_rows of @mask, as ONNX's Add broadcasting a
 * [B][1][1][T] padding mask (@mask_div H T) or a [1][1][T][T] causal one
 * (@mask_div 1) over [B][H][T][T] scores gives.
 * @hdr: op NPU_CMD_SOFTMAX, size 40, or 56 with the mask's fields.
 * @in, @out: fp32.
 * @outer, @axis, @inner: >= 1, the product at most NPU_TENSOR_MAX_BYTES / 4.
 * @flags: NPU_SOFTMAX_LOG: log-softmax.
 * @mask: fp32 [@mask_rows][@axis], or 0 (then @mask_div and @mask_rows 0).
 * @mask_div, @mask_rows: >= 1 with a mask; @mask_rows at most @outer.
 */
struct npu_cmd_softmax {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t outer;
	uint32_t axis;
	uint32_t inner;
	uint32_t flags;
	uint64_t mask;
	uint32_t mask_div;
	uint32_t mask_rows;
};
#define NPU_CMD_SOFTMAX_SIZE_NOMASK	40	/* the command before its mask */
#define NPU_SOFTMAX_LOG		(1u << 0)

/**
 * struct npu_cmd_norm - fp32 layer normalisation over rows of @norm:
 * y = (x - mean) / sqrt(var + eps) * scale + bias, with the mean and the
 * (biased) variance of the row (ONNX's LayerNormalization); or with
 * NPU_NORM_RMS, y = x / sqrt(mean(x^2) + eps) * scale + bias (RMS norm).
 * The 96-byte form (devices with NPU_HW_CAP_NORM_Q8) takes 8-bit x or y,
 * a quantized network's DQ -> LayerNormalization -> Q: x dequantized as
 * ONNX does ((x - @xz) * @xs in fp32), y computed as above and rounded to
 * fp32, then quantized as ONNX does (y / @ys in fp32, rounded half to
 * even, + @yz, saturated).
 * @hdr: op NPU_CMD_NORM, size 72, or 96 with the quantization fields.
 * @in, @out: fp32 [@rows][@norm], or 8-bit per @xdt, @ydt.
 * @scale: fp32 [@norm]; @bias: fp32 [@norm] or 0 for none.
 * @mean, @inv_std: fp32 [@rows] each, or 0: the row's mean and
 *	1 / sqrt(var + eps) (layer normalisation only).
 * @rows, @norm: >= 1, the product at most NPU_TENSOR_MAX_BYTES / 4.
 * @eps: fp32 bits, finite and >= 0.
 * @flags: NPU_NORM_RMS.
 */
struct npu_cmd_norm {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t scale;
	uint64_t bias;
	uint64_t out;
	uint64_t mean;
	uint64_t inv_std;
	uint32_t rows;
	uint32_t norm;
	uint32_t eps;
	uint32_t flags;
	uint32_t xdt, ydt;	/* NPU_ND_F32 (or 0), NPU_ND_I8 or NPU_ND_U8 */
	uint32_t xs, ys;	/* fp32 bits: an 8-bit side's scale (> 0, finite), else 0 */
	int32_t xz, yz;		/* an 8-bit side's zero point, else 0 */
};
#define NPU_NORM_RMS		(1u << 0)
#define NPU_CMD_NORM_SIZE_F32	72	/* the command before its 8-bit form */

/**
 * struct npu_cmd_matmul - batched matrix product of two activations, with
 * numpy's broadcasting over @brank batch dims: for each batch index,
 * out[m][n] = sum_k op(A)[m][k] * op(B)[k][n], where op(A) is A [m][k] or,
 * with NPU_MATMUL_TRANS_A, A stored [k][m] (likewise B [k][n] or [n][k]),
 * as attention's Q.K^T and P.V. fp32 (the sum in double, times @alpha,
 * rounded once), or 8-bit operands (NPU_ND_I8 or NPU_ND_U8) less their
 * zero points into an int32 accumulator (ONNX's MatMulInteger; the
 * requantization that follows is an NPU_CMD_QDQ).
 * @hdr: op NPU_CMD_MATMUL, size 160.
 * @a, @b: the operands, one matrix per batch of each, packed.
 * @a_zp, @b_zp: 8-bit zero points (@adt's, @bdt's): @azp_n of A (1, or
 *	one per row m), @bzp_n of B (1, or one per column n); 0 for none.
 * @out: fp32 or int32 [batches][m][n].
 * @m, @n, @k: 1..NPU_TENSOR_MAX_DIM.
 * @brank: 0..NPU_ND_MAX_RANK batch dims.
 * @adt, @bdt: both NPU_ND_F32, both NPU_ND_BF16 (the products and sum as
 *	fp32's, the output fp32; 2-byte aligned), or each NPU_ND_I8 or
 *	NPU_ND_U8.
 * @azp_n, @bzp_n: 1, or m (A's) / n (B's); 0 with no zero point.
 * @flags: NPU_MATMUL_*.
 * @alpha: fp32 bits, finite (1.0 for 8-bit operands).
 * @ob, @ab, @bb: batch dims of out, A and B (A's and B's each equal to
 *	out's or 1).
 */
struct npu_cmd_matmul {
	struct npu_cmd_hdr hdr;
	uint64_t a;
	uint64_t b;
	uint64_t a_zp;
	uint64_t b_zp;
	uint64_t out;
	uint32_t m;
	uint32_t n;
	uint32_t k;
	uint32_t brank;
	uint32_t adt;
	uint32_t bdt;
	uint32_t azp_n;
	uint32_t bzp_n;
	uint32_t flags;
	uint32_t alpha;
	uint32_t ob[NPU_ND_MAX_RANK];
	uint32_t ab[NPU_ND_MAX_RANK];
	uint32_t bb[NPU_ND_MAX_RANK];
};
#define NPU_MATMUL_TRANS_A	(1u << 0)
#define NPU_MATMUL_TRANS_B	(1u << 1)

/**
 * struct npu_cmd_qdq - ONNX's QuantizeLinear and DequantizeLinear, and
 * the requantization of an int32 accumulator as onnxruntime's QLinear ops
 * do it, over [@outer][@axis][@inner] with one scale (and zero point) per
 * entry of the axis (@axis 1: per tensor):
 *   dequantize: y = (fp32)(x - zp) * scale, in fp32;
 *   quantize:   y = saturate(rint(x / scale) + zp), the division in fp32,
 *		 rint rounding half to even;
 *   requantize: y = saturate(rint((fp32)x * scale) + zp), x int32, the
 *		 product in fp32 (scale is the multiplier);
 *   requantize_q31 (devices with NPU_HW_CAP_REQUANT_Q31): TFLite's, y =
 *		 saturate(MultiplyByQuantizedMultiplier(x, mult, shift) + zp),
 *		 x int32 (npu_requant_scale(), npu_quant.h).
 * A NaN quantizes to the zero point.
 * @hdr: op NPU_CMD_QDQ, size 64.
 * @in, @out: fp32, int32 or @qdtype elements as the mode says.
 * @scale: fp32 [@axis], finite and > 0; for requantize_q31 struct
 *	npu_quant_ch [@axis] (a Q31 multiplier and a shift in -31..30).
 * @zp: @qdtype [@axis], or 0 for zero points of 0.
 * @mode: NPU_QDQ_*.
 * @qdtype: NPU_ND_I8, NPU_ND_U8 (or NPU_ND_I32 to dequantize a bias).
 * @outer, @axis, @inner: >= 1, the product at most NPU_TENSOR_MAX_BYTES / 4.
 * @reserved: zero.
 */
struct npu_cmd_qdq {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t scale;
	uint64_t zp;
	uint64_t out;
	uint32_t mode;
	uint32_t qdtype;
	uint32_t outer;
	uint32_t axis;
	uint32_t inner;
	uint32_t reserved;
};
#define NPU_QDQ_DEQUANTIZE	1
#define NPU_QDQ_QUANTIZE	2
#define NPU_QDQ_REQUANTIZE	3
#define NPU_QDQ_REQUANTIZE_Q31	4

/**
 * struct npu_cmd_reduce - a reduction over any set of dims (ONNX's
 * Reduce*, ArgMax, ArgMin): out, shaped as in with the dims of @mask 1,
 * holds fn over the values of each reduced sub-array, taken in row-major
 * order. fp32: sums in double (rounded once at the end), except
 * NPU_RED_SUM_F32 which sums in fp32 in that order (onnxruntime's); mean
 * divides the double sum. Integers (int64, int32, int8, uint8): sum, mean
 * (truncating), product, sum of squares and L1 wrap as 64-bit two's
 * complement and are stored wrapped to @dtype; max and min, compared as
 * integers (int64's past 2^53 exactly). The arg
 * reductions write int64 indexes (the first extreme, or the last with
 * NPU_REDUCE_SELECT_LAST); a NaN wins a max or a min.
 * @hdr: op NPU_CMD_REDUCE, size 72.
 * @in: @dtype [@dims]; @out: @dtype (int64 for the arg ones).
 * @fn: NPU_RED_*; integers: SUM, MEAN, MAX, MIN, PROD, SUM_SQUARE, L1,
 *	ARGMAX, ARGMIN.
 * @dtype: NPU_ND_F32, NPU_ND_I64, NPU_ND_I32, NPU_ND_I8 or NPU_ND_U8.
 * @rank: 1..NPU_ND_MAX_RANK.
 * @mask: bit d: dim d is reduced; nonzero, no bit at or past @rank.
 * @flags: NPU_REDUCE_SELECT_LAST.
 * @reserved: zero.
 * @dims: 1..NPU_TENSOR_MAX_DIM.
 */
struct npu_cmd_reduce {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t fn;
	uint32_t dtype;
	uint32_t rank;
	uint32_t mask;
	uint32_t flags;
	uint32_t reserved;
	uint32_t dims[NPU_ND_MAX_RANK];
};
#define NPU_RED_SUM		1
#define NPU_RED_MEAN		2
#define NPU_RED_MAX		3
#define NPU_RED_MIN		4
#define NPU_RED_PROD		5
#define NPU_RED_SUM_SQUARE	6
#define NPU_RED_L1		7
#define NPU_RED_L2		8
#define NPU_RED_LOG_SUM		9
#define NPU_RED_LOG_SUM_EXP	10
#define NPU_RED_SUM_F32		11
#define NPU_RED_ARGMAX		12
#define NPU_RED_ARGMIN		13
#define NPU_REDUCE_SELECT_LAST	(1u << 0)

/**
 * struct npu_cmd_cast - ONNX's Cast of @count elements: integers into
 * integers wrap as two's complement; a float into an integer is truncated
 * toward zero and saturated to the type, NaN giving 0; anything into bool
 * is whether it is not 0; an integer into fp32 is rounded to nearest even.
 * fp32 into bf16 or fp16 rounds to nearest, ties to even (a NaN stays a
 * quiet NaN; past fp16's range infinity); bf16 and fp16 into fp32 are exact.
 * @hdr: op NPU_CMD_CAST, size 40.
 * @in, @out: @in_dt and @out_dt elements, aligned to their size (at most 4).
 * @count: 1..NPU_TENSOR_MAX_BYTES / 8.
 * @in_dt, @out_dt: NPU_ND_F32, I8, U8, I32, I64 or BOOL; or NPU_ND_BF16
 *	or NPU_ND_F16 and NPU_ND_F32, either way.
 * @reserved: zero.
 */
struct npu_cmd_cast {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t count;
	uint32_t in_dt;
	uint32_t out_dt;
	uint32_t reserved;
};

/**
 * struct npu_cmd_gather - ONNX's Gather along the middle dim of
 * x [@outer][@axis][@inner]: out [@outer][@nidx][@inner] takes, for each
 * index, the row of x it names (an embedding lookup, a token's column);
 * with NPU_GATHER_ELEMENTS, ONNX's GatherElements: each element of out
 * [@outer][@nidx][@inner] is x's at [o][index][i], its index the one at
 * the same place of an index tensor shaped as out (top-k routing, torch's
 * gather). A negative index counts from the end; one still outside x
 * fails the command (INVALID_CMD), as ONNX makes it an error, writing
 * nothing.
 * @hdr: op NPU_CMD_GATHER, size 64.
 * @in: x, @elem_size-byte elements; @idx: @nidx indexes (elements:
 *	@outer x @nidx x @inner) of @idx_size bytes (int32 or int64); @out:
 *	the rows.
 * @outer, @axis, @inner, @nidx: >= 1; x and out at most
 *	NPU_TENSOR_MAX_BYTES.
 * @elem_size: 1, 2, 4 or 8; @idx_size: 4 or 8.
 * @flags: NPU_GATHER_*; other bits zero.
 * @reserved: zero.
 */
struct npu_cmd_gather {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t idx;
	uint64_t out;
	uint32_t outer;
	uint32_t axis;
	uint32_t inner;
	uint32_t nidx;
	uint32_t elem_size;
	uint32_t idx_size;
	uint32_t flags;
	uint32_t reserved;
};

#define NPU_GATHER_ELEMENTS	(1u << 0)	/* an index per output element */

#define NPU_ND_MAX_SP	3	/* spatial dims of a window op */

/**
 * struct npu_cmd_conv - ONNX's Conv or ConvTranspose in 1 to 3 spatial
 * dims, NCHW as ONNX lays it out, with groups (depthwise: groups = in_c):
 * x [batch][in_c][in...], w [out_c][in_c / groups][k...] (transposed:
 * [in_c][out_c / groups][k...]), y [batch][out_c][out...]. Input position
 * of output o and tap k along a dim: o * s + k * d - pad (transposed: the
 * i with i * s + k * d - pad = o); positions outside the input are
 * skipped. fp32: the sum in double from the bias, rounded once; 8-bit
 * (int8 or uint8 each) less the zero points (x's per tensor, w's per
 * tensor or per output channel) into int32, wrapping (the requantization
 * is an NPU_CMD_QDQ).
 * @hdr: op NPU_CMD_CONV, size 168.
 * @x, @w, @y: the tensors; @bias: fp32 [out_c] or 0 (fp32 only);
 *	@x_zp: one @xdt value or 0; @w_zp: @wzp_n @wdt values or 0.
 * @nsp: 1..NPU_ND_MAX_SP.
 * @batch, @in_c, @out_c: >= 1; @groups divides both channel counts.
 * @flags: NPU_CONV_ND_TRANSPOSE.
 * @in, @out: spatial dims, 1..NPU_TENSOR_MAX_DIM; @k, @s, @d: 1..64;
 *	@pad: -65536..65536 before each spatial dim; entries past @nsp zero.
 * @xdt, @wdt: NPU_ND_F32 both, or each NPU_ND_I8 or NPU_ND_U8.
 * @wzp_n: 1 or out_c with @w_zp, else 0.
 * @reserved: zero.
 */
struct npu_cmd_conv {
	struct npu_cmd_hdr hdr;
	uint64_t x;
	uint64_t w;
	uint64_t bias;
	uint64_t x_zp;
	uint64_t w_zp;
	uint64_t y;
	uint32_t nsp;
	uint32_t batch;
	uint32_t in_c;
	uint32_t out_c;
	uint32_t groups;
	uint32_t flags;
	uint32_t in[NPU_ND_MAX_SP];
	uint32_t out[NPU_ND_MAX_SP];
	uint32_t k[NPU_ND_MAX_SP];
	uint32_t s[NPU_ND_MAX_SP];
	uint32_t d[NPU_ND_MAX_SP];
	int32_t pad[NPU_ND_MAX_SP];
	uint32_t xdt;
	uint32_t wdt;
	uint32_t wzp_n;
	uint32_t reserved;
};
#define NPU_CONV_ND_TRANSPOSE	(1u << 0)

/**
 * struct npu_cmd_pool - ONNX's MaxPool and AveragePool in 1 to 3 spatial
 * dims, NCHW: windows of @k taps @d apart every @s, the input padded by
 * @lo before and @hi after each dim (a window may reach past @hi: ceil
 * mode). Max: the largest tap inside the input (fp32, int8 or uint8; a
 * window with none gives -inf, or 0 for integers). Average (fp32): the sum
 * in double over the taps inside the input, or with
 * NPU_POOL_ND_COUNT_PAD over those inside the padded input, rounded once.
 * @hdr: op NPU_CMD_POOL, size 128.
 * @x: [batch][c][in...]; @y: [batch][c][out...].
 * @nsp: 1..NPU_ND_MAX_SP; @batch, @c: >= 1.
 * @flags: NPU_POOL_ND_AVG, NPU_POOL_ND_COUNT_PAD.
 * @dtype: NPU_ND_F32 (max or average), NPU_ND_I8 or NPU_ND_U8 (max).
 * @in, @out, @k, @s: 1..NPU_TENSOR_MAX_DIM (a global pool's window is the
 *	image); @d: 1..64; @lo, @hi: 0..255; entries past @nsp zero; at most
 *	NPU_TENSOR_MAX_MACS taps in all.
 * @reserved: zero.
 */
struct npu_cmd_pool {
	struct npu_cmd_hdr hdr;
	uint64_t x;
	uint64_t y;
	uint32_t nsp;
	uint32_t batch;
	uint32_t c;
	uint32_t flags;
	uint32_t dtype;
	uint32_t in[NPU_ND_MAX_SP];
	uint32_t out[NPU_ND_MAX_SP];
	uint32_t k[NPU_ND_MAX_SP];
	uint32_t s[NPU_ND_MAX_SP];
	uint32_t d[NPU_ND_MAX_SP];
	uint32_t lo[NPU_ND_MAX_SP];
	uint32_t hi[NPU_ND_MAX_SP];
};
#define NPU_POOL_ND_AVG		(1u << 0)
#define NPU_POOL_ND_COUNT_PAD	(1u << 1)

/**
 * struct npu_cmd_where - ONNX's Where: out[i] = cond[i'] ? a[i''] : b[i''']
 * with numpy's broadcasting of each of the three to @out_dims (an
 * attention mask's select).
 * @hdr: op NPU_CMD_WHERE, size 144.
 * @cond: bool (bytes, nonzero true); @a, @b, @out: @elem_size-byte elements.
 * @rank: 1..NPU_ND_MAX_RANK; @elem_size: 1, 2, 4 or 8.
 * @out_dims: 1..NPU_TENSOR_MAX_DIM; @c_dims, @a_dims, @b_dims: each
 *	equal to out's or 1; entries past @rank zero.
 */
struct npu_cmd_where {
	struct npu_cmd_hdr hdr;
	uint64_t cond;
	uint64_t a;
	uint64_t b;
	uint64_t out;
	uint32_t rank;
	uint32_t elem_size;
	uint32_t out_dims[NPU_ND_MAX_RANK];
	uint32_t c_dims[NPU_ND_MAX_RANK];
	uint32_t a_dims[NPU_ND_MAX_RANK];
	uint32_t b_dims[NPU_ND_MAX_RANK];
};

/**
 * struct npu_cmd_pad_nd - ONNX's Pad of a tensor of rank up to
 * NPU_ND_MAX_RANK: output index o along dim d reads input index
 * o - @before[d] (a negative @before crops). Outside the input, by @mode:
 * the constant @value; the edge's element; or the reflection without the
 * edge repeated (period 2n - 2, any distance; an input dim of 1 repeats).
 * @hdr: op NPU_CMD_PAD_ND, size 120.
 * @in, @out: @elem_size-byte elements, aligned to their size.
 * @rank: 1..NPU_ND_MAX_RANK.
 * @mode: NPU_PADM_*.
 * @elem_size: 1, 4 or 8.
 * @reserved: zero.
 * @value: the constant's bits, in the low @elem_size bytes (NPU_PADM_CONSTANT).
 * @in_dims, @out_dims: 1..NPU_TENSOR_MAX_DIM each, each tensor at most
 *	NPU_TENSOR_MAX_BYTES.
 * @before: -NPU_TENSOR_MAX_DIM..NPU_TENSOR_MAX_DIM.
 */
struct npu_cmd_pad_nd {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint32_t rank;
	uint32_t mode;
	uint32_t elem_size;
	uint32_t reserved;
	uint64_t value;
	uint32_t in_dims[NPU_ND_MAX_RANK];
	uint32_t out_dims[NPU_ND_MAX_RANK];
	int32_t before[NPU_ND_MAX_RANK];
};
#define NPU_PADM_CONSTANT	1
#define NPU_PADM_REFLECT	2
#define NPU_PADM_EDGE		3

/**
 * struct npu_resize_tap - where one output coordinate of one dim of
 * NPU_CMD_RESIZE reads: @count taps from input index @first on (an index
 * past an edge reads the edge), weighted by @w; libnpu works them out with
 * ONNX's coordinate transforms and interpolation modes (nearest, linear,
 * cubic), so that the device and every other backend pick the same pixels.
 * @first: -2^40..2^40.
 * @count: 1..4.
 * @outside: 1: the output is the extrapolation value (a crop's outside).
 * @w: the taps' weights, IEEE doubles, finite.
 */
struct npu_resize_tap {
	int64_t first;
	uint32_t count;
	uint32_t outside;
	double w[4];
};

/**
 * struct npu_cmd_resize - ONNX's Resize as separable taps: each output
 * element is the sum, in double, over every combination of its dims' taps
 * (the last dim's varying fastest) of the product of their weights (dim 0
 * first) times the input element, skipping a product of 0; then fp32, or
 * an integer rounded half to even and saturated. Dim d's taps are the
 * @out_dims[d] entries of @table after those of the dims before it.
 * @hdr: op NPU_CMD_RESIZE, size 96.
 * @in, @out: @dtype elements.
 * @table: struct npu_resize_tap entries, 8-byte aligned.
 * @rank: 1..NPU_ND_MAX_RANK.
 * @dtype: NPU_ND_F32, NPU_ND_I8, NPU_ND_U8 or NPU_ND_I32.
 * @extrapolation: fp32 bits, finite.
 * @reserved: zero.
 * @in_dims, @out_dims: 1..NPU_TENSOR_MAX_DIM each, each tensor at most
 *	NPU_TENSOR_MAX_BYTES; the taps of an output element times the output's
 *	elements at most NPU_TENSOR_MAX_MACS.
 */
struct npu_cmd_resize {
	struct npu_cmd_hdr hdr;
	uint64_t in;
	uint64_t out;
	uint64_t table;
	uint32_t rank;
	uint32_t dtype;
	uint32_t extrapolation;
	uint32_t reserved;
	uint32_t in_dims[NPU_ND_MAX_RANK];
	uint32_t out_dims[NPU_ND_MAX_RANK];
};

NPU_STATIC_ASSERT(sizeof(struct npu_cmd_pad_nd) == 120, "pad_nd layout");
NPU_STATIC_ASSERT(sizeof(struct npu_resize_tap) == 48, "resize tap layout");
NPU_STATIC_ASSERT(sizeof(struct npu_cmd_resize) == 96, "resize layout");

#endif /* NPU_CMD_ND_H */
