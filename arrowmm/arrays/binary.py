"""The variable-width binary and string arrays: offsets plus data (``BinaryArray``, plain and
large) and 16-byte views (``BinaryViewArray``); and the offsets access lists share."""
from __future__ import annotations

import numpy as np

from .._core._offsets import check_binary_views, check_offsets
from .._core._pylist import (binaries_to_list, strings_to_list, strings_to_objects_dedup,
                             views_to_list)
from .._core._utf8 import check_utf8_offsets
from ..errors import ArrowInvalid
from .base import Array, need_bytes, typed_view

__all__ = ["OffsetsMixin", "BinaryArray", "BinaryViewArray"]

_ZERO_OFFSET = {4: np.zeros(1, dtype="<i4"), 8: np.zeros(1, dtype="<i8")}


class OffsetsMixin:
    """Arrays with an offsets buffer: binary, string, list, map (32- or 64-bit offsets)."""

    __slots__ = ()

    def value_offsets(self) -> np.ndarray:
        """The ``length + 1`` offsets of this (possibly sliced) array, a read-only view."""
        buf = self._buffers[1]
        dtype = self.type.offset_dtype
        if buf.size == 0 and self.length == 0:
            return _ZERO_OFFSET[dtype.itemsize]
        return typed_view(buf, dtype, self.offset, self.length + 1)

    @property
    def offsets(self) -> np.ndarray:
        """The ``length + 1`` offsets (int32 or int64), a read-only numpy view of the mapping.

        They index ``values`` as stored: a slice's offsets are not rebased to 0.
        """
        return self.value_offsets()

    def _check_offsets_cheap(self, path, data_size, what):
        buf = self._buffers[1]
        width = self.type.offset_dtype.itemsize
        if self.length == 0 and buf.size == 0:
            return
        need_bytes(path, "offsets", buf.size, (self.offset + self.length + 1) * width)
        offs = self.value_offsets()
        first, last = int(offs[0]), int(offs[-1])
        if first < 0 or last < first or last > data_size:
            raise ArrowInvalid(f"{path}: offsets run from {first} to {last}, outside [0, {data_size}] "
                               f"of the {what}")


class BinaryArray(OffsetsMixin, Array):
    """binary, string, large_binary, large_string."""

    __slots__ = ()

    @property
    def values(self) -> np.ndarray:
        """The whole data buffer as a read-only uint8 numpy view (value ``i`` is
        ``values[offsets[i]:offsets[i + 1]]``)."""
        return typed_view(self._buffers[2], np.uint8, 0, self._buffers[2].size)

    def _check_structure(self, path):
        super()._check_structure(path)
        self._check_offsets_cheap(path, self._buffers[2].size, f"{self._buffers[2].size}-byte data")

    def _check_full(self, path):
        offs = self.value_offsets()
        check_offsets(offs, self.length, self._buffers[2].size, path)
        if self.type.utf8:
            check_utf8_offsets(self._buffers[2], offs, self.length, None, 0, path)

    def to_numpy(self, zero_copy_only=True, writable=False):
        if zero_copy_only:
            raise ArrowInvalid(f"{self.type} values are variable-length: a numpy view is impossible")
        out = np.empty(self.length, dtype=object)
        out[:] = self.to_pylist()
        return out

    def to_objects(self, deduplicate: bool = True) -> np.ndarray:
        """The values as a numpy object array (None at nulls), equal values sharing one
        ``str``/``bytes`` object when ``deduplicate`` (pyarrow's ``deduplicate_objects``:
        a column of few distinct values costs memory and time for those only)."""
        if not deduplicate:
            return self.to_numpy(zero_copy_only=False)
        return strings_to_objects_dedup(self._buffers[2], self.value_offsets(), self.length,
                                        self.validity if self.null_count else None, self.offset,
                                        self.type.utf8)

    def _pylist(self, temporal):
        offs = self.value_offsets()
        conv = strings_to_list if self.type.utf8 else binaries_to_list
        return conv(self._buffers[2], offs, self.length, self.validity if self.null_count else None,
                    self.offset)


class BinaryViewArray(Array):
    """binary_view and string_view: 16-byte views, long values in variadic data buffers."""

    __slots__ = ()

    def _check_structure(self, path):
        super()._check_structure(path)
        need_bytes(path, "views", self._buffers[1].size, (self.offset + self.length) * 16)

    def _views(self):
        return self._buffers[1].slice(self.offset * 16, self.length * 16)

    def _check_full(self, path):
        check_binary_views(self._views(), self.length, self.validity if self.null_count else None,
                           self.offset, list(self._buffers[2:]), self.type.utf8, path)

    to_numpy = BinaryArray.to_numpy

    def _pylist(self, temporal):
        return views_to_list(self._views(), self.length, self.validity if self.null_count else None,
                             self.offset, list(self._buffers[2:]), self.type.utf8)
