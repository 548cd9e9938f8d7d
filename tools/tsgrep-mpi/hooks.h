/*
 * hooks.h - forced into tools/tsgrep/main.c when it is compiled for
 * tsgrep-mpi (-include, with -Dmain=tsgrep_main and
 * -Drun_jobs=tsg_mpi_run_jobs): tsgrep's own option parsing, pattern
 * compilation, walk and exit status, with the search handed to MPI ranks.
 * tsgrep's sources know of it only through tsg_share_stdin_patterns().
 */
#ifndef TSGREP_MPI_HOOKS_H
#define TSGREP_MPI_HOOKS_H

#include <stddef.h>

int tsgrep_main(int argc, char **argv);

/* -f -: patterns read from rank 0's standard input, sent to every rank
 * (each parses the same options, so each calls it at the same point). */
void tsg_mpi_share_stdin(char **buf, size_t *len);
#define tsg_share_stdin_patterns(buf, len) tsg_mpi_share_stdin(buf, len)

#endif
