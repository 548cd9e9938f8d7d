/*
 * test_tspkt_fuzz_corpus.c - the packet fuzz target (fuzz/fuzz_packets.c)
 * replayed over its seed corpus fuzz/corpus-packets, so `make check` runs
 * tspkt's decoder, reassembly and skb_find_text() on every seed with the
 * compiler and sanitizers of the build (libFuzzer itself needs clang:
 * `make fuzz`).  A difference from the reference aborts.  Then the seeds
 * must still reach what they were made for: reassembly, each way a
 * datagram is dropped, and matches.  TS_FUZZ_PACKETS_CORPUS names another
 * corpus directory (only replayed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define FUZZ_REPLAY_NO_MAIN
#include "fuzz_packets.c"
#include "replay.c"

static void replay_corpus(void **unused)
{
	const char *dir = getenv("TS_FUZZ_PACKETS_CORPUS");
	const struct fuzz_pkt_totals *t = &fuzz_pkt_totals;
	const struct defrag_stats *s = &t->defrag;
	unsigned int count = 0;
	bool seeds = !dir;

	(void)unused;
	if (!dir)
		dir = "fuzz/corpus-packets";
	LLVMFuzzerInitialize(NULL, NULL);
	assert_int_equal(fuzz_replay_path(dir, &count), 0);
	printf("# packet fuzz corpus: %u inputs from %s, %lu frames, %lu "
	       "datagrams searched (%lu reassembled), %lu matches, no "
	       "difference\n",
	       count, dir, t->frames, t->datagrams, t->reassembled_searched,
	       t->matches);
	printf("# fragments=%llu reassembled=%llu timeouts=%llu overlaps=%llu "
	       "oversize=%llu evicted=%llu invalid=%llu\n",
	       (unsigned long long)s->fragments,
	       (unsigned long long)s->reassembled,
	       (unsigned long long)s->timeouts, (unsigned long long)s->overlaps,
	       (unsigned long long)s->oversize, (unsigned long long)s->evicted,
	       (unsigned long long)s->invalid);
	printf("# TCP: segments=%lu bytes=%lu gaps=%lu stream matches=%lu\n",
	       t->tcp_segments, t->tcp_bytes, t->tcp_gaps, t->tcp_matches);
	if (!seeds)
		return;
	assert_true(count >= 20);
	assert_int_equal(t->inputs, count);
	assert_true(t->reassembled_searched >= 10);
	assert_true(t->matches >= 20);
	assert_true(s->timeouts > 0);
	assert_true(s->overlaps >= 2);
	assert_true(s->oversize >= 3);
	assert_true(s->evicted > 0);
	assert_true(s->invalid > 0);
	/* the TCP seeds: reassembled, with a gap, the string found */
	assert_true(t->tcp_segments >= 20);
	assert_true(t->tcp_gaps >= 1);
	assert_true(t->tcp_matches >= 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replay_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
