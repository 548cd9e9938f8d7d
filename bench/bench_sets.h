/*
 * bench_sets.h - the pattern-set section of the bench (bench_sets.c).
 */
#ifndef BENCH_SETS_H
#define BENCH_SETS_H

#include <textsearch.h>

#include <stddef.h>

/* Time every set algorithm against Hyperscan's literal sets over @corpus
 * and print the table.  Non-zero when a count differs from Hyperscan's. */
int bench_sets(const u8 *corpus, size_t corpus_len, int quick);

#endif
