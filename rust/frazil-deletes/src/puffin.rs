//! Puffin files (`puffin-spec.md`): `Magic Blob₁ … Blobₙ Footer`, the footer being
//! `Magic FooterPayload FooterPayloadSize Flags Magic` with a JSON payload describing the blobs.
//!
//! The reader validates everything it relies on before it trusts it (both magics, the footer
//! size against the file size, every blob's range against the blob area, the JSON's shape) and
//! names the file and the problem in its errors; it never allocates more than a bounded multiple
//! of its input.

use std::io::Read;

use frazil_values::{Error, Result};
use serde_json::{Map, Value};

pub const MAGIC: [u8; 4] = [0x50, 0x46, 0x41, 0x31];
/// `FooterPayloadSize Flags Magic`: the fixed tail of the footer.
const FOOTER_STRUCT_LEN: usize = 12;
/// Header magic, footer magic and the footer struct: the smallest possible file has no blobs
/// and an empty payload (which is not valid JSON, so it fails later with a clearer message).
const MIN_FILE_LEN: usize = 4 + 4 + FOOTER_STRUCT_LEN;
/// Footer flags, byte 0, bit 0.
const FLAG_FOOTER_COMPRESSED: u8 = 0x01;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionCodec {
    None,
    /// A single LZ4 frame with the content size present.
    Lz4,
    /// A single Zstandard frame with the content size present.
    Zstd,
}

impl CompressionCodec {
    /// The codec a blob's `compression-codec` names (absent: uncompressed).
    pub fn from_name(name: Option<&str>) -> Result<Self> {
        match name {
            None => Ok(CompressionCodec::None),
            Some("lz4") => Ok(CompressionCodec::Lz4),
            Some("zstd") => Ok(CompressionCodec::Zstd),
            Some(other) => Err(Error::unsupported(format!(
                "unsupported Puffin compression codec {other:?} (the spec allows lz4 and zstd)"
            ))),
        }
    }

    pub fn name(self) -> Option<&'static str> {
        match self {
            CompressionCodec::None => None,
            CompressionCodec::Lz4 => Some("lz4"),
            CompressionCodec::Zstd => Some("zstd"),
        }
    }
}

/// One entry of the footer's `blobs` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMetadata {
    pub blob_type: String,
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    pub offset: u64,
    pub length: u64,
    pub compression_codec: Option<String>,
    pub properties: Vec<(String, String)>,
}

impl BlobMetadata {
    /// A blob known only by where it lies, as a manifest locates it (no fields, ids or
    /// properties).
    pub fn located(
        blob_type: String,
        offset: u64,
        length: u64,
        compression_codec: Option<String>,
    ) -> BlobMetadata {
        BlobMetadata {
            blob_type,
            fields: Vec::new(),
            snapshot_id: -1,
            sequence_number: -1,
            offset,
            length,
            compression_codec,
            properties: Vec::new(),
        }
    }

    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The footer payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileMetadata {
    pub blobs: Vec<BlobMetadata>,
    pub properties: Vec<(String, String)>,
}

fn decode(location: &str, problem: impl std::fmt::Display) -> Error {
    Error::decode(format!("invalid Puffin file {location}: {problem}"))
}

fn read_i32_le(data: &[u8], at: usize) -> i32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&data[at..at + 4]);
    i32::from_le_bytes(b)
}

/// Reads and validates the footer of a whole Puffin file held in `data`.
pub fn read_file_metadata(data: &[u8], location: &str) -> Result<FileMetadata> {
    let len = data.len();
    if len < MIN_FILE_LEN {
        return Err(decode(
            location,
            format!("{len} bytes is shorter than the smallest Puffin file ({MIN_FILE_LEN} bytes)"),
        ));
    }
    if data[..4] != MAGIC {
        return Err(decode(
            location,
            format!(
                "expected magic {MAGIC:02X?} at offset 0, found {:02X?}",
                &data[..4]
            ),
        ));
    }
    if data[len - 4..] != MAGIC {
        return Err(decode(
            location,
            format!(
                "expected magic {MAGIC:02X?} at offset {} (end of footer), found {:02X?}",
                len - 4,
                &data[len - 4..]
            ),
        ));
    }
    let struct_start = len - FOOTER_STRUCT_LEN;
    let payload_size = read_i32_le(data, struct_start);
    let payload_size = usize::try_from(payload_size).map_err(|_| {
        decode(
            location,
            format!("negative footer payload size {payload_size}"),
        )
    })?;
    // The payload, the footer's own magic and the header magic must all fit before the struct.
    let footer_start = struct_start
        .checked_sub(payload_size)
        .and_then(|s| s.checked_sub(4))
        .filter(|&s| s >= 4)
        .ok_or_else(|| {
            decode(
                location,
                format!("footer payload size {payload_size} does not fit in a file of {len} bytes"),
            )
        })?;
    if data[footer_start..footer_start + 4] != MAGIC {
        return Err(decode(
            location,
            format!(
                "expected magic {MAGIC:02X?} at offset {footer_start} (start of footer), found {:02X?}",
                &data[footer_start..footer_start + 4]
            ),
        ));
    }
    let flags = &data[struct_start + 4..struct_start + 8];
    for (byte_number, &byte) in flags.iter().enumerate() {
        let known = if byte_number == 0 {
            FLAG_FOOTER_COMPRESSED
        } else {
            0
        };
        if byte & !known != 0 {
            let bit = (byte & !known).trailing_zeros();
            return Err(Error::unsupported(format!(
                "Puffin file {location}: unknown footer flag set (byte {byte_number}, bit {bit})"
            )));
        }
    }
    let payload = &data[footer_start + 4..struct_start];
    let json_bytes;
    let json: &[u8] = if flags[0] & FLAG_FOOTER_COMPRESSED != 0 {
        json_bytes = decompress(CompressionCodec::Lz4, payload)
            .map_err(|e| decode(location, format!("compressed footer payload: {e}")))?;
        &json_bytes
    } else {
        payload
    };
    let metadata = parse_file_metadata(json).map_err(|e| decode(location, e))?;
    for (i, blob) in metadata.blobs.iter().enumerate() {
        let end = blob.offset.checked_add(blob.length);
        if blob.offset < 4 || end.is_none_or(|end| end > footer_start as u64) {
            return Err(decode(
                location,
                format!(
                    "blob {i} ({}) at offset {} with length {} lies outside the blob area [4, {footer_start})",
                    blob.blob_type, blob.offset, blob.length
                ),
            ));
        }
    }
    Ok(metadata)
}

/// The bytes of a blob, decompressed. `data` is the whole file whose footer listed `blob`.
pub fn read_blob(data: &[u8], blob: &BlobMetadata, location: &str) -> Result<Vec<u8>> {
    let what = || {
        format!(
            "Puffin file {location}, blob {} at offset {} with length {}",
            blob.blob_type, blob.offset, blob.length
        )
    };
    let start = usize::try_from(blob.offset).ok();
    let end = start.and_then(|s| s.checked_add(usize::try_from(blob.length).ok()?));
    let raw = match (start, end) {
        (Some(s), Some(e)) if e <= data.len() => &data[s..e],
        _ => {
            return Err(Error::decode(format!(
                "{}: lies beyond the end of the file ({} bytes)",
                what(),
                data.len()
            )))
        }
    };
    let codec = CompressionCodec::from_name(blob.compression_codec.as_deref())
        .map_err(|e| Error::new(e.kind, format!("{}: {}", what(), e.message)))?;
    decompress(codec, raw).map_err(|e| Error::decode(format!("{}: {e}", what())))
}

/// The content size an LZ4 frame header declares, if present (LZ4 frame format, "FLG" bit 3).
fn lz4_content_size(data: &[u8]) -> Option<u64> {
    if data.len() < 14 || data[..4] != [0x04, 0x22, 0x4D, 0x18] || data[4] & 0x08 == 0 {
        return None;
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[6..14]);
    Some(u64::from_le_bytes(b))
}

/// The most a compressed frame may expand: a zstd frame of run-length blocks turns 4 bytes into
/// 128 KiB, so without a bound a small file could make the reader allocate gigabytes. Puffin's
/// blobs (sketches; deletion vectors are never compressed) come nowhere near it.
pub const MAX_EXPANSION: u64 = 1024;

/// Decompresses one frame. The declared content size is checked when present, and never
/// trusted for an allocation larger than a bounded multiple of the input; the output is refused
/// past [`MAX_EXPANSION`] times the input (plus 1 MiB).
pub fn decompress(codec: CompressionCodec, data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let declared = match codec {
        CompressionCodec::None => return Ok(data.to_vec()),
        CompressionCodec::Lz4 => lz4_content_size(data),
        CompressionCodec::Zstd => zstd::zstd_safe::get_frame_content_size(data).ok().flatten(),
    };
    let capacity = declared
        .unwrap_or(0)
        .min(16 * data.len() as u64 + 4096)
        .try_into()
        .unwrap_or(0);
    let mut out = Vec::with_capacity(capacity);
    let most = (data.len() as u64)
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(1 << 20);
    if declared.is_some_and(|d| d > most) {
        return Err(format!(
            "frame declares {} bytes of content, more than {MAX_EXPANSION} times its {} bytes",
            declared.unwrap_or_default(),
            data.len()
        ));
    }
    // Read one byte past the declared size (or the bound) so a lying header, or a frame
    // expanding past the bound, is caught without reading on.
    let limit = declared.unwrap_or(most).saturating_add(1);
    match codec {
        CompressionCodec::Lz4 => {
            lz4_flex::frame::FrameDecoder::new(data)
                .take(limit)
                .read_to_end(&mut out)
                .map_err(|e| format!("corrupt lz4 frame: {e}"))?;
        }
        CompressionCodec::Zstd => {
            let decoder = zstd::stream::read::Decoder::with_buffer(data)
                .map_err(|e| format!("corrupt zstd frame: {e}"))?;
            decoder
                .single_frame()
                .take(limit)
                .read_to_end(&mut out)
                .map_err(|e| format!("corrupt zstd frame: {e}"))?;
        }
        CompressionCodec::None => unreachable!("returned above"),
    }
    if declared.is_none() && out.len() as u64 > most {
        return Err(format!(
            "frame expands to more than {MAX_EXPANSION} times its {} bytes",
            data.len()
        ));
    }
    if let Some(d) = declared {
        if out.len() as u64 != d {
            return Err(format!(
                "frame declares {d} bytes of content but decompresses to {}{}",
                out.len(),
                if out.len() as u64 > d { " or more" } else { "" }
            ));
        }
    }
    Ok(out)
}

/// Compresses one frame with the content size present, as the spec requires.
pub fn compress(codec: CompressionCodec, data: &[u8]) -> Result<Vec<u8>> {
    match codec {
        CompressionCodec::None => Ok(data.to_vec()),
        CompressionCodec::Lz4 => {
            let info = lz4_flex::frame::FrameInfo::new().content_size(Some(data.len() as u64));
            let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            std::io::Write::write_all(&mut encoder, data)
                .map_err(|e| Error::invalid(format!("lz4 compression failed: {e}")))?;
            encoder
                .finish()
                .map_err(|e| Error::invalid(format!("lz4 compression failed: {e}")))
        }
        // The one-shot API writes the frame content size.
        CompressionCodec::Zstd => zstd::bulk::compress(data, 3)
            .map_err(|e| Error::invalid(format!("zstd compression failed: {e}"))),
    }
}

fn string_map(value: &Value, what: &str) -> std::result::Result<Vec<(String, String)>, String> {
    let obj = value
        .as_object()
        .ok_or_else(|| format!("{what} must be a JSON object, found {value}"))?;
    obj.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            other => Err(format!("{what}[{k:?}] must be a string, found {other}")),
        })
        .collect()
}

fn get_i64(obj: &Map<String, Value>, key: &str, blob: usize) -> std::result::Result<i64, String> {
    match obj.get(key) {
        Some(v) => v
            .as_i64()
            .ok_or_else(|| format!("blobs[{blob}].{key} must be a 64-bit integer, found {v}")),
        None => Err(format!("blobs[{blob}] lacks required field {key:?}")),
    }
}

fn parse_blob(i: usize, value: &Value) -> std::result::Result<BlobMetadata, String> {
    let obj = value
        .as_object()
        .ok_or_else(|| format!("blobs[{i}] must be a JSON object, found {value}"))?;
    let blob_type = match obj.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => return Err(format!("blobs[{i}].type must be a string, found {v}")),
        None => return Err(format!("blobs[{i}] lacks required field \"type\"")),
    };
    let fields = match obj.get("fields") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|f| {
                f.as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| format!("blobs[{i}].fields must hold ints, found {f}"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?,
        Some(v) => return Err(format!("blobs[{i}].fields must be a list, found {v}")),
        None => return Err(format!("blobs[{i}] lacks required field \"fields\"")),
    };
    let snapshot_id = get_i64(obj, "snapshot-id", i)?;
    let sequence_number = get_i64(obj, "sequence-number", i)?;
    let offset = get_i64(obj, "offset", i)?;
    let length = get_i64(obj, "length", i)?;
    let offset =
        u64::try_from(offset).map_err(|_| format!("blobs[{i}].offset is negative: {offset}"))?;
    let length =
        u64::try_from(length).map_err(|_| format!("blobs[{i}].length is negative: {length}"))?;
    let compression_codec = match obj.get("compression-codec") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => {
            return Err(format!(
                "blobs[{i}].compression-codec must be a string, found {v}"
            ))
        }
    };
    let properties = match obj.get("properties") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => string_map(v, &format!("blobs[{i}].properties"))?,
    };
    Ok(BlobMetadata {
        blob_type,
        fields,
        snapshot_id,
        sequence_number,
        offset,
        length,
        compression_codec,
        properties,
    })
}

/// Parses a footer payload (`FileMetadata` JSON), streamed: each blob's JSON object becomes a
/// `Value` and then a [`BlobMetadata`] before the next is read, so memory stays a small
/// multiple of the payload. (A `Value` tree of the whole footer took about 40 bytes per
/// payload byte: a footer listing 1M blobs took 3.1 GB.)
pub fn parse_file_metadata(json: &[u8]) -> std::result::Result<FileMetadata, String> {
    use serde::Deserializer as _;
    let shape = std::cell::RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(json);
    let parsed = de
        .deserialize_any(FooterVisitor { shape: &shape })
        .and_then(|m| de.end().map(|()| m));
    match (parsed, shape.into_inner()) {
        (_, Some(problem)) => Err(problem),
        (Ok(m), None) => m,
        (Err(e), None) => Err(format!("footer payload is not valid UTF-8 JSON: {e}")),
    }
}

/// The shape problem found, kept beside serde's error so it is reported as written.
type Shape<'a> = &'a std::cell::RefCell<Option<String>>;

fn shape_error<E: serde::de::Error>(shape: Shape<'_>, problem: String) -> E {
    *shape.borrow_mut() = Some(problem);
    E::custom("footer shape")
}

struct FooterVisitor<'a> {
    shape: Shape<'a>,
}

impl<'de> serde::de::Visitor<'de> for FooterVisitor<'_> {
    type Value = std::result::Result<FileMetadata, String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut blobs = None;
        let mut properties = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "blobs" => blobs = Some(map.next_value_seed(BlobsSeed { shape: self.shape })?),
                "properties" => {
                    properties = match map.next_value::<Value>()? {
                        Value::Null => Vec::new(),
                        v => {
                            string_map(&v, "properties").map_err(|p| shape_error(self.shape, p))?
                        }
                    }
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(match blobs {
            Some(blobs) => Ok(FileMetadata { blobs, properties }),
            None => Err("footer payload lacks required field \"blobs\"".to_string()),
        })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        _: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        Err(shape_error(
            self.shape,
            "footer payload must be a JSON object".into(),
        ))
    }
}

/// The `blobs` list, one element at a time.
struct BlobsSeed<'a> {
    shape: Shape<'a>,
}

impl<'de> serde::de::DeserializeSeed<'de> for BlobsSeed<'_> {
    type Value = Vec<BlobMetadata>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for BlobsSeed<'_> {
    type Value = Vec<BlobMetadata>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of blobs")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut blobs = Vec::new();
        while let Some(value) = seq.next_element::<Value>()? {
            let blob = parse_blob(blobs.len(), &value).map_err(|p| shape_error(self.shape, p))?;
            blobs.push(blob);
        }
        Ok(blobs)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        _: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        Err(shape_error(
            self.shape,
            "footer field \"blobs\" must be a list, found an object".into(),
        ))
    }
}

fn string_map_json(properties: &[(String, String)]) -> Value {
    Value::Object(
        properties
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// The footer payload JSON, fields in the spec's order; empty properties and an absent codec
/// are omitted, as the Java reference writes them.
pub fn file_metadata_json(metadata: &FileMetadata) -> String {
    let blobs: Vec<Value> = metadata
        .blobs
        .iter()
        .map(|b| {
            let mut o = Map::new();
            o.insert("type".into(), Value::String(b.blob_type.clone()));
            o.insert("fields".into(), Value::from(b.fields.clone()));
            o.insert("snapshot-id".into(), Value::from(b.snapshot_id));
            o.insert("sequence-number".into(), Value::from(b.sequence_number));
            o.insert("offset".into(), Value::from(b.offset));
            o.insert("length".into(), Value::from(b.length));
            if let Some(codec) = &b.compression_codec {
                o.insert("compression-codec".into(), Value::String(codec.clone()));
            }
            if !b.properties.is_empty() {
                o.insert("properties".into(), string_map_json(&b.properties));
            }
            Value::Object(o)
        })
        .collect();
    let mut o = Map::new();
    o.insert("blobs".into(), Value::Array(blobs));
    if !metadata.properties.is_empty() {
        o.insert("properties".into(), string_map_json(&metadata.properties));
    }
    Value::Object(o).to_string()
}

/// A blob to write: its bytes are compressed with `codec` on the way out.
#[derive(Debug, Clone)]
pub struct BlobInput<'a> {
    pub blob_type: String,
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    pub data: &'a [u8],
    pub codec: CompressionCodec,
    pub properties: Vec<(String, String)>,
}

/// Writes a whole Puffin file; returns its bytes and the footer it wrote (with each blob's
/// offset and length, which a DV's `content_offset`/`content_size_in_bytes` repeat).
pub fn write_puffin(
    blobs: &[BlobInput<'_>],
    properties: &[(String, String)],
    compress_footer: bool,
) -> Result<(Vec<u8>, FileMetadata)> {
    let mut out = Vec::with_capacity(4 + blobs.iter().map(|b| b.data.len()).sum::<usize>() + 256);
    out.extend_from_slice(&MAGIC);
    let mut metadata = FileMetadata {
        blobs: Vec::with_capacity(blobs.len()),
        properties: properties.to_vec(),
    };
    for blob in blobs {
        let offset = out.len() as u64;
        match blob.codec {
            CompressionCodec::None => out.extend_from_slice(blob.data),
            codec => out.extend_from_slice(&compress(codec, blob.data)?),
        }
        metadata.blobs.push(BlobMetadata {
            blob_type: blob.blob_type.clone(),
            fields: blob.fields.clone(),
            snapshot_id: blob.snapshot_id,
            sequence_number: blob.sequence_number,
            offset,
            length: out.len() as u64 - offset,
            compression_codec: blob.codec.name().map(str::to_string),
            properties: blob.properties.clone(),
        });
    }
    let json = file_metadata_json(&metadata);
    let payload = if compress_footer {
        compress(CompressionCodec::Lz4, json.as_bytes())?
    } else {
        json.into_bytes()
    };
    let payload_size = i32::try_from(payload.len()).map_err(|_| {
        Error::invalid(format!(
            "Puffin footer payload of {} bytes exceeds the 2 GiB a footer can hold",
            payload.len()
        ))
    })?;
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&payload);
    out.extend_from_slice(&payload_size.to_le_bytes());
    out.extend_from_slice(&[
        if compress_footer {
            FLAG_FOOTER_COMPRESSED
        } else {
            0
        },
        0,
        0,
        0,
    ]);
    out.extend_from_slice(&MAGIC);
    Ok((out, metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(data: &[u8], codec: CompressionCodec) -> BlobInput<'_> {
        BlobInput {
            blob_type: "some-blob".into(),
            fields: vec![1, 2],
            snapshot_id: 7,
            sequence_number: 3,
            data,
            codec,
            properties: vec![("k".into(), "v".into())],
        }
    }

    #[test]
    fn empty_file_round_trips() -> Result<()> {
        let (bytes, _) = write_puffin(&[], &[], false)?;
        // Magic, footer magic, "{"blobs":[]}", size, flags, magic.
        assert_eq!(&bytes[..4], &MAGIC);
        assert_eq!(bytes.len(), 4 + 4 + 12 + 12);
        let read = read_file_metadata(&bytes, "mem")?;
        assert!(read.blobs.is_empty());
        Ok(())
    }

    #[test]
    fn blobs_round_trip_with_every_codec() -> Result<()> {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        for footer in [false, true] {
            let inputs = [
                blob(&data, CompressionCodec::None),
                blob(&data, CompressionCodec::Lz4),
                blob(&data, CompressionCodec::Zstd),
                blob(b"", CompressionCodec::Zstd),
            ];
            let props = vec![("created-by".to_string(), "frazil test".to_string())];
            let (bytes, written) = write_puffin(&inputs, &props, footer)?;
            let read = read_file_metadata(&bytes, "mem")?;
            assert_eq!(read, written);
            assert_eq!(read.properties, props);
            assert_eq!(read_blob(&bytes, &read.blobs[0], "mem")?, data);
            assert_eq!(read_blob(&bytes, &read.blobs[1], "mem")?, data);
            assert_eq!(read_blob(&bytes, &read.blobs[2], "mem")?, data);
            assert_eq!(read_blob(&bytes, &read.blobs[3], "mem")?, b"");
            assert!(read.blobs[1].length < data.len() as u64);
            assert_eq!(read.blobs[1].compression_codec.as_deref(), Some("lz4"));
        }
        Ok(())
    }

    #[test]
    fn bad_magic_and_sizes_are_named() -> Result<()> {
        let (bytes, _) = write_puffin(&[blob(b"abc", CompressionCodec::None)], &[], false)?;
        let mut b = bytes.clone();
        b[0] = b'X';
        let e = read_file_metadata(&b, "f.puffin").unwrap_err();
        assert!(e.message.contains("f.puffin") && e.message.contains("offset 0"));
        let mut b = bytes.clone();
        let n = b.len();
        b[n - 12..n - 8].copy_from_slice(&1_000_000i32.to_le_bytes());
        let e = read_file_metadata(&b, "f.puffin").unwrap_err();
        assert!(e.message.contains("does not fit"), "{}", e.message);
        let mut b = bytes.clone();
        b[n - 8] = 0x02;
        let e = read_file_metadata(&b, "f.puffin").unwrap_err();
        assert_eq!(e.kind, frazil_values::ErrorKind::Unsupported);
        let e = read_file_metadata(&bytes[..10], "f.puffin").unwrap_err();
        assert!(e.message.contains("shorter"));
        Ok(())
    }

    #[test]
    fn json_shape_is_checked() {
        for (json, needle) in [
            (r#"[]"#, "JSON object"),
            (r#"{}"#, "blobs"),
            (r#"{"blobs": {}}"#, "list"),
            (r#"{"blobs": [{"type": 1}]}"#, "type"),
            (
                r#"{"blobs": [{"type": "t", "fields": [], "snapshot-id": -1, "sequence-number": -1, "offset": 4}]}"#,
                "length",
            ),
            (
                r#"{"blobs": [{"type": "t", "fields": ["a"], "snapshot-id": -1, "sequence-number": -1, "offset": 4, "length": 0}]}"#,
                "fields",
            ),
            (r#"{"blobs": [], "properties": {"a": 1}}"#, "properties"),
        ] {
            let e = parse_file_metadata(json.as_bytes()).unwrap_err();
            assert!(e.contains(needle), "{json}: {e}");
        }
    }

    /// A footer listing 200,000 blobs (a 1M-blob footer took 3.1 GB as a JSON value tree):
    /// parsed within a small multiple of the payload's own size.
    #[test]
    fn footer_memory_is_bounded_by_its_length() {
        let blob = r#"{"type":"t","fields":[1],"snapshot-id":1,"sequence-number":1,"offset":4,"length":0}"#;
        let json = format!("{{\"blobs\":[{}]}}", vec![blob; 200_000].join(","));
        let (parsed, peak) =
            crate::alloc_budget::peak_during(|| parse_file_metadata(json.as_bytes()));
        assert_eq!(parsed.map(|m| m.blobs.len()), Ok(200_000));
        assert!(
            peak < 3 * json.len(),
            "peak {peak} bytes for a {}-byte footer",
            json.len()
        );
    }

    #[test]
    fn blob_ranges_are_checked() -> Result<()> {
        let meta = FileMetadata {
            blobs: vec![BlobMetadata {
                blob_type: "t".into(),
                fields: vec![],
                snapshot_id: -1,
                sequence_number: -1,
                offset: 4,
                length: 100,
                compression_codec: None,
                properties: vec![],
            }],
            properties: vec![],
        };
        let json = file_metadata_json(&meta);
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(json.as_bytes());
        b.extend_from_slice(&(json.len() as i32).to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&MAGIC);
        let e = read_file_metadata(&b, "f").unwrap_err();
        assert!(e.message.contains("outside the blob area"), "{}", e.message);
        Ok(())
    }

    /// A zstd bomb: 64 MiB of zeros fit in a few kilobytes of run-length blocks. Refused
    /// whether the frame declares its size or not, before or while decompressing.
    #[test]
    fn expansion_is_bounded() -> Result<()> {
        let zeros = vec![0u8; 64 << 20];
        let declared = compress(CompressionCodec::Zstd, &zeros)?;
        assert!(declared.len() < 64 << 10, "{}", declared.len());
        let e = decompress(CompressionCodec::Zstd, &declared).unwrap_err();
        assert!(e.contains("more than 1024 times"), "{e}");
        let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 3)
            .map_err(|e| Error::invalid(e.to_string()))?;
        std::io::Write::write_all(&mut encoder, &zeros)
            .map_err(|e| Error::invalid(e.to_string()))?;
        let undeclared = encoder
            .finish()
            .map_err(|e| Error::invalid(e.to_string()))?;
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&undeclared)
                .ok()
                .flatten(),
            None
        );
        let e = decompress(CompressionCodec::Zstd, &undeclared).unwrap_err();
        assert!(e.contains("expands to more than 1024 times"), "{e}");
        // a frame within the bound still decompresses
        let small = compress(CompressionCodec::Zstd, &zeros[..1 << 20])?;
        assert_eq!(
            decompress(CompressionCodec::Zstd, &small).map(|v| v.len()),
            Ok(1 << 20)
        );
        Ok(())
    }

    #[test]
    fn lying_content_size_is_caught() -> Result<()> {
        for codec in [CompressionCodec::Lz4, CompressionCodec::Zstd] {
            let good = compress(codec, b"hello hello hello")?;
            assert_eq!(
                decompress(codec, &good).as_deref(),
                Ok(&b"hello hello hello"[..])
            );
            // Byte 6 is in the LZ4 content size (guarded by the header checksum) and byte 5 is
            // zstd's one-byte frame content size for a single-segment frame.
            let mut bad = good.clone();
            bad[if codec == CompressionCodec::Lz4 { 6 } else { 5 }] = 3;
            assert!(decompress(codec, &bad).is_err());
            assert!(decompress(codec, &good[..good.len() / 2]).is_err());
        }
        Ok(())
    }
}
