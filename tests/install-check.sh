#!/bin/sh
# Install into a scratch prefix, then build examples/article.c (written from
# the article and the kernel's header only) with pkg-config against the
# installed library and run it: it must load the shiftor plugin from the
# installed plugin directory through TS_AUTOLOAD; and examples/stream.c, a
# push-mode stream; and examples/timer.c, a time-out on the timer wheel.
# Also checks the SONAME and
# that only public symbols are exported.
set -eu
prefix=$(mktemp -d /tmp/textsearch-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
make -s install PREFIX="$prefix" BUILD=build/install-check >/dev/null

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset TEXTSEARCH_PLUGIN_PATH || true
# build an example against the installed library
build_example() {
	cc -std=c11 -Wall -Wextra -Werror "examples/$1.c" \
		$(pkg-config --cflags --libs textsearch) \
		-Wl,-rpath,"$(pkg-config --variable=libdir textsearch)" \
		-o "$prefix/$1"
}
build_example article
"$prefix/article"
# and a push-mode stream
build_example stream
got=$(printf 'a needle, a needlework' | "$prefix/stream" needle)
[ "$got" = "$(printf '2-8\n12-18')" ] || {
	echo "install-check: examples/stream printed '$got'" >&2; exit 1; }

# and the timers
build_example timer
got=$("$prefix/timer")
[ "$got" = "$(printf 'pending: 1\nflow 1 expired, run at 70000 ms\nran: 1')" ] || {
	echo "install-check: examples/timer printed '$got'" >&2; exit 1; }

lib="$prefix/lib/libtextsearch.so"
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libtextsearch.so.3" ] || {
	echo "install-check: SONAME is '$soname'" >&2; exit 1; }
private=$(nm -D --defined-only "$lib" | awk '{print $3}' |
	grep -Ev '^(textsearch_|ts_|alloc_ts_config$|alloc_skb$|kfree_skb$|skb_)' |
	grep -Ev '^(timer_base_(create|destroy|bind|run)|timer_setup|add_timer|mod_timer|timer_pending|del_timer|try_to_del_timer_sync|del_timer_sync)$' \
	|| true)
[ -z "$private" ] || {
	echo "install-check: non-public symbols exported: $private" >&2
	exit 1; }
for f in include/textsearch.h include/textsearch_fsm.h include/textsearch_skb.h \
	include/textsearch_stream.h share/man/man3/textsearch_stream.3 \
	include/textsearch_timer.h share/man/man3/textsearch_timer.3 \
	lib/libtextsearch.a lib/textsearch/ts_shiftor.so \
	share/man/man3/textsearch.3; do
	[ -e "$prefix/$f" ] || {
		echo "install-check: $f not installed" >&2; exit 1; }
done
# the MPI programs and their pages, when the MPI compiler wrapper is here
if command -v mpicc >/dev/null 2>&1; then
	for f in bin/tsgrep-mpi share/man/man1/tsgrep-mpi.1 bin/tspkt-mpi \
		share/man/man1/tspkt-mpi.1; do
		[ -e "$prefix/$f" ] || {
			echo "install-check: $f not installed" >&2; exit 1; }
	done
fi
echo "install-check: installed library, pkg-config build and TS_AUTOLOAD ok"
