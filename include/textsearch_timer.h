/*
 * textsearch_timer.h - the kernel's timers, with a configurable HZ.
 *
 * Linux 2.6.13, the release that brought textsearch, also made HZ
 * configurable and added try_to_del_timer_sync().  This header gives
 * userspace the same interface, on a timer wheel per "base" with its own
 * HZ and its own clock in jiffies, which moves only when its owner calls
 * timer_base_run():
 *
 *   struct flow { struct timer_list timer; ... };
 *
 *   static void flow_expired(struct timer_list *t)
 *   {
 *           struct flow *f = from_timer(f, t, timer);
 *           ...
 *   }
 *
 *   struct timer_base *base = timer_base_create(250);
 *   if (IS_ERR(base))
 *           return PTR_ERR(base);
 *   timer_base_bind(base);                  // jiffies and HZ of this thread
 *   timer_setup(&f->timer, flow_expired, 0);
 *   mod_timer(&f->timer, jiffies + 30 * HZ);
 *   ...
 *   timer_base_run(base, now);              // runs what is due by now
 *
 * Thread safety: any thread may arm, re-arm or delete any timer; a base's
 * timers run only in the thread calling timer_base_run() on it, one at a
 * time.  See textsearch_timer(3) and docs/differences-from-linux.md.
 *
 * Names this header defines as macros, which replace the same identifiers
 * in the code that includes it: jiffies, HZ (a previous definition, such
 * as the one of <sys/param.h>, is replaced), INITIAL_JIFFIES,
 * MAX_JIFFY_OFFSET, time_after, time_before, time_after_eq, time_before_eq,
 * from_timer and container_of (these two only if not defined already).
 * Define TS_NO_JIFFIES_MACROS before including it to leave jiffies, HZ and
 * INITIAL_JIFFIES undefined, and call ts_timer_jiffies() and ts_timer_hz()
 * instead.  msecs_to_jiffies(), usecs_to_jiffies() and jiffies_to_msecs()
 * are static inline functions.
 */
#ifndef TEXTSEARCH_TIMER_H
#define TEXTSEARCH_TIMER_H

#include "textsearch.h"

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct timer_base;

/*
 * A timer.  expires, function and flags are the kernel's public members;
 * the ts_ members are the library's and must not be touched.  A timer must
 * not be freed or set up again while it is pending or its function runs
 * (del_timer_sync() first).
 */
struct timer_list {
	unsigned long expires;		       /* in jiffies of its base */
	void (*function)(struct timer_list *); /* run when it expires */
	unsigned int flags;		       /* kept, with no effect */
	unsigned int ts_idx;		       /* list the timer is on */
	struct timer_list *ts_next;	       /* in that list */
	struct timer_list **ts_pprev;	       /* NULL when not pending */
	struct timer_base *ts_base;	       /* base it is or was armed on */
};

/*
 * A timer wheel with its own HZ (1 to 10,000) and clock, starting at
 * jiffies = 0UL - 300UL * hz, so the counter wraps five minutes in.
 * Returns an error pointer (-EINVAL for a bad hz, -ENOMEM), errno set.
 */
TS_API struct timer_base *timer_base_create(unsigned int hz);

/* Free a base (NULL and error pointers are ignored).  Its pending timers
 * become not pending without running; the calling thread is unbound from
 * it.  No other thread may use the base or its timers any more. */
TS_API void timer_base_destroy(struct timer_base *base);

/* Bind the calling thread to @base (NULL unbinds): in that thread jiffies
 * and HZ read it, and a timer that is not pending is armed on it. */
TS_API void timer_base_bind(struct timer_base *base);

/*
 * Move @base's jiffies to @now (never backwards: an earlier @now is taken
 * as the current jiffies) and run, in this thread, every timer due by
 * then, in order of expiry beyond each wheel level's granularity.  Returns
 * how many ran.  A call made while another is running on the same base
 * (from a timer function, or another thread) does nothing and returns 0.
 */
TS_API unsigned int timer_base_run(struct timer_base *base, unsigned long now);

/* Prepare a timer that is not pending: it will call @function, and until
 * it is first armed it belongs to the calling thread's base, if any. */
TS_API void timer_setup(struct timer_list *timer,
			void (*function)(struct timer_list *),
			unsigned int flags);

/* Arm a timer for timer->expires: mod_timer(timer, timer->expires). */
TS_API void add_timer(struct timer_list *timer);

/*
 * Arm @timer to run when jiffies reaches @expires, or move it there if it
 * is pending (it then stays on its base); a timer that is not pending is
 * armed on the calling thread's base, or on the one it last belonged to
 * if the thread is not bound.  Returns 1 if the timer was pending, else 0;
 * -EINVAL if @timer is NULL or has no base to go to.
 */
TS_API int mod_timer(struct timer_list *timer, unsigned long expires);

/* 1 if @timer is armed and has not yet run; 0 while its own function runs
 * (unless the function armed it again). */
TS_API int timer_pending(const struct timer_list *timer);

/* Disarm: 1 if it removed a pending timer, else 0.  Does not wait for the
 * function if it is running. */
TS_API int del_timer(struct timer_list *timer);

/* Never waits: 1 if it removed a pending timer, 0 if the timer was not
 * pending, -1 if its function is running at that moment (in another
 * thread, or it is the running function asking about its own timer): the
 * timer is then left as it is. */
TS_API int try_to_del_timer_sync(struct timer_list *timer);

/* Wait until the timer's function, if it runs, has returned, then disarm:
 * 1 if it removed a pending timer, else 0; -EDEADLK, without waiting,
 * when called from the timer's own function. */
TS_API int del_timer_sync(struct timer_list *timer);

/* The calling thread's base's jiffies and HZ; 0 in a thread not bound. */
TS_API unsigned long ts_timer_jiffies(void);
TS_API unsigned int ts_timer_hz(void);

/* What a base has done so far (textsearch_timer(3)). */
struct ts_timer_stats {
	unsigned long long armed;   /* mod_timer()/add_timer() calls */
	unsigned long long fired;   /* functions run */
	unsigned long long removed; /* pending timers deleted */
	/* try_to_del_timer_sync() answers: 1, 0 and -1 */
	unsigned long long try_del_removed, try_del_idle, try_del_running;
	unsigned long long sync_waits; /* del_timer_sync() waits */
	unsigned long long requeued;   /* timers past the wheel placed again */
	unsigned long long ticks;      /* wheel positions timer_base_run()
					  visited (not the jiffies passed) */
	unsigned long long steps;      /* list and bitmap operations of
					  arming and deleting */
};

/* Copy @base's counters into *@stats; -EINVAL for a NULL argument. */
TS_API int ts_timer_base_stats(struct timer_base *base,
			       struct ts_timer_stats *stats);

#ifndef TS_NO_JIFFIES_MACROS
#undef HZ
#define HZ (ts_timer_hz())
#define jiffies (ts_timer_jiffies())
/* Where a base's jiffies start (its own HZ: use it in its thread). */
#define INITIAL_JIFFIES (0UL - 300UL * (unsigned long)HZ)
#endif

/* The longest time-out in jiffies msecs_to_jiffies() gives, as the
 * kernel's. */
#ifndef MAX_JIFFY_OFFSET
#define MAX_JIFFY_OFFSET ((unsigned long)((LONG_MAX >> 1) - 1))
#endif

/* Comparisons of jiffies that stay right across the wrap (for times less
 * than LONG_MAX jiffies apart). */
#define time_after(a, b) ((long)((unsigned long)(b) - (unsigned long)(a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_after_eq(a, b) \
	((long)((unsigned long)(a) - (unsigned long)(b)) >= 0)
#define time_before_eq(a, b) time_after_eq(b, a)

/* Milliseconds to jiffies of the calling thread's base, rounded up (a
 * time-out is never shortened); MAX_JIFFY_OFFSET past it. */
static inline unsigned long msecs_to_jiffies(unsigned int m)
{
	unsigned long long j;

	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	j = ((unsigned long long)m * ts_timer_hz() + 999) / 1000;
	return j > MAX_JIFFY_OFFSET ? MAX_JIFFY_OFFSET : (unsigned long)j;
}

/* Microseconds to jiffies, rounded up. */
static inline unsigned long usecs_to_jiffies(unsigned int u)
{
	unsigned long long j;

	j = ((unsigned long long)u * ts_timer_hz() + 999999) / 1000000;
	return j > MAX_JIFFY_OFFSET ? MAX_JIFFY_OFFSET : (unsigned long)j;
}

/* Jiffies to milliseconds, rounded down (0 in a thread not bound). */
static inline unsigned int jiffies_to_msecs(unsigned long j)
{
	unsigned int hz = ts_timer_hz();

	return hz ? (unsigned int)((unsigned long long)j * 1000 / hz) : 0;
}

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

/* The structure a timer_list member is embedded in, from the pointer a
 * timer function receives. */
#ifndef from_timer
#define from_timer(var, callback_timer, timer_fieldname) \
	container_of(callback_timer, __typeof__(*(var)), timer_fieldname)
#endif

#ifdef __cplusplus
}
#endif

#endif
