/*
 * hooks.h - forced into tools/tsgrep/main.c when it is compiled for
 * tsgrep-mpi (-include, with -Dmain=tsgrep_main and
 * -Drun_jobs=tsg_mpi_run_jobs): tsgrep's own option parsing, pattern
 * compilation, walk and exit status, with the search handed to MPI ranks.
 * tsgrep's sources stay untouched.
 */
#ifndef TSGREP_MPI_HOOKS_H
#define TSGREP_MPI_HOOKS_H

int tsgrep_main(int argc, char **argv);

#endif
