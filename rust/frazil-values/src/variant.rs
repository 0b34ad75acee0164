//! The `variant` binary encoding (spec "Semi-structured Types"; Parquet's VariantEncoding, v1):
//! a value's `metadata` (the dictionary of object keys) and `value` bytes, made from JSON text
//! and turned back into JSON text.
//!
//! JSON to variant: null, booleans, integers as the narrowest int8..int64 (larger ones as a
//! decimal16 of scale 0), other numbers as double, strings (short strings under 64 bytes),
//! arrays and objects (keys sorted, dictionary sorted and unique).
//! Variant to JSON: types JSON lacks are written as JSON strings: date `YYYY-MM-DD`,
//! timestamps and times ISO-8601 (`+00:00` when UTC-adjusted), uuid in its hyphenated form,
//! binary in base64, non-finite floats `"NaN"`, `"Infinity"`, `"-Infinity"`; decimals are
//! exact JSON numbers.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::temporal::{format_date, format_time_of_day, format_timestamp};

// Nesting deeper than this is refused both ways (a crafted value must not overflow the stack).
const MAX_DEPTH: usize = 128;

fn bad(message: impl Into<String>) -> Error {
    Error::decode(format!("invalid variant: {}", message.into()))
}

// ---------------------------------------------------------------------------------------------
// Encoding

fn width(max: usize) -> usize {
    match max {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

fn put(out: &mut Vec<u8>, v: usize, width: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes()[..width]);
}

/// `(metadata, value)` of one JSON text.
pub fn from_json(text: &str) -> Result<(Vec<u8>, Vec<u8>)> {
    let json: Value =
        serde_json::from_str(text).map_err(|e| Error::parse(format!("not valid JSON: {e}")))?;
    from_json_value(&json)
}

/// `(metadata, value)` of a parsed JSON value.
pub fn from_json_value(json: &Value) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut keys: Vec<&str> = Vec::new();
    collect_keys(json, &mut keys, 0)?;
    keys.sort_unstable();
    keys.dedup();
    let mut value = Vec::new();
    encode(json, &keys, &mut value)?;
    Ok((metadata(&keys), value))
}

fn collect_keys<'a>(v: &'a Value, keys: &mut Vec<&'a str>, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::invalid("JSON nesting is too deep for a variant"));
    }
    match v {
        Value::Array(items) => items
            .iter()
            .try_for_each(|i| collect_keys(i, keys, depth + 1)),
        Value::Object(map) => map.iter().try_for_each(|(k, i)| {
            keys.push(k);
            collect_keys(i, keys, depth + 1)
        }),
        _ => Ok(()),
    }
}

fn metadata(keys: &[&str]) -> Vec<u8> {
    let total: usize = keys.iter().map(|k| k.len()).sum();
    let w = width(total.max(keys.len()));
    // version 1, sorted_strings, offset_size_minus_one
    let mut out = vec![1 | (1 << 4) | (((w - 1) as u8) << 6)];
    put(&mut out, keys.len(), w);
    let mut offset = 0;
    put(&mut out, 0, w);
    for k in keys {
        offset += k.len();
        put(&mut out, offset, w);
    }
    for k in keys {
        out.extend_from_slice(k.as_bytes());
    }
    out
}

fn primitive(out: &mut Vec<u8>, type_id: u8) {
    out.push(type_id << 2);
}

fn encode(v: &Value, keys: &[&str], out: &mut Vec<u8>) -> Result<()> {
    match v {
        Value::Null => primitive(out, 0),
        Value::Bool(true) => primitive(out, 1),
        Value::Bool(false) => primitive(out, 2),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                if let Ok(i) = i8::try_from(i) {
                    primitive(out, 3);
                    out.extend_from_slice(&i.to_le_bytes());
                } else if let Ok(i) = i16::try_from(i) {
                    primitive(out, 4);
                    out.extend_from_slice(&i.to_le_bytes());
                } else if let Ok(i) = i32::try_from(i) {
                    primitive(out, 5);
                    out.extend_from_slice(&i.to_le_bytes());
                } else {
                    primitive(out, 6);
                    out.extend_from_slice(&i.to_le_bytes());
                }
            } else if let Some(u) = n.as_u64() {
                primitive(out, 10); // decimal16, scale 0: exact beyond i64
                out.push(0);
                out.extend_from_slice(&(u as i128).to_le_bytes());
            } else {
                primitive(out, 7);
                out.extend_from_slice(&n.as_f64().unwrap_or(f64::NAN).to_le_bytes());
            }
        }
        Value::String(s) => {
            if s.len() < 64 {
                out.push(((s.len() as u8) << 2) | 1);
            } else {
                primitive(out, 16);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            }
            out.extend_from_slice(s.as_bytes());
        }
        Value::Array(items) => {
            let mut body = Vec::new();
            let mut offsets = Vec::with_capacity(items.len() + 1);
            for item in items {
                offsets.push(body.len());
                encode(item, keys, &mut body)?;
            }
            offsets.push(body.len());
            let large = items.len() > 255;
            let w = width(body.len());
            out.push((((large as u8) << 2 | (w - 1) as u8) << 2) | 3);
            put(out, items.len(), if large { 4 } else { 1 });
            for o in offsets {
                put(out, o, w);
            }
            out.extend_from_slice(&body);
        }
        Value::Object(map) => {
            let mut fields: Vec<(&str, &Value)> =
                map.iter().map(|(k, v)| (k.as_str(), v)).collect();
            fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut body = Vec::new();
            let mut ids = Vec::with_capacity(fields.len());
            let mut offsets = Vec::with_capacity(fields.len() + 1);
            for (k, item) in &fields {
                ids.push(
                    keys.binary_search(k)
                        .map_err(|_| Error::invalid("key not in dictionary"))?,
                );
                offsets.push(body.len());
                encode(item, keys, &mut body)?;
            }
            offsets.push(body.len());
            let large = fields.len() > 255;
            let id_w = width(keys.len().saturating_sub(1));
            let w = width(body.len());
            let header = ((large as u8) << 4) | (((id_w - 1) as u8) << 2) | (w - 1) as u8;
            out.push((header << 2) | 2);
            put(out, fields.len(), if large { 4 } else { 1 });
            for id in ids {
                put(out, id, id_w);
            }
            for o in offsets {
                put(out, o, w);
            }
            out.extend_from_slice(&body);
        }
    }
    Ok(())
}

/// A typed value (e.g. a shredded `typed_value`) as variant value bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Primitive<'a> {
    Bool(bool),
    Int(i64),
    Float(f32),
    Double(f64),
    /// Unscaled value and scale.
    Decimal(i128, u8),
    Date(i32),
    /// Ticks since the epoch, nanoseconds (else micros), UTC-adjusted.
    Timestamp(i64, bool, bool),
    TimeMicros(i64),
    String(&'a str),
    Binary(&'a [u8]),
    Uuid(u128),
}

/// The value bytes of one primitive (integers in their narrowest width).
pub fn encode_primitive(p: Primitive<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    match p {
        Primitive::Bool(b) => primitive(&mut out, if b { 1 } else { 2 }),
        Primitive::Int(i) => {
            let _ = encode(&Value::from(i), &[], &mut out);
        }
        Primitive::Float(f) => {
            primitive(&mut out, 14);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Primitive::Double(f) => {
            primitive(&mut out, 7);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Primitive::Decimal(unscaled, scale) => {
            if let Ok(v) = i32::try_from(unscaled) {
                primitive(&mut out, 8);
                out.push(scale);
                out.extend_from_slice(&v.to_le_bytes());
            } else if let Ok(v) = i64::try_from(unscaled) {
                primitive(&mut out, 9);
                out.push(scale);
                out.extend_from_slice(&v.to_le_bytes());
            } else {
                primitive(&mut out, 10);
                out.push(scale);
                out.extend_from_slice(&unscaled.to_le_bytes());
            }
        }
        Primitive::Date(d) => {
            primitive(&mut out, 11);
            out.extend_from_slice(&d.to_le_bytes());
        }
        Primitive::Timestamp(t, nanos, utc) => {
            let id = match (nanos, utc) {
                (false, true) => 12,
                (false, false) => 13,
                (true, true) => 18,
                (true, false) => 19,
            };
            primitive(&mut out, id);
            out.extend_from_slice(&t.to_le_bytes());
        }
        Primitive::TimeMicros(t) => {
            primitive(&mut out, 17);
            out.extend_from_slice(&t.to_le_bytes());
        }
        Primitive::String(s) => {
            let _ = encode(&Value::from(s), &[], &mut out);
        }
        Primitive::Binary(b) => {
            primitive(&mut out, 15);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        Primitive::Uuid(u) => {
            primitive(&mut out, 20);
            out.extend_from_slice(&u.to_be_bytes());
        }
    }
    out
}

/// The value bytes of an array of encoded values.
pub fn encode_array(items: &[Vec<u8>]) -> Vec<u8> {
    let body: usize = items.iter().map(Vec::len).sum();
    let large = items.len() > 255;
    let w = width(body);
    let mut out = vec![((((large as u8) << 2) | (w - 1) as u8) << 2) | 3];
    put(&mut out, items.len(), if large { 4 } else { 1 });
    let mut offset = 0;
    put(&mut out, 0, w);
    for item in items {
        offset += item.len();
        put(&mut out, offset, w);
    }
    for item in items {
        out.extend_from_slice(item);
    }
    out
}

/// The value bytes of an object of `(key, dictionary id, encoded value)` fields; the keys must
/// be unique (fields are ordered by key, as the encoding requires).
pub fn encode_object(fields: &mut [(&str, usize, Vec<u8>)]) -> Vec<u8> {
    fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let body: usize = fields.iter().map(|f| f.2.len()).sum();
    let large = fields.len() > 255;
    let id_w = width(fields.iter().map(|f| f.1).max().unwrap_or(0));
    let w = width(body);
    let header = ((large as u8) << 4) | (((id_w - 1) as u8) << 2) | (w - 1) as u8;
    let mut out = vec![(header << 2) | 2];
    put(&mut out, fields.len(), if large { 4 } else { 1 });
    for f in fields.iter() {
        put(&mut out, f.1, id_w);
    }
    let mut offset = 0;
    put(&mut out, 0, w);
    for f in fields.iter() {
        offset += f.2.len();
        put(&mut out, offset, w);
    }
    for f in fields.iter() {
        out.extend_from_slice(&f.2);
    }
    out
}

/// Where the parts of an encoded object or array start (the spec's object and array layouts):
/// `n` elements, field ids (objects only) at `ids_at`, `n + 1` offsets at `offsets_at`, the
/// elements' bytes from `body_at`.
struct Container {
    n: usize,
    id_w: usize,
    off_w: usize,
    ids_at: usize,
    offsets_at: usize,
    body_at: usize,
}

impl Container {
    /// The layout of the object (`object`) or array at the start of `v`, whose header (the
    /// first byte shifted right by 2) is `header`.
    fn of(v: &[u8], header: u8, object: bool) -> Result<Container> {
        let (large, id_w) = if object {
            (header >> 4 & 1 == 1, (header >> 2 & 3) as usize + 1)
        } else {
            (header >> 2 & 1 == 1, 0)
        };
        let off_w = (header & 3) as usize + 1;
        let count_w = if large { 4 } else { 1 };
        let n = uint(v, 1, count_w)?;
        let ids_at = 1 + count_w;
        let offsets_at = ids_at + n * id_w;
        Ok(Container {
            n,
            id_w,
            off_w,
            ids_at,
            offsets_at,
            body_at: offsets_at + (n + 1) * off_w,
        })
    }

    /// The offset (relative to `body_at`) of element `i`; `i == n` gives the end.
    fn offset(&self, v: &[u8], i: usize) -> Result<usize> {
        uint(v, self.offsets_at + i * self.off_w, self.off_w)
    }

    fn field_id(&self, v: &[u8], i: usize) -> Result<usize> {
        uint(v, self.ids_at + i * self.id_w, self.id_w)
    }
}

/// The fields of an encoded object as `(dictionary id, value bytes)`.
pub fn object_fields(v: &[u8]) -> Result<Vec<(usize, &[u8])>> {
    let head = *v.first().ok_or_else(|| bad("empty value"))?;
    if head & 3 != 2 {
        return Err(bad("a partially shredded object's value is not an object"));
    }
    let c = Container::of(v, head >> 2, true)?;
    if c.body_at > v.len() {
        return Err(bad("element count exceeds the value's length"));
    }
    (0..c.n)
        .map(|i| {
            let id = c.field_id(v, i)?;
            let start = c.body_at + c.offset(v, i)?;
            let item = v
                .get(start..)
                .ok_or_else(|| bad("field offset out of range"))?;
            Ok((id, &item[..size_of(item)?]))
        })
        .collect()
}

/// The length in bytes of the encoded value at the start of `v`.
pub fn size_of(v: &[u8]) -> Result<usize> {
    let head = *v.first().ok_or_else(|| bad("empty value"))?;
    let header = head >> 2;
    let len = match head & 3 {
        0 => match header {
            0..=2 => 1,
            3 => 2,
            4 => 3,
            5 | 11 | 14 => 5,
            6 | 7 | 12 | 13 | 17 | 18 | 19 => 9,
            8 => 6,
            9 => 10,
            10 => 18,
            15 | 16 => 5 + u32::from_le_bytes(fixed(v, 1)?) as usize,
            20 => 17,
            other => {
                return Err(Error::unsupported(format!(
                    "variant primitive type {other}"
                )))
            }
        },
        1 => 1 + header as usize,
        basic => {
            let c = Container::of(v, header, basic == 2)?;
            c.body_at + c.offset(v, c.n)?
        }
    };
    if len > v.len() {
        return Err(bad("value ends early"));
    }
    Ok(len)
}

/// The dictionary id of `key` in a variant's metadata.
pub fn key_id(metadata: &[u8], key: &str) -> Result<usize> {
    dictionary(metadata)?
        .iter()
        .position(|k| *k == key)
        .ok_or_else(|| {
            bad(format!(
                "shredded field {key:?} is not in the metadata dictionary"
            ))
        })
}

// ---------------------------------------------------------------------------------------------
// Decoding

fn uint(data: &[u8], at: usize, w: usize) -> Result<usize> {
    let b = data
        .get(at..at + w)
        .ok_or_else(|| bad(format!("ends early at byte {at}")))?;
    let mut v = [0u8; 4];
    v[..w].copy_from_slice(b);
    Ok(u32::from_le_bytes(v) as usize)
}

fn fixed<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N]> {
    data.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| bad(format!("ends early at byte {at}")))
}

/// The keys of a variant's metadata dictionary.
pub fn dictionary(metadata: &[u8]) -> Result<Vec<&str>> {
    let header = *metadata.first().ok_or_else(|| bad("empty metadata"))?;
    if header & 0x0F != 1 {
        return Err(Error::unsupported(format!(
            "variant metadata version {} (only version 1 is supported)",
            header & 0x0F
        )));
    }
    let w = ((header >> 6) & 3) as usize + 1;
    let n = uint(metadata, 1, w)?;
    let offsets_at = 1 + w;
    let bytes_at = offsets_at + (n + 1) * w;
    if bytes_at > metadata.len() {
        return Err(bad("metadata dictionary is longer than its bytes"));
    }
    let mut keys = Vec::with_capacity(n);
    for i in 0..n {
        let (s, e) = (
            uint(metadata, offsets_at + i * w, w)?,
            uint(metadata, offsets_at + (i + 1) * w, w)?,
        );
        let key = metadata
            .get(bytes_at + s..bytes_at + e)
            .filter(|_| s <= e)
            .ok_or_else(|| bad(format!("dictionary string {i} is out of range")))?;
        keys.push(std::str::from_utf8(key).map_err(|_| bad("dictionary string is not UTF-8"))?);
    }
    Ok(keys)
}

/// The JSON text of a variant (see the module docs for types JSON lacks).
pub fn to_json(metadata: &[u8], value: &[u8]) -> Result<String> {
    let keys = dictionary(metadata)?;
    let mut out = String::new();
    write_json(value, &keys, &mut out, 0)?;
    Ok(out)
}

fn quoted(out: &mut String, s: &str) {
    out.push_str(&Value::String(s.to_owned()).to_string());
}

fn float(out: &mut String, f: f64) {
    if f.is_finite() {
        out.push_str(&Value::from(f).to_string());
    } else if f.is_nan() {
        out.push_str("\"NaN\"");
    } else if f > 0.0 {
        out.push_str("\"Infinity\"");
    } else {
        out.push_str("\"-Infinity\"");
    }
}

fn decimal(out: &mut String, unscaled: i128, scale: u8) {
    let digits = unscaled.unsigned_abs().to_string();
    if unscaled < 0 {
        out.push('-');
    }
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(&digits);
    } else if digits.len() > scale {
        let (i, f) = digits.split_at(digits.len() - scale);
        out.push_str(i);
        out.push('.');
        out.push_str(f);
    } else {
        out.push_str("0.");
        out.push_str(&"0".repeat(scale - digits.len()));
        out.push_str(&digits);
    }
}

fn base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| bad("string is not UTF-8"))
}

/// Writes the value at the start of `v` and returns its length in bytes.
fn write_json(v: &[u8], keys: &[&str], out: &mut String, depth: usize) -> Result<usize> {
    if depth > MAX_DEPTH {
        return Err(bad("nesting is too deep"));
    }
    let head = *v.first().ok_or_else(|| bad("empty value"))?;
    let header = head >> 2;
    match head & 3 {
        0 => primitive_json(v, header, out),
        1 => {
            let n = header as usize;
            let s = v
                .get(1..1 + n)
                .ok_or_else(|| bad("short string ends early"))?;
            quoted(out, utf8(s)?);
            Ok(1 + n)
        }
        basic => {
            let object = basic == 2;
            let c = Container::of(v, header, object)?;
            if c.body_at > v.len() {
                return Err(bad("element count exceeds the value's length"));
            }
            out.push(if object { '{' } else { '[' });
            let mut end = 0;
            for i in 0..c.n {
                if i > 0 {
                    out.push(',');
                }
                if object {
                    let id = c.field_id(v, i)?;
                    let key = keys
                        .get(id)
                        .ok_or_else(|| bad(format!("field id {id} is not in the dictionary")))?;
                    quoted(out, key);
                    out.push(':');
                }
                let start = c.body_at + c.offset(v, i)?;
                let item = v
                    .get(start..)
                    .ok_or_else(|| bad("field offset out of range"))?;
                let len = write_json(item, keys, out, depth + 1)?;
                end = end.max(start + len);
            }
            out.push(if object { '}' } else { ']' });
            let last = c.body_at + c.offset(v, c.n)?;
            Ok(last.max(end))
        }
    }
}

fn primitive_json(v: &[u8], type_id: u8, out: &mut String) -> Result<usize> {
    let len = match type_id {
        0 => {
            out.push_str("null");
            1
        }
        1 => {
            out.push_str("true");
            1
        }
        2 => {
            out.push_str("false");
            1
        }
        3 => {
            out.push_str(&(fixed::<1>(v, 1)?[0] as i8).to_string());
            2
        }
        4 => {
            out.push_str(&i16::from_le_bytes(fixed(v, 1)?).to_string());
            3
        }
        5 => {
            out.push_str(&i32::from_le_bytes(fixed(v, 1)?).to_string());
            5
        }
        6 => {
            out.push_str(&i64::from_le_bytes(fixed(v, 1)?).to_string());
            9
        }
        7 => {
            float(out, f64::from_le_bytes(fixed(v, 1)?));
            9
        }
        8 => {
            decimal(
                out,
                i32::from_le_bytes(fixed(v, 2)?) as i128,
                fixed::<1>(v, 1)?[0],
            );
            6
        }
        9 => {
            decimal(
                out,
                i64::from_le_bytes(fixed(v, 2)?) as i128,
                fixed::<1>(v, 1)?[0],
            );
            10
        }
        10 => {
            decimal(out, i128::from_le_bytes(fixed(v, 2)?), fixed::<1>(v, 1)?[0]);
            18
        }
        11 => {
            quoted(out, &format_date(i32::from_le_bytes(fixed(v, 1)?) as i64));
            5
        }
        12 | 13 | 18 | 19 => {
            let ticks = i64::from_le_bytes(fixed(v, 1)?);
            let nanos = type_id >= 18;
            quoted(out, &format_timestamp(ticks, nanos, type_id % 2 == 0));
            9
        }
        14 => {
            float(out, f32::from_le_bytes(fixed(v, 1)?) as f64);
            5
        }
        15 | 16 => {
            let n = u32::from_le_bytes(fixed(v, 1)?) as usize;
            let b = v
                .get(5..5 + n)
                .ok_or_else(|| bad("binary or string ends early"))?;
            if type_id == 15 {
                quoted(out, &base64(b));
            } else {
                quoted(out, utf8(b)?);
            }
            5 + n
        }
        17 => {
            let micros = i64::from_le_bytes(fixed(v, 1)?);
            quoted(out, &format_time_of_day(micros, 1_000_000, 6));
            9
        }
        20 => {
            let u = u128::from_be_bytes(fixed(v, 1)?);
            let h = format!("{u:032x}");
            quoted(
                out,
                &format!(
                    "{}-{}-{}-{}-{}",
                    &h[..8],
                    &h[8..12],
                    &h[12..16],
                    &h[16..20],
                    &h[20..]
                ),
            );
            17
        }
        other => {
            return Err(Error::unsupported(format!(
                "variant primitive type {other}"
            )))
        }
    };
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        let (m, v) = from_json(text).unwrap();
        to_json(&m, &v).unwrap()
    }

    #[test]
    fn json_round_trips() {
        for t in [
            "null",
            "true",
            "[1,-200,70000,5000000000,2.5,\"x\",null,false]",
            "{\"b\":{\"c\":[1,{\"a\":\"deep\"}]},\"a\":1}",
            "\"a string longer than sixty-four bytes ......................................\"",
            "[]",
            "{}",
            "18446744073709551615",
        ] {
            let want: Value = serde_json::from_str(t).unwrap();
            let got: Value = serde_json::from_str(&round(t)).unwrap();
            assert_eq!(got, want, "{t}");
        }
    }

    #[test]
    fn spec_layout() {
        // {"a": 1}: metadata v1 sorted, one key; object with 1-byte ids and offsets; int8 1.
        let (m, v) = from_json("{\"a\":1}").unwrap();
        assert_eq!(m, vec![0x11, 1, 0, 1, b'a']);
        assert_eq!(v, vec![0x02, 1, 0, 0, 2, 0x0C, 1]);
        // Short string "hi".
        assert_eq!(
            from_json("\"hi\"").unwrap().1,
            vec![(2 << 2) | 1, b'h', b'i']
        );
    }

    #[test]
    fn wide_arrays_are_large() {
        let items: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        let text = format!("[{}]", items.join(","));
        assert_eq!(round(&text), text);
    }

    #[test]
    fn typed_primitives_to_json() {
        let meta = [0x01, 0, 0];
        let check = |value: &[u8], want: &str| assert_eq!(to_json(&meta, value).unwrap(), want);
        check(&[11 << 2, 1, 0, 0, 0], "\"1970-01-02\"");
        let mut ts = vec![12 << 2];
        ts.extend_from_slice(&1_000_000i64.to_le_bytes());
        check(&ts, "\"1970-01-01T00:00:01.000000+00:00\"");
        check(&[8 << 2, 2, 0x39, 0x30, 0, 0], "123.45");
        check(&[8 << 2, 3, 0xF6, 0xFF, 0xFF, 0xFF], "-0.010");
        check(&[15 << 2, 3, 0, 0, 0, b'a', b'b', b'c'], "\"YWJj\"");
    }

    #[test]
    fn builders_and_sizes() {
        let (m, _) = from_json("{\"a\":0,\"b\":0}").unwrap();
        let one = from_json("1").unwrap().1;
        let s = from_json("\"s\"").unwrap().1;
        let arr = encode_array(&[one.clone(), s.clone()]);
        let obj = encode_object(&mut [("b", 1, arr.clone()), ("a", 0, one.clone())]);
        assert_eq!(to_json(&m, &obj).unwrap(), "{\"a\":1,\"b\":[1,\"s\"]}");
        assert_eq!(size_of(&obj).unwrap(), obj.len());
        let fields = object_fields(&obj).unwrap();
        assert_eq!(fields, vec![(0, &one[..]), (1, &arr[..])]);
        assert_eq!(key_id(&m, "b").unwrap(), 1);
        assert!(key_id(&m, "zz").is_err());
    }

    #[test]
    fn corrupt_values_are_errors() {
        let meta = [0x01, 0, 0];
        for v in [
            &[][..],
            &[0x02, 5],
            &[6 << 2, 1, 2],
            &[(10 << 2) | 1, b'a'],
            &[0x02, 1, 7, 0, 1, 0],
        ] {
            assert!(to_json(&meta, v).is_err(), "{v:?}");
        }
        assert!(to_json(&[0x02, 0, 0], &[0]).is_err());
        assert!(dictionary(&[0x01, 5, 0]).is_err());
    }
}
