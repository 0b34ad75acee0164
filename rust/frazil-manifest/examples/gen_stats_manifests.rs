//! Writes the issue-14 table's manifests (tests/common/stats_table.rs) into a directory, for
//! `decode_speed`: `cargo run --release -p frazil-manifest --example gen_stats_manifests --
//! <dir> [manifests=100] [entries=10000] [columns=8]`.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/stats_table.rs"]
mod stats_table;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("an output directory"));
    let mut num = |d: usize| args.next().map_or(d, |a| a.parse().unwrap());
    let (manifests, entries, columns) = (num(100), num(10_000), num(8));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = stats_table::Shape {
        columns,
        ..stats_table::Shape::issue(entries)
    };
    let mut total = 0;
    for m in 0..manifests {
        let bytes = stats_table::manifest(0x5CA7, m, &shape);
        total += bytes.len();
        std::fs::write(dir.join(format!("manifest-{m:03}.avro")), bytes).unwrap();
    }
    println!(
        "{manifests} manifests x {entries} entries, {:.1} MB",
        total as f64 / 1e6
    );
}
