#!/bin/sh
# The nginx embedding, tested in a real nginx (Debian 12: nginx +
# libnginx-mod-http-lua, LuaJIT 2.1): examples/nginx/nginx.conf with its
# paths pointed at this tree, on a free loopback port, in a private prefix,
# against a temp copy of the sample warehouse. Queried with curl, compared
# with `paimon-lua inspect.lua ... --json`, stopped, error log checked.
#
#   sh scripts/nginx-test.sh [BUILD_DIR]      (make test-nginx)
#
# Prints TAP-like "ok N - ..." / "not ok N - ..." lines and, last,
# "N passed, N failed". Every wait is bounded; nginx is always stopped.
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
PY=/usr/bin/python3
CURL="curl -sS --path-as-is --connect-timeout 2 --max-time 10"

n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /' | head -30; }
check() { # check DESCRIPTION COMMAND...
  d=$1; shift
  if out=$("$@" 2>&1); then ok "$d"; else notok "$d" "$out"; fi
}
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit $?
}

# ---- prerequisites -------------------------------------------------------
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
mods=$(dpkg -L libnginx-mod-http-ndk libnginx-mod-http-lua 2>/dev/null | grep '\.so$')
NDK=$(printf '%s\n' "$mods" | grep ndk_http_module.so | head -1)
LUAMOD=$(printf '%s\n' "$mods" | grep ngx_http_lua_module.so | head -1)
NDK=${NDK:-/usr/lib/nginx/modules/ndk_http_module.so}
LUAMOD=${LUAMOD:-/usr/lib/nginx/modules/ngx_http_lua_module.so}
missing=""
[ -x "$NGINX" ] || missing="$missing nginx"
[ -f "$NDK" ] && [ -f "$LUAMOD" ] || missing="$missing libnginx-mod-http-lua"
command -v curl >/dev/null || missing="$missing curl"
[ -f "$B/luajit/paimon/core.so" ] || missing="$missing $BUILD/luajit/paimon/core.so"
[ -x "$B/paimon-lua" ] || missing="$missing $BUILD/paimon-lua"
if [ -n "$missing" ]; then
  notok "nginx test prerequisites (missing:$missing; scripts/install-deps.sh installs them)"
  finish
fi
ok "prerequisites: $NGINX, $(basename "$LUAMOD"), curl, $BUILD/luajit/paimon/core.so"

TMP=$(mktemp -d /tmp/paimon-nginx.XXXXXX)
NGINX_PID=""
stop_nginx() {
  [ -n "$NGINX_PID" ] || return 0
  kill -QUIT "$NGINX_PID" 2>/dev/null
  i=0
  while kill -0 "$NGINX_PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  if kill -0 "$NGINX_PID" 2>/dev/null; then
    kill -KILL "$NGINX_PID" 2>/dev/null
    # workers of a killed master: their pids were logged by the master's children
    wait "$NGINX_PID" 2>/dev/null
    NGINX_PID=""
    return 1
  fi
  wait "$NGINX_PID" 2>/dev/null
  NGINX_PID=""
  return 0
}
cleanup() {
  stop_nginx
  case $TMP in /tmp/paimon-nginx.*) rm -rf "$TMP" ;; esac
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- prefix: conf, logs, temp, a copy of the sample warehouse -----------
mkdir -p "$TMP/conf" "$TMP/logs" "$TMP/temp"
cp -R examples/sample/warehouse "$TMP/warehouse"
# a table outside the warehouse that traversal attempts would aim at
mkdir -p "$TMP/outside.db" && cp -R examples/sample/warehouse/demo.db/orders "$TMP/outside.db/orders"
TABLE=$TMP/warehouse/demo.db/orders
if [ "$(id -u)" = 0 ]; then
  chmod 755 "$TMP"   # workers run as the user below; the prefix must be theirs to read
  USER_DIRECTIVE="user $(id -un) $(id -gn);"
else
  USER_DIRECTIVE=""
fi

free_port() {
  $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

make_conf() { # make_conf PORT
  sed -e "s|^load_module .*/ndk_http_module.so;|load_module $NDK;|" \
      -e "s|^load_module .*/ngx_http_lua_module.so;|load_module $LUAMOD;|" \
      -e "s|listen 127.0.0.1:8080;|listen 127.0.0.1:$1;|" \
      -e "s|^\( *\)lua_package_path .*|\1lua_package_path \"$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;;\";|" \
      -e "s|^\( *\)lua_package_cpath .*|\1lua_package_cpath \"$B/luajit/?.so;;\";|" \
      -e 's|^\( *\)location / {|\1location = /__test/main-vm { content_by_lua_block { ngx.say(package.loaded["paimon.core"] and "core loaded" or "core not loaded", " ", package.loaded["resty.paimon"] and "resty loaded" or "") } }\n\1location / {|' \
      examples/nginx/nginx.conf >"$TMP/conf/nginx.conf"
  grep -q "listen 127.0.0.1:$1;" "$TMP/conf/nginx.conf" &&
    grep -q "lua_package_cpath \"$B/luajit/" "$TMP/conf/nginx.conf" &&
    grep -q "lua_package_path \"$ROOT/lua/" "$TMP/conf/nginx.conf" &&
    grep -q "load_module $LUAMOD;" "$TMP/conf/nginx.conf" &&
    grep -q "location = /__test/main-vm" "$TMP/conf/nginx.conf"
}

export PAIMON_WAREHOUSE="$TMP/warehouse"
export PAIMON_MAINTENANCE_INTERVAL=1
export PAIMON_MAINTENANCE_TABLES="demo.orders"

PORT=$(free_port)
check "examples/nginx/nginx.conf adapted to this tree (modules, port, lua paths)" make_conf "$PORT"
check "nginx -t accepts the configuration" \
  "$NGINX" -p "$TMP/" -e logs/error.log -c conf/nginx.conf -g "daemon off; $USER_DIRECTIVE" -t

# ---- start (a few ports, in case one got taken meanwhile) ----------------
start_nginx() { # start_nginx LABEL
  started=0
  for attempt in 1 2 3; do
    : >"$TMP/logs/error.log"
    "$NGINX" -p "$TMP/" -e logs/error.log -c conf/nginx.conf -g "daemon off; $USER_DIRECTIVE" \
      >"$TMP/logs/stdout.log" 2>&1 &
    NGINX_PID=$!
    i=0
    while [ $i -lt 100 ]; do            # at most 10 s
      if ! kill -0 "$NGINX_PID" 2>/dev/null; then break; fi
      code=$($CURL -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/" 2>/dev/null)
      if [ "$code" = 404 ]; then started=1; break; fi
      sleep 0.1; i=$((i + 1))
    done
    [ $started = 1 ] && break
    stop_nginx
    grep -q 'Address already in use' "$TMP/logs/error.log" "$TMP/logs/stdout.log" 2>/dev/null || break
    PORT=$(free_port)
    make_conf "$PORT" || break
  done
  if [ $started = 1 ]; then
    ok "nginx started on 127.0.0.1:$PORT (pid $NGINX_PID, $1)"
  else
    notok "nginx started ($1)" "$(cat "$TMP/logs/stdout.log" "$TMP/logs/error.log" 2>/dev/null | tail -20)"
    finish
  fi
  URL="http://127.0.0.1:$PORT"
}

stop_and_check_log() { # stop_and_check_log LABEL
  if stop_nginx; then ok "nginx stopped gracefully (QUIT, $1)"; else notok "nginx stopped gracefully (had to KILL, $1)"; fi
  check "the timer saw premature=true at shutdown and did nothing ($1)" \
    grep -q 'paimon maintenance: worker exiting, skipped' "$TMP/logs/error.log"
  if grep -E '\[(error|alert|emerg|crit)\]' "$TMP/logs/error.log" >"$TMP/bad"; then
    notok "error.log has no [error], [alert], [emerg], [crit] ($1)" "$(head -20 "$TMP/bad")"
  else
    ok "error.log has no [error], [alert], [emerg], [crit] ($1)"
  fi
}

# wait_log PATTERN: up to 6 s for PATTERN in the error log
wait_log() {
  i=0
  while [ $i -lt 60 ]; do
    grep -q "$1" "$TMP/logs/error.log" && return 0
    sleep 0.1; i=$((i + 1))
  done
  tail -20 "$TMP/logs/error.log"; return 1
}

start_nginx "example policy"
URL="http://127.0.0.1:$PORT"

# GET PATH → body in $TMP/body, status echoed
get() { $CURL -o "$TMP/body" -w '%{http_code}' "$URL$1" 2>"$TMP/curl.err" || echo "curl-failed"; }

# compare_json KIND: nginx's $TMP/body against inspect.lua's $TMP/expect
compare_json() {
  $PY - "$1" "$TMP/body" "$TMP/expect" <<'EOF'
import json, sys
kind, got_f, exp_f = sys.argv[1:4]
got = json.load(open(got_f))
exp = json.load(open(exp_f))
cols = {
  "snapshots": ["snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind",
                "commit_time", "base_manifest_list", "delta_manifest_list",
                "changelog_manifest_list", "total_record_count", "delta_record_count",
                "changelog_record_count", "watermark"],
  "files": ["partition", "bucket", "file_path", "file_name", "file_format", "schema_id", "level",
            "record_count", "file_size_in_bytes", "min_sequence_number", "max_sequence_number",
            "creation_time"],
}
if kind == "latest":
    exp = exp[-1]
    got, exp = [got], [exp]
    kind = "snapshots"
pick = lambda rows: [{c: r.get(c) for c in cols[kind]} for r in rows]
if kind == "ids":
    g, e = [r["snapshot_id"] for r in got], [r["snapshot_id"] for r in exp]
    if g != e or not e:
        sys.exit("ids %r != %r" % (g, e))
    sys.exit(0)
if pick(got) != pick(exp):
    sys.exit("nginx: %s\ninspect: %s" % (json.dumps(pick(got))[:1500], json.dumps(pick(exp))[:1500]))
EOF
}

inspect() { "$B/paimon-lua" inspect.lua "$TABLE" "$1" --json >"$TMP/expect" 2>"$TMP/inspect.err"; }

# ---- the status endpoint -------------------------------------------------
status=$(get /tables/demo/orders/snapshots)
inspect snapshots
if [ "$status" = 200 ]; then ok "GET /tables/demo/orders/snapshots is 200"; else notok "GET /tables/demo/orders/snapshots is 200 (got $status)" "$(head -c 600 "$TMP/body")"; fi
check "snapshot ids equal inspect.lua snapshots --json" compare_json ids
check "snapshot rows equal inspect.lua snapshots --json (64-bit commit_identifier exact)" compare_json snapshots
check "Content-Type is application/json" sh -c "$CURL -o /dev/null -D - '$URL/tables/demo/orders/snapshots' | grep -qi '^content-type: application/json'"

status=$(get /tables/demo/orders/latest)
if [ "$status" = 200 ]; then ok "GET /tables/demo/orders/latest is 200"; else notok "GET /tables/demo/orders/latest is 200 (got $status)" "$(head -c 600 "$TMP/body")"; fi
check "latest equals the last row of inspect.lua snapshots" compare_json latest

status=$(get /tables/demo/orders/files)
inspect files
if [ "$status" = 200 ]; then ok "GET /tables/demo/orders/files is 200"; else notok "GET /tables/demo/orders/files is 200 (got $status)" "$(head -c 600 "$TMP/body")"; fi
check "files equal inspect.lua files --json" compare_json files

for p in /tables/demo/nosuch/snapshots /tables/nosuch/orders/latest /tables/demo/orders/nosuchview /nope; do
  status=$(get "$p")
  if [ "$status" = 404 ]; then ok "GET $p is 404"; else notok "GET $p is 404 (got $status)" "$(head -c 300 "$TMP/body")"; fi
done

# traversal attempts: 400 or 404, never the data of the table outside
for p in '/tables/..%2Foutside/orders/latest' '/tables/demo.db%2F..%2F..%2Foutside/orders/latest' \
         '/tables/demo/..%2F..%2Foutside.db%2Forders/latest' '/tables/%2e%2e/outside/snapshots' \
         '/tables/../outside/orders/latest' '/tables/demo/orders%2F..%2F..%2F..%2Foutside.db%2Forders/latest' \
         '/tables/..%252Foutside/orders/latest' '/tables/demo/.orders/latest' '/tables/demo/or%00ders/latest' \
         '/tables/demo/%2Ftmp%2Fx/latest' '/tables/%5C..%5Coutside/orders/latest'; do
  status=$(get "$p")
  case $status in
    400|404) if grep -q snapshot_id "$TMP/body"; then notok "GET $p refused" "$(head -c 300 "$TMP/body")"; else ok "GET $p is refused ($status)"; fi ;;
    *) notok "GET $p is 400 or 404 (got $status)" "$(head -c 300 "$TMP/body")" ;;
  esac
done

status=$($CURL -o /dev/null -w '%{http_code}' -X POST "$URL/tables/demo/orders/latest")
if [ "$status" = 403 ] || [ "$status" = 405 ]; then ok "POST is refused ($status)"; else notok "POST is refused (got $status)"; fi

# concurrent requests all served (thread pool, no worker blocked)
conc() {
  i=0
  while [ $i -lt 24 ]; do
    $CURL -o /dev/null -w '%{http_code}\n' "$URL/tables/demo/orders/snapshots" &
    i=$((i + 1))
  done >"$TMP/conc"
  wait
  [ "$(grep -c '^200$' "$TMP/conc")" = 24 ] || { cat "$TMP/conc"; return 1; }
}
check "24 concurrent snapshot requests all 200" conc
# the C core ran in the thread pool's VMs only: the workers' own VM never loaded it
main_vm() {
  i=0
  while [ $i -lt 4 ]; do   # ask each worker (connections spread over them)
    body=$($CURL "$URL/__test/main-vm") || return 1
    [ "$body" = "core not loaded resty loaded" ] || { echo "$body"; return 1; }
    i=$((i + 1))
  done
}
check "paimon.core was never loaded in a worker's main Lua VM (thread pool only)" main_vm

# ---- the maintenance timer (every 1 s here) ------------------------------
check "maintenance timer ran and logged what it did" wait_log 'paimon maintenance: demo.orders'
line=$(grep 'paimon maintenance: demo.orders' "$TMP/logs/error.log" | head -1 | sed 's/.*paimon maintenance: //; s/, context:.*//')
echo "# timer: $line"
stop_and_check_log "example policy"

# ---- again with a policy that expires: keep exactly 3 snapshots -----------
# (the sample has 5; its consumer protects snapshot 3 onwards)
sed -i 's/local RETAIN_MIN, RETAIN_MAX = 10, 100/local RETAIN_MIN, RETAIN_MAX = 3, 3/' "$TMP/conf/nginx.conf"
check "policy changed to retain 3 snapshots" grep -q 'RETAIN_MIN, RETAIN_MAX = 3, 3' "$TMP/conf/nginx.conf"
start_nginx "retain 3"
has_expire=$("$B/paimon-lua" -e "local p = require 'paimon'; local t = assert(p.open('$TABLE')); io.write(t.expire_snapshots and 'yes' or 'no')" 2>/dev/null)
if [ "$has_expire" = yes ]; then
  check "maintenance timer expired snapshots 1 and 2" wait_log 'paimon maintenance: demo.orders expired 2 snapshot'
  status=$(get /tables/demo/orders/snapshots)
  inspect snapshots
  check "after expiry the snapshots endpoint lists 3, 4, 5" $PY -c '
import json, sys
ids = [r["snapshot_id"] for r in json.load(open(sys.argv[1]))]
sys.exit(0 if ids == [3, 4, 5] else "ids %r" % ids)' "$TMP/body"
  check "and still equals inspect.lua snapshots --json" compare_json snapshots
else
  check "maintenance timer logged the latest snapshot (no expire_snapshots yet)" \
    wait_log 'paimon maintenance: demo.orders latest snapshot 5'
fi
stop_and_check_log "retain 3"
finish
