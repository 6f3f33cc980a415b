// SPDX-License-Identifier: MIT
/*
 * onnx_emit.c - what a lowering writes nodes of the default domain with:
 * values of its own, named after the node's output 0 ("OUTPUT#gsK"), each
 * made by a node imported at once (onnx_lower_as). A helper returns its
 * value's name, or NULL once any step has failed (struct onnx_emit's err,
 * with a message), and takes NULL inputs as that failure, so a chain of
 * them needs one check at its end (em_done).
 */
#define _POSIX_C_SOURCE 200809L	/* strdup */
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

const char *em_fresh(struct onnx_emit *e)
{
	char buf[512], **nn;

	if (e->err)
		return NULL;
	if (e->n == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 64;

		nn = realloc(e->names, sizeof(*nn) * cap);
		if (!nn) {
			e->err = onnx_fail(e->o, NPU_ENOMEM, "out of memory");
			return NULL;
		}
		e->names = nn;
		e->cap = cap;
	}
	onnx_own_name(e->o, "gs", e->n, buf, sizeof(buf));
	e->names[e->n] = strdup(buf);
	if (!e->names[e->n]) {
		e->err = onnx_fail(e->o, NPU_ENOMEM, "out of memory");
		return NULL;
	}
	return e->names[e->n++];
}

const char *em_to(struct onnx_emit *e, const char *op, const char **in, size_t nin,
		  Onnx__AttributeProto *a, const char *to)
{
	const char *y = to ? to : em_fresh(e);

	for (size_t i = 0; i < nin; i++)
		if (!in[i])
			return NULL;
	if (!y || e->err)
		return NULL;
	e->err = onnx_lower_as(e->o, op, in, nin, y, a ? &a : NULL, a ? 1 : 0, 13);
	return e->err ? NULL : y;
}

const char *em_op1(struct onnx_emit *e, const char *op, const char *a)
{
	return em_to(e, op, (const char *[]){ a }, 1, NULL, NULL);
}

const char *em_op2(struct onnx_emit *e, const char *op, const char *a, const char *b)
{
	return em_to(e, op, (const char *[]){ a, b }, 2, NULL, NULL);
}

const char *em_where(struct onnx_emit *e, const char *c, const char *a, const char *b)
{
	return em_to(e, "Where", (const char *[]){ c, a, b }, 3, NULL, NULL);
}

Onnx__AttributeProto *em_int_attr(Onnx__AttributeProto *a, const char *name, int64_t v)
{
	*a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
	a->name = (char *)name;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
	return a;
}

Onnx__AttributeProto *em_ints_attr(Onnx__AttributeProto *a, const char *name, int64_t *v,
				   size_t n)
{
	*a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
	a->name = (char *)name;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = n;
	a->ints = v;
	return a;
}

const char *em_cst(struct onnx_emit *e, enum npu_dtype dt, const void *v, uint32_t n)
{
	const char *y = em_fresh(e);

	if (y && !e->err)
		e->err = onnx_named_const(e->o, y, dt, n ? 1 : 0, &n, v);
	return e->err ? NULL : y;
}

const char *em_fc(struct onnx_emit *e, float v)
{
	return em_cst(e, NPU_DT_FLOAT32, &v, 0);
}

const char *em_shaped(struct onnx_emit *e, const char *x, uint32_t n, const int64_t *d)
{
	return em_op2(e, "Reshape", x, em_cst(e, NPU_DT_INT64, d, n));
}

int em_done(struct onnx_emit *e)
{
	for (uint32_t i = 0; i < e->n; i++)
		free(e->names[i]);
	free(e->names);
	e->names = NULL;
	e->n = e->cap = 0;
	return e->err;
}
