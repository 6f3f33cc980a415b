// SPDX-License-Identifier: MIT
/*
 * npu-copy - the smallest libnpu program: open the first NPU, print what
 * it is, copy a buffer with a job, check it, and report the job's latency.
 *
 *   cc npu-copy.c $(pkg-config --cflags --libs libnpu)
 */
#define _POSIX_C_SOURCE 200809L
#include <npu.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(void)
{
	const size_t size = 1 << 20;
	struct npu_device_info info;
	struct npu_job_result res;
	npu_buffer *src, *dst;
	npu_device *dev;
	npu_cmdbuf *cb;
	npu_job *job;
	double t0, t1;
	char *s, *d;
	int err;

	err = npu_open(0, &dev);
	if (err) {
		fprintf(stderr, "npu-copy: cannot open an NPU: %s\n", npu_strerror(err));
		return 1;
	}
	npu_device_info(dev, &info);
	printf("%s: NPU hardware %u.%u, firmware %u.%u.%u (API %u.%u), %u rings\n",
	       info.node, info.hw_version >> 16, info.hw_version & 0xffff,
	       info.fw_version >> 16, (info.fw_version >> 8) & 0xff, info.fw_version & 0xff,
	       info.fw_api >> 16, info.fw_api & 0xffff, info.num_rings);

	if ((err = npu_buffer_alloc(dev, size, &src)) || (err = npu_buffer_alloc(dev, size, &dst)) ||
	    (err = npu_cmdbuf_new(dev, 4096, &cb))) {
		fprintf(stderr, "npu-copy: %s\n", npu_strerror(err));
		return 1;
	}
	s = npu_buffer_map(src);
	d = npu_buffer_map(dst);
	if (!s || !d) {
		fprintf(stderr, "npu-copy: cannot map buffers\n");
		return 1;
	}
	for (size_t i = 0; i < size; i++)
		s[i] = (char)(i * 31 + 7);
	memset(d, 0, size);
	npu_cmd_copy(cb, npu_buffer_va(dst), npu_buffer_va(src), size);

	t0 = now_us();
	err = npu_submit(dev, cb, NULL, &job);
	if (!err)
		err = npu_job_wait(job, 10 * 1000000000ll);
	t1 = now_us();
	if (err) {
		fprintf(stderr, "npu-copy: job: %s\n", npu_strerror(err));
		return 1;
	}
	npu_job_result(job, &res);
	printf("copied %zu bytes: %s, %s; latency %.0f us (submit to wake-up), "
	       "%llu modeled NPU cycles\n", size, npu_job_state_name(res.state),
	       memcmp(s, d, size) ? "data MISMATCH" : "data verified", t1 - t0,
	       (unsigned long long)res.cycles);
	err = res.state == NPU_JOB_STATE_DONE && !memcmp(s, d, size) ? 0 : 1;
	npu_job_free(job);
	npu_cmdbuf_free(cb);
	npu_buffer_free(src);
	npu_buffer_free(dst);
	npu_close(dev);
	return err;
}
