// SPDX-License-Identifier: MIT
/*
 * onnx_tensor.c - ONNX TensorProto <-> struct npu_array: the initializers
 * of models and the test data of ONNX's test sets. Every field is checked
 * against the dtype and the shape: a short, long or misplaced payload is
 * refused, never read past.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/onnx.h"
#include "npu_train_math.h"

size_t onnx_elem_size(enum npu_dtype dt)
{
	return ir_elem_size(dt);
}

const char *onnx_dtype_name(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DT_INT8: return "int8";
	case NPU_DT_UINT8: return "uint8";
	case NPU_DT_INT32: return "int32";
	case NPU_DT_INT64: return "int64";
	case NPU_DT_FLOAT32: return "float";
	case NPU_DT_BOOL: return "bool";
	case NPU_DT_BFLOAT16: return "bfloat16";
	case NPU_DT_FLOAT16: return "float16";
	}
	return "?";
}

static const char *const onnx_types[] = {
	"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
	"bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
};

enum npu_dtype onnx_dtype_from(int64_t t)
{
	switch (t) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return NPU_DT_FLOAT32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return NPU_DT_UINT8;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return NPU_DT_INT8;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return NPU_DT_INT32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return NPU_DT_INT64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return NPU_DT_BOOL;
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return NPU_DT_FLOAT16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return NPU_DT_BFLOAT16;
	default: return 0;
	}
}

static int32_t to_onnx(enum npu_dtype dt)
{
	switch (dt) {
	case NPU_DT_FLOAT32: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	case NPU_DT_UINT8: return ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
	case NPU_DT_INT8: return ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
	case NPU_DT_INT32: return ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
	case NPU_DT_INT64: return ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	case NPU_DT_BOOL: return ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
	case NPU_DT_BFLOAT16: return ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
	case NPU_DT_FLOAT16: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
	}
	return 0;
}

int onnx_array(const Onnx__TensorProto *t, struct npu_array *a, char *why, size_t len)
{
	return onnx_array_in(t, NULL, a, why, len);
}

int onnx_array_in(const Onnx__TensorProto *t, const char *base, struct npu_array *a, char *why,
		  size_t len)
{
	int external = t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;

	uint64_t count = 1;
	size_t esz;
	enum npu_dtype dt = onnx_dtype_from(t->data_type);

	memset(a, 0, sizeof(*a));
	if (!dt) {
		snprintf(why, len, "element type %s is not supported (float, float16, bfloat16, "
			 "uint8, int8, int32, int64, bool)", t->data_type >= 0 && t->data_type <= 16 ?
			 onnx_types[t->data_type] : "unknown");
		return NPU_ENOTSUP;
	}
	if (t->segment) {
		snprintf(why, len, "segmented data is not supported");
		return NPU_ENOTSUP;
	}
	if (external != !!t->n_external_data) {
		snprintf(why, len, "external data without its location, or the reverse");
		return NPU_EINVAL;
	}
	if (t->n_dims > NPU_MAX_RANK) {
		snprintf(why, len, "rank %zu (at most %d)", t->n_dims, NPU_MAX_RANK);
		return NPU_ENOTSUP;
	}
	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0 || t->dims[i] > (int64_t)ONNX_MAX_ELEMS) {
			snprintf(why, len, "dimension %zu is %lld", i, (long long)t->dims[i]);
			return NPU_EINVAL;
		}
		a->dims[i] = (uint32_t)t->dims[i];
		count *= (uint64_t)t->dims[i];
		if (count > ONNX_MAX_ELEMS) {
			snprintf(why, len, "more than 2^28 elements");
			return NPU_E2BIG;
		}
	}
	a->dtype = dt;
	a->rank = (uint32_t)t->n_dims;
	esz = onnx_elem_size(dt);
	a->bytes = count * esz;
	a->data = malloc(a->bytes ? a->bytes : 1);
	if (!a->data)
		return NPU_ENOMEM;
	if (external) {
		int err = onnx_external(t, base, a, why, len);

		if (err) {
			free(a->data);
			a->data = NULL;
			return err;
		}
	} else if (t->has_raw_data) {
		if (t->raw_data.len != a->bytes) {
			snprintf(why, len, "raw_data holds %zu bytes, the shape %zu", t->raw_data.len,
				 a->bytes);
			goto bad;
		}
		/* Little-endian, as ONNX stores it and as libnpu's hosts are. */
		if (a->bytes)
			memcpy(a->data, t->raw_data.data, a->bytes);
	} else if (dt == NPU_DT_FLOAT32) {
		if (t->n_float_data != count)
			goto count;
		if (a->bytes)
			memcpy(a->data, t->float_data, a->bytes);
	} else if (dt == NPU_DT_INT64) {
		if (t->n_int64_data != count)
			goto count;
		if (a->bytes)
			memcpy(a->data, t->int64_data, a->bytes);
	} else {
		/* int8, uint8, int32, bool and float16's bits are all held in int32_data */
		if (t->n_int32_data != count)
			goto count;
		for (uint64_t i = 0; i < count; i++) {
			int32_t v = t->int32_data[i];

			if (dt == NPU_DT_INT32)
				((int32_t *)a->data)[i] = v;
			else if ((dt == NPU_DT_FLOAT16 || dt == NPU_DT_BFLOAT16) && v >= 0 &&
				 v <= 0xffff)
				((uint16_t *)a->data)[i] = (uint16_t)v;
			else if ((dt == NPU_DT_INT8 && (v < -128 || v > 127)) ||
				 (dt == NPU_DT_UINT8 && (v < 0 || v > 255)) ||
				 (dt == NPU_DT_BOOL && (v < 0 || v > 1)) || dt == NPU_DT_FLOAT16 ||
				 dt == NPU_DT_BFLOAT16) {
				snprintf(why, len, "value %d out of range for %s", v,
					 onnx_dtype_name(dt));
				goto bad;
			} else {
				((uint8_t *)a->data)[i] = (uint8_t)v;
			}
		}
	}
	if (t->name && *t->name) {
		a->name = malloc(strlen(t->name) + 1);
		if (!a->name) {
			free(a->data);
			a->data = NULL;
			return NPU_ENOMEM;
		}
		strcpy(a->name, t->name);
	}
	return 0;
count:
	snprintf(why, len, "%llu elements in the shape, a different number in the data",
		 (unsigned long long)count);
bad:
	free(a->data);
	a->data = NULL;
	return NPU_EINVAL;
}

void npu_array_free(struct npu_array *a)
{
	if (!a)
		return;
	free(a->name);
	free(a->data);
	a->name = NULL;
	a->data = NULL;
	a->bytes = 0;
}

int npu_array_load_mem(const void *buf, size_t len, struct npu_array *a)
{
	Onnx__TensorProto *t;
	char why[256] = "";
	int err;

	if (!buf || !a)
		return npu_fail(NULL, NPU_EINVAL, "npu_array_load: no buffer or array");
	t = onnx__tensor_proto__unpack(NULL, len, buf);
	if (!t)
		return npu_fail(NULL, NPU_EINVAL, "not an ONNX TensorProto (%zu bytes)", len);
	err = onnx_array(t, a, why, sizeof(why));
	onnx__tensor_proto__free_unpacked(t, NULL);
	if (err)
		return npu_fail(NULL, err, "ONNX tensor: %s", *why ? why : npu_strerror(err));
	return 0;
}

int onnx_widen_f16(struct npu_array *a)
{
	uint64_t n = a->bytes / 2;
	float *f;

	if (a->dtype != NPU_DT_FLOAT16 && a->dtype != NPU_DT_BFLOAT16)
		return 0;
	f = malloc(n ? n * sizeof(float) : 1);
	if (!f)
		return NPU_ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		f[i] = a->dtype == NPU_DT_FLOAT16 ? npu_f16_to_f32(((const uint16_t *)a->data)[i]) :
						    npu_bf16_to_f32(((const uint16_t *)a->data)[i]);
	free(a->data);
	a->data = f;
	a->bytes = n * sizeof(float);
	a->dtype = NPU_DT_FLOAT32;
	return 0;
}

/* A whole file in memory (at most 2 GiB), or NULL with a message. */
void *onnx_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		npu_fail(NULL, NPU_EINVAL, "cannot open %s", path);
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb;

			if (cap >= (2ull << 30)) {
				npu_fail(NULL, NPU_E2BIG, "%s: larger than 2 GiB", path);
				goto fail;
			}
			cap = cap ? cap * 2 : 1 << 16;
			nb = realloc(buf, cap);
			if (!nb) {
				npu_fail(NULL, NPU_ENOMEM, "out of memory reading %s", path);
				goto fail;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		npu_fail(NULL, NPU_EINVAL, "cannot read %s", path);
		goto fail;
	}
	fclose(f);
	*len = n;
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

int npu_array_load(const char *path, struct npu_array *a)
{
	size_t len;
	void *buf;
	int err;

	if (!path || !a)
		return npu_fail(NULL, NPU_EINVAL, "npu_array_load: no path or array");
	buf = onnx_read_file(path, &len);
	if (!buf)
		return NPU_EINVAL;
	err = npu_array_load_mem(buf, len, a);
	free(buf);
	if (err) {
		char msg[NPU_ERRMSG_LEN];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		return npu_fail(NULL, err, "%s: %s", path, msg);
	}
	return 0;
}

int npu_array_save(const char *path, const struct npu_array *a)
{
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[NPU_MAX_RANK];
	uint64_t count = 1;
	uint8_t *buf;
	size_t len;
	FILE *f;
	int err = 0;

	if (!path || !a || !to_onnx(a->dtype) || a->rank > NPU_MAX_RANK)
		return npu_fail(NULL, NPU_EINVAL, "npu_array_save: bad arguments");
	for (uint32_t i = 0; i < a->rank; i++) {
		dims[i] = a->dims[i];
		count *= a->dims[i];
	}
	if (count * onnx_elem_size(a->dtype) != a->bytes || (a->bytes && !a->data))
		return npu_fail(NULL, NPU_EINVAL, "npu_array_save: %zu bytes for %llu elements",
				a->bytes, (unsigned long long)count);
	t.n_dims = a->rank;
	t.dims = dims;
	t.has_data_type = 1;
	t.data_type = to_onnx(a->dtype);
	t.name = a->name ? a->name : (char *)"";
	t.has_raw_data = 1;
	t.raw_data.len = a->bytes;
	t.raw_data.data = a->data;
	len = onnx__tensor_proto__get_packed_size(&t);
	buf = malloc(len ? len : 1);
	if (!buf)
		return npu_fail(NULL, NPU_ENOMEM, "out of memory");
	onnx__tensor_proto__pack(&t, buf);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len)
		err = npu_fail(NULL, NPU_EINVAL, "cannot write %s", path);
	if (f && fclose(f) && !err)
		err = npu_fail(NULL, NPU_EINVAL, "cannot write %s", path);
	free(buf);
	return err;
}
