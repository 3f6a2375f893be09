"""Judging an ``Expression`` over one batch's columns: a boolean mask with validity.

pyarrow's semantics: a comparison with a null (row or scalar) is null; ``&`` and ``|`` follow
Kleene's logic (false AND null is false, true OR null is true); ``isin`` and ``is_null`` are
never null; a filter keeps the rows where the mask is true (null drops the row).  A row is
null when its value reads as None (``Array.logical_validity``): a dictionary index pointing at
a null value, a null run of a run-end encoded column, a union slot whose child value is null.

Each leaf costs one pass over its column in ``_kernels`` (numbers, booleans, dates, times,
timestamps and durations, decimals, binary and strings; a dictionary column is judged over
its dictionary, then its indices); other types (views, fixed-size binary) are judged value by
value in Python, slower but exact.  A scalar that cannot be compared with a column's type
raises ``ArrowInvalid`` naming the column, its type and the value.  A compared column (and the
column of ``is_null`` over a run-end encoded, dictionary or union column) is validated fully
first, once per array: a damaged value raises as ``to_pylist`` would instead of being judged
as another.
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Callable, Optional, Tuple

import numpy as np

from .. import types as t
from .._core._bitmap import unpack_bitmap
from ..arrays.array import (Array, BinaryArray, BooleanArray, DictionaryArray, NullArray,
                            PrimitiveArray)
from ..arrays.primitive import wide_int_sign
from ..errors import ArrowInvalid, ArrowNotImplementedError
from . import _kernels as k
from .expression import Expression
from .temporal import TEMPORAL, stored_units

__all__ = ["Mask", "evaluate", "selection_mask", "compare", "isin", "check_expression"]

#: (values, valid): numpy bool arrays of a batch's length; valid None when all are valid.
Mask = Tuple[np.ndarray, Optional[np.ndarray]]

#: Types whose nulls live below their own bitmap (a run's value, a dictionary value, a union
#: child's slot): ``is_null`` / ``is_valid`` read those values' bitmaps through offsets, run
#: ends or indices, so the column is checked fully first.
_NULLS_BELOW = (t.RunEndEncodedType, t.DictionaryType, t.UnionType)

_CODES = {"==": k.EQ, "!=": k.NE, "<": k.LT, "<=": k.LE, ">": k.GT, ">=": k.GE}


def _const(n: int, value: bool) -> np.ndarray:
    return np.full(n, value, dtype=np.bool_)


def _validity(array: Array) -> Optional[np.ndarray]:
    """The array's own validity bitmap as bools (None when it has no null): a dictionary's
    indices, a boolean column's slots.  A value's nullness is ``logical_validity``."""
    if isinstance(array, NullArray):
        return np.zeros(len(array), dtype=np.bool_)
    if not array.null_count:
        return None
    return unpack_bitmap(array.validity, array.offset, len(array))


# -- scalars in a column's terms -----------------------------------------------------------------
def _is_number(v) -> bool:
    return isinstance(v, (int, float, decimal.Decimal, np.integer, np.floating)) and \
        not isinstance(v, (bool, np.bool_))


def _exact(value) -> Optional[Fraction]:
    """A finite number as an exact fraction, or None for NaN and infinities."""
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            return None
        return Fraction(float(value))
    if isinstance(value, decimal.Decimal):
        return Fraction(value) if value.is_finite() else None
    return Fraction(int(value))


def _int_compare(x: np.ndarray, op: str, q: Fraction) -> np.ndarray:
    """Integers ``x`` compared exactly with the finite number ``q``."""
    n = len(x)
    info = np.iinfo(x.dtype)
    lo, hi = math.floor(q), math.ceil(q)
    if op in ("==", "!="):
        if lo == hi and info.min <= lo <= info.max:
            return k.compare_numeric(x, _CODES[op], lo)
        return _const(n, op == "!=")
    if op in ("<", ">="):  # x < q  <=>  x < ceil(q)
        if hi > info.max:
            return _const(n, op == "<")
        if hi <= info.min:
            return _const(n, op == ">=")
        return k.compare_numeric(x, _CODES[op], hi)
    # "<=", ">": x <= q  <=>  x <= floor(q)
    if lo >= info.max:
        return _const(n, op == "<=")
    if lo < info.min:
        return _const(n, op == ">")
    return k.compare_numeric(x, _CODES[op], lo)


def _int_infinite(x: np.ndarray, op: str, value: float) -> np.ndarray:
    """Integers compared with +inf or -inf."""
    if value > 0:
        return _const(len(x), op in ("!=", "<", "<="))
    return _const(len(x), op in ("!=", ">", ">="))


def _dictionary_rows(array: DictionaryArray, dmask: np.ndarray) -> np.ndarray:
    """A mask over a dictionary's values (nulls there False) spread to the rows by index."""
    dvalid = _validity(array.dictionary)
    if dvalid is not None:
        dmask = dmask & dvalid
    indices = array.indices  # (a method today; pyarrow's is a property)
    idx = (indices() if callable(indices) else indices).values().astype(np.intp)
    valid = _validity(array)
    if valid is not None:
        idx = np.where(valid, idx, 0)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= len(dmask)):
        if len(dmask) == 0 and valid is not None and not valid.any():
            return _const(len(idx), False)
        raise ArrowInvalid(f"filter: a dictionary index is outside the {len(dmask)}-value "
                           f"dictionary")
    return dmask[idx]


def _stored_ints(array: PrimitiveArray) -> np.ndarray:
    return array.values().view(f"<i{array.type.byte_width}")


def _kind_error(name: str, dtype, what: str, value, op: str) -> ArrowInvalid:
    return ArrowInvalid(f"filter ({name!r} {op} {value!r}): column {name!r} is {dtype}: it "
                        f"compares with {what}, got {type(value).__name__} {value!r}")


def _check_number(dtype, value, name: str, op: str) -> None:
    """ArrowInvalid unless ``value`` is a number a ``dtype`` column compares with: not a
    signaling NaN (Python compares and converts it with nothing), nor a NaN or infinite Decimal
    compared with integers (pyarrow cannot make either a scalar; their float spellings
    compare).  ``isin`` keeps such a Decimal: it is in no integer row."""
    if not _is_number(value):
        raise _kind_error(name, dtype, "a number", value, op)
    if not isinstance(value, decimal.Decimal) or value.is_finite():
        return
    where = f"filter ({name!r} {op} {value!r})"
    if value.is_snan():
        raise ArrowInvalid(f"{where}: a signaling NaN compares with nothing")
    if isinstance(dtype, t.IntType) and op != "in":
        raise ArrowInvalid(f"{where}: column {name!r} is {dtype}: a Decimal NaN or infinity "
                           f"does not compare with integers (nor in pyarrow); compare with "
                           f"float({str(value)!r})")


def _checked(array: Array, name: str, where: str) -> Array:
    """``array`` once its full validation passed (``Array._validated``: once per array), else
    ArrowInvalid starting with ``where``: the comparisons and sorts read the stored ints and
    bytes, so a value ``to_pylist`` refuses (a date64 not a whole day, a time64 past a day, a
    decimal past its precision, invalid UTF-8, a damaged dictionary or run) would be judged
    as some other value instead of raising."""
    try:
        return array._validated(f"column {name!r}")
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"{where}: {exc}") from None


def compare(array: Array, op: str, value, name: str = "?") -> Mask:
    """``array op value`` (``value`` a Python scalar; None gives all nulls)."""
    n = len(array)
    if value is None or isinstance(array, NullArray):
        return _const(n, False), _const(n, False)
    _checked(array, name, f"filter ({name!r} {op} {value!r})")
    valid = array.logical_validity()  # (a null dictionary value, run or union slot too)
    return _compare_values(array, op, value, name), valid


def _compare_values(array: Array, op: str, value, name: str) -> np.ndarray:
    dtype = array.type
    where = f"filter ({name!r} {op} {value!r})"
    if isinstance(array, DictionaryArray):
        # judge the dictionary once, then each row by its index
        return _dictionary_rows(array, _compare_values(array.dictionary, op, value, name))
    if type(array) is BooleanArray:
        if not isinstance(value, (bool, np.bool_)):
            raise _kind_error(name, dtype, "a bool", value, op)
        return k.compare_numeric(array.values().view(np.uint8), _CODES[op], int(value))
    if type(array) is PrimitiveArray and isinstance(dtype, t.IntType):
        _check_number(dtype, value, name, op)
        x = array.values()
        if isinstance(value, (float, np.floating)) and math.isinf(value):
            return _int_infinite(x, op, float(value))
        if isinstance(value, (float, np.floating)) and math.isnan(value):
            return _const(len(x), op == "!=")
        return _int_compare(x, op, _exact(value))
    if type(array) is PrimitiveArray and isinstance(dtype, t.FloatType):
        _check_number(dtype, value, name, op)
        x = array.values()
        if x.dtype.itemsize == 2:
            x = x.astype(np.float32)
        return k.compare_numeric(x, _CODES[op], float(value))
    if type(array) is PrimitiveArray and isinstance(dtype, TEMPORAL):
        return _int_compare(_stored_ints(array), op, stored_units(dtype, value, where))
    if type(array) is PrimitiveArray and isinstance(dtype, t.DecimalType):
        return _decimal_compare(array, op, value, name)
    if type(array) is BinaryArray:
        if dtype.utf8:
            if not isinstance(value, str):
                raise _kind_error(name, dtype, "a str", value, op)
            raw = value.encode("utf-8")
        else:
            if not isinstance(value, (bytes, bytearray)):
                raise _kind_error(name, dtype, "bytes", value, op)
            raw = bytes(value)
        return k.compare_binary(array._buffers[2], np.ascontiguousarray(array.value_offsets()),
                                _CODES[op], np.frombuffer(raw, dtype=np.uint8))
    _check_value(dtype, value, name, op)
    if isinstance(dtype, t.FixedSizeBinaryType):
        value = _binary_value(value)
    return _compare_slow(array, op, value, where)


def _decimal_compare(array: PrimitiveArray, op: str, value, name: str) -> np.ndarray:
    """A decimal column against a number, exactly, on the stored unscaled integers against the
    value times 10**scale: in C for values that fit an int64 (most money), word by word in
    numpy past it; a loop over Python Decimals took 6.7 s per million values."""
    dtype = array.type
    _check_number(dtype, value, name, op)
    raw = array.values()
    n = len(raw)
    exact = _exact(value)
    if exact is None:  # NaN (float or Decimal) equals nothing; an infinity is past every value
        if value != value:
            return _const(n, op == "!=")
        return _int_infinite(raw, op, float(value))
    q = exact * Fraction(10) ** dtype.scale
    if dtype.bit_width <= 64:
        return _int_compare(raw, op, q)
    words = np.ascontiguousarray(raw).view("<u8").reshape(n, dtype.bit_width // 64)
    low = words[:, 0].view("<i8")
    if (words[:, 1:] == (low >> 63).view("<u8")[:, None]).all():  # every value fits an int64
        return _int_compare(low, op, q)
    lo, hi = math.floor(q), math.ceil(q)
    if op in ("==", "!=") and lo != hi:
        return _const(n, op == "!=")
    bound = hi if op in ("<", ">=") else lo  # x < q <=> x < ceil(q); x <= q <=> x <= floor(q)
    top = 2 ** (dtype.bit_width - 1)
    if bound >= top:  # past every value the type holds
        return _const(n, op in ("!=", "<", "<="))
    if bound < -top:
        return _const(n, op in ("!=", ">", ">="))
    sign = wide_int_sign(words, bound)
    return {"==": sign == 0, "!=": sign != 0, "<": sign < 0, "<=": sign <= 0,
            ">": sign > 0, ">=": sign >= 0}[op]


_PYOPS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


_NESTED = (t.ListType, t.ListViewType, t.FixedSizeListType, t.StructType, t.MapType,
           t.UnionType)


def _compare_slow(array: Array, op: str, value, where: str) -> np.ndarray:
    """Value by value in Python (views, fixed-size binary, ...): exact, slower."""
    if isinstance(array.type, _NESTED):
        raise ArrowNotImplementedError(f"{where}: comparisons of {array.type} values are not "
                                       f"supported")
    f = _PYOPS[op]
    out = np.zeros(len(array), dtype=np.bool_)
    for i, v in enumerate(array.to_pylist()):
        if v is not None:
            try:
                out[i] = bool(f(v, value))
            except TypeError:
                raise ArrowInvalid(f"{where}: cannot compare a {array.type} value "
                                   f"({type(v).__name__}) with {type(value).__name__}") from None
    return out


def isin(array: Array, values, name: str = "?") -> Mask:
    """Whether each row is one of ``values``: a null row matches when ``values`` holds None
    (pyarrow's ``is_in``, ``null_matching_behavior="MATCH"``); never null."""
    n = len(array)
    nulls_match = any(v is None for v in values)
    values = [v for v in values if v is not None]
    _checked(array, name, f"filter ({name!r} in {values!r})")
    valid = array.logical_validity()
    hit = _isin_values(array, values, name) if not isinstance(array, NullArray) else \
        _const(n, False)
    if valid is not None:
        hit = np.where(valid, hit, nulls_match)
    return hit, None


def _isin_values(array: Array, values, name: str) -> np.ndarray:
    dtype = array.type
    n = len(array)
    where = f"filter ({name!r} in {values!r})"
    if isinstance(array, DictionaryArray):
        return _dictionary_rows(array, _isin_values(array.dictionary, values, name))
    if not values:
        return _const(n, False)
    if type(array) is BooleanArray:
        for v in values:
            if not isinstance(v, (bool, np.bool_)):
                raise _kind_error(name, dtype, "a bool", v, "in")
        x = array.values()
        return np.isin(x, np.array([bool(v) for v in values], dtype=np.bool_))
    if type(array) is PrimitiveArray and isinstance(dtype, (t.IntType,) + TEMPORAL):
        if isinstance(dtype, t.IntType):
            for v in values:
                _check_number(dtype, v, name, "in")
            qs = [_exact(v) for v in values]
            x = array.values()
        else:
            qs = [stored_units(dtype, v, where) for v in values]
            x = _stored_ints(array)
        info = np.iinfo(x.dtype)
        keep = sorted({int(q) for q in qs if q is not None and q.denominator == 1
                       and info.min <= q <= info.max})
        if not keep:
            return _const(n, False)
        return np.isin(x, np.array(keep, dtype=x.dtype))
    if type(array) is PrimitiveArray and isinstance(dtype, t.FloatType):
        for v in values:
            _check_number(dtype, v, name, "in")
        x = array.values()
        floats = [float(v) for v in values]
        own = []  # the set in the column's type, as pyarrow casts it: float32 rows holding
        for f in floats:  # 0.1 are in [0.1] (comparisons, as pyarrow's, are in float64)
            with np.errstate(over="ignore"):
                g = x.dtype.type(f)
            if not np.isinf(g) or math.isinf(f):  # (too large for the type: in no row)
                own.append(g)
        hit = np.isin(x, np.array(own, dtype=x.dtype))
        if any(math.isnan(v) for v in floats):
            hit |= np.isnan(x)  # (NaN is in a set holding NaN, as in pyarrow's is_in)
        return hit
    if type(array) is BinaryArray:
        if dtype.utf8:
            if not all(isinstance(v, str) for v in values):
                raise _kind_error(name, dtype, "a str", next(v for v in values
                                                             if not isinstance(v, str)), "in")
            raws = sorted({v.encode("utf-8") for v in values})
        else:
            if not all(isinstance(v, (bytes, bytearray)) for v in values):
                raise _kind_error(name, dtype, "bytes", next(
                    v for v in values if not isinstance(v, (bytes, bytearray))), "in")
            raws = sorted({bytes(v) for v in values})
        set_offsets = np.zeros(len(raws) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in raws], out=set_offsets[1:])
        set_data = np.frombuffer(b"".join(raws), dtype=np.uint8)
        return k.isin_binary(array._buffers[2], np.ascontiguousarray(array.value_offsets()),
                             set_data, set_offsets)
    for v in values:
        _check_value(dtype, v, name, "in")
    if isinstance(dtype, t.FixedSizeBinaryType):
        values = [_binary_value(v) for v in values]
    out = np.zeros(n, dtype=np.bool_)
    for i, v in enumerate(array.to_pylist()):
        if v is not None:
            out[i] = any(_same(v, w) for w in values)
    return out


def _binary_value(value) -> bytes:
    """A fixed-size binary column's filter value as bytes: a str is its UTF-8 bytes (pyarrow
    casts it to the column's type; compared as binary, any length)."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except TypeError:
        return False


# -- the tree --------------------------------------------------------------------------------------
def evaluate(expr: Expression, column: Callable[[str], Array], n: int) -> Mask:
    """``expr`` over the ``n`` rows whose column ``name`` is ``column(name)``."""
    kind, args = expr.kind, expr.args
    if kind == "compare":
        op, ref, value = args
        return compare(_column(column, ref.args[0], n), op, value, ref.args[0])
    if kind == "isin":
        return isin(_column(column, args[0].args[0], n), args[1], args[0].args[0])
    if kind in ("is_null", "is_valid"):
        array = _column(column, args[0].args[0], n)
        if isinstance(array.type, _NULLS_BELOW):
            _checked(array, args[0].args[0], f"filter ({kind} {args[0].args[0]!r})")
        valid = array.logical_validity()
        if valid is None:
            return _const(n, kind == "is_valid"), None
        return (~valid if kind == "is_null" else valid), None
    if kind == "and" or kind == "or":
        a, av = evaluate(args[0], column, n)
        b, bv = evaluate(args[1], column, n)
        f = k.kleene_and if kind == "and" else k.kleene_or
        return f(a.view(np.uint8), av, b.view(np.uint8), bv)
    if kind == "not":
        a, av = evaluate(args[0], column, n)
        return ~a, av
    if kind == "field":
        array = _column(column, args[0], n)
        if not isinstance(array.type, t.BoolType):
            raise ArrowInvalid(f"filter: column {args[0]!r} is {array.type}, not bool: a field "
                               f"alone is a predicate only when it holds booleans")
        return array.values().copy(), _validity(array)
    raise ArrowInvalid(f"filter: {expr!r} is not a predicate")


def _column(column: Callable[[str], Array], name: str, n: int) -> Array:
    array = column(name)
    if len(array) != n:
        raise ArrowInvalid(f"filter: column {name!r} has {len(array)} rows, the batch {n}")
    return array


def selection_mask(expr: Expression, column: Callable[[str], Array], n: int) -> np.ndarray:
    """The rows ``expr`` keeps: true, not null (a bool numpy array)."""
    values, valid = evaluate(expr, column, n)
    return values if valid is None else values & valid


def check_expression(expr: Expression, field_type: Callable[[str], t.DataType]) -> None:
    """ArrowInvalid when a leaf's value cannot be compared with its column's type
    (``field_type(name)``), checked before any data is read: a mistyped filter never
    quietly matches nothing."""
    for leaf in _leaves(expr):
        if leaf.kind in ("is_null", "is_valid"):
            continue
        if leaf.kind == "field":
            name = leaf.args[0]
            dtype = field_type(name)
            if not isinstance(dtype, t.BoolType):
                raise ArrowInvalid(f"filter: column {name!r} is {dtype}, not bool: a field "
                                   f"alone is a predicate only when it holds booleans")
            continue
        name = leaf.args[1].args[0] if leaf.kind == "compare" else leaf.args[0].args[0]
        dtype = field_type(name)
        values = [leaf.args[2]] if leaf.kind == "compare" else list(leaf.args[1])
        op = leaf.args[0] if leaf.kind == "compare" else "in"
        for v in values:
            if v is not None:
                _check_value(dtype, v, name, op)


def _check_value(dtype, v, name: str, op: str) -> None:
    if isinstance(dtype, t.DictionaryType):
        dtype = dtype.value_type
    if isinstance(dtype, t.RunEndEncodedType):  # (judged by its values' type, as a dictionary)
        dtype = dtype.value_field.storage_type
    if isinstance(dtype, t.BoolType):
        if not isinstance(v, (bool, np.bool_)):
            raise _kind_error(name, dtype, "a bool", v, op)
    elif isinstance(dtype, (t.IntType, t.FloatType, t.DecimalType)):
        _check_number(dtype, v, name, op)
    elif isinstance(dtype, TEMPORAL):
        stored_units(dtype, v, f"filter ({name!r} {op} {v!r})")
    elif isinstance(dtype, (t.BinaryType, t.BinaryViewType)):
        if dtype.utf8 and not isinstance(v, str):
            raise _kind_error(name, dtype, "a str", v, op)
        if not dtype.utf8 and not isinstance(v, (bytes, bytearray)):
            raise _kind_error(name, dtype, "bytes", v, op)
    elif isinstance(dtype, t.FixedSizeBinaryType):
        if not isinstance(v, (bytes, bytearray, str)):
            raise _kind_error(name, dtype, "bytes (or a str: its UTF-8 bytes)", v, op)
    elif isinstance(dtype, _NESTED):  # (isin compared a list with a number: never equal)
        raise ArrowNotImplementedError(f"filter ({name!r} {op} {v!r}): comparisons of {dtype} "
                                       f"values are not supported")
    elif isinstance(dtype, t.IntervalType):  # (pyarrow has no comparison of intervals)
        raise ArrowInvalid(f"filter ({name!r} {op} {v!r}): column {name!r} is {dtype}: "
                           f"intervals do not compare with a value")


def _leaves(expr: Expression):
    if expr.kind in ("and", "or"):
        yield from _leaves(expr.args[0])
        yield from _leaves(expr.args[1])
    elif expr.kind == "not":
        yield from _leaves(expr.args[0])
    else:
        yield expr
