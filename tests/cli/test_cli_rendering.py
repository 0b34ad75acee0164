"""How ``frazil`` draws its answers: complete lines in a pipe (no cut at 80 columns, whatever
``COLUMNS`` says), fitted to a terminal (paths relative to the table location, never cut inside
a UUID), null partition values named as such, the caret of a filter parse error kept, and an
empty or missing catalog said so instead of a blank line."""

from __future__ import annotations

import re
import sys

import pyarrow as pa
import pytest
from cli_helpers import IDENT, Warehouse, frazil, run
from test_cli_terminal import terminal

from frazil.catalog import load_catalog

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def test_manifests_in_a_pipe_are_complete(wh: Warehouse) -> None:
    env = wh.env(COLUMNS="80")  # a pipe ignores it: scripts get whole lines
    r = run([sys.executable, "-m", "frazil", "manifests", IDENT], env)
    assert r.returncode == 0, r.stderr
    names = [
        p.rsplit("/", 1)[-1] for p in wh.table().inspect.manifests().column("path").to_pylist()
    ]
    for name in names:  # every manifest's file name on one line, whole
        assert any(name in line for line in r.stdout.splitlines()), (name, r.stdout)
    assert max(len(line) for line in r.stdout.splitlines()) > 80
    assert "\x1b[" not in r.stdout  # plain: no colours in a pipe


def test_files_in_a_pipe_show_whole_paths(wh: Warehouse) -> None:
    r = run([sys.executable, "-m", "frazil", "files", IDENT], wh.env(COLUMNS="60"))
    assert r.returncode == 0, r.stderr
    stored = wh.table().inspect.files().column("file_path").to_pylist()  # data and deletes
    lines = [line.split("Datafile: ", 1)[1] for line in r.stdout.splitlines() if "Datafile" in line]
    assert sorted(lines) == sorted(stored)


def test_files_and_describe_on_a_terminal_keep_uuids_whole(wh: Warehouse) -> None:
    location = wh.table().location()
    status, screen = terminal(wh, "files", IDENT)
    assert status == 0, screen
    assert f"(paths under {location})" in screen.replace("\n", "")
    datafiles = [line for line in screen.splitlines() if "Datafile: " in line]
    assert datafiles
    for line in datafiles:  # one line each, relative, its UUID whole
        shown = line.split("Datafile: ", 1)[1].strip()
        assert shown.startswith("data/") and re.search(UUID, shown), line
    status, screen = terminal(wh, "describe", IDENT)
    assert status == 0, screen
    meta = next(line for line in screen.splitlines() if "Metadata location" in line)
    assert re.search(rf"metadata/\d+-{UUID}\.metadata\.json", meta), meta


def test_null_partition_value_is_not_unpartitioned(tmp_path) -> None:  # type: ignore[no-untyped-def]
    wh = Warehouse(tmp_path / "wh", tmp_path)
    wh.path.mkdir()
    catalog = load_catalog("default", type="sql", uri=wh.uri, warehouse=str(wh.path))
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("city", pa.string())]))
    t.append(pa.table({"id": [0], "city": ["ams"]}))  # unpartitioned, spec 0
    with t.update_spec() as u:
        u.add_identity("city")
    t.append(pa.table({"id": [1, 2, 3], "city": ["ams", None, None]}))
    r = frazil(wh, "partitions", "db.t")
    assert r.returncode == 0, r.stderr
    labels = {
        m.group(1): int(m.group(2)) for m in re.finditer(r"(spec .+?)\s+\S+\s+(\d+) rows", r.stdout)
    }
    # Java's partitions table (which inspect.partitions matches) keys rows by the table's
    # partition type: the unpartitioned file and the two city=null rows share the null key.
    assert labels == {"spec 0: (unpartitioned; key city=null)": 3, "spec 1: city=ams": 1}
    t.append(pa.table({"id": [4], "city": [None]}))
    with t.update_spec() as u:
        u.add_identity("id")
    t.append(pa.table({"id": [5], "city": ["ams"]}))
    r = frazil(wh, "partitions", "db.t")
    labels = {
        m.group(1): int(m.group(2)) for m in re.finditer(r"(spec .+?)\s+\S+\s+(\d+) rows", r.stdout)
    }
    assert labels["spec 2: city=ams, id=5"] == 1, r.stdout


def test_filter_parse_error_keeps_its_caret(fresh: Warehouse) -> None:
    r = frazil(fresh, "compact", IDENT, "--where", "id < AND 3")
    assert r.returncode == 1
    lines = r.stderr.rstrip().splitlines()
    assert lines[0].startswith("frazil: error: cannot parse row filter at position 5")
    assert lines[1].strip() == "id < AND 3"
    # the caret stands under the offending token
    assert lines[2].index("^") - lines[1].index("id") == len("id < ")


def test_list_says_when_a_catalog_is_empty(tmp_path) -> None:  # type: ignore[no-untyped-def]
    wh = Warehouse(tmp_path / "wh", tmp_path)
    demo = load_catalog("demo", warehouse=str(wh.path))  # the demo's catalog name
    demo.create_namespace("db")
    r = frazil(wh, "list")
    assert r.returncode == 0
    assert r.stdout == ""  # no blank line for scripts
    assert "catalog 'default'" in r.stderr and "no namespaces" in r.stderr
    assert "also holds catalog(s) demo" in r.stderr and "--catalog" in r.stderr
    demo_args = ["--catalog", "demo", "--warehouse", str(wh.path)]
    r = frazil(wh, *demo_args, "list")
    assert r.stdout.split() == ["db"], r.stderr
    r = frazil(wh, *demo_args, "list", "db")
    assert r.stdout == "" and "namespace db holds no tables" in r.stderr


@pytest.mark.parametrize("command", [["list"], ["schema", "db.t"]])
def test_a_missing_warehouse_is_an_error_naming_it(tmp_path, command) -> None:  # type: ignore[no-untyped-def]
    wh = Warehouse(tmp_path / "wh", tmp_path)
    typo = tmp_path / "wharehouse"
    env = wh.env()
    for key in list(env):  # only --warehouse says where the catalog is
        if key.endswith(("__URI", "__WAREHOUSE")):
            env.pop(key)
    r = run([sys.executable, "-m", "frazil", "--warehouse", str(typo), *command], env)
    assert r.returncode == 1
    assert r.stderr.startswith("frazil: error: ") and f"{typo}/catalog.db" in r.stderr
    assert not typo.exists()
