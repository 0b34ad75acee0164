//! Binary single-value serialization (spec Appendix D), as used for manifest bounds.

use crate::bound::{self, Val};
use crate::decimal;
use crate::error::{Error, Result};
use crate::literal::Literal;
use crate::types::PrimitiveType;

/// Serializes a primitive literal of type `ty`.
pub fn to_bytes(value: &Literal, ty: &PrimitiveType) -> Result<Vec<u8>> {
    value.validate_primitive(ty)?;
    Ok(match value {
        Literal::Boolean(b) => vec![u8::from(*b)],
        Literal::Int(v) | Literal::Date(v) => v.to_le_bytes().to_vec(),
        Literal::Long(v)
        | Literal::Time(v)
        | Literal::Timestamp(v)
        | Literal::TimestampTz(v)
        | Literal::TimestampNs(v)
        | Literal::TimestampTzNs(v) => v.to_le_bytes().to_vec(),
        Literal::Float(v) => v.to_le_bytes().to_vec(),
        Literal::Double(v) => v.to_le_bytes().to_vec(),
        Literal::Decimal(v) => {
            let mut buf = [0u8; 16];
            decimal::min_be_bytes(*v, &mut buf).to_vec()
        }
        Literal::String(s) => s.as_bytes().to_vec(),
        Literal::Uuid(u) => u.to_be_bytes().to_vec(),
        Literal::Fixed(b) | Literal::Binary(b) => b.clone(),
        Literal::Struct(_) | Literal::List(_) | Literal::Map(_) => {
            return Err(Error::unsupported(format!(
                "{} values have no binary single-value form",
                value.kind()
            )))
        }
    })
}

/// Deserializes a value of type `ty`: [`bound::decode`] (lengths and the spec's promotions),
/// then the checks a full value needs (UTF-8, a fixed length, decimal precision, time range).
pub fn from_bytes(data: &[u8], ty: &PrimitiveType) -> Result<Literal> {
    use PrimitiveType as P;
    let value = match (ty, bound::decode(data, ty)?) {
        (P::Boolean, Val::Bool(b)) => Literal::Boolean(b),
        (P::Int, Val::I32(v)) => Literal::Int(v),
        (P::Date, Val::I32(v)) => Literal::Date(v),
        (P::Long, Val::I64(v)) => Literal::Long(v),
        (P::Time, Val::I64(v)) => Literal::Time(v),
        (P::Timestamp, Val::I64(v)) => Literal::Timestamp(v),
        (P::TimestampTz, Val::I64(v)) => Literal::TimestampTz(v),
        (P::TimestampNs, Val::I64(v)) => Literal::TimestampNs(v),
        (P::TimestampTzNs, Val::I64(v)) => Literal::TimestampTzNs(v),
        (P::Float, Val::F32(v)) => Literal::Float(v),
        (P::Double, Val::F64(v)) => Literal::Double(v),
        (P::Decimal { .. }, Val::I128(v)) => Literal::Decimal(v),
        (P::Uuid, Val::U128(v)) => Literal::Uuid(v),
        (P::String, Val::Bytes(b)) => Literal::String(
            std::str::from_utf8(b)
                .map_err(|e| Error::decode(format!("string value is not UTF-8: {e}")))?
                .to_string(),
        ),
        (P::Fixed(len), Val::Bytes(b)) => {
            if b.len() as u64 != *len {
                return Err(Error::decode(format!(
                    "a {ty} value needs {len} bytes, got {}",
                    b.len()
                )));
            }
            Literal::Fixed(b.to_vec())
        }
        (P::Binary, Val::Bytes(b)) => Literal::Binary(b.to_vec()),
        (_, v) => {
            return Err(Error::decode(format!(
                "a {ty} value cannot be decoded as {v:?}"
            )))
        }
    };
    value
        .validate_primitive(ty)
        .map_err(|e| Error::decode(e.message))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporal::{MICROS_PER_DAY, NANOS_PER_DAY};
    use proptest::prelude::*;

    fn t(s: &str) -> PrimitiveType {
        s.parse().unwrap()
    }

    #[test]
    fn spec_forms() {
        assert_eq!(
            to_bytes(&Literal::Int(34), &t("int")).unwrap(),
            [34, 0, 0, 0]
        );
        assert_eq!(
            to_bytes(&Literal::Decimal(1420), &t("decimal(9,2)")).unwrap(),
            [0x05, 0x8c]
        );
        let uuid = 0xf79c3e09_677c_4bbd_a479_3f349cb785e7u128;
        assert_eq!(
            to_bytes(&Literal::Uuid(uuid), &t("uuid")).unwrap(),
            [
                0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7,
                0x85, 0xE7
            ]
        );
        assert_eq!(
            from_bytes(&[2], &t("boolean")).unwrap(),
            Literal::Boolean(true)
        );
    }

    #[test]
    fn promoted_bounds_are_read_wide() {
        assert_eq!(
            from_bytes(&(-5i32).to_le_bytes(), &t("long")).unwrap(),
            Literal::Long(-5)
        );
        assert_eq!(
            from_bytes(&1.5f32.to_le_bytes(), &t("double")).unwrap(),
            Literal::Double(1.5)
        );
        assert_eq!(
            from_bytes(&1i32.to_le_bytes(), &t("timestamp")).unwrap(),
            Literal::Timestamp(MICROS_PER_DAY)
        );
        assert_eq!(
            from_bytes(&(-1i32).to_le_bytes(), &t("timestamp_ns")).unwrap(),
            Literal::TimestampNs(-NANOS_PER_DAY)
        );
        // a timestamptz cannot have been a date
        assert!(from_bytes(&1i32.to_le_bytes(), &t("timestamptz")).is_err());
    }

    #[test]
    fn strict_decoding() {
        assert!(from_bytes(&[], &t("boolean")).is_err());
        assert!(from_bytes(&[0, 0, 0], &t("int")).is_err());
        assert!(from_bytes(&[0; 5], &t("long")).is_err());
        assert!(from_bytes(&[0; 15], &t("uuid")).is_err());
        assert!(from_bytes(&[0; 3], &t("fixed[4]")).is_err());
        assert!(from_bytes(&[], &t("decimal(9,2)")).is_err());
        assert!(from_bytes(&[0; 17], &t("decimal(38,2)")).is_err());
        // 10^9 does not fit in 9 digits
        assert!(from_bytes(&[0x3b, 0x9a, 0xca, 0x00], &t("decimal(9,2)")).is_err());
        assert!(from_bytes(&[0xff, 0xfe], &t("string")).is_err());
        assert!(from_bytes(&(-1i64).to_le_bytes(), &t("time")).is_err());
        assert!(from_bytes(&[0], &t("unknown")).is_err());
    }

    fn primitive_literal() -> impl Strategy<Value = (PrimitiveType, Literal)> {
        prop_oneof![
            any::<bool>().prop_map(|v| (t("boolean"), Literal::Boolean(v))),
            any::<i32>().prop_map(|v| (t("int"), Literal::Int(v))),
            any::<i64>().prop_map(|v| (t("long"), Literal::Long(v))),
            any::<f32>().prop_map(|v| (t("float"), Literal::Float(v))),
            any::<f64>().prop_map(|v| (t("double"), Literal::Double(v))),
            (-(10i128.pow(38) - 1)..10i128.pow(38))
                .prop_map(|v| (t("decimal(38,5)"), Literal::Decimal(v))),
            any::<i32>().prop_map(|v| (t("date"), Literal::Date(v))),
            (0..MICROS_PER_DAY).prop_map(|v| (t("time"), Literal::Time(v))),
            any::<i64>().prop_map(|v| (t("timestamp"), Literal::Timestamp(v))),
            any::<i64>().prop_map(|v| (t("timestamptz_ns"), Literal::TimestampTzNs(v))),
            ".*".prop_map(|v| (t("string"), Literal::String(v))),
            any::<u128>().prop_map(|v| (t("uuid"), Literal::Uuid(v))),
            proptest::collection::vec(any::<u8>(), 7)
                .prop_map(|v| (t("fixed[7]"), Literal::Fixed(v))),
            proptest::collection::vec(any::<u8>(), 0..40)
                .prop_map(|v| (t("binary"), Literal::Binary(v))),
        ]
    }

    proptest! {
        #[test]
        fn round_trip((ty, value) in primitive_literal()) {
            let bytes = to_bytes(&value, &ty).unwrap();
            let back = from_bytes(&bytes, &ty).unwrap();
            match (&value, &back) {
                (Literal::Float(a), Literal::Float(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                (Literal::Double(a), Literal::Double(b)) => prop_assert_eq!(a.to_bits(), b.to_bits()),
                _ => prop_assert_eq!(value, back),
            }
        }

        #[test]
        fn decoding_never_panics(data in proptest::collection::vec(any::<u8>(), 0..20), (ty, _) in primitive_literal()) {
            let _ = from_bytes(&data, &ty);
        }
    }
}
