/* SPDX-License-Identifier: MIT */
/*
 * npu_quant.h - the one definition of int8 requantization arithmetic used
 * by every implementation (the device's tensor engine, libnpu's CPU
 * reference, and later OpenCL), so their results agree bit for bit.
 *
 * It is TFLite's reference arithmetic (tensorflow/lite/kernels/internal/
 * common.h, from gemmlowp's fixedpoint.h):
 *
 *   out = clamp(zp_out + RDBPOT(SRDHM(acc << max(shift, 0), mult), max(-shift, 0)))
 *
 * SRDHM is the saturating rounding doubling high multiply: a * b / 2^31
 * rounded to nearest with ties toward +infinity (gemmlowp's nudge, then a
 * division that truncates), INT32_MIN * INT32_MIN saturating to INT32_MAX. RDBPOT is the rounding
 * divide by a power of two: round half away from zero. @mult is a Q31
 * fixed-point value in [2^30, 2^31) (or 0), @shift in [-31, 30]: the real
 * multiplier is mult * 2^(shift - 31). Documentation/quantization.rst
 * has worked examples.
 *
 * libnpu's OpenCL backend compiles this same file as OpenCL C (see
 * libnpu/src/kernels/), so it keeps to what both languages share.
 */
#ifndef NPU_QUANT_H
#define NPU_QUANT_H

#ifdef __OPENCL_C_VERSION__
typedef char int8_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
#define INT32_MIN	INT_MIN
#define INT32_MAX	INT_MAX
#define NPU_QUANT_TABLE	__constant		/* tables: program scope, constant memory */
#define NPU_QUANT_MEM	__global		/* softmax rows: the kernel's buffers */
#define npu_clz32(x)	((int)clz(x))
#else
#include <math.h>
#include <stdint.h>
#define NPU_QUANT_TABLE	static const
#define NPU_QUANT_MEM
#define npu_clz32(x)	__builtin_clz(x)
#endif

static inline int32_t npu_srdhm(int32_t a, int32_t b)
{
	int64_t ab, nudge;

	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	ab = (int64_t)a * (int64_t)b;
	nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
	/* Division (not a shift) truncates toward zero, as the reference does. */
	return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^exponent, rounding half away from zero; 0 <= exponent <= 31. */
static inline int32_t npu_rdbpot(int32_t x, int exponent)
{
	int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
	int32_t remainder = x & mask;
	int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);

	return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/*
 * TFLite's MultiplyByQuantizedMultiplier: x * mult * 2^(shift - 31),
 * rounded. The reference computes x * (1 << shift) in int32; where that
 * overflows it wraps on every two's-complement machine, and so does this.
 */
static inline int32_t npu_requant_scale(int32_t x, int32_t mult, int shift)
{
	int left = shift > 0 ? shift : 0;
	int right = shift > 0 ? 0 : -shift;
	int32_t shifted = (int32_t)((uint32_t)x << left);

	return npu_rdbpot(npu_srdhm(shifted, mult), right);
}

/* Requantize an int32 accumulator to int8 with zero point and clamp. */
static inline int8_t npu_requant_i8(int32_t acc, int32_t mult, int shift, int32_t zp_out,
				    int32_t act_min, int32_t act_max)
{
	int64_t v = (int64_t)npu_requant_scale(acc, mult, shift) + zp_out;

	if (v < act_min)
		v = act_min;
	if (v > act_max)
		v = act_max;
	return (int8_t)v;
}

/*
 * ONNX's requantization, as onnxruntime computes QLinearConv and
 * QLinearMatMul (Documentation/onnx.rst): @mult_bits holds the bits of an
 * fp32 multiplier (in_scale * w_scale / out_scale, worked out in fp32);
 * the accumulator is converted to fp32 and multiplied by it (one fp32
 * rounding), rounded half to even, clamped, and the zero point added.
 * Validators accept only finite multipliers >= 0 (npu_onnx_mult_valid).
 */
#ifdef __OPENCL_C_VERSION__
#define npu_f32_from_bits(b)	as_float(b)
#define npu_rintf(x)		rint(x)
#define npu_fmaf(a, b, c)	fma(a, b, c)
/* a * b + c is two roundings here, as in C (-std=c11): never a fused one */
#pragma OPENCL FP_CONTRACT OFF
#else
#include "npu_f32_bits.h"
#define npu_rintf(x)		rintf(x)
#define npu_fmaf(a, b, c)	fmaf(a, b, c)
#endif

static inline int npu_onnx_mult_valid(int32_t bits)
{
	/* sign 0, exponent not all ones: a finite number >= 0 */
	return bits >= 0 && ((bits >> 23) & 0xff) != 0xff;
}

static inline int8_t npu_requant_onnx_i8(int32_t acc, int32_t mult_bits, int32_t zp_out,
					 int32_t act_min, int32_t act_max)
{
	float v = npu_rintf((float)acc * npu_f32_from_bits(mult_bits));
	float lo = (float)(act_min - zp_out), hi = (float)(act_max - zp_out);

	v = v < lo ? lo : v > hi ? hi : v;
	return (int8_t)((int32_t)v + zp_out);
}

/*
 * ONNX's DequantizeLinear -> Add (or Mul) -> QuantizeLinear in one, the
 * ONNX reference's arithmetic bit for bit: @x and @y (their zero points
 * taken off) times their fp32 scales, added or multiplied in fp32,
 * divided by the output scale in fp32 (a correctly rounded division),
 * rounded half to even, clamped, the zero point added. Scales as fp32
 * bits, finite and > 0.
 */
static inline int8_t npu_eltwise_onnx_i8(int mul, int32_t x, int32_t y, int32_t sa, int32_t sb,
					 int32_t so, int32_t zp_out, int32_t act_min,
					 int32_t act_max)
{
	float fa = (float)x * npu_f32_from_bits(sa), fb = (float)y * npu_f32_from_bits(sb);
	float v = npu_rintf((mul ? fa * fb : fa + fb) / npu_f32_from_bits(so));
	float lo = (float)(act_min - zp_out), hi = (float)(act_max - zp_out);

	v = !(v >= lo) ? lo : v > hi ? hi : v;	/* NaN (inf - inf, 0 * inf): lo */
	return (int8_t)((int32_t)v + zp_out);
}

/*
 * DequantizeLinear -> Add -> QuantizeLinear as onnxruntime runs it once it
 * has fused the three into its QLinearAdd (MLAS's x86 kernel, AVX2 with
 * FMA): in the model's own values (@x, @y as stored plus @off: 128 for
 * uint8 values stored as int8, else 0), with @rac and @rbc the bits of
 * a_scale / c_scale and b_scale / c_scale and @fixed those of zp_c -
 * (rac * zp_a + rbc * zp_b), all worked out in fp32:
 *   @mode 0 (both vectors, or b one value for each span of the
 *   innermost dimension; 1 is accepted as the same):
 *     t = fma(a, rac, fma(b, rbc, fixed)), fixed = zp_c - fma(rac, zp_a, rbc * zp_b);
 *   @mode 2 (a one value for each span; onnxruntime swaps the operands):
 *     t = fma(b, rbc, fma(a, rac, fixed)), fixed = zp_c - fma(rbc, zp_b, rac * zp_a);
 * rounded half to even, saturated to the model's type, stored back, then
 * clamped to [@act_min, @act_max]. The fmas are where onnxruntime's build
 * contracts its fp32 steps (measured against it over every pair of 8-bit
 * values, 40 random quantizations, each mode). The ONNX reference's steps
 * (above) can differ from it in the last bit: through a deep network such
 * bits add up to several output steps, which is why it is kept apart.
 */
static inline int8_t npu_eltwise_ort_add_i8(int32_t x, int32_t y, int32_t off, int32_t rac,
					    int32_t rbc, int32_t fixed, int32_t mode,
					    int32_t act_min, int32_t act_max)
{
	float a = (float)(x + off), b = (float)(y + off), ra = npu_f32_from_bits(rac);
	float rb = npu_f32_from_bits(rbc), f = npu_f32_from_bits(fixed), t;
	float lo = off ? 0.0f : -128.0f, hi = off ? 255.0f : 127.0f;
	int32_t v;

	if (mode == 2)
		t = npu_fmaf(b, rb, npu_fmaf(a, ra, f));
	else
		t = npu_fmaf(a, ra, npu_fmaf(b, rb, f));
	t = npu_rintf(t);
	t = t < lo ? lo : t > hi ? hi : t;	/* NaN stays: it cannot come from valid bits */
	v = (int32_t)t - off;
	return (int8_t)(v < act_min ? act_min : v > act_max ? act_max : v);
}

/* Either requantization: @onnx selects ONNX's, else TFLite's. */
static inline int8_t npu_requant_q8(int onnx, int32_t acc, int32_t mult, int shift,
				    int32_t zp_out, int32_t act_min, int32_t act_max)
{
	return onnx ? npu_requant_onnx_i8(acc, mult, zp_out, act_min, act_max) :
		      npu_requant_i8(acc, mult, shift, zp_out, act_min, act_max);
}

/*
 * TFLite's QuantizeMultiplier: split a real multiplier into a Q31 value and
 * a power-of-two shift, so that real ~= mult * 2^(shift - 31). Returns -1
 * for multipliers this arithmetic cannot represent (negative, not finite,
 * or needing a left shift above 30); tiny ones become (0, 0) as in TFLite.
 */
#ifndef __OPENCL_C_VERSION__	/* double precision: the host's */
static inline int npu_quantize_multiplier(double real, int32_t *mult, int *shift)
{
	double q;
	int64_t q_fixed;

	if (!(real >= 0) || isinf(real))
		return -1;
	if (real == 0) {
		*mult = 0;
		*shift = 0;
		return 0;
	}
	q = frexp(real, shift);
	q_fixed = (int64_t)round(q * (double)(1ll << 31));
	if (q_fixed == (1ll << 31)) {
		q_fixed /= 2;
		++*shift;
	}
	if (*shift < -31) {
		*shift = 0;
		q_fixed = 0;
	}
	if (*shift > 30)
		return -1;
	*mult = (int32_t)q_fixed;
	return 0;
}
#endif

/* ------------------------------------------------------------------ */
/* Int8 softmax: TFLite's reference arithmetic on gemmlowp fixed point  */
/* ------------------------------------------------------------------ */
/*
 * Fixed-point values are raw int32 with a number of integer bits (gemmlowp
 * FixedPoint<int32_t, IntegerBits>). Additions wrap (done unsigned), as
 * gemmlowp's do on every machine we build for; products are npu_srdhm().
 */
#define NPU_SOFTMAX_DIFF_INT_BITS	5	/* kScaledDiffIntegerBits */
#define NPU_SOFTMAX_ACCUM_INT_BITS	12	/* kAccumulationIntegerBits */

static inline int32_t npu_fx_add(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t npu_fx_sub(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0: saturating shift. */
static inline int32_t npu_fx_sat_shl(int32_t x, int exponent)
{
	int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1);

	if (x > threshold)
		return INT32_MAX;
	if (x < -threshold)
		return INT32_MIN;
	return (int32_t)((uint32_t)x << exponent);
}

/* Rescale: change the integer bits from @src to @dst (gemmlowp Rescale). */
static inline int32_t npu_fx_rescale(int32_t x, int src, int dst)
{
	int e = src - dst;

	return e > 0 ? npu_fx_sat_shl(x, e) : e < 0 ? npu_rdbpot(x, -e) : x;
}

/* exp(a) for a in [-1/4, 0), Q0 in and out. */
static inline int32_t npu_fx_exp_quarter(int32_t a)
{
	const int32_t constant_term = 1895147668;	/* exp(-1/8) */
	const int32_t one_third = 715827883;
	int32_t x = npu_fx_add(a, 1 << 28);		/* a + 1/8 */
	int32_t x2 = npu_srdhm(x, x), x3 = npu_srdhm(x2, x), x4 = npu_srdhm(x2, x2);
	int32_t x4_over_4 = npu_rdbpot(x4, 2);
	int32_t poly = npu_rdbpot(npu_fx_add(npu_srdhm(npu_fx_add(x4_over_4, x3), one_third), x2), 1);

	return npu_fx_add(constant_term, npu_srdhm(constant_term, npu_fx_add(x, poly)));
}

/* exp(-2^e) for e = -2..4, Q0: the factors of npu_fx_exp_neg. */
NPU_QUANT_TABLE int32_t npu_fx_exp_mult[7] = {
	1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242,
};

/* exp(a) for a <= 0 with @int_bits integer bits in, Q0 out (gemmlowp). */
static inline int32_t npu_fx_exp_neg(int32_t a, int int_bits)
{
	int frac = 31 - int_bits;
	int32_t quarter = (int32_t)(1u << (frac - 2));
	int32_t mask = quarter - 1;
	int32_t a_mod = npu_fx_sub(a & mask, quarter);
	int32_t result = npu_fx_exp_quarter(npu_fx_rescale(a_mod, int_bits, 0));
	int32_t remainder = npu_fx_sub(a_mod, a);

	for (int e = -2; e <= 4; e++)
		if (int_bits > e && (remainder & (int32_t)(1u << (frac + e))))
			result = npu_srdhm(result, npu_fx_exp_mult[e + 2]);
	if (int_bits > 5 && a < -(1 << (36 - int_bits)))
		result = 0;
	if (a == 0)
		result = INT32_MAX;
	return result;
}

/* 1 / (1 + a) for a in [0, 1), Q0 in and out (Newton-Raphson, gemmlowp). */
static inline int32_t npu_fx_one_over_one_plus(int32_t a)
{
	int64_t sum = (int64_t)a + INT32_MAX;
	int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);	/* RoundingHalfSum */
	int32_t x = npu_fx_add(1515870810, npu_srdhm(half_den, -1010580540));	/* Q2 */

	for (int i = 0; i < 3; i++) {
		int32_t hdx = npu_srdhm(half_den, x);				/* Q2 */
		int32_t one_minus = npu_fx_sub(1 << 29, hdx);			/* Q2 */

		x = npu_fx_add(x, npu_fx_rescale(npu_srdhm(x, one_minus), 4, 2));
	}
	return npu_fx_rescale(x, 1, 0);		/* ExactMulByPot<-1>: Q2 read as Q1 */
}

/* TFLite's GetReciprocal: 1/x for x with @int_bits integer bits. */
static inline int32_t npu_fx_reciprocal(int32_t x, int int_bits, int *bits_over_unit)
{
	int headroom = x ? npu_clz32((uint32_t)x) : 32;
	uint32_t shifted = headroom < 32 ? (uint32_t)x << headroom : 0;

	*bits_over_unit = int_bits - headroom;
	return npu_fx_one_over_one_plus((int32_t)(shifted - (1u << 31)));
}

/*
 * One row of TFLite's int8 softmax (output scale 1/256, zero point -128):
 * @beta_mult and @beta_left_shift (0..31) scale input differences into Q5
 * (from PreprocessSoftmaxScaling), @diff_min (<= 0) drops differences
 * below it. Where the exponentials sum past 512 (only in rows of more than
 * 512 elements) TFLite's final shift exceeds 31 and is undefined; it is
 * clamped to 31 here.
 */
static inline void npu_softmax_i8_row(NPU_QUANT_MEM const int8_t *in,
				      NPU_QUANT_MEM int8_t *out, uint32_t n,
				      int32_t beta_mult, int beta_left_shift, int32_t diff_min)
{
	int32_t max = -128, sum = 0, scale;
	int bits_over_unit;

	for (uint32_t c = 0; c < n; c++)
		max = in[c] > max ? in[c] : max;
	for (uint32_t c = 0; c < n; c++) {
		int32_t diff = in[c] - max;

		if (diff >= diff_min) {
			int32_t scaled = npu_srdhm((int32_t)((uint32_t)diff << beta_left_shift),
						   beta_mult);

			sum = npu_fx_add(sum, npu_fx_rescale(npu_fx_exp_neg(scaled,
						NPU_SOFTMAX_DIFF_INT_BITS), 0,
						NPU_SOFTMAX_ACCUM_INT_BITS));
		}
	}
	scale = npu_fx_reciprocal(sum, NPU_SOFTMAX_ACCUM_INT_BITS, &bits_over_unit);
	bits_over_unit += 31 - 8;
	bits_over_unit = bits_over_unit > 31 ? 31 : bits_over_unit < 0 ? 0 : bits_over_unit;
	for (uint32_t c = 0; c < n; c++) {
		int32_t diff = in[c] - max, v = -128;

		if (diff >= diff_min) {
			int32_t scaled = npu_srdhm((int32_t)((uint32_t)diff << beta_left_shift),
						   beta_mult);
			int32_t e = npu_fx_exp_neg(scaled, NPU_SOFTMAX_DIFF_INT_BITS);

			v = npu_rdbpot(npu_srdhm(scale, e), bits_over_unit) - 128;
			v = v < -128 ? -128 : v > 127 ? 127 : v;
		}
		out[c] = (int8_t)v;
	}
}

#endif /* NPU_QUANT_H */
