// SPDX-License-Identifier: MIT
/*
 * libnpu_test.c - libnpu's core API in the guest, through the driver and
 * the firmware (kselftest harness).
 */
#define _GNU_SOURCE
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "npu.h"
#include "train.h"
#include "small_cnn.h"

FIXTURE(lib) {
	npu_device *dev;
	npu_cmdbuf *cb;
	npu_buffer *a, *b;
};

FIXTURE_SETUP(lib)
{
	ASSERT_GE(npu_device_count(), 1);
	ASSERT_EQ(NPU_OK, npu_open(0, &self->dev));
	ASSERT_EQ(NPU_OK, npu_cmdbuf_new(self->dev, 65536, &self->cb));
	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 1 << 20, &self->a));
	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 1 << 20, &self->b));
	ASSERT_NE(NULL, npu_buffer_map(self->a));
	ASSERT_NE(NULL, npu_buffer_map(self->b));
}

FIXTURE_TEARDOWN(lib)
{
	npu_buffer_free(self->a);
	npu_buffer_free(self->b);
	npu_cmdbuf_free(self->cb);
	npu_close(self->dev);
}

/* What NPU results are compared with: the CPU reference, whatever else is installed. */

/*
 * How many ops of @p run somewhere other than the NPU: asked through
 * npu_plan_op_backend, so OpenCL counts as much as the CPU. Views (reshape,
 * NPU_BACKEND_NONE) move no data and run nowhere. -1 for no op at all.
 */
static int ops_off_npu(const npu_plan *p)
{
	int off = 0, op, b;

	for (op = 0; (b = npu_plan_op_backend(p, op)) >= 0; op++)
		off += b != NPU_BACKEND_NPU && b != NPU_BACKEND_NONE;
	return op ? off : -1;
}
static const struct npu_compile_opts cpu_ref = { .backend = NPU_BACKEND_CPU, .strict = 0 };

static int run(npu_device *dev, npu_cmdbuf *cb, struct npu_job_result *res)
{
	npu_job *job;
	int err = npu_submit(dev, cb, NULL, &job);

	if (err)
		return err;
	err = npu_job_wait(job, 60ll * 1000000000);
	if (!err)
		err = npu_job_result(job, res);
	npu_job_free(job);
	return err;
}

TEST_F(lib, device_info)
{
	struct npu_device_info info;
	npu_device *none;

	ASSERT_EQ(NPU_OK, npu_device_info(self->dev, &info));
	EXPECT_EQ(0, strncmp(info.node, "/dev/accel/accel", 16));
	EXPECT_EQ(0x00020000u, info.fw_version);	/* 2.0.0, the Makefile's */
	EXPECT_EQ(4u, info.num_rings);
	EXPECT_EQ(NPU_ENODEV, npu_open(99, &none));
	EXPECT_EQ(NULL, none);
	EXPECT_EQ(NPU_EINVAL, npu_open(0, NULL));
	EXPECT_EQ(NPU_EINVAL, npu_device_info(NULL, &info));
}

TEST_F(lib, buffers)
{
	npu_buffer *buf;

	EXPECT_EQ(NPU_EINVAL, npu_buffer_alloc(self->dev, 0, &buf));
	EXPECT_EQ(NPU_E2BIG, npu_buffer_alloc(self->dev, (size_t)1 << 40, &buf));
	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 100, &buf));
	EXPECT_EQ(4096u, npu_buffer_size(buf));
	EXPECT_NE(0u, npu_buffer_va(buf));
	EXPECT_EQ(npu_buffer_map(buf), npu_buffer_map(buf));	/* mapped once */
	npu_buffer_free(buf);
	npu_buffer_free(NULL);
}

TEST_F(lib, copy_fill_timestamp)
{
	struct npu_job_result res;
	uint8_t *a = npu_buffer_map(self->a), *b = npu_buffer_map(self->b);
	uint64_t ts;

	for (int i = 0; i < 65536; i++)
		a[i] = (uint8_t)(i ^ (i >> 8));
	memset(b, 0, 1 << 20);
	ASSERT_EQ(NPU_OK, npu_cmd_copy(self->cb, npu_buffer_va(self->b), npu_buffer_va(self->a), 65536));
	ASSERT_EQ(NPU_OK, npu_cmd_barrier(self->cb));
	ASSERT_EQ(NPU_OK, npu_cmd_fill(self->cb, npu_buffer_va(self->b) + 65536, 100, 0x01020304));
	ASSERT_EQ(NPU_OK, npu_cmd_timestamp(self->cb, npu_buffer_va(self->b) + 131072));
	ASSERT_EQ(NPU_OK, npu_cmd_nop(self->cb));
	EXPECT_EQ(32u + 8 + 32 + 16 + 8, npu_cmdbuf_used(self->cb));
	ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
	EXPECT_EQ(0, memcmp(a, b, 65536));
	EXPECT_EQ(4, b[65536]);
	EXPECT_EQ(1, b[65536 + 99]);
	EXPECT_EQ(0, b[65536 + 100]);
	memcpy(&ts, b + 131072, 8);
	EXPECT_NE(0u, ts);
	EXPECT_GT(res.cycles, 0u);
	EXPECT_EQ(65536u + 100 + 8 + 96, res.bytes);
	EXPECT_EQ(NPU_EINVAL, npu_cmd_timestamp(self->cb, 4));
}

/*
 * Threads sharing one device, each with its own command buffer and buffer:
 * every job fills a length unique to its thread, so a job that read another
 * job's result slot would see the wrong byte count (data and commands).
 */
struct filler {
	npu_device *dev;
	int id, bad;
};

static void *fill_jobs(void *arg)
{
	struct filler *f = arg;
	size_t len = 4096u * (f->id + 1);
	npu_cmdbuf *cb = NULL;
	npu_buffer *buf = NULL;
	uint8_t *map;

	if (npu_cmdbuf_new(f->dev, 4096, &cb) || npu_buffer_alloc(f->dev, len, &buf) ||
	    !(map = npu_buffer_map(buf))) {
		f->bad = -1;
		goto out;
	}
	for (int i = 0; i < 150 && !f->bad; i++) {
		uint8_t v = (uint8_t)(f->id * 16 + i);
		struct npu_job_result res;

		if (npu_cmdbuf_reset(cb) ||
		    npu_cmd_fill(cb, npu_buffer_va(buf), len, v * 0x01010101u) ||
		    run(f->dev, cb, &res) || res.state != NPU_JOB_STATE_DONE ||
		    res.bytes != len + npu_cmdbuf_used(cb) || map[0] != v || map[len - 1] != v)
			f->bad = i + 1;
	}
out:
	npu_buffer_free(buf);
	npu_cmdbuf_free(cb);
	return NULL;
}

TEST_F(lib, threads_share_a_device)
{
	struct filler f[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		f[i] = (struct filler){ self->dev, i, 0 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, fill_jobs, &f[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, f[i].bad) TH_LOG("thread %d went wrong at job %d", i, f[i].bad);
	}
}

/*
 * Jobs freed before they end give their slots back once they end: after
 * 200 such jobs, NPU_JOBS_MAX jobs can still be alive at once.
 */
TEST_F(lib, jobs_freed_unfinished_give_back_their_slots)
{
	static npu_job *held[NPU_JOBS_MAX];
	npu_job *job;
	int n = 0;

	ASSERT_EQ(NPU_OK, npu_cmd_copy(self->cb, npu_buffer_va(self->b), npu_buffer_va(self->a),
				       1 << 20));
	for (int i = 0; i < 200; i++) {
		ASSERT_EQ(NPU_OK, npu_submit(self->dev, self->cb, NULL, &job));
		npu_job_free(job);	/* most are still queued */
	}
	while (n < NPU_JOBS_MAX && npu_submit(self->dev, self->cb, NULL, &held[n]) == NPU_OK)
		n++;
	EXPECT_EQ(NPU_JOBS_MAX, n);
	if (n)
		EXPECT_EQ(NPU_OK, npu_job_wait(held[n - 1], 600ll * 1000000000));
	for (int i = 0; i < n; i++)
		npu_job_free(held[i]);
}

/*
 * A job's fence as a sync_file (npu_job_fence_fd): once it polls readable
 * the job has ended, its result and its writes there without a wait; it
 * holds the fence, not the job, so freeing the job first changes nothing.
 */
TEST_F(lib, job_fence_fd_polls_when_done)
{
	struct npu_job_result res;
	npu_job *job;
	int fd;

	EXPECT_EQ(NPU_EINVAL, npu_job_fence_fd(NULL));
	ASSERT_EQ(NPU_OK, npu_cmd_fill(self->cb, npu_buffer_va(self->a), 1 << 20, 0x5a5a5a5a));
	ASSERT_EQ(NPU_OK, npu_submit(self->dev, self->cb, NULL, &job));
	fd = npu_job_fence_fd(job);
	ASSERT_LE(0, fd) TH_LOG("%s", npu_last_error());
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 600000));
	ASSERT_EQ(NPU_OK, npu_job_result(job, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
	EXPECT_EQ(0x5a, ((uint8_t *)npu_buffer_map(self->a))[(1 << 20) - 1]);
	close(fd);
	npu_job_free(job);

	ASSERT_EQ(NPU_OK, npu_cmd_fill(self->cb, npu_buffer_va(self->a), 1 << 20, 0x3c3c3c3c));
	ASSERT_EQ(NPU_OK, npu_submit(self->dev, self->cb, NULL, &job));
	fd = npu_job_fence_fd(job);
	npu_job_free(job);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 600000));
	EXPECT_EQ(0x3c, ((uint8_t *)npu_buffer_map(self->a))[(1 << 20) - 1]);
	close(fd);
}

TEST_F(lib, cmdbuf_limits)
{
	npu_cmdbuf *small;

	ASSERT_EQ(NPU_OK, npu_cmdbuf_new(self->dev, 64, &small));
	/* The BO is a page; fill it, then one more command does not fit. */
	for (int i = 0; i < 4096 / 8; i++)
		ASSERT_EQ(NPU_OK, npu_cmd_nop(small));
	EXPECT_EQ(NPU_ENOSPC, npu_cmd_nop(small));
	EXPECT_EQ(NPU_E2BIG, npu_cmd_copy(small, 0, 0, 1ull << 40));
	EXPECT_EQ(NPU_OK, npu_cmdbuf_reset(small));
	EXPECT_EQ(0u, npu_cmdbuf_used(small));
	npu_cmdbuf_free(small);
	EXPECT_EQ(NPU_E2BIG, npu_cmdbuf_new(self->dev, 64 << 20, &small));
}

TEST_F(lib, dependencies_order_jobs)
{
	npu_cmdbuf *cb2;
	npu_job *j1, *j2;
	struct npu_job_result res;
	npu_buffer *bufs[2] = { self->a, self->b };

	ASSERT_EQ(NPU_OK, npu_cmdbuf_new(self->dev, 4096, &cb2));
	ASSERT_EQ(NPU_OK, npu_cmd_fill(self->cb, npu_buffer_va(self->a), 1 << 20, 0x99999999));
	ASSERT_EQ(NPU_OK, npu_cmd_copy(cb2, npu_buffer_va(self->b), npu_buffer_va(self->a), 1 << 20));
	{
		struct npu_submit_opts o1 = { .ring = 3, .buffers = bufs, .nbuffers = 2 };

		ASSERT_EQ(NPU_OK, npu_submit(self->dev, self->cb, &o1, &j1));
	}
	{
		npu_job *deps[1] = { j1 };
		struct npu_submit_opts o2 = { .ring = 0, .deps = deps, .ndeps = 1 };

		ASSERT_EQ(NPU_OK, npu_submit(self->dev, cb2, &o2, &j2));
	}
	ASSERT_EQ(NPU_OK, npu_job_wait(j2, -1));
	ASSERT_EQ(NPU_OK, npu_job_result(j1, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
	EXPECT_EQ(0x99, ((uint8_t *)npu_buffer_map(self->b))[(1 << 20) - 1]);
	/* A finished command buffer can be reset and reused. */
	EXPECT_EQ(NPU_OK, npu_cmdbuf_reset(cb2));
	npu_job_free(j1);
	npu_job_free(j2);
	npu_cmdbuf_free(cb2);
}

TEST_F(lib, failed_job_reports_state)
{
	struct npu_job_result res;

	ASSERT_EQ(NPU_OK, npu_cmd_nop(self->cb));
	ASSERT_EQ(NPU_OK, npu_cmd_copy(self->cb, 0x7000000000ull, npu_buffer_va(self->a), 16));
	ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
	EXPECT_EQ(NPU_JOB_STATE_MMU_FAULT, res.state);
	EXPECT_EQ(0x7000000000ull, res.fault_va);
	EXPECT_EQ(8u, res.error_offset);
	EXPECT_STREQ("MMU fault", npu_job_state_name(res.state));
	/* And the device goes on. */
	npu_cmdbuf_reset(self->cb);
	npu_cmd_nop(self->cb);
	ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
}

/*
 * A polled wait sees the job's whole result and its data the moment it
 * returns, with no syncobj wait before it: the driver publishes the status
 * word last, and the device wrote the data before its completion record.
 */
TEST_F(lib, polled_wait_sees_result_and_data)
{
	struct npu_submit_opts poll = { .flags = NPU_SUBMIT_POLL }, bad = { .flags = 1u << 31 };
	volatile uint8_t *b = npu_buffer_map(self->b);
	struct npu_job_result res;
	npu_job *job;

	for (uint32_t i = 1; i <= 100; i++) {
		uint32_t pattern = i * 0x01010101u;

		/* Ended (its result seen), so the commands may change: no EBUSY. */
		ASSERT_EQ(NPU_OK, npu_cmdbuf_reset(self->cb));
		ASSERT_EQ(NPU_OK, npu_cmd_fill(self->cb, npu_buffer_va(self->b), 1 << 20, pattern));
		ASSERT_EQ(NPU_OK, npu_submit(self->dev, self->cb, &poll, &job));
		ASSERT_EQ(NPU_OK, npu_job_wait(job, 60ll * 1000000000));
		ASSERT_EQ(NPU_OK, npu_job_result(job, &res));
		EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
		EXPECT_EQ((uint8_t)i, b[0]);
		EXPECT_EQ((uint8_t)i, b[(1 << 20) - 1]);
		EXPECT_EQ((1u << 20) + npu_cmdbuf_used(self->cb), res.bytes);
		npu_job_free(job);
	}
	/* A failed job's record is complete too: the fault's address and offset. */
	ASSERT_EQ(NPU_OK, npu_cmdbuf_reset(self->cb));
	ASSERT_EQ(NPU_OK, npu_cmd_nop(self->cb));
	ASSERT_EQ(NPU_OK, npu_cmd_copy(self->cb, 0x7000000000ull, npu_buffer_va(self->a), 16));
	ASSERT_EQ(NPU_OK, npu_submit(self->dev, self->cb, &poll, &job));
	ASSERT_EQ(NPU_OK, npu_job_wait(job, 60ll * 1000000000));
	ASSERT_EQ(NPU_OK, npu_job_result(job, &res));
	EXPECT_EQ(NPU_JOB_STATE_MMU_FAULT, res.state);
	EXPECT_EQ(0x7000000000ull, res.fault_va);
	EXPECT_EQ(8u, res.error_offset);
	npu_job_free(job);
	EXPECT_EQ(NPU_EINVAL, npu_submit(self->dev, self->cb, &bad, &job));
}

/*
 * npu_submit_batch: three command buffers (a fill, a copy that faults, a
 * fill) in one batch, each job with its own result, polled and not; the
 * same command buffer twice in a batch; malformed calls refused with no
 * job left behind.
 */
TEST_F(lib, batch_jobs_have_their_own_results)
{
	struct npu_submit_opts poll = { .flags = NPU_SUBMIT_POLL };
	uint8_t *a = npu_buffer_map(self->a), *b = npu_buffer_map(self->b);
	npu_cmdbuf *cbs[NPU_BATCH_MAX + 1];
	npu_job *jobs[NPU_BATCH_MAX + 1];
	struct npu_job_result res;

	for (int i = 0; i < 3; i++)
		ASSERT_EQ(NPU_OK, npu_cmdbuf_new(self->dev, 4096, &cbs[i]));
	ASSERT_EQ(NPU_OK, npu_cmd_fill(cbs[0], npu_buffer_va(self->a), 4096, 0x33333333));
	ASSERT_EQ(NPU_OK, npu_cmd_copy(cbs[1], npu_buffer_va(self->b), 0x7000000000ull, 64));
	ASSERT_EQ(NPU_OK, npu_cmd_fill(cbs[2], npu_buffer_va(self->b) + 4096, 4096, 0x44444444));
	for (int p = 0; p < 2; p++) {
		memset(a, 0, 4096);
		memset(b, 0, 8192);
		ASSERT_EQ(NPU_OK, npu_submit_batch(self->dev, cbs, 3, p ? &poll : NULL, jobs));
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(NPU_OK, npu_job_wait(jobs[i], 60ll * 1000000000));
		ASSERT_EQ(NPU_OK, npu_job_result(jobs[0], &res));
		EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
		EXPECT_EQ(4096u + npu_cmdbuf_used(cbs[0]), res.bytes);	/* the fill, its command */
		ASSERT_EQ(NPU_OK, npu_job_result(jobs[1], &res));
		EXPECT_EQ(NPU_JOB_STATE_MMU_FAULT, res.state);
		EXPECT_EQ(0x7000000000ull, res.fault_va);
		ASSERT_EQ(NPU_OK, npu_job_result(jobs[2], &res));
		EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
		EXPECT_EQ(0x33, a[4095]);
		EXPECT_EQ(0, b[0]);
		EXPECT_EQ(0x44, b[8191]);
		for (int i = 0; i < 3; i++)
			npu_job_free(jobs[i]);
	}
	/* One command buffer, the whole batch long: each job ends DONE. */
	{
		npu_cmdbuf *same[NPU_BATCH_MAX];

		for (int i = 0; i < NPU_BATCH_MAX; i++)
			same[i] = cbs[0];
		ASSERT_EQ(NPU_OK, npu_submit_batch(self->dev, same, NPU_BATCH_MAX, NULL, jobs));
		for (int i = 0; i < NPU_BATCH_MAX; i++) {
			ASSERT_EQ(NPU_OK, npu_job_wait(jobs[i], 60ll * 1000000000));
			ASSERT_EQ(NPU_OK, npu_job_result(jobs[i], &res));
			EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
			npu_job_free(jobs[i]);
		}
		EXPECT_EQ(NPU_E2BIG, npu_submit_batch(self->dev, same, NPU_BATCH_MAX + 1, NULL,
						      jobs));
	}
	jobs[0] = (npu_job *)1;
	EXPECT_EQ(NPU_EINVAL, npu_submit_batch(self->dev, cbs, 0, NULL, jobs));
	EXPECT_EQ(NPU_EINVAL, npu_submit_batch(NULL, cbs, 3, NULL, jobs));
	cbs[3] = NULL;
	EXPECT_EQ(NPU_EINVAL, npu_submit_batch(self->dev, cbs, 4, NULL, jobs));
	EXPECT_EQ(NULL, jobs[0]);	/* nothing left behind */
	npu_cmdbuf_reset(cbs[2]);	/* empty */
	EXPECT_EQ(NPU_EINVAL, npu_submit_batch(self->dev, cbs, 3, NULL, jobs));
	for (int i = 0; i < 3; i++)
		npu_cmdbuf_free(cbs[i]);
}

TEST_F(lib, submit_errors)
{
	npu_job *job;
	npu_cmdbuf *empty;
	struct npu_submit_opts bad_ring = { .ring = 7 };

	ASSERT_EQ(NPU_OK, npu_cmdbuf_new(self->dev, 4096, &empty));
	EXPECT_EQ(NPU_EINVAL, npu_submit(self->dev, empty, NULL, &job));	/* no commands */
	npu_cmd_nop(empty);
	EXPECT_EQ(NPU_EINVAL, npu_submit(self->dev, empty, &bad_ring, &job));
	EXPECT_EQ(NPU_EINVAL, npu_submit(NULL, empty, NULL, &job));
	EXPECT_EQ(NPU_EINVAL, npu_job_wait(NULL, 0));
	npu_cmdbuf_free(empty);
	EXPECT_STREQ("timed out waiting for the job", npu_strerror(NPU_ETIMEDOUT));
	EXPECT_STREQ("unknown error", npu_strerror(12345));
}

TEST_F(lib, dmabuf_between_devices)
{
	npu_device *dev2;
	npu_buffer *imp;
	npu_cmdbuf *cb2;
	struct npu_job_result res;
	int fd;

	ASSERT_EQ(NPU_OK, npu_open(0, &dev2));	/* a second file: its own address space */
	ASSERT_EQ(NPU_OK, npu_buffer_export(self->a, &fd));
	ASSERT_EQ(NPU_OK, npu_buffer_import(dev2, fd, &imp));
	close(fd);
	EXPECT_EQ(npu_buffer_size(self->a), npu_buffer_size(imp));
	ASSERT_EQ(NPU_OK, npu_cmdbuf_new(dev2, 4096, &cb2));
	ASSERT_EQ(NPU_OK, npu_cmd_fill(cb2, npu_buffer_va(imp), 4096, 0x55555555));
	ASSERT_EQ(NPU_OK, run(dev2, cb2, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
	EXPECT_EQ(0x55, ((uint8_t *)npu_buffer_map(self->a))[4095]);
	npu_cmdbuf_free(cb2);
	npu_buffer_free(imp);
	npu_close(dev2);
}

/* An int8 GEMM on the NPU, bit for bit against the CPU reference. */
TEST_F(lib, gemm_i8_matches_reference)
{
	struct npu_gemm_i8 p = { .m = 37, .n = 29, .k = 61, .a_zero = -7, .out_zero = 3,
				 .act_min = -128, .act_max = 127 };
	npu_buffer *w, *bias, *q, *out;
	int8_t *a = npu_buffer_map(self->a), want[37 * 29];
	int32_t mult[29], shift[29];
	struct npu_job_result res;
	uint32_t s = 1;

	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 29 * 61, &w));
	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 29 * 4, &bias));
	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 29 * 8, &q));
	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 37 * 29, &out));
	int8_t *wm = npu_buffer_map(w);
	int32_t *bm = npu_buffer_map(bias), *qm = npu_buffer_map(q);

	for (int i = 0; i < 37 * 61; i++)
		a[i] = (int8_t)((s = s * 1103515245 + 12345) >> 16);
	for (int i = 0; i < 29 * 61; i++)
		wm[i] = (int8_t)((s = s * 1103515245 + 12345) >> 16);
	for (int i = 0; i < 29; i++) {
		bm[i] = (int32_t)((s = s * 1103515245 + 12345) >> 16) % 5000;
		mult[i] = (int32_t)(0x40000000u + (((s = s * 1103515245 + 12345) >> 8) & 0x3fffffff));
		shift[i] = -8 - (i % 4);
		qm[2 * i] = mult[i];
		qm[2 * i + 1] = shift[i];
	}
	ASSERT_EQ(NPU_OK, npu_ref_gemm_i8(&p, a, wm, bm, mult, shift, want));
	ASSERT_EQ(NPU_OK, npu_cmd_gemm_i8(self->cb, &p, npu_buffer_va(self->a), npu_buffer_va(w),
					  npu_buffer_va(bias), npu_buffer_va(q),
					  npu_buffer_va(out)));
	ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
	EXPECT_EQ(0, memcmp(want, npu_buffer_map(out), sizeof(want)));
	EXPECT_GE(res.cycles, 61u);
	npu_buffer_free(w);
	npu_buffer_free(bias);
	npu_buffer_free(q);
	npu_buffer_free(out);
}

/* A 3x3 convolution, a depthwise and a grouped one on the NPU, against the reference. */
TEST_F(lib, conv2d_i8_matches_reference)
{
	for (int mode = 0; mode < 3; mode++) {
		int dw = mode == 1, grouped = mode == 2;
		struct npu_conv2d_i8 p = { .batch = 2, .in_h = 9, .in_w = 7, .in_c = grouped ? 6 : 5,
					   .out_h = 5, .out_w = 4, .out_c = dw ? 10 : 6,
					   .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2,
					   .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1,
					   .in_zero = 11, .out_zero = -4, .act_min = -128,
					   .act_max = 127, .depthwise = dw, .groups = grouped ? 3 : 0 };
		size_t in_sz = 2 * 9 * 7 * p.in_c;
		size_t f_sz = dw ? 3 * 3 * 10 : grouped ? 6 * 3 * 3 * 2 : 6 * 3 * 3 * 5;
		size_t out_sz = 2 * 5 * 4 * p.out_c;
		npu_buffer *f, *q, *out;
		int8_t *in = npu_buffer_map(self->a), want[2 * 5 * 4 * 10];
		int32_t mult[10], shift[10];
		struct npu_job_result res;
		uint32_t s = 3;

		ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, f_sz, &f));
		ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 80, &q));
		ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, out_sz, &out));
		int8_t *fm = npu_buffer_map(f);
		int32_t *qm = npu_buffer_map(q);

		for (size_t i = 0; i < in_sz; i++)
			in[i] = (int8_t)((s = s * 1103515245 + 12345) >> 16);
		for (size_t i = 0; i < f_sz; i++)
			fm[i] = (int8_t)((s = s * 1103515245 + 12345) >> 16);
		for (uint32_t i = 0; i < p.out_c; i++) {
			mult[i] = 0x50000000 + (int32_t)i * 0x1000000;
			shift[i] = -7;
			qm[2 * i] = mult[i];
			qm[2 * i + 1] = shift[i];
		}
		ASSERT_EQ(NPU_OK, npu_ref_conv2d_i8(&p, in, fm, NULL, mult, shift, want));
		ASSERT_EQ(NPU_OK, npu_cmdbuf_reset(self->cb));
		ASSERT_EQ(NPU_OK, npu_cmd_conv2d_i8(self->cb, &p, npu_buffer_va(self->a),
						    npu_buffer_va(f), 0, npu_buffer_va(q),
						    npu_buffer_va(out)));
		ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
		EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
		EXPECT_EQ(0, memcmp(want, npu_buffer_map(out), out_sz));
		npu_buffer_free(f);
		npu_buffer_free(q);
		npu_buffer_free(out);
	}
}

/* Pooling and an elementwise add through libnpu's builders, against the reference. */
TEST_F(lib, pool_and_eltwise_match_reference)
{
	struct npu_pool_i8 pp = { .batch = 1, .in_h = 6, .in_w = 6, .c = 3, .out_h = 3, .out_w = 3,
				  .k_h = 2, .k_w = 2, .stride_h = 2, .stride_w = 2,
				  .act_min = -128, .act_max = 127, .average = 1 };
	struct npu_eltwise_i8 ep = { .count = 1000, .a_zero = 3, .b_zero = -9, .out_zero = 1,
				     .act_min = -128, .act_max = 127, .a_mult = 1 << 30,
				     .a_shift = 0, .b_mult = 0x60000000, .b_shift = -1,
				     .out_mult = 0x50000000, .out_shift = -19, .left_shift = 20 };
	int8_t *a = npu_buffer_map(self->a), *b = npu_buffer_map(self->b);
	int8_t want_pool[27], want_add[1000];
	npu_buffer *out;
	struct npu_job_result res;

	ASSERT_EQ(NPU_OK, npu_buffer_alloc(self->dev, 8192, &out));
	for (int i = 0; i < 1000; i++) {
		a[i] = (int8_t)(i * 37);
		b[i] = (int8_t)(i * 91 + 5);
	}
	ASSERT_EQ(NPU_OK, npu_ref_pool_i8(&pp, a, want_pool));
	ASSERT_EQ(NPU_OK, npu_ref_eltwise_i8(&ep, a, b, want_add));
	ASSERT_EQ(NPU_OK, npu_cmdbuf_reset(self->cb));
	ASSERT_EQ(NPU_OK, npu_cmd_pool_i8(self->cb, &pp, npu_buffer_va(self->a), npu_buffer_va(out)));
	ASSERT_EQ(NPU_OK, npu_cmd_eltwise_i8(self->cb, &ep, npu_buffer_va(self->a),
					     npu_buffer_va(self->b), npu_buffer_va(out) + 4096));
	ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
	EXPECT_EQ(NPU_JOB_STATE_DONE, res.state);
	EXPECT_EQ(0, memcmp(want_pool, npu_buffer_map(out), sizeof(want_pool)));
	EXPECT_EQ(0, memcmp(want_add, (int8_t *)npu_buffer_map(out) + 4096, sizeof(want_add)));
	npu_buffer_free(out);
}

/*
 * A small CNN with random weights (conv 3x3 + ReLU, max pool, depthwise
 * 3x3 + ReLU6, conv 1x1, average pool, fully connected, softmax), run
 * whole on the NPU and on the CPU reference: bit for bit the same.
 */
TEST_F(lib, small_cnn_npu_matches_cpu_reference)
{
	npu_graph *gn = npu_graph_new(), *gc = npu_graph_new();
	npu_plan *pn, *pc, *pr;
	int in_n, out_n, in_c, out_c;
	int8_t x[2 * 16 * 16], yn[20], yc[20], yr[20];
	struct npu_plan_stats st;

	ASSERT_EQ(0, build_cnn(gn, &in_n, &out_n, 42));
	ASSERT_EQ(0, build_cnn(gc, &in_c, &out_c, 42));
	ASSERT_EQ(0, npu_graph_inputs(gn, &in_n, 1));
	ASSERT_EQ(0, npu_graph_outputs(gn, &out_n, 1));
	ASSERT_EQ(NPU_OK, npu_graph_compile(gn, self->dev, &pn));
	/* A second plan of the same graph, its intermediates sharing buffers. */
	ASSERT_EQ(NPU_OK, npu_graph_compile_opts(gn, self->dev, &(struct npu_compile_opts){
			.reuse_memory = 1 }, &pr));
	ASSERT_EQ(NPU_OK, npu_plan_stats(pr, &st));
	TH_LOG("storage: %llu bytes with reuse, %llu without",
	       (unsigned long long)st.storage_bytes, (unsigned long long)st.tensor_bytes);
	EXPECT_LT(st.storage_bytes, st.tensor_bytes);
	ASSERT_EQ(NPU_OK, npu_graph_compile_opts(gc, NULL, &cpu_ref, &pc));
	TH_LOG("placement:\n%s", npu_plan_report(pn));
	EXPECT_EQ(0, ops_off_npu(pn));	/* all on the NPU */
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(x); i++)
			x[i] = (int8_t)(i * 7 + round * 31);
		ASSERT_EQ(NPU_OK, npu_plan_run(pn, in_n, x, out_n, yn));
		ASSERT_EQ(NPU_OK, npu_plan_run(pc, in_c, x, out_c, yc));
		ASSERT_EQ(NPU_OK, npu_plan_execute(pr, (const void *[]){ x }, (void *[]){ yr }));
		EXPECT_EQ(0, memcmp(yn, yc, sizeof(yn)));
		EXPECT_EQ(0, memcmp(yr, yc, sizeof(yr)));
		EXPECT_GT(npu_plan_cycles(pn), 0u);
		/* Not a degenerate network: the class probabilities differ. */
		int lo = 127, hi = -128;

		for (int i = 0; i < 20; i++) {
			lo = yn[i] < lo ? yn[i] : lo;
			hi = yn[i] > hi ? yn[i] : hi;
		}
		EXPECT_LT(lo, hi);
	}
	npu_plan_free(pn);
	npu_plan_free(pc);
	npu_plan_free(pr);
	npu_graph_free(gn);
	npu_graph_free(gc);
}

/* A graph with a channel concat (an inception-style join) runs on the NPU. */
static int build_concat_graph(npu_graph *g, int *in, int *out)
{
	static int8_t w[4 * 1 * 1 * 4];
	struct npu_tensor_desc dx = { NPU_DT_INT8, 4, { 2, 6, 6, 4 }, 0.05f, -3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_INT8, 4, { 4, 1, 1, 4 }, 0.02f, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_INT8, 4, { 2, 6, 6, 12 }, 0.05f, -3, NULL, NULL, 0, 0 };
	int x, wt, a, ins[3];

	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (int8_t)(i * 37 + 11);
	x = npu_graph_tensor(g, &dx);
	wt = npu_graph_tensor(g, &dw);
	a = npu_graph_tensor(g, &dx);
	*out = npu_graph_tensor(g, &dy);
	if (x < 0 || wt < 0 || a < 0 || *out < 0)
		return NPU_EINVAL;
	ins[0] = a;
	ins[1] = x;
	ins[2] = a;
	*in = x;
	if (npu_graph_conv2d(g, x, wt, -1, a, 1, 0, 0, NPU_ACT_RELU))
		return NPU_EINVAL;
	return npu_graph_concat(g, ins, 3, *out, 3);
}

/* Pad to 5x6 with the zero point, then NHWC -> NCHW. */
static int build_layout_graph(npu_graph *g, int *in, int *out)
{
	static const uint32_t before[4] = { 0, 1, 2, 0 }, after[4] = { 0, 1, 0, 0 };
	static const uint32_t nchw[4] = { 0, 3, 1, 2 };
	struct npu_tensor_desc dx = { NPU_DT_INT8, 4, { 2, 3, 4, 2 }, 0.1f, 9, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dp = { NPU_DT_INT8, 4, { 2, 5, 6, 2 }, 0.1f, 9, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_INT8, 4, { 2, 2, 5, 6 }, 0.1f, 9, NULL, NULL, 0, 0 };
	int x = npu_graph_tensor(g, &dx), pd = npu_graph_tensor(g, &dp);

	*out = npu_graph_tensor(g, &dy);
	*in = x;
	if (x < 0 || pd < 0 || *out < 0 || npu_graph_pad(g, x, pd, before, after))
		return NPU_EINVAL;
	return npu_graph_transpose(g, pd, *out, nchw);
}

/* fp32 in, quantize, 3x3 conv, reshape (a view), dequantize, fp32 out. */
static int build_quantize_graph(npu_graph *g, int *in, int *out)
{
	static int8_t w[5 * 3 * 3 * 4];
	struct npu_tensor_desc dx = { NPU_DT_FLOAT32, 4, { 2, 6, 6, 4 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dq = { NPU_DT_INT8, 4, { 2, 6, 6, 4 }, 0.05f, 3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_INT8, 4, { 5, 3, 3, 4 }, 0.02f, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc dc = { NPU_DT_INT8, 4, { 2, 4, 4, 5 }, 0.1f, -7, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dr = { NPU_DT_INT8, 2, { 2, 80 }, 0.1f, -7, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_FLOAT32, 2, { 2, 80 }, 0, 0, NULL, NULL, 0, 0 };
	int q, f, c, r;

	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (int8_t)(i * 37 % 255 - 127);
	*in = npu_graph_tensor(g, &dx);
	q = npu_graph_tensor(g, &dq);
	f = npu_graph_tensor(g, &dw);
	c = npu_graph_tensor(g, &dc);
	r = npu_graph_tensor(g, &dr);
	*out = npu_graph_tensor(g, &dy);
	if (*in < 0 || q < 0 || f < 0 || c < 0 || r < 0 || *out < 0 ||
	    npu_graph_quantize(g, *in, q) ||
	    npu_graph_conv2d(g, q, f, -1, c, 1, 0, 0, NPU_ACT_NONE) || npu_graph_reshape(g, c, r))
		return NPU_EINVAL;
	return npu_graph_dequantize(g, r, *out);
}

/* Build the same graph twice, run it on the NPU and on the CPU, compare. */
static void npu_vs_cpu(struct __test_metadata *_metadata, npu_device *dev,
		       int (*build)(npu_graph *, int *, int *), const void *x, void *yn,
		       void *yc, size_t out_sz)
{
	npu_graph *gn = npu_graph_new(), *gc = npu_graph_new();
	int in_n, out_n, in_c, out_c;
	npu_plan *pn, *pc;

	ASSERT_EQ(0, build(gn, &in_n, &out_n));
	ASSERT_EQ(0, build(gc, &in_c, &out_c));
	ASSERT_EQ(NPU_OK, npu_graph_compile(gn, dev, &pn));
	ASSERT_EQ(NPU_OK, npu_graph_compile_opts(gc, NULL, &cpu_ref, &pc));
	TH_LOG("placement:\n%s", npu_plan_report(pn));
	EXPECT_EQ(0, ops_off_npu(pn));
	ASSERT_EQ(NPU_OK, npu_plan_run(pn, in_n, x, out_n, yn));
	ASSERT_EQ(NPU_OK, npu_plan_run(pc, in_c, x, out_c, yc));
	EXPECT_EQ(0, memcmp(yn, yc, out_sz));
	npu_plan_free(pn);
	npu_plan_free(pc);
	npu_graph_free(gn);
	npu_graph_free(gc);
}

static const int8_t *pattern(void)
{
	static int8_t x[4096];

	for (size_t i = 0; i < sizeof(x); i++)
		x[i] = (int8_t)(i * 13 + 7);
	return x;
}

/* fp32 in, cast to bf16, a bf16 matmul with bf16 weights (transposed), fp32 out. */
static int build_bf16_graph(npu_graph *g, int *in, int *out)
{
	static uint16_t w[24 * 40];
	struct npu_tensor_desc dx = { NPU_DT_FLOAT32, 3, { 3, 5, 40 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc db = { NPU_DT_BFLOAT16, 3, { 3, 5, 40 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_BFLOAT16, 2, { 24, 40 }, 0, 0, NULL, w, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_FLOAT32, 3, { 3, 5, 24 }, 0, 0, NULL, NULL, 0, 0 };
	int x, xb, wt;

	for (size_t i = 0; i < 24 * 40; i++) {	/* (i % 29 - 14) / 8, exact in bf16 */
		float f = (float)((int)(i % 29) - 14) / 8.0f;
		uint32_t u;

		memcpy(&u, &f, sizeof(u));
		w[i] = (uint16_t)(u >> 16);
	}
	x = npu_graph_tensor(g, &dx);
	xb = npu_graph_tensor(g, &db);
	wt = npu_graph_tensor(g, &dw);
	*out = npu_graph_tensor(g, &dy);
	*in = x;
	if (x < 0 || xb < 0 || wt < 0 || *out < 0 || npu_graph_cast(g, x, xb))
		return NPU_EINVAL;
	return npu_graph_matmul(g, xb, wt, *out, 1, 0.5f);
}

/* By hand: a 1x1 fp32 convolution of x = 1, 2, 3, 4 into two channels. */
static const float conv_x[4] = { 1, 2, 3, 4 };
static const float conv_w[2][2] = { { 2, 3 }, { -1, 0.5f } };
static const float conv_y[2][8] = { { 2, 3, 4, 6, 6, 9, 8, 12 },
				    { -1, 0.5f, -2, 1, -3, 1.5f, -4, 2 } };

/*
 * That convolution with the constant weights @w, its input and output
 * declared, compiled strictly for the NPU: *@g, *@p, the ids in @t (x, w, y).
 */
static int conv_plan(npu_device *dev, const float *w, npu_graph **g, npu_plan **p, int *t)
{
	struct npu_tensor_desc d[3] = {
		{ NPU_DT_FLOAT32, 4, { 1, 2, 2, 1 }, 0, 0, NULL, NULL, 0, 0 },
		{ NPU_DT_FLOAT32, 4, { 2, 1, 1, 1 }, 0, 0, NULL, w, 0, 0 },
		{ NPU_DT_FLOAT32, 4, { 1, 2, 2, 2 }, 0, 0, NULL, NULL, 0, 0 },
	};
	struct npu_compile_opts o = { .backend = NPU_BACKEND_NPU, .strict = 1 };

	*g = npu_graph_new();
	for (int i = 0; i < 3; i++)
		t[i] = npu_graph_tensor(*g, &d[i]);
	if (npu_graph_conv2d(*g, t[0], t[1], -1, t[2], 1, 0, 0, NPU_ACT_NONE) ||
	    npu_graph_inputs(*g, &t[0], 1) || npu_graph_outputs(*g, &t[2], 1))
		return NPU_EINVAL;
	return npu_graph_compile_opts(*g, dev, &o, p);
}

/*
 * An fp32 convolution's constant weights, which the engine keeps packed
 * between runs (NPU_CONVF_CONST_W), rewritten between runs
 * (npu_plan_write): the next run computes with the new values.
 */
TEST_F(lib, graph_conv_f32_constant_weights_rewritten)
{
	npu_graph *g;
	npu_plan *p;
	float y[8];
	int t[3];

	ASSERT_EQ(NPU_OK, conv_plan(self->dev, conv_w[0], &g, &p, t));
	for (int w = 0; w < 2; w++) {
		if (w)
			ASSERT_EQ(NPU_OK, npu_plan_write(p, t[1], conv_w[1], sizeof(conv_w[1])));
		for (int r = 0; r < 2; r++) {	/* packed, then kept */
			ASSERT_EQ(NPU_OK, npu_plan_run(p, t[0], conv_x, t[2], y));
			EXPECT_EQ(0, memcmp(y, conv_y[w], sizeof(y)));
		}
	}
	npu_plan_free(p);
	npu_graph_free(g);
}

/*
 * A run in two halves on the NPU (npu_plan_start returns with the job in
 * flight, npu_plan_wait ends it): two plans' jobs in flight at once, each
 * with its own weights.
 */
TEST_F(lib, graph_start_and_wait_on_npu)
{
	npu_plan *p[2];
	npu_graph *g[2];
	float y[2][8];
	int t[3];

	for (int i = 0; i < 2; i++)
		ASSERT_EQ(NPU_OK, conv_plan(self->dev, conv_w[i], &g[i], &p[i], t));
	for (int r = 0; r < 3; r++) {
		ASSERT_EQ(NPU_OK, npu_plan_start(p[0], (const void *[]){ conv_x }));
		ASSERT_EQ(NPU_OK, npu_plan_start(p[1], (const void *[]){ conv_x }));
		EXPECT_EQ(NPU_EBUSY, npu_plan_start(p[0], (const void *[]){ conv_x }));
		ASSERT_EQ(NPU_OK, npu_plan_wait(p[1], (void *[]){ y[1] }));
		ASSERT_EQ(NPU_OK, npu_plan_wait(p[0], (void *[]){ y[0] }));
		EXPECT_EQ(0, memcmp(y[0], conv_y[0], sizeof(y[0])));
		EXPECT_EQ(0, memcmp(y[1], conv_y[1], sizeof(y[1])));
	}
	for (int i = 0; i < 2; i++) {
		npu_plan_free(p[i]);
		npu_graph_free(g[i]);
	}
}

/*
 * Inputs and outputs bound in place (npu_plan_buffer): the NPU job reads
 * the input from, and writes the output into, the buffers the caller
 * filled and reads; nothing is copied (npu_plan_stats), and the results
 * are the hand-worked ones, run after run with new inputs. The run's
 * fence (npu_plan_fence_fd, the job's sync_file) polls readable.
 */
TEST_F(lib, graph_buffers_in_place_on_npu)
{
	struct npu_plan_stats st;
	npu_graph *g;
	npu_plan *p;
	float *x, *y;
	int t[3], fd;

	ASSERT_EQ(NPU_OK, conv_plan(self->dev, conv_w[0], &g, &p, t));
	x = npu_plan_buffer(p, t[0]);
	y = npu_plan_buffer(p, t[2]);
	ASSERT_NE(NULL, x);
	ASSERT_NE(NULL, y);
	EXPECT_EQ(NULL, npu_plan_buffer(p, t[1]));	/* the weights: npu_plan_write */
	for (int r = 1; r <= 3; r++) {
		for (int i = 0; i < 4; i++)
			x[i] = conv_x[i] * (float)r;
		ASSERT_EQ(NPU_OK, npu_plan_start(p, (const void *[]){ x }));
		EXPECT_EQ(NULL, npu_plan_buffer(p, t[2]));	/* in flight */
		fd = npu_plan_fence_fd(p);	/* the job's sync_file */
		ASSERT_LE(0, fd) TH_LOG("%s", npu_plan_error(p));
		ASSERT_EQ(1, poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 600000));
		close(fd);
		ASSERT_EQ(NPU_OK, npu_plan_wait(p, (void *[]){ y }));
		for (int i = 0; i < 8; i++)
			EXPECT_EQ(conv_y[0][i] * (float)r, y[i]);
	}
	ASSERT_EQ(NPU_OK, npu_plan_stats(p, &st));
	EXPECT_EQ(3, st.runs);
	EXPECT_EQ(0, st.copies_in);
	EXPECT_EQ(0, st.copies_out);
	npu_plan_free(p);
	npu_graph_free(g);
}

/* bf16 on the NPU (CAST, MATMUL): the CPU reference's bits. */
TEST_F(lib, graph_bf16_matmul_npu_matches_cpu)
{
	static float x[3 * 5 * 40], yn[3 * 5 * 24], yc[3 * 5 * 24];

	for (size_t i = 0; i < 3 * 5 * 40; i++)
		x[i] = (float)(i * 37 % 101) / 33.0f - 1.5f;
	npu_vs_cpu(_metadata, self->dev, build_bf16_graph, x, yn, yc, sizeof(yn));
}

/* Attention's int8 scores: x . x^T / 8 with TFLite's requantization (MATMUL, QDQ). */
static int build_q8_matmul_graph(npu_graph *g, int *in, int *out)
{
	struct npu_tensor_desc dx = { NPU_DT_INT8, 3, { 3, 5, 40 }, 0.05f, 3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dy = { NPU_DT_INT8, 3, { 3, 5, 5 }, 0.4f, -4, NULL, NULL, 0, 0 };

	*in = npu_graph_tensor(g, &dx);
	*out = npu_graph_tensor(g, &dy);
	if (*in < 0 || *out < 0)
		return NPU_EINVAL;
	return npu_graph_matmul(g, *in, *in, *out, 1, 0.125f);
}

TEST_F(lib, graph_int8_matmul_tflite_npu_matches_cpu)
{
	static int8_t yn[3 * 5 * 5], yc[3 * 5 * 5];
	int distinct = 0;

	npu_vs_cpu(_metadata, self->dev, build_q8_matmul_graph, pattern(), yn, yc, sizeof(yn));
	for (size_t i = 1; i < sizeof(yn); i++)
		distinct += yn[i] != yn[0];
	EXPECT_LT(10, distinct);	/* a real result, not saturated */
}

/*
 * bf16 training: fp32 parameters cast to bf16, their matmul into fp32, a
 * cross-entropy, backward (dY rounded to bf16, two bf16 matmuls) and SGD.
 * Every op on the NPU, and its gradients the CPU reference's bits.
 */
struct bf16_train {
	npu_graph *g;
	npu_plan *plan;
	int x, w, lab, loss;
};

static int build_bf16_train(struct bf16_train *t, npu_device *dev)
{
	static float xf[6 * 8], wf[5 * 8];
	struct npu_tensor_desc dx = { NPU_DT_FLOAT32, 2, { 6, 8 }, 0, 0, NULL, xf, 0, 0 };
	struct npu_tensor_desc dw = { NPU_DT_FLOAT32, 2, { 5, 8 }, 0, 0, NULL, wf, 0, 0 };
	struct npu_tensor_desc dl = { NPU_DT_INT32, 1, { 6 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dz = { NPU_DT_FLOAT32, 2, { 6, 5 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_tensor_desc dloss = { NPU_DT_FLOAT32, 1, { 6 }, 0, 0, NULL, NULL, 0, 0 };
	struct npu_optim_f32 sgd = { .algo = NPU_OPTIM_SGD, .lr = 0.1f };
	int xb, wb, z;

	for (int i = 0; i < 48; i++)
		xf[i] = (float)((i * 37) % 23 - 11) / 7.0f;
	for (int i = 0; i < 40; i++)
		wf[i] = (float)((i * 29) % 19 - 9) / 5.0f;
	t->g = npu_graph_new();
	t->x = npu_graph_tensor(t->g, &dx);
	t->w = npu_graph_tensor(t->g, &dw);
	dx.data = dw.data = NULL;
	dx.dtype = dw.dtype = NPU_DT_BFLOAT16;
	xb = npu_graph_tensor(t->g, &dx);
	wb = npu_graph_tensor(t->g, &dw);
	z = npu_graph_tensor(t->g, &dz);
	t->lab = npu_graph_tensor(t->g, &dl);
	t->loss = npu_graph_tensor(t->g, &dloss);
	if (npu_graph_param(t->g, t->x) || npu_graph_param(t->g, t->w) ||
	    npu_graph_cast(t->g, t->x, xb) || npu_graph_cast(t->g, t->w, wb) ||
	    npu_graph_matmul(t->g, xb, wb, z, 1, 0.5f) ||
	    npu_graph_xent(t->g, z, t->lab, t->loss) || npu_graph_backward(t->g, t->loss) ||
	    npu_graph_optimizer(t->g, &sgd))
		return NPU_EINVAL;
	return dev ? npu_graph_compile(t->g, dev, &t->plan) :
		     npu_graph_compile_opts(t->g, NULL, &cpu_ref, &t->plan);
}

TEST_F(lib, graph_bf16_training_npu_matches_cpu)
{
	static const int32_t labels[6] = { 0, 4, 2, 1, 3, 4 };
	struct bf16_train n = { 0 }, c = { 0 };
	float wn[40], wc[40], xn[48], xc[48];

	ASSERT_EQ(NPU_OK, build_bf16_train(&n, self->dev));
	ASSERT_EQ(NPU_OK, build_bf16_train(&c, NULL));
	TH_LOG("placement:\n%s", npu_plan_report(n.plan));
	EXPECT_EQ(0, ops_off_npu(n.plan));
	for (int step = 0; step < 3; step++) {
		ASSERT_EQ(NPU_OK, npu_plan_write(n.plan, n.lab, labels, sizeof(labels)));
		ASSERT_EQ(NPU_OK, npu_plan_write(c.plan, c.lab, labels, sizeof(labels)));
		ASSERT_EQ(NPU_OK, npu_plan_exec(n.plan, NPU_EXEC_TRAIN));
		ASSERT_EQ(NPU_OK, npu_plan_exec(c.plan, NPU_EXEC_TRAIN));
	}
	ASSERT_EQ(NPU_OK, npu_plan_read(n.plan, n.w, wn, sizeof(wn)));
	ASSERT_EQ(NPU_OK, npu_plan_read(c.plan, c.w, wc, sizeof(wc)));
	ASSERT_EQ(NPU_OK, npu_plan_read(n.plan, n.x, xn, sizeof(xn)));
	ASSERT_EQ(NPU_OK, npu_plan_read(c.plan, c.x, xc, sizeof(xc)));
	EXPECT_EQ(0, memcmp(wn, wc, sizeof(wn)));
	EXPECT_EQ(0, memcmp(xn, xc, sizeof(xn)));
	EXPECT_NE(0.0f, wn[0] - (float)(0 % 19 - 9) / 5.0f);	/* the weights moved */
	npu_plan_free(n.plan);
	npu_plan_free(c.plan);
	npu_graph_free(n.g);
	npu_graph_free(c.g);
}

TEST_F(lib, graph_concat_npu_matches_cpu)
{
	static int8_t yn[2 * 6 * 6 * 12], yc[2 * 6 * 6 * 12];

	npu_vs_cpu(_metadata, self->dev, build_concat_graph, pattern(), yn, yc, sizeof(yn));
	EXPECT_EQ(7, yn[4]);	/* pixel 0: conv, x, conv; x[0] = 7 */
}

TEST_F(lib, graph_pad_transpose_npu_matches_cpu)
{
	static int8_t yn[2 * 2 * 5 * 6], yc[2 * 2 * 5 * 6];

	npu_vs_cpu(_metadata, self->dev, build_layout_graph, pattern(), yn, yc, sizeof(yn));
	EXPECT_EQ(9, yn[0]);	/* padding is the zero point */
	EXPECT_EQ(7, yn[1 * 6 + 2]);	/* channel 0, row 1, col 2: x[0] */
}

/*
 * Quantize and dequantize run on the NPU too, dequantize reading through a
 * reshape's view: fp32 to fp32, same bits.
 */
TEST_F(lib, graph_quantize_dequantize_npu_matches_cpu)
{
	static float x[2 * 6 * 6 * 4], yn[2 * 4 * 4 * 5], yc[2 * 4 * 4 * 5];
	int distinct = 0;

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)	/* past the int8 range too */
		x[i] = (float)((int)(i * 7919 % 601) - 300) / 37.0f;
	x[5] = NAN;
	npu_vs_cpu(_metadata, self->dev, build_quantize_graph, x, yn, yc, sizeof(yn));
	for (size_t i = 1; i < sizeof(yn) / sizeof(yn[0]); i++)
		distinct += yn[i] != yn[0];
	EXPECT_LT(10, distinct);	/* a real result, not a constant */
	/* Every output is 0.1 * (q + 7) for an int8 q. */
	for (size_t i = 0; i < sizeof(yn) / sizeof(yn[0]); i++) {
		double q = yn[i] / (double)0.1f - 7;

		EXPECT_GT(1e-3, fabs(q - round(q)));
		EXPECT_LE(-128.001, q);
		EXPECT_GE(127.001, q);
	}
}

/*
 * A small CNN trained for a few SGD steps on the NPU and on the CPU
 * reference from the same start: every op on the NPU, and the weights
 * that come out agree within fp32 rounding (the engine blocks its sums).
 */
struct train_net {
	npu_graph *g;
	npu_plan *plan;
	int in, labels, loss, w_conv, w_dense;
};

static int ftensor(npu_graph *g, enum npu_dtype dt, uint32_t rank, uint32_t d0, uint32_t d1,
		   uint32_t d2, uint32_t d3, const void *data)
{
	struct npu_tensor_desc d = { dt, rank, { d0, d1, d2, d3 }, 1.0f, 0, NULL, data, 0, 0 };

	return npu_graph_tensor(g, &d);
}

static int build_train_net(struct train_net *t, npu_device *dev)
{
	static float wc[8 * 3 * 3 * 1], bc[8], wd[10 * 200], bd[10];
	/*
	 * SGD with momentum: a small difference in a gradient stays small in
	 * the weights (Adam would scale a near-zero one up to a full step).
	 */
	struct npu_optim_f32 sgd = { .algo = NPU_OPTIM_SGD, .lr = 0.05f, .beta1 = 0.9f };
	const enum npu_dtype f = NPU_DT_FLOAT32;
	npu_graph *g = npu_graph_new();
	int c, pl, z, bci, bdi;

	for (size_t i = 0; i < sizeof(wc) / sizeof(wc[0]); i++)
		wc[i] = (float)((int)(i * 37 % 17) - 8) / 24.0f;
	for (size_t i = 0; i < sizeof(wd) / sizeof(wd[0]); i++)
		wd[i] = (float)((int)(i * 53 % 29) - 14) / 140.0f;
	t->g = g;
	t->in = ftensor(g, f, 4, 16, 10, 10, 1, NULL);
	t->w_conv = ftensor(g, f, 4, 8, 3, 3, 1, wc);
	bci = ftensor(g, f, 1, 8, 0, 0, 0, bc);
	c = ftensor(g, f, 4, 16, 10, 10, 8, NULL);
	pl = ftensor(g, f, 4, 16, 5, 5, 8, NULL);
	t->w_dense = ftensor(g, f, 2, 10, 200, 0, 0, wd);
	bdi = ftensor(g, f, 1, 10, 0, 0, 0, bd);
	z = ftensor(g, f, 2, 16, 10, 0, 0, NULL);
	t->loss = ftensor(g, f, 1, 16, 0, 0, 0, NULL);
	t->labels = ftensor(g, NPU_DT_INT32, 1, 16, 0, 0, 0, NULL);
	if (npu_graph_param(g, t->w_conv) || npu_graph_param(g, bci) ||
	    npu_graph_param(g, t->w_dense) || npu_graph_param(g, bdi) ||
	    npu_graph_conv2d(g, t->in, t->w_conv, bci, c, 1, 1, 0, NPU_ACT_RELU) ||
	    npu_graph_pool(g, c, pl, 2, 2, 0) ||
	    npu_graph_fully_connected(g, pl, t->w_dense, bdi, z, NPU_ACT_NONE) ||
	    npu_graph_xent(g, z, t->labels, t->loss) || npu_graph_backward(g, t->loss) ||
	    npu_graph_optimizer(g, &sgd))
		return NPU_EINVAL;
	return npu_graph_compile_opts(g, dev, dev ? NULL : &cpu_ref, &t->plan);
}

TEST_F(lib, graph_training_npu_matches_cpu)
{
	struct train_net n = { 0 }, c = { 0 };
	static float x[16 * 100], w0[2000], wn[2000], wc[2000], loss[16];
	int32_t labels[16];
	float first = 0, last = 0;

	ASSERT_EQ(NPU_OK, build_train_net(&n, self->dev));
	ASSERT_EQ(NPU_OK, build_train_net(&c, NULL));
	TH_LOG("placement:\n%s", npu_plan_report(n.plan));
	EXPECT_EQ(0, ops_off_npu(n.plan));
	for (int i = 0; i < 16 * 100; i++)	/* class k: a bright column k */
		x[i] = (i % 10 == (i / 100) % 10) ? 1.0f : (float)(i * 7 % 13) / 26.0f;
	for (int i = 0; i < 16; i++)
		labels[i] = i % 10;
	ASSERT_EQ(0, npu_plan_read(c.plan, c.w_dense, w0, sizeof(w0)));
	for (int step = 0; step < 8; step++) {
		for (int k = 0; k < 2; k++) {
			struct train_net *t = k ? &c : &n;

			ASSERT_EQ(0, npu_plan_write(t->plan, t->in, x, sizeof(x)));
			ASSERT_EQ(0, npu_plan_write(t->plan, t->labels, labels, sizeof(labels)));
			ASSERT_EQ(NPU_OK, npu_plan_exec(t->plan, NPU_EXEC_TRAIN));
		}
		ASSERT_EQ(0, npu_plan_read(n.plan, n.loss, loss, sizeof(loss)));
		if (step == 0)
			first = loss[0];
		last = loss[0];
	}
	EXPECT_LT(0, npu_plan_cycles(n.plan));
	EXPECT_LT(last, first);
	ASSERT_EQ(0, npu_plan_read(n.plan, n.w_dense, wn, sizeof(wn)));
	ASSERT_EQ(0, npu_plan_read(c.plan, c.w_dense, wc, sizeof(wc)));
	{
		double worst = 0, moved = 0;

		for (int i = 0; i < 2000; i++) {
			worst = fmax(worst, fabs(wn[i] - wc[i]));
			moved = fmax(moved, fabs(wc[i] - w0[i]));
		}
		TH_LOG("loss %g -> %g; weights moved up to %g, NPU and CPU differ by %g",
		       first, last, moved, worst);
		/* The engine's rounding is noise next to what training does. */
		EXPECT_LT(1e-3, moved);
		EXPECT_GT(0.01 * moved, worst);
	}
	npu_graph_free(n.g);
	npu_graph_free(c.g);
}

/* Debian's Fashion-MNIST: the training and the test set. */
static int load_fashion(struct idx_set *train, struct idx_set *test, char *err, size_t len)
{
	const char *d = "/usr/share/datasets/fashion-mnist/";
	char a[256], b[256];

	snprintf(a, sizeof(a), "%strain-images-idx3-ubyte.gz", d);
	snprintf(b, sizeof(b), "%strain-labels-idx1-ubyte.gz", d);
	if (idx_load(a, b, 10, train, err, len))
		return -1;
	snprintf(a, sizeof(a), "%st10k-images-idx3-ubyte.gz", d);
	snprintf(b, sizeof(b), "%st10k-labels-idx1-ubyte.gz", d);
	if (idx_load(a, b, 10, test, err, len)) {
		idx_free(train);
		return -1;
	}
	return 0;
}

/*
 * A short training run on real data, through the whole stack: the MLP of
 * the demo on 6,000 Fashion-MNIST images for two epochs on the NPU. The
 * loss falls, the test accuracy passes 80 % (the full demo reaches about
 * 88 %), the int8 model stays within two points, and the int8 graph on the
 * NPU gives the CPU reference's logits bit for bit on 256 test images.
 */
TEST_F_TIMEOUT(lib, fashion_subset_trains_and_quantizes, 300)
{
	struct npu_optim_f32 adam = { .algo = NPU_OPTIM_ADAM, .lr = 1e-3f, .beta1 = 0.9f,
				      .beta2 = 0.999f, .eps = 1e-8f };
	struct train_opts o = { .epochs = 2, .train_images = 6000, .calib_batches = 4,
				.check_images = 256, .seed = 7, .lr = 1e-3f };
	struct idx_set train, test;
	struct train_result r;
	struct model m;
	char err[512];

	ASSERT_EQ(0, load_fashion(&train, &test, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(NPU_OK, model_build(&m, MODEL_MLP, 64, 99, &adam, self->dev, 0));
	EXPECT_EQ(0, ops_off_npu(m.plan));
	ASSERT_EQ(NPU_OK, train_model(&m, &train, &test, &o, self->dev, &r));
	TH_LOG("loss %.3f -> %.3f; test accuracy fp32 %.2f%%, int8 %.2f%%; "
	       "int8 NPU = CPU on %d/%d", r.curve[0].loss, r.curve[r.npoints - 1].loss,
	       r.float_acc * 100, r.int8_acc * 100, r.int8_same, r.int8_checked);
	EXPECT_LT(r.curve[r.npoints - 1].loss, r.curve[0].loss / 2);
	EXPECT_LT(0.80, r.float_acc);
	EXPECT_GT(0.02, fabs(r.int8_acc - r.float_acc));
	EXPECT_EQ(256, r.int8_checked);
	EXPECT_EQ(r.int8_checked, r.int8_same);
	EXPECT_LT(0, r.train_cycles);
	train_result_free(&r);
	model_free(&m);
	idx_free(&train);
	idx_free(&test);
}

/*
 * The demo's vision transformer (layer norm, attention's matmuls and
 * softmax, GELU, transposes, a mean: every one trained through the N-d
 * commands and their gradients) on 2,048 images for one epoch, every op of
 * training on the NPU in one job per step; then its int8 twin on the NPU
 * gives the CPU reference's logits bit for bit on 256 test images.
 */
TEST_F_TIMEOUT(lib, fashion_vit_trains_on_npu, 300)
{
	struct npu_optim_f32 adam = { .algo = NPU_OPTIM_ADAM, .lr = 1e-3f, .beta1 = 0.9f,
				      .beta2 = 0.999f, .eps = 1e-8f };
	struct train_opts o = { .epochs = 1, .train_images = 2048, .calib_batches = 4,
				.check_images = 256, .seed = 3, .lr = 1e-3f };
	struct idx_set train, test;
	struct train_result r;
	struct model m;
	char err[512];

	ASSERT_EQ(0, load_fashion(&train, &test, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(NPU_OK, model_build(&m, MODEL_VIT, 64, 5, &adam, self->dev, 0));
	EXPECT_EQ(0, ops_off_npu(m.plan));
	EXPECT_NE(NULL, strstr(npu_plan_report(m.plan), "layer_norm grad"));
	ASSERT_EQ(NPU_OK, train_model(&m, &train, &test, &o, self->dev, &r));
	TH_LOG("loss %.3f -> %.3f; test accuracy fp32 %.2f%%, int8 %.2f%%; "
	       "int8 NPU = CPU on %d/%d", r.curve[0].loss, r.curve[r.npoints - 1].loss,
	       r.float_acc * 100, r.int8_acc * 100, r.int8_same, r.int8_checked);
	EXPECT_LT(r.curve[r.npoints - 1].loss, r.curve[0].loss * 0.8);
	EXPECT_LT(0.35, r.float_acc);	/* chance is 0.10 */
	EXPECT_GT(0.02, fabs(r.int8_acc - r.float_acc));
	EXPECT_EQ(256, r.int8_checked);
	EXPECT_EQ(r.int8_checked, r.int8_same);
	EXPECT_LT(0, r.train_cycles);
	train_result_free(&r);
	model_free(&m);
	idx_free(&train);
	idx_free(&test);
}

/*
 * The device's profile (QEMU property profile=full|edge) decides what the
 * firmware offers: int8 inference always; the training commands only on a
 * full NPU. On an edge NPU a training command fails its job as unknown,
 * and a training graph puts those ops on OpenCL (PoCL in the guest),
 * saying why, and trains as the CPU reference does. make check runs this
 * in a second VM booted with profile=edge.
 */
TEST_F_TIMEOUT(lib, npu_profile, 540)
{
	const uint32_t train = 1u << 25 | 1u << 26 | 1u << 27 | 1u << 28 | 1u << 29 |
			       1u << 30 | 1u << 31, int8 = 0x1ffu << 16;
	struct npu_gemm_f32 gp = { 2, 2, 2, 0, 0, 0, 1.0f, 0.0f };
	struct npu_device_info info;
	struct npu_job_result res;
	struct train_net n = { 0 }, c = { 0 };
	static float x[16 * 100], wn[2000], wc[2000];
	int32_t labels[16];
	float worst = 0;

	ASSERT_EQ(NPU_OK, npu_device_info(self->dev, &info));
	EXPECT_EQ(int8, info.cmd_caps[0] & int8);
	ASSERT_TRUE((info.cmd_caps[0] & train) == train || !(info.cmd_caps[0] & train));
	/* The bitmap and the per-command query agree, past the uAPI's 32 bits too. */
	for (uint32_t op = 0; op < 64 * NPU_CMD_CAPS_WORDS; op++)
		ASSERT_EQ(!!(info.cmd_caps[op / 64] >> (op % 64) & 1),
			  npu_device_has_command(self->dev, op));
	TH_LOG("%s profile: commands 0x%08llx", info.cmd_caps[0] & train ? "full" : "edge",
	       (unsigned long long)info.cmd_caps[0]);
	ASSERT_EQ(NPU_OK, npu_cmd_gemm_f32(self->cb, &gp, npu_buffer_va(self->a),
					   npu_buffer_va(self->a), npu_buffer_va(self->b)));
	ASSERT_EQ(NPU_OK, run(self->dev, self->cb, &res));
	EXPECT_EQ(info.cmd_caps[0] & train ? NPU_JOB_STATE_DONE : NPU_JOB_STATE_INVALID_COMMAND,
		  res.state);
	ASSERT_EQ(NPU_OK, build_train_net(&n, self->dev));
	ASSERT_EQ(NPU_OK, build_train_net(&c, NULL));
	TH_LOG("placement:\n%s", npu_plan_report(n.plan));
	if (info.cmd_caps[0] & train) {
		EXPECT_EQ(0, ops_off_npu(n.plan));
	} else {
		EXPECT_NE(NULL, strstr(npu_plan_report(n.plan),
				       "conv2d grad       opencl (not in the firmware's capabilities)"));
	}
	/* Either way it trains, as the CPU reference does. */
	for (int i = 0; i < 16 * 100; i++)
		x[i] = (i % 10 == (i / 100) % 10) ? 1.0f : (float)(i * 7 % 13) / 26.0f;
	for (int i = 0; i < 16; i++)
		labels[i] = i % 10;
	for (int k = 0; k < 2; k++) {
		struct train_net *t = k ? &c : &n;

		ASSERT_EQ(0, npu_plan_write(t->plan, t->in, x, sizeof(x)));
		ASSERT_EQ(0, npu_plan_write(t->plan, t->labels, labels, sizeof(labels)));
		for (int step = 0; step < 2; step++)
			ASSERT_EQ(NPU_OK, npu_plan_exec(t->plan, NPU_EXEC_TRAIN));
	}
	ASSERT_EQ(0, npu_plan_read(n.plan, n.w_dense, wn, sizeof(wn)));
	ASSERT_EQ(0, npu_plan_read(c.plan, c.w_dense, wc, sizeof(wc)));
	for (int i = 0; i < 2000; i++)
		worst = fmaxf(worst, fabsf(wn[i] - wc[i]));
	TH_LOG("weights after two steps within %g of the CPU reference's", worst);
	EXPECT_GT(1e-4f, worst);
	npu_graph_free(n.g);
	npu_graph_free(c.g);
}

/*
 * fp32 dense -> quantize -> int8 FC -> dequantize -> fp32 ReLU. On a full
 * NPU one job runs it all; on an edge NPU the fp32 ops go to OpenCL and the
 * int8 ones to the NPU, the data crossing twice each way. Either way the
 * output is the CPU reference's, bit for bit.
 */
/*
 * fp32 FC -> quantize -> int8 FC -> dequantize -> ReLU. The int8 FC is
 * large enough (2 M MACs) that an edge NPU, which has no fp32 layers, is
 * still worth a job for it: a real crossing each way.
 */
#define MIX_H	128
#define MIX_N	4096

static int build_mixed(npu_graph *g, int *in, int *out)
{
	static float w1[MIX_H * 24];
	static int8_t w2[MIX_N * MIX_H];
	static int32_t b2[MIX_N];
	const enum npu_dtype f = NPU_DT_FLOAT32;
	struct npu_tensor_desc q = { NPU_DT_INT8, 2, { 4, MIX_H }, 0.05f, -3, NULL, NULL, 0, 0 };
	struct npu_tensor_desc qw = { NPU_DT_INT8, 2, { MIX_N, MIX_H }, 0.02f, 0, NULL, w2, 0, 0 };
	struct npu_tensor_desc qb = { NPU_DT_INT32, 1, { MIX_N }, 0.001f, 0, NULL, b2, 0, 0 };
	struct npu_tensor_desc qo = { NPU_DT_INT8, 2, { 4, MIX_N }, 0.1f, 5, NULL, NULL, 0, 0 };
	int h, hq, zq, z;

	for (int i = 0; i < MIX_H * 24; i++)
		w1[i] = (float)((i * 29) % 17 - 8) / 16.0f;
	for (int i = 0; i < MIX_N * MIX_H; i++)
		w2[i] = (int8_t)((i * 41) % 255 - 127);
	for (int i = 0; i < MIX_N; i++)
		b2[i] = i % 16 * 97 - 700;
	*in = ftensor(g, f, 2, 4, 24, 0, 0, NULL);
	h = ftensor(g, f, 2, 4, MIX_H, 0, 0, NULL);
	hq = npu_graph_tensor(g, &q);
	zq = npu_graph_tensor(g, &qo);
	z = ftensor(g, f, 2, 4, MIX_N, 0, 0, NULL);
	*out = ftensor(g, f, 2, 4, MIX_N, 0, 0, NULL);
	return npu_graph_fully_connected(g, *in, ftensor(g, f, 2, MIX_H, 24, 0, 0, w1), -1, h,
					 NPU_ACT_NONE) ||
	       npu_graph_quantize(g, h, hq) ||
	       npu_graph_fully_connected(g, hq, npu_graph_tensor(g, &qw),
					 npu_graph_tensor(g, &qb), zq, NPU_ACT_NONE) ||
	       npu_graph_dequantize(g, zq, z) || npu_graph_relu(g, z, *out);
}

TEST_F_TIMEOUT(lib, mixed_graph_npu_opencl, 300)
{
	npu_graph *gn = npu_graph_new(), *gc = npu_graph_new();
	npu_plan *pn, *pc;
	struct npu_device_info info;
	int in_n, out_n, in_c, out_c, edge;
	float x[4 * 24];
	static float yn[4 * MIX_N], yc[4 * MIX_N];

	ASSERT_EQ(NPU_OK, npu_device_info(self->dev, &info));
	edge = !npu_device_has_command(self->dev, 25);
	ASSERT_EQ(0, build_mixed(gn, &in_n, &out_n));
	ASSERT_EQ(0, build_mixed(gc, &in_c, &out_c));
	ASSERT_EQ(NPU_OK, npu_graph_compile(gn, self->dev, &pn));
	ASSERT_EQ(NPU_OK, npu_graph_compile_opts(gc, NULL, &cpu_ref, &pc));
	TH_LOG("placement:\n%s", npu_plan_report(pn));
	/*
	 * Edge: the fp32 layers on OpenCL, the int8 one on the NPU; the
	 * quantize and dequantize on either side, as the copies at the
	 * crossings make cheaper. Full: all on the NPU.
	 */
	for (int i = 0; i < 5; i++) {
		int b = npu_plan_op_backend(pn, i);

		if (!edge || i == 2) {
			EXPECT_EQ(NPU_BACKEND_NPU, b);
		} else if (i == 0 || i == 4) {
			EXPECT_EQ(NPU_BACKEND_OPENCL, b);
		} else {
			EXPECT_TRUE(b == NPU_BACKEND_NPU || b == NPU_BACKEND_OPENCL);
		}
	}
	EXPECT_NE(NULL, strstr(npu_plan_report(pn), edge ?
			       "1 NPU job(s), 2 OpenCL submission(s)" : "1 NPU job(s), 0 OpenCL"));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 4 * 24; i++)
			x[i] = (float)((i * 13 + round * 7) % 23 - 11) / 8.0f;
		ASSERT_EQ(NPU_OK, npu_plan_run(pn, in_n, x, out_n, yn));
		ASSERT_EQ(NPU_OK, npu_plan_run(pc, in_c, x, out_c, yc));
		EXPECT_EQ(0, memcmp(yn, yc, sizeof(yn)));
	}
	npu_graph_free(gn);
	npu_graph_free(gc);
}

TEST_F(lib, one_call_helpers)
{
	struct npu_gemm_i8 gp = { .m = 33, .n = 17, .k = 40, .a_zero = 2, .out_zero = -1,
				  .act_min = -128, .act_max = 127, .per_tensor = 1 };
	struct npu_pool_i8 pp = { 1, 8, 8, 4, 4, 4, 2, 2, 2, 2, 0, 0, -128, 127, 0 };
	struct npu_softmax_i8 sp = { .rows = 3, .depth = 50 };
	static int8_t a[33 * 40], b[17 * 40], yn[33 * 17], yc[33 * 17];
	int32_t mult = 0x55555555, shift = -9;

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (int8_t)(i * 13 + 1);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (int8_t)(i * 29 + 5);
	ASSERT_EQ(NPU_OK, npu_run_gemm_i8(self->dev, &gp, a, b, NULL, &mult, &shift, yn));
	ASSERT_EQ(NPU_OK, npu_ref_gemm_i8(&gp, a, b, NULL, &mult, &shift, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 33 * 17));
	ASSERT_EQ(NPU_OK, npu_run_pool_i8(self->dev, &pp, a, yn));
	ASSERT_EQ(NPU_OK, npu_ref_pool_i8(&pp, a, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 64));
	ASSERT_EQ(NPU_OK, npu_softmax_params(0.1, 1.0, &sp));
	ASSERT_EQ(NPU_OK, npu_run_softmax_i8(self->dev, &sp, a, yn));
	ASSERT_EQ(NPU_OK, npu_ref_softmax_i8(&sp, a, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 150));

	struct npu_conv2d_i8 cp = { .batch = 1, .in_h = 6, .in_w = 6, .in_c = 4,
				    .out_h = 3, .out_w = 3, .out_c = 3, .k_h = 3, .k_w = 3,
				    .stride_h = 2, .stride_w = 2, .dil_h = 1, .dil_w = 1,
				    .pad_top = 1, .pad_left = 1, .in_zero = -3, .out_zero = 5,
				    .act_min = -100, .act_max = 100 };
	int32_t bias[3] = { 100, -250, 7 }, cm[3] = { 0x40000000, 0x50000000, 0x60000000 };
	int32_t cs[3] = { -6, -7, -8 };

	ASSERT_EQ(NPU_OK, npu_run_conv2d_i8(self->dev, &cp, a, b, bias, cm, cs, yn));
	ASSERT_EQ(NPU_OK, npu_ref_conv2d_i8(&cp, a, b, bias, cm, cs, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 27));
	/* A bad shape is refused before any buffer is made. */
	cp.stride_h = 0;
	EXPECT_EQ(NPU_EINVAL, npu_run_conv2d_i8(self->dev, &cp, a, b, bias, cm, cs, yn));
	EXPECT_EQ(NPU_EINVAL, npu_ref_conv2d_i8(&cp, a, b, bias, cm, cs, yn));
	cs[0] = 31;
	EXPECT_EQ(NPU_EINVAL, npu_run_gemm_i8(self->dev, &gp, a, b, NULL, cm, cs, yn));
}

TEST_F(lib, one_call_helpers_layout_and_eltwise)
{
	struct npu_eltwise_i8 ep = { .count = 300, .mul = 1, .a_zero = 3, .b_zero = -2,
				     .out_zero = 1, .act_min = -128, .act_max = 127,
				     .out_mult = 0x4a000000, .out_shift = -7 };
	struct npu_quantize qp = { .count = 100, .scale = 0.05, .zero_point = -3 };
	struct npu_transpose tp = { .rank = 3, .elem_size = 2, .dims = { 3, 4, 5 },
				    .perm = { 2, 0, 1 } };
	struct npu_pad pp = { .rank = 2, .dims = { 3, 5 }, .before = { 1, 2 },
			      .after = { 2, 0 }, .value = -7 };
	static int8_t a[400], b[400], yn[400], yc[400];
	static float f[100], fn[100], fc[100];
	struct npu_device_info info;

	/* Otherwise the one-call ops would not run on the NPU and prove nothing. */
	ASSERT_EQ(NPU_OK, npu_device_info(self->dev, &info));
	ASSERT_EQ(0x1ffu << 16, info.cmd_caps[0] & (0x1ffu << 16));
	for (int i = 0; i < 400; i++) {
		a[i] = (int8_t)(i * 7 + 3);
		b[i] = (int8_t)(i * 11 - 5);
	}
	for (int i = 0; i < 100; i++)
		f[i] = (float)(i - 50) * 0.37f;
	ASSERT_EQ(NPU_OK, npu_run_eltwise_i8(self->dev, &ep, a, b, yn));
	ASSERT_EQ(NPU_OK, npu_ref_eltwise_i8(&ep, a, b, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 300));
	ASSERT_EQ(NPU_OK, npu_run_quantize(self->dev, &qp, f, yn));
	ASSERT_EQ(NPU_OK, npu_ref_quantize(&qp, f, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 100));
	qp.dequantize = 1;
	ASSERT_EQ(NPU_OK, npu_run_quantize(self->dev, &qp, a, fn));
	ASSERT_EQ(NPU_OK, npu_ref_quantize(&qp, a, fc));
	EXPECT_EQ(0, memcmp(fn, fc, sizeof(fn)));
	ASSERT_EQ(NPU_OK, npu_run_transpose(self->dev, &tp, a, yn));
	ASSERT_EQ(NPU_OK, npu_ref_transpose(&tp, a, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 120));
	ASSERT_EQ(NPU_OK, npu_run_pad(self->dev, &pp, a, yn));
	ASSERT_EQ(NPU_OK, npu_ref_pad(&pp, a, yc));
	EXPECT_EQ(0, memcmp(yn, yc, 6 * 7));
	EXPECT_EQ(-7, yn[0]);
	EXPECT_EQ(a[0], yn[1 * 7 + 2]);
	{
		const uint32_t ad[3] = { 2, 1, 3 };
		struct npu_concat cp = { .rank = 3, .elem_size = 2, .axis = 1, .count = 3,
					 .dims = { 4, 0, 5 }, .axis_dims = ad };
		const void *ins[3] = { a, b, a + 100 };

		ASSERT_EQ(NPU_OK, npu_run_concat(self->dev, &cp, ins, yn));
		ASSERT_EQ(NPU_OK, npu_ref_concat(&cp, ins, yc));
		EXPECT_EQ(0, memcmp(yn, yc, 4 * 6 * 5 * 2));
		EXPECT_EQ(0, memcmp(yn + 2 * 5 * 2, b, 5 * 2));	/* row 0, input 1 */
		cp.axis_dims = NULL;
		EXPECT_EQ(NPU_EINVAL, npu_run_concat(self->dev, &cp, ins, yn));
		EXPECT_EQ(NPU_EINVAL, npu_ref_concat(&cp, ins, yn));
	}
	/* The same refusal on both paths. */
	tp.perm[1] = 2;
	EXPECT_EQ(NPU_EINVAL, npu_run_transpose(self->dev, &tp, a, yn));
	EXPECT_EQ(NPU_EINVAL, npu_ref_transpose(&tp, a, yn));
	pp.value = 128;
	EXPECT_EQ(NPU_EINVAL, npu_run_pad(self->dev, &pp, a, yn));
	EXPECT_EQ(NPU_EINVAL, npu_ref_pad(&pp, a, yn));
}

TEST_HARNESS_MAIN
