"""The encoded types: dictionary-encoded (integer indices into a dictionary of values) and
run-end-encoded (run ends plus one value per run)."""
from __future__ import annotations

from ..errors import ArrowInvalid
from .base import DataType, cached_compare_key
from .fields import as_field, child_key
from .primitive import IntType

__all__ = ["DictionaryType", "RunEndEncodedType"]


class DictionaryType(DataType):
    """Values stored once in a dictionary and referenced by integer indices
    (``dictionary(index_type, value_type, ordered=False)``, as ``pyarrow.dictionary``)."""
    __slots__ = ()
    buffer_count = 2

    def __init__(self, index_type, value_type, ordered: bool = False):
        if not isinstance(index_type, IntType):
            raise ArrowInvalid(f"dictionary index type must be an integer type, got {index_type}")
        if not isinstance(value_type, DataType):
            raise ArrowInvalid(f"dictionary value type must be a DataType, got {value_type!r}")
        super().__init__(index_type, value_type, bool(ordered))

    index_type = property(lambda self: self._key[1])
    value_type = property(lambda self: self._key[2])
    ordered = property(lambda self: self._key[3])
    byte_width = property(lambda self: self._key[1].byte_width)
    numpy_dtype = property(lambda self: self._key[1].numpy_dtype)

    def __str__(self):
        return (f"dictionary<values={self.value_type}, indices={self.index_type}, "
                f"ordered={int(self.ordered)}>")


class RunEndEncodedType(DataType):
    """Runs of equal values stored once each, with the row at which each run ends
    (``run_end_encoded(run_end_type, value_type)``; run ends are int16, int32 or int64)."""
    __slots__ = ()
    buffer_count = 0
    num_buffers = 1  # (pyarrow's count: the layout's absent validity buffer)

    def __init__(self, run_end_type, value_type):
        run_ends = as_field(run_end_type, "run_ends")
        if not (isinstance(run_ends.storage_type, IntType) and run_ends.storage_type.signed
                and run_ends.storage_type.bit_width in (16, 32, 64)):
            raise ArrowInvalid(f"run ends must be int16, int32 or int64, got {run_ends.type}")
        if run_ends.nullable:
            run_ends = run_ends.with_nullable(False)
        super().__init__(run_ends, as_field(value_type, "values"))

    run_end_field = property(lambda self: self._key[1])
    value_field = property(lambda self: self._key[2])
    run_end_type = property(lambda self: self._key[1].storage_type)
    value_type = property(lambda self: self._key[2].type)  # (layout: value_field.storage_type)
    children = property(lambda self: self._key[1:3])

    _compare_key = cached_compare_key

    def _compare(self):
        return ("RunEndEncodedType", self.run_end_type, child_key(self._key[2], named=False))

    def __str__(self):
        return f"run_end_encoded<run_ends: {self.run_end_type}, values: {self.value_field.type}>"
