/*
 * run.c - tspkt's own main.c, compiled into tspkt-mpi with main() renamed
 * tspkt_main() and exit() going through tspkt_mpi_exit(), so that each
 * capture is searched by exactly tspkt's code and its options are parsed
 * and checked by tspkt's parser.  tspkt's sources stay untouched.
 */
#define _DEFAULT_SOURCE /* as tools/tspkt/main.c: pcap.h's u_char */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* every header main.c includes, before the renames below touch them */
#include "backlog.h"
#include "capture.h"
#include "classify.h"
#include "defrag.h"
#include "output.h"
#include "pool.h"
#include "rules.h"
#include "sets.h"
#include "tcpstream.h"
#include "tspkt.h"
#include "tspkt_mpi.h"

int tspkt_main(int argc, char **argv);

/* glibc's features.h redefined it, which main.c's own define would clash
 * with; its headers are all in already */
#undef _DEFAULT_SOURCE
#define main tspkt_main
#define exit tspkt_mpi_exit
#include "../tspkt/main.c"
#undef exit
#undef main

int tspkt_mpi_scan(int argc, char **argv, struct tspkt_mpi_args *a)
{
	char **files;
	int c, at;

	memset(a, 0, sizeof(*a));
	a->argc = argc;
	a->argv = argv;
	/* tspkt's parser reports the errors later; here only the options */
	optind = 0;
	opterr = 0;
	for (;;) {
		at = optind ? optind : 1;
		c = getopt_long(argc, argv, short_opts, long_opts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'r':
		case 'I':
			files = realloc(a->files,
					(a->nfiles + 1) * sizeof(*files));
			if (!files) {
				opterr = 1;
				return -1;
			}
			a->files = files;
			a->files[a->nfiles++] = optarg;
			break;
		case 'i':
		case 'd':
			a->live = true;
			break;
		case 'w':
			a->write_file = optarg;
			break;
		case 'h':
			a->help = true;
			break;
		case 'V':
			a->version = true;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'n':
			a->max_matches = strtoull(optarg, NULL, 10);
			break;
		default:
			break;
		}
	}
	opterr = 1;
	/* the -r of each run goes before the operands, and before a "--"
	 * that ended the options */
	a->split = optind;
	if (optind == at + 1 && !strcmp(argv[at], "--"))
		a->split = at;
	return 0;
}

void tspkt_mpi_args_free(struct tspkt_mpi_args *a)
{
	free(a->files);
	a->files = NULL;
}

void tspkt_mpi_version(void)
{
	printf(TSPKT_MPI_PROG " (textsearch) %s, %s\n",
	       textsearch_version_string(), pcap_lib_version());
}

/* The command line with "-r @file" and "-w @wfile" (unless NULL) as its
 * last options (tspkt keeps the last of each); NULL-terminated, in one
 * allocation. */
static char **argv_for(const struct tspkt_mpi_args *a, const char *file,
		       const char *wfile, int *argc)
{
	char **v = malloc(((size_t)a->argc + 5) * sizeof(*v));
	int i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i < a->split; i++)
		v[n++] = a->argv[i];
	v[n++] = "-r";
	v[n++] = (char *)file;
	if (wfile) {
		v[n++] = "-w";
		v[n++] = (char *)wfile;
	}
	for (i = a->split; i < a->argc; i++)
		v[n++] = a->argv[i];
	v[n] = NULL;
	*argc = n;
	return v;
}

void tspkt_mpi_check(const struct tspkt_mpi_args *a, const char *file)
{
	struct cmdline cl;
	char **argv;
	int argc;

	argv = argv_for(a, file, NULL, &argc);
	if (!argv) {
		fprintf(stderr, TSPKT_PROG ": out of memory\n");
		tspkt_mpi_exit(2);
	}
	memset(&cl, 0, sizeof(cl));
	optind = 0;
	parse_args(argc, argv, &cl);
	ruleset_free(&cl.o.rules);
	free(cl.o.filter);
	free(argv);
}

/* All of @f's bytes, from its start; NULL on an error. */
static char *slurp(FILE *f, uint64_t *len)
{
	struct stat st;
	char *buf;
	size_t done = 0;
	ssize_t n;

	if (fstat(fileno(f), &st) || lseek(fileno(f), 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (done < (size_t)st.st_size) {
		n = read(fileno(f), buf + done, (size_t)st.st_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return NULL;
		}
		done += (size_t)n;
	}
	buf[done] = '\0'; /* merge.c splits the messages in place */
	*len = done;
	return buf;
}

/* Where tspkt's stdout and stderr go during one run: the process's file
 * descriptors 1 and 2, since tspkt writes through stdio from its threads. */
struct redirect {
	FILE *out, *err;
	int saved[2];
};

static int redirect_start(struct redirect *rd)
{
	rd->out = tmpfile();
	rd->err = tmpfile();
	rd->saved[0] = -1;
	rd->saved[1] = -1;
	if (!rd->out || !rd->err)
		return -1;
	fflush(stdout);
	fflush(stderr);
	rd->saved[0] = dup(1);
	rd->saved[1] = dup(2);
	if (rd->saved[0] < 0 || rd->saved[1] < 0 ||
	    dup2(fileno(rd->out), 1) < 0 || dup2(fileno(rd->err), 2) < 0)
		return -1;
	return 0;
}

static void redirect_end(struct redirect *rd)
{
	fflush(stdout);
	fflush(stderr);
	clearerr(stdout);
	for (int fd = 0; fd < 2; fd++) {
		if (rd->saved[fd] >= 0) {
			dup2(rd->saved[fd], fd + 1);
			close(rd->saved[fd]);
		}
	}
	if (rd->out)
		fclose(rd->out);
	if (rd->err)
		fclose(rd->err);
}

/* A new empty file for tspkt's -w, in TMPDIR (or /tmp); -1 on an error. */
static int temp_pcap(char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, len, "%s/tspkt-mpi.XXXXXX", dir) >= len)
		return -1;
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* What tspkt wrote to @path, then @path removed; an empty file (tspkt
 * stopped before it opened it) is no pcap. */
static int take_pcap(const char *path, struct tspkt_mpi_result *r)
{
	FILE *f = fopen(path, "rb");
	int rc = -1;
	uint64_t len = 0;
	char *buf;

	if (f) {
		buf = slurp(f, &len);
		if (buf && len) {
			r->pcap = buf;
			r->pcaplen = len;
		} else {
			free(buf);
		}
		rc = buf ? 0 : -1;
		fclose(f);
	}
	unlink(path);
	return rc;
}

int tspkt_mpi_run(const struct tspkt_mpi_args *a, size_t idx,
		  struct tspkt_mpi_result *r)
{
	const char *env = getenv("TEXTSEARCH_PLUGIN_PATH");
	char *plugin_path = env ? strdup(env) : NULL;
	struct redirect rd = { NULL, NULL, { -1, -1 } };
	char **argv = NULL, wfile[4096];
	int argc, rc = -1;
	bool have_wfile = false;

	memset(r, 0, sizeof(*r));
	r->status = 2;
	if (a->write_file) {
		if (temp_pcap(wfile, sizeof(wfile)))
			goto out;
		have_wfile = true;
	}
	argv = argv_for(a, a->files[idx], have_wfile ? wfile : NULL, &argc);
	if (!argv || (env && !plugin_path) || redirect_start(&rd)) {
		redirect_end(&rd);
		goto out;
	}
	optind = 0;
	r->status = tspkt_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	r->out = slurp(rd.out, &r->outlen);
	r->err = slurp(rd.err, &r->errlen);
	redirect_end(&rd);
	if (r->out && r->err)
		rc = 0;
	/* tspkt adds its build's plugin folder each time: once is enough */
	if (plugin_path)
		setenv("TEXTSEARCH_PLUGIN_PATH", plugin_path, 1);
	else
		unsetenv("TEXTSEARCH_PLUGIN_PATH");
out:
	if (have_wfile && take_pcap(wfile, r))
		rc = -1;
	free(plugin_path);
	free(argv);
	return rc;
}
