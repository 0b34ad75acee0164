//! The transform itself: its spec string, which source types it takes, and its result type.

use std::fmt;
use std::str::FromStr;

use frazil_values::{Error, PrimitiveType, Result, Type};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    Identity,
    /// `bucket[N]`, 0 < N <= i32::MAX.
    Bucket(u32),
    /// `truncate[W]`, 0 < W <= i32::MAX.
    Truncate(u32),
    Year,
    Month,
    Day,
    Hour,
    Void,
    /// A transform this library does not know. The spec requires readers to tolerate it (the
    /// partition field is ignored for filtering); writers must refuse it.
    Unknown(String),
}

impl Transform {
    /// Parses a transform string, refusing unknown transforms (what a user or writer wants).
    pub fn parse(text: &str) -> Result<Transform> {
        match Self::parse_lenient(text)? {
            Transform::Unknown(name) => Err(Error::parse(format!(
                "unknown transform {name:?}: expected identity, bucket[N], truncate[W], year, \
                 month, day, hour or void"
            ))),
            t => Ok(t),
        }
    }

    /// Parses a transform string as a reader of table metadata must: a well-formed parameterized
    /// transform with a bad parameter is an error, a name that is simply unknown is kept.
    pub fn parse_lenient(text: &str) -> Result<Transform> {
        let s = text.trim();
        let t = match s.to_ascii_lowercase().as_str() {
            "identity" => Transform::Identity,
            "year" => Transform::Year,
            "month" => Transform::Month,
            "day" => Transform::Day,
            "hour" => Transform::Hour,
            "void" => Transform::Void,
            lower => {
                if let Some(arg) = parameter(lower, "bucket") {
                    Transform::Bucket(positive(arg, "bucket count N", text)?)
                } else if let Some(arg) = parameter(lower, "truncate") {
                    Transform::Truncate(positive(arg, "truncate width W", text)?)
                } else if s.is_empty() {
                    return Err(Error::parse("empty transform string"));
                } else {
                    Transform::Unknown(s.to_string())
                }
            }
        };
        Ok(t)
    }

    pub fn bucket(n: i64) -> Result<Transform> {
        Ok(Transform::Bucket(check_positive(n, "bucket count N")?))
    }

    pub fn truncate(w: i64) -> Result<Transform> {
        Ok(Transform::Truncate(check_positive(w, "truncate width W")?))
    }

    /// Whether this transform can be applied to values of `source` (the spec's transform table).
    pub fn can_transform(&self, source: &Type) -> bool {
        let Type::Primitive(p) = source else {
            return matches!(self, Transform::Void);
        };
        use PrimitiveType as P;
        match self {
            Transform::Void => true,
            // "Any primitive except geometry and geography"; variant is not a primitive.
            Transform::Identity => {
                !matches!(p, P::Variant | P::Geometry { .. } | P::Geography { .. })
            }
            Transform::Bucket(_) => matches!(
                p,
                P::Int
                    | P::Long
                    | P::Decimal { .. }
                    | P::Date
                    | P::Time
                    | P::Timestamp
                    | P::TimestampTz
                    | P::TimestampNs
                    | P::TimestampTzNs
                    | P::String
                    | P::Uuid
                    | P::Fixed(_)
                    | P::Binary
            ),
            Transform::Truncate(_) => matches!(
                p,
                P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary
            ),
            Transform::Year | Transform::Month | Transform::Day => matches!(
                p,
                P::Date | P::Timestamp | P::TimestampTz | P::TimestampNs | P::TimestampTzNs
            ),
            Transform::Hour => matches!(
                p,
                P::Timestamp | P::TimestampTz | P::TimestampNs | P::TimestampTzNs
            ),
            Transform::Unknown(_) => false,
        }
    }

    /// The type of the partition values this transform produces from `source`.
    pub fn result_type(&self, source: &Type) -> Result<Type> {
        if !self.can_transform(source) {
            return Err(self.cannot_transform(source));
        }
        Ok(match self {
            Transform::Identity | Transform::Truncate(_) | Transform::Void => source.clone(),
            Transform::Bucket(_) | Transform::Year | Transform::Month | Transform::Hour => {
                Type::Primitive(PrimitiveType::Int)
            }
            Transform::Day => Type::Primitive(PrimitiveType::Date),
            Transform::Unknown(_) => unreachable!("can_transform is false for unknown transforms"),
        })
    }

    pub fn cannot_transform(&self, source: &Type) -> Error {
        let source = match source {
            Type::Primitive(p) => p.to_string(),
            other => other.to_json().to_string(),
        };
        Error::unsupported(format!("transform {self} cannot be applied to {source}"))
    }

    /// Whether `a <= b` implies `t(a) <= t(b)`, so a sort on the transform is a sort on the source.
    pub fn preserves_order(&self) -> bool {
        matches!(
            self,
            Transform::Identity
                | Transform::Truncate(_)
                | Transform::Year
                | Transform::Month
                | Transform::Day
                | Transform::Hour
        )
    }
}

fn parameter<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    s.strip_prefix(name)?.strip_prefix('[')?.strip_suffix(']')
}

fn positive(arg: &str, what: &str, text: &str) -> Result<u32> {
    if arg.is_empty() || !arg.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(Error::parse(format!(
            "invalid {what} in transform {text:?}: expected a positive integer"
        )));
    }
    let n: i64 = arg.parse().map_err(|_| {
        Error::parse(format!(
            "invalid {what} in transform {text:?}: expected a positive 32-bit integer"
        ))
    })?;
    check_positive(n, what).map_err(|e| Error::parse(format!("{e} in transform {text:?}")))
}

fn check_positive(n: i64, what: &str) -> Result<u32> {
    if n <= 0 || n > i32::MAX as i64 {
        return Err(Error::invalid(format!(
            "{what} must be between 1 and {}, got {n}",
            i32::MAX
        )));
    }
    Ok(n as u32)
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Identity => f.write_str("identity"),
            Transform::Bucket(n) => write!(f, "bucket[{n}]"),
            Transform::Truncate(w) => write!(f, "truncate[{w}]"),
            Transform::Year => f.write_str("year"),
            Transform::Month => f.write_str("month"),
            Transform::Day => f.write_str("day"),
            Transform::Hour => f.write_str("hour"),
            Transform::Void => f.write_str("void"),
            Transform::Unknown(name) => f.write_str(name),
        }
    }
}

impl FromStr for Transform {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Transform::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Type {
        Type::Primitive(s.parse().unwrap())
    }

    #[test]
    fn strings_round_trip() {
        for s in [
            "identity",
            "bucket[16]",
            "truncate[3]",
            "year",
            "month",
            "day",
            "hour",
            "void",
        ] {
            assert_eq!(Transform::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            Transform::parse_lenient("zorder").unwrap(),
            Transform::Unknown("zorder".into())
        );
    }

    #[test]
    fn malformed() {
        for s in [
            "",
            "bucket",
            "bucket[]",
            "bucket[0]",
            "bucket[-1]",
            "bucket[x]",
            "bucket[16",
            "bucket[2147483648]",
            "truncate[0]",
            "truncate[1.5]",
            "zorder",
        ] {
            assert!(Transform::parse(s).is_err(), "{s:?} parsed");
        }
        assert!(Transform::parse_lenient("bucket[0]").is_err());
    }

    #[test]
    fn result_types() {
        let b = Transform::parse("bucket[4]").unwrap();
        assert_eq!(b.result_type(&t("string")).unwrap(), t("int"));
        assert!(b.result_type(&t("float")).is_err());
        assert_eq!(
            Transform::Day.result_type(&t("timestamp_ns")).unwrap(),
            t("date")
        );
        assert!(Transform::Hour.result_type(&t("date")).is_err());
        assert_eq!(
            Transform::Truncate(2)
                .result_type(&t("decimal(9,2)"))
                .unwrap(),
            t("decimal(9,2)")
        );
        assert!(!Transform::Truncate(2).can_transform(&t("fixed[4]")));
        assert!(!Transform::Truncate(2).can_transform(&t("uuid")));
        assert!(Transform::Identity.can_transform(&t("boolean")));
        for v3 in ["variant", "geometry", "geography(srid:4326, karney)"] {
            assert!(!Transform::Identity.can_transform(&t(v3)), "{v3}");
            assert!(!Transform::Bucket(2).can_transform(&t(v3)), "{v3}");
            assert!(Transform::Void.can_transform(&t(v3)), "{v3}");
        }
        assert!(Transform::Bucket(2).can_transform(&t("uuid")));
    }
}
