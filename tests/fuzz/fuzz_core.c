// SPDX-License-Identifier: MIT
/*
 * fuzz_core.c - libFuzzer target: the device core running the real
 * firmware, driven by a hostile host. An input is a stream of actions:
 * register writes (any offset, any value: resets, boots, MMU and ring
 * configuration, fault injection), bytes into the job memory that holds
 * command buffers and data, commands of every opcode with fuzzed fields,
 * raw page table entries, job descriptors on two rings in two contexts,
 * firmware run slices and time. The engines run inline (deterministic);
 * the budgets are small so one input stays fast. ASan and UBSan judge.
 *
 * The firmware keeps running from one input to the next (booting it for
 * every input would cost more than the input); a device an input left
 * stopped, crashed or misconfigured is rebuilt before the next one.
 *
 * Every input also checks the device's host memory: ASan's allocator hooks
 * count the bytes live while the input runs, and their high-water mark
 * above where it started must stay within cmd-mem-mib (each command's
 * temporaries, packing included, are charged before they are allocated)
 * plus weight-cache-mib (constant weights kept packed, room made before
 * they are allocated), or the target aborts.
 *
 * Coverage is the device core's C code and the firmware's own: the RISC-V
 * interpreter is built without coverage instrumentation (it says nothing
 * of the input and cost two thirds of the time), and marks each firmware
 * word it executes in libFuzzer's extra counters instead.
 *
 *   make fuzz                 (10 million executions and QEMU's fuzzer)
 *   build/fuzz/fuzz_core CORPUS_DIR -runs=N
 */
#include <sanitizer/allocator_interface.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npu_cmd_train.h"
#include "npu_core_priv.h"	/* fw_hung: a hung core is rebuilt too */

#define WIN_VA		0x100000ull	/* job memory: the same VA in both contexts */
#define WIN_SIZE	(256 * 1024)
#define RING_ENTRIES	16
#define MAX_INSNS	250000		/* per input: bounded, whatever it asks */

#define RAM_SIZE	(4u << 20)

static struct harness h;

/* One counter per SRAM word the control core executes (libFuzzer reads them). */
static uint8_t fw_pcs[64 * 1024 / 4] __attribute__((section("__libfuzzer_extra_counters")));
static uint64_t win_pa[2];		/* bus address of each context's window */
static uint64_t insns_left;
static uint8_t *fw;			/* the firmware image, read once */
static long fw_len;

/*
 * Host memory of the running input (ASan's hooks): bytes allocated minus
 * bytes freed since it started, and the most that ever was. A block from
 * before that is freed meanwhile only lowers the count.
 */
static atomic_bool counting;
static atomic_llong live, high;
static long long worst;			/* the highest mark of any input */

static void on_malloc(const volatile void *p, size_t n)
{
	long long now, top;

	if (!p || !atomic_load(&counting))
		return;
	now = atomic_fetch_add(&live, (long long)n) + (long long)n;
	top = atomic_load(&high);
	while (now > top && !atomic_compare_exchange_weak(&high, &top, now))
		;
}

static void on_free(const volatile void *p)
{
	if (p && atomic_load(&counting))
		atomic_fetch_sub(&live, (long long)__sanitizer_get_allocated_size((const void *)p));
}

static void report_memory(void)
{
	fprintf(stderr, "fuzz_core: highest host memory of an input above its start: "
		"%lld bytes (cmd-mem-mib %u MiB)\n", worst, h.cfg.cmd_mem_mib);
}

static void load_fw(void)
{
	FILE *f = fopen(h_fw_path(), "rb");

	if (!f || fseek(f, 0, SEEK_END) || (fw_len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(fw = malloc(fw_len)) || fread(fw, 1, fw_len, f) != (size_t)fw_len) {
		fprintf(stderr, "fuzz_core: cannot read %s (set NPU_FW)\n", h_fw_path());
		abort();
	}
	fclose(f);
}

/* Every command's size, so structured commands reach the engines' checks. */
static const struct { uint32_t op, size; } cmds[] = {
	{ NPU_CMD_NOP, 8 },
	{ NPU_CMD_DMA_COPY, sizeof(struct npu_cmd_dma_copy) },
	{ NPU_CMD_DMA_FILL, sizeof(struct npu_cmd_dma_fill) },
	{ NPU_CMD_TIMESTAMP, sizeof(struct npu_cmd_timestamp) },
	{ NPU_CMD_BARRIER, 8 },
#define CMD_SIZE(OP, op, cls) { NPU_CMD_##OP, sizeof(struct npu_cmd_##op) },
	NPU_TENSOR_CMDS(CMD_SIZE)
#undef CMD_SIZE
};

/* Input reader: past the end, zeros. */
struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++) {
		uint8_t b = 0;

		if (in->n) {
			b = *in->p++;
			in->n--;
		}
		v |= (uint64_t)b << (8 * i);
	}
	return v;
}

static void run(uint64_t insns)
{
	while (insns && insns_left) {
		uint64_t n = insns < 20000 ? insns : 20000;
		enum npu_run_state st;

		if (n > insns_left)
			n = insns_left;
		/* Every boot (an input may boot) resets the core's map. */
		h.core->cpu.pc_map = fw_pcs;
		h.core->cpu.pc_map_words = sizeof(fw_pcs);
		st = h_run_once(&h, n);
		insns -= n;
		insns_left -= n;
		if (st != NPU_RUN_BUSY)
			break;
	}
}

static uint64_t fw_addr, brk0;		/* the image in RAM; what follows it */

/*
 * A fresh device: the real firmware booted, two contexts, two rings. The
 * first time builds the harness; later, a soft reset and the memory after
 * the image cleared are as good and much cheaper.
 */
static void setup(void)
{
	if (!h.core) {
		struct npu_core_config cfg;

		npu_core_default_config(&cfg);
		cfg.sram_size = sizeof(fw_pcs) * 4;	/* what the firmware needs */
		cfg.engine_inline = true;	/* deterministic */
		cfg.engine_threads = 1;
		cfg.cmd_mem_mib = 4;		/* small budgets: fast inputs */
		cfg.cmd_max_mmacs = 2;
		cfg.weight_cache_mib = 4;	/* kept weights: a budget of their own */
		load_fw();
		h_init_ram(&h, &cfg, RAM_SIZE);
		fw_addr = h_alloc(&h, fw_len, 4096);
		memcpy(h_ptr(&h, fw_addr), fw, fw_len);
		brk0 = h.brk;
	} else {
		h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
		h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
		memset(h_ptr(&h, brk0), 0, h.brk - brk0);
		h.brk = brk0;
		h.log_addr = 0;
		memcpy(h_ptr(&h, fw_addr), fw, fw_len);	/* inputs may have written it */
	}
	if (h_boot_image(&h, fw_addr, (uint32_t)fw_len) != NPU_BOOT_OK) {
		fprintf(stderr, "fuzz_core: the firmware does not boot (set NPU_FW)\n");
		abort();
	}
	h_mmu_setup(&h, 2);
	for (int c = 0; c < 2; c++)
		win_pa[c] = h_map(&h, c, WIN_VA, WIN_SIZE, NPU_PTE_R | NPU_PTE_W, 0);
	h_ring_setup(&h, 0, RING_ENTRIES);
	h_ring_setup(&h, 1, RING_ENTRIES);
}

static bool device_sane(void)
{
	return h_rd(&h, NPU_REG_STATUS) == NPU_STATUS_RUNNING &&
	       h_rd(&h, NPU_REG_FW_STATUS) == NPU_FW_STATE_READY &&
	       !h_rd(&h, NPU_RING_REG(0, NPU_RING_STATUS)) &&
	       !h_rd(&h, NPU_RING_REG(1, NPU_RING_STATUS)) &&
	       h_rd(&h, NPU_RING_REG(0, NPU_RING_SIZE)) == RING_ENTRIES &&
	       h_rd(&h, NPU_RING_REG(1, NPU_RING_SIZE)) == RING_ENTRIES &&
	       !h_rd(&h, NPU_REG_FAULT_INJECT) && !h.core->fw_hung;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };

	if (!h.core) {
		__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
		atexit(report_memory);
	}
	if (!h.core || !device_sane())
		setup();
	atomic_store(&live, 0);
	atomic_store(&high, 0);
	atomic_store(&counting, true);
	insns_left = MAX_INSNS;
	while (in.n) {
		switch (take(&in, 1) % 8) {
		case 0: {	/* any register, any value */
			uint32_t off = (uint32_t)take(&in, 2) & (NPU_BAR0_SIZE - 4);

			h_wr(&h, off, (uint32_t)take(&in, 4));
			break;
		}
		case 1: {	/* bytes into a context's job memory */
			uint64_t pa = win_pa[take(&in, 1) & 1];
			uint32_t off = (uint32_t)take(&in, 3) % WIN_SIZE;
			uint32_t len = (uint32_t)take(&in, 1);

			for (uint32_t i = 0; i < len && off + i < WIN_SIZE; i++)
				((uint8_t *)h_ptr(&h, pa))[off + i] = (uint8_t)take(&in, 1);
			break;
		}
		case 2: {	/* a well-formed header, fuzzed fields */
			uint64_t pa = win_pa[take(&in, 1) & 1];
			uint32_t off = ((uint32_t)take(&in, 2) * 8) % (WIN_SIZE - 256);
			unsigned int k = (unsigned int)take(&in, 1) % (sizeof(cmds) / sizeof(cmds[0]));
			uint8_t *c = (uint8_t *)h_ptr(&h, pa) + off;

			memcpy(c, &cmds[k].op, 4);
			memcpy(c + 4, &cmds[k].size, 4);
			for (uint32_t i = 8; i < cmds[k].size; i++)
				c[i] = (uint8_t)take(&in, 1);
			break;
		}
		case 3: {	/* a raw page table entry */
			unsigned int ctx = take(&in, 1) & 1;
			uint64_t va = WIN_VA + ((take(&in, 2) * NPU_PAGE_SIZE) % (64u << 20));

			*h_pte(&h, ctx, va) = take(&in, 8);
			h_wr(&h, NPU_REG_MMU_INVALIDATE, ctx);
			break;
		}
		case 4: {	/* a job */
			unsigned int r = take(&in, 1) & 1;
			struct npu_job_desc d = {
				.job_id = take(&in, 2),
				.ctx_id = (uint32_t)take(&in, 1) % 3,
				.cmd_va = WIN_VA + ((take(&in, 2) * 8) % WIN_SIZE),
				.cmd_size = (uint32_t)take(&in, 2),
				.flags = (uint32_t)take(&in, 1) & 3,
			};

			if (h.tail[r] - h_rd(&h, NPU_RING_REG(r, NPU_RING_HEAD)) < RING_ENTRIES) {
				h_queue(&h, r, &d);
				h_doorbell(&h, r);
			}
			break;
		}
		case 5:		/* the firmware runs a while */
			run(take(&in, 2) * 16);
			break;
		case 6:		/* time passes: timers, heartbeats */
			h.now += take(&in, 2) * 100000ull;
			break;
		case 7:		/* a fault */
			h_wr(&h, NPU_REG_FAULT_INJECT, (uint32_t)take(&in, 1) % 9);
			break;
		}
	}
	run(MAX_INSNS);
	atomic_store(&counting, false);
	if (atomic_load(&high) > worst)
		worst = atomic_load(&high);
	if (atomic_load(&high) >
	    (long long)(h.cfg.cmd_mem_mib + h.cfg.weight_cache_mib) << 20) {
		fprintf(stderr, "fuzz_core: an input took %lld bytes of host memory, more than "
			"cmd-mem-mib and weight-cache-mib (%u + %u MiB)\n", atomic_load(&high),
			h.cfg.cmd_mem_mib, h.cfg.weight_cache_mib);
		abort();
	}
	return 0;
}
