//! `ReadOptions::stats_field_ids`: a projected decode equals the full decode with the stats
//! maps filtered afterwards, on the Java reference's manifests and on generated ones (v1 to v3,
//! many columns, null maps and missing columns), alone and with `columns` and block splitting.
#![allow(clippy::unwrap_used)]

#[path = "common/stats_table.rs"]
mod stats_table;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, MapArray, RecordBatch, StructArray};
use frazil_manifest::avro::Codec;
use frazil_manifest::manifest::COLUMN_STATS;
use frazil_manifest::{read_manifest, ReadOptions};
use proptest::prelude::*;
use stats_table::{manifest, Shape};

/// A map column as (key, value bytes) lists, longs as little-endian bytes; `keep` filters keys.
type Entries = Vec<Option<Vec<(i32, Option<Vec<u8>>)>>>;

fn entries(map: &MapArray, keep: Option<&[i32]>) -> Entries {
    let keys = map.keys().as_primitive::<Int32Type>();
    let values = map.values();
    let value = |j: usize| -> Option<Vec<u8>> {
        if values.is_null(j) {
            return None;
        }
        Some(match values.data_type() {
            arrow_schema::DataType::Int64 => values
                .as_primitive::<Int64Type>()
                .value(j)
                .to_le_bytes()
                .to_vec(),
            _ => values.as_binary::<i32>().value(j).to_vec(),
        })
    };
    let offsets = map.value_offsets();
    (0..map.len())
        .map(|i| {
            map.is_valid(i).then(|| {
                (offsets[i] as usize..offsets[i + 1] as usize)
                    .filter(|&j| keep.is_none_or(|k| k.contains(&keys.value(j))))
                    .map(|j| (keys.value(j), value(j)))
                    .collect()
            })
        })
        .collect()
}

fn data_file(batch: &RecordBatch) -> &StructArray {
    batch.column_by_name("data_file").unwrap().as_struct()
}

/// Decodes `bytes` with and without the projection and compares.
fn check(bytes: &[u8], ids: &[i32], base: &ReadOptions) {
    let full = read_manifest(bytes, base).unwrap();
    let options = ReadOptions {
        stats_field_ids: Some(Arc::from(ids)),
        table_location: None,
        ..base.clone()
    };
    let projected = read_manifest(bytes, &options).unwrap();
    assert_eq!(full.schema(), projected.schema());
    assert_eq!(full.num_rows(), projected.num_rows());
    for (name, (a, b)) in full
        .schema()
        .fields()
        .iter()
        .map(|f| f.name())
        .zip(full.columns().iter().zip(projected.columns()))
    {
        if name != "data_file" {
            assert_eq!(a, b, "{name}");
        }
    }
    let (fd, pd) = (data_file(&full), data_file(&projected));
    for (i, field) in fd.fields().iter().enumerate() {
        let (a, b) = (fd.column(i), pd.column(i));
        if COLUMN_STATS.contains(&field.name().as_str()) {
            let want = entries(a.as_map(), Some(ids));
            assert_eq!(
                entries(b.as_map(), None),
                want,
                "{} ids {ids:?}",
                field.name()
            );
            b.to_data().validate_full().unwrap();
        } else {
            assert_eq!(a, b, "{}", field.name());
        }
    }
}

fn java(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

const ID_SETS: &[&[i32]] = &[
    &[],
    &[1],
    &[2],
    &[3, 1],
    &[1, 1, 2],
    &[7, 12],
    &[-1, 0, i32::MAX, i32::MIN],
    &[
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ],
];

#[test]
fn java_manifests_project_like_filtering_after() {
    for name in [
        "v1-data.avro",
        "v2-data.avro",
        "v2-deletes.avro",
        "v3-data.avro",
        "v3-deletes.avro",
        "types-data.avro",
    ] {
        let bytes = java(name);
        let full = read_manifest(&bytes, &ReadOptions::default()).unwrap();
        // the fixtures do carry stats: the projection has something to drop
        let lower = data_file(&full).column_by_name("lower_bounds").unwrap();
        let all = entries(lower.as_map(), None);
        if name.contains("data") {
            assert!(all.iter().flatten().any(|e| e.len() > 1), "{name}");
        }
        let mut ids: Vec<i32> = all.iter().flatten().flatten().map(|(k, _)| *k).collect();
        ids.sort_unstable();
        ids.dedup();
        for set in ID_SETS.iter().copied().chain([ids.as_slice()]) {
            check(&bytes, set, &ReadOptions::default());
        }
    }
}

#[test]
fn projection_composes_with_columns_and_split_blocks() {
    let shape = Shape {
        format_version: 2,
        entries: 3000,
        columns: 12,
        codec: Codec::Null,
        ragged: true,
    };
    let bytes = manifest(7, 0, &shape);
    let some_stats = ReadOptions {
        columns: Some(vec![
            "data_file.file_path".into(),
            "data_file.lower_bounds".into(),
            "data_file.value_counts".into(),
        ]),
        ..ReadOptions::default()
    };
    check(&bytes, &[4, 7], &some_stats);
    let no_stats = ReadOptions {
        columns: Some(frazil_manifest::manifest::without_column_stats()),
        ..ReadOptions::default()
    };
    check(&bytes, &[4, 7], &no_stats);
    let split = ReadOptions {
        threads: Some(3),
        ..ReadOptions::default()
    };
    check(&bytes, &[2, 4, 11], &split);
}

#[test]
fn the_issue_table_keeps_exactly_the_filter_columns() {
    let bytes = manifest(1, 3, &Shape::issue(500));
    let options = ReadOptions {
        stats_field_ids: Some(Arc::from([4, 2].as_slice())),
        table_location: None,
        ..ReadOptions::default()
    };
    let projected = read_manifest(&bytes, &options).unwrap();
    let df = data_file(&projected);
    for name in [
        "lower_bounds",
        "upper_bounds",
        "value_counts",
        "column_sizes",
    ] {
        let map = df.column_by_name(name).unwrap().as_map();
        assert_eq!(map.keys().len(), 2 * projected.num_rows(), "{name}");
        let got = entries(map, None);
        assert!(got
            .iter()
            .all(|e| e.as_ref().unwrap().iter().map(|(k, _)| *k).eq([2, 4])));
    }
    // only the double column (5) has NaN counts
    let nans = df.column_by_name("nan_value_counts").unwrap().as_map();
    assert_eq!(nans.keys().len(), 0);
    check(&bytes, &[4, 2], &ReadOptions::default());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn generated_manifests_project_like_filtering_after(
        seed in any::<u64>(),
        version in 1u8..=3,
        columns in prop::sample::select(vec![1usize, 8, 40, 150]),
        ids in prop::collection::vec(-2i32..170, 0..24),
        ragged in any::<bool>(),
    ) {
        let shape = Shape {
            format_version: version,
            entries: 40,
            columns,
            codec: Codec::Deflate,
            ragged,
        };
        let bytes = manifest(seed, (seed % 5) as usize, &shape);
        check(&bytes, &ids, &ReadOptions::default());
    }
}
