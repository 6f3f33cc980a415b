// SPDX-License-Identifier: MIT
/*
 * ocl.c - libnpu's OpenCL backend: the device (GPU first, then any, or as
 * $NPU_OCL_DEVICE says), programs built once and their binaries cached on
 * disk, and the kernels of libnpu's ops (int8 results bit for bit the CPU
 * reference's, same arithmetic as npu_quant.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu.h"
#include "npu_ref.h"
#include "ocl_priv.h"

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* A device of @type on any platform, or the one "P:D" names; 0 if found. */
static int find_device(struct npu_ocl *o, const char *want, char *why, size_t len)
{
	cl_platform_id plats[16];
	cl_uint np = 0;
	int pick_p = -1, pick_d = -1;
	cl_device_type type = CL_DEVICE_TYPE_ALL;

	if (o->api.GetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np) {
		say(why, len, "no OpenCL platform (is an ICD such as pocl-opencl-icd installed?)");
		return -1;
	}
	if (want && sscanf(want, "%d:%d", &pick_p, &pick_d) != 2) {
		pick_p = -1;
		if (!strcmp(want, "gpu"))
			type = CL_DEVICE_TYPE_GPU;
		else if (!strcmp(want, "cpu"))
			type = CL_DEVICE_TYPE_CPU;
		else if (!strcmp(want, "accelerator"))
			type = CL_DEVICE_TYPE_ACCELERATOR;
		else if (strcmp(want, "any")) {
			say(why, len, "NPU_OCL_DEVICE=%s: expected gpu, cpu, accelerator, any or "
				"PLATFORM:DEVICE", want);
			return -1;
		}
	}
	/* Without a choice: a GPU if there is one, else anything. */
	for (int pass = want ? 1 : 0; pass < 2; pass++) {
		cl_device_type t = want ? type : pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;

		for (cl_uint p = 0; p < np; p++) {
			cl_device_id devs[16];
			cl_uint nd = 0;

			if (pick_p >= 0 && (cl_uint)pick_p != p)
				continue;
			if (o->api.GetDeviceIDs(plats[p], t, 16, devs, &nd) != CL_SUCCESS)
				continue;
			for (cl_uint d = 0; d < nd; d++) {
				if (pick_d >= 0 && (cl_uint)pick_d != d)
					continue;
				o->device = devs[d];
				return 0;
			}
		}
	}
	say(why, len, "no OpenCL device%s%s", want ? " matches NPU_OCL_DEVICE=" : "",
	    want ? want : "");
	return -1;
}

int npu_ocl_open(npu_ocl **out, char *why, size_t len)
{
	struct npu_ocl *o;
	cl_int err;

	if (!out)
		return NPU_EINVAL;
	*out = NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NPU_ENOMEM;
	if (ocl_api_load(&o->api, why, len)) {
		free(o);
		return NPU_ENODEV;
	}
	if (find_device(o, getenv("NPU_OCL_DEVICE"), why, len)) {
		npu_ocl_close(o);
		return NPU_ENODEV;
	}
	o->api.GetDeviceInfo(o->device, CL_DEVICE_NAME, sizeof(o->name), o->name, NULL);
	o->api.GetDeviceInfo(o->device, CL_DRIVER_VERSION, sizeof(o->driver), o->driver, NULL);
	o->ctx = o->api.CreateContext(NULL, 1, &o->device, NULL, NULL, &err);
	if (o->ctx)
		o->queue = o->api.CreateCommandQueue(o->ctx, o->device, 0, &err);
	if (!o->ctx || !o->queue) {
		say(why, len, "OpenCL: cannot use %s (error %d)", o->name, err);
		npu_ocl_close(o);
		return NPU_ENODEV;
	}
	*out = o;
	return NPU_OK;
}

void npu_ocl_close(npu_ocl *o)
{
	if (!o)
		return;
	for (int i = 0; i < OCL_NPROGS; i++) {
		if (o->kernels[i])
			o->api.ReleaseKernel(o->kernels[i]);
		if (o->progs[i])
			o->api.ReleaseProgram(o->progs[i]);
	}
	if (o->queue)
		o->api.ReleaseCommandQueue(o->queue);
	if (o->ctx)
		o->api.ReleaseContext(o->ctx);
	ocl_api_unload(&o->api);
	free(o);
}

const char *npu_ocl_device_name(const npu_ocl *o)
{
	return o ? o->name : "";
}

/* FNV-1a over the strings that make a binary what it is. */
static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h * 0x100000001b3ull;	/* a separator */
}

static void cache_path(const struct npu_ocl *o, const char *src, const char *opts, char *path,
		       size_t len)
{
	const char *dir = getenv("NPU_OCL_CACHE"), *home = getenv("HOME");
	uint64_t h = 0xcbf29ce484222325ull;

	h = fnv(fnv(fnv(fnv(h, src), opts), o->name), o->driver);
	if (dir && *dir)
		snprintf(path, len, "%s/%016llx.bin", dir, (unsigned long long)h);
	else
		snprintf(path, len, "%s/.cache/npu/opencl/%016llx.bin", home ? home : "/tmp",
			 (unsigned long long)h);
}

/* mkdir -p of @path's folder. */
static void make_dirs(const char *path)
{
	char d[512];

	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(d, 0755);
		*p = '/';
	}
}

static cl_program from_cache(struct npu_ocl *o, const char *path, const char *opts)
{
	FILE *f = fopen(path, "rb");
	unsigned char *bin = NULL;
	const unsigned char *cbin;
	cl_program prog = NULL;
	cl_int st, err;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(bin = malloc((size_t)size)) || fread(bin, 1, (size_t)size, f) != (size_t)size)
		goto out;
	cbin = bin;
	prog = o->api.CreateProgramWithBinary(o->ctx, 1, &o->device, (const size_t *)&size, &cbin,
					      &st, &err);
	if (prog && (err != CL_SUCCESS || st != CL_SUCCESS ||
		     o->api.BuildProgram(prog, 1, &o->device, opts, NULL, NULL) != CL_SUCCESS)) {
		o->api.ReleaseProgram(prog);	/* stale or damaged: build from source */
		prog = NULL;
	}
out:
	free(bin);
	fclose(f);
	return prog;
}

static void to_cache(struct npu_ocl *o, cl_program prog, const char *path)
{
	size_t size = 0;
	unsigned char *bin;
	char tmp[560];
	FILE *f;

	if (o->api.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) ||
	    !size || !(bin = malloc(size)))
		return;
	if (!o->api.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL)) {
		make_dirs(path);
		snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
		f = fopen(tmp, "wb");
		if (f && fwrite(bin, 1, size, f) == size && !fclose(f))
			rename(tmp, path);	/* whole, or not at all */
		else if (f)
			unlink(tmp);
	}
	free(bin);
}

int ocl_build(struct npu_ocl *o, const char *src, const char *opts, cl_program *out,
	      char *why, size_t len)
{
	char path[512];
	cl_program prog;
	cl_int err;

	cache_path(o, src, opts, path, sizeof(path));
	prog = from_cache(o, path, opts);
	if (prog) {
		o->cache_hits++;
		*out = prog;
		return NPU_OK;
	}
	prog = o->api.CreateProgramWithSource(o->ctx, 1, &src, NULL, &err);
	if (!prog) {
		say(why, len, "OpenCL: cannot create a program (error %d)", err);
		return NPU_EIO;
	}
	err = o->api.BuildProgram(prog, 1, &o->device, opts, NULL, NULL);
	if (err != CL_SUCCESS) {
		size_t n = 0;
		int head = snprintf(why, len, "OpenCL build failed on %s (error %d):\n", o->name,
				    err);

		if (head >= 0 && (size_t)head < len)
			o->api.GetProgramBuildInfo(prog, o->device, CL_PROGRAM_BUILD_LOG,
						   len - (size_t)head, why + head, &n);
		o->api.ReleaseProgram(prog);
		return NPU_EIO;
	}
	o->builds++;
	to_cache(o, prog, path);
	*out = prog;
	return NPU_OK;
}

/* ---- kernels --------------------------------------------------------- */

/* npu_quant.h's requantization, in OpenCL C. */
static const char gemm_i8_src[] =
"int srdhm(int a, int b)\n"
"{\n"
"	long ab, nudge;\n"
"	if (a == INT_MIN && b == INT_MIN)\n"
"		return INT_MAX;\n"
"	ab = (long)a * (long)b;\n"
"	nudge = ab >= 0 ? (1L << 30) : (1L - (1L << 30));\n"
"	return (int)((ab + nudge) / (1L << 31));\n"
"}\n"
"int rdbpot(int x, int e)\n"
"{\n"
"	int mask = (int)((1L << e) - 1), rem = x & mask;\n"
"	int thr = (mask >> 1) + (x < 0 ? 1 : 0);\n"
"	return (x >> e) + (rem > thr ? 1 : 0);\n"
"}\n"
"kernel void gemm_i8(global const char *a, global const char *b, global const int *bias,\n"
"		    int has_bias, global const int *mult, global const int *shift,\n"
"		    int per_tensor, global char *out, uint m, uint n, uint k, int a_zero,\n"
"		    int out_zero, int act_min, int act_max)\n"
"{\n"
"	uint j = get_global_id(0), i = get_global_id(1), c;\n"
"	uint acc;\n"
"	int sh, v;\n"
"	long r;\n"
"	if (i >= m || j >= n)\n"
"		return;\n"
"	acc = has_bias ? (uint)bias[j] : 0u;\n"
"	for (uint x = 0; x < k; x++)\n"
"		acc += (uint)(((int)a[(size_t)i * k + x] - a_zero) * (int)b[(size_t)j * k + x]);\n"
"	c = per_tensor ? 0 : j;\n"
"	sh = shift[c];\n"
"	v = rdbpot(srdhm((int)(acc << (sh > 0 ? sh : 0)), mult[c]), sh > 0 ? 0 : -sh);\n"
"	r = (long)v + out_zero;\n"
"	out[(size_t)i * n + j] = (char)(r < act_min ? act_min : r > act_max ? act_max : r);\n"
"}\n";

static int kernel_for(struct npu_ocl *o, int which, const char *src, const char *name,
		      cl_kernel *k)
{
	cl_int err;
	int e;

	if (!o->kernels[which]) {
		e = ocl_build(o, src, "", &o->progs[which], o->why, sizeof(o->why));
		if (e)
			return e;
		o->kernels[which] = o->api.CreateKernel(o->progs[which], name, &err);
		if (!o->kernels[which])
			return NPU_EIO;
	}
	*k = o->kernels[which];
	return NPU_OK;
}

static cl_mem buffer(struct npu_ocl *o, size_t size, const void *data, cl_int *err)
{
	return o->api.CreateBuffer(o->ctx, data ? CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR
						: CL_MEM_READ_WRITE,
				   size, (void *)data, err);
}

/* One kernel argument: @size bytes at @val (a cl_mem's address for buffers). */
struct karg {
	size_t size;
	const void *val;
};

/*
 * Set @n arguments of @k, run it over @global, and read @out_len bytes of
 * buffer @out back into @dst; 0 or NPU_EIO (the reason in o->why).
 */
static int launch(struct npu_ocl *o, cl_kernel k, const struct karg *args, cl_uint n,
		  cl_uint dims, const size_t *global, cl_mem out, size_t out_len, void *dst)
{
	cl_int err = CL_SUCCESS;

	for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
		err = o->api.SetKernelArg(k, i, args[i].size, args[i].val);
	if (err == CL_SUCCESS)
		err = o->api.EnqueueNDRangeKernel(o->queue, k, dims, NULL, global, NULL, 0, NULL,
						  NULL);
	if (err == CL_SUCCESS)
		err = o->api.EnqueueReadBuffer(o->queue, out, CL_TRUE, 0, out_len, dst, 0, NULL,
					       NULL);
	if (err != CL_SUCCESS) {
		say(o->why, sizeof(o->why), "OpenCL: a kernel failed (error %d)", err);
		return NPU_EIO;
	}
	return NPU_OK;
}

static void release(struct npu_ocl *o, cl_mem *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (m[i])
			o->api.ReleaseMemObject(m[i]);
}

int npu_ocl_gemm_i8(npu_ocl *o, const struct npu_gemm_i8 *p, const int8_t *a, const int8_t *b,
		    const int32_t *bias, const int32_t *mult, const int32_t *shift, int8_t *out)
{
	uint32_t nq = p && p->per_tensor ? 1 : p ? p->n : 0;
	cl_mem m[6];
	int32_t zero = 0;
	cl_int err = CL_SUCCESS;
	cl_kernel k;
	int e, hb = !!bias, pt;

	if (!o || !npu_gemm_i8_valid(p) || !a || !b || !mult || !shift || !out ||
	    !npu_shifts_valid(shift, nq))
		return NPU_EINVAL;
	e = kernel_for(o, OCL_GEMM_I8, gemm_i8_src, "gemm_i8", &k);
	if (e)
		return e;
	pt = !!p->per_tensor;
	m[0] = buffer(o, (size_t)p->m * p->k, a, &err);
	m[1] = buffer(o, (size_t)p->n * p->k, b, &err);
	m[2] = buffer(o, bias ? sizeof(int32_t) * p->n : 4, bias ? (const void *)bias : &zero, &err);
	m[3] = buffer(o, sizeof(int32_t) * nq, mult, &err);
	m[4] = buffer(o, sizeof(int32_t) * nq, shift, &err);
	m[5] = buffer(o, (size_t)p->m * p->n, NULL, &err);
	if (m[0] && m[1] && m[2] && m[3] && m[4] && m[5]) {
		size_t g[2] = { p->n, p->m };
		const struct karg args[] = {
			{ sizeof(cl_mem), &m[0] }, { sizeof(cl_mem), &m[1] }, { sizeof(cl_mem), &m[2] },
			{ sizeof(int), &hb }, { sizeof(cl_mem), &m[3] }, { sizeof(cl_mem), &m[4] },
			{ sizeof(int), &pt }, { sizeof(cl_mem), &m[5] }, { 4, &p->m }, { 4, &p->n },
			{ 4, &p->k }, { 4, &p->a_zero }, { 4, &p->out_zero }, { 4, &p->act_min },
			{ 4, &p->act_max },
		};

		e = launch(o, k, args, 15, 2, g, m[5], (size_t)p->m * p->n, out);
	} else {
		e = NPU_ENOMEM;
	}
	release(o, m, 6);
	return e;
}

/* ref_pool.c's loops, one output element per work-item; *bad set for an empty window. */
static const char pool_i8_src[] =
"kernel void pool_i8(global const char *in, global char *out, global int *bad,\n"
"		    uint b_n, uint in_h, uint in_w, uint c, uint out_h, uint out_w,\n"
"		    uint k_h, uint k_w, uint s_h, uint s_w, uint pad_top, uint pad_left,\n"
"		    int act_min, int act_max, int average)\n"
"{\n"
"	size_t o = get_global_id(0);\n"
"	uint ch = o % c, ox = (o / c) % out_w, oy = (o / c / out_w) % out_h;\n"
"	uint b = o / c / out_w / out_h;\n"
"	int sum = 0, mx = -128, count = 0;\n"
"	if (b >= b_n)\n"
"		return;\n"
"	for (uint ky = 0; ky < k_h; ky++)\n"
"		for (uint kx = 0; kx < k_w; kx++) {\n"
"			long iy = (long)oy * s_h - pad_top + ky, ix = (long)ox * s_w - pad_left + kx;\n"
"			int v;\n"
"			if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w)\n"
"				continue;\n"
"			v = in[(((size_t)b * in_h + iy) * in_w + ix) * c + ch];\n"
"			sum += v;\n"
"			mx = v > mx ? v : mx;\n"
"			count++;\n"
"		}\n"
"	if (!count) {\n"
"		*bad = 1;\n"
"		return;\n"
"	}\n"
"	if (average)\n"
"		sum = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;\n"
"	else\n"
"		sum = mx;\n"
"	out[o] = (char)(sum < act_min ? act_min : sum > act_max ? act_max : sum);\n"
"}\n";

int npu_ocl_pool_i8(npu_ocl *o, const struct npu_pool_i8 *p, const int8_t *in, int8_t *out)
{
	size_t n_in, n_out;
	int32_t bad = 0, avg;
	cl_mem m[3];
	cl_int err = CL_SUCCESS;
	cl_kernel k;
	int e;

	if (!o || !npu_pool_i8_valid(p) || !in || !out)
		return NPU_EINVAL;
	e = kernel_for(o, OCL_POOL_I8, pool_i8_src, "pool_i8", &k);
	if (e)
		return e;
	avg = !!p->average;
	n_in = (size_t)p->batch * p->in_h * p->in_w * p->c;
	n_out = (size_t)p->batch * p->out_h * p->out_w * p->c;
	m[0] = buffer(o, n_in, in, &err);
	m[1] = buffer(o, n_out, NULL, &err);
	m[2] = o->api.CreateBuffer(o->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &bad, &err);
	if (m[0] && m[1] && m[2]) {
		const struct karg args[] = {
			{ sizeof(cl_mem), &m[0] }, { sizeof(cl_mem), &m[1] }, { sizeof(cl_mem), &m[2] },
			{ 4, &p->batch }, { 4, &p->in_h }, { 4, &p->in_w }, { 4, &p->c },
			{ 4, &p->out_h }, { 4, &p->out_w }, { 4, &p->k_h }, { 4, &p->k_w },
			{ 4, &p->stride_h }, { 4, &p->stride_w }, { 4, &p->pad_top },
			{ 4, &p->pad_left }, { 4, &p->act_min }, { 4, &p->act_max }, { 4, &avg },
		};

		e = launch(o, k, args, 18, 1, &n_out, m[1], n_out, out);
		if (!e && o->api.EnqueueReadBuffer(o->queue, m[2], CL_TRUE, 0, 4, &bad, 0, NULL,
						   NULL) != CL_SUCCESS)
			e = NPU_EIO;
	} else {
		e = NPU_ENOMEM;
	}
	release(o, m, 3);
	return e ? e : bad ? NPU_EINVAL : NPU_OK;	/* a window with nothing in it */
}

const char *npu_ocl_error(const npu_ocl *o)
{
	return o ? o->why : "";
}
