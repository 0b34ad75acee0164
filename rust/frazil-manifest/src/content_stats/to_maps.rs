//! A decoded v4 `content_stats` column back into the stats maps (reading), ids checked.

use super::*;

// ---------------------------------------------------------------------------------------------
// content_stats -> maps (reading)

/// Single-value binary form of a typed bound (Appendix D), from the Arrow type the Avro type
/// decodes to; geo points as x:y[:z][:m].
fn bound_bytes(a: &dyn Array, i: usize, base: i32, out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    match a.data_type() {
        DataType::Boolean => out.push(u8::from(a.as_boolean().value(i))),
        DataType::Int32 => out.extend(a.as_primitive::<Int32Type>().value(i).to_le_bytes()),
        DataType::Date32 => out.extend(a.as_primitive::<Date32Type>().value(i).to_le_bytes()),
        DataType::Int64 => out.extend(a.as_primitive::<Int64Type>().value(i).to_le_bytes()),
        DataType::Time64(TimeUnit::Microsecond) => out.extend(
            a.as_primitive::<Time64MicrosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => out.extend(
            a.as_primitive::<TimestampMicrosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => out.extend(
            a.as_primitive::<TimestampNanosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Float32 => out.extend(a.as_primitive::<Float32Type>().value(i).to_le_bytes()),
        DataType::Float64 => out.extend(a.as_primitive::<Float64Type>().value(i).to_le_bytes()),
        DataType::Decimal128(_, _) => {
            let mut buf = [0u8; 16];
            out.extend_from_slice(decimal::min_be_bytes(
                a.as_primitive::<Decimal128Type>().value(i),
                &mut buf,
            ));
        }
        DataType::Utf8 => out.extend_from_slice(a.as_string::<i32>().value(i).as_bytes()),
        DataType::Binary => out.extend_from_slice(a.as_binary::<i32>().value(i)),
        DataType::FixedSizeBinary(_) => out.extend_from_slice(a.as_fixed_size_binary().value(i)),
        DataType::Struct(fields) => {
            // a geo point: coordinates found by id; anything else (a variant) is skipped
            let s = a.as_struct();
            let coord = |k: i32| -> Option<Option<f64>> {
                let pos = fields.iter().position(|f| {
                    field_id(f)
                        .is_some_and(|id| id == base + GEO_LOWER + k || id == base + GEO_UPPER + k)
                })?;
                let c = s.column(pos).as_primitive_opt::<Float64Type>()?;
                Some(c.is_valid(i).then(|| c.value(i)))
            };
            let (x, y) = (coord(0)??, coord(1)??);
            let (z, m) = (coord(2).flatten(), coord(3).flatten());
            out.extend(x.to_le_bytes());
            out.extend(y.to_le_bytes());
            match (z, m) {
                (None, None) => {}
                (Some(z), None) => out.extend(z.to_le_bytes()),
                (z, Some(m)) => {
                    out.extend(z.unwrap_or(f64::NAN).to_le_bytes());
                    out.extend(m.to_le_bytes());
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// Map entries being built: per row, (key, value) pairs.
struct MapParts<V> {
    offsets: Vec<i32>,
    keys: Vec<i32>,
    values: Vec<V>,
    valid: Vec<bool>,
}

impl<V> MapParts<V> {
    fn new(n: usize) -> Self {
        MapParts {
            offsets: {
                let mut o = Vec::with_capacity(n + 1);
                o.push(0);
                o
            },
            keys: Vec::new(),
            values: Vec::new(),
            valid: Vec::with_capacity(n),
        }
    }
    fn end_row(&mut self) {
        let start = self.offsets.last().copied().unwrap_or(0);
        let end = self.keys.len() as i32;
        self.valid.push(end > start);
        self.offsets.push(end);
    }
    fn finish(self, dt: &DataType, values: ArrayRef) -> Result<ArrayRef> {
        let DataType::Map(entries, sorted) = dt else {
            return Err(Error::invalid("a stats map column is not a map"));
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(Error::invalid("a stats map's entries are not a struct"));
        };
        let offsets = self.offsets;
        let s = StructArray::try_new(
            kv.clone(),
            vec![Arc::new(Int32Array::from(self.keys)), values],
            None,
        )
        .map_err(|e| Error::invalid(e.to_string()))?;
        let m = MapArray::try_new(
            entries.clone(),
            OffsetBuffer::new(offsets.into()),
            s,
            Some(NullBuffer::from(self.valid)),
            *sorted,
        )
        .map_err(|e| Error::invalid(e.to_string()))?;
        Ok(Arc::new(m))
    }
}

/// A decoded stats struct: its table field id and the positions of its metrics.
struct Resolved {
    field: i32,
    column: usize,
    at: [Option<usize>; 8],
}

/// Checks the ids of a decoded `content_stats` struct and finds each metric by id.
fn resolve(fields: &Fields) -> Result<Vec<Resolved>> {
    let mut seen: HashMap<i32, &str> = HashMap::new();
    let mut out = Vec::with_capacity(fields.len());
    for (column, f) in fields.iter().enumerate() {
        let base = field_id(f).ok_or_else(|| {
            Error::decode(format!(
                "content_stats: stats struct {} has no field id",
                f.name()
            ))
        })?;
        let field = field_of_base(base).ok_or_else(|| {
            Error::decode(format!(
                "content_stats: {} has id {base}, which is not a stats struct id \
                 (10_000 + 200 * field id, below 200_000_000)",
                f.name()
            ))
        })?;
        if let Some(other) = seen.insert(base, f.name()) {
            return Err(Error::decode(format!(
                "content_stats: stats structs {other} and {} both have id {base}",
                f.name()
            )));
        }
        let DataType::Struct(children) = f.data_type() else {
            return Err(Error::decode(format!(
                "content_stats: {} is not a struct",
                f.name()
            )));
        };
        let mut at = [None; 8];
        for (k, c) in children.iter().enumerate() {
            let id = field_id(c).ok_or_else(|| {
                Error::decode(format!(
                    "content_stats: {}.{} has no field id",
                    f.name(),
                    c.name()
                ))
            })?;
            let offset = id - base;
            if !(1..RANGE).contains(&offset) {
                return Err(Error::decode(format!(
                    "content_stats: {}.{} has id {id}, outside its struct's range [{base}, {})",
                    f.name(),
                    c.name(),
                    base + RANGE
                )));
            }
            if (1..=7).contains(&offset) {
                let slot = &mut at[offset as usize];
                if slot.is_some() {
                    return Err(Error::decode(format!(
                        "content_stats: {} has two fields with id {id}",
                        f.name()
                    )));
                }
                *slot = Some(k);
            }
        }
        out.push(Resolved { field, column, at });
    }
    Ok(out)
}

/// Replaces the stats maps of decoded `data_file` rows by those the `content_stats` column
/// holds (when the file has one) and drops that column; `keep` limits the maps to some ids.
pub fn to_maps(df: &StructArray, keep: Option<&KeySet>) -> Result<StructArray> {
    let Some(pos) = df.fields().iter().position(|f| f.name() == "content_stats") else {
        return Ok(df.clone());
    };
    let stats = df
        .column(pos)
        .as_struct_opt()
        .ok_or_else(|| Error::decode("content_stats is not a struct"))?;
    let resolved = resolve(stats.fields())?;
    let resolved: Vec<Resolved> = match keep {
        Some(k) => resolved
            .into_iter()
            .filter(|r| k.contains(r.field))
            .collect(),
        None => resolved,
    };
    let n = df.len();
    let mut fields: Vec<Arc<Field>> = Vec::with_capacity(df.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(df.num_columns());
    let v4 = !stats.fields().is_empty();
    for (i, f) in df.fields().iter().enumerate() {
        if i == pos {
            continue;
        }
        let offset = match f.name().as_str() {
            "value_counts" => Some(VALUE_COUNT),
            "null_value_counts" => Some(NULL_VALUE_COUNT),
            "nan_value_counts" => Some(NAN_VALUE_COUNT),
            "lower_bounds" => Some(LOWER_BOUND),
            "upper_bounds" => Some(UPPER_BOUND),
            _ => None,
        };
        let column = match offset {
            Some(o) if v4 => {
                let built = if o == LOWER_BOUND || o == UPPER_BOUND {
                    bounds_map(stats, &resolved, o, f.data_type(), n)?
                } else {
                    counts_map(stats, &resolved, o, f.data_type(), n)?
                };
                fields.push(Arc::new(
                    f.as_ref().clone().with_data_type(built.data_type().clone()),
                ));
                columns.push(built);
                continue;
            }
            _ => df.column(i).clone(),
        };
        fields.push(f.clone());
        columns.push(column);
    }
    StructArray::try_new(Fields::from(fields), columns, df.nulls().cloned())
        .map_err(|e| Error::decode(e.to_string()))
}

fn counts_map(
    stats: &StructArray,
    resolved: &[Resolved],
    offset: i32,
    dt: &DataType,
    n: usize,
) -> Result<ArrayRef> {
    let cols: Vec<(i32, &StructArray, Option<&Int64Array>)> = resolved
        .iter()
        .map(|r| {
            let s = stats.column(r.column).as_struct();
            let c = r.at[offset as usize].and_then(|k| s.column(k).as_primitive_opt::<Int64Type>());
            (r.field, s, c)
        })
        .collect();
    let mut parts = MapParts::<i64>::new(n);
    for row in 0..n {
        for (field, s, c) in &cols {
            if let Some(c) = c {
                if s.is_valid(row) && c.is_valid(row) {
                    parts.keys.push(*field);
                    parts.values.push(c.value(row));
                }
            }
        }
        parts.end_row();
    }
    let values = Arc::new(Int64Array::from(std::mem::take(&mut parts.values)));
    parts.finish(dt, values)
}

fn bounds_map(
    stats: &StructArray,
    resolved: &[Resolved],
    offset: i32,
    dt: &DataType,
    n: usize,
) -> Result<ArrayRef> {
    let cols: Vec<(i32, i32, &StructArray, Option<&ArrayRef>)> = resolved
        .iter()
        .map(|r| {
            let s = stats.column(r.column).as_struct();
            let c = r.at[offset as usize].map(|k| s.column(k));
            (r.field, stats_base_id(r.field).unwrap_or(0), s, c)
        })
        .collect();
    let mut parts = MapParts::<()>::new(n);
    let mut values = BinaryBuilder::new();
    let mut buf = Vec::new();
    for row in 0..n {
        for (field, base, s, c) in &cols {
            if let Some(c) = c {
                if s.is_valid(row)
                    && c.is_valid(row)
                    && bound_bytes(c.as_ref(), row, *base, &mut buf).is_some()
                {
                    parts.keys.push(*field);
                    values.append_value(&buf);
                }
            }
        }
        parts.end_row();
    }
    parts.finish(dt, Arc::new(values.finish()))
}
