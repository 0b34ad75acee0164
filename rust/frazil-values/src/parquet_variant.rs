//! Parquet's VARIANT logical type on a written file's groups (spec Appendix A: a `variant` is
//! a group of `metadata` and `value` annotated VARIANT). pyarrow 26 cannot annotate a group
//! itself, so the writer hands its footer (the Thrift compact-protocol `FileMetaData`) here and
//! gets it back with `logicalType = VARIANT(specification_version=1)` on the schema elements
//! of the given field ids. Only the footer changes: column chunk offsets point into the data
//! before it, so they stay valid.

use crate::error::{Error, Result};

fn bad(message: impl Into<String>) -> Error {
    Error::decode(format!("invalid Parquet footer: {}", message.into()))
}

// Compact protocol type ids.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

// Thrift field ids of parquet.thrift.
const FILE_METADATA_SCHEMA: i16 = 2;
const SCHEMA_ELEMENT_NUM_CHILDREN: i16 = 5;
const SCHEMA_ELEMENT_FIELD_ID: i16 = 9;
const SCHEMA_ELEMENT_LOGICAL_TYPE: i16 = 10;
const LOGICAL_TYPE_VARIANT: i16 = 16;

const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self.data.get(self.pos).ok_or_else(|| bad("ends early"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut out = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            out |= ((b & 0x7F) as u64) << shift.min(63);
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(bad("varint is too long"))
    }

    fn zigzag(&mut self) -> Result<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// The next field header of a struct: `None` at its stop byte, else (type, field id).
    fn field(&mut self, last: &mut i16) -> Result<Option<(u8, i16)>> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let ty = b & 0x0F;
        let delta = (b >> 4) as i16;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| bad("field id out of range"))?
        } else {
            *last + delta
        };
        *last = id;
        Ok(Some((ty, id)))
    }

    fn skip(&mut self, ty: u8, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(bad("nesting is too deep"));
        }
        match ty {
            BOOL_TRUE | BOOL_FALSE => {}
            BYTE => self.pos += 1,
            I16 | I32 | I64 => {
                self.varint()?;
            }
            DOUBLE => self.pos += 8,
            BINARY => {
                let n = self.varint()? as usize;
                self.pos = self
                    .pos
                    .checked_add(n)
                    .ok_or_else(|| bad("length overflows"))?;
            }
            LIST | SET => {
                let (n, elem) = self.list_header()?;
                for _ in 0..n {
                    // Booleans in lists take a byte each.
                    if elem == BOOL_TRUE || elem == BOOL_FALSE {
                        self.pos += 1;
                    } else {
                        self.skip(elem, depth + 1)?;
                    }
                }
            }
            MAP => {
                let n = self.varint()? as usize;
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..n {
                        self.skip(kv >> 4, depth + 1)?;
                        self.skip(kv & 0x0F, depth + 1)?;
                    }
                }
            }
            STRUCT => {
                let mut last = 0;
                while let Some((t, _)) = self.field(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
            }
            other => return Err(bad(format!("unknown compact type {other}"))),
        }
        if self.pos > self.data.len() {
            return Err(bad("ends early"));
        }
        Ok(())
    }

    fn list_header(&mut self) -> Result<(usize, u8)> {
        let b = self.byte()?;
        let n = if b >> 4 == 15 {
            self.varint()? as usize
        } else {
            (b >> 4) as usize
        };
        if n > self.data.len() {
            return Err(bad("list size exceeds the footer"));
        }
        Ok((n, b & 0x0F))
    }
}

/// `footer` (a Parquet `FileMetaData`, without the trailing length and magic) with the groups
/// of the given field ids annotated VARIANT. A group that already has a logical type is left
/// as it is.
pub fn annotate_variant_groups(footer: &[u8], field_ids: &[i32]) -> Result<Vec<u8>> {
    let mut r = Reader {
        data: footer,
        pos: 0,
    };
    // Where to insert the annotation: just before each target element's stop byte.
    let mut inserts: Vec<usize> = Vec::new();
    let mut last = 0;
    while let Some((ty, id)) = r.field(&mut last)? {
        if id != FILE_METADATA_SCHEMA || ty != LIST {
            r.skip(ty, 0)?;
            continue;
        }
        let (n, elem) = r.list_header()?;
        if elem != STRUCT {
            return Err(bad("schema is not a list of structs"));
        }
        for _ in 0..n {
            let (mut field_id, mut group, mut annotated) = (None, false, false);
            let mut last = 0;
            while let Some((t, fid)) = r.field(&mut last)? {
                match fid {
                    SCHEMA_ELEMENT_FIELD_ID if t == I32 => {
                        field_id = Some(r.zigzag()?);
                        continue;
                    }
                    SCHEMA_ELEMENT_NUM_CHILDREN => group = true,
                    SCHEMA_ELEMENT_LOGICAL_TYPE => annotated = true,
                    _ => {}
                }
                r.skip(t, 1)?;
            }
            // r.pos is just past the element's stop byte.
            if group && !annotated && field_id.is_some_and(|f| field_ids.contains(&(f as i32))) {
                inserts.push(r.pos - 1);
            }
        }
    }
    if r.pos != footer.len() {
        return Err(bad(format!(
            "{} bytes after FileMetaData",
            footer.len() - r.pos
        )));
    }
    // logicalType (field 10, a struct; long-form header since field ids before it may be
    // larger) = union { 16: VariantType { 1: i8 specification_version = 1 } }.
    let annotation: [u8; 9] = [
        STRUCT,
        (SCHEMA_ELEMENT_LOGICAL_TYPE as u8) << 1,
        STRUCT,
        (LOGICAL_TYPE_VARIANT as u8) << 1,
        0x10 | BYTE,
        1,
        0,
        0,
        0,
    ];
    // The last byte above is the union's stop; the element's own stop byte follows it.
    let annotation = &annotation[..8];
    let mut out = Vec::with_capacity(footer.len() + inserts.len() * annotation.len());
    let mut from = 0;
    for at in inserts {
        out.extend_from_slice(&footer[from..at]);
        out.extend_from_slice(annotation);
        from = at;
    }
    out.extend_from_slice(&footer[from..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_footers_are_errors() {
        assert!(annotate_variant_groups(&[0x19], &[1]).is_err());
        assert!(annotate_variant_groups(&[0x29, 0xFC], &[1]).is_err());
        assert_eq!(annotate_variant_groups(&[0], &[1]).unwrap(), vec![0]);
    }
}
