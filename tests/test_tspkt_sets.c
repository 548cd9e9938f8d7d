/*
 * test_tspkt_sets.c - tspkt searching a layer's rules in one pass (a
 * pattern set per layer and case mode, then each rule's window, case and
 * inversion) prints exactly what it prints searching each rule on its own
 * (--per-rule): the same lines, the same --json, the same counters, the
 * same exit status.
 *
 * Rules: those of test_tspkt_cli's rule tests, and a generated file of
 * 1,000 rules mixing layers, windows (narrow, wide, past the end), case
 * folding, inversion, hex strings with any byte, algorithms (none, auto,
 * ac, and kmp/bm/rarebyte which keep their own pass), and patterns that
 * occur, that never do, that are duplicates, prefixes or suffixes of one
 * another.  Captures: test_tspkt_cli's mixed capture, IPv4 and IPv6
 * datagrams cut into fragments (reassembled, so searched across a chain
 * of buffers) in and out of order, and a generated capture of TCP, UDP
 * and ICMP over IPv4 and IPv6 with payloads drawn from a small alphabet
 * the patterns come from, some fragmented, some truncated.
 *
 * Environment: BUILD locates $BUILD/bin/tspkt; TSPKT_TEST_KEEP=1 keeps the
 * temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "child.h"
#include "pcapgen.h"

#define TS0_US 1796306400000000LL /* 2026-12-03T14:00:00Z */
#define NRULES 1000
#define NRANDOM 2500 /* datagrams in the generated capture */

static char tspkt_path[4096];
static char dir[4096];

static uint64_t rng = 0x5e75e75e7ULL;

/* splitmix64: the same captures and rules on every run */
static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

/* ---- running tspkt ------------------------------------------------------ */

static void run(struct child_result *r, char **args)
{
	char *argv[32];
	int n = 0;
	const struct child_spec spec = { .argv = argv,
					 .cwd = dir,
					 .capdir = dir };

	argv[n++] = tspkt_path;
	while (*args)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (child_run(&spec, r))
		fail_msg("run tspkt: %s", strerror(errno));
	if (child_sanitizer_report(r->err))
		fail_msg("sanitizer report:\n%s", r->err);
	if (!WIFEXITED(r->status))
		fail_msg("tspkt died: status %d; stderr:\n%s", r->status,
			 r->err);
}

/* The stderr lines that do not depend on thread timing: the classified
 * and per-class counters (the backlog's depth does with -j 2). */
static char *stable_counters(const char *err)
{
	char *out = calloc(1, strlen(err) + 1), *o = out;
	const char *line = err;

	assert_non_null(out);
	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line + 1) : strlen(line);

		if (!strncmp(line, "tspkt: classified=", 18) ||
		    !strncmp(line, "tspkt: class ", 13)) {
			memcpy(o, line, len);
			o += len;
		}
		line += len;
	}
	return out;
}

static void same_text(const char *what, const char *a, const char *b)
{
	size_t i = 0;

	if (!strcmp(a, b))
		return;
	while (a[i] == b[i])
		i++;
	fail_msg("%s differs at byte %zu:\n  sets:     %.200s\n"
		 "  per-rule: %.200s",
		 what, i, a + i, b + i);
}

/*
 * tspkt -r @cap -f @rules with @extra options (up to 3, NULL-ended), in
 * one pass and with --per-rule, with -j 1 and -j 2: every run must print
 * what the per-rule -j 1 run prints.  Returns that run's matched count.
 */
static unsigned long long both_ways(const char *cap, const char *rules,
				    const char *e1, const char *e2,
				    const char *e3)
{
	static const char *const modes[][2] = {
		{ "--per-rule", "1" },
		{ NULL, "1" },
		{ NULL, "2" },
		{ "--per-rule", "2" },
	};
	struct child_result ref = { 0 }, r;
	unsigned long long matched = 0;
	char *ref_stable = NULL;
	size_t m;

	for (m = 0; m < sizeof(modes) / sizeof(*modes); m++) {
		char *args[16];
		int n = 0;

		if (modes[m][0])
			args[n++] = (char *)modes[m][0];
		args[n++] = "-j";
		args[n++] = (char *)modes[m][1];
		args[n++] = "-r";
		args[n++] = (char *)cap;
		args[n++] = "-f";
		args[n++] = (char *)rules;
		if (e1)
			args[n++] = (char *)e1;
		if (e2)
			args[n++] = (char *)e2;
		if (e3)
			args[n++] = (char *)e3;
		args[n] = NULL;
		run(m ? &r : &ref, args);
		if (!m) {
			const char *p = strstr(ref.err, " matched=");

			if (WEXITSTATUS(ref.status) > 1)
				fail_msg("tspkt failed on %s/%s:\n%s", cap,
					 rules, ref.err);
			ref_stable = stable_counters(ref.err);
			if (p)
				matched = strtoull(p + 9, NULL, 10);
			continue;
		}
		if (WEXITSTATUS(r.status) != WEXITSTATUS(ref.status))
			fail_msg("%s -j %s on %s/%s: exit %d, per-rule %d",
				 modes[m][0] ? modes[m][0] : "sets",
				 modes[m][1], cap, rules, WEXITSTATUS(r.status),
				 WEXITSTATUS(ref.status));
		same_text("stdout", r.out, ref.out);
		if (!strcmp(modes[m][1], "1")) {
			/* reading a file with -j 1, every counter repeats */
			same_text("stderr", r.err, ref.err);
		} else if (!e1 || strcmp(e1, "-n")) {
			/* (-n stops the reader after a number of datagrams
			 * that depends on the workers' timing) */
			char *s = stable_counters(r.err);

			same_text("counters", s, ref_stable);
			free(s);
		}
		child_result_free(&r);
	}
	free(ref_stable);
	child_result_free(&ref);
	return matched;
}

/* Every way of printing: lines, --json, counters only, -n. */
static unsigned long long every_output(const char *cap, const char *rules)
{
	unsigned long long matched = both_ways(cap, rules, NULL, NULL, NULL);

	both_ways(cap, rules, "--json", NULL, NULL);
	both_ways(cap, rules, "-c", NULL, NULL);
	both_ways(cap, rules, "-n", "7", NULL);
	return matched;
}

/* ---- captures ------------------------------------------------------------ */

struct cap {
	struct pg_writer *w;
	struct pg_frame *f;
	unsigned int n;
};

static void cap_open(struct cap *c, const char *name)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	c->w = pg_open(p, 0);
	assert_non_null(c->w);
	c->f = calloc(8, sizeof(*c->f));
	assert_non_null(c->f);
	c->n = 0;
}

static void cap_put(struct cap *c, const struct pg_frame *f,
		    unsigned int caplen)
{
	c->n++;
	pg_write(c->w, f, TS0_US + (int64_t)c->n * 1000, caplen);
}

static void cap_close(struct cap *c)
{
	pg_close(c->w);
	free(c->f);
}

/* test_tspkt_cli's mixed capture */
static void write_mixed(void)
{
	static const struct {
		const struct pg_flow *flow;
		const char *payload;
	} mixed[] = {
		{ &pg_flow_tcp4, "GET /needle HTTP/1.1\r\nHost: a\r\n\r\n" },
		{ &pg_flow_udp4, "no match in this one" },
		{ &pg_flow_tcp6, "POST / HTTP/1.1\r\n\r\nneedle=1&NEEDLE=2" },
		{ &pg_flow_udp6, "needle" },
		{ &pg_flow_tcp4, "HTTP/1.1 200 OK\r\n\r\nNEEDLE in caps" },
		{ &pg_flow_udp4, "\xab\xcd\xef binary needle" },
		{ &pg_flow_tcp6, "nothing" },
		{ &pg_flow_udp6, "x needle x needle" },
	};
	struct cap c;
	size_t i;

	cap_open(&c, "mixed.pcap");
	for (i = 0; i < sizeof(mixed) / sizeof(*mixed); i++) {
		pg_build(c.f, mixed[i].flow, mixed[i].payload,
			 (unsigned int)strlen(mixed[i].payload));
		cap_put(&c, c.f, 0);
	}
	cap_close(&c);
}

/* A datagram cut at @cuts, written in order or last fragment first. */
static void put_fragmented(struct cap *c, const struct pg_flow *f,
			   const void *payload, unsigned int size,
			   const unsigned int *cuts, unsigned int ncuts,
			   uint32_t id, bool reverse)
{
	unsigned int n, i;

	assert_true(ncuts < 8);
	n = pg_build_fragments(c->f, f, payload, size, cuts, ncuts, id);
	assert_int_equal(n, ncuts + 1);
	for (i = 0; i < n; i++)
		cap_put(c, &c->f[reverse ? n - 1 - i : i], 0);
}

/* test_tspkt_cli's fragments: "crossing" across the cuts */
static void write_frags(void)
{
	static const unsigned int cut1[] = { 1480 },
				  cut3[] = { 512, 1024, 1448 };
	char *p = malloc(3000);
	struct cap c;

	assert_non_null(p);
	memset(p, '.', 3000);
	memcpy(p + 1468, "crossing", 8);
	memcpy(p + 100, "needle", 6);
	cap_open(&c, "frags.pcap");
	put_fragmented(&c, &pg_flow_udp4, p, 3000, cut1, 1, 7, false);
	put_fragmented(&c, &pg_flow_udp4, p, 3000, cut1, 1, 8, true);
	memset(p, '.', 3000);
	memcpy(p + 1000, "crossing", 8);
	memcpy(p + 1500, "NEEDLE", 6);
	put_fragmented(&c, &pg_flow_tcp6, p, 2000, cut3, 3, 0x1234, true);
	cap_close(&c);
	free(p);
}

/* The alphabet of the generated payloads and patterns: few letters, so
 * short patterns occur often and overlap; both cases; any byte. */
static const char alphabet[] = "abcaabAB.\0\xff\xe9\xc9";

static void random_bytes(char *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = alphabet[below(sizeof(alphabet) - 1)];
}

/* The patterns the rules take: short and long, from the alphabet,
 * prefixes and suffixes of one another, and never-seen ones. */
#define NVOCAB 160
static char vocab[NVOCAB][24];
static unsigned int vocab_len[NVOCAB];

static void make_vocab(void)
{
	unsigned int i;

	for (i = 0; i < NVOCAB; i++) {
		unsigned int k = below(10);

		if (i >= 8 && k < 3) {
			/* a prefix or suffix of an earlier one */
			unsigned int j = below(i), l = vocab_len[j];
			unsigned int n = 1 + below(l);

			memcpy(vocab[i], k ? vocab[j] : vocab[j] + l - n, n);
			vocab_len[i] = n;
		} else if (k < 4) {
			vocab_len[i] = (unsigned int)snprintf(
				vocab[i], sizeof(vocab[i]), "zz-never-%u", i);
		} else {
			vocab_len[i] = 1 + below(k < 8 ? 4 : 12);
			random_bytes(vocab[i], vocab_len[i]);
		}
	}
}

/* The generated capture: TCP, UDP over IPv4 and IPv6 and ICMP, payloads
 * of the alphabet with patterns planted, a tenth fragmented, a few
 * truncated, a few without payload. */
static void write_random(void)
{
	static const struct pg_flow *const flows[] = {
		&pg_flow_tcp4, &pg_flow_udp4,  &pg_flow_tcp6,
		&pg_flow_udp6, &pg_flow_icmp4,
	};
	char *p = malloc(4000);
	struct cap c;
	unsigned int i;

	assert_non_null(p);
	cap_open(&c, "random.pcap");
	for (i = 0; i < NRANDOM; i++) {
		const struct pg_flow *f = flows[below(5)];
		unsigned int k = below(100), n, j;

		n = k < 5 ? 0 : k < 60 ? below(200) : below(1600);
		if (k >= 95)
			n = 1600 + below(2000);
		random_bytes(p, n);
		for (j = 0; n > 24 && j < 1 + n / 200; j++) {
			unsigned int v = below(NVOCAB);

			memcpy(p + below(n - 23), vocab[v], vocab_len[v]);
		}
		if (f->proto == 1) {
			/* type 8 code 0, checksum, id, sequence, data */
			char icmp[4000];

			memcpy(icmp, "\x08\x00\x00\x00\x12\x34\x00\x01", 8);
			memcpy(icmp + 8, p, n);
			pg_build_raw_fragment(c.f, f, i, 0, 0, icmp, n + 8);
			cap_put(&c, c.f, 0);
		} else if (n >= 64 && below(10) == 0) {
			unsigned int cuts[3], nc = 1 + below(3), at = 0, m;

			for (m = 0; m < nc; m++) {
				at += 8 * (1 + below((n / 8) / (nc + 1)));
				cuts[m] = at;
			}
			put_fragmented(&c, f, p, n, cuts, nc, 1000 + i,
				       below(2));
		} else {
			pg_build(c.f, f, p, n);
			/* a few cut short by the capture's snap length */
			cap_put(&c, c.f,
				below(30) ? 0 : 40 + below(c.f->len - 39));
		}
	}
	cap_close(&c);
	free(p);
}

/* ---- rules ------------------------------------------------------------------ */

static void write_file(const char *name, const char *text)
{
	char p[4200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* test_tspkt_cli's rules (and its kernel selftest windows), a file each */
static const char *const cli_rules[] = {
	"class n algo kmp string needle layer network\n",
	"class n algo bm string needle from 0 to 65535\n",
	"class t string needle layer transport\n",
	"class w string needle layer payload from 0 to 8\n",
	"class s string 'needle x' layer payload\n"
	"class s string needle from 3 layer payload\n",
	"class bin hex-string '|ab cd EF| binary' layer transport\n"
	"class ci string \"NEEDLE\" icase layer transport\n"
	"class nohttp ! string HTTP\n",
	"class a string crossing\nclass b string crossing from 1000 to 1500\n"
	"class c algo kmp string crossing from 1400 to 1600\n"
	"class d string crossing from 1400 to 1600\n"
	"class e string needle icase\nclass e string HTTP invert\n"
	"class f string needle from 1500\n",
};

/* One rule of the generated file. */
static void random_rule(FILE *f, unsigned int i)
{
	static const char *const layers[] = { "network", "transport",
					      "payload" };
	static const char *const algos[] = { "auto", "ac", "kmp", "bm",
					     "rarebyte" };
	unsigned int v = below(NVOCAB), k, from = 0, to = 65535;
	bool hex = false;

	fprintf(f, "class c%02u", below(40));
	k = below(20);
	if (k < 5)
		fprintf(f, " algo %s", algos[k]);
	for (k = 0; k < vocab_len[v]; k++)
		if ((unsigned char)vocab[v][k] < '!' ||
		    (unsigned char)vocab[v][k] > '~')
			hex = true;
	if (below(10) == 0)
		fputs(" !", f);
	if (hex) {
		fputs(" hex-string \"|", f);
		for (k = 0; k < vocab_len[v]; k++)
			fprintf(f, "%s%02x", k ? " " : "",
				(unsigned char)vocab[v][k]);
		fputs("|\"", f);
	} else {
		fprintf(f, " string \"%.*s\"", (int)vocab_len[v], vocab[v]);
	}
	k = below(10);
	if (k < 4) {
		from = below(k < 2 ? 64 : 1600);
		fprintf(f, " from %u", from);
	}
	k = below(10);
	if (k < 4) {
		to = from + below(k < 2 ? 40 : 2000);
		fprintf(f, " to %u", to);
	}
	if (below(4))
		fprintf(f, " layer %s", layers[below(3)]);
	if (below(3) == 0)
		fputs(" icase", f);
	if (below(20) == 0)
		fputs(" invert", f);
	fprintf(f, "  # rule %u\n", i + 1);
}

static void write_random_rules(void)
{
	char p[4200];
	unsigned int i;
	FILE *f;

	snprintf(p, sizeof(p), "%s/rules1000.txt", dir);
	f = fopen(p, "w");
	assert_non_null(f);
	for (i = 0; i < NRULES; i++)
		random_rule(f, i);
	assert_int_equal(fclose(f), 0);
}

/* ---- tests ------------------------------------------------------------------ */

static int setup(void **state)
{
	(void)state;
	if (!test_program_path("tspkt", tspkt_path, sizeof(tspkt_path)))
		fail_msg("tspkt not built: %s", strerror(errno));
	if (!test_make_tmpdir("tspkt-sets", dir, sizeof(dir)))
		fail_msg("temporary folder: %s", strerror(errno));
	make_vocab();
	write_mixed();
	write_frags();
	write_random();
	write_random_rules();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!getenv("TSPKT_TEST_KEEP"))
		test_remove_tree(dir);
	return 0;
}

/* The rule tests' rules on every capture. */
static void test_cli_rules(void **state)
{
	static const char *const caps[] = { "mixed.pcap", "frags.pcap",
					    "random.pcap" };
	unsigned long long matched = 0;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cli_rules) / sizeof(*cli_rules); i++) {
		write_file("cli.txt", cli_rules[i]);
		for (j = 0; j < sizeof(caps) / sizeof(*caps); j++)
			matched +=
				both_ways(caps[j], "cli.txt", NULL, NULL, NULL);
	}
	write_file("cli.txt", cli_rules[5]);
	every_output("mixed.pcap", "cli.txt");
	/* not a comparison of two empty outputs */
	assert_true(matched > 20);
}

/* 1,000 generated rules on every capture, every output. */
static void test_random_rules(void **state)
{
	unsigned long long m;

	(void)state;
	m = every_output("random.pcap", "rules1000.txt");
	/* most datagrams match some rule, but not all: the windows,
	 * layers and absent patterns decide */
	assert_true(m > NRANDOM / 2);
	every_output("frags.pcap", "rules1000.txt");
	every_output("mixed.pcap", "rules1000.txt");
}

/* Without inverted rules, the offsets printed are the rules' own first
 * occurrences in their windows, which a wrong window shifts. */
static void test_random_rules_no_invert(void **state)
{
	char p[4200], *line = NULL, *text;
	size_t cap = 0, len = 0;
	FILE *in, *out;
	unsigned long long m;

	(void)state;
	snprintf(p, sizeof(p), "%s/rules1000.txt", dir);
	in = fopen(p, "r");
	assert_non_null(in);
	snprintf(p, sizeof(p), "%s/plain1000.txt", dir);
	out = open_memstream(&text, &len);
	assert_non_null(out);
	while (getline(&line, &cap, in) > 0)
		if (!strstr(line, " invert") && !strstr(line, " !"))
			fputs(line, out);
	fclose(in);
	fclose(out);
	free(line);
	write_file("plain1000.txt", text);
	free(text);
	m = both_ways("random.pcap", "plain1000.txt", NULL, NULL, NULL);
	assert_true(m > NRANDOM / 4 && m < NRANDOM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_rules),
		cmocka_unit_test(test_random_rules),
		cmocka_unit_test(test_random_rules_no_invert),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
