/*
 * tspkt_mpi.h - tspkt-mpi: tspkt over many captures, one MPI shard per
 * capture, the outputs merged in capture-time order (tspkt-mpi(1)).
 */
#ifndef TSPKT_MPI_H
#define TSPKT_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TSPKT_MPI_PROG "tspkt-mpi"

/* The command line, split: the captures (-r/-I, in order) and what every
 * capture's tspkt run gets. */
struct tspkt_mpi_args {
	int argc;
	char **argv;
	int split;    /* argv[split] is the first operand (or "--") */
	char **files; /* the -r/-I arguments, in order */
	size_t nfiles;
	bool live;		/* -i/-d */
	const char *write_file; /* -w, written by rank 0 */
	bool help, version;
	bool json, quiet;
	uint64_t max_matches; /* -n, 0 without */
};

/* One capture's tspkt run: its exit status, stdout, stderr and with -w
 * the pcap file it wrote (none when it wrote none). */
struct tspkt_mpi_result {
	int status;
	char *out, *err, *pcap;
	uint64_t outlen, errlen, pcaplen;
};

/* run.c: tspkt's own code */

/* Collect the captures and the options tspkt-mpi looks at; 0, or -1 when
 * out of memory. */
int tspkt_mpi_scan(int argc, char **argv, struct tspkt_mpi_args *a);
void tspkt_mpi_args_free(struct tspkt_mpi_args *a);

/* -V's line. */
void tspkt_mpi_version(void);

/* tspkt's checks of the command line, as if @file were the only capture:
 * on an error tspkt's message and exit(2) through tspkt_mpi_exit(). */
void tspkt_mpi_check(const struct tspkt_mpi_args *a, const char *file);

/* tspkt on capture @idx, its output and messages captured in @r (the
 * process's stdout and stderr are restored after), -w going to a
 * temporary file read back into @r; -1 when they could not be captured. */
int tspkt_mpi_run(const struct tspkt_mpi_args *a, size_t idx,
		  struct tspkt_mpi_result *r);

/* exit() as tspkt's main.c calls it in tspkt-mpi: every rank leaves MPI
 * first, and only rank 0's status counts. */
_Noreturn void tspkt_mpi_exit(int status);

/* merge.c */

/* Rank 0: every capture's results, merged, to stdout and stderr; the exit
 * status of the whole. */
int tspkt_mpi_merge(const struct tspkt_mpi_args *a,
		    const struct tspkt_mpi_result *res);

#endif
