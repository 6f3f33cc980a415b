// SPDX-License-Identifier: MIT
/*
 * test_quant.c - the requantization arithmetic of npu_quant.h against
 * values worked out by hand from the TFLite/gemmlowp definitions: the
 * saturating corner, rounding of positive and negative ties, shifts both
 * ways, clamping, and QuantizeMultiplier.
 */
#include "npu_quant.h"
#include "tap.h"

static void test_srdhm(void)
{
	/*
	 * (a * b) / 2^31 with a nudge of +2^30 (or 1 - 2^30 when negative)
	 * and truncation: ties round up, toward +infinity.
	 */
	CHECK_EQ((uint32_t)npu_srdhm(INT32_MIN, INT32_MIN), (uint32_t)INT32_MAX);	/* saturates */
	CHECK_EQ(npu_srdhm(INT32_MAX, INT32_MAX), INT32_MAX - 1);	/* (2^31-1)^2/2^31 = 2^31-2+2^-31 */
	CHECK_EQ((uint32_t)npu_srdhm(INT32_MIN, INT32_MAX), (uint32_t)(INT32_MIN + 1));
	CHECK_EQ(npu_srdhm(1 << 30, 1 << 30), 1 << 29);	/* 0.5 * 0.5 = 0.25 */
	CHECK_EQ(npu_srdhm(100, 1 << 30), 50);		/* x * 0.5 */
	CHECK_EQ(npu_srdhm(3, 1 << 30), 2);		/* 1.5 rounds to 2 */
	CHECK_EQ((uint32_t)npu_srdhm(-3, 1 << 30), (uint32_t)-1);	/* -1.5 rounds up to -1 */
	CHECK_EQ(npu_srdhm(-1, 1 << 30), 0);				/* -0.5 rounds up to 0 */
	CHECK_EQ((uint32_t)npu_srdhm(-5, 1 << 30), (uint32_t)-2);	/* -2.5 rounds up to -2 */
	CHECK_EQ(npu_srdhm(1, 1 << 30), 1);		/* 0.5 rounds to 1 */
	CHECK_EQ(npu_srdhm(0, INT32_MIN), 0);
}

static void test_rdbpot(void)
{
	CHECK_EQ(npu_rdbpot(5, 0), 5);
	CHECK_EQ(npu_rdbpot(3, 1), 2);			/* 1.5 -> 2 */
	CHECK_EQ((uint32_t)npu_rdbpot(-3, 1), (uint32_t)-2);	/* -1.5 -> -2: away from zero */
	CHECK_EQ((uint32_t)npu_rdbpot(-5, 2), (uint32_t)-1);	/* -1.25 -> -1 */
	CHECK_EQ((uint32_t)npu_rdbpot(-6, 2), (uint32_t)-2);	/* -1.5 -> -2 */
	CHECK_EQ((uint32_t)npu_rdbpot(-7, 2), (uint32_t)-2);	/* -1.75 -> -2 */
	CHECK_EQ(npu_rdbpot(6, 2), 2);			/* 1.5 -> 2 */
	CHECK_EQ(npu_rdbpot(5, 2), 1);			/* 1.25 -> 1 */
	CHECK_EQ((uint32_t)npu_rdbpot(-1, 1), (uint32_t)-1);	/* -0.5 -> -1 */
	CHECK_EQ(npu_rdbpot(1, 1), 1);			/* 0.5 -> 1 */
	CHECK_EQ(npu_rdbpot(INT32_MAX, 31), 1);		/* ~1.0 */
	CHECK_EQ((uint32_t)npu_rdbpot(INT32_MIN, 31), (uint32_t)-1);	/* -1.0 exactly */
}

static void test_requant_scale(void)
{
	/* mult 2^30 (0.5) with shift 0: x * 0.5 * 2^0... real = 0.5 * 2^0 */
	CHECK_EQ(npu_requant_scale(1000, 1 << 30, 0), 500);
	/*
	 * real 0.25 = 0.5 * 2^-1, two roundings: SRDHM(1001, 0.5) = 500.5 ->
	 * 501, then 501 / 2 = 250.5 -> 251, where exact 250.25 would give 250.
	 */
	CHECK_EQ(npu_requant_scale(1001, 1 << 30, -1), 251);
	/* 1002: 501 exactly, 250.5 -> 251; -1002: -501, -250.5 -> -251 (away from 0) */
	CHECK_EQ(npu_requant_scale(1002, 1 << 30, -1), 251);
	CHECK_EQ((uint32_t)npu_requant_scale(-1002, 1 << 30, -1), (uint32_t)-251);
	/* real 2.0 = 0.5 * 2^2: left shift first, then the multiply */
	CHECK_EQ(npu_requant_scale(7, 1 << 30, 2), 14);
	/* The double rounding differs from a single one: x = -3, real = 0.375
	 * (mult 0.75 * 2^-1): SRDHM(-3, 0.75) = -2.25 -> -2, then /2 = -1;
	 * a single rounding of -1.125 would also give -1; x = -5: SRDHM = -3.75
	 * -> -4, /2 -> -2 (single rounding of -1.875 gives -2). */
	CHECK_EQ((uint32_t)npu_requant_scale(-3, 0x60000000, -1), (uint32_t)-1);
	CHECK_EQ((uint32_t)npu_requant_scale(-5, 0x60000000, -1), (uint32_t)-2);
	/* x = 6, real 0.375: SRDHM(6, 0.75) = 4.5 -> 5, RDBPOT(5, 1) = 2.5 -> 3,
	 * where exact 2.25 would round to 2: the reference's double rounding. */
	CHECK_EQ(npu_requant_scale(6, 0x60000000, -1), 3);
}

static void test_requant_i8(void)
{
	/* acc 1000 * 0.5 + zp -10 = 490 -> saturates to 127 */
	CHECK_EQ(npu_requant_i8(1000, 1 << 30, 0, -10, -128, 127), 127);
	CHECK_EQ(npu_requant_i8(-1000, 1 << 30, 0, -10, -128, 127), -128);
	CHECK_EQ(npu_requant_i8(100, 1 << 30, 0, -10, -128, 127), 40);
	/* ReLU6-style clamp on the quantized scale */
	CHECK_EQ(npu_requant_i8(100, 1 << 30, 0, 0, 0, 30), 30);
	CHECK_EQ(npu_requant_i8(-100, 1 << 30, 0, 0, 0, 30), 0);
	/* Zero point at the extremes */
	CHECK_EQ(npu_requant_i8(0, 1 << 30, 0, 127, -128, 127), 127);
	CHECK_EQ(npu_requant_i8(0, 1 << 30, 0, -128, -128, 127), -128);
}

static void test_quantize_multiplier(void)
{
	int32_t m;
	int s;

	CHECK_EQ(npu_quantize_multiplier(0.5, &m, &s), 0);
	CHECK_EQ(m, 1 << 30);
	CHECK_EQ(s, 0);
	CHECK_EQ(npu_quantize_multiplier(0.25, &m, &s), 0);
	CHECK_EQ(m, 1 << 30);
	CHECK_EQ((uint32_t)s, (uint32_t)-1);
	CHECK_EQ(npu_quantize_multiplier(0.375, &m, &s), 0);
	CHECK_EQ(m, 0x60000000);
	CHECK_EQ((uint32_t)s, (uint32_t)-1);
	CHECK_EQ(npu_quantize_multiplier(3.0, &m, &s), 0);	/* 0.75 * 2^2 */
	CHECK_EQ(m, 0x60000000);
	CHECK_EQ(s, 2);
	/* Rounds up to 2^31: halved, shift bumped. */
	CHECK_EQ(npu_quantize_multiplier(0.99999999999, &m, &s), 0);
	CHECK_EQ(m, 1 << 30);
	CHECK_EQ(s, 1);
	CHECK_EQ(npu_quantize_multiplier(0.0, &m, &s), 0);
	CHECK_EQ(m, 0);
	CHECK_EQ(npu_quantize_multiplier(1e-20, &m, &s), 0);	/* below 2^-32: zero */
	CHECK_EQ(m, 0);
	CHECK_EQ(s, 0);
	CHECK_EQ(npu_quantize_multiplier(-1.0, &m, &s), -1);
	CHECK_EQ(npu_quantize_multiplier(NAN, &m, &s), -1);
	CHECK_EQ(npu_quantize_multiplier(INFINITY, &m, &s), -1);
	CHECK_EQ(npu_quantize_multiplier(1e10, &m, &s), -1);
}

TAP_MAIN(
	TAP_ENTRY(test_srdhm),
	TAP_ENTRY(test_rdbpot),
	TAP_ENTRY(test_requant_scale),
	TAP_ENTRY(test_requant_i8),
	TAP_ENTRY(test_quantize_multiplier),
)
