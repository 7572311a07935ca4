#!/bin/sh
# Build and run the libFuzzer harnesses of spec/fuzz/ against src/core/*.c.
#
#   sh spec/fuzz/run.sh [fuzz_avro|fuzz_json|fuzz_binrow ...]     (`make fuzz`)
#
# Environment:
#   FUZZ_SECONDS    seconds per fuzzer (default 60; CI smoke uses 10; 0 = only
#                   replay the seed corpus once)
#   FUZZ_BUILD      build directory (default build/fuzz)
#   FUZZ_ARTIFACTS  where crash-/leak-/timeout- reproducers go
#                   (default $FUZZ_BUILD/artifacts)
#   FUZZ_TIMEOUT    per-input timeout in seconds (default 30)
#   FUZZ_FLAGS      extra libFuzzer flags (e.g. "-jobs=2 -workers=2")
#   PAIMON_FIXTURES fixture root (default spec/fixtures)
#   CLANG           compiler (default clang; Debian 12: clang 14 with
#                   libclang-rt-14-dev for the libFuzzer runtime)
# Exit status 1 if a harness fails to build or any fuzzer finds a crash,
# leak, timeout or out-of-memory input. Reproduce with
#   build/fuzz/<fuzzer> <artifact-file>
set -eu

cd "$(dirname "$0")/../.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-30}
FUZZ_FLAGS=${FUZZ_FLAGS:-}
CLANG=${CLANG:-clang}
OUT=${FUZZ_BUILD:-build/fuzz}
ART=${FUZZ_ARTIFACTS:-$OUT/artifacts}
FIXTURES=${PAIMON_FIXTURES:-spec/fixtures}
FUZZERS=${*:-fuzz_avro fuzz_json fuzz_binrow}
DEPS="jansson libzstd zlib snappy libuv libcurl libcrypto"

PKG_CFLAGS=$(pkg-config --cflags $DEPS 2>/dev/null || true)
PKG_LIBS=$(pkg-config --libs $DEPS 2>/dev/null || echo "-ljansson -lzstd -lz -lsnappy -luv -lcurl -lcrypto")
STD="-std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS_F="-g -O1 $STD $SAN -Isrc/include -Isrc/core $PKG_CFLAGS"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/paimon-fuzz.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT/obj" "$ART"

log() { printf 'fuzz: %s\n' "$*" >&2; }

# ---- toolchain check ------------------------------------------------------
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\n%s\n' \
  'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
  > "$TMP/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$TMP/probe.c" -o "$TMP/probe" 2>"$TMP/probe.err"; then
  log "cannot link a libFuzzer binary with $CLANG:"
  sed 's/^/  /' "$TMP/probe.err" >&2
  log "install the runtime: sh scripts/install-deps.sh (Debian 12: clang + libclang-rt-14-dev)"
  exit 1
fi

# ---- build ------------------------------------------------------------------
# Core sources get coverage instrumentation without libFuzzer's main.
CORE_OBJ=""
for src in src/core/*.c; do
  [ -e "$src" ] || continue
  obj="$OUT/obj/$(basename "$src" .c).o"
  "$CLANG" $CFLAGS_F -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  CORE_OBJ="$CORE_OBJ $obj"
done
[ -n "$CORE_OBJ" ] || { log "no src/core/*.c to fuzz"; exit 1; }

for f in $FUZZERS; do
  [ -f "spec/fuzz/$f.c" ] || { log "unknown fuzzer $f"; exit 1; }
  "$CLANG" $CFLAGS_F -fsanitize=fuzzer -Ispec/fuzz "spec/fuzz/$f.c" $CORE_OBJ \
    $PKG_LIBS -lm -o "$OUT/$f"
done
log "built: $(for f in $FUZZERS; do printf '%s ' "$OUT/$f"; done)"

# ---- seed corpora -------------------------------------------------------------
hex2bin() {   # hex string -> raw bytes (POSIX sh: octal escapes)
  for h in $(printf '%s' "$1" | sed 's/../& /g'); do printf "\\$(printf %03o "0x$h")"; done
}
n=0
seed() {      # seed <dir> <file>: copy a file under a unique name
  n=$((n + 1)); cp "$2" "$1/seed-$n"
}

mkdir -p "$TMP/seeds/fuzz_avro" "$TMP/seeds/fuzz_json" "$TMP/seeds/fuzz_binrow"
if [ -d "$FIXTURES" ]; then
  find "$FIXTURES" -type f -path '*/manifest/*' -size -65k > "$TMP/avro.list"
  while IFS= read -r f; do seed "$TMP/seeds/fuzz_avro" "$f"; done < "$TMP/avro.list"
  find "$FIXTURES" -type f \( -path '*/snapshot/snapshot-*' -o -path '*/tag/tag-*' \
      -o -path '*/schema/schema-*' -o -path '*/consumer/consumer-*' \
      -o -path '*/changelog/changelog-*' \) -size -65k > "$TMP/json.list"
  while IFS= read -r f; do seed "$TMP/seeds/fuzz_json" "$f"; done < "$TMP/json.list"
else
  log "warning: fixtures not found at $FIXTURES; using hand-made seeds only"
fi
# Avro schema JSON texts (inputs without the Avro magic go to the schema parser).
if [ -x /usr/bin/python3 ] && [ -s "$TMP/avro.list" ]; then
  /usr/bin/python3 - "$TMP/seeds/fuzz_avro" "$TMP/avro.list" < "$TMP/avro.list" <<'EOF' || true
import sys, os
out = sys.argv[1]
def varint(b, i):
    s = r = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7F) << s; s += 7
        if not c & 0x80: return (r >> 1) ^ -(r & 1), i
seen = set()
for path in sys.stdin.read().split("\n"):
    try:
        b = open(path, "rb").read(65536)
        if b[:4] != b"Obj\x01": continue
        i = 4; n, i = varint(b, i)
        while n:
            if n < 0: _, i = varint(b, i); n = -n
            for _ in range(n):
                kl, i = varint(b, i); k = b[i:i + kl]; i += kl
                vl, i = varint(b, i); v = b[i:i + vl]; i += vl
                if k == b"avro.schema" and v not in seen:
                    seen.add(v)
                    open(os.path.join(out, "schema-%d.json" % len(seen)), "wb").write(v)
            n, i = varint(b, i)
    except Exception:
        pass
# The fixtures only use zstandard (and snappy in paimon-java-compat): add
# null- and deflate-coded copies of a few of them.
try:
    import avro.datafile, avro.io
    done = 0
    for path in open(sys.argv[2]).read().split("\n"):
        if done >= 6 or not path:
            continue
        try:
            with open(path, "rb") as fh:
                r = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
                recs = list(r)
                sch = r.datum_reader.writers_schema
            if not recs:
                continue
            for codec in ("null", "deflate"):
                with open(os.path.join(out, "recoded-%s-%d.avro" % (codec, done)), "wb") as o:
                    w = avro.datafile.DataFileWriter(o, avro.io.DatumWriter(), sch, codec=codec)
                    for rec in recs:
                        w.append(rec)
                    w.close()
            done += 1
        except Exception:
            pass
except ImportError:
    pass
EOF
fi
J="$TMP/seeds/fuzz_json"
printf '{\n  "nextSnapshot" : 5\n}' > "$J/consumer"
printf '{"version":3,"id":9,"schemaId":1,"baseManifestList":"b","deltaManifestList":"d","changelogManifestList":"c","indexManifest":"i","commitUser":"u","commitIdentifier":9223372036854775807,"commitKind":"OVERWRITE","timeMillis":1,"logOffsets":{"0":5,"1":-1},"totalRecordCount":0,"deltaRecordCount":-3,"watermark":-9223372036854775808,"statistics":"s","properties":{"a":"b"},"nextRowId":7,"operation":"DELETE","tagCreateTime":[2024,1,2,3,4,5,6],"tagTimeRetained":86400.000000000}' > "$J/snapshot-full"
printf '{"id":1,"schemaId":0,"baseManifestList":"b","deltaManifestList":"d","commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":1,"watermark":null,"changelogRecordCount":null}' > "$J/snapshot-v1"
printf '{"version":1,"id":2,"fields":[{"id":0,"name":"a","type":"DECIMAL(38, 10) NOT NULL"},{"id":1,"name":"m","type":{"type":"MAP","key":"STRING NOT NULL","value":{"type":"ARRAY","element":"TIMESTAMP(6) WITH LOCAL TIME ZONE"}}},{"id":2,"name":"r","type":{"type":"ROW NOT NULL","fields":[{"id":3,"name":"x","type":"VARCHAR(10)","description":"d","defaultValue":"1"}]}},{"id":4,"name":"v","type":{"type":"VECTOR","element":"FLOAT","length":3}}],"highestFieldId":4,"partitionKeys":["a"],"primaryKeys":[],"options":{"k":"v"},"comment":"c","timeMillis":5}' > "$J/schema-v1"
printf '1 h' > "$J/duration"
printf '16 mb' > "$J/memsize"

B="$TMP/seeds/fuzz_binrow"
# byte0 = 0x40|n (force arity), n type selectors (indexes into TYPES[] in
# fuzz_binrow.c), then [arity BE][row] as Java's BinaryRowWriter writes it.
# ("2024-01-01", 5): the worked example of paimon-format.md §5.2
hex2bin 4207030000000200000000000000000a000000180000000500000000000000323032342d30312d3031000000000000 > "$B/str-int"
hex2bin 42070300000002000000000000000061000000000000810500000000000000 > "$B/inline"
# (" ", -1, NULL): whitespace-only string -> default partition name, null bit
hex2bin 43071e040000000300040000000000002000000000000081ffffffff000000000000000000000000 > "$B/null-ws"
hex2bin 41030000000100000000000000000a00000000000000 > "$B/int10"
hex2bin 40000000000000000000000000 > "$B/empty"
# DECIMAL(23,5), TIMESTAMP(9), null DECIMAL(38,10), null TIMESTAMP(6): non-compact var parts
hex2bin 441b131c1200000004000c000000000000090000002800000055f806003800000000000000400000000000000050000000f94eb1607ed0c993cb0000000000000003d920c88c010000000000000000000000000000000000000000000000000000 > "$B/dec-ts"
# DATE BOOLEAN DOUBLE FLOAT DECIMAL(10,2) TIMESTAMP(3) TINYINT SMALLINT TIME(3) BYTES CHAR(3) TIMESTAMP_LTZ(3)
hex2bin 4c0d000605181101020f0a09150000000c00000000000000000b4d0000000000000100000000000000000000205fa00242cdcccc3d00000000e20400000000000000c520c88c010000fd00000000000000d4fe00000000000080ee3600000000000d000000680000006162630000000083000000000000000000ff0162696e61727964617461000000 > "$B/misc"
# 60 INT fields 0..59: 16-byte null bitset (arity > 56)
{
  hex2bin 7c
  i=0; while [ $i -lt 60 ]; do hex2bin 03; i=$((i + 1)); done
  hex2bin 0000003c00000000000000000000000000000000
  i=0; while [ $i -lt 60 ]; do hex2bin "$(printf %02x $i)00000000000000"; i=$((i + 1)); done
} > "$B/wide"
printf '\200DECIMAL(38, 10) NOT NULL' > "$B/type-dec"
printf '\200TIMESTAMP(6) WITH LOCAL TIME ZONE' > "$B/type-ltz"
printf '\200VARCHAR(2147483647)' > "$B/type-str"

# ---- run ----------------------------------------------------------------------
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=""
for f in $FUZZERS; do
  corpus="$TMP/corpus/$f"
  mkdir -p "$corpus" "$ART/$f"
  if [ "$FUZZ_SECONDS" -gt 0 ]; then
    mode="-max_total_time=$FUZZ_SECONDS"
  else
    mode="-runs=0"
  fi
  log "running $f ($mode, seeds: $(ls "$TMP/seeds/$f" | wc -l))"
  # shellcheck disable=SC2086
  if "$OUT/$f" $mode -max_len=65536 -rss_limit_mb=2048 -timeout="$FUZZ_TIMEOUT" \
       -print_final_stats=1 -artifact_prefix="$ART/$f/" $FUZZ_FLAGS \
       "$corpus" "$TMP/seeds/$f" > "$OUT/$f.log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$f.log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$OUT/$f.log" | tail -1)
    log "$f: ok (${execs:-?} execs, ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) new units)"
  else
    failed="$failed $f"
    log "$f: FAILED -- log: $OUT/$f.log"
    grep -E 'ERROR: |SUMMARY: |fuzz property violated|runtime error|Test unit written' "$OUT/$f.log" \
      | head -20 | sed 's/^/  /' >&2
  fi
done

if [ -n "$failed" ]; then
  log "FAILED:$failed (reproducers in $ART/<fuzzer>/; run build/fuzz/<fuzzer> <file>)"
  exit 1
fi
log "all fuzzers passed ($FUZZ_SECONDS s each)"
