// SPDX-License-Identifier: MIT
/*
 * registry.c - which backends there are: libnpu's own, registered here and
 * nowhere else (a new backend is its folder and one line below), and an
 * application's, between OpenCL and oneDNN. Placement asks
 * them in this order; the order breaks ties and names the fallback chain.
 */
#include <pthread.h>
#include <string.h>

#include "backends/backend.h"
#include "base/base.h"

/* Internal to libnpu: kept out of libnpu.so's exported symbols. */
#pragma GCC visibility push(hidden)
extern const struct npu_backend_ops backend_npu_ops;
extern const struct npu_backend_ops backend_opencl_ops;
extern const struct npu_backend_ops backend_onednn_ops;
extern const struct npu_backend_ops backend_cpu_ops;
#pragma GCC visibility pop

static const struct builtin {
	const struct npu_backend_ops *ops;
	enum npu_backend id;
} builtin_first[] = {
	{ &backend_npu_ops, NPU_BACKEND_NPU },
	{ &backend_opencl_ops, NPU_BACKEND_OPENCL },
}, builtin_last[] = {		/* after an application's */
	{ &backend_onednn_ops, NPU_BACKEND_ONEDNN },
	{ &backend_cpu_ops, NPU_BACKEND_CPU },
};

#define NFIRST ((int)(sizeof(builtin_first) / sizeof(builtin_first[0])))
#define NLAST ((int)(sizeof(builtin_last) / sizeof(builtin_last[0])))
#define BUILTINS (NFIRST + NLAST)

/* lock guards apps[] and napps: registration may race with compiles. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct backend_entry apps[BACKENDS_MAX - BUILTINS];
static int napps;

static int name_taken(const char *name)
{
	for (int i = 0; i < NFIRST; i++)
		if (!strcmp(builtin_first[i].ops->name, name))
			return 1;
	for (int i = 0; i < NLAST; i++)
		if (!strcmp(builtin_last[i].ops->name, name))
			return 1;
	if (!strcmp(name, "auto") || !strcmp(name, "none"))
		return 1;
	for (int i = 0; i < napps; i++)
		if (!strcmp(apps[i].ops.name, name))
			return 1;
	return 0;
}

int npu_backend_register_v(size_t size, const struct npu_backend_ops *ops, void *ctx)
{
	struct backend_entry e = { .ctx = ctx, .id = NPU_BACKEND_CUSTOM };
	int err;

	if (!ops)
		return npu_fail(NULL, NPU_EINVAL, "npu_backend_register: no table");
	err = npu_struct_in(&e.ops, sizeof(e.ops), ops, size);
	if (err)
		return npu_fail(NULL, err, "npu_backend_register: a table of %zu bytes", size);
	if (!e.ops.name || !*e.ops.name || strlen(e.ops.name) > 15 || !e.ops.claim ||
	    !e.ops.compile || !e.ops.execute || !e.ops.release)
		return npu_fail(NULL, NPU_EINVAL, "npu_backend_register: a backend needs a name of "
				"1-15 characters, claim, compile, execute and release");
	if (!(e.ops.flags & NPU_BACKEND_F_HOST_MEMORY) && (!e.ops.import || !e.ops.copy ||
							   !e.ops.free_mem))
		return npu_fail(NULL, NPU_EINVAL, "npu_backend_register: %s: a backend with memory "
				"of its own needs import, copy and free_mem", e.ops.name);
	if (e.ops.alloc && (!e.ops.free_mem || !(e.ops.flags & NPU_BACKEND_F_HOST_MEMORY)))
		return npu_fail(NULL, NPU_EINVAL, "npu_backend_register: %s: alloc is for memory "
				"the host maps (NPU_BACKEND_F_HOST_MEMORY), with free_mem",
				e.ops.name);
	pthread_mutex_lock(&lock);
	if (name_taken(e.ops.name))
		err = npu_fail(NULL, NPU_EBUSY, "npu_backend_register: %s is taken", e.ops.name);
	else if (napps == BACKENDS_MAX - BUILTINS)
		err = npu_fail(NULL, NPU_ENOSPC, "npu_backend_register: %d backends at most",
			       BACKENDS_MAX);
	else
		apps[napps++] = e;
	pthread_mutex_unlock(&lock);
	return err;
}

int npu_backend_unregister(const char *name)
{
	int err = NPU_EINVAL;

	if (!name)
		return npu_fail(NULL, NPU_EINVAL, "npu_backend_unregister: no name");
	pthread_mutex_lock(&lock);
	for (int i = 0; i < napps; i++)
		if (!strcmp(apps[i].ops.name, name)) {
			memmove(&apps[i], &apps[i + 1], sizeof(apps[0]) * (size_t)(napps - i - 1));
			napps--;
			err = 0;
			break;
		}
	pthread_mutex_unlock(&lock);
	return err ? npu_fail(NULL, err, "npu_backend_unregister: no backend %s that an "
			      "application registered", name) : 0;
}

int backends_snapshot(struct backend_entry *out, int max)
{
	int n = 0;

	if (max < BUILTINS)
		return 0;
	for (int i = 0; i < NFIRST; i++)
		out[n++] = (struct backend_entry){ *builtin_first[i].ops, NULL, builtin_first[i].id };
	pthread_mutex_lock(&lock);
	for (int i = 0; i < napps && n < max - NLAST; i++)
		out[n++] = apps[i];
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < NLAST; i++)
		out[n++] = (struct backend_entry){ *builtin_last[i].ops, NULL, builtin_last[i].id };
	return n;
}
