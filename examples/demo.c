/*
 * demo.c - search a file with every literal algorithm, once contiguous and
 * once read in small chunks through a ts_reader (the non-contiguous path),
 * and print each match with its line; then find HTTP request lines with an
 * fsm token pattern.  `make demo` runs it on samples/.
 *
 *   demo [-i] [-c CHUNK] PATTERN FILE
 */
#include <textsearch.h>
#include <textsearch_fsm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

static char *read_all(const char *path, unsigned int *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 ||
	    fseek(fp, 0, SEEK_SET)) {
		perror(path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		perror(path);
		exit(2);
	}
	fclose(fp);
	*len = (unsigned int)n;
	return buf;
}

/* Print the line around [pos, pos+len) with the match in brackets. */
static void show(const char *text, unsigned int tlen, unsigned int pos,
		 unsigned int len)
{
	unsigned int a = pos, b = pos + len;

	while (a > 0 && text[a - 1] != '\n')
		a--;
	while (b < tlen && text[b] != '\n')
		b++;
	printf("    %6u: %.*s[%.*s]%.*s\n", pos, (int)(pos - a), text + a,
	       (int)len, text + pos, (int)(b - pos - len), text + pos + len);
}

static int literal(const char *algo, const char *pattern, int flags,
		   const char *text, unsigned int tlen, const char *path,
		   size_t chunk)
{
	unsigned int plen = (unsigned int)strlen(pattern), pos, n = 0, m = 0;
	struct ts_config *conf;
	struct ts_reader *reader;
	struct ts_state state;
	int fd;

	conf = textsearch_prepare(algo, pattern, plen, GFP_KERNEL,
				  flags | TS_AUTOLOAD);
	if (IS_ERR(conf)) {
		fprintf(stderr, "demo: %s: %s\n", algo,
			textsearch_last_error());
		return 1;
	}
	printf("  %s:\n", algo);
	for (pos = textsearch_find_continuous(conf, &state, text, tlen);
	     pos != UINT_MAX; pos = textsearch_next(conf, &state), n++)
		show(text, tlen, pos, plen);

	/* the same search again, the file read in chunks of @chunk bytes */
	fd = open(path, O_RDONLY);
	reader = fd >= 0 ? ts_reader_from_fd(fd, chunk) : NULL;
	if (!reader) {
		perror(path);
		return 1;
	}
	for (pos = textsearch_find_reader(conf, &state, reader);
	     pos != UINT_MAX; pos = textsearch_next(conf, &state))
		m++;
	printf("    %u match(es) contiguous, %u read in %zu-byte chunks%s\n", n,
	       m, chunk, n == m ? "" : "  <-- MISMATCH");
	ts_reader_free(reader);
	close(fd);
	textsearch_destroy(conf);
	return n != m;
}

/* Request lines: an upper-case method, a space, then a path. */
static int request_lines(const char *text, unsigned int tlen)
{
	const struct ts_fsm_token tokens[] = {
		{ TS_FSM_WILDCARD, TS_FSM_HEAD_IGNORE, 0 },
		{ TS_FSM_UPPER, TS_FSM_MULTI, 0 },
		{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, ' ' },
		{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, '/' },
		{ TS_FSM_GRAPH, TS_FSM_ANY, 0 },
		{ TS_FSM_SPECIFIC, TS_FSM_SINGLE, ' ' },
	};
	struct ts_config *conf;
	struct ts_state state;
	unsigned int pos;

	conf = textsearch_prepare("fsm", tokens, sizeof(tokens), GFP_KERNEL, 0);
	if (IS_ERR(conf)) {
		fprintf(stderr, "demo: fsm: %s\n", textsearch_last_error());
		return 1;
	}
	printf("  fsm [HEAD_IGNORE any][MULTI upper][' '][/][ANY graph][' ']:\n");
	for (pos = textsearch_find_continuous(conf, &state, text, tlen);
	     pos != UINT_MAX; pos = textsearch_next(conf, &state))
		show(text, tlen, pos, state.offset - pos);
	textsearch_destroy(conf);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const algos[] = { "kmp", "bm", "shiftor" };
	size_t chunk = 16, i;
	int flags = 0, opt, bad = 0;
	unsigned int tlen;
	char *text;

	while ((opt = getopt(argc, argv, "ic:")) != -1) {
		if (opt == 'i')
			flags |= TS_IGNORECASE;
		else if (opt == 'c')
			chunk = strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: demo [-i] [-c CHUNK] PATTERN FILE\n");
		return 2;
	}
	text = read_all(argv[optind + 1], &tlen);
	printf("%s: \"%s\"%s\n", argv[optind + 1], argv[optind],
	       flags ? " (ignoring case)" : "");
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		bad |= literal(algos[i], argv[optind], flags, text, tlen,
			       argv[optind + 1], chunk);
	if (strstr(argv[optind + 1], ".log"))
		bad |= request_lines(text, tlen);
	free(text);
	return bad;
}
