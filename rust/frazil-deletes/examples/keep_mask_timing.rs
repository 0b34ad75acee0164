//! Times `keep_mask`/`keep_indices` on the benchmark's input (1M of 10M positions), for
//! profiling without Python: `cargo run --release -p frazil-deletes --example keep_mask_timing`.

use std::time::Instant;

use frazil_deletes::{position_delete, PositionBitmap};

fn main() -> Result<(), frazil_values::Error> {
    // Every tenth position, shuffled by a fixed stride so containers are mixed.
    let positions: Vec<u64> = (0..1_000_000u64)
        .map(|i| (i * 7_919) % 10_000_000)
        .collect();
    let b = PositionBitmap::from_positions(&positions)?;
    for _ in 0..8 {
        let t = Instant::now();
        let mask = position_delete::keep_mask(&b, 0, 10_000_000);
        let m = t.elapsed();
        let t = Instant::now();
        let idx = position_delete::keep_indices(&b, 0, 10_000_000);
        let k = t.elapsed();
        let t = Instant::now();
        let mut n = 0u64;
        b.for_each_in_range(0, 10_000_000, |p| n = n.wrapping_add(p));
        let r = t.elapsed();
        println!(
            "keep_mask {m:?} ({} set), keep_indices {k:?} ({}), iterate {r:?} ({n})",
            mask.count_set_bits(),
            idx.len()
        );
    }
    Ok(())
}
