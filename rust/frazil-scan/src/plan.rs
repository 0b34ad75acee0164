//! Scan planning over decoded manifests (spec "Scan Planning"): which manifests to read, which
//! of their entries match, and each entry's residual. Inputs and outputs are Arrow batches,
//! Arrow arrays and JSON strings, so that a Python binding is a thin translation.
//!
//! Per manifest (Java's `ManifestGroup`/`ManifestReader`): the row filter is projected onto the
//! manifest's own partition spec; an entry is selected when it is live (status != DELETED), its
//! partition tuple passes the inclusive projection, and its metrics say rows might match.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, BooleanArray, Int32Array, RecordBatch};
use frazil_values::{Error, Result};

use crate::eval::{
    ManifestEvaluator, MetricsColumns, MetricsEvaluator, PartitionColumns, PartitionEvaluator,
};
use crate::expr::{Expr, Schema};
use crate::project::{project, PartitionSpec};
use crate::residual::ResidualEvaluator;

/// Manifest entry status of a deleted file (spec "Manifest Entry Fields").
const STATUS_DELETED: i32 = 2;

struct SpecContext {
    spec: PartitionSpec,
    partition_schema: Schema,
    inclusive: Expr,
    residuals: ResidualEvaluator,
}

/// A row filter bound to a table's schema and partition specs, reusable across snapshots.
pub struct ScanPlanner {
    schema: Schema,
    filter: Expr,
    specs: HashMap<i32, SpecContext>,
}

/// The plan of one manifest.
#[derive(Debug, Clone)]
pub struct ManifestPlan {
    /// Per entry: read it (live, partition and metrics might match).
    pub selected: BooleanArray,
    /// Per entry: index into `residuals`.
    pub residual_index: Int32Array,
    /// Distinct residual expressions, as JSON (expressions spec, id references).
    pub residuals: Vec<String>,
}

impl ScanPlanner {
    /// `schema_json`: the scan's schema (Appendix C); `specs_json`: a list of partition specs
    /// (table metadata's `partition-specs`); `filter_json`: the bound row filter.
    pub fn new(schema_json: &str, specs_json: &str, filter_json: &str) -> Result<ScanPlanner> {
        let schema = Schema::from_json(schema_json)?;
        let specs = PartitionSpec::list_from_json(specs_json)?;
        let filter = Expr::from_json_str(filter_json, &schema)?;
        Ok(ScanPlanner::from_parts(schema, specs, filter))
    }

    pub fn from_parts(schema: Schema, specs: Vec<PartitionSpec>, filter: Expr) -> ScanPlanner {
        let filter = filter.rewrite_not();
        let specs = specs
            .into_iter()
            .map(|spec| {
                let ctx = SpecContext {
                    partition_schema: spec.partition_schema(&schema),
                    inclusive: project(&filter, &spec, &schema, false),
                    residuals: ResidualEvaluator::new(&filter, &spec, &schema),
                    spec,
                };
                (ctx.spec.spec_id, ctx)
            })
            .collect();
        ScanPlanner {
            schema,
            filter,
            specs,
        }
    }

    pub fn filter(&self) -> &Expr {
        &self.filter
    }

    fn spec(&self, spec_id: i32) -> Result<&SpecContext> {
        self.specs.get(&spec_id).ok_or_else(|| {
            Error::invalid(format!(
                "partition spec {spec_id} is not in the table metadata"
            ))
        })
    }

    /// The inclusive projection of the filter onto a spec, as JSON over partition field ids.
    pub fn partition_filter_json(&self, spec_id: i32) -> Result<String> {
        let ctx = self.spec(spec_id)?;
        Ok(ctx.inclusive.to_json(&ctx.partition_schema)?.to_string())
    }

    /// Which manifests of a manifest list batch may hold matching entries: partition summaries
    /// against the projection of their spec, and no manifest without added or existing files.
    pub fn prune_manifests(&self, manifest_list: &RecordBatch) -> Result<BooleanArray> {
        let n = manifest_list.num_rows();
        let spec_ids = manifest_list
            .column_by_name("partition_spec_id")
            .and_then(|c| c.as_primitive_opt::<Int32Type>())
            .ok_or_else(|| Error::invalid("manifest list batch has no int32 partition_spec_id"))?;
        let mut keep = vec![true; n];
        let count = |name: &str, i: usize| {
            manifest_list
                .column_by_name(name)
                .and_then(|c| c.as_primitive_opt::<Int32Type>())
                .and_then(|c| (!c.is_null(i)).then(|| c.value(i)))
        };
        let mut rows_by_spec: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, k) in keep.iter_mut().enumerate() {
            if count("added_files_count", i) == Some(0)
                && count("existing_files_count", i) == Some(0)
            {
                *k = false;
                continue;
            }
            rows_by_spec.entry(spec_ids.value(i)).or_default().push(i);
        }
        for (spec_id, rows) in rows_by_spec {
            let ctx = self.spec(spec_id)?;
            let eval =
                ManifestEvaluator::new(ctx.inclusive.clone(), &ctx.spec, &ctx.partition_schema);
            for (row, m) in rows.iter().zip(eval.eval(manifest_list, &rows)?) {
                keep[*row] = m;
            }
        }
        Ok(BooleanArray::from(keep))
    }

    /// Plans one decoded manifest (a `manifest_entry` batch) written with spec `spec_id`.
    pub fn plan_manifest(&self, spec_id: i32, manifest: &RecordBatch) -> Result<ManifestPlan> {
        let ctx = self.spec(spec_id)?;
        let n = manifest.num_rows();
        let mut selected = match manifest
            .column_by_name("status")
            .and_then(|c| c.as_primitive_opt::<Int32Type>())
        {
            Some(status) => (0..n)
                .map(|i| status.is_null(i) || status.value(i) != STATUS_DELETED)
                .collect(),
            None => vec![true; n],
        };
        let partitions = PartitionColumns::from_manifest(manifest, &ctx.partition_schema)?;
        if !matches!(ctx.inclusive, Expr::True) {
            let by_partition = PartitionEvaluator::eval(&ctx.inclusive, &partitions)?;
            selected
                .iter_mut()
                .zip(by_partition)
                .for_each(|(s, p)| *s &= p);
        }
        if !matches!(self.filter, Expr::True) && selected.iter().any(|s| *s) {
            let metrics = MetricsColumns::from_manifest(manifest)?;
            let by_metrics =
                MetricsEvaluator::new(&self.filter, &self.schema, false).eval(&metrics)?;
            selected
                .iter_mut()
                .zip(by_metrics)
                .for_each(|(s, m)| *s &= m);
        }
        let residuals = ctx.residuals.eval(&partitions)?;
        let json = residuals
            .exprs
            .iter()
            .map(|e| Ok(e.to_json(&self.schema)?.to_string()))
            .collect::<Result<Vec<_>>>()?;
        Ok(ManifestPlan {
            selected: BooleanArray::from(selected),
            residual_index: Int32Array::from(residuals.index),
            residuals: json,
        })
    }

    /// Plans many manifests on up to `threads` threads (all cores when `None`), in order.
    /// `manifests` pairs each decoded manifest with its row in `manifest_list` (for its spec id).
    pub fn plan(
        &self,
        manifest_list: &RecordBatch,
        manifests: &[(usize, RecordBatch)],
        threads: Option<usize>,
    ) -> Result<Vec<ManifestPlan>> {
        let spec_ids = manifest_list
            .column_by_name("partition_spec_id")
            .and_then(|c| c.as_primitive_opt::<Int32Type>())
            .ok_or_else(|| Error::invalid("manifest list batch has no int32 partition_spec_id"))?;
        let job = |(row, batch): &(usize, RecordBatch)| -> Result<ManifestPlan> {
            if *row >= spec_ids.len() {
                return Err(Error::invalid(format!(
                    "manifest row {row} is out of the manifest list's {} rows",
                    spec_ids.len()
                )));
            }
            let label = |e: Error| {
                let path = manifest_list
                    .column_by_name("manifest_path")
                    .and_then(|c| c.as_string_opt::<i32>())
                    .map(|p| p.value(*row).to_string())
                    .unwrap_or_else(|| format!("#{row}"));
                Error::new(e.kind, format!("manifest {path}: {e}"))
            };
            self.plan_manifest(spec_ids.value(*row), batch)
                .map_err(label)
        };
        let threads = threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, manifests.len().max(1));
        if threads == 1 {
            return manifests.iter().map(job).collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<std::sync::Mutex<Option<Result<ManifestPlan>>>> = manifests
            .iter()
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(m) = manifests.get(i) else { break };
                    let r = job(m);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                });
            }
        });
        results
            .into_iter()
            .enumerate()
            .map(|(i, slot)| {
                slot.into_inner().ok().flatten().unwrap_or_else(|| {
                    Err(Error::invalid(format!(
                        "manifest {i}: planning thread failed"
                    )))
                })
            })
            .collect()
    }
}
