#!/usr/bin/python3
"""oracle: every file a Paimon table still needs, computed the slow obvious
way, with the independent reader pyref.py (python3-avro; no code shared with
the C core, and paimon-lua is never called).

Usage: /usr/bin/python3 spec/support/oracle.py TABLE_DIR

Roots (each walked in full, nothing derived from another root):
  * every snapshot file of main and of every branch (branch/branch-NAME/):
    the snapshot file; its schema file and the schema of every live data
    file; its base, delta and changelog manifest lists and every manifest
    they name; the FULL live data-file set of base + delta (ADDs without a
    matching DELETE) with their _EXTRA_FILES; the data files its changelog
    list ADDs; its index manifest and the index files it names; its
    statistics file.  Root name "main snapshot 5", "b1 snapshot 2".
  * every tag of every branch, the same way ("main tag t1", "b1 tag t1").
  * every long-lived changelog changelog/changelog-N of every branch: the
    changelog file, the manifest lists it names, the manifests of its delta
    and changelog lists and the data files they ADD ("main changelog 3").
  * every consumer consumer/consumer-ID of every branch: the snapshot its
    nextSnapshot names, when that snapshot exists, as a snapshot root
    ("main consumer c1").
A list or manifest that a root names but that is gone is reported missing
(with the roots that need it); what it would have named is unknown.

Output (JSON on stdout):
    {"needed": {path: [roots...]}, "missing": [{"path": p, "roots": [...]}]}
paths relative to the table directory (absolute for external paths).
Exit 0 when every needed file exists, 1 when something is missing, 2 when
the table itself cannot be read (no schema, unreadable snapshot JSON).

As a module: Oracle(table_dir).compute() -> (needed, missing), both
{path: set(roots)}; an Oracle keeps decoded Avro files (manifest names are
unique and never rewritten) so a long-lived caller (lifecycle.py) stays fast.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyref  # noqa: E402
import refs  # noqa: E402

LIST_KEYS = ("baseManifestList", "deltaManifestList", "changelogManifestList")


def list_dir(path, prefix):
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(prefix) and os.path.isfile(os.path.join(path, n)))


def branches(table):
    """[(name, branch root)] with "main" first; a branch directory without
    any file is not a branch (an interrupted delete)."""
    out = [("main", table)]
    for n in list_dir_any(os.path.join(table, "branch"), "branch-"):
        root = os.path.join(table, "branch", n)
        if any(files for _, _, files in os.walk(root)):
            out.append((n[len("branch-"):], root))
    return out


def list_dir_any(path, prefix):
    try:
        return sorted(n for n in os.listdir(path) if n.startswith(prefix))
    except FileNotFoundError:
        return []


class Oracle(object):
    def __init__(self, table):
        self.table = table.rstrip("/")
        self._avro = {}     # abs path -> (stat key, records)

    # ---- helpers
    def _exists(self, rel):
        p = rel if os.path.isabs(rel) else os.path.join(self.table, rel)
        return os.path.exists(p)

    def _read_avro(self, rel):
        """records of manifest/<name>, or None when the file is gone."""
        p = os.path.join(self.table, rel)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        hit = self._avro.get(p)
        if hit is not None and hit[0] == key:
            return hit[1]
        recs = pyref.read_avro(p)
        self._avro[p] = (key, recs)
        return recs

    # ---- one root's files: a set of paths (missing ones included)
    def _manifests_of(self, out, list_name):
        """adds the list and its manifests to out; returns the manifests'
        records in list order (None for a gone manifest)."""
        rel = "manifest/" + list_name
        out.add(rel)
        metas = self._read_avro(rel)
        if metas is None:
            return []
        res = []
        for m in metas:
            mrel = "manifest/" + m["_FILE_NAME"]
            out.add(mrel)
            res.append(self._read_avro(mrel))
        return res

    def _data_files(self, out, tbl, info, e):
        p = refs.data_path(tbl, e, info)
        out.add(p)
        d = p.rsplit("/", 1)[0] if "/" in p else ""
        for x in e["_FILE"].get("_EXTRA_FILES") or []:
            out.add((d + "/" if d else "") + x)

    def snapshot_files(self, tbl, broot_rel, snap):
        out = set()
        info = tbl.partition_info()
        if snap.get("schemaId") is not None:
            out.add(broot_rel + "schema/schema-%d" % snap["schemaId"])
        # the full live set of base + delta, the slow way
        entries = []
        for key in ("baseManifestList", "deltaManifestList"):
            n = snap.get(key)
            if n:
                for recs in self._manifests_of(out, n):
                    entries.extend(recs or [])
        adds, deleted = [], set()
        for e in entries:
            f = e["_FILE"]
            ident = (bytes(e["_PARTITION"]), e["_BUCKET"], f.get("_LEVEL"), f["_FILE_NAME"],
                     tuple(f.get("_EXTRA_FILES") or ()),
                     None if f.get("_EMBEDDED_FILE_INDEX") is None else bytes(f["_EMBEDDED_FILE_INDEX"]),
                     f.get("_EXTERNAL_PATH"))
            if e["_KIND"] == 0:
                adds.append((ident, e))
            else:
                deleted.add(ident)
        for ident, e in adds:
            if ident not in deleted:
                self._data_files(out, tbl, info, e)
                sid = e["_FILE"].get("_SCHEMA_ID")
                if sid is not None:
                    out.add(broot_rel + "schema/schema-%d" % sid)
        n = snap.get("changelogManifestList")
        if n:
            for recs in self._manifests_of(out, n):
                for e in recs or []:
                    if e["_KIND"] == 0:
                        self._data_files(out, tbl, info, e)
        im = snap.get("indexManifest")
        if im:
            out.add("manifest/" + im)
            in_data = str(tbl.options.get("index-file-in-data-file-dir", "false")).lower() == "true"
            for e in self._read_avro("manifest/" + im) or []:
                ext = e.get("_EXTERNAL_PATH")
                if ext:
                    out.add(refs.rel(ext))
                elif in_data:
                    keys, types, dname, legacy = info
                    vals = pyref.decode_binrow(bytes(e["_PARTITION"]), types, "partition")
                    pp = pyref.partition_path(keys, types, vals, dname, legacy)
                    out.add(pp + "bucket-%d/" % e["_BUCKET"] + e["_FILE_NAME"])
                else:
                    out.add("index/" + e["_FILE_NAME"])
        if snap.get("statistics"):
            out.add("statistics/" + snap["statistics"])
        return out

    def changelog_files(self, tbl, snap):
        """a long-lived changelog: the lists it names, and what its delta and
        changelog lists ADD (with their manifests)."""
        out = set()
        info = tbl.partition_info()
        for key in LIST_KEYS:
            n = snap.get(key)
            if not n:
                continue
            if key == "baseManifestList":
                out.add("manifest/" + n)
                continue
            for recs in self._manifests_of(out, n):
                for e in recs or []:
                    if e["_KIND"] == 0:
                        self._data_files(out, tbl, info, e)
        return out

    # ---- what orphan cleaning may keep beyond the needed files
    def reachable_names(self):
        """File names Java's OrphanFilesClean treats as used (it matches by
        name): of every snapshot, tag and long-lived changelog of every
        branch, the manifest lists, index manifest and statistics it names,
        and in each list that exists its manifests and every file name
        (added or deleted, extra files too) those name, and the index
        files of the index manifest. A superset of the needed files: e.g.
        the manifests of a long-lived changelog's base list (kept while the
        list exists), or a file a DELETE entry names."""
        names = set()
        for bname, broot in branches(self.table):
            snaps = [os.path.join(broot, "snapshot", n) for n in pyref.snapshot_files(broot).values()]
            snaps += [os.path.join(broot, "tag", n) for n in list_dir(os.path.join(broot, "tag"), "tag-")]
            snaps += [os.path.join(broot, "changelog", n)
                      for n in pyref.list_versioned(os.path.join(broot, "changelog"), "changelog-").values()]
            for path in snaps:
                s = pyref.read_json(path)
                for key in LIST_KEYS:
                    n = s.get(key)
                    if not n:
                        continue
                    names.add(n)
                    for m in self._read_avro("manifest/" + n) or []:
                        names.add(m["_FILE_NAME"])
                        for e in self._read_avro("manifest/" + m["_FILE_NAME"]) or []:
                            names.add(e["_FILE"]["_FILE_NAME"])
                            names.update(e["_FILE"].get("_EXTRA_FILES") or [])
                im = s.get("indexManifest")
                if im:
                    names.add(im)
                    for e in self._read_avro("manifest/" + im) or []:
                        names.add(e["_FILE_NAME"])
                if s.get("statistics"):
                    names.add(s["statistics"])
        return names

    # ---- every root
    def compute(self):
        needed = {}

        def need(paths, root):
            for p in paths:
                needed.setdefault(p, set()).add(root)

        for bname, broot in branches(self.table):
            tbl = pyref.Table(self.table, None if bname == "main" else bname)
            brel = "" if bname == "main" else "branch/branch-%s/" % bname
            snaps = pyref.snapshot_files(broot)
            per_snap = {}
            for sid in sorted(snaps):
                rel = brel + "snapshot/" + snaps[sid]
                s = pyref.read_json(os.path.join(self.table, rel))
                files = self.snapshot_files(tbl, brel, s)
                files.add(rel)
                per_snap[sid] = files
                need(files, "%s snapshot %d" % (bname, sid))
            for n in list_dir(os.path.join(broot, "tag"), "tag-"):
                rel = brel + "tag/" + n
                s = pyref.read_json(os.path.join(self.table, rel))
                files = self.snapshot_files(tbl, brel, s)
                files.add(rel)
                need(files, "%s tag %s" % (bname, n[4:]))
            for cid, n in sorted(pyref.list_versioned(os.path.join(broot, "changelog"), "changelog-").items()):
                rel = brel + "changelog/" + n
                s = pyref.read_json(os.path.join(self.table, rel))
                files = self.changelog_files(tbl, s)
                files.add(rel)
                need(files, "%s changelog %d" % (bname, cid))
            for n in list_dir(os.path.join(broot, "consumer"), "consumer-"):
                c = pyref.read_json(os.path.join(broot, "consumer", n))
                nxt = c.get("nextSnapshot")
                if nxt in per_snap:
                    need(per_snap[nxt], "%s consumer %s" % (bname, n[len("consumer-"):]))
        missing = {p: r for p, r in needed.items() if not self._exists(p)}
        return needed, missing


# ---- what orphan cleaning must leave (Java's OrphanFilesClean rules)
#
# Files in "Paimon folders" are candidates: the direct children of
# manifest/, index/, statistics/, of every bucket directory and of every
# partition directory (but `_SUCCESS`), and of each branch's snapshot/ and
# changelog/ (but snapshot-N / changelog-N and the EARLIEST/LATEST hints).
# Anything else (schema/, tag/, consumer/, the table root, directories that
# are not Paimon's, what lies behind a symlink) is never touched. With a
# cut-off after every file, orphan cleaning leaves exactly the needed
# candidates, and no empty partition, bucket or junk directory.

META_KEEP = {"EARLIEST", "LATEST"}


def _is_part_dir(name, key):
    return name.startswith(key + "=")


def _is_bucket_dir(name):
    return name == "bucket-postpone" or (name.startswith("bucket-") and name[7:].isdigit())


def paimon_folders(table, partition_keys):
    """[(relative dir, kind)] of the folders whose direct files are orphan
    candidates: kind is "fixed", "meta" (snapshot/changelog), "part" or
    "bucket". Symlinks are not followed."""
    out = [("manifest", "fixed"), ("index", "fixed"), ("statistics", "fixed")]
    for bname, broot in branches(table):
        brel = "" if bname == "main" else "branch/branch-%s/" % bname
        out += [(brel + "snapshot", "meta"), (brel + "changelog", "meta")]

    def walk(rel, level):
        full = os.path.join(table, rel) if rel else table
        try:
            names = sorted(os.listdir(full))
        except (FileNotFoundError, NotADirectoryError):
            return
        for n in names:
            p = os.path.join(full, n)
            if os.path.islink(p) or not os.path.isdir(p):
                continue
            r = (rel + "/" + n) if rel else n
            if level == len(partition_keys) and _is_bucket_dir(n):
                out.append((r, "bucket"))
            elif level < len(partition_keys) and _is_part_dir(n, partition_keys[level]):
                out.append((r, "part"))
                walk(r, level + 1)
    walk("", 0)
    return out


def orphan_leftovers(table, partition_keys, needed, reachable=frozenset()):
    """Files orphan cleaning (cut-off after every file) must have removed
    but did not: candidates (see above) that nothing needs and whose name
    no snapshot, tag or changelog reaches (Oracle.reachable_names: Java
    matches by name)."""
    left = []
    for rel, kind in paimon_folders(table, partition_keys):
        full = os.path.join(table, rel)
        try:
            names = sorted(os.listdir(full))
        except FileNotFoundError:
            continue
        for n in names:
            p = os.path.join(full, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            if kind == "part" and n == "_SUCCESS":
                continue
            if kind == "meta" and (n in META_KEEP or ((n.startswith("snapshot-") or n.startswith("changelog-"))
                                                      and not n.endswith(".tmp"))):
                continue
            if rel + "/" + n not in needed and n not in reachable:
                left.append(rel + "/" + n)
    return left


def empty_dirs_left(table, partition_keys):
    """Empty directories orphan cleaning must have removed: partition and
    bucket directories, and directories inside a Paimon folder."""
    left = []
    for rel, kind in paimon_folders(table, partition_keys):
        full = os.path.join(table, rel)
        if kind in ("part", "bucket") and os.path.isdir(full) and not os.listdir(full):
            left.append(rel)
        try:
            names = os.listdir(full)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for n in names:
            p = os.path.join(full, n)
            if kind == "part" and (n.startswith(partition_keys[rel.count("/") + 1] + "=")
                                   if rel.count("/") + 1 < len(partition_keys) else _is_bucket_dir(n)):
                continue   # listed itself
            if not os.path.islink(p) and os.path.isdir(p) and not os.listdir(p):
                left.append(rel + "/" + n)
    return sorted(set(left))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: oracle.py TABLE_DIR\n")
        return 2
    try:
        needed, missing = Oracle(argv[1]).compute()
    except pyref.RefError as ex:
        sys.stderr.write("oracle: %s\n" % ex)
        return 2
    json.dump({"needed": {p: sorted(r) for p, r in sorted(needed.items())},
               "missing": [{"path": p, "roots": sorted(r)} for p, r in sorted(missing.items())]},
              sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
