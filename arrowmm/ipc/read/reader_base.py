"""What the IPC readers share: sources (paths, mappings, buffers, file objects, pipes) turned
into regions or file objects, and ``ReaderBase`` (projection, dictionaries, batches, memory
advice, the Arrow PyCapsule export).

``file_reader.py`` holds the random-access ``FileReader`` (and ``MessageBatchDecoder``),
``stream_reader.py`` the sequential ``StreamReader``; both build on this module.
"""
from __future__ import annotations

import bz2
import functools
import gzip
import io
import lzma
import math
import mmap
import os
import select
import socket
import stat
import struct
import threading
from typing import Iterator, Optional

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None

import numpy as np

from ... import types as t
from ..._core._region import Region
from .file_mapping import map_file
from ...arrays.batch import RecordBatch
from ...arrays.pandas_compat import PandasConvertible
from ...arrays.table import Table
from ...errors import ArrowError, ArrowInvalid, ArrowNotImplementedError
from ...format import BLOCK, MessageHeader, MetadataVersion, RecordBatchHeader
from ...interop._cdata import export_schema, export_stream
from ..core.compression import CODEC_NAMES, DecompressionBudget
from ..core.dictionaries import DictionaryMemo
from ..core.files import MAGIC
from ...arrays.decode_ahead import ReadAhead, decoded_in_order
from .loader import BatchLoader, LoadStats, SchemaPlan
from .residency import advise, resident_bytes
from ..core.framing import Message, read_message_at
from .projection import ProjectedLoader, project_schema, resolve_columns
from .sniff import HEAD_SIZE, describe

__all__ = ["ReaderBase", "BatchWhere", "batch_index", "region_of", "is_file_object", "file_object_region", "file_region", "decompressing", "source_name", "is_pipe_path", "first_bytes", "not_a_file", "read_head", "widen_pipe", "footer_start", "flat_blocks", "EMPTY_BLOCKS", "PIPE_BUFFER", "I32", "PolledInput", "check_timeout", "no_bytes_now"]

I32 = struct.Struct("<i")


class BatchWhere:
    """'record batch k (message at byte n)', formatted only when an error message needs it."""

    __slots__ = ("index", "offset")

    def __init__(self, index, offset):
        self.index = index
        self.offset = offset

    def __str__(self):
        return f"record batch {self.index} (message at byte {self.offset})"


def batch_index(i, n: int) -> int:
    """Record batch index ``i`` of ``n`` as a non-negative int (negative counts from the end)."""
    k = int(i)
    if k < 0:
        k += n
    if not 0 <= k < n:
        raise IndexError(f"record batch index {i} out of range for {n} batches")
    return k


_EXPERIMENTAL_COMPRESSION = "ARROW:experimental_compression"


def _v4_codec(header: RecordBatchHeader, record, where):
    """(header, custom metadata) of a batch message, with the codec of a compressed V4 message
    that names it the Arrow 0.17 way (custom metadata ``ARROW:experimental_compression``) moved
    into the header, and the key dropped from the metadata the batch reports."""
    metadata = record.metadata
    if not metadata or _EXPERIMENTAL_COMPRESSION not in metadata or record.version >= MetadataVersion.V5:
        return header, metadata
    name = str(metadata[_EXPERIMENTAL_COMPRESSION]).lower()
    codec = CODEC_NAMES.get(name)  # ("lz4_frame": Arrow 0.17's name of lz4)
    if codec is None:
        raise ArrowNotImplementedError(f"{where}: unknown compression {name!r} in "
                                       f"{_EXPERIMENTAL_COMPRESSION}")
    if header.compression is not None and header.compression != codec:
        raise ArrowInvalid(f"{where}: RecordBatch.compression says {header.compression}, "
                           f"{_EXPERIMENTAL_COMPRESSION} says {name}")
    rest = {k: v for k, v in metadata.items() if k != _EXPERIMENTAL_COMPRESSION} or None
    return RecordBatchHeader(header.length, header.nodes, header.buffers, codec,
                             header.variadic_counts), rest


EMPTY_BLOCKS = np.empty(0, dtype=BLOCK)


def flat_blocks(blocks):
    """Footer Blocks as an (n, 3) int64 view: offset, metaDataLength (+ padding), bodyLength."""
    return blocks.view("<i8").reshape(-1, 3) if len(blocks) else blocks.view("<i8").reshape(0, 3)


def overlapping_blocks(batches: np.ndarray, dictionaries: np.ndarray) -> Optional[str]:
    """What says two of a footer's Blocks (``flat_blocks`` rows of its record batches and
    dictionaries) claim the same bytes, or None.  A writer puts each message in bytes of its
    own, so an overlap is damage: one flipped bit in a Block's offset points record batch 1 at
    record batch 2's message, and every reader would read batch 2's rows twice (pyarrow does)
    with nothing to tell.  Blocks lying outside the file are left to the reads, which say so."""
    rows = np.concatenate([batches, dictionaries]) if len(dictionaries) else batches
    if len(rows) < 2:
        return None
    if len(rows) <= 8:  # (in Python: numpy's calls cost more than a few rows' work)
        spans = sorted((min(max(o, 0), 1 << 62),
                        min(max(o, 0), 1 << 62) + (m & 0xFFFFFFFF) + min(max(b, 0), 1 << 62), k)
                       for k, (o, m, b) in enumerate(rows.tolist()))
        for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
            if end > start:
                break
        else:
            return None
        start = [0] * len(rows)
        end = [0] * len(rows)
        for s0, e0, k in spans:
            start[k], end[k] = s0, e0
    else:
        start = np.clip(rows[:, 0], 0, 1 << 62)
        end = start + (rows[:, 1] & 0xFFFFFFFF) + np.clip(rows[:, 2], 0, 1 << 62)
        if (end[:-1] <= start[1:]).all():
            return None  # (in file order and apart: what writers write)
        order = np.argsort(start, kind="stable")
        bad = np.flatnonzero(end[order[:-1]] > start[order[1:]])
        if not bad.size:
            return None
        a, b = (int(k) for k in order[bad[0]:bad[0] + 2])

    def name(k: int) -> str:
        return f"record batch {k}" if k < len(batches) else f"dictionary {k - len(batches)}"
    return (f"the footer's blocks of {name(a)} (bytes {int(start[a])}-{int(end[a])}) and "
            f"{name(b)} (bytes {int(start[b])}-{int(end[b])}) overlap: each message has bytes "
            f"of its own, so the footer is damaged")


def is_file_object(source) -> bool:
    """Whether ``source`` is read through ``.read()``: a file object without the buffer
    protocol (``io.BytesIO`` is read through its buffer, ``mmap`` is a buffer)."""
    if isinstance(source, (str, os.PathLike, Region, io.BytesIO)) or not hasattr(source, "read"):
        return False
    try:
        memoryview(source).release()
    except TypeError:
        return True
    return False


def region_of(source, description: Optional[str] = None) -> Region:
    """A path (mapped read-only), a ``Region``, an ``io.BytesIO`` (its value: CPython hands
    out its internal bytes without a copy, and a later write copies on write), or a
    buffer-protocol object (used as is).  ``description`` names the last two in errors.

    A path that cannot be opened raises the ``OSError`` that says why (``FileNotFoundError``,
    ``IsADirectoryError``, ``PermissionError``), as pyarrow does.
    """
    if isinstance(source, Region) or hasattr(source, "pread"):  # (an unmapped.PreadFile)
        return source
    if isinstance(source, (str, os.PathLike)):
        return map_file(source)  # (a Region that knows its file: file_mapping.tail_reader)
    if isinstance(source, io.BytesIO):
        return Region(source.getvalue(), description=description or "BytesIO")
    return Region(source, description=description or "buffer")


def footer_start(region: Region) -> Optional[int]:
    """Where the footer of a complete IPC file in ``region`` starts (its length and trailing
    magic are at the end), or None when the region does not end like a file (cut short)."""
    size = region.size
    if size < 2 * len(MAGIC) + 4 or region.view(size - 6, 6).to_bytes() != MAGIC:
        return None
    footer_len = I32.unpack_from(region.view(size - 10, 4), 0)[0]
    if footer_len <= 0 or footer_len > size - 10 - 8:
        return None
    return size - 10 - footer_len


def source_name(source) -> str:
    """What errors call a file object: its ``name``, else (none, or an empty one, as a
    ``GzipFile`` over a BytesIO has) its type's."""
    name = getattr(source, "name", None)
    if isinstance(name, (str, bytes, os.PathLike)) and str(name):
        return str(name)
    return type(source).__name__


def decompressing(source) -> bool:
    """Whether ``source`` is a standard library decompressor (gzip, bz2, lzma file object):
    its ``fileno()`` is the compressed file's, and a backward ``seek`` decompresses again from
    the start, so it is read through once, never mapped or read by ranges."""
    return isinstance(source, (gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile))


def file_object_region(source) -> Region:
    """The whole file behind a binary file object, for the file format's random access: mapped
    when it is a regular file, else read into memory (it must be seekable)."""
    name = source_name(source)
    try:
        fd = None if decompressing(source) else source.fileno()
        st = os.fstat(fd) if fd is not None else None
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None and stat.S_ISREG(st.st_mode) and st.st_size > 0:
        return Region(mmap.mmap(fd, 0, access=mmap.ACCESS_READ), description=name)
    seekable = getattr(source, "seekable", None)
    if not (callable(seekable) and seekable()):
        raise ArrowInvalid(f"{name}: the IPC file format needs random access, and this file "
                           f"object cannot seek: read it with open_stream() (the IPC file "
                           f"format reads as a stream too), or pass a path or the bytes")
    source.seek(0)
    data = source.read()
    if isinstance(data, str):
        raise ArrowInvalid(f"{name}: the file object is in text mode; open it with mode 'rb'")
    return Region(data, description=name)


def is_pipe_path(source) -> bool:
    """Whether ``source`` is the path of something that is read, not mapped: a FIFO, a socket
    or a character device such as ``/dev/stdin`` on a pipe."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):
        return False  # opening it says why
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def first_bytes(region: Region) -> bytes:
    return region.view(0, min(region.size, HEAD_SIZE)).to_bytes()


def not_a_file(region: Region) -> ArrowInvalid:
    """Why ``region``, which does not start (or end) like an IPC file, is not one, as
    precisely as its first bytes allow."""
    name, size = region.description, region.size
    try:
        first = read_message_at(region, 0, 0) if size else None
    except ArrowError:
        first = None
    if first is not None and first.record.header_type == MessageHeader.Schema:
        return ArrowInvalid(f"{name}: is an Arrow IPC stream, not a file (it starts with a schema "
                            f"message, not the file magic 'ARROW1'): open it with "
                            f"arrowmm.open_stream() or arrowmm.open()")
    head = first_bytes(region)
    if head[:6] == MAGIC:
        return ArrowInvalid(f"{name}: {size} bytes is too small for an Arrow IPC file")
    what = describe(head, size)
    found = f" (found {head[:8]!r})" if size else ""
    return ArrowInvalid(f"{name}: does not start with the Arrow file magic 'ARROW1'{found}"
                        + (f": {what}" if what else ""))


_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031) if fcntl is not None else None
_F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032) if fcntl is not None else None
#: Pipe buffer asked for when reading a stream from a pipe (Linux's default is 64 KiB, and
#: 1 MiB the most an unprivileged process may set): fewer, bigger reads, and a writer that
#: blocks less often.  Measured: see benchmarks/bench_paths.py, row 3.
PIPE_BUFFER = 1 << 20


def widen_pipe(source) -> None:
    """Ask the kernel for a bigger buffer on ``source`` when it is a pipe; quietly nothing
    otherwise (not Linux, not a pipe, or not allowed)."""
    if _F_SETPIPE_SZ is None:
        return
    try:
        fd = source.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, _F_GETPIPE_SZ) < PIPE_BUFFER:
            fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BUFFER)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass


def check_timeout(timeout) -> Optional[float]:
    """``timeout=`` as ``open_stream`` / ``open`` take it: None (wait as long as it takes) or
    seconds, a finite number >= 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
            not math.isfinite(timeout) or timeout < 0:
        raise ArrowInvalid(f"timeout must be None or a finite number of seconds >= 0, "
                           f"got {timeout!r}")
    return float(timeout)


_RAW_FILES = (io.FileIO, socket.SocketIO)


class PolledInput:
    """A pipe, socket or character device behind a binary file object, read straight from its
    file descriptor, each wait for bytes a ``poll`` that also watches a pipe of its own:

    * a wait lasts at most ``timeout`` seconds (None: as long as it takes), then raises
      ``TimeoutError`` naming the source and the bytes awaited; nothing read is lost, and
      reading again waits again;
    * ``shut()`` from another thread ends a wait in progress: it raises ``ArrowInvalid``
      ("closed while waiting"), as every later read does.

    Made by ``of`` for an ``io.FileIO`` or socket file, or an ``io.BufferedReader`` /
    ``BufferedRandom`` over one (the bytes it had already buffered are read first: taken out
    of it, without waiting, when this is made).  The file object itself is left open, its
    position just past the bytes read.

    It reads a duplicate of the descriptor, closed once shut and no read is in flight: the
    owner may close the file object, and the next ``open()`` may get its number, but not
    this one's, so the reader never reads another file's bytes as its stream's."""

    def __init__(self, source, fd: int, buffered: bytes, timeout: Optional[float]):
        self.name = source_name(source)
        self.source = source
        self.timeout = timeout
        self.bytes_read = 0  # (the prefix included: bytes taken from the source)
        self._fd = fd = os.dup(fd)
        self._prefix = memoryview(buffered) if buffered else None
        self._state = threading.Lock()
        self._busy = False
        self._shut = False
        self._after = None  # called once a read in flight when shut has returned
        self._wake_r, self._wake_w = os.pipe()
        for end in (self._wake_r, self._wake_w):
            os.set_blocking(end, False)
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLPRI)
        self._poll.register(self._wake_r, select.POLLIN)

    @classmethod
    def of(cls, source, timeout: Optional[float]) -> Optional["PolledInput"]:
        """``source`` read with polled waits, or None when its reads never wait for a writer
        (a regular file).  With a ``timeout``, a file object that cannot be polled (no file
        descriptor, or one it reads its own way) raises ``ArrowInvalid``."""
        if isinstance(source, PolledInput):
            return source
        raw = source.raw if isinstance(source, (io.BufferedReader, io.BufferedRandom)) else source
        fd = None
        try:
            if not decompressing(source) and not isinstance(source, io.TextIOBase):
                fd = source.fileno()
                mode = os.fstat(fd).st_mode
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd is not None and not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or
                                   stat.S_ISCHR(mode)):
            return None  # (a regular file or a block device: its reads never wait)
        if fd is None or not isinstance(raw, _RAW_FILES) or fcntl is None or \
                not hasattr(select, "poll"):
            if timeout is None:
                return None  # (read as before: its reads block as long as they block)
            kind = "has no file descriptor" if fd is None else "reads its descriptor its own way"
            raise ArrowInvalid(f"{source_name(source)}: timeout= needs a pipe, socket or device "
                               f"read through its file descriptor (a file object from open(), "
                               f"socket.makefile(), sys.stdin.buffer, a subprocess's stdout), "
                               f"and this {type(source).__name__} {kind}: open it without "
                               f"timeout=")
        buffered = _take_buffered(source, fd) if raw is not source else b""
        return cls(source, fd, buffered, timeout)

    def fileno(self) -> int:
        return self._fd

    def unread(self, data: bytes) -> None:
        """Give back ``data``, read first again (what sniffing a source's first bytes took)."""
        if data:
            rest = self._prefix.tobytes() if self._prefix is not None else b""
            self._prefix = memoryview(bytes(data) + rest)
            self.bytes_read -= len(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (``n`` < 0: all, to the end), after one wait at most; b"" at the end."""
        if n is None or n < 0:
            parts = []
            while True:
                data = self.read(1 << 20)
                if not data:
                    return b"".join(parts)
                parts.append(data)
        return self._take(n, lambda: os.read(self._fd, n))

    def readinto(self, buf) -> int:
        """Bytes into ``buf`` (as many as are there, after one wait at most); 0 at the end."""
        view = memoryview(buf).cast("B")
        return self._take(view.nbytes, lambda: os.readv(self._fd, [view]), view)

    def _take(self, n: int, read, view=None):
        """``read()``'s result once the descriptor has bytes (or the end); first, the bytes
        the file object had buffered."""
        if not n:
            return 0 if view is not None else b""
        prefix = self._prefix
        if prefix is not None:
            if self._shut:
                raise self._closed(n)
            k = min(prefix.nbytes, n)
            self._prefix = prefix[k:] if k < prefix.nbytes else None
            self.bytes_read += k
            if view is None:
                return prefix[:k].tobytes()
            view[:k] = prefix[:k]
            return k
        self._enter(n)
        try:
            while True:
                self._wait(n)
                try:
                    out = read()
                except BlockingIOError:  # (a descriptor set non-blocking: wait again)
                    continue
                self.bytes_read += out if view is not None else len(out)
                return out
        finally:
            self._leave()

    def shut(self, after=None) -> None:
        """End a wait in progress (from any thread) and every later read; ``after()`` is
        called once no read is in flight any more (now, or when that read returns)."""
        with self._state:
            if self._shut:
                now = after
            else:
                self._shut = True
                if self._busy:
                    self._after = after
                    now = None
                    try:
                        os.write(self._wake_w, b"x")
                    except BlockingIOError:
                        pass
                else:
                    self._close_wake()
                    now = after
        if now is not None:
            now()

    def _enter(self, awaited: int) -> None:
        with self._state:
            if self._shut:
                raise self._closed(awaited)
            self._busy = True

    def _leave(self) -> None:
        with self._state:
            self._busy = False
            after, self._after = self._after, None
            if self._shut:
                self._close_wake()
        if after is not None:
            after()

    def _wait(self, awaited: int) -> None:
        timeout = self.timeout
        ms = None if timeout is None else int(math.ceil(timeout * 1000))
        events = self._poll.poll(ms)  # (interrupted by a signal: retried, the time left)
        if self._shut or any(fd == self._wake_r for fd, _ in events):
            raise self._closed(awaited)
        if not events:
            raise TimeoutError(f"{self.name}: no bytes came in {timeout:g} s while waiting "
                               f"for {awaited:,} bytes (timeout={timeout:g}; "
                               f"reading again waits again)")
        if any(ev & select.POLLNVAL for _, ev in events):
            raise ArrowInvalid(f"{self.name}: read failed: the file descriptor was closed")

    def _closed(self, awaited: int) -> ArrowInvalid:
        return ArrowInvalid(f"{self.name}: the reader was closed while waiting for "
                            f"{awaited:,} bytes")

    def _close_wake(self) -> None:
        fds = (self._wake_r, self._wake_w, self._fd)
        self._wake_r = self._wake_w = self._fd = -1
        for fd in fds:
            if fd >= 0:
                os.close(fd)

    def __del__(self):
        try:
            self._close_wake()
        except (AttributeError, OSError):
            pass


def _take_buffered(source, fd: int) -> bytes:
    """The bytes a buffered file object holds already (read from ``fd``, not yet handed out),
    taken out of it without waiting: ``peek`` with the descriptor made non-blocking for the
    moment (a socket through its own timeout), so that an empty buffer comes back empty."""
    sock = getattr(source.raw, "_sock", None)  # (socket.SocketIO's socket)
    if sock is not None:
        before = sock.gettimeout()
        sock.settimeout(0)
    else:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        data = source.peek(1)
    except BlockingIOError:
        data = b""
    finally:
        if sock is not None:
            sock.settimeout(before)
        else:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)
    return source.read(len(data)) if data else b""


def no_bytes_now(name: str, call: str) -> ArrowInvalid:
    """The error of a read that returned None: a non-blocking file object with no bytes
    ready (Python's io contract), which is not its end (pyarrow refuses it too)."""
    return ArrowInvalid(f"{name}: {call} returned None: a non-blocking file object with no "
                        f"bytes ready, not the end of its data; give a blocking one (a pipe "
                        f"or socket file set non-blocking is waited for: pass its file object "
                        f"from open() or socket.makefile())")


def read_head(source, n: int) -> bytes:
    """Up to ``n`` bytes from a file object (fewer only at its end)."""
    if isinstance(source, io.TextIOBase):
        raise ArrowInvalid(f"{source_name(source)}: the file object is in text mode; "
                           f"open it with mode 'rb'")
    out = b""
    while len(out) < n:
        try:
            data = source.read(n - len(out))
        except (TimeoutError, ArrowInvalid):
            raise
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{source_name(source)}: read failed: {exc}") from exc
        if isinstance(data, str):
            raise ArrowInvalid(f"{source_name(source)}: the file object is in text mode; "
                               f"open it with mode 'rb'")
        if data is None:
            raise no_bytes_now(source_name(source), f"read({n - len(out)})")
        if not data:
            break
        out += bytes(data)
    return out


def file_region(source) -> Region:
    """The bytes of an IPC file, for random access: a path mapped (a FIFO or ``/dev/stdin``
    read whole), a file object mapped or read (``file_object_region``), a buffer as it is.

    A path is mapped with its ends read alongside (``file_mapping.map_file(ends=True)``),
    which also tells a FIFO from a file on the descriptor it opens (no ``stat`` before)."""
    if isinstance(source, (str, os.PathLike)):
        return map_file(source, ends=True)
    return file_object_region(source) if is_file_object(source) else region_of(source)


_BUDGET_LOCK = threading.Lock()  # makes a reader's decompression budget once


class ReaderBase(PandasConvertible):
    """What file and stream readers share: schema, stats, closing, the stream capsule."""

    schema = None
    _region: Optional[Region] = None
    _file_schema = None  # the schema the messages are written in, when ``schema`` projects it
    _projection = None   # indices of ``schema``'s columns in ``_file_schema``, or None

    #: Schema.features the file or stream declares (names: "COMPRESSED_BODY",
    #: "DICTIONARY_REPLACEMENT"); informational, an unknown one is refused when opening.
    features: tuple = ()

    def __init__(self, allow_copies: bool = True):
        self.stats = LoadStats()
        self._closed = False
        self._plans = {}
        self.allow_copies = bool(allow_copies)
        self._lock = threading.Lock()  # held while reading what is read once (dictionaries)

    def _plan(self, version: int) -> SchemaPlan:
        plan = self._plans.get(version)
        if plan is None:  # (two threads may both build it: the same plan, one is kept)
            plan = self._plans.setdefault(version, SchemaPlan.build(self.file_schema, version))
        return plan

    @property
    def file_schema(self):
        """The schema of the file or stream (``schema`` is its projection with ``columns=``)."""
        return self._file_schema if self._file_schema is not None else self.schema

    @property
    def projection(self) -> Optional[list]:
        """The columns the reader was projected onto (indices, or dotted paths for struct
        fields), as ``select_columns`` takes them again; None when it reads every column."""
        if self._projection is None:
            return None
        return [k if isinstance(k, int) else k[2] for k in self._projection]

    def select_columns(self, columns) -> None:
        """Project the reader onto ``columns`` (names or indices, in the order given): its
        schema and every batch it reads expose those only, and the others are never decoded
        (``open_file(..., columns=...)`` calls this).  An unknown name is ``ArrowInvalid``
        naming it and the columns there are."""
        if columns is None:
            return
        full = self.file_schema
        indices = resolve_columns(full, columns)
        self._file_schema = full
        self._projection = indices
        self.schema = project_schema(full, indices)

    def file_identity(self) -> Optional[tuple]:
        """What tells the file this reader reads from another put under its name since, or
        None when it cannot say (``FileReader.file_identity``); a stream read as it arrives
        cannot."""
        return None

    def _check_open(self):
        if self._closed:
            raise ArrowInvalid("the reader is closed")

    #: ``max_decompressed_bytes`` as the reader was opened with (None: the default budget);
    #: set before its first batch is read (``opening`` sets it on the readers it makes).
    max_decompressed_bytes: Optional[int] = None
    _budget: Optional[DecompressionBudget] = None

    def _source_bytes(self) -> Optional[int]:
        """The size of the source the default decompression budget is a multiple of (None:
        not known, no default budget)."""
        region = self._region
        size = getattr(region, "size", None) if region is not None else None
        return size if isinstance(size, int) else None

    def _budget_key(self, msg: Message):
        """What tells this reader's messages apart for its budget (a buffer counts once per
        message however often it is decoded): the message's offset (None: read once)."""
        return msg.offset if msg.offset >= 0 else None

    def _charger(self, msg: Message, compressed: bool):
        """The budget charge a loader of message ``msg`` makes (None when not compressed)."""
        if not compressed:
            return None
        budget = self._budget
        if budget is None:
            with _BUDGET_LOCK:  # (not self._lock: held by _dictionaries while it charges)
                budget = self._budget
                if budget is None:
                    size = self._source_bytes()  # (fixed now for a file; a stream's grows)
                    source = (lambda: size) if not self._source_grows else self._source_bytes
                    budget = self._budget = DecompressionBudget(self.max_decompressed_bytes,
                                                                source)
        return functools.partial(budget.charge, self._budget_key(msg))

    _source_grows = False  # (a stream read from a file object: the bytes read so far)

    def _dictionary_batch(self, msg: Message, memo: DictionaryMemo, where: str) -> None:
        header = msg.header
        data, _ = _v4_codec(header.data, msg.record, where)
        value_field = memo.field(header.id, where)
        plan = self._dict_plans.get(header.id)
        if plan is None or plan.version != msg.record.version:
            plan = SchemaPlan.build(t.Schema([value_field], endianness=self.schema.endianness),
                                   msg.record.version)
            self._dict_plans[header.id] = plan
        if header.is_delta and not self.allow_copies:
            raise ArrowInvalid(f"{where}: a delta of dictionary {header.id} is concatenated with "
                               f"what came before, a copy, and copies are refused "
                               f"(allow_copies=False)")
        loader = BatchLoader(plan, data, msg.body, memo.get, where, self.stats, self.allow_copies,
                             self._charger(msg, data.compression is not None))
        if header.id in memo.nesting:  # (its dictionaries bound by each record batch, as C++)
            memo.apply_loader(header.id, loader, header.is_delta, where)
        else:
            memo.apply(header.id, loader.column(0), header.is_delta, where)

    def _record_batch(self, msg: Message, lookup, where: str, index: Optional[int] = None
                      ) -> RecordBatch:
        """Record batch message ``msg`` as a lazy batch; ``index``: its place among the
        reader's record batches, for the read-ahead of compressed columns (``decode_ahead``)."""
        header, metadata = _v4_codec(msg.header, msg.record, where)
        loader = BatchLoader(self._plan(msg.record.version), header, msg.body, lookup, where,
                             self.stats, self.allow_copies,
                             self._charger(msg, header.compression is not None))
        if self._projection is not None:
            loader = ProjectedLoader(loader, self._projection)
        batch = RecordBatch(self.schema, loader.num_rows, loader=loader, metadata=metadata)
        if index is not None and header.compression is not None and self.allow_copies:
            ahead = self._ahead
            if ahead is None:
                ahead = self._ahead = ReadAhead(getattr(self, "num_record_batches", None),
                                                getattr(self, "_batch_at", None))
            ahead.track(index, batch)
            batch._ahead = (ahead, index)
        return batch

    _ahead: Optional[ReadAhead] = None

    def _export_ahead(self) -> bool:
        """Whether the C stream export goes through ``_decoded_batches``: when the next record
        batch is compressed (its columns are then decoded together, on the pool, rather than
        one at a time), or the batches come from a file object (read ahead in the background
        while the consumer works).  False when it cannot be told cheaply."""
        return False

    def _decoded_batches(self):
        """The reader's (remaining) batches, each decoded whole on the pool, the next read
        ahead while the consumer works (``decode_ahead.decoded_in_order``)."""
        return decoded_in_order(self)

    def memory(self) -> dict:
        """What the reader's data costs in RAM, to tell page cache from copies.

        ``mapped``: bytes of the source (a mapping, or the buffer given); ``resident``: of
        those, bytes whose pages this process holds now (the kernel's count for the mapping;
        None for a source that is not a mapped file, or off Linux); ``decompressed`` and
        ``realigned``: bytes the reader has made so far (copies, not the source's pages).
        """
        region = self._region  # (before the check: close() sets _closed, then drops it)
        self._check_open()
        if region is None:
            raise ArrowInvalid("memory(): this reader reads a file object, not a mapping")
        return {"mapped": region.size, "resident": resident_bytes(region),
                "decompressed": self.stats.bytes_decompressed, "realigned": self.stats.bytes_copied}

    def advise(self, advice: str, offset: int = 0, length: Optional[int] = None) -> None:
        """Tell the kernel how the mapped source will be read (``madvise``): ``"random"``,
        ``"sequential"``, ``"willneed"`` (read ahead now), ``"dontneed"`` (drop this process's
        pages now; they are read again from the file if touched) or ``"normal"``; for bytes
        ``[offset, offset + length)``, by default all.  Only for memory-mapped files and
        shared-memory segments."""
        region = self._region  # (before the check: close() sets _closed, then drops it)
        self._check_open()
        if region is None:
            raise ArrowInvalid("advise(): this reader reads a file object, not a mapping")
        advise(region, advice, offset, length)

    def close(self) -> None:
        """Release the reader.  Arrays and numpy views taken from it stay valid."""
        self._closed = True
        self._region = None
        self._plans = {}  # (their export programs remember the last dictionary exported)
        if self._ahead is not None:
            self._ahead.close()  # (a batch read ahead and never asked for; decodes under way)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _pandas_batches(self):
        return list(self)  # (batches_to_pandas decodes compressed ones a batch at a time)

    def read_all(self) -> Table:
        """Every (remaining) record batch, in order, as an ``arrowmm.Table`` (its batches are
        the reader's, their columns decoded when touched)."""
        return Table(self.schema, list(self))

    def _in_turn(self) -> Iterator[RecordBatch]:
        """The batches, read one at a time as they are asked for and never ahead (``head``
        and ``slice`` promise not to read past the rows they return)."""
        return iter(self)

    def head(self, n: int) -> Table:
        """The first ``n`` rows (of a stream: the next ``n``) as a Table; batches past them
        are not read."""
        self._check_open()  # (head(0) reads nothing, and a closed reader still says so)
        n = int(n)
        if n < 0:
            raise ArrowInvalid(f"head(n): n must be >= 0, got {n}")
        out, have = [], 0
        if n:
            for b in self._in_turn():
                if have + b.num_rows > n:
                    self._hand_back(b.slice(n - have))
                    b = b.slice(0, n - have)
                out.append(b)
                have += b.num_rows
                if have >= n:
                    break
        return Table(self.schema, out)

    def _hand_back(self, rest: RecordBatch) -> None:
        """The rows of a batch ``head`` cut and did not return: a stream reads them next (a
        file's ``head`` starts at its first row again, so nothing is kept)."""

    def __arrow_c_schema__(self):
        return export_schema(self.schema)

    def __arrow_c_stream__(self, requested_schema=None):
        """The (remaining) batches, in order, as an ``"arrow_array_stream"`` capsule: the plain
        record batches of a FileReader or StreamReader are walked from the mapping without
        making Python objects (``ipc.read._batch_walk``), the others exported as read; compressed
        ones (and those of a file object) are decoded a whole batch at a time on the codec
        pool, the next batch read ahead while the consumer takes this one."""
        self._check_open()  # (a closed reader is not exported as an empty stream)
        if self._export_ahead():
            return export_stream(self.schema, self._decoded_batches(), requested_schema)
        if self._projection is None:  # (the mapped walk knows whole schemas only)
            capsule = self._walked_export(requested_schema)
            if capsule is not None:
                return capsule
        return export_stream(self.schema, iter(self), requested_schema)

    def _walked_export(self, requested_schema):
        """The export of a whole-schema reader walked in C (``ipc.read._batch_walk``), or None
        where this kind of reader has no such walk (exactly ``FileReader`` and
        ``StreamReader`` have: their subclasses read differently, so they return None)."""
        return None

    def _mapping(self) -> Optional[Region]:
        """The mapped file, or None once closed (what the C stream export may still walk)."""
        return None if self._closed else self._region

