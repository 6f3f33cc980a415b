/* SPDX-License-Identifier: MIT */
/*
 * ocl_api.h - the OpenCL entry points libnpu uses, found at run time in
 * libOpenCL.so.1 (the ICD loader), so that libnpu links and runs on a
 * machine without OpenCL and says so when asked for it.
 */
#ifndef OCL_API_H
#define OCL_API_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stddef.h>

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)

struct ocl_api {
	void *lib;
	cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
	cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
	cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
				    void (*)(const char *, const void *, size_t, void *), void *,
				    cl_int *);
	cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id,
					       cl_command_queue_properties, cl_int *);
	cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *,
					      cl_int *);
	cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *,
					      const size_t *, const unsigned char **, cl_int *,
					      cl_int *);
	cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
			       void (*)(cl_program, void *), void *);
	cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
	cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t,
				      void *, size_t *);
	cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
	cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
	cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
	cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t,
				     const void *, cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *,
				    cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueCopyBufferRect)(cl_command_queue, cl_mem, cl_mem, const size_t *,
					const size_t *, const size_t *, size_t, size_t, size_t,
					size_t, cl_uint, const cl_event *, cl_event *);
	void *(*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,
				  cl_uint, const cl_event *, cl_event *, cl_int *);
	cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void *, cl_uint,
					const cl_event *, cl_event *);
	cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
				       const size_t *, const size_t *, cl_uint, const cl_event *,
				       cl_event *);
	cl_int (*Finish)(cl_command_queue);
	cl_int (*Flush)(cl_command_queue);
	cl_int (*EnqueueMarkerWithWaitList)(cl_command_queue, cl_uint, const cl_event *,
					    cl_event *);
	cl_int (*SetEventCallback)(cl_event, cl_int, void (CL_CALLBACK *)(cl_event, cl_int,
									void *), void *);
	cl_int (*ReleaseEvent)(cl_event);
	cl_int (*ReleaseMemObject)(cl_mem);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*ReleaseProgram)(cl_program);
	cl_int (*ReleaseCommandQueue)(cl_command_queue);
	cl_int (*ReleaseContext)(cl_context);
};

/*
 * Load libOpenCL.so.1 (or $NPU_OPENCL_LIB) and every entry point; 0, or
 * -1 with the reason in @why.
 */
int ocl_api_load(struct ocl_api *api, char *why, size_t len);
void ocl_api_unload(struct ocl_api *api);

#pragma GCC visibility pop

#endif /* OCL_API_H */
