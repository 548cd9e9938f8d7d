/*
 * test_tspkt_mpi.c - tspkt-mpi under `mpirun --oversubscribe -np 1, 2 and
 * 4`, and through Slurm's srun on a one-node cluster the test starts and
 * stops, against single-process tspkt on each capture, merged by time
 * (tests/mpi/tspkt_mpi.sh): stdout byte for byte, messages and exit status.
 *
 * The captures, written here: interleaved times across captures, equal
 * times across them (ties go in -r order), a capture whose last frame is
 * earlier than the ones before it (a merge keeps it in place), TCP
 * strings split across segments, a TCP flow continued from one capture in
 * the next (not followed: no match), IP fragments, an empty capture, a
 * truncated one (its frames, then tspkt's error), a file that is no
 * capture and one that does not exist.
 *
 * MPI and Slurm are required: without mpirun, srun or a built tspkt-mpi
 * the test fails.  Environment: BUILD (tests/run-tests.sh) locates the
 * programs; TSPKT_TEST_KEEP=1 keeps the captures' folder.
 */
#define _DEFAULT_SOURCE /* pcap.h (through pcapgen.h) uses u_char */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcapgen.h"
#include "testsupport.h"

#define TS0_US 1796306400000000LL /* 2026-12-03T14:00:00Z */
#define MS(n) (TS0_US + (int64_t)(n)*1000)
#define TH_FIN 0x01
#define TH_ACK 0x10

static char data[64];
static const char *build;
static struct pg_frame frames[4];

static struct pg_writer *cap_open(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", data, name);
	return pg_open(path, 0);
}

/* One datagram of @flow carrying @text at @ts_us. */
static void put(struct pg_writer *w, const struct pg_flow *flow,
		const char *text, int64_t ts_us)
{
	pg_build(&frames[0], flow, text, (unsigned int)strlen(text));
	pg_write(w, &frames[0], ts_us, 0);
}

/* @flow's next TCP segment, its sequence number moved past @text. */
static void segment(struct pg_writer *w, struct pg_flow *flow, const char *text,
		    int64_t ts_us)
{
	put(w, flow, text, ts_us);
	flow->tcp_seq += (uint32_t)strlen(text);
}

static void fin(struct pg_writer *w, struct pg_flow *flow, int64_t ts_us)
{
	flow->tcp_flags = TH_FIN | TH_ACK;
	put(w, flow, "", ts_us);
	flow->tcp_flags = 0;
}

static int write_captures(void)
{
	static const unsigned int cuts[] = { 24 }; /* "need" | "le" */
	struct pg_flow tcp_a = pg_flow_tcp4, tcp_b = pg_flow_tcp4,
		       tcp_c = pg_flow_tcp4, split = pg_flow_tcp6;
	struct pg_writer *w;
	unsigned int n, i;
	char path[128];
	struct stat st;
	FILE *f;

	tcp_b.sport = 43513;
	tcp_c.sport = 43514;
	/* a: odd milliseconds, a string across two segments, a flow that
	 * goes on in b, and a last frame earlier than the others */
	w = cap_open("a.pcap");
	if (!w)
		return -1;
	segment(w, &tcp_a, "GET /index.html HTTP/1.0 nee", MS(1));
	segment(w, &tcp_a, "dle here\r\n\r\n", MS(3));
	put(w, &pg_flow_udp4, "a needle in a datagram", MS(5));
	put(w, &pg_flow_udp6, "needle at 7 ms in a", MS(7));
	fin(w, &tcp_a, MS(9));
	segment(w, &split, "across captures: nee", MS(11));
	put(w, &pg_flow_udp4, "a late needle", MS(2));
	pg_close(w);
	/* b: even milliseconds, the same 7 ms as a and c, fragments */
	w = cap_open("b.pcap");
	if (!w)
		return -1;
	put(w, &pg_flow_udp4, "needle b at 2 ms", MS(2));
	segment(w, &tcp_b, "POST /form HTTP/1.0\r\n\r\nneedle=1", MS(4));
	fin(w, &tcp_b, MS(6));
	put(w, &pg_flow_udp6, "needle at 7 ms in b", MS(7));
	n = pg_build_fragments(frames, &pg_flow_udp4,
			       "fragmented: needle crosses", 26, cuts, 1, 77);
	for (i = 0; i < n; i++)
		pg_write(w, &frames[i], MS(8), 0);
	put(w, &pg_flow_udp4, "needle at 10 ms", MS(10));
	split.tcp_seq += (uint32_t)strlen("across captures: nee");
	segment(w, &split, "dle, not followed", MS(12));
	put(w, &pg_flow_udp4, "needle at 14 ms", MS(14));
	pg_close(w);
	/* c: the earliest frame, a third at 7 ms, a request */
	w = cap_open("c.pcap");
	if (!w)
		return -1;
	put(w, &pg_flow_udp4, "needle at 0 ms", MS(0));
	put(w, &pg_flow_udp6, "needle at 7 ms in c", MS(7));
	segment(w, &tcp_c, "GET /c HTTP/1.0\r\n", MS(13));
	segment(w, &tcp_c, "X-Needle: needle\r\n\r\n", MS(15));
	put(w, &pg_flow_udp4, "needle at 20 ms", MS(20));
	pg_close(w);
	/* empty: a header only */
	w = cap_open("empty.pcap");
	if (!w)
		return -1;
	pg_close(w);
	/* cut: c's frames, the last one cut short */
	w = cap_open("cut.pcap");
	if (!w)
		return -1;
	put(w, &pg_flow_udp4, "needle in cut at 1 ms", MS(1));
	put(w, &pg_flow_udp4, "needle in cut at 16 ms", MS(16));
	put(w, &pg_flow_udp4, "needle in cut at 17 ms", MS(17));
	pg_close(w);
	snprintf(path, sizeof(path), "%s/cut.pcap", data);
	if (stat(path, &st) || truncate(path, st.st_size - 10))
		return -1;
	/* bad: no capture at all */
	snprintf(path, sizeof(path), "%s/bad.pcap", data);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("this is not a capture file\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/rules.txt", data);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("# requests, in the stream\n"
	      "class web string \"GET /\" layer stream\n"
	      "class needle string needle\n",
	      f);
	return fclose(f) ? -1 : 0;
}

static int setup(void **state)
{
	(void)state;
	build = getenv("BUILD");
	if (!build)
		build = "build/default";
	strcpy(data, "/tmp/tspkt-mpi-data.XXXXXX");
	if (!mkdtemp(data))
		return -1;
	return write_captures();
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	if (getenv("TSPKT_TEST_KEEP")) {
		fprintf(stderr, "test_tspkt_mpi: kept %s\n", data);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", data);
	return test_system("test_tspkt_mpi", cmd) ? -1 : 0;
}

/* The state: the number of ranks for mpirun, or "srun". */
static void test_compare(void **state)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "sh tests/mpi/tspkt_mpi.sh %s %s %s", build,
		 (const char *)*state, data);
	assert_int_equal(test_system("test_tspkt_mpi", cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_compare, "1"),
		cmocka_unit_test_prestate(test_compare, "2"),
		cmocka_unit_test_prestate(test_compare, "4"),
		cmocka_unit_test_prestate(test_compare, "srun"),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
