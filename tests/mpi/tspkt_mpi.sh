#!/bin/sh
# tspkt-mpi against tspkt: each case runs tspkt on every capture alone and
# puts the runs together as tspkt-mpi(1) says, then compares with
# `mpirun -np N tspkt-mpi` (or srun -n 1, 2, 4 on a one-node Slurm cluster
# that slurm_cluster.sh starts and stops): stdout byte for byte, messages
# and exit status.  Put together: stdout lines merged by their time (sort
# -m: each capture's order kept, ties in -r order), cut after the NUMth
# match with -n NUM; each capture's messages in -r order, a line once, then
# the counter lines added up (max-*: the largest; size, hz: as they are);
# exit 2 on any error (0 with -q and a match), else 0 on any match, else 1;
# -w: each run's pcap file, merged by record time (ties in -r order).
# Usage: tspkt_mpi.sh BUILD NP|srun DATA (DATA from test_tspkt_mpi).
set -u
build=$(cd "$1" && pwd) || exit 1
how=$2
data=$3
tspkt=$build/bin/tspkt
mpi=$build/bin/tspkt-mpi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_env.sh"
need tspkt_mpi "$tspkt" "$mpi"
if [ "$how" = srun ]; then
	. "$here/slurm_cluster.sh"
	out=$d/cases
	mkdir "$out" || exit 1
else
	need tspkt_mpi mpirun
	out=$(mktemp -d /tmp/tspkt-mpi-test.XXXXXX)
	trap 'rm -rf "$out"' EXIT
fi
tab=$(printf '\t')
fail=0
cases=0
wfile="" # -w: the file tspkt-mpi writes in $data

# merge_pcaps OUT IN...: the INs' records by time, each IN's order kept,
# ties in IN order; no OUT when no IN exists
merge_pcaps() {
	python3 - "$@" <<'PY'
import heapq, struct, sys
out, ins = sys.argv[1], sys.argv[2:]
head, lists = None, []
for path in ins:
    try:
        data = open(path, "rb").read()
    except FileNotFoundError:
        continue
    if head is None:
        head = data[:24]
    recs, at = [], 24
    while at < len(data):
        sec, usec, cap, _ = struct.unpack_from("<IIII", data, at)
        recs.append(((sec, usec), data[at:at + 16 + cap]))
        at += 16 + cap
    lists.append(recs)
if head is not None:
    with open(out, "wb") as f:
        f.write(head)
        for _, rec in heapq.merge(*lists, key=lambda r: r[0]):
            f.write(rec)
PY
}

# want OPTS OPERANDS FILE...: tspkt on each FILE, put together
want() {
	opts=$1
	operands=$2
	shift 2
	n=0
	rm -f "$out"/w.*.pcap "$out/want.pcap"
	for f in "$@"; do
		n=$((n + 1))
		w=${wfile:+-w $out/w.$n.pcap}
		# shellcheck disable=SC2086
		(cd "$data" && "$tspkt" $opts $w -r "$f" $operands \
			>"$out/o.$n" 2>"$out/e.$n"
		 echo $? >"$out/rc.$n") </dev/null
		# the merge's key first: --json's ts_ns, or the text's time
		case " $opts " in
		*" --json "*)
			sed 's/^\(.*"ts_ns":\([0-9-]*\),.*\)$/\2\t\1/' \
				"$out/o.$n" >"$out/k.$n" ;;
		*)	sed 's/^\([^ ]*\) \(.*\)$/\1\t\1 \2/' "$out/o.$n" \
				>"$out/k.$n" ;;
		esac
	done
	# shellcheck disable=SC2046
	set -- $(seq -f "$out/k.%g" "$n")
	case " $opts " in
	*" --json "*) sort -m -s -t "$tab" -k1,1n "$@" ;;
	*) sort -m -s -t "$tab" -k1,1 "$@" ;;
	esac | cut -f2- | awk -v opts=" $opts " '
		BEGIN {
			max = 0
			if (match(opts, / -n [0-9]+ /))
				max = substr(opts, RSTART + 4, RLENGTH - 5) + 0
			json = index(opts, " --json ") > 0
		}
		{ print }
		max && (!json || /^\{"type":"match"/) && ++seen >= max { exit }
	' >"$out/want"
	# shellcheck disable=SC2046
	set -- $(seq -f "$out/e.%g" "$n")
	awk '
		function counter(line) {
			return line ~ /^tspkt: ([a-z-]+: )?[a-z-]+=[0-9]+( [a-z-]+=[0-9]+)*$/ ||
			       line ~ /^tspkt: class [^ ]+: [0-9]+$/
		}
		!counter($0) { if (!seen[$0]++) print; next }
		{
			nw = split($0, w, " ")
			t = ""
			k = 0
			for (j = 1; j <= nw; j++) {
				eq = index(w[j], "=")
				if (eq || (j == nw && w[j] ~ /^[0-9]+$/)) {
					v[++k] = substr(w[j], eq + 1) + 0
					name[k] = substr(w[j], 1, eq - 1)
					w[j] = substr(w[j], 1, eq) "#"
				}
				t = t (j > 1 ? " " : "") w[j]
			}
			if (!(t in nv)) {
				order[++nt] = t
				nv[t] = k
				for (j = 1; j <= k; j++)
					sum[t, j] = v[j]
				next
			}
			for (j = 1; j <= k; j++) {
				if (name[j] ~ /^max-/) {
					if (v[j] > sum[t, j])
						sum[t, j] = v[j]
				} else if (name[j] != "size" && name[j] != "hz") {
					sum[t, j] += v[j]
				}
			}
		}
		END {
			for (o = 1; o <= nt; o++) {
				t = order[o]
				line = ""
				k = 0
				nw = split(t, w, " ")
				for (j = 1; j <= nw; j++) {
					if (w[j] ~ /#$/)
						w[j] = substr(w[j], 1, length(w[j]) - 1) sum[t, ++k]
					line = line (j > 1 ? " " : "") w[j]
				}
				print line
			}
		}
	' "$@" >"$out/want.err"
	err=0 match=0
	i=0
	while [ $i -lt $n ]; do
		i=$((i + 1))
		case $(cat "$out/rc.$i") in
		0) match=1 ;;
		1) ;;
		*) err=1 ;;
		esac
	done
	case " $opts " in
	*" -q "*) [ $match = 0 ] || err=0 ;;
	esac
	if [ $err = 1 ]; then echo 2; elif [ $match = 1 ]; then echo 0
	else echo 1; fi >"$out/want.rc"
	# shellcheck disable=SC2046
	[ -z "$wfile" ] ||
		merge_pcaps "$out/want.pcap" $(seq -f "$out/w.%g.pcap" "$n")
}

# got NP OPTS OPERANDS FILE...: tspkt-mpi on the FILEs
got() {
	np=$1
	opts="$2${wfile:+ -w $wfile}"
	operands=$3
	shift 3
	[ -z "$wfile" ] || rm -f "$data/$wfile"
	for f in "$@"; do
		set -- "$@" -r "$f"
		shift
	done
	# shellcheck disable=SC2086
	if [ "$how" = srun ]; then
		(cd "$data" && ASAN_OPTIONS="$mpi_asan" LSAN_OPTIONS="$mpi_lsan" \
			timeout 300 srun --overcommit -N 1 -n "$np" \
			--kill-on-bad-exit=0 "$mpi" $opts "$@" $operands \
			>"$out/got" 2>"$out/got.all"
		 echo $? >"$out/got.rc") </dev/null
		# srun adds its own notes on a non-zero exit
		grep -v '^srun: ' "$out/got.all" >"$out/got.err"
	else
		(cd "$data" && ASAN_OPTIONS="$mpi_asan" LSAN_OPTIONS="$mpi_lsan" \
			timeout 300 mpirun -q --oversubscribe -np "$np" \
			"$mpi" $opts "$@" $operands >"$out/got" \
			2>"$out/got.err"
		 echo $? >"$out/got.rc") </dev/null
		strip_mpirun_noise "$out/got.err"
	fi
}

compare() {
	if [ -n "$wfile" ]; then
		[ -s "$out/want.pcap" ] || {
			echo "tspkt_mpi: tspkt -w wrote nothing: $2" >&2
			fail=1
			return; }
		mv "$data/$wfile" "$out/got.pcap"
	fi
	for f in "" .err .rc ${wfile:+.pcap}; do
		if ! cmp -s "$out/want$f" "$out/got$f"; then
			echo "tspkt_mpi: $how: np=$1 differs ($f): $2" >&2
			diff "$out/want$f" "$out/got$f" | head -8 >&2
			fail=1
			return
		fi
	done
}

# run_case NP OPTS OPERANDS FILE...
run_case() {
	cases=$((cases + 1))
	np=$1
	shift
	want "$@"
	got "$np" "$@"
	compare "$np" "$*"
}

all="a.pcap b.pcap c.pcap empty.pcap"
broken="a.pcap cut.pcap missing.pcap bad.pcap b.pcap"
# case NAME: which ones run at which NP (each launch costs 0.7 s, one
# that exits non-zero 2 s more)
case_text() { run_case "$1" "" needle $all; }
case_json() { run_case "$1" "--json -f rules.txt" "" $all c.pcap; }
case_max() { run_case "$1" "-n 6 --json" needle $all; }
case_count() { run_case "$1" "-c -v" "needle udp" $all; }
case_quiet() { run_case "$1" "-q" needle missing.pcap c.pcap; }
case_broken() { run_case "$1" "" "needle udp" $broken; }
case_none() { run_case "$1" "" zzz-nothing a.pcap b.pcap; }

# -w: the matching packets, or the flows that matched, merged
case_write() {
	wfile=merged.pcap
	run_case "$1" "" needle $all c.pcap
	wfile=""
}
case_flows() {
	wfile=merged.pcap
	run_case "$1" "--json --write-flows" needle $all
	wfile=""
}

# what tspkt-mpi refuses: its message and exit 2, nothing on stdout
refused() {
	cases=$((cases + 1))
	: >"$out/want"
	echo "tspkt-mpi: -w with -n or -q is not supported: each capture" \
		"stops at its own count, so its packets are not the first of" \
		"the merge" >"$out/want.err"
	echo 2 >"$out/want.rc"
	got "$1" "-n 1 -w x.pcap" needle a.pcap b.pcap
	compare "$1" "-w -n refused"
	[ ! -e "$data/x.pcap" ] || { echo "tspkt_mpi: -w wrote" >&2; fail=1; }
}

case $how in
1) for c in text json max; do "case_$c" 1; done ;;
2) for c in text json max count quiet broken none write; do
	"case_$c" 2; done
   refused 2 ;;
4) for c in text json max count broken flows; do "case_$c" 4; done ;;
srun) case_text 2; case_broken 2; case_json 4 ;;
*) echo "tspkt_mpi: NP or srun, not $how" >&2; exit 1 ;;
esac
echo "tspkt_mpi: $how: $cases cases, $([ $fail = 0 ] && echo all equal || echo some differ)"
exit $fail
