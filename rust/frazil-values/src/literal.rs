//! Single values, typed by the Iceberg type they belong to. A null is `None` around a literal.

use crate::decimal;
use crate::error::{Error, Result};
use crate::temporal::MICROS_PER_DAY;
use crate::types::{PrimitiveType, Type};

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    /// The unscaled value; precision and scale live in the type.
    Decimal(i128),
    /// Days from 1970-01-01.
    Date(i32),
    /// Microseconds from midnight.
    Time(i64),
    /// Microseconds from 1970-01-01T00:00:00.
    Timestamp(i64),
    TimestampTz(i64),
    /// Nanoseconds from 1970-01-01T00:00:00.
    TimestampNs(i64),
    TimestampTzNs(i64),
    String(String),
    /// The 16 bytes read as one big-endian number.
    Uuid(u128),
    Fixed(Vec<u8>),
    Binary(Vec<u8>),
    Struct(Vec<Option<Literal>>),
    List(Vec<Option<Literal>>),
    Map(Vec<(Literal, Option<Literal>)>),
}

impl Literal {
    /// Checks that this literal is a possible value of `ty`, so that no codec ever writes a value
    /// that a reader would reject or misread.
    pub fn validate(&self, ty: &Type) -> Result<()> {
        match (self, ty) {
            (Literal::Struct(values), Type::Struct(s)) => {
                if values.len() != s.fields.len() {
                    return Err(Error::invalid(format!(
                        "struct value has {} fields, its type has {}",
                        values.len(),
                        s.fields.len()
                    )));
                }
                for (value, field) in values.iter().zip(&s.fields) {
                    match value {
                        Some(v) => v.validate(&field.field_type)?,
                        None if field.required => {
                            return Err(Error::invalid(format!(
                                "required field {:?} (id {}) is null",
                                field.name, field.id
                            )))
                        }
                        None => {}
                    }
                }
                Ok(())
            }
            (Literal::List(values), Type::List(l)) => {
                for value in values {
                    match value {
                        Some(v) => v.validate(&l.element)?,
                        None if l.element_required => {
                            return Err(Error::invalid("list element is required but null"))
                        }
                        None => {}
                    }
                }
                Ok(())
            }
            (Literal::Map(entries), Type::Map(m)) => {
                for (key, value) in entries {
                    key.validate(&m.key)?;
                    match value {
                        Some(v) => v.validate(&m.value)?,
                        None if m.value_required => {
                            return Err(Error::invalid("map value is required but null"))
                        }
                        None => {}
                    }
                }
                Ok(())
            }
            (_, Type::Primitive(p)) => self.validate_primitive(p),
            _ => Err(Error::invalid(format!(
                "{} value is not a {}",
                self.kind(),
                ty.to_json()
            ))),
        }
    }

    pub fn validate_primitive(&self, ty: &PrimitiveType) -> Result<()> {
        use PrimitiveType as P;
        let ok = match (self, ty) {
            (Literal::Boolean(_), P::Boolean)
            | (Literal::Int(_), P::Int)
            | (Literal::Long(_), P::Long)
            | (Literal::Float(_), P::Float)
            | (Literal::Double(_), P::Double)
            | (Literal::Date(_), P::Date)
            | (Literal::Timestamp(_), P::Timestamp)
            | (Literal::TimestampTz(_), P::TimestampTz)
            | (Literal::TimestampNs(_), P::TimestampNs)
            | (Literal::TimestampTzNs(_), P::TimestampTzNs)
            | (Literal::String(_), P::String)
            | (Literal::Uuid(_), P::Uuid)
            | (Literal::Binary(_), P::Binary) => true,
            (Literal::Time(t), P::Time) => {
                if !(0..MICROS_PER_DAY).contains(t) {
                    return Err(Error::invalid(format!(
                        "time value {t} is outside 0..{MICROS_PER_DAY} microseconds"
                    )));
                }
                true
            }
            (Literal::Decimal(v), P::Decimal { precision, .. }) => {
                if !decimal::fits_precision(*v, *precision) {
                    return Err(Error::invalid(format!(
                        "unscaled decimal {v} has more than {precision} digits"
                    )));
                }
                true
            }
            (Literal::Fixed(b), P::Fixed(len)) => {
                if b.len() as u64 != *len {
                    return Err(Error::invalid(format!(
                        "fixed[{len}] value has {} bytes",
                        b.len()
                    )));
                }
                true
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "{} value is not a {ty}",
                self.kind()
            )))
        }
    }

    /// The name of this literal's variant, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Literal::Boolean(_) => "boolean",
            Literal::Int(_) => "int",
            Literal::Long(_) => "long",
            Literal::Float(_) => "float",
            Literal::Double(_) => "double",
            Literal::Decimal(_) => "decimal",
            Literal::Date(_) => "date",
            Literal::Time(_) => "time",
            Literal::Timestamp(_) => "timestamp",
            Literal::TimestampTz(_) => "timestamptz",
            Literal::TimestampNs(_) => "timestamp_ns",
            Literal::TimestampTzNs(_) => "timestamptz_ns",
            Literal::String(_) => "string",
            Literal::Uuid(_) => "uuid",
            Literal::Fixed(_) => "fixed",
            Literal::Binary(_) => "binary",
            Literal::Struct(_) => "struct",
            Literal::List(_) => "list",
            Literal::Map(_) => "map",
        }
    }
}
