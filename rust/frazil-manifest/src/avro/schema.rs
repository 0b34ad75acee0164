//! Avro schemas as parsed from a container's `avro.schema`, keeping the properties Iceberg adds
//! (`field-id`, `element-id`, `key-id`, `value-id`, `adjust-to-utc`) and the logical types.

use std::collections::HashMap;

use frazil_values::{Error, Result};
use serde_json::Value;

/// More schema nodes than any manifest needs; bounds the cost of named-type references, which
/// are expanded in place.
const MAX_NODES: usize = 100_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    Null,
    Boolean,
    Int {
        logical: Option<String>,
    },
    Long {
        logical: Option<String>,
        adjust_to_utc: bool,
    },
    Float,
    Double,
    Bytes {
        decimal: Option<(u32, i32)>,
    },
    String,
    Fixed {
        name: String,
        size: usize,
        logical: Option<String>,
        decimal: Option<(u32, i32)>,
    },
    Enum {
        symbols: usize,
    },
    Record(Record),
    Array {
        items: Box<Schema>,
        element_id: Option<i32>,
        logical_map: bool,
    },
    Map {
        values: Box<Schema>,
        key_id: Option<i32>,
        value_id: Option<i32>,
    },
    Union(Vec<Schema>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub name: String,
    pub fields: Vec<RecordField>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecordField {
    pub name: String,
    pub field_id: Option<i32>,
    pub schema: Schema,
}

impl Schema {
    pub fn parse(text: &str) -> Result<Schema> {
        let json: Value = serde_json::from_str(text)
            .map_err(|e| Error::decode(format!("avro.schema is not valid JSON: {e}")))?;
        let mut parser = Parser {
            named: HashMap::new(),
            nodes: 0,
        };
        parser.parse(&json, "")
    }

    /// The non-null branch of an optional (`["null", T]`) schema, or the schema itself.
    pub fn non_null(&self) -> &Schema {
        match self {
            Schema::Union(b) if b.len() == 2 && b[0] == Schema::Null => &b[1],
            Schema::Union(b) if b.len() == 2 && b[1] == Schema::Null => &b[0],
            other => other,
        }
    }

    /// A short name for error messages.
    pub fn kind(&self) -> String {
        match self {
            Schema::Null => "null".into(),
            Schema::Boolean => "boolean".into(),
            Schema::Int { logical: Some(l) } => format!("int ({l})"),
            Schema::Int { .. } => "int".into(),
            Schema::Long {
                logical: Some(l), ..
            } => format!("long ({l})"),
            Schema::Long { .. } => "long".into(),
            Schema::Float => "float".into(),
            Schema::Double => "double".into(),
            Schema::Bytes { .. } => "bytes".into(),
            Schema::String => "string".into(),
            Schema::Fixed { size, .. } => format!("fixed[{size}]"),
            Schema::Enum { .. } => "enum".into(),
            Schema::Record(r) => format!("record {}", r.name),
            Schema::Array { .. } => "array".into(),
            Schema::Map { .. } => "map".into(),
            Schema::Union(b) => format!(
                "union [{}]",
                b.iter().map(Schema::kind).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

struct Parser {
    named: HashMap<String, Schema>,
    nodes: usize,
}

fn bad(message: impl std::fmt::Display) -> Error {
    Error::decode(format!("invalid avro.schema: {message}"))
}

fn int_prop(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<i32>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .map(Some)
            .ok_or_else(|| bad(format!("{key} must be a 32-bit integer, got {v}"))),
    }
}

fn full_name(name: &str, namespace: &str) -> String {
    if name.contains('.') || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}.{name}")
    }
}

impl Parser {
    fn count(&mut self, n: usize) -> Result<()> {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            return Err(bad(format!("more than {MAX_NODES} schema nodes")));
        }
        Ok(())
    }

    fn parse(&mut self, json: &Value, namespace: &str) -> Result<Schema> {
        self.count(1)?;
        match json {
            Value::String(name) => self.primitive_or_named(name, namespace),
            Value::Array(branches) => {
                let branches = branches
                    .iter()
                    .map(|b| self.parse(b, namespace))
                    .collect::<Result<Vec<_>>>()?;
                if branches.iter().any(|b| matches!(b, Schema::Union(_))) {
                    return Err(bad("a union directly inside a union"));
                }
                Ok(Schema::Union(branches))
            }
            Value::Object(obj) => self.complex(obj, namespace),
            other => Err(bad(format!("unexpected {other}"))),
        }
    }

    fn primitive_or_named(&mut self, name: &str, namespace: &str) -> Result<Schema> {
        Ok(match name {
            "null" => Schema::Null,
            "boolean" => Schema::Boolean,
            "int" => Schema::Int { logical: None },
            "long" => Schema::Long {
                logical: None,
                adjust_to_utc: false,
            },
            "float" => Schema::Float,
            "double" => Schema::Double,
            "bytes" => Schema::Bytes { decimal: None },
            "string" => Schema::String,
            other => {
                let found = self
                    .named
                    .get(&full_name(other, namespace))
                    .or_else(|| self.named.get(other))
                    .cloned()
                    .ok_or_else(|| bad(format!("unknown type name {other:?}")))?;
                self.count(node_count(&found))?;
                found
            }
        })
    }

    fn complex(&mut self, obj: &serde_json::Map<String, Value>, namespace: &str) -> Result<Schema> {
        let Some(ty) = obj.get("type") else {
            return Err(bad("an object without \"type\""));
        };
        let logical = obj
            .get("logicalType")
            .and_then(Value::as_str)
            .map(str::to_string);
        let decimal = || -> Result<Option<(u32, i32)>> {
            if logical.as_deref() != Some("decimal") {
                return Ok(None);
            }
            let p = int_prop(obj, "precision")?.ok_or_else(|| bad("decimal without precision"))?;
            let s = int_prop(obj, "scale")?.unwrap_or(0);
            Ok(Some((p.max(0) as u32, s)))
        };
        let ty = match ty {
            Value::String(s) => s.as_str(),
            // {"type": {...}} or {"type": [...]}: a wrapped schema
            other => return self.parse(other, namespace),
        };
        let own_namespace = || {
            obj.get("namespace")
                .and_then(Value::as_str)
                .unwrap_or(namespace)
                .to_string()
        };
        Ok(match ty {
            "int" => Schema::Int { logical },
            "long" => Schema::Long {
                logical,
                adjust_to_utc: obj
                    .get("adjust-to-utc")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            "bytes" => Schema::Bytes {
                decimal: decimal()?,
            },
            "fixed" => {
                let size = obj
                    .get("size")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| bad("fixed without a size"))?;
                let size = usize::try_from(size)
                    .ok()
                    .filter(|s| *s <= 1 << 20)
                    .ok_or_else(|| bad(format!("fixed size {size} too large")))?;
                let name = obj.get("name").and_then(Value::as_str).unwrap_or("fixed");
                let ns = own_namespace();
                let schema = Schema::Fixed {
                    name: name.to_string(),
                    size,
                    decimal: decimal()?,
                    logical,
                };
                self.named.insert(full_name(name, &ns), schema.clone());
                schema
            }
            "enum" => {
                let symbols = obj
                    .get("symbols")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad("enum without symbols"))?
                    .len();
                let schema = Schema::Enum { symbols };
                if let Some(name) = obj.get("name").and_then(Value::as_str) {
                    self.named
                        .insert(full_name(name, &own_namespace()), schema.clone());
                }
                schema
            }
            "array" => {
                let items = obj.get("items").ok_or_else(|| bad("array without items"))?;
                Schema::Array {
                    items: Box::new(self.parse(items, namespace)?),
                    element_id: int_prop(obj, "element-id")?,
                    logical_map: logical.as_deref() == Some("map"),
                }
            }
            "map" => {
                let values = obj.get("values").ok_or_else(|| bad("map without values"))?;
                Schema::Map {
                    values: Box::new(self.parse(values, namespace)?),
                    key_id: int_prop(obj, "key-id")?,
                    value_id: int_prop(obj, "value-id")?,
                }
            }
            "record" | "error" => {
                let name = obj
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("record without a name"))?;
                let ns = own_namespace();
                let fields_json = obj
                    .get("fields")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad(format!("record {name} without fields")))?;
                let mut fields = Vec::with_capacity(fields_json.len().min(1024));
                for f in fields_json {
                    let f = f
                        .as_object()
                        .ok_or_else(|| bad(format!("a field of {name} is not an object")))?;
                    let fname = f
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad(format!("a field of {name} has no name")))?;
                    let fty = f
                        .get("type")
                        .ok_or_else(|| bad(format!("field {fname} has no type")))?;
                    fields.push(RecordField {
                        name: fname.to_string(),
                        field_id: int_prop(f, "field-id")?,
                        schema: self.parse(fty, &ns)?,
                    });
                }
                let schema = Schema::Record(Record {
                    name: name.to_string(),
                    fields,
                });
                self.named.insert(full_name(name, &ns), schema.clone());
                schema
            }
            other => {
                let mut schema = self.primitive_or_named(other, namespace)?;
                if let Schema::Bytes { decimal: d } = &mut schema {
                    *d = decimal()?;
                }
                schema
            }
        })
    }
}

fn node_count(schema: &Schema) -> usize {
    1 + match schema {
        Schema::Record(r) => r.fields.iter().map(|f| node_count(&f.schema)).sum(),
        Schema::Array { items, .. } => node_count(items),
        Schema::Map { values, .. } => node_count(values),
        Schema::Union(b) => b.iter().map(node_count).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iceberg_properties_and_named_references() {
        let s = Schema::parse(
            r#"{"type":"record","name":"e","fields":[
              {"name":"a","type":["null",{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true}],"field-id":1},
              {"name":"b","type":{"type":"array","items":{"type":"record","name":"k1_v2","fields":[
                 {"name":"key","type":"int","field-id":1},{"name":"value","type":"bytes","field-id":2}]},
                 "logicalType":"map"},"field-id":2},
              {"name":"c","type":["null","k1_v2"],"field-id":3}]}"#,
        )
        .unwrap();
        let Schema::Record(r) = s else { panic!() };
        assert_eq!(r.fields[0].field_id, Some(1));
        assert_eq!(
            r.fields[0].schema.non_null(),
            &Schema::Long {
                logical: Some("timestamp-micros".into()),
                adjust_to_utc: true
            }
        );
        assert!(matches!(
            r.fields[1].schema,
            Schema::Array {
                logical_map: true,
                ..
            }
        ));
        assert!(matches!(r.fields[2].schema.non_null(), Schema::Record(_)));
    }

    #[test]
    fn rejects_bad_schemas() {
        for text in [
            "",
            "{",
            r#"{"type":"record","name":"x"}"#,
            r#"{"type":"nope"}"#,
            r#"{"type":"fixed","name":"f","size":99999999999}"#,
            r#"{"type":"record","name":"x","fields":[{"name":"a","type":"int","field-id":"1"}]}"#,
        ] {
            assert!(Schema::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn exponential_named_references_are_bounded() {
        let mut text =
            String::from(r#"{"type":"record","name":"r0","fields":[{"name":"x","type":"int"}]}"#);
        for i in 1..40 {
            text = format!(
                r#"{{"type":"record","name":"r{i}","fields":[{{"name":"a","type":{text}}},{{"name":"b","type":"r{}"}},{{"name":"c","type":"r{}"}}]}}"#,
                i - 1,
                i - 1
            );
        }
        assert!(Schema::parse(&text).is_err());
    }
}
