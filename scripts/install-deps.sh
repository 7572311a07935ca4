#!/bin/sh
# Idempotent install of every Debian 12 package paimon-lua builds and tests
# with. Runs apt-get update only when a package is missing.
#  - LuaJIT: luajit2 + libluajit2-5.1-dev (OpenResty's branch; pkg-config
#    name luajit). Not luajit/libluajit-5.1-dev: libnginx-mod-http-lua
#    depends on libluajit2-5.1-2, which conflicts with them.
#  - nginx + libnginx-mod-http-lua (+ ndk, lua-resty-core) and curl for the
#    real-nginx test; luarocks for the rockspec test. luarocks pulls in
#    lua5.1, whose `lua` alternative outranks lua5.4's: it is set back to 5.4
#    (the scripts call interpreters by full name; people type `lua`/`busted`).
#  - The S3 tests: a throwaway Ceph RADOS Gateway (ceph-mon ceph-osd radosgw
#    ceph-common, scripts/s3-server.sh) and rclone (the independent client of
#    the test helpers). The S3 FileIO: libcurl4-openssl-dev + libssl-dev
#    (libcrypto's SHA-256/MD5; libcurl4-openssl-dev only suggests libssl-dev).
#  - --bench (make bench) also installs the baselines used there only: awscli,
#    Java Avro + zstd-jni + a JDK (the decode peer, what Java Paimon uses), and
#    strace (system calls per deleted file).
# Usage: install-deps.sh [--bench]
set -e
PKGS="build-essential pkg-config lua5.4 liblua5.4-dev lua-cjson libuv1-dev lua-busted \
libcurl4-openssl-dev libssl-dev \
libjansson-dev libzstd-dev zlib1g-dev libsnappy-dev python3-avro python3-zstandard python3-snappy \
clang libclang-rt-14-dev \
luajit2 libluajit2-5.1-dev nginx libnginx-mod-http-lua curl luarocks \
ceph-mon ceph-osd radosgw ceph-common rclone"
case ${1:-} in
  --bench) PKGS="$PKGS awscli libavro-java libzstd-jni-java default-jdk-headless strace" ;;
  "") ;;
  *) echo "usage: install-deps.sh [--bench]" >&2; exit 2 ;;
esac
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
lua54_default() {
  [ -x /usr/bin/lua5.4 ] || return 0
  [ "$(readlink -f /usr/bin/lua 2>/dev/null)" = /usr/bin/lua5.4 ] && return 0
  $SUDO update-alternatives --set lua-interpreter /usr/bin/lua5.4 >/dev/null 2>&1 || true
  [ -x /usr/bin/luac5.4 ] && $SUDO update-alternatives --set lua-compiler /usr/bin/luac5.4 >/dev/null 2>&1
  return 0
}
if [ -z "$missing" ]; then lua54_default; exit 0; fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
lua54_default
