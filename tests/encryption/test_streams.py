"""AES-GCM streams and key metadata against an independent AES-GCM (pyca/cryptography) and the
byte layout of Java's gcm-stream-spec, plus tampering of every kind."""

from __future__ import annotations

import os
import re
import struct

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from hypothesis import given, settings
from hypothesis import strategies as st

from frazil.encryption import (
    StandardKeyMetadata,
    decrypt_stream,
    encrypt_stream,
    gcm_decrypt,
    gcm_encrypt,
    stream_plain_length,
)
from frazil.exceptions import EncryptionError

KEY = bytes(range(16))
BLOCK = 64


def oracle_decrypt(key: bytes, aad: bytes, stream: bytes) -> bytes:
    """Decrypts an AGS1 stream block by block with pyca/cryptography, following the spec."""
    assert stream[:4] == b"AGS1"
    (block,) = struct.unpack("<i", stream[4:8])
    body, out, index = stream[8:], b"", 0
    while body:
        sealed, body = body[: block + 28], body[block + 28 :]
        out += AESGCM(key).decrypt(sealed[:12], sealed[12:], aad + struct.pack("<i", index))
        index += 1
    return out


def oracle_encrypt(key: bytes, aad: bytes, plain: bytes, block: int) -> bytes:
    out = b"AGS1" + struct.pack("<i", block)
    chunks = [plain[i : i + block] for i in range(0, len(plain), block)] or [b""]
    for index, chunk in enumerate(chunks):
        nonce = os.urandom(12)
        out += nonce + AESGCM(key).encrypt(nonce, chunk, aad + struct.pack("<i", index))
    return out


sizes = st.one_of(
    st.just(0),
    st.integers(1, 4).map(lambda n: n * BLOCK),  # exact multiples of the block size
    st.integers(1, 4).map(lambda n: n * BLOCK + 1),  # one byte over
    st.integers(0, 5 * BLOCK),
)


@settings(max_examples=60, deadline=None)
@given(size=sizes, aad=st.binary(max_size=20), key_len=st.sampled_from([16, 24, 32]))
def test_stream_matches_an_independent_aes_gcm(size: int, aad: bytes, key_len: int) -> None:
    key = os.urandom(key_len)
    plain = os.urandom(size)
    stream = encrypt_stream(key, aad, plain, BLOCK)
    blocks = max(1, -(-size // BLOCK))
    assert len(stream) == 8 + size + 28 * blocks
    assert oracle_decrypt(key, aad, stream) == plain
    theirs = oracle_encrypt(key, aad, plain, BLOCK)
    assert decrypt_stream(key, aad, theirs, name="f", expected_length=len(theirs)) == plain
    assert stream_plain_length(key, aad, theirs, name="f") == size


@settings(max_examples=60, deadline=None)
@given(size=sizes, offset=st.integers(0, 5 * BLOCK), length=st.integers(0, 5 * BLOCK))
def test_random_access_by_block(size: int, offset: int, length: int) -> None:
    plain = os.urandom(size)
    stream = encrypt_stream(KEY, b"p", plain, BLOCK)
    if offset > size:
        with pytest.raises(EncryptionError, match="past the end"):
            decrypt_stream(KEY, b"p", stream, name="f", offset=offset, length=length)
    else:
        got = decrypt_stream(KEY, b"p", stream, name="f", offset=offset, length=length)
        assert got == plain[offset : offset + length]


def test_default_block_is_one_mib_and_header_is_java_s() -> None:
    plain = os.urandom(2 * 1024 * 1024 + 1)
    stream = encrypt_stream(KEY, None, plain)
    assert stream[:8] == b"AGS1" + struct.pack("<i", 1024 * 1024)
    assert len(stream) == 8 + len(plain) + 3 * 28
    assert oracle_decrypt(KEY, b"", stream) == plain


def _blocks(stream: bytes) -> list[bytes]:
    body = stream[8:]
    return [body[i : i + BLOCK + 28] for i in range(0, len(body), BLOCK + 28)]


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda s: s[:20] + bytes([s[20] ^ 1]) + s[21:], id="flipped-nonce-byte"),
        pytest.param(lambda s: s[:-1] + bytes([s[-1] ^ 0x80]), id="flipped-tag-byte"),
        pytest.param(lambda s: s[:100] + bytes([s[100] ^ 4]) + s[101:], id="flipped-cipher-byte"),
        pytest.param(
            lambda s: s[:8] + b"".join([_blocks(s)[1], _blocks(s)[0], *_blocks(s)[2:]]),
            id="swapped-blocks",
        ),
        pytest.param(lambda s: s[:8] + b"".join(_blocks(s)[1:]), id="dropped-first-block"),
        pytest.param(
            lambda s: s[:8] + b"".join([_blocks(s)[0], *_blocks(s)[2:]]), id="dropped-middle-block"
        ),
        pytest.param(lambda s: s[:-5], id="truncated-in-a-block"),
        pytest.param(lambda s: s[: -(BLOCK + 28 + 10)] + s[-10:], id="spliced"),
        pytest.param(lambda s: b"AGS2" + s[4:], id="bad-magic"),
    ],
)
def test_tampering_is_an_error_naming_the_file(tamper) -> None:  # type: ignore[no-untyped-def]
    plain = os.urandom(3 * BLOCK + 10)
    stream = encrypt_stream(KEY, b"aad", plain, BLOCK)
    with pytest.raises(EncryptionError, match=re.escape("s3://b/t/m.avro")):
        decrypt_stream(KEY, b"aad", tamper(stream), name="s3://b/t/m.avro")


def test_dropped_trailing_block_is_caught_by_the_file_length() -> None:
    plain = os.urandom(3 * BLOCK)  # ends on a block boundary: the cut stream still parses
    stream = encrypt_stream(KEY, b"aad", plain, BLOCK)
    cut = stream[: -(BLOCK + 28)]
    with pytest.raises(EncryptionError, match="key metadata says"):
        decrypt_stream(KEY, b"aad", cut, name="f", expected_length=len(stream))


def test_wrong_key_and_wrong_aad() -> None:
    stream = encrypt_stream(KEY, b"aad", b"secret rows", BLOCK)
    with pytest.raises(EncryptionError, match="tag check failed"):
        decrypt_stream(bytes(16), b"aad", stream, name="f")
    with pytest.raises(EncryptionError, match="tag check failed"):
        decrypt_stream(KEY, b"aae", stream, name="f")
    with pytest.raises(EncryptionError, match="key length"):
        encrypt_stream(b"short", None, b"x")


def test_single_shot_gcm_matches_cryptography() -> None:
    sealed = gcm_encrypt(KEY, b"kek bytes", b"1700000000000")
    assert AESGCM(KEY).decrypt(sealed[:12], sealed[12:], b"1700000000000") == b"kek bytes"
    nonce = os.urandom(12)
    theirs = nonce + AESGCM(KEY).encrypt(nonce, b"x", None)
    assert gcm_decrypt(KEY, theirs) == b"x"
    with pytest.raises(EncryptionError, match="snapshot key"):
        gcm_decrypt(KEY, theirs, b"aad", what="snapshot key")


def _avro_long(v: int) -> bytes:
    z, out = (v << 1) ^ (v >> 63), b""
    while z >= 0x80:
        out += bytes([(z & 0x7F) | 0x80])
        z >>= 7
    return out + bytes([z])


@settings(max_examples=80, deadline=None)
@given(
    key=st.binary(min_size=16, max_size=32),
    aad=st.none() | st.binary(max_size=32),
    length=st.none() | st.integers(0, 2**62),
)
def test_key_metadata_is_the_avro_record(key: bytes, aad: bytes | None, length: int | None) -> None:
    """Bytes computed independently from the Avro spec: version 0x01, bytes, union null/bytes,
    union null/long; Java 1.10.2's record stops before file_length."""
    expected = b"\x01" + _avro_long(len(key)) + key
    expected += b"\x00" if aad is None else b"\x02" + _avro_long(len(aad)) + aad
    old = expected
    expected += b"\x00" if length is None else b"\x02" + _avro_long(length)
    m = StandardKeyMetadata(key, aad, length)
    assert m.to_bytes() == expected
    assert m.to_bytes(java_1_10=True) == old
    assert StandardKeyMetadata.from_bytes(expected) == m
    assert StandardKeyMetadata.from_bytes(old) == StandardKeyMetadata(key, aad, None)


@given(st.binary(max_size=60))
def test_key_metadata_garbage_is_an_error(data: bytes) -> None:
    try:
        StandardKeyMetadata.from_bytes(data)
    except EncryptionError:
        pass


def test_key_metadata_repr_hides_the_key() -> None:
    m = StandardKeyMetadata(b"K" * 16, b"A" * 16, 10)
    assert "KKKK" not in repr(m) and "AAAA" not in repr(m)
