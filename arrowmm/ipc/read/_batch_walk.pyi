"""Type stub for arrowmm.ipc.read._batch_walk: the C export of IPC record batches straight from
their messages."""
from typing import Callable, Optional

import numpy as np

from ..._core._region import Region
from ...types import Schema

__all__ = ["compile_walk", "export_file_batches", "export_stream_batches", "file_batch_parts",
           "plain_fixed_parts", "overlapping_buffer", "blocks_apart", "prove_decoded"]

StreamCapsule = object

def compile_walk(plan: object) -> Optional[object]: ...  # a SchemaPlan's walk, or None
def export_file_batches(schema: Schema, c_walk: Optional[object], blocks: np.ndarray,
                        footer_offset: int, mapping: Callable[[], Optional[Region]],
                        dictionaries: Callable[[], object], get_batch: Callable[[int], object],
                        requested_schema: Optional[object] = None) -> StreamCapsule: ...
def file_batch_parts(region: Region, blocks: np.ndarray, footer_offset: int, total_nodes: int,
                     total_buffers: int) -> Optional[list[tuple]]: ...
def export_stream_batches(schema: Schema, c_walk: Optional[object],
                          next_for_export: Callable[[Optional[Callable[..., int]]], object],
                          requested_schema: Optional[object] = None) -> StreamCapsule: ...
def plain_fixed_parts(nodes: object, buffers: object, ni: int, bi: int, batch_length: int,
                      body: object, width: int, align: int) -> Optional[tuple]: ...
def overlapping_buffer(buffers: object) -> int: ...  # index of the first buffer out of order, or -1
def blocks_apart(batches: np.ndarray, dictionaries: np.ndarray) -> bool: ...  # in file order, apart
def prove_decoded(array: object) -> bool: ...  # a decoded column proved fully valid (kept on it)
