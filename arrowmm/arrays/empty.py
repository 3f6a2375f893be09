"""Arrays of zero rows of any type, built from the type alone.

Why here: a frame or table of zero batches still has columns, and their types are all there is
to build them from.  The builder (``interop.build``) can do it too, but it sits a layer above
the arrays, and an empty array needs no Python values: only the layout of its type.
"""
from __future__ import annotations

from .. import types as t
from .._core._region import as_view, empty_view
from .array import Array, make_array
from .extension import wrap

__all__ = ["empty_array"]


def empty_array(dtype: t.DataType) -> Array:
    """An array of ``dtype`` with no rows (and no nulls).

    Offsets buffers hold the one offset (0) a zero-length array has, so consumers that read
    ``offsets[0]`` find it; every other buffer is empty.  An extension type gives its array
    class over empty storage; a dictionary type an empty dictionary of its value type.
    """
    if isinstance(dtype, t.ExtensionType):
        return wrap(dtype, empty_array(dtype.storage_type))
    children = [empty_array(f.type) for f in dtype.children] \
        if not isinstance(dtype, t.DictionaryType) else []
    dictionary = empty_array(dtype.value_type) if isinstance(dtype, t.DictionaryType) else None
    buffers = [None] * dtype.buffer_count
    if isinstance(dtype, t.UnionType):  # (no validity: type ids, then dense offsets)
        buffers = [empty_view() for _ in buffers]
    elif isinstance(dtype, (t.BinaryType, t.ListType, t.MapType)):
        buffers[1] = as_view(bytes(dtype.offset_dtype.itemsize), description="empty offsets")
    return make_array(dtype, 0, buffers, children, 0, 0, dictionary)
