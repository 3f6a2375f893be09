"""Fast conversion of Arrow values to Python objects for ``to_pylist`` (see _pylist.pyx).

Every offset, size and buffer index is bounds-checked (the offsets of null slots too: a
damaged one would shift its neighbour's value); bad ones raise ArrowInvalid.
"""
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

_Offsets = npt.NDArray[np.int32] | npt.NDArray[np.int64]

def strings_to_list(
    data: Buffer, offsets: _Offsets, length: int, validity: Buffer | None = None, bit_offset: int = 0
) -> list[str | None]:
    """Utf8/LargeUtf8 values as str (None at null slots); invalid UTF-8 raises ArrowInvalid."""

def strings_to_objects_dedup(
    data: Buffer, offsets: _Offsets, length: int, validity: Buffer | None = None, bit_offset: int = 0,
    utf8: bool = True,
) -> npt.NDArray[np.object_]:
    """``strings_to_list`` (bytes when not ``utf8``) as an object array, equal values sharing
    one object."""

def binaries_to_list(
    data: Buffer, offsets: _Offsets, length: int, validity: Buffer | None = None, bit_offset: int = 0
) -> list[bytes | None]:
    """Binary/LargeBinary values as bytes (None at null slots)."""

def fixed_binaries_to_list(
    data: Buffer, byte_width: int, length: int, validity: Buffer | None = None, bit_offset: int = 0
) -> list[bytes | None]:
    """FixedSizeBinary values as bytes (None at null slots); byte_width 0 gives b""."""

def views_to_list(
    views: Buffer,
    length: int,
    validity: Buffer | None,
    bit_offset: int,
    variadic_buffers: Sequence[Buffer],
    utf8: bool,
) -> list[Any]:
    """BinaryView/Utf8View values as bytes, or str if ``utf8`` (None at null slots); a prefix
    that is not the value's first bytes, or non-zero padding after an inline value, raises
    ArrowInvalid."""

def values_to_list(ndarray: np.ndarray, validity: Buffer | None = None, bit_offset: int = 0) -> list[Any]:
    """``ndarray.tolist()`` with None at the slots ``validity`` marks null."""
