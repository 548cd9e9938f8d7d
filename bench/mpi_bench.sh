#!/bin/sh
# mpi_bench.sh - tsgrep-mpi under `mpirun -np 2` against tsgrep -j 2 and
# -j 1, on the benchmark's corpus (one file) and on the tree of
# tree_bench.sh (both made by `make bench` before this runs), and the time
# rank 0 takes per shard hand-out.  Run by `make bench`; docs/cluster.md.
#
# usage: mpi_bench.sh BUILD [quick]
#
# The MPI job's own start and end (mpirun launching the ranks, MPI_Init,
# MPI_Finalize: about 0.7 s here) are timed apart, on an empty file, and
# the ratio is shown with and without them.
# Wall-clock medians over rounds that run each command once in turn (the
# load of a shared machine falls on all alike).  Nothing is asserted about
# speed; the run fails when the outputs differ.
set -eu
build=$1
quick=${2:-}
tsgrep=$build/bin/tsgrep
mpi=$build/bin/tsgrep-mpi
corpus=$build/bench/corpus.txt
tree=$build/bench/tree${quick:+-quick}
rounds=${MPI_BENCH_ROUNDS:-5}
[ -n "$quick" ] && rounds=1
pat=pthread_mutex_lock
for f in "$tsgrep" "$mpi" "$corpus" "$tree"; do
	[ -e "$f" ] || { echo "mpi_bench: $f is missing" >&2; exit 1; }
done
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 \
	OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no 2 s wait for Open MPI's kill time-out after a job that exits 1
export OMPI_MCA_odls_base_sigkill_timeout=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "$pat" >"$tmp/one-line"

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one: NAME CMD... : its time appended to $tmp/NAME.t, output kept
one() {
	name=$1
	shift
	t0=$(now)
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || true
	t1=$(now)
	echo "$t1 - $t0" | bc >>"$tmp/$name.t"
}

bench() {
	what=$1
	shift
	rm -f "$tmp"/*.t
	r=0
	while [ $r -lt "$rounds" ]; do
		one j1 "$tsgrep" -j 1 "$@"
		one j2 "$tsgrep" -j 2 "$@"
		TSGREP_MPI_STATS=1 one mpi mpirun -q --oversubscribe -np 2 \
			-x TSGREP_MPI_STATS "$mpi" "$@"
		# the job's start and end alone: a one-line file (that
		# matches: a non-zero exit status costs Open MPI's job abort)
		one start mpirun -q --oversubscribe -np 2 "$mpi" -c "$pat" \
			"$tmp/one-line"
		r=$((r + 1))
	done
	for n in j2 mpi; do
		cmp -s "$tmp/j1.out" "$tmp/$n.out" || {
			echo "mpi_bench: $what: $n's output differs" >&2; exit 1; }
	done
	j1=$(median <"$tmp/j1.t")
	j2=$(median <"$tmp/j2.t")
	m=$(median <"$tmp/mpi.t")
	st=$(median <"$tmp/start.t")
	ho=$(sed -n 's/^tsgrep-mpi: //p' "$tmp/mpi.err")
	printf '%s\n  tsgrep -j1 %.3f s, -j2 %.3f s; mpirun -np 2 tsgrep-mpi %.3f s = %.2fx -j2 (job start+end alone %.3f s; without it %.2fx -j2); rank 0: %s\n' \
		"$what" "$j1" "$j2" "$m" "$(echo "$m / $j2" | bc -l)" "$st" \
		"$(echo "($m - $st) / $j2" | bc -l)" "$ho"
}

echo "mpi_bench: $rounds round(s), medians"
bench "corpus $(du -m "$corpus" | cut -f1) MiB, -c" -c "$pat" "$corpus"
bench "tree $(find "$tree" -type f | wc -l) files, -r -c" -r -c "$pat" "$tree"
bench "tree, -r -n" -r -n "$pat" "$tree"
