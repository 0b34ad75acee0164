use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type};
use arrow_array::Array;

use super::*;
use crate::avro::codec::Codec;
use crate::avro::encode::{bytes, long, ContainerWriter};

const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[
  {"name":"id","type":"long","field-id":1},
  {"name":"name","type":["null","string"],"default":null,"field-id":2},
  {"name":"tags","type":{"type":"array","items":"int","element-id":5},"field-id":3},
  {"name":"m","type":["null",{"type":"array","logicalType":"map","items":{"type":"record",
     "name":"k6_v7","fields":[{"name":"key","type":"int","field-id":6},
     {"name":"value","type":["null","string"],"field-id":7}]}}],"field-id":4},
  {"name":"d","type":{"type":"fixed","name":"d9","size":3,"logicalType":"decimal",
     "precision":7,"scale":2},"field-id":8}]}"#;

/// Rows (id, name?, tags, m?, d) encoded by hand, `per_block` records per block.
fn file(rows: usize, per_block: usize, codec: Codec) -> Vec<u8> {
    let mut w = ContainerWriter::new(SCHEMA, codec, &[]);
    for i in 0..rows {
        let out = w.record_buffer();
        long(out, i as i64);
        if i % 2 == 0 {
            long(out, 1);
            bytes(out, format!("n{i}").as_bytes());
        } else {
            long(out, 0);
        }
        if i % 3 == 0 {
            long(out, 2);
            long(out, 10);
            long(out, -20);
        }
        long(out, 0);
        if i % 2 == 0 {
            long(out, 0);
        } else {
            long(out, 1);
            long(out, 1);
            long(out, i as i64);
            long(out, 0);
            long(out, 0);
        }
        out.extend_from_slice(&(-(i as i32)).to_be_bytes()[1..]);
        if (i + 1) % per_block == 0 {
            w.end_record_and_block().ok();
        } else {
            w.end_record().ok();
        }
    }
    w.finish().unwrap_or_default()
}

#[test]
fn reads_every_type_with_ids() -> Result<()> {
    let data = file(10, 4, Codec::Deflate);
    let (schema, batches) = read_data(&data, &DataReadOptions::default())?;
    assert_eq!(batches.len(), 1);
    let b = &batches[0].batch;
    assert_eq!(b.num_rows(), 10);
    assert_eq!(
        schema.field(0).metadata().get(FIELD_ID).map(String::as_str),
        Some("1")
    );
    let ids = b.column(0).as_primitive::<Int64Type>();
    assert_eq!(ids.values().to_vec(), (0..10).collect::<Vec<i64>>());
    let names = b.column(1).as_string::<i64>();
    assert_eq!(names.value(2), "n2");
    assert!(names.is_null(3));
    let tags = b.column(2).as_list::<i64>();
    assert_eq!(
        tags.value(3).as_primitive::<Int32Type>().values().to_vec(),
        vec![10, -20]
    );
    assert_eq!(tags.value(1).len(), 0);
    let m = b.column(3).as_map();
    assert!(m.is_null(0));
    assert_eq!(m.value(1).column(0).as_primitive::<Int32Type>().value(0), 1);
    assert!(m.value(1).column(1).is_null(0));
    let d = b.column(4).as_primitive::<Decimal128Type>();
    assert_eq!(d.value(7), -7);
    assert_eq!(d.precision(), 7);
    Ok(())
}

const FIELD_ID: &str = column::FIELD_ID_KEY;

#[test]
fn projects_columns_splits_and_batches() -> Result<()> {
    let data = file(10, 4, Codec::Null);
    let blocks = Container::parse(&data)?.block_headers()?;
    assert_eq!(
        blocks.iter().map(|b| b.1).collect::<Vec<_>>(),
        vec![4, 4, 2]
    );
    let options = DataReadOptions {
        columns: Some(vec![2, 0]),
        batch_rows: 3,
        ..Default::default()
    };
    let (schema, batches) = read_data(&data, &options)?;
    assert_eq!(schema.fields().len(), 2);
    assert_eq!(schema.field(0).name(), "id");
    assert_eq!(
        batches.iter().map(|b| b.first_row).collect::<Vec<_>>(),
        vec![0, 3, 6, 9]
    );
    assert_eq!(batches[3].batch.num_rows(), 1);
    // A split starting after the first block's sync marker: the later blocks.
    let second_sync = (blocks[1].0 - 16) as u64;
    let options = DataReadOptions {
        split: Some((second_sync, 1)),
        ..Default::default()
    };
    let (_, batches) = read_data(&data, &options)?;
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].first_row, 4);
    assert_eq!(batches[0].batch.num_rows(), 4);
    Ok(())
}

#[test]
fn refuses_more_records_than_the_manifest_says() {
    let data = file(10, 4, Codec::Snappy);
    let options = DataReadOptions {
        max_records: Some(9),
        ..Default::default()
    };
    let e = read_data(&data, &options).err().map(|e| e.message);
    assert!(e.is_some_and(|m| m.contains("claim 10 records")));
}

#[test]
fn truncated_and_corrupt_files_are_errors() {
    let data = file(10, 4, Codec::Zstandard);
    for cut in [10, data.len() / 2, data.len() - 1] {
        assert!(read_data(&data[..cut], &DataReadOptions::default()).is_err());
    }
    let mut bad = data.clone();
    let n = bad.len();
    bad[n - 30] ^= 0xff;
    assert!(read_data(&bad, &DataReadOptions::default()).is_err());
}

#[test]
fn written_files_read_back() -> Result<()> {
    // Every type the writer maps, nested, read back by the reader.
    let data = file(10, 4, Codec::Null);
    let (schema, batches) = read_data(&data, &DataReadOptions::default())?;
    let fields: Vec<_> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for codec in [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstandard] {
        let mut w = write::DataWriter::new(fields.clone(), codec)?;
        w.write(&batches[0].batch)?;
        let mut out = w.take_written();
        out.extend(w.finish()?);
        let (schema2, again) = read_data(&out, &DataReadOptions::default())?;
        assert_eq!(schema2, schema);
        assert_eq!(again[0].batch, batches[0].batch);
    }
    Ok(())
}
