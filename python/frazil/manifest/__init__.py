"""Manifest lists and manifests (spec "Manifests", "Manifest Lists"), decoded in native code.

Bytes in, ``pyarrow.Table`` out: one row per ``manifest_file`` of a manifest list or per
``manifest_entry`` of a manifest, with columns named as in the spec (``status``,
``snapshot_id``, ``sequence_number``, ``file_sequence_number``, ``data_file`` struct with
``file_path``, ``partition``, ``record_count``, ``lower_bounds``, ...). Maps (``value_counts``,
``lower_bounds``, ...) are Arrow maps keyed by field id; bounds stay in their binary single-value
form (spec Appendix D). Every Arrow field carries its Iceberg field id as ``PARQUET:field_id``
metadata, and the file's Avro key-value metadata (``schema``, ``partition-spec``,
``format-version``, ``content``, ...) is the table schema's metadata.

Fields are matched by field id, so v1 files and files from older writers read into the same
columns, with the spec's v1 defaults (``content`` 0, sequence numbers 0). Given the manifest's
entry in its manifest list, :func:`read_manifest` applies sequence number and first row id
inheritance. Decoding releases the GIL; :func:`read_manifests` decodes many on several threads.

:func:`write_manifest` and :func:`write_manifest_list` encode tables of that same shape with the
Avro schema each format version prescribes (Appendix A, field ids included) and the required
key-value metadata; :func:`summarize_manifest` computes what a manifest's manifest list entry
says about it (file and row counts by status, partition field summaries).

Format version 4 (experimental): manifests hold column stats in the typed ``content_stats``
struct, which the reader returns as the same maps (so every version reads into one shape) and the
writer builds from them; paths may be relative to the table location, resolved on read and
relativized on write when the functions are given ``location`` (a v4 table's
:attr:`~frazil.metadata.TableMetadata.paths_location`; ``None`` for older tables).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.compute as pc

from frazil import _native
from frazil.exceptions import DecodeError, FrazilError, InvalidArgumentError

__all__ = [
    "MANIFEST_ENTRY_COLUMNS",
    "MANIFEST_FILE_SCHEMA",
    "inline_manifest_list",
    "read_manifest",
    "read_manifest_list",
    "read_manifests",
    "summarize_manifest",
    "write_manifest",
    "write_manifest_list",
]

CODECS = ("deflate", "null", "snappy", "zstandard")
"""Avro codecs the writers take; ``deflate`` is Java's default (``write.avro.compression-codec``
``gzip``)."""

# The column paths a caller may select (``columns=``); a struct's name selects all of it.
MANIFEST_ENTRY_COLUMNS = (
    "status",
    "snapshot_id",
    "sequence_number",
    "file_sequence_number",
    "data_file",
)

_FIELD_SUMMARY = pa.struct(
    [
        pa.field("contains_null", pa.bool_(), False),
        pa.field("contains_nan", pa.bool_()),
        pa.field("lower_bound", pa.binary()),
        pa.field("upper_bound", pa.binary()),
    ]
)
MANIFEST_FILE_SCHEMA = pa.schema(
    [
        pa.field("manifest_path", pa.string(), False),
        pa.field("manifest_length", pa.int64(), False),
        pa.field("partition_spec_id", pa.int32(), False),
        pa.field("content", pa.int32()),
        pa.field("sequence_number", pa.int64()),
        pa.field("min_sequence_number", pa.int64()),
        pa.field("added_snapshot_id", pa.int64(), False),
        pa.field("added_files_count", pa.int32()),
        pa.field("existing_files_count", pa.int32()),
        pa.field("deleted_files_count", pa.int32()),
        pa.field("added_rows_count", pa.int64()),
        pa.field("existing_rows_count", pa.int64()),
        pa.field("deleted_rows_count", pa.int64()),
        pa.field("partitions", pa.list_(_FIELD_SUMMARY)),
        pa.field("key_metadata", pa.binary()),
        pa.field("first_row_id", pa.int64()),
    ]
)
"""The columns of a manifest list's table (:func:`read_manifest_list`), without the field ids:
what :func:`write_manifest_list` takes."""

# What the native reader takes of a manifest list row: what the entries inherit, then what the
# row promises about the file (its length, file and row counts by status), which it holds the
# file to, so a manifest cut short is an error rather than fewer entries.
_LIST_ENTRY_FIELDS = (
    "added_snapshot_id",
    "sequence_number",
    "first_row_id",
    "manifest_length",
    "added_files_count",
    "existing_files_count",
    "deleted_files_count",
    "added_rows_count",
    "existing_rows_count",
    "deleted_rows_count",
)


def _relabel(err: FrazilError, path: str | None) -> NoReturn:
    if path is None:
        raise err
    raise type(err)(f"{path}: {err}") from None


def list_entry(manifest_file: Mapping[str, Any] | None) -> _native._ListEntry | None:
    """A manifest list row as the native readers take it (absent keys are unknown, unchecked)."""
    if manifest_file is None:
        return None
    get = manifest_file.get
    return tuple(get(k) for k in _LIST_ENTRY_FIELDS)  # type: ignore[return-value]


def read_manifest_list(
    data: bytes,
    *,
    path: str | None = None,
    location: str | None = None,
    summary: Mapping[str, Any] | None = None,
) -> pa.Table:
    """Decodes a manifest list into a table of ``manifest_file`` rows.

    ``path`` only labels error messages. ``location`` is a v4 table's location (see
    :attr:`~frazil.metadata.TableMetadata.paths_location`): ``manifest_path``s are then read as
    v4 reads them, relative ones resolved against it (spec "Paths in Metadata").
    ``summary``: the snapshot's summary, whose live file totals the list is checked against
    (see :func:`check_list_totals`).
    """
    try:
        rows = pa.table(_native.manifest_read_list(data, location))
    except FrazilError as e:
        _relabel(e, path)
    if summary is not None:
        check_list_totals(rows, summary, path)
    return rows


_LIVE_COUNTS = ("added_files_count", "existing_files_count")


def check_list_totals(rows: pa.Table, summary: Mapping[str, Any], path: str | None = None) -> None:
    """Raises a :class:`~frazil.exceptions.DecodeError` when a manifest list holds fewer live
    files than its snapshot's summary counts (``total-data-files``, ``total-delete-files``): a
    list cut between two Avro blocks reads as a valid, shorter list, and its missing manifests
    would silently be rows missing from every read. Only a shortfall is an error (summaries are
    optional, and a list whose manifests all leave their counts null is not checked); the
    summaries of 352 snapshots in other projects' test tables all match their lists."""
    # v1 lists have no content: every manifest holds data files
    kinds = (
        pc.fill_null(rows.column("content"), 0)
        if "content" in rows.column_names
        else pa.repeat(pa.scalar(0, pa.int32()), rows.num_rows)
    )
    for kind, key in ((0, "total-data-files"), (1, "total-delete-files")):
        try:
            want = int(summary[key])
        except (KeyError, TypeError, ValueError):
            continue
        mine = pc.equal(kinds, kind)
        counts = [rows.column(c).filter(mine) for c in _LIVE_COUNTS]
        if any(c.null_count for c in counts):
            continue  # a count left null: nothing to hold the list to
        live = sum(pc.sum(c).as_py() or 0 for c in counts)
        if live < want:
            what = "data" if kind == 0 else "delete"
            raise DecodeError(
                f"manifest list {path or '(unnamed)'}: the snapshot's summary counts {want} "
                f"live {what} files, its manifests hold {live} (the list was cut short?)"
            )


def read_manifest(
    data: bytes,
    manifest_file: Mapping[str, Any] | None = None,
    *,
    columns: Sequence[str] | None = None,
    path: str | None = None,
    location: str | None = None,
) -> pa.Table:
    """Decodes a manifest into a table of ``manifest_entry`` rows.

    ``manifest_file`` is this manifest's row of its manifest list (a mapping with at least
    ``added_snapshot_id``, ``sequence_number`` and ``first_row_id``, e.g. one element of
    ``read_manifest_list(...).to_pylist()``); when given, null snapshot ids, sequence numbers and
    first row ids are inherited as the spec prescribes, and ``data`` (the whole file) is held to
    what the row promises: entries falling short of its file or row counts
    (``added_files_count``, ..., ``deleted_rows_count``; absent or null ones are not checked),
    or, with no count known, no entries in a file shorter than ``manifest_length``, raise
    :class:`~frazil.exceptions.DecodeError` (rust/frazil-manifest/src/promised.rs). ``columns``
    selects dotted column paths (``"data_file.file_path"``) to skip decoding the rest, e.g. the
    metrics maps; the columns inheritance needs are always decoded. ``path`` only labels error
    messages. ``location``: as for :func:`read_manifest_list`, for ``file_path`` and
    ``referenced_data_file``. v4 manifests' ``content_stats`` are returned as the stats maps
    v1-v3 manifests hold.
    """
    try:
        return pa.table(
            _native.manifest_read(
                data,
                list_entry(manifest_file),
                None if columns is None else list(columns),
                location,
            )
        )
    except FrazilError as e:
        _relabel(e, path)


def read_manifests(
    datas: Sequence[bytes],
    manifest_files: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    columns: Sequence[str] | None = None,
    threads: int | None = None,
    location: str | None = None,
    paths: Sequence[str | None] | None = None,
) -> list[pa.Table]:
    """Decodes many manifests in parallel (``threads``, default all cores), GIL released;
    ``manifest_files`` as for :func:`read_manifest`. An error names the manifest by its path in
    ``paths`` (default: the rows' ``manifest_path``)."""
    inherits = [list_entry(m) for m in manifest_files] if manifest_files is not None else []
    if paths is None and manifest_files is not None:
        paths = [None if m is None else m.get("manifest_path") for m in manifest_files]
    exports = _native.manifest_read_many(
        list(datas),
        inherits,
        None if columns is None else list(columns),
        threads,
        location,
        None if paths is None else list(paths),
    )
    return [pa.table(e) for e in exports]


def write_manifest(
    entries: Any,
    *,
    format_version: int,
    schema: str,
    partition_spec: str,
    schema_id: int | None = None,
    partition_spec_id: int | None = None,
    content: str = "data",
    codec: str = "deflate",
    location: str | None = None,
) -> bytes:
    """Encodes ``manifest_entry`` rows (a table shaped like :func:`read_manifest`'s) as a manifest.

    ``schema`` is the table schema's JSON and ``partition_spec`` the JSON array of the partition
    spec's fields (spec "Manifests"); the partition record's field ids come from the
    ``PARQUET:field_id`` metadata of the ``data_file.partition`` struct's fields. ``content`` is
    ``"data"`` or ``"deletes"``. v2 and later need ``schema_id`` and ``partition_spec_id``.

    Format version 4 (experimental) writes the stats maps as the typed ``content_stats`` struct
    of ``schema``'s fields and, given the table ``location``, paths under it relative.
    """
    if content not in ("data", "deletes"):
        raise InvalidArgumentError(f"content must be 'data' or 'deletes', not {content!r}")
    metadata = [("schema", schema)]
    if schema_id is not None:
        metadata.append(("schema-id", str(schema_id)))
    metadata.append(("partition-spec", partition_spec))
    if partition_spec_id is not None:
        metadata.append(("partition-spec-id", str(partition_spec_id)))
    metadata.append(("format-version", str(format_version)))
    if format_version >= 2:
        metadata.append(("content", content))
    return _native.manifest_write(entries, format_version, metadata, codec, location)


def summarize_manifest(entries: Any) -> dict[str, Any]:
    """The manifest list fields that ``manifest_entry`` rows determine.

    ``added/existing/deleted_files_count``, ``added/existing/deleted_rows_count``,
    ``min_sequence_number`` (``None`` while a live entry's sequence number is to be inherited)
    and ``partitions``: one ``field_summary`` dict per partition field, bounds serialized as the
    spec's single values (Appendix D).
    """
    return _native.manifest_summarize(entries)


def write_manifest_list(
    manifests: Any,
    *,
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None = None,
    sequence_number: int | None = None,
    first_row_id: int | None = None,
    codec: str = "deflate",
    location: str | None = None,
) -> bytes:
    """Encodes ``manifest_file`` rows (shaped like :func:`read_manifest_list`'s) as a list;
    from v4, ``manifest_path``s under the table ``location`` are written relative."""
    metadata = [
        ("snapshot-id", str(snapshot_id)),
        ("parent-snapshot-id", "null" if parent_snapshot_id is None else str(parent_snapshot_id)),
    ]
    if format_version >= 2:
        if sequence_number is None:
            raise InvalidArgumentError(f"a v{format_version} manifest list needs sequence_number")
        metadata.append(("sequence-number", str(sequence_number)))
    metadata.append(("format-version", str(format_version)))
    if format_version >= 3 and first_row_id is not None:
        metadata.append(("first-row-id", str(first_row_id)))
    return _native.manifest_write_list(manifests, format_version, metadata, codec, location)


def inline_manifest_list(manifests: Sequence[tuple[str, bytes]], *, snapshot_id: int) -> pa.Table:
    """The manifest list of a v1 snapshot that lists its manifests inline (``manifests``
    instead of ``manifest-list``), shaped like :func:`read_manifest_list`'s table.

    ``manifests`` are the listed paths (as the snapshot spells them) with their bytes. As the
    Java reference reads such snapshots: the spec id comes from each manifest's
    ``partition-spec-id`` header (0 when absent, as v1 writers omitted it), the snapshot id
    from the snapshot, the sequence numbers are v1's 0, and the counts and partition summaries
    are computed from the entries.
    """
    rows = []
    for path, data in manifests:
        entries = read_manifest(data, path=path)
        header = entries.schema.metadata or {}
        try:
            spec_id = int(header.get(b"partition-spec-id", b"0"))
        except ValueError:
            raise FrazilError(
                f"{path}: partition-spec-id {header[b'partition-spec-id']!r} is not an int"
            ) from None
        if header.get(b"content", b"data") != b"data":
            raise FrazilError(f"{path}: a snapshot's inline manifests hold data files only (v1)")
        rows.append(
            {
                "manifest_path": path,
                "manifest_length": len(data),
                "partition_spec_id": spec_id,
                "content": 0,
                "added_snapshot_id": snapshot_id,
                "key_metadata": None,
                **summarize_manifest(entries),
            }
        )
    # Encoded and decoded so the table is exactly what reading a manifest list gives.
    data = _native.manifest_write_list(
        pa.Table.from_pylist(rows, schema=MANIFEST_FILE_SCHEMA),
        1,
        [("snapshot-id", str(snapshot_id)), ("format-version", "1")],
        "null",
    )
    return read_manifest_list(data)
