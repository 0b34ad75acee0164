//! MurmurHash3 x64 128-bit (Austin Appleby's public-domain algorithm), the hash Apache
//! DataSketches applies to every item it sketches. Only the first 64-bit half is returned: the
//! theta sketch keeps nothing else.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

fn le_u64(bytes: &[u8]) -> u64 {
    // Tails are shorter than 8 bytes: read them zero-padded, as the algorithm's switch does.
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(buf)
}

/// The first 64 bits (`h1`) of MurmurHash3_x64_128 of `data` with `seed`.
pub fn hash_x64_128_h1(data: &[u8], seed: u64) -> u64 {
    let mut h1 = seed;
    let mut h2 = seed;
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let k1 = le_u64(&block[..8]);
        let k2 = le_u64(&block[8..]);
        h1 ^= mix_k1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(le_u64(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(le_u64(&tail[..tail.len().min(8)]));
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1.wrapping_add(h2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vectors() {
        // Published MurmurHash3_x64_128 outputs (h1 half, seed 0), as printed by the reference
        // C++ implementation for these inputs.
        assert_eq!(hash_x64_128_h1(b"", 0), 0);
        assert_eq!(
            hash_x64_128_h1(b"The quick brown fox jumps over the lazy dog", 0),
            0xe34b_bc7b_bc07_1b6c
        );
    }
}
