//! Bindings of `frazil_encryption` (the twin of `frazil/encryption/`): bytes in, bytes out, the
//! GIL released while AES-GCM runs.

use frazil_encryption as enc;
use frazil_values::Error;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes as Bytes;

use crate::error::IntoPyResult;

type Out = PyResult<Vec<u8>>;
type Parts = (Vec<u8>, Option<Vec<u8>>, Option<i64>);

fn ok<T>(r: Result<T, enc::EncryptionError>) -> PyResult<T> {
    r.map_err(|e| Error::decode(e.to_string())).py()
}

/// Single-shot AES-GCM: `seal` gives nonce || ciphertext || tag, else that is opened.
#[pyfunction]
fn gcm(py: Python<'_>, key: Bytes, data: Bytes, aad: &[u8], seal: bool) -> Out {
    let f = if seal { enc::seal } else { enc::open };
    ok(py.detach(|| f(&key, &data, aad)))
}

#[pyfunction]
fn gcm_stream_encrypt(py: Python<'_>, key: Bytes, aad: &[u8], data: Bytes, block: u32) -> Out {
    ok(py.detach(|| enc::encrypt_stream(&key, aad, &data, block)))
}

/// (plaintext length, `length` plaintext bytes from `offset`; `length` `None`: to the end).
#[pyfunction]
#[pyo3(signature = (key, aad, data, expected_length, name, range=(0, None)))]
fn gcm_stream_decrypt(
    py: Python<'_>,
    key: Bytes,
    aad: &[u8],
    data: Bytes,
    expected_length: Option<u64>,
    name: &str,
    range: (u64, Option<u64>),
) -> PyResult<(u64, Vec<u8>)> {
    let (offset, length) = range;
    ok(py.detach(|| enc::read_stream(&key, aad, &data, expected_length, name, offset, length)))
}

/// Key metadata bytes; `v1_10`: Java 1.10.2's record, without `file_length`.
#[pyfunction]
fn key_metadata_encode(key: Vec<u8>, aad: Option<Vec<u8>>, n: Option<i64>, v1_10: bool) -> Vec<u8> {
    enc::encode_key_metadata(&enc::KeyMetadata::new(key, aad, n), !v1_10)
}

#[pyfunction]
fn key_metadata_decode(data: &[u8]) -> PyResult<Parts> {
    ok(enc::decode_key_metadata(data)).map(|m| (m.encryption_key, m.aad_prefix, m.file_length))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gcm, m)?)?;
    m.add_function(wrap_pyfunction!(gcm_stream_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(gcm_stream_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(key_metadata_encode, m)?)?;
    m.add_function(wrap_pyfunction!(key_metadata_decode, m)?)?;
    Ok(())
}
