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
#include <string.h>

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

/* Is @name among the @argc names of the command line (all when none)? */
static inline int tap_selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

/*
 * Runs the tests named on the command line (every test when none; an
 * unknown name is an error), prints the plan, returns the exit status.
 */
static inline int tap_run(const struct tap_test *t, size_t n, int argc, char **argv)
{
	size_t run = 0;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		size_t k = 0;

		while (k < n && strcmp(t[k].name, argv[i]))
			k++;
		if (k == n) {
			fprintf(stderr, "%s: no test named %s; the tests are:\n", argv[0], argv[i]);
			for (k = 0; k < n; k++)
				fprintf(stderr, "  %s\n", t[k].name);
			return 2;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int before = tap_failed_checks;

		if (!tap_selected(t[i].name, argc, argv))
			continue;
		t[i].fn();
		if (tap_failed_checks != before)
			failed++;
		printf("%sok %zu - %s\n", tap_failed_checks != before ? "not " : "",
		       ++run, t[i].name);
		fflush(stdout);
	}
	printf("1..%zu\n", run);
	return failed ? 1 : 0;
}

/*
 * Sanitizer options built into every test, so a test run by hand behaves as
 * under make check. intercept_tls_get_addr=0: up to GCC 13 the runtime's
 * __tls_get_addr interceptor takes a dynamic TLS block that happens to start
 * 16 bytes into a page for a glibc 2.19 block header and records the two
 * words before it as the block's range. Since glibc 2.25 there is no such
 * header, so the range is garbage, and LeakSanitizer's tracer crashes
 * scanning it at exit; PoCL's threads, with LLVM's dynamic TLS, make that
 * likely. The cost: dynamic TLS is not scanned for pointers, which only
 * the OpenCL runtime, whose leaks are suppressed below, keeps there.
 */
#define TAP_SANITIZER_OPTIONS						\
	const char *__asan_default_options(void);			\
	const char *__asan_default_options(void)			\
	{								\
		return "intercept_tls_get_addr=0";			\
	}								\
	TAP_LSAN_SUPPRESSIONS

/*
 * What the OpenCL runtime (PoCL, its LLVM, the ICD loader) keeps allocated
 * until exit is not ours to find; libnpu's own allocations are checked.
 */
#define TAP_LSAN_SUPPRESSIONS						\
	const char *__lsan_default_suppressions(void);			\
	const char *__lsan_default_suppressions(void)			\
	{								\
		return "leak:libpocl\nleak:libLLVM\nleak:libclang\nleak:libOpenCL\n"; \
	}

#define TAP_MAIN(...)							\
	TAP_SANITIZER_OPTIONS						\
	int tap_failed_checks;						\
	int main(int argc, char **argv)					\
	{								\
		static const struct tap_test tests[] = { __VA_ARGS__ };	\
		return tap_run(tests, sizeof(tests) / sizeof(tests[0]), argc, argv); \
	}

#endif /* TAP_H */
