"""The base of every Arrow type: frozen, hashable, compared by a key, printed as pyarrow
prints it, and exported through the C data interface.

Also the fixed-width base (one validity and one values buffer) and the little-endian numpy
dtypes the layouts read with.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from .. import hooks

__all__ = ["DataType", "FixedWidthType", "native_dtype", "cached_compare_key"]


class DataType:
    """Base of every Arrow type.  Subclasses set ``_key``: their parameters, which equality
    compares (nested types compare their children as pyarrow does: see ``_compare``)."""

    __slots__ = ("_key", "_cmp")
    #: number of buffers one node of this type has in an IPC record batch (V5)
    buffer_count = 0
    #: bytes per value for fixed-width types, else None
    byte_width: Optional[int] = None
    #: numpy dtype of the values buffer for fixed-width types, else None
    numpy_dtype: Optional[np.dtype] = None

    def __init__(self, *key):
        object.__setattr__(self, "_key", (type(self).__name__,) + key)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return isinstance(other, DataType) and (
            self is other or self._compare_key() == other._compare_key())

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._compare_key())

    def _compare_key(self):
        """What ``==`` and ``hash`` use: ``_compare()`` (nested types keep theirs made once,
        ``cached_compare_key``)."""
        return self._key

    def _compare(self):
        """What ``==`` and ``hash`` compare: the key.  Nested types override it to compare their
        children as pyarrow's ``==`` does (``check_metadata=False``): by type and nullability,
        by name where the name is part of the type (struct and union children, not list or
        map children), never by the children's custom metadata."""
        return self._key

    def __repr__(self):
        return f"arrowmm.DataType({self})"

    def __reduce__(self):
        return (_rebuild_type, (str(self), type(self), self._args()))

    def _args(self):
        return self._key[1:]

    @classmethod
    def _unpickle(cls, *args):
        """The type a pickle's class and ``_args()`` name (a class whose parameters changed
        overrides it, so that older pickles still load)."""
        return cls(*args)

    def __arrow_c_schema__(self):
        return hooks.export_c_schema(self)

    @property
    def children(self) -> tuple:
        """Child fields of nested types (empty for the rest)."""
        return ()

    @property
    def id(self) -> str:
        """The type's class name (``"IntType"``, ``"ListType"``, ...): which kind of type it is."""
        return type(self).__name__

    # pyarrow's ``DataType`` API, for the habits users bring

    @property
    def num_fields(self) -> int:
        """How many child fields the type has, as pyarrow counts them: a struct's or union's
        fields, a list's or map's one, a run-end encoded type's two; none for the rest (a
        dictionary and an extension type included)."""
        return len(self.children)

    def field(self, i: int):
        """The child field at index ``i`` (negative from the end), as ``pyarrow.DataType.field``:
        ``IndexError`` past the children (a flat type has none); structs and unions also take
        a name."""
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"Expected int index, got type '{type(i)}'")
        kids = self.children
        if not -len(kids) <= i < len(kids):
            raise IndexError(f"field index {i} out of range for {str(self)!r}, which has "
                             f"{len(kids)} child field(s)")
        return kids[i]

    @property
    def num_buffers(self) -> int:
        """The buffers of the type's layout, as pyarrow counts them (validity included, a
        view type's variadic data buffers not): what the C data interface passes."""
        return self.buffer_count

    @property
    def has_variadic_buffers(self) -> bool:
        """Whether arrays of the type carry a variable number of data buffers (the view
        types)."""
        return False

    @property
    def bit_width(self) -> int:
        """Bits per value of a fixed-width type (1 for booleans); ``ValueError`` for the
        others, as pyarrow."""
        if self.byte_width is None:
            raise ValueError(f"Non-fixed width type: {self}")
        return self.byte_width * 8

    def equals(self, other, check_metadata: bool = False) -> bool:
        """Whether ``other`` (a type, or a type's name such as ``"int64"``) is the same type;
        ``check_metadata`` also compares the custom metadata of child fields
        (``pyarrow.DataType.equals``)."""
        if isinstance(other, str):
            from .aliases import type_for_alias
            other = type_for_alias(other)
        if not isinstance(other, DataType):
            raise TypeError(f"DataType expected, got {type(other)}")
        if self != other:
            return False
        if not check_metadata:
            return True
        mine, theirs = self.children, other.children
        return all(a.equals(b, check_metadata=True) for a, b in zip(mine, theirs))

    def to_pandas_dtype(self):
        """The numpy dtype (or pandas extension dtype, for zoned timestamps) pandas gives a
        column of this type, as ``pyarrow.DataType.to_pandas_dtype``;
        ``NotImplementedError`` where pyarrow has none."""
        from .pandas_dtypes import pandas_dtype
        return pandas_dtype(self)


def _rebuild_type(_text, cls, args):
    return cls._unpickle(*args)


@lru_cache(maxsize=None)
def native_dtype(dtype: str) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


class FixedWidthType(DataType):
    __slots__ = ()
    buffer_count = 2


def cached_compare_key(self) -> tuple:
    """A nested type's ``_compare_key``: its ``_compare()``, made once (the children's tuple
    costs more than a comparison).  Safe to keep: a type is immutable, and so is what its
    child fields resolve to once read (a field looks its extension type up once)."""
    try:
        return self._cmp
    except AttributeError:
        key = self._compare()
        object.__setattr__(self, "_cmp", key)  # (threads may both make it: equal keys)
        return key
