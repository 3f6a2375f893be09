"""Where a valid IPC file ends: the trailer check, and the append marker that tells a torn append from damage.

An IPC file ends with ``footer, int32 footer length, "ARROW1"`` (the *trailer*).
``arrowmm.append_file`` adds record batches to a file without touching its committed
bytes.  After the old trailer, which ends at byte ``E``, it writes:

1. 0-7 zero bytes (so what follows is 8-byte aligned), then the 32-byte *append marker*
   ``MARKER``: the tag ``ARROWMM`` + 0x1e, ``E``, the CRC-32 of the old footer and
   trailer, the CRC-32 of those 20 bytes, and a state byte (1: in progress).  It is
   written, and fsync'd, before anything else;
2. the new messages, an end-of-stream marker and a new footer whose Blocks cover the old
   and the new batches; fsync;
3. the new trailer; fsync; then the state byte becomes 2 (committed).

A file appended to ``n`` times is ``n + 1`` *generations*, each ending in a trailer.
No reader of the complete file looks between generations (footers point at messages by
offset), so pyarrow and polars read it as any IPC file.

**Recovery by construction.**  When a file's tail is not a valid trailer, a reader falls
back to an earlier generation only when the file itself says an append was in progress
from exactly there: the last append marker in the file (found by a backward search for
its tag; its own checksum must hold) is in progress, sits just after a valid trailer
ending at the ``E`` it names, and that footer's checksum is the one it recorded.  The
reader then opens ``[0, E)``, the content committed before the append.  Anything else is
damage (a truncated copy or download, a flipped byte in a footer, a file cut after its
append committed, bytes inside values that look like a trailer): ``ArrowInvalid`` naming
the offset.  ``docs/recovery.md`` says what each tool does with each kind of damage.

The open reads the tail through ``file_mapping.tail_reader`` (``pread`` for mapped
files): those are the bytes another process's append may cut.

``next_generation`` is the forward view of the same layout, for reading a file as a
stream and for ``repair``: given the end-of-stream marker that ends a generation's
messages, where the next *committed* generation's messages start (or None).
"""
from __future__ import annotations

import struct
import zlib
from typing import Optional

from ... import limits
from ...errors import ArrowError, ArrowInvalid
from ...format import MessageHeader, parse_footer, parse_message
from .file_mapping import FileChanged, TailRead, tail_reader
from ..core.files import MAGIC

__all__ = ["TRAILER_SIZE", "MARKER_SIZE", "MARKER_TAG", "IN_PROGRESS", "COMMITTED",
           "STATE_OFFSET", "append_marker", "footer_checksum", "trailer_problem",
           "append_in_progress", "committed_end", "committed_or_none", "committed_at_open",
           "marker_wait", "MARKER_WAIT", "footer_start_at", "LATER",
           "schema_message",
           "next_generation", "generation_after", "resume_after_eos", "trailer_after",
           "MAX_FOOTER_SCAN", "aligned", "copy_bytes", "Damage"]

TRAILER_SIZE = 10  # int32 footer length + "ARROW1"
MARKER_TAG = b"ARROWMM\x1e"
MARKER_SIZE = 32
STATE_OFFSET = 24  # the marker's state byte (outside its checksum: it changes once)
IN_PROGRESS, COMMITTED = 1, 2
_MARKER = struct.Struct("<8sQII")  # tag, committed end, footer CRC-32, CRC-32 of the 20 before
_I32 = struct.Struct("<i")
_CHUNK = 4 << 20  # bytes read per step of the backward search
MAX_FOOTER_SCAN = 64 << 20  # next_generation: the longest footer it looks through
_FIRST_STEP = 4 << 10  # next_generation: bytes read at first (a footer is usually smaller)
#: ``next_generation``'s ``committed`` when not found yet: found from the tail if a generation
#: needs it
LATER = -1


class Damage(ArrowInvalid):
    """A file whose tail is not a valid trailer and that records no append in progress there."""


def aligned(offset: int) -> int:
    """``offset`` rounded up to a multiple of 8 (where an appended generation's marker starts)."""
    return (offset + 7) & ~7


def footer_checksum(footer_and_trailer: bytes) -> int:
    """The CRC-32 an append marker records of the generation it follows."""
    return zlib.crc32(footer_and_trailer) & 0xFFFFFFFF


def append_marker(committed_end: int, footer_crc: int, state: int = IN_PROGRESS) -> bytes:
    """The 32 bytes an appender writes at ``aligned(committed_end)`` before its first message."""
    head = _MARKER.pack(MARKER_TAG, committed_end, footer_crc, 0)[:20]
    return head + struct.pack("<IB7x", zlib.crc32(head) & 0xFFFFFFFF, state)


def _parse_marker(data: bytes):
    """(committed end, footer CRC, state) of a marker's 32 bytes, or None when its checksum
    fails (not a marker: bytes that happen to hold the tag)."""
    tag, end, footer_crc, crc = _MARKER.unpack_from(data, 0)
    if tag != MARKER_TAG or zlib.crc32(data[:20]) & 0xFFFFFFFF != crc:
        return None
    return end, footer_crc, data[STATE_OFFSET]


def trailer_problem(read: TailRead, end: int, schema=None, *, parse: bool = True
                    ) -> Optional[str]:
    """What keeps the bytes before ``end`` from ending in a trailer a reader can use, or None.

    Checked: the magic, the footer length, that the footer parses (``parse=False``: the
    caller parses it, once, where it reads it from), and with ``schema`` (the strict check
    for a generation an append marker names) that the footer's schema is the file's and its
    Blocks lie before it, 8-byte aligned, the last one a message of its kind and stated body
    length."""
    if end < 8 + 8 + TRAILER_SIZE:
        return f"{end} bytes are too few for an IPC file"
    if read(end - 6, 6) != MAGIC:
        return (f"does not end with the Arrow file magic 'ARROW1' (at byte {end - 6}: truncated "
                f"or still being written?)")
    footer_len = _I32.unpack_from(read(end - TRAILER_SIZE, 4), 0)[0]
    footer_start = end - TRAILER_SIZE - footer_len
    if footer_len <= 0 or footer_start < 8:
        return f"footer length {footer_len} (at byte {end - TRAILER_SIZE}) does not fit in {end} bytes"
    if not parse:
        return None
    try:
        footer = parse_footer(memoryview(read(footer_start, footer_len)))
    except FileChanged:
        raise
    except (ArrowError, ValueError, IndexError, TypeError, struct.error, AttributeError,
            RecursionError, UnicodeDecodeError) as exc:
        return f"the footer at byte {footer_start} ({footer_len} bytes) does not parse: {exc}"
    if schema is None:
        return None
    if footer.schema != schema:
        return f"the footer at byte {footer_start} has another schema than the file's"
    blocks = sorted((offset, meta_len & 0xFFFFFFFF, body_len, kind)
                    for rows, kind in ((footer.dictionaries, MessageHeader.DictionaryBatch),
                                       (footer.record_batches, MessageHeader.RecordBatch))
                    for offset, meta_len, body_len in rows.tolist())
    where = f"the footer at byte {footer_start}"
    block_end = 8
    for offset, meta_len, body_len, _ in blocks:
        if (offset < block_end or offset % 8 or meta_len <= 0 or body_len < 0
                or offset + meta_len + body_len > footer_start):
            return (f"a Block of {where} (byte {offset}) lies outside the file or over the one "
                    f"before it")
        block_end = offset + meta_len + body_len
    if blocks:
        # the messages are the file's own: the first follows the schema message, the last is
        # followed by the end-of-stream marker and then this footer, as every writer lays them
        first, last = blocks[0], blocks[-1]
        if first[0] != _schema_end(read) or read(footer_start - 8, 8) != _EOS or \
                block_end != footer_start - 8:
            return f"the Blocks of {where} are not laid out as a writer lays them"
        if not (_is_message(read, *first) and _is_message(read, *last)):
            return f"the first or last Block of {where} is not the message it names"
    return None


_EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def _schema_end(read: TailRead) -> int:
    """Where the message after the schema message at byte 8 starts."""
    cont, size = struct.unpack("<Ii", read(8, 8))
    if cont != 0xFFFFFFFF:
        return 12 + struct.unpack_from("<i", read(8, 4))[0]
    return 16 + size


def _is_message(read: TailRead, offset: int, meta_len: int, body_len: int, kind: int) -> bool:
    """Whether a message of ``kind`` with ``body_len`` body bytes starts at ``offset``."""
    frame = read(offset, 8)
    cont, size = struct.unpack("<Ii", frame)
    start = 8
    if cont != 0xFFFFFFFF:
        size, start = cont - (1 << 32) if cont & 0x80000000 else cont, 4
    if size <= 0 or start + size > meta_len:
        return False
    try:
        record = parse_message(memoryview(read(offset + start, size)), 0, f"byte {offset}")
    except (ArrowError, ValueError, IndexError, TypeError, struct.error, AttributeError,
            RecursionError, UnicodeDecodeError):
        return False
    return record.header_type == kind and record.body_length == body_len


def append_in_progress(read: TailRead, size: int, schema) -> int:
    """Where the committed content of a file whose tail (``size`` bytes) is not a valid trailer
    ends, when its last append marker says an append from there is in progress; else
    ``Damage`` saying why not.  ``schema``: the file's (its schema message)."""
    hi = size
    while hi > 16:
        lo = max(8, hi - _CHUNK)
        chunk = read(lo, hi - lo)
        pos = len(chunk)
        while True:
            pos = chunk.rfind(MARKER_TAG, 0, pos)
            if pos < 0:
                break
            at = lo + pos
            if at % 8 == 0 and at + MARKER_SIZE <= size:
                marker = _parse_marker(read(at, MARKER_SIZE))
                if marker is not None:
                    return _committed_before(read, at, marker, schema)
        if lo == 8:
            break
        hi = lo + len(MARKER_TAG) - 1  # a tag straddling the step's start is seen in the next
    raise Damage("no append marker: the file records no append in progress, so its tail is "
                 "damage (a truncated or damaged copy), not an unfinished append")


def _committed_before(read: TailRead, at: int, marker, schema) -> int:
    end, footer_crc, state = marker
    where = f"the append marker at byte {at}"
    if state == COMMITTED:
        raise Damage(f"{where} says its append was committed, yet the file does not end in a "
                     f"trailer: cut or damaged after that append")
    if state != IN_PROGRESS:
        raise Damage(f"{where} has an unknown state {state}")
    if end < 26 or aligned(end) != at or read(end, at - end).strip(b"\x00"):
        raise Damage(f"{where} names a committed end (byte {end}) it does not follow")
    problem = trailer_problem(read, end, schema)
    if problem is not None:
        raise Damage(f"{where} names the committed end at byte {end}, where {problem}")
    footer_len = _I32.unpack_from(read(end - TRAILER_SIZE, 4), 0)[0]
    start = end - TRAILER_SIZE - footer_len
    if footer_checksum(read(start, end - start)) != footer_crc:
        raise Damage(f"{where}: the footer before it (bytes {start}-{end}) is not the one it "
                     f"recorded (checksum differs)")
    return end


def schema_message(read: TailRead):
    """The schema of the message at byte 8 of a file (what a generation's footer repeats), or
    None when it does not read."""
    try:
        cont, size = struct.unpack("<Ii", read(8, 8))
        start = 16
        if cont != 0xFFFFFFFF:
            size, start = struct.unpack_from("<i", read(8, 4))[0], 12
        if size <= 0 or size > limits.max_metadata_size:
            return None
        record = parse_message(memoryview(read(start, size)), 0, "message 0 at byte 8")
    except FileChanged:
        raise
    except (ArrowError, ValueError, IndexError, TypeError, struct.error, AttributeError,
            RecursionError, UnicodeDecodeError):
        return None
    return record.header if record.header_type == MessageHeader.Schema else None


def committed_end(region, schema, read: Optional[TailRead] = None) -> int:
    """Where the committed content of the IPC file in ``region`` ends: ``region.size`` when its
    tail is a valid trailer, the start of an append in progress (see the module docstring),
    else ``Damage`` naming what is wrong and where."""
    own = read is None
    read = tail_reader(region) if own else read
    try:
        size = region.size
        problem = trailer_problem(read, size)
        if problem is None:
            return size
        try:
            return append_in_progress(read, size, schema)
        except Damage as exc:
            raise Damage(f"{problem}; {exc}") from None
    finally:
        if own:
            read.close()


def committed_or_none(size: int, read: TailRead) -> Optional[int]:
    """The committed end (``committed_end``) of the IPC file whose first ``size`` bytes ``read``
    reads, or None when its end is damaged.  A reader finds it when it opens the file and
    passes it to ``next_generation``: a tail cut later (the next append cuts an unfinished
    one) then neither changes what it reads nor is read again."""
    if trailer_problem(read, size) is None:
        return size
    try:
        return append_in_progress(read, size, schema_message(read))
    except Damage:
        return None


#: Seconds a reader watches a file that ends in an append marker cut short (``marker_wait``)
#: before it calls that end damage.
MARKER_WAIT = 0.05


def marker_wait(size: int, read: TailRead) -> float:
    """How long to watch the file whose first ``size`` bytes ``read`` reads before calling its
    damaged end damage: ``MARKER_WAIT`` when it ends like an append marker being written (a
    trailer, then zero padding and the first bytes of a marker: one write seen half done, for
    as long as its writer is descheduled between two pages), else 0 (no wait: a truncation
    sweep over a damaged file must not pay for it at every cut).  The callers wait only while
    another process holds the append lock (``file_mapping.appender_holds``)."""
    span = min(size, TRAILER_SIZE + 7 + MARKER_SIZE - 1)
    try:
        tail = read(size - span, span)
    except ArrowError:
        return 0.0
    base = size - span
    for end in range(size - 1, base + TRAILER_SIZE - 1, -1):  # (where the old trailer ends)
        if size - end > 7 + MARKER_SIZE - 1:
            break
        if tail[end - base - len(MAGIC):end - base] != MAGIC:
            continue
        start = aligned(end)
        pad = tail[end - base:min(start, size) - base]
        written = tail[start - base:] if start < size else b""
        if pad.count(0) == len(pad) and len(written) < MARKER_SIZE and \
                written[:len(MARKER_TAG)] == MARKER_TAG[:len(written)]:
            return MARKER_WAIT
    return 0.0


def committed_at_open(size: int, read: TailRead) -> Optional[int]:
    """What a reader opening the file passes to ``next_generation`` as ``committed``:
    ``LATER`` when its tail is a trailer (nothing cuts those bytes, and parsing the footer
    is left to the rare generation that needs it), else ``committed_or_none`` now, while the
    unfinished tail that a later append cuts is still there to read."""
    if trailer_problem(read, size, parse=False) is None:
        return LATER
    return committed_or_none(size, read)


def footer_start_at(size: int, read: TailRead) -> Optional[int]:
    """Where the last footer of the file whose first ``size`` bytes ``read`` reads starts, when
    its tail is a trailer (else None: a file cut short, or an append unfinished)."""
    if trailer_problem(read, size, parse=False) is not None:
        return None
    return size - TRAILER_SIZE - _I32.unpack_from(read(size - TRAILER_SIZE, 4), 0)[0]


def next_generation(region, eos_end: int, read: Optional[TailRead] = None, *,
                    unfinished: bool = False, salvage: bool = False,
                    committed: Optional[int] = LATER) -> Optional[int]:
    """Where the messages of the committed generation after the one whose end-of-stream marker
    ends at ``eos_end`` start: past its trailer (rounded up to 8) and the next append's marker;
    None when no trailer follows there, when it ends the bytes (the last generation), or when
    the append after it is not committed (``unfinished=True``: its messages too, for salvage).

    A generation is committed when it starts before the file's committed end (``committed_end``:
    an append whose marker kept its in-progress state because the process died between its
    trailer and that byte is committed all the same).  A generation without a marker (appended
    by arrowmm before 0.2) is read when the file's end is sound; when it is damaged, that is
    ``Damage`` (the generation may be a torn append), unless ``salvage`` (``repair``) asks for
    every complete message whatever it is.

    ``committed``: what ``committed_at_open`` gave when the caller opened the file: its
    committed end (no byte past it is then read, unless ``unfinished`` or ``salvage``), None
    when its end was damaged, or ``LATER`` (the default): found from the tail if a generation
    needs it.

    The footer is the bytes from ``eos_end`` to its trailer, so its length field is known:
    the first ``"ARROW1"`` after ``eos_end`` preceded by that length is the trailer.
    The search reads a few KiB first and more only while no trailer is found (up to 64 MiB
    of footer), so reading an appended file as a stream copies about its footers' bytes.
    """
    own = read is None
    read = tail_reader(region) if own else read
    try:
        return generation_after(region.size, eos_end, read, unfinished=unfinished,
                                salvage=salvage, committed=committed)
    finally:
        if own:
            read.close()


def generation_after(size: int, eos_end: int, read: TailRead, *, unfinished: bool = False,
                     salvage: bool = False, committed: Optional[int] = LATER) -> Optional[int]:
    """``next_generation`` of the file whose first ``size`` bytes ``read`` reads (a file read
    through a file object, which has no region)."""
    if committed is not None and committed != LATER and not (unfinished or salvage):
        size = min(size, committed)  # (what follows was not committed when the file was opened)
    cap = min(size, eos_end + MAX_FOOTER_SCAN)
    lo = stop = eos_end
    step = _FIRST_STEP
    while stop < cap:  # footers are small: read a few KiB, more only while no trailer is seen
        stop = min(cap, stop + step)
        step = min(step * 2, _CHUNK)
        data = copy_bytes(read, lo, stop - lo)
        pos = 0
        while True:
            pos = data.find(MAGIC, pos)
            if pos < 0:
                break
            at = lo + pos  # where this "ARROW1" starts; its length field is the 4 bytes before
            if at - 4 >= eos_end and _length_before(read, data, lo, at) == at - 4 - eos_end:
                return _generation_start(size, at + 6, read, unfinished, salvage, committed)
            pos += 1
        lo = max(eos_end, stop - 5)  # (a magic straddling the boundary is found in the next step)
    return None


def trailer_after(data) -> Optional[int]:
    """Where the trailer ends in ``data``, the bytes after a generation's end-of-stream marker
    (its footer, then the first ``"ARROW1"`` preceded by the footer's length: the rule
    ``next_generation`` follows), or None when ``data`` holds none."""
    pos = 0
    while True:
        pos = data.find(MAGIC, pos)
        if pos < 0:
            return None
        if pos >= 4 and _I32.unpack_from(data, pos - 4)[0] == pos - 4:
            return pos + len(MAGIC)
        pos += 1


def _generation_start(size: int, end: int, read: TailRead, unfinished: bool,
                      salvage: bool, committed: Optional[int]) -> Optional[int]:
    """Where the messages after the trailer ending at ``end`` start, when they are committed
    (see ``next_generation``)."""
    start = aligned(end)
    if end >= size or start >= size or read(end, start - end).strip(b"\x00"):
        return None
    if size - start >= MARKER_SIZE and read(start, len(MARKER_TAG)) == MARKER_TAG:
        marker = _parse_marker(read(start, MARKER_SIZE))
        if marker is None or marker[0] != end:
            return None
        if marker[2] == COMMITTED or unfinished:
            return start + MARKER_SIZE
        if committed == LATER:
            committed = committed_or_none(size, read)
        return start + MARKER_SIZE if committed is not None and start < committed else None
    # an append by arrowmm before 0.2: zero padding, no marker
    if salvage:
        return start
    if committed == LATER:
        committed = committed_or_none(size, read)
    if committed is None:
        raise Damage(f"a generation without an append marker starts at byte {start}, and the "
                     f"file's end is damaged: it may be an append that never committed "
                     f"(arrowmm.repair keeps every complete batch: docs/recovery.md)")
    return start if start < committed else None


def _length_before(read: TailRead, data: bytes, lo: int, at: int) -> int:
    """The int32 just before byte ``at`` (from ``data``, the copy of the bytes from ``lo``,
    when it holds them)."""
    if at - 4 >= lo:
        return _I32.unpack_from(data, at - 4 - lo)[0]
    return _I32.unpack_from(read(at - 4, 4), 0)[0]


def copy_bytes(read: TailRead, start: int, length: int) -> bytes:
    """A copy of ``length`` bytes from ``start`` (the one place ``next_generation`` copies
    bytes: tests count them through it)."""
    return read(start, length)


def resume_after_eos(region, pos: int, read: Optional[TailRead] = None, *,
                     unfinished: bool = False, salvage: bool = False,
                     committed: Optional[int] = LATER) -> Optional[int]:
    """``next_generation`` for the end-of-stream marker that *starts* at ``pos`` (8 bytes, or 4
    in the pre-0.15 framing): where reading an appended file as a stream goes on, or None."""
    if pos + 8 > region.size:
        return None
    own = read is None
    read = tail_reader(region) if own else read
    try:
        head = _I32.unpack_from(read(pos, 4), 0)[0]
        return generation_after(region.size, pos + (8 if head == -1 else 4), read,
                                unfinished=unfinished, salvage=salvage, committed=committed)
    finally:
        if own:
            read.close()
