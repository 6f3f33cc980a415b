// SPDX-License-Identifier: MIT
/*
 * test_rv32.c - the RV32IM interpreter against hand-written instruction
 * cases: each case assembles a few instructions with the encoders below,
 * runs them, and checks registers, memory, I/O and faults against the
 * values the ISA manual defines.
 */
#include <string.h>

#include "npu_fw.h"
#include "npu_rv32.h"
#include "tap.h"

#define BASE 0x10000000u
#define IO   0x20000000u

static uint8_t mem[4096];
static uint32_t io_last_addr, io_last_val, io_reads;
static struct rv32_cpu cpu;
static unsigned int pc_words;

static bool io_read(void *o, uint32_t addr, uint32_t *val)
{
	(void)o;
	if (addr != IO && addr != IO + 4)
		return false;
	io_reads++;
	*val = 0xcafe0000u | (addr & 0xff);
	return true;
}

static bool io_write(void *o, uint32_t addr, uint32_t val)
{
	(void)o;
	if (addr != IO)
		return false;
	io_last_addr = addr;
	io_last_val = val;
	return true;
}

static void setup(void)
{
	memset(mem, 0, sizeof(mem));
	memset(&cpu, 0, sizeof(cpu));
	cpu.mem = mem;
	cpu.mem_base = BASE;
	cpu.mem_size = sizeof(mem);
	cpu.io_read = io_read;
	cpu.io_write = io_write;
	rv32_reset(&cpu, BASE);
	pc_words = 0;
	io_reads = 0;
}

static void emit(uint32_t insn)
{
	memcpy(mem + 4 * pc_words++, &insn, 4);
}

/* Encoders for the base formats (ISA manual, figure 2.3). */
static uint32_t R(uint32_t f7, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op)
{
	return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}

static uint32_t I(int32_t imm, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op)
{
	return ((uint32_t)imm & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}

static uint32_t S(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3)
{
	uint32_t u = (uint32_t)imm;

	return (u >> 5 & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (u & 0x1f) << 7 | 0x23;
}

static uint32_t B(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3)
{
	uint32_t u = (uint32_t)imm;

	return (u >> 12 & 1) << 31 | (u >> 5 & 0x3f) << 25 | rs2 << 20 | rs1 << 15 |
	       f3 << 12 | (u >> 1 & 0xf) << 8 | (u >> 11 & 1) << 7 | 0x63;
}

static uint32_t U(uint32_t imm, uint32_t rd, uint32_t op)
{
	return (imm & 0xfffff000u) | rd << 7 | op;
}

static uint32_t J(int32_t imm, uint32_t rd)
{
	uint32_t u = (uint32_t)imm;

	return (u >> 20 & 1) << 31 | (u >> 1 & 0x3ff) << 21 | (u >> 11 & 1) << 20 |
	       (u >> 12 & 0xff) << 12 | rd << 7 | 0x6f;
}

#define ADDI(rd, rs, imm)	I(imm, rs, 0, rd, 0x13)
#define WFI			0x10500073u

/* Run until WFI (appended), expect a clean stop. */
static enum rv32_exit run(void)
{
	emit(WFI);
	return rv32_run(&cpu, 1000);
}

/* Load a 32-bit constant with LUI + ADDI. */
static void li(uint32_t rd, uint32_t v)
{
	uint32_t hi = (v + 0x800) & 0xfffff000u;

	emit(U(hi, rd, 0x37));
	emit(ADDI(rd, rd, (int32_t)(v - hi)));
}

static void test_lui_auipc_addi(void)
{
	setup();
	emit(U(0x12345000, 1, 0x37));		/* lui x1 */
	emit(U(0xfffff000, 2, 0x17));		/* auipc x2, -4096 (at pc BASE+4) */
	emit(ADDI(3, 0, -1));			/* addi x3, x0, -1 */
	emit(ADDI(4, 1, 0x7ff));
	emit(ADDI(0, 0, 5));			/* x0 stays 0 */
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[1], 0x12345000);
	CHECK_EQ(cpu.x[2], BASE + 4 - 4096);
	CHECK_EQ(cpu.x[3], 0xffffffff);
	CHECK_EQ(cpu.x[4], 0x123457ff);
	CHECK_EQ(cpu.x[0], 0);
	CHECK_EQ(cpu.pc, BASE + 4 * 6);
	CHECK_EQ(cpu.retired, 6);
}

static void test_alu_reg(void)
{
	setup();
	li(1, 0x80000001);
	li(2, 3);
	emit(R(0, 2, 1, 0, 3, 0x33));		/* add */
	emit(R(0x20, 2, 1, 0, 4, 0x33));	/* sub */
	emit(R(0, 2, 1, 1, 5, 0x33));		/* sll */
	emit(R(0, 2, 1, 2, 6, 0x33));		/* slt: negative < 3 */
	emit(R(0, 2, 1, 3, 7, 0x33));		/* sltu */
	emit(R(0, 2, 1, 4, 8, 0x33));		/* xor */
	emit(R(0, 2, 1, 5, 9, 0x33));		/* srl */
	emit(R(0x20, 2, 1, 5, 10, 0x33));	/* sra */
	emit(R(0, 2, 1, 6, 11, 0x33));		/* or */
	emit(R(0, 2, 1, 7, 12, 0x33));		/* and */
	li(13, 35);				/* shift amounts use 5 bits */
	emit(R(0, 13, 1, 1, 14, 0x33));
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[3], 0x80000004);
	CHECK_EQ(cpu.x[4], 0x7ffffffe);
	CHECK_EQ(cpu.x[5], 0x00000008);
	CHECK_EQ(cpu.x[6], 1);
	CHECK_EQ(cpu.x[7], 0);
	CHECK_EQ(cpu.x[8], 0x80000002);
	CHECK_EQ(cpu.x[9], 0x10000000);
	CHECK_EQ(cpu.x[10], 0xf0000000);
	CHECK_EQ(cpu.x[11], 0x80000003);
	CHECK_EQ(cpu.x[12], 1);
	CHECK_EQ(cpu.x[14], 0x00000008);
}

static void test_alu_imm(void)
{
	setup();
	li(1, 0xfffffff0);
	emit(I(-1, 1, 2, 2, 0x13));		/* slti -16 < -1 */
	emit(I(-1, 1, 3, 3, 0x13));		/* sltiu: 0xfffffff0 < 0xffffffff */
	emit(I(0x0ff, 1, 4, 4, 0x13));		/* xori */
	emit(I(0x00f, 1, 6, 5, 0x13));		/* ori */
	emit(I(0x7f0, 1, 7, 6, 0x13));		/* andi */
	emit(I(4, 1, 1, 7, 0x13));		/* slli 4 */
	emit(I(4, 1, 5, 8, 0x13));		/* srli 4 */
	emit(I(0x400 | 4, 1, 5, 9, 0x13));	/* srai 4 */
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[2], 1);
	CHECK_EQ(cpu.x[3], 1);
	CHECK_EQ(cpu.x[4], 0xffffff0f);
	CHECK_EQ(cpu.x[5], 0xffffffff);
	CHECK_EQ(cpu.x[6], 0x7f0);
	CHECK_EQ(cpu.x[7], 0xffffff00);
	CHECK_EQ(cpu.x[8], 0x0fffffff);
	CHECK_EQ(cpu.x[9], 0xffffffff);
}

static void test_mul(void)
{
	setup();
	li(1, 0x80000000);			/* INT_MIN */
	li(2, 0xffffffff);			/* -1 */
	li(3, 7);
	emit(R(1, 3, 2, 0, 4, 0x33));		/* mul -1*7 */
	emit(R(1, 2, 1, 1, 5, 0x33));		/* mulh INT_MIN*-1 = 2^31 -> hi 0 */
	emit(R(1, 2, 1, 2, 6, 0x33));		/* mulhsu INT_MIN*0xffffffff */
	emit(R(1, 2, 2, 3, 7, 0x33));		/* mulhu 0xffffffff^2 */
	emit(R(1, 3, 1, 1, 8, 0x33));		/* mulh INT_MIN*7 */
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[4], 0xfffffff9);
	CHECK_EQ(cpu.x[5], 0x00000000);
	CHECK_EQ(cpu.x[6], 0x80000000);		/* -2^31 * (2^32-1) >> 32 */
	CHECK_EQ(cpu.x[7], 0xfffffffe);
	CHECK_EQ(cpu.x[8], 0xfffffffc);
}

static void test_div_corner_cases(void)
{
	setup();
	li(1, 0x80000000);
	li(2, 0xffffffff);
	li(3, (uint32_t)-7);
	li(4, 2);
	emit(R(1, 2, 1, 4, 5, 0x33));		/* div INT_MIN / -1 = INT_MIN */
	emit(R(1, 2, 1, 6, 6, 0x33));		/* rem INT_MIN % -1 = 0 */
	emit(R(1, 0, 3, 4, 7, 0x33));		/* div by 0 = -1 */
	emit(R(1, 0, 3, 5, 8, 0x33));		/* divu by 0 = all ones */
	emit(R(1, 0, 3, 6, 9, 0x33));		/* rem by 0 = dividend */
	emit(R(1, 0, 3, 7, 10, 0x33));		/* remu by 0 = dividend */
	emit(R(1, 4, 3, 4, 11, 0x33));		/* -7 / 2 = -3 (toward zero) */
	emit(R(1, 4, 3, 6, 12, 0x33));		/* -7 % 2 = -1 */
	emit(R(1, 4, 3, 5, 13, 0x33));		/* divu */
	emit(R(1, 4, 3, 7, 14, 0x33));		/* remu */
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[5], 0x80000000);
	CHECK_EQ(cpu.x[6], 0);
	CHECK_EQ(cpu.x[7], 0xffffffff);
	CHECK_EQ(cpu.x[8], 0xffffffff);
	CHECK_EQ(cpu.x[9], (uint32_t)-7);
	CHECK_EQ(cpu.x[10], (uint32_t)-7);
	CHECK_EQ(cpu.x[11], (uint32_t)-3);
	CHECK_EQ(cpu.x[12], (uint32_t)-1);
	CHECK_EQ(cpu.x[13], 0x7ffffffc);
	CHECK_EQ(cpu.x[14], 1);
}

static void test_loads_stores(void)
{
	setup();
	li(1, BASE + 0x800);
	li(2, 0x8081f2f3);
	emit(S(0, 2, 1, 2));			/* sw */
	emit(S(4, 2, 1, 0));			/* sb */
	emit(S(6, 2, 1, 1));			/* sh */
	emit(I(0, 1, 0, 3, 0x03));		/* lb  0xf3 -> sign */
	emit(I(0, 1, 4, 4, 0x03));		/* lbu */
	emit(I(2, 1, 1, 5, 0x03));		/* lh 0x8081 */
	emit(I(2, 1, 5, 6, 0x03));		/* lhu */
	emit(I(4, 1, 2, 7, 0x03));		/* lw: f3 00 f2 f3 */
	emit(I(1, 1, 2, 8, 0x03));		/* misaligned lw in SRAM is allowed */
	emit(I(-4, 1, 2, 9, 0x03));		/* negative offset, zero memory */
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[3], 0xfffffff3);
	CHECK_EQ(cpu.x[4], 0xf3);
	CHECK_EQ(cpu.x[5], 0xffff8081);
	CHECK_EQ(cpu.x[6], 0x8081);
	CHECK_EQ(cpu.x[7], 0xf2f300f3);
	CHECK_EQ(cpu.x[8], 0xf38081f2);
	CHECK_EQ(cpu.x[9], 0);
}

static void test_branches(void)
{
	/* Each taken branch skips an "addi x5, x5, 1"; x6 counts taken. */
	static const uint32_t f3s[] = { 0, 1, 4, 5, 6, 7 };
	static const uint32_t a[] = { 5, 5, (uint32_t)-1, 1, 1, 0xffffffff };
	static const uint32_t b[] = { 5, 6, 1, (uint32_t)-1, 2, 1 };

	for (unsigned int i = 0; i < 6; i++) {
		setup();
		li(1, a[i]);
		li(2, b[i]);
		emit(B(8, 2, 1, f3s[i]));
		emit(ADDI(5, 5, 1));		/* skipped when taken */
		emit(ADDI(6, 6, 1));
		emit(B(-4, 0, 6, 0));		/* not taken: x6 != 0 */
		CHECK_EQ(run(), RV32_EXIT_WFI);
		CHECK_EQ(cpu.x[5], 0);		/* every case above is "taken" */
		CHECK_EQ(cpu.x[6], 1);
	}
	setup();
	li(1, 1);
	emit(B(8, 0, 1, 0));			/* beq 1, 0: not taken */
	emit(ADDI(5, 5, 1));
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(cpu.x[5], 1);
}

static void test_jal_jalr(void)
{
	setup();
	emit(J(12, 1));				/* 0: jal x1, +12 */
	emit(ADDI(5, 0, 1));			/* 4: skipped */
	emit(WFI);				/* 8: reached through jalr */
	emit(I(4, 1, 0, 2, 0x67));		/* 12: jalr x2, 4(x1) -> 8 */
	CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_WFI);
	CHECK_EQ(cpu.retired, 3);
	CHECK_EQ(cpu.x[1], BASE + 4);
	CHECK_EQ(cpu.x[2], BASE + 16);
	CHECK_EQ(cpu.x[5], 0);
	CHECK_EQ(cpu.pc, BASE + 12);
	/* JALR clears bit 0 of the target. */
	setup();
	li(1, BASE + 12 + 1);
	emit(I(0, 1, 0, 0, 0x67));
	emit(WFI);
	CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_WFI);
	CHECK_EQ(cpu.pc, BASE + 16);
}

static void test_io_access(void)
{
	setup();
	li(1, IO);
	li(2, 0x1234abcd);
	emit(S(0, 2, 1, 2));			/* sw to I/O */
	emit(I(4, 1, 2, 3, 0x03));		/* lw from I/O */
	CHECK_EQ(run(), RV32_EXIT_WFI);
	CHECK_EQ(io_last_addr, IO);
	CHECK_EQ(io_last_val, 0x1234abcd);
	CHECK_EQ(cpu.x[3], 0xcafe0004);
	CHECK_EQ(io_reads, 1);
}

static void test_faults(void)
{
	/* Byte access to I/O: load fault. */
	setup();
	li(1, IO);
	emit(I(0, 1, 0, 3, 0x03));
	CHECK_EQ(run(), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_LOAD);
	CHECK_EQ(cpu.fault_addr, IO);
	CHECK_EQ(cpu.fault_pc, BASE + 8);

	/* Store to an unmapped address. */
	setup();
	emit(S(0x10, 0, 0, 2));
	CHECK_EQ(run(), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_STORE);
	CHECK_EQ(cpu.fault_addr, 0x10);

	/* Word access straddling the end of SRAM. */
	setup();
	li(1, BASE + sizeof(mem) - 2);
	emit(I(0, 1, 2, 3, 0x03));
	CHECK_EQ(run(), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_LOAD);

	/* Illegal encodings: all zeros, a CSR access, an unknown funct7. */
	const uint32_t bad[] = {
		0x00000000u, 0x30002073u /* csrr */, R(0x02, 1, 1, 0, 1, 0x33),
		I(0x400 | 1, 1, 1, 1, 0x13) /* slli with bit 30 */,
		I(0, 0, 3, 1, 0x03) /* ld (RV64) */, 0x0000107fu,
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setup();
		emit(bad[i]);
		CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_FAULT);
		CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_ILLEGAL_INSN);
		CHECK_EQ(cpu.fault_addr, bad[i]);
		CHECK_EQ(cpu.fault_pc, BASE);
	}

	/* Misaligned jump target, and running off the end of SRAM. */
	setup();
	emit(J(6, 0));
	CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_FETCH);
	CHECK_EQ(cpu.fault_addr, BASE + 6);
	setup();
	cpu.pc = BASE + sizeof(mem);
	CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_FETCH);

	setup();
	emit(0x00100073u);
	CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_EBREAK);
	setup();
	emit(0x00000073u);
	CHECK_EQ(rv32_run(&cpu, 10), RV32_EXIT_FAULT);
	CHECK_EQ(cpu.fault_cause, NPU_CORE_FAULT_ECALL);
}

static void test_budget_and_fence(void)
{
	setup();
	emit(0x0ff0000fu);			/* fence */
	emit(J(0, 0));				/* j . (loops forever) */
	CHECK_EQ(rv32_run(&cpu, 1000), RV32_EXIT_BUDGET);
	CHECK_EQ(cpu.retired, 1000);
	CHECK_EQ(cpu.pc, BASE + 4);
}

TAP_MAIN(
	TAP_ENTRY(test_lui_auipc_addi),
	TAP_ENTRY(test_alu_reg),
	TAP_ENTRY(test_alu_imm),
	TAP_ENTRY(test_mul),
	TAP_ENTRY(test_div_corner_cases),
	TAP_ENTRY(test_loads_stores),
	TAP_ENTRY(test_branches),
	TAP_ENTRY(test_jal_jalr),
	TAP_ENTRY(test_io_access),
	TAP_ENTRY(test_faults),
	TAP_ENTRY(test_budget_and_fence),
)
