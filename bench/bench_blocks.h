/*
 * bench_blocks.h - the per-block cost section of the bench (bench_blocks.c).
 */
#ifndef BENCH_BLOCKS_H
#define BENCH_BLOCKS_H

#include <textsearch.h>

#include <stddef.h>

/* Time searches of @corpus served in 64-, 256- and 1500-byte blocks
 * (textsearch_find_with and skb_find_text) and print ns per block and
 * GB/s.  Returns the number of cells whose match count was wrong. */
int bench_blocks(const u8 *corpus, size_t len, int quick);

#endif
