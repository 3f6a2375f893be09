"""IPC files behind a seekable file object or an fsspec filesystem, read by byte ranges.

Nothing is mapped: opening reads the trailing magic, the footer length and the footer;
``get_batch(i)`` reads batch ``i``'s metadata (its message header) only; a column reads the
byte ranges of its own buffers when it is first touched, nearby ranges coalesced into one
read (``READ_AHEAD``).  One column of a 100-column file costs about one column's bytes.
``reader.bytes_read`` and ``reader.read_requests`` count what was asked of the source.
Iterating a reader of every column (no ``columns=``; ``read_all``, ``pyarrow.table(reader)``)
reads each batch's header and body in one request, as pyarrow does; a batch got by
``get_batch`` whose second column is touched after its first (a walk through it) reads the
rest of its body in one request: on an object store each request costs a round trip.

Used by ``open_ranged`` (a file object, a path on an fsspec filesystem, or a URL with a scheme
fsspec knows; fsspec is optional) and by ``arrowmm.dataset(..., filesystem=fs)``.
"""
from __future__ import annotations

import io
import os
import threading
from typing import Optional

import numpy as np

from ..._core._flatbuf import frame_at
from ... import limits
from ..._core._region import Region, as_view
from ...errors import ArrowInvalid
from ...format import MessageHeader, parse_message
from ..core.files import MAGIC
from ..core.framing import Message
from ..core.object_store import client_error, precondition_failed, store_error, url_to_filesystem
from .file_reader import FileReader
from .source import FileSource

__all__ = ["READ_AHEAD", "RangeSource", "RangedFileReader", "open_ranged"]

#: A column's read covers what it asks for plus up to this many bytes after (the next buffers
#: of the same column usually start there), so its buffers take one read, not one each.
READ_AHEAD = 1 << 12
#: Opening reads this many bytes of the file's end at once: the footer's length, the trailing
#: magic and, for most files, the whole footer (a larger footer takes one more read).
TAIL_GUESS = 1 << 12
_NO_BYTES = np.empty(0, dtype=np.uint8)


class RangeSource(FileSource):
    """A seekable binary file object read by offset (``pread``), counting what it reads: a
    ``FileReader``'s source (``arrowmm.ipc.read.source``) whose message bodies are read by ranges.

    Reads are serialised (seek + read under a lock), so batches may be decoded from many
    threads.  ``owns``: close the file object with the source."""

    maps_nothing = "this reader reads a file object by ranges: it maps nothing"
    lazy_bodies = True

    def __init__(self, fileobj, description: Optional[str] = None, owns: bool = False):
        if not (hasattr(fileobj, "read") and hasattr(fileobj, "seek")):
            raise ArrowInvalid(f"a ranged source needs a seekable binary file object, got "
                               f"{type(fileobj).__name__}")
        self._file = fileobj
        self._owns = owns
        self._lock = threading.Lock()
        self.description = description or str(getattr(fileobj, "path", None) or
                                               getattr(fileobj, "name", None) or
                                               type(fileobj).__name__)
        try:
            size = getattr(fileobj, "size", None)
            size = size() if callable(size) else size
            if not isinstance(size, int):
                size = fileobj.seek(0, os.SEEK_END)
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{self.description}: cannot find its size: {exc}") from None
        self.size = int(size)
        self.bytes_read = 0
        self.read_requests = 0
        self.whole_walks = False  # (every column selected: a walk reads the rest of a body)
        self._whole = threading.local()  # (.on: read each message with its body, in one read)
        self._kept = []  # (start, array) read once and served again (``keep``)
        self._readinto = getattr(fileobj, "readinto", None)

    def identity(self) -> Optional[tuple]:
        """``(size, version)`` of the object, its version being what the file object's
        filesystem said of it at open (an ETag, a version id, a modification time), or None
        when it said none of these: an object overwritten under its key is another object."""
        details = getattr(self._file, "details", None)
        if not isinstance(details, dict):
            return None
        for key in ("ETag", "VersionId", "version_id", "LastModified", "last_modified", "mtime"):
            version = details.get(key)
            if version is not None:
                return (self.size, key, str(version))
        return None

    def keep(self, offset: int, length: int) -> None:
        """Read bytes ``offset..offset+length`` now and serve later reads inside them from
        memory (opening keeps the file's head and tail: the magic, the footer)."""
        data = self.pread(offset, length, "bytes")
        self._kept.append((offset, data))

    def pread(self, offset: int, length: int, what: str = "bytes") -> np.ndarray:
        if self._file is None:
            raise self._closed()
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ArrowInvalid(f"{self.description}: {what}: bytes {offset}..{offset + length} "
                               f"lie outside the {self.size}-byte file")
        if self._kept:
            for start, data in self._kept:
                if start <= offset and offset + length <= start + len(data):
                    return data[offset - start:offset - start + length]
        # (numpy's allocation is malloc's, 16-byte aligned, and buffers sit at multiples of 8
        # in a body: aligned as the loader needs them; aligning to 64 here cost more, per
        # read, than the read of a small file object)
        out = np.empty(length, dtype=np.uint8)
        readinto = self._readinto  # (straight into the buffer: no bytes object)
        with self._lock:
            f = self._file  # (under the lock close() takes: not closed under this read)
            if f is None:
                raise self._closed()
            self.read_requests += 1
            try:
                f.seek(offset)
                got = 0
                while got < length:
                    if readinto is not None:
                        try:
                            n = readinto(memoryview(out)[got:])
                        except (NotImplementedError, io.UnsupportedOperation):
                            # (a RawIOBase that implements read() only: read() from now on)
                            readinto = self._readinto = None
                            continue
                        if n is None:
                            raise ArrowInvalid(f"{self.description}: {what}: the file object "
                                               f"is non-blocking and had no data")
                    else:
                        chunk = f.read(length - got)
                        if isinstance(chunk, str):
                            raise ArrowInvalid(f"{self.description}: the file object is in "
                                               f"text mode; open it with mode 'rb'")
                        n = len(chunk)
                        out[got:got + n] = np.frombuffer(chunk, dtype=np.uint8)
                    if not n:
                        raise ArrowInvalid(f"{self.description}: {what}: read {got} of {length} "
                                           f"bytes at byte {offset}: the file is shorter than "
                                           f"the {self.size} bytes it had when opened")
                    got += n
            except (OSError, ValueError, TypeError) as exc:
                if precondition_failed(exc):  # (s3fs pins reads to the ETag seen at open)
                    raise ArrowInvalid(f"{self.description}: {what}: the object changed after "
                                       f"the reader opened it (a read of bytes {offset}.."
                                       f"{offset + length} no longer matches its version); "
                                       f"open it again") from None
                raise ArrowInvalid(f"{self.description}: {what}: read failed: {exc}") from None
            except Exception as exc:  # (a store client's own error: botocore's is no OSError)
                if not client_error(exc):
                    raise
                raise store_error(exc, self.description, f"read {what} of") from None
            self.bytes_read += length
        return out

    def view(self, offset: int, length: int, what: str = "bytes"):
        return as_view(self.pread(offset, length, what), description=f"{what} of {self.description}")

    def message(self, offset: int, meta_len: int, body_len: int, index: int, kind: int,
                where, data_end: int) -> Message:
        """The header of the message at a Block, checked against it; its body a ``LazyBody``
        (a column's buffers are read when the column is touched)."""
        whole = getattr(self._whole, "on", False)
        data = self.pread(offset, meta_len + body_len if whole else meta_len, where)
        chunk = Region(data[:meta_len], description=self.description)
        try:
            frame = frame_at(chunk, 0, index)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{where}: {exc}") from None
        if frame is None:
            raise ArrowInvalid(f"{where}: block points at an end-of-stream marker")
        meta_start, meta_size, legacy = frame
        if meta_start + meta_size != meta_len:
            raise ArrowInvalid(f"{where}: block metaDataLength {meta_len} disagrees with the "
                               f"message's own length prefix ({meta_start + meta_size})")
        record = parse_message(memoryview(chunk.view(meta_start, meta_size)), 0, where)
        if record.body_length != body_len:
            raise ArrowInvalid(f"{where}: message bodyLength {record.body_length} differs from "
                               f"the file footer's block bodyLength {body_len}")
        if record.header_type != kind:
            raise ArrowInvalid(f"{where}: expected a {MessageHeader.NAMES[kind]} message, "
                               f"found {record.kind}")
        body = LazyBody(self, offset + meta_len, body_len)
        if whole and body_len:  # (the body came with the header; a metaDataLength that is
            rest = data[meta_len:]  # not a multiple of 8 would misalign it: then a copy)
            body._chunks.append((0, body_len, rest if meta_len % 8 == 0 else rest.copy()))
        return Message(record, body, index, offset, legacy)

    def close(self) -> None:
        """Waits for a read in flight (it holds the lock), so the file is never closed or
        dropped under it: a read after this raises 'the source is closed'."""
        with self._lock:
            self._kept = []
            f, self._file = self._file, None
        if f is not None and self._owns:
            f.close()

    def _closed(self) -> ArrowInvalid:
        return ArrowInvalid(f"{self.description}: the source is closed")

    def __repr__(self):
        return f"<arrowmm.RangeSource {self.description!r} size={self.size}>"


class LazyBody:
    """A message body on a ``RangeSource``: ``fetch`` reads a column's buffers before the
    loader walks them; ``slice`` serves them, or reads a range no ``fetch`` announced (and up
    to ``READ_AHEAD`` more of the body, kept for the next slices)."""

    __slots__ = ("source", "offset", "size", "_chunks", "_lock", "_fetches")

    def __init__(self, source: RangeSource, offset: int, size: int):
        self.source = source
        self.offset = offset  # (absolute, as a region view's: message_end works on it)
        self.size = size
        self._chunks = []  # (start, end, array) read so far, relative to the body
        self._lock = threading.Lock()
        self._fetches = 0

    def fetch(self, ranges) -> None:
        """Read the ``(offset, size)`` ranges of the body (a column's buffers, before its
        walk) that are not read yet, ranges less than ``READ_AHEAD`` apart in one read.  Ranges
        outside the body are left for ``slice`` to refuse where the walk meets them."""
        spans = sorted((o, o + n) for o, n in ranges if n > 0 and o >= 0 and o + n <= self.size)
        if not spans:
            return
        self._fetches += 1
        if self._fetches == 2 and self.source.whole_walks and self._chunks and \
                spans[0][0] >= self._chunks[0][1]:
            # a second column after the first, every column selected: a walk through the batch,
            # whose other columns come next; the rest of the body in one request
            spans = [(spans[0][0], self.size)]
        merged = [list(spans[0])]
        for start, end in spans[1:]:
            if start - merged[-1][1] <= READ_AHEAD:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        with self._lock:
            for start, end in merged:
                if any(s <= start and end <= e for s, e, _ in self._chunks):
                    continue
                data = self.source.pread(self.offset + start, end - start, "buffers")
                self._chunks.append((start, end, data))

    def slice(self, offset: int, size: int):
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ArrowInvalid(f"bytes {offset}..{offset + size} lie outside the message body "
                               f"of {self.size} bytes")
        if size == 0:
            return as_view(_NO_BYTES, description=self.source.description)
        with self._lock:
            for start, end, data in self._chunks:
                if start <= offset and offset + size <= end:
                    return as_view(data[offset - start:offset - start + size],
                                   description=self.source.description)
            end = min(self.size, offset + size + READ_AHEAD)
            data = self.source.pread(self.offset + offset, end - offset, "buffer")
            self._chunks.append((offset, end, data))
        return as_view(data[:size], description=self.source.description)


class RangedFileReader(FileReader):
    """A ``FileReader`` over a ``RangeSource``: the footer when opened, a batch's header when
    it is asked for, a column's byte ranges when the column is touched."""

    def __init__(self, source: RangeSource, **options):
        size = source.size
        if size >= 2 * len(MAGIC) + 4 and source.pread(0, len(MAGIC)).tobytes() == MAGIC:
            # the tail in one read: the footer's length and magic, most footers whole.  Kept
            # reads start on the file's 64-byte grid: later reads inside them are slices, and
            # a batch's buffers there are aligned only if the slice starts where it would
            tail_start = (size - min(size, TAIL_GUESS)) & ~63
            source.keep(tail_start, size - tail_start)
            footer_len = int(np.frombuffer(source.pread(size - 10, 4), dtype="<i4")[0])
            footer_start = size - 10 - footer_len
            if 8 <= footer_start < tail_start and footer_len <= limits.max_metadata_size:
                footer_start &= ~63
                source.keep(footer_start, tail_start - footer_start)
        super().__init__(source, **options)
        source.whole_walks = self.projection is None

    def __iter__(self):
        """Every batch, in order, each read with its body in one request when every column is
        selected (``read_all``, ``pyarrow.table(reader)``: a whole read, as pyarrow reads it),
        else its header, then the selected columns' ranges as they are touched."""
        source = self._source
        for i in range(len(self._blocks)):
            source._whole.on = self.projection is None
            try:
                batch = self.get_batch(i)
            finally:
                source._whole.on = False
            yield batch

    @property
    def bytes_read(self) -> int:
        return self._source.bytes_read

    @property
    def read_requests(self) -> int:
        return self._source.read_requests


def _fsspec_open(path: str, filesystem):
    if filesystem is None:
        filesystem, path = url_to_filesystem(path)
    try:
        return filesystem.open(path, "rb"), path
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ArrowInvalid(f"cannot open {path!r} on {type(filesystem).__name__}: {exc}") from None


def open_ranged(source, *, columns=None, filesystem=None, allow_copies: bool = True
                ) -> RangedFileReader:
    """Open an IPC file behind a seekable binary file object, a path on ``filesystem`` (an
    fsspec filesystem) or a URL (``"s3://bucket/x.arrow"``, ``"memory://x.arrow"``: fsspec),
    reading byte ranges only: the footer now, then the header of each batch asked for and the
    buffers of each column touched.  ``columns`` as for ``open_file``.  A file object passed
    in stays open after ``close()``; one opened here is closed with the reader."""
    if isinstance(source, (str, os.PathLike)):
        fileobj, path = _fsspec_open(os.fspath(source), filesystem)
        src = RangeSource(fileobj, description=str(path), owns=True)
    else:
        if filesystem is not None:
            raise ArrowInvalid("filesystem= goes with a path, not a file object")
        src = RangeSource(source)
    try:
        reader = RangedFileReader(src, allow_copies=allow_copies, columns=columns)
    except BaseException:
        src.close()
        raise
    return reader
