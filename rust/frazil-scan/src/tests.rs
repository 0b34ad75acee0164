//! Evaluator and planner tests: tables of cases from the spec and the Java reference's test
//! suites (TestInclusiveMetricsEvaluator, TestStrictMetricsEvaluator, TestManifestEvaluator,
//! TestResidualEvaluator), and manifests written by Java (frazil-manifest's fixtures).

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, MapBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field};
use frazil_manifest::{read_manifest, read_manifest_list, ReadOptions};

use crate::expr::{Expr, Schema};
use crate::metrics_evaluator::{MetricsColumns, MetricsEvaluator};
use crate::plan::{filter_batch, ScanPlanner};

#[derive(Default, Clone)]
struct F {
    rc: i64,
    values: Vec<(i32, i64)>,
    nulls: Vec<(i32, i64)>,
    nans: Vec<(i32, i64)>,
    lower: Vec<(i32, Vec<u8>)>,
    upper: Vec<(i32, Vec<u8>)>,
}

fn count_map(files: &[F], get: fn(&F) -> &Vec<(i32, i64)>) -> ArrayRef {
    let mut b = MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
    for f in files {
        for (k, v) in get(f) {
            b.keys().append_value(*k);
            b.values().append_value(*v);
        }
        b.append(true).unwrap();
    }
    Arc::new(b.finish())
}

type Bounds = Vec<(i32, Vec<u8>)>;

fn bound_map(files: &[F], get: fn(&F) -> &Bounds) -> ArrayRef {
    let mut b = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
    for f in files {
        for (k, v) in get(f) {
            b.keys().append_value(*k);
            b.values().append_value(v);
        }
        b.append(true).unwrap();
    }
    Arc::new(b.finish())
}

fn data_files(files: &[F]) -> StructArray {
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "record_count",
            Arc::new(Int64Array::from(
                files.iter().map(|f| f.rc).collect::<Vec<_>>(),
            )),
        ),
        ("value_counts", count_map(files, |f| &f.values)),
        ("null_value_counts", count_map(files, |f| &f.nulls)),
        ("nan_value_counts", count_map(files, |f| &f.nans)),
        ("lower_bounds", bound_map(files, |f| &f.lower)),
        ("upper_bounds", bound_map(files, |f| &f.upper)),
    ];
    StructArray::from(
        cols.into_iter()
            .map(|(n, a)| (Arc::new(Field::new(n, a.data_type().clone(), true)), a))
            .collect::<Vec<_>>(),
    )
}

/// id int (1), data string (2, optional), f float (3), d double (4), s struct{x int} (5, 6)
fn schema() -> Schema {
    Schema::from_json(
        r#"{"type":"struct","fields":[
        {"id":1,"name":"id","required":true,"type":"int"},
        {"id":2,"name":"data","required":false,"type":"string"},
        {"id":3,"name":"f","required":false,"type":"float"},
        {"id":4,"name":"d","required":false,"type":"double"},
        {"id":5,"name":"s","required":false,"type":{"type":"struct","fields":[
            {"id":6,"name":"x","required":false,"type":"int"}]}},
        {"id":7,"name":"b","required":false,"type":"binary"}]}"#,
    )
    .unwrap()
}

fn cmp(op: &str, id: i32, value: serde_json::Value) -> String {
    serde_json::json!({"type": op, "left": {"type":"reference","id":id}, "right": value})
        .to_string()
}

fn unary(op: &str, id: i32) -> String {
    serde_json::json!({"type": op, "child": {"type":"reference","id":id}}).to_string()
}

fn set(op: &str, id: i32, values: Vec<serde_json::Value>) -> String {
    serde_json::json!({"type": op, "child": {"type":"reference","id":id}, "values": values})
        .to_string()
}

fn run(filter: &str, files: &[F], strict: bool) -> Vec<bool> {
    let s = schema();
    let e = Expr::from_json_str(filter, &s).unwrap();
    let m = MetricsColumns::new(&data_files(files)).unwrap();
    MetricsEvaluator::new(&e, &s, strict).eval(&m).unwrap()
}

fn int_file(lo: i32, hi: i32) -> F {
    F {
        rc: 50,
        values: vec![(1, 50), (6, 50)],
        nulls: vec![(1, 0), (6, 0)],
        lower: vec![
            (1, lo.to_le_bytes().to_vec()),
            (6, lo.to_le_bytes().to_vec()),
        ],
        upper: vec![
            (1, hi.to_le_bytes().to_vec()),
            (6, hi.to_le_bytes().to_vec()),
        ],
        ..F::default()
    }
}

#[test]
fn inclusive_integer_ranges() {
    // TestInclusiveMetricsEvaluator: id in [30, 79]
    let f = [int_file(30, 79)];
    let cases: &[(&str, i32, bool)] = &[
        ("lt", 5, false),
        ("lt", 30, false),
        ("lt", 31, true),
        ("lt-eq", 29, false),
        ("lt-eq", 30, true),
        ("gt", 79, false),
        ("gt", 78, true),
        ("gt-eq", 80, false),
        ("gt-eq", 79, true),
        ("eq", 5, false),
        ("eq", 29, false),
        ("eq", 30, true),
        ("eq", 75, true),
        ("eq", 79, true),
        ("eq", 80, false),
        ("not-eq", 30, true),
    ];
    for (op, v, want) in cases {
        assert_eq!(
            run(&cmp(op, 1, (*v).into()), &f, false),
            vec![*want],
            "{op} {v}"
        );
    }
    assert_eq!(
        run(&set("in", 1, vec![5.into(), 6.into()]), &f, false),
        vec![false]
    );
    assert_eq!(
        run(&set("in", 1, vec![5.into(), 31.into()]), &f, false),
        vec![true]
    );
    assert_eq!(
        run(&set("in", 1, vec![80.into(), 81.into()]), &f, false),
        vec![false]
    );
    // more than 200 values are not checked (Java's limit)
    let many: Vec<serde_json::Value> = (1000..1300).map(Into::into).collect();
    assert_eq!(run(&set("in", 1, many), &f, false), vec![true]);
    // a single value file: Java 1.10's InclusiveMetricsEvaluator never prunes not-eq and
    // not-in (checked in its bytecode), and the planned file set must be the reference's
    let one = [int_file(7, 7)];
    assert_eq!(run(&cmp("not-eq", 1, 7.into()), &one, false), vec![true]);
    assert_eq!(
        run(&set("not-in", 1, vec![7.into(), 8.into()]), &one, false),
        vec![true]
    );
    assert_eq!(
        run(&set("not-in", 1, vec![6.into(), 8.into()]), &one, false),
        vec![true]
    );
    // NOT is rewritten: not(id < 31) = id >= 31
    let not = serde_json::json!({"type":"not","child": serde_json::from_str::<serde_json::Value>(&cmp("lt", 1, 80.into())).unwrap()}).to_string();
    assert_eq!(run(&not, &f, false), vec![false]);
}

#[test]
fn inclusive_counts_and_missing_stats() {
    let empty = F {
        rc: 0,
        ..int_file(30, 79)
    };
    let unknown = F {
        rc: -1,
        ..int_file(30, 79)
    };
    let no_stats = F {
        rc: 10,
        ..F::default()
    };
    let files = [empty, unknown, no_stats];
    assert_eq!(
        run(&cmp("eq", 1, 5.into()), &files, false),
        vec![false, true, true]
    );
    // all-null column (id 2): value count = null count
    let nulls = F {
        rc: 10,
        values: vec![(2, 10)],
        nulls: vec![(2, 10)],
        ..F::default()
    };
    let some = F {
        rc: 10,
        values: vec![(2, 10)],
        nulls: vec![(2, 0)],
        ..F::default()
    };
    let files = [nulls, some];
    assert_eq!(run(&unary("not-null", 2), &files, false), vec![false, true]);
    assert_eq!(run(&unary("is-null", 2), &files, false), vec![true, false]);
    assert_eq!(
        run(&cmp("lt", 2, "a".into()), &files, false),
        vec![false, true]
    );
    assert_eq!(
        run(&cmp("starts-with", 2, "a".into()), &files, false),
        vec![false, true]
    );
    assert_eq!(
        run(&cmp("not-starts-with", 2, "a".into()), &files, false),
        vec![true, true]
    );
}

fn f32b(v: f32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn f64b(v: f64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

#[test]
fn inclusive_nan_rules() {
    let all_nan = F {
        rc: 10,
        values: vec![(3, 10), (4, 10)],
        nulls: vec![(3, 0), (4, 0)],
        nans: vec![(3, 10), (4, 10)],
        ..F::default()
    };
    // NaN bounds are unreliable: a NaN lower bound cannot exclude anything
    let nan_lower = F {
        rc: 10,
        values: vec![(3, 10), (4, 10)],
        nulls: vec![(3, 0), (4, 0)],
        lower: vec![(3, f32b(f32::NAN)), (4, f64b(f64::NAN))],
        upper: vec![(3, f32b(f32::NAN)), (4, f64b(f64::NAN))],
        ..F::default()
    };
    let no_nan = F {
        rc: 10,
        values: vec![(3, 10), (4, 10)],
        nulls: vec![(3, 0), (4, 0)],
        nans: vec![(3, 0), (4, 0)],
        lower: vec![(3, f32b(1.0)), (4, f64b(1.0))],
        upper: vec![(3, f32b(2.0)), (4, f64b(2.0))],
    };
    let files = [all_nan, nan_lower, no_nan];
    for id in [3, 4] {
        assert_eq!(
            run(&unary("is-nan", id), &files, false),
            vec![true, true, false]
        );
        assert_eq!(
            run(&unary("not-nan", id), &files, false),
            vec![false, true, true]
        );
        assert_eq!(
            run(&cmp("lt", id, 1.5.into()), &files, false),
            vec![false, true, true]
        );
        assert_eq!(
            run(&cmp("gt", id, 1.5.into()), &files, false),
            vec![false, true, true]
        );
        assert_eq!(
            run(&cmp("eq", id, 3.0.into()), &files, false),
            vec![false, true, false]
        );
        assert_eq!(
            run(&cmp("lt", id, 0.5.into()), &files, false),
            vec![false, true, false]
        );
        assert_eq!(
            run(&set("in", id, vec![0.5.into(), 2.5.into()]), &files, false),
            vec![false, true, false]
        );
        // not-eq with a unique value still needs a NaN count of zero
        assert_eq!(
            run(&cmp("not-eq", id, 1.0.into()), &files, false),
            vec![true, true, true]
        );
    }
}

#[test]
fn zeros_compare_by_ieee() {
    // bounds [-0.0, -0.0]: a row of -0.0 equals 0.0 (IEEE 754), so the file must be kept
    let f = F {
        rc: 3,
        values: vec![(4, 3)],
        nulls: vec![(4, 0)],
        nans: vec![(4, 0)],
        lower: vec![(4, f64b(-0.0))],
        upper: vec![(4, f64b(-0.0))],
    };
    assert_eq!(
        run(&cmp("eq", 4, 0.0.into()), std::slice::from_ref(&f), false),
        vec![true]
    );
    assert_eq!(
        run(
            &cmp("gt-eq", 4, 0.0.into()),
            std::slice::from_ref(&f),
            false
        ),
        vec![true]
    );
    assert_eq!(
        run(&cmp("lt", 4, 0.0.into()), std::slice::from_ref(&f), false),
        vec![false]
    );
    assert_eq!(run(&cmp("gt-eq", 4, 0.0.into()), &[f], true), vec![true]);
}

fn string_file(lo: &str, hi: Option<&str>) -> F {
    F {
        rc: 10,
        values: vec![(2, 10)],
        nulls: vec![(2, 0)],
        lower: vec![(2, lo.as_bytes().to_vec())],
        upper: hi
            .map(|h| vec![(2, h.as_bytes().to_vec())])
            .unwrap_or_default(),
        ..F::default()
    }
}

#[test]
fn truncated_string_bounds() {
    // Java truncates bounds to 16 code points; the upper bound is incremented ("...p" -> "...q")
    let f = [string_file("abcdefghijklmnop", Some("abcdefghijklmnoq"))];
    for (op, v, want) in [
        ("eq", "abcdefghijklmnopXYZ", true),
        ("eq", "abcdefghijklmnoq", true),
        ("eq", "abcdefghijklmnoqa", false),
        ("eq", "abcdefghijklmno", false),
        ("starts-with", "abcdefghijklmnopqrstuvwxyz", true),
        ("starts-with", "abc", true),
        ("starts-with", "abd", false),
        ("starts-with", "abb", false),
        ("not-starts-with", "abc", false),
        ("not-starts-with", "abcdefghijklmnop", true),
        ("lt", "abcdefghijklmnop", false),
        ("gt", "abcdefghijklmnoq", false),
        ("gt", "abcdefghijklmnop", true),
    ] {
        assert_eq!(
            run(&cmp(op, 2, v.into()), &f, false),
            vec![want],
            "{op} {v}"
        );
    }
    // an upper bound Java could not increment (all U+10FFFF) is left out: no upper pruning
    let open = [string_file("\u{10FFFF}\u{10FFFF}", None)];
    assert_eq!(
        run(
            &cmp("gt", 2, "\u{10FFFF}\u{10FFFF}\u{10FFFF}".into()),
            &open,
            false
        ),
        vec![true]
    );
    assert_eq!(
        run(&cmp("lt", 2, "\u{10FFFF}".into()), &open, false),
        vec![false]
    );
    // UTF-8 byte order is code point order: U+FFFF sorts below U+10FFFF (not so in UTF-16)
    let f = [string_file("a", Some("a\u{10FFFF}"))];
    assert_eq!(
        run(&cmp("eq", 2, "a\u{FFFF}".into()), &f, false),
        vec![true]
    );
    assert_eq!(
        run(&cmp("starts-with", 2, "a\u{FFFF}".into()), &f, false),
        vec![true]
    );
    assert_eq!(
        run(&cmp("gt", 2, "a\u{10FFFF}".into()), &f, false),
        vec![false]
    );
    let f = [string_file("a\u{10FFFF}", Some("b"))];
    assert_eq!(
        run(&cmp("lt", 2, "a\u{FFFF}".into()), &f, false),
        vec![false]
    );
    assert_eq!(
        run(&cmp("starts-with", 2, "a\u{FFFF}".into()), &f, false),
        vec![false]
    );
    // binary bounds compare unsigned
    let b = F {
        rc: 1,
        values: vec![(7, 1)],
        nulls: vec![(7, 0)],
        lower: vec![(7, vec![0x01])],
        upper: vec![(7, vec![0xff, 0x00])],
        ..F::default()
    };
    assert_eq!(
        run(&cmp("eq", 7, "ff".into()), std::slice::from_ref(&b), false),
        vec![true]
    );
    assert_eq!(run(&cmp("gt", 7, "ff01".into()), &[b], false), vec![false]);
}

#[test]
fn strict_metrics() {
    let f = [int_file(30, 79)];
    for (op, v, want) in [
        ("lt", 80, true),
        ("lt", 79, false),
        ("lt-eq", 79, true),
        ("gt", 29, true),
        ("gt", 30, false),
        ("gt-eq", 30, true),
        ("eq", 30, false),
        ("not-eq", 29, true),
        ("not-eq", 80, true),
        ("not-eq", 50, false),
    ] {
        assert_eq!(run(&cmp(op, 1, v.into()), &f, true), vec![want], "{op} {v}");
        // nested fields never prove a match
        assert_eq!(
            run(&cmp(op, 6, v.into()), &f, true),
            vec![false],
            "nested {op} {v}"
        );
    }
    assert_eq!(
        run(&cmp("eq", 1, 7.into()), &[int_file(7, 7)], true),
        vec![true]
    );
    assert_eq!(
        run(
            &set("in", 1, vec![7.into(), 8.into()]),
            &[int_file(7, 7)],
            true
        ),
        vec![true]
    );
    assert_eq!(
        run(&set("not-in", 1, vec![1.into(), 80.into()]), &f, true),
        vec![true]
    );
    assert_eq!(
        run(&set("not-in", 1, vec![1.into(), 50.into()]), &f, true),
        vec![false]
    );
    // nulls, or null counts we do not know, spoil a range
    let with_nulls = F {
        nulls: vec![(2, 1)],
        ..string_file("a", Some("b"))
    };
    let unknown_nulls = F {
        nulls: vec![],
        ..string_file("a", Some("b"))
    };
    let clean = string_file("a", Some("b"));
    let files = [with_nulls, unknown_nulls, clean];
    assert_eq!(
        run(&cmp("lt", 2, "c".into()), &files, true),
        vec![false, false, true]
    );
    assert_eq!(
        run(&unary("not-null", 2), &files, true),
        vec![false, false, true]
    );
    let prefixed = [
        string_file("abc", Some("abd")),
        string_file("abc1", Some("abc9")),
    ];
    assert_eq!(
        run(&cmp("starts-with", 2, "abc".into()), &prefixed, true),
        vec![false, true]
    );
    assert_eq!(
        run(&cmp("not-starts-with", 2, "abe".into()), &prefixed, true),
        vec![true, true]
    );
    assert_eq!(
        run(&cmp("not-starts-with", 2, "abc".into()), &prefixed, true),
        vec![false, false]
    );
    // an empty file matches everything
    let empty = F {
        rc: 0,
        ..F::default()
    };
    assert_eq!(run(&cmp("eq", 1, 1.into()), &[empty], true), vec![true]);
}

// ---------------------------------------------------------------------------------------------
// Planning Java-written manifests

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../frazil-manifest/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

struct Table {
    list: RecordBatch,
    manifest: RecordBatch,
    schema: String,
    specs: String,
    row: usize,
}

fn table(list: &str, data: &str) -> Table {
    let list = read_manifest_list(&fixture(list)).unwrap();
    let manifest = read_manifest(&fixture(data), &ReadOptions::default()).unwrap();
    let meta = manifest.schema().metadata().clone();
    let spec_id: i32 = meta["partition-spec-id"].parse().unwrap();
    let specs = format!(
        r#"[{{"spec-id":{spec_id},"fields":{}}}]"#,
        meta["partition-spec"]
    );
    let content = list
        .column_by_name("content")
        .unwrap()
        .as_primitive::<arrow_array::types::Int32Type>();
    let row = (0..list.num_rows())
        .find(|i| content.value(*i) == 0)
        .unwrap();
    Table {
        list,
        manifest,
        schema: meta["schema"].clone(),
        specs,
        row,
    }
}

fn file_names(t: &Table, mask: &arrow_array::BooleanArray) -> Vec<String> {
    let df = t.manifest.column_by_name("data_file").unwrap().as_struct();
    let paths = df.column_by_name("file_path").unwrap().as_string::<i32>();
    let mut out: Vec<String> = (0..paths.len())
        .filter(|i| mask.value(*i))
        .map(|i| {
            let p = paths.value(i);
            p[p.len() - 13..p.len() - 8].to_string()
        })
        .collect();
    out.sort();
    out
}

fn plan(t: &Table, filter: &str) -> (bool, Vec<String>, Vec<String>) {
    let planner = ScanPlanner::new(&t.schema, &t.specs, filter).unwrap();
    let keep = planner.prune_manifests(&t.list).unwrap();
    let plans = planner
        .plan(&t.list, &[(t.row, t.manifest.clone())], Some(2))
        .unwrap();
    let p = &plans[0];
    let schema = crate::expr::Schema::from_json(&t.schema).unwrap();
    let residuals = (0..p.residual_index.len())
        .map(|i| {
            let expr = &p.residuals[p.residual_index.value(i) as usize];
            expr.to_json(&schema).unwrap().to_string()
        })
        .collect();
    (keep.value(t.row), file_names(t, &p.selected), residuals)
}

#[test]
fn strict_metrics_under_sql_null_semantics() {
    // data (2) in ["b", "d"] with 3 nulls of 50: Iceberg's negated predicates hold for null
    // (Java proves all of them), SQL's do not.
    let f = [F {
        rc: 50,
        values: vec![(2, 50)],
        nulls: vec![(2, 3)],
        lower: vec![(2, b"b".to_vec())],
        upper: vec![(2, b"d".to_vec())],
        ..F::default()
    }];
    let s = schema();
    let m = MetricsColumns::new(&data_files(&f)).unwrap();
    let negated = [
        cmp("not-eq", 2, "a".into()),
        set("not-in", 2, vec!["a".into(), "z".into()]),
        cmp("not-starts-with", 2, "a".into()),
        serde_json::json!({"type": "not", "child": serde_json::from_str::<serde_json::Value>(
            &cmp("eq", 2, "a".into())).unwrap()})
        .to_string(),
    ];
    for filter in &negated {
        let e = Expr::from_json_str(filter, &s).unwrap();
        let iceberg = MetricsEvaluator::new(&e, &s, true).eval(&m).unwrap();
        let sql = MetricsEvaluator::new(&e, &s, true)
            .sql_nulls(true)
            .eval(&m)
            .unwrap();
        assert_eq!((iceberg, sql), (vec![true], vec![false]), "{filter}");
    }
    // without nulls both agree; positive predicates are the same in both
    let clean = [int_file(30, 79)];
    let m = MetricsColumns::new(&data_files(&clean)).unwrap();
    for filter in [cmp("not-eq", 1, 29.into()), cmp("gt", 1, 29.into())] {
        let e = Expr::from_json_str(&filter, &s).unwrap();
        let sql = MetricsEvaluator::new(&e, &s, true)
            .sql_nulls(true)
            .eval(&m)
            .unwrap();
        assert_eq!(sql, vec![true], "{filter}");
    }
}

#[test]
fn identity_partitions_of_every_type() {
    // types-*: three files; 00001 (i=1, s='a', d=2024-02-29, db=NaN, b=true),
    // 00002 (i=-5, s='ü🧊', d=1900-01-01, b=false), 00003 (all partition values null)
    let t = table("types-manifest-list.avro", "types-data.avro");
    let (keep, files, residuals) = plan(&t, &cmp("eq", 1, 1.into()));
    assert!(keep);
    assert_eq!(files, ["00001"]);
    // the file of i=1 needs no filtering; the others cannot match
    assert_eq!(residuals, ["true", "false", "false"]);
    // a value outside the manifest's summary range prunes the manifest
    assert!(!plan(&t, &cmp("eq", 1, 100.into())).0);
    assert!(!plan(&t, &cmp("lt", 1, (-5).into())).0);
    assert!(plan(&t, &cmp("lt-eq", 1, (-5).into())).0);
    // summaries: f (float) has contains_nan = false, db (double) true
    assert!(!plan(&t, &unary("is-nan", 11)).0);
    assert!(plan(&t, &unary("is-nan", 12)).0);
    assert!(!plan(&t, &cmp("starts-with", 3, "0".into())).0);
    assert!(plan(&t, &cmp("starts-with", 3, "b".into())).0); // between "a" and "ü🧊"
    assert!(plan(&t, &cmp("starts-with", 3, "ü🧊".into())).0);
    assert!(plan(&t, &unary("not-null", 3)).0);
    // Java's partition evaluator sorts null first (i < 0 holds for the null partition), but
    // the metrics (one value, one null) drop that file, as Java's do
    assert_eq!(plan(&t, &cmp("lt", 1, 0.into())).1, ["00002"]);
    // ... and its residual is false (null never satisfies i < 0)
    let (_, _, r) = plan(&t, &cmp("lt", 1, 0.into()));
    assert_eq!(r, ["false", "false", "true"]);
    // i != 1: null != 1 is true (the spec's null-safe comparison), so the null partition's
    // residual is decided too
    let (_, files, r) = plan(&t, &cmp("not-eq", 1, 1.into()));
    assert_eq!(files, ["00002", "00003"]);
    assert_eq!(r, ["false", "true", "true"]);
    assert_eq!(plan(&t, &cmp("starts-with", 3, "ü".into())).1, ["00002"]);
    assert_eq!(plan(&t, &cmp("lt", 4, "1970-01-01".into())).1, ["00002"]);
    assert_eq!(plan(&t, &cmp("gt", 4, "2000-01-01".into())).1, ["00001"]);
    assert_eq!(plan(&t, &cmp("eq", 9, false.into())).1, ["00002"]);
    assert_eq!(plan(&t, &unary("is-nan", 12)).1, ["00001"]);
    assert_eq!(plan(&t, &unary("is-null", 3)).1, ["00003"]);
    assert_eq!(plan(&t, &cmp("eq", 7, "1.25".into())).1, ["00001"]);
    assert_eq!(plan(&t, &cmp("lt", 8, "0.0000000000".into())).1, ["00001"]);
    assert_eq!(plan(&t, &cmp("eq", 10, "".into())).1, ["00002"]);
    assert_eq!(
        plan(&t, &set("in", 2, vec![(-1).into(), 7.into()])).1,
        ["00002"]
    );
    assert_eq!(
        plan(&t, &cmp("eq", 11, (-0.0).into())).1,
        ["00001", "00002"]
    );
    // pre-epoch timestamp partition (1969-12-31T23:59:59.999999)
    assert_eq!(
        plan(&t, &cmp("lt", 6, "1970-01-01T00:00:00".into())).1,
        ["00001"]
    );
}

#[test]
fn day_partitions_and_metrics() {
    // v2-*: day(ts) partitions 2024-01-01 .. 2024-01-07, one file each
    let t = table("v2-manifest-list.avro", "v2-data.avro");
    let (keep, files, residuals) = plan(&t, &cmp("gt-eq", 4, "2024-01-03T00:00:00+00:00".into()));
    assert!(keep);
    assert_eq!(files.len(), 5);
    // days after 01-03 match entirely; 01-01 and 01-02 cannot
    let distinct: std::collections::BTreeSet<&String> = residuals.iter().collect();
    assert_eq!(
        distinct.into_iter().cloned().collect::<Vec<_>>(),
        ["false", "true"]
    );
    // a range inside one day keeps the predicate as that day's residual (the file of 01-03
    // ends before noon: its metrics drop it)
    let (_, files, residuals) = plan(&t, &cmp("gt", 4, "2024-01-03T12:00:00+00:00".into()));
    assert_eq!(files.len(), 4);
    assert!(residuals.iter().any(|r| r.contains("\"gt\"")));
    // a filter on a non-partition column uses metrics only; residual is the filter
    let (_, files, residuals) = plan(&t, &cmp("lt", 1, (-1).into()));
    assert!(files.is_empty(), "{files:?}");
    assert!(residuals.iter().all(|r| r.contains("\"lt\"")));
    let (_, files, _) = plan(&t, &serde_json::json!(true).to_string());
    assert_eq!(files.len(), 7);
}

#[test]
fn errors_name_the_problem() {
    let t = table("v2-manifest-list.avro", "v2-data.avro");
    let e = ScanPlanner::new(&t.schema, &t.specs, &cmp("eq", 99, 1.into()))
        .err()
        .unwrap();
    assert!(e.message.contains("99"), "{e}");
    let planner = ScanPlanner::new(&t.schema, "[]", "true").unwrap();
    let e = planner.prune_manifests(&t.list).err().unwrap();
    assert!(e.message.contains("partition spec 0"), "{e}");
    // a batch without data_file
    let planner = ScanPlanner::new(&t.schema, &t.specs, "true").unwrap();
    let bad = RecordBatch::try_from_iter(vec![(
        "status",
        Arc::new(arrow_array::Int32Array::from(vec![1])) as ArrayRef,
    )])
    .unwrap();
    assert!(planner.plan_manifest(0, &bad).is_err());
    let _ = DataType::Null;
}

/// The residual of a file its partition does not decide is the filter itself: every
/// manifest's plan names the same expression, and the run writes it as JSON once, equal to
/// the filter written afresh; decided residuals keep their own numbering.
#[test]
fn undecided_residuals_are_the_filter_written_once() {
    let t = table("v2-manifest-list.avro", "v2-data.avro");
    // `id` (1) is not a partition source: every file's residual is the filter
    let filter = cmp("lt", 1, 1000.into());
    let planner = ScanPlanner::new(&t.schema, &t.specs, &filter).unwrap();
    let p = planner.plan_manifest(0, &t.manifest).unwrap();
    assert_eq!(p.residuals, std::slice::from_ref(planner.filter()));
    let fresh = planner.filter_json().unwrap();
    // three manifests in one run: one residual, written once, named by every task
    let whole = |planner: &ScanPlanner| {
        planner
            .plan_files(
                &t.list,
                &[t.row; 3],
                |_, _| Ok(t.manifest.clone()),
                Some(2),
                false,
            )
            .unwrap()
    };
    let scan = whole(&planner);
    assert_eq!(scan.residuals, std::slice::from_ref(&fresh));
    assert_eq!(scan.manifests.len(), 3);
    assert!(scan
        .manifests
        .iter()
        .all(|m| m.residual_index.values().iter().all(|&i| i == 0)));
    // decided and undecided residuals numbered over the run: each distinct one once
    let day = cmp("gt", 4, "2024-01-03T12:00:00+00:00".into());
    let scan = whole(&ScanPlanner::new(&t.schema, &t.specs, &day).unwrap());
    let distinct: std::collections::BTreeSet<&String> = scan.residuals.iter().collect();
    assert_eq!(distinct.len(), scan.residuals.len(), "{:?}", scan.residuals);
    assert!(scan.residuals.iter().any(|r| r.contains("\"gt\"")));
    let (_, _, residuals) = plan(&t, &filter);
    assert!(!residuals.is_empty());
    assert!(residuals.iter().all(|r| *r == fresh), "{residuals:?}");
    // a day partition decides some files: their residuals are written as before
    let (_, _, residuals) = plan(&t, &day);
    assert!(residuals.iter().any(|r| r == "true" || r == "false"));
    assert!(residuals.iter().any(|r| r.contains("\"gt\"")));
}

#[test]
fn filtered_entries_are_the_kept_rows_taken_one_by_one() {
    // Every column of real manifests (structs, maps, lists, binaries): arrow's filter kernels
    // against the kept rows sliced out one at a time and concatenated.
    for name in [
        "types-data.avro",
        "v1-data.avro",
        "v2-data.avro",
        "v2-deletes.avro",
        "v3-data.avro",
        "v3-deletes.avro",
    ] {
        let one = read_manifest(&fixture(name), &ReadOptions::default()).unwrap();
        // the file's entries 60 times over, so that arrow picks each of its gathering
        // strategies (by slices, by indices) as the masks' selectivity varies
        let copies = vec![one.clone(); 60];
        let batch = arrow_select::concat::concat_batches(&one.schema(), &copies).unwrap();
        let n = batch.num_rows();
        let masks: [Vec<bool>; 6] = [
            vec![true; n],
            vec![false; n],
            (0..n).map(|i| i % 2 == 1).collect(),
            (0..n).map(|i| i == n - 1).collect(),
            (0..n).map(|i| (i * 7 + 3) % 5 < 2).collect(),
            (0..n).map(|i| i % 11 != 4).collect(),
        ];
        for mask in masks {
            let got = filter_batch(&batch, &arrow_array::BooleanArray::from(mask.clone())).unwrap();
            let rows: Vec<RecordBatch> = (0..n)
                .filter(|&i| mask[i])
                .map(|i| batch.slice(i, 1))
                .collect();
            let want = arrow_select::concat::concat_batches(&batch.schema(), &rows).unwrap();
            assert_eq!(got, want, "{name} {mask:?}");
        }
        let short = arrow_array::BooleanArray::from(vec![true; n + 1]);
        assert!(filter_batch(&batch, &short).is_err(), "{name}");
    }
}
