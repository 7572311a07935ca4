#!/bin/sh
# Runs every suite (C unit tests, busted specs) and ends with one line
# "N passed, N failed" counting all of them. Usage: run-tests.sh [BUILD_DIR]
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
export PAIMON_BUILD="$ROOT/$BUILD"
export PAIMON_FIXTURES="${PAIMON_FIXTURES:-$ROOT/../shared/fixtures}"
pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  "$t" >"$log" 2>&1
  rc=$?
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  if [ -z "$summary" ]; then
    sed 's/^/  /' "$log" | tail -40
    echo "not ok - $name crashed or printed no summary (exit $rc)"
    fail=$((fail + 1))
    continue
  fi
  grep -v -E '^[0-9]+ passed, [0-9]+ failed$' "$log"
  p=${summary%% passed*}
  f=${summary#*passed, }; f=${f%% failed*}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name exited $rc"; fi
  echo "# $name: $p passed, $f failed"
  pass=$((pass + p))
  fail=$((fail + f))
done

# busted specs: through plain lua5.4 with the built module, or, for
# sanitizer builds, through the sanitized paimon-lua (core linked in).
if [ -n "$SANITIZER" ]; then
  set -- "$BUILD/paimon-lua" /usr/bin/busted
else
  set -- lua5.4 /usr/bin/busted
fi
"$@" -o TAP --lpath="$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;$ROOT/spec/?.lua" \
  --cpath="$ROOT/$BUILD/lua54/?.so" spec >"$log" 2>&1
rc=$?
cat "$log" | grep -v -E '^[0-9]+ passed, [0-9]+ failed$'
p=$(grep -c -E '^ok [0-9]+' "$log")
f=$(grep -c -E '^not ok [0-9]+' "$log")
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - busted exited $rc"; fi
echo "# busted: $p passed, $f failed"
pass=$((pass + p))
fail=$((fail + f))

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
