// SPDX-License-Identifier: MIT
/*
 * npu-bench - in the guest: the round trip of a no-op job through libnpu
 * (submit to the app awake after the fence signalled), single and
 * pipelined (one job a submit, or in batches), waited for by sleeping on
 * the syncobj or by polling the result
 * (NPU_SUBMIT_POLL), against the yardstick of a 512-byte O_DIRECT read on QEMU's
 * NVMe device with a null backend, in the same boot, alternating in
 * rounds so both see the same drift. Prints a table; writes JSON.
 *
 *   npu-bench NVME_DEVICE JSON_OUT [ROUNDS]
 * A measurement, not a test: it asserts nothing about time.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu.h"
#include "small_cnn.h"

#define PER_ROUND 200
#define PIPELINE 2000
#define IN_FLIGHT 64
#define BATCH 16

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(p * (double)(n - 1))];
}

static int npu_round_trip(npu_device *dev, npu_cmdbuf *cb, unsigned int flags, double *out)
{
	struct npu_submit_opts opts = { .flags = flags };
	npu_job *job;
	double t0 = now_us();
	int err = npu_submit(dev, cb, &opts, &job);

	if (!err)
		err = npu_job_wait(job, 10ll * 1000000000);
	*out = now_us() - t0;
	npu_job_free(job);
	return err;
}

/* Jobs per second with up to IN_FLIGHT no-op jobs queued at once. */
static double npu_pipelined(npu_device *dev, npu_cmdbuf *cb)
{
	npu_job *ring[IN_FLIGHT] = { 0 };
	double t0 = now_us();

	for (int i = 0; i < PIPELINE; i++) {
		npu_job **slot = &ring[i % IN_FLIGHT];

		if (*slot) {
			npu_job_wait(*slot, -1);
			npu_job_free(*slot);
		}
		if (npu_submit(dev, cb, NULL, slot))
			return -1;
	}
	for (int i = 0; i < IN_FLIGHT; i++) {
		if (ring[i]) {
			npu_job_wait(ring[i], -1);
			npu_job_free(ring[i]);
		}
	}
	return PIPELINE / ((now_us() - t0) / 1e6);
}

/* The same with the jobs submitted in batches of BATCH (npu_submit_batch). */
static double npu_batched(npu_device *dev, npu_cmdbuf *cb)
{
	enum { NB = IN_FLIGHT / BATCH };
	npu_job *ring[NB][BATCH] = { { 0 } };
	npu_cmdbuf *cbs[BATCH];
	double t0 = now_us();

	for (int i = 0; i < BATCH; i++)
		cbs[i] = cb;
	for (int b = 0; b < PIPELINE / BATCH; b++) {
		npu_job **slot = ring[b % NB];

		if (slot[0]) {
			npu_job_wait(slot[BATCH - 1], -1);	/* they end together */
			for (int i = 0; i < BATCH; i++)
				npu_job_free(slot[i]);
		}
		if (npu_submit_batch(dev, cbs, BATCH, NULL, slot))
			return -1;
	}
	for (int b = 0; b < NB; b++) {
		if (ring[b][0]) {
			npu_job_wait(ring[b][BATCH - 1], -1);
			for (int i = 0; i < BATCH; i++)
				npu_job_free(ring[b][i]);
		}
	}
	return PIPELINE / BATCH * BATCH / ((now_us() - t0) / 1e6);
}

int main(int argc, char **argv)
{
	int rounds = argc > 3 ? atoi(argv[3]) : 10, n = 0, nfd, err;
	double *npu_us, *poll_us, *nvme_us, npu_pipe, npu_batch, nvme_total = 0, npu_total = 0;
	npu_device *dev;
	npu_cmdbuf *cb;
	void *block;
	FILE *json;

	if (argc < 3 || rounds < 1) {
		fprintf(stderr, "usage: %s NVME_DEVICE JSON_OUT [ROUNDS]\n", argv[0]);
		return 2;
	}
	npu_us = calloc((size_t)rounds * PER_ROUND, sizeof(double));
	poll_us = calloc((size_t)rounds * PER_ROUND, sizeof(double));
	nvme_us = calloc((size_t)rounds * PER_ROUND, sizeof(double));
	nfd = open(argv[1], O_RDONLY | O_DIRECT);
	if (!npu_us || !poll_us || !nvme_us || nfd < 0 || posix_memalign(&block, 4096, 4096)) {
		perror("npu-bench: NVMe device");
		return 1;
	}
	err = npu_open(0, &dev);
	if (!err)
		err = npu_cmdbuf_new(dev, 4096, &cb);
	if (!err)
		err = npu_cmd_nop(cb);
	if (err) {
		fprintf(stderr, "npu-bench: %s\n", npu_strerror(err));
		return 1;
	}
	/* Warm up both paths, then alternate rounds. */
	for (int i = 0; i < 50; i++) {
		double d;

		npu_round_trip(dev, cb, 0, &d);
		npu_round_trip(dev, cb, NPU_SUBMIT_POLL, &d);
		if (pread(nfd, block, 512, 0) != 512)
			return 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < PER_ROUND; i++) {
			if (npu_round_trip(dev, cb, 0, &npu_us[n + i]))
				return 1;
			npu_total += npu_us[n + i];
		}
		for (int i = 0; i < PER_ROUND; i++)
			if (npu_round_trip(dev, cb, NPU_SUBMIT_POLL, &poll_us[n + i]))
				return 1;
		for (int i = 0; i < PER_ROUND; i++) {
			double t0 = now_us();

			if (pread(nfd, block, 512, 4096 * (i % 1000)) != 512) {
				perror("npu-bench: pread");
				return 1;
			}
			nvme_us[n + i] = now_us() - t0;
			nvme_total += nvme_us[n + i];
		}
		n += PER_ROUND;
	}
	npu_pipe = npu_pipelined(dev, cb);
	npu_batch = npu_batched(dev, cb);

	/* The small CNN through the whole stack: images per second. */
	double cnn_ips = 0, cnn_cyc = 0;
	{
		npu_graph *g = npu_graph_new();
		npu_plan *plan = NULL;
		int in_id, out_id, runs = 50;
		static int8_t x[2 * 16 * 16], y[20];

		if (!g || build_cnn(g, &in_id, &out_id, 42) || npu_graph_compile(g, dev, &plan))
			return 1;
		npu_plan_run(plan, in_id, x, out_id, y);	/* warm up */
		double t0 = now_us();

		for (int r = 0; r < runs; r++)
			if (npu_plan_run(plan, in_id, x, out_id, y))
				return 1;
		cnn_ips = 2.0 * runs / ((now_us() - t0) / 1e6);
		cnn_cyc = (double)npu_plan_cycles(plan) / 2;
		npu_plan_free(plan);
		npu_graph_free(g);
	}

	{
		double np50 = pct(npu_us, n, 0.5), np99 = pct(npu_us, n, 0.99);
		double vp50 = pct(nvme_us, n, 0.5), vp99 = pct(nvme_us, n, 0.99);
		double pp50 = pct(poll_us, n, 0.5), pp99 = pct(poll_us, n, 0.99);
		double nps = n / (npu_total / 1e6), vps = n / (nvme_total / 1e6);

		printf("%-34s %10s %10s %12s\n", "round trip (guest, TCG)", "p50 us", "p99 us", "per second");
		printf("%-34s %10.1f %10.1f %12.0f\n", "npu no-op job via libnpu", np50, np99, nps);
		printf("%-34s %10.1f %10.1f %12s\n", "npu no-op job, polled wait", pp50, pp99, "");
		printf("%-34s %10s %10s %12.0f\n", "npu no-op jobs, 64 in flight", "", "", npu_pipe);
		printf("%-34s %10s %10s %12.0f\n", "same, in batches of 16", "", "", npu_batch);
		printf("%-34s %10.1f %10.1f %12.0f\n", "nvme 512 B O_DIRECT read (null-co)", vp50, vp99, vps);
		printf("npu/nvme p50 ratio: %.2f (%d samples each, %d alternating rounds)\n",
		       np50 / vp50, n, rounds);
		printf("small CNN (7 ops, batch 2) on the NPU through libnpu: %.0f images/s, "
		       "%.0f modeled NPU cycles per image\n", cnn_ips, cnn_cyc);
		json = fopen(argv[2], "w");
		if (!json) {
			perror(argv[2]);
			return 1;
		}
		fprintf(json, "{\"benchmark\": \"round-trip\", \"samples\": %d, \"rounds\": %d,\n"
			" \"npu_noop\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"per_second\": %.0f},\n"
			" \"npu_noop_polled\": {\"p50_us\": %.2f, \"p99_us\": %.2f},\n"
			" \"npu_noop_pipelined\": {\"in_flight\": %d, \"per_second\": %.0f},\n"
			" \"npu_noop_batched\": {\"in_flight\": %d, \"batch\": %d, \"per_second\": %.0f},\n"
			" \"nvme_read_512\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"per_second\": %.0f},\n"
			" \"small_cnn\": {\"images_per_second\": %.1f, \"modeled_cycles_per_image\": %.0f}}\n",
			n, rounds, np50, np99, nps, pp50, pp99, IN_FLIGHT, npu_pipe, IN_FLIGHT, BATCH,
			npu_batch, vp50, vp99, vps, cnn_ips, cnn_cyc);
		fclose(json);
	}
	npu_cmdbuf_free(cb);
	npu_close(dev);
	close(nfd);
	return 0;
}
