"""The flat types: null, boolean, integers, floats, decimals, binary and string (plain and
large), their views, fixed-size binary."""
from __future__ import annotations

import numpy as np

from ..errors import ArrowInvalid
from .base import DataType, FixedWidthType, native_dtype

__all__ = ["NullType", "BoolType", "IntType", "FloatType", "DecimalType", "BinaryType",
           "BinaryViewType", "FixedSizeBinaryType"]


class NullType(DataType):
    """The type of an array of nulls only, with no buffers (``pyarrow.null()``)."""
    __slots__ = ()
    buffer_count = 0
    num_buffers = 1  # (pyarrow's count: the layout's absent validity buffer)

    def __init__(self):
        super().__init__()

    def __str__(self):
        return "null"


class BoolType(DataType):
    """Booleans packed one bit a value (``pyarrow.bool_()``)."""
    __slots__ = ()
    buffer_count = 2
    bit_width = 1

    def __init__(self):
        super().__init__()

    def __str__(self):
        return "bool"


class IntType(FixedWidthType):
    """Signed or unsigned integers of 8, 16, 32 or 64 bits.

    Made by the factories ``int8()`` ... ``uint64()``, as pyarrow's ``int64()`` etc."""
    __slots__ = ()

    def __init__(self, bit_width: int, signed: bool):
        if bit_width not in (8, 16, 32, 64):
            raise ArrowInvalid(f"integer bit width must be 8, 16, 32 or 64, got {bit_width}")
        super().__init__(bit_width, bool(signed))

    bit_width = property(lambda self: self._key[1])
    signed = property(lambda self: self._key[2])
    byte_width = property(lambda self: self._key[1] // 8)
    numpy_dtype = property(lambda self: _INT_DTYPES[self._key])

    def __str__(self):
        return f"{'' if self.signed else 'u'}int{self.bit_width}"


class FloatType(FixedWidthType):
    """IEEE 754 floats of 16, 32 or 64 bits (``float16()``, ``float32()``,
    ``float64()``); printed as pyarrow prints them: ``halffloat``, ``float``, ``double``."""
    __slots__ = ()
    _NAMES = {16: "halffloat", 32: "float", 64: "double"}

    def __init__(self, bit_width: int):
        if bit_width not in self._NAMES:
            raise ArrowInvalid(f"float bit width must be 16, 32 or 64, got {bit_width}")
        super().__init__(bit_width)

    bit_width = property(lambda self: self._key[1])
    byte_width = property(lambda self: self._key[1] // 8)
    numpy_dtype = property(lambda self: _FLOAT_DTYPES[self._key])

    def __str__(self):
        return self._NAMES[self.bit_width]


# the hot path (to_numpy) looks these up by key instead of building dtypes
_INT_DTYPES = {("IntType", bits, signed): native_dtype(f"{'i' if signed else 'u'}{bits // 8}")
               for bits in (8, 16, 32, 64) for signed in (True, False)}
_FLOAT_DTYPES = {("FloatType", bits): native_dtype(f"f{bits // 8}") for bits in (16, 32, 64)}


class DecimalType(FixedWidthType):
    """Fixed-point decimals: ``precision`` digits, ``scale`` of them after the point,
    stored in ``bit_width`` (32, 64, 128 or 256) bits (``decimal128(p, s)`` and its siblings)."""
    __slots__ = ()
    _MAX_PRECISION = {32: 9, 64: 18, 128: 38, 256: 76}

    def __init__(self, precision: int, scale: int, bit_width: int = 128):
        if bit_width not in self._MAX_PRECISION:
            raise ArrowInvalid(f"decimal bit width must be 32, 64, 128 or 256, got {bit_width}")
        if not 1 <= precision <= self._MAX_PRECISION[bit_width]:
            raise ArrowInvalid(
                f"decimal{bit_width} precision must be in [1, {self._MAX_PRECISION[bit_width]}], "
                f"got {precision}")
        super().__init__(precision, scale, bit_width)

    precision = property(lambda self: self._key[1])
    scale = property(lambda self: self._key[2])
    bit_width = property(lambda self: self._key[3])
    byte_width = property(lambda self: self._key[3] // 8)

    @property
    def numpy_dtype(self):
        """The numpy dtype of one stored value: an integer for 32/64-bit decimals, raw bytes
        (``V16``, ``V32``) for 128/256-bit ones."""
        bw = self.bit_width
        return native_dtype(f"i{bw // 8}") if bw <= 64 else np.dtype(("V", bw // 8))

    def __str__(self):
        return f"decimal{self.bit_width}({self.precision}, {self.scale})"


class BinaryType(DataType):
    """binary and string (``utf8``), with 32-bit offsets or, ``large``, 64-bit ones
    (``binary()``, ``string()``, ``large_binary()``, ``large_string()``).

    The view layouts are a class of their own, ``BinaryViewType``: code that dispatches on the
    class cannot take a view for offsets."""

    __slots__ = ()
    buffer_count = 3

    def __init__(self, utf8: bool = False, large: bool = False):
        super().__init__(bool(utf8), bool(large))

    utf8 = property(lambda self: self._key[1])
    large = property(lambda self: self._key[2])
    offset_dtype = property(lambda self: native_dtype("i8" if self._key[2] else "i4"))

    @classmethod
    def _unpickle(cls, utf8=False, large=False, view=False):
        # (pickles made while views were a flag of this class carry it third)
        return BinaryViewType(utf8) if view else cls(utf8, large)

    def __str__(self):
        base = "string" if self.utf8 else "binary"
        return "large_" + base if self.large else base


class BinaryViewType(DataType):
    """binary_view and string_view (``utf8``): 16-byte views, values of up to 12 bytes inline,
    longer ones in variadic data buffers (``binary_view()``, ``string_view()``; pyarrow's
    ``BinaryViewType`` and ``StringViewType``)."""

    __slots__ = ()
    #: validity and views; the variadic data buffers come on top (their count is per batch)
    buffer_count = 2
    has_variadic_buffers = True

    def __init__(self, utf8: bool = False):
        super().__init__(bool(utf8))

    utf8 = property(lambda self: self._key[1])

    def __str__(self):
        return ("string" if self.utf8 else "binary") + "_view"


class FixedSizeBinaryType(FixedWidthType):
    """Binary values all ``byte_width`` bytes long (``pyarrow.binary(n)``,
    ``fixed_size_binary(n)`` here)."""
    __slots__ = ()

    def __init__(self, byte_width: int):
        if byte_width < 0:
            raise ArrowInvalid(f"fixed_size_binary byte width must be >= 0, got {byte_width}")
        super().__init__(int(byte_width))

    byte_width = property(lambda self: self._key[1])
    numpy_dtype = property(lambda self: np.dtype(("V", self._key[1])) if self._key[1] else None)

    def __str__(self):
        return f"fixed_size_binary[{self.byte_width}]"
