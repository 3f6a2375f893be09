"""``Array``, the base of every typed array: a type, a logical ``offset`` and ``length``,
buffers in the order of the Arrow C data interface, children and, for dictionary arrays, the
dictionary (Arrow's ArrayData).  The surface every array shares lives here: ``len``,
indexing, ``slice``, ``validate``, ``to_pylist``, ``to_numpy``, the PyCapsule export.

Also what the layouts' modules share: read-only typed views of a buffer (``typed_view``), the
size check every structural check makes (``need_bytes``), child values to Python
(``pylist_where_used``, ``extension_values``).  What the layers above do for an array (the C
data interface, pickling, ``take`` and ``filter`` by ``compute``'s kernels) is reached through
``arrowmm.hooks``; ``to_pandas`` imports its module of this package when called (that module
imports this one).
"""
from __future__ import annotations

import operator

from typing import Any, List, Optional, Sequence, SupportsIndex, Union, overload

import numpy as np

from .. import hooks, types as t
from .._core._bitmap import count_set_bits, unpack_bitmap
from .._core._region import BufferView
from ..errors import ArrowInvalid
from .display import array_lines, preview
from .provenance import copy_reason
from .numpy_compat import convert as _convert

#: types whose arrays have no validity bitmap of their own (their null count is not a count
#: of bitmap zeros)
_NO_VALIDITY = (t.NullType, t.UnionType, t.RunEndEncodedType)

__all__ = ["Array", "imported_array", "exported_schema", "exported_array", "imported_batch",
           "typed_view", "MAX_UNBACKED_ROWS", "unbacked_rows", "need_bytes", "pylist_where_used",
           "extension_values", "covered_mask", "same_values"]


def imported_array(obj) -> "Array":
    """An object exporting ``__arrow_c_array__`` (a pyarrow or polars array, ...) as an arrowmm
    array over the same memory (the C data interface)."""
    return hooks.import_c_array(*obj.__arrow_c_array__())


def exported_schema(obj):
    """``obj`` (a type, field or schema) as an ``arrow_schema`` capsule."""
    return hooks.export_c_schema(obj)


def exported_array(array: "Array", requested_schema=None):
    """``array`` as (``arrow_schema``, ``arrow_array``) capsules over its memory."""
    return hooks.export_c_array(array, requested_schema)


def imported_batch(obj):
    """An object exporting ``__arrow_c_array__`` as a struct (a record batch) as an arrowmm
    RecordBatch over the same memory."""
    return hooks.import_c_batch(*obj.__arrow_c_array__())


_ZERO_OFFSET = {4: np.zeros(1, dtype="<i4"), 8: np.zeros(1, dtype="<i8")}


def typed_view(buf: BufferView, dtype, start: int, count: int) -> np.ndarray:
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


def need_bytes(path, what, have, need):
    if have < need:
        raise ArrowInvalid(f"{path}: {what} has {have} bytes, {need} needed")


class Array:
    """Base class of every arrowmm array.  Make arrays with ``make_array``."""

    __slots__ = ("type", "length", "offset", "_null_count", "_buffers", "children", "dictionary",
                 "_unchecked_claim", "_fully_valid", "_offsets_sound")

    def __init__(self, type: t.DataType, length: int, buffers: Sequence[Optional[BufferView]],  # noqa: A002  (pyarrow's name)
                 children: Sequence["Array"] = (), null_count: int = -1, offset: int = 0,
                 dictionary: Optional["Array"] = None):
        self.type = type
        self.length = int(length)
        self.offset = int(offset)
        self._null_count = int(null_count)
        self._buffers = tuple(buffers)
        self.children = tuple(children)
        self.dictionary = dictionary
        #: whose recorded null count is still to be checked against its bitmap before values
        #: are read: True (this array's own), the array this one was sliced from, or None
        self._unchecked_claim = True if self._null_count >= 0 else None
        #: True once ``validate(full=True)`` passed (a slice of such an array is valid too)
        self._fully_valid = False
        #: True once every offset was found in order and inside the values (``sound_offsets``)
        self._offsets_sound = False

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

    @overload
    def __getitem__(self, i: slice) -> Array: ...
    @overload
    def __getitem__(self, i: SupportsIndex) -> Any: ...  # (the value's type depends on the type)

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
        return same_values(self, other)

    def _same_values(self, other: "Array") -> Optional[bool]:
        """Whether ``other``, a flat array of the same type and length, holds the same values,
        answered from the buffers (100x faster than Python objects); None sends ``same_values``
        to the values as Python objects (nested layouts are compared child by child there)."""
        return None

    # -- selection (copies, in ``selection``) ---------------------------------------------------
    def take(self, indices) -> "Array":
        """The values at ``indices`` (numpy, list or integer array), a copy; a null index gives
        a null.  Out-of-range indices raise IndexError (negative ones are out of range)."""
        return hooks.take_array(self, indices)

    def filter(self, mask) -> "Array":
        """The values where ``mask`` (numpy bool, list, or boolean array of the same length) is
        True; a null in the mask drops its value, as pyarrow's default does."""
        return hooks.filter_array(self, mask)  # (a boolean array's bits used as they are)

    def cast(self, target_type: Union[t.DataType, str], safe: bool = True) -> "Array":
        """The values as ``target_type`` (a type, or its name: ``"int64"``), as pyarrow's
        ``Array.cast``: numbers, temporal units, dates and timestamps to each other and to text,
        strings and binaries, numbers to and from strings, decimals, lists and structs,
        dictionaries, the null type to anything.  ``safe=True`` raises ``ArrowInvalid`` where a value would
        not fit or lose precision; ``safe=False`` wraps and truncates as pyarrow does.  A pair
        pyarrow does not cast raises ``ArrowNotImplementedError``."""
        return hooks.cast_array(self, target_type, safe=bool(safe))

    # -- distinct values (the hash kernels of ``compute``) ----------------------------------------
    def dictionary_encode(self, null_encoding: str = "mask") -> "Array":
        """The values as a dictionary array (int32 indices) of the distinct values, first seen
        first, as pyarrow's: ``null_encoding="mask"`` leaves nulls out of the dictionary,
        ``"encode"`` makes null an entry.  Types without a hash kernel (nested, views,
        extension types) raise ``ArrowNotImplementedError``."""
        return hooks.dictionary_encode(self, null_encoding)

    def unique(self) -> "Array":
        """The distinct values, first seen first (a null among them where there is one)."""
        return hooks.unique(self)

    def value_counts(self) -> "Array":
        """The distinct values and how many rows hold each, first seen first: a
        ``struct<values, counts: int64>`` array, as pyarrow's."""
        return hooks.value_counts(self)

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

    def logical_validity(self) -> Optional[np.ndarray]:
        """Where each value is not null as ``to_pylist`` reads it (a bool numpy array), or None
        when no value is null: what a filter's ``is null`` / ``is not null`` means.

        This differs from ``validity_mask`` only where a null lives below the array's own
        bitmap: a dictionary index pointing at a null dictionary value, a run-end encoded run
        whose value is null, a union slot whose child value is null (pyarrow's
        ``compute.is_valid`` does the same).  ``null_count`` still counts the bitmap alone,
        as pyarrow's does.
        """
        return self._valid_mask()

    def _valid_mask(self) -> Optional[np.ndarray]:
        v = self._nulls_bitmap()
        return None if v is None else unpack_bitmap(v, self.offset, self.length)

    def _nulls_bitmap(self) -> Optional[BufferView]:
        """The validity bitmap values are read through: None when no value is null, else the
        bitmap, once its zeros were counted against the recorded null count (a flipped bit
        would make a null read as its slot's bytes).  The verdict is kept; two threads may
        both count, to the same verdict."""
        v = self.validity
        if v is None:
            return None
        claim = self._unchecked_claim
        if claim is not None:
            if claim is True:
                self._check_null_count(f"{self.type} array")
            else:
                claim._nulls_bitmap()  # (the array this one was sliced from)
            self._unchecked_claim = None
        return v if self.null_count else None

    def slice(self, offset: int = 0, length: Optional[int] = None) -> "Array":
        """A zero-copy slice (``offset`` and ``length`` clamped like pyarrow's)."""
        offset = int(offset)
        if offset < 0:
            raise ArrowInvalid(f"slice offset must be >= 0, got {offset}")
        if length is not None and int(length) < 0:  # (pyarrow: "Length must be non-negative")
            raise ArrowInvalid(f"slice length must be >= 0, got {int(length)}")
        offset = min(offset, self.length)
        avail = self.length - offset
        length = avail if length is None else max(0, min(int(length), avail))
        if offset == 0 and length == self.length:
            return self
        nc = 0 if self._null_count == 0 or length == 0 else -1  # (nothing to count, or vouch for)
        out = type(self)(self.type, length, self._buffers, self.children, nc,
                         self.offset + offset, self.dictionary)
        out._fully_valid = self._fully_valid
        out._offsets_sound = self._offsets_sound
        if nc < 0 and self._unchecked_claim is not None:
            # the slice counts its own nulls: the count it was cut from is checked when the
            # slice's bitmap is first read
            out._unchecked_claim = self if self._unchecked_claim is True else self._unchecked_claim
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

    def tolist(self) -> list:
        """``to_pylist()``, under pyarrow's other name for it."""
        return self._pylist("python")

    def drop_null(self) -> "Array":
        """The values without the nulls (a copy; the array itself when it has none), as
        pyarrow's ``drop_null``.  A null is a value ``to_pylist`` reads as None
        (``logical_validity``): pyarrow 26 keeps a dictionary's null values and a run-end
        encoded or union array's null children, which its own ``is_null`` calls null."""
        valid = self.logical_validity()
        if valid is None:
            return self
        return self.filter(valid)

    def to_pandas(self, *, date_as_object: bool = True, timestamp_as_object: bool = False,
                  integer_object_nulls: bool = False, maps_as_pydicts=None,
                  split_blocks: bool = False, self_destruct: bool = False):
        """A ``pandas.Series`` of the values, as pyarrow's ``Array.to_pandas()`` gives it
        (extension values included: ``uuid.UUID``, ``bool``), with pyarrow's options (see
        ``Table.to_pandas``; ``split_blocks`` and ``self_destruct`` change nothing).  Needs
        pandas."""
        from .pandas_compat import array_to_series, conversion_options  # (they import us)
        return array_to_series([self], self.type, conversion_options(
            date_as_object, timestamp_as_object, integer_object_nulls, maps_as_pydicts))

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
        if full and not self._fully_valid:
            self._check_null_count(path)
            self._check_full(path)
            self._fully_valid = True

    def _mark_built(self) -> "Array":
        """Mark this array valid by construction (arrowmm's own builders only: buffers sized and
        filled by arrowmm, its null count counted from the bitmap it packed), so writers skip
        its full validation.  Never for memory from a file, the C data interface or a user's
        buffers (``make_array``), nor where value ranges matter (times, date64, decimals)."""
        self._fully_valid = True
        self._unchecked_claim = None
        return self

    def _validated(self, path: str = "array") -> "Array":
        """The array, once ``validate(full=True)`` passed for it: what copies its values into
        something that will be read as data (a new file, a cast, a sort's order) checks first,
        so damage raises there instead of being laundered.  The verdict is kept on the array
        (and its slices), so a column is checked once however often it is written; two threads
        may both check, to the same verdict."""
        if not self._fully_valid:
            self.validate(True, path)
        return self

    def _passes_flat(self, values_need: int) -> bool:
        """Whether this childless array, of a type whose every bit pattern is a value, passes
        ``validate(full=True)``: its sizes (``values_need`` bytes of values) and its null count
        against its bitmap, in one short path (a new small column's check was ~10 us of the
        generic walk).  False sends the caller to the generic walk, which names the fault."""
        n, start, nulls = self.length, self.offset, self._null_count
        bufs = self._buffers
        if n < 0 or start < 0 or nulls > n or self.children or self.dictionary is not None or \
                len(bufs) < 2 or bufs[1].size < values_need:
            return False
        v = bufs[0]
        if v is None:
            return nulls <= 0
        if v.size < (start + n + 7) // 8:
            return False
        if nulls >= 0:
            return n - count_set_bits(v, start, n) == nulls
        claim = self._unchecked_claim  # (a slice answers for the count it was cut from)
        if not isinstance(claim, Array) or claim._unchecked_claim is None:
            return True
        if not claim._passes_flat(0):
            return False
        claim._unchecked_claim = None
        return True

    def _check_null_count(self, path: str) -> None:
        """The recorded null count against the validity bitmap (pyarrow's full validation
        does the same): a flipped bit would make a value read as null, or a null as a value,
        while ``null_count`` says otherwise.  A count of 0 beside a bitmap is a claim too; a
        slice, which counts its own nulls, answers for the count of the array it was cut from."""
        if isinstance(self.type, _NO_VALIDITY):
            return
        if self._null_count < 0:
            claim = self._unchecked_claim
            if isinstance(claim, Array) and claim._unchecked_claim is not None:
                claim._check_null_count(f"{path} (the array it was sliced from)")
                claim._unchecked_claim = None
            return
        v = self.validity
        if v is None:
            if self._null_count > 0:
                raise ArrowInvalid(f"{path}: null count {self._null_count} but no validity "
                                   f"bitmap ({self.type})")
            return
        actual = self.length - count_set_bits(v, self.offset, self.length)
        if actual != self._null_count:
            raise ArrowInvalid(f"{path}: null count {self._null_count} does not match the "
                               f"validity bitmap, which marks {actual} of {self.length} slots "
                               f"null (offset {self.offset})")

    def _child_name(self, i: int) -> str:
        kids = self.type.children
        return kids[i].name if i < len(kids) else f"child{i}"

    def _check_structure(self, path: str) -> None:
        if self.length < 0 or self.offset < 0:
            raise ArrowInvalid(f"{path}: negative length {self.length} or offset {self.offset}")
        v = self.validity
        if v is not None:
            need_bytes(path, "validity bitmap", v.size, (self.offset + self.length + 7) // 8)
        if self._null_count > self.length:
            raise ArrowInvalid(f"{path}: null count {self._null_count} exceeds length {self.length}")

    def _check_full(self, path: str) -> None:
        pass

    def __reduce__(self):
        """Pickles by name when the memory is a shared segment (``arrowmm.shm``), else TypeError."""
        return hooks.reduce_array(self)

    # -- the Arrow PyCapsule interface ---------------------------------------------------------
    def __arrow_c_schema__(self):
        return hooks.export_c_schema(self.type)

    def __arrow_c_array__(self, requested_schema=None):
        return hooks.export_c_array(self, requested_schema)


def pylist_where_used(part: Array, temporal: str, used, field: Optional[t.Field] = None) -> list:
    """``part`` as Python values, converted in bulk, values no slot shows included (those under
    null list / struct slots, union children's unselected ones).  If the bulk conversion raises
    for a value Python cannot hold and some values are unused, only the used runs are converted
    (unused ones stay None): pyarrow never touches them, so they must not raise.  Damage
    (offsets, bitmaps, bytes its full validation refuses) raises wherever it lies.
    ``used()`` gives the bool mask of the used values.  ``field`` is the child's field: the
    values of an extension child are that type's values (``uuid.UUID``, ``bool``), as pyarrow
    gives them at any depth."""
    try:
        out = part._pylist(temporal)
    except ArrowInvalid:
        mask = used()
        if mask.all():
            raise
        part.validate(True, field.name if field is not None else "child values")
        out = [None] * len(part)
        edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.view(np.int8), [0]))))
        for start, stop in zip(edges[::2].tolist(), edges[1::2].tolist()):
            out[start:stop] = part.slice(start, stop - start)._pylist(temporal)
    return extension_values(out, field)


def extension_values(values: list, field: Optional[t.Field]) -> list:
    ext = field.extension_type if field is not None else None
    if ext is None or type(ext).wrap_value is t.ExtensionType.wrap_value:
        return values
    wrap_value = ext.wrap_value
    return [None if v is None else wrap_value(v) for v in values]


def covered_mask(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
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


def same_values(a: Array, b: Array, exact: bool = False) -> bool:
    """Whether ``a`` and ``b`` have one type and length and hold the same values, nulls in the
    same slots: ``Array.equals``, and the writers' "did this dictionary change?".

    Compared layout by layout, never through Python values that lose the type (a union's type
    code, ``True == 1``, a date as its int): a union by its type codes, then each child's values
    at the slots selecting it; a struct child by child, by index (names may repeat); lists by
    their lengths, then their values.  ``exact`` compares floats by their bits, what a reader
    decodes (NaN equals NaN, -0.0 differs from 0.0); otherwise as numbers, as pyarrow's
    ``equals`` (NaN differs from NaN).  Both arrays are checked first (``_validated``), so
    damage raises instead of comparing."""
    if a.type != b.type or len(a) != len(b):
        return False
    return _same(a._validated(), b._validated(), exact)


def _same(a: Array, b: Array, exact: bool) -> bool:
    if a is b and (exact or not _holds_floats(a.type)):
        return True  # (NaN differs from itself in equals: such arrays are compared)
    dtype = a.type
    if isinstance(dtype, t.ExtensionType):
        return _same(a.storage, b.storage, exact)
    for kind, same in _SAME_NESTED:
        if isinstance(dtype, kind):
            return same(a, b, exact)
    if exact and isinstance(dtype, t.FloatType):
        return _same_float_bits(a, b)
    answer = a._same_values(b)
    if answer is not None:
        return answer
    return a.to_pylist(temporal="int") == b.to_pylist(temporal="int")  # (a flat type: exact)


def _holds_floats(dtype: t.DataType) -> bool:
    if isinstance(dtype, t.ExtensionType):
        dtype = dtype.storage_type
    if isinstance(dtype, t.DictionaryType):
        dtype = dtype.value_type
    return isinstance(dtype, t.FloatType) or any(_holds_floats(f.type) for f in dtype.children)


def _valid_slots(a: Array, b: Array):
    """``(agree, valid)``: whether ``a`` and ``b`` are null in the same slots (their own
    validity), and the slots where both hold values (None: every slot)."""
    mine, theirs = a._valid_mask(), b._valid_mask()
    if mine is None and theirs is None:
        return True, None
    if mine is None or theirs is None:
        return bool((theirs if mine is None else mine).all()), None
    return bool(np.array_equal(mine, theirs)), mine


def _same_float_bits(a: Array, b: Array) -> bool:
    agree, valid = _valid_slots(a, b)
    if not agree:
        return False
    x, y = a.values(), b.values()
    bits = np.dtype(f"u{x.dtype.itemsize}")
    same = (x.view(bits) == y.view(bits)) | (np.isnan(x) & np.isnan(y))
    return bool(same.all() if valid is None else same[valid].all())


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``[start, start + length)`` of each range, end to end (int64)."""
    starts = starts.astype(np.int64)
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if not total:
        return np.empty(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def _same_child_ranges(a, b, starts_a, starts_b, lengths, exact) -> bool:
    """Whether ``a``'s child values in its ranges equal ``b``'s in its (of equal lengths)."""
    return _same(a.children[0].take(_ranges(starts_a, lengths)),
                 b.children[0].take(_ranges(starts_b, lengths)), exact)


def _same_lists(a: Array, b: Array, exact: bool) -> bool:
    agree, valid = _valid_slots(a, b)
    if not agree:
        return False
    offs_a, offs_b = a.value_offsets(), b.value_offsets()
    lengths_a, lengths_b = np.diff(offs_a), np.diff(offs_b)
    if valid is not None:  # (a null slot's list is no value, whatever length it has)
        lengths_a, lengths_b = lengths_a[valid], lengths_b[valid]
    if not np.array_equal(lengths_a, lengths_b):
        return False
    if valid is None:
        return _same(a.children[0].slice(int(offs_a[0]), int(offs_a[-1] - offs_a[0])),
                     b.children[0].slice(int(offs_b[0]), int(offs_b[-1] - offs_b[0])), exact)
    return _same_child_ranges(a, b, offs_a[:-1][valid], offs_b[:-1][valid], lengths_a, exact)


def _same_list_views(a: Array, b: Array, exact: bool) -> bool:
    agree, valid = _valid_slots(a, b)
    if not agree:
        return False
    keep = slice(None) if valid is None else valid
    sizes = a.value_sizes()[keep]
    if not np.array_equal(sizes, b.value_sizes()[keep]):
        return False
    return _same_child_ranges(a, b, a.value_offsets()[keep], b.value_offsets()[keep], sizes, exact)


def _same_fixed_size_lists(a: Array, b: Array, exact: bool) -> bool:
    agree, valid = _valid_slots(a, b)
    if not agree:
        return False
    size = a.type.list_size
    rows = np.arange(a.length, dtype=np.int64) if valid is None else np.flatnonzero(valid)
    lengths = np.full(len(rows), size, dtype=np.int64)
    return _same_child_ranges(a, b, (rows + a.offset) * size, (rows + b.offset) * size, lengths,
                              exact)


def _same_structs(a: Array, b: Array, exact: bool) -> bool:
    agree, valid = _valid_slots(a, b)
    if not agree:
        return False
    rows = None if valid is None else np.flatnonzero(valid)  # (a null row's children: no value)
    for mine, theirs in zip(a.children, b.children):
        if rows is None:
            mine, theirs = mine.slice(a.offset, a.length), theirs.slice(b.offset, b.length)
        else:
            mine, theirs = mine.take(rows + a.offset), theirs.take(rows + b.offset)
        if not _same(mine, theirs, exact):
            return False
    return True


def _same_unions(a: Array, b: Array, exact: bool) -> bool:
    codes = a.type_codes()
    if not np.array_equal(codes, b.type_codes()):
        return False
    dense = a.type.mode == "dense"
    for code, mine, theirs in zip(a.type.type_codes, a.children, b.children):
        rows = np.flatnonzero(codes == code)
        if not rows.size:
            continue
        if dense:
            at_a, at_b = a.value_offsets()[rows], b.value_offsets()[rows]
        else:
            at_a, at_b = rows + a.offset, rows + b.offset
        if not _same(mine.take(at_a.astype(np.int64)), theirs.take(at_b.astype(np.int64)), exact):
            return False
    return True


def _same_dictionaries(a: Array, b: Array, exact: bool) -> bool:
    # as pyarrow's equals: the same indices into equal dictionaries (the same values through
    # other dictionaries are not equal); no rows are equal whatever the dictionaries, and one
    # dictionary holding a NaN is compared with itself unless ``exact`` (NaN is not NaN there)
    if not len(a):
        return True
    return len(a.dictionary) == len(b.dictionary) and \
        _same(a.dictionary, b.dictionary, exact) and _same(a.indices, b.indices, exact)


def _same_run_ends(a: Array, b: Array, exact: bool) -> bool:
    return _same(a.decoded(), b.decoded(), exact)  # (runs may be cut differently)


#: the nested layouts, compared through their children (MapType lays out as a list)
_SAME_NESTED = ((t.StructType, _same_structs), (t.UnionType, _same_unions),
                (t.ListType, _same_lists), (t.MapType, _same_lists),
                (t.ListViewType, _same_list_views), (t.FixedSizeListType, _same_fixed_size_lists),
                (t.DictionaryType, _same_dictionaries), (t.RunEndEncodedType, _same_run_ends))
