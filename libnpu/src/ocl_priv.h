/* SPDX-License-Identifier: MIT */
/* ocl_priv.h - the OpenCL backend's state (ocl.c), shared with its tests. */
#ifndef OCL_PRIV_H
#define OCL_PRIV_H

#include "npu.h"
#include "ocl_api.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

enum { OCL_GEMM_I8, OCL_POOL_I8, OCL_NPROGS };

struct npu_ocl {
	struct ocl_api api;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	cl_program progs[OCL_NPROGS];
	cl_kernel kernels[OCL_NPROGS];
	char name[128], driver[64];
	unsigned int builds, cache_hits;	/* programs built from source, loaded */
	char why[8192];				/* the last error, with a build log */
};

/*
 * Build @src for the device, from the binary cache when it has it; on a
 * compile error, NPU_EIO with the compiler's log in @why.
 */
int ocl_build(struct npu_ocl *o, const char *src, const char *opts, cl_program *out,
	      char *why, size_t len);

#pragma GCC visibility pop

#endif /* OCL_PRIV_H */
