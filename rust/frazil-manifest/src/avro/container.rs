//! The Avro object container file: `Obj\x01`, a metadata map, a 16-byte sync marker, then blocks
//! of (record count, byte size, compressed records, sync marker).

use std::collections::BTreeMap;

use frazil_values::{Error, Result};

use super::codec::Codec;
use super::decode::Reader;
use super::schema::Schema;

pub const MAGIC: &[u8; 4] = b"Obj\x01";

#[derive(Debug, Clone)]
pub struct Header {
    /// Every metadata entry, `avro.schema` and `avro.codec` included.
    pub metadata: BTreeMap<String, Vec<u8>>,
    pub schema: Schema,
    pub codec: Codec,
    pub sync: [u8; 16],
}

impl Header {
    /// A metadata value as text, if present.
    pub fn meta_str(&self, key: &str) -> Result<Option<&str>> {
        match self.metadata.get(key) {
            None => Ok(None),
            Some(v) => std::str::from_utf8(v)
                .map(Some)
                .map_err(|_| Error::decode(format!("metadata {key:?} is not valid UTF-8"))),
        }
    }
}

/// A parsed container: its header and the bytes of its blocks, read lazily.
pub struct Container<'a> {
    pub header: Header,
    data: &'a [u8],
    /// Offset of the first block.
    body: usize,
}

/// One block: how many records it claims, its decompressed bytes, where it started.
pub struct Block<'a> {
    pub count: usize,
    pub bytes: &'a [u8],
    pub offset: usize,
}

impl<'a> Container<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Container<'a>> {
        if data.len() < 4 || &data[..4] != MAGIC {
            return Err(Error::decode(
                "not an Avro object container file (wrong magic)",
            ));
        }
        let mut r = Reader::new(&data[4..]);
        let mut metadata = BTreeMap::new();
        loop {
            let n = r
                .block_count()
                .map_err(|e| Error::decode(format!("corrupt file header: {e}")))?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let key = r
                    .string()
                    .map_err(|e| Error::decode(format!("corrupt file header key: {e}")))?;
                let value = r
                    .bytes()
                    .map_err(|e| Error::decode(format!("corrupt file header value: {e}")))?;
                metadata.insert(key.to_string(), value.to_vec());
            }
        }
        let sync_bytes = r
            .take(16, "the sync marker")
            .map_err(|_| Error::decode("truncated file header: no sync marker"))?;
        let mut sync = [0u8; 16];
        sync.copy_from_slice(sync_bytes);
        let body = 4 + r.position();
        let schema_text = metadata
            .get("avro.schema")
            .ok_or_else(|| Error::decode("file header has no avro.schema"))?;
        let schema_text = std::str::from_utf8(schema_text)
            .map_err(|_| Error::decode("avro.schema is not valid UTF-8"))?;
        let schema = Schema::parse(schema_text)?;
        let codec = match metadata.get("avro.codec") {
            None => Codec::Null,
            Some(c) => Codec::parse(
                std::str::from_utf8(c).map_err(|_| Error::decode("avro.codec is not UTF-8"))?,
            )?,
        };
        Ok(Container {
            header: Header {
                metadata,
                schema,
                codec,
                sync,
            },
            data,
            body,
        })
    }

    /// Calls `f` with every block, decompressed, in order.
    pub fn for_each_block(&self, mut f: impl FnMut(Block<'_>) -> Result<()>) -> Result<()> {
        let mut pos = self.body;
        let mut scratch = Vec::new();
        while pos < self.data.len() {
            let offset = pos;
            let at = |e: Error| Error::new(e.kind, format!("block at byte {offset}: {e}"));
            let mut r = Reader::new(&self.data[pos..]);
            let count = r.long().map_err(at)?;
            let size = r.long().map_err(at)?;
            if count < 0 || size < 0 {
                return Err(at(Error::decode(format!(
                    "negative record count {count} or size {size}"
                ))));
            }
            let size = size as u64;
            if size + 16 > r.remaining() as u64 {
                return Err(at(Error::decode(format!(
                    "truncated file: block of {size} bytes with {} bytes left",
                    r.remaining()
                ))));
            }
            let compressed = r.take(size as usize, "a block").map_err(at)?;
            let sync = r.take(16, "the sync marker").map_err(at)?;
            if sync != self.header.sync {
                return Err(at(Error::decode(
                    "sync marker does not match the file header's",
                )));
            }
            pos += r.position();
            let bytes: &[u8] = if self.header.codec == Codec::Null {
                compressed
            } else {
                self.header
                    .codec
                    .decompress(compressed, &mut scratch)
                    .map_err(at)?;
                &scratch
            };
            // Every manifest record takes at least one byte.
            if count as u64 > bytes.len() as u64 {
                return Err(at(Error::decode(format!(
                    "block claims {count} records in {} bytes",
                    bytes.len()
                ))));
            }
            f(Block {
                count: count as usize,
                bytes,
                offset,
            })
            .map_err(at)?;
        }
        Ok(())
    }
}
