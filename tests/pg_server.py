"""A private PostgreSQL server for tests: its own data directory, port and socket directory.

``PostgresServer`` runs Debian's ``initdb``/``pg_ctl`` (``/usr/lib/postgresql/<v>/bin``) with
trust authentication on 127.0.0.1 and fsync off. PostgreSQL refuses to run as root, so as root
the data directory belongs to the ``postgres`` user and the tools run as that user.

Use it through a pytest fixture (``tests/catalog/conftest.py`` has ``postgres_url``)::

    with PostgresServer() as server:
        url = server.create_database("test")   # postgresql+psycopg://postgres@127.0.0.1:<port>/test
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence

__all__ = ["PostgresServer", "find_pg_bin"]


def find_pg_bin() -> str | None:
    """The newest installed server's bin directory, or ``None``."""
    env = os.environ.get("FRAZIL_TEST_PG_BIN")
    if env:
        return env
    dirs = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda d: int(d.split("/")[-2]) if d.split("/")[-2].isdigit() else 0,
    )
    dirs = [d for d in dirs if os.path.exists(os.path.join(d, "pg_ctl"))]
    if dirs:
        return dirs[-1]
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    def __init__(self, bin_dir: str | None = None, user: str = "postgres") -> None:
        found = bin_dir or find_pg_bin()
        if found is None:
            raise RuntimeError("no PostgreSQL server installation found (initdb, pg_ctl)")
        self.bin_dir = found
        self.os_user: str | None = None
        if os.geteuid() == 0:
            self.os_user = user  # the server will not run as root
        self.db_user = "postgres"
        self.port = 0
        self.base: str | None = None

    @property
    def data_dir(self) -> str:
        assert self.base is not None
        return os.path.join(self.base, "data")

    @property
    def socket_dir(self) -> str:
        assert self.base is not None
        return os.path.join(self.base, "sock")

    def _run(self, args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [os.path.join(self.bin_dir, args[0]), *args[1:]]
        kwargs: dict[str, object] = {}
        if self.os_user is not None:
            pw = pwd.getpwnam(self.os_user)
            kwargs.update(user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
            kwargs["env"] = {**os.environ, "HOME": pw.pw_dir, "USER": self.os_user}
        result = subprocess.run(
            cmd, capture_output=True, text=True, cwd=self.base, check=False, **kwargs
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
            )
        return result

    def start(self) -> PostgresServer:
        self.base = tempfile.mkdtemp(prefix="frazil-pg-")
        os.makedirs(self.socket_dir)
        if self.os_user is not None:
            pw = pwd.getpwnam(self.os_user)
            os.chmod(self.base, 0o755)
            for d in (self.base, self.socket_dir):
                os.chown(d, pw.pw_uid, pw.pw_gid)
        self._run(
            [
                "initdb",
                "-D",
                self.data_dir,
                "-U",
                self.db_user,
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ]
        )
        self.port = _free_port()
        options = (
            f"-p {self.port} -h 127.0.0.1 -k {self.socket_dir} -F "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            [
                "pg_ctl",
                "-D",
                self.data_dir,
                "-l",
                os.path.join(self.base, "server.log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ]
        )
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.db_user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Creates an empty database; returns its SQLAlchemy URL."""
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.db_user, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.base is None:
            return
        try:
            if os.path.exists(os.path.join(self.data_dir, "postmaster.pid")):
                self._run(["pg_ctl", "-D", self.data_dir, "-m", "immediate", "-w", "stop"], False)
        finally:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---- pytest fixtures: import both into a conftest.py to use them
# (``from pg_server import postgres_server, postgres_url``, marked as re-exports for ruff).

try:
    import pytest
except ImportError:  # pragma: no cover - the module is also usable without pytest
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    import itertools
    from collections.abc import Iterator

    from peers import peer_missing  # skips, or fails under CI=true

    _db_counter = itertools.count()

    @pytest.fixture(scope="session")
    def postgres_server() -> Iterator[PostgresServer]:
        """One private PostgreSQL server for the test session (skips if none is installed)."""
        if find_pg_bin() is None:
            peer_missing("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
        server = PostgresServer().start()
        try:
            yield server
        finally:
            server.stop()

    @pytest.fixture
    def postgres_url(postgres_server: PostgresServer) -> str:
        """The SQLAlchemy URL of a new, empty database on the session's server."""
        return postgres_server.create_database(f"t{os.getpid()}_{next(_db_counter)}")
