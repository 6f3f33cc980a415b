// SPDX-License-Identifier: MIT
/*
 * test_ocl_ops.c - every op of libnpu's OpenCL backend against the CPU
 * reference, on random shapes and data, through the same entry points the
 * graphs use (ocl_ops.c): int8 ops byte for byte; the training ops bit for
 * bit too (the kernels sum in the reference's order, without contraction,
 * with correctly rounded division), except softmax cross-entropy, whose
 * exp and log OpenCL allows a few ulp. Every N-d function and reduction,
 * within a few ulp. Bad parameters are refused before anything reaches
 * the device.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "npu_quant.h"
#include "ir/kern_params.h"
#include "backends/opencl/ocl_priv.h"
#include "tap.h"

static npu_ocl *ocl;
static uint64_t seed = 11;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

static uint32_t pick(uint32_t lo, uint32_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static float frnd(void)
{
	return (float)((int32_t)(rnd() % 2001) - 1000) / 250.0f;
}

static void *bytes(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	for (size_t i = 0; p && i < n; i++)
		p[i] = (uint8_t)rnd();
	return p;
}

static float *floats(size_t n)
{
	float *p = malloc(sizeof(float) * (n ? n : 1));

	for (size_t i = 0; p && i < n; i++)
		p[i] = frnd();
	return p;
}

/* A device buffer holding @n bytes of @src (zeros when NULL). */
static cl_mem up(const void *src, size_t n)
{
	cl_mem m = ocl_buffer(ocl, n ? n : 1, NULL, 0);
	void *z = src ? NULL : calloc(1, n ? n : 1);

	if (!m || ocl_write(ocl, m, n ? n : 1, src ? src : z)) {
		printf("Bail out! no OpenCL buffer of %zu bytes\n", n);
		exit(1);
	}
	free(z);
	return m;
}

/* Wait for the queue, read @n bytes of @m into @dst, release @m. */
static void down(cl_mem m, void *dst, size_t n)
{
	CHECK_EQ(ocl_finish(ocl), NPU_OK);
	CHECK_EQ(ocl_read(ocl, m, n, dst), NPU_OK);
	ocl_release(ocl, &m, 1);
}

static void open_device(void)
{
	char why[512];

	CHECK_EQ(npu_ocl_open(&ocl, why, sizeof(why)), NPU_OK);
	printf("#   device: %s; fp64 %d, exact division %d\n", npu_ocl_device_name(ocl), ocl->fp64,
	       ocl->exact_div);
}

/* TFLite's Q31 multipliers and shifts, or (@onnx) ONNX's fp32 ones, ties often. */
static void requant(uint32_t n, int32_t *mult, int32_t *shift, int onnx)
{
	for (uint32_t i = 0; i < n; i++) {
		if (onnx) {
			float m = i % 2 ? 1.0f / (float)(1 << pick(0, 12)) :
					  (float)pick(1, 1000) / 65536.0f;

			mult[i] = npu_f32_bits(m);
			shift[i] = 0;
			continue;
		}
		mult[i] = (int32_t)(0x40000000u + rnd() % 0x40000000u);
		shift[i] = -(int32_t)pick(0, 12);
	}
}

static void test_conv2d_i8(void)
{
	for (int t = 0; t < 24; t++) {
		struct npu_conv2d_i8 p = { .batch = pick(1, 2), .in_h = pick(1, 9), .in_w = pick(1, 9),
					   .in_c = pick(1, 6), .k_h = pick(1, 3), .k_w = pick(1, 3),
					   .stride_h = pick(1, 2), .stride_w = pick(1, 2),
					   .dil_h = pick(1, 2), .dil_w = pick(1, 2),
					   .in_zero = (int32_t)pick(0, 255) - 128,
					   .out_zero = (int32_t)pick(0, 255) - 128, .act_min = -128,
					   .act_max = 127, .per_tensor = t % 3 == 0,
					   .depthwise = t % 4 == 1 };
		uint32_t span_h, span_w, nq;

		p.out_c = p.depthwise ? p.in_c * pick(1, 2) : pick(1, 19);
		if (t % 4 == 3) {	/* grouped: 2 or 3 groups of channels */
			p.groups = (uint32_t)pick(2, 3);
			p.in_c = p.groups * (uint32_t)pick(1, 2);
			p.out_c = p.groups * (uint32_t)pick(1, 2);
		}
		p.pad_top = pick(0, p.k_h - 1);
		p.pad_left = pick(0, p.k_w - 1);
		span_h = p.dil_h * (p.k_h - 1) + 1;
		span_w = p.dil_w * (p.k_w - 1) + 1;
		if (p.in_h + 2 * p.pad_top < span_h || p.in_w + 2 * p.pad_left < span_w) {
			p.dil_h = p.dil_w = 1;
			p.k_h = p.k_w = 1;
			span_h = span_w = 1;
		}
		p.out_h = (p.in_h + 2 * p.pad_top - span_h) / p.stride_h + 1;
		p.out_w = (p.in_w + 2 * p.pad_left - span_w) / p.stride_w + 1;
		if (t % 5 == 2) {
			p.act_min = -30;
			p.act_max = 60;
		}
		nq = p.per_tensor ? 1 : p.out_c;
		size_t ni = (size_t)p.batch * p.in_h * p.in_w * p.in_c;
		size_t nf = (size_t)p.out_c * p.k_h * p.k_w *
			    (p.depthwise ? 1 : p.in_c / (p.groups > 1 ? p.groups : 1));
		size_t no = (size_t)p.batch * p.out_h * p.out_w * p.out_c;
		int8_t *in = bytes(ni), *f = bytes(nf), *want = malloc(no), *got = malloc(no);
		int32_t *bias = malloc(4 * p.out_c), mult[32], shift[32];

		for (uint32_t i = 0; i < p.out_c; i++)
			bias[i] = (int32_t)pick(0, 20000) - 10000;
		p.requant = t % 6 == 5 || t % 6 == 2 ? NPU_REQUANT_ONNX : NPU_REQUANT_TFLITE;
		requant(nq, mult, shift, p.requant == NPU_REQUANT_ONNX);
		CHECK_EQ(npu_ref_conv2d_i8(&p, in, f, t & 1 ? bias : NULL, mult, shift, want), 0);
		cl_mem mi = up(in, ni), mf = up(f, nf), mb = up(bias, 4 * p.out_c);
		cl_mem mm = up(mult, 4 * nq), ms = up(shift, 4 * nq), mo = up(NULL, no);

		CHECK_EQ(ocl_conv2d_i8(ocl, &p, mi, mf, t & 1 ? mb : NULL, mm, ms, mo, NULL, 0),
			 NPU_OK);
		down(mo, got, no);
		CHECK(!memcmp(got, want, no));
		if (!p.depthwise && p.groups <= 1) {
			/*
			 * The filter kept packed: packed on the first call, kept
			 * on the second, packed again for a new generation.
			 */
			struct ocl_kept kept = { 0 };

			for (int run = 0; run < 3; run++) {
				if (run == 2) {
					for (size_t i = 0; i < nf; i++)
						f[i] = (int8_t)(f[i] ^ 0x55);
					CHECK_EQ(ocl_write(ocl, mf, nf, f), NPU_OK);
					CHECK_EQ(npu_ref_conv2d_i8(&p, in, f, t & 1 ? bias : NULL,
								   mult, shift, want), 0);
				}
				mo = up(NULL, no);
				CHECK_EQ(ocl_conv2d_i8(ocl, &p, mi, mf, t & 1 ? mb : NULL, mm, ms, mo,
						       &kept, run / 2), NPU_OK);
				down(mo, got, no);
				CHECK(!memcmp(got, want, no));
			}
			ocl_release(ocl, &kept.m, 1);
		}
		ocl_release(ocl, (cl_mem[]){ mi, mf, mb, mm, ms }, 5);
		free(in);
		free(f);
		free(want);
		free(got);
		free(bias);
	}
	{
		struct npu_conv2d_i8 bad = { 0 };

		CHECK_EQ(ocl_conv2d_i8(ocl, &bad, ocl->dummy, ocl->dummy, NULL, ocl->dummy,
				       ocl->dummy, ocl->dummy, NULL, 0), NPU_EINVAL);
	}
}

static void test_eltwise_softmax_i8(void)
{
	int broadcasts = 0;

	for (int t = 0; t < 20; t++) {
		struct npu_eltwise_i8 e = { .count = pick(1, 3000), .mul = t & 1,
					    .a_zero = (int32_t)pick(0, 255) - 128,
					    .b_zero = (int32_t)pick(0, 255) - 128,
					    .out_zero = (int32_t)pick(0, 255) - 128,
					    .act_min = -128, .act_max = 127, .left_shift = 20 };
		struct npu_softmax_i8 s;
		uint32_t n = e.count;
		int8_t *a = bytes(n), *b = bytes(n), *want = malloc(n), *got = malloc(n);
		int onnx = t % 4 == 3;	/* ONNX's arithmetic, fp32 scales */

		requant(1, &e.a_mult, &e.a_shift, onnx);
		requant(1, &e.b_mult, &e.b_shift, onnx);
		requant(1, &e.out_mult, &e.out_shift, onnx);
		if (onnx) {
			e.requant = NPU_REQUANT_ONNX;
			e.left_shift = 0;
		}
		if (e.mul)
			e.left_shift = 0;
		if (!onnx)
			e.out_shift = -(int32_t)pick(e.mul ? 6 : 18, e.mul ? 10 : 22);
		CHECK_EQ(npu_ref_eltwise_i8(&e, a, b, want), 0);
		cl_mem ma = up(a, n), mb = up(b, n), mo = up(NULL, n);

		CHECK_EQ(ocl_eltwise_i8(ocl, &e, ma, mb, mo), NPU_OK);
		down(mo, got, n);
		CHECK(!memcmp(got, want, n));
		/* softmax over rows of the same data */
		CHECK_EQ(npu_softmax_params(0.01 + (rnd() % 100) / 50.0, 1.0, &s), 0);
		s.depth = pick(1, 40);
		s.rows = n / s.depth ? n / s.depth : 1;
		s.depth = n < s.depth ? n : s.depth;
		CHECK_EQ(npu_ref_softmax_i8(&s, a, want), 0);
		mo = up(NULL, n);
		CHECK_EQ(ocl_softmax_i8(ocl, &s, ma, mo), NPU_OK);
		down(mo, got, (size_t)s.rows * s.depth);
		CHECK(!memcmp(got, want, (size_t)s.rows * s.depth));
		/* Broadcasting: random shapes, each input dim 1 or the output's. */
		e.rank = 1 + (uint32_t)pick(0, 3);
		e.count = 1;
		for (uint32_t d = 0; d < e.rank; d++) {
			e.out_dims[d] = (uint32_t)pick(1, 6);
			e.a_dims[d] = rnd() % 3 ? e.out_dims[d] : 1;
			e.b_dims[d] = rnd() % 3 ? e.out_dims[d] : 1;
			e.count *= e.out_dims[d];
		}
		if (e.count <= n) {	/* the inputs hold at least as many */
			cl_mem mc = up(NULL, e.count);

			CHECK_EQ(npu_ref_eltwise_i8(&e, a, b, want), 0);
			CHECK_EQ(ocl_eltwise_i8(ocl, &e, ma, mb, mc), NPU_OK);
			down(mc, got, e.count);
			CHECK(!memcmp(got, want, e.count));
			broadcasts++;
		}
		e.rank = 0;
		ocl_release(ocl, (cl_mem[]){ ma, mb }, 2);
		free(a);
		free(b);
		free(want);
		free(got);
	}
	printf("#   %d broadcasting eltwise ops, bit for bit\n", broadcasts);
	CHECK(broadcasts > 5);
}

/* Quantize, edge values included (ties, NaN, huge); dequantize needs fp64 to round alike. */
static void test_quantize(void)
{
	static const float edge[] = { 0.5f, -0.5f, 1.5f, -2.5f, NAN, INFINITY, -INFINITY, 1e30f,
				      -1e30f, 1e-40f, 0.0f, -0.0f };
	for (int t = 0; t < 12; t++) {
		uint32_t n = pick(1, 2000);
		struct npu_quantize q = { n, 0, 0.001 + (rnd() % 1000) / 97.0,
					  (int32_t)pick(0, 255) - 128, 0 };
		float *f = floats(n), *fw = malloc(4 * n), *fg = malloc(4 * n);
		int8_t *want = malloc(n), *got = malloc(n);

		for (uint32_t i = 0; i < n && i < 12; i++)
			f[i] = t & 1 ? edge[i] * (float)q.scale : edge[i];
		CHECK_EQ(npu_ref_quantize(&q, f, want), 0);
		cl_mem mf = up(f, 4 * n), mq = up(NULL, n);

		CHECK_EQ(ocl_quantize(ocl, &q, mf, mq), NPU_OK);
		down(mq, got, n);
		CHECK(!memcmp(got, want, n));
		q.dequantize = 1;
		CHECK_EQ(npu_ref_quantize(&q, got, fw), 0);
		mq = up(got, n);
		mf = up(NULL, 4 * n);
		if (ocl->fp64) {
			CHECK_EQ(ocl_quantize(ocl, &q, mq, mf), NPU_OK);
			down(mf, fg, 4 * n);
			CHECK(!memcmp(fg, fw, 4 * n));
		} else {
			CHECK_EQ(ocl_quantize(ocl, &q, mq, mf), NPU_ENOTSUP);
		}
		free(f);
		free(fw);
		free(fg);
		free(want);
		free(got);
	}
}

static void test_layout(void)
{
	for (int t = 0; t < 24; t++) {
		uint32_t rank = pick(1, 4), n = 1, on = 1;
		struct npu_transpose tr = { rank, 1u << pick(0, 2), { 0 }, { 0 } };
		struct npu_pad pd = { rank, { 0 }, { 0 }, { 0 }, (int32_t)pick(0, 255) - 128 };
		struct npu_concat cat = { rank, 1, pick(0, rank - 1), pick(1, 4), { 0 }, NULL };
		uint32_t axis_dims[4];

		for (uint32_t d = 0; d < rank; d++) {	/* a random permutation */
			tr.dims[d] = pd.dims[d] = cat.dims[d] = pick(1, 6);
			tr.perm[d] = d;
			pd.before[d] = pick(0, 2);
			pd.after[d] = pick(0, 2);
			n *= tr.dims[d];
			on *= pd.before[d] + pd.dims[d] + pd.after[d];
		}
		for (uint32_t d = rank; d-- > 1;) {
			uint32_t j = rnd() % (d + 1), x = tr.perm[d];

			tr.perm[d] = tr.perm[j];
			tr.perm[j] = x;
		}
		/* Room for the largest concat too: 4 inputs of 3 along the axis, 4 bytes. */
		uint8_t *in = bytes((size_t)n * 16 + 16), *want = malloc((size_t)on * 4 + n * 48);
		uint8_t *got = malloc((size_t)on * 4 + n * 48);

		CHECK_EQ(npu_ref_transpose(&tr, in, want), 0);
		cl_mem mi = up(in, (size_t)n * 4), mo = up(NULL, (size_t)n * tr.elem_size);

		CHECK_EQ(ocl_transpose(ocl, &tr, mi, mo), NPU_OK);
		down(mo, got, (size_t)n * tr.elem_size);
		CHECK(!memcmp(got, want, (size_t)n * tr.elem_size));
		CHECK_EQ(npu_ref_pad(&pd, (int8_t *)in, (int8_t *)want), 0);
		mo = up(NULL, on);
		CHECK_EQ(ocl_pad(ocl, &pd, mi, mo), NPU_OK);
		down(mo, got, on);
		CHECK(!memcmp(got, want, on));
		/* concat: inputs of differing sizes along the axis */
		{
			const void *hin[4];
			cl_mem min[4];
			uint32_t total = 0;
			size_t rest = (size_t)n / cat.dims[cat.axis], out_n;

			cat.axis_dims = axis_dims;
			cat.elem_size = tr.elem_size;
			cat.dims[cat.axis] = 0;
			for (uint32_t i = 0; i < cat.count; i++) {
				axis_dims[i] = pick(1, 3);
				total += axis_dims[i];
				hin[i] = in + (i * 7) % 16;
				min[i] = up(hin[i], rest * axis_dims[i] * cat.elem_size);
			}
			out_n = rest * total * cat.elem_size;
			CHECK_EQ(npu_ref_concat(&cat, hin, want), 0);
			mo = up(NULL, out_n);
			CHECK_EQ(ocl_concat(ocl, &cat, min, mo), NPU_OK);
			down(mo, got, out_n);
			CHECK(!memcmp(got, want, out_n));
			ocl_release(ocl, min, cat.count);
		}
		ocl_release(ocl, &mi, 1);
		free(in);
		free(want);
		free(got);
	}
}

/* Bit for bit, reporting the first difference. */
static int same_floats(const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], 4)) {
			printf("#   [%zu]: %.9g != %.9g\n", i, a[i], b[i]);
			return 0;
		}
	return 1;
}

static void test_gemm_f32(void)
{
	for (int t = 0; t < 16; t++) {
		struct npu_gemm_f32 p = { pick(1, 40), pick(1, 40), pick(1, 90), t & 1, (t >> 1) & 1,
					  t % 5 == 4, 1.0f, t % 3 ? 0.0f : 0.5f };
		size_t na = (size_t)p.m * p.k, nb = (size_t)p.k * p.n, nc = (size_t)p.m * p.n;
		float *a = floats(na), *b = floats(nb), *c = floats(nc), *got = malloc(4 * nc);

		if (t % 4 == 3)
			p.alpha = -0.75f;
		if (p.bf16)	/* bf16 operands: the high halves of the floats */
			for (size_t i = 0; i < na + nb; i++) {
				uint16_t *h = (uint16_t *)(i < na ? a : b);
				float v = i < na ? a[i] : b[i - na];
				uint32_t u;

				memcpy(&u, &v, 4);
				h[i < na ? i : i - na] = (uint16_t)(u >> 16);
			}
		cl_mem ma = up(a, 4 * na), mb = up(b, 4 * nb), mc = up(c, 4 * nc);

		CHECK_EQ(npu_ref_gemm_f32(&p, a, b, c), 0);
		CHECK_EQ(ocl_gemm_f32(ocl, &p, ma, mb, mc), NPU_OK);
		down(mc, got, 4 * nc);
		CHECK(same_floats(got, c, nc));
		ocl_release(ocl, (cl_mem[]){ ma, mb }, 2);
		free(a);
		free(b);
		free(c);
		free(got);
	}
}

static void test_conv2d_f32(void)
{
	for (int t = 0; t < 30; t++) {
		struct npu_conv2d_f32 p = { pick(1, 2), pick(2, 9), pick(2, 9), pick(1, 5), 0, 0,
					    pick(1, 6), pick(1, 3), pick(1, 3), pick(1, 2),
					    pick(1, 2), pick(1, 2), pick(1, 2), 0, 0, 0, 0 };
		enum npu_conv_pass pass = (enum npu_conv_pass)(1 + t % 3);
		uint64_t nx, nw, ny;

		/* groups from the second dozen on: some depthwise (one input channel each) */
		if (t >= 12) {
			p.groups = pick(2, 4);
			p.in_c = t % 2 ? p.groups : p.in_c * p.groups;
			p.out_c *= p.groups;
		}

		p.pad_top = pick(0, 1);
		p.pad_left = pick(0, 1);
		if (p.in_h + 2 * p.pad_top < p.dil_h * (p.k_h - 1) + 1)
			p.k_h = 1;
		if (p.in_w + 2 * p.pad_left < p.dil_w * (p.k_w - 1) + 1)
			p.k_w = 1;
		p.out_h = (p.in_h + 2 * p.pad_top - p.dil_h * (p.k_h - 1) - 1) / p.stride_h + 1;
		p.out_w = (p.in_w + 2 * p.pad_left - p.dil_w * (p.k_w - 1) - 1) / p.stride_w + 1;
		npu_conv2d_f32_sizes(&p, &nx, &nw, &ny);
		float *x = floats(nx), *w = floats(nw), *y = floats(ny), *got = NULL;
		cl_mem mx = up(x, 4 * nx), mw = up(w, 4 * nw), my = up(y, 4 * ny);
		size_t n = pass == NPU_CONV_FORWARD ? ny : pass == NPU_CONV_BACKWARD_DATA ? nx : nw;

		CHECK_EQ(npu_ref_conv2d_f32(&p, pass, x, w, y), 0);
		CHECK_EQ(ocl_conv2d_f32(ocl, &p, pass, mx, mw, my, NULL), NPU_OK);
		got = malloc(4 * n);
		CHECK_EQ(ocl_finish(ocl), NPU_OK);
		down(pass == NPU_CONV_FORWARD ? my : pass == NPU_CONV_BACKWARD_DATA ? mx : mw, got,
		     4 * n);
		CHECK(same_floats(got, pass == NPU_CONV_FORWARD ? y :
				  pass == NPU_CONV_BACKWARD_DATA ? x : w, n));
		if (pass != NPU_CONV_FORWARD)
			ocl_release(ocl, &my, 1);
		if (pass != NPU_CONV_BACKWARD_DATA)
			ocl_release(ocl, &mx, 1);
		if (pass != NPU_CONV_BACKWARD_FILTER)
			ocl_release(ocl, &mw, 1);
		free(x);
		free(w);
		free(y);
		free(got);
	}
}

static void test_pool_f32(void)
{
	for (int t = 0; t < 16; t++) {
		struct npu_pool_f32 p = { pick(1, 2), pick(2, 10), pick(2, 10), pick(1, 4), 0, 0,
					  pick(1, 3), pick(1, 3), pick(1, 3), pick(1, 3),
					  (enum npu_pool_f32_mode)(1 + t % 4) };
		uint64_t nx, ny;
		int bwd = p.mode >= NPU_FPOOL_MAX_BACKWARD;

		if (p.k_h > p.in_h)
			p.k_h = p.in_h;
		if (p.k_w > p.in_w)
			p.k_w = p.in_w;
		p.out_h = (p.in_h - p.k_h) / p.stride_h + 1;
		p.out_w = (p.in_w - p.k_w) / p.stride_w + 1;
		npu_pool_f32_sizes(&p, &nx, &ny);
		float *x = floats(nx), *y = floats(ny), *dx = malloc(4 * nx), *got = malloc(4 * nx);

		if (t % 8 < 4)		/* ties: the first largest takes the gradient */
			for (uint64_t i = 0; i < nx; i++)
				x[i] = (float)(rnd() % 3);
		cl_mem mx = up(x, 4 * nx), my = up(y, 4 * ny), md = up(NULL, 4 * nx);

		CHECK_EQ(npu_ref_pool_f32(&p, x, y, bwd ? dx : NULL), 0);
		CHECK_EQ(ocl_pool_f32(ocl, &p, p.mode == NPU_FPOOL_AVG_BACKWARD ? NULL : mx, my,
				      bwd ? md : NULL), NPU_OK);
		down(bwd ? md : my, got, 4 * (bwd ? nx : ny));
		CHECK(same_floats(got, bwd ? dx : y, bwd ? nx : ny));
		ocl_release(ocl, (cl_mem[]){ mx, bwd ? my : md }, 2);
		free(x);
		free(y);
		free(dx);
		free(got);
	}
}

static void test_elementwise_f32(void)
{
	for (int op = NPU_EF_ADD; op <= NPU_EF_FROM_BF16; op++) {
		uint32_t n = pick(1, 3000), cols = op == NPU_EF_BIAS ? pick(1, 7) : 0;
		struct npu_eltwise_f32 p = { cols ? n / cols * cols + cols : n,
					     (enum npu_eltwise_f32_op)op, cols,
					     op == NPU_EF_AXPY || op == NPU_EF_SCALE ? -1.25f : 0 };
		float *a = floats(p.count), *b = floats(p.count), *want = malloc(4 * p.count);
		float *got = malloc(4 * p.count);

		a[0] = NAN;	/* a NaN stays one, through ReLU and bf16 too */
		cl_mem ma = up(a, 4 * p.count), mb = up(b, 4 * p.count), mo = up(NULL, 4 * p.count);

		CHECK_EQ(npu_ref_eltwise_f32(&p, a, b, want), 0);
		CHECK_EQ(ocl_eltwise_f32(ocl, &p, ma, mb, mo), NPU_OK);
		down(mo, got, 4 * p.count);
		CHECK(op == NPU_EF_TO_BF16 ? !memcmp(got, want, 2 * p.count)
					   : same_floats(got, want, p.count));
		/* in place: out is a */
		if (op != NPU_EF_TO_BF16 && op != NPU_EF_FROM_BF16) {
			CHECK_EQ(npu_ref_eltwise_f32(&p, a, b, a), 0);
			CHECK_EQ(ocl_eltwise_f32(ocl, &p, ma, mb, ma), NPU_OK);
			CHECK_EQ(ocl_finish(ocl), NPU_OK);
			CHECK_EQ(ocl_read(ocl, ma, 4 * p.count, got), NPU_OK);
			CHECK(same_floats(got, a, p.count));
		}
		ocl_release(ocl, (cl_mem[]){ ma, mb }, 2);
		free(a);
		free(b);
		free(want);
		free(got);
	}
}

static void test_reduce_xent_optim(void)
{
	for (int t = 0; t < 8; t++) {
		struct npu_reduce_f32 r = { pick(1, 70), pick(1, 70), t & 1, (t >> 1) & 1 };
		uint32_t no = r.over_cols ? r.rows : r.cols;
		float *in = floats((size_t)r.rows * r.cols), *out = floats(no), *got = malloc(4 * no);
		cl_mem mi = up(in, 4 * (size_t)r.rows * r.cols), mo = up(out, 4 * no);

		CHECK_EQ(npu_ref_reduce_f32(&r, in, out), 0);
		CHECK_EQ(ocl_reduce_f32(ocl, &r, mi, mo), NPU_OK);
		down(mo, got, 4 * no);
		CHECK(same_floats(got, out, no));
		ocl_release(ocl, &mi, 1);
		free(in);
		free(out);
		free(got);
	}
	for (int t = 0; t < 6; t++) {
		struct npu_xent_f32 x = { pick(1, 60), pick(2, 12), 1.0f / 64 };
		size_t n = (size_t)x.rows * x.classes;
		float *z = floats(n), *loss = malloc(4 * x.rows), *dz = malloc(4 * n);
		float *gl = malloc(4 * x.rows), *gd = malloc(4 * n), worst = 0;
		int32_t *labels = malloc(4 * x.rows);

		for (uint32_t i = 0; i < x.rows; i++)
			labels[i] = (int32_t)(rnd() % x.classes);
		cl_mem mz = up(z, 4 * n), ml = up(labels, 4 * x.rows), mloss = up(NULL, 4 * x.rows);
		cl_mem md = up(NULL, 4 * n);

		CHECK_EQ(npu_ref_xent_f32(&x, z, labels, loss, dz), 0);
		CHECK_EQ(ocl_xent_f32(ocl, &x, mz, ml, mloss, md), NPU_OK);
		down(mloss, gl, 4 * x.rows);
		down(md, gd, 4 * n);
		for (uint32_t i = 0; i < x.rows; i++)
			worst = fmaxf(worst, fabsf(gl[i] - loss[i]) / fmaxf(1.0f, fabsf(loss[i])));
		for (size_t i = 0; i < n; i++)
			worst = fmaxf(worst, fabsf(gd[i] - dz[i]) * 64);
		CHECK(worst < 1e-5f);	/* a few ulp of exp and log */
		labels[0] = (int32_t)x.classes;	/* out of range: flagged, as the reference refuses */
		CHECK_EQ(ocl_write(ocl, ml, 4 * x.rows, labels), NPU_OK);
		CHECK_EQ(ocl_xent_f32(ocl, &x, mz, ml, NULL, NULL), NPU_OK);
		CHECK_EQ(ocl_finish(ocl), NPU_EINVAL);
		CHECK_EQ(ocl_finish(ocl), NPU_OK);	/* and the flag is cleared */
		ocl_release(ocl, (cl_mem[]){ mz, ml }, 2);
		free(z);
		free(loss);
		free(dz);
		free(gl);
		free(gd);
		free(labels);
	}
	for (int algo = NPU_OPTIM_SGD; algo <= NPU_OPTIM_ADAMW; algo++)
		for (int step = 1; step <= 3; step++) {
			struct npu_optim_f32 p = { pick(1, 500), (enum npu_optim_algo)algo, 0.01f,
						   0.9f, 0.999f, 1e-8f, 0.01f,
						   algo == NPU_OPTIM_SGD ? 0 : (uint32_t)step };
			float *w = floats(p.count), *g = floats(p.count), *m = floats(p.count);
			float *v = floats(p.count), *got = malloc(4 * p.count);

			for (uint32_t i = 0; i < p.count; i++)
				v[i] = fabsf(v[i]);
			cl_mem mw = up(w, 4 * p.count), mg = up(g, 4 * p.count);
			cl_mem mm = up(m, 4 * p.count), mv = up(v, 4 * p.count);

			CHECK_EQ(npu_ref_optim_f32(&p, w, g, m, v), 0);
			CHECK_EQ(ocl_optim_f32(ocl, &p, mw, mg, mm, mv), NPU_OK);
			down(mw, got, 4 * p.count);
			CHECK(same_floats(got, w, p.count));
			down(mm, got, 4 * p.count);
			CHECK(same_floats(got, m, p.count));
			ocl_release(ocl, (cl_mem[]){ mg, mv }, 2);
			free(w);
			free(g);
			free(m);
			free(v);
			free(got);
		}
}

static void close_device(void)
{
	npu_ocl_close(ocl);
}

/* ---- every N-dimensional function, on OpenCL and the reference -------------- */

#define NE	96

/* @n values of type @dt at @a and @b agree: integers exactly, floats within ulps, NaN with NaN. */
static int same_values(uint32_t dt, const void *a, const void *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (dt == NPU_DT_FLOAT32) {
			float x = ((const float *)a)[i], y = ((const float *)b)[i];

			if (isnan(x) ? !isnan(y) :
			    !(x == y || fabsf(x - y) <= 4e-6f * fmaxf(1.0f, fabsf(x))))
				return 0;
		} else if (memcmp((const uint8_t *)a + i * nd_elem_size(dt),
				  (const uint8_t *)b + i * nd_elem_size(dt), nd_elem_size(dt))) {
			return 0;
		}
	}
	return 1;
}

/* @n random values of type @dt (floats in [-4, 4], some exact 0s; bools 0 or 1). */
static void *values(uint32_t dt, size_t n)
{
	uint8_t *p = malloc(n * 8);

	for (size_t i = 0; i < n; i++) {
		if (dt == NPU_DT_FLOAT32)
			((float *)p)[i] = i % 11 ? frnd() : 0.0f;
		else if (dt == NPU_DT_INT32)
			((int32_t *)p)[i] = (int32_t)pick(0, 40) - 20;
		else if (dt == NPU_DT_BOOL)
			p[i] = (uint8_t)(rnd() & 1);
		else
			p[i] = (uint8_t)rnd();
	}
	return p;
}

/* OpenCL's @n results in @my (type @dt) agree with the reference's @want; @my released. */
static void agree(const char *what, uint32_t fn, uint32_t dt, const void *want, cl_mem my,
		  uint64_t n)
{
	void *got = calloc(n, 8);

	down(my, got, n * nd_elem_size(dt));
	if (!same_values(dt, want, got, n))
		printf("#   %s %u: OpenCL differs\n", what, fn);
	CHECK(same_values(dt, want, got, n));
	free(got);
}

/*
 * fp32 arithmetic on operands shaped as the output (8 lanes a work-item,
 * the ReLU after it taken in): bit for bit the reference's, then the
 * reference's ReLU (x < 0 ? 0 : x), on 8 * 12 + 5 values (a partial last
 * block) with NaN, infinities, signed zeros and subnormals among them.
 */
static void test_nd_binary_f32_lanes(void)
{
	static const float odd[] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f,
				     3.4e38f };
	static const uint32_t fns[] = { ND_ADD, ND_SUB, ND_MUL, ND_DIV, ND_MAX, ND_MIN };
	enum { N = 8 * 12 + 5 };
	float a[N], b[N], want[N], got[N];

	for (int i = 0; i < N; i++) {
		a[i] = i % 5 ? frnd() : odd[i / 5 % 8];
		b[i] = i % 7 ? frnd() : odd[i / 7 % 8];
	}
	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++)
		for (int relu = 0; relu < 2; relu++) {
			struct nd_binary p = { .fn = fns[f], .dtype = NPU_DT_FLOAT32, .rank = 1,
					       .out = { N }, .a = { N }, .b = { N } };
			cl_mem ma = up(a, sizeof(a)), mb = up(b, sizeof(b)), my = up(NULL, sizeof(a));
			int bad = 0;

			CHECK_EQ(ref_nd_binary(&p, a, b, want), 0);
			for (int i = 0; relu && i < N; i++)
				want[i] = want[i] < 0.0f ? 0.0f : want[i];
			CHECK_EQ(ocl_nd_binary(ocl, &p, ma, mb, my, relu), NPU_OK);
			down(my, got, sizeof(got));
			for (int i = 0; i < N; i++)
				bad += isnan(want[i]) ? !isnan(got[i]) :
				       memcmp(&want[i], &got[i], sizeof(float)) != 0;
			if (bad)
				printf("#   function %u, relu %d: %d of %d differ\n", fns[f], relu, bad, N);
			CHECK(!bad);
			ocl_release(ocl, &ma, 1);
			ocl_release(ocl, &mb, 1);
		}
	{	/* a ReLU after a comparison: refused */
		struct nd_binary p = { .fn = ND_LESS, .dtype = NPU_DT_FLOAT32, .rank = 1,
				       .out = { N }, .a = { N }, .b = { N } };
		cl_mem ma = up(a, sizeof(a)), my = up(NULL, sizeof(a));

		CHECK_EQ(ocl_nd_binary(ocl, &p, ma, ma, my, 1), NPU_EINVAL);
		ocl_release(ocl, &ma, 1);
		ocl_release(ocl, &my, 1);
	}
}

/*
 * Each function of enum nd_fn and enum nd_reduce_fn (ir/nd_fn.h) runs on
 * OpenCL as the CPU reference computes it: an OpenCL kernel that forgets
 * one (its switch is compiled at run time, beyond -Wswitch) fails here.
 */
static void test_every_nd_function(void)
{
	static const uint32_t bdts[] = { NPU_DT_FLOAT32, NPU_DT_INT32, NPU_DT_BOOL };
	int tried = 0;

	for (uint32_t fn = 0; fn < ND_NUM_BINARY; fn++)
		for (size_t d = 0; d < sizeof(bdts) / sizeof(bdts[0]); d++) {
			int logical = fn == ND_AND || fn == ND_OR || fn == ND_XOR;
			struct nd_binary p = { .fn = fn, .dtype = bdts[d], .rank = 2,
					       .out = { 4, NE / 4 }, .a = { 4, NE / 4 },
					       .b = { 1, NE / 4 } };
			uint32_t odt = nd_binary_out_dt(fn, bdts[d]);
			void *a, *b, *want;
			cl_mem ma, mb, my;

			if (logical != (bdts[d] == NPU_DT_BOOL))
				continue;
			a = values(bdts[d], NE);
			b = values(bdts[d], NE / 4);
			want = calloc(NE, 8);
			CHECK_EQ(ref_nd_binary(&p, a, b, want), 0);
			ma = up(a, NE * nd_elem_size(bdts[d]));
			mb = up(b, NE / 4 * nd_elem_size(bdts[d]));
			my = up(NULL, NE * nd_elem_size(odt));
			CHECK_EQ(ocl_nd_binary(ocl, &p, ma, mb, my, 0), NPU_OK);
			agree(bdts[d] == NPU_DT_FLOAT32 ? "binary function (fp32)" :
			      "binary function (integers)", fn, odt, want, my, NE);
			ocl_release(ocl, &ma, 1);
			ocl_release(ocl, &mb, 1);
			tried++;
			free(a);
			free(b);
			free(want);
		}
	for (uint32_t fn = ND_RELU; fn < ND_NUM_FN; fn++) {
		uint32_t dt = fn == ND_FLIP128 ? NPU_DT_UINT8 : fn == ND_NOT ? NPU_DT_BOOL :
			      NPU_DT_FLOAT32;
		struct nd_unary p = { .fn = fn, .dtype = dt, .count = NE, .alpha = 0.3f,
				      .beta = 0.5f, .lo = -1.5f, .hi = 2.0f, .ilo = -3, .ihi = 7,
				      .odtype = fn == ND_CAST ? NPU_DT_INT32 : 0 };
		uint32_t odt = fn == ND_CAST ? NPU_DT_INT32 : fn == ND_FLIP128 ? NPU_DT_INT8 : dt;
		void *x = values(dt, NE), *want = calloc(NE, 8);
		cl_mem mx, my;

		CHECK_EQ(ref_nd_unary(&p, x, want), 0);
		mx = up(x, NE * nd_elem_size(dt));
		my = up(NULL, NE * nd_elem_size(odt));
		CHECK_EQ(ocl_nd_unary(ocl, &p, mx, my), NPU_OK);
		agree("unary function", fn, odt, want, my, NE);
		ocl_release(ocl, &mx, 1);
		tried++;
		free(x);
		free(want);
	}
	for (uint32_t fn = 0; fn < ND_R_NUM; fn++) {
		/* positive values, so that the logarithms are of something */
		struct nd_reduce p = { .fn = fn, .dtype = NPU_DT_FLOAT32, .rank = 3, .mask = 5,
				       .in = { 4, 6, NE / 24 } };
		int arg = fn == ND_R_ARGMAX || fn == ND_R_ARGMIN;
		uint32_t odt = arg ? NPU_DT_INT64 : NPU_DT_FLOAT32;
		uint64_t nout = nd_reduce_count(&p, 1);
		float *x = values(NPU_DT_FLOAT32, NE);
		void *want = calloc(NE, 8);
		cl_mem mx, my;

		for (int i = 0; i < NE; i++)
			x[i] = fabsf(x[i]) + 0.25f;
		CHECK_EQ(ref_nd_reduce(&p, x, want), 0);
		mx = up(x, NE * sizeof(float));
		my = up(NULL, nout * nd_elem_size(odt));
		CHECK_EQ(ocl_nd_reduce(ocl, &p, mx, my), NPU_OK);
		agree("reduction", fn, odt, want, my, nout);
		ocl_release(ocl, &mx, 1);
		tried++;
		free(x);
		free(want);
	}
	printf("#   %d functions and types\n", tried);
}

/*
 * The N-d matmul on OpenCL as the reference computes it, every operand
 * order: int8 and uint8 with zero points (exact int32), and bf16 (fp32
 * sums, within their rounding), each with A and B transposed or not.
 */
static void test_nd_matmul_transposed(void)
{
	for (int t = 0; t < 12; t++) {
		int bf = t >= 8;
		struct nd_matmul p = { .m = 5, .n = 6, .k = 7, .trans_a = t & 1, .trans_b = t >> 1 & 1,
				       .adt = bf ? NPU_DT_BFLOAT16 : t & 4 ? NPU_DT_UINT8 : NPU_DT_INT8,
				       .bdt = bf ? NPU_DT_BFLOAT16 : NPU_DT_INT8,
				       .azp_n = bf ? 0 : 1, .bzp_n = bf ? 0 : 6, .alpha = 1.0f };
		uint32_t odt = bf ? NPU_DT_FLOAT32 : NPU_DT_INT32;
		uint8_t azp = 3, bzp[6] = { 1, 0, 255, 7, 2, 250 };
		void *a = values(bf ? NPU_DT_INT32 : NPU_DT_INT8, 35), *b = values(NPU_DT_INT32, 42);
		void *want = calloc(30, 4);
		cl_mem ma, mb, mza, mzb, my;

		for (int i = 0; bf && i < 42; i++) {	/* small integers: exact in bf16 */
			float fa = (float)(i % 9) - 4, fb = (float)(i % 5) - 2;
			uint32_t ua, ub;

			memcpy(&ua, &fa, 4);
			memcpy(&ub, &fb, 4);
			if (i < 35)
				((uint16_t *)a)[i] = (uint16_t)(ua >> 16);
			((uint16_t *)b)[i] = (uint16_t)(ub >> 16);
		}
		CHECK_EQ(ref_nd_matmul(&p, a, b, bf ? NULL : &azp, bf ? NULL : bzp, want), 0);
		ma = up(a, 35 * nd_elem_size(p.adt));
		mb = up(b, 42 * nd_elem_size(p.bdt));
		mza = bf ? NULL : up(&azp, 1);
		mzb = bf ? NULL : up(bzp, 6);
		my = up(NULL, 30 * 4);
		CHECK_EQ(ocl_nd_matmul(ocl, &p, ma, mb, mza, mzb, my), NPU_OK);
		agree("matmul", (uint32_t)t, odt, want, my, 30);
		ocl_release(ocl, &ma, 1);
		ocl_release(ocl, &mb, 1);
		if (!bf) {
			ocl_release(ocl, &mza, 1);
			ocl_release(ocl, &mzb, 1);
		}
		free(a);
		free(b);
		free(want);
	}
}

/*
 * The fp32 matrix product in work-group tiles (nd_matmul_f32_tiles, a
 * GPU's; NPU_OCL_TILES=1 here) and in blocks (nd_matmul_f32, the CPU
 * device's default), both against the reference: partial tiles, one by
 * one, transposes, a broadcast batch, over sums of small integers (exact
 * in any order, so bit for bit).
 */
static void test_matmul_tiles(void)
{
	static const struct { uint32_t m, n, k, ta, tb, brank, ob[2], ab[2], bb[2]; } cs[] = {
		{ 70, 130, 33, 0, 0, 0, { 0 }, { 0 }, { 0 } },
		{ 64, 64, 16, 1, 1, 0, { 0 }, { 0 }, { 0 } },
		{ 1, 1, 1, 0, 1, 0, { 0 }, { 0 }, { 0 } },
		{ 17, 9, 40, 0, 1, 2, { 2, 3 }, { 2, 1 }, { 1, 3 } },
		{ 65, 3, 17, 1, 0, 1, { 3 }, { 3 }, { 1 } },
	};
	npu_ocl *t = NULL;
	char why[512];

	setenv("NPU_OCL_TILES", "1", 1);
	CHECK_EQ(npu_ocl_open(&t, why, sizeof(why)), NPU_OK);
	unsetenv("NPU_OCL_TILES");
	if (!t)
		return;
	if (!t->tiles)	/* fewer than 256 work-items a group, or 16 KiB of local memory */
		printf("# SKIP tiles: %s cannot run them\n", t->name);
	for (size_t c = 0; t->tiles && c < sizeof(cs) / sizeof(cs[0]); c++) {
		struct nd_matmul p = { .brank = cs[c].brank, .m = cs[c].m, .n = cs[c].n,
				       .k = cs[c].k, .trans_a = cs[c].ta, .trans_b = cs[c].tb,
				       .adt = NPU_DT_FLOAT32, .bdt = NPU_DT_FLOAT32, .alpha = 0.5f };
		size_t na = p.m * p.k, nb = p.k * p.n, ny = p.m * p.n, ba = 1, bb = 1, by = 1;

		for (uint32_t d = 0; d < p.brank; d++) {
			p.ob[d] = cs[c].ob[d];
			p.ab[d] = cs[c].ab[d];
			p.bb[d] = cs[c].bb[d];
			by *= p.ob[d];
			ba *= p.ab[d];
			bb *= p.bb[d];
		}
		float *a = malloc(4 * na * ba), *b = malloc(4 * nb * bb);
		float *want = malloc(4 * ny * by), *got = malloc(4 * ny * by);

		for (size_t i = 0; i < na * ba; i++)
			a[i] = (float)((int)(i * 7 % 9) - 4);
		for (size_t i = 0; i < nb * bb; i++)
			b[i] = (float)((int)(i * 5 % 7) - 3);
		CHECK_EQ(ref_nd_matmul(&p, a, b, NULL, NULL, want), 0);
		for (int tiled = 0; tiled < 2; tiled++) {
			npu_ocl *o = tiled ? t : ocl;
			cl_mem ma = ocl_buffer(o, 4 * na * ba, NULL, 0), mb = ocl_buffer(o, 4 * nb * bb,
										    NULL, 0);
			cl_mem my = ocl_buffer(o, 4 * ny * by, NULL, 0);

			CHECK_EQ(ocl_write(o, ma, 4 * na * ba, a), NPU_OK);
			CHECK_EQ(ocl_write(o, mb, 4 * nb * bb, b), NPU_OK);
			memset(got, 0xff, 4 * ny * by);
			CHECK_EQ(ocl_nd_matmul(o, &p, ma, mb, NULL, NULL, my), NPU_OK);
			CHECK_EQ(ocl_finish(o), NPU_OK);
			CHECK_EQ(ocl_read(o, my, 4 * ny * by, got), NPU_OK);
			if (memcmp(got, want, 4 * ny * by))
				printf("#   case %zu, %s: differs from the reference\n", c,
				       tiled ? "tiles" : "blocks");
			CHECK(!memcmp(got, want, 4 * ny * by));
			ocl_release(o, &ma, 1);
			ocl_release(o, &mb, 1);
			ocl_release(o, &my, 1);
		}
		free(a);
		free(b);
		free(want);
		free(got);
	}
	npu_ocl_close(t);
	/* a word that is not a boolean: refused with the reason */
	setenv("NPU_OCL_TILES", "yes", 1);
	CHECK_EQ(npu_ocl_open(&t, why, sizeof(why)), NPU_EINVAL);
	CHECK(strstr(why, "NPU_OCL_TILES") != NULL);
	unsetenv("NPU_OCL_TILES");
}

/*
 * QDQ on OpenCL as the reference computes it, every mode, int8 and uint8,
 * per axis: quantize and dequantize, ONNX's requantization (fp32) and
 * TFLite's (Q31 multipliers with shifts across -31..30).
 */
static void test_nd_qdq_modes(void)
{
	for (int t = 0; t < 8; t++) {
		struct nd_qdq p = { .mode = (uint32_t)(t % 4), .qdtype = t < 4 ? NPU_DT_INT8 :
				    NPU_DT_UINT8, .outer = 3, .axis = 4, .inner = 50 };
		size_t n = 600, q8 = p.mode == ND_DEQUANTIZE;
		uint32_t idt = p.mode == ND_QUANTIZE ? NPU_DT_FLOAT32 : q8 ? p.qdtype : NPU_DT_INT32;
		uint32_t odt = p.mode == ND_DEQUANTIZE ? NPU_DT_FLOAT32 : p.qdtype;
		void *x = values(idt, n), *want = calloc(n, 4);
		int32_t scale[8];
		uint8_t zp[4];
		cl_mem mx, ms, mz, my;

		for (size_t i = 0; idt == NPU_DT_INT32 && i < n; i++)	/* accumulators */
			((int32_t *)x)[i] = (int32_t)(rnd() << 8 ^ rnd()) >> (rnd() % 20);
		for (int a = 0; a < 4; a++) {
			float f = 0.01f * (float)(1 + rnd() % 300);

			if (p.mode == ND_REQUANTIZE_Q31) {
				scale[2 * a] = (int32_t)((1u << 30) + rnd() % (1u << 30));
				scale[2 * a + 1] = (int32_t)(rnd() % 62) - 31;
			} else {
				memcpy(&scale[a], &f, 4);
			}
			zp[a] = (uint8_t)rnd();
		}
		CHECK_EQ(ref_nd_qdq(&p, x, scale, zp, want), 0);
		mx = up(x, n * nd_elem_size(idt));
		ms = up(scale, sizeof(scale));
		mz = up(zp, 4);
		my = up(NULL, n * 4);
		CHECK_EQ(ocl_nd_qdq(ocl, &p, mx, ms, mz, my), NPU_OK);
		agree("qdq", (uint32_t)t, odt, want, my, n);
		ocl_release(ocl, &mx, 1);
		ocl_release(ocl, &ms, 1);
		ocl_release(ocl, &mz, 1);
		free(x);
		free(want);
	}
}

TAP_MAIN(
	TAP_ENTRY(open_device),
	TAP_ENTRY(test_nd_matmul_transposed),
	TAP_ENTRY(test_nd_qdq_modes),
	TAP_ENTRY(test_conv2d_i8),
	TAP_ENTRY(test_eltwise_softmax_i8),
	TAP_ENTRY(test_quantize),
	TAP_ENTRY(test_layout),
	TAP_ENTRY(test_gemm_f32),
	TAP_ENTRY(test_conv2d_f32),
	TAP_ENTRY(test_pool_f32),
	TAP_ENTRY(test_elementwise_f32),
	TAP_ENTRY(test_reduce_xent_optim),
	TAP_ENTRY(test_every_nd_function),
	TAP_ENTRY(test_nd_binary_f32_lanes),
	TAP_ENTRY(test_matmul_tiles),
	TAP_ENTRY(close_device),
)
