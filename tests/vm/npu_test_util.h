/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * npu_test_util.h - raw-ioctl helpers shared by the guest tests of the
 * driver: find the npu node, and create, map and free buffer objects.
 */
#ifndef NPU_TEST_UTIL_H
#define NPU_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drm/npu_accel.h"

/* Open the first accel node the npu driver answers on; its path in @node. */
static inline int open_npu_node(char *node, size_t len)
{
	glob_t g;
	int fd = -1;

	if (glob("/dev/accel/accel*", 0, NULL, &g))
		return -1;
	for (size_t i = 0; i < g.gl_pathc && fd < 0; i++) {
		struct drm_npu_query q = { .type = DRM_NPU_QUERY_DEVICE };

		fd = open(g.gl_pathv[i], O_RDWR | O_CLOEXEC);
		if (fd >= 0 && ioctl(fd, DRM_IOCTL_NPU_QUERY, &q)) {
			close(fd);
			fd = -1;
		} else if (fd >= 0 && node) {
			snprintf(node, len, "%s", g.gl_pathv[i]);
		}
	}
	globfree(&g);
	return fd;
}

static inline int open_npu(void)
{
	return open_npu_node(NULL, 0);
}

/* Open the device once it is there again (a rescan, a bind): up to 10 s. */
static inline int open_npu_wait(void)
{
	int fd = -1;

	for (int i = 0; i < 100 && fd < 0; i++) {
		fd = open_npu();
		if (fd < 0)
			usleep(100000);
	}
	return fd;
}

struct bo {
	uint32_t handle;
	uint64_t va, size;
	void *map;
};

/* Create a BO, find its VA and mmap offset, map it; 0 or -errno. */
static inline int bo_new(int fd, uint64_t size, struct bo *bo)
{
	struct drm_npu_bo_create c = { .size = size };
	struct drm_npu_bo_info i = {};

	if (ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c))
		return -errno;
	i.handle = c.handle;
	if (ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &i))
		return -errno;
	bo->handle = c.handle;
	bo->va = c.va;
	bo->size = i.size;
	bo->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)i.mmap_offset);
	return bo->map == MAP_FAILED ? -errno : 0;
}

static inline void bo_free(int fd, struct bo *bo)
{
	struct drm_gem_close c = { .handle = bo->handle };

	munmap(bo->map, bo->size);
	ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* Write @s to @path in one write(); 0, or -errno (-EIO if short). */
static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	else if (n != (ssize_t)strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

#endif /* NPU_TEST_UTIL_H */
