/* SPDX-License-Identifier: MIT */
/* onnx_build.h - ONNX models written byte by byte for the importer's tests (onnx_build.c). */
#ifndef NPU_TEST_ONNX_BUILD_H
#define NPU_TEST_ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "onnx.pb-c.h"

#define tap_diag(...) do { printf("#   " __VA_ARGS__); printf("\n"); } while (0)

#define DIMS(...) (sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ }
#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define BOOLT ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

struct model {
	Onnx__NodeProto *node[1024];
	size_t nnode;
	Onnx__TensorProto *init[32];
	size_t ninit;
	Onnx__ValueInfoProto *in[8], *out[128];
	size_t nin, nout;
	int64_t opset;
};

/* Memory of the arena (freed by arena_free), a copy of @s, of @n int64s. */
void *take(size_t n);
void arena_free(void);
char *str(const char *s);
int64_t *i64s(int n, const int64_t *v);
/* An initializer of raw bytes; a graph input or output (rank 0: no shape given). */
Onnx__TensorProto *tensor(const char *name, int type, size_t rank, const int64_t *dims,
			  const void *raw, size_t bytes);
Onnx__ValueInfoProto *value(const char *name, int type, size_t rank, const int64_t *dims);
/* Names separated by commas ("" for an absent optional input). */
size_t names(const char *list, char ***out);
Onnx__NodeProto *node(const char *op, const char *in, const char *out);
Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type);
void attr_i(Onnx__NodeProto *n, const char *name, int64_t v);
void attr_f(Onnx__NodeProto *n, const char *name, float v);
void attr_ints(Onnx__NodeProto *n, const char *name, size_t count, const int64_t *v);
void attr_s(Onnx__NodeProto *n, const char *name, const char *s);
/* The model packed: its bytes (arena) and length. */
uint8_t *pack(const struct model *mb, size_t *len);
/* Whether loading @buf fails with @err and a message holding @msg (said if not). */
int refused(const uint8_t *buf, size_t len, int err, const char *msg);
/* How many nodes of the loaded model have the report's name @label (-1: not loaded). */
int count_label(const uint8_t *buf, size_t len, const char *label);

/*
 * A copy of @buf (malloc'd) with 1 to 4 random byte changes, insertions
 * and deletions drawn from *@seed; its length in *@len_out.
 */
uint8_t *mutate(const uint8_t *buf, size_t len, unsigned int *seed, size_t *len_out);
/* Load @buf; if it loads, compile and run it on the CPU with zeroed inputs: 0, or the load's error. */
int load_and_run(const uint8_t *buf, size_t len);

#endif /* NPU_TEST_ONNX_BUILD_H */
