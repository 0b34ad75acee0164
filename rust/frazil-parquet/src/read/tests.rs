use super::*;

#[test]
fn footer_length_refuses_short_and_foreign_tails() {
    assert!(footer_length(b"PAR1").is_err());
    assert!(footer_length(b"\0\0\0\0XXXX").is_err());
    let e = footer_length(b"\x10\0\0\0PARE").unwrap_err();
    assert!(e.message.contains("encrypted"));
    assert_eq!(footer_length(b"\x10\0\0\0PAR1").unwrap(), 24);
}

#[test]
fn garbage_footer_is_an_error_not_a_panic() {
    let mut tail = vec![0xAB; 40];
    tail.extend_from_slice(&40u32.to_le_bytes());
    tail.extend_from_slice(MAGIC);
    assert!(Footer::parse(&tail, 48, None).is_err());
    // a footer longer than the bytes given
    let mut tail = vec![0u8; 4];
    tail.extend_from_slice(&1000u32.to_le_bytes());
    tail.extend_from_slice(MAGIC);
    assert!(Footer::parse(&tail, 12, None).is_err());
}

#[test]
fn ranges_serve_only_what_was_read() {
    let r = Ranges::new(100, vec![(10, Bytes::from_static(b"abcdef"))]);
    assert_eq!(&r.get_bytes(11, 3).unwrap()[..], b"bcd");
    assert!(r.get_bytes(14, 3).is_err());
    assert!(r.get_bytes(0, 1).is_err());
    assert!(r.get_read(50).is_err());
}

/// A file of `n` rows (a nullable long, a string), small pages, as (bytes, footer).
fn small_file(n: i64) -> (Bytes, Footer) {
    use arrow_array::{Int64Array, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    let ids = Int64Array::from_iter((0..n).map(|i| (i % 7 != 3).then_some(i)));
    let names = StringArray::from_iter_values((0..n).map(|i| format!("name-{}", i % 13)));
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("name", Arc::new(names) as ArrayRef),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let len = out.len() as u64;
    let footer = Footer::parse(&out, len, None).unwrap();
    (Bytes::from(out), footer)
}

#[test]
fn keep_decodes_exactly_the_kept_rows() {
    let n = 5000;
    let (bytes, footer) = small_file(n);
    let ranges = Ranges::new(bytes.len() as u64, vec![(0, bytes)]);
    let all = footer.decode(0, &[0, 1], &ranges, 1024, 2, None).unwrap();
    let all = arrow_select::concat::concat_batches(&all[0].schema(), &all).unwrap();
    // scattered deletes (the decoder filters), long runs (it skips) and the extremes
    let masks: Vec<Vec<bool>> = vec![
        (0..n).map(|i| i % 19 != 5).collect(),
        (0..n).map(|i| !(1000..3500).contains(&i)).collect(),
        (0..n).map(|i| i >= 4990).collect(),
        vec![true; n as usize],
        vec![false; n as usize],
    ];
    for (k, mask) in masks.into_iter().enumerate() {
        let keep = BooleanArray::from(mask);
        for threads in [1, 2] {
            let got = footer
                .decode(0, &[0, 1], &ranges, 700, threads, Some(&keep))
                .unwrap();
            assert!(got.iter().all(|b| b.num_rows() <= 700 && b.num_rows() > 0));
            let want = arrow_select::filter::filter_record_batch(&all, &keep).unwrap();
            let got = arrow_select::concat::concat_batches(&all.schema(), &got).unwrap();
            assert_eq!(got, want, "mask {k}, {threads} threads");
            // no column: only the row count
            let rows: usize = footer
                .decode(0, &[], &ranges, 700, threads, Some(&keep))
                .unwrap()
                .iter()
                .map(|b| b.num_rows())
                .sum();
            assert_eq!(rows, keep.true_count());
        }
    }
    // the string column decodes through its dictionary under a selection of 1/32 to 1/2 of
    // the rows (the second mask above), the long column never does
    assert!(footer.as_dictionary(0, 1).is_some());
    assert!(footer.as_dictionary(0, 0).is_none());
    let short = BooleanArray::from(vec![true; 10]);
    assert!(footer
        .decode(0, &[0], &ranges, 700, 1, Some(&short))
        .is_err());
}

#[test]
fn late_filter_keeps_what_the_filter_keeps_on_every_walk() {
    use crate::late::{Late, Walk};
    use frazil_scan::expr::{Expr, Schema};
    use frazil_scan::RowFilter;
    let n = 5000;
    let (bytes, footer) = small_file(n);
    let ranges = Ranges::new(bytes.len() as u64, vec![(0, bytes)]);
    let all = footer
        .decode(0, &[0, 1], &ranges, n as usize, 1, None)
        .unwrap();
    let all = arrow_select::concat::concat_batches(&all[0].schema(), &all).unwrap();
    let schema = Schema::from_json(
        r#"{"type":"struct","fields":[
        {"id":1,"name":"id","required":false,"type":"long"},
        {"id":2,"name":"name","required":true,"type":"string"}]}"#,
    )
    .unwrap();
    let pred = |op: &str, id: i32, value: &str| {
        format!(r#"{{"type":"{op}","left":{{"type":"reference","id":{id}}},"right":{value}}}"#)
    };
    let filters = [
        // scattered rows (a mask), one long run, none, every non-null row
        pred("eq", 2, r#""name-4""#),
        pred("lt", 1, "1200"),
        pred("gt", 1, "99999"),
        format!(r#"{{"type":"not","child":{}}}"#, pred("eq", 1, "-1")),
        format!(
            r#"{{"type":"and","left":{},"right":{}}}"#,
            pred("gt-eq", 1, "2000"),
            pred("not-eq", 2, r#""name-1""#)
        ),
    ];
    let keeps = [
        None,
        Some(BooleanArray::from(
            (0..n).map(|i| i % 11 != 2).collect::<Vec<_>>(),
        )),
    ];
    for json in &filters {
        let expr = Expr::from_json_str(json, &schema).unwrap();
        let filter = RowFilter::new(&expr, &schema).unwrap();
        // the filter's columns, by field id: id is column 0, name column 1
        let inputs: Vec<usize> = filter
            .field_ids()
            .iter()
            .map(|id| (*id - 1) as usize)
            .collect();
        for keep in &keeps {
            let base = match keep {
                Some(k) => arrow_select::filter::filter_record_batch(&all, k).unwrap(),
                None => all.clone(),
            };
            let cols: Vec<ArrayRef> = inputs.iter().map(|&c| base.column(c).clone()).collect();
            let mask = BooleanArray::new(filter.eval(&cols, base.num_rows()).unwrap(), None);
            let want = arrow_select::filter::filter_record_batch(&base, &mask).unwrap();
            for walk in [Walk::Auto, Walk::Mask, Walk::Runs] {
                for threads in [1, 2] {
                    let late = Late {
                        filter: &filter,
                        inputs: &inputs,
                    };
                    let kept = footer
                        .filter_rows(0, &[0, 1], &ranges, threads, keep.as_ref(), &late)
                        .unwrap();
                    assert_eq!(kept.rows(), want.num_rows(), "{json}");
                    let got = footer
                        .decode_kept(&kept, &ranges, 700, threads, walk)
                        .unwrap();
                    assert!(got.iter().all(|b| b.num_rows() <= 700 && b.num_rows() > 0));
                    let got = arrow_select::concat::concat_batches(&all.schema(), &got).unwrap();
                    assert_eq!(got, want, "{json}, {walk:?}, {threads} threads");
                }
            }
        }
    }
    // the filter's columns must be read
    let expr = Expr::from_json_str(&filters[0], &schema).unwrap();
    let filter = RowFilter::new(&expr, &schema).unwrap();
    let late = Late {
        filter: &filter,
        inputs: &[1],
    };
    assert!(footer
        .filter_rows(0, &[0], &ranges, 1, None, &late)
        .is_err());
    let late = Late {
        filter: &filter,
        inputs: &[],
    };
    assert!(footer
        .filter_rows(0, &[0, 1], &ranges, 1, None, &late)
        .is_err());
}
