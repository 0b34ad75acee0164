//! Block codecs of the object container (`avro.codec`): null, deflate (raw RFC 1951), snappy
//! (with its trailing big-endian CRC-32 of the uncompressed bytes) and zstandard.

use std::io::Read;

use frazil_values::{Error, Result};

/// The largest block a decoder inflates. Writers flush blocks of well under a megabyte (Java's
/// default is 64 KiB per block); the cap keeps a compression bomb from taking the machine.
pub const MAX_BLOCK_SIZE: usize = 256 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Null,
    Deflate,
    Snappy,
    Zstandard,
}

impl Codec {
    pub fn parse(name: &str) -> Result<Codec> {
        Ok(match name {
            "null" => Codec::Null,
            "deflate" => Codec::Deflate,
            "snappy" => Codec::Snappy,
            "zstandard" | "zstd" => Codec::Zstandard,
            other => {
                return Err(Error::unsupported(format!(
                    "unknown Avro codec {other:?} (expected null, deflate, snappy or zstandard)"
                )))
            }
        })
    }

    /// The name written to `avro.codec`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Null => "null",
            Codec::Deflate => "deflate",
            Codec::Snappy => "snappy",
            Codec::Zstandard => "zstandard",
        }
    }

    /// Decompresses one block into `out` (cleared first).
    pub fn decompress(self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        match self {
            Codec::Null => out.extend_from_slice(data),
            Codec::Deflate => inflate(data, out)?,
            Codec::Zstandard => {
                // One decompression context per thread: a fresh one per block allocates its
                // window and tables again (a block per entry makes that a million times).
                thread_local! {
                    static CONTEXT: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
                        const { std::cell::RefCell::new(None) };
                }
                CONTEXT.with(|cell| -> Result<()> {
                    // a nested call on this thread (none today) would get its own context
                    let Ok(mut slot) = cell.try_borrow_mut() else {
                        let decoder = zstd::stream::read::Decoder::with_buffer(data)
                            .map_err(|e| Error::decode(format!("corrupt zstandard block: {e}")))?;
                        return read_bounded(decoder, out, "zstandard", data.len());
                    };
                    let context = slot.get_or_insert_with(zstd::zstd_safe::DCtx::create);
                    let decoder = zstd::stream::read::Decoder::with_context(data, context);
                    read_bounded(decoder, out, "zstandard", data.len())
                })?;
            }
            Codec::Snappy => {
                let Some(split) = data.len().checked_sub(4) else {
                    return Err(Error::decode(
                        "snappy block shorter than its 4-byte checksum",
                    ));
                };
                let (body, crc) = data.split_at(split);
                let len = snap::raw::decompress_len(body)
                    .map_err(|e| Error::decode(format!("corrupt snappy block: {e}")))?;
                if len > MAX_BLOCK_SIZE {
                    return Err(too_large("snappy"));
                }
                // Snappy expands at most ~21x (a 3-byte copy of 64 bytes); a longer claim is
                // corrupt, and must not be allocated.
                if len > body.len().saturating_mul(32).saturating_add(64) {
                    return Err(Error::decode(format!(
                        "corrupt snappy block: {len} bytes claimed from {}",
                        body.len()
                    )));
                }
                out.resize(len, 0);
                let n = snap::raw::Decoder::new()
                    .decompress(body, out)
                    .map_err(|e| Error::decode(format!("corrupt snappy block: {e}")))?;
                out.truncate(n);
                let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
                if crc32fast::hash(out) != expected {
                    return Err(Error::decode("snappy block fails its CRC-32 check"));
                }
            }
        }
        Ok(())
    }

    /// Compresses one block, appending to `out`.
    pub fn compress(self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        use std::io::Write;
        let failed = |e: std::io::Error| Error::invalid(format!("{} failed: {e}", self.name()));
        match self {
            Codec::Null => out.extend_from_slice(data),
            Codec::Deflate => {
                let mut enc =
                    flate2::write::DeflateEncoder::new(out, flate2::Compression::default());
                enc.write_all(data).map_err(failed)?;
                enc.finish().map_err(failed)?;
            }
            Codec::Zstandard => {
                let compressed = zstd::bulk::compress(data, 3).map_err(failed)?;
                out.extend_from_slice(&compressed);
            }
            Codec::Snappy => {
                let compressed = snap::raw::Encoder::new()
                    .compress_vec(data)
                    .map_err(|e| Error::invalid(format!("snappy failed: {e}")))?;
                out.extend_from_slice(&compressed);
                out.extend_from_slice(&crc32fast::hash(data).to_be_bytes());
            }
        }
        Ok(())
    }
}

fn too_large(codec: &str) -> Error {
    Error::decode(format!(
        "{codec} block inflates beyond {MAX_BLOCK_SIZE} bytes"
    ))
}

/// Inflates a raw deflate stream from the block into `out` with libdeflate: a whole block is
/// in memory, so the one-shot decompressor (about 1.5x zlib's streaming inflate, and no
/// window copies) applies. Its output must fit a buffer given up front: `out`'s capacity (a
/// warm per-thread buffer sized by earlier blocks) or a guess from the block's size, doubled
/// and retried when short, never past [`MAX_BLOCK_SIZE`].
///
/// Writers that flush a block per record (PyIceberg, through fastavro) leave a million small
/// streams of one deflate block each, about three in four with the fixed Huffman code. A
/// decompressor keeps the fixed code's tables only until it decodes a dynamic block, so
/// streams that open with a fixed-code block get a decompressor of their own, whose tables are
/// then built once per thread instead of after every dynamic block.
fn inflate(data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    use libdeflate_sys as sys;

    /// One decompressor per thread and kind of first block (it holds only tables, no stream
    /// state).
    struct Decompressor(*mut sys::libdeflate_decompressor);
    impl Drop for Decompressor {
        fn drop(&mut self) {
            // SAFETY: allocated by libdeflate_alloc_decompressor, freed once here.
            unsafe { sys::libdeflate_free_decompressor(self.0) }
        }
    }
    thread_local! {
        // SAFETY: no preconditions; a null result (out of memory) is checked at use.
        static FIXED: Decompressor = Decompressor(unsafe { sys::libdeflate_alloc_decompressor() });
        static OTHER: Decompressor = Decompressor(unsafe { sys::libdeflate_alloc_decompressor() });
    }
    let corrupt = |why: &str| Error::decode(format!("corrupt deflate block: {why}"));
    // Manifests compress about 4-8x.
    let mut room = data
        .len()
        .saturating_mul(8)
        .max(out.capacity())
        .clamp(1 << 12, MAX_BLOCK_SIZE);
    // BTYPE, the first block header's bits 1-2: 01 is the fixed Huffman code (RFC 1951 3.2.3)
    let fixed = data.first().is_some_and(|b| b & 0b110 == 0b010);
    let run = |d: &Decompressor| loop {
        if d.0.is_null() {
            return Err(Error::decode("out of memory for a deflate decompressor"));
        }
        out.clear();
        out.reserve(room);
        let mut written = 0usize;
        // SAFETY: the input is a live slice; the output is `out`'s spare capacity of at least
        // `room` bytes, which libdeflate writes at most `room` of, reporting how many in
        // `written`; only then does `set_len` cover them.
        let result = unsafe {
            sys::libdeflate_deflate_decompress(
                d.0,
                data.as_ptr().cast(),
                data.len(),
                out.as_mut_ptr().cast(),
                room,
                &mut written,
            )
        };
        match result {
            sys::libdeflate_result_LIBDEFLATE_SUCCESS => {
                // SAFETY: see above; `written <= room <= capacity`.
                unsafe { out.set_len(written.min(room)) };
                return Ok(());
            }
            sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE if room < MAX_BLOCK_SIZE => {
                room = room.saturating_mul(2).min(MAX_BLOCK_SIZE);
            }
            sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => {
                return Err(too_large("deflate"));
            }
            _ => return Err(corrupt("invalid or truncated deflate stream")),
        }
    };
    if fixed {
        FIXED.with(run)
    } else {
        OTHER.with(run)
    }
}

/// The most a compressed block may expand: deflate's own limit is about 1032x; a zstandard
/// frame of run-length blocks goes far past it, which no manifest block comes near.
pub const MAX_EXPANSION: usize = 1032;

fn read_bounded(reader: impl Read, out: &mut Vec<u8>, codec: &str, input: usize) -> Result<()> {
    let most = input
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(1 << 16)
        .min(MAX_BLOCK_SIZE);
    let mut limited = reader.take(most as u64 + 1);
    limited
        .read_to_end(out)
        .map_err(|e| Error::decode(format!("corrupt {codec} block: {e}")))?;
    if out.len() > MAX_BLOCK_SIZE {
        return Err(too_large(codec));
    }
    if out.len() > most {
        return Err(Error::decode(format!(
            "{codec} block of {input} bytes inflates past {MAX_EXPANSION} times its size"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 MiB of zeros zstd-compress to a few KiB: refused while inflating, at 1032x.
    #[test]
    fn zstandard_expansion_is_bounded() {
        let mut packed = Vec::new();
        Codec::Zstandard
            .compress(&vec![0u8; 64 << 20], &mut packed)
            .unwrap();
        assert!(packed.len() < 64 << 10, "{}", packed.len());
        let mut out = Vec::new();
        let e = Codec::Zstandard.decompress(&packed, &mut out).unwrap_err();
        assert!(e.message.contains("inflates past 1032 times"), "{e}");
        assert!(out.len() <= packed.len() * MAX_EXPANSION + (1 << 16) + 1);
        // the thread's context, left mid-frame by the refusal, decodes the next block afresh
        let mut small = Vec::new();
        Codec::Zstandard.compress(b"one entry", &mut small).unwrap();
        Codec::Zstandard.decompress(&small, &mut out).unwrap();
        assert_eq!(out, b"one entry");
    }

    #[test]
    fn round_trips_every_codec() {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstandard] {
            let mut packed = Vec::new();
            codec.compress(&data, &mut packed).unwrap();
            let mut back = Vec::new();
            codec.decompress(&packed, &mut back).unwrap();
            assert_eq!(back, data, "{codec:?}");
        }
    }

    /// Small blocks as PyIceberg writes them (one record each): some open with a fixed-code
    /// deflate block, some with a dynamic one; each kind has its own decompressor per thread,
    /// and every block, in any order, inflates to what was compressed.
    #[test]
    fn small_fixed_and_dynamic_blocks_interleaved() {
        let mut blocks = Vec::new();
        let mut seed = 7u64;
        for i in 0..400usize {
            // xorshift bytes: a short record of text and binary, more repetitive every 3rd
            let n = 40 + (i * 37) % 400;
            let record: Vec<u8> = (0..n)
                .map(|k| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    if i % 3 == 0 {
                        b"file:///warehouse/data/"[k % 23]
                    } else {
                        (seed % 61) as u8 + b'A'
                    }
                })
                .collect();
            let mut packed = Vec::new();
            Codec::Deflate.compress(&record, &mut packed).unwrap();
            blocks.push((record, packed));
        }
        let fixed = blocks.iter().filter(|(_, p)| p[0] & 0b110 == 0b010).count();
        assert!(
            fixed > 0 && fixed < blocks.len(),
            "{fixed} of {}",
            blocks.len()
        );
        let mut out = Vec::new();
        for (record, packed) in blocks.iter().chain(blocks.iter().rev()) {
            Codec::Deflate.decompress(packed, &mut out).unwrap();
            assert_eq!(&out, record);
        }
    }

    #[test]
    fn truncated_and_bomb_deflate_blocks_are_errors() {
        let data = vec![7u8; 200_000];
        let mut packed = Vec::new();
        Codec::Deflate.compress(&data, &mut packed).unwrap();
        let mut out = Vec::new();
        for cut in [1, packed.len() / 2, packed.len() - 1] {
            assert!(
                Codec::Deflate.decompress(&packed[..cut], &mut out).is_err(),
                "{cut}"
            );
        }
        // the inflate state is reused: a good block after bad ones still decodes
        Codec::Deflate.decompress(&packed, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn corrupt_blocks_are_errors() {
        let mut out = Vec::new();
        for codec in [Codec::Deflate, Codec::Snappy, Codec::Zstandard] {
            assert!(codec.decompress(&[0xff, 0xff, 0xff], &mut out).is_err());
            assert!(codec.decompress(&[], &mut out).is_err() || out.is_empty());
        }
        let mut packed = Vec::new();
        Codec::Snappy.compress(b"hello hello", &mut packed).unwrap();
        let last = packed.len() - 1;
        packed[last] ^= 1;
        assert!(Codec::Snappy.decompress(&packed, &mut out).is_err());
        assert!(Codec::parse("bzip2").is_err());
    }
}
