/* SPDX-License-Identifier: MIT */
/*
 * npu_train_math.h - the per-element arithmetic of the training commands
 * (npu_cmd_train.h), one definition for the tensor engine and libnpu's CPU
 * reference: bf16 conversion, the optimizer updates and the softmax
 * cross-entropy of a row. Written operation by operation in fp32 (no
 * contraction into fused multiply-adds: both users build with ISO C's
 * default, -ffp-contract=off), so both give the same bits.
 */
#ifndef NPU_TRAIN_MATH_H
#define NPU_TRAIN_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_f32_bits.h"

static inline float npu_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Round to nearest, ties to even; a NaN stays a (quiet) NaN. */
static inline uint16_t npu_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/* IEEE binary16 into fp32: exact (a NaN stays a NaN, quiet). */
static inline float npu_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
	float f;

	if (e == 0x1f) {		/* infinity, NaN */
		u = s | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0);
	} else if (e) {
		u = s | ((e + 112) << 23) | (m << 13);
	} else {			/* zero, or m * 2^-24 (exact in fp32) */
		f = (float)m * 0x1p-24f;
		memcpy(&u, &f, sizeof(u));
		u |= s;
	}
	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * fp32 into IEEE binary16: to nearest, ties to even, past 65504 to
 * infinity from 65520 on (as IEEE rounds), subnormals kept; a NaN stays a
 * quiet NaN.
 */
static inline uint16_t npu_f32_to_f16(float f)
{
	uint32_t u, a, s;

	memcpy(&u, &f, sizeof(u));
	s = (u >> 16) & 0x8000u;
	a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
	if (a >= 0x477ff000u)		/* 65520 and up: infinity */
		return (uint16_t)(s | 0x7c00u);
	if (a >= 0x38800000u) {		/* 2^-14 and up: a normal */
		a -= 0x38000000u;	/* the exponent's bias, 127 - 15 */
		return (uint16_t)(s | ((a + 0xfffu + ((a >> 13) & 1)) >> 13));
	}
	if (a < 0x33000000u)		/* at most 2^-25: to 0 (the tie to even) */
		return (uint16_t)s;
	{				/* a subnormal: the significand shifted */
		uint32_t sh = 126 - (a >> 23), m = 0x800000u | (a & 0x7fffffu);
		uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);

		r += rem > half || (rem == half && (r & 1));
		return (uint16_t)(s | r);
	}
}

/**
 * struct npu_optim_step - one optimizer step's scalars (see struct
 * npu_cmd_optim_f32), with Adam's bias corrections c1, c2 worked out.
 */
struct npu_optim_step {
	uint32_t algo;
	float lr, beta1, beta2, eps, wd, c1, c2;
};

static inline void npu_optim_prepare(struct npu_optim_step *s, uint32_t algo, float lr,
				     float beta1, float beta2, float eps, float wd,
				     uint32_t step)
{
	s->algo = algo;
	s->lr = lr;
	s->beta1 = beta1;
	s->beta2 = beta2;
	s->eps = eps;
	s->wd = wd;
	s->c1 = (float)(1.0 - pow((double)beta1, (double)step));
	s->c2 = (float)(1.0 - pow((double)beta2, (double)step));
}

/* Update one weight @w and its state @m, @v (unused ones may be NULL). */
static inline void npu_optim_apply(const struct npu_optim_step *s, float *w, float g,
				   float *m, float *v)
{
	float gd, mh, vh;

	if (s->algo == NPU_OPT_SGD) {
		gd = g + s->wd * *w;
		if (s->beta1 != 0.0f) {
			*m = s->beta1 * *m + gd;
			gd = *m;
		}
		*w = *w - s->lr * gd;
		return;
	}
	if (s->algo == NPU_OPT_ADAMW) {
		*w = *w - s->lr * s->wd * *w;
		gd = g;
	} else {
		gd = g + s->wd * *w;
	}
	*m = s->beta1 * *m + (1.0f - s->beta1) * gd;
	*v = s->beta2 * *v + (1.0f - s->beta2) * gd * gd;
	mh = *m / s->c1;
	vh = *v / s->c2;
	*w = *w - s->lr * mh / (sqrtf(vh) + s->eps);
}

/*
 * Softmax cross-entropy of one row of @classes logits @z with @label:
 * returns the loss and writes grad_scale * (softmax - one-hot) to @dz
 * (when not NULL). Sums run in index order.
 */
static inline float npu_xent_row(const float *z, uint32_t classes, uint32_t label,
				 float grad_scale, float *dz)
{
	float mx = z[0], sum = 0.0f, lse;

	for (uint32_t c = 1; c < classes; c++)
		mx = z[c] > mx ? z[c] : mx;
	for (uint32_t c = 0; c < classes; c++)
		sum += expf(z[c] - mx);
	lse = logf(sum);
	if (dz)
		for (uint32_t c = 0; c < classes; c++)
			dz[c] = grad_scale * (expf(z[c] - mx) / sum - (c == label ? 1.0f : 0.0f));
	return lse - (z[label] - mx);
}

#endif /* NPU_TRAIN_MATH_H */
