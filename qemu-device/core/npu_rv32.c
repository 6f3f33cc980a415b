// SPDX-License-Identifier: MIT
/*
 * npu_rv32.c - RV32IM interpreter (RISC-V unprivileged ISA 2.2, base
 * integer plus M), for the NPU's control core.
 */
#include <string.h>

#include "npu_fw.h"
#include "npu_rv32.h"

#define OP_LOAD		0x03
#define OP_MISC_MEM	0x0f
#define OP_IMM		0x13
#define OP_AUIPC	0x17
#define OP_STORE	0x23
#define OP_OP		0x33
#define OP_LUI		0x37
#define OP_BRANCH	0x63
#define OP_JALR		0x67
#define OP_JAL		0x6f
#define OP_SYSTEM	0x73

#define INSN_ECALL	0x00000073u
#define INSN_EBREAK	0x00100073u
#define INSN_WFI	0x10500073u

void rv32_reset(struct rv32_cpu *cpu, uint32_t pc)
{
	memset(cpu->x, 0, sizeof(cpu->x));
	cpu->pc = pc;
	cpu->stop_request = false;
	cpu->fault_cause = NPU_CORE_FAULT_NONE;
	cpu->fault_pc = 0;
	cpu->fault_addr = 0;
}

/* Sign-extend the low @bits of @v, without shifting negative values. */
static inline uint32_t sext(uint32_t v, unsigned int bits)
{
	uint32_t m = 1u << (bits - 1);

	return ((v & ((m << 1) - 1)) ^ m) - m;
}

/* Immediate decoders; see the ISA manual, figure 2.4. */
static inline uint32_t imm_i(uint32_t insn)
{
	return sext(insn >> 20, 12);
}

static inline uint32_t imm_s(uint32_t insn)
{
	return sext((insn >> 25) << 5 | ((insn >> 7) & 0x1f), 12);
}

static inline uint32_t imm_b(uint32_t insn)
{
	return sext((insn >> 31) << 12 | ((insn >> 7) & 1) << 11 |
		    ((insn >> 25) & 0x3f) << 5 | ((insn >> 8) & 0xf) << 1, 13);
}

static inline uint32_t imm_j(uint32_t insn)
{
	return sext((insn >> 31) << 20 | ((insn >> 12) & 0xff) << 12 |
		    ((insn >> 20) & 1) << 11 | ((insn >> 21) & 0x3ff) << 1, 21);
}

/* Little-endian SRAM access; memcpy compiles to one load or store. */
static inline uint32_t ld_le(const uint8_t *p, unsigned int n)
{
	uint32_t v32;
	uint16_t v16;

	switch (n) {
	case 4:
		memcpy(&v32, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v32 = __builtin_bswap32(v32);
#endif
		return v32;
	case 2:
		memcpy(&v16, p, 2);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v16 = __builtin_bswap16(v16);
#endif
		return v16;
	default:
		return p[0];
	}
}

static inline void st_le(uint8_t *p, uint32_t v, unsigned int n)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = n == 4 ? __builtin_bswap32(v) : n == 2 ? (uint32_t)__builtin_bswap16((uint16_t)v) : v;
#endif
	if (n == 4) {
		memcpy(p, &v, 4);
	} else if (n == 2) {
		uint16_t v16 = (uint16_t)v;

		memcpy(p, &v16, 2);
	} else {
		p[0] = (uint8_t)v;
	}
}

static enum rv32_exit fault(struct rv32_cpu *cpu, uint32_t cause, uint32_t addr)
{
	cpu->fault_cause = cause;
	cpu->fault_pc = cpu->pc;
	cpu->fault_addr = addr;
	return RV32_EXIT_FAULT;
}

/* True if [addr, addr + n) lies in SRAM; sets *off. */
static inline bool in_sram(const struct rv32_cpu *cpu, uint32_t addr,
			   unsigned int n, uint32_t *off)
{
	uint32_t o = addr - cpu->mem_base;

	if (o >= cpu->mem_size || cpu->mem_size - o < n)
		return false;
	*off = o;
	return true;
}

static uint32_t mulh(uint32_t a, uint32_t b, uint32_t f3)
{
	int64_t sa = (int32_t)a, sb = (int32_t)b;

	switch (f3) {
	case 1: /* MULH */
		return (uint32_t)((uint64_t)(sa * sb) >> 32);
	case 2: /* MULHSU */
		return (uint32_t)((uint64_t)(sa * (int64_t)b) >> 32);
	default: /* MULHU */
		return (uint32_t)(((uint64_t)a * b) >> 32);
	}
}

static uint32_t muldiv(uint32_t a, uint32_t b, uint32_t f3)
{
	int32_t sa = (int32_t)a, sb = (int32_t)b;

	switch (f3) {
	case 0: /* MUL */
		return a * b;
	case 1: case 2: case 3:
		return mulh(a, b, f3);
	case 4: /* DIV */
		if (b == 0)
			return UINT32_MAX;
		if (sa == INT32_MIN && sb == -1)
			return a;
		return (uint32_t)(sa / sb);
	case 5: /* DIVU */
		return b ? a / b : UINT32_MAX;
	case 6: /* REM */
		if (b == 0)
			return a;
		if (sa == INT32_MIN && sb == -1)
			return 0;
		return (uint32_t)(sa % sb);
	default: /* REMU */
		return b ? a % b : a;
	}
}

/* OP and OP-IMM; @alt is funct7 bit 5 (SUB, SRA, SRAI). Returns false if illegal. */
static bool alu(uint32_t f3, bool alt, bool imm, uint32_t a, uint32_t b, uint32_t *r)
{
	switch (f3) {
	case 0:
		*r = (alt && !imm) ? a - b : a + b;
		return !(alt && imm);
	case 1:
		*r = a << (b & 31);
		return !alt;
	case 2:
		*r = (int32_t)a < (int32_t)b;
		return !alt;
	case 3:
		*r = a < b;
		return !alt;
	case 4:
		*r = a ^ b;
		return !alt;
	case 5:
		*r = a >> (b & 31);
		if (alt && (a & 0x80000000u))	/* arithmetic: fill with ones */
			*r |= ~(0xffffffffu >> (b & 31));
		return true;
	case 6:
		*r = a | b;
		return !alt;
	default:
		*r = a & b;
		return !alt;
	}
}

enum rv32_exit rv32_run(struct rv32_cpu *cpu, uint64_t budget)
{
	uint32_t *x = cpu->x;

	for (uint64_t n = 0; n < budget; n++) {
		uint32_t pc = cpu->pc, off, insn, val = 0, addr;
		uint32_t rd, rs1, rs2, f3, f7, next = pc + 4;
		bool wr = true;

		if ((pc & 3) || !in_sram(cpu, pc, 4, &off))
			return fault(cpu, NPU_CORE_FAULT_FETCH, pc);
		if (cpu->pc_map && off / 4 < cpu->pc_map_words)
			cpu->pc_map[off / 4] = 1;
		insn = ld_le(cpu->mem + off, 4);
		rd = (insn >> 7) & 31;
		f3 = (insn >> 12) & 7;
		rs1 = (insn >> 15) & 31;
		rs2 = (insn >> 20) & 31;
		f7 = insn >> 25;

		switch (insn & 0x7f) {
		case OP_LUI:
			val = insn & 0xfffff000u;
			break;
		case OP_AUIPC:
			val = pc + (insn & 0xfffff000u);
			break;
		case OP_JAL:
			val = next;
			next = pc + imm_j(insn);
			if (next & 3)
				return fault(cpu, NPU_CORE_FAULT_FETCH, next);
			break;
		case OP_JALR:
			if (f3)
				goto illegal;
			val = next;
			next = (x[rs1] + imm_i(insn)) & ~1u;
			if (next & 3)
				return fault(cpu, NPU_CORE_FAULT_FETCH, next);
			break;
		case OP_BRANCH: {
			uint32_t a = x[rs1], b = x[rs2];
			bool take;

			switch (f3) {
			case 0: take = a == b; break;
			case 1: take = a != b; break;
			case 4: take = (int32_t)a < (int32_t)b; break;
			case 5: take = (int32_t)a >= (int32_t)b; break;
			case 6: take = a < b; break;
			case 7: take = a >= b; break;
			default: goto illegal;
			}
			if (take) {
				next = pc + imm_b(insn);
				if (next & 3)
					return fault(cpu, NPU_CORE_FAULT_FETCH, next);
			}
			wr = false;
			break;
		}
		case OP_LOAD: {
			static const unsigned char width[8] = { 1, 2, 4, 0, 1, 2, 0, 0 };
			unsigned int w = width[f3];

			if (!w)
				goto illegal;
			addr = x[rs1] + imm_i(insn);
			if (in_sram(cpu, addr, w, &off)) {
				val = ld_le(cpu->mem + off, w);
			} else if (w == 4 && !(addr & 3) && cpu->io_read &&
				   cpu->io_read(cpu->opaque, addr, &val)) {
				/* I/O word */
			} else {
				return fault(cpu, NPU_CORE_FAULT_LOAD, addr);
			}
			if (f3 == 0)
				val = sext(val, 8);
			else if (f3 == 1)
				val = sext(val, 16);
			break;
		}
		case OP_STORE: {
			unsigned int w = 1u << f3;

			if (f3 > 2)
				goto illegal;
			addr = x[rs1] + imm_s(insn);
			if (in_sram(cpu, addr, w, &off)) {
				st_le(cpu->mem + off, x[rs2], w);
			} else if (w == 4 && !(addr & 3) && cpu->io_write &&
				   cpu->io_write(cpu->opaque, addr, x[rs2])) {
				/* I/O word */
			} else {
				return fault(cpu, NPU_CORE_FAULT_STORE, addr);
			}
			wr = false;
			break;
		}
		case OP_IMM: {
			uint32_t imm = imm_i(insn);
			bool alt = false;

			if (f3 == 1 || f3 == 5) {	/* shifts: funct7 is fixed */
				if (f7 & ~0x20u)
					goto illegal;
				alt = f7 == 0x20;
				imm &= 31;
			}
			if (!alu(f3, alt, f3 == 1 || f3 == 5 ? false : true, x[rs1], imm, &val))
				goto illegal;
			break;
		}
		case OP_OP:
			if (f7 == 1)
				val = muldiv(x[rs1], x[rs2], f3);
			else if ((f7 & ~0x20u) || !alu(f3, f7 == 0x20, false, x[rs1], x[rs2], &val))
				goto illegal;
			break;
		case OP_MISC_MEM:	/* FENCE, FENCE.I: one hart, no caches */
			if (f3 > 1)
				goto illegal;
			wr = false;
			break;
		case OP_SYSTEM:
			if (insn == INSN_ECALL)
				return fault(cpu, NPU_CORE_FAULT_ECALL, 0);
			if (insn == INSN_EBREAK)
				return fault(cpu, NPU_CORE_FAULT_EBREAK, 0);
			if (insn == INSN_WFI) {
				cpu->pc = next;
				cpu->retired++;
				return RV32_EXIT_WFI;
			}
			goto illegal;
		default:
			goto illegal;
		}
		if (wr && rd)
			x[rd] = val;
		cpu->pc = next;
		cpu->retired++;
		if (cpu->stop_request) {
			cpu->stop_request = false;
			return RV32_EXIT_STOP;
		}
		continue;
illegal:
		return fault(cpu, NPU_CORE_FAULT_ILLEGAL_INSN, insn);
	}
	return RV32_EXIT_BUDGET;
}
