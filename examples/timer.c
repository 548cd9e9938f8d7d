/*
 * timer.c - a flow's idle time-out on the kernel's timers
 * (textsearch_timer(3)).  Time moves only through timer_base_run(), here
 * by hand, as a program reading a capture moves it by the packets' times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <textsearch_timer.h>

struct flow {
	struct timer_list timer;
	int id;
};

static void flow_expired(struct timer_list *t)
{
	struct flow *f = from_timer(f, t, timer);

	printf("flow %d expired, run at %u ms\n", f->id,
	       jiffies_to_msecs(jiffies - INITIAL_JIFFIES));
	free(f);
}

int main(void)
{
	struct timer_base *base = timer_base_create(250);
	struct flow *f = malloc(sizeof(*f));

	if (IS_ERR(base) || !f) {
		fprintf(stderr, "timer: %s\n",
			IS_ERR(base) ? textsearch_strerror(PTR_ERR(base)) :
				       "out of memory");
		return 1;
	}
	timer_base_bind(base);
	f->id = 1;
	timer_setup(&f->timer, flow_expired, 0);
	mod_timer(&f->timer, jiffies + msecs_to_jiffies(30000));
	/* a packet of the flow, 10 s later: idle again from now */
	timer_base_run(base, jiffies + 10 * HZ);
	printf("pending: %d\n", mod_timer(&f->timer, jiffies + 30 * HZ));
	/* the flow expires 30 s after its last packet; the run of 60 s
	 * gives its function jiffies at the run's end */
	printf("ran: %u\n", timer_base_run(base, jiffies + 60 * HZ));
	timer_base_destroy(base);
	return 0;
}
