//! The Avro binary encoding, written, and the object container writer.

use std::hash::{BuildHasher, Hasher};

use frazil_values::Result;

use super::codec::Codec;
use super::container::MAGIC;

/// Records are buffered into blocks of about this many bytes before compression.
const BLOCK_TARGET: usize = 256 << 10;

#[inline]
pub fn long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

#[inline]
pub fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Writes a container: header, then blocks as records are added.
pub struct ContainerWriter {
    codec: Codec,
    sync: [u8; 16],
    out: Vec<u8>,
    block: Vec<u8>,
    block_count: usize,
}

fn random_sync() -> [u8; 16] {
    let mut sync = [0u8; 16];
    for (i, chunk) in sync.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    sync
}

impl ContainerWriter {
    /// `metadata` is written as given, after `avro.schema` and `avro.codec`.
    pub fn new(schema_json: &str, codec: Codec, metadata: &[(String, String)]) -> Self {
        let sync = random_sync();
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(MAGIC);
        long(&mut out, 2 + metadata.len() as i64);
        bytes(&mut out, b"avro.schema");
        bytes(&mut out, schema_json.as_bytes());
        bytes(&mut out, b"avro.codec");
        bytes(&mut out, codec.name().as_bytes());
        for (k, v) in metadata {
            bytes(&mut out, k.as_bytes());
            bytes(&mut out, v.as_bytes());
        }
        long(&mut out, 0);
        out.extend_from_slice(&sync);
        ContainerWriter {
            codec,
            sync,
            out,
            block: Vec::with_capacity(BLOCK_TARGET + 4096),
            block_count: 0,
        }
    }

    /// The buffer the next record is encoded into; call [`ContainerWriter::end_record`] after.
    pub fn record_buffer(&mut self) -> &mut Vec<u8> {
        &mut self.block
    }

    pub fn end_record(&mut self) -> Result<()> {
        self.block_count += 1;
        if self.block.len() >= BLOCK_TARGET {
            self.flush()?;
        }
        Ok(())
    }

    /// Ends the record and its block (a block boundary where the caller wants one).
    pub fn end_record_and_block(&mut self) -> Result<()> {
        self.block_count += 1;
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        if self.block_count == 0 {
            return Ok(());
        }
        let mut packed = Vec::with_capacity(self.block.len() / 2 + 64);
        self.codec.compress(&self.block, &mut packed)?;
        long(&mut self.out, self.block_count as i64);
        long(&mut self.out, packed.len() as i64);
        self.out.extend_from_slice(&packed);
        self.out.extend_from_slice(&self.sync);
        self.block.clear();
        self.block_count = 0;
        Ok(())
    }

    /// The bytes written so far (whole blocks, the header first), taken out of the writer.
    pub fn take_written(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.flush()?;
        Ok(self.out)
    }
}
