"""Python values -> an arrowmm Array of a given type (the conversion half of ``arrowmm.array``).

``convert(values, dtype, from_pandas)`` takes a list and builds the buffers of
``dtype`` in the C data interface order ``make_array`` expects.  None is null
(with ``from_pandas`` also NaN / NaT / pandas.NA); validity bitmaps are packed
in Cython by ``pack_bitmap`` and left out when nothing is null.  A value that
does not fit raises ``ConversionError`` (an ``ArrowInvalid``) naming the value,
where it sits (``[3][1].a``) and the target type.  Accepted values per type
follow pyarrow (e.g. ints become floats, ``str`` becomes ``binary``) except that
floats with a fraction are refused by integer types rather than truncated.
"""
from __future__ import annotations

import datetime as _dt
import math
import operator
import struct
from decimal import Decimal, InvalidOperation
from itertools import chain, repeat
from typing import Optional

import numpy as np

from .. import types as t
from .._core._bitmap import pack_bitmap
from .infer import is_null
from .._core._region import as_view
from ..arrays.array import Array, BinaryArray, make_array
from ._pystrings import pack_strings
from ..errors import ArrowError, ArrowInvalid

__all__ = ["convert", "ConversionError", "validity_from_mask", "binary_views"]

_NONE = type(None)
_EPOCH_ORD = _dt.date(1970, 1, 1).toordinal()
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_BINARY = (bytes, bytearray, memoryview)
_NP_TEMPORAL = (np.datetime64, np.timedelta64)
_RAW = (int, float, Decimal, np.integer, np.floating)  # raw counts of temporal types
_SEQUENCE = (list, tuple, np.ndarray, set, frozenset, type({}.values()))


class ConversionError(ArrowInvalid):
    """A Python value that does not fit the target type, and where it sits."""

    def __init__(self, value, dtype, why: str, index: int):
        super().__init__(why)
        self.value, self.dtype, self.why = value, dtype, why
        self.path = [index]  # outermost first: ints are positions, strings are ".field"

    def __str__(self):
        where = "".join(f"[{p}]" if isinstance(p, int) else p for p in self.path)
        where = f"index {self.path[0]}" if len(self.path) == 1 else where
        text = repr(self.value)
        text = text if len(text) <= 60 else text[:57] + "..."
        return (f"cannot convert {text} ({type(self.value).__name__}) at {where} to {self.dtype}: "
                f"{self.why}")


def _fail(value, dtype, why, index):
    raise ConversionError(value, dtype, why, index)


# -- validity -------------------------------------------------------------------------------

def _null_mask(values, from_pandas):
    """Bool array, True at null slots, or None when nothing is null."""
    n = len(values)
    if from_pandas:
        mask = np.fromiter(map(is_null, values, repeat(True, n)), bool, n)
    else:
        mask = np.fromiter(map(operator.is_, values, repeat(None, n)), bool, n)
    return mask if mask.any() else None


def _flags(mask, n) -> list:
    """The null mask as a Python list of bools (fast to index)."""
    return [False] * n if mask is None else mask.tolist()


def validity_from_mask(mask):
    """(validity BufferView or None, null_count) from a True-is-null mask (bit-packed in Cython)."""
    if mask is None:
        return None, 0
    bits, valid = pack_bitmap(~mask)
    nulls = len(mask) - valid
    return (as_view(bits), nulls) if nulls else (None, 0)


def _fixed(dtype, data: np.ndarray, mask, n=None) -> Array:
    validity, nulls = validity_from_mask(mask)
    return make_array(dtype, len(data) if n is None else n,
                      [validity, as_view(np.ascontiguousarray(data))], null_count=nulls)


def _filled(values, mask, fill):
    return values if mask is None else [fill if m else v for v, m in zip(values, mask.tolist())]


def _kinds(values) -> set:
    return set(map(type, values))


# -- booleans and numbers -------------------------------------------------------------------

def _null(values, dtype, fp):
    for i, v in enumerate(values):
        if not is_null(v, fp):
            _fail(v, dtype, "only None fits the null type", i)
    return make_array(dtype, len(values), [], null_count=len(values))


def _bools(values, dtype, fp):
    mask = _null_mask(values, fp)
    clean = _filled(values, mask, False)
    if not _kinds(clean) <= {bool}:
        for i, v in enumerate(clean):
            if not isinstance(v, (bool, np.bool_)):
                _fail(v, dtype, "expected a bool", i)
    bits, _ = pack_bitmap(np.array(clean, dtype=bool))
    validity, nulls = validity_from_mask(mask)
    return make_array(dtype, len(values), [validity, as_view(bits)], null_count=nulls)._mark_built()


def _int_value(v, dtype, i):
    """``v`` as a Python int for an integer type, or raise (numpy bools pass, as in pyarrow)."""
    if isinstance(v, bool):
        _fail(v, dtype, "expected an integer, got a bool", i)
    if isinstance(v, (int, np.integer, np.bool_)) and not isinstance(v, np.timedelta64):
        return int(v)
    if isinstance(v, (float, np.floating, Decimal)):  # pyarrow truncates; arrowmm refuses a loss
        if v == v and abs(v) != math.inf and int(v) == v:
            return int(v)
        _fail(v, dtype, "the value has a fractional part or is not finite", i)
    _fail(v, dtype, "expected an integer", i)


def _int_data(clean, values, dtype):
    """Python ints -> numpy array of ``dtype.numpy_dtype``, range-checked."""
    np_dtype = dtype.numpy_dtype
    try:
        return np.array(clean, dtype=np_dtype)
    except OverflowError:
        info = np.iinfo(np_dtype)
        for i, v in enumerate(clean):
            if not info.min <= v <= info.max:
                _fail(values[i], dtype, f"out of range [{info.min}, {info.max}]", i)
        raise


def _ints(values, dtype, fp):
    mask = _null_mask(values, fp)
    clean = _filled(values, mask, 0)
    if not _kinds(clean) <= {int}:
        clean = [_int_value(v, dtype, i) for i, v in enumerate(clean)]
    return _fixed(dtype, _int_data(clean, values, dtype), mask)._mark_built()


_EXACT_INT = {16: 2 ** 11, 32: 2 ** 24, 64: 2 ** 53}  # (pyarrow lets float16 reach inf)


def _floats(values, dtype, fp):
    mask = _null_mask(values, fp)
    clean = _filled(values, mask, 0.0)
    kinds = _kinds(clean)
    limit = _EXACT_INT[dtype.bit_width]
    if not kinds <= {float}:
        for i, v in enumerate(clean):
            if isinstance(v, (float, bool, np.floating)):
                continue
            if isinstance(v, (int, np.integer)) and not isinstance(v, np.timedelta64):
                if not -limit <= v <= limit:
                    _fail(v, dtype, f"integers beyond +/-{limit} are not exactly representable", i)
                continue
            _fail(v, dtype, "expected a float or an integer", i)
    return _fixed(dtype, np.array(clean, dtype=dtype.numpy_dtype), mask)._mark_built()


def _decimal_unscaled(v, dtype, i) -> int:
    if isinstance(v, str):
        try:
            v = Decimal(v)
        except InvalidOperation:
            _fail(v, dtype, "not a decimal number", i)
    elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_, np.timedelta64)):
        v = Decimal(int(v))
    elif not isinstance(v, Decimal):
        _fail(v, dtype, "expected a Decimal, an int or a decimal string", i)
    sign, digits, exponent = v.as_tuple()
    if not isinstance(exponent, int):
        _fail(v, dtype, "not finite", i)
    coeff = int("".join(map(str, digits)) or "0")
    shift = exponent + dtype.scale
    if shift >= 0:
        unscaled = coeff * 10 ** shift
    else:
        unscaled, rest = divmod(coeff, 10 ** -shift)
        if rest:
            _fail(v, dtype, f"rescaling to scale {dtype.scale} would lose digits", i)
    if unscaled >= 10 ** dtype.precision:
        _fail(v, dtype, f"needs more than {dtype.precision} digits of precision", i)
    return -unscaled if sign else unscaled


def _decimals(values, dtype, fp):
    mask = _null_mask(values, fp)
    isnull = _flags(mask, len(values))
    ints = [0 if isnull[i] else _decimal_unscaled(v, dtype, i) for i, v in enumerate(values)]
    width = dtype.byte_width
    if width <= 8:
        data = np.array(ints, dtype=dtype.numpy_dtype)
    else:
        data = np.frombuffer(b"".join(v.to_bytes(width, "little", signed=True) for v in ints),
                             dtype=np.uint8)
    return _fixed(dtype, data, mask, len(values))


# -- temporal -------------------------------------------------------------------------------

def _np_temporal(v, unit, dtype, i):
    """A numpy datetime64 / timedelta64 scalar as a count of ``unit``, refusing lossy casts."""
    kind = "datetime64" if isinstance(v, np.datetime64) else "timedelta64"
    out = v.astype(f"{kind}[{unit}]")
    if out.astype(v.dtype) != v:
        _fail(v, dtype, f"converting to unit {unit!r} would lose precision", i)
    return int(out.astype(np.int64))


def _micros_of_day(v: _dt.time) -> int:
    return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond


def _in_unit(v, us: int, nanos: int, dtype, i) -> int:
    """``us`` microseconds and ``nanos`` as a count of ``dtype.unit``, refusing a loss (as the
    numpy path does; pyarrow truncates Python values)."""
    unit = dtype.unit
    if unit == "ns":
        return us * 1000 + nanos
    per = 1_000_000 // _PER_SECOND[unit]
    if nanos or us % per:
        _fail(v, dtype, f"converting to unit {unit!r} would lose precision", i)
    return us // per


def _temporal(to_int):
    """A converter for a temporal type from ``to_int(value, dtype, index) -> int`` (ints: raw)."""
    def convert_temporal(values, dtype, fp):
        mask = _null_mask(values, fp)
        nat = [i for i, v in enumerate(values)
               if isinstance(v, (np.datetime64, np.timedelta64)) and np.isnat(v)]
        if nat:
            mask = np.zeros(len(values), bool) if mask is None else mask
            mask[nat] = True
        isnull = _flags(mask, len(values))
        ints = [0 if isnull[i] else
                to_int(v, dtype, i) if not isinstance(v, _RAW) or isinstance(v, _NP_TEMPORAL)
                else _int_value(v, dtype, i)
                for i, v in enumerate(values)]
        if isinstance(dtype, t.DateType) and dtype.unit == "ms":  # date64: whole days only
            for i, v in enumerate(ints):
                if v % 86_400_000:
                    _fail(values[i], dtype, "not a whole number of days in milliseconds "
                                            "(86400000), as date64 needs", i)
        if isinstance(dtype, t.TimeType):  # a time of day: [0, 24h), as Arrow validation demands
            day = 86_400 * _PER_SECOND[dtype.unit]
            for i, v in enumerate(ints):
                if not 0 <= v < day:
                    _fail(values[i], dtype, f"outside a day [0, {day})", i)
        return _fixed(dtype, _int_data(ints, values, dtype), mask)
    return convert_temporal


def _date_int(v, dtype, i):
    if isinstance(v, np.datetime64):
        days = _np_temporal(v, "D", dtype, i)
    elif isinstance(v, _dt.date):
        days = v.toordinal() - _EPOCH_ORD  # a datetime counts by its date, as in pyarrow
    else:
        _fail(v, dtype, "expected a date, a datetime or an int", i)
    return days if dtype.unit == "day" else days * 86_400_000


def _time_int(v, dtype, i):
    if not isinstance(v, _dt.time):
        _fail(v, dtype, "expected a time or an int", i)
    return _in_unit(v, _micros_of_day(v), 0, dtype, i)


def _timestamp_int(v, dtype, i):
    unit = dtype.unit
    if isinstance(v, np.datetime64):
        return _np_temporal(v, unit, dtype, i)
    if not isinstance(v, _dt.datetime):
        _fail(v, dtype, "expected a datetime or an int", i)
    offset = v.utcoffset()
    days = v.toordinal() - _EPOCH_ORD
    us = (days * 86_400 + v.hour * 3600 + v.minute * 60 + v.second) * 1_000_000 + v.microsecond
    if offset is not None:
        us -= (offset.days * 86_400 + offset.seconds) * 1_000_000 + offset.microseconds
    return _in_unit(v, us, getattr(v, "nanosecond", 0), dtype, i)  # (pandas.Timestamp's)


def _duration_int(v, dtype, i):
    unit = dtype.unit
    if isinstance(v, np.timedelta64):
        return _np_temporal(v, unit, dtype, i)
    if not isinstance(v, _dt.timedelta):
        _fail(v, dtype, "expected a timedelta or an int", i)
    us = (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    return _in_unit(v, us, getattr(v, "nanoseconds", 0), dtype, i)  # (pandas.Timedelta's)


def _interval_parts(v, dtype, i, n):
    if isinstance(v, dict):
        v = tuple(v.values())
    parts = (v,) if n == 1 and not isinstance(v, (tuple, list)) else v
    if isinstance(parts, (tuple, list)) and len(parts) == n and all(
            isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_, np.timedelta64))
            for x in parts):
        np_dtype = dtype.numpy_dtype
        widths = [np_dtype] if n == 1 else [np_dtype.fields[k][0] for k in np_dtype.names]
        for x, w in zip(parts, widths):
            info = np.iinfo(w)
            if not info.min <= x <= info.max:
                _fail(v, dtype, f"component {x} is out of range [{info.min}, {info.max}]", i)
        return tuple(int(x) for x in parts)
    _fail(v, dtype, f"expected {'an int' if n == 1 else f'a tuple of {n} ints'}", i)


def _intervals(values, dtype, fp):
    mask = _null_mask(values, fp)
    np_dtype = dtype.numpy_dtype
    n = 1 if np_dtype.names is None else len(np_dtype.names)
    zero = (0,) * n
    isnull = _flags(mask, len(values))
    rows = [zero if isnull[i] else _interval_parts(v, dtype, i, n)
            for i, v in enumerate(values)]
    data = np.array([r[0] for r in rows] if n == 1 else rows, dtype=np_dtype)
    return _fixed(dtype, data, mask)


# -- binary and strings ---------------------------------------------------------------------

def _encode(v, dtype, i, utf8):
    if isinstance(v, str):
        try:  # (str's own encode: a subclass's override could give any bytes, as pyarrow ignores)
            return str.encode(v, "utf-8")
        except UnicodeEncodeError:
            _fail(v, dtype, "the string is not encodable as UTF-8", i)
    if isinstance(v, _BINARY):
        b = bytes(v)
        if utf8:
            try:
                b.decode("utf-8")
            except UnicodeDecodeError:
                _fail(v, dtype, "the bytes are not valid UTF-8", i)
        return b
    _fail(v, dtype, "expected str or bytes", i)


def _blobs(values, dtype, fp):
    """(null mask, byte lengths, the encoded values back to back); nulls are empty."""
    mask = _null_mask(values, fp)
    n = len(values)
    clean = _filled(values, mask, "")
    kinds = _kinds(clean)
    if kinds <= {str}:
        joined = "".join(clean)
        if joined.isascii():  # one encode for all, lengths from the str lengths
            return mask, np.fromiter(map(len, clean), np.int64, n), joined.encode("ascii")
    utf8 = dtype.utf8 if isinstance(dtype, (t.BinaryType, t.BinaryViewType)) else False
    blobs = None
    if kinds <= {str, bytes} and not (utf8 and bytes in kinds):
        try:
            blobs = [v if type(v) is bytes else v.encode("utf-8") for v in clean]
        except UnicodeEncodeError:
            pass
    if blobs is None:
        blobs = [_encode(v, dtype, i, utf8) for i, v in enumerate(clean)]
    return mask, np.fromiter(map(len, blobs), np.int64, n), b"".join(blobs)


def _binary_views(values, dtype, fp):
    mask, lengths, data = _blobs(values, dtype, fp)
    return binary_views(lengths, data, dtype, mask)


def _binaries(values, dtype, fp):
    built = string_array(values, dtype)
    if built is not None:
        return built
    mask, lengths, data = _blobs(values, dtype, fp)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if not dtype.large and offsets[-1] > np.iinfo(np.int32).max:
        raise ArrowInvalid(f"{offsets[-1]} bytes of {dtype} data overflow 32-bit offsets; "
                           f"use large_{dtype}")
    validity, nulls = validity_from_mask(mask)
    # offsets summed from the lengths of the bytes written here, UTF-8 encoded from str or
    # checked by ``_encode``: valid by construction
    return make_array(dtype, len(lengths), [validity, as_view(offsets.astype(dtype.offset_dtype)),
                                            as_view(data)], null_count=nulls)._mark_built()


def string_array(values: list, dtype) -> Optional[Array]:
    """``values`` (str, or bytes for a binary type, and None) as a ``dtype`` array built in C,
    or None for a list the Python path converts (another value, an unencodable str, 32-bit
    offsets overflowed).  The bytes are the Python path's (tests/interop/test_pystrings.py)."""
    packed = pack_strings(values, dtype.large, not dtype.utf8)
    if packed is None:
        return None
    validity, offsets, data, nulls = packed
    return BinaryArray(dtype, len(values), (validity, offsets, data), (), nulls)._mark_built()


_MAX_DATA_BUFFER = 2 ** 31 - 1
_BLOCK = 1 << 16


def binary_views(lengths, data, dtype, mask):
    """16-byte views: length + inline bytes (<= 12), else length, prefix, buffer index, offset.

    Long values (> 12 bytes) go, in order, into data buffers of at most 2 GiB each; a view's
    length and offset are int32, so a longer value is refused (as pyarrow refuses it) rather
    than written with its length wrapped.
    """
    n = len(lengths)
    over = np.flatnonzero(lengths > _MAX_DATA_BUFFER)
    if over.size:
        i = int(over[0])
        raise ArrowInvalid(f"{dtype} at index {i}: a value of {int(lengths[i]):,} bytes; a view "
                           f"holds at most {_MAX_DATA_BUFFER:,}")
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    buf = np.frombuffer(data, dtype=np.uint8)
    views = np.zeros((n, 16), dtype=np.uint8)
    views[:, :4] = lengths.astype("<i4").view(np.uint8).reshape(n, 4)
    k = np.arange(12)
    for lo in range(0, n, _BLOCK):  # the first (up to) 12 bytes of each value, a block at a time
        hi = min(lo + _BLOCK, n)
        inside = k < np.minimum(lengths[lo:hi], 12)[:, None]
        if buf.size:
            idx = np.minimum(starts[lo:hi, None] + k, buf.size - 1)
            views[lo:hi, 4:] = np.where(inside, buf[idx], 0)
    long = lengths > 12
    buffers = []
    if long.any():
        sizes = lengths[long]
        payload = buf[np.repeat(long, lengths)]
        offsets = np.zeros(len(sizes), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        index = np.zeros(len(sizes), dtype=np.int64)
        if payload.size > _MAX_DATA_BUFFER:  # split between values into buffers of <= 2 GiB
            base, which = 0, 0
            for j, (off, size) in enumerate(zip(offsets.tolist(), sizes.tolist())):
                if off + size - base > _MAX_DATA_BUFFER:
                    buffers.append(as_view(payload[base:off]))
                    base, which = off, which + 1
                index[j], offsets[j] = which, off - base
            buffers.append(as_view(payload[base:]))
        else:
            buffers.append(as_view(payload))
        views[long, 8:12] = index.astype("<i4").view(np.uint8).reshape(-1, 4)
        views[long, 12:] = offsets.astype("<i4").view(np.uint8).reshape(-1, 4)
    validity, nulls = validity_from_mask(mask)
    return make_array(dtype, n, [validity, as_view(views.reshape(-1)), *buffers], null_count=nulls)


def _fixed_binaries(values, dtype, fp):
    mask, lengths, data = _blobs(values, dtype, fp)
    width = dtype.byte_width
    valid = np.ones(len(lengths), bool) if mask is None else ~mask
    wrong = np.flatnonzero(valid & (lengths != width))
    if wrong.size:
        i = int(wrong[0])
        _fail(values[i], dtype, f"expected {width} bytes, got {lengths[i]}", i)
    out = np.zeros((len(lengths), width), dtype=np.uint8)
    if width:
        out[valid] = np.frombuffer(data, dtype=np.uint8).reshape(-1, width)
    validity, nulls = validity_from_mask(mask)
    return make_array(dtype, len(lengths), [validity, as_view(out.reshape(-1))], null_count=nulls)


# -- nested ---------------------------------------------------------------------------------

def _as_items(v, dtype, i):
    if isinstance(v, _SEQUENCE) and not (isinstance(v, np.ndarray) and v.ndim != 1):
        return v if isinstance(v, list) else list(v)
    _fail(v, dtype, "expected a list, tuple, set or 1-D numpy array", i)


def _child(values, field: t.Field, fp, locate):
    """Convert the child values of ``field`` into its storage (an extension's values, such as
    UUIDs, unwrapped first, as at the top level); map a child error's index back to (row,
    position) via ``locate``."""
    ext = field.extension_type
    if ext is not None and type(ext).unwrap_value is not t.ExtensionType.unwrap_value:
        values = [v if is_null(v, fp) else ext.unwrap_value(v) for v in values]
    try:
        return convert(values, field.storage_type, fp)
    except ConversionError as exc:
        exc.path[:1] = locate(exc.path[0])
        raise


def _locator(starts):
    starts = np.asarray(starts, dtype=np.int64)

    def locate(k):
        row = int(np.searchsorted(starts, k, side="right")) - 1
        return [row, int(k - starts[row])]
    return locate


def _lists(values, dtype, fp):
    mask = _null_mask(values, fp)
    n = len(values)
    flat, sizes = [], [0] * n
    fixed = dtype.list_size if isinstance(dtype, t.FixedSizeListType) else None
    isnull = _flags(mask, n)
    for i, v in enumerate(values):
        if isnull[i]:
            if fixed:
                flat.extend([None] * fixed)
                sizes[i] = fixed
            continue
        items = _as_items(v, dtype, i)
        if fixed is not None and len(items) != fixed:
            _fail(v, dtype, f"expected {fixed} items, got {len(items)}", i)
        sizes[i] = len(items)
        flat.extend(items)
    size_arr = np.array(sizes, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(size_arr, out=offsets[1:])
    child = _child(flat, dtype.value_field, fp, _locator(offsets[:-1]))
    validity, nulls = validity_from_mask(mask)
    if fixed is not None:
        return make_array(dtype, n, [validity], [child], null_count=nulls)
    if not dtype.large and offsets[-1] > np.iinfo(np.int32).max:
        raise ArrowInvalid(f"{offsets[-1]} child values overflow the 32-bit offsets of {dtype}")
    odt = dtype.offset_dtype
    bufs = [as_view(offsets[:-1].astype(odt)), as_view(size_arr.astype(odt))] \
        if isinstance(dtype, t.ListViewType) else [as_view(offsets.astype(odt))]
    return make_array(dtype, n, [validity, *bufs], [child], null_count=nulls)


def _struct_row(v, dtype, names, i):
    if isinstance(v, dict):
        if v and not isinstance(next(iter(v)), str):
            v = {k.decode("utf-8") if isinstance(k, bytes) else k: x for k, x in v.items()}
        return [v.get(name) for name in names]
    if isinstance(v, tuple):
        if len(v) != len(names):
            _fail(v, dtype, f"a tuple needs one value per field ({len(names)})", i)
        return list(v)
    if isinstance(v, list) and all(isinstance(p, tuple) and len(p) == 2 for p in v):
        return _struct_row(dict(v), dtype, names, i)
    _fail(v, dtype, "expected a dict, a tuple or a list of (name, value) pairs", i)


def _structs(values, dtype, fp):
    mask = _null_mask(values, fp)
    names = [f.name for f in dtype.fields]
    dicts = _filled(values, mask, {})
    if _kinds(dicts) <= {dict} and _kinds(chain.from_iterable(dicts)) <= {str}:
        columns = [[d.get(name) for d in dicts] for name in names]
    else:
        none_row = [None] * len(names)
        isnull = _flags(mask, len(values))
        rows = [none_row if isnull[i] else _struct_row(v, dtype, names, i)
                for i, v in enumerate(values)]
        columns = [[r[j] for r in rows] for j in range(len(names))]
    children = [_child(col, f, fp, lambda k, f=f: [k, "." + f.name])
                for col, f in zip(columns, dtype.fields)]
    validity, nulls = validity_from_mask(mask)
    return make_array(dtype, len(values), [validity], children, null_count=nulls)


def _map_pairs(v, dtype, i):
    if isinstance(v, dict):
        return list(v.items())
    if isinstance(v, (list, tuple)):
        pairs = []
        for p in v:
            if isinstance(p, dict) and len(p) == 2 and "key" in p and "value" in p:
                pairs.append((p["key"], p["value"]))
            elif isinstance(p, (tuple, list)) and len(p) == 2:
                pairs.append(tuple(p))
            else:
                _fail(v, dtype, "expected (key, value) pairs", i)
        return pairs
    _fail(v, dtype, "expected a dict or a list of (key, value) pairs", i)


def _maps(values, dtype, fp):
    mask = _null_mask(values, fp)
    n = len(values)
    keys, items, sizes = [], [], [0] * n
    isnull = _flags(mask, n)
    for i, v in enumerate(values):
        if isnull[i]:
            continue
        pairs = _map_pairs(v, dtype, i)
        for k, _ in pairs:
            if is_null(k, fp):
                _fail(v, dtype, "map keys cannot be null", i)
        sizes[i] = len(pairs)
        keys.extend(k for k, _ in pairs)
        items.extend(x for _, x in pairs)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.array(sizes, dtype=np.int64), out=offsets[1:])
    locate = _locator(offsets[:-1])
    key_arr = _child(keys, dtype.key_field, fp, lambda k: locate(k) + [".key"])
    item_arr = _child(items, dtype.item_field, fp, lambda k: locate(k) + [".value"])
    entries = make_array(dtype.entries.type, len(keys), [None], [key_arr, item_arr], null_count=0)
    validity, nulls = validity_from_mask(mask)
    return make_array(dtype, n, [validity, as_view(offsets.astype(np.int32))], [entries],
                      null_count=nulls)


def _accepts(dtype, v, fp) -> bool:
    try:
        convert([v], dtype, fp)
        return True
    except (ArrowError, TypeError, ValueError, OverflowError):
        return False


def _unions(values, dtype, fp):
    """Each value goes to the first child type that accepts it (None: a null in child 0)."""
    fields, codes = dtype.fields, dtype.type_codes
    n = len(values)
    picks = [0] * n
    for i, v in enumerate(values):
        if is_null(v, fp):
            continue
        for j, f in enumerate(fields):
            if _accepts(f.storage_type, v, fp):
                picks[i] = j
                break
        else:
            _fail(v, dtype, "no union member type accepts it", i)
    if not fields:
        if n:
            _fail(values[0], dtype, "the union has no member types", 0)
    type_ids = np.array([codes[j] for j in picks] if fields else [], dtype=np.int8)
    if dtype.mode == "sparse":
        children = [convert([v if p == j else None for v, p in zip(values, picks)], f.storage_type, fp)
                    for j, f in enumerate(fields)]
        return make_array(dtype, n, [as_view(type_ids)], children, null_count=0)
    per_child = [[] for _ in fields]
    offsets = np.empty(n, dtype=np.int32)
    for i, (v, p) in enumerate(zip(values, picks)):
        offsets[i] = len(per_child[p])
        per_child[p].append(v)
    children = [convert(vals, f.storage_type, fp) for vals, f in zip(per_child, fields)]
    return make_array(dtype, n, [as_view(type_ids), as_view(offsets)], children, null_count=0)


def _hashable(v):
    if isinstance(v, float):  # by its bits, as pyarrow: 0.0 and -0.0, NaN payloads differ
        return ("float", struct.pack("<d", v))
    if isinstance(v, list):
        return ("list", tuple(_hashable(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, tuple):
        return ("tuple", tuple(_hashable(x) for x in v))
    return (type(v).__name__, v)


_SIMPLE_KINDS = ({str}, {bytes}, {int})


def _canonical(values, dtype, fp, mask):
    """Hashable stand-ins for ``values`` as ``dtype`` stores them (None at nulls).

    Plain str / bytes / int values stand for themselves; anything else is converted and read
    back, so that values which store the same (``1`` and ``1.0`` as a double) compare equal.
    """
    clean = _filled(values, mask, None)
    kinds = _kinds(clean) - {_NONE}
    if any(kinds <= simple for simple in _SIMPLE_KINDS):
        return clean
    converted = convert(values, dtype, fp).to_pylist(temporal="int")
    return [None if c is None else _hashable(c) for c in converted]


def _dictionaries(values, dtype, fp):
    """Unique values in order of first appearance; indices of ``dtype.index_type``."""
    mask = _null_mask(values, fp)
    canon = _canonical(values, dtype.value_type, fp, mask)
    seen, first, indices = {}, [], [0] * len(values)
    for i, c in enumerate(canon):
        if c is None:
            continue
        j = seen.setdefault(c, len(first))
        if j == len(first):
            first.append(i)
        indices[i] = j
    limit = np.iinfo(dtype.index_type.numpy_dtype).max
    if len(first) - 1 > limit:
        raise ArrowInvalid(f"{len(first)} distinct values overflow the {dtype.index_type} "
                           f"indices of {dtype}")
    dictionary = convert([values[i] for i in first], dtype.value_type, fp)
    validity, nulls = validity_from_mask(mask)
    data = np.array(indices, dtype=dtype.index_type.numpy_dtype)
    return make_array(dtype, len(values), [validity, as_view(data)], null_count=nulls,
                      dictionary=dictionary)


def _run_end_encoded(values, dtype, fp):
    """Runs of equal consecutive values (nulls make runs too)."""
    values_type = dtype.value_field.storage_type  # (the layout: an extension's storage)
    canon = _canonical(values, values_type, fp, _null_mask(values, fp))
    n = len(values)
    starts = [i for i in range(n) if i == 0 or canon[i] != canon[i - 1]]
    ends = starts[1:] + [n] if n else []
    limit = np.iinfo(dtype.run_end_type.numpy_dtype).max
    if n > limit:
        raise ArrowInvalid(f"{n} values overflow the {dtype.run_end_type} run ends of {dtype}")
    run_ends = make_array(dtype.run_end_type, len(ends),
                          [None, as_view(np.array(ends, dtype=dtype.run_end_type.numpy_dtype))],
                          null_count=0)
    run_values = convert([values[i] for i in starts], values_type, fp)
    return make_array(dtype, n, [], [run_ends, run_values], null_count=0)


_CONVERTERS = {
    t.NullType: _null, t.BoolType: _bools, t.IntType: _ints, t.FloatType: _floats,
    t.DecimalType: _decimals, t.DateType: _temporal(_date_int), t.TimeType: _temporal(_time_int),
    t.TimestampType: _temporal(_timestamp_int), t.DurationType: _temporal(_duration_int),
    t.IntervalType: _intervals, t.BinaryType: _binaries, t.BinaryViewType: _binary_views,
    t.FixedSizeBinaryType: _fixed_binaries, t.ListType: _lists, t.ListViewType: _lists,
    t.FixedSizeListType: _lists, t.StructType: _structs, t.MapType: _maps,
    t.UnionType: _unions, t.DictionaryType: _dictionaries, t.RunEndEncodedType: _run_end_encoded,
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"Python values to an array": _CONVERTERS}


def convert(values: list, dtype: t.DataType, from_pandas: bool = False) -> Array:
    """An Array of ``dtype`` holding ``values`` (a list; None is null)."""
    if not isinstance(values, list):
        values = list(values)
    try:
        conv = _CONVERTERS[type(dtype)]
    except KeyError:
        raise ArrowInvalid(f"cannot build arrays of {dtype!r}") from None
    return conv(values, dtype, from_pandas)
