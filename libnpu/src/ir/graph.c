// SPDX-License-Identifier: MIT
/*
 * graph.c - the IR's storage: tensors and nodes appended in order (a
 * node's inputs exist before it, so the order is a topological one), the
 * declared inputs and outputs, the error message of the last failure, and
 * the objects whose life is the graph's (its plans).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/kernel.h"

npu_graph *npu_graph_new(void)
{
	return calloc(1, sizeof(npu_graph));
}

void npu_graph_free(npu_graph *g)
{
	if (!g)
		return;
	/* Last attached first: a plan may refer to nothing attached after it. */
	while (g->nattached > 0) {
		struct ir_attached a = g->attached[g->nattached - 1];

		a.free(a.obj);	/* detaches itself */
		if (g->nattached > 0 && g->attached[g->nattached - 1].obj == a.obj)
			g->nattached--;
	}
	for (int i = 0; i < g->nt; i++) {
		free(g->t[i].cscales);
		free(g->t[i].cdata);
		free(g->t[i].name);
	}
	for (int i = 0; i < g->nn; i++)
		ir_node_release(&g->n[i]);
	npu_text_free(&g->report);
	free(g->attached);
	free(g->inputs);
	free(g->outputs);
	free(g->t);
	free(g->n);
	free(g);
}

int ir_attach(npu_graph *g, void *obj, void (*fn)(void *obj))
{
	struct ir_attached *a = realloc(g->attached, sizeof(*a) * (size_t)(g->nattached + 1));

	if (!a)
		return NPU_ENOMEM;
	g->attached = a;
	a[g->nattached++] = (struct ir_attached){ obj, fn };
	return 0;
}

void ir_detach(npu_graph *g, void *obj)
{
	for (int i = 0; i < g->nattached; i++)
		if (g->attached[i].obj == obj) {
			memmove(&g->attached[i], &g->attached[i + 1],
				sizeof(*g->attached) * (size_t)(g->nattached - i - 1));
			g->nattached--;
			return;
		}
}

int ir_fail(npu_graph *g, int err, const char *fmt, ...)
{
	char msg[NPU_ERRMSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return npu_fail(g ? g->err : NULL, err, "%s", msg);
}

const char *npu_graph_error(const npu_graph *g)
{
	return g ? g->err : "";
}

int ir_mutable(npu_graph *g)
{
	if (!g)
		return npu_fail(NULL, NPU_EINVAL, "no graph");
	if (g->frozen)
		return ir_fail(g, NPU_EBUSY, "the graph is compiled: it cannot change any more");
	return 0;
}

size_t ir_elem_size(enum npu_dtype dt)
{
	return nd_elem_size(dt);
}

int ir_valid_id(const npu_graph *g, int id)
{
	return g && id >= 0 && id < g->nt;
}

int ir_is_const(const npu_graph *g, int id)
{
	return ir_valid_id(g, id) && g->t[id].cdata != NULL;
}

int ir_act_of(const npu_graph *g, int id, enum npu_dtype dt)
{
	return ir_valid_id(g, id) && !g->t[id].cdata && g->t[id].d.dtype == dt;
}

uint64_t ir_count(const npu_graph *g, int id)
{
	return g->t[id].bytes / ir_elem_size(g->t[id].d.dtype);
}

int ir_root(const npu_graph *g, int id)
{
	return g->t[id].alias >= 0 ? g->t[id].alias : id;
}

void ir_node_init(struct ir_node *n, enum ir_op op)
{
	memset(n, 0, sizeof(*n));
	n->op = op;
	for (int i = 0; i < IR_MAX_IN; i++)
		n->in[i] = -1;
	for (int i = 0; i < IR_MAX_OUT; i++) {
		n->out[i] = -1;
		n->a.acc[i] = -1;
	}
	n->a.stride[0] = n->a.stride[1] = 1;
	n->a.dilation[0] = n->a.dilation[1] = 1;
	n->a.groups = 1;
}

void ir_node_release(struct ir_node *n)
{
	if (n->a.kn) {
		free(n->a.kn->mult);
		free(n->a.kn->shift);
		free(n->a.kn->axis_dims);
		free(n->a.kn);
		n->a.kn = NULL;
	}
	free(n->a.custom);
	free(n->a.blob);
	n->a.custom = NULL;
	n->a.blob = NULL;
}

/*
 * Shape inference: output 0 left without a shape (rank 0) gets the one its
 * op gives (*@inferred: its id, else -1). When the op cannot tell, the
 * output keeps rank 0 and the op's check says what is wrong.
 */
static int infer_shape(npu_graph *g, const struct ir_op_desc *d, const struct ir_node *n,
		       int *inferred)
{
	uint32_t dims[IR_MAX_RANK] = { 0 }, rank = 0;
	struct ir_tensor *t;
	uint64_t count = 1;

	*inferred = -1;
	if (n->nout < 1 || !ir_valid_id(g, n->out[0]) || g->t[n->out[0]].d.rank)
		return 0;
	t = &g->t[n->out[0]];
	if (!d->shape)
		return ir_fail(g, NPU_EINVAL, "%s: the output's shape (tensor %d) must be given",
			       d->name, n->out[0]);
	d->shape(g, n, dims, &rank);
	for (uint32_t i = 0; i < rank; i++) {
		if (!dims[i] || dims[i] > IR_MAX_DIM)
			return ir_fail(g, NPU_EINVAL, "%s: the output's dimension %u would be %u "
				       "(1-2^24)", d->name, i, dims[i]);
		count *= dims[i];
		if (count > (256u << 20))
			return ir_fail(g, NPU_E2BIG, "%s: the output would have more than 2^28 "
				       "elements", d->name);
	}
	if (!rank)
		return 0;
	memcpy(t->d.dims, dims, sizeof(dims));
	t->d.rank = rank;
	t->bytes = count * ir_elem_size(t->d.dtype);
	*inferred = n->out[0];
	return 0;
}

int ir_add_node(npu_graph *g, struct ir_node *n)
{
	const struct ir_op_desc *d = ir_op(n->op);
	struct ir_node *nn = NULL;
	int err, inferred = -1, nchw_out = -1;

	err = ir_mutable(g);
	if (err)
		return err;
	if (!d)
		return ir_fail(g, NPU_EINVAL, "op %d is not in the registry", (int)n->op);
	if (n->nin < d->min_in || n->nin > d->max_in || n->nout < d->min_out ||
	    n->nout > d->max_out)
		return ir_fail(g, NPU_EINVAL, "%s: %u inputs and %u outputs (wants %u-%u and %u-%u)",
			       d->name, n->nin, n->nout, d->min_in, d->max_in, d->min_out,
			       d->max_out);
	err = layout_in(g, n, &nchw_out);
	if (err)
		return err;
	for (uint32_t i = 0; i < n->nout; i++)
		if (n->out[i] >= 0 && ir_is_const(g, n->out[i]) && !(d->flags & IR_F_INPLACE))
			return ir_fail(g, NPU_EINVAL, "%s: output %u (tensor %d) is a constant",
				       d->name, i, n->out[i]);
	for (uint32_t i = 0; i < n->nin; i++)
		if (ir_valid_id(g, n->in[i]) && !g->t[n->in[i]].d.rank)
			return ir_fail(g, NPU_EINVAL, "%s: input %u (tensor %d) has no shape yet: the op "
				       "that writes it comes first", d->name, i, n->in[i]);
	err = infer_shape(g, d, n, &inferred);
	if (!err)
		err = d->verify(g, n);
	if (!err) {
		nn = realloc(g->n, sizeof(*g->n) * (size_t)(g->nn + 1));
		if (!nn)
			err = ir_fail(g, NPU_ENOMEM, "out of memory adding a node");
	}
	if (err) {
		if (inferred >= 0) {	/* the node is refused: so is its shape */
			g->t[inferred].d.rank = 0;
			memset(g->t[inferred].d.dims, 0, sizeof(g->t[inferred].d.dims));
			g->t[inferred].bytes = 0;
		}
		return err;
	}
	g->n = nn;
	g->n[g->nn++] = *n;
	if (d->flags & IR_F_VIEW)	/* the output is another view of the input's storage */
		g->t[n->out[0]].alias = ir_root(g, n->in[0]);
	err = layout_out(g, n, nchw_out);
	if (err)
		g->nn--;	/* no writer of a twin that nothing turns back */
	return err;
}

/* A slot for one more tensor, its links unset; counted by the caller. */
static struct ir_tensor *new_tensor(npu_graph *g)
{
	struct ir_tensor *nt = realloc(g->t, sizeof(*g->t) * (size_t)(g->nt + 1)), *t;

	if (!nt)
		return NULL;
	g->t = nt;
	t = &g->t[g->nt];
	memset(t, 0, sizeof(*t));
	t->alias = -1;
	t->grad = -1;
	t->qsrc = -1;
	t->twin = -1;
	return t;
}

int ir_add_desc(npu_graph *g, const struct npu_tensor_desc *desc)
{
	return ir_add_desc_take(g, desc, NULL);
}

int ir_add_desc_take(npu_graph *g, const struct npu_tensor_desc *desc, void *take)
{
	struct npu_tensor_desc copy = *desc, *d = &copy;
	struct ir_tensor *t;
	uint64_t n = 1;
	int err = ir_mutable(g);

	if (err)
		return err;
	if (d->layout > NPU_LAYOUT_NCHW || (d->layout == NPU_LAYOUT_NCHW && d->rank != 4))
		return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: layout %u (NHWC 0, or NCHW 1 for a "
			       "rank-4 tensor)", d->layout);
	if (!nd_elem_size(d->dtype))
		return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: dtype %d is not int8, uint8, int32, "
			       "int64, fp32 or bool", d->dtype);
	if (d->rank > IR_MAX_RANK || (!d->rank && (d->data || d->channel_scales)))
		return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: rank %u (1-4, or 0 for an "
			       "activation whose shape the op writing it infers)", d->rank);
	if (!d->rank)
		memset(d->dims, 0, sizeof(d->dims));
	for (uint32_t i = 0; i < d->rank; i++) {
		if (!d->dims[i] || d->dims[i] > IR_MAX_DIM)
			return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: dimension %u is %u (1-2^24)",
				       i, d->dims[i]);
		n *= d->dims[i];
		if (n > (256u << 20))
			return ir_fail(g, NPU_E2BIG, "npu_graph_tensor: more than 2^28 elements");
	}
	/* Activations: int8 with a quantization; fp32 and int32 without. */
	if (!d->data && d->dtype == NPU_DT_INT8 &&
	    (!(d->scale > 0) || d->zero_point < -128 || d->zero_point > 127))
		return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: an int8 activation needs a scale > 0 "
			       "and a zero point in -128..127");
	if (d->channel_scales && d->quant_dim >= d->rank)
		return ir_fail(g, NPU_EINVAL, "npu_graph_tensor: quant_dim %u of a rank-%u tensor",
			       d->quant_dim, d->rank);
	t = new_tensor(g);
	if (!t)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	t->d = *d;
	t->bytes = d->rank ? n * ir_elem_size(d->dtype) : 0;
	if (d->data && !take) {
		t->cdata = malloc(t->bytes);
		if (!t->cdata)
			return ir_fail(g, NPU_ENOMEM, "out of memory");
		memcpy(t->cdata, d->data, t->bytes);
	}
	if (d->channel_scales) {
		size_t nc = d->dims[d->quant_dim];

		t->cscales = malloc(sizeof(float) * nc);
		if (!t->cscales) {
			if (!take)
				free(t->cdata);
			t->cdata = NULL;
			return ir_fail(g, NPU_ENOMEM, "out of memory");
		}
		memcpy(t->cscales, d->channel_scales, sizeof(float) * nc);
	}
	if (d->data && take)
		t->cdata = take;	/* only now: a failure above leaves it the caller's */
	t->d.data = t->cdata;
	t->d.channel_scales = t->cscales;
	return g->nt++;
}

int ir_add_empty(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims)
{
	struct ir_tensor *t;
	int err = ir_mutable(g);

	if (err)
		return err;
	if (!rank || rank > IR_MAX_RANK)
		return ir_fail(g, NPU_EINVAL, "an empty tensor of rank %u", rank);
	t = new_tensor(g);
	if (!t)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	t->d = (struct npu_tensor_desc){ .dtype = dt, .rank = rank, .scale = 1.0f };
	memcpy(t->d.dims, dims, sizeof(uint32_t) * rank);
	t->bytes = 0;
	return g->nt++;
}

int ir_add_raw(npu_graph *g, size_t bytes, const void *data)
{
	struct ir_tensor *t;

	t = new_tensor(g);
	if (!t)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	t->bytes = bytes;
	t->d = (struct npu_tensor_desc){ .dtype = NPU_DT_INT8, .rank = 1, .scale = 1.0f,
					 .dims = { bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes } };
	if (data) {
		t->cdata = malloc(bytes ? bytes : 1);
		if (!t->cdata)
			return ir_fail(g, NPU_ENOMEM, "out of memory");
		memcpy(t->cdata, data, bytes);
		t->d.data = t->cdata;
	}
	return g->nt++;
}

int ir_add_tensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, const uint32_t *dims)
{
	struct npu_tensor_desc d = { .dtype = dt, .rank = rank, .scale = 1.0f };

	memcpy(d.dims, dims, sizeof(uint32_t) * rank);
	return ir_add_desc(g, &d);
}

/* ---- the declared inputs and outputs ----------------------------------- */

int ir_declared(const npu_graph *g, int t, int what)
{
	for (uint32_t i = 0; (what & 1) && i < g->ninputs; i++)
		if (ir_root(g, g->inputs[i]) == ir_root(g, t))
			return 1;
	for (uint32_t i = 0; (what & 2) && i < g->noutputs; i++)
		if (ir_root(g, g->outputs[i]) == ir_root(g, t))
			return 1;
	return 0;
}

static int set_ids(npu_graph *g, const int *ids, uint32_t n, int **dst, uint32_t *ndst,
		   const char *what)
{
	int *copy;
	int err = ir_mutable(g);

	if (err)
		return err;
	if ((!ids && n) || n > (uint32_t)g->nt)
		return ir_fail(g, NPU_EINVAL, "graph %s: %u ids", what, n);
	for (uint32_t i = 0; i < n; i++) {
		if (!ir_valid_id(g, ids[i]) || ir_is_const(g, ids[i]))
			return ir_fail(g, NPU_EINVAL, "graph %s: %d is not an activation tensor",
				       what, ids[i]);
		for (uint32_t k = 0; k < i; k++)
			if (ids[k] == ids[i])
				return ir_fail(g, NPU_EINVAL, "graph %s: tensor %d named twice",
					       what, ids[i]);
	}
	copy = malloc(sizeof(int) * n + 1);
	if (!copy)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	memcpy(copy, ids, sizeof(int) * n);
	free(*dst);
	*dst = copy;
	*ndst = n;
	return 0;
}

int npu_graph_inputs(npu_graph *g, const int *ids, uint32_t n)
{
	return set_ids(g, ids, n, &g->inputs, &g->ninputs, "inputs");
}

int npu_graph_outputs(npu_graph *g, const int *ids, uint32_t n)
{
	return set_ids(g, ids, n, &g->outputs, &g->noutputs, "outputs");
}

/* ---- reading the graph (custom backends, tools) ----------------------- */

const char *npu_graph_tensor_name(const npu_graph *g, int id)
{
	return ir_valid_id(g, id) ? g->t[id].name : NULL;
}

int npu_graph_set_tensor_name(npu_graph *g, int id, const char *name)
{
	char *copy;

	if (!ir_valid_id(g, id))
		return npu_fail(NULL, NPU_EINVAL, "npu_graph_set_tensor_name: no tensor %d", id);
	copy = name ? malloc(strlen(name) + 1) : NULL;
	if (name && !copy)
		return ir_fail(g, NPU_ENOMEM, "out of memory");
	if (copy)
		strcpy(copy, name);
	free(g->t[id].name);
	g->t[id].name = copy;
	return 0;
}

int npu_graph_io_count(const npu_graph *g, int output)
{
	if (!g)
		return NPU_EINVAL;
	return (int)(output ? g->noutputs : g->ninputs);
}

int npu_graph_io(const npu_graph *g, int output, uint32_t i)
{
	if (!g || i >= (output ? g->noutputs : g->ninputs))
		return npu_fail(NULL, NPU_EINVAL, "npu_graph_io: no %s %u", output ? "output" :
				"input", i);
	return output ? g->outputs[i] : g->inputs[i];
}

int npu_graph_tensor_count(const npu_graph *g)
{
	return g ? g->nt : NPU_EINVAL;
}

int npu_graph_node_count(const npu_graph *g)
{
	return g ? g->nn : NPU_EINVAL;
}

int npu_graph_io_array(const npu_graph *g, int output, uint32_t i, struct npu_array *a)
{
	const struct ir_tensor *t;
	int id = npu_graph_io(g, output, i);

	if (id < 0 || !a)
		return id < 0 ? id : NPU_EINVAL;
	t = &g->t[id];
	memset(a, 0, sizeof(*a));
	a->dtype = t->d.dtype;
	a->rank = t->scalar ? 0 : t->d.rank;
	memcpy(a->dims, t->d.dims, sizeof(a->dims));
	a->bytes = t->bytes;
	a->data = calloc(1, t->bytes ? t->bytes : 1);
	if (t->name)
		a->name = malloc(strlen(t->name) + 1);
	if (!a->data || (t->name && !a->name)) {
		npu_array_free(a);
		return npu_fail(NULL, NPU_ENOMEM, "out of memory");
	}
	if (t->name)
		strcpy(a->name, t->name);
	return 0;
}

int npu_graph_tensor_info_v(size_t size, const npu_graph *g, int id, struct npu_tensor_desc *d)
{
	if (!ir_valid_id(g, id) || !d)
		return npu_fail(NULL, NPU_EINVAL, "npu_graph_tensor_info: no tensor %d", id);
	npu_struct_out(d, size, &g->t[id].d, sizeof(g->t[id].d));
	return 0;
}

int npu_graph_node_info_v(size_t size, const npu_graph *g, int node, struct npu_node_info *info)
{
	struct npu_node_info k = { 0 };
	const struct ir_node *n;

	if (!g || node < 0 || node >= g->nn || !info)
		return npu_fail(NULL, NPU_EINVAL, "npu_graph_node_info: no node %d", node);
	n = &g->n[node];
	k.op = n->op == IR_CUSTOM ? n->a.custom : ir_op(n->op)->name;
	k.label = ir_node_label(g, n);
	k.ninputs = n->nin;
	k.inputs = n->in;
	k.noutputs = n->nout;
	k.outputs = n->out;
	k.attr = n->a.blob;
	k.attr_len = n->a.blob_len;
	k.training = n->backward;
	npu_struct_out(info, size, &k, sizeof(k));
	return 0;
}
