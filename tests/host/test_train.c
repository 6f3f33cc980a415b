// SPDX-License-Identifier: MIT
/*
 * test_train.c - the training commands, run by the real firmware on the
 * device core, against libnpu's CPU reference: GEMM and convolution within
 * fp32 rounding of the reference (their sums are blocked differently),
 * everything else bit for bit (same arithmetic, same order); bf16 rounding
 * worked by hand; the convolution's and pooling's gradients checked as the
 * adjoints of their forward passes; malformed commands answered with errors.
 */
#define _POSIX_C_SOURCE 200809L	/* setenv, strdup (isa.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "isa.h"
#include "npu.h"
#include "device/npu_pack.h"
#include "ir/kern_params.h"
#include "npu_core_priv.h"	/* the engine's kept weights, counted */
#include "npu_sgemm.h"		/* the bf16 kernel's name */
#include "npu_train_math.h"
#include "tap.h"

static struct harness h;
static uint64_t seed = 11;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

/* Uniform in [-1, 1), on a grid of 1/1024 now and then, so ties happen. */
static float rndf(void)
{
	return rnd() % 4 ? (float)((double)rnd() / 2147483648.0 - 1.0)
			 : (float)((int)(rnd() % 2048) - 1024) / 1024.0f;
}

#define VA(i)	(0x1000000ull * (uint64_t)(i))	/* operand i at i x 16 MiB */
#define VA_CMD	0x10000ull

/* A fresh device; operands get mapped as the tests need them. */
static void setup(void)
{
	h_start(&h, 1, 16);
}

/* Map operand @i with @bytes of @src (or zeros), writable; returns its VA. */
static uint64_t put(int i, const void *src, size_t bytes)
{
	h_map(&h, 0, VA(i), bytes ? bytes : 1, NPU_PTE_R | NPU_PTE_W, 0);
	if (src)
		memcpy(h_va(&h, 0, VA(i)), src, bytes);
	return VA(i);
}

static void *at(int i)
{
	return h_va(&h, 0, VA(i));
}

static uint32_t run(const void *cmd, size_t len)
{
	return h_run_cmds(&h, 0, VA_CMD, cmd, len).status;
}

static float *rand_floats(size_t n)
{
	float *f = malloc(sizeof(float) * (n ? n : 1));

	for (size_t i = 0; i < n; i++)
		f[i] = rndf();
	return f;
}

/* |got - want| <= tol[i] for each element; says where it first fails. */
static int close_to(const float *got, const float *want, const double *tol, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(fabs((double)got[i] - want[i]) <= tol[i])) {
			printf("#   [%zu] %.9g, reference %.9g (tolerance %.3g)\n", i, got[i],
			       want[i], tol[i]);
			return 0;
		}
	return 1;
}

static void *to_bf16(const float *f, size_t n)
{
	uint16_t *b = malloc(sizeof(*b) * (n ? n : 1));

	for (size_t i = 0; i < n; i++)
		b[i] = npu_f32_to_bf16(f[i]);
	return b;
}

/*
 * GEMM: random shapes across the kernel's blocks (depth past 256), every
 * transpose, bf16, alpha and beta, and beta = 0 over a C full of NaN (not
 * read). Tolerance: two fp32 sums of k terms each differ from the exact
 * one by at most k * 2^-24 * sum |a b| (plus the alpha/beta roundings).
 */
static void gemm_f32_cases(const char *isa)
{
	(void)isa;
	for (int t = 0; t < 40; t++) {
		struct npu_gemm_f32 p = { 1 + rnd() % 40, 1 + rnd() % 40, 1 + rnd() % 40,
					  (int)(rnd() & 1), (int)(rnd() & 1), t % 4 == 3,
					  t % 5 ? rndf() * 2 : 1.0f, t % 3 ? rndf() : 0.0f };
		struct npu_cmd_gemm_f32 c;
		size_t na, nb, nc;
		float *a, *b, *c0, *want;
		void *da, *db;
		double *tol;

		if (t % 8 == 0)
			p.k = 257 + rnd() % 400;	/* several depth blocks */
		if (t == 1)
			p.m = 100, p.n = 150, p.k = 150;	/* threads */
		na = (size_t)p.m * p.k;
		nb = (size_t)p.k * p.n;
		nc = (size_t)p.m * p.n;
		a = rand_floats(na);
		b = rand_floats(nb);
		c0 = rand_floats(nc);
		want = malloc(sizeof(float) * nc);
		tol = malloc(sizeof(double) * nc);
		if (p.beta == 0.0f)
			for (size_t i = 0; i < nc; i++)
				c0[i] = NAN;
		da = p.bf16 ? to_bf16(a, na) : a;
		db = p.bf16 ? to_bf16(b, nb) : b;
		memcpy(want, c0, sizeof(float) * nc);
		CHECK_EQ(npu_ref_gemm_f32(&p, da, db, want), NPU_OK);
		for (uint32_t i = 0; i < p.m; i++)
			for (uint32_t j = 0; j < p.n; j++) {
				double s = 0;

				for (uint32_t x = 0; x < p.k; x++)
					s += fabs((double)a[p.trans_a ? (size_t)x * p.m + i
								      : (size_t)i * p.k + x] *
						  b[p.trans_b ? (size_t)j * p.k + x
							      : (size_t)x * p.n + j]);
				tol[(size_t)i * p.n + j] = (2.0 * p.k + 4) * ldexp(1, -24) *
					(fabs(p.alpha) * s + (p.beta != 0.0f ?
						fabs(p.beta * c0[(size_t)i * p.n + j]) : 0)) + 1e-30;
			}
		setup();
		CHECK_EQ(npu_pack_gemm_f32(&c, &p, put(1, da, na * (p.bf16 ? 2 : 4)),
					   put(2, db, nb * (p.bf16 ? 2 : 4)),
					   put(3, c0, nc * 4)), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(close_to(at(3), want, tol, nc));
		if (p.bf16) {
			free(da);
			free(db);
		}
		free(a);
		free(b);
		free(c0);
		free(want);
		free(tol);
	}
}

/*
 * bf16 against fp32: rounding an input to bf16 moves it by at most 2^-9 of
 * itself, so a product by at most about 2^-8, and a GEMM on bf16 inputs is
 * within 2^-8 * sum |a b| (plus the fp32 bound) of the same GEMM in fp32.
 */
static void test_gemm_bf16_within_its_bound(void)
{
	struct npu_gemm_f32 p = { 37, 29, 300, 0, 1, 1, 1.0f, 0.0f };
	struct npu_gemm_f32 pf = p;
	struct npu_cmd_gemm_f32 c;
	float *a = rand_floats(37 * 300), *b = rand_floats(29 * 300), want[37 * 29];
	void *ha = to_bf16(a, 37 * 300), *hb = to_bf16(b, 29 * 300);
	double tol[37 * 29];

	pf.bf16 = 0;
	CHECK_EQ(npu_ref_gemm_f32(&pf, a, b, want), NPU_OK);	/* fp32 inputs */
	for (int i = 0; i < 37; i++)
		for (int j = 0; j < 29; j++) {
			double s = 0;

			for (int x = 0; x < 300; x++)
				s += fabs((double)a[i * 300 + x] * b[j * 300 + x]);
			tol[i * 29 + j] = (ldexp(1, -8) + 602 * ldexp(1, -24)) * s;
		}
	setup();
	CHECK_EQ(npu_pack_gemm_f32(&c, &p, put(1, ha, 37 * 300 * 2), put(2, hb, 29 * 300 * 2),
				   put(3, NULL, 37 * 29 * 4)), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(close_to(at(3), want, tol, 37 * 29));
	free(a);
	free(b);
	free(ha);
	free(hb);
}

/*
 * One bf16 GEMM command on @fa and @fb (bf16 values already, as fp32),
 * against fp64 sums of the same products, within the fp32 bound; A's rows
 * @gap elements further apart than their length (lda), the gaps NaN.
 */
static int gemm_bf16_vs_fp64(const struct npu_gemm_f32 *p, const float *fa, const float *fb,
			     uint32_t gap)
{
	uint32_t a_rows = p->trans_a ? p->k : p->m, a_cols = p->trans_a ? p->m : p->k;
	size_t lda = (size_t)a_cols + gap;
	size_t na = (size_t)p->m * p->k, nb = (size_t)p->k * p->n, nc = (size_t)p->m * p->n;
	double *tol = malloc(sizeof(double) * nc);
	float *want = malloc(sizeof(float) * nc);
	uint16_t *ha = malloc(sizeof(*ha) * lda * a_rows);
	void *hb = to_bf16(fb, nb);
	struct npu_cmd_gemm_f32 c;
	int ok;

	for (size_t r = 0; r < a_rows; r++)
		for (size_t x = 0; x < lda; x++)
			ha[r * lda + x] = x < a_cols ? npu_f32_to_bf16(fa[r * a_cols + x]) : 0x7fc1;

	for (uint32_t i = 0; i < p->m; i++)
		for (uint32_t j = 0; j < p->n; j++) {
			double s = 0, mag = 0;

			for (uint32_t x = 0; x < p->k; x++) {
				double t = (double)fa[p->trans_a ? (size_t)x * p->m + i
								 : (size_t)i * p->k + x] *
					   fb[p->trans_b ? (size_t)j * p->k + x : (size_t)x * p->n + j];

				s += t;
				mag += fabs(t);
			}
			want[(size_t)i * p->n + j] = (float)s;
			tol[(size_t)i * p->n + j] = (2.0 * p->k + 4) * ldexp(1, -24) * mag;
		}
	setup();
	(void)na;
	ok = npu_pack_gemm_f32(&c, p, put(1, ha, lda * a_rows * 2), put(2, hb, nb * 2),
			       put(3, NULL, nc * 4)) == 0;
	c.lda = (uint32_t)lda;
	ok = ok && run(&c, sizeof(c)) == NPU_JOB_OK && close_to(at(3), want, tol, nc);
	free(tol);
	free(want);
	free(ha);
	free(hb);
	return ok;
}

/*
 * bf16 inputs on the kernel the host gives them (npu_sgemm_bf16_kernel():
 * pairs of depths a vdpbf16ps on AVX512-BF16): odd and even depths across
 * its blocks, every transpose, row and column tails, the two-block tile,
 * threads; then inputs a kernel that flushes subnormals would get wrong (a
 * row of subnormals times 2^100, and values of 2^-60), which must take the
 * widened path and keep every product.
 */
static void gemm_bf16_cases(const char *isa)
{
	static const uint32_t shapes[][3] = {
		{ 1, 1, 1 }, { 13, 17, 3 }, { 12, 16, 256 }, { 25, 33, 257 }, { 7, 40, 511 },
		{ 30, 5, 700 }, { 150, 100, 301 }, { 64, 300, 128 }, { 24, 64, 1030 },
		{ 37, 48, 6 }, { 96, 33, 2 },
	};

	printf("# %s: bf16 kernel %s\n", isa, npu_sgemm_bf16_kernel());
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (int t = 0; t < 4; t++) {
			struct npu_gemm_f32 p = { shapes[s][0], shapes[s][1], shapes[s][2], t & 1,
						  t >> 1, 1, 1.0f, 0.0f };
			size_t na = (size_t)p.m * p.k, nb = (size_t)p.k * p.n;
			float *a = rand_floats(na), *b = rand_floats(nb);

			for (size_t i = 0; i < na; i++)
				a[i] = npu_bf16_to_f32(npu_f32_to_bf16(a[i]));
			for (size_t i = 0; i < nb; i++)
				b[i] = npu_bf16_to_f32(npu_f32_to_bf16(b[i]));
			if (!gemm_bf16_vs_fp64(&p, a, b, s % 3 == 2 ? 1 + s % 4 : 0)) {
				printf("#   %u x %u x %u, trans %d %d\n", p.m, p.n, p.k, p.trans_a,
				       p.trans_b);
				CHECK(0);
			}
			free(a);
			free(b);
		}
	for (int t = 0; t < 4; t++) {	/* A packed (odd depth), then read in place */
		uint32_t m = t < 2 ? 14 : 24, n = t < 2 ? 20 : 32, k = t < 2 ? 99 : 98;
		struct npu_gemm_f32 p = { m, n, k, 0, 1, 1, 1.0f, 0.0f };
		float *a = rand_floats((size_t)m * k), *b = rand_floats((size_t)n * k);

		for (size_t i = 0; i < (size_t)m * k; i++)
			a[i] = npu_bf16_to_f32(npu_f32_to_bf16(a[i]));
		for (size_t i = 0; i < (size_t)n * k; i++)
			b[i] = npu_bf16_to_f32(npu_f32_to_bf16(b[i] * (t & 1 ? 1.0f : 0x1p100f)));
		for (uint32_t x = 0; x < k; x++)	/* row 3: subnormals, or 2^-60 */
			a[3 * k + x] = (x % 3 ? 1.0f : -1.0f) * (t & 1 ? 0x1p-60f : 0x1p-127f);
		CHECK(gemm_bf16_vs_fp64(&p, a, b, t & 1));
		CHECK(((const float *)at(3))[3 * n] != 0.0f);	/* not flushed */
		free(a);
		free(b);
	}
}

static void test_gemm_bf16_kernel(void)
{
	on_every_isa("bf16 GEMM", gemm_bf16_cases);
}

static uint32_t groups(const struct npu_conv2d_f32 *p)
{
	return p->groups ? p->groups : 1;
}

/* Convolution sizes that satisfy the symmetric-padding rule. */
static struct npu_conv2d_f32 random_conv(void)
{
	struct npu_conv2d_f32 p = { 0 };

	p.batch = 1 + rnd() % 2;
	p.in_c = 1 + rnd() % 5;
	p.out_c = 1 + rnd() % 6;
	p.k_h = 1 + rnd() % 4;
	p.k_w = 1 + rnd() % 4;
	p.stride_h = 1 + rnd() % 2;
	p.stride_w = 1 + rnd() % 3;
	p.dil_h = 1 + rnd() % 2;
	p.dil_w = 1;
	p.pad_top = rnd() % 3;
	p.pad_left = rnd() % 2;
	p.in_h = p.dil_h * (p.k_h - 1) + 1 + rnd() % 7;
	p.in_w = p.dil_w * (p.k_w - 1) + 1 + rnd() % 7;
	p.out_h = (p.in_h + 2 * p.pad_top - p.dil_h * (p.k_h - 1) - 1) / p.stride_h + 1;
	p.out_w = (p.in_w + 2 * p.pad_left - p.dil_w * (p.k_w - 1) - 1) / p.stride_w + 1;
	return p;
}

/*
 * All three passes on random geometries (stride, dilation, padding, batch,
 * bf16 inputs), against the reference; the tolerance comes from the same
 * reference run on absolute values (a bound on the sum of |terms|).
 */
static void conv2d_f32_cases(const char *isa)
{
	(void)isa;
	for (int t = 0; t < 36; t++) {
		struct npu_conv2d_f32 p = random_conv();
		enum npu_conv_pass pass = (enum npu_conv_pass)(1 + t % 3);
		struct npu_cmd_conv2d_f32 c;
		uint64_t nx, nw, ny, nout, terms;
		float *x, *w, *y, *ax, *aw, *ay, *want, *mag, *outp;
		double *tol;
		int esz;

		if (t % 6 < 3) {	/* 1x1 over every position: read in place, each pass */
			p.k_h = p.k_w = p.stride_h = p.stride_w = 1;
			p.pad_top = p.pad_left = 0;
			p.in_c = 1 + rnd() % 40;
			p.out_c = 1 + rnd() % 40;
			p.out_h = p.in_h, p.out_w = p.in_w;
		}
		if (t % 5 == 4) {		/* groups of several channels */
			p.groups = 2 + rnd() % 3;
			p.in_c *= p.groups;
			p.out_c *= p.groups;
		} else if (t % 5 == 2) {	/* depthwise: vectors and a tail */
			p.groups = p.in_c = 1 + rnd() % 20;
			p.out_c = p.in_c * (1 + (t % 2));
		}

		p.bf16 = t % 4 == 3;
		esz = p.bf16 ? 2 : 4;
		CHECK(npu_conv2d_f32_valid(&p, pass));
		npu_conv2d_f32_sizes(&p, &nx, &nw, &ny);
		x = rand_floats(nx);
		w = rand_floats(nw);
		y = rand_floats(ny);
		/* bf16 inputs: round them first, so both sides see the same values. */
		for (uint64_t i = 0; p.bf16 && i < nx; i++)
			x[i] = npu_bf16_to_f32(npu_f32_to_bf16(x[i]));
		for (uint64_t i = 0; p.bf16 && i < nw; i++)
			w[i] = npu_bf16_to_f32(npu_f32_to_bf16(w[i]));
		for (uint64_t i = 0; p.bf16 && i < ny; i++)
			y[i] = npu_bf16_to_f32(npu_f32_to_bf16(y[i]));
		ax = malloc(sizeof(float) * nx);
		aw = malloc(sizeof(float) * nw);
		ay = malloc(sizeof(float) * ny);
		for (uint64_t i = 0; i < nx; i++)
			ax[i] = fabsf(x[i]);
		for (uint64_t i = 0; i < nw; i++)
			aw[i] = fabsf(w[i]);
		for (uint64_t i = 0; i < ny; i++)
			ay[i] = fabsf(y[i]);
		nout = pass == NPU_CONV_FORWARD ? ny : pass == NPU_CONV_BACKWARD_DATA ? nx : nw;
		terms = pass == NPU_CONV_FORWARD ? (uint64_t)p.k_h * p.k_w * p.in_c / groups(&p) :
			pass == NPU_CONV_BACKWARD_DATA ?
				(uint64_t)p.k_h * p.k_w * p.out_c / groups(&p) : ny / p.out_c;
		{
			struct npu_conv2d_f32 pf = p;
			float *rx = pass == NPU_CONV_BACKWARD_DATA ? malloc(sizeof(float) * nx) : x;
			float *rw = pass == NPU_CONV_BACKWARD_FILTER ? malloc(sizeof(float) * nw) : w;
			float *ry = pass == NPU_CONV_FORWARD ? malloc(sizeof(float) * ny) : y;

			pf.bf16 = 0;	/* the reference on the rounded fp32 values */
			CHECK_EQ(npu_ref_conv2d_f32(&pf, pass, rx, rw, ry), NPU_OK);
			want = pass == NPU_CONV_FORWARD ? ry : pass == NPU_CONV_BACKWARD_DATA ? rx : rw;
			mag = malloc(sizeof(float) * nout);
			CHECK_EQ(npu_ref_conv2d_f32(&pf, pass,
						    pass == NPU_CONV_BACKWARD_DATA ? mag : ax,
						    pass == NPU_CONV_BACKWARD_FILTER ? mag : aw,
						    pass == NPU_CONV_FORWARD ? mag : ay), NPU_OK);
		}
		tol = malloc(sizeof(double) * nout);
		for (uint64_t i = 0; i < nout; i++)
			tol[i] = (2.0 * terms + 2) * ldexp(1, -24) * mag[i] + 1e-30;
		setup();
		{
			void *bx = p.bf16 ? to_bf16(x, nx) : NULL, *bw = p.bf16 ? to_bf16(w, nw) : NULL;
			void *by = p.bf16 ? to_bf16(y, ny) : NULL;

			/* The output is fp32; the inputs are esz bytes each. */
			put(1, pass == NPU_CONV_BACKWARD_DATA ? NULL : bx ? bx : (void *)x,
			    nx * (pass == NPU_CONV_BACKWARD_DATA ? 4 : esz));
			put(2, pass == NPU_CONV_BACKWARD_FILTER ? NULL : bw ? bw : (void *)w,
			    nw * (pass == NPU_CONV_BACKWARD_FILTER ? 4 : esz));
			put(3, pass == NPU_CONV_FORWARD ? NULL : by ? by : (void *)y,
			    ny * (pass == NPU_CONV_FORWARD ? 4 : esz));
			free(bx);
			free(bw);
			free(by);
		}
		CHECK_EQ(npu_pack_conv2d_f32(&c, &p, pass, VA(1), VA(2), VA(3)), 0);
		CHECK_EQ(c.hdr.size, p.groups > 1 ? sizeof(c) : NPU_CONVF_SIZE_V2);
		CHECK_EQ(run(&c, c.hdr.size), NPU_JOB_OK);
		outp = at(pass == NPU_CONV_FORWARD ? 3 : pass == NPU_CONV_BACKWARD_DATA ? 1 : 2);
		CHECK(close_to(outp, want, tol, nout));
		/* depthwise forward: the reference's products and adds, in its order */
		if (pass == NPU_CONV_FORWARD && groups(&p) == p.in_c && p.in_c > 1)
			CHECK(!memcmp(outp, want, sizeof(float) * nout));
		if (want != x && want != w && want != y)
			free(want);
		free(x);
		free(w);
		free(y);
		free(ax);
		free(aw);
		free(ay);
		free(mag);
		free(tol);
	}
}

static void test_gemm_f32_random(void)
{
	on_every_isa("fp32 GEMM", gemm_f32_cases);
}

static void test_conv2d_f32_random(void)
{
	on_every_isa("fp32 convolution", conv2d_f32_cases);
}

/*
 * The forward convolution's epilogue (NPU_CONVF_BIAS, NPU_CONVF_RELU,
 * NPU_CONVF_CLAMP): each combination on random geometries (grouped and
 * depthwise ones too), wide enough for the vector rows and their tails,
 * bit for bit (1) what this file works out from the plain convolution's
 * output, one fp32 add and compares an element, and (2) without the
 * clamp, the plain convolution followed by the element-wise commands in
 * one job. The bias holds a NaN (kept through the ReLU and the clamp) and
 * minus infinity (0 after the ReLU, lo after the clamp).
 */
static void conv2d_f32_epilogue_cases(const char *isa)
{
	(void)isa;
	for (int t = 0; t < 36; t++) {
		struct npu_conv2d_f32 p = random_conv();
		uint32_t flags = t % 3 == 0 ? NPU_CONVF_BIAS : t % 3 == 1 ? NPU_CONVF_RELU :
			NPU_CONVF_BIAS | NPU_CONVF_RELU;
		const float lo = -0.25f, hi = 0.5f;	/* the clamp's */
		struct npu_cmd_conv2d_f32 c[2];
		struct npu_cmd_eltwise_f32 e[2];
		struct npu_eltwise_f32 ep;
		uint64_t nx, nw, ny;
		float *x, *w, *b, *plain, *want;
		size_t ne = 0;

		if (t % 2) {	/* 1x1 over every position: the GEMM reads x in place */
			p.k_h = p.k_w = p.stride_h = p.stride_w = 1;
			p.pad_top = p.pad_left = 0;
			p.out_h = p.in_h, p.out_w = p.in_w;
		}
		p.in_c = 1 + rnd() % 24;
		p.out_c = 1 + rnd() % 40;
		p.bf16 = t % 8 == 7;
		if (t >= 24)	/* the clamp after the others */
			flags = NPU_CONVF_CLAMP | (flags & ~(uint32_t)(t % 3 == 2 ? NPU_CONVF_RELU : 0));
		if (t % 4 == 2) {		/* depthwise, one or two outputs a channel */
			p.groups = p.in_c = 8 + rnd() % 20;
			p.out_c = p.in_c * (t % 8 == 2 ? 1 : 2);
		} else if (t % 4 == 3) {	/* two groups */
			p.groups = 2;
			p.in_c *= 2;
			p.out_c *= 2;
		}
		CHECK(npu_conv2d_f32_valid(&p, NPU_CONV_FORWARD));
		npu_conv2d_f32_sizes(&p, &nx, &nw, &ny);
		x = rand_floats(nx);
		w = rand_floats(nw);
		b = rand_floats(p.out_c);
		if (p.out_c > 2) {
			b[1] = NAN;
			b[2] = -INFINITY;
		}
		setup();
		if (p.bf16) {
			void *bx = to_bf16(x, nx), *bw = to_bf16(w, nw);

			put(1, bx, nx * 2);
			put(2, bw, nw * 2);
			free(bx);
			free(bw);
		} else {
			put(1, x, nx * 4);
			put(2, w, nw * 4);
		}
		put(3, NULL, ny * 4);
		put(4, NULL, ny * 4);
		put(5, NULL, ny * 4);
		put(6, b, p.out_c * 4);

		/* The plain convolution, then the same one finishing its outputs. */
		CHECK_EQ(npu_pack_conv2d_f32(&c[0], &p, NPU_CONV_FORWARD, VA(1), VA(2), VA(3)), 0);
		c[0].hdr.size = sizeof(c[0]);	/* the third form, one group */
		c[1] = c[0];
		c[1].y = VA(4);
		c[1].flags |= flags;
		c[1].bias = flags & NPU_CONVF_BIAS ? VA(6) : 0;
		if (flags & NPU_CONVF_CLAMP) {
			c[1].clamp_lo = npu_f32_bits(lo);
			c[1].clamp_hi = npu_f32_bits(hi);
		}
		CHECK_EQ(run(c, sizeof(c)), NPU_JOB_OK);
		plain = at(3);
		want = malloc(sizeof(float) * ny);
		for (uint64_t i = 0; i < ny; i++) {
			float v = flags & NPU_CONVF_BIAS ? plain[i] + b[i % p.out_c] : plain[i];

			v = flags & NPU_CONVF_RELU && v < 0.0f ? 0.0f : v;
			want[i] = !(flags & NPU_CONVF_CLAMP) ? v : v < lo ? lo : v > hi ? hi : v;
		}
		CHECK(!memcmp(at(4), want, sizeof(float) * ny));
		if (flags & NPU_CONVF_CLAMP)
			goto next;	/* no element-wise clamp command to compare with */

		/* The plain one into 5, then the element-wise commands on it. */
		c[0].y = VA(5);
		if (flags & NPU_CONVF_BIAS) {
			ep = (struct npu_eltwise_f32){ (uint32_t)ny, NPU_EF_BIAS, p.out_c, 0.0f };
			CHECK_EQ(npu_pack_eltwise_f32(&e[ne++], &ep, VA(5), VA(6), VA(5)), 0);
		}
		if (flags & NPU_CONVF_RELU) {
			ep = (struct npu_eltwise_f32){ (uint32_t)ny, NPU_EF_RELU, 0, 0.0f };
			CHECK_EQ(npu_pack_eltwise_f32(&e[ne++], &ep, VA(5), 0, VA(5)), 0);
		}
		{
			uint8_t job[sizeof(c[0]) + sizeof(e)];

			memcpy(job, &c[0], sizeof(c[0]));
			memcpy(job + sizeof(c[0]), e, sizeof(e[0]) * ne);
			CHECK_EQ(run(job, sizeof(c[0]) + sizeof(e[0]) * ne), NPU_JOB_OK);
		}
		CHECK(!memcmp(at(5), at(4), sizeof(float) * ny));
next:
		free(x);
		free(w);
		free(b);
		free(want);
	}
}

static void test_conv2d_f32_epilogue(void)
{
	on_every_isa("fp32 convolution's epilogue", conv2d_f32_epilogue_cases);
}

/*
 * @len bytes of commands run from the command buffer at VA_CMD, mapped
 * once (run() maps it again each time, which invalidates the context's
 * translations and with them the weights the engine keeps).
 */
static uint32_t run_kept(const void *cmd, size_t len)
{
	struct npu_job_desc d = { .job_id = 0x2000, .cmd_va = VA_CMD, .cmd_size = (uint32_t)len };

	memcpy(h_va(&h, 0, VA_CMD), cmd, len);	/* one page: contiguous */
	return h_submit(&h, 0, &d).status;
}

/* A fresh device made with @cfg, set up as setup() does. */
static void setup_cfg(const struct npu_core_config *cfg)
{
	h_fini(&h);
	h_init_cfg(&h, cfg);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	h_map(&h, 0, VA_CMD, 4096, NPU_PTE_R, 0);
}

/*
 * What keeping means for command @kept, @plain promising its weights
 * (operand 2) constant, *@wgen its generation inside @kept, writing
 * operand 4 where @plain writes 3 (@out bytes): packed, then kept, each
 * bit for bit @plain's; the promise broken (@w2, @wb bytes, written over
 * operand 2) still the first output, which @first gets; a new generation,
 * @w2's. The cache's lookups counted on the way.
 */
static void check_kept(const void *plain, void *kept, size_t size, uint32_t *wgen, size_t out,
		       const void *w2, size_t wb, uint8_t *first)
{
	const struct npu_wcache *wc = &h.core->wcache;
	uint64_t hits = wc->hits, misses = wc->misses;

	CHECK_EQ(run_kept(plain, size), NPU_JOB_OK);
	CHECK_EQ(run_kept(kept, size), NPU_JOB_OK);	/* packed */
	CHECK(!memcmp(at(3), at(4), out));
	CHECK_EQ(wc->misses, misses + 1);
	memset(at(4), 0xff, out);
	CHECK_EQ(run_kept(kept, size), NPU_JOB_OK);	/* kept */
	CHECK(!memcmp(at(3), at(4), out));
	CHECK_EQ(wc->hits, hits + 1);
	memcpy(first, at(3), out);

	/* The promise broken: new values under the same generation are not read. */
	memcpy(at(2), w2, wb);
	CHECK_EQ(run_kept(kept, size), NPU_JOB_OK);
	CHECK(!memcmp(at(4), first, out));
	/* A new generation: they are, packed again. */
	(*wgen)++;
	CHECK_EQ(run_kept(plain, size), NPU_JOB_OK);
	CHECK_EQ(run_kept(kept, size), NPU_JOB_OK);
	CHECK(!memcmp(at(3), at(4), out));
	CHECK_EQ(wc->misses, misses + 2);
	CHECK_EQ(wc->hits, hits + 2);
}

/*
 * Constant weights (NPU_CONVF_CONST_W) on random geometries, 1x1 in place,
 * bf16, and GEMMs that thread by columns and by rows: the output bit for
 * bit the plain command's, the first time (packed) and the next (kept).
 * Then what keeping means, seen from outside: new values under the same
 * generation are not read (the promise broken), a new generation is, and
 * so is any after the context's translations are invalidated.
 */
static void conv2d_f32_const_cases(const char *isa)
{
	struct npu_core_config cfg;

	(void)isa;
	npu_core_default_config(&cfg);
	for (int t = 0; t < 12; t++) {
		struct npu_conv2d_f32 p = random_conv();
		struct npu_cmd_conv2d_f32 plain, kept;
		const struct npu_wcache *wc;
		uint64_t nx, nw, ny, hits, misses;
		size_t wb;
		float *x, *w[2];
		void *wraw[2];
		uint8_t *first;

		p.in_c = 1 + rnd() % 24;
		p.out_c = 1 + rnd() % 40;
		if (t % 3 == 1 || t >= 10) {	/* 1x1 over every position: x in place */
			p.k_h = p.k_w = p.stride_h = p.stride_w = 1;
			p.pad_top = p.pad_left = 0;
			p.out_h = p.in_h, p.out_w = p.in_w;
		}
		if (t >= 10) {	/* threads: 4096 x n x k, by columns, then by rows */
			p.batch = 1;
			p.in_h = p.in_w = p.out_h = p.out_w = 64;
			p.in_c = t == 10 ? 32 : 128;
			p.out_c = t == 10 ? 40 : 16;
		}
		p.bf16 = t % 4 == 3;
		CHECK(npu_conv2d_f32_valid(&p, NPU_CONV_FORWARD));
		npu_conv2d_f32_sizes(&p, &nx, &nw, &ny);
		wb = nw * (p.bf16 ? 2 : 4);
		x = rand_floats(nx);
		for (int i = 0; i < 2; i++) {
			w[i] = rand_floats(nw);
			wraw[i] = p.bf16 ? to_bf16(w[i], nw) : w[i];
		}
		setup_cfg(&cfg);
		wc = &h.core->wcache;
		if (p.bf16) {
			void *bx = to_bf16(x, nx);

			put(1, bx, nx * 2);
			free(bx);
		} else {
			put(1, x, nx * 4);
		}
		put(2, wraw[0], wb);
		put(3, NULL, ny * 4);
		put(4, NULL, ny * 4);
		CHECK_EQ(npu_pack_conv2d_f32(&plain, &p, NPU_CONV_FORWARD, VA(1), VA(2), VA(3)), 0);
		plain.hdr.size = sizeof(plain);
		kept = plain;
		kept.y = VA(4);
		kept.flags |= NPU_CONVF_CONST_W;
		kept.wgen = 7;
		hits = wc->hits;
		misses = wc->misses;
		first = malloc(ny * 4);
		check_kept(&plain, &kept, sizeof(kept), &kept.wgen, ny * 4, wraw[1], wb, first);
		CHECK_EQ(wc->bytes,	/* the new generation in the old one's place */
			 4ull * ((p.out_c + 15) / 16 * 16) * (nw / p.out_c) + NPU_WC_ENTRY_COST);
		/* An invalidation of the context lets the kept copy go. */
		memcpy(at(2), wraw[0], wb);
		h_wr(&h, NPU_REG_MMU_INVALIDATE, 0);
		CHECK_EQ(run_kept(&kept, sizeof(kept)), NPU_JOB_OK);
		CHECK(!memcmp(at(4), first, ny * 4));
		CHECK_EQ(wc->misses, misses + 3);
		CHECK_EQ(wc->hits, hits + 2);
		free(first);
		free(x);
		for (int i = 0; i < 2; i++) {
			if (p.bf16)
				free(wraw[i]);
			free(w[i]);
		}
	}
}

static void test_conv2d_f32_const_weights(void)
{
	on_every_isa("fp32 convolution's constant weights", conv2d_f32_const_cases);
}

/*
 * GEMM_F32's constant B (NPU_GEMMF_CONST_B) as the convolution's weights
 * above: random shapes, each transpose, bf16, a B with gaps between its
 * rows (ldb past the row), threads by columns and by rows; bit for bit the
 * plain command's, packed then kept, and what keeping means.
 */
static void gemm_f32_const_cases(const char *isa)
{
	struct npu_core_config cfg;

	(void)isa;
	npu_core_default_config(&cfg);
	for (int t = 0; t < 12; t++) {
		struct npu_gemm_f32 p = { 1 + rnd() % 40, 1 + rnd() % 40, 1 + rnd() % 300,
					  (int)(rnd() & 1), t % 2, t % 4 == 3, 1.0f, 0.0f };
		struct npu_cmd_gemm_f32 plain, kept;
		uint32_t b_rows, b_cols, esz = p.bf16 ? 2 : 4;
		size_t na, nb, nc;
		void *a, *b[2];
		uint8_t *first;

		if (t >= 10) {	/* threads: by columns, then by rows (one panel) */
			p.m = 300, p.n = t == 10 ? 200 : 16, p.k = 600;
		}
		na = (size_t)p.m * p.k;
		b_rows = p.trans_b ? p.n : p.k;
		b_cols = p.trans_b ? p.k : p.n;
		nc = (size_t)p.m * p.n;
		CHECK_EQ(npu_pack_gemm_f32(&plain, &p, VA(1), VA(2), VA(3)), 0);
		if (t % 3 == 2)	/* gaps between B's rows */
			plain.ldb = b_cols + 5;
		nb = (size_t)(b_rows - 1) * plain.ldb + b_cols;
		{
			float *fa = rand_floats(na), *fb[2] = { rand_floats(nb), rand_floats(nb) };

			a = p.bf16 ? to_bf16(fa, na) : fa;
			for (int i = 0; i < 2; i++) {
				b[i] = p.bf16 ? to_bf16(fb[i], nb) : fb[i];
				if (p.bf16)
					free(fb[i]);
			}
			if (p.bf16)
				free(fa);
		}
		setup_cfg(&cfg);
		put(1, a, na * esz);
		put(2, b[0], nb * esz);
		put(3, NULL, nc * 4);
		put(4, NULL, nc * 4);
		kept = plain;
		kept.c = VA(4);
		kept.flags |= NPU_GEMMF_CONST_B;
		kept.wgen = 3;
		first = malloc(nc * 4);
		check_kept(&plain, &kept, sizeof(kept), &kept.wgen, nc * 4, b[1], nb * esz, first);
		free(first);
		free(a);
		free(b[0]);
		free(b[1]);
	}
}

static void test_gemm_f32_const_b(void)
{
	on_every_isa("fp32 GEMM's constant B", gemm_f32_const_cases);
}

/*
 * The cache's room (weight_cache_mib): none kept with 0 (new values under
 * the same generation are read); with 1 MiB, two layers of 600 KiB each
 * take turns, the least recently used let go, the bytes kept never above
 * the room; weights larger than the room are read as usual.
 */
static void test_const_weights_room(void)
{
	struct npu_conv2d_f32 p = { 1, 8, 8, 64, 8, 8, 2400, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1 };
	struct npu_core_config cfg;
	struct npu_cmd_conv2d_f32 c[2];
	uint64_t nx, nw, ny;
	float *x, *w;

	npu_conv2d_f32_sizes(&p, &nx, &nw, &ny);	/* 64 x 2400 x 4: 600 KiB */
	x = rand_floats(nx);
	w = rand_floats(2 * nw);
	npu_core_default_config(&cfg);
	for (int room = 0; room <= 1; room++) {
		const struct npu_wcache *wc;

		cfg.weight_cache_mib = (uint32_t)room;
		setup_cfg(&cfg);
		wc = &h.core->wcache;
		put(1, x, nx * 4);
		put(2, w, nw * 4);
		put(3, w + nw, nw * 4);
		put(4, NULL, ny * 4);
		for (int i = 0; i < 2; i++) {
			CHECK_EQ(npu_pack_conv2d_f32(&c[i], &p, NPU_CONV_FORWARD, VA(1), VA(2 + i),
						     VA(4)), 0);
			c[i].hdr.size = sizeof(c[i]);
			c[i].flags |= NPU_CONVF_CONST_W;
		}
		/* A, B, A: each packed, B's arrival letting A go. */
		for (int i = 0; i < 3; i++) {
			CHECK_EQ(run_kept(&c[i % 2], sizeof(c[0])), NPU_JOB_OK);
			CHECK(wc->bytes <= (uint64_t)room << 20);
		}
		CHECK_EQ(wc->hits, 0);
		CHECK_EQ(wc->misses, room ? 3u : 0u);
		CHECK_EQ(wc->bytes, room ? 4ull * 64 * 2400 + NPU_WC_ENTRY_COST : 0u);
		/* Kept or not, as promised: a rewrite under the same generation. */
		memcpy(at(2), w + nw, nw * 4);
		CHECK_EQ(run_kept(&c[0], sizeof(c[0])), NPU_JOB_OK);
		{
			float *y = malloc(ny * 4);

			memcpy(y, at(4), ny * 4);
			CHECK_EQ(run_kept(&c[1], sizeof(c[0])), NPU_JOB_OK);
			/* no room: both read w + nw now; 1 MiB: A's copy holds the old */
			CHECK_EQ(!memcmp(y, at(4), ny * 4), !room);
			free(y);
		}
	}
	free(x);
	free(w);
}

/* A hand-worked 1x1 case: y = relu(x * w + bias), each value known. */
static void test_conv2d_f32_epilogue_by_hand(void)
{
	struct npu_conv2d_f32 p = { 1, 1, 4, 1, 1, 4, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1 };
	const float x[4] = { 1.0f, -2.0f, 0.5f, 3.0f }, w[2] = { 2.0f, -1.0f };
	const float bias[2] = { 1.0f, 0.25f };
	/* x * w + b: 3 -0.75 | -3 2.25 | 2 -0.25 | 7 -2.75; then the ReLU */
	const float want[8] = { 3.0f, 0.0f, 0.0f, 2.25f, 2.0f, 0.0f, 7.0f, 0.0f };
	struct npu_cmd_conv2d_f32 c;

	setup();
	put(1, x, sizeof(x));
	put(2, w, sizeof(w));
	put(3, NULL, sizeof(want));
	put(4, bias, sizeof(bias));
	CHECK_EQ(npu_pack_conv2d_f32(&c, &p, NPU_CONV_FORWARD, VA(1), VA(2), VA(3)), 0);
	c.flags |= NPU_CONVF_BIAS | NPU_CONVF_RELU;
	c.bias = VA(4);
	CHECK_EQ(run(&c, c.hdr.size), NPU_JOB_OK);
	CHECK(!memcmp(at(3), want, sizeof(want)));
}

static double dot(const float *a, const float *b, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

/*
 * The gradients are the adjoints of the forward pass, whatever the
 * reference says: <conv(x, w), dy> = <x, dL/dx(dy, w)> = <w, dL/dw(x, dy)>,
 * all three computed by the device, compared in double.
 */
static void test_conv2d_f32_gradients_are_adjoints(void)
{
	for (int t = 0; t < 12; t++) {
		struct npu_conv2d_f32 p = random_conv();
		struct npu_cmd_conv2d_f32 c[3];
		uint64_t nx, nw, ny;
		float *x, *w, *dy;
		double fwd, bd, bf, scale;

		npu_conv2d_f32_sizes(&p, &nx, &nw, &ny);
		x = rand_floats(nx);
		w = rand_floats(nw);
		dy = rand_floats(ny);
		setup();
		put(1, x, nx * 4);	/* x */
		put(2, w, nw * 4);	/* w */
		put(3, NULL, ny * 4);	/* y */
		put(4, dy, ny * 4);	/* dy */
		put(5, NULL, nx * 4);	/* dx */
		put(6, NULL, nw * 4);	/* dw */
		CHECK_EQ(npu_pack_conv2d_f32(&c[0], &p, NPU_CONV_FORWARD, VA(1), VA(2), VA(3)), 0);
		CHECK_EQ(npu_pack_conv2d_f32(&c[1], &p, NPU_CONV_BACKWARD_DATA, VA(5), VA(2), VA(4)),
			 0);
		CHECK_EQ(npu_pack_conv2d_f32(&c[2], &p, NPU_CONV_BACKWARD_FILTER, VA(1), VA(6),
					     VA(4)), 0);
		for (int i = 0; i < 3; i++)
			c[i].hdr.size = sizeof(c[i]);
		CHECK_EQ(run(c, sizeof(c)), NPU_JOB_OK);
		fwd = dot(at(3), dy, ny);
		bd = dot(x, at(5), nx);
		bf = dot(w, at(6), nw);
		scale = 1e-5 * (1 + sqrt((double)ny * p.k_h * p.k_w * p.in_c));
		CHECK(fabs(fwd - bd) <= scale && fabs(fwd - bf) <= scale);
		free(x);
		free(w);
		free(dy);
	}
}

/*
 * Pooling, all four modes, bit for bit; values on a grid, so maxima tie;
 * the gradients are the forward pass's adjoints.
 */
static void test_pool_f32_random(void)
{
	for (int t = 0; t < 40; t++) {
		struct npu_pool_f32 p = { 0 };
		struct npu_cmd_pool_f32 c;
		uint64_t nx, ny;
		float *x, *y, *want;
		bool bwd;

		p.batch = 1 + rnd() % 2;
		p.c = 1 + rnd() % 4;
		p.k_h = 1 + rnd() % 3;
		p.k_w = 1 + rnd() % 3;
		p.stride_h = 1 + rnd() % 3;
		p.stride_w = 1 + rnd() % 3;
		p.in_h = p.k_h + rnd() % 6;
		p.in_w = p.k_w + rnd() % 6;
		p.out_h = (p.in_h - p.k_h) / p.stride_h + 1;
		p.out_w = (p.in_w - p.k_w) / p.stride_w + 1;
		p.mode = (enum npu_pool_f32_mode)(1 + t % 4);
		bwd = p.mode >= NPU_FPOOL_MAX_BACKWARD;
		npu_pool_f32_sizes(&p, &nx, &ny);
		x = rand_floats(nx);
		for (uint64_t i = 0; t % 2 && i < nx; i++)
			x[i] = (float)(rnd() % 4);	/* ties */
		y = rand_floats(ny);
		want = malloc(sizeof(float) * (bwd ? nx : ny));
		CHECK_EQ(npu_ref_pool_f32(&p, x, bwd ? y : want, bwd ? want : NULL), NPU_OK);
		setup();
		put(1, x, nx * 4);
		put(2, bwd ? y : NULL, ny * 4);
		if (bwd)
			put(3, NULL, nx * 4);
		CHECK_EQ(npu_pack_pool_f32(&c, &p, VA(1), VA(2), bwd ? VA(3) : 0), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(!memcmp(at(bwd ? 3 : 2), want, sizeof(float) * (bwd ? nx : ny)));
		if (bwd) {	/* the adjoint: <dy, pool(x)> = <dx, x> */
			struct npu_pool_f32 f = p;
			float *yf = malloc(sizeof(float) * ny);

			f.mode = p.mode == NPU_FPOOL_MAX_BACKWARD ? NPU_FPOOL_MAX : NPU_FPOOL_AVG;
			CHECK_EQ(npu_ref_pool_f32(&f, x, yf, NULL), NPU_OK);
			CHECK(fabs(dot(y, yf, ny) - dot(at(3), x, nx)) <= 1e-5 * (1.0 + nx));
			free(yf);
		}
		free(x);
		free(y);
		free(want);
	}
}

/* Every elementwise op, bit for bit, with NaN, infinities and signed zeros. */
static void eltwise_f32_cases(const char *isa)
{
	static const float special[] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -3.5f,
					 3.4e38f };
	(void)isa;
	/* 60: a vector tail; 70000: many stop-check pieces, BIAS rows across them */
	for (uint32_t n = 60; n <= 70000; n += 69940)
	for (int op = NPU_EF_ADD; op <= NPU_EF_FROM_BF16; op++) {
		struct npu_eltwise_f32 p = { n, (enum npu_eltwise_f32_op)op, 0, 0.0f };
		struct npu_cmd_eltwise_f32 c;
		size_t in_sz, out_sz;
		float *a = rand_floats(n), *b = rand_floats(n);
		uint8_t *want = malloc((size_t)n * 4);

		for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
			a[i] = special[i], b[n - 1 - i] = special[i];
		if (op == NPU_EF_AXPY || op == NPU_EF_SCALE)
			p.alpha = -1.75f;
		if (op == NPU_EF_BIAS)
			p.cols = n == 60 ? 12 : 70;
		if (op == NPU_EF_FROM_BF16)	/* a is n bf16 values */
			for (uint32_t i = 0; i < n / 2; i++)
				((uint32_t *)a)[i] = rnd();
		in_sz = op == NPU_EF_FROM_BF16 ? 2 * n : 4 * n;
		out_sz = op == NPU_EF_TO_BF16 ? 2 * n : 4 * n;
		CHECK_EQ(npu_ref_eltwise_f32(&p, a, b, want), NPU_OK);
		setup();
		put(1, a, in_sz);
		put(2, b, op == NPU_EF_BIAS ? 4 * p.cols : 4 * n);
		put(3, NULL, out_sz);
		CHECK_EQ(npu_pack_eltwise_f32(&c, &p, VA(1),
					      op <= NPU_EF_AXPY || op == NPU_EF_RELU_BACKWARD ||
					      op == NPU_EF_BIAS ? VA(2) : 0, VA(3)), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(!memcmp(at(3), want, out_sz));
		free(a);
		free(b);
		free(want);
	}
}

static void test_eltwise_f32_all_ops(void)
{
	on_every_isa("fp32 element-wise", eltwise_f32_cases);
}

/*
 * bf16 rounding worked by hand: 1 + 2^-8 is a tie between 1 and 1 + 2^-7
 * and goes to the even 1; 1 + 3 * 2^-8 goes up to 1 + 2^-6; the largest
 * float rounds to infinity; a NaN stays a NaN (quiet); -0 stays -0.
 */
static void test_bf16_rounding(void)
{
	CHECK_EQ(npu_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
	CHECK_EQ(npu_f32_to_bf16(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82);
	CHECK_EQ(npu_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
	CHECK_EQ(npu_f32_to_bf16(3.4028235e38f), 0x7f80);
	CHECK_EQ(npu_f32_to_bf16(-0.0f), 0x8000);
	CHECK((npu_f32_to_bf16(NAN) & 0x7fc0) == 0x7fc0);
	CHECK_EQ(npu_f32_to_bf16(npu_bf16_to_f32(0x4049)), 0x4049);	/* 3.140625 round trip */
}

/* Both reductions, accumulating or not, bit for bit. */
static void test_reduce_f32(void)
{
	for (int t = 0; t < 8; t++) {
		struct npu_reduce_f32 p = { 1 + rnd() % 70, 1 + rnd() % 50, t & 1, (t >> 1) & 1 };
		struct npu_cmd_reduce_f32 c;
		uint32_t n_out = p.over_cols ? p.rows : p.cols;
		float *in = rand_floats((size_t)p.rows * p.cols), *out0 = rand_floats(n_out);
		float *want = malloc(sizeof(float) * n_out);

		memcpy(want, out0, sizeof(float) * n_out);
		CHECK_EQ(npu_ref_reduce_f32(&p, in, want), NPU_OK);
		setup();
		put(1, in, (size_t)p.rows * p.cols * 4);
		put(2, out0, n_out * 4);
		CHECK_EQ(npu_pack_reduce_f32(&c, &p, VA(1), VA(2)), 0);
		CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
		CHECK(!memcmp(at(2), want, sizeof(float) * n_out));
		free(in);
		free(out0);
		free(want);
	}
}

/*
 * Softmax cross-entropy: bit for bit with the reference, and by hand for
 * two equal logits (loss log 2, gradients +-1/2); a label out of range
 * fails the job.
 */
static void test_xent_f32(void)
{
	struct npu_xent_f32 p = { 37, 10, 1.0f / 37 };
	struct npu_cmd_xent_f32 c;
	float *z = rand_floats(370), loss[37], dz[370];
	int32_t labels[37];

	for (int i = 0; i < 37; i++)
		labels[i] = (int32_t)(rnd() % 10);
	z[0] = z[1] = 2.5f;
	for (int i = 2; i < 10; i++)
		z[i] = -INFINITY;	/* exp gives exactly 0 */
	labels[0] = 1;
	CHECK_EQ(npu_ref_xent_f32(&p, z, labels, loss, dz), NPU_OK);
	CHECK(fabsf(loss[0] - logf(2.0f)) < 1e-6f);
	CHECK(dz[0] == 0.5f / 37 && dz[1] == -0.5f / 37 && dz[2] == 0.0f);
	setup();
	put(1, z, sizeof(float) * 370);
	put(2, labels, sizeof(labels));
	put(3, NULL, sizeof(loss));
	put(4, NULL, sizeof(dz));
	CHECK_EQ(npu_pack_xent_f32(&c, &p, VA(1), VA(2), VA(3), VA(4)), 0);
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
	CHECK(!memcmp(at(3), loss, sizeof(loss)));
	CHECK(!memcmp(at(4), dz, sizeof(dz)));
	((int32_t *)at(2))[5] = 10;
	CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_INVALID_CMD);
	labels[5] = -1;
	CHECK_EQ(npu_ref_xent_f32(&p, z, labels, loss, dz), NPU_EINVAL);
	free(z);
}

/* SGD (with and without momentum, weight decay), Adam and AdamW over
 * several steps, bit for bit; and one Adam step worked by hand. */
static void test_optim_f32(void)
{
	static const struct npu_optim_f32 cases[] = {
		{ 300, NPU_OPTIM_SGD, 0.1f, 0.0f, 0.0f, 0.0f, 0.0f, 0 },
		{ 300, NPU_OPTIM_SGD, 0.05f, 0.9f, 0.0f, 0.0f, 1e-4f, 0 },
		{ 300, NPU_OPTIM_ADAM, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 1 },
		{ 300, NPU_OPTIM_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 1 },
	};
	struct npu_optim_f32 one = { 1, NPU_OPTIM_ADAM, 0.1f, 0.9f, 0.999f, 1e-8f, 0.0f, 1 };
	float w1 = 1.0f, g1 = 0.5f, m1 = 0.0f, v1 = 0.0f;

	/* Step 1: m = 0.05, v = 0.00025; m/c1 = 0.5, v/c2 = 0.25; w = 1 - 0.1 * 0.5 / 0.5. */
	CHECK_EQ(npu_ref_optim_f32(&one, &w1, &g1, &m1, &v1), NPU_OK);
	CHECK(fabsf(w1 - 0.9f) < 1e-6f);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct npu_optim_f32 p = cases[k];
		float *w = rand_floats(300), *g = rand_floats(300), *m = rand_floats(300);
		float *v = rand_floats(300);

		for (int i = 0; i < 300; i++)
			v[i] = fabsf(v[i]);
		setup();
		put(1, w, 1200);
		put(2, g, 1200);
		put(3, m, 1200);
		put(4, v, 1200);
		for (int step = 0; step < 3; step++) {
			struct npu_cmd_optim_f32 c;
			int adam = p.algo != NPU_OPTIM_SGD;

			CHECK_EQ(npu_ref_optim_f32(&p, w, g, m, v), NPU_OK);
			CHECK_EQ(npu_pack_optim_f32(&c, &p, VA(1), VA(2),
						    adam || p.beta1 != 0.0f ? VA(3) : 0,
						    adam ? VA(4) : 0), 0);
			CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
			CHECK(!memcmp(at(1), w, 1200));
			CHECK(!adam && p.beta1 == 0.0f ? 1 : !memcmp(at(3), m, 1200));
			CHECK(!adam || !memcmp(at(4), v, 1200));
			if (adam)
				p.step++;
		}
		free(w);
		free(g);
		free(m);
		free(v);
	}
}

/*
 * The optimizers in fp64, written from their published definitions (SGD
 * with momentum and L2 weight decay as PyTorch's SGD, Adam, AdamW with
 * decoupled decay), sharing nothing with npu_train_math.h. State starts
 * at zero, as in training.
 */
static void optim_fp64(int algo, double lr, double b1, double b2, double eps, double wd,
		       int t, double *w, double g, double *m, double *v)
{
	if (algo == NPU_OPTIM_SGD) {
		g += wd * *w;
		if (b1 != 0) {
			*m = b1 * *m + g;
			g = *m;
		}
		*w -= lr * g;
		return;
	}
	if (algo == NPU_OPTIM_ADAMW)
		*w -= lr * wd * *w;
	else
		g += wd * *w;
	*m = b1 * *m + (1 - b1) * g;
	*v = b2 * *v + (1 - b2) * g * g;
	*w -= lr * (*m / (1 - pow(b1, t))) / (sqrt(*v / (1 - pow(b2, t))) + eps);
}

/*
 * Six steps with a new gradient each, on the engine and the reference,
 * against fp64: SGD with momentum and weight decay, Adam with L2 decay,
 * AdamW. The fp64 oracle itself is pinned by two steps worked by hand.
 */
static void test_optim_against_fp64(void)
{
	static const struct npu_optim_f32 cases[] = {
		{ 64, NPU_OPTIM_SGD, 0.1f, 0.9f, 0.0f, 0.0f, 0.01f, 0 },	/* no step count */
		{ 64, NPU_OPTIM_ADAM, 0.01f, 0.8f, 0.99f, 1e-8f, 0.05f, 1 },
		{ 64, NPU_OPTIM_ADAMW, 0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, 1 },
	};
	double w = 1, m = 0, v = 0;

	/* SGD, lr 0.1, momentum 0.9, decay 0.01, g = 0.5 twice:
	 * 0.51 -> w 0.949; m = 0.9 * 0.51 + 0.50949 = 0.96849 -> w 0.852151. */
	for (int t = 1; t <= 2; t++)
		optim_fp64(NPU_OPTIM_SGD, 0.1, 0.9, 0, 0, 0.01, t, &w, 0.5, &m, &v);
	CHECK(fabs(w - 0.852151) < 1e-12);
	/* Adam, lr 0.1, betas 0.9 and 0.999, g = 0.5 then -0.25: m 0.02, v
	 * 0.00031225; 0.1 * (0.02 / 0.19) / sqrt(0.00031225 / 0.001999) = 0.026634. */
	w = 1, m = 0, v = 0;
	optim_fp64(NPU_OPTIM_ADAM, 0.1, 0.9, 0.999, 1e-8, 0, 1, &w, 0.5, &m, &v);
	optim_fp64(NPU_OPTIM_ADAM, 0.1, 0.9, 0.999, 1e-8, 0, 2, &w, -0.25, &m, &v);
	CHECK(fabs(w - 0.8733663) < 1e-7);

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct npu_optim_f32 p = cases[k];
		float wf[64], mf[64] = { 0 }, vf[64] = { 0 }, g[64];
		double wd[64], md[64] = { 0 }, vd[64] = { 0 }, worst = 0;
		struct npu_cmd_optim_f32 c;

		for (int i = 0; i < 64; i++)
			wd[i] = wf[i] = rndf();
		setup();
		put(1, wf, sizeof(wf));
		put(2, NULL, sizeof(g));
		put(3, mf, sizeof(mf));
		put(4, vf, sizeof(vf));
		for (int t = 1; t <= 6; t++, p.step += p.algo != NPU_OPTIM_SGD) {
			for (int i = 0; i < 64; i++)
				g[i] = rndf();
			memcpy(at(2), g, sizeof(g));
			CHECK_EQ(npu_pack_optim_f32(&c, &p, VA(1), VA(2), VA(3),
						    p.algo != NPU_OPTIM_SGD ? VA(4) : 0), 0);
			CHECK_EQ(run(&c, sizeof(c)), NPU_JOB_OK);
			CHECK_EQ(npu_ref_optim_f32(&p, wf, g, mf, vf), NPU_OK);
			for (int i = 0; i < 64; i++) {
				double e1, e2;

				optim_fp64(p.algo, p.lr, p.beta1, p.beta2, p.eps, p.wd, t, &wd[i],
					   g[i], &md[i], &vd[i]);
				e1 = fabs(((float *)at(1))[i] - wd[i]);
				e2 = fabs(wf[i] - wd[i]);
				worst = e1 > worst ? e1 : worst;
				worst = e2 > worst ? e2 : worst;
			}
		}
		printf("#   %s: worst difference from fp64 after 6 steps %.2g\n",
		       p.algo == NPU_OPTIM_SGD ? "sgd" : p.algo == NPU_OPTIM_ADAM ? "adam" : "adamw",
		       worst);
		CHECK(worst < 4e-6);
	}
}

/* Malformed commands end the job with an error; nothing crashes. */
static void test_malformed(void)
{
	struct npu_gemm_f32 gp = { 4, 4, 4, 0, 0, 0, 1.0f, 0.0f };
	struct npu_cmd_gemm_f32 g;
	struct npu_cmd_optim_f32 o;
	struct npu_optim_f32 op = { 16, NPU_OPTIM_ADAM, 1e-3f, 0.9f, 0.999f, 1e-8f, 0, 1 };
	struct npu_conv2d_f32 cp = { 1, 5, 5, 2, 3, 3, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 1 };
	struct npu_cmd_conv2d_f32 cv;

	setup();
	put(1, NULL, 4096);
	put(2, NULL, 4096);
	put(3, NULL, 4096);
	put(4, NULL, 4096);
	CHECK_EQ(npu_pack_gemm_f32(&g, &gp, VA(1), VA(2), VA(3)), 0);
	CHECK_EQ(run(&g, sizeof(g)), NPU_JOB_OK);
	for (int i = 0; i < 9; i++) {
		struct npu_cmd_gemm_f32 b = g;
		uint32_t want = NPU_JOB_INVALID_CMD;

		switch (i) {
		case 0: b.m = 0; break;
		case 1: b.k = 70000; break;
		case 2: b.lda = 3; break;
		case 3: b.flags = 16; break;
		case 4: b.alpha = 0x7f800000; break;	/* infinity */
		case 5: b.wgen = 1; break;	/* a generation, no promise */
		case 6: b.a = VA(9); want = NPU_JOB_MMU_FAULT; break;	/* unmapped */
		case 7: b.c = VA(3) + 2; break;	/* misaligned */
		default: b.m = b.n = b.k = 65536; break;	/* too much work */
		}
		CHECK_EQ(run(&b, sizeof(b)), want);
	}
	CHECK_EQ(npu_pack_optim_f32(&o, &op, VA(1), VA(2), VA(3), VA(4)), 0);
	CHECK_EQ(run(&o, sizeof(o)), NPU_JOB_OK);
	o.step = 0;
	CHECK_EQ(run(&o, sizeof(o)), NPU_JOB_INVALID_CMD);
	o.step = 1;
	o.beta1 = npu_f32_bits(1.0f);
	CHECK_EQ(run(&o, sizeof(o)), NPU_JOB_INVALID_CMD);
	CHECK_EQ(npu_pack_conv2d_f32(&cv, &cp, NPU_CONV_FORWARD, VA(1), VA(2), VA(3)), 0);
	cv.hdr.size = sizeof(cv);
	CHECK_EQ(run(&cv, sizeof(cv)), NPU_JOB_OK);
	cv.out_h = 4;	/* not the size the padding gives */
	CHECK_EQ(run(&cv, sizeof(cv)), NPU_JOB_INVALID_CMD);
	cv.out_h = 3;
	cv.mode = 4;
	CHECK_EQ(run(&cv, sizeof(cv)), NPU_JOB_INVALID_CMD);
	cv.mode = NPU_CONVF_FWD;
	/* The epilogue: the forward mode's, a bias exactly with its flag. */
	for (int i = 0; i < 20; i++) {
		struct npu_cmd_conv2d_f32 b = cv;
		uint32_t want = NPU_JOB_INVALID_CMD, size = sizeof(b);

		switch (i) {
		case 0: b.flags |= NPU_CONVF_BIAS; break;		/* no bias */
		case 1: b.bias = VA(4); break;			/* a bias, no flag */
		case 2: b.flags |= NPU_CONVF_BIAS; b.bias = VA(4) + 2; break;	/* misaligned */
		case 3: b.flags |= NPU_CONVF_RELU; b.mode = NPU_CONVF_BWD_DATA; break;
		case 4: b.flags |= 1u << 5; break;		/* unknown */
		case 6: b.wgen = 3; break;			/* a generation, no promise */
		case 7: b.flags |= NPU_CONVF_CONST_W; b.mode = NPU_CONVF_BWD_FILTER; break;
		case 8: b.flags |= NPU_CONVF_CONST_W; b.wgen = ~0u; want = NPU_JOB_OK; break;
		case 5: b.flags |= NPU_CONVF_RELU; size = NPU_CONVF_SIZE_V1; want = NPU_JOB_OK;
			break;					/* the first form */
		case 10: size = NPU_CONVF_SIZE_V2; want = NPU_JOB_OK; break;	/* the second */
		case 11: b.flags |= NPU_CONVF_CLAMP; size = NPU_CONVF_SIZE_V2; break;
		case 12: b.groups = 2; want = NPU_JOB_OK; break;	/* 2 of 2 channels */
		case 13: b.groups = 3; break;			/* not dividing in_c */
		case 14: b.flags |= NPU_CONVF_CLAMP; want = NPU_JOB_OK;
			b.clamp_lo = npu_f32_bits(0.0f); b.clamp_hi = npu_f32_bits(6.0f); break;
		case 15: b.flags |= NPU_CONVF_CLAMP;		/* lo > hi */
			b.clamp_lo = npu_f32_bits(1.0f); b.clamp_hi = npu_f32_bits(0.5f); break;
		case 16: b.flags |= NPU_CONVF_CLAMP; b.clamp_hi = npu_f32_bits(NAN); break;
		case 17: b.clamp_hi = npu_f32_bits(6.0f); break;	/* a bound, no flag */
		case 18: b.reserved = 1; break;
		case 19: b.flags |= NPU_CONVF_CLAMP; b.mode = NPU_CONVF_BWD_DATA; break;
		default: size = NPU_CONVF_SIZE_V1 + 8 * 2; break;
		}
		b.hdr.size = size;
		{
			uint8_t cmd[sizeof(b) + 16] = { 0 };

			memcpy(cmd, &b, size < sizeof(b) ? size : sizeof(b));
			CHECK_EQ(run(cmd, size), want);
		}
	}
	cp.out_h = 4;
	CHECK_EQ(npu_pack_conv2d_f32(&cv, &cp, NPU_CONV_FORWARD, VA(1), VA(2), VA(3)), NPU_EINVAL);
}

TAP_MAIN(
	TAP_ENTRY(test_gemm_f32_random),
	TAP_ENTRY(test_gemm_bf16_within_its_bound),
	TAP_ENTRY(test_gemm_bf16_kernel),
	TAP_ENTRY(test_conv2d_f32_random),
	TAP_ENTRY(test_conv2d_f32_gradients_are_adjoints),
	TAP_ENTRY(test_conv2d_f32_epilogue),
	TAP_ENTRY(test_conv2d_f32_epilogue_by_hand),
	TAP_ENTRY(test_conv2d_f32_const_weights),
	TAP_ENTRY(test_gemm_f32_const_b),
	TAP_ENTRY(test_const_weights_room),
	TAP_ENTRY(test_pool_f32_random),
	TAP_ENTRY(test_eltwise_f32_all_ops),
	TAP_ENTRY(test_bf16_rounding),
	TAP_ENTRY(test_reduce_f32),
	TAP_ENTRY(test_xent_f32),
	TAP_ENTRY(test_optim_f32),
	TAP_ENTRY(test_optim_against_fp64),
	TAP_ENTRY(test_malformed),
)
