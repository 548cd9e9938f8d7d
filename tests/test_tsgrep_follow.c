/*
 * test_tsgrep_follow.c - tsgrep following input that arrives over time (a
 * pipe whose writer stays, a FIFO, `tail -f` on a growing file): with
 * --line-buffered, each line's output comes as soon as the line is
 * complete, never before, and is byte for byte GNU grep's.
 *
 * No verdict rests on time.  The test writes a line, then waits until
 * tsgrep's stdout holds what grep prints for the input so far, keeping its
 * end of the pipe open: neither the end of the input nor a full buffer can
 * be what made tsgrep write.  Each line is written in two pieces, and the
 * second only once tsgrep has read the first (the pipe is empty): the
 * first piece was read alone, so a line printed before it was complete
 * would stay in the output, which must then equal grep's.  Where tsgrep
 * must stop at a line (-l, -L, -q, -m), it must read every piece before that
 * line (an early stop would leave one unread) and end without the input
 * ending.  The timeouts only keep a hang from hanging the run.
 *
 * Both programs run with LC_ALL=C; GNU grep and `tail` are required.
 * Environment: BUILD (set by tests/run-tests.sh) locates $BUILD/bin/tsgrep;
 * TS_TEST_SEED repeats a run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "testsupport.h"

#define MAX_ARGS 32
/* Only against a hang: a correct tsgrep answers in milliseconds. */
#define GUARD_MS 60000
#define LINES 24

static char tsgrep_path[4096];
static char top[4096];
static char work[4200];
static char capdir[4200];
static struct rng rng;
static unsigned long n_lines, n_pieces;

/* ---- input ------------------------------------------------------------ */

/* A line for pattern ERR (and WARN with -e WARN): matching or not, as a
 * word or inside one, in other case, or the whole line (for -x); '#' is
 * a number. */
static void rand_line(struct test_buf *b)
{
	static const char *const forms[] = {
		"ok #",	    "ERR #",	 "an ERR in #", "ERRATA #",
		"x#ERR",    "err lc #",	 "ERR",		"",
		"WARN #",   "ERR ERR #", "# ERR_",	"plain # text",
		"no # here"
	};
	const char *form =
		forms[rng_below(&rng, sizeof(forms) / sizeof(forms[0]))];
	const char *hash = strchr(form, '#');
	char num[16];

	if (hash) {
		test_buf_add(b, form, (size_t)(hash - form));
		snprintf(num, sizeof(num), "%u", rng_below(&rng, 1000));
		test_buf_adds(b, num);
		test_buf_adds(b, hash + 1);
	} else {
		test_buf_adds(b, form);
	}
	test_buf_adds(b, "\n");
}

/* ---- running ---------------------------------------------------------- */

/* Split @opts (space-separated) into @argv after @first, then @operand if
 * not NULL. */
static void make_argv(char **argv, char *copy, size_t cap, const char *first,
		      const char *opts, const char *operand)
{
	char *save = NULL, *tok;
	int n = 0;

	argv[n++] = (char *)first;
	snprintf(copy, cap, "%s", opts);
	for (tok = strtok_r(copy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		assert_true(n < MAX_ARGS - 2);
		argv[n++] = tok;
	}
	if (operand)
		argv[n++] = (char *)operand;
	argv[n] = NULL;
}

/* grep -F @opts on @input (from stdin): its result. */
static void grep_on(const char *opts, const char *input, size_t len,
		    struct child_result *r)
{
	char *argv[MAX_ARGS], copy[256];
	struct child_mem_feed feed = { input, len, false };
	struct child_spec spec = { .argv = argv,
				   .cwd = work,
				   .capdir = capdir,
				   .feed = child_feed_mem,
				   .feed_ctx = &feed };
	char gopts[300];

	snprintf(gopts, sizeof(gopts), "-F %s", opts);
	make_argv(argv, copy, sizeof(copy), "grep", gopts, NULL);
	if (child_run(&spec, r))
		fail_msg("run grep: %s", strerror(errno));
}

static void show(const char *what, const char *s, size_t len)
{
	printf("#   %s (%zu bytes): \"", what, len);
	for (size_t i = 0; i < len && i < 300; i++)
		printf(s[i] >= 32 && s[i] < 127 ? "%c" : "\\x%02x",
		       (unsigned char)s[i]);
	printf("%s\"\n", len > 300 ? "..." : "");
}

/* Fail unless tsgrep's output so far is @want. */
static void expect_output(const struct child_live *live, const char *want,
			  size_t len, const char *opts, const char *when)
{
	if (live->got.len == len && (!len || !memcmp(live->got.p, want, len)))
		return;
	printf("# tsgrep %s: output %s differs from grep's\n", opts, when);
	show("grep  ", want, len);
	show("tsgrep", live->got.p ? live->got.p : "", live->got.len);
	fail();
}

/* Take what tsgrep has written so far, without waiting. */
static void poll_output(struct child_live *live)
{
	child_live_wait_len(live, SIZE_MAX, 0);
}

/* Wait until the reader has taken everything written to @fd, or tsgrep's
 * stdout closed (it ended): true if taken. */
static bool wait_consumed(struct child_live *live, int fd)
{
	int unread = 1, rounds;

	for (rounds = 0; rounds < GUARD_MS; rounds++) {
		if (ioctl(fd, FIONREAD, &unread))
			fail_msg("FIONREAD: %s", strerror(errno));
		if (!unread)
			return true;
		/* a millisecond's wait for output doubles as the pause */
		child_live_wait_len(live, live->got.len + 1, 1);
		if (live->eof)
			return false;
	}
	fail_msg("tsgrep did not read its input in %d s", GUARD_MS / 1000);
	return false;
}

static void write_fd(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			fail_msg("write to tsgrep: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
}

static void finish(struct child_live *live, const char *opts, const char *input,
		   size_t len)
{
	struct child_result t, g;
	char ts[64], gs[64];

	if (child_live_finish(live, &t, GUARD_MS))
		fail_msg("tsgrep %s did not end: %s", opts, strerror(errno));
	grep_on(opts, input, len, &g);
	child_status_text(g.status, gs, sizeof(gs));
	child_status_text(t.status, ts, sizeof(ts));
	if (strcmp(gs, ts) || g.outlen != t.outlen ||
	    memcmp(g.out, t.out, g.outlen)) {
		printf("# tsgrep %s at the end: grep %s, tsgrep %s\n", opts, gs,
		       ts);
		show("grep  ", g.out, g.outlen);
		show("tsgrep", t.out, t.outlen);
		show("tsgrep stderr", t.err, t.errlen);
		fail();
	}
	child_result_free(&t);
	child_result_free(&g);
}

/* How tsgrep gets its input. */
enum source {
	SRC_PIPE,	  /* stdin is a pipe */
	SRC_FIFO_STDIN,	  /* tsgrep ... < fifo */
	SRC_FIFO_OPERAND, /* tsgrep ... fifo */
};

/*
 * Feed tsgrep @opts (with -e ERR or its own patterns in @opts) LINES
 * random lines, each in two pieces, and check its output after each line
 * against grep's on the input so far.  @at_end: options whose output
 * comes only at the end (-c, -L): then nothing may come before.
 */
static void follow(const char *opts, enum source src, bool at_end)
{
	char *argv[MAX_ARGS], copy[256], fifo[4300], topts[300];
	struct child_spec spec = { .argv = argv,
				   .cwd = work,
				   .capdir = capdir };
	struct test_buf input = { 0 };
	struct child_live live;
	struct child_result g;
	int wfd = -1, rfd = -1, i;
	size_t start, cut;

	snprintf(topts, sizeof(topts), "--line-buffered %s", opts);
	snprintf(fifo, sizeof(fifo), "%s/fifo", top);
	if (src != SRC_PIPE) {
		unlink(fifo);
		if (mkfifo(fifo, 0600))
			fail_msg("mkfifo: %s", strerror(errno));
		/* a writer that never blocks, and never ends the input
		 * before it is closed */
		wfd = open(fifo, O_RDWR | O_CLOEXEC);
		assert_true(wfd >= 0);
		if (src == SRC_FIFO_STDIN) {
			rfd = open(fifo, O_RDONLY | O_CLOEXEC);
			assert_true(rfd >= 0);
		}
	}
	make_argv(argv, copy, sizeof(copy), tsgrep_path, topts,
		  src == SRC_FIFO_OPERAND ? fifo : NULL);
	if (child_live_start(&spec, rfd, &live))
		fail_msg("start tsgrep: %s", strerror(errno));
	if (rfd >= 0)
		close(rfd);
	if (wfd >= 0) {
		if (live.in >= 0)
			close(live.in);
		live.in = wfd; /* closed by child_live_finish() */
	}
	for (i = 0; i < LINES; i++) {
		start = input.len;
		rand_line(&input);
		/* the first piece ends before the newline */
		cut = input.len - start > 1 ?
			      1 + rng_below(&rng,
					    (uint32_t)(input.len - start - 1)) :
			      0;
		if (cut) {
			write_fd(live.in, input.p + start, cut);
			n_pieces++;
			if (!wait_consumed(&live, live.in))
				fail_msg("tsgrep %s ended at a partial line",
					 topts);
			poll_output(&live);
		}
		write_fd(live.in, input.p + start + cut,
			 input.len - start - cut);
		n_pieces++;
		n_lines++;
		if (at_end) {
			/* nothing before the end; what came is checked */
			if (!wait_consumed(&live, live.in))
				fail_msg("tsgrep %s ended early", topts);
			poll_output(&live);
			expect_output(&live, "", 0, topts, "before the end");
			continue;
		}
		grep_on(opts, input.p, input.len, &g);
		if (!child_live_wait_len(&live, g.outlen, GUARD_MS))
			printf("# tsgrep %s: line %d's output did not come\n",
			       topts, i + 1);
		expect_output(&live, g.out, g.outlen, topts,
			      "once the line was complete");
		child_result_free(&g);
	}
	finish(&live, opts, input.p, input.len);
	free(input.p);
	if (src != SRC_PIPE)
		unlink(fifo);
}

/* ---- tests ------------------------------------------------------------ */

static void test_pipe_line_by_line(void **st)
{
	static const char *const opts[] = {
		"-e ERR",
		"-n -e ERR",
		"-b -e ERR",
		"-o -b -e ERR",
		"-v -e ERR",
		"-i -e ERR",
		"-w -e ERR",
		"-x -e ERR",
		"-A 1 -e ERR",
		"-n -B 1 -e ERR",
		"-C 1 -e ERR",
		"--color=always -e ERR",
		"-e ERR -e WARN",
		"-n -w -e ERR -e WARN -e ERRATA",
		"-m 1000 -A 1 -e ERR",
	};
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		follow(opts[i], SRC_PIPE, false);
}

/* -c, and -L of an input without a match, speak at the end of the input
 * only: nothing before. */
static void test_pipe_counts_at_end(void **st)
{
	(void)st;
	follow("-c -e ERR", SRC_PIPE, true);
	follow("-c -v -e ERR", SRC_PIPE, true);
	follow("-L -e NOWHERE", SRC_PIPE, true);
}

static void test_fifo(void **st)
{
	(void)st;
	follow("-n -e ERR", SRC_FIFO_STDIN, false);
	follow("-e ERR -e WARN", SRC_FIFO_OPERAND, false);
}

/*
 * Options that end the search at a line (-l, -L, -q, -m): tsgrep must read
 * everything before that line, the partial line "ERR" completed to a line
 * that does not match (-x) included, and end once that line is complete,
 * while the input stays open.  @stop: the piece after which it ends.
 */
static void stop_at(const char *opts, int stop)
{
	static const char *const pieces[] = {
		"ok 1\n",    "ERR",    "X\n", "ok 2\n", "ERR\n", /* 4 */
		"after\n",					 /* 5 */
		"ERR\n",					 /* 6 */
		"after 2\n", "more\n",
	};
	char *argv[MAX_ARGS], copy[256], topts[300];
	struct child_spec spec = { .argv = argv,
				   .cwd = work,
				   .capdir = capdir };
	struct test_buf input = { 0 };
	struct child_live live;
	int i;

	snprintf(topts, sizeof(topts), "--line-buffered -x %s -e ERR", opts);
	make_argv(argv, copy, sizeof(copy), tsgrep_path, topts, NULL);
	if (child_live_start(&spec, -1, &live))
		fail_msg("start tsgrep: %s", strerror(errno));
	for (i = 0; i <= stop; i++) {
		write_fd(live.in, pieces[i], strlen(pieces[i]));
		test_buf_adds(&input, pieces[i]);
		n_pieces++;
		if (i < stop && !wait_consumed(&live, live.in))
			fail_msg("tsgrep %s ended after piece %d of %d", topts,
				 i, stop);
	}
	/* the input is still open: the line itself ends the search */
	if (!child_live_wait_eof(&live, GUARD_MS))
		fail_msg("tsgrep %s did not end at its line", topts);
	snprintf(topts, sizeof(topts), "-x %s -e ERR", opts);
	finish(&live, topts, input.p, input.len);
	free(input.p);
}

static void test_stops_at_its_line(void **st)
{
	(void)st;
	stop_at("-l", 4);
	stop_at("-L", 4);
	stop_at("-q", 4);
	stop_at("-m 1", 4);
	stop_at("-m 1 -A 1", 5);
	stop_at("-m 2", 6);
	stop_at("-c -m 2", 6);
}

/* Without --line-buffered, tsgrep writes what it holds before it waits
 * for more input: a reader of a pipe sees the lines found so far. */
static void test_flush_before_waiting(void **st)
{
	char *argv[] = { tsgrep_path, "-n", "ERR", NULL };
	struct child_spec spec = { .argv = argv,
				   .cwd = work,
				   .capdir = capdir };
	struct test_buf input = { 0 }, want = { 0 };
	struct child_live live;
	char line[64];
	int i;

	(void)st;
	if (child_live_start(&spec, -1, &live))
		fail_msg("start tsgrep: %s", strerror(errno));
	for (i = 1; i <= 8; i++) {
		snprintf(line, sizeof(line), "%s %d\n", i % 2 ? "ERR" : "ok",
			 i);
		test_buf_adds(&input, line);
		write_fd(live.in, line, strlen(line));
		if (i % 2) {
			snprintf(line, sizeof(line), "%d:ERR %d\n", i, i);
			test_buf_adds(&want, line);
		}
		if (!child_live_wait_len(&live, want.len, GUARD_MS))
			printf("# line %d's output did not come\n", i);
		expect_output(&live, want.p, want.len, "-n ERR",
			      "while waiting for input");
	}
	finish(&live, "-n -e ERR", input.p, input.len);
	free(input.p);
	free(want.p);
}

/* The real thing: `tail -f` on a file that grows, piped into tsgrep. */
static void test_tail_follow(void **st)
{
	char path[4300],
		*targv[] = { tsgrep_path, "--line-buffered", "-n", "-e", "ERR",
			     NULL };
	char *tail_argv[] = { "tail", "-n", "+1", "-f", path, NULL };
	struct child_spec tspec = { .argv = targv,
				    .cwd = work,
				    .capdir = capdir };
	struct child_spec lspec = { .argv = tail_argv,
				    .cwd = work,
				    .capdir = top };
	struct test_buf input = { 0 };
	struct child_live tail, live;
	struct child_result g;
	size_t start;
	int fd, i, status;

	(void)st;
	snprintf(path, sizeof(path), "%s/growing.log", work);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		  0644);
	assert_true(fd >= 0);
	if (child_live_start(&lspec, -1, &tail))
		fail_msg("start tail: %s", strerror(errno));
	close(tail.in);
	tail.in = -1;
	if (child_live_start(&tspec, tail.out, &live))
		fail_msg("start tsgrep: %s", strerror(errno));
	close(tail.out);
	tail.out = -1;
	close(live.in); /* its stdin is tail's stdout */
	live.in = -1;
	for (i = 0; i < LINES; i++) {
		start = input.len;
		rand_line(&input);
		write_fd(fd, input.p + start, input.len - start);
		n_lines++;
		grep_on("-n -e ERR", input.p, input.len, &g);
		if (!child_live_wait_len(&live, g.outlen, GUARD_MS))
			printf("# line %d's output did not come\n", i + 1);
		expect_output(&live, g.out, g.outlen, "-n ERR after tail -f",
			      "once the line was complete");
		child_result_free(&g);
	}
	close(fd);
	/* tail -f never ends by itself: its end is the input's */
	kill(tail.pid, SIGTERM);
	while (waitpid(tail.pid, &status, 0) < 0)
		if (errno != EINTR)
			break;
	finish(&live, "-n -e ERR", input.p, input.len);
	free(input.p);
}

static void test_summary(void **st)
{
	(void)st;
	printf("# tsgrep following input: %lu lines in %lu pieces, each "
	       "line's output checked against grep as it came\n",
	       n_lines, n_pieces);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_line_by_line),
		cmocka_unit_test(test_pipe_counts_at_end),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_stops_at_its_line),
		cmocka_unit_test(test_flush_before_waiting),
		cmocka_unit_test(test_tail_follow),
		cmocka_unit_test(test_summary),
	};
	int ret;

	if (!test_have_gnu_grep()) {
		printf("not ok: GNU grep not found; tsgrep is compared "
		       "against it\n");
		return 1;
	}
	if (!test_program_path("tsgrep", tsgrep_path, sizeof(tsgrep_path))) {
		printf("not ok: tsgrep not found: %s\n", strerror(errno));
		return 1;
	}
	if (!test_grep_setup("tsgrep-follow", top, sizeof(top), work, capdir,
			     sizeof(work))) {
		printf("not ok: test folders: %s\n", strerror(errno));
		return 1;
	}
	rng.s = test_seed("tsgrep follow", 0x666f6c6c6f77ULL);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	test_remove_tree(top);
	return ret;
}
