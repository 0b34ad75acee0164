"""The snapshot producer (Java's ``SnapshotProducer``), which the operations of
:mod:`frazil.table.update.snapshot` (append, overwrite, delete, replace, row delta) extend.

A producer is a :class:`TransactionStep` that turns the files it was given into a snapshot
(spec "Snapshots", "Manifests", "Manifest Lists", "Sequence Numbers", "Row Lineage"):

* New files go into new manifests, one per partition spec and content, written once with ADDED
  entries whose sequence numbers (and v3 ``first_row_id``) are left null, to be inherited from
  the manifest list. Inheritance is what lets a retry reuse them: only the manifest list is
  written again, with the sequence number and first row id of the new attempt.
* The branch head's manifests are carried into the new list unchanged, except those holding
  files to delete: those are rewritten with the deleted files as DELETED entries and the other
  live files as EXISTING entries, both with explicit sequence numbers (DELETED entries of
  earlier snapshots are dropped). Merging operations then bin-pack small manifests
  (``manifest_merge``).
* ``apply`` re-runs on every attempt against the refreshed base and validates there: an append
  always applies; files to delete must still be live; with a conflict detection filter, data
  files added concurrently that match it fail a serializable operation, and so do delete files
  added concurrently against the files it deletes.

Files are named as the Java reference names them (``<commit uuid>-m<N>.avro`` and
``snap-<snapshot id>-<attempt>-<commit uuid>.avro`` under the metadata directory), so orphan
file tools recognise them. After the commit, manifest lists and manifests of superseded
attempts are deleted; after an abort, everything the producer wrote.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from frazil import manifest as fm
from frazil.encryption.table_io import snapshot_key, written_key_metadata
from frazil.exceptions import InvalidArgumentError, UnsupportedError, ValidationError, io_error
from frazil.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from frazil.io.paths import resolve_path
from frazil.manifest import MANIFEST_FILE_SCHEMA
from frazil.manifest.content_file import (
    DataFile,
    DataFileContent,
    data_files_from_entries,
    deletion_vector_mask,
    manifest_entries,
    partition_arrow_type,
)
from frazil.metadata import (
    MAIN_BRANCH,
    EncryptedKey,
    Snapshot,
    SnapshotRefType,
    TableMetadata,
)
from frazil.table.step import TransactionStep
from frazil.table.update import (
    AddEncryptionKeyUpdate,
    AddSnapshotUpdate,
    SetSnapshotRefUpdate,
    TableUpdate,
)
from frazil.table.update.manifest_merge import MergeSettings, merge_plan
from frazil.table.update.snapshot_summary import SnapshotSummaryCollector, update_totals

if TYPE_CHECKING:
    from frazil.io import FileIO
    from frazil.table.transaction import Transaction

__all__ = [
    "ADDED",
    "DELETED",
    "EXISTING",
    "MANIFEST_FILE_SCHEMA",
    "DataFilePredicate",
    "SnapshotProducer",
]

logger = logging.getLogger(__name__)

# Manifest entry status values (spec "Manifest Entry Fields").
EXISTING, ADDED, DELETED = 0, 1, 2

WRITE_METADATA_PATH = "write.metadata.path"
AVRO_COMPRESSION = "write.avro.compression-codec"
_AVRO_CODECS = {
    "gzip": "deflate",
    "deflate": "deflate",
    "zstd": "zstandard",
    "zstandard": "zstandard",
    "snappy": "snappy",
    "uncompressed": "null",
    "none": "null",
    "null": "null",
}

DataFilePredicate = Callable[[DataFile], bool]

# ---------------------------------------------------------------------------------------------
# Arrow shapes of manifest entries and manifest list rows (the native encoder's input)


_DV_KEY_SEPARATOR = "\x00@"


def _dv_key(path: str, offset: int) -> str:
    return f"{path}{_DV_KEY_SEPARATOR}{offset}"


def _path_of(f: DataFile | str) -> str:
    return f if isinstance(f, str) else f.file_path


# ---------------------------------------------------------------------------------------------
# Producers


class SnapshotProducer(TransactionStep):
    """What every snapshot operation shares; subclasses pick the operation and the methods."""

    _merges = True

    def __init__(
        self,
        transaction: Transaction,
        snapshot_properties: Mapping[str, str] | None = None,
        branch: str | None = None,
    ) -> None:
        self._transaction = transaction
        self._branch = branch or MAIN_BRANCH
        self._properties = {str(k): str(v) for k, v in (snapshot_properties or {}).items()}
        self._commit_uuid = uuid.uuid4()
        self._snapshot_id: int | None = None
        self._manifest_count = 0
        self._list_attempt = 0
        # v4: the table location relative paths are read against (set with the base)
        self._location: str | None = None
        # the change
        # keyed by path, and blob offset for deletion vectors (several share a Puffin file)
        self._added: dict[tuple[str, int | None], DataFile] = {}
        self._delete_paths: dict[str, None] = {}
        self._delete_predicates: list[DataFilePredicate] = []
        # partitions dropped whole: their delete files go with their data files
        self._partition_predicates: list[DataFilePredicate] = []
        self._delete_delete_paths: dict[str, None] = {}
        # the removed data files whose deletion vectors the cached delete manifests dropped
        self._dangling_for: frozenset[str] = frozenset()
        # Deletion vectors share Puffin files: one is named by its file and blob offset.
        self._delete_dv_keys: dict[tuple[str, int], None] = {}
        self._validate_from: int | None = None
        self._validate_from_known = False
        self._conflict_filter: InclusiveMetricsEvaluator | DataFilePredicate | None = None
        self._isolation = "serializable"
        # what was written, reused across attempts
        self._new_manifests: list[dict[str, Any]] | None = None
        self._filtered: dict[str, tuple[dict[str, Any], list[DataFile]]] = {}
        self._merged: dict[tuple[str, ...], dict[str, Any]] = {}
        self._written_manifests: list[str] = []
        self._manifest_lists: dict[str, set[str]] = {}
        self._last_list: str | None = None
        self._finished = False

    # ---- PyIceberg-style use

    def __enter__(self) -> SnapshotProducer:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()

    def commit(self) -> None:
        """Stages this change in its transaction (which commits it if it autocommits)."""
        self._transaction.stage(self)

    @property
    def snapshot_id(self) -> int:
        """This producer's snapshot id (fixed for its life, so retries keep it)."""
        if self._snapshot_id is None:
            self._snapshot_id = self._new_snapshot_id(self._transaction.table_metadata)
        return self._snapshot_id

    # ---- the change (exposed by the subclasses that support it)

    def _changed(self) -> None:
        # New content after manifests were written: write them again (the stale ones are
        # cleaned up with the other unused files after the commit).
        self._new_manifests = None
        self._filtered.clear()
        self._merged.clear()

    def _add_file(self, f: DataFile) -> None:
        if not isinstance(f, DataFile):
            raise InvalidArgumentError(f"expected a DataFile, got {type(f).__name__}")
        if self._transaction.table_metadata.spec_by_id(f.spec_id) is None:
            raise InvalidArgumentError(
                f"{f.file_path}: the table has no partition spec with id {f.spec_id}"
            )
        key = (f.file_path, f.content_offset)
        if key not in self._added:
            self._added[key] = f
            self._changed()

    def _check_content(self, f: DataFile, data: bool) -> None:
        if data and f.content != DataFileContent.DATA:
            raise InvalidArgumentError(f"{f.file_path} is a delete file, not a data file")
        if not data and f.content not in (
            DataFileContent.POSITION_DELETES,
            DataFileContent.EQUALITY_DELETES,
        ):
            raise InvalidArgumentError(f"{f.file_path} is a data file, not a delete file")
        if not data and self._transaction.table_metadata.format_version < 2:
            raise UnsupportedError("delete files need a format version 2 table or newer")

    def append_data_file(self, data_file: DataFile) -> SnapshotProducer:
        self._check_content(data_file, True)
        self._add_file(data_file)
        return self

    # ---- TransactionStep

    def apply(self, base: TableMetadata, attempt: int) -> list[TableUpdate]:
        try:
            return self._apply(base)
        except BaseException:
            # Nothing of this attempt will be committed (and a failed first staging never
            # reaches the transaction's abort): remove what this producer wrote.
            self.on_abort()
            raise

    def on_commit(self, committed: TableMetadata) -> None:
        snap = committed.snapshot_by_id(self._snapshot_id) if self._snapshot_id else None
        used_list = self._last_list
        if snap is not None:
            # v4 metadata (e.g. a REST response) may name the list relative to the location
            used_list = committed.resolve(snap.manifest_list) if snap.manifest_list else None
        used = self._manifest_lists.get(used_list or "", set())
        io = self._io
        for path in self._written_manifests:
            if path not in used:
                io.delete(path)
        for path in self._manifest_lists:
            if path != used_list:
                io.delete(path)
        self._finished = True

    def on_abort(self) -> None:
        io = self._io
        for path in [*self._written_manifests, *self._manifest_lists]:
            try:
                io.delete(path)
            except Exception:
                logger.warning("could not delete %s", path, exc_info=True)
        self._written_manifests.clear()
        self._manifest_lists.clear()
        self._new_manifests = None
        self._filtered.clear()
        self._merged.clear()
        self._last_list = None

    # ---- helpers

    @property
    def _io(self) -> FileIO:
        return self._transaction.table.io

    def _table_name(self) -> str:
        return self._transaction.table.full_name()

    @staticmethod
    def _new_snapshot_id(base: TableMetadata) -> int:
        while True:
            # Java's recipe: a random UUID's halves XORed, as a positive long.
            u = uuid.uuid4().int
            sid = ((u >> 64) ^ u) & 0x7FFF_FFFF_FFFF_FFFF
            if sid and base.snapshot_by_id(sid) is None:
                return sid

    def _metadata_path(self, base: TableMetadata, name: str) -> str:
        root = base.properties.get(WRITE_METADATA_PATH)
        if not root:
            root = f"{(base.location or '').rstrip('/')}/metadata"
        return f"{root.rstrip('/')}/{name}"

    @staticmethod
    def _codec(base: TableMetadata) -> str:
        name = base.properties.get(AVRO_COMPRESSION, "gzip").strip().lower()
        try:
            return _AVRO_CODECS[name]
        except KeyError:
            raise InvalidArgumentError(
                f"{AVRO_COMPRESSION}={name!r} is not a supported Avro codec"
            ) from None

    def _write_manifest(
        self, base: TableMetadata, entries: pa.Table, spec_id: int, content: int
    ) -> dict[str, Any]:
        """Writes a manifest of this snapshot; returns its manifest list row (sequence numbers
        to be assigned when the list is written)."""
        spec = base.spec_by_id(spec_id)
        if spec is None:
            raise ValidationError(f"{self._table_name()}: no partition spec with id {spec_id}")
        schema = base.schema()
        data = fm.write_manifest(
            entries,
            format_version=base.format_version,
            schema=json.dumps(schema.to_json()),
            partition_spec=json.dumps(spec.fields_to_json()),
            schema_id=schema.schema_id,
            partition_spec_id=spec_id,
            content="deletes" if content else "data",
            codec=self._codec(base),
            location=base.paths_location,
        )
        path = self._metadata_path(base, f"{self._commit_uuid}-m{self._manifest_count}.avro")
        self._manifest_count += 1
        self._write_file(path, data, "writing manifest")
        self._written_manifests.append(path)
        # An encrypted table's manifest: its key metadata and length as stored (AGS1 stream).
        key_metadata, length = written_key_metadata(self._io, path, len(data))
        summary = fm.summarize_manifest(entries)
        # The least explicit data sequence number of a live entry (entries left null inherit
        # this commit's, assigned with the list, which is never lower), as Java's writer counts.
        live = entries.filter(pc.not_equal(entries.column("status"), DELETED))
        summary["min_sequence_number"] = pc.min(live.column("sequence_number")).as_py()
        return {
            "manifest_path": path,
            "manifest_length": length,
            "partition_spec_id": spec_id,
            "content": content,
            "sequence_number": None,
            **summary,
            "added_snapshot_id": self.snapshot_id,
            "key_metadata": key_metadata,
            "first_row_id": None,
        }

    def _read(self, paths: Sequence[str]) -> list[bytes]:
        try:
            return self._io.read_many(paths)
        except OSError as e:
            where = e.filename if isinstance(e.filename, str) else None
            if where is None:
                where = next((p for p in paths if not self._exists(p)), None) or ", ".join(paths)
            raise io_error(e, f"{self._table_name()}: reading", where) from e

    def _exists(self, path: str) -> bool:
        try:
            return self._io.exists(path)
        except OSError:
            return True

    def _write_file(self, path: str, data: bytes, doing: str) -> None:
        try:
            self._io.write(path, data)
        except OSError as e:
            raise io_error(e, f"{self._table_name()}: {doing}", path) from e

    def _manifest_rows(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        if snapshot.manifest_list is None:
            # A v1 snapshot listing its manifests inline: the new snapshot gets a manifest list
            # of them, as the Java reference rewrites such tables.
            paths = list(snapshot.manifests or ())
            inline = fm.inline_manifest_list(
                list(zip(paths, self._read(paths), strict=True)), snapshot_id=snapshot.snapshot_id
            )
            listed: list[dict[str, Any]] = inline.to_pylist()
            return listed
        location = self._location
        (data,) = self._read([resolve_path(snapshot.manifest_list, location)])
        rows: list[dict[str, Any]] = fm.read_manifest_list(
            data, path=snapshot.manifest_list, location=location, summary=snapshot.summary
        ).to_pylist()
        return rows

    def _entries(self, rows: Sequence[Mapping[str, Any]]) -> list[pa.Table]:
        datas = self._read([r["manifest_path"] for r in rows])
        return [
            fm.read_manifest(d, r, path=r["manifest_path"], location=self._location)
            for d, r in zip(datas, rows, strict=True)
        ]

    # ---- the snapshot

    def _operation(self) -> str:
        raise NotImplementedError

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        """Conflict checks against a newer base (subclasses)."""

    def _new_file_manifests(self, base: TableMetadata) -> list[dict[str, Any]]:
        """Manifests of the new files, one per spec and content, written once."""
        if self._new_manifests is not None:
            return self._new_manifests
        groups: dict[tuple[int, int], list[DataFile]] = {}
        for f in self._added.values():
            content = 0 if f.content == DataFileContent.DATA else 1
            groups.setdefault((content, f.spec_id), []).append(f)
        rows = []
        for (content, spec_id), files in sorted(groups.items()):
            spec = base.spec_by_id(spec_id)
            if spec is None:
                raise ValidationError(f"{self._table_name()}: no partition spec {spec_id}")
            ptype = partition_arrow_type(spec, base.schema())
            # ADDED, snapshot id set, sequence numbers null: inherited from the list
            entries = manifest_entries(
                files, ADDED, self.snapshot_id, None, None, ptype, base.format_version
            )
            rows.append(self._write_manifest(base, entries, spec_id, content))
        self._new_manifests = rows
        return rows

    def _deletes_anything(self) -> bool:
        return bool(
            self._delete_paths
            or self._delete_predicates
            or self._delete_delete_paths
            or self._delete_dv_keys
        )

    def _filter_manifests(
        self,
        base: TableMetadata,
        rows: list[dict[str, Any]],
        paths: Mapping[str, None],
        predicates: Sequence[DataFilePredicate],
        dv_keys: Mapping[tuple[str, int], None] | None = None,
        dangling: frozenset[str] = frozenset(),
    ) -> tuple[list[dict[str, Any]], list[DataFile], set[str]]:
        """The manifests with the selected live files marked DELETED: (manifest rows, files
        deleted, paths found). ``dv_keys`` select deletion vectors by file and blob offset;
        ``dangling`` names removed data files whose deletion vectors go too."""
        if not rows or not (paths or predicates or dv_keys or dangling):
            return list(rows), [], set()
        todo = [r for r in rows if r["manifest_path"] not in self._filtered]
        if todo:
            path_set = pa.array(list(paths), pa.string())
            dv_set = pa.array([_dv_key(p, o) for p, o in dv_keys or {}], pa.string())
            referenced = pa.array(sorted(dangling), pa.string()) if dangling else None
            for row, entries in zip(todo, self._entries(todo), strict=True):
                self._filtered[row["manifest_path"]] = self._filter_one(
                    base, row, entries, path_set, predicates, dv_set, referenced
                )
        out, removed = [], []
        found: set[str] = set()
        for row in rows:
            new_row, deleted = self._filtered[row["manifest_path"]]
            out.append(new_row)
            removed.extend(deleted)
            found.update(f.file_path for f in deleted)
        return out, removed, found

    def _filter_one(
        self,
        base: TableMetadata,
        row: dict[str, Any],
        entries: pa.Table,
        path_set: pa.Array,
        predicates: Sequence[DataFilePredicate],
        dv_set: pa.Array | None = None,
        referenced: pa.Array | None = None,
    ) -> tuple[dict[str, Any], list[DataFile]]:
        status = entries.column("status")
        live = pc.not_equal(status, DELETED)
        file_paths = pc.struct_field(entries.column("data_file"), "file_path")
        match = pc.and_(live, pc.is_in(file_paths, value_set=path_set))
        data_file_type = entries.schema.field("data_file").type
        if (
            referenced is not None
            and data_file_type.get_field_index("content_offset") >= 0
            and data_file_type.get_field_index("referenced_data_file") >= 0
        ):
            data_file = entries.column("data_file")
            target = pc.struct_field(data_file, "referenced_data_file")
            is_dv = deletion_vector_mask(
                pc.struct_field(data_file, "content"), pc.struct_field(data_file, "file_format")
            )
            of_removed = pc.fill_null(pc.is_in(target, value_set=referenced), False)
            match = pc.or_(match, pc.and_(live, pc.and_(is_dv, of_removed)))
        if dv_set is not None and len(dv_set):
            offsets = pc.struct_field(entries.column("data_file"), "content_offset")
            keys = pc.binary_join_element_wise(
                file_paths, pc.cast(offsets, pa.string()), _DV_KEY_SEPARATOR
            )
            match = pc.or_(
                match, pc.and_(live, pc.fill_null(pc.is_in(keys, value_set=dv_set), False))
            )
        if predicates:
            files = data_files_from_entries(entries, row["partition_spec_id"])
            flags = [any(p(f) for p in predicates) for f in files]
            match = pc.or_(match, pc.and_(live, pa.array(flags, pa.bool_())))
        if not pc.any(match).as_py():
            return row, []
        keep = entries.filter(live)
        match = pc.filter(match, live)
        deleted = data_files_from_entries(keep.filter(match), row["partition_spec_id"])
        snapshot_ids = pc.if_else(
            match, pa.scalar(self.snapshot_id, pa.int64()), keep.column("snapshot_id")
        )
        statuses = pc.if_else(
            match, pa.scalar(DELETED, pa.int32()), pa.scalar(EXISTING, pa.int32())
        )
        keep = keep.set_column(0, keep.schema.field("status"), statuses)
        i = keep.schema.get_field_index("snapshot_id")
        keep = keep.set_column(i, keep.schema.field(i), snapshot_ids.cast(pa.int64()))
        new_row = self._write_manifest(base, keep, row["partition_spec_id"], row["content"])
        return new_row, deleted

    def _merge(self, base: TableMetadata, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        settings = MergeSettings.from_properties(base.properties)
        out: list[dict[str, Any]] = []
        for bin_ in merge_plan(rows, settings):
            if len(bin_) == 1:
                out.append(dict(bin_[0]))
                continue
            key = tuple(m["manifest_path"] for m in bin_)
            if key not in self._merged:
                self._merged[key] = self._merge_bin(base, bin_)
            out.append(self._merged[key])
        return out

    def _merge_bin(self, base: TableMetadata, bin_: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        sid = self.snapshot_id
        parts = []
        for entries in self._entries(bin_):
            status = entries.column("status")
            ours = pc.fill_null(pc.equal(entries.column("snapshot_id"), sid), False)
            # Deletes of earlier snapshots are dropped; only this snapshot's adds stay ADDED.
            keep = pc.or_(pc.not_equal(status, DELETED), ours)
            entries = entries.filter(keep)
            status, ours = pc.filter(status, keep), pc.filter(ours, keep)
            still_added = pc.and_(pc.equal(status, ADDED), ours)
            new_status = pc.if_else(
                pc.equal(status, DELETED),
                pa.scalar(DELETED, pa.int32()),
                pc.if_else(
                    still_added, pa.scalar(ADDED, pa.int32()), pa.scalar(EXISTING, pa.int32())
                ),
            )
            entries = entries.set_column(0, entries.schema.field("status"), new_status)
            parts.append(entries)
        merged = pa.concat_tables(parts, promote_options="permissive")
        first = bin_[0]
        return self._write_manifest(base, merged, first["partition_spec_id"], first["content"])

    def _apply(self, base: TableMetadata) -> list[TableUpdate]:
        name = self._table_name()
        ref = base.refs.get(self._branch)
        if ref is not None and ref.snapshot_ref_type != SnapshotRefType.BRANCH:
            raise ValidationError(f"{name}: {self._branch!r} is a tag, not a branch")
        parent = base.snapshot_by_id(ref.snapshot_id) if ref is not None else None
        if self._snapshot_id is None:
            self._snapshot_id = self._new_snapshot_id(base)
        elif base.snapshot_by_id(self._snapshot_id) is not None:
            raise ValidationError(f"{name}: snapshot {self._snapshot_id} already exists")
        if not self._validate_from_known:
            self._validate_from = parent.snapshot_id if parent is not None else None
            self._validate_from_known = True
        sid = self.snapshot_id
        version = base.format_version
        sequence_number = base.last_sequence_number + 1 if version >= 2 else 0
        # v4: what relative paths of the manifests read and written are relative to
        self._location = base.paths_location

        self._validate(base, parent)

        summary = SnapshotSummaryCollector()
        for f in self._added.values():
            summary.added_file(f)
        new_rows = self._new_file_manifests(base)
        parent_rows = self._manifest_rows(parent) if parent is not None else []
        data_rows = [r for r in parent_rows if not r["content"]]
        delete_rows = [r for r in parent_rows if r["content"]]
        data_rows, removed, found = self._filter_manifests(
            base, data_rows, self._delete_paths, self._delete_predicates
        )
        # The spec: "When removing a data file, writers must also remove any deletion vector
        # that applies to that data file" (Java's removeDanglingDeletesFor).
        dangling = frozenset(f.file_path for f in removed) if version >= 3 else frozenset()
        if dangling != self._dangling_for:
            for r in delete_rows:  # filtered for another set of removed files: redo them
                self._filtered.pop(r["manifest_path"], None)
            self._dangling_for = dangling
        delete_rows, removed_deletes, found_deletes = self._filter_manifests(
            base,
            delete_rows,
            self._delete_delete_paths,
            self._partition_predicates,
            self._delete_dv_keys,
            dangling,
        )
        missing = [p for p in self._delete_paths if p not in found]
        missing += [p for p in self._delete_delete_paths if p not in found_deletes]
        found_dvs = {(f.file_path, f.content_offset) for f in removed_deletes}
        missing += [
            f"{p} (deletion vector at offset {o})"
            for p, o in self._delete_dv_keys
            if (p, o) not in found_dvs
        ]
        if missing:
            raise ValidationError(self._missing_message(name, missing))
        for f in (*removed, *removed_deletes):
            summary.removed_file(f)
        self._check_deleted(base, parent, removed)

        new_data = [r for r in new_rows if not r["content"]]
        new_deletes = [r for r in new_rows if r["content"]]
        replaced = 0
        if self._merges:

            def live(r: Mapping[str, Any]) -> bool:
                return (
                    r["added_snapshot_id"] == sid
                    or r.get("added_files_count") != 0
                    or r.get("existing_files_count") != 0
                )

            data = [r for r in new_data + data_rows if live(r)]
            deletes = [r for r in new_deletes + delete_rows if live(r)]
            merged_data = self._merge(base, data)
            merged_deletes = self._merge(base, deletes)
            manifests = merged_data + merged_deletes
            kept_paths = {r["manifest_path"] for r in manifests}
            replaced = sum(
                1
                for r in data + deletes
                if r["added_snapshot_id"] != sid and r["manifest_path"] not in kept_paths
            )
        else:
            manifests = new_data + new_deletes + data_rows + delete_rows
        # parent manifests rewritten to mark files deleted
        replaced += sum(
            1
            for r in parent_rows
            if r["manifest_path"] in self._filtered
            and self._filtered[r["manifest_path"]][0]["manifest_path"] != r["manifest_path"]
        )

        list_rows, first_row_id, added_rows = self._assign(base, manifests, sequence_number)
        list_path = self._write_list(base, list_rows, parent, sequence_number, first_row_id)
        key_id, key_updates = self._snapshot_key(base, list_path)

        created = sum(1 for r in manifests if r["added_snapshot_id"] == sid)
        props = {
            **self._properties,
            **summary.build(),
            "manifests-created": str(created),
            "manifests-kept": str(len(manifests) - created),
            "manifests-replaced": str(replaced),
        }
        previous = None
        if parent is not None:
            previous = dict(parent.summary or {})
        props = update_totals(props, previous)
        snapshot = Snapshot(
            snapshot_id=sid,
            timestamp_ms=max(int(time.time() * 1000), base.last_updated_ms),
            parent_snapshot_id=parent.snapshot_id if parent is not None else None,
            sequence_number=sequence_number,
            manifest_list=list_path,
            summary={"operation": self._operation(), **props},
            schema_id=base.current_schema_id,
            first_row_id=first_row_id,
            added_rows=added_rows,
            key_id=key_id,
        )
        return [
            *key_updates,
            AddSnapshotUpdate(snapshot),
            SetSnapshotRefUpdate(
                self._branch,
                sid,
                SnapshotRefType.BRANCH,
                ref.min_snapshots_to_keep if ref else None,
                ref.max_snapshot_age_ms if ref else None,
                ref.max_ref_age_ms if ref else None,
            ),
        ]

    def _missing_message(self, name: str, missing: list[str]) -> str:
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        return f"{name}: missing required files to delete: {shown}"

    def _check_deleted(
        self, base: TableMetadata, parent: Snapshot | None, removed: Sequence[DataFile]
    ) -> None:
        """Checks on the files this commit deletes (subclasses)."""

    def _assign(
        self, base: TableMetadata, manifests: list[dict[str, Any]], sequence_number: int
    ) -> tuple[list[dict[str, Any]], int | None, int | None]:
        """Manifest list rows with this attempt's sequence number in the new manifests and v3
        first row ids in the data manifests without one (spec "First Row ID Assignment")."""
        sid = self.snapshot_id
        out = []
        v3 = base.format_version >= 3
        next_row_id = base.next_row_id or 0
        start = next_row_id
        for r in manifests:
            r = dict(r)
            if r["added_snapshot_id"] == sid and r["sequence_number"] is None:
                r["sequence_number"] = sequence_number
                least = r.get("min_sequence_number")
                r["min_sequence_number"] = (
                    sequence_number if least is None else min(least, sequence_number)
                )
            if v3 and not r["content"] and r.get("first_row_id") is None:
                r["first_row_id"] = next_row_id
                next_row_id += (r.get("added_rows_count") or 0) + (
                    r.get("existing_rows_count") or 0
                )
            out.append(r)
        if not v3:
            return out, None, None
        return out, start, next_row_id - start

    def _snapshot_key(
        self, base: TableMetadata, list_path: str
    ) -> tuple[str | None, list[TableUpdate]]:
        """An encrypted table's new snapshot ``key-id`` for its manifest list and the
        ``encryption-keys`` to add with it (:func:`frazil.encryption.table_io.snapshot_key`)."""
        known = (k.key_id for k in base.encryption_keys)
        key_id, new_keys = snapshot_key(self._io, list_path, known)
        return key_id, [AddEncryptionKeyUpdate(EncryptedKey(**vars(k))) for k in new_keys]

    def _write_list(
        self,
        base: TableMetadata,
        rows: list[dict[str, Any]],
        parent: Snapshot | None,
        sequence_number: int,
        first_row_id: int | None,
    ) -> str:
        self._list_attempt += 1
        data = fm.write_manifest_list(
            pa.Table.from_pylist(rows, schema=MANIFEST_FILE_SCHEMA),
            format_version=base.format_version,
            snapshot_id=self.snapshot_id,
            parent_snapshot_id=parent.snapshot_id if parent is not None else None,
            sequence_number=sequence_number if base.format_version >= 2 else None,
            first_row_id=first_row_id,
            codec=self._codec(base),
            location=base.paths_location,
        )
        path = self._metadata_path(
            base, f"snap-{self.snapshot_id}-{self._list_attempt}-{self._commit_uuid}.avro"
        )
        self._write_file(path, data, "writing manifest list")
        self._manifest_lists[path] = {r["manifest_path"] for r in rows}
        self._last_list = path
        return path

    # ---- conflict detection

    def _snapshots_since(self, base: TableMetadata, parent: Snapshot | None) -> list[Snapshot]:
        """The branch's snapshots after the validate-from snapshot, newest first."""
        out = []
        current = parent
        while current is not None and current.snapshot_id != self._validate_from:
            out.append(current)
            if current.parent_snapshot_id is None:
                current = None
                break
            nxt = base.snapshot_by_id(current.parent_snapshot_id)
            if nxt is None:
                raise ValidationError(
                    f"{self._table_name()}: cannot determine the history between snapshot "
                    f"{self._validate_from} and {parent.snapshot_id if parent else None} "
                    f"(snapshot {current.parent_snapshot_id} is gone)"
                )
            current = nxt
        if current is None and self._validate_from is not None:
            raise ValidationError(
                f"{self._table_name()}: snapshot {self._validate_from} to validate from is not "
                f"an ancestor of branch {self._branch!r}'s head"
            )
        return out

    def _set_validate_from(self, snapshot_id: int | None) -> None:
        self._validate_from = snapshot_id
        self._validate_from_known = True
