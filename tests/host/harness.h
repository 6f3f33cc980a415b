/* SPDX-License-Identifier: MIT */
/*
 * harness.h - drives an NPU the way a driver would: firmware boot, page
 * tables, rings and jobs, in a flat region of "host memory".
 *
 * Two backends: the device core run on the host (h_init: memory from the
 * heap, a fake clock the test advances, counted interrupts), or the real
 * QEMU device from inside the guest (h_init_device: BAR0 mapped through
 * sysfs, memory a physically contiguous region reserved at boot).
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu_cmd.h"
#include "npu_core.h"
#include "npu_fw.h"
#include "npu_hw.h"

#define H_RAM_BASE	0x100000000ull	/* host backend: bus addresses above 4 GiB */
#define H_RAM_SIZE	(64u << 20)

struct harness {
	struct npu_core *core;		/* host backend */
	struct npu_core_config cfg;	/* what it was made with */
	/*
	 * QEMU's big lock, for the host backend: held around every call into
	 * the core, and taken by a DMA of the engine thread that lands on
	 * "MMIO" (reset_on_write). Recursive: a reset from the test's own
	 * thread happens inside a call that holds it.
	 */
	pthread_mutex_t bql;
	volatile uint32_t *bar;		/* device backend */
	uint8_t *ram;
	uint64_t ram_base;		/* bus address of ram[0] */
	uint64_t ram_size;
	uint64_t brk;			/* bump allocator, bus address */
	uint64_t now;			/* fake clock, ns */
	unsigned int msi[NPU_NUM_VECTORS];
	uint64_t dma_fail_addr;		/* DMA touching this address fails */
	uint64_t reset_on_write;	/* a DMA write here resets the device (FLR) */
	bool reset_on_msi;		/* so does any MSI-X message */
	/* Called on the engine thread inside each DMA, before it moves data. */
	void (*on_dma)(struct harness *h, uint64_t addr, size_t len, bool write);

	/* Set by h_boot() */
	uint64_t log_addr;
	uint32_t log_size;
	uint64_t ctx_table;
	uint64_t pt_root[8];		/* per context */
	uint64_t ring_base[NPU_NUM_RINGS], ring_cmpl[NPU_NUM_RINGS];
	uint32_t ring_size[NPU_NUM_RINGS];
	uint32_t tail[NPU_NUM_RINGS];	/* queued, maybe not yet rung */
};

void h_init(struct harness *h);
void h_init_cfg(struct harness *h, const struct npu_core_config *cfg);
/* The same with @ram_size bytes of host memory instead of H_RAM_SIZE. */
void h_init_ram(struct harness *h, const struct npu_core_config *cfg, uint64_t ram_size);
void h_init_device(struct harness *h, volatile uint32_t *bar, void *ram,
		   uint64_t ram_base, uint64_t ram_size);
void h_fini(struct harness *h);
/*
 * Host backend: start over with a fresh device, the real firmware booted,
 * @contexts MMU contexts and ring 0 of @entries (a test's usual setup).
 */
void h_start(struct harness *h, unsigned int contexts, uint32_t entries);

uint64_t h_alloc(struct harness *h, uint64_t size, uint64_t align);
void *h_ptr(struct harness *h, uint64_t bus);

uint32_t h_rd(struct harness *h, uint32_t reg);
void h_wr(struct harness *h, uint32_t reg, uint32_t val);

/*
 * Host backend: run the core until it idles or stops (time frozen).
 * Device backend: wait a moment for the device.
 */
enum npu_run_state h_run(struct harness *h);
/* Host backend: one npu_core_run() of at most @insns, under the lock. */
enum npu_run_state h_run_once(struct harness *h, uint64_t insns);
/*
 * Host backend: run the core through @n engine operations exactly (each
 * call runs the firmware until it waits, then lets the engine finish), so
 * a test can stop a job at a known point.
 */
void h_step_engine(struct harness *h, unsigned int n);
/*
 * h_start() with every DMA on the engine thread (dma_inline_max 0), so
 * that h_step_engine() counts the job's small ones too.
 */
void h_start_stepped(struct harness *h, unsigned int contexts, uint32_t entries);
/*
 * Wait until the engine runs the operation the firmware queued (busy is
 * also true while it is only queued, which a pause or a save then leaves
 * to start again); false if it never does.
 */
bool h_wait_running(struct harness *h);
/* Advance the clock by @ns, in steps that let timers fire, running the core. */
void h_advance(struct harness *h, uint64_t ns);

/*
 * Host backend: migrate the device as QEMU does, onto a new core beside
 * the same memory: the VM stops (the engines pause, draining nothing),
 * the state and SRAM are taken, @edit (if any) changes the state in
 * flight, a new core is reset and given them, the old one freed, and the
 * VM runs again. Returns npu_core_load()'s result.
 */
int h_migrate(struct harness *h, void (*edit)(struct npu_core_state *st));

/* Read a file into harness memory; returns its bus address, size in *len. */
uint64_t h_load_file(struct harness *h, const char *path, uint32_t *len);
const char *h_fw_path(void);

/* Load the real firmware and boot it; returns NPU_BOOT_* and leaves it ready. */
uint32_t h_boot_image(struct harness *h, uint64_t addr, uint32_t len);
uint32_t h_boot(struct harness *h);

/* Address spaces: context table with @n contexts, each with empty tables. */
void h_mmu_setup(struct harness *h, unsigned int n);
/*
 * Map [va, va+size) to fresh memory (or @pa if non-zero) and invalidate the
 * context's TLB entries, as a driver must; returns the bus address.
 */
uint64_t h_map(struct harness *h, unsigned int ctx, uint64_t va, uint64_t size,
	       uint64_t perm, uint64_t pa);
/* The level-0 entry that maps @va (tables must exist). */
uint64_t *h_pte(struct harness *h, unsigned int ctx, uint64_t va);
/* Map one large page at @level (1: 2 MiB, 2: 1 GiB) to @pa. */
void h_map_large(struct harness *h, unsigned int ctx, uint64_t va, int level,
		 uint64_t pa, uint64_t perm);

void h_ring_setup(struct harness *h, unsigned int r, uint32_t entries);
/* Queue a job at TAIL without ringing the doorbell; returns its index. */
uint32_t h_queue(struct harness *h, unsigned int r, const struct npu_job_desc *d);
void h_doorbell(struct harness *h, unsigned int r);
/* Queue, ring, run until HEAD passes it; returns its completion record. */
struct npu_job_cmpl h_submit(struct harness *h, unsigned int r, const struct npu_job_desc *d);
struct npu_job_cmpl *h_cmpl(struct harness *h, unsigned int r, uint32_t idx);

/* Build a command buffer in @ctx at @va from @len bytes of @cmds. */
void h_cmdbuf(struct harness *h, unsigned int ctx, uint64_t va, const void *cmds, size_t len);
struct npu_job_cmpl h_run_cmds(struct harness *h, unsigned int ctx, uint64_t va,
			       const void *cmds, size_t len);

/*
 * The copy fixture of the fault and migration tests, in context 0: 4 KiB
 * of 0x5a at H_COPY_SRC, copied to H_COPY_DST by one DMA_COPY command
 * built at H_COPY_CMD.
 */
#define H_COPY_SRC	0x100000ull
#define H_COPY_DST	0x800000ull
#define H_COPY_CMD	0x10000ull
/* Map the source (filled) and the destination. */
void h_copy_map(struct harness *h);
/* Clear the destination, run the copy; its completion. */
struct npu_job_cmpl h_copy_job(struct harness *h);
/* The last copy landed whole. */
bool h_copied(struct harness *h);

/* The firmware log as a NUL-terminated string (static buffer). */
const char *h_log(struct harness *h);

/* Copy bytes at device VA of @ctx (through our own walk of the tables). */
void *h_va(struct harness *h, unsigned int ctx, uint64_t va);

/*
 * The heaviest average pool the default budgets allow: 256x256x32 int8 at
 * @in over 48x48 windows into 209x209x32 at @out (3.2e9 adds, seconds).
 */
struct npu_cmd_pool_i8 h_heavy_pool(uint64_t in, uint64_t out);

#endif /* HARNESS_H */
