"""``frazil`` run as a subprocess against a SQLite catalog (cli_helpers.py): the same output as
PyIceberg's ``pyiceberg`` where the commands are PyIceberg's, ``--output json`` parsed back and
checked against the frazil API, and one-line errors."""

from __future__ import annotations

import pytest
from cli_helpers import IDENT, Warehouse, frazil, pyiceberg

pytestmark = pytest.mark.interop  # PyIceberg is the oracle; every test starts processes


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


# ---- PyIceberg's commands: text and JSON as PyIceberg prints them

SAME_AS_PYICEBERG = [
    ["list"],
    ["list", "db"],
    ["schema", IDENT],
    ["spec", IDENT],
    ["uuid", IDENT],
    ["location", IDENT],
    ["properties", "get", "table", IDENT],
    ["properties", "get", "table", IDENT, "owner"],
    ["list-refs", IDENT],
    ["files", IDENT],
    ["files", "--history", IDENT],
]


@pytest.mark.parametrize("args", SAME_AS_PYICEBERG, ids=" ".join)
def test_text_matches_pyiceberg(wh: Warehouse, args: list[str]) -> None:
    ours, theirs = frazil(wh, *args), pyiceberg(wh, *args)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert _lines(ours.stdout) == _lines(theirs.stdout)


@pytest.mark.parametrize("args", [a for a in SAME_AS_PYICEBERG if a[0] != "files"], ids=" ".join)
def test_json_matches_pyiceberg(wh: Warehouse, args: list[str]) -> None:
    ours = frazil(wh, "--output", "json", *args).json()
    theirs = pyiceberg(wh, "--output", "json", *args).json()
    if args[0] == "list-refs":  # PyIceberg splits each ref into one row per retention value
        theirs = _merge_refs(theirs)
    assert ours == theirs


def _merge_refs(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for row in rows:
        merged.setdefault(row["name"], {}).update(row)
    return list(merged.values())


def test_describe_matches_pyiceberg(wh: Warehouse) -> None:
    ours = frazil(wh, "--output", "json", "describe", IDENT).json()
    theirs = pyiceberg(wh, "--output", "json", "describe", IDENT).json()
    assert ours["identifier"] == theirs["identifier"] == ["db", "events"]
    assert ours["metadata_location"] == theirs["metadata_location"]
    for key in ("table-uuid", "current-snapshot-id", "refs", "default-spec-id", "properties"):
        assert ours["metadata"][key] == theirs["metadata"][key], key
    assert [s["snapshot-id"] for s in ours["metadata"]["snapshots"]] == [
        s["snapshot-id"] for s in theirs["metadata"]["snapshots"]
    ]
    text, their_text = frazil(wh, "describe", IDENT), pyiceberg(wh, "describe", IDENT)
    # the rows PyIceberg prints, with the same values (frazil adds the file-size chart below)
    for label in ("Table format version", "Metadata location", "Table UUID", "Partition spec"):
        ours_row = next(line for line in _lines(text.stdout) if line.startswith(label))
        theirs_row = next(line for line in _lines(their_text.stdout) if line.startswith(label))
        assert ours_row == theirs_row
    assert "1: id: required long" in text.stdout and "Data file sizes" in text.stdout


# ---- --output json, checked against the API


def test_json_describe_and_table_values(wh: Warehouse) -> None:
    t = wh.table()
    data = frazil(wh, "--output", "json", "describe", IDENT).json()
    md = data["metadata"]
    assert md["table-uuid"] == str(t.metadata.table_uuid)
    assert md["current-snapshot-id"] == t.current_snapshot().snapshot_id
    assert len(md["partition-specs"]) == 2
    sizes = sorted(t.inspect.data_files().column("file_size_in_bytes").to_pylist())
    bins = data["data_file_sizes"]
    assert sum(b["count"] for b in bins) == len(sizes)
    assert bins[0]["lower"] == sizes[0] and bins[-1]["upper"] == sizes[-1]
    for b in bins:  # each file counted in the bin holding its size
        inside = [s for s in sizes if b["lower"] <= s < b["upper"] or s == b["upper"] == sizes[-1]]
        assert b["count"] == len(inside)
    schema = frazil(wh, "--output", "json", "schema", IDENT).json()
    assert schema == {"identifier-field-ids": [], **t.schema().to_json()}
    assert frazil(wh, "--output", "json", "spec", IDENT).json() == t.spec().to_json()
    assert frazil(wh, "--output", "json", "uuid", IDENT).json() == {
        "uuid": str(t.metadata.table_uuid)
    }
    assert frazil(wh, "--output", "json", "location", IDENT).json() == t.location()
    props = frazil(wh, "--output", "json", "properties", "get", "table", IDENT).json()
    assert props == dict(t.properties)
    ns = frazil(wh, "--output", "json", "describe", "--entity", "namespace", "db").json()
    assert ns == wh.catalog().load_namespace_properties("db") and ns["owner"] == "ops"
    assert frazil(wh, "--output", "json", "list").json() == ["db"]


def test_json_snapshots_tree(wh: Warehouse) -> None:
    t = wh.table()
    data = frazil(wh, "--output", "json", "snapshots", IDENT).json()
    refs = t.refs()
    assert data["refs"] == {
        n: {"type": r.snapshot_ref_type, "snapshot_id": r.snapshot_id} for n, r in refs.items()
    }
    assert data["refs"]["audit"]["type"] == "branch" and data["refs"]["v1"]["type"] == "tag"
    # main's chain is the snapshot log, newest first; audit forks from the second snapshot
    assert data["branches"]["main"] == [e.snapshot_id for e in reversed(t.history())]
    second = t.snapshots()[1].snapshot_id
    assert data["branches"]["audit"][1:] == data["branches"]["main"][-2:]
    assert data["branches"]["audit"][1] == second
    ops = {s["snapshot_id"]: s["operation"] for s in data["snapshots"]}
    assert ops == {s.snapshot_id: s.summary["operation"] for s in t.snapshots()}
    assert sorted(ops.values()) == ["append"] * 5 + ["delete"]


def test_json_files_manifests_partitions_history(wh: Warehouse) -> None:
    t = wh.table()
    files = frazil(wh, "--output", "json", "files", IDENT).json()
    assert [s["snapshot_id"] for s in files] == [t.current_snapshot().snapshot_id]
    listed = {f["path"]: f["status"] for m in files[0]["manifests"] for f in m["files"]}
    live = set(t.inspect.files().column("file_path").to_pylist())
    entries = t.inspect.entries()
    assert {p for p, s in listed.items() if s != "deleted"} == live
    assert len(listed) == entries.num_rows
    assert {m["content"] for m in files[0]["manifests"]} == {"data", "deletes"}
    history = frazil(wh, "--output", "json", "files", "--history", IDENT).json()
    assert [s["snapshot_id"] for s in history] == [s.snapshot_id for s in t.snapshots()]

    manifests = frazil(wh, "--output", "json", "manifests", IDENT).json()
    assert manifests == t.inspect.manifests().to_pylist()
    audit = t.refs()["audit"].snapshot_id
    by_id = frazil(wh, "--output", "json", "manifests", "--snapshot-id", str(audit), IDENT).json()
    assert [m["path"] for m in by_id] == t.inspect.manifests(audit).column("path").to_pylist()

    parts = frazil(wh, "--output", "json", "partitions", IDENT).json()
    # rows in data files minus rows deleted by position deletes = rows a scan returns
    live_rows = sum(p["record_count"] - p["position_delete_record_count"] for p in parts)
    assert live_rows == t.scan().to_arrow().num_rows == 100 + 300 + 50 - 10 + 60
    assert {(p["spec_id"], p["partition"]["city"]) for p in parts} == {
        (0, None),
        (1, "ams"),
        (1, "par"),
    }
    hist = frazil(wh, "--output", "json", "history", IDENT).json()
    assert [h["snapshot_id"] for h in hist] == [e.snapshot_id for e in t.history()]


# ---- commands that change the catalog: checked through the API and PyIceberg


def test_properties_set_remove(fresh: Warehouse) -> None:
    assert frazil(fresh, "properties", "set", "table", IDENT, "k", "v").stdout.strip() == (
        f"Set k=v on {IDENT}"
    )
    assert fresh.table().properties["k"] == "v"
    assert pyiceberg(
        fresh, "--output", "json", "properties", "get", "table", IDENT, "k"
    ).json() == ("v")
    assert frazil(
        fresh, "--output", "json", "properties", "remove", "table", IDENT, "k"
    ).json() == (f"Property k removed from {IDENT}")
    assert "k" not in fresh.table().properties
    again = frazil(fresh, "properties", "remove", "table", IDENT, "k")
    assert again.returncode == 1
    assert again.stderr == f"frazil: error: Property k does not exist on {IDENT}\n"
    frazil(fresh, "properties", "set", "namespace", "db", "team", "data").json  # noqa: B018
    assert fresh.catalog().load_namespace_properties("db")["team"] == "data"
    assert frazil(fresh, "properties", "remove", "namespace", "db", "team").returncode == 0
    assert "team" not in fresh.catalog().load_namespace_properties("db")
    missing = frazil(fresh, "properties", "get", "table", IDENT, "nope")
    assert missing.returncode == 1 and "Could not find property nope" in missing.stderr


def test_create_rename_drop(fresh: Warehouse) -> None:
    assert frazil(fresh, "create", "namespace", "other").returncode == 0
    assert frazil(fresh, "rename", IDENT, "other.renamed").stdout.strip() == (
        f"Renamed table from {IDENT} to other.renamed"
    )
    assert pyiceberg(fresh, "--output", "json", "list", "other").json() == ["other.renamed"]
    assert frazil(fresh, "drop", "table", "other.renamed").stdout.strip() == (
        "Dropped table: other.renamed"
    )
    assert not fresh.catalog().table_exists("other.renamed")
    assert frazil(fresh, "drop", "namespace", "other").returncode == 0
    assert frazil(fresh, "--output", "json", "list").json() == ["db"]


def test_expire(fresh: Warehouse) -> None:
    before = {s.snapshot_id for s in fresh.table().snapshots()}
    dry = frazil(fresh, "--output", "json", "expire", IDENT, "--older-than", "0s", "--dry-run")
    plan = dry.json()
    assert plan["dry_run"] is True and plan["expired_snapshot_ids"]
    assert {s.snapshot_id for s in fresh.table().snapshots()} == before  # nothing changed
    done = frazil(fresh, "--output", "json", "expire", IDENT, "--older-than", "0s").json()
    after = {s.snapshot_id for s in fresh.table().snapshots()}
    assert done["expired_snapshot_ids"] == plan["expired_snapshot_ids"]
    assert set(done["expired_snapshot_ids"]) == before - after
    assert set(done["retained_snapshot_ids"]) == after
    # every ref's snapshot survives: main's and v1's head, audit's head and its parent's chain
    t = fresh.table()
    assert {r.snapshot_id for r in t.refs().values()} <= after
    assert (
        pyiceberg(fresh, "--output", "json", "describe", IDENT).json()["metadata"][
            "current-snapshot-id"
        ]
        == t.current_snapshot().snapshot_id
    )
    assert t.scan().to_arrow().num_rows == 500  # the data is intact
    text = frazil(fresh, "expire", IDENT, "--older-than", "0s", "--dry-run")
    assert text.stdout.startswith("Would expire 0 of") and "━" not in text.stdout  # no bar


def test_compact(fresh: Warehouse) -> None:
    t = fresh.table()
    rows = t.scan().to_arrow().sort_by("id")
    data = frazil(fresh, "--output", "json", "compact", IDENT, "--target-file-size", "1MB").json()
    t = fresh.table()
    head = t.current_snapshot()
    assert data["snapshot_id"] == head.snapshot_id and head.summary["operation"] == "replace"
    assert data["rewritten_data_files_count"] == int(head.summary["deleted-data-files"])
    assert data["added_data_files_count"] == int(head.summary["added-data-files"])
    assert t.scan().to_arrow().sort_by("id").equals(rows)
    assert len(t.inspect.data_files()) < data["rewritten_data_files_count"] + 2
    # the old spec's files went to the current spec's partitions; a second pass merges those
    # with the partition's earlier file, then nothing is left to do
    outputs = [frazil(fresh, "compact", IDENT, "--target-file-size", "1MB").stdout.strip()]
    outputs.append(frazil(fresh, "compact", IDENT, "--target-file-size", "1MB").stdout.strip())
    assert outputs[-1] == f"Nothing to compact in {IDENT}", outputs
    assert len(fresh.table().inspect.data_files()) == 3  # one per city: ams, ber, par


def test_compute_statistics(fresh: Warehouse) -> None:
    import pyarrow.compute as pc

    pytest.importorskip("datasketches")
    rows = fresh.table().scan().to_arrow()
    data = frazil(
        fresh, "--output", "json", "compute-statistics", IDENT, "--partition-statistics"
    ).json()
    t = fresh.table()
    assert data["snapshot_id"] == t.current_snapshot().snapshot_id
    assert [f.statistics_path for f in t.metadata.statistics] == [data["statistics_path"]]
    assert [f.statistics_path for f in t.metadata.partition_statistics] == [
        data["partition_statistics_path"]
    ]
    primitive = [f.name for f in t.schema().fields if f.field_type.is_primitive]
    assert list(data["ndv"]) == primitive
    for name in primitive:  # sketches skip empty strings, as DataSketches skips empty items
        column = rows[name]
        if column.type in ("string", "large_string", "binary", "large_binary"):
            column = pc.filter(column, pc.not_equal(pc.binary_length(column), 0))
        assert data["ndv"][name] == pc.count_distinct(column).as_py(), name
    text = frazil(fresh, "compute-statistics", IDENT, "--columns", primitive[0]).stdout
    assert text.splitlines()[0].startswith(f"Statistics of {IDENT} at snapshot ")
    assert text.splitlines()[1].split() == [primitive[0], "ndv", str(data["ndv"][primitive[0]])]


# ---- errors: one line, exit code 1, no traceback unless --verbose


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["schema", "db.missing"], "db.missing"),
        (["describe", "nope.missing"], "Table or namespace does not exist: nope.missing"),
        (["schema", "nodot"], "nodot"),
        (["--uri", "http://127.0.0.1:9", "list"], "Connection refused"),
        (["expire", IDENT, "--older-than", "someday"], "--older-than"),
        (["compact", IDENT, "--target-file-size", "big"], "big"),
        (["compute-statistics", IDENT, "--columns", "nope"], "nope"),
    ],
    ids=[
        "missing table",
        "missing namespace",
        "bad identifier",
        "unreachable",
        "age",
        "size",
        "statistics column",
    ],
)
def test_errors_are_one_line(wh: Warehouse, args: list[str], message: str) -> None:
    r = frazil(wh, *args)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("frazil: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_error_json_and_verbose(wh: Warehouse) -> None:
    r = frazil(wh, "--output", "json", "schema", "db.missing")
    assert r.returncode == 1
    body = r.stdout and __import__("json").loads(r.stdout)
    assert body["type"] == "NoSuchTableError" and "db.missing" in body["message"]
    verbose = frazil(wh, "--verbose", "true", "schema", "db.missing")
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr
    assert verbose.stderr.rstrip().splitlines()[-1].startswith("frazil: error: ")
    usage = frazil(wh, "list", "--bogus")
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1


def test_entry_points(wh: Warehouse) -> None:
    import pathlib
    import sys

    from cli_helpers import run

    import frazil as frazil_package

    assert frazil(wh, "--version").stdout.strip() == frazil_package.__version__
    script = pathlib.Path(sys.executable).parent / "frazil"
    if script.exists():  # the [project.scripts] entry point of the installed package
        r = run([str(script), "--output", "json", "list"], wh.env())
        assert r.json() == ["db"]
    for command in ("serve", "demo"):
        assert frazil(wh, command, "--help").returncode == 0


def test_rewrite_manifests_and_remove_orphan_files(fresh: Warehouse) -> None:
    import os
    import time

    t = fresh.table()
    rows = t.scan().to_arrow().sort_by("id")
    data = frazil(
        fresh, "--output", "json", "rewrite-manifests", IDENT, "--target-size", "1"
    ).json()
    t = fresh.table()
    head = t.current_snapshot()
    assert data["snapshot_id"] == head.snapshot_id and head.summary["operation"] == "replace"
    assert int(head.summary["manifests-replaced"]) == len(data["rewritten_manifests"])
    assert t.scan().to_arrow().sort_by("id").equals(rows)

    stray = os.path.join(t.location().removeprefix("file:"), "data", "stray.parquet")
    with open(stray, "wb") as fh:
        fh.write(b"x")
    old = time.time() - 5 * 86400
    os.utime(stray, (old, old))
    text = frazil(fresh, "remove-orphan-files", IDENT, "--dry-run").stdout
    assert text.startswith(f"Would delete 1 orphan files of {IDENT}") and stray in text
    done = frazil(fresh, "--output", "json", "remove-orphan-files", IDENT).json()
    assert done["orphan_file_locations"][0].endswith("/data/stray.parquet")
    assert not os.path.exists(stray)
    assert fresh.table().scan().to_arrow().sort_by("id").equals(rows)
