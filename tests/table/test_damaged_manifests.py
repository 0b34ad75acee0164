"""Issue 26: a damaged manifest or manifest list is an error, never fewer rows.

A manifest cut after its header is a valid, empty Avro file (an interrupted copy leaves one):
read alone it holds no entries. What its manifest list row promises (the file and row counts by
status; ``manifest_length`` when no count is known) is held against the entries decoded, so
every reader raises a :class:`~frazil.exceptions.DecodeError` naming the file. Only falling
short of a promise is refused: real tables hold more than they promise or stale lengths
(rust/frazil-manifest/src/promised.rs), and are read. The damage is done here by hand: files
cut with plain byte slicing, manifest lists rewritten with fastavro.

Not caught: a manifest list cut after its header or between blocks is a valid list of fewer
manifests, and nothing in the table metadata says how many it holds.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.exceptions import DecodeError, FrazilError
from frazil.schema import Schema
from frazil.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()))


def _rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "s": [f"v{i}" for i in ids]})


@pytest.fixture(params=[1, 2])
def table(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    catalog = load_catalog(
        "c", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path)
    )
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", SCHEMA, properties={"format-version": str(request.param)})
    t.append(_rows(range(0, 10)))
    t.append(_rows(range(10, 15)))
    return t


def _list_path(table: Any) -> Path:
    snapshot = table.current_snapshot()
    return Path(table.metadata.resolve(snapshot.manifest_list))


def _manifest_rows(table: Any) -> list[dict[str, Any]]:
    return fm.read_manifest_list(_list_path(table).read_bytes()).to_pylist()  # type: ignore[no-any-return]


def _manifest(table: Any, added: int) -> Path:
    """The manifest whose entries added ``added`` rows."""
    (row,) = [r for r in _manifest_rows(table) if r["added_rows_count"] == added]
    return Path(table.metadata.resolve(row["manifest_path"]))


def _header_length(data: bytes) -> int:
    """The bytes of an Avro container's header: up to and including its sync marker."""
    reader = fastavro.reader(io.BytesIO(data))
    sync: bytes = reader._header["sync"]  # type: ignore[attr-defined]
    return data.index(sync) + len(sync)


def _rewrite_list(table: Any, change: Callable[[dict[str, Any]], None]) -> None:
    """Rewrites the table's current manifest list with each record passed through ``change``,
    schema, metadata and codec kept."""
    path = _list_path(table)
    reader = fastavro.reader(io.BytesIO(path.read_bytes()))
    schema = reader.writer_schema
    metadata = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
    codec = reader.metadata.get("avro.codec", "null")
    records = list(reader)
    for r in records:
        change(r)
    out = io.BytesIO()
    fastavro.writer(out, schema, records, codec=codec, metadata=metadata)
    path.write_bytes(out.getvalue())


def _readers(table: Any) -> dict[str, Callable[[], Any]]:
    return {
        "to_arrow": lambda: table.scan().to_arrow(),
        "count": lambda: table.scan().count(),
        "plan_files": lambda: list(table.scan().plan_files()),
        "filtered to_arrow": lambda: table.scan(row_filter="id >= 0").to_arrow(),
    }


def _all_raise(table: Any, match: str) -> None:
    for name, read in _readers(table).items():
        with pytest.raises(DecodeError, match=match) as info:
            read()
        assert isinstance(info.value, FrazilError), name


def test_an_undamaged_table_reads_whole(table: Any) -> None:
    assert table.scan().to_arrow().num_rows == 15
    assert table.scan().count() == 15
    assert len(list(table.scan().plan_files())) == 2


def test_a_manifest_cut_after_its_header(table: Any) -> None:
    m = _manifest(table, 5)
    data = m.read_bytes()
    cut = data[: _header_length(data)]
    assert list(fastavro.reader(io.BytesIO(cut))) == []  # a valid, empty Avro file
    m.write_bytes(cut)
    promise = "the manifest list promises 1 added files, the file holds 0"
    _all_raise(table, rf"manifest {re.escape(str(m))}: {promise}")


def test_a_manifest_cut_between_blocks(table: Any) -> None:
    """A cut at a block boundary leaves a valid Avro file of fewer entries."""
    t = table
    t.append(_rows(range(100, 110)))
    t.rewrite_manifests()  # one manifest of 3 entries
    (row,) = _manifest_rows(t)
    m = Path(t.metadata.resolve(row["manifest_path"]))
    fm.read_manifest(m.read_bytes(), row)
    # the same entries written again, a block each
    reader = fastavro.reader(io.BytesIO(m.read_bytes()))
    records = list(reader)
    meta = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
    out = io.BytesIO()
    fastavro.writer(out, reader.writer_schema, records, metadata=meta, sync_interval=1)
    whole = out.getvalue()
    blocks = list(fastavro.block_reader(io.BytesIO(whole)))
    assert len(blocks) == 3
    m.write_bytes(whole[: blocks[1].offset])
    assert len(list(fastavro.reader(io.BytesIO(m.read_bytes())))) == 1
    _all_raise(t, rf"manifest {re.escape(str(m))}: the manifest list promises 3 existing files")


def test_a_manifest_cut_mid_block(table: Any) -> None:
    m = _manifest(table, 10)
    data = m.read_bytes()
    header = _header_length(data)
    m.write_bytes(data[: header + (len(data) - header) // 2])
    _all_raise(table, rf"manifest {re.escape(str(m))}: block at byte \d+: .*cut short\?")


def test_a_manifest_missing_its_last_sync_marker(table: Any) -> None:
    m = _manifest(table, 10)
    m.write_bytes(m.read_bytes()[:-16])
    _all_raise(table, rf"manifest {re.escape(str(m))}: block at byte \d+: truncated file")


def test_a_cut_manifest_whose_length_was_rewritten_too(table: Any) -> None:
    """The counts alone catch an empty manifest, whatever the length says."""
    m = _manifest(table, 5)
    data = m.read_bytes()
    cut = data[: _header_length(data)]
    m.write_bytes(cut)

    def shorten(r: dict[str, Any]) -> None:
        if r["manifest_path"].endswith(m.name):
            r["manifest_length"] = len(cut)

    _rewrite_list(table, shorten)
    promise = "the manifest list promises 1 added files, the file holds 0"
    _all_raise(table, rf"manifest {re.escape(str(m))}: {promise}")


@pytest.mark.parametrize(
    ("field", "says"),
    [
        ("added_files_count", "2 added files, the file holds 1"),
        ("existing_files_count", "1 existing files, the file holds 0"),
        ("deleted_files_count", "1 deleted files, the file holds 0"),
        ("added_rows_count", "6 added rows, the file's added entries hold 5"),
        ("existing_rows_count", "1 existing rows"),
        ("deleted_rows_count", "1 deleted rows"),
    ],
)
def test_a_manifest_list_with_a_tampered_count(table: Any, field: str, says: str) -> None:
    m = _manifest(table, 5)

    # v1 lists name the file counts added_data_files_count, ... (same field ids)
    def tamper(r: dict[str, Any]) -> None:
        if r["manifest_path"].endswith(m.name):
            key = field if field in r else field.replace("_files_", "_data_files_")
            r[key] = (r[key] or 0) + 1

    _rewrite_list(table, tamper)
    _all_raise(table, rf"manifest {re.escape(str(m))}: the manifest list promises {says}")


def _no_counts(r: dict[str, Any]) -> None:
    for k in list(r):
        if k.endswith("_count"):
            r[k] = None


def test_without_counts_the_length_is_held_to(table: Any) -> None:
    """v1 lists may leave the counts null: then a file shorter than ``manifest_length`` that
    holds no entries is refused; one with entries is read (lengths go stale when tools rewrite
    manifests)."""
    if table.format_version >= 2:
        pytest.skip("v2 lists require the counts")
    m = _manifest(table, 5)

    def stale(r: dict[str, Any]) -> None:
        _no_counts(r)
        r["manifest_length"] += 100

    _rewrite_list(table, stale)
    assert table.scan().count() == 15
    data = m.read_bytes()
    m.write_bytes(data[: _header_length(data)])
    promise = f"the manifest list promises a file of {len(data) + 100} bytes, the file has"
    _all_raise(table, rf"manifest {re.escape(str(m))}: {promise}")


def test_what_real_tables_disagree_on_is_read(table: Any) -> None:
    """Stale lengths (longer or shorter), counts under the entries, an entry counted under
    another status: all seen in real tables (tests/external), none is damage."""
    stale = [0, 1]

    def disagree(r: dict[str, Any]) -> None:
        r["manifest_length"] = stale.pop() * 10**6  # 1 MB, then 0
        added = "added_files_count" if "added_files_count" in r else "added_data_files_count"
        existing = added.replace("added", "existing")
        r[existing], r[added] = r[added], 0  # the added files counted as existing
        r["existing_rows_count"], r["added_rows_count"] = r["added_rows_count"], 0

    _rewrite_list(table, disagree)
    assert table.scan().count() == 15
    assert table.scan().to_arrow().num_rows == 15


def test_a_manifest_list_cut_mid_block(table: Any) -> None:
    path = _list_path(table)
    data = path.read_bytes()
    header = _header_length(data)
    for cut in (header + (len(data) - header) // 2, len(data) - 16, len(data) - 1):
        path.write_bytes(data[:cut])
        _all_raise(table, rf"{re.escape(str(path))}: block at byte \d+: truncated file")


def test_a_manifest_list_cut_between_blocks(table: Any) -> None:
    """A list of one record per Avro block, cut after its first block: a valid Avro file with
    one manifest of two. The snapshot's summary (total-data-files) tells."""
    path = _list_path(table)
    reader = fastavro.reader(io.BytesIO(path.read_bytes()))
    schema = reader.writer_schema
    metadata = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
    records = list(reader)
    assert len(records) == 2
    out = io.BytesIO()
    # sync_interval=1: every record ends its block
    fastavro.writer(out, schema, records, metadata=metadata, sync_interval=1)
    whole = out.getvalue()
    path.write_bytes(whole)
    assert table.scan().to_arrow().num_rows == 15  # the rewritten list reads whole
    sync = fastavro.reader(io.BytesIO(whole))._header["sync"]  # type: ignore[attr-defined]
    cut = whole.index(sync, _header_length(whole)) + len(sync)
    path.write_bytes(whole[:cut])
    assert len(list(fastavro.reader(io.BytesIO(whole[:cut])))) == 1  # valid Avro, shorter
    _all_raise(table, r"counts 2 live data files, its manifests hold 1")
    # a commit on top would carry forward only what it read: it refuses too
    with pytest.raises(DecodeError, match="cut short"):
        table.append(_rows(range(15, 16)))


def test_other_readers_refuse_a_cut_manifest(table: Any) -> None:
    """Metadata tables, row-level deletes (which rewrite the live manifests) and the manifest
    reading helpers raise too."""
    m = _manifest(table, 5)
    data = m.read_bytes()
    m.write_bytes(data[: _header_length(data)])
    match = rf"{re.escape(str(m))}: the manifest list promises 1 added files, the file holds 0"
    with pytest.raises(DecodeError, match=match):
        table.inspect.entries()
    with pytest.raises(DecodeError, match=match):
        table.inspect.files()
    with pytest.raises(DecodeError, match=match):
        table.delete("id = 12")
    rows = _manifest_rows(table)
    datas = [Path(table.metadata.resolve(r["manifest_path"])).read_bytes() for r in rows]
    with pytest.raises(DecodeError, match=match):
        fm.read_manifests(datas, rows)
    (row,) = [r for r in rows if r["manifest_path"].endswith(m.name)]
    with pytest.raises(DecodeError, match=match):
        fm.read_manifest(m.read_bytes(), row, path=str(m))


def _data_files(table: Any) -> list[Path]:
    return sorted(Path(table.metadata.resolve(t.file.file_path)) for t in table.scan().plan_files())


def test_expiry_keeps_the_files_of_a_cut_retained_manifest(
    table: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Expiry deletes an expired manifest's files unless a retained manifest lists them: a
    retained manifest cut short must not read as listing none (that would delete live data)."""
    files = _data_files(table)
    table.rewrite_manifests()  # one new manifest lists both files as existing
    (row,) = _manifest_rows(table)
    kept = Path(table.metadata.resolve(row["manifest_path"]))
    data = kept.read_bytes()
    kept.write_bytes(data[: _header_length(data)])
    now = int(table.current_snapshot().timestamp_ms) + 1
    table.expire_snapshots().expire_older_than(now).clean_expired_files(True).commit()
    assert len(table.metadata.snapshots) == 1
    assert all(f.exists() for f in files)
    assert f"{kept}: the manifest list promises" in caplog.text  # why expiry kept them


def test_orphan_removal_refuses_a_cut_manifest(table: Any) -> None:
    files = _data_files(table)
    m = _manifest(table, 5)
    data = m.read_bytes()
    m.write_bytes(data[: _header_length(data)])
    with pytest.raises(DecodeError, match=rf"{re.escape(str(m))}: the manifest list promises"):
        table.remove_orphan_files(older_than=2**62)
    assert all(f.exists() for f in files)
