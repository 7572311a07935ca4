#!/usr/bin/python3
"""Generate a large Paimon manifest file (Avro container, codec zstandard)
for the decode benchmark.

    /usr/bin/python3 bench/gen_manifest.py OUT [--entries N] [--schema-from MANIFEST]
                                           [--seed S] [--level L]

The writer schema is copied byte-for-byte from the `avro.schema` metadata of
a Java-written fixture manifest (default: the append_complex_data fixture,
Paimon 1.1/1.2, 18 _FILE fields). The container is written the way Java's
DataFileWriter does it: metadata = avro.schema + avro.codec only, blocks cut
when the uncompressed buffer reaches 64000 bytes, each block one zstd frame
(level 1, streaming: no content size in the frame header).

Values imitate a large partitioned primary-key table: partition (dt STRING,
hr INT), 16 buckets, key (id BIGINT), 8 value columns with min/max stats
rows (BinaryRow bytes built as Java's BinaryRowWriter does), file names
data-<uuid>-<n>.parquet, ~85% ADD / 15% DELETE entries, levels 0-5.
Fields of the records that the schema does not have are simply not written.

Also writes OUT.meta.json: {"entries", "file_bytes", "raw_bytes" (sum of
uncompressed block payloads), "blocks", "schema_from"}.
"""

import argparse
import datetime
import io
import json
import os
import random
import struct
import sys
import uuid

try:
    import avro.io
    import avro.schema
    import zstandard
except ImportError as ex:  # pragma: no cover
    sys.stderr.write("gen_manifest: %s (run with /usr/bin/python3; needs python3-avro, "
                     "python3-zstandard)\n" % ex)
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA_FROM = os.path.join(
    HERE, "..", "spec", "fixtures", "paimon-java", "cpp-parquet-append_complex_data",
    "append_complex_data.db", "append_complex_data", "manifest",
    "manifest-062da773-548e-4cbc-b122-60c927911893-0")
SYNC_INTERVAL = 64000
MAGIC = b"Obj\x01"
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


# ---- Avro container header ------------------------------------------------

def zigzag(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def avro_bytes(b):
    return zigzag(len(b)) + b


def read_schema_text(path):
    """The raw avro.schema bytes of a container file (header only)."""
    with open(path, "rb") as fh:
        data = fh.read(1 << 20)
    if data[:4] != MAGIC:
        raise SystemExit("gen_manifest: %s is not an Avro container" % path)
    pos = 4

    def rd_long():
        nonlocal pos
        shift = result = 0
        while True:
            c = data[pos]
            pos += 1
            result |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return (result >> 1) ^ -(result & 1)

    meta = {}
    n = rd_long()
    while n:
        if n < 0:
            rd_long()
            n = -n
        for _ in range(n):
            kl = rd_long()
            k = data[pos:pos + kl]
            pos += kl
            vl = rd_long()
            meta[k] = data[pos:pos + vl]
            pos += vl
        n = rd_long()
    if b"avro.schema" not in meta:
        raise SystemExit("gen_manifest: no avro.schema in %s" % path)
    return meta[b"avro.schema"]


# ---- BinaryRow (paimon-format.md §5) --------------------------------------

def binrow(fields):
    """fields: list of (kind, value); kind in int, long, str, bytes, null,
    dec (p<=18 unscaled long), ts3 (millis)."""
    n = len(fields)
    w = ((n + 63 + 8) // 64) * 8
    fixed = w + 8 * n
    row = bytearray(fixed)
    var = bytearray()
    for i, (kind, v) in enumerate(fields):
        off = w + 8 * i
        if v is None or kind == "null":
            bit = i + 8
            row[bit >> 3] |= 1 << (bit & 7)
            continue
        if kind == "int":
            row[off:off + 4] = struct.pack("<i", v)
        elif kind in ("long", "dec", "ts3"):
            row[off:off + 8] = struct.pack("<q", v)
        elif kind == "double":
            row[off:off + 8] = struct.pack("<d", v)
        elif kind in ("str", "bytes"):
            b = v.encode("utf-8") if kind == "str" else v
            if len(b) <= 7:
                row[off:off + len(b)] = b
                row[off + 7] = 0x80 | len(b)
            else:
                o = fixed + len(var)
                var += b + bytes((-len(b)) % 8)
                row[off:off + 8] = struct.pack("<Q", (o << 32) | len(b))
        else:
            raise ValueError(kind)
    return struct.pack(">i", n) + bytes(row) + bytes(var)


# ---- realistic entries -------------------------------------------------------

VALUE_COLS = 8  # id, name, price, qty, ts, category, score, flag


class Gen(object):
    def __init__(self, rnd):
        self.rnd = rnd
        self.base_day = datetime.date(2024, 1, 1)
        self.writer_uuids = {}
        self.seq = 0
        self.live = []          # previously added file dicts (for DELETEs)
        self.now_ms = 1717171717000

    def partition(self):
        r = self.rnd
        day = self.base_day + datetime.timedelta(days=r.randrange(90))
        return day.isoformat(), r.randrange(24)

    def stats(self, lo_id, hi_id, dt, hr):
        r = self.rnd
        name_lo = "user_%06d" % r.randrange(100000)
        name_hi = "user_%06d" % r.randrange(100000, 999999)
        cat_lo, cat_hi = sorted(r.sample(["books", "games", "garden", "music", "sports", "toys"], 2))
        ts_lo = self.now_ms - r.randrange(86400000)
        mins = [("long", lo_id), ("str", name_lo[:16]), ("dec", r.randrange(100, 10000)),
                ("int", r.randrange(1, 5)), ("ts3", ts_lo), ("str", cat_lo),
                ("double", r.random()), ("null", None)]
        maxs = [("long", hi_id), ("str", name_hi[:16]), ("dec", r.randrange(10000, 999999)),
                ("int", r.randrange(5, 500)), ("ts3", ts_lo + r.randrange(3600000)),
                ("str", cat_hi), ("double", 1 + r.random()), ("null", None)]
        nulls = [0, r.randrange(3), r.randrange(5), 0, 0, r.randrange(10), 0, r.randrange(1000)]
        return binrow(mins), binrow(maxs), nulls

    def entry(self, i):
        r = self.rnd
        if self.live and r.random() < 0.15:
            # DELETE mirrors an earlier ADD (same identifier fields)
            e = dict(self.live.pop(r.randrange(len(self.live))))
            e["_KIND"] = 1
            return e
        dt, hr = self.partition()
        bucket = r.randrange(16)
        key = (dt, hr, bucket)
        if key not in self.writer_uuids:
            self.writer_uuids[key] = [str(uuid.UUID(int=r.getrandbits(128), version=4)), 0]
        wu = self.writer_uuids[key]
        name = "data-%s-%d.parquet" % (wu[0], wu[1])
        wu[1] += 1
        rows = r.randrange(1000, 2000000)
        lo = r.randrange(1 << 40)
        hi = lo + r.randrange(1, 1 << 30)
        minv, maxv, nulls = self.stats(lo, hi, dt, hr)
        level = r.choice([0, 0, 0, 1, 2, 3, 4, 5])
        seq0 = self.seq
        self.seq += rows
        ct = self.now_ms + i * 37
        e = {
            "_VERSION": 2,
            "_KIND": 0,
            "_PARTITION": binrow([("str", dt), ("int", hr)]),
            "_BUCKET": bucket,
            "_TOTAL_BUCKETS": 16,
            "_FILE": {
                "_FILE_NAME": name,
                "_FILE_SIZE": r.randrange(1 << 20, 128 << 20),
                "_ROW_COUNT": rows,
                "_MIN_KEY": binrow([("long", lo)]),
                "_MAX_KEY": binrow([("long", hi)]),
                "_KEY_STATS": {"_MIN_VALUES": binrow([("long", lo)]),
                               "_MAX_VALUES": binrow([("long", hi)]),
                               "_NULL_COUNTS": [0]},
                "_VALUE_STATS": {"_MIN_VALUES": minv, "_MAX_VALUES": maxv, "_NULL_COUNTS": nulls},
                "_MIN_SEQUENCE_NUMBER": seq0,
                "_MAX_SEQUENCE_NUMBER": seq0 + rows - 1,
                "_SCHEMA_ID": r.choice([0, 1, 1, 2, 2, 2]),
                "_LEVEL": level,
                "_EXTRA_FILES": [name + ".index"] if r.random() < 0.05 else [],
                "_CREATION_TIME": EPOCH + datetime.timedelta(milliseconds=ct),
                "_DELETE_ROW_COUNT": r.randrange(0, 1000) if level == 0 else 0,
                "_EMBEDDED_FILE_INDEX": (bytes(r.getrandbits(8) for _ in range(r.randrange(60, 300)))
                                         if r.random() < 0.1 else None),
                "_FILE_SOURCE": 0 if level == 0 else 1,
                "_VALUE_STATS_COLS": None,
                "_EXTERNAL_PATH": None,
                "_FIRST_ROW_ID": None,
                "_WRITE_COLS": None,
                "_WRITE_COLS_SEQUENCES": None,
            },
        }
        if len(self.live) < 50000:
            self.live.append(e)
        return e


def main():
    ap = argparse.ArgumentParser(description="generate a large Paimon manifest (Avro, zstandard)")
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=300000)
    ap.add_argument("--schema-from", default=DEFAULT_SCHEMA_FROM,
                    help="Java-written manifest whose avro.schema is copied verbatim")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--level", type=int, default=1, help="zstd level (Paimon default 1)")
    args = ap.parse_args()

    schema_text = read_schema_text(args.schema_from)
    schema = avro.schema.parse(schema_text.decode("utf-8"))
    writer = avro.io.DatumWriter(schema)
    cctx = zstandard.ZstdCompressor(level=args.level, write_content_size=False,
                                    write_checksum=False)
    rnd = random.Random(args.seed)
    sync = bytes(rnd.getrandbits(8) for _ in range(16))
    gen = Gen(rnd)

    tmp = args.out + ".tmp"
    raw_total = 0
    blocks = 0
    with open(tmp, "wb") as out:
        out.write(MAGIC)
        meta = [(b"avro.schema", schema_text), (b"avro.codec", b"zstandard")]
        out.write(zigzag(len(meta)))
        for k, v in meta:
            out.write(avro_bytes(k) + avro_bytes(v))
        out.write(zigzag(0))
        out.write(sync)

        buf = io.BytesIO()
        enc = avro.io.BinaryEncoder(buf)
        count = 0

        def flush():
            nonlocal count, raw_total, blocks
            if count == 0:
                return
            raw = buf.getvalue()
            # streaming compressor: the frame carries no content size (as Java)
            co = cctx.compressobj()
            comp = co.compress(raw) + co.flush()
            out.write(zigzag(count) + zigzag(len(comp)) + comp + sync)
            raw_total += len(raw)
            blocks += 1
            buf.seek(0)
            buf.truncate()
            count = 0

        for i in range(args.entries):
            writer.write_data(schema, gen.entry(i), enc)   # no per-datum validate()
            count += 1
            if buf.tell() >= SYNC_INTERVAL:
                flush()
        flush()
    os.replace(tmp, args.out)
    info = {"entries": args.entries, "file_bytes": os.path.getsize(args.out),
            "raw_bytes": raw_total, "blocks": blocks,
            "schema_from": os.path.relpath(os.path.abspath(args.schema_from),
                                           os.path.join(HERE, ".."))}
    with open(args.out + ".meta.json", "w") as fh:
        json.dump(info, fh, indent=1)
        fh.write("\n")
    sys.stderr.write("gen_manifest: %s: %d entries, %d blocks, %.1f MB file, %.1f MB raw\n"
                     % (args.out, args.entries, blocks, info["file_bytes"] / 1e6, raw_total / 1e6))


if __name__ == "__main__":
    main()
