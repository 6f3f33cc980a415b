/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a minimal TAP producer for the host tests: each TEST is one
 * "ok"/"not ok" line; a failed CHECK ends its test and says what differed.
 */
#ifndef TAP_H
#define TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

extern int tap_failed_checks;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		tap_failed_checks++;					\
		return;							\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);		\
	if (a_ != b_) {							\
		printf("#   %s:%d: %s == %s failed: 0x%" PRIx64 " != 0x%" PRIx64 "\n", \
		       __FILE__, __LINE__, #a, #b, a_, b_);		\
		tap_failed_checks++;					\
		return;							\
	}								\
} while (0)

struct tap_test {
	const char *name;
	void (*fn)(void);
};

#define TAP_ENTRY(fn) { #fn, fn }

/* Runs every test, prints the plan, returns the exit status. */
static inline int tap_run(const struct tap_test *t, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		int before = tap_failed_checks;

		t[i].fn();
		if (tap_failed_checks != before)
			failed++;
		printf("%sok %zu - %s\n", tap_failed_checks != before ? "not " : "",
		       i + 1, t[i].name);
		fflush(stdout);
	}
	printf("1..%zu\n", n);
	return failed ? 1 : 0;
}

#define TAP_MAIN(...)							\
	int tap_failed_checks;						\
	int main(void)							\
	{								\
		static const struct tap_test tests[] = { __VA_ARGS__ };	\
		return tap_run(tests, sizeof(tests) / sizeof(tests[0]));	\
	}

#endif /* TAP_H */
