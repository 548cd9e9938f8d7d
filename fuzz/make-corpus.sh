#!/bin/sh
# Write the seed corpus of fuzz_algorithms.c (its header describes the
# input layout) into ${1:-fuzz/corpus}.  Each seed is one case the tests
# care about, so the fuzzer starts from the interesting corners.
# (fuzz_packets.c's seeds, fuzz/corpus-packets, are frames built in C:
# fuzz/make-corpus-packets.c, `make -f fuzz/fuzz.mk corpus-packets`.)
set -eu
out=${1:-fuzz/corpus}
mkdir -p "$out"

# byte 0: algorithm | flags | split mode
KMP=0 BM=1 SHIFTOR=2 FSM=3
# rarebyte at each dispatch level, and "auto"
RB_SCALAR=128 RB_SSE2=129 RB_AVX2=130 RB_AVX512=131 AUTO=160
ICASE=4 BYTES=8 ONE=16 KERNEL=24 RAW=32 ATOMIC=64
# fsm types and recurrences, as in textsearch_fsm.h
SPECIFIC=0 WILDCARD=1 DIGIT=2 XDIGIT=3 PRINT=4 ALPHA=5 ALNUM=6 ASCII=7
CNTRL=8 GRAPH=9 LOWER=10 UPPER=11 PUNCT=12 SPACE=13
SINGLE=0 PERHAPS=1 ANY=2 MULTI=3 HEAD=4

# b N...: bytes by decimal value
b() {
	for v in "$@"; do
		# shellcheck disable=SC2059
		printf "\\$(printf %03o "$v")"
	done
}
# s TEXT: bytes of a string
s() { printf '%s' "$1"; }
# tok TYPE RECUR VALUE (VALUE a number)
tok() { b "$1" 0 "$2" "$3"; }
# spec TEXT: SPECIFIC SINGLE tokens, one per character
spec() {
	printf '%s' "$1" | od -An -tu1 -v | tr -s ' ' '\n' | sed '/^$/d' |
		while read -r v; do tok "$SPECIFIC" "$SINGLE" "$v"; done
}
# lit NAME CONTROL PATTERN SIZES DATA: a literal case; SIZES is a list of
# block sizes (quoted, may be empty)
lit() {
	n=0
	for _ in $4; do n=$((n + 1)); done
	# shellcheck disable=SC2086
	{ b "$2" "${#3}" "$n"; s "$3"; b $4; s "$5"; } > "$out/$1"
}

A="We dance the funky chicken"
for a in KMP BM SHIFTOR RB_SCALAR RB_SSE2 RB_AVX2 RB_AVX512 AUTO; do
	eval "c=\$$a"
	name=$(echo "$a" | tr 'A-Z_' 'a-z-')
	lit "$name-article-fragments" "$c" chicken "15 7" "$A"
	lit "$name-article-kernel" $((c + KERNEL)) chicken "15 7 4" "$A"
	lit "$name-aa-in-aaaa-bytes" $((c + BYTES)) aa "" aaaa
	lit "$name-periodic" "$c" abab "3 1 2 5" "abababababaabab"
	lit "$name-aaab" $((c + BYTES)) aaab "" "aaaaaaabaaab"
	lit "$name-icase" $((c + ICASE)) "ChIcKeN" "20 1 1" \
		"the funky CHICKEN chicken"
	lit "$name-longer-than-data" "$c" "chickenchicken" "" chicken
done
lit bm-suffix-rule 1 "abcxxabc" "4 4 4" "xabcxxabcabcxxabcxabc"
lit shiftor-atomic $((SHIFTOR + ATOMIC)) dance "" "$A"
lit kmp-empty-pattern "$KMP" "" "" "$A"
long=$(printf 'abcdefghij%.0s' 1 2 3 4 5 6 7)
lit shiftor-long-pattern $((SHIFTOR + BYTES)) "$long" "" "x${long}y${long}"
lit bm-long-pattern "$BM" "$long" "33 1 70" "${long}${long}"

# rarebyte: patterns past a vector, across blocks; one, two, three bytes
for a in RB_SCALAR RB_SSE2 RB_AVX2 RB_AVX512; do
	eval "c=\$$a"
	name=$(echo "$a" | tr 'A-Z_' 'a-z-')
	lit "$name-long-pattern" $((c + BYTES)) "$long" "61 3 64 1 2" \
		"x${long}y${long}${long}"
	lit "$name-long-icase" $((c + ICASE)) "pthread_mutex_LOCK" "" \
		"$(printf 'pthread_mutex_unlock(&m); %.0s' 1 2 3 4 5) PTHREAD_mutex_lock"
	lit "$name-one-byte" "$c" "k" "" "$A$A$A$A kernel"
	lit "$name-two-bytes" $((c + BYTES)) "ck" "1 63 64 2" "$A$A$A$A$A$A"
	lit "$name-three-bytes" $((c + ICASE)) "EN " "" "$A $A $A $A $A $A"
done

# ISO-8859-1 folding: 0xC0/0xE0 fold, 0xD7/0xF7 do not, 0xDF/0xFF alone
for a in KMP BM SHIFTOR RB_SCALAR RB_SSE2 RB_AVX2 RB_AVX512; do
	eval "c=\$$a"
	name=$(echo "$a" | tr 'A-Z_' 'a-z-')
	{ b $((c + ICASE)) 3 1; b 192 215 223; b 2
	  b 224 247 223 192 215 255 224 215 223 0 192 215 223; } \
		> "$out/$name-latin1"
done
{ b $((KMP + ICASE + BYTES)) 2 0; b 255 0; b 0 255 0 223 255 0; } \
	> "$out/kmp-binary"

# fsm: the article, zero-width matches, classes, and invalid tokens
{ b $FSM 8 2; tok $WILDCARD $HEAD 0; spec chicken; b 15 7; s "$A"; } \
	> "$out/fsm-article"
{ b $((FSM + KERNEL)) 3 1; tok $WILDCARD $HEAD 0; spec aa; b 1; s aaaa; } \
	> "$out/fsm-aa-in-aaaa"
{ b $((FSM + BYTES)) 1 0; tok $SPECIFIC $ANY 97; s bbb; } \
	> "$out/fsm-lone-any"
{ b $FSM 2 0; tok $WILDCARD $HEAD 0; tok $SPECIFIC $ANY 97; s bbab; } \
	> "$out/fsm-head-any"
{ b $((FSM + BYTES)) 2 0; tok $WILDCARD $HEAD 0; tok $SPECIFIC $PERHAPS 120
  s axxbx; } > "$out/fsm-perhaps"
{ b $FSM 5 3; tok $WILDCARD $HEAD 0; tok $ALPHA $MULTI 0
  tok $SPACE $SINGLE 0; tok $DIGIT $MULTI 0; tok $PUNCT $PERHAPS 0
  b 3 5 2; s "abc 123, x 9 Zz 42!"; } > "$out/fsm-classes"
{ b $FSM 4 1; tok $ALNUM $HEAD 0; tok $XDIGIT $MULTI 0; tok $UPPER $ANY 0
  tok $LOWER $SINGLE 0; b 6; s "zz0fA9Bc deadBEEFx"; } > "$out/fsm-hex"
{ b $((FSM + BYTES)) 3 0; tok $PRINT $HEAD 0; tok $GRAPH $MULTI 0
  tok $CNTRL $SINGLE 0; b 32 33 10 9 65 66 0 127 160 161; } \
	> "$out/fsm-cntrl"
{ b $FSM 2 0; tok $ASCII $HEAD 0; tok $SPECIFIC $SINGLE 233
  b 97 98 233 128 233; } > "$out/fsm-latin1"
{ b $FSM 1 0; tok $WILDCARD $HEAD 0; s abc; } > "$out/fsm-bad-head-alone"
{ b $FSM 2 0; tok $SPECIFIC $SINGLE 97; tok $WILDCARD $HEAD 0; s abc; } \
	> "$out/fsm-bad-head-second"
{ b $FSM 1 0; tok 14 $SINGLE 97; s abc; } > "$out/fsm-bad-type"
{ b $FSM 1 0; tok $SPECIFIC 5 97; s abc; } > "$out/fsm-bad-recur"
{ b $FSM 1 0; b 0 1 0 97; s abc; } > "$out/fsm-bad-raw-type"
{ b $((FSM + RAW)) 5 0; b 0 0 0 97 0; s abc; } > "$out/fsm-bad-length"
{ b $((FSM + RAW)) 8 0; b 1 0 4 0 0 0 0 97; s "bba"; } > "$out/fsm-raw"
{ b $((FSM + ICASE)) 1 0; tok $SPECIFIC $SINGLE 97; s abc; } \
	> "$out/fsm-bad-icase"
{ b $FSM 0 0; s abc; } > "$out/fsm-empty"

# sets (AUTO + 1: "ac", AUTO + 2: "auto"; AUTO + 3: "auto", TS_OVERLAP):
# set NAME CONTROL FLAGS SIZES DATA PATTERN...; FLAGS 1 is TS_OVERLAP
SET_AC=$((AUTO + 1)) SET_AUTO=$((AUTO + 2)) AUTO_OVERLAP=$((AUTO + 3))
set_case() {
	name=$1 ctl=$2 flags=$3 sizes=$4 data=$5
	shift 5
	n=0
	for _ in $sizes; do n=$((n + 1)); done
	# shellcheck disable=SC2086
	{ b "$ctl" "$#" "$n" "$flags"
	  for p in "$@"; do b "${#p}"; s "$p"; done
	  b $sizes; s "$data"; } > "$out/$name"
}
set_case set-ushers "$SET_AC" 0 "2 1 3" "ushers his hers" he she his hers
set_case set-ushers-overlap "$SET_AC" 1 "" "ushers his hers" he she his hers
set_case set-nested-bytes $((SET_AC + BYTES)) 1 "" "aaaaab" a aa aaa aab b
set_case set-duplicates-icase $((SET_AUTO + ICASE)) 1 "3 3" "abABab" \
	ab AB ab Ab b
set_case set-leftmost-longest "$SET_AUTO" 0 "" "abcd bcd cd" bc abcd cd bcde
set_case set-kernel-style $((SET_AC + KERNEL)) 0 "1 2 3 4" \
	"$A" dance the funky chicken ick
set_case set-empty-pattern "$SET_AC" 0 "" abc a "" b
set_case set-none "$SET_AC" 0 "" abc
# teddy (FLAGS bits 1-2: 1 "teddy", 2 "teddy_scalar", 3 "teddy_ssse3")
set_case teddy-ushers "$SET_AC" 2 "2 1 3" "ushers his hers" he she his hers
set_case teddy-nested-bytes $((SET_AC + BYTES)) 3 "" "aaaaab" a aa aaa aab b
set_case teddy-scalar-icase $((SET_AC + ICASE)) 5 "3 3" "abABab" \
	ab AB ab Ab b
set_case teddy-ssse3-long $((SET_AC + BYTES)) 7 "" \
	"xxabcdefghijabcdefghijklmnopqrstuvwxyzAB" \
	abcdefghijklmnopqrstuvwxyz abcd bcdefghij cd
# FLAGS bit 3 (8): lengths from 2 (the length byte is the length minus 2), so
# that 70 patterns of 3 to 6 letters have ac's prefilter
set_case_from2() {
	name=$1 ctl=$2 flags=$3 sizes=$4 data=$5
	shift 5
	n=0
	for _ in $sizes; do n=$((n + 1)); done
	# shellcheck disable=SC2086
	{ b "$ctl" "$#" "$n" "$flags"
	  for p in "$@"; do b $((${#p} - 2)); s "$p"; done
	  b $sizes; s "$data"; } > "$out/$name"
}
prefilter_pats=""
i=0
while [ $i -lt 70 ]; do
	p="" j=$i k=0
	while [ $k -lt $((3 + i % 4)) ]; do
		if [ $((j % 2)) -eq 1 ]; then p="${p}b"; else p="${p}a"; fi
		j=$((j / 2 + i)) k=$((k + 1))
	done
	prefilter_pats="$prefilter_pats $p"
	i=$((i + 1))
done
# shellcheck disable=SC2086
set_case_from2 set-prefilter "$SET_AC" 9 "5 7 1 30" \
	"xxabaxxbbabxcabbaxxxaaab yyy bab abba xaaaax" $prefilter_pats
# shellcheck disable=SC2086
set_case_from2 set-prefilter-icase $((SET_AC + ICASE)) 8 "" \
	"xxABaxxbBabxcabbaxxxAAab yyy bab aBBa xaaaax" $prefilter_pats
lit auto-overlap-aa $((AUTO_OVERLAP + BYTES)) aa "" aaaa

# streams: a block size byte / 64 adds a 0-byte write before the block (1)
# and a refused write while its matches wait (2): sizes 65 + n, 128 + n
set_case stream-ab-abc "$SET_AC" 0 "66 129 65 1 192" "xabcabxab" ab abc
set_case stream-teddy-overlap "$SET_AC" 3 "130 65 192 1" "ushers his hers" \
	he she his hers
lit kmp-stream-busy "$KMP" aa "193 129 64" aaaaaaaaa
lit rb-avx2-stream-icase $((RB_AVX2 + ICASE)) abcab "131 66 129" \
	"xABCABCABcabx"
lit shiftor-stream-empty-writes "$SHIFTOR" ab "64 64 64 65" "abababab"
