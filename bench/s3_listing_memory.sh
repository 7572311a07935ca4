#!/bin/sh
# Memory of an orphan dry run on S3 when the table prefix holds millions of
# keys (issue 14), without uploading them: a listing proxy (real nginx + Lua,
# bench/s3listing/) in front of a throwaway Ceph RGW forwards every request
# unchanged except ListObjectsV2 of the table prefix, which it answers with
# the table's real keys merged with N synthetic data-file keys (see
# s3listing.lua). The table's metadata is read from RGW as usual.
#
#   sh bench/s3_listing_memory.sh [BUILD]       # BUILD: the make output (build)
#
#   S3MEM_NS      synthetic keys per young run (default "0 100000 1000000")
#   S3MEM_OLD_N   synthetic keys of the one run where they are 2 days old
#                 and so planned as orphans (default 1000000; 0: no such run)
#   S3MEM_WRAP    a command prefix for bench_orphan, e.g. "valgrind --tool=massif
#                 --massif-out-file=/tmp/m.out" for a heap breakdown (RSS is then valgrind's)
#
# Each run: bench_orphan s3://BUCKET/t --reps 1 --older-than 86400 (a dry
# run, cut-off one day ago) with s3.endpoint at the proxy, under
# /usr/bin/time (peak RSS, wall). Young synthetic keys are kept (planned 0),
# old ones are planned. Checked per run: listed = N + the real candidates,
# planned = 0 or N, the proxy served every synthetic key (and answered one
# HEAD per planned key: a dry run on S3 HEADs what it plans). Not part of
# `make bench` (a 1M-key run takes a minute). Markdown on stdout.
set -u
BUILD=${1:-build}
OUT=$BUILD/bench
NS=${S3MEM_NS:-0 100000 1000000}
OLD_N=${S3MEM_OLD_N:-1000000}
WRAP=${S3MEM_WRAP:-}
[ -n "$NS" ] || { echo "s3mem: S3MEM_NS is empty" >&2; exit 2; }
PY=/usr/bin/python3
LIB=$BUILD/libpaimon.a
log() { printf 's3mem: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

[ -f "$LIB" ] || die "$LIB missing: run make first"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (Debian package time)"
mkdir -p "$OUT"
libs=$(pkg-config --libs jansson libzstd zlib snappy libuv libcurl libcrypto 2>/dev/null ||
  echo "-ljansson -lzstd -lz -lsnappy -luv -lcurl -lcrypto")
for b in bench_expire bench_orphan; do
  # shellcheck disable=SC2086
  ${CC:-cc} -O2 -std=c99 -D_POSIX_C_SOURCE=200809L -Isrc/include -Isrc/core "bench/$b.c" "$LIB" $libs -lm \
    -o "$OUT/$b" || die "cannot build $b"
done

RGW=$OUT/s3mem-rgw
PX=$OUT/s3mem-proxy

proxy_stop() {
  [ -f "$PX/pid" ] || return 0
  pid=$(cat "$PX/pid")
  kill -QUIT "$pid" 2>/dev/null
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  kill -KILL "$pid" 2>/dev/null
  rm -f "$PX/pid"
}

# proxy_start HOST:PORT: nginx with the listing handler; sets PROXY (its URL)
proxy_start() {
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
  mods=$(dpkg -L libnginx-mod-http-ndk libnginx-mod-http-lua 2>/dev/null | grep '\.so$')
  NDK=$(printf '%s\n' "$mods" | grep ndk_http_module.so | head -1)
  LUAMOD=$(printf '%s\n' "$mods" | grep ngx_http_lua_module.so | head -1)
  NDK=${NDK:-/usr/lib/nginx/modules/ndk_http_module.so}
  LUAMOD=${LUAMOD:-/usr/lib/nginx/modules/ngx_http_lua_module.so}
  [ -x "$NGINX" ] && [ -f "$NDK" ] && [ -f "$LUAMOD" ] || die "nginx or libnginx-mod-http-lua missing (scripts/install-deps.sh)"
  u=""
  [ "$(id -u)" = 0 ] && u="user $(id -un) $(id -gn);"
  here=$(cd bench/s3listing && pwd)
  mkdir -p "$PX/conf" "$PX/logs" "$PX/temp"
  port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  sed -e "s|@NDK@|$NDK|" -e "s|@LUAMOD@|$LUAMOD|" -e "s|@USER@|$u|" -e "s|@PORT@|$port|" -e "s|@UPSTREAM@|$1|" \
    -e "s|@LUADIR@|$here|" bench/s3listing/nginx.conf.in > "$PX/conf/nginx.conf"
  PXDIR=$(cd "$PX" && pwd)
  "$NGINX" -p "$PXDIR/" -e logs/error.log -c conf/nginx.conf -g "daemon off;" </dev/null > "$PX/logs/stdout.log" 2>&1 &
  echo $! > "$PX/pid"
  PROXY=http://127.0.0.1:$port
  i=0
  while [ $i -lt 100 ]; do   # at most 10 s
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$PROXY/__s3listing/stats")" = 200 ] && return 0
    sleep 0.1; i=$((i + 1))
  done
  die "the listing proxy did not start; logs in $PX/logs"
}

cleanup() {
  proxy_stop
  sh scripts/s3-server.sh stop "$RGW" >&2
}

log "starting a throwaway RGW in $RGW"
sh scripts/s3-server.sh start "$RGW" >&2 || exit 1
trap cleanup EXIT
trap 'exit 1' INT TERM
set -a; . "$RGW/env"; set +a
unset AWS_CA_BUNDLE
B=$PAIMON_S3_BUCKET
T="s3://$B/t"
log "building $T: 20 commits of 2 data files"
"$OUT/bench_expire" build "$T" --snapshots 20 --files 2 > "$OUT/s3mem-build.txt" || die "building the table failed"
proxy_start "${AWS_ENDPOINT_URL#http://}"

field() { sed -n "s/^RESULT.* $2=\([^ ]*\).*/\1/p" "$1" | tail -1; }

# run N AGE_S: one dry run through the proxy; sets listed planned rss_kib
# wall lists (listing pages) heads (of synthetic keys) reqs (per method)
run() {
  curl -sf -X POST "$PROXY/__s3listing/config?prefix=t%2F&n=$1&age=$2" > /dev/null || die "cannot configure the proxy"
  rm -f "$OUT/s3mem.trace"
  # shellcheck disable=SC2086
  PAIMON_S3_TRACE=$OUT/s3mem.trace /usr/bin/time -f '%M %e' -o "$OUT/s3mem.time" $WRAP "$OUT/bench_orphan" "$T" \
    --reps 1 --older-than 86400 --option "s3.endpoint=$PROXY" > "$OUT/s3mem.txt" || die "bench_orphan failed (N=$1)"
  listed=$(field "$OUT/s3mem.txt" listed)
  planned=$(field "$OUT/s3mem.txt" planned)
  read -r rss_kib wall < "$OUT/s3mem.time"
  # the pages of the one listing of the prefix (not the max-keys=1 existence probes)
  lists=$(grep '^GET [^ ]*?[^ ]*list-type=2[^ ]*prefix=t%2F\( \|$\)' "$OUT/s3mem.trace" | grep -vc 'max-keys=')
  stats=$(curl -sf "$PROXY/__s3listing/stats")
  pages=$(echo "$stats" | sed -n 's/.*pages=\([0-9]*\).*/\1/p')
  served=$(echo "$stats" | sed -n 's/.*synth_listed=\([0-9]*\).*/\1/p')
  [ "$served" = "$1" ] || die "N=$1: the proxy served $served synthetic keys"
  heads=$(echo "$stats" | sed -n 's/.*heads=\([0-9]*\).*/\1/p')
  [ "$pages" = "$lists" ] || die "N=$1: $lists listing requests in the trace, $pages pages served"
  reqs=$(awk '{ print $1 }' "$OUT/s3mem.trace" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')
}

rows=$OUT/s3mem-rows.md
: > "$rows"
base_listed="" base_rss="" last_n=0 last_rss=0
for n in $NS; do
  log "orphan dry run, $n young synthetic keys"
  run "$n" 0
  [ -n "$base_listed" ] || { base_listed=$((listed - n)); base_rss=$rss_kib; }
  [ "$listed" = $((n + base_listed)) ] || die "N=$n: listed $listed, expected $((n + base_listed))"
  [ "$planned" = 0 ] || die "N=$n: planned $planned, expected 0 (the synthetic keys are young)"
  printf '| %s young | %s | %s | %s | %s | %s | %s |\n' "$n" "$listed" "$planned" "$lists" "$reqs" \
    "$(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }')" "$wall" >> "$rows"
  last_n=$n last_rss=$rss_kib
done
first_n=${NS%% *}
slope=$(awk -v a="$base_rss" -v b="$last_rss" -v n="$((last_n - first_n))" \
  'BEGIN { if (n > 0) printf "%.0f", (b - a) * 1024 / n; else print "-" }')
old_slope=-
if [ "$OLD_N" -gt 0 ]; then
  log "orphan dry run, $OLD_N synthetic keys 2 days old (planned, not deleted)"
  run "$OLD_N" 172800
  [ "$listed" = $((OLD_N + base_listed)) ] || die "old: listed $listed, expected $((OLD_N + base_listed))"
  [ "$planned" = "$OLD_N" ] || die "old: planned $planned, expected $OLD_N"
  [ "$heads" = "$OLD_N" ] || die "old: $heads HEADs of synthetic keys, expected $OLD_N (one per planned file)"
  printf '| %s old (2 days) | %s | %s | %s | %s | %s | %s |\n' "$OLD_N" "$listed" "$planned" "$lists" "$reqs" \
    "$(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }')" "$wall" >> "$rows"
  old_slope=$(awk -v a="$base_rss" -v b="$rss_kib" -v n="$((OLD_N - first_n))" \
    'BEGIN { if (n > 0) printf "%.0f", (b - a) * 1024 / n; else print "-" }')
fi

cat <<EOM
Command: \`sh bench/s3_listing_memory.sh $BUILD\` (S3MEM_NS="$NS", S3MEM_OLD_N=$OLD_N). Table: \`bench_expire build
s3://BUCKET/t --snapshots 20 --files 2\` on a throwaway RGW ($base_listed real candidates); each run
\`bench_orphan s3://BUCKET/t --reps 1 --older-than 86400 --option s3.endpoint=PROXY\` (dry run, 4 threads) under
\`/usr/bin/time\`, the listing proxy adding N synthetic data-file keys to the table's ListObjectsV2 pages.

| synthetic keys | listed candidates | planned | LIST pages of the prefix | requests (trace) | peak RSS MiB | wall s |
|---|---|---|---|---|---|---|
$(cat "$rows")

Slope: $slope B of peak RSS per listed young key ($first_n -> $last_n); $old_slope B per listed key that is
also planned (the old run vs the first).
EOM
