/*
 * pktclock.c - the clock of tspkt's time-outs (pktclock.h).
 */
#include "pktclock.h"

#include <errno.h>

#define NSEC_PER_SEC 1000000000LL

int pkt_clock_init(struct pkt_clock *c, unsigned int hz)
{
	c->started = false;
	c->base = timer_base_create(hz);
	if (IS_ERR(c->base)) {
		int err = (int)PTR_ERR(c->base);

		c->base = NULL;
		return err;
	}
	timer_base_bind(c->base);
	return 0;
}

void pkt_clock_destroy(struct pkt_clock *c)
{
	if (c->base)
		timer_base_destroy(c->base);
	c->base = NULL;
}

void pkt_clock_bind(struct pkt_clock *c)
{
	timer_base_bind(c->base);
}

void pkt_clock_advance(struct pkt_clock *c, int64_t ns)
{
	unsigned long now;
	int64_t d;

	pkt_clock_bind(c);
	if (!c->started) {
		c->started = true;
		c->t0_ns = ns;
		c->j0 = c->last = jiffies;
		c->hz = HZ;
		return;
	}
	d = ns - c->t0_ns;
	if (d <= 0)
		return;
	/* seconds and the rest apart: d * HZ would overflow past 106 days
	 * at HZ 1000 */
	now = c->j0 + (unsigned long)(d / NSEC_PER_SEC) * c->hz +
	      (unsigned long)((d % NSEC_PER_SEC) * (int64_t)c->hz /
			      NSEC_PER_SEC);
	/* most frames fall in the same jiffy as the last one */
	if (!time_after(now, c->last))
		return;
	c->last = now;
	timer_base_run(c->base, now);
}

unsigned long pkt_clock_deadline(struct pkt_clock *c, uint64_t ms)
{
	unsigned long hz;

	pkt_clock_bind(c);
	hz = HZ;
	/* rounded up, plus one: strictly after the time-out */
	return jiffies + (unsigned long)((ms * hz + 999) / 1000) + 1;
}
