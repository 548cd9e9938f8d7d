/*
 * jobs.c - search the files on -j worker threads, print in argument order.
 *
 * Workers take files in list order.  The job of the oldest unfinished file
 * is the "head": it writes its output straight to stdout as it is found
 * (so a pipe shows results at once); any other job buffers its output and,
 * once the buffer passes JOB_BUFFER_MAX, waits to become head, which keeps
 * memory bounded by jobs x JOB_BUFFER_MAX.  When the head finishes, the
 * buffers of the files after it that are already done are written, in
 * order, under the scheduler's lock.  The scheduler is per run (no global
 * state); an output finds it through its job.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tsgrep.h"

#define JOB_BUFFER_MAX (1024 * 1024)

struct sched;

struct tsg_job {
	struct sched *S;
	size_t idx;
	struct tsg_file *f;
	struct tsg_out out;
	int done;
	long long nsel;
	int err;
	struct tsg_file_stats st;
};

struct sched {
	const struct tsg_cfg *c;
	struct tsg_job *jobs;
	size_t n;
	atomic_size_t next;
	atomic_size_t head;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int used; /* some file selected a line in printing mode (grep's
		     "used": the next group gets a "--" before it) */
	_Atomic size_t quit_at; /* see struct tsg_out */
};

void job_output_point(struct tsg_out *o);
void job_lead_sep(struct tsg_out *o, const struct tsg_cfg *c);

/* Under the lock, with every earlier job done and written. */
static void become_direct(struct sched *S, struct tsg_job *j)
{
	if (j->idx > atomic_load(&S->quit_at)) {
		/* grep -q exited before this file: drop what it wrote */
		struct tsg_out keep = j->out;
		out_free(&j->out);
		j->out.job = keep.job;
		j->out.quit_at = keep.quit_at;
		j->out.idx = keep.idx;
		j->out.used = keep.used;
		return;
	}
	if (j->out.lead_sep && S->used) {
		/* the separator goes before this file's first group */
		struct tsg_out sep;
		memset(&sep, 0, sizeof(sep));
		out_group_sep(S->c, &sep);
		out_drain(&sep);
		out_free(&sep);
	}
	j->out.lead_sep = 0;
	out_drain(&j->out);
	j->out.direct = 1;
}

void job_output_point(struct tsg_out *o)
{
	struct tsg_job *j = o->job;
	if (!j || o->direct)
		return;
	struct sched *S = j->S;
	int full = o->len >= JOB_BUFFER_MAX;
	if (!full && atomic_load(&S->head) != j->idx)
		return;
	pthread_mutex_lock(&S->mu);
	while (atomic_load(&S->head) != j->idx)
		pthread_cond_wait(&S->cv, &S->mu);
	become_direct(S, j);
	pthread_mutex_unlock(&S->mu);
}

void job_lead_sep(struct tsg_out *o, const struct tsg_cfg *c)
{
	struct tsg_job *j = o->job;
	if (!j) {
		out_group_sep(c, o);
		return;
	}
	if (!o->direct)
		job_output_point(o);
	if (o->direct) {
		pthread_mutex_lock(&j->S->mu);
		int used = j->S->used;
		pthread_mutex_unlock(&j->S->mu);
		if (used)
			out_group_sep(c, o);
	} else {
		o->lead_sep = 1;
	}
}

static void finish(struct sched *S, struct tsg_job *j)
{
	pthread_mutex_lock(&S->mu);
	j->done = 1;
	if (atomic_load(&S->head) == j->idx) {
		size_t h = j->idx;
		while (h < S->n && S->jobs[h].done) {
			struct tsg_job *k = &S->jobs[h];
			if (!k->out.direct)
				become_direct(S, k);
			else
				out_drain(&k->out);
			S->used |= k->out.used;
			out_free(&k->out);
			h++;
		}
		atomic_store(&S->head, h);
		pthread_cond_broadcast(&S->cv);
	}
	pthread_mutex_unlock(&S->mu);
}

static void run_file(struct sched *S, struct tsg_job *j)
{
	const struct tsg_cfg *c = S->c;
	struct tsg_file *f = j->f;
	struct tsg_out *o = &j->out;
	long long n = 0;
	if (j->idx > atomic_load(&S->quit_at))
		goto out; /* grep -q would have exited before this file */
	if (f->error) {
		j->err = 1;
		if (!c->no_messages)
			out_error(o, TSG_PROG ": %s: %s\n", f->display,
				  strerror(f->error));
		goto out;
	}
	/* A directory without -r is opened and read like any file: the
	 * read fails with EISDIR, and, as with grep, -c still prints 0 and
	 * -L still lists it. */
	int fd = strcmp(f->path, "-") ? open(f->path, O_RDONLY | O_NOCTTY)
				       : 0;
	if (fd < 0) {
		j->err = 1;
		if (!c->no_messages)
			out_error(o, TSG_PROG ": %s: %s\n", f->display,
				  strerror(errno));
		goto out;
	}
	j->st.bytes = 0;
	n = search_fd(c, o, fd, f->display, f->show_name, &j->st);
	if (fd)
		close(fd);
	if (n < 0) {
		j->err = 1;
		n = 0;
	}
	j->nsel = n;
	if (c->quiet && n > 0) {
		/* grep -q exits at the first match: later files are not
		 * searched and their messages never printed */
		size_t cur = atomic_load(&S->quit_at);
		while (j->idx < cur &&
		       !atomic_compare_exchange_weak(&S->quit_at, &cur, j->idx))
			;
	}
	if ((c->list == TSG_LIST_MATCHING && n > 0) ||
	    (c->list == TSG_LIST_NONMATCHING && n == 0)) {
		out_filename(c, o, f->display);
		out_putc(o, c->null_after_name ? '\0' : '\n');
		out_eol(c, o);
	}
out:
	finish(S, j);
}

static void *worker(void *arg)
{
	struct sched *S = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&S->next, 1);
		if (i >= S->n)
			break;
		run_file(S, &S->jobs[i]);
	}
	return NULL;
}

void run_jobs(const struct tsg_cfg *c, struct tsg_filelist *l,
	      struct tsg_result *res)
{
	struct sched S;
	memset(&S, 0, sizeof(S));
	S.c = c;
	S.n = l->n;
	S.jobs = calloc(l->n ? l->n : 1, sizeof(*S.jobs));
	if (!S.jobs) {
		out_write_fd(2, TSG_PROG ": out of memory\n", 23);
		exit(2);
	}
	atomic_init(&S.next, 0);
	atomic_init(&S.head, 0);
	atomic_init(&S.quit_at, SIZE_MAX);
	pthread_mutex_init(&S.mu, NULL);
	pthread_cond_init(&S.cv, NULL);
	for (size_t i = 0; i < l->n; i++) {
		S.jobs[i].S = &S;
		S.jobs[i].idx = i;
		S.jobs[i].f = &l->v[i];
		S.jobs[i].out.job = &S.jobs[i];
		S.jobs[i].out.quit_at = &S.quit_at;
		S.jobs[i].out.idx = i;
	}
	size_t nt = c->jobs > 0 ? (size_t)c->jobs : 1;
	if (nt > l->n)
		nt = l->n;
	pthread_t *th = NULL;
	size_t started = 0;
	if (nt > 1) {
		th = calloc(nt - 1, sizeof(*th));
		for (size_t i = 0; th && i + 1 < nt; i++) {
			if (pthread_create(&th[i], NULL, worker, &S))
				break;
			started++;
		}
	}
	worker(&S); /* the main thread works too */
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	for (size_t i = 0; i < l->n; i++) {
		struct tsg_job *j = &S.jobs[i];
		if (j->nsel > 0)
			res->any_selected = 1;
		if (j->err && j->idx < atomic_load(&S.quit_at))
			res->any_error = 1;
		res->bytes += j->st.bytes;
		res->lines += j->st.lines;
		res->matches += j->st.matches;
		if (!j->err)
			res->files++;
	}
	pthread_mutex_destroy(&S.mu);
	pthread_cond_destroy(&S.cv);
	free(S.jobs);
}
