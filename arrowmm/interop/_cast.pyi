"""Type stub for arrowmm.interop._cast: numbers to and from text over whole buffers."""
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
    """(64-bit integers, -1) when every valid float is an integer in ``[lo, hi)``, else
    (None, the first that is not)."""

def views_of(offsets: npt.NDArray[np.int64], data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """16-byte views of the strings ``data[offsets[i]:offsets[i + 1]]`` (long ones pointing
    into ``data`` as buffer 0)."""

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
