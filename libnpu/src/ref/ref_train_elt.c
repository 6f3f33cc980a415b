// SPDX-License-Identifier: MIT
/*
 * ref_train_elt.c - CPU references of the training commands that work
 * element by element or window by window: pooling and its gradients,
 * elementwise ops, reductions, softmax cross-entropy and the optimizer
 * steps. The per-element arithmetic is npu_train_math.h's, as in the
 * tensor engine.
 */
#include <string.h>

#include "npu.h"
#include "ir/kern_params.h"
#include "npu_train_math.h"

int npu_ref_pool_f32_v(size_t size, const struct npu_pool_f32 *p_in, const float *x, float *y, float *dx)
{
	NPU_STRUCT_IN(struct npu_pool_f32, p, p_in, size);
	bool bwd = p && (p->mode == NPU_FPOOL_MAX_BACKWARD || p->mode == NPU_FPOOL_AVG_BACKWARD);
	float area;
	uint64_t nx, ny;

	if (!npu_pool_f32_valid(p) || !y || (bwd ? !dx : !!dx) ||
	    (!x && p->mode != NPU_FPOOL_AVG_BACKWARD))
		return NPU_EINVAL;
	npu_pool_f32_sizes(p, &nx, &ny);
	area = (float)(p->k_h * p->k_w);
	if (bwd)
		memset(dx, 0, sizeof(float) * nx);

	for (uint32_t b = 0; b < p->batch; b++)
	for (uint32_t oy = 0; oy < p->out_h; oy++)
	for (uint32_t ox = 0; ox < p->out_w; ox++)
	for (uint32_t c = 0; c < p->c; c++) {
		size_t o = (((size_t)b * p->out_h + oy) * p->out_w + ox) * p->c + c, best = 0;
		float sum = 0.0f, mx = 0.0f;

		for (uint32_t ky = 0; ky < p->k_h; ky++)
		for (uint32_t kx = 0; kx < p->k_w; kx++) {
			size_t i = (((size_t)b * p->in_h + (size_t)oy * p->stride_h + ky) * p->in_w +
				    (size_t)ox * p->stride_w + kx) * p->c + c;

			if (p->mode == NPU_FPOOL_AVG_BACKWARD) {
				dx[i] += y[o] / area;
			} else if (p->mode == NPU_FPOOL_AVG) {
				sum += x[i];
			} else if ((ky == 0 && kx == 0) || x[i] > mx) {	/* first largest */
				mx = x[i];
				best = i;
			}
		}
		if (p->mode == NPU_FPOOL_MAX)
			y[o] = mx;
		else if (p->mode == NPU_FPOOL_AVG)
			y[o] = sum / area;
		else if (p->mode == NPU_FPOOL_MAX_BACKWARD)
			dx[best] += y[o];
	}
	return NPU_OK;
}

int npu_ref_eltwise_f32_v(size_t size, const struct npu_eltwise_f32 *p_in, const void *a, const float *b,
			void *out)
{
	NPU_STRUCT_IN(struct npu_eltwise_f32, p, p_in, size);
	if (!npu_eltwise_f32_valid(p) || !a || !out || (npu_eltwise_f32_two_inputs(p->op) && !b))
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->count; i++) {
		float x = p->op == NPU_EF_FROM_BF16 ? npu_bf16_to_f32(((const uint16_t *)a)[i])
						    : ((const float *)a)[i];
		float r;

		switch (p->op) {
		case NPU_EF_ADD: r = x + b[i]; break;
		case NPU_EF_SUB: r = x - b[i]; break;
		case NPU_EF_MUL: r = x * b[i]; break;
		case NPU_EF_AXPY: r = p->alpha * x + b[i]; break;
		case NPU_EF_SCALE: r = p->alpha * x; break;
		case NPU_EF_RELU: r = x < 0.0f ? 0.0f : x; break;
		case NPU_EF_RELU_BACKWARD: r = x > 0.0f ? b[i] : 0.0f; break;
		case NPU_EF_BIAS: r = x + b[i % p->cols]; break;
		default: r = x; break;
		}
		if (p->op == NPU_EF_TO_BF16)
			((uint16_t *)out)[i] = npu_f32_to_bf16(r);
		else
			((float *)out)[i] = r;
	}
	return NPU_OK;
}

int npu_ref_reduce_f32_v(size_t size, const struct npu_reduce_f32 *p_in, const float *in, float *out)
{
	NPU_STRUCT_IN(struct npu_reduce_f32, p, p_in, size);
	uint32_t n;

	if (!npu_reduce_f32_valid(p) || !in || !out)
		return NPU_EINVAL;
	n = p->over_cols ? p->rows : p->cols;
	if (!p->accumulate)
		memset(out, 0, sizeof(float) * n);
	for (uint32_t r = 0; r < p->rows; r++)
		for (uint32_t c = 0; c < p->cols; c++)
			out[p->over_cols ? r : c] += in[(size_t)r * p->cols + c];
	return NPU_OK;
}

int npu_ref_xent_f32_v(size_t size, const struct npu_xent_f32 *p_in, const float *logits, const int32_t *labels,
		     float *loss, float *dlogits)
{
	NPU_STRUCT_IN(struct npu_xent_f32, p, p_in, size);
	if (!npu_xent_f32_valid(p) || !logits || !labels)
		return NPU_EINVAL;
	for (uint32_t r = 0; r < p->rows; r++)
		if (labels[r] < 0 || (uint32_t)labels[r] >= p->classes)
			return NPU_EINVAL;
	for (uint32_t r = 0; r < p->rows; r++) {
		float l = npu_xent_row(logits + (size_t)r * p->classes, p->classes,
				       (uint32_t)labels[r], p->grad_scale,
				       dlogits ? dlogits + (size_t)r * p->classes : NULL);

		if (loss)
			loss[r] = l;
	}
	return NPU_OK;
}

int npu_ref_optim_f32_v(size_t size, const struct npu_optim_f32 *p_in, float *w, const float *g, float *m,
		      float *v)
{
	NPU_STRUCT_IN(struct npu_optim_f32, p, p_in, size);
	bool adam = p && (p->algo == NPU_OPTIM_ADAM || p->algo == NPU_OPTIM_ADAMW);
	struct npu_optim_step s;

	if (!npu_optim_f32_valid(p) || !w || !g || ((adam || p->beta1 != 0.0f) && !m) ||
	    (adam && !v))
		return NPU_EINVAL;
	npu_optim_prepare(&s, (uint32_t)p->algo, p->lr, p->beta1, p->beta2, p->eps, p->wd,
			  p->step ? p->step : 1);
	for (uint32_t i = 0; i < p->count; i++)
		npu_optim_apply(&s, &w[i], g[i], m ? &m[i] : NULL, adam ? &v[i] : NULL);
	return NPU_OK;
}
