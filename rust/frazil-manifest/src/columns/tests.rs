//! Key projection of maps whose writer layout is not the common one (optional values, the key
//! after the value, an extra field, long keys, blocks with byte sizes): the general path.
#![allow(clippy::unwrap_used)]

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};

use super::{KeySet, Plan, Presence, TField, TType};
use crate::avro::encode::{bytes, long};
use crate::avro::schema::Schema;

fn writer(key: &str, value: &str) -> Schema {
    Schema::parse(&format!(
        r#"{{"type":"record","name":"r","fields":[
            {{"name":"id","type":"int","field-id":50}},
            {{"name":"m","field-id":10,"type":["null",{{"type":"array","items":{{
                "type":"record","name":"kv","fields":[
                    {{"name":"value","type":["null","{value}"],"field-id":12}},
                    {{"name":"extra","type":"string","field-id":99}},
                    {{"name":"key","type":"{key}","field-id":11}}]}}}}]}}]}}"#
    ))
    .unwrap()
}

fn target(value: TType, keep: Option<&[i32]>) -> Vec<TField> {
    let map = TType::Map(
        Box::new(TField::new(11, "key", TType::Int, Presence::Required)),
        Box::new(TField::new(12, "value", value, Presence::Optional)),
    );
    let ty = match keep {
        Some(ids) => TType::MapKeys(Box::new(map), KeySet::new(ids)),
        None => map,
    };
    vec![
        TField::new(50, "id", TType::Int, Presence::Required),
        TField::new(10, "m", ty, Presence::Optional),
    ]
}

/// Records with maps of keys `0..n` (some null maps, some null values, two map blocks, the
/// second with its byte size).
fn records(long_key: bool, bytes_value: bool) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let rows = 30;
    for row in 0..rows {
        long(&mut out, row);
        if row % 7 == 3 {
            long(&mut out, 0); // null map
            continue;
        }
        long(&mut out, 1);
        let n = row % 6;
        let entry = |out: &mut Vec<u8>, k: i64| {
            if (k + row) % 4 == 0 {
                long(out, 0);
            } else {
                long(out, 1);
                if bytes_value {
                    bytes(out, &k.to_be_bytes()[..(k as usize % 8) + 1]);
                } else {
                    long(out, k * 1000 + row);
                }
            }
            bytes(out, b"x");
            long(out, if long_key { k } else { k % 1000 });
        };
        let half = n / 2;
        if half > 0 {
            long(&mut out, half);
            for k in 0..half {
                entry(&mut out, k);
            }
        }
        if n > half {
            let mut block = Vec::new();
            for k in half..n {
                entry(&mut block, k);
            }
            long(&mut out, -(n - half));
            long(&mut out, block.len() as i64);
            out.extend_from_slice(&block);
        }
        long(&mut out, 0);
    }
    (out, rows as usize)
}

fn decode(schema: &Schema, target: &[TField], data: &[u8], count: usize) -> RecordBatch {
    let plan = Plan::resolve(schema, target).unwrap();
    let mut columns = plan.columns().unwrap();
    plan.decode_into(&mut columns, data, count).unwrap();
    columns.finish(&plan.fields, Default::default()).unwrap()
}

type Rows = Vec<Option<Vec<(i32, Option<Vec<u8>>)>>>;

fn rows(batch: &RecordBatch, keep: Option<&[i32]>) -> Rows {
    let map = batch.column(1).as_map();
    let keys = map.keys().as_primitive::<Int32Type>();
    let values = map.values();
    let o = map.value_offsets();
    (0..map.len())
        .map(|i| {
            map.is_valid(i).then(|| {
                (o[i] as usize..o[i + 1] as usize)
                    .filter(|&j| keep.is_none_or(|k| k.contains(&keys.value(j))))
                    .map(|j| {
                        let v = values.is_valid(j).then(|| match values.data_type() {
                            arrow_schema::DataType::Int64 => values
                                .as_primitive::<Int64Type>()
                                .value(j)
                                .to_le_bytes()
                                .to_vec(),
                            _ => values.as_binary::<i32>().value(j).to_vec(),
                        });
                        (keys.value(j), v)
                    })
                    .collect()
            })
        })
        .collect()
}

#[test]
fn general_maps_project_like_filtering_after() {
    for (key, long_key) in [("int", false), ("long", true)] {
        for (value, ty, is_bytes) in [("long", TType::Long, false), ("bytes", TType::Binary, true)]
        {
            let schema = writer(key, value);
            let (data, count) = records(long_key, is_bytes);
            let full = decode(&schema, &target(ty.clone(), None), &data, count);
            for keep in [&[][..], &[0], &[4, 1], &[0, 1, 2, 3, 4, 5], &[9]] {
                let projected = decode(&schema, &target(ty.clone(), Some(keep)), &data, count);
                assert_eq!(projected.schema(), full.schema());
                assert_eq!(projected.column(0), full.column(0));
                assert_eq!(
                    rows(&projected, None),
                    rows(&full, Some(keep)),
                    "{key} {value}"
                );
                projected.column(1).to_data().validate_full().unwrap();
            }
            // the general path, not the fast one, was exercised
            let plan = Plan::resolve(&schema, &target(ty, Some(&[1]))).unwrap();
            assert!(format!("{:?}", plan.root).contains("MapKeep("));
        }
    }
}

#[test]
fn key_sets_match_the_ids_given() {
    let small = KeySet::new(&[5, 3, 3, 9]);
    assert_eq!(small.ids(), &[3, 5, 9]);
    let large = KeySet::new(&(0..100).rev().step_by(3).collect::<Vec<_>>());
    for k in -5..120 {
        assert_eq!(small.contains(k), [3, 5, 9].contains(&k));
        assert_eq!(
            large.contains(k),
            (0..100).contains(&k) && (99 - k) % 3 == 0
        );
    }
}
