// SPDX-License-Identifier: MIT
/* npu_split.c - see npu_split.h. */
#include "npu_split.h"

void npu_split(uint32_t m, uint32_t n, uint32_t mr, uint32_t nr, unsigned int count,
	       bool rows_when_taller, struct npu_tile_range *r)
{
	uint32_t panels = (n + nr - 1) / nr, tiles = (m + mr - 1) / mr;
	/*
	 * By columns each thread packs all of A, by rows all of B: rows when
	 * too few column panels go round, or (@rows_when_taller) when A is
	 * the larger (a convolution's many positions).
	 */
	int by_rows = panels < count || (rows_when_taller && tiles >= count && m > n);

	for (unsigned int t = 0; t < count; t++) {
		uint32_t units = by_rows ? tiles : panels, unit = by_rows ? mr : nr;
		uint32_t lo = (uint32_t)((uint64_t)units * t / count) * unit;
		uint32_t hi = (uint32_t)((uint64_t)units * (t + 1) / count) * unit;

		if (by_rows)
			r[t] = (struct npu_tile_range){ lo, hi < m ? hi : m, 0, n };
		else
			r[t] = (struct npu_tile_range){ 0, m, lo, hi < n ? hi : n };
	}
}

bool npu_split_reserve(bool (*reserve)(void *arg, uint64_t bytes), void *arg,
		       const struct npu_tile_range *r, unsigned int count,
		       uint64_t (*bytes)(const void *g, const struct npu_tile_range *r),
		       const void *g)
{
	uint64_t total = 0;

	if (!reserve)
		return true;
	for (unsigned int t = 0; t < count; t++)
		total += bytes(g, &r[t]);
	return reserve(arg, total);
}
