// SPDX-License-Identifier: MIT
/*
 * test_migrate.c - the device's state saved and loaded into a new device
 * (npu_core_save, npu_core_load), as QEMU migrates it and takes snapshots,
 * with the real firmware: at rest, with an engine operation queued behind
 * a paused engine, running, finished but not taken in, hung, and during
 * the boot ROM's load; states no device could be in, refused with the
 * device left usable; and a reset while the VM is stopped.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "tap.h"

static struct harness h;

#define SRC H_COPY_SRC
#define DST H_COPY_DST
#define CMD H_COPY_CMD
#define PIN 0x2000000ull
#define POUT 0x3000000ull

static void setup(void)
{
	h_start(&h, 1, 16);
	h_copy_map(&h);
}

/* setup(), every DMA on the engine thread: h_step_engine() stops a job where asked. */
static void setup_stepped(void)
{
	h_start_stepped(&h, 1, 16);
	h_copy_map(&h);
}

/* After a reset: boot, one context, ring 0, the copy's buffers. */
static void reboot(void)
{
	h_wr(&h, NPU_REG_IRQ_MASK, NPU_IRQ_ALL);
	CHECK_EQ(h_boot(&h), NPU_BOOT_OK);
	h_mmu_setup(&h, 1);
	h_ring_setup(&h, 0, 16);
	h_copy_map(&h);
}

static void start_job(const void *cmd, size_t len)
{
	struct npu_job_desc d = { .job_id = 77, .cmd_va = CMD, .cmd_size = (uint32_t)len };

	h_cmdbuf(&h, 0, CMD, cmd, len);
	h_queue(&h, 0, &d);
	h_doorbell(&h, 0);
}

static const struct npu_cmd_dma_copy copy_cmd = {
	{ NPU_CMD_DMA_COPY, sizeof(copy_cmd) }, SRC, DST, 4096
};

static struct npu_job_cmpl copy_job(void)
{
	return h_copy_job(&h);
}

static bool copied(void)
{
	return h_copied(&h);
}

static uint32_t head(void)
{
	return h_rd(&h, NPU_RING_REG(0, NPU_RING_HEAD));
}

/*
 * At rest: every register reads the same on the new device, the firmware
 * goes on where it was (its heartbeat keeps counting, the ring's next job
 * runs), and saving twice gives the same state (saving changes nothing).
 */
static void test_idle_device_carries_on(void)
{
	static const uint32_t regs[] = {
		NPU_REG_STATUS, NPU_REG_BOOT_STATUS, NPU_REG_FW_STATUS, NPU_REG_FW_VERSION,
		NPU_REG_FW_API, NPU_REG_IRQ_MASK, NPU_REG_MMU_CTX_COUNT,
		NPU_RING_REG(0, NPU_RING_SIZE), NPU_RING_REG(0, NPU_RING_HEAD),
		NPU_RING_REG(0, NPU_RING_TAIL), NPU_RING_REG(0, NPU_RING_GEN),
	};
	uint32_t before[sizeof(regs) / sizeof(regs[0])], beat;
	struct npu_core_state a, b;

	setup();
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		before[i] = h_rd(&h, regs[i]);
	npu_core_save(h.core, &a);
	npu_core_save(h.core, &b);
	CHECK(!memcmp(&a, &b, sizeof(a)));
	CHECK_EQ(a.done_kind, 0);
	CHECK_EQ(a.restart_kind, 0);

	CHECK_EQ(h_migrate(&h, NULL), 0);
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		CHECK_EQ(h_rd(&h, regs[i]), before[i]);
	beat = h_rd(&h, NPU_REG_FW_HEARTBEAT);
	h_advance(&h, 50000000);		/* 50 ms: heartbeats every 10 ms */
	CHECK(h_rd(&h, NPU_REG_FW_HEARTBEAT) >= beat + 4);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
	CHECK_EQ(head(), before[8] + 1);
}

/*
 * The engine paused (the VM stopped) with the firmware's first DMA of a
 * job latched, not started: the new device starts it, and the job runs.
 */
static void test_queued_dma_starts_again(void)
{
	struct npu_core_state st;
	uint32_t h0;

	setup();
	h0 = head();
	memset(h_va(&h, 0, DST), 0, 4096);
	npu_core_pause(h.core, true, 0);
	start_job(&copy_cmd, sizeof(copy_cmd));
	h_run_once(&h, 1000000);
	CHECK(npu_core_engine_busy(h.core));	/* the descriptor's fetch, queued */
	npu_core_save(h.core, &st);
	CHECK_EQ(st.restart_kind, 1);		/* DMA */
	CHECK_EQ(st.dma_status, NPU_JOB_BUSY);
	CHECK_EQ(h_migrate(&h, NULL), 0);
	h_run(&h);
	CHECK_EQ(head(), h0 + 1);
	CHECK_EQ(h_cmpl(&h, 0, h0)->status, NPU_JOB_OK);
	CHECK(copied());
}

/*
 * A tensor op latched behind a paused engine starts again on the new
 * device: an average pool of a 16x16x8 input whose channel c holds 5c-20
 * everywhere gives 5c-20 everywhere (worked by hand).
 */
static void test_queued_tensor_op_starts_again(void)
{
	struct npu_cmd_pool_i8 p = h_heavy_pool(PIN, POUT);
	struct npu_core_state st;
	int8_t *in, *out;
	uint32_t h0;
	bool ok = true;

	setup_stepped();
	p.in_h = p.in_w = 16;
	p.c = 8;
	p.k_h = p.k_w = 4;
	p.out_h = p.out_w = 13;
	h_map(&h, 0, PIN, 16 * 16 * 8, NPU_PTE_R, 0);
	h_map(&h, 0, POUT, 13 * 13 * 8, NPU_PTE_R | NPU_PTE_W, 0);
	in = h_va(&h, 0, PIN);
	for (int i = 0; i < 16 * 16 * 8; i++)
		in[i] = (int8_t)(5 * (i % 8) - 20);
	memset(h_va(&h, 0, POUT), 0x7f, 13 * 13 * 8);
	h0 = head();
	start_job(&p, sizeof(p));
	for (int i = 0; i < 2; i++) {	/* the descriptor, then the command */
		h_run_once(&h, UINT64_MAX / 2);
		npu_core_engine_wait(h.core);
	}
	npu_core_pause(h.core, true, 0);
	h_run_once(&h, UINT64_MAX / 2);	/* the firmware starts the pool: queued */
	npu_core_save(h.core, &st);
	CHECK_EQ(st.restart_kind, 2);	/* tensor */
	CHECK_EQ(h_migrate(&h, NULL), 0);
	h_run(&h);
	CHECK_EQ(head(), h0 + 1);
	CHECK_EQ(h_cmpl(&h, 0, h0)->status, NPU_JOB_OK);
	out = h_va(&h, 0, POUT);
	for (int i = 0; i < 13 * 13 * 8; i++)
		ok &= out[i] == 5 * (i % 8) - 20;
	CHECK(ok);
}

/*
 * The heaviest pool (seconds of work) running when the VM stops: saving
 * stops it, its job fails ABORTED on the new device, the next job runs.
 */
static void test_running_op_fails_aborted(void)
{
	struct npu_cmd_pool_i8 p = h_heavy_pool(0x4000000, 0x5000000);
	uint32_t h0;

	setup_stepped();
	h_map(&h, 0, 0x4000000, 256 * 256 * 32, NPU_PTE_R, 0);
	h_map(&h, 0, 0x5000000, 209 * 209 * 32, NPU_PTE_R | NPU_PTE_W, 0);
	h0 = head();
	start_job(&p, sizeof(p));
	h_step_engine(&h, 2);
	CHECK(h_wait_running(&h));	/* the pool runs: not only queued (it would start again) */
	CHECK_EQ(h_migrate(&h, NULL), 0);
	h_run(&h);
	CHECK_EQ(head(), h0 + 1);
	CHECK_EQ(h_cmpl(&h, 0, h0)->status, NPU_JOB_ABORTED);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
}

/* An operation that ended before the save, not yet taken in, is delivered. */
static void test_finished_result_is_delivered(void)
{
	struct npu_core_state st;
	uint32_t h0;

	setup_stepped();
	h0 = head();
	memset(h_va(&h, 0, DST), 0, 4096);
	start_job(&copy_cmd, sizeof(copy_cmd));
	h_run_once(&h, UINT64_MAX / 2);		/* the descriptor's fetch starts */
	npu_core_engine_wait(h.core);		/* and ends, not taken in */
	CHECK(npu_core_runnable(h.core));
	npu_core_save(h.core, &st);
	CHECK_EQ(st.done_kind, 1);
	CHECK_EQ(st.done_status, NPU_JOB_OK);
	CHECK_EQ(h_migrate(&h, NULL), 0);
	h_run(&h);
	CHECK_EQ(head(), h0 + 1);
	CHECK_EQ(h_cmpl(&h, 0, h0)->status, NPU_JOB_OK);
	CHECK(copied());
}

/* A hung operation (fault injection) stays hung: an engine reset ends it. */
static void test_hung_op_stays_hung(void)
{
	uint32_t h0;

	setup();
	h0 = head();
	h_wr(&h, NPU_REG_FAULT_INJECT, NPU_FAULT_ENGINE_HANG);
	start_job(&copy_cmd, sizeof(copy_cmd));
	h_run(&h);
	CHECK_EQ(head(), h0);
	CHECK_EQ(h_migrate(&h, NULL), 0);
	h_run(&h);
	CHECK_EQ(head(), h0);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_ENGINE_RESET);
	h_run(&h);
	CHECK_EQ(head(), h0 + 1);
	CHECK_EQ(h_cmpl(&h, 0, h0)->status, NPU_JOB_ABORTED);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
}

/* Saved while the boot ROM loads the image: the new device loads it again. */
static void test_boot_in_flight_boots_again(void)
{
	uint32_t len;
	uint64_t img;
	struct npu_core_state st;

	h_fini(&h);
	h_init(&h);
	img = h_load_file(&h, h_fw_path(), &len);
	npu_core_pause(h.core, true, 0);	/* the load waits, queued */
	h_wr(&h, NPU_REG_FW_ADDR_LO, (uint32_t)img);
	h_wr(&h, NPU_REG_FW_ADDR_HI, (uint32_t)(img >> 32));
	h_wr(&h, NPU_REG_FW_SIZE, len);
	h_wr(&h, NPU_REG_CTRL, NPU_CTRL_BOOT);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_BOOTING);
	npu_core_save(h.core, &st);
	CHECK_EQ(st.status, NPU_STATUS_BOOTING);
	CHECK_EQ(h_migrate(&h, NULL), 0);
	h_run(&h);
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
	CHECK_EQ(h_rd(&h, NPU_REG_BOOT_STATUS), NPU_BOOT_OK);
}

/* States no device can be in, each refused; the device resets, boots again. */
static void bad_status(struct npu_core_state *st) { st->status = 99; }
static void busy_alone(struct npu_core_state *st) { st->dma_status = NPU_JOB_BUSY; }
static void bad_dma_status(struct npu_core_state *st) { st->dma_status = 0x42; }
static void boot_result(struct npu_core_state *st) { st->done_kind = 3; }
static void bad_kind(struct npu_core_state *st) { st->restart_kind = 7; }
static void restart_not_busy(struct npu_core_state *st) { st->restart_kind = 2; }
static void busy_result(struct npu_core_state *st)
{
	st->done_kind = 1;
	st->done_status = NPU_JOB_BUSY;
}
static void too_many_contexts(struct npu_core_state *st) { st->mmu_ctx_count = NPU_MAX_CONTEXTS + 1; }
static void unaligned_table(struct npu_core_state *st) { st->mmu_ctx_table |= 8; }
static void bad_irqs(struct npu_core_state *st) { st->irq_mask = ~0u; }
static void busy_while_off(struct npu_core_state *st)
{
	st->status = NPU_STATUS_OFF;
	st->tensor_status = NPU_JOB_BUSY;
	st->hung_kind = 2;
}
static void two_pending(struct npu_core_state *st)
{
	st->dma_status = NPU_JOB_BUSY;
	st->restart_kind = 1;
	st->done_kind = 1;
}
static void result_not_busy(struct npu_core_state *st) { st->done_kind = 2; }
static void time_ahead(struct npu_core_state *st) { st->time_base = UINT64_MAX - 5; }

static void test_impossible_states_refused(void)
{
	static void (*const edits[])(struct npu_core_state *) = {
		bad_status, busy_alone, bad_dma_status, boot_result, bad_kind,
		restart_not_busy, busy_result, too_many_contexts, unaligned_table, bad_irqs,
		busy_while_off, two_pending, result_not_busy, time_ahead,
	};

	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		setup();
		CHECK_EQ(h_migrate(&h, edits[i]), -EINVAL);
		CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
		CHECK_EQ(h_rd(&h, NPU_REG_FW_STATUS), 0);
		reboot();
		CHECK_EQ(copy_job().status, NPU_JOB_OK);
	}
}

/*
 * A reset while the VM is stopped (system_reset, loadvm): with an op
 * parked in the middle, and with one queued behind the paused engine, the
 * reset drops it and returns (it used to wait for it for ever); the
 * device then boots and runs jobs.
 */
static void test_reset_while_stopped(void)
{
	struct npu_cmd_pool_i8 p = h_heavy_pool(0x4000000, 0x5000000);

	for (int queued = 0; queued < 2; queued++) {
		setup_stepped();
		if (queued) {
			npu_core_pause(h.core, true, 0);
			start_job(&copy_cmd, sizeof(copy_cmd));
			h_run_once(&h, 1000000);
		} else {
			h_map(&h, 0, 0x4000000, 256 * 256 * 32, NPU_PTE_R, 0);
			h_map(&h, 0, 0x5000000, 209 * 209 * 32, NPU_PTE_R | NPU_PTE_W, 0);
			start_job(&p, sizeof(p));
			h_step_engine(&h, 2);
			npu_core_pause(h.core, true, 0);	/* parks the pool */
		}
		CHECK(npu_core_engine_busy(h.core));
		h_wr(&h, NPU_REG_CTRL, NPU_CTRL_SOFT_RESET);
		CHECK(!npu_core_engine_busy(h.core));
		CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_OFF);
		npu_core_pause(h.core, false, 0);
		reboot();
		CHECK_EQ(copy_job().status, NPU_JOB_OK);
		CHECK(copied());
	}
}

/* x0 is zero whatever the stream says: the firmware runs on unharmed. */
static void x0_set(struct npu_core_state *st) { st->cpu_x[0] = 0xdeadbeef; }

static void test_x0_stays_zero(void)
{
	setup();
	CHECK_EQ(h_migrate(&h, x0_set), 0);
	CHECK_EQ(copy_job().status, NPU_JOB_OK);
	CHECK(copied());
	CHECK_EQ(h_rd(&h, NPU_REG_STATUS), NPU_STATUS_RUNNING);
}

TAP_MAIN(
	TAP_ENTRY(test_idle_device_carries_on),
	TAP_ENTRY(test_queued_dma_starts_again),
	TAP_ENTRY(test_queued_tensor_op_starts_again),
	TAP_ENTRY(test_running_op_fails_aborted),
	TAP_ENTRY(test_finished_result_is_delivered),
	TAP_ENTRY(test_hung_op_stays_hung),
	TAP_ENTRY(test_boot_in_flight_boots_again),
	TAP_ENTRY(test_impossible_states_refused),
	TAP_ENTRY(test_x0_stays_zero),
	TAP_ENTRY(test_reset_while_stopped),
)
