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

#include "backends/onednn/onednn_priv.h"

#define DN_NS_PER_MAC	0.02	/* 2 cores of AVX2 FMA, roughly */
#define DN_NS_PER_BYTE	0.1
#define DN_MAX_ARGS	4
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

	if (dn_match_node(o, node, &m, c->reason, sizeof(c->reason)) ||
	    dn_primitive_desc(o, &m, &pd, md, c->reason, sizeof(c->reason)))
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
/* Node @node's primitive in @p; with @post, a function after it into post->dst. */
static int build(const struct onednn *o, int node, const struct dn_match *post,
		 struct dn_prim *p, char *why, size_t len)
{
	const struct dnnl_api *a = o->api;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t md[4];
	struct dn_match m;
	int layer;

	if (dn_match_node(o, node, &m, why, len))
		return NPU_ENOTSUP;
	if (post) {
		m.fn = post->fn;
		m.dst = post->dst;
	}
	if (dn_primitive_desc(o, &m, &pd, md, why, len))
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
	struct dn_plan_node *pn = calloc(count + 1, sizeof(*pn));
	unsigned char *blk = calloc((size_t)o->g->nt + 1, 1);
	uint32_t n = 0;
	int err = 0;

	if (!e || !pn || !blk) {
		free(e);
		free(pn);
		free(blk);
		return NPU_ENOMEM;
	}
	for (uint32_t i = 0; i < count && !err; i++, n++) {
		pn[n].node = nodes[i];
		pn[n].fuse = i + 1 < count && dn_fusable(o, nodes[i], nodes[i + 1], &pn[n].post);
		i += pn[n].fuse;	/* the function after it: done with it */
		err = dn_match_node(o, pn[n].node, &pn[n].m, why, len) ? NPU_ENOTSUP : 0;
		if (pn[n].fuse)
			pn[n].m.dst = pn[n].post.dst;
	}
	if (!err)
		dn_plan_blocked(o, pn, n, blk);
	o->blk = blk;
	for (uint32_t i = 0; i < n && !err; i++)
		err = build(o, pn[i].node, pn[i].fuse ? &pn[i].post : NULL, &e->p[e->n++], why, len);
	o->blk = NULL;
	free(blk);
	free(pn);
	if (err) {
		dn_release(o, e);
		return err;
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
