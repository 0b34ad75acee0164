//! Manifests shaped like the issue-14 table (day-partitioned, column sizes, value, null and NaN
//! counts and lower/upper bounds on every column, string bounds on the string columns), written
//! by the crate's own encoder from Arrow columns. Shared by the tests (`#[path]`) and the
//! `stats_decode_speed` example, so the benchmark input and the tested input are one shape.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, Date32Array, Int32Array, Int64Array, StructArray};
use arrow_schema::{DataType, Field};
use frazil_manifest::avro::Codec;
use frazil_manifest::{write_manifest, WriteOptions};

/// The column types, cycled when a table has more than eight columns: the issue's
/// long, timestamp, long, string, double, int, string, date.
#[derive(Clone, Copy, Debug)]
pub enum Col {
    Long,
    Timestamp,
    String,
    Double,
    Int,
    Date,
}

pub const ISSUE_COLUMNS: [Col; 8] = [
    Col::Long,
    Col::Timestamp,
    Col::Long,
    Col::String,
    Col::Double,
    Col::Int,
    Col::String,
    Col::Date,
];

pub fn column(i: usize) -> Col {
    ISSUE_COLUMNS[i % ISSUE_COLUMNS.len()]
}

const CATEGORIES: [&str; 10] = [
    "music", "sports", "news", "movies", "games", "books", "travel", "food", "science", "weather",
];
const COUNTRIES: [&str; 12] = [
    "AT", "BE", "BR", "CA", "DE", "ES", "FR", "GB", "IT", "JP", "NL", "US",
];

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub struct Shape {
    pub format_version: u8,
    pub entries: usize,
    pub columns: usize,
    pub codec: Codec,
    /// Leave each stats map out of some entries (null maps) and some columns out of some maps.
    pub ragged: bool,
}

impl Shape {
    pub fn issue(entries: usize) -> Shape {
        Shape {
            format_version: 2,
            entries,
            columns: 8,
            codec: Codec::Deflate,
            ragged: false,
        }
    }
}

const DAY0: i32 = 19_000;

/// The schema JSON of a table of `n` columns (field ids 1..=n).
fn schema_json(n: usize) -> String {
    let fields: Vec<String> = (0..n)
        .map(|i| {
            let ty = match column(i) {
                Col::Long => "long",
                Col::Timestamp => "timestamptz",
                Col::String => "string",
                Col::Double => "double",
                Col::Int => "int",
                Col::Date => "date",
            };
            format!(
                r#"{{"id":{},"name":"c{}","required":false,"type":"{ty}"}}"#,
                i + 1,
                i + 1
            )
        })
        .collect();
    format!(
        r#"{{"type":"struct","schema-id":0,"fields":[{}]}}"#,
        fields.join(",")
    )
}

fn bounds(rng: &mut Rng, col: Col, day: i32) -> (Vec<u8>, Vec<u8>) {
    match col {
        Col::Long => {
            let lo = rng.below(1 << 41) as i64 - (1 << 40);
            let hi = lo + rng.below(1 << 20) as i64;
            (lo.to_le_bytes().to_vec(), hi.to_le_bytes().to_vec())
        }
        Col::Timestamp => {
            let base = i64::from(day) * 86_400_000_000;
            let a = base + rng.below(43_200_000_000) as i64;
            let b = a + rng.below(43_200_000_000) as i64;
            (a.to_le_bytes().to_vec(), b.to_le_bytes().to_vec())
        }
        Col::Double => {
            let a = (rng.below(1 << 30) as f64) / 1024.0 - 1e5;
            let b = a + (rng.below(1 << 20) as f64) / 8.0;
            (a.to_le_bytes().to_vec(), b.to_le_bytes().to_vec())
        }
        Col::Int => {
            let a = rng.below(1 << 20) as i32;
            let b = a + rng.below(1000) as i32;
            (a.to_le_bytes().to_vec(), b.to_le_bytes().to_vec())
        }
        Col::Date => (day.to_le_bytes().to_vec(), day.to_le_bytes().to_vec()),
        Col::String => {
            let words: &[&str] = if rng.below(2) == 0 {
                &CATEGORIES
            } else {
                &COUNTRIES
            };
            let (i, j) = (rng.below(words.len() as u64), rng.below(words.len() as u64));
            let (a, b) = (words[i as usize], words[j as usize]);
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            (a.as_bytes().to_vec(), b.as_bytes().to_vec())
        }
    }
}

/// One manifest of `shape.entries` data files for partition days `DAY0 + 3m ..= + 2`.
pub fn manifest(seed: u64, m: usize, shape: &Shape) -> Vec<u8> {
    let n = shape.entries;
    let ncol = shape.columns;
    let mut rng = Rng::new(seed ^ (m as u64) << 20);
    let long_map = || MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
    let (mut sizes, mut values, mut nulls, mut nans) =
        (long_map(), long_map(), long_map(), long_map());
    let bytes_map = || MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
    let (mut lower, mut upper) = (bytes_map(), bytes_map());
    let mut paths = StringBuilder::new();
    let mut formats = StringBuilder::new();
    let mut days = Vec::with_capacity(n);
    let mut counts = Vec::with_capacity(n);
    let mut file_sizes = Vec::with_capacity(n);
    let mut splits = ListBuilder::new(Int64Builder::new());
    for i in 0..n {
        let day = DAY0 + 3 * m as i32 + rng.below(3) as i32;
        let count = 1 + rng.below(1_000_000) as i64;
        days.push(day);
        counts.push(count);
        file_sizes.push(count * 37);
        paths.append_value(format!(
            "s3://bucket/warehouse/db/events/data/ts_day={day}/{m:05}-{i:06}-7d3a9c1e-0f4b-4e8a-9a1b-{:012x}-00001.parquet",
            rng.below(1 << 48)
        ));
        formats.append_value("PARQUET");
        splits.values().append_value(4);
        splits.append(true);
        // ragged: a map left out (null) or a column missing from this entry's maps
        let present = |rng: &mut Rng| !shape.ragged || rng.below(8) != 0;
        let (has_sizes, has_values, has_nulls, has_nans, has_lower, has_upper) = (
            present(&mut rng),
            present(&mut rng),
            present(&mut rng),
            present(&mut rng),
            present(&mut rng),
            present(&mut rng),
        );
        for c in 0..ncol {
            let id = (c + 1) as i32;
            let col = column(c);
            let here = present(&mut rng);
            if has_sizes && here {
                sizes.keys().append_value(id);
                sizes.values().append_value(rng.below(1 << 24) as i64);
            }
            if has_values && here {
                values.keys().append_value(id);
                values.values().append_value(count);
            }
            if has_nulls && here {
                nulls.keys().append_value(id);
                nulls.values().append_value(if rng.below(4) == 0 {
                    rng.below(1000) as i64
                } else {
                    0
                });
            }
            if has_nans && matches!(col, Col::Double) && here {
                nans.keys().append_value(id);
                nans.values().append_value(0);
            }
            let (lo, hi) = bounds(&mut rng, col, day);
            if has_lower && here {
                lower.keys().append_value(id);
                lower.values().append_value(lo);
            }
            if has_upper && here {
                upper.keys().append_value(id);
                upper.values().append_value(hi);
            }
        }
        sizes.append(has_sizes).unwrap();
        values.append(has_values).unwrap();
        nulls.append(has_nulls).unwrap();
        nans.append(has_nans).unwrap();
        lower.append(has_lower).unwrap();
        upper.append(has_upper).unwrap();
    }
    let partition = StructArray::from(vec![(
        Arc::new(Field::new("ts_day", DataType::Date32, true).with_metadata(
            std::collections::HashMap::from([("PARQUET:field_id".to_string(), "1000".to_string())]),
        )),
        Arc::new(Date32Array::from(days)) as ArrayRef,
    )]);
    let col =
        |name: &str, a: ArrayRef| (Arc::new(Field::new(name, a.data_type().clone(), true)), a);
    let data_file = StructArray::from(vec![
        col("content", Arc::new(Int32Array::from(vec![0; n]))),
        col("file_path", Arc::new(paths.finish())),
        col("file_format", Arc::new(formats.finish())),
        col("partition", Arc::new(partition)),
        col("record_count", Arc::new(Int64Array::from(counts))),
        col("file_size_in_bytes", Arc::new(Int64Array::from(file_sizes))),
        col("column_sizes", Arc::new(sizes.finish())),
        col("value_counts", Arc::new(values.finish())),
        col("null_value_counts", Arc::new(nulls.finish())),
        col("nan_value_counts", Arc::new(nans.finish())),
        col("lower_bounds", Arc::new(lower.finish())),
        col("upper_bounds", Arc::new(upper.finish())),
        col("split_offsets", Arc::new(splits.finish())),
        col("sort_order_id", Arc::new(Int32Array::from(vec![0; n]))),
    ]);
    let snapshot: Vec<Option<i64>> = if shape.format_version == 1 {
        vec![Some(1); n]
    } else {
        vec![None; n]
    };
    let entry = StructArray::from(vec![
        col("status", Arc::new(Int32Array::from(vec![1; n]))),
        col("snapshot_id", Arc::new(Int64Array::from(snapshot))),
        col("data_file", Arc::new(data_file)),
    ]);
    let metadata = vec![
        ("schema".to_string(), schema_json(ncol)),
        ("schema-id".to_string(), "0".to_string()),
        (
            "partition-spec".to_string(),
            r#"[{"source-id":2,"field-id":1000,"name":"ts_day","transform":"day"}]"#.to_string(),
        ),
        ("partition-spec-id".to_string(), "0".to_string()),
        (
            "format-version".to_string(),
            shape.format_version.to_string(),
        ),
        ("content".to_string(), "data".to_string()),
    ];
    let options = WriteOptions {
        format_version: shape.format_version,
        codec: shape.codec,
        metadata,
        table_location: None,
    };
    write_manifest(&[entry], &options).unwrap()
}
