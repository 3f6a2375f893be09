"""What the IPC readers share: sources (paths, mappings, buffers, file objects, pipes) turned
into regions or file objects, and ``ReaderBase`` (projection, dictionaries, batches, memory
advice, the Arrow PyCapsule export).

``reader.py`` holds the random-access ``FileReader`` (and ``MessageBatchDecoder``),
``stream_reader.py`` the sequential ``StreamReader``; both build on this module.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import mmap
import os
import stat
import struct
import threading
from typing import Iterator, Optional

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None

import numpy as np

from .. import types as t
from .._core._region import Region
from ..arrays.batch import RecordBatch
from ..arrays.pandas_compat import PandasConvertible
from ..arrays.table import Table
from ..errors import ArrowError, ArrowInvalid, ArrowNotImplementedError
from ..format import BLOCK, MessageHeader, MetadataVersion, RecordBatchHeader
from ..interop._cdata import export_schema, export_stream
from .dictionaries import DictionaryMemo
from .io import MAGIC
from ..arrays.decode_ahead import ReadAhead, decoded_in_order
from .loader import BatchLoader, LoadStats, SchemaPlan
from .memory import advise, resident_bytes
from .message import Message, read_message_at
from .projection import ProjectedLoader, project_schema, resolve_columns
from .sniff import HEAD_SIZE, describe

__all__ = ["ReaderBase", "BatchWhere", "batch_index", "region_of", "is_file_object", "file_object_region", "file_region", "decompressing", "source_name", "is_pipe_path", "first_bytes", "not_a_file", "read_head", "widen_pipe", "footer_start", "flat_blocks", "EMPTY_BLOCKS", "PIPE_BUFFER", "I32"]

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
_EXPERIMENTAL_CODECS = {"lz4": "lz4", "lz4_frame": "lz4", "zstd": "zstd"}


def _v4_codec(header: RecordBatchHeader, record, where):
    """(header, custom metadata) of a batch message, with the codec of a compressed V4 message
    that names it the Arrow 0.17 way (custom metadata ``ARROW:experimental_compression``) moved
    into the header, and the key dropped from the metadata the batch reports."""
    metadata = record.metadata
    if not metadata or _EXPERIMENTAL_COMPRESSION not in metadata or record.version >= MetadataVersion.V5:
        return header, metadata
    name = str(metadata[_EXPERIMENTAL_COMPRESSION]).lower()
    codec = _EXPERIMENTAL_CODECS.get(name)
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


def region_of(source) -> Region:
    """A path (mapped read-only), a ``Region``, an ``io.BytesIO`` (its value: CPython hands
    out its internal bytes without a copy, and a later write copies on write), or a
    buffer-protocol object (used as is).

    A path that cannot be opened raises the ``OSError`` that says why (``FileNotFoundError``,
    ``IsADirectoryError``, ``PermissionError``), as pyarrow does.
    """
    if isinstance(source, Region) or hasattr(source, "pread"):  # (an unmapped.PreadFile)
        return source
    if isinstance(source, (str, os.PathLike)):
        return Region.from_path(source)
    if isinstance(source, io.BytesIO):
        return Region(source.getvalue(), description="BytesIO")
    return Region(source, description="buffer")


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
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, (str, bytes, os.PathLike)) else type(source).__name__


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


def read_head(source, n: int) -> bytes:
    """Up to ``n`` bytes from a file object (fewer only at its end)."""
    if isinstance(source, io.TextIOBase):
        raise ArrowInvalid(f"{source_name(source)}: the file object is in text mode; "
                           f"open it with mode 'rb'")
    out = b""
    while len(out) < n:
        try:
            data = source.read(n - len(out))
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{source_name(source)}: read failed: {exc}") from exc
        if isinstance(data, str):
            raise ArrowInvalid(f"{source_name(source)}: the file object is in text mode; "
                               f"open it with mode 'rb'")
        if not data:
            break
        out += bytes(data)
    return out


def file_region(source) -> Region:
    """The bytes of an IPC file, for random access: a path mapped (a FIFO or ``/dev/stdin``
    read whole), a file object mapped or read (``file_object_region``), a buffer as it is."""
    if is_pipe_path(source):
        with io.open(source, "rb") as f:
            return Region(f.read(), description=os.fspath(source))
    return file_object_region(source) if is_file_object(source) else region_of(source)


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

    def _check_open(self):
        if self._closed:
            raise ArrowInvalid("the reader is closed")

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
        loader = BatchLoader(plan, data, msg.body, memo.get, where, self.stats, self.allow_copies)
        memo.apply(header.id, loader.column(0), header.is_delta, where)

    def _record_batch(self, msg: Message, lookup, where: str, index: Optional[int] = None
                      ) -> RecordBatch:
        """Record batch message ``msg`` as a lazy batch; ``index``: its place among the
        reader's record batches, for the read-ahead of compressed columns (``decode_ahead``)."""
        header, metadata = _v4_codec(msg.header, msg.record, where)
        loader = BatchLoader(self._plan(msg.record.version), header, msg.body, lookup, where,
                             self.stats, self.allow_copies)
        if self._projection is not None:
            loader = ProjectedLoader(loader, self._projection)
        batch = RecordBatch(self.schema, loader.num_rows, loader=loader, metadata=metadata)
        if index is not None and header.compression is not None and self.allow_copies:
            ahead = self._ahead
            if ahead is None:
                ahead = self._ahead = ReadAhead(getattr(self, "num_record_batches", None))
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
        self._check_open()
        region = self._region
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
        self._check_open()
        if self._region is None:
            raise ArrowInvalid("advise(): this reader reads a file object, not a mapping")
        advise(self._region, advice, offset, length)

    def close(self) -> None:
        """Release the reader.  Arrays and numpy views taken from it stay valid."""
        self._closed = True
        self._region = None
        self._plans = {}  # (their export programs remember the last dictionary exported)

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
        n = int(n)
        if n < 0:
            raise ArrowInvalid(f"head(n): n must be >= 0, got {n}")
        out, have = [], 0
        if n:
            for b in self._in_turn():
                out.append(b if have + b.num_rows <= n else b.slice(0, n - have))
                have += out[-1].num_rows
                if have >= n:
                    break
        return Table(self.schema, out)

    def __arrow_c_schema__(self):
        return export_schema(self.schema)

    def __arrow_c_stream__(self, requested_schema=None):
        """The (remaining) batches, in order, as an ``"arrow_array_stream"`` capsule: the plain
        record batches of a FileReader or StreamReader are walked from the mapping without
        making Python objects (``ipc._batch_walk``), the others exported as read; compressed
        ones (and those of a file object) are decoded a whole batch at a time on the codec
        pool, the next batch read ahead while the consumer takes this one."""
        if self._export_ahead():
            return export_stream(self.schema, self._decoded_batches(), requested_schema)
        if self._projection is None:  # (the mapped walk knows whole schemas only)
            capsule = self._walked_export(requested_schema)
            if capsule is not None:
                return capsule
        return export_stream(self.schema, iter(self), requested_schema)

    def _walked_export(self, requested_schema):
        """The export of a whole-schema reader walked in C (``ipc._batch_walk``), or None
        where this kind of reader has no such walk (exactly ``FileReader`` and
        ``StreamReader`` have: their subclasses read differently, so they return None)."""
        return None

    def _mapping(self) -> Optional[Region]:
        """The mapped file, or None once closed (what the C stream export may still walk)."""
        return None if self._closed else self._region

