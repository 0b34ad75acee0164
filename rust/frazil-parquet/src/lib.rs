//! Parquet data files decoded natively (arrow-rs' `parquet` crate) from bytes the caller read:
//! the caller reads a file's tail, hands it to [`Footer::parse`], reads the byte ranges
//! [`Footer::byte_ranges`] names for the row groups and columns it wants, and
//! [`Footer::decode`] turns them into Arrow record batches. No I/O here (DESIGN: Rust never
//! opens a file), so the same code serves every FileIO.

pub mod late;
pub mod page_index;
pub mod read;

pub use late::{Kept, Late, Walk};
pub use read::{footer_length, Footer, Ranges};
