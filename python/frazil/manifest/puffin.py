"""Puffin files (``puffin-spec.md``): blobs of statistics or deletion vectors plus a JSON footer.

The format work is native (``frazil-deletes``): the reader checks both magics, the footer size,
every blob's range and the footer JSON's shape, and raises
:class:`~frazil.exceptions.DecodeError` naming the file and the problem; blobs compressed with
``lz4`` or ``zstd`` (single frames with the content size) are decompressed on access.

    >>> from frazil.manifest.puffin import Blob, read_puffin, write_puffin
    >>> data = write_puffin([Blob("my-sketch", b"abc", fields=(1,))], {"created-by": "me"})
    >>> puffin = read_puffin(data)
    >>> puffin.blobs[0].type, puffin.read_blob(0)
    ('my-sketch', b'abc')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frazil import __version__, _native

__all__ = [
    "CREATED_BY",
    "Blob",
    "BlobMetadata",
    "PuffinFile",
    "read_puffin",
    "write_puffin",
]

#: The ``created-by`` property frazil writes unless told otherwise (spec "Common properties").
CREATED_BY = f"frazil version {__version__}"
COMPRESSION_CODECS = (None, "lz4", "zstd")


@dataclass(frozen=True, slots=True)
class BlobMetadata:
    """One entry of a Puffin footer's ``blobs`` list (slotted: a footer may list millions)."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Blob:
    """A blob to write. ``data`` is the uncompressed content; ``compression_codec`` (``None``,
    ``"lz4"`` or ``"zstd"``) is applied on write. ``snapshot_id`` and ``sequence_number``
    default to -1, what the spec requires for deletion vectors."""

    type: str
    data: bytes
    fields: Sequence[int] = ()
    snapshot_id: int = -1
    sequence_number: int = -1
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PuffinFile:
    """A Puffin file read from ``data``: its footer, and its blobs on demand."""

    data: bytes = field(repr=False)
    location: str
    blobs: tuple[BlobMetadata, ...]
    properties: Mapping[str, str]

    def read_blob(self, blob: int | BlobMetadata) -> bytes:
        """The content of a blob (by index or metadata), decompressed."""
        meta = self.blobs[blob] if isinstance(blob, int) else blob
        return _native.puffin_read_blob(
            self.data, meta.type, meta.offset, meta.length, meta.compression_codec, self.location
        )

    def blobs_of_type(self, blob_type: str) -> list[BlobMetadata]:
        return [b for b in self.blobs if b.type == blob_type]


def read_puffin(data: bytes, location: str = "<memory>") -> PuffinFile:
    """Reads the footer of a whole Puffin file held in ``data``; ``location`` names it in
    errors."""
    footer = _native.puffin_read_metadata(data, location)
    # Blobs of one footer repeat their type and fields: one shared object each (and slotted
    # metadata) keeps a footer of a million blobs to about 200 bytes per blob.
    shared: dict[Any, Any] = {}
    blobs = tuple(_blob_metadata(b, shared) for b in footer.blobs)
    return PuffinFile(data, location, blobs, dict(footer.properties))


def _blob_metadata(
    b: _native.PuffinBlobMetadata, shared: dict[Any, Any] | None = None
) -> BlobMetadata:
    if shared is None:
        shared = {}
    fields = tuple(b.fields)
    return BlobMetadata(
        shared.setdefault(b.blob_type, b.blob_type),
        shared.setdefault(fields, fields),
        b.snapshot_id,
        b.sequence_number,
        b.offset,
        b.length,
        b.compression_codec,
        dict(b.properties),
    )


def _write(
    blobs: Iterable[Blob],
    properties: Mapping[str, str] | None,
    compress_footer: bool,
) -> tuple[bytes, list[BlobMetadata]]:
    blobs = list(blobs)
    props = dict(properties or {})
    props.setdefault("created-by", CREATED_BY)
    written = _native.puffin_write(
        [
            (
                b.type,
                list(b.fields),
                b.snapshot_id,
                b.sequence_number,
                bytes(b.data),
                b.compression_codec,
                list(b.properties.items()),
            )
            for b in blobs
        ],
        list(props.items()),
        compress_footer,
    )
    return written.data, [_blob_metadata(b) for b in written.metadata.blobs]


def write_puffin(
    blobs: Iterable[Blob],
    properties: Mapping[str, str] | None = None,
    *,
    compress_footer: bool = False,
) -> bytes:
    """The bytes of a Puffin file holding ``blobs`` in order. ``created-by`` is set to frazil's
    version unless ``properties`` gives one. ``compress_footer`` LZ4-compresses the footer
    payload (the Java reference cannot read such footers yet, so it is off by default)."""
    return _write(blobs, properties, compress_footer)[0]
