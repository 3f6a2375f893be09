"""Type stub for arrowmm.ipc.write._flatten: record batch columns to one IPC message in C."""
from typing import Any, List, Optional, Sequence, Tuple

from ...arrays.array import Array
from ...arrays.batch import RecordBatch
from ..._core._region import BufferView

__all__ = ["BatchEncoder", "EncodedMessage", "write_batch", "walk_columns", "FAST_TYPES", "WALK_KINDS"]

FAST_TYPES: frozenset  # the type classes walked in C
WALK_KINDS: dict  # every type class -> its layout code in C (0: not walked there)

class EncodedMessage:
    parts: list  # bytes-like objects to write in order
    metadata_length: int  # prefix + flatbuffer + padding
    body_length: int
    def __init__(self, parts: list, metadata_length: int, body_length: int) -> None: ...
    @property
    def nbytes(self) -> int: ...

def walk_columns(columns: Sequence[Array]) -> Optional[Tuple[List[int], List[Optional[BufferView]]]]: ...

class BatchEncoder:
    def __init__(self, alignment: int = 64, legacy_prefix: bool = False, version: int = ...) -> None: ...
    def encode(self, columns: Sequence[Array], length: int, position: int) -> Optional[EncodedMessage]: ...
    def emit(self, writer: Any, batch: RecordBatch) -> bool: ...

def write_batch(writer: Any, batch: Any, metadata: Optional[dict] = None, *,
                custom_metadata: Optional[dict] = None) -> None: ...  # (the writers' ``write``)
