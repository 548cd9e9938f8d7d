/*
 * bench_timer.h - the timer section of the bench (bench_timer.c).
 */
#ifndef BENCH_TIMER_H
#define BENCH_TIMER_H

/* Time arming, re-arming, deleting and expiring timers on the wheel and on
 * a binary min-heap, and print the table.  Non-zero when a timer did not
 * run exactly once. */
int bench_timer(int quick);

#endif
