/*
 * pktclock.h - the clock of tspkt's time-outs: a timer wheel
 * (textsearch_timer.h) whose jiffies follow a time in nanoseconds, the
 * capture's time stamps when reading a file (so a file gives the same
 * output however fast it is read), the monotonic clock when live.
 *
 * The first time given is jiffies' start; time never moves back (an
 * earlier time stamp leaves the clock where it is).  Single-threaded: the
 * thread that advances the clock runs its timers.
 */
#ifndef TSPKT_PKTCLOCK_H
#define TSPKT_PKTCLOCK_H

#include <textsearch_timer.h>

#include <stdbool.h>
#include <stdint.h>

struct pkt_clock {
	struct timer_base *base;
	bool started;
	int64_t t0_ns;	    /* the first time given */
	unsigned long j0;   /* jiffies then */
	unsigned long hz;   /* the base's */
	unsigned long last; /* jiffies of the last run */
};

/* A wheel ticking @hz times a second, bound to the calling thread.  0, or
 * a negative errno (-EINVAL for a bad hz, -ENOMEM). */
int pkt_clock_init(struct pkt_clock *c, unsigned int hz);
void pkt_clock_destroy(struct pkt_clock *c);

/* Make the calling thread arm timers on @c (a thread arms on one wheel
 * at a time). */
void pkt_clock_bind(struct pkt_clock *c);

/* The time is @ns now: run the timers due. */
void pkt_clock_advance(struct pkt_clock *c, int64_t ns);

/* A time-out of @ms milliseconds from now, in jiffies of @c, one more so
 * that it fires strictly after, never early. */
unsigned long pkt_clock_deadline(struct pkt_clock *c, uint64_t ms);

#endif
