// SPDX-License-Identifier: MIT
/*
 * rv32-bench - speed of the control core's RV32IM interpreter: runs a loop
 * of ALU, multiply, load, store and branch instructions (100 M iterations,
 * 7 instructions each) and prints instructions per second. A measurement,
 * not a test.
 *
 *   rv32-bench [JSON_OUT]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "npu_rv32.h"

/* Assembled with riscv64-unknown-elf-as -march=rv32im; source alongside. */
static const uint32_t prog[] = {
	0x00000093,	/* li   x1, 0 */
	0x05f5e137,	/* lui  x2, 0x5f5e */
	0x10010113,	/* addi x2, x2, 256        x2 = 100000000 */
	0x100011b7,	/* lui  x3, 0x10001 */
	0x80018193,	/* addi x3, x3, -2048      x3 = 0x10000800 */
	0x00108093,	/* 1: addi x1, x1, 1 */
	0x02108233,	/* mul  x4, x1, x1 */
	0x0042c2b3,	/* xor  x5, x5, x4 */
	0x0051a023,	/* sw   x5, 0(x3) */
	0x0001a303,	/* lw   x6, 0(x3) */
	0x006383b3,	/* add  x7, x7, x6 */
	0xfe2094e3,	/* bne  x1, x2, 1b */
	0x10500073,	/* wfi */
};

int main(int argc, char **argv)
{
	static uint8_t mem[4096];
	struct rv32_cpu cpu = { .mem = mem, .mem_base = 0x10000000, .mem_size = sizeof(mem) };
	struct timespec a, b;
	enum rv32_exit ex;
	double s;

	memcpy(mem, prog, sizeof(prog));
	rv32_reset(&cpu, 0x10000000);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ex = rv32_run(&cpu, UINT64_MAX);
	clock_gettime(CLOCK_MONOTONIC, &b);
	s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (ex != RV32_EXIT_WFI || cpu.x[1] != 100000000u) {
		fprintf(stderr, "rv32-bench: program did not finish correctly (exit %d)\n", ex);
		return 1;
	}
	printf("rv32 interpreter: %llu instructions in %.3f s = %.0f million instructions/s\n",
	       (unsigned long long)cpu.retired, s, (double)cpu.retired / s / 1e6);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		if (!f || fprintf(f, "{\"benchmark\": \"rv32-interpreter\", \"instructions\": %llu, "
				  "\"seconds\": %.6f, \"instructions_per_second\": %.0f}\n",
				  (unsigned long long)cpu.retired, s, (double)cpu.retired / s) < 0 ||
		    fclose(f)) {
			perror(argv[1]);
			return 1;
		}
	}
	return 0;
}
