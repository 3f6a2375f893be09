"""The framed metadata of a plain RecordBatch message, laid out by hand in microseconds.

Why: the generic encoder builds every message with the FlatBuffers Python builder, which
costs ~100 µs a message; a shared-memory channel must deliver a small batch in well under
50 µs.  A RecordBatch message without compression, variadic buffer counts or custom
metadata always has the same shape: a Message table (version, header type, header,
body length) pointing at a RecordBatch table (length, nodes, buffers) and its two vectors
of 16-byte structs.  This module writes that shape directly with ``struct``: every field
is written explicitly (as FlatBuffers' ``ForceDefaults``), every offset points forward,
and every 8-byte field and struct vector is 8-aligned, so any FlatBuffers reader
(arrowmm's, Arrow C++'s) reads it as it reads the builder's output.
"""
from __future__ import annotations

import struct
from typing import NamedTuple, Sequence

from .decode import MessageHeader, MetadataVersion

__all__ = ["record_batch_message", "RecordBatchTemplate", "record_batch_template"]

_FRAME = struct.Struct("<Ii")
_ROOT = struct.Struct("<I")
_MESSAGE_VTABLE = struct.Struct("<HHHHHH")  # size, table size, version, type, header, body
_MESSAGE = struct.Struct("<iIqhB")           # vtable offset, header, bodyLength, version, type
_BATCH_VTABLE = struct.Struct("<HHHHH")      # size, table size, length, nodes, buffers
_BATCH = struct.Struct("<iIqI")              # vtable offset, nodes, length, buffers
_COUNT = struct.Struct("<I")
# byte positions inside the flatbuffer
_M, _MVT, _R, _RVT, _NODES = 16, 4, 56, 40, 84


def record_batch_message(length: int, nodes: Sequence[int], layout: Sequence[int],
                         body_length: int, alignment: int = 64) -> bytearray:
    """``[0xFFFFFFFF][int32 size][Message flatbuffer + zero padding]`` of a V5 RecordBatch
    message whose body starts ``alignment``-aligned after it (if the message starts so).

    ``nodes``: (length, null_count) per field node, flat; ``layout``: (offset, length) per
    buffer, flat; ``body_length``: bytes of the body.
    """
    n, m = len(nodes) // 2, len(layout) // 2
    end_nodes = _NODES + 4 + 16 * n
    size = end_nodes + 8 + 16 * m
    pad = (-(8 + size)) % alignment
    out = bytearray(8 + size + pad)
    _FRAME.pack_into(out, 0, 0xFFFFFFFF, size + pad)
    b = 8
    _ROOT.pack_into(out, b, _M)
    _MESSAGE_VTABLE.pack_into(out, b + _MVT, 12, 24, 16, 18, 4, 8)
    _MESSAGE.pack_into(out, b + _M, _M - _MVT, _R - (_M + 4), body_length, MetadataVersion.V5,
                       MessageHeader.RecordBatch)
    _BATCH_VTABLE.pack_into(out, b + _RVT, 10, 24, 8, 4, 16)
    _BATCH.pack_into(out, b + _R, _R - _RVT, _NODES - (_R + 4), length,
                     (end_nodes + 4) - (_R + 16))
    _COUNT.pack_into(out, b + _NODES, n)
    if n:
        struct.pack_into(f"<{2 * n}q", out, b + _NODES + 4, *nodes)
    _COUNT.pack_into(out, b + end_nodes + 4, m)
    if m:
        struct.pack_into(f"<{2 * m}q", out, b + end_nodes + 8, *layout)
    return out


class RecordBatchTemplate(NamedTuple):
    """The framed header of every plain RecordBatch message with ``nodes`` field nodes and
    ``buffers`` buffers, numbers zeroed, and where each number goes (byte offsets in it,
    little-endian int64s): the row count, the body length, the (length, null count) pairs
    of the nodes from ``nodes_at`` and the (offset, length) pairs of the buffers from
    ``buffers_at``.  A writer that knows its schema copies it and patches the numbers in."""
    header: bytes
    rows_at: int
    body_at: int
    nodes_at: int
    buffers_at: int
    nodes: int
    buffers: int

    @property
    def fixed(self) -> bytes:
        """One byte per header byte: 1 where every message of this shape has the template's
        byte, 0 over the numbers (row count, body length, nodes, buffers).  A reader that
        knows the shape checks a header against it byte for byte and reads only the numbers
        (``arrowmm._core._shmsync.plain_header``)."""
        mask = bytearray(b"\x01" * len(self.header))
        for at, width in ((self.rows_at, 8), (self.body_at, 8), (self.nodes_at, 16 * self.nodes),
                          (self.buffers_at, 16 * self.buffers)):
            mask[at:at + width] = bytes(width)
        return bytes(mask)


def record_batch_template(nodes: int, buffers: int, alignment: int = 64) -> RecordBatchTemplate:
    """The template of ``record_batch_message(length, nodes, layout, body_length)`` for
    ``nodes`` field nodes and ``buffers`` buffers: the same bytes once its numbers are in."""
    header = bytes(record_batch_message(0, [0] * (2 * nodes), [0] * (2 * buffers), 0, alignment))
    end_nodes = _NODES + 4 + 16 * nodes
    return RecordBatchTemplate(header, 8 + _R + 8, 8 + _M + 8, 8 + _NODES + 4,
                               8 + end_nodes + 8, nodes, buffers)
