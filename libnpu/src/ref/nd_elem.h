/* SPDX-License-Identifier: MIT */
/*
 * nd_elem.h - one element of any dtype, loaded and stored as the
 * references of the N-dimensional ops do (ref_nd*.c): integers wrap as
 * numpy's two's complement, bool is 0 or 1.
 */
#ifndef NPU_ND_ELEM_H
#define NPU_ND_ELEM_H

#include "npu_train_math.h"
#include "ref/ref_nd.h"

/* ---- elements of any dtype ------------------------------------------------ */

static inline double ld(const void *p, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case NPU_DT_FLOAT32: return ((const float *)p)[i];
	case NPU_DT_INT8: return ((const int8_t *)p)[i];
	case NPU_DT_UINT8: case NPU_DT_BOOL: return ((const uint8_t *)p)[i];
	case NPU_DT_INT32: return ((const int32_t *)p)[i];
	case NPU_DT_INT64: return (double)((const int64_t *)p)[i];
	case NPU_DT_BFLOAT16: return npu_bf16_to_f32(((const uint16_t *)p)[i]);
	case NPU_DT_FLOAT16: return npu_f16_to_f32(((const uint16_t *)p)[i]);
	default: return 0;
	}
}

static inline int64_t ldi(const void *p, uint32_t dt, uint64_t i)
{
	switch (dt) {
	case NPU_DT_INT8: return ((const int8_t *)p)[i];
	case NPU_DT_UINT8: case NPU_DT_BOOL: return ((const uint8_t *)p)[i];
	case NPU_DT_INT32: return ((const int32_t *)p)[i];
	case NPU_DT_INT64: return ((const int64_t *)p)[i];
	default: return (int64_t)((const float *)p)[i];
	}
}

/* Store an integer, wrapping as two's complement does (numpy's integers). */
static inline void sti(void *p, uint32_t dt, uint64_t i, int64_t v)
{
	switch (dt) {
	case NPU_DT_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
	case NPU_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case NPU_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case NPU_DT_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
	case NPU_DT_INT64: ((int64_t *)p)[i] = v; break;
	default: ((float *)p)[i] = (float)v; break;
	}
}

static inline int is_int(uint32_t dt)
{
	return dt == NPU_DT_INT8 || dt == NPU_DT_UINT8 || dt == NPU_DT_INT32 || dt == NPU_DT_INT64;
}

#endif /* NPU_ND_ELEM_H */
