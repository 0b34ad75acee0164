"""The Java reference as a REST client: Iceberg 1.10.2's Spark runtime jar lacks the shaded
Apache HttpClient 5 it uses for REST (``org.apache.iceberg.shaded.org.apache.hc...``), as it
lacks shaded Jackson. Debian's ``libhttpclient5-java`` and ``libhttpcore5-java`` jars, with their
packages renamed in every class file's constant pool (the technique of
``tests/interop/java_reference.py``), fill that in."""

from __future__ import annotations

import glob
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
import java_reference

_FROM = b"org/apache/hc/"
_TO = b"org/apache/iceberg/shaded/org/apache/hc/"
_JARS = ("httpclient5", "httpcore5", "httpcore5-h2")


def _rename(data: bytes) -> bytes:
    return data.replace(_FROM, _TO).replace(_FROM.replace(b"/", b"."), _TO.replace(b"/", b"."))


def _relocate_class(data: bytes) -> bytes:
    (count,) = struct.unpack_from(">H", data, 8)
    out = bytearray(data[:10])
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            text = _rename(data[pos + 3 : pos + 3 + length])
            out += b"\x01" + struct.pack(">H", len(text)) + text
            pos += 3 + length
            index += 1
        else:
            size = java_reference._CP_SIZES[tag]
            out += data[pos : pos + 1 + size]
            pos += 1 + size
            index += 2 if tag in (5, 6) else 1
    out += data[pos:]
    return bytes(out)


def _write(sources: list[str], dest: str) -> None:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
        for jar in sources:
            with zipfile.ZipFile(jar) as src:
                for info in src.infolist():
                    name = info.filename
                    if info.is_dir() or name.startswith("META-INF/"):
                        continue
                    data = src.read(name)
                    if name.endswith(".class"):
                        if name.endswith("module-info.class"):
                            continue
                        data = _relocate_class(data)
                    out.writestr(_rename(name.encode()).decode(), data)


# Iceberg 1.10's HTTPClient needs HttpClient 5.4+ (``TlsSocketStrategy``); Debian 12 has 5.2.
_NEEDED_CLASS = "org/apache/hc/client5/http/ssl/TlsSocketStrategy.class"


def shaded_httpclient5_jar() -> str | None:
    """The relocated HttpClient 5 jar, ``None`` when no new enough jars are installed."""
    sources = []
    for name in _JARS:
        found = sorted(glob.glob(f"/usr/share/java/{name}.jar"))
        if not found and name != "httpcore5-h2":
            return None
        sources += found
    with zipfile.ZipFile(sources[0]) as z:
        if _NEEDED_CLASS not in z.namelist():
            return None
    dest = (
        java_reference.cache_dir() / f"iceberg-shaded-hc5-{java_reference._file_key(sources)}.jar"
    )
    return str(java_reference._atomic_build(dest, lambda tmp: _write(sources, tmp)))


def rest_reference_session(warehouse: Any, **conf: str) -> Any:
    """A Java reference Spark session that can use REST catalogs (skips without the jars)."""
    import pytest
    from peers import java_reference_session

    jar = shaded_httpclient5_jar()
    if jar is None:
        # Not a peer the project installs (no registry it reaches ships HttpClient 5.4+), so
        # a skip, not a CI failure.
        pytest.skip(
            "the Java REST client needs Apache HttpClient 5.4+ (shaded away in the Iceberg "
            "runtime jar); /usr/share/java has none"
        )
    extra = ",".join([*java_reference.reference_jars(), jar])
    return java_reference_session(warehouse, **{"spark.jars": extra, **conf})
