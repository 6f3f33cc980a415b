// SPDX-License-Identifier: MIT
/*
 * device.c - finding NPUs and opening them. An NPU is an accel node whose
 * driver is "npu" (/sys/class/accel/accelN/device/driver); the accel class
 * names the driver directly, which PCI enumeration alone would not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "device/npu_priv.h"

static int node_number(const char *path)
{
	const char *p = strrchr(path, 'l');	/* ".../accelN" */

	return p ? atoi(p + 1) : -1;
}

static int cmp_nodes(const void *a, const void *b)
{
	return node_number(*(char *const *)a) - node_number(*(char *const *)b);
}

/* Fill @nodes (up to @max) with the minors of npu accel nodes, in order. */
static int npu_nodes(int *nodes, int max)
{
	glob_t g;
	int n = 0;

	if (glob("/sys/class/accel/accel*", 0, NULL, &g))
		return 0;
	qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), cmp_nodes);
	for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
		char link[PATH_MAX], target[PATH_MAX];
		ssize_t len;

		snprintf(link, sizeof(link), "%s/device/driver", g.gl_pathv[i]);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (!strcmp(strrchr(target, '/') ? strrchr(target, '/') + 1 : target, "npu"))
			nodes[n++] = node_number(g.gl_pathv[i]);
	}
	globfree(&g);
	return n;
}

int npu_device_count(void)
{
	int nodes[64];

	return npu_nodes(nodes, 64);
}

int npu_open(int index, npu_device **out)
{
	struct drm_npu_query q = { .type = DRM_NPU_QUERY_DEVICE };
	int nodes[64], n = npu_nodes(nodes, 64), ret;
	npu_device *dev;

	if (!out)
		return NPU_EINVAL;
	*out = NULL;
	if (index < 0 || index >= n)
		return n ? npu_fail(NULL, NPU_ENODEV, "npu_open: no NPU %d (there are %d)",
				    index, n) :
			   npu_fail(NULL, NPU_ENODEV, "npu_open: no NPU: no accel device is driven "
				    "by npu.ko (is it loaded? it runs only in the guest)");
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NPU_ENOMEM;
	pthread_mutex_init(&dev->slot_lock, NULL);
	snprintf(dev->node, sizeof(dev->node), "/dev/accel/accel%d", nodes[index]);
	dev->fd = open(dev->node, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = errno == ENOENT ? NPU_ENODEV : npu_errno(errno);
		pthread_mutex_destroy(&dev->slot_lock);
		free(dev);
		return ret;
	}
	q.size = sizeof(dev->info);
	q.data = (uintptr_t)&dev->info;
	if (ioctl(dev->fd, DRM_IOCTL_NPU_QUERY, &q)) {
		ret = npu_errno(errno);
		goto err;
	}
	ret = npu_buffer_alloc(dev, NPU_STATUS_SLOTS * sizeof(struct drm_npu_job_result),
			       &dev->status);
	if (ret)
		goto err;
	if (!npu_buffer_map(dev->status)) {
		ret = NPU_ENOMEM;
		goto err;
	}
	*out = dev;
	return 0;
err:
	if (dev->status)
		npu_buffer_free(dev->status);
	close(dev->fd);
	pthread_mutex_destroy(&dev->slot_lock);
	free(dev);
	return ret;
}

void npu_close(npu_device *dev)
{
	if (!dev)
		return;
	npu_job_reap_all(dev);
	npu_buffer_free(dev->status);
	close(dev->fd);
	pthread_mutex_destroy(&dev->slot_lock);
	free(dev);
}

int npu_device_info_v(size_t size, npu_device *dev, struct npu_device_info *out)
{
	struct npu_device_info info = { 0 };

	if (!dev || !out || size < sizeof(uint32_t))
		return npu_fail(NULL, NPU_EINVAL, "npu_device_info: no device or no room");
	snprintf(info.node, sizeof(info.node), "%s", dev->node);
	info.hw_version = dev->info.hw_version;
	info.fw_version = dev->info.fw_version;
	info.fw_api = dev->info.fw_api;
	/* The uAPI reports opcodes 0-63 today; the bitmap has room for 256. */
	info.cmd_caps[0] = dev->info.cmd_caps | (uint64_t)dev->info.cmd_caps_hi << 32;
	info.fw_caps = dev->info.fw_caps;
	info.num_rings = dev->info.num_rings;
	info.sram_size = dev->info.sram_size;
	info.max_buffer_size = dev->info.max_bo_size;
	info.max_cmd_size = dev->info.max_cmd_size;
	npu_struct_out(out, size, &info, sizeof(info));
	return 0;
}

int npu_device_has_command(const npu_device *dev, uint32_t opcode)
{
	uint64_t caps = dev ? dev->info.cmd_caps | (uint64_t)dev->info.cmd_caps_hi << 32 : 0;

	return opcode < 64 && (caps >> opcode & 1);
}
