/*
 * child.h - what the command-line tests share: running a program as a user
 * runs it (stdin from a feed or /dev/null, stdout and stderr captured
 * whole, status and peak memory) or talking to it while it runs (its
 * stdin written and its stdout read as they go), locating the program
 * under test in the build folder, and a temporary folder to run it in.
 *
 * Nothing here asserts: each call says whether it worked, and the test
 * that calls it asserts what it checks.
 */
#ifndef TS_TEST_CHILD_H
#define TS_TEST_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Feeds a child's stdin: the next bytes in *p and their count, 0 at the
 * end. */
typedef size_t (*child_feed_fn)(void *ctx, const char **p);

struct child_spec {
	char *const *argv;  /* argv[0] is looked up in PATH if it has no / */
	const char *cwd;    /* where the child runs; NULL: here */
	const char *capdir; /* where its stdout and stderr are captured */
	child_feed_fn feed; /* stdin through a pipe; NULL: /dev/null */
	void *feed_ctx;
};

struct child_result {
	char *out, *err; /* NUL-terminated */
	size_t outlen, errlen;
	int status;	/* as waitpid() gives it */
	long maxrss_kb; /* the child's peak resident memory */
};

/* Run the child to its end.  0, or -1 with errno set when it could not be
 * started or its output not read back (the result is then empty). */
int child_run(const struct child_spec *spec, struct child_result *res);
void child_result_free(struct child_result *res);

/* A feed of one buffer. */
struct child_mem_feed {
	const char *data;
	size_t len;
	bool done;
};
size_t child_feed_mem(void *ctx, const char **p);

/* "exit 2" or "signal 11"; true when the child exited normally. */
bool child_status_text(int status, char *out, size_t cap);
/* Whether @err holds a sanitizer report (none is ever expected). */
bool child_sanitizer_report(const char *err);

/* A growing byte buffer, always NUL-terminated, for the input files and
 * expected outputs a test builds; start from { 0 } and free(p).  Running
 * out of memory aborts: that is no verdict on the program under test. */
struct test_buf {
	char *p;
	size_t len, cap;
};
void test_buf_add(struct test_buf *b, const void *p, size_t n);
void test_buf_adds(struct test_buf *b, const char *s);

/*
 * A child the test talks to while it runs: the test writes its stdin
 * (a pipe, or the descriptor it is given) and reads its stdout (a pipe) as
 * it comes; stderr is captured in capdir as with child_run().  Waits take
 * a timeout that only guards against a hang: no verdict rests on time.
 */
struct child_live {
	pid_t pid;
	int in;		     /* the test's end of the child's stdin, or -1 */
	int out;	     /* the test's end of the child's stdout, or -1 */
	bool eof;	     /* the child's stdout was closed */
	struct test_buf got; /* what it wrote to stdout so far */
	const char *capdir;
};

/* Start @spec's program (spec->feed is not used).  Its stdin is @in_fd if
 * >= 0 (the caller keeps and closes its own copy), else a pipe whose write
 * end is live->in.  0, or -1 with errno set. */
int child_live_start(const struct child_spec *spec, int in_fd,
		     struct child_live *live);
/* Write all of @p to live->in; false on an error (EPIPE once it is gone). */
bool child_live_write(struct child_live *live, const void *p, size_t n);
/* Read its stdout until live->got holds @len bytes or more, or it is
 * closed, or @timeout_ms pass: whether it holds @len bytes. */
bool child_live_wait_len(struct child_live *live, size_t len, int timeout_ms);
/* Read its stdout until it is closed (the child ended, or closed it). */
bool child_live_wait_eof(struct child_live *live, int timeout_ms);
/* Wait until the pipe or FIFO @fd (either end) holds no unread byte: the
 * reader has taken everything written so far. */
bool child_live_wait_drained(int fd, int timeout_ms);
/* Close its stdin (if ours), read its stdout to the end and wait for it;
 * killed if it has not ended after @timeout_ms.  res->out is what it
 * wrote.  0, or -1 (errno ETIMEDOUT when it had to be killed). */
int child_live_finish(struct child_live *live, struct child_result *res,
		      int timeout_ms);

/* $BUILD/bin/@name (BUILD defaults to build/default) as an absolute path
 * in @path; false with errno set when it is not there. */
bool test_program_path(const char *name, char *path, size_t cap);
/* A new folder $TMPDIR/@prefix-XXXXXX (TMPDIR defaults to /tmp) in @dir;
 * false with errno set. */
bool test_make_tmpdir(const char *prefix, char *dir, size_t cap);
/* For the tests that run tsgrep beside GNU grep: a temporary folder @top
 * (test_make_tmpdir(@prefix)) holding @work, where the children run, and
 * @capdir, where their output is captured (outside what they search); the
 * C locale, no GREP_* variables, and SIGPIPE ignored.  false with errno
 * set when a folder could not be made. */
bool test_grep_setup(const char *prefix, char *top, size_t topcap, char *work,
		     char *capdir, size_t dircap);
/* Whether `grep` on the PATH is GNU grep, which tsgrep is compared with. */
bool test_have_gnu_grep(void);
/* Remove a folder made by test_make_tmpdir() and all below it. */
int test_remove_tree(const char *dir);

#endif
