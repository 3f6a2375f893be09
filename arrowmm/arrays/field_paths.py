"""A field inside struct columns as a column of its own (``columns=["s.a"]``).

A struct's child is read zero-copy; where the struct itself has null rows, those rows become
null in the child too (as pyarrow's ``StructArray.flatten`` and polars' ``unnest`` give them),
which takes a new validity bitmap: the one copy, of one bit per row.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import types as t
from .._core._bitmap import pack_bitmap
from .array import Array, StructArray, make_array
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .provenance import copied_view

__all__ = ["struct_field_path", "nested_field"]


def nested_field(field: t.Field, path: Sequence[str], name: str) -> t.Field:
    """The Field of ``path`` inside struct ``field``, named ``name``; nullable when any struct
    on the way is."""
    nullable = field.nullable
    for step in path:
        if not isinstance(field.storage_type, t.StructType):
            raise ArrowInvalid(f"columns: {name!r}: {field.name!r} is {field.type}, not a struct "
                               f"with a field {step!r}")
        hits = [f for f in field.storage_type.fields if f.name == step]
        if len(hits) != 1:
            raise ArrowInvalid(f"columns: {name!r}: struct {field.name!r} has "
                               f"{len(hits) or 'no'} field(s) named {step!r}; its fields are "
                               f"{[f.name for f in field.storage_type.fields]}")
        field = hits[0]
        nullable = nullable or field.nullable
    return t.Field(name, field.type, nullable, field.metadata)


def struct_field_path(array: Array, path: Sequence[str]) -> Array:
    """The child at ``path`` of struct ``array``, null where any struct on the way is."""
    for step in path:
        if not isinstance(array, StructArray):
            raise ArrowInvalid(f"{array.type} has no field {step!r}: not a struct")
        child = array.field(step)
        array = child if not array.null_count else _with_parent_nulls(child, array.is_valid())
    return array


def _with_parent_nulls(child: Array, parent_valid: np.ndarray) -> Array:
    dtype = child.type
    if isinstance(dtype, t.NullType):
        return child
    if isinstance(dtype, (t.UnionType, t.RunEndEncodedType)):
        raise ArrowNotImplementedError(f"a {dtype} field of a struct with null rows: its type "
                                       f"has no validity bitmap to carry the struct's nulls")
    valid = child.is_valid() & parent_valid
    if child.null_count == len(child) - int(valid.sum()):
        return child  # (the struct's nulls are already the child's)
    bits = np.zeros(child.offset + len(child), dtype=bool)
    bits[child.offset:] = valid
    bitmap, _ = pack_bitmap(bits)
    every = child.buffers()
    own = every[:len(every) - sum(len(c.buffers()) for c in child.children)]
    return make_array(dtype, len(child), [copied_view(bitmap, "struct nulls")] + own[1:],
                      child.children, len(child) - int(valid.sum()), child.offset,
                      child.dictionary)
