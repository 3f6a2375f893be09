"""``arrowmm.nulls``, ``repeat``, ``concat_arrays`` and ``concat_batches``: arrays and batches
made as pyarrow's top-level functions of those names make them (the pyarrow habits users
bring), with pyarrow's errors; and ``Schema.empty_table`` (a hook: tables sit above types)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import hooks, types as t
from ..arrays.array import Array
from ..arrays.batch import RecordBatch
from ..arrays.concat import concat_arrays as _joined
from ..arrays.empty import empty_array
from ..arrays.table import Table
from ..errors import ArrowInvalid
from .build import array

__all__ = ["nulls", "repeat", "concat_arrays", "concat_batches"]


def _checked_size(size, what: str) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{what}: size must be an int, got {type(size).__name__}")
    if size < 0:
        raise ArrowInvalid(f"{what}: size must be at least 0, got {size}")
    return int(size)


def _repeated(one: Array, size: int) -> Array:
    """``one`` (an array of one value) repeated ``size`` times."""
    return one.take(np.zeros(size, dtype=np.int64))


def nulls(size: int, type=None) -> Array:  # noqa: A002  (pyarrow's name)
    """An array of ``size`` nulls of ``type`` (a type or its name; ``null()`` by default), as
    ``pyarrow.nulls``."""
    size = _checked_size(size, "nulls")
    dtype = t.null() if type is None else t.ensure_type(type)
    return _repeated(array([None], dtype), size)


def repeat(value, size: int) -> Array:
    """An array of ``value`` (a Python value, typed as ``arrowmm.array`` would type it)
    repeated ``size`` times, as ``pyarrow.repeat``."""
    size = _checked_size(size, "repeat")
    return _repeated(array([value]), size)


def concat_arrays(arrays: Sequence[Array]) -> Array:
    """One array of the values of ``arrays``, in order, as ``pyarrow.concat_arrays``: the
    arrays must be of one type (``ArrowInvalid`` otherwise); the values are copied."""
    arrays = list(arrays)
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"Iterable should contain Array objects, got {type(a)} instead")
    if not arrays:
        raise ArrowInvalid("Must pass at least one array")
    for a in arrays[1:]:
        if a.type != arrays[0].type:
            raise ArrowInvalid(f"arrays to be concatenated must be identically typed, but "
                               f"{arrays[0].type} and {a.type} were encountered.")
    return _joined(arrays)


def concat_batches(batches: Sequence[RecordBatch]) -> RecordBatch:
    """One record batch of the rows of ``batches``, in order, as ``pyarrow.concat_batches``:
    their schemas must be equal (metadata aside; the first batch's is kept)."""
    batches = list(batches)
    for b in batches:
        if not isinstance(b, RecordBatch):
            raise TypeError(f"Iterable should contain RecordBatch objects, got {type(b)} "
                            f"instead")
    if not batches:
        raise ArrowInvalid("Must pass at least one recordbatch")
    schema = batches[0].schema
    for k, b in enumerate(batches[1:], 1):
        if not b.schema.equals(schema):
            raise ArrowInvalid(f"Schema of RecordBatch index {k} is {b.schema}, which does not "
                               f"match index 0 recordbatch schema: {schema}")
    if len(batches) == 1:
        return batches[0]
    columns = [_joined([b.column(k) for b in batches]) for k in range(len(schema))]
    return RecordBatch.from_arrays(columns, schema=schema)


def empty_table(schema: t.Schema) -> Table:
    """``Schema.empty_table``: one batch of no rows, a chunk of length 0 per column, as
    pyarrow's."""
    columns = [empty_array(f.type) for f in schema]
    return Table(schema, [RecordBatch.from_arrays(columns, schema=schema)])


hooks.fill("empty_table", empty_table)
