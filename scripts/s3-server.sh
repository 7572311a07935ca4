#!/bin/sh
# A throwaway single-node Ceph RADOS Gateway for the S3 tests: one monitor,
# one memstore OSD, radosgw (beast) on 127.0.0.1 only, everything (conf,
# keyrings, data, logs, pids) under DIR, free ports picked at start so runs
# in different DIRs do not collide. See docs/testing-s3.md.
#
#   sh scripts/s3-server.sh start DIR   # ready in about 2 s; writes DIR/env
#   sh scripts/s3-server.sh stop DIR    # rgw, osd, mon, one at a time; idempotent
#   sh scripts/s3-server.sh env DIR     # prints DIR/env (sourceable)
#
# DIR/env sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
# AWS_ENDPOINT_URL and PAIMON_S3_BUCKET. Keys are generated and never printed
# by start. A failed start stops what it started, names its logs, exits 1.
# Every wait is bounded. Daemons get </dev/null and their own log files:
# an inherited pipe would keep a caller's $(...) open forever.
set -u
PY=/usr/bin/python3
CEPH_TIMEOUT=5        # seconds per ceph CLI command
WAIT_TENTHS=200       # at most 20 s for each daemon to come up

usage() { echo "usage: s3-server.sh start|stop|env DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
CMD=$1
mkdir -p "$2" 2>/dev/null
DIR=$(cd "$2" 2>/dev/null && pwd) || { echo "s3-server: cannot use directory $2" >&2; exit 1; }
CONF=$DIR/ceph.conf

free_port() {
  $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
# random string of N characters from the class SET (tr syntax)
rand() { LC_ALL=C tr -dc "$2" </dev/urandom | head -c "$1"; }

# running PID: a live process of this DIR: its command line names $CONF, or
# it is still this script's child before its exec (a recycled pid is not
# ours). A zombie counts as gone: the daemons are reparented at start, and
# init here reaps them only about 2 s later.
running() {
  [ -n "$1" ] && [ -r "/proc/$1/status" ] || return 1
  [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)" != Z ] || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)
  case $cmdline in *"$CONF"*|*s3-server.sh*) return 0 ;; esac
  return 1
}
alive() { [ -f "$DIR/run/$1.pid" ] && running "$(cat "$DIR/run/$1.pid")"; }

# stop_one NAME: TERM, up to 10 s, then KILL; removes the pid file
stop_one() {
  pidf=$DIR/run/$1.pid
  [ -f "$pidf" ] || return 0
  pid=$(cat "$pidf")
  if running "$pid"; then
    kill -TERM "$pid" 2>/dev/null
    i=0
    while running "$pid" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    if running "$pid"; then
      echo "s3-server: $1 (pid $pid) ignored TERM for 10 s; killed" >&2
      kill -KILL "$pid" 2>/dev/null
      sleep 0.1
    fi
  fi
  rm -f "$pidf"
}

stop_all() { stop_one rgw; stop_one osd; stop_one mon; }

fail() {
  echo "s3-server: start failed: $1" >&2
  echo "s3-server: logs in $DIR/log/ (mon.a.log, osd.0.log, rgw.log, *.out, setup.log)" >&2
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -15 "$2" | sed 's/^/s3-server:   /' >&2
  stop_all
  exit 1
}

ceph_cli() { timeout "$CEPH_TIMEOUT" ceph -c "$CONF" --connect-timeout "$CEPH_TIMEOUT" "$@" 2>>"$DIR/log/setup.log"; }

# wait_for NAME COMMAND...: until COMMAND succeeds, while daemon NAME lives
wait_for() {
  name=$1; shift
  i=0
  while [ $i -lt $WAIT_TENTHS ]; do
    alive "$name" || return 1
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

# start_daemon NAME COMMAND...: in the background in its own session (a
# Ctrl-C or `timeout` on the caller's process group must not reach it: the
# daemons handle SIGINT themselves; stop_all stops them in order), stdio
# redirected, pid recorded (setsid execs in place: not a group leader here).
start_daemon() {
  name=$1; shift
  setsid "$@" </dev/null >"$DIR/log/$name.out" 2>&1 &
  echo $! >"$DIR/run/$name.pid"
}

mon_up() { ceph_cli mon stat; }
osd_up() { ceph_cli osd stat | grep -q '1 up'; }
rgw_up() { curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$RGW_PORT/"; }

s3_put_bucket() {
  curl -sS -o "$DIR/log/bucket.out" -w '%{http_code}' --max-time 10 -X PUT \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS:$SECRET" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$RGW_PORT/$BUCKET"
}

start() {
  for b in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool curl setsid uuidgen; do
    command -v "$b" >/dev/null || { echo "s3-server: $b not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
  done
  if alive mon || alive osd || alive rgw; then
    echo "s3-server: already running in $DIR (stop it first)" >&2; exit 1
  fi
  rm -rf "$DIR/mon.a" "$DIR/osd.0" "$DIR/rgw" "$DIR/run" "$DIR/log" "$DIR/env" "$DIR/keyring" \
    "$DIR/monmap" "$CONF"
  mkdir -p "$DIR/mon.a" "$DIR/osd.0" "$DIR/rgw" "$DIR/run" "$DIR/log" || fail "cannot create $DIR/*"
  FSID=$(uuidgen)
  MON_PORT=$(free_port)
  RGW_PORT=$(free_port)
  [ -n "$MON_PORT" ] && [ -n "$RGW_PORT" ] || fail "no free port"
  cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
ms bind msgr1 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/keyring
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
crash dir = $DIR/log/crash
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
[mon.a]
mon data = $DIR/mon.a
paxos propose interval = 0.01
paxos min wait = 0.01
[osd]
osd data = $DIR/osd.\$id
keyring = $DIR/osd.\$id/keyring
osd objectstore = memstore
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw data = $DIR/rgw
EOF
  setup=$DIR/log/setup.log
  {
    ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' &&
    ceph-authtool "$DIR/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
      --cap mds 'allow *' --cap mgr 'allow *' &&
    ceph-authtool "$DIR/keyring" --gen-key -n client.rgw.a --cap mon 'allow rw' --cap osd 'allow rwx' &&
    monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" &&
    ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring"
  } >>"$setup" 2>&1 </dev/null || fail "monitor setup" "$setup"

  start_daemon mon ceph-mon -c "$CONF" -i a -f
  wait_for mon mon_up || fail "monitor did not come up on 127.0.0.1:$MON_PORT" "$DIR/log/mon.a.log"

  OSD_UUID=$(uuidgen)
  OSD_KEY=$(ceph-authtool --gen-print-key)
  printf '{"cephx_secret": "%s"}\n' "$OSD_KEY" >"$DIR/osd-new.json"
  id=$(ceph_cli osd new "$OSD_UUID" -i "$DIR/osd-new.json")
  rm -f "$DIR/osd-new.json"
  [ "$id" = 0 ] || fail "ceph osd new gave '$id', not 0" "$setup"
  ceph-osd -c "$CONF" -i 0 --mkfs --key "$OSD_KEY" --osd-uuid "$OSD_UUID" >>"$setup" 2>&1 </dev/null ||
    fail "ceph-osd --mkfs" "$setup"
  printf '[osd.0]\n\tkey = %s\n' "$OSD_KEY" >"$DIR/osd.0/keyring"
  start_daemon osd ceph-osd -c "$CONF" -i 0 -f
  wait_for osd osd_up || fail "OSD did not come up" "$DIR/log/osd.0.log"

  start_daemon rgw radosgw -c "$CONF" -n client.rgw.a -f
  wait_for rgw rgw_up || fail "radosgw did not answer on 127.0.0.1:$RGW_PORT" "$DIR/log/client.rgw.a.log"

  ACCESS=$(rand 20 'A-Z0-9')
  SECRET=$(rand 40 'A-Za-z0-9')
  BUCKET=paimon-test-$(rand 8 'a-z0-9')
  timeout 30 radosgw-admin -c "$CONF" -n client.admin user create --uid=paimon-test --display-name=paimon-test \
    --access-key="$ACCESS" --secret-key="$SECRET" >/dev/null 2>>"$setup" </dev/null ||
    fail "radosgw-admin user create" "$setup"
  code=$(s3_put_bucket)
  [ "$code" = 200 ] || fail "creating bucket $BUCKET: HTTP $code" "$DIR/log/bucket.out"
  umask 077
  cat >"$DIR/env.tmp" <<EOF
AWS_ACCESS_KEY_ID=$ACCESS
AWS_SECRET_ACCESS_KEY=$SECRET
AWS_REGION=us-east-1
AWS_ENDPOINT_URL=http://127.0.0.1:$RGW_PORT
PAIMON_S3_BUCKET=$BUCKET
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION AWS_ENDPOINT_URL PAIMON_S3_BUCKET
EOF
  mv "$DIR/env.tmp" "$DIR/env"
  echo "s3-server: RGW on http://127.0.0.1:$RGW_PORT, bucket $BUCKET (env: $DIR/env, logs: $DIR/log)"
}

case $CMD in
  start) start ;;
  stop) stop_all ;;
  env) [ -f "$DIR/env" ] || { echo "s3-server: no $DIR/env (not started?)" >&2; exit 1; }; cat "$DIR/env" ;;
  *) usage ;;
esac
