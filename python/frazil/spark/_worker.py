"""Executor-side help for PySpark's Python workers.

PySpark's worker calls ``importlib.invalidate_caches()`` at the start of every task. Since
Python 3.10 that makes every ``zipimporter`` on ``sys.path_importer_cache`` re-read its whole
archive's directory, and a worker holds one per package directory it imported from inside
``pyspark.zip``: about 80 ms of CPU per task on a small machine, whatever the task does (an
empty ``mapInArrow`` over 16 partitions costs 1.4 CPU-seconds in Python workers; with this patch
0.5). :func:`install_zip_cache_check` makes a zipimporter skip the re-read while its archive's
modification time and size are unchanged; a changed or replaced archive is still re-read.

Installed by frazil's Spark readers when a worker runs their first task, so the worker's
later tasks start without the cost.
"""

from __future__ import annotations

import logging
import os
import zipimport
from typing import Any

log = logging.getLogger(__name__)

_STAMP = "_frazil_archive_stamp"


def install_zip_cache_check() -> bool:
    """Patches ``zipimport.zipimporter.invalidate_caches`` (idempotent); False where the
    method does not exist (Python before 3.10) or cannot be patched."""
    cls: Any = zipimport.zipimporter
    original = getattr(cls, "invalidate_caches", None)
    if original is None:
        return False
    if getattr(original, "__frazil_original__", None) is not None:
        return True

    def invalidate_caches(self: Any) -> None:
        try:
            st = os.stat(self.archive)
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except (OSError, AttributeError):
            stamp = None
        if stamp is not None and getattr(self, _STAMP, None) == stamp:
            return
        original(self)
        try:
            setattr(self, _STAMP, stamp)
        except AttributeError:  # pragma: no cover - a zipimporter without a __dict__
            pass

    invalidate_caches.__dict__["__frazil_original__"] = original
    invalidate_caches.__doc__ = original.__doc__
    try:
        cls.invalidate_caches = invalidate_caches
    except TypeError:  # pragma: no cover - a C zipimporter
        return False
    return True


def prepare_worker() -> None:
    """What a frazil task does first on an executor (never fails the task)."""
    try:
        install_zip_cache_check()
    except Exception:  # pragma: no cover - an optimization only
        log.debug("could not install the zipimport cache check", exc_info=True)
