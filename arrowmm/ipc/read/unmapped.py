"""Reading IPC files without mapping them: ``open_file(path, mmap=False)``.

A mapped file is read where it lies: if another program truncates it, touching
a lost page kills the process with SIGBUS; if it rewrites it in place, arrays
already handed out change under their reader.  The readers here read each
message into memory of their own instead (``os.preadv`` of exactly the
message's bytes, when the batch is asked for), so a file that shrinks raises
``ArrowInvalid`` and what was read stays as it was read.  They cost one read
per batch and the memory of the batches held.
"""
from __future__ import annotations

import builtins
import os
import stat
import struct
import threading
from typing import Optional, Sequence, Tuple

import numpy as np

from ... import limits
from ..._core._region import Region, as_view, empty_view
from ...errors import ArrowInvalid
from ...format import parse_message
from ..core.framing import Message, read_message_at
from ..core.files import MAGIC
from .file_reader import FileReader, StreamReader
from .file_mapping import FileChanged, appender_holds, changes_soon
from .indexed import IndexedStreamReader
from .sniff import HEAD_SIZE, not_arrow
from .source import FileSource, check_message

__all__ = ["PreadFile", "UnmappedFileReader", "UnmappedStreamReader",
           "UnmappedIndexedStreamReader", "open_unmapped"]

_ALIGN = 64
_CONTINUATION = b"\xff\xff\xff\xff"
_I32 = struct.Struct("<i")


def _read_into(fd: int, out: np.ndarray, offset: int) -> int:
    """Read bytes at ``offset`` into ``out``; how many (0 at the end of the file)."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [memoryview(out)], offset)
    data = os.pread(fd, len(out), offset)  # (no preadv: one copy more)
    out[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    return len(data)


def _size_now(fd: int):
    """The file's size now (after a short read: where another program cut it)."""
    try:
        return os.fstat(fd).st_size
    except OSError:
        return "?"


class PreadFile(FileSource):
    """An open regular file read by offset, its size fixed when opened: a ``FileReader``'s
    source (``arrowmm.ipc.read.source``) that maps nothing.

    ``pread(offset, length, what)`` returns a 64-byte aligned buffer of its own; a read that
    comes back short (the file was truncated) raises ``ArrowInvalid``.  ``view`` is the same
    as a bounds-checked ``BufferView``, which is what ``FileReader`` reads its footer through;
    ``message`` reads a whole message into memory of its own.

    ``close()`` while reads are in flight (other threads) refuses every later read, and leaves
    the descriptor to the last of those reads to close: closed under a read, its number could
    be handed to a file opened meanwhile, which that read would then read.
    """

    maps_nothing = "this reader was opened with mmap=False: it maps nothing"
    pickle_refusal = "a reader of a file opened with mmap=False cannot be pickled"

    def __init__(self, path):
        self.description = os.fspath(path)
        if isinstance(self.description, bytes):
            self.description = os.fsdecode(self.description)
        self._fd = -1
        self._closed = False
        self._reads = 0  # reads in flight on _fd (under _state)
        self._state = threading.Lock()
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(self._fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(f"{self.description} is a directory")
            self.size = st.st_size if stat.S_ISREG(st.st_mode) else 0
            self._identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except BaseException:
            self.close()  # (once: __del__ closes nothing more)
            raise

    def identity(self) -> Optional[tuple]:
        return self._identity  # (as ``file_mapping.mapped_file_identity`` gives a mapping's)

    def _take_fd(self) -> int:
        """The descriptor, for one read (``_let_fd_go`` after it); ``ArrowInvalid`` once
        closed."""
        with self._state:
            if self._closed:
                raise ArrowInvalid(f"{self.description}: the reader is closed")
            self._reads += 1
            return self._fd

    def _let_fd_go(self) -> None:
        """The end of a read: the last one out after ``close()`` closes the descriptor."""
        with self._state:
            self._reads -= 1
            fd = self._fd if self._closed and not self._reads else -1
            if fd >= 0:
                self._fd = -1
        if fd >= 0:
            os.close(fd)

    def pread(self, offset: int, length: int, what: str = "bytes") -> np.ndarray:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ArrowInvalid(f"{self.description}: {what}: bytes {offset}..{offset + length} lie "
                               f"outside the {self.size}-byte file")
        raw = np.empty(length + _ALIGN, dtype=np.uint8)
        start = (-raw.ctypes.data) % _ALIGN
        out = raw[start:start + length]
        got = 0
        fd = self._take_fd()
        try:
            while got < length:
                n = _read_into(fd, out[got:], offset + got)
                if n == 0:
                    raise FileChanged(
                        f"{self.description}: {what}: read {got} of {length} bytes at byte "
                        f"{offset}: the file was truncated while open: it ends at byte "
                        f"{_size_now(fd)} (it had {self.size} bytes when opened)")
                got += n
        finally:
            self._let_fd_go()
        return out

    def view(self, offset: int, length: int, what: str = "bytes"):
        return as_view(self.pread(offset, length, what), description=f"{what} of {self.description}")

    def message(self, offset: int, meta_len: int, body_len: int, index: int, kind: int,
                where, data_end: int):
        """The message at a Block, read whole (``meta_len + body_len`` bytes) into memory of its
        own and checked against the Block."""
        data = self.pread(offset, meta_len + body_len, str(where))
        chunk = Region(data, description=f"{where} of {self.description}")
        try:
            msg = read_message_at(chunk, 0, index, expected_body_length=body_len)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{where}: {exc}") from None
        check_message(msg, where, meta_len, len(data), kind)
        msg.offset = offset
        return msg

    def stream_message(self, offset: int, index: int, body: bool = True
                       ) -> Tuple[Optional[Message], int]:
        """The IPC stream message at ``offset`` (``index``: its place in the stream) and the
        byte just past it; ``(None, offset)`` at the end of the stream (its marker, or the
        end of the file, as ``read_message_at`` takes them).  Its length prefix, metadata and
        body are each read by one ``pread`` into memory of its own (no message is read past
        its metadata before its lengths are checked against the file); without ``body`` the
        message's body is empty: a scan or a header needs the metadata alone."""
        left = self.size - offset
        if left == 0:
            return None, offset
        where = f"message {index} at byte {offset}"
        head = bytes(self.pread(offset, min(left, 8), where))
        meta_start = 4 if head[:4] != _CONTINUATION else 8  # (4: written before Arrow 0.15)
        if left < meta_start:
            raise ArrowInvalid(f"{self.description}: {where}: truncated: {left} byte(s) left, "
                               f"a length prefix needs {meta_start}")
        meta_size = _I32.unpack_from(head, meta_start - 4)[0]
        if meta_size == 0:
            return None, offset
        if meta_size < 0 or meta_size > left - meta_start:
            raise ArrowInvalid(f"{self.description}: {where}: metadata length {meta_size} does "
                               f"not fit the {left - meta_start} bytes after its prefix")
        if meta_size < 4:
            raise ArrowInvalid(f"{self.description}: {where}: metadata of {meta_size} bytes is "
                               f"too short for a flatbuffer")
        if meta_size > limits.max_metadata_size:
            raise limits.exceeded("max_metadata_size", meta_size,
                                  f"{self.description}: {where}: metadata length")
        record = parse_message(memoryview(self.pread(offset + meta_start, meta_size, where)), 0,
                               where)
        body_at = offset + meta_start + meta_size
        end = body_at + record.body_length
        if not 0 <= record.body_length <= self.size - body_at:
            raise ArrowInvalid(f"{self.description}: {where}: body of {record.body_length} "
                               f"bytes runs past the end of the {self.size}-byte file")
        if body and record.body_length:
            data = as_view(self.pread(body_at, record.body_length, f"{where}: body"),
                           description=f"body of {where} of {self.description}")
        else:
            data = empty_view()
        return Message(record, data, index, offset, meta_start == 4), end

    def reopen(self) -> "PreadFile":
        self.close()
        return PreadFile(self.description)

    def changed(self, patience: float = 0.0) -> bool:
        try:
            fd = self._take_fd()
        except ArrowInvalid:
            return False
        try:
            if patience and not appender_holds(fd):
                patience = 0.0
            return changes_soon(lambda: (os.stat(self.description).st_size,
                                         os.fstat(fd).st_size), (self.size, self.size),
                                patience)
        finally:
            self._let_fd_go()

    def close(self) -> None:
        with self._state:
            self._closed = True
            fd = self._fd if not self._reads else -1  # (else the last read closes it)
            if fd >= 0:
                self._fd = -1
        if fd >= 0:
            os.close(fd)

    def __del__(self):
        if hasattr(self, "_state"):  # (not when the path was refused before it was set)
            self.close()

    def __repr__(self):
        return f"<arrowmm.PreadFile {self.description!r} size={self.size}>"


class UnmappedFileReader(FileReader):
    """A ``FileReader`` over a ``PreadFile``: the footer read when opened, each message when
    asked for, into memory of its own (``open_file(path, mmap=False)``)."""

    def __init__(self, path, **options):
        source = PreadFile(path)
        try:
            super().__init__(source, **options)
        except BaseException:
            source.close()
            raise


class UnmappedIndexedStreamReader(IndexedStreamReader):
    """An ``IndexedStreamReader`` over a ``PreadFile``: each message read when asked for, into
    memory of its own, so a stream truncated under its reader raises ``ArrowInvalid`` naming
    it (the Spark source's tasks read planned stream batches so)."""

    def __init__(self, path, entries: Optional[Sequence[Tuple[int, int]]] = None):
        source = PreadFile(path)
        try:
            super().__init__(source, entries)
        except BaseException:
            source.close()
            raise


class UnmappedStreamReader(StreamReader):
    """A ``StreamReader`` over a path read as a file object, message by message, into memory
    of its own (``open_stream(path, mmap=False)``).  A file in the IPC file format reads as
    the stream it holds."""

    def __init__(self, path, **options):
        f = builtins.open(path, "rb")
        try:
            if f.read(8)[:6] != MAGIC:
                f.seek(0)
            super().__init__(f, **options)
        except BaseException:
            f.close()
            raise
        self._owned = f  # (closed with the reader)


def open_unmapped(path):
    """``arrowmm.open(path, mmap=False)``: a file or stream reader by the file's first bytes."""
    with builtins.open(path, "rb") as f:
        head = f.read(HEAD_SIZE)
        size = os.fstat(f.fileno()).st_size
    if head[:6] == MAGIC:
        return UnmappedFileReader(path)
    try:
        return UnmappedStreamReader(path)
    except ArrowInvalid as exc:  # (worded as the mapped open words it: either would do)
        why = not_arrow(os.fspath(path), head, size, "file or stream")
        if why is None:
            raise
        raise ArrowInvalid(why) from exc.__cause__ or exc
