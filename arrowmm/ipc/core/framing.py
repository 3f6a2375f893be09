"""Encapsulated IPC messages: framing, without I/O.

A message is ``[0xFFFFFFFF][int32 metadata_size][flatbuffer + padding][body]``;
files written before Arrow 0.15 omit the continuation marker
(``[int32 metadata_size][flatbuffer][body]``).  A zero ``metadata_size`` is
end-of-stream, with or without the marker.

Two ways in:

* ``read_message_at(region, offset)`` reads a message straight out of a mapped
  region; the body is a ``BufferView`` of the region (zero-copy).
* ``MessageDecoder`` is fed bytes in chunks of any size and emits messages as
  they complete; it never reads, so readers of pipes and sockets wrap it and
  ask ``next_required_size`` how much to read next.
"""
from __future__ import annotations

import struct
from typing import List, Optional

from ... import limits
from ..._core._flatbuf import frame_at
from ..._core._region import BufferView, Region, as_view, empty_view
from ...errors import ArrowInvalid
from ...format import MessageRecord, parse_message

__all__ = ["CONTINUATION", "Message", "read_message_at", "MessageDecoder", "EOS_BYTES"]

CONTINUATION = 0xFFFFFFFF
EOS_BYTES = b"\xff\xff\xff\xff\x00\x00\x00\x00"
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")


class Message:
    """A decoded message: its parsed metadata, its body, and where it came from."""

    __slots__ = ("record", "body", "index", "offset", "legacy_prefix")

    def __init__(self, record: MessageRecord, body: BufferView, index: int, offset: int,
                 legacy_prefix: bool):
        self.record = record
        self.body = body
        self.index = index  # position of the message in its stream (0 = schema)
        self.offset = offset  # byte offset of the message's first byte, -1 when unknown
        self.legacy_prefix = legacy_prefix  # written without the continuation marker

    @property
    def kind(self) -> str:
        return self.record.kind

    @property
    def header(self):
        return self.record.header

    @property
    def where(self) -> str:
        return f"message {self.index}" + (f" at byte {self.offset}" if self.offset >= 0 else "")


class _Where:
    """'message i at byte n', formatted only when an error message needs it."""

    __slots__ = ("index", "offset")

    def __init__(self, index: int, offset: int):
        self.index = index
        self.offset = offset

    def __str__(self):
        return f"message {self.index}" + (f" at byte {self.offset}" if self.offset >= 0 else "")

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


def _metadata(buf, start: int, size: int, index: int, offset: int) -> MessageRecord:
    what = _Where(index, offset)
    if size < 4:
        raise ArrowInvalid(f"{what}: metadata of {size} bytes is too short for a flatbuffer")
    return parse_message(buf, start, what)


def read_message_at(region: Region, offset: int, index: int,
                    expected_body_length: Optional[int] = None) -> Optional[Message]:
    """Read the message starting at ``offset`` of ``region``; None at end-of-stream.

    End of the region where a message should start counts as end-of-stream
    (a stream writer may close without writing EOS).
    """
    frame = frame_at(region, offset, index)
    if frame is None:
        return None
    meta_start, meta_size, legacy = frame
    if meta_size > limits.max_metadata_size:
        raise limits.exceeded("max_metadata_size", meta_size,
                              f"message {index} at byte {offset}: metadata length")
    record = _metadata(memoryview(region.view(meta_start, meta_size)), 0, meta_size, index, offset)
    body_length = record.body_length
    if expected_body_length is not None and expected_body_length != body_length:
        raise ArrowInvalid(f"message {index} at byte {offset}: message bodyLength {body_length} "
                           f"differs from the file footer's block bodyLength {expected_body_length}")
    try:
        body = region.view(meta_start + meta_size, body_length)
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"message {index} at byte {offset}: body of {body_length} bytes: {exc}") from None
    return Message(record, body, index, offset, legacy)


def message_end(message: Message) -> int:
    """Byte offset just past ``message`` in its region."""
    return message.body.offset + message.body.size


class MessageDecoder:
    """Turns bytes fed in chunks of any size into ``Message`` objects.

    ``feed(data)`` returns the messages completed by ``data``; ``eos`` becomes
    True after an end-of-stream marker (bytes fed after it are refused).
    ``next_required_size`` is how many more bytes complete the current step;
    a reader reads that many (in chunks, so a hostile length never sizes an
    allocation before the bytes really arrive).
    """

    _PREFIX, _LENGTH, _METADATA, _BODY, _EOS = range(5)

    def __init__(self, start: int = 0, index: int = 0):
        """``start``: the offset of the first byte fed in the whole input (8 in an IPC file,
        after its magic); ``index``: that of the first message.  Offsets and indices in
        messages and errors count from them."""
        self._state = self._PREFIX
        self._need = 4
        self._chunks: List[bytes] = []
        self._have = 0
        self._index = index
        self._consumed = start  # bytes of finished messages and steps, for error offsets
        self._msg_offset = start
        self._legacy = False
        self._record: Optional[MessageRecord] = None
        self.eos = False

    @property
    def next_required_size(self) -> int:
        return 0 if self.eos else self._need - self._have

    @property
    def bytes_consumed(self) -> int:
        return self._consumed

    def feed(self, data) -> List[Message]:
        out: List[Message] = []
        view = memoryview(data).cast("B")
        pos = 0
        while pos < len(view):
            if self.eos:
                raise ArrowInvalid(f"{len(view) - pos} byte(s) after the end-of-stream marker "
                                   f"at byte {self._consumed}")
            take = min(self._need - self._have, len(view) - pos)
            self._chunks.append(view[pos:pos + take])
            self._have += take
            pos += take
            if self._have == self._need:
                msg = self._step()
                if msg is not None:
                    out.append(msg)
        return out

    @property
    def body_size(self) -> int:
        """The length of the body the decoder waits for when it has none of it yet, else -1:
        a reader may then read that body straight into memory of its own (one big
        ``readinto``, no copy through ``feed``) and hand it to ``feed_body``."""
        return self._need if self._state == self._BODY and self._have == 0 else -1

    def feed_body(self, body: BufferView) -> Message:
        """The message completed by ``body``, all of the body ``body_size`` announced (read
        by the caller into memory the message then keeps alive)."""
        if self.body_size < 0 or body.size != self._need:
            raise ArrowInvalid(f"message {self._index}: feed_body got {body.size} bytes, the "
                               f"decoder waits for {self.body_size}")
        self._consumed += body.size
        return self._emit(body)

    def finish(self) -> None:
        """Called at end of input: raises if a message was cut short."""
        if self.eos or (self._state == self._PREFIX and self._have == 0):
            return
        raise ArrowInvalid(
            f"stream truncated inside message {self._index} (started at byte {self._msg_offset}): "
            f"needed {self._need} byte(s) for its {self._state_name()}, got {self._have}")

    def _state_name(self):
        return ("length prefix", "metadata length", "metadata", "body", "end")[self._state]

    def _take(self):
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self._chunks = []
        self._consumed += self._have
        self._have = 0
        return data

    def _step(self) -> Optional[Message]:
        data = self._take()
        state = self._state
        if state == self._PREFIX:
            self._msg_offset = self._consumed - 4
            if _U32.unpack_from(data, 0)[0] == CONTINUATION:
                self._legacy = False
                self._state, self._need = self._LENGTH, 4
                return None
            self._legacy = True
            return self._got_length(_I32.unpack_from(data, 0)[0])
        if state == self._LENGTH:
            return self._got_length(_I32.unpack_from(data, 0)[0])
        if state == self._METADATA:
            buf = bytes(data)
            self._record = _metadata(buf, 0, len(buf), self._index, self._msg_offset)
            self._state, self._need = self._BODY, self._record.body_length
            if self._need == 0:
                return self._emit(empty_view())
            return None
        if state == self._BODY:
            return self._emit(as_view(data if isinstance(data, bytes) else bytes(data),
                                      description=f"body of message {self._index}"))
        raise AssertionError("unreachable")

    def _got_length(self, size: int) -> Optional[Message]:
        if size == 0:
            self.eos = True
            self._state, self._need = self._EOS, 0
            return None
        if size < 0:
            raise ArrowInvalid(f"message {self._index} at byte {self._msg_offset}: "
                               f"negative metadata length {size}")
        if size > limits.max_metadata_size:
            raise limits.exceeded("max_metadata_size", size,
                                  f"message {self._index} at byte {self._msg_offset}: metadata length")
        self._state, self._need = self._METADATA, size
        return None

    def _emit(self, body: BufferView) -> Message:
        msg = Message(self._record, body, self._index, self._msg_offset, self._legacy)
        self._index += 1
        self._record = None
        self._state, self._need = self._PREFIX, 4
        return msg
