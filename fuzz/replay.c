/*
 * replay.c - run the fuzz target over files and directories of inputs
 * without libFuzzer (after zstd's regression driver), so the seed corpus is
 * checked by every `make check`, with every compiler and sanitizer.
 *
 *   replay [file-or-directory...]     (default: fuzz/corpus)
 *
 * Build it with fuzz_algorithms.c, tests/support and the library; define
 * FUZZ_REPLAY_NO_MAIN to use fuzz_replay_path() from another program.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size);
int fuzz_replay_path(const char *path, unsigned int *count);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long size;
	int err = -1;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		/* exactly the file's size, so over-reads are caught */
		buf = malloc(size ? (size_t)size : 1);
		if (buf && fread(buf, 1, (size_t)size, f) == (size_t)size) {
			LLVMFuzzerTestOneInput(buf, (size_t)size);
			err = 0;
		}
	}
	if (err)
		fprintf(stderr, "%s: cannot read\n", path);
	free(buf);
	fclose(f);
	return err;
}

/* Replay @path, a file or every file in a directory (not recursively);
 * adds the number of inputs run to *@count.  0, or -1 on a read error. */
int fuzz_replay_path(const char *path, unsigned int *count)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int err = 0;

	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (replay_file(path))
			return -1;
		++*count;
		return 0;
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	while ((e = readdir(d))) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (stat(sub, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(sub))
			err = -1;
		else
			++*count;
	}
	closedir(d);
	return err;
}

#ifndef FUZZ_REPLAY_NO_MAIN
int main(int argc, char **argv)
{
	unsigned int count = 0;
	int i, err = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2)
		err = fuzz_replay_path("fuzz/corpus", &count);
	for (i = 1; i < argc; i++)
		if (fuzz_replay_path(argv[i], &count))
			err = 1;
	printf("replay: %u inputs, %s\n", count, err ? "read errors" : "ok");
	return err ? 1 : 0;
}
#endif
