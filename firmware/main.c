// SPDX-License-Identifier: MIT
/*
 * main.c - NPU firmware: read the boot parameters, report ready with the
 * version and capabilities, then loop: acknowledge events, service the job
 * rings, beat the heartbeat, sleep in WFI until the next event or beat.
 */
#include "fw.h"

static struct npu_boot_params params __attribute__((aligned(8)));
static uint64_t period, next_beat;

static void fail(uint32_t err)
{
	reg_write(NPU_REG_FW_ERROR, err);
	reg_write(NPU_REG_FW_STATUS, NPU_FW_STATE_ERROR);
	raise_irq(1u << NPU_IRQ_FW);
	for (;;)
		__asm__ volatile("wfi");
}

/* Read and check the boot parameters; 0 means none were given. */
static bool read_params(void)
{
	uint64_t addr = reg_read(NPU_REG_BOOT_PARAMS_LO) |
			(uint64_t)reg_read(NPU_REG_BOOT_PARAMS_HI) << 32;

	memset(&params, 0, sizeof(params));
	if (!addr)
		return true;
	if (dma_copy(NPU_DMA_SPACE_BUS, addr, NPU_DMA_SPACE_SRAM,
		     sram_addr(&params), sizeof(params), 0))
		return false;
	if (params.magic != NPU_BOOT_PARAMS_MAGIC ||
	    params.version != NPU_BOOT_PARAMS_VERSION ||
	    params.size < sizeof(params) || params.flags)
		return false;
	for (unsigned int i = 0; i < sizeof(params.reserved) / 4; i++)
		if (params.reserved[i])
			return false;
	if (params.log_size && (!params.log_addr || params.log_size < NPU_FW_LOG_MIN_SIZE ||
				(params.log_size & (params.log_size - 1))))
		return false;
	return true;
}

static void arm_timer(uint64_t t)
{
	ctl_write(NPU_CTL_TIMER_CMP_LO, (uint32_t)t);
	ctl_write(NPU_CTL_TIMER_CMP_HI, (uint32_t)(t >> 32));
}

/* Called between jobs and between commands too: a long job is not a hang. */
void heartbeat_poll(void)
{
	uint64_t now = fw_time();

	if (!period || now < next_beat)	/* not before the boot parameters */
		return;
	reg_write(NPU_REG_FW_HEARTBEAT, reg_read(NPU_REG_FW_HEARTBEAT) + 1);
	next_beat = now + period;
	arm_timer(next_beat);
}

int main(void)
{
	uint64_t cmd_caps;
	uint32_t hw_caps;

	reg_write(NPU_REG_FW_STATUS, NPU_FW_STATE_BOOTING);
	if (!read_params())
		fail(NPU_FW_ERR_BOOT_PARAMS);
	log_init(params.log_addr, params.log_size);
	period = (uint64_t)(params.heartbeat_ms ? params.heartbeat_ms
						: NPU_FW_HEARTBEAT_MS_DEFAULT) * 1000000u;
	next_beat = fw_time() + period;	/* the first beat is one period away */

	/* What the hardware's profile has, the firmware offers. */
	hw_caps = reg_read(NPU_REG_HW_CAPS);
	cmd_caps = 1u << NPU_CMD_NOP | 1u << NPU_CMD_DMA_COPY | 1u << NPU_CMD_DMA_FILL |
		   1u << NPU_CMD_TIMESTAMP | 1u << NPU_CMD_BARRIER;
	if (hw_caps & NPU_HW_CAP_INT8)
		cmd_caps |= NPU_CMD_CAPS_INFER;
	if (hw_caps & NPU_HW_CAP_TRAIN)
		cmd_caps |= NPU_CMD_CAPS_TRAIN;
	reg_write(NPU_REG_FW_VERSION, FW_VERSION_CODE);
	reg_write(NPU_REG_FW_API, NPU_FW_API_MAJOR << 16 | NPU_FW_API_MINOR);
#define FW_MODE(n) (hw_caps & NPU_HW_CAP_##n ? NPU_FW_CAP_##n : 0) |
	reg_write(NPU_REG_FW_CAPS, NPU_FW_CAP_HEARTBEAT | NPU_FW_CAP_TIMESTAMPS |
		  (params.log_size ? NPU_FW_CAP_LOG : 0) | NPU_CMD_MODES(FW_MODE) 0);
#undef FW_MODE
	reg_write(NPU_REG_FW_CMD_CAPS, (uint32_t)cmd_caps);
	reg_write(NPU_REG_FW_CMD_CAPS_HI, (uint32_t)(cmd_caps >> 32));
	fw_log("npu-fw %u.%u.%u (api %u.%u) ready: %u rings, %u KiB SRAM, heartbeat %u ms",
	       FW_VERSION_MAJOR, FW_VERSION_MINOR, FW_VERSION_PATCH,
	       NPU_FW_API_MAJOR, NPU_FW_API_MINOR, (unsigned int)reg_read(NPU_REG_NUM_RINGS),
	       (unsigned int)(reg_read(NPU_REG_SRAM_SIZE) / 1024),
	       (unsigned int)(period / 1000000u));
	reg_write(NPU_REG_FW_STATUS, NPU_FW_STATE_READY);
	raise_irq(1u << NPU_IRQ_FW);

	next_beat = fw_time() + period;
	arm_timer(next_beat);
	for (;;) {
		bool more = false;

		/* No job is running here: an engine reset has nothing to abort. */
		engine_reset_ack();
		ctl_write(NPU_CTL_EVENTS, ctl_read(NPU_CTL_EVENTS));
		/* A bounded batch per ring per pass: no ring starves the others. */
		for (unsigned int r = 0; r < NPU_NUM_RINGS; r++)
			more |= jobs_service_ring(r);
		heartbeat_poll();
		if (!more && !ctl_read(NPU_CTL_EVENTS))
			__asm__ volatile("wfi");
	}
}
