// SPDX-License-Identifier: MIT
/* harness.c - see harness.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static int h_dma(struct harness *h, uint64_t addr, size_t len, uint8_t **p)
{
	if (addr < h->ram_base || addr - h->ram_base > h->ram_size ||
	    h->ram_size - (addr - h->ram_base) < len)
		return -1;
	if (h->dma_fail_addr && h->dma_fail_addr >= addr && h->dma_fail_addr < addr + len)
		return -1;
	*p = h->ram + (addr - h->ram_base);
	return 0;
}

static int h_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
	struct harness *h = opaque;
	uint8_t *p;

	if (h_dma(h, addr, len, &p))
		return -1;
	if (h->on_dma)
		h->on_dma(h, addr, len, false);
	memcpy(buf, p, len);
	return 0;
}

static int h_dma_write(void *opaque, uint64_t addr, const void *buf, size_t len)
{
	struct harness *h = opaque;
	uint8_t *p;

	if (h->reset_on_write && h->reset_on_write >= addr && h->reset_on_write < addr + len) {
		/* As a write to our own FLR bit: MMIO, under the big lock. */
		pthread_mutex_lock(&h->bql);
		npu_core_reset(h->core);
		pthread_mutex_unlock(&h->bql);
		return 0;
	}
	if (h_dma(h, addr, len, &p))
		return -1;
	if (h->on_dma)
		h->on_dma(h, addr, len, true);
	memcpy(p, buf, len);
	return 0;
}

static void h_msi(void *opaque, unsigned int vector)
{
	struct harness *h = opaque;

	if (vector >= NPU_NUM_VECTORS)
		abort();
	h->msi[vector]++;
	if (h->reset_on_msi)
		npu_core_reset(h->core);
}

static uint64_t h_now(void *opaque)
{
	return ((struct harness *)opaque)->now;
}

static const struct npu_core_ops h_ops = {
	.dma_read = h_dma_read,
	.dma_write = h_dma_write,
	.msi = h_msi,
	.now_ns = h_now,
};

void h_init(struct harness *h)
{
	struct npu_core_config cfg;

	npu_core_default_config(&cfg);
	h_init_cfg(h, &cfg);
}

static void h_lock_init(struct harness *h)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&h->bql, &a);
	pthread_mutexattr_destroy(&a);
}

void h_init_cfg(struct harness *h, const struct npu_core_config *cfg)
{
	h_init_ram(h, cfg, H_RAM_SIZE);
}

/*
 * The last harness's RAM, kept for the next of the same size: a test
 * starts a fresh device hundreds of times, and under ASan a new 64 MiB
 * block costs its shadow's poisoning and a page fault per page, its free
 * the quarantine's: half of test_tensor's time. Reused, it is zeroed.
 */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *spare_ram;
static uint64_t spare_size;

static uint8_t *ram_get(uint64_t size)
{
	uint8_t *ram = NULL;

	pthread_mutex_lock(&spare_lock);
	if (spare_ram && spare_size == size) {
		ram = spare_ram;
		spare_ram = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
	if (ram)
		memset(ram, 0, size);
	return ram ? ram : calloc(1, size);
}

static void ram_put(uint8_t *ram, uint64_t size)
{
	pthread_mutex_lock(&spare_lock);
	if (!spare_ram) {
		spare_ram = ram;
		spare_size = size;
		ram = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
	free(ram);
}

void h_init_ram(struct harness *h, const struct npu_core_config *cfg, uint64_t ram_size)
{
	const char *cov;

	memset(h, 0, sizeof(*h));
	h_lock_init(h);
	h->ram = ram_get(ram_size);
	h->ram_base = H_RAM_BASE;
	h->ram_size = ram_size;
	h->brk = H_RAM_BASE + NPU_PAGE_SIZE;	/* bus address 0 of RAM unused */
	h->now = 1000000;
	h->cfg = *cfg;
	h->core = npu_core_new(cfg, &h_ops, h);
	if (!h->ram || !h->core) {
		fprintf(stderr, "harness: out of memory\n");
		exit(1);
	}
	/* make coverage: mark what the firmware executes (npu_pctrace.c). */
	cov = getenv("NPU_FW_COVERAGE");
	if (cov && *cov && npu_core_trace_pcs(h->core, cov)) {
		fprintf(stderr, "harness: NPU_FW_COVERAGE=%s is not a coverage map\n", cov);
		exit(1);
	}
	h_wr(h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
}

void h_init_device(struct harness *h, volatile uint32_t *bar, void *ram,
		   uint64_t ram_base, uint64_t ram_size)
{
	memset(h, 0, sizeof(*h));
	h_lock_init(h);
	h->bar = bar;
	h->ram = ram;
	h->ram_base = ram_base;
	h->ram_size = ram_size;
	h->brk = ram_base;
	h_wr(h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
}

int h_migrate(struct harness *h, void (*edit)(struct npu_core_state *st))
{
	struct npu_core_state st;
	struct npu_core *dst;
	uint8_t *sram;
	int rc;

	/*
	 * The VM stops first, as QEMU's migration stops it before it saves:
	 * making the destination before (a new core, its SRAM) gave a running
	 * operation that much longer to end on its own, which on a loaded host
	 * it sometimes did.
	 */
	pthread_mutex_lock(&h->bql);
	npu_core_pause(h->core, true, 0);
	pthread_mutex_unlock(&h->bql);
	sram = malloc(h->cfg.sram_size);
	if (!sram || !(dst = npu_core_new(&h->cfg, &h_ops, h))) {
		fprintf(stderr, "harness: out of memory\n");
		exit(1);
	}
	pthread_mutex_lock(&h->bql);
	npu_core_save(h->core, &st);
	memcpy(sram, npu_core_sram(h->core), h->cfg.sram_size);
	pthread_mutex_unlock(&h->bql);
	npu_core_free(h->core);
	if (edit)
		edit(&st);
	pthread_mutex_lock(&h->bql);
	h->core = dst;
	npu_core_pause(dst, true, 0);
	npu_core_reset(dst);
	memcpy(npu_core_sram(dst), sram, h->cfg.sram_size);
	rc = npu_core_load(dst, &st);
	npu_core_pause(dst, false, 0);
	pthread_mutex_unlock(&h->bql);
	free(sram);
	return rc;
}

void h_fini(struct harness *h)
{
	if (h->bar)
		return;		/* the caller owns the mappings */
	npu_core_free(h->core);	/* joins the engine thread */
	h->core = NULL;
	if (h->ram)
		ram_put(h->ram, h->ram_size);
	h->ram = NULL;
	pthread_mutex_destroy(&h->bql);
}

static void h_start_cfg(struct harness *h, const struct npu_core_config *cfg,
			unsigned int contexts, uint32_t entries)
{
	h_fini(h);
	h_init_cfg(h, cfg);
	if (h_boot(h) != NPU_BOOT_OK)
		printf("#   boot failed\n");
	h_mmu_setup(h, contexts);
	h_ring_setup(h, 0, entries);
}

void h_start(struct harness *h, unsigned int contexts, uint32_t entries)
{
	struct npu_core_config cfg;

	npu_core_default_config(&cfg);
	h_start_cfg(h, &cfg, contexts, entries);
}

void h_start_stepped(struct harness *h, unsigned int contexts, uint32_t entries)
{
	struct npu_core_config cfg;

	npu_core_default_config(&cfg);
	cfg.dma_inline_max = 0;
	h_start_cfg(h, &cfg, contexts, entries);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Device backend: poll @reg until (value & mask) == want, up to 10 s. */
static bool h_poll(struct harness *h, uint32_t reg, uint32_t mask, uint32_t want)
{
	for (int i = 0; i < 100000; i++) {
		if ((h_rd(h, reg) & mask) == want)
			return true;
		sleep_us(100);
	}
	return false;
}

uint64_t h_alloc(struct harness *h, uint64_t size, uint64_t align)
{
	uint64_t a = (h->brk + align - 1) & ~(align - 1);

	if (a + size > h->ram_base + h->ram_size) {
		fprintf(stderr, "harness: RAM exhausted\n");
		exit(1);
	}
	h->brk = a + size;
	memset(h_ptr(h, a), 0, size);
	return a;
}

void *h_ptr(struct harness *h, uint64_t bus)
{
	return h->ram + (bus - h->ram_base);
}

uint32_t h_rd(struct harness *h, uint32_t reg)
{
	uint32_t v;

	if (h->bar)
		return h->bar[reg / 4];
	pthread_mutex_lock(&h->bql);
	v = npu_core_mmio_read(h->core, reg);
	pthread_mutex_unlock(&h->bql);
	return v;
}

void h_wr(struct harness *h, uint32_t reg, uint32_t val)
{
	if (h->bar) {
		h->bar[reg / 4] = val;
		return;
	}
	pthread_mutex_lock(&h->bql);
	npu_core_mmio_write(h->core, reg, val);
	pthread_mutex_unlock(&h->bql);
}

enum npu_run_state h_run_once(struct harness *h, uint64_t insns)
{
	enum npu_run_state st;

	pthread_mutex_lock(&h->bql);
	st = npu_core_run(h->core, insns);
	pthread_mutex_unlock(&h->bql);
	return st;
}

void h_step_engine(struct harness *h, unsigned int n)
{
	while (n--) {
		h_run_once(h, UINT64_MAX / 2);	/* to the next wait (or idle) */
		npu_core_engine_wait(h->core);
	}
	h_run_once(h, UINT64_MAX / 2);		/* take the last one in */
}

bool h_wait_running(struct harness *h)
{
	/* The engine thread takes a queued op when the scheduler lets it: 10 s at most. */
	for (int i = 0; i < 100000; i++) {
		if (npu_core_engine_running(h->core))
			return true;
		sleep_us(100);
	}
	return false;
}

enum npu_run_state h_run(struct harness *h)
{
	enum npu_run_state st = NPU_RUN_BUSY;

	if (h->bar) {
		sleep_us(1000);
		return NPU_RUN_IDLE;
	}
	for (int i = 0; i < 100000; i++) {
		st = h_run_once(h, 100000);
		if (st == NPU_RUN_BUSY)
			continue;
		/* Idle or stopped: done, unless an engine op is still to end. */
		if (!npu_core_engine_busy(h->core) && !npu_core_runnable(h->core))
			break;
		npu_core_engine_wait(h->core);
	}
	return st;
}

void h_advance(struct harness *h, uint64_t ns)
{
	uint64_t end = h->now + ns;

	for (;;) {
		uint64_t dl;

		h_run(h);
		dl = npu_core_timer_deadline(h->core);
		if (dl > end || dl < h->now)
			break;
		h->now = dl;
	}
	h->now = end;
	h_run(h);
}

const char *h_fw_path(void)
{
	const char *p = getenv("NPU_FW");

	return p ? p : "build/firmware/npu-fw.bin";
}

uint64_t h_load_file(struct harness *h, const char *path, uint32_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;
	uint64_t a;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "harness: cannot read %s (set NPU_FW)\n", path);
		exit(1);
	}
	a = h_alloc(h, (uint64_t)n, 4096);
	if (fread(h_ptr(h, a), 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "harness: short read of %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (uint32_t)n;
	return a;
}

uint32_t h_boot_image(struct harness *h, uint64_t addr, uint32_t len)
{
	struct npu_boot_params *bp;
	uint64_t bpa;

	if (!h->log_addr) {
		h->log_size = 16384;
		h->log_addr = h_alloc(h, h->log_size, 4096);
	}
	bpa = h_alloc(h, sizeof(*bp), 64);
	bp = h_ptr(h, bpa);
	bp->magic = NPU_BOOT_PARAMS_MAGIC;
	bp->version = NPU_BOOT_PARAMS_VERSION;
	bp->size = sizeof(*bp);
	bp->log_addr = h->log_addr;
	bp->log_size = h->log_size;
	bp->heartbeat_ms = 10;

	h_wr(h, NPU_REG_FW_ADDR_LO, (uint32_t)addr);
	h_wr(h, NPU_REG_FW_ADDR_HI, (uint32_t)(addr >> 32));
	h_wr(h, NPU_REG_FW_SIZE, len);
	h_wr(h, NPU_REG_BOOT_PARAMS_LO, (uint32_t)bpa);
	h_wr(h, NPU_REG_BOOT_PARAMS_HI, (uint32_t)(bpa >> 32));
	h_wr(h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	if (h->bar) {
		/* Wait for the boot ROM, then for the firmware's handshake. */
		h_poll(h, NPU_REG_BOOT_STATUS, ~0u, NPU_BOOT_OK);
		if (h_rd(h, NPU_REG_BOOT_STATUS) == NPU_BOOT_OK)
			h_poll(h, NPU_REG_FW_STATUS, 2, 2); /* READY or ERROR */
	} else {
		h_run(h);
	}
	return h_rd(h, NPU_REG_BOOT_STATUS);
}

uint32_t h_boot(struct harness *h)
{
	uint32_t len;
	uint64_t a = h_load_file(h, h_fw_path(), &len);

	return h_boot_image(h, a, len);
}

void h_mmu_setup(struct harness *h, unsigned int n)
{
	struct npu_ctx_entry *ce;

	h->ctx_table = h_alloc(h, 4096, 4096);
	ce = h_ptr(h, h->ctx_table);
	for (unsigned int i = 0; i < n && i < 8; i++) {
		h->pt_root[i] = h_alloc(h, 4096, 4096);
		ce[i].pt_root = h->pt_root[i];
		ce[i].flags = NPU_CTX_VALID;
	}
	h_wr(h, NPU_REG_MMU_CTX_TABLE_LO, (uint32_t)h->ctx_table);
	h_wr(h, NPU_REG_MMU_CTX_TABLE_HI, (uint32_t)(h->ctx_table >> 32));
	h_wr(h, NPU_REG_MMU_CTX_COUNT, n);
}

/* Entry for @va at @level, creating tables above it. */
static uint64_t *pte_at(struct harness *h, unsigned int ctx, uint64_t va, int level)
{
	uint64_t table = h->pt_root[ctx];

	for (int l = NPU_PT_LEVELS - 1; ; l--) {
		uint64_t *e = (uint64_t *)h_ptr(h, table) + ((va >> (12 + 9 * l)) & 511);

		if (l == level)
			return e;
		if (!(*e & NPU_PTE_V))
			*e = h_alloc(h, 4096, 4096) | NPU_PTE_V;
		table = *e & NPU_PTE_ADDR_MASK;
	}
}

uint64_t h_map(struct harness *h, unsigned int ctx, uint64_t va, uint64_t size,
	       uint64_t perm, uint64_t pa)
{
	uint64_t first;

	size = (size + 4095) & ~4095ull;
	if (!pa)
		pa = h_alloc(h, size, 4096);
	first = pa;
	for (uint64_t off = 0; off < size; off += 4096)
		*pte_at(h, ctx, va + off, 0) = (pa + off) | NPU_PTE_V | perm;
	h_wr(h, NPU_REG_MMU_INVALIDATE, ctx);
	return first;
}

uint64_t *h_pte(struct harness *h, unsigned int ctx, uint64_t va)
{
	return pte_at(h, ctx, va, 0);
}

void h_map_large(struct harness *h, unsigned int ctx, uint64_t va, int level,
		 uint64_t pa, uint64_t perm)
{
	*pte_at(h, ctx, va, level) = pa | NPU_PTE_V | perm;
	h_wr(h, NPU_REG_MMU_INVALIDATE, ctx);
}

void *h_va(struct harness *h, unsigned int ctx, uint64_t va)
{
	uint64_t table = h->pt_root[ctx];

	for (int l = NPU_PT_LEVELS - 1; l >= 0; l--) {
		uint64_t e = *((uint64_t *)h_ptr(h, table) + ((va >> (12 + 9 * l)) & 511));
		uint64_t mask = (1ull << (12 + 9 * l)) - 1;

		if (!(e & NPU_PTE_V))
			return NULL;
		if (e & (NPU_PTE_R | NPU_PTE_W))
			return h_ptr(h, (e & NPU_PTE_ADDR_MASK) + (va & mask));
		table = e & NPU_PTE_ADDR_MASK;
	}
	return NULL;
}

void h_ring_setup(struct harness *h, unsigned int r, uint32_t entries)
{
	h->ring_size[r] = entries;
	h->ring_base[r] = h_alloc(h, (uint64_t)entries * sizeof(struct npu_job_desc), 4096);
	h->ring_cmpl[r] = h_alloc(h, (uint64_t)entries * sizeof(struct npu_job_cmpl), 4096);
	h_wr(h, NPU_RING_REG(r, NPU_RING_BASE_LO), (uint32_t)h->ring_base[r]);
	h_wr(h, NPU_RING_REG(r, NPU_RING_BASE_HI), (uint32_t)(h->ring_base[r] >> 32));
	h_wr(h, NPU_RING_REG(r, NPU_RING_CMPL_LO), (uint32_t)h->ring_cmpl[r]);
	h_wr(h, NPU_RING_REG(r, NPU_RING_CMPL_HI), (uint32_t)(h->ring_cmpl[r] >> 32));
	h_wr(h, NPU_RING_REG(r, NPU_RING_SIZE), entries);
	h->tail[r] = 0;
}

uint32_t h_queue(struct harness *h, unsigned int r, const struct npu_job_desc *d)
{
	struct npu_job_desc *ring = h_ptr(h, h->ring_base[r]);

	ring[h->tail[r] & (h->ring_size[r] - 1)] = *d;
	return h->tail[r]++;
}

void h_doorbell(struct harness *h, unsigned int r)
{
	h_wr(h, NPU_RING_REG(r, NPU_RING_TAIL), h->tail[r]);
}

struct npu_job_cmpl *h_cmpl(struct harness *h, unsigned int r, uint32_t idx)
{
	struct npu_job_cmpl *c = h_ptr(h, h->ring_cmpl[r]);

	return &c[idx & (h->ring_size[r] - 1)];
}

struct npu_job_cmpl h_submit(struct harness *h, unsigned int r, const struct npu_job_desc *d)
{
	uint32_t idx;

	idx = h_queue(h, r, d);
	h_doorbell(h, r);
	if (h->bar)
		h_poll(h, NPU_RING_REG(r, NPU_RING_HEAD), ~0u, idx + 1);
	else
		h_run(h);
	if (h_rd(h, NPU_RING_REG(r, NPU_RING_HEAD)) != idx + 1) {
		struct npu_job_cmpl none = { .status = 0xdead };

		return none;
	}
	return *h_cmpl(h, r, idx);
}

void h_cmdbuf(struct harness *h, unsigned int ctx, uint64_t va, const void *cmds, size_t len)
{
	h_map(h, ctx, va, len, NPU_PTE_R, 0);
	for (size_t i = 0; i < len; i++)
		*(uint8_t *)h_va(h, ctx, va + i) = ((const uint8_t *)cmds)[i];
}

struct npu_job_cmpl h_run_cmds(struct harness *h, unsigned int ctx, uint64_t va,
			       const void *cmds, size_t len)
{
	struct npu_job_desc d = {
		.job_id = 0x1000 + va, .cmd_va = va, .cmd_size = (uint32_t)len, .ctx_id = ctx,
	};

	h_cmdbuf(h, ctx, va, cmds, len);
	return h_submit(h, 0, &d);
}

const char *h_log(struct harness *h)
{
	static char buf[65536];
	uint32_t w = h_rd(h, NPU_REG_FW_LOG_WPTR);
	uint32_t n = w < h->log_size ? w : h->log_size;
	const uint8_t *log = h_ptr(h, h->log_addr);

	for (uint32_t i = 0; i < n; i++)
		buf[i] = (char)log[(w - n + i) & (h->log_size - 1)];
	buf[n] = 0;
	return buf;
}

void h_copy_map(struct harness *h)
{
	h_map(h, 0, H_COPY_SRC, 4096, NPU_PTE_R, 0);
	h_map(h, 0, H_COPY_DST, 4096, NPU_PTE_R | NPU_PTE_W, 0);
	memset(h_va(h, 0, H_COPY_SRC), 0x5a, 4096);
}

struct npu_job_cmpl h_copy_job(struct harness *h)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, H_COPY_SRC, H_COPY_DST,
				      4096 };

	memset(h_va(h, 0, H_COPY_DST), 0, 4096);
	return h_run_cmds(h, 0, H_COPY_CMD, &c, sizeof(c));
}

bool h_copied(struct harness *h)
{
	const uint8_t *d = h_va(h, 0, H_COPY_DST);

	for (int i = 0; i < 4096; i++)
		if (d[i] != 0x5a)
			return false;
	return true;
}

struct npu_cmd_pool_i8 h_heavy_pool(uint64_t in, uint64_t out)
{
	return (struct npu_cmd_pool_i8){
		.hdr = { NPU_CMD_POOL_I8, sizeof(struct npu_cmd_pool_i8) },
		.in = in, .out = out, .batch = 1, .in_h = 256, .in_w = 256, .c = 32,
		.out_h = 209, .out_w = 209, .k_h = 48, .k_w = 48, .stride_h = 1, .stride_w = 1,
		.act_min = -128, .act_max = 127, .flags = NPU_POOL_AVG,
	};
}
