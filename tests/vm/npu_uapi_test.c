// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_uapi_test.c - the npu driver's uAPI, in the guest, with the
 * kernel's kselftest harness: query, buffers, jobs checked byte for byte,
 * many jobs in flight, syncobj dependencies within and across files, MMU
 * faults, isolation between processes, and every negative case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "npu_cmd.h"
#include "npu_fw.h"
#include "npu_hw.h"
#include "npu_test_util.h"

#define SEC 1000000000ll

static int64_t deadline(int64_t ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * SEC + t.tv_nsec + ns;
}

/* Submit @len bytes of commands placed at the start of @cmd. */
static int submit(int fd, struct bo *cmd, const void *cmds, uint32_t len, uint32_t out_sync,
		  uint64_t out_point, uint32_t in_sync, uint64_t in_point, struct bo *status,
		  uint32_t status_off)
{
	struct drm_npu_sync in = { .handle = in_sync, .point = in_point };
	struct drm_npu_sync out = { .handle = out_sync, .point = out_point };
	struct drm_npu_submit s = {
		.cmd_handle = cmd->handle, .cmd_size = len,
		.in_sync_count = in_sync ? 1 : 0, .in_syncs = (uintptr_t)&in,
		.out_sync_count = out_sync ? 1 : 0, .out_syncs = (uintptr_t)&out,
		.status_handle = status ? status->handle : 0, .status_offset = status_off,
	};

	if (cmds)
		memcpy(cmd->map, cmds, len);
	return ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s) ? -errno : 0;
}

static int wait_sync(int fd, uint32_t h, uint64_t point)
{
	if (point)
		return drmSyncobjTimelineWait(fd, &h, &point, 1, deadline(60 * SEC),
					      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
	return drmSyncobjWait(fd, &h, 1, deadline(60 * SEC),
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
}

static struct drm_npu_job_result *result(struct bo *status, uint32_t off)
{
	return (struct drm_npu_job_result *)((char *)status->map + off);
}

FIXTURE(npu) {
	int fd;
	struct drm_npu_device_info info;
	struct bo cmd, status, a, b;
	uint32_t sync;
};

FIXTURE_SETUP(npu)
{
	struct drm_npu_query q = { .type = DRM_NPU_QUERY_DEVICE, .size = sizeof(self->info) };

	self->fd = open_npu();
	ASSERT_GE(self->fd, 0) TH_LOG("no npu accel node (is npu.ko loaded?)");
	q.data = (uintptr_t)&self->info;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_QUERY, &q));
	ASSERT_EQ(0, bo_new(self->fd, 65536, &self->cmd));
	ASSERT_EQ(0, bo_new(self->fd, 65536, &self->status));
	ASSERT_EQ(0, bo_new(self->fd, 1 << 20, &self->a));
	ASSERT_EQ(0, bo_new(self->fd, 1 << 20, &self->b));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &self->sync));
}

FIXTURE_TEARDOWN(npu)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(npu, query)
{
	struct drm_npu_query q = { .type = DRM_NPU_QUERY_DEVICE };
	struct drm_npu_device_info small[2];

	/* Size negotiation: 0 asks, a short buffer gets a prefix. */
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_QUERY, &q));
	EXPECT_EQ(sizeof(struct drm_npu_device_info), q.size);
	memset(small, 0xaa, sizeof(small));
	q.size = 8;
	q.data = (uintptr_t)small;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_QUERY, &q));
	EXPECT_EQ(self->info.hw_version, small[0].hw_version);
	EXPECT_EQ(0xaaaaaaaau, small[0].fw_api);	/* not written */

	EXPECT_EQ(NPU_HW_VERSION, self->info.hw_version);
	EXPECT_EQ(0x00020000u, self->info.fw_version);	/* 2.0.0, the Makefile's */
	EXPECT_EQ(NPU_FW_API_MAJOR << 16 | NPU_FW_API_MINOR, self->info.fw_api);
	EXPECT_EQ(4u, self->info.num_rings);
	EXPECT_EQ(64u, self->info.max_cmds_per_job);
	EXPECT_EQ(4096u, self->info.page_size);
	EXPECT_TRUE(self->info.cmd_caps & (1u << NPU_CMD_DMA_COPY));
	EXPECT_TRUE(self->info.cmd_caps & (1u << NPU_CMD_DMA_FILL));
	/* Opcodes 32-63 (firmware API 1.2): the N-d convolution and pooling. */
	EXPECT_TRUE(self->info.cmd_caps_hi & (1u << (NPU_CMD_CONV - 32)));
	EXPECT_TRUE(self->info.cmd_caps_hi & (1u << (NPU_CMD_POOL - 32)));
	EXPECT_LT(self->info.va_start, self->info.va_end);
	EXPECT_GE(self->cmd.va, self->info.va_start);
	EXPECT_LT(self->b.va + self->b.size, self->info.va_end);
}

TEST_F(npu, query_rejects_bad_type)
{
	struct drm_npu_query q = { .type = 99 };

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_QUERY, &q));
	EXPECT_EQ(EINVAL, errno);
	q.type = DRM_NPU_QUERY_DEVICE;
	q.size = sizeof(struct drm_npu_device_info);
	q.data = 16;	/* a bad user pointer */
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_QUERY, &q));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(npu, bo_create_mmap_free)
{
	struct bo bo;

	ASSERT_EQ(0, bo_new(self->fd, 5000, &bo));
	EXPECT_EQ(8192u, bo.size);
	EXPECT_EQ(0u, bo.va % 4096);
	/* Fresh memory is zero, and what the CPU writes stays. */
	EXPECT_EQ(0, ((uint8_t *)bo.map)[8191]);
	memset(bo.map, 0x5c, bo.size);
	EXPECT_EQ(0x5c, ((uint8_t *)bo.map)[4097]);
	/* Buffers do not overlap in the device address space. */
	EXPECT_TRUE(bo.va >= self->b.va + self->b.size || bo.va + bo.size <= self->cmd.va);
	bo_free(self->fd, &bo);
}

TEST_F(npu, bo_create_rejects_bad_arguments)
{
	struct drm_npu_bo_create c = {};

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.size = self->info.max_bo_size + 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_CREATE, &c));
	EXPECT_EQ(E2BIG, errno);
	c.size = ~0ull;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_CREATE, &c));
	EXPECT_EQ(E2BIG, errno);
	c.size = 4096;
	c.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.flags = 0;
	c.va = 1;	/* an output field given as input */
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(npu, bo_info_rejects_bad_arguments)
{
	struct drm_npu_bo_info i = { .handle = 0xdead };

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_INFO, &i));
	EXPECT_EQ(ENOENT, errno);
	i.handle = self->a.handle;
	i.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_BO_INFO, &i));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(npu, copy_job_byte_for_byte)
{
	struct npu_cmd_dma_copy cp = {
		{ NPU_CMD_DMA_COPY, sizeof(cp) }, self->a.va + 3, self->b.va + 4093, 300001,
	};
	struct drm_npu_job_result *r = result(&self->status, 0);
	uint8_t *a = self->a.map, *b = self->b.map;

	for (int i = 0; i < 1 << 20; i++)
		a[i] = (uint8_t)(i * 7 + (i >> 11));
	memset(b, 0xee, 1 << 20);
	ASSERT_EQ(0, submit(self->fd, &self->cmd, &cp, sizeof(cp), self->sync, 0, 0, 0,
			    &self->status, 0));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, r->status);
	EXPECT_EQ(0, memcmp(b + 4093, a + 3, 300001));
	EXPECT_EQ(0xee, b[4092]);
	EXPECT_EQ(0xee, b[4093 + 300001]);
	EXPECT_GT(r->cycles, 300001 / 32);
	EXPECT_EQ(300001u + sizeof(cp), r->bytes);
	EXPECT_LE(r->start_ns, r->end_ns);
	EXPECT_GT(r->seqno, 0u);
}

TEST_F(npu, fill_job_byte_for_byte)
{
	struct npu_cmd_dma_fill f = {
		{ NPU_CMD_DMA_FILL, sizeof(f) }, self->b.va + 1, 70001, 0x11223344, 0,
	};
	uint8_t *b = self->b.map;

	memset(b, 0, 1 << 20);
	ASSERT_EQ(0, submit(self->fd, &self->cmd, &f, sizeof(f), self->sync, 0, 0, 0,
			    &self->status, 64));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, result(&self->status, 64)->status);
	for (int i = 0; i < 70001; i++)
		ASSERT_EQ((uint8_t)(0x11223344u >> (8 * (i & 3))), b[1 + i]);
	EXPECT_EQ(0, b[0]);
	EXPECT_EQ(0, b[70002]);
}

/* Hundreds of jobs in flight on one timeline syncobj, checked at the end. */
TEST_F(npu, many_jobs_in_flight)
{
	const int n = 400;
	uint32_t tl;
	uint32_t *words = self->b.map;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	memset(self->b.map, 0, 1 << 20);
	for (int i = 0; i < n; i++) {
		struct npu_cmd_dma_fill f = {
			{ NPU_CMD_DMA_FILL, sizeof(f) }, self->b.va + 4 * i, 4, 0x1000 + i, 0,
		};
		struct bo cmd = self->cmd;

		/* Each job its own slice of the command BO. */
		memcpy((char *)self->cmd.map + 32 * i, &f, sizeof(f));
		struct drm_npu_sync out = { .handle = tl, .point = i + 1 };
		struct drm_npu_submit s = {
			.cmd_handle = cmd.handle, .cmd_offset = 32 * i, .cmd_size = 32,
			.ring = i % 4, .out_sync_count = 1, .out_syncs = (uintptr_t)&out,
			.status_handle = self->status.handle, .status_offset = 64 * (i % 1000),
		};
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
	}
	/* Points are signalled in order per ring; wait for all of them. */
	for (int i = n - 4; i < n; i++)
		ASSERT_EQ(0, wait_sync(self->fd, tl, i + 1));
	ASSERT_EQ(0, wait_sync(self->fd, tl, n));
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(0x1000u + i, words[i]);
		ASSERT_EQ(DRM_NPU_JOB_OK, result(&self->status, 64 * i)->status);
	}
	drmSyncobjDestroy(self->fd, tl);
}

/*
 * Job 2 waits for job 1 through a timeline syncobj: the copy sees the fill.
 * The fill goes to the ring the firmware serves last and the copy to the
 * one it serves first, so only the dependency puts them in this order.
 */
TEST_F(npu, syncobj_dependency)
{
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, self->a.va, 1 << 20, 0xabababab, 0 };
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, self->a.va, self->b.va, 1 << 20 };
	struct drm_npu_sync p1 = { .point = 1 }, p2 = { .point = 2 };
	struct bo cmd2;
	uint32_t tl;

	ASSERT_EQ(0, bo_new(self->fd, 4096, &cmd2));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	p1.handle = p2.handle = tl;
	memset(self->a.map, 0, 1 << 20);
	memset(self->b.map, 0, 1 << 20);
	memcpy(self->cmd.map, &f, sizeof(f));
	memcpy(cmd2.map, &cp, sizeof(cp));
	{
		struct drm_npu_submit s = {
			.cmd_handle = self->cmd.handle, .cmd_size = 32, .ring = 3,
			.out_sync_count = 1, .out_syncs = (uintptr_t)&p1,
		};
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
	}
	{
		struct drm_npu_submit s = {
			.cmd_handle = cmd2.handle, .cmd_size = 32, .ring = 0,
			.in_sync_count = 1, .in_syncs = (uintptr_t)&p1,
			.out_sync_count = 1, .out_syncs = (uintptr_t)&p2,
		};
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
	}
	ASSERT_EQ(0, wait_sync(self->fd, tl, 2));
	for (int i = 0; i < 1 << 20; i += 4099)
		ASSERT_EQ(0xab, ((uint8_t *)self->b.map)[i]);
	EXPECT_EQ(0xab, ((uint8_t *)self->b.map)[(1 << 20) - 1]);
	/* A point nobody will signal is refused at submit, not waited for. */
	{
		struct drm_npu_sync p9 = { .handle = tl, .point = 9 };
		struct drm_npu_submit s = {
			.cmd_handle = cmd2.handle, .cmd_size = 32,
			.in_sync_count = 1, .in_syncs = (uintptr_t)&p9,
		};
		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
		EXPECT_EQ(EINVAL, errno);
	}
	drmSyncobjDestroy(self->fd, tl);
	bo_free(self->fd, &cmd2);
}

/* A syncobj shared between two files orders jobs of both. */
TEST_F(npu, syncobj_across_files)
{
	int fd2 = open_npu(), sfd;
	uint32_t h2;
	struct bo cmd2, dst2;
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, self->a.va, 64, 0x77777777, 0 };

	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, bo_new(fd2, 4096, &cmd2));
	ASSERT_EQ(0, bo_new(fd2, 4096, &dst2));
	ASSERT_EQ(0, drmSyncobjHandleToFD(self->fd, self->sync, &sfd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(fd2, sfd, &h2));
	close(sfd);
	ASSERT_EQ(0, submit(self->fd, &self->cmd, &f, 32, self->sync, 0, 0, 0, NULL, 0));
	{
		struct npu_cmd_dma_fill f2 = { { NPU_CMD_DMA_FILL, 32 }, dst2.va, 64, 0x99999999, 0 };
		uint32_t done;

		ASSERT_EQ(0, drmSyncobjCreate(fd2, 0, &done));
		ASSERT_EQ(0, submit(fd2, &cmd2, &f2, 32, done, 0, h2, 0, NULL, 0));
		ASSERT_EQ(0, wait_sync(fd2, done, 0));
	}
	EXPECT_EQ(0x77, ((uint8_t *)self->a.map)[63]);
	EXPECT_EQ(0x99, ((uint8_t *)dst2.map)[63]);
	close(fd2);
}

TEST_F(npu, mmu_fault_then_next_jobs_succeed)
{
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, self->a.va, 0x7000000000ull, 64 };
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, self->b.va, 64, 0x42424242, 0 };
	struct drm_npu_job_result *r = result(&self->status, 0);
	int fd2 = open_npu();
	struct bo cmd2, st2;

	ASSERT_EQ(0, submit(self->fd, &self->cmd, &cp, 32, self->sync, 0, 0, 0, &self->status, 0));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_MMU_FAULT, r->status);
	EXPECT_EQ(0x7000000000ull, r->fault_va);
	/* Same file, next job. */
	ASSERT_EQ(0, submit(self->fd, &self->cmd, &f, 32, self->sync, 0, 0, 0, &self->status, 0));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, r->status);
	EXPECT_EQ(0x42, ((uint8_t *)self->b.map)[0]);
	/* Another file. */
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, bo_new(fd2, 4096, &cmd2));
	ASSERT_EQ(0, bo_new(fd2, 4096, &st2));
	f.dst = st2.va + 2048;
	{
		uint32_t s2;

		ASSERT_EQ(0, drmSyncobjCreate(fd2, 0, &s2));
		ASSERT_EQ(0, submit(fd2, &cmd2, &f, 32, s2, 0, 0, 0, &st2, 0));
		ASSERT_EQ(0, wait_sync(fd2, s2, 0));
		EXPECT_EQ(DRM_NPU_JOB_OK, result(&st2, 0)->status);
	}
	close(fd2);
}

/*
 * A batch: three command buffers of one BO in one submit, each with its
 * own result; the one that faults fails alone, the next still runs; they
 * run in order, and the job (its syncobj) ends after the last.
 */
TEST_F(npu, batch_runs_each_with_its_result)
{
	struct npu_cmd_dma_fill fa = { { NPU_CMD_DMA_FILL, 32 }, self->a.va, 64, 0x11111111, 0 };
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, 0x7000000000ull, self->b.va, 64 };
	struct npu_cmd_dma_fill fb = { { NPU_CMD_DMA_FILL, 32 }, self->b.va + 64, 64, 0x22222222, 0 };
	struct drm_npu_submit_cmd cmds[3];
	struct drm_npu_sync out = { .handle = self->sync };
	struct drm_npu_submit s = {
		.cmds = (uintptr_t)cmds, .cmd_count = 3, .out_sync_count = 1,
		.out_syncs = (uintptr_t)&out, .status_handle = self->status.handle,
	};
	const void *bodies[3] = { &fa, &cp, &fb };

	for (int i = 0; i < 3; i++) {
		memcpy((char *)self->cmd.map + 256 * i, bodies[i], 32);
		cmds[i] = (struct drm_npu_submit_cmd){ .cmd_handle = self->cmd.handle,
			.cmd_offset = 256 * i, .cmd_size = 32, .status_offset = 64 * i };
	}
	memset(self->b.map, 0x5a, 128);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, result(&self->status, 0)->status);
	EXPECT_EQ(DRM_NPU_JOB_MMU_FAULT, result(&self->status, 64)->status);
	EXPECT_EQ(0x7000000000ull, result(&self->status, 64)->fault_va);
	EXPECT_EQ(DRM_NPU_JOB_OK, result(&self->status, 128)->status);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(s.seqno, result(&self->status, 64 * i)->seqno);
		EXPECT_LE(result(&self->status, 64 * i)->start_ns,
			  result(&self->status, 64 * i)->end_ns);
	}
	EXPECT_LE(result(&self->status, 0)->end_ns, result(&self->status, 64)->start_ns);
	EXPECT_LE(result(&self->status, 64)->end_ns, result(&self->status, 128)->start_ns);
	EXPECT_EQ(0x11, ((uint8_t *)self->a.map)[63]);
	EXPECT_EQ(0x5a, ((uint8_t *)self->b.map)[0]);	/* the copy never wrote */
	EXPECT_EQ(0x22, ((uint8_t *)self->b.map)[127]);

	/* The longest batch: 64 no-ops, 64 results; the ring takes it whole. */
	{
		struct drm_npu_submit_cmd many[64];

		memcpy(self->cmd.map, (uint32_t[]){ NPU_CMD_NOP, 8 }, 8);
		for (int i = 0; i < 64; i++)
			many[i] = (struct drm_npu_submit_cmd){ .cmd_handle = self->cmd.handle,
				.cmd_size = 8, .status_offset = 64 * i };
		s.cmds = (uintptr_t)many;
		s.cmd_count = 64;
		s.seqno = 0;
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
		ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
		for (int i = 0; i < 64; i++)
			EXPECT_EQ(DRM_NPU_JOB_OK, result(&self->status, 64 * i)->status);
	}
}

TEST_F(npu, malformed_command_reports_offset)
{
	uint32_t cmds[6] = { NPU_CMD_NOP, 8, 77, 8, 0, 0 };
	struct drm_npu_job_result *r = result(&self->status, 0);

	ASSERT_EQ(0, submit(self->fd, &self->cmd, cmds, 16, self->sync, 0, 0, 0, &self->status, 0));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_INVALID_CMD, r->status);
	EXPECT_EQ(8u, r->error_offset);
}

/* Every way a submit can be wrong is refused, with distinct errors. */
TEST_F(npu, submit_rejects_bad_arguments)
{
	struct drm_npu_sync sync = { .handle = self->sync };
	uint32_t bos[2] = { self->a.handle, 0xdead };
	struct drm_npu_submit good = { .cmd_handle = self->cmd.handle, .cmd_size = 8 };
	struct drm_npu_submit s;
	struct { const char *what; int err; } expect[] = {
		{ "ring", EINVAL }, { "flags", EINVAL }, { "seqno", EINVAL },
		{ "cmd_size 0", EINVAL }, { "cmd_size odd", EINVAL },
		{ "cmd_size huge", E2BIG }, { "cmd_offset odd", EINVAL },
		{ "cmd past BO", ERANGE }, { "cmd handle", ENOENT },
		{ "bo count", E2BIG }, { "bo handle", ENOENT }, { "bos pointer", EFAULT },
		{ "in sync handle", ENOENT }, { "in sync flags", EINVAL },
		{ "in sync count", E2BIG }, { "out sync handle", ENOENT },
		{ "out syncs pointer", EFAULT }, { "status offset", EINVAL },
		{ "status range", ERANGE }, { "status handle", ENOENT },
		{ "status offset without BO", EINVAL }, { "pad", EINVAL },
		{ "batch with cmd_handle", EINVAL }, { "batch too long", E2BIG },
		{ "batch pointer", EFAULT }, { "batch cmd handle", ENOENT },
		{ "batch cmd_size odd", EINVAL }, { "batch cmd past BO", ERANGE },
		{ "batch status offset", EINVAL }, { "batch status range", ERANGE },
		{ "batch status offset without BO", EINVAL },
	};
	struct drm_npu_submit_cmd cmds[2] = {
		{ .cmd_handle = self->cmd.handle, .cmd_size = 8 },
		{ .cmd_handle = self->cmd.handle, .cmd_size = 8 },
	};
	struct drm_npu_submit batch = { .cmds = (uintptr_t)cmds, .cmd_count = 2 };

	memcpy(self->cmd.map, (uint32_t[]){ NPU_CMD_NOP, 8 }, 8);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &good));
	for (unsigned int i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		struct drm_npu_sync bad = sync;

		s = good;
		s.seqno = 0;	/* the good submit wrote its seqno back */
		switch (i) {
		case 0: s.ring = 4; break;
		case 1: s.flags = 1u << 31; break;	/* no such flag */
		case 2: s.seqno = 1; break;
		case 3: s.cmd_size = 0; break;
		case 4: s.cmd_size = 12; break;
		case 5: s.cmd_size = 2u << 20; break;
		case 6: s.cmd_offset = 4; break;
		case 7: s.cmd_offset = 65536 - 8; s.cmd_size = 16; break;
		case 8: s.cmd_handle = 0xdead; break;
		case 9: s.bo_count = 100000; s.bos = (uintptr_t)bos; break;
		case 10: s.bo_count = 2; s.bos = (uintptr_t)bos; break;
		case 11: s.bo_count = 1; s.bos = 16; break;
		case 12: bad.handle = 0xdead; s.in_sync_count = 1; s.in_syncs = (uintptr_t)&bad; break;
		case 13: bad.flags = 1; s.in_sync_count = 1; s.in_syncs = (uintptr_t)&bad; break;
		case 14: s.in_sync_count = 1000000; s.in_syncs = (uintptr_t)&bad; break;
		case 15: bad.handle = 0xdead; s.out_sync_count = 1; s.out_syncs = (uintptr_t)&bad; break;
		case 16: s.out_sync_count = 1; s.out_syncs = 16; break;
		case 17: s.status_handle = self->status.handle; s.status_offset = 4; break;
		case 18: s.status_handle = self->status.handle; s.status_offset = 65536 - 32; break;
		case 19: s.status_handle = 0xdead; break;
		case 20: s.status_offset = 8; break;
		case 21: s.pad = 1; break;
		case 22: s.cmds = (uintptr_t)cmds; s.cmd_count = 2; break;
		case 23: s = batch; s.cmd_count = 65; break;
		case 24: s = batch; s.cmds = 16; break;
		default: s = batch; break;
		}
		cmds[1] = cmds[0];
		switch (i) {
		case 25: cmds[1].cmd_handle = 0xdead; break;
		case 26: cmds[1].cmd_size = 12; break;
		case 27: cmds[1].cmd_offset = 65536 - 8; cmds[1].cmd_size = 16; break;
		case 28: s.status_handle = self->status.handle; cmds[1].status_offset = 4; break;
		case 29: s.status_handle = self->status.handle; cmds[1].status_offset = 65536 - 32;
			break;
		case 30: cmds[1].status_offset = 8; break;
		}
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s)) TH_LOG("%s", expect[i].what);
		EXPECT_EQ(expect[i].err, errno) TH_LOG("%s", expect[i].what);
	}
	cmds[1] = cmds[0];
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &batch));	/* the batch itself is good */
	/* The file still works. */
	ASSERT_EQ(0, submit(self->fd, &self->cmd, NULL, 8, self->sync, 0, 0, 0, NULL, 0));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
}

/*
 * Read @va through a DMA copy into @dst on @fd's own context: 0 if the job
 * ended in an MMU fault at @va and @dst was left alone, else -1.
 */
static int copy_faults(int fd, struct bo *cmd, struct bo *dst, struct bo *status, uint64_t va)
{
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, va, dst->va, 4096 };
	struct drm_npu_job_result *r = result(status, 0);
	uint32_t sync;
	int ret = -1;

	memset(dst->map, 0, 4096);
	if (drmSyncobjCreate(fd, 0, &sync))
		return -1;
	if (!submit(fd, cmd, &cp, 32, sync, 0, 0, 0, status, 0) && !wait_sync(fd, sync, 0) &&
	    r->status == DRM_NPU_JOB_MMU_FAULT && r->fault_va == va &&
	    ((uint8_t *)dst->map)[0] == 0)
		ret = 0;
	drmSyncobjDestroy(fd, sync);
	return ret;
}

/*
 * Two processes, each with a secret buffer at an address the other has
 * nothing mapped at: neither can read the other's. The parent's sits above
 * a 32 MiB pad that it frees again, the child's above 16 MiB of its own.
 * Each side waits on a pipe, not on a timer, so the other's buffer is
 * alive while it tries.
 */
TEST_F(npu, processes_cannot_reach_each_other)
{
	int to_child[2], to_parent[2], status;
	uint64_t child_va;
	struct bo pad, secret;
	char verdict = 0, done = 'd';
	pid_t pid;

	/* The parent's secret, above the child's 16 MiB of padding. */
	ASSERT_EQ(0, bo_new(self->fd, 32 << 20, &pad));
	ASSERT_EQ(0, bo_new(self->fd, 4096, &secret));
	memset(secret.map, 0xa5, 4096);
	bo_free(self->fd, &pad);
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = open_npu();
		struct bo pad1, pad2, mine, cmd, dst, st;
		char ok;

		/* The child's secret, above anything the parent has but its pad. */
		if (fd < 0 || bo_new(fd, 8 << 20, &pad1) || bo_new(fd, 8 << 20, &pad2) ||
		    bo_new(fd, 4096, &mine) || bo_new(fd, 4096, &cmd) || bo_new(fd, 4096, &dst) ||
		    bo_new(fd, 4096, &st))
			_exit(1);
		memset(mine.map, 0x5e, 4096);
		if (write(to_parent[1], &mine.va, 8) != 8)
			_exit(1);
		ok = copy_faults(fd, &cmd, &dst, &st, secret.va) ? 'n' : 'y';
		if (write(to_parent[1], &ok, 1) != 1 || read(to_child[0], &ok, 1) != 1)
			_exit(1);
		_exit(0);	/* only once the parent has tried */
	}
	ASSERT_EQ(8, read(to_parent[0], &child_va, 8));
	/* The layout the test relies on: the child's secret is in the freed pad. */
	ASSERT_GE(child_va, pad.va);
	ASSERT_LE(child_va + 4096, pad.va + pad.size);
	EXPECT_EQ(0, copy_faults(self->fd, &self->cmd, &self->b, &self->status, child_va));
	EXPECT_EQ(1, read(to_parent[0], &verdict, 1));
	EXPECT_EQ('y', verdict) TH_LOG("the child read the parent's buffer");
	EXPECT_EQ(1, write(to_child[1], &done, 1));
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("child status %d", status);
	bo_free(self->fd, &secret);
}

/* A buffer exported as a dma-buf and imported by another file. */
TEST_F(npu, prime_export_import)
{
	int fd2 = open_npu(), dmabuf;
	uint32_t h2, s2;
	struct drm_npu_bo_info info = {};
	struct bo cmd2;
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, 0, 4096, 0x3c3c3c3c, 0 };

	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->a.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(fd2, dmabuf, &h2));
	close(dmabuf);
	info.handle = h2;
	ASSERT_EQ(0, ioctl(fd2, DRM_IOCTL_NPU_BO_INFO, &info));
	EXPECT_EQ(self->a.size, info.size);
	EXPECT_NE(0u, info.va);
	ASSERT_EQ(0, bo_new(fd2, 4096, &cmd2));
	ASSERT_EQ(0, drmSyncobjCreate(fd2, 0, &s2));
	memset(self->a.map, 0, 8192);
	f.dst = info.va + 4096;
	ASSERT_EQ(0, submit(fd2, &cmd2, &f, 32, s2, 0, 0, 0, NULL, 0));
	ASSERT_EQ(0, wait_sync(fd2, s2, 0));
	/* The exporter sees what the importer's job wrote. */
	EXPECT_EQ(0, ((uint8_t *)self->a.map)[4095]);
	EXPECT_EQ(0x3c, ((uint8_t *)self->a.map)[4096]);
	EXPECT_EQ(0x3c, ((uint8_t *)self->a.map)[8191]);
	close(fd2);
	/* The buffer outlives the importer. */
	EXPECT_EQ(0x3c, ((uint8_t *)self->a.map)[8191]);
}

/*
 * Every open file is a device context: when all are taken, one more open
 * fails with EBUSY and nothing else; a close gives one back.
 */
TEST_F(npu, contexts_run_out_cleanly)
{
	int max = self->info.max_contexts, n = 0, fd, *fds;
	char node[64];

	fd = open_npu_node(node, sizeof(node));
	ASSERT_GE(fd, 0);
	close(fd);
	fds = calloc(max, sizeof(*fds));
	ASSERT_NE(NULL, fds);
	while (n < max) {
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			break;
		fds[n++] = fd;
	}
	/* The fixture's file holds one context; nothing else runs beside us. */
	EXPECT_EQ(max - 1, n);
	EXPECT_EQ(EBUSY, errno);
	if (n > 0) {
		close(fds[--n]);
		fds[n] = open(node, O_RDWR | O_CLOEXEC);
		EXPECT_GE(fds[n], 0);
		if (fds[n] >= 0)
			n++;
	}
	while (n > 0)
		close(fds[--n]);
	free(fds);
}

/* Closing a file with jobs still queued must neither hang nor crash. */
TEST_F(npu, close_with_jobs_in_flight)
{
	for (int round = 0; round < 3; round++) {
		int fd2 = open_npu();
		struct bo cmd2, dst2;
		struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, 0, 65536, 1, 0 };

		ASSERT_GE(fd2, 0);
		ASSERT_EQ(0, bo_new(fd2, 4096, &cmd2));
		ASSERT_EQ(0, bo_new(fd2, 65536, &dst2));
		f.dst = dst2.va;
		memcpy(cmd2.map, &f, sizeof(f));
		for (int i = 0; i < 100; i++) {
			struct drm_npu_submit s = {
				.cmd_handle = cmd2.handle, .cmd_size = 32, .ring = i % 4,
			};
			ASSERT_EQ(0, ioctl(fd2, DRM_IOCTL_NPU_SUBMIT, &s));
		}
		munmap(cmd2.map, cmd2.size);
		munmap(dst2.map, dst2.size);
		close(fd2);
	}
	/* The device is fine afterwards. */
	ASSERT_EQ(0, submit(self->fd, &self->cmd, (uint32_t[]){ NPU_CMD_NOP, 8 }, 8, self->sync,
			    0, 0, 0, &self->status, 0));
	ASSERT_EQ(0, wait_sync(self->fd, self->sync, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, result(&self->status, 0)->status);
}

TEST_HARNESS_MAIN
