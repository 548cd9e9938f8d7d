# Shared by the test plugins: build $(OUT)/ts_$(NAME).so from ts_$(NAME).c
# the way plugins/shiftor is built, against the staged install found
# through pkg-config.  Each tests/plugins/<dir>/Makefile sets NAME and
# includes this file.
OUT        ?= .
CC         ?= cc
CFLAGS     ?= -O2 -g
PKG_CONFIG ?= pkg-config

TS_CFLAGS := $(shell $(PKG_CONFIG) --cflags textsearch)
TS_LIBS   := $(shell $(PKG_CONFIG) --libs textsearch)
ifeq ($(TS_LIBS),)
$(error pkg-config cannot find textsearch; set PKG_CONFIG_PATH)
endif

PLUGIN_CFLAGS := -std=c11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden

# Rebuilt when the library's header changes (as plugins/shiftor).
TS_HEADER := $(wildcard $(patsubst -I%,%/textsearch.h,\
               $(filter -I%,$(TS_CFLAGS))))

$(OUT)/ts_$(NAME).so: ts_$(NAME).c ../testplugin.h ../plugin.mk Makefile \
                      $(TS_HEADER)
	@mkdir -p $(OUT)
	$(CC) $(PLUGIN_CFLAGS) $(CFLAGS) $(TS_CFLAGS) -shared $< -o $@ \
	  $(TS_LIBS)

clean:
	rm -f $(OUT)/ts_$(NAME).so

.PHONY: clean
