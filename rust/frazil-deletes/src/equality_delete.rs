//! Equality deletes (spec "Equality Delete Files") applied to Arrow batches: the key columns of
//! the delete rows are hashed once into an [`EqualityDeleteSet`]; each batch of data rows is
//! then probed for its keep-mask (true = the row survives), combined with the keep-mask of its
//! position deletes.
//!
//! Equality is the Java reference's (`StructLikeSet` over `Comparators.forType`): a null in a
//! delete column matches a null in the row (the spec's `col IS NULL`); NaN equals NaN whatever
//! its payload while -0.0 and 0.0 differ (`Double.compare`); decimals compare by unscaled value
//! at the column's scale; strings, binary, fixed and uuid by their bytes. The Arrow layouts of
//! one Iceberg type agree (int32 and int64, float32 and float64, any decimal precision, the
//! three string and binary layouts, fixed-size binary), so a promoted column still matches keys
//! written before its promotion. Matching columns by field id and reading columns added later
//! as their default is the reader's projection, done before the arrays reach this module.

use std::hash::BuildHasher;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type, Float32Type,
    Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::{i256, BooleanBuffer, NullBuffer};
use arrow_schema::{DataType, TimeUnit};
use frazil_values::{Error, Result};
use hashbrown::{DefaultHashBuilder, HashSet, HashTable};

/// The Iceberg type family of a key column, from its Arrow layout. Columns compare when their
/// kinds are equal; Arrow's null type (every value null) compares with any kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Null,
    Boolean,
    /// int and long (signed integers of any width, unsigned up to 32 bits)
    Int,
    /// float and double
    Float,
    /// decimal(P, S) for any P, by its scale
    Decimal(i8),
    Date,
    Time(TimeUnit),
    Timestamp(TimeUnit),
    String,
    /// binary, fixed[L] and uuid
    Binary,
}

impl KeyKind {
    pub fn of(t: &DataType) -> Result<Self> {
        use DataType as D;
        Ok(match t {
            D::Null => KeyKind::Null,
            D::Boolean => KeyKind::Boolean,
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32 => {
                KeyKind::Int
            }
            D::Float32 | D::Float64 => KeyKind::Float,
            D::Decimal32(_, s) | D::Decimal64(_, s) | D::Decimal128(_, s) | D::Decimal256(_, s) => {
                KeyKind::Decimal(*s)
            }
            D::Date32 => KeyKind::Date,
            D::Time32(u) | D::Time64(u) => KeyKind::Time(*u),
            D::Timestamp(u, _) => KeyKind::Timestamp(*u),
            D::Utf8 | D::LargeUtf8 | D::Utf8View => KeyKind::String,
            D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => KeyKind::Binary,
            other => {
                return Err(Error::unsupported(format!(
                    "an equality delete column cannot be {other}: keys are primitive columns \
                     (nested and dictionary-encoded arrays must be flattened or decoded first)"
                )))
            }
        })
    }

    /// Whether a value fits one 64-bit word.
    fn is_word(self) -> bool {
        !matches!(
            self,
            KeyKind::Decimal(_) | KeyKind::String | KeyKind::Binary
        )
    }

    fn compatible(self, other: KeyKind) -> bool {
        self == other || self == KeyKind::Null || other == KeyKind::Null
    }
}

/// A float as the word that makes equal exactly what `Double.compare` calls equal: every NaN
/// one NaN, -0.0 apart from 0.0. A float widened to a double keeps its value.
fn float_word(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

/// How one key column's non-null values are read.
enum Values<'a> {
    /// Arrow's null type: no values.
    Null,
    Word(Box<dyn Fn(usize) -> u64 + 'a>),
    Decimal(Box<dyn Fn(usize) -> i256 + 'a>),
    Bytes(Box<dyn Fn(usize) -> &'a [u8] + 'a>),
}

/// The value at a row of a primitive array, mapped by `f`.
fn at<'a, T: ArrowPrimitiveType, R>(
    array: &'a dyn Array,
    f: impl Fn(T::Native) -> R + 'a,
) -> Box<dyn Fn(usize) -> R + 'a> {
    let a: &'a PrimitiveArray<T> = array.as_primitive::<T>();
    Box::new(move |i| f(a.value(i)))
}

fn words<'a, T: ArrowPrimitiveType>(
    array: &'a dyn Array,
    f: impl Fn(T::Native) -> u64 + 'a,
) -> Values<'a> {
    Values::Word(at::<T, u64>(array, f))
}

fn decimals<'a, T: ArrowPrimitiveType>(
    array: &'a dyn Array,
    f: impl Fn(T::Native) -> i256 + 'a,
) -> Values<'a> {
    Values::Decimal(at::<T, i256>(array, f))
}

/// One key column of a batch: its kind, which rows are null, and its values.
struct KeyColumn<'a> {
    kind: KeyKind,
    len: usize,
    nulls: Option<NullBuffer>,
    values: Values<'a>,
}

impl<'a> KeyColumn<'a> {
    fn new(array: &'a dyn Array) -> Result<Self> {
        use DataType as D;
        let kind = KeyKind::of(array.data_type())?;
        let values = match array.data_type() {
            D::Null => Values::Null,
            D::Boolean => {
                let a = array.as_boolean();
                Values::Word(Box::new(move |i| a.value(i) as u64))
            }
            D::Int8 => words::<Int8Type>(array, |v| v as i64 as u64),
            D::Int16 => words::<Int16Type>(array, |v| v as i64 as u64),
            D::Int32 => words::<Int32Type>(array, |v| v as i64 as u64),
            D::Int64 => words::<Int64Type>(array, |v| v as u64),
            D::UInt8 => words::<UInt8Type>(array, |v| v as u64),
            D::UInt16 => words::<UInt16Type>(array, |v| v as u64),
            D::UInt32 => words::<UInt32Type>(array, |v| v as u64),
            D::Float32 => words::<Float32Type>(array, |v| float_word(v as f64)),
            D::Float64 => words::<Float64Type>(array, float_word),
            D::Date32 => words::<Date32Type>(array, |v| v as i64 as u64),
            D::Time32(TimeUnit::Second) => words::<Time32SecondType>(array, |v| v as i64 as u64),
            D::Time32(_) => words::<Time32MillisecondType>(array, |v| v as i64 as u64),
            D::Time64(TimeUnit::Microsecond) => words::<Time64MicrosecondType>(array, |v| v as u64),
            D::Time64(_) => words::<Time64NanosecondType>(array, |v| v as u64),
            D::Timestamp(TimeUnit::Second, _) => words::<TimestampSecondType>(array, |v| v as u64),
            D::Timestamp(TimeUnit::Millisecond, _) => {
                words::<TimestampMillisecondType>(array, |v| v as u64)
            }
            D::Timestamp(TimeUnit::Microsecond, _) => {
                words::<TimestampMicrosecondType>(array, |v| v as u64)
            }
            D::Timestamp(TimeUnit::Nanosecond, _) => {
                words::<TimestampNanosecondType>(array, |v| v as u64)
            }
            D::Decimal32(..) => decimals::<Decimal32Type>(array, |v| i256::from_i128(v as i128)),
            D::Decimal64(..) => decimals::<Decimal64Type>(array, |v| i256::from_i128(v as i128)),
            D::Decimal128(..) => decimals::<Decimal128Type>(array, i256::from_i128),
            D::Decimal256(..) => decimals::<Decimal256Type>(array, |v| v),
            D::Utf8 => {
                let a = array.as_string::<i32>();
                Values::Bytes(Box::new(move |i| a.value(i).as_bytes()))
            }
            D::LargeUtf8 => {
                let a = array.as_string::<i64>();
                Values::Bytes(Box::new(move |i| a.value(i).as_bytes()))
            }
            D::Utf8View => {
                let a = array.as_string_view();
                Values::Bytes(Box::new(move |i| a.value(i).as_bytes()))
            }
            D::Binary => {
                let a = array.as_binary::<i32>();
                Values::Bytes(Box::new(move |i| a.value(i)))
            }
            D::LargeBinary => {
                let a = array.as_binary::<i64>();
                Values::Bytes(Box::new(move |i| a.value(i)))
            }
            D::BinaryView => {
                let a = array.as_binary_view();
                Values::Bytes(Box::new(move |i| a.value(i)))
            }
            D::FixedSizeBinary(_) => {
                let a = array.as_fixed_size_binary();
                Values::Bytes(Box::new(move |i| a.value(i)))
            }
            // KeyKind::of refused every other type.
            other => return Err(Error::unsupported(format!("key column of type {other}"))),
        };
        Ok(KeyColumn {
            kind,
            len: array.len(),
            nulls: array.logical_nulls(),
            values,
        })
    }

    fn is_null(&self, i: usize) -> bool {
        matches!(self.values, Values::Null) || self.nulls.as_ref().is_some_and(|n| n.is_null(i))
    }

    /// The hash of the value at `i` (null or not): equal values (as [`KeyColumn::encode`]
    /// writes them) hash equally, whatever the column's layout.
    fn hash(&self, i: usize, hasher: &DefaultHashBuilder) -> u64 {
        if self.is_null(i) {
            return NULL_HASH;
        }
        match &self.values {
            Values::Null => NULL_HASH,
            Values::Word(f) => hasher.hash_one(f(i)),
            Values::Decimal(f) => hasher.hash_one(f(i).to_le_bytes()),
            Values::Bytes(f) => hasher.hash_one(f(i)),
        }
    }

    /// The non-null value at `i` as a word (word kinds only).
    fn word(&self, i: usize) -> u64 {
        match &self.values {
            Values::Word(f) => f(i),
            _ => 0,
        }
    }

    /// Appends the value at `i`, tagged null or not; variable-width values carry their length
    /// so that a multi-column key encodes to bytes unambiguously.
    fn encode(&self, i: usize, out: &mut Vec<u8>) {
        if self.is_null(i) {
            out.push(0);
            return;
        }
        out.push(1);
        match &self.values {
            Values::Null => {}
            Values::Word(f) => out.extend_from_slice(&f(i).to_le_bytes()),
            Values::Decimal(f) => out.extend_from_slice(&f(i).to_le_bytes()),
            Values::Bytes(f) => {
                let b = f(i);
                out.extend_from_slice(&(b.len() as u64).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

/// The distinct keys of the delete rows.
enum Keys {
    /// One column whose values fit a word (booleans, ints, floats, dates, times, timestamps).
    Word { values: HashSet<u64>, null: bool },
    /// Any other key, encoded to bytes.
    Rows(RowKeys),
}

/// The hash of a null key value (any fixed word; values hash through the set's hasher).
const NULL_HASH: u64 = 0x9e37_79b9_7f4a_7c15;

/// Keys encoded to bytes (see [`KeyColumn::encode`]) in one arena, the table holding each
/// key's (hash, start, length). A row's hash combines its columns' value hashes, so a probe
/// hashes the values in place and encodes the row only when the table holds that hash (most
/// data rows are not deleted and are never encoded).
#[derive(Default)]
struct RowKeys {
    table: HashTable<(u64, usize, usize)>,
    arena: Vec<u8>,
    hasher: DefaultHashBuilder,
}

impl RowKeys {
    /// The hash of row `i` of `columns`.
    fn hash(&self, columns: &[KeyColumn<'_>], i: usize) -> u64 {
        columns.iter().fold(0u64, |h, c| {
            (h.rotate_left(26) ^ c.hash(i, &self.hasher)).wrapping_mul(0x2545_f491_4f6c_dd1d)
        })
    }

    /// Encodes row `i` of `columns` into `row` (cleared first).
    fn encode(columns: &[KeyColumn<'_>], i: usize, row: &mut Vec<u8>) {
        row.clear();
        for c in columns {
            c.encode(i, row);
        }
    }

    /// Whether row `i` of `columns` is a key; `row` is scratch space.
    fn contains(&self, columns: &[KeyColumn<'_>], i: usize, row: &mut Vec<u8>) -> bool {
        let hash = self.hash(columns, i);
        let mut encoded = false;
        self.table
            .find(hash, |&(h, s, l)| {
                if h != hash {
                    return false;
                }
                if !encoded {
                    Self::encode(columns, i, row);
                    encoded = true;
                }
                self.arena[s..s + l] == row[..]
            })
            .is_some()
    }

    fn insert(&mut self, columns: &[KeyColumn<'_>], i: usize, row: &mut Vec<u8>) {
        if !self.contains(columns, i, row) {
            let hash = self.hash(columns, i);
            Self::encode(columns, i, row);
            let entry = (hash, self.arena.len(), row.len());
            self.table.insert_unique(hash, entry, |e| e.0);
            self.arena.extend_from_slice(row);
        }
    }
}

/// The keys of one or more equality delete files that share their equality field ids, hashed
/// for probing batches of data rows.
pub struct EqualityDeleteSet {
    kinds: Vec<KeyKind>,
    keys: Keys,
}

fn key_columns<'a>(columns: &[&'a dyn Array], what: &str) -> Result<Vec<KeyColumn<'a>>> {
    let Some(first) = columns.first() else {
        return Err(Error::invalid(format!(
            "{what}: an equality key has no columns"
        )));
    };
    if let Some(c) = columns.iter().find(|c| c.len() != first.len()) {
        return Err(Error::invalid(format!(
            "{what}: key columns of {} and {} rows",
            first.len(),
            c.len()
        )));
    }
    columns.iter().map(|c| KeyColumn::new(*c)).collect()
}

impl EqualityDeleteSet {
    /// An empty set for keys of these Arrow types (the delete columns, in `equality_ids`
    /// order).
    pub fn new(types: &[DataType]) -> Result<Self> {
        if types.is_empty() {
            return Err(Error::invalid("an equality key has no columns"));
        }
        let kinds = types.iter().map(KeyKind::of).collect::<Result<Vec<_>>>()?;
        let keys = if kinds.len() == 1 && kinds[0].is_word() {
            Keys::Word {
                values: HashSet::new(),
                null: false,
            }
        } else {
            Keys::Rows(RowKeys::default())
        };
        Ok(EqualityDeleteSet { kinds, keys })
    }

    /// The number of distinct keys.
    pub fn len(&self) -> usize {
        match &self.keys {
            Keys::Word { values, null } => values.len() + *null as usize,
            Keys::Rows(rows) => rows.table.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check_kinds(&mut self, columns: &[KeyColumn<'_>], what: &str) -> Result<()> {
        if columns.len() != self.kinds.len() {
            return Err(Error::invalid(format!(
                "{what}: {} key columns, but the equality key has {}",
                columns.len(),
                self.kinds.len()
            )));
        }
        for (i, (c, kind)) in columns.iter().zip(self.kinds.iter_mut()).enumerate() {
            if !c.kind.compatible(*kind) {
                return Err(Error::invalid(format!(
                    "{what}: key column {i} is {:?}, but the equality key's is {:?}",
                    c.kind, kind
                )));
            }
            // A column of nulls first, values later: the set takes the values' kind.
            if *kind == KeyKind::Null && c.kind != KeyKind::Null {
                if matches!(self.keys, Keys::Word { .. }) && !c.kind.is_word() {
                    return Err(Error::invalid(format!(
                        "{what}: key column {i} is {:?} after a column of nulls",
                        c.kind
                    )));
                }
                *kind = c.kind;
            }
        }
        Ok(())
    }

    /// Adds the keys of delete rows (one array per delete column, equal lengths).
    pub fn insert(&mut self, columns: &[&dyn Array]) -> Result<()> {
        let columns = key_columns(columns, "equality delete rows")?;
        self.check_kinds(&columns, "equality delete rows")?;
        let n = columns[0].len;
        match &mut self.keys {
            Keys::Word { values, null } => {
                let c = &columns[0];
                values.reserve(n);
                for i in 0..n {
                    if c.is_null(i) {
                        *null = true;
                    } else {
                        values.insert(c.word(i));
                    }
                }
            }
            Keys::Rows(rows) => {
                let mut row = Vec::new();
                rows.table.reserve(n, |e| e.0);
                for i in 0..n {
                    rows.insert(&columns, i, &mut row);
                }
            }
        }
        Ok(())
    }

    /// The keep-mask of a batch of data rows (one array per delete column, in the set's
    /// order): false where the row's key is in the set, and false wherever `keep` (the
    /// batch's position-delete keep-mask) is already false; those rows are not probed.
    pub fn keep_mask(
        &self,
        columns: &[&dyn Array],
        keep: Option<&BooleanBuffer>,
    ) -> Result<BooleanBuffer> {
        let columns = key_columns(columns, "data rows")?;
        if columns.len() != self.kinds.len() {
            return Err(Error::invalid(format!(
                "data rows: {} key columns, but the equality key has {}",
                columns.len(),
                self.kinds.len()
            )));
        }
        for (i, (c, kind)) in columns.iter().zip(&self.kinds).enumerate() {
            if !c.kind.compatible(*kind) {
                return Err(Error::invalid(format!(
                    "data rows: key column {i} is {:?}, but the equality delete key's is {kind:?}",
                    c.kind
                )));
            }
        }
        let n = columns[0].len;
        if let Some(k) = keep {
            if k.len() != n {
                return Err(Error::invalid(format!(
                    "a keep-mask of {} rows for a batch of {n}",
                    k.len()
                )));
            }
        }
        let live = |i: usize| keep.is_none_or(|k| k.value(i));
        Ok(match &self.keys {
            Keys::Word { values, null } => {
                let c = &columns[0];
                // A word probe on a column that is not a word kind (possible only for a set of
                // nulls) can only ever match its nulls.
                let words = matches!(c.values, Values::Word(_));
                BooleanBuffer::collect_bool(n, |i| {
                    if !live(i) {
                        return false;
                    }
                    if c.is_null(i) {
                        !*null
                    } else {
                        !(words && values.contains(&c.word(i)))
                    }
                })
            }
            Keys::Rows(rows) => {
                let mut row = Vec::new();
                BooleanBuffer::collect_bool(n, |i| {
                    if !live(i) {
                        return false;
                    }
                    !rows.contains(&columns, i, &mut row)
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use arrow_array::{
        ArrayRef, BinaryArray, Decimal128Array, Decimal256Array, FixedSizeBinaryArray,
        Float32Array, Float64Array, Int32Array, Int64Array, LargeStringArray, NullArray,
        StringArray, StringViewArray,
    };
    use proptest::prelude::*;

    fn set(columns: &[ArrayRef]) -> EqualityDeleteSet {
        let types: Vec<DataType> = columns.iter().map(|c| c.data_type().clone()).collect();
        let mut s = EqualityDeleteSet::new(&types).expect("key types");
        let refs: Vec<&dyn Array> = columns.iter().map(|c| c.as_ref()).collect();
        s.insert(&refs).expect("insert");
        s
    }

    fn kept(s: &EqualityDeleteSet, columns: &[ArrayRef]) -> Vec<bool> {
        let refs: Vec<&dyn Array> = columns.iter().map(|c| c.as_ref()).collect();
        s.keep_mask(&refs, None).expect("probe").iter().collect()
    }

    /// The spec's example table (id, category): `id = 3`, then `id = 4 AND category IS NULL`.
    #[test]
    fn the_spec_example() {
        let id: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
        let category: ArrayRef = Arc::new(StringArray::from(vec![
            Some("marsupial"),
            Some("toy"),
            None,
            None,
        ]));
        let by_id = set(&[Arc::new(Int32Array::from(vec![3]))]);
        assert_eq!(
            kept(&by_id, std::slice::from_ref(&id)),
            [true, true, false, true]
        );
        let both = set(&[
            Arc::new(Int32Array::from(vec![4])),
            Arc::new(StringArray::from(vec![None::<&str>])),
        ]);
        assert_eq!(kept(&both, &[id, category]), [true, true, true, false]);
    }

    #[test]
    fn nulls_match_nulls_only() {
        let s = set(&[Arc::new(Int64Array::from(vec![None, Some(0)]))]);
        let rows: ArrayRef = Arc::new(Int64Array::from(vec![Some(0), None, Some(1)]));
        assert_eq!(kept(&s, &[rows]), [false, false, true]);
        let s = set(&[Arc::new(Int64Array::from(vec![Some(0)]))]);
        let rows: ArrayRef = Arc::new(Int64Array::from(vec![Some(0), None]));
        assert_eq!(kept(&s, std::slice::from_ref(&rows)), [false, true]);
        // a column added after the delete file was written reads as nulls of Arrow's null type
        let s = set(&[Arc::new(NullArray::new(1))]);
        assert_eq!(kept(&s, &[rows]), [true, false]);
        assert_eq!(s.len(), 1);
    }

    /// Java's `Double.compare`: NaN (any payload) equals NaN; -0.0 and 0.0 differ.
    #[test]
    fn floats_compare_as_java_does() {
        let other_nan = f64::from_bits(0x7FF8_0000_0000_0001);
        let s = set(&[Arc::new(Float64Array::from(vec![f64::NAN, -0.0, 1.5]))]);
        let rows: ArrayRef = Arc::new(Float64Array::from(vec![other_nan, 0.0, -0.0, 1.5, 2.0]));
        assert_eq!(kept(&s, &[rows]), [false, true, false, false, true]);
        // a float column promoted to double still matches its keys
        let s = set(&[Arc::new(Float32Array::from(vec![f32::NAN, 0.1, -0.0]))]);
        let rows: ArrayRef = Arc::new(Float64Array::from(vec![f64::NAN, 0.1f32 as f64, 0.1, 0.0]));
        assert_eq!(kept(&s, &[rows]), [false, false, true, true]);
    }

    #[test]
    fn layouts_of_one_type_agree() {
        // int -> long
        let s = set(&[Arc::new(Int32Array::from(vec![-7, 9]))]);
        assert_eq!(
            kept(&s, &[Arc::new(Int64Array::from(vec![-7, 7, 9]))]),
            [false, true, false]
        );
        // strings of the three layouts
        let s = set(&[Arc::new(StringArray::from(vec!["a", "é"]))]);
        let large: ArrayRef = Arc::new(LargeStringArray::from(vec!["é", "b"]));
        let view: ArrayRef = Arc::new(StringViewArray::from(vec!["a", "a longer string view"]));
        assert_eq!(kept(&s, &[large]), [false, true]);
        assert_eq!(kept(&s, &[view]), [false, true]);
        // decimal(5, 2) -> decimal(10, 2), and the 256-bit layout
        let dec = |p: u8, v: Vec<i128>| -> ArrayRef {
            Arc::new(
                Decimal128Array::from(v)
                    .with_precision_and_scale(p, 2)
                    .expect("valid"),
            )
        };
        let s = set(&[dec(5, vec![125, -1])]);
        assert_eq!(kept(&s, &[dec(10, vec![-1, 1, 125])]), [false, true, false]);
        let wide: ArrayRef = Arc::new(
            Decimal256Array::from(vec![i256::from_i128(125), i256::from_i128(126)])
                .with_precision_and_scale(40, 2)
                .expect("valid"),
        );
        assert_eq!(kept(&s, &[wide]), [false, true]);
        // fixed (uuid) and binary keys are bytes
        let fixed: ArrayRef = Arc::new(
            FixedSizeBinaryArray::try_from_iter(vec![[1u8, 2], [3, 4]].into_iter()).expect("valid"),
        );
        let s = set(&[fixed]);
        let binary: ArrayRef = Arc::new(BinaryArray::from(vec![&[3u8, 4][..], &[1, 2, 0]]));
        assert_eq!(kept(&s, &[binary]), [false, true]);
    }

    #[test]
    fn multi_column_keys_are_unambiguous() {
        // ("ab", "c") must not match ("a", "bc")
        let s = set(&[
            Arc::new(StringArray::from(vec!["ab"])),
            Arc::new(StringArray::from(vec!["c"])),
        ]);
        let rows = [
            Arc::new(StringArray::from(vec!["a", "ab"])) as ArrayRef,
            Arc::new(StringArray::from(vec!["bc", "c"])) as ArrayRef,
        ];
        assert_eq!(kept(&s, &rows), [true, false]);
    }

    #[test]
    fn keep_masks_combine_and_skip_deleted_rows() {
        let s = set(&[Arc::new(Int64Array::from(vec![1, 2]))]);
        let rows = Int64Array::from(vec![0, 1, 2, 3]);
        let keep = BooleanBuffer::from(vec![true, true, false, false]);
        let mask = s.keep_mask(&[&rows], Some(&keep)).expect("probe");
        assert_eq!(mask.iter().collect::<Vec<_>>(), [true, false, false, false]);
        let short = BooleanBuffer::from(vec![true]);
        assert!(s.keep_mask(&[&rows], Some(&short)).is_err());
    }

    #[test]
    fn mismatches_are_errors() {
        let s = set(&[Arc::new(Int64Array::from(vec![1]))]);
        let strings = StringArray::from(vec!["1"]);
        let e = s.keep_mask(&[&strings], None).expect_err("kind");
        assert!(e.message.contains("String"), "{}", e.message);
        let ints = Int64Array::from(vec![1]);
        assert!(s.keep_mask(&[&ints, &ints], None).is_err());
        assert!(s.keep_mask(&[], None).is_err());
        let two = set(&[
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(Int64Array::from(vec![1])),
        ]);
        let longer = Int64Array::from(vec![1, 2]);
        assert!(two.keep_mask(&[&ints, &longer], None).is_err());
        assert!(EqualityDeleteSet::new(&[]).is_err());
        let nested = DataType::List(Arc::new(arrow_schema::Field::new(
            "e",
            DataType::Int32,
            true,
        )));
        assert!(EqualityDeleteSet::new(&[nested]).is_err());
    }

    // ---- property tests against an independent oracle: a linear scan over the delete rows
    // with Java's equality written out per value (nulls equal, NaN equal, signed zeros apart).

    #[derive(Debug, Clone, PartialEq)]
    enum V {
        Int(i64),
        Float(f64),
        Str(String),
    }

    fn same(a: &Option<V>, b: &Option<V>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(V::Int(x)), Some(V::Int(y))) => x == y,
            (Some(V::Float(x)), Some(V::Float(y))) => {
                (x.is_nan() && y.is_nan())
                    || (x == y && x.is_sign_negative() == y.is_sign_negative())
            }
            (Some(V::Str(x)), Some(V::Str(y))) => x == y,
            _ => false,
        }
    }

    #[derive(Debug, Clone, Copy)]
    enum Col {
        Int,
        Float,
        Str,
    }

    fn value(col: Col) -> BoxedStrategy<Option<V>> {
        let v = match col {
            Col::Int => (-3i64..4).prop_map(V::Int).boxed(),
            Col::Float => prop_oneof![
                Just(0.0),
                Just(-0.0),
                Just(1.5),
                Just(f64::NAN),
                Just(f64::from_bits(0x7FF8_0000_0000_0001)),
                Just(-f64::NAN),
                Just(f64::INFINITY),
            ]
            .prop_map(V::Float)
            .boxed(),
            Col::Str => prop_oneof![Just(""), Just("a"), Just("ab"), Just("b")]
                .prop_map(|s| V::Str(s.to_string()))
                .boxed(),
        };
        prop::option::weighted(0.8, v).boxed()
    }

    /// The values a column holds, by `f` (None where the value is null).
    fn pick<'a, T>(values: &'a [Option<V>], f: impl Fn(&'a V) -> Option<T>) -> Vec<Option<T>> {
        values.iter().map(|v| v.as_ref().and_then(&f)).collect()
    }

    /// An Arrow column of these values, in one of the layouts of its type (`wide` picks
    /// long/double/large_utf8 over int/float/utf8).
    fn column(col: Col, values: &[Option<V>], wide: bool) -> ArrayRef {
        let ints = || pick(values, |v| if let V::Int(x) = v { Some(*x) } else { None });
        let floats = || {
            pick(
                values,
                |v| if let V::Float(x) = v { Some(*x) } else { None },
            )
        };
        let strs = pick(values, |v| {
            if let V::Str(x) = v {
                Some(x.as_str())
            } else {
                None
            }
        });
        match (col, wide) {
            (Col::Int, true) => Arc::new(Int64Array::from(ints())),
            (Col::Int, false) => Arc::new(Int32Array::from_iter(
                ints().into_iter().map(|x| x.map(|x| x as i32)),
            )),
            (Col::Float, true) => Arc::new(Float64Array::from(floats())),
            (Col::Float, false) => Arc::new(Float32Array::from_iter(
                floats().into_iter().map(|x| x.map(|x| x as f32)),
            )),
            (Col::Str, true) => Arc::new(LargeStringArray::from(strs)),
            (Col::Str, false) => Arc::new(StringArray::from(strs)),
        }
    }

    type Case = (
        Vec<Col>,
        Vec<Vec<Option<V>>>,
        Vec<Vec<Option<V>>>,
        Vec<bool>,
    );

    fn case() -> impl Strategy<Value = Case> {
        let col = prop_oneof![Just(Col::Int), Just(Col::Float), Just(Col::Str)];
        prop::collection::vec(col, 1..4).prop_flat_map(|cols| {
            let row = cols.iter().map(|c| value(*c)).collect::<Vec<_>>();
            let n = cols.len();
            (
                Just(cols),
                prop::collection::vec(row.clone(), 0..40),
                prop::collection::vec(row, 0..60),
                prop::collection::vec(any::<bool>(), n),
            )
        })
    }

    fn transpose(rows: &[Vec<Option<V>>], n: usize) -> Vec<Vec<Option<V>>> {
        (0..n)
            .map(|j| rows.iter().map(|r| r[j].clone()).collect())
            .collect()
    }

    proptest! {
        #[test]
        fn keep_mask_matches_a_linear_scan((cols, deletes, rows, wide) in case()) {
            let n = cols.len();
            let (dcols, rcols) = (transpose(&deletes, n), transpose(&rows, n));
            // delete keys in the narrow layouts where `wide` says so, data rows in the wide
            // ones: a promoted column still matches
            let dk: Vec<ArrayRef> =
                (0..n).map(|j| column(cols[j], &dcols[j], !wide[j])).collect();
            let rk: Vec<ArrayRef> = (0..n).map(|j| column(cols[j], &rcols[j], true)).collect();
            // float32 keys round their values: the oracle sees what the arrays hold
            let held = |a: &ArrayRef, col: Col, i: usize| -> Option<V> {
                if a.is_null(i) {
                    return None;
                }
                Some(match col {
                    Col::Int => V::Int(match a.data_type() {
                        DataType::Int32 => a.as_primitive::<Int32Type>().value(i) as i64,
                        _ => a.as_primitive::<Int64Type>().value(i),
                    }),
                    Col::Float => V::Float(match a.data_type() {
                        DataType::Float32 => a.as_primitive::<Float32Type>().value(i) as f64,
                        _ => a.as_primitive::<Float64Type>().value(i),
                    }),
                    Col::Str => V::Str(match a.data_type() {
                        DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
                        _ => a.as_string::<i64>().value(i).to_string(),
                    }),
                })
            };
            let expected: Vec<bool> = (0..rows.len())
                .map(|i| {
                    !(0..deletes.len()).any(|d| {
                        (0..n).all(|j| same(&held(&rk[j], cols[j], i), &held(&dk[j], cols[j], d)))
                    })
                })
                .collect();
            // delete rows inserted in two chunks, as two delete files
            let types: Vec<DataType> = dk.iter().map(|c| c.data_type().clone()).collect();
            let mut s = EqualityDeleteSet::new(&types).expect("types");
            let half = deletes.len() / 2;
            for (off, len) in [(0, half), (half, deletes.len() - half)] {
                let chunk: Vec<ArrayRef> = dk.iter().map(|c| c.slice(off, len)).collect();
                let refs: Vec<&dyn Array> = chunk.iter().map(|c| c.as_ref()).collect();
                s.insert(&refs).expect("insert");
            }
            prop_assert!(s.len() <= deletes.len());
            let refs: Vec<&dyn Array> = rk.iter().map(|c| c.as_ref()).collect();
            let got: Vec<bool> = s.keep_mask(&refs, None).expect("probe").iter().collect();
            prop_assert_eq!(got, expected);
        }
    }
}
