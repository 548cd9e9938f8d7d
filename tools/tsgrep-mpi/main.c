/*
 * main.c - tsgrep-mpi: tsgrep run by every rank of an MPI job.
 *
 * Every rank parses the same command line with tsgrep's own code
 * (hooks.h); rank 0 walks the operands, hands the files out and writes the
 * output in tsgrep's order (shard.c); the other ranks search what they are
 * given.  Only rank 0 talks to the user: the others' stderr goes to
 * /dev/null, so an option error is printed once, and their messages about
 * files travel to rank 0 with their output.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

#include "hooks.h"

void tsg_mpi_share_stdin(char **buf, size_t *len)
{
	/* MPI counts are ints: big pattern files go in parts */
	const uint64_t part = 1 << 30;
	uint64_t size = *len, done;
	int rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (rank) {
		free(*buf);
		*buf = malloc(size ? size : 1);
		if (!*buf) {
			fputs("tsgrep: out of memory\n", stderr);
			exit(2);
		}
	}
	for (done = 0; done < size; done += part)
		MPI_Bcast(*buf + done,
			  (int)(size - done < part ? size - done : part),
			  MPI_BYTE, 0, MPI_COMM_WORLD);
	*len = size;
}

int main(int argc, char **argv)
{
	int provided, rank = 0, rc, fd;

	/* only the main thread calls MPI; rank 0 searches on a second one */
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) !=
	    MPI_SUCCESS)
		return 2;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	}
	rc = tsgrep_main(argc, argv);
	MPI_Finalize();
	return rank ? 0 : rc;
}
