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
 * SRDHM is the saturating rounding doubling high multiply: (a * b * 2 +
 * 2^31) >> 32 with round-half-away-from-zero on the 64-bit product, and
 * INT32_MIN * INT32_MIN saturating to INT32_MAX. RDBPOT is the rounding
 * divide by a power of two: round half away from zero. @mult is a Q31
 * fixed-point value in [2^30, 2^31) (or 0), @shift in [-31, 30]: the real
 * multiplier is mult * 2^(shift - 31). Documentation/quantization.rst
 * has worked examples.
 */
#ifndef NPU_QUANT_H
#define NPU_QUANT_H

#include <math.h>
#include <stdint.h>

static inline int32_t npu_srdhm(int32_t a, int32_t b)
{
	int64_t ab, nudge;

	if (a == INT32_MIN && b == INT32_MIN)
		return INT32_MAX;
	ab = (int64_t)a * (int64_t)b;
	nudge = ab >= 0 ? (1ll << 30) : (1 - (1ll << 30));
	/* Division (not a shift) truncates toward zero, as the reference does. */
	return (int32_t)((ab + nudge) / (1ll << 31));
}

/* x / 2^exponent, rounding half away from zero; 0 <= exponent <= 31. */
static inline int32_t npu_rdbpot(int32_t x, int exponent)
{
	int32_t mask = (int32_t)((1ll << exponent) - 1);
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
 * TFLite's QuantizeMultiplier: split a real multiplier into a Q31 value and
 * a power-of-two shift, so that real ~= mult * 2^(shift - 31). Returns -1
 * for multipliers this arithmetic cannot represent (negative, not finite,
 * or needing a left shift above 30); tiny ones become (0, 0) as in TFLite.
 */
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

#endif /* NPU_QUANT_H */
