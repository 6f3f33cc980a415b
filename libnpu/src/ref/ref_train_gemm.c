// SPDX-License-Identifier: MIT
/*
 * ref_train_gemm.c - CPU references of the fp32 GEMM and of 2-D
 * convolution with its two gradients: textbook loops, each sum in fp32 in
 * index order. The tensor engine blocks and vectorises the same sums, so
 * results agree within fp32 rounding (Documentation/training.rst).
 */
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "ir/kern_params.h"
#include "npu_train_math.h"


static float load(const void *base, int bf16, size_t i)
{
	return bf16 ? npu_bf16_to_f32(((const uint16_t *)base)[i]) : ((const float *)base)[i];
}

int npu_ref_gemm_f32_v(size_t size, const struct npu_gemm_f32 *p_in, const void *a, const void *b, float *c)
{
	NPU_STRUCT_IN(struct npu_gemm_f32, p, p_in, size);
	if (!npu_gemm_f32_valid(p) || !a || !b || !c)
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->m; i++)
		for (uint32_t j = 0; j < p->n; j++) {
			float acc = 0.0f;

			for (uint32_t x = 0; x < p->k; x++)
				acc += load(a, p->bf16, p->trans_a ? (size_t)x * p->m + i
								   : (size_t)i * p->k + x) *
				       load(b, p->bf16, p->trans_b ? (size_t)j * p->k + x
								   : (size_t)x * p->n + j);
			c[(size_t)i * p->n + j] = p->beta == 0.0f ? p->alpha * acc
					: p->alpha * acc + p->beta * c[(size_t)i * p->n + j];
		}
	return NPU_OK;
}

/* An input the pass reads, as fp32 (bf16 widened) in a new array. */
static float *widen(const void *src, uint64_t n, int bf16)
{
	float *f = malloc(sizeof(float) * (n ? n : 1));

	for (uint64_t i = 0; f && i < n; i++)
		f[i] = load(src, bf16, i);
	return f;
}

int npu_ref_conv2d_f32_v(size_t size, const struct npu_conv2d_f32 *p_in, enum npu_conv_pass pass, void *xv,
		       void *wv, void *yv)
{
	NPU_STRUCT_IN(struct npu_conv2d_f32, p, p_in, size);
	uint32_t groups = npu_conv2d_f32_groups(p);
	uint64_t nx, nw, ny;
	float *x, *w, *y;
	int err = NPU_OK;

	if (!npu_conv2d_f32_valid(p, pass) || !xv || !wv || !yv)
		return NPU_EINVAL;
	npu_conv2d_f32_sizes(p, &nx, &nw, &ny);
	/* The pass's output is fp32 in place; its inputs widened if bf16. */
	x = pass == NPU_CONV_BACKWARD_DATA ? xv : widen(xv, nx, p->bf16);
	w = pass == NPU_CONV_BACKWARD_FILTER ? wv : widen(wv, nw, p->bf16);
	y = pass == NPU_CONV_FORWARD ? yv : widen(yv, ny, p->bf16);
	if (!x || !w || !y) {
		err = NPU_ENOMEM;
		goto out;
	}
	if (pass == NPU_CONV_BACKWARD_DATA)
		memset(x, 0, sizeof(float) * nx);
	if (pass == NPU_CONV_BACKWARD_FILTER)
		memset(w, 0, sizeof(float) * nw);

	for (uint32_t b = 0; b < p->batch; b++)
	for (uint32_t oy = 0; oy < p->out_h; oy++)
	for (uint32_t ox = 0; ox < p->out_w; ox++)
	for (uint32_t o = 0; o < p->out_c; o++) {
		float *yo = &y[(((size_t)b * p->out_h + oy) * p->out_w + ox) * p->out_c + o];
		/* the group's input channels: [i0, i0 + icg) */
		uint32_t icg = p->in_c / groups, i0 = o / (p->out_c / groups) * icg;
		float acc = 0.0f;

		for (uint32_t ky = 0; ky < p->k_h; ky++)
		for (uint32_t kx = 0; kx < p->k_w; kx++) {
			int64_t iy = (int64_t)oy * p->stride_h - p->pad_top + (int64_t)ky * p->dil_h;
			int64_t ix = (int64_t)ox * p->stride_w - p->pad_left + (int64_t)kx * p->dil_w;

			if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w)
				continue;	/* zero padding */
			for (uint32_t i = 0; i < icg; i++) {
				float *xi = &x[(((size_t)b * p->in_h + (size_t)iy) * p->in_w +
						(size_t)ix) * p->in_c + i0 + i];
				float *wi = &w[(((size_t)o * p->k_h + ky) * p->k_w + kx) * icg + i];

				if (pass == NPU_CONV_FORWARD)
					acc += *wi * *xi;
				else if (pass == NPU_CONV_BACKWARD_DATA)
					*xi += *yo * *wi;
				else
					*wi += *yo * *xi;
			}
		}
		if (pass == NPU_CONV_FORWARD)
			*yo = acc;
	}
out:
	if (x != xv)
		free(x);
	if (w != wv)
		free(w);
	if (y != yv)
		free(y);
	return err;
}
