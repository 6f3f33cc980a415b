// SPDX-License-Identifier: MIT
/* dma.c - driving the DMA engine (npu_fw.h, "DMA engine"). */
#include "fw.h"

/*
 * Wait for the engine whose status register is @status_reg: it runs beside
 * the core and says it has ended with NPU_EV_ENGINE_DONE. Only that event
 * and the timer wake us, so the heartbeat goes on through a long op and a
 * doorbell meanwhile stays pending for the main loop.
 */
uint32_t engine_wait(uint32_t status_reg)
{
	uint32_t st;

	ctl_write(NPU_CTL_WAKE_MASK, NPU_EV_ENGINE_DONE | NPU_EV_TIMER);
	for (;;) {
		ctl_write(NPU_CTL_EVENTS, NPU_EV_ENGINE_DONE | NPU_EV_TIMER);
		st = ctl_read(status_reg);
		if (st != NPU_JOB_BUSY)
			break;
		heartbeat_poll();
		if (!(ctl_read(NPU_CTL_EVENTS) & (NPU_EV_ENGINE_DONE | NPU_EV_TIMER)))
			__asm__ volatile("wfi");
	}
	ctl_write(NPU_CTL_WAKE_MASK, ~0u);
	return st;
}

static uint32_t dma_run(uint32_t ctrl, uint64_t src, uint64_t dst, uint32_t len,
			uint32_t ctx, uint32_t pattern)
{
	ctl_write(NPU_CTL_DMA_SRC_LO, (uint32_t)src);
	ctl_write(NPU_CTL_DMA_SRC_HI, (uint32_t)(src >> 32));
	ctl_write(NPU_CTL_DMA_DST_LO, (uint32_t)dst);
	ctl_write(NPU_CTL_DMA_DST_HI, (uint32_t)(dst >> 32));
	ctl_write(NPU_CTL_DMA_LEN, len);
	ctl_write(NPU_CTL_DMA_CTX, ctx);
	ctl_write(NPU_CTL_DMA_PATTERN, pattern);
	ctl_write(NPU_CTL_DMA_CTRL, ctrl);
	return engine_wait(NPU_CTL_DMA_STATUS);
}

uint32_t dma_copy(unsigned int src_space, uint64_t src, unsigned int dst_space,
		  uint64_t dst, uint32_t len, uint32_t ctx)
{
	return dma_run(NPU_DMA_OP_COPY | src_space << NPU_DMA_SRC_SHIFT |
		       dst_space << NPU_DMA_DST_SHIFT, src, dst, len, ctx, 0);
}

uint32_t dma_fill(uint64_t dst, uint32_t len, uint32_t pattern, uint32_t ctx)
{
	return dma_run(NPU_DMA_OP_FILL | NPU_DMA_SPACE_VA << NPU_DMA_DST_SHIFT,
		       0, dst, len, ctx, pattern);
}

uint64_t dma_fault_addr(void)
{
	return ctl_read64(NPU_CTL_DMA_FAULT_LO);
}
