//! The Avro binary encoding, read: a cursor over one block's bytes that checks every length and
//! count against the bytes that remain before anything is allocated.

use frazil_values::{Error, Result};

use super::schema::Schema;

pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

#[cold]
#[inline(never)]
fn int_range(v: i64) -> Error {
    Error::decode(format!("int value {v} out of range"))
}

#[inline(always)]
fn is_ascii(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(8);
    let mut high = 0u64;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        high |= u64::from_le_bytes(w);
    }
    let tail = chunks.remainder().iter().fold(0u8, |a, b| a | b);
    high & 0x8080_8080_8080_8080 == 0 && tail < 0x80
}

#[cold]
#[inline(never)]
fn eof(what: &str) -> Error {
    Error::decode(format!(
        "truncated data: {what} runs past the end of its block"
    ))
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// A zig-zag varint `long`.
    #[inline(always)]
    pub fn long(&mut self) -> Result<i64> {
        // Most values (statuses, ids, counts of small maps, lengths) fit one byte.
        if let Some(&byte) = self.buf.get(self.pos) {
            if byte < 0x80 {
                self.pos += 1;
                return Ok(i64::from(byte >> 1) ^ -i64::from(byte & 1));
            }
        }
        // Up to 8 bytes from one load (counts, sizes, ids): the first byte without its high
        // bit ends the varint; the 7-bit groups are packed in three shift-and-mask steps.
        if let Some(word) = self.buf.get(self.pos..self.pos + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            let x = u64::from_le_bytes(w);
            let ends = !x & 0x8080_8080_8080_8080;
            if ends != 0 {
                let bits = ends.trailing_zeros() + 1; // through the last byte's high bit
                self.pos += (bits / 8) as usize;
                let x = if bits == 64 {
                    x
                } else {
                    x & ((1u64 << bits) - 1)
                };
                let x = x & 0x7f7f_7f7f_7f7f_7f7f;
                let x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
                let x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
                let v = ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff);
                return Ok(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(eof("a varint"));
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(Error::decode("varint overflows a long"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return Err(Error::decode("varint longer than 10 bytes"));
            }
        }
        Ok(((value >> 1) as i64) ^ -((value & 1) as i64))
    }

    /// Passes over a varint without decoding it.
    #[inline(always)]
    pub fn skip_varint(&mut self) -> Result<()> {
        // Eight bytes at a time: the first byte without its high bit ends the varint.
        if let Some(word) = self.buf.get(self.pos..self.pos + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            let ends = !u64::from_le_bytes(w) & 0x8080_8080_8080_8080;
            if ends != 0 {
                self.pos += (ends.trailing_zeros() / 8) as usize + 1;
                return Ok(());
            }
        }
        for i in 0..10 {
            match self.buf.get(self.pos + i) {
                Some(b) if b & 0x80 == 0 => {
                    self.pos += i + 1;
                    return Ok(());
                }
                Some(_) => {}
                None => return Err(eof("a varint")),
            }
        }
        Err(Error::decode("varint longer than 10 bytes"))
    }

    /// Passes over `n` consecutive varints, eight bytes at a time: each byte without its high
    /// bit ends one. (Lenient about overlong varints, which only a skipped value could hide.)
    #[inline]
    pub fn skip_varints(&mut self, mut n: usize) -> Result<()> {
        while n > 0 {
            let Some(word) = self.buf.get(self.pos..self.pos + 8) else {
                for _ in 0..n {
                    self.skip_varint()?;
                }
                return Ok(());
            };
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            let mut ends = !u64::from_le_bytes(w) & 0x8080_8080_8080_8080;
            let count = ends.count_ones() as usize;
            if count < n {
                // every varint ending in this word is passed (one may continue in the next)
                self.pos += 8;
                n -= count;
                if count == 0 {
                    // eight continuation bytes: finish this varint with the checked skip
                    self.skip_varint()?;
                    n -= 1;
                }
                continue;
            }
            for _ in 1..n {
                ends &= ends - 1;
            }
            self.pos += (ends.trailing_zeros() / 8) as usize + 1;
            return Ok(());
        }
        Ok(())
    }

    #[inline(always)]
    pub fn int(&mut self) -> Result<i32> {
        let v = self.long()?;
        match i32::try_from(v) {
            Ok(v) => Ok(v),
            Err(_) => Err(int_range(v)),
        }
    }

    #[inline]
    pub fn boolean(&mut self) -> Result<bool> {
        match self.take(1, "a boolean")?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(Error::decode(format!("invalid boolean byte {b}"))),
        }
    }

    #[inline]
    pub fn float(&mut self) -> Result<f32> {
        let b = self.take(4, "a float")?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub fn double(&mut self) -> Result<f64> {
        let b = self.take(8, "a double")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }

    #[inline(always)]
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(eof(what));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A length prefix, checked against what remains.
    #[inline(always)]
    pub fn len(&mut self, what: &str) -> Result<usize> {
        let n = self.long()?;
        // a negative length is a huge u64: one comparison rejects both
        if n as u64 > self.remaining() as u64 {
            return Err(self.bad_len(n, what));
        }
        Ok(n as usize)
    }

    #[cold]
    #[inline(never)]
    fn bad_len(&self, n: i64, what: &str) -> Error {
        if n < 0 {
            Error::decode(format!("negative length {n} for {what}"))
        } else {
            Error::decode(format!(
                "{what} of length {n} runs past the end of its block ({} bytes left)",
                self.remaining()
            ))
        }
    }

    #[inline(always)]
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.len("bytes")?;
        self.take(n, "bytes")
    }

    #[inline(always)]
    pub fn string(&mut self) -> Result<&'a str> {
        let n = self.len("a string")?;
        let b = self.take(n, "a string")?;
        // paths and names are ASCII: check 8 bytes at a time before the general check
        if b.len() <= 256 && is_ascii(b) {
            // SAFETY: ASCII is valid UTF-8.
            return Ok(unsafe { std::str::from_utf8_unchecked(b) });
        }
        std::str::from_utf8(b).map_err(|e| Error::decode(format!("string is not valid UTF-8: {e}")))
    }

    /// The item count of the next array or map block (0 ends the array). A negative count is
    /// followed by the block's size in bytes, which is read and checked. Every item of an
    /// Iceberg array takes at least one byte, so a count beyond the remaining bytes is corrupt.
    #[inline(always)]
    pub fn block_count(&mut self) -> Result<usize> {
        let n = self.long()?;
        // the usual case: a small positive count
        if n >= 0 && (n as u64) <= self.remaining() as u64 {
            return Ok(n as usize);
        }
        self.block_count_slow(n)
    }

    #[cold]
    #[inline(never)]
    fn block_count_slow(&mut self, n: i64) -> Result<usize> {
        let n = if n < 0 {
            let size = self.long()?;
            if size < 0 || size as u64 > self.remaining() as u64 {
                return Err(Error::decode(format!("invalid array block size {size}")));
            }
            n.unsigned_abs()
        } else {
            n as u64
        };
        if n > self.remaining() as u64 {
            return Err(Error::decode(format!(
                "array block claims {n} items with {} bytes left",
                self.remaining()
            )));
        }
        Ok(n as usize)
    }

    /// Skips one value of `schema`.
    pub fn skip(&mut self, schema: &Schema) -> Result<()> {
        match schema {
            Schema::Null => {}
            Schema::Boolean => {
                self.boolean()?;
            }
            Schema::Int { .. } | Schema::Long { .. } | Schema::Enum { .. } => {
                self.long()?;
            }
            Schema::Float => {
                self.take(4, "a float")?;
            }
            Schema::Double => {
                self.take(8, "a double")?;
            }
            Schema::Bytes { .. } | Schema::String => {
                let n = self.len("bytes")?;
                self.take(n, "bytes")?;
            }
            Schema::Fixed { size, .. } => {
                self.take(*size, "a fixed")?;
            }
            Schema::Record(r) => {
                for f in &r.fields {
                    self.skip(&f.schema)?;
                }
            }
            Schema::Array { items, .. } => loop {
                let n = self.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.skip(items)?;
                }
            },
            Schema::Map { values, .. } => loop {
                let n = self.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.len("a map key")
                        .and_then(|k| self.take(k, "a map key"))?;
                    self.skip(values)?;
                }
            },
            Schema::Union(branches) => {
                let i = self.long()?;
                let branch = usize::try_from(i)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .ok_or_else(|| Error::decode(format!("union branch {i} out of range")))?;
                self.skip(branch)?;
            }
        }
        Ok(())
    }
}

/// How to pass over a value the reader does not want: a schema compiled to the few shapes the
/// binary encoding has, so skipping a metrics map is a tight loop over varints.
#[derive(Debug, Clone)]
pub enum Skip {
    Nothing,
    Varint,
    /// A record of this many varints (a metrics map's key-value record).
    Varints(usize),
    /// A record of a varint and bytes (a bounds map's key-value record).
    VarintBytes,
    Fixed(usize),
    Bytes,
    Boolean,
    Record(Vec<Skip>),
    /// An array (or map: a key string first) of items.
    Array {
        items: Box<Skip>,
        string_key: bool,
    },
    Union(Vec<Skip>),
}

impl Skip {
    pub fn of(schema: &Schema) -> Skip {
        match schema {
            Schema::Null => Skip::Nothing,
            Schema::Boolean => Skip::Boolean,
            Schema::Int { .. } | Schema::Long { .. } | Schema::Enum { .. } => Skip::Varint,
            Schema::Float => Skip::Fixed(4),
            Schema::Double => Skip::Fixed(8),
            Schema::Bytes { .. } | Schema::String => Skip::Bytes,
            Schema::Fixed { size, .. } => Skip::Fixed(*size),
            Schema::Record(r) => {
                let fields: Vec<Skip> = r.fields.iter().map(|f| Skip::of(&f.schema)).collect();
                match fields.as_slice() {
                    [Skip::Varint, Skip::Bytes] => Skip::VarintBytes,
                    f if !f.is_empty() && f.iter().all(|s| matches!(s, Skip::Varint)) => {
                        Skip::Varints(f.len())
                    }
                    _ => Skip::Record(fields),
                }
            }
            Schema::Array { items, .. } => Skip::Array {
                items: Box::new(Skip::of(items)),
                string_key: false,
            },
            Schema::Map { values, .. } => Skip::Array {
                items: Box::new(Skip::of(values)),
                string_key: true,
            },
            Schema::Union(b) => Skip::Union(b.iter().map(Skip::of).collect()),
        }
    }

    pub fn run(&self, r: &mut Reader<'_>) -> Result<()> {
        match self {
            Skip::Nothing => {}
            Skip::Varint => r.skip_varint()?,
            Skip::Varints(k) => {
                for _ in 0..*k {
                    r.skip_varint()?;
                }
            }
            Skip::VarintBytes => {
                r.skip_varint()?;
                let n = r.len("bytes")?;
                r.take(n, "bytes")?;
            }
            Skip::Fixed(n) => {
                r.take(*n, "a fixed")?;
            }
            Skip::Bytes => {
                let n = r.len("bytes")?;
                r.take(n, "bytes")?;
            }
            Skip::Boolean => {
                r.boolean()?;
            }
            Skip::Record(fields) => {
                for f in fields {
                    f.run(r)?;
                }
            }
            // the metrics maps: arrays of records of varints, skipped a block at a time
            Skip::Array {
                items,
                string_key: false,
            } if matches!(**items, Skip::Varint | Skip::Varints(_)) => {
                let per = match **items {
                    Skip::Varints(k) => k,
                    _ => 1,
                };
                loop {
                    let n = r.block_count()?;
                    if n == 0 {
                        break;
                    }
                    r.skip_varints(n.saturating_mul(per))?;
                }
            }
            // the bounds maps: arrays of (varint, bytes) records
            Skip::Array {
                items,
                string_key: false,
            } if matches!(**items, Skip::VarintBytes) => loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    r.skip_varint()?;
                    let len = r.len("bytes")?;
                    r.take(len, "bytes")?;
                }
            },
            Skip::Array { items, string_key } => loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    if *string_key {
                        let k = r.len("a map key")?;
                        r.take(k, "a map key")?;
                    }
                    items.run(r)?;
                }
            },
            Skip::Union(branches) => {
                let i = r.long()?;
                let branch = usize::try_from(i)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .ok_or_else(|| Error::decode(format!("union branch {i} out of range")))?;
                branch.run(r)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_varints() {
        let cases: &[(&[u8], i64)] = &[
            (&[0], 0),
            (&[1], -1),
            (&[2], 1),
            (&[0x7f], -64),
            (&[0x80, 0x01], 64),
            (
                &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                i64::MAX,
            ),
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                i64::MIN,
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(Reader::new(bytes).long().unwrap(), *want);
        }
        assert!(Reader::new(&[0xff; 11]).long().is_err());
        assert!(Reader::new(&[0x80]).long().is_err());
        assert!(
            Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])
                .long()
                .is_err()
        );
    }

    #[test]
    fn every_varint_length_reads_back() {
        let mut values = vec![0i64, -1, 1, i64::MAX, i64::MIN];
        for shift in 0..64 {
            let v = 1i64 << shift;
            values.extend([
                v,
                v.wrapping_neg(),
                v.wrapping_sub(1),
                v.wrapping_sub(1).wrapping_neg(),
                v.wrapping_add(1),
                v ^ 0x5555_5555_5555_5555,
            ]);
        }
        let mut buf = Vec::new();
        for v in &values {
            crate::avro::encode::long(&mut buf, *v);
        }
        // read with the 8-byte fast path (padding after) and at the very end (none)
        let mut r = Reader::new(&buf);
        for v in &values {
            assert_eq!(r.long().unwrap(), *v);
        }
        assert!(r.is_empty());
        for v in &values {
            let mut one = Vec::new();
            crate::avro::encode::long(&mut one, *v);
            let n = one.len();
            assert_eq!(Reader::new(&one).long().unwrap(), *v);
            one.extend_from_slice(&[0xff; 9]);
            let mut r = Reader::new(&one);
            assert_eq!(r.long().unwrap(), *v);
            assert_eq!(r.position(), n);
        }
    }

    #[test]
    fn skipping_varints_matches_reading_them() {
        let mut buf = Vec::new();
        let values = [0i64, -1, 63, 64, 1 << 20, -(1 << 40), i64::MAX, i64::MIN, 5];
        for v in values {
            crate::avro::encode::long(&mut buf, v);
        }
        let (mut a, mut b) = (Reader::new(&buf), Reader::new(&buf));
        for _ in values {
            a.long().unwrap();
            b.skip_varint().unwrap();
            assert_eq!(a.position(), b.position());
        }
        assert!(Reader::new(&[0x80; 12]).skip_varint().is_err());
        assert!(Reader::new(&[0x80; 3]).skip_varint().is_err());
    }

    #[test]
    fn skipping_many_varints_lands_where_reading_them_does() {
        let values: Vec<i64> = (0..200)
            .map(|i: i64| match i % 5 {
                0 => i,
                1 => -i * 1000,
                2 => i << 30,
                3 => i64::MAX - i,
                _ => 1 << (i % 63),
            })
            .collect();
        let mut buf = Vec::new();
        for v in &values {
            crate::avro::encode::long(&mut buf, *v);
        }
        buf.extend_from_slice(&[0x80; 3]); // a varint cut off at the end
        for start in 0..20 {
            for n in [0, 1, 2, 3, 7, 8, 9, 16, 17, 50, 200 - start] {
                let (mut a, mut b) = (Reader::new(&buf), Reader::new(&buf));
                for _ in 0..start {
                    a.long().unwrap();
                    b.long().unwrap();
                }
                for _ in 0..n {
                    a.long().unwrap();
                }
                b.skip_varints(n).unwrap();
                assert_eq!(a.position(), b.position(), "start {start} n {n}");
            }
        }
        let mut r = Reader::new(&buf);
        assert!(r.skip_varints(201).is_err());
        assert!(Reader::new(&[0x80; 30]).skip_varints(1).is_err());
    }

    #[test]
    fn hostile_lengths_fail_before_allocating() {
        // length 2^40 with 1 byte left
        let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x00]);
        assert!(r.bytes().is_err());
        let mut r = Reader::new(&[0x03]);
        assert!(r.bytes().is_err());
        let mut r = Reader::new(&[0x04, 0xff, 0xfe]);
        assert!(r.string().is_err());
        let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x10]);
        assert!(r.block_count().is_err());
    }
}
