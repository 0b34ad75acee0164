//! v4 `content_stats` tests: Java manifests through v4 and back, the spec's geo example.

mod round_trip {
    use crate::content_stats::*;
    use crate::manifest::{read_manifest, ReadOptions};
    use crate::paths;
    use crate::write::{write_manifest, WriteOptions};
    use arrow_array::RecordBatch;

    fn java(name: &str) -> RecordBatch {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        read_manifest(&std::fs::read(path).unwrap(), &ReadOptions::default()).unwrap()
    }

    fn as_v4(source: &RecordBatch, location: Option<&str>) -> Vec<u8> {
        let meta = source.schema().metadata().clone();
        let mut metadata: Vec<(String, String)> =
            ["schema", "partition-spec", "partition-spec-id", "content"]
                .iter()
                .filter_map(|k| Some((k.to_string(), meta.get(k)?.clone())))
                .collect();
        metadata.push(("schema-id".into(), "0".into()));
        metadata.push(("format-version".into(), "4".into()));
        let options = WriteOptions {
            format_version: 4,
            codec: crate::avro::Codec::Null,
            metadata,
            table_location: location.map(str::to_string),
        };
        write_manifest(&[StructArray::from(source.clone())], &options).unwrap()
    }

    #[test]
    fn ids_follow_the_spec_table() {
        assert_eq!(stats_base_id(2), Some(10_400));
        assert_eq!(field_of_base(10_400), Some(2));
        assert_eq!(stats_base_id(2_147_483_540), Some(9200));
        assert_eq!(field_of_base(9000), Some(2_147_483_539));
        assert_eq!(field_of_base(10_401), None);
        assert_eq!(stats_base_id(999_950), None);
    }

    /// Java's manifests written as v4 and read back: the same metrics maps (the types file
    /// has int, long, string, date, timestamp(tz), decimals, boolean, binary, float and double
    /// columns with nulls, NaN and -0.0).
    #[test]
    fn v4_round_trip_keeps_the_metrics() {
        for name in [
            "v2-data.avro",
            "v3-data.avro",
            "types-data.avro",
            "v3-deletes.avro",
        ] {
            round_trip(name);
        }
    }

    fn round_trip(name: &str) {
        let source = java(name);
        let bytes = as_v4(&source, None);
        let back = read_manifest(&bytes, &ReadOptions::default()).unwrap();
        let (a, b) = (
            source.column_by_name("data_file").unwrap().as_struct(),
            back.column_by_name("data_file").unwrap().as_struct(),
        );
        for name in [
            "value_counts",
            "null_value_counts",
            "nan_value_counts",
            "lower_bounds",
            "upper_bounds",
            "file_path",
        ] {
            let (x, y) = (
                a.column_by_name(name).unwrap(),
                b.column_by_name(name).unwrap(),
            );
            for row in 0..a.len() {
                // the entries of a row, as text (the map arrays' layouts may differ)
                let entries = |m: &ArrayRef| -> Vec<(i32, String)> {
                    let e = m.as_map().value(row);
                    let keys = e.column(0).as_primitive::<Int32Type>();
                    let mut out: Vec<(i32, String)> = (0..e.len())
                        .map(|j| (keys.value(j), format!("{:?}", e.column(1).slice(j, 1))))
                        .collect();
                    out.sort();
                    out
                };
                if name == "file_path" {
                    assert_eq!(x.slice(row, 1).to_data(), y.slice(row, 1).to_data());
                } else if x.is_valid(row) && x.as_map().value(row).len() > 0 {
                    assert_eq!(entries(x), entries(y), "{name} row {row}");
                }
            }
        }
    }

    #[test]
    fn v4_paths_are_relative_and_resolve() {
        let source = java("v2-data.avro");
        let df = source.column_by_name("data_file").unwrap().as_struct();
        let path = df
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_string();
        let (location, _) = path.rsplit_once('/').unwrap();
        let (location, _) = location.rsplit_once('/').unwrap();
        let location = format!("file://{location}");
        let bytes = as_v4(&source, Some(&location));
        let raw = read_manifest(&bytes, &ReadOptions::default()).unwrap();
        let raw_path = raw
            .column_by_name("data_file")
            .unwrap()
            .as_struct()
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_string();
        assert!(
            !paths::has_scheme(&raw_path) && path.ends_with(&format!("/{raw_path}")),
            "{raw_path}"
        );
        let moved = ReadOptions {
            table_location: Some("s3://elsewhere/t".into()),
            ..Default::default()
        };
        let back = read_manifest(&bytes, &moved).unwrap();
        let got = back
            .column_by_name("data_file")
            .unwrap()
            .as_struct()
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(0)
            .to_string();
        assert_eq!(got, format!("s3://elsewhere/t/{raw_path}"));
    }
}

mod geo {
    use crate::content_stats::*;
    use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, MapBuilder};
    use arrow_array::new_null_array;

    fn point(c: &[f64]) -> Vec<u8> {
        c.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// The spec's example: an optional geometry field 4 has stats ids 10_800, bounds 10_801 and
    /// 10_802 with coordinates at offsets 10-13 and 14-17, no tight_bounds or NaN count.
    #[test]
    fn geo_bounds_use_the_spec_struct_ids_and_round_trip() {
        let schema = r#"{"type":"struct","schema-id":0,"fields":[
            {"id":4,"name":"location","required":false,"type":"geometry"}]}"#;
        let fields = stats_fields(schema).unwrap();
        assert_eq!(fields.len(), 3); // and the row lineage fields
        assert_eq!((fields[1].base, fields[2].base), (9000, 9200));
        assert_eq!(fields[0].base, 10_800);
        // three files: x:y, x:y:z, x:y:NaN:m
        let lows = [
            point(&[1.0, 2.0]),
            point(&[1.0, 2.0, 3.0]),
            point(&[1.0, 2.0, f64::NAN, 4.0]),
        ];
        let mut lower = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
        let mut upper = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
        let mut counts = MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
        for low in &lows {
            lower.keys().append_value(4);
            lower.values().append_value(low);
            lower.append(true).unwrap();
            upper.keys().append_value(4);
            upper.values().append_value(point(&[9.0, 8.0]));
            upper.append(true).unwrap();
            counts.keys().append_value(4);
            counts.values().append_value(5);
            counts.append(true).unwrap();
        }
        let (lower, upper, counts) = (lower.finish(), upper.finish(), counts.finish());
        let df = StructArray::from(vec![
            (
                Arc::new(Field::new("value_counts", counts.data_type().clone(), true)),
                Arc::new(counts.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("lower_bounds", lower.data_type().clone(), true)),
                Arc::new(lower.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("upper_bounds", upper.data_type().clone(), true)),
                Arc::new(upper.clone()) as ArrayRef,
            ),
        ]);
        let cs = from_maps(&df, &fields).unwrap();
        let loc = cs.column(0).as_struct();
        let ids: Vec<i32> = loc.fields().iter().map(|f| field_id(f).unwrap()).collect();
        assert_eq!(ids, [10_801, 10_802, 10_804, 10_805, 10_807]);
        let lb = loc.column(0).as_struct();
        let coord_ids: Vec<i32> = lb.fields().iter().map(|f| field_id(f).unwrap()).collect();
        assert_eq!(coord_ids, [10_810, 10_811, 10_812, 10_813]);
        let ub = loc.column(1).as_struct();
        let coord_ids: Vec<i32> = ub.fields().iter().map(|f| field_id(f).unwrap()).collect();
        assert_eq!(coord_ids, [10_814, 10_815, 10_816, 10_817]);
        let z = lb.column(2).as_primitive::<Float64Type>();
        assert!(z.is_null(0) && z.value(1) == 3.0 && z.is_null(2)); // NaN z means unset
                                                                    // back to the maps: the same binary points
        let with_stats = StructArray::from(vec![
            (
                Arc::new(Field::new("value_counts", counts.data_type().clone(), true)),
                Arc::new(counts.clone()) as ArrayRef,
            ),
            (
                Arc::new(Field::new("lower_bounds", lower.data_type().clone(), true)),
                new_null_array(lower.data_type(), 3),
            ),
            (
                Arc::new(Field::new("upper_bounds", upper.data_type().clone(), true)),
                new_null_array(upper.data_type(), 3),
            ),
            (
                Arc::new(Field::new("content_stats", cs.data_type().clone(), true)),
                Arc::new(cs) as ArrayRef,
            ),
        ]);
        let back = to_maps(&with_stats, None).unwrap();
        assert!(back.column_by_name("content_stats").is_none());
        let got = back.column_by_name("lower_bounds").unwrap().as_map();
        for (row, low) in lows.iter().enumerate() {
            let entry = got.value(row);
            let v = entry.column(1).as_binary::<i32>();
            let want = if row == 2 {
                point(&[1.0, 2.0, f64::NAN, 4.0])
            } else {
                low.clone()
            };
            assert_eq!(v.value(0).len(), want.len(), "row {row}");
            assert_eq!(&v.value(0)[..16], &want[..16]);
            assert_eq!(&v.value(0)[want.len() - 8..], &want[want.len() - 8..]);
        }
        let counts_back = back.column_by_name("value_counts").unwrap().as_map();
        assert_eq!(
            counts_back
                .value(1)
                .column(1)
                .as_primitive::<Int64Type>()
                .value(0),
            5
        );
    }
}
