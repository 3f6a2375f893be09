"""UTF-8 validation for Arrow string columns (see _utf8.pyx)."""
import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

def validate_utf8(buf: Buffer) -> bool:
    """True if the whole buffer is valid UTF-8 (same rules as ``bytes.decode``)."""

def check_utf8_offsets(
    data: Buffer,
    offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    length: int,
    validity: Buffer | None,
    bit_offset: int,
    what: object,
) -> None:
    """Raise ArrowInvalid naming the first non-null slot that is not valid UTF-8
    (or whose offsets fall outside ``data``)."""

_utf8_invalid_at_capsule: object  # C validator for arrowmm._core._offsets
