// SPDX-License-Identifier: MIT
/*
 * npu_nd.c - the tensor engine's N-d inference commands (npu_cmd_nd.h):
 * broadcast arithmetic, activations, strided copies, softmax,
 * normalisation, batched matmul of two activations, and ONNX's quantize,
 * dequantize and requantize.
 *
 * Each handler checks every field first (dims, ranks, counts, strides,
 * alignment, the bytes of each operand within NPU_TENSOR_MAX_BYTES), so a
 * hostile command fails with "bad arguments" before anything is allocated;
 * its buffers are charged to the command (npu_eng_alloc), and its loops
 * look for a stop every NPU_ND_STOP_EVERY elements, or where steps differ
 * in cost (a tap, a row, an output of a reduction) every
 * NPU_ENG_WORK_CHECK units of work (npu_eng_work): well under a
 * millisecond whatever the shape.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_cmd.h"
#include "npu_elemfn_eval.h"
#include "npu_gemm.h"
#include "npu_quant.h"
#include "npu_sgemm.h"
#include "npu_train_math.h"
#include "npu_tensor_priv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif


/* ---- helpers --------------------------------------------------------------- */

/*
 * Dims 1..NPU_TENSOR_MAX_DIM below @rank, zero past it (of @max); their
 * product in *@count, false past @limit.
 */
static bool dims_ok(const uint32_t *d, uint32_t rank, uint32_t max, uint64_t limit,
		    uint64_t *count)
{
	*count = 1;
	for (uint32_t i = 0; i < max; i++) {
		if (i < rank ? !npu_dim_ok(d[i]) : d[i] != 0)
			return false;
		if (i < rank)
			*count *= d[i];
		if (*count > limit)
			return false;
	}
	return true;
}

/*
 * An operand of dims @d broadcast to @out (each dim equal or 1): its
 * element strides in @st (0 where broadcast) and its count.
 */
static bool bcast(const uint32_t *d, const uint32_t *out, uint32_t rank, uint64_t *st,
		  uint64_t *count)
{
	uint64_t s = 1;

	for (int i = (int)rank - 1; i >= 0; i--) {
		if (d[i] != out[i] && d[i] != 1)
			return false;
		st[i] = d[i] == 1 ? 0 : s;
		s *= d[i];
	}
	for (uint32_t i = rank; i < NPU_ND_MAX_RANK; i++)
		if (d[i])
			return false;
	*count = s;
	return true;
}

/*
 * The next element of a row-major walk over @od (@rank dims, at index
 * @idx): each of @n operands' offset @at[k] moves by its element strides
 * @st[k] (0 where it broadcasts).
 */
static void walk_next(uint32_t rank, const uint32_t *od, uint64_t *idx, uint64_t *at,
		      uint64_t (*st)[NPU_ND_MAX_RANK], int n)
{
	for (int d = (int)rank - 1; d >= 0; d--) {
		for (int k = 0; k < n; k++)
			at[k] += st[k][d];
		if (++idx[d] < od[d])
			return;
		for (int k = 0; k < n; k++)
			at[k] -= st[k][d] * od[d];
		idx[d] = 0;
	}
}

static void rd_u32s(const uint8_t *c, uint32_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		v[i] = npu_rd32(c + 4 * i);
}

/*
 * Items [0, @n) of a command's loop on the engine's threads: @fn(@arg, i0,
 * i1) over pieces of about NPU_ENG_WORK_CHECK units of work (@cost units
 * an item), a stop check before each. Each item writes only its own
 * outputs, so the result is the same however the items are shared out.
 * False if the command was told to stop.
 */
struct nd_par {
	struct npu_core *core;
	void (*fn)(void *arg, uint64_t i0, uint64_t i1);
	void *arg;
	uint64_t piece;
};

static bool nd_par_run(void *arg, uint32_t t, uint64_t i0, uint64_t i1)
{
	const struct nd_par *p = arg;

	(void)t;
	for (uint64_t i = i0; i < i1; i += p->piece) {
		if (npu_eng_stop(p->core))
			return false;
		p->fn(p->arg, i, i1 - i > p->piece ? i + p->piece : i1);
	}
	return true;
}

static bool nd_parallel(struct npu_core *core, uint64_t n, uint64_t cost,
			void (*fn)(void *arg, uint64_t i0, uint64_t i1), void *arg)
{
	uint64_t piece = NPU_ENG_WORK_CHECK / (cost ? cost : 1);
	struct nd_par p = { .core = core, .fn = fn, .arg = arg, .piece = piece ? piece : 1 };

	return npu_eng_split(n, npu_eng_threads(core, n / 2 >= piece, n), nd_par_run, &p);
}

/* Bytes of an element of enum npu_nd_dtype @dt, or 0 for none. */
static uint32_t nd_size(uint32_t dt)
{
	switch (dt) {
	case NPU_ND_F32: case NPU_ND_I32: return 4;
	case NPU_ND_I8: case NPU_ND_U8: case NPU_ND_BOOL: return 1;
	case NPU_ND_I64: return 8;
	default: return 0;
	}
}

/* Integer element @i of @p (an integer dtype). */
static int64_t nd_int(const void *p, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case NPU_ND_I8: return ((const int8_t *)p)[i];
	case NPU_ND_U8: case NPU_ND_BOOL: return ((const uint8_t *)p)[i];
	case NPU_ND_I32: return ((const int32_t *)p)[i];
	default: return ((const int64_t *)p)[i];
	}
}

/* Store integer @v as element @i of @p (an integer dtype), wrapped; bool: v != 0. */
static void nd_store_int(void *p, uint32_t dt, uint64_t i, int64_t v)
{
	switch (dt) {
	case NPU_ND_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
	case NPU_ND_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPU_ND_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case NPU_ND_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
	default: ((int64_t *)p)[i] = v; break;
	}
}

/* Element @i of @p as a double: fp32 or any integer dtype. */
static double nd_num(const void *p, uint32_t dt, uint64_t i)
{
	return dt == NPU_ND_F32 ? ((const float *)p)[i] : (double)nd_int(p, dt, i);
}

/* ---- NPU_CMD_BINARY ---------------------------------------------------------- */

/* Whether @fn writes bool: the comparisons and the logic. */
static bool bool_out(uint32_t fn)
{
	return (fn >= NPU_BIN_EQUAL && fn <= NPU_BIN_GREATER_EQUAL) || fn >= NPU_BIN_AND;
}

/* One element of fn: @a and @b at their indexes into @o's element @i. */
static void binary_at(uint32_t fn, uint32_t dt, const void *a, uint64_t ai, const void *b,
		      uint64_t bi, void *o, uint64_t i)
{
	bool cmp = bool_out(fn);

	if (dt == NPU_ND_BOOL) {
		((uint8_t *)o)[i] = (uint8_t)npu_binfn_i64(fn, ((const uint8_t *)a)[ai],
						       ((const uint8_t *)b)[bi]);
		return;
	}
	if (dt == NPU_ND_F32) {
		float x = ((const float *)a)[ai], z = ((const float *)b)[bi];

		if (cmp)
			((uint8_t *)o)[i] = npu_binfn_f32(fn, x, z) != 0.0f;
		else
			((float *)o)[i] = npu_binfn_f32(fn, x, z);
		return;
	}
	if (dt == NPU_ND_I32) {
		int64_t r = npu_binfn_i64(fn, ((const int32_t *)a)[ai], ((const int32_t *)b)[bi]);

		if (cmp)
			((uint8_t *)o)[i] = (uint8_t)r;
		else
			((int32_t *)o)[i] = (int32_t)(uint32_t)(uint64_t)r;
		return;
	}
	if (cmp)
		((uint8_t *)o)[i] = (uint8_t)npu_binfn_i64(fn, ((const int64_t *)a)[ai],
						       ((const int64_t *)b)[bi]);
	else
		((int64_t *)o)[i] = npu_binfn_i64(fn, ((const int64_t *)a)[ai], ((const int64_t *)b)[bi]);
}

/*
 * @n elements of @o from @i on, @a and @b from @ai and @bi stepping @as and
 * @bs; fp32's four arithmetic ops in loops of their own (the same
 * operation per element: it vectorises), the rest element by element.
 */
static void binary_row(uint32_t fn, uint32_t dt, const void *a, uint64_t ai, uint64_t as,
		       const void *b, uint64_t bi, uint64_t bs, void *o, uint64_t i, uint64_t n)
{
	const float *x = (const float *)a + ai, *z = (const float *)b + bi;
	float *y = (float *)o + i;

	if (dt != NPU_ND_F32 || fn > NPU_BIN_DIV) {
		for (uint64_t j = 0; j < n; j++)
			binary_at(fn, dt, a, ai + j * as, b, bi + j * bs, o, i + j);
		return;
	}
	switch (fn) {
	case NPU_BIN_ADD:
		for (uint64_t j = 0; j < n; j++)
			y[j] = x[j * as] + z[j * bs];
		break;
	case NPU_BIN_SUB:
		for (uint64_t j = 0; j < n; j++)
			y[j] = x[j * as] - z[j * bs];
		break;
	case NPU_BIN_MUL:
		for (uint64_t j = 0; j < n; j++)
			y[j] = x[j * as] * z[j * bs];
		break;
	default:	/* NPU_BIN_DIV */
		for (uint64_t j = 0; j < n; j++)
			y[j] = x[j * as] / z[j * bs];
		break;
	}
}

uint32_t npu_binary_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t a_va = npu_rd64(c + 8), b_va = npu_rd64(c + 16), o_va = npu_rd64(c + 24);
	uint32_t fn = npu_rd32(c + 32), rank = npu_rd32(c + 36), dt = npu_rd32(c + 40);
	uint32_t od[NPU_ND_MAX_RANK], ad[NPU_ND_MAX_RANK], bd[NPU_ND_MAX_RANK], st, es, oes;
	uint64_t bst[2][NPU_ND_MAX_RANK], idx[NPU_ND_MAX_RANK] = { 0 }, at[2] = { 0, 0 };
	uint32_t flags = npu_rd32(c + 44);
	uint64_t on, an, bn;
	void *a = NULL, *b = NULL, *o = NULL;
	bool relu = flags & NPU_BIN_F_RELU, vec = npu_engine_avx2();

	if (size != sizeof(struct npu_cmd_binary))
		return NPU_JOB_INVALID_CMD;
	rd_u32s(c + 48, od, NPU_ND_MAX_RANK);
	rd_u32s(c + 72, ad, NPU_ND_MAX_RANK);
	rd_u32s(c + 96, bd, NPU_ND_MAX_RANK);
	es = dt == NPU_ND_I64 ? 8 : dt == NPU_ND_BOOL ? 1 : 4;
	oes = bool_out(fn) ? 1 : es;
	if (!npu_in_range(fn, NPU_BIN_ADD, NPU_BIN_XOR) || (flags & ~NPU_BIN_F_RELU) ||
	    (relu && (dt != NPU_ND_F32 || fn > NPU_BIN_POW)) ||
	    (dt != NPU_ND_F32 && dt != NPU_ND_I32 && dt != NPU_ND_I64 && dt != NPU_ND_BOOL) ||
	    (dt != NPU_ND_F32 && fn == NPU_BIN_POW) ||
	    ((dt == NPU_ND_BOOL) != (fn >= NPU_BIN_AND)) ||
	    !npu_in_range(rank, 1, NPU_ND_MAX_RANK) ||
	    !dims_ok(od, rank, NPU_ND_MAX_RANK, NPU_TENSOR_MAX_BYTES / es, &on) ||
	    !bcast(ad, od, rank, bst[0], &an) || !bcast(bd, od, rank, bst[1], &bn) ||
	    (a_va | b_va) % (es < 4 ? es : 4) || o_va % (oes < 4 ? oes : 4))
		return NPU_JOB_INVALID_CMD;
	if ((st = npu_nd_load(core, a_va, es * an, &a, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, b_va, es * bn, &b, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	o = npu_eng_alloc(core, oes * on);
	if (!o)
		goto out;
	/* Row by row along the innermost dim, where each input steps 0 or 1. */
	for (uint64_t i = 0, since = 0, row = od[rank - 1]; i < on; i += row) {
		since += row;
		if (since >= NPU_ND_STOP_EVERY) {
			since = 0;
			if (npu_eng_stop(core)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
		}
		binary_row(fn, dt, a, at[0], bst[0][rank - 1], b, at[1], bst[1][rank - 1], o, i, row);
		if (relu)
			npu_f32_epilogue((float *)o + i, NULL, true, NULL, (uint32_t)row, vec);
		for (int k = 0; k < 2; k++)	/* to the row's last element, then on */
			at[k] += bst[k][rank - 1] * (row - 1);
		idx[rank - 1] = row - 1;
		walk_next(rank, od, idx, at, bst, 2);
	}
	st = npu_nd_store(core, o_va, o, oes * on, fault);
	npu_account(core, st, es * (an + bn) + oes * on,
		    npu_vec_cycles(core, on, fn == NPU_BIN_POW ? 8 : 1), bytes, cycles);
out:
	free(a);
	free(b);
	free(o);
	return st;
}

/* ---- NPU_CMD_ACTIVATION ------------------------------------------------------ */

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The leading elements of @x (@n of them, in place) for ReLU and Clip,
 * eight at a time; how many it did. The scalar code's comparisons (NaN
 * compares false: ReLU gives 0, Clip keeps it; -0 stays -0 in Clip).
 */
__attribute__((target("avx2")))
static uint32_t act_avx2(uint32_t fn, float *x, uint32_t n, float lo, float hi)
{
	const __m256 z = _mm256_setzero_ps(), vl = _mm256_set1_ps(lo), vh = _mm256_set1_ps(hi);
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);

		if (fn == NPU_ACTFN_RELU) {
			v = _mm256_and_ps(_mm256_cmp_ps(v, z, _CMP_GT_OQ), v);
		} else {
			v = _mm256_blendv_ps(v, vh, _mm256_cmp_ps(v, vh, _CMP_GT_OQ));
			v = _mm256_blendv_ps(v, vl, _mm256_cmp_ps(v, vl, _CMP_LT_OQ));
		}
		_mm256_storeu_ps(x + i, v);
	}
	return i;
}
#endif

/* A table lookup or one fp32 operation: a vector lane's cycle; transcendentals take 4. */
static bool act_cheap(uint32_t fn)
{
	return fn == NPU_ACTFN_TABLE || fn == NPU_ACTFN_THRESHOLDED_RELU ||
	       (fn >= NPU_ACTFN_RECIPROCAL && fn <= NPU_ACTFN_SIGN);
}

struct act_job {
	uint32_t fn;
	float alpha, beta, lo, hi;
	const uint8_t *table;
	void *x;
};

static void act_range(void *arg, uint64_t i0, uint64_t i1)
{
	const struct act_job *j = arg;

	for (uint64_t i = i0; i < i1; i++) {
		if (j->fn == NPU_ACTFN_TABLE)
			((uint8_t *)j->x)[i] = j->table[((uint8_t *)j->x)[i]];
		else
			((float *)j->x)[i] = npu_actfn_eval(j->fn, ((float *)j->x)[i], j->alpha, j->beta,
						     j->lo, j->hi);
	}
}

uint32_t npu_activation_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			    uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16), t_va = npu_rd64(c + 24);
	uint32_t count = npu_rd32(c + 32), fn = npu_rd32(c + 36), prm[4], st, esz;
	float alpha, beta, lo, hi;
	uint8_t table[256];
	void *x = NULL;
	bool vec;

	if (size != sizeof(struct npu_cmd_activation))
		return NPU_JOB_INVALID_CMD;
	rd_u32s(c + 40, prm, 4);
	alpha = npu_f32_from_bits(prm[0]);
	beta = npu_f32_from_bits(prm[1]);
	lo = npu_f32_from_bits(prm[2]);
	hi = npu_f32_from_bits(prm[3]);
	esz = fn == NPU_ACTFN_TABLE ? 1 : 4;
	if (!count || count > NPU_MAX_F32 || (fn != NPU_ACTFN_TABLE && !npu_in_range(fn, 1, NPU_ACTFN_NUM - 1)))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 4; i++)	/* unused parameters are 0 */
		if (!(npu_actfn_params(fn) >> i & 1) && prm[i])
			return NPU_JOB_INVALID_CMD;
	if ((npu_actfn_params(fn) & 3) && (!npu_f32_bits_finite(prm[0]) || !npu_f32_bits_finite(prm[1])))
		return NPU_JOB_INVALID_CMD;
	if (fn == NPU_ACTFN_CLIP && !(lo <= hi))
		return NPU_JOB_INVALID_CMD;	/* NaN bounds fail too */
	if (fn == NPU_ACTFN_CELU && alpha == 0)
		return NPU_JOB_INVALID_CMD;
	if (fn == NPU_ACTFN_TABLE ? !t_va : t_va || (in_va | out_va) & 3)
		return NPU_JOB_INVALID_CMD;
	if (fn == NPU_ACTFN_TABLE &&
	    (st = npu_va_rw(core, core->eng.run.ctx, t_va, table, 256, false, fault)) != NPU_JOB_OK)
		return st;
	st = npu_nd_load(core, in_va, (uint64_t)count * esz, &x, fault);
	if (st != NPU_JOB_OK)
		goto out;
	vec = (fn == NPU_ACTFN_RELU || fn == NPU_ACTFN_CLIP) && npu_engine_avx2();
#if defined(__x86_64__) && defined(__GNUC__)
	/* Vector rows: a stop check per piece, its tail element by element. */
	for (uint32_t i0 = 0; vec && i0 < count; i0 += NPU_ND_STOP_EVERY) {
		uint32_t n = count - i0 < NPU_ND_STOP_EVERY ? count - i0 : NPU_ND_STOP_EVERY;

		if (npu_eng_stop(core)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint32_t i = i0 + act_avx2(fn, (float *)x + i0, n, lo, hi); i < i0 + n; i++)
			((float *)x)[i] = npu_actfn_eval(fn, ((float *)x)[i], alpha, beta, lo, hi);
	}
#endif
	if (!vec) {	/* in place, element by element, on the engine's threads */
		struct act_job j = { fn, alpha, beta, lo, hi, table, x };

		if (!nd_parallel(core, count, act_cheap(fn) ? 1 : 32, act_range, &j)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
	}
	st = npu_nd_store(core, out_va, x, (uint64_t)count * esz, fault);
	npu_account(core, st, 2ull * count * esz,
		    npu_vec_cycles(core, count, act_cheap(fn) ? 1 : 4),
		    bytes, cycles);
out:
	free(x);
	return st;
}

/* ---- NPU_CMD_COPY ------------------------------------------------------------ */

uint32_t npu_copy_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		      uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16), in_count = npu_rd64(c + 32);
	int64_t off = (int64_t)npu_rd64(c + 24), st_[NPU_COPY_MAX_RANK], lo, hi, pos;
	uint32_t rank = npu_rd32(c + 40), es = npu_rd32(c + 44), dims[NPU_COPY_MAX_RANK], st;
	uint32_t idx[NPU_COPY_MAX_RANK] = { 0 };
	uint64_t count;
	uint8_t *src = NULL, *dst = NULL;

	if (size != sizeof(struct npu_cmd_copy))
		return NPU_JOB_INVALID_CMD;
	rd_u32s(c + 48, dims, NPU_COPY_MAX_RANK);
	for (int i = 0; i < NPU_COPY_MAX_RANK; i++)
		st_[i] = (int64_t)npu_rd64(c + 96 + 8 * i);
	if ((es != 1 && es != 2 && es != 4 && es != 8) || !npu_in_range(rank, 1, NPU_COPY_MAX_RANK) ||
	    !dims_ok(dims, rank, NPU_COPY_MAX_RANK, NPU_TENSOR_MAX_BYTES / es, &count) ||
	    !in_count || in_count > NPU_TENSOR_MAX_BYTES / es || (in_va | out_va) % (es < 4 ? es : 4))
		return NPU_JOB_INVALID_CMD;
	/* The elements it reads: [lo, hi], all inside the input. */
	lo = hi = off;
	if (off < 0 || (uint64_t)off >= in_count)
		return NPU_JOB_INVALID_CMD;
	for (uint32_t d = 0; d < NPU_COPY_MAX_RANK; d++) {
		if (d >= rank ? st_[d] != 0 :
		    dims[d] > 1 && (st_[d] > (int64_t)in_count || st_[d] < -(int64_t)in_count))
			return NPU_JOB_INVALID_CMD;
		if (d < rank && dims[d] > 1) {
			if (st_[d] < 0)
				lo += st_[d] * (int64_t)(dims[d] - 1);
			else
				hi += st_[d] * (int64_t)(dims[d] - 1);
		}
	}
	if (lo < 0 || (uint64_t)hi >= in_count)
		return NPU_JOB_INVALID_CMD;
	st = npu_nd_load(core, in_va + (uint64_t)lo * es, (uint64_t)(hi - lo + 1) * es, (void **)&src,
		     fault);
	if (st != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	dst = npu_eng_alloc(core, count * es);
	if (!dst)
		goto out;
	pos = off - lo;
	for (uint64_t o = 0; o < count; o++) {
		if (npu_nd_stop(core, o)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		memcpy(dst + o * es, src + (uint64_t)pos * es, es);
		for (int d = (int)rank - 1; d >= 0; d--) {
			pos += st_[d];
			if (++idx[d] < dims[d])
				break;
			pos -= st_[d] * dims[d];
			idx[d] = 0;
		}
	}
	st = npu_nd_store(core, out_va, dst, count * es, fault);
	npu_account(core, st, (uint64_t)(hi - lo + 1) * es + count * es, 0, bytes, cycles);
out:
	free(src);
	free(dst);
	return st;
}

/* ---- NPU_CMD_SOFTMAX ---------------------------------------------------------- */

struct smax_job {
	float *x;
	const float *mask;
	uint32_t axis, inner, m_div, m_rows;
	bool log;
};

/* Rows at most this long are computed whole between stop checks, their exponentials kept. */
#define SMAX_SHORT_ROW	4096

/*
 * Softmax row @r in place: the sums in double, each exponential computed
 * once where @e has room for the row (the same value either way). With
 * @core, a stop check every NPU_ND_STOP_EVERY elements; false if told to.
 */
static bool smax_row(const struct smax_job *j, uint64_t r, struct npu_core *core, double *e)
{
	float *v = j->x + r / j->inner * j->axis * j->inner + r % j->inner;
	uint64_t in = j->inner;
	double mx = -INFINITY, sum = 0;

	if (j->mask) {	/* the mask added as ONNX's Add does it: in fp32 */
		const float *m = j->mask + (r / j->m_div) % j->m_rows * j->axis;

		for (uint32_t a = 0; a < j->axis; a++)
			v[a] += m[a];
	}
	for (uint32_t a = 0; a < j->axis; a++) {
		if (core && npu_nd_stop(core, a))
			return false;
		mx = v[a * in] > mx ? v[a * in] : mx;
	}
	for (uint32_t a = 0; a < j->axis; a++) {
		double x = exp((double)v[a * in] - mx);

		if (core && npu_nd_stop(core, a))
			return false;
		if (e)
			e[a] = x;
		sum += x;
	}
	for (uint32_t a = 0; a < j->axis; a++) {
		double d = (double)v[a * in] - mx;

		if (core && npu_nd_stop(core, a))
			return false;
		v[a * in] = (float)(j->log ? d - log(sum) : (e ? e[a] : exp(d)) / sum);
	}
	return true;
}

static void smax_rows(void *arg, uint64_t r0, uint64_t r1)
{
	double e[SMAX_SHORT_ROW];

	for (uint64_t r = r0; r < r1; r++)
		smax_row(arg, r, NULL, e);
}

uint32_t npu_softmax_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			 uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16), total, m_va = 0;
	uint32_t outer = npu_rd32(c + 24), axis = npu_rd32(c + 28), inner = npu_rd32(c + 32);
	uint32_t flags = npu_rd32(c + 36), st, m_div = 0, m_rows = 0;
	float *x = NULL, *mask = NULL;

	if (size != sizeof(struct npu_cmd_softmax) && size != NPU_CMD_SOFTMAX_SIZE_NOMASK)
		return NPU_JOB_INVALID_CMD;
	if (size == sizeof(struct npu_cmd_softmax)) {
		m_va = npu_rd64(c + 40);
		m_div = npu_rd32(c + 48);
		m_rows = npu_rd32(c + 52);
	}
	if (!npu_prod4(outer, axis, inner, 1, NPU_MAX_F32, &total) || !outer || !axis || !inner ||
	    (flags & ~NPU_SOFTMAX_LOG) || (in_va | out_va | m_va) & 3 ||
	    (m_va ? inner != 1 || !m_div || !m_rows || m_rows > outer : m_div || m_rows))
		return NPU_JOB_INVALID_CMD;
	st = npu_nd_load(core, in_va, 4 * total, (void **)&x, fault);
	if (st == NPU_JOB_OK && m_va)
		st = npu_nd_load(core, m_va, 4ull * m_rows * axis, (void **)&mask, fault);
	if (st != NPU_JOB_OK)
		goto out;
	{
		struct smax_job j = { x, mask, axis, inner, m_div, m_rows, flags & NPU_SOFTMAX_LOG };
		uint64_t rows = (uint64_t)outer * inner;

		if (axis <= SMAX_SHORT_ROW) {	/* rows on the engine's threads */
			if (!nd_parallel(core, rows, 64ull * axis, smax_rows, &j))
				goto aborted;
		} else {			/* long rows: stop checks within each */
			for (uint64_t r = 0; r < rows; r++)
				if (!smax_row(&j, r, core, NULL))
					goto aborted;
		}
	}
	st = npu_nd_store(core, out_va, x, 4 * total, fault);
	npu_account(core, st, 8 * total + (mask ? 4ull * m_rows * axis : 0),
		    npu_vec_cycles(core, total, mask ? 7 : 6), bytes, cycles);
	goto out;
aborted:
	st = NPU_JOB_ABORTED;
out:
	free(x);
	free(mask);
	return st;
}

/* ---- NPU_CMD_NORM ------------------------------------------------------------- */

/*
 * The end of ONNX's QuantizeLinear: an already rounded @v plus zero point
 * @z (NaN giving @z), saturated to [@lo, @hi]. NPU_CMD_QDQ's and
 * NPU_CMD_NORM's 8-bit output.
 */
static int64_t qdq_round(float v, int64_t z, int64_t lo, int64_t hi)
{
	double q = isnan(v) ? (double)z : (double)v + (double)z;

	return q < lo ? lo : q > hi ? hi : (int64_t)q;
}

/* An 8-bit side of NPU_CMD_NORM: its dtype, scale and zero point valid. */
static bool norm_q8_ok(uint32_t dt, uint32_t s_bits, int32_t zp)
{
	float s = npu_f32_from_bits(s_bits);

	if (dt == NPU_ND_F32 || !dt)
		return !s_bits && !zp;
	return (dt == NPU_ND_I8 ? zp >= -128 && zp <= 127 :
		dt == NPU_ND_U8 && zp >= 0 && zp <= 255) &&
	       npu_f32_bits_finite(s_bits) && s > 0;
}


uint32_t npu_norm_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		      uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va[6], total;
	uint32_t rows = npu_rd32(c + 56), norm = npu_rd32(c + 60), eps_bits = npu_rd32(c + 64);
	uint32_t flags = npu_rd32(c + 68), st, xdt = 0, ydt = 0, xs_b = 0, ys_b = 0;
	int32_t xz = 0, yz = 0;
	bool rms = flags & NPU_NORM_RMS, x8, y8;
	float *x = NULL, *scale = NULL, *bias = NULL, *stats = NULL, eps, xs, ys;
	uint8_t *raw = NULL;

	if (size != sizeof(struct npu_cmd_norm) && size != NPU_CMD_NORM_SIZE_F32)
		return NPU_JOB_INVALID_CMD;
	if (size == sizeof(struct npu_cmd_norm)) {
		xdt = npu_rd32(c + 72);
		ydt = npu_rd32(c + 76);
		xs_b = npu_rd32(c + 80);
		ys_b = npu_rd32(c + 84);
		xz = (int32_t)npu_rd32(c + 88);
		yz = (int32_t)npu_rd32(c + 92);
	}
	x8 = xdt && xdt != NPU_ND_F32;
	y8 = ydt && ydt != NPU_ND_F32;
	xs = npu_f32_from_bits(xs_b);
	ys = npu_f32_from_bits(ys_b);
	for (int i = 0; i < 6; i++)	/* in, scale, bias, out, mean, inv_std */
		va[i] = npu_rd64(c + 8 + 8 * i);
	eps = npu_f32_from_bits(eps_bits);
	if (!rows || !npu_dim_ok(norm) || !npu_prod4(rows, norm, 1, 1, NPU_MAX_F32, &total) ||
	    (flags & ~NPU_NORM_RMS) || !npu_f32_bits_finite(eps_bits) || eps < 0 || !va[1] ||
	    (rms && (va[4] || va[5])) || !norm_q8_ok(xdt, xs_b, xz) || !norm_q8_ok(ydt, ys_b, yz) ||
	    ((x8 ? 0 : va[0]) | va[1] | va[2] | (y8 ? 0 : va[3]) | va[4] | va[5]) & 3)
		return NPU_JOB_INVALID_CMD;
	if (x8) {	/* dequantized into fp32 as ONNX's DequantizeLinear */
		x = npu_eng_alloc(core, 4 * total);
		st = x ? npu_nd_load(core, va[0], total, (void **)&raw, fault) : NPU_JOB_INVALID_CMD;
		for (uint64_t i = 0; st == NPU_JOB_OK && i < total; i++) {
			if (npu_nd_stop(core, i))
				st = NPU_JOB_ABORTED;
			x[i] = (float)(nd_int(raw, xdt, i) - xz) * xs;
		}
	} else {
		st = npu_nd_load(core, va[0], 4 * total, (void **)&x, fault);
	}
	if (st != NPU_JOB_OK ||
	    (st = npu_nd_load(core, va[1], 4ull * norm, (void **)&scale, fault)) != NPU_JOB_OK ||
	    (va[2] && (st = npu_nd_load(core, va[2], 4ull * norm, (void **)&bias, fault)) != NPU_JOB_OK))
		goto out;
	st = NPU_JOB_INVALID_CMD;
	stats = npu_eng_alloc(core, 8ull * rows);
	if (!stats || (y8 && !raw && !(raw = npu_eng_alloc(core, total))))
		goto out;
	for (uint32_t r = 0; r < rows; r++) {
		float *v = x + (uint64_t)r * norm;
		double m = 0, var = 0, inv;

		if (npu_eng_stop(core)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint32_t i = 0; i < norm; i++)
			m += rms ? (double)v[i] * v[i] : v[i];
		m /= norm;
		if (!rms) {
			for (uint32_t i = 0; i < norm; i++)
				var += ((double)v[i] - m) * ((double)v[i] - m);
			var /= norm;
		}
		inv = 1.0 / sqrt((rms ? m : var) + (double)eps);
		for (uint32_t i = 0; i < norm; i++)
			v[i] = (float)(((double)v[i] - (rms ? 0 : m)) * inv * scale[i] +
				       (bias ? bias[i] : 0.0));
		stats[r] = (float)m;
		stats[rows + r] = (float)inv;
	}
	if (y8) {
		int64_t lo = ydt == NPU_ND_I8 ? -128 : 0;

		for (uint64_t i = 0; i < total; i++) {	/* QDQ's quantize */
			if (npu_nd_stop(core, i)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
			nd_store_int(raw, ydt, i, qdq_round(rintf(x[i] / ys), yz, lo, lo + 255));
		}
		st = npu_nd_store(core, va[3], raw, total, fault);
	} else {
		st = npu_nd_store(core, va[3], x, 4 * total, fault);
	}
	if (st == NPU_JOB_OK && va[4])
		st = npu_nd_store(core, va[4], stats, 4ull * rows, fault);
	if (st == NPU_JOB_OK && va[5])
		st = npu_nd_store(core, va[5], stats + rows, 4ull * rows, fault);
	npu_account(core, st, (x8 ? 1 : 4) * total + (y8 ? 1 : 4) * total + 8ull * norm,
		    npu_vec_cycles(core, total, 5 + x8 + y8), bytes, cycles);
out:
	free(x);
	free(raw);
	free(scale);
	free(bias);
	free(stats);
	return st;
}

/* ---- NPU_CMD_MATMUL ----------------------------------------------------------- */

struct mm {
	uint64_t va[5];			/* a, b, a_zp, b_zp, out */
	uint32_t m, n, k, brank, adt, bdt, azp_n, bzp_n, flags, alpha;
	uint32_t ob[NPU_ND_MAX_RANK], ab[NPU_ND_MAX_RANK], bb[NPU_ND_MAX_RANK];
};

static bool mm_dt8(uint32_t dt)
{
	return dt == NPU_ND_I8 || dt == NPU_ND_U8;
}

/* A zero point: none (count 0, no address), per tensor (1) or per row/column (@n). */
static bool mm_zp_ok(uint64_t va, uint32_t count, uint32_t n, bool int8)
{
	return va ? int8 && (count == 1 || count == n) : count == 0;
}

/* The zero point of row (A) or column (B) @i: none, one per tensor, or one each. */
static int64_t mm_zp(const uint8_t *zp, uint32_t dt, uint32_t count, uint32_t i)
{
	return zp ? nd_int(zp, dt, count == 1 ? 0 : i) : 0;
}

/*
 * The operands as npu_matmul.c takes them, A [m][k] and B [k][n] per
 * matrix: fp32 A as it is when not transposed (*@la NULL: read @a), else
 * an fp32 copy (transposed, bf16 widened: exact), and B as doubles (each
 * float exactly; every row block reads all of B); 8-bit values less their
 * zero points as int32. NPU_JOB_OK, or why not.
 */
static uint32_t mm_layout(struct npu_core *core, const struct mm *p, bool f32, bool bf,
		      const uint8_t *a, const uint8_t *b, const uint8_t *azp, const uint8_t *bzp,
		      uint64_t na, uint64_t nbb, void **la, void **lb)
{
	bool ta = p->flags & NPU_MATMUL_TRANS_A, tb = p->flags & NPU_MATMUL_TRANS_B;
	uint64_t mk = (uint64_t)p->m * p->k, kn = (uint64_t)p->k * p->n, e = 0;

	if (f32 && !bf && !ta)
		*la = NULL;
	else if (!(*la = npu_eng_alloc(core, 4 * na * mk)))
		return NPU_JOB_INVALID_CMD;
	if (!(*lb = npu_eng_alloc(core, (f32 ? 8 : 4) * nbb * kn)))
		return NPU_JOB_INVALID_CMD;
	for (uint64_t t = 0; *la && t < na; t++)
		for (uint32_t i = 0; i < p->m; i++)
			for (uint32_t l = 0; l < p->k; l++, e++) {
				uint64_t src = t * mk + (ta ? (uint64_t)l * p->m + i :
							       (uint64_t)i * p->k + l);

				if (npu_nd_stop(core, e))
					return NPU_JOB_ABORTED;
				if (bf)
					((float *)*la)[e] = npu_bf16_to_f32(((const uint16_t *)a)[src]);
				else if (f32)
					((float *)*la)[e] = ((const float *)a)[src];
				else
					((int32_t *)*la)[e] = (int32_t)(nd_int(a, p->adt, src) -
									mm_zp(azp, p->adt, p->azp_n, i));
			}
	e = 0;
	for (uint64_t t = 0; *lb && t < nbb; t++)
		for (uint32_t l = 0; l < p->k; l++)
			for (uint32_t j = 0; j < p->n; j++, e++) {
				uint64_t src = t * kn + (tb ? (uint64_t)j * p->k + l :
							       (uint64_t)l * p->n + j);

				if (npu_nd_stop(core, e))
					return NPU_JOB_ABORTED;
				if (bf)
					((double *)*lb)[e] = npu_bf16_to_f32(((const uint16_t *)b)[src]);
				else if (f32)
					((double *)*lb)[e] = ((const float *)b)[src];
				else
					((int32_t *)*lb)[e] = (int32_t)(nd_int(b, p->bdt, src) -
									mm_zp(bzp, p->bdt, p->bzp_n, j));
			}
	return NPU_JOB_OK;
}

uint32_t npu_matmul_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct mm p;
	uint32_t u[10];
	uint64_t bst[2][NPU_ND_MAX_RANK], idx[NPU_ND_MAX_RANK] = { 0 }, at[2] = { 0, 0 };
	uint64_t nb = 1, na, nbb, mk, kn, mn, macs;
	uint32_t st, aes, bes, ones[NPU_ND_MAX_RANK] = { 0 };
	uint8_t *a = NULL, *b = NULL, *azp = NULL, *bzp = NULL;
	void *o = NULL, *la = NULL, *lb = NULL;
	uint64_t *mat = NULL;
	bool f32, bf;
	float alpha;

	if (size != sizeof(struct npu_cmd_matmul))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 5; i++)
		p.va[i] = npu_rd64(c + 8 + 8 * i);
	rd_u32s(c + 48, u, 10);
	p.m = u[0];
	p.n = u[1];
	p.k = u[2];
	p.brank = u[3];
	p.adt = u[4];
	p.bdt = u[5];
	p.azp_n = u[6];
	p.bzp_n = u[7];
	p.flags = u[8];
	p.alpha = u[9];
	rd_u32s(c + 88, p.ob, NPU_ND_MAX_RANK);
	rd_u32s(c + 112, p.ab, NPU_ND_MAX_RANK);
	rd_u32s(c + 136, p.bb, NPU_ND_MAX_RANK);
	bf = p.adt == NPU_ND_BF16 && p.bdt == NPU_ND_BF16;	/* products in fp32 as fp32's */
	f32 = (p.adt == NPU_ND_F32 && p.bdt == NPU_ND_F32) || bf;
	aes = bf ? 2 : f32 ? 4 : 1;
	bes = aes;
	alpha = npu_f32_from_bits(p.alpha);
	/* brank 0 has one batch: the rank-1 bcast() below sees dims of 1. */
	if (!p.brank)
		ones[0] = 1;
	if (!npu_dim_ok(p.m) || !npu_dim_ok(p.n) || !npu_dim_ok(p.k) || p.brank > NPU_ND_MAX_RANK ||
	    (p.flags & ~(NPU_MATMUL_TRANS_A | NPU_MATMUL_TRANS_B)) ||
	    !(f32 || (mm_dt8(p.adt) && mm_dt8(p.bdt))) || !npu_f32_bits_finite(p.alpha) ||
	    (!f32 && alpha != 1.0f) ||
	    !mm_zp_ok(p.va[2], p.azp_n, p.m, !f32) || !mm_zp_ok(p.va[3], p.bzp_n, p.n, !f32) ||
	    !dims_ok(p.brank ? p.ob : ones, p.brank ? p.brank : 1, NPU_ND_MAX_RANK, NPU_MAX_F32, &nb) ||
	    !bcast(p.brank ? p.ab : ones, p.brank ? p.ob : ones, p.brank ? p.brank : 1, bst[0], &na) ||
	    !bcast(p.brank ? p.bb : ones, p.brank ? p.ob : ones, p.brank ? p.brank : 1, bst[1], &nbb) ||
	    (f32 && (p.va[0] | p.va[1]) & (aes - 1)) || p.va[4] & 3)
		return NPU_JOB_INVALID_CMD;
	mk = (uint64_t)p.m * p.k;
	kn = (uint64_t)p.k * p.n;
	mn = (uint64_t)p.m * p.n;
	macs = nb * mn;
	if (na * mk * aes > NPU_TENSOR_MAX_BYTES || nbb * kn * bes > NPU_TENSOR_MAX_BYTES ||
	    nb * mn * 4 > NPU_TENSOR_MAX_BYTES || macs > NPU_TENSOR_MAX_MACS / p.k)
		return NPU_JOB_INVALID_CMD;
	macs *= p.k;
	if (!npu_eng_charge_macs(core, macs))
		return NPU_JOB_LIMIT;
	if ((st = npu_nd_load(core, p.va[0], na * mk * aes, (void **)&a, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, p.va[1], nbb * kn * bes, (void **)&b, fault)) != NPU_JOB_OK ||
	    (p.va[2] && (st = npu_nd_load(core, p.va[2], p.azp_n, (void **)&azp, fault)) != NPU_JOB_OK) ||
	    (p.va[3] && (st = npu_nd_load(core, p.va[3], p.bzp_n, (void **)&bzp, fault)) != NPU_JOB_OK))
		goto out;
	st = NPU_JOB_INVALID_CMD;
	o = npu_eng_alloc(core, 4 * nb * mn);
	mat = npu_eng_alloc(core, 16 * nb);
	if (!o || !mat ||
	    (st = mm_layout(core, &p, f32, bf, a, b, azp, bzp, na, nbb, &la, &lb)) != NPU_JOB_OK)
		goto out;
	for (uint64_t bi = 0; bi < nb; bi++) {	/* each output matrix's operands */
		mat[bi] = at[0];
		mat[nb + bi] = at[1];
		walk_next(p.brank ? p.brank : 1, p.brank ? p.ob : ones, idx, at, bst, 2);
	}
	{
		struct npu_mm mm = { .m = p.m, .n = p.n, .k = p.k, .nb = nb, .amat = mat,
				     .bmat = mat + nb, .a = la ? la : a, .b = lb, .out = o,
				     .integer = !f32, .alpha = alpha };

		st = npu_mm_run(core, &mm);
		if (st != NPU_JOB_OK)
			goto out;
	}
	st = npu_nd_store(core, p.va[4], o, 4 * nb * mn, fault);
	if (st == NPU_JOB_OK) {
		/* the array's int8 MACs a cycle; bf16 at half that, fp32 a quarter */
		uint64_t per = (uint64_t)core->cfg.mac_rows * core->cfg.mac_cols /
			       (bf ? 2 : f32 ? 4 : 1);

		npu_account(core, st, na * mk * aes + nbb * kn * bes + 4 * nb * mn,
			    (macs + per - 1) / (per ? per : 1), bytes, cycles);
	}
out:
	free(a);
	free(b);
	free(azp);
	free(bzp);
	free(o);
	free(mat);
	free(la);
	free(lb);
	return st;
}

/* ---- NPU_CMD_QDQ --------------------------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * Elements [0, @n) of a run that shares scale @s and zero point @z,
 * eight at a time, for 8-bit quantize and dequantize; returns how many
 * it did. The scalar code's arithmetic: a correctly rounded divide,
 * rounding half to even (rintf in the default mode), NaN to the zero
 * point, the clamp (exact: an integer of fp32 past 2^24 clamps either
 * way), and an exact int-to-float then one multiply.
 */
__attribute__((target("avx2")))
static uint64_t qdq_avx2(uint32_t mode, uint32_t qdt, const void *x, void *y, uint64_t n,
			 float s, int32_t z)
{
	const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps((float)z);
	const __m256 lo = _mm256_set1_ps(qdt == NPU_ND_I8 ? -128.0f : 0.0f);
	const __m256 hi = _mm256_set1_ps(qdt == NPU_ND_I8 ? 127.0f : 255.0f);
	const __m256i iz = _mm256_set1_epi32(z);
	uint64_t i = 0;

	if (mode == NPU_QDQ_DEQUANTIZE) {
		for (; i + 8 <= n; i += 8) {
			__m128i b = _mm_loadl_epi64((const __m128i *)((const uint8_t *)x + i));
			__m256i v = qdt == NPU_ND_I8 ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);

			_mm256_storeu_ps((float *)y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(
				_mm256_sub_epi32(v, iz)), vs));
		}
		return i;
	}
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps((const float *)x + i), vs),
					   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m256 t = _mm256_blendv_ps(_mm256_add_ps(v, vz), vz,
					    _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
		__m256i q = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(t, lo), hi));
		__m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q),
					    _mm256_extracti128_si256(q, 1));

		w = qdt == NPU_ND_I8 ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
		_mm_storel_epi64((__m128i *)((uint8_t *)y + i), w);
	}
	return i;
}
#endif

/* Whether qdq_avx2 serves @mode on @qdt here: the engine's ISA is not C, the host has AVX2. */
static bool qdq_vec(uint32_t mode, uint32_t qdt)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return (mode == NPU_QDQ_QUANTIZE || mode == NPU_QDQ_DEQUANTIZE) &&
	       (qdt == NPU_ND_I8 || qdt == NPU_ND_U8) && npu_engine_avx2();
#else
	(void)mode;
	(void)qdt;
	return false;
#endif
}

uint32_t npu_qdq_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		     uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), s_va = npu_rd64(c + 16), zp_va = npu_rd64(c + 24);
	uint64_t out_va = npu_rd64(c + 32), total;
	uint32_t mode = npu_rd32(c + 40), qdt = npu_rd32(c + 44), outer = npu_rd32(c + 48);
	uint32_t axis = npu_rd32(c + 52), inner = npu_rd32(c + 56), st, ies, oes;
	int64_t lo = qdt == NPU_ND_I8 ? -128 : qdt == NPU_ND_U8 ? 0 : INT32_MIN;
	int64_t hi = qdt == NPU_ND_I8 ? 127 : qdt == NPU_ND_U8 ? 255 : INT32_MAX;
	bool q31 = mode == NPU_QDQ_REQUANTIZE_Q31, vec;
	float *scale = NULL;
	void *x = NULL, *y = NULL, *zp = NULL;

	if (size != sizeof(struct npu_cmd_qdq))
		return NPU_JOB_INVALID_CMD;
	if (!npu_in_range(mode, NPU_QDQ_DEQUANTIZE, NPU_QDQ_REQUANTIZE_Q31) ||
	    !(qdt == NPU_ND_I8 || qdt == NPU_ND_U8 || (qdt == NPU_ND_I32 && mode == NPU_QDQ_DEQUANTIZE)) ||
	    !outer || !axis || !inner || !npu_prod4(outer, axis, inner, 1, NPU_MAX_F32, &total) ||
	    npu_rd32(c + 60) || s_va & 3 || zp_va % nd_size(qdt))
		return NPU_JOB_INVALID_CMD;
	ies = mode == NPU_QDQ_DEQUANTIZE ? nd_size(qdt) : 4;
	oes = mode == NPU_QDQ_DEQUANTIZE ? 4 : nd_size(qdt);
	if (in_va % ies || out_va % oes)
		return NPU_JOB_INVALID_CMD;
	/* TFLite's multiplier and shift are two words per entry, a scale one */
	if ((st = npu_nd_load(core, s_va, (q31 ? 8ull : 4ull) * axis, (void **)&scale, fault)) !=
	    NPU_JOB_OK ||
	    (zp_va && (st = npu_nd_load(core, zp_va, (uint64_t)axis * nd_size(qdt), &zp, fault)) !=
	     NPU_JOB_OK) ||
	    (st = npu_nd_load(core, in_va, total * ies, &x, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	for (uint32_t a = 0; a < axis; a++) {
		int32_t shift = q31 ? (int32_t)npu_rd32((const uint8_t *)scale + 8ull * a + 4) : 0;

		if (npu_nd_stop(core, a)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		if (q31 ? shift < -31 || shift > 30 : !(scale[a] > 0) || !isfinite(scale[a]))
			goto out;
	}
	y = npu_eng_alloc(core, total * oes);
	if (!y)
		goto out;
	vec = qdq_vec(mode, qdt);
	if (axis == 1)		/* one scale for all: one run, however it was cut */
		inner = (uint32_t)total;
	/* Runs of @inner elements share an axis entry: its scale and zero point. */
	for (uint64_t e0 = 0; e0 < total; e0 += inner) {
		uint32_t a = (uint32_t)(e0 / inner % axis);
		int64_t z = zp ? nd_int(zp, qdt, a) : 0;
		uint64_t e = e0;

		/* the vector rows first, a stop check between pieces of them */
		while (vec && e0 + inner - e >= 8) {
			uint64_t n = e0 + inner - e < NPU_ND_STOP_EVERY ? e0 + inner - e
									 : NPU_ND_STOP_EVERY;

			if (npu_eng_stop(core)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
#if defined(__x86_64__) && defined(__GNUC__)
			e += qdq_avx2(mode, qdt, (const uint8_t *)x + e * ies, (uint8_t *)y + e * oes,
				      n, scale[a], (int32_t)z);
#endif
		}
		for (; e < e0 + inner; e++) {
			int64_t r;

			if (npu_nd_stop(core, e)) {
				st = NPU_JOB_ABORTED;
				goto out;
			}
			if (mode == NPU_QDQ_DEQUANTIZE) {
				((float *)y)[e] = (float)(nd_int(x, qdt, e) - z) * scale[a];
				continue;
			}
			if (q31) {
				const uint8_t *q = (const uint8_t *)scale + 8ull * a;

				r = npu_requant_scale(((int32_t *)x)[e], (int32_t)npu_rd32(q),
						      (int32_t)npu_rd32(q + 4)) + z;
				r = r < lo ? lo : r > hi ? hi : r;
			} else {
				r = qdq_round(mode == NPU_QDQ_QUANTIZE ?
					      rintf(((float *)x)[e] / scale[a]) :
					      rintf((float)((int32_t *)x)[e] * scale[a]), z, lo, hi);
			}
			if (qdt == NPU_ND_I8)
				((int8_t *)y)[e] = (int8_t)r;
			else
				((uint8_t *)y)[e] = (uint8_t)r;
		}
	}
	st = npu_nd_store(core, out_va, y, total * oes, fault);
	npu_account(core, st, total * (ies + oes), npu_vec_cycles(core, total, 2), bytes, cycles);
out:
	free(scale);
	free(zp);
	free(x);
	free(y);
	return st;
}

/* ---- NPU_CMD_REDUCE ------------------------------------------------------------- */


/*
 * One output: fn over @n values of @x from @base, the reduced dims' strides
 * @st. False if the operation was stopped on the way (one output may sum
 * every element of the tensor).
 */
static bool reduce_one(struct npu_core *core, uint32_t fn, uint32_t dt, bool last, const void *x, uint64_t base,
		       const uint64_t *st, const uint32_t *sz, uint32_t nr, uint64_t n, void *y,
		       uint64_t o)
{
	bool f32 = dt == NPU_ND_F32, arg = fn == NPU_RED_ARGMAX || fn == NPU_RED_ARGMIN;
	bool max = fn == NPU_RED_MAX || fn == NPU_RED_ARGMAX;
	double acc = fn == NPU_RED_PROD ? 1 : 0, best = 0;
	uint64_t iacc = fn == NPU_RED_PROD ? 1 : 0, at_best = 0;
	int64_t ibest = 0;
	float facc = 0;

	for (uint64_t r = 0; r < n; r++) {
		uint64_t at = base, q = r;
		double v;
		int64_t iv;

		if (r && npu_nd_stop(core, r))
			return false;
		for (uint32_t k = nr; k-- > 0;) {	/* row-major: the last dim fastest */
			at += q % sz[k] * st[k];
			q /= sz[k];
		}
		/* integers as integers: int64's past 2^53 are not doubles */
		iv = f32 ? 0 : nd_int(x, dt, at);
		v = f32 ? nd_num(x, dt, at) : (double)iv;
		if (f32)
			iv = (int64_t)v;
		switch (fn) {
		case NPU_RED_SUM: case NPU_RED_MEAN: case NPU_RED_LOG_SUM:
			acc += v;
			iacc += (uint64_t)iv;
			break;
		case NPU_RED_PROD:
			acc *= v;
			iacc *= (uint64_t)iv;
			break;
		case NPU_RED_SUM_SQUARE: case NPU_RED_L2:
			acc += v * v;
			iacc += (uint64_t)iv * (uint64_t)iv;
			break;
		case NPU_RED_L1:
			acc += fabs(v);
			iacc += (uint64_t)(iv < 0 ? -iv : iv);
			break;
		case NPU_RED_LOG_SUM_EXP: acc += exp(v); break;
		case NPU_RED_SUM_F32: facc += (float)v; break;
		default: {	/* max, min, argmax, argmin: NaN wins, then the first (or last) */
			bool better;

			if (!f32) {
				better = !r || (max ? iv > ibest : iv < ibest) || (last && iv == ibest);
			} else {
				better = !r || (isnan(v) ? !isnan(best) : !isnan(best) &&
						(max ? v > best : v < best));
				if (!better && last && !isnan(best) && v == best)
					better = true;
			}
			if (better) {
				best = v;
				ibest = iv;
				at_best = r;
			}
		}
		}
	}
	if (arg) {
		((int64_t *)y)[o] = (int64_t)at_best;
		return true;
	}
	if (fn == NPU_RED_MAX || fn == NPU_RED_MIN) {
		if (f32)
			((float *)y)[o] = (float)best;
		else
			nd_store_int(y, dt, o, ibest);
		return true;
	}
	if (fn == NPU_RED_SUM_F32) {
		((float *)y)[o] = facc;
		return true;
	}
	if (!f32) {	/* mean: C's division of the 64-bit sum, truncating */
		nd_store_int(y, dt, o, fn == NPU_RED_MEAN ? (int64_t)iacc / (int64_t)n : (int64_t)iacc);
		return true;
	}
	if (fn == NPU_RED_MEAN)
		acc /= (double)n;
	else if (fn == NPU_RED_L2)
		acc = sqrt(acc);
	else if (fn == NPU_RED_LOG_SUM || fn == NPU_RED_LOG_SUM_EXP)
		acc = log(acc);
	((float *)y)[o] = (float)acc;
	return true;
}

uint32_t npu_reduce_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16), total, nout = 1, n;
	uint32_t fn = npu_rd32(c + 24), dt = npu_rd32(c + 28), rank = npu_rd32(c + 32);
	uint32_t mask = npu_rd32(c + 36), flags = npu_rd32(c + 40), dims[NPU_ND_MAX_RANK], st;
	uint32_t es, oes, sz[NPU_ND_MAX_RANK], nr = 0;
	uint64_t rst[NPU_ND_MAX_RANK], kst[NPU_ND_MAX_RANK], ksz[NPU_ND_MAX_RANK], s = 1;
	uint32_t nk = 0;
	bool intfn;
	void *x = NULL, *y = NULL;

	if (size != sizeof(struct npu_cmd_reduce))
		return NPU_JOB_INVALID_CMD;
	rd_u32s(c + 48, dims, NPU_ND_MAX_RANK);
	es = dt == NPU_ND_I64 ? 8 : dt == NPU_ND_F32 || dt == NPU_ND_I32 ? 4 : 1;
	oes = fn == NPU_RED_ARGMAX || fn == NPU_RED_ARGMIN ? 8 : es;
	intfn = fn != NPU_RED_L2 && fn != NPU_RED_LOG_SUM && fn != NPU_RED_LOG_SUM_EXP &&
		fn != NPU_RED_SUM_F32;
	if (!npu_in_range(fn, NPU_RED_SUM, NPU_RED_ARGMIN) ||
	    !(dt == NPU_ND_F32 || ((dt == NPU_ND_I64 || dt == NPU_ND_I32 || dt == NPU_ND_I8 ||
				    dt == NPU_ND_U8) && intfn)) ||
	    !npu_in_range(rank, 1, NPU_ND_MAX_RANK) || !mask || mask >> rank ||
	    (flags & ~NPU_REDUCE_SELECT_LAST) || npu_rd32(c + 44) ||
	    !dims_ok(dims, rank, NPU_ND_MAX_RANK, NPU_TENSOR_MAX_BYTES / es, &total) ||
	    (in_va % es) || (out_va % (oes < 4 ? oes : 4)))
		return NPU_JOB_INVALID_CMD;
	/* The reduced dims (strides and sizes, outermost first) and the kept ones. */
	for (int d = (int)rank - 1; d >= 0; d--) {
		if (mask >> d & 1) {
			rst[nr] = s;
			sz[nr++] = dims[d];
		} else {
			kst[nk] = s;
			ksz[nk++] = dims[d];
			nout *= dims[d];
		}
		s *= dims[d];
	}
	for (uint32_t i = 0; i < nr / 2; i++) {	/* outermost first */
		uint64_t t = rst[i];
		uint32_t u = sz[i];

		rst[i] = rst[nr - 1 - i];
		rst[nr - 1 - i] = t;
		sz[i] = sz[nr - 1 - i];
		sz[nr - 1 - i] = u;
	}
	n = total / nout;
	if ((st = npu_nd_load(core, in_va, total * es, &x, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	y = npu_eng_alloc(core, nout * oes);
	if (!y)
		goto out;
	for (uint64_t o = 0; o < nout; o++) {
		uint64_t base = 0, q = o;

		if (npu_eng_work(core, 8 * n + 8)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint32_t k = 0; k < nk; k++) {	/* kept dims: innermost first */
			base += q % ksz[k] * kst[k];
			q /= ksz[k];
		}
		if (!reduce_one(core, fn, dt, flags & NPU_REDUCE_SELECT_LAST, x, base, rst, sz, nr,
				n, y, o)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
	}
	st = npu_nd_store(core, out_va, y, nout * oes, fault);
	npu_account(core, st, total * es + nout * oes, npu_vec_cycles(core, total, 1), bytes, cycles);
out:
	free(x);
	free(y);
	return st;
}

/* ---- NPU_CMD_CAST ------------------------------------------------------------------ */

static void cast_one(const void *x, uint32_t idt, void *y, uint32_t odt, uint64_t i)
{
	int64_t v;

	if (odt == NPU_ND_BF16 || odt == NPU_ND_F16) {	/* from fp32 only: to nearest even */
		float f = ((const float *)x)[i];

		((uint16_t *)y)[i] = odt == NPU_ND_F16 ? npu_f32_to_f16(f) : npu_f32_to_bf16(f);
		return;
	}
	if (idt == NPU_ND_BF16 || idt == NPU_ND_F16) {	/* into fp32 only: exact */
		uint16_t h = ((const uint16_t *)x)[i];

		((float *)y)[i] = idt == NPU_ND_F16 ? npu_f16_to_f32(h) : npu_bf16_to_f32(h);
		return;
	}
	if (odt == NPU_ND_F32) {
		((float *)y)[i] = idt == NPU_ND_F32 ? ((const float *)x)[i] :
				  (float)nd_int(x, idt, i);
		return;
	}
	if (idt == NPU_ND_F32) {	/* truncated, saturated, NaN 0; bool: != 0 */
		double f = ((const float *)x)[i], lo, hi;

		switch (odt) {
		case NPU_ND_BOOL: ((uint8_t *)y)[i] = f != 0; return;
		case NPU_ND_I8: lo = -128; hi = 127; break;
		case NPU_ND_U8: lo = 0; hi = 255; break;
		case NPU_ND_I32: lo = -2147483648.0; hi = 2147483647.0; break;
		default: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;
		}
		f = isnan(f) ? 0 : trunc(f);
		v = (int64_t)(f < lo ? lo : f > hi ? hi : f);
	} else {
		v = nd_int(x, idt, i);
	}
	nd_store_int(y, odt, i, v);
}

uint32_t npu_cast_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		      uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), out_va = npu_rd64(c + 16);
	uint32_t count = npu_rd32(c + 24), idt = npu_rd32(c + 28), odt = npu_rd32(c + 32), st;
	int h_in = idt == NPU_ND_BF16 || idt == NPU_ND_F16;
	int h_out = odt == NPU_ND_BF16 || odt == NPU_ND_F16;
	uint32_t ies = h_in ? 2 : nd_size(idt), oes = h_out ? 2 : nd_size(odt);
	void *x = NULL, *y = NULL;

	if (size != sizeof(struct npu_cmd_cast))
		return NPU_JOB_INVALID_CMD;
	/* a 16-bit float only to and from fp32 */
	if (!ies || !oes || ((h_in || h_out) &&
			     (idt == odt || (idt != NPU_ND_F32 && odt != NPU_ND_F32))) || !count || count > NPU_TENSOR_MAX_BYTES / 8 || npu_rd32(c + 36) ||
	    in_va % (ies < 4 ? ies : 4) || out_va % (oes < 4 ? oes : 4))
		return NPU_JOB_INVALID_CMD;
	if ((st = npu_nd_load(core, in_va, (uint64_t)count * ies, &x, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	y = npu_eng_alloc(core, (uint64_t)count * oes);
	if (!y)
		goto out;
	for (uint32_t i = 0; i < count; i++) {
		if (npu_nd_stop(core, i)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		cast_one(x, idt, y, odt, i);
	}
	st = npu_nd_store(core, out_va, y, (uint64_t)count * oes, fault);
	npu_account(core, st, (uint64_t)count * (ies + oes), 0, bytes, cycles);
out:
	free(x);
	free(y);
	return st;
}

/* ---- NPU_CMD_GATHER ----------------------------------------------------------------- */

uint32_t npu_gather_run(struct npu_core *core, const uint8_t *c, uint32_t size,
			uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t in_va = npu_rd64(c + 8), idx_va = npu_rd64(c + 16), out_va = npu_rd64(c + 24);
	uint32_t outer = npu_rd32(c + 32), axis = npu_rd32(c + 36), inner = npu_rd32(c + 40);
	uint32_t nidx = npu_rd32(c + 44), es = npu_rd32(c + 48), is = npu_rd32(c + 52), st;
	uint32_t flags = npu_rd32(c + 56);
	bool elements = flags & NPU_GATHER_ELEMENTS;
	uint64_t xn, yn, row, in_bytes;
	uint8_t *x = NULL, *y = NULL;
	void *idx = NULL;

	if (size != sizeof(struct npu_cmd_gather))
		return NPU_JOB_INVALID_CMD;
	if ((es != 1 && es != 2 && es != 4 && es != 8) || (is != 4 && is != 8) ||
	    (flags & ~NPU_GATHER_ELEMENTS) || npu_rd32(c + 60) || !outer || !axis || !inner ||
	    !nidx || !npu_prod4(outer, axis, inner, es, NPU_TENSOR_MAX_BYTES, &xn) ||
	    !npu_prod4(outer, nidx, inner, es, NPU_TENSOR_MAX_BYTES, &yn) ||
	    !npu_prod4(elements ? outer : 1, nidx, elements ? inner : 1, is,
		       NPU_TENSOR_MAX_BYTES, &in_bytes) ||
	    in_va % (es < 4 ? es : 4) || out_va % (es < 4 ? es : 4) || idx_va % 4)
		return NPU_JOB_INVALID_CMD;
	row = (uint64_t)inner * es;
	if ((st = npu_nd_load(core, in_va, xn, (void **)&x, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, idx_va, in_bytes, &idx, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	y = npu_eng_alloc(core, yn);
	if (!y)
		goto out;
	for (uint32_t o = 0; o < outer; o++) {
		for (uint32_t i = 0; i < nidx; i++) {
			uint64_t at = (uint64_t)o * nidx + i;
			uint8_t *dst = y + at * row;

			if (npu_eng_work(core, elements ? inner : row / 16 + 8)) {
				st = NPU_JOB_ABORTED;	/* a row: a memcpy, or an element each */
				goto out;
			}
			/* a row's index, or each element's (the same place in idx) */
			for (uint32_t k = 0; k < (elements ? inner : 1); k++) {
				uint64_t n = elements ? at * inner + k : i;
				int64_t j = is == 4 ? ((int32_t *)idx)[n] : ((int64_t *)idx)[n];

				if (j < 0)
					j += axis;
				if (j < 0 || j >= axis) {	/* ONNX's error: the command fails */
					st = NPU_JOB_INVALID_CMD;
					goto out;
				}
				if (elements)
					memcpy(dst + (uint64_t)k * es,
					       x + (((uint64_t)o * axis + (uint64_t)j) * inner + k) * es,
					       es);
				else
					memcpy(dst, x + ((uint64_t)o * axis + (uint64_t)j) * row, row);
			}
		}
	}
	st = npu_nd_store(core, out_va, y, yn, fault);
	npu_account(core, st, 2 * yn + in_bytes, 0, bytes, cycles);
out:
	free(x);
	free(idx);
	free(y);
	return st;
}

/* ---- NPU_CMD_CONV and NPU_CMD_POOL: windows in 1 to 3 spatial dims -------------- */

/* Spatial dims: 1..NPU_TENSOR_MAX_DIM below @nsp, zero past it; their product. */
static bool sp_dims(const uint32_t *v, uint32_t nsp, uint64_t *prod)
{
	return dims_ok(v, nsp, NPU_ND_MAX_SP, NPU_TENSOR_MAX_BYTES, prod);
}

/* Window parameters (kernel, stride, dilation): 1..64 below @nsp, zero past. */
static bool win_ok(const uint32_t *v, uint32_t nsp)
{
	for (uint32_t i = 0; i < NPU_ND_MAX_SP; i++)
		if (i < nsp ? !npu_win_ok(v[i]) : v[i] != 0)
			return false;
	return true;
}

/* Flat index @o of dims @d as coordinates. */
static void coords(uint64_t o, const uint32_t *d, uint32_t n, int64_t *c)
{
	for (int i = (int)n - 1; i >= 0; i--) {
		c[i] = (int64_t)(o % d[i]);
		o /= d[i];
	}
}

struct convp {
	uint64_t va[6];			/* x, w, bias, x_zp, w_zp, y */
	uint32_t u[6];			/* nsp, batch, in_c, out_c, groups, flags */
	uint32_t in[3], out[3], k[3], s[3], d[3];
	int32_t pad[3];
	uint32_t xdt, wdt, wzp_n;
};

/* The taps [*t0, *t1) of a window starting at @start (padded) that land in [0, @in). */
static void taps_inside(int64_t start, uint32_t k, uint32_t d, uint32_t in, uint32_t *t0,
			uint32_t *t1)
{
	int64_t first = start < 0 ? (-start + d - 1) / d : 0;
	int64_t last = (int64_t)in - 1 - start;	/* the last tap inside: last / d */

	*t0 = (uint32_t)(first < k ? first : k);
	*t1 = last < 0 ? *t0 : (uint32_t)(last / d + 1 < k ? last / d + 1 : k);
	if (*t1 < *t0)
		*t1 = *t0;
}

/*
 * A forward convolution over two spatial dims, one output channel's plane
 * (@no: batch * out_c + channel): each window's rows and columns clamped
 * once, its taps read directly, summed in the general walk's order and
 * precision (fp32 products in double, channel by channel, taps row-major,
 * those outside skipped), so the same results bit for bit.
 */
#if defined(__x86_64__) && defined(__GNUC__)
/*
 * Outputs [@ox, @ox_end) of row @oy of an fp32 stride-1 plane whose every
 * column tap is inside, four at a time in double lanes: each lane's sum in
 * the scalar order, a product of two floats exact in double, then one
 * rounded add (no FMA), so the lanes are the scalar code's bit for bit.
 * Returns where it stopped.
 */
__attribute__((target("avx2")))
static uint32_t conv_row_avx2(const struct convp *p, const float *x, const float *w, double b0,
			      uint32_t icg, uint64_t xbase, uint64_t wbase, uint64_t isp,
			      uint64_t ksp, int64_t sy, uint32_t ky0, uint32_t ky1, uint32_t ox,
			      uint32_t ox_end, float *y)
{
	for (; ox + 4 <= ox_end; ox += 4) {
		int64_t sx = (int64_t)ox - p->pad[1];
		__m256d acc = _mm256_set1_pd(b0);

		for (uint32_t ic = 0; ic < icg; ic++) {
			const float *xc = x + xbase + ic * isp, *wc = w + wbase + ic * ksp;

			for (uint32_t ky = ky0; ky < ky1; ky++) {
				const float *xr = xc + (uint64_t)(sy + (int64_t)ky * p->d[0]) * p->in[1];

				for (uint32_t kx = 0; kx < p->k[1]; kx++) {
					__m256d xv = _mm256_cvtps_pd(_mm_loadu_ps(
						xr + sx + (int64_t)kx * p->d[1]));

					acc = _mm256_add_pd(acc, _mm256_mul_pd(xv, _mm256_set1_pd(
						wc[(uint64_t)ky * p->k[1] + kx])));
				}
			}
		}
		_mm_storeu_ps(y + ox, _mm256_cvtpd_ps(acc));
	}
	return ox;
}
#endif

static uint32_t conv2d_plane(struct npu_core *core, const struct convp *p, bool f32,
			     const void *x, const void *w, const float *bias, int64_t xzv,
			     int64_t wzv, uint64_t no, void *y)
{
	uint32_t in_c = p->u[2], out_c = p->u[3], groups = p->u[4];
	uint32_t icg = in_c / groups, ocg = out_c / groups;
	uint32_t n = (uint32_t)(no / out_c), oc = (uint32_t)(no % out_c), g = oc / ocg;
	uint64_t isp = (uint64_t)p->in[0] * p->in[1], ksp = (uint64_t)p->k[0] * p->k[1];
	/* stride 1: the columns whose taps are all inside, [in_lo, in_hi) */
	int64_t reach = (int64_t)(p->k[1] - 1) * p->d[1];
	uint32_t in_lo = (uint32_t)(p->pad[1] < 0 ? 0 : p->pad[1]), in_hi = 0;
	bool vec = f32 && p->s[1] == 1 && npu_engine_avx2();

	if (vec && (int64_t)p->in[1] - 1 - reach + p->pad[1] >= in_lo)
		in_hi = (uint32_t)((int64_t)p->in[1] - reach + p->pad[1]);
	if (in_hi > p->out[1])
		in_hi = p->out[1];
	for (uint32_t oy = 0; oy < p->out[0]; oy++) {
		int64_t sy = (int64_t)oy * p->s[0] - p->pad[0];
		uint32_t ky0, ky1;

		taps_inside(sy, p->k[0], p->d[0], p->in[0], &ky0, &ky1);
		for (uint32_t ox = 0; ox < p->out[1]; ox++) {
#if defined(__x86_64__) && defined(__GNUC__)
			if (ox == in_lo && in_hi >= in_lo + 4) {
				if (npu_eng_work(core, (uint64_t)icg * (ky1 - ky0) * p->k[1] *
						       (in_hi - in_lo) / 4 + 8))
					return NPU_JOB_ABORTED;
				ox = conv_row_avx2(p, x, w, bias ? bias[oc] : 0, icg,
						   ((uint64_t)n * in_c + g * icg) * isp,
						   (uint64_t)oc * icg * ksp, isp, ksp, sy, ky0, ky1,
						   ox, in_hi, (float *)y + no * p->out[0] * p->out[1] +
						   (uint64_t)oy * p->out[1]);
				if (ox >= p->out[1])
					break;
			}
#endif
			int64_t sx = (int64_t)ox * p->s[1] - p->pad[1];
			uint64_t o = no * p->out[0] * p->out[1] + (uint64_t)oy * p->out[1] + ox;
			double acc = bias ? bias[oc] : 0;
			int64_t iacc = 0;
			uint32_t kx0, kx1;

			taps_inside(sx, p->k[1], p->d[1], p->in[1], &kx0, &kx1);
			if (npu_eng_work(core, (uint64_t)icg * (ky1 - ky0) * (kx1 - kx0) + 8))
				return NPU_JOB_ABORTED;
			for (uint32_t ic = 0; ic < icg; ic++) {
				uint64_t xrow = ((uint64_t)n * in_c + g * icg + ic) * isp;
				uint64_t wrow = ((uint64_t)oc * icg + ic) * ksp;

				for (uint32_t ky = ky0; ky < ky1; ky++) {
					uint64_t xr = xrow + (uint64_t)(sy + (int64_t)ky * p->d[0]) *
							     p->in[1];
					uint64_t wr = wrow + (uint64_t)ky * p->k[1];

					for (uint32_t kx = kx0; kx < kx1; kx++) {
						uint64_t xi = xr + (uint64_t)(sx + (int64_t)kx * p->d[1]);

						if (f32)
							acc += (double)((const float *)x)[xi] *
							       ((const float *)w)[wr + kx];
						else
							iacc += (nd_int(x, p->xdt, xi) - xzv) *
								(nd_int(w, p->wdt, wr + kx) - wzv);
					}
				}
			}
			if (f32)
				((float *)y)[o] = (float)acc;
			else
				((int32_t *)y)[o] = (int32_t)(uint32_t)iacc;
		}
	}
	return NPU_JOB_OK;
}

uint32_t npu_conv_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		      uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	struct convp p;
	uint64_t isp, osp, ksp = 1, xn, wn, yn, macs;
	uint32_t st, nsp, batch, in_c, out_c, groups, icg, ocg, es;
	bool f32, tr;
	void *x = NULL, *w = NULL, *bias = NULL, *y = NULL;
	uint8_t *xz = NULL, *wz = NULL;

	if (size != sizeof(struct npu_cmd_conv))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 6; i++)
		p.va[i] = npu_rd64(c + 8 + 8 * i);
	rd_u32s(c + 56, p.u, 6);
	rd_u32s(c + 80, p.in, 3);
	rd_u32s(c + 92, p.out, 3);
	rd_u32s(c + 104, p.k, 3);
	rd_u32s(c + 116, p.s, 3);
	rd_u32s(c + 128, p.d, 3);
	for (int i = 0; i < 3; i++)
		p.pad[i] = (int32_t)npu_rd32(c + 140 + 4 * i);
	p.xdt = npu_rd32(c + 152);
	p.wdt = npu_rd32(c + 156);
	p.wzp_n = npu_rd32(c + 160);
	nsp = p.u[0], batch = p.u[1], in_c = p.u[2], out_c = p.u[3], groups = p.u[4];
	f32 = p.xdt == NPU_ND_F32 && p.wdt == NPU_ND_F32;
	tr = p.u[5] & NPU_CONV_ND_TRANSPOSE;
	es = f32 ? 4 : 1;
	if (!npu_in_range(nsp, 1, NPU_ND_MAX_SP) || !npu_dim_ok(batch) || !npu_dim_ok(in_c) ||
	    !npu_dim_ok(out_c) || !groups || in_c % groups || out_c % groups ||
	    (p.u[5] & ~NPU_CONV_ND_TRANSPOSE) || npu_rd32(c + 164) ||
	    !sp_dims(p.in, nsp, &isp) || !sp_dims(p.out, nsp, &osp) || !win_ok(p.k, nsp) ||
	    !win_ok(p.s, nsp) || !win_ok(p.d, nsp) ||
	    !(f32 || ((p.xdt == NPU_ND_I8 || p.xdt == NPU_ND_U8) &&
		      (p.wdt == NPU_ND_I8 || p.wdt == NPU_ND_U8))) ||
	    (f32 && (p.va[3] || p.va[4])) || (!f32 && p.va[2]) ||
	    (p.va[4] ? p.wzp_n != 1 && p.wzp_n != out_c : p.wzp_n != 0) ||
	    (f32 && (p.va[0] | p.va[1] | p.va[2]) & 3) || p.va[5] & 3)
		return NPU_JOB_INVALID_CMD;
	for (uint32_t i = 0; i < NPU_ND_MAX_SP; i++) {
		if (i < nsp ? p.pad[i] < -65536 || p.pad[i] > 65536 : p.pad[i] != 0)
			return NPU_JOB_INVALID_CMD;
		ksp *= i < nsp ? p.k[i] : 1;
	}
	icg = in_c / groups;
	ocg = out_c / groups;
	/* Each operand and the multiply-accumulates within the bounds. */
	xn = (uint64_t)batch * in_c * isp;
	wn = (uint64_t)out_c * icg * ksp;	/* in_c * out_c / groups taps, either way */
	yn = (uint64_t)batch * out_c * osp;
	macs = (uint64_t)batch * (tr ? in_c : out_c) * (tr ? isp : osp);
	if (xn * es > NPU_TENSOR_MAX_BYTES || wn * es > NPU_TENSOR_MAX_BYTES ||
	    yn * 4 > NPU_TENSOR_MAX_BYTES || macs > NPU_TENSOR_MAX_MACS / ((tr ? ocg : icg) * ksp))
		return NPU_JOB_INVALID_CMD;
	macs *= (uint64_t)(tr ? ocg : icg) * ksp;
	if (!npu_eng_charge_macs(core, macs))
		return NPU_JOB_LIMIT;
	if ((st = npu_nd_load(core, p.va[0], xn * es, &x, fault)) != NPU_JOB_OK ||
	    (st = npu_nd_load(core, p.va[1], wn * es, &w, fault)) != NPU_JOB_OK ||
	    (p.va[2] && (st = npu_nd_load(core, p.va[2], 4ull * out_c, &bias, fault)) != NPU_JOB_OK) ||
	    (p.va[3] && (st = npu_nd_load(core, p.va[3], 1, (void **)&xz, fault)) != NPU_JOB_OK) ||
	    (p.va[4] && (st = npu_nd_load(core, p.va[4], p.wzp_n, (void **)&wz, fault)) != NPU_JOB_OK))
		goto out;
	st = NPU_JOB_INVALID_CMD;
	y = npu_eng_alloc(core, yn * 4);
	if (!y)
		goto out;
	for (uint64_t no = 0; no < (uint64_t)batch * out_c; no++) {
		uint32_t n = (uint32_t)(no / out_c), oc = (uint32_t)(no % out_c), g = oc / ocg;
		int64_t wzv = wz ? nd_int(wz, p.wdt, p.wzp_n == 1 ? 0 : oc) : 0;
		int64_t xzv = xz ? nd_int(xz, p.xdt, 0) : 0;

		if (npu_eng_stop(core)) {	/* each output channel's plane */
			st = NPU_JOB_ABORTED;
			goto out;
		}
		if (nsp == 2 && !tr) {
			st = conv2d_plane(core, &p, f32, x, w, bias, xzv, wzv, no, y);
			if (st != NPU_JOB_OK)
				goto out;
			st = NPU_JOB_INVALID_CMD;
			continue;
		}
		for (uint64_t o = 0; o < osp; o++) {
			int64_t oc_[3], kc[3];
			double acc = bias ? ((float *)bias)[oc] : 0;
			int64_t iacc = 0;

			coords(o, p.out, nsp, oc_);
			for (uint32_t ic = 0; ic < icg; ic++) {
				uint64_t xrow = ((uint64_t)n * in_c + g * icg + ic) * isp;
				uint64_t wrow = tr ? ((uint64_t)(g * icg + ic) * ocg + (oc - g * ocg)) * ksp
						   : ((uint64_t)oc * icg + ic) * ksp;

				for (uint64_t kk = 0; kk < ksp; kk++) {
					uint64_t off = 0;
					bool inside = true;

					if (npu_eng_work(core, 32)) {	/* a tap's coordinates */
						st = NPU_JOB_ABORTED;
						goto out;
					}
					coords(kk, p.k, nsp, kc);
					for (uint32_t s = 0; s < nsp && inside; s++) {
						int64_t v = tr ? oc_[s] + p.pad[s] - kc[s] * p.d[s]
							       : oc_[s] * p.s[s] + kc[s] * p.d[s] - p.pad[s];

						if (tr) {
							if (v < 0 || v % p.s[s]) {
								inside = false;
								break;
							}
							v /= p.s[s];
						}
						if (v < 0 || v >= p.in[s])
							inside = false;
						off = off * p.in[s] + (uint64_t)v;
					}
					if (!inside)
						continue;
					if (f32)
						acc += (double)((float *)x)[xrow + off] *
						       ((float *)w)[wrow + kk];
					else
						iacc += (nd_int(x, p.xdt, xrow + off) - xzv) *
							(nd_int(w, p.wdt, wrow + kk) - wzv);
				}
			}
			if (f32)
				((float *)y)[no * osp + o] = (float)acc;
			else
				((int32_t *)y)[no * osp + o] = (int32_t)(uint32_t)iacc;
		}
	}
	st = npu_nd_store(core, p.va[5], y, yn * 4, fault);
	if (st == NPU_JOB_OK) {
		uint64_t per = (uint64_t)core->cfg.mac_rows * core->cfg.mac_cols / (f32 ? 4 : 1);

		npu_account(core, st, (xn + wn) * es + yn * 4, (macs + per - 1) / (per ? per : 1),
			    bytes, cycles);
	}
out:
	free(x);
	free(w);
	free(bias);
	free(xz);
	free(wz);
	free(y);
	return st;
}

/*
 * Two spatial dims: each window's rows and columns clamped once, its taps
 * read directly, in the order, and with the comparisons and sums, of the
 * general walk below (so the same results, NaN and ties included).
 */
static uint32_t pool2d(struct npu_core *core, const void *x, void *y, uint32_t dt, bool avg,
		       bool count_pad, uint64_t planes, const uint32_t *in, const uint32_t *out,
		       const uint32_t *k, const uint32_t *s, const uint32_t *d, const uint32_t *lo,
		       const uint32_t *hi)
{
	uint64_t isp = (uint64_t)in[0] * in[1], osp = (uint64_t)out[0] * out[1];

	for (uint64_t nc = 0; nc < planes; nc++) {
		const float *xf = (const float *)x + nc * isp;

		if (npu_eng_stop(core))
			return NPU_JOB_ABORTED;
		for (uint32_t oy = 0; oy < out[0]; oy++) {
			int64_t sy = (int64_t)oy * s[0] - lo[0];
			int64_t ey = sy + (int64_t)(k[0] - 1) * d[0] + 1, ly = (int64_t)in[0] + hi[0];
			uint32_t ky0, ky1;

			taps_inside(sy, k[0], d[0], in[0], &ky0, &ky1);
			for (uint32_t ox = 0; ox < out[1]; ox++) {
				int64_t sx = (int64_t)ox * s[1] - lo[1];
				int64_t ex = sx + (int64_t)(k[1] - 1) * d[1] + 1;
				int64_t lx = (int64_t)in[1] + hi[1];
				uint64_t o = nc * osp + (uint64_t)oy * out[1] + ox, count = 0;
				uint32_t kx0, kx1;
				double sum = 0, best = 0;
				float fbest = 0;

				taps_inside(sx, k[1], d[1], in[1], &kx0, &kx1);
				if (npu_eng_work(core, (uint64_t)(ky1 - ky0) * (kx1 - kx0) + 8))
					return NPU_JOB_ABORTED;
				for (uint32_t ky = ky0; ky < ky1; ky++) {
					uint64_t row = (uint64_t)(sy + (int64_t)ky * d[0]) * in[1];

					for (uint32_t kx = kx0; kx < kx1; kx++) {
						uint64_t at = row + (uint64_t)(sx + (int64_t)kx * d[1]);

						if (dt == NPU_ND_F32 && !avg) {
							float v = xf[at];

							if (!count || v > fbest)
								fbest = v;
						} else {
							double v = nd_num(x, dt, nc * isp + at);

							sum += v;
							if (!count || v > best)
								best = v;
						}
						count++;
					}
				}
				if (avg) {
					uint64_t div = count_pad ? (uint64_t)((ey < ly ? ey : ly) - sy) *
								   (uint64_t)((ex < lx ? ex : lx) - sx)
								 : count;

					((float *)y)[o] = div ? (float)(sum / (double)div) : 0.0f;
				} else if (dt == NPU_ND_F32) {
					((float *)y)[o] = count ? fbest : -INFINITY;
				} else if (dt == NPU_ND_I8) {
					((int8_t *)y)[o] = (int8_t)(count ? best : 0);
				} else {
					((uint8_t *)y)[o] = (uint8_t)(count ? best : 0);
				}
			}
		}
	}
	return NPU_JOB_OK;
}

uint32_t npu_pool_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		      uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t x_va = npu_rd64(c + 8), y_va = npu_rd64(c + 16), isp, osp, ksp, xn, yn;
	uint32_t nsp = npu_rd32(c + 24), batch = npu_rd32(c + 28), ch = npu_rd32(c + 32);
	uint32_t flags = npu_rd32(c + 36), dt = npu_rd32(c + 40), st, es;
	uint32_t in[3], out[3], k[3], s[3], d[3], lo[3], hi[3];
	bool avg = flags & NPU_POOL_ND_AVG;
	void *x = NULL, *y = NULL;

	if (size != sizeof(struct npu_cmd_pool))
		return NPU_JOB_INVALID_CMD;
	rd_u32s(c + 44, in, 3);
	rd_u32s(c + 56, out, 3);
	rd_u32s(c + 68, k, 3);
	rd_u32s(c + 80, s, 3);
	rd_u32s(c + 92, d, 3);
	rd_u32s(c + 104, lo, 3);
	rd_u32s(c + 116, hi, 3);
	es = dt == NPU_ND_F32 ? 4 : 1;
	if (!npu_in_range(nsp, 1, NPU_ND_MAX_SP) || !npu_dim_ok(batch) || !npu_dim_ok(ch) ||
	    (flags & ~(NPU_POOL_ND_AVG | NPU_POOL_ND_COUNT_PAD)) ||
	    ((flags & NPU_POOL_ND_COUNT_PAD) && !avg) ||
	    !(dt == NPU_ND_F32 || (!avg && (dt == NPU_ND_I8 || dt == NPU_ND_U8))) ||
	    !sp_dims(in, nsp, &isp) || !sp_dims(out, nsp, &osp) || !sp_dims(k, nsp, &ksp) ||
	    !sp_dims(s, nsp, &xn) || !win_ok(d, nsp) || (x_va | y_va) % es)
		return NPU_JOB_INVALID_CMD;
	for (uint32_t i = 0; i < NPU_ND_MAX_SP; i++) {
		if (i < nsp ? lo[i] > NPU_CONV_MAX_PAD || hi[i] > NPU_CONV_MAX_PAD : lo[i] || hi[i])
			return NPU_JOB_INVALID_CMD;
	}
	xn = (uint64_t)batch * ch * isp;
	yn = (uint64_t)batch * ch * osp;
	if (xn * es > NPU_TENSOR_MAX_BYTES || yn * es > NPU_TENSOR_MAX_BYTES ||
	    yn > NPU_TENSOR_MAX_MACS / ksp)
		return NPU_JOB_INVALID_CMD;
	if (!npu_eng_charge_macs(core, yn * ksp))	/* a tap each, as a MAC */
		return NPU_JOB_LIMIT;
	if ((st = npu_nd_load(core, x_va, xn * es, &x, fault)) != NPU_JOB_OK)
		goto out;
	st = NPU_JOB_INVALID_CMD;
	y = npu_eng_alloc(core, yn * es);
	if (!y)
		goto out;
	if (nsp == 2) {
		st = pool2d(core, x, y, dt, avg, flags & NPU_POOL_ND_COUNT_PAD,
			    (uint64_t)batch * ch, in, out, k, s, d, lo, hi);
		if (st != NPU_JOB_OK)
			goto out;
	}
	for (uint64_t nc = 0; nsp != 2 && nc < (uint64_t)batch * ch; nc++) {
		if (npu_eng_stop(core)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		for (uint64_t o = 0; o < osp; o++) {
			int64_t oc[3], kc[3];
			double sum = 0, best = 0;
			uint64_t count = 0, padded = 1;

			coords(o, out, nsp, oc);
			for (uint32_t i = 0; i < nsp; i++) {	/* taps inside the padded input */
				int64_t start = oc[i] * s[i] - lo[i];
				int64_t end = start + (int64_t)(k[i] - 1) * d[i] + 1;
				int64_t lim = (int64_t)in[i] + hi[i];

				padded *= (uint64_t)((end < lim ? end : lim) - start);
			}
			for (uint64_t kk = 0; kk < ksp; kk++) {
				uint64_t off = 0;
				bool inside = true;
				double v;

				if (npu_eng_work(core, 32)) {	/* a tap's coordinates */
					st = NPU_JOB_ABORTED;
					goto out;
				}
				coords(kk, k, nsp, kc);
				for (uint32_t i = 0; i < nsp; i++) {
					int64_t at = oc[i] * s[i] + kc[i] * d[i] - lo[i];

					if (at < 0 || at >= in[i])
						inside = false;
					off = off * in[i] + (uint64_t)(at < 0 ? 0 : at);
				}
				if (!inside)
					continue;
				v = nd_num(x, dt, nc * isp + off);
				sum += v;
				if (!count || v > best)
					best = v;
				count++;
			}
			if (avg) {
				uint64_t div = flags & NPU_POOL_ND_COUNT_PAD ? padded : count;

				((float *)y)[nc * osp + o] = div ? (float)(sum / (double)div) : 0.0f;
			} else if (dt == NPU_ND_F32) {
				((float *)y)[nc * osp + o] = count ? (float)best : -INFINITY;
			} else if (dt == NPU_ND_I8) {
				((int8_t *)y)[nc * osp + o] = (int8_t)(count ? best : 0);
			} else {
				((uint8_t *)y)[nc * osp + o] = (uint8_t)(count ? best : 0);
			}
		}
	}
	st = npu_nd_store(core, y_va, y, yn * es, fault);
	npu_account(core, st, (xn + yn) * es, npu_vec_cycles(core, yn, (uint32_t)ksp), bytes, cycles);
out:
	free(x);
	free(y);
	return st;
}

/* ---- NPU_CMD_WHERE -------------------------------------------------------------------- */

uint32_t npu_where_run(struct npu_core *core, const uint8_t *c, uint32_t size,
		       uint64_t *fault, uint64_t *bytes, uint64_t *cycles)
{
	uint64_t va[4], st_[3][NPU_ND_MAX_RANK], n[3], on, at[3] = { 0 };
	uint64_t idx[NPU_ND_MAX_RANK] = { 0 };
	uint32_t rank = npu_rd32(c + 40), es = npu_rd32(c + 44), st;
	uint32_t od[NPU_ND_MAX_RANK], d3[3][NPU_ND_MAX_RANK];
	uint8_t *in[3] = { NULL, NULL, NULL }, *y = NULL;

	if (size != sizeof(struct npu_cmd_where))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 4; i++)	/* cond, a, b, out */
		va[i] = npu_rd64(c + 8 + 8 * i);
	rd_u32s(c + 48, od, NPU_ND_MAX_RANK);
	for (int i = 0; i < 3; i++)
		rd_u32s(c + 72 + 24 * i, d3[i], NPU_ND_MAX_RANK);
	if ((es != 1 && es != 2 && es != 4 && es != 8) || !npu_in_range(rank, 1, NPU_ND_MAX_RANK) ||
	    !dims_ok(od, rank, NPU_ND_MAX_RANK, NPU_TENSOR_MAX_BYTES / es, &on) ||
	    !bcast(d3[0], od, rank, st_[0], &n[0]) || !bcast(d3[1], od, rank, st_[1], &n[1]) ||
	    !bcast(d3[2], od, rank, st_[2], &n[2]) ||
	    (va[1] | va[2] | va[3]) % (es < 4 ? es : 4))
		return NPU_JOB_INVALID_CMD;
	for (int i = 0; i < 3; i++)
		if ((st = npu_nd_load(core, va[i], n[i] * (i ? es : 1), (void **)&in[i], fault)) !=
		    NPU_JOB_OK)
			goto out;
	st = NPU_JOB_INVALID_CMD;
	y = npu_eng_alloc(core, on * es);
	if (!y)
		goto out;
	for (uint64_t o = 0; o < on; o++) {
		int pick = in[0][at[0]] ? 1 : 2;

		if (npu_nd_stop(core, o)) {
			st = NPU_JOB_ABORTED;
			goto out;
		}
		memcpy(y + o * es, in[pick] + at[pick] * es, es);
		walk_next(rank, od, idx, at, st_, 3);
	}
	st = npu_nd_store(core, va[3], y, on * es, fault);
	npu_account(core, st, n[0] + (n[1] + n[2] + on) * es, 0, bytes, cycles);
out:
	for (int i = 0; i < 3; i++)
		free(in[i]);
	free(y);
	return st;
}
