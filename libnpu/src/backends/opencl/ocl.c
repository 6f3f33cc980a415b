// SPDX-License-Identifier: MIT
/*
 * ocl.c - libnpu's OpenCL backend: the device (GPU first, then any, or as
 * $NPU_OCL_DEVICE says), its one program (every kernel of libnpu, from
 * libnpu/src/kernels) built once (its binary cached on disk by ocl_cache.c),
 * buffers and the queue. The ops themselves are in ocl_ops.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "npu.h"
#include "device/npu_priv.h"
#include "ir/kern_params.h"
#include "backends/opencl/ocl_priv.h"

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

/* What the device offers that the backend cares about. */
static void device_traits(struct npu_ocl *o)
{
	cl_bool unified = CL_FALSE;
	cl_device_fp_config fp = 0;
	cl_device_local_mem_type lt = CL_GLOBAL;
	cl_ulong lsize = 0;
	size_t wg = 0;
	char ext[4096] = "";

	o->api.GetDeviceInfo(o->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified,
			     NULL);
	o->api.GetDeviceInfo(o->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL);
	o->api.GetDeviceInfo(o->device, CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
	o->api.GetDeviceInfo(o->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(o->max_alloc),
			     &o->max_alloc, NULL);
	o->unified = unified == CL_TRUE && !o->no_zero_copy;
	o->exact_div = !!(fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT);
	o->fp64 = strstr(ext, "cl_khr_fp64") != NULL;
	o->api.GetDeviceInfo(o->device, CL_DEVICE_LOCAL_MEM_TYPE, sizeof(lt), &lt, NULL);
	o->api.GetDeviceInfo(o->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(lsize), &lsize, NULL);
	o->api.GetDeviceInfo(o->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL);
	/* nd_matmul_f32_tiles: 256 work-items, 8 KiB of local memory a group */
	o->tiles_fit = wg >= 256 && lsize >= 16384;
	if (o->tiles < 0)	/* NPU_OCL_TILES unset: where local memory is the device's own */
		o->tiles = lt == CL_LOCAL;
	o->tiles = o->tiles && o->tiles_fit;
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
	o->tiles = -1;
	if (npu_env("NPU_OCL_TILES") && *npu_env("NPU_OCL_TILES") &&
	    npu_env_bool("NPU_OCL_TILES", &o->tiles)) {
		say(why, len, "NPU_OCL_TILES=%s: not a boolean (unset, empty, 0 or 1)",
		    npu_env("NPU_OCL_TILES"));
		free(o);
		return NPU_EINVAL;
	}
	if (npu_env_bool("NPU_OCL_NO_ZERO_COPY", &o->no_zero_copy)) {
		say(why, len, "NPU_OCL_NO_ZERO_COPY=%s: not a boolean (unset, empty, 0 or 1)",
		    npu_env("NPU_OCL_NO_ZERO_COPY"));
		free(o);
		return NPU_EINVAL;
	}
	if (ocl_api_load(&o->api, why, len)) {
		free(o);
		return NPU_ENODEV;
	}
	if (find_device(o, npu_env("NPU_OCL_DEVICE"), why, len)) {
		npu_ocl_close(o);
		return NPU_ENODEV;
	}
	o->api.GetDeviceInfo(o->device, CL_DEVICE_NAME, sizeof(o->name), o->name, NULL);
	o->api.GetDeviceInfo(o->device, CL_DRIVER_VERSION, sizeof(o->driver), o->driver, NULL);
	device_traits(o);
	ocl_cache_open(o);
	o->ctx = o->api.CreateContext(NULL, 1, &o->device, NULL, NULL, &err);
	if (o->ctx)
		o->queue = o->api.CreateCommandQueue(o->ctx, o->device, 0, &err);
	if (o->queue) {
		cl_int zero = 0;

		o->flag = o->api.CreateBuffer(o->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
					      sizeof(zero), &zero, &err);
		o->dummy = o->flag ? o->api.CreateBuffer(o->ctx, CL_MEM_READ_WRITE, 16, NULL, &err)
				   : NULL;
	}
	if (!o->ctx || !o->queue || !o->flag || !o->dummy) {
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
	for (int i = 0; i < o->nkern; i++)
		o->api.ReleaseKernel(o->kern[i].k);
	if (o->prog)
		o->api.ReleaseProgram(o->prog);
	ocl_release(o, &o->flag, 1);
	ocl_release(o, &o->dummy, 1);
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

int ocl_build(struct npu_ocl *o, const char *src, const char *opts, cl_program *out,
	      char *why, size_t len)
{
	cl_program prog;
	cl_int err;

	prog = ocl_cache_load(o, src, opts);
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
	ocl_cache_store(o, prog, src, opts);
	*out = prog;
	return NPU_OK;
}

/* ---- the program, buffers, the queue ----------------------------------- */

int ocl_kernel(struct npu_ocl *o, const char *name, cl_kernel *k)
{
	cl_int err;
	int e;

	for (int i = 0; i < o->nkern; i++)
		if (!strcmp(o->kern[i].name, name)) {
			*k = o->kern[i].k;
			return NPU_OK;
		}
	if (!o->prog) {
		/* No contraction (the sources say so) and exact division: the reference's bits. */
		e = ocl_build(o, ocl_program_src, o->exact_div ?
			      "-cl-fp32-correctly-rounded-divide-sqrt" : "", &o->prog, o->why,
			      sizeof(o->why));
		if (e)
			return e;
	}
	if (o->nkern == OCL_MAX_KERNELS)
		return NPU_ENOMEM;
	*k = o->api.CreateKernel(o->prog, name, &err);
	if (!*k) {
		say(o->why, sizeof(o->why), "OpenCL: no kernel %s (error %d)", name, err);
		return NPU_EIO;
	}
	o->kern[o->nkern].name = name;
	o->kern[o->nkern++].k = *k;
	return NPU_OK;
}

int ocl_enqueue_local(struct npu_ocl *o, const char *name, const struct karg *args,
		      cl_uint nargs, cl_uint dims, const size_t *global, const size_t *local)
{
	size_t g[2] = { global[0], dims > 1 ? global[1] : 1 };
	cl_int err = CL_SUCCESS;
	cl_kernel k;
	int e = ocl_kernel(o, name, &k);

	if (e)
		return e;
	/* Whole work-groups of 64 (kernels check their bounds); GPUs want that. */
	if (!local)
		g[0] = (g[0] + 63) / 64 * 64;
	for (cl_uint i = 0; err == CL_SUCCESS && i < nargs; i++)
		err = o->api.SetKernelArg(k, i, args[i].size, args[i].val);
	if (err == CL_SUCCESS)
		err = o->api.EnqueueNDRangeKernel(o->queue, k, dims, NULL, g, local, 0, NULL, NULL);
	if (err != CL_SUCCESS) {
		say(o->why, sizeof(o->why), "OpenCL: kernel %s failed (error %d)", name, err);
		return NPU_EIO;
	}
	return NPU_OK;
}

int ocl_enqueue(struct npu_ocl *o, const char *name, const struct karg *args, cl_uint nargs,
		cl_uint dims, const size_t *global)
{
	return ocl_enqueue_local(o, name, args, nargs, dims, global, NULL);
}

cl_mem ocl_buffer(struct npu_ocl *o, size_t size, void *host, int copy)
{
	cl_int err;

	if (!size || size > o->max_alloc)
		return NULL;
	if (host && o->unified)
		return o->api.CreateBuffer(o->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size,
					   host, &err);
	return o->api.CreateBuffer(o->ctx, CL_MEM_READ_WRITE | (host && copy ?
				   CL_MEM_COPY_HOST_PTR : 0), size, host && copy ? host : NULL,
				   &err);
}

/* Blocking copies between a device buffer and host memory. */
int ocl_write(struct npu_ocl *o, cl_mem m, size_t size, const void *src)
{
	cl_int err = o->api.EnqueueWriteBuffer(o->queue, m, CL_TRUE, 0, size, src, 0, NULL, NULL);

	if (err != CL_SUCCESS) {
		say(o->why, sizeof(o->why), "OpenCL: a copy to the device failed (error %d)", err);
		return NPU_EIO;
	}
	return NPU_OK;
}

int ocl_read(struct npu_ocl *o, cl_mem m, size_t size, void *dst)
{
	cl_int err = o->api.EnqueueReadBuffer(o->queue, m, CL_TRUE, 0, size, dst, 0, NULL, NULL);

	if (err != CL_SUCCESS) {
		say(o->why, sizeof(o->why), "OpenCL: a copy from the device failed (error %d)",
		    err);
		return NPU_EIO;
	}
	return NPU_OK;
}

/* Map wrapped memory for the host, blocking, and give it back at once. */
static int map_unmap(struct npu_ocl *o, cl_mem m, size_t size, cl_map_flags flags)
{
	cl_int err;
	void *p = o->api.EnqueueMapBuffer(o->queue, m, CL_TRUE, flags, 0, size, 0, NULL, NULL,
					  &err);

	if (p)
		err = o->api.EnqueueUnmapMemObject(o->queue, m, p, 0, NULL, NULL);
	if (!p || err != CL_SUCCESS) {
		say(o->why, sizeof(o->why), "OpenCL: mapping a buffer failed (error %d)", err);
		return NPU_EIO;
	}
	return NPU_OK;
}

int ocl_to_device(struct npu_ocl *o, cl_mem m, size_t size, const void *host)
{
	/* Unmapping after a write map publishes what the host wrote. */
	o->to_device++;
	return o->unified ? map_unmap(o, m, size, CL_MAP_WRITE) : ocl_write(o, m, size, host);
}

int ocl_to_host(struct npu_ocl *o, cl_mem m, size_t size, void *host)
{
	o->to_host++;
	return o->unified ? map_unmap(o, m, size, CL_MAP_READ) : ocl_read(o, m, size, host);
}

/* The callback's own descriptor: the caller may close its copy first. */
static void CL_CALLBACK fence_done(cl_event ev, cl_int status, void *data)
{
	uint64_t one = 1;
	int fd = (int)(intptr_t)data;

	(void)ev;
	(void)status;	/* a failed queue ends too; ocl_finish says how */
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		one = 0;	/* an eventfd's counter cannot overflow from 0 */
	close(fd);
}

int ocl_fence_fd(struct npu_ocl *o)
{
	int fd = eventfd(0, EFD_CLOEXEC), mine = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	cl_event ev = NULL;
	cl_int e;

	if (mine < 0) {
		if (fd >= 0)
			close(fd);
		return npu_fail(NULL, npu_errno(errno), "OpenCL: no eventfd: %s", strerror(errno));
	}
	e = o->api.EnqueueMarkerWithWaitList(o->queue, 0, NULL, &ev);
	if (e == CL_SUCCESS)
		e = o->api.SetEventCallback(ev, CL_COMPLETE, fence_done, (void *)(intptr_t)mine);
	if (ev)
		o->api.ReleaseEvent(ev);
	if (e != CL_SUCCESS) {
		close(mine);
		close(fd);
		return npu_fail(NULL, NPU_EIO, "OpenCL: a marker for the fence failed (%d)", e);
	}
	o->api.Flush(o->queue);
	return fd;
}

int ocl_finish(struct npu_ocl *o)
{
	cl_int bad = 0;
	int e = ocl_read(o, o->flag, sizeof(bad), &bad);

	if (e)
		return e;
	if (!bad)
		return NPU_OK;
	e = ocl_write(o, o->flag, sizeof(int), &(cl_int){ 0 });
	if (bad == OCL_BAD_INDEX)
		say(o->why, sizeof(o->why), "OpenCL: Gather or GatherElements met an index out of "
		    "range (ONNX's error)");
	else
		say(o->why, sizeof(o->why), "OpenCL: an op met invalid data (an empty pooling "
		    "window, or a label out of range)");
	npu_fail(NULL, NPU_EINVAL, "%s", o->why);
	return e ? e : NPU_EINVAL;
}

void ocl_release(struct npu_ocl *o, cl_mem *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (m[i]) {
			o->api.ReleaseMemObject(m[i]);
			m[i] = NULL;
		}
}

const char *npu_ocl_error(const npu_ocl *o)
{
	return o ? o->why : "";
}
