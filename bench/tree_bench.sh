#!/bin/sh
# tree_bench.sh - tsgrep -r against grep -r and rg over a generated tree
# (bench/tree/tree_gen.c: 12,000 small files, large text files, object-like
# binaries, deep directories, a 320 MiB pack), and the pack alone against
# grep.  Run by `make bench`; see docs/performance.md.
#
# usage: tree_bench.sh TSGREP TREE_GEN DIR [--quick]
#
# Timings are wall-clock medians over rounds that run every command once
# in turn, so that the load of a shared machine falls on all of them
# alike; CPU time (user + system) is shown beside them.  Nothing is
# asserted about speed: the run fails only when tsgrep's counts differ
# from grep's (per file, -r -c and -r -n line counts).  --quick: a small
# tree and one round, a few seconds.
set -eu

tsgrep=$1
gen=$2
dir=$3
quick=${4:-}
pat=pthread_mutex_lock
rounds=${TREE_BENCH_ROUNDS:-7}
[ "$quick" = --quick ] && rounds=1

# the tree is made once per generator and size
stamp="$dir.stamp"
want="$(cksum <"$gen") $quick"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	rm -rf "$dir" "$stamp"
	echo "tree_bench: generating $dir${quick:+ (quick)}"
	# shellcheck disable=SC2086 # no argument without --quick
	"$gen" "$dir" $quick
	echo "$want" >"$stamp"
fi
pack="$dir/objects/pack-0001.pack"
nfiles=$(find "$dir" -type f | wc -l)
mbytes=$(du -sm "$dir" | cut -f1)
packmb=$(du -m "$pack" | cut -f1)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have_rg=0
command -v rg >/dev/null 2>&1 && have_rg=1
gnu_time=
/usr/bin/time -f %e true >/dev/null 2>&1 && gnu_time=/usr/bin/time

# ---- counts: tsgrep must agree with grep -------------------------------
fail=0
check() {
	# $1: what, $2: tsgrep's own options, then the options of both;
	# outputs compared as sorted lines
	what=$1
	extra=$2
	shift 2
	# shellcheck disable=SC2086 # extra is split on purpose
	"$tsgrep" $extra "$@" >"$tmp/t" 2>/dev/null || true
	grep "$@" >"$tmp/g" 2>/dev/null || true
	sort "$tmp/t" >"$tmp/ts"
	sort "$tmp/g" >"$tmp/gs"
	if cmp -s "$tmp/ts" "$tmp/gs"; then
		echo "tree_bench: counts agree: $what ($(wc -l <"$tmp/g") lines)"
	else
		echo "tree_bench: COUNTS DIFFER: $what"
		diff "$tmp/gs" "$tmp/ts" | head -5
		fail=1
	fi
}
check "-r -c -j 1" "-j 1" -r -c "$pat" "$dir"
check "-r -c -j 2" "-j 2" -r -c "$pat" "$dir"
check "-r -n -j 2" "-j 2" -r -n "$pat" "$dir"
check "-c pack" "" -c "$pat" "$pack"

# ---- timings --------------------------------------------------------------
# One command line per entry: label|command
cat >"$tmp/cmds" <<EOF
tsgrep -r -c -j 1|$tsgrep -j 1 -r -c $pat $dir
tsgrep -r -c -j 2|$tsgrep -j 2 -r -c $pat $dir
grep -r -c|grep -r -c $pat $dir
EOF
# rg -uuu searches binary files through, as grep -c and tsgrep -c must
# (same counts); rg -uu stops a binary file at its first NUL in a tree
# walk, so it reads less of the pack and counts one line less.
if [ $have_rg = 1 ]; then
	cat >>"$tmp/cmds" <<EOF
rg -uuu -c -j 1|rg -j 1 -uuu -c $pat $dir
rg -uuu -c -j 2|rg -j 2 -uuu -c $pat $dir
rg -uu -c -j 2|rg -j 2 -uu -c $pat $dir
EOF
fi
cat >>"$tmp/cmds" <<EOF
tsgrep -r -n -j 2|$tsgrep -j 2 -r -n $pat $dir
grep -r -n|grep -r -n $pat $dir
tsgrep -c pack|$tsgrep -c $pat $pack
grep -c pack|grep -c $pat $pack
EOF
[ $have_rg = 1 ] && echo "rg -uuu -c pack|rg -uuu -c $pat $pack" >>"$tmp/cmds"

# run_once N COMMAND: appends "wall cpu" to $tmp/time.N (wall from the
# clock in ns, CPU from GNU time if there is one).  Output goes to a file,
# not /dev/null: GNU grep stops each file at its first match when its
# output is /dev/null, which would time less work than the others do.
run_once() {
	n=$1
	shift
	start=$(date +%s%N)
	if [ -n "$gnu_time" ]; then
		$gnu_time -f "%U %S" -o "$tmp/one" "$@" >"$tmp/out" 2>&1 ||
			true
	else
		echo "- -" >"$tmp/one"
		"$@" >"$tmp/out" 2>&1 || true
	fi
	end=$(date +%s%N)
	awk -v ns=$((end - start)) '{ printf "%.3f %s\n", ns / 1e9,
		$1 == "-" ? "-" : sprintf("%.2f", $1 + $2) }' "$tmp/one" \
		>>"$tmp/time.$n"
}

ncmds=$(wc -l <"$tmp/cmds")
round=0
while [ $round -lt "$rounds" ]; do
	n=0
	while IFS='|' read -r label cmd; do
		n=$((n + 1))
		# shellcheck disable=SC2086 # the command line is split on purpose
		run_once $n $cmd
	done <"$tmp/cmds"
	round=$((round + 1))
done

median() { # column $2 of file $1
	sort -n -k "$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
		END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "tree: $nfiles files, $mbytes MB (a $packmb MB pack in it);" \
	"pattern $pat; median of $rounds round(s); $(nproc) cores"
printf '%-22s %10s %10s\n' "command" "wall s" "cpu s"
n=0
while IFS='|' read -r label cmd; do
	n=$((n + 1))
	wall=$(median "$tmp/time.$n" 1)
	cpu=$(median "$tmp/time.$n" 2)
	echo "$label" >"$tmp/label.$n"
	echo "$wall" >"$tmp/wall.$n"
	printf '%-22s %10s %10s\n' "$label" "$wall" "$cpu"
done <"$tmp/cmds"

wall_of() { # the median wall time of the entry labelled $1
	n=0
	while [ $n -lt "$ncmds" ]; do
		n=$((n + 1))
		if [ "$(cat "$tmp/label.$n")" = "$1" ]; then
			cat "$tmp/wall.$n"
			return
		fi
	done
	echo 0
}

ratio() { # label: $1 / $2, target at most $3
	awk -v a="$(wall_of "$2")" -v b="$(wall_of "$3")" -v l="$1" \
		-v t="$4" 'BEGIN { if (b <= 0) { print l ": n/a"; exit }
		r = a / b; printf "%s: %.2fx (%s)\n", l, r,
		r <= t ? "met" : "NOT MET" }'
}

echo
if [ $have_rg = 1 ]; then
	ratio "tsgrep -r -j 2 / rg -uuu -j 2 (same counts; target <= 1.0)" \
		"tsgrep -r -c -j 2" "rg -uuu -c -j 2" 1.0
	ratio "tsgrep -r -j 1 / rg -uuu -j 1 (same counts; target <= 1.0)" \
		"tsgrep -r -c -j 1" "rg -uuu -c -j 1" 1.0
	ratio "tsgrep -r -j 2 / rg -uu -j 2 (rg stops binaries early)" \
		"tsgrep -r -c -j 2" "rg -uu -c -j 2" 1.0
fi
ratio "tsgrep -r -j 2 / -j 1 (target < 1.0)" "tsgrep -r -c -j 2" \
	"tsgrep -r -c -j 1" 0.999
ratio "tsgrep -r / grep -r" "tsgrep -r -c -j 2" "grep -r -c" 1.0
ratio "tsgrep -c / grep -c on the pack (target <= 1.0)" "tsgrep -c pack" \
	"grep -c pack" 1.0
[ $fail = 0 ] || echo "tree_bench: FAILED: tsgrep and grep disagree"
exit $fail
