/*
 * bench_utf8.h - the TS_UTF8 section of the bench (bench_utf8.c).
 */
#ifndef BENCH_UTF8_H
#define BENCH_UTF8_H

#include <textsearch.h>

#include <stddef.h>

/* Runs argv with stdout read back; wall seconds or -1, the child's CPU
 * seconds in *cpu (bench.c). */
double bench_run_process(char *const argv[], char *out, size_t outsz,
			 double *cpu);

/*
 * Time TS_UTF8 | TS_IGNORECASE against TS_IGNORECASE (same algorithm,
 * contiguous) over @corpus and over a copy with UTF-8 words sprinkled in,
 * and against rg -i -F -c over @file (the corpus written out; NULL to skip
 * rg).  Non-zero when the two library searches count differently on the
 * ASCII corpus.
 */
int bench_utf8(const u8 *corpus, size_t corpus_len, const char *file,
	       int quick);

#endif
