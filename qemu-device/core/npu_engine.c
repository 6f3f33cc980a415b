// SPDX-License-Identifier: MIT
/*
 * npu_engine.c - the engines' own thread. DMA transfers, tensor ops and
 * the boot ROM's image load run here, beside the control core, so no
 * command a guest can build holds the embedder's thread (QEMU's main loop
 * and its big lock): a store to DMA_CTRL or TENSOR_CTRL only latches the
 * operation, and its result is taken in by npu_core_run() once the thread
 * says it has ended (ops->engine_done).
 *
 * One thread serves all engines: the firmware waits for each operation
 * before it starts the next, so at most one live operation exists. A
 * reset, halt or boot moves core->reset_gen on: the running operation
 * stops at its next block (npu_eng_stop) and its result is dropped, while
 * the next one waits in the second slot.
 *
 * Each command is charged the host memory of its temporaries
 * (npu_eng_alloc) and its multiply-accumulates, whether it ends well or
 * not; over cmd_mem_mib or cmd_max_mmacs it fails with NPU_JOB_LIMIT.
 */
#define _POSIX_C_SOURCE 200809L	/* clock_gettime, pthread_cond_timedwait */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "npu_core_priv.h"
#include "npu_pool.h"

static bool stale(const struct npu_core *core, const struct npu_eng_req *r)
{
	return r->gen != atomic_load(&core->reset_gen);
}

static void execute(struct npu_core *core, struct npu_eng_req *r)
{
	r->status = NPU_JOB_INVALID_CMD;
	r->fault = r->bytes = r->cycles = 0;
	r->irqs = 0;
	r->mem_used = r->macs_used = r->moved = r->work = 0;
	switch (r->kind) {
	case NPU_ENG_DMA:
		npu_dma_exec(core, r);
		break;
	case NPU_ENG_TENSOR:
		npu_tensor_exec(core, r);
		break;
	case NPU_ENG_BOOT:
		npu_bootrom_load(core, r);
		break;
	}
	npu_trace(core, NPU_TRACE_ENGINE_END, r->kind, r->status, r->cycles);
}

/* Hand the result in @run to the collector; true if it is worth collecting. */
static bool publish(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;
	bool live = !stale(core, &e->run);

	/*
	 * Ended while parking was asked (it did not park in time) or while
	 * saving: its last writes may have missed a migration's RAM.
	 */
	e->run.late = atomic_load(&e->park) || atomic_load(&e->saving);
	/* An uncollected stale result may be replaced; a live one never is. */
	if (live && (!e->done_valid || stale(core, &e->done))) {
		e->done = e->run;
		e->done_valid = true;
		atomic_store(&e->done_pending, true);
	}
	return live;
}

static void *engine_thread(void *opaque)
{
	struct npu_core *core = opaque;
	struct npu_engine *e = &core->eng;

	if (core->ops->thread_start)
		core->ops->thread_start(core->opaque);
	pthread_mutex_lock(&e->lock);
	for (;;) {
		bool live;

		while ((!e->queued_valid || atomic_load(&e->paused)) && !e->stopping)
			pthread_cond_wait(&e->cond, &e->lock);
		if (e->stopping)
			break;
		e->run = e->queued;
		e->queued_valid = false;
		e->running = true;
		pthread_mutex_unlock(&e->lock);

		if (!stale(core, &e->run))
			execute(core, &e->run);

		pthread_mutex_lock(&e->lock);
		live = publish(core);
		e->running = false;
		pthread_cond_broadcast(&e->cond);
		if (live && core->ops->engine_done) {
			pthread_mutex_unlock(&e->lock);
			core->ops->engine_done(core->opaque);
			pthread_mutex_lock(&e->lock);
		}
	}
	pthread_mutex_unlock(&e->lock);
	if (core->ops->thread_stop)
		core->ops->thread_stop(core->opaque);
	return NULL;
}

int npu_engine_init(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;
	sigset_t all, old;
	pthread_condattr_t ca;
	bool cond_ok = false;
	int rc;

	e->bounce = malloc(NPU_DMA_BOUNCE);
	if (!e->bounce || pthread_mutex_init(&e->lock, NULL)) {
		free(e->bounce);
		e->bounce = NULL;	/* npu_engine_fini: nothing to destroy */
		return -1;
	}
	/* Timed waits (npu_core_pause) on the monotonic clock: no clock steps. */
	if (!pthread_condattr_init(&ca)) {
		cond_ok = !pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) &&
			  !pthread_cond_init(&e->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (!cond_ok) {
		pthread_mutex_destroy(&e->lock);
		free(e->bounce);
		e->bounce = NULL;
		return -1;
	}
	e->stopping = false;
	atomic_init(&e->done_pending, false);
	atomic_init(&e->paused, false);
	atomic_init(&e->park, false);
	atomic_init(&e->saving, false);
	e->parked = 0;
	if (core->cfg.engine_inline) {
		e->started = false;
		return 0;
	}
	/* The embedder's signals are for its own threads (QEMU does the same). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&e->thread, NULL, engine_thread, core);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	e->started = !rc;
	if (rc) {
		pthread_cond_destroy(&e->cond);
		pthread_mutex_destroy(&e->lock);
		free(e->bounce);
		e->bounce = NULL;
		return -1;
	}
	return 0;
}

/*
 * The running operation stops at its next check (it never waits for the
 * embedder: see npu_core.h) and the thread ends; later submissions queue
 * and never run. The core stays usable until npu_core_free().
 */
void npu_core_quiesce(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;

	if (!e->started)
		return;
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	atomic_fetch_add(&core->reset_gen, 1);	/* the running op stops */
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	pthread_join(e->thread, NULL);
	e->started = false;
}

void npu_engine_fini(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;

	npu_core_quiesce(core);
	npu_wcache_clear(core);		/* no thread left to use it */
	if (e->bounce) {
		pthread_cond_destroy(&e->cond);
		pthread_mutex_destroy(&e->lock);
	}
	free(e->bounce);
	e->bounce = NULL;
}

static void apply(struct npu_core *core, struct npu_eng_req *r)
{
	if (stale(core, r))
		return;
	switch (r->kind) {
	case NPU_ENG_DMA:
		core->dma.status = r->status;
		core->dma.fault = r->fault;
		break;
	case NPU_ENG_TENSOR:
		core->tensor.status = r->status;
		core->tensor.fault = r->fault;
		break;
	case NPU_ENG_BOOT:
		npu_core_boot_done(core, r);
		return;
	}
	core->perf_cycles += r->cycles;
	if (r->status == NPU_JOB_OK)
		core->perf_bytes += r->bytes;
	if (r->irqs)
		npu_core_raise_irq(core, r->irqs);
	core->events |= NPU_EV_ENGINE_DONE;
}

void npu_engine_collect(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;
	struct npu_eng_req r;

	if (!atomic_load(&e->done_pending))
		return;
	pthread_mutex_lock(&e->lock);
	if (!e->done_valid) {
		pthread_mutex_unlock(&e->lock);
		return;
	}
	r = e->done;
	e->done_valid = false;
	atomic_store(&e->done_pending, false);
	pthread_mutex_unlock(&e->lock);
	apply(core, &r);
}

void npu_engine_drop(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;

	pthread_mutex_lock(&e->lock);
	atomic_fetch_add(&core->reset_gen, 1);
	if (e->queued_valid && stale(core, &e->queued))
		e->queued_valid = false;
	pthread_cond_broadcast(&e->cond);	/* a parked op sees it is stale */
	pthread_mutex_unlock(&e->lock);
}

/*
 * A small DMA (a job's descriptor, its completion, a window of its
 * commands) runs in the caller's thread when the engine is idle and free
 * to run: the hand-off to the engine thread and back through the
 * embedder's main loop costs more than the copy. Same steps as the
 * thread's, @running set meanwhile, so pausing and waiting see it. True
 * if it ran.
 */
/* The core whose operation this thread runs inline, while it does. */
static _Thread_local const struct npu_core *inline_op;

bool npu_engine_in_op(const struct npu_core *core)
{
	return inline_op == core ||
	       (core->eng.started && pthread_equal(pthread_self(), core->eng.thread));
}

static bool run_small_inline(struct npu_core *core, struct npu_eng_req *req)
{
	struct npu_engine *e = &core->eng;

	if (req->kind != NPU_ENG_DMA || req->len > core->cfg.dma_inline_max || !e->started)
		return false;
	pthread_mutex_lock(&e->lock);
	if (e->queued_valid || e->running || e->stopping || atomic_load(&e->paused) ||
	    atomic_load(&e->park) || atomic_load(&e->saving)) {
		pthread_mutex_unlock(&e->lock);
		return false;
	}
	e->run = *req;
	e->running = true;
	pthread_mutex_unlock(&e->lock);
	inline_op = core;
	execute(core, &e->run);
	inline_op = NULL;
	pthread_mutex_lock(&e->lock);
	publish(core);
	e->running = false;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	npu_engine_collect(core);
	return true;
}

void npu_engine_submit(struct npu_core *core, struct npu_eng_req *req)
{
	struct npu_engine *e = &core->eng;
	uint32_t op;

	memcpy(&op, req->cmd, sizeof(op));	/* the tensor command's opcode */
	req->gen = atomic_load(&core->reset_gen);
	npu_trace(core, NPU_TRACE_ENGINE_START, req->kind,
		  req->kind == NPU_ENG_TENSOR ? op : req->ctrl, req->ctx);
	if (req->job && npu_fault_take(core, NPU_FAULT_ENGINE_HANG)) {
		/* Never starts, never ends: only an engine or device reset helps. */
		e->hung = true;
		e->hung_req = *req;
		return;
	}
	if (run_small_inline(core, req))
		return;
	if (core->cfg.engine_inline) {
		e->run = *req;
		execute(core, &e->run);
		pthread_mutex_lock(&e->lock);
		publish(core);
		pthread_mutex_unlock(&e->lock);
		npu_engine_collect(core);
		return;
	}
	pthread_mutex_lock(&e->lock);
	/* A live request still queued means a second start while busy: ignored. */
	if (!e->queued_valid || stale(core, &e->queued)) {
		e->queued = *req;
		e->queued_valid = true;
		pthread_cond_broadcast(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
}

void npu_engine_reset(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;

	if (!e->hung)
		return;
	e->hung = false;
	e->hung_req.status = NPU_JOB_ABORTED;
	e->hung_req.fault = e->hung_req.bytes = e->hung_req.cycles = 0;
	e->hung_req.irqs = 0;
	apply(core, &e->hung_req);
}

bool npu_core_engine_busy(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;
	bool busy;

	pthread_mutex_lock(&e->lock);
	busy = e->queued_valid || e->running;
	pthread_mutex_unlock(&e->lock);
	return busy;
}

bool npu_core_engine_running(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;
	bool running;

	pthread_mutex_lock(&e->lock);
	running = e->running;
	pthread_mutex_unlock(&e->lock);
	return running;
}

void npu_core_engine_wait(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;

	pthread_mutex_lock(&e->lock);
	while (e->queued_valid || e->running)
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

/* A paused engine waits here, at a stop check, until resumed or dropped. */
static void park(struct npu_core *core)
{
	struct npu_engine *e = &core->eng;

	pthread_mutex_lock(&e->lock);
	e->parked++;
	pthread_cond_broadcast(&e->cond);
	/* Saving ends the op (ABORTED), but not the boot ROM's: it stays parked. */
	while (atomic_load(&e->park) && !e->stopping && !stale(core, &e->run) &&
	       !(atomic_load(&e->saving) && e->run.kind != NPU_ENG_BOOT))
		pthread_cond_wait(&e->cond, &e->lock);
	e->parked--;
	pthread_mutex_unlock(&e->lock);
}

bool npu_eng_stop(struct npu_core *core)
{
	const struct npu_eng_req *r = &core->eng.run;

	if (atomic_load(&core->eng.park) && core->eng.started)
		park(core);
	if (atomic_load(&core->eng.saving) && r->kind != NPU_ENG_BOOT)
		return true;	/* its result is ABORTED (the boot ROM only reads) */
	return stale(core, r) || (r->job && atomic_load(&core->engine_abort));
}

static struct timespec after_ms(unsigned int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

void npu_core_pause(struct npu_core *core, bool pause, unsigned int drain_ms)
{
	struct npu_engine *e = &core->eng;
	struct timespec until;

	if (!e->started)
		return;
	pthread_mutex_lock(&e->lock);
	atomic_store(&e->paused, pause);
	if (!pause)
		atomic_store(&e->park, false);
	pthread_cond_broadcast(&e->cond);
	if (pause) {
		until = after_ms(drain_ms);
		while (e->running && !pthread_cond_timedwait(&e->cond, &e->lock, &until))
			;
		atomic_store(&e->park, true);
		until = after_ms(1000);
		while (e->running && !e->parked)
			if (pthread_cond_timedwait(&e->cond, &e->lock, &until))
				break;	/* a loop with no check yet: it parks later */
	}
	pthread_mutex_unlock(&e->lock);
}

void npu_engine_save(struct npu_core *core, struct npu_core_state *st)
{
	struct npu_engine *e = &core->eng;
	bool paused;

	pthread_mutex_lock(&e->lock);
	if (e->started) {
		/* Nothing new starts; the running op (not a boot) ends now. */
		paused = atomic_load(&e->paused);
		atomic_store(&e->paused, true);
		atomic_store(&e->saving, true);
		pthread_cond_broadcast(&e->cond);
		while (e->running && e->run.kind != NPU_ENG_BOOT)
			pthread_cond_wait(&e->cond, &e->lock);
		atomic_store(&e->saving, false);
		atomic_store(&e->paused, paused);
		pthread_cond_broadcast(&e->cond);
	}
	if (e->done_valid && !stale(core, &e->done) && e->done.kind != NPU_ENG_BOOT) {
		st->done_kind = e->done.kind;
		/* What it wrote after the VM stopped may not have travelled. */
		st->done_status = e->done.late && e->done.status == NPU_JOB_OK ?
				  NPU_JOB_ABORTED : e->done.status;
		st->done_irqs = e->done.irqs;
		st->done_fault = e->done.fault;
		st->done_bytes = e->done.bytes;
		st->done_cycles = e->done.cycles;
	}
	if (e->queued_valid && !stale(core, &e->queued) && e->queued.kind != NPU_ENG_BOOT) {
		st->restart_kind = e->queued.kind;
		st->restart_ctrl = e->queued.ctrl;
	}
	pthread_mutex_unlock(&e->lock);
	if (e->hung && !stale(core, &e->hung_req))
		st->hung_kind = e->hung_req.kind;
}

void npu_engine_load(struct npu_core *core, const struct npu_core_state *st)
{
	struct npu_engine *e = &core->eng;
	uint32_t gen = atomic_load(&core->reset_gen);

	if (st->hung_kind) {
		memset(&e->hung_req, 0, sizeof(e->hung_req));
		e->hung_req.kind = st->hung_kind;
		e->hung_req.gen = gen;
		e->hung_req.job = true;
		e->hung = true;
	}
	if (st->done_kind) {
		pthread_mutex_lock(&e->lock);
		memset(&e->done, 0, sizeof(e->done));
		e->done.kind = st->done_kind;
		e->done.gen = gen;
		e->done.status = st->done_status;
		e->done.irqs = st->done_irqs;
		e->done.fault = st->done_fault;
		e->done.bytes = st->done_bytes;
		e->done.cycles = st->done_cycles;
		e->done_valid = true;
		atomic_store(&e->done_pending, true);
		pthread_mutex_unlock(&e->lock);
	}
	/* Started again through the firmware's own path, which checks it. */
	if (st->restart_kind == NPU_ENG_DMA) {
		core->dma.status = NPU_JOB_OK;
		npu_dma_start(core, st->restart_ctrl);
	} else if (st->restart_kind == NPU_ENG_TENSOR) {
		core->tensor.status = NPU_JOB_OK;
		npu_tensor_start(core);
	}
}

bool npu_eng_stop_cb(void *arg)
{
	return npu_eng_stop(arg);
}

uint32_t npu_eng_threads(const struct npu_core *core, bool worth, uint64_t n)
{
	uint32_t t = core->cfg.engine_threads;

	if (!worth || t < 2)
		return 1;
	if (t > NPU_ENG_MAX_THREADS)
		t = NPU_ENG_MAX_THREADS;
	return n < t ? (n ? (uint32_t)n : 1) : t;
}

struct eng_range {
	bool (*fn)(void *arg, uint32_t t, uint64_t i0, uint64_t i1);
	void *arg;
	uint32_t t;
	uint64_t i0, i1;
	bool done;
};

static void *eng_range_run(void *arg)
{
	struct eng_range *r = arg;

	r->done = r->fn(r->arg, r->t, r->i0, r->i1);
	return NULL;
}

bool npu_eng_split(uint64_t n, uint32_t threads,
		   bool (*fn)(void *arg, uint32_t t, uint64_t i0, uint64_t i1), void *arg)
{
	struct eng_range r[NPU_ENG_MAX_THREADS];
	bool ok = true;

	if (threads < 1)
		threads = 1;
	if (threads > NPU_ENG_MAX_THREADS)
		threads = NPU_ENG_MAX_THREADS;
	for (uint32_t t = 0; t < threads; t++)
		r[t] = (struct eng_range){ .fn = fn, .arg = arg, .t = t, .i0 = n * t / threads,
					   .i1 = n * (t + 1) / threads };
	npu_run_parallel(eng_range_run, r, sizeof(r[0]), threads);
	for (uint32_t t = 0; t < threads; t++)
		ok &= r[t].done;
	return ok;
}

/*
 * Whether @n more bytes fit beside what the running command holds (an
 * overflow is remembered: the command fails LIMIT); @keep adds them to it.
 */
static bool charge_mem(struct npu_core *core, uint64_t n, bool keep)
{
	struct npu_eng_req *r = &core->eng.run;
	uint64_t limit = (uint64_t)core->cfg.cmd_mem_mib << 20;

	if (n > limit || r->mem_used > limit - n) {
		r->mem_used = limit + 1;
		return false;
	}
	if (keep)
		r->mem_used += n;
	return true;
}

bool npu_eng_reserve(struct npu_core *core, uint64_t n)
{
	return charge_mem(core, n, true);
}

/*
 * A GEMM kernel's packing, freed when the kernel returns (and asked again
 * by the next call, a convolution's next chunk): it must fit beside what
 * the command holds, but is not added to it.
 */
bool npu_eng_reserve_cb(void *arg, uint64_t n)
{
	return charge_mem(arg, n, false);
}

void *npu_eng_alloc(struct npu_core *core, uint64_t n)
{
	return npu_eng_reserve(core, n) ? malloc(n ? (size_t)n : 1) : NULL;
}

/* calloc: a large block comes zeroed from the OS, untouched until used. */
void *npu_eng_calloc(struct npu_core *core, uint64_t count, uint64_t size)
{
	if (size && count > UINT64_MAX / size)
		return NULL;
	if (!npu_eng_reserve(core, count * size))
		return NULL;
	return calloc(count ? (size_t)count : 1, size ? (size_t)size : 1);
}

bool npu_eng_charge_macs(struct npu_core *core, uint64_t macs)
{
	struct npu_eng_req *r = &core->eng.run;
	uint64_t limit = (uint64_t)core->cfg.cmd_max_mmacs * 1000000ull;

	if (macs > limit || r->macs_used > limit - macs) {
		r->macs_used = limit + 1;
		return false;
	}
	r->macs_used += macs;
	return true;
}

uint32_t npu_eng_status(struct npu_core *core, uint32_t st)
{
	const struct npu_eng_req *r = &core->eng.run;

	if (st == NPU_JOB_OK)
		return st;
	if (r->mem_used > (uint64_t)core->cfg.cmd_mem_mib << 20 ||
	    r->macs_used > (uint64_t)core->cfg.cmd_max_mmacs * 1000000ull)
		return NPU_JOB_LIMIT;
	if (npu_eng_stop(core))
		return NPU_JOB_ABORTED;
	return st;
}
