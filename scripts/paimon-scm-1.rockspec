-- LuaRocks package of the paimon Lua module: paimon.core (C) + paimon.*
-- and resty.paimon (Lua), for Lua 5.4 or LuaJIT 2.1 (LuaRocks' "5.1").
-- Build from a checkout (the project is not published on a rocks server):
--   luarocks make scripts/paimon-scm-1.rockspec                 # Lua 5.4
--   luarocks --lua-version 5.4 --tree /tmp/rocks make scripts/paimon-scm-1.rockspec
-- The Makefile does the work (`make rock`, `make rock-install`); the
-- paimon-lua interpreter, libpaimon and paimon.pc come with `make install`.
rockspec_format = "3.0"
package = "paimon"
version = "scm-1"
source = {
  url = "git+file:///paimon-lua",   -- no public repository yet: use `luarocks make` in a checkout
}
description = {
  summary = "Apache Paimon table metadata (snapshots, manifests, files) for Lua and OpenResty",
  detailed = [[
A C runtime that reads Apache Paimon tables' metadata exactly as Java
Paimon writes it (snapshot and schema JSON, Avro manifest lists and
manifests with the null/deflate/snappy/zstandard codecs, BinaryRow
partitions, tags, branches, consumers), and its Lua binding. Includes
resty.paimon, an OpenResty wrapper that runs table I/O in nginx thread pools.
]],
  license = "Apache-2.0",
  labels = { "paimon", "lakehouse", "avro", "openresty" },
}
dependencies = {
  "lua >= 5.1, < 5.5",   -- Lua 5.4, or LuaJIT 2.1 as 5.1 (5.2/5.3 are refused at compile time)
}
external_dependencies = {
  ZSTD = { header = "zstd.h", library = "zstd" },
  ZLIB = { header = "zlib.h", library = "z" },
  SNAPPY = { header = "snappy-c.h", library = "snappy" },
  JANSSON = { header = "jansson.h", library = "jansson" },
  LIBUV = { header = "uv.h", library = "uv" },
}
build = {
  type = "make",
  build_target = "rock",
  install_target = "rock-install",
  build_variables = {
    CFLAGS = "$(CFLAGS)",
    LIBFLAG = "$(LIBFLAG)",
    LUA_INCDIR = "$(LUA_INCDIR)",
    BUILD = "build/luarocks",
  },
  install_variables = {
    INST_PREFIX = "$(PREFIX)",
    INST_BINDIR = "$(BINDIR)",
    INST_LIBDIR = "$(LIBDIR)",
    INST_LUADIR = "$(LUADIR)",
    INST_CONFDIR = "$(CONFDIR)",
    BUILD = "build/luarocks",
  },
}
test_dependencies = { "busted" }
test = {
  type = "command",
  command = "make test",
}
