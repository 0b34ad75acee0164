//! Table statistics (spec "Table Statistics", Puffin `apache-datasketches-theta-v1`): theta
//! sketches of a column's values, each value hashed in its binary single-value serialization
//! (spec Appendix D, the rule in `frazil-values`), as the Java reference's Spark action does.
//! Sketching, reading and merging are Apache DataSketches' (the `datasketches` crate); this crate
//! only turns Arrow columns into the items it hashes. No I/O: Arrow arrays in, the bytes of a
//! compact sketch out.

pub mod theta;

pub use theta::{estimate_of, ThetaSketch, ThetaUnion};
