// SPDX-License-Identifier: MIT
/*
 * onnx.c - npu_model_load: an ONNX model into a graph. The file is parsed
 * by protobuf-c's code generated from libonnx-dev's onnx.proto; this reads
 * the graph's initializers, inputs and nodes in order (ONNX requires them
 * sorted: a node reading a name nothing defined yet is a cycle, or out of
 * order, and is refused), hands each node to its op (onnx_ops.c) and
 * declares the graph's inputs and outputs in the model's order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"

int onnx_fail(struct onnx *o, int err, const char *fmt, ...)
{
	char msg[NPU_ERRMSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->err = err;
	if (o->node)
		return ir_fail(o->g, err, "node %d '%s' (%s): %s", o->node_index,
			       o->node->name ? o->node->name : "", o->node->op_type, msg);
	return ir_fail(o->g, err, "%s", msg);
}

/* ---- values by name ------------------------------------------------------ */

uint32_t onnx_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

struct oval *onnx_find(struct onnx *o, const char *name)
{
	uint32_t mask = (1u << o->hbits) - 1, i;

	if (!name || !*name || !o->hash)
		return NULL;
	for (i = onnx_hash(name) & mask; o->hash[i] >= 0; i = (i + 1) & mask)
		if (!strcmp(o->v[o->hash[i]]->name, name))
			return o->v[o->hash[i]];
	return NULL;
}

static int rehash(struct onnx *o, unsigned int bits)
{
	int *h = malloc(sizeof(int) << bits);
	uint32_t mask = (1u << bits) - 1;

	if (!h)
		return NPU_ENOMEM;
	memset(h, 0xff, sizeof(int) << bits);
	for (int k = 0; k < o->nv; k++) {
		uint32_t i = onnx_hash(o->v[k]->name) & mask;

		while (h[i] >= 0)
			i = (i + 1) & mask;
		h[i] = k;
	}
	free(o->hash);
	o->hash = h;
	o->hbits = bits;
	return 0;
}

struct oval *onnx_add(struct onnx *o, const char *name, enum npu_dtype dt, uint32_t rank,
		      const uint32_t *dims)
{
	struct oval *v, **nv;
	size_t len;

	if (!name || !*name) {
		onnx_fail(o, NPU_EINVAL, "a value without a name");
		return NULL;
	}
	if (onnx_find(o, name)) {
		onnx_fail(o, NPU_EINVAL, "'%s' is defined twice", name);
		return NULL;
	}
	if (rank > NPU_MAX_RANK) {
		onnx_fail(o, NPU_ENOTSUP, "'%s' has rank %u (at most %d)", name, rank, NPU_MAX_RANK);
		return NULL;
	}
	if ((unsigned int)(o->nv + 1) * 2 > (1u << o->hbits) &&
	    rehash(o, o->hbits ? o->hbits + 1 : 6)) {
		onnx_fail(o, NPU_ENOMEM, "out of memory");
		return NULL;
	}
	if (o->nv == o->cap) {	/* doubling: loading stays linear in the values */
		int cap = o->cap ? 2 * o->cap : 64;

		nv = realloc(o->v, sizeof(*nv) * (size_t)cap);
		if (!nv) {
			onnx_fail(o, NPU_ENOMEM, "out of memory");
			return NULL;
		}
		o->v = nv;
		o->cap = cap;
	}
	len = strlen(name);
	v = calloc(1, sizeof(*v));
	if (v)
		v->name = malloc(len + 1);
	if (!v || !v->name) {
		free(v);
		onnx_fail(o, NPU_ENOMEM, "out of memory");
		return NULL;
	}
	o->v[o->nv] = v;
	memcpy(v->name, name, len + 1);
	v->id = -1;
	v->input = -1;
	v->i8 = -1;
	v->dt = dt;
	v->rank = rank;
	v->count = 1;
	for (uint32_t i = 0; i < rank; i++) {
		v->dims[i] = dims[i];
		v->count *= dims[i];
	}
	/* into the table as it is: it has room (the check above) */
	for (uint32_t mask = (1u << o->hbits) - 1, i = onnx_hash(name) & mask;; i = (i + 1) & mask)
		if (o->hash[i] < 0) {
			o->hash[i] = o->nv;
			break;
		}
	o->nv++;
	return v;
}

/* ---- tensors of the graph ---------------------------------------------------- */

int onnx_charge(struct onnx *o, uint64_t bytes)
{
	if (bytes > o->budget - o->used)
		return onnx_fail(o, NPU_E2BIG, "the model asks for more than its memory budget "
				 "(%llu MiB; NPU_MODEL_MAX_MIB sets it)",
				 (unsigned long long)(o->budget >> 20));
	o->used += bytes;
	return 0;
}

/* Room for one more entry in the log of the ovals whose bytes the graph took. */
static int given_log(struct onnx *o)
{
	if (o->ngiven == o->given_cap) {
		int cap = o->given_cap ? 2 * o->given_cap : 64;
		struct onnx_given *n = realloc(o->given, sizeof(*n) * (size_t)cap);

		if (!n)
			return NPU_ENOMEM;
		o->given = n;
		o->given_cap = cap;
	}
	return 0;
}

/*
 * A tensor of the graph; a constant's @data copied, or with @take (an
 * oval's data) taken as the graph's own, the oval still reading it.
 */
static int new_tensor_of(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
			 const void *data, const char *name, struct oval *take)
{
	struct npu_tensor_desc d = { .dtype = dt, .rank = rank ? rank : 1, .scale = 1.0f };
	uint64_t count = 1;
	int id;

	for (uint32_t i = 0; i < rank; i++) {
		d.dims[i] = dims[i];
		count *= dims[i];
	}
	if (!rank)
		d.dims[0] = 1;
	if (!count && o->allow_empty && !data) {
		id = ir_add_empty(o->g, dt, rank ? rank : 1, d.dims);
		if (id < 0)
			return onnx_fail(o, id, "%s", o->g->err);
		if (name && npu_graph_set_tensor_name(o->g, id, name))
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		return id;
	}
	if (!count)
		return onnx_fail(o, NPU_ENOTSUP, "'%s' has no elements: empty tensors only pass "
				 "through reshapes", name ? name : "a tensor");
	/* a constant taken is already counted: its oval's allocation was */
	if (!take)
		TRY(onnx_charge(o, count * ir_elem_size(dt)));
	d.data = data;
	id = onnx_const_of(o, &d, take);
	if (id < 0)
		return id;
	o->g->t[id].scalar = !rank;
	if (name && npu_graph_set_tensor_name(o->g, id, name))
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	return id;
}

int onnx_const_of(struct onnx *o, const struct npu_tensor_desc *d, struct oval *v)
{
	int take = v && !v->given && v->data == d->data, id;

	if (take && given_log(o))
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	id = ir_add_desc_take(o->g, d, take ? v->data : NULL);
	if (id < 0)
		return onnx_fail(o, id, "%s", o->g->err);
	if (take) {
		v->given = 1;
		o->given[o->ngiven++] = (struct onnx_given){ .id = id, .v = v };
	}
	return id;
}

static int new_tensor(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
		      const void *data, const char *name)
{
	return new_tensor_of(o, dt, rank, dims, data, name, NULL);
}

/* @v's tensor of dtype @dt, written by a node of @op from @in with @a; its id or an error. */
static int derive(struct onnx *o, struct oval *v, enum npu_dtype dt, enum ir_op op,
		  const int *in, uint32_t nin, struct ir_attrs *a)
{
	int id = new_tensor(o, dt, v->rank, v->dims, NULL, v->name);

	if (id < 0)
		return id;
	return onnx_node(o, op, in, nin, &id, 1, a) ? NPU_EINVAL : id;
}

int onnx_tensor(struct onnx *o, struct oval *v)
{
	if (v->id >= 0)
		return v->id;
	if (v->dq_x) {
		/* a DequantizeLinear read as floats after all: made here, once */
		struct ir_attrs a = { 0 };
		int in[3] = { onnx_tensor(o, v->dq_x), onnx_tensor(o, v->dq_s),
			      v->dq_z ? onnx_tensor(o, v->dq_z) : -1 };

		if (in[0] < 0 || in[1] < 0 || (v->dq_z && in[2] < 0))
			return in[0] < 0 ? in[0] : in[1] < 0 ? in[1] : in[2];
		a.nd.qdq = v->dq;
		v->id = derive(o, v, NPU_DT_FLOAT32, IR_ND_QDQ, in, 3, &a);
		return v->id;
	}
	if (v->i8 >= 0) {
		/* a uint8 value an int8 op made: its bytes flipped back */
		struct ir_attrs a = { 0 };

		a.nd.un = (struct nd_unary){ .fn = ND_FLIP128, .dtype = NPU_DT_INT8,
					     .count = v->count ? v->count : 1 };
		v->id = derive(o, v, NPU_DT_UINT8, IR_ND_UNARY, &v->i8, 1, &a);
		return v->id;
	}
	if (v->input >= 0 && v->half) {
		/* a 16-bit float input: the graph's, cast to the fp32 the ops compute in */
		struct ir_attrs a = { 0 };
		int t = new_tensor(o, (enum npu_dtype)v->half, v->rank, v->dims, NULL, v->name), y;

		if (t < 0)
			return t;
		y = new_tensor(o, NPU_DT_FLOAT32, v->rank, v->dims, NULL, NULL);
		if (y < 0)
			return y;
		a.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = (uint32_t)v->half,
					     .odtype = NPU_DT_FLOAT32, .count = v->count ? v->count : 1 };
		if (onnx_node(o, IR_ND_UNARY, &t, 1, &y, 1, &a))
			return NPU_EINVAL;
		v->io = t;
		v->id = y;
		return v->id;
	}
	if (v->input >= 0) {
		/* A graph input read as data: an input tensor of the graph. */
		v->id = new_tensor(o, v->dt, v->rank, v->dims, NULL, v->name);
		return v->id;
	}
	if (!v->data)
		return onnx_fail(o, NPU_EINVAL, "'%s' has no value here", v->name);
	/* the weights held once: the graph takes the oval's bytes */
	v->id = new_tensor_of(o, v->dt, v->rank, v->dims, v->data, v->name, v->given ? NULL : v);
	return v->id;
}

int onnx_output(struct onnx *o, uint32_t i, enum npu_dtype dt, uint32_t rank,
		const uint32_t *dims)
{
	if (i >= o->node->n_output || !*o->node->output[i])
		return -1;
	return onnx_output_named(o, o->node->output[i], dt, rank, dims);
}

int onnx_output_named(struct onnx *o, const char *name, enum npu_dtype dt, uint32_t rank,
		      const uint32_t *dims)
{
	struct oval *v = onnx_add(o, name, dt, rank, dims);

	if (!v)
		return o->g->err[0] ? NPU_EINVAL : NPU_ENOMEM;
	v->id = new_tensor(o, dt, rank, dims, NULL, v->name);
	return v->id;
}

int onnx_temp(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims)
{
	return new_tensor(o, dt, rank, dims, NULL, NULL);
}

int onnx_const(struct onnx *o, enum npu_dtype dt, uint64_t count, const void *data)
{
	uint32_t d = (uint32_t)count;

	return new_tensor(o, dt, 1, &d, data, NULL);
}

int onnx_const_shaped(struct onnx *o, enum npu_dtype dt, uint32_t rank, const uint32_t *dims,
		      const void *data)
{
	return new_tensor(o, dt, rank, dims, data, NULL);
}

int onnx_node(struct onnx *o, enum ir_op op, const int *in, uint32_t nin, const int *out,
	      uint32_t nout, const struct ir_attrs *a)
{
	struct ir_node n;
	int err;

	ir_node_init(&n, op);
	if (a) {
		n.a = *a;
		for (int i = 0; i < IR_MAX_OUT; i++)
			n.a.acc[i] = -1;	/* no gradient to add in: ir_node_init's */
	}
	for (uint32_t i = 0; i < nin; i++)
		n.in[i] = in[i];
	n.nin = nin;
	for (uint32_t i = 0; i < nout; i++)
		n.out[i] = out[i];
	n.nout = nout;
	err = ir_add_node(o->g, &n);
	if (err)
		return onnx_fail(o, err, "%s", o->g->err);
	return 0;
}

/* ---- the model ------------------------------------------------------------------ */

/* The shape of a graph input or output from its type; static shapes only. */
static int value_type(struct onnx *o, const Onnx__ValueInfoProto *vi, enum npu_dtype *dt,
		      uint32_t *rank, uint32_t *dims, int need_shape)
{
	const Onnx__TypeProto__Tensor *tt;
	struct npu_array probe = { 0 };
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	char why[128];

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type)
		return onnx_fail(o, NPU_ENOTSUP, "'%s' is not a tensor", vi->name);
	tt = vi->type->tensor_type;
	/* Reuse the element type check of tensors: an empty one of this type. */
	t.has_data_type = 1;
	t.data_type = tt->elem_type;
	t.n_dims = 1;
	t.dims = (int64_t[]){ 0 };
	if (onnx_array(&t, &probe, why, sizeof(why)))
		return onnx_fail(o, NPU_ENOTSUP, "'%s': %s", vi->name, why);
	*dt = probe.dtype;
	npu_array_free(&probe);
	if (!tt->shape) {
		*rank = 0;
		return need_shape ? onnx_fail(o, NPU_ENOTSUP, "'%s' has no shape: static shapes "
					      "only", vi->name) : 1;
	}
	if (tt->shape->n_dim > NPU_MAX_RANK)
		return onnx_fail(o, NPU_ENOTSUP, "'%s' has rank %zu (at most %d)", vi->name,
				 tt->shape->n_dim, NPU_MAX_RANK);
	*rank = (uint32_t)tt->shape->n_dim;
	for (uint32_t i = 0; i < *rank; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];

		if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (!need_shape)
				return 1;
			return onnx_fail(o, NPU_ENOTSUP, "'%s': dimension %u is '%s': static "
					 "shapes only", vi->name, i,
					 d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
					 d->dim_param ? d->dim_param : "unknown");
		}
		if (d->dim_value < 0 || d->dim_value > (int64_t)ONNX_MAX_ELEMS)
			return onnx_fail(o, NPU_EINVAL, "'%s': dimension %u is %lld", vi->name, i,
					 (long long)d->dim_value);
		dims[i] = (uint32_t)d->dim_value;
	}
	return 0;
}

static int is_initializer(const Onnx__GraphProto *gp, const char *name)
{
	for (size_t i = 0; i < gp->n_initializer; i++)
		if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, name))
			return 1;
	return 0;
}

/* A fixed value offered for graph input @name (@pos among the non-initializers). */
static const struct npu_array *fixed_for(const struct npu_model_opts *opts, const char *name,
					 uint32_t pos)
{
	for (uint32_t i = 0; opts && i < opts->nfixed; i++) {
		const struct npu_array *a = &opts->fixed[i];

		if (a->name && *a->name ? !strcmp(a->name, name) : i == pos)
			return a;
	}
	return NULL;
}

static int read_initializers(struct onnx *o, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *t = gp->initializer[i];
		struct npu_array a;
		struct oval *v;
		char why[256] = "";
		int err = onnx_array_in(t, o->base_dir, &a, why, sizeof(why));

		onnx_slim_drop(o, t);	/* copied: the file's pages can go */
		if (!err && onnx_charge(o, a.bytes)) {
			npu_array_free(&a);
			return o->err;
		}
		if (err)
			return onnx_fail(o, err, "initializer '%s': %s", t->name ? t->name : "",
					 why);
		if (onnx_widen_f16(&a)) {	/* float16 weights: computed in fp32 */
			npu_array_free(&a);
			return onnx_fail(o, NPU_ENOMEM, "out of memory");
		}
		v = onnx_add(o, t->name, a.dtype, a.rank, a.dims);
		if (!v) {
			npu_array_free(&a);
			return NPU_EINVAL;
		}
		v->data = a.data;
		free(a.name);
	}
	return 0;
}

static int read_inputs(struct onnx *o, const Onnx__GraphProto *gp,
		       const struct npu_model_opts *opts)
{
	uint32_t pos = 0;

	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const struct npu_array *fx;
		uint32_t rank = 0, dims[NPU_MAX_RANK];
		enum npu_dtype dt = NPU_DT_FLOAT32;
		struct oval *v;
		int err, half;

		if (!vi->name || !*vi->name)
			return onnx_fail(o, NPU_EINVAL, "graph input %zu has no name", i);
		if (is_initializer(gp, vi->name))
			continue;	/* an initializer's default: a constant */
		fx = fixed_for(opts, vi->name, pos);
		err = value_type(o, vi, &dt, &rank, dims, !fx);
		if (err < 0)
			return err;
		if (fx) {
			if (fx->dtype != dt || fx->rank > NPU_MAX_RANK)
				return onnx_fail(o, NPU_EINVAL, "input '%s': the fixed value is %s, "
						 "the input %s", vi->name,
						 onnx_dtype_name(fx->dtype), onnx_dtype_name(dt));
			if (!err && (fx->rank != rank ||
				     memcmp(fx->dims, dims, sizeof(uint32_t) * rank)))
				return onnx_fail(o, NPU_EINVAL, "input '%s': the fixed value's shape "
						 "is not the input's", vi->name);
			rank = fx->rank;
			memcpy(dims, fx->dims, sizeof(dims));
		}
		half = dt == NPU_DT_FLOAT16 || dt == NPU_DT_BFLOAT16;
		v = onnx_add(o, vi->name, half ? NPU_DT_FLOAT32 : dt, rank, dims);
		if (!v)
			return NPU_EINVAL;
		v->input = (int)pos++;
		v->half = half ? (int)dt : 0;
		if (fx && half) {	/* a fixed 16-bit value: fp32, as the ops read it */
			struct npu_array w = *fx;

			if (fx->bytes != v->count * 2 || (fx->bytes && !fx->data))
				return onnx_fail(o, NPU_EINVAL, "input '%s': the fixed value has %zu "
						 "bytes", vi->name, fx->bytes);
			w.data = malloc(fx->bytes ? fx->bytes : 1);
			if (!w.data)
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			memcpy(w.data, fx->data, fx->bytes);
			if (onnx_widen_f16(&w)) {
				free(w.data);
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			}
			v->data = w.data;
		} else if (fx) {
			v->data = malloc(fx->bytes ? fx->bytes : 1);
			if (!v->data)
				return onnx_fail(o, NPU_ENOMEM, "out of memory");
			if (fx->bytes != v->count * onnx_elem_size(dt) || (fx->bytes && !fx->data))
				return onnx_fail(o, NPU_EINVAL, "input '%s': the fixed value has %zu "
						 "bytes", vi->name, fx->bytes);
			memcpy(v->data, fx->data, fx->bytes);
		}
	}
	return 0;
}

/* The 16-bit float type graph output @vi is declared as, or 0. */
static enum npu_dtype out_half(const Onnx__ValueInfoProto *vi)
{
	enum npu_dtype dt;

	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !vi->type->tensor_type)
		return 0;
	dt = onnx_dtype_from(vi->type->tensor_type->elem_type);
	return dt == NPU_DT_FLOAT16 || dt == NPU_DT_BFLOAT16 ? dt : 0;
}

/*
 * The graph's outputs, then its inputs, in the model's order: the outputs
 * first, as making one may make a tensor of an input (a dequantization
 * nothing read before).
 */
static int declare_io(struct onnx *o, const Onnx__GraphProto *gp)
{
	int *ids = malloc(sizeof(int) * (gp->n_input + gp->n_output + 1));
	uint32_t n = 0;
	int err = 0;

	if (!ids)
		return onnx_fail(o, NPU_ENOMEM, "out of memory");
	for (size_t i = 0; !err && i < gp->n_output; i++) {
		const char *name = gp->output[i]->name;
		struct oval *v = onnx_find(o, name);
		int id;

		if (!v) {
			err = onnx_fail(o, NPU_EINVAL, "graph output '%s' is not computed",
					name ? name : "");
			break;
		}
		id = v->id >= 0 || v->input >= 0 || v->data ? v->id : onnx_tensor(o, v);
		if (id < 0 && v->input < 0 && !v->data) {
			err = id;
			break;
		}
		if (id < 0 || v->input >= 0 || o->g->t[id].cdata) {
			/* A constant or an input as an output: copied into one of its own. */
			struct ir_attrs a = { 0 };
			int src = onnx_tensor(o, v), dst;

			if (src < 0) {
				err = src;
				break;
			}
			dst = onnx_temp(o, v->dt, v->rank, v->dims);
			if (dst < 0) {
				err = dst;
				break;
			}
			a.nd.cp = (struct nd_copy){ .rank = 1, .dtype = v->dt,
						    .dims = { (uint32_t)(v->count ? v->count : 1) },
						    .st = { 1 } };
			err = onnx_node(o, IR_ND_COPY, &src, 1, &dst, 1, &a);
			if (err)
				break;
			npu_graph_set_tensor_name(o->g, dst, name);
			id = dst;
		}
		if (out_half(gp->output[i]) && o->g->t[id].d.dtype == NPU_DT_FLOAT32) {
			/* a 16-bit float output: the fp32 result cast, under the output's name */
			struct ir_attrs a = { 0 };
			enum npu_dtype hdt = out_half(gp->output[i]);
			int dst = onnx_temp(o, hdt, v->rank, v->dims);

			if (dst < 0) {
				err = dst;
				break;
			}
			a.nd.un = (struct nd_unary){ .fn = ND_CAST, .dtype = NPU_DT_FLOAT32,
						     .odtype = hdt,
						     .count = v->count ? v->count : 1 };
			err = onnx_node(o, IR_ND_UNARY, &id, 1, &dst, 1, &a);
			if (!err)
				err = npu_graph_set_tensor_name(o->g, id, NULL);
			if (!err)
				err = npu_graph_set_tensor_name(o->g, dst, name);
			if (err)
				break;
			id = dst;
		}
		ids[gp->n_input + n++] = id;
	}
	if (!err)
		err = npu_graph_outputs(o->g, ids + gp->n_input, n);
	/* Inputs: those that became tensors (read as data). */
	n = 0;
	for (size_t i = 0; !err && i < gp->n_input; i++) {
		struct oval *v = onnx_find(o, gp->input[i]->name);

		if (v && v->input >= 0 && v->id >= 0)
			ids[n++] = v->half ? v->io : v->id;
	}
	if (!err)
		err = npu_graph_inputs(o->g, ids, n);
	if (err && !o->g->err[0])
		err = onnx_fail(o, err, "declaring the graph's inputs and outputs");
	free(ids);
	return err;
}

static int read_opset(struct onnx *o)
{
	o->opset = -1;
	for (size_t i = 0; i < o->m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *s = o->m->opset_import[i];

		if (!s->domain || !*s->domain || !strcmp(s->domain, "ai.onnx"))
			o->opset = s->version;
	}
	if (o->opset < 0 && !o->m->n_opset_import)
		o->opset = 1;	/* IR version 1 models name no opset */
	if (o->opset < ONNX_MIN_OPSET || o->opset > ONNX_MAX_OPSET)
		return onnx_fail(o, NPU_ENOTSUP, "opset %lld of the default domain (%d-%d are "
				 "supported)", (long long)o->opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET);
	return 0;
}

void onnx_free(struct onnx *o)
{
	for (int i = 0; i < o->nv; i++) {
		free(o->v[i]->name);
		if (!o->v[i]->given)
			free(o->v[i]->data);	/* else the graph's now */
		free(o->v[i]);
	}
	free(o->given);
	free(o->host);
	free(o->v);
	free(o->hash);
	free(o->done);
	onnx_uses_free(o->uses);
}

/* Whether a node of @gp holds a body (If, Loop, Scan): it may read any name. */
static int has_bodies(const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_node; i++)
		for (size_t k = 0; k < gp->node[i]->n_attribute; k++)
			if (gp->node[i]->attribute[k]->type ==
			    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
			    gp->node[i]->attribute[k]->type ==
			    ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS)
				return 1;
	return 0;
}

/* A Constant node: no inputs, its value in an attribute. */
static int is_constant(const Onnx__NodeProto *n)
{
	return n->op_type && !strcmp(n->op_type, "Constant") && !n->n_input &&
	       (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"));
}

/*
 * The model unpacked, its weights' raw_data pointing into @buf where the
 * walk of onnx_slim.c can follow the model (@s records which), else whole.
 */
static Onnx__ModelProto *unpack(const void *buf, size_t len, struct onnx_slim *s)
{
	Onnx__ModelProto *m;

	if (!onnx_slim(buf, len, s)) {
		m = onnx__model_proto__unpack(NULL, s->len, s->buf);
		free(s->buf);
		s->buf = NULL;
		/* protobuf-c saw what the walk did, or the model is read whole */
		if (m && !onnx_slim_attach(m, s))
			return m;
		if (m)
			onnx__model_proto__free_unpacked(m, NULL);
		onnx_slim_free(s);
	}
	return onnx__model_proto__unpack(NULL, len, buf);
}

static int load(const void *buf, size_t len, int mapped, const struct npu_model_opts *opts,
		npu_graph **out)
{
	struct onnx o = { 0 };
	struct onnx_slim slim;
	const Onnx__GraphProto *gp;
	Onnx__ModelProto *m;
	int err;

	if (opts->nfixed && !opts->fixed)
		return npu_fail(NULL, NPU_EINVAL, "npu_model_load: %u fixed values and no array",
				opts->nfixed);
	if (onnx_too_deep(buf, len))
		return npu_fail(NULL, NPU_EINVAL, "not an ONNX model libnpu reads: its graphs and "
				"types nest more than %d deep", ONNX_MAX_NESTING);
	m = unpack(buf, len, &slim);
	if (!m) {
		onnx_slim_free(&slim);
		return npu_fail(NULL, NPU_EINVAL, "not an ONNX model: the protobuf does not parse "
				"(%zu bytes)", len);
	}
	o.m = m;
	o.map = mapped ? buf : NULL;
	o.map_len = mapped ? len : 0;
	o.base_dir = opts->base_dir;
	o.g = npu_graph_new();
	if (!o.g) {
		onnx_slim_detach(m, &slim);
		onnx__model_proto__free_unpacked(m, NULL);
		onnx_slim_free(&slim);
		return npu_fail(NULL, NPU_ENOMEM, "out of memory");
	}
	gp = m->graph;
	err = npu_env_u64("NPU_MODEL_MAX_MIB", 1, 1u << 20, 4096, &o.budget) ?
	      onnx_fail(&o, NPU_EINVAL, "NPU_MODEL_MAX_MIB is not a number of MiB (1 to 1048576)") :
	      0;
	o.budget <<= 20;
	if (!err)
		err = !gp ? onnx_fail(&o, NPU_EINVAL, "the model has no graph") : read_opset(&o);
	if (!err && gp->n_sparse_initializer)
		err = onnx_fail(&o, NPU_ENOTSUP, "sparse initializers are not supported");
	if (!err)
		err = onnx_check_nodes(&o);
	if (!err)
		err = read_initializers(&o, gp);
	if (!err)
		err = read_inputs(&o, gp, opts);
	o.gp = gp;
	o.done = gp ? calloc(gp->n_node + 1, 1) : NULL;
	if (!err && !o.done)
		err = onnx_fail(&o, NPU_ENOMEM, "out of memory");
	/*
	 * Constant nodes first: exporters write a pattern's constants among
	 * its nodes (torch's QuantizeLinear after a Conv reads Constants
	 * written after the Conv), and a fold looking ahead must see them.
	 */
	o.release = gp && !has_bodies(gp);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; !err && i < gp->n_node; i++) {
			/* not done: not folded into an op before it */
			if (!o.done[i] && is_constant(gp->node[i]) == !pass) {
				o.node = gp->node[i];
				o.node_index = (int)i;
				err = onnx_import_eval(&o);
				if (err && !o.g->err[0])	/* never a refusal without a reason */
					err = onnx_fail(&o, err < 0 && err != NPU_ENODEV ? err :
							NPU_EINVAL, "cannot be imported (error %d)",
							err);
				o.done[i] |= !pass;
			}
			if (pass && !err)
				onnx_release_after(&o, (int)i);
		}
	o.node = NULL;
	if (!err)
		err = declare_io(&o, gp);
	onnx_free(&o);
	onnx_slim_detach(m, &slim);
	onnx__model_proto__free_unpacked(m, NULL);
	onnx_slim_free(&slim);
	if (err) {
		char msg[NPU_ERRMSG_LEN];

		snprintf(msg, sizeof(msg), "%s", o.g->err);
		npu_graph_free(o.g);
		return npu_fail(NULL, err, "%s", msg);
	}
	*out = o.g;
	return 0;
}

int onnx_load_mem(size_t size, const void *buf, size_t len, const struct npu_model_opts *opts_in,
		  npu_graph **g)
{
	struct npu_model_opts opts = { 0 };

	if (!g)
		return npu_fail(NULL, NPU_EINVAL, "npu_model_load: no graph pointer");
	*g = NULL;
	if (opts_in && npu_struct_in(&opts, sizeof(opts), opts_in, size))
		return npu_fail(NULL, NPU_EINVAL, "npu_model_load: options of an unknown size");
	if (!buf)
		return npu_fail(NULL, NPU_EINVAL, "npu_model_load: no model");
	return load(buf, len, 0, &opts, g);
}

int onnx_load(size_t size, const char *path, const struct npu_model_opts *opts_in,
	      npu_graph **g)
{
	struct npu_model_opts opts = { 0 };
	char *dir;
	size_t len;
	void *buf;
	int err, mapped;

	if (!path || !g)
		return npu_fail(NULL, NPU_EINVAL, "npu_model_load: no path or graph pointer");
	*g = NULL;
	if (opts_in && npu_struct_in(&opts, sizeof(opts), opts_in, size))
		return npu_fail(NULL, NPU_EINVAL, "npu_model_load: options of an unknown size");
	/* external data beside the model, unless the caller says where */
	dir = malloc(strlen(path) + 3);
	if (!dir)
		return npu_fail(NULL, NPU_ENOMEM, "out of memory");
	strcpy(dir, path);
	if (strrchr(dir, '/'))
		strrchr(dir, '/')[1] = 0;
	else
		strcpy(dir, ".");
	if (!opts.base_dir)
		opts.base_dir = dir;
	buf = onnx_map_file(path, &len, &mapped);
	if (!buf) {
		free(dir);
		return NPU_EINVAL;
	}
	err = load(buf, len, mapped, &opts, g);
	onnx_unmap_file(buf, len, mapped);
	free(dir);
	if (err) {
		char msg[NPU_ERRMSG_LEN];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		npu_fail(NULL, err, "%s: %s", path, msg);
	}
	return err;
}
