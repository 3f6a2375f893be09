"""The message-level API: one IPC message at a time, as ``pyarrow.ipc`` offers it.

For programs that frame Arrow messages themselves (an RPC layer, a message queue, a
Flight-like server): ``read_message`` reads one encapsulated message, ``read_schema`` and
``read_record_batch`` decode one, ``serialize_schema`` / ``serialize_batch`` (also
``Schema.serialize()`` and ``RecordBatch.serialize()``) write one, and ``MessageReader``
iterates over the messages of a stream.  Reading a buffer is zero-copy: a message's
``metadata`` and ``body``, and the arrays of a batch read from it, are views of the buffer.
The bytes are pyarrow's format (continuation marker, length, flatbuffer, 8-byte aligned
body), so either library reads what the other wrote.
"""
from __future__ import annotations

import enum
import io
import struct
from typing import Iterator, Mapping, Optional

from .. import hooks, types as t
from .._core._flatbuf import frame_at
from .._core._region import BufferView, Region
from ..arrays.batch import RecordBatch
from ..arrays.extension import storage_of
from ..errors import ArrowInvalid
from ..interop import array
from ..format import MessageHeader
from .core.framing import Message as _Decoded  # the internal record: parsed header + body view
from .core.framing import MessageDecoder, read_message_at
from .read.file_reader import MessageBatchDecoder
from .write.writer import new_stream

__all__ = ["Message", "MessageReader", "MetadataVersion", "read_message", "read_schema", "read_record_batch",
           "serialize_schema", "serialize_batch"]

_I32 = struct.Struct("<i")
_KINDS = {MessageHeader.Schema: "schema", MessageHeader.DictionaryBatch: "dictionary",
          MessageHeader.RecordBatch: "record batch", MessageHeader.Tensor: "tensor",
          MessageHeader.SparseTensor: "sparse tensor"}


class MetadataVersion(enum.IntEnum):
    """A message's metadata version, numbered as the format (and pyarrow's enum) numbers it."""

    V1 = 0
    V2 = 1
    V3 = 2
    V4 = 3
    V5 = 4


class Message:
    """One encapsulated IPC message: ``type``, ``metadata_version``, ``header`` (the parsed
    flatbuffer: a Schema, or a record / dictionary batch header), ``metadata`` (the flatbuffer
    bytes) and ``body``, both views of the memory the message was read from."""

    __slots__ = ("_decoded", "metadata", "_region")

    def __init__(self, decoded: _Decoded, metadata: BufferView, region=None):
        self._decoded = decoded
        self.metadata = metadata
        self._region = region  # keeps a mapped source alive as long as the message

    @property
    def type(self) -> str:
        """``"schema"``, ``"dictionary"``, ``"record batch"``, ``"tensor"`` or ``"sparse tensor"``
        (pyarrow's names)."""
        return _KINDS.get(self._decoded.record.header_type, "unknown")

    @property
    def metadata_version(self) -> MetadataVersion:
        """``MetadataVersion.V5`` (or ``.V4``...): an int enum, equal to pyarrow's."""
        return MetadataVersion(self._decoded.record.version)

    @property
    def header(self):
        """The decoded header: the schema, record batch or dictionary batch record."""
        return self._decoded.record.header

    @property
    def body(self) -> BufferView:
        """The message body, a view into the source's memory (no copy)."""
        return self._decoded.body

    @property
    def custom_metadata(self) -> Optional[dict]:
        """The message's own custom key/value metadata, or None."""
        return self._decoded.record.metadata

    def serialize(self, alignment: int = 8) -> bytes:
        """The message framed again (continuation marker, length, metadata padded so the body
        starts on an ``alignment`` boundary, then the body): what ``read_message`` reads."""
        if alignment not in (8, 16, 32, 64):
            raise ArrowInvalid(f"alignment must be 8, 16, 32 or 64, got {alignment}")
        meta = self.metadata.to_bytes()
        pad = (-(8 + len(meta))) % alignment
        body = self.body.to_bytes()
        return b"\xff\xff\xff\xff" + _I32.pack(len(meta) + pad) + meta + b"\x00" * pad + body

    def equals(self, other: "Message") -> bool:
        """Whether ``other`` is a message with the same metadata and body bytes
        (``pyarrow.ipc.Message.equals``; ``==`` too)."""
        return (isinstance(other, Message) and self.metadata.to_bytes() == other.metadata.to_bytes()
                and self.body.to_bytes() == other.body.to_bytes())

    def __eq__(self, other):
        return self.equals(other) if isinstance(other, Message) else NotImplemented

    __hash__ = None

    def __repr__(self):
        return (f"arrowmm.Message\ntype: {self.type}\nmetadata length: {self.metadata.size}\n"
                f"body length: {self.body.size}")


def _message_at(region: Region, offset: int, index: int) -> Optional[Message]:
    frame = frame_at(region, offset, index)
    if frame is None:
        return None
    decoded = read_message_at(region, offset, index)
    if decoded is None:
        return None
    meta_start, meta_size, _ = frame
    return Message(decoded, region.view(meta_start, meta_size), region)


def _region(source) -> Region:
    if isinstance(source, Region):
        return source
    if isinstance(source, Message):
        raise ArrowInvalid("expected bytes holding a message, got a Message")
    try:
        return Region(source, description="message buffer")
    except TypeError:
        raise ArrowInvalid(f"expected a buffer (bytes, memoryview, numpy array) or a binary "
                           f"file object, got {type(source).__name__}") from None


def _read_from_file(fileobj, index: int) -> Optional[Message]:
    """The next message of a binary file object (its bytes read, so copied), None at its end."""
    decoder = MessageDecoder()
    chunks = []
    while True:
        need = decoder.next_required_size
        if need == 0:  # end-of-stream marker
            return None
        data = fileobj.read(min(need, 1 << 20))
        if not data:
            decoder.finish()
            return None
        chunks.append(bytes(data))
        done = decoder.feed(data)
        if done:
            raw = b"".join(chunks)
            framed = Region(raw, description="message read from a file object")
            return _message_at(framed, 0, index)


def read_message(source) -> Message:
    """One IPC message from ``source``: a buffer (bytes, memoryview, numpy array, mmap; read
    without copying) or a binary file object (read from its position).  Raises ArrowInvalid
    at an end-of-stream marker or the end of the input, and for a malformed message."""
    if hasattr(source, "read") and not isinstance(source, (bytes, bytearray, memoryview)):
        msg = _read_from_file(source, 0)
    else:
        region = _region(source)
        if region.size == 0:
            raise ArrowInvalid("read_message: the buffer is empty (no message)")
        msg = _message_at(region, 0, 0)
    if msg is None:
        raise ArrowInvalid("read_message: found the end-of-stream marker (or the end of the "
                           "input) where a message should start")
    return msg


def _as_message(obj, what: str) -> Message:
    return obj if isinstance(obj, Message) else read_message(obj)


def read_schema(obj) -> t.Schema:
    """The schema of a schema message: a ``Message`` or a buffer holding one (pyarrow's
    ``read_schema``; its ``Schema.serialize()`` bytes read as they are)."""
    msg = _as_message(obj, "read_schema")
    if msg.type != "schema":
        raise ArrowInvalid(f"read_schema: expected a schema message, got a {msg.type} message")
    return msg.header


def read_record_batch(obj, schema: t.Schema, dictionaries=None) -> RecordBatch:
    """The record batch of a record batch message (a ``Message`` or a buffer holding one),
    decoded under ``schema``; its columns are views of the buffer (decoded when touched).

    ``dictionaries``: for dictionary-encoded fields, a mapping of dictionary id to its values
    (an arrowmm or capsule-exporting array), or an iterable of dictionary messages (Message or
    buffers, applied in order, deltas appended) as a stream carries them.
    """
    if not isinstance(schema, t.Schema):
        raise ArrowInvalid(f"read_record_batch: schema must be an arrowmm Schema, got "
                           f"{type(schema).__name__}")
    msg = _as_message(obj, "read_record_batch")
    if msg.type != "record batch":
        raise ArrowInvalid(f"read_record_batch: expected a record batch message, got a "
                           f"{msg.type} message")
    decoder = MessageBatchDecoder(schema)
    if dictionaries is not None:
        if isinstance(dictionaries, Mapping):
            for dict_id, values in dictionaries.items():
                decoder.set_dictionary(int(dict_id), storage_of(array(values)))
        else:
            for k, d in enumerate(dictionaries):
                dmsg = _as_message(d, "read_record_batch")
                if dmsg.type != "dictionary":
                    raise ArrowInvalid(f"read_record_batch: dictionaries[{k}] is a {dmsg.type} "
                                       f"message, not a dictionary")
                decoder.dictionary(dmsg._decoded, f"dictionary message {k}")
    return decoder.record_batch(msg._decoded, "record batch message")


def _stream_bytes(schema: t.Schema, batch: Optional[RecordBatch], alignment: int) -> bytes:
    sink = io.BytesIO()
    # (no DICTIONARY_REPLACEMENT feature: one message declares nothing about later ones, and
    # the bytes are then pyarrow's)
    with new_stream(sink, schema, alignment=alignment, allow_dictionary_replacement=False) as w:
        if batch is not None:
            w.write(batch)
    return sink.getvalue()


def serialize_schema(schema: t.Schema) -> bytes:
    """``schema`` as one schema message (pyarrow's ``Schema.serialize()``)."""
    data = _stream_bytes(schema, None, 8)
    return data[:len(data) - 8]  # (without the end-of-stream marker)


def serialize_batch(batch: RecordBatch, alignment: int = 8) -> bytes:
    """``batch`` as one record batch message, without its schema or dictionaries (pyarrow's
    ``RecordBatch.serialize()``): read it back with ``read_record_batch(buf, schema)``."""
    if not isinstance(batch, RecordBatch):
        raise ArrowInvalid(f"serialize_batch takes an arrowmm RecordBatch, got "
                           f"{type(batch).__name__}")
    data = _stream_bytes(batch.schema, batch, alignment)
    region = Region(data, description="serialized stream")
    offset, index, last = 0, 0, None
    while True:
        msg = read_message_at(region, offset, index)
        if msg is None:
            break
        end = msg.body.offset + msg.body.size
        if msg.record.header_type == MessageHeader.RecordBatch:
            last = (offset, end)
        offset, index = end, index + 1
    if last is None:
        raise ArrowInvalid("serialize_batch: the writer produced no record batch message")
    return data[last[0]:last[1]]


class MessageReader:
    """The messages of a stream, one at a time (pyarrow's ``MessageReader``): over a buffer
    (zero-copy) or a binary file object.  ``read_next_message()`` raises StopIteration at the
    end-of-stream marker or the end of the input."""

    def __init__(self, source):
        self._file = None
        self._region = None
        if hasattr(source, "read") and not isinstance(source, (bytes, bytearray, memoryview)):
            self._file = source
        else:
            self._region = _region(source)
        self._offset = 0
        self._index = 0
        self._done = False

    @classmethod
    def open_stream(cls, source) -> "MessageReader":
        """A reader of the messages of an IPC stream in ``source`` (bytes, a buffer or a
        binary file-like object), as ``pyarrow.ipc.MessageReader.open_stream``."""
        return cls(source)

    def read_next_message(self) -> Message:
        """The next message; ``StopIteration`` at the end of the stream."""
        if self._done:
            raise StopIteration
        if self._file is not None:
            msg = _read_from_file(self._file, self._index)
        else:
            msg = _message_at(self._region, self._offset, self._index) \
                if self._offset < self._region.size else None
        if msg is None:
            self._done = True
            raise StopIteration
        if self._region is not None:
            self._offset = msg.body.offset + msg.body.size
        self._index += 1
        return msg

    def __iter__(self) -> Iterator[Message]:
        while True:
            try:
                yield self.read_next_message()
            except StopIteration:
                return


hooks.fill("serialize_batch", serialize_batch)  # (RecordBatch.serialize, a layer below)
hooks.fill("serialize_schema", serialize_schema)  # (Schema.serialize)
