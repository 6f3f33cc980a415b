/* SPDX-License-Identifier: MIT */
/*
 * npu_hw.h - the NPU hardware interface: PCI identity, BAR0 register map,
 * MSI-X vectors, device MMU, job rings and completion records.
 *
 * The single source of truth for the device model, the firmware, the
 * kernel driver and libnpu. Documentation/hardware.rst explains it.
 * All multi-byte values in memory are little-endian. Registers are 32 bits
 * wide and must be accessed with aligned 32-bit loads and stores.
 */
#ifndef NPU_HW_H
#define NPU_HW_H

#include "npu_types.h"

/* ------------------------------------------------------------------ */
/* Specification version (NPU_REG_HW_VERSION)                           */
/* ------------------------------------------------------------------ */
#define NPU_HW_VERSION_MAJOR	1
#define NPU_HW_VERSION_MINOR	2	/* 1.2: CLOCK_MHZ and MAC_ARRAY; 1.1: engines beside the core */
#define NPU_HW_VERSION		((NPU_HW_VERSION_MAJOR << 16) | NPU_HW_VERSION_MINOR)

/* ------------------------------------------------------------------ */
/* PCI identity                                                         */
/* ------------------------------------------------------------------ */
#define NPU_PCI_VENDOR_ID	0x1234
#define NPU_PCI_DEVICE_ID	0x4e50
#define NPU_PCI_CLASS		0x1200	/* processing accelerator */
#define NPU_PCI_REVISION	0x01

#define NPU_BAR0_SIZE		0x10000	/* registers */
/* MSI-X table and PBA live in their own BAR so BAR0 stays registers only. */
#define NPU_MSIX_BAR		1

/* ------------------------------------------------------------------ */
/* Limits of this hardware version                                      */
/* ------------------------------------------------------------------ */
#define NPU_NUM_RINGS		4	/* job rings (hardware queues) */
#define NPU_MAX_CONTEXTS	256	/* entries a context table may have */
#define NPU_RING_MAX_ENTRIES	4096	/* ring size is a power of two */
#define NPU_SRAM_BASE		0x10000000u /* control core's SRAM */
#define NPU_SRAM_SIZE		0x40000u    /* 256 KiB */

/* ------------------------------------------------------------------ */
/* MSI-X vectors; IRQ_STATUS bit n is delivered on vector n             */
/* ------------------------------------------------------------------ */
#define NPU_IRQ_FW		0	/* fw ready/failed, boot error or BUSY, crash, ring stopped */
#define NPU_IRQ_MMU		1	/* an MMU fault was latched */
#define NPU_IRQ_RING(r)		(2 + (r)) /* ring r completed jobs */
#define NPU_NUM_VECTORS		(2 + NPU_NUM_RINGS)
#define NPU_IRQ_ALL		((1u << NPU_NUM_VECTORS) - 1)

/* ------------------------------------------------------------------ */
/* BAR0 registers: identity and control (host view)                    */
/* ------------------------------------------------------------------ */
#define NPU_REG_ID		0x0000	/* RO: NPU_ID_MAGIC */
#define  NPU_ID_MAGIC		0x4e505530u /* "NPU0" */
#define NPU_REG_HW_VERSION	0x0004	/* RO: major << 16 | minor */
#define NPU_REG_HW_CAPS		0x0008	/* RO: NPU_HW_CAP_* */
#define  NPU_HW_CAP_DMA		(1u << 0)
#define  NPU_HW_CAP_MMU		(1u << 1)
#define  NPU_HW_CAP_FLR		(1u << 2)
#define  NPU_HW_CAP_INT8	(1u << 3)	/* tensor engine: int8 inference ops */
#define  NPU_HW_CAP_TRAIN	(1u << 4)	/* tensor engine: fp32/bf16 training ops */
#define  NPU_HW_CAP_REQUANT_ONNX (1u << 5)	/* int8 GEMM, conv2d, eltwise: ONNX's requantization */
#define  NPU_HW_CAP_CONV_GROUPS	(1u << 6)	/* int8 conv2d: groups */
#define  NPU_HW_CAP_SOFTMAX_MASK (1u << 7)	/* softmax: an additive mask */
#define  NPU_HW_CAP_NORM_Q8	(1u << 8)	/* layer norm: 8-bit in and out */
#define  NPU_HW_CAP_REQUANT_Q31	(1u << 9)	/* qdq: TFLite's requantization */
#define  NPU_HW_CAP_CONST_WEIGHTS (1u << 10)	/* conv2d, fp32 GEMM: constant weights */
#define  NPU_HW_CAP_CONVF_GROUPS (1u << 11)	/* fp32 conv2d: groups and a clamp */
#define NPU_REG_NUM_RINGS	0x000c	/* RO */
#define NPU_REG_MAX_CONTEXTS	0x0010	/* RO */
#define NPU_REG_SRAM_SIZE	0x0014	/* RO: bytes of control-core SRAM */
#define NPU_REG_CLOCK_MHZ	0x0018	/* RO: the performance model's clock (1.2) */
#define NPU_REG_MAC_ARRAY	0x001c	/* RO: int8 MAC array rows << 16 | columns (1.2) */

#define NPU_REG_CTRL		0x0020	/* WO: command bits; several act in the order
				 * SOFT_RESET, HALT, ENGINE_RESET, BOOT */
#define  NPU_CTRL_BOOT		(1u << 0) /* load firmware, start the core */
#define  NPU_CTRL_HALT		(1u << 1) /* stop the control core */
#define  NPU_CTRL_ENGINE_RESET	(1u << 2) /* abort the running job's engine work */
#define  NPU_CTRL_SOFT_RESET	(1u << 3) /* whole device, like an FLR */
#define NPU_REG_STATUS		0x0024	/* RO: control core state */
#define  NPU_STATUS_OFF		0	/* never booted, halted or reset */
#define  NPU_STATUS_RUNNING	1
#define  NPU_STATUS_BOOT_FAILED	2	/* see NPU_REG_BOOT_STATUS */
#define  NPU_STATUS_CRASHED	3	/* see NPU_REG_CORE_FAULT* */
#define  NPU_STATUS_BOOTING	4	/* boot ROM loading the image (CTRL.BOOT) */
#define NPU_REG_BOOT_STATUS	0x0028	/* RO: enum npu_boot_status */
#define NPU_REG_CORE_FAULT	0x002c	/* RO: enum npu_core_fault */
#define NPU_REG_CORE_FAULT_PC	0x0030	/* RO: pc of the faulting insn */
#define NPU_REG_CORE_FAULT_ADDR	0x0034	/* RO: bad address, if any */

#define NPU_REG_FW_ADDR_LO	0x0040	/* RW: bus address of the image */
#define NPU_REG_FW_ADDR_HI	0x0044
#define NPU_REG_FW_SIZE		0x0048	/* RW: bytes of the whole image */
#define NPU_REG_BOOT_PARAMS_LO	0x0050	/* RW: bus address of boot params */
#define NPU_REG_BOOT_PARAMS_HI	0x0054

#define NPU_REG_IRQ_STATUS	0x0060	/* RW1C: pending causes */
#define NPU_REG_IRQ_MASK	0x0064	/* RW: 1 = cause enabled */

#define NPU_REG_TIME_LO		0x0070	/* RO: device time, ns since reset */
#define NPU_REG_TIME_HI		0x0074	/* RO: read LO first, HI is latched */

/*
 * Fault injection, for testing drivers: a write arms one enum npu_fault
 * (other values are ignored); a read returns the armed ones, bit n for
 * kind n. Each armed fault happens once, at the next chance, and a reset
 * disarms them all.
 */
#define NPU_REG_FAULT_INJECT	0x0080

/* ------------------------------------------------------------------ */
/* BAR0 registers: device MMU                                           */
/* ------------------------------------------------------------------ */
#define NPU_REG_MMU_CTX_TABLE_LO 0x0100	/* RW: bus address; bits 11:0 ignored */
#define NPU_REG_MMU_CTX_TABLE_HI 0x0104
#define NPU_REG_MMU_CTX_COUNT	0x0108	/* RW: entries, clamped to NPU_MAX_CONTEXTS */
#define NPU_REG_MMU_INVALIDATE	0x010c	/* WO: context id, or NPU_MMU_INV_ALL */
#define  NPU_MMU_INV_ALL	0xffffffffu
#define NPU_REG_MMU_FAULT_STATUS 0x0110	/* RO: bit 0 valid, 31:16 count */
#define  NPU_MMU_FAULT_VALID	(1u << 0)
#define  NPU_MMU_FAULT_COUNT_SHIFT 16
#define NPU_REG_MMU_FAULT_CTX	0x0114	/* RO: context of the first fault */
#define NPU_REG_MMU_FAULT_VA_LO	0x0118	/* RO */
#define NPU_REG_MMU_FAULT_VA_HI	0x011c
#define NPU_REG_MMU_FAULT_INFO	0x0120	/* RO: reason | access << 8 */
#define NPU_REG_MMU_FAULT_ACK	0x0124	/* WO: any value clears the record and count */
/*
 * Invalidation completion. Each write of MMU_INVALIDATE (and each change of
 * the context table) adds one to INV_SEQ; INV_DONE reaches that value once
 * no engine access in progress still uses a translation made before it.
 * A driver that frees pages reads INV_SEQ after its invalidation and waits
 * until INV_DONE - seq, as a signed 32-bit value, is not negative: from
 * then on the device never touches the pages it unmapped.
 */
#define NPU_REG_MMU_INV_SEQ	0x0128	/* RO: invalidations requested */
#define NPU_REG_MMU_INV_DONE	0x012c	/* RO: invalidations complete */

/* ------------------------------------------------------------------ */
/* BAR0 registers: written by firmware, read by the host                */
/* ------------------------------------------------------------------ */
#define NPU_REG_FW_STATUS	0x0200	/* enum npu_fw_state */
#define NPU_REG_FW_VERSION	0x0204	/* major << 16 | minor << 8 | patch */
#define NPU_REG_FW_API		0x0208	/* api major << 16 | api minor */
#define NPU_REG_FW_CAPS		0x020c	/* NPU_FW_CAP_* */
#define NPU_REG_FW_CMD_CAPS	0x0210	/* bit n: command opcode n supported */
#define NPU_REG_FW_HEARTBEAT	0x0214	/* increments every heartbeat period */
#define NPU_REG_FW_ERROR	0x0218	/* enum npu_fw_error, last error */
#define NPU_REG_FW_LOG_WPTR	0x021c	/* bytes written to the log, wraps */
#define NPU_REG_FW_CURRENT	0x0220	/* the job running now, 0 when none: */
#define  NPU_FW_CURRENT_VALID	(1u << 31)
#define  NPU_FW_CURRENT_RING(v)	(((v) >> 16) & 0xff)	/* its ring */
#define  NPU_FW_CURRENT_IDX(v)	((v) & 0xffff)		/* HEAD when it started */
#define NPU_REG_FW_PROGRESS	0x0224	/* tensor commands and 4 MiB copy/fill
					 * pieces ended, wraps */
#define NPU_REG_FW_CMD_CAPS_HI	0x0228	/* bit n: command opcode 32 + n supported */
#define NPU_REG_FW_LAST		NPU_REG_FW_CMD_CAPS_HI

/* ------------------------------------------------------------------ */
/* BAR0 registers: job rings                                            */
/* ------------------------------------------------------------------ */
#define NPU_RING_REG_BASE	0x1000
#define NPU_RING_REG_STRIDE	0x40
#define NPU_RING_REG(r, reg)	(NPU_RING_REG_BASE + (r) * NPU_RING_REG_STRIDE + (reg))
#define NPU_RING_BASE_LO	0x00	/* RW: bus address of descriptors */
#define NPU_RING_BASE_HI	0x04
#define NPU_RING_CMPL_LO	0x08	/* RW: bus address of completions */
#define NPU_RING_CMPL_HI	0x0c
#define NPU_RING_SIZE		0x10	/* RW: entries (power of 2), 0 = off;
					 * writing it zeroes HEAD, TAIL and STATUS */
#define NPU_RING_TAIL		0x14	/* RW: producer index; the doorbell */
#define NPU_RING_HEAD		0x18	/* RO: consumer index (firmware) */
#define NPU_RING_STATUS		0x1c	/* RO: NPU_RING_ERR_* (firmware) */
#define  NPU_RING_ERR_CONFIG	(1u << 0) /* bad base, size or alignment */
#define  NPU_RING_ERR_OVERFLOW	(1u << 1) /* TAIL - HEAD > SIZE */
#define NPU_RING_GEN		0x20	/* RO: counts SIZE writes, so the
					 * firmware sees a reconfiguration */

/*
 * HEAD and TAIL are free-running 32-bit counters; the entry of index i is
 * i & (SIZE - 1). The ring is empty when HEAD == TAIL and holds
 * TAIL - HEAD entries (modulo 2^32), never more than SIZE.
 */

/**
 * struct npu_job_desc - one entry of a job ring (64 bytes).
 * @job_id: opaque to the device, echoed in the completion record.
 * @cmd_va: device virtual address of the command buffer, 8-byte aligned.
 * @cmd_size: bytes of commands, a non-zero multiple of 8,
 *	at most NPU_MAX_CMDBUF_SIZE.
 * @ctx_id: address space the job runs in (index into the context table,
 *	below NPU_REG_MMU_CTX_COUNT).
 * @flags: NPU_JOB_F_*; unknown bits make the job fail with INVALID_DESC.
 * @reserved: must be zero.
 */
struct npu_job_desc {
	npu_le64 job_id;
	npu_le64 cmd_va;
	npu_le32 cmd_size;
	npu_le32 ctx_id;
	npu_le32 flags;
	npu_le32 reserved[9];
};
#define NPU_JOB_F_NO_IRQ	(1u << 0) /* no interrupt for this job alone, unless it fails */
#define NPU_JOB_F_ALL		NPU_JOB_F_NO_IRQ
#define NPU_MAX_CMDBUF_SIZE	(1u << 20)

/**
 * enum npu_job_status - the one outcome code below the uAPI: a job's, in
 * its completion record, and the DMA and tensor engines', in their status
 * registers (npu_fw.h), which the firmware passes on as the job's. The
 * uAPI has its own (enum drm_npu_job_status), mapped from this in one
 * table of the driver's.
 */
enum npu_job_status {
	NPU_JOB_OK = 0,
	NPU_JOB_INVALID_DESC = 1,	/* the ring entry itself is malformed */
	NPU_JOB_INVALID_CMD = 2,	/* a command is malformed or unknown */
	NPU_JOB_MMU_FAULT = 3,		/* fault_va says where */
	NPU_JOB_BUS_ERROR = 4,		/* host memory access failed (or not RAM) */
	NPU_JOB_ABORTED = 5,		/* engine reset while running */
	NPU_JOB_TIMEOUT = 6,		/* set by the host, never by firmware */
	NPU_JOB_LIMIT = 7,		/* a command over the device's per-command budget */
	NPU_JOB_BUSY = 0x80,		/* an engine's only: still running */
};

/**
 * struct npu_job_cmpl - completion record (64 bytes), written by the
 * firmware at CMPL + index * 64 before HEAD moves past the entry.
 * @job_id: copied from the descriptor.
 * @status: enum npu_job_status.
 * @error_offset: byte offset in the command buffer of the failing command
 *	(INVALID_CMD, MMU_FAULT, BUS_ERROR, ABORTED, LIMIT); 0 otherwise.
 * @fault_va: the address that failed, for MMU_FAULT (a device VA) and for
 *	BUS_ERROR (the VA being accessed, or 0 for the descriptor); 0 otherwise.
 * @start_ns: device time when the job started.
 * @end_ns: device time when the job ended.
 * @cycles: NPU cycles the performance model predicts for the job.
 * @bytes: bytes the engines moved for the job.
 * @reserved: zero.
 */
struct npu_job_cmpl {
	npu_le64 job_id;
	npu_le32 status;
	npu_le32 error_offset;
	npu_le64 fault_va;
	npu_le64 start_ns;
	npu_le64 end_ns;
	npu_le64 cycles;
	npu_le64 bytes;
	npu_le64 reserved;
};

/* ------------------------------------------------------------------ */
/* Device MMU                                                           */
/* ------------------------------------------------------------------ */
/*
 * Three-level page tables of 512 64-bit entries each, 4 KiB pages, 39-bit
 * device virtual addresses: VA[38:30] indexes level 2 (the root), VA[29:21]
 * level 1, VA[20:12] level 0. An entry with V and R or W set is a leaf: at
 * level 2 it maps 1 GiB, at level 1 2 MiB, at level 0 4 KiB, and its address
 * must be aligned to that size. An entry with V set and R, W clear points to
 * the next level table. Reserved bits must be zero.
 */
#define NPU_VA_BITS		39
#define NPU_PAGE_SHIFT		12
#define NPU_PAGE_SIZE		(1u << NPU_PAGE_SHIFT)
#define NPU_PT_LEVELS		3
#define NPU_PT_ENTRIES		512

#define NPU_PTE_V		(1ull << 0)
#define NPU_PTE_R		(1ull << 1)
#define NPU_PTE_W		(1ull << 2)
#define NPU_PTE_ADDR_MASK	0x000ffffffffff000ull /* bits 51:12 */
#define NPU_PTE_RSVD_MASK	(~(NPU_PTE_ADDR_MASK | NPU_PTE_V | NPU_PTE_R | NPU_PTE_W))

/**
 * struct npu_ctx_entry - one entry of the context table (16 bytes).
 * @pt_root: bus address of the level-2 table, 4 KiB aligned.
 * @flags: NPU_CTX_VALID; other bits reserved.
 * @reserved: must be zero.
 */
struct npu_ctx_entry {
	npu_le64 pt_root;
	npu_le32 flags;
	npu_le32 reserved;
};
#define NPU_CTX_VALID		(1u << 0)

/** enum npu_mmu_fault_reason - NPU_REG_MMU_FAULT_INFO bits 7:0 */
enum npu_mmu_fault_reason {
	NPU_MMU_FAULT_NONE = 0,
	NPU_MMU_FAULT_NOT_PRESENT = 1,	/* an entry on the walk has V clear */
	NPU_MMU_FAULT_PERMISSION = 2,	/* leaf lacks R (read) or W (write) */
	NPU_MMU_FAULT_BAD_CONTEXT = 3,	/* ctx >= count or entry not valid */
	NPU_MMU_FAULT_BAD_ENTRY = 4,	/* reserved bits, misaligned leaf, table at level 0 */
	NPU_MMU_FAULT_RANGE = 5,	/* VA beyond NPU_VA_BITS */
	NPU_MMU_FAULT_BUS = 6,		/* reading a table failed */
	NPU_MMU_FAULT_INJECTED = 7,	/* NPU_FAULT_MMU_FAULT */
};
/** enum npu_fault - NPU_REG_FAULT_INJECT: the faults a test can arm */
enum npu_fault {
	NPU_FAULT_FW_HANG = 1,		/* the control core stops, heartbeat and all */
	NPU_FAULT_FW_CRASH = 2,		/* the control core traps (CORE_FAULT_INJECTED) */
	NPU_FAULT_ENGINE_HANG = 3,	/* the next job op never ends by itself */
	NPU_FAULT_DMA_ERROR = 4,	/* the next job-memory DMA gets a bus error */
	NPU_FAULT_MMU_FAULT = 5,	/* the next translation faults (..._INJECTED) */
	NPU_FAULT_LOST_IRQ = 6,		/* the next ring completion interrupt is lost */
	NPU_FAULT_BAD_COMPLETION = 7,	/* the next completion record is corrupted */
};
#define NPU_FAULTS_VALID	0xfeu	/* bit n set: kind n is defined */

#define NPU_MMU_ACCESS_READ	0
#define NPU_MMU_ACCESS_WRITE	1

#endif /* NPU_HW_H */
