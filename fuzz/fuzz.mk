# fuzz.mk - the libFuzzer build and run, included by `make fuzz`:
#
#   make -f fuzz/fuzz.mk [FUZZ_CC=clang] [FUZZ_SECONDS=60] \
#        [FUZZ_BUILD=build/fuzz] [FUZZ_MAX_LEN=4096] \
#        [FUZZ_PKT_SECONDS=30] [FUZZ_PKT_MAX_LEN=8192] run
#
# Builds the library, tests/support and each target into a clang binary
# with libFuzzer, ASan and UBSan, then fuzzes a copy of its seed corpus:
#   fuzz_algorithms  fuzz/corpus, FUZZ_SECONDS seconds; with the shiftor
#                    plugin built with the same sanitizers (it resolves the
#                    library's symbols from the binary)
#   fuzz_packets     fuzz/corpus-packets, FUZZ_PKT_SECONDS (half of
#                    FUZZ_SECONDS) seconds; with tspkt's decoder and
#                    reassembly (tools/tspkt/decode.c, defrag.c)
# Fails on any crash, sanitizer report or difference from the reference;
# the input that did it is left in $(FUZZ_BUILD)/artifacts (fuzz_packets:
# artifacts-packets).
#
#   make -f fuzz/fuzz.mk replay     the same code over both seed corpora
#   make -f fuzz/fuzz.mk corpus-packets
#                                   rewrite fuzz/corpus-packets from
#                                   fuzz/make-corpus-packets.c
#   $(FUZZ_BUILD)/fuzz_algorithms $(FUZZ_BUILD)/artifacts/crash-...
#                                   reproduce one input

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   ?= build/fuzz
FUZZ_MAX_LEN ?= 4096
# room for a few full-size (1500-byte) frames
FUZZ_PKT_MAX_LEN ?= 8192
# half of FUZZ_SECONDS, at least 1 (libFuzzer reads 0 as no limit)
ifndef FUZZ_PKT_SECONDS
FUZZ_PKT_SECONDS := $(shell s=$$(( $(FUZZ_SECONDS) / 2 )); \
                      [ $$s -ge 1 ] || s=1; echo $$s)
endif

PCAP_CFLAGS := $(shell pkg-config --cflags libpcap 2>/dev/null)
PCAP_LIBS   := $(shell pkg-config --libs libpcap 2>/dev/null || echo -lpcap)

FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g \
               -Wall -Wextra -Werror $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
               -Iinclude -Itests/support
PLUGIN_OUT  := $(abspath $(FUZZ_BUILD))/plugins

FUZZ_LIB_SRC := $(sort $(wildcard src/core/*.c src/algo/*.c src/timer/*.c \
                                  src/providers/*.c src/skb/*.c))
FUZZ_SUP_SRC := $(sort $(wildcard tests/support/*.c))
FUZZ_PKT_SRC := tools/tspkt/decode.c tools/tspkt/defrag.c tools/tspkt/reasm.c \
                tools/tspkt/pktclock.c
FUZZ_COMMON_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) \
                   $(FUZZ_SUP_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_OBJ     := $(FUZZ_COMMON_OBJ) $(FUZZ_BUILD)/obj/fuzz/fuzz_algorithms.o
FUZZ_PKT_OBJ := $(FUZZ_COMMON_OBJ) $(FUZZ_PKT_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) \
                $(FUZZ_BUILD)/obj/fuzz/fuzz_packets.o
FUZZ_HDRS    := $(wildcard include/*.h src/*.h tests/support/*.h \
                           tools/tspkt/decode.h tools/tspkt/defrag.h)
FUZZ_BIN     := $(FUZZ_BUILD)/fuzz_algorithms
FUZZ_PKT_BIN := $(FUZZ_BUILD)/fuzz_packets
FUZZ_PLUGIN  := $(PLUGIN_OUT)/ts_shiftor.so

.PHONY: run replay corpus-packets

# The installed plugin directory, as the main build generates it; here the
# fuzz build's own.
$(FUZZ_BUILD)/gen/plugin_dir.h:
	@mkdir -p $(@D)
	@printf '#define TS_PLUGIN_DIR "%s"\n' '$(PLUGIN_OUT)' > $@

# TS_UTF8's tables, made as the main build makes them (Makefile).
UNICODE_CASEFOLDING ?= /usr/share/unicode/CaseFolding.txt
HOST_CC ?= cc
$(FUZZ_BUILD)/gen/casefold_table.h: scripts/gen-casefold.awk
	@mkdir -p $(@D)
	awk -f scripts/gen-casefold.awk '$(UNICODE_CASEFOLDING)' > $@.tmp
	@mv $@.tmp $@
$(FUZZ_BUILD)/gen/gen-libcfold: scripts/gen-libcfold.c
	@mkdir -p $(@D)
	$(HOST_CC) -std=c11 -O1 $< -o $@
$(FUZZ_BUILD)/gen/libcfold_table.h: $(FUZZ_BUILD)/gen/gen-libcfold \
                                    scripts/gen-casefold.awk
	$(FUZZ_BUILD)/gen/gen-libcfold > $(FUZZ_BUILD)/gen/libcfold.txt
	awk -v prefix=ts_lf -f scripts/gen-casefold.awk \
	  $(FUZZ_BUILD)/gen/libcfold.txt > $@.tmp
	@mv $@.tmp $@
$(FUZZ_BUILD)/obj/src/algo/unicode.o: $(FUZZ_BUILD)/gen/casefold_table.h \
                                      $(FUZZ_BUILD)/gen/libcfold_table.h

$(FUZZ_BUILD)/obj/src/%.o: src/%.c $(FUZZ_HDRS) $(FUZZ_BUILD)/gen/plugin_dir.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fvisibility=hidden -Isrc \
	  -I$(FUZZ_BUILD)/gen -c $< -o $@

$(FUZZ_BUILD)/obj/tests/%.o: tests/%.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/tools/%.o: tools/%.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(PCAP_CFLAGS) -Itools/tspkt -c $< -o $@

$(FUZZ_BUILD)/obj/fuzz/%.o: fuzz/%.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(PCAP_CFLAGS) -Itools/tspkt \
	  -DFUZZ_PLUGIN_DIR='"$(PLUGIN_OUT)"' -c $< -o $@

# -rdynamic: the plugin takes alloc_ts_config() and friends from here.
$(FUZZ_BIN): $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -rdynamic $^ -o $@ \
	  -lpthread -ldl

$(FUZZ_PKT_BIN): $(FUZZ_PKT_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $^ -o $@ -lpthread -ldl

$(FUZZ_PLUGIN): plugins/shiftor/ts_shiftor.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fPIC -fvisibility=hidden -shared $< -o $@
	@chmod go-w $(@D) $@ # the library loads no plugin others can write

$(FUZZ_BUILD)/replay: $(FUZZ_COMMON_OBJ) fuzz/replay.c fuzz/fuzz_algorithms.c
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_PLUGIN_DIR='"$(PLUGIN_OUT)"' \
	  -rdynamic fuzz/fuzz_algorithms.c fuzz/replay.c \
	  $(filter %.o,$^) -o $@ -lpthread -ldl

$(FUZZ_BUILD)/replay-packets: $(filter-out %/fuzz_packets.o,$(FUZZ_PKT_OBJ)) \
                              fuzz/replay.c fuzz/fuzz_packets.c
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(PCAP_CFLAGS) -Itools/tspkt \
	  fuzz/fuzz_packets.c fuzz/replay.c $(filter %.o,$^) -o $@ \
	  -lpthread -ldl

# $(call fuzz_one,NAME,BINARY,SEEDS,SECONDS,MAX_LEN,SUFFIX): fuzz a fresh
# copy of SEEDS; the log, corpus copy and artifacts are NAME's own.
define fuzz_one
@rm -rf $(FUZZ_BUILD)/corpus$(6)
@mkdir -p $(FUZZ_BUILD)/corpus$(6) $(FUZZ_BUILD)/artifacts$(6)
@cp $(3)/* $(FUZZ_BUILD)/corpus$(6)/
@echo "fuzz: $(1): $(4) s on a copy of $(3)" \
  "($$(ls $(3) | wc -l) seeds), log in $(FUZZ_BUILD)/fuzz$(6).log"
@TEXTSEARCH_PLUGIN_PATH=$(PLUGIN_OUT) $(2) \
  -max_total_time=$(4) -max_len=$(5) \
  -timeout=20 -print_final_stats=1 \
  -artifact_prefix=$(FUZZ_BUILD)/artifacts$(6)/ \
  $(FUZZ_BUILD)/corpus$(6) > $(FUZZ_BUILD)/fuzz$(6).log 2>&1; \
rc=$$?; \
grep -E '^(INFO: seed|#[0-9]+ +DONE|Done [0-9]+ runs|stat::)' \
  $(FUZZ_BUILD)/fuzz$(6).log; \
if [ $$rc -ne 0 ]; then \
  tail -n 60 $(FUZZ_BUILD)/fuzz$(6).log; \
  echo "fuzz: $(1): FAILED (exit $$rc); input in" \
    "$(FUZZ_BUILD)/artifacts$(6)/"; \
  exit 1; \
fi; \
echo "fuzz: $(1): $$(sed -n 's/^stat::number_of_executed_units: *//p' \
  $(FUZZ_BUILD)/fuzz$(6).log) executions, no crash"
endef

# One after the other: two at once would share the cores they time.
run: $(FUZZ_BIN) $(FUZZ_PLUGIN) $(FUZZ_PKT_BIN)
	$(call fuzz_one,fuzz_algorithms,$(FUZZ_BIN),fuzz/corpus,$(FUZZ_SECONDS),$(FUZZ_MAX_LEN),)
	$(call fuzz_one,fuzz_packets,$(FUZZ_PKT_BIN),fuzz/corpus-packets,$(FUZZ_PKT_SECONDS),$(FUZZ_PKT_MAX_LEN),-packets)

replay: $(FUZZ_BUILD)/replay $(FUZZ_BUILD)/replay-packets $(FUZZ_PLUGIN)
	TEXTSEARCH_PLUGIN_PATH=$(PLUGIN_OUT) $(FUZZ_BUILD)/replay fuzz/corpus
	$(FUZZ_BUILD)/replay-packets fuzz/corpus-packets

# The packet seeds are frames built by tests/pcap's builders (libpcap for
# its writer, which the generator does not use but links).
$(FUZZ_BUILD)/make-corpus-packets: fuzz/make-corpus-packets.c \
                                   tests/pcap/pcapgen.c tests/pcap/pcapgen.h
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g -Wall -Wextra \
	  -Werror $(PCAP_CFLAGS) -Itests/pcap $(filter %.c,$^) -o $@ \
	  $(PCAP_LIBS)

corpus-packets: $(FUZZ_BUILD)/make-corpus-packets
	mkdir -p fuzz/corpus-packets
	rm -f fuzz/corpus-packets/*
	$< fuzz/corpus-packets
