//! Variant columns as Arrow arrays: the Parquet group of a variant (`struct<metadata, value>`,
//! VariantEncoding) made from and turned into JSON text, and a shredded group
//! (`struct<metadata, value?, typed_value?>`, Parquet's VariantShredding) merged back into its
//! value bytes. One array at a time; the encoding itself is `variant`'s.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{DataType, Field, Fields};

use crate::error::{Error, Result};
use crate::variant;

fn at_row(i: usize, e: Error) -> Error {
    Error::new(e.kind, format!("row {i}: {}", e.message))
}

fn strings(array: &dyn Array) -> Result<Vec<Option<&str>>> {
    Ok(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => array.as_string::<i64>().iter().collect(),
        DataType::Utf8View => array.as_string_view().iter().collect(),
        other => {
            return Err(Error::invalid(format!(
                "JSON text must be a string array, got {other}"
            )))
        }
    })
}

fn binaries(array: &dyn Array) -> Result<Vec<Option<&[u8]>>> {
    Ok(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().iter().collect(),
        DataType::LargeBinary => array.as_binary::<i64>().iter().collect(),
        DataType::BinaryView => array.as_binary_view().iter().collect(),
        other => {
            return Err(Error::invalid(format!(
                "variant bytes must be binary, got {other}"
            )))
        }
    })
}

/// The fields of an unshredded variant group: required `metadata` and `value` bytes.
pub fn variant_fields() -> Fields {
    Fields::from(vec![
        Field::new("metadata", DataType::Binary, false),
        Field::new("value", DataType::Binary, false),
    ])
}

/// JSON text (a string array) as a variant `struct<metadata, value>` array; a null text is a
/// null row.
pub fn from_json_array(array: &dyn Array) -> Result<StructArray> {
    let texts = strings(array)?;
    let mut metadata = BinaryBuilder::new();
    let mut value = BinaryBuilder::new();
    for (i, t) in texts.iter().enumerate() {
        // A null row still needs (ignored) child values: the children are required.
        let (m, v) = match t {
            Some(t) => variant::from_json(t).map_err(|e| at_row(i, e))?,
            None => (vec![1, 0, 0], vec![0]),
        };
        metadata.append_value(m);
        value.append_value(v);
    }
    let nulls = array.logical_nulls();
    StructArray::try_new(
        variant_fields(),
        vec![
            Arc::new(metadata.finish()) as ArrayRef,
            Arc::new(value.finish()),
        ],
        nulls,
    )
    .map_err(|e| Error::invalid(e.to_string()))
}

/// A variant `struct<metadata, value>` array as JSON text (a string array).
pub fn to_json_array(array: &dyn Array) -> Result<ArrayRef> {
    let s = array
        .as_struct_opt()
        .ok_or_else(|| Error::invalid("a variant column must be a struct<metadata, value>"))?;
    let child = |name: &str| {
        s.column_by_name(name)
            .ok_or_else(|| Error::invalid(format!("a variant column has no {name:?} field")))
    };
    let (m, v) = (
        binaries(child("metadata")?.as_ref())?,
        binaries(child("value")?.as_ref())?,
    );
    let mut out = StringBuilder::new();
    for i in 0..s.len() {
        match (s.is_valid(i), m[i], v[i]) {
            (true, Some(m), Some(v)) => {
                out.append_value(variant::to_json(m, v).map_err(|e| at_row(i, e))?)
            }
            // A shredded column's value may be missing where typed_value holds it.
            (true, _, None) => {
                return Err(Error::unsupported(format!(
                    "row {i}: the variant has no value bytes (shredded into typed_value)"
                )))
            }
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// The typed value at row `i` of a primitive `typed_value` array.
fn primitive_at(array: &dyn Array, i: usize) -> Result<variant::Primitive<'_>> {
    use arrow_array::types::*;
    use arrow_schema::TimeUnit;
    use variant::Primitive as P;
    let scale = |s: i8| u8::try_from(s).map_err(|_| Error::unsupported("a negative decimal scale"));
    Ok(match array.data_type() {
        DataType::Boolean => P::Bool(array.as_boolean().value(i)),
        DataType::Int8 => P::Int(array.as_primitive::<Int8Type>().value(i) as i64),
        DataType::Int16 => P::Int(array.as_primitive::<Int16Type>().value(i) as i64),
        DataType::Int32 => P::Int(array.as_primitive::<Int32Type>().value(i) as i64),
        DataType::Int64 => P::Int(array.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 => P::Float(array.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => P::Double(array.as_primitive::<Float64Type>().value(i)),
        DataType::Date32 => P::Date(array.as_primitive::<Date32Type>().value(i)),
        DataType::Decimal128(_, s) => {
            P::Decimal(array.as_primitive::<Decimal128Type>().value(i), scale(*s)?)
        }
        DataType::Decimal32(_, s) => P::Decimal(
            array.as_primitive::<Decimal32Type>().value(i) as i128,
            scale(*s)?,
        ),
        DataType::Decimal64(_, s) => P::Decimal(
            array.as_primitive::<Decimal64Type>().value(i) as i128,
            scale(*s)?,
        ),
        DataType::Time64(TimeUnit::Microsecond) => {
            P::TimeMicros(array.as_primitive::<Time64MicrosecondType>().value(i))
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => P::Timestamp(
            array.as_primitive::<TimestampMicrosecondType>().value(i),
            false,
            tz.is_some(),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => P::Timestamp(
            array.as_primitive::<TimestampNanosecondType>().value(i),
            true,
            tz.is_some(),
        ),
        DataType::Utf8 => P::String(array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => P::String(array.as_string::<i64>().value(i)),
        DataType::Utf8View => P::String(array.as_string_view().value(i)),
        DataType::Binary => P::Binary(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => P::Binary(array.as_binary::<i64>().value(i)),
        DataType::FixedSizeBinary(16) => P::Uuid(u128::from_be_bytes(
            array
                .as_fixed_size_binary()
                .value(i)
                .try_into()
                .unwrap_or([0; 16]),
        )),
        other => {
            return Err(Error::unsupported(format!(
                "a shredded variant typed_value of type {other}"
            )))
        }
    })
}

fn binary_at(array: &dyn Array, i: usize) -> Result<Option<&[u8]>> {
    if array.is_null(i) {
        return Ok(None);
    }
    Ok(Some(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(i),
        DataType::LargeBinary => array.as_binary::<i64>().value(i),
        DataType::BinaryView => array.as_binary_view().value(i),
        other => {
            return Err(Error::invalid(format!(
                "variant bytes must be binary, got {other}"
            )))
        }
    }))
}

// Shredding nests a level per object field or array element; deeper is refused.
const MAX_SHRED_DEPTH: usize = 64;

/// The unshredded value bytes at row `i` of a (value, typed_value) pair (VariantShredding:
/// a missing value is `None`; a typed object's fields merge with a partially shredded object
/// in `value`).
fn unshred_at(
    value: Option<&dyn Array>,
    typed: Option<&dyn Array>,
    i: usize,
    metadata: &[u8],
    depth: usize,
) -> Result<Option<Vec<u8>>> {
    if depth > MAX_SHRED_DEPTH {
        return Err(Error::invalid("variant shredding is nested too deeply"));
    }
    let v = match value {
        Some(a) => binary_at(a, i)?,
        None => None,
    };
    let t = match typed {
        Some(a) if a.is_valid(i) => a,
        _ => return Ok(v.map(<[u8]>::to_vec)),
    };
    match t.data_type() {
        DataType::Struct(_) => {
            let s = t.as_struct();
            let mut fields: Vec<(&str, usize, Vec<u8>)> = Vec::new();
            for (f, child) in s.fields().iter().zip(s.columns()) {
                let pair = child.as_struct_opt().ok_or_else(|| {
                    Error::invalid(format!("shredded field {:?} is not a group", f.name()))
                })?;
                if let Some(bytes) = unshred_at(
                    pair.column_by_name("value").map(|a| a.as_ref()),
                    pair.column_by_name("typed_value").map(|a| a.as_ref()),
                    i,
                    metadata,
                    depth + 1,
                )? {
                    fields.push((f.name(), variant::key_id(metadata, f.name())?, bytes));
                }
            }
            if let Some(rest) = v {
                let keys = variant::dictionary(metadata)?;
                for (id, bytes) in variant::object_fields(rest)? {
                    let key = keys
                        .get(id)
                        .ok_or_else(|| Error::decode(format!("field id {id} out of range")))?;
                    fields.push((key, id, bytes.to_vec()));
                }
            }
            Ok(Some(variant::encode_object(&mut fields)))
        }
        DataType::List(_) | DataType::LargeList(_) => {
            let (element, range): (&StructArray, std::ops::Range<usize>) =
                if let Some(l) = t.as_list_opt::<i32>() {
                    let o = l.value_offsets();
                    (struct_of(l.values())?, o[i] as usize..o[i + 1] as usize)
                } else {
                    let l = t.as_list::<i64>();
                    let o = l.value_offsets();
                    (struct_of(l.values())?, o[i] as usize..o[i + 1] as usize)
                };
            let (ev, et) = (
                element.column_by_name("value").map(|a| a.as_ref()),
                element.column_by_name("typed_value").map(|a| a.as_ref()),
            );
            let items = range
                .map(|j| {
                    unshred_at(ev, et, j, metadata, depth + 1)?
                        .ok_or_else(|| Error::decode("a shredded array element is missing"))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Some(variant::encode_array(&items)))
        }
        _ => Ok(Some(variant::encode_primitive(primitive_at(t, i)?))),
    }
}

fn struct_of(a: &ArrayRef) -> Result<&StructArray> {
    a.as_struct_opt()
        .ok_or_else(|| Error::invalid("a shredded array's elements are not groups"))
}

/// The value bytes of every row of a (possibly shredded) variant group
/// `struct<metadata, value?, typed_value?>`: `typed_value` merged back into `value` (null
/// where the value is missing).
pub fn unshred(array: &dyn Array) -> Result<ArrayRef> {
    let s = array
        .as_struct_opt()
        .ok_or_else(|| Error::invalid("a variant column must be a group"))?;
    let metadata = s
        .column_by_name("metadata")
        .ok_or_else(|| Error::invalid("a variant group has no metadata"))?;
    let value = s.column_by_name("value").map(|a| a.as_ref());
    let typed = s.column_by_name("typed_value").map(|a| a.as_ref());
    let mut out = BinaryBuilder::new();
    for i in 0..s.len() {
        let m = binary_at(metadata.as_ref(), i)?;
        match (s.is_valid(i), m) {
            (true, Some(m)) => {
                match unshred_at(value, typed, i, m, 0).map_err(|e| at_row(i, e))? {
                    Some(bytes) => out.append_value(bytes),
                    None => out.append_null(),
                }
            }
            _ => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, Int64Array, ListArray, StringArray};

    fn json(texts: &[Option<&str>]) -> StructArray {
        from_json_array(&StringArray::from(texts.to_vec())).expect("encode")
    }

    fn texts(array: &ArrayRef) -> Vec<Option<String>> {
        array
            .as_string::<i32>()
            .iter()
            .map(|s| s.map(str::to_owned))
            .collect()
    }

    /// The JSON of unshredded value bytes against one metadata.
    fn value_json(metadata: &[u8], values: &ArrayRef) -> Vec<Option<String>> {
        values
            .as_binary::<i32>()
            .iter()
            .map(|v| v.map(|v| variant::to_json(metadata, v).expect("decode")))
            .collect()
    }

    fn group(columns: Vec<(&str, ArrayRef)>) -> StructArray {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect();
        StructArray::new(
            Fields::from(fields),
            columns.into_iter().map(|(_, a)| a).collect(),
            None,
        )
    }

    #[test]
    fn json_round_trip_keeps_nulls() {
        let encoded = json(&[Some(r#"{"a":1,"b":[true,null]}"#), None, Some("\"x\"")]);
        assert!(encoded.is_null(1));
        let back = to_json_array(&encoded).expect("decode");
        assert_eq!(
            texts(&back),
            vec![
                Some(r#"{"a":1,"b":[true,null]}"#.to_owned()),
                None,
                Some("\"x\"".to_owned())
            ]
        );
    }

    #[test]
    fn invalid_json_names_its_row() {
        let e = from_json_array(&StringArray::from(vec!["1", "{"])).expect_err("invalid");
        assert!(e.message.starts_with("row 1: "), "{}", e.message);
        let e = from_json_array(&Int64Array::from(vec![1])).expect_err("not text");
        assert!(e.message.contains("string array"), "{}", e.message);
    }

    #[test]
    fn a_missing_value_is_refused_as_shredded() {
        let g = group(vec![
            (
                "metadata",
                Arc::new(BinaryArray::from(vec![&[1u8, 0, 0][..]])) as ArrayRef,
            ),
            ("value", Arc::new(BinaryArray::from(vec![None::<&[u8]>]))),
        ]);
        let e = to_json_array(&g).expect_err("shredded");
        assert!(e.message.contains("typed_value"), "{}", e.message);
    }

    #[test]
    fn unshreds_primitive_typed_values() {
        let empty: &[u8] = &[1, 0, 0];
        let (_, string_value) = variant::from_json("\"s\"").expect("encode");
        let g = group(vec![
            (
                "metadata",
                Arc::new(BinaryArray::from(vec![empty, empty, empty])) as ArrayRef,
            ),
            (
                "value",
                Arc::new(BinaryArray::from(vec![
                    None,
                    Some(string_value.as_slice()),
                    None,
                ])),
            ),
            (
                "typed_value",
                Arc::new(Int64Array::from(vec![Some(7), None, None])),
            ),
        ]);
        let out = unshred(&g).expect("unshred");
        assert_eq!(
            value_json(empty, &out),
            vec![Some("7".to_owned()), Some("\"s\"".to_owned()), None]
        );
    }

    #[test]
    fn unshreds_objects_merging_the_partial_value() {
        // Metadata with keys a and b; `a` is shredded as an int64, `b` stays in `value`.
        let (metadata, rest) = variant::from_json(r#"{"a":0,"b":"x"}"#).expect("encode");
        let b_only = {
            let keys = variant::dictionary(&metadata).expect("keys");
            let b = keys.iter().position(|k| *k == "b").expect("b");
            let fields = variant::object_fields(&rest).expect("fields");
            let (_, bytes) = fields.into_iter().find(|(id, _)| *id == b).expect("b");
            variant::encode_object(&mut [("b", b, bytes.to_vec())])
        };
        let a = group(vec![
            (
                "value",
                Arc::new(BinaryArray::from(vec![None::<&[u8]>])) as ArrayRef,
            ),
            ("typed_value", Arc::new(Int64Array::from(vec![5]))),
        ]);
        let typed = group(vec![("a", Arc::new(a) as ArrayRef)]);
        let g = group(vec![
            (
                "metadata",
                Arc::new(BinaryArray::from(vec![metadata.as_slice()])) as ArrayRef,
            ),
            (
                "value",
                Arc::new(BinaryArray::from(vec![b_only.as_slice()])),
            ),
            ("typed_value", Arc::new(typed)),
        ]);
        let out = unshred(&g).expect("unshred");
        assert_eq!(
            value_json(&metadata, &out),
            vec![Some(r#"{"a":5,"b":"x"}"#.to_owned())]
        );
    }

    #[test]
    fn unshreds_arrays_element_by_element() {
        let empty: &[u8] = &[1, 0, 0];
        let element = group(vec![
            (
                "value",
                Arc::new(BinaryArray::from(vec![None::<&[u8]>, None, None])) as ArrayRef,
            ),
            ("typed_value", Arc::new(Int64Array::from(vec![1, 2, 3]))),
        ]);
        let field = Arc::new(Field::new("element", element.data_type().clone(), false));
        // Row 0 holds [1, 2], row 1 [3], row 2 an empty array.
        let offsets = arrow_buffer::OffsetBuffer::new(vec![0, 2, 3, 3].into());
        let list = ListArray::new(field, offsets, Arc::new(element), None);
        let g = group(vec![
            (
                "metadata",
                Arc::new(BinaryArray::from(vec![empty, empty, empty])) as ArrayRef,
            ),
            ("typed_value", Arc::new(list)),
        ]);
        let out = unshred(&g).expect("unshred");
        assert_eq!(
            value_json(empty, &out),
            vec![
                Some("[1,2]".to_owned()),
                Some("[3]".to_owned()),
                Some("[]".to_owned())
            ]
        );
    }

    #[test]
    fn refuses_what_is_not_a_group() {
        let e = unshred(&Int64Array::from(vec![1])).expect_err("not a group");
        assert!(e.message.contains("group"), "{}", e.message);
    }
}
