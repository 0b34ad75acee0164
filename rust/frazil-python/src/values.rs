//! Bindings of `frazil_values`: type strings and single-value codecs. Python passes values in
//! their canonical native form (see `frazil/values/__init__.py`): ints for dates, times, timestamps and
//! unscaled decimals, 16 bytes for a uuid, lists for structs and lists, (key, value) pairs for
//! maps.

use frazil_values::{binary, json, Literal, PrimitiveType, Type};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::error::{invalid, IntoPyResult};

/// A type arrives as its Appendix C JSON text (a JSON string for a primitive).
pub fn parse_type(type_json: &str) -> PyResult<Type> {
    Type::from_json_str(type_json).py()
}

pub fn parse_primitive(type_json: &str) -> PyResult<PrimitiveType> {
    match parse_type(type_json)? {
        Type::Primitive(p) => Ok(p),
        other => Err(invalid(format!(
            "expected a primitive type, got {}",
            other.to_json()
        ))),
    }
}

fn extract<'py, T: FromPyObjectOwned<'py>>(
    obj: &Bound<'py, PyAny>,
    ty: &impl std::fmt::Display,
) -> PyResult<T> {
    obj.extract::<T>().map_err(|_| {
        invalid(format!(
            "{} is not a valid {ty} value",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

fn sequence<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    obj.try_iter()
        .and_then(|it| it.collect::<PyResult<Vec<_>>>())
        .map_err(|_| invalid(format!("a {what} value must be a sequence")))
}

fn optional(obj: &Bound<'_, PyAny>, ty: &Type) -> PyResult<Option<Literal>> {
    if obj.is_none() {
        Ok(None)
    } else {
        py_to_literal(obj, ty).map(Some)
    }
}

pub fn py_to_literal(obj: &Bound<'_, PyAny>, ty: &Type) -> PyResult<Literal> {
    use PrimitiveType as P;
    let literal = match ty {
        Type::Primitive(p) => match p {
            P::Unknown => return Err(invalid("unknown-typed values are always null")),
            P::Variant | P::Geometry { .. } | P::Geography { .. } => {
                return Err(crate::error::to_py(frazil_values::Error::unsupported(
                    format!("{p} values are not supported as single values yet"),
                )))
            }
            P::Boolean => Literal::Boolean(extract(obj, p)?),
            P::Int => Literal::Int(extract(obj, p)?),
            P::Long => Literal::Long(extract(obj, p)?),
            P::Float => Literal::Float(extract::<f64>(obj, p)? as f32),
            P::Double => Literal::Double(extract(obj, p)?),
            P::Decimal { .. } => Literal::Decimal(extract(obj, p)?),
            P::Date => Literal::Date(extract(obj, p)?),
            P::Time => Literal::Time(extract(obj, p)?),
            P::Timestamp => Literal::Timestamp(extract(obj, p)?),
            P::TimestampTz => Literal::TimestampTz(extract(obj, p)?),
            P::TimestampNs => Literal::TimestampNs(extract(obj, p)?),
            P::TimestampTzNs => Literal::TimestampTzNs(extract(obj, p)?),
            P::String => Literal::String(extract(obj, p)?),
            P::Uuid => {
                let bytes: Vec<u8> = extract(obj, p)?;
                let bytes: [u8; 16] = bytes
                    .try_into()
                    .map_err(|_| invalid("a uuid value must be 16 bytes"))?;
                Literal::Uuid(u128::from_be_bytes(bytes))
            }
            P::Fixed(_) => Literal::Fixed(extract(obj, p)?),
            P::Binary => Literal::Binary(extract(obj, p)?),
        },
        Type::Struct(s) => {
            let items = sequence(obj, "struct")?;
            if items.len() != s.fields.len() {
                return Err(invalid(format!(
                    "struct value has {} fields, its type has {}",
                    items.len(),
                    s.fields.len()
                )));
            }
            Literal::Struct(
                items
                    .iter()
                    .zip(&s.fields)
                    .map(|(item, f)| optional(item, &f.field_type))
                    .collect::<PyResult<_>>()?,
            )
        }
        Type::List(l) => Literal::List(
            sequence(obj, "list")?
                .iter()
                .map(|item| optional(item, &l.element))
                .collect::<PyResult<_>>()?,
        ),
        Type::Map(m) => {
            let mut entries = Vec::new();
            for pair in sequence(obj, "map")? {
                let (k, v): (Bound<PyAny>, Bound<PyAny>) = pair
                    .extract()
                    .map_err(|_| invalid("a map value must be a sequence of (key, value) pairs"))?;
                entries.push((py_to_literal(&k, &m.key)?, optional(&v, &m.value)?));
            }
            Literal::Map(entries)
        }
    };
    literal.validate(ty).py()?;
    Ok(literal)
}

pub fn literal_to_py<'py>(py: Python<'py>, value: Option<&Literal>) -> PyResult<Bound<'py, PyAny>> {
    let Some(value) = value else {
        return Ok(py.None().into_bound(py));
    };
    Ok(match value {
        Literal::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Literal::Int(v) | Literal::Date(v) => v.into_pyobject(py)?.into_any(),
        Literal::Long(v)
        | Literal::Time(v)
        | Literal::Timestamp(v)
        | Literal::TimestampTz(v)
        | Literal::TimestampNs(v)
        | Literal::TimestampTzNs(v) => v.into_pyobject(py)?.into_any(),
        Literal::Float(v) => (*v as f64).into_pyobject(py)?.into_any(),
        Literal::Double(v) => v.into_pyobject(py)?.into_any(),
        Literal::Decimal(v) => v.into_pyobject(py)?.into_any(),
        Literal::String(s) => s.into_pyobject(py)?.into_any(),
        Literal::Uuid(u) => PyBytes::new(py, &u.to_be_bytes()).into_any(),
        Literal::Fixed(b) | Literal::Binary(b) => PyBytes::new(py, b).into_any(),
        Literal::Struct(items) | Literal::List(items) => PyList::new(
            py,
            items
                .iter()
                .map(|v| literal_to_py(py, v.as_ref()))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
        Literal::Map(entries) => PyList::new(
            py,
            entries
                .iter()
                .map(|(k, v)| {
                    PyTuple::new(
                        py,
                        [literal_to_py(py, Some(k))?, literal_to_py(py, v.as_ref())?],
                    )
                })
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
    })
}

/// The canonical spec string of a primitive type string (`"decimal(9, 2)"` -> `"decimal(9,2)"`).
#[pyfunction]
fn type_parse_primitive(text: &str) -> PyResult<String> {
    Ok(text.parse::<PrimitiveType>().py()?.to_string())
}

#[pyfunction]
fn value_to_bytes<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    type_json: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let ty = parse_primitive(type_json)?;
    let literal = py_to_literal(value, &Type::Primitive(ty.clone()))?;
    let bytes = binary::to_bytes(&literal, &ty).py()?;
    Ok(PyBytes::new(py, &bytes))
}

#[pyfunction]
fn value_from_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    type_json: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let ty = parse_primitive(type_json)?;
    let literal = binary::from_bytes(data, &ty).py()?;
    literal_to_py(py, Some(&literal))
}

/// Returns JSON text; Python parses it into plain objects.
#[pyfunction]
fn value_to_json(value: &Bound<'_, PyAny>, type_json: &str) -> PyResult<String> {
    let ty = parse_type(type_json)?;
    let literal = optional(value, &ty)?;
    Ok(json::to_json(literal.as_ref(), &ty).py()?.to_string())
}

#[pyfunction]
fn value_from_json<'py>(
    py: Python<'py>,
    json_text: &str,
    type_json: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let ty = parse_type(type_json)?;
    let literal = json::from_json_str(json_text, &ty).py()?;
    literal_to_py(py, literal.as_ref())
}

/// Days from the epoch of a date literal's ISO text (`temporal::parse_date_literal`).
#[pyfunction]
fn value_parse_date_literal(text: &str) -> PyResult<i32> {
    frazil_values::temporal::parse_date_literal(text).py()
}

/// Nanoseconds of the day of a time literal's ISO text.
#[pyfunction]
fn value_parse_time_literal(text: &str) -> PyResult<i64> {
    frazil_values::temporal::parse_time_literal(text).py()
}

/// Nanoseconds from the epoch of a timestamp literal's ISO text (an offset exactly when
/// `with_zone`).
#[pyfunction]
fn value_parse_timestamp_literal(text: &str, with_zone: bool) -> PyResult<i128> {
    frazil_values::temporal::parse_timestamp_literal(text, with_zone).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(value_parse_date_literal, m)?)?;
    m.add_function(wrap_pyfunction!(value_parse_time_literal, m)?)?;
    m.add_function(wrap_pyfunction!(value_parse_timestamp_literal, m)?)?;
    m.add_function(wrap_pyfunction!(type_parse_primitive, m)?)?;
    m.add_function(wrap_pyfunction!(value_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(value_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(value_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(value_from_json, m)?)?;
    Ok(())
}
