//! 32-bit Murmur3, x86 variant, seed 0, with Iceberg's hashing rules per type (Appendix B).

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline(always)]
fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn fmix(mut h: u32, len: u32) -> u32 {
    h ^= len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Hash of the 8 little-endian bytes of `v`. Iceberg hashes every integer-like value this way
/// (int, date, boolean as 0/1: the "hashInt" of Appendix B is the long hash, as its test values
/// show), so promotion from int to long keeps bucket values.
#[inline(always)]
pub fn hash_long(v: i64) -> i32 {
    let h1 = mix_h1(0, mix_k1(v as u32));
    let h1 = mix_h1(h1, mix_k1((v >> 32) as u32));
    fmix(h1, 8) as i32
}

#[inline]
pub fn hash_bytes(data: &[u8]) -> i32 {
    hash_bytes_with_seed(data, 0)
}

/// [`hash_bytes`] from another seed (Java's `Hashing.murmur3_32_fixed(seed)`).
#[inline]
pub fn hash_bytes_with_seed(data: &[u8], seed: u32) -> i32 {
    let mut h1 = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k1 = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h1 = mix_h1(h1, mix_k1(k1));
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, b) in tail.iter().enumerate() {
            k1 |= (*b as u32) << (8 * i);
        }
        h1 ^= mix_k1(k1);
    }
    fmix(h1, data.len() as u32) as i32
}

/// Hash of a decimal's unscaled value, by its minimal two's-complement big-endian bytes.
#[inline]
pub fn hash_decimal(unscaled: i128) -> i32 {
    let mut buf = [0u8; 16];
    hash_bytes(frazil_values::decimal::min_be_bytes(unscaled, &mut buf))
}

/// Hash of a float or double: the double's IEEE bits, with every NaN and -0.0 canonicalized.
pub fn hash_double(v: f64) -> i32 {
    let bits = if v.is_nan() {
        0x7ff8_0000_0000_0000
    } else if v == 0.0 {
        0
    } else {
        v.to_bits() as i64
    };
    hash_long(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Test values of Appendix B.
    #[test]
    fn spec_vectors() {
        assert_eq!(hash_long(34), 2017239379);
        assert_eq!(hash_decimal(1420), -500754589);
        // 2017-11-16: the spec's value is that of the date's day count hashed as a long
        assert_eq!(hash_long(17486), -653330422);
        assert_eq!(hash_long(81_068_000_000), -662762989); // 22:31:08
        assert_eq!(hash_long(1_510_871_468_000_000), -2047944441);
        assert_eq!(hash_long(1_510_871_468_000_001), -1207196810);
        assert_eq!(hash_bytes(b"iceberg"), 1210000089);
        let uuid = 0xf79c3e09_677c_4bbd_a479_3f349cb785e7u128.to_be_bytes();
        assert_eq!(hash_bytes(&uuid), 1488055340);
        assert_eq!(hash_bytes(&[0, 1, 2, 3]), -188683207);
        // SMHasher's vectors for other seeds.
        assert_eq!(hash_bytes_with_seed(b"", 1) as u32, 0x514e_28b7);
        assert_eq!(hash_bytes_with_seed(b"", 0xffff_ffff) as u32, 0x81f1_6f39);
        assert_eq!(hash_long(1), 1392991556); // true
        assert_eq!(hash_double(1.0), -142385009);
        assert_eq!(hash_double(0.0), 1669671676);
        assert_eq!(hash_double(-0.0), 1669671676);
        assert_eq!(hash_double(f64::NAN), hash_double(-f64::NAN));
    }

    #[test]
    fn int_and_long_agree() {
        for v in [i32::MIN, -1, 0, 1, 34, i32::MAX] {
            assert_eq!(hash_long(v as i64), hash_long(v.into()));
        }
    }

    #[test]
    fn tails() {
        // Reference values of the canonical murmur3_x86_32 with seed 0.
        assert_eq!(hash_bytes(b""), 0);
        assert_eq!(hash_bytes(b"a") as u32, 0x3c25_69b2);
        assert_eq!(hash_bytes(b"abc") as u32, 0xb3dd_93fa);
        assert_eq!(hash_bytes(b"abcd") as u32, 0x43ed_676a);
    }
}
