/*
 * mpi_util.h - what the MPI programs (tools/<name>-mpi/) share: payloads of
 * any size, and waits that nap instead of spinning.
 */
#ifndef TS_MPI_UTIL_H
#define TS_MPI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* The hand-out of the MPI programs: rank 0 sends a job (TS_TAG_JOB), a
 * worker answers with a result's head (TS_TAG_RESULT) and its data
 * (TS_TAG_DATA); a worker holds up to TS_PREFETCH jobs, the second hiding
 * the hand-out's latency behind the work, and stops at TS_NO_JOB. */
#define TS_TAG_JOB 1
#define TS_TAG_RESULT 2
#define TS_TAG_DATA 3
#define TS_PREFETCH 2
#define TS_NO_JOB UINT64_MAX

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

/* Rank 0's side of the hand-out, what differs between programs. */
struct mpi_handout {
	void *ctx;
	void *head; /* a result's head lands here, @head_size bytes */
	size_t head_size;
	/* Send rank @dest its next job (@refill: in place of a result just
	 * collected, not one of the first TS_PREFETCH); false when there is
	 * none left. */
	bool (*give)(void *ctx, int dest, bool refill);
	/* Tell rank @dest there are no more jobs (TS_NO_JOB). */
	void (*stop)(void *ctx, int dest);
	/* The head from rank @src is in: receive the rest of the result;
	 * true if it was the last of its job (a job may be several). */
	bool (*collect)(void *ctx, int src);
};

/* Hand jobs out to ranks 1 to @nranks - 1, on demand, and collect their
 * results until every rank is stopped; -1 when out of memory. */
int mpi_hand_out(const struct mpi_handout *h, int nranks);

#endif
