"""A minimal catalog and local FileIO for the snapshot producer's tests (until the real catalogs
land): commit = check the requirements against the current metadata, apply the updates, write
the new metadata file, move the pointer. A hook can run another writer's commit first, to make
the next commit lose the race."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.fs
import pyarrow.parquet as pq

from frazil.catalog import CommitTableResponse
from frazil.io import FileIO
from frazil.manifest.content_file import DataFile
from frazil.metadata import TableMetadata
from frazil.table import Table
from frazil.table.update import update_table_metadata


class LocalIO(FileIO):
    def read(self, location: str) -> bytes:
        with open(location, "rb") as f:
            return f.read()

    def write(self, location: str, data: bytes, *, overwrite: bool = False) -> None:
        os.makedirs(os.path.dirname(location), exist_ok=True)
        with open(location, "wb" if overwrite else "xb") as f:
            f.write(data)

    def exists(self, location: str) -> bool:
        return os.path.exists(location)

    def delete(self, location: str) -> None:
        try:
            os.remove(location)
        except FileNotFoundError:
            pass

    def size(self, location: str) -> int:
        return os.path.getsize(location)

    def list_prefix(self, prefix: str) -> list[str]:
        out = []
        for root, _, files in os.walk(prefix):
            out.extend(os.path.join(root, f) for f in files)
        return sorted(out)

    def filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return pyarrow.fs.LocalFileSystem(), location

    def read_many(self, locations: Sequence[str], max_workers: int | None = None) -> list[bytes]:
        return [self.read(p) for p in locations]

    def delete_many(self, locations: Iterable[str], max_workers: int | None = None) -> None:
        for p in locations:
            self.delete(p)


class FakeCatalog:
    def __init__(self) -> None:
        self.io = LocalIO()
        self.pointers: dict[tuple[str, ...], str] = {}
        self.before_commit: Callable[[], None] | None = None
        self.commits = 0
        self.failed_commits = 0

    def create(self, name: str, metadata: TableMetadata) -> Table:
        ident = (name,)
        loc = f"{metadata.location}/metadata/00000-{uuid.uuid4()}.metadata.json"
        self.io.write(loc, metadata.to_json_bytes())
        self.pointers[ident] = loc
        return self.load_table(ident)

    def load_table(self, identifier: Any) -> Table:
        ident = tuple(identifier)
        loc = self.pointers[ident]
        return Table(ident, TableMetadata.from_json(self.io.read(loc)), loc, self.io, self)  # type: ignore[arg-type]

    def commit_table(self, table: Table, requirements: Sequence[Any], updates: Sequence[Any]):
        if self.before_commit is not None:
            hook, self.before_commit = self.before_commit, None
            hook()
        ident = tuple(table.identifier)
        loc = self.pointers[ident]
        current = TableMetadata.from_json(self.io.read(loc))
        try:
            for r in requirements:
                r.validate(current)
        except Exception:
            self.failed_commits += 1
            raise
        new = update_table_metadata(current, updates, previous_metadata_location=loc)
        n = int(os.path.basename(loc).split("-")[0]) + 1
        new_loc = f"{new.location}/metadata/{n:05d}-{uuid.uuid4()}.metadata.json"
        self.io.write(new_loc, new.to_json_bytes())
        self.pointers[ident] = new_loc
        self.commits += 1
        return CommitTableResponse(new, new_loc)


def write_parquet(
    path: str,
    ids: list[int],
    category: str = "a",
    spec_id: int = 0,
    partition: tuple[Any, ...] = (),
) -> DataFile:
    """A data file of the test schema (id long, category string) with Iceberg field ids."""
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), False, metadata={b"PARQUET:field_id": b"1"}),
            pa.field("category", pa.string(), True, metadata={b"PARQUET:field_id": b"2"}),
        ]
    )
    table = pa.table({"id": ids, "category": [category] * len(ids)}, schema=schema)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path)
    return DataFile(
        file_path=path,
        file_format="PARQUET",
        partition=partition,
        record_count=len(ids),
        file_size_in_bytes=os.path.getsize(path),
        spec_id=spec_id,
        value_counts={1: len(ids), 2: len(ids)},
        null_value_counts={1: 0, 2: 0},
    )


def write_position_deletes(
    path: str, deletes: list[tuple[str, int]], partition: tuple[Any, ...] = ()
) -> DataFile:
    """A position delete file (spec "Position Delete Files")."""
    schema = pa.schema(
        [
            pa.field(
                "file_path", pa.string(), False, metadata={b"PARQUET:field_id": b"2147483546"}
            ),
            pa.field("pos", pa.int64(), False, metadata={b"PARQUET:field_id": b"2147483545"}),
        ]
    )
    table = pa.table(
        {"file_path": [p for p, _ in deletes], "pos": [i for _, i in deletes]}, schema=schema
    )
    pq.write_table(table, path)
    return DataFile(
        file_path=path,
        file_format="PARQUET",
        partition=partition,
        record_count=len(deletes),
        file_size_in_bytes=os.path.getsize(path),
        content=1,
    )
