/*
 * child.c - see child.h.
 */
#define _DEFAULT_SOURCE /* wait4(), mkdtemp(), realpath() */
#include "child.h"

#include "testsupport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: stdin, stdout and stderr in place, then the program.
 * 126 when the set-up failed, 127 when the program could not be run. */
static void child_exec(const struct child_spec *spec, int in_fd,
		       const char *outp, const char *errp)
{
	int in = in_fd >= 0 ? in_fd : open("/dev/null", O_RDONLY);
	int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 ||
	    dup2(e, 2) < 0 || (spec->cwd && chdir(spec->cwd)))
		_exit(126);
	signal(SIGPIPE, SIG_DFL);
	execvp(spec->argv[0], spec->argv);
	_exit(127);
}

/* Write the whole feed to @fd.  The child may stop reading early (grep -q,
 * -l, -m): EPIPE just ends the feeding. */
static void feed_child(const struct child_spec *spec, int fd)
{
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	const char *p;
	size_t n;

	while ((n = spec->feed(spec->feed_ctx, &p)) > 0) {
		while (n > 0) {
			ssize_t w = write(fd, p, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				goto done;
			p += w;
			n -= (size_t)w;
		}
	}
done:
	signal(SIGPIPE, old);
}

int child_run(const struct child_spec *spec, struct child_result *res)
{
	char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	int pfd[2] = { -1, -1 };
	struct rusage ru;
	pid_t pid;
	int saved;

	memset(res, 0, sizeof(*res));
	snprintf(outp, sizeof(outp), "%s/stdout", spec->capdir);
	snprintf(errp, sizeof(errp), "%s/stderr", spec->capdir);
	if (spec->feed && pipe(pfd))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		saved = errno;
		if (spec->feed) {
			close(pfd[0]);
			close(pfd[1]);
		}
		errno = saved;
		return -1;
	}
	if (pid == 0) {
		if (spec->feed)
			close(pfd[1]);
		child_exec(spec, pfd[0], outp, errp);
	}
	if (spec->feed) {
		close(pfd[0]);
		feed_child(spec, pfd[1]);
		close(pfd[1]);
	}
	while (wait4(pid, &res->status, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	res->maxrss_kb = ru.ru_maxrss;
	res->out = test_read_file(outp, &res->outlen);
	res->err = test_read_file(errp, &res->errlen);
	if (!res->out || !res->err) {
		saved = errno;
		child_result_free(res);
		errno = saved;
		return -1;
	}
	return 0;
}

void child_result_free(struct child_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->outlen = res->errlen = 0;
}

/* ---- a child the test talks to ---- */

static int cloexec_pipe(int fds[2])
{
	if (pipe(fds))
		return -1;
	(void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	return 0;
}

int child_live_start(const struct child_spec *spec, int in_fd,
		     struct child_live *live)
{
	char errp[PATH_MAX + 16];
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int saved;
	pid_t pid;

	memset(live, 0, sizeof(*live));
	live->in = live->out = -1;
	live->capdir = spec->capdir;
	snprintf(errp, sizeof(errp), "%s/stderr", spec->capdir);
	if ((in_fd < 0 && cloexec_pipe(in)) || cloexec_pipe(out))
		goto fail;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		/* dup2() leaves the copies without FD_CLOEXEC */
		if (e < 0 || dup2(in_fd >= 0 ? in_fd : in[0], 0) < 0 ||
		    dup2(out[1], 1) < 0 || dup2(e, 2) < 0 ||
		    (spec->cwd && chdir(spec->cwd)))
			_exit(126);
		signal(SIGPIPE, SIG_DFL);
		execvp(spec->argv[0], spec->argv);
		_exit(127);
	}
	if (in[0] >= 0)
		close(in[0]);
	close(out[1]);
	live->pid = pid;
	live->in = in[1];
	live->out = out[0];
	return 0;
fail:
	saved = errno;
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	errno = saved;
	return -1;
}

bool child_live_write(struct child_live *live, const void *p, size_t n)
{
	const char *pos = p;
	ssize_t w;

	while (n) {
		w = write(live->in, pos, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return false;
		pos += w;
		n -= (size_t)w;
	}
	return true;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what the child's stdout holds, waiting up to @wait_ms for it;
 * false once @wait_ms passed with nothing to read. */
static bool live_read(struct child_live *live, int wait_ms)
{
	struct pollfd pfd = { .fd = live->out, .events = POLLIN };
	char buf[4096];
	ssize_t got;
	int ready;

	ready = poll(&pfd, 1, wait_ms < 0 ? 0 : wait_ms);
	if (ready < 0 && errno == EINTR)
		return true;
	if (ready <= 0)
		return false;
	got = read(live->out, buf, sizeof(buf));
	if (got < 0)
		return errno == EINTR;
	if (got == 0)
		live->eof = true;
	else
		test_buf_add(&live->got, buf, (size_t)got);
	return true;
}

bool child_live_wait_len(struct child_live *live, size_t len, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;

	while (live->got.len < len && !live->eof)
		if (!live_read(live, (int)(deadline - now_ms())))
			break;
	return live->got.len >= len;
}

bool child_live_wait_eof(struct child_live *live, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;

	while (!live->eof)
		if (!live_read(live, (int)(deadline - now_ms())))
			break;
	return live->eof;
}

bool child_live_wait_drained(int fd, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct timespec pause = { 0, 1000 * 1000 };
	int unread;

	for (;;) {
		if (ioctl(fd, FIONREAD, &unread))
			return false;
		if (!unread)
			return true;
		if (now_ms() >= deadline)
			return false;
		nanosleep(&pause, NULL);
	}
}

int child_live_finish(struct child_live *live, struct child_result *res,
		      int timeout_ms)
{
	char errp[PATH_MAX + 16];
	bool ended;
	int saved;

	memset(res, 0, sizeof(*res));
	if (live->in >= 0)
		close(live->in);
	live->in = -1;
	ended = child_live_wait_eof(live, timeout_ms);
	if (!ended)
		kill(live->pid, SIGKILL);
	close(live->out);
	live->out = -1;
	while (waitpid(live->pid, &res->status, 0) < 0)
		if (errno != EINTR)
			return -1;
	snprintf(errp, sizeof(errp), "%s/stderr", live->capdir);
	res->err = test_read_file(errp, &res->errlen);
	/* the result owns what was read */
	res->out = live->got.p ? live->got.p : strdup("");
	res->outlen = live->got.len;
	live->got.p = NULL;
	live->got.len = live->got.cap = 0;
	if (!res->out || !res->err) {
		saved = errno;
		child_result_free(res);
		errno = saved;
		return -1;
	}
	if (!ended) {
		errno = ETIMEDOUT;
		return -1;
	}
	return 0;
}

size_t child_feed_mem(void *ctx, const char **p)
{
	struct child_mem_feed *m = ctx;

	if (m->done)
		return 0;
	m->done = true;
	*p = m->data;
	return m->len;
}

bool child_status_text(int status, char *out, size_t cap)
{
	if (WIFEXITED(status)) {
		snprintf(out, cap, "exit %d", WEXITSTATUS(status));
		return true;
	}
	if (WIFSIGNALED(status))
		snprintf(out, cap, "signal %d", WTERMSIG(status));
	else
		snprintf(out, cap, "status 0x%x", (unsigned int)status);
	return false;
}

bool child_sanitizer_report(const char *err)
{
	return strstr(err, "Sanitizer") || strstr(err, "runtime error");
}

bool test_program_path(const char *name, char *path, size_t cap)
{
	const char *build = getenv("BUILD");
	char rel[PATH_MAX], abs[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/bin/%s", build ? build : "build/default",
		 name);
	if (!realpath(rel, abs))
		return false;
	if (strlen(abs) >= cap) {
		errno = ENAMETOOLONG;
		return false;
	}
	memcpy(path, abs, strlen(abs) + 1);
	return true;
}

bool test_make_tmpdir(const char *prefix, char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");

	if ((size_t)snprintf(dir, cap, "%s/%s-XXXXXX",
			     tmp && *tmp ? tmp : "/tmp", prefix) >= cap) {
		errno = ENAMETOOLONG;
		return false;
	}
	return mkdtemp(dir) != NULL;
}

int test_remove_tree(const char *dir)
{
	char *argv[] = { "rm", "-rf", "--", (char *)dir, NULL };
	int st;
	pid_t pid = fork();

	/* rm itself, not a shell: the name is never parsed */
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

void test_buf_add(struct test_buf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n + 1) {
		while (b->cap - b->len < n + 1)
			b->cap = b->cap ? b->cap * 2 : 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void test_buf_adds(struct test_buf *b, const char *s)
{
	test_buf_add(b, s, strlen(s));
}

bool test_have_gnu_grep(void)
{
	FILE *p = popen("grep --version 2>/dev/null", "r");
	char line[256] = "";
	bool gnu;

	if (!p)
		return false;
	gnu = fgets(line, sizeof(line), p) && strstr(line, "GNU grep");
	pclose(p);
	return gnu;
}

bool test_grep_setup(const char *prefix, char *top, size_t topcap, char *work,
		     char *capdir, size_t dircap)
{
	if (!test_make_tmpdir(prefix, top, topcap))
		return false;
	snprintf(work, dircap, "%s/w", top);
	snprintf(capdir, dircap, "%s/cap", top);
	if (mkdir(work, 0755) || mkdir(capdir, 0755))
		return false;
	setenv("LC_ALL", "C", 1);
	unsetenv("GREP_COLORS");
	unsetenv("GREP_COLOR");
	unsetenv("GREP_OPTIONS");
	signal(SIGPIPE, SIG_IGN);
	return true;
}
