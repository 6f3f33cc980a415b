// SPDX-License-Identifier: MIT
/*
 * ref_layout.c - CPU references of transpose and pad: four nested loops
 * over the input (transpose) or the output (pad), ranks below 4 treated as
 * leading dimensions of size 1.
 */
#include <string.h>

#include "npu.h"
#include "npu_cmd.h"
#include "ir/kern_params.h"

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
