//! A bounded fuzz test of the decoders: real Java-written files (and their re-encodings without
//! compression, so mutations reach the record decoder), mutated by proptest, must decode or fail
//! with an error: never panic, never allocate beyond the input's size.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use arrow_array::StructArray;
use frazil_manifest::avro::Codec;
use frazil_manifest::{
    read_manifest, read_manifest_list, write_manifest, ReadOptions, WriteOptions,
};
use proptest::prelude::*;

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for name in [
        "v1-data.avro",
        "v2-data.avro",
        "v2-deletes.avro",
        "v3-data.avro",
        "v3-deletes.avro",
        "types-data.avro",
        "v1-manifest-list.avro",
        "v3-manifest-list.avro",
    ] {
        let bytes = data(name);
        if !name.contains("list") {
            let batch = read_manifest(&bytes, &ReadOptions::default()).unwrap();
            let meta = batch.schema().metadata().clone();
            let version = meta.get("format-version").map_or(1, |v| v.parse().unwrap());
            let metadata = [
                "schema",
                "schema-id",
                "partition-spec",
                "partition-spec-id",
                "format-version",
                "content",
            ]
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
            let options = WriteOptions {
                format_version: version,
                codec: Codec::Null,
                metadata,
                table_location: None,
            };
            out.push(write_manifest(&[StructArray::from(batch)], &options).unwrap());
        }
        out.push(bytes);
    }
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip {
        at: usize,
        mask: u8,
    },
    Set {
        at: usize,
        byte: u8,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    /// A varint of a huge or negative value, where a length or count may be.
    Varint {
        at: usize,
        value: i64,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..12))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (
            any::<usize>(),
            prop_oneof![
                Just(i64::MAX),
                Just(i64::MIN),
                Just(-1i64),
                Just(1i64 << 40),
                any::<i64>()
            ]
        )
            .prop_map(|(at, value)| Mutation::Varint { at, value }),
    ]
}

fn apply(mut data: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        if data.is_empty() {
            break;
        }
        let n = data.len();
        match m {
            Mutation::Flip { at, mask } => data[at % n] ^= mask,
            Mutation::Set { at, byte } => data[at % n] = *byte,
            Mutation::Truncate { at } => data.truncate(at % n),
            Mutation::Insert { at, bytes } => {
                let at = at % n;
                data.splice(at..at, bytes.iter().copied());
            }
            Mutation::Varint { at, value } => {
                let mut z = ((value << 1) ^ (value >> 63)) as u64;
                let mut enc = Vec::new();
                while z >= 0x80 {
                    enc.push((z as u8) | 0x80);
                    z >>= 7;
                }
                enc.push(z as u8);
                let at = at % n;
                let end = (at + enc.len()).min(n);
                data.splice(at..end, enc);
            }
        }
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_files_never_panic(
        pick in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        thread_local!(static CORPUS: Vec<Vec<u8>> = corpus());
        let input = CORPUS.with(|c| apply(pick.get(c).clone(), &mutations));
        let _ = read_manifest(&input, &ReadOptions::default());
        let projected = ReadOptions {
            stats_field_ids: Some([1, 2].as_slice().into()),
            table_location: None,
            ..ReadOptions::default()
        };
        let _ = read_manifest(&input, &projected);
        let _ = read_manifest_list(&input);
    }
}
