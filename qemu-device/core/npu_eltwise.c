// SPDX-License-Identifier: MIT
/*
 * npu_eltwise.c - NPU_CMD_ELTWISE_I8: int8 add and mul of two tensors with
 * broadcasting, in TFLite's, ONNX's or onnxruntime's arithmetic
 * (npu_quant.h, one definition of each).
 *
 * The output is walked in rows: runs along the innermost dimension where
 * each input either advances one element at a time or repeats one value.
 * A row goes to a vector kernel where the engine's ISA (npu_gemm_isa())
 * has one: the fp32 arithmetics with AVX2 and FMA, whose rounding (the
 * fused multiply-adds, the correctly rounded divide, round half to even)
 * is the scalar code's, bit for bit; else element by element.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_gemm.h"
#include "npu_split.h"
#include "npu_quant.h"
#include "npu_tensor_priv.h"

/* Below this many elements one thread does it all. */
#define ELT_THREAD_MIN (1u << 16)

/*
 * One row of @len outputs: @a and @b advance @sa and @sb (0 or 1) elements
 * per output.
 */
typedef void (*elt_row_fn)(const struct npu_cmd_eltwise_i8 *e, const int8_t *a, uint32_t sa,
			   const int8_t *b, uint32_t sb, int8_t *out, uint32_t len);

static int8_t elt_one(const struct npu_cmd_eltwise_i8 *e, int8_t av, int8_t bv)
{
	int32_t x = av - e->a_zero, y = bv - e->b_zero, r;

	switch (e->op) {
	case NPU_ELT_ADD_ORT:
		return npu_eltwise_ort_add_i8(av, bv, e->a_shift, e->a_mult, e->b_mult, e->out_mult,
					      e->b_shift, e->act_min, e->act_max);
	case NPU_ELT_ADD_ONNX:
	case NPU_ELT_MUL_ONNX:
		return npu_eltwise_onnx_i8(e->op == NPU_ELT_MUL_ONNX, x, y, e->a_mult, e->b_mult,
					   e->out_mult, e->out_zero, e->act_min, e->act_max);
	case NPU_ELT_ADD: {
		int32_t sx = npu_requant_scale((int32_t)((uint32_t)x << e->left_shift),
					       e->a_mult, e->a_shift);
		int32_t sy = npu_requant_scale((int32_t)((uint32_t)y << e->left_shift),
					       e->b_mult, e->b_shift);

		r = (int32_t)((uint32_t)sx + (uint32_t)sy);
		break;
	}
	default:	/* NPU_ELT_MUL */
		r = x * y;
		break;
	}
	return npu_requant_i8(r, e->out_mult, e->out_shift, e->out_zero, e->act_min, e->act_max);
}

static void elt_row_c(const struct npu_cmd_eltwise_i8 *e, const int8_t *a, uint32_t sa,
		      const int8_t *b, uint32_t sb, int8_t *out, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		out[i] = elt_one(e, a[(size_t)i * sa], b[(size_t)i * sb]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Eight int8 values as fp32: the next eight, or one repeated (@s 0). */
__attribute__((target("avx2")))
static inline __m256 ld8(const int8_t *p, uint32_t s, int32_t add)
{
	__m256i v = s ? _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)) :
			_mm256_set1_epi32(*p);

	return _mm256_cvtepi32_ps(_mm256_add_epi32(v, _mm256_set1_epi32(add)));
}

/* Eight rounded, clamped fp32 values plus @zero, clamped again, stored as int8. */
__attribute__((target("avx2")))
static inline void st8(int8_t *out, __m256 t, float lo, float hi, int32_t zero, int32_t amin,
		       int32_t amax)
{
	__m256i v;
	__m128i w;

	t = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	/* max first: a NaN lane becomes lo, as the scalar code's clamp makes it */
	t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(lo)), _mm256_set1_ps(hi));
	v = _mm256_add_epi32(_mm256_cvtps_epi32(t), _mm256_set1_epi32(zero));
	v = _mm256_min_epi32(_mm256_max_epi32(v, _mm256_set1_epi32(amin)), _mm256_set1_epi32(amax));
	w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	_mm_storel_epi64((__m128i *)out, _mm_packs_epi16(w, w));
}

/* elt_row_c for ONNX's and onnxruntime's arithmetic, eight outputs at a time. */
__attribute__((target("avx2,fma")))
static void elt_row_avx2(const struct npu_cmd_eltwise_i8 *e, const int8_t *a, uint32_t sa,
			 const int8_t *b, uint32_t sb, int8_t *out, uint32_t len)
{
	uint32_t i = 0;

	if (e->op == NPU_ELT_ADD_ORT) {
		const __m256 ra = _mm256_set1_ps(npu_f32_from_bits(e->a_mult));
		const __m256 rb = _mm256_set1_ps(npu_f32_from_bits(e->b_mult));
		const __m256 f = _mm256_set1_ps(npu_f32_from_bits(e->out_mult));
		int32_t off = e->a_shift;

		for (; i + 8 <= len; i += 8) {
			__m256 x = ld8(a + (size_t)i * sa, sa, off), y = ld8(b + (size_t)i * sb, sb, off);
			__m256 t = e->b_shift == 2 ? _mm256_fmadd_ps(y, rb, _mm256_fmadd_ps(x, ra, f)) :
				   _mm256_fmadd_ps(x, ra, _mm256_fmadd_ps(y, rb, f));

			st8(out + i, t, off ? 0.0f : -128.0f, off ? 255.0f : 127.0f, -off,
			    e->act_min, e->act_max);
		}
	} else if (e->op == NPU_ELT_ADD_ONNX || e->op == NPU_ELT_MUL_ONNX) {
		const __m256 fa = _mm256_set1_ps(npu_f32_from_bits(e->a_mult));
		const __m256 fb = _mm256_set1_ps(npu_f32_from_bits(e->b_mult));
		const __m256 so = _mm256_set1_ps(npu_f32_from_bits(e->out_mult));
		bool mul = e->op == NPU_ELT_MUL_ONNX;

		for (; i + 8 <= len; i += 8) {
			__m256 x = _mm256_mul_ps(ld8(a + (size_t)i * sa, sa, -e->a_zero), fa);
			__m256 y = _mm256_mul_ps(ld8(b + (size_t)i * sb, sb, -e->b_zero), fb);
			__m256 t = _mm256_div_ps(mul ? _mm256_mul_ps(x, y) : _mm256_add_ps(x, y), so);

			st8(out + i, t, (float)(e->act_min - e->out_zero),
			    (float)(e->act_max - e->out_zero), e->out_zero, -128, 127);
		}
	}
	elt_row_c(e, a + (size_t)i * sa, sa, b + (size_t)i * sb, sb, out + i, len - i);
}
#endif

/* The row kernel for the engine's ISA: any but the portable C one has AVX2. */
static elt_row_fn elt_pick_row(const struct npu_cmd_eltwise_i8 *e)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if ((e->op == NPU_ELT_ADD_ORT || e->op == NPU_ELT_ADD_ONNX || e->op == NPU_ELT_MUL_ONNX) &&
	    npu_engine_avx2() && __builtin_cpu_supports("fma"))
		return elt_row_avx2;
#endif
	(void)e;
	return elt_row_c;
}

static bool shift_ok(int32_t s)
{
	return s >= -31 && s <= 30;
}

/*
 * Broadcast strides of an elementwise command: @od the output's dims, 4-D
 * with leading 1s, and each input's element strides (0 where it is 1);
 * false when a dim is out of range or an input's is neither the output's
 * nor 1. Rank 0 is @count elements each.
 */
static bool elt_strides(uint32_t rank, const uint32_t *out, const uint32_t *a, const uint32_t *b,
			uint32_t count, uint32_t *od, uint64_t *as, uint64_t *bs, uint64_t *an,
			uint64_t *bn)
{
	uint64_t on = 1, sa = 1, sb = 1;

	if (rank > 4)
		return false;
	for (int d = 3; d >= 0; d--) {
		uint32_t i = (uint32_t)d - (4 - (rank ? rank : 1));

		if (d < 4 - (int)(rank ? rank : 1)) {
			od[d] = 1;
			as[d] = bs[d] = 0;
			continue;
		}
		od[d] = rank ? out[i] : count;
		if (rank && (!npu_dim_ok(out[i]) || (a[i] != out[i] && a[i] != 1) ||
			     (b[i] != out[i] && b[i] != 1)))
			return false;
		as[d] = !rank || a[i] != 1 ? sa : 0;
		bs[d] = !rank || b[i] != 1 ? sb : 0;
		sa *= rank ? a[i] : count;
		sb *= rank ? b[i] : count;
		on *= od[d];
	}
	for (uint32_t i = rank; i < 4; i++)
		if (out[i] || a[i] || b[i])
			return false;
	*an = sa;
	*bn = sb;
	return on == count;
}

/* Elements [i0, i1) of an int8 element-wise op, on one of the engine's threads. */
struct elt_part {
	struct npu_core *core;
	const struct npu_cmd_eltwise_i8 *e;
	const int8_t *a, *b;
	int8_t *out;
	const uint32_t *od;
	const uint64_t *as, *bs;
	elt_row_fn row;
};

/* Output elements [@i0, @i1). */
static bool elt_range(void *arg, uint32_t t, uint64_t i0, uint64_t i1)
{
	const struct elt_part *p = arg;
	const uint32_t *od = p->od;
	const uint64_t *as = p->as, *bs = p->bs;
	uint32_t idx[4], rem = (uint32_t)i0, since = 0;
	uint64_t ia = 0, ib = 0;

	(void)t;
	for (int d = 3; d >= 0; d--) {	/* where element i0's inputs are */
		idx[d] = rem % od[d];
		rem /= od[d];
		ia += idx[d] * as[d];
		ib += idx[d] * bs[d];
	}
	for (uint32_t i = (uint32_t)i0; i < i1;) {
		/* the rest of this innermost run, at most a stop check's worth */
		uint32_t len = od[3] - idx[3];

		if (len > i1 - i)
			len = (uint32_t)(i1 - i);
		if (len > NPU_ND_STOP_EVERY)
			len = NPU_ND_STOP_EVERY;
		since += len;
		if (since >= NPU_ND_STOP_EVERY) {
			since = 0;
			if (npu_eng_stop(p->core))
				return false;
		}
		p->row(p->e, p->a + ia, (uint32_t)as[3], p->b + ib, (uint32_t)bs[3], p->out + i, len);
		i += len;
		idx[3] += len;
		ia += as[3] * len;
		ib += bs[3] * len;
		for (int d = 3; d > 0 && idx[d] == od[d]; d--) {	/* carry */
			ia += as[d - 1] - as[d] * od[d];
			ib += bs[d - 1] - bs[d] * od[d];
			idx[d] = 0;
			idx[d - 1]++;
		}
	}
	return true;
}

uint32_t npu_eltwise_i8_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			    uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct npu_cmd_eltwise_i8 e;
	uint32_t st = NPU_JOB_INVALID_CMD, ctx = core->eng.run.ctx, od[4];
	uint64_t as[4], bs[4], an, bn;
	int8_t *a = NULL, *b = NULL, *out = NULL;
	bool onnx, ort;
	elt_row_fn row;

	if (size != sizeof(e))
		return NPU_JOB_INVALID_CMD;
	e.a = npu_rd64(c + 8);
	e.b = npu_rd64(c + 16);
	e.out = npu_rd64(c + 24);
	e.count = npu_rd32(c + 32);
	e.op = npu_rd32(c + 36);
	e.a_zero = (int32_t)npu_rd32(c + 40);
	e.b_zero = (int32_t)npu_rd32(c + 44);
	e.out_zero = (int32_t)npu_rd32(c + 48);
	e.act_min = (int32_t)npu_rd32(c + 52);
	e.act_max = (int32_t)npu_rd32(c + 56);
	e.a_mult = (int32_t)npu_rd32(c + 60);
	e.a_shift = (int32_t)npu_rd32(c + 64);
	e.b_mult = (int32_t)npu_rd32(c + 68);
	e.b_shift = (int32_t)npu_rd32(c + 72);
	e.out_mult = (int32_t)npu_rd32(c + 76);
	e.out_shift = (int32_t)npu_rd32(c + 80);
	e.left_shift = npu_rd32(c + 84);
	e.rank = npu_rd32(c + 88);
	for (int i = 0; i < 4; i++) {
		e.out_dims[i] = npu_rd32(c + 92 + 4 * i);
		e.a_dims[i] = npu_rd32(c + 108 + 4 * i);
		e.b_dims[i] = npu_rd32(c + 124 + 4 * i);
	}
	e.reserved = npu_rd32(c + 140);
	onnx = e.op == NPU_ELT_ADD_ONNX || e.op == NPU_ELT_MUL_ONNX;
	ort = e.op == NPU_ELT_ADD_ORT;
	if (onnx && (e.a_shift || e.b_shift || e.out_shift || e.left_shift ||
		     !npu_onnx_mult_valid(e.a_mult) || !npu_onnx_mult_valid(e.b_mult) ||
		     !npu_onnx_mult_valid(e.out_mult) || !e.out_mult))
		return NPU_JOB_INVALID_CMD;
	/* onnxruntime's: finite fp32 factors, an offset of 0 or 128, a mode 0..2 */
	if (ort && (e.a_zero || e.b_zero || e.out_zero || e.out_shift || e.left_shift ||
		    (e.a_shift != 0 && e.a_shift != 128) || e.b_shift < 0 || e.b_shift > 2 ||
		    !npu_onnx_mult_valid(e.a_mult) || !npu_onnx_mult_valid(e.b_mult) ||
		    ((uint32_t)e.out_mult & 0x7f800000u) == 0x7f800000u))
		return NPU_JOB_INVALID_CMD;
	if (!e.count || e.count > NPU_TENSOR_MAX_BYTES ||
	    (e.op != NPU_ELT_ADD && e.op != NPU_ELT_MUL && !onnx && !ort) ||
	    e.a_zero < -128 || e.a_zero > 127 || e.b_zero < -128 || e.b_zero > 127 ||
	    e.out_zero < -128 || e.out_zero > 127 ||
	    e.act_min < -128 || e.act_min > e.act_max || e.act_max > 127 ||
	    (!ort && (!shift_ok(e.a_shift) || !shift_ok(e.b_shift))) || !shift_ok(e.out_shift) ||
	    e.left_shift > 20 || e.reserved ||
	    !elt_strides(e.rank, e.out_dims, e.a_dims, e.b_dims, e.count, od, as, bs, &an, &bn))
		return NPU_JOB_INVALID_CMD;
	a = npu_eng_alloc(core, an);
	b = npu_eng_alloc(core, bn);
	out = npu_eng_alloc(core, e.count);
	if (!a || !b || !out)
		goto out;
	st = npu_va_rw(core, ctx, e.a, a, an, false, fault);
	if (st == NPU_JOB_OK)
		st = npu_va_rw(core, ctx, e.b, b, bn, false, fault);
	if (st != NPU_JOB_OK)
		goto out;
	/* Row by row, in as many pieces as the engine has threads. */
	row = elt_pick_row(&e);
	if (!npu_eng_split(e.count, npu_eng_threads(core, e.count >= ELT_THREAD_MIN, e.count),
			   elt_range, &(struct elt_part){ .core = core, .e = &e, .a = a, .b = b,
							  .out = out, .od = od, .as = as,
							  .bs = bs, .row = row })) {
		st = NPU_JOB_ABORTED;
		goto out;
	}
	st = npu_account(core, npu_va_rw(core, ctx, e.out, out, e.count, true, fault),
			 an + bn + e.count, 0, bytes, cycles);
out:
	free(a);
	free(b);
	free(out);
	return st;
}
