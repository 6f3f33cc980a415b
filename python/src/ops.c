// SPDX-License-Identifier: MIT
/*
 * ops.c - libnpu's one-call int8 ops (npu_run_* of npu.h) on numpy arrays:
 * the shapes come from the arrays, the rest from keywords named as the C
 * structs' fields. Each op runs where libnpu places it (the NPU when its
 * firmware has it, else OpenCL, else the CPU reference; NPU_BACKEND and
 * NPU_STRICT as for any graph), on one device the module opens at its
 * first op and shares, one op at a time.
 */
#include "npu_py.h"	/* Python.h first: it sets the feature macros */

#include <pthread.h>
#include <string.h>

#include "npu_quant.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static npu_device *dev;
static int dev_tried;

/* Run @call on the shared device (NULL without an NPU), the GIL released. */
#define ON_DEVICE(call) ({							\
	int e_;									\
	Py_BEGIN_ALLOW_THREADS							\
	pthread_mutex_lock(&dev_lock);						\
	if (!dev_tried && npu_device_count() > 0 && npu_open(0, &dev))		\
		dev = NULL;							\
	dev_tried = 1;								\
	e_ = (call);								\
	pthread_mutex_unlock(&dev_lock);					\
	Py_END_ALLOW_THREADS							\
	e_; })

static PyObject *op_result(int err, const char *op, PyArrayObject *out)
{
	if (err) {
		Py_XDECREF(out);
		return npu_py_raise(err, op, npu_last_error());
	}
	return (PyObject *)out;
}

/* A C-contiguous array of @type with @ndim dims (0: any up to @max_ndim). */
static PyArrayObject *arg(PyObject *o, int type, int ndim, int max_ndim, const char *what)
{
	PyArrayObject *a = npu_py_array(o, type, what);

	if (a && ((ndim && PyArray_NDIM(a) != ndim) || PyArray_NDIM(a) > max_ndim)) {
		if (ndim)
			PyErr_Format(PyExc_ValueError, "%s: %d dims wanted, %d given", what, ndim,
				     PyArray_NDIM(a));
		else
			PyErr_Format(PyExc_ValueError, "%s: at most %d dims, %d given", what,
				     max_ndim, PyArray_NDIM(a));
		Py_CLEAR(a);
	}
	return a;
}

static PyArrayObject *new_i8(int ndim, const npy_intp *dims)
{
	return (PyArrayObject *)PyArray_ZEROS(ndim, (npy_intp *)dims, NPY_INT8, 0);
}

/* The requantization's int32 multipliers and shifts: one, or one per channel. */
static int requant_args(PyObject *mo, PyObject *so, npy_intp channels, PyArrayObject **m,
			PyArrayObject **s, int *per_tensor)
{
	*m = arg(mo, NPY_INT32, 1, 1, "multiplier");
	*s = *m ? arg(so, NPY_INT32, 1, 1, "shift") : NULL;
	if (!*s)
		return -1;
	*per_tensor = PyArray_SIZE(*m) == 1 && channels != 1;
	if (PyArray_SIZE(*m) != PyArray_SIZE(*s) ||
	    (PyArray_SIZE(*m) != 1 && PyArray_SIZE(*m) != channels)) {
		PyErr_Format(PyExc_ValueError, "multiplier and shift: 1 or %zd entries each",
			     (Py_ssize_t)channels);
		return -1;
	}
	return 0;
}

/* bias: None, or int32 with one entry per output channel. */
static int bias_arg(PyObject *o, npy_intp channels, PyArrayObject **b)
{
	*b = NULL;
	if (o == Py_None)
		return 0;
	*b = arg(o, NPY_INT32, 1, 1, "bias");
	if (*b && PyArray_SIZE(*b) != channels) {
		PyErr_Format(PyExc_ValueError, "bias: %zd entries wanted", (Py_ssize_t)channels);
		Py_CLEAR(*b);
	}
	return *b ? 0 : -1;
}

static const void *data_or_null(PyArrayObject *a)
{
	return a ? PyArray_DATA(a) : NULL;
}

/*
 * gemm_i8(a [m][k], b [n][k], bias, multiplier, shift, a_zero=0, out_zero=0,
 *         act_min=-128, act_max=127, requant=0) -> int8 [m][n]
 */
static PyObject *py_gemm_i8(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "a", "b", "bias", "multiplier", "shift", "a_zero", "out_zero",
				  "act_min", "act_max", "requant", NULL };
	struct npu_gemm_i8 p = { .act_min = -128, .act_max = 127 };
	PyObject *ao, *bo, *biaso, *mo, *so, *res = NULL;
	PyArrayObject *a = NULL, *b = NULL, *bias = NULL, *m = NULL, *s = NULL, *out;
	npy_intp dims[2];
	int err;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|iiiiI", kwlist, &ao, &bo, &biaso, &mo,
					 &so, &p.a_zero, &p.out_zero, &p.act_min, &p.act_max,
					 &p.requant))
		return NULL;
	a = arg(ao, NPY_INT8, 2, 2, "a");
	b = a ? arg(bo, NPY_INT8, 2, 2, "b") : NULL;
	if (!b)
		goto out;
	if (PyArray_DIM(a, 1) != PyArray_DIM(b, 1)) {
		PyErr_SetString(PyExc_ValueError, "a [m][k] and b [n][k]: their k differ");
		goto out;
	}
	p.m = (uint32_t)PyArray_DIM(a, 0);
	p.k = (uint32_t)PyArray_DIM(a, 1);
	p.n = (uint32_t)PyArray_DIM(b, 0);
	if (bias_arg(biaso, p.n, &bias) || requant_args(mo, so, p.n, &m, &s, &p.per_tensor))
		goto out;
	dims[0] = p.m;
	dims[1] = p.n;
	out = new_i8(2, dims);
	if (!out)
		goto out;
	err = ON_DEVICE(npu_run_gemm_i8(dev, &p, PyArray_DATA(a), PyArray_DATA(b),
					data_or_null(bias), PyArray_DATA(m), PyArray_DATA(s),
					PyArray_DATA(out)));
	res = op_result(err, "gemm_i8", out);
out:
	Py_XDECREF(a);
	Py_XDECREF(b);
	Py_XDECREF(bias);
	Py_XDECREF(m);
	Py_XDECREF(s);
	return res;
}

/* (height, width), when given. */
static int pair(PyObject *o, uint32_t *v, const char *what)
{
	return o ? npu_py_u32_exact(o, v, 2, what) : 0;
}

/* An output size from the input's, TFLite's way: symmetric padding. */
static int out_size(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t pad,
		    uint32_t *out)
{
	int64_t span = (int64_t)dil * (k - 1) + 1, n = (int64_t)in + 2 * pad - span;

	if (!k || !stride || n < 0) {
		PyErr_SetString(PyExc_ValueError, "the window does not fit the input");
		return -1;
	}
	*out = (uint32_t)(n / stride + 1);
	return 0;
}

/*
 * conv2d_i8(input [n][h][w][c], filter [o][kh][kw][c/groups] (depthwise:
 *           [1][kh][kw][o]), bias, multiplier, shift, stride=(1, 1),
 *           pad=(0, 0), dilation=(1, 1), in_zero=0, out_zero=0,
 *           act_min=-128, act_max=127, depthwise=False, groups=0,
 *           requant=0) -> int8 [n][oh][ow][o]
 */
static PyObject *py_conv2d_i8(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "input", "filter", "bias", "multiplier", "shift", "stride",
				  "pad", "dilation", "in_zero", "out_zero", "act_min", "act_max",
				  "depthwise", "groups", "requant", NULL };
	struct npu_conv2d_i8 p = { .act_min = -128, .act_max = 127 };
	uint32_t stride[2] = { 1, 1 }, pad[2] = { 0, 0 }, dil[2] = { 1, 1 };
	PyObject *io, *fo, *biaso, *mo, *so, *st = NULL, *pd = NULL, *dl = NULL, *res = NULL;
	PyArrayObject *in = NULL, *f = NULL, *bias = NULL, *m = NULL, *s = NULL, *out;
	npy_intp dims[4];
	int err;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|OOOiiiipII", kwlist, &io, &fo, &biaso,
					 &mo, &so, &st, &pd, &dl, &p.in_zero, &p.out_zero,
					 &p.act_min, &p.act_max, &p.depthwise, &p.groups,
					 &p.requant) ||
	    pair(st, stride, "stride") || pair(pd, pad, "pad") || pair(dl, dil, "dilation"))
		return NULL;
	in = arg(io, NPY_INT8, 4, 4, "input");
	f = in ? arg(fo, NPY_INT8, 4, 4, "filter") : NULL;
	if (!f)
		goto out;
	p.batch = (uint32_t)PyArray_DIM(in, 0);
	p.in_h = (uint32_t)PyArray_DIM(in, 1);
	p.in_w = (uint32_t)PyArray_DIM(in, 2);
	p.in_c = (uint32_t)PyArray_DIM(in, 3);
	p.out_c = (uint32_t)PyArray_DIM(f, p.depthwise ? 3 : 0);
	p.k_h = (uint32_t)PyArray_DIM(f, 1);
	p.k_w = (uint32_t)PyArray_DIM(f, 2);
	p.stride_h = stride[0];
	p.stride_w = stride[1];
	p.dil_h = dil[0];
	p.dil_w = dil[1];
	p.pad_top = pad[0];
	p.pad_left = pad[1];
	if (out_size(p.in_h, p.k_h, p.stride_h, p.dil_h, p.pad_top, &p.out_h) ||
	    out_size(p.in_w, p.k_w, p.stride_w, p.dil_w, p.pad_left, &p.out_w) ||
	    bias_arg(biaso, p.out_c, &bias) || requant_args(mo, so, p.out_c, &m, &s, &p.per_tensor))
		goto out;
	dims[0] = p.batch;
	dims[1] = p.out_h;
	dims[2] = p.out_w;
	dims[3] = p.out_c;
	out = new_i8(4, dims);
	if (!out)
		goto out;
	err = ON_DEVICE(npu_run_conv2d_i8(dev, &p, PyArray_DATA(in), PyArray_DATA(f),
					  data_or_null(bias), PyArray_DATA(m), PyArray_DATA(s),
					  PyArray_DATA(out)));
	res = op_result(err, "conv2d_i8", out);
out:
	Py_XDECREF(in);
	Py_XDECREF(f);
	Py_XDECREF(bias);
	Py_XDECREF(m);
	Py_XDECREF(s);
	return res;
}

/*
 * pool_i8(input [n][h][w][c], kernel, stride, pad=(0, 0), average=False,
 *         act_min=-128, act_max=127) -> int8 [n][oh][ow][c]
 */
static PyObject *py_pool_i8(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "input", "kernel", "stride", "pad", "average", "act_min",
				  "act_max", NULL };
	struct npu_pool_i8 p = { .act_min = -128, .act_max = 127 };
	uint32_t k[2], stride[2], pad[2] = { 0, 0 };
	PyObject *io, *ko, *so, *po = NULL;
	PyArrayObject *in, *out;
	npy_intp dims[4];
	int err;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|Opii", kwlist, &io, &ko, &so, &po,
					 &p.average, &p.act_min, &p.act_max) ||
	    pair(ko, k, "kernel") || pair(so, stride, "stride") || pair(po, pad, "pad"))
		return NULL;
	in = arg(io, NPY_INT8, 4, 4, "input");
	if (!in)
		return NULL;
	p.batch = (uint32_t)PyArray_DIM(in, 0);
	p.in_h = (uint32_t)PyArray_DIM(in, 1);
	p.in_w = (uint32_t)PyArray_DIM(in, 2);
	p.c = (uint32_t)PyArray_DIM(in, 3);
	p.k_h = k[0];
	p.k_w = k[1];
	p.stride_h = stride[0];
	p.stride_w = stride[1];
	p.pad_top = pad[0];
	p.pad_left = pad[1];
	if (out_size(p.in_h, p.k_h, p.stride_h, 1, p.pad_top, &p.out_h) ||
	    out_size(p.in_w, p.k_w, p.stride_w, 1, p.pad_left, &p.out_w)) {
		Py_DECREF(in);
		return NULL;
	}
	dims[0] = p.batch;
	dims[1] = p.out_h;
	dims[2] = p.out_w;
	dims[3] = p.c;
	out = new_i8(4, dims);
	err = out ? ON_DEVICE(npu_run_pool_i8(dev, &p, PyArray_DATA(in), PyArray_DATA(out))) : 0;
	Py_DECREF(in);
	return out ? op_result(err, "pool_i8", out) : NULL;
}

/* softmax_i8(input, input_scale, beta=1.0) -> int8 (scale 1/256, zero point -128) */
static PyObject *py_softmax_i8(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "input", "input_scale", "beta", NULL };
	struct npu_softmax_i8 p;
	double scale, beta = 1.0;
	PyArrayObject *in, *out;
	PyObject *io;
	int err;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|d", kwlist, &io, &scale, &beta))
		return NULL;
	in = arg(io, NPY_INT8, 0, NPU_MAX_RANK, "input");
	if (!in)
		return NULL;
	err = npu_softmax_params(scale, beta, &p);
	if (err || PyArray_NDIM(in) < 1) {
		Py_DECREF(in);
		if (!err)
			PyErr_SetString(PyExc_ValueError, "input: at least one dim wanted");
		return err ? npu_py_raise(err, "softmax_i8", npu_last_error()) : NULL;
	}
	p.depth = (uint32_t)PyArray_DIM(in, PyArray_NDIM(in) - 1);
	p.rows = p.depth ? (uint32_t)(PyArray_SIZE(in) / p.depth) : 0;
	out = new_i8(PyArray_NDIM(in), PyArray_DIMS(in));
	err = out ? ON_DEVICE(npu_run_softmax_i8(dev, &p, PyArray_DATA(in), PyArray_DATA(out))) :
		    0;
	Py_DECREF(in);
	return out ? op_result(err, "softmax_i8", out) : NULL;
}

/* A shape of rank 1-4 into @v (the numpy broadcast's right-aligned dims). */
static void dims4(PyArrayObject *a, uint32_t rank, uint32_t *v)
{
	int nd = PyArray_NDIM(a);

	for (uint32_t i = 0; i < rank; i++) {
		int d = nd - (int)rank + (int)i;

		v[i] = d >= 0 ? (uint32_t)PyArray_DIM(a, d) : 1;
	}
}

/*
 * eltwise_i8(a, b, mul=False, a_zero=0, b_zero=0, out_zero=0, act_min=-128,
 *            act_max=127, a_mult=0, a_shift=0, b_mult=0, b_shift=0,
 *            out_mult=0, out_shift=0, left_shift=0, requant=0) -> int8,
 * numpy's broadcast of a and b (rank 4 at most).
 */
static PyObject *py_eltwise_i8(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "a", "b", "mul", "a_zero", "b_zero", "out_zero", "act_min",
				  "act_max", "a_mult", "a_shift", "b_mult", "b_shift",
				  "out_mult", "out_shift", "left_shift", "requant", NULL };
	struct npu_eltwise_i8 p = { .act_min = -128, .act_max = 127 };
	PyArrayObject *a = NULL, *b = NULL, *out = NULL;
	PyObject *ao, *bo, *res = NULL;
	npy_intp dims[4];
	int nd, err;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|piiiiiiiiiiiII", kwlist, &ao, &bo, &p.mul,
					 &p.a_zero, &p.b_zero, &p.out_zero, &p.act_min,
					 &p.act_max, &p.a_mult, &p.a_shift, &p.b_mult, &p.b_shift,
					 &p.out_mult, &p.out_shift, &p.left_shift, &p.requant))
		return NULL;
	a = arg(ao, NPY_INT8, 0, 4, "a");
	b = a ? arg(bo, NPY_INT8, 0, 4, "b") : NULL;
	if (!b)
		goto out;
	nd = PyArray_NDIM(a) > PyArray_NDIM(b) ? PyArray_NDIM(a) : PyArray_NDIM(b);
	if (nd == 0)
		nd = 1;
	p.rank = (uint32_t)nd;
	dims4(a, p.rank, p.a_dims);
	dims4(b, p.rank, p.b_dims);
	p.count = 1;
	for (int i = 0; i < nd; i++) {
		uint32_t x = p.a_dims[i], y = p.b_dims[i];

		if (x != y && x != 1 && y != 1) {
			PyErr_Format(PyExc_ValueError, "a and b do not broadcast (dim %d: %u and %u)",
				     i, x, y);
			goto out;
		}
		p.out_dims[i] = x == 1 ? y : x;
		dims[i] = p.out_dims[i];
		p.count *= p.out_dims[i];
	}
	/* Same shapes need no broadcasting, and then the NPU can run it. */
	if (!memcmp(p.a_dims, p.b_dims, sizeof(p.a_dims)))
		p.rank = 0;
	out = new_i8(nd, dims);
	if (!out)
		goto out;
	err = ON_DEVICE(npu_run_eltwise_i8(dev, &p, PyArray_DATA(a), PyArray_DATA(b),
					   PyArray_DATA(out)));
	res = op_result(err, "eltwise_i8", out);
out:
	Py_XDECREF(a);
	Py_XDECREF(b);
	return res;
}

/* quantize(x float32, scale, zero_point) -> int8; dequantize(q int8, ...) -> float32 */
static PyObject *quantize(PyObject *args, PyObject *kw, int dequantize)
{
	static char *kwlist[] = { "x", "scale", "zero_point", NULL };
	struct npu_quantize p = { .dequantize = dequantize };
	PyArrayObject *in, *out;
	PyObject *io;
	int err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|i", kwlist, &io, &p.scale, &p.zero_point))
		return NULL;
	in = arg(io, dequantize ? NPY_INT8 : NPY_FLOAT32, 0, NPY_MAXDIMS, "x");
	if (!in)
		return NULL;
	p.count = (uint32_t)PyArray_SIZE(in);
	if ((npy_intp)p.count != PyArray_SIZE(in)) {
		Py_DECREF(in);
		PyErr_SetString(PyExc_ValueError, "x: too many values");
		return NULL;
	}
	out = (PyArrayObject *)PyArray_ZEROS(PyArray_NDIM(in), PyArray_DIMS(in),
					     dequantize ? NPY_FLOAT32 : NPY_INT8, 0);
	err = out ? ON_DEVICE(npu_run_quantize(dev, &p, PyArray_DATA(in), PyArray_DATA(out))) : 0;
	Py_DECREF(in);
	return out ? op_result(err, dequantize ? "dequantize" : "quantize", out) : NULL;
}

static PyObject *py_quantize(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	return quantize(args, kw, 0);
}

static PyObject *py_dequantize(PyObject *self, PyObject *args, PyObject *kw)
{
	(void)self;
	return quantize(args, kw, 1);
}

/* An array whose elements are 1, 2 or 4 bytes, as it is (any dtype of those). */
static PyArrayObject *any_array(PyObject *o, const char *what)
{
	PyArrayObject *a;

	if (!PyArray_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: a numpy array is wanted", what);
		return NULL;
	}
	a = (PyArrayObject *)PyArray_FromAny(o, NULL, 1, 4, NPY_ARRAY_C_CONTIGUOUS |
					     NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSUREARRAY, NULL);
	if (a && PyArray_ITEMSIZE(a) != 1 && PyArray_ITEMSIZE(a) != 2 && PyArray_ITEMSIZE(a) != 4) {
		PyErr_Format(PyExc_TypeError, "%s: elements of 1, 2 or 4 bytes wanted", what);
		Py_CLEAR(a);
	}
	return a;
}

/* transpose(x, perm) -> x's dims permuted: out dim i is x's dim perm[i] */
static PyObject *py_transpose(PyObject *self, PyObject *args)
{
	struct npu_transpose p = { 0 };
	PyArrayObject *in, *out;
	npy_intp dims[4];
	PyObject *io, *po;
	int err;

	(void)self;
	if (!PyArg_ParseTuple(args, "OO", &io, &po))
		return NULL;
	in = any_array(io, "x");
	if (!in)
		return NULL;
	p.rank = (uint32_t)PyArray_NDIM(in);
	p.elem_size = (uint32_t)PyArray_ITEMSIZE(in);
	if (npu_py_u32_exact(po, p.perm, p.rank, "perm")) {
		Py_DECREF(in);
		return NULL;
	}
	for (uint32_t i = 0; i < p.rank; i++) {
		if (p.perm[i] >= p.rank) {
			PyErr_SetString(PyExc_ValueError, "perm: entries are dims of x");
			Py_DECREF(in);
			return NULL;
		}
		p.dims[i] = (uint32_t)PyArray_DIM(in, i);
	}
	for (uint32_t i = 0; i < p.rank; i++)
		dims[i] = PyArray_DIM(in, p.perm[i]);
	Py_INCREF(PyArray_DESCR(in));
	out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(in), (int)p.rank,
						    dims, NULL, NULL, 0, NULL);
	err = out ? ON_DEVICE(npu_run_transpose(dev, &p, PyArray_DATA(in), PyArray_DATA(out))) : 0;
	Py_DECREF(in);
	return out ? op_result(err, "transpose", out) : NULL;
}

/* pad_i8(x, before, after, value=0) -> x padded with value */
static PyObject *py_pad_i8(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "x", "before", "after", "value", NULL };
	struct npu_pad p = { 0 };
	PyObject *io, *bo, *ao;
	PyArrayObject *in, *out;
	npy_intp dims[4];
	int err;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|i", kwlist, &io, &bo, &ao, &p.value))
		return NULL;
	in = arg(io, NPY_INT8, 0, 4, "x");
	if (!in)
		return NULL;
	p.rank = (uint32_t)PyArray_NDIM(in);
	if (npu_py_u32_exact(bo, p.before, p.rank, "before") ||
	    npu_py_u32_exact(ao, p.after, p.rank, "after")) {
		Py_DECREF(in);
		return NULL;
	}
	for (uint32_t d = 0; d < p.rank; d++) {
		if (p.before[d] > 65535 || p.after[d] > 65535) {
			PyErr_SetString(PyExc_ValueError, "before, after: entries in [0, 65535]");
			Py_DECREF(in);
			return NULL;
		}
		p.dims[d] = (uint32_t)PyArray_DIM(in, d);
		dims[d] = (npy_intp)p.before[d] + p.dims[d] + p.after[d];
	}
	out = new_i8((int)p.rank, dims);
	err = out ? ON_DEVICE(npu_run_pad(dev, &p, PyArray_DATA(in), PyArray_DATA(out))) : 0;
	Py_DECREF(in);
	return out ? op_result(err, "pad_i8", out) : NULL;
}

/* concat(arrays, axis) -> them joined along axis (one dtype, 1, 2 or 4 bytes) */
static PyObject *py_concat(PyObject *self, PyObject *args)
{
	PyArrayObject *in[NPU_CONCAT_MAX_INPUTS] = { NULL }, *out = NULL;
	uint32_t axis_dims[NPU_CONCAT_MAX_INPUTS];
	const void *data[NPU_CONCAT_MAX_INPUTS];
	struct npu_concat p = { 0 };
	PyObject *seq, *fast, *res = NULL;
	npy_intp dims[4];
	unsigned int axis;
	Py_ssize_t n;
	int err;

	(void)self;
	if (!PyArg_ParseTuple(args, "OI", &seq, &axis))
		return NULL;
	fast = PySequence_Fast(seq, "arrays: a sequence wanted");
	if (!fast)
		return NULL;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n < 1 || n > NPU_CONCAT_MAX_INPUTS) {
		PyErr_Format(PyExc_ValueError, "arrays: 1 to %d wanted", NPU_CONCAT_MAX_INPUTS);
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		in[i] = any_array(PySequence_Fast_GET_ITEM(fast, i), "arrays");
		if (!in[i])
			goto out;
		if (!PyArray_EquivTypes(PyArray_DESCR(in[i]), PyArray_DESCR(in[0])) ||
		    PyArray_NDIM(in[i]) != PyArray_NDIM(in[0]) ||
		    axis >= (unsigned int)PyArray_NDIM(in[0])) {
			PyErr_SetString(PyExc_ValueError, "arrays: one dtype and rank, and an "
					"axis among their dims, wanted");
			goto out;
		}
		for (int d = 0; d < PyArray_NDIM(in[0]); d++)
			if (d != (int)axis && PyArray_DIM(in[i], d) != PyArray_DIM(in[0], d)) {
				PyErr_Format(PyExc_ValueError, "arrays: dim %d differs", d);
				goto out;
			}
		axis_dims[i] = (uint32_t)PyArray_DIM(in[i], axis);
		data[i] = PyArray_DATA(in[i]);
	}
	p.rank = (uint32_t)PyArray_NDIM(in[0]);
	p.elem_size = (uint32_t)PyArray_ITEMSIZE(in[0]);
	p.axis = axis;
	p.count = (uint32_t)n;
	p.axis_dims = axis_dims;
	for (uint32_t d = 0; d < p.rank; d++) {
		p.dims[d] = (uint32_t)PyArray_DIM(in[0], d);
		dims[d] = p.dims[d];
	}
	dims[axis] = 0;
	for (Py_ssize_t i = 0; i < n; i++)
		dims[axis] += axis_dims[i];
	Py_INCREF(PyArray_DESCR(in[0]));
	out = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(in[0]),
						    (int)p.rank, dims, NULL, NULL, 0, NULL);
	if (!out)
		goto out;
	err = ON_DEVICE(npu_run_concat(dev, &p, data, PyArray_DATA(out)));
	res = op_result(err, "concat", out);
out:
	for (Py_ssize_t i = 0; i < NPU_CONCAT_MAX_INPUTS; i++)
		Py_XDECREF(in[i]);
	Py_DECREF(fast);
	return res;
}

/* quantize_multiplier(real) -> (multiplier, shift): TFLite's Q31 form of a scale */
static PyObject *py_quantize_multiplier(PyObject *self, PyObject *args)
{
	int32_t mult;
	double real;
	int shift;

	(void)self;
	if (!PyArg_ParseTuple(args, "d", &real))
		return NULL;
	if (npu_quantize_multiplier(real, &mult, &shift)) {
		PyErr_Format(PyExc_ValueError, "no Q31 multiplier for %g", real);
		return NULL;
	}
	return Py_BuildValue("(ii)", mult, shift);
}

#define M(name, flags, doc) { #name, (PyCFunction)(void (*)(void))py_##name, flags, doc }
PyMethodDef npu_py_op_methods[] = {
	M(gemm_i8, METH_VARARGS | METH_KEYWORDS, "gemm_i8(a, b, bias, multiplier, shift, "
	  "a_zero=0, out_zero=0, act_min=-128, act_max=127, requant=0) -> int8 [m][n]"),
	M(conv2d_i8, METH_VARARGS | METH_KEYWORDS, "conv2d_i8(input, filter, bias, multiplier, "
	  "shift, stride=(1, 1), pad=(0, 0), dilation=(1, 1), in_zero=0, out_zero=0, "
	  "act_min=-128, act_max=127, depthwise=False, groups=0, requant=0) -> int8 NHWC"),
	M(pool_i8, METH_VARARGS | METH_KEYWORDS, "pool_i8(input, kernel, stride, pad=(0, 0), "
	  "average=False, act_min=-128, act_max=127) -> int8 NHWC"),
	M(softmax_i8, METH_VARARGS | METH_KEYWORDS,
	  "softmax_i8(input, input_scale, beta=1.0) -> int8 (scale 1/256, zero point -128)"),
	M(eltwise_i8, METH_VARARGS | METH_KEYWORDS, "eltwise_i8(a, b, mul=False, a_zero=0, "
	  "b_zero=0, out_zero=0, act_min=-128, act_max=127, a_mult=0, a_shift=0, b_mult=0, "
	  "b_shift=0, out_mult=0, out_shift=0, left_shift=0, requant=0) -> int8"),
	M(quantize, METH_VARARGS | METH_KEYWORDS, "quantize(x, scale, zero_point=0) -> int8"),
	M(dequantize, METH_VARARGS | METH_KEYWORDS,
	  "dequantize(q, scale, zero_point=0) -> float32"),
	M(transpose, METH_VARARGS, "transpose(x, perm) -> x with its dims permuted"),
	M(pad_i8, METH_VARARGS | METH_KEYWORDS, "pad_i8(x, before, after, value=0) -> int8"),
	M(concat, METH_VARARGS, "concat(arrays, axis) -> one array"),
	M(quantize_multiplier, METH_VARARGS,
	  "quantize_multiplier(real) -> (multiplier, shift), TFLite's Q31 form"),
	{ NULL, NULL, 0, NULL },
};
#undef M
