"""The metastore table lock a Hive commit holds, as Java's ``HiveTableOperations`` takes it.

An ``EXCLUSIVE`` ``TABLE`` lock is requested with ``lock``; while it is ``WAITING`` it is polled
with ``check_lock``, the wait between polls growing from ``lock-check-min-wait-time`` to
``lock-check-max-wait-time`` (seconds, PyIceberg's names) until the lock is acquired, the
acquire timeout passes, or ``lock-check-retries`` polls were made (when set). The lock is
released with ``unlock`` on every path out, whether it was acquired or is still waiting (a
waiting request left behind would queue every later writer behind it), and while it is held a
thread heartbeats it every ``lock-heartbeat-interval-ms`` so the metastore never times out a
lock in use. A lock that cannot be had in time ends in :class:`HiveLockTimeoutError`, a
:class:`~frazil.exceptions.CatalogError` naming the lock the request waited behind and how to
proceed when its holder is gone. It is not a lost race, so the transaction does not retry it:
waiting the whole timeout again behind the same holder would only hide a stuck lock.
"""

from __future__ import annotations

import getpass
import logging
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frazil.exceptions import CatalogError, FrazilError, InvalidArgumentError

if TYPE_CHECKING:
    from types import TracebackType

    from frazil.catalog.hive._thrift.hive_metastore.ThriftHiveMetastore import Client
    from frazil.catalog.hive.client import HiveConnector

__all__ = ["HiveLockTimeoutError", "LockSettings", "TableLock", "lock_settings"]

logger = logging.getLogger(__name__)

# PyIceberg's names (seconds).
LOCK_CHECK_MIN_WAIT_TIME = "lock-check-min-wait-time"
LOCK_CHECK_MAX_WAIT_TIME = "lock-check-max-wait-time"
LOCK_CHECK_RETRIES = "lock-check-retries"
# Java's (iceberg.hive.* Hadoop settings, milliseconds); PyIceberg's win when both are set.
JAVA_LOCK_TIMEOUT_MS = "iceberg.hive.lock-timeout-ms"
JAVA_LOCK_CHECK_MIN_WAIT_MS = "iceberg.hive.lock-check-min-wait-ms"
JAVA_LOCK_CHECK_MAX_WAIT_MS = "iceberg.hive.lock-check-max-wait-ms"
JAVA_LOCK_HEARTBEAT_INTERVAL_MS = "iceberg.hive.lock-heartbeat-interval-ms"
LOCK_TIMEOUT_MS = "lock-timeout-ms"
LOCK_HEARTBEAT_INTERVAL_MS = "lock-heartbeat-interval-ms"
# Java's table property (and catalog default): false commits with Hive 4's check-and-put
# alter_table_req instead of a lock.
LOCK_ENABLED = "engine.hive.lock-enabled"

# Java's defaults: 3 minutes to acquire, polls 50 ms to 5 s apart, a heartbeat every 4 minutes
# (Hive times a lock out 5 minutes after its last heartbeat, hive.txn.timeout).
DEFAULT_TIMEOUT_S = 180.0
DEFAULT_MIN_WAIT_S = 0.05
DEFAULT_MAX_WAIT_S = 5.0
DEFAULT_HEARTBEAT_S = 240.0
BACKOFF = 1.5


class HiveLockTimeoutError(CatalogError):
    """The table lock could not be had within the configured wait; ``lock_id`` is the lock
    request frazil made (released), ``holder`` the lock it waited behind, when known."""

    def __init__(self, message: str, lock_id: int, holder: int | None) -> None:
        super().__init__(message)
        self.lock_id = lock_id
        self.holder = holder


@dataclass(frozen=True)
class LockSettings:
    min_wait_s: float
    max_wait_s: float
    retries: int | None
    timeout_s: float
    heartbeat_s: float


def _number(props: Mapping[str, str], key: str) -> float | None:
    value = props.get(key)
    if value is None or str(value).strip() == "":
        return None
    try:
        number = float(value)
    except ValueError:
        raise InvalidArgumentError(f"catalog property {key}={value!r} is not a number") from None
    if number < 0:
        raise InvalidArgumentError(f"catalog property {key}={value!r} is negative")
    return number


def lock_settings(props: Mapping[str, str]) -> LockSettings:
    def seconds(pyiceberg: str | None, millis: tuple[str, ...], default: float) -> float:
        if pyiceberg is not None and (v := _number(props, pyiceberg)) is not None:
            return v
        for key in millis:
            if (v := _number(props, key)) is not None:
                return v / 1000.0
        return default

    retries = _number(props, LOCK_CHECK_RETRIES)
    return LockSettings(
        min_wait_s=seconds(
            LOCK_CHECK_MIN_WAIT_TIME, (JAVA_LOCK_CHECK_MIN_WAIT_MS,), DEFAULT_MIN_WAIT_S
        ),
        max_wait_s=seconds(
            LOCK_CHECK_MAX_WAIT_TIME, (JAVA_LOCK_CHECK_MAX_WAIT_MS,), DEFAULT_MAX_WAIT_S
        ),
        retries=None if retries is None else int(retries),
        timeout_s=seconds(None, (LOCK_TIMEOUT_MS, JAVA_LOCK_TIMEOUT_MS), DEFAULT_TIMEOUT_S),
        heartbeat_s=max(
            0.05,
            seconds(
                None,
                (LOCK_HEARTBEAT_INTERVAL_MS, JAVA_LOCK_HEARTBEAT_INTERVAL_MS),
                DEFAULT_HEARTBEAT_S,
            ),
        ),
    )


class TableLock:
    """``with TableLock(...) as client:`` holds the exclusive lock on ``db.table`` for the block
    and yields the client the lock was taken on (the commit's own connection)."""

    def __init__(
        self, connector: HiveConnector, settings: LockSettings, db: str, table: str
    ) -> None:
        self.connector = connector
        self.settings = settings
        self.db = db
        self.table = table
        self.lock_id: int | None = None
        self.agent = f"frazil-{uuid.uuid4()}"
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._transport: Any = None
        self._client: Client | None = None

    @property
    def name(self) -> str:
        return f"{self.db}.{self.table}"

    def __enter__(self) -> Client:
        self._transport, client = self.connector.open()
        self._client = client
        try:
            self._acquire(client)
        except FrazilError:
            self._transport.close()
            raise
        except BaseException as e:
            self._transport.close()
            if isinstance(e, Exception):
                raise self.connector.error(e, f"locking table {self.name}") from e
            raise
        self._heartbeat = threading.Thread(
            target=self._beat, name=f"frazil-hive-heartbeat-{self.lock_id}", daemon=True
        )
        self._heartbeat.start()
        return client

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
        try:
            self._release(self._client)
        finally:
            self._transport.close()

    def _acquire(self, client: Client) -> None:
        from frazil.catalog.hive._thrift.hive_metastore import ttypes

        request = ttypes.LockRequest(
            component=[
                ttypes.LockComponent(
                    type=ttypes.LockType.EXCLUSIVE,
                    level=ttypes.LockLevel.TABLE,
                    dbname=self.db,
                    tablename=self.table,
                )
            ],
            user=_user(),
            hostname=socket.gethostname(),
            agentInfo=self.agent,
        )
        response = client.lock(request)
        self.lock_id = int(response.lockid)
        state = response.state
        acquired = False
        try:
            start = time.monotonic()
            wait = self.settings.min_wait_s
            checks = 0
            while state == ttypes.LockState.WAITING:
                remaining = self.settings.timeout_s - (time.monotonic() - start)
                if remaining <= 0 or (
                    self.settings.retries is not None and checks >= self.settings.retries
                ):
                    break
                time.sleep(min(wait, remaining))
                wait = min(wait * BACKOFF, self.settings.max_wait_s)
                state = client.check_lock(ttypes.CheckLockRequest(lockid=self.lock_id)).state
                checks += 1
            acquired = state == ttypes.LockState.ACQUIRED
            if not acquired:
                waited = time.monotonic() - start
                raise self._timeout_error(client, state, waited)
        finally:
            if not acquired:
                self._release(client)

    def _timeout_error(self, client: Client, state: int, waited: float) -> HiveLockTimeoutError:
        from frazil.catalog.hive._thrift.hive_metastore import ttypes

        state_name = ttypes.LockState._VALUES_TO_NAMES.get(state, str(state))
        holder = None
        described = "another lock on the table"
        try:
            locks = client.show_locks(
                ttypes.ShowLocksRequest(dbname=self.db, tablename=self.table)
            ).locks
            others = [lk for lk in locks or () if lk.lockid != self.lock_id]
            held = [lk for lk in others if lk.state == ttypes.LockState.ACQUIRED] or others
            if held:
                lk = min(held, key=lambda x: x.lockid)
                holder = int(lk.lockid)
                age = (time.time() * 1000 - (lk.lastheartbeat or 0)) / 1000.0
                described = (
                    f"lock {holder} ({ttypes.LockState._VALUES_TO_NAMES.get(lk.state)}, held by "
                    f"{lk.user}@{lk.hostname}, agent {lk.agentInfo}, last heartbeat "
                    f"{age:.0f} s ago)"
                )
        except Exception as e:  # the error below is what matters; the holder is a courtesy
            logger.warning("could not list the locks on %s: %s", self.name, e)
        if state == ttypes.LockState.WAITING:
            what = f"timed out after {waited:.1f} s waiting for the lock on table {self.name}"
        else:
            what = f"could not lock table {self.name}: the request ended {state_name}"
        recovery = (
            ""
            if holder is None
            else (
                f". If that writer is gone, a metastore that runs its housekeeping "
                f"(hive.compactor.initiator.on=true) drops the lock hive.txn.timeout (default "
                f"300 s) after its last heartbeat; otherwise, once you are sure its writer is "
                f"gone, release it with HiveCatalog.release_lock({holder})"
            )
        )
        return HiveLockTimeoutError(
            f"commit to table {self.name} failed: {what} (request lock {self.lock_id}, "
            f"released), behind {described}{recovery}",
            int(self.lock_id or 0),
            holder,
        )

    def _release(self, client: Client | None) -> None:
        """``unlock``; on a broken connection again on a fresh one. A lock that cannot be
        released is logged: the metastore times it out (hive.txn.timeout) as it gets no
        heartbeat."""
        if self.lock_id is None:
            return
        from frazil.catalog.hive._thrift.hive_metastore import ttypes

        for attempt in range(2):
            try:
                if attempt == 0 and client is not None:
                    client.unlock(ttypes.UnlockRequest(lockid=self.lock_id))
                else:
                    with self.connector.client(f"unlocking table {self.name}") as fresh:
                        fresh.unlock(ttypes.UnlockRequest(lockid=self.lock_id))
                self.lock_id = None
                return
            except ttypes.NoSuchLockException:
                self.lock_id = None
                return  # already gone (timed out or released by an operator)
            except Exception as e:
                logger.warning(
                    "unlocking lock %s of table %s failed (attempt %d): %s",
                    self.lock_id,
                    self.name,
                    attempt + 1,
                    e,
                )
        logger.error(
            "lock %s of table %s could not be released; the metastore will time it out",
            self.lock_id,
            self.name,
        )

    def _beat(self) -> None:
        from frazil.catalog.hive._thrift.hive_metastore import ttypes

        while not self._stop.wait(self.settings.heartbeat_s):
            lock_id = self.lock_id
            if lock_id is None:
                return
            try:
                with self.connector.client(f"heartbeating lock {lock_id}") as client:
                    client.heartbeat(ttypes.HeartbeatRequest(lockid=lock_id))
            except Exception as e:
                logger.warning("heartbeat of lock %s on %s failed: %s", lock_id, self.name, e)


def release_lock(connector: HiveConnector, lock_id: int) -> None:
    """Releases lock ``lock_id`` (an abandoned writer's); no error if it is gone already."""
    from frazil.catalog.hive._thrift.hive_metastore import ttypes

    with connector.client(f"releasing lock {lock_id}") as client:
        try:
            client.unlock(ttypes.UnlockRequest(lockid=int(lock_id)))
        except ttypes.NoSuchLockException:
            return
    logger.warning("released lock %s on request", lock_id)


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment (some containers)
        return "frazil"
