//! The AES-GCM stream format (`format/gcm-stream-spec.md` of the Java reference):
//!
//! ```text
//! "AGS1" | plain block length (u32 LE) | block 0 | block 1 | ... | block n-1
//! block i = nonce (12) | ciphertext | tag (16),  AAD = file AAD prefix || i as u32 LE
//! ```
//!
//! Every block but the last holds exactly the plain block length; the last holds 1 to that many
//! bytes, or none for an empty stream (which is one block with an empty ciphertext). A stream
//! whose plaintext is an exact multiple of the block length ends with a full block (no empty
//! block follows), as Java's `AesGcmOutputStream` writes it. Block indices in the AAD stop
//! blocks from being reordered or dropped from the middle; dropping whole trailing blocks is
//! caught only against the expected stream length (the key metadata's `file_length`), which
//! [`StreamReader::new`] takes when the caller has it.

use crate::cipher::{random_nonce, Cipher, GCM_NONCE_LENGTH, GCM_TAG_LENGTH};
use crate::error::EncryptionError;

pub const GCM_STREAM_MAGIC: &[u8; 4] = b"AGS1";
pub const GCM_STREAM_HEADER_LENGTH: usize = 8;
/// Java's `Ciphers.PLAIN_BLOCK_SIZE`: 1 MiB.
pub const DEFAULT_PLAIN_BLOCK_SIZE: u32 = 1024 * 1024;
const BLOCK_OVERHEAD: usize = GCM_NONCE_LENGTH + GCM_TAG_LENGTH;
/// Block indices are Java ints: at most `i32::MAX` blocks.
const MAX_BLOCKS: u64 = i32::MAX as u64;

fn block_aad(prefix: &[u8], index: u32) -> Vec<u8> {
    let mut aad = Vec::with_capacity(prefix.len() + 4);
    aad.extend_from_slice(prefix);
    aad.extend_from_slice(&index.to_le_bytes());
    aad
}

/// Encrypts `plaintext` as one AGS1 stream of `block_size`-byte plain blocks, each under a
/// fresh random nonce.
pub fn encrypt_stream(
    key: &[u8],
    aad_prefix: &[u8],
    plaintext: &[u8],
    block_size: u32,
) -> Result<Vec<u8>, EncryptionError> {
    if block_size == 0 || block_size > i32::MAX as u32 {
        return Err(EncryptionError::Malformed(format!(
            "invalid AES-GCM stream block size {block_size}"
        )));
    }
    let cipher = Cipher::new(key)?;
    let bs = block_size as usize;
    let blocks = plaintext.len().div_ceil(bs).max(1);
    if blocks as u64 > MAX_BLOCKS {
        return Err(EncryptionError::Malformed(format!(
            "{} bytes need {blocks} blocks of {bs}, more than an AES-GCM stream can index",
            plaintext.len()
        )));
    }
    let mut out =
        Vec::with_capacity(GCM_STREAM_HEADER_LENGTH + plaintext.len() + blocks * BLOCK_OVERHEAD);
    out.extend_from_slice(GCM_STREAM_MAGIC);
    out.extend_from_slice(&block_size.to_le_bytes());
    for index in 0..blocks {
        let start = index * bs;
        let end = (start + bs).min(plaintext.len());
        let aad = block_aad(aad_prefix, index as u32);
        cipher.seal_into(&random_nonce()?, &plaintext[start..end], &aad, &mut out)?;
    }
    Ok(out)
}

/// Random access to an AGS1 stream held in memory: its plaintext length and any plaintext
/// range, decrypting (and authenticating) only the blocks the range touches.
pub struct StreamReader<'a> {
    cipher: Cipher,
    aad_prefix: &'a [u8],
    data: &'a [u8],
    block_size: usize,
    blocks: usize,
    plain_length: u64,
    name: &'a str,
}

impl<'a> StreamReader<'a> {
    /// Parses the header and block layout of `data`. `expected_length`, when known (the key
    /// metadata's `file_length`), must equal the stream's length: that is what catches whole
    /// trailing blocks cut off. `name` (a file's location) prefixes every error.
    pub fn new(
        key: &[u8],
        aad_prefix: &'a [u8],
        data: &'a [u8],
        expected_length: Option<u64>,
        name: &'a str,
    ) -> Result<Self, EncryptionError> {
        let malformed = |why: String| EncryptionError::Malformed(format!("{name}: {why}"));
        let cipher = Cipher::new(key)?;
        if let Some(expected) = expected_length {
            if expected != data.len() as u64 {
                return Err(malformed(format!(
                    "encrypted stream is {} bytes, its key metadata says {expected} (truncated or \
                     extended)",
                    data.len()
                )));
            }
        }
        if data.len() < GCM_STREAM_HEADER_LENGTH || &data[..4] != GCM_STREAM_MAGIC {
            return Err(malformed(
                "not an AES-GCM stream (no AGS1 magic; is the file encrypted?)".into(),
            ));
        }
        let block_size = u32::from_le_bytes([data[4], data[5], data[6], data[7]]);
        if block_size == 0 || block_size > i32::MAX as u32 {
            return Err(malformed(format!("invalid plain block size {block_size}")));
        }
        let block_size = block_size as usize;
        let body = (data.len() - GCM_STREAM_HEADER_LENGTH) as u64;
        let cipher_block = (block_size + BLOCK_OVERHEAD) as u64;
        let full = body / cipher_block;
        let rest = body % cipher_block;
        let (blocks, plain_length) = if rest == 0 {
            if full == 0 {
                return Err(malformed("truncated AES-GCM stream: no blocks".into()));
            }
            (full, full * block_size as u64)
        } else if rest < BLOCK_OVERHEAD as u64 {
            return Err(malformed(format!(
                "truncated AES-GCM stream: last block of {rest} bytes is shorter than a nonce \
                 and tag"
            )));
        } else {
            (
                full + 1,
                full * block_size as u64 + rest - BLOCK_OVERHEAD as u64,
            )
        };
        if blocks > MAX_BLOCKS {
            return Err(malformed(format!(
                "{blocks} blocks, more than a stream can index"
            )));
        }
        Ok(StreamReader {
            cipher,
            aad_prefix,
            data,
            block_size,
            blocks: blocks as usize,
            plain_length,
            name,
        })
    }

    pub fn plain_length(&self) -> u64 {
        self.plain_length
    }

    pub fn block_count(&self) -> usize {
        self.blocks
    }

    /// The plaintext of block `index`, its tag checked.
    pub fn block(&self, index: usize) -> Result<Vec<u8>, EncryptionError> {
        if index >= self.blocks {
            return Err(EncryptionError::Malformed(format!(
                "{}: block {index} out of range ({} blocks)",
                self.name, self.blocks
            )));
        }
        let cipher_block = self.block_size + BLOCK_OVERHEAD;
        let start = GCM_STREAM_HEADER_LENGTH + index * cipher_block;
        let end = (start + cipher_block).min(self.data.len());
        let aad = block_aad(self.aad_prefix, index as u32);
        let what = format!("{}: block {index}", self.name);
        self.cipher.open(&self.data[start..end], &aad, &what)
    }

    /// `length` plaintext bytes from `offset` (fewer at the end of the stream).
    pub fn read_range(&self, offset: u64, length: u64) -> Result<Vec<u8>, EncryptionError> {
        if offset > self.plain_length {
            return Err(EncryptionError::Malformed(format!(
                "{}: read at {offset} is past the end ({} bytes)",
                self.name, self.plain_length
            )));
        }
        let end = offset.saturating_add(length).min(self.plain_length);
        let mut out = Vec::with_capacity((end - offset) as usize);
        let bs = self.block_size as u64;
        let mut pos = offset;
        while pos < end {
            let index = pos / bs;
            let plain = self.block(index as usize)?;
            let from = (pos - index * bs) as usize;
            let to = ((end - index * bs).min(plain.len() as u64)) as usize;
            out.extend_from_slice(&plain[from..to]);
            pos = index * bs + to as u64;
        }
        Ok(out)
    }

    /// The whole plaintext, every block authenticated.
    pub fn read_all(&self) -> Result<Vec<u8>, EncryptionError> {
        let mut out = Vec::with_capacity(self.plain_length as usize);
        for index in 0..self.blocks {
            out.extend_from_slice(&self.block(index)?);
        }
        Ok(out)
    }
}

/// The whole plaintext of an AGS1 stream (see [`StreamReader::new`] for the arguments).
pub fn decrypt_stream(
    key: &[u8],
    aad_prefix: &[u8],
    data: &[u8],
    expected_length: Option<u64>,
    name: &str,
) -> Result<Vec<u8>, EncryptionError> {
    StreamReader::new(key, aad_prefix, data, expected_length, name)?.read_all()
}

/// `length` plaintext bytes from `offset` (`None`: to the end) of an AGS1 stream, with the
/// stream's plaintext length (see [`StreamReader::new`] for the other arguments).
pub fn read_stream(
    key: &[u8],
    aad_prefix: &[u8],
    data: &[u8],
    expected_length: Option<u64>,
    name: &str,
    offset: u64,
    length: Option<u64>,
) -> Result<(u64, Vec<u8>), EncryptionError> {
    let reader = StreamReader::new(key, aad_prefix, data, expected_length, name)?;
    let plain = reader.read_range(offset, length.unwrap_or(u64::MAX))?;
    Ok((reader.plain_length(), plain))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: [u8; 16] = [3u8; 16];

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn layout_matches_the_spec() {
        // Empty: header + one empty block; exact multiple: no trailing empty block.
        assert_eq!(encrypt_stream(&KEY, b"", b"", 16).expect("e").len(), 8 + 28);
        assert_eq!(
            encrypt_stream(&KEY, b"", &data(32), 16).expect("e").len(),
            8 + 2 * 44
        );
        assert_eq!(
            encrypt_stream(&KEY, b"", &data(33), 16).expect("e").len(),
            8 + 2 * 44 + 29
        );
        let s = encrypt_stream(&KEY, b"p", &data(5), DEFAULT_PLAIN_BLOCK_SIZE).expect("e");
        assert_eq!(&s[..8], b"AGS1\x00\x00\x10\x00");
    }

    #[test]
    fn tampering_is_an_error() {
        let plain = data(100);
        let s = encrypt_stream(&KEY, b"aad", &plain, 16).expect("e");
        let ok = |d: &[u8], n: Option<u64>| decrypt_stream(&KEY, b"aad", d, n, "f");
        assert_eq!(ok(&s, Some(s.len() as u64)).expect("d"), plain);
        // flipped byte anywhere after the header
        for i in 8..s.len() {
            let mut bad = s.clone();
            bad[i] ^= 0x40;
            assert!(ok(&bad, None).is_err(), "flip at {i}");
        }
        // swapped blocks 0 and 1
        let mut swapped = s[..8].to_vec();
        swapped.extend_from_slice(&s[8 + 44..8 + 88]);
        swapped.extend_from_slice(&s[8..8 + 44]);
        swapped.extend_from_slice(&s[8 + 88..]);
        assert!(matches!(ok(&swapped, None), Err(EncryptionError::Tag(_))));
        // dropped middle block
        let mut dropped = s[..8 + 44].to_vec();
        dropped.extend_from_slice(&s[8 + 88..]);
        assert!(ok(&dropped, None).is_err());
        // dropped trailing full blocks: only the expected length tells
        let whole = encrypt_stream(&KEY, b"aad", &data(64), 16).expect("e");
        let cut = &whole[..8 + 3 * 44];
        assert!(ok(cut, Some(whole.len() as u64)).is_err());
        // truncation inside a block, wrong key, wrong AAD, bad magic
        assert!(ok(&s[..s.len() - 1], None).is_err());
        assert!(ok(&s[..10], None).is_err());
        assert!(decrypt_stream(&[4u8; 16], b"aad", &s, None, "f").is_err());
        assert!(decrypt_stream(&KEY, b"aae", &s, None, "f").is_err());
        assert!(ok(b"PAR1\x00\x00\x00\x00", None).is_err());
        let err = ok(&swapped, None).expect_err("tag");
        assert!(err.to_string().starts_with("f: block 0"), "{err}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn round_trip_and_ranges(len in prop_oneof![Just(0usize), Just(16), Just(17), Just(48), Just(49), 0usize..200],
                                 bs in prop_oneof![Just(16u32), 1u32..40],
                                 off in 0u64..220, n in 0u64..220) {
            let plain = data(len);
            let s = encrypt_stream(&KEY, b"x", &plain, bs).expect("e");
            let reader = StreamReader::new(&KEY, b"x", &s, Some(s.len() as u64), "f").expect("r");
            prop_assert_eq!(reader.plain_length(), len as u64);
            prop_assert_eq!(reader.read_all().expect("d"), plain.clone());
            if off <= len as u64 {
                let end = (off + n).min(len as u64) as usize;
                prop_assert_eq!(reader.read_range(off, n).expect("r"), plain[off as usize..end].to_vec());
            } else {
                prop_assert!(reader.read_range(off, n).is_err());
            }
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decrypt_stream(&KEY, b"", &bytes, None, "f");
            let mut with_magic = b"AGS1\x04\x00\x00\x00".to_vec();
            with_magic.extend_from_slice(&bytes);
            let _ = decrypt_stream(&KEY, b"", &with_magic, None, "f");
        }
    }
}
