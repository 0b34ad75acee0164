//! Round trips of plan rows through the wire form.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, StructArray};
use frazil_values::PrimitiveType;

use crate::{read_page, write_page, Layout};

fn layout() -> Layout {
    Layout {
        fields: vec![(1000, PrimitiveType::Date), (1001, PrimitiveType::String)],
        specs: HashMap::from([(0, vec![Some(0)]), (1, vec![Some(0), Some(1)])]),
    }
}

const PAGE: &str = r#"{"file-scan-tasks":[{"data-file":{"spec-id":1,"content":"data","file-path":"s3://b/a \"x\".parquet","file-format":"parquet","partition":["2024-01-02","fr"],"file-size-in-bytes":10,"record-count":3,"lower-bounds":{"keys":[1],"values":["0A0B"]},"split-offsets":[4],"first-row-id":7,"data-sequence-number":2},"delete-file-references":[0],"residual-filter":true},{"data-file":{"spec-id":0,"content":"data","file-path":"b","file-format":"avro","partition":[null],"file-size-in-bytes":1,"record-count":1},"residual-filter":{"type":"eq","term":"x","value":1}}],"delete-files":[{"spec-id":1,"content":"position-deletes","file-path":"d","file-format":"puffin","partition":["2024-01-02",null],"file-size-in-bytes":5,"record-count":1,"referenced-data-file":"s3://b/a","content-offset":4,"content-size-in-bytes":40}]}"#;

#[test]
fn a_page_survives_a_round_trip() {
    let page = read_page(PAGE.as_bytes(), &layout()).expect("read");
    assert_eq!(page.tasks.num_rows(), 2);
    assert_eq!(page.deletes.num_rows(), 1);
    let seq = page.tasks.column_by_name("sequence_number").expect("seq");
    assert_eq!(seq.as_primitive::<Int64Type>().value(0), 2);
    // write it back: residual texts map to themselves, delete rows are 0..n
    let residual = page.tasks.column_by_name("residual").expect("residual");
    let dict = residual.as_dictionary::<arrow_array::types::Int32Type>();
    let values = dict.values().as_string::<i32>();
    let mut texts: HashMap<String, String> = (0..values.len())
        .map(|i| (values.value(i).to_string(), values.value(i).to_string()))
        .collect();
    // an absent residual (null key) reads as the dictionary's first entry
    texts.insert("true".into(), "true".into());
    let fields: Vec<_> = page.tasks.schema().fields().iter().cloned().collect();
    let cols: Vec<ArrayRef> = page.tasks.columns().to_vec();
    let tasks: ArrayRef = std::sync::Arc::new(StructArray::new(fields.into(), cols, None));
    let deletes: ArrayRef = std::sync::Arc::new(StructArray::from(page.deletes.clone()));
    let out = write_page(&[tasks], &[deletes], &[0], &texts, &layout()).expect("write");
    let a: serde_json::Value = serde_json::from_str(PAGE).expect("json");
    let b: serde_json::Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(a, b);
}

#[test]
fn malformed_pages_are_parse_errors() {
    for bad in [
        "[",
        "[]",
        r#"{"file-scan-tasks":[{"data-file":{"spec-id":9}}]}"#,
        r#"{"file-scan-tasks":[{"data-file":{"spec-id":0,"content":"data","file-path":"b","file-format":"avro","partition":[],"file-size-in-bytes":1,"record-count":1}}]}"#,
        r#"{"file-scan-tasks":[{"data-file":{"spec-id":0,"content":"data","file-path":"b","file-format":"avro","partition":[1],"file-size-in-bytes":1,"record-count":1},"delete-file-references":[0]}]}"#,
    ] {
        let e = read_page(bad.as_bytes(), &layout()).err().expect(bad);
        assert_eq!(e.kind, frazil_values::ErrorKind::Parse, "{bad}: {e}");
    }
}
