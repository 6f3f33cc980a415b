// SPDX-License-Identifier: MIT
/*
 * test_quant_gemmlowp.cc - npu_quant.h against gemmlowp's fixedpoint.h
 * (Debian's libgemmlowp-dev), the code TFLite's reference kernels call:
 * SaturatingRoundingDoublingHighMul, RoundingDivideByPOT and TFLite's
 * MultiplyByQuantizedMultiplier, over edge values and 2 million seeded
 * random inputs. Prints TAP.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <gemmlowp/fixedpoint/fixedpoint.h>
#include <limits>
#include <random>

extern "C" {
#include "npu_quant.h"
}

static int32_t tflite_mbqm(int32_t x, int32_t m, int shift)
{
	int left = shift > 0 ? shift : 0;
	int right = shift > 0 ? 0 : -shift;

	/* As TFLite: x * (1 << left) in int32 (wrapping, done unsigned here). */
	int32_t xs = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
	return gemmlowp::RoundingDivideByPOT(gemmlowp::SaturatingRoundingDoublingHighMul(xs, m),
					     right);
}

/* TFLite's reference int8 softmax row, written on gemmlowp's types. */
static void tflite_softmax_row(const int8_t *in, int8_t *out, int n, int32_t beta_mult,
			       int beta_left_shift, int32_t diff_min)
{
	using FixedPointScaledDiff = gemmlowp::FixedPoint<int32_t, 5>;
	using FixedPointAccum = gemmlowp::FixedPoint<int32_t, 12>;
	using FixedPoint0 = gemmlowp::FixedPoint<int32_t, 0>;
	int8_t max_in_row = -128;

	for (int c = 0; c < n; c++)
		max_in_row = std::max(max_in_row, in[c]);
	FixedPointAccum sum_of_exps = FixedPointAccum::Zero();
	for (int c = 0; c < n; c++) {
		int32_t input_diff = static_cast<int32_t>(in[c]) - max_in_row;

		if (input_diff >= diff_min) {
			const int32_t rescaled = gemmlowp::SaturatingRoundingDoublingHighMul(
				input_diff * (1 << beta_left_shift), beta_mult);
			sum_of_exps = sum_of_exps + gemmlowp::Rescale<12>(gemmlowp::exp_on_negative_values(
				FixedPointScaledDiff::FromRaw(rescaled)));
		}
	}
	/* GetReciprocal */
	int32_t x = sum_of_exps.raw();
	int headroom_plus_one = __builtin_clz(static_cast<uint32_t>(x));
	int num_bits_over_unit = 12 - headroom_plus_one;
	const int32_t shifted_sum_minus_one = static_cast<int32_t>(
		(static_cast<uint32_t>(x) << headroom_plus_one) - (static_cast<uint32_t>(1) << 31));
	FixedPoint0 shifted_scale = gemmlowp::one_over_one_plus_x_for_x_in_0_1(
		FixedPoint0::FromRaw(shifted_sum_minus_one));
	for (int c = 0; c < n; c++) {
		int32_t input_diff = static_cast<int32_t>(in[c]) - max_in_row;

		if (input_diff >= diff_min) {
			const int32_t rescaled = gemmlowp::SaturatingRoundingDoublingHighMul(
				input_diff * (1 << beta_left_shift), beta_mult);
			FixedPoint0 exp_in_0 = gemmlowp::exp_on_negative_values(
				FixedPointScaledDiff::FromRaw(rescaled));
			int32_t unsat = gemmlowp::RoundingDivideByPOT((shifted_scale * exp_in_0).raw(),
								      num_bits_over_unit + 31 - 8);
			out[c] = static_cast<int8_t>(std::max(std::min(unsat - 128, 127), -128));
		} else {
			out[c] = -128;
		}
	}
}

int main()
{
	static const int32_t edge[] = {
		0, 1, -1, 2, -2, 3, -3, 1 << 30, -(1 << 30), INT32_MAX, INT32_MIN,
		INT32_MAX - 1, INT32_MIN + 1, 12345, -12345, 0x40000001, -0x40000001,
	};
	std::mt19937_64 rng(20261121);
	long bad = 0, n = 0;
	int test = 0;

	/* e: a divide exponent in [0, 31]; sh: a requant shift in [-31, 30]. */
	auto check = [&](int32_t a, int32_t b, int e, int sh) {
		n++;
		if (npu_srdhm(a, b) != gemmlowp::SaturatingRoundingDoublingHighMul(a, b) ||
		    npu_rdbpot(a, e) != gemmlowp::RoundingDivideByPOT(a, e) ||
		    npu_requant_scale(a, b, sh) != tflite_mbqm(a, b, sh)) {
			if (bad++ < 5)
				printf("#   mismatch a=%d b=%d e=%d shift=%d\n", a, b, e, sh);
		}
	};
	for (int32_t a : edge)
		for (int32_t b : edge)
			for (int e = 0; e <= 31; e++)
				check(a, b, e, e - 31 + (e & 1) * 30);
	printf("%sok %d - edge values agree with gemmlowp (%ld cases)\n", bad ? "not " : "", ++test, n);
	long edge_bad = bad;

	n = 0;
	for (int i = 0; i < 2000000; i++) {
		int32_t a = static_cast<int32_t>(rng()), b = static_cast<int32_t>(rng());
		int e = static_cast<int>(rng() % 32);
		int sh = static_cast<int>(rng() % 62) - 31;

		if (i % 2)	/* accumulator-sized values too */
			a >>= rng() % 24;
		check(a, b, e, sh);
	}
	printf("%sok %d - random values agree with gemmlowp (%ld cases)\n",
	       bad > edge_bad ? "not " : "", ++test, n);

	/* Softmax rows: TFLite's parameters for random input scales and beta 1. */
	long sm_bad = 0, sm_rows = 0;
	for (int r = 0; r < 20000; r++) {
		int n = 1 + static_cast<int>(rng() % 300);
		int8_t in[300], got[300], want[300];
		double input_scale = (1 + rng() % 1000) / 5000.0;
		/* PreprocessSoftmaxScaling(beta = 1, input_scale, 5) */
		double real = std::min(input_scale * (1 << (31 - 5)), (1ll << 31) - 1.0);
		int32_t mult;
		int shift;

		npu_quantize_multiplier(real, &mult, &shift);	/* shift >= 0 here */
		/* CalculateInputRadius(5, shift) */
		double radius = 1.0 * ((1 << 5) - 1) * (1ll << (31 - 5)) / (1ll << shift);
		int32_t diff_min = -static_cast<int32_t>(std::floor(radius));

		for (int c = 0; c < n; c++)
			in[c] = static_cast<int8_t>(rng());
		if (r % 7 == 0)	/* many equal maxima */
			for (int c = 0; c < n; c += 2)
				in[c] = 100;
		npu_softmax_i8_row(in, got, n, mult, shift, diff_min);
		tflite_softmax_row(in, want, n, mult, shift, diff_min);
		sm_rows++;
		if (memcmp(got, want, n) && sm_bad++ < 5)
			printf("#   softmax row %d (n %d) differs\n", r, n);
	}
	printf("%sok %d - int8 softmax agrees with TFLite's on gemmlowp (%ld rows)\n",
	       sm_bad ? "not " : "", ++test, sm_rows);
	bad += sm_bad;
	printf("1..%d\n", test);
	return bad ? 1 : 0;
}
