/* SPDX-License-Identifier: MIT */
/*
 * npu_wcache.h - constant weights the tensor engine keeps packed for its
 * kernels from one command to the next (npu_wcache.c).
 */
#ifndef NPU_WCACHE_H
#define NPU_WCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct npu_core;
struct npu_wc_entry;

/* What a copy costs beyond its data: its entry, counted in the room. */
#define NPU_WC_ENTRY_COST	128

/* What a kept copy is: the form a kernel takes its weights in. */
enum npu_wc_kind {
	NPU_WC_SGEMM_B = 1,	/* op(B) of npu_sgemm, npu_sgemm_pack_b()'s panels */
	NPU_WC_GEMM_I8_B,	/* B of npu_gemm_i8, npu_gemm_pack_b()'s panels and sums */
};

/**
 * struct npu_wc_key - what a kept copy was made from; equal keys, equal
 * bytes (the command's promise, NPU_CONVF_CONST_W).
 * @va, @ctx: the weights' address and context.
 * @wgen: the host's generation of their values (the command's).
 * @kind: enum npu_wc_kind.
 * @rows, @cols, @ld, @flags: the packing's geometry and options (the
 *	source's row stride, element type, transpose): another packing of
 *	the same bytes is another copy.
 */
struct npu_wc_key {
	uint64_t va;
	uint32_t ctx, wgen, kind;
	uint32_t rows, cols, ld, flags;
};

/**
 * struct npu_wcache - the kept copies, most recently used first. Only the
 * engine thread touches it (its kernels' threads read a copy it lent
 * them); npu_mmu_ctx_gen() tells it when a context's copies went stale.
 * @head: the entries.
 * @bytes: what they hold, NPU_WC_ENTRY_COST each included; at most
 *	cfg.weight_cache_mib MiB.
 * @hits, @misses, @dropped: lookups that found a copy, that did not, and
 *	copies let go (stale, or for room).
 */
struct npu_wcache {
	struct npu_wc_entry *head;
	uint64_t bytes;
	uint64_t hits, misses, dropped;
};

/*
 * The copy for @key, or NULL; copies of contexts invalidated since they
 * were made are let go on the way. The copy stays valid until the next
 * npu_wcache_put() or npu_wcache_clear().
 */
const void *npu_wcache_get(struct npu_core *core, const struct npu_wc_key *key);
/*
 * Make room for @bytes of copies of @key's weights (their other
 * generations and the least recently used copies let go), before they
 * are allocated: what the cache holds and what it is about to take stay
 * within weight_cache_mib together. False if they could never fit.
 */
bool npu_wcache_room(struct npu_core *core, const struct npu_wc_key *key, uint64_t bytes);
/*
 * Keep @data (@bytes, from malloc) for @key, made while the context's
 * generation was @ctx_gen (npu_mmu_ctx_gen() before its weights were
 * read): least recently used copies go to make room. Returns true when
 * the cache took @data; false (the caller still owns it) when it is
 * larger than the cache or the context moved on meanwhile.
 */
bool npu_wcache_put(struct npu_core *core, const struct npu_wc_key *key, uint32_t ctx_gen,
		    void *data, uint64_t bytes);
/*
 * What a command with constant weights calls: *@packed gets the copy for
 * @key, or one @make (@arg) makes now into @bytes of fresh memory (it
 * reads the weights and packs them; returns enum npu_job_status), which
 * the cache then keeps; NULL when the weights are to be read as usual
 * (larger than the cache). *@own gets a copy the cache did not take, for
 * the caller to free. Each lookup is traced (NPU_TRACE_WCACHE).
 */
uint32_t npu_wcache_keep(struct npu_core *core, const struct npu_wc_key *key, uint64_t bytes,
			 uint32_t (*make)(void *arg, void *out), void *arg, const void **packed,
			 void **own);
/* Let every copy go (engine teardown). */
void npu_wcache_clear(struct npu_core *core);

#endif /* NPU_WCACHE_H */
