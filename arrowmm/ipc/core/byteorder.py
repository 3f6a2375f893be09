"""Byte-order conversion of IPC buffers (files written on big-endian machines).

Swapping is its own inverse, so the reader (to native) and the writer (to
big-endian) share these functions.  Every swap makes a new buffer: the copy is
the price of foreign byte order, and the loader counts it.
"""
from __future__ import annotations

import sys

import numpy as np

from ... import types as t
from ..._core._region import BufferView, as_view
from ...errors import ArrowInvalid

__all__ = ["NATIVE", "byteswap", "swap_kind"]

NATIVE = sys.byteorder  # "little" on every platform arrowmm is built for today
_MDN = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])


def byteswap(view: BufferView, kind, from_big: bool = True) -> BufferView:
    """A copy of ``view`` with each element's bytes reversed.

    ``kind``: an element width (2, 4, 8 reverse each element; 16 and 32 reverse
    a whole decimal), ``"mdn"`` (month_day_nano intervals: int32, int32, int64)
    or ``"views"`` (binary views: length, and for long values buffer index and
    offset; inline bytes and prefixes stay).  ``from_big`` says which order the
    input is in (it matters only for views, whose layout depends on the length).
    """
    raw = np.frombuffer(view, dtype=np.uint8)
    if raw.size == 0:
        return view
    if kind == "views":
        return as_view(_swap_views(raw, from_big))
    if kind == "mdn":
        if raw.size % 16:
            raise ArrowInvalid(f"month_day_nano buffer of {raw.size} bytes is not a multiple of 16")
        return as_view(raw.view(_MDN.newbyteorder(">")).astype(_MDN).view(np.uint8))
    width = int(kind)
    if raw.size % width:
        raise ArrowInvalid(f"buffer of {raw.size} bytes is not a multiple of its {width}-byte elements")
    if width == 1:
        return view
    return as_view(raw.reshape(-1, width)[:, ::-1].copy().reshape(-1))


def _swap_views(raw: np.ndarray, from_big: bool) -> np.ndarray:
    if raw.size % 16:
        raise ArrowInvalid(f"binary view buffer of {raw.size} bytes is not a multiple of 16")
    views = raw.reshape(-1, 16).copy()
    sizes_in = views[:, 0:4].copy()
    views[:, 0:4] = sizes_in[:, ::-1]
    native_sizes = (views if from_big else raw.reshape(-1, 16))[:, 0:4].copy().view("<i4").ravel()
    long = native_sizes > 12
    for lo in (8, 12):
        views[long, lo:lo + 4] = views[long, lo:lo + 4][:, ::-1]
    return views.reshape(-1)


def swap_kind(dtype):
    """The ``byteswap`` kind of a fixed-width type's values buffer (None: bytes, no swap)."""
    if isinstance(dtype, (t.FixedSizeBinaryType, t.BoolType)):
        return None
    if isinstance(dtype, t.IntervalType):
        return {"YEAR_MONTH": 4, "DAY_TIME": 4, "MONTH_DAY_NANO": "mdn"}[dtype.unit]
    if isinstance(dtype, t.DictionaryType):
        return dtype.index_type.byte_width
    return dtype.byte_width
