/*
 * test_timer.c - the kernel's timers (textsearch_timer.h).
 *
 * Accuracy at HZ 100, 250, 300 and 1000 across the jiffies wrap: many
 * timers armed, re-armed (also from their own functions) and deleted at
 * random, time moved by random steps, every call checked against a simple
 * reference: a timer never runs before its expiry, never later than the
 * first run that reaches its expiry rounded up to its level's granularity,
 * in order of expiry beyond that granularity, and exactly once per arming.
 * Then the return values of mod_timer, del_timer, try_to_del_timer_sync
 * (its three answers, -1 from another thread and from the function itself)
 * and del_timer_sync (-EDEADLK, and waiting for the function); an hour of
 * quiet at HZ 1000 and a million re-arms, bounded by the wheel's work
 * counters (never by time); and threads arming, deleting and running on
 * two bases at once, meant for ThreadSanitizer too (SANITIZE=thread).
 *
 * TS_TEST_SEED repeats a random run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* <sys/param.h> defines HZ as 100: the timer header must replace it */
#include <sys/param.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testsupport.h"
#include "textsearch_timer.h"

/* The wheel's shape, as textsearch_timer(3) documents it. */
#define LVL_DEPTH 9
#define LVL_START(n) (63UL << (3 * ((n)-1)))
#define CUTOFF LVL_START(LVL_DEPTH)
#define GRAN(n) (1UL << (3 * (n)))

/* The latest jiffy by which a timer armed at jiffies @j for @e must have
 * run: the first run reaching it must run the timer. */
static unsigned long deadline_of(unsigned long j, unsigned long e)
{
	unsigned long d;
	unsigned int lvl = 0;

	if (!time_after(e, j))
		return j + 1; /* due when armed: the next run */
	d = e - (j + 1);
	if (d >= CUTOFF)
		return e + GRAN(LVL_DEPTH - 1) - 1;
	while (lvl < LVL_DEPTH - 1 && d >= LVL_START(lvl + 1))
		lvl++;
	return e + GRAN(lvl) - 1;
}

/* ---- accuracy against the reference ------------------------------------ */

struct acc;

struct rtimer {
	struct timer_list timer;
	struct acc *ctx;
	unsigned long expires, deadline; /* the reference's */
	bool pending;
	unsigned int fired;
};

struct acc {
	struct timer_base *base;
	struct rng rng;
	unsigned long now, prev_now; /* of this run and the one before */
	unsigned long max_e;	     /* latest expiry run in this run */
	bool any;		     /* a timer ran in this run */
	unsigned int fired_in_run;
	unsigned int errors, rearmed_in_fn, due_armed;
	bool flushing; /* no re-arming from the functions */
	char msg[256];
};

static void acc_error(struct acc *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++)
		return;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
}

/* A random distance: mostly near, some far, a few past the wheel. */
static unsigned long random_delta(struct rng *r, unsigned int hz)
{
	switch (rng_below(r, 16)) {
	case 0:
		return 0UL - rng_below(r, 20); /* already due */
	case 1:
	case 2:
	case 3:
		return rng_below(r, 64);
	case 4:
	case 5:
	case 6:
		return rng_below(r, 4096);
	case 7:
	case 8:
	case 9:
		return rng_below(r, 600 * hz); /* ten minutes */
	case 10:
	case 11:
		return rng_below(r, 1u << 20);
	case 12:
		return rng_below(r, 1u << 27);
	case 13:
		/* around the last level's edge */
		return CUTOFF - 200 + rng_below(r, 400);
	case 14:
		return CUTOFF + rng_below(r, 1u << 31);
	default:
		return 1 + rng_below(r, 8);
	}
}

static void acc_arm(struct acc *c, struct rtimer *t, unsigned long e)
{
	unsigned long j = jiffies;
	int ret = mod_timer(&t->timer, e);

	if (ret != (t->pending ? 1 : 0))
		acc_error(c, "mod_timer returned %d, pending %d", ret,
			  t->pending);
	if (!time_after(e, j))
		c->due_armed++;
	t->pending = true;
	t->expires = e;
	t->deadline = deadline_of(j, e);
}

static void acc_fn(struct timer_list *timer)
{
	struct rtimer *t = from_timer(t, timer, timer);
	struct acc *c = t->ctx;
	unsigned long now = jiffies;

	if (now != c->now)
		acc_error(c, "jiffies %lu in a timer function, run to %lu", now,
			  c->now);
	if (!t->pending)
		acc_error(c, "a timer ran that was not pending");
	if (time_before(now, t->expires))
		acc_error(c, "timer for %lu ran early, at %lu", t->expires,
			  now);
	if (!time_before(c->prev_now, t->deadline))
		acc_error(c,
			  "timer for %lu (latest %lu) missed by the run to "
			  "%lu",
			  t->expires, t->deadline, c->prev_now);
	if (c->any && time_after(c->max_e, t->deadline))
		acc_error(c, "timer for %lu (latest %lu) ran after one for %lu",
			  t->expires, t->deadline, c->max_e);
	if (!c->any || time_after(t->expires, c->max_e))
		c->max_e = t->expires;
	c->any = true;
	if (timer_pending(timer))
		acc_error(c, "timer_pending in its own function");
	if (try_to_del_timer_sync(timer) != -1)
		acc_error(c, "try_to_del_timer_sync in its own function != -1");
	t->pending = false;
	t->fired++;
	c->fired_in_run++;
	if (!c->flushing && rng_below(&c->rng, 4) == 0) {
		c->rearmed_in_fn++;
		acc_arm(c, t, now + random_delta(&c->rng, HZ));
	}
}

static void accuracy(unsigned int hz, uint64_t seed_fallback)
{
	enum { N = 3000, OPS = 150000 };
	struct acc c = { 0 };
	struct rtimer *t = calloc(N, sizeof(*t));
	struct ts_timer_stats st;
	unsigned long start, j;
	unsigned long long fired = 0, armings = 0;
	unsigned int i, op, runs = 0, ran;
	char what[64];

	assert_non_null(t);
	snprintf(what, sizeof(what), "test_timer accuracy HZ %u", hz);
	c.rng.s = test_seed(what, seed_fallback);
	c.base = timer_base_create(hz);
	assert_false(IS_ERR(c.base));
	timer_base_bind(c.base);
	assert_int_equal(HZ, hz);
	start = jiffies;
	assert_true(start == 0UL - 300UL * hz);
	c.now = c.prev_now = start;
	for (i = 0; i < N; i++) {
		timer_setup(&t[i].timer, acc_fn, 0);
		t[i].ctx = &c;
	}
	for (op = 0; op < OPS && !c.errors; op++) {
		unsigned int k = rng_below(&c.rng, 100);
		struct rtimer *x = &t[rng_below(&c.rng, N)];
		unsigned long step;
		int ret;

		if (k < 55) {
			acc_arm(&c, x, jiffies + random_delta(&c.rng, hz));
			continue;
		}
		if (k < 70) {
			switch (k % 3) {
			case 0:
				ret = del_timer(&x->timer);
				break;
			case 1:
				ret = try_to_del_timer_sync(&x->timer);
				break;
			default:
				ret = del_timer_sync(&x->timer);
			}
			if (ret != (x->pending ? 1 : 0))
				acc_error(&c, "delete returned %d, pending %d",
					  ret, x->pending);
			x->pending = false;
			continue;
		}
		switch (rng_below(&c.rng, 8)) {
		case 0:
		case 1:
			step = rng_below(&c.rng, 2);
			break;
		case 2:
		case 3:
			step = rng_below(&c.rng, 64);
			break;
		case 4:
		case 5:
			step = rng_below(&c.rng, 4096);
			break;
		case 6:
			step = rng_below(&c.rng, 60 * hz);
			break;
		default:
			step = rng_below(&c.rng, 1u << 22);
		}
		c.prev_now = c.now;
		c.now = jiffies + step;
		c.any = false;
		c.fired_in_run = 0;
		ret = (int)timer_base_run(c.base, c.now);
		runs++;
		if ((unsigned int)ret != c.fired_in_run)
			acc_error(&c, "run returned %d, %u functions ran", ret,
				  c.fired_in_run);
		if (jiffies != c.now)
			acc_error(&c, "jiffies %lu after a run to %lu", jiffies,
				  c.now);
	}
	if (c.errors)
		fail_msg("HZ %u: %u errors, first: %s", hz, c.errors, c.msg);
	j = jiffies;
	/* the counter wrapped: it went forward by less than 2^63 */
	assert_true(j < start);
	/* flush: past the farthest expiry */
	c.flushing = true;
	for (i = 0; i < 1 && !c.errors; i++) {
		c.prev_now = c.now;
		c.now = jiffies + 2 * CUTOFF + (1UL << 31) + GRAN(8);
		c.any = false;
		c.fired_in_run = 0;
		ran = timer_base_run(c.base, c.now);
		assert_int_equal(ran, c.fired_in_run);
	}
	if (c.errors)
		fail_msg("HZ %u: %u errors, first: %s", hz, c.errors, c.msg);
	for (i = 0; i < N; i++) {
		assert_false(t[i].pending);
		assert_int_equal(timer_pending(&t[i].timer), 0);
		fired += t[i].fired;
	}
	assert_int_equal(ts_timer_base_stats(c.base, &st), 0);
	armings = st.armed;
	assert_int_equal(st.fired, fired);
	/* every path was taken */
	assert_true(st.requeued > 0);
	assert_true(c.rearmed_in_fn > 0 && c.due_armed > 0);
	printf("HZ %u: %u runs, %llu armed, %llu fired, %llu requeued past "
	       "the wheel, %llu wheel positions visited\n",
	       hz, runs, armings, fired, st.requeued, st.ticks);
	timer_base_bind(NULL);
	timer_base_destroy(c.base);
	free(t);
}

static void test_accuracy_hz100(void **s)
{
	(void)s;
	accuracy(100, 0x100);
}

static void test_accuracy_hz250(void **s)
{
	(void)s;
	accuracy(250, 0x250);
}

static void test_accuracy_hz300(void **s)
{
	(void)s;
	accuracy(300, 0x300);
}

static void test_accuracy_hz1000(void **s)
{
	(void)s;
	accuracy(1000, 0x1000);
}

/* Single steps across the wrap at HZ 300: each timer runs exactly at its
 * expiry rounded up to its level's granularity. */
struct stepper {
	struct timer_list timer;
	unsigned long ran_at;
	unsigned int runs;
};

static void record_fn(struct timer_list *timer)
{
	struct stepper *t = from_timer(t, timer, timer);

	t->ran_at = jiffies;
	t->runs++;
}

static void test_single_steps_across_wrap(void **s)
{
	enum { NS = 400 };
	struct timer_base *base = timer_base_create(300);
	struct stepper t[NS];
	unsigned long j0, e;
	unsigned int i;

	(void)s;
	assert_false(IS_ERR(base));
	timer_base_bind(base);
	/* to just before the wrap */
	assert_int_equal(timer_base_run(base, 0UL - 100), 0);
	j0 = jiffies;
	for (i = 0; i < NS; i++) {
		timer_setup(&t[i].timer, record_fn, 0);
		t[i].runs = 0;
		assert_int_equal(mod_timer(&t[i].timer, j0 + 1 + i * 7), 0);
	}
	while (jiffies != j0 + 4000)
		timer_base_run(base, jiffies + 1);
	for (i = 0; i < NS; i++) {
		unsigned long d, g = 1;

		e = j0 + 1 + i * 7;
		d = e - (j0 + 1);
		if (d >= LVL_START(1))
			g = d >= LVL_START(2) ? GRAN(2) : GRAN(1);
		assert_int_equal(t[i].runs, 1);
		/* the rounded-up jiffy exactly */
		if (t[i].ran_at != ((e + g - 1) & ~(g - 1)))
			fail_msg(
				"timer %u for %lu (granularity %lu) ran at %lu",
				i, e, g, t[i].ran_at);
	}
	timer_base_bind(NULL);
	timer_base_destroy(base);
}

/* ---- interface ----------------------------------------------------------- */

static int counted;

static void count_fn(struct timer_list *timer)
{
	(void)timer;
	counted++;
}

static void test_bases_and_macros(void **s)
{
	static const unsigned int hzs[] = { 100, 250, 300, 1000 };
	struct timer_base *base;
	struct timer_list t;
	unsigned int i;

	(void)s;
	base = timer_base_create(0);
	assert_true(IS_ERR(base));
	assert_int_equal(PTR_ERR(base), -EINVAL);
	base = timer_base_create(10001);
	assert_true(IS_ERR(base));
	timer_base_destroy(base);
	timer_base_destroy(NULL);
	/* not bound */
	assert_true(jiffies == 0);
	assert_int_equal(HZ, 0);
	assert_int_equal(msecs_to_jiffies(1000), 0);
	assert_int_equal(jiffies_to_msecs(5), 0);
	timer_setup(&t, count_fn, 0);
	assert_int_equal(mod_timer(&t, 5), -EINVAL);
	assert_int_equal(timer_pending(&t), 0);
	assert_int_equal(try_to_del_timer_sync(&t), 0);
	assert_int_equal(del_timer(&t), 0);
	assert_int_equal(del_timer_sync(&t), 0);
	assert_string_equal(textsearch_strerror(-EDEADLK),
			    "would deadlock (del_timer_sync() from the timer's "
			    "own function)");

	for (i = 0; i < 4; i++) {
		unsigned int hz = hzs[i];

		base = timer_base_create(hz);
		assert_false(IS_ERR(base));
		timer_base_bind(base);
		/* ours, not <sys/param.h>'s 100 */
		assert_int_equal(HZ, hz);
		assert_true(jiffies == 0UL - 300UL * hz);
		assert_true(INITIAL_JIFFIES == jiffies);
		assert_true(msecs_to_jiffies(1000) == hz);
		assert_true(msecs_to_jiffies(1) == 1);
		assert_true(msecs_to_jiffies(0) == 0);
		assert_true(msecs_to_jiffies(10) == (10 * hz + 999) / 1000);
		assert_true(msecs_to_jiffies(0x80000000u) == MAX_JIFFY_OFFSET);
		assert_true(usecs_to_jiffies(1000000) == hz);
		assert_true(usecs_to_jiffies(1) == 1);
		assert_true(jiffies_to_msecs(hz) == 1000);
		assert_true(jiffies_to_msecs(3 * hz) == 3000);
		/* five minutes in, the counter wraps */
		assert_int_equal(timer_base_run(base, jiffies + 300UL * hz - 1),
				 0);
		assert_true(jiffies == ~0UL);
		assert_int_equal(timer_base_run(base, jiffies + 2), 0);
		assert_true(jiffies == 1);
		/* never backwards */
		timer_base_run(base, ~0UL - 5);
		assert_true(jiffies == 1);
		timer_base_bind(NULL);
		timer_base_destroy(base);
	}
	assert_true(time_after(5UL, ~0UL - 5));
	assert_true(time_before(~0UL - 5, 5UL));
	assert_false(time_after(~0UL - 5, 5UL));
	assert_true(time_after_eq(7UL, 7UL) && time_before_eq(7UL, 7UL));
	assert_false(time_after(7UL, 7UL) || time_before(7UL, 7UL));
	assert_true(time_before_eq(~0UL, 0UL) && !time_after_eq(~0UL, 0UL));
	assert_int_equal(jiffies_to_msecs(1), 0); /* not bound again */
	base = timer_base_create(300);
	timer_base_bind(base);
	assert_int_equal(jiffies_to_msecs(1), 3);
	assert_true(msecs_to_jiffies(4) == 2); /* 1.2 rounded up */
	timer_base_bind(NULL);
	timer_base_destroy(base);
}

static void test_mod_and_del_return_values(void **s)
{
	struct timer_base *a = timer_base_create(1000);
	struct ts_timer_stats st;
	struct timer_list t;
	unsigned long j;

	(void)s;
	assert_false(IS_ERR(a));
	timer_base_bind(a);
	j = jiffies;
	counted = 0;
	timer_setup(&t, count_fn, 0);
	assert_int_equal(timer_pending(&t), 0);
	assert_int_equal(mod_timer(&t, j + 10), 0);
	assert_int_equal(timer_pending(&t), 1);
	assert_int_equal(mod_timer(&t, j + 10), 1);
	assert_int_equal(mod_timer(&t, j + 20), 1);
	assert_int_equal(del_timer(&t), 1);
	assert_int_equal(del_timer(&t), 0);
	assert_int_equal(timer_pending(&t), 0);
	t.expires = j + 5;
	add_timer(&t);
	assert_int_equal(timer_pending(&t), 1);
	assert_int_equal(timer_base_run(a, j + 4), 0);
	assert_int_equal(timer_pending(&t), 1);
	assert_int_equal(timer_base_run(a, j + 5), 1);
	assert_int_equal(counted, 1);
	assert_int_equal(timer_pending(&t), 0);
	assert_int_equal(mod_timer(&t, j + 100), 0);
	assert_int_equal(del_timer_sync(&t), 1);
	assert_int_equal(del_timer_sync(&t), 0);
	/* armed for a time already past: the next run, even at the same
	 * jiffies */
	assert_int_equal(mod_timer(&t, jiffies - 3), 0);
	assert_int_equal(timer_base_run(a, jiffies), 1);
	assert_int_equal(counted, 2);
	assert_int_equal(ts_timer_base_stats(a, &st), 0);
	assert_int_equal(st.fired, 2);
	assert_int_equal(st.armed, 6);
	assert_int_equal(st.removed, 2);
	assert_int_equal(ts_timer_base_stats(NULL, &st), -EINVAL);
	/* destroyed with a timer pending: the timer is no longer pending */
	assert_int_equal(mod_timer(&t, jiffies + 50), 0);
	timer_base_destroy(a);
	assert_true(jiffies == 0); /* destroy unbound the thread */
	assert_int_equal(timer_pending(&t), 0);
	assert_int_equal(del_timer(&t), 0);
}

/* A pending timer stays on its base; one that is not moves to the caller's
 * base; a thread that is not bound arms on the timer's last base. */
static void *arm_unbound(void *arg)
{
	struct timer_list *t = arg;

	return (void *)(intptr_t)mod_timer(t, t->expires + 1);
}

static void test_bases_of_timers(void **s)
{
	struct timer_base *a = timer_base_create(100),
			  *b = timer_base_create(100);
	struct timer_list t;
	pthread_t th;
	void *ret;

	(void)s;
	counted = 0;
	timer_base_bind(a);
	timer_setup(&t, count_fn, 0);
	assert_int_equal(mod_timer(&t, jiffies + 3), 0);
	timer_base_bind(b);
	assert_int_equal(mod_timer(&t, jiffies + 3), 1); /* stays on a */
	assert_int_equal(timer_base_run(b, jiffies + 10), 0);
	assert_int_equal(timer_base_run(a, jiffies + 10), 1);
	assert_int_equal(mod_timer(&t, jiffies + 3), 0); /* now on b */
	assert_int_equal(timer_base_run(a, jiffies + 20), 0);
	assert_int_equal(timer_base_run(b, jiffies + 20), 1);
	assert_int_equal(counted, 2);
	/* a thread not bound: on b, where it last was */
	t.expires = jiffies;
	assert_int_equal(pthread_create(&th, NULL, arm_unbound, &t), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((int)(intptr_t)ret, 0);
	assert_int_equal(timer_base_run(a, jiffies + 20), 0);
	assert_int_equal(timer_base_run(b, jiffies + 20), 1);
	timer_base_bind(NULL);
	timer_base_destroy(a);
	timer_base_destroy(b);
}

/* ---- try_to_del_timer_sync and del_timer_sync from the function ------- */

struct self {
	struct timer_list timer;
	struct timer_base *base;
	int try_del, pending, sync, rearm, pending_after, try_del_after,
		nested_run, del;
};

static void self_fn(struct timer_list *timer)
{
	struct self *x = from_timer(x, timer, timer);

	x->try_del = try_to_del_timer_sync(timer);
	x->pending = timer_pending(timer);
	x->sync = del_timer_sync(timer);
	x->nested_run = (int)timer_base_run(x->base, jiffies + 1000);
	x->rearm = mod_timer(timer, jiffies + 10);
	x->pending_after = timer_pending(timer);
	x->try_del_after = try_to_del_timer_sync(timer);
	x->del = del_timer(timer); /* does not care that it runs */
}

static void test_try_to_del_answers(void **s)
{
	struct timer_base *base = timer_base_create(250);
	struct ts_timer_stats st;
	struct self x;

	(void)s;
	timer_base_bind(base);
	memset(&x, 0, sizeof(x));
	x.base = base;
	timer_setup(&x.timer, self_fn, 0);
	assert_int_equal(try_to_del_timer_sync(&x.timer), 0);
	assert_int_equal(mod_timer(&x.timer, jiffies + 1), 0);
	assert_int_equal(try_to_del_timer_sync(&x.timer), 1);
	assert_int_equal(try_to_del_timer_sync(&x.timer), 0);
	assert_int_equal(mod_timer(&x.timer, jiffies + 1), 0);
	assert_int_equal(timer_base_run(base, jiffies + 1), 1);
	assert_int_equal(x.try_del, -1);
	assert_int_equal(x.pending, 0);
	assert_int_equal(x.sync, -EDEADLK);
	assert_int_equal(x.nested_run, 0);
	assert_int_equal(x.rearm, 0);
	assert_int_equal(x.pending_after, 1);
	assert_int_equal(x.try_del_after, -1); /* still its own function */
	assert_int_equal(x.del, 1);
	assert_int_equal(timer_pending(&x.timer), 0);
	assert_int_equal(ts_timer_base_stats(base, &st), 0);
	assert_int_equal(st.try_del_removed, 1);
	assert_int_equal(st.try_del_idle, 2);
	assert_int_equal(st.try_del_running, 2);
	timer_base_bind(NULL);
	timer_base_destroy(base);
}

/* From another thread, while the function runs: the function waits on a
 * condition variable until the test has looked. */
struct blocking {
	struct timer_list timer;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool entered, release;
	atomic_bool sync_returned;
	bool sync_returned_before_exit;
	int sync_ret;
	struct timer_base *base;
	unsigned long run_to;
	unsigned int ran;
};

static void blocking_fn(struct timer_list *timer)
{
	struct blocking *b = from_timer(b, timer, timer);

	pthread_mutex_lock(&b->lock);
	b->entered = true;
	pthread_cond_broadcast(&b->cond);
	while (!b->release)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	/* armed again, so that del_timer_sync, once it has waited, finds
	 * it pending */
	mod_timer(timer, jiffies + 100);
	b->sync_returned_before_exit = atomic_load(&b->sync_returned);
}

static void *runner(void *arg)
{
	struct blocking *b = arg;

	timer_base_bind(b->base);
	b->ran = timer_base_run(b->base, b->run_to);
	return NULL;
}

static void *syncer(void *arg)
{
	struct blocking *b = arg;

	b->sync_ret = del_timer_sync(&b->timer);
	atomic_store(&b->sync_returned, true);
	return NULL;
}

static void test_running_in_another_thread(void **s)
{
	struct blocking b;
	struct ts_timer_stats st;
	pthread_t run_th, sync_th;

	(void)s;
	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.cond, NULL);
	atomic_init(&b.sync_returned, false);
	b.base = timer_base_create(1000);
	timer_base_bind(b.base);
	timer_setup(&b.timer, blocking_fn, 0);
	assert_int_equal(mod_timer(&b.timer, jiffies + 5), 0);
	b.run_to = jiffies + 5;
	assert_int_equal(pthread_create(&run_th, NULL, runner, &b), 0);
	pthread_mutex_lock(&b.lock);
	while (!b.entered)
		pthread_cond_wait(&b.cond, &b.lock);
	pthread_mutex_unlock(&b.lock);

	/* the function runs now, in the other thread */
	assert_int_equal(try_to_del_timer_sync(&b.timer), -1);
	assert_int_equal(timer_pending(&b.timer), 0);
	assert_int_equal(del_timer(&b.timer), 0);
	assert_int_equal(pthread_create(&sync_th, NULL, syncer, &b), 0);
	/* until del_timer_sync waits on the base */
	do {
		sched_yield();
		assert_int_equal(ts_timer_base_stats(b.base, &st), 0);
	} while (st.sync_waits == 0);
	assert_false(atomic_load(&b.sync_returned));
	pthread_mutex_lock(&b.lock);
	b.release = true;
	pthread_cond_broadcast(&b.cond);
	pthread_mutex_unlock(&b.lock);
	assert_int_equal(pthread_join(run_th, NULL), 0);
	assert_int_equal(pthread_join(sync_th, NULL), 0);
	assert_int_equal(b.ran, 1);
	/* it waited for the function, then removed what it had armed */
	assert_false(b.sync_returned_before_exit);
	assert_int_equal(b.sync_ret, 1);
	assert_int_equal(timer_pending(&b.timer), 0);
	assert_int_equal(ts_timer_base_stats(b.base, &st), 0);
	assert_int_equal(st.try_del_running, 1);
	assert_int_equal(st.sync_waits, 1);
	timer_base_bind(NULL);
	timer_base_destroy(b.base);
	pthread_cond_destroy(&b.cond);
	pthread_mutex_destroy(&b.lock);
}

/* ---- work bounds ---------------------------------------------------------- */

static void test_hour_of_quiet(void **s)
{
	struct timer_base *base = timer_base_create(1000);
	struct ts_timer_stats st;
	struct timer_list t, far;
	unsigned long j;
	unsigned int sec;

	(void)s;
	timer_base_bind(base);
	counted = 0;
	/* nothing armed: an hour in one run visits nothing */
	j = jiffies;
	assert_int_equal(timer_base_run(base, j + 3600000), 0);
	assert_int_equal(ts_timer_base_stats(base, &st), 0);
	assert_int_equal(st.ticks, 0);
	/* one timer an hour ahead */
	j = jiffies;
	timer_setup(&t, count_fn, 0);
	assert_int_equal(mod_timer(&t, j + 3600000), 0);
	assert_int_equal(timer_base_run(base, j + 3599999), 0);
	/* level 6 (2,064,384 to 16,515,071 jiffies ahead): 2^18 jiffies */
	assert_int_equal(timer_base_run(base, j + 3600000 + GRAN(6) - 1), 1);
	assert_int_equal(ts_timer_base_stats(base, &st), 0);
	assert_true(st.ticks <= 1);
	/* the same hour in 3600 runs of a second each */
	j = jiffies;
	assert_int_equal(mod_timer(&t, j + 3600000), 0);
	for (sec = 1; sec <= 3600 + 263; sec++)
		timer_base_run(base, j + sec * 1000UL);
	assert_int_equal(counted, 2);
	assert_int_equal(ts_timer_base_stats(base, &st), 0);
	assert_true(st.ticks <= 2);
	/* a timer thirty days ahead, past the wheel's reach: placed again
	 * at the end of the wheel, never run early, a few visits */
	j = jiffies;
	timer_setup(&far, count_fn, 0);
	assert_int_equal(mod_timer(&far, j + 30UL * 86400 * 1000), 0);
	assert_int_equal(timer_base_run(base, j + 30UL * 86400 * 1000 - 1), 0);
	assert_int_equal(
		timer_base_run(base, j + 30UL * 86400 * 1000 + GRAN(8) - 1), 1);
	assert_int_equal(ts_timer_base_stats(base, &st), 0);
	assert_true(st.requeued >= 2);
	assert_true(st.ticks <= 2 + 4);
	timer_base_bind(NULL);
	timer_base_destroy(base);
}

static void test_million_rearms(void **s)
{
	enum { M = 1000000 };
	struct timer_base *base = timer_base_create(1000);
	struct timer_list *t = calloc(M, sizeof(*t));
	struct ts_timer_stats before, after;
	struct rng r = { 0x1e6 };
	unsigned long j;
	unsigned int i, ran;

	(void)s;
	assert_non_null(t);
	timer_base_bind(base);
	j = jiffies;
	counted = 0;
	for (i = 0; i < M; i++) {
		timer_setup(&t[i], count_fn, 0);
		assert_int_equal(
			mod_timer(&t[i], j + 1 + rng_below(&r, 1u << 24)), 0);
	}
	assert_int_equal(ts_timer_base_stats(base, &before), 0);
	for (i = 0; i < M; i++)
		if (mod_timer(&t[i], j + 1 + rng_below(&r, 1u << 24)) != 1)
			fail_msg("re-arm %u was not pending", i);
	assert_int_equal(ts_timer_base_stats(base, &after), 0);
	/* one unlink and one link each, whatever the number pending */
	assert_int_equal(after.armed - before.armed, M);
	assert_true(after.steps - before.steps <= 2ULL * M);
	assert_int_equal(after.ticks, before.ticks);
	ran = timer_base_run(base, j + (1u << 24) + (1u << 24) / 8);
	assert_int_equal(ran, M);
	assert_int_equal(counted, M);
	/* all armed at one time: each level's 64 buckets visited at most
	 * once, instead of 18 million jiffies walked */
	assert_int_equal(ts_timer_base_stats(base, &after), 0);
	assert_true(after.ticks <= 9 * 64);
	printf("a million re-arms: 2,000,000 list operations; the run over "
	       "%u jiffies visited %llu wheel positions\n",
	       (1u << 24) + (1u << 21), after.ticks);
	timer_base_bind(NULL);
	timer_base_destroy(base);
	free(t);
}

/* ---- threads ----------------------------------------------------------------
 */

#define NPOOL 128
#define NWORKERS 4

struct stimer {
	struct timer_list timer;
	atomic_uint started; /* times it became pending */
	atomic_uint ended;   /* ran or was removed while pending */
	atomic_int inside;   /* its function is running */
};

struct stress {
	struct timer_base *bases[2];
	struct stimer pool[NPOOL];
	atomic_bool stop;
	atomic_uint errors;
	unsigned int iters;
	atomic_uint tryneg;
	pthread_barrier_t start;
	atomic_uint ops[2]; /* operations of the workers of each base */
};

static struct stress *stress_ctx;

static void stress_fn(struct timer_list *timer)
{
	struct stimer *t = from_timer(t, timer, timer);

	if (atomic_fetch_add(&t->inside, 1) != 0)
		atomic_fetch_add(&stress_ctx->errors,
				 1); /* ran twice at once */
	atomic_fetch_add(&t->ended, 1);
	if ((t - stress_ctx->pool) % 3 == 0 &&
	    mod_timer(timer,
		      jiffies + 1 +
			      (unsigned long)(t - stress_ctx->pool) % 7) == 0)
		atomic_fetch_add(&t->started, 1);
	atomic_fetch_sub(&t->inside, 1);
}

/* Moves the clock of base @arg (0 or 1) whenever its workers did
 * something since the last run. */
static void *stress_runner(void *arg)
{
	unsigned int b = (unsigned int)(uintptr_t)arg, last = 0, ops;
	struct timer_base *base = stress_ctx->bases[b];
	struct rng r = { 0x7a11 + b };

	timer_base_bind(base);
	pthread_barrier_wait(&stress_ctx->start);
	while (!atomic_load(&stress_ctx->stop)) {
		ops = atomic_load(&stress_ctx->ops[b]);
		if (ops == last) {
			sched_yield();
			continue;
		}
		last = ops;
		timer_base_run(base, jiffies + 1 + rng_below(&r, 3));
	}
	return NULL;
}

static void *stress_worker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, i;
	struct rng r = { 0x5eed + id };
	struct stress *c = stress_ctx;

	timer_base_bind(c->bases[id % 2]);
	pthread_barrier_wait(&c->start);
	for (i = 0; i < c->iters; i++) {
		unsigned long j = jiffies;

		/* Now and then wait until the base's clock has moved, so
		 * that the threads interleave however they are scheduled
		 * (the runner moves it once it sees this op). */
		atomic_fetch_add(&c->ops[id % 2], 1);
		if (i % 32 == 0)
			while (jiffies == j)
				sched_yield();

		unsigned int k = rng_below(&r, 6);
		struct stimer *t = &c->pool[rng_below(&r, NPOOL)];
		int ret;

		/* A thread arms the timers of its own base, whose clock its
		 * jiffies reads (any thread may arm any timer; a time from
		 * another base's clock would just be a wrong time), and
		 * deletes any. */
		if (k < 3)
			t = &c->pool[(rng_below(&r, NPOOL / 2) * 2) + id % 2];
		switch (k) {
		case 0:
		case 1:
		case 2:
			/* some already due: they run at the next run,
			 * however the threads are scheduled */
			if (mod_timer(&t->timer,
				      jiffies + rng_below(&r, 8) - 3) == 0)
				atomic_fetch_add(&t->started, 1);
			break;
		case 3:
			if (del_timer(&t->timer) == 1)
				atomic_fetch_add(&t->ended, 1);
			break;
		case 4:
			ret = try_to_del_timer_sync(&t->timer);
			if (ret == 1)
				atomic_fetch_add(&t->ended, 1);
			else if (ret == -1)
				atomic_fetch_add(&c->tryneg, 1);
			break;
		default:
			ret = del_timer_sync(&t->timer);
			if (ret == 1)
				atomic_fetch_add(&t->ended, 1);
			else if (ret != 0)
				atomic_fetch_add(&c->errors, 1);
		}
	}
	return NULL;
}

static void test_threads_stress(void **s)
{
	struct stress *c = calloc(1, sizeof(*c));
	pthread_t runners[2], workers[NWORKERS];
	struct ts_timer_stats st[2];
	unsigned int i;
	const char *env = getenv("TS_THREAD_ITERS");

	(void)s;
	assert_non_null(c);
	stress_ctx = c;
	c->iters = env ? (unsigned int)strtoul(env, NULL, 0) : 40000;
	c->bases[0] = timer_base_create(1000);
	c->bases[1] = timer_base_create(250);
	pthread_barrier_init(&c->start, NULL, 2 + NWORKERS);
	for (i = 0; i < NPOOL; i++) {
		timer_base_bind(c->bases[i % 2]);
		timer_setup(&c->pool[i].timer, stress_fn, 0);
	}
	timer_base_bind(NULL);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&runners[i], NULL,
						stress_runner,
						(void *)(uintptr_t)i),
				 0);
	for (i = 0; i < NWORKERS; i++)
		assert_int_equal(pthread_create(&workers[i], NULL,
						stress_worker,
						(void *)(uintptr_t)i),
				 0);
	for (i = 0; i < NWORKERS; i++)
		assert_int_equal(pthread_join(workers[i], NULL), 0);
	atomic_store(&c->stop, true);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(runners[i], NULL), 0);
	/* No function runs any more: what is due in the next 7 jiffies runs
	 * (the self-arming ones arm again), every timer still pending is
	 * then removed, and each arming must have ended exactly once. */
	for (i = 0; i < 2; i++) {
		timer_base_bind(c->bases[i]);
		timer_base_run(c->bases[i], jiffies + 7);
	}
	timer_base_bind(NULL);
	for (i = 0; i < NPOOL; i++) {
		struct stimer *t = &c->pool[i];

		if (del_timer_sync(&t->timer) == 1)
			atomic_fetch_add(&t->ended, 1);
		if (atomic_load(&t->started) != atomic_load(&t->ended))
			fail_msg("timer %u: armed %u times, ended %u", i,
				 atomic_load(&t->started),
				 atomic_load(&t->ended));
	}
	assert_int_equal(atomic_load(&c->errors), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(ts_timer_base_stats(c->bases[i], &st[i]), 0);
	printf("threads: %llu + %llu fired, %llu + %llu removed, "
	       "try_to_del_timer_sync -1 %u times\n",
	       st[0].fired, st[1].fired, st[0].removed, st[1].removed,
	       atomic_load(&c->tryneg));
	assert_true(st[0].fired > 0 && st[1].fired > 0);
	timer_base_destroy(c->bases[0]);
	timer_base_destroy(c->bases[1]);
	pthread_barrier_destroy(&c->start);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bases_and_macros),
		cmocka_unit_test(test_mod_and_del_return_values),
		cmocka_unit_test(test_bases_of_timers),
		cmocka_unit_test(test_try_to_del_answers),
		cmocka_unit_test(test_running_in_another_thread),
		cmocka_unit_test(test_single_steps_across_wrap),
		/* before the long random runs, which a wheel walking tick
		 * by tick would take hours over */
		cmocka_unit_test(test_hour_of_quiet),
		cmocka_unit_test(test_million_rearms),
		cmocka_unit_test(test_accuracy_hz100),
		cmocka_unit_test(test_accuracy_hz250),
		cmocka_unit_test(test_accuracy_hz300),
		cmocka_unit_test(test_accuracy_hz1000),
		cmocka_unit_test(test_threads_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
