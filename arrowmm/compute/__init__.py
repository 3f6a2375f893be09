"""Filters and row selection over arrowmm's columns: expressions (``field("x") > 3``),
their evaluation, and ``filter`` / ``take`` / ``sort_indices`` as whole-column kernels in C.

``expression`` holds the predicate tree, ``predicate`` judges it over a batch (pyarrow's
null semantics), ``selection`` selects rows of arrays and batches, ``sorting`` orders them,
``tables`` gives ``Table`` its ``filter``, ``take`` and ``sort_by``, ``hashing`` finds the
distinct values (``dictionary_encode``, ``unique``, ``value_counts``).  Anything heavier
(joins, group-by, arithmetic) is a zero-copy hand-off away: ``pyarrow.table(t)``,
``polars.from_arrow(t)``, ``duckdb.sql("select ... from t")``.
"""
from __future__ import annotations

import numpy as np

from .. import types as _t
from ..arrays.array import Array, make_array
from ..arrays.batch import RecordBatch
from ..arrays.chunked import ChunkedArray
from ..arrays.provenance import copied_view
from ..arrays.table import Table
from ..errors import ArrowInvalid
from .expression import Expression, field
from .hashing import dictionary_encode, unique, value_counts
from .predicate import check_expression, evaluate, selection_mask
from .selection import filter_array, filter_batch, selection_of, take_array, take_batch
from .sorting import key_columns, sort_indices as _sort_indices, sort_keys, whole
from .tables import batch_columns, filter_table, schema_types, take_table

__all__ = ["Expression", "field", "filter", "take", "sort_indices", "evaluate",
           "dictionary_encode", "unique", "value_counts"]


def filter(data, mask):  # noqa: A001  (pyarrow.compute.filter's name)
    """The rows of ``data`` (an Array, ChunkedArray, RecordBatch or Table) where ``mask`` is
    true: a boolean array (chunked or not) as long as ``data`` or, for a batch or table, an
    Expression; nulls drop their row."""
    if isinstance(data, Table):
        return filter_table(data, mask)
    if isinstance(data, RecordBatch):
        if isinstance(mask, Expression):
            check_expression(mask, schema_types(data.schema))
            keep = selection_mask(mask, batch_columns(data), data.num_rows)
        else:
            keep = selection_of(mask, data.num_rows)
        return filter_batch(data, keep, schema=data.schema)
    if isinstance(data, Array):
        if isinstance(mask, Expression):
            raise ArrowInvalid("filter of an Array takes a boolean mask, not an Expression")
        return filter_array(data, selection_of(mask, len(data)))
    if isinstance(data, ChunkedArray):
        if isinstance(mask, Expression):
            raise ArrowInvalid("filter of a ChunkedArray takes a boolean mask, not an "
                               "Expression")
        return data.filter(mask)
    raise ArrowInvalid(f"filter: expected an arrowmm Array, ChunkedArray, RecordBatch or "
                       f"Table, got {type(data).__name__}")


def take(data, indices):
    """The rows of ``data`` (an Array, ChunkedArray, RecordBatch or Table) at ``indices``."""
    if isinstance(data, Table):
        return take_table(data, indices)
    if isinstance(data, RecordBatch):
        return take_batch(data, indices)
    if isinstance(data, Array):
        return take_array(data, indices)
    if isinstance(data, ChunkedArray):
        return data.take(indices)
    raise ArrowInvalid(f"take: expected an arrowmm Array, ChunkedArray, RecordBatch or Table, "
                       f"got {type(data).__name__}")


def sort_indices(data, sort_keys=(), *, null_placement=None) -> Array:  # noqa: F811
    """The positions that sort ``data`` as a uint64 array: pyarrow's ``sort_indices``, stable,
    nulls last unless ``at_start``.  A Table or RecordBatch sorts by ``sort_keys``, a list of
    ``(name, order)`` or ``(name, order, null_placement)``; an Array or ChunkedArray by the
    order (and placement) of its first key, if any (its name is not looked up, as pyarrow's),
    else ascending (a struct array's keys name its fields, as pyarrow's do).  ``null_placement``
    overrides every key's."""
    if isinstance(data, (Array, ChunkedArray)):
        if isinstance(sort_keys, str):  # (an order alone is no key: pyarrow refuses it too)
            raise ArrowInvalid(f"sort_indices: sort_keys {sort_keys!r}: expected a list of "
                               f"(name, order) pairs, such as [('x', 'descending')]")
        keys = _keys(sort_keys, null_placement) if sort_keys else \
            _keys([("values", "ascending")], null_placement)
        if isinstance(data, ChunkedArray):
            if not data.chunks:
                return _uint64(np.zeros(0, dtype=np.uint64))
            data = whole(data.chunks)
        if sort_keys and isinstance(data.type, _t.StructType):  # (keys name its fields)
            fields = key_columns([f.name for f in data.type], keys)
            return _uint64(_sort_indices([data.field(i) for i in fields], keys,
                                         data.logical_validity()).astype(np.uint64))
        columns = [data]
        keys = keys[:1]
    elif isinstance(data, (Table, RecordBatch)):
        keys = _keys(sort_keys, null_placement)
        ks = key_columns(data.schema.names, keys)
        batches = data.to_batches() if isinstance(data, Table) else [data]
        if not batches:
            return _uint64(np.zeros(0, dtype=np.uint64))
        columns = [whole([b.storage_column(k) for b in batches]) for k in ks]
    else:
        raise ArrowInvalid(f"sort_indices: expected an arrowmm Array, ChunkedArray, "
                           f"RecordBatch or Table, got {type(data).__name__}")
    table = isinstance(data, (Table, RecordBatch))  # (a key type that does not sort: TypeError)
    return _uint64(_sort_indices(columns, keys, table=table).astype(np.uint64))


def _keys(keys, null_placement):
    return sort_keys(list(keys) if not isinstance(keys, str) else keys, null_placement)


def _uint64(values: np.ndarray) -> Array:
    return make_array(_t.uint64(), len(values), [None, copied_view(values, "sorted")],
                      null_count=0)
