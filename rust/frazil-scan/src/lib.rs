//! Native scan planning (spec "Scan Planning"; issue 6, "Planning (native)"): bound
//! expressions, their inclusive and strict projection through partition transforms, and the
//! evaluators that prune manifests (partition summaries), entries (partition tuples, column
//! metrics) and compute residuals, all over the Arrow batches `frazil-manifest` decodes.
//!
//! Semantics follow the spec and, where it is silent, the Java reference
//! (`Projections`, `ManifestEvaluator`, `InclusiveMetricsEvaluator`, `StrictMetricsEvaluator`,
//! `ResidualEvaluator`). Deliberate differences, all in the safe direction or per the spec:
//! string truncate widths count code points (Java counts UTF-16 units); floats compare with
//! IEEE order so -0.0 = 0.0; unreadable bounds mean "no bound"; strict metrics assume a field
//! missing from the null/NaN count maps may hold nulls/NaNs; a residual keeps a negated
//! comparison on a null partition value instead of dropping it.
//!
//! # PROGRESS
//! Done:
//! - `expr`: bound expression JSON (current form with `{"type":"reference","id":N}`, typed
//!   literals and literal sets, `true`/`false`, and/or/not, every predicate; the deprecated
//!   `term` key with an id reference), literal promotion to the field type, Java binder checks
//!   and simplifications, NOT rewriting, JSON output.
//! - `project`: inclusive and strict projection per transform (identity, bucket, truncate on
//!   int/long/decimal/string/binary incl. starts-with, year/month/day/hour with Java's pre-epoch
//!   fixes, void/unknown), whole-expression projection through a spec.
//! - `eval`: manifest-list summary pruning, partition tuple filter, inclusive and strict
//!   metrics evaluation (truncated string/binary bounds, NaN rules, value/null/NaN counts).
//! - `residual`: residual per partition tuple, grouped so each distinct residual is built once.
//! - `plan`: `ScanPlanner` (JSON in) -> manifest mask and per-manifest entry mask plus residual
//!   index and residual JSON; manifests planned on a scoped thread pool (the workspace has no
//!   rayon).
//!
//! Not done yet:
//! - Predicates on transformed terms (`bucket(16, id) = 3`, Java's
//!   `projectTransformPredicate`) and `apply` terms: rejected as unsupported.
//! - Strict projection is exposed (`project::project(.., strict = true)`) and used for
//!   residuals, but no planner API uses strict metrics yet (deletes/overwrites will).
//! - v4 `content_stats`, variant/geo bounds: those fields are never pruned.
//! - Delete-file attachment, see the TODO below.
//!
//! # TODO: delete files (follow-up)
//! Delete manifests can already be pruned with `prune_manifests` and their entries selected
//! with `plan_manifest` (delete files are filtered by their own metrics just like data files).
//! What remains is attaching them to data files, per the spec's scope rules:
//! - deletion vectors (puffin `content_offset`/`content_size_in_bytes`): apply to the data file
//!   whose `file_path` equals `referenced_data_file`, when data seq <= DV seq; when a DV
//!   applies, position delete files for that data file are ignored;
//! - position delete files: data seq <= delete seq, same spec id and partition tuple, and
//!   `referenced_data_file` (when set) equal to the data file's path;
//! - equality delete files: data seq < delete seq, and same spec id and partition tuple, or the
//!   delete file's spec is unpartitioned (a global delete).
//!
//! Partition equality must compare floats by bits (normalized NaN) and ignore nothing but must
//! include fields with unknown transforms.

pub mod delete;
pub mod eval;
pub mod expr;
pub mod plan;
pub mod project;
pub mod residual;
pub mod value;

pub use delete::{DeleteIndex, TaskDeletes};
pub use expr::{Expr, Op, Predicate, Schema};
pub use frazil_values::{Error, ErrorKind, Result};
pub use plan::{ManifestPlan, PlannedManifest, PlannedScan, ScanPlanner};
pub use project::{project, PartitionField, PartitionSpec};
pub use residual::{ResidualEvaluator, Residuals};

#[cfg(test)]
mod tests;
