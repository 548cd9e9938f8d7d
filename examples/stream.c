/*
 * stream.c - a push-mode stream: print where PATTERN occurs in standard
 * input as the data arrives, with 64-bit offsets, e.g.
 *
 *   tail -f /var/log/syslog | ./stream error
 *
 * Build against an installed library:
 *   cc stream.c $(pkg-config --cflags --libs textsearch) -o stream
 */
#include <textsearch_stream.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void report(struct ts_stream *s)
{
	struct ts_match m;

	while (textsearch_stream_next(s, &m) > 0)
		printf("%llu-%llu\n", (unsigned long long)m.start,
		       (unsigned long long)m.end);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct ts_config *conf;
	struct ts_stream *s;
	char buf[65536];
	ssize_t n;

	if (argc != 2 || !argv[1][0]) {
		fprintf(stderr, "usage: stream PATTERN < data\n");
		return 2;
	}
	conf = textsearch_prepare("auto", argv[1],
				  (unsigned int)strlen(argv[1]), GFP_KERNEL, 0);
	if (IS_ERR(conf)) {
		fprintf(stderr, "stream: %s\n", textsearch_last_error());
		return 2;
	}
	s = textsearch_stream_open(conf, GFP_KERNEL);
	if (IS_ERR(s)) {
		fprintf(stderr, "stream: %s\n", textsearch_last_error());
		textsearch_destroy(conf);
		return 2;
	}
	/* buf is reused for the next read only once next() has said 0 */
	while ((n = read(0, buf, sizeof(buf))) > 0) {
		textsearch_stream_write(s, buf, (size_t)n);
		report(s);
	}
	textsearch_stream_end(s);
	report(s);
	textsearch_stream_free(s);
	textsearch_destroy(conf);
	return n < 0 ? 2 : 0;
}
