/*
 * jobs.c - search the files on -j worker threads.
 *
 * Workers take files in list order; what each file prints goes through
 * its output in the run's order (order.c), which keeps argument order.
 * The list grows as the walk goes (walk.c): a worker that finds no file
 * published takes the walk's lock and walks on, so directories are read
 * while the other workers search, and a single worker walks just ahead of
 * its own search.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsgrep.h"

struct job_queue {
	const struct tsg_cfg *cfg;
	struct tsg_filelist *list;
	atomic_size_t next; /* the next file to take */
	struct tsg_order order;
	struct tsg_walk *walk;
	pthread_mutex_t walk_lock;
	atomic_bool walk_done;
};

long long tsg_search_file(const struct tsg_cfg *cfg, struct tsg_file *file,
			  struct tsg_scratch *scratch)
{
	struct tsg_out *out = &file->out;
	struct tsg_input in;
	struct stat st;
	long long nsel;
	int fd;

	if (file->is_loop) {
		if (!cfg->no_messages)
			out_error(out,
				  TSG_PROG ": %s: warning: recursive "
					   "directory loop\n",
				  file->display);
		return 0;
	}
	if (file->error) {
		file->err = 1;
		if (!cfg->no_messages)
			out_error(out, TSG_PROG ": %s: %s\n", file->display,
				  strerror(file->error));
		return 0;
	}
	/* A directory without -r is opened and read like any file: the
	 * read fails with EISDIR, and, as with grep, -c still prints 0 and
	 * -L still lists it. */
	fd = 0;
	if (strcmp(file->path, "-"))
		fd = open(file->path, O_RDONLY | O_NOCTTY);
	else if (out->order)
		order_wait_turn(out);
	if (fd < 0) {
		file->err = 1;
		if (!cfg->no_messages)
			out_error(out, TSG_PROG ": %s: %s\n", file->display,
				  strerror(errno));
		return 0;
	}
	in.fd = fd;
	in.st = fstat(fd, &st) ? NULL : &st;
	in.at_start = fd != 0;
	in.name = file->display;
	in.show_name = file->show_name;
	in.range = file->range;
	out->line_slots = file->range && (cfg->line_num || cfg->json);
	nsel = search_fd(cfg, out, &in, scratch, &file->stats);
	if (fd)
		close(fd);
	if (nsel < 0) {
		file->err = 1;
		nsel = 0;
	}
	file->nsel = nsel;
	if ((cfg->list == TSG_LIST_MATCHING && nsel > 0) ||
	    (cfg->list == TSG_LIST_NONMATCHING && nsel == 0)) {
		out_filename(cfg, out, file->display);
		out_putc(out, cfg->null_after_name ? '\0' : '\n');
		out_eol(cfg, out);
	}
	return nsel;
}

static void run_file(struct job_queue *queue, struct tsg_file *file,
		     struct tsg_scratch *scratch)
{
	struct tsg_out *out = &file->out;

	out->order = &queue->order;
	/* grep -q exits at the first match: later files are not searched
	 * and their messages never printed */
	if (!order_quit_before(out) &&
	    tsg_search_file(queue->cfg, file, scratch) > 0 && queue->cfg->quiet)
		order_quit_at(out);
	order_finish(out);
}

/* The index of the next file to search, walking on while none is
 * published; false when all are taken. */
static bool take_file(struct job_queue *queue, size_t *idx)
{
	size_t next, published;

	for (;;) {
		next = atomic_load(&queue->next);
		published = atomic_load_explicit(&queue->list->n,
						 memory_order_acquire);
		if (next < published) {
			if (atomic_compare_exchange_weak(&queue->next, &next,
							 next + 1)) {
				*idx = next;
				return true;
			}
			continue;
		}
		if (atomic_load(&queue->walk_done))
			return false;
		pthread_mutex_lock(&queue->walk_lock);
		/* another worker may have walked meanwhile */
		if (!atomic_load(&queue->walk_done) &&
		    atomic_load(&queue->next) >=
			    atomic_load_explicit(&queue->list->n,
						 memory_order_acquire) &&
		    !walk_more(queue->walk))
			atomic_store(&queue->walk_done, true);
		pthread_mutex_unlock(&queue->walk_lock);
	}
}

static void *worker(void *arg)
{
	struct job_queue *queue = arg;
	struct tsg_scratch scratch = TSG_SCRATCH_INIT;
	size_t idx;

	while (take_file(queue, &idx))
		run_file(queue, filelist_at(queue->list, idx), &scratch);
	tsg_scratch_free(&scratch);
	return NULL;
}

void tsg_sum_results(struct tsg_filelist *list, size_t quit_at,
		     struct tsg_result *res)
{
	size_t count = atomic_load(&list->n);

	for (size_t i = 0; i < count; i++) {
		const struct tsg_file *file = filelist_at(list, i);

		if (file->nsel > 0)
			res->any_selected = 1;
		if (file->err && i < quit_at)
			res->any_error = 1;
		res->bytes += file->stats.bytes;
		res->lines += file->stats.lines;
		res->matches += file->stats.matches;
		if (!file->err && !file->is_loop)
			res->files++;
	}
}

void run_jobs(const struct tsg_cfg *cfg, struct tsg_filelist *list,
	      struct tsg_walk *walk, struct tsg_result *res)
{
	struct job_queue queue;
	pthread_t *threads = NULL;
	size_t nthreads, started = 0, i;

	memset(&queue, 0, sizeof(queue));
	queue.cfg = cfg;
	queue.list = list;
	queue.walk = walk;
	atomic_init(&queue.next, 0);
	atomic_init(&queue.walk_done, false);
	pthread_mutex_init(&queue.walk_lock, NULL);
	order_init(&queue.order, cfg, list);
	nthreads = cfg->jobs > 0 ? (size_t)cfg->jobs : 1;
	if (nthreads > 1) {
		threads = calloc(nthreads - 1, sizeof(*threads));
		for (i = 0; threads && i + 1 < nthreads; i++) {
			if (pthread_create(&threads[i], NULL, worker, &queue))
				break;
			started++;
		}
	}
	worker(&queue); /* the main thread works too */
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	out_flush_stdout();
	tsg_sum_results(list, atomic_load(&queue.order.quit_at), res);
	order_destroy(&queue.order);
	pthread_mutex_destroy(&queue.walk_lock);
}
