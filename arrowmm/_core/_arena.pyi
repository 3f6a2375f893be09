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

def cache_info() -> Tuple[int, int]:
    """(blocks, bytes) currently cached."""

def clear_cache() -> None:
    """Unmap every cached block."""
