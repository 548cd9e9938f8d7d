#!/bin/sh
# blocks_compare.sh - the per-block cost section of the bench
# (bench_blocks.c) against the library of another commit, in one run.
#
#   sh bench/blocks_compare.sh BUILD BASE_COMMIT [REPS]
#
# Builds the library at BASE_COMMIT (git archive, so the worktree is not
# touched) in BUILD/blocks-base-COMMIT, then runs `bench --blocks-only`
# REPS times (default 5) against it and against BUILD's library, taking
# turns, so a noisy neighbour spreads over both.  The bench binary is the
# same; only the library differs (its RUNPATH gives way to
# LD_LIBRARY_PATH).  Prints, for every algorithm, pattern length and block
# size, the best ns per block of each and the ratio before / after.
# REPS 0 only prints the table again from the last runs' outputs.
set -eu

BUILD=${1:?usage: blocks_compare.sh BUILD BASE_COMMIT [REPS]}
BASE=${2:?usage: blocks_compare.sh BUILD BASE_COMMIT [REPS]}
REPS=${3:-5}
BENCH=$BUILD/bench/bench
SHORT=$(git rev-parse --short "$BASE")
BDIR=$BUILD/blocks-base-$SHORT
OUT=$BUILD/bench/blocks-compare

[ -x "$BENCH" ] || { echo "blocks_compare: build $BENCH first (make bench)" >&2; exit 2; }
if [ ! -f "$BDIR/build/default/lib/libtextsearch.so" ]; then
	mkdir -p "$BDIR"
	git archive "$BASE" | tar -x -C "$BDIR"
	make -C "$BDIR" -j2 lib >/dev/null
fi
LIBDIR=$(cd "$BDIR/build/default/lib" && pwd)
mkdir -p "$OUT"
[ "$REPS" -eq 0 ] || rm -f "$OUT"/base.* "$OUT"/new.*
i=1
while [ "$i" -le "$REPS" ]; do
	LD_LIBRARY_PATH=$LIBDIR "$BENCH" --blocks-only >"$OUT/base.$i"
	"$BENCH" --blocks-only >"$OUT/new.$i"
	i=$((i + 1))
done

RUNS=$(find "$OUT" -name 'new.*' | wc -l)
echo "per-block cost, $SHORT against this build: best of $RUNS runs each"
echo "(ns per 64 / 256 / 1500-byte block; x = before / after)"
# rows: algo len ns64 gb ns256 gb ns1500 gb contig 'pattern'
awk '
	FNR == 1 { kind = FILENAME ~ /base\.[0-9]+$/ ? "b" : "n" }
	$1 ~ /^(auto|bm|kmp|skb)$/ && $2 ~ /^[0-9]+$/ && NF >= 9 {
		key = $1 " " $2
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		for (c = 0; c < 3; c++) {
			v = $(3 + 2 * c)
			k = kind SUBSEP key SUBSEP c
			if (!(k in best) || v < best[k]) best[k] = v
		}
	}
	END {
		printf "%-5s %3s  %22s  %22s  %22s\n", "algo", "len",
		       "64: before after x", "256: before after x",
		       "1500: before after x"
		for (i = 1; i <= nk; i++) {
			split(order[i], f, " ")
			printf "%-5s %3s", f[1], f[2]
			for (c = 0; c < 3; c++) {
				b = best["b", order[i], c]
				n = best["n", order[i], c]
				printf "  %7.2f %7.2f %5.2fx", b, n, (n > 0 ? b / n : 0)
			}
			printf "\n"
		}
	}' "$OUT"/base.* "$OUT"/new.*
