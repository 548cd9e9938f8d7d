/*
 * jobs.c - search the files on -j worker threads.
 *
 * Workers take files in list order; what each file prints goes through
 * its output in the run's order (order.c), which keeps argument order.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsgrep.h"

struct tsg_job {
	struct tsg_file *file;
	long long nsel;
	int err;
	struct tsg_file_stats stats;
};

struct job_queue {
	const struct tsg_cfg *cfg;
	struct tsg_job *jobs;
	size_t count;
	atomic_size_t next;
	struct tsg_order order;
};

static void run_file(struct job_queue *queue, size_t idx)
{
	const struct tsg_cfg *cfg = queue->cfg;
	struct tsg_job *job = &queue->jobs[idx];
	struct tsg_file *file = job->file;
	struct tsg_out *out = &queue->order.outs[idx];
	long long nsel = 0;
	int fd;

	if (order_quit_before(out))
		goto out; /* grep -q would have exited before this file */
	if (file->error) {
		job->err = 1;
		if (!cfg->no_messages)
			out_error(out, TSG_PROG ": %s: %s\n", file->display,
				  strerror(file->error));
		goto out;
	}
	/* A directory without -r is opened and read like any file: the
	 * read fails with EISDIR, and, as with grep, -c still prints 0 and
	 * -L still lists it. */
	fd = strcmp(file->path, "-") ? open(file->path, O_RDONLY | O_NOCTTY) :
				       0;
	if (fd < 0) {
		job->err = 1;
		if (!cfg->no_messages)
			out_error(out, TSG_PROG ": %s: %s\n", file->display,
				  strerror(errno));
		goto out;
	}
	job->stats.bytes = 0;
	nsel = search_fd(cfg, out, fd, file->display, file->show_name,
			 &job->stats);
	if (fd)
		close(fd);
	if (nsel < 0) {
		job->err = 1;
		nsel = 0;
	}
	job->nsel = nsel;
	/* grep -q exits at the first match: later files are not searched
	 * and their messages never printed */
	if (cfg->quiet && nsel > 0)
		order_quit_at(out);
	if ((cfg->list == TSG_LIST_MATCHING && nsel > 0) ||
	    (cfg->list == TSG_LIST_NONMATCHING && nsel == 0)) {
		out_filename(cfg, out, file->display);
		out_putc(out, cfg->null_after_name ? '\0' : '\n');
		out_eol(cfg, out);
	}
out:
	order_finish(out);
}

static void *worker(void *arg)
{
	struct job_queue *queue = arg;
	size_t idx;

	for (;;) {
		idx = atomic_fetch_add(&queue->next, 1);
		if (idx >= queue->count)
			break;
		run_file(queue, idx);
	}
	return NULL;
}

void run_jobs(const struct tsg_cfg *cfg, struct tsg_filelist *list,
	      struct tsg_result *res)
{
	struct job_queue queue;
	pthread_t *threads = NULL;
	size_t nthreads, started = 0, i;

	memset(&queue, 0, sizeof(queue));
	queue.cfg = cfg;
	queue.count = list->n;
	queue.jobs = calloc(list->n ? list->n : 1, sizeof(*queue.jobs));
	if (!queue.jobs || order_init(&queue.order, cfg, list->n)) {
		out_write_fd(2, TSG_PROG ": out of memory\n", 23);
		exit(2);
	}
	atomic_init(&queue.next, 0);
	for (i = 0; i < list->n; i++)
		queue.jobs[i].file = &list->v[i];
	nthreads = cfg->jobs > 0 ? (size_t)cfg->jobs : 1;
	if (nthreads > list->n)
		nthreads = list->n;
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
	for (i = 0; i < list->n; i++) {
		struct tsg_job *job = &queue.jobs[i];

		if (job->nsel > 0)
			res->any_selected = 1;
		if (job->err && i < atomic_load(&queue.order.quit_at))
			res->any_error = 1;
		res->bytes += job->stats.bytes;
		res->lines += job->stats.lines;
		res->matches += job->stats.matches;
		if (!job->err)
			res->files++;
	}
	order_destroy(&queue.order);
	free(queue.jobs);
}
