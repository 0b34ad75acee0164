//! Writes the seed corpus of the Puffin and deletion vector fuzz targets (dev/fuzz runs it):
//! small valid files covering each layout the decoders accept, so that fuzzing starts from
//! inputs that reach past the magic and CRC checks.
//! `cargo run -p frazil-deletes --example fuzz_seeds -- <dir>` writes `<dir>/decode_puffin/*`
//! and `<dir>/decode_dv/*`.

use std::path::{Path, PathBuf};

use frazil_deletes::{serialize_dv, write_puffin, BlobInput, CompressionCodec, PositionBitmap};
use frazil_values::{Error, Result};

/// Bitmaps of every container kind: empty, sparse (array), dense (bitmap), consecutive (run),
/// and positions past 2^32 (several 32-bit keys).
fn bitmaps() -> Result<Vec<(&'static str, PositionBitmap)>> {
    let dense: Vec<u64> = (0..20_000).map(|i| i * 2).collect();
    let runs: Vec<u64> = (100..5_000).chain(70_000..70_100).collect();
    Ok(vec![
        ("empty", PositionBitmap::new()),
        (
            "sparse",
            PositionBitmap::from_positions(&[0, 3, 1000, 65_535])?,
        ),
        ("dense", PositionBitmap::from_positions(&dense)?),
        ("runs", PositionBitmap::from_positions(&runs)?),
        (
            "wide",
            PositionBitmap::from_positions(&[1, 1 << 32, (1 << 33) + 7, (1 << 62) + 1])?,
        ),
    ])
}

fn dv<'a>(data: &'a [u8], file: &str) -> BlobInput<'a> {
    BlobInput {
        blob_type: "deletion-vector-v1".into(),
        fields: vec![i32::MAX - 2],
        snapshot_id: -1,
        sequence_number: -1,
        data,
        codec: CompressionCodec::None,
        properties: vec![("referenced-data-file".into(), file.into())],
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    std::fs::write(dir.join(name), bytes)
        .map_err(|e| Error::invalid(format!("cannot write {}: {e}", dir.join(name).display())))
}

fn main() -> Result<()> {
    let root = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or_else(|| Error::invalid("usage: fuzz_seeds <dir>"))?,
    );
    let (puffin_dir, dv_dir) = (root.join("decode_puffin"), root.join("decode_dv"));
    for d in [&puffin_dir, &dv_dir] {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::invalid(format!("cannot create {}: {e}", d.display())))?;
    }
    let mut blobs = Vec::new();
    for (name, b) in bitmaps()? {
        let mut vector = Vec::new();
        b.serialize_into(&mut vector);
        write(&dv_dir, &format!("{name}.roaring"), &vector)?;
        let blob = serialize_dv(&b);
        write(&dv_dir, &format!("{name}.dv"), &blob)?;
        blobs.push(blob);
    }
    let sketch = b"a theta sketch's bytes, compressible compressible compressible";
    let other = |codec| BlobInput {
        blob_type: "apache-datasketches-theta-v1".into(),
        fields: vec![1, 2],
        snapshot_id: 7,
        sequence_number: 3,
        data: sketch,
        codec,
        properties: vec![("ndv".into(), "12".into())],
    };
    let files: Vec<(&str, Vec<BlobInput<'_>>, bool)> = vec![
        ("empty", vec![], false),
        (
            "dvs",
            vec![dv(&blobs[1], "a.parquet"), dv(&blobs[4], "b.parquet")],
            false,
        ),
        ("dvs-lz4-footer", vec![dv(&blobs[3], "c.parquet")], true),
        ("zstd-blob", vec![other(CompressionCodec::Zstd)], false),
        ("lz4-blob", vec![other(CompressionCodec::Lz4)], false),
    ];
    let props = vec![("created-by".to_string(), "frazil fuzz seeds".to_string())];
    for (name, inputs, compress_footer) in files {
        let (bytes, _) = write_puffin(&inputs, &props, compress_footer)?;
        write(&puffin_dir, &format!("{name}.puffin"), &bytes)?;
    }
    Ok(())
}
