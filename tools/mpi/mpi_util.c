/*
 * mpi_util.c - payloads in pieces and napping waits, for the MPI programs.
 */
#include <stdlib.h>
#include <time.h>

#include "mpi_util.h"

/* MPI counts are ints: payloads go in pieces */
#define PIECE (1 << 30)
/* polls before the first nap: a reply that is on its way costs no nap */
#define SPINS 64

void mpi_send_bytes(const void *data, uint64_t len, int peer, int tag)
{
	const char *p = data;
	uint64_t done = 0, piece;

	do {
		piece = len - done > PIECE ? PIECE : len - done;
		MPI_Send(p + done, (int)piece, MPI_BYTE, peer, tag,
			 MPI_COMM_WORLD);
		done += piece;
	} while (done < len);
}

void mpi_recv_bytes(void *data, uint64_t len, int peer, int tag)
{
	char *p = data;
	uint64_t done = 0, piece;

	do {
		piece = len - done > PIECE ? PIECE : len - done;
		MPI_Recv(p + done, (int)piece, MPI_BYTE, peer, tag,
			 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		done += piece;
	} while (done < len);
}

static void nap(int *idle)
{
	struct timespec ts = { 0, 100000 };

	if (++*idle > SPINS)
		nanosleep(&ts, NULL);
}

void mpi_wait_probe(int src, int tag, MPI_Status *status)
{
	int flag = 0, idle = 0;

	for (;;) {
		MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, status);
		if (flag)
			return;
		nap(&idle);
	}
}

void mpi_wait_request(MPI_Request *req, MPI_Status *status)
{
	int done = 0, idle = 0;

	for (;;) {
		MPI_Test(req, &done, status);
		if (done)
			return;
		nap(&idle);
	}
}

int mpi_hand_out(const struct mpi_handout *h, int nranks)
{
	int *inflight = calloc((size_t)nranks, sizeof(int));
	bool *stopped = calloc((size_t)nranks, sizeof(bool));
	int live = nranks - 1, r, k;
	MPI_Request req;
	MPI_Status status;

	if (!inflight || !stopped) {
		free(inflight);
		free(stopped);
		return -1;
	}
	for (r = 1; r < nranks; r++) {
		for (k = 0; k < TS_PREFETCH && h->give(h->ctx, r, false); k++)
			inflight[r]++;
		if (!inflight[r]) {
			h->stop(h->ctx, r);
			stopped[r] = true;
			live--;
		}
	}
	while (live > 0) {
		MPI_Irecv(h->head, (int)h->head_size, MPI_BYTE, MPI_ANY_SOURCE,
			  TS_TAG_RESULT, MPI_COMM_WORLD, &req);
		mpi_wait_request(&req, &status);
		r = status.MPI_SOURCE;
		if (!h->collect(h->ctx, r))
			continue;
		inflight[r]--;
		if (!stopped[r] && h->give(h->ctx, r, true)) {
			inflight[r]++;
		} else if (!stopped[r]) {
			h->stop(h->ctx, r);
			stopped[r] = true;
		}
		if (stopped[r] && !inflight[r])
			live--;
	}
	free(inflight);
	free(stopped);
	return 0;
}
