"""The rules every catalog applies to identifiers before reading or writing anything.

Identifiers are dotted strings (``"db.events"``) or tuples (``("db", "events")``); a table or
view identifier is its namespace levels followed by its name. Levels name directories and
database rows, so a level may not be empty, ``.`` or ``..``, nor hold ``/``, ``\\``, NUL or other
control characters, nor exceed :data:`MAX_IDENTIFIER_PART_BYTES` UTF-8 bytes; and every location
derived from one must lie under the warehouse (:func:`check_under`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from frazil import io as _io
from frazil.exceptions import InvalidArgumentError, NoSuchTableError

__all__ = [
    "MAX_IDENTIFIER_PART_BYTES",
    "Identifier",
    "check_identifier",
    "check_identifier_part",
    "check_under",
    "identifier_to_tuple",
    "namespace_identifier",
    "table_identifier",
]

Identifier = tuple[str, ...]

# Identifier parts name directories and database rows: at most this many UTF-8 bytes (a file
# name's limit on common filesystems, and the SQL catalog's VARCHAR(255)).
MAX_IDENTIFIER_PART_BYTES = 255


def identifier_to_tuple(identifier: str | Identifier) -> Identifier:
    """``"a.b.c"`` -> ``("a", "b", "c")``; tuples (and lists) pass through."""
    if isinstance(identifier, str):
        return tuple(identifier.split(".")) if identifier else ()
    return tuple(identifier)


def check_identifier_part(part: object, ident: Sequence[object]) -> None:
    """Refuses a part that could leave or confuse a path: empty, ``.`` or ``..``, holding
    ``/``, ``\\``, NUL or control characters, or longer than
    :data:`MAX_IDENTIFIER_PART_BYTES` UTF-8 bytes."""
    shown = ".".join(map(str, ident))
    if not isinstance(part, str):
        raise InvalidArgumentError(f"invalid identifier {shown!r}: {part!r} is not a string")
    problem = None
    if not part:
        problem = "an empty level"
    elif part in (".", ".."):
        problem = f"the level {part!r}"
    elif "/" in part or "\\" in part:
        problem = f"a path separator in {part!r}"
    elif any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in part):
        problem = f"a control character in {part!r}"
    elif len(part.encode("utf-8")) > MAX_IDENTIFIER_PART_BYTES:
        problem = f"a level longer than {MAX_IDENTIFIER_PART_BYTES} UTF-8 bytes"
    if problem is not None:
        raise InvalidArgumentError(f"invalid identifier {shown!r}: {problem}")


def check_identifier(identifier: str | Identifier) -> Identifier:
    """``identifier`` as a tuple if every part passes :func:`check_identifier_part`."""
    ident = identifier_to_tuple(identifier)
    for part in ident:
        check_identifier_part(part, ident)
    return ident


def table_identifier(identifier: str | Identifier, strict: bool = True) -> Identifier:
    """A table (or view) identifier as a tuple, :class:`NoSuchTableError` without a namespace;
    ``strict`` also checks every part, needed wherever a path is derived from it."""
    ident = identifier_to_tuple(identifier)
    # Strict: an empty level is an invalid identifier (below), as in a namespace.
    if len(ident) < 2 or (not strict and any(not part for part in ident)):
        raise NoSuchTableError(
            f"invalid table identifier {'.'.join(map(str, ident))!r}: expected <namespace>.<table>"
        )
    return check_identifier(ident) if strict else ident


def namespace_identifier(namespace: str | Identifier, allow_root: bool = False) -> Identifier:
    """A namespace as a tuple, every level checked (``()`` only with ``allow_root``)."""
    ns = identifier_to_tuple(namespace)
    if not ns and allow_root:
        return ns
    if not ns or any(not part for part in ns):
        raise InvalidArgumentError(f"invalid namespace {'.'.join(map(str, ns))!r}: empty level")
    return check_identifier(ns)


def check_under(root: str, location: str, what: str) -> str:
    """``location`` if it is ``root`` or lies under it once both are normalized
    (:func:`frazil.io.is_under_location`), else :class:`InvalidArgumentError` naming ``what``:
    nothing derived from an identifier may be created or deleted outside the warehouse."""
    if not _io.is_under_location(location, root, or_equal=True):
        raise InvalidArgumentError(f"{what}: {location} is not under {root}")
    return location
