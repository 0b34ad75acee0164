"""Where the real-world fixtures are: ``$FRAZIL_EXTERNAL_FIXTURES``, else ``../shared/
external-fixtures`` beside the repository (as on the project's machines and CI runners).

They are other projects' public test tables, kept out of this repository. A test that needs them
and finds them missing skips, also under ``CI=true``: unlike the pip-installed peers, the folder
lives outside any checkout, and a runner whose checkout is not beside it cannot fetch it. Set
``FRAZIL_REQUIRE_EXTERNAL_FIXTURES=1`` to make their absence a failure instead."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import pytest

_REPO = Path(__file__).resolve().parent.parent.parent


def fixtures_root() -> Path | None:
    """The fixtures folder, or None when it is missing."""
    env = os.environ.get("FRAZIL_EXTERNAL_FIXTURES")
    candidates = (
        [Path(env)]
        if env
        else [_REPO.parent / "shared" / "external-fixtures", Path("/work/shared/external-fixtures")]
    )
    return next((root for root in candidates if (root / "MANIFEST.tsv").is_file()), None)


def require_fixtures() -> Path:
    """The fixtures folder; skips the test when it is missing (see the module docstring)."""
    root = fixtures_root()
    if root is None:
        reason = (
            "the external fixtures folder is missing (set FRAZIL_EXTERNAL_FIXTURES or put it at "
            f"{_REPO.parent / 'shared' / 'external-fixtures'})"
        )
        if os.environ.get("FRAZIL_REQUIRE_EXTERNAL_FIXTURES", "") not in ("", "0"):
            pytest.fail(reason)
        pytest.skip(reason)
    return root
