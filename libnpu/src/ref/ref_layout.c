// SPDX-License-Identifier: MIT
/*
 * ref_layout.c - CPU references of transpose and pad: four nested loops
 * over the input (transpose) or the output (pad), ranks below 4 treated as
 * leading dimensions of size 1.
 */
#include <string.h>

#include "npu.h"
#include "npu_cmd.h"
#include "ref/npu_ref.h"

/* Dimensions padded to rank 4 at the front; 0 if invalid. */
static int dims4(uint32_t rank, const uint32_t *dims, uint32_t *d4)
{
	if (rank < 1 || rank > 4)
		return 0;
	for (uint32_t i = 0; i < 4; i++)
		d4[i] = 1;
	for (uint32_t i = 0; i < rank; i++) {
		if (!dims[i])
			return 0;
		d4[4 - rank + i] = dims[i];
	}
	return 1;
}

bool npu_transpose_valid(const struct npu_transpose *p)
{
	uint32_t d[4], seen = 0;

	if (!p || !dims4(p->rank, p->dims, d) ||
	    (p->elem_size != 1 && p->elem_size != 2 && p->elem_size != 4))
		return false;
	for (uint32_t i = 0; i < p->rank; i++) {
		if (p->perm[i] >= p->rank || (seen & (1u << p->perm[i])))
			return false;
		seen |= 1u << p->perm[i];
	}
	return true;
}

void npu_transpose_rank4(const struct npu_transpose *p, uint32_t *od, size_t *step)
{
	uint32_t d[4], perm4[4];
	size_t in_stride[4];

	dims4(p->rank, p->dims, d);
	/* The permutation on the padded rank: leading dims stay in place. */
	for (uint32_t i = 0; i < 4 - p->rank; i++)
		perm4[i] = i;
	for (uint32_t i = 0; i < p->rank; i++)
		perm4[4 - p->rank + i] = 4 - p->rank + p->perm[i];
	in_stride[3] = 1;
	for (int i = 2; i >= 0; i--)
		in_stride[i] = in_stride[i + 1] * d[i + 1];
	for (int i = 0; i < 4; i++) {
		od[i] = d[perm4[i]];
		step[i] = in_stride[perm4[i]];
	}
}

int npu_ref_transpose_v(size_t size, const struct npu_transpose *p_in, const void *in, void *out)
{
	NPU_STRUCT_IN(struct npu_transpose, p, p_in, size);
	uint32_t od[4];
	size_t step[4], o = 0;

	if (!npu_transpose_valid(p) || !in || !out)
		return NPU_EINVAL;
	npu_transpose_rank4(p, od, step);
	for (uint32_t a = 0; a < od[0]; a++)
	for (uint32_t b = 0; b < od[1]; b++)
	for (uint32_t c = 0; c < od[2]; c++)
	for (uint32_t e = 0; e < od[3]; e++) {
		size_t i = a * step[0] + b * step[1] + c * step[2] + e * step[3];

		memcpy((char *)out + o++ * p->elem_size, (const char *)in + i * p->elem_size,
		       p->elem_size);
	}
	return NPU_OK;
}

bool npu_pad_valid(const struct npu_pad *p)
{
	uint32_t d[4];

	if (!p || !dims4(p->rank, p->dims, d) || p->value < -128 || p->value > 127)
		return false;
	for (uint32_t i = 0; i < p->rank; i++)
		if (p->dims[i] > 65536 || p->before[i] > 65536 || p->after[i] > 65536)
			return false;	/* and no uint32 sums can wrap */
	return true;
}

void npu_pad_rank4(const struct npu_pad *p, uint32_t *d, uint32_t *bf, uint32_t *af)
{
	dims4(p->rank, p->dims, d);
	for (uint32_t i = 0; i < 4; i++)
		bf[i] = af[i] = 0;
	for (uint32_t i = 0; i < p->rank; i++) {
		bf[4 - p->rank + i] = p->before[i];
		af[4 - p->rank + i] = p->after[i];
	}
}

int npu_ref_pad_v(size_t size, const struct npu_pad *p_in, const int8_t *in, int8_t *out)
{
	NPU_STRUCT_IN(struct npu_pad, p, p_in, size);
	uint32_t d[4], bf[4], af[4];
	size_t o = 0;

	if (!npu_pad_valid(p) || !in || !out)
		return NPU_EINVAL;
	npu_pad_rank4(p, d, bf, af);
	for (uint32_t a = 0; a < bf[0] + d[0] + af[0]; a++)
	for (uint32_t b = 0; b < bf[1] + d[1] + af[1]; b++)
	for (uint32_t c = 0; c < bf[2] + d[2] + af[2]; c++)
	for (uint32_t e = 0; e < bf[3] + d[3] + af[3]; e++) {
		int inside = a >= bf[0] && a < bf[0] + d[0] && b >= bf[1] && b < bf[1] + d[1] &&
			     c >= bf[2] && c < bf[2] + d[2] && e >= bf[3] && e < bf[3] + d[3];

		out[o++] = inside ? in[(((size_t)(a - bf[0]) * d[1] + (b - bf[1])) * d[2] +
					(c - bf[2])) * d[3] + (e - bf[3])]
				  : (int8_t)p->value;
	}
	return NPU_OK;
}

bool npu_concat_valid(const struct npu_concat *p)
{
	uint64_t total = 0, n = 1, outer = 1;

	if (!p || p->rank < 1 || p->rank > 4 || p->axis >= p->rank || !p->count ||
	    p->count > NPU_CONCAT_MAX_INPUTS || !p->axis_dims ||
	    (p->elem_size != 1 && p->elem_size != 2 && p->elem_size != 4))
		return false;
	for (uint32_t i = 0; i < 4; i++) {
		if (i >= p->rank ? p->dims[i] != 0
				 : i != p->axis && (!p->dims[i] || p->dims[i] > 65536))
			return false;
		if (i < p->rank && i != p->axis)
			n *= p->dims[i];
		if (i < p->axis)
			outer *= p->dims[i];
	}
	for (uint32_t i = 0; i < p->count; i++) {
		if (!p->axis_dims[i] || p->axis_dims[i] > 65536)
			return false;
		total += p->axis_dims[i];
	}
	/* The whole output within 2^40 bytes: no product below can wrap. */
	return outer <= NPU_CONCAT_MAX_ROWS && n * p->elem_size <= (1ull << 40) / total;
}

void npu_concat_rows(const struct npu_concat *p, struct npu_concat_rows *r)
{
	r->outer = 1;
	r->inner = p->elem_size;
	r->axis_total = 0;
	for (uint32_t i = 0; i < p->rank; i++) {
		if (i < p->axis)
			r->outer *= p->dims[i];
		else if (i > p->axis)
			r->inner *= p->dims[i];
	}
	for (uint32_t i = 0; i < p->count; i++)
		r->axis_total += p->axis_dims[i];
}

int npu_ref_concat_v(size_t size, const struct npu_concat *p_in, const void *const *in, void *out)
{
	NPU_STRUCT_IN(struct npu_concat, p, p_in, size);
	struct npu_concat_rows r;
	uint64_t offset = 0;

	if (!npu_concat_valid(p) || !in || !out)
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->count; i++)
		if (!in[i])
			return NPU_EINVAL;
	npu_concat_rows(p, &r);
	for (uint32_t i = 0; i < p->count; i++) {
		size_t row = (size_t)(p->axis_dims[i] * r.inner);

		for (uint64_t o = 0; o < r.outer; o++)
			memcpy((char *)out + o * r.axis_total * r.inner + offset,
			       (const char *)in[i] + o * row, row);
		offset += row;
	}
	return NPU_OK;
}
