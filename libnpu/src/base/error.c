// SPDX-License-Identifier: MIT
/*
 * error.c - error codes and their messages, the message of each thread's
 * last failure, the library's version, and extensible structs: how a
 * caller built against another npu.h passes its structs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

static _Thread_local char last_error[NPU_ERRMSG_LEN];

int npu_fail(char *buf, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (buf && buf != last_error)
		memcpy(buf, last_error, sizeof(last_error));
	return err;
}

const char *npu_last_error(void)
{
	return last_error;
}

uint32_t npu_version(void)
{
	return (uint32_t)NPU_VERSION_MAJOR << 16 | (uint32_t)NPU_VERSION_MINOR << 8 |
	       (uint32_t)NPU_VERSION_PATCH;
}

int npu_struct_in(void *dst, size_t ksize, const void *src, size_t usize)
{
	const unsigned char *tail = (const unsigned char *)src + ksize;

	if (usize < sizeof(uint32_t))
		return NPU_EINVAL;	/* no struct of libnpu's is this small */
	if (usize > 4096)
		return NPU_E2BIG;	/* nor ever this large: a wild size */
	if (usize > ksize) {
		/* A newer caller: what this library does not know must be unset. */
		for (size_t i = 0; i < usize - ksize; i++)
			if (tail[i])
				return NPU_E2BIG;
		usize = ksize;
	}
	memcpy(dst, src, usize);
	memset((unsigned char *)dst + usize, 0, ksize - usize);
	return 0;
}

void npu_struct_out(void *dst, size_t usize, const void *src, size_t ksize)
{
	memcpy(dst, src, usize < ksize ? usize : ksize);
	if (usize > ksize)
		memset((unsigned char *)dst + ksize, 0, usize - ksize);
}

const char *npu_strerror(int err)
{
	switch (err) {
	case NPU_OK: return "success";
	case NPU_ENODEV: return "no such NPU device";
	case NPU_EINVAL: return "invalid argument";
	case NPU_ENOMEM: return "out of memory";
	case NPU_EIO: return "the driver refused or failed the request";
	case NPU_ETIMEDOUT: return "timed out waiting for the job";
	case NPU_EJOB: return "the job finished with an error";
	case NPU_E2BIG: return "larger than the device allows";
	case NPU_ENOSPC: return "command buffer full";
	case NPU_EBUSY: return "still in use by a pending job";
	case NPU_ENOTSUP: return "not supported by the backend asked for";
	default: return "unknown error";
	}
}

int npu_errno(int err)
{
	switch (err) {
	case 0: return NPU_OK;
	case ENOMEM: return NPU_ENOMEM;
	case E2BIG: return NPU_E2BIG;
	case EINVAL: case ERANGE: case ENOENT: case EFAULT: return NPU_EINVAL;
	case ENODEV: case ENXIO: return NPU_ENODEV;
	case ETIME: case ETIMEDOUT: return NPU_ETIMEDOUT;
	case EBUSY: return NPU_EBUSY;
	default: return NPU_EIO;
	}
}

const char *npu_job_state_name(enum npu_job_state s)
{
	switch (s) {
	case NPU_JOB_STATE_PENDING: return "pending";
	case NPU_JOB_STATE_DONE: return "done";
	case NPU_JOB_STATE_INVALID_COMMAND: return "invalid command";
	case NPU_JOB_STATE_MMU_FAULT: return "MMU fault";
	case NPU_JOB_STATE_BUS_ERROR: return "bus error";
	case NPU_JOB_STATE_ABORTED: return "aborted";
	case NPU_JOB_STATE_TIMED_OUT: return "timed out";
	case NPU_JOB_STATE_OVER_LIMIT: return "over the device's per-command memory or compute limit";
	default: return "unknown";
	}
}
