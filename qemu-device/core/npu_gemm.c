// SPDX-License-Identifier: MIT
/*
 * npu_gemm.c - the tensor engine's int8 GEMM kernel: out[m][n] =
 * requant(bias[n] + sum_k (a[m][k] - a_zero) * b[n][k]) for packed a (m x k)
 * and b (n x k).
 *
 * Blocked the way BLIS blocks a GEMM: weights are packed once per call into
 * panels of NR columns, activations per block of MC rows and KC depth, and
 * a 6 x 16 micro-kernel keeps its int32 tile in registers. Operands are
 * widened to int16 pairs while packing, so the AVX2 kernel is one vpmaddwd
 * per 16 multiply-accumulates and exact for every input. (vpmaddubsw with
 * the sign trick is exact too when no weight is -128, but it needs the
 * same two multiplier operations per 32 products, and measured no faster.)
 * Where the host has VNNI, activations are packed as unsigned bytes in
 * quads instead (a + 128) and weights as signed ones, and vpdpbusd does 4
 * multiply-accumulates per lane, exact (no saturation): the extra 128 *
 * (sum of the column) is taken out with a_zero. AVX512-VNNI runs a 12 x 32
 * tile in zmm registers, AVX-VNNI a 6 x 16 one in ymm. Portable C runs the
 * pair layout where the host lacks AVX2. The kernel is chosen at run time
 * from CPUID (NPU_ENGINE_ISA names one: c, avx2, avxvnni, avx512vnni); the
 * requantization is vectorised alongside. Work is split across
 * threads by output columns, or by rows when there are too few columns
 * or the activations are the larger operand and the weights small.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "npu_interleave.h"
#include "npu_pool.h"
#include "npu_split.h"
#include "npu_quant.h"

#define MR 6		/* rows of a ymm micro-tile */
#define NR 16		/* its columns: two ymm of int32 */
#define MR_ZMM 12	/* rows of a zmm micro-tile: 24 accumulators of 32 */
#define NR_ZMM 32	/* its columns: two zmm of int32 */
#define KC 512		/* depth of a block: a kernel's panels stay in L1 */
#define MC 72		/* rows of a block, a multiple of every tile's rows */
/* A stop check every this many panels of a block: 1.2M MACs, ~1 ms in C. */
#define STOP_PANELS 2
#define MAX_THREADS 16
/* The most weights a by-rows split packs in every thread: 2 MiB of int8. */
#define ROWS_MAX_B (2u << 20)
/* Below this many multiply-accumulates, threads cost more than they save. */
#define THREAD_MIN_MACS (1u << 22)

/*
 * Packed layouts, depth in groups of @unit (zeros pad the last group):
 *  a block: [MC / mr][groups][mr], one int32 per group (an int16 pair, or
 *           four unsigned bytes a + 128), which a kernel step broadcasts;
 *  b panel: [groups][nr][unit], int16 (pairs) or int8 (quads), so a step
 *           loads nr columns x unit depths.
 * a_zero (and a quad's 128) is taken out afterwards with the column sums
 * of b.
 */
struct kernel {
	const char *isa;
	bool (*supported)(void);
	uint32_t mr, nr;	/* the micro-tile */
	uint32_t unit;		/* depth per group: 2 (int16 pairs) or 4 (uint8 quads) */
	void (*run)(uint32_t groups, const int32_t *ap, const void *bp,
		    int32_t *c, size_t ldc, int accumulate);
	void (*requant)(const struct npu_requant_cols *rq, const int32_t *c, int8_t *out,
			uint32_t count);
	uint32_t (*column_sum)(const int8_t *col, uint32_t k);
};

static void requant_c(const struct npu_requant_cols *rq, const int32_t *c, int8_t *out,
		      uint32_t count)
{
	for (uint32_t n = 0; n < count && rq->onnx; n++)
		out[n] = npu_requant_onnx_i8((int32_t)((uint32_t)c[n] + (uint32_t)rq->add[n]),
					     rq->mult[n], rq->zero, rq->lo, rq->hi);
	for (uint32_t n = 0; n < count && !rq->onnx; n++) {
		int32_t x = (int32_t)((uint32_t)c[n] + (uint32_t)rq->add[n]);
		int32_t v = npu_rdbpot(npu_srdhm((int32_t)((uint32_t)x << rq->lshift[n]),
						 rq->mult[n]), rq->rshift[n]);
		int64_t r = (int64_t)v + rq->zero;

		out[n] = (int8_t)(r < rq->lo ? rq->lo : r > rq->hi ? rq->hi : r);
	}
}

/* The sum of a column of weights, for taking a_zero out afterwards. */
static uint32_t column_sum_c(const int8_t *col, uint32_t k)
{
	uint32_t s = 0;

	for (uint32_t x = 0; x < k; x++)
		s += (uint32_t)col[x];
	return s;
}

static void kern_c(uint32_t pairs, const int32_t *ap, const void *bpv,
		   int32_t *c, size_t ldc, int accumulate)
{
	uint32_t acc[MR][NR] = { { 0 } };	/* wraps, as the accumulator is defined to */
	const int16_t *bp = bpv;

	for (uint32_t p = 0; p < pairs; p++, ap += MR, bp += 2 * NR)
		for (int i = 0; i < MR; i++) {
			int32_t a0 = (int16_t)(uint16_t)ap[i];
			int32_t a1 = (int16_t)((uint32_t)ap[i] >> 16);

			for (int j = 0; j < NR; j++)
				acc[i][j] += (uint32_t)(a0 * bp[2 * j] + a1 * bp[2 * j + 1]);
		}
	for (int i = 0; i < MR; i++)
		for (int j = 0; j < NR; j++)
			c[i * ldc + j] = (int32_t)(acc[i][j] +
						   (accumulate ? (uint32_t)c[i * ldc + j] : 0));
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2")))
static inline void store_tile(__m256i acc[MR][2], int32_t *c, size_t ldc, int accumulate)
{
#pragma GCC unroll 6
	for (int i = 0; i < MR; i++) {
		__m256i *row = (__m256i *)(c + i * ldc);

		if (accumulate) {
			acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_loadu_si256(row));
			acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_loadu_si256(row + 1));
		}
		_mm256_storeu_si256(row, acc[i][0]);
		_mm256_storeu_si256(row + 1, acc[i][1]);
	}
}

/*
 * 12 accumulators, two b vectors and one broadcast group: 15 of the 16 ymm
 * registers. Loops are unrolled so that the accumulators stay in registers.
 * One body for AVX2's int16 pairs and AVX-VNNI's uint8 quads: @DOT(acc, a,
 * b) adds a group's products to acc, wrapping as vpaddd would; a group of
 * b is @unit elements of @elem bytes.
 */
#define KERN_YMM(name, isa, DOT, unit, elem)					\
__attribute__((target(isa)))							\
static void name(uint32_t groups, const int32_t *ap, const void *bpv,		\
		 int32_t *c, size_t ldc, int accumulate)			\
{										\
	const uint8_t *bp = bpv;						\
	__m256i acc[MR][2];							\
										\
	_Pragma("GCC unroll 6")							\
	for (int i = 0; i < MR; i++)						\
		acc[i][0] = acc[i][1] = _mm256_setzero_si256();			\
	for (uint32_t p = 0; p < groups; p++, ap += MR, bp += (unit) * (elem) * NR) { \
		__m256i b0 = _mm256_loadu_si256((const __m256i *)bp);		\
		__m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + 32));	\
										\
		_Pragma("GCC unroll 6")						\
		for (int i = 0; i < MR; i++) {					\
			__m256i a = _mm256_set1_epi32(ap[i]);			\
										\
			acc[i][0] = DOT(acc[i][0], a, b0);			\
			acc[i][1] = DOT(acc[i][1], a, b1);			\
		}								\
	}									\
	store_tile(acc, c, ldc, accumulate);					\
}

#define DOT_AVX2(acc, a, b)	_mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
#define DOT_AVXVNNI(acc, a, b)	_mm256_dpbusd_avx_epi32(acc, a, b)
KERN_YMM(kern_avx2, "avx2", DOT_AVX2, 2, 2)
KERN_YMM(kern_avxvnni, "avx2,avxvnni", DOT_AVXVNNI, 4, 1)

/*
 * AVX512-VNNI: a 12 x 32 tile, 24 zmm accumulators, two b vectors of 16
 * columns x 4 depths and one broadcast quad of unsigned activations.
 */
__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void kern_avx512vnni(uint32_t groups, const int32_t *ap, const void *bpv,
			    int32_t *c, size_t ldc, int accumulate)
{
	const uint8_t *bp = bpv;
	__m512i acc[MR_ZMM][2];

#pragma GCC unroll 12
	for (int i = 0; i < MR_ZMM; i++)
		acc[i][0] = acc[i][1] = _mm512_setzero_si512();
	for (uint32_t p = 0; p < groups; p++, ap += MR_ZMM, bp += 4 * NR_ZMM) {
		__m512i b0 = _mm512_loadu_si512(bp);
		__m512i b1 = _mm512_loadu_si512(bp + 64);

#pragma GCC unroll 12
		for (int i = 0; i < MR_ZMM; i++) {
			__m512i a = _mm512_set1_epi32(ap[i]);

			acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], a, b0);
			acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], a, b1);
		}
	}
#pragma GCC unroll 12
	for (int i = 0; i < MR_ZMM; i++) {
		int32_t *row = c + i * ldc;

		if (accumulate) {
			acc[i][0] = _mm512_add_epi32(acc[i][0], _mm512_loadu_si512(row));
			acc[i][1] = _mm512_add_epi32(acc[i][1], _mm512_loadu_si512(row + 16));
		}
		_mm512_storeu_si512(row, acc[i][0]);
		_mm512_storeu_si512(row + 16, acc[i][1]);
	}
}

/* x * mult / 2^31 for the even 32-bit lanes, rounded as npu_srdhm does. */
__attribute__((target("avx2")))
static inline __m256i srdhm_even(__m256i x, __m256i mult)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i ab = _mm256_mul_epi32(x, mult);
	__m256i neg = _mm256_cmpgt_epi64(zero, ab);
	/* nudge 2^30, or 1 - 2^30 below zero; then truncate toward zero */
	__m256i t = _mm256_add_epi64(ab, _mm256_blendv_epi8(_mm256_set1_epi64x(1ll << 30),
							    _mm256_set1_epi64x(1 - (1ll << 30)), neg));

	neg = _mm256_cmpgt_epi64(zero, t);
	t = _mm256_add_epi64(t, _mm256_and_si256(neg, _mm256_set1_epi64x((1ll << 31) - 1)));
	return _mm256_srli_epi64(t, 31);	/* the low 32 bits are the quotient */
}

/* requant_c, eight columns at a time: the same arithmetic, lane by lane. */
__attribute__((target("avx2")))
static void requant_avx2(const struct npu_requant_cols *rq, const int32_t *c, int8_t *out,
			 uint32_t count)
{
	const __m256i min = _mm256_set1_epi32(INT32_MIN), one = _mm256_set1_epi32(1);
	const __m256i zp = _mm256_set1_epi32(rq->zero);
	/* Clamp before adding the zero point, which could wrap after. */
	const __m256i lo = _mm256_set1_epi32(rq->lo - rq->zero);
	const __m256i hi = _mm256_set1_epi32(rq->hi - rq->zero);
	uint32_t n = 0;

	/* ONNX's: (float)x * mult rounded half to even, as npu_requant_onnx_i8 */
	for (; n + 8 <= count && rq->onnx; n += 8) {
		const __m256 flo = _mm256_set1_ps((float)(rq->lo - rq->zero));
		const __m256 fhi = _mm256_set1_ps((float)(rq->hi - rq->zero));
		__m256i x = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(c + n)),
					     _mm256_loadu_si256((const __m256i *)(rq->add + n)));
		__m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(x),
					 _mm256_loadu_ps((const float *)(rq->mult + n)));
		__m128i w;

		v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		x = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, flo), fhi)),
				     zp);
		w = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
		_mm_storel_epi64((__m128i *)(out + n), _mm_packs_epi16(w, w));
	}
	for (; n + 8 <= count && !rq->onnx; n += 8) {
		__m256i x = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(c + n)),
					     _mm256_loadu_si256((const __m256i *)(rq->add + n)));
		__m256i mult = _mm256_loadu_si256((const __m256i *)(rq->mult + n));
		__m256i rsh = _mm256_loadu_si256((const __m256i *)(rq->rshift + n));
		__m256i even, odd, v, mask, rem, thr;

		x = _mm256_sllv_epi32(x, _mm256_loadu_si256((const __m256i *)(rq->lshift + n)));
		even = srdhm_even(x, mult);
		odd = srdhm_even(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(mult, 32));
		v = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xaa);
		/* INT32_MIN * INT32_MIN is the one product that does not fit */
		v = _mm256_blendv_epi8(v, _mm256_set1_epi32(INT32_MAX),
				       _mm256_and_si256(_mm256_cmpeq_epi32(x, min),
							_mm256_cmpeq_epi32(mult, min)));
		/* npu_rdbpot: shift, then round half away from zero */
		mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, rsh), one);
		rem = _mm256_and_si256(v, mask);
		thr = _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_srai_epi32(v, 31));
		v = _mm256_sub_epi32(_mm256_srav_epi32(v, rsh), _mm256_cmpgt_epi32(rem, thr));
		v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
		v = _mm256_add_epi32(v, zp);
		{
			__m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v),
						    _mm256_extracti128_si256(v, 1));

			_mm_storel_epi64((__m128i *)(out + n), _mm_packs_epi16(w, w));
		}
	}
	requant_c(&(struct npu_requant_cols){ rq->add + n, rq->mult + n, rq->lshift + n,
					  rq->rshift + n, rq->zero, rq->lo, rq->hi, rq->onnx },
		  c + n, out + n, count - n);
}

/* column_sum_c: the bytes biased to unsigned and summed by vpsadbw. */
__attribute__((target("avx2")))
static uint32_t column_sum_avx2(const int8_t *col, uint32_t k)
{
	const __m256i bias = _mm256_set1_epi8((char)0x80);
	__m256i acc = _mm256_setzero_si256();
	__m128i s;
	uint32_t x = 0;

	for (; x + 32 <= k; x += 32) {
		__m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(col + x)), bias);

		acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, _mm256_setzero_si256()));
	}
	s = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
	s = _mm_add_epi64(s, _mm_unpackhi_epi64(s, s));
	return (uint32_t)_mm_cvtsi128_si64(s) - 128u * x + column_sum_c(col + x, k - x);
}
#endif

static bool always(void)
{
	return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/*
 * CPUID leaf 7 (@sub), and the state the OS saves (XCR0), read directly:
 * clang's __builtin_cpu_supports knows no AVX-VNNI.
 */
static bool leaf7(unsigned int sub, unsigned int *b, unsigned int *c, unsigned int *a)
{
	unsigned int d;

	*a = *b = *c = 0;
	return __get_cpuid_count(7, sub, a, b, c, &d);
}

static uint64_t xcr0(void)
{
	unsigned int ecx = 0, lo, hi, a, b, d;

	__get_cpuid(1, &a, &b, &ecx, &d);
	if (!(ecx & bit_OSXSAVE))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static bool has_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}

static bool has_avxvnni(void)
{
	unsigned int a, b, c;

	return has_avx2() && leaf7(1, &b, &c, &a) && (a & (1u << 4));
}

/* AVX512-VNNI (with F and BW): the OS must save the opmask and zmm state. */
static bool has_avx512vnni(void)
{
	unsigned int a, b, c;

	return has_avx2() && (xcr0() & 0xe6) == 0xe6 && leaf7(0, &b, &c, &a) &&
	       (c & (1u << 11)) && (b & (1u << 16)) && (b & (1u << 30));
}
#endif

/* Best first; NPU_ENGINE_ISA picks one by name where the host has it. */
static const struct kernel kernels[] = {
#if defined(__x86_64__) && defined(__GNUC__)
	{ "avx512vnni", has_avx512vnni, MR_ZMM, NR_ZMM, 4, kern_avx512vnni, requant_avx2,
	  column_sum_avx2 },
	{ "avxvnni", has_avxvnni, MR, NR, 4, kern_avxvnni, requant_avx2, column_sum_avx2 },
	{ "avx2", has_avx2, MR, NR, 2, kern_avx2, requant_avx2, column_sum_avx2 },
#endif
	{ "c", always, MR, NR, 2, kern_c, requant_c, column_sum_c },
};
#define N_KERNELS (sizeof(kernels) / sizeof(kernels[0]))

/* Whether the host runs kernel @i: CPUID once (it traps under a hypervisor). */
static bool supported(size_t i)
{
	static atomic_uchar known[N_KERNELS];	/* 0 not asked, 1 no, 2 yes */
	unsigned char v = atomic_load(&known[i]);

	if (!v) {
		v = kernels[i].supported() ? 2 : 1;
		atomic_store(&known[i], v);
	}
	return v == 2;
}

bool npu_gemm_isa_supported(const char *isa)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (!strcmp(kernels[i].isa, isa))
			return supported(i);
	return false;
}

const char *npu_gemm_isa_name(unsigned int i)
{
	return i < N_KERNELS ? kernels[i].isa : NULL;
}

static const struct kernel *pick_kernel(void)
{
	const char *force = getenv("NPU_ENGINE_ISA");

	for (size_t i = 0; force && i < N_KERNELS; i++)
		if (!strcmp(kernels[i].isa, force) && supported(i))
			return &kernels[i];
	for (size_t i = 0; i < N_KERNELS; i++)
		if (supported(i))
			return &kernels[i];
	return &kernels[N_KERNELS - 1];
}

const char *npu_gemm_isa(void)
{
	return pick_kernel()->isa;
}

void npu_requant_row(const struct npu_requant_cols *rq, const int32_t *c, int8_t *out,
		     uint32_t count)
{
	pick_kernel()->requant(rq, c, out, count);
}

bool npu_engine_avx2(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return strcmp(npu_gemm_isa(), "c") && npu_gemm_isa_supported("avx2");
#else
	return false;
#endif
}

/* A pair of depth values as int16, zero past @avail. */
static inline int32_t pair(const int8_t *src, uint32_t avail)
{
	uint16_t lo = (uint16_t)(int16_t)src[0];
	uint16_t hi = avail > 1 ? (uint16_t)(int16_t)src[1] : 0;

	return (int32_t)(lo | (uint32_t)hi << 16);
}

/* Should the kernel stop (a check between blocks of work)? */
static bool stopped(const struct npu_gemm_args *g)
{
	return g->stop && g->stop(g->stop_arg);
}

/*
 * Up to @unit bytes of @src (@avail of them real, zeros after) as one group
 * of a: int16 pairs sign-extended, or quads of unsigned bytes a + 128.
 */
static inline int32_t a_group(const int8_t *src, uint32_t avail, uint32_t unit)
{
	uint32_t v = 0;

	if (unit == 2)
		return pair(src, avail);
	if (avail >= 4) {	/* little-endian bytes, each biased by 128 */
		memcpy(&v, src, 4);
		return (int32_t)(v ^ 0x80808080u);
	}
	for (uint32_t x = 0; x < avail; x++)
		v |= (uint32_t)((uint8_t)src[x] ^ 0x80) << (8 * x);
	return (int32_t)v;
}

/* Bytes of one packed b panel of all of k. */
static size_t panel_bytes(const struct kernel *kern, uint32_t k)
{
	size_t groups = (k + kern->unit - 1) / kern->unit;

	return groups * kern->unit * kern->nr * (kern->unit == 2 ? sizeof(int16_t) : 1);
}

/* Depths a panel's or a block's rows are widened by at a time for int16 pairs. */
#define WIDEN_CHUNK 512

/*
 * @rows rows of depths [k0, k1) of int8 @src (@ld apart) as int16 pairs,
 * interleaved into @dst as pack_a and pack_b lay them out: each row
 * widened (a zero after an odd last depth), then the pairs interleaved
 * as words, a chunk of depths at a time.
 */
static void pack_pairs(const int8_t *src, size_t ld, uint32_t rows, uint32_t k0, uint32_t k1,
		       int32_t *dst, bool vec)
{
	int16_t wide[NR * (WIDEN_CHUNK + 2)];

	for (uint32_t d = k0; d < k1; d += WIDEN_CHUNK) {
		uint32_t len = k1 - d < WIDEN_CHUNK ? k1 - d : WIDEN_CHUNK, even = (len + 1) & ~1u;

		for (uint32_t i = 0; i < rows; i++) {
			npu_widen16(src + i * ld + d, len, wide + (size_t)i * even, vec);
			wide[(size_t)i * even + len] = 0;	/* read only when len is odd */
		}
		npu_interleave32(wide, sizeof(int16_t) * even, rows, even / 2, 0,
				 dst + (size_t)(d - k0) / 2 * rows, vec);
	}
}

/*
 * Pack columns [n0, n1) of b (all of k) into panels and sum each column;
 * missing columns and depths are 0. False if told to stop (checked per
 * panel).
 */
static bool pack_b(const struct npu_gemm_args *g, const struct kernel *kern,
		   uint32_t n0, uint32_t n1, uint8_t *bp, uint32_t *bsum, bool vec)
{
	uint32_t unit = kern->unit, nr = kern->nr;
	size_t panel = panel_bytes(kern, g->k);

	memset(bp, 0, panel * ((n1 - n0 + nr - 1) / nr));
	for (uint32_t n = n0; n < n1; n += nr, bp += panel) {
		bool whole = n + nr <= n1;	/* every column real */

		if (stopped(g))
			return false;
		if (whole && unit == 4)	/* the whole quads of every column at once */
			npu_interleave32(g->b + (size_t)n * g->k, g->k, nr, g->k / 4, 0, bp, vec);
		else if (whole)		/* every pair of every column */
			pack_pairs(g->b + (size_t)n * g->k, g->k, nr, 0, g->k, (int32_t *)bp, vec);
		for (uint32_t j = 0; j < nr; j++) {
			const int8_t *col = g->b + (size_t)(n + j) * g->k;

			if (n + j >= n1) {
				bsum[n + j - n0] = 0;
				continue;
			}
			if (unit == 4) {	/* whole quads as words, the last one padded */
				uint32_t full = g->k / 4;

				for (uint32_t p = 0; !whole && p < full; p++)
					memcpy(bp + ((size_t)p * nr + j) * 4, col + 4 * p, 4);
				for (uint32_t x = 4 * full; x < g->k; x++)
					bp[((size_t)full * nr + j) * 4 + x % 4] = (uint8_t)col[x];
			} else {
				for (uint32_t x = 0; !whole && x < g->k; x++)
					((int16_t *)bp)[((size_t)(x / 2) * nr + j) * 2 + x % 2] = col[x];
			}
			bsum[n + j - n0] = kern->column_sum(col, g->k);
		}
	}
	return true;
}

/* Pack rows [m0, m1) x depth [k0, k1) of a; missing rows are 0. */
static void pack_a(const struct npu_gemm_args *g, const struct kernel *kern, uint32_t m0,
		   uint32_t m1, uint32_t k0, uint32_t k1, int32_t *ap, bool vec)
{
	uint32_t unit = kern->unit, mr = kern->mr, groups = (k1 - k0 + unit - 1) / unit;

	for (uint32_t m = m0; m < m1; m += mr, ap += (size_t)groups * mr) {
		if (unit == 4 && m + mr <= m1) {	/* whole tiles: the quads at once, a + 128 */
			uint32_t full = (k1 - k0) / 4;

			npu_interleave32(g->a + (size_t)m * g->k + k0, g->k, mr, full, 0x80808080u,
					 ap, vec);
			for (uint32_t i = 0; full < groups && i < mr; i++)
				ap[full * mr + i] = a_group(g->a + (size_t)(m + i) * g->k + k0 +
							    4 * full, k1 - k0 - 4 * full, 4);
			continue;
		}
		if (unit == 2 && m + mr <= m1) {	/* whole tiles of int16 pairs */
			pack_pairs(g->a + (size_t)m * g->k, g->k, mr, k0, k1, ap, vec);
			continue;
		}
		for (uint32_t i = 0; i < mr; i++) {
			const int8_t *row = g->a + (size_t)(m + i) * g->k;

			if (m + i >= m1) {
				for (uint32_t p = 0; p < groups; p++)
					ap[p * mr + i] = 0;
			} else if (unit == 4) {	/* the common case, without a branch per group */
				for (uint32_t p = 0, k = k0; p < groups; p++, k += 4)
					ap[p * mr + i] = a_group(row + k, k1 - k, 4);
			} else {
				for (uint32_t p = 0, k = k0; p < groups; p++, k += 2)
					ap[p * mr + i] = pair(row + k, k1 - k);
			}
		}
	}
}

struct part {
	const struct npu_gemm_args *g;
	const struct kernel *kern;
	bool vec;	/* npu_engine_avx2() */
	struct npu_tile_range r;
	int failed;
};

/* The per-column requantization of columns [n0, n1), from their sums. */
static void requant_setup(const struct npu_gemm_args *g, const struct kernel *kern,
			  const uint32_t *bsum, uint32_t n0, uint32_t n1, struct npu_requant_cols *rq)
{
	/* Quads multiplied a + 128: that much more of each column comes out. */
	uint32_t a_zero = (uint32_t)g->a_zero + (kern->unit == 4 ? 128u : 0u);

	for (uint32_t n = n0; n < n1; n++) {
		const struct npu_quant_ch *q = &g->q[g->per_tensor ? 0 : n];

		rq->add[n - n0] = (int32_t)((g->bias ? (uint32_t)g->bias[n] : 0) -
					    a_zero * bsum[n - n0]);
		rq->mult[n - n0] = q->mult;
		rq->lshift[n - n0] = q->shift > 0 ? q->shift : 0;
		rq->rshift[n - n0] = q->shift > 0 ? 0 : -q->shift;
	}
	rq->zero = g->out_zero;
	rq->lo = g->act_min;
	rq->hi = g->act_max;
	rq->onnx = g->onnx;
}

static void *gemm_range(struct part *p);

static void *gemm_part(void *arg)
{
	struct part *p = arg;

	if (p->r.m0 >= p->r.m1 || p->r.n0 >= p->r.n1)
		return NULL;	/* nothing left for this thread */
	return gemm_range(p);
}

/* The host bytes gemm_range() allocates for @r: B's panels, A's block, C's. */
static uint64_t range_bytes(const void *arg, const struct npu_tile_range *r)
{
	const struct part *p = arg;	/* the GEMM and its kernel */
	const struct kernel *kern = p->kern;
	uint64_t panels = (r->n1 - r->n0 + kern->nr - 1) / kern->nr, ldc = panels * kern->nr;

	if (r->m0 >= r->m1 || r->n0 >= r->n1)
		return 0;
	return (p->g->b_packed ? 0 : panel_bytes(kern, p->g->k) * panels + sizeof(uint32_t) * ldc) +
	       sizeof(int32_t) * MC * (KC / kern->unit) + sizeof(int32_t) * MC * ldc +
	       sizeof(int32_t) * 4 * ldc;
}

static void *gemm_range(struct part *p)
{
	const struct npu_gemm_args *g = p->g;
	const struct kernel *kern = p->kern;
	uint32_t nr = kern->nr, mr = kern->mr, unit = kern->unit;
	uint32_t panels = (p->r.n1 - p->r.n0 + nr - 1) / nr;
	size_t ldc = (size_t)panels * nr, panel = panel_bytes(kern, g->k);
	size_t group_bytes = (size_t)unit * nr * (unit == 2 ? sizeof(int16_t) : 1);
	/* B packed whole already (the range's panels and sums in place), or here. */
	uint8_t *own = g->b_packed ? NULL : malloc(panel * panels);
	uint32_t *own_sum = g->b_packed ? NULL : malloc(sizeof(*own_sum) * ldc);
	const uint8_t *bp = g->b_packed ? (const uint8_t *)g->b_packed + panel * (p->r.n0 / nr) : own;
	const uint32_t *bsum = g->b_packed ? (const uint32_t *)((const uint8_t *)g->b_packed +
				panel * ((g->n + nr - 1) / nr)) + p->r.n0 : own_sum;
	int32_t *ap = malloc(sizeof(*ap) * MC * (KC / unit));
	int32_t *c = malloc(sizeof(*c) * MC * ldc);
	int32_t *cols = malloc(sizeof(*cols) * 4 * ldc);
	struct npu_requant_cols rq;

	if (!bp || !bsum || !ap || !c || !cols) {
		p->failed = 1;
		goto out;
	}
	rq.add = cols;
	rq.mult = cols + ldc;
	rq.lshift = cols + 2 * ldc;
	rq.rshift = cols + 3 * ldc;
	if (own && !pack_b(g, kern, p->r.n0, p->r.n1, own, own_sum, p->vec)) {
		p->failed = 1;
		goto out;
	}
	requant_setup(g, kern, bsum, p->r.n0, p->r.n1, &rq);
	for (uint32_t m0 = p->r.m0; m0 < p->r.m1; m0 += MC) {
		uint32_t m1 = m0 + MC < p->r.m1 ? m0 + MC : p->r.m1;

		for (uint32_t k0 = 0; k0 < g->k; k0 += KC) {
			uint32_t k1 = k0 + KC < g->k ? k0 + KC : g->k;
			uint32_t groups = (k1 - k0 + unit - 1) / unit;

			pack_a(g, kern, m0, m1, k0, k1, ap, p->vec);
			for (uint32_t j = 0; j < panels; j++) {
				const uint8_t *b = bp + (size_t)j * panel + k0 / unit * group_bytes;

				if (!(j % STOP_PANELS) && stopped(g)) {
					p->failed = 1;
					goto out;
				}
				for (uint32_t i = 0; m0 + i < m1; i += mr)
					kern->run(groups, ap + (size_t)i * groups, b,
						  c + i * ldc + j * nr, ldc, k0 > 0);
			}
		}
		for (uint32_t m = m0; m < m1; m++)
			kern->requant(&rq, c + (m - m0) * ldc,
					 g->out + (size_t)m * (g->ldo ? g->ldo : g->n) + p->r.n0,
					 p->r.n1 - p->r.n0);
	}
out:
	free(cols);
	free(own);
	free(own_sum);
	free(ap);
	free(c);
	return NULL;
}

uint64_t npu_gemm_packed_b_bytes(uint32_t n, uint32_t k)
{
	const struct kernel *kern = pick_kernel();
	uint64_t panels = (n + kern->nr - 1) / kern->nr;

	return (panel_bytes(kern, k) + sizeof(uint32_t) * kern->nr) * panels;
}

bool npu_gemm_pack_b(const struct npu_gemm_args *g, void *out)
{
	const struct kernel *kern = pick_kernel();
	size_t panels = (g->n + kern->nr - 1) / kern->nr;

	return pack_b(g, kern, 0, g->n, out,
		      (uint32_t *)((uint8_t *)out + panel_bytes(kern, g->k) * panels),
		      npu_engine_avx2());
}

int npu_gemm_i8(const struct npu_gemm_args *g)
{
	struct part parts[MAX_THREADS];
	struct npu_tile_range r[MAX_THREADS];
	uint64_t macs = (uint64_t)g->m * g->n * g->k;
	unsigned int threads = 1;
	const struct kernel *kern = pick_kernel();

	struct part ctx = { .g = g, .kern = kern };

	/* Block boundaries never split a group; blocks hold whole tiles. */
	_Static_assert(KC % 4 == 0 && MC % MR == 0 && MC % MR_ZMM == 0, "blocking");
	if (macs >= THREAD_MIN_MACS && g->threads > 1)
		threads = g->threads < MAX_THREADS ? g->threads : MAX_THREADS;
	/*
	 * By rows every thread packs all of B: only where B is small (a
	 * convolution's filters), so that the budget holds on any host.
	 */
	npu_split(g->m, g->n, kern->mr, kern->nr, threads,
		  (uint64_t)g->n * g->k <= ROWS_MAX_B, r);
	if (!npu_split_reserve(g->reserve, g->stop_arg, r, threads, range_bytes, &ctx))
		return -1;
	for (unsigned int t = 0; t < threads; t++)
		parts[t] = (struct part){ .g = g, .kern = kern, .r = r[t],
					  .vec = npu_engine_avx2() };
	npu_run_parallel(gemm_part, parts, sizeof(parts[0]), threads);
	for (unsigned int t = 0; t < threads; t++)
		if (parts[t].failed)
			return -1;
	return 0;
}
