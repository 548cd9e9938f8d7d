/*
 * article.c - the textsearch interface used exactly as the 2.6.13 article
 * and the kernel's header describe it: prepare, find_continuous and next,
 * a get_next_block()/finish() pair for data that is not contiguous, and
 * TS_AUTOLOAD of an algorithm that is not built in.
 *
 * Build against an installed library:
 *   cc article.c $(pkg-config --cflags --libs textsearch) -o article
 * Exits 0 when every result is what the article says it should be.
 */
#include <textsearch.h>
#include <textsearch_fsm.h>

#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char *what, unsigned int got, unsigned int want)
{
	printf("%-44s %10u %s\n", what, got, got == want ? "ok" : "WRONG");
	if (got != want)
		failures++;
}

/* The data is three fragments, as a packet might hold it.  The provider
 * keeps no state of its own: it finds the fragment holding `consumed`. */
static const char *const fragments[] = { "We dance the fu", "nky chi", "cken" };

static unsigned int get_next_block(unsigned int consumed, const u8 **dst,
				   struct ts_config *conf,
				   struct ts_state *state)
{
	unsigned int i, start = 0;

	(void)conf;
	(void)state;
	for (i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++) {
		unsigned int len = (unsigned int)strlen(fragments[i]);

		if (consumed < start + len) {
			*dst = (const u8 *)fragments[i] + (consumed - start);
			return start + len - consumed;
		}
		start += len;
	}
	return 0;
}

static unsigned int finished;

static void finish(struct ts_config *conf, struct ts_state *state)
{
	(void)conf;
	(void)state;
	finished++;
}

static void search(const char *algo, const void *pattern, unsigned int len,
		   int flags)
{
	const char *text = "We dance the funky chicken";
	struct ts_config *conf;
	struct ts_state state;
	char what[64];

	conf = textsearch_prepare(algo, pattern, len, GFP_KERNEL, flags);
	if (IS_ERR(conf)) {
		printf("%s: %s (%s)\n", algo,
		       textsearch_strerror((int)PTR_ERR(conf)),
		       textsearch_last_error());
		failures++;
		return;
	}
	snprintf(what, sizeof(what), "%s: contiguous", algo);
	expect(what,
	       textsearch_find_continuous(conf, &state, text,
					  (unsigned int)strlen(text)),
	       19);
	snprintf(what, sizeof(what), "%s: contiguous, next", algo);
	expect(what, textsearch_next(conf, &state), UINT_MAX);

	conf->get_next_block = get_next_block;
	conf->finish = finish;
	finished = 0;
	snprintf(what, sizeof(what), "%s: three fragments", algo);
	expect(what, textsearch_find(conf, &state), 19);
	snprintf(what, sizeof(what), "%s: three fragments, next", algo);
	expect(what, textsearch_next(conf, &state), UINT_MAX);
	snprintf(what, sizeof(what), "%s: finish() calls", algo);
	expect(what, finished, 2);
	textsearch_destroy(conf);
}

int main(void)
{
	struct ts_config *conf;

	/* "chicken" for the finite state machine: skip anything, then the
	 * seven letters */
	struct ts_fsm_token tokens[8] = {
		{ TS_FSM_WILDCARD, TS_FSM_HEAD_IGNORE, 0 },
	};
	unsigned int i;

	for (i = 0; i < 7; i++) {
		tokens[i + 1].type = TS_FSM_SPECIFIC;
		tokens[i + 1].recur = TS_FSM_SINGLE;
		tokens[i + 1].value = (u8) "chicken"[i];
	}

	search("kmp", "chicken", 7, 0);
	search("bm", "chicken", 7, 0);
	search("fsm", tokens, sizeof(tokens), 0);
	/* not built in: loaded from ts_shiftor.so */
	search("shiftor", "chicken", 7, TS_AUTOLOAD);

	conf = textsearch_prepare("nosuchalgo", "x", 1, GFP_KERNEL, 0);
	expect("unknown algorithm gives -ENOENT",
	       IS_ERR(conf) ? (unsigned int)-PTR_ERR(conf) : 0, ENOENT);
	conf = textsearch_prepare("kmp", "x", 0, GFP_KERNEL, 0);
	expect("empty pattern gives -EINVAL",
	       IS_ERR(conf) ? (unsigned int)-PTR_ERR(conf) : 0, EINVAL);

	printf("%s\n", failures ? "FAILED" : "all as the article says");
	return failures ? 1 : 0;
}
