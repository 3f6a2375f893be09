"""The flat arrays, as ``types.primitive`` holds their types: null, boolean, numbers and times
(``PrimitiveArray``) and fixed-size binary, each a zero-copy numpy view where the layout allows
one; the variable-width binary and string arrays, offsets plus data (``BinaryArray``, plain and
large) and 16-byte views (``BinaryViewArray``); and the offsets access lists share."""
from __future__ import annotations

import numpy as np

from .. import types as t
from .._core._bitmap import unpack_bitmap
from .._core._offsets import check_binary_views, check_offsets, first_partial_day
from .._core._pylist import (binaries_to_list, fixed_binaries_to_list, strings_to_list,
                             strings_to_objects_dedup, values_to_list, views_to_list)
from .._core._region import BufferView
from .._core._utf8 import check_utf8_offsets
from ..errors import ArrowInvalid
from .base import Array, need_bytes, typed_view, unbacked_rows
from .numpy_compat import object_array, with_nulls
from .scalars import fixed_width_to_list

__all__ = ["NullArray", "BooleanArray", "PrimitiveArray", "FixedSizeBinaryArray",
           "OffsetsMixin", "BinaryArray", "BinaryViewArray", "wide_int_sign"]


class NullArray(Array):
    """An array whose values are all null; it has no buffers."""

    __slots__ = ()

    @property
    def null_count(self):
        return self.length

    @property
    def validity(self):
        """Always None: a null array has no validity bitmap."""
        return None

    def validity_mask(self):
        return np.zeros(unbacked_rows(self.length, "null array"), dtype=bool)

    is_valid = validity_mask

    def logical_validity(self):
        """All False: every value is null."""
        return self.validity_mask()

    def _pylist(self, temporal):
        return [None] * unbacked_rows(self.length, "null array")

    def to_string(self) -> str:
        return f"{self.length} nulls"  # (as pyarrow prints a null array)


def _nulls_agree(a: Array, b: Array):
    """``(agree, valid)``: whether two arrays of one type and length are null in the same
    slots, and where both hold values (None: in every slot).  Both are checked first
    (``_validated``), so damage raises as it does in ``to_pylist`` instead of comparing."""
    mine, theirs = a._validated()._valid_mask(), b._validated()._valid_mask()
    if mine is None and theirs is None:
        return True, None
    if mine is None or theirs is None:
        valid = theirs if mine is None else mine
        return bool(valid.all()), None
    return bool(np.array_equal(mine, theirs)), mine


def _all_where(same: np.ndarray, valid) -> bool:
    return bool(same.all() if valid is None else same[valid].all())


class BooleanArray(Array):
    """Booleans, one bit a value (``to_numpy`` copies: numpy's bools are bytes)."""

    __slots__ = ()

    def _check_structure(self, path):
        super()._check_structure(path)
        need_bytes(path, "bool values", self._buffers[1].size, (self.offset + self.length + 7) // 8)

    def validate(self, full=False, path="array"):
        if full and self._passes_flat((self.offset + self.length + 7) // 8):
            self._fully_valid = True  # (the short path of the full check: see ``_passes_flat``)
            return
        super().validate(full, path)

    def values(self) -> np.ndarray:
        """The stored bits unpacked to a numpy bool array (nulls as whatever is stored)."""
        return unpack_bitmap(self._buffers[1], self.offset, self.length)

    def to_numpy(self, zero_copy_only=True, writable=False):
        if zero_copy_only:
            raise ArrowInvalid("bool arrays are bit-packed: a numpy view is impossible "
                               "(use to_numpy(zero_copy_only=False))")
        values = self.values()
        mask = self._valid_mask()
        if mask is None:
            return values
        out = values.astype(object)
        out[~mask] = None
        return out

    def _pylist(self, temporal):
        bits = self._nulls_bitmap()
        return values_to_list(self.values(), bits, self.offset) if bits is not None else \
            self.values().tolist()

    def _same_values(self, other):
        agree, valid = _nulls_agree(self, other)
        return agree and _all_where(self.values() == other.values(), valid)


_NUMPY_TEMPORAL = {t.DateType: lambda d: "datetime64[D]" if d.unit == "day" else "datetime64[ms]",
                   t.TimestampType: lambda d: f"datetime64[{d.unit}]",
                   t.DurationType: lambda d: f"timedelta64[{d.unit}]"}


_PLAIN_NUMERIC = (t.IntType, t.FloatType)


class PrimitiveArray(Array):
    """Integers, floats, decimals, dates, times, timestamps, durations, intervals."""

    __slots__ = ()

    def _check_structure(self, path):
        super()._check_structure(path)
        need = (self.offset + self.length) * self.type.byte_width
        if self._buffers[1].size < need:  # (the message is formatted only on failure: hot path)
            need_bytes(path, f"{self.type} values", self._buffers[1].size, need)

    def validate(self, full=False, path="array"):
        if full and type(self.type) in _PLAIN_NUMERIC and \
                self._passes_flat((self.offset + self.length) * self.type.byte_width):
            self._fully_valid = True  # (ints and floats have no value ranges: ``_passes_flat``)
            return
        super().validate(full, path)

    def _check_full(self, path):
        """Value ranges pyarrow's ``validate(full=True)`` checks: times within a day, date64 whole
        days, decimals within their precision (null slots are not checked)."""
        dtype = self.type
        values = self.values()
        if isinstance(dtype, t.TimeType):
            limit = 86400 * {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[dtype.unit]
            bad, why = (values < 0) | (values >= limit), f"is outside [0, {limit}) {dtype.unit}"
        elif isinstance(dtype, t.DateType) and dtype.unit == "ms":
            i = first_partial_day(values, self.validity if self.null_count else None, self.offset, path)
            if i >= 0:
                raise ArrowInvalid(f"{path}: value[{i}] = {int(values[i])}: {dtype} value is not "
                                   f"a whole number of days")
            return
        elif isinstance(dtype, t.DecimalType):
            bad, why = _decimal_beyond_precision(values, dtype), "does not fit in its precision"
        else:
            return
        valid = self._valid_mask()
        slots = np.flatnonzero(bad if valid is None else bad & valid)
        if slots.size:
            i = int(slots[0])
            value = _decimal_int(values[i]) if isinstance(dtype, t.DecimalType) else int(values[i])
            raise ArrowInvalid(f"{path}: value[{i}] = {value}: {dtype} value {why}")

    def values(self) -> np.ndarray:
        """The stored values (nulls included as whatever the buffer holds), a read-only view."""
        return typed_view(self._buffers[1], self.type.numpy_dtype, self.offset, self.length)

    def to_numpy(self, zero_copy_only=True, writable=False):
        dtype = self.type
        if self._null_count == 0 and self._buffers[0] is None and not writable and \
                type(dtype) in _PLAIN_NUMERIC:
            nd = dtype.numpy_dtype  # the hot path: a view
            buf = self._buffers[1]
            if type(buf) is BufferView:  # (cut to the values: frombuffer's count and offset
                start = self.offset * nd.itemsize  # arguments cost more than the view itself)
                size = self.length * nd.itemsize
                return np.frombuffer(buf if not start and buf.size == size
                                     else buf.slice(start, size), nd)
            return np.frombuffer(buf, dtype=nd, count=self.length, offset=self.offset * nd.itemsize)
        values = self.values()
        conv = _NUMPY_TEMPORAL.get(type(dtype))
        zero_copy = not isinstance(dtype, (t.DecimalType, t.TimeType, t.IntervalType)) or (
            isinstance(dtype, t.IntervalType) and dtype.unit == "YEAR_MONTH")
        if conv is not None:
            target = np.dtype(conv(dtype))
            if target.itemsize == values.dtype.itemsize:
                values = values.view(target)
            elif zero_copy_only:  # date32: numpy has no 4-byte datetime64
                raise ArrowInvalid(f"a zero-copy numpy view of this {dtype} array is impossible: "
                                   f"numpy's {target} is {target.itemsize} bytes a value, "
                                   f"{dtype} {values.dtype.itemsize}")
            else:
                values = values.astype(target)
        if zero_copy and self._nulls_bitmap() is None and not writable:
            return values
        if zero_copy_only:
            why = (f"{self.null_count} null(s)" if zero_copy and self.null_count
                   else "writable=True" if zero_copy else f"no numpy dtype holds {dtype}")
            raise ArrowInvalid(f"a zero-copy numpy view of this {dtype} array is impossible: {why}")
        mask = self._valid_mask()
        if not zero_copy:  # decimals, times, day-time / month-day-nano intervals
            if isinstance(dtype, t.TimeType) and dtype.unit == "ns" and self.length and \
                    np.any(values[self.is_valid()] % 1000):
                raise ArrowInvalid(f"{dtype} values with nanoseconds cannot be Python times; "
                                   f"use to_pylist(temporal='int')")  # as pyarrow's to_numpy
            return with_nulls(object_array(self.to_pylist()), None)
        if mask is None:
            return values.copy()
        if values.dtype.kind in "mM":
            out = values.copy()
            out[~mask] = np.array("NaT", dtype=out.dtype)
            return out
        out = values.astype(np.float64 if values.dtype.kind in "iu" else values.dtype)
        out[~mask] = np.nan
        return out

    def _same_values(self, other):
        agree, valid = _nulls_agree(self, other)
        if not agree:
            return False
        mine, theirs = self.values(), other.values()
        if mine.dtype.kind in "iufmM":  # (floats as pyarrow: NaN differs from NaN, -0.0 is 0.0)
            same = mine == theirs
        else:  # decimals, intervals: equal when their bytes are
            width = mine.dtype.itemsize
            same = (mine.view(np.uint8).reshape(-1, width)
                    == theirs.view(np.uint8).reshape(-1, width)).all(axis=1)
        return _all_where(same, valid)

    def _pylist(self, temporal):
        dtype = self.type
        if isinstance(dtype, (t.IntType, t.FloatType)):
            return values_to_list(self.values(), self._nulls_bitmap(), self.offset)
        return fixed_width_to_list(self.values(), self._valid_mask(), dtype, temporal)


def _decimal_int(raw) -> int:
    """One stored decimal as its unscaled Python int."""
    return int(raw) if not isinstance(raw, np.void) else int.from_bytes(raw.tobytes(), "little", signed=True)


def _decimal_beyond_precision(raw: np.ndarray, dtype: t.DecimalType) -> np.ndarray:
    """Bool mask of the unscaled values of ``raw`` with more than ``precision`` digits."""
    bound = 10 ** dtype.precision - 1
    if dtype.bit_width <= 64:
        return (raw > bound) | (raw < -bound)
    words = raw.view("<u8").reshape(len(raw), dtype.bit_width // 64)
    low = words[:, 0].view("<i8")
    # values that fit in an int64 (every upper word is the sign extension of the low one) are
    # checked vectorised; the (rare) others one by one
    fits = np.all(words[:, 1:] == (low >> 63).astype("<u8")[:, None], axis=1)
    bad = fits & ((low > bound) | (low < -bound)) if bound < 2**63 else np.zeros(len(raw), dtype=bool)
    wide = ~fits
    if wide.any():  # (decimal128(38, 18) past 1e19 / 1e18: every value, so vectorised too)
        rest = words[wide]
        bad[wide] = (wide_int_sign(rest, bound) > 0) | (wide_int_sign(rest, -bound) < 0)
    return bad


def wide_int_sign(words: np.ndarray, limit: int) -> np.ndarray:
    """The sign of ``v - limit`` (int8) for each row of ``words``: the little-endian uint64
    words of two's-complement integers ``v`` (decimal128/256 values; ``limit`` must fit their
    width).  The highest word that differs decides; the top word compares signed."""
    k = words.shape[1]
    out = np.zeros(len(words), np.int8)
    for j in range(k):  # low to high: each higher word overrides where it differs
        part = (limit >> (64 * j)) & (2**64 - 1)
        if j == k - 1:
            w, lim = words[:, j].view("<i8"), np.int64(part - 2**64 if part >= 2**63 else part)
        else:
            w, lim = words[:, j], np.uint64(part)
        out = np.where(w > lim, np.int8(1), np.where(w < lim, np.int8(-1), out))
    return out


class FixedSizeBinaryArray(Array):
    """Binary values of ``type.byte_width`` bytes each, end to end in one buffer."""

    __slots__ = ()

    def _check_structure(self, path):
        super()._check_structure(path)
        need_bytes(path, f"{self.type} values", self._buffers[1].size,
              (self.offset + self.length) * self.type.byte_width)

    def to_numpy(self, zero_copy_only=True, writable=False):
        width = self.type.byte_width
        if not zero_copy_only:  # as pyarrow: bytes objects (an S view drops trailing NULs)
            return object_array(self.to_pylist())
        if width and self._nulls_bitmap() is None and not writable:
            return typed_view(self._buffers[1], f"S{width}", self.offset, self.length)
        raise ArrowInvalid(f"a zero-copy numpy view of this {self.type} array is impossible")

    def _pylist(self, temporal):
        width = self.type.byte_width
        data = self._buffers[1]
        bits = self._nulls_bitmap()
        return fixed_binaries_to_list(data, width, self.length, bits, self.offset) \
            if self.offset == 0 else \
            fixed_binaries_to_list(data.slice(self.offset * width, self.length * width),
                                   width, self.length, bits, self.offset)


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

    def _values_extent(self) -> int:
        """How far the offsets may reach: the data buffer's bytes, the child's elements."""
        raise NotImplementedError

    def sound_offsets(self, path: str = "array"):
        """This array, once all its offsets (null slots' too) are in order and inside its
        values: what a copy of some of its rows (``take``, ``filter``) checks first.  A row's
        own two offsets can look sound while the next one shows the damage (``0, 7, 5``: row 0
        would read 7 bytes where 3 were written).  ``ArrowInvalid`` names the offset; the
        verdict is kept on the array and its slices (a full validation implies it)."""
        if not (self._fully_valid or self._offsets_sound):
            check_offsets(self.value_offsets(), self.length, self._values_extent(), path)
            self._offsets_sound = True
        return self

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

    def _values_extent(self):
        return self._buffers[2].size

    def _check_structure(self, path):
        super()._check_structure(path)
        self._check_offsets_cheap(path, self._buffers[2].size, f"{self._buffers[2].size}-byte data")

    def _check_full(self, path):
        offs = self.value_offsets()
        check_offsets(offs, self.length, self._buffers[2].size, path)
        if self.type.utf8:  # (bytes under a null slot are no value: pyarrow does not check them)
            check_utf8_offsets(self._buffers[2], offs, self.length,
                               self.validity if self.null_count else None, self.offset, path)

    def _same_values(self, other):
        agree, valid = _nulls_agree(self, other)
        if not agree:
            return False
        if self.length == 0:
            return True
        mine, theirs = self.value_offsets(), other.value_offsets()
        lengths_differ = np.diff(mine) != np.diff(theirs)
        if lengths_differ.any():
            # (a null slot may hold bytes of any length; a value of another length differs)
            return None if valid is not None and not lengths_differ[valid].any() else False
        if np.array_equal(self.values[mine[0]:mine[-1]], other.values[theirs[0]:theirs[-1]]):
            return True
        return False if valid is None else None  # (the bytes that differ may be a null's)

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
                                        self._nulls_bitmap(), self.offset, self.type.utf8)

    def _pylist(self, temporal):
        offs = self.value_offsets()
        conv = strings_to_list if self.type.utf8 else binaries_to_list
        return conv(self._buffers[2], offs, self.length, self._nulls_bitmap(), self.offset)


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
        return views_to_list(self._views(), self.length, self._nulls_bitmap(), self.offset,
                             list(self._buffers[2:]), self.type.utf8)
