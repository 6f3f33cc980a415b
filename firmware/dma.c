// SPDX-License-Identifier: MIT
/* dma.c - driving the DMA engine (npu_fw.h, "DMA engine"). */
#include "fw.h"

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
	return ctl_read(NPU_CTL_DMA_STATUS);
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
