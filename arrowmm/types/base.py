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
