# The object-store section of `make bench` (sourced by bench/run.sh; uses its
# helpers: log, below_target, result_field, fmt, now_s, elapsed, stats,
# build_c, $OUT). Everything runs against one throwaway Ceph RGW started here
# (scripts/s3-server.sh, loopback) and stopped at the end.
#
#   BENCH_SCALE=small (default): 1000 snapshots x 2 data files per commit
#   BENCH_SCALE=full:            1000 snapshots x 20 data files per commit
#   BENCH_S3_SNAPSHOTS, BENCH_S3_FILES override either; BENCH_S3_REPS (3):
#   runs of each orphan scan (best and median reported).
#
# The table is built on the store by committing there (bench_expire build
# s3://...; commit latency and requests per commit measured on the way),
# copied server-side by rclone to two more prefixes, and each copy is then
# emptied of the same keys by a different program. Requests are counted with
# the S3 FileIO's own trace (PAIMON_S3_TRACE, docs/s3.md).

# s3_min_commit: the requests one commit needs at least (see the report)
S3_MIN_COMMIT=9

# s3_keys REMOTE_PREFIX: every key below it, relative, sorted
s3_keys() { rclone lsf -R --files-only "benchs3:$PAIMON_S3_BUCKET/$1" | LC_ALL=C sort; }

# s3_timed OUTFILE CMD...: appends the wall time of CMD to OUTFILE
s3_timed() {
  f=$1; shift
  s=$(now_s); "$@" > /dev/null; e=$(now_s)
  elapsed "$s" "$e" >> "$f"
}

# s3_commit_rows TRACE LATENCY: "| window | commits | median ms | p90 ms | requests/commit |" rows
s3_commit_rows() {
  awk '{ isdata = ($1 == "PUT" && $2 ~ /\/bucket-[0-9]+\/data-/) }
       isdata && !prev { c++ }
       !isdata && c { n[c]++ }
       { prev = isdata }
       END { for (i = 1; i <= c; i++) print i, n[i] + 0 }' "$1" > "$OUT/s3-commit-req.txt"
  last=$(wc -l < "$2" | tr -d ' ')
  lo=1
  for hi in 10 100 1000 10000 100000; do
    [ "$lo" -le "$last" ] || break
    [ "$hi" -le "$last" ] || hi=$last
    awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 <= hi { print $2 }' "$2" | sort -g > "$OUT/s3-w.txt"
    n=$(wc -l < "$OUT/s3-w.txt" | tr -d ' ')
    med=$(awk -v n="$n" 'NR == int((n + 1) / 2)' "$OUT/s3-w.txt")
    p90=$(awk -v n="$n" 'NR == int(n * 0.9 + 0.999)' "$OUT/s3-w.txt")
    req=$(awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 <= hi { s += $2; k++ } END { printf "%.1f", s / k }' \
      "$OUT/s3-commit-req.txt")
    printf '| %s-%s | %s | %s | %s | %s | %s |\n' "$lo" "$hi" "$n" "$(fmt %.1f "$med")" "$(fmt %.1f "$p90")" \
      "$req" "$S3_MIN_COMMIT"
    lo=$((hi + 1))
  done
}

# s3_methods TRACE: "GET 12, PUT 3, ..." (attempts, retries included)
s3_methods() { awk '{ print $1 }' "$1" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }'; }

# requests at once: our default s3.max-connections, and the read floor's
S3_CONNS=32
# SHA-256 of the empty body (curl does not add x-amz-content-sha256 itself)
S3_EMPTY_SHA=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

# s3_floor_config TRACE CFG: a curl config (0600; the keys live there, never
# on a command line) GETting every object TRACE shows read, once, into
# /dev/null: exactly the metadata the orphan run reads, no listing
s3_floor_config() {
  ( umask 077
    printf 'user = "%s:%s"\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" > "$2"
    awk -v ep="$AWS_ENDPOINT_URL" '$1 == "GET" && $2 !~ /\?/ && !seen[$2]++ {
        k = $2; sub(/^s3:\/\//, "", k); printf "url = \"%s/%s\"\noutput = \"/dev/null\"\n", ep, k }' "$1" >> "$2" )
}

# s3_read_floor CFG: the same GETs as fast as this store serves them: one curl
# process (libcurl multi, keep-alive), $S3_CONNS at once, nothing decoded
s3_read_floor() {
  curl -sS --no-progress-meter -f --parallel --parallel-max "$S3_CONNS" --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
    -H "x-amz-content-sha256: $S3_EMPTY_SHA" -K "$1" -w '%{http_code}\n' > "$OUT/s3-floor-codes.txt" || return 1
  [ "$(grep -vc '^200$' "$OUT/s3-floor-codes.txt")" -eq 0 ]
}

# s3_orphan_pair LABEL PREFIX: our dry run vs rclone lsf -R vs the read floor,
# $BENCH_S3_REPS each, interleaved; markdown rows to $OUT/s3-orphan-rows.md
s3_orphan_pair() {
  label=$1 pfx=$2
  : > "$OUT/s3-o-ours.txt"; : > "$OUT/s3-o-lsf.txt"; : > "$OUT/s3-o-floor.txt"
  r=0
  while [ "$r" -lt "$BENCH_S3_REPS" ]; do
    rm -f "$OUT/s3-orphan.trace"
    s=$(now_s)
    PAIMON_S3_TRACE=$OUT/s3-orphan.trace "$OUT/bench_orphan" "s3://$PAIMON_S3_BUCKET/$pfx" --reps 1 \
      --option "s3.max-connections=$S3_CONNS" > "$OUT/s3-orphan.txt"
    e=$(now_s); elapsed "$s" "$e" >> "$OUT/s3-o-ours.txt"
    s3_timed "$OUT/s3-o-lsf.txt" rclone lsf -R "benchs3:$PAIMON_S3_BUCKET/$pfx"
    s3_floor_config "$OUT/s3-orphan.trace" "$OUT/s3-floor.cfg"
    s=$(now_s)
    s3_read_floor "$OUT/s3-floor.cfg" || { log "s3: the read floor's GETs failed"; exit 1; }
    e=$(now_s); elapsed "$s" "$e" >> "$OUT/s3-o-floor.txt"
    r=$((r + 1))
  done
  nget=$(grep -c '^url' "$OUT/s3-floor.cfg")
  rm -f "$OUT/s3-floor.cfg"   # it holds the keys
  objs=$(s3_keys "$pfx" | wc -l | tr -d ' ')
  meta=$(s3_keys "$pfx" | grep -c '^snapshot/snapshot-\|^manifest/' || true)
  reqs=$(wc -l < "$OUT/s3-orphan.trace" | tr -d ' ')
  minr=$(( (objs + 999) / 1000 + meta ))
  set -- $(stats "$OUT/s3-o-ours.txt"); ob=$1 om=$2
  set -- $(stats "$OUT/s3-o-lsf.txt"); lb=$1 lm=$2
  set -- $(stats "$OUT/s3-o-floor.txt"); fb=$1 fm=$2
  ratio=$(awk -v a="$ob" -v b="$lb" 'BEGIN { printf "%.2f", a / b }')
  fratio=$(awk -v a="$fb" -v b="$lb" 'BEGIN { printf "%.2f", a / b }')
  oratio=$(awk -v a="$ob" -v b="$fb" 'BEGIN { printf "%.2f", a / b }')
  # the target is 1.5x rclone lsf, or 1.5x the read floor where even that is slower
  if awk -v r="$ratio" -v f="$fratio" -v o="$oratio" 'BEGIN { exit !(r > 1.5 && (f <= 1.5 || o > 1.5)) }'; then
    below_target "s3 orphan ($label): ${ratio}x rclone lsf, ${oratio}x the read floor"
  fi
  {
    printf '| **%s**: %s objects | | | | |\n' "$label" "$objs"
    printf '| paimon-lua orphan dry run (bench_orphan, 4 threads, s3.max-connections=%s; whole process) | %s | %s | **%sx** | **%sx** |\n' \
      "$S3_CONNS" "$(fmt %.3f "$ob")" "$(fmt %.3f "$om")" "$ratio" "$oratio"
    printf '| rclone lsf -R (listing only; whole process) | %s | %s | 1.00x | %sx |\n' "$(fmt %.3f "$lb")" "$(fmt %.3f "$lm")" \
      "$(awk -v a="$lb" -v b="$fb" 'BEGIN { printf "%.2f", a / b }')"
    printf '| read floor: curl --parallel-max %s, the %s GETs of ours (no listing, no decoding; whole process) | %s | %s | %sx | 1.00x |\n' \
      "$S3_CONNS" "$nget" "$(fmt %.3f "$fb")" "$(fmt %.3f "$fm")" "$fratio"
  } >> "$OUT/s3-orphan-rows.md"
  printf '| orphan dry run, %s | %s (%s) | %s: %s listing pages + every snapshot, manifest list and manifest read once |\n' \
    "$label" "$reqs" "$(s3_methods "$OUT/s3-orphan.trace")" "$minr" "$(( (objs + 999) / 1000 ))" \
    >> "$OUT/s3-req-rows.md"
  printf '%s: ours %sx rclone lsf -R, %sx the read floor; the read floor %sx rclone lsf -R (best of %s)\n' \
    "$label" "$ratio" "$oratio" "$fratio" "$BENCH_S3_REPS" >> "$OUT/s3-summary.txt"
}

bench_s3() (
  case ${BENCH_SCALE:-small} in
    full) snaps=${BENCH_S3_SNAPSHOTS:-1000} files=${BENCH_S3_FILES:-20} ;;
    *) snaps=${BENCH_S3_SNAPSHOTS:-1000} files=${BENCH_S3_FILES:-2} ;;
  esac
  BENCH_S3_REPS=${BENCH_S3_REPS:-3}
  for tool in rclone aws curl; do
    command -v $tool > /dev/null || { log "s3: $tool missing (scripts/install-deps.sh --bench)"; exit 1; }
  done
  build_c bench_expire bench/bench_expire.c
  build_c bench_orphan bench/bench_orphan.c
  rgw=$OUT/s3-rgw
  log "s3: starting a throwaway RGW in $rgw"
  sh scripts/s3-server.sh start "$rgw" >&2 || exit 1
  trap 'sh scripts/s3-server.sh stop "$rgw" >&2' EXIT
  set -a; . "$rgw/env"; set +a
  # the loopback endpoint is plain HTTP; rclone refuses a CA bundle on its
  # environment-credentials path
  unset AWS_CA_BUNDLE
  export RCLONE_CONFIG_BENCHS3_TYPE=s3 RCLONE_CONFIG_BENCHS3_PROVIDER=Ceph RCLONE_CONFIG_BENCHS3_ENV_AUTH=true \
    RCLONE_CONFIG_BENCHS3_ENDPOINT="$AWS_ENDPOINT_URL" RCLONE_CONFIG_BENCHS3_REGION="$AWS_REGION" \
    RCLONE_CONFIG_BENCHS3_FORCE_PATH_STYLE=true
  B=$PAIMON_S3_BUCKET
  rm -f "$OUT"/s3-*.trace "$OUT/s3-orphan-rows.md" "$OUT/s3-req-rows.md" "$OUT/s3-summary.txt"

  log "s3: building s3://$B/bench/a: $snaps commits of $files data files (compaction-like)"
  s=$(now_s)
  PAIMON_S3_TRACE=$OUT/s3-build.trace "$OUT/bench_expire" build "s3://$B/bench/a" --snapshots "$snaps" \
    --files "$files" --latency "$OUT/s3-lat.txt" > "$OUT/s3-build.txt" || exit 1
  build_s=$(elapsed "$s" "$(now_s)")
  log "s3: server-side copies to bench/b and bench/c (rclone copy, 16 transfers)"
  for c in b c; do
    rclone copy "benchs3:$B/bench/a" "benchs3:$B/bench/$c" --transfers 16 --checkers 16 >&2 || exit 1
  done

  log "s3: orphan dry runs before expiration"
  s3_orphan_pair "$snaps snapshots, none expired" bench/a

  log "s3: expiring bench/a (ours), then the same keys from bench/b (rclone) and bench/c (aws)"
  s3_keys bench/a > "$OUT/s3-before.txt"
  s=$(now_s)
  PAIMON_S3_TRACE=$OUT/s3-expire.trace "$OUT/bench_expire" expire "s3://$B/bench/a" > "$OUT/s3-expire.txt" || exit 1
  o_s=$(elapsed "$s" "$(now_s)")
  s3_keys bench/a > "$OUT/s3-after.txt"
  LC_ALL=C comm -23 "$OUT/s3-before.txt" "$OUT/s3-after.txt" > "$OUT/s3-deleted.txt"
  ndel=$(wc -l < "$OUT/s3-deleted.txt" | tr -d ' ')
  s=$(now_s)
  rclone delete "benchs3:$B/bench/b" --files-from-raw "$OUT/s3-deleted.txt" --checkers 8 --transfers 4 >&2 || exit 1
  r_s=$(elapsed "$s" "$(now_s)")
  rm -rf "$OUT/s3-batches"; mkdir -p "$OUT/s3-batches"
  sed 's|^|bench/c/|' "$OUT/s3-deleted.txt" | split -l 1000 - "$OUT/s3-batches/b."
  for f in "$OUT"/s3-batches/b.*; do
    $PY -c 'import json, sys; print(json.dumps({"Objects": [{"Key": l.rstrip("\n")} for l in open(sys.argv[1])], "Quiet": True}))' \
      "$f" > "$f.json"
  done
  nb=$(ls "$OUT"/s3-batches/*.json | wc -l | tr -d ' ')
  s=$(now_s)
  for f in "$OUT"/s3-batches/*.json; do
    aws s3api delete-objects --bucket "$B" --delete "file://$f" > /dev/null || exit 1
  done
  a_s=$(elapsed "$s" "$(now_s)")
  # the same keys everywhere (ours also writes the EARLIEST hint)
  want=$(grep -v '^snapshot/EARLIEST$' "$OUT/s3-after.txt")
  [ "$(s3_keys bench/b | grep -v '^snapshot/EARLIEST$')" = "$want" ] &&
    [ "$(s3_keys bench/c | grep -v '^snapshot/EARLIEST$')" = "$want" ] ||
    { log "s3: the three copies differ after deleting the same keys"; exit 1; }

  log "s3: orphan dry runs after expiration"
  s3_orphan_pair "after expiration (1 snapshot)" bench/a

  x=$OUT/s3-expire.txt
  expired=$(result_field "$x" expired)
  o_in=$(result_field "$x" seconds)
  ereq=$(wc -l < "$OUT/s3-expire.trace" | tr -d ' ')
  manf=$(result_field "$x" manifests); lists=$(result_field "$x" lists)
  # at least: each expired snapshot and its delta list read once, each
  # manifest that dies read once, one DeleteObjects per 1000 keys, the
  # snapshot directory listed, EARLIEST written
  emin=$(( 2 * expired + manf + (ndel + 999) / 1000 + (snaps + 999) / 1000 + 1 ))
  faster=$(awk -v a="$r_s" -v b="$a_s" 'BEGIN { print (a < b) ? a : b }')
  fname=$(awk -v a="$r_s" -v b="$a_s" 'BEGIN { print (a < b) ? "rclone delete" : "aws s3api delete-objects" }')
  ratio=$(awk -v a="$o_s" -v b="$faster" 'BEGIN { printf "%.2f", a / b }')
  verdict="meets the <= 1.2x target"
  if awk -v r="$ratio" 'BEGIN { exit !(r > 1.2) }'; then
    verdict="MISSES the <= 1.2x target"; below_target "s3 expire: ${ratio}x $fname"
  fi
  rows=$(s3_commit_rows "$OUT/s3-build.trace" "$OUT/s3-lat.txt")
  {
    printf '| commit, snapshots %s | %s per commit | %s |\n' "$(echo "$rows" | sed -n 's/^| \([0-9-]*\) |.*/\1/p' | paste -sd/ - | sed 's|/| / |g')" \
      "$(echo "$rows" | awk -F'|' '{ printf "%s%s", (NR > 1 ? " / " : ""), $6 }' | tr -s ' ')" "$S3_MIN_COMMIT"
    printf '| expiration of %s snapshots (%s keys deleted) | %s = %s per expired snapshot (%s) | %s |\n' "$expired" "$ndel" \
      "$ereq" "$(awk -v a="$ereq" -v b="$expired" 'BEGIN { printf "%.2f", a / b }')" "$(s3_methods "$OUT/s3-expire.trace")" "$emin"
  } > "$OUT/s3-req-head.md"

  cat <<EOF
## Object store (Ceph RGW, loopback)

Command: \`BENCHMARKS=s3 BENCH_SCALE=${BENCH_SCALE:-small} sh bench/run.sh $BUILD\` (part of \`make bench\`).
One throwaway single-node Ceph RGW 16 (memstore OSD, beast with \`tcp_nodelay=1\`, 127.0.0.1) started by
\`scripts/s3-server.sh\` for this section and stopped after it; every program below talks to the same RGW.
Requests counted with the S3 FileIO's trace (\`PAIMON_S3_TRACE\`, docs/s3.md): one line per HTTP attempt.

**Table.** \`$OUT/bench_expire build s3://BUCKET/bench/a --snapshots $snaps --files $files\`: the expiration
benchmark's compaction-like table (each commit deletes the $files data files of the previous one and adds $files
new ones, 10 partitions, default manifest options), committed directly to the store ($(fmt %.1f "$build_s") s for
$snaps commits including the data-file PUTs), then copied server-side with \`rclone copy\` to \`bench/b\` and
\`bench/c\`.

**Commit latency as the table grows** (the \`pm_commit\` call alone, data files already written; requests from the
trace, the data-file PUTs before each commit not counted):

| snapshots | commits | median ms | p90 ms | requests per commit | protocol minimum |
|---|---|---|---|---|---|
$rows

Protocol minimum per commit ($S3_MIN_COMMIT): GET LATEST, GET the latest snapshot, GET its base and delta manifest
lists, PUT the new manifest, PUT the new base and delta lists, the conditional PUT of the snapshot, PUT LATEST
(no merge, no existence checks).

**Expiration** of $expired snapshots (retain-min 1, cut-off now): ours deleted $ndel keys from \`bench/a\`; the same
keys (the listing's difference before and after ours) were then deleted from \`bench/b\` and \`bench/c\` by the
peers. Whole-process wall times, one run each, in this order:

| deleting $ndel keys | wall s | keys/s | parallelism |
|---|---|---|---|
| paimon-lua: \`bench_expire expire\` (plan + delete; pm_expire_snapshots alone $(fmt %.3f "$o_in") s) | $(fmt %.3f "$o_s") | $(fmt %.0f "$(awk -v n="$ndel" -v t="$o_s" 'BEGIN { print n / t }')") | 4 threads; DeleteObjects of 1000 keys, up to 4 in flight |
| \`rclone delete --files-from-raw\` (delete only) | $(fmt %.3f "$r_s") | $(fmt %.0f "$(awk -v n="$ndel" -v t="$r_s" 'BEGIN { print n / t }')") | --checkers 8 --transfers 4 |
| \`aws s3api delete-objects\`, $nb batches of up to 1000 keys (delete only) | $(fmt %.3f "$a_s") | $(fmt %.0f "$(awk -v n="$ndel" -v t="$a_s" 'BEGIN { print n / t }')") | 1 (one process per batch, in sequence) |

Our expiration takes **${ratio}x** the time of the faster peer ($fname) — $verdict. Afterwards the three
prefixes hold exactly the same keys (checked).

**Orphan dry run vs \`rclone lsf -R\`** of the same prefix, and the read floor: the same GETs our run made
(from its trace), $S3_CONNS at once by one \`curl --parallel\` process, nothing else ($BENCH_S3_REPS runs each,
interleaved; whole process, cut-off now):

| scan | best s | median s | vs rclone lsf (best) | vs read floor (best) |
|---|---|---|---|---|
$(cat "$OUT/s3-orphan-rows.md")

$(sed 's/^/- /' "$OUT/s3-summary.txt")

**Requests** (HTTP attempts from the trace; per method in brackets) next to the least the protocol needs:

| operation | requests | protocol minimum |
|---|---|---|
$(cat "$OUT/s3-req-head.md")
$(cat "$OUT/s3-req-rows.md")

Expiration minimum: each expired snapshot and its delta manifest list read once, each manifest that dies read
once (its entries name the data files), one DeleteObjects per 1000 keys, one listing page of \`snapshot/\` per 1000
snapshots, the EARLIEST hint. Orphan minimum: the listing pages of the prefix and every snapshot, manifest list and
manifest read once.

EOF
)
