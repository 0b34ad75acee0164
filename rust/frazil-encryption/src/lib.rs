//! Iceberg table encryption, natively: the AES-GCM stream format (`AGS1`, Java's
//! `format/gcm-stream-spec.md`) that encrypts Avro metadata files, Java's standard key metadata
//! (version byte + Avro record), and single-shot AES-GCM (nonce || ciphertext || tag) that wraps
//! keys and key metadata in the key hierarchy. The cipher is RustCrypto's `aes-gcm`.
//! Pure functions of bytes; no I/O. Every authentication tag is checked; malformed or tampered
//! input is an [`EncryptionError`], never a panic.

pub mod cipher;
pub mod error;
pub mod key_metadata;
pub mod stream;

pub use cipher::{open, seal, GCM_NONCE_LENGTH, GCM_TAG_LENGTH};
pub use error::EncryptionError;
pub use key_metadata::{decode_key_metadata, encode_key_metadata, KeyMetadata};
pub use stream::{
    decrypt_stream, encrypt_stream, read_stream, StreamReader, DEFAULT_PLAIN_BLOCK_SIZE,
    GCM_STREAM_HEADER_LENGTH, GCM_STREAM_MAGIC,
};
