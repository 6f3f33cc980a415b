// SPDX-License-Identifier: MIT
/*
 * pack_nd.c - the N-dimensional kernels (ir/nd_params.h) as the NPU's N-d
 * commands (npu_cmd_nd.h); pure functions, see npu_pack.h. A kernel the
 * commands cannot express (a dtype or function they lack, a rank past
 * theirs) is NPU_ENOTSUP, which keeps its node off the NPU.
 */
#include <math.h>
#include <string.h>

#include "device/npu_pack.h"
#include "ref/ref_nd.h"

static uint32_t f32_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* libnpu's dtype as the commands', or 0. */
static uint32_t cmd_dt(uint32_t dt)
{
	switch (dt) {
	case NPU_DT_FLOAT32: return NPU_ND_F32;
	case NPU_DT_INT8: return NPU_ND_I8;
	case NPU_DT_UINT8: return NPU_ND_U8;
	case NPU_DT_INT32: return NPU_ND_I32;
	case NPU_DT_INT64: return NPU_ND_I64;
	case NPU_DT_BOOL: return NPU_ND_BOOL;
	case NPU_DT_BFLOAT16: return NPU_ND_BF16;
	case NPU_DT_FLOAT16: return NPU_ND_F16;
	default: return 0;
	}
}

/* Two operands both fp32, or each 8-bit, as the commands' dtypes (*@x, *@w); else 0. */
static int pair_dt(uint32_t xdt, uint32_t wdt, uint32_t *x, uint32_t *w)
{
	*x = cmd_dt(xdt);
	*w = cmd_dt(wdt);
	return *x && *w && *x <= NPU_ND_U8 && *w <= NPU_ND_U8 &&
	       (*x == NPU_ND_F32) == (*w == NPU_ND_F32);
}

static int fits_u32(uint64_t v)
{
	return v >= 1 && v <= UINT32_MAX;
}

/*
 * The engine's bounds, checked here too so that a kernel past them stays
 * off the NPU (with a reason) rather than failing its job: @count
 * elements of @es bytes within NPU_TENSOR_MAX_BYTES; each of @n dims
 * 1..NPU_TENSOR_MAX_DIM and their product likewise.
 */
static int count_fits(uint64_t count, uint64_t es)
{
	return count >= 1 && count <= NPU_TENSOR_MAX_BYTES / es;
}

static int dims_fit(const uint32_t *d, uint32_t n, uint64_t es)
{
	uint64_t c = 1;

	for (uint32_t i = 0; i < n; i++) {
		if (d[i] < 1 || d[i] > NPU_TENSOR_MAX_DIM)
			return 0;
		c *= d[i];
		if (c > NPU_TENSOR_MAX_BYTES)
			return 0;
	}
	return count_fits(c, es);
}

/* Each of @n entries in [@lo, @hi]. */
static int all_in(const uint32_t *v, uint32_t n, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] < lo || v[i] > hi)
			return 0;
	return 1;
}

int npu_pack_binary(struct npu_cmd_binary *c, const struct nd_binary *p, uint64_t a_va,
		    uint64_t b_va, uint64_t y_va)
{
	uint32_t dt = cmd_dt(p->dtype);
	int logic = p->fn == ND_AND || p->fn == ND_OR || p->fn == ND_XOR;

	if ((dt != NPU_ND_F32 && dt != NPU_ND_I32 && dt != NPU_ND_I64 && dt != NPU_ND_BOOL) ||
	    p->fn >= ND_NUM_BINARY || (dt != NPU_ND_F32 && p->fn == ND_POW) ||
	    (dt == NPU_ND_BOOL) != logic ||
	    !p->rank || p->rank > NPU_ND_MAX_RANK || !dims_fit(p->out, p->rank, 8))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_BINARY;
	c->hdr.size = sizeof(*c);
	c->a = a_va;
	c->b = b_va;
	c->out = y_va;
	c->fn = ND_BIN_CODE(p->fn);
	c->rank = p->rank;
	c->dtype = dt;
	memcpy(c->out_dims, p->out, 4 * p->rank);
	memcpy(c->a_dims, p->a, 4 * p->rank);
	memcpy(c->b_dims, p->b, 4 * p->rank);
	return 0;
}

int npu_nd_by_table(const struct nd_unary *p)
{
	return ref_nd_unary_by_table(p);
}

int npu_nd_table(const struct nd_unary *p, uint8_t table[256])
{
	return ref_nd_unary_table(p, table);
}

/* The command's NPU_ACTFN_* of function @fn (enum nd_fn), or 0 for none. */
static uint32_t act_fn(uint32_t fn)
{
	return ND_IS_ACT(fn) ? ND_ACT_CODE(fn) : 0;
}

/* @fn's parameters into prm[4] (alpha, beta, lo, hi), the others 0. */
static int act_params(uint32_t fn, const struct nd_unary *p, uint32_t *prm)
{
	if (npu_actfn_params(fn) & 1)
		prm[0] = f32_bits(p->alpha);
	if (npu_actfn_params(fn) & 2)
		prm[1] = f32_bits(p->beta);
	if (fn == NPU_ACTFN_CLIP) {
		if (!(p->lo <= p->hi))
			return NPU_ENOTSUP;
		prm[2] = f32_bits(p->lo);
		prm[3] = f32_bits(p->hi);
	}
	return 0;
}

int npu_pack_activation(struct npu_cmd_activation *c, const struct nd_unary *p, uint64_t x_va,
			uint64_t y_va, uint64_t table_va)
{
	uint32_t fn = act_fn(p->fn);
	int table = npu_nd_by_table(p);

	if (!count_fits(p->count, 4) || (table ? !table_va : p->dtype != NPU_DT_FLOAT32 ||
						   nd_unary_out_dt(p) != NPU_DT_FLOAT32 || !fn))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_ACTIVATION;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->out = y_va;
	c->count = (uint32_t)p->count;
	c->fn = table ? NPU_ACTFN_TABLE : fn;
	c->table = table ? table_va : 0;
	if (table)
		return 0;
	return act_params(fn, p, &c->alpha);
	return 0;
}

int npu_pack_copy(struct npu_cmd_copy *c, const struct nd_copy *p, uint64_t in_count,
		  uint64_t x_va, uint64_t y_va)
{
	size_t es = nd_elem_size(p->dtype);

	if (!es || !p->rank || p->rank > NPU_COPY_MAX_RANK || !count_fits(in_count, es) ||
	    !dims_fit(p->dims, p->rank, es))
		return NPU_ENOTSUP;
	for (uint32_t d = 0; d < p->rank; d++)
		if (p->dims[d] > 1 && (p->st[d] > (int64_t)in_count || p->st[d] < -(int64_t)in_count))
			return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_COPY;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->out = y_va;
	c->off = p->off;
	c->in_count = in_count;
	c->rank = p->rank;
	c->elem_size = (uint32_t)es;
	for (uint32_t d = 0; d < p->rank; d++) {
		c->dims[d] = p->dims[d];
		c->st[d] = p->st[d];
	}
	return 0;
}

/* A softmax's [outer][axis][inner] (and its gradient's) within the engine's bounds. */
static int softmax_fits(const struct nd_softmax *p)
{
	return fits_u32(p->outer) && fits_u32(p->axis) && fits_u32(p->inner) &&
	       count_fits(p->outer * p->axis * p->inner, 4);
}

/* A layer norm's rows (and its gradient's) within the engine's bounds. */
static int norm_fits(const struct nd_layernorm *p)
{
	return fits_u32(p->outer) && p->norm && p->norm <= NPU_TENSOR_MAX_DIM &&
	       count_fits(p->outer * p->norm, 4);
}

int npu_pack_softmax(struct npu_cmd_softmax *c, const struct nd_softmax *p, uint64_t x_va,
		     uint64_t mask_va, uint64_t y_va)
{
	if (!softmax_fits(p) ||
	    (mask_va && (p->inner != 1 || !p->mask_div || !fits_u32(p->mask_div) ||
			 !p->mask_rows || p->mask_rows > p->outer)))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_SOFTMAX;
	/* without a mask, the command as devices before the mask know it */
	c->hdr.size = mask_va ? sizeof(*c) : NPU_CMD_SOFTMAX_SIZE_NOMASK;
	c->in = x_va;
	c->out = y_va;
	c->outer = (uint32_t)p->outer;
	c->axis = (uint32_t)p->axis;
	c->inner = (uint32_t)p->inner;
	c->flags = p->log ? NPU_SOFTMAX_LOG : 0;
	if (mask_va) {
		c->mask = mask_va;
		c->mask_div = (uint32_t)p->mask_div;
		c->mask_rows = (uint32_t)p->mask_rows;
	}
	return 0;
}

int npu_pack_norm(struct npu_cmd_norm *c, const struct nd_layernorm *p, const uint64_t *va)
{
	if (!norm_fits(p) || !va[1])
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_NORM;
	c->hdr.size = sizeof(*c);
	c->in = va[0];
	c->scale = va[1];
	c->bias = va[2];
	c->out = va[3];
	c->mean = va[4];
	c->inv_std = va[5];
	c->rows = (uint32_t)p->outer;
	c->norm = (uint32_t)p->norm;
	c->eps = f32_bits(p->eps);
	c->hdr.size = NPU_CMD_NORM_SIZE_F32;	/* fp32: the form every device knows */
	if (p->xdt == NPU_DT_INT8 || p->ydt == NPU_DT_INT8) {
		c->hdr.size = sizeof(*c);
		c->xdt = p->xdt == NPU_DT_INT8 ? NPU_ND_I8 : NPU_ND_F32;
		c->ydt = p->ydt == NPU_DT_INT8 ? NPU_ND_I8 : NPU_ND_F32;
		c->xs = p->xdt == NPU_DT_INT8 ? f32_bits(p->xs) : 0;
		c->ys = p->ydt == NPU_DT_INT8 ? f32_bits(p->ys) : 0;
		c->xz = p->xdt == NPU_DT_INT8 ? p->xz : 0;
		c->yz = p->ydt == NPU_DT_INT8 ? p->yz : 0;
	}
	return 0;
}

int npu_pack_matmul(struct npu_cmd_matmul *c, const struct nd_matmul *p, const uint64_t *va)
{
	uint32_t adt, bdt;

	uint32_t mnk[3] = { p->m, p->n, p->k };
	uint64_t nb = 1, na = 1, nbb = 1, es = nd_elem_size(p->adt);
	int bf = p->adt == NPU_DT_BFLOAT16 && p->bdt == NPU_DT_BFLOAT16;

	if (bf) {
		adt = bdt = NPU_ND_BF16;
	} else if (!pair_dt(p->adt, p->bdt, &adt, &bdt)) {
		return NPU_ENOTSUP;
	}
	if (p->brank > NPU_ND_MAX_RANK ||
	    !all_in(mnk, 3, 1, NPU_TENSOR_MAX_DIM) ||
	    (p->brank && (!dims_fit(p->ob, p->brank, 1) || !dims_fit(p->ab, p->brank, 1) ||
			  !dims_fit(p->bb, p->brank, 1))))
		return NPU_ENOTSUP;
	for (uint32_t i = 0; i < p->brank; i++) {
		nb *= p->ob[i];
		na *= p->ab[i];
		nbb *= p->bb[i];
	}
	if (!count_fits(na * p->m * p->k, es) || !count_fits(nbb * p->k * p->n, es) ||
	    !count_fits(nb * p->m * p->n, 4) ||
	    nb * p->m * p->n > NPU_TENSOR_MAX_MACS / p->k)
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_MATMUL;
	c->hdr.size = sizeof(*c);
	c->a = va[0];
	c->b = va[1];
	c->a_zp = va[2];
	c->b_zp = va[3];
	c->out = va[4];
	c->m = p->m;
	c->n = p->n;
	c->k = p->k;
	c->brank = p->brank;
	c->adt = adt;
	c->bdt = bdt;
	c->azp_n = va[2] ? p->azp_n : 0;
	c->bzp_n = va[3] ? p->bzp_n : 0;
	c->flags = (p->trans_a ? NPU_MATMUL_TRANS_A : 0) | (p->trans_b ? NPU_MATMUL_TRANS_B : 0);
	c->alpha = f32_bits(adt == NPU_ND_F32 || bf ? p->alpha : 1.0f);
	memcpy(c->ob, p->ob, 4 * p->brank);
	memcpy(c->ab, p->ab, 4 * p->brank);
	memcpy(c->bb, p->bb, 4 * p->brank);
	return 0;
}

int npu_pack_qdq(struct npu_cmd_qdq *c, const struct nd_qdq *p, const uint64_t *va)
{
	static const uint32_t modes[] = {
		[ND_DEQUANTIZE] = NPU_QDQ_DEQUANTIZE, [ND_QUANTIZE] = NPU_QDQ_QUANTIZE,
		[ND_REQUANTIZE] = NPU_QDQ_REQUANTIZE, [ND_REQUANTIZE_Q31] = NPU_QDQ_REQUANTIZE_Q31,
	};
	uint32_t qdt = cmd_dt(p->qdtype);

	if (p->mode > ND_REQUANTIZE_Q31 || !qdt || qdt == NPU_ND_F32 || qdt > NPU_ND_I32 ||
	    (qdt == NPU_ND_I32 && p->mode != ND_DEQUANTIZE) || !fits_u32(p->outer) ||
	    !fits_u32(p->axis) || !fits_u32(p->inner) ||
	    !count_fits(p->outer * p->axis * p->inner, 4))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_QDQ;
	c->hdr.size = sizeof(*c);
	c->in = va[0];
	c->scale = va[1];
	c->zp = va[2];
	c->out = va[3];
	c->mode = modes[p->mode];
	c->qdtype = qdt;
	c->outer = (uint32_t)p->outer;
	c->axis = (uint32_t)p->axis;
	c->inner = (uint32_t)p->inner;
	return 0;
}

int npu_pack_reduce(struct npu_cmd_reduce *c, const struct nd_reduce *p, uint64_t x_va,
		    uint64_t y_va)
{
	static const uint32_t fns[ND_R_NUM] = {
		[ND_R_SUM] = NPU_RED_SUM, [ND_R_MEAN] = NPU_RED_MEAN, [ND_R_MAX] = NPU_RED_MAX,
		[ND_R_MIN] = NPU_RED_MIN, [ND_R_PROD] = NPU_RED_PROD,
		[ND_R_SUM_SQUARE] = NPU_RED_SUM_SQUARE, [ND_R_L1] = NPU_RED_L1,
		[ND_R_L2] = NPU_RED_L2, [ND_R_LOG_SUM] = NPU_RED_LOG_SUM,
		[ND_R_LOG_SUM_EXP] = NPU_RED_LOG_SUM_EXP, [ND_R_SUM_F32] = NPU_RED_SUM_F32,
		[ND_R_ARGMAX] = NPU_RED_ARGMAX, [ND_R_ARGMIN] = NPU_RED_ARGMIN,
	};
	uint32_t dt = cmd_dt(p->dtype), fn = p->fn < ND_R_NUM ? fns[p->fn] : 0;
	int int_fn = fn != NPU_RED_L2 && fn != NPU_RED_LOG_SUM && fn != NPU_RED_LOG_SUM_EXP &&
		     fn != NPU_RED_SUM_F32;

	if (!fn || !dt || (dt > NPU_ND_I32 && dt != NPU_ND_I64) || (dt != NPU_ND_F32 && !int_fn) ||
	    !p->rank ||
	    p->rank > NPU_ND_MAX_RANK || !p->mask || p->mask >> p->rank ||
	    !dims_fit(p->in, p->rank, nd_elem_size(p->dtype)))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_REDUCE;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->out = y_va;
	c->fn = fn;
	c->dtype = dt;
	c->rank = p->rank;
	c->mask = p->mask;
	c->flags = p->select_last ? NPU_REDUCE_SELECT_LAST : 0;
	memcpy(c->dims, p->in, 4 * p->rank);
	return 0;
}

int npu_pack_cast(struct npu_cmd_cast *c, const struct nd_unary *p, uint64_t x_va,
		  uint64_t y_va)
{
	uint32_t idt = cmd_dt(p->dtype), odt = cmd_dt(p->odtype);

	if (p->fn != ND_CAST || !idt || !odt || !count_fits(p->count, 8))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_CAST;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->out = y_va;
	c->count = (uint32_t)p->count;
	c->in_dt = idt;
	c->out_dt = odt;
	return 0;
}

/*
 * GatherElements as [outer][axis][inner]: the indices shaped as x but
 * along the axis (the command's one index per output element); 0, or -1
 * where they are smaller elsewhere too (ONNX allows it; the NPU does not).
 */
static int elements_dims(const struct nd_gather *p, uint64_t *outer, uint64_t *axis,
			 uint64_t *inner, uint64_t *nidx)
{
	*outer = *inner = 1;
	if (!p->rank || p->rank > ND_MAX_RANK || p->ax >= p->rank)
		return -1;
	for (uint32_t d = 0; d < p->rank; d++) {
		if (d != p->ax && p->id[d] != p->xd[d])
			return -1;
		if (d < p->ax)
			*outer *= p->xd[d];
		else if (d > p->ax)
			*inner *= p->xd[d];
	}
	*axis = p->xd[p->ax];
	*nidx = p->id[p->ax];
	return 0;
}

int npu_pack_gather(struct npu_cmd_gather *c, const struct nd_gather *p, uint64_t x_va,
		    uint64_t idx_va, uint64_t y_va)
{
	size_t es = nd_elem_size(p->dtype);
	uint64_t outer = p->outer, axis = p->axis, inner = p->inner, nidx = p->nidx;

	if (p->elements && elements_dims(p, &outer, &axis, &inner, &nidx))
		return NPU_ENOTSUP;
	if (!es || (p->idt != NPU_DT_INT32 && p->idt != NPU_DT_INT64) || !fits_u32(outer) ||
	    !fits_u32(axis) || !fits_u32(inner) || !fits_u32(nidx) ||
	    !count_fits(outer * axis * inner, es) || !count_fits(outer * nidx * inner, es) ||
	    !count_fits(p->elements ? outer * nidx * inner : nidx, 8))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_GATHER;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->idx = idx_va;
	c->out = y_va;
	c->outer = (uint32_t)outer;
	c->axis = (uint32_t)axis;
	c->inner = (uint32_t)inner;
	c->nidx = (uint32_t)nidx;
	c->elem_size = (uint32_t)es;
	c->idx_size = p->idt == NPU_DT_INT32 ? 4 : 8;
	c->flags = p->elements ? NPU_GATHER_ELEMENTS : 0;
	return 0;
}

int npu_pack_conv(struct npu_cmd_conv *c, const struct nd_conv *p, const uint64_t *va)
{
	uint32_t xdt, wdt;

	uint32_t ch[3] = { p->batch, p->in_c, p->out_c };
	uint64_t es = p->xdt == NPU_DT_FLOAT32 ? 4 : 1, isp = 1, osp = 1, ksp = 1;

	if (!p->nsp || p->nsp > NPU_ND_MAX_SP || !pair_dt(p->xdt, p->wdt, &xdt, &wdt) ||
	    !all_in(ch, 3, 1, NPU_TENSOR_MAX_DIM) || !p->groups || p->in_c % p->groups ||
	    p->out_c % p->groups || !all_in(p->in, p->nsp, 1, NPU_TENSOR_MAX_DIM) ||
	    !all_in(p->out, p->nsp, 1, NPU_TENSOR_MAX_DIM) ||
	    !all_in(p->k, p->nsp, 1, NPU_CONV_MAX_KERNEL) ||
	    !all_in(p->s, p->nsp, 1, NPU_CONV_MAX_KERNEL) ||
	    !all_in(p->d, p->nsp, 1, NPU_CONV_MAX_KERNEL))
		return NPU_ENOTSUP;
	for (uint32_t i = 0; i < p->nsp; i++) {
		if (p->pad[i] < -65536 || p->pad[i] > 65536)
			return NPU_ENOTSUP;
		isp *= p->in[i];
		osp *= p->out[i];
		ksp *= p->k[i];
	}
	if (!count_fits((uint64_t)p->batch * p->in_c * isp, es) ||
	    !count_fits((uint64_t)p->out_c * (p->in_c / p->groups) * ksp, es) ||
	    !count_fits((uint64_t)p->batch * p->out_c * osp, 4) ||
	    nd_conv_macs(p) > NPU_TENSOR_MAX_MACS)
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_CONV;
	c->hdr.size = sizeof(*c);
	c->x = va[0];
	c->w = va[1];
	c->bias = va[2];
	c->x_zp = va[3];
	c->w_zp = va[4];
	c->y = va[5];
	c->nsp = p->nsp;
	c->batch = p->batch;
	c->in_c = p->in_c;
	c->out_c = p->out_c;
	c->groups = p->groups;
	c->flags = p->transpose ? NPU_CONV_ND_TRANSPOSE : 0;
	for (uint32_t i = 0; i < p->nsp; i++) {
		c->in[i] = p->in[i];
		c->out[i] = p->out[i];
		c->k[i] = p->k[i];
		c->s[i] = p->s[i];
		c->d[i] = p->d[i];
		c->pad[i] = p->pad[i];
	}
	c->xdt = xdt;
	c->wdt = wdt;
	c->wzp_n = va[4] ? p->wzp_n : 0;
	return 0;
}

int npu_pack_pool(struct npu_cmd_pool *c, const struct nd_pool *p, uint64_t x_va, uint64_t y_va,
		  uint64_t idx_va)
{
	uint32_t dt = cmd_dt(p->dtype);

	uint64_t es = dt == NPU_ND_F32 ? 4 : 1, isp = 1, osp = 1;

	if (idx_va || !p->nsp || p->nsp > NPU_ND_MAX_SP || !dt || dt > NPU_ND_U8 ||
	    (p->average && dt != NPU_ND_F32) || !p->batch || p->batch > NPU_TENSOR_MAX_DIM ||
	    !p->c || p->c > NPU_TENSOR_MAX_DIM || !all_in(p->in, p->nsp, 1, NPU_TENSOR_MAX_DIM) ||
	    !all_in(p->out, p->nsp, 1, NPU_TENSOR_MAX_DIM) ||
	    !all_in(p->k, p->nsp, 1, NPU_TENSOR_MAX_DIM) ||
	    !all_in(p->s, p->nsp, 1, NPU_TENSOR_MAX_DIM) ||
	    !all_in(p->d, p->nsp, 1, NPU_CONV_MAX_KERNEL) ||
	    !all_in(p->lo, p->nsp, 0, NPU_CONV_MAX_PAD) || !all_in(p->hi, p->nsp, 0, NPU_CONV_MAX_PAD))
		return NPU_ENOTSUP;	/* MaxPool's indices: not this command */
	for (uint32_t i = 0; i < p->nsp; i++) {
		isp *= p->in[i];
		osp *= p->out[i];
	}
	if (!count_fits((uint64_t)p->batch * p->c * isp, es) ||
	    !count_fits((uint64_t)p->batch * p->c * osp, es) || nd_pool_taps(p) > NPU_TENSOR_MAX_MACS)
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_POOL;
	c->hdr.size = sizeof(*c);
	c->x = x_va;
	c->y = y_va;
	c->nsp = p->nsp;
	c->batch = p->batch;
	c->c = p->c;
	c->flags = (p->average ? NPU_POOL_ND_AVG : 0) |
		   (p->average && p->count_include_pad ? NPU_POOL_ND_COUNT_PAD : 0);
	c->dtype = dt;
	for (uint32_t i = 0; i < p->nsp; i++) {
		c->in[i] = p->in[i];
		c->out[i] = p->out[i];
		c->k[i] = p->k[i];
		c->s[i] = p->s[i];
		c->d[i] = p->d[i];
		c->lo[i] = p->lo[i];
		c->hi[i] = p->hi[i];
	}
	return 0;
}

int npu_pack_where(struct npu_cmd_where *c, const struct nd_where *p, const uint64_t *va)
{
	size_t es = nd_elem_size(p->dtype);

	if (!es || !p->rank || p->rank > NPU_ND_MAX_RANK || !dims_fit(p->out, p->rank, es))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_WHERE;
	c->hdr.size = sizeof(*c);
	c->cond = va[0];
	c->a = va[1];
	c->b = va[2];
	c->out = va[3];
	c->rank = p->rank;
	c->elem_size = (uint32_t)es;
	memcpy(c->out_dims, p->out, 4 * p->rank);
	memcpy(c->c_dims, p->c, 4 * p->rank);
	memcpy(c->a_dims, p->a, 4 * p->rank);
	memcpy(c->b_dims, p->b, 4 * p->rank);
	return 0;
}

/* ---- the gradients (training commands) --------------------------------------- */

int npu_pack_softmax_bwd(struct npu_cmd_softmax_bwd *c, const struct nd_softmax *p,
			 const uint64_t *va)
{
	if (!softmax_fits(p))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_SOFTMAX_BWD;
	c->hdr.size = sizeof(*c);
	c->y = va[0];
	c->dy = va[1];
	c->dx = va[2];
	c->outer = (uint32_t)p->outer;
	c->axis = (uint32_t)p->axis;
	c->inner = (uint32_t)p->inner;
	c->flags = p->log ? NPU_SOFTMAX_LOG : 0;
	return 0;
}

int npu_pack_norm_bwd(struct npu_cmd_norm_bwd *c, const struct nd_layernorm *p,
		      const uint64_t *va)
{
	if (!norm_fits(p) || !(va[5] | va[6] | va[7]))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_NORM_BWD;
	c->hdr.size = sizeof(*c);
	c->x = va[0];
	c->scale = va[1];
	c->mean = va[2];
	c->inv_std = va[3];
	c->dy = va[4];
	c->dx = va[5];
	c->dscale = va[6];
	c->dbias = va[7];
	c->rows = (uint32_t)p->outer;
	c->norm = (uint32_t)p->norm;
	return 0;
}

int npu_pack_act_bwd(struct npu_cmd_act_bwd *c, const struct nd_unary *p, const uint64_t *va)
{
	uint32_t fn = act_fn(p->fn);

	if (!fn || !npu_actfn_has_grad(fn) || p->dtype != NPU_DT_FLOAT32 || !count_fits(p->count, 4))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_ACT_BWD;
	c->hdr.size = sizeof(*c);
	c->x = va[0];
	c->dy = va[1];
	c->dx = va[2];
	c->count = (uint32_t)p->count;
	c->fn = fn;
	return act_params(fn, p, &c->alpha);
}

/* ---- padding, resizing ---------------------------------------------------------- */

int npu_pack_pad_nd(struct npu_cmd_pad_nd *c, const struct nd_pad *p, uint64_t x_va,
		    uint64_t y_va)
{
	static const uint32_t modes[] = { [ND_PAD_CONSTANT] = NPU_PADM_CONSTANT,
					  [ND_PAD_REFLECT] = NPU_PADM_REFLECT,
					  [ND_PAD_EDGE] = NPU_PADM_EDGE };
	size_t esz = nd_elem_size(p->dtype);
	float f = p->fval;
	int64_t v = p->ival;

	if (p->rank < 1 || p->rank > NPU_ND_MAX_RANK || p->mode > ND_PAD_EDGE ||
	    (esz != 1 && esz != 4 && esz != 8) || !dims_fit(p->in, p->rank, esz) ||
	    !dims_fit(p->out, p->rank, esz))
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_PAD_ND;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->out = y_va;
	c->rank = p->rank;
	c->mode = modes[p->mode];
	c->elem_size = (uint32_t)esz;
	if (p->dtype == NPU_DT_FLOAT32)
		memcpy(&c->value, &f, 4);
	else	/* the integer's low bytes, two's complement */
		c->value = esz == 8 ? (uint64_t)v : (uint64_t)v & ((1ull << (8 * esz)) - 1);
	memcpy(c->in_dims, p->in, 4 * p->rank);
	memcpy(c->out_dims, p->out, 4 * p->rank);
	memcpy(c->before, p->before, 4 * p->rank);
	return 0;
}

uint64_t npu_resize_table_bytes(const struct nd_resize *p)
{
	uint64_t n = 0;

	for (uint32_t d = 0; d < p->rank && d < ND_MAX_RANK; d++)
		n += p->out[d];
	return n * sizeof(struct npu_resize_tap);
}

int npu_resize_table(const struct nd_resize *p, void *buf)
{
	struct npu_resize_tap *t = buf;

	for (uint32_t d = 0; d < p->rank; d++)
		for (uint32_t o = 0; o < p->out[d]; o++, t++) {
			int n = 0;

			memset(t, 0, sizeof(*t));
			t->outside = (uint32_t)nd_resize_taps(p, d, o, &t->first, t->w, &n);
			if (t->outside) {	/* the extrapolation value: no taps read */
				memset(t, 0, sizeof(*t));
				t->outside = 1;
				n = 1;
			}
			t->count = (uint32_t)n;
			if (n < 1 || n > 4)
				return NPU_ENOTSUP;
		}
	return 0;
}

int npu_pack_resize(struct npu_cmd_resize *c, const struct nd_resize *p, uint64_t x_va,
		    uint64_t y_va, uint64_t table_va)
{
	uint32_t dt = cmd_dt(p->dtype), per = p->mode == ND_RESIZE_CUBIC ? 4 :
						p->mode == ND_RESIZE_LINEAR ? 2 : 1;
	size_t esz = nd_elem_size(p->dtype);
	uint64_t work = 1;

	if (!table_va || p->rank < 1 || p->rank > NPU_ND_MAX_RANK || !dt || dt > NPU_ND_I32 ||
	    !dims_fit(p->in, p->rank, esz) || !dims_fit(p->out, p->rank, esz) ||
	    !isfinite(p->extrapolation))
		return NPU_ENOTSUP;
	for (uint32_t d = 0; d < p->rank; d++)	/* the engine's bound on taps */
		work *= (uint64_t)p->out[d] * per;
	if (work > NPU_TENSOR_MAX_MACS)
		return NPU_ENOTSUP;
	memset(c, 0, sizeof(*c));
	c->hdr.op = NPU_CMD_RESIZE;
	c->hdr.size = sizeof(*c);
	c->in = x_va;
	c->out = y_va;
	c->table = table_va;
	c->rank = p->rank;
	c->dtype = dt;
	c->extrapolation = f32_bits(p->extrapolation);
	memcpy(c->in_dims, p->in, 4 * p->rank);
	memcpy(c->out_dims, p->out, 4 * p->rank);
	return 0;
}
