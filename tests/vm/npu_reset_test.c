// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_reset_test.c - the driver's failure paths, in the guest: a halted
 * firmware (debugfs "hang") makes a job time out and the driver reboot it
 * and run the job; the module cannot be unloaded under an open file; the
 * device can be removed with files, buffers and a dma-buf still open, and
 * comes back on a PCI rescan (on the debug kernel, DMA_API_DEBUG checks at
 * the removal that nothing is left DMA-mapped). Expects npu.ko loaded with
 * job_timeout_ms=1000.
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "npu_cmd.h"
#include "npu_test_util.h"

/* Run one fill job; returns the driver's job status (or -errno). */
static int fill_job(int fd, struct bo *cmd, struct bo *st, uint64_t dst, uint32_t pattern)
{
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, dst, 64, pattern, 0 };
	uint32_t sync;
	struct drm_npu_sync out;
	struct drm_npu_submit s = {
		.cmd_handle = cmd->handle, .cmd_size = 32, .out_sync_count = 1,
		.status_handle = st->handle,
	};
	struct timespec t;

	if (drmSyncobjCreate(fd, 0, &sync))
		return -errno;
	out = (struct drm_npu_sync){ .handle = sync };
	s.out_syncs = (uintptr_t)&out;
	memcpy(cmd->map, &f, sizeof(f));
	if (ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s))
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (drmSyncobjWait(fd, &sync, 1, (t.tv_sec + 60) * 1000000000ll, 0, NULL))
		return -errno;
	drmSyncobjDestroy(fd, sync);
	return (int)((struct drm_npu_job_result *)st->map)->status;
}

TEST(halted_firmware_is_rebooted_and_the_job_runs)
{
	struct bo cmd = {}, st = {}, dst = {};
	glob_t g;
	int fd = open_npu();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, bo_new(fd, 4096, &cmd));
	ASSERT_EQ(0, bo_new(fd, 4096, &st));
	ASSERT_EQ(0, bo_new(fd, 4096, &dst));
	ASSERT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x11111111));
	ASSERT_EQ(0, glob("/sys/kernel/debug/accel/*/hang", 0, NULL, &g));
	ASSERT_EQ(0, write_file(g.gl_pathv[0], "1"));
	globfree(&g);
	/*
	 * The job cannot start: its time runs out, the driver reboots the
	 * firmware and puts the job, which never ran, back on the device.
	 */
	EXPECT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x22222222));
	EXPECT_EQ(0x22, ((uint8_t *)dst.map)[0]);
	/* The same file goes on working. */
	EXPECT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x33333333));
	EXPECT_EQ(0x33, ((uint8_t *)dst.map)[63]);
	close(fd);
}

/*
 * debugfs "inject": unknown words are refused; an injected DMA error and
 * MMU fault each fail exactly the next job, with their own status.
 */
TEST(inject_fails_one_job_each)
{
	struct bo cmd = {}, st = {}, dst = {};
	char path[PATH_MAX];
	int fd = open_npu();
	glob_t g;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, glob("/sys/kernel/debug/accel/*/inject", 0, NULL, &g));
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	ASSERT_EQ(0, bo_new(fd, 4096, &cmd));
	ASSERT_EQ(0, bo_new(fd, 4096, &st));
	ASSERT_EQ(0, bo_new(fd, 4096, &dst));
	EXPECT_EQ(-EINVAL, write_file(path, "engine_on_fire"));
	EXPECT_EQ(-EINVAL, write_file(path, ""));
	EXPECT_EQ(-EINVAL, write_file(path, "dma_error_"));
	ASSERT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x11111111));

	ASSERT_EQ(0, write_file(path, "dma_error\n"));
	EXPECT_EQ(DRM_NPU_JOB_BUS_ERROR, fill_job(fd, &cmd, &st, dst.va, 0x22222222));
	EXPECT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x33333333));
	EXPECT_EQ(0x33, ((uint8_t *)dst.map)[63]);

	ASSERT_EQ(0, write_file(path, "mmu_fault"));
	EXPECT_EQ(DRM_NPU_JOB_MMU_FAULT, fill_job(fd, &cmd, &st, dst.va, 0x44444444));
	EXPECT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x55555555));
	EXPECT_EQ(0x55, ((uint8_t *)dst.map)[63]);
	bo_free(fd, &cmd);
	bo_free(fd, &st);
	bo_free(fd, &dst);
	close(fd);
}

TEST(rmmod_refused_while_a_file_is_open)
{
	int fd = open_npu();

	ASSERT_GE(fd, 0);
	EXPECT_NE(0, system("rmmod npu 2>/dev/null"));
	close(fd);
}

TEST(unplug_with_buffers_open_then_rescan)
{
	char node[64], link[PATH_MAX], pcidev[PATH_MAX], path[PATH_MAX + 16];
	struct drm_npu_query q = { .type = DRM_NPU_QUERY_DEVICE };
	struct bo cmd = {}, st = {}, dst = {}, shared = {}, gone = {};
	int fd = open_npu_node(node, sizeof(node)), fd2 = -1, fd3, dmabuf, dmabuf2;
	uint32_t h3;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, bo_new(fd, 4096, &cmd));
	ASSERT_EQ(0, bo_new(fd, 4096, &st));
	ASSERT_EQ(0, bo_new(fd, 4096, &dst));
	ASSERT_EQ(DRM_NPU_JOB_OK, fill_job(fd, &cmd, &st, dst.va, 0x44444444));
	/* A BO mapped in two files, and one alive only through its dma-buf. */
	fd3 = open_npu();
	ASSERT_GE(fd3, 0);
	ASSERT_EQ(0, bo_new(fd, 8192, &shared));
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, shared.handle, DRM_CLOEXEC, &dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(fd3, dmabuf, &h3));
	ASSERT_EQ(0, bo_new(fd, 4096, &gone));
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, gone.handle, DRM_CLOEXEC, &dmabuf2));
	bo_free(fd, &gone);
	snprintf(link, sizeof(link), "/sys/class/accel/%s/device", strrchr(node, '/') + 1);
	ASSERT_NE(NULL, realpath(link, pcidev));

	snprintf(path, sizeof(path), "%s/remove", pcidev);
	ASSERT_EQ(0, write_file(path, "1"));
	/* The file is still open: ioctls fail cleanly, memory stays readable. */
	EXPECT_EQ(-1, ioctl(fd, DRM_IOCTL_NPU_QUERY, &q));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(0x44, ((uint8_t *)dst.map)[63]);
	((uint8_t *)dst.map)[0] = 0x45;
	EXPECT_EQ(-ENODEV, fill_job(fd, &cmd, &st, dst.va, 0x55555555));
	munmap(dst.map, dst.size);
	munmap(cmd.map, cmd.size);
	munmap(st.map, st.size);
	munmap(shared.map, shared.size);
	close(dmabuf2);		/* frees its BO, after the removal */
	close(fd);
	close(dmabuf);
	close(fd3);		/* the last holder of the shared BO */

	/* A rescan finds the device again; the driver probes it and it works. */
	ASSERT_EQ(0, write_file("/sys/bus/pci/rescan", "1"));
	fd2 = open_npu_wait();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, bo_new(fd2, 4096, &cmd));
	ASSERT_EQ(0, bo_new(fd2, 4096, &st));
	ASSERT_EQ(0, bo_new(fd2, 4096, &dst));
	EXPECT_EQ(DRM_NPU_JOB_OK, fill_job(fd2, &cmd, &st, dst.va, 0x66666666));
	close(fd2);
}

TEST_HARNESS_MAIN
