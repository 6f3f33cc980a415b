// SPDX-License-Identifier: MIT
/* nd_params.c - the counts and types the N-d ops' parameters imply (nd_params.h). */
#include "ir/nd_params.h"

size_t nd_elem_size(uint32_t dt)
{
	switch (dt) {
	case NPU_DT_INT8: case NPU_DT_UINT8: case NPU_DT_BOOL: return 1;
	case NPU_DT_BFLOAT16: case NPU_DT_FLOAT16: return 2;
	case NPU_DT_INT32: case NPU_DT_FLOAT32: return 4;
	case NPU_DT_INT64: return 8;
	default: return 0;
	}
}

uint64_t nd_binary_count(const struct nd_binary *p, int which)
{
	const uint32_t *d = which == 0 ? p->a : which == 1 ? p->b : p->out;
	uint64_t n = 1;

	for (uint32_t i = 0; i < p->rank; i++)
		n *= d[i];
	return n;
}

uint32_t nd_binary_out_dt(uint32_t fn, uint32_t dt)
{
	return fn >= ND_EQUAL && fn <= ND_GREATER_EQUAL ? NPU_DT_BOOL : dt;
}

int nd_binary_arith_f32(const struct nd_binary *p)
{
	uint32_t fn = p->fn;

	return p->dtype == NPU_DT_FLOAT32 &&
	       (fn == ND_ADD || fn == ND_SUB || fn == ND_MUL || fn == ND_DIV || fn == ND_MAX ||
		fn == ND_MIN);
}

uint32_t nd_unary_out_dt(const struct nd_unary *p)
{
	if (p->fn == ND_CAST)
		return p->odtype;
	if (p->fn == ND_FLIP128)
		return p->dtype == NPU_DT_INT8 ? NPU_DT_UINT8 : NPU_DT_INT8;
	return p->dtype;
}

uint64_t nd_prod(const uint32_t *d, uint32_t n)
{
	uint64_t r = 1;

	for (uint32_t i = 0; i < n; i++)
		r *= d[i];
	return r;
}

uint64_t nd_conv_macs(const struct nd_conv *p)
{
	const uint32_t *sp = p->transpose ? p->in : p->out;
	uint32_t per = p->transpose ? p->out_c / p->groups : p->in_c / p->groups;

	return (uint64_t)p->batch * (p->transpose ? p->in_c : p->out_c) * nd_prod(sp, p->nsp) *
	       per * nd_prod(p->k, p->nsp);
}

uint64_t nd_pool_taps(const struct nd_pool *p)
{
	return (uint64_t)p->batch * p->c * nd_prod(p->out, p->nsp) * nd_prod(p->k, p->nsp);
}

uint64_t nd_where_count(const struct nd_where *p, int which)
{
	const uint32_t *d[] = { p->c, p->a, p->b, p->out };

	return nd_prod(d[which], p->rank);
}

uint64_t nd_copy_count(const struct nd_copy *p)
{
	return nd_prod(p->dims, p->rank);
}

uint64_t nd_reduce_count(const struct nd_reduce *p, int out)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < p->rank; d++)
		n *= out && (p->mask >> d & 1) ? 1 : p->in[d];
	return n;
}
