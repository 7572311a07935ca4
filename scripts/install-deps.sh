#!/bin/sh
# Idempotent install of every Debian package paimon-lua builds and tests with.
# Runs apt-get update only when a package is missing.
set -e
PKGS="build-essential pkg-config lua5.4 liblua5.4-dev lua-cjson libuv1-dev lua-busted \
libjansson-dev libzstd-dev zlib1g-dev libsnappy-dev python3-avro python3-zstandard python3-snappy clang libclang-rt-14-dev"
[ "${WITH_OPENRESTY:-0}" = 1 ] && PKGS="$PKGS luajit2 libluajit2-5.1-dev nginx libnginx-mod-http-lua curl"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
