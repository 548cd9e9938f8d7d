# textsearch - plain GNU make, no configure step.
#
#   make                      library (static + shared), plugins, examples
#   make check                build and run every test
#   make check SANITIZE=address,undefined   (or SANITIZE=thread)
#   make demo                 search the shipped sample data
#   make fuzz [FUZZ_SECONDS=60]   libFuzzer run (clang)
#   make bench [BENCH_QUICK=1]    throughput table (docs/performance.md)
#   make install PREFIX=/usr/local DESTDIR=
#   make format / format-check    apply / check .clang-format (clang-format)
#
# Each configuration builds in its own folder (BUILD), so sanitizer and
# normal objects never mix.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PLUGINDIR  ?= $(LIBDIR)/textsearch
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

VERSION    := 3.1.0
SOVERSION  := 3

CC         ?= cc
FUZZ_CC    ?= clang
SANITIZE   ?=
FUZZ_SECONDS ?= 60

comma := ,
ifeq ($(SANITIZE),)
BUILD      ?= build/default
SANFLAGS   :=
# every symbol the library uses must come from its own dependencies
NO_UNDEFINED := -Wl,--no-undefined
else
# clang leaves the sanitizer runtime to the executable, so a sanitized
# shared library has undefined symbols by design
NO_UNDEFINED :=
BUILD      ?= build/san-$(subst $(comma),-,$(SANITIZE))
SANFLAGS   := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
              -fno-omit-frame-pointer
endif

CFLAGS     ?= -O2 -g
STD        := -std=c11 -D_POSIX_C_SOURCE=200809L
WARN       := -Wall -Wextra -Werror -Wshadow -Wpointer-arith \
              -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
ALL_CFLAGS := $(STD) $(WARN) $(CFLAGS) $(SANFLAGS) -Iinclude
# Functions on cache lines of their own: a stream's write of a few bytes
# runs through four short ones, whose placement alone (any edit moves it)
# made it cost up to 0.9 ns more or less.
LIB_CFLAGS := $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Isrc -I$(BUILD)/gen \
              -falign-functions=64
LDLIBS_LIB := -lpthread -ldl

LIB_SRC    := $(sort $(wildcard src/core/*.c src/algo/*.c src/providers/*.c \
                                src/skb/*.c src/timer/*.c))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
STATIC_LIB := $(BUILD)/lib/libtextsearch.a
SHARED_LIB := $(BUILD)/lib/libtextsearch.so.$(VERSION)
SONAME     := libtextsearch.so.$(SOVERSION)

HEADERS    := include/textsearch.h include/textsearch_fsm.h \
              include/textsearch_skb.h include/textsearch_stream.h \
              include/textsearch_timer.h

# Plugins are built the way a third party builds them: against a staged
# install, through pkg-config.
STAGE      := $(abspath $(BUILD)/stage)
STAGE_PC   := PKG_CONFIG_PATH=$(STAGE)/usr/lib/pkgconfig \
              PKG_CONFIG_SYSROOT_DIR=$(STAGE)
PLUGIN_DIRS := $(sort $(dir $(wildcard plugins/*/Makefile)))
TEST_PLUGIN_DIRS := $(sort $(dir $(wildcard tests/plugins/*/Makefile)))

# Programs: each folder tools/<name>/ builds $(BUILD)/bin/<name> from its .c
# files and those of tools/common/ (code the programs share), linked against
# the shared library found relative to the binary ($ORIGIN/../lib), so it
# runs both from the build folder and installed.
TOOL_NAMES := $(filter-out common mpi %-mpi,$(notdir $(patsubst %/,%,$(sort \
              $(dir $(wildcard tools/*/*.c))))))
TOOL_COMMON := $(wildcard tools/common/*.c tools/common/*.h)
TOOLS      := $(TOOL_NAMES:%=$(BUILD)/bin/%)
# what a tool links besides the library
PCAP_CFLAGS := $(shell pkg-config --cflags libpcap 2>/dev/null)
PCAP_LIBS   := $(shell pkg-config --libs libpcap 2>/dev/null || echo -lpcap)
TOOL_CFLAGS_tspkt := $(PCAP_CFLAGS)
TOOL_LIBS_tspkt   := $(PCAP_LIBS)
# MPI programs (tools/<name>-mpi/, docs/cluster.md): built with the MPI
# compiler wrapper when there is one (scripts/install-deps.sh installs Open
# MPI), skipped with a note when not.  The wrapper runs $(CC), so
# sanitizer builds stay one compiler.  tools/mpi/ is what they share.
MPICC      ?= mpicc
HAVE_MPI   := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes)
MPI_TOOL_NAMES := $(notdir $(patsubst %/,%,$(sort $(dir \
                  $(wildcard tools/*-mpi/*.c)))))
MPI_COMMON := $(wildcard tools/mpi/*.c tools/mpi/*.h)
ifeq ($(HAVE_MPI),yes)
MPI_TOOLS  := $(MPI_TOOL_NAMES:%=$(BUILD)/bin/%)
else
MPI_TOOLS  :=
endif
MANPAGES1  := $(wildcard docs/man/*.1)
MANPAGES3  := $(wildcard docs/man/*.3)

EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLES    := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)

TEST_SUPPORT_SRC := $(sort $(wildcard tests/support/*.c))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
TESTS      := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_CFLAGS := $(STD) -Wall -Wextra -Werror $(CFLAGS) $(SANFLAGS) \
               -Iinclude -Itests/support -Ifuzz \
               $(shell pkg-config --cflags cmocka 2>/dev/null)
TEST_LDLIBS := -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) \
               -ltextsearch $(shell pkg-config --libs cmocka 2>/dev/null \
               || echo -lcmocka) -lpthread

FUZZ_SRC   := fuzz/fuzz_algorithms.c
FUZZ_BUILD := build/fuzz

.PHONY: all lib tools plugins examples check demo fuzz install uninstall clean \
        stage test-plugins bench format format-check FORCE

all: lib tools plugins examples

lib: $(STATIC_LIB) $(SHARED_LIB)

# The installed plugin directory is compiled in; rewrite the header only when
# it changes, so `make install PREFIX=...` rebuilds what depends on it.
# Staging passes the outer value down, so it never rebuilds the library
# with the stage's plugin directory.
LIB_PLUGINDIR ?= $(PLUGINDIR)
$(BUILD)/gen/plugin_dir.h: FORCE
	@mkdir -p $(@D)
	@printf '#define TS_PLUGIN_DIR "%s"\n' '$(LIB_PLUGINDIR)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/obj/src/core/plugin.o: $(BUILD)/gen/plugin_dir.h

# Unicode simple case folding for TS_UTF8, generated from the Unicode
# Character Database (Debian: unicode-data, scripts/install-deps.sh).
UNICODE_CASEFOLDING ?= /usr/share/unicode/CaseFolding.txt
$(BUILD)/gen/casefold_table.h: scripts/gen-casefold.awk
	@mkdir -p $(@D)
	@test -r '$(UNICODE_CASEFOLDING)' || { echo "$(UNICODE_CASEFOLDING)" \
	  "is missing: install unicode-data (scripts/install-deps.sh) or set" \
	  "UNICODE_CASEFOLDING" >&2; exit 1; }
	awk -f scripts/gen-casefold.awk '$(UNICODE_CASEFOLDING)' > $@.tmp
	@mv $@.tmp $@

# The C library's towupper() in C.UTF-8 (GNU grep's -i there), for
# TS_FOLD_LIBC: a program run on the build machine prints it in the same
# format.  HOST_CC: a compiler for the machine that runs the build.
HOST_CC ?= $(CC)
$(BUILD)/gen/gen-libcfold: scripts/gen-libcfold.c
	@mkdir -p $(@D)
	$(HOST_CC) -std=c11 -O1 $< -o $@
$(BUILD)/gen/libcfold_table.h: $(BUILD)/gen/gen-libcfold scripts/gen-casefold.awk
	$(BUILD)/gen/gen-libcfold > $(BUILD)/gen/libcfold.txt
	awk -v prefix=ts_lf -f scripts/gen-casefold.awk \
	  $(BUILD)/gen/libcfold.txt > $@.tmp
	@mv $@.tmp $@

$(BUILD)/obj/src/algo/unicode.o: $(BUILD)/gen/casefold_table.h \
  $(BUILD)/gen/libcfold_table.h

$(BUILD)/obj/%.o: %.c $(HEADERS) src/internal.h $(wildcard src/*/*.h)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(SANFLAGS) -shared -Wl,-soname,$(SONAME) $(NO_UNDEFINED) \
	  -o $@ $^ $(LDLIBS_LIB)
	ln -sf libtextsearch.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	ln -sf libtextsearch.so.$(VERSION) $(BUILD)/lib/libtextsearch.so

PC_FILE    := $(BUILD)/textsearch.pc

# Regenerated every time: PREFIX and friends differ between install and stage.
$(PC_FILE): textsearch.pc.in FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e 's|@PLUGINDIR@|$(PLUGINDIR)|g' $< > $@.tmp
	@mv $@.tmp $@

# A private install that plugins and examples build against.
stage: lib
	@$(MAKE) --no-print-directory install-files DESTDIR=$(STAGE) \
	  PREFIX=/usr LIBDIR=/usr/lib INCLUDEDIR=/usr/include \
	  PKGCONFIGDIR=/usr/lib/pkgconfig PLUGINDIR=/usr/lib/textsearch \
	  LIB_PLUGINDIR='$(LIB_PLUGINDIR)' MANDIR=/usr/share/man >/dev/null

# The library loads plugins only from folders and files no one else can
# write, so a umask that lets the group write must not stop the tests.
plugins: stage
	@for d in $(PLUGIN_DIRS); do \
	  $(STAGE_PC) $(MAKE) --no-print-directory -C $$d \
	    OUT=$(abspath $(BUILD)/plugins) CC='$(CC)' \
	    CFLAGS='$(CFLAGS) $(SANFLAGS)' || exit 1; done
	@chmod -R go-w $(BUILD)/plugins

test-plugins: stage
	@for d in $(TEST_PLUGIN_DIRS); do \
	  $(STAGE_PC) $(MAKE) --no-print-directory -C $$d \
	    OUT=$(abspath $(BUILD)/test-plugins) CC='$(CC)' \
	    CFLAGS='$(CFLAGS) $(SANFLAGS)' || exit 1; done
	@chmod -R go-w $(BUILD)/test-plugins

tools: $(TOOLS) $(MPI_TOOLS)
ifneq ($(HAVE_MPI),yes)
	@echo "tools: $(MPICC) not found, MPI programs ($(MPI_TOOL_NAMES)) skipped"
endif

# tsgrep-mpi is tsgrep's code (its objects, and its main.c with main()
# and run_jobs() renamed, tools/tsgrep-mpi/hooks.h) and the MPI shards.
TSGREP_LIB_SRC := $(filter-out tools/tsgrep/main.c,$(wildcard tools/tsgrep/*.c))
TSGREP_MPI_MAIN := $(BUILD)/obj/tools/tsgrep-mpi/tsgrep_main.o
$(TSGREP_MPI_MAIN): tools/tsgrep/main.c tools/tsgrep-mpi/hooks.h \
                    $(wildcard tools/tsgrep/*.h tools/common/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itools/tsgrep -Itools/common -Dmain=tsgrep_main \
	  -Drun_jobs=tsg_mpi_run_jobs -include tools/tsgrep-mpi/hooks.h \
	  -c $< -o $@
$(BUILD)/bin/tsgrep-mpi: $(wildcard tools/tsgrep-mpi/*.c tools/tsgrep-mpi/*.h) \
                         $(TSGREP_LIB_SRC) $(TSGREP_MPI_MAIN) $(TOOL_COMMON) \
                         $(MPI_COMMON) $(wildcard tools/tsgrep/*.h) \
                         $(HEADERS) $(SHARED_LIB)
	@mkdir -p $(@D)
	OMPI_CC='$(CC)' $(MPICC) $(ALL_CFLAGS) -Itools/tsgrep -Itools/common \
	  -Itools/mpi $(filter %.c %.o,$^) -o $@ \
	  -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ltextsearch -lpthread

# tspkt-mpi runs tspkt's main() once per capture (tools/tspkt-mpi/run.c
# includes tools/tspkt/main.c with main renamed) and links tspkt's other
# sources as they are.
TSPKT_LIB_SRC := $(filter-out tools/tspkt/main.c,$(wildcard tools/tspkt/*.c))
$(BUILD)/bin/tspkt-mpi: $(wildcard tools/tspkt-mpi/*.c tools/tspkt-mpi/*.h) \
                        tools/tspkt/main.c $(TSPKT_LIB_SRC) $(TOOL_COMMON) \
                        $(MPI_COMMON) $(wildcard tools/tspkt/*.h) \
                        $(HEADERS) $(SHARED_LIB)
	@mkdir -p $(@D)
	OMPI_CC='$(CC)' $(MPICC) $(ALL_CFLAGS) $(PCAP_CFLAGS) -Itools/tspkt \
	  -Itools/common -Itools/mpi \
	  $(filter-out tools/tspkt/main.c,$(filter %.c,$^)) -o $@ \
	  -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ltextsearch \
	  $(PCAP_LIBS) -lpthread

.SECONDEXPANSION:
$(BUILD)/bin/%: $$(wildcard tools/%/*.c) $$(wildcard tools/%/*.h) \
                $(TOOL_COMMON) $(HEADERS) $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TOOL_CFLAGS_$*) -Itools/$* -Itools/common \
	  $(filter %.c,$^) -o $@ \
	  -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ltextsearch \
	  $(TOOL_LIBS_$*) -lpthread

examples: $(EXAMPLES)

$(BUILD)/examples/%: examples/%.c $(HEADERS) | stage
	@mkdir -p $(@D)
	$(CC) $(STD) $(WARN) $(CFLAGS) $(SANFLAGS) \
	  $$($(STAGE_PC) pkg-config --cflags textsearch) $< -o $@ \
	  -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -ltextsearch

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT_SRC) $(wildcard tests/support/*.h) \
                  $(HEADERS) $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(TEST_EXTRA_CFLAGS) $< $(TEST_EXTRA_SRC) \
	  $(TEST_SUPPORT_SRC) -o $@ $(TEST_LDLIBS) $(TEST_EXTRA_LIBS)

# The corpus replays compile the fuzz targets in (#include, found by -Ifuzz).
$(BUILD)/tests/test_fuzz_corpus: fuzz/fuzz_algorithms.c fuzz/replay.c
$(BUILD)/tests/test_tspkt_fuzz_corpus: fuzz/fuzz_packets.c fuzz/replay.c

# The same way, the pattern syntax test compiles the parsers in.
$(BUILD)/tests/test_tsgrep_patterns: tools/common/patterns.c \
                                     tools/common/patterns.h

# Tests of tspkt's modules compile them in, with the capture writer of
# tests/pcap (libpcap's own dump functions).
TSPKT_MODULES := tools/tspkt/decode.c tools/tspkt/defrag.c \
                 tools/tspkt/backlog.c tools/tspkt/flow.c \
                 tools/tspkt/reasm.c tools/tspkt/pktclock.c \
                 tools/tspkt/pool.c
TSPKT_TEST_SRC := $(TSPKT_MODULES) $(wildcard tests/pcap/*.c)
TSPKT_TESTS   := $(filter $(BUILD)/tests/test_tspkt_%,$(TESTS))
$(TSPKT_TESTS): TEST_EXTRA_CFLAGS = -Itools/tspkt -Itests/pcap $(PCAP_CFLAGS)
$(TSPKT_TESTS): TEST_EXTRA_SRC = $(TSPKT_TEST_SRC)
$(TSPKT_TESTS): TEST_EXTRA_LIBS = $(PCAP_LIBS)
$(TSPKT_TESTS): $(TSPKT_TEST_SRC) $(wildcard tools/tspkt/*.h tests/pcap/*.h)

check: all test-plugins $(TESTS)
	@BUILD=$(BUILD) sh tests/run-tests.sh $(TESTS)

demo: all
	@sh examples/demo.sh $(BUILD)

fuzz:
	@$(MAKE) --no-print-directory -f fuzz/fuzz.mk FUZZ_CC=$(FUZZ_CC) \
	  FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_BUILD=$(FUZZ_BUILD) run

# Never part of check: speed is measured, not asserted.  Hyperscan is
# compared when pkg-config finds libhs (scripts/install-deps.sh --bench).
BENCH_HS   := $(shell pkg-config --exists libhs 2>/dev/null && echo yes)
BENCH_BIN  := $(BUILD)/bench/bench
BENCH_GEN  := $(BUILD)/bench/gen_capture
$(BENCH_BIN): $(filter-out bench/gen_capture.c,$(wildcard bench/*.c)) \
              $(wildcard bench/*.h) $(HEADERS) $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(if $(BENCH_HS),-DHAVE_HS \
	  $(shell pkg-config --cflags libhs)) $(filter %.c,$^) -o $@ \
	  -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -ltextsearch \
	  $(if $(BENCH_HS),$(shell pkg-config --libs libhs))

# The tree that bench/tree_bench.sh searches (tsgrep -r against grep -r
# and rg) is generated by this program.
TREE_GEN := $(BUILD)/bench/tree_gen
$(TREE_GEN): bench/tree/tree_gen.c bench/bench_util.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@

# tsgrep is compared when it builds; a tool under construction does not
# stop the library's figures.  The tree bench fails only when tsgrep and
# grep disagree on counts, the tspkt bench when tspkt and ngrep disagree.
# tspkt's TCP streams without a capture: reassembly + search, idle flows
BENCH_FLOWS := $(BUILD)/bench/bench_flows
$(BENCH_FLOWS): bench/flows/bench_flows.c tools/tspkt/flow.c \
                tools/tspkt/reasm.c tools/tspkt/flow.h tools/tspkt/reasm.h \
                $(HEADERS) $(SHARED_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itools/tspkt $(filter %.c,$^) -o $@ \
	  -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -ltextsearch

bench: lib plugins $(BENCH_BIN) $(BENCH_GEN) $(TREE_GEN) $(BENCH_FLOWS)
	@$(MAKE) --no-print-directory tools || \
	  echo "bench: tools/ did not build, tsgrep may be skipped"
	TEXTSEARCH_PLUGIN_PATH=$(abspath $(BUILD)/plugins) $(BENCH_BIN) \
	  $(if $(BENCH_QUICK),--quick) --sets --stream --timers \
	  --corpus $(BUILD)/bench/corpus.txt \
	  --tsgrep $(BUILD)/bin/tsgrep
	TEXTSEARCH_PLUGIN_PATH=$(abspath $(BUILD)/plugins) sh \
	  bench/tree_bench.sh $(BUILD)/bin/tsgrep $(TREE_GEN) \
	  $(BUILD)/bench/tree$(if $(BENCH_QUICK),-quick --quick)
	$(BENCH_FLOWS) $(if $(BENCH_QUICK),--quick)
	sh bench/tspkt_bench.sh $(BUILD) $(if $(BENCH_QUICK),quick)
	sh bench/sets_bench.sh $(BUILD)/bin/tsgrep $(BUILD)/bench/corpus.txt $(BUILD)/bench/sets $(if $(BENCH_QUICK),quick)
ifeq ($(HAVE_MPI),yes)
	sh bench/mpi_bench.sh $(BUILD) $(if $(BENCH_QUICK),quick)
else
	@echo "bench: $(MPICC) not found, tsgrep-mpi not measured"
endif

# The capture tspkt's benchmark searches (bench/tspkt_bench.sh).
$(BENCH_GEN): bench/gen_capture.c bench/bench_util.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@

install-files: lib $(PC_FILE)
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) \
	  $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PLUGINDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -p -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libtextsearch.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libtextsearch.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtextsearch.so
	install -m 644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/
	$(if $(MANPAGES1),install -m 644 $(MANPAGES1) $(DESTDIR)$(MANDIR)/man1/)
	$(if $(MANPAGES3),install -m 644 $(MANPAGES3) $(DESTDIR)$(MANDIR)/man3/)

install: all install-files
	install -m 755 $(wildcard $(BUILD)/plugins/*.so) $(DESTDIR)$(PLUGINDIR)/
	$(if $(TOOLS),install -d $(DESTDIR)$(PREFIX)/bin)
	$(if $(TOOLS),install -m 755 $(TOOLS) $(MPI_TOOLS) $(DESTDIR)$(PREFIX)/bin/)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(HEADERS)))
	rm -f $(DESTDIR)$(LIBDIR)/libtextsearch.*
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/textsearch.pc
	rm -rf $(DESTDIR)$(PLUGINDIR)
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MANPAGES3)))
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(TOOL_NAMES) $(MPI_TOOL_NAMES))

# Every C file of the tree, in one style (.clang-format).
CLANG_FORMAT ?= clang-format
FORMAT_SRC := $(sort $(wildcard include/*.h src/*.h src/*/*.[ch] \
              plugins/*/*.[ch] tools/*/*.[ch] tests/*.[ch] tests/*/*.[ch] \
              tests/*/*/*.[ch] bench/*.[ch] bench/*/*.[ch] fuzz/*.[ch] \
              examples/*.[ch]))

format:
	$(CLANG_FORMAT) -i --style=file $(FORMAT_SRC)

format-check:
	@$(CLANG_FORMAT) --dry-run --Werror --style=file $(FORMAT_SRC) && \
	  echo "format-check: $(words $(FORMAT_SRC)) files follow .clang-format"

clean:
	rm -rf build

FORCE:
