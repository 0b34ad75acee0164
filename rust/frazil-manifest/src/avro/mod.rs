//! Avro, as far as Iceberg metadata needs it (spec Appendix A; Avro 1.11 specification): the
//! object container file, the schema JSON with Iceberg's field ids, the block codecs, and the
//! binary encoding of values.

pub mod codec;
pub mod container;
pub mod data;
pub mod decode;
pub mod encode;
pub mod schema;

pub use codec::Codec;
pub use container::{Container, Header};
pub use schema::Schema;
