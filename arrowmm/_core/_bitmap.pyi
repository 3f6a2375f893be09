"""Bit-level kernels for Arrow LSB-first validity/boolean bitmaps (see _bitmap.pyx)."""
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

def unpack_bitmap(buf: Buffer, bit_offset: int, length: int) -> npt.NDArray[np.bool_]:
    """Bits [bit_offset, bit_offset+length) as a bool array of ``length`` elements."""

def count_set_bits(buf: Buffer, bit_offset: int, length: int) -> int:
    """Number of 1 bits among bits [bit_offset, bit_offset+length)."""

def slice_bitmap(buf: Buffer, bit_offset: int, length: int) -> npt.NDArray[np.uint8]:
    """The bits re-packed at offset 0: ceil(length/8) bytes, pad bits zero."""

def pack_bitmap(values: npt.ArrayLike) -> tuple[npt.NDArray[np.uint8], int]:
    """Pack a 1-D bool/uint8 array (nonzero = 1) into (bitmap, set_count)."""

def bitmap_and(
    a: Buffer | None, a_off: int, b: Buffer | None, b_off: int, length: int
) -> npt.NDArray[np.uint8]:
    """AND of two bitmaps (None = all set), re-packed at offset 0 with zero pad bits."""

# Shared argument helpers (also used by _offsets, _utf8 and _pylist).
def _byte_buffer(obj: Buffer, name: str = ...) -> Any:
    """``obj`` as a 1-D unsigned-byte buffer without copying."""

def _validity_buffer(validity: Buffer | None, bit_offset: int, length: int, what: object) -> Any:
    """Byte buffer of a validity bitmap checked to cover ``length`` bits, or None."""
