// SPDX-License-Identifier: MIT
/*
 * npu_crc32.c - bitwise CRC-32, polynomial 0xedb88320 (reflected). Images
 * are small and checked once per boot, so no table (and no shared state).
 */
#include "npu_crc32.h"

uint32_t npu_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}
