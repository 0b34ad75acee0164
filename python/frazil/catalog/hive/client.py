"""Connections to a Hive Metastore: the ``uri`` list with fail-over, ``ugi``, socket timeouts,
and the metastore's errors mapped onto :mod:`frazil.exceptions`.

``uri`` is ``thrift://host:port`` or a comma-separated list of them; a connection tries each in
order until one opens (PyIceberg's and Java's fail-over). Every catalog operation opens its own
connection (Thrift clients are not thread-safe, and a commit's heartbeat runs beside it), so a
metastore that restarts between two operations costs nothing.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from frazil.exceptions import (
    CatalogBusyError,
    CatalogError,
    FrazilError,
    InvalidArgumentError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from frazil.catalog.hive._thrift.hive_metastore.ThriftHiveMetastore import Client

__all__ = ["HiveConnector", "metastore_uris"]

logger = logging.getLogger(__name__)

URI = "uri"
UGI = "ugi"
# PyIceberg's names; frazil has no Kerberos transport (see docs/catalogs/hive.md).
KERBEROS_AUTH = "hive.kerberos-authentication"
KERBEROS_SERVICE_NAME = "hive.kerberos-service-name"
# Java's Hadoop setting, in seconds (Hive's default 600 s): no call waits on a silent metastore
# longer than this.
SOCKET_TIMEOUT = "hive.metastore.client.socket.timeout"
DEFAULT_SOCKET_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 20.0


def metastore_uris(uri: str | None, catalog: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each ``thrift://host:port`` in a comma-separated ``uri``."""
    if not uri or not uri.strip():
        raise InvalidArgumentError(
            f"Hive catalog {catalog!r}: set 'uri' to thrift://host:port (several, comma-separated, "
            "for fail-over)"
        )
    out = []
    for part in (p.strip() for p in uri.split(",")):
        if not part:
            continue
        parsed = urlsplit(part)
        try:
            port = parsed.port
        except ValueError:
            port = None
        if parsed.scheme != "thrift" or not parsed.hostname or port is None:
            # Shown without user info or query: a URI may carry what is not for logs.
            shown = f"{parsed.scheme}://{parsed.hostname or ''}" if parsed.scheme else "<uri>"
            raise InvalidArgumentError(
                f"Hive catalog {catalog!r}: {shown}... is not thrift://host:port"
            )
        out.append((parsed.hostname, port))
    if not out:
        raise InvalidArgumentError(f"Hive catalog {catalog!r}: 'uri' names no metastore")
    return out


def _float(props: Mapping[str, str], key: str, default: float) -> float:
    value = props.get(key)
    if value is None:
        return default
    try:
        return float(str(value).strip().rstrip("s"))
    except ValueError:
        raise InvalidArgumentError(f"catalog property {key}={value!r} is not a number") from None


class HiveConnector:
    """Opens clients to the configured metastores (see the module docstring)."""

    def __init__(self, catalog: str, properties: Mapping[str, str]) -> None:
        self.catalog = catalog
        self.addresses = metastore_uris(properties.get(URI), catalog)
        if str(properties.get(KERBEROS_AUTH, "false")).strip().lower() == "true":
            raise UnsupportedError(
                f"Hive catalog {catalog!r}: {KERBEROS_AUTH}=true is not supported by frazil (no "
                "SASL/GSSAPI transport); reach a Kerberized metastore through a REST catalog "
                "(frazil serve or Java's) or PyIceberg"
            )
        ugi = properties.get(UGI)
        if ugi:
            user, _, groups = ugi.partition(":")
            self.ugi: tuple[str, list[str]] | None = (
                user,
                [g for g in groups.split(",") if g] if groups else [],
            )
        else:
            self.ugi = None
        self.socket_timeout_s = _float(properties, SOCKET_TIMEOUT, DEFAULT_SOCKET_TIMEOUT_S)

    def describe(self) -> str:
        """The metastores, for messages (host and port only)."""
        return ",".join(f"thrift://{h}:{p}" for h, p in self.addresses)

    def open(self) -> tuple[Any, Client]:
        """``(transport, client)``, connected to the first reachable metastore; close the
        transport when done."""
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        from frazil.catalog.hive._thrift.hive_metastore.ThriftHiveMetastore import Client

        errors = []
        for host, port in self.addresses:
            sock = TSocket.TSocket(host, port)
            sock.setTimeout(CONNECT_TIMEOUT_S * 1000)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except Exception as e:
                errors.append(f"thrift://{host}:{port}: {e}")
                logger.warning("Hive metastore thrift://%s:%d unreachable: %s", host, port, e)
                continue
            sock.setTimeout(self.socket_timeout_s * 1000)
            client = Client(TBinaryProtocol.TBinaryProtocol(transport))
            try:
                if self.ugi is not None:
                    client.set_ugi(self.ugi[0], self.ugi[1])
            except BaseException:
                transport.close()
                raise
            return transport, client
        raise CatalogBusyError(
            f"Hive catalog {self.catalog!r}: no metastore reachable ({'; '.join(errors)})"
        )

    @contextmanager
    def client(self, doing: str) -> Iterator[Client]:
        """A connected client for one operation; transport and metastore errors not handled by
        the caller come out as :class:`CatalogError` (:class:`CatalogBusyError` for those that
        may pass: a dropped connection, a timeout) naming the catalog and ``doing``."""
        transport, client = self.open()
        try:
            yield client
        except FrazilError:
            raise
        except Exception as e:
            raise self.error(e, doing) from e
        finally:
            transport.close()

    def error(self, e: BaseException, doing: str) -> CatalogError:
        from thrift.Thrift import TApplicationException
        from thrift.transport.TTransport import TTransportException

        busy = isinstance(e, (TTransportException, socket.timeout, ConnectionError, EOFError))
        message = getattr(e, "message", None) or str(e) or type(e).__name__
        cls = CatalogBusyError if busy else CatalogError
        if isinstance(e, TApplicationException) and e.type == TApplicationException.UNKNOWN_METHOD:
            message = f"the metastore does not know this call ({message})"
        return cls(
            f"Hive catalog {self.catalog!r} ({self.describe()}): {doing} failed: "
            f"{type(e).__name__}: {message}"
        )
