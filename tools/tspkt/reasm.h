/*
 * reasm.h - TCP reassembly of one direction of a flow into a byte stream.
 *
 * Segments (sequence number, payload, SYN/FIN/RST) go in, in any order; the
 * consumer gets the bytes in sequence order as contiguous runs, each with
 * its 64-bit stream offset (0 is the byte after the ISN, or the first byte
 * seen when the flow was picked up midstream), and a gap event wherever
 * bytes were given up for lost, after which offsets go on counting the
 * missing bytes.  Sequence numbers wrap (serial-number arithmetic, RFC
 * 1982), so a stream may cross 2^32 any number of times.
 *
 * In-order data is handed to the consumer straight from the caller's
 * buffer; only out-of-order data is copied and held, within the direction's
 * window and the memcap shared by every direction of a context.  Data
 * overlapping held data is resolved by the overlap policy (Suricata's
 * matrix, see reasm_policy); data overlapping what was already delivered
 * is cut off (the stream never takes back a byte).
 *
 * Memory: struct reasm_dir is 64 bytes and allocates nothing while no
 * out-of-order data is held; each held run costs its bytes plus a 32-byte
 * header, counted in reasm_ctx.mem_used.
 *
 * Depends on nothing else of tspkt's (the tests compile it alone).  Not
 * thread-safe: one context and its directions belong to one thread.
 */
#ifndef TSPKT_REASM_H
#define TSPKT_REASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ts_config;
struct ts_match;
struct ts_stream;

/*
 * Which copy of an overlapped byte a target host keeps, comparing the new
 * segment N with the held segment O whose byte it is (Suricata's rules):
 *
 *   N starts   N ends vs O     first last bsd linux windows solaris
 *   before O   before O's end  old   new  new new   new     old
 *   before O   at or after     old   new  new new   new     new
 *   at O       before          old   new  old old   old     old
 *   at O       at              old   new  old old   old     new
 *   at O       after           old   new  old new   old     new
 *   after O    before or at    old   new  old old   old     old
 *   after O    after           old   new  old old   old     new
 *
 * "windows" resolves as "bsd" does for TCP (they differ only for IP
 * fragments).  A held byte keeps the range of the segment it first came
 * from, even once a later segment's copy replaced it.
 */
enum reasm_policy {
	REASM_POLICY_BSD = 0, /* the default, as Snort's and Suricata's */
	REASM_POLICY_FIRST,
	REASM_POLICY_LAST,
	REASM_POLICY_LINUX,
	REASM_POLICY_WINDOWS,
	REASM_POLICY_SOLARIS,
};

/* "first", "last", "bsd", ... to a policy: 0, or -1 for an unknown name. */
int reasm_policy_parse(const char *name, enum reasm_policy *policy);
const char *reasm_policy_name(enum reasm_policy policy);

#define REASM_DEFAULT_DEPTH (1u << 20)	     /* --stream-depth */
#define REASM_DEFAULT_MEMCAP (64u << 20)     /* --stream-memcap */
#define REASM_DEFAULT_MIN_WINDOW (64u << 10) /* window before any is seen */
#define REASM_DEFAULT_MAX_WINDOW (16u << 20) /* cap on advertised windows */

struct reasm_config {
	enum reasm_policy policy;
	uint64_t depth;	     /* bytes delivered per direction; 0: no limit */
	size_t memcap;	     /* held bytes and headers, all directions */
	uint32_t min_window; /* held data lies within next + window, where */
	uint32_t max_window; /* window = advertised, clamped to [min, max] */
	bool no_midstream;   /* ignore directions whose SYN was not seen */
};

/* Every field counts segments unless it says otherwise. */
struct reasm_stats {
	uint64_t in_order;	/* started at the next expected byte */
	uint64_t out_of_order;	/* started past it: held */
	uint64_t duplicates;	/* nothing new: every byte already there,
				    the same where it could be compared */
	uint64_t overlaps;	/* overlapped received data, brought more */
	uint64_t overlaps_diff; /* overlapped held bytes that differ */
	uint64_t gaps;		/* gap events */
	uint64_t gap_bytes;	/* bytes they skipped */
	uint64_t depth_reached; /* directions that reached the depth */
	uint64_t memcap_drops;	/* could not be held within the memcap */
	uint64_t not_picked_up; /* data without a SYN under no_midstream */
	uint64_t beyond_fin;	/* data past the FIN, cut off */
};

/* Shared by every direction of a flow table (one thread's). */
struct reasm_ctx {
	struct reasm_config cfg;
	size_t mem_used; /* bytes held right now, headers included */
	struct reasm_stats stats;
};

/* NULL config: the defaults; so does a memcap or window left 0 (a depth
 * of 0 stays: no limit). */
void reasm_ctx_init(struct reasm_ctx *ctx, const struct reasm_config *cfg);

/*
 * Where the bytes go.  Each callback returns 0 to go on, or non-zero to
 * stop: reasm then returns REASM_STOPPED at once without touching the
 * direction again, so the callback may free it (reasm_dir_free) meanwhile.
 * @data's bytes are valid during the call only.  @end comes once, when the
 * stream is over (FIN reached, RST, reasm_close, or the depth).
 */
struct reasm_consumer {
	int (*data)(void *opaque, uint64_t off, const uint8_t *p, size_t len);
	int (*gap)(void *opaque, uint64_t off, uint64_t len);
	int (*end)(void *opaque, uint64_t off);
	void *opaque;
};

struct reasm_seg;

/* One direction; all zero (reasm_dir_init) until its first segment. */
struct reasm_dir {
	struct reasm_seg *held; /* out-of-order runs by offset, disjoint */
	struct reasm_seg *tail; /* the last of them */
	uint64_t next_off;	/* stream offset of the next expected byte */
	uint64_t fin_off;	/* stream offset of the FIN (REASM_F_FIN) */
	uint32_t base_seq;	/* sequence number of stream offset 0 */
	uint32_t window;	/* largest window advertised to the sender */
	uint32_t held_bytes;	/* payload bytes held */
	uint32_t nruns;		/* runs held, at most REASM_MAX_RUNS */
	uint8_t flags;		/* REASM_F_* */
	/* the run inserted last: the next insertion's walk starts there
	 * when it can, so holes filled in order cost no walk */
	struct reasm_seg *finger;
};

/* Runs one direction may hold: a segment that would need more is dropped
 * (a memcap drop), so that no sending order makes insertion quadratic. */
#define REASM_MAX_RUNS 1024u

#define REASM_F_STARTED 0x01u
#define REASM_F_MIDSTREAM 0x02u /* picked up without a SYN */
#define REASM_F_FIN 0x04u	/* fin_off is known */
#define REASM_F_CLOSED 0x08u	/* end was delivered: no more data */
#define REASM_F_DEPTH 0x10u	/* stopped at the depth */
#define REASM_F_IGNORED 0x20u	/* not picked up (no_midstream) */

/* TCP flags reasm_add() looks at (the header's own bit values). */
#define REASM_FIN 0x01u
#define REASM_SYN 0x02u
#define REASM_RST 0x04u

#define REASM_STOPPED 1 /* a consumer callback asked to stop */

void reasm_dir_init(struct reasm_dir *d);

/* Free held data (nothing is delivered). */
void reasm_dir_free(struct reasm_ctx *ctx, struct reasm_dir *d);

/*
 * The receiver of this direction advertised @window bytes (already scaled):
 * out-of-order data is held up to the largest seen past the next expected
 * byte, within [min_window, max_window].
 */
void reasm_window(struct reasm_dir *d, uint32_t window);

/*
 * A segment of this direction: sequence number @seq, @len payload bytes,
 * TCP @flags.  Delivers whatever became contiguous.  Data ending past the
 * window makes the holes before it gaps, as far as needed to hold it.
 * 0, or REASM_STOPPED.
 */
int reasm_add(struct reasm_ctx *ctx, struct reasm_dir *d,
	      const struct reasm_consumer *c, uint32_t seq, const uint8_t *p,
	      size_t len, unsigned int flags);

/*
 * The first hole timed out: give it up as a gap and deliver what follows
 * it, up to the next hole.  Nothing happens without held data (no hole is
 * known then).  0, or REASM_STOPPED.
 */
int reasm_skip_hole(struct reasm_ctx *ctx, struct reasm_dir *d,
		    const struct reasm_consumer *c);

/*
 * The flow is over (time-out, eviction, end of capture): deliver everything
 * held, holes as gaps, then end (once).  0, or REASM_STOPPED.
 */
int reasm_close(struct reasm_ctx *ctx, struct reasm_dir *d,
		const struct reasm_consumer *c);

/* ---- feeding a push-mode stream (textsearch_stream(3)) -------------------
 *
 * A consumer that writes the runs into a ts_stream and reports its matches
 * at true stream offsets.  At a gap it ends the ts_stream (matches that end
 * before the gap are decided), resets it, and moves its base past the gap,
 * so no match spans a gap and offsets count the gap's bytes.
 */
struct reasm_feed {
	struct ts_stream *s;
	uint64_t base; /* stream offset of the ts_stream's offset 0 */
	/* one match, start and end as stream offsets; non-zero: stop */
	int (*match)(void *opaque, const struct ts_match *m);
	void *opaque;
};

/* @s open, base 0.  Fills @c to feed @f. */
void reasm_feed_init(struct reasm_feed *f, struct reasm_consumer *c,
		     struct ts_stream *s,
		     int (*match)(void *opaque, const struct ts_match *m),
		     void *opaque);

int reasm_feed_data(void *feed, uint64_t off, const uint8_t *p, size_t len);
int reasm_feed_gap(void *feed, uint64_t off, uint64_t len);
int reasm_feed_end(void *feed, uint64_t off);

#endif /* TSPKT_REASM_H */
