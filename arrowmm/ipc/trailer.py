"""Where a valid IPC file ends: the trailer check and the recovery of an interrupted append.

An IPC file ends with ``footer, int32 footer length, "ARROW1"`` (the *trailer*).
``arrowmm.append_file`` adds record batches to a file without touching its bytes:
after the old trailer it writes 0-7 zero bytes (so messages stay 8-byte aligned),
the new messages, an end-of-stream marker and a new footer whose Blocks cover the
old and the new batches, then the new trailer.  A file appended to ``n`` times is
``n + 1`` *generations*, each ending in a trailer; the last one is the file.

While an append runs, and after a crash (SIGKILL, power loss) during one, the
file's tail is not a valid trailer.  ``valid_end`` finds where the last complete
generation ends: at the end of the bytes when the tail is valid, else by a
backward search for the trailer magic, each candidate checked as a reader
would (footer length in range, footer parses, its schema is the file's, every
Block lies before the footer and 8-byte aligned, the last record batch Block
is a record batch message of the stated length).  Readers open that prefix:
the content from before the interrupted append, never less.

``next_generation`` is the forward view of the same layout, for ``repair``:
given the end-of-stream marker that ends a generation's messages, where the
next generation's messages start (or None).
"""
from __future__ import annotations

import struct
from typing import Optional

from ..errors import ArrowError
from ..format import MessageHeader, parse_footer
from .io import MAGIC
from .message import read_message_at

__all__ = ["TRAILER_SIZE", "valid_end", "trailer_is_valid", "next_generation", "resume_after_eos",
           "aligned", "copy_bytes"]

TRAILER_SIZE = 10  # int32 footer length + "ARROW1"
_I32 = struct.Struct("<i")
_CHUNK = 4 << 20  # bytes copied per step of the backward search
_MAX_FOOTER_SCAN = 64 << 20  # next_generation: the longest footer it looks through
_FIRST_STEP = 4 << 10  # next_generation: bytes copied at first (a footer is usually smaller)


def aligned(offset: int) -> int:
    """``offset`` rounded up to a multiple of 8 (where an appended generation's messages start)."""
    return (offset + 7) & ~7


def _file_schema(region):
    msg = read_message_at(region, 8, 0)
    if msg is None or msg.record.header_type != MessageHeader.Schema:
        return None
    return msg.header


def trailer_is_valid(region, end: int, schema=None) -> bool:
    """Whether the bytes of ``region`` up to ``end`` form a complete IPC file whose footer
    a reader can use (see the module docstring for what is checked).  ``schema``: the
    file's schema, when the caller has read it (else the schema message at byte 8)."""
    try:
        if end < 8 + 8 + TRAILER_SIZE or end > region.size:
            return False
        if region.view(end - 6, 6).to_bytes() != MAGIC:
            return False
        footer_len = _I32.unpack_from(region.view(end - TRAILER_SIZE, 4), 0)[0]
        footer_start = end - TRAILER_SIZE - footer_len
        if footer_len <= 0 or footer_start < 16:
            return False
        footer = parse_footer(memoryview(region.view(footer_start, footer_len, "footer")))
        if schema is None:
            schema = _file_schema(region)
        if schema is None or footer.schema != schema:
            return False
        last = None
        for blocks, kind in ((footer.dictionaries, MessageHeader.DictionaryBatch),
                             (footer.record_batches, MessageHeader.RecordBatch)):
            for offset, meta_len, body_len in blocks.tolist():
                if (offset < 8 or offset % 8 or meta_len <= 0 or body_len < 0
                        or offset + meta_len + body_len > footer_start):
                    return False
                last = (offset, body_len, kind)
        if last is not None:
            msg = read_message_at(region, last[0], 0, last[1])
            if msg is None or msg.record.header_type != last[2]:
                return False
        return True
    except (ArrowError, ValueError, IndexError, TypeError, struct.error, AttributeError):
        return False  # a probe: whatever the bytes are, they are not a valid trailer


def valid_end(region) -> Optional[int]:
    """Where the last complete generation of the IPC file in ``region`` ends: ``region.size``
    when its tail is a valid trailer, the end of an earlier trailer when an append was
    interrupted, None when there is none (not a file, or damaged otherwise).

    The backward search looks at every ``"ARROW1"`` in the tail (memory copied in 4 MiB
    steps), so it costs time in proportion to the unfinished bytes; a complete file costs
    one footer parse.
    """
    size = region.size
    if size < 26 or region.view(0, 6).to_bytes() != MAGIC:
        return None
    schema = _file_schema_or_none(region)
    if schema is None:
        return None
    if trailer_is_valid(region, size, schema):
        return size
    hi = size  # candidates end at or before hi
    while hi > 26:
        lo = max(0, hi - _CHUNK)
        chunk = region.view(lo, hi - lo).to_bytes()
        pos = len(chunk)
        while True:
            pos = chunk.rfind(MAGIC, 0, pos)
            if pos < 0:
                break
            end = lo + pos + 6
            if trailer_is_valid(region, end, schema):
                return end
            # (the magic cannot overlap itself: the next match ends at or before ``pos``)
        if lo == 0:
            break
        hi = lo + 5  # an occurrence straddling the chunk boundary is seen in the next step
    return None


def _file_schema_or_none(region):
    try:
        return _file_schema(region)
    except (ArrowError, ValueError, IndexError, TypeError, struct.error):
        return None


def next_generation(region, eos_end: int) -> Optional[int]:
    """Where the messages of the generation after the one whose end-of-stream marker ends at
    ``eos_end`` start: just past its trailer, rounded up to 8; None when no trailer follows
    there, or when it ends the bytes (the last generation).

    The footer is the bytes from ``eos_end`` to its trailer, so its length field is known:
    the first ``"ARROW1"`` after ``eos_end`` preceded by that length is the trailer.
    The search copies a few KiB first and more only while no trailer is found (up to 64 MiB
    of footer), so reading an appended file as a stream copies about its footers' bytes.
    """
    size = region.size
    cap = min(size, eos_end + _MAX_FOOTER_SCAN)
    lo = stop = eos_end
    step = _FIRST_STEP
    while stop < cap:  # footers are small: copy a few KiB, more only while no trailer is seen
        stop = min(cap, stop + step)
        step = min(step * 2, _CHUNK)
        data = copy_bytes(region, lo, stop - lo)
        pos = 0
        while True:
            pos = data.find(MAGIC, pos)
            if pos < 0:
                break
            at = lo + pos  # where this "ARROW1" starts; its length field is the 4 bytes before
            if at - 4 >= eos_end and _length_before(region, data, lo, at) == at - 4 - eos_end:
                end = at + 6
                if end >= size:
                    return None
                start = aligned(end)
                if start >= size or region.view(end, start - end).to_bytes().strip(b"\x00"):
                    return None
                return start
            pos += 1
        lo = max(eos_end, stop - 5)  # (a magic straddling the boundary is found in the next step)
    return None


def _length_before(region, data: bytes, lo: int, at: int) -> int:
    """The int32 just before byte ``at`` (from ``data``, the copy of the bytes from ``lo``,
    when it holds them)."""
    if at - 4 >= lo:
        return _I32.unpack_from(data, at - 4 - lo)[0]
    return _I32.unpack_from(region.view(at - 4, 4), 0)[0]


def copy_bytes(region, start: int, length: int) -> bytes:
    """A copy of ``length`` bytes of ``region`` from ``start`` (the one place the searches
    here copy memory: tests count the bytes through it)."""
    return region.view(start, length).to_bytes()


def resume_after_eos(region, pos: int) -> Optional[int]:
    """``next_generation`` for the end-of-stream marker that *starts* at ``pos`` (8 bytes, or 4
    in the pre-0.15 framing): where reading an appended file as a stream goes on, or None."""
    if pos + 8 > region.size:
        return None
    head = _I32.unpack_from(region.view(pos, 4), 0)[0]
    return next_generation(region, pos + (8 if head == -1 else 4))
