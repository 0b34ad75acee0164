//! The row filter against the pages of a row group, from the bounds of a Parquet page index
//! (column index: each page's min, max and null count; offset index: each page's first row).
//!
//! Columns are paged independently, so the row group is cut at every page start of every
//! filter column; within each piece, each column's metrics are those of the page covering
//! it, and [`MetricsEvaluator`] (inclusive, as for data files) says whether any of its rows
//! may match. Pieces that cannot are not decoded. A piece's value count is its row count (the
//! columns are top-level, one value per row); a null count is known only where its page has
//! none or is all nulls. Bounds are in the binary single-value form, read by the table's
//! types (with the spec's promotions) exactly as file bounds are.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, MapBuilder, MapFieldNames};
use arrow_array::{ArrayRef, Int64Array, StructArray};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use arrow_schema::{Field, Fields};
use frazil_values::{Error, Result};

use crate::expr::{Expr, Schema};
use crate::metrics_evaluator::{MetricsColumns, MetricsEvaluator};

/// One column's pages in a row group, from its page index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnPages {
    pub field_id: i32,
    /// The first row of each page, ascending from 0.
    pub first_rows: Vec<i64>,
    /// Each page's lower and upper bound (binary single-value form), if it has one.
    pub lower: Vec<Option<Vec<u8>>>,
    pub upper: Vec<Option<Vec<u8>>>,
    /// Each page's null count, if known.
    pub nulls: Vec<Option<i64>>,
    /// Whether each page holds only nulls.
    pub all_null: Vec<bool>,
}

impl ColumnPages {
    fn check(&self, rows: i64) -> Result<()> {
        let n = self.first_rows.len();
        let lengths = [
            self.lower.len(),
            self.upper.len(),
            self.nulls.len(),
            self.all_null.len(),
        ];
        if n == 0 || lengths.iter().any(|&l| l != n) {
            return Err(Error::invalid(format!(
                "page index of field {}: {n} pages but {lengths:?} statistics",
                self.field_id
            )));
        }
        if self.first_rows[0] != 0
            || self.first_rows.windows(2).any(|w| w[0] >= w[1])
            || self.first_rows[n - 1] >= rows.max(1)
        {
            return Err(Error::decode(format!(
                "page index of field {}: page first rows {:?}... are not ascending from 0 \
                 within the row group's {rows} rows",
                self.field_id,
                &self.first_rows[..n.min(4)]
            )));
        }
        Ok(())
    }
}

/// Per row of a row group of `rows` rows, whether `expr` may be true for it by the page
/// bounds of `columns`; `None` where no page can be skipped.
pub fn keep_rows(
    expr: &Expr,
    schema: &Schema,
    rows: i64,
    columns: &[ColumnPages],
) -> Result<Option<BooleanBuffer>> {
    let wanted = expr.referenced_field_ids();
    let columns: Vec<&ColumnPages> = columns
        .iter()
        .filter(|c| wanted.binary_search(&c.field_id).is_ok())
        .collect();
    if columns.is_empty() || rows <= 0 {
        return Ok(None);
    }
    for c in &columns {
        c.check(rows)?;
    }
    // the pieces: every page start of every column
    let mut starts: Vec<i64> = columns
        .iter()
        .flat_map(|c| c.first_rows.iter().copied())
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let pieces = starts.len();
    if pieces == 1 {
        // one page per column: the row group's own statistics said as much
        return Ok(None);
    }
    let length = |k: usize| starts.get(k + 1).copied().unwrap_or(rows) - starts[k];
    let names = MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    };
    let counts = || {
        MapBuilder::new(
            Some(names.clone()),
            Int32Builder::new(),
            Int64Builder::new(),
        )
    };
    let bounds = || {
        MapBuilder::new(
            Some(names.clone()),
            Int32Builder::new(),
            BinaryBuilder::new(),
        )
    };
    let (mut values, mut nulls) = (counts(), counts());
    let (mut lower, mut upper) = (bounds(), bounds());
    // per column, the page covering the current piece
    let mut page = vec![0usize; columns.len()];
    let map_error = |e: arrow_schema::ArrowError| Error::invalid(format!("page metrics: {e}"));
    for (k, &start) in starts.iter().enumerate() {
        let n = length(k);
        for (c, p) in columns.iter().zip(page.iter_mut()) {
            while *p + 1 < c.first_rows.len() && c.first_rows[*p + 1] <= start {
                *p += 1;
            }
            let p = *p;
            values.keys().append_value(c.field_id);
            values.values().append_value(n);
            let null_count = if c.all_null[p] {
                Some(n)
            } else {
                c.nulls[p].filter(|&x| x == 0)
            };
            if let Some(x) = null_count {
                nulls.keys().append_value(c.field_id);
                nulls.values().append_value(x);
            }
            if let (Some(lo), Some(hi)) = (&c.lower[p], &c.upper[p]) {
                lower.keys().append_value(c.field_id);
                lower.values().append_value(lo);
                upper.keys().append_value(c.field_id);
                upper.values().append_value(hi);
            }
        }
        for m in [&mut values, &mut nulls] {
            m.append(true).map_err(map_error)?;
        }
        for m in [&mut lower, &mut upper] {
            m.append(true).map_err(map_error)?;
        }
    }
    let record_count: ArrayRef = Arc::new(Int64Array::from_iter_values((0..pieces).map(length)));
    let arrays: Vec<ArrayRef> = vec![
        record_count,
        Arc::new(values.finish()),
        Arc::new(nulls.finish()),
        Arc::new(lower.finish()),
        Arc::new(upper.finish()),
    ];
    let fields: Fields = [
        "record_count",
        "value_counts",
        "null_value_counts",
        "lower_bounds",
        "upper_bounds",
    ]
    .iter()
    .zip(&arrays)
    .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
    .collect();
    let data_file = StructArray::try_new(fields, arrays, None).map_err(map_error)?;
    let metrics = MetricsColumns::new(&data_file)?;
    let keep = MetricsEvaluator::new(expr, schema, false).eval(&metrics)?;
    if keep.iter().all(|&k| k) {
        return Ok(None);
    }
    let mut mask = BooleanBufferBuilder::new(rows as usize);
    for (k, &kept) in keep.iter().enumerate() {
        mask.append_n(length(k) as usize, kept);
    }
    Ok(Some(mask.finish()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use proptest::prelude::*;

    use super::*;
    use crate::RowFilter;

    const SCHEMA: &str = r#"{"type":"struct","fields":[
        {"id":1,"name":"a","required":false,"type":"long"},
        {"id":2,"name":"b","required":false,"type":"string"}]}"#;

    /// A column's pages as a writer's page index gives them, from its values.
    fn pages(
        field_id: i32,
        starts: &[usize],
        values: &[Option<Vec<u8>>],
        order: fn(&[u8], &[u8]) -> std::cmp::Ordering,
    ) -> ColumnPages {
        let mut c = ColumnPages {
            field_id,
            first_rows: starts.iter().map(|&s| s as i64).collect(),
            ..ColumnPages::default()
        };
        for (k, &s) in starts.iter().enumerate() {
            let e = starts.get(k + 1).copied().unwrap_or(values.len());
            let page: Vec<&Vec<u8>> = values[s..e].iter().flatten().collect();
            c.lower
                .push(page.iter().copied().min_by(|x, y| order(x, y)).cloned());
            c.upper
                .push(page.iter().copied().max_by(|x, y| order(x, y)).cloned());
            c.nulls.push(Some((e - s - page.len()) as i64));
            c.all_null.push(page.is_empty());
        }
        c
    }

    fn long_order(x: &[u8], y: &[u8]) -> std::cmp::Ordering {
        let v = |b: &[u8]| i64::from_le_bytes(b.try_into().unwrap());
        v(x).cmp(&v(y))
    }

    fn reference(id: i32) -> String {
        format!(r#"{{"type":"reference","id":{id}}}"#)
    }

    /// Filters over `a` (long) and `b` (string), nested up to `depth` and/or/not.
    fn filter(depth: u32) -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            (
                prop::sample::select(vec!["lt", "lt-eq", "gt", "gt-eq", "eq", "not-eq"]),
                -25i64..25
            )
                .prop_map(|(op, v)| format!(
                    r#"{{"type":"{op}","left":{},"right":{v}}}"#,
                    reference(1)
                )),
            (
                prop::sample::select(vec![
                    "lt",
                    "gt-eq",
                    "eq",
                    "not-eq",
                    "starts-with",
                    "not-starts-with"
                ]),
                "[a-e]{0,2}"
            )
                .prop_map(|(op, v)| format!(
                    r#"{{"type":"{op}","left":{},"right":"{v}"}}"#,
                    reference(2)
                )),
            (
                prop::sample::select(vec!["in", "not-in"]),
                prop::collection::vec(-25i64..25, 1..4)
            )
                .prop_map(|(op, vs)| format!(
                    r#"{{"type":"{op}","child":{},"values":{vs:?}}}"#,
                    reference(1)
                )),
            (prop::sample::select(vec!["is-null", "not-null"]), 1i32..3)
                .prop_map(|(op, id)| format!(r#"{{"type":"{op}","child":{}}}"#, reference(id))),
        ];
        leaf.prop_recursive(depth, 16, 2, |inner| {
            prop_oneof![
                (
                    prop::sample::select(vec!["and", "or"]),
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, l, r)| format!(r#"{{"type":"{op}","left":{l},"right":{r}}}"#)),
                inner.prop_map(|c| format!(r#"{{"type":"not","child":{c}}}"#)),
            ]
        })
        .boxed()
    }

    fn starts(rows: usize) -> impl Strategy<Value = Vec<usize>> {
        prop::collection::btree_set(1..rows.max(2), 0..8).prop_map(move |set| {
            std::iter::once(0)
                .chain(set.into_iter().filter(|&s| s < rows))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Sound: every row the filter holds for (Java's row `Evaluator`, 2-valued as the
        /// expressions spec says) is kept; and, where the columns are sorted, pages whose
        /// bounds rule a filter out are skipped.
        #[test]
        fn keeps_every_row_the_filter_holds_for(
            (rows, a, b, starts_a, starts_b) in (1usize..120).prop_flat_map(|rows| (
                Just(rows),
                prop::collection::vec(prop::option::weighted(0.85, -20i64..20), rows),
                prop::collection::vec(prop::option::weighted(0.85, "[a-e]{0,3}"), rows),
                starts(rows),
                starts(rows),
            )),
            sorted in any::<bool>(),
            filter in filter(3),
        ) {
            let (mut a, mut b) = (a, b);
            if sorted {
                a.sort();
                b.sort();
            }
            let (schema, expr) = Expr::bound_from_json(SCHEMA, &filter).unwrap();
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(a.clone())),
                Arc::new(StringArray::from(b.iter().map(|s| s.as_deref()).collect::<Vec<_>>())),
            ];
            let rf = RowFilter::new(&expr, &schema).unwrap();
            let cols: Vec<ArrayRef> = rf.field_ids().iter().map(|&id| Arc::clone(&arrays[id as usize - 1])).collect();
            let holds = rf.eval(&cols, rows).unwrap();
            let columns = [
                pages(1, &starts_a, &a.iter().map(|v| v.map(|v| v.to_le_bytes().to_vec())).collect::<Vec<_>>(), long_order),
                pages(2, &starts_b, &b.iter().map(|v| v.clone().map(String::into_bytes)).collect::<Vec<_>>(), |x, y| x.cmp(y)),
            ];
            let keep = keep_rows(&expr, &schema, rows as i64, &columns).unwrap();
            if let Some(keep) = &keep {
                prop_assert_eq!(keep.len(), rows);
            }
            for i in 0..rows {
                if holds.value(i) {
                    prop_assert!(keep.as_ref().is_none_or(|k| k.value(i)), "row {} of {:?} / {:?} dropped by {}", i, a[i], b[i], filter);
                }
            }
        }
    }

    /// A sorted column in 4 pages: a range within one page keeps only that page's rows; a null
    /// test keeps only the pages with nulls.
    #[test]
    fn skips_the_pages_a_filter_rules_out() {
        let (schema, expr) = Expr::bound_from_json(
            SCHEMA,
            &format!(r#"{{"type":"and","left":{{"type":"gt-eq","left":{r},"right":30}},"right":{{"type":"lt","left":{r},"right":40}}}}"#, r = reference(1)),
        )
        .unwrap();
        let values: Vec<Option<Vec<u8>>> = (0..100i64)
            .map(|v| Some(v.to_le_bytes().to_vec()))
            .collect();
        let column = pages(1, &[0, 25, 50, 75], &values, long_order);
        let keep = keep_rows(&expr, &schema, 100, std::slice::from_ref(&column))
            .unwrap()
            .unwrap();
        let kept: Vec<usize> = (0..100).filter(|&i| keep.value(i)).collect();
        assert_eq!(kept, (25..50).collect::<Vec<_>>());
        // nothing to skip: None
        let (schema, all) = Expr::bound_from_json(
            SCHEMA,
            &format!(r#"{{"type":"gt-eq","left":{},"right":0}}"#, reference(1)),
        )
        .unwrap();
        assert!(keep_rows(&all, &schema, 100, std::slice::from_ref(&column))
            .unwrap()
            .is_none());
        // is-null: only an all-null page or one counting nulls
        let mut with_nulls = values.clone();
        for v in &mut with_nulls[80..] {
            *v = None;
        }
        let column = pages(1, &[0, 25, 50, 75], &with_nulls, long_order);
        let (schema, is_null) = Expr::bound_from_json(
            SCHEMA,
            &format!(r#"{{"type":"is-null","child":{}}}"#, reference(1)),
        )
        .unwrap();
        let keep = keep_rows(&is_null, &schema, 100, std::slice::from_ref(&column))
            .unwrap()
            .unwrap();
        assert_eq!(
            (0..100).filter(|&i| keep.value(i)).collect::<Vec<_>>(),
            (75..100).collect::<Vec<_>>()
        );
        // a page index that does not start at row 0 is refused
        let mut bad = column.clone();
        bad.first_rows[0] = 1;
        assert!(keep_rows(&is_null, &schema, 100, &[bad]).is_err());
    }
}
