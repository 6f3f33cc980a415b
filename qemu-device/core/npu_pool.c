// SPDX-License-Identifier: MIT
/*
 * npu_pool.c - the engine's helper threads, kept between commands.
 *
 * Starting and joining threads for every GEMM cost tens of microseconds a
 * command, as much as a small layer's work. Each thread that hands out
 * work (the engine's thread, or a test's or benchmark's own) gets a pool
 * of helpers on first need, grown to the most it has asked for and
 * joined when that thread exits (a thread-specific key's destructor).
 * One caller per pool, so a batch needs no queue: a generation count
 * wakes the helpers, a counter says when the last one is done. Helpers
 * only compute on host buffers the caller owns; stop checks are the
 * work's own (the items call npu_eng_stop()).
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "npu_pool.h"

#define MAX_HELPERS 63

struct pool;

struct helper {
	struct pool *pool;
	unsigned int idx;	/* runs item idx + 1 of a batch */
	uint64_t gen0;		/* the generation when it was started */
};

struct pool {
	pthread_mutex_t lock;	/* guards everything below */
	pthread_cond_t go, done;
	pthread_t tid[MAX_HELPERS];
	struct helper arg[MAX_HELPERS];
	unsigned int helpers;	/* started */
	uint64_t gen;		/* moved on for each batch */
	bool quit;
	void *(*fn)(void *);
	char *items;
	size_t size;
	unsigned int count;	/* items of this batch */
	unsigned int left;	/* of them, still running on helpers */
};

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static bool pool_key_ok;

static void *helper_main(void *opaque)
{
	struct helper *h = opaque;
	struct pool *p = h->pool;
	uint64_t seen = h->gen0;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->gen == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->quit)
			break;
		seen = p->gen;
		if (h->idx + 1 < p->count) {
			void *(*fn)(void *) = p->fn;
			void *item = p->items + (size_t)(h->idx + 1) * p->size;

			pthread_mutex_unlock(&p->lock);
			fn(item);
			pthread_mutex_lock(&p->lock);
			if (!--p->left)
				pthread_cond_signal(&p->done);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The key's destructor: the owning thread is exiting. */
static void pool_free(void *opaque)
{
	struct pool *p = opaque;

	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->helpers; i++)
		pthread_join(p->tid[i], NULL);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static void pool_key_init(void)
{
	pool_key_ok = !pthread_key_create(&pool_key, pool_free);
}

/* The calling thread's pool, made on first use; NULL without memory. */
static struct pool *my_pool(void)
{
	struct pool *p;

	pthread_once(&pool_once, pool_key_init);
	if (!pool_key_ok)
		return NULL;
	p = pthread_getspecific(pool_key);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (pthread_mutex_init(&p->lock, NULL))
		goto free_pool;
	if (pthread_cond_init(&p->go, NULL))
		goto free_lock;
	if (pthread_cond_init(&p->done, NULL))
		goto free_go;
	if (pthread_setspecific(pool_key, p))
		goto free_done;
	return p;
free_done:
	pthread_cond_destroy(&p->done);
free_go:
	pthread_cond_destroy(&p->go);
free_lock:
	pthread_mutex_destroy(&p->lock);
free_pool:
	free(p);
	return NULL;
}

/* Start helpers until there are @want; called with the lock held. */
static void grow(struct pool *p, unsigned int want)
{
	sigset_t all, old;

	if (want > MAX_HELPERS)
		want = MAX_HELPERS;
	if (p->helpers >= want)
		return;
	/* The embedder's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (p->helpers < want) {
		struct helper *h = &p->arg[p->helpers];

		*h = (struct helper){ p, p->helpers, p->gen };
		if (pthread_create(&p->tid[p->helpers], NULL, helper_main, h))
			break;
		p->helpers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void npu_run_parallel(void *(*fn)(void *), void *items, size_t size, unsigned int count)
{
	struct pool *p = count > 1 ? my_pool() : NULL;
	unsigned int n = 0;

	if (p) {
		pthread_mutex_lock(&p->lock);
		grow(p, count - 1);
		n = count - 1 < p->helpers ? count - 1 : p->helpers;
		p->fn = fn;
		p->items = items;
		p->size = size;
		p->count = n + 1;
		p->left = n;
		p->gen++;
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->lock);
	}
	if (count)
		fn(items);
	for (unsigned int i = n + 1; i < count; i++)	/* no helper for these */
		fn((char *)items + (size_t)i * size);
	if (p) {
		pthread_mutex_lock(&p->lock);
		while (p->left)
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
}
