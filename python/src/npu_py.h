/* SPDX-License-Identifier: MIT */
/*
 * npu_py.h - what the files of the C extension share: the exception,
 * the dtype table, and each file's types and functions for the module.
 */
#ifndef NPU_PY_H
#define NPU_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifndef NPY_NO_DEPRECATED_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#endif
/* numpy's C API table lives in _npu.c; the other files import it from there. */
#define PY_ARRAY_UNIQUE_SYMBOL npu_py_numpy_api
#ifndef NPU_PY_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "npu.h"

/* Raise _npu.Error(code, "what: why"); returns NULL. */
PyObject *npu_py_raise(int code, const char *what, const char *why);
/* enum npu_dtype -> numpy's type number, or -1 (bfloat16 has none). */
int npu_py_npy_type(enum npu_dtype d);
/* The bytes of one element of @d, or 0. */
size_t npu_py_elem_size(enum npu_dtype d);

/*
 * @o as a C-contiguous, aligned array of numpy type @type (copied only
 * when it is not one already), @what naming it in errors; a new reference.
 */
PyArrayObject *npu_py_array(PyObject *o, int type, const char *what);

/*
 * A sequence of at most @max non-negative integers that fit 32 bits into
 * @v (*@n of them); _exact: exactly @want. 0, or -1 with a ValueError
 * naming @what.
 */
int npu_py_u32_seq(PyObject *o, uint32_t *v, uint32_t max, uint32_t *n, const char *what);
int npu_py_u32_exact(PyObject *o, uint32_t *v, uint32_t want, const char *what);

/* graph.c: _npu.Graph and _npu.Plan. */
extern PyTypeObject npu_py_graph_type, npu_py_plan_type;

/* ops.c: the one-call int8 ops (npu_run_*), and their parameters. */
extern PyMethodDef npu_py_op_methods[];

#endif /* NPU_PY_H */
