"""Relocating the real tables of ``../shared/external-fixtures`` so that any engine can read them.

Those tables were committed with their authors' absolute paths (``hdfs://localhost:20500/
test-warehouse/...``, ``/home/iceberg/warehouse/...``, repository-relative ``data/persistent/...``).
:func:`relocate` writes a copy of a table's metadata (the metadata JSON, manifest lists and
manifests, and position delete files, whose rows hold data file paths) under a temporary
directory with every path rewritten to where the file lies in the fixtures folder; data files are
not copied. The copy is plain Iceberg, so frazil, PyIceberg and DuckDB all read the same thing.
A rewritten manifest's ``manifest_length`` moves by what the rewrite changed (as Java's
``RewriteTablePath`` sets it), so a length that was stale in the original stays as stale.

The rewrite uses fastavro and pyarrow, not frazil, so a frazil bug cannot hide in the setup.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

# The reserved field id of a position delete file's ``file_path`` column (spec, "Position
# Delete Files"): its bounds in a manifest are paths too.
_FILE_PATH_ID = 2147483546
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*")


def _strip_scheme(path: str) -> str:
    if path.startswith("file:"):
        path = path[len("file:") :]
        if path.startswith("///"):  # file:///abs/path
            return path[2:]
        return path.lstrip("/") if path.startswith("//") else path  # file://relative/path
    return _SCHEME.sub("", path)


@dataclass
class Relocated:
    """A relocated copy: the metadata file to open, and the paths that could not be mapped."""

    metadata_file: Path
    unmapped: list[str]


class _Mapper:
    def __init__(self, location: str, table_dir: Path, root: Path, out: Path) -> None:
        self.location = _strip_scheme(location).rstrip("/")
        self.table_dir = table_dir
        self.root = root
        self.out = out
        self.unmapped: list[str] = []

    def source(self, path: str) -> str:
        """Where the file named ``path`` lies in the fixtures folder."""
        bare = _strip_scheme(path)
        if self.location and (bare == self.location or bare.startswith(self.location + "/")):
            return str(self.table_dir) + bare[len(self.location) :]
        # Impala's tables name each other's files under its warehouse.
        if "/test-warehouse/" in bare or bare.startswith("/test-warehouse/"):
            rest = bare.split("/test-warehouse/", 1)[1]
            return str(self.root / "apache__impala" / "testdata" / "data" / rest)
        if not bare.startswith("/"):
            # Repository-relative (DuckDB's ``data/persistent/...``) or table-parent-relative.
            repo = self.root / self.table_dir.relative_to(self.root).parts[0]
            for base in (repo, self.table_dir.parent, self.table_dir):
                if (base / bare).exists():
                    return str(base / bare)
        elif os.path.exists(bare):
            return path
        self.unmapped.append(path)
        return path

    def copy_target(self, path: str) -> str:
        name = os.path.basename(path)
        return str(self.out / "metadata" / name)


def _rewrite_avro(src: str, dst: str, fix: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    with open(src, "rb") as fo:
        reader = fastavro.reader(fo)
        schema = reader.writer_schema
        meta = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
        codec = reader.codec
        records = [fix(r) for r in reader]
    with open(dst, "wb") as fo:
        fastavro.writer(fo, schema, records, codec=codec, metadata=meta)


def _rewrite_position_deletes(m: _Mapper, src: str, fmt: str) -> tuple[str, int] | None:
    if fmt.upper() != "PARQUET":
        return None
    pf = pq.read_table(src)
    idx = pf.schema.get_field_index("file_path")
    if idx < 0:
        return None
    paths = [None if p is None else m.source(p) for p in pf.column(idx).to_pylist()]
    col = pa.array(paths, pf.schema.field(idx).type)
    table = pf.set_column(idx, pf.schema.field(idx), col)
    dst = str(m.out / "data" / os.path.basename(src))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    pq.write_table(table, dst)
    return dst, os.path.getsize(dst)


def _fix_bounds(m: _Mapper, bounds: Any) -> Any:
    if not bounds:
        return bounds
    out = []
    for kv in bounds:
        if kv["key"] == _FILE_PATH_ID and kv["value"] is not None:
            try:
                kv = {**kv, "value": m.source(kv["value"].decode()).encode()}
            except UnicodeDecodeError:
                pass
        out.append(kv)
    return out


def _rewrite_manifest(m: _Mapper, src: str, dst: str) -> None:
    def fix(entry: dict[str, Any]) -> dict[str, Any]:
        df = dict(entry["data_file"])
        path = m.source(df["file_path"])
        if df.get("content") == 1 and os.path.exists(path):
            rewritten = _rewrite_position_deletes(m, path, str(df.get("file_format", "")))
            if rewritten is not None:
                path, df["file_size_in_bytes"] = rewritten
        df["file_path"] = path
        if df.get("referenced_data_file"):
            df["referenced_data_file"] = m.source(df["referenced_data_file"])
        for key in ("lower_bounds", "upper_bounds"):
            if key in df:
                df[key] = _fix_bounds(m, df[key])
        return {**entry, "data_file": df}

    _rewrite_avro(src, dst, fix)


def _rewrite_manifest_path(m: _Mapper, path: str, done: dict[str, str]) -> str:
    if path in done:
        return done[path]
    src = m.source(path)
    dst = m.copy_target(path)
    if os.path.exists(src):
        _rewrite_manifest(m, src, dst)
        done[path] = dst
        return dst
    m.unmapped.append(path)
    done[path] = path
    return path


def relocate(metadata_file: Path, root: Path, out: Path) -> Relocated:
    """A copy of the table whose metadata is ``metadata_file`` under ``out``, its paths mapped
    into ``root`` (the fixtures folder)."""
    table_dir = metadata_file.parent.parent
    raw = metadata_file.read_bytes()
    meta = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    (out / "metadata").mkdir(parents=True, exist_ok=True)
    m = _Mapper(str(meta.get("location", "")), table_dir, root, out)
    manifests: dict[str, str] = {}
    for snap in meta.get("snapshots", []) or []:
        if snap.get("manifest-list"):
            src = m.source(snap["manifest-list"])
            dst = m.copy_target(snap["manifest-list"])
            if os.path.exists(src):

                def fix(rec: dict[str, Any]) -> dict[str, Any]:
                    old = rec["manifest_path"]
                    path = _rewrite_manifest_path(m, old, manifests)
                    length = rec["manifest_length"]
                    if path != old:  # rewritten: the length moves by what the rewrite changed
                        length += os.path.getsize(path) - os.path.getsize(m.source(old))
                    return {**rec, "manifest_path": path, "manifest_length": length}

                _rewrite_avro(src, dst, fix)
                snap["manifest-list"] = dst
            else:
                m.unmapped.append(snap["manifest-list"])
        if snap.get("manifests"):
            snap["manifests"] = [_rewrite_manifest_path(m, p, manifests) for p in snap["manifests"]]
    for key in ("statistics", "partition-statistics"):
        for stat in meta.get(key, []) or []:
            stat["statistics-path"] = m.source(stat["statistics-path"])
    meta["location"] = str(out)
    target = out / "metadata" / metadata_file.name.replace(".gz", "")
    target.write_text(json.dumps(meta))
    return Relocated(target, m.unmapped)
