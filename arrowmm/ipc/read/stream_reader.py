"""``StreamReader``: the sequential reader of an IPC stream (or of the stream inside an IPC file).

Over a region (a mapping or a buffer) it reads messages in place, zero-copy; over a file object
(a pipe, a socket, an unmappable file) it reads each message body with ``readinto`` calls into
reusable aligned buffers.  Iterating a file object reads the next message ahead on a thread of
the iteration's own while the consumer works (``_batches_read_ahead``).
"""
from __future__ import annotations

import io
import os
import sys
import threading
from typing import Iterator, Optional

import numpy as np

from ..._core import _arena
from ..._core._region import BufferView, as_view
from ...arrays.batch import RecordBatch, SequentialBatches
from ...arrays.table import Table, slice_batches
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ...format import MessageHeader, MetadataVersion
from ..core.dictionaries import DictionaryMemo
from ..core.files import MAGIC
from ...arrays.decode_ahead import DETACHED, OneAhead, decoded_in_order
from .reader_base import (ReaderBase, region_of, is_file_object, source_name, is_pipe_path,
                          read_head, widen_pipe, PolledInput, check_timeout, decompressing,
                          no_bytes_now)
from ..core.framing import Message, MessageDecoder, message_end, read_message_at
from .file_mapping import FileChanged, appender_holds, changes_soon, mapping_stale, tail_reader
from .sniff import HEAD_SIZE, not_arrow
from .trailer import (LATER, MAX_FOOTER_SCAN, committed_at_open, footer_start_at,
                      generation_after, marker_wait, resume_after_eos, trailer_after,
                      trailer_problem)
from ._batch_walk import export_stream_batches

__all__ = ["StreamReader"]

_READ_CHUNK = 1 << 22  # largest single read from a file-like object (bounds allocation)
#: Bodies up to this size are read from a file object straight into one buffer of their
#: declared size (address space only until the bytes arrive); bigger ones in chunks.
_DIRECT_BODY_MAX = 1 << 34
#: Body buffers of at least this size are kept for reuse, at most this many per reader.
_SMALL_BODY = 1 << 16
_SPARE_BODIES = 2
#: What ends the error of a damaged tail after an IPC file's end-of-stream marker.
_LATER_ROWS = ("the rows of a later append may be what was cut; open_stream(..., recover=True) "
               "reads the batches up to here, arrowmm.repair rebuilds the file "
               "(docs/recovery.md)")
#: The most bytes of one message kept to tell an IPC file's footer from a damaged message.
_FOOTER_PROBE = 1 << 16
_REOPEN_TRIES = 20  # opens tried while other processes cut unfinished appends under this one


class _SeekedFile:
    """An IPC file read as a stream through a seekable file object (``open_stream(path,
    mmap=False)``, ``open_stream(open(path, "rb"))``): its size and committed end when the
    reader opened it, and a ``TailRead`` by seek and read, so that the reader goes on past
    each old footer into the appended generations, as the mapped reader does.  Each
    generation's messages are decoded by a decoder that starts at their offset in the file
    and their index in the stream (``next_index``, which ``place`` keeps)."""

    __slots__ = ("file", "size", "committed", "footer_at", "description", "next_index")

    def __init__(self, f, size: int, description: str):
        self.file, self.size, self.description = f, size, description
        self.committed = LATER
        self.footer_at = None  # where the last footer starts (None: the tail is no trailer)
        self.next_index = 0  # of the next message

    @classmethod
    def of(cls, f, head: bytes, description: str) -> Optional["_SeekedFile"]:
        """For ``f``, which ``head`` was just read from, when its messages start at byte 8 of
        an IPC file (the magic before them); else None (a stream, a pipe, a decompressor)."""
        try:
            if decompressing(f) or not f.seekable():
                return None
            at = f.tell()
            if at - len(head) + (8 if head[:6] == MAGIC else 0) != 8:
                return None
            for attempt in range(_REOPEN_TRIES):
                found = cls(f, f.seek(0, io.SEEK_END), description)
                try:
                    if head[:6] != MAGIC and found(0, 6) != MAGIC:
                        return None
                    found.committed = committed_at_open(found.size, found)
                    found.footer_at = footer_start_at(found.size, found)
                    if found.committed is not None or attempt == _REOPEN_TRIES - 1 or \
                            not found._size_changes(marker_wait(found.size, found)):
                        return found
                    # (a damaged end in a file that changed meanwhile: another process's
                    # append writing its marker; measure it again)
                except FileChanged:  # (a tail cut while it was read: measure it again)
                    if attempt == _REOPEN_TRIES - 1:
                        raise
                finally:
                    f.seek(at)
        except FileChanged:
            raise
        except (AttributeError, OSError, ValueError, ArrowInvalid):
            return None  # (not seekable after all: read as the stream it starts with)

    def __call__(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or length > self.size - offset:
            raise ArrowInvalid(f"{self.description}: bytes [{offset}, {offset}+{length}) lie "
                               f"outside the {self.size}-byte file")
        f = self.file
        f.seek(offset)
        data = b""
        while len(data) < length:
            got = f.read(length - len(data))
            if not got:
                raise FileChanged(f"{self.description}: the file became shorter "
                                  f"({offset + len(data)} bytes or fewer) than when it was "
                                  f"opened ({self.size} bytes) while it was being read")
            data += got
        return data[:length]  # (a read that returned more than asked: the next call seeks)

    def close(self) -> None:
        pass  # (the file is the reader's)

    def _size_changes(self, patience: float) -> bool:
        """Whether the file's size differs from the one measured, now or within ``patience``
        seconds."""
        try:
            fd = self.file.fileno()
        except (AttributeError, OSError, ValueError):
            return False  # (no descriptor to ask: the end stays as measured)
        if patience and not appender_holds(fd):
            patience = 0.0
        return changes_soon(lambda: (os.fstat(fd).st_size,), (self.size,), patience)

    def place(self, msg: Message) -> Message:
        self.next_index = msg.index + 1
        return msg


class StreamReader(SequentialBatches, ReaderBase):
    """Sequential reader of an IPC stream: a path, a buffer or a binary file-like object.

    A file in the IPC file format reads as the stream it contains.  With
    ``recover=True`` a damaged or truncated tail ends the stream instead of
    raising (``recovery_error`` then says what stopped it): this salvages the
    complete batches of a file whose writer was killed.  ``allow_copies``: as
    for ``FileReader``.

    ``timeout`` (seconds; None: wait as long as it takes) bounds each wait for bytes from a
    pipe, a socket or a device (a file object with a file descriptor that is not a regular
    file, see ``PolledInput``): a wait longer than that raises ``TimeoutError`` naming the
    source and the bytes awaited, and leaves the reader where it was (reading again goes on
    from there: a body half read keeps its half).  A file object without a descriptor cannot
    be given a timeout (``ArrowInvalid``); over a mapping or a buffer nothing waits and
    ``timeout`` has no effect.

    ``description``: the name errors give the source (a URL for an object store's file);
    by default its path, or a file object's ``name``.

    ``close()`` from another thread while a read waits on such a source (in
    ``read_next_batch``, an iteration, its read-ahead or an export) wakes it: that read
    raises ``ArrowInvalid`` ("the reader was closed while waiting for N bytes"), as every read
    after ``close()`` does; it never returns a batch or ends quietly as if the stream were
    complete.  The bytes it had read of the next message are lost with the reader; the file
    object itself is not closed (one the reader opened itself, from a path, is).
    """

    #: Reading an appended IPC file as a stream: go on into an append that never committed
    #: (``_unfinished``), and into generations without an append marker whatever the file's
    #: end says (``_salvage``): what ``salvage.salvage_messages`` asks of its reader.
    _unfinished = False
    _salvage = False

    def __init__(self, source, *, recover: bool = False, allow_copies: bool = True,
                 require_eos: bool = False, timeout: Optional[float] = None,
                 description: Optional[str] = None):
        super().__init__(allow_copies)
        timeout = check_timeout(timeout)
        self._consumer = threading.Lock()  # held by the one read_next_batch running
        # A batch read ahead for a C stream export released before taking it is handed out
        # next (never skipped); a read waits for that read while it is still in flight, as
        # it would wait for the source itself.
        self._held = []
        self._held_pending = False
        self._held_lock = threading.Condition(threading.Lock())
        self._iteration = None  # the OneAhead of the iteration reading ahead, if any
        self._close_after_read = None  # a file of the reader's own, closed while read ahead
        self._recover = recover
        self._require_eos = require_eos
        self._saw_eos = False
        self.recovery_error: Optional[str] = None
        self._file = None
        self._decoder = None
        self._pending = []
        self._pos = 0
        self._end = None  # where the messages end: the footer of an IPC file read as a stream
        self._in_file = False  # reading the messages of an IPC file (appended ones included)
        self._committed = LATER  # that file's committed end when this opened it (see trailer)
        self._generations = None  # the same through a seekable file object: _SeekedFile
        self._unseekable_file = False  # an IPC file (its magic first) read from a pipe
        self._index = 0
        self._batch_index = -1  # of the last record batch read
        self._dict_plans = {}
        self._owned = None
        if is_pipe_path(source):  # a FIFO or a device (/dev/stdin): read it, it cannot be mapped
            source = self._owned = io.open(source, "rb")
        self._readinto = None
        self._spares = []  # the last body buffers, reused once nothing references them
        self._partial_body = None  # (buffer, bytes in) of a body whose read timed out
        self._bytes_in = 0  # bytes read from a file object so far
        if is_file_object(source):
            self._description = description or source_name(source)
            try:
                source = PolledInput.of(source, timeout) or source
            except BaseException:
                self._close_owned()
                raise
            self._file = source
            self._readinto = getattr(source, "readinto", None)
            widen_pipe(source)
            self._decoder = MessageDecoder()
            head = read_head(source, 8)
            self._bytes_in = len(head)
            size = 0 if not head else None
            self._generations = _SeekedFile.of(source, head, self._description)
            self._unseekable_file = self._generations is None and head[:6] == MAGIC
            if head[:6] == MAGIC or self._generations is not None:  # (an IPC file's messages
                self._decoder = MessageDecoder(8)  # start at byte 8: errors name true offsets)
        else:
            start = source.tell() if isinstance(source, io.BytesIO) else 0  # read on from there
            region = self._region = region_of(source, description)
            self._region_size = region.size
            self._description = region.description
            start = self._pos = min(start, region.size)
            size = region.size - start
            head = region.view(start, min(size, HEAD_SIZE)).to_bytes()
        try:
            if head[:6] == MAGIC and len(head) >= 8:
                self._pos += 8  # the stream inside an IPC file (or a file cut short)
                self._in_file = self._region is not None
                if self._region is not None:
                    self._find_ends(source, description)
                else:  # (a read(8) that returned more: the stream's next bytes)
                    self._extra = head[8:]
                    self._bytes_in -= len(self._extra)  # (counted when handed out)
            elif head[:6] == MAGIC:  # (an IPC file cut inside its 8-byte magic and padding)
                raise ArrowInvalid(f"{self._description}: {len(head)} bytes is too small for an "
                                   f"Arrow IPC file")
            elif self._file is not None and head:
                # (up to a legacy end-of-stream marker, 4 zero bytes: what follows is not the
                # stream's, and a mapped reader never reads it)
                self._feed(head[:4] if head[:4] == b"\0\0\0\0" else head)
            first = self._next_message()
        except ArrowInvalid as exc:
            why = None if head[:6] == MAGIC else not_arrow(self._description, head, size,
                                                           "stream")
            if why is None:
                if not str(exc).startswith(f"{self._description}: "):
                    exc.args = (f"{self._description}: {exc}",)  # (which input, its type kept)
                raise
            raise ArrowInvalid(why) from exc
        if first is None:
            raise ArrowInvalid(not_arrow(self._description, head, size, "stream") or
                               f"{self._description}: empty stream, expected a schema message")
        if first.record.header_type != MessageHeader.Schema:
            raise ArrowInvalid(f"{self._description}: stream starts with a {first.kind} message, "
                               f"expected Schema")
        self.schema = first.header
        self.features = first.record.features
        self.version = first.record.version
        self._memo = DictionaryMemo(self.schema, file_mode=False)
        self._done = False
        self._first_pos = self._pos  # where the messages after the schema start (a region)

    _source_grows = property(lambda self: self._file is not None)

    def _find_ends(self, source, description) -> None:
        """``_end`` and ``_committed`` of the IPC file in the region, its tail read by
        ``pread``, never through the mapping: another process may cut an unfinished append,
        and a mapped page past the cut is SIGBUS.  A cut while this reads maps the file
        again, as ``FileReader``'s open does."""
        for attempt in range(_REOPEN_TRIES):
            read = tail_reader(self._region)
            try:
                self._end = footer_start_at(self._region.size, read)
                self._committed = committed_at_open(self._region.size, read)
                if self._committed is not None or attempt == _REOPEN_TRIES - 1 or \
                        not mapping_stale(self._region, marker_wait(self._region.size, read)):
                    return
                # (a damaged end in a file that changed since it was mapped: another process's
                # append writing its marker, seen half-written; map it again)
            except FileChanged:
                if attempt == _REOPEN_TRIES - 1 or not isinstance(source, (str, os.PathLike)):
                    raise
            finally:
                read.close()
            self._region = region_of(source, description)
            self._region_size = self._region.size

    def _source_bytes(self) -> Optional[int]:
        """A stream read from a file object: the bytes read so far (its budget grows with
        them); else the mapping's or the buffer's size (kept: a batch read as close() drops
        the region is budgeted by it, not by 0 bytes)."""
        if self._region_size is None:
            return self._bytes_in
        return self._region_size

    _region_size: Optional[int] = None  # (None: read from a file object)

    def _budget_key(self, msg):
        return None  # (a stream's messages are read once: nothing to tell apart)

    def _close_owned(self) -> None:
        owned, self._owned = self._owned, None
        if owned is not None:
            owned.close()

    def _next_message(self) -> Optional[Message]:
        if not self._recover:
            return self._read_message()
        try:
            return self._read_message()
        except ArrowInvalid as exc:
            self.recovery_error = str(exc)
            return None

    def _walked_export(self, requested_schema):
        if type(self) is not StreamReader:  # (subclasses read their batches another way)
            return None
        return export_stream_batches(self.schema, self._plan(MetadataVersion.V5).c_walk,
                                     self._next_for_export, requested_schema)

    def _export_ahead(self) -> bool:
        if self._closed or self._done:
            return False
        if self._file is not None:
            return True
        region = self._region  # (once: close() from another thread drops it)
        if region is None:
            return False
        pos, index = self._pos, self._index
        for _ in range(64):  # (past the dictionaries to the next record batch, not further)
            if self._end is not None and pos >= self._end:
                return False
            try:
                msg = read_message_at(region, pos, index)
            except ArrowInvalid:
                return False  # (the export reports it, where it belongs)
            if msg is None:
                return False
            if msg.record.header_type == MessageHeader.RecordBatch:
                return msg.header.compression is not None
            pos, index = message_end(msg), index + 1
        return False

    def _read_message(self) -> Optional[Message]:
        region = self._region  # (once: close() from another thread drops it under this read)
        if self._file is None:
            if region is None:  # (closed: neither a file nor a region left)
                raise ArrowInvalid("the reader is closed")
            if self._end is not None and self._pos >= self._end:
                return None  # the footer of an IPC file written without an end-of-stream marker
            msg = read_message_at(region, self._pos, self._index)
            while msg is None and self._in_file:  # an appended file: its next generation
                resume = resume_after_eos(region, self._pos,  # (a loop: a generation may
                                          unfinished=self._unfinished,  # hold no message)
                                          salvage=self._salvage, committed=self._committed)
                if resume is None:
                    break
                self._pos = resume
                if self._end is not None and self._pos >= self._end:
                    return None
                msg = read_message_at(region, self._pos, self._index)
            if msg is not None:
                self._pos = message_end(msg)
                self._index += 1
            else:
                self._saw_eos = self._pos < region.size  # a marker, not the end of the bytes
                if self._saw_eos and self._in_file and self._end is None and \
                        self._committed is None and not self._salvage:
                    read = tail_reader(region)
                    try:
                        raise self._damaged_tail(read, region.size, self._pos)
                    finally:
                        read.close()
            return msg
        while not self._pending:
            f = self._file
            if f is None:
                self._check_open()
            dec = self._decoder
            gens = self._generations
            if gens is not None and dec.bytes_consumed == gens.footer_at and \
                    dec.next_required_size == 4 and not self._extra:
                return None  # the footer of an IPC file written without an end-of-stream marker
            if dec.eos:
                if self._generations is not None and self._next_generation():
                    continue
                if self._unseekable_file:
                    self._unseekable_file = False  # (checked once)
                    self._refuse_appended()
                self._saw_eos = True
                return None
            size = dec.body_size
            if 0 < size <= _DIRECT_BODY_MAX and self._readinto is not None and not self._extra:
                body = self._read_body(size)
                if body is not None:
                    try:
                        msg = dec.feed_body(body)
                    except ArrowInvalid as exc:
                        raise self._named(exc) from None
                    self._since = b""
                    return msg if self._generations is None else self._generations.place(msg)
            data = self._read_some(f, min(dec.next_required_size, _READ_CHUNK))
            if not data:
                try:
                    dec.finish()
                except ArrowInvalid as exc:
                    if self._footer_follows():
                        return None
                    raise self._named(exc) from None
                return None
            self._bytes_in += len(data)
            if self._unseekable_file and self._since is not None:
                self._since = self._since + data if len(self._since) < _FOOTER_PROBE else None
            try:
                self._feed(data)
            except ArrowInvalid:
                if self._footer_follows():
                    return None
                raise
        self._since = b""  # (a message boundary)
        msg = self._pending.pop(0)
        return msg if self._generations is None else self._generations.place(msg)

    #: The bytes of the current message an IPC file read from a source that cannot seek keeps
    #: (at most ``_FOOTER_PROBE``; None past that), for ``_footer_follows``.
    _since: Optional[bytes] = b""

    def _footer_follows(self) -> bool:
        """Whether the message the decoder just refused, read from a source that cannot seek,
        is an IPC file's footer and trailer to the end of the input: a file written without
        an end-of-stream marker, whose messages end there (as the mapped reader finds by its
        footer).  Reads the rest of the input to tell."""
        if not self._unseekable_file or not self._since:
            return False
        tail = bytearray(self._since)
        self._unseekable_file = False  # (checked once)
        while len(tail) <= MAX_FOOTER_SCAN:
            chunk = self._read_some(self._file, _READ_CHUNK)
            if not chunk:
                break
            tail += chunk
        return trailer_after(tail) == len(tail)

    def _read_some(self, f, n: int) -> bytes:
        """Up to ``n`` bytes from the file object ``f`` (b"" at its end): first those a read
        returned beyond what it was asked for (``_extra``), kept for the reads after it."""
        extra = self._extra
        if extra:
            self._extra = extra[n:]
            return extra[:n]
        try:
            data = f.read(n)
        except (TimeoutError, ArrowInvalid):
            raise
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{self._description}: read failed: {exc}") from exc
        if data is None:
            raise no_bytes_now(self._description, f"read({n})")
        if len(data) > n:
            data, self._extra = data[:n], bytes(data[n:])
        return data

    _extra = b""  # bytes a read returned beyond those asked for, read next

    def _refuse_appended(self) -> None:
        """After the first end-of-stream marker of an IPC file read from a source that cannot
        seek (a pipe): read its footer and trailer to the end of the input, and raise when
        more follows (the generations of an appended file, which cannot be judged committed
        without looking at the file's end first) rather than end quietly without them."""
        f, data = self._file, bytearray()
        while len(data) <= MAX_FOOTER_SCAN:
            chunk = self._read_some(f, _READ_CHUNK)
            if not chunk:
                break
            data += chunk
        end = trailer_after(data)
        if end is None and len(data) <= MAX_FOOTER_SCAN:
            raise ArrowInvalid(
                f"{self._description}: the IPC file's messages end in an end-of-stream marker, "
                f"and the {len(data)} bytes after it are not a footer and trailer (a truncated "
                f"or damaged copy): {_LATER_ROWS}")
        if end is not None and len(data) > end or len(data) > MAX_FOOTER_SCAN:
            raise ArrowInvalid(
                f"{self._description}: an IPC file with more after its first footer (an "
                f"appended file, or files run together) read from a source that cannot seek: "
                f"only its first generation was read; open the file by path, or give a "
                f"seekable file object")

    def _damaged_tail(self, read, size: int, at: int) -> ArrowInvalid:
        """The error at the end-of-stream marker at byte ``at`` of an IPC file whose tail was
        found damaged when it was opened (no trailer, no append in progress): not a quiet
        end, as the rows of a later append may be what was cut."""
        problem = trailer_problem(read, size) or "its tail is not a trailer"
        return ArrowInvalid(f"{self._description}: the IPC file's messages end at byte {at} (an "
                            f"end-of-stream marker), and the file's tail is damaged: {problem}; "
                            f"no append marker records an append in progress: {_LATER_ROWS}")

    def _next_generation(self) -> bool:
        """After an end-of-stream marker of an IPC file read through a seekable file object:
        go on to the messages of the next committed generation, as the mapped reader does
        (an appended file: ``arrowmm.ipc.read.trailer``); False after the last one."""
        gens, f = self._generations, self._file
        try:
            resume = generation_after(gens.size, f.tell() - len(self._extra), gens,
                                      unfinished=self._unfinished,
                                      salvage=self._salvage, committed=gens.committed)
            damage = None
            if resume is None and gens.committed is None and not self._salvage:
                end = f.tell() - len(self._extra)  # (past the marker: 8 bytes, or 4 before 0.15)
                eos = end - 8 if gens(end - 8, 4) == b"\xff\xff\xff\xff" else end - 4
                damage = self._damaged_tail(gens, gens.size, eos)
            elif resume is not None:
                f.seek(resume)
                self._extra = b""
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{self._description}: read failed: {exc}") from exc
        if damage is not None:
            raise damage
        if resume is None:
            return False
        self._decoder = MessageDecoder(resume, gens.next_index)
        return True

    def _feed(self, data) -> None:
        """Feed ``data`` read from the file object to the decoder, keeping its messages."""
        try:
            self._pending.extend(self._decoder.feed(data))
        except ArrowInvalid as exc:
            raise self._named(exc) from None

    def _named(self, exc: ArrowInvalid) -> ArrowInvalid:
        """The decoder's ``exc`` (it knows offsets, not the source) naming the source."""
        try:
            out = type(exc)(f"{self._description}: {exc}")
        except TypeError:  # (a subclass with another signature)
            out = ArrowInvalid(f"{self._description}: {exc}")
        out.__cause__ = exc.__cause__
        return out

    def _body_buffer(self, size: int) -> np.ndarray:
        """``size`` writable aligned bytes for the next body: one of the reader's last two
        body buffers when nothing else references it any more (no batch, array, numpy view
        or export of its memory: each holds a reference to it), else a new one, kept as a
        spare in place of the oldest.  Reusing memory whose pages are already there avoids
        a page fault per 4 KiB of every body, which under memory pressure cost more than the
        read itself (measured)."""
        spares = self._spares
        for i in range(len(spares)):
            buf = spares[i]
            # (3: the list's, ``buf``'s and getrefcount's argument's: nobody else holds it)
            if size <= buf.size <= 2 * size + _SMALL_BODY and sys.getrefcount(buf) == 3:
                del spares[i]
                spares.append(buf)
                return buf[:size]
        if size < _SMALL_BODY:
            return _arena.empty(size)
        buf = _arena.empty(size + (size >> 4))  # (1/16 more: the next body is often bigger)
        spares.append(buf)
        del spares[:-_SPARE_BODIES]
        return buf[:size]

    def _read_body(self, size: int) -> Optional[BufferView]:
        """A message body of ``size`` bytes read from the file object with ``readinto``
        calls as big as what is left, straight into a new aligned buffer (an ``_arena``
        block: its pages are reused for a later body once no batch views this one, and cost
        memory only as the bytes arrive, so a false length costs address space only).
        None when the file object turns out to have no working ``readinto`` (io.RawIOBase
        subclasses that define ``read`` only): nothing was read, and ``read`` is used from
        then on.  A read that times out keeps what it read (``_partial_body``): the next
        call goes on from there."""
        partial, self._partial_body = self._partial_body, None
        if partial is not None and partial[0].size == size:
            buf, n = partial
        else:
            buf, n = self._body_buffer(size), 0
        view = memoryview(buf)
        try:
            while n < size:
                got = self._readinto(view[n:])
                if got is None:
                    raise no_bytes_now(self._description, f"readinto() of {size - n} bytes")
                if not got:
                    break
                n += got
                self._bytes_in += got
        except TimeoutError:
            self._partial_body = (buf, n)
            raise
        except ArrowInvalid:
            raise
        except (NotImplementedError, io.UnsupportedOperation):
            if n:
                raise
            self._readinto = None
            return None
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{self._description}: read failed: {exc}") from exc
        if n < size:  # (the decoder says what was cut short, as when fed in pieces)
            try:
                self._decoder.feed(view[:n])
                self._decoder.finish()
            except ArrowInvalid as exc:
                raise self._named(exc) from None
        return as_view(buf, description=f"body of message {self._index}")

    def __iter__(self) -> Iterator[RecordBatch]:
        """The remaining record batches, in order.  Over a file object (a pipe, a socket) the
        next message is read ahead on a thread of the iteration's own while the consumer
        works (see ``_batches_read_ahead``); over a region, reading is a few header reads
        and nothing is gained by a thread."""
        if self._file is None:
            return self._in_turn()
        return self._batches_read_ahead()

    def _in_turn(self) -> Iterator[RecordBatch]:
        return SequentialBatches.__iter__(self)

    def _batches_read_ahead(self) -> Iterator[RecordBatch]:
        """The batches, the next one read (never decoded: columns stay lazy) in the background
        while the consumer uses this one: one batch ahead at most.

        The reading runs on a ``OneAhead`` thread, so stopping early never waits for a read
        in flight: a batch read ahead and not taken is handed out next by this reader (never
        skipped), and a read still in flight is waited for by the next read, as the source
        itself would be.  An error is raised when the consumer reaches it.  A direct
        ``read_next_batch``, an export, another iteration or ``close`` take over from this
        iteration (``_detach_iteration``): it then goes on with plain reads, in order."""
        self._detach_iteration()  # (a second iteration takes over from the first)
        self._wait_for_held()  # (its steps do not wait: they would wait for themselves)
        ahead = OneAhead(self._ahead_step, self._ahead_in_flight, self._ahead_late)
        self._iteration = ahead
        try:
            ahead.ask()
            while True:
                batch = ahead.take()
                if batch is None:
                    return
                if batch is DETACHED:
                    break
                ahead.ask()
                yield batch
        finally:
            if self._iteration is ahead:
                self._iteration = None
            ahead.stop()
        yield from self._in_turn()  # (detached: the batches that are left, read in turn)

    def _ahead_step(self) -> Optional[RecordBatch]:
        """The next batch (None at the end), on the iteration's read-ahead thread."""
        self._enter(wait_for_ahead=False)
        try:
            return self._read_next_batch()
        except StopIteration:
            return None
        finally:
            self._consumer.release()

    def _detach_iteration(self) -> None:
        """Stop the read-ahead of an iteration in progress (its batch read ahead is handed
        out next); its consumer, if it goes on, reads in turn."""
        ahead = self._iteration
        if ahead is not None:
            self._iteration = None
            ahead.stop(wake=True)

    def _wait_for_held(self) -> None:
        """Wait while a read ahead for an iteration or export that stopped is in flight."""
        with self._held_lock:
            while self._held_pending:
                self._held_lock.wait()

    def read_next_batch(self) -> RecordBatch:
        """The next record batch; raises ``StopIteration`` at the end of the stream.

        A stream has one consumer at a time: called while another thread is inside it, this
        raises ``ArrowInvalid`` rather than interleave the two reads (the batches it returns
        may be shared freely)."""
        self._detach_iteration()
        self._enter()
        try:
            return self._read_next_batch()
        finally:
            self._consumer.release()

    def _next_for_export(self, walk) -> Optional[RecordBatch]:
        """The next record batch for the C stream export (StopIteration at the end), or None
        when ``walk(region, offset, end, lookup)`` took the message at this reader's position
        straight into the C struct: it returns the offset past the message (or -1: this
        reader reads it, as it does dictionary batches and anything unusual)."""
        self._detach_iteration()
        self._enter()  # one consumer at a time, as for read_next_batch
        try:
            held = self._take_held()
            if held is not None:
                return held
            region, memo = self._region, self._memo  # (once, before the check: see close)
            if walk is not None and self._file is None and region is not None \
                    and not self._closed and not self._done:
                end = walk(region, self._pos, region.size if self._end is None else self._end,
                           memo.get)
                if end >= 0:
                    self._pos = end
                    self._index += 1
                    return None
            return self._read_next_batch()
        finally:
            self._consumer.release()

    def _enter(self, wait_for_ahead: bool = True) -> None:
        if wait_for_ahead:  # (not the read-ahead's own step: it would wait for itself)
            self._wait_for_held()
        if not self._consumer.acquire(blocking=False):
            self._busy()

    def _busy(self):
        raise ArrowInvalid(f"{self._description}: StreamReader is read by one consumer at a "
                           f"time, and another thread is reading the next batch now (share "
                           f"the batches it returns, or take turns with a lock)")

    def _decoded_batches(self):
        """As ``ReaderBase._decoded_batches``; a batch read ahead and not taken when the
        consumer stops comes back here (``_take_held``) rather than being skipped."""
        self._detach_iteration()
        self._wait_for_held()  # (its steps do not wait: they would wait for themselves)
        return decoded_in_order(self._ahead_steps(), self._ahead_in_flight, self._ahead_late)

    def _ahead_steps(self):
        """The batches as ``read_next_batch`` gives them, for the read-ahead thread."""
        while True:
            self._enter(wait_for_ahead=False)
            try:
                batch = self._read_next_batch()
            except StopIteration:
                return
            finally:
                self._consumer.release()
            yield batch

    def _ahead_in_flight(self) -> None:
        with self._held_lock:
            self._held_pending = True

    def _ahead_late(self, batch, error=None) -> None:
        with self._held_lock:
            if not self._closed:  # (an error is held too: raised at the next read, in order)
                if error is not None:
                    self._held.append(error)
                elif batch is not None:
                    self._held.append(batch)
            self._held_pending = False
            self._held_lock.notify_all()
            owned, self._close_after_read = self._close_after_read, None
        if owned is not None:  # (the reader was closed while this read was in flight)
            owned.close()

    def _take_held(self) -> Optional[RecordBatch]:
        """The batch a released export read ahead (None if none); raises while that read is
        still in flight (another thread is reading this stream)."""
        with self._held_lock:
            if self._held:
                held = self._held.pop(0)
                if isinstance(held, BaseException):
                    raise held
                return held
            if self._held_pending:
                self._busy()
        return None

    def _read_next_batch(self) -> RecordBatch:
        memo = self._memo  # (before the check: close() sets _closed, then drops it)
        self._check_open()
        held = self._take_held()
        if held is not None:
            return held
        while not self._done:
            msg = self._next_message()
            if msg is None:
                self._done = True
                if self._require_eos and not self._saw_eos and self.recovery_error is None:
                    raise ArrowInvalid(f"{self._description}: the stream ends without its "
                                       f"end-of-stream marker (require_eos=True): its writer may "
                                       f"not have finished")
                break
            where = f"message {msg.index}" + (f" (byte {msg.offset})" if msg.offset >= 0 else "")
            header_type = msg.record.header_type
            if header_type == MessageHeader.RecordBatch:
                self._batch_index += 1
                return self._record_batch(msg, memo.snapshot(), where, self._batch_index)
            if header_type == MessageHeader.DictionaryBatch:
                self._dictionary_batch(msg, memo, where)
            elif header_type == MessageHeader.Schema:
                raise ArrowInvalid(f"{where}: a second schema message in the stream")
            else:
                raise ArrowNotImplementedError(f"{where}: {msg.kind} message inside a record batch stream")
        raise StopIteration

    def read_all(self) -> Table:
        """Every remaining record batch, in order, as an ``arrowmm.Table``."""
        return Table(self.schema, list(self))

    @property
    def num_rows(self) -> int:
        """Rows in the whole stream, from its record batch headers (no body is read, and
        the reader's position does not move).  A stream read from a file object cannot be
        looked ahead in: ``ArrowNotImplementedError`` (``count_rows()`` reads it)."""
        region = self._region  # (before the check: close() sets _closed, then drops it)
        self._check_open()
        if self._file is not None or region is None:
            raise ArrowNotImplementedError(f"{self._description}: num_rows of a stream read from "
                                           f"a file object needs reading it; count_rows() counts "
                                           f"the remaining rows as it reads them")
        pos, index, total = self._first_pos, 1, 0
        while self._end is None or pos < self._end:
            try:
                msg = read_message_at(region, pos, index)
                if msg is None and self._in_file:  # an appended file: its next generation
                    resume = resume_after_eos(region, pos, unfinished=self._unfinished,
                                              salvage=self._salvage, committed=self._committed)
                    if resume is not None:
                        pos = resume
                        continue
            except ArrowInvalid:
                if self._recover:
                    break
                raise
            if msg is None:
                break
            if msg.record.header_type == MessageHeader.RecordBatch:
                total += msg.header.length
            pos = message_end(msg)
            index += 1
        return total

    def count_rows(self) -> int:
        """Rows of the stream: ``num_rows`` over a mapping or a buffer; over a file object,
        the remaining rows, counted from the headers of the batches as they are read."""
        if self._file is None:
            return self.num_rows
        return sum(b.num_rows for b in self)

    def slice(self, offset: int = 0, length: Optional[int] = None) -> Table:
        """The remaining rows ``[offset, offset + length)``, as a Table; reads the batches up
        to the last row asked for, and slices them zero-copy.  The rows after the slice are
        the ones read next."""
        offset = int(offset)
        if offset < 0 or (length is not None and int(length) < 0):
            raise ArrowInvalid(f"slice(offset={offset}, length={length}): both must be >= 0")
        end = None if length is None else offset + int(length)
        kept, start = [], 0
        skipped = None
        if end == 0:  # (reads nothing: a batch read would be lost)
            self._check_open()
            return Table(self.schema, [])
        for b in self._in_turn():
            if start + b.num_rows > offset:
                if skipped is None:
                    skipped = offset - start
                kept.append(b)
            start += b.num_rows
            if end is not None and start >= end:
                if start > end:  # (the rows past the slice are the stream's next ones)
                    self._hand_back(b.slice(b.num_rows - (start - end)))
                break
        return Table(self.schema, slice_batches(kept, skipped or 0, length))

    def _hand_back(self, rest: RecordBatch) -> None:
        with self._held_lock:  # (read before any batch held for an export: it came first)
            self._held.insert(0, rest)

    def close(self):
        """Release the reader; a read waiting on a pipe, socket or device in another thread
        is woken and raises ``ArrowInvalid`` (see the class's docstring)."""
        self._closed = True  # (first: a read in flight that finds a source gone raises)
        f = self._file
        owned = self._owned
        self._owned = None
        if isinstance(f, PolledInput):  # (the read it wakes finds the reader closed)
            f.shut(owned.close if owned is not None else None)
            owned = None  # (closed once no read is in flight on it)
        self._detach_iteration()
        super().close()
        self._file = None
        self._memo = None  # its dictionaries point into the source
        with self._held_lock:
            if owned is not None and self._held_pending:
                # a read ahead is still in flight on that file (a quiet pipe may hold it up
                # for ever): closing waits for nobody; the file closes once that read returns
                self._close_after_read, owned = owned, None
        if owned is not None:
            owned.close()

    def __repr__(self):
        return f"<arrowmm.StreamReader>\n{self.schema}"
