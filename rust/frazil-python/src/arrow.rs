//! Arrow across the boundary through the PyCapsule interface (`__arrow_c_array__`,
//! `__arrow_c_stream__`), zero-copy in both directions.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::{Field, FieldRef};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyTuple};

use crate::error::invalid;

const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";
const STREAM: &CStr = c"arrow_array_stream";

/// An imported array with its field, whose metadata carries extension types such as
/// `arrow.uuid`.
pub struct Imported {
    pub array: ArrayRef,
    pub field: FieldRef,
}

fn malformed(e: impl std::fmt::Display) -> PyErr {
    invalid(format!("malformed Arrow array: {e}"))
}

/// Imports an object implementing `__arrow_c_array__`.
pub fn import_array(obj: &Bound<'_, PyAny>) -> PyResult<Imported> {
    let pair = obj.call_method0("__arrow_c_array__")?;
    let pair = pair.cast::<PyTuple>()?;
    if pair.len() != 2 {
        return Err(invalid(
            "__arrow_c_array__ must return a (schema, array) pair",
        ));
    }
    let schema_capsule = pair.get_item(0)?;
    let array_capsule = pair.get_item(1)?;
    let schema_capsule = schema_capsule.cast::<PyCapsule>()?;
    let array_capsule = array_capsule.cast::<PyCapsule>()?;
    let schema_ptr = schema_capsule.pointer_checked(Some(SCHEMA))?;
    let array_ptr = array_capsule.pointer_checked(Some(ARRAY))?;
    // SAFETY: the capsules are named per the PyCapsule interface, so they hold an ArrowSchema
    // and an ArrowArray. The schema stays owned by its capsule (borrowed here); the array is
    // moved out, leaving a released struct for the capsule's destructor.
    let (schema, ffi_array) = unsafe {
        (
            &*(schema_ptr.as_ptr() as *const FFI_ArrowSchema),
            FFI_ArrowArray::from_raw(array_ptr.as_ptr() as *mut FFI_ArrowArray),
        )
    };
    let field = Field::try_from(schema).map_err(malformed)?;
    // SAFETY: the producer promises a valid C data interface array for this schema; the layout
    // is then checked by `validate` (buffer sizes), and kernels bound-check offsets themselves.
    let data = unsafe { from_ffi(ffi_array, schema) }.map_err(malformed)?;
    data.validate().map_err(malformed)?;
    Ok(Imported {
        array: make_array(data),
        field: Arc::new(field),
    })
}

/// Imports a keep-mask: a boolean array without nulls (`__arrow_c_array__`).
pub fn import_keep_mask(obj: &Bound<'_, PyAny>) -> PyResult<arrow_array::BooleanArray> {
    let array = import_array(obj)?.array;
    array
        .as_any()
        .downcast_ref::<arrow_array::BooleanArray>()
        .filter(|k| k.null_count() == 0)
        .cloned()
        .ok_or_else(|| invalid("keep must be a boolean array without nulls"))
}

/// Imports a schema from an object implementing `__arrow_c_schema__`.
pub fn import_schema(obj: &Bound<'_, PyAny>) -> PyResult<arrow_schema::SchemaRef> {
    let capsule = obj.call_method0("__arrow_c_schema__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(SCHEMA))?;
    // SAFETY: a capsule named "arrow_schema" holds an ArrowSchema (PyCapsule interface); it is
    // only borrowed here, and stays alive with the capsule.
    let ffi = unsafe { &*(ptr.as_ptr() as *const FFI_ArrowSchema) };
    // arrow-rs panics on a name that is not UTF-8 (a damaged file's schema can have one)
    let schema = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        arrow_schema::Schema::try_from(ffi)
    }))
    .map_err(|_| invalid("malformed Arrow schema: a field name is not UTF-8"))?
    .map_err(malformed)?;
    Ok(Arc::new(schema))
}

/// Imports every chunk of an object implementing `__arrow_c_stream__` (a chunked array).
pub fn import_stream(obj: &Bound<'_, PyAny>) -> PyResult<(FieldRef, Vec<ArrayRef>)> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(STREAM))?;
    // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream; it is moved out.
    let reader = unsafe {
        ArrayStreamReader::try_new(FFI_ArrowArrayStream::from_raw(
            ptr.as_ptr() as *mut FFI_ArrowArrayStream
        ))
    }
    .map_err(malformed)?;
    let field = Arc::clone(arrow_array::ArrayReader::field(&reader));
    let mut chunks = Vec::new();
    for chunk in reader {
        let chunk = chunk.map_err(malformed)?;
        chunk.to_data().validate().map_err(malformed)?;
        chunks.push(chunk);
    }
    Ok((field, chunks))
}

/// An array handed back to Python: `pyarrow.array(export)` takes it without a copy.
#[pyclass(frozen, module = "frazil._native")]
pub struct ArrowArrayExport {
    pub array: ArrayRef,
    pub field: FieldRef,
}

#[pymethods]
impl ArrowArrayExport {
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        // A consumer may ask for another type; we hand over ours and let it cast.
        let _ = requested_schema;
        let schema = FFI_ArrowSchema::try_from(self.field.as_ref()).map_err(malformed)?;
        let array = FFI_ArrowArray::new(&self.array.to_data());
        let schema = PyCapsule::new_with_value(py, schema, SCHEMA)?;
        let array = PyCapsule::new_with_value(py, array, ARRAY)?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.field.as_ref()).map_err(malformed)?;
        PyCapsule::new_with_value(py, schema, SCHEMA)
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }
}

pub fn export(array: ArrayRef, field: FieldRef) -> ArrowArrayExport {
    ArrowArrayExport { array, field }
}

/// Record batches handed back to Python as a stream: `pyarrow.table(export)` or
/// `pyarrow.RecordBatchReader.from_stream(export)` take them without a copy.
#[pyclass(frozen, module = "frazil._native")]
pub struct RecordBatchExport {
    pub schema: arrow_schema::SchemaRef,
    pub batches: Vec<arrow_array::RecordBatch>,
}

#[pymethods]
impl RecordBatchExport {
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = arrow_array::RecordBatchIterator::new(
            self.batches.clone().into_iter().map(Ok),
            Arc::clone(&self.schema),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref()).map_err(malformed)?;
        PyCapsule::new_with_value(py, schema, SCHEMA)
    }

    fn __len__(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

pub fn export_batch(batch: arrow_array::RecordBatch) -> RecordBatchExport {
    RecordBatchExport {
        schema: batch.schema(),
        batches: vec![batch],
    }
}

/// The chunks of an Arrow array or chunked array (`__arrow_c_array__` or `__arrow_c_stream__`).
pub fn import_chunks(obj: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    if obj.hasattr("__arrow_c_array__")? {
        Ok(vec![import_array(obj)?.array])
    } else if obj.hasattr("__arrow_c_stream__")? {
        Ok(import_stream(obj)?.1)
    } else {
        Err(invalid(format!(
            "expected an Arrow array or chunked array, got {}",
            obj.get_type().name()?
        )))
    }
}

/// An array handed back under an unnamed field of its own type.
/// A row mask (no nulls) for Python, as a boolean array.
pub fn mask_export(mask: arrow_buffer::BooleanBuffer) -> ArrowArrayExport {
    array_export(Arc::new(arrow_array::BooleanArray::new(mask, None)), false)
}

pub fn array_export(array: ArrayRef, nullable: bool) -> ArrowArrayExport {
    let field = Arc::new(Field::new("", array.data_type().clone(), nullable));
    export(array, field)
}

/// A record batch passed as a struct array (`__arrow_c_array__`).
pub fn import_batch(obj: &Bound<'_, PyAny>) -> PyResult<arrow_array::RecordBatch> {
    let imported = import_array(obj)?;
    let s = imported
        .array
        .as_struct_opt()
        .ok_or_else(|| invalid("expected a record batch (a struct array)"))?;
    Ok(arrow_array::RecordBatch::from(s.clone()))
}
