// SPDX-License-Identifier: MIT
/*
 * onnx_build.c - ONNX models written byte by byte with protobuf-c, for the
 * tests of libnpu's importer (test_onnx, test_onnx_nets): tensors, value
 * infos, nodes and their attributes, a model packed. Everything allocated
 * here lives in one arena, freed at once.
 */
#define _POSIX_C_SOURCE 200809L	/* rand_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu.h"
#include "onnx_build.h"

static void **arena;
static size_t narena;

void *take(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	arena = realloc(arena, sizeof(*arena) * (narena + 1));
	if (!p || !arena)
		abort();
	arena[narena++] = p;
	return p;
}

void arena_free(void)
{
	for (size_t i = 0; i < narena; i++)
		free(arena[i]);
	free(arena);
	arena = NULL;
	narena = 0;
}

char *str(const char *s)
{
	return strcpy(take(strlen(s) + 1), s);
}

int64_t *i64s(int n, const int64_t *v)
{
	int64_t *p = take(sizeof(*p) * (size_t)n);

	if (n)
		memcpy(p, v, sizeof(*p) * (size_t)n);
	return p;
}


Onnx__TensorProto *tensor(const char *name, int type, size_t rank, const int64_t *dims,
				 const void *raw, size_t bytes)
{
	Onnx__TensorProto *t = take(sizeof(*t));

	onnx__tensor_proto__init(t);
	t->name = str(name);
	t->n_dims = rank;
	t->dims = i64s((int)rank, dims);
	t->has_data_type = 1;
	t->data_type = type;
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = take(bytes);
	if (bytes)
		memcpy(t->raw_data.data, raw, bytes);
	return t;
}

Onnx__ValueInfoProto *value(const char *name, int type, size_t rank, const int64_t *dims)
{
	Onnx__ValueInfoProto *v = take(sizeof(*v));
	Onnx__TypeProto *tp = take(sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = take(sizeof(*tt));
	Onnx__TensorShapeProto *sh = take(sizeof(*sh));

	onnx__value_info_proto__init(v);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	sh->n_dim = rank;
	sh->dim = take(sizeof(*sh->dim) * (rank ? rank : 1));
	for (size_t i = 0; i < rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = take(sizeof(*d));

		onnx__tensor_shape_proto__dimension__init(d);
		d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		d->dim_value = dims[i];
		sh->dim[i] = d;
	}
	tt->has_elem_type = 1;
	tt->elem_type = type;
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->name = str(name);
	v->type = tp;
	return v;
}

/* Names separated by commas ("" for an absent optional input). */
size_t names(const char *list, char ***out)
{
	size_t n = 1;
	char *copy = str(list), *p;

	if (!*list) {
		*out = NULL;
		return 0;
	}
	for (const char *c = list; *c; c++)
		n += *c == ',';
	*out = take(sizeof(char *) * n);
	n = 0;
	for (p = copy;; p++) {
		char *e = strchr(p, ',');

		(*out)[n++] = p;
		if (!e)
			break;
		*e = 0;
		p = e;
	}
	return n;
}

Onnx__NodeProto *node(const char *op, const char *in, const char *out)
{
	Onnx__NodeProto *n = take(sizeof(*n));

	onnx__node_proto__init(n);
	n->op_type = str(op);
	n->name = str(op);
	n->n_input = names(in, &n->input);
	n->n_output = names(out, &n->output);
	n->attribute = take(sizeof(*n->attribute) * 8);
	return n;
}

Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, int type)
{
	Onnx__AttributeProto *a = take(sizeof(*a));

	onnx__attribute_proto__init(a);
	a->name = str(name);
	a->has_type = 1;
	a->type = type;
	n->attribute[n->n_attribute++] = a;
	return a;
}

void attr_i(Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	a->has_i = 1;
	a->i = v;
}

void attr_f(Onnx__NodeProto *n, const char *name, float v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);

	a->has_f = 1;
	a->f = v;
}

void attr_ints(Onnx__NodeProto *n, const char *name, size_t count, const int64_t *v)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	a->n_ints = count;
	a->ints = i64s((int)count, v);
}

void attr_s(Onnx__NodeProto *n, const char *name, const char *s)
{
	Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	a->has_s = 1;
	a->s.len = strlen(s);
	a->s.data = (uint8_t *)str(s);
}


/* The model packed: its bytes (arena) and length. */
uint8_t *pack(const struct model *mb, size_t *len)
{
	Onnx__ModelProto *m = take(sizeof(*m));
	Onnx__GraphProto *g = take(sizeof(*g));
	Onnx__OperatorSetIdProto *os = take(sizeof(*os));
	uint8_t *buf;

	onnx__model_proto__init(m);
	onnx__graph_proto__init(g);
	onnx__operator_set_id_proto__init(os);
	os->domain = str("");
	os->has_version = 1;
	os->version = mb->opset ? mb->opset : 13;
	m->has_ir_version = 1;
	m->ir_version = 8;
	m->n_opset_import = 1;
	m->opset_import = take(sizeof(*m->opset_import));
	m->opset_import[0] = os;
	m->graph = g;
	g->name = str("test");
	g->n_node = mb->nnode;
	g->node = (Onnx__NodeProto **)mb->node;
	g->n_initializer = mb->ninit;
	g->initializer = (Onnx__TensorProto **)mb->init;
	g->n_input = mb->nin;
	g->input = (Onnx__ValueInfoProto **)mb->in;
	g->n_output = mb->nout;
	g->output = (Onnx__ValueInfoProto **)mb->out;
	*len = onnx__model_proto__get_packed_size(m);
	buf = take(*len);
	onnx__model_proto__pack(m, buf);
	return buf;
}


int refused(const uint8_t *buf, size_t len, int err, const char *msg)
{
	npu_graph *g = NULL;
	int got = npu_model_load_mem(buf, len, NULL, &g);

	if (got != err || g || !strstr(npu_last_error(), msg)) {
		tap_diag("got %d (%s), expected %d with '%s'", got, npu_last_error(), err, msg);
		npu_graph_free(g);
		return 0;
	}
	return 1;
}

int count_label(const uint8_t *buf, size_t len, const char *label)
{
	npu_graph *g;
	struct npu_node_info ni;
	int n = 0;

	if (npu_model_load_mem(buf, len, NULL, &g))
		return -1;
	for (int i = 0; i < npu_graph_node_count(g); i++)
		if (!npu_graph_node_info(g, i, &ni) && !strcmp(ni.label, label))
			n++;
	npu_graph_free(g);
	return n;
}

/* A load that succeeded must compile and run on the CPU without harm. */
int load_and_run(const uint8_t *buf, size_t len)
{
	struct npu_compile_opts co = { .backend = NPU_BACKEND_CPU };
	npu_graph *g;
	npu_plan *p;
	int err = npu_model_load_mem(buf, len, NULL, &g);

	if (err)
		return err;
	if (!npu_graph_compile_opts(g, NULL, &co, &p)) {
		int ni = npu_graph_io_count(g, 0), no = npu_graph_io_count(g, 1);
		struct npu_array *a = calloc((size_t)(ni + no) + 1, sizeof(*a));
		const void **in = calloc((size_t)ni + 1, sizeof(*in));
		void **out = calloc((size_t)no + 1, sizeof(*out));

		for (int i = 0; i < ni + no; i++) {
			npu_graph_io_array(g, i >= ni, (uint32_t)(i >= ni ? i - ni : i), &a[i]);
			if (i < ni)
				in[i] = a[i].data;
			else
				out[i - ni] = a[i].data;
		}
		npu_plan_execute(p, in, out);
		for (int i = 0; i < ni + no; i++)
			npu_array_free(&a[i]);
		free(a);
		free(in);
		free(out);
		npu_plan_free(p);
	}
	npu_graph_free(g);
	return 0;
}

uint8_t *mutate(const uint8_t *buf, size_t len, unsigned int *seed, size_t *len_out)
{
	uint8_t *b = malloc(len + 16);
	size_t n = len;
	int edits = 1 + (int)(rand_r(seed) % 4);

	if (!b)
		abort();
	memcpy(b, buf, len);
	for (int e = 0; e < edits; e++) {
		size_t at = rand_r(seed) % n;

		switch (rand_r(seed) % 3) {
		case 0:
			b[at] = (uint8_t)rand_r(seed);
			break;
		case 1:		/* a byte more */
			memmove(b + at + 1, b + at, n - at);
			b[at] = (uint8_t)rand_r(seed);
			n++;
			break;
		default:	/* a byte less */
			memmove(b + at, b + at + 1, n - at - 1);
			n--;
			break;
		}
	}
	*len_out = n;
	return b;
}
