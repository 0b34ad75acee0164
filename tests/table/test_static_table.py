"""StaticTable: a read-only table from a metadata file or a table directory, as PyIceberg's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from frazil.exceptions import NoSuchTableError, UnsupportedError
from frazil.schema import Schema
from frazil.table.static import StaticTable
from frazil.table.update import new_table_metadata
from frazil.types import LongType, NestedField


def _write_versions(tmp_path: Path, hint: str | None) -> Path:
    meta = tmp_path / "t" / "metadata"
    meta.mkdir(parents=True)
    schema = Schema(NestedField(1, "id", LongType()))
    for n, prop in ((1, "one"), (2, "two"), (10, "ten")):
        md = new_table_metadata(schema, location=str(tmp_path / "t"), properties={"v": prop})
        (meta / f"v{n}.metadata.json").write_bytes(md.to_json_bytes())
    if hint is not None:
        (meta / "version-hint.text").write_text(hint)
    return meta


def test_from_metadata_file_and_directory(tmp_path: Path) -> None:
    meta = _write_versions(tmp_path, hint="2")
    t = StaticTable.from_metadata(str(meta / "v1.metadata.json"))
    assert t.properties["v"] == "one"
    assert t.metadata_location == str(meta / "v1.metadata.json")
    # the table directory: version-hint.text names the version
    assert StaticTable.from_metadata(str(tmp_path / "t")).properties["v"] == "two"
    assert StaticTable.from_metadata(str(meta)).properties["v"] == "two"
    # an empty table scans to no rows with the table's Arrow schema
    out = t.scan().to_arrow()
    assert out.num_rows == 0 and out.schema.names == ["id"]
    assert t.scan().count() == 0


def test_without_hint_takes_the_newest_version(tmp_path: Path) -> None:
    _write_versions(tmp_path, hint=None)
    assert StaticTable.from_metadata(str(tmp_path / "t")).properties["v"] == "ten"


def test_no_metadata(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoSuchTableError, match="no metadata file"):
        StaticTable.from_metadata(str(tmp_path / "empty"))


def test_static_table_is_read_only(tmp_path: Path) -> None:
    meta = _write_versions(tmp_path, hint="1")
    t = StaticTable.from_metadata(str(meta / "v1.metadata.json"))
    for change in (
        t.transaction,
        t.refresh,
        lambda: t.update_schema().add_column("x", LongType()).commit(),
        lambda: t.update_spec().add_identity("id").commit(),
        lambda: t.add_files([]),
    ):
        with pytest.raises(UnsupportedError, match=r"read-only|static"):
            change()
    assert isinstance(t.scan().to_arrow(), pa.Table)
