//! Avro records decoded straight into Arrow columns. A *target* describes the columns the spec
//! defines (by field id); it is resolved once per file against the writer's schema into a plan
//! that reads each writer field into its column, skips what the target does not want, and fills
//! what the writer lacks. No value is materialized outside its column.

use std::sync::Arc;

use arrow_array::{ArrayRef, StructArray};

mod builder;
mod plan;
mod read;

pub(crate) use plan::{field_meta, target_type};
pub use plan::{Columns, Plan};

/// The Arrow field metadata key carrying an Iceberg field id (the Parquet convention that
/// PyArrow and PyIceberg also use).
pub const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// A column the spec defines.
#[derive(Debug, Clone, PartialEq)]
pub struct TField {
    pub id: i32,
    pub name: &'static str,
    pub ty: TType,
    pub presence: Presence,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TType {
    Int,
    Long,
    Boolean,
    String,
    Binary,
    Struct(Vec<TField>),
    List(Box<TField>),
    Map(Box<TField>, Box<TField>),
    /// A map with int keys of which only the entries whose key is in the set are kept (the
    /// others' values are skipped while decoding): stats maps projected to field ids.
    MapKeys(Box<TType>, KeySet),
    /// The partition tuple: typed by the writer's own partition record.
    Partition,
}

/// A set of int map keys (field ids), sorted and deduplicated once so that membership is a
/// short scan or a binary search: no allocation per decoded entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySet(Arc<[i32]>);

impl KeySet {
    pub fn new(ids: &[i32]) -> KeySet {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        KeySet(ids.into())
    }

    pub fn ids(&self) -> &[i32] {
        &self.0
    }

    #[inline(always)]
    pub fn contains(&self, key: i32) -> bool {
        // a filter names a few columns: a linear scan beats a search until the set is large
        if self.0.len() <= 16 {
            self.0.contains(&key)
        } else {
            self.0.binary_search(&key).is_ok()
        }
    }
}

/// What to do when the writer's schema lacks a field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Presence {
    Required,
    Optional,
    /// The spec's read default for files that predate the field (e.g. v1 `content` = 0).
    Default(i64),
}

impl TField {
    pub const fn new(id: i32, name: &'static str, ty: TType, presence: Presence) -> TField {
        TField {
            id,
            name,
            ty,
            presence,
        }
    }
}

/// Keeps the fields named by `paths` (dotted: `data_file.file_path`; a struct's name keeps all
/// of it) plus `always`.
pub fn project(fields: &[TField], paths: &[String], prefix: &str) -> Vec<TField> {
    let mut out = Vec::new();
    for f in fields {
        let path = if prefix.is_empty() {
            f.name.to_string()
        } else {
            format!("{prefix}.{}", f.name)
        };
        if paths.contains(&path) {
            out.push(f.clone());
        } else if paths.iter().any(|p| p.starts_with(&format!("{path}."))) {
            if let TType::Struct(children) = &f.ty {
                let mut f = f.clone();
                f.ty = TType::Struct(project(children, paths, &path));
                out.push(f);
            } else {
                out.push(f.clone());
            }
        }
    }
    out
}

/// Finds a column of a struct array by name.
pub fn struct_column<'a>(array: &'a StructArray, name: &str) -> Option<&'a ArrayRef> {
    array.column_by_name(name)
}

#[cfg(test)]
mod tests;
