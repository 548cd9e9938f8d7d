/*
 * classify.h - the worker threads: datagrams from the backlog through
 * every rule to the output stage.
 */
#ifndef TSPKT_CLASSIFY_H
#define TSPKT_CLASSIFY_H

#include "tspkt.h"

struct backlog;
struct output;

struct classify {
	struct backlog *backlog;
	const struct tspkt_opts *opts;
	struct output *out;
};

/* A worker: classifies until the backlog is closed and empty. */
void *classify_worker(void *arg);

#endif
