/*
 * tree_gen.c - the tree that bench/tree_bench.sh searches with tsgrep -r,
 * grep -r and rg: generated, the same bytes on every machine (splitmix64).
 *
 * Usage: tree_gen DIR [--quick]
 *
 * Full size: 12,000 small files (headers and Python-like sources, 1 to 40
 * KiB), 16 large text files (4 to 8 MiB, searched through tsgrep's mapped
 * path), 300 object-like binary files (NULs among text, 16 to 256 KiB),
 * three chains of 24 nested directories, and one pack file of 320 MiB:
 * random bytes (compressed data looks random, NULs included) after git's
 * pack header.  --quick: 400 small files, 2 large, 20 binary, chains of 6
 * and a pack of 8 MiB (mapped too), for a run of a few seconds.
 *
 * The pattern the bench looks for, "pthread_mutex_lock", is in about one
 * line in 300 of the text and a few times in the binaries and the pack.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../bench_util.h"

static uint64_t rng_state = 0x7e57ee7e;

static uint64_t next_u64(void)
{
	return bench_splitmix64(&rng_state);
}

static unsigned int below(unsigned int n)
{
	return (unsigned int)(next_u64() % n);
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "tree_gen: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir", path);
}

static const char *const words[] = {
	"static", "int",    "const",   "struct", "return", "unsigned", "size_t",
	"void",	  "char",   "buffer",  "length", "offset", "count",    "node",
	"next",	  "prev",   "data",    "value",	 "flags",  "lock",     "unlock",
	"mutex",  "thread", "self",    "def",	 "import", "class",    "None",
	"True",	  "False",  "list",    "dict",	 "append", "errno",    "init",
	"state",  "config", "handler", "event",	 "queue",  "read",     "write",
};
#define NWORDS (sizeof(words) / sizeof(*words))

/* One line of C-ish or Python-ish text. */
static size_t gen_line(char *out, int python)
{
	size_t len = 0, nwords = 2 + below(9), i, wlen;
	const char *word;

	if (!below(300)) {
		memcpy(out, "\tpthread_mutex_lock(&", 21);
		len = 21;
	} else if (python) {
		len = 4 * below(3);
		memset(out, ' ', len);
	} else if (below(2)) {
		out[len++] = '\t';
	}
	for (i = 0; i < nwords; i++) {
		word = words[below(NWORDS)];
		wlen = strlen(word);
		memcpy(out + len, word, wlen);
		len += wlen;
		out[len++] = i + 1 < nwords ? (below(4) ? ' ' : '_') : ';';
	}
	out[len++] = '\n';
	return len;
}

static void write_text(const char *path, size_t size, int python)
{
	char line[256];
	size_t done = 0, len;
	FILE *file = fopen(path, "wb");

	if (!file)
		die("create", path);
	while (done < size) {
		len = gen_line(line, python);
		if (fwrite(line, 1, len, file) != len)
			die("write", path);
		done += len;
	}
	if (fclose(file))
		die("close", path);
}

/* Random bytes (NULs among them) with a few lines of text between. */
static void write_binary(const char *path, size_t size, int pack)
{
	static uint64_t block[8192];
	char line[256];
	size_t done = 0, len, i;
	FILE *file = fopen(path, "wb");

	if (!file)
		die("create", path);
	if (pack && fwrite("PACK\0\0\0\2\0\1\0\0", 1, 12, file) != 12)
		die("write", path);
	while (done < size) {
		for (i = 0; i < sizeof(block) / sizeof(*block); i++)
			block[i] = next_u64();
		len = sizeof(block) < size - done ? sizeof(block) : size - done;
		if (fwrite(block, 1, len, file) != len)
			die("write", path);
		done += len;
		if (!below(pack ? 64 : 4)) {
			len = gen_line(line, 0);
			if (fwrite(line, 1, len, file) != len)
				die("write", path);
			done += len;
		}
	}
	if (fclose(file))
		die("close", path);
}

/* Small files: mostly 1-8 KiB, some up to 40 KiB. */
static size_t small_size(void)
{
	return below(5) ? 1024 + below(7 * 1024) : 8192 + below(32 * 1024);
}

int main(int argc, char **argv)
{
	int quick = argc > 2 && !strcmp(argv[2], "--quick");
	unsigned int nsmall = quick ? 400 : 12000, nlarge = quick ? 2 : 16;
	unsigned int nbin = quick ? 20 : 300, chain = quick ? 6 : 24;
	size_t pack = quick ? (size_t)8 << 20 : (size_t)320 << 20;
	char path[4200], dir[4096];
	unsigned int i, c, depth;
	size_t len;

	if (argc < 2) {
		fprintf(stderr, "usage: tree_gen DIR [--quick]\n");
		return 2;
	}
	make_dir(argv[1]);
	/* 60 packages of 4 subdirectories each */
	for (i = 0; i < 60; i++) {
		snprintf(dir, sizeof(dir), "%s/pkg%02u", argv[1], i);
		make_dir(dir);
		for (c = 0; c < 4; c++) {
			snprintf(path, sizeof(path), "%s/sub%u", dir, c);
			make_dir(path);
		}
	}
	for (i = 0; i < nsmall; i++) {
		snprintf(path, sizeof(path), "%s/pkg%02u/sub%u/file%05u.%s",
			 argv[1], i % 60, (i / 60) % 4, i, i % 3 ? "h" : "py");
		write_text(path, small_size(), i % 3 == 0);
	}
	for (i = 0; i < nlarge; i++) {
		snprintf(path, sizeof(path), "%s/pkg%02u/large%02u.h", argv[1],
			 i * 7 % 60, i);
		write_text(path, ((size_t)4 << 20) + below(4u << 20), 0);
	}
	for (i = 0; i < nbin; i++) {
		snprintf(path, sizeof(path), "%s/pkg%02u/sub%u/obj%03u.o",
			 argv[1], i % 60, i % 4, i);
		write_binary(path, 16384 + below(240 * 1024), 0);
	}
	/* three deep chains, a file at every level */
	for (c = 0; c < 3; c++) {
		len = (size_t)snprintf(dir, sizeof(dir), "%s/deep%u", argv[1],
				       c);
		for (depth = 0; depth < chain; depth++) {
			make_dir(dir);
			snprintf(path, sizeof(path), "%s/level%02u.h", dir,
				 depth);
			write_text(path, small_size(), 0);
			len += (size_t)snprintf(dir + len, sizeof(dir) - len,
						"/d%02u", depth);
		}
	}
	snprintf(dir, sizeof(dir), "%s/objects", argv[1]);
	make_dir(dir);
	snprintf(path, sizeof(path), "%s/objects/pack-0001.pack", argv[1]);
	write_binary(path, pack, 1);
	return 0;
}
