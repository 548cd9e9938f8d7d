# fuzz.mk - the libFuzzer build and run, included by `make fuzz`:
#
#   make -f fuzz/fuzz.mk [FUZZ_CC=clang] [FUZZ_SECONDS=60] \
#        [FUZZ_BUILD=build/fuzz] [FUZZ_MAX_LEN=4096] run
#
# Builds the library, tests/support and fuzz/fuzz_algorithms.c into one
# clang binary with libFuzzer, ASan and UBSan, plus the shiftor plugin with
# the same sanitizers (it resolves the library's symbols from the binary),
# then fuzzes a copy of the seed corpus fuzz/corpus for FUZZ_SECONDS
# seconds.  Fails on any crash, sanitizer report or difference from the
# reference; the input that did it is left in $(FUZZ_BUILD)/artifacts.
#
#   make -f fuzz/fuzz.mk replay     the same binary over fuzz/corpus only
#   $(FUZZ_BUILD)/fuzz_algorithms $(FUZZ_BUILD)/artifacts/crash-...
#                                   reproduce one input

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   ?= build/fuzz
FUZZ_MAX_LEN ?= 4096

FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g \
               -Wall -Wextra -Werror $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
               -Iinclude -Itests/support
PLUGIN_OUT  := $(abspath $(FUZZ_BUILD))/plugins

FUZZ_LIB_SRC := $(sort $(wildcard src/core/*.c src/algo/*.c \
                                  src/providers/*.c))
FUZZ_SUP_SRC := $(sort $(wildcard tests/support/*.c))
FUZZ_OBJ     := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) \
                $(FUZZ_SUP_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) \
                $(FUZZ_BUILD)/obj/fuzz/fuzz_algorithms.o
FUZZ_HDRS    := $(wildcard include/*.h src/*.h tests/support/*.h)
FUZZ_BIN     := $(FUZZ_BUILD)/fuzz_algorithms
FUZZ_PLUGIN  := $(PLUGIN_OUT)/ts_shiftor.so

.PHONY: run replay

# The installed plugin directory, as the main build generates it; here the
# fuzz build's own.
$(FUZZ_BUILD)/gen/plugin_dir.h:
	@mkdir -p $(@D)
	@printf '#define TS_PLUGIN_DIR "%s"\n' '$(PLUGIN_OUT)' > $@

$(FUZZ_BUILD)/obj/src/%.o: src/%.c $(FUZZ_HDRS) $(FUZZ_BUILD)/gen/plugin_dir.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fvisibility=hidden -Isrc \
	  -I$(FUZZ_BUILD)/gen -c $< -o $@

$(FUZZ_BUILD)/obj/tests/%.o: tests/%.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/obj/fuzz/%.o: fuzz/%.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_PLUGIN_DIR='"$(PLUGIN_OUT)"' \
	  -c $< -o $@

# -rdynamic: the plugin takes alloc_ts_config() and friends from here.
$(FUZZ_BIN): $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -rdynamic $^ -o $@ \
	  -lpthread -ldl

$(FUZZ_PLUGIN): plugins/shiftor/ts_shiftor.c $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fPIC -fvisibility=hidden -shared $< -o $@

$(FUZZ_BUILD)/replay: $(filter-out %/fuzz_algorithms.o,$(FUZZ_OBJ)) \
                      fuzz/replay.c fuzz/fuzz_algorithms.c
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_PLUGIN_DIR='"$(PLUGIN_OUT)"' \
	  -rdynamic fuzz/fuzz_algorithms.c fuzz/replay.c \
	  $(filter %.o,$^) -o $@ -lpthread -ldl

run: $(FUZZ_BIN) $(FUZZ_PLUGIN)
	@rm -rf $(FUZZ_BUILD)/corpus
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/artifacts
	@cp fuzz/corpus/* $(FUZZ_BUILD)/corpus/
	@echo "fuzz: $(FUZZ_SECONDS) s on a copy of fuzz/corpus" \
	  "($$(ls fuzz/corpus | wc -l) seeds), log in $(FUZZ_BUILD)/fuzz.log"
	@TEXTSEARCH_PLUGIN_PATH=$(PLUGIN_OUT) $(FUZZ_BIN) \
	  -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) \
	  -timeout=20 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/ \
	  $(FUZZ_BUILD)/corpus > $(FUZZ_BUILD)/fuzz.log 2>&1; \
	rc=$$?; \
	grep -E '^(INFO: seed|#[0-9]+ +DONE|Done [0-9]+ runs|stat::)' \
	  $(FUZZ_BUILD)/fuzz.log; \
	if [ $$rc -ne 0 ]; then \
	  tail -n 60 $(FUZZ_BUILD)/fuzz.log; \
	  echo "fuzz: FAILED (exit $$rc); input in $(FUZZ_BUILD)/artifacts/"; \
	  exit 1; \
	fi; \
	echo "fuzz: $$(sed -n 's/^stat::number_of_executed_units: *//p' \
	  $(FUZZ_BUILD)/fuzz.log) executions, no crash"

replay: $(FUZZ_BUILD)/replay $(FUZZ_PLUGIN)
	TEXTSEARCH_PLUGIN_PATH=$(PLUGIN_OUT) $(FUZZ_BUILD)/replay fuzz/corpus
