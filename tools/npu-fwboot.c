// SPDX-License-Identifier: MIT
/*
 * npu-fwboot - boot npu-fw.bin on the device core in a host memory harness,
 * print the firmware's version, capabilities and log, and run one copy job
 * through a job ring. Shows the firmware working without a VM.
 *
 *   npu-fwboot [FIRMWARE]      (default build/firmware/npu-fw.bin)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static double secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char *cmds[] = { "", "nop", "dma-copy", "dma-fill", "timestamp", "barrier" };
	struct harness h;
	struct npu_cmd_dma_copy cp = { { NPU_CMD_DMA_COPY, sizeof(cp) }, 0x100000, 0x200000, 65536 };
	struct npu_job_cmpl c;
	uint32_t len, st, v, caps;
	uint64_t img, insns;
	uint8_t *src, *dst;
	double t0, t1;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [npu-fw.bin]\n", argv[0]);
		return 2;
	}
	if (argc == 2)
		setenv("NPU_FW", argv[1], 1);
	h_init(&h);
	img = h_load_file(&h, h_fw_path(), &len);
	st = h_boot_image(&h, img, len);
	if (st != NPU_BOOT_OK || h_rd(&h, NPU_REG_FW_STATUS) != NPU_FW_STATE_READY) {
		fprintf(stderr, "npu-fwboot: boot failed: boot status %u, core status %u, fw status %u\n",
			st, h_rd(&h, NPU_REG_STATUS), h_rd(&h, NPU_REG_FW_STATUS));
		return 1;
	}
	v = h_rd(&h, NPU_REG_FW_VERSION);
	printf("firmware %s: %u bytes, version %u.%u.%u, API %u.%u\n", h_fw_path(), len,
	       v >> 16, (v >> 8) & 0xff, v & 0xff, h_rd(&h, NPU_REG_FW_API) >> 16,
	       h_rd(&h, NPU_REG_FW_API) & 0xffff);
	caps = h_rd(&h, NPU_REG_FW_CAPS);
	printf("capabilities:%s%s%s\ncommands:",
	       caps & NPU_FW_CAP_LOG ? " log" : "", caps & NPU_FW_CAP_HEARTBEAT ? " heartbeat" : "",
	       caps & NPU_FW_CAP_TIMESTAMPS ? " timestamps" : "");
	for (unsigned int i = 1; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (h_rd(&h, NPU_REG_FW_CMD_CAPS) & (1u << i))
			printf(" %s", cmds[i]);
	printf("\n");

	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	h_map(&h, 0, cp.src, cp.len, NPU_PTE_R, 0);
	h_map(&h, 0, cp.dst, cp.len, NPU_PTE_W, 0);
	src = h_va(&h, 0, cp.src);
	for (unsigned int i = 0; i < cp.len; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	insns = npu_core_insns(h.core);
	t0 = secs();
	c = h_run_cmds(&h, 0, 0x10000, &cp, sizeof(cp));
	t1 = secs();
	dst = h_va(&h, 0, cp.dst);
	printf("copy job: status %u, %llu bytes, %llu modeled cycles, %llu firmware instructions, %s\n",
	       c.status, (unsigned long long)c.bytes, (unsigned long long)c.cycles,
	       (unsigned long long)(npu_core_insns(h.core) - insns),
	       memcmp(src, dst, cp.len) ? "data MISMATCH" : "data verified");
	printf("host time for the job: %.1f us\n", (t1 - t0) * 1e6);
	printf("--- firmware log ---\n%s", h_log(&h));
	st = c.status == NPU_JOB_OK && !memcmp(src, dst, cp.len) ? 0 : 1;
	h_fini(&h);
	return (int)st;
}
