// SPDX-License-Identifier: MIT
/* ref_quantize.c - CPU reference of fp32 <-> int8 (TFLite Quantize/Dequantize). */
#include <math.h>

#include "npu.h"
#include "ir/kern_params.h"

int npu_ref_quantize_v(size_t size, const struct npu_quantize *p_in, const void *in, void *out)
{
	NPU_STRUCT_IN(struct npu_quantize, p, p_in, size);
	if (!npu_quantize_valid(p) || !in || !out)
		return NPU_EINVAL;
	for (uint32_t i = 0; i < p->count; i++) {
		if (p->dequantize) {
			int32_t q = ((const int8_t *)in)[i];

			((float *)out)[i] = (float)(p->scale * (q - p->zero_point));
		} else {
			float r = roundf(((const float *)in)[i] / (float)p->scale);
			int32_t q;

			if (isnan(r))
				q = p->zero_point;
			else if (r >= 1e6f)
				q = 127;
			else if (r <= -1e6f)
				q = -128;
			else
				q = (int32_t)r + p->zero_point;
			((int8_t *)out)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
		}
	}
	return NPU_OK;
}
