"""Casts to and from decimals (32, 64, 128 and 256 bits), value for value as pyarrow's.

Decimals are worked on as their unscaled Python integers, exactly:

* decimal to decimal rescales, toward zero; ``safe`` raises pyarrow's "Rescaling Decimal value
  would cause data loss" when digits are cut and "Decimal value does not fit in precision P"
  beyond the precision; unsafe keeps the low bits of the target's width.  (pyarrow narrows a
  wider decimal to 32 bits before it rescales into a decimal32, so that even a safe cast of
  12345.5 as decimal128(38, 10) to decimal32(5, 0) gives 0: arrowmm rescales first, and
  raises or gives 12345);
* decimal to integer likewise ("Integer value out of bounds" past the integer's range);
* integer to decimal needs a precision that holds every value of the integer type plus the
  scale, whatever the values (pyarrow's rule, safe or not), and a scale of at least 0;
* decimal to float32/float64 is correctly rounded (pyarrow's C++ is not always: it can differ
  in the last bit, and arrowmm gives the nearest float);
* decimal to string writes Python's ``str`` of the decimal (``1.23``, ``1E-7``, ``1.2E+3``:
  the same rule pyarrow uses);
* text to decimal reads pyarrow's grammar (a sign, digits with a point, an exponent read as
  pyarrow's int32, whose -2**31 it refuses), then rescales as above; a text too long for the type's width even unsafe is an error (pyarrow
  returns a wrapped value);
* float to decimal rounds the float's exact binary value half to even at the scale (pyarrow
  26 can be a unit off: -351617131.2784098 as decimal64(18, 9) ends in 780 where the exact
  value gives 779, and into a decimal32 it works in float32); unsafe, what does not fit is
  0, as pyarrow.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from typing import Optional

import numpy as np

from .. import types as t
from .._core._region import as_view
from ..arrays.array import Array, make_array
from ..errors import ArrowInvalid
from ._cast import decimals128_to_floats, format_decimals128, parse_texts, rescale_decimals128
from .from_python import convert, validity_from_mask

__all__ = ["cast_decimal"]

_NUMBER = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\Z", re.ASCII)
_INT_DIGITS = {1: 3, 2: 5, 4: 10, 8: 19}  # decimal digits of an integer type's widest value
_LOSS = "Rescaling Decimal value would cause data loss"
_MOST_DIGITS = 80  # more digits than a decimal256 holds (76), whatever the scale


def _unscaled(array: Array) -> list:
    """The unscaled integer of each row, nulls as 0."""
    raw = np.asarray(array.values())
    width = array.type.byte_width
    if width <= 8:
        ints = raw.astype(np.int64).tolist()
    else:
        data = raw.tobytes()
        ints = [int.from_bytes(data[i:i + width], "little", signed=True)
                for i in range(0, len(data), width)]
    if array.null_count:
        valid = array.validity_mask()
        ints = [v if ok else 0 for v, ok in zip(ints, valid.tolist())]
    return ints


def _wrapped(value: int, bits: int) -> int:
    """``value``'s low ``bits`` bits as a signed integer (what C keeps)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _with_ints(array: Array, want, ints: list) -> Array:
    """``ints`` (one per row of ``array``) as an array of ``want`` with ``array``'s nulls."""
    width = want.byte_width
    if isinstance(want, t.DecimalType) and width > 8:
        data = np.frombuffer(b"".join(v.to_bytes(width, "little", signed=True) for v in ints),
                             dtype=np.uint8)
    else:
        data = np.array(ints, dtype=want.numpy_dtype)
    return _of_values(array, want, data)


def _of_values(array: Array, want, data: np.ndarray) -> Array:
    """An array of ``want`` over ``data`` (its values, one per row) with ``array``'s nulls."""
    validity, nulls = validity_from_mask(~array.validity_mask() if array.null_count else None)
    return make_array(want, len(array), [validity, as_view(data)], null_count=nulls)


def _integers(array: Array, want, values: np.ndarray, safe: bool) -> Optional[Array]:
    """int64 ``values`` as an integer array of ``want``: the low bits unsafe (as C keeps
    them); None when safe and one is out of its range (the exact path raises, in pyarrow's
    words)."""
    if safe:
        info = np.iinfo(want.numpy_dtype)
        if values.size and (values.min() < int(info.min) or values.max() > int(info.max)):
            return None
    with np.errstate(over="ignore"):
        return _of_values(array, want, values.astype(want.numpy_dtype))


def _rescaled(value: int, shift: int, safe: bool) -> int:
    """``value`` times ``10 ** shift``, toward zero; ArrowInvalid (safe) when digits are cut."""
    if shift >= 0:
        return value * 10 ** shift
    quotient, rest = divmod(abs(value), 10 ** -shift)
    if rest and safe:
        raise ArrowInvalid(_LOSS)
    return -quotient if value < 0 else quotient


def _fit(values: list, want, safe: bool, working: int = 0) -> list:
    """``values`` checked against ``want``'s precision (safe) and kept to its width.  A value
    scaled up past the ``working`` width (pyarrow's: the wider of the two types', 32 bits
    into a decimal32) has pyarrow's words for an overflowing rescale."""
    bits = want.bit_width
    if safe:
        bound, width = 10 ** want.precision, 1 << ((working or 1024) - 1)
        for v in values:
            if not -bound < v < bound:
                if not -width <= v < width:  # (pyarrow's words for a scale-up that overflows)
                    raise ArrowInvalid(_LOSS)
                raise ArrowInvalid(f"Decimal value does not fit in precision {want.precision}")
        return values
    return [_wrapped(v, bits) for v in values]


def _representable(values: list, want, texts: list, safe: bool) -> list:
    """Parsed ``values`` that fit ``want``'s width (pyarrow checks a decimal32 or decimal64
    before the precision; arrowmm checks every width unsafe, where pyarrow would wrap)."""
    if want.bit_width <= 64 or not safe:
        limit = 1 << (want.bit_width - 1)
        for v, text in zip(values, texts):
            if not -limit <= v < limit:
                raise ArrowInvalid(f"The string '{text}' cannot be represented as "
                                   f"{_kind(want)}")
    return _fit(values, want, safe)


def _kind(dtype: t.DecimalType) -> str:
    return f"decimal{dtype.bit_width}"


def _parsed(text: str, want, safe: bool) -> int:
    """One text as the unscaled integer of ``want``, by pyarrow's grammar and rules."""
    if not text:
        raise ArrowInvalid(f"Empty string cannot be converted to {_kind(want)}")
    m = _NUMBER.match(text)
    if m is None or not (m.group(2) or m.group(3)):
        raise ArrowInvalid(f"The string '{text}' is not a valid {_kind(want)} number")
    sign, whole, fraction, exponent = m.groups()
    signed = 0
    if exponent is not None:  # (pyarrow reads an int32 there; no int() of thousands of digits)
        magnitude = exponent.lstrip("+-").lstrip("0")
        signed = int(("-" if exponent[0] == "-" else "") + (magnitude or "0")) \
            if len(magnitude) <= 10 else 2**31
        if not -2**31 <= signed < 2**31:
            raise ArrowInvalid(f"The string '{text}' is not a valid {_kind(want)} number")
        if signed == -2**31:  # (pyarrow refuses it, zero too: it cannot negate it)
            raise ArrowInvalid(f"The string '{text}' cannot be represented as {_kind(want)}")
    fraction = fraction or ""
    digits = (whole + fraction).lstrip("0")
    shift = signed - len(fraction) + want.scale
    if not digits:
        return 0
    if len(digits) > _MOST_DIGITS or len(digits) + shift > _MOST_DIGITS:  # (bounded work: no
        raise ArrowInvalid(f"The string '{text}' cannot be represented as {_kind(want)}")
    if len(digits) + shift < 0:  # (every digit cut: 10 ** -shift need not be worked out)
        if safe:
            raise ArrowInvalid(_LOSS)
        return 0
    value = _rescaled(int(digits), shift, safe)
    return -value if sign == "-" else value


def _nearest_float32(value: Decimal) -> float:
    """The float32 nearest ``value`` (ties to even): rounding to a double first is off only
    when the double falls exactly halfway between two float32s."""
    double = float(value)
    with np.errstate(over="ignore"):  # (past float32's range: infinity, as pyarrow)
        single = np.float32(double)
    if not np.isfinite(single) or float(single) == double:
        return float(single)
    below = single if float(single) < double else np.nextafter(single, np.float32(-np.inf))
    above = np.nextafter(below, np.float32(np.inf))
    middle = (Fraction(float(below)) + Fraction(float(above))) / 2
    if Fraction(double) != middle:
        return float(single)
    exact = Fraction(value)
    if exact != middle:
        return float(below if exact < middle else above)
    return float(below if int(below.view(np.uint32)) % 2 == 0 else above)


def _nearest_float32s(doubles: np.ndarray, unscaled: np.ndarray, scale: int) -> np.ndarray:
    """The float32 nearest each value, from its correctly rounded double: rounding the double
    again is off only where the double is exactly halfway between two float32s, and those
    few are settled exactly (``_nearest_float32``)."""
    with np.errstate(over="ignore"):
        singles = doubles.astype(np.float32)
    below = np.where(singles.astype(np.float64) <= doubles, singles,
                     np.nextafter(singles, np.float32(-np.inf)))
    above = np.nextafter(below, np.float32(np.inf))
    halfway = (below.astype(np.float64) + above.astype(np.float64)) / 2 == doubles
    halfway &= singles.astype(np.float64) != doubles
    for i in np.flatnonzero(halfway).tolist():
        singles[i] = _nearest_float32(_decimal(int(unscaled[i]), scale))
    return singles


def _decimal_text(value: int, scale: int) -> str:
    """``str`` of the decimal ``value * 10 ** -scale`` (Python's rule, pyarrow's too), by
    string work in the common case (a Decimal per value is several times slower)."""
    if scale >= 0:
        digits = str(-value if value < 0 else value)
        if len(digits) - 1 - scale >= -6:  # (plain notation)
            if scale:
                if len(digits) <= scale:
                    digits = "0" * (scale - len(digits) + 1) + digits
                digits = f"{digits[:-scale]}.{digits[-scale:]}"
            return "-" + digits if value < 0 else digits
    return str(_decimal(value, scale))


def _decimal(value: int, scale: int) -> Decimal:
    """The exact Decimal of an unscaled value (no context rounds it: Decimal arithmetic would,
    to 28 digits)."""
    return Decimal((1 if value < 0 else 0, tuple(int(c) for c in str(abs(value))), -scale))


# -- the common case in numpy: unscaled values that fit an int64 ----------------------------

_INT64_MAX = np.iinfo(np.int64).max


def _small(array: Array) -> Optional[np.ndarray]:
    """The unscaled values as int64 (nulls 0) when every one fits, else None."""
    raw = np.asarray(array.values())
    if array.type.byte_width <= 8:
        values = raw.astype(np.int64)
    else:
        # (the width, not -1: numpy cannot infer it for 0 rows)
        words = np.ascontiguousarray(raw).view("<u8").reshape(len(raw), array.type.byte_width // 8)
        low = words[:, 0].view("<i8")
        if not np.array_equal(words[:, 1:], np.repeat((low >> 63).view("<u8")[:, None],
                                                      words.shape[1] - 1, axis=1)):
            return None
        values = low.copy()
    if array.null_count:
        values[~array.validity_mask()] = 0
    if values.size and values.min() == np.iinfo(np.int64).min:
        return None  # (its magnitude is no int64)
    return values


def _scaled_fast(values: np.ndarray, shift: int, safe: bool) -> Optional[np.ndarray]:
    """``values * 10 ** shift`` toward zero in int64, or None where that would overflow or
    (safe) cut digits: the exact path then decides, with its words."""
    if shift >= 0:
        if shift > 18:
            return None if np.any(values) else values
        factor = 10 ** shift
        if values.size and int(np.abs(values).max()) > _INT64_MAX // factor:
            return None
        return values * factor
    if -shift > 18:
        return None
    divisor = 10 ** -shift
    magnitude = np.abs(values)
    if safe and np.any(magnitude % divisor):
        return None
    return np.where(values < 0, -(magnitude // divisor), magnitude // divisor)


def _decimal_array(array: Array, want, values: np.ndarray) -> Array:
    """int64 unscaled ``values`` as a decimal array of ``want`` (the low bits of a narrower
    width, the sign extended into a wider one), ``array``'s nulls."""
    width = want.byte_width
    if width <= 8:
        data = values.astype(want.numpy_dtype)
    else:
        words = np.empty((len(values), width // 8), dtype="<u8")
        words[:, 0] = values.view("<u8")
        words[:, 1:] = (values >> 63).view("<u8")[:, None]
        data = words.reshape(-1).view(np.uint8)
    return _of_values(array, want, data)


def _fast(array: Array, want, safe: bool) -> Optional[Array]:
    """The numeric casts of ``cast_decimal`` in numpy when every value fits an int64 and
    nothing fails; None to leave the cast (and its errors) to the exact path."""
    got = array.type
    small = _small(array) if isinstance(got, t.DecimalType) else None
    if isinstance(got, t.DecimalType) and small is None:
        return None
    if isinstance(got, t.DecimalType) and isinstance(want, t.DecimalType):
        out = _scaled_fast(small, want.scale - got.scale, safe)
        if out is None:
            return None
        if safe and want.precision <= 18 and out.size and \
                int(np.abs(out).max()) >= 10 ** want.precision:
            return None
        return _decimal_array(array, want, out)
    if isinstance(got, t.DecimalType) and isinstance(want, t.IntType):
        out = _scaled_fast(small, -got.scale, safe)
        if out is None:
            return None
        return _integers(array, want, out, safe)
    if isinstance(got, t.DecimalType) and isinstance(want, t.FloatType) and \
            want.byte_width in (4, 8):
        if not 0 <= got.scale <= 22 or (small.size and int(np.abs(small).max()) >= 1 << 53):
            return None
        # (an exact integer over an exact power of ten: one correctly rounded division)
        data = small.astype(np.float64) / 10.0 ** got.scale
        if want.byte_width == 4:
            data = _nearest_float32s(data, small, got.scale)
        return _of_values(array, want, data)
    if isinstance(got, t.FloatType) and got.byte_width > 2 and isinstance(want, t.DecimalType):
        return _floats_fast(array, want, safe)
    if isinstance(got, t.IntType) and isinstance(want, t.DecimalType):
        values = np.asarray(array.values())
        if got.byte_width == 8 and not got.signed:
            if values.size and int(values.max()) > _INT64_MAX:
                return None
        values = values.astype(np.int64)
        if array.null_count:
            values = np.where(array.validity_mask(), values, 0)
        out = _scaled_fast(values, want.scale, safe)
        return None if out is None else _decimal_array(array, want, out)
    return None


def _floats_fast(array: Array, want, safe: bool) -> Optional[Array]:
    """Floats to a decimal in numpy: ``x * 10**scale`` in a double is within half an ulp of
    the exact product, so rounding it is exact wherever it is further than that from a
    half-integer (and below 2**52); the rows near one are worked out exactly
    (``_from_float``).  None when a value does not fit or is not finite (the exact path
    raises or writes 0)."""
    if not -22 <= want.scale <= 22:
        return None
    x = np.asarray(array.values()).astype(np.float64)
    if array.null_count:
        x = np.where(array.validity_mask(), x, 0.0)
    with np.errstate(all="ignore"):
        product = x * 10.0 ** want.scale if want.scale >= 0 else x / 10.0 ** -want.scale
        magnitude = np.abs(product)
        if not np.all(np.isfinite(product)) or (magnitude.size and magnitude.max() >= 2.0**52):
            return None
        near = np.abs(magnitude - np.floor(magnitude) - 0.5) <= magnitude * 2.0**-50 + 1e-300
    out = np.rint(product).astype(np.int64)
    for i in np.flatnonzero(near).tolist():
        out[i] = _from_float(float(x[i]), want, True)
    if out.size and want.precision <= 18 and int(np.abs(out).max()) >= 10 ** want.precision:
        return None
    return _decimal_array(array, want, out)


# -- decimals past an int64: 128-bit integers in C ---------------------------------------------

def _words128(array: Array) -> Optional[np.ndarray]:
    """The unscaled values as (n, 2) little-endian uint64 words of 128-bit integers (a null's
    as stored: the C passes skip them) when every one fits 128 bits (a decimal256's may not:
    None)."""
    raw = np.asarray(array.values())
    width = array.type.byte_width
    if width <= 8:
        low = raw.astype(np.int64)
        words = np.empty((len(raw), 2), dtype="<u8")
        words[:, 0] = low.view("<u8")
        words[:, 1] = (low >> 63).view("<u8")
    else:
        wide = np.ascontiguousarray(raw).view("<u8").reshape(len(raw), width // 8)
        if width > 16 and not np.array_equal(
                wide[:, 2:], np.repeat((wide[:, 1].view("<i8") >> 63).view("<u8")[:, None],
                                       wide.shape[1] - 2, axis=1)):
            return None
        words = np.ascontiguousarray(wide[:, :2])
    return words


def _from_words(array: Array, want, words: np.ndarray) -> Array:
    """128-bit unscaled ``words`` as a decimal array of ``want`` (the low bits of a narrower
    width, the sign extended into a wider one), ``array``'s nulls."""
    width = want.byte_width
    if width <= 8:
        return _decimal_array(array, want, words[:, 0].view("<i8"))
    if width == 16:
        data = words.reshape(-1).view(np.uint8)
    else:
        wide = np.empty((len(words), width // 8), dtype="<u8")
        wide[:, :2] = words
        wide[:, 2:] = (words[:, 1].view("<i8") >> 63).view("<u8")[:, None]
        data = wide.reshape(-1).view(np.uint8)
    return _of_values(array, want, data)


def _wide(array: Array, want, safe: bool) -> Optional[Array]:
    """The casts from a decimal of ``cast_decimal`` in C (``_cast``) over 128-bit integers,
    where ``_fast`` cannot (values past an int64, or an int64 overflowed by the rescale);
    None to leave the cast, and any error, to the exact path.  (It was some 3-20 us a value
    there: 20-100x pyarrow's time.)"""
    got = array.type
    if not isinstance(got, t.DecimalType):
        return None
    utf8 = isinstance(want, (t.BinaryType, t.BinaryViewType)) and want.utf8
    if not isinstance(want, (t.DecimalType, t.IntType, t.FloatType)) and not utf8:
        return None
    if isinstance(want, t.FloatType) and want.byte_width not in (4, 8):
        return None
    words = _words128(array)
    if words is None:
        return None
    valid = array.validity_mask() if array.null_count else None
    flat = words.reshape(-1)
    if utf8:
        from .cast import text_array  # (cast dispatches here: a call-time import)
        return text_array(array, want, *format_decimals128(flat, valid, got.scale))
    if isinstance(want, t.FloatType):
        data = np.empty(len(array), dtype=np.float64 if want.byte_width == 8 else np.float32)
        decimals128_to_floats(flat, valid, got.scale, data)
        return _of_values(array, want, data)
    out = np.empty_like(words)
    shift = (want.scale if isinstance(want, t.DecimalType) else 0) - got.scale
    bound = want.precision if safe and isinstance(want, t.DecimalType) else 0
    if rescale_decimals128(flat, valid, shift, safe, bound, out.reshape(-1)) >= 0:
        return None
    if isinstance(want, t.DecimalType):
        return _from_words(array, want, out)
    low = out[:, 0].view("<i8")
    if not np.array_equal(out[:, 1], (low >> 63).view("<u8")):
        return None  # (past an int64: the exact path keeps the low bits, or raises)
    return _integers(array, want, low, safe)


def cast_decimal(array: Array, want, safe: bool) -> Optional[Array]:
    """``array`` cast to ``want`` where either is a decimal; None for a pair pyarrow does not
    cast (the caller says so).  Numeric casts of values that fit an int64 go through numpy
    (``_fast``), those of values that fit 128 bits through C (``_wide``); anything else, and
    every error, through exact Python integers."""
    got = array.type
    if isinstance(got, t.IntType) and isinstance(want, t.DecimalType):
        _check_integer_target(got, want)
    fast = _fast(array, want, safe)
    if fast is not None:
        return fast
    wide = _wide(array, want, safe)
    if wide is not None:
        return wide
    if isinstance(got, t.DecimalType) and isinstance(want, t.DecimalType):
        shift = want.scale - got.scale
        working = 0 if shift <= 0 else 32 if want.bit_width == 32 else \
            max(got.bit_width, want.bit_width)
        return _with_ints(array, want, _fit([_rescaled(v, shift, safe) for v in _unscaled(array)],
                                            want, safe, working=working))
    if isinstance(got, t.DecimalType) and isinstance(want, t.IntType):
        values = [_rescaled(v, -got.scale, safe) for v in _unscaled(array)]
        bits, signed = want.bit_width, want.signed
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if safe:
            if any(not lo <= v <= hi for v in values):
                raise ArrowInvalid("Integer value out of bounds")
        else:
            values = [v & ((1 << bits) - 1) for v in values]
            if signed:
                values = [_wrapped(v, bits) for v in values]
        return _with_ints(array, want, values)
    if isinstance(got, t.IntType) and isinstance(want, t.DecimalType):
        return _with_ints(array, want, [v * 10 ** want.scale for v in _unscaled_ints(array)])
    if isinstance(got, t.DecimalType) and isinstance(want, t.FloatType) and want.byte_width > 2:
        nearest = float if want.byte_width == 8 else _nearest_float32
        return _with_ints(array, want, [nearest(_decimal(v, got.scale))
                                        for v in _unscaled(array)])
    if isinstance(got, t.DecimalType) and isinstance(want, (t.BinaryType, t.BinaryViewType)) \
            and want.utf8:
        texts = [_decimal_text(v, got.scale) for v in _unscaled(array)]
        return convert(_nulled(array, texts), want)
    if isinstance(got, (t.BinaryType, t.BinaryViewType)) and isinstance(want, t.DecimalType):
        parsed = _plain_texts(array, want, safe)
        if parsed is not None:
            return parsed
        texts = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v
                 for v in array.to_pylist()]
        ints = [0 if text is None else _parsed(text, want, safe) for text in texts]
        return _with_ints(array, want, _representable(ints, want, texts, safe))
    if isinstance(got, t.FloatType) and got.byte_width > 2 and isinstance(want, t.DecimalType):
        floats = np.asarray(array.values()).astype(np.float64)
        if array.null_count:
            floats = np.where(array.validity_mask(), floats, 0.0)
        return _with_ints(array, want, [_from_float(x, want, safe) for x in floats.tolist()])
    return None


def _check_integer_target(got, want) -> None:
    """pyarrow's rule for an integer type to a decimal, whatever the values: a scale of at
    least 0, and a precision that holds the type's widest value at that scale."""
    if want.scale < 0:
        raise ArrowInvalid("Scale must be non-negative")
    need = _INT_DIGITS[got.byte_width] + (not got.signed and got.byte_width == 8) + want.scale
    if need > want.precision:
        raise ArrowInvalid(f"Precision is not great enough for the result. It should be "
                           f"at least {need}")


def _from_float(value: float, want, safe: bool) -> int:
    """The float's exact value, rounded half to even to ``want``'s scale; pyarrow's words
    (safe) or 0 (unsafe, as pyarrow) for what does not fit and for NaN and infinities."""
    if not math.isfinite(value):
        if safe:
            raise ArrowInvalid(f"Cannot convert {value} to Decimal128")
        return 0
    num, den = value.as_integer_ratio()  # (exact; integer work, a Fraction costs far more)
    if want.scale >= 0:
        num *= 10 ** want.scale
    else:
        den *= 10 ** -want.scale
    unscaled, rest = divmod(num, den)  # (floor: value = unscaled + rest / den, 0 <= rest < den)
    if 2 * rest > den or (2 * rest == den and unscaled % 2):
        unscaled += 1
    if abs(unscaled) >= 10 ** want.precision:
        if safe:
            raise ArrowInvalid(f"Cannot convert {value:f} to Decimal{want.bit_width}(precision = "
                               f"{want.precision}, scale = {want.scale}): overflow")
        return 0
    return unscaled


def _plain_texts(array: Array, want, safe: bool) -> Optional[Array]:
    """Texts in plain notation parsed in C (``_cast.parse_texts``) when every one reads
    exactly into an int64 within the precision; None to leave them, and any error, to the
    exact path."""
    if not 0 <= want.scale <= 18:
        return None
    from .cast import text_layout  # (cast dispatches here: a call-time import)
    layout, offsets, buffers = text_layout(array)
    out = np.zeros(len(array), dtype=np.int64)
    valid = array.validity_mask() if array.null_count else None
    if parse_texts(layout, offsets, buffers, len(array), valid, "decimal", want.scale, out) >= 0:
        return None
    largest = int(np.abs(out).max()) if out.size else 0
    if largest >= 1 << (want.bit_width - 1) or (safe and largest >= 10 ** want.precision):
        return None
    return _decimal_array(array, want, out)


def _unscaled_ints(array: Array) -> list:
    """An integer array's values as Python ints, nulls as 0."""
    values = np.asarray(array.values())
    if array.null_count:
        values = np.where(array.validity_mask(), values, 0)
    return values.tolist()


def _nulled(array: Array, values: list) -> list:
    if not array.null_count:
        return values
    return [v if ok else None for v, ok in zip(values, array.validity_mask().tolist())]
