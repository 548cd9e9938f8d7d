/*
 * mapped.c - regular files are mapped instead of read: read() copies every
 * byte out of the page cache, and that copy cost tsgrep more than the
 * search itself.
 *
 * Memory stays bounded: the pages behind the engine are dropped from the
 * mapping as it moves on (they stay in the page cache).  The mapping is
 * private and writable because binary files get their NULs rewritten to
 * newlines in place; those pages are copied on write.
 *
 * A file that shrinks while mapped would raise SIGBUS on the pages past its
 * new end.  The handler maps a page of zeros over the faulting page, so the
 * read completes, and counts the event; the engine then asks
 * tsg_map_shrunk(), which compares the file's size, and reports the file as
 * changed instead of searching zeros.
 *
 * The mapping is the file at the size it had when opened: its last slice
 * and whatever was appended since are read (search.c), as grep would.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsgrep.h"

/* Smaller files are read: mapping costs page-table work of its own. */
#define MAP_MIN_SIZE (4u << 20)
/* Pages behind the engine are dropped once this many have accumulated. */
#define MAP_DROP_STEP ((size_t)8 << 20)

static atomic_ulong bus_faults;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static int handler_ok;
static long page_size;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	uintptr_t page = (uintptr_t)si->si_addr & ~((uintptr_t)page_size - 1);
	if (si->si_code != BUS_ADRERR ||
	    mmap((void *)page, (size_t)page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		/* not ours to repair: die of it as if unhandled */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	atomic_fetch_add(&bus_faults, 1);
}

static void install_handler(void)
{
	struct sigaction sa;
	page_size = sysconf(_SC_PAGESIZE);
	if (page_size <= 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	handler_ok = sigaction(SIGBUS, &sa, NULL) == 0;
}

int tsg_map_open(struct tsg_map *m, int fd)
{
	struct stat st;
	memset(m, 0, sizeof(*m));
	/* only whole regular files read from their start: a descriptor at
	 * another offset (a shell's `<` after a previous reader) is read */
	if (fd == STDIN_FILENO || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < MAP_MIN_SIZE ||
	    (uint64_t)st.st_size > SIZE_MAX || lseek(fd, 0, SEEK_CUR) != 0)
		return 0;
	pthread_once(&handler_once, install_handler);
	if (!handler_ok)
		return 0;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 0;
	(void)madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	m->base = p;
	m->size = (size_t)st.st_size;
	m->fd = fd;
	m->faults_seen = atomic_load(&bus_faults);
	return 1;
}

void tsg_map_drop_before(struct tsg_map *m, const unsigned char *p)
{
	size_t upto = (size_t)(p - m->base) & ~((size_t)page_size - 1);
	if (upto - m->dropped < MAP_DROP_STEP)
		return;
	(void)madvise(m->base + m->dropped, upto - m->dropped, MADV_DONTNEED);
	m->dropped = upto;
}

int tsg_map_shrunk(struct tsg_map *m)
{
	unsigned long now = atomic_load(&bus_faults);
	struct stat st;
	if (now == m->faults_seen)
		return 0;
	m->faults_seen = now;
	/* another thread's file may have been the one that shrank */
	return fstat(m->fd, &st) || (uint64_t)st.st_size < m->size;
}

void tsg_map_close(struct tsg_map *m)
{
	if (m->base)
		munmap(m->base, m->size);
	m->base = NULL;
}
