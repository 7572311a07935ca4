#!/usr/bin/python3
"""Damage an Avro container file inside its blocks while keeping the
container valid: every block is decompressed, loses its last byte (so its
last record ends early), and is compressed again with the file's codec;
header, record counts and sync markers stay as they were.

    truncate_blocks.py FILE

For tests that need a manifest whose container reads cleanly but whose
records do not (spec/orphan_rounds_spec.lua)."""
import io
import sys
import zlib

import zstandard


def read_long(f):
    shift, acc = 0, 0
    while True:
        b = f.read(1)
        if not b:
            raise EOFError("truncated varint")
        acc |= (b[0] & 0x7F) << shift
        shift += 7
        if not b[0] & 0x80:
            return (acc >> 1) ^ -(acc & 1)


def put_long(n):
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        if u & ~0x7F:
            out.append((u & 0x7F) | 0x80)
            u >>= 7
        else:
            out.append(u)
            return bytes(out)


def main(path):
    data = open(path, "rb").read()
    f = io.BytesIO(data)
    if f.read(4) != b"Obj\x01":
        sys.exit("not an Avro container: " + path)
    meta = {}
    while True:
        n = read_long(f)
        if n == 0:
            break
        if n < 0:
            n = -n
            read_long(f)
        for _ in range(n):
            k = f.read(read_long(f))
            meta[k] = f.read(read_long(f))
    sync = f.read(16)
    header = data[:f.tell()]
    codec = meta.get(b"avro.codec", b"null")
    out = bytearray(header)
    while f.tell() < len(data):
        count = read_long(f)
        size = read_long(f)
        block = f.read(size)
        if f.read(16) != sync:
            sys.exit("sync mismatch in " + path)
        if codec == b"zstandard":
            raw = zstandard.ZstdDecompressor().decompressobj().decompress(block)
            block = zstandard.ZstdCompressor().compress(raw[:-1])
        elif codec == b"deflate":
            raw = zlib.decompress(block, -15)
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            block = c.compress(raw[:-1]) + c.flush()
        elif codec == b"null":
            block = block[:-1]
        else:
            sys.exit("codec %r not handled" % codec)
        out += put_long(count) + put_long(len(block)) + block + sync
    open(path, "wb").write(bytes(out))


if __name__ == "__main__":
    main(sys.argv[1])
