// SPDX-License-Identifier: MIT
/*
 * onnx_util.c - what every op's import reads a node with: its attributes
 * (typed, each checked against the type the op wants), its inputs (as
 * graph tensors, or as values known when the model is loaded) and axes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import/onnx.h"

#define N	(o->node)

/* ---- attributes ------------------------------------------------------------ */

const Onnx__AttributeProto *onnx_attr(struct onnx *o, const char *name)
{
	for (size_t i = 0; i < N->n_attribute; i++)
		if (N->attribute[i]->name && !strcmp(N->attribute[i]->name, name))
			return N->attribute[i];
	return NULL;
}

int onnx_attr_i(struct onnx *o, const char *name, int64_t def, int64_t *v)
{
	const Onnx__AttributeProto *a = onnx_attr(o, name);

	*v = def;
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
		return onnx_fail(o, NPU_EINVAL, "attribute '%s' is not an int", name);
	*v = a->i;
	return 0;
}

int onnx_attr_f(struct onnx *o, const char *name, float def, float *v)
{
	const Onnx__AttributeProto *a = onnx_attr(o, name);

	*v = def;
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
		return onnx_fail(o, NPU_EINVAL, "attribute '%s' is not a float", name);
	*v = a->f;
	return 0;
}

/* A string attribute into @buf ("" if absent, or @def). */
int onnx_attr_s(struct onnx *o, const char *name, const char *def, char *buf, size_t len)
{
	const Onnx__AttributeProto *a = onnx_attr(o, name);

	snprintf(buf, len, "%s", def);
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING || a->s.len >= len)
		return onnx_fail(o, NPU_EINVAL, "attribute '%s' is not a short string", name);
	memcpy(buf, a->s.data, a->s.len);
	buf[a->s.len] = 0;
	return 0;
}

/* An ints attribute: *@n values (0 if absent), at most @max. */
int onnx_attr_ints(struct onnx *o, const char *name, int64_t *v, uint32_t max, uint32_t *n)
{
	const Onnx__AttributeProto *a = onnx_attr(o, name);

	*n = 0;
	if (!a)
		return 0;
	if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
		return onnx_fail(o, NPU_EINVAL, "attribute '%s' is not a list of ints", name);
	if (a->n_ints > max)
		return onnx_fail(o, NPU_EINVAL, "attribute '%s' has %zu values (at most %u)", name,
				 a->n_ints, max);
	memcpy(v, a->ints, sizeof(int64_t) * a->n_ints);
	*n = (uint32_t)a->n_ints;
	return 0;
}

/* ---- inputs ----------------------------------------------------------------------- */

/* Input @i, or NULL when absent (past the list, or named ""). */
struct oval *onnx_in(struct onnx *o, uint32_t i)
{
	return i < N->n_input ? onnx_find(o, N->input[i]) : NULL;
}

int onnx_has_in(struct onnx *o, uint32_t i)
{
	return i < N->n_input && N->input[i][0];
}

int onnx_graph_output(const struct onnx *o, const char *name)
{
	for (size_t i = 0; i < o->gp->n_output; i++)
		if (o->gp->output[i]->name && !strcmp(o->gp->output[i]->name, name))
			return 1;
	return 0;
}

/* Input @i as a tensor of the graph: its id, or an error. */
int onnx_in_t(struct onnx *o, uint32_t i)
{
	struct oval *v = onnx_in(o, i);

	if (!v)
		return onnx_fail(o, NPU_EINVAL, "input %u is missing", i);
	return onnx_tensor(o, v);
}

/* Input @i's values at load time; an error (naming it) if it has none. */
int onnx_in_static(struct onnx *o, uint32_t i, const char *role, struct oval **v)
{
	*v = onnx_in(o, i);
	if (!*v)
		return onnx_fail(o, NPU_EINVAL, "input %u (%s) is missing", i, role);
	if (!(*v)->data)
		return onnx_fail(o, NPU_ENOTSUP, "input %u (%s, '%s') must be known when the model "
				 "is loaded (an initializer, a Constant or a fixed input)", i, role,
				 (*v)->name);
	return 0;
}

int onnx_want_dt(struct onnx *o, struct oval *v, unsigned int mask, const char *role)
{
	if (!(mask & (1u << v->dt)))
		return onnx_fail(o, NPU_ENOTSUP, "%s ('%s') is %s, which this op does not take",
				 role, v->name, onnx_dtype_name(v->dt));
	return 0;
}


int64_t onnx_get_i(const struct oval *v, uint64_t i)
{
	switch (v->dt) {
	case NPU_DT_INT64: return ((const int64_t *)v->data)[i];
	case NPU_DT_INT32: return ((const int32_t *)v->data)[i];
	case NPU_DT_INT8: return ((const int8_t *)v->data)[i];
	case NPU_DT_UINT8: case NPU_DT_BOOL: return ((const uint8_t *)v->data)[i];
	default: return (int64_t)((const float *)v->data)[i];
	}
}

double onnx_get_f(const struct oval *v, uint64_t i)
{
	return v->dt == NPU_DT_FLOAT32 ? ((const float *)v->data)[i] : (double)onnx_get_i(v, i);
}

/* An axis attribute in [-rank, rank) (or [-rank, rank] with @plus1) made positive. */
int onnx_norm_axis(struct onnx *o, int64_t axis, uint32_t rank, int plus1, uint32_t *out)
{
	int64_t r = (int64_t)rank + (plus1 ? 1 : 0);

	if (axis < -(int64_t)rank || axis >= r)
		return onnx_fail(o, NPU_EINVAL, "axis %lld of a rank-%u tensor", (long long)axis,
				 rank);
	*out = (uint32_t)(axis < 0 ? axis + rank : axis);
	return 0;
}

uint64_t onnx_prod(const uint32_t *d, uint32_t a, uint32_t b)
{
	uint64_t r = 1;

	for (uint32_t i = a; i < b; i++)
		r *= d[i];
	return r;
}
