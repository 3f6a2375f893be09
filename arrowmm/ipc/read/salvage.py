"""The complete messages of a damaged IPC file or stream, walked from the front.

Why one walk: ``repair`` writes them to a new file, ``open_file(path, recover=True)``
reads them in place under a footer made for them, and both must keep exactly the same
messages.  The walk (``read_message_at``: every length checked against the bytes before
use) keeps the schema, the dictionary batches and the complete record batches that come
before the first damage.  In a file that was appended to it goes on through the committed
generations (``trailer.next_generation``), and into an append in progress or interrupted
only with ``unfinished=True``: by default what it keeps is what was committed.

Dictionary replacement (a second non-delta dictionary batch for an id) is legal in a
stream but has no representation in a file: the walk stops *before* it, as it does at
damage, and says so.  Deltas are kept.
"""
from __future__ import annotations

from typing import Optional

from ...errors import ArrowError, ArrowInvalid
from ...format import MessageHeader, encode_footer, parse_footer
from ..core.files import MAGIC, footer_blocks
from ..core.framing import message_end
from .stream_reader import StreamReader
from .trailer import resume_after_eos

__all__ = ["Salvage", "salvage_messages"]


class Salvage:
    """What the walk kept: ``dict_blocks`` and ``batch_blocks`` (offset, metadata length,
    body length) as a footer of a file laid out like the input lists them, ``rows``,
    ``kept_end`` (just past the last message kept), ``damage_at`` and ``reason`` (None when
    the walk ended at an end-of-stream marker or the end of the bytes), and the input's
    ``schema``, ``version`` and ``features``."""

    __slots__ = ("schema", "version", "features", "dict_blocks", "batch_blocks", "rows",
                 "kept_end", "damage_at", "reason", "is_file", "start")

    def footer(self, metadata: Optional[dict] = None):
        """The parsed footer of a file holding the kept messages where they are."""
        return parse_footer(memoryview(self.footer_bytes(metadata)))

    def footer_bytes(self, metadata: Optional[dict] = None) -> bytes:
        return encode_footer(self.schema, footer_blocks(self.dict_blocks),
                             footer_blocks(self.batch_blocks), metadata, self.version,
                             self.features)


def salvage_messages(region, *, validate: bool = True, unfinished: bool = False,
                     progress=None) -> Salvage:
    """Walk the messages of ``region`` from the front (see the module docstring).

    Blocks are given as offsets in a file that starts with the file magic and the input's
    messages from byte 8 (for a file input: where they are).  ``validate`` also checks each
    record batch's structure and each dictionary; the first that fails ends the walk as
    damage does.  ``progress(bytes walked)`` is called after each message.  Raises
    ``ArrowInvalid`` when not even the schema message reads.
    """
    size = region.size
    is_file = size >= 8 and region.view(0, 6).to_bytes() == MAGIC
    start = 8 if is_file else 0
    try:
        reader = StreamReader(region)  # reads (and checks) the schema message
    except ArrowError as exc:
        raise ArrowInvalid(f"the schema message is unreadable: {exc}") from None
    reader._unfinished, reader._salvage = unfinished, True
    found = Salvage()
    found.schema, found.version, found.features = reader.schema, reader.version, reader.features
    found.is_file, found.start = is_file, start
    dict_rows, batch_rows = [], []
    defined = set()
    rows = 0
    kept_end = reader._pos
    damage_at = reason = None
    while True:
        offset = reader._pos
        try:
            msg = reader._read_message()
            if msg is None:
                resume = _next_generation(region, reader, unfinished) if is_file else None
                if resume is None:
                    break
                reader._pos = resume  # an appended file: the next generation's messages
                continue
            where = f"message {msg.index} (byte {msg.offset})"
            if (msg.offset - start) % 8 or (msg.body.offset - start) % 8:
                raise ArrowInvalid(f"{where}: not 8-byte aligned (body at byte {msg.body.offset}), "
                                   f"which the file format needs")
            kind = msg.record.header_type
            if kind == MessageHeader.DictionaryBatch:
                dict_id = msg.header.id
                if not msg.header.is_delta and dict_id in defined:
                    raise ArrowInvalid(f"{where}: dictionary {dict_id} is replaced (a second "
                                       f"non-delta dictionary batch), which a stream may do but a "
                                       f"file cannot hold: the salvage stops before it")
                reader._dictionary_batch(msg, reader._memo, where)
                if validate:  # just this batch's values (a delta's new part), not the merged whole
                    reader._memo.latest_part(dict_id).validate()
                defined.add(dict_id)
                blocks = dict_rows
            elif kind == MessageHeader.RecordBatch:
                batch = reader._record_batch(msg, reader._memo.snapshot(), where)
                if validate:
                    batch.validate()
                rows += batch.num_rows
                blocks = batch_rows
            elif kind == MessageHeader.Schema:
                raise ArrowInvalid(f"{where}: a second schema message")
            else:
                raise ArrowInvalid(f"{where}: a {msg.kind} message inside a record batch stream")
        except ArrowError as exc:
            damage_at, reason = offset, str(exc)
            break
        blocks.append((msg.offset - start + 8, msg.body.offset - msg.offset, msg.record.body_length))
        kept_end = message_end(msg)
        if progress is not None:
            progress(kept_end)
    found.dict_blocks, found.batch_blocks, found.rows = dict_rows, batch_rows, rows
    found.kept_end, found.damage_at, found.reason = kept_end, damage_at, reason
    return found


def _next_generation(region, reader, unfinished: bool):
    """Where the messages after the end-of-stream marker at ``reader``'s position resume, in
    a file appended to (``arrowmm.ipc.read.trailer``); None at the last generation."""
    pos = reader._pos
    if reader._end is not None and pos >= reader._end:
        return None
    return resume_after_eos(region, pos, unfinished=unfinished, salvage=True)
