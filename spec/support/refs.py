#!/usr/bin/python3
"""refs: every file each snapshot and tag of every branch of a Paimon table
references, walked with the independent reader pyref.py (python3-avro; no
code shared with the C core). Used by spec/helper.lua (H.refs).

Usage: /usr/bin/python3 spec/support/refs.py TABLE_DIR

Importable: data_path(tbl, entry, partition_info) is the path of a manifest
entry's data file (spec/support/oracle.py uses it).

Output (JSON on stdout):
    {branch: {"snapshots": {id: [paths]}, "tags": {name: [paths]}}}
with "main" for the main branch; paths are relative to the table directory,
or absolute for external paths.
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyref

def rel(p):
    if p.startswith("file:") or p.startswith("FILE:"):
        p = p[5:]
        while p.startswith("//"): p = p[1:]
    return p

def data_path(tbl, e, info):
    keys, types, dname, legacy = info
    f = e["_FILE"]
    ext = f.get("_EXTERNAL_PATH")
    if ext is not None:
        return rel(ext)
    vals = pyref.decode_binrow(bytes(e["_PARTITION"]), types, "partition")
    pp = pyref.partition_path(keys, types, vals, dname, legacy)
    b = e["_BUCKET"]
    bd = "bucket-postpone" if b == -2 else "bucket-%d" % b
    pdir = tbl.options.get("data-file.path-directory")
    p = pp + bd + "/" + f["_FILE_NAME"]
    if pdir: p = pdir.strip("/") + "/" + p
    return p

def snap_refs(tbl, snap):
    info = tbl.partition_info()
    out = set()
    for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
        n = snap.get(key)
        if n:
            out.add("manifest/" + n)
            for m in pyref.read_avro(tbl.manifest_path(n)):
                out.add("manifest/" + m["_FILE_NAME"])
    for e in tbl.live_files(snap):
        p = data_path(tbl, e, info)
        out.add(p)
        d = p.rsplit("/", 1)[0]
        for x in e["_FILE"].get("_EXTRA_FILES") or []:
            out.add(d + "/" + x)
    n = snap.get("changelogManifestList")
    if n:
        for m in pyref.read_avro(tbl.manifest_path(n)):
            for e in pyref.read_avro(tbl.manifest_path(m["_FILE_NAME"])):
                if e["_KIND"] == 0:
                    out.add(data_path(tbl, e, info))
    im = snap.get("indexManifest")
    if im:
        out.add("manifest/" + im)
        in_data = str(tbl.options.get("index-file-in-data-file-dir", "false")).lower() == "true"
        for e in pyref.read_avro(tbl.manifest_path(im)):
            ext = e.get("_EXTERNAL_PATH")
            if ext:
                out.add(rel(ext))
            elif in_data:
                keys, types, dname, legacy = info
                vals = pyref.decode_binrow(bytes(e["_PARTITION"]), types, "partition")
                pp = pyref.partition_path(keys, types, vals, dname, legacy)
                out.add(pp + "bucket-%d/" % e["_BUCKET"] + e["_FILE_NAME"])
            else:
                out.add("index/" + e["_FILE_NAME"])
    if snap.get("statistics"):
        out.add("statistics/" + snap["statistics"])
    return sorted(out)

def branch_refs(table, branch):
    tbl = pyref.Table(table, branch)
    res = {"snapshots": {}, "tags": {}}
    files = pyref.snapshot_files(tbl.broot)
    for sid in sorted(files):
        s = pyref.read_json(os.path.join(tbl.broot, "snapshot", files[sid]))
        res["snapshots"][str(sid)] = snap_refs(tbl, s)
    tdir = os.path.join(tbl.broot, "tag")
    if os.path.isdir(tdir):
        for n in sorted(os.listdir(tdir)):
            if n.startswith("tag-"):
                res["tags"][n[4:]] = snap_refs(tbl, pyref.read_json(os.path.join(tdir, n)))
    return res

def main():
    table = sys.argv[1].rstrip("/")
    out = {"main": branch_refs(table, None)}
    bdir = os.path.join(table, "branch")
    if os.path.isdir(bdir):
        for n in sorted(os.listdir(bdir)):
            if n.startswith("branch-"):
                out[n[7:]] = branch_refs(table, n[7:])
    json.dump(out, sys.stdout)

if __name__ == "__main__":
    main()
