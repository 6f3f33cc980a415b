/* SPDX-License-Identifier: MIT */
/*
 * dnnl_api.h - the oneDNN entry points the onednn backend uses, found at
 * run time in libdnnl.so.2 (Debian's libdnnl2), so that libnpu links and
 * runs without oneDNN and its OpenMP runtime, and a plan only loads them
 * when it asks for the backend.
 */
#ifndef DNNL_API_H
#define DNNL_API_H

#include <dnnl.h>
#include <stddef.h>

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

/* One list: the struct's members and the loader's symbol names. */
#define DNNL_FNS(X)							\
	X(engine_create) X(engine_destroy) X(stream_create) X(stream_destroy) \
	X(stream_wait) X(memory_desc_init_by_tag) X(memory_desc_init_by_strides) \
	X(memory_desc_equal) X(memory_desc_get_size) X(memory_create)	\
	X(memory_set_data_handle) X(memory_destroy)			\
	X(convolution_forward_desc_init) X(dilated_convolution_forward_desc_init) \
	X(eltwise_forward_desc_init) X(binary_desc_init) X(matmul_desc_init) \
	X(pooling_v2_forward_desc_init)					\
	X(primitive_attr_create) X(primitive_attr_destroy)		\
	X(primitive_attr_set_post_ops) X(primitive_attr_set_output_scales) \
	X(post_ops_create) X(post_ops_destroy) \
	X(post_ops_append_eltwise) X(primitive_desc_create)		\
	X(primitive_desc_query) X(primitive_desc_query_md)		\
	X(primitive_desc_destroy) X(reorder_primitive_desc_create)	\
	X(primitive_create) X(primitive_destroy) X(primitive_execute) X(version)

struct dnnl_api {
	void *lib;
#define X(n) __typeof__(dnnl_##n) *n;
	DNNL_FNS(X)
#undef X
};

/*
 * The process's oneDNN, loaded on first use (libdnnl.so.2, or
 * $NPU_ONEDNN_LIB) and kept; NULL with the reason in @why when there is none.
 */
const struct dnnl_api *dnnl_api_get(char *why, size_t len);

#pragma GCC visibility pop

#endif /* DNNL_API_H */
