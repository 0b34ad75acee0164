"""``remove_orphan_files``: exactly the planted unreachable files older than the threshold are
found (the oracle is the test's own list of planted files), every file the metadata reaches
stays and the table reads the same, recent and hidden files stay, paths listed outside the
table location are never deleted, and the scheme/authority rules of Java's DeleteOrphanFiles."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest
from row_data import rows

from frazil.catalog import load_catalog
from frazil.exceptions import InvalidArgumentError, ValidationError
from frazil.metadata import PartitionStatisticsFile, StatisticsFile
from frazil.partitioning import PartitionField, PartitionSpec
from frazil.schema import Schema
from frazil.table import Table
from frazil.table.maintenance.orphan_files import find_orphans, reachable_files, remove_orphan_files
from frazil.table.update.updates import SetPartitionStatisticsUpdate, SetStatisticsUpdate
from frazil.transforms import parse as parse_transform
from frazil.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "s", StringType()),
    NestedField(3, "x", DoubleType()),
    NestedField(4, "p", LongType()),
)
DAY_S = 24 * 3600


@pytest.fixture
def catalog(tmp_path: Path) -> Any:
    cat = load_catalog("w", type="filesystem", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def make(catalog: Any, version: int = 3) -> Table:
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        partition_spec=PartitionSpec(PartitionField(4, 1000, parse_transform("identity"), "p")),
        properties={"format-version": str(version), "write.delete.mode": "merge-on-read"},
    )
    for i in range(3):
        t.append(rows(i * 30, (i + 1) * 30))
    t.delete("id < 10")  # deletion vectors (v3) / position deletes (v2)
    return t


def age_all(root: str, days: float = 4) -> None:
    """Every file under root as if written ``days`` ago."""
    then = time.time() - days * DAY_S
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), (then, then))


def plant(path: str, days: float = 4) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(b"orphan")
    then = time.time() - days * DAY_S
    os.utime(path, (then, then))
    return path


def all_files(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def read(t: Table) -> list[dict[str, Any]]:
    return t.scan().to_arrow().sort_by("id").to_pylist()


@pytest.mark.parametrize("version", [2, 3])
def test_finds_exactly_the_planted_files(catalog: Any, version: int) -> None:
    t = make(catalog, version)
    loc = t.location()
    before_rows = read(t)
    age_all(loc)
    before = all_files(loc)
    planted = {
        plant(f"{loc}/data/p=1/stray-00001.parquet"),
        plant(f"{loc}/data/unpartitioned-leftover.parquet"),
        plant(f"{loc}/metadata/snap-1-1-deadbeef.avro"),
        plant(f"{loc}/metadata/deadbeef-m0.avro"),
        plant(f"{loc}/metadata/v99.metadata.json"),
        plant(f"{loc}/other/dir/x.bin"),
    }
    recent = plant(f"{loc}/data/p=1/in-flight.parquet", days=0)
    hidden = {
        plant(f"{loc}/data/p=1/.stray.parquet.crc"),
        plant(f"{loc}/_temporary/0/part.parquet"),
    }
    found = remove_orphan_files(t, dry_run=True)
    assert set(found) == planted
    assert all(os.path.exists(p) for p in planted)

    found = remove_orphan_files(t)
    assert set(found) == planted
    left = all_files(loc)
    assert left == before | {recent} | hidden
    # every file the metadata reaches is still there, and the table reads the same
    t = catalog.load_table("db.t")
    assert {p.removeprefix("file:") for p in reachable_files(t.io, t.metadata, None)} - {
        f"{loc}/metadata/version-hint.text"
    } <= left
    assert read(t) == before_rows
    assert remove_orphan_files(t) == []


def test_keeps_the_history_and_statistics(catalog: Any) -> None:
    t = make(catalog)
    loc = t.location()
    snap = t.current_snapshot()
    assert snap is not None
    stats = plant(f"{loc}/metadata/{snap.snapshot_id}-stats.puffin")
    pstats = plant(f"{loc}/metadata/partition-stats-{snap.snapshot_id}.parquet")
    with t.transaction() as tx:
        tx._stage_static(
            [
                SetStatisticsUpdate(StatisticsFile(snap.snapshot_id, stats, 6, 1)),
                SetPartitionStatisticsUpdate(PartitionStatisticsFile(snap.snapshot_id, pstats, 6)),
            ],
            [],
        )
    # expire without cleaning: the old snapshots' files stay reachable only through the
    # metadata log? no: dropped snapshots' files are orphans, the metadata files are not
    old_files = all_files(loc)
    age_all(loc)
    assert remove_orphan_files(t, dry_run=True) == []
    t.expire_snapshots().expire_older_than(int(time.time() * 1000) + 1).clean_expired_files(
        False
    ).commit()
    age_all(loc)
    found = set(remove_orphan_files(t))
    assert stats not in found and pstats not in found
    assert found  # the expired snapshots' manifest lists at least
    assert found <= old_files
    assert all(not p.endswith(".metadata.json") for p in found)  # the metadata log keeps them
    assert read(catalog.load_table("db.t"))[0]["id"] == 10


def test_older_than_and_arguments(catalog: Any) -> None:
    t = make(catalog)
    loc = t.location()
    two_days = plant(f"{loc}/data/two-days.parquet", days=2)
    assert remove_orphan_files(t, dry_run=True) == []  # default: three days
    now_ms = int(time.time() * 1000)
    assert remove_orphan_files(t, older_than=now_ms - DAY_S * 1000, dry_run=True) == [two_days]
    with pytest.raises(InvalidArgumentError, match="older_than"):
        remove_orphan_files(t, older_than="yesterday")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="prefix_mismatch_mode"):
        remove_orphan_files(t, prefix_mismatch_mode="sometimes")
    with pytest.raises(InvalidArgumentError, match="outside the table location"):
        remove_orphan_files(t, location=str(Path(loc).parent))
    # a sub-location lists only itself
    assert remove_orphan_files(t, older_than=now_ms, location=f"{loc}/data", dry_run=True) == [
        two_days
    ]
    t.transaction().set_properties({"gc.enabled": "false"}).commit_transaction()
    with pytest.raises(ValidationError, match=r"gc\.enabled"):
        remove_orphan_files(t)


class _Escaping(pafs.FileSystemHandler):
    """A local filesystem whose listing also names a file through ``..`` (as a broken or
    hostile object store listing could)."""

    def __init__(self, root: str, escaping: str) -> None:
        self._fs = pafs.LocalFileSystem()
        self._root, self._escaping = root, escaping

    def get_type_name(self) -> str:
        return "escaping"

    def get_file_info(self, paths: Any) -> Any:
        return self._fs.get_file_info(paths)

    def get_file_info_selector(self, selector: Any) -> Any:
        infos = self._fs.get_file_info(selector)
        then = time.time() - 10 * DAY_S
        return [*infos, pafs.FileInfo(self._escaping, pafs.FileType.File, size=1, mtime=then)]

    def _unused(self, *args: Any) -> Any:
        raise NotImplementedError

    # the rest of the handler interface: unused by the listing
    copy_file = create_dir = delete_dir = delete_dir_contents = delete_file = _unused
    delete_root_dir_contents = move = normalize_path = open_append_stream = _unused
    open_input_file = open_input_stream = open_output_stream = _unused


def test_listed_path_escaping_the_location_is_kept(catalog: Any, tmp_path: Path) -> None:
    t = make(catalog)
    loc = t.location()
    victim = plant(str(tmp_path / "victim.txt"), days=10)
    escaping = f"{loc}/data/{os.path.relpath(victim, f'{loc}/data')}"
    assert ".." in escaping
    fs = pafs.PyFileSystem(_Escaping(loc, escaping))
    t.io.filesystem = lambda location: (fs, os.path.abspath(location))  # type: ignore[method-assign]
    # a ``..`` segment is a dot-name, never listed (and deletion is kept inside the location)
    assert remove_orphan_files(t, prefix_mismatch_mode="delete") == []
    assert os.path.exists(victim)


def test_scheme_and_authority_rules() -> None:
    reach = {"s3://bucket/t/data/a.parquet", "/t/data/b.parquet", "s3://other/t/data/c.parquet"}
    listed = [
        "s3a://bucket/t/data/a.parquet",  # s3a = s3 by default
        "s3://anything/t/data/b.parquet",  # no scheme or authority in metadata: matches any
        "s3://bucket//t/data/d.parquet",  # not reachable
        "s3://bucket/t/data/c.parquet",  # same path under another authority
    ]
    with pytest.raises(ValidationError, match="authority 'other' vs 'bucket'"):
        find_orphans(listed, reach)
    assert find_orphans(listed, reach, prefix_mismatch_mode="ignore") == [
        "s3://bucket//t/data/d.parquet"
    ]
    assert find_orphans(listed, reach, prefix_mismatch_mode="DELETE") == sorted(
        ["s3://bucket//t/data/d.parquet", "s3://bucket/t/data/c.parquet"]
    )
    assert find_orphans(listed, reach, equal_authorities={"other,bucket": "b"}) == [
        "s3://bucket//t/data/d.parquet"
    ]
    with pytest.raises(ValidationError, match="scheme 'gs' vs 'gcs'"):
        find_orphans(["gcs://b/t/x"], {"gs://b/t/x"})
    assert find_orphans(["gcs://b/t/x"], {"gs://b/t/x"}, equal_schemes={"gcs": "gs"}) == []


def test_arrow_table_unaffected(catalog: Any) -> None:
    # the table stays writable and readable after a removal
    t = make(catalog)
    age_all(t.location())
    remove_orphan_files(t)
    t.append(rows(200, 201))
    assert len(read(t)) == 3 * 30 - 10 + 1


def test_a_commit_landing_after_the_listing_keeps_its_files(catalog: Any, tmp_path: Path) -> None:
    """Reachability is computed after the listing: a writer whose (old) file was listed as
    unreferenced and committed right after keeps it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from frazil.table.maintenance.orphan_files import list_older_than

    t = make(catalog)
    loc = t.location()
    age_all(loc)
    late = f"{loc}/data/late-writer.parquet"
    data = rows(500, 510).filter(pc.field("p") == 2)  # one partition
    required_id = pa.schema([pa.field("id", pa.int64(), nullable=False), *list(data.schema)[1:]])
    pq.write_table(data.cast(required_id), late)
    then = time.time() - 5 * DAY_S
    os.utime(late, (then, then))

    def list_then_commit(where: str, older_than: int, names: frozenset[str]) -> list[str]:
        listed = list_older_than(t.io, where, older_than, names)
        assert late in listed
        catalog.load_table("db.t").add_files([late])  # the writer commits now
        return listed

    found = remove_orphan_files(t, list_files=list_then_commit)
    assert found == [] and os.path.exists(late)
    assert 503 in {r["id"] for r in read(catalog.load_table("db.t"))}
