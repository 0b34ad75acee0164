//! [`PartitionEvaluator`]: a partition predicate against `data_file.partition` tuples (Java's
//! `Evaluator` on a partition struct), for file selection and for residuals.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StructArray};
use frazil_values::{Error, PrimitiveType, Result};

use crate::expr::{Expr, Op, Predicate, Schema};
use crate::leaf::{eval_tree, eval_value, Lits};
use crate::value::Column;

/// The partition tuples of a manifest's entries, by partition field id.
pub struct PartitionColumns {
    pub len: usize,
    columns: HashMap<i32, Column>,
}

fn field_id_of(f: &arrow_schema::Field) -> Option<i32> {
    f.metadata().get("PARQUET:field_id")?.parse().ok()
}

impl PartitionColumns {
    /// Reads the partition struct (`data_file.partition`), matching children to the partition
    /// schema by field id (Arrow field metadata), else by name.
    pub fn new(partition: &StructArray, schema: &Schema) -> Result<PartitionColumns> {
        let len = partition.len();
        let mut columns = HashMap::new();
        let fields = partition.fields();
        for info in schema.fields.values() {
            let pos = fields
                .iter()
                .position(|f| field_id_of(f) == Some(info.id))
                .or_else(|| fields.iter().position(|f| f.name() == &info.name));
            let col = match pos {
                None => Column::Missing,
                Some(_) if info.ty == PrimitiveType::Unknown => Column::Missing,
                Some(i) => {
                    let mut array: ArrayRef = partition.column(i).clone();
                    // A null tuple makes every field null.
                    if let Some(nulls) = partition.nulls() {
                        let merged = arrow_buffer::NullBuffer::union(Some(nulls), array.nulls());
                        let data = array
                            .to_data()
                            .into_builder()
                            .nulls(merged)
                            .build()
                            .map_err(|e| Error::invalid(format!("partition column: {e}")))?;
                        array = arrow_array::make_array(data);
                    }
                    Column::new(
                        &array,
                        &info.ty,
                        &format!("partition field {:?}", info.name),
                    )?
                }
            };
            columns.insert(info.id, col);
        }
        Ok(PartitionColumns { len, columns })
    }

    /// The partition struct of a manifest batch (`data_file.partition`).
    pub fn from_manifest(
        batch: &arrow_array::RecordBatch,
        schema: &Schema,
    ) -> Result<PartitionColumns> {
        let n = batch.num_rows();
        let data_file = batch
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
            .ok_or_else(|| Error::invalid("manifest batch has no data_file struct column"))?;
        match data_file
            .column_by_name("partition")
            .and_then(|c| c.as_struct_opt())
        {
            Some(p) => PartitionColumns::new(p, schema),
            None => Ok(PartitionColumns {
                len: n,
                columns: schema
                    .fields
                    .keys()
                    .map(|id| (*id, Column::Missing))
                    .collect(),
            }),
        }
    }

    pub fn column(&self, id: i32) -> Option<&Column> {
        self.columns.get(&id)
    }
}

/// Filters partition tuples with an expression over partition field ids.
pub struct PartitionEvaluator;

impl PartitionEvaluator {
    /// Java's `Evaluator` on partition tuples: a null value sorts before every value (so
    /// `p < X` holds for null, `p > X` does not), null is never in a set and never starts with
    /// a prefix. This is the reference's file selection, which keeps every file the spec's
    /// semantics keep (it differs only in also keeping null partitions for `<` and `<=`);
    /// residuals decide with the spec's rules. Fields that are missing or cannot be compared
    /// might match.
    pub fn eval(expr: &Expr, cols: &PartitionColumns) -> Result<Vec<bool>> {
        let n = cols.len;
        eval_tree(expr, n, &mut |p| {
            let lits = Lits::new(p)?;
            let Some(col) = cols.column(p.field_id).filter(|c| !c.is_missing()) else {
                return Ok(vec![true; n]);
            };
            Ok((0..n)
                .map(|i| match col.get(i) {
                    Some(v) => eval_value(p.op, &lits, &v).unwrap_or(true),
                    None => matches!(
                        p.op,
                        Op::IsNull
                            | Op::NotNaN
                            | Op::Lt
                            | Op::LtEq
                            | Op::NotEq
                            | Op::NotIn
                            | Op::NotStartsWith
                    ),
                })
                .collect())
        })
    }

    /// For residuals: per row, whether `p` certainly holds (`Some(true)`), certainly fails
    /// (`Some(false)`), or is undecided, with the spec's 2-valued semantics: on a null value
    /// the positive tests and comparisons are false and their negations (`!=`, `NOT IN`,
    /// `NOT STARTS WITH`, `IS NOT NaN`) true. Every transform maps null, and only null, to null,
    /// so a null partition value means null source values.
    pub fn decide(
        p: &Predicate,
        cols: &PartitionColumns,
        out: &mut [Option<bool>],
        strict: bool,
    ) -> Result<()> {
        let lits = Lits::new(p)?;
        let Some(col) = cols.column(p.field_id).filter(|c| !c.is_missing()) else {
            return Ok(());
        };
        for (i, slot) in out.iter_mut().enumerate() {
            let r = match col.get(i) {
                Some(v) => eval_value(p.op, &lits, &v),
                None => match p.op {
                    Op::IsNull => Some(true),
                    Op::NotNull
                    | Op::IsNaN
                    | Op::Lt
                    | Op::LtEq
                    | Op::Gt
                    | Op::GtEq
                    | Op::Eq
                    | Op::In
                    | Op::StartsWith => Some(false),
                    Op::NotNaN | Op::NotEq | Op::NotIn | Op::NotStartsWith => Some(true),
                },
            };
            // strict projections only prove truth, inclusive ones only falsity
            match (r, strict) {
                (Some(true), true) => *slot = Some(true),
                (Some(false), false) if slot.is_none() => *slot = Some(false),
                _ => {}
            }
        }
        Ok(())
    }
}
