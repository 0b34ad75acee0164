//! The Avro object container file: `Obj\x01`, a metadata map, a 16-byte sync marker, then blocks
//! of (record count, byte size, compressed records, sync marker).

use std::collections::BTreeMap;
use std::sync::Arc;

use frazil_values::{Error, Result};

use super::codec::Codec;
use super::decode::Reader;
use super::schema::Schema;
use crate::recent::Recent;

pub const MAGIC: &[u8; 4] = b"Obj\x01";
/// The longest schema text whose parse is kept for the next file (a manifest's is a few KB).
const MAX_KEPT_SCHEMA: usize = 256 << 10;
/// The largest inflate buffer a thread keeps between files.
const KEEP_SCRATCH_BYTES: usize = 64 << 20;

#[derive(Debug, Clone)]
pub struct Header {
    /// Every metadata entry, `avro.schema` and `avro.codec` included.
    pub metadata: BTreeMap<String, Vec<u8>>,
    pub schema: Arc<Schema>,
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

/// The most records a block may claim per byte of its (compressed) content; each record is at
/// least a byte once inflated, and a real block is two orders of magnitude below this.
pub const MAX_RECORDS_PER_BLOCK_BYTE: u64 = 4;

/// A parsed container: its header and the bytes of its blocks, read lazily.
pub struct Container<'a> {
    pub header: Header,
    data: &'a [u8],
    /// Offset of the first block.
    body: usize,
    /// The most records a block may claim per byte of its compressed content.
    max_records_per_byte: u64,
}

/// One block: how many records it claims, its decompressed bytes, where it started and where
/// the next one starts (just past its sync marker).
pub struct Block<'a> {
    pub count: usize,
    pub bytes: &'a [u8],
    pub offset: usize,
    pub end: usize,
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
        // a table's manifests share their schema: parsed once (see `recent`), unless it is
        // too large to keep around
        static SCHEMAS: Recent<Box<str>, Arc<Schema>> = Recent::new(16);
        let schema = if schema_text.len() <= MAX_KEPT_SCHEMA {
            SCHEMAS.get_or_make(
                |text| **text == *schema_text,
                || Ok::<_, Error>((schema_text.into(), Arc::new(Schema::parse(schema_text)?))),
            )?
        } else {
            Arc::new(Schema::parse(schema_text)?)
        };
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
            max_records_per_byte: MAX_RECORDS_PER_BLOCK_BYTE,
        })
    }

    /// Bounds the records a block may claim per byte of its compressed content by `n` instead
    /// of the manifest bound (data files of near-constant columns compress far better than
    /// manifests; their readers bound records by other means too).
    pub fn with_max_records_per_byte(mut self, n: u64) -> Self {
        self.max_records_per_byte = n;
        self
    }

    /// Offset of the first block (just after the header's sync marker).
    pub fn body_offset(&self) -> usize {
        self.body
    }

    /// (offset, record count) of every block, from the block headers alone (nothing is
    /// inflated); a corrupt header or size is an error.
    pub fn block_headers(&self) -> Result<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        let mut pos = self.body;
        while pos < self.data.len() {
            let mut r = Reader::new(&self.data[pos..]);
            let (count, size) = (r.long()?, r.long()?);
            let (Ok(count), Ok(size)) = (usize::try_from(count), usize::try_from(size)) else {
                return Err(Error::decode(format!(
                    "block at byte {pos}: negative record count {count} or size {size}"
                )));
            };
            out.push((pos, count));
            let next = pos
                .saturating_add(r.position())
                .saturating_add(size)
                .saturating_add(16);
            if next > self.data.len() {
                return Err(Error::decode(format!(
                    "block at byte {pos}: truncated file (a block of {size} bytes runs past its end)"
                )));
            }
            pos = next;
        }
        Ok(out)
    }

    /// Calls `f` with every block, decompressed, in order.
    pub fn for_each_block(&self, f: impl FnMut(Block<'_>) -> Result<()>) -> Result<()> {
        self.for_each_block_in(self.body..self.data.len(), f)
    }

    /// Calls `f` with every block starting in `range` (byte offsets of the file, as
    /// [`Container::split`] gives them), decompressed, in order.
    pub fn for_each_block_in(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(Block<'_>) -> Result<()>,
    ) -> Result<()> {
        // One inflate buffer per thread, kept between files: a fresh multi-megabyte buffer per
        // manifest costs more in page faults than inflating into a warm one. Taken out of the
        // thread-local (not borrowed) so a nested call on this thread simply starts its own.
        thread_local! {
            static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
        }
        let mut scratch = SCRATCH.with(std::cell::Cell::take);
        let result = self.blocks_into(range, &mut scratch, &mut f);
        // Keep a warm buffer, but do not pin an outsized one (a rare huge block) per thread.
        if scratch.capacity() <= KEEP_SCRATCH_BYTES {
            SCRATCH.with(|cell| cell.set(scratch));
        }
        result
    }

    /// The record count the block headers claim, read without inflating anything; a hint
    /// for sizing columns (a corrupt header just ends the count there).
    pub fn record_count_hint(&self) -> usize {
        self.record_count_hint_in(self.body..self.data.len())
    }

    /// [`Container::record_count_hint`] of the blocks starting in `range`.
    pub fn record_count_hint_in(&self, range: std::ops::Range<usize>) -> usize {
        let mut pos = range.start;
        let mut total = 0usize;
        while pos < range.end.min(self.data.len()) {
            let mut r = Reader::new(&self.data[pos..]);
            let (Ok(count), Ok(size)) = (r.long(), r.long()) else {
                break;
            };
            let (Ok(count), Ok(size)) = (usize::try_from(count), usize::try_from(size)) else {
                break;
            };
            total = total.saturating_add(count);
            pos = pos
                .saturating_add(r.position())
                .saturating_add(size)
                .saturating_add(16);
        }
        total
    }

    /// Splits the blocks into at most `parts` ranges of consecutive blocks with about equal
    /// compressed bytes, as byte ranges for [`Container::for_each_block_in`] that cover the
    /// whole body. Reads only block headers; a corrupt header ends the splitting there (the
    /// last range then runs to the end, where decoding reports it).
    pub fn split(&self, parts: usize) -> Vec<std::ops::Range<usize>> {
        let end = self.data.len();
        if parts <= 1 {
            // one part needs no walk over the block headers (a million of them, one per entry,
            // in PyIceberg's manifests)
            return std::iter::once(self.body..end.max(self.body)).collect();
        }
        let mut starts = Vec::new();
        let mut pos = self.body;
        while pos < end {
            starts.push(pos);
            let mut r = Reader::new(&self.data[pos..]);
            let (Ok(_), Ok(size)) = (r.long(), r.long()) else {
                break;
            };
            let Ok(size) = usize::try_from(size) else {
                break;
            };
            pos = pos
                .saturating_add(r.position())
                .saturating_add(size)
                .saturating_add(16);
        }
        let parts = parts.clamp(1, starts.len().max(1));
        let body = end.saturating_sub(self.body);
        let mut ranges = Vec::with_capacity(parts);
        let mut from = self.body;
        for &start in &starts {
            // cut before the block that starts past the next equal share of the body
            let share = body / parts * (ranges.len() + 1);
            if ranges.len() + 1 < parts && start > from && start - self.body >= share {
                ranges.push(from..start);
                from = start;
            }
        }
        ranges.push(from..end.max(from));
        ranges
    }

    fn blocks_into(
        &self,
        range: std::ops::Range<usize>,
        scratch: &mut Vec<u8>,
        f: &mut impl FnMut(Block<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut pos = range.start;
        while pos < range.end.min(self.data.len()) {
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
            // Records per compressed byte: Java-written manifests hold about 0.014 (70 bytes a
            // record); a count beyond this bound only comes from a block of near-identical
            // records built to inflate, and would be decoded into gigabytes of columns.
            if count as u64 > size.saturating_mul(self.max_records_per_byte) {
                return Err(at(Error::decode(format!(
                    "block claims {count} records in {size} bytes, more than {} per byte",
                    self.max_records_per_byte
                ))));
            }
            if size + 16 > r.remaining() as u64 {
                return Err(at(Error::decode(format!(
                    "truncated file: a block of {size} bytes and its 16-byte sync marker, \
                     {} bytes left",
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
                    .decompress(compressed, scratch)
                    .map_err(at)?;
                scratch
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
                end: pos,
            })
            .map_err(at)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    }

    /// A Java-written manifest's header followed by one hostile block: 64 MiB of zeros deflated
    /// to about 64 KiB, claiming 10M records (a 248 KB manifest of such blocks decoded to
    /// 10.9M rows and 1.9 GB). Refused from the block header, before anything is inflated.
    #[test]
    fn records_per_block_are_bounded_by_its_compressed_bytes() -> Result<()> {
        let java = include_bytes!("../../tests/data/v2-data.avro");
        let c = Container::parse(java)?;
        assert_eq!(c.header.codec, Codec::Deflate);
        let mut packed = Vec::new();
        Codec::Deflate.compress(&vec![0u8; 64 << 20], &mut packed)?;
        let mut data = java[..c.body].to_vec();
        long(&mut data, 10_000_000);
        long(&mut data, packed.len() as i64);
        data.extend_from_slice(&packed);
        data.extend_from_slice(&c.header.sync);
        let bomb = Container::parse(&data)?;
        let mut called = false;
        let e = bomb
            .for_each_block(|_| {
                called = true;
                Ok(())
            })
            .unwrap_err();
        assert!(!called, "the block reached the record decoder");
        assert_eq!(e.kind, frazil_values::ErrorKind::Decode);
        assert!(e.message.contains("claims 10000000 records"), "{e}");
        // The Java file itself, far below the bound, still reads.
        let mut records = 0;
        c.for_each_block(|b| {
            records += b.count;
            Ok(())
        })?;
        assert!(records > 0);
        Ok(())
    }
}
