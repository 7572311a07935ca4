#!/usr/bin/python3
"""Independent check of the index manifest written by a partition drop,
using Debian's python3-avro (+ zstandard) and pyref.py's BinaryRow decoder.

usage: index_manifest_check.py drop TABLE OLD_SNAPSHOT NEW_SNAPSHOT SPEC...
    SPEC is "k=v[,k2=v2]" (rendered partition values, as in the directory
    name). The records of NEW's index manifest must be exactly those of
    OLD's index manifest whose partition matches no SPEC (same field
    values, order ignored), all ADD entries. Prints a JSON summary:
    {"old": n, "new": n, "dropped": [file names], "kept": [file names],
     "same_file": bool}
    and exits 1 with a message on stderr when they differ.

usage: index_manifest_check.py diff TABLE OLD_SNAPSHOT NEW_SNAPSHOT [+NAME|-NAME]...
    NEW's index manifest must hold OLD's records minus those named -NAME,
    plus one record per +NAME that OLD does not have (all ADD, version 1).
    Prints the added records, one canonical JSON object per line.

usage: index_manifest_check.py files TABLE SNAPSHOT
    Prints the JSON list of index files named by SNAPSHOT's index manifest:
    [{"file_name", "partition_path", "bucket", "index_type", "path",
      "exists"}] (path relative to the table unless _EXTERNAL_PATH is set).
"""
import json
import os
import sys
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyref  # noqa: E402


def snapshot(tbl, sid):
    return tbl.resolve_snapshot(int(sid))


def index_records(tbl, snap):
    name = snap.get("indexManifest")
    if name is None:
        return None, []
    return name, pyref.read_avro(tbl.manifest_path(name))


def part_path(tbl, rec):
    keys, types, default_name, legacy = tbl.partition_info()
    vals = pyref.decode_binrow(bytes(rec["_PARTITION"]), types, "_PARTITION of %s" % rec["_FILE_NAME"])
    return pyref.partition_path(keys, types, vals, default_name, legacy)


def matches(path, spec):
    comps = set(c for c in path.strip("/").split("/") if c)
    return all(p in comps for p in spec.split(","))


def canon(rec):
    def conv(v):
        if isinstance(v, (bytes, bytearray)):
            return {"bytes": bytes(v).hex()}
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return json.dumps(conv(rec), sort_keys=True)


def cmd_drop(table, old, new, specs):
    tbl = pyref.Table(table)
    old_name, old_recs = index_records(tbl, snapshot(tbl, old))
    new_name, new_recs = index_records(tbl, snapshot(tbl, new))
    dropped, kept = [], []
    for r in old_recs:
        if r["_KIND"] != 0:
            print("old index manifest %s has a non-ADD entry %s" % (old_name, r["_FILE_NAME"]), file=sys.stderr)
            return 1
        (dropped if any(matches(part_path(tbl, r), s) for s in specs) else kept).append(r)
    for r in new_recs:
        if r["_KIND"] != 0 or r["_VERSION"] != 1:
            print("new index manifest %s: entry %s has _KIND %r _VERSION %r"
                  % (new_name, r["_FILE_NAME"], r["_KIND"], r["_VERSION"]), file=sys.stderr)
            return 1
    want = sorted(canon(r) for r in kept)
    got = sorted(canon(r) for r in new_recs)
    if want != got:
        print("index manifest %s of snapshot %s differs from %s minus the dropped partitions:\n"
              "want %s\n got %s" % (new_name, new, old_name, want, got), file=sys.stderr)
        return 1
    print(json.dumps({"old": len(old_recs), "new": len(new_recs),
                      "dropped": sorted(r["_FILE_NAME"] for r in dropped),
                      "kept": sorted(r["_FILE_NAME"] for r in kept),
                      "same_file": old_name == new_name}))
    return 0


def cmd_diff(table, old, new, changes):
    tbl = pyref.Table(table)
    old_name, old_recs = index_records(tbl, snapshot(tbl, old))
    new_name, new_recs = index_records(tbl, snapshot(tbl, new))
    removed = set(c[1:] for c in changes if c.startswith("-"))
    added = set(c[1:] for c in changes if c.startswith("+"))
    old_names = set(r["_FILE_NAME"] for r in old_recs)
    for n in removed - old_names:
        print("%s is not in the old index manifest %s" % (n, old_name), file=sys.stderr)
        return 1
    for n in added & old_names:
        print("%s is already in the old index manifest %s" % (n, old_name), file=sys.stderr)
        return 1
    for r in new_recs:
        if r["_KIND"] != 0 or r["_VERSION"] != 1:
            print("new index manifest %s: entry %s has _KIND %r _VERSION %r"
                  % (new_name, r["_FILE_NAME"], r["_KIND"], r["_VERSION"]), file=sys.stderr)
            return 1
    want = sorted(canon(r) for r in old_recs if r["_FILE_NAME"] not in removed)
    got_kept = sorted(canon(r) for r in new_recs if r["_FILE_NAME"] not in added)
    got_added = sorted(canon(r) for r in new_recs if r["_FILE_NAME"] in added)
    if want != got_kept or len(got_added) != len(added):
        print("index manifest %s of snapshot %s is not %s %s:\nwant kept %s\n got kept %s\n added %s"
              % (new_name, new, old_name, " ".join(changes), want, got_kept, got_added), file=sys.stderr)
        return 1
    for a in got_added:
        print(a)
    return 0


def cmd_files(table, sid):
    tbl = pyref.Table(table)
    _, recs = index_records(tbl, snapshot(tbl, sid))
    in_data = str(tbl.options.get("index-file-in-data-file-dir", "false")).lower() == "true"
    out = []
    for r in recs:
        pp = part_path(tbl, r)
        ext = r.get("_EXTERNAL_PATH")
        if ext is not None:
            path = ext
            local = ext[len("FILE:"):] if ext.startswith("FILE:") else ext
        else:
            path = (pp + "bucket-%d/" % r["_BUCKET"] if in_data else "index/") + r["_FILE_NAME"]
            local = os.path.join(tbl.dir, path)
        out.append({"file_name": r["_FILE_NAME"], "partition_path": pp, "bucket": r["_BUCKET"],
                    "index_type": r["_INDEX_TYPE"], "path": path, "exists": os.path.isfile(local)})
    print(json.dumps(out))
    return 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "drop":
        return cmd_drop(argv[2], argv[3], argv[4], argv[5:])
    if len(argv) >= 5 and argv[1] == "diff":
        return cmd_diff(argv[2], argv[3], argv[4], argv[5:])
    if len(argv) == 4 and argv[1] == "files":
        return cmd_files(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
