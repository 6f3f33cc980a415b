// SPDX-License-Identifier: MIT
/*
 * fd.c - the fence of work already done, as a file descriptor: what
 * npu_plan_fence_fd gives when nothing is in flight.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>

#include "base/base.h"

int npu_ready_fd(void)
{
	int fd = eventfd(1, EFD_CLOEXEC);

	if (fd < 0)
		return npu_fail(NULL, npu_errno(errno), "no eventfd: %s", strerror(errno));
	return fd;
}
