//! The one place where native errors become Python exceptions, all of them classes of
//! `frazil.exceptions` (defined in Python, so the hierarchy has one home).

use frazil_values::{Error, ErrorKind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::Parse => "ParseError",
        ErrorKind::Decode => "DecodeError",
        ErrorKind::Unsupported => "UnsupportedError",
    }
}

pub fn to_py(err: Error) -> PyErr {
    Python::attach(|py| {
        let class = py
            .import("frazil.exceptions")
            .and_then(|m| m.getattr(class_name(err.kind)));
        match class.and_then(|c| c.call1((err.message.clone(),))) {
            Ok(instance) => PyErr::from_value(instance),
            Err(_) => PyRuntimeError::new_err(err.message),
        }
    })
}

pub trait IntoPyResult<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// An argument error raised from the binding's own argument conversion.
pub fn invalid(message: impl Into<String>) -> PyErr {
    to_py(Error::invalid(message))
}
