"""Random access to the record batches of an IPC *stream* held in a file or buffer.

The stream format has no footer, so ``index_stream`` scans the message
headers once (bodies are skipped, nothing is decoded) and keeps where each
message starts.  ``get_batch(i)`` then reads batch ``i`` directly, with the
dictionaries as they stood at that point of the stream (deltas and
replacements applied in order).  The index (``reader.entries``) is a small
list that can be saved or sent elsewhere (the Spark source ships slices of it
to its tasks) and handed back to skip the scan.
"""
from __future__ import annotations

from typing import Iterator, List, Optional, Sequence, Tuple

from ...arrays.batch import RecordBatch
from ..core.dictionaries import DictionaryMemo
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ..core.framing import Message, message_end, read_message_at
from ...format import MessageHeader
from ..core.files import MAGIC
from .file_mapping import mapped_file_identity
from .file_reader import BatchWhere, ReaderBase, batch_index, region_of
from .reader_base import footer_start
from .source import FileSource

__all__ = ["IndexedStreamReader", "index_stream", "select_entries"]

_RECORD_BATCH = MessageHeader.RecordBatch
_DICTIONARY = MessageHeader.DictionaryBatch


class IndexedStreamReader(ReaderBase):
    """An IPC stream with ``FileReader``'s random access (``get_batch``, ``len``, iteration).

    ``entries``: ``(header type, byte offset)`` of the dictionary and record
    batch messages, in stream order; by default found by scanning the stream
    once.  A subset that keeps the dictionary messages preceding its batches
    (as ``entries_for`` returns) reads those batches alone.

    ``source``: a path (mapped), a buffer, or a ``FileSource`` that maps nothing
    (``unmapped.PreadFile``: each message read into memory of its own when asked for, so a
    file truncated meanwhile raises ``ArrowInvalid``), which the reader closes with itself.
    """

    def __init__(self, source, entries: Optional[Sequence[Tuple[int, int]]] = None):
        super().__init__()
        self._source = source if isinstance(source, FileSource) and source.region is None \
            else None
        region = self._region = region_of(source) if self._source is None else None
        whole = region if region is not None else self._source
        self._description = whole.description
        start = 8 if whole.size >= 8 and whole.view(0, 6).to_bytes() == MAGIC else 0
        # (an IPC file's messages end at its footer: one written without an end-of-stream
        # marker has nothing else to stop the scan there)
        self._footer_at = footer_start(whole) if start else None
        first, end = self._message_at(start, 0, body=False)
        if first is None or first.record.header_type != MessageHeader.Schema:
            found = "end of stream" if first is None else f"a {first.kind} message"
            raise ArrowInvalid(f"{self._description}: stream starts with {found}, expected Schema")
        self.schema = first.header
        self.version = first.record.version
        self._dict_plans = {}
        self.entries: List[Tuple[int, int]] = (self._scan(end) if entries is None
                                               else [(int(k), int(o)) for k, o in entries])
        self._batches = [i for i, (kind, _) in enumerate(self.entries) if kind == _RECORD_BATCH]
        # _dictionaries_before[p]: how many dictionary messages precede entry p, i.e. which
        # dictionary state a batch at p reads.
        self._dictionaries_before = []
        count = 0
        for kind, _ in self.entries:
            self._dictionaries_before.append(count)
            count += kind == _DICTIONARY
        self._dictionary_entries = [i for i, (kind, _) in enumerate(self.entries)
                                    if kind == _DICTIONARY]
        self._memo = DictionaryMemo(self.schema, file_mode=False)
        # _states[k]: the dictionaries after the first k dictionary messages, frozen (a lookup
        # over immutable generations: a shallow copy each).  Built forward only, once, so any
        # order of get_batch reads each dictionary message once (reverse order was quadratic:
        # an earlier batch replayed the stream from its start).
        self._states = [self._memo.snapshot()]

    def _scan(self, pos: int) -> List[Tuple[int, int]]:
        entries = []
        index = 1
        while True:
            if self._footer_at is not None and pos >= self._footer_at:
                return entries
            msg, end = self._message_at(pos, index, body=False)
            if msg is None:
                return entries
            kind = msg.record.header_type
            if kind not in (_RECORD_BATCH, _DICTIONARY):
                where = f"{self._description}: message {index} (byte {pos})"
                if kind == MessageHeader.Schema:
                    raise ArrowInvalid(f"{where}: a second schema message in the stream")
                raise ArrowNotImplementedError(f"{where}: {msg.kind} message inside a record batch stream")
            entries.append((kind, pos))
            pos = end
            index += 1

    @property
    def num_record_batches(self) -> int:
        """How many record batches the index lists."""
        return len(self._batches)

    def __len__(self):
        return len(self._batches)

    def batch_extents(self) -> List[Tuple[int, int]]:
        """``(byte offset, byte length)`` of each record batch message (header and body)."""
        out = []
        for i in self._batches:
            offset = self.entries[i][1]
            out.append((offset, self._located(i, _RECORD_BATCH, body=False)[1] - offset))
        return out

    def file_identity(self) -> Optional[tuple]:
        """As ``FileReader.file_identity``, of the stream file this reader maps (or reads)."""
        if self._source is not None:
            return self._source.identity()
        return mapped_file_identity(self._region) if self._region is not None else None

    def batch_metadata(self, i: int):
        """The custom metadata of record batch ``i``'s message (its header only is read)."""
        return self._located(self._batches[i], _RECORD_BATCH, body=False)[0].record.metadata

    def entries_for(self, batches: Sequence[int]) -> List[Tuple[int, int]]:
        """The entries that read ``batches`` (indices into this reader): those batches and
        every dictionary message before the last of them, in stream order."""
        return select_entries(self.entries, batches)

    def _message_at(self, offset: int, index: int, body: bool = True
                    ) -> Tuple[Optional[Message], int]:
        """The message at ``offset`` and the byte past it (None at the end of the stream): a
        view of the mapping, or read by the source (its body only when ``body``)."""
        if self._source is not None:
            return self._source.stream_message(offset, index, body)
        region = self._region  # (once: close() from another thread drops it under this read)
        if region is None:
            raise ArrowInvalid("the reader is closed")
        msg = read_message_at(region, offset, index)
        return msg, offset if msg is None else message_end(msg)

    def _read(self, position: int, kind: int) -> Message:
        return self._located(position, kind)[0]

    def _located(self, position: int, kind: int, body: bool = True) -> Tuple[Message, int]:
        """Entry ``position``'s message, of ``kind``, and the byte past it (``_message_at``)."""
        self._check_open()
        offset = self.entries[position][1]
        msg, end = self._message_at(offset, position + 1, body)
        if msg is None or msg.record.header_type != kind:
            found = "end of stream" if msg is None else f"a {msg.kind} message"
            raise ArrowInvalid(f"{self._description}: byte {offset}: expected a "
                               f"{MessageHeader.NAMES[kind]} message, found {found}")
        return msg, end

    def _dictionaries_at(self, position: int):
        """The dictionaries as they stood just before entry ``position`` (a frozen lookup)."""
        wanted = self._dictionaries_before[position]
        while len(self._states) <= wanted:
            i = self._dictionary_entries[len(self._states) - 1]
            msg = self._read(i, _DICTIONARY)
            self._dictionary_batch(msg, self._memo, f"dictionary message at byte {msg.offset}")
            self._states.append(self._memo.snapshot())
        return self._states[wanted]

    def get_batch(self, i: int) -> RecordBatch:
        """Record batch ``i`` (negative counts from the end); columns decode when touched."""
        k = batch_index(i, len(self._batches))
        position = self._batches[k]
        with self._lock:  # the memo moves forward: one thread at a time
            dictionaries = self._dictionaries_at(position)
        msg = self._read(position, _RECORD_BATCH)
        return self._record_batch(msg, dictionaries, BatchWhere(k, msg.offset))

    def __iter__(self) -> Iterator[RecordBatch]:
        for i in range(len(self._batches)):
            yield self.get_batch(i)

    def _source_bytes(self) -> Optional[int]:
        return self._source.size if self._source is not None else super()._source_bytes()

    def close(self) -> None:
        super().close()  # (first: sets _closed before the source goes)
        if self._source is not None:
            self._source.close()

    def __repr__(self):
        return f"<arrowmm.IndexedStreamReader {self.num_record_batches} batches>\n{self.schema}"


def select_entries(entries: Sequence[Tuple[int, int]], batches: Sequence[int]) -> List[Tuple[int, int]]:
    """The entries that read record batches ``batches`` (0-based among the batch entries):
    those batches and every dictionary message before the last of them, in stream order."""
    positions = [i for i, (kind, _) in enumerate(entries) if kind == _RECORD_BATCH]
    wanted = {positions[b] for b in batches}
    last = max(wanted, default=-1)
    return [tuple(e) for i, e in enumerate(entries) if i in wanted or (e[0] == _DICTIONARY and i < last)]


def index_stream(source, entries: Optional[Sequence[Tuple[int, int]]] = None) -> IndexedStreamReader:
    """Random access to a stream in a file (path, mapped) or buffer: see ``IndexedStreamReader``."""
    return IndexedStreamReader(source, entries)
