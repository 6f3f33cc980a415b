/* SPDX-License-Identifier: MIT */
/*
 * start.S - entry of the NPU firmware on the RV32IM control core.
 * The boot ROM jumps here with a0 = SRAM size. Set up the stack at the top
 * of SRAM (whatever its size), check that .bss and 4 KiB of stack fit,
 * zero .bss, run main(); if main ever returns, or SRAM is too small, stop
 * the core with EBREAK so the host sees a crash rather than a silent hang.
 */
	.section .text.start, "ax"
	.globl _start
_start:
	li	sp, 0x10000000		/* NPU_SRAM_BASE */
	add	sp, sp, a0
	la	t0, __bss_end
	li	t1, 4096
	add	t0, t0, t1
	bltu	sp, t0, 3f
	la	t0, __bss_start
	la	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sw	zero, 0(t0)
	addi	t0, t0, 4
	j	1b
2:	call	main
3:	ebreak
	j	3b
