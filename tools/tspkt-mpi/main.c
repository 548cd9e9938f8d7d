/*
 * main.c - tspkt-mpi: tspkt over many captures, one MPI shard per capture.
 *
 *   tspkt-mpi [OPTION]... -r FILE [-r FILE]... [-e RULE]... [-f RULEFILE]
 *             [PATTERN] [FILTER...]
 *
 * Every rank parses the same command line.  With one rank, rank 0 runs
 * tspkt on every capture itself; with more, rank 0 hands the captures out
 * on demand and the other ranks each run tspkt on theirs (run.c) and send
 * back its output, messages and exit status.  Rank 0 merges them in
 * capture-time order (merge.c) once every capture is done: the earliest
 * packet may be in the last one.  Only rank 0 talks to the user.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_util.h"
#include "tspkt_mpi.h"

struct result_head {
	uint64_t idx;
	int64_t status;
	uint64_t outlen, errlen, pcaplen;
};

_Noreturn void tspkt_mpi_exit(int status)
{
	int init = 0, fin = 0, rank = 0;

	fflush(stdout);
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (init && !fin) {
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		MPI_Finalize();
	}
	exit(rank ? 0 : status);
}

static void die_oom(void)
{
	fprintf(stderr, TSPKT_MPI_PROG ": out of memory\n");
	/* a rank that cannot go on takes the job down rather than hang it */
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

static void help(void)
{
	fputs("Usage: " TSPKT_MPI_PROG " [OPTION]... -r FILE [-r FILE]... "
	      "[-e RULE]... [-f RULEFILE]\n"
	      "                 [PATTERN] [FILTER...]\n"
	      "tspkt over many captures under mpirun or srun: one capture "
	      "per shard, the\noutput merged in capture-time order (ties in "
	      "-r order), counters summed.\n"
	      "\n"
	      "  -r, -I FILE   a capture to read (several allowed, not -)\n"
	      "\n"
	      "  -w FILE       the matching packets of all captures, merged "
	      "in time order\n"
	      "\n"
	      "Every other option is tspkt's (tspkt --help), except -i.  "
	      "Flows are not\nfollowed across captures.  "
	      "Exit status: 0 a packet matched,\n1 none, 2 an error.  See "
	      "tspkt-mpi(1).\n",
	      stdout);
}

/* -w FILE is one of the captures: tspkt's own refusal. */
static const char *overwrites(const struct tspkt_mpi_args *a)
{
	struct stat w, c;
	size_t i;

	if (!a->write_file || stat(a->write_file, &w))
		return NULL;
	for (i = 0; i < a->nfiles; i++)
		if (!stat(a->files[i], &c) && c.st_dev == w.st_dev &&
		    c.st_ino == w.st_ino)
			return a->files[i];
	return NULL;
}

/* What tspkt-mpi cannot do: the message and exit 2 on every rank. */
static void refuse(const struct tspkt_mpi_args *a)
{
	const char *why = NULL, *file;
	size_t i;

	if (a->live)
		why = "-i IFACE: a live capture is one stream, not files "
		      "to share out; use tspkt";
	else if (!a->nfiles)
		why = "give the captures to read: -r FILE, once per "
		      "capture";
	else if (a->write_file && (a->max_matches || a->quiet))
		why = "-w with -n or -q is not supported: each capture "
		      "stops at its own count, so its packets are not the "
		      "first of the merge";
	for (i = 0; !why && i < a->nfiles; i++)
		if (!strcmp(a->files[i], "-"))
			why = "-r -: standard input is rank 0's only; give "
			      "capture files";
	if (why) {
		fprintf(stderr, TSPKT_MPI_PROG ": %s\n", why);
		tspkt_mpi_exit(2);
	}
	file = overwrites(a);
	if (file) {
		fprintf(stderr,
			TSPKT_MPI_PROG ": -w %s: that is a capture being "
				       "read (-r %s); not overwriting it\n",
			a->write_file, file);
		tspkt_mpi_exit(2);
	}
}

/* tspkt on capture @idx here; a failure to capture its output is a
 * message of that capture. */
static void run_one(const struct tspkt_mpi_args *a, size_t idx,
		    struct tspkt_mpi_result *r)
{
	static const char msg[] = TSPKT_MPI_PROG
		": cannot keep tspkt's output: out of memory "
		"or no room for temporary files\n";

	if (!tspkt_mpi_run(a, idx, r))
		return;
	free(r->out);
	free(r->err);
	free(r->pcap);
	r->out = NULL;
	r->outlen = 0;
	r->pcap = NULL;
	r->pcaplen = 0;
	r->err = strdup(msg);
	if (!r->err)
		die_oom();
	r->errlen = strlen(msg);
	r->status = 2;
}

static void send_job(uint64_t idx, int dest)
{
	MPI_Send(&idx, 1, MPI_UINT64_T, dest, TS_TAG_JOB, MPI_COMM_WORLD);
}

static void worker_rank(const struct tspkt_mpi_args *a)
{
	struct tspkt_mpi_result r;
	struct result_head head;
	MPI_Status status;
	uint64_t idx;

	for (;;) {
		mpi_wait_probe(0, TS_TAG_JOB, &status);
		MPI_Recv(&idx, 1, MPI_UINT64_T, 0, TS_TAG_JOB, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		if (idx == TS_NO_JOB || idx >= a->nfiles)
			break;
		run_one(a, (size_t)idx, &r);
		head.idx = idx;
		head.status = r.status;
		head.outlen = r.outlen;
		head.errlen = r.errlen;
		head.pcaplen = r.pcaplen;
		MPI_Send(&head, sizeof(head), MPI_BYTE, 0, TS_TAG_RESULT,
			 MPI_COMM_WORLD);
		if (r.outlen)
			mpi_send_bytes(r.out, r.outlen, 0, TS_TAG_DATA);
		if (r.errlen)
			mpi_send_bytes(r.err, r.errlen, 0, TS_TAG_DATA);
		if (r.pcaplen)
			mpi_send_bytes(r.pcap, r.pcaplen, 0, TS_TAG_DATA);
		free(r.out);
		free(r.err);
		free(r.pcap);
	}
}

static char *recv_part(uint64_t len, int src)
{
	char *buf = malloc(len + 1);

	if (!buf)
		die_oom();
	if (len)
		mpi_recv_bytes(buf, len, src, TS_TAG_DATA);
	buf[len] = '\0'; /* merge.c splits the messages in place */
	return buf;
}

/* Rank 0 in the hand-out (mpi_hand_out()): captures in -r order. */
struct coord {
	const struct tspkt_mpi_args *a;
	struct tspkt_mpi_result *res;
	struct result_head head;
	size_t next;
};

static bool give(void *arg, int dest, bool refill)
{
	struct coord *c = arg;

	(void)refill;
	if (c->next >= c->a->nfiles)
		return false;
	send_job(c->next++, dest);
	return true;
}

static void stop(void *arg, int dest)
{
	(void)arg;
	send_job(TS_NO_JOB, dest);
}

static bool collect(void *arg, int src)
{
	struct coord *c = arg;
	const struct result_head *head = &c->head;
	struct tspkt_mpi_result *got = &c->res[head->idx];

	got->status = (int)head->status;
	got->outlen = head->outlen;
	got->errlen = head->errlen;
	got->pcaplen = head->pcaplen;
	/* each part from the same rank, in order */
	got->out = recv_part(head->outlen, src);
	got->err = recv_part(head->errlen, src);
	got->pcap = head->pcaplen ? recv_part(head->pcaplen, src) : NULL;
	return true;
}

int main(int argc, char **argv)
{
	struct tspkt_mpi_args a;
	struct tspkt_mpi_result *res;
	int provided, rank = 0, nranks = 1, status = 0, fd;
	size_t i;

	/* only the main thread calls MPI; tspkt's threads never do */
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) !=
	    MPI_SUCCESS)
		return 2;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (rank) {
		/* one copy of --help and of every message: rank 0's */
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
	}
	if (tspkt_mpi_scan(argc, argv, &a))
		die_oom();
	if (a.help || a.version) {
		if (a.help)
			help();
		else
			tspkt_mpi_version();
		tspkt_mpi_args_free(&a);
		tspkt_mpi_exit(0);
	}
	refuse(&a);
	tspkt_mpi_check(&a, a.files[0]);

	res = calloc(a.nfiles, sizeof(*res));
	if (!res)
		die_oom();
	if (nranks == 1) {
		for (i = 0; i < a.nfiles; i++)
			run_one(&a, i, &res[i]);
	} else if (rank) {
		worker_rank(&a);
	} else {
		struct coord c = { &a, res, { 0 }, 0 };
		const struct mpi_handout h = { &c,   &c.head, sizeof(c.head),
					       give, stop,    collect };

		if (mpi_hand_out(&h, nranks))
			die_oom();
	}
	if (!rank)
		status = tspkt_mpi_merge(&a, res);
	for (i = 0; i < a.nfiles; i++) {
		free(res[i].out);
		free(res[i].err);
		free(res[i].pcap);
	}
	free(res);
	tspkt_mpi_args_free(&a);
	MPI_Finalize();
	return rank ? 0 : status;
}
