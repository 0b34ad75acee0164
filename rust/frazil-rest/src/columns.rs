//! Typed access to the plan's columns by name, whatever width or string layout the producer
//! chose (the manifest decoder's, PyArrow's).

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, GenericListArray, MapArray, OffsetSizeTrait, StructArray};
use arrow_schema::DataType;
use frazil_values::{Error, Result};

/// An integer column (int32 or int64), or an absent one (all null).
pub enum Ints<'a> {
    Absent,
    I32(&'a arrow_array::Int32Array),
    I64(&'a arrow_array::Int64Array),
}

impl<'a> Ints<'a> {
    pub fn of(a: Option<&'a ArrayRef>, what: &str) -> Result<Ints<'a>> {
        Ok(match a {
            None => Ints::Absent,
            Some(a) => Self::of_array(a.as_ref(), what)?,
        })
    }

    pub fn of_array(a: &'a dyn Array, what: &str) -> Result<Ints<'a>> {
        Ok(match a.data_type() {
            DataType::Null => Ints::Absent,
            DataType::Int32 => Ints::I32(a.as_primitive::<Int32Type>()),
            DataType::Int64 => Ints::I64(a.as_primitive::<Int64Type>()),
            t => {
                return Err(Error::invalid(format!(
                    "{what}: expected integers, got {t}"
                )))
            }
        })
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        match self {
            Ints::Absent => None,
            Ints::I32(a) => (!a.is_null(i)).then(|| a.value(i) as i64),
            Ints::I64(a) => (!a.is_null(i)).then(|| a.value(i)),
        }
    }
}

/// A string or binary column of any offset width (or a view), or an absent one.
pub enum Bytes<'a> {
    Absent,
    Small(&'a arrow_array::GenericByteArray<arrow_array::types::GenericBinaryType<i32>>),
    Large(&'a arrow_array::GenericByteArray<arrow_array::types::GenericBinaryType<i64>>),
    SmallStr(&'a arrow_array::StringArray),
    LargeStr(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    BinView(&'a arrow_array::BinaryViewArray),
}

impl<'a> Bytes<'a> {
    pub fn of(a: Option<&'a ArrayRef>, what: &str) -> Result<Bytes<'a>> {
        let Some(a) = a else {
            return Ok(Bytes::Absent);
        };
        Ok(match a.data_type() {
            DataType::Null => Bytes::Absent,
            DataType::Binary => Bytes::Small(a.as_binary::<i32>()),
            DataType::LargeBinary => Bytes::Large(a.as_binary::<i64>()),
            DataType::Utf8 => Bytes::SmallStr(a.as_string::<i32>()),
            DataType::LargeUtf8 => Bytes::LargeStr(a.as_string::<i64>()),
            DataType::Utf8View => Bytes::View(a.as_string_view()),
            DataType::BinaryView => Bytes::BinView(a.as_binary_view()),
            t => return Err(Error::invalid(format!("{what}: expected strings, got {t}"))),
        })
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        macro_rules! at {
            ($a:expr, $v:expr) => {
                if $a.is_null(i) {
                    None
                } else {
                    Some($v)
                }
            };
        }
        match self {
            Bytes::Absent => None,
            Bytes::Small(a) => at!(a, a.value(i)),
            Bytes::Large(a) => at!(a, a.value(i)),
            Bytes::SmallStr(a) => at!(a, a.value(i).as_bytes()),
            Bytes::LargeStr(a) => at!(a, a.value(i).as_bytes()),
            Bytes::View(a) => at!(a, a.value(i).as_bytes()),
            Bytes::BinView(a) => at!(a, a.value(i)),
        }
    }

    /// The value as text (the producer wrote UTF-8 for string columns).
    #[inline]
    pub fn str(&self, i: usize) -> Option<&'a str> {
        self.get(i)
            .map(|b| std::str::from_utf8(b).unwrap_or("\u{fffd}"))
    }
}

/// A list column (of integers), by row: the value range in `values`.
pub enum Lists<'a> {
    Absent,
    Small(&'a GenericListArray<i32>, Ints<'a>),
    Large(&'a GenericListArray<i64>, Ints<'a>),
}

fn list_parts<O: OffsetSizeTrait>(l: &GenericListArray<O>) -> &ArrayRef {
    l.values()
}

impl<'a> Lists<'a> {
    pub fn of(a: Option<&'a ArrayRef>, what: &str) -> Result<Lists<'a>> {
        let Some(a) = a else {
            return Ok(Lists::Absent);
        };
        Ok(match a.data_type() {
            DataType::Null => Lists::Absent,
            DataType::List(_) => {
                let l = a.as_list::<i32>();
                Lists::Small(l, Ints::of_array(list_parts(l).as_ref(), what)?)
            }
            DataType::LargeList(_) => {
                let l = a.as_list::<i64>();
                Lists::Large(l, Ints::of_array(list_parts(l).as_ref(), what)?)
            }
            t => return Err(Error::invalid(format!("{what}: expected a list, got {t}"))),
        })
    }

    /// The row's values, or `None` for a null list.
    pub fn get(&self, i: usize) -> Option<(std::ops::Range<usize>, &Ints<'a>)> {
        match self {
            Lists::Absent => None,
            Lists::Small(l, v) => (!l.is_null(i)).then(|| {
                let o = l.value_offsets();
                (o[i] as usize..o[i + 1] as usize, v)
            }),
            Lists::Large(l, v) => (!l.is_null(i)).then(|| {
                let o = l.value_offsets();
                (o[i] as usize..o[i + 1] as usize, v)
            }),
        }
    }
}

/// A `map<int, long>` or `map<int, binary>` column.
pub struct Maps<'a> {
    pub map: Option<&'a MapArray>,
    pub keys: Ints<'a>,
    pub counts: Ints<'a>,
    pub bytes: Bytes<'a>,
}

impl<'a> Maps<'a> {
    pub fn of(a: Option<&'a ArrayRef>, what: &str) -> Result<Maps<'a>> {
        let absent = Maps {
            map: None,
            keys: Ints::Absent,
            counts: Ints::Absent,
            bytes: Bytes::Absent,
        };
        let Some(a) = a else {
            return Ok(absent);
        };
        if *a.data_type() == DataType::Null {
            return Ok(absent);
        }
        let map = a.as_map_opt().ok_or_else(|| {
            Error::invalid(format!("{what}: expected a map, got {}", a.data_type()))
        })?;
        let values = map.values();
        let (counts, bytes) = match values.data_type() {
            DataType::Int32 | DataType::Int64 => {
                (Ints::of_array(values.as_ref(), what)?, Bytes::Absent)
            }
            _ => (Ints::Absent, Bytes::of(Some(values), what)?),
        };
        Ok(Maps {
            map: Some(map),
            keys: Ints::of_array(map.keys().as_ref(), what)?,
            counts,
            bytes,
        })
    }

    pub fn get(&self, i: usize) -> Option<std::ops::Range<usize>> {
        let m = self.map?;
        if m.is_null(i) {
            return None;
        }
        let o = m.value_offsets();
        Some(o[i] as usize..o[i + 1] as usize)
    }
}

/// A column of a struct by name.
pub fn field<'a>(s: &'a StructArray, name: &str) -> Option<&'a ArrayRef> {
    s.column_by_name(name)
}
