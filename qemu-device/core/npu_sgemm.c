// SPDX-License-Identifier: MIT
/*
 * npu_sgemm.c - the tensor engine's fp32 GEMM: C = alpha * op(A) * op(B) +
 * beta * C with fp32 accumulation, for the training commands.
 *
 * The int8 kernel's blocking (npu_gemm.c): B packed once per call into
 * panels of NR columns, A per block of MC rows and KC depth; transposes and
 * bf16 inputs are taken care of while packing, so one micro-kernel serves
 * every case. A 6 x 16 AVX2/FMA kernel keeps its tile in 12 registers;
 * portable C runs the same layout where the host lacks them, chosen at run
 * time. Threads split the columns, or the rows when columns run short.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_interleave.h"
#include "npu_sgemm.h"
#include "npu_pool.h"
#include "npu_split.h"
#include "npu_train_math.h"

#define MR 6
#define NR 16
#define KC 256
#define MC 72
/* A stop check every this many panels of a block: 1.2M MACs, ~1 ms in C. */
#define STOP_PANELS 4
#define MAX_THREADS 16
#define THREAD_MIN_FLOPS (1u << 21)

/*
 * Layouts: a block [MC / MR][kc][MR]; b panel [k][NR]. @c gets the tile
 * (accumulate: added to what it holds), rows @ldc apart.
 */
typedef void (*skern_fn)(uint32_t kc, const float *ap, const float *bp, float *c, size_t ldc,
			 int accumulate);

static void skern_c(uint32_t kc, const float *ap, const float *bp, float *c, size_t ldc,
		    int accumulate)
{
	float acc[MR][NR] = { { 0 } };

	for (uint32_t p = 0; p < kc; p++, ap += MR, bp += NR)
		for (int i = 0; i < MR; i++)
			for (int j = 0; j < NR; j++)
				acc[i][j] += ap[i] * bp[j];
	for (int i = 0; i < MR; i++)
		for (int j = 0; j < NR; j++)
			c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2,fma")))
static void skern_avx2(uint32_t kc, const float *ap, const float *bp, float *c, size_t ldc,
		       int accumulate)
{
	__m256 acc[MR][2];

#pragma GCC unroll 6
	for (int i = 0; i < MR; i++)
		acc[i][0] = acc[i][1] = _mm256_setzero_ps();
	for (uint32_t p = 0; p < kc; p++, ap += MR, bp += NR) {
		__m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);

#pragma GCC unroll 6
		for (int i = 0; i < MR; i++) {
			__m256 a = _mm256_broadcast_ss(ap + i);

			acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
			acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < MR; i++) {
		float *row = c + i * ldc;

		if (accumulate) {
			acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(row));
			acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(row + 8));
		}
		_mm256_storeu_ps(row, acc[i][0]);
		_mm256_storeu_ps(row + 8, acc[i][1]);
	}
}

/*
 * Two MR-row blocks of A (@ap and the next, @kc * MR further) against one
 * panel: 12 x 16, a zmm per row, twelve FMAs for each load of B.
 */
__attribute__((target("avx512f")))
static void skern2_avx512(uint32_t kc, const float *ap, const float *bp, float *c, size_t ldc,
			  int accumulate)
{
	const float *ap1 = ap + (size_t)kc * MR;
	__m512 acc[2 * MR];

#pragma GCC unroll 12
	for (int i = 0; i < 2 * MR; i++)
		acc[i] = _mm512_setzero_ps();
	for (uint32_t p = 0; p < kc; p++, ap += MR, ap1 += MR, bp += NR) {
		__m512 b = _mm512_loadu_ps(bp);

#pragma GCC unroll 6
		for (int i = 0; i < MR; i++) {
			acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ap[i]), b, acc[i]);
			acc[MR + i] = _mm512_fmadd_ps(_mm512_set1_ps(ap1[i]), b, acc[MR + i]);
		}
	}
#pragma GCC unroll 12
	for (int i = 0; i < 2 * MR; i++) {
		float *row = c + i * ldc;

		if (accumulate)
			acc[i] = _mm512_add_ps(acc[i], _mm512_loadu_ps(row));
		_mm512_storeu_ps(row, acc[i]);
	}
}

/* One block: the pair kernel's first half, as a 6 x 16 zmm tile. */
__attribute__((target("avx512f")))
static void skern_avx512(uint32_t kc, const float *ap, const float *bp, float *c, size_t ldc,
			 int accumulate)
{
	__m512 acc[MR];

#pragma GCC unroll 6
	for (int i = 0; i < MR; i++)
		acc[i] = _mm512_setzero_ps();
	for (uint32_t p = 0; p < kc; p++, ap += MR, bp += NR) {
		__m512 b = _mm512_loadu_ps(bp);

#pragma GCC unroll 6
		for (int i = 0; i < MR; i++)
			acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ap[i]), b, acc[i]);
	}
#pragma GCC unroll 6
	for (int i = 0; i < MR; i++) {
		float *row = c + i * ldc;

		if (accumulate)
			acc[i] = _mm512_add_ps(acc[i], _mm512_loadu_ps(row));
		_mm512_storeu_ps(row, acc[i]);
	}
}

/*
 * The epilogue of @w sums of a row: plus @bias (if any), then ReLU (if
 * @relu), then the clamp (if @clamp), one IEEE add and compares each, as
 * the element-wise commands do them (npu_train.c, npu_nd.c's clip): the
 * same bits in both paths. max(lo, x) and min(hi, x) in that operand
 * order give x when it is a NaN, as the scalar compares do.
 */
__attribute__((target("avx2")))
static uint32_t epilogue_avx2(float *c, const float *bias, bool relu, const float *clamp,
			      uint32_t w)
{
	const __m256 z = _mm256_setzero_ps();
	__m256 lo = z, hi = z;
	uint32_t n = 0;

	if (clamp) {
		lo = _mm256_set1_ps(clamp[0]);
		hi = _mm256_set1_ps(clamp[1]);
	}
	for (; n + 8 <= w; n += 8) {
		__m256 x = _mm256_loadu_ps(c + n);

		if (bias)
			x = _mm256_add_ps(x, _mm256_loadu_ps(bias + n));
		if (relu)	/* x < 0 ? 0 : x */
			x = _mm256_andnot_ps(_mm256_cmp_ps(x, z, _CMP_LT_OQ), x);
		if (clamp)	/* x < lo ? lo : x > hi ? hi : x */
			x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
		_mm256_storeu_ps(c + n, x);
	}
	return n;
}
#endif

void npu_f32_epilogue(float *c, const float *bias, bool relu, const float *clamp, uint32_t w,
		      bool vec)
{
	uint32_t n = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (vec)
		n = epilogue_avx2(c, bias, relu, clamp, w);
#else
	(void)vec;
#endif
	for (; n < w; n++) {
		float x = bias ? c[n] + bias[n] : c[n];

		x = relu && x < 0.0f ? 0.0f : x;
		if (clamp)
			x = x < clamp[0] ? clamp[0] : x > clamp[1] ? clamp[1] : x;
		c[n] = x;
	}
}

/*
 * The kernels for the engine's ISA (npu_gemm_isa()): AVX-512 where the
 * int8 kernel has it, the portable C one where it runs C, AVX2/FMA
 * otherwise. @pair, where set, does two row blocks at once.
 */
static skern_fn pick_kernel(skern_fn *pair)
{
	const char *isa = npu_gemm_isa();

	*pair = NULL;
	if (!strcmp(isa, "c"))
		return skern_c;
#if defined(__x86_64__) && defined(__GNUC__)
	if (!strcmp(isa, "avx512vnni")) {	/* F, BW and the OS's zmm state */
		*pair = skern2_avx512;
		return skern_avx512;
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return skern_avx2;
#endif
	return skern_c;
}

/* Element (i, p) of op(A) or (p, j) of op(B), as fp32. */
static inline float elem(const void *base, int bf16, size_t idx)
{
	return bf16 ? npu_bf16_to_f32(((const uint16_t *)base)[idx]) : ((const float *)base)[idx];
}

static inline float a_at(const struct npu_sgemm_args *g, uint32_t i, uint32_t p)
{
	return elem(g->a, g->bf16, g->trans_a ? (size_t)p * g->lda + i : (size_t)i * g->lda + p);
}

static inline float b_at(const struct npu_sgemm_args *g, uint32_t p, uint32_t j)
{
	return elem(g->b, g->bf16, g->trans_b ? (size_t)j * g->ldb + p : (size_t)p * g->ldb + j);
}

/* Should the kernel stop (a check between blocks of work)? */
static bool stopped(const struct npu_sgemm_args *g)
{
	return g->stop && g->stop(g->stop_arg);
}

/*
 * Columns [n0, n1) of op(B), all of k, into panels; missing columns are 0.
 * False if told to stop (checked per panel).
 */
static bool pack_b(const struct npu_sgemm_args *g, uint32_t n0, uint32_t n1, float *bp, bool vec)
{
	const float *b = g->b;

	for (uint32_t n = n0; n < n1; n += NR, bp += (size_t)g->k * NR) {
		uint32_t w = n1 - n < NR ? n1 - n : NR;

		if (stopped(g))
			return false;

		if (g->bf16 || w < NR) {	/* the general case, element by element */
			for (uint32_t p = 0; p < g->k; p++)
				for (uint32_t j = 0; j < NR; j++)
					bp[(size_t)p * NR + j] = j < w ? b_at(g, p, n + j) : 0.0f;
		} else if (!g->trans_b) {	/* rows of B: NR contiguous values per depth */
			for (uint32_t p = 0; p < g->k; p++)
				memcpy(bp + (size_t)p * NR, b + (size_t)p * g->ldb + n,
				       sizeof(float) * NR);
		} else {			/* B stored n x k: columns are contiguous */
			npu_interleave32(b + (size_t)n * g->ldb, sizeof(float) * g->ldb, NR, g->k, 0,
					 bp, vec);
		}
	}
	return true;
}

/* Rows [m0, m1) x depth [k0, k1) of op(A); missing rows are 0. */
static void pack_a(const struct npu_sgemm_args *g, uint32_t m0, uint32_t m1, uint32_t k0,
		   uint32_t k1, float *ap, bool vec)
{
	const float *a = g->a;
	uint32_t kc = k1 - k0;

	for (uint32_t m = m0; m < m1; m += MR, ap += (size_t)kc * MR) {
		uint32_t h = m1 - m < MR ? m1 - m : MR;

		if (g->bf16 || h < MR) {
			for (uint32_t p = 0; p < kc; p++)
				for (uint32_t i = 0; i < MR; i++)
					ap[(size_t)p * MR + i] = i < h ? a_at(g, m + i, k0 + p) : 0.0f;
		} else if (g->trans_a) {	/* A stored k x m: MR contiguous values per depth */
			for (uint32_t p = 0; p < kc; p++)
				memcpy(ap + (size_t)p * MR, a + (size_t)(k0 + p) * g->lda + m,
				       sizeof(float) * MR);
		} else {			/* rows of A are contiguous */
			npu_interleave32(a + (size_t)m * g->lda + k0, sizeof(float) * g->lda, MR, kc,
					 0, ap, vec);
		}
	}
}

struct part {
	const struct npu_sgemm_args *g;
	skern_fn kern, pair;
	bool vec;	/* npu_engine_avx2() */
	struct npu_tile_range r;
	int failed;
};

static void *sgemm_range(struct part *p);

static void *sgemm_part(void *arg)
{
	struct part *p = arg;

	if (p->r.m0 >= p->r.m1 || p->r.n0 >= p->r.n1)
		return NULL;	/* nothing left for this thread */
	return sgemm_range(p);
}

/* The host bytes sgemm_range() allocates for @r: B's panels, A's block, the sums. */
static uint64_t range_bytes(const void *arg, const struct npu_tile_range *r)
{
	const struct npu_sgemm_args *g = arg;
	uint64_t ldt = (uint64_t)(r->n1 - r->n0 + NR - 1) / NR * NR;

	if (r->m0 >= r->m1 || r->n0 >= r->n1)
		return 0;
	return sizeof(float) * ((g->b_packed ? 0 : (uint64_t)g->k * ldt) + MC * KC + MC * ldt);
}

static void *sgemm_range(struct part *p)
{
	const struct npu_sgemm_args *g = p->g;
	uint32_t panels = (p->r.n1 - p->r.n0 + NR - 1) / NR;
	size_t ldt = (size_t)panels * NR;
	/* B packed whole already, the range's panels in place; or packed here. */
	float *own = g->b_packed ? NULL : malloc(sizeof(*own) * (size_t)g->k * ldt);
	const float *bp = g->b_packed ? g->b_packed + (size_t)p->r.n0 * g->k : own;
	float *ap = malloc(sizeof(*ap) * MC * KC);
	float *t = malloc(sizeof(*t) * MC * ldt);

	_Static_assert(NR == 16, "npu_sgemm_packed_b_bytes() rounds to 16 columns");
	if (!bp || !ap || !t) {
		p->failed = 1;
		goto out;
	}
	if (own && !pack_b(g, p->r.n0, p->r.n1, own, p->vec)) {
		p->failed = 1;
		goto out;
	}
	for (uint32_t m0 = p->r.m0; m0 < p->r.m1; m0 += MC) {
		uint32_t m1 = m0 + MC < p->r.m1 ? m0 + MC : p->r.m1;

		for (uint32_t k0 = 0; k0 < g->k; k0 += KC) {
			uint32_t k1 = k0 + KC < g->k ? k0 + KC : g->k;

			pack_a(g, m0, m1, k0, k1, ap, p->vec);
			for (uint32_t j = 0; j < panels; j++) {
				if (!(j % STOP_PANELS) && stopped(g)) {
					p->failed = 1;
					goto out;
				}
				for (uint32_t i = 0; m0 + i < m1; i += MR) {
					skern_fn kern = p->kern;

					if (p->pair && m0 + i + MR < m1)
						kern = p->pair;	/* this block and the next */
					kern(k1 - k0, ap + (size_t)i * (k1 - k0),
					     bp + ((size_t)j * g->k + k0) * NR,
					     t + i * ldt + j * NR, ldt, k0 > 0);
					if (kern == p->pair)
						i += MR;
				}
			}
		}
		for (uint32_t m = m0; m < m1; m++) {
			const float *tr = t + (m - m0) * ldt;
			float *cr = g->c + (size_t)m * g->ldc + p->r.n0;
			uint32_t w = p->r.n1 - p->r.n0;

			if (g->beta == 0.0f && g->alpha == 1.0f)
				memcpy(cr, tr, sizeof(float) * w);
			else if (g->beta == 0.0f)
				for (uint32_t n = 0; n < w; n++)
					cr[n] = g->alpha * tr[n];
			else
				for (uint32_t n = 0; n < w; n++)
					cr[n] = g->alpha * tr[n] + g->beta * cr[n];
			if (g->bias || g->relu || g->clamp)
				npu_f32_epilogue(cr, g->bias ? g->bias + p->r.n0 : NULL, g->relu,
						 g->clamp, w, p->vec);
		}
	}
out:
	free(own);
	free(ap);
	free(t);
	return NULL;
}

uint64_t npu_sgemm_packed_b_bytes(uint32_t k, uint32_t n)
{
	return sizeof(float) * (uint64_t)k * ((n + NR - 1) / NR * NR);
}

bool npu_sgemm_pack_b(const struct npu_sgemm_args *g, float *out)
{
	return pack_b(g, 0, g->n, out, npu_engine_avx2());
}

int npu_sgemm(const struct npu_sgemm_args *g)
{
	struct part parts[MAX_THREADS];
	struct npu_tile_range r[MAX_THREADS];
	uint64_t flops = (uint64_t)g->m * g->n * g->k;
	unsigned int threads = 1;
	skern_fn pair, kern = pick_kernel(&pair);

	_Static_assert(MC % MR == 0, "blocking");
	if (flops >= THREAD_MIN_FLOPS && g->threads > 1)
		threads = g->threads < MAX_THREADS ? g->threads : MAX_THREADS;
	npu_split(g->m, g->n, MR, NR, threads, false, r);
	if (!npu_split_reserve(g->reserve, g->stop_arg, r, threads, range_bytes, g))
		return -1;
	for (unsigned int t = 0; t < threads; t++)
		parts[t] = (struct part){ .g = g, .kern = kern, .pair = pair, .r = r[t],
					  .vec = npu_engine_avx2() };
	npu_run_parallel(sgemm_part, parts, sizeof(parts[0]), threads);
	for (unsigned int t = 0; t < threads; t++)
		if (parts[t].failed)
			return -1;
	return 0;
}
