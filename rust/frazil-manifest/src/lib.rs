//! Iceberg manifest lists and manifests (spec "Manifests", "Manifest Lists", Appendix A): Avro
//! object containers decoded into Arrow record batches with the spec's inheritance, and encoded
//! from them. Pure functions of bytes; no I/O.

pub mod avro;
pub mod columns;
pub mod content_stats;
pub mod inheritance;
pub mod manifest;
pub mod manifest_list;
pub mod paths;
pub mod promised;
mod read;
mod recent;

pub use inheritance::ManifestFile;
pub use manifest::{read_manifest, read_manifests, ReadOptions};
pub use manifest_list::read_manifest_list;
pub use promised::Promised;
pub mod summary;
pub mod write;

pub use write::{write_manifest, write_manifest_list, WriteOptions};
