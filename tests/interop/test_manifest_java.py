"""Manifest lists and manifests written by the Java reference, read by frazil.

Apache Iceberg 1.10.2 (see java_reference.py) writes tables in every format version: v1 with
copy-on-write deletes, v2 with position delete files, v3 with deletion vectors and row lineage,
a partition-evolved table, and a table partitioned by identity on every type Spark can express.
Every manifest list and every manifest of every snapshot must decode, field for field, to what
fastavro decodes generically plus the spec's inheritance (tests/manifest_expected.py), and the
Java reference must read a table whose manifests frazil rewrote.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from peers import import_peer, peer_missing

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from java_reference import ReferenceUnavailable, check_available, reference_session
from manifest_expected import diff, expected_manifest, expected_manifest_list, raw_rows

pa = import_peer("pyarrow")
import_peer("fastavro")

try:
    check_available()
except ReferenceUnavailable as _e:
    peer_missing(f"the Java reference is unavailable: {_e}", module_level=True)

import frazil.manifest as fm  # noqa: E402

pytestmark = [
    pytest.mark.interop,
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

TABLES = ["v1", "v2", "v3", "evolved", "types"]

ROWS = """
SELECT id, CAST(id % 5 AS STRING) AS cat, concat('name-', CAST(id AS STRING)) AS name,
       TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 7 AS INT)) AS ts,
       CAST(id AS DOUBLE) / 3 AS x
FROM range({start}, {stop})
"""


def _build(spark: Any) -> None:
    sql = spark.sql
    cols = "id BIGINT, cat STRING, name STRING, ts TIMESTAMP, x DOUBLE"
    sql(
        f"CREATE TABLE ref.db.v1 ({cols}) USING iceberg PARTITIONED BY (cat, bucket(4, id)) "
        "TBLPROPERTIES ('format-version'='1')"
    )
    sql("INSERT INTO ref.db.v1 " + ROWS.format(start=0, stop=200))
    sql("INSERT INTO ref.db.v1 " + ROWS.format(start=200, stop=300))
    sql("DELETE FROM ref.db.v1 WHERE cat = '1'")
    sql("DELETE FROM ref.db.v1 WHERE id = 7")
    mor = (
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
        "'write.merge.mode'='merge-on-read'"
    )
    for version in (2, 3):
        name = f"ref.db.v{version}"
        sql(
            f"CREATE TABLE {name} ({cols}) USING iceberg PARTITIONED BY (days(ts)) "
            f"TBLPROPERTIES ('format-version'='{version}', {mor})"
        )
        sql(f"INSERT INTO {name} " + ROWS.format(start=0, stop=300))
        sql(f"INSERT INTO {name} " + ROWS.format(start=300, stop=400))
        sql(f"DELETE FROM {name} WHERE id % 3 = 0")
        sql(f"UPDATE {name} SET x = -x WHERE id % 5 = 1")
        sql(f"DELETE FROM {name} WHERE id % 7 = 2")
    sql(
        f"CREATE TABLE ref.db.evolved ({cols}) USING iceberg PARTITIONED BY (bucket(8, id)) "
        f"TBLPROPERTIES ('format-version'='2', {mor})"
    )
    sql("INSERT INTO ref.db.evolved " + ROWS.format(start=0, stop=100))
    sql("ALTER TABLE ref.db.evolved ADD PARTITION FIELD truncate(4, name)")
    sql("INSERT INTO ref.db.evolved " + ROWS.format(start=100, stop=200))
    sql("ALTER TABLE ref.db.evolved DROP PARTITION FIELD bucket(8, id)")
    sql("ALTER TABLE ref.db.evolved ADD PARTITION FIELD months(ts)")
    sql("INSERT INTO ref.db.evolved " + ROWS.format(start=200, stop=300))
    sql("DELETE FROM ref.db.evolved WHERE id % 4 = 0")
    sql(
        "CREATE TABLE ref.db.types (i INT, l BIGINT, s STRING, d DATE, t TIMESTAMP, "
        "tn TIMESTAMP_NTZ, dec DECIMAL(9,2), big DECIMAL(38,10), b BOOLEAN, bin BINARY, "
        "f FLOAT, db DOUBLE, v BIGINT) USING iceberg "
        "PARTITIONED BY (i, l, s, d, t, tn, dec, big, b, bin, f, db) "
        "TBLPROPERTIES ('format-version'='2')"
    )
    sql(
        "INSERT INTO ref.db.types VALUES "
        "(1, 10000000000, 'a', DATE '2024-02-29', TIMESTAMP '2024-01-01 12:00:00', "
        " TIMESTAMP_NTZ '1969-12-31 23:59:59.999999', 1.25, -12345678901234567890.0123456789,"
        " true, X'00FF', CAST(-0.0 AS FLOAT), CAST('NaN' AS DOUBLE), 1),"
        "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 2),"
        "(-5, -1, 'ü🧊', DATE '1900-01-01', TIMESTAMP '1960-06-01 00:00:00.5', "
        " TIMESTAMP_NTZ '2262-01-01 00:00:00', -0.01, 0, false, X'', CAST(0.0 AS FLOAT), "
        " CAST(-0.0 AS DOUBLE), 3)"
    )


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("warehouse")
    spark = reference_session(str(root))
    try:
        _build(spark)
        yield root, spark
    finally:
        spark.stop()


def _metadata(table_dir: Path) -> dict[str, Any]:
    hint = (table_dir / "metadata" / "version-hint.text").read_text().strip()
    return json.loads((table_dir / "metadata" / f"v{hint}.metadata.json").read_text())


def _local(path: str) -> Path:
    return Path(path.removeprefix("file:"))


@pytest.mark.parametrize("name", TABLES)
def test_java_manifests_decode_like_fastavro_plus_inheritance(warehouse, name: str) -> None:
    root, _ = warehouse
    meta = _metadata(root / "db" / name)
    assert meta["snapshots"], name
    n_manifests = 0
    contents = set()
    for snap in meta["snapshots"]:
        list_bytes = _local(snap["manifest-list"]).read_bytes()
        listed = fm.read_manifest_list(list_bytes)
        mismatches = diff(listed.to_pylist(), expected_manifest_list(list_bytes))
        assert not mismatches, mismatches[:20]
        assert listed.schema.metadata[b"snapshot-id"] == str(snap["snapshot-id"]).encode()
        for mf in listed.to_pylist():
            data = _local(mf["manifest_path"]).read_bytes()
            assert len(data) == mf["manifest_length"]
            table = fm.read_manifest(data, mf, path=mf["manifest_path"])
            mismatches = diff(raw_rows(table), expected_manifest(data, mf))
            assert not mismatches, (mf["manifest_path"], mismatches[:20])
            # without the list entry, nothing is inherited
            plain = fm.read_manifest(data)
            assert diff(raw_rows(plain), expected_manifest(data)) == []
            contents.update(table.column("data_file").combine_chunks().field("content").to_pylist())
            n_manifests += 1
    assert n_manifests > 0
    if name == "v2":
        assert 1 in contents  # position deletes
    if name == "v3":
        assert 1 in contents
        # deletion vectors: puffin files referenced by offset and size
        seen_dv = False
        for snap in meta["snapshots"]:
            for mf in fm.read_manifest_list(_local(snap["manifest-list"]).read_bytes()).to_pylist():
                t = fm.read_manifest(_local(mf["manifest_path"]).read_bytes(), mf)
                for df in t.column("data_file").to_pylist():
                    if df["file_format"].lower() == "puffin":
                        assert df["referenced_data_file"] and df["content_size_in_bytes"]
                        seen_dv = True
                    elif df["content"] == 0:
                        assert df["first_row_id"] is not None  # row lineage inherited
        assert seen_dv


# One codec per table, so every codec is read back by Java.
REWRITE_CODECS = {
    "v1": "deflate",
    "v2": "snappy",
    "v3": "zstandard",
    "evolved": "null",
    "types": "deflate",
}


def _snapshot_view(spark: Any, name: str) -> dict[str, list[str]]:
    """What Java reads from a table: rows, and the files/entries/manifests metadata tables."""
    t = f"ref.db.{name}"
    spark.sql(f"REFRESH TABLE {t}")
    out = {"rows": sorted(repr(r) for r in spark.table(t).collect())}
    out["files"] = sorted(
        repr(r) for r in spark.table(f"{t}.files").drop("readable_metrics").collect()
    )
    out["entries"] = sorted(
        repr(r) for r in spark.table(f"{t}.entries").drop("readable_metrics").collect()
    )
    manifests = spark.table(f"{t}.manifests").drop("path", "length")
    out["manifests"] = sorted(repr(r) for r in manifests.collect())
    return out


@pytest.mark.parametrize("name", TABLES)
def test_java_reads_tables_whose_manifests_frazil_rewrote(warehouse, name: str) -> None:
    root, spark = warehouse
    table_dir = root / "db" / name
    before = _snapshot_view(spark, name)
    assert before["rows"]

    hint = int((table_dir / "metadata" / "version-hint.text").read_text().strip())
    meta = _metadata(table_dir)
    version = meta["format-version"]
    codec = REWRITE_CODECS[name]
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    listed = fm.read_manifest_list(_local(snap["manifest-list"]).read_bytes())
    rows = listed.to_pylist()
    for i, mf in enumerate(rows):
        entries = fm.read_manifest(_local(mf["manifest_path"]).read_bytes())
        md = entries.schema.metadata
        data = fm.write_manifest(
            entries,
            format_version=version,
            schema=md[b"schema"].decode(),
            partition_spec=md[b"partition-spec"].decode(),
            schema_id=int(md.get(b"schema-id", b"0")),
            partition_spec_id=mf["partition_spec_id"],
            content="deletes" if mf["content"] == 1 else "data",
            codec=codec,
        )
        path = table_dir / "metadata" / f"frazil-{snap['snapshot-id']}-m{i}.avro"
        path.write_bytes(data)
        summary = fm.summarize_manifest(entries)
        # the summary frazil computes is what Java wrote
        for key in ("added_files_count", "existing_files_count", "deleted_files_count"):
            assert summary[key] == mf[key], (key, mf["manifest_path"])
        assert summary["partitions"] == mf["partitions"], mf["manifest_path"]
        mf.update({k: v for k, v in summary.items() if k != "min_sequence_number"})
        mf["manifest_path"] = f"file:{path}"
        mf["manifest_length"] = len(data)
    new_list = fm.write_manifest_list(
        pa.Table.from_pylist(rows, schema=listed.schema),
        format_version=version,
        snapshot_id=snap["snapshot-id"],
        parent_snapshot_id=snap.get("parent-snapshot-id"),
        sequence_number=snap.get("sequence-number", 0),
        first_row_id=snap.get("first-row-id"),
        codec=codec,
    )
    list_path = table_dir / "metadata" / f"snap-frazil-{snap['snapshot-id']}.avro"
    list_path.write_bytes(new_list)
    snap["manifest-list"] = f"file:{list_path}"
    (table_dir / "metadata" / f"v{hint + 1}.metadata.json").write_text(json.dumps(meta))
    (table_dir / "metadata" / "version-hint.text").write_text(str(hint + 1))

    after = _snapshot_view(spark, name)
    for key in before:
        assert after[key] == before[key], key
    # and Java really reads frazil's files
    files = spark.table(f"ref.db.{name}.all_manifests").select("path").collect()
    assert any("frazil-" in r.path for r in files)
