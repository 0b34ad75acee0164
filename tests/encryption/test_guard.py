"""Asking for encryption without a KMS is refused; an encrypted table is never read as
plaintext or garbage, nor written in plaintext."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from frazil.catalog import load_catalog
from frazil.catalog.base import Catalog
from frazil.exceptions import EncryptionError, UnsupportedError
from frazil.table.static import StaticTable

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
V3 = {"format-version": "3"}
KMS = {
    "encryption.kms-impl": "frazil.encryption.InMemoryKms",
    "encryption.kms.key.master-1": base64.b64encode(os.urandom(16)).decode(),
}


def sql(tmp_path: Path, **props: str) -> Catalog:
    wh = tmp_path / "wh"
    wh.mkdir(exist_ok=True)
    cat = load_catalog(
        "c", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(wh), **props
    )
    cat.create_namespace_if_not_exists("db")
    return cat


def test_create_with_a_key_id_and_no_kms_is_refused(tmp_path: Path) -> None:
    cat = sql(tmp_path)
    with pytest.raises(EncryptionError, match=r"'master-1'.*no KMS.*encryption.kms-impl"):
        cat.create_table("db.t", SCHEMA, properties={**V3, "encryption.key-id": "master-1"})
    assert not cat.table_exists("db.t")


def test_setting_a_key_id_without_kms_is_refused(tmp_path: Path) -> None:
    cat = sql(tmp_path)
    t = cat.create_table("db.t", SCHEMA, properties=V3)
    with pytest.raises(EncryptionError, match="no KMS"):
        with t.transaction() as tx:
            tx.set_properties({"encryption.key-id": "master-1"})
    assert "encryption.key-id" not in cat.load_table("db.t").properties


def test_a_key_the_kms_lacks_is_refused(tmp_path: Path) -> None:
    cat = sql(tmp_path, **KMS)
    with pytest.raises(EncryptionError, match=r"'other'.*does not hold"):
        cat.create_table("db.t", SCHEMA, properties={**V3, "encryption.key-id": "other"})


def test_v2_with_a_key_id_is_refused(tmp_path: Path) -> None:
    cat = sql(tmp_path, **KMS)
    with pytest.raises(EncryptionError, match="format version 3"):
        cat.create_table("db.t", SCHEMA, properties={"encryption.key-id": "master-1"})


def test_a_path_not_integrated_writes_nothing_in_plaintext(tmp_path: Path) -> None:
    # ORC data files are not encrypted (Parquet only): refused before any byte is written.
    cat = sql(tmp_path, **KMS)
    t = cat.create_table(
        "db.t",
        SCHEMA,
        properties={**V3, "encryption.key-id": "master-1", "write.format.default": "orc"},
    )
    rows = pa.table({"id": [1], "v": ["MARKER-e5f1"]}, schema=SCHEMA)
    with pytest.raises(UnsupportedError, match="encrypted; frazil writes encrypted data files"):
        t.append(rows)
    # A path that opens files itself without going through the encryption hooks is refused.
    with pytest.raises(EncryptionError, match="not integrated yet"):
        t.io.filesystem(f"{t.location()}/data/x.parquet")
    for path in (tmp_path / "wh").rglob("*"):
        if path.is_file():
            assert b"MARKER-e5f1" not in path.read_bytes(), path
    assert cat.load_table("db.t").current_snapshot() is None


def _encrypt_metadata_of(cat: Catalog, tmp_path: Path) -> str:
    """A plaintext table with one snapshot, its metadata rewritten as an encrypted table's
    (as Java 1.11 leaves it: a master key, a KEK entry, a snapshot key-id)."""
    t = cat.create_table("db.t", SCHEMA, properties=V3)
    t.append(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    loc = cat.load_table("db.t").metadata_location
    assert loc is not None
    m = json.loads(Path(loc).read_text())
    m["properties"]["encryption.key-id"] = "master-9"
    m["encryption-keys"] = [
        {"key-id": "kek-1", "encrypted-key-metadata": "AAAA", "encrypted-by-id": "master-9"},
        {"key-id": "snap-key-1", "encrypted-key-metadata": "AAAA", "encrypted-by-id": "kek-1"},
    ]
    m["snapshots"][0]["key-id"] = "snap-key-1"
    out = Path(loc).with_name("v99.metadata.json")
    out.write_text(json.dumps(m))
    return str(out)


def test_reading_an_encrypted_table_without_kms_names_the_key(tmp_path: Path) -> None:
    cat = sql(tmp_path)
    path = _encrypt_metadata_of(cat, tmp_path)
    static = StaticTable.from_metadata(path)
    assert static.metadata.encryption_keys  # the metadata JSON itself stays readable
    with pytest.raises(EncryptionError, match=r"'master-9'.*no KMS"):
        static.scan().to_arrow()
    with pytest.raises(EncryptionError, match="master-9"):
        static.inspect.files()
    cat.register_table("db.enc", path)
    with pytest.raises(EncryptionError, match=r"'master-9'.*no KMS"):
        cat.load_table("db.enc").scan().to_arrow()


def test_reading_with_a_kms_lacking_the_key_names_it(tmp_path: Path) -> None:
    cat = sql(tmp_path, **KMS)
    path = _encrypt_metadata_of(cat, tmp_path)
    cat.register_table("db.enc", path)
    with pytest.raises(EncryptionError, match="'master-9', which the catalog's KMS does not hold"):
        cat.load_table("db.enc").scan().to_arrow()


def test_plaintext_tables_are_untouched(tmp_path: Path) -> None:
    cat = sql(tmp_path)
    t = cat.create_table("db.t", SCHEMA, properties=V3)
    t.append(pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    assert cat.load_table("db.t").scan().to_arrow().num_rows == 1
