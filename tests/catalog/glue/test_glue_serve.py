"""``frazil serve --catalog-type glue``: the REST server in front of a Glue catalog (moto behind
the Glue emulator), credentials from the environment; a REST client's writes land in Glue as
the Glue catalog itself reads them, and the server's log shows no secret."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from aws_moto import ACCESS_KEY, REGION, SECRET_KEY, SESSION_TOKEN, GlueEmulator

from frazil.catalog import load_catalog
from frazil.catalog.glue import GlueCatalog

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from rest_server_process import ServerProcess

pytestmark = pytest.mark.slow

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})


def test_serve_over_glue(
    glue: GlueCatalog,
    glue_emulator: GlueEmulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("uvicorn")
    # The served catalog is named "frazil": its credentials come from its environment settings.
    for key, value in {
        "GLUE__ACCESS_KEY_ID": ACCESS_KEY,
        "GLUE__SECRET_ACCESS_KEY": SECRET_KEY,
        "GLUE__SESSION_TOKEN": SESSION_TOKEN,
    }.items():
        monkeypatch.setenv(f"FRAZIL_CATALOG__FRAZIL__{key}", value)
    warehouse = Path(glue.properties["warehouse"])
    args = (
        "--catalog-type",
        "glue",
        "--catalog-property",
        f"glue.endpoint={glue_emulator.url}",
        "--catalog-property",
        f"glue.region={REGION}",
    )
    with ServerProcess(warehouse, extra_args=args) as server:
        rest = load_catalog("client", uri=server.uri, credential=server.credential)
        rest.create_namespace("served_db")
        t = rest.create_table("served_db.t", ROWS.schema)
        t.append(ROWS)
        assert rest.list_tables("served_db") == [("served_db", "t")]
        direct = glue.load_table("served_db.t")
        assert direct.metadata_location == rest.load_table("served_db.t").metadata_location
        got = direct.scan().to_arrow().sort_by("id")
        assert got.column("id").to_pylist() == [1, 2, 3]
        assert got.column("name").to_pylist() == ["a", "b", "c"]
        raw = glue.glue.get_table(DatabaseName="served_db", Name="t")["Table"]
        assert raw["Parameters"]["table_type"] == "ICEBERG"
        log = server.log()
    for secret in (SECRET_KEY, SESSION_TOKEN):
        assert secret not in log
