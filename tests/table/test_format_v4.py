"""Format version 4 (experimental; the spec has not adopted it): relative paths and the typed
``content_stats`` in manifests.

No peer here reads or writes v4 (the Java reference 1.10.2, PyIceberg 0.12 and DuckDB stop at
v3), so the oracles are the spec itself and independent decoding: the manifests are decoded by
fastavro (the generic Avro reader) and their field ids, offsets and typed values checked against
the spec's tables and against the v3 maps of the same data, whose binary bounds are decoded here
with ``struct`` (Appendix D).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from peers import import_peer

from frazil import manifest as fm
from frazil.catalog import load_catalog
from frazil.exceptions import (
    DecodeError,
    FrazilError,
    InvalidArgumentError,
    ParseError,
    UnsupportedError,
)
from frazil.metadata import TableMetadata
from frazil.table import StaticTable, Table
from frazil.types import LongType, StringType

fastavro = import_peer("fastavro")

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("s", pa.string()),
        ("f", pa.float64()),
        ("n", pa.int32()),
        ("d", pa.date32()),
        ("dec", pa.decimal128(9, 2)),
    ]
)


def batch(start: int, n: int) -> pa.Table:
    import datetime as dt
    import decimal

    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": ids,
            "s": [None if i % 3 == 0 else f"v{i:04d}" for i in ids],
            "f": [float("nan") if i % 5 == 0 else i / 2 for i in ids],
            "n": [i % 7 - 3 for i in ids],
            "d": [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in ids],
            "dec": [decimal.Decimal(i) / 4 for i in ids],
        },
        schema=SCHEMA,
    )


# merge-on-read: the delete writes a deletion vector, whose referenced_data_file is a path too
V4_MOR = {"format-version": "4", "write.delete.mode": "merge-on-read"}


def sql_catalog(tmp: Path, name: str = "c", **props: str) -> Any:
    cat = load_catalog(name, type="sql", uri=f"sqlite:///{tmp}/{name}.db", warehouse=f"{tmp}/wh")
    if props:
        cat = load_catalog(
            name, type="sql", uri=f"sqlite:///{tmp}/{name}.db", warehouse=f"{tmp}/wh", **props
        )
    if not cat.namespace_exists("db"):
        cat.create_namespace("db")
    return cat


def local(path: str) -> str:
    return path.removeprefix("file://")


def write_history(t: Table) -> Table:
    t.append(batch(0, 40))
    t.append(batch(40, 25))
    t.delete("id >= 10 AND id < 13")
    return t


def rows(t: Table, **scan: Any) -> list[dict[str, Any]]:
    out = sorted(t.scan(**scan).to_arrow().to_pylist(), key=lambda r: r["id"])
    for r in out:  # NaN != NaN; compare its spelling
        if r.get("f") is not None and r["f"] != r["f"]:
            r["f"] = "NaN"
    return out


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def manifests_of(t: Table) -> Iterator[tuple[str, bytes]]:
    md = t.metadata
    snap = md.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    listed = fm.read_manifest_list(
        t.io.read(md.resolve(snap.manifest_list)), location=md.paths_location
    )
    for p in listed.column("manifest_path").to_pylist():
        yield p, t.io.read(p)


# ---------------------------------------------------------------- paths and relocation


def test_v4_metadata_is_relative_and_has_no_location(tmp_path: Path) -> None:
    cat = sql_catalog(tmp_path)
    t = write_history(cat.create_table("db.t", SCHEMA, properties=V4_MOR))
    loc = t.metadata.location
    assert loc == f"file://{tmp_path}/wh/db/t"
    raw = json.loads(Path(local(t.metadata_location)).read_text())
    assert raw["format-version"] == 4 and "location" not in raw
    for s in raw["snapshots"]:
        assert s["manifest-list"].startswith("metadata/snap-"), s
    assert all(e["metadata-file"].startswith("metadata/") for e in raw["metadata-log"])
    # the raw manifest files: every path relative (fastavro, no frazil decoding)
    seen = dvs = 0
    snap = t.metadata.current_snapshot()
    assert snap is not None and snap.manifest_list is not None
    listed = list(fastavro.reader(io.BytesIO(t.io.read(t.metadata.resolve(snap.manifest_list)))))
    for m in listed:
        assert m["manifest_path"].startswith("metadata/"), m["manifest_path"]
        for e in fastavro.reader(io.BytesIO(t.io.read(f"{loc}/{m['manifest_path']}"))):
            df = e["data_file"]
            assert df["file_path"].startswith("data/"), df["file_path"]
            if df["content"] == 1:
                assert df["file_path"].endswith(".puffin")
                assert df["referenced_data_file"].startswith("data/")
                dvs += 1
            seen += 1
    assert seen >= 3 and dvs == 1


def test_moved_v4_table_reads_identically_without_rewrites(tmp_path: Path) -> None:
    cat = sql_catalog(tmp_path)
    t = write_history(cat.create_table("db.t", SCHEMA, properties=V4_MOR))
    before = rows(t)
    first = t.metadata.snapshots[0].snapshot_id
    before_first = rows(t, snapshot_id=first)
    assert len(before) == 62
    old_root = Path(local(t.metadata.location or ""))
    name = Path(local(t.metadata_location)).name

    new_root = tmp_path / "elsewhere" / "moved_t"
    shutil.copytree(old_root, new_root)
    shutil.rmtree(old_root)  # nothing may still point at the old place
    files = tree(new_root)

    other = sql_catalog(tmp_path, "other")
    # a plain path here; the table location becomes file://<new_root>
    moved = other.register_table("db.moved", str(new_root / "metadata" / name))
    assert moved.metadata.location == f"file://{new_root}"
    assert rows(moved) == before
    assert rows(moved, snapshot_id=first) == before_first
    assert rows(moved, row_filter="id >= 60") == [r for r in before if r["id"] >= 60]
    assert {
        str(Path(local(task.file.file_path)).parent.parent) for task in moved.scan().plan_files()
    } == {str(new_root)}
    # and without a catalog: the location inferred the same way
    static = StaticTable.from_metadata(str(new_root / "metadata" / name))
    assert rows(static) == before
    assert tree(new_root) == files  # read and registered; no file written or changed

    # and a commit at the new place writes there, still relative
    moved.append(batch(100, 5))
    assert len(rows(moved)) == 67
    raw = json.loads(Path(local(moved.metadata_location)).read_text())
    assert "location" not in raw and raw["snapshots"][-1]["manifest-list"].startswith("metadata/")


@pytest.mark.slow
def test_moved_v4_table_reads_from_s3(tmp_path: Path) -> None:
    """The same table copied from the local file system to an S3 bucket (moto's server): the
    other URI scheme, registered by its s3:// metadata path."""
    import_peer("moto")
    from moto.server import ThreadedMotoServer
    from test_io import _free_port  # type: ignore[import-not-found]

    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        import boto3

        endpoint = f"http://127.0.0.1:{port}"
        props = {
            "s3.endpoint": endpoint,
            "s3.access-key-id": "k",
            "s3.secret-access-key": "s",
            "s3.region": "us-east-1",
            "s3.path-style-access": "true",
        }
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="k",
            aws_secret_access_key="s",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket="bucket")
        cat = sql_catalog(tmp_path)
        t = write_history(cat.create_table("db.t", SCHEMA, properties=V4_MOR))
        before = rows(t)
        root = Path(local(t.metadata.location or ""))
        prefix = f"moved/{uuid.uuid4().hex}"
        for p in root.rglob("*"):
            if p.is_file():
                client.put_object(
                    Bucket="bucket", Key=f"{prefix}/{p.relative_to(root)}", Body=p.read_bytes()
                )
        shutil.rmtree(root)
        s3cat = sql_catalog(tmp_path, "s3cat", **props)
        name = Path(local(t.metadata_location)).name
        moved = s3cat.register_table("db.moved", f"s3://bucket/{prefix}/metadata/{name}")
        assert moved.metadata.location == f"s3://bucket/{prefix}"
        assert rows(moved) == before
        assert all(
            task.file.file_path.startswith(f"s3://bucket/{prefix}/data/")
            for task in moved.scan().plan_files()
        )
    finally:
        server.stop()
        patch.undo()


def test_upgraded_v3_table_keeps_reading_and_its_history(tmp_path: Path) -> None:
    cat = sql_catalog(tmp_path)
    t = cat.create_table("db.t", SCHEMA, properties={"format-version": "3"})
    t.append(batch(0, 30))
    t.delete("id < 3")
    v3_rows = rows(t)
    v3_snapshots = [s.snapshot_id for s in t.metadata.snapshots]
    first = v3_snapshots[0]
    with t.transaction() as tx:
        tx.upgrade_table_version(4)
    t = cat.load_table("db.t")
    assert t.metadata.format_version == 4
    assert t.metadata.location == f"file://{tmp_path}/wh/db/t"
    assert rows(t) == v3_rows
    assert [s.snapshot_id for s in t.metadata.snapshots] == v3_snapshots
    assert len(rows(t, snapshot_id=first)) == 30
    raw = json.loads(Path(local(t.metadata_location)).read_text())
    assert "location" not in raw
    # the v3 snapshots' lists are kept (not rewritten), named relative now
    assert all(s["manifest-list"].startswith("metadata/snap-") for s in raw["snapshots"])
    t.append(batch(30, 10))
    t = cat.load_table("db.t")
    assert len(rows(t)) == 37
    assert len(rows(t, row_filter="id >= 35")) == 5
    # old v3 manifests and the new v4 one side by side in the current snapshot
    versions = sorted(
        fastavro.reader(io.BytesIO(d)).metadata["format-version"] for _, d in manifests_of(t)
    )
    assert versions[0] == "3" and versions[-1] == "4"


def test_filesystem_catalog_refuses_v4(tmp_path: Path) -> None:
    cat = load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    with pytest.raises(UnsupportedError, match="format version 4"):
        cat.create_table("db.t", SCHEMA, properties={"format-version": "4"})
    t = cat.create_table("db.t3", SCHEMA, properties={"format-version": "3"})
    with pytest.raises(UnsupportedError, match="filesystem catalog"):
        with t.transaction() as tx:
            tx.upgrade_table_version(4)


def test_relative_paths_never_leave_the_table_location(tmp_path: Path) -> None:
    md = TableMetadata.from_json(
        json.dumps(
            {
                "format-version": 4,
                "table-uuid": str(uuid.uuid4()),
                "last-sequence-number": 0,
                "last-updated-ms": 0,
                "last-column-id": 0,
                "schemas": [{"type": "struct", "schema-id": 0, "fields": []}],
                "current-schema-id": 0,
                "partition-specs": [{"spec-id": 0, "fields": []}],
                "default-spec-id": 0,
                "last-partition-id": 999,
                "sort-orders": [{"order-id": 0, "fields": []}],
                "default-sort-order-id": 0,
                "next-row-id": 0,
            }
        ),
        location="s3://b/t",
    )
    assert md.resolve("data/x.parquet") == "s3://b/t/data/x.parquet"
    for bad in ("../u/x.parquet", "data/../../x", "./data/x"):
        with pytest.raises(InvalidArgumentError, match=r"'\.\.'"):
            md.resolve(bad)
    # in a manifest: the reader refuses the path rather than resolve it
    entries = fm.read_manifest(v4_manifest(tmp_path, file_path="../escape/x.parquet"))
    assert entries.column("data_file")[0]["file_path"].as_py() == "../escape/x.parquet"
    with pytest.raises(FrazilError, match=r"file_path.*'\.\.'"):
        fm.read_manifest(
            v4_manifest(tmp_path, file_path="../escape/x.parquet"), location="s3://b/t"
        )


# ---------------------------------------------------------------- content_stats


def v4_manifest(tmp_path: Path, file_path: str = "data/a.parquet") -> bytes:
    cat = sql_catalog(tmp_path, f"m{uuid.uuid4().hex[:6]}")
    t = cat.create_table(f"db.t{uuid.uuid4().hex[:6]}", SCHEMA, properties={"format-version": "3"})
    t.append(batch(0, 4))
    ((_, data),) = manifests_of(t)
    entries = fm.read_manifest(data)
    df = entries.column("data_file").combine_chunks()
    df = pa.StructArray.from_arrays(
        [
            pa.array([file_path] * len(df)) if n == "file_path" else df.field(n)
            for n in df.type.names
        ],
        fields=list(df.type),
    )
    entries = entries.set_column(
        entries.schema.get_field_index("data_file"), entries.schema.field("data_file"), df
    )
    return fm.write_manifest(
        entries,
        format_version=4,
        schema=json.dumps(t.metadata.schema().to_json()),
        partition_spec="[]",
        schema_id=0,
        partition_spec_id=0,
    )


def _decode_bound(t: str, b: bytes) -> Any:
    """Appendix D, independently of frazil."""
    if t in ("long", "date-as-long"):
        return struct.unpack("<q", b)[0]
    if t in ("int", "date"):
        return struct.unpack("<i", b)[0]
    if t == "double":
        return struct.unpack("<d", b)[0]
    if t == "string":
        return b.decode()
    if t.startswith("decimal"):
        return int.from_bytes(b, "big", signed=True)
    raise AssertionError(t)


def _metrics(entries: pa.Table) -> list[dict[str, Any]]:
    out = []
    for df in entries.column("data_file").to_pylist():
        out.append(
            {
                k: dict(df[k] or [])
                for k in (
                    "value_counts",
                    "null_value_counts",
                    "nan_value_counts",
                    "lower_bounds",
                    "upper_bounds",
                )
            }
            | {"record_count": df["record_count"]}
        )
    return out


def test_v4_manifests_hold_the_v3_metrics_as_typed_content_stats(tmp_path: Path) -> None:
    cat = sql_catalog(tmp_path)
    tables = {}
    for v in ("3", "4"):
        t = cat.create_table(f"db.t{v}", SCHEMA, properties={"format-version": v})
        t.append(batch(0, 40))
        t.append(batch(40, 25))
        tables[v] = t
    v3 = [fm.read_manifest(d) for _, d in manifests_of(tables["3"])]
    v4_raw = [d for _, d in manifests_of(tables["4"])]
    v4 = [fm.read_manifest(d) for d in v4_raw]
    v3_metrics = sorted((m for e in v3 for m in _metrics(e)), key=lambda m: m["record_count"])
    v4_metrics = sorted((m for e in v4 for m in _metrics(e)), key=lambda m: m["record_count"])
    # frazil's decoder: the same maps from either version, except that v4 has no null count
    # for a required field (the spec includes it for optional fields only; it is 0)
    id_field = tables["4"].metadata.schema().find_field("id").field_id
    for m in v3_metrics:
        assert m["null_value_counts"].pop(id_field) == 0
    assert v3_metrics == v4_metrics
    assert all(m["lower_bounds"] for m in v4_metrics)

    # the oracle: fastavro's decoding of the v4 files against the spec's id table
    field_ids = {f.name: f.field_id for f in tables["4"].metadata.schema().fields}
    types = {"id": "long", "s": "string", "f": "double", "n": "int", "d": "date", "dec": "decimal"}
    offsets = {
        "lower_bound": 1,
        "upper_bound": 2,
        "tight_bounds": 3,
        "value_count": 4,
        "null_value_count": 5,
        "nan_value_count": 6,
        "avg_value_size_in_bytes": 7,
    }
    decoded = []
    for data in v4_raw:
        reader = fastavro.reader(io.BytesIO(data))
        assert reader.metadata["format-version"] == "4"
        schema = reader.writer_schema
        df_type = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]
        df_fields = {f["name"]: f for f in df_type["fields"]}
        # the maps are gone; content_stats (146) holds them
        assert {"value_counts", "lower_bounds", "upper_bounds"}.isdisjoint(df_fields)
        cs = df_fields["content_stats"]
        assert cs["field-id"] == 146
        cs_type = next(b for b in cs["type"] if b != "null")
        by_name = {}
        reserved = {"_last_updated_sequence_number": 9000, "_row_id": 9200}
        for sf in cs_type["fields"]:
            name = sf["name"]
            if name in reserved:  # row lineage: the spec's reserved stats ids
                assert sf["field-id"] == reserved.pop(name)
                continue
            base = 10_000 + 200 * field_ids[name]
            assert sf["field-id"] == base, name
            inner = next(b for b in sf["type"] if b != "null")
            got = {c["name"]: c["field-id"] - base for c in inner["fields"]}
            for metric, offset in got.items():
                assert offsets[metric] == offset, (name, metric)
            # which metrics a field has follows the spec's "Included for" column
            assert ("null_value_count" in got) == (name != "id"), name
            assert ("nan_value_count" in got) == (name == "f"), name
            assert ("avg_value_size_in_bytes" in got) == (name == "s"), name
            by_name[name] = inner
        assert set(by_name) == set(types) and not reserved
        # typed bounds: Avro types of the field's type (int for int/date, fixed decimal, ...)
        lb = {
            n: next(c for c in t["fields"] if c["name"] == "lower_bound")["type"]
            for n, t in by_name.items()
        }
        assert lb["id"] == ["null", "long"] and lb["n"] == ["null", "int"]
        assert lb["d"][1] == {"type": "int", "logicalType": "date"}
        assert lb["dec"][1]["logicalType"] == "decimal" and lb["dec"][1]["type"] == "fixed"
        decoded.extend(reader)
    # values: fastavro's typed bounds equal the v3 binary bounds decoded with struct
    v3_by_count = {m["record_count"]: m for m in v3_metrics}
    for entry in decoded:
        df = entry["data_file"]
        m = v3_by_count[df["record_count"]]
        for name, stats in df["content_stats"].items():
            if name.startswith("_"):
                assert stats is None  # no row lineage columns in these data files
                continue
            fid = field_ids[name]
            assert stats["value_count"] == m["value_counts"][fid]
            if name != "id":
                assert stats["null_value_count"] == m["null_value_counts"][fid]
            lo, hi = stats["lower_bound"], stats["upper_bound"]
            t = types[name]
            if t == "date":
                import datetime as dt

                lo, hi = ((v - dt.date(1970, 1, 1)).days for v in (lo, hi))
            if t == "decimal":
                lo, hi = (int(v.scaleb(2)) for v in (lo, hi))
            assert lo == _decode_bound(t, m["lower_bounds"][fid]), name
            assert hi == _decode_bound(t, m["upper_bounds"][fid]), name
            assert stats["tight_bounds"] is None  # unknown: the maps do not say


def test_v4_stats_prune_like_v3(tmp_path: Path) -> None:
    cat = sql_catalog(tmp_path)
    plans = {}
    for v in ("3", "4"):
        t = cat.create_table(f"db.t{v}", SCHEMA, properties={"format-version": v})
        for k in range(4):
            t.append(batch(k * 20, 20))
        plans[v] = [
            sorted(task.file.record_count for task in t.scan(row_filter=f).plan_files())
            for f in ("id >= 50", "s = 'v0010'", "d < '2024-01-05'", "dec > 70", "f IS NAN")
        ]
    assert plans["4"] == plans["3"]
    assert plans["4"][0] == [20, 20]  # bounds pruned the first two files


def test_schema_evolution_adapts_content_stats(tmp_path: Path) -> None:
    """Spec: rewritten manifests drop stats of dropped fields, have none for added ones, and
    promote bounds of promoted types (int -> long read from the old 4-byte bound)."""
    cat = sql_catalog(tmp_path)
    t = cat.create_table(
        "db.t",
        SCHEMA,
        properties={"format-version": "4", "commit.manifest.min-count-to-merge": "2"},
    )
    t.append(batch(0, 10))
    with t.update_schema() as u:
        u.delete_column("s")
        u.update_column("n", field_type=LongType())
        u.add_column("extra", StringType())
    second = batch(10, 10).drop_columns(["s"])
    second = second.set_column(2, "n", second.column("n").cast(pa.int64()))
    t.append(second.append_column("extra", pa.array(["x"] * 10)))
    ids = {f.name: f.field_id for f in t.metadata.schema().fields}
    carried = 0
    for _, data in manifests_of(t):
        reader = fastavro.reader(io.BytesIO(data))
        assert reader.metadata["schema-id"] == "1"  # merged: every manifest is of the new schema
        df_type = next(f for f in reader.writer_schema["fields"] if f["name"] == "data_file")
        cs = next(f for f in df_type["type"]["fields"] if f["name"] == "content_stats")
        inner = next(b for b in cs["type"] if b != "null")["fields"]
        assert [f["name"] for f in inner] == [
            *("id", "f", "n", "d", "dec", "extra"),
            *("_last_updated_sequence_number", "_row_id"),
        ]
        n_lower = next(c for c in inner[2]["type"][1]["fields"] if c["name"] == "lower_bound")
        assert n_lower["type"] == ["null", "long"]
        for e in reader:
            stats = e["data_file"]["content_stats"]
            assert "s" not in stats
            if stats["extra"] is None:  # the first file, written before the change
                carried += 1
                assert stats["n"]["lower_bound"] == -3 and stats["n"]["upper_bound"] == 3
            else:
                assert stats["n"]["lower_bound"] == -3 and stats["extra"]["lower_bound"] == "x"
    assert carried == 1
    assert len(rows(t)) == 20
    assert ids["n"] == 4


def test_colliding_content_stats_ids_are_refused(tmp_path: Path) -> None:
    good = v4_manifest(tmp_path)
    reader = fastavro.reader(io.BytesIO(good))
    schema = reader.writer_schema
    records = list(reader)
    df_type = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]
    cs = next(f for f in df_type["fields"] if f["name"] == "content_stats")
    structs = next(b for b in cs["type"] if b != "null")["fields"]

    def rewrite(mutate: Any) -> bytes:
        s = json.loads(json.dumps(schema))
        d = next(f for f in s["fields"] if f["name"] == "data_file")["type"]
        c = next(f for f in d["fields"] if f["name"] == "content_stats")
        mutate(next(b for b in c["type"] if b != "null")["fields"])
        out = io.BytesIO()
        fastavro.writer(out, fastavro.parse_schema(s), records, metadata=dict(reader.metadata))
        return out.getvalue()

    assert len(structs) >= 2

    def same_base(fields: list[dict[str, Any]]) -> None:
        fields[1]["field-id"] = fields[0]["field-id"]

    def not_a_base(fields: list[dict[str, Any]]) -> None:
        fields[0]["field-id"] += 1

    def inner_out_of_range(fields: list[dict[str, Any]]) -> None:
        inner = next(b for b in fields[0]["type"] if b != "null")["fields"]
        inner[0]["field-id"] = fields[1]["field-id"] + 1

    def inner_twice(fields: list[dict[str, Any]]) -> None:
        inner = next(b for b in fields[0]["type"] if b != "null")["fields"]
        inner[1]["field-id"] = inner[0]["field-id"]

    for mutate, message in (
        (same_base, "both have id"),
        (not_a_base, "not a stats struct id"),
        (inner_out_of_range, "outside its struct's range"),
        (inner_twice, "two fields with id"),
    ):
        with pytest.raises(DecodeError, match=message):
            fm.read_manifest(rewrite(mutate))
    assert fm.read_manifest(good).num_rows == 1


def test_v4_maintenance_follows_relative_paths(tmp_path: Path) -> None:
    """Expiry, old-metadata cleanup, metadata tables and purge resolve the relative paths."""
    cat = sql_catalog(tmp_path)
    props = {
        **V4_MOR,
        "write.metadata.delete-after-commit.enabled": "true",
        "write.metadata.previous-versions-max": "1",
    }
    t = write_history(cat.create_table("db.t", SCHEMA, properties=props))
    root = Path(local(t.metadata.location or ""))
    metadata_files = sorted(p.name for p in (root / "metadata").glob("*.metadata.json"))
    assert len(metadata_files) == 2  # the current one and one previous; older ones deleted
    log = t.inspect.metadata_log_entries().column("file").to_pylist()
    assert all(p.startswith(f"file://{root}/metadata/") for p in log), log
    before = rows(t)
    files = sum(1 for p in root.rglob("*") if p.is_file())
    t.maintenance.expire_snapshots().expire_older_than(10**14).commit()
    t = cat.load_table("db.t")
    assert len(t.metadata.snapshots) == 1 and rows(t) == before
    assert sum(1 for p in root.rglob("*") if p.is_file()) < files
    cat.drop_table("db.t", purge=True)
    assert [p for p in root.rglob("*") if p.is_file()] == []


def test_v4_metadata_outside_a_metadata_directory_needs_a_location(tmp_path: Path) -> None:
    cat = sql_catalog(tmp_path)
    t = cat.create_table("db.t", SCHEMA, properties=V4_MOR)
    t.append(batch(0, 3))
    odd = tmp_path / "loose.metadata.json"
    shutil.copy(local(t.metadata_location), odd)
    with pytest.raises(ParseError, match="without a location, and none can be inferred"):
        cat.register_table("db.loose", str(odd))


def test_v4_add_files_inside_and_outside_the_location(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    cat = sql_catalog(tmp_path)
    t = cat.create_table("db.t", SCHEMA, properties=V4_MOR)
    root = Path(local(t.metadata.location or ""))
    (root / "data").mkdir(parents=True, exist_ok=True)
    inside, outside = root / "data" / "added.parquet", tmp_path / "outside.parquet"
    pq.write_table(batch(0, 3), inside)
    pq.write_table(batch(3, 2), outside)
    t.add_files([str(inside), str(outside)])
    with pytest.raises(FrazilError, match="already referenced"):
        t.add_files([str(outside)])
    assert len(rows(t)) == 5
    ((_, data),) = manifests_of(t)
    stored = sorted(e["data_file"]["file_path"] for e in fastavro.reader(io.BytesIO(data)))
    assert stored == ["data/added.parquet", f"file://{outside}"]
