"""Opening IPC data: ``open_file``, ``open_stream`` and ``open`` choose the reader for a source.

A path is memory-mapped (or, with ``mmap=False``, read batch by batch into memory of the
reader's own: ``unmapped``); a buffer-protocol object is read in place; a binary file object
over a regular file is mapped, any other seekable one is read by byte ranges (``ranged``:
the footer, then only the batches' headers and the columns' bytes touched), and one that
cannot seek is read as it comes (a stream).  The readers themselves are in ``file_reader``,
``stream_reader``, ``ranged`` and ``unmapped``.
"""
from __future__ import annotations

import io
import mmap as _mmap
import os
import stat
from typing import Optional

from ..._core._region import Region
from ...errors import ArrowInvalid
from ...format.feather import FEATHER_MAGIC
from .feather import FeatherV1Reader, is_feather_v1
from .file_mapping import drop_ends
from ..core.files import MAGIC
from ..core.object_store import display_url, local_file_url, open_for_ranges, open_for_stream, resolve
from .ranged import RangedFileReader, RangeSource
from .file_reader import FileReader, StreamReader
from ..core.compression import check_budget
from .reader_base import (PolledInput, check_timeout, decompressing, file_region, first_bytes,
                          is_file_object, is_pipe_path, read_head, region_of, source_name)
from .sniff import not_arrow
from .unmapped import UnmappedFileReader, UnmappedStreamReader, open_unmapped

__all__ = ["open_file", "open_stream", "open"]


def _is_path(source) -> bool:
    return isinstance(source, (str, os.PathLike))


def _projected(reader, columns, max_decompressed_bytes=None):
    """``reader`` with its decompression budget, projected onto ``columns`` (closed again
    when they do not fit)."""
    reader.max_decompressed_bytes = max_decompressed_bytes  # (before any batch is read)
    if columns is not None:
        try:
            reader.select_columns(columns)
        except BaseException:
            reader.close()
            raise
    return reader


def open_file(source, *, columns=None, allow_copies: bool = True, mmap: bool = True,
              max_decompressed_bytes: Optional[int] = None, recover: bool = False,
              filesystem=None, storage_options: Optional[dict] = None) -> FileReader:
    """Open an IPC file: a path (str or ``os.PathLike``, memory-mapped), a buffer-protocol object
    (bytes, bytearray, memoryview, mmap, numpy array: no copy), an ``io.BytesIO`` (its buffer, no
    copy) or a seekable binary file object: mapped when it is a regular file, else read by byte
    ranges (an fsspec or socket-backed file, a file object without ``fileno()``): the footer
    when opened, a batch's header when it is asked for, a column's bytes when it is touched
    (``reader.bytes_read`` counts them).  The file object stays open after ``close()``.

    A path that cannot be opened raises ``FileNotFoundError``, ``IsADirectoryError`` or
    ``PermissionError``; bytes that are not an IPC file raise ``ArrowInvalid`` saying what they
    look like (an IPC stream, Parquet, Feather V1, CSV or text, compressed, empty).

    ``allow_copies=False``: columns that cannot be zero-copy (compressed, big-endian,
    misaligned) raise ``ArrowInvalid`` instead of being copied.  ``mmap=False`` (a path):
    read each batch into memory of its own when it is asked for (``pread``), instead of
    mapping the file: for files another program may truncate or rewrite, where a mapping
    would die of SIGBUS or see values change (see ``arrowmm.ipc.read.unmapped``).
    ``columns``: names or indices of the columns to read, in that order (the reader's
    schema and batches have only those; the others are never decoded).

    A file whose tail is not a valid trailer opens as its committed content when the file
    records that an append from there was in progress (``reader.unfinished_bytes`` counts the
    bytes after it); any other damage raises ``ArrowInvalid`` naming where.  ``recover=True``
    salvages a damaged file instead: its complete messages from the front, under a footer
    made for them (``reader.recovery_error`` says what was wrong; ``docs/recovery.md``).

    ``max_decompressed_bytes``: the reader's decompression budget, what the compressed
    buffers of all its batches may decompress to over its life (each buffer of each batch
    counted once, however often it is decoded again); going beyond it raises
    ``ArrowInvalid`` naming it, before the buffer is decoded.  None: the default, 65,536
    times the file's size or 64 MiB, whichever is more (``limits`` says what that protects
    against and what it cannot: set a budget of your own for untrusted input).

    A URL (``"s3://bucket/key.arrow"``, any scheme fsspec knows but ``file:``), or a path
    with ``filesystem=`` (an fsspec filesystem), is read by byte ranges from there: the
    footer when opened, then a batch's header and a touched column's buffers, nearby ranges
    in one request (``arrowmm.ipc.core.object_store``).  ``storage_options``: the options of the
    filesystem a URL makes (credentials, ``client_kwargs={"endpoint_url": ...}``), as polars
    and pandas take them.  A missing object raises ``FileNotFoundError`` naming the URL.
    """
    budget = check_budget(max_decompressed_bytes)
    options = dict(columns=columns, allow_copies=allow_copies, recover=recover,
                   max_decompressed_bytes=budget)
    remote = resolve(source, filesystem, storage_options)
    if remote is not None:
        return _remote_file(*remote, options)
    source = local_file_url(source)  # (file:///path, file://localhost/path: that path)
    if not mmap and _is_path(source):
        feather = _unmapped_feather(source)
        if feather is not None:
            return _projected(feather, columns, budget)
        return UnmappedFileReader(source, **options)
    if is_file_object(source) and ranged_access(source):
        src = RangeSource(source)
        if src.size < 4 or src.pread(0, 4, "magic").tobytes() != b"FEA1":
            return RangedFileReader(src, **options)
    region = file_region(source)
    if is_feather_v1(region):  # (Feather V1: ``FEA1``, not the IPC file's ``ARROW1``)
        drop_ends(region)  # (read for an IPC file's open)
        return _projected(FeatherV1Reader(region, region.description), columns, budget)
    return FileReader(region, **options)


def open_stream(source, *, columns=None, recover: bool = False, allow_copies: bool = True,
                require_eos: bool = False, mmap: bool = True, timeout: Optional[float] = None,
                max_decompressed_bytes: Optional[int] = None, filesystem=None,
                storage_options: Optional[dict] = None) -> StreamReader:
    """Open an IPC stream: a path, a buffer-protocol object, an ``io.BytesIO`` (from its
    position, no copy) or a binary file-like object with ``.read()`` (pipe, socket file,
    ``sys.stdin.buffer``), read incrementally.  An IPC file reads as the stream it holds.
    Errors as for ``open_file``.

    ``recover=True`` stops quietly at a damaged or truncated tail (see ``StreamReader``);
    ``allow_copies=False`` as for ``open_file``.  ``require_eos=True``: a stream that ends
    without its end-of-stream marker (a writer that did not finish) raises ``ArrowInvalid``
    after its last complete batch instead of ending quietly.  ``mmap=False`` (a path): read
    the file as a file object, into memory of the reader's own.  ``columns``: as for
    ``open_file``.

    ``timeout``: seconds each wait for bytes from a pipe, a socket or a device may last
    (a file object with a file descriptor: ``open()``, ``socket.makefile()``,
    ``sys.stdin.buffer``, a subprocess's stdout, or the path of a FIFO), else
    ``TimeoutError`` naming the source and the bytes awaited; None waits as long as it
    takes.  No effect over a mapping or a buffer; ``ArrowInvalid`` for a file object without
    a descriptor.  ``close()`` from another thread wakes a read waiting there: it raises
    ``ArrowInvalid`` (see ``StreamReader``).

    ``max_decompressed_bytes``: as for ``open_file``; the default budget of a stream read
    from a file object grows with the bytes read so far (65,536 times them, at least
    64 MiB).

    A URL, or a path with ``filesystem=``: read in order from there (``storage_options``:
    see ``open_file``).
    """
    budget = check_budget(max_decompressed_bytes)
    remote = resolve(source, filesystem, storage_options)
    if remote is not None:
        return _projected(_remote_stream(*remote, dict(recover=recover, allow_copies=allow_copies,
                                                       require_eos=require_eos)),
                          columns, budget)
    source = local_file_url(source)
    if not mmap and _is_path(source):
        return _projected(UnmappedStreamReader(source, recover=recover,
                                               allow_copies=allow_copies,
                                               require_eos=require_eos), columns, budget)
    return _projected(StreamReader(source, recover=recover, allow_copies=allow_copies,
                                   require_eos=require_eos, timeout=timeout), columns, budget)


def open(source, *, columns=None, mmap: bool = True,  # noqa: A001  (the CONTRACT's arrowmm.open)
         timeout: Optional[float] = None, max_decompressed_bytes: Optional[int] = None,
         filesystem=None, storage_options: Optional[dict] = None):
    """Open ``source`` as whichever IPC format its first bytes say it is (``mmap=False``,
    ``columns`` and ``max_decompressed_bytes``: see ``open_file``; ``timeout``: see
    ``open_stream``, and it bounds the waits for the first bytes too).  An ``io.BytesIO`` is
    read from its position, as ``open_stream`` reads it.  A Feather V1 file
    opens as ``open_file`` opens it (a ``FeatherV1Reader``), from a path, a buffer or a file
    object (read whole when it cannot be mapped).  A URL, or a path with ``filesystem=``:
    read from there (``storage_options``: see ``open_file``)."""
    budget = check_budget(max_decompressed_bytes)
    remote = resolve(source, filesystem, storage_options)
    if remote is not None:
        f = open_for_ranges(*remote)
        try:
            head = f.read(len(MAGIC))
            f.seek(0)
        except BaseException:
            f.close()
            raise
        if head == MAGIC or head[:4] == FEATHER_MAGIC:
            return _remote_file(*remote, dict(columns=columns, max_decompressed_bytes=budget), f)
        f.close()
        try:
            return _projected(_remote_stream(*remote, {}), columns, budget)
        except ArrowInvalid as exc:
            why = not_arrow(display_url(*remote), head, None if head else 0, "file or stream")
            if why is None:
                raise
            raise ArrowInvalid(why) from exc.__cause__ or exc
    source = local_file_url(source)
    return _projected(_open(source, mmap, check_timeout(timeout)), columns, budget)


def _remote_stream(filesystem, path: str, options: dict) -> StreamReader:
    """An IPC stream on an fsspec filesystem, read in order (with its readahead)."""
    f = open_for_stream(filesystem, path)
    try:
        reader = StreamReader(f, description=display_url(filesystem, path), **options)
    except BaseException:
        f.close()
        raise
    reader._owned = f  # (closed with the reader)
    return reader


def _remote_file(filesystem, path: str, options: dict, f=None) -> FileReader:
    """An IPC file (or a Feather V1 file) on an fsspec filesystem, read by byte ranges
    (``f``: the file already opened by ``open_for_ranges``, else opened here)."""
    f = open_for_ranges(filesystem, path) if f is None else f
    try:
        src = RangeSource(f, description=display_url(filesystem, path), owns=True)
        src.keep(0, min(src.size, 8))  # (the magic, read once for both checks)
        if src.size >= 4 and src.pread(0, 4, "magic").tobytes() == FEATHER_MAGIC:
            region = Region(src.pread(0, src.size, "file"), description=src.description)
            src.close()  # (Feather V1 is read at random: read whole)
            return _projected(FeatherV1Reader(region, region.description), options["columns"],
                              options["max_decompressed_bytes"])
        return RangedFileReader(src, **options)
    except BaseException:
        f.close()
        raise


def _open(source, mmap: bool, timeout: Optional[float]):
    if not mmap and _is_path(source):
        feather = _unmapped_feather(source)
        return feather if feather is not None else open_unmapped(source)
    if is_pipe_path(source):  # read, not mapped; a stream reader closes it when closed
        f = io.open(source, "rb")
        try:
            reader = _open(f, mmap, timeout)
        except BaseException:
            f.close()
            raise
        if isinstance(reader, StreamReader):
            reader._owned = f
        else:
            f.close()
        return reader
    if is_file_object(source):
        polled = PolledInput.of(source, timeout)  # (None: its reads never wait, or no timeout
        head = read_head(polled or source, 6)     # and no descriptor to poll)
        if head[:6] == MAGIC:  # (more than 6 bytes: a read() that returned more than asked)
            if polled is not None:  # (a pipe or a socket: read whole, for random access)
                return FileReader(Region(head + polled.read(), description=polled.name))
            return _map_or_ranged(source, head)
        if head[:4] == FEATHER_MAGIC:  # (Feather V1: read at random, so mapped or read whole)
            region = _whole_region(polled or source, head, mappable=polled is None)
            return FeatherV1Reader(region, region.description)
        name, size = source_name(source), None if head else 0
        if polled is not None:
            polled.unread(head)
            source = polled
        else:
            source, timeout = _Prepend(head, source), None  # (not a source that waits)
    else:
        start = source.tell() if isinstance(source, io.BytesIO) else 0
        source = region_of(source)
        if start:  # (a BytesIO is read from its position, as open_stream reads it)
            start = min(start, source.size)
            source = Region(memoryview(source.owner)[start:],
                            description=f"BytesIO (from byte {start})")
        if source.size >= 6 and source.view(0, 6).to_bytes() == MAGIC:
            return FileReader(source)
        if is_feather_v1(source):
            return FeatherV1Reader(source, source.description)
        name, head, size = source.description, first_bytes(source), source.size
    try:
        return StreamReader(source, timeout=timeout)
    except ArrowInvalid as exc:
        why = not_arrow(name, head, size, "file or stream")
        if why is None:
            raise
        raise ArrowInvalid(why) from exc.__cause__ or exc


def ranged_access(source) -> bool:
    """Whether a binary file object is read by byte ranges: it seeks, and it is not a
    regular file that can be mapped (no ``fileno()``, or one of a socket, a pipe...)."""
    if isinstance(source, io.TextIOBase) or decompressing(source):
        return False  # (text: refused by the region path, which says why)
    try:
        st = os.fstat(source.fileno())
        if stat.S_ISREG(st.st_mode) and st.st_size > 0:
            return False
    except (AttributeError, OSError, ValueError):
        pass
    seekable = getattr(source, "seekable", None)
    try:
        return bool(callable(seekable) and seekable() and hasattr(source, "seek"))
    except (OSError, ValueError):
        return False


def _map_or_ranged(source, head: bytes) -> FileReader:
    """An IPC file behind a file object whose first bytes ``head`` were just read: mapped when
    it is a real file, read by byte ranges when it can seek, else read into memory."""
    try:
        start = source.tell() - len(head)
    except (AttributeError, OSError, ValueError):
        start = None
    if start == 0 and not decompressing(source):
        if ranged_access(source):
            return RangedFileReader(RangeSource(source))
        region = None
        try:
            fd = source.fileno()
            if os.fstat(fd).st_size > 0:
                region = Region(_mmap.mmap(fd, 0, access=_mmap.ACCESS_READ),
                                description=source_name(source))
        except (AttributeError, OSError, ValueError):
            pass
        if region is not None:  # (opened outside the try: its ArrowInvalid is a ValueError)
            return FileReader(region)
    return FileReader(Region(head + source.read(), description=source_name(source)))


def _unmapped_feather(path) -> Optional[FeatherV1Reader]:
    """The Feather V1 file at ``path`` read into memory (``mmap=False``), or None when the
    path is not a regular file starting with the Feather V1 magic (a FIFO is not peeked at:
    that would take its bytes)."""
    if not os.path.isfile(path):
        return None
    with io.open(path, "rb") as f:
        if f.read(4) != FEATHER_MAGIC:
            return None
        f.seek(0)
        name = os.fspath(path)
        return FeatherV1Reader(Region(f.read(), description=name), name)


def _whole_region(source, head: bytes, mappable: bool) -> Region:
    """All the bytes of a file object whose first bytes ``head`` were just read: mapped when
    it is a real file read from its start (``mappable``), else read into memory."""
    name = source_name(source)
    if mappable and not decompressing(source):
        try:
            if source.tell() == len(head):
                fd = source.fileno()
                if os.fstat(fd).st_size > 0:
                    return Region(_mmap.mmap(fd, 0, access=_mmap.ACCESS_READ), description=name)
        except (AttributeError, OSError, ValueError):
            pass
    return Region(head + source.read(), description=name)


class _Prepend:
    """A file-like object that yields ``head`` before reading on from ``rest``."""

    def __init__(self, head: bytes, rest):
        self._head = head
        self._rest = rest
        self.name = getattr(rest, "name", type(rest).__name__)

    def read(self, n=-1):
        if self._head:
            if n is None or n < 0:
                out, self._head = self._head + self._rest.read(), b""
                return out
            out, self._head = self._head[:n], self._head[n:]
            return out
        return self._rest.read(n)
