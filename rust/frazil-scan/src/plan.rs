//! Scan planning over decoded manifests (spec "Scan Planning"): which manifests to read, which
//! of their entries match, and each entry's residual. Inputs and outputs are Arrow batches,
//! Arrow arrays and JSON strings, so that a Python binding is a thin translation.
//!
//! Per manifest (Java's `ManifestGroup`/`ManifestReader`): the row filter is projected onto the
//! manifest's own partition spec; an entry is selected when it is live (status != DELETED), its
//! partition tuple passes the inclusive projection, and its metrics say rows might match.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, BooleanArray, Int32Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema};
use frazil_manifest::manifest::COLUMN_STATS;
use frazil_values::{Error, Result};

use crate::delete_file_index::{
    restrict_to_fields, DeleteIndex, FileColumns, TaskDeletes, CONTENT_EQUALITY_DELETES,
};
use crate::expr::{Expr, Schema};
use crate::manifest_evaluator::ManifestEvaluator;
use crate::metrics_evaluator::{MetricsColumns, MetricsEvaluator};
use crate::partition_evaluator::{PartitionColumns, PartitionEvaluator};
use crate::project::{project, PartitionSpec};
use crate::residual::ResidualEvaluator;

/// The `data_file` stats maps the metrics evaluator reads (`MetricsColumns`).
const METRICS_MAPS: [&str; 5] = [
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
];

/// Manifest entry status of a deleted file (spec "Manifest Entry Fields").
const STATUS_DELETED: i32 = 2;

struct SpecContext {
    spec: PartitionSpec,
    partition_schema: Schema,
    inclusive: Expr,
    residuals: ResidualEvaluator,
}

/// One manifest of a planned scan (see `ScanPlanner::plan_files`).
#[derive(Debug, Clone)]
pub struct PlannedManifest {
    /// The manifest's row in the manifest list.
    pub row: usize,
    /// 0: data manifest; 1: delete manifest.
    pub content: i32,
    /// The selected entries (a data manifest's tasks, a delete manifest's needed delete files),
    /// in manifest order, in the decoded manifest's schema.
    pub entries: RecordBatch,
    /// Data manifests: per selected entry, its position among the manifest's entries (to find
    /// it again, e.g. to decode its column stats later).
    pub positions: Vec<usize>,
    /// Data manifests: per entry, its residual's index into `PlannedScan::residuals`.
    pub residual_index: Int32Array,
    /// Data manifests: per entry, its delete files, as positions in the concatenation of all
    /// delete manifests' `entries` in input order.
    pub deletes: TaskDeletes,
}

/// A planned scan: its manifests in input order and the distinct residuals of all tasks, as
/// JSON (expressions spec, id references).
#[derive(Debug, Clone)]
pub struct PlannedScan {
    pub manifests: Vec<PlannedManifest>,
    pub residuals: Vec<String>,
}

/// The planned delete manifests of a scan, indexed for attaching delete files to data files
/// (see `ScanPlanner::plan_deletes`).
pub struct DeletePlan {
    /// The delete manifests' selected entries, in input order.
    pub manifests: Vec<PlannedManifest>,
    index: DeleteIndex,
    has_equality_deletes: bool,
}

impl DeletePlan {
    /// The number of delete files (the indices `PlannedManifest::deletes` refer to).
    pub fn len(&self) -> usize {
        self.manifests.iter().map(|m| m.entries.num_rows()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A row filter bound to a table's schema and partition specs, reusable across snapshots.
pub struct ScanPlanner {
    schema: Schema,
    filter: Expr,
    specs: HashMap<i32, SpecContext>,
}

/// What a manifest load (see `ScanPlanner::plan_files`) is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// Threads this one manifest may be decoded on (more than one when there are fewer
    /// manifests than threads).
    pub threads: usize,
    /// Whether the `data_file` column stats maps are needed; when false the load may skip
    /// them (`frazil_manifest::manifest::without_column_stats`).
    pub column_stats: bool,
    /// When the stats are loaded: `Some(ids)` if only these fields' stats map entries are
    /// needed (the filter's columns; then only the maps metrics evaluation reads are loaded),
    /// `None` for every field's.
    pub stats_field_ids: Option<Vec<i32>>,
}

impl Load {
    /// Decodes one manifest as asked; `base` gives its inheritance and table location.
    pub fn read(
        &self,
        data: &[u8],
        base: &frazil_manifest::ReadOptions,
    ) -> Result<arrow_array::RecordBatch> {
        let columns = match (self.column_stats, &self.stats_field_ids) {
            (false, _) => Some(frazil_manifest::manifest::without_column_stats()),
            // stats for the filter alone: only the maps metrics evaluation reads (the others,
            // column sizes and distinct counts, are skipped without being built)
            (true, Some(_)) => {
                let mut paths = frazil_manifest::manifest::without_column_stats();
                paths.extend(METRICS_MAPS.iter().map(|m| format!("data_file.{m}")));
                Some(paths)
            }
            (true, None) => None,
        };
        let options = frazil_manifest::ReadOptions {
            columns,
            threads: Some(self.threads),
            stats_field_ids: self.stats_field_ids.as_deref().map(Arc::from),
            ..base.clone()
        };
        frazil_manifest::read_manifest(data, &options)
    }
}

/// The plan of one manifest.
#[derive(Debug, Clone)]
pub struct ManifestPlan {
    /// Per entry: read it (live, partition and metrics might match).
    pub selected: BooleanArray,
    /// Per entry: index into `residuals`.
    pub residual_index: Int32Array,
    /// Distinct residual expressions (written as JSON once per plan, see `plan_data`).
    pub residuals: Vec<Expr>,
}

impl ScanPlanner {
    /// `schema_json`: the scan's schema (Appendix C); `specs_json`: a list of partition specs
    /// (table metadata's `partition-specs`); `filter_json`: the bound row filter.
    pub fn new(schema_json: &str, specs_json: &str, filter_json: &str) -> Result<ScanPlanner> {
        let (schema, filter) = Expr::bound_from_json(schema_json, filter_json)?;
        let specs = PartitionSpec::list_from_json(specs_json)?;
        Ok(ScanPlanner::from_parts(schema, specs, filter))
    }

    pub fn from_parts(schema: Schema, specs: Vec<PartitionSpec>, filter: Expr) -> ScanPlanner {
        let filter = filter.rewrite_not(&schema);
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

    /// The filter as residuals write it (NOT pushed down, chains balanced): the residual of
    /// every file no partition value decides.
    pub fn filter_json(&self) -> Result<String> {
        Ok(self.filter.to_json(&self.schema)?.to_string())
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
        let (selected, partitions) = self.select(ctx, manifest, &self.filter)?;
        let residuals = ctx.residuals.eval(&partitions)?;
        Ok(ManifestPlan {
            selected: BooleanArray::from(selected),
            residual_index: Int32Array::from(residuals.index),
            residuals: residuals.exprs,
        })
    }

    /// Live entries whose partition tuple and metrics might match `filter`.
    fn select(
        &self,
        ctx: &SpecContext,
        manifest: &RecordBatch,
        filter: &Expr,
    ) -> Result<(Vec<bool>, PartitionColumns)> {
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
        if !matches!(filter, Expr::True) && selected.iter().any(|s| *s) {
            let metrics = MetricsColumns::from_manifest(manifest)?;
            let by_metrics = MetricsEvaluator::new(filter, &self.schema, false).eval(&metrics)?;
            selected
                .iter_mut()
                .zip(by_metrics)
                .for_each(|(s, m)| *s &= m);
        }
        Ok((selected, partitions))
    }

    /// Selects the delete files of a delete manifest that a scan with this filter needs: live,
    /// partition might match, and metrics might match (equality deletes on their equality
    /// fields only, see `delete`).
    pub fn select_deletes(&self, spec_id: i32, manifest: &RecordBatch) -> Result<Vec<bool>> {
        let ctx = self.spec(spec_id)?;
        if matches!(self.filter, Expr::True) {
            return Ok(self.select(ctx, manifest, &Expr::True)?.0);
        }
        let cols = FileColumns::new(manifest)?;
        let mut groups: HashMap<Vec<i32>, Vec<usize>> = HashMap::new();
        for i in 0..manifest.num_rows() {
            if cols.content(i) == CONTENT_EQUALITY_DELETES {
                let mut ids = cols.equality_ids(i);
                ids.sort_unstable();
                groups.entry(ids).or_default().push(i);
            }
        }
        let (mut selected, _) = self.select(ctx, manifest, &self.filter)?;
        if !groups.is_empty() {
            let (by_partition, _) = self.select(ctx, manifest, &Expr::True)?;
            for (ids, rows) in groups {
                let restricted = restrict_to_fields(&self.filter, &ids);
                let metrics = if matches!(restricted, Expr::True) {
                    None
                } else {
                    let m = MetricsColumns::from_manifest(manifest)?;
                    Some(MetricsEvaluator::new(&restricted, &self.schema, false).eval(&m)?)
                };
                for i in rows {
                    selected[i] = by_partition[i] && metrics.as_ref().is_none_or(|m| m[i]);
                }
            }
        }
        Ok(selected)
    }

    /// Plans a whole scan: the manifests at rows `rows` of `manifest_list` (data and delete
    /// manifests, per its `content` column), each decoded by `load(k, what)` for `rows[k]` on
    /// the worker threads. Delete manifests are planned first and indexed
    /// ([`Self::plan_deletes`]); then each data manifest is planned and its selected entries get
    /// their delete files ([`Self::plan_data`]). Results are in `rows` order; up to `threads`
    /// threads (all cores when `None`).
    ///
    /// Data files' column stats are in the planned entries only with `include_column_stats`
    /// (as Java's `includeColumnStats()`); when neither the filter nor equality deletes need
    /// them either, data manifests are loaded without them.
    pub fn plan_files<F>(
        &self,
        manifest_list: &RecordBatch,
        rows: &[usize],
        load: F,
        threads: Option<usize>,
        include_column_stats: bool,
    ) -> Result<PlannedScan>
    where
        F: Fn(usize, Load) -> Result<RecordBatch> + Sync,
    {
        let content = ListColumns::new(manifest_list)?;
        let (delete_jobs, data_jobs): (Vec<usize>, Vec<usize>) =
            (0..rows.len()).partition(|k| content.is_delete(rows[*k]));
        let delete_rows: Vec<usize> = delete_jobs.iter().map(|&k| rows[k]).collect();
        let data_rows: Vec<usize> = data_jobs.iter().map(|&k| rows[k]).collect();
        let deletes = self.plan_deletes(
            manifest_list,
            &delete_rows,
            |j, what| load(delete_jobs[j], what),
            threads,
        )?;
        let data = self.plan_data(
            &deletes,
            manifest_list,
            &data_rows,
            |j, what| load(data_jobs[j], what),
            threads,
            include_column_stats,
        )?;
        let mut out: Vec<Option<PlannedManifest>> = (0..rows.len()).map(|_| None).collect();
        for (k, m) in delete_jobs.into_iter().zip(deletes.manifests) {
            out[k] = Some(m);
        }
        for (k, m) in data_jobs.into_iter().zip(data.manifests) {
            out[k] = Some(m);
        }
        Ok(PlannedScan {
            manifests: out.into_iter().flatten().collect(),
            residuals: data.residuals,
        })
    }

    /// Plans the delete manifests at rows `rows` of `manifest_list` (each decoded by
    /// `load(k, what)` for `rows[k]`): the delete files a scan with this filter needs, indexed
    /// for [`Self::plan_data`]. Delete files are numbered in `rows` order, then manifest order.
    pub fn plan_deletes<F>(
        &self,
        manifest_list: &RecordBatch,
        rows: &[usize],
        load: F,
        threads: Option<usize>,
    ) -> Result<DeletePlan>
    where
        F: Fn(usize, Load) -> Result<RecordBatch> + Sync,
    {
        let threads = thread_count(threads);
        let list = ListColumns::new(manifest_list)?;
        list.check_rows(rows)?;
        let what = Load {
            threads: per_load(threads, rows.len()),
            column_stats: true,
            stats_field_ids: None,
        };
        let jobs: Vec<usize> = (0..rows.len()).collect();
        let batches = parallel_map(&jobs, Some(threads), |&k| {
            let row = rows[k];
            let run = || -> Result<RecordBatch> {
                let batch = load(k, what.clone())?;
                let selected = self.select_deletes(list.spec_id(row), &batch)?;
                filter_batch(&batch, &BooleanArray::from(selected))
            };
            run().map_err(list.label(row))
        })?;
        let index = {
            let parts = rows
                .iter()
                .zip(&batches)
                .map(|(&row, b)| Ok((&self.spec(list.spec_id(row))?.spec, b)))
                .collect::<Result<Vec<_>>>()?;
            DeleteIndex::build(&parts)?
        };
        // equality deletes are matched against data files' stats
        let mut has_equality_deletes = false;
        for batch in &batches {
            let cols = FileColumns::new(batch)?;
            has_equality_deletes |=
                (0..batch.num_rows()).any(|i| cols.content(i) == CONTENT_EQUALITY_DELETES);
        }
        let manifests = rows
            .iter()
            .zip(batches)
            .map(|(&row, entries)| {
                let n = entries.num_rows();
                PlannedManifest {
                    row,
                    content: 1,
                    entries,
                    positions: Vec::new(),
                    residual_index: Int32Array::from(Vec::<i32>::new()),
                    deletes: TaskDeletes::none(n),
                }
            })
            .collect();
        Ok(DeletePlan {
            manifests,
            index,
            has_equality_deletes,
        })
    }

    /// Plans the data manifests at rows `rows` of `manifest_list` (each decoded by
    /// `load(k, what)` for `rows[k]`) against a [`DeletePlan`] of the same scan: the selected
    /// entries, their positions in the manifest, residuals and delete files. A scan may plan
    /// its data manifests in several calls (streaming); residual indices are per call.
    pub fn plan_data<F>(
        &self,
        deletes: &DeletePlan,
        manifest_list: &RecordBatch,
        rows: &[usize],
        load: F,
        threads: Option<usize>,
        include_column_stats: bool,
    ) -> Result<PlannedScan>
    where
        F: Fn(usize, Load) -> Result<RecordBatch> + Sync,
    {
        let threads = thread_count(threads);
        let list = ListColumns::new(manifest_list)?;
        list.check_rows(rows)?;
        let needs_metrics = !matches!(self.filter, Expr::True);
        let column_stats = include_column_stats || deletes.has_equality_deletes;
        let what = Load {
            threads: per_load(threads, rows.len()),
            column_stats: column_stats || needs_metrics,
            // only the filter's columns, unless all stats are asked for or equality deletes
            // (matched on their own columns' stats) need them
            stats_field_ids: (!column_stats && needs_metrics)
                .then(|| self.filter.referenced_field_ids()),
        };
        let jobs: Vec<usize> = (0..rows.len()).collect();
        let planned = parallel_map(&jobs, Some(threads), |&k| {
            let row = rows[k];
            let run = || -> Result<(PlannedManifest, Vec<Expr>)> {
                let spec_id = list.spec_id(row);
                let batch = load(k, what.clone())?;
                let plan = self.plan_manifest(spec_id, &batch)?;
                let picked: Vec<usize> = plan.selected.values().set_indices().collect();
                let task_deletes = deletes.index.attach(
                    &self.spec(spec_id)?.spec,
                    &self.schema,
                    &batch,
                    &picked,
                )?;
                let residual_index = Int32Array::from_iter_values(
                    picked.iter().map(|&i| plan.residual_index.value(i)),
                );
                // stats left out before the copy of the picked rows, not after
                let kept = if include_column_stats {
                    batch
                } else {
                    without_column_stats(&batch)?
                };
                let entries = filter_batch(&kept, &plan.selected)?;
                let planned = PlannedManifest {
                    row,
                    content: 0,
                    entries,
                    positions: picked,
                    residual_index,
                    deletes: task_deletes,
                };
                Ok((planned, plan.residuals))
            };
            run().map_err(list.label(row))
        })?;
        // one numbering of the distinct residuals over all manifests, each written as JSON
        // once: every manifest's undecided files share one (the filter itself), and a
        // residual takes only a few shapes (which partition predicates its tuple decides)
        let mut distinct: Vec<Expr> = Vec::new();
        let mut manifests = Vec::with_capacity(planned.len());
        for (mut plan, local) in planned {
            let remap: Vec<i32> = local
                .into_iter()
                .map(|expr| match distinct.iter().position(|e| *e == expr) {
                    Some(at) => at as i32,
                    None => {
                        distinct.push(expr);
                        distinct.len() as i32 - 1
                    }
                })
                .collect();
            plan.residual_index = plan.residual_index.unary(|i| remap[i as usize]);
            manifests.push(plan);
        }
        let residuals = distinct
            .iter()
            .map(|e| Ok(e.to_json(&self.schema)?.to_string()))
            .collect::<Result<Vec<_>>>()?;
        Ok(PlannedScan {
            manifests,
            residuals,
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
        parallel_map(manifests, threads, job)
    }
}

/// The planning threads: `threads`, or all cores when `None`; at least one.
fn thread_count(threads: Option<usize>) -> usize {
    threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// Each manifest is decoded on one thread; with fewer manifests than threads, the threads left
/// over split a manifest's blocks (`Load::threads`): one 10k-entry manifest decodes in 6 ms on
/// 2 idle cores instead of 9 ms (19 ms instead of 15 when the other core is busy: a pruned scan
/// is short either way).
fn per_load(threads: usize, jobs: usize) -> usize {
    (threads / jobs.max(1)).max(1)
}

/// The manifest list columns planning reads.
struct ListColumns<'a> {
    spec_ids: &'a Int32Array,
    content: Option<&'a Int32Array>,
    paths: Option<&'a arrow_array::StringArray>,
    len: usize,
}

impl<'a> ListColumns<'a> {
    fn new(manifest_list: &'a RecordBatch) -> Result<ListColumns<'a>> {
        let spec_ids = manifest_list
            .column_by_name("partition_spec_id")
            .and_then(|c| c.as_primitive_opt::<Int32Type>())
            .ok_or_else(|| Error::invalid("manifest list batch has no int32 partition_spec_id"))?;
        Ok(ListColumns {
            spec_ids,
            content: manifest_list
                .column_by_name("content")
                .and_then(|c| c.as_primitive_opt::<Int32Type>()),
            paths: manifest_list
                .column_by_name("manifest_path")
                .and_then(|c| c.as_string_opt::<i32>()),
            len: manifest_list.num_rows(),
        })
    }

    fn check_rows(&self, rows: &[usize]) -> Result<()> {
        match rows.iter().find(|&&row| row >= self.len) {
            Some(row) => Err(Error::invalid(format!(
                "manifest row {row} is out of the manifest list's {} rows",
                self.len
            ))),
            None => Ok(()),
        }
    }

    fn spec_id(&self, row: usize) -> i32 {
        self.spec_ids.value(row)
    }

    fn is_delete(&self, row: usize) -> bool {
        row < self.len
            && self
                .content
                .is_some_and(|c| !c.is_null(row) && c.value(row) != 0)
    }

    /// Prefixes an error with the manifest's path.
    fn label(&self, row: usize) -> impl Fn(Error) -> Error + '_ {
        move |e: Error| {
            let path = self
                .paths
                .map(|p| p.value(row).to_string())
                .unwrap_or_else(|| format!("#{row}"));
            Error::new(e.kind, format!("manifest {path}: {e}"))
        }
    }
}

/// Runs `job` over `items` on up to `threads` scoped threads (all cores when `None`), keeping
/// the order; the first error (in item order) wins.
pub fn parallel_map<T, R, F>(items: &[T], threads: Option<usize>, job: F) -> Result<Vec<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> Result<R> + Sync,
{
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(job).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Vec<Mutex<Option<Result<R>>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = job(item);
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if let Ok(mut slot) = results[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    let mut out = Vec::with_capacity(items.len());
    for (i, slot) in results.into_iter().enumerate() {
        match slot.into_inner().ok().flatten() {
            Some(r) => out.push(r?),
            // skipped after another item failed; that error comes first or later in order
            None if failed.load(Ordering::Relaxed) => continue,
            None => return Err(Error::invalid(format!("item {i}: planning thread failed"))),
        }
    }
    if out.len() < items.len() {
        return Err(Error::invalid("planning stopped on an error that was lost"));
    }
    Ok(out)
}

/// A `manifest_entry` batch without the `data_file` column stats (`COLUMN_STATS`); the same
/// batch when it has none.
pub fn without_column_stats(batch: &RecordBatch) -> Result<RecordBatch> {
    let Some((index, field)) = batch
        .schema()
        .column_with_name("data_file")
        .map(|(i, f)| (i, f.clone()))
    else {
        return Ok(batch.clone());
    };
    let Some(data_file) = batch.column(index).as_struct_opt() else {
        return Ok(batch.clone());
    };
    let DataType::Struct(fields) = field.data_type() else {
        return Ok(batch.clone());
    };
    if !fields
        .iter()
        .any(|f| COLUMN_STATS.contains(&f.name().as_str()))
    {
        return Ok(batch.clone());
    }
    let (kept_fields, kept_columns): (Vec<_>, Vec<_>) = fields
        .iter()
        .zip(data_file.columns())
        .filter(|(f, _)| !COLUMN_STATS.contains(&f.name().as_str()))
        .map(|(f, c)| (f.clone(), c.clone()))
        .unzip();
    let err = |e: arrow_schema::ArrowError| Error::invalid(format!("dropping column stats: {e}"));
    let stripped = StructArray::try_new(
        Fields::from(kept_fields),
        kept_columns,
        data_file.nulls().cloned(),
    )
    .map_err(err)?;
    let new_field = Field::new(
        field.name(),
        stripped.data_type().clone(),
        field.is_nullable(),
    )
    .with_metadata(field.metadata().clone());
    let schema = batch.schema();
    let mut schema_fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
    schema_fields[index] = Arc::new(new_field);
    let mut columns = batch.columns().to_vec();
    columns[index] = Arc::new(stripped);
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(
        Arc::new(ArrowSchema::new_with_metadata(
            schema_fields,
            schema.metadata().clone(),
        )),
        columns,
        &options,
    )
    .map_err(err)
}

/// The rows of `batch` where `keep` is true, in order, in the same schema (all rows kept is no
/// copy). arrow's filter kernels: the mask is analysed once for all columns, and primitive,
/// string and struct columns are gathered by their own kernels rather than run by run.
pub fn filter_batch(batch: &RecordBatch, keep: &BooleanArray) -> Result<RecordBatch> {
    if keep.len() != batch.num_rows() {
        return Err(Error::invalid(
            "filter mask length differs from the batch's",
        ));
    }
    arrow_select::filter::filter_record_batch(batch, keep)
        .map_err(|e| Error::invalid(format!("filtering manifest entries: {e}")))
}
