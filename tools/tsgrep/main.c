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
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

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
	      "  -w, --word-regexp         match only whole words\n"
	      "  -x, --line-regexp         match only whole lines\n"
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

static void addpat(struct patlist *list, const char *text, size_t len)
{
	struct rawpat *v;
	size_t cap;
	char *copy;

	if (list->n == list->cap) {
		cap = list->cap ? list->cap * 2 : 8;
		v = realloc(list->v, cap * sizeof(*v));
		if (!v)
			die("out of memory");
		list->v = v;
		list->cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		die("out of memory");
	memcpy(copy, text, len);
	copy[len] = '\0';
	list->v[list->n].p = copy;
	list->v[list->n].len = len;
	list->n++;
}

/* A -e argument or the PATTERN operand: one pattern per line. */
static void addpats_lines(struct patlist *list, const char *text, size_t len)
{
	const char *nl;

	while ((nl = memchr(text, '\n', len))) {
		addpat(list, text, (size_t)(nl - text));
		len -= (size_t)(nl - text) + 1;
		text = nl + 1;
	}
	addpat(list, text, len);
}

/* tsgrep-mpi's ranks but rank 0 have no standard input: it gives them
 * rank 0's patterns (tools/tsgrep-mpi/hooks.h). */
#ifndef tsg_share_stdin_patterns
#define tsg_share_stdin_patterns(buf, len) ((void)0)
#endif

/* -f FILE: one pattern per line; a final newline adds no empty pattern,
 * an empty line is the empty pattern. */
static void addpats_file(struct patlist *list, const char *name)
{
	int fd = strcmp(name, "-") ? open(name, O_RDONLY) : 0;
	size_t len = 0, cap = 0;
	char *buf = NULL, *grown;
	ssize_t got;

	if (fd < 0)
		die("%s: %s", name, strerror(errno));
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			grown = realloc(buf, cap);
			if (!grown)
				die("out of memory");
			buf = grown;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			die("%s: %s", name, strerror(errno));
		if (!got)
			break;
		len += (size_t)got;
	}
	if (fd)
		close(fd);
	else
		tsg_share_stdin_patterns(&buf, &len);
	if (len) {
		if (buf[len - 1] == '\n')
			len--;
		addpats_lines(list, buf, len);
	}
	free(buf);
}

/* A number for tsgrep's own options: 0 or more, nothing after it. */
static long long parse_num(const char *opt, const char *arg)
{
	long long value;
	char *end;

	errno = 0;
	value = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || value < 0)
		die("invalid %s argument: '%s'", opt, arg);
	return value;
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

/* Long options without a short form. */
enum {
	O_BINFILES = 256,
	O_COLOR,
	O_LINEBUF,
	O_ALGO,
	O_HEX,
	O_FSM,
	O_COUNTM,
	O_BLOCK,
	O_JSON,
	O_STATS,
	O_HELP,
	O_CHUNK,
};

struct lopt {
	const char *name;
	int arg; /* 0 none, 1 required, 2 optional */
	int val;
};

static const struct lopt lopts[] = {
	{ "regexp", 1, 'e' },
	{ "file", 1, 'f' },
	{ "ignore-case", 0, 'i' },
	{ "invert-match", 0, 'v' },
	{ "count", 0, 'c' },
	{ "only-matching", 0, 'o' },
	{ "word-regexp", 0, 'w' },
	{ "line-regexp", 0, 'x' },
	{ "byte-offset", 0, 'b' },
	{ "line-number", 0, 'n' },
	{ "with-filename", 0, 'H' },
	{ "no-filename", 0, 'h' },
	{ "files-with-matches", 0, 'l' },
	{ "files-without-match", 0, 'L' },
	{ "quiet", 0, 'q' },
	{ "silent", 0, 'q' },
	{ "no-messages", 0, 's' },
	{ "recursive", 0, 'r' },
	{ "dereference-recursive", 0, 'R' },
	{ "text", 0, 'a' },
	{ "binary-files", 1, O_BINFILES },
	{ "after-context", 1, 'A' },
	{ "before-context", 1, 'B' },
	{ "context", 1, 'C' },
	{ "max-count", 1, 'm' },
	{ "null", 0, 'Z' },
	{ "color", 2, O_COLOR },
	{ "colour", 2, O_COLOR },
	{ "line-buffered", 0, O_LINEBUF },
	{ "fixed-strings", 0, 'F' },
	{ "algo", 1, O_ALGO },
	{ "hex", 0, O_HEX },
	{ "fsm", 0, O_FSM },
	{ "count-matches", 0, O_COUNTM },
	{ "block-size", 1, O_BLOCK },
	{ "jobs", 1, 'j' },
	{ "json", 0, O_JSON },
	{ "stats", 0, O_STATS },
	{ "help", 0, O_HELP },
	{ "version", 0, 'V' },
	{ "chunk-size", 1, O_CHUNK },
};

static const char short_with_arg[] = "efABCmj";
static const char short_flags[] = "ivcobnHhlLqsrRaIZFVyUwx";

struct options {
	struct tsg_cfg *cfg;
	struct patlist pats;
	int have_e;
	const char *algo;
	int hex, fsm, ignore_case, color_when; /* 0 never 1 always 2 auto */
	int line_buffered;
	int with_h, with_H;
	long long context; /* -C or -NUM, -1 if not given */
};

/* A size given to a tsgrep option of its own: 1 to 1 GiB. */
static size_t size_arg(const char *what, const char *arg)
{
	long long value = parse_num(what, arg);

	if (value < 1 || value > (1LL << 30))
		die("invalid %s: '%s' (1 to 1073741824)", what, arg);
	return (size_t)value;
}

static void apply_color(struct options *opts, const char *arg)
{
	if (!arg || !strcmp(arg, "always") || !strcmp(arg, "yes") ||
	    !strcmp(arg, "force"))
		opts->color_when = arg ? 1 : 2;
	else if (!strcmp(arg, "never") || !strcmp(arg, "no") ||
		 !strcmp(arg, "none"))
		opts->color_when = 0;
	else if (!strcmp(arg, "auto") || !strcmp(arg, "tty") ||
		 !strcmp(arg, "if-tty"))
		opts->color_when = 2;
	else
		die("invalid argument '%s' for '--color'", arg);
}

static void apply_binary_files(struct tsg_cfg *cfg, const char *arg)
{
	if (!strcmp(arg, "binary"))
		cfg->binary = TSG_BIN_BINARY;
	else if (!strcmp(arg, "text"))
		cfg->binary = TSG_BIN_TEXT;
	else if (!strcmp(arg, "without-match"))
		cfg->binary = TSG_BIN_WITHOUT_MATCH;
	else
		die("unknown binary-files type");
}

static void apply(struct options *opts, int opt, const char *arg)
{
	struct tsg_cfg *cfg = opts->cfg;

	switch (opt) {
	case 'e':
		addpats_lines(&opts->pats, arg, strlen(arg));
		opts->have_e = 1;
		break;
	case 'f':
		addpats_file(&opts->pats, arg);
		opts->have_e = 1;
		break;
	case 'i':
	case 'y':
		opts->ignore_case = 1;
		break;
	case 'v':
		cfg->invert = 1;
		break;
	case 'c':
		cfg->count = 1;
		break;
	case 'o':
		cfg->only = 1;
		break;
	case 'w':
		cfg->word = 1;
		break;
	case 'x':
		cfg->line_x = 1;
		break;
	case 'b':
		cfg->byte_off = 1;
		break;
	case 'n':
		cfg->line_num = 1;
		break;
	case 'H':
		cfg->with_fname = 1;
		break;
	case 'h':
		cfg->with_fname = 0;
		break;
	case 'l':
		cfg->list = TSG_LIST_MATCHING;
		break;
	case 'L':
		cfg->list = TSG_LIST_NONMATCHING;
		break;
	case 'q':
		cfg->quiet = 1;
		break;
	case 's':
		cfg->no_messages = 1;
		break;
	case 'r':
		cfg->recursive = 1;
		break;
	case 'R':
		cfg->recursive = 1;
		cfg->deref = 1;
		break;
	case 'a':
		cfg->binary = TSG_BIN_TEXT;
		break;
	case 'I':
		cfg->binary = TSG_BIN_WITHOUT_MATCH;
		break;
	case 'Z':
		cfg->null_after_name = 1;
		break;
	case 'F':
	case 'U':
		break;
	case 'V':
		printf(TSG_PROG " (textsearch) %s\n",
		       textsearch_version_string());
		exit(0);
	case 'A':
		cfg->after = context_arg(arg);
		break;
	case 'B':
		cfg->before = context_arg(arg);
		break;
	case 'C':
		/* as grep: -A and -B win over -C whatever the order */
		opts->context = context_arg(arg);
		break;
	case 'm':
		cfg->max_count = max_count_arg(arg);
		break;
	case 'j':
		cfg->jobs = (int)parse_num("jobs", arg);
		if (cfg->jobs < 1 || cfg->jobs > 1024)
			die("invalid jobs argument: '%s'", arg);
		break;
	case O_BINFILES:
		apply_binary_files(cfg, arg);
		break;
	case O_COLOR:
		apply_color(opts, arg);
		break;
	case O_LINEBUF:
		opts->line_buffered = 1;
		break;
	case O_ALGO:
		opts->algo = arg;
		break;
	case O_HEX:
		opts->hex = 1;
		break;
	case O_FSM:
		opts->fsm = 1;
		break;
	case O_COUNTM:
		cfg->count = 1;
		cfg->count_matches = 1;
		break;
	case O_BLOCK:
		cfg->block_size = size_arg("block size", arg);
		break;
	case O_CHUNK:
		cfg->chunk = size_arg("chunk size", arg);
		break;
	case O_JSON:
		cfg->json = 1;
		break;
	case O_STATS:
		cfg->stats = 1;
		break;
	case O_HELP:
		help();
		break;
	default:
		usage_exit();
	}
}

/*
 * -NUM: a run of digits is one context length.  grep gathers them in a
 * buffer of 21 digits, leading zeros dropped, and rejects a longer run.
 * Returns the byte after the run.
 */
static const char *apply_digits(struct options *opts, const char *p)
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
	apply(opts, 'C', num);
	return p;
}

/* A missing option argument is a usage error. */
static const char *next_arg(int *i, int argc, char **argv)
{
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* --NAME[=ARG], NAME any unique prefix of a long option. */
static void parse_long_option(struct options *opts, int *i, int argc,
			      char **argv)
{
	char *option = argv[*i], *name = option + 2;
	char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct lopt *hit = NULL;
	const char *arg = eq ? eq + 1 : NULL;
	int ambiguous = 0;
	size_t k;

	for (k = 0; k < sizeof(lopts) / sizeof(*lopts); k++) {
		if (strncmp(lopts[k].name, name, len))
			continue;
		if (strlen(lopts[k].name) == len) {
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
			ambiguous ? "ambiguous" : "unrecognized", option);
		usage_exit();
	}
	if (hit->arg == 0 && eq) {
		fprintf(stderr,
			TSG_PROG ": option '--%s' doesn't allow an "
				 "argument\n",
			hit->name);
		usage_exit();
	}
	if (hit->arg == 1 && !arg) {
		arg = next_arg(i, argc, argv);
		if (!arg) {
			fprintf(stderr,
				TSG_PROG ": option '--%s' requires an "
					 "argument\n",
				hit->name);
			usage_exit();
		}
	}
	apply(opts, hit->val, arg);
}

/* A cluster of short options; -NUM is -C NUM. */
static void parse_short_options(struct options *opts, int *i, int argc,
				char **argv)
{
	const char *p, *arg;

	for (p = argv[*i] + 1; *p; p++) {
		if (*p >= '0' && *p <= '9') {
			p = apply_digits(opts, p) - 1;
			continue;
		}
		if (strchr(short_with_arg, *p)) {
			arg = p[1] ? p + 1 : next_arg(i, argc, argv);
			if (!arg) {
				fprintf(stderr,
					TSG_PROG ": option requires an "
						 "argument -- '%c'\n",
					*p);
				usage_exit();
			}
			apply(opts, *p, arg);
			return;
		}
		if (!strchr(short_flags, *p)) {
			fprintf(stderr, TSG_PROG ": invalid option -- '%c'\n",
				*p);
			usage_exit();
		}
		apply(opts, *p, NULL);
	}
}

/* Returns the operands (non-options) in order, in argv itself. */
static int parse_args(struct options *opts, int argc, char **argv)
{
	int nops = 0, only_ops = 0, i;
	char *arg;

	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (only_ops || arg[0] != '-' || !arg[1])
			argv[++nops] = arg;
		else if (!strcmp(arg, "--"))
			only_ops = 1;
		else if (arg[1] == '-')
			parse_long_option(opts, &i, argc, argv);
		else
			parse_short_options(opts, &i, argc, argv);
	}
	return nops;
}

/* textsearch_prepare() with the default algorithm: "auto" when a
 * teammate's auto-selecting algorithm is registered, else "bm". */
static struct ts_config *prepare(const char *algo, const void *pattern,
				 unsigned int len, int flags)
{
	struct ts_config *conf;

	if (algo)
		return textsearch_prepare(algo, pattern, len, GFP_KERNEL,
					  flags | TS_AUTOLOAD);
	conf = textsearch_prepare("auto", pattern, len, GFP_KERNEL, flags);
	if (IS_ERR(conf) && PTR_ERR(conf) == -ENOENT)
		conf = textsearch_prepare("bm", pattern, len, GFP_KERNEL,
					  flags);
	return conf;
}

static struct ts_config *fsm_literal(const void *pattern, unsigned int len,
				     int flags)
{
	struct ts_fsm_token *tok = calloc((size_t)len + 1, sizeof(*tok));
	struct ts_config *conf;
	unsigned int i;

	if (!tok)
		die("out of memory");
	tok[0].type = TS_FSM_WILDCARD;
	tok[0].recur = TS_FSM_HEAD_IGNORE;
	for (i = 0; i < len; i++) {
		tok[i + 1].type = TS_FSM_SPECIFIC;
		tok[i + 1].recur = TS_FSM_SINGLE;
		tok[i + 1].value = ((const u8 *)pattern)[i];
	}
	conf = textsearch_prepare("fsm", tok,
				  (len + 1) * (unsigned int)sizeof(*tok),
				  GFP_KERNEL, flags);
	free(tok);
	return conf;
}

/* tsgrep's own executable's folder + "/../plugins" goes last in
 * TEXTSEARCH_PLUGIN_PATH, so a tsgrep run from its build folder finds the
 * plugins built next to it (installed, the library's plugin directory
 * applies). */
static void plugin_path_fallback(void)
{
	char exe[4096], *slash, *path;
	const char *old;
	ssize_t n;
	size_t len;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	old = getenv("TEXTSEARCH_PLUGIN_PATH");
	len = (old ? strlen(old) : 0) + strlen(exe) + 16;
	path = malloc(len);
	if (!path)
		return;
	snprintf(path, len, "%s%s%s/../plugins", old ? old : "",
		 old && *old ? ":" : "", exe);
	setenv("TEXTSEARCH_PLUGIN_PATH", path, 1);
	free(path);
}

static bool algo_is_fsm(const struct options *opts)
{
	return opts->algo && !strcmp(opts->algo, "fsm");
}

/* An --fsm pattern; sets whether it is anchored to line starts. */
static struct ts_config *compile_fsm(struct options *opts,
				     const struct rawpat *raw, int flags,
				     int *anchored)
{
	struct ts_fsm_token *tok = NULL;
	struct ts_config *conf;
	unsigned int ntok = 0;
	char err[256] = "";

	if (pattern_parse_fsm(raw->p, &tok, &ntok, err, sizeof(err)))
		die("bad fsm pattern '%s': %s", raw->p, err);
	conf = textsearch_prepare(opts->algo ? opts->algo : "fsm", tok,
				  ntok * (unsigned int)sizeof(*tok), GFP_KERNEL,
				  flags | TS_AUTOLOAD);
	/* only a wildcard head searches from anywhere; '^' and {atom}
	 * match from the start of a line */
	*anchored = ntok && !(tok[0].recur == TS_FSM_HEAD_IGNORE &&
			      tok[0].type == TS_FSM_WILDCARD);
	free(tok);
	return conf;
}

/* The bytes of a literal (or --hex) pattern; *@len 0 for the empty one.
 * *@hex is what to free (NULL if the text itself is the pattern). */
static const void *literal_bytes(struct options *opts, const struct rawpat *raw,
				 unsigned int *len, u8 **hex)
{
	const void *pattern;
	char err[256] = "";

	*hex = NULL;
	if (raw->len > UINT_MAX / 2)
		die("pattern too long");
	*len = (unsigned int)raw->len;
	if (opts->hex && pattern_parse_hex(raw->p, hex, len, err, sizeof(err)))
		die("bad hex pattern '%s': %s", raw->p, err);
	if (opts->cfg->fold) {
		/* -i in a single-byte locale: the pattern folded as the
		 * text will be (search.c) */
		if (!*hex) {
			*hex = malloc(*len ? *len : 1);
			if (!*hex)
				die("out of memory");
			memcpy(*hex, raw->p, *len);
		}
		for (unsigned int i = 0; i < *len; i++)
			(*hex)[i] = opts->cfg->fold[(*hex)[i]];
	}
	pattern = *hex ? (const void *)*hex : raw->p;
	if (memchr(pattern, '\n', *len) || memchr(pattern, '\0', *len))
		opts->cfg->eol_in_pats = 1;
	return pattern;
}

/* A literal (or --hex) pattern; NULL for the empty pattern. */
static struct ts_config *compile_literal(struct options *opts,
					 const struct rawpat *raw, int flags)
{
	struct ts_config *conf;
	const void *pattern;
	unsigned int len;
	u8 *hex;

	pattern = literal_bytes(opts, raw, &len, &hex);
	if (!len) {
		free(hex);
		return NULL;
	}
	/* --algo fsm with a literal: spell it as fsm tokens, skipping
	 * anything before it */
	if (algo_is_fsm(opts))
		conf = fsm_literal(pattern, len, flags);
	else
		conf = prepare(opts->algo, pattern, len, flags);
	free(hex);
	return conf;
}

static void note_empty(struct options *opts)
{
	/* grep -F '' selects every line; textsearch cannot prepare an empty
	 * pattern, so tsgrep handles it itself (with -w or -x, where the
	 * empty match is, matters: search.c) */
	if (opts->cfg->word || opts->cfg->line_x)
		opts->cfg->empty_pat = 1;
	else
		opts->cfg->match_all = 1;
}

static void set_ascii(struct tsg_pattern *pat, const void *const *pats,
		      const unsigned int *lens, unsigned int n);

/*
 * Every non-empty literal pattern in one set config (textsearch_prepare_set):
 * one pass over the text whatever their number.  False when there are
 * fewer than two, or when --algo names an algorithm without sets (which
 * then searches the patterns one by one).
 */
static bool compile_set(struct options *opts, int flags)
{
	struct tsg_cfg *cfg = opts->cfg;
	size_t n = opts->pats.n, i, count = 0;
	const void **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	unsigned int *lens = calloc(n ? n : 1, sizeof(*lens));
	u8 **hexes = calloc(n ? n : 1, sizeof(*hexes));
	struct ts_config *conf = NULL;
	const char *why;
	int err, empty = 0;

	if (!ptrs || !lens || !hexes)
		die("out of memory");
	if (n > UINT_MAX)
		die("too many patterns");
	for (i = 0; i < n; i++) {
		ptrs[count] = literal_bytes(opts, &opts->pats.v[i],
					    &lens[count], &hexes[count]);
		if (!lens[count]) {
			free(hexes[count]);
			empty = 1;
			continue;
		}
		if (lens[count] > cfg->max_pat_len)
			cfg->max_pat_len = lens[count];
		count++;
	}
	if (count >= 2 && !algo_is_fsm(opts)) {
		conf = textsearch_prepare_set(
			opts->algo ? opts->algo : "auto", ptrs, lens,
			(unsigned int)count, GFP_KERNEL,
			flags | (opts->algo ? TS_AUTOLOAD : 0));
		if (IS_ERR(conf)) {
			err = (int)PTR_ERR(conf);
			why = textsearch_last_error();
			if (err == -ENOENT)
				die("unknown algorithm '%s'%s%s", opts->algo,
				    *why ? ": " : "", why);
			/* a single-pattern algorithm: no set */
			if (err != -EINVAL || !opts->algo)
				die("cannot prepare the %zu patterns as a set: "
				    "%s%s%s",
				    count, textsearch_strerror(err),
				    *why ? ": " : "", why);
			conf = NULL;
		}
	}
	if (conf && (flags & TS_OVERLAP) && !(flags & TS_UTF8))
		set_ascii(&cfg->pats[0], ptrs, lens, (unsigned int)count);
	for (i = 0; i < count; i++)
		free(hexes[i]);
	free(hexes);
	free(ptrs);
	free(lens);
	if (!conf) {
		cfg->max_pat_len = 0;
		return false;
	}
	if (conf->ts_longest > cfg->max_pat_len)
		cfg->max_pat_len = conf->ts_longest;
	if (empty)
		note_empty(opts);
	cfg->pats[0].conf = conf;
	cfg->npats = 1;
	return true;
}

static int is_utf8_locale(void)
{
	const char *codeset = nl_langinfo(CODESET);

	return codeset &&
	       (!strcmp(codeset, "UTF-8") || !strcmp(codeset, "utf8"));
}

static int is_ascii_locale(void)
{
	const char *codeset = nl_langinfo(CODESET);

	return codeset &&
	       (!strcmp(codeset, "ANSI_X3.4-1968") ||
		!strcmp(codeset, "ASCII") || !strcmp(codeset, "US-ASCII"));
}

/*
 * A single-byte locale other than C/POSIX (MB_CUR_MAX is 1: ISO-8859-x,
 * KOI8-R, CP1251, ...), where grep takes each byte for a character:
 * - -i relates the bytes with the same toupper() (grep 3.8's kwset
 *   translates both sides by toupper(), its DFA sets every byte with the
 *   same toupper(): the same relation), so ISO-8859-9's i matches İ but
 *   not I, ς matches σ and Σ, and a letter whose other case is not in the
 *   charset (ÿ in ISO-8859-1) only itself;
 * - -w's word constituents are '_' and the bytes whose character
 *   iswalnum() accepts;
 * - a byte that is no character of the charset (ISO-8859-7's 0xAE) is an
 *   encoding error: its line is withheld and the file reported binary.
 * Lookup tables of 256 bytes, so the search costs no call into the C
 * library per byte.
 */
static void sbcs_init(struct tsg_cfg *cfg, bool icase)
{
	if (MB_CUR_MAX != 1 || is_ascii_locale())
		return;
	cfg->sbcs = 1;
	for (int b = 0; b < 256; b++) {
		wint_t wc = btowc(b);

		cfg->sb_fold[b] = (unsigned char)toupper(b);
		cfg->sb_word[b] = wc != WEOF && (wc == L'_' || iswalnum(wc));
		cfg->sb_bad[b] = wc == WEOF;
		cfg->sb_has_bad |= wc == WEOF;
	}
	cfg->sb_ascii_plain = 1;
	for (int b = 0; b < 0x80; b++)
		if (cfg->sb_fold[b] != (b >= 'a' && b <= 'z' ? b - 32 : b))
			cfg->sb_ascii_plain = 0;
	if (icase)
		cfg->fold = cfg->sb_fold;
}

/* Whether TS_IGNORECASE would fold a byte of the pattern that is not
 * ASCII (an ISO-8859-1 letter, or the image of one). */
static bool folds_latin1(const u8 *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] >= 0xC0 && p[i] != 0xD7 && p[i] != 0xF7 &&
		    p[i] != 0xDF && p[i] != 0xFF)
			return true;
	return false;
}

/*
 * -i as grep folds: in a UTF-8 locale, characters as the C library's
 * towupper() relates them (TS_UTF8 | TS_FOLD_LIBC: grep 3.8 uses glibc's
 * regex, not Unicode simple folding, which differs on U+0131, U+212A,
 * U+212B, U+2126, U+1E9E and U+03F4), matching only whole characters; in
 * the C locale
 * ASCII letters only, so a pattern with bytes that TS_IGNORECASE would
 * fold besides gets every candidate (TS_OVERLAP) and tsgrep keeps those
 * that only ASCII folding makes equal (set_ascii()); in a single-byte
 * locale none: the patterns and the text are folded by the locale's
 * toupper() (sbcs_init()); in other locales (multibyte but not UTF-8)
 * TS_IGNORECASE.
 */
static int icase_flags(const struct options *opts)
{
	if (!opts->ignore_case || opts->cfg->fold)
		return 0;
	if (is_utf8_locale())
		return TS_IGNORECASE | TS_UTF8 | TS_FOLD_LIBC;
	if (is_ascii_locale()) {
		for (size_t i = 0; i < opts->pats.n; i++) {
			unsigned int len;
			u8 *hex = NULL;
			const u8 *p = literal_bytes((struct options *)opts,
						    &opts->pats.v[i], &len,
						    &hex);
			bool latin = folds_latin1(p, len);

			free(hex);
			if (latin)
				return TS_IGNORECASE | TS_OVERLAP;
		}
	}
	return TS_IGNORECASE;
}

/* Keep the @n patterns of @pat for the ASCII-only check (icase_flags()). */
static void set_ascii(struct tsg_pattern *pat, const void *const *pats,
		      const unsigned int *lens, unsigned int n)
{
	pat->ascii_pats = calloc(n, sizeof(*pat->ascii_pats));
	pat->ascii_lens = calloc(n, sizeof(*pat->ascii_lens));
	if (!pat->ascii_pats || !pat->ascii_lens)
		die("out of memory");
	for (unsigned int i = 0; i < n; i++) {
		pat->ascii_pats[i] = malloc(lens[i]);
		if (!pat->ascii_pats[i])
			die("out of memory");
		memcpy(pat->ascii_pats[i], pats[i], lens[i]);
		pat->ascii_lens[i] = lens[i];
	}
	pat->ascii_n = n;
}

static void compile(struct options *opts)
{
	struct tsg_cfg *cfg = opts->cfg;
	int flags = icase_flags(opts);
	int fsm_seen = 0, anchored, err;
	struct ts_config *conf;
	struct rawpat *raw;
	const char *why, *algo;
	size_t i;

	cfg->pats = calloc(opts->pats.n ? opts->pats.n : 1, sizeof(*cfg->pats));
	if (!cfg->pats)
		die("out of memory");
	if (!opts->fsm && compile_set(opts, flags))
		return;
	for (i = 0; i < opts->pats.n; i++) {
		raw = &opts->pats.v[i];
		anchored = 0;
		if (opts->fsm) {
			/* an fsm match may run over anything */
			cfg->eol_in_pats = 1;
			conf = compile_fsm(opts, raw, flags, &anchored);
		} else {
			conf = compile_literal(opts, raw, flags);
			if (!conf) {
				note_empty(opts);
				continue;
			}
		}
		if (IS_ERR(conf)) {
			err = (int)PTR_ERR(conf);
			why = textsearch_last_error();
			algo = opts->algo ? opts->algo :
			       opts->fsm  ? "fsm" :
					    "bm";
			if (err == -ENOENT)
				die("unknown algorithm '%s'%s%s", algo,
				    *why ? ": " : "", why);
			die("cannot prepare pattern '%s' with algorithm '%s': "
			    "%s%s%s",
			    raw->p, algo, textsearch_strerror(err),
			    *why ? ": " : "", why);
		}
		cfg->pats[cfg->npats].anchored = anchored;
		if ((flags & TS_OVERLAP) && !(flags & TS_UTF8)) {
			const void *p = textsearch_get_pattern(conf);
			unsigned int plen = textsearch_get_pattern_len(conf);

			set_ascii(&cfg->pats[cfg->npats], &p, &plen, 1);
		}
		cfg->pats[cfg->npats++].conf = conf;
		if (opts->fsm || algo_is_fsm(opts))
			fsm_seen = 1;
		else if (conf->ts_longest > cfg->max_pat_len)
			/* with TS_UTF8 a match may be longer than its
			 * pattern: the library knows how long */
			cfg->max_pat_len = conf->ts_longest;
	}
	/* fsm matches have no length bound: long lines are then kept whole */
	if (fsm_seen)
		cfg->max_pat_len = 0;
	else if (!cfg->max_pat_len)
		cfg->max_pat_len = 1;
}

/* grep sees at a glance that no line can be selected (no pattern, or -v
 * with only empty ones, without -w -x), and exits 1 before reading
 * anything, -c and missing files included. */
static bool selects_nothing(const struct options *opts)
{
	const struct tsg_cfg *cfg = opts->cfg;

	if (!opts->pats.n)
		return !cfg->invert;
	return !cfg->npats && cfg->match_all && cfg->invert;
}

/* What the options say together, once all are read. */
static void settle_output(struct options *opts)
{
	struct tsg_cfg *cfg = opts->cfg;
	const char *term;

	/* as grep's stdio: lines go out one by one to a terminal, in blocks
	 * elsewhere (and before waiting for input: search.c) */
	cfg->line_flush = opts->line_buffered || isatty(1);
	if (opts->color_when == 2) {
		term = getenv("TERM");
		cfg->color = isatty(1) && term && strcmp(term, "dumb");
	} else {
		cfg->color = opts->color_when;
	}
	if (cfg->color)
		colors_init(&cfg->colors, getenv("GREP_COLORS"));
	cfg->utf8 = is_utf8_locale();
	if (cfg->list != TSG_LIST_NONE || cfg->quiet) {
		/* as grep: these only need to know whether a line matches */
		cfg->count = 0;
		cfg->before = -1;
		cfg->after = -1;
	}
	if (cfg->count) {
		cfg->before = -1;
		cfg->after = -1;
	}
}

static void print_stats(const struct tsg_result *res,
			const struct timespec *start,
			const struct timespec *end)
{
	double secs = (double)(end->tv_sec - start->tv_sec) +
		      (double)(end->tv_nsec - start->tv_nsec) / 1e9;

	fprintf(stderr,
		"%llu bytes searched\n%llu files searched\n"
		"%llu selected lines\n%llu matches\n"
		"%.6f seconds\n%.1f MB/s\n",
		(unsigned long long)res->bytes, (unsigned long long)res->files,
		(unsigned long long)res->lines,
		(unsigned long long)res->matches, secs,
		secs > 0 ? (double)res->bytes / secs / 1e6 : 0.0);
}

static void free_all(struct tsg_cfg *cfg, struct options *opts,
		     struct tsg_filelist *files)
{
	size_t i;

	if (files)
		filelist_free(files);

	for (i = 0; i < cfg->npats; i++) {
		textsearch_destroy(cfg->pats[i].conf);
		for (unsigned int k = 0; k < cfg->pats[i].ascii_n; k++)
			free(cfg->pats[i].ascii_pats[k]);
		free(cfg->pats[i].ascii_pats);
		free(cfg->pats[i].ascii_lens);
	}
	free(cfg->pats);
	for (i = 0; i < opts->pats.n; i++)
		free(opts->pats.v[i].p);
	free(opts->pats.v);
}

int main(int argc, char **argv)
{
	static char dot_name[] = ".", dash_name[] = "-";
	char *dot[] = { dot_name, NULL }, *dash[] = { dash_name, NULL };
	struct tsg_filelist files;
	struct tsg_walk *walk;
	struct options opts;
	struct tsg_result res;
	struct timespec start, end;
	struct tsg_cfg cfg;
	char **ops;
	int nops;
	long ncpu;

	memset(&cfg, 0, sizeof(cfg));
	cfg.with_fname = -1;
	cfg.before = -1;
	cfg.after = -1;
	cfg.max_count = -1;
	cfg.chunk = 96 * 1024;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cfg.jobs = ncpu > 0 ? (int)ncpu : 1;
	memset(&opts, 0, sizeof(opts));
	opts.cfg = &cfg;
	opts.context = -1;
	setlocale(LC_ALL, "");
	plugin_path_fallback();
#ifdef __GLIBC__
	/* every file allocates and frees a little: a heap given back to the
	 * system after each one costs page faults (and, with -j, TLB
	 * shootdowns) when the next one takes it again */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_TOP_PAD, 1 << 20);
#endif

	nops = parse_args(&opts, argc, argv);
	if (opts.context >= 0) {
		if (cfg.before < 0)
			cfg.before = opts.context;
		if (cfg.after < 0)
			cfg.after = opts.context;
	}
	ops = argv + 1;
	if (!opts.have_e) {
		if (nops < 1)
			usage_exit();
		addpats_lines(&opts.pats, ops[0], strlen(ops[0]));
		ops++;
		nops--;
	}
	if (opts.hex && opts.fsm)
		die("--hex and --fsm cannot be used together");
	/* as grep: -x wins over -w */
	if (cfg.line_x)
		cfg.word = 0;
	if ((opts.fsm || algo_is_fsm(&opts)) && opts.ignore_case)
		die("-i cannot be used with --fsm (the fsm algorithm does not "
		    "support TS_IGNORECASE)");
	sbcs_init(&cfg, opts.ignore_case);
	compile(&opts);
	if (cfg.list != TSG_LIST_NONMATCHING &&
	    (cfg.max_count == 0 || selects_nothing(&opts))) {
		/* grep -m 0 reads and prints nothing (but -L) */
		free_all(&cfg, &opts, NULL);
		return 1;
	}
	settle_output(&opts);

	if (cfg.with_fname == -1 && nops > 1)
		cfg.with_fname = 1;
	if (!nops) {
		ops = cfg.recursive ? dot : dash;
		nops = 1;
	}
	cfg.map_files = !cfg.recursive && nops == 1;
	/* more workers than operands would have nothing to do */
	if (!cfg.recursive && cfg.jobs > nops)
		cfg.jobs = nops;
	filelist_init(&files);
	walk = walk_start(&cfg, &files, ops, nops, ops == dot && cfg.recursive);

	clock_gettime(CLOCK_MONOTONIC, &start);
	memset(&res, 0, sizeof(res));
	run_jobs(&cfg, &files, walk, &res);
	walk_free(walk);
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (cfg.stats)
		print_stats(&res, &start, &end);
	free_all(&cfg, &opts, &files);
	if (res.any_error && !(cfg.quiet && res.any_selected))
		return 2;
	return res.any_selected ? 0 : 1;
}
