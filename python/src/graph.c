// SPDX-License-Identifier: MIT
/*
 * graph.c - _npu.Graph and _npu.Plan: libnpu's graph API (npu.h,
 * npu_train.h) for Python, one method per libnpu call, tensors named by
 * their ids as in C. npu/graph.py builds the friendlier layer over it.
 *
 * Locking: a graph's calls that change it or read what a compile may be
 * changing (ops, compile, quantize) take its rwlock for writing; a plan's
 * runs take it for reading (plans of one graph run side by side) and the
 * plan's own mutex (one run per plan at a time). Both are taken with the
 * GIL released where the call may last (compile, runs), and never the
 * other way round, so no thread waits for the GIL while holding them.
 */
#include "npu_py.h"	/* Python.h first: it sets the feature macros */

#include <pthread.h>
#include <string.h>

#include "npu_backend.h"

typedef struct {
	PyObject_HEAD
	npu_graph *g;
	pthread_rwlock_t lock;
} Graph;

typedef struct {
	PyObject_HEAD
	Graph *graph;		/* held: libnpu frees a plan with its graph */
	npu_plan *plan;
	npu_device *dev;	/* opened for this plan, or NULL */
	pthread_mutex_t lock;	/* one run at a time */
} Plan;

/* ---- helpers ------------------------------------------------------------ */

/* bfloat16 travels as numpy's uint16 (its bits) in graphs' tensors. */
static int tensor_npy_type(enum npu_dtype d)
{
	return d == NPU_DT_BFLOAT16 ? NPY_UINT16 : npu_py_npy_type(d);
}

static int graph_ok(Graph *g)
{
	if (g->g)
		return 0;
	PyErr_SetString(PyExc_RuntimeError, "the Graph was not initialised");
	return -1;
}

/* The result of a libnpu call that changes @g: None, or the error it gave. */
static PyObject *graph_result(Graph *g, int err, const char *what)
{
	if (err)
		return npu_py_raise(err, what, npu_graph_error(g->g));
	Py_RETURN_NONE;
}

static size_t elements(const struct npu_tensor_desc *d)
{
	size_t n = 1;

	for (uint32_t i = 0; i < d->rank; i++)
		n *= d->dims[i];
	return n;
}

/* ---- Graph -------------------------------------------------------------- */

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	Graph *g = (Graph *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (!g)
		return NULL;
	pthread_rwlock_init(&g->lock, NULL);
	g->g = npu_graph_new();
	if (!g->g) {
		Py_DECREF(g);
		return PyErr_NoMemory();
	}
	return (PyObject *)g;
}

static void graph_dealloc(Graph *g)
{
	npu_graph_free(g->g);
	pthread_rwlock_destroy(&g->lock);
	Py_TYPE(g)->tp_free((PyObject *)g);
}

/*
 * tensor(dtype, shape, data=None, scale=1.0, zero_point=0,
 *        channel_scales=None, quant_dim=0, layout=0) -> id
 */
static PyObject *graph_tensor(Graph *g, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "dtype", "shape", "data", "scale", "zero_point",
				  "channel_scales", "quant_dim", "layout", NULL };
	struct npu_tensor_desc d = { .scale = 1.0f };
	PyObject *shape, *data = Py_None, *cs = Py_None;
	PyArrayObject *arr = NULL, *csa = NULL;
	int dtype, id, type;

	if (graph_ok(g) ||
	    !PyArg_ParseTupleAndKeywords(args, kw, "iO|OfiOII", kwlist, &dtype, &shape, &data,
					 &d.scale, &d.zero_point, &cs, &d.quant_dim, &d.layout))
		return NULL;
	d.dtype = (enum npu_dtype)dtype;
	if (npu_py_u32_seq(shape, d.dims, NPU_MAX_RANK, &d.rank, "shape"))
		return NULL;
	type = tensor_npy_type(d.dtype);
	if (type < 0) {
		PyErr_Format(PyExc_ValueError, "no dtype %d", dtype);
		return NULL;
	}
	if (data != Py_None) {
		arr = npu_py_array(data, type, "data");
		if (!arr)
			return NULL;
		if ((size_t)PyArray_SIZE(arr) != elements(&d)) {
			PyErr_Format(PyExc_ValueError, "data: %zd values for a tensor of %zu",
				     (Py_ssize_t)PyArray_SIZE(arr), elements(&d));
			Py_DECREF(arr);
			return NULL;
		}
		d.data = PyArray_DATA(arr);
	}
	if (cs != Py_None) {
		csa = npu_py_array(cs, NPY_FLOAT32, "channel_scales");
		if (!csa || d.quant_dim >= d.rank ||
		    PyArray_SIZE(csa) != (npy_intp)d.dims[d.quant_dim]) {
			if (csa)
				PyErr_SetString(PyExc_ValueError, "channel_scales: one per entry of "
						"the shape's quant_dim wanted");
			Py_XDECREF(arr);
			Py_XDECREF(csa);
			return NULL;
		}
		d.channel_scales = PyArray_DATA(csa);
	}
	pthread_rwlock_wrlock(&g->lock);
	id = npu_graph_tensor(g->g, &d);	/* copies the data */
	pthread_rwlock_unlock(&g->lock);
	Py_XDECREF(arr);
	Py_XDECREF(csa);
	if (id < 0)
		return npu_py_raise(id, "cannot add the tensor", npu_graph_error(g->g));
	return PyLong_FromLong(id);
}

/* info(id) -> (dtype, shape, scale, zero_point) */
static PyObject *graph_info(Graph *g, PyObject *args)
{
	struct npu_tensor_desc d;
	PyObject *shape;
	int id, err;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "i", &id))
		return NULL;
	pthread_rwlock_rdlock(&g->lock);
	err = npu_graph_tensor_info(g->g, id, &d);
	pthread_rwlock_unlock(&g->lock);
	if (err)
		return npu_py_raise(err, "no such tensor", npu_last_error());
	shape = PyTuple_New(d.rank);
	for (uint32_t i = 0; shape && i < d.rank; i++)
		PyTuple_SET_ITEM(shape, i, PyLong_FromUnsignedLong(d.dims[i]));
	return shape ? Py_BuildValue("(iNdi)", (int)d.dtype, shape, (double)d.scale,
				     d.zero_point) : NULL;
}

/* declare(output, ids): the graph's declared inputs (0) or outputs (1). */
static PyObject *graph_declare(Graph *g, PyObject *args)
{
	int ids[256], output, err;
	uint32_t v[256], n;
	PyObject *seq;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "pO", &output, &seq) ||
	    npu_py_u32_seq(seq, v, 256, &n, "ids"))
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		ids[i] = (int)v[i];
	pthread_rwlock_wrlock(&g->lock);
	err = output ? npu_graph_outputs(g->g, ids, n) : npu_graph_inputs(g->g, ids, n);
	pthread_rwlock_unlock(&g->lock);
	return graph_result(g, err, output ? "cannot declare the outputs" :
			    "cannot declare the inputs");
}

/* declared(output) -> [ids] */
static PyObject *graph_declared(Graph *g, PyObject *args)
{
	PyObject *list;
	int output, n;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "p", &output))
		return NULL;
	pthread_rwlock_rdlock(&g->lock);
	n = npu_graph_io_count(g->g, output);
	list = PyList_New(n > 0 ? n : 0);
	for (int i = 0; list && i < n; i++)
		PyList_SET_ITEM(list, i, PyLong_FromLong(npu_graph_io(g->g, output, (uint32_t)i)));
	pthread_rwlock_unlock(&g->lock);
	return list;
}

static PyObject *graph_name(Graph *g, PyObject *args)
{
	const char *name;
	int id;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "i", &id))
		return NULL;
	pthread_rwlock_rdlock(&g->lock);
	name = npu_graph_tensor_name(g->g, id);
	pthread_rwlock_unlock(&g->lock);
	if (!name)
		Py_RETURN_NONE;
	return PyUnicode_FromString(name);
}

static PyObject *graph_set_name(Graph *g, PyObject *args)
{
	const char *name;
	int id, err;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "is", &id, &name))
		return NULL;
	pthread_rwlock_wrlock(&g->lock);
	err = npu_graph_set_tensor_name(g->g, id, name);
	pthread_rwlock_unlock(&g->lock);
	return graph_result(g, err, "cannot name the tensor");
}

/*
 * The ops, by their C signatures: OPn(name) makes a method taking n
 * tensor ids; the others parse their attributes below.
 */
#define LOCKED(g, call) ({ int e_; pthread_rwlock_wrlock(&(g)->lock); e_ = (call); \
			   pthread_rwlock_unlock(&(g)->lock); e_; })

#define OP1(name)								\
static PyObject *graph_##name(Graph *g, PyObject *args)			\
{										\
	int a;									\
	if (graph_ok(g) || !PyArg_ParseTuple(args, "i", &a))			\
		return NULL;							\
	return graph_result(g, LOCKED(g, npu_graph_##name(g->g, a)), #name);	\
}
#define OP2(name)								\
static PyObject *graph_##name(Graph *g, PyObject *args)			\
{										\
	int a, b;								\
	if (graph_ok(g) || !PyArg_ParseTuple(args, "ii", &a, &b))		\
		return NULL;							\
	return graph_result(g, LOCKED(g, npu_graph_##name(g->g, a, b)), #name); \
}
#define OP3(name)								\
static PyObject *graph_##name(Graph *g, PyObject *args)			\
{										\
	int a, b, c;								\
	if (graph_ok(g) || !PyArg_ParseTuple(args, "iii", &a, &b, &c))		\
		return NULL;							\
	return graph_result(g, LOCKED(g, npu_graph_##name(g->g, a, b, c)), #name); \
}
/* a, b, out, act=0 */
#define OP3_ACT(name)								\
static PyObject *graph_##name(Graph *g, PyObject *args)			\
{										\
	int a, b, c, act = 0;							\
	if (graph_ok(g) || !PyArg_ParseTuple(args, "iii|i", &a, &b, &c, &act))	\
		return NULL;							\
	return graph_result(g, LOCKED(g, npu_graph_##name(g->g, a, b, c,	\
				      (enum npu_activation)act)), #name);	\
}

OP1(param)
OP2(reshape)
OP2(quantize)
OP2(dequantize)
OP2(relu)
OP2(cast)
OP3(sub)
OP3(div)
OP3(xent)
OP3_ACT(add)
OP3_ACT(mul)

/* fully_connected(in, weights, bias (-1: none), out, act=0) */
static PyObject *graph_fully_connected(Graph *g, PyObject *args)
{
	int in, w, b, out, act = 0;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "iiii|i", &in, &w, &b, &out, &act))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_fully_connected(g->g, in, w, b, out,
						(enum npu_activation)act)), "fully_connected");
}

/*
 * conv2d(in, filter, bias, out, stride=(1, 1), pad=(0, 0, 0, 0),
 *        dilation=(1, 1), depthwise=False, act=0, groups=0)
 */
static PyObject *graph_conv2d(Graph *g, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "input", "filter", "bias", "out", "stride", "pad",
				  "dilation", "depthwise", "act", "groups", NULL };
	struct npu_conv2d_attrs a = { { 1, 1 }, { 1, 1 }, { 0 }, 0, NPU_ACT_NONE, 0 };
	PyObject *stride = NULL, *pad = NULL, *dil = NULL;
	int in, f, b, out, act = 0;

	if (graph_ok(g) ||
	    !PyArg_ParseTupleAndKeywords(args, kw, "iiii|OOOpiI", kwlist, &in, &f, &b, &out,
					 &stride, &pad, &dil, &a.depthwise, &act, &a.groups) ||
	    (stride && npu_py_u32_exact(stride, a.stride, 2, "stride")) ||
	    (pad && npu_py_u32_exact(pad, a.pad, 4, "pad (top, left, bottom, right)")) ||
	    (dil && npu_py_u32_exact(dil, a.dilation, 2, "dilation")))
		return NULL;
	a.act = (enum npu_activation)act;
	return graph_result(g, LOCKED(g, npu_graph_conv2d_ex(g->g, in, f, b, out, &a)), "conv2d");
}

/* pool(in, out, kernel, stride, pad=(0, 0, 0, 0), average=False) */
static PyObject *graph_pool(Graph *g, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "input", "out", "kernel", "stride", "pad", "average", NULL };
	struct npu_pool_attrs a = { { 0 }, { 0 }, { 0 }, 0 };
	PyObject *kernel, *stride, *pad = NULL;
	int in, out;

	if (graph_ok(g) ||
	    !PyArg_ParseTupleAndKeywords(args, kw, "iiOO|Op", kwlist, &in, &out, &kernel,
					 &stride, &pad, &a.average) ||
	    npu_py_u32_exact(kernel, a.kernel, 2, "kernel") || npu_py_u32_exact(stride, a.stride, 2, "stride") ||
	    (pad && npu_py_u32_exact(pad, a.pad, 4, "pad (top, left, bottom, right)")))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_pool_ex(g->g, in, out, &a)), "pool");
}

/* softmax(in, out, beta=1.0) */
static PyObject *graph_softmax(Graph *g, PyObject *args)
{
	float beta = 1.0f;
	int in, out;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "ii|f", &in, &out, &beta))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_softmax(g->g, in, out, beta)), "softmax");
}

/* concat(ins, out, axis) */
static PyObject *graph_concat(Graph *g, PyObject *args)
{
	uint32_t v[NPU_CONCAT_MAX_INPUTS], n, axis;
	int ins[NPU_CONCAT_MAX_INPUTS], out;
	PyObject *seq;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "OiI", &seq, &out, &axis) ||
	    npu_py_u32_seq(seq, v, NPU_CONCAT_MAX_INPUTS, &n, "inputs"))
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		ins[i] = (int)v[i];
	return graph_result(g, LOCKED(g, npu_graph_concat(g->g, ins, n, out, axis)), "concat");
}

/* The input's rank, for the ops whose lists have one entry per dim. */
static int rank_of(Graph *g, int id, uint32_t *rank)
{
	struct npu_tensor_desc d;
	int err;

	pthread_rwlock_rdlock(&g->lock);
	err = npu_graph_tensor_info(g->g, id, &d);
	pthread_rwlock_unlock(&g->lock);
	if (err) {
		npu_py_raise(err, "no such tensor", npu_last_error());
		return -1;
	}
	*rank = d.rank;
	return 0;
}

/* pad(in, out, before, after): one entry per dim of in */
static PyObject *graph_pad(Graph *g, PyObject *args)
{
	uint32_t before[NPU_MAX_RANK], after[NPU_MAX_RANK], rank;
	PyObject *b, *a;
	int in, out;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "iiOO", &in, &out, &b, &a) ||
	    rank_of(g, in, &rank) || npu_py_u32_exact(b, before, rank, "before") ||
	    npu_py_u32_exact(a, after, rank, "after"))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_pad(g->g, in, out, before, after)), "pad");
}

/* transpose(in, out, perm) */
static PyObject *graph_transpose(Graph *g, PyObject *args)
{
	uint32_t perm[NPU_MAX_RANK], rank;
	PyObject *p;
	int in, out;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "iiO", &in, &out, &p) ||
	    rank_of(g, in, &rank) || npu_py_u32_exact(p, perm, rank, "perm"))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_transpose(g->g, in, out, perm)), "transpose");
}

/* layer_norm(in, scale, bias, out, eps=1e-5) */
static PyObject *graph_layer_norm(Graph *g, PyObject *args)
{
	int in, scale, bias, out;
	float eps = 1e-5f;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "iiii|f", &in, &scale, &bias, &out, &eps))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_layer_norm(g->g, in, scale, bias, out, eps)),
			    "layer_norm");
}

/* gelu(in, out, tanh_approx=False) */
static PyObject *graph_gelu(Graph *g, PyObject *args)
{
	int in, out, tanh = 0;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "ii|p", &in, &out, &tanh))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_gelu(g->g, in, out, tanh)), "gelu");
}

/* matmul(a, b, out, trans_b=False, alpha=1.0) */
static PyObject *graph_matmul(Graph *g, PyObject *args)
{
	int a, b, out, trans_b = 0;
	float alpha = 1.0f;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "iii|pf", &a, &b, &out, &trans_b, &alpha))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_matmul(g->g, a, b, out, trans_b, alpha)),
			    "matmul");
}

/* mean(in, out, axis) */
static PyObject *graph_mean(Graph *g, PyObject *args)
{
	uint32_t axis;
	int in, out;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "iiI", &in, &out, &axis))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_mean(g->g, in, out, axis)), "mean");
}

/* backward(loss) */
/* ---- any op of the registry (npu_graph_op) -------------------------------- */

#define OP_MAX		64	/* inputs, outputs, attributes (npu_graph_op's) */

/*
 * Attribute @name of Python value @v into @a; the ints or floats it
 * needs go in *@buf (the caller frees it).
 */
static int attr_of(const char *name, PyObject *v, struct npu_attr *a, void **buf)
{
	PyObject *seq;
	Py_ssize_t n;
	int floats = 0;

	*a = (struct npu_attr){ .name = name };
	*buf = NULL;
	if (PyLong_Check(v)) {
		a->type = NPU_ATTR_INT;
		a->i = PyLong_AsLongLong(v);
		return PyErr_Occurred() ? -1 : 0;
	}
	if (PyFloat_Check(v)) {
		a->type = NPU_ATTR_FLOAT;
		a->f = (float)PyFloat_AsDouble(v);
		return 0;
	}
	if (PyUnicode_Check(v)) {
		a->type = NPU_ATTR_STRING;
		a->s = PyUnicode_AsUTF8(v);	/* v's, which outlives the call */
		return a->s ? 0 : -1;
	}
	seq = PySequence_Fast(v, "an attribute is an int, a float, a str or a sequence of ints "
			      "or floats");
	if (!seq)
		return -1;
	n = PySequence_Fast_GET_SIZE(seq);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *e = PySequence_Fast_GET_ITEM(seq, i);

		if (PyFloat_Check(e))
			floats = 1;
		else if (!PyLong_Check(e)) {
			Py_DECREF(seq);
			PyErr_Format(PyExc_TypeError, "attribute %s: a sequence of ints or floats",
				     name);
			return -1;
		}
	}
	*buf = malloc((size_t)(n ? n : 1) * (floats ? sizeof(float) : sizeof(int64_t)));
	if (!*buf) {
		Py_DECREF(seq);
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *e = PySequence_Fast_GET_ITEM(seq, i);

		if (floats)
			((float *)*buf)[i] = (float)PyFloat_AsDouble(e);
		else
			((int64_t *)*buf)[i] = PyLong_AsLongLong(e);
	}
	Py_DECREF(seq);
	if (PyErr_Occurred())
		return -1;
	a->type = floats ? NPU_ATTR_FLOATS : NPU_ATTR_INTS;
	a->n = (uint32_t)n;
	a->ints = floats ? NULL : *buf;
	a->floats = floats ? *buf : NULL;
	return 0;
}

/* op(op_type, domain, opset, inputs, nout, attrs) -> [ids]: npu_graph_op */
static PyObject *graph_op(Graph *g, PyObject *args)
{
	const char *op, *domain;
	long long opset;
	unsigned int nout;
	PyObject *ins, *attrs, *seq = NULL, *res = NULL;
	struct npu_attr a[OP_MAX];
	void *bufs[OP_MAX] = { NULL };
	int in[OP_MAX], out[OP_MAX], err;
	Py_ssize_t nin, na = 0;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "szLOIO!", &op, &domain, &opset, &ins, &nout,
					     &PyDict_Type, &attrs))
		return NULL;
	seq = PySequence_Fast(ins, "inputs: a sequence of tensor ids");
	if (!seq)
		return NULL;
	nin = PySequence_Fast_GET_SIZE(seq);
	if (nin > OP_MAX || nout > OP_MAX || PyDict_Size(attrs) > OP_MAX) {
		PyErr_Format(PyExc_ValueError, "at most %d inputs, outputs and attributes", OP_MAX);
		goto out;
	}
	for (Py_ssize_t i = 0; i < nin; i++) {
		in[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
		if (PyErr_Occurred())
			goto out;
	}
	{
		PyObject *k, *v;
		Py_ssize_t pos = 0;

		while (PyDict_Next(attrs, &pos, &k, &v)) {
			const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;

			if (!name) {
				PyErr_SetString(PyExc_TypeError, "attribute names are str");
				goto out;
			}
			if (attr_of(name, v, &a[na], &bufs[na])) {
				na++;
				goto out;
			}
			na++;
		}
	}
	err = LOCKED(g, npu_graph_op(g->g, op, domain, opset, in, (uint32_t)nin, out, nout, a,
				     (uint32_t)na));
	if (err) {
		npu_py_raise(err, op, npu_graph_error(g->g));
		goto out;
	}
	res = PyList_New(nout);
	for (unsigned int j = 0; res && j < nout; j++)
		PyList_SET_ITEM(res, j, PyLong_FromLong(out[j]));
out:
	for (Py_ssize_t i = 0; i < na; i++)
		free(bufs[i]);
	Py_XDECREF(seq);
	return res;
}

static PyObject *graph_backward(Graph *g, PyObject *args)
{
	int loss;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "i", &loss))
		return NULL;
	return graph_result(g, LOCKED(g, npu_graph_backward(g->g, loss)), "backward");
}

/* grad(id) -> the id of its gradient */
static PyObject *graph_grad(Graph *g, PyObject *args)
{
	int id, grad;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "i", &id))
		return NULL;
	pthread_rwlock_rdlock(&g->lock);
	grad = npu_graph_grad(g->g, id);
	pthread_rwlock_unlock(&g->lock);
	if (grad < 0)
		return npu_py_raise(grad, "no gradient", "the tensor has no gradient (is the "
				    "backward graph built, and does the loss depend on it?)");
	return PyLong_FromLong(grad);
}

/* optimizer(algo, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0) */
static PyObject *graph_optimizer(Graph *g, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "algo", "lr", "beta1", "beta2", "eps", "weight_decay", NULL };
	struct npu_optim_f32 o = { .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
	int algo;

	if (graph_ok(g) || !PyArg_ParseTupleAndKeywords(args, kw, "if|ffff", kwlist, &algo,
							 &o.lr, &o.beta1, &o.beta2, &o.eps,
							 &o.wd))
		return NULL;
	o.algo = (enum npu_optim_algo)algo;
	return graph_result(g, LOCKED(g, npu_graph_optimizer(g->g, &o)), "optimizer");
}

/* save(path): as an ONNX model */
static PyObject *graph_save(Graph *g, PyObject *args)
{
	PyObject *path;
	int err;

	if (graph_ok(g) || !PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	pthread_rwlock_rdlock(&g->lock);
	err = npu_model_save(g->g, PyBytes_AS_STRING(path));
	pthread_rwlock_unlock(&g->lock);
	Py_DECREF(path);
	if (err)
		return npu_py_raise(err, "cannot save the model", npu_last_error());
	Py_RETURN_NONE;
}

/* Plan.__new__'s work: compile @g into a new Plan. */
static PyObject *plan_make(Graph *g, int backend, int strict, int reuse, const char *name);

/* compile(backend=0, strict=False, reuse_memory=False, backend_name=None) -> Plan */
static PyObject *graph_compile(Graph *g, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "backend", "strict", "reuse_memory", "backend_name", NULL };
	int backend = NPU_BACKEND_AUTO, strict = 0, reuse = 0;
	const char *name = NULL;

	if (graph_ok(g) || !PyArg_ParseTupleAndKeywords(args, kw, "|ippz", kwlist, &backend,
							 &strict, &reuse, &name))
		return NULL;
	return plan_make(g, backend, strict, reuse, name);
}

static PyObject *graph_get_report(Graph *g, void *closure)
{
	(void)closure;
	return graph_ok(g) ? NULL : PyUnicode_FromString(npu_graph_report(g->g));
}

static PyObject *graph_get_error(Graph *g, void *closure)
{
	(void)closure;
	return graph_ok(g) ? NULL : PyUnicode_FromString(npu_graph_error(g->g));
}

#define M(name, flags, doc) { #name, (PyCFunction)(void (*)(void))graph_##name, flags, doc }
static PyMethodDef graph_methods[] = {
	M(tensor, METH_VARARGS | METH_KEYWORDS, "tensor(dtype, shape, data=None, scale=1.0, "
	  "zero_point=0, channel_scales=None, quant_dim=0, layout=0) -> id"),
	M(info, METH_VARARGS, "info(id) -> (dtype, shape, scale, zero_point)"),
	M(declare, METH_VARARGS, "declare(output, ids): the declared inputs (False) or outputs"),
	M(declared, METH_VARARGS, "declared(output) -> ids"),
	M(name, METH_VARARGS, "name(id) -> the tensor's name, or None"),
	M(set_name, METH_VARARGS, "set_name(id, name)"),
	M(fully_connected, METH_VARARGS, "fully_connected(in, weights, bias, out, act=0)"),
	M(conv2d, METH_VARARGS | METH_KEYWORDS, "conv2d(input, filter, bias, out, stride=(1, 1), "
	  "pad=(0, 0, 0, 0), dilation=(1, 1), depthwise=False, act=0, groups=0)"),
	M(pool, METH_VARARGS | METH_KEYWORDS,
	  "pool(input, out, kernel, stride, pad=(0, 0, 0, 0), average=False)"),
	M(op, METH_VARARGS, "op(op_type, domain, opset, inputs, nout, attrs) -> [ids]: any op of "
	  "the registry (npu_graph_op)"),
	M(add, METH_VARARGS, "add(a, b, out, act=0)"),
	M(mul, METH_VARARGS, "mul(a, b, out, act=0)"),
	M(sub, METH_VARARGS, "sub(a, b, out)"),
	M(div, METH_VARARGS, "div(a, b, out)"),
	M(softmax, METH_VARARGS, "softmax(in, out, beta=1.0)"),
	M(concat, METH_VARARGS, "concat(ins, out, axis)"),
	M(pad, METH_VARARGS, "pad(in, out, before, after)"),
	M(transpose, METH_VARARGS, "transpose(in, out, perm)"),
	M(reshape, METH_VARARGS, "reshape(in, out)"),
	M(quantize, METH_VARARGS, "quantize(in, out): fp32 -> int8"),
	M(dequantize, METH_VARARGS, "dequantize(in, out): int8 -> fp32"),
	M(relu, METH_VARARGS, "relu(in, out)"),
	M(cast, METH_VARARGS, "cast(in, out)"),
	M(layer_norm, METH_VARARGS, "layer_norm(in, scale, bias, out, eps=1e-5)"),
	M(gelu, METH_VARARGS, "gelu(in, out, tanh_approx=False)"),
	M(matmul, METH_VARARGS, "matmul(a, b, out, trans_b=False, alpha=1.0)"),
	M(mean, METH_VARARGS, "mean(in, out, axis)"),
	M(xent, METH_VARARGS, "xent(logits, labels, loss): softmax cross-entropy"),
	M(param, METH_VARARGS, "param(id): a constant the optimizer trains"),
	M(backward, METH_VARARGS, "backward(loss): append the backward graph"),
	M(grad, METH_VARARGS, "grad(id) -> the id of its gradient"),
	M(optimizer, METH_VARARGS | METH_KEYWORDS, "optimizer(algo, lr, beta1=0.9, "
	  "beta2=0.999, eps=1e-8, weight_decay=0.0): a step for every parameter"),
	M(save, METH_VARARGS, "save(path): the graph as an ONNX model"),
	M(compile, METH_VARARGS | METH_KEYWORDS, "compile(backend=0, strict=False, "
	  "reuse_memory=False, backend_name=None) -> Plan"),
	{ NULL, NULL, 0, NULL },
};
#undef M

static PyGetSetDef graph_getset[] = {
	{ "report", (getter)graph_get_report, NULL, "the last compile's placement report", NULL },
	{ "error", (getter)graph_get_error, NULL, "what the last failed call said", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject npu_py_graph_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Graph",
	.tp_basicsize = sizeof(Graph),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "Graph(): a libnpu graph, its tensors named by id",
	.tp_new = graph_new,
	.tp_dealloc = (destructor)graph_dealloc,
	.tp_methods = graph_methods,
	.tp_getset = graph_getset,
};

/* ---- Plan --------------------------------------------------------------- */

static PyObject *plan_make(Graph *g, int backend, int strict, int reuse, const char *name)
{
	struct npu_compile_opts co = { .backend = (enum npu_backend)backend, .strict = strict,
				       .backend_name = name, .reuse_memory = reuse };
	Plan *p = PyObject_New(Plan, &npu_py_plan_type);
	int err = 0;

	if (!p)
		return NULL;
	p->graph = g;
	Py_INCREF(g);
	p->plan = NULL;
	p->dev = NULL;
	pthread_mutex_init(&p->lock, NULL);
	/* The NPU only where it may run something: auto, or asked for. */
	if ((backend == NPU_BACKEND_AUTO || backend == NPU_BACKEND_NPU) && !name &&
	    npu_device_count() > 0) {
		err = npu_open(0, &p->dev);
		if (err)
			p->dev = NULL;
	}
	if (backend == NPU_BACKEND_NPU && !p->dev) {
		Py_DECREF(p);
		return npu_py_raise(err ? err : NPU_ENODEV, "cannot run on the NPU",
				    err ? npu_last_error() : "no NPU device");
	}
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_wrlock(&g->lock);
	err = npu_graph_compile_opts(g->g, p->dev, &co, &p->plan);
	pthread_rwlock_unlock(&g->lock);
	Py_END_ALLOW_THREADS
	if (err) {
		Py_DECREF(p);
		return npu_py_raise(err, "cannot compile the graph", npu_graph_error(g->g));
	}
	return (PyObject *)p;
}

static void plan_dealloc(Plan *p)
{
	if (p->plan) {
		Py_BEGIN_ALLOW_THREADS	/* waits for a run in flight */
		pthread_rwlock_wrlock(&p->graph->lock);
		npu_plan_free(p->plan);
		pthread_rwlock_unlock(&p->graph->lock);
		Py_END_ALLOW_THREADS
	}
	npu_close(p->dev);
	Py_XDECREF(p->graph);
	pthread_mutex_destroy(&p->lock);
	PyObject_Free(p);
}

/* Tensor @id's description, and its size in bytes. */
static int plan_tensor(Plan *p, int id, struct npu_tensor_desc *d, size_t *bytes)
{
	int err;

	pthread_rwlock_rdlock(&p->graph->lock);
	err = npu_graph_tensor_info(p->graph->g, id, d);
	pthread_rwlock_unlock(&p->graph->lock);
	if (err) {
		npu_py_raise(err, "no such tensor", npu_last_error());
		return -1;
	}
	*bytes = elements(d) * npu_py_elem_size(d->dtype);
	return 0;
}

/*
 * Run @fn on the plan with the GIL released, under the graph's read lock
 * and the plan's mutex; a libnpu error becomes an exception naming @what.
 */
#define PLAN_CALL(p, what, call) ({						\
	int e_;									\
	Py_BEGIN_ALLOW_THREADS							\
	pthread_rwlock_rdlock(&(p)->graph->lock);				\
	pthread_mutex_lock(&(p)->lock);						\
	e_ = (call);								\
	pthread_mutex_unlock(&(p)->lock);					\
	pthread_rwlock_unlock(&(p)->graph->lock);				\
	Py_END_ALLOW_THREADS							\
	e_ ? (npu_py_raise(e_, what, npu_plan_error((p)->plan)), -1) : 0; })

/* write(id, array): the tensor's values (an input, labels, a constant) */
static PyObject *plan_write(Plan *p, PyObject *args)
{
	struct npu_tensor_desc d;
	PyArrayObject *a;
	PyObject *o;
	size_t bytes;
	int id, err;

	if (!PyArg_ParseTuple(args, "iO", &id, &o) || plan_tensor(p, id, &d, &bytes))
		return NULL;
	a = npu_py_array(o, tensor_npy_type(d.dtype), "write");
	if (!a)
		return NULL;
	if ((size_t)PyArray_NBYTES(a) != bytes) {
		PyErr_Format(PyExc_ValueError, "write: %zd values for a tensor of %zu",
			     (Py_ssize_t)PyArray_SIZE(a), elements(&d));
		Py_DECREF(a);
		return NULL;
	}
	err = PLAN_CALL(p, "write failed", npu_plan_write(p->plan, id, PyArray_DATA(a), bytes));
	Py_DECREF(a);
	if (err)
		return NULL;
	Py_RETURN_NONE;
}

/* A new array shaped as tensor @id. */
static PyArrayObject *tensor_array(const struct npu_tensor_desc *d)
{
	npy_intp dims[NPU_MAX_RANK];

	for (uint32_t i = 0; i < d->rank; i++)
		dims[i] = d->dims[i];
	return (PyArrayObject *)PyArray_SimpleNew((int)d->rank, dims, tensor_npy_type(d->dtype));
}

/* read(id) -> array */
static PyObject *plan_read(Plan *p, PyObject *args)
{
	struct npu_tensor_desc d;
	PyArrayObject *a;
	size_t bytes;
	int id;

	if (!PyArg_ParseTuple(args, "i", &id) || plan_tensor(p, id, &d, &bytes))
		return NULL;
	a = tensor_array(&d);
	if (a && PLAN_CALL(p, "read failed", npu_plan_read(p->plan, id, PyArray_DATA(a), bytes)))
		Py_CLEAR(a);
	return (PyObject *)a;
}

/* exec(train=False): a forward, or a training, run on what the tensors hold */
static PyObject *plan_exec(Plan *p, PyObject *args)
{
	int train = 0;

	if (!PyArg_ParseTuple(args, "|p", &train) ||
	    PLAN_CALL(p, "run failed", npu_plan_exec(p->plan, train ? NPU_EXEC_TRAIN :
						       NPU_EXEC_FORWARD)))
		return NULL;
	Py_RETURN_NONE;
}

/* run(in, array, out) -> array: one input, one output */
static PyObject *plan_run(Plan *p, PyObject *args)
{
	struct npu_tensor_desc din, dout;
	size_t bin, bout;
	PyArrayObject *a, *y;
	PyObject *o;
	int in, out;

	if (!PyArg_ParseTuple(args, "iOi", &in, &o, &out) || plan_tensor(p, in, &din, &bin) ||
	    plan_tensor(p, out, &dout, &bout))
		return NULL;
	a = npu_py_array(o, tensor_npy_type(din.dtype), "run");
	if (!a)
		return NULL;
	if ((size_t)PyArray_NBYTES(a) != bin) {
		PyErr_Format(PyExc_ValueError, "run: %zd values for an input of %zu",
			     (Py_ssize_t)PyArray_SIZE(a), elements(&din));
		Py_DECREF(a);
		return NULL;
	}
	y = tensor_array(&dout);
	if (y && PLAN_CALL(p, "run failed", npu_plan_run(p->plan, in, PyArray_DATA(a), out,
							   PyArray_DATA(y))))
		Py_CLEAR(y);
	Py_DECREF(a);
	return (PyObject *)y;
}

static PyObject *plan_set_lr(Plan *p, PyObject *args)
{
	float lr;

	if (!PyArg_ParseTuple(args, "f", &lr) ||
	    PLAN_CALL(p, "cannot set the learning rate", npu_plan_set_lr(p->plan, lr)))
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *plan_observe(Plan *p, PyObject *args)
{
	(void)args;
	if (PLAN_CALL(p, "cannot observe the ranges", npu_plan_observe(p->plan)))
		return NULL;
	Py_RETURN_NONE;
}

/* quantize(in, out) -> (Graph, q_in, q_out): the int8 graph of a calibrated plan */
static PyObject *plan_quantize(Plan *p, PyObject *args)
{
	npu_graph *q = NULL;
	int in, out, qin, qout, err;
	Graph *g;

	if (!PyArg_ParseTuple(args, "ii", &in, &out))
		return NULL;
	/* The new graph's wrapper first: nothing to undo after the call. */
	g = (Graph *)npu_py_graph_type.tp_alloc(&npu_py_graph_type, 0);
	if (!g)
		return NULL;
	pthread_rwlock_init(&g->lock, NULL);
	Py_BEGIN_ALLOW_THREADS
	pthread_rwlock_wrlock(&p->graph->lock);
	pthread_mutex_lock(&p->lock);
	err = npu_plan_quantize(p->plan, in, out, &q, &qin, &qout);
	pthread_mutex_unlock(&p->lock);
	pthread_rwlock_unlock(&p->graph->lock);
	Py_END_ALLOW_THREADS
	if (err) {
		Py_DECREF(g);
		return npu_py_raise(err, "cannot quantize", npu_plan_error(p->plan));
	}
	g->g = q;
	return Py_BuildValue("(Nii)", (PyObject *)g, qin, qout);
}

static PyObject *plan_stats(Plan *p, PyObject *args)
{
	struct npu_plan_stats s;

	(void)args;
	if (PLAN_CALL(p, "no statistics", npu_plan_stats(p->plan, &s)))
		return NULL;
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}",
			     "runs", s.runs, "partitions", s.partitions,
			     "copies_in", s.copies_in, "bytes_in", s.bytes_in,
			     "copies_out", s.copies_out, "bytes_out", s.bytes_out,
			     "cycles", s.cycles, "storage_bytes", s.storage_bytes,
			     "tensor_bytes", s.tensor_bytes, "overlapped", s.overlapped);
}

/* backends() -> [name]: where each op runs, in the order the ops were added */
static PyObject *plan_backends(Plan *p, PyObject *args)
{
	PyObject *list = PyList_New(0);

	(void)args;
	pthread_rwlock_rdlock(&p->graph->lock);
	for (int i = 0; list; i++) {
		const char *b = npu_plan_node_backend(p->plan, i);
		PyObject *s;

		if (!b)
			break;
		s = PyUnicode_FromString(b);
		if (!s || PyList_Append(list, s))
			Py_CLEAR(list);
		Py_XDECREF(s);
	}
	pthread_rwlock_unlock(&p->graph->lock);
	return list;
}

static PyObject *plan_get_report(Plan *p, void *closure)
{
	(void)closure;
	return PyUnicode_FromString(npu_plan_report(p->plan));
}

static PyObject *plan_get_cycles(Plan *p, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(npu_plan_cycles(p->plan));
}

static PyObject *plan_get_graph(Plan *p, void *closure)
{
	(void)closure;
	Py_INCREF(p->graph);
	return (PyObject *)p->graph;
}

#define M(name, flags, doc) { #name, (PyCFunction)(void (*)(void))plan_##name, flags, doc }
static PyMethodDef plan_methods[] = {
	M(write, METH_VARARGS, "write(id, array): a tensor's values"),
	M(read, METH_VARARGS, "read(id) -> array: a tensor's values"),
	M(exec, METH_VARARGS, "exec(train=False): run on what the tensors hold"),
	M(run, METH_VARARGS, "run(in, array, out) -> array"),
	M(set_lr, METH_VARARGS, "set_lr(lr): the optimizer's learning rate from now on"),
	M(observe, METH_NOARGS, "observe(): fold the last forward run's ranges into calibration"),
	M(quantize, METH_VARARGS, "quantize(in, out) -> (Graph, q_in, q_out)"),
	M(stats, METH_NOARGS, "stats() -> dict: what the runs cost in crossings"),
	M(backends, METH_NOARGS, "backends() -> [name]: where each op runs"),
	{ NULL, NULL, 0, NULL },
};
#undef M

static PyGetSetDef plan_getset[] = {
	{ "report", (getter)plan_get_report, NULL, "the placement report", NULL },
	{ "cycles", (getter)plan_get_cycles, NULL, "modeled NPU cycles of the last run", NULL },
	{ "graph", (getter)plan_get_graph, NULL, "the Graph it was compiled from", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject npu_py_plan_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Plan",
	.tp_basicsize = sizeof(Plan),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "a compiled graph (Graph.compile): runs, training steps, quantization",
	.tp_dealloc = (destructor)plan_dealloc,
	.tp_methods = plan_methods,
	.tp_getset = plan_getset,
};
