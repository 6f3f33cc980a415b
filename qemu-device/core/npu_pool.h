/* SPDX-License-Identifier: MIT */
/* npu_pool.h - the engine's helper threads, kept between commands (npu_pool.c). */
#ifndef NPU_POOL_H
#define NPU_POOL_H

#include <stddef.h>

/*
 * Run @fn on each of @count items of @size bytes at @items: the first on
 * the calling thread, the others on the calling thread's helpers (started
 * on first need and kept), or here too where one cannot be started;
 * returns when all are done. One call at a time per calling thread.
 */
void npu_run_parallel(void *(*fn)(void *), void *items, size_t size, unsigned int count);

#endif /* NPU_POOL_H */
