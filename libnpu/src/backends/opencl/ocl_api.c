// SPDX-License-Identifier: MIT
/* ocl_api.c - OpenCL found at run time (ocl_api.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/npu_priv.h"
#include "backends/opencl/ocl_api.h"

int ocl_api_load(struct ocl_api *api, char *why, size_t len)
{
	static const struct { const char *name; size_t off; } fns[] = {
#define FN(n) { "cl" #n, offsetof(struct ocl_api, n) }
		FN(GetPlatformIDs), FN(GetPlatformInfo), FN(GetDeviceIDs), FN(GetDeviceInfo),
		FN(CreateContext), FN(CreateCommandQueue), FN(CreateProgramWithSource),
		FN(CreateProgramWithBinary), FN(BuildProgram), FN(GetProgramInfo),
		FN(GetProgramBuildInfo), FN(CreateKernel), FN(SetKernelArg), FN(CreateBuffer),
		FN(EnqueueWriteBuffer), FN(EnqueueReadBuffer), FN(EnqueueCopyBufferRect),
		FN(EnqueueMapBuffer), FN(EnqueueUnmapMemObject),
		FN(EnqueueNDRangeKernel),
		FN(Finish), FN(Flush), FN(EnqueueMarkerWithWaitList), FN(SetEventCallback),
		FN(ReleaseEvent), FN(ReleaseMemObject), FN(ReleaseKernel), FN(ReleaseProgram),
		FN(ReleaseCommandQueue), FN(ReleaseContext),
#undef FN
	};
	const char *name = npu_env("NPU_OPENCL_LIB");

	memset(api, 0, sizeof(*api));
	if (!name || !*name)
		name = "libOpenCL.so.1";
	api->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!api->lib) {
		snprintf(why, len, "no OpenCL: cannot load %s (%s); install ocl-icd-libopencl1 "
			 "and a driver such as pocl-opencl-icd", name, dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(api->lib, fns[i].name);

		if (!f) {
			snprintf(why, len, "no OpenCL: %s lacks %s", name, fns[i].name);
			dlclose(api->lib);
			ocl_api_unload(api);
			return -1;
		}
		memcpy((char *)api + fns[i].off, &f, sizeof(f));
	}
	return 0;
}

/*
 * The library stays loaded: ICD loaders keep state for the process (their
 * vendor list) and do not all survive being unloaded and loaded again.
 */
void ocl_api_unload(struct ocl_api *api)
{
	memset(api, 0, sizeof(*api));
}
