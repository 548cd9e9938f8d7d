/*
 * mpi_util.h - what the MPI programs (tools/<name>-mpi/) share: payloads of
 * any size, and waits that nap instead of spinning.
 */
#ifndef TS_MPI_UTIL_H
#define TS_MPI_UTIL_H

#include <stdint.h>

#include <mpi.h>

/* @len bytes to or from rank @peer, in pieces (MPI counts are ints). */
void mpi_send_bytes(const void *data, uint64_t len, int peer, int tag);
void mpi_recv_bytes(void *data, uint64_t len, int peer, int tag);

/*
 * Wait for a message from @src with @tag (its envelope in @status), or for
 * @req to complete, polling with naps: Open MPI's blocking calls spin, which
 * takes a core from the ranks that work when there are more ranks than
 * cores (mpirun --oversubscribe).
 */
void mpi_wait_probe(int src, int tag, MPI_Status *status);
void mpi_wait_request(MPI_Request *req, MPI_Status *status);

#endif
