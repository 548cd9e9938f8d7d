/*
 * mapped.c - a big regular file searched alone is mapped instead of read:
 * read() copies every byte out of the page cache.  With many files (-r)
 * files are read (cfg->map_files): mapping and unmapping each, and with -j
 * the TLB shootdowns between the workers, cost more than the copy.
 *
 * Memory stays bounded: the pages behind the engine are dropped from the
 * mapping as it moves on (they stay in the page cache).  The mapping is
 * read-only: a binary file's NULs end lines where they are (is_eol() in
 * engine.h), so no page is ever copied on write.
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

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
	uintptr_t page = (uintptr_t)info->si_addr & ~((uintptr_t)page_size - 1);
	void *zeros = MAP_FAILED;

	(void)ctx;
	if (info->si_code == BUS_ADRERR)
		zeros = mmap((void *)page, (size_t)page_size, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (zeros == MAP_FAILED) {
		/* not ours to repair: die of it as if unhandled */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	atomic_fetch_add(&bus_faults, 1);
}

static void install_handler(void)
{
	struct sigaction action;

	page_size = sysconf(_SC_PAGESIZE);
	if (page_size <= 0)
		return;
	memset(&action, 0, sizeof(action));
	action.sa_sigaction = on_sigbus;
	action.sa_flags = SA_SIGINFO;
	sigemptyset(&action.sa_mask);
	handler_ok = sigaction(SIGBUS, &action, NULL) == 0;
}

int tsg_map_open(struct tsg_map *map, int fd, const struct stat *st,
		 int at_start)
{
	void *base;

	memset(map, 0, sizeof(*map));
	/* only whole regular files read from their start: a descriptor at
	 * another offset (a shell's `<` after a previous reader) is read */
	if (fd == STDIN_FILENO || !st || !S_ISREG(st->st_mode) ||
	    (uint64_t)st->st_size < MAP_MIN_SIZE ||
	    (uint64_t)st->st_size > SIZE_MAX ||
	    (!at_start && lseek(fd, 0, SEEK_CUR) != 0))
		return 0;
	pthread_once(&handler_once, install_handler);
	if (!handler_ok)
		return 0;
	base = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		return 0;
	(void)madvise(base, (size_t)st->st_size, MADV_SEQUENTIAL);
	map->base = base;
	map->size = (size_t)st->st_size;
	map->fd = fd;
	map->faults_seen = atomic_load(&bus_faults);
	return 1;
}

void tsg_map_drop_before(struct tsg_map *map, const unsigned char *pos)
{
	size_t upto = (size_t)(pos - map->base) & ~((size_t)page_size - 1);

	if (upto - map->dropped < MAP_DROP_STEP)
		return;
	(void)madvise(map->base + map->dropped, upto - map->dropped,
		      MADV_DONTNEED);
	map->dropped = upto;
}

int tsg_map_shrunk(struct tsg_map *map)
{
	unsigned long now = atomic_load(&bus_faults);
	struct stat st;

	if (now == map->faults_seen)
		return 0;
	map->faults_seen = now;
	/* another thread's file may have been the one that shrank */
	return fstat(map->fd, &st) || (uint64_t)st.st_size < map->size;
}

void tsg_map_close(struct tsg_map *map)
{
	if (map->base)
		munmap(map->base, map->size);
	map->base = NULL;
}
