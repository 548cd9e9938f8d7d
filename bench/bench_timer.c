/*
 * bench_timer.c - what arming, re-arming and deleting a timer costs on the
 * timer wheel (textsearch_timer.h), against a binary min-heap with an
 * index in each element (the structure libevent and most event loops use),
 * with the same timers and expiries in the same run.  The flow table's
 * pattern: a million pending time-outs, each pushed back on every packet
 * of its flow, most deleted before they fire.
 */
#include <textsearch_timer.h>

#include "bench_timer.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- the heap -------------------------------------------------------------
 */

struct hnode {
	unsigned long expires;
	unsigned int pos; /* in the heap, or UINT_MAX */
};

struct heap {
	struct hnode **a;
	unsigned int n;
};

static int h_before(const struct hnode *x, const struct hnode *y)
{
	return time_before(x->expires, y->expires);
}

static void h_set(struct heap *h, unsigned int i, struct hnode *x)
{
	h->a[i] = x;
	x->pos = i;
}

static void h_up(struct heap *h, unsigned int i)
{
	struct hnode *x = h->a[i];

	while (i > 0 && h_before(x, h->a[(i - 1) / 2])) {
		h_set(h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	h_set(h, i, x);
}

static void h_down(struct heap *h, unsigned int i)
{
	struct hnode *x = h->a[i];

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h_before(h->a[c + 1], h->a[c]))
			c++;
		if (!h_before(h->a[c], x))
			break;
		h_set(h, i, h->a[c]);
		i = c;
	}
	h_set(h, i, x);
}

static void h_arm(struct heap *h, struct hnode *x, unsigned long expires)
{
	x->expires = expires;
	if (x->pos != UINT_MAX) {
		h_up(h, x->pos);
		h_down(h, x->pos);
		return;
	}
	h_set(h, h->n++, x);
	h_up(h, x->pos);
}

static void h_del(struct heap *h, struct hnode *x)
{
	unsigned int i = x->pos;

	if (i == UINT_MAX)
		return;
	x->pos = UINT_MAX;
	if (i == --h->n)
		return;
	h_set(h, i, h->a[h->n]);
	if (i > 0 && h_before(h->a[i], h->a[(i - 1) / 2]))
		h_up(h, i);
	else
		h_down(h, i);
}

/* ---- the run ----------------------------------------------------------------
 */

static unsigned long fired;

static void fire(struct timer_list *t)
{
	(void)t;
	fired++;
}

struct phase {
	const char *what;
	double wheel, heap; /* best seconds */
};

int bench_timer(int quick)
{
	unsigned int n = quick ? 100000 : 1000000, reps = quick ? 2 : 5;
	unsigned int i, r, k;
	struct timer_list *t = calloc(n, sizeof(*t));
	struct hnode *hn = calloc(n, sizeof(*hn));
	struct heap h = { calloc(n, sizeof(struct hnode *)), 0 };
	unsigned long *e1 = malloc(n * sizeof(*e1)),
		      *e2 = malloc(n * sizeof(*e2));
	struct phase ph[4] = { { "arm", 1e30, 1e30 },
			       { "re-arm pending", 1e30, 1e30 },
			       { "delete pending", 1e30, 1e30 },
			       { "expire (per timer)", 1e30, 1e30 } };
	uint64_t seed = 0x7133e5;
	int wrong = 0;

	if (!t || !hn || !h.a || !e1 || !e2)
		return 1;
	/* time-outs of 30 s to an hour at HZ 250, as a flow table's */
	for (i = 0; i < n; i++) {
		e1[i] = 7500 + bench_splitmix64(&seed) % (3600 * 250);
		e2[i] = 7500 + bench_splitmix64(&seed) % (3600 * 250);
	}
	for (r = 0; r < reps; r++) {
		struct timer_base *base = timer_base_create(250);
		unsigned long j;
		double t0, d[4];

		if (IS_ERR(base))
			return 1;
		timer_base_bind(base);
		j = jiffies;
		for (i = 0; i < n; i++)
			timer_setup(&t[i], fire, 0);
		t0 = bench_cpu();
		for (i = 0; i < n; i++)
			mod_timer(&t[i], j + e1[i]);
		d[0] = bench_cpu() - t0;
		t0 = bench_cpu();
		for (i = 0; i < n; i++)
			mod_timer(&t[i], j + e2[i]);
		d[1] = bench_cpu() - t0;
		t0 = bench_cpu();
		for (i = 0; i < n; i++)
			del_timer(&t[i]);
		d[2] = bench_cpu() - t0;
		for (i = 0; i < n; i++)
			mod_timer(&t[i], j + e1[i]);
		fired = 0;
		t0 = bench_cpu();
		/* past the last expiry and its level's granularity */
		k = timer_base_run(base, j + 2 * 3600 * 250);
		d[3] = bench_cpu() - t0;
		if (k != n || fired != n)
			wrong = 1;
		for (i = 0; i < 4; i++)
			if (d[i] < ph[i].wheel)
				ph[i].wheel = d[i];
		timer_base_bind(NULL);
		timer_base_destroy(base);

		for (i = 0; i < n; i++)
			hn[i].pos = UINT_MAX;
		h.n = 0;
		t0 = bench_cpu();
		for (i = 0; i < n; i++)
			h_arm(&h, &hn[i], e1[i]);
		d[0] = bench_cpu() - t0;
		t0 = bench_cpu();
		for (i = 0; i < n; i++)
			h_arm(&h, &hn[i], e2[i]);
		d[1] = bench_cpu() - t0;
		t0 = bench_cpu();
		for (i = 0; i < n; i++)
			h_del(&h, &hn[i]);
		d[2] = bench_cpu() - t0;
		for (i = 0; i < n; i++)
			h_arm(&h, &hn[i], e1[i]);
		k = 0;
		t0 = bench_cpu();
		while (h.n) {
			struct hnode *x = h.a[0];

			h_del(&h, x);
			fire(NULL);
			k++;
		}
		d[3] = bench_cpu() - t0;
		if (k != n)
			wrong = 1;
		for (i = 0; i < 4; i++)
			if (d[i] < ph[i].heap)
				ph[i].heap = d[i];
	}
	printf("\ntimers: %u time-outs of 30 s to 1 h at HZ 250, ns per timer, "
	       "best of %u (CPU time); the wheel's figures include taking "
	       "its base's lock, the heap has none\n",
	       n, reps);
	printf("%-20s %10s %10s %12s\n", "operation", "wheel", "min-heap",
	       "heap/wheel");
	for (i = 0; i < 4; i++)
		printf("%-20s %10.1f %10.1f %11.2fx\n", ph[i].what,
		       ph[i].wheel * 1e9 / n, ph[i].heap * 1e9 / n,
		       ph[i].heap / ph[i].wheel);
	if (wrong)
		printf("timers: WRONG: not every timer ran exactly once\n");
	free(t);
	free(hn);
	free(h.a);
	free(e1);
	free(e2);
	return wrong;
}
