/* SPDX-License-Identifier: MIT */
/*
 * ocl_flags.h - what a kernel that meets bad data writes to the program's
 * flag (struct npu_ocl's), which ocl_finish reads after the run to fail it
 * with a message. Valid C and OpenCL C: compiled into both (Makefile's
 * OCL_SOURCES).
 */
#ifndef NPU_OCL_FLAGS_H
#define NPU_OCL_FLAGS_H

#define OCL_BAD_DATA	1	/* an empty pooling window, a label out of range */
#define OCL_BAD_INDEX	2	/* Gather or GatherElements: an index out of range */

#endif /* NPU_OCL_FLAGS_H */
