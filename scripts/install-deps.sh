#!/bin/sh
# Install what building and testing textsearch needs, on Debian 12 (or a
# derivative), skipping what is already there.  Safe to run again.
#
#   scripts/install-deps.sh          build + test needs (libpcap for tspkt;
#                                    ngrep, tcpdump and tshark, which its
#                                    tests compare against: tshark for TCP
#                                    reassembly, `tshark -z follow,tcp,raw`;
#                                    locales, the charmaps and locale
#                                    sources from which tsgrep's tests
#                                    build single-byte locales with
#                                    localedef; Open MPI for tsgrep-mpi,
#                                    tspkt-mpi and their tests, Slurm and munge for
#                                    the srun test)
#   scripts/install-deps.sh --fuzz   also clang and its libFuzzer runtime
#   scripts/install-deps.sh --ci     what .ci/run needs: --fuzz's, and
#                                    clang-format for make format-check
#   scripts/install-deps.sh --bench  also Hyperscan, ripgrep and hyperfine,
#                                    the comparisons of `make bench` (which
#                                    runs without them and says so)
set -eu

need="make gcc libc6-dev pkg-config libcmocka-dev libpcap-dev ngrep tcpdump
      tshark unicode-data locales openmpi-bin libopenmpi-dev slurm-wlm
      munge"
case "${1:-}" in
--fuzz) need="$need clang libclang-rt-14-dev" ;;
--ci) need="$need clang libclang-rt-14-dev clang-format" ;;
--bench) need="$need libhyperscan-dev ripgrep hyperfine" ;;
"") ;;
*) echo "usage: $0 [--fuzz|--ci|--bench]" >&2; exit 2 ;;
esac

missing=""
for p in $need; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -n "$missing" ] || exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing:$missing (no apt-get here: install them" \
	     "with your package manager)" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo="sudo"
	else
		echo "install-deps: missing:$missing; run as root or install" \
		     "sudo" >&2
		exit 1
	fi
fi
echo "install-deps: installing$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
