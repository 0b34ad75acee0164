"""``java/FrazilRestServer.java`` as a subprocess for the REST client interop tests: compiled with
javac against the reference's jars, started on a free loopback port, stopped by closing stdin."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from peers import peer_missing

SERVER_SOURCE = Path(__file__).resolve().parent / "java" / "FrazilRestServer.java"


@contextmanager
def java_rest_server(warehouse: Path, *args: str) -> Iterator[str]:
    """The server's base URI; ``args`` after the warehouse (``"views"``: an InMemoryCatalog
    with the view endpoints)."""
    import java_reference

    try:
        cp = java_reference.program_classpath()
        classes = java_reference.compile_java(SERVER_SOURCE, cp)
        java = java_reference._java_tool("java")
    except java_reference.ReferenceUnavailable as e:
        peer_missing(f"the Java reference is unavailable: {e}")
    proc = subprocess.Popen(
        [
            java,
            "-Xmx512m",
            "-cp",
            os.pathsep.join([str(classes), *cp]),
            "FrazilRestServer",
            str(warehouse),
            *args,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), f"the Java REST server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
