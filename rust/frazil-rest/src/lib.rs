//! The REST catalog's scan-planning wire form (`fetchScanTasks`, `planTableScan`) over the
//! plan's Arrow columns, so that neither a server nor a client builds an object per task.
//!
//! A plan is one row per task with the flattened `data_file` columns, the task's `partition` in
//! the table's partition type (every spec's fields, by partition field id), its `residual` and
//! its `delete_file_references`. [`write::write_page`] turns rows of it into a `ScanTasks`
//! JSON object (`file-scan-tasks`, `delete-files`: Java's `ContentFileParser` form, partition
//! values in the JSON single-value form, bounds as upper-case hex of their binary form);
//! [`read::read_page`] reads such an object back into those columns.

pub mod columns;
pub mod read;
pub mod write;

use std::collections::HashMap;

use frazil_values::{PrimitiveType, Result};

/// Where each spec's partition values live in the plan's `partition` struct.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// The struct's fields, in order: partition field id and type.
    pub fields: Vec<(i32, PrimitiveType)>,
    /// Per spec id: the positions in `fields` of the spec's partition fields, in spec order;
    /// `None` for a field the struct lacks (its source column was dropped: always null).
    pub specs: HashMap<i32, Vec<Option<usize>>>,
}

impl Layout {
    /// A layout from the partition fields' ids and type names (`int`, `decimal(9, 2)`, ...).
    /// A negative position is a field the struct lacks.
    pub fn parse(fields: &[(i32, String)], specs: HashMap<i32, Vec<i64>>) -> Result<Layout> {
        let fields = fields
            .iter()
            .map(|(id, ty)| Ok((*id, ty.parse::<PrimitiveType>()?)))
            .collect::<Result<Vec<_>>>()?;
        if let Some(bad) = specs
            .values()
            .flatten()
            .find(|&&p| p >= fields.len() as i64)
        {
            return Err(frazil_values::Error::invalid(format!(
                "partition position {bad} out of range"
            )));
        }
        let specs = specs
            .into_iter()
            .map(|(id, ps)| {
                (
                    id,
                    ps.into_iter().map(|p| usize::try_from(p).ok()).collect(),
                )
            })
            .collect();
        Ok(Layout { fields, specs })
    }
}

pub use read::{read_page, Page};
pub use write::write_page;

#[cfg(test)]
mod tests;
