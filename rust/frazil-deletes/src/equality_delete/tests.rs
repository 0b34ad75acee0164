//! Equality delete sets against the spec's example, Java's comparisons, and (proptest) a
//! linear scan with Java's equality written out by hand.

use std::sync::Arc;

use super::*;
use arrow_array::{
    ArrayRef, BinaryArray, Decimal128Array, Decimal256Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int32Array, Int64Array, LargeStringArray, NullArray, StringArray,
    StringViewArray,
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

/// Keys arriving as a table's struct chunks (the binding's `from_keys`).
#[test]
fn sets_from_struct_chunks() {
    use arrow_array::StructArray;
    use arrow_schema::{Field, Fields};
    let fields = Fields::from(vec![Field::new("id", DataType::Int64, true)]);
    let chunk = |v: Vec<i64>| -> ArrayRef {
        Arc::new(StructArray::new(
            fields.clone(),
            vec![Arc::new(Int64Array::from(v)) as ArrayRef],
            None,
        ))
    };
    let key_type = DataType::Struct(fields.clone());
    let s = EqualityDeleteSet::from_key_chunks(&key_type, &[chunk(vec![1, 2]), chunk(vec![2, 5])])
        .expect("keys");
    assert_eq!(s.len(), 3);
    let probe: ArrayRef = Arc::new(Int64Array::from(vec![1, 3, 5]));
    assert_eq!(kept(&s, &[probe]), vec![false, true, false]);
    let e = EqualityDeleteSet::from_key_chunks(&DataType::Int64, &[]).err();
    assert!(e.is_some_and(|e| e.message.contains("must be a table")));
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
            (x.is_nan() && y.is_nan()) || (x == y && x.is_sign_negative() == y.is_sign_negative())
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
