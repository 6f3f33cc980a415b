// SPDX-License-Identifier: MIT
/*
 * _npu.c - the C half of the npu Python package: libnpu's public API
 * (npu.h) over numpy arrays, nothing computed here. The onnxruntime-shaped
 * session (npu/__init__.py) is written over it.
 *
 *   _npu.version()            libnpu's version, "major.minor.patch"
 *   _npu.device_count()       NPUs (/dev/accel nodes of the npu driver)
 *   _npu.device_info(index)   a dict of what npu_device_info says
 *   _npu.load_array(path)     an ONNX TensorProto file: (name, array)
 *   _npu.opencl_device()      the OpenCL device libnpu would use, or None
 *   _npu.Model(model, backend=0, strict=False)
 *       an ONNX model (a path, or its bytes) loaded and compiled;
 *       .inputs, .outputs: [(name, dtype, shape)] in the model's order;
 *       .run([arrays]) -> [arrays]; .report; .placement; .cycles
 *   _npu.Error                what libnpu refused: args (code, message)
 *
 * A model runs one call at a time (a plan is used by one thread at a
 * time): each run takes the model's lock with the GIL released, so that
 * other Python threads, and runs of other models, go on meanwhile.
 */
#define NPU_PY_MAIN	/* numpy's C API table is defined here */
#include "npu_py.h"

#include <pthread.h>
#include <string.h>

#include "npu_backend.h"
#include "npu_cmd.h"
#include "npu_ocl.h"

static PyObject *npu_error;

PyObject *npu_py_raise(int code, const char *what, const char *why)
{
	PyObject *args = Py_BuildValue("(iN)", code,
				       PyUnicode_FromFormat("%s: %s", what, why && *why ? why :
							    npu_strerror(code)));

	if (args) {
		PyErr_SetObject(npu_error, args);
		Py_DECREF(args);
	}
	return NULL;
}

/* enum npu_dtype <-> numpy's type numbers; -1 where numpy has none. */
static const struct {
	enum npu_dtype npu;
	int npy;
	size_t size;
} dtypes[] = {
	{ NPU_DT_FLOAT32, NPY_FLOAT32, 4 }, { NPU_DT_INT8, NPY_INT8, 1 },
	{ NPU_DT_UINT8, NPY_UINT8, 1 },	    { NPU_DT_INT32, NPY_INT32, 4 },
	{ NPU_DT_INT64, NPY_INT64, 8 },	    { NPU_DT_BOOL, NPY_BOOL, 1 },
	{ NPU_DT_BFLOAT16, -1, 2 },	    { NPU_DT_FLOAT16, NPY_FLOAT16, 2 },
};

int npu_py_npy_type(enum npu_dtype d)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].npu == d)
			return dtypes[i].npy;
	return -1;
}

size_t npu_py_elem_size(enum npu_dtype d)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].npu == d)
			return dtypes[i].size;
	return 0;
}

int npu_py_u32_seq(PyObject *o, uint32_t *v, uint32_t max, uint32_t *n, const char *what)
{
	PyObject *fast = PySequence_Fast(o, what);
	Py_ssize_t len;

	if (!fast)
		return -1;
	len = PySequence_Fast_GET_SIZE(fast);
	if (len > (Py_ssize_t)max) {
		PyErr_Format(PyExc_ValueError, "%s: at most %u entries, %zd given", what, max, len);
		Py_DECREF(fast);
		return -1;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		unsigned long long x = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));

		if (PyErr_Occurred() || x > UINT32_MAX) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "%s: entry %zd is not an integer in "
				     "[0, 2^32)", what, i);
			Py_DECREF(fast);
			return -1;
		}
		v[i] = (uint32_t)x;
	}
	*n = (uint32_t)len;
	Py_DECREF(fast);
	return 0;
}

int npu_py_u32_exact(PyObject *o, uint32_t *v, uint32_t want, const char *what)
{
	uint32_t n;

	if (npu_py_u32_seq(o, v, want, &n, what))
		return -1;
	if (n != want) {
		PyErr_Format(PyExc_ValueError, "%s: %u entries wanted, %u given", what, want, n);
		return -1;
	}
	return 0;
}

PyArrayObject *npu_py_array(PyObject *o, int type, const char *what)
{
	PyArrayObject *a;

	if (!PyArray_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: a numpy array is wanted, not %s", what,
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	a = (PyArrayObject *)o;
	if (PyArray_TYPE(a) != type) {
		PyArray_Descr *want = PyArray_DescrFromType(type);

		PyErr_Format(PyExc_TypeError, "%s: dtype %S given, %S wanted", what,
			     (PyObject *)PyArray_DESCR(a), (PyObject *)want);
		Py_XDECREF(want);
		return NULL;
	}
	/* In place when it already is what libnpu reads; else one copy. */
	return (PyArrayObject *)PyArray_FromAny(o, PyArray_DescrFromType(type), 0, 0,
						NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
}

static PyObject *py_version(PyObject *self, PyObject *args)
{
	uint32_t v = npu_version();

	(void)self;
	(void)args;
	return PyUnicode_FromFormat("%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

static PyObject *py_device_count(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	return PyLong_FromLong(npu_device_count());
}

static int npu_cmd_supported(const struct npu_device_info *info, unsigned int op)
{
	return op / 64 < NPU_CMD_CAPS_WORDS && (info->cmd_caps[op / 64] >> (op % 64) & 1);
}

/* The command opcodes (npu_cmd.h) the firmware runs. */
static PyObject *commands(const struct npu_device_info *info)
{
	PyObject *list = PyList_New(0);

	for (unsigned int op = 0; list && op < 64 * NPU_CMD_CAPS_WORDS; op++) {
		PyObject *v;

		if (!npu_cmd_supported(info, op))
			continue;
		v = PyLong_FromUnsignedLong(op);
		if (!v || PyList_Append(list, v))
			Py_CLEAR(list);
		Py_XDECREF(v);
	}
	return list;
}

static PyObject *py_device_info(PyObject *self, PyObject *args)
{
	struct npu_device_info info;
	npu_device *dev;
	int index, err;

	(void)self;
	if (!PyArg_ParseTuple(args, "i", &index))
		return NULL;
	if (index < 0 || index >= npu_device_count()) {
		PyErr_Format(PyExc_IndexError, "no NPU number %d (%d found)", index,
			     npu_device_count());
		return NULL;
	}
	err = npu_open(index, &dev);
	if (err)
		return npu_py_raise(err, "cannot open the NPU", npu_last_error());
	err = npu_device_info(dev, &info);
	npu_close(dev);
	if (err)
		return npu_py_raise(err, "cannot read the NPU's properties", npu_last_error());
	return Py_BuildValue("{s:i,s:s,s:(II),s:(III),s:(II),s:I,s:I,s:I,s:K,s:I,s:N,s:s}",
			     "index", index, "node", info.node,
			     "hw_version", info.hw_version >> 16, info.hw_version & 0xffff,
			     "fw_version", info.fw_version >> 16, (info.fw_version >> 8) & 0xff,
			     info.fw_version & 0xff,
			     "fw_api", info.fw_api >> 16, info.fw_api & 0xffff,
			     "num_rings", info.num_rings, "sram_size", info.sram_size,
			     "max_cmd_size", info.max_cmd_size,
			     "max_buffer_size", (unsigned long long)info.max_buffer_size,
			     "fw_caps", info.fw_caps,
			     "commands", commands(&info),
			     /* the edge profile's firmware has no training (fp32) commands */
			     "profile", npu_cmd_supported(&info, NPU_CMD_GEMM_F32) ? "full" : "edge");
}

static PyObject *py_opencl_device(PyObject *self, PyObject *args)
{
	PyObject *name = NULL;
	npu_ocl *ocl;
	int err;

	(void)self;
	(void)args;
	Py_BEGIN_ALLOW_THREADS
	err = npu_ocl_open(&ocl, NULL, 0);
	Py_END_ALLOW_THREADS
	if (err)
		Py_RETURN_NONE;
	name = PyUnicode_FromString(npu_ocl_device_name(ocl));
	npu_ocl_close(ocl);
	return name;
}

static PyObject *py_load_array(PyObject *self, PyObject *args)
{
	npy_intp dims[NPU_MAX_RANK];
	struct npu_array a;
	PyObject *path, *arr;
	int err, type;

	(void)self;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	err = npu_array_load(PyBytes_AS_STRING(path), &a);
	Py_DECREF(path);
	if (err)
		return npu_py_raise(err, "cannot read the tensor", npu_last_error());
	type = npu_py_npy_type(a.dtype);
	if (type < 0) {
		npu_array_free(&a);
		PyErr_SetString(PyExc_TypeError, "a bfloat16 tensor has no numpy equivalent");
		return NULL;
	}
	for (uint32_t d = 0; d < a.rank; d++)
		dims[d] = a.dims[d];
	arr = PyArray_SimpleNew((int)a.rank, dims, type);
	if (arr && (size_t)PyArray_NBYTES((PyArrayObject *)arr) != a.bytes) {
		Py_CLEAR(arr);
		PyErr_SetString(PyExc_ValueError, "the tensor's size is wrong");
	}
	if (arr) {
		memcpy(PyArray_DATA((PyArrayObject *)arr), a.data, a.bytes);
		arr = Py_BuildValue("(sN)", a.name ? a.name : "", arr);
	}
	npu_array_free(&a);
	return arr;
}

/* One declared input or output: what a caller must give, or gets. */
struct io {
	PyObject *name;		/* str */
	enum npu_dtype dtype;
	int rank;
	npy_intp dims[NPU_MAX_RANK];
	size_t bytes;
};

typedef struct {
	PyObject_HEAD
	npu_graph *g;
	npu_plan *plan;
	npu_device *dev;
	pthread_mutex_t lock;	/* one run at a time */
	int nin, nout;
	struct io *in, *out;
} Model;

static void io_free(struct io *v, int n)
{
	for (int i = 0; v && i < n; i++)
		Py_XDECREF(v[i].name);
	PyMem_Free(v);
}

static void model_dealloc(Model *m)
{
	npu_plan_free(m->plan);
	npu_graph_free(m->g);
	npu_close(m->dev);
	io_free(m->in, m->nin);
	io_free(m->out, m->nout);
	pthread_mutex_destroy(&m->lock);
	Py_TYPE(m)->tp_free((PyObject *)m);
}

static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	Model *m = (Model *)type->tp_alloc(type, 0);

	(void)args;
	(void)kw;
	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return (PyObject *)m;
}

/* The graph's declared inputs (@output 0) or outputs (1), read once. */
static int read_io(Model *m, int output, struct io **vp, int *np)
{
	int n = npu_graph_io_count(m->g, output);
	struct io *v;

	if (n < 0) {
		npu_py_raise(n, "cannot read the model's inputs and outputs", npu_last_error());
		return -1;
	}
	v = PyMem_Calloc(n ? (size_t)n : 1, sizeof(*v));
	if (!v) {
		PyErr_NoMemory();
		return -1;
	}
	*vp = v;
	*np = n;
	for (int i = 0; i < n; i++) {
		struct npu_array a;
		int err = npu_graph_io_array(m->g, output, (uint32_t)i, &a);

		if (err) {
			npu_py_raise(err, "cannot read the model's inputs and outputs",
				  npu_last_error());
			return -1;
		}
		v[i].name = PyUnicode_FromString(a.name ? a.name : "");
		v[i].dtype = a.dtype;
		v[i].rank = (int)a.rank;
		v[i].bytes = a.bytes;
		for (uint32_t d = 0; d < a.rank; d++)
			v[i].dims[d] = a.dims[d];
		npu_array_free(&a);
		if (!v[i].name)
			return -1;
	}
	return 0;
}

/*
 * @seq, [(name, array)], as npu_model_opts' fixed values: @a[i] points
 * into @held[i], the arrays as libnpu reads them (references the caller
 * drops). 0, or -1 with an exception.
 */
static int fixed_values(PyObject *seq, struct npu_array *a, PyArrayObject **held, uint32_t max,
			uint32_t *n)
{
	PyObject *fast = PySequence_Fast(seq, "fixed: a sequence of (name, array) wanted");
	Py_ssize_t len;

	if (!fast)
		return -1;
	len = PySequence_Fast_GET_SIZE(fast);
	if (len > (Py_ssize_t)max) {
		PyErr_Format(PyExc_ValueError, "fixed: at most %u values", max);
		Py_DECREF(fast);
		return -1;
	}
	for (*n = 0; *n < (uint32_t)len; (*n)++) {
		PyObject *name, *o;
		PyArrayObject *arr;
		size_t k;

		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, *n), "UO", &name, &o)) {
			Py_DECREF(fast);
			return -1;
		}
		for (k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++)
			if (PyArray_Check(o) && dtypes[k].npy == PyArray_TYPE((PyArrayObject *)o))
				break;
		if (k == sizeof(dtypes) / sizeof(dtypes[0]) || PyArray_NDIM((PyArrayObject *)o) >
		    NPU_MAX_RANK) {
			PyErr_Format(PyExc_TypeError, "fixed value '%U': a numpy array of a dtype "
				     "ONNX models take, of rank %d at most", name, NPU_MAX_RANK);
			Py_DECREF(fast);
			return -1;
		}
		arr = npu_py_array(o, dtypes[k].npy, "fixed value");
		if (!arr) {
			Py_DECREF(fast);
			return -1;
		}
		held[*n] = arr;
		a[*n] = (struct npu_array){ .name = (char *)PyUnicode_AsUTF8(name),
					    .dtype = dtypes[k].npu, .rank = (uint32_t)PyArray_NDIM(arr),
					    .data = PyArray_DATA(arr), .bytes = (size_t)PyArray_NBYTES(arr) };
		for (int d = 0; d < PyArray_NDIM(arr); d++)
			a[*n].dims[d] = (uint32_t)PyArray_DIM(arr, d);
	}
	Py_DECREF(fast);
	return 0;
}

#define MAX_FIXED 64

static int model_init(Model *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "model", "backend", "strict", "fixed", NULL };
	struct npu_compile_opts co = { .reuse_memory = 1 };
	PyArrayObject *held[MAX_FIXED] = { NULL };
	struct npu_array fixed[MAX_FIXED];
	struct npu_model_opts mo = { .fixed = fixed };
	PyObject *model, *fixed_seq = NULL;
	int backend = NPU_BACKEND_AUTO, strict = 0, err;

	if (m->g) {
		PyErr_SetString(PyExc_RuntimeError, "a Model is initialised once");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|ipO", kwlist, &model, &backend, &strict,
					 &fixed_seq))
		return -1;
	if (fixed_seq && fixed_seq != Py_None &&
	    fixed_values(fixed_seq, fixed, held, MAX_FIXED, &mo.nfixed)) {
		err = -1;
		goto out;
	}
	if (PyBytes_Check(model)) {
		err = npu_model_load_mem(PyBytes_AS_STRING(model),
					 (size_t)PyBytes_GET_SIZE(model), &mo, &m->g);
	} else {
		PyObject *path;

		if (!PyUnicode_FSConverter(model, &path)) {
			err = -1;
			goto out;
		}
		err = npu_model_load(PyBytes_AS_STRING(path), &mo, &m->g);
		Py_DECREF(path);
	}
	if (err)
		npu_py_raise(err, "cannot load the model", npu_last_error());
out:
	for (int i = 0; i < MAX_FIXED; i++)
		Py_XDECREF(held[i]);
	if (err)
		return -1;
	/* The NPU only where it may run something: auto, or asked for. */
	if ((backend == NPU_BACKEND_AUTO || backend == NPU_BACKEND_NPU) && npu_device_count() > 0) {
		err = npu_open(0, &m->dev);
		if (err && backend == NPU_BACKEND_NPU) {
			npu_py_raise(err, "cannot open the NPU", npu_last_error());
			return -1;
		}
		if (err)
			m->dev = NULL;
	} else if (backend == NPU_BACKEND_NPU) {
		npu_py_raise(NPU_ENODEV, "cannot run on the NPU", "no NPU device");
		return -1;
	}
	co.backend = (enum npu_backend)backend;
	co.strict = strict;
	Py_BEGIN_ALLOW_THREADS
	err = npu_graph_compile_opts(m->g, m->dev, &co, &m->plan);
	Py_END_ALLOW_THREADS
	if (err) {
		npu_py_raise(err, "cannot compile the model", npu_graph_error(m->g));
		return -1;
	}
	if (read_io(m, 0, &m->in, &m->nin) || read_io(m, 1, &m->out, &m->nout))
		return -1;
	return 0;
}

static PyObject *io_list(const struct io *v, int n)
{
	PyObject *list = PyList_New(n);

	for (int i = 0; list && i < n; i++) {
		PyObject *shape = PyTuple_New(v[i].rank), *t;

		for (int d = 0; shape && d < v[i].rank; d++)
			PyTuple_SET_ITEM(shape, d, PyLong_FromSsize_t(v[i].dims[d]));
		t = shape ? Py_BuildValue("(OiN)", v[i].name, (int)v[i].dtype, shape) : NULL;
		if (!t) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, i, t);
	}
	return list;
}

static int model_ready(Model *m)
{
	if (m->plan)
		return 0;
	PyErr_SetString(PyExc_RuntimeError, "the Model was not initialised");
	return -1;
}

static PyObject *model_inputs(Model *m, void *closure)
{
	(void)closure;
	return model_ready(m) ? NULL : io_list(m->in, m->nin);
}

static PyObject *model_outputs(Model *m, void *closure)
{
	(void)closure;
	return model_ready(m) ? NULL : io_list(m->out, m->nout);
}

static PyObject *model_report(Model *m, void *closure)
{
	(void)closure;
	return model_ready(m) ? NULL : PyUnicode_FromString(npu_plan_report(m->plan));
}

static PyObject *model_cycles(Model *m, void *closure)
{
	(void)closure;
	return model_ready(m) ? NULL :
		PyLong_FromUnsignedLongLong(npu_plan_cycles(m->plan));
}

/* Where each op runs: [{"op": index, "type": ONNX-ish op name, "backend": name}]. */
static PyObject *model_placement(Model *m, void *closure)
{
	PyObject *list;
	int n;

	(void)closure;
	if (model_ready(m))
		return NULL;
	n = npu_graph_node_count(m->g);
	list = PyList_New(0);
	for (int i = 0; list && i < n; i++) {
		struct npu_node_info info;
		const char *b = npu_plan_node_backend(m->plan, i);
		PyObject *d;

		if (!b || npu_graph_node_info(m->g, i, &info))
			continue;
		d = Py_BuildValue("{s:i,s:s,s:s,s:s}", "op", i, "type", info.op ? info.op : "",
				  "name", info.label ? info.label : "", "backend", b);
		if (!d || PyList_Append(list, d)) {
			Py_XDECREF(d);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(d);
	}
	return list;
}

/* @o as input @i wants it: a C-contiguous array of its dtype and shape. */
static PyArrayObject *input_array(const struct io *v, PyObject *o)
{
	int type = npu_py_npy_type(v->dtype);
	PyArrayObject *a;
	char what[160];

	PyOS_snprintf(what, sizeof(what), "input '%s'", PyUnicode_AsUTF8(v->name));
	if (type < 0) {
		PyErr_Format(PyExc_TypeError, "%s: its dtype (bfloat16) has no numpy equivalent",
			     what);
		return NULL;
	}
	a = npu_py_array(o, type, what);
	if (a && PyArray_NDIM(a) != v->rank) {
		PyErr_Format(PyExc_ValueError, "%s: rank %d given, %d wanted", what,
			     PyArray_NDIM(a), v->rank);
		Py_CLEAR(a);
	}
	for (int d = 0; a && d < v->rank; d++)
		if (PyArray_DIM(a, d) != v->dims[d]) {
			PyErr_Format(PyExc_ValueError, "%s: dimension %d is %zd, %zd wanted", what,
				     d, (Py_ssize_t)PyArray_DIM(a, d), (Py_ssize_t)v->dims[d]);
			Py_CLEAR(a);
		}
	return a;
}

static PyObject *model_run(Model *m, PyObject *args)
{
	PyObject *seq, *fast, *result = NULL;
	PyArrayObject **in = NULL, **out = NULL;
	const void **inp = NULL;
	void **outp = NULL;
	int err, i;

	if (model_ready(m) || !PyArg_ParseTuple(args, "O", &seq))
		return NULL;
	fast = PySequence_Fast(seq, "run() takes a sequence of arrays, one per input");
	if (!fast)
		return NULL;
	if (PySequence_Fast_GET_SIZE(fast) != m->nin) {
		PyErr_Format(PyExc_ValueError, "%zd arrays given, the model has %d inputs",
			     PySequence_Fast_GET_SIZE(fast), m->nin);
		goto out;
	}
	in = PyMem_Calloc((size_t)m->nin + 1, sizeof(*in));
	out = PyMem_Calloc((size_t)m->nout + 1, sizeof(*out));
	inp = PyMem_Calloc((size_t)m->nin + 1, sizeof(*inp));
	outp = PyMem_Calloc((size_t)m->nout + 1, sizeof(*outp));
	if (!in || !out || !inp || !outp) {
		PyErr_NoMemory();
		goto out;
	}
	for (i = 0; i < m->nin; i++) {
		in[i] = input_array(&m->in[i], PySequence_Fast_GET_ITEM(fast, i));
		if (!in[i])
			goto out;
		inp[i] = PyArray_DATA(in[i]);
	}
	for (i = 0; i < m->nout; i++) {
		int type = npu_py_npy_type(m->out[i].dtype);

		if (type < 0) {
			PyErr_Format(PyExc_TypeError, "output '%U': its dtype (bfloat16) has no "
				     "numpy equivalent", m->out[i].name);
			goto out;
		}
		out[i] = (PyArrayObject *)PyArray_SimpleNew(m->out[i].rank, m->out[i].dims, type);
		if (!out[i])
			goto out;
		outp[i] = PyArray_DATA(out[i]);
	}
	/* The inputs' arrays are held (in[]): their data stays while we run. */
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&m->lock);
	err = npu_plan_execute(m->plan, inp, outp);
	pthread_mutex_unlock(&m->lock);
	Py_END_ALLOW_THREADS
	if (err) {
		npu_py_raise(err, "run failed", npu_plan_error(m->plan));
		goto out;
	}
	result = PyList_New(m->nout);
	for (i = 0; result && i < m->nout; i++) {
		PyList_SET_ITEM(result, i, (PyObject *)out[i]);
		out[i] = NULL;
	}
out:
	for (i = 0; in && i < m->nin; i++)
		Py_XDECREF(in[i]);
	for (i = 0; out && i < m->nout; i++)
		Py_XDECREF(out[i]);
	PyMem_Free(in);
	PyMem_Free(out);
	PyMem_Free(inp);
	PyMem_Free(outp);
	Py_DECREF(fast);
	return result;
}

static PyGetSetDef model_getset[] = {
	{ "inputs", (getter)model_inputs, NULL, "[(name, dtype, shape)] of the inputs", NULL },
	{ "outputs", (getter)model_outputs, NULL, "[(name, dtype, shape)] of the outputs", NULL },
	{ "report", (getter)model_report, NULL, "the placement report", NULL },
	{ "placement", (getter)model_placement, NULL, "where each op runs", NULL },
	{ "cycles", (getter)model_cycles, NULL, "modeled NPU cycles of the last run", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef model_methods[] = {
	{ "run", (PyCFunction)model_run, METH_VARARGS,
	  "run(arrays) -> arrays: the inputs in the model's order, its outputs" },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject model_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "npu._npu.Model",
	.tp_basicsize = sizeof(Model),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Model(model, backend=0, strict=False): an ONNX model compiled by libnpu",
	.tp_new = model_new,
	.tp_init = (initproc)model_init,
	.tp_dealloc = (destructor)model_dealloc,
	.tp_methods = model_methods,
	.tp_getset = model_getset,
};

/* The registry: [(name, domain or None, first opset, (attribute names))]. */
static PyObject *py_op_info(PyObject *self, PyObject *args)
{
	struct npu_op_info info;
	PyObject *list = PyList_New(0);

	(void)self;
	(void)args;
	for (unsigned int i = 0; list && !npu_op_info(i, &info); i++) {
		PyObject *names = PyUnicode_FromString(info.attrs), *attrs, *t;

		attrs = names ? PyUnicode_Split(names, NULL, -1) : NULL;
		Py_XDECREF(names);
		t = attrs ? PySequence_Tuple(attrs) : NULL;
		Py_XDECREF(attrs);
		t = t ? Py_BuildValue("(sziN)", info.name, info.domain, info.min_opset, t) : NULL;
		if (!t || PyList_Append(list, t)) {
			Py_XDECREF(t);
			Py_DECREF(list);
			return NULL;
		}
		Py_DECREF(t);
	}
	return list;
}

static PyMethodDef module_methods[] = {
	{ "version", py_version, METH_NOARGS, "libnpu's version" },
	{ "op_info", py_op_info, METH_NOARGS,
	  "the ops of the registry: [(name, domain, first opset, attributes)]" },
	{ "device_count", py_device_count, METH_NOARGS, "how many NPUs there are" },
	{ "device_info", py_device_info, METH_VARARGS, "device_info(index) -> dict" },
	{ "opencl_device", py_opencl_device, METH_NOARGS,
	  "the OpenCL device libnpu would use (its name), or None" },
	{ "load_array", py_load_array, METH_VARARGS,
	  "load_array(path) -> (name, array): an ONNX TensorProto file" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "npu._npu", "libnpu's public API for the npu package", -1,
	module_methods, NULL, NULL, NULL, NULL,
};

/* libnpu's enums, as npu.h names them less the NPU_ prefix: one definition. */
static int add_constants(PyObject *m)
{
#define C(name) { #name, NPU_##name }
	static const struct {
		const char *name;
		int value;
	} k[] = {
		C(DT_INT8), C(DT_INT32), C(DT_FLOAT32), C(DT_UINT8), C(DT_INT64), C(DT_BOOL),
		C(DT_BFLOAT16), C(DT_FLOAT16), C(LAYOUT_NHWC), C(LAYOUT_NCHW), C(ACT_NONE), C(ACT_RELU),
		C(ACT_RELU6), C(BACKEND_AUTO), C(BACKEND_NPU), C(BACKEND_OPENCL), C(BACKEND_CPU),
		C(BACKEND_ONEDNN), C(OPTIM_SGD), C(OPTIM_ADAM), C(OPTIM_ADAMW),
		C(REQUANT_TFLITE), C(REQUANT_ONNX), C(REQUANT_ORT),
	};
#undef C

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (PyModule_AddIntConstant(m, k[i].name, k[i].value))
			return -1;
	return 0;
}

PyMODINIT_FUNC PyInit__npu(void)
{
	PyObject *m;

	import_array();
	if (PyType_Ready(&model_type) < 0 || PyType_Ready(&npu_py_graph_type) < 0 ||
	    PyType_Ready(&npu_py_plan_type) < 0)
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	npu_error = PyErr_NewExceptionWithDoc("npu._npu.Error",
					      "what libnpu refused: args (code, message)",
					      PyExc_RuntimeError, NULL);
	if (!npu_error || PyModule_AddObjectRef(m, "Error", npu_error) ||
	    PyModule_AddObjectRef(m, "Model", (PyObject *)&model_type) ||
	    PyModule_AddObjectRef(m, "Graph", (PyObject *)&npu_py_graph_type) ||
	    PyModule_AddObjectRef(m, "Plan", (PyObject *)&npu_py_plan_type) ||
	    PyModule_AddFunctions(m, npu_py_op_methods) || add_constants(m)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
