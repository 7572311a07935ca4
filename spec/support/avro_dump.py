#!/usr/bin/python3
"""Independent Avro decoding for spec/c/test_avro.c (uses Debian python3-avro,
python3-zstandard; snappy through python-snappy when importable, else a
small pure-Python snappy decompressor below).

usage: avro_dump.py FILE...

For every file prints
    == <path>
    count <n>
    codec <name>
    <canonical record>      (one line per record)
or, when the file cannot be read,
    == <path>
    error <message>

Canonical record text (mirrored by canon() in test_avro.c):
    null n, boolean t/f, int/long i<decimal>, float/double d<hex of the
    little-endian IEEE double>, string (and enum symbol) s<hex utf-8>,
    bytes/fixed x<hex>, array [a,b], record and map {<hex key>=<value>,...}.
Logical types are ignored (raw values), union branches are not shown.
"""
import struct
import sys
import warnings

import avro.codecs
import avro.datafile
import avro.io
import avro.schema

warnings.simplefilter("ignore")


def snappy_decompress(data):
    pos, n, shift = 0, 0, 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    out = bytearray()
    while pos < len(data):
        tag = data[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:
            ln = tag >> 2
            if ln >= 60:
                nb = ln - 59
                ln = int.from_bytes(data[pos:pos + nb], "little")
                pos += nb
            ln += 1
            out += data[pos:pos + ln]
            pos += ln
            continue
        if kind == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | data[pos]
            pos += 1
        elif kind == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(data[pos:pos + 2], "little")
            pos += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
        if off == 0 or off > len(out):
            raise ValueError("bad snappy offset")
        if off >= ln:
            start = len(out) - off
            out += out[start:start + ln]
        else:
            for _ in range(ln):
                out.append(out[-off])
    if len(out) != n:
        raise ValueError("snappy length mismatch")
    return bytes(out)


if "snappy" not in avro.codecs.KNOWN_CODECS:
    import binascii
    import io

    class PureSnappyCodec(avro.codecs.Codec):
        @staticmethod
        def compress(data):
            raise NotImplementedError("snappy compression")

        @staticmethod
        def decompress(readers_decoder):
            length = readers_decoder.read_long()
            data = readers_decoder.read(length - 4)
            uncompressed = snappy_decompress(data)
            checksum = readers_decoder.read(4)
            if binascii.crc32(uncompressed) & 0xFFFFFFFF != struct.unpack(">I", checksum)[0]:
                raise avro.errors.AvroException("Checksum failure")
            return avro.io.BinaryDecoder(io.BytesIO(uncompressed))

    avro.codecs.KNOWN_CODECS["snappy"] = PureSnappyCodec


def strip_logical(s, seen):
    if id(s) in seen:
        return
    seen.add(id(s))
    if hasattr(s, "logical_type"):
        s.logical_type = None
    if isinstance(s, avro.schema.RecordSchema):
        for f in s.fields:
            strip_logical(f.type, seen)
    elif isinstance(s, avro.schema.UnionSchema):
        for b in s.schemas:
            strip_logical(b, seen)
    elif isinstance(s, avro.schema.ArraySchema):
        strip_logical(s.items, seen)
    elif isinstance(s, avro.schema.MapSchema):
        strip_logical(s.values, seen)


def canon(v):
    if v is None:
        return "n"
    if v is True:
        return "t"
    if v is False:
        return "f"
    if isinstance(v, int):
        return "i%d" % v
    if isinstance(v, float):
        return "d" + struct.pack("<d", v).hex()
    if isinstance(v, str):
        return "s" + v.encode("utf-8").hex()
    if isinstance(v, (bytes, bytearray)):
        return "x" + bytes(v).hex()
    if isinstance(v, list):
        return "[" + ",".join(canon(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(k.encode("utf-8").hex() + "=" + canon(x) for k, x in v.items()) + "}"
    raise TypeError("unexpected value type %r" % type(v))


def dump(path, out):
    out.write("== %s\n" % path)
    try:
        with open(path, "rb") as fh:
            r = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
            strip_logical(r.datum_reader.writers_schema, set())
            lines = [canon(rec) for rec in r]
            codec = r.meta.get("avro.codec", b"null").decode()
    except Exception as ex:  # noqa: BLE001 - report anything as an error line
        out.write("error %s\n" % str(ex).replace("\n", " "))
        return
    out.write("count %d\ncodec %s\n" % (len(lines), codec))
    for line in lines:
        out.write(line + "\n")


def main():
    out = sys.stdout
    for path in sys.argv[1:]:
        dump(path, out)
    out.flush()


if __name__ == "__main__":
    main()
