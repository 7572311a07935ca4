#!/bin/sh
# Starts/stops the fault-injecting S3 proxy (a real nginx with the Lua
# handler s3proxy.lua; docs/testing-s3.md) in a private prefix DIR.
#
#   sh spec/support/s3proxy/s3proxy.sh start DIR HOST:PORT  # prints the proxy's URL
#   sh spec/support/s3proxy/s3proxy.sh stop DIR             # idempotent
#
# Module discovery, the free port, the bounded wait and the QUIT-then-KILL
# stop follow scripts/nginx-test.sh.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
[ $# -ge 2 ] || { echo "usage: s3proxy.sh start DIR HOST:PORT | stop DIR" >&2; exit 2; }
CMD=$1
mkdir -p "$2" && DIR=$(cd "$2" && pwd) || { echo "s3proxy: cannot use $2" >&2; exit 1; }

stop() {
  [ -f "$DIR/pid" ] || return 0
  pid=$(cat "$DIR/pid")
  gone() { ! kill -0 "$pid" 2>/dev/null || [ "$(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" = Z ]; }
  kill -QUIT "$pid" 2>/dev/null
  i=0
  while ! gone && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  gone || kill -KILL "$pid" 2>/dev/null
  rm -f "$DIR/pid"
}

start() {
  upstream=$1
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
  mods=$(dpkg -L libnginx-mod-http-ndk libnginx-mod-http-lua 2>/dev/null | grep '\.so$')
  NDK=$(printf '%s\n' "$mods" | grep ndk_http_module.so | head -1)
  LUAMOD=$(printf '%s\n' "$mods" | grep ngx_http_lua_module.so | head -1)
  NDK=${NDK:-/usr/lib/nginx/modules/ndk_http_module.so}
  LUAMOD=${LUAMOD:-/usr/lib/nginx/modules/ngx_http_lua_module.so}
  [ -x "$NGINX" ] && [ -f "$NDK" ] && [ -f "$LUAMOD" ] ||
    { echo "s3proxy: nginx or libnginx-mod-http-lua missing (scripts/install-deps.sh)" >&2; exit 1; }
  USER_DIRECTIVE=""
  [ "$(id -u)" = 0 ] && USER_DIRECTIVE="user $(id -un) $(id -gn);"
  mkdir -p "$DIR/conf" "$DIR/logs" "$DIR/temp"
  for attempt in 1 2 3; do
    port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    sed -e "s|@NDK@|$NDK|" -e "s|@LUAMOD@|$LUAMOD|" -e "s|@USER@|$USER_DIRECTIVE|" -e "s|@PORT@|$port|" \
        -e "s|@UPSTREAM@|$upstream|" -e "s|@LUADIR@|$HERE|" "$HERE/nginx.conf.in" >"$DIR/conf/nginx.conf"
    : >"$DIR/logs/error.log"
    "$NGINX" -p "$DIR/" -e logs/error.log -c conf/nginx.conf -g "daemon off;" \
      </dev/null >"$DIR/logs/stdout.log" 2>&1 &
    echo $! >"$DIR/pid"
    i=0
    while [ $i -lt 100 ]; do              # at most 10 s
      kill -0 "$(cat "$DIR/pid")" 2>/dev/null || break
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST "http://127.0.0.1:$port/__proxy/reset")
      if [ "$code" = 200 ]; then echo "$port" >"$DIR/port"; echo "http://127.0.0.1:$port"; return 0; fi
      sleep 0.1; i=$((i + 1))
    done
    stop
    grep -q 'Address already in use' "$DIR/logs/error.log" "$DIR/logs/stdout.log" 2>/dev/null || break
  done
  echo "s3proxy: nginx did not start; logs in $DIR/logs" >&2
  tail -5 "$DIR/logs/stdout.log" "$DIR/logs/error.log" >&2 2>/dev/null
  exit 1
}

case $CMD in
  start) [ $# -eq 3 ] || { echo "usage: s3proxy.sh start DIR HOST:PORT" >&2; exit 2; }; start "$3" ;;
  stop) stop ;;
  *) echo "usage: s3proxy.sh start DIR HOST:PORT | stop DIR" >&2; exit 2 ;;
esac
