"""IPC file and stream readers over memory-mapped files, buffers and file-like objects.

``FileReader`` opens by reading the trailing magic, the footer and the schema
only; ``get_batch(i)`` parses one message header, and columns decode on first
access.  ``StreamReader`` reads messages in order from a region (zero-copy)
or from a file-like object through ``MessageDecoder``.
"""
from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import lzma
import mmap
import os
import stat
import struct
import sys
import threading
from typing import Iterator, Optional

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None

import numpy as np

from .. import limits
from .. import types as t
from .._core import _arena
from .._core._region import BufferView, Region, as_view
from ..arrays.array import reduce_registered
from ..arrays.batch import RecordBatch, SequentialBatches
from ..arrays.pandas_compat import PandasConvertible
from ..arrays.table import Table, slice_batches
from ..errors import ArrowError, ArrowInvalid, ArrowNotImplementedError
from ..format import BLOCK, MessageHeader, MetadataVersion, RecordBatchHeader, parse_footer
from ..interop._cdata import export_schema, export_stream
from .dictionaries import DictionaryMemo
from .io import MAGIC
from ._batch_walk import export_file_batches, export_stream_batches
from ..arrays.decode_ahead import ReadAhead, decoded_in_order
from .loader import BatchLoader, LoadStats, SchemaPlan
from .memory import advise, resident_bytes
from .message import Message, MessageDecoder, message_end, read_message_at
from .projection import ProjectedLoader, project_schema, resolve_columns
from .sniff import HEAD_SIZE, describe, not_arrow
from .trailer import resume_after_eos, valid_end

__all__ = ["FileReader", "StreamReader", "region_of", "is_file_object", "file_object_region", "file_region",
           "decompressing"]

_I32 = struct.Struct("<i")
_READ_CHUNK = 1 << 22  # largest single read from a file-like object (bounds allocation)
#: Bodies up to this size are read from a file object straight into one buffer of their
#: declared size (address space only until the bytes arrive); bigger ones in chunks.
_DIRECT_BODY_MAX = 1 << 34
#: Body buffers of at least this size are kept for reuse, at most this many per reader.
_SMALL_BODY = 1 << 16
_SPARE_BODIES = 2


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


_EMPTY_BLOCKS = np.empty(0, dtype=BLOCK)


def _flat_blocks(blocks):
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


def _footer_start(region: Region) -> Optional[int]:
    """Where the footer of a complete IPC file in ``region`` starts (its length and trailing
    magic are at the end), or None when the region does not end like a file (cut short)."""
    size = region.size
    if size < 2 * len(MAGIC) + 4 or region.view(size - 6, 6).to_bytes() != MAGIC:
        return None
    footer_len = _I32.unpack_from(region.view(size - 10, 4), 0)[0]
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


def _widen_pipe(source) -> None:
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
                ahead = self._ahead = ReadAhead()
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

    def head(self, n: int) -> Table:
        """The first ``n`` rows (of a stream: the next ``n``) as a Table; batches past them
        are not read."""
        n = int(n)
        if n < 0:
            raise ArrowInvalid(f"head(n): n must be >= 0, got {n}")
        out, have = [], 0
        if n:
            for b in self:
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
            if type(self) is FileReader:
                return export_file_batches(
                    self.schema, self._plan(MetadataVersion.V5).c_walk, self._blocks,
                    self._footer_offset, self._mapping, self._dictionaries, self.get_batch,
                    requested_schema)
            if type(self) is StreamReader:
                return export_stream_batches(self.schema, self._plan(MetadataVersion.V5).c_walk,
                                             self._next_for_export, requested_schema)
        return export_stream(self.schema, iter(self), requested_schema)

    def _mapping(self) -> Optional[Region]:
        """The mapped file, or None once closed (what the C stream export may still walk)."""
        return None if self._closed else self._region


class MessageBatchDecoder(ReaderBase):
    """Dictionary and record batch messages decoded one at a time under ``schema``, outside
    any stream (``arrowmm.read_record_batch``): dictionaries replace or extend (deltas) the
    ones given before, as in a stream."""

    def __init__(self, schema: t.Schema, allow_copies: bool = True):
        super().__init__(allow_copies)
        self.schema = schema
        self._dict_plans = {}
        self._memo = DictionaryMemo(schema, file_mode=False)

    def set_dictionary(self, dict_id: int, values) -> None:
        """Dictionary ``dict_id`` given as its values array."""
        field = self._memo.field(dict_id, f"dictionary {dict_id}")  # (an unused id raises)
        if values.type != field.storage_type:
            raise ArrowInvalid(f"dictionary {dict_id}: the schema's dictionary values are "
                               f"{field.type}, the array given is {values.type}")
        self._memo.apply(dict_id, values, False, f"dictionary {dict_id}")

    def dictionary(self, msg: Message, where: str) -> None:
        self._dictionary_batch(msg, self._memo, where)

    def record_batch(self, msg: Message, where: str) -> RecordBatch:
        return self._record_batch(msg, self._memo.snapshot(), where)


class FileReader(ReaderBase):
    """Random access to the record batches of an IPC file.

    Examples
    --------
    >>> import arrowmm, tempfile, os
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "t.arrow")
    >>> with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())])) as w:
    ...     w.write({"x": [1, 2, 3]})
    >>> with arrowmm.open_file(path) as r:
    ...     r.get_batch(0).column("x").to_pylist()
    [1, 2, 3]
    >>> tmp.cleanup()

    ``allow_copies=False`` refuses to make copies (decompressing, byte-swapping,
    re-aligning, concatenating dictionary deltas): loading a column that would
    need one raises ``ArrowInvalid`` naming the column and the reason.
    """

    def __init__(self, source, *, allow_copies: bool = True):
        super().__init__(allow_copies)
        region = self._region = file_region(source)
        if region.size < 2 * len(MAGIC) + 4 or region.view(0, 6).to_bytes() != MAGIC:
            raise not_a_file(region)
        #: Bytes after the last complete trailer, ignored: an append in progress or
        #: interrupted by a crash (``arrowmm.append_file``); 0 for a complete file.
        self.unfinished_bytes = 0
        try:
            self._open_footer(region)
        except ArrowInvalid:
            # (mapped or in-memory bytes only: a pread or ranged source would be read whole)
            end = valid_end(region) if isinstance(region, Region) else None
            if end is None or end >= region.size:
                raise
            self.unfinished_bytes = region.size - end
            region = self._region = Region(region.view(0, end), description=region.description)
            self._open_footer(region)
        self._batch_rows = None
        self._memo: Optional[DictionaryMemo] = None
        self._dict_plans = {}

    def _open_footer(self, region) -> None:
        size = region.size
        name = region.description
        if region.view(size - 6, 6).to_bytes() != MAGIC:
            raise ArrowInvalid(f"{name}: does not end with the Arrow file magic 'ARROW1' "
                               f"(truncated or still being written? "
                               f"open_stream(path, recover=True) reads its complete batches)")
        footer_len = _I32.unpack_from(region.view(size - 10, 4), 0)[0]
        if footer_len <= 0 or footer_len > size - 10 - 8:
            raise ArrowInvalid(f"{name}: footer length {footer_len} does not fit in a {size}-byte file")
        if footer_len > limits.max_metadata_size:
            raise limits.exceeded("max_metadata_size", footer_len, f"{name}: footer length")
        footer_view = region.view(size - 10 - footer_len, footer_len, "footer")
        self._footer_offset = size - 10 - footer_len
        footer = parse_footer(memoryview(footer_view))
        self.footer = footer
        self.schema = footer.schema
        self.features = footer.features
        self._blocks = _flat_blocks(footer.record_batches)
        self._dict_blocks = _flat_blocks(footer.dictionaries)
        self._num_batches = len(self._blocks)

    @property
    def num_record_batches(self) -> int:
        return self._num_batches

    def __len__(self):
        return self._num_batches

    @property
    def metadata(self) -> Optional[dict]:
        """The file's custom metadata: the footer's, as pyarrow's
        ``RecordBatchFileReader.metadata`` (what ``new_file(metadata=...)`` wrote), or, for a
        file whose footer has none, the schema's (the contract's "footer/schema metadata";
        pyarrow gives None there).  The schema's own is always ``schema.metadata``."""
        return self.footer.metadata or self.schema.metadata or None

    @property
    def version(self) -> int:
        return self.footer.version

    def _read_block(self, blocks, i: int, kind: int, what: str) -> Message:
        self._check_open()
        offset, meta_len, body_len = blocks[i].tolist()
        meta_len = (meta_len & 0xFFFFFFFF) - ((meta_len & 0x80000000) << 1)  # int32 + 4 pad bytes
        if offset < 8 or offset >= self._footer_offset or meta_len <= 0 or body_len < 0:
            raise ArrowInvalid(f"{what} {i} (block at byte {offset}): block (offset={offset}, "
                               f"metaDataLength={meta_len}, bodyLength={body_len}) lies outside "
                               f"the file's data section")
        msg = read_message_at(self._region, offset, i, expected_body_length=body_len)
        if msg is None or msg.body.offset != offset + meta_len or \
                message_end(msg) > self._footer_offset or msg.record.header_type != kind:
            where = f"{what} {i} (block at byte {offset})"
            if msg is None:
                raise ArrowInvalid(f"{where}: block points at an end-of-stream marker")
            if msg.body.offset != offset + meta_len:
                raise ArrowInvalid(f"{where}: block metaDataLength {meta_len} disagrees with the "
                                   f"message's own length prefix (body at byte {msg.body.offset})")
            if message_end(msg) > self._footer_offset:
                raise ArrowInvalid(f"{where}: message body runs into the footer")
            raise ArrowInvalid(f"{where}: expected a {MessageHeader.NAMES[kind]} message, "
                               f"found {msg.kind}")
        return msg

    def _dictionaries(self) -> DictionaryMemo:
        memo = self._memo
        if memo is None:
            with self._lock:  # read once: every batch of every thread shares the same arrays
                memo = self._memo
                if memo is None:
                    memo = DictionaryMemo(self.file_schema, file_mode=True)
                    for i in range(len(self._dict_blocks)):
                        msg = self._read_block(self._dict_blocks, i, MessageHeader.DictionaryBatch,
                                               "dictionary batch")
                        self._dictionary_batch(msg, memo, f"dictionary batch {i} (byte {msg.offset})")
                    memo.merge_all()  # (deltas concatenated now: later lookups only read)
                    self._memo = memo
        return memo

    def dictionaries(self) -> dict:
        """``{dictionary id: values}`` of every dictionary the file defines, deltas merged
        (what an appender must extend or keep: a file holds one dictionary per id)."""
        self._check_open()
        memo = self._dictionaries()
        return {dict_id: memo.get(dict_id) for dict_id in memo.defined()}

    def get_batch(self, i: int) -> RecordBatch:
        """Record batch ``i`` (negative counts from the end); columns decode when touched."""
        self._check_open()
        k = batch_index(i, len(self._blocks))
        msg = self._read_block(self._blocks, k, MessageHeader.RecordBatch, "record batch")
        return self._record_batch(msg, self._dictionaries().get, BatchWhere(k, msg.offset), k)

    get_record_batch = get_batch

    def _export_ahead(self) -> bool:
        if not self._num_batches or self._closed:
            return False
        try:
            msg = self._read_block(self._blocks, 0, MessageHeader.RecordBatch, "record batch")
        except ArrowInvalid:
            return False  # (the export reports it, where it belongs)
        return msg.header.compression is not None

    def __getitem__(self, i):
        """``reader[i]`` is ``get_batch(i)``; ``reader[a:b]`` a list of those batches."""
        if isinstance(i, slice):
            return [self.get_batch(k) for k in range(*i.indices(len(self._blocks)))]
        return self.get_batch(i)

    def batch_extents(self) -> list:
        """``(byte offset, byte length)`` of each record batch message, from the footer alone."""
        self._check_open()
        end = self._footer_offset  # the footer's numbers are unchecked here: clamp them to the file
        return [(min(max(o, 0), end), min(max((m & 0xFFFFFFFF) + b, 0), end))
                for o, m, b in self._blocks.tolist()]

    def __iter__(self) -> Iterator[RecordBatch]:
        for i in range(len(self._blocks)):
            yield self.get_batch(i)

    def batch_num_rows(self) -> list:
        """The number of rows of each record batch, from the message headers alone: no
        batch body is touched (read once, then remembered)."""
        counts = self._batch_rows
        if counts is None:
            counts = [self._read_block(self._blocks, i, MessageHeader.RecordBatch,
                                       "record batch").header.length
                      for i in range(len(self._blocks))]
            self._batch_rows = counts
        return list(counts)

    @property
    def num_rows(self) -> int:
        """Rows in the file: the sum of the batch headers' lengths (no body is read)."""
        return sum(self.batch_num_rows())

    def count_rows(self) -> int:
        """Rows in the file (``num_rows``; the name of pyarrow.dataset's method)."""
        return self.num_rows

    def slice(self, offset: int = 0, length: Optional[int] = None) -> Table:
        """Rows ``[offset, offset + length)`` across batches, as a Table: batches wholly
        outside are not read, those inside are sliced zero-copy."""
        offset = int(offset)
        if offset < 0 or (length is not None and int(length) < 0):
            raise ArrowInvalid(f"slice(offset={offset}, length={length}): both must be >= 0")
        counts = self.batch_num_rows()
        end = None if length is None else offset + int(length)
        picked, start = [], 0
        for i, n in enumerate(counts):
            if (end is None or start < end) and start + n > offset:
                picked.append(i)
            start += n
        skip = offset - sum(counts[:picked[0]]) if picked else 0
        batches = [self.get_batch(i) for i in picked]
        return Table(self.schema, slice_batches(batches, skip, length))

    def close(self) -> None:
        """Release the reader and, once no array or exported struct uses it, the mapping: the
        footer's block vectors (numpy views of the mapped footer) and the dictionaries are
        dropped, not copied, so closing costs nothing per batch (``num_record_batches``,
        ``metadata`` and ``schema`` still answer)."""
        if not self._closed:
            empty = _EMPTY_BLOCKS
            self.footer = dataclasses.replace(self.footer, dictionaries=empty, record_batches=empty)
            self._blocks = self._dict_blocks = _flat_blocks(empty)
            self._memo = None
        super().close()

    def __repr__(self):
        return f"<arrowmm.FileReader {self.num_record_batches} batches>\n{self.schema}"

    def __reduce__(self):
        """Pickles by name when the file is a shared segment (``arrowmm.shm``), else TypeError."""
        return reduce_registered(self)


class StreamReader(SequentialBatches, ReaderBase):
    """Sequential reader of an IPC stream: a path, a buffer or a binary file-like object.

    A file in the IPC file format reads as the stream it contains.  With
    ``recover=True`` a damaged or truncated tail ends the stream instead of
    raising (``recovery_error`` then says what stopped it): this salvages the
    complete batches of a file whose writer was killed.  ``allow_copies``: as
    for ``FileReader``.
    """

    def __init__(self, source, *, recover: bool = False, allow_copies: bool = True,
                 require_eos: bool = False):
        super().__init__(allow_copies)
        self._consumer = threading.Lock()  # held by the one read_next_batch running
        # A batch read ahead for a C stream export released before taking it is handed out
        # next (never skipped); a read waits for that read while it is still in flight, as
        # it would wait for the source itself.
        self._held = []
        self._held_pending = False
        self._held_lock = threading.Condition(threading.Lock())
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
        self._index = 0
        self._batch_index = -1  # of the last record batch read
        self._dict_plans = {}
        self._owned = None
        if is_pipe_path(source):  # a FIFO or a device (/dev/stdin): read it, it cannot be mapped
            source = self._owned = io.open(source, "rb")
        self._readinto = None
        self._spares = []  # the last body buffers, reused once nothing references them
        if is_file_object(source):
            self._file = source
            self._readinto = getattr(source, "readinto", None)
            _widen_pipe(source)
            self._decoder = MessageDecoder()
            self._description = source_name(source)
            head = read_head(source, 8)
            size = 0 if not head else None
        else:
            start = source.tell() if isinstance(source, io.BytesIO) else 0  # read on from there
            region = self._region = region_of(source)
            self._description = region.description
            start = self._pos = min(start, region.size)
            size = region.size - start
            head = region.view(start, min(size, HEAD_SIZE)).to_bytes()
        try:
            if head[:6] == MAGIC and len(head) >= 8:
                self._pos += 8  # the stream inside an IPC file (or a file cut short)
                self._in_file = self._region is not None
                if self._region is not None:
                    self._end = _footer_start(self._region)
            elif self._file is not None and head:
                self._pending.extend(self._decoder.feed(head))
            first = self._next_message()
        except ArrowInvalid as exc:
            why = not_arrow(self._description, head, size, "stream")
            if why is None:
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

    def _next_message(self) -> Optional[Message]:
        if not self._recover:
            return self._read_message()
        try:
            return self._read_message()
        except ArrowInvalid as exc:
            self.recovery_error = str(exc)
            return None

    def _export_ahead(self) -> bool:
        if self._closed or self._done:
            return False
        if self._file is not None:
            return True
        if self._region is None:
            return False
        pos, index = self._pos, self._index
        for _ in range(64):  # (past the dictionaries to the next record batch, not further)
            if self._end is not None and pos >= self._end:
                return False
            try:
                msg = read_message_at(self._region, pos, index)
            except ArrowInvalid:
                return False  # (the export reports it, where it belongs)
            if msg is None:
                return False
            if msg.record.header_type == MessageHeader.RecordBatch:
                return msg.header.compression is not None
            pos, index = message_end(msg), index + 1
        return False

    def _read_message(self) -> Optional[Message]:
        if self._file is None:
            if self._region is None:
                return None
            if self._end is not None and self._pos >= self._end:
                return None  # the footer of an IPC file written without an end-of-stream marker
            msg = read_message_at(self._region, self._pos, self._index)
            while msg is None and self._in_file:  # an appended file: its next generation
                resume = resume_after_eos(self._region, self._pos)  # (a loop: a generation may
                if resume is None:                                  # hold no message at all)
                    break
                self._pos = resume
                if self._end is not None and self._pos >= self._end:
                    return None
                msg = read_message_at(self._region, self._pos, self._index)
            if msg is not None:
                self._pos = message_end(msg)
                self._index += 1
            else:
                self._saw_eos = self._pos < self._region.size  # a marker, not the end of the bytes
            return msg
        while not self._pending:
            dec = self._decoder
            if dec.eos:
                self._saw_eos = True
                return None
            size = dec.body_size
            if 0 < size <= _DIRECT_BODY_MAX and self._readinto is not None:
                body = self._read_body(size)
                if body is not None:
                    return dec.feed_body(body)
            need = dec.next_required_size
            try:
                data = self._file.read(min(need, _READ_CHUNK))
            except (OSError, ValueError) as exc:
                raise ArrowInvalid(f"{self._description}: read failed: {exc}") from exc
            if not data:
                dec.finish()
                return None
            self._pending.extend(dec.feed(data))
        return self._pending.pop(0)

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
        then on."""
        buf = self._body_buffer(size)
        view = memoryview(buf)
        n = 0
        try:
            while n < size:
                got = self._readinto(view[n:])
                if not got:
                    break
                n += got
        except (NotImplementedError, io.UnsupportedOperation):
            if n:
                raise
            self._readinto = None
            return None
        except (OSError, ValueError) as exc:
            raise ArrowInvalid(f"{self._description}: read failed: {exc}") from exc
        if n < size:  # (the decoder names what was cut short, as when fed in pieces)
            self._decoder.feed(view[:n])
            self._decoder.finish()
        return as_view(buf, description=f"body of message {self._index}")

    def read_next_batch(self) -> RecordBatch:
        """The next record batch; raises ``StopIteration`` at the end of the stream.

        A stream has one consumer at a time: called while another thread is inside it, this
        raises ``ArrowInvalid`` rather than interleave the two reads (the batches it returns
        may be shared freely)."""
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
        self._enter()  # one consumer at a time, as for read_next_batch
        try:
            held = self._take_held()
            if held is not None:
                return held
            region = self._region
            if walk is not None and self._file is None and region is not None \
                    and not self._closed and not self._done:
                end = walk(region, self._pos, region.size if self._end is None else self._end,
                           self._memo.get)
                if end >= 0:
                    self._pos = end
                    self._index += 1
                    return None
            return self._read_next_batch()
        finally:
            self._consumer.release()

    def _enter(self, wait_for_ahead: bool = True) -> None:
        if wait_for_ahead:  # (not the read-ahead's own step: it would wait for itself)
            with self._held_lock:
                while self._held_pending:
                    self._held_lock.wait()
        if not self._consumer.acquire(blocking=False):
            self._busy()

    def _busy(self):
        raise ArrowInvalid(f"{self._description}: StreamReader is read by one consumer at a "
                           f"time, and another thread is reading the next batch now (share "
                           f"the batches it returns, or take turns with a lock)")

    def _decoded_batches(self):
        """As ``ReaderBase._decoded_batches``; a batch read ahead and not taken when the
        consumer stops comes back here (``_take_held``) rather than being skipped."""
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

    def _ahead_late(self, batch) -> None:
        with self._held_lock:
            if batch is not None:
                self._held.append(batch)
            self._held_pending = False
            self._held_lock.notify_all()

    def _take_held(self) -> Optional[RecordBatch]:
        """The batch a released export read ahead (None if none); raises while that read is
        still in flight (another thread is reading this stream)."""
        with self._held_lock:
            if self._held:
                return self._held.pop(0)
            if self._held_pending:
                self._busy()
        return None

    def _read_next_batch(self) -> RecordBatch:
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
                return self._record_batch(msg, self._memo.snapshot(), where, self._batch_index)
            if header_type == MessageHeader.DictionaryBatch:
                self._dictionary_batch(msg, self._memo, where)
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
        self._check_open()
        region = self._region
        if self._file is not None or region is None:
            raise ArrowNotImplementedError(f"{self._description}: num_rows of a stream read from "
                                           f"a file object needs reading it; count_rows() counts "
                                           f"the remaining rows as it reads them")
        pos, index, total = self._first_pos, 1, 0
        while self._end is None or pos < self._end:
            try:
                msg = read_message_at(region, pos, index)
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
        to the last row asked for, and slices them zero-copy."""
        offset = int(offset)
        if offset < 0 or (length is not None and int(length) < 0):
            raise ArrowInvalid(f"slice(offset={offset}, length={length}): both must be >= 0")
        end = None if length is None else offset + int(length)
        kept, start = [], 0
        skipped = None
        for b in self:
            if end is not None and start >= end:
                break
            if start + b.num_rows > offset:
                if skipped is None:
                    skipped = offset - start
                kept.append(b)
            start += b.num_rows
            if end is not None and start >= end:
                break
        return Table(self.schema, slice_batches(kept, skipped or 0, length))

    def close(self):
        super().close()
        self._file = None
        self._memo = None  # its dictionaries point into the source
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __repr__(self):
        return f"<arrowmm.StreamReader>\n{self.schema}"
