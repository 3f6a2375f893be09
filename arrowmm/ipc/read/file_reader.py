"""IPC file readers over memory-mapped files, buffers and file-like objects.

``FileReader`` opens by reading the trailing magic, the footer and the schema
only; ``get_batch(i)`` parses one message header, and columns decode on first
access.  ``StreamReader`` (``stream_reader.py``) reads messages in order from a
region (zero-copy) or from a file-like object; what both share is in
``reader_base.py``.  The names of all three stay importable from here.
"""
from __future__ import annotations

import struct
import time
from typing import Iterator, List, Optional, Tuple

import numpy as np

from ... import hooks, limits
from ... import types as t
from ..._core._region import Region
from ...arrays.batch import RecordBatch
from ...arrays.table import Table, slice_batches
from ...errors import ArrowInvalid
from ...format import (MessageHeader, MetadataVersion, RecordBatchHeader, parse_footer_cached,
                      parse_message)
from ...format import FooterRecord
from ...format.footer_cache import MAX_FOOTER_BYTES
from ..core.dictionaries import DictionaryMemo, dictionary_value_fields
from .loader import BatchLoader
from ..core.files import MAGIC
from .stream_reader import StreamReader
from .reader_base import (ReaderBase, BatchWhere, batch_index, region_of, is_file_object,
                          file_object_region, file_region, decompressing, source_name,
                          is_pipe_path, first_bytes, not_a_file, flat_blocks, EMPTY_BLOCKS,
                          overlapping_blocks,
                          PIPE_BUFFER, I32)
from ..core.framing import Message, message_end, read_message_at
from .file_mapping import FileChanged, TailRead
from .source import FileSource, MappedSource
from .trailer import Damage, append_in_progress, marker_wait, schema_message, trailer_problem
from .salvage import salvage_messages
from ._batch_walk import blocks_apart, export_file_batches, file_batch_parts
from .batch_parts import pandas_batches
from ..core.byteorder import NATIVE

_NO_VARIADIC = np.zeros(0, dtype=np.int64)  # (read-only: shared by every plain batch header)
_NO_VARIADIC.flags.writeable = False
_NO_BLOCKS = flat_blocks(EMPTY_BLOCKS)  # (what a closed reader's block lists are)


def _blocks_apart(batches: np.ndarray, dictionaries: np.ndarray) -> bool:
    """``_batch_walk.blocks_apart`` (one pass in C), False where the rows are not a plain
    int64 array it takes (then ``overlapping_blocks`` looks)."""
    try:
        return blocks_apart(batches, dictionaries)
    except (ValueError, TypeError):
        return False


def plain_batch(schema, plan, num_rows: int, nodes, buffers, body, lookup, where, stats,
                allow_copies: bool) -> RecordBatch:
    """A lazy batch of a plain V5 record batch message whose numbers were read in C
    (uncompressed, no custom metadata, no variadic counts): a channel's slot or a file's
    message read by ``_batch_walk.file_batch_parts``."""
    header = RecordBatchHeader(num_rows, nodes, buffers, None, _NO_VARIADIC)
    return RecordBatch(schema, num_rows, loader=BatchLoader(plan, header, body, lookup, where,
                                                            stats, allow_copies))

_SNIFF_BYTES = 1 << 16  # of a file that is not one, read to say what it is
_REOPEN_TRIES = 100  # opens tried while other processes cut unfinished appends under this one
_DAMAGE_HINT = ("arrowmm.repair(path, out) or 'arrowmm repair PATH OUT' rebuilds a file of its "
                "complete batches; open_file(path, recover=True) reads them in place "
                "(docs/recovery.md)")


class _BlockWhere:
    """'record batch i (block at byte n)', formatted only when an error message needs it."""

    __slots__ = ("what", "index", "offset")

    def __init__(self, what: str, index: int, offset: int):
        self.what = what
        self.index = index
        self.offset = offset

    def __str__(self):
        return f"{self.what} {self.index} (block at byte {self.offset})"

    def __format__(self, spec):
        return format(str(self), spec)


__all__ = ["FileReader", "StreamReader", "MessageBatchDecoder", "region_of", "is_file_object",
           "file_object_region", "file_region", "decompressing", "BatchWhere", "batch_index",
           "ReaderBase", "not_a_file", "first_bytes", "source_name", "is_pipe_path", "PIPE_BUFFER"]


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

    def plain_shape(self) -> Optional[Tuple[int, int]]:
        """``(field nodes, buffers)`` that every V5 record batch of the schema has, when that
        is fixed (no dictionary-encoded and no binary/string view fields, whose batches
        carry dictionaries or a variable count of buffers); None otherwise.  What a writer
        or reader of a fixed header layout (``format.batch_header``) needs."""
        if dictionary_value_fields(self.schema) or self._plan(MetadataVersion.V5).total_views:
            return None
        plan = self._plan(MetadataVersion.V5)
        return plan.total_nodes, plan.total_buffers

    def plain_record_batch(self, num_rows: int, nodes, buffers, body, where: str
                           ) -> RecordBatch:
        """A lazy batch of a plain V5 record batch message whose numbers were already read
        (``plain_shape``'s schemas only: uncompressed, no custom metadata): ``nodes`` and
        ``buffers`` are ``StructPairs`` over the message's vectors, ``body`` its body.  The
        columns are checked against the body when they are loaded, as any message's.

        Why: ``record_batch`` parses the whole FlatBuffers header again for every message;
        a channel with a fixed schema reads only the numbers (``_shmsync.plain_header``)."""
        lookup = self._plain_lookup
        if lookup is None:
            lookup = self._plain_lookup = self._memo.snapshot()
        return plain_batch(self.schema, self._plan(MetadataVersion.V5), num_rows, nodes, buffers,
                           body, lookup, where, self.stats, self.allow_copies)

    _plain_lookup = None


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

    def __init__(self, source, *, columns=None, allow_copies: bool = True,
                 recover: bool = False, max_decompressed_bytes: Optional[int] = None):
        super().__init__(allow_copies)
        self.max_decompressed_bytes = max_decompressed_bytes
        if not isinstance(source, FileSource):
            source = MappedSource(file_region(source))
        #: Bytes after the committed end, ignored: an append in progress or interrupted by a
        #: crash (``arrowmm.append_file``); 0 for a complete file.
        self.unfinished_bytes = 0
        #: With ``recover=True``: why the file needed salvage (None when it did not).
        self.recovery_error: Optional[str] = None
        for attempt in range(_REOPEN_TRIES):
            try:
                self._open(source, recover)
                break
            except FileChanged as exc:  # (an unfinished append was cut while this opened)
                source = source.reopen()
                if source is None or attempt == _REOPEN_TRIES - 1:
                    raise ArrowInvalid(f"{exc} ({_REOPEN_TRIES} times: other processes keep "
                                       f"appending to it or cutting it)") from None
                time.sleep(min(0.01, 0.0002 * attempt))  # (let a busy appender get ahead)
        self._batch_rows = None
        self._memo: Optional[DictionaryMemo] = None
        self._dict_plans = {}
        if self._source.lazy_bodies:  # (read by ranges: every batch through a ProjectedLoader)
            self._file_schema = self.schema
            self._projection = list(range(len(self.schema)))
        if columns is not None:
            self.select_columns(columns)

    def _open(self, source: FileSource, recover: bool) -> None:
        """Find the committed end of the file in ``source`` and read its footer there
        (``arrowmm.ipc.read.trailer``: recovery by construction)."""
        self._source, self._region = source, source.region
        if source.size < 2 * len(MAGIC) + 4 or source.first_bytes(6) != MAGIC:
            if source.region is not None:
                raise not_a_file(source.region)
            # (a Region of its first bytes, to say what it is: a stream, Parquet, text...)
            head = source.view(0, min(source.size, _SNIFF_BYTES), "first bytes").to_bytes()
            raise not_a_file(Region(head, description=source.description))
        read = source.tail()
        try:
            # the tail's magic and length through ``read``; its footer parsed once, below
            problem = trailer_problem(read, source.size, parse=False)
            if problem is None:
                try:
                    self._open_footer(source, source.size,
                                      read if source.region is not None else None)
                    return
                except (FileChanged, limits.LimitExceeded):  # (a footer read whole, and
                    raise  # refused for its size: not damage, and no repair would help)
                except ArrowInvalid as exc:
                    problem = str(exc).removeprefix(f"{source.description}: ")
            # the tail is not a trailer a reader can use: damage, or an append in progress
            try:
                end = append_in_progress(read, source.size, schema_message(read))
            except Damage as exc:
                if source.changed(marker_wait(source.size, read)):  # (an append committed,
                    # or a tail was cut, meanwhile; or its marker is being written)
                    raise FileChanged(f"{source.description}: the file changed while opening "
                                      f"it") from None
                if recover:
                    self._open_salvaged(source, f"{problem}; {exc}")
                    return
                raise ArrowInvalid(
                    f"{source.description}: {problem}; {exc}. {_DAMAGE_HINT}") from None
        finally:
            read.close()
        self.unfinished_bytes = source.size - end
        source = source.prefix(end)
        self._source, self._region = source, source.region
        self._open_footer(source, end)

    def _open_salvaged(self, source: FileSource, why: str) -> None:
        """``recover=True`` on a damaged file: the complete messages from the front, under a
        footer made for them (``repair``'s walk, without writing anything)."""
        if source.region is None:
            raise ArrowInvalid(f"{source.description}: {why}; recover=True salvages a mapped "
                               f"file or a buffer: open a local path with mmap=True, or the "
                               f"bytes of a remote object read into memory (or repair it)")
        found = salvage_messages(source.region, validate=False, unfinished=True)
        self.recovery_error = why
        self.footer = found.footer()
        self.schema = self.footer.schema
        self.features = self.footer.features
        self._footer_offset = found.kept_end
        self._batch_blocks = flat_blocks(self.footer.record_batches)
        self._dictionary_blocks = flat_blocks(self.footer.dictionaries)
        self._num_batches = len(self._batch_blocks)

    def _open_footer(self, source: FileSource, size: int, read: Optional[TailRead] = None
                     ) -> None:
        """The footer of the file that ends at ``size``: its trailer and (when the footer
        cache keeps footers of its size, so parses a copy anyway) the footer itself read
        through ``read``, the open's tail reads (which ``map_file(ends=True)`` made without
        touching the mapping), when given; else viewed in ``source`` (a big footer is
        parsed in place)."""
        name = source.description
        if read is None:
            def read(offset, length):
                return source.view(offset, length).to_bytes()
            in_place = True
        else:
            in_place = False
        if read(size - 6, 6) != MAGIC:
            raise ArrowInvalid(f"{name}: does not end with the Arrow file magic 'ARROW1' "
                               f"(truncated or still being written? {_DAMAGE_HINT})")
        footer_len = I32.unpack_from(read(size - 10, 4), 0)[0]
        if footer_len <= 0 or footer_len > size - 10 - 8:
            raise ArrowInvalid(f"{name}: footer length {footer_len} does not fit in a {size}-byte file")
        if footer_len > limits.max_metadata_size:
            raise limits.exceeded("max_metadata_size", footer_len, f"{name}: footer length")
        self._footer_offset = size - 10 - footer_len
        if in_place or footer_len > MAX_FOOTER_BYTES:
            footer_view = source.view(size - 10 - footer_len, footer_len, "footer")
        else:
            footer_view = read(size - 10 - footer_len, footer_len)
        footer = parse_footer_cached(footer_view)
        self.footer = footer
        self.schema = footer.schema
        self.features = footer.features
        blocks = self._batch_blocks = flat_blocks(footer.record_batches)
        dict_blocks = self._dictionary_blocks = flat_blocks(footer.dictionaries)
        self._num_batches = len(blocks)
        if len(blocks) + len(dict_blocks) > 1 and not _blocks_apart(blocks, dict_blocks):
            overlap = overlapping_blocks(blocks, dict_blocks)
            if overlap is not None:
                raise ArrowInvalid(f"{name}: {overlap}")

    @property
    def _blocks(self) -> np.ndarray:
        """The footer's record batch Blocks (``flat_blocks`` rows), which every read takes here:
        the one gate of a closed reader (``ArrowInvalid``, never a file read as empty).  Taken
        before the check: ``close()`` sets ``_closed`` before it drops them, so a read that
        passes holds the footer's own, whatever another thread closes meanwhile."""
        blocks = self._batch_blocks
        self._check_open()
        return blocks

    @property
    def _dict_blocks(self) -> np.ndarray:
        """The footer's dictionary Blocks, through the same gate as ``_blocks``."""
        blocks = self._dictionary_blocks
        self._check_open()
        return blocks

    @property
    def num_record_batches(self) -> int:
        """How many record batches the footer lists (``get_batch`` takes 0 to this - 1)."""
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
        """The footer's metadata version, as the format's ``MetadataVersion`` numbers it
        (4 is V5, what writers write today)."""
        return self.footer.version

    def _read_block(self, blocks, i: int, kind: int, what: str) -> Message:
        self._check_open()
        offset, meta_len, body_len = blocks[i].tolist()
        meta_len = (meta_len & 0xFFFFFFFF) - ((meta_len & 0x80000000) << 1)  # int32 + 4 pad bytes
        end = self._footer_offset
        if offset < 8 or offset >= end or meta_len <= 0 or body_len < 0 or (
                self._region is None and offset + meta_len + body_len > end):
            raise ArrowInvalid(f"{what} {i} (block at byte {offset}): block (offset={offset}, "
                               f"metaDataLength={meta_len}, bodyLength={body_len}) lies outside "
                               f"the file's data section")
        return self._source.message(offset, meta_len, body_len, i, kind,
                                    _BlockWhere(what, i, offset), end)

    def _dictionaries(self) -> DictionaryMemo:
        memo = self._memo
        if memo is None:
            with self._lock:  # read once: every batch of every thread shares the same arrays
                memo = self._memo
                if memo is None:
                    blocks = self._dict_blocks
                    memo = DictionaryMemo(self.file_schema, file_mode=True)
                    for i in range(len(blocks)):
                        msg = self._read_block(blocks, i, MessageHeader.DictionaryBatch,
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

    def get_batch(self, i: int, *, read_ahead: bool = True) -> RecordBatch:
        """Record batch ``i`` (negative counts from the end); columns decode when touched.

        ``read_ahead=False``: a compressed batch's columns are decoded only when asked for,
        never guessed ahead by the reader's read-ahead (``arrays.decode_ahead``): for a
        caller that knows which columns it takes and schedules their decoding itself (a
        dataset scan decodes a filter's columns first, the others only for survivors)."""
        self._check_open()
        k = batch_index(i, len(self._blocks))
        ahead = self._ahead
        if ahead is not None and read_ahead:  # (the batch a walk in order had read ahead)
            batch = ahead.take(k)
            if batch is not None:
                return batch
        return self._batch_at(k, read_ahead)

    def _batch_at(self, k: int, read_ahead: bool = True) -> RecordBatch:
        """Record batch ``k`` (an index in range) made anew: for ``get_batch``, and for the
        read-ahead of the next batch of a walk in batch order (``decode_ahead.ReadAhead``)."""
        self._check_open()
        msg = self._read_block(self._blocks, k, MessageHeader.RecordBatch, "record batch")
        return self._record_batch(msg, self._dictionaries().get, BatchWhere(k, msg.offset),
                                  k if read_ahead else None)

    get_record_batch = get_batch

    def _walked_export(self, requested_schema):
        if self._region is None:  # (the C walk reads mapped bodies only)
            return None
        return export_file_batches(self.schema, self._plan(MetadataVersion.V5).c_walk,
                                   self._blocks, self._footer_offset, self._mapping,
                                   self._dictionaries, self.get_batch, requested_schema)

    def _pandas_batches(self):
        region = self._region  # (once: close() from another thread drops it)
        if region is not None and self._projection is None:  # (see ipc.read.batch_parts)
            parts = pandas_batches(self, self._plan(MetadataVersion.V5), region,
                                   self._blocks, self._footer_offset)
            if parts is not None:
                return parts
        return super()._pandas_batches()

    def _export_ahead(self) -> bool:
        if not self._num_batches or self._closed:
            return False
        try:
            msg = self._read_block(self._blocks, 0, MessageHeader.RecordBatch, "record batch")
        except ArrowInvalid:
            return False  # (the export reports it, where it belongs)
        return msg.header.compression is not None

    def _decoded_batches(self):
        """Every batch, each decoded whole before it is handed on, the next one read ahead
        and decoded beside it on the read-ahead lanes (``ReadAhead.whole``): two batches
        decode at once, so no core waits while the last buffer of one decodes.  On this
        consumer's thread: a mapped file's reads never block, so it needs no reading thread
        of its own (``decoded_in_order``'s, which decodes one batch at a time)."""
        for i in range(self._num_batches):
            batch = self.get_batch(i)
            ahead = self._ahead
            if ahead is not None and batch.compression is not None:
                ahead.whole(i, batch)
            elif batch.compression is not None:
                batch.decode_columns()
            yield batch

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

    def read_all(self) -> Table:
        """Every record batch, in order, as an ``arrowmm.Table`` (lazy batches: columns decode
        when touched)."""
        batches = self._plain_batches()
        return Table(self.schema, batches if batches is not None else list(self))

    def _plain_batches(self) -> Optional[list]:
        """Every record batch, made from what ``_batch_walk.file_batch_parts`` reads of their
        messages in one C pass, or None where that does not apply (a subclass, a projection,
        a message that is not plain: read one at a time, which reports a bad one where it
        belongs).  The batches are ``get_batch``'s, without a message parsed in Python per
        batch: ``read_all()`` of 5,000 small batches spent two thirds of its time there,
        and ``read_all().to_pandas()`` took 2.5x pyarrow's time."""
        if self._region is None or self._projection is not None:
            return None
        self._check_open()
        plan = self._plan(MetadataVersion.V5)
        region, blocks = self._region, self._blocks  # (once: close() drops them)
        if region is None or self.schema.endianness != NATIVE or plan.total_views:
            return None
        parts = file_batch_parts(region, blocks, self._footer_offset, plan.total_nodes,
                                 plan.total_buffers)
        if parts is None:
            return None
        lookup = self._dictionaries().get
        offsets = blocks[:, 0].tolist() if len(parts) else []
        schema, stats, allow = self.schema, self.stats, self.allow_copies
        return [plain_batch(schema, plan, length, nodes, buffers, body, lookup,
                            BatchWhere(k, offsets[k]), stats, allow)
                for k, (nodes, buffers, body, length) in enumerate(parts)]

    def file_identity(self) -> Optional[tuple]:
        """What tells the file this reader reads from another one put under its name since:
        ``(device, inode, size, mtime_ns, ctime_ns)`` of a local file (mapped, or read with
        ``mmap=False``), ``(size, key, version)`` of an object (its ETag, ...), or None (a
        buffer, a file object): a plan made from this reader's footer can check, when it reads
        the path again, that the path still names this file."""
        return self._source.identity() if self._source is not None else None

    def batch_metadata(self, i: int) -> Optional[dict]:
        """The custom metadata of record batch ``i``'s message (its header alone is read)."""
        blocks = self._blocks
        if not -len(blocks) <= i < len(blocks):
            raise IndexError(f"record batch index {i} out of range ({len(blocks)} batches)")
        return self._read_block(blocks, i % len(blocks), MessageHeader.RecordBatch,
                                "record batch").record.metadata

    def batch_num_rows(self) -> list:
        """The number of rows of each record batch, from the message headers alone: no
        batch body is touched (read once, then remembered)."""
        blocks = self._blocks  # (a closed reader raises, its counts remembered or not)
        counts = self._batch_rows
        if counts is None:
            counts = [self._read_block(blocks, i, MessageHeader.RecordBatch,
                                       "record batch").header.length
                      for i in range(len(blocks))]
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

    def tail(self, n: int) -> Table:
        """The last ``n`` rows as a Table (``Table.tail``'s rows): the batches are read from
        the last one back until they hold ``n`` rows, those before are not read."""
        n = int(n)
        if n < 0:
            raise ArrowInvalid(f"tail(n): n must be >= 0, got {n}")
        out: List[RecordBatch] = []
        have = 0
        for i in range(len(self._blocks) - 1, -1, -1):
            if have >= n:
                break
            b = self.get_batch(i)
            out.append(b if have + b.num_rows <= n else b.slice(b.num_rows - (n - have)))
            have += out[-1].num_rows
        return Table(self.schema, out[::-1])

    def close(self) -> None:
        """Release the reader and, once no array or exported struct uses it, the mapping: the
        footer's block vectors (numpy views of the mapped footer) and the dictionaries are
        dropped, not copied, so closing costs nothing per batch (``num_record_batches``,
        ``metadata`` and ``schema`` still answer).  Every read after it raises
        ``ArrowInvalid``; one in flight in another thread finishes on what it had taken, or
        raises that (docs/thread-safety.md)."""
        if not self._closed:
            self._closed = True  # (first: see _blocks)
            footer = self.footer
            self.footer = FooterRecord(footer.version, footer.schema, EMPTY_BLOCKS,
                                       EMPTY_BLOCKS, footer.metadata, footer.features)
            self._batch_blocks = self._dictionary_blocks = _NO_BLOCKS
            self._memo = None
            self._source.close()
        super().close()

    def _source_bytes(self) -> Optional[int]:
        return self._source.size  # (the default decompression budget's multiple, any source)

    @property
    def projection(self) -> Optional[list]:
        """The columns the reader was projected onto (indices, or dotted paths for struct
        fields), as ``select_columns`` takes them again; None when it reads every column."""
        if self._source.lazy_bodies and self._projection == list(range(len(self._file_schema))):
            return None  # (every column, through the projected loader: see __init__)
        return super().projection

    def memory(self) -> dict:
        if self._region is None and self._source.maps_nothing:
            raise ArrowInvalid(f"memory(): {self._source.maps_nothing}")
        return super().memory()

    def advise(self, advice: str, offset: int = 0, length=None) -> None:
        if self._region is None and self._source.maps_nothing:
            raise ArrowInvalid(f"advise(): {self._source.maps_nothing}")
        super().advise(advice, offset, length)

    def __repr__(self):
        if not hasattr(self, "_num_batches"):  # (its open raised: a traceback shows it)
            return f"<arrowmm.{type(self).__name__}, not opened>"
        return f"<arrowmm.{type(self).__name__} {self.num_record_batches} batches>\n{self.schema}"

    def __reduce__(self):
        """Pickles by name when the file is a shared segment (``arrowmm.shm``), else TypeError."""
        if self._source.pickle_refusal:
            raise TypeError(self._source.pickle_refusal)
        return hooks.reduce_file_reader(self)
