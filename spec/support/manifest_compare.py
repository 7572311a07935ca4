#!/usr/bin/python3
"""Independent check of manifest-family files for spec/c/test_manifest.c,
using Debian's python3-avro (+ zstandard, snappy).

usage: manifest_compare.py names FILE          one data/manifest file name per record
       manifest_compare.py compare ORIG OURS   records of OURS equal those of ORIG
                                               (fields only in OURS must be null)
"""
import sys
import warnings

import avro.datafile
import avro.io

warnings.simplefilter("ignore")


def records(path):
    with open(path, "rb") as f:
        return list(avro.datafile.DataFileReader(f, avro.io.DatumReader()))


def name_of(r):
    if "_FILE" in r and isinstance(r["_FILE"], dict):
        return r["_FILE"]["_FILE_NAME"]
    return r["_FILE_NAME"]


def same(a, b, where):
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return f"{where}: record vs {type(b).__name__}"
        for k, v in a.items():
            msg = same(v, b.get(k), f"{where}.{k}")
            if msg:
                return msg
        for k, v in b.items():
            if k not in a and v is not None:
                return f"{where}.{k}: only in ours and not null ({v!r})"
        return None
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return f"{where}: list {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            msg = same(x, y, f"{where}[{i}]")
            if msg:
                return msg
        return None
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def main():
    if sys.argv[1] == "names":
        for r in records(sys.argv[2]):
            print(name_of(r))
    elif sys.argv[1] == "compare":
        a, b = records(sys.argv[2]), records(sys.argv[3])
        if len(a) != len(b):
            print(f"count {len(a)} vs {len(b)}")
            sys.exit(1)
        for i, (x, y) in enumerate(zip(a, b)):
            msg = same(x, y, f"record {i}")
            if msg:
                print(msg)
                sys.exit(1)
        print(f"same {len(a)}")


main()
