//! Times the native kernels alone, without Python: `cargo run --release --example kernel_speed`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, Int64Array, StringArray, TimestampMicrosecondArray};
use frazil_transforms::{apply_array, Transform};

fn time(name: &str, t: &Transform, a: &ArrayRef) {
    let _ = apply_array(t, a, false).unwrap();
    let n = 5;
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(apply_array(t, a, false).unwrap());
    }
    let per = start.elapsed().as_secs_f64() / n as f64;
    println!(
        "{name:<24} {:>8.2} ms {:>8.0} M/s",
        per * 1e3,
        a.len() as f64 / per / 1e6
    );
}

fn main() {
    let n = 10_000_000i64;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as i64
    };
    let longs: ArrayRef = Arc::new(Int64Array::from((0..n).map(|_| next()).collect::<Vec<_>>()));
    let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(
        (0..n).map(|_| next() >> 14).collect::<Vec<_>>(),
    ));
    let alphabet: Vec<char> = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789é日😀"
        .chars()
        .collect();
    let strings: ArrayRef = Arc::new(StringArray::from(
        (0..1_000_000)
            .map(|_| {
                let len = (next() as u64 % 33) as usize;
                (0..len)
                    .map(|_| alphabet[(next() as u64 % alphabet.len() as u64) as usize])
                    .collect::<String>()
            })
            .collect::<Vec<_>>(),
    ));
    time("bucket[16] int64", &Transform::Bucket(16), &longs);
    time("bucket[16] string", &Transform::Bucket(16), &strings);
    time("truncate[8] string", &Transform::Truncate(8), &strings);
    time("truncate[10] int64", &Transform::Truncate(10), &longs);
    time("day timestamp", &Transform::Day, &ts);
    time("hour timestamp", &Transform::Hour, &ts);
    time("year timestamp", &Transform::Year, &ts);
    time("month timestamp", &Transform::Month, &ts);
}
