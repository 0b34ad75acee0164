"""The one exception hierarchy of frazil.

Every error frazil raises on purpose is a :class:`FrazilError`. The native core maps each of its
error kinds to one class here (``rust/frazil-python/src/error.rs``). Classes that describe bad
input also derive from :class:`ValueError`, so code written against ``ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "AuthorizationExpiredError",
    "BadRequestError",
    "CatalogBusyError",
    "CatalogError",
    "CommitFailedError",
    "CommitFailedException",
    "CommitStateUnknownError",
    "CommitStateUnknownException",
    "DecodeError",
    "EncryptionError",
    "FileMissingError",
    "FileReadError",
    "ForbiddenError",
    "FrazilError",
    "FrazilIOError",
    "InvalidArgumentError",
    "NamespaceAlreadyExistsError",
    "NamespaceNotEmptyError",
    "NoSuchIcebergTableError",
    "NoSuchIdentifierError",
    "NoSuchNamespaceError",
    "NoSuchPlanIdError",
    "NoSuchPlanTaskError",
    "NoSuchTableError",
    "NoSuchViewError",
    "NoSuchWarehouseError",
    "NotAuthorizedError",
    "OAuthError",
    "ParseError",
    "RESTError",
    "ServerError",
    "ServiceUnavailableError",
    "TableAlreadyExistsError",
    "UnauthorizedError",
    "UnsupportedError",
    "ValidationError",
    "ValidationException",
    "ViewAlreadyExistsError",
]


class FrazilError(Exception):
    """Base class of every error frazil raises."""


class InvalidArgumentError(FrazilError, ValueError):
    """An argument that can never work: ``N <= 0``, a wrong array type, an out-of-range value."""


class ParseError(FrazilError, ValueError):
    """Malformed text in one of the spec's forms: a type string, a transform string, ..."""


class DecodeError(FrazilError, ValueError):
    """Bytes or JSON that do not encode a value of the expected type."""


class UnsupportedError(FrazilError, TypeError):
    """Valid input that the operation does not support, e.g. ``bucket`` on a float column."""


class ValidationError(FrazilError, ValueError):
    """A change that would break a rule of the spec: an unsafe type promotion, a required column
    without a default, a metadata update that violates an invariant, ..."""


class FileReadError(FrazilError, OSError):
    """A data or delete file that could not be read (missing, truncated, not the format its
    manifest entry says, or beyond what the reader decodes); names the file, and the reader's
    error is its ``__cause__``."""


class CommitFailedError(FrazilError):
    """A commit's requirements do not hold against the table's current metadata (someone else
    committed first); the caller may refresh and retry."""


class CommitStateUnknownError(FrazilError):
    """A commit whose outcome could not be determined (e.g. the catalog's connection dropped after
    the pointer swap was sent and it could not be re-read). The new metadata may or may not be
    current: refresh before doing anything else, and never clean up its files."""


class NoSuchNamespaceError(FrazilError):
    """The namespace does not exist in the catalog."""


class NamespaceAlreadyExistsError(FrazilError):
    """A namespace of that name already exists."""


class NamespaceNotEmptyError(FrazilError):
    """A namespace that still holds tables cannot be dropped."""


class NoSuchTableError(FrazilError):
    """The table does not exist in the catalog."""


class TableAlreadyExistsError(FrazilError):
    """A table of that name already exists."""


class NoSuchViewError(FrazilError):
    """The view does not exist in the catalog."""


class ViewAlreadyExistsError(FrazilError):
    """A view of that name already exists (tables and views share one name space: creating a
    table where a view is raises this too)."""


class RESTError(FrazilError):
    """A REST catalog answered with an error the classes above do not describe; the message
    keeps the server's own (``ErrorModel.message``) and names the request."""


class BadRequestError(RESTError, ValueError):
    """The REST catalog refused a malformed request (HTTP 400)."""


class NotAuthorizedError(RESTError):
    """The REST catalog refused the caller (HTTP 401 or 403)."""


class UnauthorizedError(NotAuthorizedError):
    """No valid credentials (HTTP 401): a missing, wrong or expired token."""


class AuthorizationExpiredError(UnauthorizedError):
    """The credentials expired (HTTP 419, or a 401 the server marks as such)."""


class ForbiddenError(NotAuthorizedError):
    """Valid credentials without the permission (HTTP 403)."""


class OAuthError(NotAuthorizedError):
    """The OAuth2 token endpoint refused the credentials (its ``error`` and
    ``error_description`` in the message; never the secret)."""


class ServiceUnavailableError(RESTError):
    """The REST catalog is (temporarily) unavailable (HTTP 503)."""


class ServerError(RESTError):
    """The REST catalog failed on its side (HTTP 5xx)."""


class NoSuchPlanIdError(RESTError):
    """The server-side scan plan does not exist (or was cancelled or expired)."""


class NoSuchPlanTaskError(RESTError):
    """The server-side scan plan task does not exist."""


class FrazilIOError(FrazilError, OSError):
    """Reading or writing a file failed (disk full, permission denied, read-only storage, ...).
    The message names the file and the cause, ``filename`` and ``errno`` are set, and the
    original error is the ``__cause__``. Also an :class:`OSError`, so code written against
    ``OSError`` keeps working."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else super().__str__()


class FileMissingError(FrazilIOError, FileNotFoundError):
    """A file that must exist (a metadata file, a manifest list, a manifest) does not."""


class EncryptionError(FrazilError):
    """An encrypted file or key could not be used: no KMS for the table's master key, a wrong
    key, or bytes that fail authentication (tampered, truncated, reordered). The message names
    the file or key id; it never holds key material."""


class CatalogError(FrazilError):
    """The catalog's store failed: a database error, a read-only database, a timeout. The message
    names the catalog and the cause; the original error is the ``__cause__``."""


class NoSuchWarehouseError(CatalogError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError):
    """A catalog whose store does not exist: loading or listing in a warehouse that holds no
    catalog database (a mistyped path). The message names the path. It is also a
    :class:`NoSuchTableError`, :class:`NoSuchNamespaceError` and :class:`NoSuchViewError`, since
    nothing exists there."""


class CatalogBusyError(CatalogError):
    """A catalog error that may pass on its own: a lock or statement timeout, a busy (locked)
    database, a deadlock or serialization failure, a dropped connection."""


def io_error(exc: OSError, doing: str, location: str) -> FrazilIOError:
    """The :class:`FrazilIOError` for ``exc`` raised while ``doing`` (``"writing"``, ...) the
    file at ``location`` (raise it ``from exc``)."""
    if isinstance(exc, FrazilIOError):
        return exc
    cls = FileMissingError if isinstance(exc, FileNotFoundError) else FrazilIOError
    reason = exc.strerror or str(exc) or type(exc).__name__
    err = cls(f"{doing} {location} failed: {reason}")
    err.errno = exc.errno
    err.strerror = reason
    err.filename = location
    return err


# PyIceberg's names for the same errors (``pyiceberg.exceptions``), so ``except`` clauses keep
# working after an import change.
CommitFailedException = CommitFailedError
CommitStateUnknownException = CommitStateUnknownError
ValidationException = ValidationError
NoSuchIdentifierError = NoSuchTableError
NoSuchIcebergTableError = NoSuchTableError
