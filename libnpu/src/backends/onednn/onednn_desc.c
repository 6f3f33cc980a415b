// SPDX-License-Identifier: MIT
/*
 * onednn_desc.c - what a node is to oneDNN (dn_match_node) and the
 * primitive descriptor that runs it (dn_describe), in the layouts the
 * tensors are stored in, or oneDNN's choice where it may pick.
 */
#include <string.h>

#include "backends/onednn/onednn_priv.h"

/* ReLU as max(0, x): a slope of -0 makes a negative value's product +0. */
static const struct dn_elt relu = { dnnl_eltwise_relu, -0.0f, 0.0f };

/*
 * The N-d unary functions oneDNN has, with their parameters: from the
 * kernel's alpha and beta (1), its bounds (2), or none (0).
 */
static const struct {
	dnnl_alg_kind_t alg;
	int params;
} unary[ND_NUM_FN] = {
	[ND_RELU] = { dnnl_eltwise_relu, 0 },
	[ND_LEAKY_RELU] = { dnnl_eltwise_relu, 1 },
	[ND_SIGMOID] = { dnnl_eltwise_logistic, 0 },
	[ND_TANH] = { dnnl_eltwise_tanh, 0 },
	[ND_CLIP] = { dnnl_eltwise_clip_v2, 2 },
	[ND_HARD_SWISH] = { dnnl_eltwise_hardswish, 0 },
	[ND_AFFINE] = { dnnl_eltwise_linear, 1 },
	[ND_GELU] = { dnnl_eltwise_gelu_erf, 0 },
	[ND_GELU_TANH] = { dnnl_eltwise_gelu_tanh, 0 },
	[ND_EXP] = { dnnl_eltwise_exp, 0 },
	[ND_LOG] = { dnnl_eltwise_log, 0 },
	[ND_SQRT] = { dnnl_eltwise_sqrt, 0 },
	[ND_ABS] = { dnnl_eltwise_abs, 0 },
	[ND_ELU] = { dnnl_eltwise_elu, 1 },
	[ND_MISH] = { dnnl_eltwise_mish, 0 },
};
/* ---- matching -------------------------------------------------------------- */

int dn_match_node(const struct onednn *o, int node, struct dn_match *m, char *why, size_t len)
{
	const struct lnode *l = &o->low->n[node];
	const struct kern *k = l->nk ? &l->k[0] : NULL;
	int i = 1;

	memset(m, 0, sizeof(*m));
	m->k = k;
	m->bias = -1;
	if (!k || o->g->n[node].op == IR_CUSTOM) {
		snprintf(why, len, "not a oneDNN op");
		return -1;
	}
	for (int i = 0; i < k->nt; i++)	/* oneDNN has no use for them */
		if (k->t[i] >= 0 && !ir_count(o->g, k->t[i])) {
			snprintf(why, len, "an empty tensor");
			return -1;
		}
	m->src = k->t[0];
	m->wei = k->t[1];
	m->dst = k->t[2];
	switch (k->kind) {
	case K_CONV_F32:
		if (k->p.fconv.pass != NPU_CONV_FORWARD || k->p.fconv.p.bf16) {
			snprintf(why, len, "a gradient or bf16 convolution");
			return -1;
		}
		m->kind = DN_CONV;
		break;
	case K_ND_CONV: {
		const struct nd_conv *p = &k->p.nconv;

		if (p->xdt != NPU_DT_FLOAT32 || p->wdt != NPU_DT_FLOAT32 || p->transpose ||
		    !p->nsp || p->nsp > 3 || l->nk != 1) {
			snprintf(why, len, "oneDNN's convolutions: fp32, not transposed");
			return -1;
		}
		for (uint32_t d = 0; d < p->nsp; d++)
			if (p->pad[d] < 0) {
				snprintf(why, len, "a convolution that starts before its input");
				return -1;
			}
		m->kind = DN_NDCONV;
		m->bias = k->t[2];
		m->dst = k->t[5];
		return 0;
	}
	case K_ND_MATMUL: {
		const struct nd_matmul *p = &k->p.mm;

		if (p->adt != NPU_DT_FLOAT32 || p->bdt != NPU_DT_FLOAT32 || l->nk != 1) {
			snprintf(why, len, "oneDNN's matrix products: fp32");
			return -1;
		}
		m->kind = DN_NDMATMUL;
		m->dst = k->t[4];
		return 0;
	}
	case K_GEMM_F32:
		if (k->p.fgemm.bf16 || k->p.fgemm.alpha != 1.0f || k->p.fgemm.beta != 0.0f) {
			snprintf(why, len, "a bf16 or scaled matrix product");
			return -1;
		}
		m->kind = DN_MATMUL;
		break;
	case K_ELT_F32:
		if (k->p.felt.op != NPU_EF_RELU || l->nk != 1) {
			snprintf(why, len, "no oneDNN primitive for this elementwise op");
			return -1;
		}
		m->kind = DN_ELTWISE;
		m->fn = relu;
		m->wei = -1;
		return 0;
	case K_ND_UNARY: {
		const struct nd_unary *u = &k->p.un;

		if (u->dtype != NPU_DT_FLOAT32 || u->quant || l->nk != 1 ||
		    u->fn >= ND_NUM_FN || !unary[u->fn].alg) {
			snprintf(why, len, "no oneDNN function for it (fp32 only)");
			return -1;
		}
		m->kind = DN_ELTWISE;
		m->fn = u->fn == ND_RELU ? relu : (struct dn_elt){ unary[u->fn].alg,
			unary[u->fn].params == 1 ? u->alpha : unary[u->fn].params == 2 ? u->lo : 0,
			unary[u->fn].params == 1 ? u->beta : unary[u->fn].params == 2 ? u->hi : 0 };
		m->wei = -1;
		m->dst = k->t[1];
		return 0;
	}
	case K_ND_BINARY: {
		const struct nd_binary *b = &k->p.bin;

		if (b->dtype != NPU_DT_FLOAT32 || b->fn > ND_DIV || l->nk != 1 ||
		    memcmp(b->a, b->out, sizeof(b->a[0]) * b->rank)) {
			snprintf(why, len, "oneDNN's binary ops: fp32 add/sub/mul/div, the first "
				 "operand of the output's shape");
			return -1;
		}
		m->kind = DN_BINARY;
		return 0;
	}
	case K_POOL_F32:
		if ((k->p.fpool.mode != NPU_FPOOL_MAX && k->p.fpool.mode != NPU_FPOOL_AVG) ||
		    l->nk != 1) {
			snprintf(why, len, "a pooling gradient");
			return -1;
		}
		m->kind = DN_POOL;
		m->dst = k->t[1];
		m->wei = -1;
		return 0;
	case K_ND_POOL: {
		const struct nd_pool *p = &k->p.npool;

		if (p->dtype != NPU_DT_FLOAT32 || k->t[2] >= 0 || l->nk != 1 || p->nsp > 3) {
			snprintf(why, len, "oneDNN's pooling: fp32, without indices");
			return -1;
		}
		for (uint32_t d = 0; d < p->nsp; d++)	/* ceil mode counts what it adds */
			if (p->average && p->count_include_pad &&
			    (uint64_t)(p->out[d] - 1) * p->s[d] + (uint64_t)(p->k[d] - 1) * p->d[d] + 1 >
			    (uint64_t)p->in[d] + p->lo[d] + p->hi[d]) {
				snprintf(why, len, "an average over a window past the padding");
				return -1;
			}
		m->kind = DN_NDPOOL;
		m->dst = k->t[1];
		m->wei = -1;
		return 0;
	}
	case K_TRANSPOSE:
		if ((k->p.tr.elem_size != 4 && k->p.tr.elem_size != 1) || l->nk != 1) {
			snprintf(why, len, "a transpose of 2-byte elements");
			return -1;
		}
		m->kind = DN_PERMUTE;
		m->dst = k->t[1];
		m->wei = -1;
		return 0;
	default:
		snprintf(why, len, "no oneDNN primitive for %s", kern_desc(k->kind)->name);
		return -1;
	}
	/* A layer: its bias and ReLU are kernels in place on its output. */
	{
		int bias, has_relu;

		i += lower_epilogue(l, i, m->dst, &bias, &has_relu);
		if (bias >= 0)
			m->bias = bias;
		if (has_relu)
			m->fn = relu;
	}
	if (i != l->nk) {
		snprintf(why, len, "a layer with more than a bias and a ReLU");
		return -1;
	}
	return 0;
}

/* ---- descriptors ----------------------------------------------------------- */

/* A dense row-major descriptor of @rank dims. */
static dnnl_status_t plain(const struct dnnl_api *a, dnnl_memory_desc_t *md, int rank,
			   const dnnl_dims_t dims)
{
	return a->memory_desc_init_by_strides(md, rank, dims, dnnl_f32, NULL);
}

/*
 * Dense strides of @rank dims @d, the last two swapped in storage with
 * @trans (a matrix stored transposed).
 */
static void strides_of(const dnnl_dims_t d, int rank, int trans, dnnl_dims_t s)
{
	int64_t st = 1;

	for (int i = rank - 1; i >= 0; i--) {
		int j = !trans || i < rank - 2 ? i : i == rank - 1 ? rank - 2 : rank - 1;

		s[j] = st;
		st *= d[j];
	}
}

/*
 * The weights a layer asks oneDNN for: any layout (packed once per plan)
 * for a fixed tensor, else the tensor's own (@user), not to be reordered
 * at every run.
 */
static dnnl_status_t weights_any(const struct onednn *o, int t, const dnnl_memory_desc_t *user,
				 dnnl_memory_desc_t *want, int rank, const dnnl_dims_t dims)
{
	if (!o->fixed || !o->fixed[t] || o->g->t[t].param) {
		*want = *user;
		return dnnl_success;
	}
	return o->api->memory_desc_init_by_tag(want, rank, dims, dnnl_f32, dnnl_format_tag_any);
}

/* Whether tensor @t is stored blocked (nChw8c) within the partition being compiled. */
static int blocked(const struct onednn *o, int t)
{
	return o->blk && t >= 0 && o->blk[ir_root(o->g, t)];
}

/* An NHWC activation of logical dims @d (N, C, H, W): channels last, or blocked. */
static dnnl_status_t act4(const struct onednn *o, dnnl_memory_desc_t *md, const dnnl_dims_t d,
			  int blk)
{
	return o->api->memory_desc_init_by_tag(md, 4, d, dnnl_f32, blk ? dnnl_aBcd8b : dnnl_nhwc);
}

/* The bias's layout is zeroed when there is none (onednn_priv.h). */
int dn_primitive_desc(const struct onednn *o, const struct dn_match *m,
		      dnnl_primitive_desc_t *pd, dnnl_memory_desc_t md[4], char *why, size_t len)
{
	const struct dnnl_api *a = o->api;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t po = NULL;
	const struct kern *k = m->k;
	const char *impl = NULL;
	union {
		dnnl_convolution_desc_t conv;
		dnnl_matmul_desc_t mm;
		dnnl_eltwise_desc_t elt;
		dnnl_binary_desc_t bin;
		dnnl_pooling_v2_desc_t pool;
	} d;
	dnnl_memory_desc_t wany, xany, yany;

	*pd = NULL;
	memset(md, 0, sizeof(dnnl_memory_desc_t) * 4);
	DN_TRY(a->primitive_attr_create(&attr));
	if (m->fn.alg && m->kind != DN_ELTWISE) {
		DN_TRY(a->post_ops_create(&po));
		DN_TRY(a->post_ops_append_eltwise(po, 1.0f, m->fn.alg, m->fn.alpha, m->fn.beta));
		DN_TRY(a->primitive_attr_set_post_ops(attr, po));
	}
	switch (m->kind) {
	case DN_CONV: {
		const struct npu_conv2d_f32 *p = &k->p.fconv.p;
		int64_t gr = p->groups > 1 ? p->groups : 1;
		dnnl_dims_t x = { p->batch, p->in_c, p->in_h, p->in_w };
		/* [out_c][k_h][k_w][in_c / groups] is [groups][out_c / groups]...: gohwi */
		dnnl_dims_t wg = { gr, p->out_c / gr, p->in_c / gr, p->k_h, p->k_w };
		dnnl_dims_t w1 = { p->out_c, p->in_c, p->k_h, p->k_w };
		const int64_t *w = gr > 1 ? wg : w1;
		int wr = gr > 1 ? 5 : 4;
		dnnl_dims_t b = { p->out_c };
		dnnl_dims_t y = { p->batch, p->out_c, p->out_h, p->out_w };
		dnnl_dims_t s = { p->stride_h, p->stride_w }, pad = { p->pad_top, p->pad_left };
		dnnl_dims_t dil = { (int64_t)p->dil_h - 1, (int64_t)p->dil_w - 1 };

		int any = blocked(o, m->src) || blocked(o, m->dst);

		DN_TRY(act4(o, &md[0], x, blocked(o, m->src)));
		DN_TRY(a->memory_desc_init_by_tag(&md[1], wr, w, dnnl_f32,
						  gr > 1 ? dnnl_gohwi : dnnl_ohwi));
		DN_TRY(weights_any(o, m->wei, &md[1], &wany, wr, w));
		DN_TRY(a->memory_desc_init_by_tag(&md[2], 1, b, dnnl_f32, dnnl_a));
		DN_TRY(act4(o, &md[3], y, blocked(o, m->dst)));
		/* Blocked on either side: its own choice, staged where that differs. */
		DN_TRY(a->memory_desc_init_by_tag(&xany, 4, x, dnnl_f32, dnnl_format_tag_any));
		DN_TRY(a->memory_desc_init_by_tag(&yany, 4, y, dnnl_f32, dnnl_format_tag_any));
		/* Both sides padded by the same amount: the output's size says how far it reaches. */
		DN_TRY(a->dilated_convolution_forward_desc_init(&d.conv, dnnl_forward_inference,
			dnnl_convolution_direct, any ? &xany : &md[0], &wany,
			m->bias >= 0 ? &md[2] : NULL, any ? &yany : &md[3], s, dil, pad, pad));
		break;
	}
	case DN_NDCONV: {
		const struct nd_conv *p = &k->p.nconv;
		int g = p->groups > 1, r = 2 + (int)p->nsp;
		dnnl_dims_t x = { p->batch, p->in_c }, y = { p->batch, p->out_c }, b = { p->out_c };
		dnnl_dims_t w = { p->groups, p->out_c / p->groups, p->in_c / p->groups };
		dnnl_dims_t s, dil, lo, hi;

		for (uint32_t i = 0; i < p->nsp; i++) {
			x[2 + i] = p->in[i];
			y[2 + i] = p->out[i];
			w[3 + i] = p->k[i];
			s[i] = p->s[i];
			dil[i] = (int64_t)p->d[i] - 1;
			lo[i] = p->pad[i];
			hi[i] = (int64_t)(p->out[i] - 1) * p->s[i] + (int64_t)(p->k[i] - 1) * p->d[i] +
				1 - p->in[i] - p->pad[i];
		}
		DN_TRY(plain(a, &md[0], r, x));
		/* [out_c][in_c / groups][k...] is [groups][out_c / groups]...: one layout */
		DN_TRY(plain(a, &md[1], r + g, g ? w : w + 1));
		DN_TRY(plain(a, &md[2], 1, b));
		DN_TRY(plain(a, &md[3], r, y));
		DN_TRY(a->memory_desc_init_by_tag(&xany, r, x, dnnl_f32, dnnl_format_tag_any));
		DN_TRY(weights_any(o, m->wei, &md[1], &wany, r + g, g ? w : w + 1));
		DN_TRY(a->memory_desc_init_by_tag(&yany, r, y, dnnl_f32, dnnl_format_tag_any));
		DN_TRY(a->dilated_convolution_forward_desc_init(&d.conv, dnnl_forward_inference,
			dnnl_convolution_direct, &xany, &wany, m->bias >= 0 ? &md[2] : NULL, &yany,
			s, dil, lo, hi));
		break;
	}
	case DN_MATMUL: {
		const struct npu_gemm_f32 *p = &k->p.fgemm;
		dnnl_dims_t x = { p->m, p->k }, w = { p->k, p->n }, b = { 1, p->n };
		dnnl_dims_t y = { p->m, p->n };

		DN_TRY(a->memory_desc_init_by_tag(&md[0], 2, x, dnnl_f32,
						  p->trans_a ? dnnl_ba : dnnl_ab));
		DN_TRY(a->memory_desc_init_by_tag(&md[1], 2, w, dnnl_f32,
						  p->trans_b ? dnnl_ba : dnnl_ab));
		DN_TRY(weights_any(o, m->wei, &md[1], &wany, 2, w));
		DN_TRY(plain(a, &md[2], 2, b));
		DN_TRY(plain(a, &md[3], 2, y));
		DN_TRY(a->matmul_desc_init(&d.mm, &md[0], &wany, m->bias >= 0 ? &md[2] : NULL,
					   &md[3]));
		break;
	}
	case DN_NDMATMUL: {
		const struct nd_matmul *p = &k->p.mm;
		int r = (int)p->brank + 2;
		dnnl_dims_t x, w, y, xs, ws;

		for (uint32_t i = 0; i < p->brank; i++) {
			x[i] = p->ab[i];
			w[i] = p->bb[i];
			y[i] = p->ob[i];
		}
		x[r - 2] = y[r - 2] = p->m;
		x[r - 1] = w[r - 2] = p->k;
		w[r - 1] = y[r - 1] = p->n;
		/* row-major storage, [k][m] or [n][k] where transposed */
		strides_of(x, r, p->trans_a, xs);
		strides_of(w, r, p->trans_b, ws);
		DN_TRY(a->memory_desc_init_by_strides(&md[0], r, x, dnnl_f32, xs));
		DN_TRY(a->memory_desc_init_by_strides(&md[1], r, w, dnnl_f32, ws));
		DN_TRY(plain(a, &md[3], r, y));
		DN_TRY(weights_any(o, m->wei, &md[1], &wany, r, w));
		if (p->alpha != 1.0f)
			DN_TRY(a->primitive_attr_set_output_scales(attr, 1, 0, &p->alpha));
		DN_TRY(a->matmul_desc_init(&d.mm, &md[0], &wany, NULL, &md[3]));
		break;
	}
	case DN_ELTWISE: {
		dnnl_dims_t n = { k->kind == K_ELT_F32 ? k->p.felt.count : k->p.un.count };

		DN_TRY(plain(a, &md[0], 1, n));
		md[3] = md[0];
		DN_TRY(a->eltwise_forward_desc_init(&d.elt, dnnl_forward_inference, m->fn.alg,
						    &md[0], m->fn.alpha, m->fn.beta));
		break;
	}
	case DN_BINARY: {
		static const dnnl_alg_kind_t alg[] = {
			[ND_ADD] = dnnl_binary_add, [ND_SUB] = dnnl_binary_sub,
			[ND_MUL] = dnnl_binary_mul, [ND_DIV] = dnnl_binary_div,
		};
		const struct nd_binary *p = &k->p.bin;
		dnnl_dims_t x, w;

		for (uint32_t i = 0; i < p->rank; i++) {
			x[i] = p->out[i];
			w[i] = p->b[i];
		}
		if (blocked(o, m->dst)) {	/* NHWC twins: logical N, C, H, W, all three blocked */
			dnnl_dims_t l = { x[0], x[3], x[1], x[2] };

			DN_TRY(act4(o, &md[0], l, 1));
			md[1] = md[0];
		} else {
			DN_TRY(plain(a, &md[0], (int)p->rank, x));
			DN_TRY(plain(a, &md[1], (int)p->rank, w));
		}
		md[3] = md[0];
		DN_TRY(a->binary_desc_init(&d.bin, alg[p->fn], &md[0], &md[1], &md[3]));
		break;
	}
	case DN_POOL: {
		const struct npu_pool_f32 *p = &k->p.fpool;
		dnnl_dims_t x = { p->batch, p->c, p->in_h, p->in_w };
		dnnl_dims_t y = { p->batch, p->c, p->out_h, p->out_w };
		dnnl_dims_t s = { p->stride_h, p->stride_w }, w = { p->k_h, p->k_w }, z = { 0, 0 };

		DN_TRY(act4(o, &md[0], x, blocked(o, m->src)));
		DN_TRY(act4(o, &md[3], y, 0));
		DN_TRY(a->memory_desc_init_by_tag(&yany, 4, y, dnnl_f32, dnnl_format_tag_any));
		DN_TRY(a->pooling_v2_forward_desc_init(&d.pool, dnnl_forward_inference,
			p->mode == NPU_FPOOL_MAX ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding,
			&md[0], blocked(o, m->src) ? &yany : &md[3], s, w, z, z, z));
		break;
	}
	case DN_NDPOOL: {
		static const dnnl_format_tag_t cl[] = { dnnl_nc, dnnl_nwc, dnnl_nhwc, dnnl_ndhwc };
		const struct nd_pool *p = &k->p.npool;
		dnnl_dims_t x = { p->batch, p->c }, y = { p->batch, p->c }, s, w, dil, lo, hi;

		for (uint32_t i = 0; i < p->nsp; i++) {
			x[2 + i] = p->in[i];
			y[2 + i] = p->out[i];
			s[i] = p->s[i];
			w[i] = p->k[i];
			dil[i] = (int64_t)p->d[i] - 1;
			lo[i] = p->lo[i];
			/* ceil mode: the padding that the last window reaches, not only @hi */
			hi[i] = (int64_t)(p->out[i] - 1) * p->s[i] + (int64_t)(p->k[i] - 1) * p->d[i] +
				1 - p->in[i] - p->lo[i];
			if (hi[i] < (int64_t)p->hi[i])
				hi[i] = p->hi[i];
		}
		DN_TRY(plain(a, &md[0], 2 + (int)p->nsp, x));
		DN_TRY(plain(a, &md[3], 2 + (int)p->nsp, y));
		/* Channels last, staged: oneDNN pools NCHW with a plain loop, 10x slower. */
		DN_TRY(a->memory_desc_init_by_tag(&xany, 2 + (int)p->nsp, x, dnnl_f32, cl[p->nsp]));
		DN_TRY(a->memory_desc_init_by_tag(&yany, 2 + (int)p->nsp, y, dnnl_f32, cl[p->nsp]));
		DN_TRY(a->pooling_v2_forward_desc_init(&d.pool, dnnl_forward_inference,
			!p->average ? dnnl_pooling_max : p->count_include_pad ?
			dnnl_pooling_avg_include_padding : dnnl_pooling_avg_exclude_padding,
			&xany, &yany, s, w, dil, lo, hi));
		break;
	}
	case DN_PERMUTE: {
		const struct npu_transpose *p = &k->p.tr;
		dnnl_data_type_t dt = p->elem_size == 4 ? dnnl_s32 : dnnl_u8;
		dnnl_dims_t x, strides;
		int64_t st = 1;

		/* The output's strides, by the input's dim each output dim is. */
		for (int i = (int)p->rank - 1; i >= 0; i--) {
			x[i] = p->dims[i];
			strides[p->perm[i]] = st;
			st *= p->dims[p->perm[i]];
		}
		DN_TRY(a->memory_desc_init_by_strides(&md[0], (int)p->rank, x, dt, NULL));
		DN_TRY(a->memory_desc_init_by_strides(&md[3], (int)p->rank, x, dt, strides));
		DN_TRY(a->reorder_primitive_desc_create(pd, &md[0], o->eng, &md[3], o->eng, NULL));
		goto made;
	}
	}
	DN_TRY(a->primitive_desc_create(pd, &d, attr, o->eng, NULL));
made:
	/* oneDNN's own reference loops are no faster than libnpu's. */
	if (a->primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
	    impl && !strncmp(impl, "ref", 3)) {
		snprintf(why, len, "oneDNN has only its reference loop for it (%s)", impl);
		goto fail;
	}
	if (po)
		a->post_ops_destroy(po);
	a->primitive_attr_destroy(attr);
	return 0;
fail:
	if (*pd)
		a->primitive_desc_destroy(*pd);
	*pd = NULL;
	if (po)
		a->post_ops_destroy(po);
	if (attr)
		a->primitive_attr_destroy(attr);
	return -1;
}
