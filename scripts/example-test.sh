#!/bin/sh
# The public C API without Lua: BUILD/examples/table_info (examples/c/,
# paimon.h only, linked against libpaimon.so) run against the bundled sample
# and the Java-written fixtures; its latest snapshot and live files must be
# what `paimon-lua inspect.lua ... --json` reports. BUILD/examples/table_write
# creates, writes and commits a table that table_info and read.lua then read.
#
#   sh scripts/example-test.sh [BUILD_DIR]
#
# Prints "ok N - ..." / "not ok N - ..." lines, last "N passed, N failed".
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
FIXTURES=${PAIMON_FIXTURES:-$ROOT/spec/fixtures}
PY=/usr/bin/python3
EX=$B/examples/table_info

n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /' | head -30; }
check() { d=$1; shift; if out=$("$@" 2>&1); then ok "$d"; else notok "$d" "$out"; fi; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

TMP=$(mktemp -d /tmp/paimon-example.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# examples/README.md's command that builds the sample generator, run as
# written (against this build's libpaimon.a): the documented line links
lib_a=$B/libpaimon.a
cmd=$(sed -n '/^cc -std=c99/,/-o build\/make_sample$/p' examples/README.md | tr -d '\\\n' |
      sed "s#build/libpaimon.a#$lib_a#; s#-o build/make_sample#-o $TMP/make_sample#")
# a sanitizer build's library needs its runtime linked in too
san=$(nm "$lib_a" 2>/dev/null | grep -q ' U __asan_' && echo "-fsanitize=address,undefined")
[ -n "$san" ] && cmd="$cmd $san"
if [ -n "$cmd" ] && out=$(sh -c "$cmd" 2>&1) && [ -x "$TMP/make_sample" ]; then
  ok "examples/README.md's cc line builds make_sample"
else
  notok "examples/README.md's cc line builds make_sample" "${cmd:-(no cc line found)}
$out"
fi

if [ ! -x "$EX" ]; then notok "$BUILD/examples/table_info is built (make)"; finish; fi
ok "$BUILD/examples/table_info is built"

check "it needs libpaimon.so, not Lua" sh -c "
  readelf -d '$EX' | grep -q 'NEEDED.*libpaimon.so' && ! readelf -d '$EX' | grep -q 'NEEDED.*lua'"
check "libpaimon.so exports paimon_* only" sh -c "
  syms=\$(nm -D --defined-only '$B/libpaimon.so' | awk '{print \$3}')
  [ -n \"\$syms\" ] && ! printf '%s\n' \"\$syms\" | grep -v -E '^(paimon_|_init\$|_fini\$)'"
check "table_info --help exits 0" "$EX" --help
"$EX" >/dev/null 2>&1; rc=$?
if [ $rc = 2 ]; then ok "table_info without arguments exits 2"; else notok "table_info without arguments exits 2 (got $rc)"; fi
"$EX" "$TMP/no-such-table" >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc = 1 ] && grep -q "$TMP/no-such-table" "$TMP/err"; then
  ok "a missing table exits 1 naming the path"
else
  notok "a missing table exits 1 naming the path (exit $rc)" "$(cat "$TMP/err")"
fi

# --option KEY=VALUE: FileIO options through paimon_table_open_v2 (the
# pmtest:// FileIO serves a directory named by its option pmtest.root); a
# bad form exits 2 without echoing what was given (it may be a credential)
for bad in "--option" "--option =S3CR3T-EX" "--option S3CR3T-EX"; do
  # shellcheck disable=SC2086
  "$EX" "$TMP/t" $bad >/dev/null 2>"$TMP/err"; rc=$?
  if [ $rc = 2 ] && grep -q 'KEY=VALUE' "$TMP/err" && ! grep -q S3CR3T "$TMP/err"; then
    ok "table_info $bad: exit 2, nothing echoed"
  else
    notok "table_info $bad: exit 2, nothing echoed (exit $rc)" "$(cat "$TMP/err")"
  fi
done
mkdir -p "$TMP/bk" && cp -R "$FIXTURES/paimon-java/cpp-parquet-append_with_bitmap/append_with_bitmap.db/append_with_bitmap" "$TMP/bk/t"
if "$EX" pmtest://bk/t --option "pmtest.root=$TMP" --option pmtest.secret-key=S3CR3T=EX >"$TMP/uri.out" 2>"$TMP/err" &&
   "$EX" "$TMP/bk/t" | sed "s|^table	.*|table	pmtest://bk/t|" | cmp -s - "$TMP/uri.out" && ! grep -q S3CR3T "$TMP/uri.out"; then
  ok "table_info URI --option ...: the options reach the FileIO, the output is the local copy's"
else
  notok "table_info URI --option ...: the options reach the FileIO" "$(cat "$TMP/uri.out" "$TMP/err")"
fi
"$EX" pmtest://bk/t --option "pmtest.root=$TMP" --option pmtest.rooot=S3CR3T-EX >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc = 1 ] && grep -q "pmtest.rooot" "$TMP/err" && ! grep -q S3CR3T "$TMP/err"; then
  ok "table_info: a misspelt FileIO option is refused by name, its value not shown"
else
  notok "table_info: a misspelt FileIO option is refused by name (exit $rc)" "$(cat "$TMP/err")"
fi

# compare TABLE: table_info's output against inspect.lua (latest snapshot + files)
compare() {
  "$EX" "$1" >"$TMP/ex.out" 2>"$TMP/ex.err" || { cat "$TMP/ex.err"; return 1; }
  "$B/paimon-lua" inspect.lua "$1" snapshots --json >"$TMP/snaps.json" || return 1
  "$B/paimon-lua" inspect.lua "$1" files --json >"$TMP/files.json" || return 1
  $PY - "$TMP/ex.out" "$TMP/snaps.json" "$TMP/files.json" <<'EOF'
import json, sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
snaps = json.load(open(sys.argv[2]))
files = json.load(open(sys.argv[3]))
kinds = {}
for l in lines:
    kinds.setdefault(l[0], []).append(l[1:])
if not snaps:
    sys.exit(0 if "snapshot" not in kinds and kinds.get("files") == [["0", "0"]] else "expected no snapshot: %r" % lines)
latest = snaps[-1]
s = kinds["snapshot"][0]
want = [str(latest["snapshot_id"]), latest["commit_kind"], str(latest["total_record_count"]), str(latest["commit_time"])]
if s != want:
    sys.exit("snapshot %r != %r" % (s, want))
got = sorted((f[2], int(f[1]), int(f[3]), int(f[4]), int(f[5])) for f in kinds.get("file", []))
exp = sorted((f["file_path"], f["bucket"], f["record_count"], f["file_size_in_bytes"], f["level"]) for f in files)
if got != exp:
    sys.exit("files differ:\n C:   %r\n Lua: %r" % (got[:5], exp[:5]))
if kinds["files"] != [[str(len(exp)), str(sum(f[2] for f in exp))]]:
    sys.exit("totals %r" % kinds["files"])
EOF
}

check "bundled sample: latest snapshot and files equal inspect.lua" compare examples/sample/warehouse/demo.db/orders
for t in "$FIXTURES"/paimon-java/*/*.db/*; do
  [ -d "$t" ] || continue
  name=${t#"$FIXTURES"/paimon-java/}; name=${name%%/*}
  if [ -n "$(find "$t" -maxdepth 2 -name 'manifest.format*' 2>/dev/null)" ] || grep -q '"manifest.format" *: *"orc"' "$t"/schema/schema-* 2>/dev/null; then
    "$EX" "$t" >/dev/null 2>"$TMP/err"; rc=$?
    if [ $rc = 1 ] && grep -q 'manifest.format' "$TMP/err"; then ok "$name: refused (ORC manifests), exit 1"; else notok "$name: refused (ORC manifests) (exit $rc)" "$(cat "$TMP/err")"; fi
    continue
  fi
  check "$name: latest snapshot and files equal inspect.lua" compare "$t"
done

# table_write: create, write and commit through paimon.h; the result must
# be what table_info and inspect.lua see, and the rows what read.lua reads
WR=$B/examples/table_write
WT=$TMP/written/db.db/orders
if "$WR" "$WT" 5 >"$TMP/wr.out" 2>"$TMP/wr.err" && grep -q "^snapshot	1	5\$" "$TMP/wr.out" &&
   [ "$(grep -c '^file	' "$TMP/wr.out")" = 2 ]; then
  ok "table_write creates a table, writes 5 rows in 2 partitions and commits snapshot 1"
else
  notok "table_write creates, writes and commits" "$(cat "$TMP/wr.out" "$TMP/wr.err")"
fi
check "table_write's table: latest snapshot and files equal inspect.lua" compare "$WT"
check "table_write's rows read back through read.lua" sh -c "
  '$B/paimon-lua' read.lua '$WT' | $PY -c '
import json, sys
rows = sorted((json.loads(l) for l in sys.stdin), key=lambda r: int(r[\"order_id\"]))
assert [int(r[\"order_id\"]) for r in rows] == [1000, 1001, 1002, 1003, 1004], rows
assert [r[\"amount\"] for r in rows] == [\"10.00\", \"11.01\", \"12.02\", \"13.03\", \"14.04\"], rows
assert rows[1][\"dt\"] == \"2026-01-02\" and rows[1][\"tags\"] == [\"web\", \"repeat\"], rows
'"
"$WR" "$WT" >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc = 1 ] && grep -q "already exists" "$TMP/err"; then
  ok "table_write refuses an existing table, exit 1"
else
  notok "table_write refuses an existing table (exit $rc)" "$(cat "$TMP/err")"
fi
finish
