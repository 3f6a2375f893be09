"""Structural validation of offsets, sizes, run ends, union and dictionary codes (see _offsets.pyx).

Every function returns None or raises ArrowInvalid naming ``what``, the bad
index, its value and the limit it broke; a wrong dtype raises TypeError.
"""
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

_Offsets = npt.NDArray[np.int32] | npt.NDArray[np.int64]

def check_offsets(offsets: _Offsets, length: int, data_size: int, what: object) -> None:
    """offsets[0] >= 0, non-decreasing over [0, length], offsets[length] <= data_size.
    An empty ``offsets`` is accepted when ``length == 0``."""

def check_list_view(
    offsets: _Offsets,
    sizes: _Offsets,
    length: int,
    child_length: int,
    validity: Buffer | None,
    bit_offset: int,
    what: object,
) -> None:
    """For each non-null slot: offset >= 0, size >= 0, offset + size <= child_length."""

def check_run_ends(
    run_ends: npt.NDArray[np.int16] | npt.NDArray[np.int32] | npt.NDArray[np.int64],
    needed_end: int,
    what: object,
) -> None:
    """Run ends positive, strictly increasing, last >= needed_end (>= 1 run if needed_end > 0)."""

def check_union_type_ids(type_ids: npt.NDArray[np.int8], allowed: npt.NDArray[np.uint8], what: object) -> None:
    """Every type id is >= 0 and ``allowed[id]`` (a 128-entry uint8/bool mask) is set."""

def check_dense_union_offsets(
    type_ids: npt.NDArray[np.int8],
    offsets: npt.NDArray[np.int32],
    child_lengths: npt.NDArray[np.int64],
    what: object,
) -> None:
    """0 <= offset < child_lengths[code] per slot, non-decreasing per type code."""

def check_dictionary_indices(
    indices: npt.NDArray[np.integer],
    validity: Buffer | None,
    bit_offset: int,
    dict_length: int,
    what: object,
) -> None:
    """Every non-null index (any int8..uint64 dtype) is in [0, dict_length)."""

def check_binary_views(
    views: Buffer,
    length: int,
    validity: Buffer | None,
    bit_offset: int,
    variadic_buffers: Sequence[Buffer],
    utf8: bool,
    what: object,
) -> None:
    """Each non-null 16-byte BinaryView: size >= 0; out-of-line views point inside their
    variadic buffer and their prefix matches; values are UTF-8 if ``utf8``."""

def binary_extremes(data: Buffer, offsets: _Offsets, length: int, validity: Buffer | None,
                    bit_offset: int, what: object) -> tuple[int, int]:
    """Rows (lo, hi) of the smallest and largest non-null value in byte order, (-1, -1) when
    every value is null; offsets leaving ``data`` raise ArrowInvalid."""

def first_partial_day(values: npt.NDArray[np.int64], validity: Buffer | None, bit_offset: int,
                      what: object) -> int:
    """Index of the first non-null date64 value that is not a whole number of days, else -1."""
