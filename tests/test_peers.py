"""The helper that decides whether a missing peer skips a test or fails it (tests/peers.py)."""

from __future__ import annotations

import pytest
from peers import import_peer, peer_missing, peers_required


@pytest.mark.parametrize(
    ("environ", "required"),
    [
        ({}, False),
        ({"CI": ""}, False),
        ({"CI": "false"}, False),
        ({"CI": "0"}, False),
        ({"CI": "true"}, True),
        ({"CI": "TRUE"}, True),
        ({"CI": " true\n"}, True),
    ],
)
def test_peers_required_only_when_ci_is_true(environ: dict[str, str], required: bool) -> None:
    assert peers_required(environ) is required


def test_missing_peer_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Java here"):
        peer_missing("no Java here")


def test_missing_peer_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no Java here") as info:
        peer_missing("no Java here")
    assert "CI=true" in str(info.value)


def test_module_level_skip_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        peer_missing("gone", module_level=True)
    assert info.value.allow_module_level


def test_import_peer(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    assert import_peer("json") is json
    missing = "frazil_no_such_peer_module"
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=missing):
        import_peer(missing)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=missing):
        import_peer(missing, reason=f"{missing} is not installed")
