//! The one error type of the crate: what is wrong, never key material.

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EncryptionError {
    /// A key of a length AES does not have (16, 24 or 32 bytes).
    #[error("invalid AES key length {0} (must be 16, 24 or 32 bytes)")]
    KeyLength(usize),
    /// A GCM tag did not verify: wrong key, wrong AAD, or tampered bytes (GCM cannot tell which).
    #[error("{0}: GCM tag check failed (wrong key, or corrupt or tampered data)")]
    Tag(String),
    /// Structurally malformed input (bad magic, truncated, impossible lengths).
    #[error("{0}")]
    Malformed(String),
    /// The random number source failed.
    #[error("random number source failed: {0}")]
    Random(String),
}
