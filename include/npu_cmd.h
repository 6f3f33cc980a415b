/* SPDX-License-Identifier: MIT */
/*
 * npu_cmd.h - the command stream: what a job's command buffer holds.
 *
 * Written by libnpu, read only by the firmware and the engines; the kernel
 * never parses it. A command buffer is a sequence of commands, each starting
 * with struct npu_cmd_hdr and taking hdr.size bytes (a multiple of 8, at
 * least 8, at most NPU_CMD_MAX_SIZE). Commands run in order; a malformed or
 * unknown one ends the job with NPU_JOB_INVALID_CMD and the completion's
 * error_offset names it. Addresses are device virtual addresses in the
 * job's context. Documentation/command-stream.rst explains it.
 */
#ifndef NPU_CMD_H
#define NPU_CMD_H

#include "npu_types.h"

/** enum npu_cmd_op - command opcodes; NPU_REG_FW_CMD_CAPS bit n = op n */
enum npu_cmd_op {
	NPU_CMD_NOP = 1,	/* any size >= 8; pads a buffer */
	NPU_CMD_DMA_COPY = 2,	/* struct npu_cmd_dma_copy */
	NPU_CMD_DMA_FILL = 3,	/* struct npu_cmd_dma_fill */
	NPU_CMD_TIMESTAMP = 4,	/* struct npu_cmd_timestamp */
	NPU_CMD_BARRIER = 5,	/* wait for earlier engine work; 8 bytes */
};
#define NPU_CMD_MAX_SIZE	256

/**
 * struct npu_cmd_hdr - first 8 bytes of every command.
 * @op: enum npu_cmd_op.
 * @size: bytes of the command including this header.
 */
struct npu_cmd_hdr {
	uint32_t op;
	uint32_t size;
};

/**
 * struct npu_cmd_dma_copy - copy @len bytes from @src to @dst.
 * @hdr: op NPU_CMD_DMA_COPY, size 32.
 * @src: source VA (readable).
 * @dst: destination VA (writable).
 * @len: bytes, at most NPU_DMA_MAX_LEN. Overlapping ranges give an
 *	unspecified result in the overlap.
 */
struct npu_cmd_dma_copy {
	struct npu_cmd_hdr hdr;
	uint64_t src;
	uint64_t dst;
	uint64_t len;
};

/**
 * struct npu_cmd_dma_fill - fill @len bytes at @dst with @pattern.
 * @hdr: op NPU_CMD_DMA_FILL, size 32.
 * @dst: destination VA (writable).
 * @len: bytes, at most NPU_DMA_MAX_LEN; byte i gets byte (i % 4) of
 *	@pattern in little-endian order.
 * @pattern: 32-bit pattern.
 * @reserved: must be zero.
 */
struct npu_cmd_dma_fill {
	struct npu_cmd_hdr hdr;
	uint64_t dst;
	uint64_t len;
	uint32_t pattern;
	uint32_t reserved;
};

/**
 * struct npu_cmd_timestamp - write the device time (ns, 64-bit) to @dst.
 * @hdr: op NPU_CMD_TIMESTAMP, size 16.
 * @dst: destination VA, 8-byte aligned.
 */
struct npu_cmd_timestamp {
	struct npu_cmd_hdr hdr;
	uint64_t dst;
};

#endif /* NPU_CMD_H */
