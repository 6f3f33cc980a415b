// SPDX-License-Identifier: MIT
/*
 * stall-bench - in the guest: does a heavy command from an ordinary app
 * stall the rest of the guest? One thread runs the heaviest average pool
 * the device allows (256x256x32 int8, 48x48 windows: 3.2e9 adds) through
 * libnpu's one-call npu_run_pool_i8, several times; another sleeps 1 ms at
 * a time and records the longest gap between its wake-ups. The same gap is
 * measured first with the NPU idle, as the yardstick. A measurement, not a
 * test: it asserts nothing about time.
 *
 *   stall-bench [JSON_OUT [RUNS]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "npu.h"

static atomic_int stop;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Sleep 1 ms at a time until told to stop; the longest gap seen. */
static void *ticker(void *arg)
{
	double *worst = arg, last = now_ms();
	struct timespec ms = { 0, 1000000 };

	while (!atomic_load(&stop)) {
		double t;

		nanosleep(&ms, NULL);
		t = now_ms();
		if (t - last > *worst)
			*worst = t - last;
		last = t;
	}
	return NULL;
}

static double gap_during(double ms, int (*work)(void *), void *arg, double *work_ms)
{
	double worst = 0, t0;
	pthread_t th;

	atomic_store(&stop, 0);
	pthread_create(&th, NULL, ticker, &worst);
	t0 = now_ms();
	if (work)
		work(arg);
	else
		while (now_ms() - t0 < ms)
			;	/* the yardstick: this thread busy on the CPU instead */
	*work_ms = now_ms() - t0;
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	return worst;
}

struct pool_job {
	npu_device *dev;
	struct npu_pool_i8 p;
	int8_t *in, *out;
	int runs, failed;
};

static int pools(void *arg)
{
	struct pool_job *j = arg;

	for (int i = 0; i < j->runs; i++)
		if (npu_run_pool_i8(j->dev, &j->p, j->in, j->out))
			j->failed++;
	return 0;
}

int main(int argc, char **argv)
{
	struct pool_job j = {
		.p = { .batch = 1, .in_h = 256, .in_w = 256, .c = 32, .out_h = 209, .out_w = 209,
		       .k_h = 48, .k_w = 48, .stride_h = 1, .stride_w = 1,
		       .act_min = -128, .act_max = 127, .average = 1 },
		.runs = argc > 2 ? atoi(argv[2]) : 3,
	};
	double idle_gap, busy_gap, idle_ms, busy_ms;
	FILE *f;

	if (npu_open(0, &j.dev)) {
		fprintf(stderr, "stall-bench: no NPU\n");
		return 1;
	}
	j.in = malloc(256 * 256 * 32);
	j.out = malloc(209 * 209 * 32);
	if (!j.in || !j.out)
		return 1;
	memset(j.in, 7, 256 * 256 * 32);
	idle_gap = gap_during(2000, NULL, NULL, &idle_ms);
	busy_gap = gap_during(0, pools, &j, &busy_ms);
	printf("stall-bench: a guest thread sleeping 1 ms at a time, longest gap between wake-ups\n");
	printf("  while the guest spins on a CPU for %.0f ms (yardstick)   %8.1f ms\n",
	       idle_ms, idle_gap);
	printf("  while %d heavy int8 average pools run (%.0f ms, %d failed) %8.1f ms\n",
	       j.runs, busy_ms, j.failed, busy_gap);
	if (argc > 1 && (f = fopen(argv[1], "w"))) {
		fprintf(f, "{\"bench\": \"stall\", \"yardstick_gap_ms\": %.1f, \"npu_gap_ms\": %.1f, "
			"\"pools\": %d, \"pools_ms\": %.0f, \"failed\": %d}\n",
			idle_gap, busy_gap, j.runs, busy_ms, j.failed);
		fclose(f);
	}
	npu_close(j.dev);
	return j.failed != 0;
}
