/*
 * test_fuzz_corpus.c - the fuzz target replayed over its seed corpus, so
 * `make check` runs it with the compiler and sanitizers of the build
 * (libFuzzer itself needs clang: `make fuzz`).  A difference from the
 * reference aborts.  TS_FUZZ_CORPUS names another corpus directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define FUZZ_REPLAY_NO_MAIN
#include "fuzz_algorithms.c"
#include "replay.c"

static void replay_corpus(void **unused)
{
	const char *dir = getenv("TS_FUZZ_CORPUS");
	unsigned int count = 0;

	(void)unused;
	if (!dir)
		dir = "fuzz/corpus";
	LLVMFuzzerInitialize(NULL, NULL);
	assert_int_equal(fuzz_replay_path(dir, &count), 0);
	printf("# fuzz corpus: %u inputs from %s, no difference\n", count, dir);
	assert_true(count >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replay_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
