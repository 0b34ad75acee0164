//! Iceberg types and single values: type strings and type JSON (spec Appendix C), and the binary
//! and JSON single-value serializations (spec Appendix D). No I/O; pure functions of bytes.

pub mod binary;
pub mod bound;
pub mod decimal;
pub mod error;
pub mod geo;
pub mod json;
pub mod literal;
pub mod parquet_variant;
pub mod temporal;
pub mod types;
pub mod variant;
pub mod variant_shredding;

pub use error::{Error, ErrorKind, Result};
pub use literal::Literal;
pub use types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
