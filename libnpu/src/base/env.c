// SPDX-License-Identifier: MIT
/*
 * env.c - how libnpu reads its environment, in one place. Every variable is
 * read with secure_getenv(), so a set-user-ID or set-group-ID program that
 * links libnpu cannot be steered to another library, cache folder or
 * placement by whoever starts it. A boolean variable is false when unset or
 * empty, "0" for false and "1" for true; anything else is an error, so a
 * typo is reported rather than read as false.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

const char *npu_env(const char *name)
{
	return secure_getenv(name);
}

int npu_env_u64(const char *name, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *val)
{
	const char *v = npu_env(name);
	char *end;
	unsigned long long n;

	*val = def;
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || *v == '-' || n < lo || n > hi)
		return NPU_EINVAL;
	*val = n;
	return 0;
}

int npu_env_bool(const char *name, int *val)
{
	const char *v = npu_env(name);

	*val = 0;
	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1")) {
		*val = 1;
		return 0;
	}
	return NPU_EINVAL;
}
