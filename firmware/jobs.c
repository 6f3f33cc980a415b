// SPDX-License-Identifier: MIT
/*
 * jobs.c - servicing the job rings: fetch a descriptor, run its command
 * buffer, write the completion record, advance HEAD, interrupt the host.
 *
 * Everything read from the host is checked; a bad descriptor or command
 * fails only its own job (npu_hw.h, enum npu_job_status), and the ring
 * goes on with the next one.
 */
#include "fw.h"

#define WINDOW 4096	/* bytes of command buffer held in SRAM at once */
#define RING_BUDGET 16	/* jobs per ring per pass of the main loop */
/*
 * Large copies and fills go to the engine in chunks, so the device can
 * end a run slice between them (its embedder's thread is never held long).
 */
#define DMA_CHUNK (4u << 20)

static uint8_t window[WINDOW] __attribute__((aligned(8)));
static struct npu_job_desc desc __attribute__((aligned(8)));
static struct npu_job_cmpl cmpl __attribute__((aligned(8)));

struct job {
	const struct npu_job_desc *d;
	uint32_t win_off;	/* command-buffer offset of window[0] */
	uint32_t win_len;	/* valid bytes in window */
};

/*
 * A job's command (or a chunk of a long copy or fill) has ended: what the
 * host's timeout handler reads as "still moving". The fetches around a
 * job do not count, so a hung command shows no movement at all.
 */
static void progress(void)
{
	reg_write(NPU_REG_FW_PROGRESS, reg_read(NPU_REG_FW_PROGRESS) + 1);
}

static uint32_t rd32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/*
 * An engine's status is the job's (enum npu_job_status is one code for
 * both); one an engine may not report, from a device out of spec, fails
 * the command.
 */
static uint32_t engine_status(uint32_t st)
{
	switch (st) {
	case NPU_JOB_OK: case NPU_JOB_MMU_FAULT: case NPU_JOB_BUS_ERROR:
	case NPU_JOB_ABORTED: case NPU_JOB_LIMIT:
		return st;
	default:
		return NPU_JOB_INVALID_CMD;
	}
}

/* A DMA's status as the job's; record where it faulted. */
static uint32_t dma_status_to_job(uint32_t st)
{
	if (st == NPU_JOB_MMU_FAULT || st == NPU_JOB_BUS_ERROR)
		cmpl.fault_va = dma_fault_addr();
	return engine_status(st);
}

/* Make [off, off + len) of the command buffer visible in the window. */
static uint32_t fetch(struct job *j, uint32_t off, uint32_t len)
{
	uint32_t n;

	if (off >= j->win_off && off + len <= j->win_off + j->win_len)
		return NPU_JOB_OK;
	n = j->d->cmd_size - off;
	if (n > WINDOW)
		n = WINDOW;
	j->win_off = off;
	j->win_len = 0;
	if (len > n)
		return NPU_JOB_INVALID_CMD;
	n = dma_status_to_job(dma_copy(NPU_DMA_SPACE_VA, j->d->cmd_va + off,
				       NPU_DMA_SPACE_SRAM, sram_addr(window), n,
				       j->d->ctx_id));
	if (n == NPU_JOB_OK)
		j->win_len = j->d->cmd_size - off < WINDOW ? j->d->cmd_size - off : WINDOW;
	return n;
}

static uint32_t cmd_copy(const uint8_t *c, uint32_t size, uint32_t ctx)
{
	uint64_t src = rd64(c + 8), dst = rd64(c + 16), len = rd64(c + 24);
	uint32_t st = NPU_JOB_OK;

	if (size != sizeof(struct npu_cmd_dma_copy) || len > NPU_DMA_MAX_LEN)
		return NPU_JOB_INVALID_CMD;
	while (len && st == NPU_JOB_OK) {
		uint32_t n = len < DMA_CHUNK ? (uint32_t)len : DMA_CHUNK;

		st = dma_status_to_job(dma_copy(NPU_DMA_SPACE_VA, src, NPU_DMA_SPACE_VA,
						dst, n, ctx));
		progress();
		src += n;
		dst += n;
		len -= n;
	}
	return st;
}

static uint32_t cmd_fill(const uint8_t *c, uint32_t size, uint32_t ctx)
{
	uint64_t dst = rd64(c + 8), len = rd64(c + 16);
	uint32_t st = NPU_JOB_OK;

	if (size != sizeof(struct npu_cmd_dma_fill) || len > NPU_DMA_MAX_LEN ||
	    rd32(c + 28))
		return NPU_JOB_INVALID_CMD;
	while (len && st == NPU_JOB_OK) {	/* chunks of 4n bytes keep the pattern */
		uint32_t n = len < DMA_CHUNK ? (uint32_t)len : DMA_CHUNK;

		st = dma_status_to_job(dma_fill(dst, n, rd32(c + 24), ctx));
		progress();
		dst += n;
		len -= n;
	}
	return st;
}

static uint32_t cmd_timestamp(const uint8_t *c, uint32_t size, uint32_t ctx)
{
	static uint64_t now __attribute__((aligned(8)));
	uint64_t dst = rd64(c + 8);

	if (size != sizeof(struct npu_cmd_timestamp) || (dst & 7))
		return NPU_JOB_INVALID_CMD;
	now = fw_time();
	return dma_status_to_job(dma_copy(NPU_DMA_SPACE_SRAM, sram_addr(&now),
					  NPU_DMA_SPACE_VA, dst, 8, ctx));
}

/* Tensor operations: the engine reads the command from SRAM and checks it. */
static uint32_t cmd_tensor(const uint8_t *c, uint32_t ctx)
{
	uint32_t st;

	ctl_write(NPU_CTL_TENSOR_DESC, (uint32_t)sram_addr(c));
	ctl_write(NPU_CTL_TENSOR_CTX, ctx);
	ctl_write(NPU_CTL_TENSOR_CTRL, 1);
	st = engine_wait(NPU_CTL_TENSOR_STATUS);
	if (st == NPU_JOB_MMU_FAULT || st == NPU_JOB_BUS_ERROR)
		cmpl.fault_va = ctl_read64(NPU_CTL_TENSOR_FAULT_LO);
	return engine_status(st);
}

static uint32_t run_commands(const struct npu_job_desc *d)
{
	struct job j = { .d = d };
	uint32_t off = 0, st;

	while (off < d->cmd_size) {
		const uint8_t *c;
		uint32_t op, size;

		cmpl.error_offset = off;
		st = fetch(&j, off, sizeof(struct npu_cmd_hdr));
		if (st != NPU_JOB_OK)
			return st;
		c = window + (off - j.win_off);
		op = rd32(c);
		size = rd32(c + 4);
		if (size < sizeof(struct npu_cmd_hdr) || size % 8 ||
		    size > NPU_CMD_MAX_SIZE || size > d->cmd_size - off)
			return NPU_JOB_INVALID_CMD;
		st = fetch(&j, off, size);
		if (st != NPU_JOB_OK)
			return st;
		c = window + (off - j.win_off);

		switch (op) {
		case NPU_CMD_NOP:
		case NPU_CMD_BARRIER:	/* engines finish each op before the next */
			st = (op == NPU_CMD_BARRIER && size != 8) ? NPU_JOB_INVALID_CMD
								   : NPU_JOB_OK;
			break;
		case NPU_CMD_DMA_COPY:
			st = cmd_copy(c, size, d->ctx_id);
			break;
		case NPU_CMD_DMA_FILL:
			st = cmd_fill(c, size, d->ctx_id);
			break;
		case NPU_CMD_TIMESTAMP:
			st = cmd_timestamp(c, size, d->ctx_id);
			break;
		default:	/* a tensor command (npu_cmd.h's list), or unknown */
			if (!NPU_CMD_IN(NPU_CMD_CAPS_TENSOR, op)) {
				st = NPU_JOB_INVALID_CMD;
				break;
			}
			st = cmd_tensor(c, d->ctx_id);
			progress();
			break;
		}
		if (st != NPU_JOB_OK)
			return st;
		off += size;
		heartbeat_poll();
	}
	cmpl.error_offset = 0;
	return NPU_JOB_OK;
}

static bool desc_valid(const struct npu_job_desc *d)
{
	for (unsigned int i = 0; i < sizeof(d->reserved) / sizeof(d->reserved[0]); i++)
		if (d->reserved[i])
			return false;
	return !(d->flags & ~NPU_JOB_F_ALL) &&
	       d->ctx_id < reg_read(NPU_REG_MMU_CTX_COUNT) &&
	       d->ctx_id < NPU_MAX_CONTEXTS &&
	       d->cmd_size && d->cmd_size % 8 == 0 &&
	       d->cmd_size <= NPU_MAX_CMDBUF_SIZE && d->cmd_va % 8 == 0;
}

/*
 * Once the job that was running at an engine reset has ended (aborted),
 * re-enable the engines so the completion, the log and later jobs go
 * through.
 */
void engine_reset_ack(void)
{
	if (ctl_read(NPU_CTL_EVENTS) & NPU_EV_ENGINE_RESET) {
		ctl_write(NPU_CTL_EVENTS, NPU_EV_ENGINE_RESET);
		fw_log("engine reset by host");
	}
}

static void run_job(void)
{
	uint64_t cycles, bytes;

	engine_reset_ack();	/* a reset before the job started spares it */
	cycles = ctl_read64(NPU_CTL_PERF_CYCLES_LO);
	bytes = ctl_read64(NPU_CTL_PERF_BYTES_LO);

	cmpl.start_ns = fw_time();
	if (!desc_valid(&desc))
		cmpl.status = NPU_JOB_INVALID_DESC;
	else
		cmpl.status = run_commands(&desc);
	cmpl.end_ns = fw_time();
	engine_reset_ack();
	cmpl.cycles = ctl_read64(NPU_CTL_PERF_CYCLES_LO) - cycles;
	cmpl.bytes = ctl_read64(NPU_CTL_PERF_BYTES_LO) - bytes;
	if (cmpl.status != NPU_JOB_OK)
		fw_log("job %llx ctx %u: status %u at offset %u va %llx",
		       (unsigned long long)desc.job_id, (unsigned int)desc.ctx_id,
		       (unsigned int)cmpl.status, (unsigned int)cmpl.error_offset, (unsigned long long)cmpl.fault_va);
}

static void ring_error(unsigned int r, uint32_t err, uint32_t fw_err)
{
	reg_write(NPU_RING_REG(r, NPU_RING_STATUS), err);
	reg_write(NPU_REG_FW_ERROR, fw_err);
	fw_log("ring %u: error %u, stopped until reconfigured", r, (unsigned int)err);
	raise_irq(1u << NPU_IRQ_FW);
}

bool jobs_service_ring(unsigned int r)
{
	uint32_t gen = reg_read(NPU_RING_REG(r, NPU_RING_GEN));
	uint32_t size = reg_read(NPU_RING_REG(r, NPU_RING_SIZE));
	uint64_t base, cmpl_base;
	unsigned int budget = RING_BUDGET;
	bool irq = false, more = false;

	if (!size || reg_read(NPU_RING_REG(r, NPU_RING_STATUS)))
		return false;
	base = reg_read(NPU_RING_REG(r, NPU_RING_BASE_LO)) |
	       (uint64_t)reg_read(NPU_RING_REG(r, NPU_RING_BASE_HI)) << 32;
	cmpl_base = reg_read(NPU_RING_REG(r, NPU_RING_CMPL_LO)) |
		    (uint64_t)reg_read(NPU_RING_REG(r, NPU_RING_CMPL_HI)) << 32;
	if ((size & (size - 1)) || size > NPU_RING_MAX_ENTRIES ||
	    !base || !cmpl_base || (base | cmpl_base) % 64) {
		ring_error(r, NPU_RING_ERR_CONFIG, NPU_FW_ERR_RING_CONFIG);
		return false;
	}

	for (;;) {
		uint32_t st, head = reg_read(NPU_RING_REG(r, NPU_RING_HEAD));
		uint32_t tail = reg_read(NPU_RING_REG(r, NPU_RING_TAIL));
		uint32_t idx = head & (size - 1);

		if (head == tail)
			break;
		if (!budget--) {
			more = true;
			break;
		}
		if (tail - head > size) {
			ring_error(r, NPU_RING_ERR_OVERFLOW, NPU_FW_ERR_RING_OVERFLOW);
			break;
		}
		memset(&cmpl, 0, sizeof(cmpl));
		/* Which job runs: the host blames only it when time runs out. */
		reg_write(NPU_REG_FW_CURRENT, NPU_FW_CURRENT_VALID | r << 16 | (head & 0xffff));
		st = dma_copy(NPU_DMA_SPACE_BUS, base + (uint64_t)idx * sizeof(desc),
			      NPU_DMA_SPACE_SRAM, sram_addr(&desc), sizeof(desc), 0);
		if (st != NPU_JOB_OK) {
			memset(&desc, 0, sizeof(desc));
			cmpl.start_ns = cmpl.end_ns = fw_time();
			cmpl.status = st == NPU_JOB_ABORTED ? NPU_JOB_ABORTED : NPU_JOB_BUS_ERROR;
			engine_reset_ack();
		} else {
			run_job();
		}
		cmpl.job_id = desc.job_id;
		/*
		 * The host reconfigured this ring while the job ran: its
		 * addresses are stale and the job is no longer wanted.
		 */
		if (reg_read(NPU_RING_REG(r, NPU_RING_GEN)) != gen) {
			more = true;
			break;
		}
		if (dma_copy(NPU_DMA_SPACE_SRAM, sram_addr(&cmpl), NPU_DMA_SPACE_BUS,
			     cmpl_base + (uint64_t)idx * sizeof(cmpl), sizeof(cmpl), 0)) {
			ring_error(r, NPU_RING_ERR_CONFIG, NPU_FW_ERR_CMPL_WRITE);
			break;
		}
		reg_write(NPU_RING_REG(r, NPU_RING_HEAD), head + 1);
		reg_write(NPU_REG_FW_CURRENT, 0);
		if (!(desc.flags & NPU_JOB_F_NO_IRQ) || cmpl.status != NPU_JOB_OK)
			irq = true;
	}
	reg_write(NPU_REG_FW_CURRENT, 0);
	if (irq)
		raise_irq(1u << NPU_IRQ_RING(r));
	return more;
}
