//! Single-shot AES-GCM as Java's `Ciphers.AesGcmEncryptor`/`AesGcmDecryptor` lay it out:
//! a 12-byte random nonce, the ciphertext, the 16-byte tag. Keys of 16, 24 or 32 bytes.

use aes_gcm::aead::consts::U12;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::aes::Aes192;
use aes_gcm::{Aes128Gcm, Aes256Gcm, AesGcm, Nonce};

use crate::error::EncryptionError;

pub const GCM_NONCE_LENGTH: usize = 12;
pub const GCM_TAG_LENGTH: usize = 16;

type Aes192Gcm = AesGcm<Aes192, U12>;

/// An AES-GCM cipher for one key (its length picks AES-128, -192 or -256).
pub(crate) enum Cipher {
    A128(Box<Aes128Gcm>),
    A192(Box<Aes192Gcm>),
    A256(Box<Aes256Gcm>),
}

impl Cipher {
    pub(crate) fn new(key: &[u8]) -> Result<Self, EncryptionError> {
        let bad = |_| EncryptionError::KeyLength(key.len());
        Ok(match key.len() {
            16 => Cipher::A128(Box::new(Aes128Gcm::new_from_slice(key).map_err(bad)?)),
            24 => Cipher::A192(Box::new(Aes192Gcm::new_from_slice(key).map_err(bad)?)),
            32 => Cipher::A256(Box::new(Aes256Gcm::new_from_slice(key).map_err(bad)?)),
            n => return Err(EncryptionError::KeyLength(n)),
        })
    }

    /// `nonce || ciphertext || tag` of `plaintext` under `aad`, appended to `out`.
    pub(crate) fn seal_into(
        &self,
        nonce: &[u8; GCM_NONCE_LENGTH],
        plaintext: &[u8],
        aad: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), EncryptionError> {
        let n = Nonce::from_slice(nonce);
        let payload = Payload {
            msg: plaintext,
            aad,
        };
        let sealed = match self {
            Cipher::A128(c) => c.encrypt(n, payload),
            Cipher::A192(c) => c.encrypt(n, payload),
            Cipher::A256(c) => c.encrypt(n, payload),
        }
        .map_err(|_| EncryptionError::Malformed("AES-GCM encryption failed".into()))?;
        out.extend_from_slice(nonce);
        out.extend_from_slice(&sealed);
        Ok(())
    }

    /// The plaintext of one `nonce || ciphertext || tag`, its tag checked; `what` names it in
    /// errors.
    pub(crate) fn open(
        &self,
        sealed: &[u8],
        aad: &[u8],
        what: &str,
    ) -> Result<Vec<u8>, EncryptionError> {
        if sealed.len() < GCM_NONCE_LENGTH + GCM_TAG_LENGTH {
            return Err(EncryptionError::Malformed(format!(
                "{what}: {} bytes is shorter than a GCM nonce and tag ({})",
                sealed.len(),
                GCM_NONCE_LENGTH + GCM_TAG_LENGTH
            )));
        }
        let (nonce, body) = sealed.split_at(GCM_NONCE_LENGTH);
        let n = Nonce::from_slice(nonce);
        let payload = Payload { msg: body, aad };
        match self {
            Cipher::A128(c) => c.decrypt(n, payload),
            Cipher::A192(c) => c.decrypt(n, payload),
            Cipher::A256(c) => c.decrypt(n, payload),
        }
        .map_err(|_| EncryptionError::Tag(what.to_string()))
    }
}

/// A fresh random nonce from the operating system.
pub(crate) fn random_nonce() -> Result<[u8; GCM_NONCE_LENGTH], EncryptionError> {
    let mut nonce = [0u8; GCM_NONCE_LENGTH];
    getrandom::getrandom(&mut nonce).map_err(|e| EncryptionError::Random(e.to_string()))?;
    Ok(nonce)
}

/// Encrypts `plaintext` under `key` with `aad`: `nonce || ciphertext || tag`, a random nonce.
pub fn seal(key: &[u8], plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>, EncryptionError> {
    let cipher = Cipher::new(key)?;
    let mut out = Vec::with_capacity(plaintext.len() + GCM_NONCE_LENGTH + GCM_TAG_LENGTH);
    cipher.seal_into(&random_nonce()?, plaintext, aad, &mut out)?;
    Ok(out)
}

/// Decrypts what [`seal`] (or Java's `AesGcmEncryptor`) produced, checking the tag.
pub fn open(key: &[u8], sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>, EncryptionError> {
    Cipher::new(key)?.open(sealed, aad, "AES-GCM ciphertext")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nist_vector_aes128_empty() {
        // NIST GCM test case 2 (key 0^128, IV 0^96, P = 0^128): ciphertext and tag as published.
        let cipher = Cipher::new(&[0u8; 16]).expect("key");
        let mut out = Vec::new();
        cipher
            .seal_into(&[0u8; 12], &[0u8; 16], &[], &mut out)
            .expect("seal");
        let hex: String = out[12..].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf"
        );
    }

    #[test]
    fn round_trip_and_tamper() {
        for len in [16, 24, 32] {
            let key = vec![7u8; len];
            let sealed = seal(&key, b"secret", b"aad").expect("seal");
            assert_eq!(open(&key, &sealed, b"aad").expect("open"), b"secret");
            assert!(matches!(
                open(&key, &sealed, b"other"),
                Err(EncryptionError::Tag(_))
            ));
            let mut bad = sealed.clone();
            bad[15] ^= 1;
            assert!(open(&key, &bad, b"aad").is_err());
            assert!(open(&key, &sealed[..20], b"aad").is_err());
        }
        assert_eq!(
            seal(&[0u8; 17], b"", b""),
            Err(EncryptionError::KeyLength(17))
        );
    }
}
