/* SPDX-License-Identifier: MIT */
/* fw.h - the firmware's view of its device, and its internal interfaces. */
#ifndef FW_H
#define FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu_cmd.h"
#include "npu_fw.h"
#include "npu_hw.h"

#define FW_VERSION_CODE	((FW_VERSION_MAJOR << 16) | (FW_VERSION_MINOR << 8) | FW_VERSION_PATCH)

static inline uint32_t mmio_read(uint32_t addr)
{
	return *(volatile uint32_t *)(uintptr_t)addr;
}

static inline void mmio_write(uint32_t addr, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)addr = val;
}

static inline uint32_t reg_read(uint32_t off)
{
	return mmio_read(NPU_CORE_HOSTREG_BASE + off);
}

static inline void reg_write(uint32_t off, uint32_t val)
{
	mmio_write(NPU_CORE_HOSTREG_BASE + off, val);
}

static inline uint32_t ctl_read(uint32_t off)
{
	return mmio_read(NPU_CORE_CTL_BASE + off);
}

static inline void ctl_write(uint32_t off, uint32_t val)
{
	mmio_write(NPU_CORE_CTL_BASE + off, val);
}

/* Read a LO/HI pair; reading LO latches HI. */
static inline uint64_t ctl_read64(uint32_t lo_off)
{
	uint32_t lo = ctl_read(lo_off);

	return (uint64_t)ctl_read(lo_off + 4) << 32 | lo;
}

static inline uint64_t fw_time(void)
{
	return ctl_read64(NPU_CTL_TIME_LO);
}

static inline void raise_irq(uint32_t bits)
{
	ctl_write(NPU_CTL_IRQ_RAISE, bits);
}

/* dma.c: returns enum npu_job_status. */
uint32_t dma_copy(unsigned int src_space, uint64_t src, unsigned int dst_space,
		  uint64_t dst, uint32_t len, uint32_t ctx);
uint32_t dma_fill(uint64_t dst, uint32_t len, uint32_t pattern, uint32_t ctx);
uint64_t dma_fault_addr(void);
/* Wait for the engine of @status_reg to end; returns its status. */
uint32_t engine_wait(uint32_t status_reg);

/* Local SRAM address of an object, as a DMA address. */
static inline uint64_t sram_addr(const void *p)
{
	return (uintptr_t)p;
}

/* log.c */
void log_init(uint64_t addr, uint32_t size);
void fw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* jobs.c: returns true if the ring still has jobs (budget spent). */
bool jobs_service_ring(unsigned int r);
void engine_reset_ack(void);

/* main.c: beat the heartbeat if its period has passed. */
void heartbeat_poll(void);

/* lib.c */
void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

#endif /* FW_H */
