// SPDX-License-Identifier: MIT
/*
 * onednn.c - the fast CPU backend: fp32 layers on oneDNN (Debian's
 * libdnnl2, loaded at run time: dnnl_api.h), for a machine with neither
 * an NPU nor a GPU, or to compare with. It claims what oneDNN runs with
 * its own kernels - convolutions with their bias and ReLU, matrix
 * products, pooling, ReLU, elementwise add/sub/mul/div, transposes - and
 * leaves the rest to the
 * CPU reference, asked after it. The reference stays the oracle: fp32
 * sums here are in oneDNN's order, so results are near the reference's,
 * not equal to them (the elementwise ops are exact). ReLU is oneDNN's
 * with a slope of -0, so that a negative value gives +0 as max(0, x)
 * does; some of its kernels take a vector maximum, which turns NaN into
 * 0 (as onnxruntime's ReLU does) where the reference keeps it.
 *
 * A constant weight is packed into the layout oneDNN's kernel wants once
 * per plan, and again only when the host writes a constant
 * (npu_run_args.consts_written) or the weight is trained.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/onednn/dnnl_api.h"
#include "passes/lower.h"
#include "ref/ref_nd.h"

#define DN_NS_PER_MAC	0.02	/* 2 cores of AVX2 FMA, roughly */
#define DN_NS_PER_BYTE	0.1
#define DN_MAX_ARGS	4

enum dn_kind { DN_CONV, DN_NDCONV, DN_MATMUL, DN_NDMATMUL, DN_ELTWISE, DN_BINARY, DN_POOL, DN_NDPOOL, DN_PERMUTE };

/* An elementwise function of oneDNN's (alg 0: none). */
struct dn_elt {
	dnnl_alg_kind_t alg;
	float alpha, beta;
};

/* What a node is to oneDNN: one primitive, with the layer's bias and ReLU. */
struct dn_match {
	enum dn_kind kind;
	const struct kern *k;		/* the main kernel */
	int src, wei, bias, dst;	/* tensor ids, -1: none (wei: a binary's src1) */
	struct dn_elt fn;		/* DN_ELTWISE's function, or a post-op after the others */
};

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

struct onednn {
	const struct dnnl_api *api;
	const npu_graph *g;
	const struct lowered *low;
	const unsigned char *fixed;	/* per tensor: constant (struct npu_backend_env) */
	dnnl_engine_t eng;
	dnnl_stream_t strm;
	char line[96];
};

/*
 * An operand oneDNN wants in another layout than the tensor's: staged
 * through a buffer of its own by a reorder, before the primitive (an
 * input; a constant one only when it changed) or after it (the output).
 */
struct dn_stage {
	dnnl_primitive_t re;
	dnnl_memory_t user;		/* the tensor, bound per run */
	dnnl_memory_t inner;		/* the buffer, in the primitive's args */
	void *buf;
	int t;
	int out;
	int konst;			/* constant and untrained: again only when written */
	int valid;
	uint64_t gen;			/* consts_written when it was staged */
};

#define DN_MAX_STAGES	3

/* One primitive of an executable and what its run binds. */
struct dn_prim {
	dnnl_primitive_t prim;
	int nargs, nst;
	dnnl_exec_arg_t args[DN_MAX_ARGS];
	int tens[DN_MAX_ARGS];		/* the tensor bound to args[i] per run, -1: staged */
	struct dn_stage st[DN_MAX_STAGES];
};

struct dn_exe {
	uint32_t n;
	struct dn_prim p[];
};

#define DN_TRY(call)							\
	do {								\
		dnnl_status_t st_ = (call);				\
		if (st_ != dnnl_success) {				\
			snprintf(why, len, "oneDNN: %s: status %d", #call, (int)st_); \
			goto fail;					\
		}							\
	} while (0)

/* ---- matching -------------------------------------------------------------- */

static int is_elt(const struct kern *k, enum npu_eltwise_f32_op op, int dst)
{
	return k->kind == K_ELT_F32 && k->p.felt.op == op && k->t[0] == dst && k->t[2] == dst;
}

static int match(const struct onednn *o, int node, struct dn_match *m, char *why, size_t len)
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

		if (p->adt != NPU_DT_FLOAT32 || p->bdt != NPU_DT_FLOAT32 || l->nk != 1 ||
		    !p->m || !p->n || !p->k) {
			snprintf(why, len, "oneDNN's matrix products: fp32");
			return -1;
		}
		for (uint32_t d = 0; d < p->brank; d++)
			if (!p->ob[d]) {
				snprintf(why, len, "an empty tensor");
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
		if (k->p.felt.op != NPU_EF_RELU || l->nk != 1 || !k->p.felt.count) {
			snprintf(why, len, "no oneDNN primitive for this elementwise op");
			return -1;
		}
		m->kind = DN_ELTWISE;
		m->fn = relu;
		m->wei = -1;
		return 0;
	case K_ND_UNARY: {
		const struct nd_unary *u = &k->p.un;

		if (u->dtype != NPU_DT_FLOAT32 || u->quant || !u->count || l->nk != 1 ||
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
		for (uint32_t d = 0; d < b->rank; d++)
			if (!b->out[d]) {
				snprintf(why, len, "an empty tensor");
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
	if (i < l->nk && is_elt(&l->k[i], NPU_EF_BIAS, m->dst))
		m->bias = l->k[i++].t[1];
	if (i < l->nk && is_elt(&l->k[i], NPU_EF_RELU, m->dst)) {
		m->fn = relu;
		i++;
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

/*
 * The primitive descriptor of @m (the caller destroys it) and the user
 * layouts of its operands (src, weights, bias, dst; bias zeroed when none).
 */
static int describe_prim(const struct onednn *o, const struct dn_match *m,
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
		dnnl_dims_t x = { p->batch, p->in_c, p->in_h, p->in_w };
		dnnl_dims_t w = { p->out_c, p->in_c, p->k_h, p->k_w };
		dnnl_dims_t b = { p->out_c };
		dnnl_dims_t y = { p->batch, p->out_c, p->out_h, p->out_w };
		dnnl_dims_t s = { p->stride_h, p->stride_w }, pad = { p->pad_top, p->pad_left };
		dnnl_dims_t dil = { (int64_t)p->dil_h - 1, (int64_t)p->dil_w - 1 };

		DN_TRY(a->memory_desc_init_by_tag(&md[0], 4, x, dnnl_f32, dnnl_nhwc));
		DN_TRY(a->memory_desc_init_by_tag(&md[1], 4, w, dnnl_f32, dnnl_ohwi));
		DN_TRY(weights_any(o, m->wei, &md[1], &wany, 4, w));
		DN_TRY(a->memory_desc_init_by_tag(&md[2], 1, b, dnnl_f32, dnnl_a));
		DN_TRY(a->memory_desc_init_by_tag(&md[3], 4, y, dnnl_f32, dnnl_nhwc));
		/* Both sides padded by the same amount: the output's size says how far it reaches. */
		DN_TRY(a->dilated_convolution_forward_desc_init(&d.conv, dnnl_forward_inference,
			dnnl_convolution_direct, &md[0], &wany, m->bias >= 0 ? &md[2] : NULL,
			&md[3], s, dil, pad, pad));
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
		DN_TRY(plain(a, &md[0], (int)p->rank, x));
		DN_TRY(plain(a, &md[1], (int)p->rank, w));
		md[3] = md[0];
		DN_TRY(a->binary_desc_init(&d.bin, alg[p->fn], &md[0], &md[1], &md[3]));
		break;
	}
	case DN_POOL: {
		const struct npu_pool_f32 *p = &k->p.fpool;
		dnnl_dims_t x = { p->batch, p->c, p->in_h, p->in_w };
		dnnl_dims_t y = { p->batch, p->c, p->out_h, p->out_w };
		dnnl_dims_t s = { p->stride_h, p->stride_w }, w = { p->k_h, p->k_w }, z = { 0, 0 };

		DN_TRY(a->memory_desc_init_by_tag(&md[0], 4, x, dnnl_f32, dnnl_nhwc));
		DN_TRY(a->memory_desc_init_by_tag(&md[3], 4, y, dnnl_f32, dnnl_nhwc));
		DN_TRY(a->pooling_v2_forward_desc_init(&d.pool, dnnl_forward_inference,
			p->mode == NPU_FPOOL_MAX ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding,
			&md[0], &md[3], s, w, z, z, z));
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

/* ---- the backend ----------------------------------------------------------- */

static int dn_open(void *ctx, const struct npu_backend_env *env, void **be, char *why,
		   size_t len)
{
	const struct dnnl_api *a = dnnl_api_get(why, len);
	struct onednn *o;

	(void)ctx;
	if (!a)
		return NPU_ENODEV;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NPU_ENOMEM;
	o->api = a;
	o->g = env->graph;
	o->low = env->internal;
	o->fixed = env->fixed;
	if (a->engine_create(&o->eng, dnnl_cpu, 0) != dnnl_success ||
	    a->stream_create(&o->strm, o->eng, dnnl_stream_default_flags) != dnnl_success) {
		snprintf(why, len, "oneDNN: no CPU engine");
		if (o->eng)
			a->engine_destroy(o->eng);
		free(o);
		return NPU_ENODEV;
	}
	{
		const dnnl_version_t *v = a->version();

		snprintf(o->line, sizeof(o->line), "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
	}
	*be = o;
	return 0;
}

static void dn_close(void *be)
{
	struct onednn *o = be;

	o->api->stream_destroy(o->strm);
	o->api->engine_destroy(o->eng);
	free(o);
}

static const char *dn_describe(void *be)
{
	return ((struct onednn *)be)->line;
}

static int dn_claim(void *be, int node, struct npu_claim *c)
{
	struct onednn *o = be;
	const struct lnode *l = &o->low->n[node];
	dnnl_memory_desc_t md[4];
	dnnl_primitive_desc_t pd;
	struct dn_match m;

	if (match(o, node, &m, c->reason, sizeof(c->reason)) ||
	    describe_prim(o, &m, &pd, md, c->reason, sizeof(c->reason)))
		return 0;
	o->api->primitive_desc_destroy(pd);
	c->cost_ns = 0;
	for (int i = 0; i < l->nk; i++)
		c->cost_ns += DN_NS_PER_MAC * (double)kern_macs(&l->k[i]) +
			      DN_NS_PER_BYTE * (double)kern_bytes(o->g, &l->k[i]);
	snprintf(c->reason, sizeof(c->reason), "oneDNN");
	return 1;
}

static void prim_free(const struct dnnl_api *a, struct dn_prim *p)
{
	for (int i = 0; i < p->nargs; i++)
		if (p->args[i].memory)
			a->memory_destroy(p->args[i].memory);
	for (int i = 0; i < p->nst; i++) {
		if (p->st[i].user)
			a->memory_destroy(p->st[i].user);
		if (p->st[i].re)
			a->primitive_destroy(p->st[i].re);
		free(p->st[i].buf);
	}
	if (p->prim)
		a->primitive_destroy(p->prim);
}

static void dn_release(void *be, void *exe)
{
	struct onednn *o = be;
	struct dn_exe *e = exe;

	for (uint32_t i = 0; i < e->n; i++)
		prim_free(o->api, &e->p[i]);
	free(e);
}

/* Bind argument @kind of @p to tensor @t's storage at each run (@md: its layout). */
static int add_arg(const struct onednn *o, struct dn_prim *p, int kind,
		   const dnnl_memory_desc_t *md, int t)
{
	dnnl_memory_t mem;

	if (o->api->memory_create(&mem, md, o->eng, DNNL_MEMORY_NONE) != dnnl_success)
		return -1;
	p->args[p->nargs] = (dnnl_exec_arg_t){ kind, mem };
	p->tens[p->nargs++] = t;
	return 0;
}

/*
 * Argument @kind of @p, tensor @t of layout @user: bound in place when
 * @pd wants that layout (@what: its query; dnnl_query_undef: the primitive
 * took @user as it is), else staged.
 */
static int add_staged(const struct onednn *o, struct dn_prim *p, dnnl_primitive_desc_t pd,
		      dnnl_query_t what, int kind, const dnnl_memory_desc_t *user, int t,
		      char *why, size_t len)
{
	const struct dnnl_api *a = o->api;
	const dnnl_memory_desc_t *want = what == dnnl_query_undef ? NULL :
					 a->primitive_desc_query_md(pd, what, 0);
	struct dn_stage *s = &p->st[p->nst];
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_memory_t mem = NULL;
	size_t bytes;

	if (!want || a->memory_desc_equal(want, user)) {
		if (!add_arg(o, p, kind, user, t))
			return 0;
		snprintf(why, len, "oneDNN: no memory object");
		return -1;
	}
	bytes = a->memory_desc_get_size(want);
	s->buf = aligned_alloc(64, (bytes + 63) / 64 * 64);
	if (!s->buf) {
		snprintf(why, len, "out of memory for a staged operand of %zu bytes", bytes);
		return -1;
	}
	p->nst++;
	s->t = t;
	s->out = kind == DNNL_ARG_DST;
	s->konst = kind == DNNL_ARG_WEIGHTS && o->fixed && o->fixed[t] && !o->g->t[t].param;
	DN_TRY(a->memory_create(&mem, want, o->eng, s->buf));
	DN_TRY(a->memory_create(&s->user, user, o->eng, DNNL_MEMORY_NONE));
	if (s->out)
		DN_TRY(a->reorder_primitive_desc_create(&rpd, want, o->eng, user, o->eng, NULL));
	else
		DN_TRY(a->reorder_primitive_desc_create(&rpd, user, o->eng, want, o->eng, NULL));
	DN_TRY(a->primitive_create(&s->re, rpd));
	a->primitive_desc_destroy(rpd);
	s->inner = mem;
	p->args[p->nargs] = (dnnl_exec_arg_t){ kind, mem };
	p->tens[p->nargs++] = -1;
	return 0;
fail:
	if (rpd)
		a->primitive_desc_destroy(rpd);
	if (mem)
		a->memory_destroy(mem);
	return -1;
}

/*
 * Whether node @relu, a ReLU, can be run as a post-op of node @node (a
 * layer or a binary op without one) into the ReLU's output: it reads what
 * @node writes, and nothing else does. That tensor is then never made, as
 * the layout pass's unread NCHW copies are not: the graph must declare
 * its outputs, and it must not be one.
 */
static int fusable(const struct onednn *o, int node, int next, struct dn_match *r)
{
	const npu_graph *g = o->g;
	struct dn_match m;
	char why[96];
	int y, readers = 0;

	if (!g->noutputs || match(o, node, &m, why, sizeof(why)) || m.fn.alg ||
	    m.kind == DN_ELTWISE || m.kind == DN_POOL || m.kind == DN_NDPOOL ||
	    m.kind == DN_PERMUTE || match(o, next, r, why, sizeof(why)) || r->kind != DN_ELTWISE ||
	    r->src != m.dst || ir_count(g, r->dst) != ir_count(g, m.dst))
		return 0;
	y = ir_root(g, m.dst);
	if (ir_declared(g, y, 2))
		return 0;
	for (int j = 0; j < g->nn; j++)	/* those that run: not an unread NCHW copy (no kernel) */
		for (uint32_t k = 0; k < g->n[j].nin && o->low->n[j].nk; k++)
			readers += g->n[j].in[k] >= 0 && ir_root(g, g->n[j].in[k]) == y;
	return readers == 1;
}

/* Node @node's primitive in @p; with @post, a function after it into post->dst. */
static int build(const struct onednn *o, int node, const struct dn_match *post,
		 struct dn_prim *p, char *why, size_t len)
{
	const struct dnnl_api *a = o->api;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t md[4];
	struct dn_match m;
	int layer;

	if (match(o, node, &m, why, len))
		return NPU_ENOTSUP;
	if (post) {
		m.fn = post->fn;
		m.dst = post->dst;
	}
	if (describe_prim(o, &m, &pd, md, why, len))
		return NPU_ENOTSUP;
	layer = m.kind == DN_CONV || m.kind == DN_NDCONV || m.kind == DN_MATMUL ||
		m.kind == DN_NDMATMUL;
	DN_TRY(a->primitive_create(&p->prim, pd));
	/* DNNL_ARG_SRC and _DST are also a reorder's FROM and TO. */
	if (add_staged(o, p, pd, dnnl_query_src_md, m.kind == DN_BINARY ? DNNL_ARG_SRC_0 :
		       DNNL_ARG_SRC, &md[0], m.src, why, len) ||
	    (m.kind == DN_BINARY && add_staged(o, p, pd, dnnl_query_undef, DNNL_ARG_SRC_1,
					       &md[1], m.wei, why, len)) ||
	    (layer && add_staged(o, p, pd, dnnl_query_weights_md, DNNL_ARG_WEIGHTS, &md[1], m.wei,
				 why, len)) ||
	    (m.bias >= 0 && add_staged(o, p, pd, dnnl_query_undef, DNNL_ARG_BIAS, &md[2], m.bias,
				       why, len)) ||
	    add_staged(o, p, pd, dnnl_query_dst_md, DNNL_ARG_DST, &md[3], m.dst, why, len))
		goto fail;
	a->primitive_desc_destroy(pd);
	return 0;
fail:
	if (pd)
		a->primitive_desc_destroy(pd);
	return NPU_EIO;
}

static int dn_compile(void *be, const int *nodes, uint32_t count, void **exe, char *why,
		      size_t len)
{
	struct onednn *o = be;
	struct dn_exe *e = calloc(1, sizeof(*e) + sizeof(e->p[0]) * count);

	if (!e)
		return NPU_ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		struct dn_match post;
		int node = nodes[i], fuse, err;

		fuse = i + 1 < count && fusable(o, node, nodes[i + 1], &post);
		i += fuse;	/* the function after it: done here */
		err = build(o, node, fuse ? &post : NULL, &e->p[e->n++], why, len);
		if (err) {
			dn_release(o, e);
			return err;
		}
	}
	*exe = e;
	return 0;
}

/* Reorder stage @s between its tensor's storage and its buffer. */
static int stage(const struct onednn *o, struct dn_stage *s, const struct npu_run_args *r)
{
	const struct dnnl_api *a = o->api;
	dnnl_exec_arg_t ra[2] = { { DNNL_ARG_FROM, s->out ? s->inner : s->user },
				  { DNNL_ARG_TO, s->out ? s->user : s->inner } };

	if (s->konst && s->valid && s->gen == r->consts_written)
		return 0;
	if (a->memory_set_data_handle(s->user, r->host[s->t]) != dnnl_success ||
	    a->primitive_execute(s->re, o->strm, 2, ra) != dnnl_success)
		return NPU_EIO;
	s->valid = 1;
	s->gen = r->consts_written;
	return 0;
}

static int run_prim(const struct onednn *o, struct dn_prim *p, const struct npu_run_args *r)
{
	const struct dnnl_api *a = o->api;
	int err = 0;

	for (int i = 0; i < p->nargs; i++)
		if (p->tens[i] >= 0 &&
		    a->memory_set_data_handle(p->args[i].memory, r->host[p->tens[i]]) != dnnl_success)
			return NPU_EIO;
	for (int i = 0; i < p->nst && !err; i++)
		if (!p->st[i].out)
			err = stage(o, &p->st[i], r);
	if (!err && a->primitive_execute(p->prim, o->strm, p->nargs, p->args) != dnnl_success)
		err = NPU_EIO;
	for (int i = 0; i < p->nst && !err; i++)
		if (p->st[i].out)
			err = stage(o, &p->st[i], r);
	return err;
}

static int dn_execute(void *be, void *exe, const struct npu_run_args *r, uint64_t *signal)
{
	struct onednn *o = be;
	struct dn_exe *e = exe;
	int err = 0;

	*signal = 0;
	for (uint32_t i = 0; i < e->n && !err; i++)
		err = run_prim(o, &e->p[i], r);
	if (o->api->stream_wait(o->strm) != dnnl_success && !err)
		err = NPU_EIO;
	return err;
}

const struct npu_backend_ops backend_onednn_ops = {
	.name = "onednn",
	.title = "CPU (oneDNN)",
	.unit = "run",
	.flags = NPU_BACKEND_F_HOST_MEMORY,
	.open = dn_open,
	.close = dn_close,
	.describe = dn_describe,
	.claim = dn_claim,
	.compile = dn_compile,
	.execute = dn_execute,
	.release = dn_release,
};
