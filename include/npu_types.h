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

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define NPU_STATIC_ASSERT(e, msg) _Static_assert(e, msg)
#else
#define NPU_STATIC_ASSERT(e, msg)
#endif

#endif /* NPU_TYPES_H */
