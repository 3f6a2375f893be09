"""Arrays -> IPC messages, without I/O: the writer's mirror of the loader.

``flatten`` walks an array depth-first, producing the FieldNodes, the buffers
(views of the memory the data already lives in; only sliced arrays whose
bitmaps or offsets must be re-based get new memory) and the variadic buffer
counts.  ``Encoder`` lays those buffers out in a message body (aligned and
zero-padded), frames the metadata, and returns the parts to write: a list of
bytes-like objects whose data buffers are the arrays' own memory.  With
compression, the buffers of a message are compressed together (in threads
when it pays); a buffer that does not shrink is stored raw (length -1).

``_flatten`` does the same in C for the common types (``flatten_columns`` walks there;
its ``BatchEncoder`` is ``Encoder.batch`` of a batch without metadata or compression), to
the same bytes: this module is the reference it is tested against.
"""
from __future__ import annotations

import struct
from typing import List, Optional

import numpy as np

from ... import types as t
from ..._core._bitmap import slice_bitmap
from ..._core._region import BufferView, as_view
from ...arrays.array import Array
from ..core.byteorder import byteswap, swap_kind
from ..core.compression import check_codec, check_level, compress_many
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ...format import MetadataVersion, encode_batch_message, encode_schema_message
from ...arrays.array import make_array
from ._flatten import WALK_KINDS, EncodedMessage, walk_columns

__all__ = ["flatten", "flatten_columns", "Encoder", "EncodedMessage", "EXPERIMENTAL_COMPRESSION"]

#: The message custom metadata key naming the codec of a compressed V4 message (Arrow 0.17).
EXPERIMENTAL_COMPRESSION = "ARROW:experimental_compression"

_PAD = bytes(64)
_PADS = [_PAD[:n] for n in range(64)]
#: A body up to this size goes out joined to its metadata, one bytes object: copying it costs
#: less than a write (and a memoryview) per buffer does; a bigger one goes as the arrays' own
#: memory, part by part.
_JOINED_BODY = 32 << 10
_I32 = struct.Struct("<i")


def _bits(buf: Optional[BufferView], offset: int, length: int):
    """A bitmap of ``length`` bits starting at bit 0, viewing ``buf`` when it already does."""
    if buf is None:
        return None
    nbytes = (length + 7) // 8
    if offset % 8 == 0:
        return buf.slice(offset // 8, nbytes)
    return slice_bitmap(buf, offset, length)


def _fixed(buf: BufferView, offset: int, length: int, width: int):
    return buf.slice(offset * width, length * width)


def _offsets(array: Array, buf: BufferView):
    """The array's ``length + 1`` offsets starting at zero (a view of ``buf`` when they already
    do) and the (first, last) range of the values they cover."""
    if array.length:  # (the two ends read in place: a numpy view of the offsets costs ~1 us)
        read = _OFFSET_READERS[array.type.offset_dtype.itemsize]
        width = read.size
        first = read.unpack_from(buf, array.offset * width)[0]
        last = read.unpack_from(buf, (array.offset + array.length) * width)[0]
        if not first:
            return _fixed(buf, array.offset, array.length + 1, width), first, last
    offsets = array.value_offsets()  # (an empty array may come with an empty offsets buffer)
    first, last = int(offsets[0]), int(offsets[-1])
    if first:
        return offsets - offsets.dtype.type(first), first, last
    return offsets, first, last


#: native-order readers of one 32- or 64-bit offset, by width (the arrays' buffers are native)
_OFFSET_READERS = {4: struct.Struct("=i"), 8: struct.Struct("=q")}


class FlatBatch:
    __slots__ = ("nodes", "buffers", "variadic", "swap", "v4")

    def __init__(self):
        self.swap = False
        self.v4 = False
        self.nodes: List[int] = []
        self.buffers: list = []
        self.variadic: List[int] = []


def flatten_columns(columns) -> FlatBatch:
    """``flatten`` of each of ``columns`` in turn (native byte order, V5): walked in C
    (``_flatten``) when every column's types are walked there, which is what a writer of many
    small batches (a shared-memory channel) needs, each Python call being a noticeable share."""
    out = FlatBatch()
    walked = walk_columns(columns)
    if walked is not None:
        out.nodes, out.buffers = walked
        return out
    for array in columns:
        flatten(array, out)
    return out


def flatten(array: Array, out: Optional[FlatBatch] = None, swap: bool = False, v4: bool = False) -> FlatBatch:
    """Nodes, buffers and variadic counts of ``array`` in IPC order (offset re-based to 0).

    ``swap=True`` converts multi-byte values to big-endian (for a big-endian schema).
    ``v4=True`` lays out metadata version V4, where unions (and run-end encoded arrays) have a
    validity buffer slot too, written empty (Arrow C++'s ``HasValidityBitmap`` before V5).
    """
    if out is None:
        out = FlatBatch()
        out.swap = swap
        out.v4 = v4
    sw = _swapped if out.swap else _as_is
    dtype = array.type
    off, n = array.offset, array.length
    bufs = array._buffers
    nulls = array.null_count
    kind = type(dtype)
    out.nodes += (n, nulls if kind not in (t.UnionType, t.RunEndEncodedType) else 0)
    if kind is t.NullType:
        out.nodes[-1] = n
        return out
    if out.v4 and kind in (t.UnionType, t.RunEndEncodedType):
        out.buffers.append(None)
    if kind is t.RunEndEncodedType:
        ends, values = _slice_run_ends(array)
        flatten(ends, out)
        flatten(values, out)
        return out
    if kind is t.UnionType:
        out.buffers.append(_fixed(bufs[0], off, n, 1))
        if dtype.mode == "dense":
            out.buffers.append(sw(_fixed(bufs[1], off, n, 4), 4))
            for child in array.children:
                flatten(child, out)
        else:
            for child in array.children:
                flatten(child.slice(off, n), out)
        return out
    out.buffers.append(_bits(bufs[0], off, n) if nulls else None)
    if kind is t.BoolType:
        out.buffers.append(_bits(bufs[1], off, n))
    elif kind is t.BinaryViewType:
        out.buffers.append(sw(_fixed(bufs[1], off, n, 16), "views"))
        out.variadic.append(len(bufs) - 2)
        out.buffers.extend(bufs[2:])
    elif kind is t.BinaryType:
        offs, first, last = _offsets(array, bufs[1])
        out.buffers.append(sw(offs, dtype.offset_dtype.itemsize))
        out.buffers.append(bufs[2].slice(first, last - first))
    elif kind is t.ListType or kind is t.MapType:
        offs, first, last = _offsets(array, bufs[1])
        out.buffers.append(sw(offs, dtype.offset_dtype.itemsize))
        flatten(array.children[0].slice(first, last - first), out)
    elif kind is t.ListViewType:  # offsets and sizes sliced, child whole
        width = dtype.offset_dtype.itemsize
        out.buffers.append(sw(_fixed(bufs[1], off, n, width), width))
        out.buffers.append(sw(_fixed(bufs[2], off, n, width), width))
        flatten(array.children[0], out)
    elif kind is t.FixedSizeListType:
        flatten(array._covered_values(), out)
    elif kind is t.StructType:
        for child in array.children:
            flatten(child.slice(off, n), out)
    elif kind in _FIXED_WIDTH:  # one values buffer (a dictionary's: its indices)
        out.buffers.append(sw(_fixed(bufs[1], off, n, dtype.byte_width), swap_kind(dtype)))
    else:
        raise ArrowNotImplementedError(f"cannot write an array of type {dtype} "
                                       f"({kind.__name__}) to IPC")
    return out


#: the classes ``flatten`` writes as a validity and one values buffer of ``byte_width``
_FIXED_WIDTH = frozenset({
    t.IntType, t.FloatType, t.DecimalType, t.DateType, t.TimeType, t.TimestampType,
    t.DurationType, t.IntervalType, t.FixedSizeBinaryType, t.DictionaryType})

#: the type classes ``flatten`` has a branch for (tests/types/test_type_coverage.py)
FLATTENED_TYPES = _FIXED_WIDTH | {
    t.NullType, t.BoolType, t.BinaryType, t.BinaryViewType, t.ListType, t.ListViewType,
    t.MapType, t.FixedSizeListType, t.StructType, t.UnionType, t.RunEndEncodedType}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"IPC writer (flatten)": FLATTENED_TYPES,
               "IPC writer (the C walk; 0: flatten's)": WALK_KINDS}


def _as_is(buf, kind):
    return buf


def _swapped(buf, kind):
    return buf if kind is None else byteswap(buf, kind, from_big=False)


def _slice_run_ends(array: Array):
    ends_arr, values = array.children
    if array.offset == 0 and (len(ends_arr) == 0 or int(ends_arr.values()[-1]) == array.length):
        return ends_arr, values
    if array.length == 0:
        return ends_arr.slice(0, 0), values.slice(0, 0)
    ends = ends_arr.values()
    first = int(np.searchsorted(ends, array.offset, side="right"))
    last = int(np.searchsorted(ends, array.offset + array.length - 1, side="right"))
    new_ends = np.minimum(ends[first:last + 1], array.offset + array.length) - array.offset
    rebased = make_array(ends_arr.type, len(new_ends), [None, as_view(new_ends.astype(ends.dtype))],
                         null_count=0)
    return rebased, values.slice(first, last - first + 1)


class Encoder:
    """Frames schema, record batch and dictionary batch messages; does no I/O.

    ``alignment`` (64 by default, 8 allowed) applies to every buffer inside a
    body and to where each body starts relative to the start of the output,
    so a mapped file gives aligned zero-copy views.  ``legacy_prefix`` writes
    the pre-0.15 framing (no continuation marker).
    """

    def __init__(self, alignment: int = 64, legacy_prefix: bool = False,
                 compression: Optional[str] = None, version: int = MetadataVersion.V5,
                 compression_level: Optional[int] = None, features=()):
        if alignment not in (8, 16, 32, 64):
            raise ArrowInvalid(f"alignment must be 8, 16, 32 or 64, got {alignment}")
        check_codec(compression)
        if version not in (MetadataVersion.V4, MetadataVersion.V5):
            raise ArrowInvalid(f"metadata version must be V4 or V5, got {version!r}")
        self.alignment = alignment
        self.legacy_prefix = legacy_prefix
        self.compression = compression
        self.compression_level = check_level(compression, compression_level)
        self.version = version
        self.features = tuple(features)
        #: (id(schema), position modulo the alignment) -> (schema, its framed message), the
        #: last few: writers of one setting share an encoder, and each writer starts with one
        self._schemas: dict = {}

    def _frame(self, flatbuffer: bytes, position: int) -> bytes:
        """Length prefix + flatbuffer + zero padding so the body starts aligned."""
        prefix = 4 if self.legacy_prefix else 8
        end = position + prefix + len(flatbuffer)
        pad = (-end) % self.alignment
        size = len(flatbuffer) + pad
        head = _I32.pack(size) if self.legacy_prefix else b"\xff\xff\xff\xff" + _I32.pack(size)
        return head + flatbuffer + _PAD[:pad]

    def schema(self, schema: t.Schema, position: int = 0) -> EncodedMessage:
        key = (id(schema), position % self.alignment)  # (what the framing depends on)
        hit = self._schemas.get(key)
        if hit is None or hit[0] is not schema:
            meta = self._frame(encode_schema_message(schema, self.version, self.features),
                               position)
            hit = (schema, meta)
            if len(self._schemas) >= 16:
                self._schemas.clear()
            self._schemas[key] = hit
        return EncodedMessage([hit[1]], len(hit[1]), 0)

    def batch(self, length: int, flat: FlatBatch, position: int, metadata=None,
              dictionary_id: Optional[int] = None, is_delta: bool = False) -> EncodedMessage:
        body: list = []
        layout = []  # (offset, length) per buffer
        pos = 0
        align = self.alignment
        compressed = {}
        if self.compression is not None:
            todo = [i for i, buf in enumerate(flat.buffers) if buf is not None and memoryview(buf).nbytes]
            parts = compress_many([flat.buffers[i] for i in todo], self.compression,
                                  self.compression_level)
            compressed = dict(zip(todo, parts))
        for i, buf in enumerate(flat.buffers):
            if buf is None:
                layout.append(pos)
                layout.append(0)
                continue
            pair = compressed.get(i) if compressed else None
            if pair is None:
                size = memoryview(buf).nbytes
                if size:
                    body.append(buf)
            else:
                prefix, payload = pair
                size = 8 + memoryview(payload).nbytes
                body.append(prefix)
                body.append(payload)
            layout.append(pos)
            layout.append(size)
            pad = -size % align
            if pad:
                body.append(_PADS[pad])
            pos += size + pad
        if self.compression is not None and self.version < MetadataVersion.V5:
            # Before V5, Arrow (0.17 to today's C++ reader) took the codec of a V4 message from
            # this custom metadata key, not from RecordBatch.compression: write both.
            metadata = {**(metadata or {}), EXPERIMENTAL_COMPRESSION: self.compression.upper()}
        meta = encode_batch_message(length, flat.nodes, layout, pos, self.compression,
                                    flat.variadic or None, metadata, dictionary_id, is_delta,
                                    self.version)
        framed = self._frame(meta, position)
        if pos <= _JOINED_BODY:
            return EncodedMessage([b"".join([framed, *body])], len(framed), pos)
        return EncodedMessage([framed] + body, len(framed), pos)

    def eos(self) -> bytes:
        return b"\x00\x00\x00\x00" if self.legacy_prefix else b"\xff\xff\xff\xff\x00\x00\x00\x00"
