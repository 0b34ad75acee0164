"""``upsert`` (PyIceberg's semantics): update the rows of the table whose join columns equal a
source row's and whose other columns differ, insert the source rows that match none, in one
snapshot, copy-on-write or merge-on-read per ``write.merge.mode``.

Columnar from end to end, so that a million source keys cost seconds, not minutes:

1. The candidate files are planned with a filter that is cheap to build and to evaluate for any
   number of keys: per join column an ``In`` of its distinct values when there are at most
   200 (the metrics evaluators, as Java's, stop pruning longer ``IN`` lists), else its
   ``[min, max]`` range. It selects a superset of the files holding matches; the join is exact.
2. Only the join columns (and ``_pos``) of the candidate files are read, with their deletes
   applied, and joined to the source's keys by Arrow's hash join (the source is the build side:
   it is usually the smaller one and is hashed once per batch of files, not once per file).
3. Only the files that hold matches are read further: their other columns (merge-on-read,
   plus ``_row_id`` on v3) or their whole rows (copy-on-write). A matched row is updated only
   when a non-key column differs (null-safe; NaN equals NaN).
4. The changes go through the row-delta machinery of :mod:`frazil.table.write.row_delta`:
   deletion vectors (v3) or position delete files (v2), or rewritten files; updated rows keep
   their ``_row_id`` and get a null ``_last_updated_sequence_number`` (v3 row lineage).

Nulls in join columns: a source row with a null key is refused with an
:class:`~frazil.exceptions.InvalidArgumentError` (PyIceberg 0.12 refuses it too, with
``TypeError: Invalid literal value: None``); a table row with a null key never matches (SQL
equality), so it is neither updated nor counted as a duplicate.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from frazil.arrow_schema import schema_to_arrow
from frazil.exceptions import FrazilError, InvalidArgumentError, UnsupportedError, ValidationError
from frazil.expressions import (
    AlwaysTrue,
    And,
    BooleanExpression,
    GreaterThanOrEqual,
    In,
    LessThanOrEqual,
    bind,
)
from frazil.table.scan.handoff import one_chunk
from frazil.table.scan.read import DeleteCache, prune_schema
from frazil.table.write.conform import as_table, conform
from frazil.table.write.row_context import COPY_ON_WRITE, LAST_UPDATED, POS, ROW_ID, RowContext
from frazil.table.write.row_delta import (
    MERGE_ISOLATION,
    MERGE_MODE,
    RowLevelStep,
    _Change,
    _concat,
)

if TYPE_CHECKING:
    from frazil.metadata import TableMetadata
    from frazil.schema import Schema
    from frazil.table.scan import FileScanTask
    from frazil.table.step import TransactionStep
    from frazil.table.transaction import Transaction

__all__ = ["UpsertResult", "candidate_filter", "upsert"]

_SOURCE_INDEX = "__frazil_source_index"
_FILE_INDEX = "__frazil_file_index"
# The metrics evaluators (native and Java's) do not prune with IN lists longer than this.
IN_PREDICATE_LIMIT = 200
# Target key rows joined at once: the source's hash table is built once per batch, and a
# batch of 16M keys of a few columns stays within a few hundred MB.
_JOIN_BATCH_ROWS = 16_000_000
# Files read at once (as DataScan.to_arrow's default read-threads).
_READ_THREADS = min(8, os.cpu_count() or 1)
T = TypeVar("T")
R = TypeVar("R")


@dataclass()
class UpsertResult:
    """What an upsert changed (PyIceberg's ``UpsertResult``)."""

    rows_updated: int = 0
    rows_inserted: int = 0


def candidate_filter(keys: pa.Table) -> BooleanExpression:
    """A filter true for every table row whose columns equal one of ``keys``' rows (and
    maybe for others): per column an ``In`` of at most ``IN_PREDICATE_LIMIT`` distinct values,
    else a ``[min, max]`` range; no term for a column of a type neither suits (floats, whose
    NaN has no place in a range; nested types)."""
    terms: list[BooleanExpression] = []
    for name in keys.column_names:
        column = keys.column(name)
        t = column.type
        if pa.types.is_floating(t) or pa.types.is_nested(t) or column.null_count == len(column):
            continue
        distinct = pc.unique(column.drop_null())
        if len(distinct) <= IN_PREDICATE_LIMIT:
            terms.append(In(name, distinct.to_pylist()))
            continue
        try:
            bounds = pc.min_max(column)
        except pa.ArrowNotImplementedError:
            continue
        lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
        terms.append(And(GreaterThanOrEqual(name, lo), LessThanOrEqual(name, hi)))
    if not terms:
        return AlwaysTrue()
    return terms[0] if len(terms) == 1 else And(*terms)


def _bind_candidates(schema: Schema, keys: pa.Table, case_sensitive: bool) -> BooleanExpression:
    try:
        return bind(schema, candidate_filter(keys), case_sensitive)
    except (FrazilError, TypeError, ValueError):
        # A key value the expression literals cannot hold (say, a nanosecond timestamp out
        # of the literal's range) only costs pruning: plan every file.
        return AlwaysTrue()


def _differs(a: pa.ChunkedArray | pa.Array, b: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Null-safe inequality per row (NaN equals NaN), as a numpy bool array; nested values
    compared member by member (Arrow has no comparison kernels for them)."""
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if isinstance(b, pa.ChunkedArray):
        b = b.combine_chunks()
    t = a.type
    if pa.types.is_dictionary(t):
        return _differs(a.dictionary_decode(), b.dictionary_decode())
    if pa.types.is_map(t):  # as the list of key-value structs it is
        entries = pa.list_(pa.field("entries", pa.struct([t.key_field, t.item_field]), False))
        return _differs(a.cast(entries), b.cast(entries))
    a_null = _np_bool(a.is_null())
    b_null = _np_bool(b.is_null())
    out: np.ndarray = a_null != b_null
    both: np.ndarray = ~(a_null | b_null)
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            # A child's slot under a null struct holds anything: only both-valid rows count.
            out |= both & _differs(_struct_child(a, i), _struct_child(b, i))
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        lengths = _np_int(pc.list_value_length(a)), _np_int(pc.list_value_length(b))
        out |= both & (lengths[0] != lengths[1])
        same = np.flatnonzero(both & (lengths[0] == lengths[1]))
        if len(same):
            rows = pa.array(same)
            sa, sb = a.take(rows), b.take(rows)
            # Equal lengths per row, so the flattened members line up.
            members = _differs(sa.flatten(), sb.flatten())
            parents = _np_int(pc.list_parent_indices(sa))
            hit = np.bincount(parents[members], minlength=len(same)) > 0
            out[same[hit]] = True
        return out
    ne = pc.not_equal(a, b)
    if pa.types.is_floating(t):
        ne = pc.and_(ne, pc.invert(pc.and_(pc.is_nan(a), pc.is_nan(b))))
    out |= both & _np_bool(pc.fill_null(ne, False))
    return out


def _struct_child(a: pa.StructArray, i: int) -> pa.Array:
    return a.field(i) if a.offset == 0 else pc.struct_field(a, [i])


def _np_bool(a: pa.Array) -> np.ndarray:
    return np.asarray(a.to_numpy(zero_copy_only=False), dtype=bool)


def _np_int(a: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(a, 0).to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass
class _Source:
    """The source rows in the table's read types, with the names of their columns."""

    rows: pa.Table
    names: list[str]
    join_cols: list[str]

    @property
    def others(self) -> list[str]:
        return [c for c in self.names if c not in self.join_cols]


def _prepare(
    schema: Schema, df: Any, join_cols: Sequence[str] | None, case_sensitive: bool
) -> _Source:
    """Checks the source and converts it to the table's types (before anything is read)."""
    df = as_table(df)
    if join_cols is None:
        join_cols = [schema.find_column_name(i) or "" for i in schema.identifier_field_ids]
    cols = list(join_cols)
    if not cols:
        raise InvalidArgumentError(
            "join columns could not be found: set the table's identifier fields or pass join_cols"
        )
    missing = [c for c in cols if c not in df.column_names]
    if missing:
        raise InvalidArgumentError(f"join columns {missing} are not in the data")
    if _SOURCE_INDEX in df.column_names:
        raise InvalidArgumentError(f"{_SOURCE_INDEX!r} is reserved")
    conformed = conform(df.schema, schema)
    batches = [conformed.convert(b) for b in df.to_batches()]
    converted = pa.Table.from_batches(batches, conformed.arrow_schema)
    # In the types a scan reads, so that keys join and values compare with the table's.
    read_types = schema_to_arrow(schema)
    names = [f.name for f in read_types if f.name in converted.column_names]
    # one chunk: each file the source matches takes its rows from it
    rows = one_chunk(
        pa.table([converted.column(n).cast(read_types.field(n).type) for n in names], names=names)
    )
    cols = [schema.find_field(c, case_sensitive).name for c in cols]
    nulls = [c for c in cols if rows.column(c).null_count]
    if nulls:
        raise InvalidArgumentError(
            f"the join columns {nulls} hold nulls in the source: a null key matches no row "
            "(SQL equality), so upsert refuses it; fill or filter those rows first"
        )
    if rows.num_rows:
        counts = rows.group_by(cols, use_threads=False).aggregate([([], "count_all")])
        if pc.max(counts.column("count_all")).as_py() > 1:
            raise ValidationError(
                "Duplicate rows found in source dataset based on the key columns. "
                "No upsert executed"
            )
    return _Source(rows, names, cols)


def _in_order(fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
    """``fn`` over ``items`` on a thread pool (Parquet decoding and delete application release
    the GIL), in order, at most as many results ahead of the consumer as there are threads."""
    workers = min(_READ_THREADS, len(items))
    if workers <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="frazil-upsert") as pool:
        ahead: deque[Future[R]] = deque()
        for item in items:
            ahead.append(pool.submit(fn, item))
            if len(ahead) > workers:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()


@dataclass
class _Matches:
    """Matched (file, position, source row) triples, ordered by file and position."""

    file: np.ndarray
    pos: np.ndarray
    source: np.ndarray


def _join(keys: list[pa.Table], source_keys: pa.Table, join_cols: list[str]) -> pa.Table:
    target = pa.concat_tables(keys)
    try:
        return target.join(source_keys, keys=join_cols, join_type="inner")
    except pa.ArrowNotImplementedError as e:
        raise UnsupportedError(f"cannot join on the columns {join_cols}: {e}") from e


def _find_matches(
    ctx: RowContext, tasks: list[FileScanTask], source: _Source, cache: DeleteCache
) -> _Matches:
    """Reads the join columns of every candidate file and joins them to the source's keys."""
    cols = source.join_cols
    key_schema = prune_schema(ctx.schema, {ctx.schema.find_field(c).field_id for c in cols})
    source_keys = source.rows.select(cols).append_column(
        _SOURCE_INDEX, pa.array(np.arange(source.rows.num_rows, dtype=np.int64))
    )
    joined: list[pa.Table] = []
    pending: list[pa.Table] = []
    pending_rows = 0

    def read_keys(task: FileScanTask) -> pa.Table:
        return ctx.read(task, cache, key_schema, [POS]).select([*cols, POS])

    for i, keys in enumerate(_in_order(read_keys, tasks)):
        if keys.num_rows == 0:
            continue
        pending.append(
            keys.append_column(_FILE_INDEX, pa.repeat(pa.scalar(i, pa.int32()), len(keys)))
        )
        pending_rows += keys.num_rows
        if pending_rows >= _JOIN_BATCH_ROWS:
            joined.append(_join(pending, source_keys, cols))
            pending, pending_rows = [], 0
    if pending:
        joined.append(_join(pending, source_keys, cols))
    if not joined:
        empty = np.empty(0, np.int64)
        return _Matches(empty, empty, empty)
    found = pa.concat_tables(joined)
    file = found.column(_FILE_INDEX).to_numpy()
    pos = found.column(POS).to_numpy()
    src = found.column(_SOURCE_INDEX).to_numpy()
    order = np.lexsort((pos, file))
    return _Matches(file[order], pos[order], src[order])


def _read_matched(
    ctx: RowContext, cache: DeleteCache, source: _Source, task: FileScanTask
) -> pa.Table:
    """What a file with matches is read for: its whole rows with lineage (copy-on-write
    rewrites it), else its non-key columns and, on v3, ``_row_id`` (merge-on-read)."""
    if ctx.mode == COPY_ON_WRITE:
        return ctx.read(task, cache, None, [POS, ROW_ID, LAST_UPDATED] if ctx.v3 else [POS])
    ids = {ctx.schema.find_field(c).field_id for c in source.others}
    meta = [POS, ROW_ID] if ctx.v3 else [POS]
    return ctx.read(task, cache, prune_schema(ctx.schema, ids), meta)


def _update_file(
    ctx: RowContext,
    change: _Change,
    source: _Source,
    rows: pa.Table,
    task: FileScanTask,
    pos: np.ndarray,
    src: np.ndarray,
) -> pa.Table | None:
    """Compares one file's matched rows (``rows`` read by :func:`_read_matched`; ``pos``
    ascending) with their source rows and stages the change of those that differ; returns the
    updated rows to write, or ``None``."""
    live = rows.column(POS).to_numpy()
    if len(live) > 1 and not (np.diff(live) > 0).all():  # read_task keeps file order; if not
        order = np.argsort(live, kind="stable")
        at = order[np.searchsorted(live[order], pos)]
    else:
        at = np.searchsorted(live, pos)
    target = rows.take(pa.array(at))
    new = source.rows.take(pa.array(src))
    changed = np.zeros(len(pos), dtype=bool)
    for c in source.others:
        changed |= _differs(new.column(c), target.column(c))
    if not changed.any():
        return None
    mask = pa.array(changed)
    updated = new.filter(mask).select(source.names)
    if ctx.v3:
        updated = updated.append_column(ROW_ID, target.filter(mask).column(ROW_ID))
        updated = updated.append_column(LAST_UPDATED, pa.nulls(updated.num_rows, pa.int64()))
    if ctx.mode == COPY_ON_WRITE:
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[at[changed]] = False
        change.remove_file(task)
        if keep.any():
            change.rewritten.append(rows.filter(pa.array(keep)).drop_columns([POS]))
    else:
        change.delete_positions(task, pos[changed], rows.num_rows)
    return updated


def upsert(
    transaction: Transaction,
    df: Any,
    join_cols: Sequence[str] | None = None,
    when_matched_update_all: bool = True,
    when_not_matched_insert_all: bool = True,
    case_sensitive: bool = True,
    branch: str | None = None,
    snapshot_properties: Mapping[str, str] | None = None,
) -> UpsertResult:
    """Updates the rows whose join columns match a row of ``df`` (when any other column
    differs) and inserts the rows of ``df`` that match none, in one snapshot. Updated rows keep
    their ``_row_id`` (v3). Source rows with a null join column are refused; duplicate source
    keys are refused, and so is a key matching several table rows when updating."""
    if not when_matched_update_all and not when_not_matched_insert_all:
        raise InvalidArgumentError("no upsert options selected: nothing to do")
    df = as_table(df)  # read once: a re-plan matches it again
    md = transaction.table_metadata
    # Checked before anything is read (raised to the caller, not deferred to a re-plan).
    first = _prepare(md.schema(), df, join_cols, case_sensitive)
    if first.rows.num_rows == 0:
        return UpsertResult()
    prepared = {md.current_schema_id: first}
    result = UpsertResult()

    def plan(base: TableMetadata) -> TransactionStep | None:
        source = prepared.get(base.current_schema_id)
        if source is None:  # the schema changed concurrently: the source in its types
            source = _prepare(base.schema(), df, join_cols, case_sensitive)
        step, result.rows_updated, result.rows_inserted = _plan(
            transaction,
            base,
            source,
            when_matched_update_all,
            when_not_matched_insert_all,
            case_sensitive,
            branch,
            snapshot_properties,
        )
        return step

    transaction.stage(RowLevelStep(transaction, plan, branch))
    return result


def _plan(
    transaction: Transaction,
    base: TableMetadata,
    source: _Source,
    when_matched_update_all: bool,
    when_not_matched_insert_all: bool,
    case_sensitive: bool,
    branch: str | None,
    snapshot_properties: Mapping[str, str] | None,
) -> tuple[TransactionStep | None, int, int]:
    """The upsert's change against ``base``: (the step that commits it, rows updated, rows
    inserted)."""
    ctx = RowContext.make(transaction, base, branch, MERGE_MODE, MERGE_ISOLATION)
    bound = _bind_candidates(ctx.schema, source.rows.select(source.join_cols), case_sensitive)
    tasks = ctx.tasks(bound)
    cache = DeleteCache(ctx.io, ctx.metadata.name_mapping())
    matches = _find_matches(ctx, tasks, source, cache)
    change = _Change(ctx)
    updated: list[pa.Table] = []
    if when_matched_update_all and len(matches.source):
        if np.bincount(matches.source).max() > 1:
            raise ValidationError("Target table has duplicate rows, aborting upsert")
        if source.others:
            starts = np.flatnonzero(np.diff(matches.file, prepend=-1))
            ends = [*starts[1:], len(matches.file)]
            groups = [
                (tasks[int(matches.file[s])], matches.pos[s:e], matches.source[s:e])
                for s, e in zip(starts, ends, strict=True)
            ]

            def read_matched(group: tuple[FileScanTask, np.ndarray, np.ndarray]) -> pa.Table:
                return _read_matched(ctx, cache, source, group[0])

            for group, rows in zip(groups, _in_order(read_matched, groups), strict=True):
                new = _update_file(ctx, change, source, rows, *group)
                if new is not None:
                    updated.append(new)
    new_data = list(updated)
    inserted = 0
    if when_not_matched_insert_all:
        unmatched = np.ones(source.rows.num_rows, dtype=bool)
        unmatched[matches.source] = False
        inserts = source.rows.filter(pa.array(unmatched))
        inserted = inserts.num_rows
        if inserted and ctx.v3:
            inserts = inserts.append_column(ROW_ID, pa.nulls(inserted, pa.int64()))
            inserts = inserts.append_column(LAST_UPDATED, pa.nulls(inserted, pa.int64()))
        new_data.append(inserts)
    n_updated = sum(t.num_rows for t in updated)
    step = None
    if n_updated or inserted:
        # An insert-only upsert still read the keys: a concurrently added row with one of them
        # must make it plan again rather than add a duplicate key.
        step = change.build(_concat(new_data), snapshot_properties, bound)
    return step, n_updated, inserted
