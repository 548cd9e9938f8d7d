#!/bin/sh
# sets_bench.sh - tsgrep -F -f against grep -F -f and rg -F -f with many
# patterns (1,000, 10,000 and 100,000), run by `make bench` on the corpus
# the library's bench wrote (build/bench/corpus.txt).
#
#   sh bench/sets_bench.sh TSGREP CORPUS DIR [quick]
#
# The patterns are the corpus's own words (the most frequent first, so
# most lines match and the tools must find their lines and stop), then
# letter strings made from a seeded generator, nearly all absent, up to
# the size wanted.  Each cell is a whole process (`-c`, LC_ALL=C), every
# tool runs RUNS times, the tools taking turns, so a noisy neighbour
# spreads over all of them; the table shows median wall times and the
# ratios grep/tsgrep and rg/tsgrep (above 1: tsgrep is faster).  Speed is
# reported, never judged: the script fails only if the tools count
# different numbers of lines.  `quick` (CI) runs each cell once.
set -u

TSGREP=${1:?usage: sets_bench.sh TSGREP CORPUS DIR [quick]}
CORPUS=${2:?usage: sets_bench.sh TSGREP CORPUS DIR [quick]}
DIR=${3:?usage: sets_bench.sh TSGREP CORPUS DIR [quick]}
QUICK=${4:-}
SIZES="1000 10000 100000"
if [ "$QUICK" = quick ]; then
	RUNS=1
else
	RUNS=5
fi
LC_ALL=C
export LC_ALL

if [ ! -x "$TSGREP" ]; then
	echo "sets bench: $TSGREP not built, skipped"
	exit 0
fi
if [ ! -r "$CORPUS" ]; then
	echo "sets bench: no corpus $CORPUS (the library's bench writes it)" >&2
	exit 2
fi
have() { command -v "$1" >/dev/null 2>&1; }
HAVE_RG=no
have rg && HAVE_RG=yes
mkdir -p "$DIR" || exit 2

# words of the corpus, most frequent first (ties by name, so the list is
# the same every time), then absent letter strings from a fixed seed
WORDS=$DIR/words.txt
tr -cs 'A-Za-z_' '\n' <"$CORPUS" | awk 'length($0) >= 3' | sort |
	uniq -c | sort -k1,1nr -k2,2 | awk '{ print $2 }' >"$WORDS" || exit 2
NWORDS=$(wc -l <"$WORDS")
for n in $SIZES; do
	awk -v n="$n" -v nw="$NWORDS" -v words="$WORDS" 'BEGIN {
		srand(20261203)
		for (i = 0; i < n && (getline w < words) > 0; i++)
			print w
		for (; i < n; i++) {
			len = 5 + int(rand() * 8)
			s = ""
			for (k = 0; k < len; k++)
				s = s substr("abcdefghijklmnopqrstuvwxyz",
					     1 + int(rand() * 26), 1)
			print s "q"
		}
	}' >"$DIR/pats$n.txt" || exit 2
done

now() { date +%s.%N; }
# GNU time gives the CPU time beside the wall time: on a shared machine
# the wall time also holds the turns other processes took
GNU_TIME=no
/usr/bin/time -f %e -o /dev/null true 2>/dev/null && GNU_TIME=yes
# cell TOOL N: run a cell, its count on stdout, "wall cpu" in time.out
cell() {
	case $1 in
	tsgrep) set -- "$TSGREP" -F -c -f "$DIR/pats$2.txt" "$CORPUS" ;;
	grep) set -- grep -F -c -f "$DIR/pats$2.txt" "$CORPUS" ;;
	rg) set -- rg -F -c -f "$DIR/pats$2.txt" "$CORPUS" ;;
	esac
	if [ "$GNU_TIME" = yes ]; then
		/usr/bin/time -f '%e %U %S' -o "$DIR/time.raw" "$@"
		awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$DIR/time.raw" \
			>"$DIR/time.out"
	else
		t0=$(now)
		"$@"
		t1=$(now)
		echo "$t0 $t1" |
			awk '{ printf "%.2f -\n", $2 - $1 }' >"$DIR/time.out"
	fi
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

TOOLS="tsgrep grep"
[ "$HAVE_RG" = yes ] && TOOLS="$TOOLS rg"
echo
echo "tsgrep -F -f against grep -F -f and rg -F -f: $(wc -c <"$CORPUS")" \
	"bytes ($CORPUS), -c, LC_ALL=C;"
echo "patterns: the corpus's $NWORDS distinct words of 3+ letters (most" \
	"frequent first), then absent letter strings;"
echo "median wall seconds (CPU seconds, user + system) of $RUNS run(s)" \
	"per cell, tools in turn; ratios of wall times; load average at the" \
	"start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$HAVE_RG" = yes ] || echo "rg: not installed, its column says n/a"
printf '  %-9s %14s %14s %14s %12s %10s %s\n' patterns tsgrep "grep -F" \
	"rg -F" grep/tsgrep rg/tsgrep "lines (all tools)"
status=0
for n in $SIZES; do
	for t in $TOOLS; do
		: >"$DIR/times.$t"
		: >"$DIR/cpu.$t"
	done
	counts=""
	r=0
	while [ "$r" -lt "$RUNS" ]; do
		for t in $TOOLS; do
			c=$(cell "$t" "$n")
			cut -d' ' -f1 "$DIR/time.out" >>"$DIR/times.$t"
			cut -d' ' -f2 "$DIR/time.out" >>"$DIR/cpu.$t"
			[ "$r" -eq 0 ] && counts="$counts $t=$c"
		done
		r=$((r + 1))
	done
	ts=$(median <"$DIR/times.tsgrep")
	gr=$(median <"$DIR/times.grep")
	tsc=$(median <"$DIR/cpu.tsgrep")
	grc=$(median <"$DIR/cpu.grep")
	rg=n/a
	rgc=n/a
	if [ "$HAVE_RG" = yes ]; then
		rg=$(median <"$DIR/times.rg")
		rgc=$(median <"$DIR/cpu.rg")
	fi
	# the counts must agree; one differing is a wrong answer
	agree=$(echo "$counts" | tr ' ' '\n' | sed -n 's/^[a-z]*=//p' |
		sort -u | wc -l)
	if [ "$agree" -eq 1 ]; then
		lines=$(echo "$counts" | sed 's/^ [a-z]*=\([0-9]*\).*/\1/')
	else
		lines="DIFFER:$counts"
		status=1
	fi
	printf '  %-9s %14s %14s %14s %12s %10s %s\n' "$n" "$ts ($tsc)" \
		"$gr ($grc)" "$rg ($rgc)" \
		"$(awk -v a="$gr" -v b="$ts" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$rg" -v b="$ts" 'BEGIN {
			if (a == "n/a") print "n/a"; else printf "%.2f", a / b }')" \
		"$lines"
done
[ "$status" -eq 0 ] || echo "sets bench: the tools counted different lines"
exit "$status"
