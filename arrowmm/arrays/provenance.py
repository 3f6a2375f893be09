"""Copy provenance: which memory an array borrows from its source and which it owns.

Memory made while loading (decompressed, byte-swapped, re-aligned or concatenated
buffers) is a ``CopiedMemory`` array carrying its reason, so ``copy_reason`` and
``Array.is_zero_copy`` can tell it from memory borrowed from a mapped file or buffer.
It lives beside the arrays because both the readers (which make such copies) and the
arrays (which report them) need it.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .._core._region import BufferView, as_view

__all__ = ["CopiedMemory", "copied_view", "copy_reason"]


class CopiedMemory(np.ndarray):
    """Bytes made while loading (``reason``: decompressed, byte-swapped, re-aligned, ...)
    instead of borrowed from the file or buffer being read (see ``copy_reason``)."""

    reason = "copied"


def copied_view(data, reason: str) -> BufferView:
    """A view over ``data`` (new memory) marked as a copy made for ``reason``."""
    arr = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    marked = arr.reshape(-1).view(np.uint8).view(CopiedMemory)
    marked.reason = reason
    return as_view(marked, description=f"{reason} buffer")


def _view_copy_reason(view) -> Optional[str]:
    if view is None:
        return None
    owner = view.region.owner
    return owner.reason if isinstance(owner, CopiedMemory) else None


def copy_reason(array) -> Optional[str]:
    """Why some buffer of ``array`` (children and dictionary included) is not the source's own
    memory, or None when all of them are borrowed (zero-copy)."""
    for buf in array._buffers:
        reason = _view_copy_reason(buf)
        if reason is not None:
            return reason
    for child in array.children:
        reason = copy_reason(child)
        if reason is not None:
            return reason
    if array.dictionary is not None:
        reason = copy_reason(array.dictionary)
        if reason is not None:
            return f"dictionary: {reason}"
    return None
