/* SPDX-License-Identifier: MIT */
/*
 * npu_fw.h - the firmware interface: image format, boot ROM results, boot
 * parameters, ready handshake, heartbeat, log buffer, error codes, and the
 * control core's view of the device (its address map and private
 * registers).
 *
 * Documentation/firmware.rst explains it. Little-endian throughout.
 */
#ifndef NPU_FW_H
#define NPU_FW_H

#include "npu_types.h"

/* ------------------------------------------------------------------ */
/* Firmware API version: the driver requires major equal, minor >=.     */
/* ------------------------------------------------------------------ */
#define NPU_FW_API_MAJOR	2
/* 1.1: FW_CURRENT and FW_PROGRESS; 1.2: FW_CMD_CAPS_HI; 2.0: the engines report enum npu_job_status */
#define NPU_FW_API_MINOR	0

/* ------------------------------------------------------------------ */
/* Image format: a header followed by the payload, loaded at load_addr */
/* ------------------------------------------------------------------ */
#define NPU_FW_MAGIC		0x4655504eu /* "NPUF" */
#define NPU_FW_HEADER_VERSION	1

/**
 * struct npu_fw_header - start of npu-fw.bin (64 bytes).
 * @magic: NPU_FW_MAGIC.
 * @header_version: NPU_FW_HEADER_VERSION; the boot ROM rejects others.
 * @header_size: sizeof(struct npu_fw_header); the payload follows it.
 * @api_major: firmware API major the image implements.
 * @api_minor: firmware API minor the image implements.
 * @fw_version: major << 16 | minor << 8 | patch, informational.
 * @load_addr: control-core address the payload is copied to (in SRAM).
 * @entry: control-core address execution starts at (inside the payload).
 * @payload_size: bytes of payload after the header.
 * @payload_crc32: CRC-32 (IEEE 802.3, as zlib's crc32()) of the payload.
 * @flags: none defined; must be zero.
 * @reserved: must be zero.
 */
struct npu_fw_header {
	npu_le32 magic;
	npu_le16 header_version;
	npu_le16 header_size;
	npu_le16 api_major;
	npu_le16 api_minor;
	npu_le32 fw_version;
	npu_le32 load_addr;
	npu_le32 entry;
	npu_le32 payload_size;
	npu_le32 payload_crc32;
	npu_le32 flags;
	npu_le32 reserved[7];
};

/** enum npu_boot_status - NPU_REG_BOOT_STATUS, set by the boot ROM */
enum npu_boot_status {
	NPU_BOOT_NONE = 0,		/* no boot attempted since reset */
	NPU_BOOT_OK = 1,		/* image accepted, core started */
	NPU_BOOT_ERR_DMA = 2,		/* reading the image failed */
	NPU_BOOT_ERR_MAGIC = 3,
	NPU_BOOT_ERR_HEADER_VERSION = 4,
	NPU_BOOT_ERR_SIZE = 5,		/* sizes disagree or exceed SRAM */
	NPU_BOOT_ERR_LOAD_ADDR = 6,	/* payload or entry outside SRAM */
	NPU_BOOT_ERR_CRC = 7,
	NPU_BOOT_ERR_RESERVED = 8,	/* flags or reserved fields non-zero */
	NPU_BOOT_ERR_BUSY = 9,		/* the core is already running */
};

/* ------------------------------------------------------------------ */
/* Boot parameters: host memory, read by the firmware at start         */
/* ------------------------------------------------------------------ */
#define NPU_BOOT_PARAMS_MAGIC	0x4250504eu /* "NPPB" */
#define NPU_BOOT_PARAMS_VERSION	1

/**
 * struct npu_boot_params - what the host tells the firmware (64 bytes).
 * @magic: NPU_BOOT_PARAMS_MAGIC.
 * @version: NPU_BOOT_PARAMS_VERSION.
 * @size: sizeof(struct npu_boot_params); newer firmware reads only what
 *	the host provided.
 * @log_addr: bus address of the log buffer, or 0 for no log.
 * @log_size: bytes of the log buffer, a power of two >= 256 (or 0).
 * @heartbeat_ms: heartbeat period; 0 selects NPU_FW_HEARTBEAT_MS_DEFAULT.
 * @flags: none defined; must be zero.
 * @reserved: must be zero.
 */
struct npu_boot_params {
	npu_le32 magic;
	npu_le16 version;
	npu_le16 size;
	npu_le64 log_addr;
	npu_le32 log_size;
	npu_le32 heartbeat_ms;
	npu_le32 flags;
	npu_le32 reserved[9];
};
#define NPU_FW_HEARTBEAT_MS_DEFAULT	100
#define NPU_FW_LOG_MIN_SIZE		256

/** enum npu_fw_state - NPU_REG_FW_STATUS, the ready handshake */
enum npu_fw_state {
	NPU_FW_STATE_NONE = 0,		/* not started (reset clears it) */
	NPU_FW_STATE_BOOTING = 1,	/* running its init */
	NPU_FW_STATE_READY = 2,		/* version and caps valid, rings live */
	NPU_FW_STATE_ERROR = 3,		/* init failed; NPU_REG_FW_ERROR says why */
};

/** enum npu_fw_error - NPU_REG_FW_ERROR */
enum npu_fw_error {
	NPU_FW_ERR_NONE = 0,
	NPU_FW_ERR_BOOT_PARAMS = 1,	/* unreadable or malformed */
	NPU_FW_ERR_RING_CONFIG = 2,	/* a ring's base or size is bad */
	NPU_FW_ERR_RING_OVERFLOW = 3,	/* TAIL ran more than SIZE ahead */
	NPU_FW_ERR_CMPL_WRITE = 4,	/* a completion could not be written */
};

/* NPU_REG_FW_CAPS */
#define NPU_FW_CAP_LOG		(1u << 0)
#define NPU_FW_CAP_HEARTBEAT	(1u << 1)
#define NPU_FW_CAP_TIMESTAMPS	(1u << 2)
/*
 * GEMM_I8 and CONV2D_I8 take *_REQUANT_ONNX, ELTWISE_I8 NPU_ELT_*_ONNX
 * (the hardware's NPU_HW_CAP_REQUANT_ONNX)
 */
#define NPU_FW_CAP_REQUANT_ONNX	(1u << 3)
/* CONV2D_I8 takes groups (the hardware's NPU_HW_CAP_CONV_GROUPS) */
#define NPU_FW_CAP_CONV_GROUPS	(1u << 4)
/* SOFTMAX takes a mask (the hardware's NPU_HW_CAP_SOFTMAX_MASK) */
#define NPU_FW_CAP_SOFTMAX_MASK	(1u << 5)
/* NORM takes 8-bit x and y (the hardware's NPU_HW_CAP_NORM_Q8) */
#define NPU_FW_CAP_NORM_Q8	(1u << 6)
/* QDQ takes NPU_QDQ_REQUANTIZE_Q31 (the hardware's NPU_HW_CAP_REQUANT_Q31) */
#define NPU_FW_CAP_REQUANT_Q31	(1u << 7)
/*
 * CONV2D_F32 takes NPU_CONVF_CONST_W, GEMM_F32 NPU_GEMMF_CONST_B and
 * CONV2D_I8 NPU_CONV_CONST_W (the hardware's NPU_HW_CAP_CONST_WEIGHTS)
 */
#define NPU_FW_CAP_CONST_WEIGHTS (1u << 8)
/*
 * CONV2D_F32 takes its 128-byte form: groups and NPU_CONVF_CLAMP (the
 * hardware's NPU_HW_CAP_CONVF_GROUPS)
 */
#define NPU_FW_CAP_CONVF_GROUPS	(1u << 9)

/*
 * NPU_CMD_MODES(X) - the tensor commands' optional modes, once: X(NAME)
 * for NPU_HW_CAP_NAME (npu_hw.h: the engine has it) and NPU_FW_CAP_NAME
 * (the firmware offers it). The device reports the first, the firmware
 * offers each mode the hardware has, and libnpu asks the second before
 * it packs a command in that mode (its NPU backend's kern_modes()).
 */
#define NPU_CMD_MODES(X) X(REQUANT_ONNX) X(CONV_GROUPS) X(SOFTMAX_MASK) X(NORM_Q8) \
	X(REQUANT_Q31) X(CONST_WEIGHTS) X(CONVF_GROUPS)

/*
 * Log buffer: a byte ring in host memory. The firmware writes text lines
 * ("[sssss.uuuuuu] message\n": device time, seconds and microseconds);
 * NPU_REG_FW_LOG_WPTR counts every byte ever written (mod 2^32). The
 * valid text is the last min(WPTR, log_size) bytes before WPTR; older text
 * is overwritten.
 */

/* ------------------------------------------------------------------ */
/* Control core view (firmware only)                                    */
/* ------------------------------------------------------------------ */
/*
 * Address map of the RV32IM control core:
 *   NPU_SRAM_BASE .. + SRAM size   SRAM: code, data, stack
 *   NPU_CORE_HOSTREG_BASE          the BAR0 register file; the firmware
 *                                  may write the FW_* registers and ring
 *                                  HEAD/STATUS, the host may not
 *   NPU_CORE_CTL_BASE              private control block below
 * Anything else faults (the core stops, NPU_STATUS_CRASHED).
 * WFI sleeps until an event of WAKE_MASK is pending (a doorbell, an
 * engine event or the timer).
 *
 * The engines (DMA, tensor, the boot ROM's image load) run on their own,
 * beside the control core: a write to DMA_CTRL or TENSOR_CTRL starts an
 * operation and its STATUS reads NPU_JOB_BUSY until it ends, when
 * NPU_EV_ENGINE_DONE goes pending. Writes to an engine's registers while
 * it is busy are ignored. The firmware waits in WFI (WAKE_MASK at
 * ENGINE_DONE and TIMER, so it can still beat its heartbeat).
 */
#define NPU_CORE_HOSTREG_BASE	0x20000000u
#define NPU_CORE_CTL_BASE	0x20010000u
#define NPU_CORE_CTL_SIZE	0x1000u

#define NPU_CTL_EVENTS		0x00	/* RW1C: NPU_EV_* pending events */
#define  NPU_EV_DOORBELL(r)	(1u << (r)) /* ring r TAIL written */
#define  NPU_EV_RING_CONFIG	(1u << 16)  /* a ring was reconfigured */
#define  NPU_EV_ENGINE_RESET	(1u << 17)  /* host requested engine reset */
#define  NPU_EV_TIMER		(1u << 18)  /* TIME >= TIMER_CMP */
#define  NPU_EV_ENGINE_DONE	(1u << 19)  /* a DMA, tensor op or boot load ended */
#define NPU_CTL_IRQ_RAISE	0x04	/* WO: set IRQ_STATUS bits, send MSI-X */
#define NPU_CTL_TIME_LO		0x08	/* RO: ns since reset; LO latches HI */
#define NPU_CTL_TIME_HI		0x0c
#define NPU_CTL_TIMER_CMP_LO	0x10	/* RW: wake-up time, ns */
#define NPU_CTL_TIMER_CMP_HI	0x14	/* writing HI arms the timer */
#define NPU_CTL_PERF_CYCLES_LO	0x18	/* RO: modeled engine cycles */
#define NPU_CTL_PERF_CYCLES_HI	0x1c
#define NPU_CTL_PERF_BYTES_LO	0x20	/* RO: bytes moved by engines */
#define NPU_CTL_PERF_BYTES_HI	0x24
#define NPU_CTL_WAKE_MASK	0x28	/* RW: events that end WFI; reset: all */

/* DMA engine: program the operands, then write DMA_CTRL to run it. */
#define NPU_CTL_DMA_SRC_LO	0x40
#define NPU_CTL_DMA_SRC_HI	0x44
#define NPU_CTL_DMA_DST_LO	0x48
#define NPU_CTL_DMA_DST_HI	0x4c
#define NPU_CTL_DMA_LEN		0x50	/* bytes */
#define NPU_CTL_DMA_CTX		0x54	/* context for NPU_DMA_SPACE_VA */
#define NPU_CTL_DMA_PATTERN	0x58	/* 32-bit fill pattern */
#define NPU_CTL_DMA_CTRL	0x5c	/* WO: op | src space | dst space */
#define  NPU_DMA_OP_COPY	1
#define  NPU_DMA_OP_FILL	2
#define  NPU_DMA_OP_MASK	0xf
#define  NPU_DMA_SRC_SHIFT	4
#define  NPU_DMA_DST_SHIFT	8
#define  NPU_DMA_SPACE_MASK	0x3
#define  NPU_DMA_SPACE_SRAM	0	/* control-core address in SRAM */
#define  NPU_DMA_SPACE_BUS	1	/* host bus address, untranslated */
#define  NPU_DMA_SPACE_VA	2	/* device VA in DMA_CTX, via the MMU */
#define NPU_CTL_DMA_STATUS	0x60	/* RO: enum npu_job_status */
#define NPU_CTL_DMA_FAULT_LO	0x64	/* RO: address that failed */
#define NPU_CTL_DMA_FAULT_HI	0x68

/*
 * NPU_CTL_DMA_STATUS once a DMA_CTRL write has run: enum npu_job_status
 * (npu_hw.h), the one outcome code below the uAPI, which the firmware
 * passes on as the job's: OK, INVALID_CMD (bad op, space, SRAM range or
 * size), MMU_FAULT (see DMA_FAULT), BUS_ERROR, ABORTED (engine reset),
 * LIMIT (over the per-command memory or compute budget), or BUSY while it
 * runs (wait for NPU_EV_ENGINE_DONE).
 */
#define NPU_DMA_MAX_LEN		(1u << 30)

/*
 * Tensor engine: the firmware copies a tensor command (npu_cmd.h, op >= 16)
 * into SRAM, writes its address and the job's context, then TENSOR_CTRL.
 * The engine checks every field itself, runs the operation, and sets
 * TENSOR_STATUS (enum npu_job_status: BUSY while it runs, INVALID_CMD for a
 * malformed command, LIMIT for one over the device's per-command budget of
 * host memory or multiply-accumulates) and TENSOR_FAULT.
 */
#define NPU_CTL_TENSOR_DESC	0x80	/* SRAM address of the command */
#define NPU_CTL_TENSOR_CTX	0x84
#define NPU_CTL_TENSOR_CTRL	0x88	/* WO: 1 = run */
#define NPU_CTL_TENSOR_STATUS	0x8c
#define NPU_CTL_TENSOR_FAULT_LO	0x90
#define NPU_CTL_TENSOR_FAULT_HI	0x94

/** enum npu_core_fault - NPU_REG_CORE_FAULT when NPU_STATUS_CRASHED */
enum npu_core_fault {
	NPU_CORE_FAULT_NONE = 0,
	NPU_CORE_FAULT_ILLEGAL_INSN = 1,
	NPU_CORE_FAULT_FETCH = 2,	/* pc outside SRAM or misaligned */
	NPU_CORE_FAULT_LOAD = 3,	/* unmapped or misaligned register */
	NPU_CORE_FAULT_STORE = 4,
	NPU_CORE_FAULT_EBREAK = 5,	/* firmware stopped itself (abort) */
	NPU_CORE_FAULT_ECALL = 6,
	NPU_CORE_FAULT_INJECTED = 7,	/* NPU_FAULT_FW_CRASH */
};

#endif /* NPU_FW_H */
