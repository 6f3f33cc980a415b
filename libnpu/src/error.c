// SPDX-License-Identifier: MIT
/* error.c - error codes and their messages. */
#include <errno.h>

#include "npu_priv.h"

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
