// SPDX-License-Identifier: MIT
/*
 * npu_core.c - the NPU's register file, interrupts, events and the control
 * core's run loop. Engines, MMU and boot ROM live in their own files.
 *
 * The host and the firmware see the same BAR0 register file; each side may
 * write only its own registers (the host configures, the firmware reports).
 * Writes to the other side's registers are ignored, reads are always
 * allowed.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_core_priv.h"

#define FW_REG_IDX(off)	(((off) - NPU_REG_FW_STATUS) / 4)

void npu_core_default_config(struct npu_core_config *cfg)
{
	cfg->sram_size = NPU_SRAM_SIZE;
	cfg->clock_mhz = 1000;
	cfg->dma_bytes_per_cycle = 32;
	cfg->dma_setup_cycles = 64;
	cfg->mac_rows = 32;
	cfg->mac_cols = 32;
	cfg->engine_threads = 0;
	cfg->tensor_sram_kib = 1024;
	cfg->profile = NPU_PROFILE_FULL;
	cfg->cmd_mem_mib = 256;
	cfg->cmd_max_mmacs = 8000;
	cfg->weight_cache_mib = 512;
	cfg->engine_inline = false;
	cfg->dma_inline_max = 4096;
}

uint64_t npu_core_time(const struct npu_core *core)
{
	return core->ops->now_ns(core->opaque) - core->time_base;
}

static void send_msi(struct npu_core *core, uint32_t bits)
{
	for (unsigned int v = 0; v < NPU_NUM_VECTORS; v++)
		if (bits & core->irq_mask & (1u << v))
			core->ops->msi(core->opaque, v);
}

/* The completion interrupts of the rings. */
#define RING_IRQS	(NPU_IRQ_ALL & ~(1u << NPU_IRQ_FW | 1u << NPU_IRQ_MMU))

void npu_core_raise_irq(struct npu_core *core, uint32_t bits)
{
	uint32_t rising = bits & NPU_IRQ_ALL & ~core->irq_status;

	/* MSI-X is edge-like: send when a cause goes pending while enabled. */
	core->irq_status |= bits & NPU_IRQ_ALL;
	send_msi(core, rising);
}

static void update_timer(struct npu_core *core)
{
	if (core->timer_armed && npu_core_time(core) >= core->timer_cmp) {
		core->timer_armed = false;
		core->events |= NPU_EV_TIMER;
	}
}

struct npu_core *npu_core_new(const struct npu_core_config *cfg,
			      const struct npu_core_ops *ops, void *opaque)
{
	struct npu_core *core;

	if (!cfg || !ops || !ops->dma_read || !ops->dma_write || !ops->msi ||
	    !ops->now_ns || cfg->sram_size < NPU_PAGE_SIZE ||
	    cfg->sram_size > (16u << 20) || cfg->sram_size % NPU_PAGE_SIZE ||
	    !cfg->clock_mhz || !cfg->dma_bytes_per_cycle || !cfg->mac_rows ||
	    !cfg->mac_cols || cfg->mac_rows > 4096 || cfg->mac_cols > 4096 ||
	    !cfg->tensor_sram_kib || cfg->tensor_sram_kib > (1u << 20) ||
	    cfg->profile > NPU_PROFILE_EDGE || !cfg->cmd_mem_mib ||
	    cfg->cmd_mem_mib > 4096 || !cfg->cmd_max_mmacs || cfg->cmd_max_mmacs > 8000 ||
	    cfg->weight_cache_mib > 16384 || cfg->dma_inline_max > 65536)
		return NULL;
	core = calloc(1, sizeof(*core));
	if (!core)
		return NULL;
	core->cfg = *cfg;
	if (!core->cfg.engine_threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		core->cfg.engine_threads = n > 0 && n < 64 ? (uint32_t)n : 1;
	}
	core->ops = ops;
	core->opaque = opaque;
	core->sram = calloc(1, cfg->sram_size);
	if (!core->sram || pthread_mutex_init(&core->sram_lock, NULL)) {
		free(core->sram);
		free(core);
		return NULL;
	}
	npu_mmu_init(&core->mmu);
	atomic_init(&core->reset_gen, 0);
	atomic_init(&core->faults_armed, 0);
	atomic_init(&core->engine_abort, false);
	npu_core_reset(core);
	if (npu_engine_init(core)) {
		npu_core_free(core);
		return NULL;
	}
	return core;
}

void npu_core_free(struct npu_core *core)
{
	if (!core)
		return;
	npu_engine_fini(core);
	npu_pctrace_release(core);
	pthread_mutex_destroy(&core->mmu.lock);
	pthread_mutex_destroy(&core->sram_lock);
	free(core->sram);
	free(core);
}

static bool fw_io_read(void *opaque, uint32_t addr, uint32_t *val);
static bool fw_io_write(void *opaque, uint32_t addr, uint32_t val);

void npu_core_reset(struct npu_core *core)
{
	uint64_t retired = core->cpu.retired;

	/* First: the engine stops its operation and drops its result. */
	npu_engine_drop(core);
	pthread_mutex_lock(&core->sram_lock);
	memset(core->sram, 0, core->cfg.sram_size);
	pthread_mutex_unlock(&core->sram_lock);
	memset(&core->cpu, 0, sizeof(core->cpu));
	core->cpu.mem = core->sram;
	core->cpu.mem_base = NPU_SRAM_BASE;
	core->cpu.mem_size = core->cfg.sram_size;
	core->cpu.io_read = fw_io_read;
	core->cpu.io_write = fw_io_write;
	core->cpu.opaque = core;
	core->cpu.retired = retired;
	core->wfi = false;
	core->wake_mask = ~0u;

	core->status = NPU_STATUS_OFF;
	core->boot_status = NPU_BOOT_NONE;
	core->core_fault = core->core_fault_pc = core->core_fault_addr = 0;
	core->fw_addr = 0;
	core->fw_size = 0;
	core->boot_params = 0;
	core->irq_status = core->irq_mask = 0;
	core->host_time_hi = core->fw_time_hi = 0;
	memset(core->fw_regs, 0, sizeof(core->fw_regs));
	memset(core->ring, 0, sizeof(core->ring));
	npu_mmu_reset(&core->mmu);

	core->events = 0;
	core->timer_cmp = 0;
	core->timer_armed = false;
	atomic_store(&core->engine_abort, false);
	memset(&core->dma, 0, sizeof(core->dma));
	memset(&core->tensor, 0, sizeof(core->tensor));
	core->perf_cycles = core->perf_bytes = 0;
	core->eng.hung = false;
	core->time_base = core->ops->now_ns(core->opaque);
	atomic_store(&core->faults_armed, 0);
	core->fw_hung = false;
	/* If this reset came from inside an instruction, end the run there. */
	core->cpu.stop_request = true;
	/*
	 * The dropped operation stops at its next check: none of it lands
	 * later. Unless the reset came from that operation's own DMA onto the
	 * device (an embedder that lets it reach MMIO), on the engine thread
	 * or inline: it ends as it unwinds.
	 */
	if (core->eng.started && !npu_engine_in_op(core))
		npu_core_engine_wait(core);
}

/*
 * The engines' operation is dropped (the caller moves reset_gen on): a
 * status left BUSY would never end, and the next firmware would wait for
 * it for ever.
 */
static void engines_idle(struct npu_core *core)
{
	if (core->dma.status == NPU_JOB_BUSY)
		core->dma.status = NPU_JOB_ABORTED;
	if (core->tensor.status == NPU_JOB_BUSY)
		core->tensor.status = NPU_JOB_ABORTED;
	core->eng.hung = false;
}

void npu_core_boot(struct npu_core *core)
{
	struct npu_eng_req req = { .kind = NPU_ENG_BOOT };

	if (core->status == NPU_STATUS_RUNNING || core->status == NPU_STATUS_BOOTING) {
		core->boot_status = NPU_BOOT_ERR_BUSY;
		npu_core_raise_irq(core, 1u << NPU_IRQ_FW);
		return;
	}
	memset(core->fw_regs, 0, sizeof(core->fw_regs));
	for (unsigned int r = 0; r < NPU_NUM_RINGS; r++)
		core->ring[r].status = 0;
	core->events = 0;
	core->timer_armed = false;
	atomic_store(&core->engine_abort, false);
	core->fw_hung = false;
	core->core_fault = core->core_fault_pc = core->core_fault_addr = 0;
	core->boot_status = NPU_BOOT_NONE;
	core->status = NPU_STATUS_BOOTING;
	/* The image load and its CRC run on the engine thread. */
	npu_engine_drop(core);
	engines_idle(core);
	req.fw_addr = core->fw_addr;
	req.fw_size = core->fw_size;
	npu_engine_submit(core, &req);
}

void npu_core_boot_done(struct npu_core *core, const struct npu_eng_req *r)
{
	if (core->status != NPU_STATUS_BOOTING)
		return;
	core->boot_status = r->status;
	if (core->boot_status != NPU_BOOT_OK) {
		core->status = NPU_STATUS_BOOT_FAILED;
		npu_core_raise_irq(core, 1u << NPU_IRQ_FW);
		return;
	}
	rv32_reset(&core->cpu, r->entry);
	npu_pctrace_boot(core, r->crc);
	core->cpu.x[10] = core->cfg.sram_size;	/* a0: SRAM size */
	core->wfi = false;
	core->wake_mask = ~0u;
	core->status = NPU_STATUS_RUNNING;
}

static void core_ctrl(struct npu_core *core, uint32_t val)
{
	/* enum npu_core_event's RESET kinds of BOOT, HALT, ENGINE_RESET, SOFT_RESET */
	static const uint8_t what[4] = { 4, 2, 3, 1 };

	for (unsigned int b = 0; b < 4; b++)
		if (val & (1u << b))
			npu_trace(core, NPU_TRACE_RESET, what[b], 0, 0);
	if (val & NPU_CTRL_SOFT_RESET)
		npu_core_reset(core);
	if ((val & NPU_CTRL_HALT) && (core->status == NPU_STATUS_RUNNING ||
				      core->status == NPU_STATUS_BOOTING)) {
		core->status = NPU_STATUS_OFF;
		core->fw_hung = false;
		core->wfi = false;
		npu_engine_drop(core);	/* engine work is dropped */
		engines_idle(core);
	}
	if (val & NPU_CTRL_ENGINE_RESET) {
		/*
		 * The running job op stops at its next block; job ops fail
		 * with ABORTED until the firmware acks the event.
		 */
		atomic_store(&core->engine_abort, true);
		core->events |= NPU_EV_ENGINE_RESET;
		npu_engine_reset(core);
	}
	if (val & NPU_CTRL_BOOT)
		npu_core_boot(core);
}

static uint32_t lo32(uint64_t v)
{
	return (uint32_t)v;
}

static uint32_t hi32(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

static void set_lo(uint64_t *v, uint32_t lo)
{
	*v = (*v & 0xffffffff00000000ull) | lo;
}

static void set_hi(uint64_t *v, uint32_t hi)
{
	*v = (*v & 0xffffffffull) | (uint64_t)hi << 32;
}

static uint32_t ring_read(const struct npu_ring_regs *r, uint32_t reg)
{
	switch (reg) {
	case NPU_RING_BASE_LO: return lo32(r->base);
	case NPU_RING_BASE_HI: return hi32(r->base);
	case NPU_RING_CMPL_LO: return lo32(r->cmpl);
	case NPU_RING_CMPL_HI: return hi32(r->cmpl);
	case NPU_RING_SIZE: return r->size;
	case NPU_RING_TAIL: return r->tail;
	case NPU_RING_HEAD: return r->head;
	case NPU_RING_STATUS: return r->status;
	case NPU_RING_GEN: return r->gen;
	default: return 0;
	}
}

static void ring_write(struct npu_core *core, unsigned int idx, uint32_t reg,
		       uint32_t val, bool fw)
{
	struct npu_ring_regs *r = &core->ring[idx];

	if (fw) {	/* the firmware owns HEAD and STATUS only */
		if (reg == NPU_RING_HEAD) {
			r->head = val;
			npu_trace(core, NPU_TRACE_JOB_DONE, idx, val, 0);
		}
		else if (reg == NPU_RING_STATUS)
			r->status = val;
		return;
	}
	switch (reg) {
	case NPU_RING_BASE_LO: set_lo(&r->base, val); break;
	case NPU_RING_BASE_HI: set_hi(&r->base, val); break;
	case NPU_RING_CMPL_LO: set_lo(&r->cmpl, val); break;
	case NPU_RING_CMPL_HI: set_hi(&r->cmpl, val); break;
	case NPU_RING_SIZE:
		r->size = val;
		r->head = r->tail = r->status = 0;
		r->gen++;
		core->events |= NPU_EV_RING_CONFIG;
		break;
	case NPU_RING_TAIL:
		r->tail = val;
		core->events |= NPU_EV_DOORBELL(idx);
		npu_trace(core, NPU_TRACE_DOORBELL_WRITE, idx, val, 0);
		break;
	default:
		break;
	}
}

/* MMU registers: the engine thread uses the MMU too. */
static uint32_t mmu_reg_read(struct npu_mmu *mmu, uint32_t off)
{
	uint32_t v;

	pthread_mutex_lock(&mmu->lock);
	switch (off) {
	case NPU_REG_MMU_CTX_TABLE_LO: v = lo32(mmu->ctx_table); break;
	case NPU_REG_MMU_CTX_TABLE_HI: v = hi32(mmu->ctx_table); break;
	case NPU_REG_MMU_CTX_COUNT: v = mmu->ctx_count; break;
	case NPU_REG_MMU_FAULT_STATUS: v = mmu->fault_status; break;
	case NPU_REG_MMU_FAULT_CTX: v = mmu->fault_ctx; break;
	case NPU_REG_MMU_FAULT_VA_LO: v = lo32(mmu->fault_va); break;
	case NPU_REG_MMU_FAULT_VA_HI: v = hi32(mmu->fault_va); break;
	case NPU_REG_MMU_FAULT_INFO: v = mmu->fault_info; break;
	case NPU_REG_MMU_INV_SEQ: v = mmu->inv_seq; break;
	case NPU_REG_MMU_INV_DONE: v = mmu->users ? mmu->use_seq : mmu->inv_seq; break;
	default: v = 0; break;
	}
	pthread_mutex_unlock(&mmu->lock);
	return v;
}

static void mmu_reg_write(struct npu_mmu *mmu, uint32_t off, uint32_t val)
{
	if (off == NPU_REG_MMU_INVALIDATE) {
		npu_mmu_invalidate(mmu, val);
		return;
	}
	pthread_mutex_lock(&mmu->lock);
	switch (off) {
	case NPU_REG_MMU_CTX_TABLE_LO:
		set_lo(&mmu->ctx_table, val & ~(NPU_PAGE_SIZE - 1));
		break;
	case NPU_REG_MMU_CTX_TABLE_HI:
		set_hi(&mmu->ctx_table, val);
		break;
	case NPU_REG_MMU_CTX_COUNT:
		mmu->ctx_count = val < NPU_MAX_CONTEXTS ? val : NPU_MAX_CONTEXTS;
		break;
	case NPU_REG_MMU_FAULT_ACK:
		mmu->fault_status = 0;
		mmu->fault_ctx = mmu->fault_info = 0;
		mmu->fault_va = 0;
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&mmu->lock);
	/* A new table or count: nothing cached may outlive it. */
	if (off != NPU_REG_MMU_FAULT_ACK)
		npu_mmu_invalidate(mmu, NPU_MMU_INV_ALL);
}

/* Every optional mode of the tensor commands: this engine has them all. */
#define HW_MODE(n) NPU_HW_CAP_##n |

static uint32_t reg_read(struct npu_core *core, uint32_t off, bool fw)
{

	if (off >= NPU_RING_REG_BASE &&
	    off < NPU_RING_REG(NPU_NUM_RINGS, 0))
		return ring_read(&core->ring[(off - NPU_RING_REG_BASE) / NPU_RING_REG_STRIDE],
				 (off - NPU_RING_REG_BASE) % NPU_RING_REG_STRIDE);
	if (off >= NPU_REG_FW_STATUS && off <= NPU_REG_FW_LAST)
		return core->fw_regs[FW_REG_IDX(off)];

	switch (off) {
	case NPU_REG_ID: return NPU_ID_MAGIC;
	case NPU_REG_HW_VERSION: return NPU_HW_VERSION;
	case NPU_REG_HW_CAPS:
		return NPU_HW_CAP_DMA | NPU_HW_CAP_MMU | NPU_HW_CAP_FLR | NPU_HW_CAP_INT8 |
		       NPU_CMD_MODES(HW_MODE)
		       (core->cfg.profile == NPU_PROFILE_FULL ? NPU_HW_CAP_TRAIN : 0);
	case NPU_REG_NUM_RINGS: return NPU_NUM_RINGS;
	case NPU_REG_MAX_CONTEXTS: return NPU_MAX_CONTEXTS;
	case NPU_REG_SRAM_SIZE: return core->cfg.sram_size;
	case NPU_REG_CLOCK_MHZ: return core->cfg.clock_mhz;
	case NPU_REG_MAC_ARRAY: return core->cfg.mac_rows << 16 | core->cfg.mac_cols; /* <= 4096 */
	case NPU_REG_STATUS: return core->status;
	case NPU_REG_BOOT_STATUS: return core->boot_status;
	case NPU_REG_CORE_FAULT: return core->core_fault;
	case NPU_REG_CORE_FAULT_PC: return core->core_fault_pc;
	case NPU_REG_CORE_FAULT_ADDR: return core->core_fault_addr;
	case NPU_REG_FW_ADDR_LO: return lo32(core->fw_addr);
	case NPU_REG_FW_ADDR_HI: return hi32(core->fw_addr);
	case NPU_REG_FW_SIZE: return core->fw_size;
	case NPU_REG_BOOT_PARAMS_LO: return lo32(core->boot_params);
	case NPU_REG_BOOT_PARAMS_HI: return hi32(core->boot_params);
	case NPU_REG_IRQ_STATUS: return core->irq_status;
	case NPU_REG_IRQ_MASK: return core->irq_mask;
	case NPU_REG_TIME_LO: {
		uint64_t t = npu_core_time(core);

		if (fw)
			core->fw_time_hi = hi32(t);
		else
			core->host_time_hi = hi32(t);
		return lo32(t);
	}
	case NPU_REG_TIME_HI: return fw ? core->fw_time_hi : core->host_time_hi;
	case NPU_REG_FAULT_INJECT: return atomic_load(&core->faults_armed);
	case NPU_REG_MMU_CTX_TABLE_LO: case NPU_REG_MMU_CTX_TABLE_HI:
	case NPU_REG_MMU_CTX_COUNT: case NPU_REG_MMU_FAULT_STATUS:
	case NPU_REG_MMU_FAULT_CTX: case NPU_REG_MMU_FAULT_VA_LO:
	case NPU_REG_MMU_FAULT_VA_HI: case NPU_REG_MMU_FAULT_INFO:
	case NPU_REG_MMU_INV_SEQ: case NPU_REG_MMU_INV_DONE:
		return mmu_reg_read(&core->mmu, off);
	default: return 0;
	}
}

static void reg_write_host(struct npu_core *core, uint32_t off, uint32_t val)
{
	switch (off) {
	case NPU_REG_CTRL: core_ctrl(core, val); break;
	case NPU_REG_FW_ADDR_LO: set_lo(&core->fw_addr, val); break;
	case NPU_REG_FW_ADDR_HI: set_hi(&core->fw_addr, val); break;
	case NPU_REG_FW_SIZE: core->fw_size = val; break;
	case NPU_REG_BOOT_PARAMS_LO: set_lo(&core->boot_params, val); break;
	case NPU_REG_BOOT_PARAMS_HI: set_hi(&core->boot_params, val); break;
	case NPU_REG_FAULT_INJECT:
		if (val < 32 && (NPU_FAULTS_VALID & (1u << val)))
			atomic_fetch_or(&core->faults_armed, 1u << val);
		break;
	case NPU_REG_IRQ_STATUS: core->irq_status &= ~val; break;
	case NPU_REG_IRQ_MASK: {
		/* Causes that went pending while masked are sent when unmasked. */
		uint32_t unmasked = val & ~core->irq_mask & core->irq_status;

		core->irq_mask = val & NPU_IRQ_ALL;
		send_msi(core, unmasked);
		break;
	}
	case NPU_REG_MMU_CTX_TABLE_LO: case NPU_REG_MMU_CTX_TABLE_HI:
	case NPU_REG_MMU_CTX_COUNT: case NPU_REG_MMU_INVALIDATE:
	case NPU_REG_MMU_FAULT_ACK:
		mmu_reg_write(&core->mmu, off, val);
		break;
	default:	/* read-only, or nothing there */
		npu_trace(core, NPU_TRACE_GUEST_ERROR, 0, off, val);
		break;
	}
}

static void reg_write(struct npu_core *core, uint32_t off, uint32_t val, bool fw)
{
	if (off >= NPU_RING_REG_BASE && off < NPU_RING_REG(NPU_NUM_RINGS, 0)) {
		ring_write(core, (off - NPU_RING_REG_BASE) / NPU_RING_REG_STRIDE,
			   (off - NPU_RING_REG_BASE) % NPU_RING_REG_STRIDE, val, fw);
		return;
	}
	if (fw) {
		if (off >= NPU_REG_FW_STATUS && off <= NPU_REG_FW_LAST)
			core->fw_regs[FW_REG_IDX(off)] = val;
		return;
	}
	reg_write_host(core, off, val);
}

uint32_t npu_core_mmio_read(struct npu_core *core, uint32_t offset)
{
	if (offset >= NPU_BAR0_SIZE || (offset & 3))
		return 0;
	return reg_read(core, offset, false);
}

void npu_core_mmio_write(struct npu_core *core, uint32_t offset, uint32_t val)
{
	if (offset >= NPU_BAR0_SIZE || (offset & 3))
		return;
	reg_write(core, offset, val, false);
}

static void dma_reg_write(struct npu_core *core, uint32_t off, uint32_t val)
{
	switch (off) {
	case NPU_CTL_DMA_SRC_LO: set_lo(&core->dma.src, val); break;
	case NPU_CTL_DMA_SRC_HI: set_hi(&core->dma.src, val); break;
	case NPU_CTL_DMA_DST_LO: set_lo(&core->dma.dst, val); break;
	case NPU_CTL_DMA_DST_HI: set_hi(&core->dma.dst, val); break;
	case NPU_CTL_DMA_LEN: core->dma.len = val; break;
	case NPU_CTL_DMA_CTX: core->dma.ctx = val; break;
	case NPU_CTL_DMA_PATTERN: core->dma.pattern = val; break;
	case NPU_CTL_DMA_CTRL: npu_dma_start(core, val); break;
	default: break;
	}
}

/* The control block, seen only by the firmware. */
static bool ctl_read(struct npu_core *core, uint32_t off, uint32_t *val)
{
	uint64_t t;

	switch (off) {
	case NPU_CTL_EVENTS:
		update_timer(core);
		*val = core->events;
		return true;
	case NPU_CTL_TIME_LO:
		t = npu_core_time(core);
		core->fw_time_hi = hi32(t);
		*val = lo32(t);
		return true;
	case NPU_CTL_TIME_HI: *val = core->fw_time_hi; return true;
	case NPU_CTL_TIMER_CMP_LO: *val = lo32(core->timer_cmp); return true;
	case NPU_CTL_TIMER_CMP_HI: *val = hi32(core->timer_cmp); return true;
	case NPU_CTL_PERF_CYCLES_LO: *val = lo32(core->perf_cycles); return true;
	case NPU_CTL_PERF_CYCLES_HI: *val = hi32(core->perf_cycles); return true;
	case NPU_CTL_PERF_BYTES_LO: *val = lo32(core->perf_bytes); return true;
	case NPU_CTL_PERF_BYTES_HI: *val = hi32(core->perf_bytes); return true;
	case NPU_CTL_WAKE_MASK: *val = core->wake_mask; return true;
	case NPU_CTL_DMA_SRC_LO: *val = lo32(core->dma.src); return true;
	case NPU_CTL_DMA_SRC_HI: *val = hi32(core->dma.src); return true;
	case NPU_CTL_DMA_DST_LO: *val = lo32(core->dma.dst); return true;
	case NPU_CTL_DMA_DST_HI: *val = hi32(core->dma.dst); return true;
	case NPU_CTL_DMA_LEN: *val = core->dma.len; return true;
	case NPU_CTL_DMA_CTX: *val = core->dma.ctx; return true;
	case NPU_CTL_DMA_PATTERN: *val = core->dma.pattern; return true;
	case NPU_CTL_DMA_STATUS: *val = core->dma.status; return true;
	case NPU_CTL_DMA_FAULT_LO: *val = lo32(core->dma.fault); return true;
	case NPU_CTL_DMA_FAULT_HI: *val = hi32(core->dma.fault); return true;
	case NPU_CTL_TENSOR_DESC: *val = core->tensor.desc; return true;
	case NPU_CTL_TENSOR_CTX: *val = core->tensor.ctx; return true;
	case NPU_CTL_TENSOR_STATUS: *val = core->tensor.status; return true;
	case NPU_CTL_TENSOR_FAULT_LO: *val = lo32(core->tensor.fault); return true;
	case NPU_CTL_TENSOR_FAULT_HI: *val = hi32(core->tensor.fault); return true;
	case NPU_CTL_IRQ_RAISE: case NPU_CTL_DMA_CTRL: case NPU_CTL_TENSOR_CTRL:
		*val = 0;
		return true;
	default: return false;
	}
}

static bool ctl_write(struct npu_core *core, uint32_t off, uint32_t val)
{
	switch (off) {
	case NPU_CTL_EVENTS:
		core->events &= ~val;
		if (val & NPU_EV_ENGINE_RESET)
			atomic_store(&core->engine_abort, false);
		return true;
	case NPU_CTL_WAKE_MASK:
		core->wake_mask = val;
		return true;
	case NPU_CTL_IRQ_RAISE:
		/* A lost completion interrupt: neither latched nor sent. */
		if ((val & RING_IRQS) && npu_fault_take(core, NPU_FAULT_LOST_IRQ))
			val &= ~RING_IRQS;
		npu_core_raise_irq(core, val);
		return true;
	case NPU_CTL_TIMER_CMP_LO:
		set_lo(&core->timer_cmp, val);
		core->timer_armed = false;
		return true;
	case NPU_CTL_TIMER_CMP_HI:
		set_hi(&core->timer_cmp, val);
		core->timer_armed = true;
		return true;
	case NPU_CTL_DMA_SRC_LO: case NPU_CTL_DMA_SRC_HI:
	case NPU_CTL_DMA_DST_LO: case NPU_CTL_DMA_DST_HI:
	case NPU_CTL_DMA_LEN: case NPU_CTL_DMA_CTX:
	case NPU_CTL_DMA_PATTERN: case NPU_CTL_DMA_CTRL:
		if (core->dma.status != NPU_JOB_BUSY)	/* latched while busy */
			dma_reg_write(core, off, val);
		return true;
	case NPU_CTL_TENSOR_DESC: case NPU_CTL_TENSOR_CTX: case NPU_CTL_TENSOR_CTRL:
		if (core->tensor.status == NPU_JOB_BUSY)
			return true;
		if (off == NPU_CTL_TENSOR_DESC)
			core->tensor.desc = val;
		else if (off == NPU_CTL_TENSOR_CTX)
			core->tensor.ctx = val;
		else if (val == 1)
			npu_tensor_start(core);
		return true;
	case NPU_CTL_TENSOR_STATUS: case NPU_CTL_TENSOR_FAULT_LO: case NPU_CTL_TENSOR_FAULT_HI:
		return true;
	case NPU_CTL_TIME_LO: case NPU_CTL_TIME_HI:
	case NPU_CTL_PERF_CYCLES_LO: case NPU_CTL_PERF_CYCLES_HI:
	case NPU_CTL_PERF_BYTES_LO: case NPU_CTL_PERF_BYTES_HI:
	case NPU_CTL_DMA_STATUS: case NPU_CTL_DMA_FAULT_LO: case NPU_CTL_DMA_FAULT_HI:
		return true;	/* read-only: ignored */
	default:
		return false;
	}
}

static bool fw_io_read(void *opaque, uint32_t addr, uint32_t *val)
{
	struct npu_core *core = opaque;

	if (addr - NPU_CORE_HOSTREG_BASE < NPU_BAR0_SIZE) {
		*val = reg_read(core, addr - NPU_CORE_HOSTREG_BASE, true);
		return true;
	}
	if (addr - NPU_CORE_CTL_BASE < NPU_CORE_CTL_SIZE)
		return ctl_read(core, addr - NPU_CORE_CTL_BASE, val);
	return false;
}

static bool fw_io_write(void *opaque, uint32_t addr, uint32_t val)
{
	struct npu_core *core = opaque;

	if (addr - NPU_CORE_HOSTREG_BASE < NPU_BAR0_SIZE) {
		reg_write(core, addr - NPU_CORE_HOSTREG_BASE, val, true);
		return true;
	}
	if (addr - NPU_CORE_CTL_BASE < NPU_CORE_CTL_SIZE)
		return ctl_write(core, addr - NPU_CORE_CTL_BASE, val);
	return false;
}

bool npu_core_runnable(const struct npu_core *core)
{
	if (atomic_load(&core->eng.done_pending))
		return true;	/* an engine result to take in */
	if (core->status != NPU_STATUS_RUNNING || core->fw_hung)
		return false;
	if (atomic_load(&core->faults_armed) &
	    (1u << NPU_FAULT_FW_CRASH | 1u << NPU_FAULT_FW_HANG))
		return true;
	if (!core->wfi || (core->events & core->wake_mask))
		return true;
	return (core->wake_mask & NPU_EV_TIMER) && core->timer_armed &&
	       npu_core_time(core) >= core->timer_cmp;
}

uint64_t npu_core_timer_deadline(const struct npu_core *core)
{
	/* A far-future compare value (any value from the firmware) means never. */
	if (core->status != NPU_STATUS_RUNNING || core->fw_hung || !core->timer_armed ||
	    core->timer_cmp > INT64_MAX - core->time_base)
		return UINT64_MAX;
	return core->time_base + core->timer_cmp;
}

uint64_t npu_core_insns(const struct npu_core *core)
{
	return core->cpu.retired;
}

enum npu_run_state npu_core_run(struct npu_core *core, uint64_t max_insns)
{
	enum rv32_exit ex;

	npu_engine_collect(core);
	if (core->status != NPU_STATUS_RUNNING)
		return NPU_RUN_STOPPED;
	if (npu_fault_take(core, NPU_FAULT_FW_CRASH)) {
		core->status = NPU_STATUS_CRASHED;
		core->core_fault = NPU_CORE_FAULT_INJECTED;
		core->core_fault_pc = core->cpu.pc;
		core->core_fault_addr = 0;
		npu_core_raise_irq(core, 1u << NPU_IRQ_FW);
		return NPU_RUN_STOPPED;
	}
	if (npu_fault_take(core, NPU_FAULT_FW_HANG))
		core->fw_hung = true;
	if (core->fw_hung)	/* status still says running: only time tells */
		return NPU_RUN_IDLE;
	update_timer(core);
	if (core->wfi) {
		if (!(core->events & core->wake_mask))
			return NPU_RUN_IDLE;
		core->wfi = false;
	}
	core->cpu.stop_request = false;
	ex = rv32_run(&core->cpu, max_insns);
	if (core->status != NPU_STATUS_RUNNING)	/* halted or reset meanwhile */
		return NPU_RUN_STOPPED;
	switch (ex) {
	case RV32_EXIT_WFI:
		update_timer(core);
		if (core->events & core->wake_mask)
			return NPU_RUN_BUSY;	/* an event is already pending */
		core->wfi = true;
		return NPU_RUN_IDLE;
	case RV32_EXIT_FAULT:
		core->status = NPU_STATUS_CRASHED;
		core->core_fault = core->cpu.fault_cause;
		core->core_fault_pc = core->cpu.fault_pc;
		core->core_fault_addr = core->cpu.fault_addr;
		npu_core_raise_irq(core, 1u << NPU_IRQ_FW);
		return NPU_RUN_STOPPED;
	default:
		return core->status == NPU_STATUS_RUNNING ? NPU_RUN_BUSY : NPU_RUN_STOPPED;
	}
}
