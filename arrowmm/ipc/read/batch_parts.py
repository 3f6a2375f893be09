"""A file's record batches as their messages' parts, for ``to_pandas`` of many small batches.

Why: ``to_pandas()`` gathers each plain column across the batches in C (``arrays.gather``),
but reading 5,000 batches one at a time still parsed a message and made a loader and a
RecordBatch per batch: about as long as pyarrow's whole conversion.  ``pandas_batches``
reads every record batch message of a plain file in C (``_batch_walk.file_batch_parts``)
and hands ``batches_to_pandas`` one small ``MessageBatch`` per batch: it gives the column
parts the gather reads, and reads the real batch from the reader only for a column the
gather leaves to the per-batch path (a dictionary or struct column, say).
"""
from __future__ import annotations

from typing import Optional

from ...arrays.gather import MIN_BATCHES
from ._batch_walk import file_batch_parts
from ..core.byteorder import NATIVE

__all__ = ["MessageBatch", "pandas_batches"]


class MessageBatch:
    """Batch ``index`` of a file reader, as ``batches_to_pandas`` uses it: its rows, no
    compression, ``gather_base()`` from its message, and ``column(k)`` from the batch the
    reader reads (once) when asked."""

    __slots__ = ("reader", "index", "schema", "num_rows", "_base", "_batch")

    compression = None

    def __init__(self, reader, index: int, part: tuple, plan):
        self.reader = reader
        self.index = index
        self.schema = reader.schema
        self.num_rows = part[3]
        self._base = part + (plan.node_starts, plan.buffer_starts)
        self._batch = None

    def gather_base(self) -> tuple:
        return self._base

    def column(self, k: int):
        batch = self._batch
        if batch is None:
            batch = self._batch = self.reader.get_batch(self.index)
        return batch.column(k)


def pandas_batches(reader, plan, region, blocks, footer_offset: int) -> Optional[list]:
    """The ``MessageBatch`` of every record batch of ``reader`` (a whole-schema FileReader
    over ``region``; ``plan``: its V5 ``SchemaPlan``), or None when there are few, or one
    message is not plain (the reader's own batches are then used)."""
    if len(blocks) < MIN_BATCHES or region is None:
        return None
    if plan.schema.endianness != NATIVE or plan.total_views:
        return None
    parts = file_batch_parts(region, blocks, footer_offset, plan.total_nodes, plan.total_buffers)
    if parts is None:
        return None
    return [MessageBatch(reader, i, part, plan) for i, part in enumerate(parts)]
