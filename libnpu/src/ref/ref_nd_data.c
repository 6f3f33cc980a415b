// SPDX-License-Identifier: MIT
/*
 * ref_nd_data.c - the references of the N-dimensional ops that move or
 * select data rather than compute it (where, strided copy, gather) and of
 * the reductions (ref_nd.h). Plain loops over packed row-major arrays.
 */
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "ref/nd_elem.h"

/* ---- where ------------------------------------------------------------------ */

/* The offset into an operand of dims @d broadcast to @out, at output element @o. */
static uint64_t bcast_at(uint64_t o, uint32_t rank, const uint32_t *d, const uint32_t *out)
{
	uint64_t off = 0, s = 1;

	for (int i = (int)rank - 1; i >= 0; i--) {
		uint64_t k = o % out[i];

		o /= out[i];
		off += (d[i] == 1 ? 0 : k) * s;
		s *= d[i];
	}
	return off;
}

int ref_nd_where(const struct nd_where *p, const void *c, const void *a, const void *b, void *y)
{
	size_t es = nd_elem_size(p->dtype);
	uint64_t n = nd_where_count(p, 3);

	if (!p->rank || p->rank > ND_MAX_RANK || !es)
		return NPU_EINVAL;
	for (uint64_t o = 0; o < n; o++) {
		int pick = ((const uint8_t *)c)[bcast_at(o, p->rank, p->c, p->out)] != 0;
		const void *src = pick ? a : b;
		const uint32_t *d = pick ? p->a : p->b;

		memcpy((char *)y + o * es, (const char *)src + bcast_at(o, p->rank, d, p->out) * es,
		       es);
	}
	return 0;
}

/* ---- strided copy ------------------------------------------------------------ */

int ref_nd_copy(const struct nd_copy *p, const void *x, void *y)
{
	size_t es = nd_elem_size(p->dtype);
	uint64_t n = nd_copy_count(p);

	if (!p->rank || p->rank > ND_COPY_RANK || !es)
		return NPU_EINVAL;
	for (uint64_t o = 0; o < n; o++) {
		uint64_t r = o;
		int64_t src = p->off;

		for (int d = (int)p->rank - 1; d >= 0; d--) {
			src += (int64_t)(r % p->dims[d]) * p->st[d];
			r /= p->dims[d];
		}
		memcpy((char *)y + o * es, (const char *)x + (uint64_t)src * es, es);
	}
	return 0;
}

/* ---- gather ------------------------------------------------------------------ */

/* Index @i of @idx into a dim of @n: made positive, or -1 when out of range. */
static int64_t index_at(const struct nd_gather *p, const void *idx, uint64_t i, uint64_t n)
{
	int64_t j = ldi(idx, p->idt, i);

	j += j < 0 ? (int64_t)n : 0;
	return j >= 0 && (uint64_t)j < n ? j : -1;
}

/* ONNX makes an index outside the data an error, as onnxruntime raises it. */
static int out_of_range(const struct nd_gather *p, const void *idx, uint64_t i, uint64_t n)
{
	return npu_fail(NULL, NPU_EINVAL, "%s: index %lld (element %llu of the indices) is out "
			"of range for a dimension of %llu: valid are -%llu to %llu",
			p->elements ? "GatherElements" : "Gather", (long long)ldi(idx, p->idt, i),
			(unsigned long long)i, (unsigned long long)n, (unsigned long long)n,
			(unsigned long long)n - 1);
}

int ref_nd_gather(const struct nd_gather *p, const void *x, const void *idx, void *y)
{
	size_t es = nd_elem_size(p->dtype);

	if (!es || (p->idt != NPU_DT_INT32 && p->idt != NPU_DT_INT64))
		return NPU_EINVAL;
	if (!p->elements) {
		size_t row = p->inner * es;

		for (uint64_t i = 0; i < p->nidx; i++)
			if (index_at(p, idx, i, p->axis) < 0)
				return out_of_range(p, idx, i, p->axis);
		for (uint64_t o = 0; o < p->outer; o++)
			for (uint64_t i = 0; i < p->nidx; i++) {
				int64_t j = index_at(p, idx, i, p->axis);

				memcpy((char *)y + (o * p->nidx + i) * row,
				       (const char *)x + (o * p->axis + (uint64_t)j) * row, row);
			}
		return 0;
	}
	if (!p->rank || p->rank > ND_MAX_RANK || p->ax >= p->rank)
		return NPU_EINVAL;
	for (uint64_t e = 0, n = nd_prod(p->id, p->rank); e < n; e++) {
		uint64_t r = e, src = 0, s = 1;
		int64_t j = index_at(p, idx, e, p->xd[p->ax]);

		if (j < 0)
			return out_of_range(p, idx, e, p->xd[p->ax]);
		for (int d = (int)p->rank - 1; d >= 0; d--) {
			uint64_t k = r % p->id[d];

			r /= p->id[d];
			src += (d == (int)p->ax ? (uint64_t)j : k) * s;
			s *= p->xd[d];
		}
		memcpy((char *)y + e * es, (const char *)x + src * es, es);
	}
	return 0;
}

/* ---- reductions --------------------------------------------------------------- */

/*
 * Output element @o's first input element (*@base) and the strides and
 * sizes of the reduced dims (*@nr of them), innermost last.
 */
static void reduce_geometry(const struct nd_reduce *p, uint64_t o, uint64_t *base,
			    uint64_t *st, uint32_t *sz, uint32_t *nr)
{
	uint64_t s = 1;
	int k = 0;

	*base = 0;
	for (int d = (int)p->rank - 1; d >= 0; d--) {
		if (p->mask >> d & 1) {
			st[k] = s;
			sz[k++] = p->in[d];
		} else {
			*base += (o % p->in[d]) * s;
			o /= p->in[d];
		}
		s *= p->in[d];
	}
	*nr = (uint32_t)k;
}

int ref_nd_reduce(const struct nd_reduce *p, const void *x, void *y)
{
	uint64_t st[ND_MAX_RANK], nout = nd_reduce_count(p, 1), nred;
	uint32_t sz[ND_MAX_RANK], nr;
	int f32 = p->dtype == NPU_DT_FLOAT32;

	if (!p->rank || p->rank > ND_MAX_RANK || p->fn >= ND_R_NUM || !nd_elem_size(p->dtype))
		return NPU_EINVAL;
	nred = nd_reduce_count(p, 0) / nout;
	for (uint64_t o = 0; o < nout; o++) {
		uint64_t base, best_at = 0;
		double acc = p->fn == ND_R_PROD ? 1 : 0, best = 0;
		float facc = 0;
		int64_t iacc = p->fn == ND_R_PROD ? 1 : 0, ibest = 0;

		reduce_geometry(p, o, &base, st, sz, &nr);
		for (uint64_t r = 0; r < nred; r++) {
			uint64_t at = base, q = r;
			double v;
			int64_t iv;

			/* the r-th element of the reduced sub-array, row-major */
			for (uint32_t k = 0; k < nr; k++) {
				at += (q % sz[k]) * st[k];
				q /= sz[k];
			}
			v = ld(x, p->dtype, at);
			iv = ldi(x, p->dtype, at);
			switch ((enum nd_reduce_fn)p->fn) {
			case ND_R_SUM: case ND_R_MEAN:
				acc += v;
				iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
				break;
			case ND_R_PROD:
				acc *= v;
				iacc = (int64_t)((uint64_t)iacc * (uint64_t)iv);
				break;
			case ND_R_SUM_SQUARE: case ND_R_L2:
				acc += v * v;
				iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv * (uint64_t)iv);
				break;
			case ND_R_L1:
				acc += fabs(v);
				iacc = (int64_t)((uint64_t)iacc + (uint64_t)(iv < 0 ? -iv : iv));
				break;
			case ND_R_LOG_SUM: acc += v; break;
			case ND_R_LOG_SUM_EXP: acc += exp(v); break;
			case ND_R_SUM_F32: facc += (float)v; break;
			case ND_R_MAX: case ND_R_ARGMAX:
			case ND_R_MIN: case ND_R_ARGMIN: {
				int max = p->fn == ND_R_MAX || p->fn == ND_R_ARGMAX, better;

				/* NaN wins a max or min, as numpy's; the first index of ties */
				if (!r)
					better = 1;
				else if (!f32)
					better = max ? iv > ibest || (p->select_last && iv == ibest) :
						       iv < ibest || (p->select_last && iv == ibest);
				else if (isnan(v) || isnan(best))
					better = !isnan(best);
				else
					better = max ? v > best || (p->select_last && v == best) :
						       v < best || (p->select_last && v == best);
				if (better) {
					best = v;
					ibest = iv;
					best_at = r;
				}
				break;
			}
			case ND_R_NUM:
				return NPU_EINVAL;
			}
		}
		switch ((enum nd_reduce_fn)p->fn) {
		case ND_R_ARGMAX: case ND_R_ARGMIN:
			((int64_t *)y)[o] = (int64_t)best_at;
			continue;
		case ND_R_MAX: case ND_R_MIN:
			if (f32)
				((float *)y)[o] = (float)best;
			else
				sti(y, p->dtype, o, ibest);
			continue;
		case ND_R_MEAN:
			acc /= (double)nred;
			iacc /= (int64_t)nred;	/* C's division, truncating */
			break;
		case ND_R_L2: acc = sqrt(acc); iacc = (int64_t)sqrt((double)iacc); break;
		case ND_R_LOG_SUM: acc = log(acc); iacc = (int64_t)acc; break;
		case ND_R_LOG_SUM_EXP: acc = log(acc); iacc = (int64_t)acc; break;
		case ND_R_SUM_F32:
			((float *)y)[o] = facc;
			continue;
		case ND_R_SUM: case ND_R_PROD: case ND_R_SUM_SQUARE: case ND_R_L1: case ND_R_NUM:
			break;
		}
		if (f32)
			((float *)y)[o] = (float)acc;
		else
			sti(y, p->dtype, o, iacc);
	}
	return 0;
}
