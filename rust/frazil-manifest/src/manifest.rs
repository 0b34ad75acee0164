//! Manifests (spec "Manifests"): `manifest_entry` with its `data_file`, read into Arrow columns,
//! the partition tuple typed by the manifest's own partition record.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use frazil_values::{Error, Result};

use crate::{content_stats, paths};

use crate::columns::{field_meta, project, target_type, KeySet, Presence as P, TField, TType as T};
use crate::inheritance::{inherit, ManifestFile};
use crate::read::read_container;
use crate::recent::Recent;

fn map(id: i32, name: &'static str, key_id: i32, value_id: i32, value: T) -> TField {
    TField::new(
        id,
        name,
        T::Map(
            Box::new(TField::new(key_id, "key", T::Int, P::Required)),
            Box::new(TField::new(value_id, "value", value, P::Optional)),
        ),
        P::Optional,
    )
}

fn list(id: i32, name: &'static str, element_id: i32, element: T) -> TField {
    TField::new(
        id,
        name,
        T::List(Box::new(TField::new(
            element_id,
            "element",
            element,
            P::Optional,
        ))),
        P::Optional,
    )
}

/// The `data_file` struct, v1 to v4 (the deprecated v1 `block_size_in_bytes`, `file_ordinal`
/// and `sort_columns` are skipped; `distinct_counts` is kept for old files).
pub fn data_file() -> Vec<TField> {
    vec![
        TField::new(134, "content", T::Int, P::Default(0)),
        TField::new(100, "file_path", T::String, P::Required),
        TField::new(101, "file_format", T::String, P::Required),
        TField::new(102, "partition", T::Partition, P::Optional),
        TField::new(103, "record_count", T::Long, P::Required),
        TField::new(104, "file_size_in_bytes", T::Long, P::Required),
        // v4: the writer's own stats struct, turned into the maps below after decoding
        TField::new(146, "content_stats", T::Partition, P::Optional),
        map(108, "column_sizes", 117, 118, T::Long),
        map(109, "value_counts", 119, 120, T::Long),
        map(110, "null_value_counts", 121, 122, T::Long),
        map(137, "nan_value_counts", 138, 139, T::Long),
        map(111, "distinct_counts", 123, 124, T::Long),
        map(125, "lower_bounds", 126, 127, T::Binary),
        map(128, "upper_bounds", 129, 130, T::Binary),
        TField::new(131, "key_metadata", T::Binary, P::Optional),
        list(132, "split_offsets", 133, T::Long),
        list(135, "equality_ids", 136, T::Int),
        TField::new(140, "sort_order_id", T::Int, P::Optional),
        TField::new(142, "first_row_id", T::Long, P::Optional),
        TField::new(143, "referenced_data_file", T::String, P::Optional),
        TField::new(144, "content_offset", T::Long, P::Optional),
        TField::new(145, "content_size_in_bytes", T::Long, P::Optional),
    ]
}

/// The `manifest_entry` struct, v1 to v3.
pub fn manifest_entry() -> Vec<TField> {
    vec![
        TField::new(0, "status", T::Int, P::Required),
        TField::new(1, "snapshot_id", T::Long, P::Optional),
        TField::new(3, "sequence_number", T::Long, P::Optional),
        TField::new(4, "file_sequence_number", T::Long, P::Optional),
        TField::new(2, "data_file", T::Struct(data_file()), P::Required),
    ]
}

/// The Arrow type of [`manifest_entry`], its `data_file` included (field ids as
/// `PARQUET:field_id`, fields read as required non-nullable, an empty `partition`): the one
/// definition Python's entry and `DataFile` columns are built from.
pub fn manifest_entry_type() -> Result<DataType> {
    arrow_struct(&manifest_entry())
}

fn arrow_struct(fields: &[TField]) -> Result<DataType> {
    let fields = fields
        .iter()
        .map(|f| {
            let ty = match &f.ty {
                T::Struct(children) => arrow_struct(children)?,
                ty => target_type(ty)?,
            };
            let nullable = !matches!(f.presence, P::Required);
            Ok(Field::new(f.name, ty, nullable).with_metadata(field_meta(f.id)))
        })
        .collect::<Result<Fields>>()?;
    Ok(DataType::Struct(fields))
}

/// Columns inheritance needs, decoded whatever the projection.
const INHERITANCE_COLUMNS: [&str; 7] = [
    "status",
    "snapshot_id",
    "sequence_number",
    "file_sequence_number",
    "data_file.content",
    "data_file.record_count",
    "data_file.first_row_id",
];

/// The `data_file` fields that hold column stats (Java's `ContentFile.copyWithoutStats`
/// drops the same).
pub const COLUMN_STATS: [&str; 8] = [
    "content_stats",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "distinct_counts",
    "lower_bounds",
    "upper_bounds",
];

/// Column paths for [`ReadOptions::columns`]: every `manifest_entry` column but the column
/// stats maps, whose decoding is most of a manifest's.
pub fn without_column_stats() -> Vec<String> {
    let mut paths: Vec<String> = manifest_entry()
        .iter()
        .filter(|f| f.name != "data_file")
        .map(|f| f.name.to_string())
        .collect();
    paths.extend(
        data_file()
            .iter()
            .filter(|f| !COLUMN_STATS.contains(&f.name))
            .map(|f| format!("data_file.{}", f.name)),
    );
    paths
}

/// The target with its stats maps keeping only the entries keyed by `ids`.
fn project_stats(mut target: Vec<TField>, ids: &KeySet) -> Vec<TField> {
    for entry in &mut target {
        if let T::Struct(data_file) = &mut entry.ty {
            for f in data_file.iter_mut() {
                if COLUMN_STATS.contains(&f.name) && f.name != "content_stats" {
                    let map = std::mem::replace(&mut f.ty, T::Int);
                    f.ty = T::MapKeys(Box::new(map), ids.clone());
                }
            }
        }
    }
    target
}

/// Options of [`read_manifest`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// The manifest list entry of this manifest: when given, inheritance is applied.
    pub manifest_file: Option<ManifestFile>,
    /// Dotted column paths to decode (`data_file.file_path`, `data_file` for all of it); all
    /// columns when `None`. The columns inheritance needs are always decoded.
    pub columns: Option<Vec<String>>,
    /// Threads this one manifest's blocks may be decoded on (1 when `None`): worth more than
    /// one only when there are fewer manifests to decode than cores.
    pub threads: Option<usize>,
    /// Field ids whose column stats to keep: the seven [`COLUMN_STATS`] maps keep only the
    /// entries keyed by one of these ids (in any order, duplicates allowed); the others are
    /// skipped while decoding, never copied. All entries when `None`. Java's `ManifestReader`
    /// projects stats to the filter's columns the same way. Applies to the stats maps that
    /// `columns` keeps (none after [`without_column_stats`]).
    pub stats_field_ids: Option<Arc<[i32]>>,
    /// The table location: relative `file_path`s and `referenced_data_file`s of v4 manifests
    /// are resolved against it (spec "Path Resolution"). Paths stay as written when `None`.
    pub table_location: Option<Arc<str>>,
    /// The manifest's path, naming it in the errors of [`read_manifests`] (which name it by
    /// its index otherwise).
    pub path: Option<Arc<str>>,
}

/// Decodes a manifest into one record batch of `manifest_entry` columns; the file's key-value
/// metadata (`schema`, `partition-spec`, `format-version`, `content`, ...) becomes the schema's
/// metadata. `data` is the whole file: with a `manifest_file`, its entries are held against
/// what the manifest list promises ([`crate::Promised`]), so a file cut short is an error.
pub fn read_manifest(data: &[u8], options: &ReadOptions) -> Result<RecordBatch> {
    let promised = options
        .manifest_file
        .map(|m| m.promised)
        .unwrap_or_default();
    let keep = options.stats_field_ids.as_deref().map(KeySet::new);
    let target = target_of(options.columns.as_deref(), keep.as_ref())?;
    let batch = read_container(data, &target, options.threads.unwrap_or(1))
        .map_err(|e| promised.explain(e, data.len()))?;
    promised.check(data.len(), &batch)?;
    let batch = finish_v4(batch, keep.as_ref(), options.table_location.as_deref())?;
    match &options.manifest_file {
        Some(m) => inherit(batch, m),
        None => Ok(batch),
    }
}

/// The columns a read of `columns` (all when `None`) with stats maps projected to `keep`
/// decodes. The same for every manifest of a scan: built once (see `recent`).
fn target_of(columns: Option<&[String]>, keep: Option<&KeySet>) -> Result<Arc<Vec<TField>>> {
    type Key = (Option<Vec<String>>, Option<KeySet>);
    static TARGETS: Recent<Key, Arc<Vec<TField>>> = Recent::new(16);
    TARGETS.get_or_make(
        |(c, k)| c.as_deref() == columns && k.as_ref() == keep,
        || {
            let target = match columns {
                None => manifest_entry(),
                Some(paths) => {
                    let mut paths = paths.to_vec();
                    paths.extend(INHERITANCE_COLUMNS.iter().map(|s| s.to_string()));
                    // v4 stats maps come from content_stats
                    if paths.iter().any(|p| {
                        p == "data_file"
                            || p.strip_prefix("data_file.")
                                .is_some_and(|s| COLUMN_STATS.contains(&s))
                    }) {
                        paths.push("data_file.content_stats".to_string());
                    }
                    project(&manifest_entry(), &paths, "")
                }
            };
            let target = match keep {
                None => target,
                Some(ids) => project_stats(target, ids),
            };
            let key = (columns.map(<[String]>::to_vec), keep.cloned());
            Ok((key, Arc::new(target)))
        },
    )
}

/// The `format-version` a manifest (list) header names (1 when absent, as v1 writers omitted it).
pub(crate) fn header_version(batch: &RecordBatch) -> u8 {
    batch
        .schema()
        .metadata()
        .get("format-version")
        .and_then(|v| v.parse::<u8>().ok())
        .unwrap_or(1)
}

/// `data_file` with v4 `content_stats` turned into the stats maps (and the column dropped,
/// whatever the version) and, in a v4 table (`location` given), its paths as v4 reads them.
fn finish_v4(
    batch: RecordBatch,
    keep: Option<&KeySet>,
    location: Option<&str>,
) -> Result<RecordBatch> {
    let Some(i) = batch.schema().index_of("data_file").ok() else {
        return Ok(batch);
    };
    let Some(df) = batch.column(i).as_struct_opt() else {
        return Ok(batch);
    };
    let version = header_version(&batch);
    let mut df = content_stats::to_maps(df, keep)?;
    if let Some(location) = location {
        let mut fields: Vec<Field> = df.fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut columns = df.columns().to_vec();
        for (k, f) in fields.iter_mut().enumerate() {
            if f.name() == "file_path" || f.name() == "referenced_data_file" {
                columns[k] = paths::read_column(&columns[k], version, location)
                    .map_err(|e| Error::decode(format!("data_file.{}: {}", f.name(), e.message)))?;
            }
        }
        df = StructArray::try_new(fields.into(), columns, df.nulls().cloned())
            .map_err(|e| Error::decode(e.to_string()))?;
    }
    let schema = batch.schema();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[i] = fields[i].clone().with_data_type(df.data_type().clone());
    let mut columns = batch.columns().to_vec();
    columns[i] = Arc::new(df);
    RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
    )
    .map_err(|e| Error::decode(e.to_string()))
}

/// Decodes many manifests on up to `threads` threads (all cores when `None`), in order; with
/// fewer manifests than an explicit `threads`, each one's blocks are split over the spare
/// threads (unless its options say how many threads it may use).
pub fn read_manifests(
    jobs: &[(&[u8], ReadOptions)],
    threads: Option<usize>,
) -> Result<Vec<RecordBatch>> {
    // fewer manifests than the threads asked for explicitly: each splits its blocks over the
    // spare ones (not by default: on a busy machine the split costs more than it gains)
    let spare = threads.map_or(1, |n| n / jobs.len().max(1));
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, jobs.len().max(1));
    let read_manifest = |d: &[u8], o: &ReadOptions| {
        if spare > 1 && o.threads.is_none() {
            let o = ReadOptions {
                threads: Some(spare),
                ..o.clone()
            };
            read_manifest(d, &o)
        } else {
            read_manifest(d, o)
        }
    };
    let label = |i: usize, e: frazil_values::Error| {
        let name = match jobs.get(i).and_then(|(_, o)| o.path.as_deref()) {
            Some(path) => path.to_string(),
            None => i.to_string(),
        };
        frazil_values::Error::new(e.kind, format!("manifest {name}: {e}"))
    };
    if threads == 1 {
        return jobs
            .iter()
            .enumerate()
            .map(|(i, (d, o))| read_manifest(d, o).map_err(|e| label(i, e)))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<RecordBatch>>> = (0..jobs.len()).map(|_| None).collect();
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((d, o)) = jobs.get(i) else { break };
                let r = read_manifest(d, o).map_err(|e| label(i, e));
                if let Ok(mut slots) = slots.lock() {
                    slots[i] = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.unwrap_or_else(|| {
                Err(frazil_values::Error::decode(format!(
                    "manifest {i}: decoder thread failed"
                )))
            })
        })
        .collect()
}
