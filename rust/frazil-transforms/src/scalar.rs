//! Per-value transform functions, shared by the Arrow kernels, and the transform of one
//! `Literal`. Arithmetic mirrors the Java reference bit for bit, including its wrap-around on
//! overflow, so that partition values written by either agree.

use frazil_values::temporal::{
    self, MICROS_PER_DAY, MICROS_PER_HOUR, NANOS_PER_DAY, NANOS_PER_HOUR,
};
use frazil_values::{Error, Literal, PrimitiveType, Result, Type};

use crate::murmur3::{hash_bytes, hash_decimal, hash_long};
use crate::transform::Transform;

/// `(hash & Integer.MAX_VALUE) % N`.
#[inline(always)]
pub fn bucket_of_hash(hash: i32, n: u32) -> i32 {
    ((hash & i32::MAX) as u32 % n) as i32
}

/// `v - (((v % W) + W) % W)` in 32-bit arithmetic, wrapping as Java's int does.
#[inline(always)]
pub fn truncate_i32(v: i32, w: u32) -> i32 {
    let w = w as i32;
    v.wrapping_sub((v % w).wrapping_add(w) % w)
}

#[inline(always)]
pub fn truncate_i64(v: i64, w: u32) -> i64 {
    let w = w as i64;
    v.wrapping_sub((v % w).wrapping_add(w) % w)
}

/// Decimal truncation on the unscaled value (W is in units of the scale). Java computes this in
/// arbitrary precision; `None` is returned where the result leaves the 128-bit range.
#[inline(always)]
pub fn truncate_i128(v: i128, w: u32) -> Option<i128> {
    v.checked_sub(v.rem_euclid(w as i128))
}

/// The longest prefix of `s` with at most `w` code points.
#[inline]
pub fn truncate_str(s: &str, w: u32) -> &str {
    let w = w as usize;
    if s.len() <= w {
        return s; // at most one code point per byte
    }
    match s.char_indices().nth(w) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// The longest prefix of UTF-8 `bytes` with at most `w` code points. Steps from lead byte to
/// lead byte (w steps, not one per byte); on valid UTF-8 this is exactly `truncate_str`.
#[inline]
pub fn truncate_utf8_bytes(bytes: &[u8], w: u32) -> &[u8] {
    let w = w as usize;
    if bytes.len() <= w {
        return bytes;
    }
    let mut end = 0usize;
    for _ in 0..w {
        let Some(&lead) = bytes.get(end) else {
            return bytes;
        };
        end += match lead {
            0x00..=0xBF => 1, // ASCII (or a stray continuation byte, taken alone)
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
    }
    &bytes[..end.min(bytes.len())]
}

#[inline(always)]
pub fn truncate_bytes(b: &[u8], w: u32) -> &[u8] {
    &b[..b.len().min(w as usize)]
}

#[inline(always)]
pub fn micros_from_nanos(nanos: i64) -> i64 {
    nanos.div_euclid(1_000)
}

#[inline(always)]
pub fn days_from_micros(micros: i64) -> i32 {
    micros.div_euclid(MICROS_PER_DAY) as i32
}

#[inline(always)]
pub fn days_from_nanos(nanos: i64) -> i32 {
    nanos.div_euclid(NANOS_PER_DAY) as i32
}

/// Java casts the 64-bit hour count to int; far-out timestamps wrap there too.
#[inline(always)]
pub fn hours_from_micros(micros: i64) -> i32 {
    micros.div_euclid(MICROS_PER_HOUR) as i32
}

#[inline(always)]
pub fn hours_from_nanos(nanos: i64) -> i32 {
    nanos.div_euclid(NANOS_PER_HOUR) as i32
}

#[inline(always)]
pub fn years_from_days(days: i32) -> i32 {
    if FAST_CIVIL_DAYS.contains(&days) {
        civil_fast(days).0 - 1970
    } else {
        temporal::years_from_days(days as i64) as i32
    }
}

#[inline(always)]
pub fn months_from_days(days: i32) -> i32 {
    if FAST_CIVIL_DAYS.contains(&days) {
        let (year, month) = civil_fast(days);
        (year - 1970) * 12 + month as i32 - 1
    } else {
        temporal::months_from_days(days as i64) as i32
    }
}

/// The days from 1970-01-01 that `civil_fast` handles: every day of every timestamp (micro- or
/// nanosecond) Iceberg can hold, and dates within about 1.4 million years of today.
pub const FAST_CIVIL_DAYS: std::ops::RangeInclusive<i32> = -536_895_458..=536_846_365;

/// 400-year eras added so that the day count is non-negative, and below 2^30 over the range.
const ERAS: i32 = 3_670;

/// (year, month) of a day count in `FAST_CIVIL_DAYS`, in 32-bit arithmetic only (Neri and
/// Schneider, "Euclidean affine functions and their application to calendar algorithms", 2022),
/// so that array loops vectorize; `temporal::civil_from_days` is the general form.
#[inline(always)]
pub fn civil_fast(days: i32) -> (i32, u32) {
    let n = (days as i64 + 719_468 + 146_097 * ERAS as i64) as u32; // days from 0000-03-01
    let n1 = 4 * n + 3;
    let century = n1 / 146_097;
    let n2 = (n1 % 146_097) | 3;
    let p2 = 2_939_745u64 * n2 as u64;
    let year_of_century = (p2 >> 32) as u32;
    let day_of_year = (p2 as u32) / 2_939_745 / 4; // from March 1
    let month = (2_141 * day_of_year + 197_913) >> 16; // 3..=14
    let january_or_february = day_of_year >= 306;
    let year =
        (100 * century + year_of_century) as i32 + i32::from(january_or_february) - 400 * ERAS;
    let month = if january_or_february {
        month - 12
    } else {
        month
    };
    (year, month)
}

/// The Iceberg hash of one value (Appendix B), for the types `bucket` accepts.
pub fn hash_literal(value: &Literal) -> Result<i32> {
    Ok(match value {
        Literal::Int(v) | Literal::Date(v) => hash_long(*v as i64),
        Literal::Long(v) | Literal::Time(v) | Literal::Timestamp(v) | Literal::TimestampTz(v) => {
            hash_long(*v)
        }
        Literal::TimestampNs(v) | Literal::TimestampTzNs(v) => hash_long(micros_from_nanos(*v)),
        Literal::Decimal(v) => hash_decimal(*v),
        Literal::String(s) => hash_bytes(s.as_bytes()),
        Literal::Uuid(u) => hash_bytes(&u.to_be_bytes()),
        Literal::Fixed(b) | Literal::Binary(b) => hash_bytes(b),
        other => {
            return Err(Error::unsupported(format!(
                "{} values cannot be hashed for bucketing",
                other.kind()
            )))
        }
    })
}

/// Days from the epoch of a date or timestamp literal, and its hour count where it has one.
fn days_and_hours(value: &Literal) -> Option<(i32, Option<i32>)> {
    Some(match value {
        Literal::Date(d) => (*d, None),
        Literal::Timestamp(t) | Literal::TimestampTz(t) => {
            (days_from_micros(*t), Some(hours_from_micros(*t)))
        }
        Literal::TimestampNs(t) | Literal::TimestampTzNs(t) => {
            (days_from_nanos(*t), Some(hours_from_nanos(*t)))
        }
        _ => return None,
    })
}

impl Transform {
    /// Applies this transform to one value of type `source`; `None` is null.
    pub fn apply_literal(
        &self,
        value: Option<&Literal>,
        source: &PrimitiveType,
    ) -> Result<Option<Literal>> {
        let source_type = Type::Primitive(source.clone());
        if !self.can_transform(&source_type) {
            return Err(self.cannot_transform(&source_type));
        }
        let Some(value) = value else {
            return Ok(None);
        };
        value.validate_primitive(source)?;
        let mismatch = || Error::invalid(format!("{} value is not a {source}", value.kind()));
        Ok(Some(match self {
            Transform::Void => return Ok(None),
            Transform::Identity => value.clone(),
            Transform::Bucket(n) => Literal::Int(bucket_of_hash(hash_literal(value)?, *n)),
            Transform::Truncate(w) => match value {
                Literal::Int(v) => Literal::Int(truncate_i32(*v, *w)),
                Literal::Long(v) => Literal::Long(truncate_i64(*v, *w)),
                Literal::Decimal(v) => {
                    Literal::Decimal(truncate_i128(*v, *w).ok_or_else(|| {
                        Error::invalid(format!("truncating decimal {v} by {w} overflows"))
                    })?)
                }
                Literal::String(s) => Literal::String(truncate_str(s, *w).to_string()),
                Literal::Binary(b) => Literal::Binary(truncate_bytes(b, *w).to_vec()),
                _ => return Err(mismatch()),
            },
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
                let (days, hours) = days_and_hours(value).ok_or_else(mismatch)?;
                match self {
                    Transform::Year => Literal::Int(years_from_days(days)),
                    Transform::Month => Literal::Int(months_from_days(days)),
                    Transform::Day => Literal::Date(days),
                    _ => Literal::Int(hours.ok_or_else(mismatch)?),
                }
            }
            Transform::Unknown(_) => unreachable!("can_transform is false for unknown transforms"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn apply(t: &str, v: Literal, ty: &str) -> Literal {
        Transform::parse(t)
            .unwrap()
            .apply_literal(Some(&v), &ty.parse().unwrap())
            .unwrap()
            .unwrap()
    }

    // Examples of the spec's truncate table and Appendix B.
    #[test]
    fn spec_examples() {
        assert_eq!(
            apply("truncate[10]", Literal::Int(1), "int"),
            Literal::Int(0)
        );
        assert_eq!(
            apply("truncate[10]", Literal::Int(-1), "int"),
            Literal::Int(-10)
        );
        assert_eq!(
            apply("truncate[10]", Literal::Long(-1), "long"),
            Literal::Long(-10)
        );
        assert_eq!(
            apply("truncate[50]", Literal::Decimal(1065), "decimal(9,2)"),
            Literal::Decimal(1050)
        );
        assert_eq!(
            apply("truncate[3]", Literal::String("iceberg".into()), "string"),
            Literal::String("ice".into())
        );
        assert_eq!(
            apply(
                "truncate[3]",
                Literal::Binary(vec![1, 2, 3, 4, 5]),
                "binary"
            ),
            Literal::Binary(vec![1, 2, 3])
        );
        // bucket of 34 in int and long agree
        let n = "bucket[16]";
        assert_eq!(
            apply(n, Literal::Int(34), "int"),
            apply(n, Literal::Long(34), "long")
        );
        assert_eq!(
            apply("bucket[2147483647]", Literal::Long(34), "long"),
            Literal::Int(2017239379)
        );
    }

    #[test]
    fn dates_before_1970() {
        // 1969-12-31T23:59:59.999999
        let t = Literal::Timestamp(-1);
        assert_eq!(apply("year", t.clone(), "timestamp"), Literal::Int(-1));
        assert_eq!(apply("month", t.clone(), "timestamp"), Literal::Int(-1));
        assert_eq!(apply("day", t.clone(), "timestamp"), Literal::Date(-1));
        assert_eq!(apply("hour", t, "timestamp"), Literal::Int(-1));
        assert_eq!(apply("year", Literal::Date(-365), "date"), Literal::Int(-1));
        assert_eq!(apply("year", Literal::Date(-366), "date"), Literal::Int(-2));
        assert_eq!(apply("month", Literal::Date(-31), "date"), Literal::Int(-1));
        assert_eq!(apply("month", Literal::Date(-32), "date"), Literal::Int(-2));
        assert_eq!(
            apply("day", Literal::TimestampNs(-1), "timestamp_ns"),
            Literal::Date(-1)
        );
    }

    #[test]
    fn strings_truncate_by_code_points() {
        assert_eq!(truncate_str("héllo", 2), "hé");
        assert_eq!(truncate_str("😀😀😀", 2), "😀😀");
        assert_eq!(truncate_str("", 2), "");
        assert_eq!(
            truncate_utf8_bytes("😀é😀x".as_bytes(), 3),
            "😀é😀".as_bytes()
        );
    }

    #[test]
    fn nulls_and_bad_types() {
        let b = Transform::Bucket(4);
        assert_eq!(b.apply_literal(None, &PrimitiveType::Int).unwrap(), None);
        assert!(b
            .apply_literal(Some(&Literal::Int(1)), &PrimitiveType::Float)
            .is_err());
        assert!(b
            .apply_literal(Some(&Literal::Long(1)), &PrimitiveType::Int)
            .is_err());
        assert!(Transform::Hour
            .apply_literal(Some(&Literal::Date(1)), &PrimitiveType::Date)
            .is_err());
    }

    proptest! {
        #[test]
        fn bucket_in_range(v: i64, n in 1u32..=i32::MAX as u32) {
            let b = bucket_of_hash(hash_long(v), n);
            prop_assert!(b >= 0 && (b as u32) < n);
        }

        #[test]
        fn truncate_is_floor_to_multiple(v in -1_000_000_000i64..1_000_000_000, w in 1u32..100_000) {
            let t = truncate_i64(v, w);
            prop_assert!(t <= v && v - t < w as i64 && t.rem_euclid(w as i64) == 0);
            prop_assert_eq!(truncate_i64(t, w), t);
        }

        #[test]
        fn string_truncation_is_a_prefix(s in ".*", w in 1u32..20) {
            let t = truncate_str(&s, w);
            prop_assert!(s.starts_with(t));
            prop_assert!(t.chars().count() == s.chars().count().min(w as usize));
            prop_assert_eq!(truncate_utf8_bytes(s.as_bytes(), w), t.as_bytes());
        }

        #[test]
        fn fast_civil_matches_the_general_form(
            days in prop_oneof![
                FAST_CIVIL_DAYS,
                -1_000_000i32..1_000_000,
                Just(*FAST_CIVIL_DAYS.start()),
                Just(*FAST_CIVIL_DAYS.end()),
            ]
        ) {
            let (y, m, _) = temporal::civil_from_days(days as i64);
            prop_assert_eq!(civil_fast(days), (y as i32, m));
        }

        #[test]
        fn years_and_months_beyond_the_fast_range(days: i32) {
            prop_assert_eq!(years_from_days(days) as i64, temporal::years_from_days(days as i64));
            prop_assert_eq!(months_from_days(days) as i64, temporal::months_from_days(days as i64));
        }

        #[test]
        fn temporal_transforms_are_monotonic(a: i64, b: i64) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(days_from_micros(lo) <= days_from_micros(hi));
            let (dl, dh) = (days_from_micros(lo), days_from_micros(hi));
            prop_assert!(years_from_days(dl) <= years_from_days(dh));
            prop_assert!(months_from_days(dl) <= months_from_days(dh));
        }
    }
}
