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
 * A big regular file is split into ranges of whole lines (struct
 * tsg_range), searched as shards of their own: each range's output keeps
 * its line numbers in slots, and once every range of the file is back,
 * rank 0 puts the file's output together, numbering its lines.  A range
 * is searched as if the file were text before it (unless its first read
 * had a NUL); when an earlier range turned the file binary, the rest of
 * the file is searched again as one range, binary.  Options whose output
 * depends on lines before or after a range (context, -m, -q, -l, -L,
 * --binary-files=without-match) keep files whole.
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

/* files from this size on are split (TSGREP_MPI_RANGE overrides) */
#define RANGE_SIZE (32 << 20)
/* a hand-out holds files up to this many, or up to these bytes */
#define BATCH_FILES 64
#define BATCH_BYTES (1 << 20)

/* One range of a split file, and its search's result. */
struct piece {
	struct tsg_range range;
	struct tsg_out out;
	long long nsel;
	int err;
	struct tsg_file_stats stats;
};

/* A file searched in ranges (rank 0). */
struct split {
	struct tsg_file *file;
	struct piece *pieces;
	size_t n, ndone;
};

/* What is handed out: a whole file, or a range of a split one. */
struct job {
	struct tsg_file *file; /* NULL: no more */
	struct split *split;
	size_t piece;
	uint64_t bytes; /* its size, as far as known (0 if not) */
};

/* A job as sent (then the path and display, NUL-terminated).  split is
 * rank 0's pointer, only sent back. */
struct job_head {
	uint64_t idx, show_name;
	uint64_t split, piece, start, limit, binary;
};

/* What a worker sends back for one job, @last of its message (then the
 * payload: the stdout bytes, each message as its place, length and text,
 * and each line number slot as its place and number). */
struct result_head {
	uint64_t idx, last, split, piece;
	int64_t nsel;
	uint64_t err, used;
	uint64_t bytes, lines, matches;
	uint64_t binary_after, binary_matched, stopped, nmatch, newlines;
	uint64_t len, nmsgs, nslots, payload;
};

struct run {
	const struct tsg_cfg *cfg;
	struct tsg_filelist *list;
	struct tsg_walk *walk;
	struct tsg_order order;
	pthread_mutex_t lock; /* next, the walk, the queue and splits */
	size_t next;
	int walk_done;
	/* ranges waiting to be handed out, before the next file */
	struct job *queue;
	size_t qhead, qlen, qcap;
	uint64_t range_size; /* 0: files are not split */
	/* for TSGREP_MPI_STATS */
	unsigned long handouts, splits, ranges;
	double spent;
	char sep[64]; /* the group separator, as out_group_sep() writes it */
	size_t seplen;
};

static void die_oom(void)
{
	out_write_fd(2, TSG_PROG ": out of memory\n", 23);
	_exit(2);
}

static void *xrealloc(void *ptr, size_t size)
{
	ptr = realloc(ptr, size);
	if (!ptr)
		die_oom();
	return ptr;
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

/* ---- ranges ---- */

/* Whether no option's output of a line depends on the lines of another
 * range (see the top of this file). */
static int ranges_allowed(const struct tsg_cfg *cfg)
{
	return cfg->before < 0 && cfg->after < 0 && cfg->max_count < 0 &&
	       !cfg->quiet && cfg->list == TSG_LIST_NONE &&
	       cfg->binary != TSG_BIN_WITHOUT_MATCH;
}

static uint64_t range_size(const struct tsg_cfg *cfg)
{
	const char *env = getenv("TSGREP_MPI_RANGE");
	uint64_t size = RANGE_SIZE;
	char *end;

	if (!ranges_allowed(cfg))
		return 0;
	if (env && *env) {
		errno = 0;
		size = strtoull(env, &end, 10);
		if (errno || *end || !size) {
			fprintf(stderr,
				TSG_PROG "-mpi: TSGREP_MPI_RANGE: '%s' is not "
					 "a size in bytes\n",
				env);
			exit(2);
		}
	}
	/* whole reads: a range's reads fall where the file's fall */
	return (size + cfg->chunk - 1) / cfg->chunk * cfg->chunk;
}

static void queue_push(struct run *run, struct split *split, size_t piece)
{
	const struct tsg_range *range;

	if (run->qhead == run->qlen)
		run->qhead = run->qlen = 0;
	if (run->qlen == run->qcap) {
		run->qcap = run->qcap ? 2 * run->qcap : 16;
		run->queue =
			xrealloc(run->queue, run->qcap * sizeof(*run->queue));
	}
	range = &split->pieces[piece].range;
	run->queue[run->qlen++] = (struct job){ split->file, split, piece,
						range->limit - range->start };
}

/* Split @file into ranges if it is a regular file worth it, with no hole
 * (grep's binary test of a sparse file is the whole file's), queueing all
 * but the first: the job for that, or the whole file. */
static struct job split_file(struct run *run, struct tsg_file *file)
{
	struct job job = { file, NULL, 0, 0 };
	uint64_t size = run->range_size, n, k;
	struct split *split;
	struct stat st;
	unsigned char *head;
	ssize_t got;
	int fd, binary = 0;

	if (file->error || file->is_loop || !strcmp(file->path, "-") ||
	    stat(file->path, &st) || !S_ISREG(st.st_mode))
		return job;
	job.bytes = (uint64_t)st.st_size;
	if (!size || (uint64_t)st.st_size < 2 * size ||
	    (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size)
		return job;
	/* a NUL in the first read: the ranges after it are binary */
	fd = open(file->path, O_RDONLY | O_NOCTTY);
	if (fd < 0)
		return job;
	head = malloc(run->cfg->chunk);
	if (!head)
		die_oom();
	got = pread(fd, head, run->cfg->chunk, 0);
	if (run->cfg->binary != TSG_BIN_TEXT && got > 0 &&
	    memchr(head, '\0', (size_t)got))
		binary = 1;
	free(head);
	close(fd);

	n = ((uint64_t)st.st_size + size - 1) / size;
	run->splits++;
	run->ranges += n;
	split = calloc(1, sizeof(*split));
	if (!split)
		die_oom();
	split->file = file;
	split->n = n;
	split->pieces = calloc(n, sizeof(*split->pieces));
	if (!split->pieces)
		die_oom();
	for (k = 0; k < n; k++) {
		split->pieces[k].range.start = k * size;
		/* the last range reads on to the end, as the file grows */
		split->pieces[k].range.limit = k + 1 < n ? (k + 1) * size :
							   UINT64_MAX;
		split->pieces[k].range.binary = k && binary;
		if (k)
			queue_push(run, split, k);
	}
	job.split = split;
	job.bytes = size;
	return job;
}

/* The ranges' outputs as the file's: line numbers filled in, messages
 * kept in place, -c and "binary file matches" once for the file. */
static void join_pieces(const struct tsg_cfg *cfg, struct split *split)
{
	struct tsg_file *file = split->file;
	struct tsg_out *out = &file->out;
	uint64_t first = 1, nmatch = 0;
	size_t k, at, m, l, next;
	int binary_matched = 0;

	file->nsel = 0;
	for (k = 0; k < split->n; k++) {
		struct piece *p = &split->pieces[k];
		struct tsg_out *po = &p->out;

		for (at = 0, m = 0, l = 0;;) {
			next = po->len;
			if (m < po->nmsgs && po->msgs[m].at < next)
				next = po->msgs[m].at;
			if (l < po->nslots && po->slots[l].at < next)
				next = po->slots[l].at;
			if (next > at)
				out_put(out, po->buf + at, next - at);
			at = next;
			if (m < po->nmsgs && po->msgs[m].at == at) {
				out_msg(out, po->msgs[m].text,
					strlen(po->msgs[m].text));
				m++;
			} else if (l < po->nslots && po->slots[l].at == at) {
				/* the file's output has no slots: written */
				out_lineno(out,
					   first + po->slots[l].lineno - 1);
				l++;
			} else {
				break;
			}
		}
		first += p->range.newlines;
		file->nsel += p->nsel;
		file->err |= p->err;
		file->stats.bytes += p->stats.bytes;
		file->stats.lines += p->stats.lines;
		file->stats.matches += p->stats.matches;
		out->used |= po->used;
		nmatch += p->range.nmatch;
		binary_matched |= p->range.binary_matched;
		out_free(po);
		if (p->range.stopped)
			break;
	}
	for (k++; k < split->n; k++)
		out_free(&split->pieces[k].out);
	if (cfg->count)
		out_count(cfg, out, file->show_name ? file->display : NULL,
			  cfg->count_matches ? nmatch : (uint64_t)file->nsel);
	else if (binary_matched)
		out_binary_matches(out, file->display);
	free(split->pieces);
	free(split);
}

/* A range is back: once all are, the file is finished, or its rest is
 * searched again if it turned binary before a range that took it for
 * text. */
static void piece_done(struct run *run, struct split *split)
{
	struct tsg_file *file;
	size_t k;
	int binary = 0;

	pthread_mutex_lock(&run->lock);
	if (++split->ndone < split->n) {
		pthread_mutex_unlock(&run->lock);
		return;
	}
	for (k = 0; k < split->n; k++) {
		struct piece *p = &split->pieces[k];

		if (binary && !p->range.binary)
			break;
		if (p->range.stopped) {
			k = split->n;
			break;
		}
		binary = p->range.binary_after;
	}
	if (k < split->n) {
		struct piece *redo = &split->pieces[k];
		uint64_t start = redo->range.start;
		size_t i;

		for (i = k; i < split->n; i++)
			out_free(&split->pieces[i].out);
		memset(redo, 0, sizeof(*redo));
		redo->range.start = start;
		redo->range.limit = UINT64_MAX;
		redo->range.binary = 1;
		split->n = k + 1;
		split->ndone = k;
		queue_push(run, split, k);
		pthread_mutex_unlock(&run->lock);
		return;
	}
	pthread_mutex_unlock(&run->lock);
	file = split->file;
	join_pieces(run->cfg, split);
	finish_file(run, file);
}
/* The next job, walking on as needed; file NULL at the end.  For a worker
 * rank (@remote), stdin and the walk's errors are done here on rank 0 as
 * they come, on @scratch. */
static struct job take(struct run *run, int remote, struct tsg_scratch *scratch)
{
	struct job job = { NULL, NULL, 0, 0 };
	struct tsg_file *file;

	pthread_mutex_lock(&run->lock);
	for (;;) {
		if (run->qhead < run->qlen) {
			job = run->queue[run->qhead++];
			break;
		}
		if (run->next < atomic_load(&run->list->n)) {
			file = filelist_at(run->list, run->next++);
			if (remote && (!strcmp(file->path, "-") ||
				       file->error || file->is_loop)) {
				pthread_mutex_unlock(&run->lock);
				search_and_finish(run, file, scratch);
				pthread_mutex_lock(&run->lock);
				continue;
			}
			job = split_file(run, file);
			break;
		}
		if (run->walk_done)
			break;
		/* false at the end, but what it added this time counts */
		if (!walk_more(run->walk))
			run->walk_done = 1;
	}
	pthread_mutex_unlock(&run->lock);
	return job;
}

/* Search one range of @file into @p (on any rank). */
static void search_piece(const struct tsg_cfg *cfg, struct tsg_file *file,
			 struct piece *p, struct tsg_scratch *scratch)
{
	struct tsg_file part;

	memset(&part, 0, sizeof(part));
	part.path = file->path;
	part.display = file->display;
	part.show_name = file->show_name;
	part.range = &p->range;
	search_file(cfg, &part, scratch);
	p->out = part.out;
	p->nsel = part.nsel;
	p->err = part.err;
	p->stats = part.stats;
}

static void do_local(struct run *run, const struct job *job,
		     struct tsg_scratch *scratch)
{
	if (job->split) {
		search_piece(run->cfg, job->file,
			     &job->split->pieces[job->piece], scratch);
		piece_done(run, job->split);
	} else {
		search_and_finish(run, job->file, scratch);
	}
}

static void *local_worker(void *arg)
{
	struct run *run = arg;
	struct tsg_scratch scratch = TSG_SCRATCH_INIT;
	struct job job;

	while ((job = take(run, 0, &scratch)).file)
		do_local(run, &job, &scratch);
	tsg_scratch_free(&scratch);
	return NULL;
}

/* ---- messages ---- */

/* Job messages on their way: a message of many paths is not sent at
 * once (MPI's rendezvous), and rank 0 must go on receiving meanwhile, or
 * it and a rank that sends a big result would wait on each other. */
struct sends {
	MPI_Request *reqs;
	char **msgs;
	size_t n, cap;
};

/* Free the messages that are sent (all of them, waiting, if @all). */
static void sends_reap(struct sends *sends, int all)
{
	size_t i = 0;
	int done;

	while (i < sends->n) {
		if (all)
			MPI_Wait(&sends->reqs[i], MPI_STATUS_IGNORE);
		else
			MPI_Test(&sends->reqs[i], &done, MPI_STATUS_IGNORE);
		if (sends->reqs[i] != MPI_REQUEST_NULL) {
			i++;
			continue;
		}
		free(sends->msgs[i]);
		sends->n--;
		sends->reqs[i] = sends->reqs[sends->n];
		sends->msgs[i] = sends->msgs[sends->n];
	}
}

/* Jobs in one message to @dest (none: TS_NO_JOB), each its head, then
 * path and display, NUL-terminated. */
static void send_jobs(struct sends *sends, const struct job *jobs, size_t n,
		      int dest)
{
	struct job_head head;
	size_t len = n ? 0 : sizeof(head), i, plen, dlen;
	char *msg, *pos;

	for (i = 0; i < n; i++)
		len += sizeof(head) + strlen(jobs[i].file->path) + 1 +
		       strlen(jobs[i].file->display) + 1;
	msg = malloc(len);
	if (!msg)
		die_oom();
	memset(&head, 0, sizeof(head));
	head.idx = TS_NO_JOB;
	if (!n)
		memcpy(msg, &head, sizeof(head));
	for (i = 0, pos = msg; i < n; i++) {
		const struct tsg_file *file = jobs[i].file;

		memset(&head, 0, sizeof(head));
		head.idx = (uint64_t)file->out.idx;
		head.show_name = (uint64_t)file->show_name;
		if (jobs[i].split) {
			const struct tsg_range *range =
				&jobs[i].split->pieces[jobs[i].piece].range;

			head.split = (uint64_t)(uintptr_t)jobs[i].split;
			head.piece = jobs[i].piece;
			head.start = range->start;
			head.limit = range->limit;
			head.binary = (uint64_t)range->binary;
		}
		plen = strlen(file->path) + 1;
		dlen = strlen(file->display) + 1;
		memcpy(pos, &head, sizeof(head));
		memcpy(pos + sizeof(head), file->path, plen);
		memcpy(pos + sizeof(head) + plen, file->display, dlen);
		pos += sizeof(head) + plen + dlen;
	}
	sends_reap(sends, 0);
	if (sends->n == sends->cap) {
		sends->cap = sends->cap ? 2 * sends->cap : 8;
		sends->reqs = xrealloc(sends->reqs,
				       sends->cap * sizeof(*sends->reqs));
		sends->msgs = xrealloc(sends->msgs,
				       sends->cap * sizeof(*sends->msgs));
	}
	MPI_Isend(msg, (int)len, MPI_BYTE, dest, TS_TAG_JOB, MPI_COMM_WORLD,
		  &sends->reqs[sends->n]);
	sends->msgs[sends->n++] = msg;
}

static void send_result(const struct job_head *job, const struct piece *p,
			int last)
{
	const struct tsg_out *out = &p->out;
	struct result_head head;
	uint64_t payload = out->len, tlen, pair[2];
	char *msg, *pos;
	size_t i;

	for (i = 0; i < out->nmsgs; i++)
		payload += 2 * sizeof(uint64_t) + strlen(out->msgs[i].text);
	payload += out->nslots * 2 * sizeof(uint64_t);
	memset(&head, 0, sizeof(head));
	head.idx = job->idx;
	head.last = (uint64_t)last;
	head.split = job->split;
	head.piece = job->piece;
	head.nsel = p->nsel;
	head.err = (uint64_t)p->err;
	head.used = (uint64_t)out->used;
	head.bytes = p->stats.bytes;
	head.lines = p->stats.lines;
	head.matches = p->stats.matches;
	head.binary_after = (uint64_t)p->range.binary_after;
	head.binary_matched = (uint64_t)p->range.binary_matched;
	head.stopped = (uint64_t)p->range.stopped;
	head.nmatch = p->range.nmatch;
	head.newlines = p->range.newlines;
	head.len = out->len;
	head.nmsgs = out->nmsgs;
	head.nslots = out->nslots;
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
		tlen = strlen(out->msgs[i].text);
		pair[0] = out->msgs[i].at;
		pair[1] = tlen;
		memcpy(pos, pair, sizeof(pair));
		memcpy(pos + sizeof(pair), out->msgs[i].text, tlen);
		pos += sizeof(pair) + tlen;
	}
	for (i = 0; i < out->nslots; i++) {
		pair[0] = out->slots[i].at;
		pair[1] = out->slots[i].lineno;
		memcpy(pos, pair, sizeof(pair));
		pos += sizeof(pair);
	}
	mpi_send_bytes(msg, payload, 0, TS_TAG_DATA);
	free(msg);
}

/* Rank 0: a worker's result into @p; its output is built afresh, with its
 * messages where they were and its line number slots. */
static void recv_piece(const struct result_head *head, const char *payload,
		       struct piece *p)
{
	struct tsg_out *out = &p->out;
	const char *pos = payload + head->len;
	uint64_t i, pair[2];
	size_t done = 0;

	p->nsel = head->nsel;
	p->err = (int)head->err;
	p->stats.bytes = head->bytes;
	p->stats.lines = head->lines;
	p->stats.matches = head->matches;
	p->range.binary_after = (int)head->binary_after;
	p->range.binary_matched = (int)head->binary_matched;
	p->range.stopped = (int)head->stopped;
	p->range.nmatch = head->nmatch;
	p->range.newlines = head->newlines;
	out->used = (int)head->used;
	for (i = 0; i < head->nmsgs; i++) {
		memcpy(pair, pos, sizeof(pair));
		pos += sizeof(pair);
		if (pair[0] > done)
			out_put(out, payload + done, pair[0] - done);
		done = pair[0];
		out_msg(out, pos, pair[1]);
		pos += pair[1];
	}
	if (head->len > done)
		out_put(out, payload + done, head->len - done);
	if (head->nslots) {
		out->slots = xrealloc(NULL, head->nslots * sizeof(*out->slots));
		out->nslots = out->capslots = head->nslots;
	}
	for (i = 0; i < head->nslots; i++) {
		memcpy(pair, pos, sizeof(pair));
		pos += sizeof(pair);
		out->slots[i].at = pair[0];
		out->slots[i].lineno = pair[1];
	}
}

/* Rank 0: a worker's result, for a whole file or a range. */
static void recv_result(struct run *run, const struct result_head *head,
			int src)
{
	struct split *split = (struct split *)(uintptr_t)head->split;
	struct tsg_file *file = filelist_at(run->list, head->idx);
	struct piece whole;
	char *payload = NULL;

	if (head->payload) {
		payload = malloc(head->payload);
		if (!payload)
			die_oom();
		mpi_recv_bytes(payload, head->payload, src, TS_TAG_DATA);
	}
	if (split) {
		recv_piece(head, payload, &split->pieces[head->piece]);
		free(payload);
		piece_done(run, split);
		return;
	}
	memset(&whole, 0, sizeof(whole));
	recv_piece(head, payload, &whole);
	free(payload);
	file->out.buf = whole.out.buf;
	file->out.len = whole.out.len;
	file->out.cap = whole.out.cap;
	file->out.msgs = whole.out.msgs;
	file->out.nmsgs = whole.out.nmsgs;
	file->out.capmsgs = whole.out.capmsgs;
	file->out.used = whole.out.used;
	file->nsel = whole.nsel;
	file->err = whole.err;
	file->stats = whole.stats;
	finish_file(run, file);
}

/* ---- the ranks ---- */

/* One job of a message from rank 0, searched. */
static void worker_job(const struct tsg_cfg *cfg, const struct job_head *head,
		       char *path, struct tsg_scratch *scratch, int last)
{
	struct tsg_file file;
	struct piece p;

	memset(&file, 0, sizeof(file));
	memset(&p, 0, sizeof(p));
	file.path = path;
	file.display = path + strlen(path) + 1;
	file.show_name = (int)head->show_name;
	if (head->split) {
		p.range.start = head->start;
		p.range.limit = head->limit;
		p.range.binary = (int)head->binary;
		search_piece(cfg, &file, &p, scratch);
	} else {
		search_file(cfg, &file, scratch);
		p.out = file.out;
		p.nsel = file.nsel;
		p.err = file.err;
		p.stats = file.stats;
	}
	send_result(head, &p, last);
	out_free(&p.out);
}

static void worker_rank(const struct tsg_cfg *cfg)
{
	struct tsg_scratch scratch = TSG_SCRATCH_INIT;
	struct job_head head;
	MPI_Status status;
	char *msg, *pos, *end;
	int len;

	for (;;) {
		mpi_wait_probe(0, TS_TAG_JOB, &status);
		MPI_Get_count(&status, MPI_BYTE, &len);
		msg = malloc((size_t)len);
		if (!msg)
			die_oom();
		MPI_Recv(msg, len, MPI_BYTE, 0, TS_TAG_JOB, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		memcpy(&head, msg, sizeof(head));
		if (head.idx == TS_NO_JOB) {
			free(msg);
			break;
		}
		for (pos = msg, end = msg + len; pos < end;) {
			char *path = pos + sizeof(head);
			char *next = path + strlen(path) + 1;

			next += strlen(next) + 1;
			memcpy(&head, pos, sizeof(head));
			worker_job(cfg, &head, path, &scratch, next >= end);
			pos = next;
		}
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
	struct sends sends;
};

/* A hand-out's time (taking the next job, walking on if needed, and
 * sending it) is kept for TSGREP_MPI_STATS. */
static bool give(void *arg, int dest, bool refill)
{
	struct coord *c = arg;
	double t0 = now();
	struct job jobs[BATCH_FILES];
	uint64_t bytes = 0;
	size_t n = 0;

	/* small files go by the batch: a file searched in microseconds
	 * would leave the rank waiting for the next hand-out */
	while (n < BATCH_FILES && bytes < BATCH_BYTES) {
		jobs[n] = take(c->run, 1, &c->scratch);
		if (!jobs[n].file)
			break;
		bytes += jobs[n++].bytes;
	}
	if (!n)
		return false;
	send_jobs(&c->sends, jobs, n, dest);
	if (refill) {
		c->run->handouts++;
		c->run->spent += now() - t0;
	}
	return true;
}

static void stop(void *arg, int dest)
{
	struct coord *c = arg;

	send_jobs(&c->sends, NULL, 0, dest);
}

static bool collect(void *arg, int src)
{
	struct coord *c = arg;

	recv_result(c->run, &c->head, src);
	return c->head.last;
}

/* Rank 0's main thread: hand out, collect, until every worker stopped. */
static void coordinate(struct run *run, int nranks)
{
	struct coord c = { run, TSG_SCRATCH_INIT, { 0 }, { NULL, NULL, 0, 0 } };
	const struct mpi_handout h = { &c,   &c.head, sizeof(c.head),
				       give, stop,    collect };

	if (mpi_hand_out(&h, nranks))
		die_oom();
	sends_reap(&c.sends, 1);
	free(c.sends.reqs);
	free(c.sends.msgs);
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
	run.range_size = range_size(cfg);
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

	if (getenv("TSGREP_MPI_STATS"))
		fprintf(stderr,
			"tsgrep-mpi: %lu hand-outs, %.1f us each; %lu files "
			"split in %lu ranges\n",
			run.handouts,
			run.handouts ? run.spent / (double)run.handouts * 1e6 :
				       0.0,
			run.splits, run.ranges);
	tsg_sum_results(list, atomic_load(&run.order.quit_at), res);
	order_destroy(&run.order);
	pthread_mutex_destroy(&run.lock);
	free(run.queue);
}
