//! Paths in metadata (spec "Paths in Metadata", v4): a path with a URI scheme is absolute and
//! used as it is; any other is relative and joined to the table location with one `/`. Writers
//! store a path relative when it lies under the table location followed by `/`. `.` and `..`
//! segments are not supported in relative paths: they are refused, so that a resolved path
//! never leaves the table location.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::DataType;
use frazil_values::{Error, Result};

/// Whether `path` starts with a URI scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" /
/// "." ) ":").
pub fn has_scheme(path: &str) -> bool {
    let b = path.as_bytes();
    if b.first().is_none_or(|c| !c.is_ascii_alphabetic()) {
        return false;
    }
    for &c in &b[1..] {
        if c == b':' {
            return true;
        }
        if !(c.is_ascii_alphanumeric() || c == b'+' || c == b'-' || c == b'.') {
            return false;
        }
    }
    false
}

/// Checks a relative path: no `.` or `..` segment.
pub fn check_relative(path: &str) -> Result<()> {
    if path.split('/').any(|s| s == ".." || s == ".") {
        return Err(Error::invalid(format!(
            "relative path {path:?} has a '.' or '..' segment, which v4 does not support \
             (it could leave the table location)"
        )));
    }
    Ok(())
}

/// Path resolution: `path` as it is when absolute, else `location` + `/` + `path` (no
/// separator handling, as the spec's examples show: a location ending in `/` gives `//`).
pub fn resolve(path: &str, location: &str) -> Result<String> {
    if has_scheme(path) {
        return Ok(path.to_string());
    }
    check_relative(path)?;
    Ok(format!("{location}/{path}"))
}

/// Path relativization: the rest of `path` after `location` + `/` when it starts with that,
/// else `path` unchanged. A local path without a scheme (`/tmp/t/...`, as v1-v3 tables and
/// frazil's local IO write them) is first qualified as `file://` + path, as the spec asks of
/// v4 absolute paths; any other path without a scheme is already relative and stays as it is.
pub fn relativize(path: &str, location: &str) -> String {
    let qualified;
    let path = if has_scheme(path) {
        path
    } else if path.starts_with('/') {
        qualified = format!("file://{path}");
        &qualified
    } else {
        return path.to_string();
    };
    match path.strip_prefix(location) {
        Some(rest) if rest.starts_with('/') && rest.len() > 1 => rest[1..].to_string(),
        _ => path.to_string(),
    }
}

/// A path of a v1-v3 file read into a v4 table: absolute even without a scheme, and a local
/// path without one gets `file://` (spec "Reading v3 or prior metadata for v4": "prepend a
/// scheme component consistent with v4 absolute paths").
pub fn qualify(path: &str) -> String {
    if !has_scheme(path) && path.starts_with('/') {
        format!("file://{path}")
    } else {
        path.to_string()
    }
}

/// A column of paths of a v1-v3 file qualified for a v4 table ([`qualify`]).
pub fn qualify_column(a: &ArrayRef) -> Result<ArrayRef> {
    map_strings(a, |p| Ok(qualify(p)))
}

/// Paths as a v4 table reads them from a file of `version`: resolved against `location` from
/// v4, qualified before.
pub fn read_column(a: &ArrayRef, version: u8, location: &str) -> Result<ArrayRef> {
    if version >= 4 {
        resolve_column(a, location)
    } else {
        qualify_column(a)
    }
}

/// A string column with every value mapped by `f` (nulls kept).
fn map_strings(a: &ArrayRef, mut f: impl FnMut(&str) -> Result<String>) -> Result<ArrayRef> {
    if a.data_type() != &DataType::Utf8 {
        return Ok(a.clone());
    }
    let s = a.as_string::<i32>();
    let out: StringArray = s
        .iter()
        .map(|v| v.map(&mut f).transpose())
        .collect::<Result<_>>()?;
    Ok(Arc::new(out))
}

/// A column of paths resolved against `location`.
pub fn resolve_column(a: &ArrayRef, location: &str) -> Result<ArrayRef> {
    map_strings(a, |p| resolve(p, location))
}

/// A column of paths relativized against `location`.
pub fn relativize_column(a: &ArrayRef, location: &str) -> Result<ArrayRef> {
    map_strings(a, |p| Ok(relativize(p, location)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's "Examples of path resolution" table (v4 rows).
    #[test]
    fn spec_resolution_examples() {
        let cases = [
            (
                "s3://bucket/db/table",
                "data/00000-0.parquet",
                "s3://bucket/db/table/data/00000-0.parquet",
            ),
            (
                "s3://bucket/db/table",
                "hdfs://wh/db/table/data/00000-0.parquet",
                "hdfs://wh/db/table/data/00000-0.parquet",
            ),
            (
                "s3://bucket/db/table/",
                "data/00000-0.parquet",
                "s3://bucket/db/table//data/00000-0.parquet",
            ),
            (
                "s3://bucket/db/table",
                "/data/00000-0.parquet",
                "s3://bucket/db/table//data/00000-0.parquet",
            ),
        ];
        for (location, path, want) in cases {
            assert_eq!(resolve(path, location).unwrap(), want);
        }
    }

    #[test]
    fn relativization() {
        let loc = "s3://bucket/db/table";
        assert_eq!(
            relativize("s3://bucket/db/table/data/a.parquet", loc),
            "data/a.parquet"
        );
        // a sibling sharing the prefix without the separator stays absolute
        assert_eq!(
            relativize("s3://bucket/db/table2/data/a.parquet", loc),
            "s3://bucket/db/table2/data/a.parquet"
        );
        assert_eq!(relativize("gs://x/y", loc), "gs://x/y");
        assert_eq!(relativize("data/a.parquet", loc), "data/a.parquet");
        for p in ["s3://bucket/db/table/data/a.parquet", "gs://x/y"] {
            assert_eq!(resolve(&relativize(p, loc), loc).unwrap(), p);
        }
        // scheme-less local paths are qualified first
        assert_eq!(
            relativize("/tmp/t/data/a.parquet", "file:///tmp/t"),
            "data/a.parquet"
        );
        assert_eq!(
            relativize("/tmp/u/a.parquet", "file:///tmp/t"),
            "file:///tmp/u/a.parquet"
        );
    }

    #[test]
    fn dot_segments_are_refused() {
        for p in ["../other/x.parquet", "data/../../x", "./data/x", "data/.."] {
            let e = resolve(p, "s3://b/t").unwrap_err();
            assert!(e.message.contains("'..'"), "{e}");
        }
        // file names that merely contain dots are fine
        assert_eq!(
            resolve("data/a..b.parquet", "s3://b/t").unwrap(),
            "s3://b/t/data/a..b.parquet"
        );
    }

    #[test]
    fn schemes() {
        for p in [
            "s3://b",
            "file:/tmp/x",
            "hdfs://nn/x",
            "s3a://b",
            "a+b-c.d:x",
        ] {
            assert!(has_scheme(p), "{p}");
        }
        for p in ["/tmp/x", "data/x:y", "", "1s3://b", "data"] {
            assert!(!has_scheme(p), "{p}");
        }
    }
}
