# paimon-lua build. `make` builds the core library (static and shared), the
# Lua module for Lua 5.4 and for LuaJIT 2.1, the paimon-lua interpreter
# (build/paimon-lua), the C example and the C tests; `make test` runs every
# suite; `make install PREFIX=... DESTDIR=...` installs, `make uninstall`
# removes what install put there.
PKG_CONFIG ?= pkg-config
CC         ?= cc
BUILD      ?= build

# Install layout (lua-cjson / LuaRocks naming; every path is a variable).
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATADIR     ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
LUA54_CMOD  ?= $(LIBDIR)/lua/5.4
LUA54_LMOD  ?= $(DATADIR)/lua/5.4
LUAJIT_CMOD ?= $(LIBDIR)/lua/5.1
LUAJIT_LMOD ?= $(DATADIR)/lua/5.1
SCRIPTS_DIR ?= $(DATADIR)/paimon-lua/scripts
POLICIES_DIR ?= $(DATADIR)/paimon-lua/policies
INSTALL     ?= install

VERSION := $(shell sed -n 's/^\#define PAIMON_VERSION "\(.*\)"/\1/p' src/include/paimon.h)
SOMAJOR := 0

DEPS       := libuv libzstd zlib snappy jansson libcurl libcrypto
DEPS_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(DEPS) 2>/dev/null)
DEPS_LIBS   = $(shell $(PKG_CONFIG) --libs $(DEPS) 2>/dev/null || echo -luv -lzstd -lz -lsnappy -ljansson -lcurl -lcrypto)
LUA54_CFLAGS = $(shell $(PKG_CONFIG) --cflags lua5.4 2>/dev/null)
LUA54_LIBS   = $(shell $(PKG_CONFIG) --libs lua5.4 2>/dev/null || echo -llua5.4)
# LuaJIT 2.1 (Debian: luajit2 + libluajit2-5.1-dev; pkg-config name luajit).
# Without its headers the LuaJIT module is skipped (make test installs them).
LUAJIT_CFLAGS := $(shell $(PKG_CONFIG) --cflags luajit 2>/dev/null)
HAVE_LUAJIT   := $(shell $(PKG_CONFIG) --exists luajit 2>/dev/null && echo 1)

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
LIB_SO    := $(BUILD)/libpaimon.so
LUA_SRC   := $(wildcard src/lua/*.c)
LUA_OBJ   := $(LUA_SRC:src/%.c=$(BUILD)/obj/%.o)
LUA_SO    := $(BUILD)/lua54/paimon/core.so
LUAJIT_OBJ := $(LUA_SRC:src/%.c=$(BUILD)/objjit/%.o)
LUAJIT_SO := $(BUILD)/luajit/paimon/core.so
CLI       := $(BUILD)/paimon-lua
PC        := $(BUILD)/paimon.pc
EXAMPLES  := $(BUILD)/examples/table_info $(BUILD)/examples/table_maint $(BUILD)/examples/table_write
CTEST_SRC := $(wildcard spec/c/test_*.c)
CTEST_BIN := $(CTEST_SRC:spec/c/%.c=$(BUILD)/tests/%)
HEADERS   := $(wildcard src/include/*.h src/core/*.h src/lua/*.h)

TARGETS := $(LIB_A) $(LIB_SO) $(LUA_SO) $(CLI) $(PC) $(EXAMPLES) $(CTEST_BIN)
ifeq ($(HAVE_LUAJIT),1)
  TARGETS += $(LUAJIT_SO)
endif

.PHONY: all deps deps-bench test test-s3-sweep test-c test-lifecycle test-nginx test-install demo bench fuzz clean \
        install uninstall rock rock-install FORCE
all: $(TARGETS)

deps:
	@sh scripts/install-deps.sh

# awscli: a baseline of make bench only
deps-bench:
	@sh scripts/install-deps.sh --bench

$(BUILD)/obj/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA54_CFLAGS) -c $< -o $@

# The same binding sources, compiled against LuaJIT's headers (Lua 5.1 ABI);
# lpaimon_compat.h holds every difference.
$(BUILD)/objjit/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUAJIT_CFLAGS) -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Only the PAIMON_API symbols of paimon.h are exported (-fvisibility=hidden).
$(LIB_SO): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libpaimon.so.$(SOMAJOR) -o $@ $(CORE_OBJ) $(DEPS_LIBS) -lm $(LDFLAGS_ALL)
	ln -sf libpaimon.so $(BUILD)/libpaimon.so.$(SOMAJOR)

$(LUA_SO): $(LUA_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(LUA_OBJ) $(LIB_A) $(DEPS_LIBS) $(LDFLAGS_ALL)

$(LUAJIT_SO): $(LUAJIT_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(LUAJIT_OBJ) $(LIB_A) $(DEPS_LIBS) $(LDFLAGS_ALL)

# paimon-lua finds lua/ and scripts/ next to its build dir, relative to its
# installed location (bin/../share/...), or at these compile-time defaults.
DIRS_DEFS = -DPAIMON_LUA_DIR='"$(LUA54_LMOD)"' -DPAIMON_SCRIPTS_DIR='"$(SCRIPTS_DIR)"' \
            -DPAIMON_POLICIES_DIR='"$(POLICIES_DIR)"'
$(BUILD)/dirs.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(DIRS_DEFS)' | cmp -s - $@ || echo '$(DIRS_DEFS)' >$@

$(BUILD)/obj/main/paimon_lua.o: src/main/paimon_lua.c $(HEADERS) $(BUILD)/dirs.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LUA54_CFLAGS) $(DIRS_DEFS) -c $< -o $@

$(CLI): $(BUILD)/obj/main/paimon_lua.o $(LUA_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LUA54_LIBS) $(DEPS_LIBS) -lm -ldl $(LDFLAGS_ALL) -Wl,-E

$(BUILD)/tests/%: spec/c/%.c $(wildcard spec/c/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LIB_A) $(DEPS_LIBS) -lm $(LDFLAGS_ALL)

# The C example sees paimon.h only and links the shared library.
$(BUILD)/examples/%: examples/c/%.c src/include/paimon.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(OPT) $(SAN_FLAGS) -Isrc/include $(CFLAGS) -o $@ $< \
	  -L$(BUILD) -l:libpaimon.so -Wl,-rpath,'$$ORIGIN/..' $(LDFLAGS_ALL)

$(BUILD)/pc.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PREFIX) $(LIBDIR) $(INCLUDEDIR) $(VERSION)' | cmp -s - $@ || \
	  echo '$(PREFIX) $(LIBDIR) $(INCLUDEDIR) $(VERSION)' >$@

$(PC): $(BUILD)/pc.stamp
	@mkdir -p $(dir $@)
	@{ echo 'prefix=$(PREFIX)'; echo 'libdir=$(LIBDIR)'; echo 'includedir=$(INCLUDEDIR)'; echo; \
	   echo 'Name: paimon'; \
	   echo 'Description: Apache Paimon table metadata (paimon-lua core, C API)'; \
	   echo 'Version: $(VERSION)'; \
	   echo 'Requires.private: $(DEPS)'; \
	   echo 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lpaimon'; \
	   echo 'Libs.private: -lm'; \
	   echo 'Cflags: -I$${includedir}'; } >$@

test: deps
	@$(MAKE) --no-print-directory all >/dev/null
	@SANITIZER=$(SANITIZER) sh scripts/run-tests.sh $(BUILD)

# every fault kind at every S3 request of the sweeps (about 16 more minutes)
test-s3-sweep: deps
	@$(MAKE) --no-print-directory all >/dev/null
	@PAIMON_S3_SWEEP=full sh scripts/run-tests.sh $(BUILD)

test-c: all
	@for t in $(CTEST_BIN); do $$t || exit 1; done

# the randomized lifecycle test (spec/support/lifecycle.py) for long: make
# test runs LIFECYCLE_SEQS=60 x LIFECYCLE_STEPS=30; LIFECYCLE_SEED=S repeats a run
test-lifecycle: all
	@PAIMON_BUILD=$(CURDIR)/$(BUILD) LIFECYCLE_SEQS=$${LIFECYCLE_SEQS:-300} LIFECYCLE_STEPS=$${LIFECYCLE_STEPS:-40} \
	  /usr/bin/python3 spec/support/lifecycle.py

test-nginx: all
	@sh scripts/nginx-test.sh $(BUILD)

test-install: all
	@sh scripts/install-test.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all >/dev/null
	@sh examples/demo.sh $(BUILD)

bench: deps-bench all
	@sh bench/run.sh $(BUILD)

fuzz: deps
	@sh spec/fuzz/run.sh

# ---- install ------------------------------------------------------------
LUA_MODULES := $(shell find lua/paimon -name '*.lua' 2>/dev/null | sort)
RESTY_MODULES := $(wildcard lua/resty/*.lua lua/resty/paimon/*.lua)
SCRIPTS := $(wildcard scripts/*.lua)
POLICIES := $(wildcard examples/policies/*.lua)
D := $(DESTDIR)

install: $(LIB_A) $(LIB_SO) $(LUA_SO) $(CLI) $(PC) $(if $(HAVE_LUAJIT),$(LUAJIT_SO))
	$(INSTALL) -d $(D)$(BINDIR) $(D)$(LIBDIR) $(D)$(INCLUDEDIR) $(D)$(PKGCONFIGDIR) \
	  $(D)$(LUA54_CMOD)/paimon $(D)$(SCRIPTS_DIR) $(D)$(POLICIES_DIR)
	$(INSTALL) -m 755 $(CLI) $(D)$(BINDIR)/paimon-lua
	$(INSTALL) -m 644 $(LIB_A) $(D)$(LIBDIR)/libpaimon.a
	$(INSTALL) -m 755 $(LIB_SO) $(D)$(LIBDIR)/libpaimon.so.$(VERSION)
	ln -sf libpaimon.so.$(VERSION) $(D)$(LIBDIR)/libpaimon.so.$(SOMAJOR)
	ln -sf libpaimon.so.$(SOMAJOR) $(D)$(LIBDIR)/libpaimon.so
	$(INSTALL) -m 644 src/include/paimon.h $(D)$(INCLUDEDIR)/paimon.h
	$(INSTALL) -m 644 $(PC) $(D)$(PKGCONFIGDIR)/paimon.pc
	$(INSTALL) -m 755 $(LUA_SO) $(D)$(LUA54_CMOD)/paimon/core.so
	$(INSTALL) -m 644 $(SCRIPTS) $(D)$(SCRIPTS_DIR)/
	$(INSTALL) -m 644 $(POLICIES) $(D)$(POLICIES_DIR)/
	@set -e; for m in $(LUA_MODULES) $(RESTY_MODULES); do \
	  rel=$${m#lua/}; \
	  for dir in $(LUA54_LMOD) $(if $(HAVE_LUAJIT),$(LUAJIT_LMOD)); do \
	    $(INSTALL) -d $(D)$$dir/$$(dirname $$rel); \
	    $(INSTALL) -m 644 $$m $(D)$$dir/$$rel; \
	  done; \
	done
ifeq ($(HAVE_LUAJIT),1)
	$(INSTALL) -d $(D)$(LUAJIT_CMOD)/paimon
	$(INSTALL) -m 755 $(LUAJIT_SO) $(D)$(LUAJIT_CMOD)/paimon/core.so
endif

# Removes exactly what install puts there, then our own now-empty folders.
uninstall:
	rm -f $(D)$(BINDIR)/paimon-lua $(D)$(LIBDIR)/libpaimon.a \
	  $(D)$(LIBDIR)/libpaimon.so $(D)$(LIBDIR)/libpaimon.so.$(SOMAJOR) \
	  $(D)$(LIBDIR)/libpaimon.so.$(VERSION) $(D)$(INCLUDEDIR)/paimon.h \
	  $(D)$(PKGCONFIGDIR)/paimon.pc \
	  $(D)$(LUA54_CMOD)/paimon/core.so $(D)$(LUAJIT_CMOD)/paimon/core.so
	rm -f $(addprefix $(D)$(SCRIPTS_DIR)/,$(notdir $(SCRIPTS)))
	rm -f $(addprefix $(D)$(POLICIES_DIR)/,$(notdir $(POLICIES)))
	@for m in $(LUA_MODULES) $(RESTY_MODULES); do \
	  rel=$${m#lua/}; rm -f $(D)$(LUA54_LMOD)/$$rel $(D)$(LUAJIT_LMOD)/$$rel; \
	done
	@for dir in $(LUA54_LMOD) $(LUAJIT_LMOD); do \
	  for sub in paimon/policy paimon resty/paimon resty; do rmdir $(D)$$dir/$$sub 2>/dev/null || true; done; \
	done
	-@rmdir $(D)$(LUA54_CMOD)/paimon $(D)$(LUAJIT_CMOD)/paimon $(D)$(SCRIPTS_DIR) $(D)$(POLICIES_DIR) \
	  $(D)$(DATADIR)/paimon-lua 2>/dev/null || true

# ---- LuaRocks (scripts/paimon-scm-1.rockspec, build.type = "make") -------
# `luarocks make` passes LUA_INCDIR/LUA_VERSION/CFLAGS/LIBFLAG to `make rock`
# and INST_LIBDIR/INST_LUADIR/INST_BINDIR to `make rock-install`: the rock
# is the Lua module (paimon.core + lua/paimon, lua/resty) for the Lua that
# LuaRocks targets (5.4, or 5.1 = LuaJIT).
LUA_INCDIR ?= $(if $(filter 5.1,$(LUA_VERSION)),/usr/include/luajit-2.1,/usr/include/lua$(LUA_VERSION))
LUA_VERSION ?= 5.4
LIBFLAG ?= -shared
ROCK_SO := $(BUILD)/rock/paimon/core.so
ROCK_OBJ := $(LUA_SRC:src/%.c=$(BUILD)/objrock/%.o)

$(BUILD)/objrock/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(LUA_INCDIR) -c $< -o $@

$(ROCK_SO): $(ROCK_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAG) -o $@ $(ROCK_OBJ) $(LIB_A) $(DEPS_LIBS) $(LDFLAGS_ALL)

rock: $(ROCK_SO)

rock-install: $(ROCK_SO)
	$(INSTALL) -d $(INST_LIBDIR)/paimon
	$(INSTALL) -m 755 $(ROCK_SO) $(INST_LIBDIR)/paimon/core.so
	@set -e; for m in $(LUA_MODULES) $(RESTY_MODULES); do \
	  rel=$${m#lua/}; \
	  $(INSTALL) -d $(INST_LUADIR)/$$(dirname $$rel); \
	  $(INSTALL) -m 644 $$m $(INST_LUADIR)/$$rel; \
	done

clean:
	rm -rf $(BUILD)
