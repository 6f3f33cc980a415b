/* SPDX-License-Identifier: MIT */
/* npu_split.h - sharing a GEMM's output among host threads (npu_split.c). */
#ifndef NPU_SPLIT_H
#define NPU_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows [m0, m1) and columns [n0, n1) of an output; empty when m0 == m1. */
struct npu_tile_range {
	uint32_t m0, m1, n0, n1;
};

/*
 * Split an @m x @n output into @count ranges of whole @mr-row tiles or
 * @nr-column panels: by columns, so that each thread packs only its own
 * weights, or by rows (each packs only its own activations, and all of
 * the weights) when there are fewer panels than threads, or, if
 * @rows_when_taller, more rows than columns.
 */
void npu_split(uint32_t m, uint32_t n, uint32_t mr, uint32_t nr, unsigned int count,
	       bool rows_when_taller, struct npu_tile_range *r);

/*
 * Whether @reserve (NULL: no budget) grants, with @arg, the host bytes
 * @bytes(@g, range) of all @count ranges: asked once, before a GEMM kernel
 * allocates any thread's packing.
 */
bool npu_split_reserve(bool (*reserve)(void *arg, uint64_t bytes), void *arg,
		       const struct npu_tile_range *r, unsigned int count,
		       uint64_t (*bytes)(const void *g, const struct npu_tile_range *r),
		       const void *g);

#endif /* NPU_SPLIT_H */
