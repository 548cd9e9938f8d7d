/*
 * merge.c - rank 0 puts the captures' tspkt runs together (tspkt-mpi(1)).
 *
 * Standard output: the captures' records merged by the time each carries
 * (a text line's printed time, a --json record's ts_ns), ties in -r order;
 * each capture's records keep their order (a merge, not a sort), so a
 * record that is earlier than one before it in its capture stays after
 * it.  With -n NUM, the merge stops after the NUMth match record: every
 * capture stopped after its own NUM, so that is the first NUM in the
 * merged order.
 * Standard error: each capture's messages, in -r order, a line printed
 * once however many captures printed it (an error of the rules, a
 * warning about the filter), then tspkt's counter lines added up.
 * -w FILE: the pcap files the captures' runs wrote, merged the same way
 * by their records' times.
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <ctype.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tspkt_mpi.h"

/* ---- standard output ---- */

struct cursor {
	const char *p, *end;
	const char *line; /* the current record */
	size_t len;
	int64_t key;
};

static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* A text line's time, as format.c prints it: "2026-12-03T14:00:00.000001Z"
 * or, out of gmtime's range, "SECONDS.USEC". */
static bool text_key(const char *s, int64_t *key)
{
	int y, mo, d, h, mi, sec, n = 0;
	long long whole;
	long usec;

	if (sscanf(s, "%d-%d-%dT%d:%d:%d.%ldZ%n", &y, &mo, &d, &h, &mi, &sec,
		   &usec, &n) == 7 &&
	    n > 0 && s[n] == ' ') {
		*key = ((days_from_civil(y, mo, d) * 86400 + h * 3600 +
			 mi * 60 + sec) *
				1000000 +
			usec) *
		       1000;
		return true;
	}
	n = 0;
	if (sscanf(s, "%lld.%ld%n", &whole, &usec, &n) == 2 && n > 0 &&
	    s[n] == ' ') {
		*key = ((int64_t)whole * 1000000 + usec) * 1000;
		return true;
	}
	return false;
}

/* A --json record's "ts_ns". */
static bool json_key(const char *s, size_t len, int64_t *key)
{
	static const char name[] = "\"ts_ns\":";
	const size_t nlen = sizeof(name) - 1;
	char *end;

	for (size_t i = 0; i + nlen < len; i++) {
		if (memcmp(s + i, name, nlen))
			continue;
		*key = strtoll(s + i + nlen, &end, 10);
		return end != s + i + nlen;
	}
	return false;
}

/* The next record; one without a time keeps the one before it (so it
 * stays where its capture put it). */
static bool cursor_next(struct cursor *c, bool json)
{
	const char *nl;

	if (c->p >= c->end)
		return false;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	c->line = c->p;
	c->len = nl ? (size_t)(nl - c->p) + 1 : (size_t)(c->end - c->p);
	c->p += c->len;
	if (json)
		json_key(c->line, c->len, &c->key);
	else
		text_key(c->line, &c->key);
	return true;
}

/* A min-heap of the inputs that have a record left, by @before; an input
 * is an index into @ctx. */
struct heap {
	size_t *v, n;
	bool (*before)(const void *ctx, size_t a, size_t b);
	const void *ctx;
};

static void heap_down(struct heap *h, size_t i)
{
	size_t m, t;

	for (;;) {
		m = i;
		if (2 * i + 1 < h->n &&
		    h->before(h->ctx, h->v[2 * i + 1], h->v[m]))
			m = 2 * i + 1;
		if (2 * i + 2 < h->n &&
		    h->before(h->ctx, h->v[2 * i + 2], h->v[m]))
			m = 2 * i + 2;
		if (m == i)
			return;
		t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
}

static void heap_build(struct heap *h)
{
	for (size_t i = h->n; i-- > 0;)
		heap_down(h, i);
}

/* The top input moved on to its next record, or has none (@more). */
static void heap_next(struct heap *h, bool more)
{
	if (!more)
		h->v[0] = h->v[--h->n];
	heap_down(h, 0);
}

/* Earlier time first, then -r order. */
static bool cursor_before(const void *ctx, size_t a, size_t b)
{
	const struct cursor *c = ctx;

	return c[a].key != c[b].key ? c[a].key < c[b].key : a < b;
}

static bool is_match(const struct tspkt_mpi_args *a, const struct cursor *c)
{
	static const char match[] = "{\"type\":\"match\"";

	return !a->json || (c->len >= sizeof(match) - 1 &&
			    !memcmp(c->line, match, sizeof(match) - 1));
}

/* -1 when out of memory. */
static int merge_out(const struct tspkt_mpi_args *a,
		     const struct tspkt_mpi_result *res)
{
	struct cursor *cur = calloc(a->nfiles, sizeof(*cur));
	struct heap h = { calloc(a->nfiles, sizeof(size_t)), 0, cursor_before,
			  cur };
	uint64_t matches = 0;
	size_t i;

	if (!cur || !h.v) {
		free(cur);
		free(h.v);
		return -1;
	}
	for (i = 0; i < a->nfiles; i++) {
		cur[i].p = res[i].out;
		cur[i].end = res[i].out ? res[i].out + res[i].outlen : NULL;
		cur[i].key = INT64_MIN;
		if (cursor_next(&cur[i], a->json))
			h.v[h.n++] = i;
	}
	heap_build(&h);
	while (h.n) {
		struct cursor *c = &cur[h.v[0]];

		fwrite(c->line, 1, c->len, stdout);
		if (a->max_matches && is_match(a, c) &&
		    ++matches >= a->max_matches)
			break;
		heap_next(&h, cursor_next(c, a->json));
	}
	free(cur);
	free(h.v);
	return 0;
}

/* ---- -w ---- */

struct pcap_in {
	pcap_t *p;
	struct pcap_pkthdr *h;
	const u_char *data;
};

static bool pcap_before(const void *ctx, size_t a, size_t b)
{
	const struct pcap_in *in = ctx;
	const struct timeval *x = &in[a].h->ts, *y = &in[b].h->ts;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec;
	return x->tv_usec != y->tv_usec ? x->tv_usec < y->tv_usec : a < b;
}

/* The next record of @in; false at its end or on an error (@err). */
static bool pcap_more(struct pcap_in *in, const char *file, bool *err)
{
	int rc = pcap_next_ex(in->p, &in->h, &in->data);

	if (rc == 1)
		return true;
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, TSPKT_MPI_PROG ": -w: the packets of %s: %s\n",
			file, pcap_geterr(in->p));
		*err = true;
	}
	return false;
}

/* The captures' -w files into @a->write_file, written when at least one
 * capture was read; -1 on an error (its message printed). */
static int merge_pcap(const struct tspkt_mpi_args *a,
		      const struct tspkt_mpi_result *res)
{
	struct pcap_in *in = calloc(a->nfiles, sizeof(*in));
	struct heap h = { calloc(a->nfiles, sizeof(size_t)), 0, pcap_before,
			  in };
	char ebuf[PCAP_ERRBUF_SIZE] = "out of memory";
	pcap_t *dead = NULL;
	pcap_dumper_t *dumper = NULL;
	int linktype = -1, snaplen = 0;
	size_t i, first = 0;
	bool err = false;
	FILE *f;

	if (!in || !h.v) {
		fprintf(stderr, TSPKT_MPI_PROG ": out of memory\n");
		err = true;
		goto out;
	}
	for (i = 0; i < a->nfiles && !err; i++) {
		if (!res[i].pcap)
			continue;
		f = fmemopen(res[i].pcap, res[i].pcaplen, "rb");
		in[i].p = f ? pcap_fopen_offline(f, ebuf) : NULL;
		if (!in[i].p) {
			if (f)
				fclose(f);
			fprintf(stderr,
				TSPKT_MPI_PROG ": -w: the packets of %s: %s\n",
				a->files[i], ebuf);
			err = true;
			break;
		}
		if (linktype >= 0 && pcap_datalink(in[i].p) != linktype) {
			fprintf(stderr,
				TSPKT_MPI_PROG ": -w %s: %s is %s and %s is "
					       "%s: a pcap file holds one link "
					       "type\n",
				a->write_file, a->files[first],
				pcap_datalink_val_to_name(linktype),
				a->files[i],
				pcap_datalink_val_to_name(
					pcap_datalink(in[i].p)));
			err = true;
			break;
		}
		if (linktype < 0) {
			linktype = pcap_datalink(in[i].p);
			first = i;
		}
		if (pcap_snapshot(in[i].p) > snaplen)
			snaplen = pcap_snapshot(in[i].p);
		if (pcap_more(&in[i], a->files[i], &err))
			h.v[h.n++] = i;
	}
	if (err || linktype < 0)
		goto out;
	dead = pcap_open_dead(linktype, snaplen);
	dumper = dead ? pcap_dump_open(dead, a->write_file) : NULL;
	if (!dumper) {
		fprintf(stderr, TSPKT_MPI_PROG ": -w %s: %s\n", a->write_file,
			dead ? pcap_geterr(dead) : "out of memory");
		err = true;
		goto out;
	}
	heap_build(&h);
	while (h.n && !err) {
		struct pcap_in *top = &in[h.v[0]];

		pcap_dump((u_char *)dumper, top->h, top->data);
		heap_next(&h, pcap_more(top, a->files[h.v[0]], &err));
	}
	if (pcap_dump_flush(dumper)) {
		fprintf(stderr, TSPKT_MPI_PROG ": -w %s: write error\n",
			a->write_file);
		err = true;
	}
out:
	if (dumper)
		pcap_dump_close(dumper);
	if (dead)
		pcap_close(dead);
	for (i = 0; in && i < a->nfiles; i++)
		if (in[i].p)
			pcap_close(in[i].p);
	free(in);
	free(h.v);
	return err ? -1 : 0;
}

/* ---- standard error ---- */

enum { SUM, MAX, FIRST };

/* A counter line: its text with each value replaced by '\1', the values
 * added up over the captures. */
struct counter {
	char *tmpl;
	size_t nvals;
	unsigned long long *vals;
	unsigned char *how;
};

struct counters {
	struct counter *v;
	size_t n;
};

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * tspkt's counter lines are "tspkt: [LABEL... LABEL:] key=N key=N..." or
 * "tspkt: class NAME: N": labels, the last ending in ':', then values only.
 * A message has words after a number or no number at all.  @line has no
 * newline.  Fills @tmpl (as long as @line) and @vals/@how (@max of them).
 */
static bool parse_counter(const char *line, char *tmpl,
			  unsigned long long *vals, unsigned char *how,
			  size_t max, size_t *nvals)
{
	static const char prefix[] = "tspkt: ";
	const char *t = line + sizeof(prefix) - 1, *sp, *eq, *num;
	bool seen_value = false, colon = true;
	char *o = tmpl;
	size_t len, k = 0;

	if (strncmp(line, prefix, sizeof(prefix) - 1))
		return false;
	memcpy(o, line, sizeof(prefix) - 1);
	o += sizeof(prefix) - 1;
	while (*t) {
		sp = strchr(t, ' ');
		len = sp ? (size_t)(sp - t) : strlen(t);
		eq = memchr(t, '=', len);
		num = eq ? eq + 1 : t;
		if (!all_digits(num, len - (size_t)(num - t)) ||
		    (eq && eq == t)) {
			if (seen_value)
				return false;
			colon = len && t[len - 1] == ':';
		} else {
			if (!colon || k == max)
				return false;
			seen_value = true;
			vals[k] = strtoull(num, NULL, 10);
			how[k] = eq && !strncmp(t, "max-", 4) ? MAX :
				 eq && ((eq - t == 4 &&
					 !strncmp(t, "size", 4)) ||
					(eq - t == 2 && !strncmp(t, "hz", 2))) ?
								FIRST :
								SUM;
			k++;
			len = (size_t)(num - t);
		}
		memcpy(o, t, len);
		o += len;
		if (len < (sp ? (size_t)(sp - t) : strlen(t)))
			*o++ = '\1';
		t += sp ? (size_t)(sp - t) : strlen(t);
		if (*t)
			*o++ = *t++;
	}
	*o = '\0';
	*nvals = k;
	return seen_value;
}

/* @line (no newline) into the counters if it is one; -1 when out of
 * memory, 1 when it is not a counter line. */
static int add_counter(struct counters *cs, const char *line)
{
	size_t len = strlen(line), max = len / 2 + 1, n, i;
	char *tmpl = malloc(len + 1);
	unsigned long long *vals = malloc(max * sizeof(*vals));
	unsigned char *how = malloc(max);
	struct counter *c = NULL, *v;
	int rc = -1;

	if (!tmpl || !vals || !how)
		goto out;
	rc = 1;
	if (!parse_counter(line, tmpl, vals, how, max, &n))
		goto out;
	rc = 0;
	for (i = 0; i < cs->n && !c; i++)
		if (!strcmp(cs->v[i].tmpl, tmpl) && cs->v[i].nvals == n)
			c = &cs->v[i];
	if (!c) {
		v = realloc(cs->v, (cs->n + 1) * sizeof(*v));
		if (!v) {
			rc = -1;
			goto out;
		}
		cs->v = v;
		c = &cs->v[cs->n++];
		c->tmpl = tmpl;
		c->nvals = n;
		c->vals = vals;
		c->how = how;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (c->how[i] == SUM)
			c->vals[i] += vals[i];
		else if (c->how[i] == MAX && vals[i] > c->vals[i])
			c->vals[i] = vals[i];
	}
out:
	free(tmpl);
	free(vals);
	free(how);
	return rc;
}

static void print_counters(struct counters *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct counter *c = &cs->v[i];
		size_t k = 0;

		for (const char *p = c->tmpl; *p; p++) {
			if (*p == '\1')
				fprintf(stderr, "%llu", c->vals[k++]);
			else
				fputc(*p, stderr);
		}
		fputc('\n', stderr);
		free(c->tmpl);
		free(c->vals);
		free(c->how);
	}
	free(cs->v);
}

/* The messages printed so far, for printing each once. */
struct seen {
	const char **v;
	size_t cap, n;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* 1 when @s is new (and now seen), 0 when seen, -1 when out of memory. */
static int seen_add(struct seen *st, const char *s)
{
	const char **v;
	size_t i, cap;

	if (2 * (st->n + 1) > st->cap) {
		cap = st->cap ? 2 * st->cap : 64;
		v = calloc(cap, sizeof(*v));
		if (!v)
			return -1;
		for (i = 0; i < st->cap; i++) {
			size_t j;

			if (!st->v[i])
				continue;
			for (j = hash(st->v[i]) & (cap - 1); v[j];
			     j = (j + 1) & (cap - 1))
				;
			v[j] = st->v[i];
		}
		free(st->v);
		st->v = v;
		st->cap = cap;
	}
	for (i = hash(s) & (st->cap - 1); st->v[i]; i = (i + 1) & (st->cap - 1))
		if (!strcmp(st->v[i], s))
			return 0;
	st->v[i] = s;
	st->n++;
	return 1;
}

/* Lines are split in place: @res's stderr buffers end in a NUL (run.c,
 * main.c) and their newlines become NULs. */
static int merge_err(const struct tspkt_mpi_args *a,
		     const struct tspkt_mpi_result *res)
{
	struct counters cs = { NULL, 0 };
	struct seen st = { NULL, 0, 0 };
	char *p, *end, *nl;
	int rc = 0, k;

	for (size_t i = 0; i < a->nfiles && !rc; i++) {
		if (!res[i].err)
			continue;
		end = res[i].err + res[i].errlen;
		for (p = res[i].err; p < end && !rc; p = nl + 1) {
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				nl = end;
			*nl = '\0';
			k = add_counter(&cs, p);
			if (k == 1)
				k = seen_add(&st, p);
			if (k < 0)
				rc = -1;
			else if (k == 1)
				fprintf(stderr, "%s\n", p);
		}
	}
	print_counters(&cs);
	free(st.v);
	return rc;
}

int tspkt_mpi_merge(const struct tspkt_mpi_args *a,
		    const struct tspkt_mpi_result *res)
{
	bool matched = false, error = false;
	size_t i;

	for (i = 0; i < a->nfiles; i++) {
		matched |= res[i].status == 0;
		error |= res[i].status != 0 && res[i].status != 1;
	}
	/* the records before the messages, as tspkt writes them, also when
	 * both go to one file */
	if (merge_out(a, res)) {
		fprintf(stderr, TSPKT_MPI_PROG ": out of memory\n");
		error = true;
	}
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr,
			TSPKT_MPI_PROG ": write error on standard output: %s\n",
			strerror(errno ? errno : EIO));
		error = true;
	}
	if (merge_err(a, res)) {
		fprintf(stderr, TSPKT_MPI_PROG ": out of memory\n");
		error = true;
	}
	if (a->write_file && merge_pcap(a, res))
		error = true;
	/* tspkt's rule: -q with a match is 0 whatever else happened */
	if (a->quiet && matched)
		return 0;
	return error ? 2 : matched ? 0 : 1;
}
