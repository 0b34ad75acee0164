//! Plan rows to a `ScanTasks` JSON object.

use std::collections::HashMap;
use std::io::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, StructArray};
use frazil_scan::value::Column;
use frazil_values::bound::Val;
use frazil_values::{json, Error, Literal, PrimitiveType, Result, Type};

use crate::columns::{field, Bytes, Ints, Lists, Maps};
use crate::Layout;

const COUNTS: [(&str, &str); 4] = [
    ("column_sizes", "column-sizes"),
    ("value_counts", "value-counts"),
    ("null_value_counts", "null-value-counts"),
    ("nan_value_counts", "nan-value-counts"),
];
const BOUNDS: [(&str, &str); 2] = [
    ("lower_bounds", "lower-bounds"),
    ("upper_bounds", "upper-bounds"),
];

/// The columns of one chunk of plan rows.
struct Files<'a> {
    content: Ints<'a>,
    path: Bytes<'a>,
    format: Bytes<'a>,
    spec_id: Ints<'a>,
    partition: Vec<Column>,
    record_count: Ints<'a>,
    size: Ints<'a>,
    counts: Vec<(&'static str, Maps<'a>)>,
    bounds: Vec<(&'static str, Maps<'a>)>,
    key_metadata: Bytes<'a>,
    split_offsets: Lists<'a>,
    equality_ids: Lists<'a>,
    sort_order_id: Ints<'a>,
    first_row_id: Ints<'a>,
    sequence_number: Ints<'a>,
    referenced: Bytes<'a>,
    content_offset: Ints<'a>,
    content_size: Ints<'a>,
}

impl<'a> Files<'a> {
    fn new(s: &'a StructArray, layout: &Layout) -> Result<Files<'a>> {
        let need = |name: &str| {
            field(s, name)
                .ok_or_else(|| Error::invalid(format!("plan rows without a {name} column")))
        };
        let part = need("partition")?
            .as_struct_opt()
            .ok_or_else(|| Error::invalid("the plan's partition column is not a struct"))?;
        if part.num_columns() != layout.fields.len() {
            return Err(Error::invalid(format!(
                "the plan's partition has {} fields, the layout {}",
                part.num_columns(),
                layout.fields.len()
            )));
        }
        let partition = layout
            .fields
            .iter()
            .enumerate()
            .map(|(i, (_, ty))| Column::new(part.column(i), ty, "partition"))
            .collect::<Result<_>>()?;
        let mut counts = Vec::new();
        for (name, key) in COUNTS {
            counts.push((key, Maps::of(field(s, name), name)?));
        }
        let mut bounds = Vec::new();
        for (name, key) in BOUNDS {
            bounds.push((key, Maps::of(field(s, name), name)?));
        }
        Ok(Files {
            content: Ints::of(field(s, "content"), "content")?,
            path: Bytes::of(Some(need("file_path")?), "file_path")?,
            format: Bytes::of(Some(need("file_format")?), "file_format")?,
            spec_id: Ints::of(Some(need("spec_id")?), "spec_id")?,
            partition,
            record_count: Ints::of(Some(need("record_count")?), "record_count")?,
            size: Ints::of(Some(need("file_size_in_bytes")?), "file_size_in_bytes")?,
            counts,
            bounds,
            key_metadata: Bytes::of(field(s, "key_metadata"), "key_metadata")?,
            split_offsets: Lists::of(field(s, "split_offsets"), "split_offsets")?,
            equality_ids: Lists::of(field(s, "equality_ids"), "equality_ids")?,
            sort_order_id: Ints::of(field(s, "sort_order_id"), "sort_order_id")?,
            first_row_id: Ints::of(field(s, "first_row_id"), "first_row_id")?,
            sequence_number: Ints::of(field(s, "sequence_number"), "sequence_number")?,
            referenced: Bytes::of(field(s, "referenced_data_file"), "referenced_data_file")?,
            content_offset: Ints::of(field(s, "content_offset"), "content_offset")?,
            content_size: Ints::of(field(s, "content_size_in_bytes"), "content_size_in_bytes")?,
        })
    }

    /// Row `i` as a content file object.
    fn write(&self, i: usize, layout: &Layout, out: &mut Vec<u8>) -> Result<()> {
        let path = self.path.str(i).unwrap_or_default();
        let spec_id = self.spec_id.get(i).unwrap_or(0);
        let content = self.content.get(i).unwrap_or(0);
        let content_name = match content {
            0 => "data",
            1 => "position-deletes",
            2 => "equality-deletes",
            c => return Err(Error::invalid(format!("{path}: unknown content {c}"))),
        };
        let positions = layout.specs.get(&(spec_id as i32)).ok_or_else(|| {
            Error::invalid(format!("{path}: unknown partition spec id {spec_id}"))
        })?;
        let _ = write!(
            out,
            "{{\"spec-id\":{spec_id},\"content\":\"{content_name}\",\"file-path\":"
        );
        string(out, path);
        out.extend_from_slice(b",\"file-format\":");
        string(
            out,
            &self.format.str(i).unwrap_or_default().to_ascii_lowercase(),
        );
        out.extend_from_slice(b",\"partition\":[");
        for (k, &at) in positions.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            let Some(at) = at else {
                out.extend_from_slice(b"null");
                continue;
            };
            let ty = &layout.fields[at].1;
            match self.partition[at].get(i) {
                None => out.extend_from_slice(b"null"),
                Some(v) => {
                    let value =
                        json::to_json(Some(&literal(v, ty, path)?), &Type::Primitive(ty.clone()))
                            .map_err(|e| Error::invalid(format!("{path}: partition: {e}")))?;
                    serde_json::to_writer(&mut *out, &value)
                        .map_err(|e| Error::invalid(format!("{path}: {e}")))?;
                }
            }
        }
        let _ = write!(
            out,
            "],\"file-size-in-bytes\":{},\"record-count\":{}",
            self.size.get(i).unwrap_or(0),
            self.record_count.get(i).unwrap_or(0)
        );
        for (key, m) in &self.counts {
            if let Some(r) = m.get(i) {
                let _ = write!(out, ",\"{key}\":{{\"keys\":");
                ints(out, r.clone(), &m.keys);
                out.extend_from_slice(b",\"values\":");
                ints(out, r, &m.counts);
                out.push(b'}');
            }
        }
        for (key, m) in &self.bounds {
            if let Some(r) = m.get(i) {
                let _ = write!(out, ",\"{key}\":{{\"keys\":");
                ints(out, r.clone(), &m.keys);
                out.extend_from_slice(b",\"values\":[");
                for (k, j) in r.enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    match m.bytes.get(j) {
                        Some(b) => hex(out, b),
                        None => out.extend_from_slice(b"null"),
                    }
                }
                out.extend_from_slice(b"]}");
            }
        }
        if let Some(b) = self.key_metadata.get(i) {
            out.extend_from_slice(b",\"key-metadata\":");
            hex(out, b);
        }
        if let Some((r, v)) = self.split_offsets.get(i) {
            out.extend_from_slice(b",\"split-offsets\":");
            ints(out, r, v);
        }
        if let Some((r, v)) = self.equality_ids.get(i) {
            out.extend_from_slice(b",\"equality-ids\":");
            ints(out, r, v);
        }
        if let Some(v) = self.sort_order_id.get(i) {
            let _ = write!(out, ",\"sort-order-id\":{v}");
        }
        if let Some(v) = self.first_row_id.get(i) {
            let _ = write!(out, ",\"first-row-id\":{v}");
            // as Java's parser: a data file's sequence number travels with its first row id
            if let (0, Some(seq)) = (content, self.sequence_number.get(i)) {
                let _ = write!(out, ",\"data-sequence-number\":{seq}");
            }
        }
        if content != 0 {
            if let Some(v) = self.referenced.str(i) {
                out.extend_from_slice(b",\"referenced-data-file\":");
                string(out, v);
            }
            if let Some(v) = self.content_offset.get(i) {
                let _ = write!(out, ",\"content-offset\":{v}");
            }
            if let Some(v) = self.content_size.get(i) {
                let _ = write!(out, ",\"content-size-in-bytes\":{v}");
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// A partition value read from the plan as the literal of its Iceberg type.
fn literal(v: Val<'_>, ty: &PrimitiveType, path: &str) -> Result<Literal> {
    use PrimitiveType as P;
    Ok(match (v, ty) {
        (Val::Bool(b), _) => Literal::Boolean(b),
        (Val::I32(x), P::Date) => Literal::Date(x),
        (Val::I32(x), _) => Literal::Int(x),
        (Val::I64(x), P::Time) => Literal::Time(x),
        (Val::I64(x), P::Timestamp) => Literal::Timestamp(x),
        (Val::I64(x), P::TimestampTz) => Literal::TimestampTz(x),
        (Val::I64(x), P::TimestampNs) => Literal::TimestampNs(x),
        (Val::I64(x), P::TimestampTzNs) => Literal::TimestampTzNs(x),
        (Val::I64(x), _) => Literal::Long(x),
        (Val::F32(x), _) => Literal::Float(x),
        (Val::F64(x), _) => Literal::Double(x),
        (Val::I128(x), _) => Literal::Decimal(x),
        (Val::U128(x), _) => Literal::Uuid(x),
        (Val::Bytes(b), P::String) => Literal::String(
            String::from_utf8(b.to_vec())
                .map_err(|_| Error::invalid(format!("{path}: a partition string is not UTF-8")))?,
        ),
        (Val::Bytes(b), P::Fixed(_)) => Literal::Fixed(b.to_vec()),
        (Val::Bytes(b), _) => Literal::Binary(b.to_vec()),
    })
}

fn string(out: &mut Vec<u8>, s: &str) {
    // serializing a str into a Vec cannot fail
    let _ = serde_json::to_writer(&mut *out, s);
}

fn ints(out: &mut Vec<u8>, r: std::ops::Range<usize>, v: &Ints<'_>) {
    out.push(b'[');
    for (k, j) in r.enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match v.get(j) {
            Some(x) => {
                let _ = write!(out, "{x}");
            }
            None => out.extend_from_slice(b"null"),
        }
    }
    out.push(b']');
}

/// Binary as upper-case hex in a JSON string (Java's and the REST spec's form).
fn hex(out: &mut Vec<u8>, b: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.push(b'"');
    for &x in b {
        out.push(DIGITS[(x >> 4) as usize]);
        out.push(DIGITS[(x & 15) as usize]);
    }
    out.push(b'"');
}

fn as_struct<'a>(a: &'a ArrayRef, what: &str) -> Result<&'a StructArray> {
    a.as_struct_opt()
        .ok_or_else(|| Error::invalid(format!("{what}: expected plan rows (a struct array)")))
}

/// A `ScanTasks` object of the plan rows `tasks` (chunks of the plan's task table) and
/// `deletes` (the delete files they refer to, in page order). `delete_rows` are the plan-wide
/// row numbers of `deletes`, ascending: a task's `delete_file_references` (plan-wide) become
/// positions in it. `residuals` maps a plan residual text to its wire JSON.
pub fn write_page(
    tasks: &[ArrayRef],
    deletes: &[ArrayRef],
    delete_rows: &[i64],
    residuals: &HashMap<String, String>,
    layout: &Layout,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(1 << 16);
    out.extend_from_slice(b"{\"file-scan-tasks\":[");
    let mut first = true;
    for chunk in tasks {
        let s = as_struct(chunk, "tasks")?;
        let files = Files::new(s, layout)?;
        let residual = field(s, "residual")
            .and_then(|a| a.as_dictionary_opt::<Int32Type>())
            .ok_or_else(|| Error::invalid("plan rows without a dictionary residual column"))?;
        let texts = Bytes::of(Some(residual.values()), "residual")?;
        let wire: Vec<&str> = (0..residual.values().len())
            .map(|k| {
                let text = texts.str(k).unwrap_or("true");
                residuals
                    .get(text)
                    .map(String::as_str)
                    .ok_or_else(|| Error::invalid(format!("no wire form of residual {text}")))
            })
            .collect::<Result<_>>()?;
        let refs = Lists::of(field(s, "delete_file_references"), "delete_file_references")?;
        for i in 0..s.len() {
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(b"{\"data-file\":");
            files.write(i, layout, &mut out)?;
            if let Some((r, v)) = refs.get(i) {
                if !r.is_empty() {
                    out.extend_from_slice(b",\"delete-file-references\":[");
                    for (k, j) in r.enumerate() {
                        let global = v.get(j).unwrap_or(-1);
                        let local = delete_rows.binary_search(&global).map_err(|_| {
                            Error::invalid(format!("delete file row {global} is not in the page"))
                        })?;
                        if k > 0 {
                            out.push(b',');
                        }
                        let _ = write!(out, "{local}");
                    }
                    out.push(b']');
                }
            }
            out.extend_from_slice(b",\"residual-filter\":");
            let key = if residual.is_null(i) {
                0
            } else {
                residual.keys().value(i) as usize
            };
            out.extend_from_slice(
                wire.get(key)
                    .ok_or_else(|| Error::invalid("residual index out of range"))?
                    .as_bytes(),
            );
            out.push(b'}');
        }
    }
    out.extend_from_slice(b"],\"delete-files\":[");
    let mut first = true;
    for chunk in deletes {
        let s = as_struct(chunk, "delete files")?;
        let files = Files::new(s, layout)?;
        for i in 0..s.len() {
            if !first {
                out.push(b',');
            }
            first = false;
            files.write(i, layout, &mut out)?;
        }
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}
