//! Times decoding every manifest in a directory, natively:
//! `cargo run --release -p frazil-manifest --example decode_speed -- <dir> [cases]`, where
//! `cases` is a comma-separated subset of `inflate,kinds,full,projected,ids,threads,split` (all
//! by default): parse and inflate only; deflate blocks inflated alone, grouped by the kind of
//! their first deflate block (fixed or dynamic Huffman code: libdeflate builds its tables again
//! for every dynamic block, which dominates a small one); `read_manifest` on one thread; the
//! same with the planning projection (no stats maps); all columns with the stats maps projected
//! to field ids 1 and to ids 2 and 4 (`stats_field_ids`); `read_manifests` on 2 threads; one
//! manifest split over 2 threads. Generate the issue-14 table with the `gen_stats_manifests`
//! example.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

// The allocator of the Python wheel (frazil-python), so these times match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use frazil_manifest::avro::{Codec, Container};
use frazil_manifest::{read_manifest, read_manifests, ReadOptions};

fn main() {
    let dir = std::env::args().nth(1).expect("a directory of manifests");
    let cases = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "inflate,kinds,full,projected,ids,threads,split".into());
    let wants = |c: &str| cases.split(',').any(|x| x == c);
    let mut files: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    files.sort();
    let total: usize = files.iter().map(Vec::len).sum();
    println!("{} files, {:.1} MB", files.len(), total as f64 / 1e6);
    // The machine may be shared: the CPU time of the process is shown beside the wall time
    // (equal to it for one thread on an idle core).
    let best = |f: &dyn Fn()| {
        f();
        let mut times: Vec<(f64, f64)> = (0..5)
            .map(|_| {
                let (t, c) = (Instant::now(), cpu_seconds());
                f();
                (t.elapsed().as_secs_f64(), cpu_seconds() - c)
            })
            .collect();
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        let cpu = times.iter().map(|t| t.1).fold(f64::MAX, f64::min);
        (times[0].0, times[2].0, cpu)
    };
    let show = |name: &str, (min, median, cpu): (f64, f64, f64)| {
        println!("{name}: min {min:.3} s, median {median:.3} s, least CPU {cpu:.3} s");
    };
    if wants("inflate") {
        let mut inflated = 0;
        for data in &files {
            Container::parse(data)
                .unwrap()
                .for_each_block(|block| {
                    inflated += block.bytes.len();
                    Ok(())
                })
                .unwrap();
        }
        println!("{:.1} MB inflated", inflated as f64 / 1e6);
        show(
            "parse + inflate blocks",
            best(&|| {
                for data in &files {
                    let container = Container::parse(data).unwrap();
                    container
                        .for_each_block(|block| {
                            std::hint::black_box(block.bytes);
                            Ok(())
                        })
                        .unwrap();
                }
            }),
        );
    }
    if wants("kinds") {
        inflate_by_kind(&files, &show, &best);
    }
    let one = ReadOptions {
        threads: Some(1),
        ..ReadOptions::default()
    };
    if wants("full") {
        show(
            "read_manifest, 1 thread",
            best(&|| {
                for data in &files {
                    std::hint::black_box(read_manifest(data, &one).unwrap());
                }
            }),
        );
    }
    if wants("projected") {
        let projected = ReadOptions {
            columns: Some(
                [
                    "data_file.file_path",
                    "data_file.file_format",
                    "data_file.partition",
                    "data_file.file_size_in_bytes",
                ]
                .map(String::from)
                .to_vec(),
            ),
            threads: Some(1),
            ..ReadOptions::default()
        };
        show(
            "read_manifest, planning columns, 1 thread",
            best(&|| {
                for data in &files {
                    std::hint::black_box(read_manifest(data, &projected).unwrap());
                }
            }),
        );
    }
    if wants("ids") {
        for ids in [&[1][..], &[2, 4]] {
            let projected = ReadOptions {
                stats_field_ids: Some(ids.into()),
                table_location: None,
                threads: Some(1),
                ..ReadOptions::default()
            };
            show(
                &format!("read_manifest, stats of field ids {ids:?}, 1 thread"),
                best(&|| {
                    for data in &files {
                        std::hint::black_box(read_manifest(data, &projected).unwrap());
                    }
                }),
            );
        }
    }
    if wants("threads") {
        let jobs: Vec<(&[u8], ReadOptions)> = files
            .iter()
            .map(|d| (d.as_slice(), ReadOptions::default()))
            .collect();
        show(
            "read_manifests, 2 threads",
            best(&|| {
                std::hint::black_box(read_manifests(&jobs, Some(2)).unwrap());
            }),
        );
    }
    if wants("split") {
        let two = ReadOptions {
            threads: Some(2),
            ..ReadOptions::default()
        };
        let (min1, med1, _) = best(&|| {
            std::hint::black_box(read_manifest(&files[0], &one).unwrap());
        });
        let (min2, med2, _) = best(&|| {
            std::hint::black_box(read_manifest(&files[0], &two).unwrap());
        });
        println!(
            "one manifest: 1 thread min {:.1} ms median {:.1} ms; 2 threads min {:.1} ms median {:.1} ms",
            min1 * 1e3,
            med1 * 1e3,
            min2 * 1e3,
            med2 * 1e3
        );
    }
}

/// CPU seconds of this process so far (user and system), from `/proc/self/stat`; 0 where it
/// cannot be read.
type Times = (f64, f64, f64);

/// Each deflate block's compressed bytes, inflated alone, per kind of its first deflate block.
fn inflate_by_kind(
    files: &[Vec<u8>],
    show: &dyn Fn(&str, Times),
    best: &dyn Fn(&dyn Fn()) -> Times,
) {
    let mut kinds: [Vec<&[u8]>; 3] = Default::default();
    for data in files {
        let container = Container::parse(data).unwrap();
        if container.header.codec != Codec::Deflate {
            continue;
        }
        let heads = container.block_headers().unwrap();
        for (i, &(offset, _)) in heads.iter().enumerate() {
            let end = heads.get(i + 1).map_or(data.len(), |h| h.0) - 16;
            // past the block's two varints (record count, byte size)
            let mut at = offset;
            for _ in 0..2 {
                while data[at] & 0x80 != 0 {
                    at += 1;
                }
                at += 1;
            }
            let block = &data[at..end];
            // BTYPE, bits 1-2 of the first byte: 0 stored, 1 fixed, 2 dynamic
            let kind = usize::from((block.first().copied().unwrap_or(0) >> 1) & 3).min(2);
            kinds[kind].push(block);
        }
    }
    for (kind, blocks) in ["stored", "fixed", "dynamic"].iter().zip(&kinds) {
        if blocks.is_empty() {
            continue;
        }
        let bytes: usize = blocks.iter().map(|b| b.len()).sum();
        let name = format!(
            "inflate {} {kind}-code blocks ({:.0} bytes each)",
            blocks.len(),
            bytes as f64 / blocks.len() as f64
        );
        let times = best(&|| {
            let mut out = Vec::new();
            for b in blocks {
                Codec::Deflate.decompress(b, &mut out).unwrap();
                std::hint::black_box(&out);
            }
        });
        show(&name, times);
        println!(
            "  {:.2} us per block (least CPU)",
            times.2 * 1e6 / blocks.len() as f64
        );
    }
}

fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // fields after the parenthesized command name: utime and stime are the 12th and 13th
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}
