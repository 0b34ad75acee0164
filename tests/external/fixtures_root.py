"""Where the real-world fixtures are: ``$FRAZIL_EXTERNAL_FIXTURES``, else ``../shared/
external-fixtures`` beside the repository (as on the project's machines and CI runners).

They are other projects' public test tables, kept out of this repository; a test that needs them
and finds them missing skips on a developer's machine and fails under ``CI=true``, like a missing
interop peer (tests/peers.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peers import peer_missing

_REPO = Path(__file__).resolve().parent.parent.parent


def fixtures_root() -> Path | None:
    """The fixtures folder, or None when it is missing."""
    env = os.environ.get("FRAZIL_EXTERNAL_FIXTURES")
    root = Path(env) if env else _REPO.parent / "shared" / "external-fixtures"
    return root if (root / "MANIFEST.tsv").is_file() else None


def require_fixtures() -> Path:
    """The fixtures folder; skips the test (fails it under CI=true) when it is missing."""
    root = fixtures_root()
    if root is None:
        peer_missing(
            "the external fixtures folder is missing (set FRAZIL_EXTERNAL_FIXTURES or put it at "
            f"{_REPO.parent / 'shared' / 'external-fixtures'})"
        )
    return root
