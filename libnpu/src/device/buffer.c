// SPDX-License-Identifier: MIT
/* buffer.c - buffer objects: allocate, map, free, dma-buf export and import. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "device/npu_priv.h"

static int buffer_info(npu_buffer *buf)
{
	struct drm_npu_bo_info i = { .handle = buf->handle };

	if (ioctl(buf->dev->fd, DRM_IOCTL_NPU_BO_INFO, &i))
		return npu_errno(errno);
	buf->va = i.va;
	buf->size = i.size;
	buf->mmap_offset = i.mmap_offset;
	return 0;
}

static void gem_close(npu_device *dev, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* A new npu_buffer for @handle, or an error with the handle closed. */
static int buffer_wrap(npu_device *dev, uint32_t handle, npu_buffer *buf, npu_buffer **out)
{
	int ret;

	buf->dev = dev;
	buf->handle = handle;
	ret = buffer_info(buf);
	if (ret) {
		gem_close(dev, handle);
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

int npu_buffer_alloc(npu_device *dev, size_t size, npu_buffer **out)
{
	struct drm_npu_bo_create c = { .size = size };
	npu_buffer *buf;
	int ret;

	if (!dev || !out || !size)
		return NPU_EINVAL;
	*out = NULL;
	if (size > dev->info.max_bo_size)
		return NPU_E2BIG;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return NPU_ENOMEM;
	if (ioctl(dev->fd, DRM_IOCTL_NPU_BO_CREATE, &c)) {
		ret = npu_errno(errno);
		free(buf);
		return ret;
	}
	return buffer_wrap(dev, c.handle, buf, out);
}

void npu_buffer_free(npu_buffer *buf)
{
	if (!buf)
		return;
	if (buf->map)
		munmap(buf->map, buf->size);
	gem_close(buf->dev, buf->handle);
	free(buf);
}

void *npu_buffer_map(npu_buffer *buf)
{
	void *p;

	if (!buf)
		return NULL;
	if (buf->map)
		return buf->map;
	p = mmap(NULL, buf->size, PROT_READ | PROT_WRITE, MAP_SHARED, buf->dev->fd,
		 (off_t)buf->mmap_offset);
	if (p == MAP_FAILED)
		return NULL;
	buf->map = p;
	return p;
}

uint64_t npu_buffer_va(const npu_buffer *buf)
{
	return buf ? buf->va : 0;
}

size_t npu_buffer_size(const npu_buffer *buf)
{
	return buf ? buf->size : 0;
}

int npu_buffer_export(npu_buffer *buf, int *fd)
{
	if (!buf || !fd)
		return NPU_EINVAL;
	if (drmPrimeHandleToFD(buf->dev->fd, buf->handle, DRM_CLOEXEC | DRM_RDWR, fd))
		return npu_errno(errno);
	return 0;
}

int npu_buffer_import(npu_device *dev, int fd, npu_buffer **out)
{
	npu_buffer *buf;
	uint32_t handle;
	int ret;

	if (!dev || !out || fd < 0)
		return NPU_EINVAL;
	*out = NULL;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return NPU_ENOMEM;
	if (drmPrimeFDToHandle(dev->fd, fd, &handle)) {
		ret = npu_errno(errno);
		free(buf);
		return ret;
	}
	return buffer_wrap(dev, handle, buf, out);
}
