/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the registry of backends (registry.c): libnpu's own (npu,
 * opencl, cpu: each in its folder, named only by the registry) and those
 * an application registers (npu_backend_register). A compile takes a
 * snapshot, so registering while other threads compile is safe.
 */
#ifndef NPU_BACKENDS_BACKEND_H
#define NPU_BACKENDS_BACKEND_H

#include "npu.h"
#include "npu_backend.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

#define BACKENDS_MAX	16

struct backend_entry {
	struct npu_backend_ops ops;	/* a copy, zero-extended from the app's size */
	void *ctx;
	enum npu_backend id;		/* NPU_BACKEND_NPU/OPENCL/CPU, or NPU_BACKEND_CUSTOM */
};

/* The registered backends in the order placement asks them; their count. */
int backends_snapshot(struct backend_entry *out, int max);

#pragma GCC visibility pop

#endif /* NPU_BACKENDS_BACKEND_H */
