"""Columns as users hand them to tables and batches (pyarrow's habits): arrays, chunked arrays,
Arrow producers, Python lists and numpy arrays, with a field given as a ``Field`` or a name.

Lists and numpy arrays are built by ``arrowmm.array`` (``interop``, above this layer), through
the ``build_array`` hook of ``arrowmm.hooks``.
"""
from __future__ import annotations

import operator
from typing import List, Optional, Sequence

from .. import hooks, types as t
from .array import Array, imported_array
from .chunked import ChunkedArray
from ..errors import ArrowInvalid

__all__ = ["as_array", "as_chunked", "as_field", "split_like", "chunk_bounds",
           "column_index"]

def _built(obj, type_: Optional[t.DataType], where: str) -> Array:
    return hooks.build_array(obj, type_)


def as_chunked(obj, type_: Optional[t.DataType] = None, where: str = "column") -> ChunkedArray:
    """``obj`` as a ``ChunkedArray``: a chunked array or array as it is, an Arrow producer
    imported zero-copy, a list or numpy array built (of ``type_`` when given).  A column of
    another type than ``type_`` is cast to it (safely: a value that does not fit raises
    ``ArrowInvalid``), as pyarrow's ``from_pydict(schema=...)`` casts."""
    if isinstance(obj, ChunkedArray):
        col = obj
    elif isinstance(obj, Array):
        col = ChunkedArray([obj], obj.type)
    elif hasattr(obj, "__arrow_c_array__"):
        arr = imported_array(obj)
        col = ChunkedArray([arr], arr.type)
    elif hasattr(obj, "__arrow_c_stream__") and hasattr(obj, "num_chunks"):  # (a chunked array)
        return as_chunked(ChunkedArray([imported_array(c) for c in obj.chunks], None)
                          if obj.num_chunks else [], type_, where)
    elif isinstance(obj, (str, bytes, dict)) or obj is None or \
            not hasattr(obj, "__len__") and not hasattr(obj, "__iter__"):
        raise TypeError(f"{where}: expected an array, a chunked array, a list or a numpy array, "
                        f"got {type(obj).__name__}")
    else:
        arr = _built(obj, type_, where)
        col = ChunkedArray([arr], arr.type)
    if type_ is not None and col.type != type_:  # (cast, safely, as pyarrow's asarray does)
        col = col.cast(type_)
    return col


def as_array(obj, type_: Optional[t.DataType] = None, where: str = "column") -> Array:
    """``obj`` as one ``Array`` (a chunked array's chunks combined: a copy unless one)."""
    if isinstance(obj, Array) and (type_ is None or obj.type == type_):
        return obj
    col = as_chunked(obj, type_, where)
    if not col.num_chunks:
        return _built([], col.type, where)
    return col.combine_chunks()


def as_field(field_, column_type: t.DataType, where: str, mismatch: type = ArrowInvalid
             ) -> t.Field:
    """``field_`` (a ``Field`` or a name) for a column of ``column_type``; a field of another
    type raises ``mismatch`` (pyarrow's tables raise ``ArrowInvalid``, its batches
    ``ArrowTypeError``), anything else ``TypeError``."""
    if isinstance(field_, t.Field):
        if field_.type != column_type:
            raise mismatch(f"Field type did not match data type: {where}: field "
                               f"{field_.name!r} is {field_.type} but its column is "
                               f"{column_type}")
        return field_
    if isinstance(field_, str):
        return t.Field(field_, column_type)
    raise TypeError(f"{where}: a field is a Field or a name (str), got {type(field_).__name__}")


def column_index(i, num_columns: int, where: str, what: str, insert: bool = False) -> int:
    """``i`` as a column index in ``[0, num_columns)`` (``insert``: ``[0, num_columns]``);
    pyarrow's ``ArrowInvalid`` out of range (it takes no negative index either)."""
    try:
        k = operator.index(i)
    except TypeError:
        raise TypeError(f"{where}: a column index is an integer, got {type(i).__name__}") from None
    if not 0 <= k < num_columns + insert:
        raise ArrowInvalid(f"Invalid column index to {what} field: {where}({i}) of a table of "
                           f"{num_columns} columns")
    return k


def chunk_bounds(columns: Sequence[ChunkedArray]) -> List[int]:
    """Every row where a chunk of one of ``columns`` (all of one length) starts, and the end:
    the cuts that give each batch one piece of every column."""
    cuts = set()
    for c in columns:
        at = 0
        for chunk in c.chunks:
            cuts.add(at)
            at += len(chunk)
        cuts.add(at)
    return sorted(cuts)


def split_like(column: ChunkedArray, bounds: Sequence[int]) -> List[Array]:
    """``column`` cut at ``bounds`` (zero-copy slices): one array per ``[bounds[k],
    bounds[k + 1])``."""
    out = []
    for start, stop in zip(bounds, bounds[1:]):
        piece = column.slice(start, stop - start)
        chunks = [c for c in piece.chunks if len(c)] or piece.chunks[:1]
        out.append(chunks[0] if len(chunks) == 1 else ChunkedArray(chunks).combine_chunks())
    return out
