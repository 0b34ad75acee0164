"""frazil.spark._worker: a zipimporter skips re-reading an unchanged archive on
``invalidate_caches`` and still re-reads a changed one (what PySpark's worker does per task)."""

from __future__ import annotations

import os
import zipfile
import zipimport
from pathlib import Path

import pytest

from frazil.spark._worker import install_zip_cache_check


@pytest.mark.skipif(
    not hasattr(zipimport.zipimporter, "invalidate_caches"), reason="Python before 3.10"
)
def test_unchanged_archive_is_not_reread(tmp_path: Path) -> None:
    archive = tmp_path / "lib.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("frazil_zip_one.py", "X = 1\n")
    assert install_zip_cache_check()
    assert install_zip_cache_check()  # idempotent
    importer = zipimport.zipimporter(str(archive))
    importer.invalidate_caches()
    files = importer._files  # type: ignore[attr-defined]  # CPython's pure-Python zipimporter
    importer.invalidate_caches()
    assert importer._files is files  # type: ignore[attr-defined]
    assert importer.find_spec("frazil_zip_one") is not None

    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("frazil_zip_two.py", "Y = 2\n")
    st = archive.stat()
    os.utime(archive, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    importer.invalidate_caches()
    assert importer.find_spec("frazil_zip_two") is not None
