/* SPDX-License-Identifier: MIT */
/*
 * npu_core_priv.h - state shared by the device core's files. Not for the
 * embedder: it uses npu_core.h.
 */
#ifndef NPU_CORE_PRIV_H
#define NPU_CORE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "npu_cmd.h"
#include "npu_core.h"
#include "npu_fw.h"
#include "npu_hw.h"
#include "npu_rv32.h"
#include "npu_wcache.h"

#define NPU_TLB_ENTRIES	64	/* direct-mapped, tagged by context and page */
#define NPU_PTE_LINE	8	/* leaf entries a walk reads at once: 64 bytes */
#define NPU_DMA_BOUNCE	(64 * 1024)
/* The most one host access of a DMA moves: a stop check between each. */
#define NPU_DMA_RUN	(1024 * 1024)

struct npu_tlb_entry {
	uint64_t vpn;		/* VA >> 12 */
	uint64_t pfn_addr;	/* bus address of the 4 KiB page */
	uint32_t ctx;
	uint32_t perm;		/* NPU_PTE_R | NPU_PTE_W; 0 = invalid entry */
};

/*
 * The MMU is used by the engine thread and configured by the host: @lock
 * guards every field. It is never held across a DMA (a table walk reads
 * guest memory without it), so a DMA that lands on the device's own
 * registers cannot deadlock.
 */
struct npu_mmu {
	pthread_mutex_t lock;
	uint32_t gen;		/* bumped by every invalidation */
	/* Per context: bumped when its translations are invalidated. */
	uint32_t ctx_gen[NPU_MAX_CONTEXTS];
	uint64_t ctx_table;
	uint32_t ctx_count;
	uint32_t fault_status;	/* NPU_MMU_FAULT_VALID | count << 16 */
	uint32_t fault_ctx;
	uint64_t fault_va;
	uint32_t fault_info;
	struct npu_tlb_entry tlb[NPU_TLB_ENTRIES];
	uint32_t inv_seq;	/* NPU_REG_MMU_INV_SEQ */
	uint32_t users;		/* engine accesses in progress (npu_mmu_use_begin) */
	uint32_t use_seq;	/* inv_seq when the oldest of them translated */
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

enum npu_eng_kind {
	NPU_ENG_DMA = 1,
	NPU_ENG_TENSOR,
	NPU_ENG_BOOT,
};

/*
 * struct npu_eng_req - one engine operation: what the control core (or the
 * host, for BOOT) asked, latched when it started, and what came of it.
 * Owned by whoever holds it: the submitter until queued, the engine thread
 * while it runs, the collector once done.
 */
struct npu_eng_req {
	uint32_t kind;			/* enum npu_eng_kind */
	uint32_t gen;			/* core->reset_gen at submit */
	bool job;			/* job work: an engine reset aborts it */
	uint32_t ctrl;			/* DMA: op and spaces */
	uint64_t src, dst;		/* DMA */
	uint32_t len, ctx, pattern;	/* DMA; ctx also for tensor ops */
	uint32_t cmd_size;		/* tensor */
	uint8_t cmd[NPU_CMD_MAX_SIZE];
	uint64_t fw_addr;		/* BOOT */
	uint32_t fw_size;
	bool corrupt;			/* NPU_FAULT_BAD_COMPLETION: invert the write */

	uint32_t status;		/* enum npu_job_status, or NPU_BOOT_* */
	uint64_t fault, bytes, cycles;
	uint32_t entry, crc;		/* BOOT */
	uint32_t irqs;			/* interrupts to raise when collected */
	uint64_t mem_used;		/* host bytes charged to this command */
	uint64_t macs_used;
	uint64_t moved;			/* bytes its DMA moved (a failed op's cost) */
	uint64_t work;			/* npu_eng_work() units since its last check */
	bool late;			/* ended after the VM stopped (parking asked) */
};

/*
 * struct npu_engine - the engine thread and its two slots. @lock guards
 * the slots and flags; the request in @run belongs to the thread while
 * @running. Stale requests (reset_gen moved on) are dropped, not applied.
 */
struct npu_engine {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* queued, finished, or stopping */
	bool stopping;
	bool queued_valid, running, done_valid;
	struct npu_eng_req queued, run, done;
	atomic_bool done_pending;	/* done_valid, readable without the lock */
	bool hung;			/* NPU_FAULT_ENGINE_HANG: waiting for a reset */
	struct npu_eng_req hung_req;
	uint8_t *bounce;		/* DMA staging buffer of the thread */
	atomic_bool paused;		/* npu_core_pause(): start nothing */
	atomic_bool park;		/* ... and park the running op at its next check */
	atomic_bool saving;		/* npu_core_save(): the running op stops */
	unsigned int parked;		/* threads parked there (under @lock) */
};

struct npu_core {
	struct npu_core_config cfg;
	const struct npu_core_ops *ops;
	void *opaque;

	uint8_t *sram;
	/*
	 * Guards engine writes to SRAM against a reset clearing it; the
	 * control core itself does not take it (it waits while its engine
	 * runs).
	 */
	pthread_mutex_t sram_lock;
	struct rv32_cpu cpu;
	bool wfi;
	uint32_t wake_mask;		/* NPU_CTL_WAKE_MASK */

	/* Host-visible state (BAR0). */
	uint32_t status;
	uint32_t boot_status;
	uint32_t core_fault, core_fault_pc, core_fault_addr;
	uint64_t fw_addr;
	uint32_t fw_size;
	uint64_t boot_params;
	uint32_t irq_status, irq_mask;
	uint32_t host_time_hi;		/* latched by a TIME_LO read */
	uint32_t fw_regs[NPU_CORE_FW_REGS];	/* FW_STATUS .. */
	struct npu_ring_regs ring[NPU_NUM_RINGS];
	struct npu_mmu mmu;

	/* Control-core private state. */
	uint32_t events;
	uint64_t timer_cmp;
	bool timer_armed;
	uint32_t fw_time_hi;
	atomic_bool engine_abort;	/* set by ENGINE_RESET until acked */
	struct npu_dma_regs dma;
	struct npu_tensor_regs tensor;
	uint64_t perf_cycles, perf_bytes;
	struct npu_engine eng;
	struct npu_wcache wcache;	/* the engine thread's (npu_wcache.c) */

	uint64_t time_base;		/* now_ns() at reset */
	/*
	 * Bumped by every reset, halt and boot. A DMA or MSI-X write of the
	 * device may land on its own config space and reset it (FLR) in the
	 * middle of an operation; whoever sees the generation change stops
	 * touching state, and engine results of an older generation are
	 * dropped.
	 */
	atomic_uint reset_gen;

	/* Fault injection: armed kinds (bit n: enum npu_fault n), a hung core. */
	atomic_uint faults_armed;
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
	if (!(atomic_load(&core->faults_armed) & (1u << kind)))
		return false;
	return atomic_fetch_and(&core->faults_armed, ~(1u << kind)) & (1u << kind);
}
void npu_core_raise_irq(struct npu_core *core, uint32_t bits);

/* Tell the embedder (struct npu_core_ops.event), if it listens. */
static inline void npu_trace(struct npu_core *core, unsigned int kind, uint64_t a, uint64_t b,
			     uint64_t c)
{
	if (core->ops->event)
		core->ops->event(core->opaque, kind, a, b, c);
}
/* CTRL.BOOT: the boot ROM loads the image at fw_addr on the engine thread. */
void npu_core_boot(struct npu_core *core);
/* The boot ROM's load (@r) has ended: start the core or report the failure. */
void npu_core_boot_done(struct npu_core *core, const struct npu_eng_req *r);

/* npu_engine.c */
int npu_engine_init(struct npu_core *core);
void npu_engine_fini(struct npu_core *core);
/*
 * Move reset_gen on: the running operation stops at its next check (a
 * parked one too) and one queued is dropped, even behind a paused engine,
 * so that waiting for the engine afterwards ends.
 */
void npu_engine_drop(struct npu_core *core);
/*
 * Start @req (its kind and operands filled in); the status reads BUSY
 * until it ends (a small DMA may end before this returns: run inline).
 */
void npu_engine_submit(struct npu_core *core, struct npu_eng_req *req);
/* Whether the calling thread runs @core's engine operation (its thread, or inline). */
bool npu_engine_in_op(const struct npu_core *core);
/* Apply an ended operation to the registers; raise its event and interrupts. */
void npu_engine_collect(struct npu_core *core);
/* npu_core_save(): stop a running operation; the engines' work into @st. */
void npu_engine_save(struct npu_core *core, struct npu_core_state *st);
/* npu_core_load(): the engines' work of @st (checked by the caller) back. */
void npu_engine_load(struct npu_core *core, const struct npu_core_state *st);
/* ENGINE_RESET: a hung operation ends now, aborted. */
void npu_engine_reset(struct npu_core *core);
/*
 * On the engine thread (or a GEMM or element-wise worker of it): should
 * the running operation stop now?
 */
bool npu_eng_stop(struct npu_core *core);
/*
 * On the engine thread, in a loop whose steps cost different amounts: @n
 * units of work (about a simple operation each, a nanosecond) were done;
 * should the operation stop? Checks once per NPU_ENG_WORK_CHECK units, so
 * about every 65 us of work whatever the shape. One thread only.
 */
#define NPU_ENG_WORK_CHECK	(1u << 16)
static inline bool npu_eng_work(struct npu_core *core, uint64_t n)
{
	struct npu_eng_req *r = &core->eng.run;

	r->work += n;
	if (r->work < NPU_ENG_WORK_CHECK)
		return false;
	r->work = 0;
	return npu_eng_stop(core);
}
/* The same for struct npu_gemm_args.stop (@arg: the core). */
bool npu_eng_stop_cb(void *arg);
/* The most helper threads a command's rows are shared among. */
#define NPU_ENG_MAX_THREADS	16
/*
 * How many of the engine's threads share @n items: one unless @worth (the
 * work pays for a wake-up), else engine_threads, at most
 * NPU_ENG_MAX_THREADS and @n.
 */
uint32_t npu_eng_threads(const struct npu_core *core, bool worth, uint64_t n);
/*
 * Items [0, @n) in @threads (npu_eng_threads()) ranges of about equal size,
 * on the engine's helper threads: @fn(@arg, t, i0, i1) for range t (which
 * may pick a scratch area of its own); it checks npu_eng_stop() as it goes
 * and returns false when told to stop. True if every range finished.
 */
bool npu_eng_split(uint64_t n, uint32_t threads,
		   bool (*fn)(void *arg, uint32_t t, uint64_t i0, uint64_t i1), void *arg);
/*
 * On the engine thread: allocate @n bytes charged to the running command,
 * or NULL (status NPU_JOB_LIMIT) when it would pass cmd_mem_mib.
 */
void *npu_eng_alloc(struct npu_core *core, uint64_t n);
void *npu_eng_calloc(struct npu_core *core, uint64_t count, uint64_t size);
/* Charge @n bytes to the running command; false, remembered as LIMIT, when over. */
bool npu_eng_reserve(struct npu_core *core, uint64_t n);
/*
 * struct npu_gemm_args.reserve (@arg: the core): @n bytes of a kernel's
 * packing, freed when it returns, must fit beside what the command holds.
 */
bool npu_eng_reserve_cb(void *arg, uint64_t n);
/* Charge @macs multiply-accumulates to the running command; false if over. */
bool npu_eng_charge_macs(struct npu_core *core, uint64_t macs);
/* NPU_JOB_LIMIT if the running command passed a budget, else @st. */
uint32_t npu_eng_status(struct npu_core *core, uint32_t st);

/* npu_mmu.c */
void npu_mmu_init(struct npu_mmu *mmu);
void npu_mmu_reset(struct npu_mmu *mmu);
void npu_mmu_invalidate(struct npu_mmu *mmu, uint32_t ctx);
/*
 * Around an engine access through translations (a translate and the bus
 * access it leads to): invalidations requested meanwhile complete only at
 * the end (NPU_REG_MMU_INV_DONE).
 */
void npu_mmu_use_begin(struct npu_mmu *mmu);
void npu_mmu_use_end(struct npu_mmu *mmu);
/*
 * How many times context @ctx's translations were invalidated (mod 2^32):
 * what the engine kept of that context is stale once it moves.
 */
uint32_t npu_mmu_ctx_gen(struct npu_mmu *mmu, uint32_t ctx);
/*
 * Translate @va in @ctx for @access (NPU_MMU_ACCESS_*). On success returns
 * NPU_MMU_FAULT_NONE, sets *@pa and *@avail (bytes from @va to the end of
 * the page). On failure latches the fault record, raises NPU_IRQ_MMU and
 * returns the reason.
 */
uint32_t npu_mmu_translate(struct npu_core *core, uint32_t ctx, uint64_t va,
			   unsigned int access, uint64_t *pa, uint64_t *avail);

/*
 * After a translation of @va to @pa with @n bytes of its page left: how
 * many bytes from @va (at most @max) lie contiguous at @pa, the pages that
 * follow looked up without reporting faults. A large page is one run.
 */
uint64_t npu_mmu_run(struct npu_core *core, uint32_t ctx, uint64_t va, unsigned int access,
		     uint64_t pa, uint64_t n, uint64_t max);

/* npu_dma.c: start the operation programmed in core->dma (DMA_CTRL write). */
void npu_dma_start(struct npu_core *core, uint32_t ctrl);
/* On the engine thread: run a DMA request; sets its status and fault. */
void npu_dma_exec(struct npu_core *core, struct npu_eng_req *req);
/*
 * Read or write @len bytes at device VA @va of @ctx through the MMU, for
 * the engines. Returns enum npu_job_status; *@fault gets the failing VA.
 */
uint32_t npu_va_rw(struct npu_core *core, uint32_t ctx, uint64_t va, void *buf,
		   uint64_t len, bool write, uint64_t *fault);

/* npu_tensor.c: start the tensor command at core->tensor.desc. */
void npu_tensor_start(struct npu_core *core);
/* Whether the tensor engine has a handler for opcode @op. */
bool npu_tensor_has_op(uint32_t op);
/* On the engine thread: run a tensor request. */
void npu_tensor_exec(struct npu_core *core, struct npu_eng_req *req);

/*
 * npu_bootrom.c, on the engine thread: validate the image of @req and load
 * it into SRAM; sets req->status (enum npu_boot_status), entry and crc.
 */
void npu_bootrom_load(struct npu_core *core, struct npu_eng_req *req);

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
