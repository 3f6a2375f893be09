"""Type stub for arrowmm.interop._cast: numbers to and from text over whole buffers, and
strings to and from their views."""
from typing import Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

def parse_texts(
    layout: int,
    offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64] | npt.NDArray[np.uint8],
    data_buffers: Sequence[Optional[Buffer]],
    length: int,
    valid: Optional[npt.NDArray[np.bool_]],
    kind: str,
    bits: int,
    out: np.ndarray,
) -> int:
    """Parse ``length`` strings into ``out`` as pyarrow does; the last row that does not
    parse, or -1 (ArrowInvalid where a row's offsets or view fall outside its buffers)."""

def format_numbers(
    values: np.ndarray, valid: Optional[npt.NDArray[np.bool_]], kind: str
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """(int64 offsets, uint8 data) of each number's text as pyarrow writes it (nulls empty)."""

def first_outside(
    values: np.ndarray, valid: Optional[npt.NDArray[np.bool_]], lo: int, hi: int
) -> int:
    """The first valid integer outside ``[lo, hi]``, or -1."""

def exact_integers(
    values: npt.NDArray[np.float32] | npt.NDArray[np.float64],
    valid: Optional[npt.NDArray[np.bool_]],
    lo: float,
    hi: float,
) -> Tuple[Optional[np.ndarray], int]:
    """(integers, -1) when every valid float is an integer in ``[lo, hi)``, else (None, the
    first that is not): int32 when ``[lo, hi)`` lies within int32's range, else int64 (uint64
    when ``hi`` is above int64's)."""

def text_views(
    offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    data: Optional[Buffer],
    validity: Optional[Buffer],
    bit_offset: int,
    limit: int = ...,
) -> Tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """(16-byte views, (k, 2) byte ranges of ``data``, one per data buffer) of the strings
    ``data[offsets[i]:offsets[i + 1]]``: nulls zeroed, long values pointing into ``data``
    itself, a new buffer wherever one would pass ``limit`` bytes."""

def views_text(
    views: Buffer,
    data_buffers: Sequence[Optional[Buffer]],
    validity: Optional[Buffer],
    bit_offset: int,
    length: int,
    large: bool,
) -> Tuple[npt.NDArray[np.int32] | npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """(int32 or, if ``large``, int64 offsets, uint8 data): the values of ``views`` gathered,
    nulls an empty range."""

def format_temporal(
    values: npt.NDArray[np.int64],
    valid: Optional[npt.NDArray[np.bool_]],
    kind: int,
    per_second: int,
    digits: int,
    zone_offsets: Optional[npt.NDArray[np.int64]],
    suffix: int,
    shown: Optional[npt.NDArray[np.int64]],
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """(int64 offsets, uint8 data) of each date, time or timestamp as pyarrow writes it."""

def rescale_decimals128(
    words: npt.NDArray[np.uint64], valid: Optional[npt.NDArray[np.bool_]], shift: int,
    safe: bool, bound_digits: int, out: npt.NDArray[np.uint64]
) -> int:
    """Each 128-bit unscaled value times 10**shift into ``out``; -1, or the first row left."""

def decimals128_to_floats(
    words: npt.NDArray[np.uint64], valid: Optional[npt.NDArray[np.bool_]], scale: int,
    out: npt.NDArray[np.floating]
) -> None:
    """Each 128-bit unscaled value as the nearest float of ``out``'s dtype."""

def format_decimals128(
    words: npt.NDArray[np.uint64], valid: Optional[npt.NDArray[np.bool_]], scale: int
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """(int64 offsets, uint8 data) of each 128-bit unscaled decimal as Python's str writes it."""
