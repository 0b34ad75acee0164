//! JSON single-value serialization (spec Appendix D): defaults, partition values in metadata,
//! and the REST protocol all carry values in this form.

use serde_json::{Map, Number, Value};

use crate::decimal;
use crate::error::{Error, Result};
use crate::literal::Literal;
use crate::temporal;
use crate::types::{PrimitiveType, Type};

/// Serializes a value (or null) of type `ty`.
pub fn to_json(value: Option<&Literal>, ty: &Type) -> Result<Value> {
    let Some(value) = value else {
        return Ok(Value::Null);
    };
    value.validate(ty)?;
    Ok(match (value, ty) {
        (Literal::Struct(values), Type::Struct(s)) => {
            let mut obj = Map::new();
            // Null fields are left out: a missing field reads back as null.
            for (v, field) in values.iter().zip(&s.fields) {
                if let Some(v) = v {
                    obj.insert(field.id.to_string(), to_json(Some(v), &field.field_type)?);
                }
            }
            Value::Object(obj)
        }
        (Literal::List(values), Type::List(l)) => Value::Array(
            values
                .iter()
                .map(|v| to_json(v.as_ref(), &l.element))
                .collect::<Result<_>>()?,
        ),
        (Literal::Map(entries), Type::Map(m)) => {
            let keys = entries
                .iter()
                .map(|(k, _)| to_json(Some(k), &m.key))
                .collect::<Result<_>>()?;
            let values = entries
                .iter()
                .map(|(_, v)| to_json(v.as_ref(), &m.value))
                .collect::<Result<_>>()?;
            let mut obj = Map::new();
            obj.insert("keys".into(), Value::Array(keys));
            obj.insert("values".into(), Value::Array(values));
            Value::Object(obj)
        }
        (v, Type::Primitive(p)) => primitive_to_json(v, p)?,
        _ => unreachable!("validate() checked the literal against its type"),
    })
}

/// JSON has no NaN or infinities; they are written as the strings Java's Jackson writes.
fn float_to_json(v: f64, shortest: String) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        // Going through the shortest decimal text keeps a float's JSON as short as Java's
        // (`0.1` rather than the widened `0.10000000149011612`).
        let wide: f64 = shortest.parse().unwrap_or(v);
        Number::from_f64(wide).map_or(Value::Null, Value::Number)
    }
}

fn hex(bytes: &[u8]) -> Value {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    Value::String(s)
}

fn uuid_string(u: u128) -> String {
    let h = format!("{u:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn primitive_to_json(value: &Literal, ty: &PrimitiveType) -> Result<Value> {
    Ok(match (value, ty) {
        (Literal::Boolean(b), _) => Value::Bool(*b),
        (Literal::Int(v), _) => Value::from(*v),
        (Literal::Long(v), _) => Value::from(*v),
        (Literal::Float(v), _) => float_to_json(*v as f64, v.to_string()),
        (Literal::Double(v), _) => float_to_json(*v, v.to_string()),
        (Literal::Decimal(v), PrimitiveType::Decimal { scale, .. }) => {
            Value::String(decimal::to_string(*v, *scale))
        }
        (Literal::Date(d), _) => Value::String(temporal::format_date(*d as i64)),
        (Literal::Time(t), _) => Value::String(temporal::format_time_of_day(
            *t,
            temporal::MICROS_PER_SECOND,
            6,
        )),
        (Literal::Timestamp(t), _) => Value::String(temporal::format_timestamp(*t, false, false)),
        (Literal::TimestampTz(t), _) => Value::String(temporal::format_timestamp(*t, false, true)),
        (Literal::TimestampNs(t), _) => Value::String(temporal::format_timestamp(*t, true, false)),
        (Literal::TimestampTzNs(t), _) => Value::String(temporal::format_timestamp(*t, true, true)),
        (Literal::String(s), _) => Value::String(s.clone()),
        (Literal::Uuid(u), _) => Value::String(uuid_string(*u)),
        (Literal::Fixed(b), _) | (Literal::Binary(b), _) => hex(b),
        (v, t) => {
            return Err(Error::unsupported(format!(
                "no JSON single-value form for a {} value of type {t}",
                v.kind()
            )))
        }
    })
}

/// Deserializes a value (or null) of type `ty`.
/// [`from_json`] of JSON text.
pub fn from_json_str(text: &str, ty: &Type) -> Result<Option<Literal>> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::decode(format!("invalid JSON {text:?}: {e}")))?;
    from_json(&value, ty)
}

pub fn from_json(value: &Value, ty: &Type) -> Result<Option<Literal>> {
    if value.is_null() {
        return Ok(None);
    }
    let literal = match ty {
        Type::Primitive(p) => primitive_from_json(value, p)?,
        Type::Struct(s) => {
            let obj = value
                .as_object()
                .ok_or_else(|| mismatch(value, "a JSON object keyed by field id"))?;
            let mut values = Vec::with_capacity(s.fields.len());
            for field in &s.fields {
                let v = match obj.get(&field.id.to_string()) {
                    Some(v) => from_json(v, &field.field_type)?,
                    None => None,
                };
                values.push(v);
            }
            Literal::Struct(values)
        }
        Type::List(l) => {
            let items = value
                .as_array()
                .ok_or_else(|| mismatch(value, "a JSON array"))?;
            Literal::List(
                items
                    .iter()
                    .map(|v| from_json(v, &l.element))
                    .collect::<Result<_>>()?,
            )
        }
        Type::Map(m) => {
            let obj = value
                .as_object()
                .ok_or_else(|| mismatch(value, "an object of \"keys\" and \"values\""))?;
            let keys = obj
                .get("keys")
                .and_then(Value::as_array)
                .ok_or_else(|| mismatch(value, "an object with a \"keys\" array"))?;
            let values = obj
                .get("values")
                .and_then(Value::as_array)
                .ok_or_else(|| mismatch(value, "an object with a \"values\" array"))?;
            if keys.len() != values.len() {
                return Err(Error::decode(format!(
                    "map has {} keys but {} values",
                    keys.len(),
                    values.len()
                )));
            }
            let mut entries = Vec::with_capacity(keys.len());
            for (k, v) in keys.iter().zip(values) {
                let key = from_json(k, &m.key)?.ok_or_else(|| Error::decode("map key is null"))?;
                entries.push((key, from_json(v, &m.value)?));
            }
            Literal::Map(entries)
        }
    };
    literal.validate(ty).map_err(|e| Error::decode(e.message))?;
    Ok(Some(literal))
}

fn mismatch(value: &Value, expected: &str) -> Error {
    Error::decode(format!("expected {expected}, got {value}"))
}

fn expect_str<'a>(value: &'a Value, ty: &PrimitiveType) -> Result<&'a str> {
    value
        .as_str()
        .ok_or_else(|| mismatch(value, &format!("a JSON string for {ty}")))
}

fn float_from_json(value: &Value, ty: &PrimitiveType) -> Result<f64> {
    match value {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| mismatch(value, &format!("a number for {ty}"))),
        Value::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(mismatch(value, &format!("a number for {ty}"))),
        },
        _ => Err(mismatch(value, &format!("a number for {ty}"))),
    }
}

fn unhex(text: &str, ty: &PrimitiveType) -> Result<Vec<u8>> {
    let err = || Error::decode(format!("invalid hexadecimal {ty} value {text:?}"));
    if text.len() % 2 != 0 {
        return Err(err());
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| {
            let hi = (pair[0] as char).to_digit(16).ok_or_else(err)?;
            let lo = (pair[1] as char).to_digit(16).ok_or_else(err)?;
            Ok((hi * 16 + lo) as u8)
        })
        .collect()
}

pub fn parse_uuid(text: &str) -> Result<u128> {
    let err = || Error::decode(format!("invalid uuid {text:?}"));
    let b = text.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return Err(err());
    }
    let digits: String = text.chars().filter(|c| *c != '-').collect();
    if digits.len() != 32 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(err());
    }
    u128::from_str_radix(&digits, 16).map_err(|_| err())
}

fn primitive_from_json(value: &Value, ty: &PrimitiveType) -> Result<Literal> {
    use PrimitiveType as P;
    let int = |what: &str| {
        value
            .as_i64()
            .filter(|_| value.is_i64() || value.is_u64())
            .ok_or_else(|| mismatch(value, &format!("a JSON integer for {what}")))
    };
    Ok(match ty {
        P::Unknown => {
            return Err(Error::decode(format!(
                "an unknown-typed value must be null, got {value}"
            )))
        }
        // The spec requires null defaults for these types, so no JSON single value is read.
        P::Variant | P::Geometry { .. } | P::Geography { .. } => {
            return Err(Error::unsupported(format!(
                "{ty} values have no supported JSON single-value form yet"
            )))
        }
        P::Boolean => Literal::Boolean(
            value
                .as_bool()
                .ok_or_else(|| mismatch(value, "a JSON boolean"))?,
        ),
        P::Int => Literal::Int(
            i32::try_from(int("int")?)
                .map_err(|_| Error::decode(format!("{value} is out of range for int")))?,
        ),
        P::Long => Literal::Long(int("long")?),
        P::Float => Literal::Float(float_from_json(value, ty)? as f32),
        P::Double => Literal::Double(float_from_json(value, ty)?),
        P::Decimal { scale, .. } => {
            Literal::Decimal(decimal::parse(expect_str(value, ty)?, *scale)?)
        }
        P::Date => Literal::Date(temporal::parse_date(expect_str(value, ty)?)?),
        P::Time => Literal::Time(temporal::parse_time(expect_str(value, ty)?)?),
        P::Timestamp => Literal::Timestamp(temporal::parse_timestamp(
            expect_str(value, ty)?,
            false,
            false,
        )?),
        P::TimestampTz => Literal::TimestampTz(temporal::parse_timestamp(
            expect_str(value, ty)?,
            false,
            true,
        )?),
        P::TimestampNs => Literal::TimestampNs(temporal::parse_timestamp(
            expect_str(value, ty)?,
            true,
            false,
        )?),
        P::TimestampTzNs => Literal::TimestampTzNs(temporal::parse_timestamp(
            expect_str(value, ty)?,
            true,
            true,
        )?),
        P::String => Literal::String(expect_str(value, ty)?.to_string()),
        P::Uuid => Literal::Uuid(parse_uuid(expect_str(value, ty)?)?),
        P::Fixed(_) => Literal::Fixed(unhex(expect_str(value, ty)?, ty)?),
        P::Binary => Literal::Binary(unhex(expect_str(value, ty)?, ty)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn t(s: &str) -> Type {
        Type::Primitive(s.parse().unwrap())
    }

    fn round(value: Literal, ty: &Type) -> Value {
        let j = to_json(Some(&value), ty).unwrap();
        assert_eq!(from_json(&j, ty).unwrap(), Some(value));
        j
    }

    #[test]
    fn spec_examples() {
        assert_eq!(round(Literal::Boolean(true), &t("boolean")), json!(true));
        assert_eq!(round(Literal::Int(34), &t("int")), json!(34));
        assert_eq!(round(Literal::Float(1.0), &t("float")), json!(1.0));
        assert_eq!(round(Literal::Float(0.1), &t("float")).to_string(), "0.1");
        assert_eq!(
            round(Literal::Decimal(1420), &t("decimal(9,2)")),
            json!("14.20")
        );
        assert_eq!(
            round(Literal::Decimal(2), &t("decimal(9,-20)")),
            json!("2E+20")
        );
        assert_eq!(round(Literal::Date(17486), &t("date")), json!("2017-11-16"));
        assert_eq!(
            round(Literal::Time(81_068_123_456), &t("time")),
            json!("22:31:08.123456")
        );
        assert_eq!(
            round(Literal::Timestamp(1_510_871_468_123_456), &t("timestamp")),
            json!("2017-11-16T22:31:08.123456")
        );
        assert_eq!(
            round(
                Literal::TimestampTz(1_510_871_468_123_456),
                &t("timestamptz")
            ),
            json!("2017-11-16T22:31:08.123456+00:00")
        );
        assert_eq!(
            round(
                Literal::TimestampNs(1_510_871_468_123_456_789),
                &t("timestamp_ns")
            ),
            json!("2017-11-16T22:31:08.123456789")
        );
        assert_eq!(
            round(
                Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7),
                &t("uuid")
            ),
            json!("f79c3e09-677c-4bbd-a479-3f349cb785e7")
        );
        assert_eq!(
            round(Literal::Binary(vec![0, 1, 2, 0xff]), &t("binary")),
            json!("000102ff")
        );
        assert_eq!(
            from_json(&json!("000102FF"), &t("fixed[4]")).unwrap(),
            Some(Literal::Fixed(vec![0, 1, 2, 0xff]))
        );
    }

    #[test]
    fn nested_examples() {
        let st = Type::from_json(&json!({"type": "struct", "fields": [
            {"id": 1, "name": "a", "required": true, "type": "int"},
            {"id": 2, "name": "b", "required": false, "type": "string"}]}))
        .unwrap();
        let v = Literal::Struct(vec![
            Some(Literal::Int(1)),
            Some(Literal::String("bar".into())),
        ]);
        assert_eq!(round(v, &st), json!({"1": 1, "2": "bar"}));
        let list = Type::from_json(
            &json!({"type": "list", "element-id": 3, "element-required": false, "element": "int"}),
        )
        .unwrap();
        let v = Literal::List(vec![Some(Literal::Int(1)), None, Some(Literal::Int(3))]);
        assert_eq!(round(v, &list), json!([1, null, 3]));
        let map = Type::from_json(&json!({"type": "map", "key-id": 4, "key": "string",
            "value-id": 5, "value-required": false, "value": "int"}))
        .unwrap();
        let v = Literal::Map(vec![
            (Literal::String("a".into()), Some(Literal::Int(1))),
            (Literal::String("b".into()), Some(Literal::Int(2))),
        ]);
        assert_eq!(
            round(v, &map),
            json!({"keys": ["a", "b"], "values": [1, 2]})
        );
        assert!(from_json(&json!({"keys": ["a"], "values": []}), &map).is_err());
        assert!(from_json(&json!({"keys": [null], "values": [1]}), &map).is_err());
        // a required struct field cannot be missing
        assert!(from_json(&json!({"2": "x"}), &st).is_err());
    }

    #[test]
    fn malformed_json_is_rejected() {
        assert!(from_json(&json!("34"), &t("int")).is_err());
        assert!(from_json(&json!(34.5), &t("long")).is_err());
        assert!(from_json(&json!(1_i64 << 40), &t("int")).is_err());
        assert!(from_json(&json!(14.2), &t("decimal(9,2)")).is_err());
        assert!(from_json(&json!("1234567890.00"), &t("decimal(9,2)")).is_err());
        assert!(from_json(&json!("2017-11-16T22:31:08Z"), &t("timestamp")).is_err());
        assert!(from_json(&json!("f79c3e09677c4bbda4793f349cb785e7"), &t("uuid")).is_err());
        assert!(from_json(&json!("abc"), &t("binary")).is_err());
        assert!(from_json(&json!("0001"), &t("fixed[4]")).is_err());
        assert!(from_json(&json!(1), &t("unknown")).is_err());
        assert_eq!(from_json(&Value::Null, &t("unknown")).unwrap(), None);
    }

    #[test]
    fn non_finite_floats() {
        assert_eq!(
            round(Literal::Double(f64::INFINITY), &t("double")),
            json!("Infinity")
        );
        let nan = to_json(Some(&Literal::Float(f32::NAN)), &t("float")).unwrap();
        assert_eq!(nan, json!("NaN"));
        assert!(
            matches!(from_json(&nan, &t("float")).unwrap(), Some(Literal::Float(f)) if f.is_nan())
        );
    }

    proptest! {
        #[test]
        fn floats_round_trip_exactly(v in any::<f32>().prop_filter("finite", |v| v.is_finite())) {
            let j = to_json(Some(&Literal::Float(v)), &t("float")).unwrap();
            let text = j.to_string();
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(from_json(&back, &t("float")).unwrap(), Some(Literal::Float(v)));
        }

        #[test]
        fn doubles_round_trip_exactly(v in any::<f64>().prop_filter("finite", |v| v.is_finite())) {
            let j = to_json(Some(&Literal::Double(v)), &t("double")).unwrap();
            let back: Value = serde_json::from_str(&j.to_string()).unwrap();
            prop_assert_eq!(from_json(&back, &t("double")).unwrap(), Some(Literal::Double(v)));
        }

        #[test]
        fn decimals_round_trip(v in -(10i128.pow(38) - 1)..10i128.pow(38), scale in -5i32..40) {
            let ty = t(&format!("decimal(38,{scale})"));
            round(Literal::Decimal(v), &ty);
        }

        #[test]
        fn times_round_trip(v in 0..temporal::MICROS_PER_DAY) {
            round(Literal::Time(v), &t("time"));
        }
    }
}
