//! Times decoding every manifest in a directory, natively:
//! `cargo run --release -p frazil-manifest --example decode_speed -- <dir>`.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use frazil_manifest::avro::Container;
use frazil_manifest::{read_manifest, ReadOptions};

fn main() {
    let dir = std::env::args().nth(1).expect("a directory of manifests");
    let mut files: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    files.sort();
    let total: usize = files.iter().map(Vec::len).sum();
    println!("{} files, {:.1} MB", files.len(), total as f64 / 1e6);
    let best = |f: &dyn Fn()| {
        f();
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::MAX, f64::min)
    };
    let inflate = best(&|| {
        for data in &files {
            let container = Container::parse(data).unwrap();
            container
                .for_each_block(|block| {
                    std::hint::black_box(block.bytes);
                    Ok(())
                })
                .unwrap();
        }
    });
    println!("parse + inflate blocks: {inflate:.3} s");
    let decode = best(&|| {
        for data in &files {
            std::hint::black_box(read_manifest(data, &ReadOptions::default()).unwrap());
        }
    });
    println!("read_manifest, 1 thread: {decode:.3} s");
}
