//! Iceberg row-level deletes, natively: Puffin files (`puffin-spec.md`), deletion vectors
//! (`deletion-vector-v1` blobs holding a 64-bit roaring bitmap of row positions), and position
//! deletes applied to a data file's row ranges as Arrow keep-masks or index arrays, and equality
//! deletes applied to Arrow batches through a hash set of their keys.
//! Pure functions of bytes and arrays; no I/O.

#[cfg(test)]
mod alloc_budget;
pub mod bitmap;
pub mod deletion_vector;
pub mod equality_delete;
pub mod position_delete;
pub mod puffin;

pub use bitmap::PositionBitmap;
pub use deletion_vector::{
    deserialize_dv, read_dv, read_dv_within, serialize_dv, DV_BLOB_TYPE, ROW_POSITION_FIELD_ID,
};
pub use equality_delete::{EqualityDeleteSet, KeyKind};
pub use puffin::{
    read_blob, read_file_metadata, write_puffin, BlobInput, BlobMetadata, CompressionCodec,
    FileMetadata,
};
