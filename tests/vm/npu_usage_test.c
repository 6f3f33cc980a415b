// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_usage_test.c - what the driver reports about the NPU's use, in the
 * guest, with exact expectations: the device writes each command's device
 * time and modeled cycles into its completion record, so a file's fdinfo
 * (drm-engine-npu, drm-cycles-npu) and the device's sysfs counters must
 * move by exactly the sums of the results its jobs got; buffers show in
 * fdinfo's memory keys to the byte; the identity keys are the device's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "npu_cmd.h"
#include "npu_hw.h"
#include "npu_test_util.h"

#define SEC 1000000000ll

/* The value of @key in @fd's fdinfo (text after the tab), or NULL. */
static char *fdinfo(int fd, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;
	char *ret = NULL;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!ret && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			char *v = line + klen + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(val, len, "%s", v);
			ret = val;
		}
	fclose(f);
	return ret;
}

/* A number in fdinfo, with an optional unit (ns, KiB, MiB) applied; -1 if absent. */
static long long fdinfo_num(int fd, const char *key)
{
	char v[128], unit[16] = "";
	unsigned long long n;

	if (!fdinfo(fd, key, v, sizeof(v)) || sscanf(v, "%llu %15s", &n, unit) < 1)
		return -1;
	if (!strcmp(unit, "KiB"))
		n <<= 10;
	else if (!strcmp(unit, "MiB"))
		n <<= 20;
	return (long long)n;
}

/* The npu device's sysfs folder, from the node @fd was opened on. */
static int sysfs_dir(const char *node, char *dir, size_t len)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "/sys/class/accel/%s/device", basename((char *)node));
	return realpath(tmp, dir) && strlen(dir) < len ? 0 : -1;
}

static int sysfs_read(const char *dir, const char *name, char *val, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(val, (int)len, f) != NULL;
	fclose(f);
	val[strcspn(val, "\n")] = 0;
	return ok ? 0 : -1;
}

static long long sysfs_num(const char *dir, const char *name)
{
	char v[64];

	return sysfs_read(dir, name, v, sizeof(v)) ? -1 : strtoll(v, NULL, 10);
}

static int submit_seqno(int fd, struct bo *cmd, const void *body, uint32_t len, struct bo *st,
			uint32_t off, uint32_t sync, uint64_t *seqno)
{
	struct drm_npu_sync out = { .handle = sync };
	struct drm_npu_submit s = {
		.cmd_handle = cmd->handle, .cmd_size = len, .out_sync_count = 1,
		.out_syncs = (uintptr_t)&out, .status_handle = st->handle, .status_offset = off,
	};
	struct timespec t;

	memcpy(cmd->map, body, len);
	if (ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s))
		return -errno;
	if (seqno)
		*seqno = s.seqno;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return drmSyncobjWait(fd, &sync, 1, t.tv_sec * SEC + t.tv_nsec + 60 * SEC,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
}

static int submit_wait(int fd, struct bo *cmd, const void *body, uint32_t len, struct bo *st,
		       uint32_t off, uint32_t sync)
{
	return submit_seqno(fd, cmd, body, len, st, off, sync, NULL);
}

static struct drm_npu_job_result *result(struct bo *status, uint32_t off)
{
	return (struct drm_npu_job_result *)((char *)status->map + off);
}

FIXTURE(usage) {
	int fd;
	char node[64], dir[PATH_MAX];
	struct bo cmd, status, a;
	uint32_t sync;
};

FIXTURE_SETUP(usage)
{
	self->fd = open_npu_node(self->node, sizeof(self->node));
	ASSERT_GE(self->fd, 0) TH_LOG("no npu accel node (is npu.ko loaded?)");
	ASSERT_EQ(0, sysfs_dir(self->node, self->dir, sizeof(self->dir)));
	ASSERT_EQ(0, bo_new(self->fd, 65536, &self->cmd));
	ASSERT_EQ(0, bo_new(self->fd, 65536, &self->status));
	ASSERT_EQ(0, bo_new(self->fd, 1 << 20, &self->a));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &self->sync));
}

FIXTURE_TEARDOWN(usage)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* The DRM core's keys and the driver's, as drm-usage-stats spells them. */
TEST_F(usage, fdinfo_names_the_client_and_device)
{
	char v[128], v2[128];
	int fd2 = open_npu();

	ASSERT_NE(NULL, fdinfo(self->fd, "drm-driver", v, sizeof(v)));
	EXPECT_STREQ("npu", v);
	ASSERT_NE(NULL, fdinfo(self->fd, "drm-pdev", v, sizeof(v)));
	EXPECT_STREQ(basename(self->dir), v);
	ASSERT_NE(NULL, fdinfo(self->fd, "drm-maxfreq-npu", v, sizeof(v)));
	EXPECT_STREQ("1000 MHz", v);	/* the model's clock-mhz */
	ASSERT_NE(NULL, fdinfo(self->fd, "drm-engine-npu", v, sizeof(v)));
	EXPECT_STREQ("0 ns", v);	/* nothing run yet */
	EXPECT_EQ(0, fdinfo_num(self->fd, "drm-cycles-npu"));
	/* Each open file is its own client. */
	ASSERT_GE(fd2, 0);
	ASSERT_NE(NULL, fdinfo(self->fd, "drm-client-id", v, sizeof(v)));
	ASSERT_NE(NULL, fdinfo(fd2, "drm-client-id", v2, sizeof(v2)));
	EXPECT_STRNE(v, v2);
	close(fd2);
}

/*
 * Jobs of different lengths, one a batch of three: the file's
 * drm-engine-npu and drm-cycles-npu move by exactly the sums of their
 * results' device times and cycles, the device's npu_cycles and jobs too,
 * and its busy time to the microsecond; another file's stay at zero.
 */
TEST_F(usage, engine_time_is_the_sum_of_the_jobs)
{
	long long ns0 = fdinfo_num(self->fd, "drm-engine-npu");
	long long cy0 = fdinfo_num(self->fd, "drm-cycles-npu");
	long long dev_us0 = sysfs_num(self->dir, "npu_busy_time_us");
	long long dev_cy0 = sysfs_num(self->dir, "npu_cycles");
	long long done0 = sysfs_num(self->dir, "npu_jobs_done");
	unsigned long long ns = 0, cycles = 0, dev_ns;
	struct drm_npu_submit_cmd cmds[3];
	struct drm_npu_sync out = { .handle = self->sync };
	struct drm_npu_submit s = {
		.cmds = (uintptr_t)cmds, .cmd_count = 3, .out_sync_count = 1,
		.out_syncs = (uintptr_t)&out, .status_handle = self->status.handle,
	};
	int other = open_npu();

	ASSERT_GE(ns0, 0);
	ASSERT_GE(dev_us0, 0);
	ASSERT_GE(other, 0);
	for (int i = 0; i < 4; i++) {
		struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, sizeof(f) }, self->a.va,
					      4096u << (2 * i), 0x01010101u * i, 0 };
		struct drm_npu_job_result *r = result(&self->status, 64 * i);

		ASSERT_EQ(0, submit_wait(self->fd, &self->cmd, &f, sizeof(f), &self->status,
					 64 * i, self->sync));
		ASSERT_EQ(DRM_NPU_JOB_OK, r->status);
		ASSERT_LT(r->start_ns, r->end_ns);
		ns += r->end_ns - r->start_ns;
		cycles += r->cycles;
	}
	for (int i = 0; i < 3; i++) {
		struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, sizeof(f) }, self->a.va,
					      100000u * (i + 1), 0x5a5a5a5a, 0 };

		memcpy((char *)self->cmd.map + 4096 + 256 * i, &f, sizeof(f));
		cmds[i] = (struct drm_npu_submit_cmd){ .cmd_handle = self->cmd.handle,
			.cmd_offset = 4096 + 256 * i, .cmd_size = sizeof(f),
			.status_offset = 1024 + 64 * i };
	}
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_SUBMIT, &s));
	{
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ASSERT_EQ(0, drmSyncobjWait(self->fd, &self->sync, 1,
					    t.tv_sec * SEC + t.tv_nsec + 60 * SEC,
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL));
	}
	for (int i = 0; i < 3; i++) {
		struct drm_npu_job_result *r = result(&self->status, 1024 + 64 * i);

		ASSERT_EQ(DRM_NPU_JOB_OK, r->status);
		ns += r->end_ns - r->start_ns;
		cycles += r->cycles;
	}
	ASSERT_GT(cycles, 0u);
	EXPECT_EQ(ns, (unsigned long long)(fdinfo_num(self->fd, "drm-engine-npu") - ns0));
	EXPECT_EQ(cycles, (unsigned long long)(fdinfo_num(self->fd, "drm-cycles-npu") - cy0));
	EXPECT_EQ(cycles, (unsigned long long)(sysfs_num(self->dir, "npu_cycles") - dev_cy0));
	EXPECT_EQ(5, sysfs_num(self->dir, "npu_jobs_done") - done0);	/* the batch is one */
	/* Whole microseconds of a nanosecond sum: the new sum's, less the old's. */
	dev_ns = (unsigned long long)(sysfs_num(self->dir, "npu_busy_time_us") - dev_us0) * 1000;
	EXPECT_LE(dev_ns, ns + 1000);
	EXPECT_GE(dev_ns + 1000, ns);
	EXPECT_EQ(0, fdinfo_num(other, "drm-engine-npu"));
	EXPECT_EQ(0, fdinfo_num(other, "drm-cycles-npu"));
	close(other);
}

/* A job that faults: one failed job, one MMU fault, and its time still counted. */
TEST_F(usage, a_fault_counts_once)
{
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, self->a.va, 0x7000000000ull, 64 };
	struct drm_npu_job_result *r = result(&self->status, 0);
	long long failed0 = sysfs_num(self->dir, "npu_jobs_failed");
	long long faults0 = sysfs_num(self->dir, "npu_mmu_faults");
	long long done0 = sysfs_num(self->dir, "npu_jobs_done");
	long long ns0 = fdinfo_num(self->fd, "drm-engine-npu");

	ASSERT_GE(failed0, 0);
	ASSERT_GE(faults0, 0);
	ASSERT_EQ(0, submit_wait(self->fd, &self->cmd, &cp, 32, &self->status, 0, self->sync));
	ASSERT_EQ(DRM_NPU_JOB_MMU_FAULT, r->status);
	EXPECT_EQ(1, sysfs_num(self->dir, "npu_jobs_failed") - failed0);
	EXPECT_EQ(1, sysfs_num(self->dir, "npu_mmu_faults") - faults0);
	EXPECT_EQ(0, sysfs_num(self->dir, "npu_jobs_done") - done0);
	EXPECT_EQ((long long)(r->end_ns - r->start_ns),
		  fdinfo_num(self->fd, "drm-engine-npu") - ns0);
}

/* Buffers in fdinfo's memory keys, to the byte, in a file of their own. */
TEST_F(usage, fdinfo_memory_is_the_buffers)
{
	int fd = open_npu();
	struct bo x, y;

	ASSERT_GE(fd, 0);
	EXPECT_EQ(0, fdinfo_num(fd, "drm-total-memory"));
	ASSERT_EQ(0, bo_new(fd, 1 << 20, &x));
	ASSERT_EQ(0, bo_new(fd, 65536, &y));
	EXPECT_EQ((1 << 20) + 65536, fdinfo_num(fd, "drm-total-memory"));
	/* Pinned for the device's page tables as they are made: resident. */
	EXPECT_EQ((1 << 20) + 65536, fdinfo_num(fd, "drm-resident-memory"));
	bo_free(fd, &y);
	EXPECT_EQ(1 << 20, fdinfo_num(fd, "drm-total-memory"));
	bo_free(fd, &x);
	close(fd);
}

/* The device's sysfs: the model's clock and array, the firmware, the resets. */
TEST_F(usage, sysfs_describes_the_device)
{
	static const char *const resets[] = {
		"npu_resets/timeouts", "npu_resets/engine_resets", "npu_resets/fw_reboots",
		"npu_resets/flrs", "npu_resets/wedged", "npu_fw_crashes", "npu_contexts_banned",
	};
	struct drm_npu_device_info info = {};
	struct drm_npu_query q = { .type = DRM_NPU_QUERY_DEVICE, .size = sizeof(info),
				   .data = (uintptr_t)&info };
	char v[64], want[64];

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_NPU_QUERY, &q));
	ASSERT_EQ(0, sysfs_read(self->dir, "npu_fw_version", v, sizeof(v)));
	snprintf(want, sizeof(want), "%u.%u.%u", info.fw_version >> 16,
		 (info.fw_version >> 8) & 0xff, info.fw_version & 0xff);
	EXPECT_STREQ(want, v);
	EXPECT_EQ(1000, sysfs_num(self->dir, "npu_clock_mhz"));
	EXPECT_EQ(32, sysfs_num(self->dir, "npu_mac_rows"));
	EXPECT_EQ(32, sysfs_num(self->dir, "npu_mac_cols"));
	for (size_t i = 0; i < sizeof(resets) / sizeof(resets[0]); i++) {
		const char *name = resets[i];

		EXPECT_LE(0, sysfs_num(self->dir, name)) TH_LOG("%s", name);
	}
}

/*
 * npu-smi --json (build/tools, run from the repository) lists the device
 * as the driver has it, and this process with exactly its fdinfo's engine
 * time, cycles and memory.
 */
TEST_F(usage, npu_smi_lists_this_process)
{
	struct npu_cmd_dma_fill f = { { NPU_CMD_DMA_FILL, 32 }, self->a.va, 300000, 0x1, 0 };
	char *out = calloc(1, 1 << 20), want[128], fw[32], name[64];
	unsigned long long cid, ns, cycles, mem;
	size_t len = 0;
	int pid = -1;
	const char *p;
	FILE *smi;

	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, submit_wait(self->fd, &self->cmd, &f, 32, &self->status, 0, self->sync));
	smi = popen("build/tools/npu-smi --json -i 0", "r");
	ASSERT_NE(NULL, smi);
	while (len < (1 << 20) - 1 && fgets(out + len, (int)((1 << 20) - len), smi))
		len += strlen(out + len);
	ASSERT_EQ(0, pclose(smi)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"pci\": \"%s\", \"vendor\": \"0x1234\", "
		 "\"device\": \"0x4e50\", \"class\": \"0x1200\", \"driver\": \"npu\"",
		 basename(self->dir));
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"accel\": \"%s\"", basename(self->node));
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	ASSERT_EQ(0, sysfs_read(self->dir, "npu_fw_version", fw, sizeof(fw)));
	snprintf(want, sizeof(want), "\"firmware\": \"%s\"", fw);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "{\"pid\": %d, ", getpid());
	p = strstr(out, want);
	ASSERT_NE(NULL, p) TH_LOG("pid %d not in %s", getpid(), out);
	ASSERT_EQ(6, sscanf(p, "{\"pid\": %d, \"name\": \"%63[^\"]\", \"client_id\": %llu, "
			    "\"engine_ns\": %llu, \"cycles\": %llu, \"memory_bytes\": %llu",
			    &pid, name, &cid, &ns, &cycles, &mem));
	EXPECT_EQ((long long)ns, fdinfo_num(self->fd, "drm-engine-npu"));
	EXPECT_EQ((long long)cycles, fdinfo_num(self->fd, "drm-cycles-npu"));
	EXPECT_EQ((long long)mem, fdinfo_num(self->fd, "drm-total-memory"));
	EXPECT_EQ((1 << 20) + 2 * 65536, (long long)mem);
	EXPECT_GT(ns, 0);
	free(out);
}

/* tracefs, wherever it is mounted; NULL if nowhere. */
static const char *tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char path[128];

		snprintf(path, sizeof(path), "%s/events/npu", dirs[i]);
		if (!access(path, F_OK))
			return dirs[i];
	}
	return NULL;
}

static int trace_write(const char *dir, const char *file, const char *s)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return write_file(path, s);
}

/*
 * The npu tracepoints, on while two good jobs and a faulting one run: each
 * job's submit, run and done (with exactly its result's status, device
 * time, cycles and bytes), the MMU fault at its address, and the
 * firmware's log line about the failed job.
 */
TEST_F(usage, tracepoints_carry_the_results)
{
	static const char *const events[] = {
		"npu_job_submit", "npu_job_run", "npu_job_done", "npu_job_timeout",
		"npu_recovery", "npu_mmu_fault", "npu_fw_log",
	};
	const char *dir = tracefs();
	uint64_t seq[3];
	char path[256], line[512];
	int seen[3] = { 0 }, ran[3] = { 0 }, submitted[3] = { 0 }, fault = 0, log = 0;
	unsigned long long fence = 0;	/* the faulting job's, its id in the firmware log */
	char logline[64];
	FILE *f;

	ASSERT_NE(NULL, dir) TH_LOG("no npu events in tracefs");
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/npu/%s/format", dir, events[i]);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("%s", events[i]);
	}
	ASSERT_EQ(0, trace_write(dir, "trace", ""));
	ASSERT_EQ(0, trace_write(dir, "events/npu/enable", "1"));
	ASSERT_EQ(0, trace_write(dir, "tracing_on", "1"));
	for (int i = 0; i < 3; i++) {
		struct npu_cmd_dma_fill fl = { { NPU_CMD_DMA_FILL, 32 }, self->a.va,
					       65536u * (i + 1), 0x77777777, 0 };
		struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, 32 }, self->a.va,
					       0x7000000000ull, 64 };

		ASSERT_EQ(0, submit_seqno(self->fd, &self->cmd, i == 2 ? (void *)&cp : (void *)&fl,
					  32, &self->status, 64 * i, self->sync, &seq[i]));
	}
	ASSERT_EQ(0, trace_write(dir, "events/npu/enable", "0"));
	snprintf(path, sizeof(path), "%s/trace", dir);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int ctx, ring, cmd, status;
		unsigned long long seqno, ns, cycles, bytes;
		const char *p;

		for (int i = 0; i < 3; i++) {
			char key[64];

			snprintf(key, sizeof(key), "ring=0 seqno=%llu ", (unsigned long long)seq[i]);
			if (strstr(line, "npu_job_submit:") && strstr(line, key))
				submitted[i]++;
			if (strstr(line, "npu_job_run:") && strstr(line, key)) {
				ran[i]++;
				if (i == 2)
					sscanf(strstr(line, " fence="), " fence=%llu", &fence);
			}
		}
		p = strstr(line, "npu_job_done: ");
		if (p && sscanf(p, "npu_job_done: ctx=%u ring=%u seqno=%llu cmd=%u status=%u "
				"device_ns=%llu cycles=%llu bytes=%llu", &ctx, &ring, &seqno, &cmd,
				&status, &ns, &cycles, &bytes) == 8) {
			for (int i = 0; i < 3; i++) {
				struct drm_npu_job_result *r = result(&self->status, 64 * i);

				if (seqno != seq[i] || ring != 0)
					continue;
				seen[i]++;
				EXPECT_EQ(r->status, status);
				EXPECT_EQ(r->end_ns - r->start_ns, ns);
				EXPECT_EQ(r->cycles, cycles);
				EXPECT_EQ(r->bytes, bytes);
				EXPECT_EQ(0u, cmd);
			}
		}
		fault += strstr(line, "npu_mmu_fault:") && strstr(line, "va=0x7000000000");
		/* The firmware names a job by its hardware fence, in hex. */
		snprintf(logline, sizeof(logline), "job %llx ctx ", fence);
		log += fence && strstr(line, "npu_fw_log:") && strstr(line, logline) &&
		       strstr(line, "status 3") && strstr(line, "va 7000000000");
	}
	fclose(f);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(1, submitted[i]) TH_LOG("job %d", i);
		EXPECT_EQ(1, ran[i]) TH_LOG("job %d", i);
		EXPECT_EQ(1, seen[i]) TH_LOG("job %d", i);
	}
	EXPECT_EQ(DRM_NPU_JOB_MMU_FAULT, result(&self->status, 128)->status);
	EXPECT_EQ(1, fault);
	EXPECT_EQ(1, log);
}

TEST_HARNESS_MAIN
