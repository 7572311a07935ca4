#!/bin/sh
# Demo of paimon-lua on the bundled sample table (see examples/README.md).
#   sh examples/demo.sh [BUILD_DIR]     (`make demo` passes $(BUILD), default build)
# Every step prints a heading and runs one command; the first failing step
# stops the demo with a non-zero exit status. Add new steps at the end with
# `step` (paimon-lua arguments) or `step_lua` (a Lua chunk for `paimon-lua -e`).
set -u

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd) || exit 1
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
PAIMON_LUA=$BUILD/paimon-lua
TABLE=examples/sample/warehouse/demo.db/orders

cd "$ROOT" || exit 1
if [ ! -x "$PAIMON_LUA" ]; then
  echo "demo: $PAIMON_LUA not found; run make first" >&2
  exit 1
fi
if [ ! -f "$TABLE/schema/schema-0" ]; then
  echo "demo: sample table $TABLE missing (see examples/README.md)" >&2
  exit 1
fi

# step ARGS...: run paimon-lua ARGS under a heading.
step() {
  echo
  echo "== $*"
  "$PAIMON_LUA" "$@" || { echo "demo: step failed (exit $?): paimon-lua $*" >&2; exit 1; }
}

# step_lua TITLE CHUNK: run a Lua chunk with paimon-lua -e; TABLE is passed in
# the global `table_path`.
step_lua() {
  echo
  echo "== paimon-lua -e ($1)"
  "$PAIMON_LUA" -e "table_path = [[$TABLE]]" -e "$2" ||
    { echo "demo: step failed (exit $?): $1" >&2; exit 1; }
}

for view in snapshots schemas options files manifests partitions tags branches consumers; do
  step inspect.lua "$TABLE" "$view"
done
step inspect.lua "$TABLE" partitions --json
step inspect.lua "$TABLE" files --snapshot 2

step_lua "Lua API: latest snapshot, files of dt=2026-11-02" '
local paimon = require "paimon"
local t = assert(paimon.open(table_path))
local s = assert(t:latest_snapshot())
print(("snapshot %d (%s): %d rows"):format(s.id, s.commit_kind, s.total_record_count))
for f in assert(s:files{partition = {dt = "2026-11-02"}}) do
  print(f.file_path, f.file.row_count .. " rows", f.file.file_size .. " bytes")
end'

echo
echo "demo: all steps passed"
