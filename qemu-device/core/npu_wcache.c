// SPDX-License-Identifier: MIT
/*
 * npu_wcache.c - constant weights kept packed between commands.
 *
 * A network's weights are the same on every inference, yet each command
 * would read them out of guest memory and pack them for its kernel again:
 * for ResNet-50 in fp32 that is 100 MB read and rearranged per image. A
 * command that promises its weights constant (NPU_CONVF_CONST_W, with the
 * host's generation of their values) lets the engine keep the packed form.
 *
 * What keeps a copy honest is what would keep an on-chip weight buffer
 * honest: the key holds the context, the address, the host's generation
 * and the packing; and a copy is let go as soon as its context's
 * translations are invalidated (the driver invalidates whenever it maps
 * or unmaps a buffer, so a freed buffer's address can never find an old
 * copy), or the device is reset. The host may see stale weights only if
 * it breaks its promise, rewriting them under the same generation, and
 * then only in its own context.
 *
 * A handful of entries (one per layer), so a list in use order serves.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_core_priv.h"

struct npu_wc_entry {
	struct npu_wc_entry *next;
	struct npu_wc_key key;
	uint32_t ctx_gen;	/* the context's npu_mmu_ctx_gen() when made */
	uint64_t bytes;		/* the data's, and NPU_WC_ENTRY_COST */
	void *data;
};
_Static_assert(sizeof(struct npu_wc_entry) <= NPU_WC_ENTRY_COST, "an entry's cost");

static bool key_eq(const struct npu_wc_key *a, const struct npu_wc_key *b)
{
	return a->va == b->va && a->ctx == b->ctx && a->wgen == b->wgen && a->kind == b->kind &&
	       a->rows == b->rows && a->cols == b->cols && a->ld == b->ld && a->flags == b->flags;
}

static void drop(struct npu_wcache *wc, struct npu_wc_entry **link)
{
	struct npu_wc_entry *e = *link;

	*link = e->next;
	wc->bytes -= e->bytes;
	wc->dropped++;
	free(e->data);
	free(e);
}

/* Let go of the copies whose context was invalidated since they were made. */
static void drop_stale(struct npu_core *core)
{
	struct npu_wcache *wc = &core->wcache;
	struct npu_wc_entry **link = &wc->head;

	while (*link) {
		if ((*link)->ctx_gen != npu_mmu_ctx_gen(&core->mmu, (*link)->key.ctx))
			drop(wc, link);
		else
			link = &(*link)->next;
	}
}

const void *npu_wcache_get(struct npu_core *core, const struct npu_wc_key *key)
{
	struct npu_wcache *wc = &core->wcache;
	struct npu_wc_entry **link, *e;

	drop_stale(core);
	for (link = &wc->head; (e = *link); link = &e->next) {
		if (!key_eq(&e->key, key))
			continue;
		*link = e->next;	/* to the front: most recently used */
		e->next = wc->head;
		wc->head = e;
		wc->hits++;
		return e->data;
	}
	wc->misses++;
	return NULL;
}

bool npu_wcache_room(struct npu_core *core, const struct npu_wc_key *key, uint64_t bytes)
{
	struct npu_wcache *wc = &core->wcache;
	uint64_t limit = (uint64_t)core->cfg.weight_cache_mib << 20;
	struct npu_wc_entry **link;

	bytes += NPU_WC_ENTRY_COST;
	if (bytes > limit || key->ctx >= NPU_MAX_CONTEXTS)
		return false;
	drop_stale(core);
	/* Another generation of the same weights: they hold new values now. */
	for (link = &wc->head; *link;) {
		if ((*link)->key.va == key->va && (*link)->key.ctx == key->ctx &&
		    (*link)->key.kind == key->kind)
			drop(wc, link);
		else
			link = &(*link)->next;
	}
	while (wc->bytes + bytes > limit) {	/* the least recently used go */
		for (link = &wc->head; (*link)->next; link = &(*link)->next)
			;
		drop(wc, link);
	}
	return true;
}

bool npu_wcache_put(struct npu_core *core, const struct npu_wc_key *key, uint32_t ctx_gen,
		    void *data, uint64_t bytes)
{
	struct npu_wcache *wc = &core->wcache;
	struct npu_wc_entry *e;

	if (!npu_wcache_room(core, key, bytes) || ctx_gen != npu_mmu_ctx_gen(&core->mmu, key->ctx))
		return false;
	e = malloc(sizeof(*e));
	if (!e)
		return false;
	*e = (struct npu_wc_entry){ .next = wc->head, .key = *key, .ctx_gen = ctx_gen,
				    .bytes = bytes + NPU_WC_ENTRY_COST, .data = data };
	wc->head = e;
	wc->bytes += e->bytes;
	return true;
}

uint32_t npu_wcache_keep(struct npu_core *core, const struct npu_wc_key *key, uint64_t bytes,
			 uint32_t (*make)(void *arg, void *out), void *arg, const void **packed,
			 void **own)
{
	uint32_t gen, st;
	void *p;

	*packed = NULL;
	*own = NULL;
	if (bytes + NPU_WC_ENTRY_COST > (uint64_t)core->cfg.weight_cache_mib << 20)
		return NPU_JOB_OK;
	*packed = npu_wcache_get(core, key);
	if (*packed) {
		npu_trace(core, NPU_TRACE_WCACHE, 1, key->va, core->wcache.bytes);
		return NPU_JOB_OK;
	}
	if (!npu_wcache_room(core, key, bytes))
		return NPU_JOB_OK;	/* read as usual */
	gen = npu_mmu_ctx_gen(&core->mmu, key->ctx);	/* before the weights are read */
	p = malloc(bytes);
	st = p ? make(arg, p) : NPU_JOB_INVALID_CMD;
	if (st != NPU_JOB_OK) {
		free(p);
		return st;
	}
	if (!npu_wcache_put(core, key, gen, p, bytes))
		*own = p;
	*packed = p;
	npu_trace(core, NPU_TRACE_WCACHE, 0, key->va, core->wcache.bytes);
	return NPU_JOB_OK;
}

void npu_wcache_clear(struct npu_core *core)
{
	while (core->wcache.head)
		drop(&core->wcache, &core->wcache.head);
}
