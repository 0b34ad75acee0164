"""``frazil serve`` as its own process for tests: a free loopback port, an OAuth2 client from an
auth config file, and a clean shutdown (SIGTERM, then the server's graceful exit).

    with ServerProcess(tmp_path / "warehouse") as server:
        RestCatalog("x", uri=server.uri, credential=server.credential)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

__all__ = ["ServerProcess", "free_port"]

CLIENT_ID = "tests"
CLIENT_SECRET = "s3cr3t-for-tests"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    def __init__(
        self,
        warehouse: Path,
        *,
        catalog_uri: str | None = None,
        extra_args: tuple[str, ...] = (),
        startup_timeout: float = 60.0,
    ) -> None:
        self.warehouse = Path(warehouse)
        self.catalog_uri = catalog_uri
        self.extra_args = extra_args
        self.startup_timeout = startup_timeout
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.credential = f"{CLIENT_ID}:{CLIENT_SECRET}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.warehouse.parent / f"frazil-serve-{self.port}.log"

    def _auth_config(self) -> Path:
        path = self.warehouse.parent / f"frazil-serve-auth-{self.port}.yaml"
        path.write_text(
            f"clients:\n  - id: {CLIENT_ID}\n    secret: {CLIENT_SECRET}\n"
            "token-lifetime-seconds: 3600\n"
        )
        return path

    def __enter__(self) -> ServerProcess:
        self.warehouse.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "frazil",
            "serve",
            "--warehouse",
            str(self.warehouse),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--auth-config",
            str(self._auth_config()),
            *self.extra_args,
        ]
        if self.catalog_uri:
            cmd += ["--catalog-uri", self.catalog_uri]
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"frazil serve exited at startup:\n{self.log()}")
            try:
                # Unauthenticated: any HTTP answer (401 included) means it is listening.
                urllib.request.urlopen(f"{self.uri}/v1/config", timeout=2).close()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    raise RuntimeError(f"frazil serve did not start:\n{self.log()}") from None
                time.sleep(0.1)
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if os.environ.get("FRAZIL_TEST_SERVER_LOG"):
            print(self.log())
