// SPDX-License-Identifier: MIT
/*
 * test_faults.c - the device's fault injection (NPU_REG_FAULT_INJECT) with
 * the real firmware: each kind happens once, where documented, does what
 * hardware doing it would, and the device serves jobs normally afterwards.
 */
#include <string.h>

#include "harness.h"
#include "tap.h"

static struct harness h;

#define SRC H_COPY_SRC
#define DST H_COPY_DST
#define CMD H_COPY_CMD

static void map_buffers(void)
{
	h_copy_map(&h);
}

static void setup(void)
{
	h_start(&h, 1, 16);
	map_buffers();
}

/* setup(), every DMA on the engine thread: h_step_engine() stops a job where asked. */
static void setup_stepped(void)
{
	h_start_stepped(&h, 1, 16);
	map_buffers();
}

/* After a reset (or on a new device): boot, one context, ring 0, buffers. */
static void reboot(void)
{
	h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	map_buffers();
}

static void inject(enum npu_fault kind)
{
	h_wr(&h, NPU_REG_FAULT_INJECT, kind);
}

static struct npu_job_cmpl copy_job(void)
{
	return h_copy_job(&h);
}

static bool copied(void)
{
	return h_copied(&h);
}

static void test_register_arms_known_kinds_only(void)
{
	setup();
	CHECK_EQ(h_rd(&h, NPU_REG_FAULT_INJECT), 0);
	inject(NPU_FAULT_DMA_ERROR);
	inject(NPU_FAULT_LOST_IRQ);
	h_wr(&h, NPU_REG_FAULT_INJECT, 0);
	h_wr(&h, NPU_REG_FAULT_INJECT, 8);
	h_wr(&h, NPU_REG_FAULT_INJECT, 0xffffffffu);
	CHECK_EQ(h_rd(&h, NPU_REG_FAULT_INJECT),
		 1u << NPU_FAULT_DMA_ERROR | 1u << NPU_FAULT_LOST_IRQ);
	/* A reset disarms everything. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	CHECK_EQ(h_rd(&h, NPU_REG_FAULT_INJECT), 0);
}

static void test_dma_error_fails_one_job(void)
{
	struct npu_job_cmpl c;

	setup();
	inject(NPU_FAULT_DMA_ERROR);
	c = copy_job();
	/* The next job-memory DMA is the fetch of the command buffer. */
	CHECK_EQ(c.status, NPU_JOB_BUS_ERROR);
	CHECK_EQ(c.fault_va, CMD);
	CHECK_EQ(h_rd(&h, NPU_REG_FAULT_INJECT), 0);
	c = copy_job();
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK(copied());
}

static void test_mmu_fault_fails_one_job(void)
{
	struct npu_job_cmpl c;
	struct npu_job_desc d = { .job_id = 77, .cmd_va = CMD, .cmd_size = 32 };

	setup();
	h_cmdbuf(&h, 0, CMD, &(struct npu_cmd_hdr){ NPU_CMD_NOP, 8 }, 8);
	inject(NPU_FAULT_MMU_FAULT);
	/* The next translation is the command buffer's own fetch. */
	d.cmd_size = 8;
	c = h_submit(&h, 0, &d);
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	CHECK_EQ(c.fault_va, CMD);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_STATUS) & NPU_MMU_FAULT_VALID, 1);
	CHECK_EQ(h_rd(&h, NPU_REG_MMU_FAULT_INFO) & 0xff, NPU_MMU_FAULT_INJECTED);
	CHECK_EQ(h.msi[NPU_IRQ_MMU], 1);
	h_wr(&h, NPU_REG_MMU_FAULT_ACK, 1);
	c = copy_job();
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK(copied());
}

static void test_lost_irq_completes_silently(void)
{
	struct npu_job_cmpl c;
	uint32_t sent;

	setup();
	sent = h.msi[NPU_IRQ_RING(0)];
	inject(NPU_FAULT_LOST_IRQ);
	c = copy_job();
	/* The job ran and its record is there; nobody was told. */
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK(copied());
	CHECK_EQ(h.msi[NPU_IRQ_RING(0)], sent);
	CHECK_EQ(h_rd(&h, NPU_REG_IRQ_STATUS) & (1u << NPU_IRQ_RING(0)), 0);
	c = copy_job();
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK_EQ(h.msi[NPU_IRQ_RING(0)], sent + 1);
}

static void test_bad_completion_corrupts_one_record(void)
{
	struct npu_job_cmpl c;

	setup();
	inject(NPU_FAULT_BAD_COMPLETION);
	c = copy_job();
	/* The work was done; its record says nothing true. */
	CHECK(copied());
	CHECK_EQ(c.status, (uint32_t)~NPU_JOB_OK);
	CHECK_EQ(c.job_id, ~(uint64_t)(0x1000 + CMD));
	c = copy_job();
	CHECK_EQ(c.status, NPU_JOB_OK);
	CHECK_EQ(c.job_id, 0x1000 + CMD);
}

static void test_fw_crash_traps_the_core(void)
{
	uint32_t fw_irqs;

	setup();
	h_wr(&h, NPU_REG_IRQ_STATUS, NPU_IRQ_ALL);	/* as a driver's handler does */
	fw_irqs = h.msi[NPU_IRQ_FW];
	inject(NPU_FAULT_FW_CRASH);
	CHECK(npu_core_runnable(h.core));
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_CRASHED);
	CHECK_EQ(h_rd(&h, NPU_REG_CORE_FAULT), NPU_CORE_FAULT_INJECTED);
	CHECK_EQ(h.msi[NPU_IRQ_FW], fw_irqs + 1);
	CHECK_EQ(copy_job().status, 0xdead);	/* nothing serves the ring */
	/* A reset and a boot bring it back. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	reboot();
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
}

static void test_fw_hang_stops_heartbeat_and_jobs(void)
{
	uint32_t beat;
	uint64_t insns;

	setup();
	h_advance(&h, 25 * 1000000ull);
	beat = h_rd(&h, NPU_REG_FW_HEARTBEAT);
	CHECK(beat >= 2);
	inject(NPU_FAULT_FW_HANG);
	h_run(&h);
	insns = npu_core_insns(h.core);
	h_advance(&h, 100 * 1000000ull);
	/* Still "running", but nothing moves: no beat, no instruction, no job. */
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_HEARTBEAT), beat);
	CHECK_EQ(npu_core_insns(h.core), insns);
	CHECK(!npu_core_runnable(h.core));
	CHECK_EQ(npu_core_timer_deadline(h.core), UINT64_MAX);
	CHECK_EQ(copy_job().status, 0xdead);
	/* Halting and booting again recovers it. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_HALT);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), NPU_FW_STATE_READY);
	h_ring_setup(&h, 0, 16);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
}

/* Queue @cmd in a job of its own on ring 0 and ring it; no waiting. */
static void start_job(const void *cmd, size_t len)
{
	struct npu_job_desc d = { .job_id = 77, .cmd_va = CMD, .cmd_size = (uint32_t)len };

	h_cmdbuf(&h, 0, CMD, cmd, len);
	h_queue(&h, 0, &d);
	h_doorbell(&h, 0);
}

static void test_engine_hang_waits_for_engine_reset(void)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, SRC, DST, 4096 };
	uint32_t beat, progress;

	setup();
	inject(NPU_FAULT_ENGINE_HANG);
	start_job(&c, sizeof(c));
	h_run(&h);
	beat = h_rd(&h, NPU_REG_FW_HEARTBEAT);
	progress = h_rd(&h, NPU_REG_FW_PROGRESS);
	h_advance(&h, 50 * 1000000ull);
	/* The job never ends, but the firmware is alive: its heartbeat goes on. */
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 0);
	CHECK(h_rd(&h, NPU_REG_FW_HEARTBEAT) >= beat + 3);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	/* It says which job it is stuck in (ring 0, entry 0), which does not move. */
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CURRENT), NPU_FW_CURRENT_VALID | 0u << 16 | 0);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_PROGRESS), progress);
	/* An engine reset ends the hung op: the job fails ABORTED, alone. */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 1);
	CHECK_EQ(h_cmpl(&h, 0, 0)->status, NPU_JOB_ABORTED);
	CHECK_EQ(h_cmpl(&h, 0, 0)->job_id, 77);
	CHECK_EQ(h_rd(&h, NPU_REG_FW_CURRENT), 0);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(h_rd(&h, NPU_REG_FW_PROGRESS) > progress);	/* a command ended */
	CHECK(copied());
}

static void test_engine_hang_cleared_by_device_reset(void)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, SRC, DST, 4096 };

	setup();
	inject(NPU_FAULT_ENGINE_HANG);
	start_job(&c, sizeof(c));
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), 0);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	CHECK_EQ(h_rd(&h, NPU_REG_FAULT_INJECT), 0);
	reboot();
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
}

/*
 * The heaviest pooling command (seconds of work), mapped and started once,
 * and running: the descriptor and the command fetched.
 */
static void heavy_pool_running(bool map)
{
	uint64_t in = 0x4000000, out = 0x5000000;
	struct npu_cmd_pool_i8 p = h_heavy_pool(in, out);

	if (map) {
		h_map(&h, 0, in, 256 * 256 * 32, NPU_PTE_R, 0);
		h_map(&h, 0, out, 209 * 209 * 32, NPU_PTE_R | NPU_PTE_W, 0);
	}
	start_job(&p, sizeof(p));
	h_step_engine(&h, 2);
	CHECK(h_wait_running(&h));	/* the pool runs, not only queued */
}

/*
 * An engine reset, and a device reset, stop a long op between blocks: the
 * pool below runs for seconds, so if either waited for its end the test
 * would take that long (it asserts no time; make check's timeout would).
 */
static void test_resets_stop_a_running_op(void)
{
	setup_stepped();
	heavy_pool_running(true);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	h_run(&h);
	CHECK_EQ(h_cmpl(&h, 0, 0)->status, NPU_JOB_ABORTED);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);

	/* Again, stopped this time by a reset of the whole device. */
	heavy_pool_running(false);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
	npu_core_engine_wait(h.core);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	reboot();
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
}

/*
 * HALT, then BOOT, with an operation in flight (a long pool, then a hung
 * copy): the halt drops the operation, and the new firmware finds its
 * engines idle, not BUSY forever (it used to wait for them for ever).
 */
static void test_halt_then_boot_with_op_in_flight(void)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, SRC, DST, 4096 };
	uint32_t head;

	setup_stepped();
	heavy_pool_running(true);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_HALT);
	npu_core_engine_wait(h.core);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
	reboot();
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());

	inject(NPU_FAULT_ENGINE_HANG);		/* never ends by itself */
	head = h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD));
	start_job(&c, sizeof(c));
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), head);	/* not done */
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_HALT);
	reboot();
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
}

/*
 * A VM stop pauses the engines: a paused engine starts nothing (the copy
 * waits and its destination stays untouched), and a running operation
 * parks at its next check; on resume both go on.
 */
static void test_pause_holds_the_engines(void)
{
	struct npu_cmd_dma_copy c = { { NPU_CMD_DMA_COPY, sizeof(c) }, SRC, DST, 4096 };
	uint32_t head;

	setup_stepped();
	memset(h_va(&h, 0, DST), 0, 4096);
	npu_core_pause(h.core, true, 0);
	head = h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD));
	start_job(&c, sizeof(c));
	for (int i = 0; i < 20; i++)
		h_run_once(&h, 100000);
	CHECK(npu_core_engine_busy(h.core));	/* queued, not started */
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), head);
	CHECK(!copied());
	npu_core_pause(h.core, false, 0);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD)), head + 1);
	CHECK(copied());

	heavy_pool_running(true);
	npu_core_pause(h.core, true, 0);	/* returns once it is parked */
	CHECK(npu_core_engine_busy(h.core));
	npu_core_pause(h.core, false, 0);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	h_run(&h);
	CHECK_EQ(h_cmpl(&h, 0, 1)->status, NPU_JOB_ABORTED);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
}

/* A device with small per-command budgets. */
static void setup_budget(uint32_t mem_mib, uint32_t mmacs)
{
	struct npu_core_config cfg;

	npu_core_default_config(&cfg);
	cfg.cmd_mem_mib = mem_mib;
	cfg.cmd_max_mmacs = mmacs;
	h_fini(&h);
	h_init_cfg(&h, &cfg);
	reboot();
}

static struct npu_cmd_gemm_i8 gemm_cmd(uint32_t m, uint32_t n, uint32_t k, uint64_t base)
{
	return (struct npu_cmd_gemm_i8){
		.hdr = { NPU_CMD_GEMM_I8, sizeof(struct npu_cmd_gemm_i8) },
		.a = base, .b = base + 0x1000000, .out = base + 0x2000000,
		.quant = base + 0x3000000, .m = m, .n = n, .k = k, .lda = k, .ldb = k, .ldc = n,
		.act_min = -128, .act_max = 127, .flags = NPU_GEMM_PER_TENSOR,
	};
}

static void test_command_over_budget_fails_limit(void)
{
	/* 2 GMACs against a budget of 1: refused before anything is read. */
	struct npu_cmd_gemm_i8 big = gemm_cmd(1024, 1024, 2048, 0x40000000);
	/* 3 MiB of operands against a 2 MiB budget: refused as it allocates. */
	struct npu_cmd_gemm_i8 wide = gemm_cmd(1024, 1024, 1024, 0x40000000);
	/* The N-d matmul too (it used to ignore the compute budget). */
	struct npu_cmd_matmul mm = {
		.hdr = { NPU_CMD_MATMUL, sizeof(mm) }, .a = 0x40000000, .b = 0x48000000,
		.out = 0x50000000, .m = 1024, .n = 1024, .k = 2048, .adt = NPU_ND_F32,
		.bdt = NPU_ND_F32, .alpha = 0x3f800000,
	};
	struct npu_job_cmpl c;

	setup_budget(2, 1000);
	c = h_run_cmds(&h, 0, CMD, &big, sizeof(big));
	CHECK_EQ(c.status, NPU_JOB_LIMIT);
	c = h_run_cmds(&h, 0, CMD, &mm, sizeof(mm));
	CHECK_EQ(c.status, NPU_JOB_LIMIT);
	c = h_run_cmds(&h, 0, CMD, &wide, sizeof(wide));
	CHECK_EQ(c.status, NPU_JOB_LIMIT);
	/* Within the budgets, the device works as before. */
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
	/* The same commands on a default device are only short of mappings. */
	setup();
	c = h_run_cmds(&h, 0, CMD, &big, sizeof(big));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
	c = h_run_cmds(&h, 0, CMD, &mm, sizeof(mm));
	CHECK_EQ(c.status, NPU_JOB_MMU_FAULT);
}

/*
 * The GEMM kernel's packing counts too: B widened to int16 for a 1 x 4096
 * x 1024 product is 8 MiB beside 4 MiB of operands. Over a 6 MiB budget
 * the command fails LIMIT (it used to allocate the 8 MiB unbudgeted); a
 * 16 MiB budget holds it all.
 */
static void test_gemm_packing_is_budgeted(void)
{
	struct npu_cmd_gemm_i8 g = gemm_cmd(1, 1024, 4096, 0x40000000);

	for (int i = 0; i < 2; i++) {
		setup_budget(i ? 16 : 6, 1000);
		h_map(&h, 0, g.a, 4096, NPU_PTE_R, 0);
		h_map(&h, 0, g.b, 1024 * 4096, NPU_PTE_R, 0);
		h_map(&h, 0, g.out, 1024, NPU_PTE_R | NPU_PTE_W, 0);
		h_map(&h, 0, g.quant, 4096, NPU_PTE_R, 0);
		*(struct npu_quant_ch *)h_va(&h, 0, g.quant) = (struct npu_quant_ch){ 1 << 30, 0 };
		CHECK_EQ(h_run_cmds(&h, 0, CMD, &g, sizeof(g)).status,
			 i ? NPU_JOB_OK : NPU_JOB_LIMIT);
	}
}

/*
 * A failed tensor command is charged the transfers it made: a CAST that
 * reads its input, then faults writing its output (unmapped), costs one
 * modeled cycle per 32 bytes read (the default DMA rate) beyond the fixed
 * costs, exactly: 1 MiB more read, 32768 cycles more. It used to be
 * charged the fixed setup alone, whatever it had moved.
 */
static void test_failed_op_charged_what_it_moved(void)
{
	uint64_t in = 0x4000000, cyc[2];

	setup();
	h_map(&h, 0, in, 2 << 20, NPU_PTE_R, 0);
	for (int i = 0; i < 2; i++) {
		struct npu_cmd_cast c = { { NPU_CMD_CAST, sizeof(c) }, in, 0x6000000,
					  (uint32_t)(256u << 10) * (i + 1), NPU_ND_F32, NPU_ND_I32,
					  0 };
		struct npu_job_cmpl r = h_run_cmds(&h, 0, CMD, &c, sizeof(c));

		CHECK_EQ(r.status, NPU_JOB_MMU_FAULT);
		CHECK_EQ(r.fault_va, 0x6000000);
		cyc[i] = r.cycles;
	}
	CHECK_EQ(cyc[1] - cyc[0], (1u << 20) / 32);
}

TAP_MAIN(
	TAP_ENTRY(test_register_arms_known_kinds_only),
	TAP_ENTRY(test_dma_error_fails_one_job),
	TAP_ENTRY(test_mmu_fault_fails_one_job),
	TAP_ENTRY(test_lost_irq_completes_silently),
	TAP_ENTRY(test_bad_completion_corrupts_one_record),
	TAP_ENTRY(test_fw_crash_traps_the_core),
	TAP_ENTRY(test_fw_hang_stops_heartbeat_and_jobs),
	TAP_ENTRY(test_engine_hang_waits_for_engine_reset),
	TAP_ENTRY(test_engine_hang_cleared_by_device_reset),
	TAP_ENTRY(test_resets_stop_a_running_op),
	TAP_ENTRY(test_halt_then_boot_with_op_in_flight),
	TAP_ENTRY(test_pause_holds_the_engines),
	TAP_ENTRY(test_command_over_budget_fails_limit),
	TAP_ENTRY(test_gemm_packing_is_budgeted),
	TAP_ENTRY(test_failed_op_charged_what_it_moved),
)
