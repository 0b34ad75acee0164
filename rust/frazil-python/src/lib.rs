//! `frazil._native`: the translation layer between Python and the Rust crates. It converts
//! arguments, maps errors to `frazil.exceptions`, and releases the GIL around native work; the
//! logic lives in the crates it calls.

mod arrow;
mod avro;
mod deletes;
mod encryption;
mod equality_delete;
mod error;
mod geo;
mod inspect;
mod manifest;
mod metrics_evaluator;
mod parquet;
mod puffin;
mod rest;
mod row_filter;
mod scan;
mod statistics;
mod transforms;
mod values;
mod variant;

use pyo3::prelude::*;

// Decoding allocates and frees hundreds of megabytes of Arrow buffers per scan; mimalloc keeps
// freed pages for reuse where glibc unmaps large blocks and faults them in again (a quarter of
// a manifest decode's time). Only Rust's allocations use it; Python and pyarrow keep theirs.
// Its purge delay is set before it starts, by `frazil/__init__.py`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Lets a benchmark refuse a debug build.
    m.add(
        "build_profile",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    )?;
    m.add_class::<arrow::ArrowArrayExport>()?;
    avro::register(m)?;
    deletes::register(m)?;
    encryption::register(m)?;
    equality_delete::register(m)?;
    geo::register(m)?;
    inspect::register(m)?;
    manifest::register(m)?;
    metrics_evaluator::register(m)?;
    parquet::register(m)?;
    puffin::register(m)?;
    rest::register(m)?;
    row_filter::register(m)?;
    scan::register(m)?;
    statistics::register(m)?;
    transforms::register(m)?;
    values::register(m)?;
    variant::register(m)?;
    Ok(())
}
