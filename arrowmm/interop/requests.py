"""The ``requested_schema`` rules of the Arrow PyCapsule interface, shared by every exporter.

The same data under other names, nullability or metadata is served as asked (the
buffers are unchanged); another type is served by casting the data to it as pyarrow does
(``Array.cast``, safe: a value that does not fit raises, a pair pyarrow does not cast raises
``ArrowNotImplementedError``); a request that does not describe the same columns is
``ArrowInvalid``.
"""
from __future__ import annotations

from typing import Optional

from .. import types as t
from ..arrays.array import Array
from ..arrays.batch import RecordBatch
from ..arrays.nested import FixedSizeListArray, ListArray, StructArray
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .cast import cast_array

__all__ = ["layout_key", "requested_array_field", "requested_schema_for", "check_request_nulls",
           "served_array", "served_batch"]


def layout_key(item):
    """A type's identity with every field reduced to its type: names, nullability and
    metadata of child fields take no part (they do not change the buffers)."""
    if isinstance(item, t.Field):
        return layout_key(item.storage_type)
    if isinstance(item, t.ExtensionType):
        return layout_key(item.storage_type)
    if isinstance(item, t.DataType):
        return tuple(layout_key(k) for k in item._key)
    if isinstance(item, tuple):
        return tuple(layout_key(k) for k in item)
    return item


def requested_array_field(dtype: t.DataType, wanted: Optional[t.Field]) -> t.Field:
    """The field an array of ``dtype`` exports as, given the requested field (or None)."""
    if wanted is None:
        return t.Field("", dtype)
    return wanted


def served_array(array: Array, field: t.Field, where: str) -> Array:
    """``array`` laid out as the requested ``field``: itself when the layout is the same, else
    cast to the field's type (pyarrow's errors, ``where`` named)."""
    if layout_key(array.type) == layout_key(field.type):
        return array
    try:
        return cast_array(array, field.storage_type)
    except (ArrowInvalid, ArrowNotImplementedError) as exc:
        raise type(exc)(f"{where}: cannot serve {array.type} as the requested {field.type}: "
                        f"{exc}") from None


def served_batch(batch: RecordBatch, schema: t.Schema) -> RecordBatch:
    """``batch`` with the requested ``schema``'s layouts: itself when every column has them,
    else a batch of its columns cast (``served_array``)."""
    columns = batch.storage_columns
    if all(layout_key(c.type) == layout_key(f.storage_type) for c, f in zip(columns, schema)):
        return batch
    cast = [served_array(c, f, f"column {f.name!r}") for c, f in zip(columns, schema)]
    return RecordBatch.from_arrays(cast, schema=t.Schema([f.with_type(f.storage_type)
                                                          for f in schema], schema.metadata))


def requested_schema_for(schema: t.Schema, wanted: Optional[t.Field]) -> t.Schema:
    """The schema batches of ``schema`` export as, given the requested struct field (or None).

    The request must name the same columns in the same order (ArrowInvalid otherwise, as
    pyarrow raises); a column of another layout is cast when its batches go out.
    """
    if wanted is None:
        return schema
    if not isinstance(wanted.storage_type, t.StructType):
        raise ArrowInvalid(f"the requested schema for record batches must be a struct, got "
                           f"{wanted.type}")
    fields = wanted.storage_type.fields
    if [f.name for f in fields] != schema.names:
        raise ArrowInvalid(f"the requested schema names columns {[f.name for f in fields]}, the "
                           f"data has {schema.names}: a request may change representation, not "
                           f"which columns there are")
    return t.Schema(fields, wanted.metadata, schema.endianness)


def _check_nulls(field: t.Field, array: Array, where: str) -> None:
    if not field.nullable and array.null_count:
        raise ArrowInvalid(f"{where}: the requested schema declares {field.name or 'the array'!r} "
                           f"non-nullable but it holds {array.null_count} null(s)")
    kids = field.storage_type.children
    if all(_nullable_throughout(f) for f in kids):
        return  # (nothing below to check: no need to cut the children)
    for child_field, child in zip(kids, _referenced_children(array)):
        _check_nulls(child_field, child, f"{where}.{child_field.name}")


def _nullable_throughout(field: t.Field) -> bool:
    return field.nullable and all(_nullable_throughout(f) for f in field.storage_type.children)


def _referenced_children(array: Array) -> list:
    """Each child cut to the values the array's valid slots show: a null outside a slice, or
    under a null slot, is no null of the data served (pyarrow serves it).  Children of other
    types (unions, views, run-end encoded) are whole."""
    if isinstance(array, (ListArray, FixedSizeListArray)):  # (and maps)
        return [array.flatten()]
    if isinstance(array, StructArray):
        valid = array.logical_validity()
        columns = array.flatten()
        return columns if valid is None else [c.filter(valid) for c in columns]
    return list(array.children)


def check_request_nulls(fields, arrays, where: str) -> None:
    """ArrowInvalid if a field the request declares non-nullable has nulls where the data
    shows values (children included: their values outside the slice or under a null slot
    are not served)."""
    for f, a in zip(fields, arrays):
        _check_nulls(f, a, where)


# -- streams -------------------------------------------------------------------------------
