"""Type stub for arrowmm.interop._pystrings: a list of str / bytes / None to a string or
binary array's buffers in C."""
from typing import List, Optional, Tuple

from .._core._region import BufferView

def pack_strings(
    values: List[object], large: bool, take_bytes: bool
) -> Optional[Tuple[Optional[BufferView], BufferView, BufferView, int]]:
    """(validity, offsets, data, null count), or None when a value is taken by the Python path."""
