//! Java's `StandardKeyMetadata`: a version byte (`0x01`) and the Avro binary encoding of
//!
//! ```text
//! record { encryption_key: bytes, aad_prefix: union {null, bytes}, file_length: union {null, long} }
//! ```
//!
//! `file_length` (the encrypted file's length, which readers trust over the file system's) came
//! with Java 1.11; 1.10.2 writes the record without it, and both decode here.

use crate::error::EncryptionError;

pub const KEY_METADATA_VERSION: u8 = 1;
/// No AES key is longer; a larger length field is corrupt input, not a reason to allocate.
const MAX_FIELD_LENGTH: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMetadata {
    pub encryption_key: Vec<u8>,
    pub aad_prefix: Option<Vec<u8>>,
    pub file_length: Option<i64>,
}

impl KeyMetadata {
    pub fn new(
        encryption_key: Vec<u8>,
        aad_prefix: Option<Vec<u8>>,
        file_length: Option<i64>,
    ) -> Self {
        KeyMetadata {
            encryption_key,
            aad_prefix,
            file_length,
        }
    }
}

fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// The key metadata bytes: version byte, then the Avro record. `with_file_length = false`
/// writes Java 1.10.2's record (no `file_length` field at all).
pub fn encode_key_metadata(m: &KeyMetadata, with_file_length: bool) -> Vec<u8> {
    let mut out = vec![KEY_METADATA_VERSION];
    put_bytes(&mut out, &m.encryption_key);
    match &m.aad_prefix {
        None => put_long(&mut out, 0),
        Some(p) => {
            put_long(&mut out, 1);
            put_bytes(&mut out, p);
        }
    }
    if with_file_length {
        match m.file_length {
            None => put_long(&mut out, 0),
            Some(n) => {
                put_long(&mut out, 1);
                put_long(&mut out, n);
            }
        }
    }
    out
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn err(&self, why: &str) -> EncryptionError {
        EncryptionError::Malformed(format!("key metadata: {why} at byte {}", self.pos))
    }

    fn long(&mut self) -> Result<i64, EncryptionError> {
        let mut z: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *self
                .data
                .get(self.pos)
                .ok_or_else(|| self.err("truncated varint"))?;
            self.pos += 1;
            z |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok((z >> 1) as i64 ^ -((z & 1) as i64));
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    fn bytes(&mut self) -> Result<Vec<u8>, EncryptionError> {
        let n = self.long()?;
        if n < 0 || n as u64 > MAX_FIELD_LENGTH {
            return Err(self.err(&format!("invalid bytes length {n}")));
        }
        let end = self.pos + n as usize;
        let b = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| self.err("truncated bytes"))?;
        self.pos = end;
        Ok(b.to_vec())
    }

    fn union_branch(&mut self) -> Result<bool, EncryptionError> {
        match self.long()? {
            0 => Ok(false),
            1 => Ok(true),
            n => Err(self.err(&format!("invalid union branch {n}"))),
        }
    }
}

/// Decodes key metadata with or without `file_length`; anything else is an error.
pub fn decode_key_metadata(data: &[u8]) -> Result<KeyMetadata, EncryptionError> {
    match data.first() {
        None => return Err(EncryptionError::Malformed("key metadata is empty".into())),
        Some(&KEY_METADATA_VERSION) => {}
        Some(v) => {
            return Err(EncryptionError::Malformed(format!(
                "key metadata version {v} is not supported (only 1)"
            )))
        }
    }
    let mut r = Reader { data, pos: 1 };
    let encryption_key = r.bytes()?;
    let aad_prefix = if r.union_branch()? {
        Some(r.bytes()?)
    } else {
        None
    };
    let file_length = if r.pos == data.len() {
        None // Java 1.10.2's record
    } else if r.union_branch()? {
        Some(r.long()?)
    } else {
        None
    };
    if r.pos != data.len() {
        return Err(r.err("trailing bytes"));
    }
    Ok(KeyMetadata {
        encryption_key,
        aad_prefix,
        file_length,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_bytes() {
        let m = KeyMetadata {
            encryption_key: vec![0xAA; 16],
            aad_prefix: Some(vec![1, 2]),
            file_length: Some(300),
        };
        let b = encode_key_metadata(&m, true);
        let mut want = vec![1u8, 32];
        want.extend_from_slice(&[0xAA; 16]);
        want.extend_from_slice(&[2, 4, 1, 2, 2, 0xd8, 0x04]);
        assert_eq!(b, want);
        let old = encode_key_metadata(&m, false);
        assert_eq!(old, want[..want.len() - 3]);
        let back = decode_key_metadata(&old).expect("old");
        assert_eq!(back.file_length, None);
        assert_eq!(back.aad_prefix, Some(vec![1, 2]));
        assert!(decode_key_metadata(&[2, 0]).is_err());
        assert!(decode_key_metadata(&[]).is_err());
        assert!(decode_key_metadata(&[1, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(key in proptest::collection::vec(any::<u8>(), 0..40),
                      aad in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
                      len in proptest::option::of(any::<i64>())) {
            let m = KeyMetadata { encryption_key: key, aad_prefix: aad, file_length: len };
            prop_assert_eq!(decode_key_metadata(&encode_key_metadata(&m, true)).expect("d"), m);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_key_metadata(&bytes);
        }
    }
}
