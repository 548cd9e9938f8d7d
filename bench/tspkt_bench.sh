#!/bin/sh
# tspkt_bench.sh - tspkt against ngrep and tcpdump on a generated capture
# (bench/gen_capture.c), run by `make bench` after the library's table.
#
#   sh bench/tspkt_bench.sh BUILD [quick]
#   TSPKT=/elsewhere/bin/tspkt sh bench/tspkt_bench.sh BUILD   (another
#                                             tspkt, e.g. an older build)
#
# Cells: tcpdump reading the capture (-w /dev/null), ngrep -q -I with one
# string and with the 100 and the 1,000 rules' strings as one regular
# expression, tspkt with one string (ngrep's PATTERN) and with 1, 100 and
# 1,000 rules (-f), at -j 1 and -j 2, and with 100 and 1,000 rules
# --per-rule (each rule searched on its own, as before pattern sets; a
# tspkt without that option skips those cells).  Each cell runs RUNS
# times (RUNS=N in the environment overrides), the cells taking turns, so
# a noisy neighbour spreads over all of them; the table shows median wall
# times and ratios.  Speed is reported, never judged: the script fails
# only if tspkt and ngrep select different frames (-j 2 printing
# otherwise than -j 1, or --per-rule otherwise than one pass, is
# reported; the tests fail on it).  `quick` (CI) uses a small capture and
# one run.
set -u

BUILD=${1:?usage: tspkt_bench.sh BUILD [quick]}
QUICK=${2:-}
GEN=$BUILD/bench/gen_capture
TSPKT=${TSPKT:-$BUILD/bin/tspkt}
DIR=$BUILD/bench/tspkt

if [ "$QUICK" = quick ]; then
	NPKT=20000
	RUNS=${RUNS:-1}
else
	NPKT=600000
	RUNS=${RUNS:-5}
fi

if [ ! -x "$TSPKT" ]; then
	echo "tspkt bench: $TSPKT not built, skipped"
	exit 0
fi
have() { command -v "$1" >/dev/null 2>&1; }
HAVE_NGREP=no
HAVE_TCPDUMP=no
have ngrep && HAVE_NGREP=yes
have tcpdump && HAVE_TCPDUMP=yes

mkdir -p "$DIR" || exit 2
CAP=$DIR/capture.pcap
RULES=$DIR/rules.txt
RULES1000=$DIR/rules1000.txt
RULES1=$DIR/rules1.txt
planted=$("$GEN" "$CAP" "$NPKT" "$RULES" "$RULES1000") || exit 2
head -n 1 "$RULES" >"$RULES1"
# the first rule's string is the one searched alone
NEEDLE=$(sed -n '1s/^class r00 string "\(.*\)"$/\1/p' "$RULES")
# ngrep takes one regular expression: the strings, escaped, as
# alternatives
alternatives() {
	sed 's/^class r[0-9]* string "\(.*\)"$/\1/' "$1" |
		sed 's/[][\\.*?+(){}|^$-]/\\&/g' | paste -sd '|' -
}
ALT=$(alternatives "$RULES")
ALT1000=$(alternatives "$RULES1000")
SIZE=$(wc -c <"$CAP")
# --per-rule: each rule its own search, as before pattern sets
PER_RULE=no
"$TSPKT" --help 2>/dev/null | grep -q -e '--per-rule' && PER_RULE=yes
# TCP streams: the cells against ngrep search per datagram, as ngrep
# does (--no-stream); the stream cells say what following streams costs
STREAMS=no
NS=
if "$TSPKT" --help 2>/dev/null | grep -q -e '--no-stream'; then
	STREAMS=yes
	NS=--no-stream
fi

echo
echo "tspkt against ngrep and tcpdump: $NPKT packets, $SIZE bytes" \
	"(Ethernet/IPv4+IPv6/TCP), $planted"
echo "median wall time of $RUNS run(s) per cell, cells in turn; load" \
	"average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- agreement first: a fast wrong answer is no figure ----------------

# frame numbers, one a line, sorted
tspkt_frames() { sed -n 's/.* frame=\([0-9]*\).*/\1/p' | sort -n; }
ngrep_frames() { sed -n 's/.* #\([0-9]*\)$/\1/p' | sort -n; }

fail=0
"$TSPKT" $NS -j 1 -r "$CAP" "$NEEDLE" 2>/dev/null | tspkt_frames >"$DIR/t1"
"$TSPKT" $NS -j 2 -r "$CAP" "$NEEDLE" 2>/dev/null >"$DIR/t1j2.out"
"$TSPKT" $NS -j 1 -r "$CAP" "$NEEDLE" 2>/dev/null >"$DIR/t1j1.out"
for k in 100 1000; do
	rules=$RULES
	[ $k = 1000 ] && rules=$RULES1000
	"$TSPKT" $NS -j 1 -r "$CAP" -f "$rules" 2>/dev/null >"$DIR/t${k}j1.out"
	"$TSPKT" $NS -j 2 -r "$CAP" -f "$rules" 2>/dev/null >"$DIR/t${k}j2.out"
	tspkt_frames <"$DIR/t${k}j1.out" >"$DIR/t$k"
	if ! cmp -s "$DIR/t${k}j1.out" "$DIR/t${k}j2.out"; then
		echo "tspkt bench: WARNING: -j 2 printed otherwise than -j 1" \
			"with $k rules (see test_tspkt_cli)"
	fi
	if [ $PER_RULE = yes ]; then
		"$TSPKT" $NS --per-rule -j 1 -r "$CAP" -f "$rules" 2>/dev/null \
			>"$DIR/t${k}pr.out"
		cmp -s "$DIR/t${k}j1.out" "$DIR/t${k}pr.out" ||
			echo "tspkt bench: WARNING: --per-rule printed" \
				"otherwise than one pass with $k rules" \
				"(see test_tspkt_sets)"
	fi
done
if ! cmp -s "$DIR/t1j1.out" "$DIR/t1j2.out"; then
	echo "tspkt bench: WARNING: -j 2 printed otherwise than -j 1" \
		"(see test_tspkt_cli)"
fi
if [ $HAVE_NGREP = yes ]; then
	ngrep -q -I "$CAP" -t "$NEEDLE" 2>/dev/null | ngrep_frames >"$DIR/n1"
	ngrep -q -I "$CAP" -t "$ALT" 2>/dev/null | ngrep_frames >"$DIR/n100"
	ngrep -q -I "$CAP" -t "$ALT1000" 2>/dev/null |
		ngrep_frames >"$DIR/n1000"
	for k in 1 100 1000; do
		if ! cmp -s "$DIR/t$k" "$DIR/n$k"; then
			echo "tspkt bench: FAIL: tspkt and ngrep select" \
				"different frames ($k string(s)):" \
				"$(wc -l <"$DIR/t$k") and $(wc -l <"$DIR/n$k")"
			fail=1
		fi
	done
	echo "agreement: tspkt and ngrep select the same $(wc -l <"$DIR/t1")" \
		"frames with 1 string, $(wc -l <"$DIR/t100") with 100 and" \
		"$(wc -l <"$DIR/t1000") with 1,000"
else
	echo "ngrep not installed: its cells and the agreement check skipped"
fi
[ $HAVE_TCPDUMP = yes ] || echo "tcpdump not installed: its cell skipped"
if [ $STREAMS = yes ]; then
	# the needles are planted inside segments of in-order flows: the
	# streams find them at the same frames
	"$TSPKT" -j 1 -r "$CAP" "$NEEDLE" 2>/dev/null | tspkt_frames >"$DIR/s1"
	if cmp -s "$DIR/s1" "$DIR/t1"; then
		echo "agreement: with TCP streams, the same $(wc -l <"$DIR/s1")" \
			"frames"
	else
		echo "tspkt bench: FAIL: with TCP streams $(wc -l <"$DIR/s1")" \
			"frames, per datagram $(wc -l <"$DIR/t1")"
		fail=1
	fi
fi

# ---- timing --------------------------------------------------------------

now() { date +%s%N; }

# cell NAME COMMAND...: one timed run, appended to $DIR/times
cell() {
	name=$1
	shift
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	echo "$name $(((t1 - t0) / 1000))" >>"$DIR/times"
}

: >"$DIR/times"
run=0
while [ $run -lt "$RUNS" ]; do
	[ $HAVE_TCPDUMP = yes ] && cell tcpdump tcpdump -r "$CAP" -w /dev/null
	[ $HAVE_NGREP = yes ] && cell ngrep1 ngrep -q -I "$CAP" "$NEEDLE"
	cell j1_1 "$TSPKT" $NS -j 1 -r "$CAP" "$NEEDLE"
	cell j2_1 "$TSPKT" $NS -j 2 -r "$CAP" "$NEEDLE"
	cell j1_r1 "$TSPKT" $NS -j 1 -r "$CAP" -f "$RULES1"
	cell j2_r1 "$TSPKT" $NS -j 2 -r "$CAP" -f "$RULES1"
	[ $HAVE_NGREP = yes ] && cell ngrep100 ngrep -q -I "$CAP" "$ALT"
	cell j1_100 "$TSPKT" $NS -j 1 -r "$CAP" -f "$RULES"
	cell j2_100 "$TSPKT" $NS -j 2 -r "$CAP" -f "$RULES"
	[ $PER_RULE = yes ] &&
		cell pr_100 "$TSPKT" $NS --per-rule -j 1 -r "$CAP" -f "$RULES"
	[ $HAVE_NGREP = yes ] && cell ngrep1000 ngrep -q -I "$CAP" "$ALT1000"
	cell j1_1000 "$TSPKT" $NS -j 1 -r "$CAP" -f "$RULES1000"
	cell j2_1000 "$TSPKT" $NS -j 2 -r "$CAP" -f "$RULES1000"
	[ $PER_RULE = yes ] &&
		cell pr_1000 "$TSPKT" $NS --per-rule -j 1 -r "$CAP" -f "$RULES1000"
	if [ $STREAMS = yes ]; then
		cell s1_1 "$TSPKT" -j 1 -r "$CAP" "$NEEDLE"
		cell s2_1 "$TSPKT" -j 2 -r "$CAP" "$NEEDLE"
	fi
	run=$((run + 1))
done

# medians, then the table
sort -k1,1 -k2,2n "$DIR/times" | awk '
	{ v[$1, ++n[$1]] = $2 }
	END {
		for (c in n) {
			k = n[c]
			m[c] = k % 2 ? v[c, (k + 1) / 2] : \
				(v[c, k / 2] + v[c, k / 2 + 1]) / 2
			m[c] /= 1e6
		}
		printf "\n%-42s %8s %9s %10s %8s %8s\n", "cell", \
			"wall s", "x ngrep", "x tcpdump", "x -j 1", "x 1 rule"
		row("tcpdump -r X -w /dev/null", "tcpdump", "", "", "")
		row("ngrep -q -I, 1 string", "ngrep1", "", "", "")
		row("tspkt -j 1, 1 string", "j1_1", "ngrep1", "", "")
		row("tspkt -j 2, 1 string", "j2_1", "ngrep1", "j1_1", "")
		row("tspkt -j 1, 1 rule", "j1_r1", "ngrep1", "", "")
		row("tspkt -j 2, 1 rule", "j2_r1", "ngrep1", "j1_r1", "")
		row("ngrep -q -I, 100 strings (one regex)", "ngrep100", "", \
		    "", "")
		row("tspkt -j 1, 100 rules", "j1_100", "ngrep100", "", \
		    "j1_r1")
		row("tspkt -j 2, 100 rules", "j2_100", "ngrep100", "j1_100", \
		    "j2_r1")
		row("tspkt -j 1, 100 rules, --per-rule", "pr_100", \
		    "ngrep100", "", "j1_r1")
		row("ngrep -q -I, 1,000 strings (one regex)", "ngrep1000", \
		    "", "", "")
		row("tspkt -j 1, 1,000 rules", "j1_1000", "ngrep1000", "", \
		    "j1_r1")
		row("tspkt -j 2, 1,000 rules", "j2_1000", "ngrep1000", \
		    "j1_1000", "j2_r1")
		row("tspkt -j 1, 1,000 rules, --per-rule", "pr_1000", \
		    "ngrep1000", "", "j1_r1")
		row("tspkt -j 1, 1 string, TCP streams", "s1_1", "ngrep1", \
		    "", "")
		row("tspkt -j 2, 1 string, TCP streams", "s2_1", "ngrep1", \
		    "s1_1", "")
		printf "\ntargets (issue 10), this run:\n"
		for (j = 1; j <= 2; j++)
			printf "  tspkt -j %d, 100 rules / 1 rule: %.2f" \
				" (target <= 2: %s), 1,000 rules / 1 rule:" \
				" %.2f (target <= 4: %s)\n", j, \
				m["j" j "_100"] / m["j" j "_r1"], \
				(m["j" j "_100"] <= 2 * m["j" j "_r1"] ? \
				 "met" : "missed"), \
				m["j" j "_1000"] / m["j" j "_r1"], \
				(m["j" j "_1000"] <= 4 * m["j" j "_r1"] ? \
				 "met" : "missed")
		printf "targets (issue 11), this run:\n"
		if (("ngrep1") in m)
			printf "  tspkt -j 1, 1 string / ngrep: %.2f" \
				" (target <= 0.50: %s)\n", m["j1_1"] / \
				m["ngrep1"], \
				(m["j1_1"] / m["ngrep1"] <= 0.5 ? "met" : "missed")
		printf "  tspkt -j 2 / -j 1, 1 string: %.2f, 100 rules:" \
			" %.2f (target <= 1.00 in both: %s)\n", \
			m["j2_1"] / m["j1_1"], m["j2_100"] / m["j1_100"], \
			((m["j2_1"] <= m["j1_1"] && \
			  m["j2_100"] <= m["j1_100"]) ? "met" : "missed")
		printf "  tspkt -j 1 / -j 2, 100 rules: %.2fx faster" \
			" (target >= 1.6: %s)\n", m["j1_100"] / m["j2_100"], \
			(m["j1_100"] / m["j2_100"] >= 1.6 ? "met" : "missed")
		if (("s1_1") in m) {
			printf "targets (issue 13), this run:\n"
			printf "  tspkt -j 1, 1 string, streams on: %.2fx the" \
				" per-datagram throughput (target >= 0.8: %s)\n", \
				m["j1_1"] / m["s1_1"], \
				(m["j1_1"] / m["s1_1"] >= 0.8 ? "met" : "missed")
		}
	}
	function row(label, c, vs_ngrep, vs_j1, vs_r1) {
		if (!(c in m))
			return
		printf "%-42s %8.3f", label, m[c]
		printf " %9s", vs_ngrep != "" && (vs_ngrep in m) ? \
			sprintf("%.2f", m[c] / m[vs_ngrep]) : "-"
		printf " %10s", ("tcpdump" in m) && c != "tcpdump" ? \
			sprintf("%.2f", m[c] / m["tcpdump"]) : "-"
		printf " %8s", vs_j1 != "" ? \
			sprintf("%.2f", m[c] / m[vs_j1]) : "-"
		printf " %8s\n", vs_r1 != "" && (vs_r1 in m) ? \
			sprintf("%.2f", m[c] / m[vs_r1]) : "-"
	}'
exit $fail
