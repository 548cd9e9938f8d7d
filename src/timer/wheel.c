/*
 * wheel.c - the kernel's timers on a non-cascading timer wheel
 * (textsearch_timer.h).
 *
 * As in the kernel since 4.8, a base has LVL_DEPTH levels of 64 buckets,
 * each level 8 times coarser than the one below.  A timer is placed once,
 * on the level its distance from the wheel's clock chooses, in the bucket
 * of its expiry rounded up to that level's granularity, and never moved
 * down (no cascading): it runs late by less than its level's granularity,
 * never early.  A bitmap per level says which buckets hold timers, so the
 * next expiry is found from 9 words, and a run over a quiet stretch jumps
 * to it instead of walking tick by tick.
 *
 * Locking follows the kernel: one lock per base guards its lists and every
 * pending timer on it; a timer's ts_base changes only under the lock of the
 * base it leaves (and the one it joins), and is read atomically to find the
 * lock to take.  base->running_timer marks the timer whose function runs
 * (with the lock dropped), which is what try_to_del_timer_sync() and
 * del_timer_sync() look at.
 */
/* the base has a member called jiffies */
#define TS_NO_JIFFIES_MACROS
#include "internal.h"
#include "textsearch_timer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define TS_TIMER_HZ_MIN 1u
#define TS_TIMER_HZ_MAX 10000u

#define LVL_CLK_SHIFT 3
#define LVL_BITS 6
#define LVL_SIZE (1u << LVL_BITS)
#define LVL_MASK ((unsigned long)LVL_SIZE - 1)
#define LVL_DEPTH 9
#define LVL_SHIFT(n) ((n)*LVL_CLK_SHIFT)
#define LVL_GRAN(n) (1UL << LVL_SHIFT(n))
/* The smallest distance placed on level n (n >= 1). */
#define LVL_START(n) ((LVL_SIZE - 1UL) << (((n)-1) * LVL_CLK_SHIFT))
#define WHEEL_SIZE (LVL_SIZE * LVL_DEPTH)
/* Timers at least this far go to the last level, at this distance less
 * one granularity, and are placed again when that comes. */
#define WHEEL_TIMEOUT_CUTOFF LVL_START(LVL_DEPTH)
#define WHEEL_TIMEOUT_MAX (WHEEL_TIMEOUT_CUTOFF - LVL_GRAN(LVL_DEPTH - 1))

/* Lists besides the wheel's buckets (ts_idx values). */
enum {
	LIST_DUE = WHEEL_SIZE, /* due when armed: run first by the next run */
	LIST_LATE,	       /* due, armed during a run: run at its end */
	LIST_DEFERRED,	       /* armed during a run for after it: placed at
				  its end, from the new clock */
	LIST_EXPIRING,	       /* collected by the run, about to be called */
	NR_LISTS
};

struct timer_base {
	pthread_mutex_t lock;
	pthread_cond_t done; /* the running function returned */
	unsigned int hz;
	/* the last @now given to run; read without the lock by
	 * ts_timer_jiffies() in other threads */
	atomic_ulong jiffies;
	/* The next jiffy the wheel has to process: jiffies + 1 between runs;
	 * during a run the wheel catches up from here to jiffies. */
	unsigned long clk;
	struct timer_list *running_timer;
	pthread_t runner; /* the thread in timer_base_run() */
	bool running;	  /* a run is in progress */
	unsigned int waiters;
	struct ts_timer_stats stats;
	uint64_t pending_map[LVL_DEPTH];
	struct timer_list *lists[NR_LISTS];
};

static _Thread_local struct timer_base *bound_base;

/* ---- a timer's base ------------------------------------------------------
 */

static struct timer_base *timer_base_of(const struct timer_list *timer)
{
	return __atomic_load_n(&timer->ts_base, __ATOMIC_ACQUIRE);
}

static void set_timer_base(struct timer_list *timer, struct timer_base *base)
{
	__atomic_store_n(&timer->ts_base, base, __ATOMIC_RELEASE);
}

/* Lock the base @timer belongs to and return it; NULL (nothing locked) if
 * it never had one. */
static struct timer_base *lock_timer_base(const struct timer_list *timer)
{
	for (;;) {
		struct timer_base *base = timer_base_of(timer);

		if (!base)
			return NULL;
		pthread_mutex_lock(&base->lock);
		if (timer_base_of(timer) == base)
			return base;
		pthread_mutex_unlock(&base->lock);
	}
}

/* ---- lists ----------------------------------------------------------------
 */

static void list_add(struct timer_base *base, struct timer_list *timer,
		     unsigned int idx)
{
	struct timer_list **head = &base->lists[idx];

	timer->ts_next = *head;
	if (*head)
		(*head)->ts_pprev = &timer->ts_next;
	*head = timer;
	timer->ts_pprev = head;
	timer->ts_idx = idx;
	if (idx < WHEEL_SIZE)
		base->pending_map[idx / LVL_SIZE] |= 1ULL << (idx % LVL_SIZE);
	base->stats.steps++;
}

static void list_del(struct timer_base *base, struct timer_list *timer)
{
	unsigned int idx = timer->ts_idx;

	*timer->ts_pprev = timer->ts_next;
	if (timer->ts_next)
		timer->ts_next->ts_pprev = timer->ts_pprev;
	timer->ts_next = NULL;
	timer->ts_pprev = NULL;
	if (idx < WHEEL_SIZE && !base->lists[idx])
		base->pending_map[idx / LVL_SIZE] &=
			~(1ULL << (idx % LVL_SIZE));
	base->stats.steps++;
}

/* Move every timer of list @from to the head of list @to. */
static void list_splice(struct timer_base *base, unsigned int from,
			unsigned int to)
{
	struct timer_list *t;

	while ((t = base->lists[from])) {
		list_del(base, t);
		list_add(base, t, to);
	}
}

static bool detach_if_pending(struct timer_base *base, struct timer_list *timer)
{
	if (!timer->ts_pprev)
		return false;
	list_del(base, timer);
	return true;
}

/* ---- placing --------------------------------------------------------------
 */

/* The level for a timer @delta jiffies past the clock: the first one whose
 * 64 buckets reach it with a bucket to spare for the rounding up. */
static unsigned int level_for(unsigned long delta)
{
	unsigned int lvl = 0;

	while (lvl < LVL_DEPTH - 1 && delta >= LVL_START(lvl + 1))
		lvl++;
	return lvl;
}

/* The bucket of level @lvl that is processed when the clock reaches
 * @expires rounded up to the level's granularity. */
static unsigned int bucket_index(unsigned long expires, unsigned int lvl)
{
	unsigned int shift = LVL_SHIFT(lvl);
	unsigned long q =
		(expires >> shift) + ((expires & (LVL_GRAN(lvl) - 1)) != 0);

	return lvl * LVL_SIZE + (unsigned int)(q & LVL_MASK);
}

/* Place a timer on the wheel for timer->expires, at or after the clock. */
static void wheel_place(struct timer_base *base, struct timer_list *timer)
{
	unsigned long expires = timer->expires, clk = base->clk;
	unsigned long delta = expires - clk;
	unsigned int lvl;

	if (delta >= WHEEL_TIMEOUT_CUTOFF) {
		expires = clk + WHEEL_TIMEOUT_MAX;
		lvl = LVL_DEPTH - 1;
	} else {
		lvl = level_for(delta);
	}
	list_add(base, timer, bucket_index(expires, lvl));
}

/* Queue a timer that is not on any list, for timer->expires. */
static void enqueue_timer(struct timer_base *base, struct timer_list *timer)
{
	unsigned long now =
		atomic_load_explicit(&base->jiffies, memory_order_relaxed);

	if (time_before_eq(base->clk, now)) {
		/* A run is catching up from clk to now: what is due by now
		 * runs at its end; the rest is placed once the clock is
		 * past now, so its level is chosen from jiffies as for a
		 * timer armed between runs. */
		list_add(base, timer,
			 time_after(timer->expires, now) ? LIST_DEFERRED :
							   LIST_LATE);
	} else if (time_before(timer->expires, base->clk)) {
		list_add(base, timer, LIST_DUE);
	} else {
		wheel_place(base, timer);
	}
}

/* ---- running --------------------------------------------------------------
 */

/* The next jiffy, from clk on, at which a bucket holds timers; false if
 * the wheel is empty.  Bucket positions of level n are processed at
 * multiples of its granularity and hold timers for the 64 of those from
 * the first at or after clk (enqueue_timer() keeps them within). */
static bool next_expiry(const struct timer_base *base, unsigned long *next)
{
	unsigned long clk = base->clk, best = 0;
	bool found = false;
	unsigned int lvl;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++) {
		uint64_t map = base->pending_map[lvl];
		unsigned int shift = LVL_SHIFT(lvl), pos, k;
		unsigned long c, at;

		if (!map)
			continue;
		c = (clk >> shift) + ((clk & (LVL_GRAN(lvl) - 1)) != 0);
		pos = (unsigned int)(c & LVL_MASK);
		if (pos)
			map = (map >> pos) | (map << (LVL_SIZE - pos));
		k = (unsigned int)__builtin_ctzll(map);
		at = (c + k) << shift;
		if (!found || at - clk < best - clk) {
			best = at;
			found = true;
		}
	}
	*next = best;
	return found;
}

/* Move the buckets processed at jiffy @t to the expiring list; a timer
 * whose expiry is still ahead (it was past the wheel's reach) is placed
 * again.  The clock must already be past @t. */
static void collect(struct timer_base *base, unsigned long t)
{
	unsigned int lvl;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++) {
		unsigned int idx;
		struct timer_list *head, *timer;

		if (t & (LVL_GRAN(lvl) - 1))
			break;
		idx = lvl * LVL_SIZE +
		      (unsigned int)((t >> LVL_SHIFT(lvl)) & LVL_MASK);
		/* Taken off the wheel first, so that a timer placed again
		 * can never be met twice here. */
		head = base->lists[idx];
		if (!head)
			continue;
		base->lists[idx] = NULL;
		base->pending_map[lvl] &= ~(1ULL << (idx % LVL_SIZE));
		head->ts_pprev = &head;
		while ((timer = head)) {
			list_del(base, timer);
			if (time_after(timer->expires, t)) {
				/* in order with the rest of the wheel */
				base->stats.requeued++;
				wheel_place(base, timer);
			} else {
				list_add(base, timer, LIST_EXPIRING);
			}
		}
	}
}

/* Call the function of each timer on the expiring list, with the lock
 * dropped around each call; returns how many ran. */
static unsigned int expire_timers(struct timer_base *base)
{
	unsigned int ran = 0;
	struct timer_list *timer;

	while ((timer = base->lists[LIST_EXPIRING])) {
		void (*fn)(struct timer_list *) = timer->function;

		list_del(base, timer);
		if (!fn)
			continue;
		base->running_timer = timer;
		base->stats.fired++;
		ran++;
		pthread_mutex_unlock(&base->lock);
		fn(timer); /* may free the timer: not touched again */
		pthread_mutex_lock(&base->lock);
		base->running_timer = NULL;
		if (base->waiters)
			pthread_cond_broadcast(&base->done);
	}
	return ran;
}

unsigned int timer_base_run(struct timer_base *base, unsigned long now)
{
	unsigned int ran = 0;
	unsigned long next;

	if (IS_ERR_OR_NULL(base))
		return 0;
	pthread_mutex_lock(&base->lock);
	if (base->running) {
		pthread_mutex_unlock(&base->lock);
		return 0;
	}
	base->running = true;
	base->runner = pthread_self();
	if (time_before(now, atomic_load_explicit(&base->jiffies,
						  memory_order_relaxed)))
		now = atomic_load_explicit(&base->jiffies,
					   memory_order_relaxed);
	atomic_store_explicit(&base->jiffies, now, memory_order_relaxed);

	/* armed when already due, since the last run */
	list_splice(base, LIST_DUE, LIST_EXPIRING);
	ran += expire_timers(base);
	while (time_after_eq(now, base->clk)) {
		if (!next_expiry(base, &next) || time_after(next, now)) {
			base->clk = now + 1;
			break;
		}
		/* nothing lies between: jump there */
		base->clk = next + 1;
		base->stats.ticks++;
		collect(base, next);
		ran += expire_timers(base);
	}
	/* The clock is past now: what was armed during the run for later
	 * is placed from it, and what was armed already due runs now.
	 * Timers armed by those functions wait for the next run. */
	while (base->lists[LIST_DEFERRED]) {
		struct timer_list *timer = base->lists[LIST_DEFERRED];

		list_del(base, timer);
		wheel_place(base, timer);
	}
	list_splice(base, LIST_LATE, LIST_EXPIRING);
	ran += expire_timers(base);
	base->running = false;
	pthread_mutex_unlock(&base->lock);
	return ran;
}

/* ---- bases ----------------------------------------------------------------
 */

struct timer_base *timer_base_create(unsigned int hz)
{
	struct timer_base *base;

	if (hz < TS_TIMER_HZ_MIN || hz > TS_TIMER_HZ_MAX) {
		errno = EINVAL;
		return ERR_PTR(ts_fail(-EINVAL,
				       "timer_base_create: HZ %u is not in "
				       "%u..%u",
				       hz, TS_TIMER_HZ_MIN, TS_TIMER_HZ_MAX));
	}
	base = calloc(1, sizeof(*base));
	if (!base) {
		errno = ENOMEM;
		return ERR_PTR(ts_fail(-ENOMEM, "timer_base_create: out of "
						"memory"));
	}
	if (pthread_mutex_init(&base->lock, NULL)) {
		free(base);
		errno = ENOMEM;
		return ERR_PTR(ts_fail(-ENOMEM, "timer_base_create: no mutex"));
	}
	if (pthread_cond_init(&base->done, NULL)) {
		pthread_mutex_destroy(&base->lock);
		free(base);
		errno = ENOMEM;
		return ERR_PTR(ts_fail(-ENOMEM, "timer_base_create: no "
						"condition variable"));
	}
	base->hz = hz;
	atomic_init(&base->jiffies, 0UL - 300UL * hz);
	base->clk = 0UL - 300UL * hz + 1;
	return base;
}

void timer_base_destroy(struct timer_base *base)
{
	unsigned int i;

	if (IS_ERR_OR_NULL(base))
		return;
	if (bound_base == base)
		bound_base = NULL;
	pthread_mutex_lock(&base->lock);
	for (i = 0; i < NR_LISTS; i++) {
		struct timer_list *timer;

		while ((timer = base->lists[i])) {
			list_del(base, timer);
			set_timer_base(timer, NULL);
		}
	}
	pthread_mutex_unlock(&base->lock);
	pthread_cond_destroy(&base->done);
	pthread_mutex_destroy(&base->lock);
	free(base);
}

void timer_base_bind(struct timer_base *base)
{
	bound_base = IS_ERR(base) ? NULL : base;
}

unsigned long ts_timer_jiffies(void)
{
	struct timer_base *base = bound_base;

	return base ? atomic_load_explicit(&base->jiffies,
					   memory_order_relaxed) :
		      0;
}

unsigned int ts_timer_hz(void)
{
	return bound_base ? bound_base->hz : 0;
}

int ts_timer_base_stats(struct timer_base *base, struct ts_timer_stats *stats)
{
	if (IS_ERR_OR_NULL(base) || !stats)
		return ts_fail(-EINVAL, "ts_timer_base_stats: NULL argument");
	pthread_mutex_lock(&base->lock);
	*stats = base->stats;
	pthread_mutex_unlock(&base->lock);
	return 0;
}

/* ---- timers ---------------------------------------------------------------
 */

void timer_setup(struct timer_list *timer,
		 void (*function)(struct timer_list *), unsigned int flags)
{
	if (!timer)
		return;
	timer->expires = 0;
	timer->function = function;
	timer->flags = flags;
	timer->ts_idx = 0;
	timer->ts_next = NULL;
	timer->ts_pprev = NULL;
	set_timer_base(timer, bound_base);
}

/* Lock two bases in address order, so that two threads never wait on
 * each other. */
static void lock_two(struct timer_base *a, struct timer_base *b)
{
	if ((uintptr_t)a < (uintptr_t)b) {
		pthread_mutex_lock(&a->lock);
		pthread_mutex_lock(&b->lock);
	} else {
		pthread_mutex_lock(&b->lock);
		pthread_mutex_lock(&a->lock);
	}
}

/* Re-arm on the base it is locked on; returns whether it was pending. */
static int requeue_locked(struct timer_base *base, struct timer_list *timer,
			  unsigned long expires)
{
	int was_pending = detach_if_pending(base, timer);

	timer->expires = expires;
	enqueue_timer(base, timer);
	base->stats.armed++;
	return was_pending;
}

int mod_timer(struct timer_list *timer, unsigned long expires)
{
	struct timer_base *target = bound_base, *base;
	int ret;

	if (!timer)
		return ts_fail(-EINVAL, "mod_timer: NULL timer");
	for (;;) {
		base = lock_timer_base(timer);
		if (!base) {
			if (!target)
				return ts_fail(-EINVAL,
					       "mod_timer: the thread is not "
					       "bound to a timer base and the "
					       "timer never was on one");
			pthread_mutex_lock(&target->lock);
			if (timer_base_of(timer)) {
				/* another thread armed it meanwhile */
				pthread_mutex_unlock(&target->lock);
				continue;
			}
			set_timer_base(timer, target);
			ret = requeue_locked(target, timer, expires);
			pthread_mutex_unlock(&target->lock);
			return ret;
		}
		/* A pending timer stays where it is, and so does one whose
		 * function runs, so that del_timer_sync() finds it. */
		if (timer->ts_pprev || base->running_timer == timer ||
		    !target || target == base) {
			ret = requeue_locked(base, timer, expires);
			pthread_mutex_unlock(&base->lock);
			return ret;
		}
		pthread_mutex_unlock(&base->lock);
		lock_two(base, target);
		if (timer_base_of(timer) != base || timer->ts_pprev ||
		    base->running_timer == timer) {
			/* it changed meanwhile: decide again */
			pthread_mutex_unlock(&base->lock);
			pthread_mutex_unlock(&target->lock);
			continue;
		}
		set_timer_base(timer, target);
		ret = requeue_locked(target, timer, expires);
		pthread_mutex_unlock(&base->lock);
		pthread_mutex_unlock(&target->lock);
		return ret;
	}
}

void add_timer(struct timer_list *timer)
{
	if (timer)
		mod_timer(timer, timer->expires);
}

int timer_pending(const struct timer_list *timer)
{
	struct timer_base *base;
	int pending;

	if (!timer)
		return 0;
	base = lock_timer_base(timer);
	if (!base)
		return 0;
	pending = timer->ts_pprev != NULL;
	pthread_mutex_unlock(&base->lock);
	return pending;
}

int del_timer(struct timer_list *timer)
{
	struct timer_base *base;
	int ret;

	if (!timer)
		return 0;
	base = lock_timer_base(timer);
	if (!base)
		return 0;
	ret = detach_if_pending(base, timer);
	if (ret)
		base->stats.removed++;
	pthread_mutex_unlock(&base->lock);
	return ret;
}

/* try_to_del_timer_sync() on a locked base, without counting the answer. */
static int try_del_locked(struct timer_base *base, struct timer_list *timer)
{
	if (base->running_timer == timer)
		return -1;
	if (!detach_if_pending(base, timer))
		return 0;
	base->stats.removed++;
	return 1;
}

int try_to_del_timer_sync(struct timer_list *timer)
{
	struct timer_base *base;
	int ret;

	if (!timer)
		return 0;
	base = lock_timer_base(timer);
	if (!base)
		return 0;
	ret = try_del_locked(base, timer);
	if (ret > 0)
		base->stats.try_del_removed++;
	else if (ret == 0)
		base->stats.try_del_idle++;
	else
		base->stats.try_del_running++;
	pthread_mutex_unlock(&base->lock);
	return ret;
}

int del_timer_sync(struct timer_list *timer)
{
	struct timer_base *base;
	int ret;

	if (!timer)
		return 0;
	for (;;) {
		base = lock_timer_base(timer);
		if (!base)
			return 0;
		ret = try_del_locked(base, timer);
		if (ret >= 0)
			break;
		if (base->running &&
		    pthread_equal(base->runner, pthread_self())) {
			pthread_mutex_unlock(&base->lock);
			return ts_fail(-EDEADLK,
				       "del_timer_sync: called from the "
				       "timer's own function");
		}
		base->stats.sync_waits++;
		base->waiters++;
		while (base->running_timer == timer)
			pthread_cond_wait(&base->done, &base->lock);
		base->waiters--;
		pthread_mutex_unlock(&base->lock);
		/* the function may have armed it again, anywhere */
	}
	pthread_mutex_unlock(&base->lock);
	return ret;
}
