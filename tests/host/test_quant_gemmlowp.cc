// SPDX-License-Identifier: MIT
/*
 * test_quant_gemmlowp.cc - npu_quant.h against gemmlowp's fixedpoint.h
 * (Debian's libgemmlowp-dev), the code TFLite's reference kernels call:
 * SaturatingRoundingDoublingHighMul, RoundingDivideByPOT and TFLite's
 * MultiplyByQuantizedMultiplier, over edge values and 2 million seeded
 * random inputs. Prints TAP.
 */
#include <cstdint>
#include <cstdio>
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
	printf("1..%d\n", test);
	return bad ? 1 : 0;
}
