// SPDX-License-Identifier: MIT
/* onnx-tool.c - what npu-run and npu-onnx-test share (onnx-tool.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx-tool.h"

int tool_backend(const char *name, enum npu_backend *b)
{
	static const struct { const char *name; enum npu_backend b; } names[] = {
		{ "auto", NPU_BACKEND_AUTO }, { "npu", NPU_BACKEND_NPU },
		{ "opencl", NPU_BACKEND_OPENCL }, { "onednn", NPU_BACKEND_ONEDNN },
		{ "cpu", NPU_BACKEND_CPU },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].name)) {
			*b = names[i].b;
			return 0;
		}
	return -1;
}

int tool_load(struct tool_model *m, const char *path, const struct npu_array *fixed,
	      unsigned int nfixed, enum npu_backend b, int strict, char *why, size_t len)
{
	struct npu_model_opts mo = { .fixed = fixed, .nfixed = nfixed };
	/*
	 * The tools read a model's declared outputs only, so its
	 * intermediates share storage where their lifetimes allow.
	 */
	struct npu_compile_opts co = { .backend = b, .strict = strict, .reuse_memory = 1 };
	int err;

	memset(m, 0, sizeof(*m));
	err = npu_model_load(path, &mo, &m->g);
	if (err) {
		snprintf(why, len, "%s", npu_last_error());
		return err;
	}
	/* The NPU only where it may run something: auto, or asked for. */
	if ((b == NPU_BACKEND_AUTO || b == NPU_BACKEND_NPU) && npu_device_count() > 0) {
		err = npu_open(0, &m->dev);
		if (err && b == NPU_BACKEND_NPU) {
			snprintf(why, len, "cannot open the NPU: %s", npu_last_error());
			tool_unload(m);
			return err;
		}
		if (err)
			m->dev = NULL;
	} else if (b == NPU_BACKEND_NPU) {
		snprintf(why, len, "no NPU device");
		tool_unload(m);
		return NPU_ENODEV;
	}
	err = npu_graph_compile_opts(m->g, m->dev, &co, &m->plan);
	if (err) {
		snprintf(why, len, "compile: %s", npu_graph_error(m->g));
		tool_unload(m);
		return err;
	}
	return 0;
}

void tool_unload(struct tool_model *m)
{
	npu_plan_free(m->plan);
	npu_graph_free(m->g);
	npu_close(m->dev);
	memset(m, 0, sizeof(*m));
}

int tool_bind(struct tool_model *m, const struct npu_array *in, unsigned int nin,
	      const void ***boundp, char *why, size_t len)
{
	int n = npu_graph_io_count(m->g, 0);
	const void **bound = calloc((size_t)n + 1, sizeof(*bound));

	*boundp = bound;
	if (!bound) {
		snprintf(why, len, "out of memory");
		return NPU_ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct npu_array want;
		const struct npu_array *a = NULL;
		int err = npu_graph_io_array(m->g, 0, (uint32_t)i, &want);

		if (err) {
			snprintf(why, len, "%s", npu_last_error());
			return err;
		}
		/* by name; else the array at the input's position in the model */
		for (unsigned int k = 0; k < nin && !a; k++)
			if (in[k].name && *in[k].name && want.name && !strcmp(in[k].name, want.name))
				a = &in[k];
		for (unsigned int k = 0, pos = 0; k < nin && !a; k++) {
			if (in[k].name && *in[k].name)
				continue;
			if (pos++ == (unsigned int)i)
				a = &in[k];
		}
		if (!a) {
			snprintf(why, len, "no value for input '%s'", want.name ? want.name : "");
			npu_array_free(&want);
			return NPU_EINVAL;
		}
		if (a->dtype != want.dtype || a->bytes != want.bytes) {
			snprintf(why, len, "input '%s': %zu bytes of dtype %d given, %zu of %d wanted",
				 want.name ? want.name : "", a->bytes, a->dtype, want.bytes,
				 want.dtype);
			npu_array_free(&want);
			return NPU_EINVAL;
		}
		bound[i] = a->data;
		npu_array_free(&want);
	}
	return 0;
}

int tool_outputs(struct tool_model *m, struct npu_array **out, void ***ptrs, unsigned int *nout)
{
	int n = npu_graph_io_count(m->g, 1);

	*nout = 0;
	*out = calloc(n > 0 ? (size_t)n : 1, sizeof(**out));
	*ptrs = calloc(n > 0 ? (size_t)n : 1, sizeof(**ptrs));
	if (!*out || !*ptrs)
		return NPU_ENOMEM;
	*nout = (unsigned int)n;
	for (int i = 0; i < n; i++) {
		int err = npu_graph_io_array(m->g, 1, (uint32_t)i, &(*out)[i]);

		if (err)
			return err;
		(*ptrs)[i] = (*out)[i].data;
	}
	return 0;
}

static double value(const struct npu_array *a, size_t i)
{
	switch (a->dtype) {
	case NPU_DT_FLOAT32: return ((const float *)a->data)[i];
	case NPU_DT_INT8: return ((const int8_t *)a->data)[i];
	case NPU_DT_UINT8: case NPU_DT_BOOL: return ((const uint8_t *)a->data)[i];
	case NPU_DT_INT32: return ((const int32_t *)a->data)[i];
	case NPU_DT_INT64: return (double)((const int64_t *)a->data)[i];
	case NPU_DT_BFLOAT16: {
		uint32_t u = (uint32_t)((const uint16_t *)a->data)[i] << 16;
		float f;

		memcpy(&f, &u, sizeof(f));
		return f;
	}
	case NPU_DT_FLOAT16: {	/* IEEE binary16 */
		uint16_t h = ((const uint16_t *)a->data)[i];
		int e = (h >> 10) & 0x1f, m = h & 0x3ff;
		double v = e == 0x1f ? (m ? NAN : INFINITY) :
			   e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);

		return h & 0x8000 ? -v : v;
	}
	}
	return 0;
}

static size_t elem_size(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DT_INT8: case NPU_DT_UINT8: case NPU_DT_BOOL: return 1;
	case NPU_DT_BFLOAT16: case NPU_DT_FLOAT16: return 2;
	case NPU_DT_INT32: case NPU_DT_FLOAT32: return 4;
	case NPU_DT_INT64: return 8;
	}
	return 1;
}

int tool_compare(const struct npu_array *got, const struct npu_array *want, char *why,
		 size_t len)
{
	size_t esz = elem_size(got->dtype), n;

	if (got->dtype != want->dtype) {
		snprintf(why, len, "dtype %d, expected %d", got->dtype, want->dtype);
		return 0;
	}
	if (got->rank != want->rank || memcmp(got->dims, want->dims, sizeof(uint32_t) * got->rank) ||
	    got->bytes != want->bytes) {
		snprintf(why, len, "shape of rank %u (%zu bytes), expected rank %u (%zu bytes)",
			 got->rank, got->bytes, want->rank, want->bytes);
		return 0;
	}
	n = got->bytes / esz;
	for (size_t i = 0; i < n; i++) {
		double g = value(got, i), w = value(want, i);

		if (got->dtype == NPU_DT_FLOAT32) {
			if ((isnan(g) && isnan(w)) || g == w || fabs(g - w) <= 1e-5 + 1e-3 * fabs(w))
				continue;
		} else if (!memcmp((const char *)got->data + i * esz,
				   (const char *)want->data + i * esz, esz)) {
			continue;	/* integers: bit for bit */
		}
		snprintf(why, len, "element %zu is %.9g, expected %.9g", i, g, w);
		return 0;
	}
	return 1;
}
