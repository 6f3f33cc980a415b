/* SPDX-License-Identifier: MIT */
/* npu_crc32.h - CRC-32 (IEEE 802.3, reflected, as zlib's crc32()). */
#ifndef NPU_CRC32_H
#define NPU_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continue @crc (0 to start) over @len bytes of @buf. */
uint32_t npu_crc32(uint32_t crc, const void *buf, size_t len);

#endif /* NPU_CRC32_H */
