#!/bin/sh
# The README's two commands:
#   ./quickstart.sh demo    search the sample data shipped in samples/
#   ./quickstart.sh test    build and run the whole test suite (make check)
# Each first installs what it lacks (scripts/install-deps.sh).
set -eu
cd "$(dirname "$0")"
jobs=$(nproc 2>/dev/null || echo 2)
case "${1:-}" in
demo)
	scripts/install-deps.sh
	make -s -j"$jobs" all
	make -s demo
	;;
test)
	scripts/install-deps.sh
	make -j"$jobs" all
	make check
	;;
*)
	echo "usage: $0 demo|test" >&2
	exit 2
	;;
esac
