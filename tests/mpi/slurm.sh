#!/bin/sh
# The tsgrep-mpi job through Slurm's srun on a one-node cluster that this
# script starts and stops itself (slurm_cluster.sh).  The
# output, messages and exit status of `srun -n NP tsgrep-mpi ...` must be
# tsgrep's.  Usage: slurm.sh BUILD DATA (DATA from gen_tree.sh).
set -u
build=$(cd "$1" && pwd) || exit 1
data=$2
tsgrep=$build/bin/tsgrep
mpi=$build/bin/tsgrep-mpi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/slurm_cluster.sh"

. "$here/mpi_env.sh"
fail=0
cases=0
run_case() {
	np=$1
	shift
	cases=$((cases + 1))
	(cd "$data" && "$tsgrep" "$@" >"$d/want" 2>"$d/want.err"
	 echo $? >"$d/want.rc") </dev/null
	(cd "$data" && ASAN_OPTIONS="$mpi_asan" LSAN_OPTIONS="$mpi_lsan" \
		timeout 300 srun --overcommit -N 1 -n "$np" \
		--kill-on-bad-exit=0 "$mpi" "$@" >"$d/got" 2>"$d/got.err"
	 echo $? >"$d/got.rc") </dev/null
	for f in "" .rc; do
		cmp -s "$d/want$f" "$d/got$f" || {
			echo "slurm: srun -n $np differs ($f): $*" >&2
			diff "$d/want$f" "$d/got$f" | head -5 >&2
			head -5 "$d/got.err" >&2
			fail=1
			return; }
	done
	# srun adds its own notes on a non-zero exit: tsgrep's come first
	grep -v '^srun: ' "$d/got.err" >"$d/got.err2" || true
	cmp -s "$d/want.err" "$d/got.err2" || {
		echo "slurm: srun -n $np messages differ: $*" >&2
		diff "$d/want.err" "$d/got.err2" | head -5 >&2
		fail=1; }
}
for np in 1 2 4; do
	run_case "$np" -rn needle tree big.txt
	run_case "$np" -c -C 1 needle tree/d0 tree/d1/dangling big.txt
done
run_case 2 -l zzzz-nothing big.txt
echo "slurm: $cases srun cases, $([ $fail = 0 ] && echo all equal || echo some differ)"
exit $fail
