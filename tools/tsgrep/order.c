/*
 * order.c - output in argument order: which file's output may go to stdout
 * now.
 *
 * The output of the oldest unfinished file is the "head": it is written
 * straight to stdout as it is found (so a pipe shows results at once).
 * Every other file's output is buffered and, once its buffer passes
 * ORDER_BUFFER_MAX, its worker waits to become head, which keeps memory
 * bounded by jobs x ORDER_BUFFER_MAX.  When the head finishes, the buffers
 * of the files after it that are already done are written, in order,
 * under the lock.  The order is per run (no global state); an output finds
 * it through its order pointer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tsgrep.h"

#define ORDER_BUFFER_MAX (1024 * 1024)

void order_init(struct tsg_order *order, const struct tsg_cfg *cfg,
		struct tsg_filelist *list)
{
	memset(order, 0, sizeof(*order));
	order->cfg = cfg;
	order->list = list;
	atomic_init(&order->head, 0);
	atomic_init(&order->quit_at, SIZE_MAX);
	pthread_mutex_init(&order->lock, NULL);
	pthread_cond_init(&order->head_moved, NULL);
}

void order_destroy(struct tsg_order *order)
{
	pthread_mutex_destroy(&order->lock);
	pthread_cond_destroy(&order->head_moved);
}

/* Under the lock, with every earlier file done and written. */
static void become_direct(struct tsg_order *order, struct tsg_out *out)
{
	if (out->idx > atomic_load(&order->quit_at)) {
		/* grep -q exited before this file: drop what it wrote */
		struct tsg_out keep = *out;

		out_free(out);
		out->order = keep.order;
		out->idx = keep.idx;
		out->used = keep.used;
		out->done = keep.done;
		return;
	}
	if (out->lead_sep && order->used) {
		/* the separator goes before this file's first group */
		struct tsg_out sep;

		memset(&sep, 0, sizeof(sep));
		out_group_sep(order->cfg, &sep);
		out_drain(&sep);
		out_free(&sep);
	}
	out->lead_sep = 0;
	out_drain(out);
	out->direct = 1;
	if (order->cfg->line_flush)
		out_flush_stdout();
}

void order_output_point(struct tsg_out *out)
{
	struct tsg_order *order = out->order;
	int full;

	if (!order || out->direct)
		return;
	full = out->len >= ORDER_BUFFER_MAX;
	if (!full && atomic_load(&order->head) != out->idx)
		return;
	pthread_mutex_lock(&order->lock);
	while (atomic_load(&order->head) != out->idx)
		pthread_cond_wait(&order->head_moved, &order->lock);
	become_direct(order, out);
	pthread_mutex_unlock(&order->lock);
}

void order_wait_turn(struct tsg_out *out)
{
	struct tsg_order *order = out->order;

	pthread_mutex_lock(&order->lock);
	while (atomic_load(&order->head) != out->idx)
		pthread_cond_wait(&order->head_moved, &order->lock);
	pthread_mutex_unlock(&order->lock);
}

void order_lead_sep(struct tsg_out *out, const struct tsg_cfg *cfg)
{
	struct tsg_order *order = out->order;
	int used;

	if (!order) {
		out_group_sep(cfg, out);
		return;
	}
	if (!out->direct)
		order_output_point(out);
	if (!out->direct) {
		out->lead_sep = 1;
		return;
	}
	pthread_mutex_lock(&order->lock);
	used = order->used;
	pthread_mutex_unlock(&order->lock);
	if (used)
		out_group_sep(cfg, out);
}

void order_finish(struct tsg_out *out)
{
	struct tsg_order *order = out->order;
	struct tsg_out *next;
	size_t head, count;

	pthread_mutex_lock(&order->lock);
	out->done = 1;
	if (atomic_load(&order->head) == out->idx) {
		/* files not yet published are not done: head stops there */
		count = atomic_load_explicit(&order->list->n,
					     memory_order_acquire);
		for (head = out->idx;
		     head < count &&
		     (next = &filelist_at(order->list, head)->out)->done;
		     head++) {
			if (!next->direct)
				become_direct(order, next);
			else
				out_drain(next);
			order->used |= next->used;
			out_free(next);
		}
		if (order->cfg->line_flush)
			out_flush_stdout();
		atomic_store(&order->head, head);
		pthread_cond_broadcast(&order->head_moved);
	}
	pthread_mutex_unlock(&order->lock);
}

int order_quit_before(const struct tsg_out *out)
{
	return out->order && atomic_load(&out->order->quit_at) < out->idx;
}

void order_quit_at(struct tsg_out *out)
{
	struct tsg_order *order = out->order;
	size_t cur = atomic_load(&order->quit_at);

	while (out->idx < cur &&
	       !atomic_compare_exchange_weak(&order->quit_at, &cur, out->idx))
		;
}
