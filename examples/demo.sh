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

# ---- the main job, on a temp copy (the bundled table stays as it is) ----
WORK=$(mktemp -d /tmp/paimon-demo.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT
cp -R "$ROOT/$TABLE" "$WORK/orders"
TABLE=$WORK/orders
echo
echo "== working on a copy: $TABLE"

printf '%s\n' \
  '{"order_id": 1001, "customer": "ada", "amount": "19.90", "dt": "2026-11-04"}' \
  '{"order_id": 1002, "customer": "grace", "amount": "5.00", "dt": "2026-11-04"}' \
  '{"order_id": 1003, "customer": null, "amount": "120.50", "dt": "2026-11-05"}' > "$WORK/rows.jsonl"
step write.lua "$TABLE" --input "$WORK/rows.jsonl" --json
step read.lua "$TABLE" --partition dt=2026-11-04
for i in 1 2 3; do
  echo "{\"order_id\": $((2000 + i)), \"customer\": \"batch$i\", \"amount\": \"1.00\", \"dt\": \"2026-11-05\"}" |
    "$PAIMON_LUA" write.lua "$TABLE" >/dev/null || { echo "demo: write failed" >&2; exit 1; }
done
step inspect.lua "$TABLE" snapshots
step drop_partition.lua "$TABLE" --partition dt=2026-11-03 --json
step inspect.lua "$TABLE" partitions
step expire.lua "$TABLE" --retain-min 3 --older-than 0s --dry-run
step expire.lua "$TABLE" --retain-min 3 --older-than 0s --json

# ---- the snapshot lifecycle: a tag, a bad write rolled back, a dead consumer
step tag.lua "$TABLE" create before-bad-load
step tag.lua "$TABLE" list
echo '{"order_id": 9999, "customer": "oops", "amount": "-1.00", "dt": "2026-11-05"}' |
  "$PAIMON_LUA" write.lua "$TABLE" >/dev/null || { echo "demo: write failed" >&2; exit 1; }
echo
echo "== a bad row landed; roll the table back to the tag taken before it"
step read.lua "$TABLE" --partition dt=2026-11-05
step rollback.lua "$TABLE" --to-tag before-bad-load --dry-run
step rollback.lua "$TABLE" --to-tag before-bad-load
step read.lua "$TABLE" --partition dt=2026-11-05
step tag.lua "$TABLE" delete before-bad-load
echo
echo "== the consumer 'dashboard' capped that expiration; it has not moved for days: expire it"
touch -d '3 days ago' "$TABLE/consumer/consumer-dashboard"
step consumer.lua "$TABLE" list
step consumer.lua "$TABLE" expire --expiration 1d
step expire.lua "$TABLE" --retain-min 3 --older-than 0s
step inspect.lua "$TABLE" snapshots
# a stale file nobody references, two days old
printf 'junk' > "$TABLE/dt=2026-11-02/bucket-0/data-00000000-0000-4000-8000-000000000000-0.avro"
touch -d '2 days ago' "$TABLE/dt=2026-11-02/bucket-0/data-00000000-0000-4000-8000-000000000000-0.avro"
step remove_orphan_files.lua "$TABLE" --dry-run
step remove_orphan_files.lua "$TABLE" --json
step inspect.lua "$TABLE" files
# read-only: everything the latest snapshot and the tags need is still there
step verify.lua "$TABLE"

echo
echo "demo: all steps passed"
