/*
 * main.c - tsgrep: options, patterns, exit status.
 *
 *   tsgrep [OPTION]... PATTERN [FILE]...
 *   tsgrep [OPTION]... -e PATTERN... | -f FILE... [FILE]...
 *
 * Options may follow operands (as with GNU getopt) until "--".  Long
 * options may be abbreviated to any unique prefix.  Exit status: 0 a line
 * was selected, 1 none, 2 an error (unless -q found a match).
 */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "patterns.h"
#include "tsgrep.h"

struct rawpat {
	char *p;
	size_t len;
};

struct patlist {
	struct rawpat *v;
	size_t n, cap;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	fputs(TSG_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void usage_exit(void)
{
	fprintf(stderr, "Usage: " TSG_PROG " [OPTION]... PATTERNS [FILE]...\n"
			"Try '" TSG_PROG " --help' for more information.\n");
	exit(2);
}

static void help(void)
{
	fputs("Usage: " TSG_PROG " [OPTION]... PATTERNS [FILE]...\n"
	      "Search for fixed strings in each FILE, with libtextsearch.\n"
	      "\n"
	      "  -e, --regexp=PATTERN      use PATTERN (several allowed)\n"
	      "  -f, --file=FILE           take patterns from FILE, one per line\n"
	      "  -i, --ignore-case         fold ASCII and ISO-8859-1 letters\n"
	      "  -v, --invert-match        select non-matching lines\n"
	      "  -c, --count               print a count of selected lines\n"
	      "  -o, --only-matching       print only the matched parts\n"
	      "  -b, --byte-offset         print the byte offset\n"
	      "  -n, --line-number         print the line number\n"
	      "  -H, --with-filename       print file names\n"
	      "  -h, --no-filename         suppress file names\n"
	      "  -l, --files-with-matches  print only names of files with matches\n"
	      "  -L, --files-without-match print only names of files without\n"
	      "  -q, --quiet, --silent     print nothing, exit 0 on first match\n"
	      "  -s, --no-messages         no messages about unreadable files\n"
	      "  -r, --recursive           search directories (sorted by name)\n"
	      "  -R, --dereference-recursive  the same, following symlinks\n"
	      "  -a, --text                treat binary files as text\n"
	      "  -I                        skip binary files\n"
	      "      --binary-files=TYPE   binary, text or without-match\n"
	      "  -A, -B, -C NUM            lines of after/before/both context\n"
	      "  -m, --max-count=NUM       stop after NUM selected lines\n"
	      "  -Z, --null                NUL after file names\n"
	      "      --color[=WHEN]        never, always or auto\n"
	      "      --line-buffered       flush every output line\n"
	      "      --algo=NAME           textsearch algorithm (default auto/bm)\n"
	      "      --hex                 patterns with |hex bytes| sections\n"
	      "      --fsm                 patterns in tsgrep's fsm syntax\n"
	      "      --count-matches       like -c, counting matches\n"
	      "      --block-size=N        search in N-byte provider blocks\n"
	      "  -j, --jobs=N              threads (default: number of cores)\n"
	      "      --json                JSON Lines output\n"
	      "      --stats               statistics to stderr at the end\n"
	      "  -V, --version             print the version\n",
	      stdout);
	exit(0);
}

static void addpat(struct patlist *pl, const char *p, size_t len)
{
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 8;
		struct rawpat *v = realloc(pl->v, cap * sizeof(*v));
		if (!v)
			die("out of memory");
		pl->v = v;
		pl->cap = cap;
	}
	char *d = malloc(len + 1);
	if (!d)
		die("out of memory");
	memcpy(d, p, len);
	d[len] = '\0';
	pl->v[pl->n].p = d;
	pl->v[pl->n].len = len;
	pl->n++;
}

/* A -e argument or the PATTERN operand: one pattern per line. */
static void addpats_lines(struct patlist *pl, const char *s, size_t len)
{
	for (;;) {
		const char *nl = memchr(s, '\n', len);
		if (!nl) {
			addpat(pl, s, len);
			return;
		}
		addpat(pl, s, (size_t)(nl - s));
		len -= (size_t)(nl - s) + 1;
		s = nl + 1;
	}
}

/* -f FILE: one pattern per line; a final newline adds no empty pattern,
 * an empty line is the empty pattern. */
static void addpats_file(struct patlist *pl, const char *name)
{
	int fd = strcmp(name, "-") ? open(name, O_RDONLY) : 0;
	if (fd < 0)
		die("%s: %s", name, strerror(errno));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			char *b = realloc(buf, cap);
			if (!b)
				die("out of memory");
			buf = b;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("%s: %s", name, strerror(errno));
		if (!n)
			break;
		len += (size_t)n;
	}
	if (fd)
		close(fd);
	if (len) {
		if (buf[len - 1] == '\n')
			len--;
		addpats_lines(pl, buf, len);
	}
	free(buf);
}

static long long parse_num(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0)
		die("invalid %s argument: '%s'", opt, arg);
	return v;
}

/*
 * A -m or context count, read as grep 3.8 reads it (xstrtoimax): leading
 * blanks and a sign are allowed, anything after the digits is not, and a
 * value past the range of the type stays at its bound, so that a huge
 * count means "no limit".  False if @arg is not a number.
 */
static bool parse_count(const char *arg, long long *value)
{
	char *end;

	errno = 0;
	*value = strtoll(arg, &end, 10);
	return end != arg && !*end && (!errno || errno == ERANGE);
}

static long long context_arg(const char *arg)
{
	long long value;

	if (!parse_count(arg, &value) || value < 0)
		die("invalid context length argument: '%s'", arg);
	return value;
}

/* A negative -m is no limit, as in grep. */
static long long max_count_arg(const char *arg)
{
	long long value;

	if (!parse_count(arg, &value))
		die("invalid max count argument: '%s'", arg);
	return value < 0 ? -1 : value;
}

enum {
	O_BINFILES = 256, O_COLOR, O_LINEBUF, O_ALGO, O_HEX, O_FSM,
	O_COUNTM, O_BLOCK, O_JSON, O_STATS, O_HELP, O_CHUNK
};

struct lopt {
	const char *name;
	int arg; /* 0 none, 1 required, 2 optional */
	int val;
};

static const struct lopt lopts[] = {
	{"regexp", 1, 'e'}, {"file", 1, 'f'}, {"ignore-case", 0, 'i'},
	{"invert-match", 0, 'v'}, {"count", 0, 'c'},
	{"only-matching", 0, 'o'}, {"byte-offset", 0, 'b'},
	{"line-number", 0, 'n'}, {"with-filename", 0, 'H'},
	{"no-filename", 0, 'h'}, {"files-with-matches", 0, 'l'},
	{"files-without-match", 0, 'L'}, {"quiet", 0, 'q'},
	{"silent", 0, 'q'}, {"no-messages", 0, 's'},
	{"recursive", 0, 'r'}, {"dereference-recursive", 0, 'R'},
	{"text", 0, 'a'}, {"binary-files", 1, O_BINFILES},
	{"after-context", 1, 'A'}, {"before-context", 1, 'B'},
	{"context", 1, 'C'}, {"max-count", 1, 'm'}, {"null", 0, 'Z'},
	{"color", 2, O_COLOR}, {"colour", 2, O_COLOR},
	{"line-buffered", 0, O_LINEBUF}, {"fixed-strings", 0, 'F'},
	{"algo", 1, O_ALGO}, {"hex", 0, O_HEX}, {"fsm", 0, O_FSM},
	{"count-matches", 0, O_COUNTM}, {"block-size", 1, O_BLOCK},
	{"jobs", 1, 'j'}, {"json", 0, O_JSON}, {"stats", 0, O_STATS},
	{"help", 0, O_HELP}, {"version", 0, 'V'},
	{"chunk-size", 1, O_CHUNK},
};

static const char short_with_arg[] = "efABCmj";
static const char short_flags[] = "ivcobnHhlLqsrRaIZFVyU";

struct state {
	struct tsg_cfg *c;
	struct patlist pats;
	int have_e;
	const char *algo;
	int hex, fsm, ignore_case, color_when; /* 0 never 1 always 2 auto */
	int line_buffered;
	int with_h, with_H;
	long long context; /* -C or -NUM, -1 if not given */
};

static void apply(struct state *s, int opt, const char *arg, const char *nm)
{
	struct tsg_cfg *c = s->c;
	switch (opt) {
	case 'e': addpats_lines(&s->pats, arg, strlen(arg)); s->have_e = 1; break;
	case 'f': addpats_file(&s->pats, arg); s->have_e = 1; break;
	case 'i': case 'y': s->ignore_case = 1; break;
	case 'v': c->invert = 1; break;
	case 'c': c->count = 1; break;
	case 'o': c->only = 1; break;
	case 'b': c->byte_off = 1; break;
	case 'n': c->line_num = 1; break;
	case 'H': c->with_fname = 1; break;
	case 'h': c->with_fname = 0; break;
	case 'l': c->list = TSG_LIST_MATCHING; break;
	case 'L': c->list = TSG_LIST_NONMATCHING; break;
	case 'q': c->quiet = 1; break;
	case 's': c->no_messages = 1; break;
	case 'r': c->recursive = 1; break;
	case 'R': c->recursive = 1; c->deref = 1; break;
	case 'a': c->binary = TSG_BIN_TEXT; break;
	case 'I': c->binary = TSG_BIN_WITHOUT_MATCH; break;
	case 'Z': c->null_after_name = 1; break;
	case 'F': case 'U': break;
	case 'V':
		printf(TSG_PROG " (textsearch) %s\n",
		       textsearch_version_string());
		exit(0);
	case 'A': c->after = context_arg(arg); break;
	case 'B': c->before = context_arg(arg); break;
	case 'C':
		/* as grep: -A and -B win over -C whatever the order */
		s->context = context_arg(arg);
		break;
	case 'm': c->max_count = max_count_arg(arg); break;
	case 'j':
		c->jobs = (int)parse_num("jobs", arg);
		if (c->jobs < 1 || c->jobs > 1024)
			die("invalid jobs argument: '%s'", arg);
		break;
	case O_BINFILES:
		if (!strcmp(arg, "binary"))
			c->binary = TSG_BIN_BINARY;
		else if (!strcmp(arg, "text"))
			c->binary = TSG_BIN_TEXT;
		else if (!strcmp(arg, "without-match"))
			c->binary = TSG_BIN_WITHOUT_MATCH;
		else
			die("unknown binary-files type");
		break;
	case O_COLOR:
		if (!arg || !strcmp(arg, "always") || !strcmp(arg, "yes") ||
		    !strcmp(arg, "force"))
			s->color_when = arg ? 1 : 2;
		else if (!strcmp(arg, "never") || !strcmp(arg, "no") ||
			 !strcmp(arg, "none"))
			s->color_when = 0;
		else if (!strcmp(arg, "auto") || !strcmp(arg, "tty") ||
			 !strcmp(arg, "if-tty"))
			s->color_when = 2;
		else
			die("invalid argument '%s' for '--color'", arg);
		break;
	case O_LINEBUF: s->line_buffered = 1; break;
	case O_ALGO: s->algo = arg; break;
	case O_HEX: s->hex = 1; break;
	case O_FSM: s->fsm = 1; break;
	case O_COUNTM: c->count = 1; c->count_matches = 1; break;
	case O_BLOCK: {
		long long v = parse_num("block size", arg);
		if (v < 1 || v > (1LL << 30))
			die("invalid block size: '%s' (1 to 1073741824)", arg);
		c->block_size = (size_t)v;
		break;
	}
	case O_CHUNK: {
		long long v = parse_num("chunk size", arg);
		if (v < 1 || v > (1LL << 30))
			die("invalid chunk size: '%s'", arg);
		c->chunk = (size_t)v;
		break;
	}
	case O_JSON: c->json = 1; break;
	case O_STATS: c->stats = 1; break;
	case O_HELP: help(); break;
	default:
		(void)nm;
		usage_exit();
	}
}

/*
 * -NUM: a run of digits is one context length.  grep gathers them in a
 * buffer of 21 digits, leading zeros dropped, and rejects a longer run.
 * Returns the byte after the run.
 */
static const char *apply_digits(struct state *s, const char *p)
{
	char num[24];
	size_t len = 0;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (len == 1 && num[0] == '0')
			len = 0;
		if (len == 21) {
			num[len] = '\0';
			die("invalid context length argument: '%s...'", num);
		}
		num[len++] = *p;
	}
	num[len] = '\0';
	apply(s, 'C', num, "C");
	return p;
}

/* Returns the operands (non-options) in order, in argv itself. */
static int parse_args(struct state *s, int argc, char **argv)
{
	int nops = 0, only_ops = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_ops || a[0] != '-' || !a[1]) {
			argv[++nops] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_ops = 1;
			continue;
		}
		if (a[1] == '-') {
			char *name = a + 2, *eq = strchr(name, '=');
			size_t nl = eq ? (size_t)(eq - name) : strlen(name);
			const struct lopt *hit = NULL;
			int ambiguous = 0;
			for (size_t k = 0; k < sizeof(lopts) / sizeof(*lopts);
			     k++) {
				if (strncmp(lopts[k].name, name, nl))
					continue;
				if (strlen(lopts[k].name) == nl) {
					hit = &lopts[k];
					ambiguous = 0;
					break;
				}
				if (hit && hit->val != lopts[k].val)
					ambiguous = 1;
				hit = &lopts[k];
			}
			if (!hit || ambiguous) {
				fprintf(stderr, TSG_PROG ": %s option '%s'\n",
					ambiguous ? "ambiguous" : "unrecognized",
					a);
				usage_exit();
			}
			const char *arg = eq ? eq + 1 : NULL;
			if (hit->arg == 0 && eq) {
				fprintf(stderr, TSG_PROG ": option '--%s' "
					"doesn't allow an argument\n", hit->name);
				usage_exit();
			}
			if (hit->arg == 1 && !arg) {
				if (i + 1 >= argc) {
					fprintf(stderr, TSG_PROG ": option '--%s' "
						"requires an argument\n",
						hit->name);
					usage_exit();
				}
				arg = argv[++i];
			}
			apply(s, hit->val, arg, hit->name);
			continue;
		}
		/* a cluster of short options; -NUM is -C NUM */
		for (char *p = a + 1; *p; p++) {
			if (*p >= '0' && *p <= '9') {
				p = (char *)apply_digits(s, p) - 1;
				continue;
			}
			if (strchr(short_with_arg, *p)) {
				const char *arg = p[1] ? p + 1 : NULL;
				if (!arg) {
					if (i + 1 >= argc) {
						fprintf(stderr, TSG_PROG
							": option requires an "
							"argument -- '%c'\n", *p);
						usage_exit();
					}
					arg = argv[++i];
				}
				apply(s, *p, arg, NULL);
				break;
			}
			if (!strchr(short_flags, *p)) {
				fprintf(stderr, TSG_PROG ": invalid option -- "
					"'%c'\n", *p);
				usage_exit();
			}
			apply(s, *p, NULL, NULL);
		}
	}
	return nops;
}

/* textsearch_prepare() with the default algorithm: "auto" when a
 * teammate's auto-selecting algorithm is registered, else "bm". */
static struct ts_config *prepare(const char *algo, const void *p,
				 unsigned int len, int flags)
{
	if (algo)
		return textsearch_prepare(algo, p, len, GFP_KERNEL,
					  flags | TS_AUTOLOAD);
	struct ts_config *conf = textsearch_prepare("auto", p, len,
						    GFP_KERNEL, flags);
	if (IS_ERR(conf) && PTR_ERR(conf) == -ENOENT)
		conf = textsearch_prepare("bm", p, len, GFP_KERNEL, flags);
	return conf;
}

static struct ts_config *fsm_literal(const void *p, unsigned int len,
				      int flags)
{
	struct ts_fsm_token *tok = calloc((size_t)len + 1, sizeof(*tok));
	if (!tok)
		die("out of memory");
	tok[0].type = TS_FSM_WILDCARD;
	tok[0].recur = TS_FSM_HEAD_IGNORE;
	for (unsigned int i = 0; i < len; i++) {
		tok[i + 1].type = TS_FSM_SPECIFIC;
		tok[i + 1].recur = TS_FSM_SINGLE;
		tok[i + 1].value = ((const u8 *)p)[i];
	}
	struct ts_config *conf = textsearch_prepare(
		"fsm", tok, (len + 1) * (unsigned int)sizeof(*tok), GFP_KERNEL,
		flags);
	free(tok);
	return conf;
}

/* tsgrep's own executable's folder + "/../plugins" goes last in
 * TEXTSEARCH_PLUGIN_PATH, so a tsgrep run from its build folder finds the
 * plugins built next to it (installed, the library's plugin directory
 * applies). */
static void plugin_path_fallback(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	const char *old = getenv("TEXTSEARCH_PLUGIN_PATH");
	size_t len = (old ? strlen(old) : 0) + strlen(exe) + 16;
	char *v = malloc(len);
	if (!v)
		return;
	snprintf(v, len, "%s%s%s/../plugins", old ? old : "",
		 old && *old ? ":" : "", exe);
	setenv("TEXTSEARCH_PLUGIN_PATH", v, 1);
	free(v);
}

static void compile(struct state *s)
{
	struct tsg_cfg *c = s->c;
	c->pats = calloc(s->pats.n ? s->pats.n : 1, sizeof(*c->pats));
	if (!c->pats)
		die("out of memory");
	int flags = s->ignore_case ? TS_IGNORECASE : 0;
	int fsm_seen = 0;
	for (size_t i = 0; i < s->pats.n; i++) {
		struct rawpat *r = &s->pats.v[i];
		char err[256] = "";
		struct ts_config *conf;
		if (s->fsm) {
			struct ts_fsm_token *tok = NULL;
			unsigned int nt = 0;
			if (pattern_parse_fsm(r->p, &tok, &nt, err, sizeof(err)))
				die("bad fsm pattern '%s': %s", r->p, err);
			conf = textsearch_prepare(s->algo ? s->algo : "fsm",
						  tok,
						  nt * (unsigned int)sizeof(*tok),
						  GFP_KERNEL, flags | TS_AUTOLOAD);
			/* only a wildcard head searches from anywhere; '^'
			 * and {atom} match from the start of a line */
			c->pats[c->npats].anchored =
				nt && !(tok[0].recur == TS_FSM_HEAD_IGNORE &&
					tok[0].type == TS_FSM_WILDCARD);
			free(tok);
		} else {
			const void *p = r->p;
			unsigned int len = (unsigned int)r->len;
			u8 *hex = NULL;
			if (s->hex) {
				if (pattern_parse_hex(r->p, &hex, &len, err,
						     sizeof(err)))
					die("bad hex pattern '%s': %s", r->p,
					    err);
				p = hex;
			}
			if (!len) {
				/* grep -F '' selects every line; textsearch
				 * cannot prepare an empty pattern, so tsgrep
				 * handles it itself */
				c->match_all = 1;
				free(hex);
				continue;
			}
			if (r->len > UINT_MAX / 2)
				die("pattern too long");
			if (s->algo && !strcmp(s->algo, "fsm")) {
				/* --algo fsm with a literal: spell it as fsm
				 * tokens, skipping anything before it */
				conf = fsm_literal(p, len, flags);
				c->pats[c->npats].anchored = 0;
			} else {
				conf = prepare(s->algo, p, len, flags);
			}
			free(hex);
		}
		if (IS_ERR(conf)) {
			int e = (int)PTR_ERR(conf);
			const char *why = textsearch_last_error();
			const char *algo = s->algo ? s->algo
					   : s->fsm ? "fsm" : "bm";
			if (e == -ENOENT)
				die("unknown algorithm '%s'%s%s", algo,
				    *why ? ": " : "", why);
			die("cannot prepare pattern '%s' with algorithm '%s': "
			    "%s%s%s", r->p, algo, textsearch_strerror(e),
			    *why ? ": " : "", why);
		}
		c->pats[c->npats++].conf = conf;
		if (s->fsm || (s->algo && !strcmp(s->algo, "fsm")))
			fsm_seen = 1;
		else if (textsearch_get_pattern_len(conf) > c->max_pat_len)
			c->max_pat_len = textsearch_get_pattern_len(conf);
	}
	/* fsm matches have no length bound: long lines are then kept whole */
	if (fsm_seen)
		c->max_pat_len = 0;
	else if (!c->max_pat_len)
		c->max_pat_len = 1;
}

static int is_utf8_locale(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

int main(int argc, char **argv)
{
	struct tsg_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.with_fname = -1;
	cfg.before = cfg.after = -1;
	cfg.max_count = -1;
	cfg.chunk = 96 * 1024;
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	cfg.jobs = nc > 0 ? (int)nc : 1;
	struct state s;
	memset(&s, 0, sizeof(s));
	s.c = &cfg;
	setlocale(LC_ALL, "");
	plugin_path_fallback();

	s.context = -1;
	int nops = parse_args(&s, argc, argv);
	if (s.context >= 0) {
		if (cfg.before < 0)
			cfg.before = s.context;
		if (cfg.after < 0)
			cfg.after = s.context;
	}
	char **ops = argv + 1;
	if (!s.have_e) {
		if (nops < 1)
			usage_exit();
		addpats_lines(&s.pats, ops[0], strlen(ops[0]));
		ops++;
		nops--;
	}
	if (s.hex && s.fsm)
		die("--hex and --fsm cannot be used together");
	if ((s.fsm || (s.algo && !strcmp(s.algo, "fsm"))) && s.ignore_case)
		die("-i cannot be used with --fsm (the fsm algorithm does not "
		    "support TS_IGNORECASE)");
	compile(&s);
	if (cfg.max_count == 0 && cfg.list != TSG_LIST_NONMATCHING)
		return 1; /* grep -m 0 reads and prints nothing (but -L) */

	struct stat st;
	int out_reg = !fstat(1, &st) && S_ISREG(st.st_mode);
	int in_stream = !fstat(0, &st) && (S_ISFIFO(st.st_mode) ||
					   S_ISCHR(st.st_mode));
	cfg.line_flush = s.line_buffered || !out_reg || in_stream;
	if (s.color_when == 2) {
		const char *t = getenv("TERM");
		cfg.color = isatty(1) && t && strcmp(t, "dumb");
	} else {
		cfg.color = s.color_when;
	}
	if (cfg.color)
		colors_init(&cfg.colors, getenv("GREP_COLORS"));
	cfg.utf8 = is_utf8_locale();
	if (cfg.list != TSG_LIST_NONE || cfg.quiet) {
		/* as grep: these only need to know whether a line matches */
		cfg.count = 0;
		cfg.before = cfg.after = -1;
	}
	if (cfg.count)
		cfg.before = cfg.after = -1;

	if (cfg.with_fname == -1 && nops > 1)
		cfg.with_fname = 1;
	struct tsg_filelist files;
	memset(&files, 0, sizeof(files));
	if (!nops) {
		if (cfg.recursive)
			walk_operand(&cfg, &files, ".", 1);
		else
			walk_operand(&cfg, &files, "-", 0);
	}
	for (int i = 0; i < nops; i++)
		walk_operand(&cfg, &files, ops[i], 0);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct tsg_result res;
	memset(&res, 0, sizeof(res));
	run_jobs(&cfg, &files, &res);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	if (cfg.stats) {
		double secs = (double)(t1.tv_sec - t0.tv_sec) +
			      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		fprintf(stderr,
			"%llu bytes searched\n%llu files searched\n"
			"%llu selected lines\n%llu matches\n"
			"%.6f seconds\n%.1f MB/s\n",
			(unsigned long long)res.bytes,
			(unsigned long long)res.files,
			(unsigned long long)res.lines,
			(unsigned long long)res.matches, secs,
			secs > 0 ? (double)res.bytes / secs / 1e6 : 0.0);
	}
	for (size_t i = 0; i < cfg.npats; i++)
		textsearch_destroy(cfg.pats[i].conf);
	free(cfg.pats);
	for (size_t i = 0; i < s.pats.n; i++)
		free(s.pats.v[i].p);
	free(s.pats.v);
	for (size_t i = 0; i < files.n; i++) {
		free(files.v[i].path);
		free(files.v[i].display);
	}
	free(files.v);
	if (res.any_error && !(cfg.quiet && res.any_selected))
		return 2;
	return res.any_selected ? 0 : 1;
}
