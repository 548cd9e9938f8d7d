#!/bin/sh
# tsgrep-mpi under `mpirun -np N` against tsgrep on the same options and
# operands: stdout byte for byte, stderr (tsgrep's messages, without the
# --stats timings) and the exit status.  Usage: tsgrep_mpi.sh BUILD NP DATA
# (DATA from gen_tree.sh).  Prints each differing case and exits 1.
set -u
build=$(cd "$1" && pwd) || exit 1
np=$2
data=$3
tsgrep=$build/bin/tsgrep
mpi=$build/bin/tsgrep-mpi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_env.sh"
need tsgrep_mpi mpirun "$tsgrep" "$mpi"
# Files of 2 ranges and more are split: with 2 reads a range (192 KiB),
# big.txt, late-nul.txt and many-lines.txt are, with lines across the
# ranges' ends, the 1.5 MiB line over several.
export TSGREP_MPI_RANGE=196608
out=$(mktemp -d /tmp/tsgrep-mpi-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail=0
cases=0

# --stats: the counts, not the timings
strip_stats() {
	grep -v -e ' seconds$' -e ' MB/s$' "$1" > "$1.s" || true
	mv "$1.s" "$1"
}

# run_case ARGS...: in $data, tsgrep and tsgrep-mpi with ARGS, standard
# input from $stdin
stdin=/dev/null
run_case() {
	cases=$((cases + 1))
	(cd "$data" && "$tsgrep" "$@" > "$out/want" 2> "$out/want.err"
	 echo $? > "$out/want.rc") < "$stdin"
	(cd "$data" && ASAN_OPTIONS="$mpi_asan" LSAN_OPTIONS="$mpi_lsan" \
		timeout 300 mpirun -q --oversubscribe -np "$np" \
		"$mpi" "$@" > "$out/got" 2> "$out/got.err"
	 echo $? > "$out/got.rc") < "$stdin"
	strip_stats "$out/want.err"
	strip_stats "$out/got.err"
	strip_mpirun_noise "$out/got.err"
	for f in "" .err .rc; do
		if ! cmp -s "$out/want$f" "$out/got$f"; then
			echo "tsgrep_mpi: np=$np differs ($f): $*" >&2
			diff "$out/want$f" "$out/got$f" | head -5 >&2
			fail=1
			return
		fi
	done
}

# (the backslashes continue the line for eval)
matrix='"" "-n" "-b" "-nb" "-c" "-l" "-L" "-v -c" "-m 2" "-m 1 -n" \
	"-C 2 -n" "-A 1" "-B 3 -n" "-A 2 -m 1" "--json" "-o -b" "-i -n" \
	"-w -c" "-x -c" "-h" "-H -c" "-s" "-q" "-l -Z" "--color=always -n" \
	"--count-matches" "-v -n -C 1" "--stats -c" "-a -n" \
	"--binary-files=without-match -n" "-e Needle -e delta -n"'
# one rank has no hand-out: a few cases are enough there
[ "$np" -gt 1 ] || matrix='"" "-nb" "-c" "-L" "-C 2 -n" "--json" "--stats -c"'
eval "set -- $matrix" || exit 1
[ $# -ge 7 ] || { echo "tsgrep_mpi: option matrix unread" >&2; exit 1; }
for opts in "$@"; do
	# shellcheck disable=SC2086
	run_case $opts -r needle tree big.txt many-lines.txt late-nul.txt
done
# without -r: a directory operand is read (and fails) as grep does
for opts in "" "-c" "-L" "-n -C 1"; do
	# shellcheck disable=SC2086
	run_case $opts needle big.txt late-nul.txt many-lines.txt tree/empty1.txt \
		tree/d2/bin.dat tree/d4/nul-only.dat tree/d1/dangling tree/d0
done
# no match at all, a missing operand, -q with an error after a match
run_case zzzz-nothing big.txt tree/empty1.txt
run_case needle missing-file big.txt
run_case -q needle big.txt missing-file
run_case -s needle missing-file big.txt
run_case -rn needle .
# patterns from standard input reach every rank (rank 0 sends them)
printf 'delta\nNEEDLE\n' > "$out/patterns"
stdin=$out/patterns
run_case -n -f - -r tree big.txt
stdin=/dev/null
# reading 4 GiB of zeros takes seconds: with two ranks only
if [ -e "$data/sparse.dat" ] && [ "$np" -eq 2 ]; then
	run_case -n needle sparse.dat big.txt
	run_case -a -b -o -n needle sparse.dat
	run_case -c needle sparse.dat tree/d2/bin.dat
fi
# the files above were split, the ranges' output put back together
ranges=$(cd "$data" && TSGREP_MPI_STATS=1 mpirun -q --oversubscribe -np "$np" \
	"$mpi" -c needle big.txt late-nul.txt many-lines.txt 2>&1 >/dev/null |
	sed -n 's/.* 3 files split in \([0-9]*\) ranges$/\1/p')
if [ "${ranges:-0}" -lt 30 ]; then
	echo "tsgrep_mpi: np=$np: big files not split (ranges: ${ranges:-none})" >&2
	fail=1
fi
echo "tsgrep_mpi: np=$np: $cases cases, $([ $fail = 0 ] && echo all equal || echo some differ)"
exit $fail
