/* SPDX-License-Identifier: MIT */
/*
 * npu_f32_bits.h - an fp32 value and its IEEE 754 bits, one definition for
 * every header that stores floats in integer fields (npu_quant.h's
 * multipliers, npu_train_math.h's commands).
 */
#ifndef NPU_F32_BITS_H
#define NPU_F32_BITS_H

#include <stdint.h>
#include <string.h>

static inline float npu_f32_from_bits(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static inline uint32_t npu_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

#endif /* NPU_F32_BITS_H */
