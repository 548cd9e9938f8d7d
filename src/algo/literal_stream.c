/*
 * literal_stream.c - how a single literal pattern streams through find().
 *
 * The stream keeps the longest suffix of the data that is a proper prefix
 * of the pattern: only there can a match still to come begin.  On most
 * data that is nothing, so the next write is searched alone.
 */
#include "internal.h"
#include "textsearch_stream.h"

#include <stdbool.h>

/* Past this many byte comparisons keep the whole tail: always correct for
 * a literal (a found match is decided whatever is kept), and it bounds
 * the cost of a periodic pattern on periodic data. */
#define KEEP_BUDGET(len) (4u * (len) + 64u)

static bool equal_prefix(const u8 *a, const u8 *pattern, unsigned int n,
			 bool icase, unsigned int *budget)
{
	for (unsigned int i = 0; i < n; i++) {
		if (!*budget)
			return false;
		--*budget;
		if (icase ? textsearch_fold(a[i]) !=
				    textsearch_fold(pattern[i]) :
			    a[i] != pattern[i])
			return false;
	}
	return true;
}

static unsigned int literal_keep(struct ts_config *conf, const u8 *tail,
				 unsigned int len)
{
	const u8 *pattern = conf->ops->get_pattern(conf);
	unsigned int plen = conf->ops->get_pattern_len(conf);
	bool icase = conf->flags & TS_IGNORECASE;
	unsigned int budget = KEEP_BUDGET(len);
	unsigned int n = len < plen ? len : plen - 1;
	u8 first = icase ? textsearch_fold(pattern[0]) : pattern[0];

	for (; n; n--) {
		u8 c = tail[len - n];

		if ((icase ? textsearch_fold(c) : c) != first)
			continue;
		if (equal_prefix(tail + len - n, pattern, n, icase, &budget))
			return n;
		if (!budget)
			return len;
	}
	return 0;
}

const struct ts_stream_ops ts_literal_stream_ops = {
	.keep = literal_keep,
};
