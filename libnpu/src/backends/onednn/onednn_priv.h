/* SPDX-License-Identifier: MIT */
/*
 * onednn_priv.h - what the fast CPU backend's files share (onednn.c: the
 * backend; onednn_desc.c: what a node is to oneDNN and its primitive;
 * onednn_plan.c: what a partition does across its nodes, post-ops and
 * blocked activations).
 */
#ifndef ONEDNN_PRIV_H
#define ONEDNN_PRIV_H

#include <stdio.h>

#include "backends/backend.h"
#include "backends/onednn/dnnl_api.h"
#include "passes/lower.h"
#include "ref/ref_nd.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

enum dn_kind {
	DN_CONV, DN_NDCONV, DN_MATMUL, DN_NDMATMUL, DN_ELTWISE, DN_BINARY, DN_POOL, DN_NDPOOL,
	DN_PERMUTE,
};

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

/* A backend instance: one plan's. */
struct onednn {
	const struct dnnl_api *api;
	const npu_graph *g;
	const struct lowered *low;
	const unsigned char *fixed;	/* per tensor: constant (struct npu_backend_env) */
	const unsigned char *blk;	/* while compiling: per root, stored nChw8c (blocked) */
	dnnl_engine_t eng;
	dnnl_stream_t strm;
	char line[96];
};
#define DN_TRY(call)							\
	do {								\
		dnnl_status_t st_ = (call);				\
		if (st_ != dnnl_success) {				\
			snprintf(why, len, "oneDNN: %s: status %d", #call, (int)st_); \
			goto fail;					\
		}							\
	} while (0)

/* Node @node as oneDNN runs it, into @m; 0, or -1 with the reason in @why. */
int dn_match_node(const struct onednn *o, int node, struct dn_match *m, char *why, size_t len);
/*
 * The primitive descriptor of @m (the caller destroys it) and the
 * layouts of its operands as the tensors store them (src, weights, bias,
 * dst); 0, or -1 with the reason in @why.
 */
int dn_primitive_desc(const struct onednn *o, const struct dn_match *m,
		      dnnl_primitive_desc_t *pd, dnnl_memory_desc_t md[4], char *why, size_t len);

/* A node of the partition, as it will be built: its match, a post-op's folded in. */
struct dn_plan_node {
	struct dn_match m;
	int node, fuse;
	struct dn_match post;
};

/* Whether node @next's function runs as node @node's post-op (*@r: its match). */
int dn_fusable(const struct onednn *o, int node, int next, struct dn_match *r);
/* Which roots of the partition's @n nodes @pn stay blocked, in @blk (per tensor). */
void dn_plan_blocked(const struct onednn *o, const struct dn_plan_node *pn, uint32_t n,
		     unsigned char *blk);

#pragma GCC visibility pop

#endif /* ONEDNN_PRIV_H */
