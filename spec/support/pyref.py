#!/usr/bin/python3
"""pyref: an independent reference reader for Apache Paimon table metadata.

Pure Python: stdlib + python3-avro (+ python3-zstandard, which python3-avro
uses for the `zstandard` codec). It shares no code with the C core and is
used by the specs to cross-check it.

Usage (always with Debian's interpreter, which has avro and zstandard):

    /usr/bin/python3 spec/support/pyref.py TABLE_DIR VIEW \
        [--snapshot ID] [--branch NAME] [--tag NAME]

VIEW is one of: snapshots, schemas, options, files, manifests, partitions, rows
(rows: what a batch read returns, merged by key for primary-key tables).
Output: one JSON array on stdout. Errors: a message on stderr, exit 1.

Rules implemented (see docs/paimon-format.md in the shared docs):
  * snapshot ids come from listing snapshot/ (hint files are ignored);
  * the live file set of a snapshot = ADD entries of every manifest of the
    base then delta manifest list whose identifier (partition bytes, bucket,
    level, file name, extra files, embedded index, external path) has no
    DELETE entry (§7.1);
  * _PARTITION BinaryRow bytes are decoded with the partition column types of
    the latest schema (§5) and rendered as Java's toString for the partition
    path (§1.3, partition.legacy-name default true);
  * with --branch NAME, snapshot/, schema/ and tag/ are read from
    branch/branch-NAME/, while manifest/ and data paths stay at the table root.
Integers that may exceed 2^53 (commit_identifier, watermark) are printed as
JSON strings.
"""

import argparse
import datetime
import json
import math
import os
import re
import struct
import sys
import unicodedata
from decimal import Decimal


class RefError(Exception):
    pass


# --------------------------------------------------------------------------
# Directory helpers


def branch_root(table, branch):
    if branch is None or branch == "main":
        return table
    return os.path.join(table, "branch", "branch-" + branch)


_LONG_RE = re.compile(r"^[+-]?[0-9]+$")


def _parse_java_long(s):
    """Long.parseLong for ASCII input; None if it would throw."""
    if not _LONG_RE.match(s):
        return None
    v = int(s)
    if v < -(1 << 63) or v > (1 << 63) - 1:
        return None
    return v


def list_versioned(dirpath, prefix):
    """FileUtils.listVersionedFiles: {id: file name} for prefix<long>."""
    out = {}
    try:
        names = os.listdir(dirpath)
    except FileNotFoundError:
        return out
    except OSError as ex:
        raise RefError("cannot list %s: %s" % (dirpath, ex))
    for name in names:
        if not name.startswith(prefix):
            continue
        v = _parse_java_long(name[len(prefix):])
        if v is None:
            continue
        if not os.path.isfile(os.path.join(dirpath, name)):
            continue
        out[v] = name
    return out


def read_json(path):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise RefError("file not found: %s" % path)
    except OSError as ex:
        raise RefError("cannot read %s: %s" % (path, ex))
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as ex:
        raise RefError("invalid JSON in %s: %s" % (path, ex))


def snapshot_files(broot):
    return list_versioned(os.path.join(broot, "snapshot"), "snapshot-")


def schema_files(broot):
    return list_versioned(os.path.join(broot, "schema"), "schema-")


def latest_schema(broot):
    ids = schema_files(broot)
    if not ids:
        raise RefError("no schema file in %s" % os.path.join(broot, "schema"))
    sid = max(ids)
    return read_json(os.path.join(broot, "schema", ids[sid]))


# --------------------------------------------------------------------------
# Avro


def read_avro(path):
    """All records of an Avro object container file, as python objects."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise RefError("manifest file not found: %s" % path)
    except OSError as ex:
        raise RefError("cannot read %s: %s" % (path, ex))
    if head[:3] == b"ORC":
        raise RefError("%s is an ORC file: manifest.format=orc is not supported "
                       "(Avro manifests only)" % path)
    if head != b"Obj\x01":
        raise RefError("%s is not an Avro object container file" % path)
    try:
        import avro.datafile
        import avro.io
    except ImportError as ex:
        raise RefError("python3-avro is not importable (%s); run with /usr/bin/python3" % ex)
    try:
        with open(path, "rb") as fh:
            reader = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
            try:
                return [rec for rec in reader if rec is not None]
            finally:
                reader.close()
    except RefError:
        raise
    except Exception as ex:  # avro raises many exception types
        raise RefError("cannot decode Avro file %s: %s: %s" % (path, type(ex).__name__, ex))


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def ts_millis(v):
    """_CREATION_TIME (timestamp-millis) back to the stored integer millis."""
    if v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        return (v - _EPOCH) // datetime.timedelta(milliseconds=1)
    raise RefError("unexpected _CREATION_TIME value %r" % (v,))


# --------------------------------------------------------------------------
# Types


class PType(object):
    def __init__(self, root, precision=None, scale=None, length=None, text=""):
        self.root = root
        self.precision = precision
        self.scale = scale
        self.length = length
        self.text = text

    def __repr__(self):
        return "PType(%s)" % self.text


_TYPE_RE = re.compile(r"^\s*([A-Z_ ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*"
                      r"(WITH LOCAL TIME ZONE)?\s*(NOT NULL|NULL)?\s*$")


def parse_type(t):
    """Parse an atomic schema type string; composite types -> root only."""
    if isinstance(t, dict):
        root = str(t.get("type", "")).upper().replace(" NOT NULL", "").strip()
        return PType(root, text=json.dumps(t))
    if not isinstance(t, str):
        raise RefError("bad type %r" % (t,))
    m = _TYPE_RE.match(t.upper())
    if not m:
        raise RefError("cannot parse type %r" % t)
    name, a, b, ltz = m.group(1).strip(), m.group(2), m.group(3), m.group(4)
    a = int(a) if a is not None else None
    b = int(b) if b is not None else None
    if name in ("INT", "INTEGER"):
        return PType("INT", text=t)
    if name in ("BOOLEAN", "TINYINT", "SMALLINT", "BIGINT", "FLOAT", "DOUBLE", "DATE"):
        return PType(name, text=t)
    if name == "DOUBLE PRECISION":
        return PType("DOUBLE", text=t)
    if name in ("DECIMAL", "NUMERIC", "DEC"):
        return PType("DECIMAL", precision=a if a is not None else 10,
                     scale=b if b is not None else 0, text=t)
    if name == "STRING":
        return PType("VARCHAR", length=2147483647, text=t)
    if name in ("VARCHAR", "CHAR"):
        return PType(name, length=a if a is not None else 1, text=t)
    if name == "BYTES":
        return PType("VARBINARY", length=2147483647, text=t)
    if name in ("VARBINARY", "BINARY"):
        return PType(name, length=a if a is not None else 1, text=t)
    if name == "TIME":
        return PType("TIME", precision=a if a is not None else 0, text=t)
    if name == "TIMESTAMP":
        return PType("TIMESTAMP_LTZ" if ltz else "TIMESTAMP",
                     precision=a if a is not None else 6, text=t)
    if name == "TIMESTAMP_LTZ":
        return PType("TIMESTAMP_LTZ", precision=a if a is not None else 6, text=t)
    return PType(name, text=t)


# --------------------------------------------------------------------------
# BinaryRow (§5)


class Timestamp(object):
    __slots__ = ("millis", "nanos_of_milli")

    def __init__(self, millis, nanos_of_milli):
        self.millis = millis
        self.nanos_of_milli = nanos_of_milli


class DecimalValue(object):
    __slots__ = ("unscaled", "scale")

    def __init__(self, unscaled, scale):
        self.unscaled = unscaled
        self.scale = scale


def decode_binrow(ser, types, what="row"):
    """Decode serialized BinaryRow bytes ([arity BE][row]) -> list of values."""
    if len(ser) < 4:
        raise RefError("%s: BinaryRow shorter than 4 bytes" % what)
    arity = struct.unpack(">i", ser[:4])[0]
    if arity != len(types):
        raise RefError("%s: BinaryRow arity %d, expected %d" % (what, arity, len(types)))
    row = ser[4:]
    w = ((arity + 63 + 8) // 64) * 8
    if len(row) < w + 8 * arity:
        raise RefError("%s: BinaryRow too short (%d bytes, arity %d)" % (what, len(row), arity))
    out = []
    for i, t in enumerate(types):
        bit = i + 8
        if row[bit >> 3] & (1 << (bit & 7)):
            out.append(None)
            continue
        off = w + 8 * i
        slot = row[off:off + 8]
        r = t.root
        if r == "BOOLEAN":
            out.append(slot[0] != 0)
        elif r == "TINYINT":
            out.append(struct.unpack("<b", slot[:1])[0])
        elif r == "SMALLINT":
            out.append(struct.unpack("<h", slot[:2])[0])
        elif r in ("INT", "DATE", "TIME"):
            out.append(struct.unpack("<i", slot[:4])[0])
        elif r == "BIGINT":
            out.append(struct.unpack("<q", slot)[0])
        elif r == "FLOAT":
            out.append(struct.unpack("<f", slot[:4])[0])
        elif r == "DOUBLE":
            out.append(struct.unpack("<d", slot)[0])
        elif r in ("VARCHAR", "CHAR", "VARBINARY", "BINARY"):
            if slot[7] & 0x80:
                n = slot[7] & 0x7F
                if n > 7:
                    raise RefError("%s: field %d: inline length %d > 7" % (what, i, n))
                data = bytes(slot[:n])
            else:
                v = struct.unpack("<Q", slot)[0]
                o, n = v >> 32, v & 0xFFFFFFFF
                if o + n > len(row):
                    raise RefError("%s: field %d: var data [%d,+%d) beyond row of %d bytes"
                                   % (what, i, o, n, len(row)))
                data = bytes(row[o:o + n])
            if r in ("VARCHAR", "CHAR"):
                try:
                    out.append(data.decode("utf-8"))
                except UnicodeDecodeError:
                    raise RefError("%s: field %d: invalid UTF-8" % (what, i))
            else:
                out.append(data)
        elif r == "DECIMAL":
            if t.precision <= 18:
                out.append(DecimalValue(struct.unpack("<q", slot)[0], t.scale))
            else:
                v = struct.unpack("<Q", slot)[0]
                o, n = v >> 32, v & 0xFFFFFFFF
                if o + n > len(row) or n == 0:
                    raise RefError("%s: field %d: bad decimal var data" % (what, i))
                out.append(DecimalValue(int.from_bytes(row[o:o + n], "big", signed=True), t.scale))
        elif r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            if t.precision <= 3:
                out.append(Timestamp(struct.unpack("<q", slot)[0], 0))
            else:
                v = struct.unpack("<Q", slot)[0]
                o, nanos = v >> 32, v & 0xFFFFFFFF
                if o + 8 > len(row):
                    raise RefError("%s: field %d: timestamp var data beyond row" % (what, i))
                millis = struct.unpack("<q", row[o:o + 8])[0]
                out.append(Timestamp(millis, nanos))
        else:
            raise RefError("%s: field %d: unsupported partition type %s" % (what, i, t.text))
    return out


# --------------------------------------------------------------------------
# Java-compatible rendering


def decimal_plain(d):
    """BigDecimal.toPlainString."""
    u, s = d.unscaled, d.scale
    if s <= 0:
        return str(u * (10 ** (-s)))
    sign = "-" if u < 0 else ""
    digits = str(abs(u)).rjust(s + 1, "0")
    return sign + digits[:-s] + "." + digits[-s:]


def _civil_from_days(z):
    """Howard Hinnant's algorithm: days since 1970-01-01 -> (y, m, d)."""
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def java_local_date(days):
    """LocalDate.toString."""
    y, m, d = _civil_from_days(days)
    if abs(y) < 1000:
        ys = ("-" if y < 0 else "") + str(abs(y)).rjust(4, "0")
    elif y > 9999:
        ys = "+" + str(y)
    else:
        ys = str(y)
    return "%s-%02d-%02d" % (ys, m, d)


def _ts_parts(ts):
    days, ms_of_day = divmod(ts.millis, 86400000)
    nano = (ms_of_day % 1000) * 1000000 + ts.nanos_of_milli
    sec_of_day = ms_of_day // 1000
    return days, sec_of_day // 3600, (sec_of_day // 60) % 60, sec_of_day % 60, nano


def java_local_datetime(ts):
    """LocalDateTime.toString of a Paimon Timestamp (wall clock as UTC)."""
    days, hh, mm, ss, nano = _ts_parts(ts)
    s = "%sT%02d:%02d" % (java_local_date(days), hh, mm)
    if ss > 0 or nano > 0:
        s += ":%02d" % ss
        if nano > 0:
            if nano % 1000000 == 0:
                s += ".%03d" % (nano // 1000000)
            elif nano % 1000 == 0:
                s += ".%06d" % (nano // 1000)
            else:
                s += ".%09d" % nano
    return s


def cast_timestamp_string(ts, precision):
    """CAST(TIMESTAMP(p) AS STRING), best effort (partition.legacy-name=false)."""
    days, hh, mm, ss, nano = _ts_parts(ts)
    s = "%s %02d:%02d:%02d" % (java_local_date(days), hh, mm, ss)
    frac = "%09d" % nano
    while len(frac) > precision and frac.endswith("0"):
        frac = frac[:-1]
    if frac:
        s += "." + frac
    return s


def _shortest_digits(v, is_float32):
    """(sign, digit string, decimal exponent e) with v = d.ddd * 10^e."""
    if is_float32:
        target = struct.unpack("<f", struct.pack("<f", v))[0]
        text = None
        for p in range(1, 10):
            cand = "%.*e" % (p - 1, target)
            try:
                back = struct.unpack("<f", struct.pack("<f", float(cand)))[0]
            except OverflowError:
                continue
            if back == target:
                text = cand
                break
        if text is None:
            text = "%.8e" % target
    else:
        text = repr(v)
    sign, digits, exp = Decimal(text).as_tuple()
    if len(digits) == 1:
        # JDK 19+ rule: when the shortest decimal has one digit, pick the
        # 2-digit decimal closest to v (e.g. Float.MIN_VALUE -> 1.4E-45).
        two = "%.1e" % (target if is_float32 else v)
        sign, digits, exp = Decimal(two).as_tuple()
    ds = "".join(str(x) for x in digits)   # no leading zeros for v != 0
    e = exp + len(ds) - 1
    ds = ds.rstrip("0") or "0"
    return sign, ds, e


def java_double_string(v, is_float32=False):
    """Double.toString / Float.toString (shortest-digits, JDK 19+ style)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0.0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    sign, ds, e = _shortest_digits(v, is_float32)
    sgn = "-" if sign else ""
    if -3 <= e < 7:
        if e >= 0:
            ip = ds[:e + 1].ljust(e + 1, "0")
            fp = ds[e + 1:] or "0"
        else:
            ip = "0"
            fp = "0" * (-e - 1) + ds
        return sgn + ip + "." + fp
    return sgn + ds[0] + "." + (ds[1:] or "0") + "E" + str(e)


def render_value(t, v, legacy=True):
    """Java toString of the internal value (legacy) or CAST AS STRING."""
    if v is None:
        return None
    r = t.root
    if r == "BOOLEAN":
        return "true" if v else "false"
    if r in ("TINYINT", "SMALLINT", "INT", "BIGINT", "TIME"):
        return str(v)
    if r == "DATE":
        return str(v) if legacy else java_local_date(v)
    if r == "FLOAT":
        return java_double_string(v, True)
    if r == "DOUBLE":
        return java_double_string(v, False)
    if r == "DECIMAL":
        return decimal_plain(v)
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return java_local_datetime(v) if legacy else cast_timestamp_string(v, t.precision)
    if r in ("VARCHAR", "CHAR"):
        return v
    if r in ("VARBINARY", "BINARY"):
        return v.hex()
    raise RefError("cannot render type %s" % t.text)


def json_value(t, v):
    if v is None:
        return None
    r = t.root
    if r == "FLOAT" or r == "DOUBLE":
        if v != v or v in (float("inf"), float("-inf")):
            return java_double_string(v)
        if r == "FLOAT":
            # the shortest decimal that identifies the float32 (as Jackson
            # prints a Java float), e.g. 0.1 rather than 0.10000000149011612
            return float(java_double_string(v, True))
        return v
    if r == "DECIMAL":
        return decimal_plain(v)
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return java_local_datetime(v)
    if r in ("VARBINARY", "BINARY"):
        return v.hex()
    return v  # bool, ints (DATE as day count), strings


_ESCAPE = set(range(0x00, 0x20)) | set(ord(c) for c in "\"#%'*/:=?\\{}[]^") | {0x7F}


def escape_path_name(s):
    out = []
    for ch in s:
        o = ord(ch)
        if o in _ESCAPE:
            out.append("%%%02X" % o)
        else:
            out.append(ch)
    return "".join(out)


def _java_is_whitespace(ch):
    o = ord(ch)
    if o in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F):
        return True
    if o in (0x00A0, 0x2007, 0x202F):
        return False
    return unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def partition_path(keys, types, values, default_name, legacy):
    parts = []
    for k, t, v in zip(keys, types, values):
        s = render_value(t, v, legacy)
        if s is None or s == "" or all(_java_is_whitespace(c) for c in s):
            s = default_name
        parts.append(escape_path_name(k) + "=" + escape_path_name(s) + "/")
    return "".join(parts)


# --------------------------------------------------------------------------
# Table context


def _opt_bool(v, default):
    if v is None:
        return default
    return str(v).strip().lower() == "true"


class Table(object):
    def __init__(self, table_dir, branch=None):
        self.dir = table_dir.rstrip("/") or "/"
        if not os.path.isdir(self.dir):
            raise RefError("not a directory: %s" % table_dir)
        self.branch = branch
        self.broot = branch_root(self.dir, branch)
        if branch not in (None, "main") and not os.path.isdir(self.broot):
            raise RefError("branch %s does not exist (%s)" % (branch, self.broot))
        self._schema = None

    @property
    def schema(self):
        if self._schema is None:
            self._schema = latest_schema(self.broot)
        return self._schema

    @property
    def options(self):
        return self.schema.get("options") or {}

    def check_manifest_format(self):
        fmt = self.options.get("manifest.format")
        if fmt is not None and fmt.strip().lower() != "avro":
            raise RefError("table %s has manifest.format=%s: only Avro manifests are supported"
                           % (self.dir, fmt))

    def partition_info(self):
        sch = self.schema
        keys = list(sch.get("partitionKeys") or [])
        fields = {f["name"]: f for f in (sch.get("fields") or [])}
        types = []
        for k in keys:
            if k not in fields:
                raise RefError("partition key %s is not a column of the latest schema" % k)
            types.append(parse_type(fields[k]["type"]))
        opts = self.options
        default_name = opts.get("partition.default-name", "__DEFAULT_PARTITION__")
        legacy = _opt_bool(opts.get("partition.legacy-name"), True)
        return keys, types, default_name, legacy

    def resolve_snapshot(self, snapshot_id=None, tag=None):
        """Snapshot JSON for --tag / --snapshot / latest (None if the table
        has no snapshot and none was asked for)."""
        if tag is not None:
            path = os.path.join(self.broot, "tag", "tag-" + tag)
            if not os.path.isfile(path):
                raise RefError("tag %s not found (%s)" % (tag, path))
            return read_json(path)
        files = snapshot_files(self.broot)
        if snapshot_id is not None:
            if snapshot_id not in files:
                raise RefError("snapshot %d not found in %s"
                               % (snapshot_id, os.path.join(self.broot, "snapshot")))
            return read_json(os.path.join(self.broot, "snapshot", files[snapshot_id]))
        if not files:
            return None
        return read_json(os.path.join(self.broot, "snapshot", files[max(files)]))

    def manifest_path(self, name):
        return os.path.join(self.dir, "manifest", name)

    def manifest_metas(self, snap):
        self.check_manifest_format()
        out = []
        for key in ("baseManifestList", "deltaManifestList"):
            name = snap.get(key)
            if name is None:
                raise RefError("snapshot %s has no %s" % (snap.get("id"), key))
            out.extend(read_avro(self.manifest_path(name)))
        return out

    def live_files(self, snap):
        metas = self.manifest_metas(snap)
        entries = []
        for m in metas:
            entries.extend(read_avro(self.manifest_path(m["_FILE_NAME"])))
        deleted = set()
        adds = []
        for e in entries:
            kind = e.get("_KIND")
            f = e["_FILE"]
            ident = (bytes(e["_PARTITION"]), e["_BUCKET"], f.get("_LEVEL"), f["_FILE_NAME"],
                     tuple(f.get("_EXTRA_FILES") or ()),
                     None if f.get("_EMBEDDED_FILE_INDEX") is None else bytes(f["_EMBEDDED_FILE_INDEX"]),
                     f.get("_EXTERNAL_PATH"))
            if kind == 0:
                adds.append((ident, e))
            elif kind == 1:
                deleted.add(ident)
            else:
                raise RefError("manifest entry with unknown _KIND %r" % (kind,))
        return [e for ident, e in adds if ident not in deleted]


# --------------------------------------------------------------------------
# Value stats over the latest schema (Java's SimpleStatsEvolution): by field
# id through the schema the file was written under


def stats_value(t, v):
    """A stats value as the read side shows it (CAST AS STRING for the rest)."""
    if v is None:
        return None
    if t.root in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "VARCHAR", "CHAR"):
        return v
    if t.root in ("FLOAT", "DOUBLE"):
        return json_value(t, v)
    return render_value(t, v, legacy=False)


_STATS_ROOTS = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME", "VARCHAR",
                "CHAR", "VARBINARY", "BINARY", "DECIMAL", "TIMESTAMP", "TIMESTAMP_LTZ")


def _norm_type(t):
    return json.dumps(t, sort_keys=True).replace(" NOT NULL", "")


def file_stats(tbl, f, cache):
    sid = f.get("_SCHEMA_ID")
    if sid not in cache:
        cache[sid] = read_json(os.path.join(tbl.broot, "schema", "schema-%d" % sid))
    fs = cache[sid]
    ffields = fs.get("fields") or []
    cols = f.get("_VALUE_STATS_COLS")
    if cols is None:
        cols = [x["name"] for x in ffields]
    by_name = {x["name"]: x for x in ffields}
    cfields = [by_name[c] for c in cols]
    stats = f.get("_VALUE_STATS") or {}
    types = [parse_type(x["type"]) for x in cfields]

    def decode(key):
        ser = stats.get(key)
        if ser is None or len(cols) == 0 or len(ser) < 4 or struct.unpack(">i", bytes(ser[:4]))[0] != len(cols):
            return [None] * len(cols)
        try:
            return decode_binrow(bytes(ser), types, "%s of %s" % (key, f["_FILE_NAME"]))
        except RefError:
            if any(t.root not in _STATS_ROOTS for t in types):
                return [None] * len(cols)  # a type this reader does not decode: unknown
            raise

    mins, maxs = decode("_MIN_VALUES"), decode("_MAX_VALUES")
    nulls = stats.get("_NULL_COUNTS") or []
    out_n, out_min, out_max = {}, {}, {}
    for tf in tbl.schema.get("fields") or []:
        name = tf["name"]
        out_n[name] = out_min[name] = out_max[name] = None
        k = next((i for i, x in enumerate(cfields) if x["id"] == tf["id"]), None)
        if k is None:
            continue
        if k < len(nulls):
            out_n[name] = nulls[k]
        if isinstance(tf["type"], dict) or isinstance(cfields[k]["type"], dict):
            continue
        if _norm_type(tf["type"]) != _norm_type(cfields[k]["type"]):
            continue  # a changed type: not compared here
        out_min[name] = stats_value(types[k], mins[k])
        out_max[name] = stats_value(types[k], maxs[k])
    return out_n, out_min, out_max


# --------------------------------------------------------------------------
# Views


def _str_or_none(v):
    return None if v is None else str(v)


def view_snapshots(tbl, args):
    out = []
    files = snapshot_files(tbl.broot)
    for sid in sorted(files):
        s = read_json(os.path.join(tbl.broot, "snapshot", files[sid]))
        out.append({
            "snapshot_id": s.get("id"),
            "schema_id": s.get("schemaId"),
            "commit_user": s.get("commitUser"),
            "commit_identifier": _str_or_none(s.get("commitIdentifier")),
            "commit_kind": s.get("commitKind"),
            "commit_time": s.get("timeMillis"),
            "base_manifest_list": s.get("baseManifestList"),
            "delta_manifest_list": s.get("deltaManifestList"),
            "changelog_manifest_list": s.get("changelogManifestList"),
            "total_record_count": s.get("totalRecordCount"),
            "delta_record_count": s.get("deltaRecordCount"),
            "changelog_record_count": s.get("changelogRecordCount"),
            "watermark": _str_or_none(s.get("watermark")),
        })
    return out


def view_schemas(tbl, args):
    out = []
    files = schema_files(tbl.broot)
    for sid in sorted(files):
        s = read_json(os.path.join(tbl.broot, "schema", files[sid]))
        out.append({
            "schema_id": s.get("id"),
            "fields": [{"id": f.get("id"), "name": f.get("name"), "type": f.get("type")}
                       for f in (s.get("fields") or [])],
            "partition_keys": s.get("partitionKeys") or [],
            "primary_keys": s.get("primaryKeys") or [],
            "options": s.get("options") or {},
            "comment": s.get("comment"),
            "update_time": s.get("timeMillis", 0),
        })
    return out


def view_options(tbl, args):
    return [{"key": k, "value": v} for k, v in tbl.options.items()]


def _snapshot_for(tbl, args):
    return tbl.resolve_snapshot(args.snapshot, args.tag)


def _file_rows(tbl, snap):
    keys, types, default_name, legacy = tbl.partition_info()
    pdir = tbl.options.get("data-file.path-directory")
    rows = []
    schemas = {}
    for e in tbl.live_files(snap):
        f = e["_FILE"]
        name = f["_FILE_NAME"]
        nulls, mins, maxs = file_stats(tbl, f, schemas)
        vals = decode_binrow(bytes(e["_PARTITION"]), types, "_PARTITION of %s" % name)
        ppath = partition_path(keys, types, vals, default_name, legacy)
        bucket = e["_BUCKET"]
        bdir = "bucket-postpone" if bucket == -2 else "bucket-%d" % bucket
        ext = f.get("_EXTERNAL_PATH")
        if ext is not None:
            path = ext
        else:
            path = ppath + bdir + "/" + name
            if pdir:
                path = pdir.strip("/") + "/" + path
        rows.append({
            "partition": {k: json_value(t, v) for k, t, v in zip(keys, types, vals)},
            "bucket": bucket,
            "file_path": path,
            "file_name": name,
            "file_format": name.rsplit(".", 1)[1] if "." in name else "",
            "schema_id": f.get("_SCHEMA_ID"),
            "level": f.get("_LEVEL"),
            "record_count": f.get("_ROW_COUNT"),
            "file_size_in_bytes": f.get("_FILE_SIZE"),
            "null_value_counts": nulls,
            "min_value_stats": mins,
            "max_value_stats": maxs,
            "min_sequence_number": f.get("_MIN_SEQUENCE_NUMBER"),
            "max_sequence_number": f.get("_MAX_SEQUENCE_NUMBER"),
            "creation_time": ts_millis(f.get("_CREATION_TIME")),
            "_ppath": ppath,
        })
    rows.sort(key=lambda r: r["file_path"])
    return rows


def view_files(tbl, args):
    snap = _snapshot_for(tbl, args)
    if snap is None:
        tbl.check_manifest_format()
        return []
    rows = _file_rows(tbl, snap)
    for r in rows:
        del r["_ppath"]
    return rows


def view_manifests(tbl, args):
    snap = _snapshot_for(tbl, args)
    if snap is None:
        tbl.check_manifest_format()
        return []
    return [{
        "file_name": m["_FILE_NAME"],
        "file_size": m["_FILE_SIZE"],
        "num_added_files": m["_NUM_ADDED_FILES"],
        "num_deleted_files": m["_NUM_DELETED_FILES"],
        "schema_id": m["_SCHEMA_ID"],
    } for m in tbl.manifest_metas(snap)]


def view_partitions(tbl, args):
    snap = _snapshot_for(tbl, args)
    if snap is None:
        tbl.check_manifest_format()
        return []
    groups = {}
    for r in _file_rows(tbl, snap):
        g = groups.get(r["_ppath"])
        if g is None:
            g = groups[r["_ppath"]] = {
                "partition": r["partition"], "record_count": 0, "file_size_in_bytes": 0,
                "file_count": 0, "last_update_time": None}
        g["record_count"] += r["record_count"]
        g["file_size_in_bytes"] += r["file_size_in_bytes"]
        g["file_count"] += 1
        ct = r["creation_time"]
        if ct is not None and (g["last_update_time"] is None or ct > g["last_update_time"]):
            g["last_update_time"] = ct
    return [groups[k] for k in sorted(groups)]


# --------------------------------------------------------------------------
# Rows (read.lua's view): the rows a batch read of Java Paimon returns
#
# Primary-key tables as Java's batch read (AbstractBatchTableScan,
# MergeTreeSplitGenerator, the raw/merge split reads, DeduplicateMergeFunction,
# FirstRowMergeFunction, DropDeleteReader): per (partition, bucket); level-0
# files skipped when deletion vectors are on (unless
# deletion-vectors.merge-on-read) or the engine is first-row; a bucket whose
# files are all above level 0 with _DELETE_ROW_COUNT 0 (and deletion vectors,
# first-row or one level) is read file by file, otherwise merged by the
# _KEY_ columns: deduplicate keeps the largest (_SEQUENCE_NUMBER, is-add),
# first-row the smallest add; a winning -U/-D drops the key. Deletion
# vectors (index manifest DELETION_VECTORS ranges) remove row positions
# before either. Values are printed as read.lua prints them.

DV_MAGIC = 1581511376


def roaring_positions(buf, what):
    """Positions of a portable-format 32-bit RoaringBitmap."""
    def u16(o):
        return struct.unpack_from("<H", buf, o)[0]

    def u32(o):
        return struct.unpack_from("<I", buf, o)[0]
    try:
        cookie = u32(0)
        pos = 4
        if cookie & 0xFFFF == 12347:
            n = (cookie >> 16) + 1
            runs = buf[pos:pos + (n + 7) // 8]
            pos += (n + 7) // 8
            has_offsets = n >= 4
        elif cookie == 12346:
            n = u32(pos)
            pos += 4
            runs = b""
            has_offsets = True
        else:
            raise RefError("%s: not a RoaringBitmap (cookie %d)" % (what, cookie))
        heads = []
        for i in range(n):
            heads.append((u16(pos), u16(pos + 2) + 1))
            pos += 4
        if has_offsets:
            pos += 4 * n
        out = []
        for i, (key, card) in enumerate(heads):
            base = key << 16
            if runs and (runs[i // 8] >> (i % 8)) & 1:
                nruns = u16(pos)
                pos += 2
                for _ in range(nruns):
                    start, ln = u16(pos), u16(pos + 2)
                    pos += 4
                    out.extend(base + v for v in range(start, start + ln + 1))
            elif card > 4096:
                words = struct.unpack_from("<1024Q", buf, pos)
                pos += 8192
                for w, word in enumerate(words):
                    for b in range(64):
                        if (word >> b) & 1:
                            out.append(base + w * 64 + b)
            else:
                out.extend(base + v for v in struct.unpack_from("<%dH" % card, buf, pos))
                pos += 2 * card
        return set(out)
    except struct.error:
        raise RefError("%s: truncated RoaringBitmap" % what)


def read_dv(path, offset, length, what):
    import zlib
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as ex:
        raise RefError("cannot read deletion vector file %s: %s" % (path, ex))
    if offset + 4 + length + 4 > len(data):
        raise RefError("%s: deletion vector at %d+%d beyond the file" % (what, offset, length))
    size, magic = struct.unpack_from(">iI", data, offset)
    if size != length:
        raise RefError("%s: deletion vector size %d, the index manifest says %d" % (what, size, length))
    if magic != DV_MAGIC:
        raise RefError("%s: deletion vector magic %d (64-bit bitmaps are not read)" % (what, magic))
    body = data[offset + 4:offset + 4 + size]
    crc = struct.unpack_from(">I", data, offset + 4 + size)[0]
    if zlib.crc32(body) & 0xFFFFFFFF != crc:
        raise RefError("%s: deletion vector checksum mismatch" % what)
    return roaring_positions(body[4:], what)


def _days_text(d):
    if isinstance(d, datetime.date):
        return d.isoformat()
    return java_local_date(d)


def read_value(ftype, v):
    """A data-file value as read.lua prints it (after json decoding)."""
    import base64
    if v is None:
        return None
    if isinstance(ftype, dict):
        kind = str(ftype.get("type", "")).upper().split()[0]
        if kind == "ROW":
            return {f["name"]: read_value(f["type"], v.get(f["name"])) for f in ftype["fields"]}
        if kind == "ARRAY":
            return [read_value(ftype["element"], x) for x in v]
        if kind in ("MAP", "MULTISET"):
            vt = ftype.get("value", "INT NOT NULL")
            kt = ftype.get("key", ftype.get("element"))
            items = v.items() if isinstance(v, dict) else [(x["key"], x["value"]) for x in v]
            out = {}
            for k, x in items:
                kk = read_value(kt, k)
                out[kk if isinstance(kk, str) else json.dumps(kk)] = read_value(vt, x)
            return out
        raise RefError("cannot print type %s" % json.dumps(ftype))
    t = parse_type(ftype)
    r = t.root
    if r in ("VARBINARY", "BINARY"):
        return base64.b64encode(bytes(v)).decode("ascii")
    if r == "DECIMAL":
        return format(v, "f") if isinstance(v, Decimal) else decimal_plain(v)
    if r == "DATE":
        return _days_text(v)
    if r == "FLOAT":
        return float(java_double_string(v, True)) if v == v else None
    return v


def _index_dvs(tbl, snap):
    """{(partition bytes, bucket, data file name): (index path, offset, length)}"""
    name = snap.get("indexManifest")
    out = {}
    if not name:
        return out
    deleted = set()
    adds = []
    for ie in read_avro(tbl.manifest_path(name)):
        if ie.get("_INDEX_TYPE") != "DELETION_VECTORS":
            continue
        ident = (bytes(ie["_PARTITION"]), ie["_BUCKET"], ie["_FILE_NAME"])
        if ie.get("_KIND") == 1:
            deleted.add(ident)
        else:
            adds.append((ident, ie))
    for ident, ie in adds:
        if ident in deleted:
            continue
        path = ie.get("_EXTERNAL_PATH") or os.path.join(tbl.dir, "index", ie["_FILE_NAME"])
        for rng in ie.get("_DELETIONS_VECTORS_RANGES") or []:
            out[(ident[0], ident[1], rng["f0"])] = (path, rng["f1"], rng["f2"])
    return out


def view_rows(tbl, args):
    snap = _snapshot_for(tbl, args)
    if snap is None:
        return []
    sch = tbl.schema
    opts = tbl.options
    fields = sch.get("fields") or []
    pk = list(sch.get("primaryKeys") or [])
    parts = set(sch.get("partitionKeys") or [])
    keys = ["_KEY_" + k for k in pk if k not in parts]
    dv = _opt_bool(opts.get("deletion-vectors.enabled"), False)
    # Java reads deletion vectors only when the option is on (SnapshotReaderImpl)
    dvs = _index_dvs(tbl, snap) if dv else {}
    engine = (opts.get("merge-engine") or "deduplicate").strip().lower()
    if pk and engine not in ("deduplicate", "first-row"):
        raise RefError("merge-engine=%s is not read" % engine)
    if pk and opts.get("sequence.field"):
        raise RefError("sequence.field is not read")
    ignore_delete = any(_opt_bool(opts.get(k), False) for k in (
        "ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
        "partial-update.ignore-delete"))
    skip0 = pk and ((not _opt_bool(opts.get("deletion-vectors.merge-on-read"), False))
                    if dv else engine == "first-row")
    pdir = tbl.options.get("data-file.path-directory")
    pkeys, ptypes, default_name, legacy = tbl.partition_info()

    def rows_of(e):
        f = e["_FILE"]
        name = f["_FILE_NAME"]
        if f.get("_EXTERNAL_PATH"):
            path = f["_EXTERNAL_PATH"]
        else:
            vals = decode_binrow(bytes(e["_PARTITION"]), ptypes, "_PARTITION of %s" % name)
            rel = partition_path(pkeys, ptypes, vals, default_name, legacy) + "bucket-%d/" % e["_BUCKET"] + name
            path = os.path.join(tbl.dir, pdir.strip("/"), rel) if pdir else os.path.join(tbl.dir, rel)
        recs = read_avro(path)
        gone = set()
        d = dvs.get((bytes(e["_PARTITION"]), e["_BUCKET"], name))
        if d is not None:
            gone = read_dv(d[0], d[1], d[2], name)
        return [r for i, r in enumerate(recs) if i not in gone]

    def out_row(r):
        return {f["name"]: read_value(f["type"], r.get(f["name"])) for f in fields}

    groups = {}
    for e in tbl.live_files(snap):
        if pk and e["_BUCKET"] == -2:
            continue
        if skip0 and e["_FILE"].get("_LEVEL") == 0:
            continue
        groups.setdefault((bytes(e["_PARTITION"]), e["_BUCKET"]), []).append(e)
    out = []
    for g in groups.values():
        if not pk:
            for e in g:
                out.extend(out_row(r) for r in rows_of(e))
            continue
        files = [e["_FILE"] for e in g]
        raw = (all(f.get("_LEVEL") != 0 and f.get("_DELETE_ROW_COUNT") == 0 for f in files)
               and (dv or engine == "first-row" or len(set(f.get("_LEVEL") for f in files)) == 1))
        if raw:
            for e in g:
                out.extend(out_row(r) for r in rows_of(e))
            continue
        best = {}
        order = 0
        for e in g:
            for r in rows_of(e):
                order += 1
                missing = [k for k in keys if k not in r]
                if missing or "_SEQUENCE_NUMBER" not in r or "_VALUE_KIND" not in r:
                    raise RefError("%s: not a key-value file" % e["_FILE"]["_FILE_NAME"])
                key = tuple(r[k] for k in keys)
                is_add = r["_VALUE_KIND"] in (0, 2)
                if not is_add:
                    if ignore_delete:
                        continue
                    if engine == "first-row":
                        raise RefError("first-row table with a retract row")
                rank = (r["_SEQUENCE_NUMBER"], is_add, order)
                cur = best.get(key)
                if engine == "first-row":
                    if cur is None or (rank[0], rank[1]) < (cur[0][0], cur[0][1]):
                        best[key] = (rank, r)
                elif cur is None or rank > cur[0]:
                    best[key] = (rank, r)
        for rank, r in best.values():
            if rank[1]:
                out.append(out_row(r))
    return out


VIEWS = {
    "snapshots": view_snapshots,
    "schemas": view_schemas,
    "options": view_options,
    "files": view_files,
    "manifests": view_manifests,
    "partitions": view_partitions,
    "rows": view_rows,
}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="pyref.py", description=__doc__.split("\n")[0])
    ap.add_argument("table_dir")
    ap.add_argument("view", choices=sorted(VIEWS))
    ap.add_argument("--snapshot", type=int, default=None)
    ap.add_argument("--branch", default=None)
    ap.add_argument("--tag", default=None)
    args = ap.parse_args(argv)
    if args.snapshot is not None and args.tag is not None:
        sys.stderr.write("pyref: --snapshot and --tag are mutually exclusive\n")
        return 1
    try:
        tbl = Table(args.table_dir, args.branch)
        result = VIEWS[args.view](tbl, args)
    except RefError as ex:
        sys.stderr.write("pyref: %s\n" % ex)
        return 1
    try:
        json.dump(result, sys.stdout, indent=1, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
