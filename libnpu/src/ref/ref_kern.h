/* SPDX-License-Identifier: MIT */
/* ref_kern.h - the CPU reference of every kernel kind (ref_kern.c). */
#ifndef NPU_REF_KERN_H
#define NPU_REF_KERN_H

#include "ir/kernel.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/*
 * Run kernel @k with the CPU reference on host storage @host (by tensor
 * id): the CPU backend's work, and constant folding's. An optimizer step
 * takes @train_step and, with @lr_set, @lr.
 */
int ref_kern_run(const struct kern *k, void *const *host, uint32_t train_step, int lr_set,
		 float lr);
/* 0 when every kind has its reference; else NPU_EINVAL and, in @why, the first without. */
int ref_kern_check(char *why, size_t len);

#pragma GCC visibility pop

#endif /* NPU_REF_KERN_H */
