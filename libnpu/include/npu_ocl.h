/* SPDX-License-Identifier: MIT */
/*
 * npu_ocl.h - libnpu's OpenCL backend, for when the NPU is absent or lacks
 * an op: OpenCL is loaded at run time (libOpenCL.so.1 through the ICD
 * loader), so libnpu works without it and says why it is unavailable.
 * Included by npu.h.
 *
 * Device: $NPU_OCL_DEVICE = gpu, cpu, accelerator, any or PLATFORM:DEVICE
 * (indices); by default the first GPU, else the first device. Program
 * binaries are cached in $NPU_OCL_CACHE (default ~/.cache/npu/opencl),
 * keyed by source, options, device and driver. On a device that shares
 * host memory (CL_DEVICE_HOST_UNIFIED_MEMORY) buffers wrap the host's
 * storage; NPU_OCL_NO_ZERO_COPY=1 makes them device buffers with copies.
 */
#ifndef NPU_OCL_H
#define NPU_OCL_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_ocl npu_ocl;

/**
 * Open the OpenCL device. NPU_ENODEV when there is no OpenCL runtime or no
 * device; @why (@len bytes, may be NULL) then says which.
 */
int npu_ocl_open(npu_ocl **ocl, char *why, size_t len);
void npu_ocl_close(npu_ocl *ocl);
const char *npu_ocl_device_name(const npu_ocl *ocl);
/** What went wrong in the last failed call on @ocl (a build log, say). */
const char *npu_ocl_error(const npu_ocl *ocl);

/** The int8 GEMM of npu_ref_gemm_i8 on OpenCL: the same bytes. */
int npu_ocl_gemm_i8_v(size_t size, npu_ocl *ocl, const struct npu_gemm_i8 *p, const int8_t *a, const int8_t *b,
		    const int32_t *bias, const int32_t *mult, const int32_t *shift, int8_t *out);
#define npu_ocl_gemm_i8(...) npu_ocl_gemm_i8_v(sizeof(struct npu_gemm_i8), __VA_ARGS__)
/** npu_ref_pool_i8 on OpenCL: the same bytes, NPU_EINVAL for an empty window. */
int npu_ocl_pool_i8_v(size_t size, npu_ocl *ocl, const struct npu_pool_i8 *p, const int8_t *in, int8_t *out);
#define npu_ocl_pool_i8(...) npu_ocl_pool_i8_v(sizeof(struct npu_pool_i8), __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* NPU_OCL_H */
