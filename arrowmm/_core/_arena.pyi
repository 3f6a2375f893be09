"""Reusable memory for decoded buffers (see _arena.pyx)."""
from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

MIN_SIZE: int

class Block:
    """``size`` writable bytes whose pages go back to a cache when the block is collected."""
    size: int
    def __init__(self, size: int) -> None: ...
    @property
    def address(self) -> int: ...
    def __len__(self) -> int: ...

def empty(nbytes: int) -> npt.NDArray[np.uint8]:
    """A writable uint8 array, backed by a cached Block when at least MIN_SIZE bytes."""

def cache_limit(limit: Optional[int] = ...) -> int:
    """The most bytes of freed blocks kept for reuse; with ``limit``, set it."""

def default_cache_limit(physical: Optional[int] = ..., env: Optional[str] = ...) -> int:
    """ARROWMM_BLOCK_CACHE if set, else an eighth of physical memory within [256 MiB, 4 GiB]."""

def cache_resident(nbytes: Optional[int] = ...) -> int:
    """Cached bytes kept as they are; blocks beyond are marked MADV_FREE."""

def cache_idle(seconds: Optional[float] = ...) -> float:
    """Seconds a cached block may stay unused before it is unmapped."""

def lazily_freed() -> int:
    """Bytes of cached blocks marked MADV_FREE."""

def cache_info() -> Tuple[int, int]:
    """(blocks, bytes) currently cached."""

def clear_cache() -> None:
    """Unmap every cached block."""
