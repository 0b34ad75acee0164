//! Decimal helpers: minimal two's-complement big-endian bytes (Appendix B and D) and the
//! decimal string form of JSON single values.

use crate::error::{Error, Result};

/// `10^p` for p in 0..=38.
pub fn pow10(p: u32) -> u128 {
    10u128.pow(p)
}

pub fn fits_precision(unscaled: i128, precision: u32) -> bool {
    precision >= 39 || unscaled.unsigned_abs() < pow10(precision)
}

/// Writes the minimal two's-complement big-endian form of `v` into `buf` and returns its tail
/// holding that form (Java's `BigInteger.toByteArray`): the fewest bytes that keep the sign bit.
#[inline]
pub fn min_be_bytes(v: i128, buf: &mut [u8; 16]) -> &[u8] {
    *buf = v.to_be_bytes();
    // Significant bits without the sign: those of v, or of !v for a negative v.
    let magnitude = if v < 0 { !v } else { v };
    let bits = 128 - magnitude.leading_zeros() as usize + 1; // plus the sign bit
    let len = bits.div_ceil(8).min(16);
    &buf[16 - len..]
}

/// Reads a big-endian two's-complement integer of 1 to 16 bytes, sign-extending it.
pub fn from_be_bytes(bytes: &[u8]) -> Result<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return Err(Error::decode(format!(
            "a decimal needs 1 to 16 bytes, got {}",
            bytes.len()
        )));
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0x00 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

/// The JSON string form of Appendix D: plain notation with exactly `scale` fraction digits for a
/// non-negative scale, scientific notation whose exponent is the negated scale otherwise.
pub fn to_string(unscaled: i128, scale: i32) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let digits = unscaled.unsigned_abs().to_string();
    if scale < 0 {
        return format!("{sign}{digits}E+{}", -(scale as i64));
    }
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
    }
}

/// Parses a decimal string (plain or scientific) whose scale must equal `scale`, as Java's
/// `BigDecimal` would read it; returns the unscaled value.
pub fn parse(text: &str, scale: i32) -> Result<i128> {
    let err = || Error::decode(format!("invalid decimal string {text:?}"));
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => {
            let exp_text = &rest[i + 1..];
            let digits = exp_text.strip_prefix(['+', '-']).unwrap_or(exp_text);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            let exp: i64 = exp_text.parse().map_err(|_| err())?;
            (&rest[..i], exp)
        }
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err());
    }
    let mut unscaled: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        if !b.is_ascii_digit() {
            return Err(err());
        }
        unscaled = unscaled
            .checked_mul(10)
            .and_then(|v| v.checked_add((b - b'0') as i128))
            .ok_or_else(|| Error::decode(format!("decimal {text:?} has too many digits")))?;
    }
    let parsed_scale = frac_part.len() as i64 - exponent;
    if parsed_scale != scale as i64 {
        return Err(Error::decode(format!(
            "decimal {text:?} has scale {parsed_scale}, the type's scale is {scale}"
        )));
    }
    Ok(if negative { -unscaled } else { unscaled })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn min(v: i128) -> Vec<u8> {
        let mut buf = [0; 16];
        min_be_bytes(v, &mut buf).to_vec()
    }

    #[test]
    fn minimal_bytes_match_java_biginteger() {
        assert_eq!(min(0), vec![0x00]);
        assert_eq!(min(1), vec![0x01]);
        assert_eq!(min(-1), vec![0xff]);
        assert_eq!(min(127), vec![0x7f]);
        assert_eq!(min(128), vec![0x00, 0x80]);
        assert_eq!(min(-128), vec![0x80]);
        assert_eq!(min(-129), vec![0xff, 0x7f]);
        assert_eq!(min(1420), vec![0x05, 0x8c]);
        assert_eq!(min(i128::MAX).len(), 16);
        assert_eq!(min(i128::MIN).len(), 16);
    }

    #[test]
    fn strings() {
        assert_eq!(to_string(1420, 2), "14.20");
        assert_eq!(to_string(-5, 2), "-0.05");
        assert_eq!(to_string(0, 3), "0.000");
        assert_eq!(to_string(2, -20), "2E+20");
        assert_eq!(to_string(7, 0), "7");
        assert_eq!(parse("14.20", 2).unwrap(), 1420);
        assert_eq!(parse("-0.05", 2).unwrap(), -5);
        assert_eq!(parse("2E+20", -20).unwrap(), 2);
        assert_eq!(parse("2.5E+2", -1).unwrap(), 25);
        assert_eq!(parse("1E-10", 10).unwrap(), 1);
        assert!(parse("14.2", 2).is_err());
        assert!(parse("abc", 0).is_err());
        assert!(parse("", 0).is_err());
        assert!(parse(".", 0).is_err());
        assert!(parse("1e", 0).is_err());
        assert!(parse("1-2", 0).is_err());
    }
}
