/*
 * shard.c - tsgrep's run_jobs() over MPI ranks.
 *
 * A shard is one file of tsgrep's file list.  Rank 0 walks the operands
 * (walk.c, so the list and its order are tsgrep's), and hands the files
 * out on demand: each worker rank holds up to TS_PREFETCH shards, and gets
 * the next one when it returns a result, so a slow rank takes fewer files
 * and the hand-out's latency is hidden behind the search.  A worker
 * searches a file with search_fd() into a buffer (no order: it never
 * writes), and sends back the buffered stdout bytes, the stderr messages
 * with their places in it, and the counters.  Rank 0 puts them in the
 * file's output and lets tsgrep's order.c write them: argument order,
 * each file as soon as the ones before it are done, group separators and
 * -q exactly as tsgrep's.
 *
 * Rank 0 searches too, on a second thread, taking files from the same
 * list; its main thread only hands out and collects, and sleeps between
 * polls so that it does not take a core from the searches.  Standard
 * input ("-") is only rank 0's, so rank 0 reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mpi_util.h"
#include "tsgrep.h"

/* What a worker sends back for one file (then the payload: the stdout
 * bytes, and each message as its place, length and text). */
struct result_head {
	uint64_t idx;
	int64_t nsel;
	uint64_t err, used;
	uint64_t bytes, lines, matches;
	uint64_t len, nmsgs, payload;
};

struct run {
	const struct tsg_cfg *cfg;
	struct tsg_filelist *list;
	struct tsg_walk *walk;
	struct tsg_order order;
	pthread_mutex_t lock; /* next and the walk */
	size_t next;
	int walk_done;
	char sep[64]; /* the group separator, as out_group_sep() writes it */
	size_t seplen;
};

static void die_oom(void)
{
	out_write_fd(2, TSG_PROG ": out of memory\n", 23);
	_exit(2);
}

/* tsgrep's run_file(), minus the order: everything is buffered. */
static void search_file(const struct tsg_cfg *cfg, struct tsg_file *file,
			struct tsg_scratch *scratch)
{
	file->out.order = NULL;
	tsg_search_file(cfg, file, scratch);
}

/* Rank 0: a searched file (here or by a worker) joins tsgrep's order. */
static void finish_file(struct run *run, struct tsg_file *file)
{
	const struct tsg_cfg *cfg = run->cfg;
	struct tsg_out *out = &file->out;
	size_t i;

	/* Without an order, the first group of a file always got its
	 * separator; whether it belongs there is the order's call (the
	 * file's lead_sep), as in tsgrep. */
	if ((cfg->before >= 0 || cfg->after >= 0) && out->used &&
	    out->len >= run->seplen &&
	    !memcmp(out->buf, run->sep, run->seplen)) {
		memmove(out->buf, out->buf + run->seplen,
			out->len - run->seplen);
		out->len -= run->seplen;
		for (i = 0; i < out->nmsgs; i++)
			out->msgs[i].at =
				out->msgs[i].at > run->seplen ?
					out->msgs[i].at - run->seplen :
					0;
		out->lead_sep = 1;
	}
	out->order = &run->order;
	if (cfg->quiet && file->nsel > 0)
		order_quit_at(out);
	order_finish(out);
}

static void search_and_finish(struct run *run, struct tsg_file *file,
			      struct tsg_scratch *scratch)
{
	search_file(run->cfg, file, scratch);
	finish_file(run, file);
}

/* The next file of the list, walking on as needed; NULL at the end.  For
 * a worker rank (@remote), stdin and the walk's errors are done here on
 * rank 0 as they come, on @scratch. */
static struct tsg_file *take(struct run *run, int remote,
			     struct tsg_scratch *scratch)
{
	struct tsg_file *file = NULL;

	pthread_mutex_lock(&run->lock);
	for (;;) {
		if (run->next < atomic_load(&run->list->n)) {
			file = filelist_at(run->list, run->next++);
			if (remote && (!strcmp(file->path, "-") ||
				       file->error || file->is_loop)) {
				pthread_mutex_unlock(&run->lock);
				search_and_finish(run, file, scratch);
				file = NULL;
				pthread_mutex_lock(&run->lock);
				continue;
			}
			break;
		}
		if (run->walk_done)
			break;
		/* false at the end, but what it added this time counts */
		if (!walk_more(run->walk))
			run->walk_done = 1;
	}
	pthread_mutex_unlock(&run->lock);
	return file;
}

static void *local_worker(void *arg)
{
	struct run *run = arg;
	struct tsg_scratch scratch = TSG_SCRATCH_INIT;
	struct tsg_file *file;

	while ((file = take(run, 0, &scratch)))
		search_and_finish(run, file, &scratch);
	tsg_scratch_free(&scratch);
	return NULL;
}

/* ---- messages ---- */

/* A job: index, show_name, then path and display, NUL-terminated. */
static void send_job(const struct tsg_file *file, size_t idx, int dest)
{
	size_t plen = file ? strlen(file->path) + 1 : 0;
	size_t dlen = file ? strlen(file->display) + 1 : 0;
	size_t len = 2 * sizeof(uint64_t) + plen + dlen;
	uint64_t head[2] = { file ? idx : TS_NO_JOB,
			     file ? (uint64_t)file->show_name : 0 };
	char *msg = malloc(len);

	if (!msg)
		die_oom();
	memcpy(msg, head, sizeof(head));
	if (file) {
		memcpy(msg + sizeof(head), file->path, plen);
		memcpy(msg + sizeof(head) + plen, file->display, dlen);
	}
	MPI_Send(msg, (int)len, MPI_BYTE, dest, TS_TAG_JOB, MPI_COMM_WORLD);
	free(msg);
}

static void send_result(const struct tsg_file *file, uint64_t idx)
{
	const struct tsg_out *out = &file->out;
	struct result_head head;
	uint64_t payload = out->len, tlen;
	char *msg, *pos;
	size_t i;

	for (i = 0; i < out->nmsgs; i++)
		payload += 2 * sizeof(uint64_t) + strlen(out->msgs[i].text);
	memset(&head, 0, sizeof(head));
	head.idx = idx;
	head.nsel = file->nsel;
	head.err = (uint64_t)file->err;
	head.used = (uint64_t)out->used;
	head.bytes = file->stats.bytes;
	head.lines = file->stats.lines;
	head.matches = file->stats.matches;
	head.len = out->len;
	head.nmsgs = out->nmsgs;
	head.payload = payload;
	MPI_Send(&head, sizeof(head), MPI_BYTE, 0, TS_TAG_RESULT,
		 MPI_COMM_WORLD);
	if (!payload)
		return;
	msg = malloc(payload);
	if (!msg)
		die_oom();
	pos = msg;
	if (out->len)
		memcpy(pos, out->buf, out->len);
	pos += out->len;
	for (i = 0; i < out->nmsgs; i++) {
		uint64_t at = out->msgs[i].at;

		tlen = strlen(out->msgs[i].text);
		memcpy(pos, &at, sizeof(at));
		memcpy(pos + sizeof(at), &tlen, sizeof(tlen));
		memcpy(pos + 2 * sizeof(at), out->msgs[i].text, tlen);
		pos += 2 * sizeof(at) + tlen;
	}
	mpi_send_bytes(msg, payload, 0, TS_TAG_DATA);
	free(msg);
}

/* Rank 0: a worker's result into the file's output. */
static void recv_result(struct run *run, const struct result_head *head,
			int src)
{
	struct tsg_file *file = filelist_at(run->list, head->idx);
	struct tsg_out *out = &file->out;
	char *payload = NULL, *pos;
	uint64_t i, at, tlen;

	if (head->payload) {
		payload = malloc(head->payload);
		if (!payload)
			die_oom();
		mpi_recv_bytes(payload, head->payload, src, TS_TAG_DATA);
	}
	file->nsel = head->nsel;
	file->err = (int)head->err;
	file->stats.bytes = head->bytes;
	file->stats.lines = head->lines;
	file->stats.matches = head->matches;
	out->used = (int)head->used;
	if (head->len)
		out_put(out, payload, head->len);
	pos = payload + head->len;
	for (i = 0; i < head->nmsgs; i++) {
		memcpy(&at, pos, sizeof(at));
		memcpy(&tlen, pos + sizeof(at), sizeof(tlen));
		pos += 2 * sizeof(at);
		out->msgs = realloc(out->msgs,
				    (out->nmsgs + 1) * sizeof(*out->msgs));
		if (!out->msgs)
			die_oom();
		out->msgs[out->nmsgs].at = at;
		out->msgs[out->nmsgs].text = malloc(tlen + 1);
		if (!out->msgs[out->nmsgs].text)
			die_oom();
		memcpy(out->msgs[out->nmsgs].text, pos, tlen);
		out->msgs[out->nmsgs].text[tlen] = '\0';
		out->nmsgs++;
		out->capmsgs = out->nmsgs;
		pos += tlen;
	}
	free(payload);
	finish_file(run, file);
}

/* ---- the ranks ---- */

static void worker_rank(const struct tsg_cfg *cfg)
{
	struct tsg_scratch scratch = TSG_SCRATCH_INIT;
	struct tsg_file file;
	uint64_t head[2];
	MPI_Status status;
	char *msg;
	int len;

	for (;;) {
		mpi_wait_probe(0, TS_TAG_JOB, &status);
		MPI_Get_count(&status, MPI_BYTE, &len);
		msg = malloc((size_t)len);
		if (!msg)
			die_oom();
		MPI_Recv(msg, len, MPI_BYTE, 0, TS_TAG_JOB, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		memcpy(head, msg, sizeof(head));
		if (head[0] == TS_NO_JOB) {
			free(msg);
			break;
		}
		memset(&file, 0, sizeof(file));
		file.path = msg + sizeof(head);
		file.display = file.path + strlen(file.path) + 1;
		file.show_name = (int)head[1];
		search_file(cfg, &file, &scratch);
		send_result(&file, head[0]);
		out_free(&file.out);
		free(msg);
	}
	tsg_scratch_free(&scratch);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rank 0's main thread in the hand-out (mpi_hand_out()). */
struct coord {
	struct run *run;
	struct tsg_scratch scratch;
	struct result_head head;
	double spent;
	unsigned long handouts;
};

static bool give(void *arg, int dest, bool refill)
{
	struct coord *c = arg;
	double t0 = now();
	struct tsg_file *file = take(c->run, 1, &c->scratch);

	if (!file)
		return false;
	send_job(file, (size_t)file->out.idx, dest);
	if (refill) {
		c->handouts++;
		c->spent += now() - t0;
	}
	return true;
}

static void stop(void *arg, int dest)
{
	(void)arg;
	send_job(NULL, 0, dest);
}

static void collect(void *arg, int src)
{
	struct coord *c = arg;

	recv_result(c->run, &c->head, src);
}

/* Rank 0's main thread: hand out, collect, until every worker stopped.
 * With TSGREP_MPI_STATS in the environment, the hand-outs' count and
 * mean time (taking the next file, walking on if needed, and sending it)
 * go to stderr. */
static void coordinate(struct run *run, int nranks)
{
	struct coord c = { run, TSG_SCRATCH_INIT, { 0 }, 0, 0 };
	const struct mpi_handout h = { &c,   &c.head, sizeof(c.head),
				       give, stop,    collect };

	if (mpi_hand_out(&h, nranks))
		die_oom();
	if (getenv("TSGREP_MPI_STATS"))
		fprintf(stderr, "tsgrep-mpi: %lu hand-outs, %.1f us each\n",
			c.handouts,
			c.handouts ? c.spent / (double)c.handouts * 1e6 : 0.0);
	tsg_scratch_free(&c.scratch);
}

void tsg_mpi_run_jobs(const struct tsg_cfg *cfg, struct tsg_filelist *list,
		      struct tsg_walk *walk, struct tsg_result *res);

void tsg_mpi_run_jobs(const struct tsg_cfg *cfg, struct tsg_filelist *list,
		      struct tsg_walk *walk, struct tsg_result *res)
{
	struct run run;
	struct tsg_out sep;
	pthread_t thread;
	int rank, nranks, started = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (rank) {
		worker_rank(cfg);
		return;
	}
	memset(&run, 0, sizeof(run));
	run.cfg = cfg;
	run.list = list;
	run.walk = walk;
	pthread_mutex_init(&run.lock, NULL);
	order_init(&run.order, cfg, list);
	memset(&sep, 0, sizeof(sep));
	out_group_sep(cfg, &sep);
	if (sep.len < sizeof(run.sep)) {
		memcpy(run.sep, sep.buf, sep.len);
		run.seplen = sep.len;
	}
	out_free(&sep);

	if (nranks > 1 && !pthread_create(&thread, NULL, local_worker, &run))
		started = 1;
	if (nranks > 1)
		coordinate(&run, nranks);
	/* what the workers may not take (stdin, walk errors), and the rest
	 * when rank 0 could not start its thread or runs alone */
	if (started)
		pthread_join(thread, NULL);
	local_worker(&run);
	out_flush_stdout();

	tsg_sum_results(list, atomic_load(&run.order.quit_at), res);
	order_destroy(&run.order);
	pthread_mutex_destroy(&run.lock);
}
