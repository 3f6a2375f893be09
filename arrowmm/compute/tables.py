"""``Table.filter``, ``Table.take`` and ``Table.sort_by``, over the kernels of this package
(set in the hooks ``arrowmm.arrays.table`` calls through, since it cannot import them)."""
from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

from .. import hooks, types as t
from ..arrays import selection as slow
from ..arrays.array import Array
from ..arrays.batch import RecordBatch
from ..arrays.chunked import ChunkedArray
from ..arrays.column_input import as_chunked
from ..arrays.empty import empty_array
from ..arrays.table import Table
from ..errors import ArrowInvalid
from . import _kernels as k
from .expression import Expression
from .predicate import check_expression, selection_mask
from .selection import count_kept, filter_batch, packed_mask, selection_of, take_array
from .sorting import key_columns, sort_indices, sort_keys, whole

__all__ = ["filter_table", "filter_one_batch", "take_table", "sort_table", "batch_columns",
           "schema_types"]


def batch_columns(batch: RecordBatch) -> Callable[[str], Array]:
    """Column ``name`` of ``batch`` as stored (ArrowInvalid naming the columns when there is
    none, or several: a filter names one column)."""
    names = batch.schema.names

    def column(name: str) -> Array:
        hits = [i for i, n in enumerate(names) if n == name]
        if len(hits) != 1:
            raise ArrowInvalid(f"filter: column {name!r} " + (
                f"is not in the table; it has {names}" if not hits else
                f"is ambiguous: {len(hits)} columns have that name"))
        return batch.storage_column(hits[0])
    return column


def schema_types(schema) -> Callable:
    """``name`` -> the storage type of ``schema``'s column ``name``, ArrowInvalid naming the
    columns when there is none (or several)."""
    names = schema.names

    def field_type(name: str):
        hits = [i for i, n in enumerate(names) if n == name]
        if len(hits) != 1:
            raise ArrowInvalid(f"filter: column {name!r} " + (
                f"is not in the table; it has {names}" if not hits else
                f"is ambiguous: {len(hits)} columns have that name"))
        return schema.fields[hits[0]].storage_type
    return field_type


def filter_table(table: Table, mask) -> Table:
    """``Table.filter``: by a boolean mask or an Expression, batch by batch."""
    batches = table.to_batches()
    out: List[RecordBatch] = []
    if isinstance(mask, Expression):
        check_expression(mask, schema_types(table.schema))
        for b in batches:  # (each batch's rows packed once, counted as they are)
            kept = packed_mask(selection_mask(mask, batch_columns(b), b.num_rows), b.num_rows)
            if kept.count:
                out.append(filter_batch(b, kept, kept.count))
        return Table(table.schema, out)
    masks = batch_masks(table, mask)
    if masks is not None:  # (each batch's piece packed once, from its bits, for every column)
        for b, kept in zip(batches, masks):
            if kept.count:
                out.append(filter_batch(b, kept, kept.count))
        return Table(table.schema, out)
    keep = slow.as_mask(mask, table.num_rows)  # (numpy, lists)
    at = 0
    for b in batches:
        part = keep[at:at + b.num_rows]
        at += b.num_rows
        count = count_kept(part)
        if count:
            out.append(filter_batch(b, part, count))
    return Table(table.schema, out)


def batch_masks(table: Table, mask) -> Optional[List[k.Mask]]:
    """A boolean array or chunked array ``mask`` (arrowmm's or pyarrow's) as long as
    ``table``, as one ``Mask`` per batch read from the bits of its piece of the mask (a piece
    across two chunks is their bits joined), where unpacking the whole mask to a byte a row
    cost more than the filter.  A mask of one array is read where it lies, its null count
    checked once (a sliced array per batch cost about what reading its bits costs).  None for
    any other mask (numpy, lists: ``as_mask`` takes them, and refuses a mask of another
    length or type), or a table without columns."""
    if not isinstance(mask, (Array, ChunkedArray)):
        if hasattr(mask, "__arrow_c_array__") or hasattr(mask, "__arrow_c_stream__") and \
                hasattr(mask, "num_chunks"):  # (pyarrow's arrays and chunked arrays)
            mask = as_chunked(mask, None, "filter: the mask")
        else:
            return None
    if type(mask.type) is not t.BoolType or len(mask) != table.num_rows or \
            not table.num_columns:
        return None
    if isinstance(mask, ChunkedArray) and mask.num_chunks == 1:
        mask = mask.chunk(0)
    masks, at = [], 0
    if isinstance(mask, Array):
        values, nulls, start = mask._buffers[1], mask._nulls_bitmap(), mask.offset
        for b in table.to_batches():
            masks.append(k.mask_from_bits(values, start + at, b.num_rows, nulls,
                                          start + at if nulls is not None else 0))
            at += b.num_rows
        return masks
    for b in table.to_batches():
        chunks = [c for c in mask.slice(at, b.num_rows).chunks if len(c)]
        piece = chunks[0] if len(chunks) == 1 else \
            ChunkedArray(chunks, mask.type).combine_chunks() if chunks else \
            empty_array(mask.type)
        masks.append(selection_of(piece, b.num_rows))
        at += b.num_rows
    return masks


def take_table(table: Table, indices) -> Table:
    """``Table.take``: the rows at ``indices``, as one batch."""
    batches = table.to_batches()
    # (null indices into no rows: take_array's null rows, given a batch's columns to type them)
    values, nulls = slow.as_indices(indices, table.num_rows, nulls_into_empty=bool(batches))
    picks = values if nulls is None else \
        [None if z else int(v) for v, z in zip(values.tolist(), nulls.tolist())]
    if not batches:
        return Table(table.schema, [])  # (no rows: as_indices let only no indices through)
    cols = [take_array(whole([b.storage_column(k) for b in batches]), picks)
            for k in range(table.num_columns)]
    return Table(table.schema, [RecordBatch(table.schema, len(values), cols)])


def sort_table(table: Table, sorting, null_placement=None) -> Table:
    """``Table.sort_by``."""
    keys = sort_keys(sorting, null_placement)
    ks = key_columns(table.schema.names, keys)
    batches = table.to_batches()
    if not batches or table.num_rows == 0:
        return table
    columns = [whole([b.storage_column(k) for b in batches]) for k in ks]
    return take_table(table, sort_indices(columns, keys, table=True))


def filter_one_batch(batch: RecordBatch, mask) -> RecordBatch:
    """``RecordBatch.filter``: ``filter_table``'s rules on one batch, without a table around
    it (the table, and a chunked array around a pyarrow mask, cost more than the kernels of a
    batch of 10^5 rows); a chunked mask takes the table's route.  An empty slice of the
    batch when no row is kept, as pyarrow's."""
    if isinstance(mask, ChunkedArray) or hasattr(mask, "num_chunks"):
        return _on_one_batch(filter_table)(batch, mask)
    if isinstance(mask, Expression):
        check_expression(mask, schema_types(batch.schema))
        mask = selection_mask(mask, batch_columns(batch), batch.num_rows)
    elif isinstance(mask, (np.ndarray, list, tuple)):  # (checked and named as a table's)
        mask = slow.as_mask(mask, batch.num_rows)
    kept = packed_mask(mask, batch.num_rows)  # (a boolean array read from its bits)
    if not kept.count:
        return batch.slice(0, 0)
    return filter_batch(batch, kept, kept.count)


def _on_one_batch(table_function: Callable) -> Callable:
    """``table_function`` (of a Table and an argument) as a function of a RecordBatch: the
    batch as a table of one, the result as one batch (an empty slice of the batch when no
    row is left, as pyarrow's batch methods give a batch of no rows)."""
    def on_batch(batch: RecordBatch, argument, **options) -> RecordBatch:
        out = table_function(Table(batch.schema, [batch]), argument, **options).to_batches()
        if len(out) == 1:
            return out[0]
        if not out:
            return batch.slice(0, 0)
        raise ArrowInvalid(f"{table_function.__name__} of one batch gave {len(out)} batches")
    on_batch.__name__ = table_function.__name__
    return on_batch


# (Table.filter, take, sort_by and RecordBatch's, a layer below, call these through the hooks)
hooks.fill("filter_table", filter_table)
hooks.fill("take_table", take_table)
hooks.fill("sort_table", sort_table)
hooks.fill("filter_batch", filter_one_batch)
hooks.fill("take_batch", _on_one_batch(take_table))
hooks.fill("sort_batch", _on_one_batch(sort_table))
