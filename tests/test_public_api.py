"""The public API of ``frazil.*`` never loses a name.

``tests/public_api.json`` lists every public module (no ``_`` in its dotted path), the public
names each defines or exports in ``__all__``, and the signatures (parameters and defaults) of
its functions and of its classes' public methods, as they stood before the package was
reorganised (recorded at 5493a1e). This test checks
each one still imports and answers with the same signature: a module that moved keeps
importing from its old path (``frazil._moved``), a class keeps its methods.

``FRAZIL_WRITE_PUBLIC_API=1`` rewrites the listing from the current tree (to record an
addition; a removal is a breaking change and needs a deprecation first).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import re
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import frazil

LISTING = Path(__file__).parent / "public_api.json"
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _signature(obj: Any) -> str | None:
    """Parameter names, kinds and defaults: what a caller relies on. Annotations are left out
    (a private helper type renamed is no change to callers)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    bare = signature.replace(
        parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
        return_annotation=signature.empty,
    )
    return _ADDRESS.sub("", str(bare))


def _public(name: str) -> bool:
    return not name.startswith("_")


def _module_names(module: ModuleType) -> list[str]:
    exported = getattr(module, "__all__", None)
    if exported is not None:
        return sorted(set(exported))
    return sorted(
        name
        for name, value in vars(module).items()
        if _public(name)
        and (
            getattr(value, "__module__", None) == module.__name__
            or (inspect.ismodule(value) and value.__name__.startswith(module.__name__ + "."))
        )
    )


def _describe(value: Any) -> dict[str, Any]:
    if inspect.ismodule(value):
        return {"kind": "module"}
    if inspect.isclass(value):
        members: dict[str, str | None] = {}
        for name, member in vars(value).items():
            if not _public(name) and name != "__init__":
                continue
            if isinstance(member, property):
                members[name] = "property"
            elif isinstance(member, (staticmethod, classmethod)):
                members[name] = _signature(member.__func__)
            elif inspect.isfunction(member):
                members[name] = _signature(member)
        return {"kind": "class", "members": members}
    if callable(value):
        return {"kind": "function", "signature": _signature(value)}
    return {"kind": "value"}


def _import(module_name: str) -> ModuleType | None:
    """The module, or None where it needs an optional package this environment lacks.

    ``frazil.spark.datasource`` and ``.streaming`` need PySpark 4: dev/test runs this test in
    the PySpark 4 venv as well, so every module is checked in one of the two.
    """
    with warnings.catch_warnings():
        # An old path answers with a DeprecationWarning naming the new one.
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is None or error.name.split(".")[0] == "frazil":
                raise
            return None


def _current(listing: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    listing = dict(listing)
    names = ["frazil"] + [
        info.name
        for info in pkgutil.walk_packages(frazil.__path__, "frazil.")
        if all(_public(part) for part in info.name.split(".")[1:])
    ]
    for module_name in sorted(names):
        module = _import(module_name)
        if module is None:
            continue  # kept as recorded by an environment that has its dependencies
        listing[module_name] = {
            name: _describe(getattr(module, name)) for name in _module_names(module)
        }
    return listing


def test_public_api_keeps_every_name() -> None:
    # Old paths and moved names answer with a DeprecationWarning naming the new place.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _check()


def _check() -> None:
    recorded: dict[str, dict[str, Any]] = (
        json.loads(LISTING.read_text()) if LISTING.exists() else {}
    )
    if os.environ.get("FRAZIL_WRITE_PUBLIC_API"):
        recorded = _current(recorded)
        LISTING.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    missing: list[str] = []
    changed: list[str] = []
    for module_name, names in recorded.items():
        try:
            module = _import(module_name)
        except ImportError as error:
            missing.append(f"{module_name} ({error})")
            continue
        if module is None:
            continue
        for name, was in names.items():
            if not hasattr(module, name):
                missing.append(f"{module_name}.{name}")
                continue
            now = _describe(getattr(module, name))
            if now["kind"] != was["kind"]:
                changed.append(f"{module_name}.{name}: {was['kind']} -> {now['kind']}")
            elif was["kind"] == "function" and now["signature"] != was["signature"]:
                changed.append(f"{module_name}.{name}{was['signature']} -> {now['signature']}")
            elif was["kind"] == "class":
                for member, signature in was["members"].items():
                    if member not in now["members"]:
                        # Inherited from a base class is still there.
                        if hasattr(getattr(module, name), member):
                            continue
                        missing.append(f"{module_name}.{name}.{member}")
                    elif now["members"][member] != signature:
                        changed.append(
                            f"{module_name}.{name}.{member}{signature} -> {now['members'][member]}"
                        )
    assert not missing, "public names gone:\n" + "\n".join(missing)
    assert not changed, "public signatures changed:\n" + "\n".join(changed)
