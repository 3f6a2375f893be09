"""What a file reader reads from: a source is a value that says what it can do.

One ``FileReader`` reads every IPC file; what differs between a mapped file, a file read
by ``pread`` (``open_file(path, mmap=False)``) and a file object read by byte ranges
(fsspec, sockets) is its source, given to the reader when it is made, as arrow-rs's
``FileReader<R>`` takes its reader and nanoarrow's ``InputStream`` its origin.  A source
answers:

* ``size``, ``description``; ``region``: the whole bytes in memory (a mapped file or a
  buffer), which zero-copy batches and the C walks need, or None;
* ``view(offset, length, what)``: bytes as a ``BufferView`` (the footer is parsed from it);
* ``tail()``: how the open reads bytes another process may cut (``file_mapping``);
  ``first_bytes(n)``: the magic;
* ``message(...)``: the message a footer Block names, checked against the Block: its body
  a view of the mapping, bytes of its own, or a lazy body read by ranges;
* ``prefix(end)``: the source up to a file's committed end; ``reopen()``: the same file
  mapped again after it shrank while opening (None when that cannot be);
* ``maps_nothing``: why ``memory()`` and ``advise()`` refuse, None for a mapping;
  ``pickle_refusal``: why a reader over it cannot be pickled (None: by its region);
  ``lazy_bodies``: bodies are read by ranges, so batches go through the projected loader;
* ``close()``: what the reader releases with it.

``MappedSource`` is here; ``unmapped.PreadFile`` and ``ranged.RangeSource`` subclass
``FileSource`` beside the code that reads them.  Feather V1 (``ipc.read.feather``: one
flatbuffer table, not IPC messages) and indexed streams (``ipc.read.indexed``: no footer) are
other formats over a ``Region``, so they are readers of their own.
"""
from __future__ import annotations

from typing import Optional

from ..._core._region import BufferView, Region
from ...errors import ArrowInvalid
from ...format import MessageHeader
from .file_mapping import (TailRead, first_bytes_of, map_file, mapped_file, mapped_file_identity,
                           mapping_stale, tail_reader)
from ..core.framing import Message, message_end, read_message_at

__all__ = ["FileSource", "MappedSource", "check_message"]


class FileSource:
    """The protocol of a file reader's source (see the module docstring), with the answers of
    a source that maps nothing."""

    description: str = "source"
    size: int = 0
    region: Optional[Region] = None
    maps_nothing: Optional[str] = "this reader reads a file object, not a mapping"
    pickle_refusal: Optional[str] = "a reader of a file object cannot be pickled"
    lazy_bodies = False
    shared_name = None  # (not a shared-memory segment)

    def view(self, offset: int, length: int, what: str = "bytes") -> BufferView:
        raise NotImplementedError

    def pread(self, offset: int, length: int, what: str = "bytes"):
        raise NotImplementedError

    def tail(self) -> TailRead:
        return _SourceTail(self)

    def first_bytes(self, n: int) -> bytes:
        """The first ``n`` bytes (the caller checks the size first)."""
        return self.view(0, n, "magic").to_bytes()

    def message(self, offset: int, meta_len: int, body_len: int, index: int, kind: int,
                where, data_end: int) -> Message:
        raise NotImplementedError

    def prefix(self, end: int) -> "FileSource":
        return self  # (the reader bounds every Block by its footer's offset)

    def reopen(self) -> Optional["FileSource"]:
        return None

    def changed(self, patience: float = 0.0) -> bool:
        """Whether the file is no longer the one this source read (another size, another
        inode), now or within ``patience`` seconds: an open that met damage then starts again
        (``reopen``)."""
        return False

    def identity(self) -> Optional[tuple]:
        """What tells this source's file from another one later put under its name, or None
        when the source cannot say (a buffer, a file object, an object store)."""
        return None

    def close(self) -> None:
        pass


class _SourceTail:
    """A source's ``pread`` as a ``TailRead``."""

    __slots__ = ("source",)

    def __init__(self, source: FileSource):
        self.source = source

    def __call__(self, offset: int, length: int) -> bytes:
        return bytes(self.source.pread(offset, length, "tail"))

    def close(self) -> None:
        pass


def check_message(msg: Optional[Message], where, meta_start_expected: int, data_end: int,
                  kind: int) -> Message:
    """``msg`` read at a Block, checked against it: not end-of-stream, its body where the
    Block's metadata length says, ending before the footer, of the Block's kind."""
    if msg is None:
        raise ArrowInvalid(f"{where}: block points at an end-of-stream marker")
    if msg.body.offset != meta_start_expected:
        raise ArrowInvalid(f"{where}: block metaDataLength disagrees with the message's own "
                           f"length prefix (body at byte {msg.body.offset}, the block says "
                           f"{meta_start_expected})")
    if message_end(msg) > data_end:
        raise ArrowInvalid(f"{where}: message body runs into the footer")
    if msg.record.header_type != kind:
        raise ArrowInvalid(f"{where}: expected a {MessageHeader.NAMES[kind]} message, "
                           f"found {msg.kind}")
    return msg


class MappedSource(FileSource):
    """A file's bytes in memory: a mapped file or a buffer, read where they lie (zero-copy)."""

    maps_nothing = None
    pickle_refusal = None

    def __init__(self, region: Region):
        self.region = region
        self.size = region.size
        self.description = region.description
        self.shared_name = region.shared_name

    def view(self, offset: int, length: int, what: str = "bytes") -> BufferView:
        return self.region.view(offset, length, what)

    def pread(self, offset: int, length: int, what: str = "bytes"):
        return self.region.view(offset, length, what)

    def tail(self) -> TailRead:
        return tail_reader(self.region)

    def first_bytes(self, n: int) -> bytes:
        return first_bytes_of(self.region, n)  # (read with the mapping: no page touched)

    def message(self, offset: int, meta_len: int, body_len: int, index: int, kind: int,
                where, data_end: int) -> Message:
        region = self.region  # (once: close() drops it under a read in flight)
        if region is None:
            raise ArrowInvalid("the reader is closed")
        msg = read_message_at(region, offset, index, expected_body_length=body_len)
        if msg is None or msg.body.offset != offset + meta_len or \
                message_end(msg) > data_end or msg.record.header_type != kind:
            check_message(msg, where, offset + meta_len, data_end, kind)
        return msg

    def prefix(self, end: int) -> "MappedSource":
        if end == self.size:
            return self
        return MappedSource(Region(self.region.view(0, end), description=self.description))

    def reopen(self) -> Optional["MappedSource"]:
        mapping = mapped_file(self.region)
        return None if mapping is None else MappedSource(map_file(mapping.path))

    def identity(self) -> Optional[tuple]:
        return mapped_file_identity(self.region) if self.region is not None else None

    def changed(self, patience: float = 0.0) -> bool:
        return self.region is not None and mapping_stale(self.region, patience)

    def close(self) -> None:
        self.region = None  # (the mapping goes once no array or export uses it)
