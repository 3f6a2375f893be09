"""What a mapping costs in RAM, and telling the kernel how it will be read.

Why: users of memory-mapped Arrow files watch their process's resident memory climb to the
size of the file and cannot tell page cache (reclaimable, shared, free to drop) from copies
the reader made, nor give the pages back.  ``resident_bytes`` reads the kernel's own count
for the mapping (``/proc/self/smaps``, Linux); ``advise`` passes ``madvise`` advice for it:
``"dontneed"`` drops this process's pages of a file mapping at once (they are read from the
file again if touched), ``"willneed"`` starts reading ahead, ``"random"`` / ``"sequential"``
tune read-ahead, ``"normal"`` undoes them.

Only regions that are memory-mapped files (``open_file(path)``, ``open_stream(path)``,
``arrowmm.shm`` segments) take advice: on other memory (``bytes``, numpy arrays) ``dontneed``
would discard data, so it is refused.
"""
from __future__ import annotations

import mmap
from typing import Optional

from ..._core._region import Region
from ...errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["ADVICE", "advise", "resident_bytes", "is_file_mapping"]

#: advice name -> the ``mmap`` module's MADV_* constant (those this platform has)
ADVICE = {name: getattr(mmap, f"MADV_{name.upper()}")
          for name in ("normal", "random", "sequential", "willneed", "dontneed")
          if hasattr(mmap, f"MADV_{name.upper()}")}

_PAGE = mmap.PAGESIZE


def is_file_mapping(region: Region) -> bool:
    """Whether ``region`` is a whole ``mmap.mmap`` (a mapped file or shared-memory segment)."""
    owner = region.owner
    return isinstance(owner, mmap.mmap) and len(owner) == region.size


def _range(region: Region, offset: int, length: Optional[int], what: str):
    size = region.size
    if length is None:
        length = size - offset if 0 <= offset <= size else -1
    if offset < 0 or length < 0 or offset > size or length > size - offset:
        raise ArrowInvalid(f"{what}: bytes [{offset}, {offset}+{length}) lie outside the "
                           f"{size}-byte {region.description}")
    return offset, length


def advise(region: Region, advice: str, offset: int = 0, length: Optional[int] = None) -> None:
    """``madvise`` ``advice`` for bytes ``[offset, offset + length)`` of ``region`` (by default
    all of it), widened to whole pages."""
    flag = ADVICE.get(advice)
    if flag is None:
        if advice in ("normal", "random", "sequential", "willneed", "dontneed"):
            raise ArrowNotImplementedError(f"madvise {advice!r} is not available on this platform")
        raise ArrowInvalid(f"unknown advice {advice!r}; expected one of {sorted(ADVICE)}")
    if not is_file_mapping(region):
        raise ArrowInvalid(f"{region.description}: advice applies to memory-mapped files and "
                           f"shared-memory segments, not to a {type(region.owner).__name__}")
    offset, length = _range(region, offset, length, "advise")
    if length == 0:
        return
    start = offset - offset % _PAGE  # a mapping starts on a page, so offsets align as addresses
    region.owner.madvise(flag, start, offset + length - start)


def resident_bytes(region: Region) -> Optional[int]:
    """Bytes of ``region``'s pages resident in this process's memory, as the kernel counts them
    for the mapping (``Rss`` in ``/proc/self/smaps``), or None where that is not available
    (not Linux, or not a mapped file)."""
    if not is_file_mapping(region) or region.size == 0:
        return None
    lo, hi = region.address, region.address + region.size
    total, seen = 0, False
    try:
        with open("/proc/self/smaps", "rb") as f:
            inside = False
            for line in f:
                head = line.split(None, 1)[0]
                if b"-" in head and not head.endswith(b":"):  # a mapping's first line
                    start, end = (int(x, 16) for x in head.split(b"-"))
                    inside = start < hi and end > lo
                    seen = seen or inside
                elif inside and head == b"Rss:":
                    total += int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return total if seen else None
