/* SPDX-License-Identifier: MIT */
/*
 * isa.h - run a test case once per engine kernel ISA the host has
 * (NPU_ENGINE_ISA), naming those it skips; only on the one NPU_ENGINE_ISA
 * names when the environment sets it (make check's second run of the
 * engine tests, on the portable kernel, repeats no other).
 */
#ifndef ISA_H
#define ISA_H

#include <stdlib.h>
#include <string.h>

#include "npu_gemm.h"
#include "tap.h"

static inline void on_every_isa(const char *what, void (*fn)(const char *isa))
{
	const char *saved = getenv("NPU_ENGINE_ISA");
	char *keep = saved ? strdup(saved) : NULL;
	const char *isa;
	int ran = 0;

	for (unsigned int i = 0; (isa = npu_gemm_isa_name(i)); i++) {
		if (keep && strcmp(keep, isa))
			continue;
		if (!npu_gemm_isa_supported(isa)) {
			printf("# %s kernel %s: skipped, not on this host\n", what, isa);
			continue;
		}
		setenv("NPU_ENGINE_ISA", isa, 1);
		if (strcmp(npu_gemm_isa(), isa)) {
			printf("#   %s: NPU_ENGINE_ISA=%s not taken\n", what, isa);
			tap_failed_checks++;
			break;
		}
		printf("# %s kernel %s\n", what, isa);
		fn(isa);
		ran = 1;
	}
	if (!ran) {	/* NPU_ENGINE_ISA names no kernel this host has: the one taken */
		printf("# %s kernel %s (NPU_ENGINE_ISA=%s is not one here)\n", what,
		       npu_gemm_isa(), keep ? keep : "");
		fn(npu_gemm_isa());
	}
	if (keep)
		setenv("NPU_ENGINE_ISA", keep, 1);
	else
		unsetenv("NPU_ENGINE_ISA");
	free(keep);
}

#endif
