"""Hashing kernels behind arrowmm.compute.hashing (see _hashing.pyx)."""
from typing import Optional

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

_Codes = tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int64]]

def hash_fixed(src: Buffer, start: int, width: int, n: int, bitmap: Optional[Buffer],
               bit_offset: int, encode_nulls: bool) -> _Codes: ...
def hash_binary(offsets: npt.NDArray, data: Buffer, bitmap: Optional[Buffer], bit_offset: int,
                encode_nulls: bool) -> _Codes: ...
