//! Iceberg data types: primitive type strings and the JSON form of nested types (spec Appendix C).

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Decimal precision is bounded by the spec ("precision must be 38 or less").
pub const MAX_DECIMAL_PRECISION: u32 = 38;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Unknown,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Decimal {
        precision: u32,
        scale: i32,
    },
    Date,
    Time,
    Timestamp,
    TimestampTz,
    TimestampNs,
    TimestampTzNs,
    String,
    Uuid,
    Fixed(u64),
    Binary,
    /// v3 semi-structured type; its JSON form is a plain string like a primitive's.
    Variant,
    /// v3 `geometry(C)`; `None` is the default CRS `OGC:CRS84`.
    Geometry {
        crs: Option<String>,
    },
    /// v3 `geography(C, A)`; `None` is the default CRS `OGC:CRS84` / algorithm `spherical`.
    Geography {
        crs: Option<String>,
        algorithm: Option<EdgeAlgorithm>,
    },
}

/// Edge interpolation of a `geography` (spec "Primitive Types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeAlgorithm {
    Spherical,
    Vincenty,
    Thomas,
    Andoyer,
    Karney,
}

impl EdgeAlgorithm {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeAlgorithm::Spherical => "spherical",
            EdgeAlgorithm::Vincenty => "vincenty",
            EdgeAlgorithm::Thomas => "thomas",
            EdgeAlgorithm::Andoyer => "andoyer",
            EdgeAlgorithm::Karney => "karney",
        }
    }
}

impl FromStr for EdgeAlgorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "spherical" => EdgeAlgorithm::Spherical,
            "vincenty" => EdgeAlgorithm::Vincenty,
            "thomas" => EdgeAlgorithm::Thomas,
            "andoyer" => EdgeAlgorithm::Andoyer,
            "karney" => EdgeAlgorithm::Karney,
            _ => {
                return Err(Error::parse(format!(
                    "unknown edge-interpolation algorithm {s:?}"
                )))
            }
        })
    }
}

impl PrimitiveType {
    pub fn decimal(precision: u32, scale: i32) -> Result<Self> {
        if precision == 0 || precision > MAX_DECIMAL_PRECISION {
            return Err(Error::parse(format!(
                "decimal precision must be between 1 and {MAX_DECIMAL_PRECISION}, got {precision}"
            )));
        }
        Ok(PrimitiveType::Decimal { precision, scale })
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrimitiveType::Unknown => f.write_str("unknown"),
            PrimitiveType::Boolean => f.write_str("boolean"),
            PrimitiveType::Int => f.write_str("int"),
            PrimitiveType::Long => f.write_str("long"),
            PrimitiveType::Float => f.write_str("float"),
            PrimitiveType::Double => f.write_str("double"),
            // The canonical form of Appendix C has no space after the comma.
            PrimitiveType::Decimal { precision, scale } => {
                write!(f, "decimal({precision},{scale})")
            }
            PrimitiveType::Date => f.write_str("date"),
            PrimitiveType::Time => f.write_str("time"),
            PrimitiveType::Timestamp => f.write_str("timestamp"),
            PrimitiveType::TimestampTz => f.write_str("timestamptz"),
            PrimitiveType::TimestampNs => f.write_str("timestamp_ns"),
            PrimitiveType::TimestampTzNs => f.write_str("timestamptz_ns"),
            PrimitiveType::String => f.write_str("string"),
            PrimitiveType::Uuid => f.write_str("uuid"),
            PrimitiveType::Fixed(len) => write!(f, "fixed[{len}]"),
            PrimitiveType::Binary => f.write_str("binary"),
            PrimitiveType::Variant => f.write_str("variant"),
            PrimitiveType::Geometry { crs: None } => f.write_str("geometry"),
            PrimitiveType::Geometry { crs: Some(c) } => write!(f, "geometry({c})"),
            PrimitiveType::Geography {
                crs,
                algorithm: None,
            } => match crs {
                None => f.write_str("geography"),
                Some(c) => write!(f, "geography({c})"),
            },
            PrimitiveType::Geography {
                crs,
                algorithm: Some(a),
            } => {
                let c = crs.as_deref().unwrap_or(DEFAULT_CRS);
                write!(f, "geography({c}, {})", a.as_str())
            }
        }
    }
}

/// The CRS a `geometry` or `geography` has when none is given.
pub const DEFAULT_CRS: &str = "OGC:CRS84";

/// `geometry(...)` / `geography(...)`: the CRS keeps its case, so these are parsed before the
/// rest of the type string is lower-cased.
fn parse_geo(s: &str) -> Option<Result<PrimitiveType>> {
    let trimmed = s.trim();
    let lower = trimmed.to_ascii_lowercase();
    for (name, is_geography) in [("geometry", false), ("geography", true)] {
        if !lower.starts_with(name) {
            continue;
        }
        let rest = trimmed[name.len()..].trim_start();
        if rest.is_empty() {
            return Some(Ok(if is_geography {
                PrimitiveType::Geography {
                    crs: None,
                    algorithm: None,
                }
            } else {
                PrimitiveType::Geometry { crs: None }
            }));
        }
        let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
            return Some(Err(Error::parse(format!("invalid type string {s:?}"))));
        };
        let bad = || Error::parse(format!("invalid type string {s:?}"));
        if !is_geography {
            let crs = inner.trim();
            if crs.is_empty() || crs.contains(',') {
                return Some(Err(bad()));
            }
            return Some(Ok(PrimitiveType::Geometry {
                crs: Some(crs.to_string()),
            }));
        }
        // The algorithm is the part after the last comma, if that part names one.
        let (crs, algorithm) = match inner.rsplit_once(',') {
            Some((c, a)) => match a.parse::<EdgeAlgorithm>() {
                Ok(a) => (c.trim(), Some(a)),
                Err(e) => return Some(Err(Error::parse(format!("{e} in type string {s:?}")))),
            },
            None => (inner.trim(), None),
        };
        if crs.is_empty() {
            return Some(Err(bad()));
        }
        return Some(Ok(PrimitiveType::Geography {
            crs: Some(crs.to_string()),
            algorithm,
        }));
    }
    None
}

/// Parses `"<name>" <open> <args> <close>` with optional whitespace around the arguments.
fn parameters<'a>(s: &'a str, name: &str, open: char, close: char) -> Option<Vec<&'a str>> {
    let rest = s.strip_prefix(name)?.trim_start();
    let inner = rest.strip_prefix(open)?.strip_suffix(close)?;
    Some(inner.split(',').map(str::trim).collect())
}

fn parse_number<T: FromStr>(text: &str, what: &str, full: &str) -> Result<T> {
    // `FromStr` for integers accepts a leading '+'; the spec's forms never have one.
    if text.is_empty() || text.starts_with('+') {
        return Err(Error::parse(format!(
            "invalid {what} in type string {full:?}"
        )));
    }
    text.parse()
        .map_err(|_| Error::parse(format!("invalid {what} in type string {full:?}")))
}

impl FromStr for PrimitiveType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        if let Some(geo) = parse_geo(s) {
            return geo;
        }
        let lower = s.trim().to_ascii_lowercase();
        let t = match lower.as_str() {
            "unknown" => PrimitiveType::Unknown,
            "boolean" => PrimitiveType::Boolean,
            "int" => PrimitiveType::Int,
            "long" => PrimitiveType::Long,
            "float" => PrimitiveType::Float,
            "double" => PrimitiveType::Double,
            "date" => PrimitiveType::Date,
            "time" => PrimitiveType::Time,
            "timestamp" => PrimitiveType::Timestamp,
            "timestamptz" => PrimitiveType::TimestampTz,
            "timestamp_ns" => PrimitiveType::TimestampNs,
            "timestamptz_ns" => PrimitiveType::TimestampTzNs,
            "string" => PrimitiveType::String,
            "uuid" => PrimitiveType::Uuid,
            "binary" => PrimitiveType::Binary,
            "variant" => PrimitiveType::Variant,
            other => {
                if let Some(args) = parameters(other, "fixed", '[', ']') {
                    if args.len() != 1 {
                        return Err(Error::parse(format!("invalid type string {s:?}")));
                    }
                    PrimitiveType::Fixed(parse_number(args[0], "fixed length", s)?)
                } else if let Some(args) = parameters(other, "decimal", '(', ')') {
                    if args.len() != 2 {
                        return Err(Error::parse(format!("invalid type string {s:?}")));
                    }
                    let precision = parse_number(args[0], "decimal precision", s)?;
                    let scale = parse_number(args[1], "decimal scale", s)?;
                    PrimitiveType::decimal(precision, scale)
                        .map_err(|e| Error::parse(format!("{e} in type string {s:?}")))?
                } else {
                    return Err(Error::parse(format!("unknown type string {s:?}")));
                }
            }
        };
        Ok(t)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NestedField {
    pub id: i32,
    pub name: String,
    pub required: bool,
    pub field_type: Type,
    pub doc: Option<String>,
    /// Kept in their JSON single-value form; decoded against `field_type` when needed.
    pub initial_default: Option<Value>,
    pub write_default: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructType {
    pub fields: Vec<NestedField>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListType {
    pub element_id: i32,
    pub element_required: bool,
    pub element: Box<Type>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    pub key_id: i32,
    pub key: Box<Type>,
    pub value_id: i32,
    pub value_required: bool,
    pub value: Box<Type>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Primitive(PrimitiveType),
    Struct(StructType),
    List(ListType),
    Map(MapType),
}

impl From<PrimitiveType> for Type {
    fn from(p: PrimitiveType) -> Self {
        Type::Primitive(p)
    }
}

impl Type {
    pub fn as_primitive(&self) -> Option<&PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// Parses the JSON form of a type (Appendix C): a string for primitives, an object otherwise.
    /// [`Type::from_json`] of Appendix C JSON text (a JSON string for a primitive).
    pub fn from_json_str(text: &str) -> Result<Type> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid(format!("invalid type JSON {text:?}: {e}")))?;
        Type::from_json(&value)
    }

    pub fn from_json(value: &Value) -> Result<Type> {
        match value {
            Value::String(s) => Ok(Type::Primitive(s.parse()?)),
            Value::Object(obj) => {
                let kind = obj
                    .get("type")
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::parse("type object without a string \"type\""))?;
                match kind {
                    "struct" => {
                        let fields = obj
                            .get("fields")
                            .and_then(Value::as_array)
                            .ok_or_else(|| Error::parse("struct type without \"fields\" list"))?;
                        let fields = fields
                            .iter()
                            .map(NestedField::from_json)
                            .collect::<Result<Vec<_>>>()?;
                        Ok(Type::Struct(StructType { fields }))
                    }
                    "list" => Ok(Type::List(ListType {
                        element_id: json_i32(obj, "element-id")?,
                        element_required: json_bool(obj, "element-required")?,
                        element: Box::new(Type::from_json(json_get(obj, "element")?)?),
                    })),
                    "map" => Ok(Type::Map(MapType {
                        key_id: json_i32(obj, "key-id")?,
                        key: Box::new(Type::from_json(json_get(obj, "key")?)?),
                        value_id: json_i32(obj, "value-id")?,
                        value_required: json_bool(obj, "value-required")?,
                        value: Box::new(Type::from_json(json_get(obj, "value")?)?),
                    })),
                    other => Err(Error::parse(format!("unknown nested type {other:?}"))),
                }
            }
            other => Err(Error::parse(format!("invalid type JSON: {other}"))),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Type::Primitive(p) => Value::String(p.to_string()),
            Type::Struct(s) => {
                let mut obj = Map::new();
                obj.insert("type".into(), "struct".into());
                obj.insert(
                    "fields".into(),
                    Value::Array(s.fields.iter().map(NestedField::to_json).collect()),
                );
                Value::Object(obj)
            }
            Type::List(l) => {
                let mut obj = Map::new();
                obj.insert("type".into(), "list".into());
                obj.insert("element-id".into(), l.element_id.into());
                obj.insert("element-required".into(), l.element_required.into());
                obj.insert("element".into(), l.element.to_json());
                Value::Object(obj)
            }
            Type::Map(m) => {
                let mut obj = Map::new();
                obj.insert("type".into(), "map".into());
                obj.insert("key-id".into(), m.key_id.into());
                obj.insert("key".into(), m.key.to_json());
                obj.insert("value-id".into(), m.value_id.into());
                obj.insert("value-required".into(), m.value_required.into());
                obj.insert("value".into(), m.value.to_json());
                Value::Object(obj)
            }
        }
    }
}

impl NestedField {
    pub fn from_json(value: &Value) -> Result<NestedField> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::parse(format!("struct field must be an object, got {value}")))?;
        let name = json_get(obj, "name")?
            .as_str()
            .ok_or_else(|| Error::parse("struct field \"name\" must be a string"))?
            .to_string();
        let doc = match obj.get("doc") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(Error::parse("struct field \"doc\" must be a string")),
        };
        Ok(NestedField {
            id: json_i32(obj, "id")?,
            name,
            required: json_bool(obj, "required")?,
            field_type: Type::from_json(json_get(obj, "type")?)?,
            doc,
            initial_default: obj.get("initial-default").cloned(),
            write_default: obj.get("write-default").cloned(),
        })
    }

    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("id".into(), self.id.into());
        obj.insert("name".into(), self.name.clone().into());
        obj.insert("required".into(), self.required.into());
        obj.insert("type".into(), self.field_type.to_json());
        if let Some(doc) = &self.doc {
            obj.insert("doc".into(), doc.clone().into());
        }
        if let Some(v) = &self.initial_default {
            obj.insert("initial-default".into(), v.clone());
        }
        if let Some(v) = &self.write_default {
            obj.insert("write-default".into(), v.clone());
        }
        Value::Object(obj)
    }
}

fn json_get<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a Value> {
    obj.get(key)
        .ok_or_else(|| Error::parse(format!("type JSON is missing {key:?}")))
}

fn json_i32(obj: &Map<String, Value>, key: &str) -> Result<i32> {
    json_get(obj, key)?
        .as_i64()
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| Error::parse(format!("type JSON {key:?} must be a 32-bit integer")))
}

fn json_bool(obj: &Map<String, Value>, key: &str) -> Result<bool> {
    json_get(obj, key)?
        .as_bool()
        .ok_or_else(|| Error::parse(format!("type JSON {key:?} must be a boolean")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_strings_round_trip() {
        for s in [
            "unknown",
            "boolean",
            "int",
            "long",
            "float",
            "double",
            "decimal(9,2)",
            "decimal(38,-3)",
            "date",
            "time",
            "timestamp",
            "timestamptz",
            "timestamp_ns",
            "timestamptz_ns",
            "string",
            "uuid",
            "fixed[16]",
            "binary",
            "variant",
            "geometry",
            "geometry(srid:4326)",
            "geography",
            "geography(srid:4326)",
            "geography(EPSG:4326, karney)",
        ] {
            let t: PrimitiveType = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
    }

    #[test]
    fn whitespace_in_parameters_is_accepted() {
        assert_eq!(
            "decimal(9, 2)".parse::<PrimitiveType>().unwrap(),
            PrimitiveType::Decimal {
                precision: 9,
                scale: 2
            }
        );
        assert_eq!(
            " fixed[ 4 ] ".parse::<PrimitiveType>().unwrap(),
            PrimitiveType::Fixed(4)
        );
        assert_eq!(
            "Decimal( 10 ,0 )"
                .parse::<PrimitiveType>()
                .unwrap()
                .to_string(),
            "decimal(10,0)"
        );
    }

    #[test]
    fn malformed_strings_are_errors() {
        for s in [
            "",
            "integer",
            "decimal(39,2)",
            "decimal(0,0)",
            "decimal(9)",
            "decimal(9,2,1)",
            "decimal(a,b)",
            "decimal(+9,2)",
            "fixed[]",
            "fixed[-1]",
            "fixed(4)",
            "fixed[4",
            "struct<a:int>",
            "geometry()",
            "geometry(a, b)",
            "geography(srid:4326, sideways)",
        ] {
            assert!(s.parse::<PrimitiveType>().is_err(), "{s:?} parsed");
        }
    }

    #[test]
    fn nested_json_round_trip() {
        let text = r#"{"type":"struct","fields":[
            {"id":1,"name":"id","required":true,"type":"uuid"},
            {"id":2,"name":"data","required":false,"type":{"type":"list","element-id":3,"element-required":true,"element":"string"}},
            {"id":4,"name":"m","required":false,"type":{"type":"map","key-id":5,"key":"string","value-id":6,"value-required":false,"value":"decimal(9, 2)"}}
        ]}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let t = Type::from_json(&v).unwrap();
        let back = Type::from_json(&t.to_json()).unwrap();
        assert_eq!(t, back);
        assert_eq!(
            t.to_json()["fields"][2]["type"]["value"],
            Value::String("decimal(9,2)".into())
        );
    }
}
