/*
 * main.c - tspkt: search packets with the kernel's string-match rules.
 *
 *   tspkt [OPTION]... (-r FILE | -i IFACE) [-e RULE]... [-f RULEFILE]
 *         [PATTERN] [FILTER...]
 *
 * Options come before the operands (as with tcpdump), so BPF filter words
 * are never taken for options.  Exit status: 0 a packet matched, 1 none,
 * 2 an error.  See tspkt(1).
 */
#define _DEFAULT_SOURCE /* pcap.h uses the BSD u_char/u_int types */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backlog.h"
#include "capture.h"
#include "classify.h"
#include "defrag.h"
#include "output.h"
#include "pool.h"
#include "rules.h"
#include "sets.h"
#include "tcpstream.h"
#include "tspkt.h"

#define MAX_WORKERS 256u
#define MAX_BACKLOG 10000000u

static void usage_exit(void)
{
	fputs("Usage: " TSPKT_PROG " [OPTION]... (-r FILE | -i IFACE) "
	      "[-e RULE]... [-f RULEFILE] [PATTERN] [FILTER...]\n"
	      "Try '" TSPKT_PROG " --help' for more information.\n",
	      stderr);
	exit(2);
}

static void help(void)
{
	fputs("Usage: " TSPKT_PROG " [OPTION]... (-r FILE | -i IFACE) "
	      "[-e RULE]... [-f RULEFILE] [PATTERN] [FILTER...]\n"
	      "Search IP packets for strings with libtextsearch; IP fragments "
	      "are reassembled.\n"
	      "\n"
	      "  -r, -I FILE               read a pcap or pcapng file (- for "
	      "stdin)\n"
	      "  -i, -d IFACE              capture live on IFACE\n"
	      "  -e, --rule=RULE           a rule (several allowed), e.g.\n"
	      "          'class web algo bm string \"GET /\" from 0 to 1500 "
	      "layer transport icase'\n"
	      "  -f, --rules=FILE          rules from FILE, one per line, # "
	      "comments\n"
	      "      --algo=NAME           algorithm of rules naming none "
	      "(default auto)\n"
	      "      --per-rule            search each rule on its own, not "
	      "a layer's rules\n"
	      "                            in one pass (the same output, "
	      "slower)\n"
	      "      --icase               PATTERN: fold case\n"
	      "  -v, --invert-match        PATTERN: select packets without it\n"
	      "  -j, --workers=N           classifying threads (default: "
	      "cores)\n"
	      "      --backlog=N           receive backlog length (default "
	      "1000)\n"
	      "      --drop-on-overrun     drop when the backlog is full, "
	      "also for files\n"
	      "      --json                JSON Lines output\n"
	      "  -w FILE                   write matching packets to a pcap "
	      "FILE\n"
	      "  -c, --count               counters only, no packet lines\n"
	      "  -q, --quiet               print nothing; stop at the first "
	      "match\n"
	      "  -n, --max-matches=NUM     stop after NUM matching packets\n"
	      "  -s, --snaplen=N           bytes captured per packet with -i "
	      "(262144)\n"
	      "  -p, --no-promiscuous-mode do not put IFACE in promiscuous "
	      "mode\n"
	      "  -l, --line-buffered       flush every line (always with -i)\n"
	      "      --verbose             report each malformed frame\n"
	      "      --no-stream           search TCP per datagram, not as "
	      "streams\n"
	      "      --max-flows=N         flows kept (1000000)\n"
	      "      --hz=N                timer ticks per second (250)\n"
	      "      --tcp-new-timeout=S, --tcp-established-timeout=S,\n"
	      "      --tcp-closed-timeout=S, --udp-new-timeout=S,\n"
	      "      --udp-established-timeout=S\n"
	      "                            idle time-outs (60, 3600, 120, "
	      "30, 300)\n"
	      "      --hole-timeout=S      wait for missing TCP bytes (10)\n"
	      "      --stream-memcap=BYTES out-of-order bytes held (64M)\n"
	      "      --stream-depth=BYTES  bytes searched per direction (1M; "
	      "0: all)\n"
	      "      --overlap-policy=P    first, last, bsd, linux, windows "
	      "or solaris (bsd)\n"
	      "      --no-midstream        only TCP connections whose "
	      "handshake is seen\n"
	      "      --write-flows         -w gets every packet of the "
	      "flows that matched\n"
	      "  -h, --help                this help\n"
	      "  -V, --version             print the version\n"
	      "\n"
	      "Without -e/-f, PATTERN is searched in TCP streams and in the "
	      "payload of\nother datagrams (like ngrep, which has no "
	      "streams).\n"
	      "FILTER is a pcap-filter(7) expression.  Exit status: 0 a "
	      "packet matched,\n"
	      "1 none, 2 an error.\n",
	      stdout);
	exit(0);
}

struct cmdline {
	struct tspkt_opts o;
	const char *algo;
	bool icase, invert;
	bool have_rules;
	bool per_rule; /* --per-rule: no sets */
	bool no_stream;
	struct tcpstream_opts so;
};

/* Exit 2 on a bad command line, freeing what was parsed so far (so a
 * leak checker stays quiet). */
static void bail(struct cmdline *cl, bool usage)
{
	ruleset_free(&cl->o.rules);
	free(cl->o.filter);
	if (usage)
		usage_exit();
	exit(2);
}

static unsigned long long parse_count(struct cmdline *cl, const char *what,
				      const char *s, unsigned long long min,
				      unsigned long long max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || v < min || v > max) {
		fprintf(stderr, TSPKT_PROG ": bad %s '%s' (%llu to %llu)\n",
			what, s, min, max);
		bail(cl, false);
	}
	return v;
}

/* Bytes, with an optional K, M or G (powers of 1024). */
static uint64_t parse_size(struct cmdline *cl, const char *what, const char *s,
			   uint64_t min)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (!*s || *end || errno || *s == '-' || v < min ||
	    v > (UINT64_MAX >> shift)) {
		fprintf(stderr,
			TSPKT_PROG ": bad %s '%s' (bytes, with K, M or G)\n",
			what, s);
		bail(cl, false);
	}
	return (uint64_t)v << shift;
}

static char *join_words(char **w, int n)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	*s = '\0';
	for (i = 0; i < n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, w[i]);
	}
	return s;
}

enum {
	OPT_BACKLOG = 256,
	OPT_DROP,
	OPT_JSON,
	OPT_ALGO,
	OPT_ICASE,
	OPT_VERBOSE,
	OPT_PER_RULE,
	OPT_NO_STREAM,
	OPT_MAX_FLOWS,
	OPT_HZ,
	OPT_TCP_NEW,
	OPT_TCP_EST,
	OPT_TCP_CLOSED,
	OPT_UDP_NEW,
	OPT_UDP_EST,
	OPT_HOLE,
	OPT_MEMCAP,
	OPT_DEPTH,
	OPT_POLICY,
	OPT_NO_MIDSTREAM,
	OPT_WRITE_FLOWS,
};

/* '+': stop at the first operand, so filter words stay operands */
static const char short_opts[] = "+r:I:i:d:e:f:j:w:cqn:s:plvhV";

static const struct option long_opts[] = {
	{ "rule", required_argument, NULL, 'e' },
	{ "rules", required_argument, NULL, 'f' },
	{ "workers", required_argument, NULL, 'j' },
	{ "backlog", required_argument, NULL, OPT_BACKLOG },
	{ "drop-on-overrun", no_argument, NULL, OPT_DROP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "algo", required_argument, NULL, OPT_ALGO },
	{ "per-rule", no_argument, NULL, OPT_PER_RULE },
	{ "icase", no_argument, NULL, OPT_ICASE },
	{ "invert-match", no_argument, NULL, 'v' },
	{ "count", no_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "max-matches", required_argument, NULL, 'n' },
	{ "snaplen", required_argument, NULL, 's' },
	{ "no-promiscuous-mode", no_argument, NULL, 'p' },
	{ "line-buffered", no_argument, NULL, 'l' },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "no-stream", no_argument, NULL, OPT_NO_STREAM },
	{ "max-flows", required_argument, NULL, OPT_MAX_FLOWS },
	{ "hz", required_argument, NULL, OPT_HZ },
	{ "tcp-new-timeout", required_argument, NULL, OPT_TCP_NEW },
	{ "tcp-established-timeout", required_argument, NULL, OPT_TCP_EST },
	{ "tcp-closed-timeout", required_argument, NULL, OPT_TCP_CLOSED },
	{ "udp-new-timeout", required_argument, NULL, OPT_UDP_NEW },
	{ "udp-established-timeout", required_argument, NULL, OPT_UDP_EST },
	{ "hole-timeout", required_argument, NULL, OPT_HOLE },
	{ "stream-memcap", required_argument, NULL, OPT_MEMCAP },
	{ "stream-depth", required_argument, NULL, OPT_DEPTH },
	{ "overlap-policy", required_argument, NULL, OPT_POLICY },
	{ "no-midstream", no_argument, NULL, OPT_NO_MIDSTREAM },
	{ "write-flows", no_argument, NULL, OPT_WRITE_FLOWS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv, struct cmdline *cl)
{
	struct tspkt_opts *o = &cl->o;
	char err[4400], where[64];
	unsigned int nrule = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	o->workers = ncpu > 0 ? (unsigned int)(ncpu < 64 ? ncpu : 64) : 1;
	o->backlog = BACKLOG_DEFAULT_MAX;
	o->snaplen = 262144;
	o->promisc = true;
	cl->so = (struct tcpstream_opts){
		.max_flows = TCPSTREAM_DEFAULT_MAX_FLOWS,
		.hz = TCPSTREAM_DEFAULT_HZ,
		.timeouts = FLOW_TIMEOUTS_DEFAULT,
		.hole_timeout = TCPSTREAM_DEFAULT_HOLE_TIMEOUT,
		.memcap = TCPSTREAM_DEFAULT_MEMCAP,
		.depth = TCPSTREAM_DEFAULT_DEPTH,
		.policy = REASM_POLICY_BSD,
		.midstream = true,
	};
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'r':
		case 'I':
			o->read_file = optarg;
			break;
		case 'i':
		case 'd':
			o->iface = optarg;
			break;
		case 'e':
			snprintf(where, sizeof(where), "rule %u (-e)", ++nrule);
			if (ruleset_add(&o->rules, optarg, where, err,
					sizeof(err))) {
				fprintf(stderr, TSPKT_PROG ": %s\n", err);
				bail(cl, false);
			}
			cl->have_rules = true;
			break;
		case 'f':
			if (ruleset_load_file(&o->rules, optarg, err,
					      sizeof(err))) {
				fprintf(stderr, TSPKT_PROG ": %s\n", err);
				bail(cl, false);
			}
			nrule = (unsigned int)o->rules.n;
			cl->have_rules = true;
			break;
		case 'j':
			o->workers = (unsigned int)parse_count(
				cl, "number of workers", optarg, 1,
				MAX_WORKERS);
			break;
		case OPT_BACKLOG:
			o->backlog = (unsigned int)parse_count(
				cl, "backlog length", optarg, 1, MAX_BACKLOG);
			break;
		case OPT_DROP:
			o->drop_on_overrun = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_ALGO:
			cl->algo = optarg;
			break;
		case OPT_ICASE:
			cl->icase = true;
			break;
		case OPT_PER_RULE:
			cl->per_rule = true;
			break;
		case 'v':
			cl->invert = true;
			break;
		case 'w':
			o->write_file = optarg;
			break;
		case 'c':
			o->counters_only = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'n':
			o->max_matches = parse_count(cl, "number of matches",
						     optarg, 1, UINT64_MAX);
			break;
		case 's':
			o->snaplen = (unsigned int)parse_count(
				cl, "snap length", optarg, 64, 262144);
			break;
		case 'p':
			o->promisc = false;
			break;
		case 'l':
			o->line_buffered = true;
			break;
		case OPT_VERBOSE:
			o->verbose++;
			break;
		case OPT_NO_STREAM:
			cl->no_stream = true;
			break;
		case OPT_MAX_FLOWS:
			cl->so.max_flows = (size_t)parse_count(
				cl, "number of flows", optarg, 1, 1u << 30);
			break;
		case OPT_HZ:
			cl->so.hz = (unsigned int)parse_count(cl, "HZ", optarg,
							      1, 10000);
			break;
		case OPT_TCP_NEW:
		case OPT_TCP_EST:
		case OPT_TCP_CLOSED:
		case OPT_UDP_NEW:
		case OPT_UDP_EST:
		case OPT_HOLE: {
			/* seconds, up to a year: jiffies stay far from a
			 * wrap's half at HZ 10000 */
			unsigned int v = (unsigned int)parse_count(
				cl, "time-out in seconds", optarg, 1,
				366u * 86400u);
			struct flow_timeouts *t = &cl->so.timeouts;

			*(c == OPT_TCP_NEW    ? &t->tcp_new :
			  c == OPT_TCP_EST    ? &t->tcp_established :
			  c == OPT_TCP_CLOSED ? &t->tcp_closed :
			  c == OPT_UDP_NEW    ? &t->udp_new :
			  c == OPT_UDP_EST    ? &t->udp_established :
						&cl->so.hole_timeout) = v;
			break;
		}
		case OPT_MEMCAP:
			cl->so.memcap =
				parse_size(cl, "--stream-memcap", optarg, 1);
			break;
		case OPT_DEPTH:
			cl->so.depth =
				parse_size(cl, "--stream-depth", optarg, 0);
			break;
		case OPT_POLICY:
			if (reasm_policy_parse(optarg, &cl->so.policy)) {
				fprintf(stderr,
					TSPKT_PROG ": unknown overlap policy "
						   "'%s' (first, last, bsd, "
						   "linux, windows or "
						   "solaris)\n",
					optarg);
				bail(cl, false);
			}
			break;
		case OPT_NO_MIDSTREAM:
			cl->so.midstream = false;
			break;
		case OPT_WRITE_FLOWS:
			o->write_flows = true;
			break;
		case 'h':
			help();
			break;
		case 'V':
			printf(TSPKT_PROG " (textsearch) %s, %s\n",
			       textsearch_version_string(), pcap_lib_version());
			exit(0);
		default:
			bail(cl, true);
		}
	}
	if (!o->read_file == !o->iface) {
		fprintf(stderr, TSPKT_PROG ": %s\n",
			o->read_file ?
				"give either -r FILE or -i IFACE, not both" :
				"give a capture to read: -r FILE or -i IFACE");
		bail(cl, true);
	}
	if (!cl->have_rules) {
		if (optind >= argc) {
			fprintf(stderr,
				TSPKT_PROG ": no PATTERN and no rule "
					   "(-e RULE or -f RULEFILE)\n");
			bail(cl, true);
		}
		if (ruleset_add_plain(&o->rules, argv[optind++], cl->icase,
				      cl->invert, err, sizeof(err))) {
			fprintf(stderr, TSPKT_PROG ": %s\n", err);
			bail(cl, false);
		}
		/* TCP's in its streams; "without it" stays per packet */
		o->rules.v[o->rules.n - 1].tcp_stream = !cl->no_stream &&
							!cl->invert;
	} else if (cl->icase || cl->invert) {
		fprintf(stderr, TSPKT_PROG
			": --icase and -v apply to PATTERN; "
			"with -e/-f write icase or invert in the rule\n");
		bail(cl, false);
	}
	if (optind < argc) {
		o->filter = join_words(argv + optind, argc - optind);
		if (!o->filter) {
			fprintf(stderr, TSPKT_PROG ": out of memory\n");
			bail(cl, false);
		}
	}
	if (o->iface)
		o->line_buffered = true;
	if (o->write_flows &&
	    (!o->write_file || !o->read_file || !strcmp(o->read_file, "-"))) {
		fprintf(stderr,
			TSPKT_PROG ": --write-flows writes to -w FILE the "
				   "flows that matched, reading the capture "
				   "again: it needs -w and -r FILE (not -i, "
				   "not standard input)\n");
		bail(cl, false);
	}
	for (size_t i = 0; cl->no_stream && i < o->rules.n; i++) {
		if (o->rules.v[i].layer == LAYER_STREAM) {
			fprintf(stderr,
				TSPKT_PROG ": rule %zu has layer stream, "
					   "which --no-stream turns off\n",
				i + 1);
			bail(cl, false);
		}
	}
}

/*
 * Plugins built beside this binary (<bin>/../plugins) are found last, after
 * TEXTSEARCH_PLUGIN_PATH, so "algo shiftor" works from the build folder
 * too; installed, the library's own plugin folder applies.  Runs before
 * any thread starts (setenv).
 */
static void add_build_plugin_dir(void)
{
	char exe[4096], *cut, *path;
	const char *env = getenv("TEXTSEARCH_PLUGIN_PATH");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len;

	if (n <= 0)
		return;
	exe[n] = '\0';
	cut = strrchr(exe, '/');
	if (!cut)
		return;
	*cut = '\0';
	len = (env ? strlen(env) : 0) + strlen(exe) + sizeof(":/../plugins");
	path = malloc(len);
	if (!path)
		return;
	snprintf(path, len, "%s%s%s/../plugins", env ? env : "",
		 env && *env ? ":" : "", exe);
	setenv("TEXTSEARCH_PLUGIN_PATH", path, 1);
	free(path);
}

/* What a backlog still holds when it is freed (an error path). */
static void release_queued(struct sk_buff *skb, void *arg)
{
	if (pkt_cb(skb)->owner == PKT_HEAP)
		free(pkt_cb(skb)->info);
	pkt_release(arg, skb);
}

static void print_stream_counters(const struct tcpstream *tcp, unsigned int hz)
{
	struct tcpstream_stats ts;
	const struct reasm_stats *r = &ts.reasm;
	const struct flow_stats *f = &ts.flows;

	tcpstream_get_stats(tcp, &ts);
	fprintf(stderr,
		TSPKT_PROG ": flows: created=%llu max-active=%llu fin=%llu "
			   "rst=%llu timeout=%llu evicted=%llu "
			   "end-of-capture=%llu midstream=%llu\n",
		(unsigned long long)f->created,
		(unsigned long long)f->max_active,
		(unsigned long long)f->ended[FLOW_END_FIN],
		(unsigned long long)f->ended[FLOW_END_RST],
		(unsigned long long)f->ended[FLOW_END_TIMEOUT],
		(unsigned long long)f->ended[FLOW_END_EVICTED],
		(unsigned long long)f->ended[FLOW_END_CAPTURE],
		(unsigned long long)ts.midstream);
	fprintf(stderr,
		TSPKT_PROG ": streams: segments=%llu in-order=%llu "
			   "out-of-order=%llu duplicates=%llu overlaps=%llu "
			   "overlaps-different=%llu gaps=%llu gap-bytes=%llu "
			   "depth-reached=%llu memcap-drops=%llu ignored=%llu "
			   "matches=%llu\n",
		(unsigned long long)ts.segments,
		(unsigned long long)r->in_order,
		(unsigned long long)r->out_of_order,
		(unsigned long long)r->duplicates,
		(unsigned long long)r->overlaps,
		(unsigned long long)r->overlaps_diff,
		(unsigned long long)r->gaps, (unsigned long long)r->gap_bytes,
		(unsigned long long)r->depth_reached,
		(unsigned long long)r->memcap_drops,
		(unsigned long long)ts.ignored, (unsigned long long)ts.matches);
	fprintf(stderr,
		TSPKT_PROG ": timers: hz=%u armed=%llu fired=%llu "
			   "try-to-del-removed=%llu try-to-del-idle=%llu "
			   "try-to-del-running=%llu\n",
		hz, ts.timers.armed, ts.timers.fired, ts.timers.try_del_removed,
		ts.timers.try_del_idle, ts.timers.try_del_running);
}

static void print_counters(struct capture *cap, struct defrag *d,
			   struct backlog *b, struct output *out,
			   const struct tspkt_opts *o,
			   const struct tcpstream *tcp, unsigned int hz)
{
	struct capture_stats cs;
	struct defrag_stats ds;
	struct backlog_stats bs;
	size_t i;

	capture_get_stats(cap, &cs);
	defrag_get_stats(d, &ds);
	backlog_get_stats(b, &bs);
	fprintf(stderr,
		TSPKT_PROG ": frames: read=%llu ip=%llu not-ip=%llu "
			   "malformed=%llu\n",
		(unsigned long long)cs.frames, (unsigned long long)cs.decoded,
		(unsigned long long)cs.not_ip,
		(unsigned long long)cs.malformed);
	fprintf(stderr,
		TSPKT_PROG
		": fragments: received=%llu "
		"reassembled=%llu timeouts=%llu overlaps=%llu oversize=%llu "
		"evicted=%llu invalid=%llu frags-dropped=%llu "
		"held-bytes=%zu\n",
		(unsigned long long)ds.fragments,
		(unsigned long long)ds.reassembled,
		(unsigned long long)ds.timeouts,
		(unsigned long long)ds.overlaps,
		(unsigned long long)ds.oversize, (unsigned long long)ds.evicted,
		(unsigned long long)ds.invalid,
		(unsigned long long)ds.frags_dropped, defrag_bytes_held(d));
	fprintf(stderr,
		TSPKT_PROG ": backlog: received=%llu queued=%llu "
			   "dropped=%llu max-depth=%u size=%u\n",
		(unsigned long long)bs.received, (unsigned long long)bs.queued,
		(unsigned long long)bs.dropped, bs.max_depth, o->backlog);
	fprintf(stderr, TSPKT_PROG ": classified=%llu matched=%llu\n",
		(unsigned long long)output_classified(out),
		(unsigned long long)output_matched(out));
	for (i = 0; i < o->rules.nclasses; i++)
		fprintf(stderr, TSPKT_PROG ": class %s: %llu\n",
			o->rules.classes[i],
			(unsigned long long)output_class_count(out, i));
	if (tcp)
		print_stream_counters(tcp, hz);
	if (cs.have_pcap_stats)
		fprintf(stderr,
			TSPKT_PROG ": pcap: received=%u dropped=%u "
				   "ifdropped=%u\n",
			cs.ps.ps_recv, cs.ps.ps_drop, cs.ps.ps_ifdrop);
}

int main(int argc, char **argv)
{
	struct cmdline cl;
	struct tspkt_opts *o = &cl.o;
	struct capture *cap = NULL;
	struct output *out = NULL;
	struct backlog *b = NULL;
	struct defrag *d = NULL;
	struct pkt_pool *pool = NULL;
	struct pkt_cache cache = { 0 };
	struct classify ctx;
	struct classifier *ks = NULL;
	struct tcpstream *tcp = NULL;
	struct pkt_clock clock = { 0 };
	pthread_t *th = NULL;
	unsigned int i, started = 0, nworkers;
	bool here;
	sigset_t sigs, old;
	char err[4600];
	int rc, status = 2;

	memset(&cl, 0, sizeof(cl));
	parse_args(argc, argv, &cl);
	add_build_plugin_dir();
	if (ruleset_prepare(&o->rules, cl.algo, err, sizeof(err)) ||
	    (!cl.per_rule && ruleset_build_sets(&o->rules, err, sizeof(err)))) {
		fprintf(stderr, TSPKT_PROG ": %s\n", err);
		goto done;
	}
	cap = capture_open(o, err, sizeof(err));
	if (!cap) {
		fprintf(stderr, TSPKT_PROG ": %s\n", err);
		goto done;
	}
	/* opening -w truncates it: never the file still to be read */
	if (o->write_file && capture_reads_file(cap, o->write_file)) {
		fprintf(stderr,
			TSPKT_PROG ": -w %s: that is the capture being "
				   "read (-r %s); not overwriting it\n",
			o->write_file, o->read_file);
		goto done;
	}
	out = output_new(o, o->rules.nclasses, capture_linktype(cap),
			 capture_snaplen(cap), err, sizeof(err));
	if (!out) {
		fprintf(stderr, TSPKT_PROG ": %s\n", err);
		goto done;
	}
	/* this thread reads, so it runs the time-outs' wheel */
	rc = pkt_clock_init(&clock, cl.so.hz);
	if (rc) {
		fprintf(stderr, TSPKT_PROG ": timer wheel: %s\n",
			strerror(-rc));
		goto done;
	}
	capture_set_clock(cap, &clock);
	if (!cl.no_stream && tcpstream_wanted(&o->rules)) {
		tcp = tcpstream_new(o, &cl.so, &clock, err, sizeof(err));
		if (!tcp) {
			fprintf(stderr, TSPKT_PROG ": %s\n", err);
			goto done;
		}
		capture_set_streams(cap, tcp);
	}
	/* a file waits for room (nothing is lost) unless asked to drop;
	 * a live capture cannot wait, so it drops and counts */
	b = backlog_new(o->backlog, !o->iface && !o->drop_on_overrun);
	d = defrag_new_clocked(NULL, &clock);
	pool = pkt_pool_new();
	/* reading a file without dropping, the reader is one of the -j
	 * classifying threads: it has nothing to wait for (capture.c) */
	here = !o->iface && !o->drop_on_overrun;
	nworkers = here ? o->workers - 1 : o->workers;
	ks = tspkt_line_calloc(o->workers, sizeof(*ks));
	th = calloc(o->workers, sizeof(*th));
	if (!b || !d || !pool || !ks || !th) {
		fprintf(stderr, TSPKT_PROG ": out of memory\n");
		goto done;
	}
	cache.pool = pool;
	backlog_set_release(b, release_queued, &cache);
	/* lines go out in large writes, unless each is wanted at once (a
	 * terminal keeps stdio's line buffering) */
	if (!o->line_buffered && !isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1u << 16);
	ctx.backlog = b;
	ctx.opts = o;
	ctx.out = out;
	ctx.pool = pool;
	if (here && o->workers > 1 && capture_can_share(cap)) {
		/* every thread reads in turn and classifies what it read;
		 * threads far past the processors mostly wait for their
		 * turns (on 2 processors, 100 rules: -j 4 as fast as -j 2,
		 * -j 8 1.3 times as slow, -j 64 4 times) */
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned long most = ncpu > 4 ? (unsigned long)ncpu : 4;
		unsigned int n = o->workers < most ? o->workers :
						     (unsigned int)most;

		for (i = 0; i < n; i++)
			classifier_init(&ks[i], &ctx);
		rc = capture_run_shared(cap, d, b, out, pool, ks, n, err,
					sizeof(err));
		for (i = 0; i < n; i++)
			classifier_done(&ks[i]);
		goto finish;
	}
	/* workers block SIGINT/SIGTERM, so the signal interrupts the read */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	for (i = 0; i < nworkers; i++) {
		classifier_init(&ks[i], &ctx);
		if (pthread_create(&th[i], NULL, classify_worker, &ks[i])) {
			classifier_done(&ks[i]);
			break;
		}
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!started && !here) {
		fprintf(stderr, TSPKT_PROG ": cannot start a worker thread\n");
		goto done;
	}
	if (here)
		classifier_init(&ks[o->workers - 1], &ctx);
	rc = capture_run(cap, d, b, out, pool,
			 here ? &ks[o->workers - 1] : NULL, started, err,
			 sizeof(err));
	if (here)
		classifier_done(&ks[o->workers - 1]);
	backlog_close(b);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
finish:
	status = output_finish(out) ? 2 : 0;
	if (rc < 0) {
		fprintf(stderr, TSPKT_PROG ": %s\n", err);
		status = 2;
	}
	if (o->write_flows && rc >= 0) {
		uint64_t n;

		if (capture_write_flows(o, output_matched_flows(out), &n, err,
					sizeof(err))) {
			fprintf(stderr, TSPKT_PROG ": --write-flows: %s\n",
				err);
			status = 2;
		} else if (!o->quiet) {
			fprintf(stderr,
				TSPKT_PROG ": write-flows: flows=%zu "
					   "frames=%llu\n",
				flow_keyset_count(output_matched_flows(out)),
				(unsigned long long)n);
		}
	}
	if (!o->quiet)
		print_counters(cap, d, b, out, o, tcp, cl.so.hz);
	if (!status || (o->quiet && output_matched(out)))
		status = output_matched(out) ? 0 : 1; /* grep -q's rule */
done:
	tcpstream_free(tcp);
	free(th);
	free(ks);
	defrag_free(d);
	backlog_free(b);
	output_free(out);
	/* every slot goes with its slabs, cached or not */
	pkt_pool_free(pool);
	capture_close(cap);
	pkt_clock_destroy(&clock);
	ruleset_free(&o->rules);
	free(o->filter);
	return status;
}
