"""An encrypted frazil table's files against the Java reference's own readers and writers
(Iceberg 1.10.2's runtime jar: StandardEncryptionManager, EncryptingFileIO, ManifestLists,
ManifestFiles, Iceberg's Parquet with modular encryption, the generic Parquet readers/writers),
with a Java KeyManagementClient over the same master key.

- Java reads frazil's manifest list (its key metadata unwrapped from frazil's snapshot key by
  the test: 1.10.2 has no manifest-list encryption), manifests (keys from the list entries'
  field 519) and Parquet-encrypted data files (keys from field 131), and gets frazil's rows.
- frazil reads a manifest and a Parquet data file that Java encrypted, through the same hooks
  its scans use."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import java_reference
import pyarrow as pa
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from peers import peer_missing

from frazil.catalog import load_catalog
from frazil.encryption.table_io import EncryptedTableFileIO, data_filesystem, file_decryption
from frazil.manifest import read_manifest
from frazil.manifest.content_file import data_files_from_entries
from frazil.table.scan.projection import open_file

pytestmark = [pytest.mark.interop]

HERE = Path(__file__).parent
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])


@pytest.fixture(scope="module")
def run_java():  # type: ignore[no-untyped-def]
    classpath = java_reference.program_classpath()
    try:
        classes = java_reference.compile_java(
            HERE / "java" / "FrazilEncryptedTableJava.java", classpath
        )
        java = java_reference._java_tool("java")
    except java_reference.ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")

    def run(mode: str, work: Path) -> list[str]:
        out = subprocess.run(
            [
                java,
                "-Xmx512m",
                "-cp",
                os.pathsep.join([str(classes), *classpath]),
                "org.apache.iceberg.FrazilEncryptedTableJava",
                mode,
                str(work),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        lines = out.stdout.splitlines()
        assert lines[-1] == "done", lines
        return lines[:-1]

    return run


def _encrypted_table(tmp_path: Path, master: bytes):  # type: ignore[no-untyped-def]
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = load_catalog(
        "c",
        type="sql",
        uri=f"sqlite:///{tmp_path}/c.db",
        warehouse=str(wh),
        **{
            "encryption.kms-impl": "frazil.encryption.InMemoryKms",
            "encryption.kms.key.master-1": base64.b64encode(master).decode(),
        },
    )
    cat.create_namespace("db")
    props = {"format-version": "3", "encryption.key-id": "master-1"}
    return cat, cat.create_table("db.t", SCHEMA, properties=props)


def test_java_reads_frazil_s_encrypted_table_files(tmp_path: Path, run_java) -> None:  # type: ignore[no-untyped-def]
    master = os.urandom(16)
    cat, t = _encrypted_table(tmp_path, master)
    t.append(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    cat.load_table("db.t").append(pa.table({"id": [3], "v": ["c"]}, schema=SCHEMA))
    md = cat.load_table("db.t").metadata
    snap = md.current_snapshot()
    assert snap is not None and snap.key_id is not None and snap.manifest_list is not None
    # The manifest list's key metadata, unwrapped as Java 1.11's decryptManifestListKeyMetadata
    # does (independently of frazil: pyca/cryptography).
    entries = {k.key_id: k for k in md.encryption_keys}
    snap_key = entries[snap.key_id]
    kek_entry = entries[snap_key.encrypted_by_id or ""]
    sealed = base64.b64decode(kek_entry.encrypted_key_metadata)
    kek = AESGCM(master).decrypt(sealed[:12], sealed[12:], None)
    sealed = base64.b64decode(snap_key.encrypted_key_metadata)
    stamp = kek_entry.properties["KEY_TIMESTAMP"].encode()
    list_km = AESGCM(kek).decrypt(sealed[:12], sealed[12:], stamp)

    work = tmp_path / "java"
    work.mkdir()
    (work / "master.key").write_bytes(master)
    (work / "list.path").write_text(snap.manifest_list)
    (work / "list.km").write_bytes(list_km)
    lines = run_java("read", work)
    assert sorted(lines) == ["row 1 a", "row 2 b", "row 3 c"]


def test_frazil_reads_java_s_encrypted_manifest_and_data_file(tmp_path: Path, run_java) -> None:  # type: ignore[no-untyped-def]
    master = os.urandom(16)
    _cat, t = _encrypted_table(tmp_path, master)
    work = tmp_path / "java"
    work.mkdir()
    (work / "master.key").write_bytes(master)
    (line,) = run_java("write", work)
    _, path, length, km_hex = line.split()
    assert int(length) == Path(path).stat().st_size  # Java's manifest_length: the stored bytes
    stored = Path(path).read_bytes()
    assert stored[:4] == b"AGS1"

    io = t.io
    assert isinstance(io, EncryptedTableFileIO)
    io.register(path, bytes.fromhex(km_hex))  # as a manifest list entry's key_metadata gives it
    entries = read_manifest(io.read(path), path=path)
    (data_file,) = data_files_from_entries(entries, 0)
    assert data_file.key_metadata is not None
    raw = Path(data_file.file_path).read_bytes()
    assert raw[:4] == raw[-4:] == b"PARE"
    fs, local = data_filesystem(io, data_file.file_path)
    with fs.open_input_file(local) as fh:
        pf = open_file(fh, "PARQUET", data_file.record_count, file_decryption(io, data_file))
        got = pf.read().to_pylist()
    assert got == [{"id": i, "v": f"java-{i}"} for i in (100, 101, 102)]
