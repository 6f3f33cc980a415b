/* SPDX-License-Identifier: MIT */
/*
 * npu_core_priv.h - state shared by the device core's files. Not for the
 * embedder: it uses npu_core.h.
 */
#ifndef NPU_CORE_PRIV_H
#define NPU_CORE_PRIV_H

#include "npu_core.h"
#include "npu_fw.h"
#include "npu_hw.h"
#include "npu_rv32.h"

#define NPU_TLB_ENTRIES	64	/* direct-mapped, tagged by context and page */
#define NPU_DMA_BOUNCE	(64 * 1024)
/*
 * Engine bytes one npu_core_run() call may move before it returns, so a
 * hostile command stream cannot hold the embedder's thread for long: the
 * current operation completes, then the slice ends.
 */
#define NPU_SLICE_BYTES	(4u << 20)

struct npu_tlb_entry {
	uint64_t vpn;		/* VA >> 12 */
	uint64_t pfn_addr;	/* bus address of the 4 KiB page */
	uint32_t ctx;
	uint32_t perm;		/* NPU_PTE_R | NPU_PTE_W; 0 = invalid entry */
};

struct npu_mmu {
	uint64_t ctx_table;
	uint32_t ctx_count;
	uint32_t fault_status;	/* NPU_MMU_FAULT_VALID | count << 16 */
	uint32_t fault_ctx;
	uint64_t fault_va;
	uint32_t fault_info;
	struct npu_tlb_entry tlb[NPU_TLB_ENTRIES];
};

struct npu_ring_regs {
	uint64_t base;
	uint64_t cmpl;
	uint32_t size;
	uint32_t tail;
	uint32_t head;
	uint32_t status;
	uint32_t gen;
};

struct npu_dma_regs {
	uint64_t src;
	uint64_t dst;
	uint32_t len;
	uint32_t ctx;
	uint32_t pattern;
	uint32_t status;
	uint64_t fault;
};

struct npu_tensor_regs {
	uint32_t desc;
	uint32_t ctx;
	uint32_t status;
	uint64_t fault;
};

struct npu_core {
	struct npu_core_config cfg;
	const struct npu_core_ops *ops;
	void *opaque;

	uint8_t *sram;
	uint8_t *bounce;		/* DMA staging buffer */
	struct rv32_cpu cpu;
	bool wfi;

	/* Host-visible state (BAR0). */
	uint32_t status;
	uint32_t boot_status;
	uint32_t core_fault, core_fault_pc, core_fault_addr;
	uint64_t fw_addr;
	uint32_t fw_size;
	uint64_t boot_params;
	uint32_t irq_status, irq_mask;
	uint32_t host_time_hi;		/* latched by a TIME_LO read */
	uint32_t fw_regs[8];		/* NPU_REG_FW_STATUS .. LOG_WPTR */
	struct npu_ring_regs ring[NPU_NUM_RINGS];
	struct npu_mmu mmu;

	/* Control-core private state. */
	uint32_t events;
	uint64_t timer_cmp;
	bool timer_armed;
	uint32_t fw_time_hi;
	bool engine_abort;		/* set by ENGINE_RESET until acked */
	struct npu_dma_regs dma;
	struct npu_tensor_regs tensor;
	uint64_t perf_cycles, perf_bytes;

	uint64_t time_base;		/* now_ns() at reset */
	uint64_t slice_bytes;		/* engine bytes in this npu_core_run() */
	/*
	 * Bumped by every reset. A DMA or MSI-X write of the device may land
	 * on its own config space and reset it (FLR) in the middle of an
	 * operation; whoever sees the generation change stops touching state.
	 */
	uint32_t reset_gen;

	/* Fault injection: armed kinds (bit n: enum npu_fault n), a hung core. */
	uint32_t faults_armed;
	bool fw_hung;

	/* Firmware coverage (npu_pctrace.c): the shared map, or NULL. */
	uint8_t *pcmap;
	size_t pcmap_len;
	uint32_t pcmap_crc;		/* payload CRC of the image it traces */
};

/* npu_core.c */
uint64_t npu_core_time(const struct npu_core *core);
/* True, once, if fault @kind (enum npu_fault) was armed. */
static inline bool npu_fault_take(struct npu_core *core, unsigned int kind)
{
	if (!(core->faults_armed & (1u << kind)))
		return false;
	core->faults_armed &= ~(1u << kind);
	return true;
}
void npu_core_raise_irq(struct npu_core *core, uint32_t bits);

/* npu_mmu.c */
void npu_mmu_reset(struct npu_mmu *mmu);
void npu_mmu_invalidate(struct npu_mmu *mmu, uint32_t ctx);
/*
 * Translate @va in @ctx for @access (NPU_MMU_ACCESS_*). On success returns
 * NPU_MMU_FAULT_NONE, sets *@pa and *@avail (bytes from @va to the end of
 * the page). On failure latches the fault record, raises NPU_IRQ_MMU and
 * returns the reason.
 */
uint32_t npu_mmu_translate(struct npu_core *core, uint32_t ctx, uint64_t va,
			   unsigned int access, uint64_t *pa, uint64_t *avail);

/* npu_dma.c: run the operation programmed in core->dma; sets dma.status. */
void npu_dma_run(struct npu_core *core, uint32_t ctrl);
/*
 * Read or write @len bytes at device VA @va of @ctx through the MMU, for
 * the engines. Returns enum npu_dma_status; *@fault gets the failing VA.
 */
uint32_t npu_va_rw(struct npu_core *core, uint32_t ctx, uint64_t va, void *buf,
		   uint64_t len, bool write, uint64_t *fault);

/* npu_tensor.c: run the tensor command at core->tensor.desc. */
void npu_tensor_run(struct npu_core *core);

/* npu_bootrom.c: validate and load the image; returns enum npu_boot_status. */
uint32_t npu_bootrom_load(struct npu_core *core, uint32_t *entry, uint32_t *crc);

/*
 * npu_pctrace.c: the coverage map file is "NPUPCMAP", then little-endian
 * u32 payload CRC, SRAM base, word count, zero; then one byte per word.
 */
#define NPU_PCMAP_MAGIC		"NPUPCMAP"
#define NPU_PCMAP_HDR		24
#define NPU_PCMAP_MAX_WORDS	((16u << 20) / 4)
/* Point the control core at the map if the booted image is the traced one. */
void npu_pctrace_boot(struct npu_core *core, uint32_t payload_crc);
void npu_pctrace_release(struct npu_core *core);

#endif /* NPU_CORE_PRIV_H */
