//! Kernel tests: every layout agrees with the scalar form of the same transform.

use std::sync::Arc;

use arrow_array::*;
use arrow_schema::DataType;
use frazil_values::Literal;

use super::*;

fn ints(a: &ArrayRef) -> Vec<Option<i32>> {
    a.as_any()
        .downcast_ref::<Int32Array>()
        .unwrap()
        .iter()
        .collect()
}

#[test]
fn bucket_layouts_agree() {
    let b = Transform::Bucket(16);
    let longs: ArrayRef = Arc::new(Int64Array::from(vec![Some(34), None, Some(-1)]));
    let int32: ArrayRef = Arc::new(Int32Array::from(vec![Some(34), None, Some(-1)]));
    let int8: ArrayRef = Arc::new(Int8Array::from(vec![Some(34), None, Some(-1)]));
    let expected = ints(&apply_array(&b, &longs, false).unwrap());
    assert_eq!(expected[1], None);
    assert_eq!(ints(&apply_array(&b, &int32, false).unwrap()), expected);
    assert_eq!(ints(&apply_array(&b, &int8, false).unwrap()), expected);

    let strings: ArrayRef = Arc::new(StringArray::from(vec![Some("iceberg"), None, Some("")]));
    let large: ArrayRef = Arc::new(LargeStringArray::from(vec![
        Some("iceberg"),
        None,
        Some(""),
    ]));
    let view: ArrayRef = Arc::new(StringViewArray::from(vec![Some("iceberg"), None, Some("")]));
    let full = Transform::Bucket(i32::MAX as u32);
    let expected = ints(&apply_array(&full, &strings, false).unwrap());
    assert_eq!(expected[0], Some(1210000089));
    assert_eq!(ints(&apply_array(&full, &large, false).unwrap()), expected);
    assert_eq!(ints(&apply_array(&full, &view, false).unwrap()), expected);
}

#[test]
fn bucket_spec_vectors_through_kernels() {
    let full = Transform::Bucket(i32::MAX as u32);
    let dec: ArrayRef = Arc::new(
        Decimal128Array::from(vec![1420])
            .with_precision_and_scale(9, 2)
            .unwrap(),
    );
    // Appendix B gives the raw hash; & MAX and % MAX only matter for negative hashes.
    let expected = crate::scalar::bucket_of_hash(-500754589, i32::MAX as u32);
    assert_eq!(
        ints(&apply_array(&full, &dec, false).unwrap()),
        vec![Some(expected)]
    );
    let ts: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![
        1_510_871_468_000_001_001,
    ]));
    let expected = crate::scalar::bucket_of_hash(-1207196810, i32::MAX as u32);
    assert_eq!(
        ints(&apply_array(&full, &ts, false).unwrap()),
        vec![Some(expected)]
    );
    let uuid = 0xf79c3e09_677c_4bbd_a479_3f349cb785e7u128.to_be_bytes();
    let fixed: ArrayRef =
        Arc::new(FixedSizeBinaryArray::try_from_iter(vec![uuid.to_vec()].into_iter()).unwrap());
    assert_eq!(
        ints(&apply_array(&full, &fixed, true).unwrap()),
        vec![Some(1488055340)]
    );
}

#[test]
fn truncate_layouts() {
    let t = Transform::Truncate(3);
    let s: ArrayRef = Arc::new(StringArray::from(vec![
        Some("iceberg"),
        None,
        Some("hé😀x"),
        Some(""),
    ]));
    let out = apply_array(&t, &s, false).unwrap();
    let out: Vec<_> = out
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(out, vec![Some("ice"), None, Some("hé😀"), Some("")]);
    let v: ArrayRef = Arc::new(StringViewArray::from(vec![Some("iceberg"), None]));
    assert_eq!(
        apply_array(&t, &v, false).unwrap().data_type(),
        &DataType::Utf8View
    );
    let i: ArrayRef = Arc::new(Int16Array::from(vec![Some(-1), None, Some(5)]));
    let out = apply_array(&Transform::Truncate(10), &i, false).unwrap();
    assert_eq!(ints(&out), vec![Some(-10), None, Some(0)]);
    let d: ArrayRef = Arc::new(
        Decimal128Array::from(vec![1065])
            .with_precision_and_scale(9, 2)
            .unwrap(),
    );
    let out = apply_array(&Transform::Truncate(50), &d, false).unwrap();
    assert_eq!(out.data_type(), &DataType::Decimal128(9, 2));
    assert_eq!(
        out.as_any()
            .downcast_ref::<Decimal128Array>()
            .unwrap()
            .value(0),
        1050
    );
}

#[test]
fn temporal_layouts_agree() {
    let micros = vec![-1i64, 0, 1_510_871_468_123_456, -86_400_000_001];
    let us: ArrayRef = Arc::new(TimestampMicrosecondArray::from(micros.clone()));
    let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(
        micros.iter().map(|m| m * 1000).collect::<Vec<_>>(),
    ));
    let ms: ArrayRef = Arc::new(TimestampMillisecondArray::from(
        micros
            .iter()
            .map(|m| m.div_euclid(1000))
            .collect::<Vec<_>>(),
    ));
    for t in [
        Transform::Year,
        Transform::Month,
        Transform::Day,
        Transform::Hour,
    ] {
        let a = ints(&apply_array(&t, &us, false).unwrap());
        assert_eq!(a, ints(&apply_array(&t, &ns, false).unwrap()), "{t}");
        assert_eq!(a, ints(&apply_array(&t, &ms, false).unwrap()), "{t}");
        for (m, got) in micros.iter().zip(&a) {
            let lit = t
                .apply_literal(
                    Some(&Literal::Timestamp(*m)),
                    &frazil_values::PrimitiveType::Timestamp,
                )
                .unwrap()
                .unwrap();
            let want = match lit {
                Literal::Int(v) | Literal::Date(v) => v,
                _ => unreachable!(),
            };
            assert_eq!(Some(want), *got, "{t} of {m}");
        }
    }
}

#[test]
fn errors_not_panics() {
    let f: ArrayRef = Arc::new(Float64Array::from(vec![1.0]));
    assert!(apply_array(&Transform::Bucket(4), &f, false).is_err());
    let d: ArrayRef = Arc::new(Date32Array::from(vec![1]));
    assert!(apply_array(&Transform::Hour, &d, false).is_err());
    let u: ArrayRef = Arc::new(UInt64Array::from(vec![u64::MAX]));
    assert!(apply_array(&Transform::Bucket(4), &u, false).is_err());
    let s: ArrayRef = Arc::new(TimestampSecondArray::from(vec![i64::MAX]));
    assert!(apply_array(&Transform::Day, &s, false).is_err());
    let fixed: ArrayRef =
        Arc::new(FixedSizeBinaryArray::try_from_iter(vec![vec![0u8; 16]].into_iter()).unwrap());
    assert!(apply_array(&Transform::Truncate(2), &fixed, true).is_err());
    let l: ArrayRef = Arc::new(ListArray::new_null(
        Arc::new(arrow_schema::Field::new("item", DataType::Int32, true)),
        1,
    ));
    assert!(apply_array(&Transform::Identity, &l, false).is_err());
}

#[test]
fn void_and_identity() {
    let a: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let v = apply_array(&Transform::Void, &a, false).unwrap();
    assert_eq!(v.null_count(), 2);
    assert_eq!(v.data_type(), &DataType::Int32);
    assert!(Arc::ptr_eq(
        &apply_array(&Transform::Identity, &a, false).unwrap(),
        &a
    ));
    assert_eq!(
        result_data_type(&Transform::Day, &DataType::Date32, false).unwrap(),
        DataType::Int32
    );
}
