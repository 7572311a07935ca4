#!/bin/sh
# make install / make uninstall, and the rockspec, tested in temp dirs:
#   1. make install PREFIX=/opt/paimon-lua DESTDIR=TMP/dest (a staged
#      install): every file in place; the installed paimon-lua runs
#      (--version, --help listing every installed script, each script's
#      --help, inspect.lua on a fixture) from its staged location; lua5.4 and
#      luajit load the installed modules; uninstall leaves nothing.
#   2. make install PREFIX=TMP/prefix: paimon-lua copied elsewhere finds its
#      scripts at the compile-time PREFIX; a C program builds against the
#      installed paimon.pc; uninstall leaves nothing.
#   3. luarocks make scripts/paimon-scm-1.rockspec into a temp tree, from a
#      temp copy of the sources; lua5.4 requires the rock.
# The builds go to temp dirs seeded with BUILD's objects (no full rebuild).
#
#   sh scripts/install-test.sh [BUILD_DIR]     (make test-install)
#
# Prints "ok N - ..." / "not ok N - ..." lines, last "N passed, N failed".
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
FIXTURES=${PAIMON_FIXTURES:-$ROOT/spec/fixtures}
MAKE=${MAKE:-make}
PY=/usr/bin/python3

n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /' | tail -30; }
check() { d=$1; shift; if out=$("$@" 2>&1); then ok "$d"; else notok "$d" "$out"; fi; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

TMP=$(mktemp -d /tmp/paimon-install.XXXXXX)
trap 'case $TMP in /tmp/paimon-install.*) rm -rf "$TMP" ;; esac' EXIT
JOBS="-j$(nproc 2>/dev/null || echo 2)"

# a build dir seeded with BUILD's objects (cp -p keeps their times)
seed() { # seed DIR
  mkdir -p "$1"
  for d in obj objjit; do [ -d "$B/$d" ] && cp -Rp "$B/$d" "$1/"; done
  [ -f "$B/libpaimon.a" ] && cp -p "$B/libpaimon.a" "$1/"
  return 0
}

# the table inspect.lua reads: the bundled sample, and one Java fixture
SAMPLE=$ROOT/examples/sample/warehouse/demo.db/orders
FIX=$(ls -d "$FIXTURES"/paimon-java/cpp-avro-append_with_multiple_map/*.db/* 2>/dev/null | head -1)
[ -n "$FIX" ] || FIX=$SAMPLE

# ---- 1. staged install under DESTDIR -------------------------------------
P1=/opt/paimon-lua
D1=$TMP/dest
seed "$TMP/build1"
if $MAKE --no-print-directory $JOBS BUILD="$TMP/build1" PREFIX=$P1 DESTDIR="$D1" install >"$TMP/install1.log" 2>&1; then
  ok "make install PREFIX=$P1 DESTDIR=TMP/dest"
else
  notok "make install PREFIX=$P1 DESTDIR=TMP/dest" "$(tail -20 "$TMP/install1.log")"
  finish
fi
R=$D1$P1
expect_files="bin/paimon-lua lib/libpaimon.a lib/libpaimon.so lib/libpaimon.so.0 include/paimon.h
lib/pkgconfig/paimon.pc lib/lua/5.4/paimon/core.so lib/lua/5.1/paimon/core.so
share/lua/5.4/paimon/init.lua share/lua/5.4/paimon/cli.lua share/lua/5.4/paimon/json.lua
share/lua/5.4/resty/paimon.lua share/lua/5.1/paimon/init.lua share/lua/5.1/resty/paimon.lua
share/paimon-lua/scripts/inspect.lua"
missing=""
for f in $expect_files; do [ -e "$R/$f" ] || missing="$missing $f"; done
for f in lua/paimon/*.lua lua/paimon/*/*.lua lua/resty/*.lua lua/resty/*/*.lua; do
  [ -f "$f" ] || continue
  rel=${f#lua/}
  [ -f "$R/share/lua/5.4/$rel" ] && [ -f "$R/share/lua/5.1/$rel" ] || missing="$missing share/lua/5.x/$rel"
done
for f in scripts/*.lua; do [ -f "$R/share/paimon-lua/scripts/${f#scripts/}" ] || missing="$missing $f"; done
for f in examples/policies/*.lua; do [ -f "$R/share/paimon-lua/policies/${f#examples/policies/}" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then ok "installed: bin, libpaimon.{a,so}, paimon.h, paimon.pc, Lua 5.4 + 5.1 modules, scripts, policies"
else notok "installed files" "missing:$missing"; fi
check "paimon.pc names the PREFIX" grep -q "^prefix=$P1\$" "$R/lib/pkgconfig/paimon.pc"

cd "$TMP" || exit 1
out=$("$R/bin/paimon-lua" --version 2>&1); rc=$?
if [ $rc = 0 ] && printf '%s' "$out" | grep -q '^paimon-lua [0-9]'; then ok "installed paimon-lua --version: $out"
else notok "installed paimon-lua --version" "exit $rc: $out"; fi

"$R/bin/paimon-lua" --help >"$TMP/help" 2>&1
listed=$(sed -n 's/^  \([^ ]*\.lua\)$/\1/p' "$TMP/help" | sort | tr '\n' ' ')
installed=$(cd "$R/share/paimon-lua/scripts" && ls *.lua | sort | tr '\n' ' ')
if [ -n "$installed" ] && [ "$listed" = "$installed" ]; then ok "--help lists every installed script: $listed"
else notok "--help lists every installed script" "listed: $listed
installed: $installed
$(cat "$TMP/help")"; fi
for s in $installed; do
  out=$("$R/bin/paimon-lua" "$s" --help 2>&1); rc=$?
  if [ $rc = 0 ] && [ -n "$out" ]; then ok "installed $s --help exits 0"; else notok "installed $s --help exits 0 (got $rc)" "$out"; fi
done

check "installed paimon-lua uses the installed modules" sh -c "
  '$R/bin/paimon-lua' -e 'io.write(package.searchpath(\"paimon.cli\", package.path))' | grep -q '^$R/share/lua/5.4/paimon/cli.lua\$'"
"$R/bin/paimon-lua" inspect.lua "$FIX" snapshots --json >"$TMP/inst.json" 2>"$TMP/err"; rc=$?
"$B/paimon-lua" inspect.lua "$FIX" snapshots --json >"$TMP/build.json" 2>>"$TMP/err"
if [ $rc = 0 ] && [ -s "$TMP/inst.json" ] && cmp -s "$TMP/inst.json" "$TMP/build.json"; then
  ok "installed inspect.lua snapshots --json on a fixture equals the build's"
else
  notok "installed inspect.lua snapshots --json on a fixture (exit $rc)" "$(cat "$TMP/err")"
fi

# --policy NAME.lua finds the installed example policies from any directory
rm -rf "$TMP/pol" && mkdir -p "$TMP/pol" && cp -R "$SAMPLE" "$TMP/pol/orders"
out=$(cd "$TMP" && "$R/bin/paimon-lua" expire.lua "$TMP/pol/orders" --retain-min 1 --older-than 0s \
        --policy keep_daily.lua --dry-run --json 2>&1); rc=$?
if [ $rc = 0 ] && printf '%s' "$out" | grep -q '"expired"'; then
  ok "installed expire.lua --policy keep_daily.lua finds the installed policy"
else
  notok "installed expire.lua --policy keep_daily.lua (exit $rc)" "$out"
fi
out=$(cd "$TMP" && "$R/bin/paimon-lua" expire.lua "$TMP/pol/orders" --policy no_such_policy.lua --dry-run 2>&1); rc=$?
if [ $rc = 2 ] && printf '%s' "$out" | grep -q 'no_such_policy.lua'; then
  ok "an unknown --policy name is a usage error naming it"
else
  notok "an unknown --policy name is a usage error naming it (exit $rc)" "$out"
fi

check "lua5.4 requires the installed paimon (lib/lua/5.4 + share/lua/5.4)" lua5.4 -e "
  package.path = '$R/share/lua/5.4/?.lua;$R/share/lua/5.4/?/init.lua'
  package.cpath = '$R/lib/lua/5.4/?.so'
  local p = require 'paimon'
  local t = assert(p.open('$SAMPLE'))
  assert(t:latest_snapshot().id == 5)
  assert(package.searchpath('paimon.core', package.cpath):find('$R', 1, true) == 1)"
check "lua5.4 with the installed modules finds the installed policies by name" sh -c "
  cd '$TMP' && lua5.4 -e \"
    package.path = '$R/share/lua/5.4/?.lua;$R/share/lua/5.4/?/init.lua'
    package.cpath = '$R/lib/lua/5.4/?.so'
    local t = assert(require('paimon').open('$TMP/pol/orders'))
    assert(t:expire_snapshots{retain_min = 1, older_than = '0s', dry_run = true, policy = 'keep_daily.lua'})\""
if command -v luajit >/dev/null; then
  check "luajit with the installed modules finds the installed policies by name" sh -c "
    cd '$TMP' && luajit -e \"
      package.path = '$R/share/lua/5.1/?.lua;$R/share/lua/5.1/?/init.lua'
      package.cpath = '$R/lib/lua/5.1/?.so'
      local t = assert(require('paimon').open('$TMP/pol/orders'))
      assert(t:expire_snapshots{retain_min = 1, older_than = '0s', dry_run = true, policy = 'keep_daily.lua'})\""
fi
if command -v luajit >/dev/null; then
  check "luajit requires the installed paimon and resty.paimon (lib/lua/5.1 + share/lua/5.1)" luajit -e "
    package.path = '$R/share/lua/5.1/?.lua;$R/share/lua/5.1/?/init.lua'
    package.cpath = '$R/lib/lua/5.1/?.so'
    local p = require 'paimon'
    assert(assert(p.open('$SAMPLE')):latest_snapshot().id == 5)
    local rp = require 'resty.paimon'
    local rows = assert(rp.snapshots('$SAMPLE'))
    assert(#rows == 5 and rows[5].snapshot_id == 5)"
fi

cd "$ROOT" || exit 1
if $MAKE --no-print-directory BUILD="$TMP/build1" PREFIX=$P1 DESTDIR="$D1" uninstall >"$TMP/uninstall1.log" 2>&1; then
  ok "make uninstall PREFIX=$P1 DESTDIR=TMP/dest"
else
  notok "make uninstall" "$(tail -20 "$TMP/uninstall1.log")"
fi
left=$(find "$D1" \( -type f -o -type l \) 2>/dev/null)
ours=""
for d in lib/lua/5.4/paimon lib/lua/5.1/paimon share/lua/5.4/paimon share/lua/5.1/paimon \
         share/lua/5.4/resty share/lua/5.1/resty share/paimon-lua; do
  [ -e "$R/$d" ] && ours="$ours $R/$d"
done
if [ -z "$left" ] && [ -z "$ours" ]; then ok "uninstall left no file and none of our folders"
else notok "uninstall left nothing" "$left
$ours"; fi

# ---- 2. install under a real PREFIX: compile-time paths, pkg-config ------
P2=$TMP/prefix
seed "$TMP/build2"
if $MAKE --no-print-directory $JOBS BUILD="$TMP/build2" PREFIX="$P2" install >"$TMP/install2.log" 2>&1; then
  ok "make install PREFIX=TMP/prefix"
else
  notok "make install PREFIX=TMP/prefix" "$(tail -20 "$TMP/install2.log")"
  finish
fi
mkdir -p "$TMP/elsewhere"
cp "$P2/bin/paimon-lua" "$TMP/elsewhere/paimon-lua"
(cd "$TMP" && "$TMP/elsewhere/paimon-lua" inspect.lua "$FIX" snapshots --json) >"$TMP/moved.json" 2>"$TMP/err"; rc=$?
if [ $rc = 0 ] && cmp -s "$TMP/moved.json" "$TMP/build.json"; then
  ok "a moved paimon-lua finds scripts and modules at the compile-time PREFIX"
else
  notok "a moved paimon-lua finds scripts and modules at the compile-time PREFIX (exit $rc)" "$(cat "$TMP/err")"
fi
if PKG_CONFIG_PATH="$P2/lib/pkgconfig" cc examples/c/table_info.c -o "$TMP/table_info" \
     $(PKG_CONFIG_PATH="$P2/lib/pkgconfig" pkg-config --cflags --libs paimon) >"$TMP/cc.log" 2>&1; then
  ok "examples/c/table_info.c builds with pkg-config --cflags --libs paimon"
  out=$(env -u LD_LIBRARY_PATH "$TMP/table_info" "$SAMPLE" 2>&1); rc=$?
  if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "^snapshot	5	" && printf '%s\n' "$out" | grep -q "^files	5	16\$"; then
    ok "it runs against the installed libpaimon.so without LD_LIBRARY_PATH (rpath from paimon.pc)"
  else
    notok "it runs against the installed libpaimon.so (exit $rc)" "$out"
  fi
else
  notok "examples/c/table_info.c builds with pkg-config" "$(cat "$TMP/cc.log")"
fi
# the maintenance API from the installed header and library alone
if PKG_CONFIG_PATH="$P2/lib/pkgconfig" cc examples/c/table_maint.c -o "$TMP/table_maint" \
     $(PKG_CONFIG_PATH="$P2/lib/pkgconfig" pkg-config --cflags --libs paimon) >"$TMP/cc.log" 2>&1; then
  ok "examples/c/table_maint.c builds with pkg-config --cflags --libs paimon"
  out=$(env -u LD_LIBRARY_PATH "$TMP/table_maint" verify "$SAMPLE" all-snapshots=true 2>&1); rc=$?
  if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q '^{"ok":true,"branches":1,"snapshots":5,'; then
    ok "its verify runs against the installed libpaimon.so without LD_LIBRARY_PATH"
  else
    notok "its verify runs against the installed libpaimon.so (exit $rc)" "$out"
  fi
else
  notok "examples/c/table_maint.c builds with pkg-config" "$(cat "$TMP/cc.log")"
fi
# writing and committing from the installed header and library alone
if PKG_CONFIG_PATH="$P2/lib/pkgconfig" cc examples/c/table_write.c -o "$TMP/table_write" \
     $(PKG_CONFIG_PATH="$P2/lib/pkgconfig" pkg-config --cflags --libs paimon) >"$TMP/cc.log" 2>&1; then
  ok "examples/c/table_write.c builds with pkg-config --cflags --libs paimon"
  out=$(env -u LD_LIBRARY_PATH "$TMP/table_write" "$TMP/written/db.db/orders" 3 2>&1); rc=$?
  if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "^snapshot	1	3\$"; then
    ok "it creates, writes and commits against the installed libpaimon.so without LD_LIBRARY_PATH"
  else
    notok "it creates, writes and commits against the installed libpaimon.so (exit $rc)" "$out"
  fi
else
  notok "examples/c/table_write.c builds with pkg-config" "$(cat "$TMP/cc.log")"
fi
$MAKE --no-print-directory BUILD="$TMP/build2" PREFIX="$P2" uninstall >"$TMP/uninstall2.log" 2>&1
left=$(find "$P2" \( -type f -o -type l \) 2>/dev/null)
if [ -z "$left" ]; then ok "make uninstall PREFIX=TMP/prefix left no file"; else notok "uninstall PREFIX left no file" "$left"; fi

# ---- 3. the rockspec ----------------------------------------------------
if command -v luarocks >/dev/null; then
  check "luarocks lint scripts/paimon-scm-1.rockspec" luarocks lint scripts/paimon-scm-1.rockspec
  mkdir -p "$TMP/src"
  cp -Rp Makefile src lua scripts "$TMP/src/"
  seed "$TMP/src/build/luarocks"
  if (cd "$TMP/src" && MAKEFLAGS=$JOBS luarocks --lua-version 5.4 --tree "$TMP/rocks" \
        make scripts/paimon-scm-1.rockspec) >"$TMP/rock.log" 2>&1; then
    ok "luarocks make scripts/paimon-scm-1.rockspec (Lua 5.4, temp tree)"
  else
    notok "luarocks make scripts/paimon-scm-1.rockspec" "$(tail -20 "$TMP/rock.log")"
  fi
  check "lua5.4 requires paimon and resty.paimon from the rock tree" sh -c "
    eval \"\$(luarocks --lua-version 5.4 --tree '$TMP/rocks' path)\"
    cd '$TMP' && lua5.4 -e '
      local p = require \"paimon\"
      assert(package.searchpath(\"paimon.core\", package.cpath):find(\"$TMP/rocks\", 1, true) == 1)
      assert(assert(p.open(\"$SAMPLE\")):latest_snapshot().id == 5)
      assert(#assert(require(\"resty.paimon\").snapshots(\"$SAMPLE\")) == 5)'"
  check "luarocks remove paimon" luarocks --lua-version 5.4 --tree "$TMP/rocks" remove paimon
else
  notok "luarocks is installed (scripts/install-deps.sh)"
fi
finish
