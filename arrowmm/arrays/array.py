"""Typed arrays over ``BufferView``s: values decoded on demand, memory borrowed, never copied.

An ``Array`` is Arrow's ArrayData: a type, a logical ``offset`` and
``length``, buffers in the order of the Arrow C data interface, children and,
for dictionary arrays, the dictionary.  Subclasses add what each layout needs
(``to_numpy``, ``to_pylist``, the structural checks that run whenever an array
is loaded, and the O(n) checks of ``validate(full=True)``).

Per-type code is named ``_<kind>_...`` / ``<Kind>Array`` so one grep finds it.
"""
from __future__ import annotations

import copyreg
import operator

from typing import List, Optional, Sequence

import numpy as np

from .. import types as t
from .._core._bitmap import count_set_bits, unpack_bitmap
from .._core._cabi import exporter
from .._core._offsets import (
    check_binary_views,
    check_dense_union_offsets,
    check_dictionary_indices,
    check_list_view,
    check_offsets,
    check_run_ends,
    check_union_type_ids,
)
from .._core._pylist import (
    binaries_to_list,
    fixed_binaries_to_list,
    strings_to_list,
    strings_to_objects_dedup,
    values_to_list,
    views_to_list,
)
from .._core._region import BufferView, empty_view
from .._core._utf8 import check_utf8_offsets
from ..errors import ArrowInvalid
from .display import array_lines, preview
from .provenance import copy_reason
from .numpy_compat import convert as _convert, object_array, with_nulls
from .scalars import fixed_width_to_list


#: ``take`` and ``filter`` live in ``selection`` (which imports these classes) and are
#: registered here when it is imported: see ``register_selection``.
_SELECTION: dict = {}


def register_selection(take, filter_mask, as_indices, as_mask) -> None:
    """Called once by ``arrowmm.arrays.selection``: the functions behind ``take``/``filter``."""
    _SELECTION.update(take=take, filter=filter_mask, as_indices=as_indices, as_mask=as_mask)


def selection(name: str):
    """A function registered by ``selection`` (``take``, ``filter``, ``as_indices``, ``as_mask``)."""
    return _SELECTION[name]


def imported_array(obj) -> "Array":
    """An object exporting ``__arrow_c_array__`` (a pyarrow or polars array, ...) as an arrowmm
    array over the same memory (the C data interface)."""
    return exporter("import_array")(*obj.__arrow_c_array__())


def exported_schema(obj):
    """``obj`` (a type, field or schema) as an ``arrow_schema`` capsule."""
    return exporter("schema")(obj)


def exported_array(array: "Array", requested_schema=None):
    """``array`` as (``arrow_schema``, ``arrow_array``) capsules over its memory."""
    return exporter("array")(array, requested_schema)


def imported_batch(obj):
    """An object exporting ``__arrow_c_array__`` as a struct (a record batch) as an arrowmm
    RecordBatch over the same memory."""
    return exporter("import_batch")(*obj.__arrow_c_array__())


def reduce_registered(obj):
    """``__reduce__`` through the pickler registered for the nearest class of ``obj``.

    Pickling is registered from above with ``copyreg`` (``arrowmm.shm`` pickles memory
    in a shared segment by name), so the data model imports nothing from those layers.
    ``pickle`` finds a registered class itself; this covers its subclasses."""
    for cls in type(obj).__mro__:
        reducer = copyreg.dispatch_table.get(cls)
        if reducer is not None:
            return reducer(obj)
    raise TypeError(f"cannot pickle {type(obj).__name__!r}: no pickler is registered for it")

__all__ = [
    "Array", "NullArray", "BooleanArray", "PrimitiveArray", "FixedSizeBinaryArray",
    "BinaryArray", "BinaryViewArray", "ListArray", "ListViewArray", "MapArray",
    "FixedSizeListArray", "StructArray", "UnionArray", "DictionaryArray",
    "RunEndEncodedArray", "make_array", "register_array_to_pandas",
]

#: ``Array.to_pandas``: ``arrowmm.arrays.pandas_compat`` registers it (it imports this module)
_TO_PANDAS: list = []


def register_array_to_pandas(convert_array) -> None:
    """Called by ``pandas_compat``: ``convert_array(array) -> pandas.Series``."""
    _TO_PANDAS[:] = [convert_array]

_ZERO_OFFSET = {4: np.zeros(1, dtype="<i4"), 8: np.zeros(1, dtype="<i8")}


def _typed(buf: BufferView, dtype, start: int, count: int) -> np.ndarray:
    """``count`` elements of ``dtype`` from element ``start`` of ``buf`` (a read-only view)."""
    dtype = np.dtype(dtype)
    if count == 0:
        out = np.empty(0, dtype=dtype)
        out.flags.writeable = False  # read-only like every view of the mapping
        return out
    return np.frombuffer(buf, dtype=dtype, count=count, offset=start * dtype.itemsize)


#: The most rows converted to Python objects when no buffer backs them (null arrays, structs
#: without children, batches without columns): past this, a length from the file alone would
#: size the allocation, so ``to_pylist`` refuses instead.
MAX_UNBACKED_ROWS = 2**31 - 1


def unbacked_rows(n: int, what: str) -> int:
    """``n`` if that many buffer-less rows may be built as Python objects, else ArrowInvalid."""
    if n > MAX_UNBACKED_ROWS:
        raise ArrowInvalid(f"{what}: {n} rows with no data behind them; converting more than "
                           f"{MAX_UNBACKED_ROWS} such rows to Python objects is refused")
    return n


def _need(path, what, have, need):
    if have < need:
        raise ArrowInvalid(f"{path}: {what} has {have} bytes, {need} needed")


class Array:
    """Base class of every arrowmm array.  Make arrays with ``make_array``."""

    __slots__ = ("type", "length", "offset", "_null_count", "_buffers", "children", "dictionary")

    def __init__(self, type: t.DataType, length: int, buffers: Sequence[Optional[BufferView]],
                 children: Sequence["Array"] = (), null_count: int = -1, offset: int = 0,
                 dictionary: Optional["Array"] = None):
        self.type = type
        self.length = int(length)
        self.offset = int(offset)
        self._null_count = int(null_count)
        self._buffers = tuple(buffers)
        self.children = tuple(children)
        self.dictionary = dictionary

    # -- the common surface ---------------------------------------------------------------
    def __len__(self):
        return self.length

    def __repr__(self):
        """pyarrow's layout: the class, then one value per line (first and last ten of many)."""
        return f"<arrowmm.{type(self).__name__} object at {hex(id(self))}>\n" + self.to_string()

    def to_string(self) -> str:
        """The values as pyarrow's ``to_string`` lays them out, one per line."""
        return array_lines(*preview(self))

    def __iter__(self):
        return iter(self.to_pylist())

    def __getitem__(self, i):
        """A value (negative indices count from the end), or for a slice an array: zero-copy
        for step 1, a copy (``take``) for any other step, as pyarrow does."""
        if isinstance(i, slice):
            start, stop, step = i.indices(self.length)
            if step == 1:
                return self.slice(start, max(stop - start, 0))
            return self.take(np.arange(start, stop, step, dtype=np.int64))
        try:
            k = operator.index(i)
        except TypeError:
            raise TypeError(f"array indices must be integers or slices, not "
                            f"{type(i).__name__}") from None
        if k < 0:
            k += self.length
        if not 0 <= k < self.length:
            raise IndexError(f"index {i} out of range for an array of length {self.length}")
        return self.slice(k, 1).to_pylist()[0]

    # -- values compared, as pyarrow compares them ------------------------------------------
    def __eq__(self, other):
        """``equals``: True when the other array has the same type and values (pyarrow's ``==``).

        Arrays are mutable-free but, like pyarrow's, unhashable: equality is by value."""
        try:
            return self.equals(other)
        except TypeError:
            return NotImplemented

    __hash__ = None  # pyarrow's arrays are unhashable: equal values, not identity

    def equals(self, other) -> bool:
        """Whether ``other`` (an arrowmm array or any object exporting ``__arrow_c_array__``,
        such as a pyarrow array) holds the same type and the same values, nulls in the same
        slots.  NaN is not equal to NaN, as in pyarrow.  Other objects raise TypeError."""
        if not isinstance(other, Array):
            if not hasattr(other, "__arrow_c_array__"):
                raise TypeError(f"equals: expected an array, got {type(other).__name__}")
            other = imported_array(other)
        return (self.type == other.type and len(self) == len(other)
                and self.to_pylist(temporal="int") == other.to_pylist(temporal="int"))

    # -- selection (copies, in ``selection``) ---------------------------------------------------
    def take(self, indices) -> "Array":
        """The values at ``indices`` (numpy, list or integer array), a copy; a null index gives
        a null.  Out-of-range indices raise IndexError (negative ones are out of range)."""
        return _SELECTION["take"](self, indices)

    def filter(self, mask) -> "Array":
        """The values where ``mask`` (numpy bool, list, or boolean array of the same length) is
        True; a null in the mask drops its value, as pyarrow's default does."""
        return _SELECTION["filter"](self, mask)

    @property
    def null_count(self) -> int:
        if self._null_count < 0:
            v = self._buffers[0] if self._buffers else None
            self._null_count = 0 if v is None else self.length - count_set_bits(v, self.offset, self.length)
        return self._null_count

    @property
    def is_zero_copy(self) -> bool:
        """True when every buffer (children and dictionary included) is borrowed from the memory
        it was read from; False when the reader had to decompress, byte-swap or re-align one."""
        return copy_reason(self) is None

    @property
    def validity(self) -> Optional[BufferView]:
        """The validity bitmap buffer (bit ``offset`` is the first slot), or None."""
        return self._buffers[0] if self._buffers else None

    def validity_mask(self) -> np.ndarray:
        """The validity bitmap as a bool numpy array: True where the slot holds a value.

        Types without a validity bitmap of their own (unions, run-end encoded)
        are all True; a null array is all False.
        """
        mask = self._valid_mask()
        return np.ones(self.length, dtype=bool) if mask is None else mask

    is_valid = validity_mask

    def _valid_mask(self) -> Optional[np.ndarray]:
        v = self.validity
        if v is None or self.null_count == 0:
            return None
        return unpack_bitmap(v, self.offset, self.length)

    def slice(self, offset: int = 0, length: Optional[int] = None) -> "Array":
        """A zero-copy slice (``offset`` and ``length`` clamped like pyarrow's)."""
        offset = int(offset)
        if offset < 0:
            raise ArrowInvalid(f"slice offset must be >= 0, got {offset}")
        offset = min(offset, self.length)
        avail = self.length - offset
        length = avail if length is None else max(0, min(int(length), avail))
        if offset == 0 and length == self.length:
            return self
        nc = 0 if self._null_count == 0 else -1
        out = type(self)(self.type, length, self._buffers, self.children, nc,
                         self.offset + offset, self.dictionary)
        return out

    def buffers(self) -> List[Optional[BufferView]]:
        """This array's buffers then its children's, depth-first (pyarrow's order).

        Buffers are whole: apply ``offset`` times the element width to read them.
        """
        out = list(self._buffers)
        for child in self.children:
            out.extend(child.buffers())
        return out

    def to_pylist(self, *, temporal: str = "python") -> list:
        """The values as Python objects, as pyarrow's ``to_pylist`` gives them.

        ``temporal="int"`` keeps dates, times, timestamps and durations as the
        stored integers (exact for values Python's ``datetime`` cannot hold).
        """
        return self._pylist(temporal)

    def to_pandas(self):
        """A ``pandas.Series`` of the values, as pyarrow's ``Array.to_pandas()`` gives it
        (extension values included: ``uuid.UUID``, ``bool``).  Needs pandas."""
        return _TO_PANDAS[0](self)

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> np.ndarray:
        """The values as numpy: a read-only view of the mapping where one exists.

        ``zero_copy_only=False`` converts as pyarrow's ``to_numpy`` does when no
        view is possible (NaN / NaT / None for nulls, numpy arrays per list
        row, dicts per struct row, decoded dictionaries); ``writable=True``
        always gives new memory.
        """
        if zero_copy_only:
            raise ArrowInvalid(f"{self.type} arrays have no numpy view; use "
                               f"to_numpy(zero_copy_only=False) or to_pylist()")
        return _convert(self)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """numpy's array protocol (numpy 2 ``copy`` semantics, as pyarrow implements them).

        ``copy=False`` gives the zero-copy view or raises ``ArrowInvalid`` (a
        ``ValueError``); ``copy=True`` always gives new memory.
        """
        if copy is False:
            out = self.to_numpy(zero_copy_only=True)
            if dtype is not None and np.dtype(dtype) != out.dtype:
                raise ArrowInvalid(f"a {np.dtype(dtype)} array of this {self.type} array needs a "
                                   f"copy (its view is {out.dtype}), and copy=False was given")
            return out
        out = self.to_numpy(zero_copy_only=False, writable=bool(copy))
        return out if dtype is None else out.astype(dtype, copy=False)

    def validate(self, full: bool = False, path: str = "array") -> None:
        """Check the array: structure always; every offset, byte and index when ``full``."""
        self._check_structure(path)
        for i, child in enumerate(self.children):
            child.validate(full, f"{path}.{self._child_name(i)}")
        if self.dictionary is not None:
            self.dictionary.validate(full, f"{path}.dictionary")
        if full:
            self._check_full(path)

    def _child_name(self, i: int) -> str:
        kids = self.type.children
        return kids[i].name if i < len(kids) else f"child{i}"

    def _check_structure(self, path: str) -> None:
        if self.length < 0 or self.offset < 0:
            raise ArrowInvalid(f"{path}: negative length {self.length} or offset {self.offset}")
        v = self.validity
        if v is not None:
            _need(path, "validity bitmap", v.size, (self.offset + self.length + 7) // 8)
        if self._null_count > self.length:
            raise ArrowInvalid(f"{path}: null count {self._null_count} exceeds length {self.length}")

    def _check_full(self, path: str) -> None:
        pass

    def __reduce__(self):
        """Pickles by name when the memory is a shared segment (``arrowmm.shm``), else TypeError."""
        return reduce_registered(self)

    # -- the Arrow PyCapsule interface ---------------------------------------------------------
    def __arrow_c_schema__(self):
        return exporter("schema")(self.type)

    def __arrow_c_array__(self, requested_schema=None):
        return exporter("array")(self, requested_schema)


class NullArray(Array):
    __slots__ = ()

    @property
    def null_count(self):
        return self.length

    @property
    def validity(self):
        return None

    def validity_mask(self):
        return np.zeros(unbacked_rows(self.length, "null array"), dtype=bool)

    is_valid = validity_mask

    def _pylist(self, temporal):
        return [None] * unbacked_rows(self.length, "null array")


class BooleanArray(Array):
    __slots__ = ()

    def _check_structure(self, path):
        super()._check_structure(path)
        _need(path, "bool values", self._buffers[1].size, (self.offset + self.length + 7) // 8)

    def values(self) -> np.ndarray:
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
        return values_to_list(self.values(), self.validity, self.offset) if self.null_count else \
            self.values().tolist()


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
            _need(path, f"{self.type} values", self._buffers[1].size, need)

    def _check_full(self, path):
        """Value ranges pyarrow's ``validate(full=True)`` checks: times within a day, date64 whole
        days, decimals within their precision (null slots are not checked)."""
        dtype = self.type
        values = self.values()
        if isinstance(dtype, t.TimeType):
            limit = 86400 * {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[dtype.unit]
            bad, why = (values < 0) | (values >= limit), f"is outside [0, {limit}) {dtype.unit}"
        elif isinstance(dtype, t.DateType) and dtype.unit == "ms":
            bad, why = values % 86_400_000 != 0, "is not a whole number of days"
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
        return _typed(self._buffers[1], self.type.numpy_dtype, self.offset, self.length)

    def to_numpy(self, zero_copy_only=True, writable=False):
        dtype = self.type
        if self._null_count == 0 and not writable and type(dtype) in _PLAIN_NUMERIC:
            return np.frombuffer(self._buffers[1], dtype=dtype.numpy_dtype, count=self.length,
                                 offset=self.offset * dtype.byte_width)  # the hot path: a view
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
        if zero_copy and self.null_count == 0 and not writable:
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

    def _pylist(self, temporal):
        dtype = self.type
        if isinstance(dtype, (t.IntType, t.FloatType)):
            return values_to_list(self.values(), self.validity if self.null_count else None, self.offset)
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
    for row in np.flatnonzero(~fits).tolist():
        v = int.from_bytes(words[row].tobytes(), "little", signed=True)
        bad[row] = not -bound <= v <= bound
    return bad


class FixedSizeBinaryArray(Array):
    __slots__ = ()

    def _check_structure(self, path):
        super()._check_structure(path)
        _need(path, f"{self.type} values", self._buffers[1].size,
              (self.offset + self.length) * self.type.byte_width)

    def to_numpy(self, zero_copy_only=True, writable=False):
        width = self.type.byte_width
        if not zero_copy_only:  # as pyarrow: bytes objects (an S view drops trailing NULs)
            return object_array(self.to_pylist())
        if width and self.null_count == 0 and not writable:
            return _typed(self._buffers[1], f"S{width}", self.offset, self.length)
        raise ArrowInvalid(f"a zero-copy numpy view of this {self.type} array is impossible")

    def _pylist(self, temporal):
        width = self.type.byte_width
        data = self._buffers[1]
        return fixed_binaries_to_list(data, width, self.length, self.validity, self.offset) \
            if self.offset == 0 else \
            fixed_binaries_to_list(data.slice(self.offset * width, self.length * width),
                                   width, self.length, self.validity, self.offset)


class _OffsetsMixin:
    """Arrays with an offsets buffer: binary, string, list, map (32- or 64-bit offsets)."""

    __slots__ = ()

    def value_offsets(self) -> np.ndarray:
        """The ``length + 1`` offsets of this (possibly sliced) array, a read-only view."""
        buf = self._buffers[1]
        dtype = self.type.offset_dtype
        if buf.size == 0 and self.length == 0:
            return _ZERO_OFFSET[dtype.itemsize]
        return _typed(buf, dtype, self.offset, self.length + 1)

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
        _need(path, "offsets", buf.size, (self.offset + self.length + 1) * width)
        offs = self.value_offsets()
        first, last = int(offs[0]), int(offs[-1])
        if first < 0 or last < first or last > data_size:
            raise ArrowInvalid(f"{path}: offsets run from {first} to {last}, outside [0, {data_size}] "
                               f"of the {what}")


class BinaryArray(_OffsetsMixin, Array):
    """binary, string, large_binary, large_string."""

    __slots__ = ()

    @property
    def values(self) -> np.ndarray:
        """The whole data buffer as a read-only uint8 numpy view (value ``i`` is
        ``values[offsets[i]:offsets[i + 1]]``)."""
        return _typed(self._buffers[2], np.uint8, 0, self._buffers[2].size)

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
        _need(path, "views", self._buffers[1].size, (self.offset + self.length) * 16)

    def _views(self):
        return self._buffers[1].slice(self.offset * 16, self.length * 16)

    def _check_full(self, path):
        check_binary_views(self._views(), self.length, self.validity if self.null_count else None,
                           self.offset, list(self._buffers[2:]), self.type.utf8, path)

    to_numpy = BinaryArray.to_numpy

    def _pylist(self, temporal):
        return views_to_list(self._views(), self.length, self.validity if self.null_count else None,
                             self.offset, list(self._buffers[2:]), self.type.utf8)


def _pylist_where_used(part: Array, temporal: str, used, field: Optional[t.Field] = None) -> list:
    """``part`` as Python values, converted in bulk, values no slot shows included (those under
    null list / struct slots, union children's unselected ones).  If the bulk conversion raises
    (a value Python cannot hold) and some values are unused, only the used runs are converted
    (unused ones stay None): pyarrow never touches them, so they must not raise.
    ``used()`` gives the bool mask of the used values.  ``field`` is the child's field: the
    values of an extension child are that type's values (``uuid.UUID``, ``bool``), as pyarrow
    gives them at any depth."""
    try:
        out = part._pylist(temporal)
    except ArrowInvalid:
        mask = used()
        if mask.all():
            raise
        out = [None] * len(part)
        edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
        for start, stop in zip(edges[::2].tolist(), edges[1::2].tolist()):
            out[start:stop] = part.slice(start, stop - start)._pylist(temporal)
    return _extension_values(out, field)


def _extension_values(values: list, field: Optional[t.Field]) -> list:
    ext = field.extension_type if field is not None else None
    if ext is None or type(ext).wrap_value is t.ExtensionType.wrap_value:
        return values
    wrap_value = ext.wrap_value
    return [None if v is None else wrap_value(v) for v in values]


def _covered(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
    """Bool mask of ``size`` values: True inside any of the ``[start, end)`` ranges (which must
    lie inside: offsets only the full check validates are checked here before use)."""
    bad = np.flatnonzero((starts < 0) | (ends > size) | (ends < starts))
    if bad.size:
        k = int(bad[0])
        raise ArrowInvalid(f"offsets [{int(starts[k])}, {int(ends[k])}) (range {k}) lie outside the "
                           f"{size} child values they index")
    marks = np.zeros(size + 1, dtype=np.int64)
    np.add.at(marks, starts, 1)
    np.add.at(marks, ends, -1)
    return np.cumsum(marks[:size]) > 0


def _rows_used(offs: np.ndarray, base: int, valid, size: int):
    """``used`` for ``_pylist_where_used``: the child values the valid rows of a list cover."""
    def used():
        starts, ends = offs[:-1].astype(np.int64) - base, offs[1:].astype(np.int64) - base
        if valid is not None:
            starts, ends = starts[valid], ends[valid]
        return _covered(starts, ends, size)
    return used


def _rows_from_offsets(values: list, offs: np.ndarray, base: int, valid) -> list:
    starts = (offs[:-1] - base).tolist()
    ends = (offs[1:] - base).tolist()
    rows = [values[s:e] for s, e in zip(starts, ends)]
    if valid is not None:
        rows = [r if ok else None for r, ok in zip(rows, valid.tolist())]
    return rows


class ListArray(_OffsetsMixin, Array):
    """list and large_list."""

    __slots__ = ()

    @property
    def values(self) -> Array:
        """The child array, whole (not sliced to this array's range)."""
        return self.children[0]

    def _check_structure(self, path):
        super()._check_structure(path)
        if len(self.children) != 1:
            raise ArrowInvalid(f"{path}: a list needs 1 child array, has {len(self.children)}")
        self._check_offsets_cheap(path, len(self.children[0]), f"{len(self.children[0])}-element child")

    def _check_full(self, path):
        check_offsets(self.value_offsets(), self.length, len(self.children[0]), path)

    def flatten(self) -> Array:
        """The child values these lists cover (a slice of the child)."""
        offs = self.value_offsets()
        return self.children[0].slice(int(offs[0]), int(offs[-1] - offs[0]))

    def _pylist(self, temporal):
        offs = self.value_offsets()
        base = int(offs[0])
        valid = self._valid_mask()
        part = self.children[0].slice(base, int(offs[-1]) - base)
        values = _pylist_where_used(part, temporal, _rows_used(offs, base, valid, len(part)),
                                    self.type.value_field)
        return _rows_from_offsets(values, offs, base, valid)


class MapArray(ListArray):
    """map<k, v>: a list of key/value structs; Python values are lists of (key, value) tuples."""

    __slots__ = ()

    def _check_full(self, path):
        super()._check_full(path)
        keys = self.children[0].children[0]
        if keys.null_count:
            raise ArrowInvalid(f"{path}: map keys contain {keys.null_count} null(s)")

    @property
    def keys(self) -> Array:
        return self.flatten().field(0)

    @property
    def items(self) -> Array:
        return self.flatten().field(1)

    def _pylist(self, temporal):
        offs = self.value_offsets()
        base = int(offs[0])
        valid = self._valid_mask()
        entries = self.children[0].slice(base, int(offs[-1]) - base)
        used = _rows_used(offs, base, valid, len(entries))
        keys = _pylist_where_used(entries.field(0), temporal, used, self.type.key_field)
        items = _pylist_where_used(entries.field(1), temporal, used, self.type.item_field)
        pairs = list(zip(keys, items))
        return _rows_from_offsets(pairs, offs, base, valid)


class ListViewArray(Array):
    """list_view and large_list_view: per-slot offsets and sizes into the child."""

    __slots__ = ()

    @property
    def values(self) -> Array:
        return self.children[0]

    def value_offsets(self):
        return _typed(self._buffers[1], self.type.offset_dtype, self.offset, self.length)

    def value_sizes(self):
        return _typed(self._buffers[2], self.type.offset_dtype, self.offset, self.length)

    #: per-slot offsets into ``values``, a read-only numpy view (pyarrow's ``ListViewArray.offsets``)
    offsets = property(value_offsets)
    #: per-slot list sizes, a read-only numpy view (pyarrow's ``ListViewArray.sizes``)
    sizes = property(value_sizes)

    def _check_structure(self, path):
        super()._check_structure(path)
        width = self.type.offset_dtype.itemsize
        need = (self.offset + self.length) * width
        _need(path, "list-view offsets", self._buffers[1].size, need)
        _need(path, "list-view sizes", self._buffers[2].size, need)

    def _check_full(self, path):
        check_list_view(self.value_offsets(), self.value_sizes(), self.length, len(self.children[0]),
                        self.validity if self.null_count else None, self.offset, path)

    def _pylist(self, temporal):
        valid = self._valid_mask()
        offs, sizes = self.value_offsets(), self.value_sizes()
        if valid is not None:
            offs, sizes = offs[valid], sizes[valid]
        child = self.children[0]
        if len(offs) == 0:
            return [None] * self.length
        starts, ends = offs.astype(np.int64), offs.astype(np.int64) + sizes
        nonempty = sizes > 0
        lo = int(starts[nonempty].min()) if nonempty.any() else 0
        hi = int(ends[nonempty].max()) if nonempty.any() else 0
        if lo < 0 or hi > len(child):
            raise ArrowInvalid(f"list-view values [{lo}, {hi}) lie outside the {len(child)}-element child")
        values = _pylist_where_used(child.slice(lo, hi - lo), temporal,
                                    lambda: _covered(starts[nonempty] - lo, ends[nonempty] - lo, hi - lo),
                                    self.type.value_field)
        rows = [values[s - lo:e - lo] if e > s else [] for s, e in zip(starts.tolist(), ends.tolist())]
        if valid is None:
            return rows
        it = iter(rows)
        return [next(it) if ok else None for ok in valid.tolist()]


class FixedSizeListArray(Array):
    __slots__ = ()

    @property
    def values(self) -> Array:
        return self.children[0]

    def _check_structure(self, path):
        super()._check_structure(path)
        size = self.type.list_size
        if len(self.children) != 1:
            raise ArrowInvalid(f"{path}: a fixed_size_list needs 1 child array")
        if len(self.children[0]) < (self.offset + self.length) * size:
            raise ArrowInvalid(f"{path}: child has {len(self.children[0])} values, "
                               f"{(self.offset + self.length) * size} needed for "
                               f"{self.offset + self.length} lists of {size}")

    def flatten(self) -> Array:
        size = self.type.list_size
        return self.children[0].slice(self.offset * size, self.length * size)

    def to_numpy(self, zero_copy_only=True, writable=False):
        """A 2-D view (rows x list_size) when the child is fixed-width and nothing is null."""
        if self.null_count:
            if zero_copy_only:
                raise ArrowInvalid(f"{self.null_count} null list(s): a numpy view is impossible")
            return _convert(self)  # pyarrow's rows: a numpy array per list, None per null
        flat = self.flatten().to_numpy(zero_copy_only, writable)
        if flat.dtype == object:  # rows of nested values: a 2-D object array would split them
            return _convert(self)
        return flat.reshape(self.length, self.type.list_size)

    def _pylist(self, temporal):
        size = self.type.list_size
        valid = self._valid_mask()
        values = _pylist_where_used(self.flatten(), temporal, lambda: np.repeat(
            np.ones(self.length, dtype=bool) if valid is None else valid, size), self.type.value_field)
        rows = [values[i * size:(i + 1) * size] for i in range(self.length)]
        return rows if valid is None else [r if ok else None for r, ok in zip(rows, valid.tolist())]


class StructArray(Array):
    __slots__ = ()

    def field(self, i) -> Array:
        """Child ``i`` (index or name), sliced to this array's range."""
        if isinstance(i, str):
            names = [f.name for f in self.type.fields]
            if names.count(i) != 1:
                raise KeyError(f"struct has {names.count(i) or 'no'} field(s) named {i!r}")
            i = names.index(i)
        n = len(self.children)
        if not -n <= int(i) < n:
            raise IndexError(f"struct field index {i} out of range for {n} fields")
        return self.children[int(i)].slice(self.offset, self.length)

    def flatten(self) -> List[Array]:
        return [self.field(i) for i in range(len(self.children))]

    def _check_structure(self, path):
        super()._check_structure(path)
        if len(self.children) != len(self.type.fields):
            raise ArrowInvalid(f"{path}: struct has {len(self.type.fields)} fields but "
                               f"{len(self.children)} child arrays")
        for f, c in zip(self.type.fields, self.children):
            if len(c) < self.offset + self.length:
                raise ArrowInvalid(f"{path}.{f.name}: child length {len(c)} < struct length "
                                   f"{self.offset + self.length}")

    def _pylist(self, temporal):
        names = [f.name for f in self.type.fields]
        valid = self._valid_mask()
        if len(set(names)) != len(names):
            if valid is not None and not valid.any() or not self.length:
                return [None] * self.length  # no row to convert (pyarrow raises per row too)
            raise ArrowInvalid(f"cannot convert {self.type} to dicts: duplicate field names; "
                               f"use .field(i) for each child")
        used = (lambda: np.ones(self.length, dtype=bool)) if valid is None else (lambda: valid)
        columns = [_pylist_where_used(self.field(i), temporal, used, f)
                   for i, f in enumerate(self.type.fields)]
        rows = [dict(zip(names, vals)) for vals in zip(*columns)] if columns else \
            [{} for _ in range(unbacked_rows(self.length, "struct without fields"))]
        return rows if valid is None else [r if ok else None for r, ok in zip(rows, valid.tolist())]


class UnionArray(Array):
    """sparse_union / dense_union.  Buffers: (type_ids,) or (type_ids, offsets); no validity."""

    __slots__ = ()

    @property
    def null_count(self):
        return 0

    @property
    def validity(self):
        return None

    def type_codes(self) -> np.ndarray:
        return _typed(self._buffers[0], np.int8, self.offset, self.length)

    def value_offsets(self) -> np.ndarray:
        if self.type.mode != "dense":
            raise ArrowInvalid("sparse unions have no value offsets")
        return _typed(self._buffers[1], "<i4", self.offset, self.length)

    def field(self, i) -> Array:
        """Child ``i``: sliced to this array's range for sparse unions, whole for dense ones."""
        child = self.children[int(i)]
        return child.slice(self.offset, self.length) if self.type.mode == "sparse" else child

    def _check_structure(self, path):
        if self.length < 0 or self.offset < 0:
            raise ArrowInvalid(f"{path}: negative length or offset")
        if len(self.children) != len(self.type.fields):
            raise ArrowInvalid(f"{path}: union has {len(self.type.fields)} fields but "
                               f"{len(self.children)} child arrays")
        end = self.offset + self.length
        _need(path, "union type ids", self._buffers[0].size, end)
        if self.type.mode == "dense":
            _need(path, "dense union offsets", self._buffers[1].size, end * 4)
        else:
            for f, c in zip(self.type.fields, self.children):
                if len(c) < end:
                    raise ArrowInvalid(f"{path}.{f.name}: sparse union child length {len(c)} < {end}")

    def _code_table(self):
        allowed = np.zeros(128, dtype=np.uint8)
        allowed[list(self.type.type_codes)] = 1
        return allowed

    def _check_full(self, path):
        check_union_type_ids(self.type_codes(), self._code_table(), path)
        if self.type.mode == "dense":
            lengths = np.zeros(128, dtype=np.int64)
            for code, child in zip(self.type.type_codes, self.children):
                lengths[code] = len(child)
            check_dense_union_offsets(self.type_codes(), self.value_offsets(), lengths, path)

    def _pylist(self, temporal):
        codes = self.type_codes()
        check_union_type_ids(codes, self._code_table(), "union")
        out = [None] * self.length
        code_list = codes.tolist()
        if self.type.mode == "sparse":
            for code, child, f in zip(self.type.type_codes, self.children, self.type.fields):
                picks = np.flatnonzero(codes == code)
                if len(picks) == 0:
                    continue
                vals = _pylist_where_used(child.slice(self.offset, self.length), temporal,
                                          lambda: codes == code, f)
                for k in picks.tolist():
                    out[k] = vals[k]
            return out
        offs = self.value_offsets()
        for code, child, f in zip(self.type.type_codes, self.children, self.type.fields):
            picks = np.flatnonzero(codes == code)
            if len(picks) == 0:
                continue
            sel = offs[picks]
            lo, hi = int(sel.min()), int(sel.max())
            if lo < 0 or hi >= len(child):
                raise ArrowInvalid(f"dense union offset {lo if lo < 0 else hi} outside child of "
                                   f"length {len(child)}")
            vals = _pylist_where_used(child.slice(lo, hi - lo + 1), temporal,
                                      lambda: np.isin(np.arange(lo, hi + 1), sel), f)
            for k, o in zip(picks.tolist(), sel.tolist()):
                out[k] = vals[o - lo]
        del code_list
        return out


class DictionaryArray(Array):
    """Indices (buffers like an integer array) plus ``dictionary``, the values array."""

    __slots__ = ()

    def indices(self) -> Array:
        return PrimitiveArray(self.type.index_type, self.length, self._buffers, (),
                              self._null_count, self.offset)

    def _check_structure(self, path):
        super()._check_structure(path)
        _need(path, "dictionary indices", self._buffers[1].size,
              (self.offset + self.length) * self.type.index_type.byte_width)
        if self.dictionary is None:
            raise ArrowInvalid(f"{path}: dictionary-encoded array without a dictionary")

    def _check_full(self, path):
        check_dictionary_indices(self.indices().values(), self.validity if self.null_count else None,
                                 self.offset, len(self.dictionary), path)

    def dictionary_decode(self) -> list:
        return self.to_pylist()

    def to_numpy(self, zero_copy_only=True, writable=False):
        if zero_copy_only:
            raise ArrowInvalid("dictionary arrays have no numpy view of their values; "
                               "use .indices().to_numpy() for the indices")
        return object_array(self.to_pylist())  # the decoded values as Python objects

    def _pylist(self, temporal):
        idx = self.indices().values()
        valid = self._valid_mask()
        live = idx if valid is None else idx[valid]
        n = len(self.dictionary)
        if live.size and (int(live.min()) < 0 or int(live.max()) >= n):
            bad = int(live.min()) if int(live.min()) < 0 else int(live.max())
            raise ArrowInvalid(f"dictionary index {bad} out of range for a dictionary of {n} values")
        try:
            values = self.dictionary._pylist(temporal)
        except ArrowInvalid:
            # a dictionary value Python cannot hold (timestamp[ns] with nanoseconds, ...): like
            # pyarrow, convert only the values the indices use, so unused ones don't raise
            values = {i: self.dictionary.slice(i, 1)._pylist(temporal)[0]
                      for i in np.unique(live).tolist()}
        if valid is None:
            return [values[i] for i in idx.tolist()]
        return [values[i] if ok else None for i, ok in zip(idx.tolist(), valid.tolist())]


class RunEndEncodedArray(Array):
    """Children: run_ends (int16/32/64, strictly increasing) and values."""

    __slots__ = ()

    @property
    def null_count(self):
        return 0

    @property
    def validity(self):
        return None

    @property
    def run_ends(self) -> Array:
        return self.children[0]

    @property
    def values(self) -> Array:
        return self.children[1]

    def _check_structure(self, path):
        if self.length < 0 or self.offset < 0:
            raise ArrowInvalid(f"{path}: negative length or offset")
        if len(self.children) != 2:
            raise ArrowInvalid(f"{path}: run_end_encoded needs 2 children, has {len(self.children)}")
        ends, values = self.children
        if len(ends) != len(values):
            raise ArrowInvalid(f"{path}: {len(ends)} run ends but {len(values)} values")
        if ends.null_count:
            raise ArrowInvalid(f"{path}: run ends contain nulls")
        need = self.offset + self.length
        if need and (len(ends) == 0 or int(ends.values()[-1]) < need):
            last = int(ends.values()[-1]) if len(ends) else 0
            raise ArrowInvalid(f"{path}: last run end {last} < offset + length {need}")

    def _check_full(self, path):
        check_run_ends(self.children[0].values(), self.offset + self.length, path)

    def _pylist(self, temporal):
        if self.length == 0:
            return []
        ends = self.children[0].values()
        check_run_ends(ends, self.offset + self.length, "run ends")
        first = int(np.searchsorted(ends, self.offset, side="right"))
        last = int(np.searchsorted(ends, self.offset + self.length - 1, side="right"))
        vals = _extension_values(self.children[1].slice(first, last - first + 1)._pylist(temporal),
                                 self.type.value_field)
        bounds = np.minimum(ends[first:last + 1], self.offset + self.length) - self.offset
        counts = np.diff(np.concatenate(([0], bounds)))
        out = []
        for v, c in zip(vals, counts.tolist()):
            out.extend([v] * c)
        return out


_ARRAY_CLASS = {
    t.NullType: NullArray, t.BoolType: BooleanArray, t.IntType: PrimitiveArray,
    t.FloatType: PrimitiveArray, t.DecimalType: PrimitiveArray, t.DateType: PrimitiveArray,
    t.TimeType: PrimitiveArray, t.TimestampType: PrimitiveArray, t.DurationType: PrimitiveArray,
    t.IntervalType: PrimitiveArray, t.FixedSizeBinaryType: FixedSizeBinaryArray,
    t.FixedSizeListType: FixedSizeListArray, t.StructType: StructArray, t.MapType: MapArray,
    t.UnionType: UnionArray, t.DictionaryType: DictionaryArray,
    t.RunEndEncodedType: RunEndEncodedArray,
}


def array_class(dtype: t.DataType) -> type:
    cls = _ARRAY_CLASS.get(type(dtype))
    if cls is not None:
        return cls
    if isinstance(dtype, t.BinaryType):
        return BinaryViewArray if dtype.view else BinaryArray
    if isinstance(dtype, t.ListType):
        return ListViewArray if dtype.view else ListArray
    return _ARRAY_CLASS[type(dtype)]


def make_array(dtype: t.DataType, length: int, buffers, children=(), null_count: int = -1,
               offset: int = 0, dictionary: Optional[Array] = None) -> Array:
    """Build the array class for ``dtype`` over ``buffers`` (C data interface order)."""
    buffers = [empty_view() if b is None and i > 0 and not isinstance(dtype, t.UnionType) else b
               for i, b in enumerate(buffers)]
    return array_class(dtype)(dtype, length, buffers, children, null_count, offset, dictionary)
