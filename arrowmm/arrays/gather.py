"""One column of many IPC record batches as one Array, without an Array per batch.

Why: a consumer that takes every row of a column (``to_pandas``) over a file of many small
batches paid, per batch and column, for an Array, its BufferViews and their checks, and
then for concatenating them: about 20 us each, ten times pyarrow's cost on 5,000 batches of
10 rows.  ``gathered_column`` reads the column's field node and buffers from each batch's
message in C (``_core._gather``) and copies them into one set of buffers.  Fixed-width,
boolean and binary/string columns of uncompressed batches, and lists of those, go this way; anything else (or
any part that fails a check) returns None, and the caller takes the batches one at a time,
where the loader names what is wrong.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .. import types as t
from .._core import _gather
from .._core._region import as_view
from .array import Array, make_array

__all__ = ["MIN_BATCHES", "gather_bases", "gathered_column"]

#: Below this many batches the per-batch Arrays cost little: the gather is not tried.
MIN_BATCHES = 16


def _layout(dtype: t.DataType, nested: bool = True) -> Optional[tuple]:
    """``(kind, width, child kind, child width)`` of a type ``_core._gather`` copies, or
    None; a list only of a plain value type (``nested``: lists are allowed here)."""
    kind = type(dtype)
    if nested and kind is t.ListType:
        value = dtype.value_field
        inner = _layout(value.type, False) if value.type is value.storage_type else None
        if inner is None:
            return None
        return _gather.LIST, dtype.offset_dtype.itemsize, inner[0], inner[1]
    if kind is t.BoolType:
        return _gather.BOOL, 0, -1, 0
    if isinstance(dtype, t.FixedWidthType):
        return _gather.FIXED, dtype.byte_width, -1, 0
    if kind is t.BinaryType:
        return _gather.BINARY, dtype.offset_dtype.itemsize, -1, 0
    return None


def gather_bases(batches: Sequence) -> Optional[list]:
    """Each batch's ``gather_base()`` (where its columns lie in its IPC message), or None
    when there are few batches or one is not a whole uncompressed IPC batch."""
    if len(batches) < MIN_BATCHES:
        return None
    bases = []
    for b in batches:
        base = b.gather_base()
        if base is None:
            return None
        bases.append(base)
    return bases


def gathered_column(batches: Sequence, k: int, bases: Optional[list] = None) -> Optional[Array]:
    """Column ``k`` of ``batches`` (RecordBatches of one schema) as one Array, or None when
    some batch is not a whole uncompressed IPC batch or the column's type is not a plain
    fixed-width, boolean or binary/string one, or a list of those (extension and dictionary
    columns included).  ``bases``: ``gather_bases(batches)``, when several columns are
    gathered."""
    field = batches[0].schema.field(k) if batches else None
    if field is None or field.type is not field.storage_type:
        return None  # (an extension column: its own Array class)
    layout = _layout(field.type)
    if layout is None:
        return None
    if bases is None:
        bases = gather_bases(batches)
        if bases is None:
            return None
    got = _gather.gather(bases, k, *layout)
    if got is None:
        return None
    return _array(field.type, got, f"column {field.name!r} of {len(batches)} batches")


def _array(dtype: t.DataType, got: tuple, what: str) -> Array:
    """The Array of ``dtype`` over what ``_gather.gather`` returned."""
    length, nulls, validity, values, data = got
    buffers = [None if validity is None else as_view(validity, description=what),
               as_view(values.view("u1"), description=what)]
    children = ()
    if isinstance(data, tuple):  # (a list: its values' own buffers)
        children = (_array(dtype.value_field.type, data, what + ", values"),)
    elif data is not None:
        buffers.append(as_view(data, description=what))
    return make_array(dtype, length, buffers, children, null_count=nulls)
