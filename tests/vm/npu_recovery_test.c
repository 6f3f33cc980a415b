// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_recovery_test.c - every branch of the driver's timeout handler and
 * staged recovery, driven by the device's fault injection (debugfs
 * "inject", "fail_boots"), in the guest: a slow job that moves gets more
 * time, a lost interrupt is found, a hung engine costs only its job (the
 * jobs behind it and on other rings complete, with their data checked), a
 * hung or crashed firmware is rebooted and the jobs that never started run
 * after it, a failed reboot falls back to an FLR, a failed FLR wedges the
 * device until the driver is bound again, a context that keeps hanging is
 * banned (for hangs or for crashes), closing a file with a hung job never
 * blocks. The races a recovery meets (a reset from outside, a crash, the
 * device's removal) are driven at a known point: debugfs "recovery_hold"
 * holds the next recovery until the test releases it. Counters in debugfs
 * "recovery", the uevent and the devcoredump are checked; each recovery's
 * time is printed.
 *
 * Expects npu.ko loaded with job_timeout_ms=1000 hang_limit=2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "npu_cmd.h"
#include "npu_test_util.h"

#define SLOT		64	/* bytes of command buffer and of status per job */
#define MAX_JOBS	16

/* The path of debugfs file @name of the (one) npu device. */
static const char *dbg(const char *name)
{
	static char path[PATH_MAX];
	char pattern[128];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "/sys/kernel/debug/accel/*/%s", name);
	path[0] = 0;
	if (!glob(pattern, 0, NULL, &g) && g.gl_pathc)
		snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

/* A counter of debugfs "recovery", or -1. */
static int counter(const char *name)
{
	FILE *f = fopen(dbg("recovery"), "r");
	char key[64];
	int v, ret = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %d", key, &v) == 2)
		if (!strcmp(key, name))
			ret = v;
	fclose(f);
	return ret;
}

/*
 * Wait (up to 5 s) until ring @r holds a job on the device: its tail,
 * which the driver writes as its scheduler pushes a job, is past its head
 * (debugfs "status"). Jobs on different rings reach the device through
 * different schedulers, in no set order.
 */
static bool ring_busy(int r)
{
	for (int i = 0; i < 500; i++) {
		char line[128];
		unsigned int head, tail;
		int ring;
		bool busy = false;
		FILE *f = fopen(dbg("status"), "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "ring %d: head %u tail %u", &ring, &head, &tail) == 3 &&
			    ring == r && tail != head)
				busy = true;
		if (f)
			fclose(f);
		if (busy)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Wait (up to 5 s) until the firmware runs a job command of ring @r
 * (debugfs "status": FW_CURRENT), not merely has one on the ring.
 */
static bool fw_running(int r)
{
	for (int i = 0; i < 500; i++) {
		char line[128];
		unsigned int ring, idx;
		bool running = false;
		FILE *f = fopen(dbg("status"), "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "fw_current ring %u idx %u", &ring, &idx) == 2 &&
			    (int)ring == r)
				running = true;
		if (f)
			fclose(f);
		if (running)
			return true;
		usleep(10000);
	}
	return false;
}

static int inject(const char *word)
{
	return write_file(dbg("inject"), word);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ll + t.tv_nsec / 1000000;
}

/* A file with a command BO, a status BO and a destination BO. */
struct ctx {
	int fd;
	struct bo cmd, st, dst;
	uint32_t sync[MAX_JOBS];
};

static int ctx_open(struct ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = open_npu();
	if (c->fd < 0)
		return -ENODEV;
	if (bo_new(c->fd, SLOT * MAX_JOBS, &c->cmd) || bo_new(c->fd, SLOT * MAX_JOBS, &c->st) ||
	    bo_new(c->fd, 64 * MAX_JOBS, &c->dst))
		return -ENOMEM;
	return 0;
}

/* ctx_open(), and the sysfs folder of the device's PCI function in @pcidev. */
static int ctx_open_dev(struct ctx *c, char *pcidev)
{
	char node[64], link[PATH_MAX];

	memset(c, 0, sizeof(*c));
	c->fd = open_npu_node(node, sizeof(node));
	if (c->fd < 0)
		return -ENODEV;
	if (bo_new(c->fd, SLOT * MAX_JOBS, &c->cmd) || bo_new(c->fd, SLOT * MAX_JOBS, &c->st) ||
	    bo_new(c->fd, 64 * MAX_JOBS, &c->dst))
		return -ENOMEM;
	snprintf(link, sizeof(link), "/sys/class/accel/%s/device", strrchr(node, '/') + 1);
	return realpath(link, pcidev) ? 0 : -errno;
}

static void ctx_close(struct ctx *c)
{
	close(c->fd);
	c->fd = -1;
}

/* Queue job @i: fill 64 bytes of dst slot @i with @pattern, on @ring. */
static int submit_fill(struct ctx *c, int i, uint32_t ring, uint32_t pattern)
{
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, c->dst.va + 64 * i, 64, pattern, 0 };
	struct drm_npu_sync out;
	struct drm_npu_submit s = {
		.cmd_handle = c->cmd.handle, .cmd_offset = SLOT * i, .cmd_size = 32, .ring = ring,
		.out_sync_count = 1, .status_handle = c->st.handle, .status_offset = SLOT * i,
	};

	if (!c->sync[i] && drmSyncobjCreate(c->fd, 0, &c->sync[i]))
		return -errno;
	drmSyncobjReset(c->fd, &c->sync[i], 1);
	out = (struct drm_npu_sync){ .handle = c->sync[i] };
	s.out_syncs = (uintptr_t)&out;
	memcpy((uint8_t *)c->cmd.map + SLOT * i, &f, sizeof(f));
	memset((uint8_t *)c->dst.map + 64 * i, 0, 64);
	return ioctl(c->fd, DRM_IOCTL_NPU_SUBMIT, &s) ? -errno : 0;
}

/*
 * Queue fills @first..@first+@n-1 (as submit_fill()) as one batch on ring
 * 0, signalling job @first's syncobj when the last ends.
 */
static int submit_fill_batch(struct ctx *c, int first, int n, uint32_t pattern)
{
	struct drm_npu_submit_cmd cmds[8];
	struct drm_npu_sync out;
	struct drm_npu_submit s = {
		.cmds = (uintptr_t)cmds, .cmd_count = n, .out_sync_count = 1,
		.status_handle = c->st.handle,
	};

	if (n > 8 || (!c->sync[first] && drmSyncobjCreate(c->fd, 0, &c->sync[first])))
		return -EINVAL;
	drmSyncobjReset(c->fd, &c->sync[first], 1);
	out = (struct drm_npu_sync){ .handle = c->sync[first] };
	s.out_syncs = (uintptr_t)&out;
	for (int k = 0; k < n; k++) {
		int i = first + k;
		struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, c->dst.va + 64 * i, 64,
					      pattern + (uint32_t)k * 0x01010101u, 0 };

		memcpy((uint8_t *)c->cmd.map + SLOT * i, &f, sizeof(f));
		memset((uint8_t *)c->dst.map + 64 * i, 0, 64);
		cmds[k] = (struct drm_npu_submit_cmd){ .cmd_handle = c->cmd.handle,
			.cmd_offset = SLOT * i, .cmd_size = 32, .status_offset = SLOT * i };
	}
	return ioctl(c->fd, DRM_IOCTL_NPU_SUBMIT, &s) ? -errno : 0;
}

/*
 * Wait for job @i (20 s at most: within the harness's 30 s for a test, so
 * that a job that never ends fails the test with its line, not a kill);
 * its status, or -errno.
 */
static int wait_job(struct ctx *c, int i)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (drmSyncobjWait(c->fd, &c->sync[i], 1, (t.tv_sec + 20) * 1000000000ll,
			   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		return -errno;
	return (int)((struct drm_npu_job_result *)((uint8_t *)c->st.map + SLOT * i))->status;
}

static int run_fill(struct ctx *c, int i, uint32_t ring, uint32_t pattern)
{
	int ret = submit_fill(c, i, ring, pattern);

	return ret ? ret : wait_job(c, i);
}

/* Did job @i's 64 bytes all become the low byte of @pattern? */
static bool filled(struct ctx *c, int i, uint32_t pattern)
{
	const uint8_t *d = (uint8_t *)c->dst.map + 64 * i;

	for (int b = 0; b < 64; b++)
		if (d[b] != (uint8_t)(pattern >> (8 * (b & 3))))
			return false;
	return true;
}

/* Listen for the driver's "NPU_RESET=1" uevent. */
static int uevent_open(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a))) {
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

static bool uevent_seen(int s, int timeout_ms)
{
	char buf[4096];
	int64_t end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, (int)(end - now_ms())) <= 0)
			break;
		n = recv(s, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = 0;
		for (char *p2 = buf; p2 < buf + n; p2 += strlen(p2) + 1)
			if (!strcmp(p2, "NPU_RESET=1"))
				return true;
	}
	return false;
}

/* One look at the devcoredumps (coredump_has), each deleted once read. */
static bool coredump_read(const char *what)
{
	char buf[32768];
	bool found = false;
	glob_t g;

	if (glob("/sys/class/devcoredump/devcd*/data", 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int fd = open(g.gl_pathv[i], O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			found |= strstr(buf, "npu devcoredump") && strstr(buf, what);
		}
		write_file(g.gl_pathv[i], "1");	/* done with it */
	}
	globfree(&g);
	return found;
}

/*
 * Read and delete the devcoredumps; whether one held @what. The driver
 * posts its dump from a work item after the recovery, so a job may
 * complete before the dump is there: it is looked for for up to 2 s. A
 * kernel without CONFIG_DEV_COREDUMP has no such class: a check of a dump
 * then fails, saying why (the guest's Debian kernel has it).
 */
static bool coredump_has(const char *what)
{
	bool found = false;

	if (access("/sys/class/devcoredump", F_OK)) {
		fprintf(stderr, "# no devcoredump in this kernel (CONFIG_DEV_COREDUMP)\n");
		return false;
	}
	for (int tries = 0; tries < 40 && !found; tries++) {
		if (tries)
			usleep(50000);
		found = coredump_read(what);
	}
	return found;
}

/*
 * A job of eight average pools of 256x256x32 int8 over 16x16 windows
 * (0.5e9 adds each): longer than the 1 s timeout in all, but every pool
 * ends well within it, so the device is seen moving.
 */
TEST(slow_but_moving_gets_more_time)
{
	struct ctx c;
	struct bo in = {}, out = {}, cmd = {};
	struct npu_cmd_pool_i8 p[8];
	uint32_t sync;
	struct drm_npu_sync o;
	struct drm_npu_submit s = { .cmd_size = sizeof(p), .out_sync_count = 1 };
	int extended = counter("extended"), resets = counter("engine_resets");
	int64_t t0;
	struct timespec t;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, bo_new(c.fd, 256 * 256 * 32, &in));
	ASSERT_EQ(0, bo_new(c.fd, 241 * 241 * 32, &out));
	ASSERT_EQ(0, bo_new(c.fd, 4096, &cmd));
	memset(in.map, 3, in.size);
	for (int i = 0; i < 8; i++)
		p[i] = (struct npu_cmd_pool_i8){
			.hdr = { NPU_CMD_POOL_I8, sizeof(p[0]) }, .in = in.va, .out = out.va,
			.batch = 1, .in_h = 256, .in_w = 256, .c = 32, .out_h = 241, .out_w = 241,
			.k_h = 16, .k_w = 16, .stride_h = 1, .stride_w = 1,
			.act_min = -128, .act_max = 127, .flags = NPU_POOL_AVG,
		};
	memcpy(cmd.map, p, sizeof(p));
	ASSERT_EQ(0, drmSyncobjCreate(c.fd, 0, &sync));
	o = (struct drm_npu_sync){ .handle = sync };
	s.cmd_handle = cmd.handle;
	s.out_syncs = (uintptr_t)&o;
	s.status_handle = c.st.handle;
	t0 = now_ms();
	ASSERT_EQ(0, ioctl(c.fd, DRM_IOCTL_NPU_SUBMIT, &s));
	clock_gettime(CLOCK_MONOTONIC, &t);
	ASSERT_EQ(0, drmSyncobjWait(c.fd, &sync, 1, (t.tv_sec + 120) * 1000000000ll, 0, NULL));
	EXPECT_EQ(DRM_NPU_JOB_OK, ((struct drm_npu_job_result *)c.st.map)->status);
	EXPECT_EQ(3, ((int8_t *)out.map)[out.size / 2]);	/* the average of threes */
	fprintf(stderr, "# slow job: %lld ms, extended %d times\n", (long long)(now_ms() - t0),
		counter("extended") - extended);
	if (now_ms() - t0 > 1500)	/* it outlived its timeout: it was extended */
		EXPECT_LT(extended, counter("extended"));
	EXPECT_EQ(resets, counter("engine_resets"));
	ctx_close(&c);
}

TEST(lost_interrupt_is_found)
{
	struct ctx c;
	int found = counter("found_done");

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, inject("lost_irq"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x01020304));
	EXPECT_TRUE(filled(&c, 0, 0x01020304));
	EXPECT_EQ(found + 1, counter("found_done"));
	ctx_close(&c);
}

TEST(bad_completion_fails_its_job_only)
{
	struct ctx c;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, inject("bad_completion"));
	EXPECT_EQ(DRM_NPU_JOB_BUS_ERROR, run_fill(&c, 0, 0, 0x11111111));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 1, 0, 0x22222222));
	EXPECT_TRUE(filled(&c, 1, 0x22222222));
	ctx_close(&c);
}

/*
 * A hung engine: its job times out, alone. The jobs queued behind it on
 * its ring and on another ring (whose timeout fires too) complete.
 */
TEST(engine_hang_costs_only_its_job)
{
	struct ctx c;
	int resets = counter("engine_resets"), reboots = counter("fw_reboots");
	int ue = uevent_open(), hung = -1;
	int64_t t0;

	ASSERT_LE(0, ue) TH_LOG("no uevent socket: %s", strerror(errno));
	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, inject("engine_hang"));
	t0 = now_ms();
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x10101010));
	ASSERT_EQ(0, submit_fill(&c, 1, 0, 0x20202020));
	ASSERT_EQ(0, submit_fill(&c, 2, 1, 0x30303030));
	ASSERT_EQ(0, submit_fill(&c, 3, 1, 0x40404040));
	/*
	 * The fault hangs the next job command the engine takes: job 0's, or
	 * job 2's when ring 1's scheduler submits first (both rings are
	 * queued at once). Exactly one job pays for it; the others complete.
	 */
	for (int i = 0; i < 4; i++) {
		int st = wait_job(&c, i);

		if (st == DRM_NPU_JOB_TIMEOUT) {
			EXPECT_EQ(-1, hung);
			EXPECT_TRUE(i == 0 || i == 2);	/* the first of its ring */
			hung = i;
			fprintf(stderr, "# engine_hang: job %d hung, ended after %lld ms\n", i,
				(long long)(now_ms() - t0));
			continue;
		}
		EXPECT_EQ(DRM_NPU_JOB_OK, st);
		EXPECT_TRUE(filled(&c, i, 0x10101010u * (i + 1)));
	}
	EXPECT_NE(-1, hung);
	EXPECT_EQ(resets + 1, counter("engine_resets"));
	EXPECT_EQ(reboots, counter("fw_reboots"));
	EXPECT_TRUE(uevent_seen(ue, 5000));
	close(ue);
	EXPECT_TRUE(coredump_has("recovered by: engine_reset"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 4, 0, 0x50505050));
	ctx_close(&c);
}

/* A hung firmware with nothing running: the queued jobs run after a reboot. */
TEST(fw_hang_reboots_and_replays)
{
	struct ctx c;
	int reboots = counter("fw_reboots"), replayed = counter("replayed");
	int64_t t0;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x01010101));
	ASSERT_EQ(0, inject("fw_hang"));
	usleep(100000);			/* the core stops at its next run */
	t0 = now_ms();
	ASSERT_EQ(0, submit_fill(&c, 1, 0, 0x02020202));
	ASSERT_EQ(0, submit_fill(&c, 2, 2, 0x03030303));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 1));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 2));
	fprintf(stderr, "# fw_hang: recovered in %lld ms\n", (long long)(now_ms() - t0));
	EXPECT_TRUE(filled(&c, 1, 0x02020202));
	EXPECT_TRUE(filled(&c, 2, 0x03030303));
	EXPECT_EQ(reboots + 1, counter("fw_reboots"));
	EXPECT_LE(replayed + 2, counter("replayed"));
	EXPECT_TRUE(coredump_has("recovered by: fw_reboot"));
	ctx_close(&c);
}

/* A batch queued on a hung firmware: after the reboot each command runs, once. */
TEST(fw_hang_replays_a_batch)
{
	struct ctx c;
	int replayed = counter("replayed");

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x01010101));
	ASSERT_EQ(0, inject("fw_hang"));
	usleep(100000);			/* the core stops at its next run */
	ASSERT_EQ(0, submit_fill_batch(&c, 1, 3, 0x21212121));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 1));	/* the batch's syncobj: all ended */
	for (int k = 0; k < 3; k++) {
		const struct drm_npu_job_result *r =
			(void *)((uint8_t *)c.st.map + SLOT * (1 + k));

		EXPECT_EQ(DRM_NPU_JOB_OK, r->status);
		EXPECT_TRUE(filled(&c, 1 + k, 0x21212121u + (uint32_t)k * 0x01010101u));
	}
	EXPECT_LE(replayed + 3, counter("replayed"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 4, 0, 0x05050505));
	ctx_close(&c);
}

/* A crash is reported by its interrupt: recovery starts at once. */
TEST(fw_crash_reboots_at_once)
{
	struct ctx c;
	int crashes = counter("fw_crashes"), reboots = counter("fw_reboots");
	int64_t t0;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, inject("fw_crash"));
	t0 = now_ms();
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x0a0a0a0a));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 0));
	fprintf(stderr, "# fw_crash: recovered in %lld ms\n", (long long)(now_ms() - t0));
	EXPECT_TRUE(filled(&c, 0, 0x0a0a0a0a));
	EXPECT_EQ(crashes + 1, counter("fw_crashes"));
	EXPECT_EQ(reboots + 1, counter("fw_reboots"));
	coredump_has("");
	ctx_close(&c);
}

/* The reboot fails once: a function level reset, then the jobs run. */
TEST(failed_reboot_falls_back_to_flr)
{
	struct ctx c;
	int flrs = counter("flrs");
	int64_t t0;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, write_file(dbg("fail_boots"), "1"));
	ASSERT_EQ(0, inject("fw_hang"));
	usleep(100000);
	t0 = now_ms();
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x0b0b0b0b));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 0));
	fprintf(stderr, "# failed reboot: recovered by FLR in %lld ms\n",
		(long long)(now_ms() - t0));
	EXPECT_TRUE(filled(&c, 0, 0x0b0b0b0b));
	EXPECT_EQ(flrs + 1, counter("flrs"));
	EXPECT_TRUE(coredump_has("recovered by: flr"));
	ctx_close(&c);
}

static bool hold_is(const char *state);

/*
 * Faults written while a recovery runs wait for it to end. A hung
 * firmware's recovery is held (debugfs recovery_hold) while a child starts
 * arming fw_crash as fast as it can, and goes on until the recovery (a
 * reboot that fails, then an FLR and a boot) is over: armed during a boot,
 * a crash would fail it and wedge the device. Instead they land after the
 * recovery, where each costs one more reboot; then a new context's jobs
 * run. The job was queued behind the hang and never reached the core, so
 * whether the hang or the first crash (during the hold) is found, the
 * recovery replays it: it ends OK.
 */
TEST(inject_during_recovery_waits_for_it)
{
	int wedged = counter("wedged"), flrs = counter("flrs"), st, ret = -1, go[2];
	int crashes = counter("fw_crashes");
	struct ctx c, c2;
	pid_t pid;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, write_file(dbg("fail_boots"), "1"));
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "1"));
	ASSERT_EQ(0, inject("fw_hang"));
	usleep(100000);
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x1c1c1c1c));
	ASSERT_TRUE(hold_is("held"));	/* the timeout's recovery, waiting */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct pollfd p = { .fd = go[0], .events = POLLIN };

		close(go[1]);
		while (!poll(&p, 1, 0))		/* until the parent says stop */
			if (inject("fw_crash"))
				_exit(1);
		_exit(0);
	}
	close(go[0]);
	usleep(300000);			/* the core traps; its recovery queues */
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "0"));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 0));
	EXPECT_TRUE(filled(&c, 0, 0x1c1c1c1c));
	for (int i = 0; i < 600 && counter("flrs") == flrs; i++)
		usleep(100000);
	usleep(100000);			/* a few more injections after it */
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(flrs + 1, counter("flrs"));
	EXPECT_EQ(wedged, counter("wedged"));
	/* The last crash may still take one job; the next must run. */
	ASSERT_EQ(0, ctx_open(&c2));
	for (int i = 0; i < 3; i++) {
		ret = run_fill(&c2, i, 0, 0x1d1d1d1d);
		if (ret == DRM_NPU_JOB_OK) {
			EXPECT_TRUE(filled(&c2, i, 0x1d1d1d1d));
			break;
		}
		EXPECT_EQ(DRM_NPU_JOB_ABORTED, ret);
	}
	EXPECT_EQ(DRM_NPU_JOB_OK, ret);
	EXPECT_EQ(wedged, counter("wedged"));
	EXPECT_LT(crashes, counter("fw_crashes"));	/* the injections did land */
	coredump_has("");
	ctx_close(&c2);
	ctx_close(&c);
}

/* Two hangs in a row (hang_limit=2): the context is banned, others are not. */
TEST(context_that_keeps_hanging_is_banned)
{
	struct ctx c, other;
	int banned = counter("banned");

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(0, ctx_open(&other));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, inject("engine_hang"));
		EXPECT_EQ(DRM_NPU_JOB_TIMEOUT, run_fill(&c, i, 0, 0x0c0c0c0c));
	}
	EXPECT_EQ(-ECANCELED, submit_fill(&c, 2, 0, 0x0d0d0d0d));
	EXPECT_EQ(banned + 1, counter("banned"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&other, 0, 0, 0x0e0e0e0e));
	coredump_has("");
	ctx_close(&c);
	ctx_close(&other);
}

/* close() with a hung job on the device returns; the device recovers. */
TEST(close_with_a_hung_job_does_not_block)
{
	int timeouts = counter("timeouts"), status;
	struct ctx c;
	pid_t pid;

	ASSERT_EQ(0, inject("engine_hang"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (ctx_open(&c) || submit_fill(&c, 0, 0, 0x0f0f0f0f))
			_exit(1);
		usleep(200000);		/* on the device, hung */
		alarm(5);		/* close() blocking would kill us */
		close(c.fd);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The job times out in the closed file's context, then all is well. */
	for (int i = 0; i < 100 && counter("timeouts") == timeouts; i++)
		usleep(100000);
	ASSERT_EQ(0, ctx_open(&c));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x12121212));
	EXPECT_LT(timeouts, counter("timeouts"));
	coredump_has("");
	ctx_close(&c);
}

/*
 * A reset from outside (sysfs "reset": reset_prepare/reset_done) with jobs
 * queued behind a hung one: the hung one is lost (ABORTED), the others run.
 * The second job is submitted once the first is on the device, so that
 * the first takes the injected hang (each ring has its own scheduler: the
 * second used to reach the device first now and then, and hang instead).
 */
TEST(outside_reset_replays_the_queued_jobs)
{
	char pcidev[PATH_MAX], path[PATH_MAX + 16];
	int flrs = counter("flrs");
	struct ctx c;

	ASSERT_EQ(0, ctx_open_dev(&c, pcidev));
	ASSERT_EQ(0, inject("engine_hang"));
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x19191919));
	ASSERT_TRUE(ring_busy(0));
	ASSERT_EQ(0, submit_fill(&c, 1, 1, 0x1a1a1a1a));
	usleep(200000);
	snprintf(path, sizeof(path), "%s/reset", pcidev);
	ASSERT_EQ(0, write_file(path, "1"));
	EXPECT_EQ(DRM_NPU_JOB_ABORTED, wait_job(&c, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 1));
	EXPECT_TRUE(filled(&c, 1, 0x1a1a1a1a));
	EXPECT_EQ(flrs + 1, counter("flrs"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 2, 0, 0x1b1b1b1b));
	ctx_close(&c);
}

/* Every stage fails: the device is wedged until the driver binds again. */
TEST(wedged_until_rebound)
{
	struct drm_npu_bo_create bc = { .size = 4096 };
	char pcidev[PATH_MAX], path[PATH_MAX + 32];
	struct ctx c;
	int fd2 = -1;

	ASSERT_EQ(0, ctx_open_dev(&c, pcidev));
	ASSERT_EQ(0, write_file(dbg("fail_boots"), "2"));	/* reboot and FLR fail */
	ASSERT_EQ(0, inject("fw_hang"));
	usleep(100000);
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x13131313));
	EXPECT_EQ(DRM_NPU_JOB_ABORTED, wait_job(&c, 0));
	EXPECT_EQ(1, counter("wedged") > 0);
	EXPECT_EQ(-EIO, submit_fill(&c, 1, 0, 0x14141414));
	EXPECT_EQ(-1, ioctl(c.fd, DRM_IOCTL_NPU_BO_CREATE, &bc));
	EXPECT_EQ(EIO, errno);
	coredump_has("");
	munmap(c.cmd.map, c.cmd.size);
	munmap(c.st.map, c.st.size);
	munmap(c.dst.map, c.dst.size);
	close(c.fd);
	/* Unbind and bind the driver: a new device, booted, works. */
	snprintf(path, sizeof(path), "%s", strrchr(pcidev, '/') + 1);
	ASSERT_EQ(0, write_file("/sys/bus/pci/drivers/npu/unbind", path));
	ASSERT_EQ(0, write_file("/sys/bus/pci/drivers/npu/bind", path));
	fd2 = open_npu_wait();
	ASSERT_GE(fd2, 0);
	close(fd2);
	ASSERT_EQ(0, ctx_open(&c));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x15151515));
	EXPECT_EQ(0, counter("wedged"));
	ctx_close(&c);
}

/* debugfs "recovery_hold" says @state ("held", ...) within 10 s. */
static bool hold_is(const char *state)
{
	for (int i = 0; i < 1000; i++) {
		char buf[16] = "";
		FILE *f = fopen(dbg("recovery_hold"), "r");

		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		if (!strncmp(buf, state, strlen(state)))
			return true;
		usleep(10000);
	}
	return false;
}

/* A child that writes @s to @path (a write that may block); its pid. */
static pid_t write_in_child(const char *path, const char *s)
{
	pid_t pid = fork();

	if (!pid)
		_exit(write_file(path, s) ? 1 : 0);
	return pid;
}

/* The child's exit status, waiting up to 20 s; -1 if it did not end. */
static int child_status(pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	return -1;
}

/*
 * A hung engine's recovery held (debugfs recovery_hold) while a reset
 * comes from outside (sysfs "reset"): the reset waits for the recovery,
 * on the same workqueue, then runs. The hung job ends TIMEOUT (the engine
 * reset), the one queued behind it on another ring runs (after the
 * reset, put back on the device, or before it), and the device serves
 * jobs after both. The old driver's outside reset put the timed-out job
 * back on the scheduler's list with its fence callback still armed.
 */
TEST(outside_reset_waits_for_a_held_recovery)
{
	char pcidev[PATH_MAX], path[PATH_MAX + 16];
	int flrs = counter("flrs"), resets = counter("engine_resets");
	struct ctx c;
	pid_t child;

	ASSERT_EQ(0, ctx_open_dev(&c, pcidev));
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "1"));
	ASSERT_EQ(0, inject("engine_hang"));
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x31313131));
	ASSERT_TRUE(ring_busy(0));	/* job 0 takes the hang */
	ASSERT_EQ(0, submit_fill(&c, 1, 1, 0x32323232));
	ASSERT_TRUE(hold_is("held"));	/* a timeout's recovery, waiting */
	snprintf(path, sizeof(path), "%s/reset", pcidev);
	child = write_in_child(path, "1");
	usleep(300000);
	EXPECT_EQ(0, waitpid(child, NULL, WNOHANG)) TH_LOG("the reset did not wait");
	EXPECT_EQ(flrs, counter("flrs"));
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "0"));
	EXPECT_EQ(0, child_status(child));
	EXPECT_EQ(DRM_NPU_JOB_TIMEOUT, wait_job(&c, 0));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 1));
	EXPECT_TRUE(filled(&c, 1, 0x32323232));
	EXPECT_EQ(resets + 1, counter("engine_resets"));
	EXPECT_EQ(flrs + 1, counter("flrs"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 2, 0, 0x33333333));
	EXPECT_TRUE(filled(&c, 2, 0x33333333));
	ctx_close(&c);
}

/*
 * The firmware crashes while a hung engine's recovery is held: the
 * recovery finds it crashed, so the job it ran ends ABORTED (not TIMEOUT,
 * no engine reset), the firmware is rebooted once, the job queued behind
 * runs, and the crash's own recovery, queued meanwhile, finds nothing
 * left to do.
 */
TEST(crash_during_a_held_recovery)
{
	int reboots = counter("fw_reboots"), crashes = counter("fw_crashes");
	int resets = counter("engine_resets");
	struct ctx c;

	ASSERT_EQ(0, ctx_open(&c));
	ASSERT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x34343434));	/* hangs: 0 */
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "1"));
	ASSERT_EQ(0, inject("engine_hang"));
	ASSERT_EQ(0, submit_fill(&c, 1, 0, 0x35353535));
	ASSERT_TRUE(ring_busy(0));
	ASSERT_EQ(0, submit_fill(&c, 2, 1, 0x36363636));
	ASSERT_TRUE(hold_is("held"));
	ASSERT_EQ(0, inject("fw_crash"));
	usleep(300000);			/* the core traps; its recovery queues */
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "0"));
	EXPECT_EQ(DRM_NPU_JOB_ABORTED, wait_job(&c, 1));
	EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, 2));
	EXPECT_TRUE(filled(&c, 2, 0x36363636));
	EXPECT_EQ(reboots + 1, counter("fw_reboots"));
	EXPECT_EQ(crashes + 1, counter("fw_crashes"));
	EXPECT_EQ(resets, counter("engine_resets"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 3, 0, 0x37373737));
	coredump_has("");
	ctx_close(&c);
}

/*
 * A context whose jobs crash the firmware again and again is banned as
 * one whose jobs hang is (hang_limit=2): each crash rebooted the device
 * for every context.
 */
TEST(context_that_keeps_crashing_is_banned)
{
	int banned = counter("banned");
	struct ctx c;

	ASSERT_EQ(0, ctx_open(&c));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, inject("engine_hang"));	/* keeps the job on the core */
		ASSERT_EQ(0, submit_fill(&c, i, 0, 0x38383838));
		ASSERT_TRUE(fw_running(0));	/* the crash's culprit, not replayed */
		ASSERT_EQ(0, inject("fw_crash"));
		EXPECT_EQ(DRM_NPU_JOB_ABORTED, wait_job(&c, i));
	}
	EXPECT_EQ(banned + 1, counter("banned"));
	EXPECT_EQ(-ECANCELED, submit_fill(&c, 2, 0, 0x39393939));
	coredump_has("");
	ctx_close(&c);
	/* Another context is not banned. */
	ASSERT_EQ(0, ctx_open(&c));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x3a3a3a3a));
	ctx_close(&c);
}

/*
 * The device's removal while a timeout's recovery is held: the removal
 * waits for the recovery (it is inside the device), which ends the hung
 * job TIMEOUT; then every job left on the device fails and no wait is
 * left hanging; a rescan brings a device that works.
 */
TEST(removal_waits_for_a_held_recovery)
{
	char pcidev[PATH_MAX], path[PATH_MAX + 16];
	struct ctx c;
	int fd2 = -1, st, sf[2];
	pid_t child;

	ASSERT_EQ(0, ctx_open_dev(&c, pcidev));
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "1"));
	ASSERT_EQ(0, inject("engine_hang"));
	ASSERT_EQ(0, submit_fill(&c, 0, 0, 0x16161616));
	ASSERT_TRUE(ring_busy(0));	/* job 0 takes the hang, not job 1 */
	ASSERT_EQ(0, submit_fill(&c, 1, 1, 0x17171717));
	/* The device's ioctls fail once it is gone: wait on sync files. */
	ASSERT_EQ(0, drmSyncobjExportSyncFile(c.fd, c.sync[0], &sf[0]));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(c.fd, c.sync[1], &sf[1]));
	ASSERT_TRUE(hold_is("held"));
	snprintf(path, sizeof(path), "%s/remove", pcidev);
	child = write_in_child(path, "1");
	usleep(300000);
	EXPECT_EQ(0, waitpid(child, NULL, WNOHANG)) TH_LOG("the removal did not wait");
	ASSERT_EQ(0, write_file(dbg("recovery_hold"), "0"));
	EXPECT_EQ(0, child_status(child));
	for (int i = 0; i < 2; i++) {
		struct pollfd p = { .fd = sf[i], .events = POLLIN };

		EXPECT_EQ(1, poll(&p, 1, 20000)) TH_LOG("job %d never ended", i);
		close(sf[i]);
	}
	st = ((struct drm_npu_job_result *)c.st.map)->status;
	EXPECT_EQ(DRM_NPU_JOB_TIMEOUT, st);
	st = ((struct drm_npu_job_result *)((uint8_t *)c.st.map + SLOT))->status;
	EXPECT_TRUE(st == DRM_NPU_JOB_OK || st == DRM_NPU_JOB_ABORTED) TH_LOG("status %d", st);
	munmap(c.cmd.map, c.cmd.size);
	munmap(c.st.map, c.st.size);
	munmap(c.dst.map, c.dst.size);
	close(c.fd);
	ASSERT_EQ(0, write_file("/sys/bus/pci/rescan", "1"));
	fd2 = open_npu_wait();
	ASSERT_GE(fd2, 0);
	close(fd2);
	coredump_has("");
	ASSERT_EQ(0, ctx_open(&c));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 0, 0, 0x18181818));
	ctx_close(&c);
}

/*
 * System sleep, its callbacks driven as the PM core calls them (debugfs
 * "pm": the guest's 9p root cannot go through a real suspend). Jobs
 * submitted before the suspend end (on the device, or after it); one
 * submitted while suspended waits, and runs once the firmware is booted
 * again at resume, with every result right.
 */
TEST(suspend_and_resume_keep_every_job)
{
	int resumes = counter("resumes");
	struct ctx c;

	ASSERT_EQ(0, ctx_open(&c));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, submit_fill(&c, i, i % 2, 0x41414141u + 0x01010101u * i));
	ASSERT_EQ(0, write_file(dbg("pm"), "suspend"));
	ASSERT_EQ(0, submit_fill(&c, 4, 0, 0x45454545));
	usleep(300000);
	EXPECT_EQ(DRM_NPU_JOB_PENDING,
		  ((struct drm_npu_job_result *)((uint8_t *)c.st.map + SLOT * 4))->status);
	ASSERT_EQ(0, write_file(dbg("pm"), "resume"));
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(DRM_NPU_JOB_OK, wait_job(&c, i)) TH_LOG("job %d", i);
		EXPECT_TRUE(filled(&c, i, 0x41414141u + 0x01010101u * i)) TH_LOG("job %d", i);
	}
	EXPECT_EQ(resumes + 1, counter("resumes"));
	EXPECT_EQ(DRM_NPU_JOB_OK, run_fill(&c, 5, 1, 0x46464646));
	ctx_close(&c);
}

TEST_HARNESS_MAIN
