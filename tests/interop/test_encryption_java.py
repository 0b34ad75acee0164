"""Byte compatibility with the Java reference's encryption classes (Iceberg 1.10.2's runtime jar):
Java's AesGcmInputFile decrypts frazil's AES-GCM streams under key metadata that Java's
StandardKeyMetadata parses (both the 1.10.2 record and 1.11's with file_length), and a Java
KeyManagementClient over the same master key unwraps what InMemoryKms wrapped; frazil decrypts
Java's AesGcmOutputFile streams, parses its key metadata and unwraps its wrapped key."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import java_reference
import pytest
from peers import peer_missing

from frazil.encryption import InMemoryKms, StandardKeyMetadata, decrypt_stream, encrypt_stream

pytestmark = [pytest.mark.interop]

HERE = Path(__file__).parent
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def run_java():  # type: ignore[no-untyped-def]
    classpath = java_reference.program_classpath()
    try:
        classes = java_reference.compile_java(
            HERE / "java" / "FrazilEncryptionJava.java", classpath
        )
        java = java_reference._java_tool("java")
    except java_reference.ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")

    def run(work: Path) -> list[str]:
        out = subprocess.run(
            [
                java,
                "-Xmx512m",
                "-cp",
                os.pathsep.join([str(classes), *classpath]),
                "org.apache.iceberg.encryption.FrazilEncryptionJava",
                str(work),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.split()

    return run


def test_java_and_frazil_read_each_other(tmp_path: Path, run_java) -> None:  # type: ignore[no-untyped-def]
    master = os.urandom(16)
    (tmp_path / "master.key").write_bytes(master)
    names = []
    for size in (0, 1, MIB, MIB + 1, 2 * MIB + 5):
        for java_1_10 in (False, True):
            name = f"f_{size}_{'v110' if java_1_10 else 'v111'}"
            plain = os.urandom(size)
            km = StandardKeyMetadata(os.urandom(16), os.urandom(16))
            data = encrypt_stream(km.encryption_key, km.aad_prefix, plain)
            km = km.with_file_length(len(data))
            (tmp_path / f"{name}.bin").write_bytes(data)
            (tmp_path / f"{name}.plain").write_bytes(plain)
            (tmp_path / f"{name}.km").write_bytes(km.to_bytes(java_1_10=java_1_10))
            names.append(name)
    kms = InMemoryKms({"encryption.kms.key.m1": base64.b64encode(master).decode()})
    kek = os.urandom(16)
    (tmp_path / "f_wrapped.bin").write_bytes(kms.wrap_key(kek, "m1"))
    (tmp_path / "f_wrapped.plain").write_bytes(kek)

    lines = run_java(tmp_path)
    assert lines[-1] == "done"
    oks = {lines[i + 1] for i in range(0, len(lines) - 1, 2) if lines[i] == "ok"}
    assert oks == {*names, "f_wrapped"}, lines

    for size in (0, 1, MIB, MIB + 1, 5 * MIB // 2 + 7):
        name = f"j_{size}"
        data = (tmp_path / f"{name}.bin").read_bytes()
        km = StandardKeyMetadata.from_bytes((tmp_path / f"{name}.km").read_bytes())
        assert km.file_length is None  # 1.10.2 writes no file_length
        plain = decrypt_stream(km.encryption_key, km.aad_prefix, data, name=name)
        assert plain == (tmp_path / f"{name}.plain").read_bytes()
    wrapped = (tmp_path / "j_wrapped.bin").read_bytes()
    assert kms.unwrap_key(wrapped, "m1") == (tmp_path / "j_wrapped.plain").read_bytes()
