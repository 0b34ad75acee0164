"""A real Hive Metastore for tests: the one PySpark 3.5.9's wheel ships (Hive 2.3.9, embedded
Derby), started on a free port of 127.0.0.1's machine and stopped when done.

Its schema creation (``datanucleus.schema.autoCreateAll``) leaves out the transaction and lock
tables, so locks fail with ``NEXT_LOCK_ID does not exist``; in test mode (``hive.in.test``) the
metastore creates them on the first transaction call, but then refuses the lock requests clients
send. So the first start is in test mode with one ``show_locks`` call, and the second, on the same
Derby database, is not. The metastore listens on every interface; tests connect to 127.0.0.1
only.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

# Spark's own --add-opens set for Java 17 (the metastore's DataNucleus and Derby need them).
_ADD_OPENS = [
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in (
        "java.lang",
        "java.lang.invoke",
        "java.lang.reflect",
        "java.io",
        "java.net",
        "java.nio",
        "java.util",
        "java.util.concurrent",
        "java.util.concurrent.atomic",
        "sun.nio.ch",
        "sun.nio.cs",
        "sun.security.action",
        "sun.util.calendar",
    )
]
START_TIMEOUT_S = 120


class MetastoreUnavailable(RuntimeError):
    """Java or PySpark's jars are missing (the tests then skip, or fail under CI=true)."""


def pyspark_jars() -> Path:
    try:
        import pyspark
    except ImportError as e:
        raise MetastoreUnavailable(f"PySpark is not installed: {e}") from None
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise MetastoreUnavailable(f"no hive-metastore jar in {jars}")
    return jars


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Metastore:
    """One metastore process; ``uri`` is ``thrift://127.0.0.1:<port>``."""

    root: Path
    txn_timeout_s: int = 300
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> str:
        return (self.root / "warehouse").as_uri()

    def _command(self, in_test: bool) -> list[str]:
        java = shutil.which("java")
        if java is None:
            raise MetastoreUnavailable("no java on PATH")
        derby = self.root / "metastore_db"
        props = {
            "hive.async.log.enabled": "false",
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={derby};create=true",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": self.warehouse,
            "hive.txn.timeout": f"{self.txn_timeout_s}s",
            "derby.system.home": str(self.root),
            "hive.in.test": "true" if in_test else "false",
        }
        return [
            java,
            "-Xmx384m",
            "-XX:+IgnoreUnrecognizedVMOptions",
            *_ADD_OPENS,
            *(f"-D{k}={v}" for k, v in props.items()),
            "-cp",
            f"{pyspark_jars()}/*",
            "org.apache.hadoop.hive.metastore.HiveMetaStore",
            "-p",
            str(self.port),
        ]

    def _start(self, in_test: bool) -> None:
        self.port = free_port()
        self.log = self.root / f"metastore{'-test' if in_test else ''}.log"
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                self._command(in_test),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.root,
                env={**os.environ, "HADOOP_USER_NAME": os.environ.get("USER", "frazil")},
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the metastore exited with {self.process.returncode}: "
                    f"{self.log.read_text(errors='replace')[-3000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the metastore did not listen within {START_TIMEOUT_S} s")

    def start(self) -> Metastore:
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "warehouse").mkdir(exist_ok=True)
        self._start(in_test=True)
        try:
            _create_lock_tables(self.port)
        finally:
            self.stop()
        self._start(in_test=False)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.process = None


def _create_lock_tables(port: int) -> None:
    """One transaction call in test mode, which makes the metastore create its lock tables."""
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    from frazil.catalog.hive._thrift.hive_metastore import ThriftHiveMetastore, ttypes

    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
        try:
            transport.open()
            client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
            client.show_locks(ttypes.ShowLocksRequest())
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
        finally:
            transport.close()
