//! Iceberg partition transforms (spec "Partition Transforms", Appendix B). Every transform has a
//! scalar form over `Literal`s and an Arrow kernel over whole arrays; both call the same per-value
//! functions, so writers, predicate projection and Spark UDFs agree by construction.

pub mod kernels;
pub mod murmur3;
pub mod scalar;
pub mod transform;

pub use frazil_values::{Error, ErrorKind, Result};
pub use kernels::{apply_array, apply_field, is_uuid, source_type_of};
pub use transform::Transform;
