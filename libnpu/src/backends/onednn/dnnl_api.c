// SPDX-License-Identifier: MIT
/* dnnl_api.c - oneDNN found at run time (dnnl_api.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "backends/onednn/dnnl_api.h"

static struct dnnl_api api;
static char api_why[160];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	static const struct { const char *name; size_t off; } fns[] = {
#define X(n) { "dnnl_" #n, offsetof(struct dnnl_api, n) },
		DNNL_FNS(X)
#undef X
	};
	const char *name = npu_env("NPU_ONEDNN_LIB");
	void *lib;

	if (!name || !*name)
		name = "libdnnl.so.2";
	lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(api_why, sizeof(api_why), "no oneDNN: cannot load %s (%s); install "
			 "libdnnl2", name, dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(lib, fns[i].name);

		if (!f) {
			snprintf(api_why, sizeof(api_why), "no oneDNN: %s lacks %s", name,
				 fns[i].name);
			dlclose(lib);
			return;
		}
		memcpy((char *)&api + fns[i].off, &f, sizeof(f));
	}
	api.lib = lib;	/* kept: its OpenMP threads live as long as the process */
}

const struct dnnl_api *dnnl_api_get(char *why, size_t len)
{
	pthread_once(&once, load);
	if (!api.lib) {
		snprintf(why, len, "%s", api_why);
		return NULL;
	}
	return &api;
}
