# The environment of the MPI tests' ranks, sourced by tsgrep_mpi.sh,
# slurm.sh and tspkt_mpi.sh (which set $here, this folder): the C locale,
# Open MPI as root and without its wait after a failed job, and for sanitizer builds Open MPI's own leaks and races
# unreported (its libraries only, lsan.supp and tsan.supp); the programs'
# own still are.  Ranks run with ASAN_OPTIONS="$mpi_asan"
# LSAN_OPTIONS="$mpi_lsan".

# need WHO [mpirun] PROGRAM...: exit 1, telling why as WHO, unless every
# PROGRAM is built (and mpirun installed, if named)
need() {
	who=$1
	shift
	for p in "$@"; do
		if [ "$p" = mpirun ]; then
			command -v mpirun >/dev/null 2>&1 || {
				echo "$who: mpirun not found" \
					"(scripts/install-deps.sh)" >&2
				exit 1; }
		else
			[ -x "$p" ] || { echo "$who: $p not built" >&2; exit 1; }
		fi
	done
}
export LC_ALL=C
[ "$(id -u)" -ne 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 \
	OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A job whose exit status is not 0 is aborted: Open MPI then waits out its
# kill time-out before it ends ranks that are done anyway (2 s a case).
export OMPI_MCA_odls_base_sigkill_timeout=0

# strip_mpirun_noise FILE: without that wait, mpirun's libevent may warn as
# the job ends ("[warn] Epoll MOD(1) on fd 28 failed. ... Bad file
# descriptor"): mpirun's own line, dropped from the ranks' stderr in FILE.
strip_mpirun_noise() {
	grep -v '^\[warn\] Epoll ' "$1" >"$1.n" || true
	mv "$1.n" "$1"
}
mpi_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
mpi_lsan="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$here/tsan.supp:print_suppressions=0"
