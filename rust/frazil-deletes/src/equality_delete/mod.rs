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

    /// A set of the key rows of equality delete files given as a stream of struct chunks (a
    /// table of the delete columns, in `equality_ids` order) whose struct fields are `fields`.
    pub fn from_key_chunks(key_type: &DataType, chunks: &[arrow_array::ArrayRef]) -> Result<Self> {
        let DataType::Struct(fields) = key_type else {
            return Err(Error::invalid(format!(
                "equality delete keys must be a table, not a stream of {key_type}"
            )));
        };
        let types: Vec<DataType> = fields.iter().map(|f| f.data_type().clone()).collect();
        let mut set = EqualityDeleteSet::new(&types)?;
        for chunk in chunks {
            let s = chunk
                .as_struct_opt()
                .ok_or_else(|| Error::invalid("equality delete keys must be struct chunks"))?;
            let columns: Vec<&dyn Array> = s.columns().iter().map(|c| c.as_ref()).collect();
            set.insert(&columns)?;
        }
        Ok(set)
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
mod tests;
