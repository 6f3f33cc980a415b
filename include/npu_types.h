/* SPDX-License-Identifier: MIT */
/*
 * npu_types.h - fixed-width types for the interface headers, so one header
 * serves the kernel, the firmware (freestanding) and userspace alike.
 */
#ifndef NPU_TYPES_H
#define NPU_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

/*
 * The fields of the structs the device reads and writes in memory, which
 * are little-endian: the kernel's __le types, so that sparse checks each
 * access goes through le*_to_cpu()/cpu_to_le*(); plain integers for the
 * firmware, the device model and the tools, all little-endian.
 */
#ifdef __KERNEL__
typedef __le16 npu_le16;
typedef __le32 npu_le32;
typedef __le64 npu_le64;
#else
typedef uint16_t npu_le16;
typedef uint32_t npu_le32;
typedef uint64_t npu_le64;
#endif

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define NPU_STATIC_ASSERT(e, msg) _Static_assert(e, msg)
#else
#define NPU_STATIC_ASSERT(e, msg)
#endif

#endif /* NPU_TYPES_H */
