/*
 * bench_stream.h - the push-mode stream section of the bench
 * (bench_stream.c).
 */
#ifndef BENCH_STREAM_H
#define BENCH_STREAM_H

#include <textsearch.h>

#include <stddef.h>

/* Time streams of single patterns and sets against Hyperscan's stream
 * mode over @corpus and print the tables.  Non-zero when a count or an
 * offset sum differs from Hyperscan's. */
int bench_stream(const u8 *corpus, size_t corpus_len, int quick);

#endif
