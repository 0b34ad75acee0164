//! Files written by the Java reference (tests/data/README.md): decoded, checked against what
//! their manifest lists say about them, inherited, and round-tripped through the encoder with
//! every codec.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch, StructArray};
use frazil_manifest::avro::Codec;
use frazil_manifest::{
    read_manifest, read_manifest_list, write_manifest, write_manifest_list, ManifestFile,
    ReadOptions, WriteOptions,
};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

const MANIFESTS: [(&str, &str); 6] = [
    ("v1-manifest-list.avro", "v1-data.avro"),
    ("v2-manifest-list.avro", "v2-data.avro"),
    ("v2-manifest-list.avro", "v2-deletes.avro"),
    ("v3-manifest-list.avro", "v3-data.avro"),
    ("v3-manifest-list.avro", "v3-deletes.avro"),
    ("types-manifest-list.avro", "types-data.avro"),
];

/// The manifest list row of a fixture (matched by file name; the lists hold absolute paths).
fn list_row(list: &RecordBatch, file: &str) -> (usize, String) {
    let paths = list
        .column_by_name("manifest_path")
        .unwrap()
        .as_string::<i32>();
    for i in 0..paths.len() {
        let content = list
            .column_by_name("content")
            .unwrap()
            .as_primitive::<Int32Type>()
            .value(i);
        let want = if file.contains("deletes") { 1 } else { 0 };
        if content == want {
            return (i, paths.value(i).to_string());
        }
    }
    panic!("no manifest for {file}");
}

fn long(batch: &RecordBatch, name: &str, i: usize) -> Option<i64> {
    let a = batch
        .column_by_name(name)
        .unwrap()
        .as_primitive::<Int64Type>();
    a.is_valid(i).then(|| a.value(i))
}

fn int(batch: &RecordBatch, name: &str, i: usize) -> i32 {
    batch
        .column_by_name(name)
        .unwrap()
        .as_primitive::<Int32Type>()
        .value(i)
}

#[test]
fn java_manifests_agree_with_their_manifest_lists() {
    for (list_name, manifest_name) in MANIFESTS {
        let list = read_manifest_list(&data(list_name)).unwrap();
        let (row, _) = list_row(&list, manifest_name);
        let manifest = read_manifest(&data(manifest_name), &ReadOptions::default()).unwrap();
        let status = manifest
            .column_by_name("status")
            .unwrap()
            .as_primitive::<Int32Type>();
        let df = manifest.column_by_name("data_file").unwrap().as_struct();
        let counts = df
            .column_by_name("record_count")
            .unwrap()
            .as_primitive::<Int64Type>();
        for (s, files, rows) in [
            (1, "added_files_count", "added_rows_count"),
            (0, "existing_files_count", "existing_rows_count"),
            (2, "deleted_files_count", "deleted_rows_count"),
        ] {
            let n = (0..status.len()).filter(|&i| status.value(i) == s).count();
            let r: i64 = (0..status.len())
                .filter(|&i| status.value(i) == s)
                .map(|i| counts.value(i))
                .sum();
            assert_eq!(n as i32, int(&list, files, row), "{manifest_name} {files}");
            assert_eq!(Some(r), long(&list, rows, row), "{manifest_name} {rows}");
        }
        let summary =
            frazil_manifest::summary::summarize(&[StructArray::from(manifest.clone())]).unwrap();
        assert_eq!(
            summary.added_files_count,
            int(&list, "added_files_count", row)
        );
        let parts = list
            .column_by_name("partitions")
            .unwrap()
            .as_list::<i32>()
            .value(row);
        let parts = parts.as_struct();
        assert_eq!(parts.len(), summary.partitions.len(), "{manifest_name}");
        let lower = parts
            .column_by_name("lower_bound")
            .unwrap()
            .as_binary::<i32>();
        let upper = parts
            .column_by_name("upper_bound")
            .unwrap()
            .as_binary::<i32>();
        for (j, s) in summary.partitions.iter().enumerate() {
            assert_eq!(
                s.lower_bound.as_deref(),
                lower.is_valid(j).then(|| lower.value(j))
            );
            assert_eq!(
                s.upper_bound.as_deref(),
                upper.is_valid(j).then(|| upper.value(j))
            );
        }
    }
}

#[test]
fn inheritance_fills_what_java_left_null() {
    let list = read_manifest_list(&data("v3-manifest-list.avro")).unwrap();
    let (row, _) = list_row(&list, "v3-data.avro");
    let mf = ManifestFile {
        added_snapshot_id: long(&list, "added_snapshot_id", row),
        sequence_number: long(&list, "sequence_number", row),
        first_row_id: long(&list, "first_row_id", row),
        ..ManifestFile::default()
    };
    assert!(mf.first_row_id.is_some());
    let options = ReadOptions {
        manifest_file: Some(mf),
        columns: None,
        threads: None,
        stats_field_ids: None,
        table_location: None,
        path: None,
    };
    let batch = read_manifest(&data("v3-data.avro"), &options).unwrap();
    for name in ["snapshot_id", "sequence_number", "file_sequence_number"] {
        assert_eq!(
            batch.column_by_name(name).unwrap().null_count(),
            0,
            "{name}"
        );
    }
    let df = batch.column_by_name("data_file").unwrap().as_struct();
    let ids = df.column_by_name("first_row_id").unwrap();
    assert_eq!(ids.null_count(), 0);
}

#[test]
fn projection_keeps_only_what_is_asked() {
    let options = ReadOptions {
        manifest_file: None,
        columns: Some(vec!["data_file.file_path".into()]),
        threads: None,
        stats_field_ids: None,
        table_location: None,
        path: None,
    };
    let batch = read_manifest(&data("v2-data.avro"), &options).unwrap();
    let df = batch.column_by_name("data_file").unwrap().as_struct();
    assert!(df.column_by_name("lower_bounds").is_none());
    assert!(df.column_by_name("file_path").is_some());
}

#[test]
fn encoder_round_trips_java_files_with_every_codec() {
    for (list_name, manifest_name) in MANIFESTS {
        let source = read_manifest(&data(manifest_name), &ReadOptions::default()).unwrap();
        let meta = source.schema().metadata().clone();
        let version: u8 = meta
            .get("format-version")
            .map(|v| v.parse().unwrap())
            .unwrap_or(1);
        let keys = [
            "schema",
            "schema-id",
            "partition-spec",
            "partition-spec-id",
            "format-version",
            "content",
        ];
        let metadata: Vec<(String, String)> = keys
            .iter()
            .filter_map(|k| {
                // Java 1.10 does not write schema-id, which the spec requires from v2
                let v = meta
                    .get(k)
                    .cloned()
                    .or_else(|| (*k == "schema-id").then(|| "0".into()))?;
                Some((k.to_string(), v))
            })
            .collect();
        for codec in [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstandard] {
            let options = WriteOptions {
                format_version: version,
                codec,
                metadata: metadata.clone(),
                table_location: None,
            };
            let bytes = write_manifest(&[StructArray::from(source.clone())], &options).unwrap();
            let back = read_manifest(&bytes, &ReadOptions::default()).unwrap();
            assert_eq!(back.num_rows(), source.num_rows());
            for (a, b) in back.columns().iter().zip(source.columns()) {
                assert_eq!(a.to_data(), b.to_data(), "{manifest_name} {codec:?}");
            }
        }
        let list = read_manifest_list(&data(list_name)).unwrap();
        let options = WriteOptions {
            format_version: version,
            codec: Codec::Deflate,
            metadata: vec![("snapshot-id".into(), "1".into())],
            table_location: None,
        };
        let bytes = write_manifest_list(&[StructArray::from(list.clone())], &options).unwrap();
        let back = read_manifest_list(&bytes).unwrap();
        for (a, b) in back.columns().iter().zip(list.columns()) {
            assert_eq!(a.to_data(), b.to_data(), "{list_name}");
        }
    }
}

/// Java writes what its manifests hold into its manifest lists: each fixture (a whole, untouched
/// file) meets every promise of its list entry, read whole or projected; the same file cut
/// short, or with a count changed, is refused.
#[test]
fn java_manifests_keep_their_lists_promises() {
    for (list_name, file) in MANIFESTS {
        let list = read_manifest_list(&data(list_name)).unwrap();
        let (row, _) = list_row(&list, file);
        let mf = ManifestFile::from_list_row(&list, row);
        assert!(mf.promised.length.is_some(), "{file}");
        assert!(mf.promised.added_files.is_some(), "{file}");
        let bytes = data(file);
        for columns in [None, Some(vec!["data_file.file_path".to_string()])] {
            let options = ReadOptions {
                manifest_file: Some(mf),
                columns,
                ..ReadOptions::default()
            };
            read_manifest(&bytes, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
        let options = ReadOptions {
            manifest_file: Some(mf),
            ..ReadOptions::default()
        };
        // cut after the header: a valid Avro file of no entries, refused by its counts
        let header = frazil_manifest::avro::Container::parse(&bytes)
            .unwrap()
            .body_offset();
        let err = read_manifest(&bytes[..header], &options).unwrap_err();
        assert!(
            err.message.contains("files, the file holds 0"),
            "{file}: {err}"
        );
        // the same cut in a list without counts (v1 may leave them null): by its length
        let length_only = ManifestFile {
            promised: frazil_manifest::Promised {
                length: mf.promised.length,
                ..Default::default()
            },
            ..mf
        };
        let options = ReadOptions {
            manifest_file: Some(length_only),
            ..ReadOptions::default()
        };
        let err = read_manifest(&bytes[..header], &options).unwrap_err();
        assert!(err.message.contains("promises a file of"), "{file}: {err}");
        // cut inside its last block: the decoder's error says the file is short
        let err = read_manifest(&bytes[..bytes.len() - 20], &options).unwrap_err();
        assert!(err.message.contains("cut short?"), "{file}: {err}");
        // a count the entries fall short of
        let mut tampered = mf;
        tampered.promised.existing_files = Some(tampered.promised.existing_files.unwrap_or(0) + 1);
        let options = ReadOptions {
            manifest_file: Some(tampered),
            ..ReadOptions::default()
        };
        let err = read_manifest(&bytes, &options).unwrap_err();
        assert!(err.message.contains("existing files"), "{file}: {err}");
    }
}

/// `read_manifests` names a failing manifest by its path when it is given.
#[test]
fn read_manifests_names_the_failing_file() {
    let list = read_manifest_list(&data("v2-manifest-list.avro")).unwrap();
    let (row, _) = list_row(&list, "v2-data.avro");
    let mut mf = ManifestFile::from_list_row(&list, row);
    mf.promised.added_files = Some(mf.promised.added_files.unwrap() + 3);
    let bytes = data("v2-data.avro");
    let options = ReadOptions {
        manifest_file: Some(mf),
        path: Some("s3://bucket/t/metadata/m0.avro".into()),
        ..ReadOptions::default()
    };
    let err = frazil_manifest::read_manifests(&[(&bytes, options)], Some(1)).unwrap_err();
    assert!(
        err.message
            .starts_with("manifest s3://bucket/t/metadata/m0.avro: the manifest list promises"),
        "{err}"
    );
}
