"""Puffin files (puffin-spec.md): layout, round trips with every codec, peers' frames, and
hostile inputs (every truncation, every bit flip) that must fail cleanly, never crash."""

from __future__ import annotations

import json
import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frazil.exceptions import DecodeError, FrazilError, UnsupportedError
from frazil.manifest.puffin import CREATED_BY, Blob, read_puffin, write_puffin

try:  # the stdlib's zstd from 3.14 on, its backport before
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd  # type: ignore[no-redef]

MAGIC = b"PFA1"


def _footer(data: bytes) -> tuple[dict, int]:
    """The footer JSON and flags, decoded by hand from the spec's layout."""
    (size,) = struct.unpack_from("<i", data, len(data) - 12)
    flags = data[len(data) - 8]
    start = len(data) - 12 - size
    assert data[start - 4 : start] == MAGIC
    return json.loads(data[start : start + size]), flags


def _file(payload: bytes, blobs: bytes = b"", flags: bytes = b"\0\0\0\0") -> bytes:
    """A Puffin file assembled by hand from the spec's layout."""
    return MAGIC + blobs + MAGIC + payload + struct.pack("<i", len(payload)) + flags + MAGIC


def test_layout_follows_the_spec():
    data = write_puffin(
        [
            Blob("a", b"xyz", fields=(1, 2), snapshot_id=5, sequence_number=6),
            Blob("b", b"", properties={"k": "v"}),
        ],
        {"p": "q"},
    )
    assert data[:4] == MAGIC and data[-4:] == MAGIC
    assert data[4:7] == b"xyz"
    footer, flags = _footer(data)
    assert flags == 0
    assert footer == {
        "blobs": [
            {
                "type": "a",
                "fields": [1, 2],
                "snapshot-id": 5,
                "sequence-number": 6,
                "offset": 4,
                "length": 3,
            },
            {
                "type": "b",
                "fields": [],
                "snapshot-id": -1,
                "sequence-number": -1,
                "offset": 7,
                "length": 0,
                "properties": {"k": "v"},
            },
        ],
        "properties": {"p": "q", "created-by": CREATED_BY},
    }


def test_created_by_is_kept_when_given():
    data = write_puffin([], {"created-by": "someone 1.0"})
    assert read_puffin(data).properties == {"created-by": "someone 1.0"}


@pytest.mark.parametrize("compress_footer", [False, True])
@pytest.mark.parametrize("codec", [None, "lz4", "zstd"])
def test_round_trip(codec, compress_footer):
    payload = b"".join(struct.pack("<q", i % 1000) for i in range(20_000))
    blobs = [
        Blob("x", payload, fields=(3,), compression_codec=codec, properties={"n": "1"}),
        Blob("y", b"small", compression_codec=codec),
    ]
    data = write_puffin(blobs, {"a": "b"}, compress_footer=compress_footer)
    f = read_puffin(data, "mem.puffin")
    assert [b.type for b in f.blobs] == ["x", "y"]
    assert f.blobs[0].compression_codec == codec
    assert f.blobs[0].properties == {"n": "1"}
    assert f.read_blob(0) == payload
    assert f.read_blob(f.blobs[1]) == b"small"
    if codec is not None:
        assert f.blobs[0].length < len(payload) / 4
    assert data[-8] == (1 if compress_footer else 0)


def test_peer_frames_are_read_and_ours_are_read_by_peers():
    payload = bytes(range(256)) * 100
    # Blobs compressed by other libraries (cramjam's LZ4 frame, the zstd reference library).
    lz4_frame = bytes(cramjam.lz4.compress(payload))
    zstd_frame = zstd.compress(payload)
    blobs = lz4_frame + zstd_frame
    meta = {
        "blobs": [
            {
                "type": "t",
                "fields": [],
                "snapshot-id": 1,
                "sequence-number": 1,
                "offset": 4,
                "length": len(lz4_frame),
                "compression-codec": "lz4",
            },
            {
                "type": "t",
                "fields": [],
                "snapshot-id": 1,
                "sequence-number": 1,
                "offset": 4 + len(lz4_frame),
                "length": len(zstd_frame),
                "compression-codec": "zstd",
            },
        ]
    }
    f = read_puffin(_file(json.dumps(meta).encode(), blobs))
    assert f.read_blob(0) == payload
    assert f.read_blob(1) == payload
    # And the other way: our frames decompress with the peers.
    data = write_puffin(
        [Blob("t", payload, compression_codec="lz4"), Blob("t", payload, compression_codec="zstd")]
    )
    g = read_puffin(data)
    raw = [data[b.offset : b.offset + b.length] for b in g.blobs]
    assert bytes(cramjam.lz4.decompress(raw[0])) == payload
    assert zstd.decompress(raw[1]) == payload
    # The spec asks for the content size in both frames.
    assert raw[0][4] & 0x08
    assert zstd.get_frame_info(raw[1]).decompressed_size == len(payload)


def test_compressed_footer_is_an_lz4_frame():
    data = write_puffin([Blob("t", b"abc")], compress_footer=True)
    (size,) = struct.unpack_from("<i", data, len(data) - 12)
    payload = data[len(data) - 12 - size : len(data) - 12]
    assert json.loads(bytes(cramjam.lz4.decompress(payload)))["blobs"][0]["type"] == "t"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "shorter than the smallest"),
        (b"XXXX" + _file(b'{"blobs": []}')[4:], "offset 0"),
        (_file(b'{"blobs": []}')[:-1] + b"X", "end of footer"),
        (_file(b'{"blobs": []}').replace(b'PFA1{"', b'PFAX{"'), "start of footer"),
        (_file(b"not json"), "not valid UTF-8 JSON"),
        (_file(b'{"blobs": [1]}'), "blobs[0] must be a JSON object"),
        (_file(b'{"blobs": [], "properties": []}'), "properties must be a JSON object"),
        (
            _file(
                b'{"blobs": [{"type": "t", "fields": [], "snapshot-id": 1,'
                b' "sequence-number": 1, "offset": 4, "length": 10}]}'
            ),
            "outside the blob area",
        ),
        (
            _file(
                b'{"blobs": [{"type": "t", "fields": [], "snapshot-id": 1,'
                b' "sequence-number": 1, "offset": 4, "length": -1}]}'
            ),
            "length is negative",
        ),
        (
            _file(b'{"blobs": [{"type": "t", "fields": [], "offset": 4, "length": 0}]}'),
            "snapshot-id",
        ),
    ],
)
def test_malformed_files_are_named(data, needle):
    with pytest.raises(DecodeError, match=r"f\.puffin") as e:
        read_puffin(data, "f.puffin")
    assert needle in str(e.value)


def test_footer_size_beyond_the_file():
    data = bytearray(write_puffin([Blob("t", b"abc")]))
    struct.pack_into("<i", data, len(data) - 12, 2**31 - 1)
    with pytest.raises(DecodeError, match="does not fit"):
        read_puffin(bytes(data))
    struct.pack_into("<i", data, len(data) - 12, -5)
    with pytest.raises(DecodeError, match="negative footer payload size"):
        read_puffin(bytes(data))


def test_unknown_flags_and_codecs_are_unsupported():
    with pytest.raises(UnsupportedError, match="byte 1, bit 0"):
        read_puffin(_file(b'{"blobs": []}', flags=b"\0\1\0\0"))
    meta = (
        b'{"blobs": [{"type": "t", "fields": [], "snapshot-id": 1, "sequence-number": 1,'
        b' "offset": 4, "length": 3, "compression-codec": "snappy"}]}'
    )
    f = read_puffin(_file(meta, b"abc"))  # the footer is fine; the blob cannot be read
    with pytest.raises(UnsupportedError, match="snappy"):
        f.read_blob(0)
    with pytest.raises(UnsupportedError, match="snappy"):
        write_puffin([Blob("t", b"abc", compression_codec="snappy")])


def test_corrupt_compressed_blob_is_named():
    data = bytearray(write_puffin([Blob("t", b"hello " * 1000, compression_codec="zstd")]))
    f = read_puffin(bytes(data))
    data[f.blobs[0].offset] ^= 0xFF  # the frame magic
    with pytest.raises(DecodeError, match=r"f\.puffin, blob t at offset 4"):
        read_puffin(bytes(data), "f.puffin").read_blob(0)


def _corpus() -> bytes:
    return write_puffin(
        [
            Blob("a", b"0123456789", fields=(1,)),
            Blob("b", b"abc" * 50, compression_codec="lz4"),
            Blob("c", b"xyz" * 50, compression_codec="zstd", properties={"k": "v"}),
        ]
    )


def _read_everything(data: bytes) -> None:
    f = read_puffin(data, "fuzz")
    for i in range(len(f.blobs)):
        f.read_blob(i)


def test_every_truncation_fails_cleanly():
    data = _corpus()
    for n in range(len(data)):
        with pytest.raises(FrazilError):
            _read_everything(data[:n])


def test_every_bit_flip_fails_cleanly_or_reads():
    data = _corpus()
    for i in range(len(data)):
        for bit in (0, 3, 7):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            try:
                _read_everything(bytes(flipped))
            except FrazilError:
                pass  # a clean, named error; anything else (or a crash) fails the test


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_with_valid_magics(body):
    try:
        _read_everything(MAGIC + body + MAGIC)
    except FrazilError:
        pass


def test_module_examples():
    import doctest

    import frazil.manifest.puffin

    assert doctest.testmod(frazil.manifest.puffin).failed == 0
