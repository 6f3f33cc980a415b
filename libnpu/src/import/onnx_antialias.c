// SPDX-License-Identifier: MIT
/*
 * onnx_antialias.c - Resize's antialias (opset 18): the linear or cubic
 * filter stretched by 1 / scale when an image shrinks, axis by axis from
 * the innermost as onnxruntime's passes go, each a product by the weights
 * its SetupUpsampleFilterAntiAlias computes, made at load (op_resize in
 * onnx_ops.c calls it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* ---- Resize's antialias ----------------------------------------------------------- */

/* onnxruntime's antialias filters (Pillow's): the tent, and the cubic of @a. */
static float aa_filter(int cubic, float a, float x)
{
	x = fabsf(x);
	if (!cubic)
		return x < 1.0f ? 1.0f - x : 0.0f;
	if (x < 1.0f)
		return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1;
	if (x < 2.0f)
		return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
	return 0.0f;
}

/* Output coordinate @x's place in the input, in fp32 as onnxruntime computes it. */
static float aa_coord(uint32_t coord, float x, float scale, float lout, float lin)
{
	switch (coord) {
	case ND_COORD_ASYMMETRIC:
		return x / scale;
	case ND_COORD_PYTORCH_HALF_PIXEL:
		return lout > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
	case ND_COORD_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5f) / scale;
	case ND_COORD_ALIGN_CORNERS:
		return lout == 1 ? 0.0f : x * (lin - 1) / (lout - 1);
	case ND_COORD_HALF_PIXEL_SYMMETRIC: {
		float adj = lout / (scale * lin), c = lin / 2;

		return c * (1 - adj) + (x + 0.5f) / scale - 0.5f;
	}
	default:
		return (x + 0.5f) / scale - 0.5f;
	}
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * One axis's weights, m [out][in]: output i is the sum of inputs xi by
 * m[i][xi], onnxruntime's SetupUpsampleFilterAntiAlias to the bit (the
 * filter stretched by 1 / @rscale when it shrinks, the window cut at the
 * input's ends or, without exclude_outside, the weights past them added
 * to the end ones, then all divided by their sum).
 */
static void aa_weights(const struct nd_resize *p, uint32_t in, uint32_t out, float rscale,
		       float *m, float *buf)
{
	int cubic = p->mode == ND_RESIZE_CUBIC;
	float scale = 1.0f / rscale;
	float support = (scale >= 1.0f ? scale : 1.0f) * (cubic ? 2.0f : 1.0f);
	int64_t win = (int64_t)ceilf(support) * 2 + 1;
	float inv = scale >= 1.0f ? 1.0f / scale : 1.0f;

	for (uint32_t i = 0; i < out; i++) {
		float center = 0.5f + (scale == 1.0f ? (float)i :
				       aa_coord(p->coord, (float)i, rscale, (float)out, (float)in));
		int64_t lo = (int64_t)floorf(center - support + 0.5f);
		int64_t hi = (int64_t)floorf(center + support + 0.5f);
		int64_t cutlo, cuthi, xmin, n;
		float total = 0.0f, tinv;

		hi = lo + clamp64(hi - lo, 0, win);
		cutlo = clamp64(lo, 0, in);
		cuthi = clamp64(hi, 0, in);
		xmin = p->exclude_outside ? cutlo : lo;
		n = (p->exclude_outside ? cuthi : hi) - xmin;
		memset(buf, 0, sizeof(float) * (size_t)win);
		for (int64_t x = 0; x < n; x++) {
			buf[x] = aa_filter(cubic, p->cubic_a, ((float)(x + xmin) - center + 0.5f) * inv);
			total += buf[x];
		}
		if (!p->exclude_outside && cutlo < cuthi) {
			int64_t neg = clamp64(-xmin, 0, n - 1), bound = clamp64(n + xmin - in, 0, n - 1);

			for (int64_t x = 0; x < neg; x++)
				buf[neg] += buf[x];
			for (int64_t x = n - bound; x < n; x++)
				buf[n - bound - 1] += buf[x];
			for (int64_t x = 0; (neg | bound) > 0 && x < cuthi - cutlo; x++)
				buf[x] = buf[x + neg];
		}
		tinv = total == 0.0f ? 1.0f : 1.0f / total;
		for (int64_t x = 0; x < cuthi - cutlo; x++)
			m[(size_t)i * in + (size_t)(cutlo + x)] = buf[x] * tinv;
	}
}

/* The window's taps of one output: onnxruntime's window_size. */
static size_t aa_window(const struct nd_resize *p, float rscale)
{
	float scale = 1.0f / rscale;
	float support = (scale >= 1.0f ? scale : 1.0f) * (p->mode == ND_RESIZE_CUBIC ? 2.0f : 1.0f);

	return (size_t)ceilf(support) * 2 + 1;
}

int onnx_resize_antialias(struct onnx *o, const struct nd_resize *p, const float *rscale)
{
	struct onnx_emit e = { .o = o };
	const char *cur = N->input[0];
	uint32_t dims[NPU_MAX_RANK], first = p->rank;
	int err;

	if (p->dtype != NPU_DT_FLOAT32 || p->coord == ND_COORD_TF_CROP_AND_RESIZE)
		return onnx_fail(o, NPU_ENOTSUP, "antialias of 8-bit or integer values, or with "
				 "tf_crop_and_resize");
	memcpy(dims, p->in, sizeof(uint32_t) * p->rank);
	for (uint32_t d = p->rank; d-- > 0;)
		if (p->out[d] != p->in[d])
			first = d;
	if (first == p->rank)	/* no axis changes size: a copy, as onnxruntime makes */
		return onnx_lower_as(o, "Identity", &cur, 1, N->output[0], NULL, 0, 13);
	/* axis by axis from the innermost, as onnxruntime's passes go */
	for (uint32_t d = p->rank; d-- > first && !e.err;) {
		uint32_t in = p->in[d], out = p->out[d], last = d + 1 == p->rank;
		uint64_t outer = onnx_prod(dims, 0, d), inner = onnx_prod(dims, d + 1, p->rank);
		float *m, *buf;
		const char *w, *x, *y;
		uint32_t md[2] = { last ? in : out, last ? out : in };
		int64_t s3[3] = { (int64_t)outer, in, (int64_t)inner }, sh[NPU_MAX_RANK];

		if (out == in)
			continue;
		m = calloc((size_t)out * in, sizeof(float));
		buf = calloc(aa_window(p, rscale[d]), sizeof(float));
		if (!m || !buf) {
			free(m);
			free(buf);
			e.err = onnx_fail(o, NPU_ENOMEM, "out of memory");
			break;
		}
		aa_weights(p, in, out, rscale[d], m, buf);
		free(buf);
		if (last) {	/* [in][out]: the rows of x times it */
			float *t = malloc(sizeof(float) * out * in);

			if (!t) {
				free(m);
				e.err = onnx_fail(o, NPU_ENOMEM, "out of memory");
				break;
			}
			for (uint32_t i = 0; i < out; i++)
				for (uint32_t j = 0; j < in; j++)
					t[(size_t)j * out + i] = m[(size_t)i * in + j];
			free(m);
			m = t;
		}
		w = em_fresh(&e);
		if (w && !e.err)
			e.err = onnx_named_const(o, w, NPU_DT_FLOAT32, 2, md, m);
		free(m);
		/*
		 * [outer][in][inner] -> [outer][out][inner]: the weights [out][in]
		 * times each [in][inner]; the last axis, [outer][in] times [in][out]
		 */
		x = em_op2(&e, "Reshape", cur, em_cst(&e, NPU_DT_INT64, s3, last ? 2 : 3));
		y = last ? em_op2(&e, "MatMul", x, w) : em_op2(&e, "MatMul", w, x);
		dims[d] = out;
		for (uint32_t k = 0; k < p->rank; k++)
			sh[k] = dims[k];
		cur = em_to(&e, "Reshape", (const char *[]){ y, em_cst(&e, NPU_DT_INT64, sh, p->rank) },
			      2, NULL, d == first ? N->output[0] : NULL);
	}
	err = em_done(&e);
	return err;
}
