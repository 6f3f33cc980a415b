// SPDX-License-Identifier: MIT
/*
 * ref_gemm.c - the CPU reference of the int8 GEMM: the definition written
 * out as plainly as possible. Accumulation is int32; where a sum would not
 * fit, it wraps modulo 2^32 (done here in 64 bits, then truncated), which
 * is what the tensor engine does too.
 */
#include "npu.h"
#include "ir/kern_params.h"
#include "npu_quant.h"

int npu_ref_gemm_i8_v(size_t size, const struct npu_gemm_i8 *p_in, const int8_t *a, const int8_t *b,
		    const int32_t *bias, const int32_t *mult, const int32_t *shift,
		    int8_t *out)
{
	NPU_STRUCT_IN(struct npu_gemm_i8, p, p_in, size);
	if (!npu_gemm_i8_valid(p) || !a || !b || !mult || !shift || !out ||
	    !npu_quant_valid(p->requant, mult, shift, p->per_tensor ? 1 : p->n))
		return NPU_EINVAL;

	for (uint32_t m = 0; m < p->m; m++) {
		for (uint32_t n = 0; n < p->n; n++) {
			uint32_t c = p->per_tensor ? 0 : n;
			int64_t acc = bias ? bias[n] : 0;

			for (uint32_t k = 0; k < p->k; k++)
				acc += (int64_t)(a[(size_t)m * p->k + k] - p->a_zero) *
				       b[(size_t)n * p->k + k];
			out[(size_t)m * p->n + n] =
				npu_requant_q8(p->requant == NPU_REQUANT_ONNX,
					       (int32_t)(uint32_t)acc, mult[c], shift[c],
					       p->out_zero, p->act_min, p->act_max);
		}
	}
	return NPU_OK;
}
