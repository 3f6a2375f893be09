"""Type stub for arrowmm._core._gather: one column of many IPC batches copied into one set
of buffers (see _gather.pyx)."""
from typing import Optional

import numpy as np

FIXED: int
BOOL: int
BINARY: int
LIST: int

def gather(bases: list[tuple], k: int, kind: int, width: int, child_kind: int = ..., child_width: int = ...) -> Optional[
        tuple[int, int, Optional[np.ndarray], np.ndarray, object]]: ...
