# paimon-lua build. `make` builds the core library, the Lua module and the
# paimon-lua interpreter (build/paimon-lua); `make test` runs every suite.
PKG_CONFIG ?= pkg-config
CC         ?= cc
BUILD      ?= build
PREFIX     ?= /usr/local

DEPS       := libuv libzstd zlib snappy jansson
DEPS_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(DEPS) 2>/dev/null)
DEPS_LIBS   = $(shell $(PKG_CONFIG) --libs $(DEPS) 2>/dev/null || echo -luv -lzstd -lz -lsnappy -ljansson)
LUA54_CFLAGS = $(shell $(PKG_CONFIG) --cflags lua5.4 2>/dev/null)
LUA54_LIBS   = $(shell $(PKG_CONFIG) --libs lua5.4 2>/dev/null || echo -llua5.4)

STD   = -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN  = -Wall -Wextra -Wshadow -Wundef -Wwrite-strings -Wstrict-prototypes \
        -Wmissing-prototypes -Wpointer-arith -Wformat=2 $(WERROR)
OPT  ?= -O2 -g
SAN_FLAGS =
ifdef SANITIZER
  OPT = -O1 -g -fno-omit-frame-pointer
  SAN_FLAGS = -fsanitize=$(SANITIZER) -fno-sanitize-recover=all
endif
CFLAGS_ALL  = $(STD) $(WARN) $(OPT) $(SAN_FLAGS) -fPIC -fvisibility=hidden \
              -Isrc/include -Isrc/core $(DEPS_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(SAN_FLAGS) $(LDFLAGS)

CORE_SRC  := $(wildcard src/core/*.c)
CORE_OBJ  := $(CORE_SRC:src/%.c=$(BUILD)/obj/%.o)
LIB_A     := $(BUILD)/libpaimon.a
LUA_SRC   := $(wildcard src/lua/*.c)
LUA_OBJ   := $(LUA_SRC:src/%.c=$(BUILD)/obj/%.o)
LUA_SO    := $(BUILD)/lua54/paimon/core.so
CLI       := $(BUILD)/paimon-lua
CTEST_SRC := $(wildcard spec/c/test_*.c)
CTEST_BIN := $(CTEST_SRC:spec/c/%.c=$(BUILD)/tests/%)

.PHONY: all deps test test-c test-lua demo bench fuzz clean
all: $(LIB_A) $(LUA_SO) $(CLI) $(CTEST_BIN)

deps:
	@sh scripts/install-deps.sh

$(BUILD)/obj/%.o: src/%.c $(wildcard src/include/*.h src/core/*.h src/lua/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA54_CFLAGS) -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LUA_SO): $(LUA_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(LUA_OBJ) $(LIB_A) $(DEPS_LIBS) $(LDFLAGS_ALL)

$(CLI): $(BUILD)/obj/main/paimon_lua.o $(LUA_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LUA54_LIBS) $(DEPS_LIBS) -lm -ldl $(LDFLAGS_ALL) -Wl,-E

$(BUILD)/tests/%: spec/c/%.c spec/c/test.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB_A) $(DEPS_LIBS) -lm $(LDFLAGS_ALL)

test: deps
	@$(MAKE) --no-print-directory all >/dev/null
	@SANITIZER=$(SANITIZER) sh scripts/run-tests.sh $(BUILD)

test-c: all
	@for t in $(CTEST_BIN); do $$t || exit 1; done

demo: deps
	@$(MAKE) --no-print-directory all >/dev/null
	@sh examples/demo.sh $(BUILD)

bench: deps all
	@sh bench/run.sh $(BUILD)

fuzz: deps
	@sh spec/fuzz/run.sh

clean:
	rm -rf $(BUILD)
