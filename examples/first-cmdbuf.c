// SPDX-License-Identifier: MIT
/*
 * first-cmdbuf - one int8 GEMM on the NPU through the low-level API: open
 * the device, allocate a buffer, write a command buffer with one command,
 * submit it, wait, and check the result against libnpu's CPU reference.
 * Needs an NPU: run it in the guest (scripts/npu-vm, scripts/npu-load).
 *
 *   cc -std=c11 -Wall -Wextra first-cmdbuf.c $(pkg-config --cflags --libs libnpu)
 */
#include <npu.h>
#include <npu_cmd.h>	/* the command stream: opcodes, struct npu_quant_ch */
#include <stdio.h>
#include <string.h>

enum { M = 2, N = 3, K = 4 };

/* Where each operand lies in the one buffer (bias and quant 4-byte aligned). */
enum { OFF_A = 0, OFF_B = 64, OFF_BIAS = 128, OFF_QUANT = 192, OFF_OUT = 256 };

static int fail(const char *what, int err)
{
	fprintf(stderr, "first-cmdbuf: %s: %s (%s)\n", what, npu_strerror(err), npu_last_error());
	return 1;
}

int main(void)
{
	/* out = clamp(out_zero + (bias + sum_k a * b) / 32), per tensor */
	const struct npu_gemm_i8 p = { .m = M, .n = N, .k = K, .a_zero = 0, .out_zero = 0,
				       .act_min = -128, .act_max = 127, .per_tensor = 1 };
	const int8_t a[M][K] = { { 1, 2, 3, 4 }, { -5, 6, -7, 8 } };
	const int8_t b[N][K] = { { 10, 20, 30, 40 }, { -8, 8, -8, 8 }, { 127, 0, 0, -128 } };
	const int32_t bias[N] = { 0, 16, -64 };
	const int32_t mult[1] = { 1 << 30 }, shift[1] = { -4 };	/* 0.5 * 2^-4 = 1/32 */
	struct npu_device_info info;
	struct npu_job_result res;
	int8_t want[M][N];
	npu_buffer *buf;
	npu_device *dev;
	npu_cmdbuf *cb;
	npu_job *job;
	uint64_t va;
	int8_t *out;
	char *mem;
	int err, rc = 1;

	err = npu_open(0, &dev);
	if (err)
		return fail("npu_open", err);
	err = npu_device_info(dev, &info);
	if (err) {
		npu_close(dev);
		return fail("npu_device_info", err);
	}
	printf("%s: firmware %u.%u.%u, int8 GEMM %s\n", info.node, info.fw_version >> 16,
	       (info.fw_version >> 8) & 0xff, info.fw_version & 0xff,
	       npu_device_has_command(dev, NPU_CMD_GEMM_I8) ? "supported" : "not supported");

	err = npu_buffer_alloc(dev, 4096, &buf);
	if (err) {
		npu_close(dev);
		return fail("npu_buffer_alloc", err);
	}
	err = npu_cmdbuf_new(dev, 4096, &cb);
	if (err) {
		npu_buffer_free(buf);
		npu_close(dev);
		return fail("npu_cmdbuf_new", err);
	}
	mem = npu_buffer_map(buf);
	if (!mem) {
		fail("npu_buffer_map", NPU_ENOMEM);
		goto out;
	}

	/* The operands, written through the CPU mapping. */
	memcpy(mem + OFF_A, a, sizeof(a));
	memcpy(mem + OFF_B, b, sizeof(b));
	memcpy(mem + OFF_BIAS, bias, sizeof(bias));
	memcpy(mem + OFF_QUANT, &(struct npu_quant_ch){ .mult = mult[0], .shift = shift[0] },
	       sizeof(struct npu_quant_ch));
	memset(mem + OFF_OUT, 0, M * N);

	/* One command, addressed by device virtual addresses. */
	va = npu_buffer_va(buf);
	err = npu_cmd_gemm_i8(cb, &p, va + OFF_A, va + OFF_B, va + OFF_BIAS, va + OFF_QUANT,
			      va + OFF_OUT);
	if (err) {
		fail("npu_cmd_gemm_i8", err);
		goto out;
	}
	err = npu_submit(dev, cb, NULL, &job);
	if (err) {
		fail("npu_submit", err);
		goto out;
	}
	/* Wait up to 10 s; a finished job may still have failed: read its state. */
	err = npu_job_wait(job, 10 * 1000000000LL);
	if (err) {
		npu_job_free(job);
		fail("npu_job_wait", err);
		goto out;
	}
	err = npu_job_result(job, &res);
	npu_job_free(job);
	if (err) {
		fail("npu_job_result", err);
		goto out;
	}
	if (res.state != NPU_JOB_STATE_DONE) {
		fprintf(stderr, "first-cmdbuf: job %s at command offset %u\n",
			npu_job_state_name(res.state), res.error_offset);
		goto out;
	}

	/* The same GEMM on the CPU reference: the bytes must match. */
	err = npu_ref_gemm_i8(&p, &a[0][0], &b[0][0], bias, mult, shift, &want[0][0]);
	if (err) {
		fail("npu_ref_gemm_i8", err);
		goto out;
	}
	out = (int8_t *)(mem + OFF_OUT);
	for (int r = 0; r < M; r++) {
		printf("out[%d] =", r);
		for (int c = 0; c < N; c++)
			printf(" %4d", out[r * N + c]);
		printf("\n");
	}
	printf("%llu modeled NPU cycles, %s\n", (unsigned long long)res.cycles,
	       memcmp(out, want, sizeof(want)) ? "MISMATCH with the CPU reference"
					       : "same as the CPU reference");
	rc = memcmp(out, want, sizeof(want)) != 0;
out:
	npu_cmdbuf_free(cb);
	npu_buffer_free(buf);
	npu_close(dev);
	return rc;
}
