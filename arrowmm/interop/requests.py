"""The ``requested_schema`` rules of the Arrow PyCapsule interface, shared by every exporter.

The same data under other names, nullability or metadata is served as asked (the
buffers are unchanged); a different physical layout is refused with
``ArrowNotImplementedError`` (arrowmm never casts); a request that does not describe
the same columns is ``ArrowInvalid``.
"""
from __future__ import annotations

from typing import Optional

from .. import types as t
from ..arrays.array import Array
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["layout_key", "requested_array_field", "requested_schema_for", "check_request_nulls"]


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


def _same_layout(ours: t.DataType, wanted: t.DataType, where: str) -> None:
    if layout_key(ours) != layout_key(wanted):
        raise ArrowNotImplementedError(
            f"{where}: cannot export {ours} as the requested {wanted}: arrowmm exports its data as "
            f"it is and does not cast (request None, or the schema __arrow_c_schema__ gives)")


def requested_array_field(dtype: t.DataType, wanted: Optional[t.Field]) -> t.Field:
    """The field an array of ``dtype`` exports as, given the requested field (or None)."""
    if wanted is None:
        return t.Field("", dtype)
    _same_layout(dtype, wanted.type, "array")
    return wanted


def requested_schema_for(schema: t.Schema, wanted: Optional[t.Field]) -> t.Schema:
    """The schema batches of ``schema`` export as, given the requested struct field (or None).

    The request must name the same columns in the same order (ArrowInvalid otherwise, as
    pyarrow raises); each column must have the same layout.
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
    for ours, theirs in zip(schema, fields):
        _same_layout(ours.storage_type, theirs.storage_type, f"column {ours.name!r}")
    return t.Schema(fields, wanted.metadata, schema.endianness)


def _check_nulls(field: t.Field, array: Array, where: str) -> None:
    if not field.nullable and array.null_count:
        raise ArrowInvalid(f"{where}: the requested schema declares {field.name or 'the array'!r} "
                           f"non-nullable but it holds {array.null_count} null(s)")
    for child_field, child in zip(field.storage_type.children, array.children):
        _check_nulls(child_field, child, f"{where}.{child_field.name}")


def check_request_nulls(fields, arrays, where: str) -> None:
    """ArrowInvalid if a field the request declares non-nullable has nulls (children included:
    a child's null count covers all of its values, so a null outside a slice counts too)."""
    for f, a in zip(fields, arrays):
        _check_nulls(f, a, where)


# -- streams -------------------------------------------------------------------------------
