"""Rebuild a valid IPC file from a damaged one: ``repair(src, dst)``.

A writer killed mid-write leaves a file without footer (arrowmm's own
temporary file is ``ARROW1\\0\\0`` + a plain stream), often with a truncated
message at its tail.  Readers that start at the footer reject it.  ``repair``
keeps the messages ``salvage.salvage_messages`` walks from the front (the schema, the
dictionary batches and the complete record batches before the first damage; in a file
whose last append was interrupted, what was committed, unless ``unfinished=True``) and
writes a new file that holds *those message bytes verbatim* (bodies are not decoded and
re-encoded; compressed bodies stay compressed) followed by a new footer whose Blocks
point at them.  Since the messages keep their offsets modulo 8, the 8-byte alignment the
file format needs is kept.

The output is written to a temporary file beside ``dst``, fsync'd and renamed
over it (``arrowmm.ipc.core.files``: an existing ``dst`` keeps its mode, owner and group,
a symlink stays a link), so ``src`` may be ``dst`` (repair in place) and a
failure never leaves a half-written ``dst``.

An existing ``dst`` is locked first (the advisory ``flock`` that ``append_file`` takes,
``arrowmm.ipc.write.append.open_locked``) and ``src`` is read under that lock: a repair in place
waits for a running append to finish instead of renaming over the file the appender is
writing (its batches would be lost), and an appender that waited for the repair writes
to the repaired file.  A ``src`` file other than ``dst`` is locked too, for as long as it is
read: the salvage walks its messages through the mapping, past the committed end into an
interrupted append's tail, which the next ``append_file`` (or ``cut_unfinished_tail``) of the
restarted writer cuts; touching a cut page of a mapping kills the process with SIGBUS.  Under
the lock nothing of arrowmm cuts it (the appender waits, then cuts and writes as usual).

A new ``dst`` gets at most ``src``'s permission bits (``atomic_target(narrow_to=src)``): a
private file's salvaged copy is private too, as ``cp`` gives it.
"""
from __future__ import annotations

import os
import struct
from typing import Optional

from ...errors import ArrowError, ArrowInvalid
from ..core.framing import EOS_BYTES
from .append import open_locked, same_file
from ..core.files import MAGIC, write_atomically
from ..read.file_mapping import mapped_file
from ..read.file_reader import FileReader, region_of
from ..read.salvage import salvage_messages

__all__ = ["RepairReport", "repair"]

_U32 = struct.Struct("<I")


class RepairReport:
    """What ``repair`` kept and why it stopped.

    Attributes
    ----------
    batches, rows : int
        Record batches and rows written to the repaired file.
    dropped_bytes : int
        Bytes of the input from the first damaged (or unrepresentable) byte to its end;
        0 when every message was kept (a missing footer is rebuilt, not dropped).
    reason : str or None
        None when the input was already complete (a stream ending in its end-of-stream
        marker, a file whose footer matches its messages); else what made it incomplete:
        the ``ArrowInvalid`` text at the damage, or the missing end-of-stream / footer.
    source_format : str
        ``"file"`` (starts with the file magic) or ``"stream"``.
    """

    __slots__ = ("batches", "rows", "dictionary_batches", "dropped_bytes", "reason",
                 "source_format", "src", "dst")

    def __init__(self, batches, rows, dictionary_batches, dropped_bytes, reason, source_format,
                 src, dst):
        self.batches = batches
        self.rows = rows
        self.dictionary_batches = dictionary_batches
        self.dropped_bytes = dropped_bytes
        self.reason = reason
        self.source_format = source_format
        self.src = src
        self.dst = dst

    @property
    def complete(self) -> bool:
        """Whether the input was already a complete file or stream (nothing was lost)."""
        return self.reason is None

    def __str__(self):
        head = (f"{self.src}: Arrow IPC {self.source_format}, "
                + ("complete" if self.complete else "incomplete"))
        lines = [head,
                 f"kept {self.batches} record batch(es), {self.rows:,} row(s), "
                 f"{self.dictionary_batches} dictionary batch(es) -> {self.dst}",
                 f"dropped {self.dropped_bytes:,} byte(s)"]
        if self.reason is not None:
            lines.append(f"reason: {self.reason}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"RepairReport(batches={self.batches}, rows={self.rows}, "
                f"dropped_bytes={self.dropped_bytes}, reason={self.reason!r}, "
                f"source_format={self.source_format!r})")


def _describe(src) -> str:
    return os.fspath(src) if isinstance(src, (str, os.PathLike)) else type(src).__name__


def repair(src, dst, *, validate: bool = True, progress=None,
           lock_timeout: Optional[float] = 30.0, unfinished: bool = False) -> RepairReport:
    """Write to ``dst`` a valid IPC file holding what can be salvaged from ``src``.

    Parameters
    ----------
    src : path or buffer
        An IPC file (complete, truncated, footer missing or damaged) or an IPC
        stream (with or without end-of-stream marker, truncated).
    dst : path
        Where the repaired IPC file goes; written atomically (temporary file
        beside it, fsync, rename).  May be ``src`` itself.
    validate : bool
        Also check each record batch's structure (``RecordBatch.validate()``) and each
        dictionary; the first that fails ends the salvage as damage does.
    progress : callable, optional
        Called with the number of bytes of ``src`` walked so far after each message (the
        command line's progress bar).
    lock_timeout : float or None
        Seconds to wait for the append lock on ``src`` (a path) and on an existing ``dst``
        while another process appends to it (None: wait as long as it takes); then
        ``TimeoutError`` naming the file, and nothing is written.
    unfinished : bool
        In a file whose last append was interrupted (``arrowmm.ipc.read.trailer``), also keep the
        complete batches that append wrote.  By default they are dropped: the repaired file
        holds what was committed, as every reader of the source sees it.

    Returns
    -------
    RepairReport

    Raises
    ------
    ArrowInvalid
        When not even the schema message can be read (nothing is written).

    Examples
    --------
    >>> import arrowmm, tempfile, os
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = tmp.name
    >>> path = os.path.join(folder, "t.arrows")
    >>> with arrowmm.new_stream(path, arrowmm.schema([("x", arrowmm.int64())])) as w:
    ...     w.write({"x": [1, 2, 3]})
    >>> with open(path, "r+b") as f:
    ...     _ = f.truncate(os.path.getsize(path) - 12)  # cut into the end of the last batch
    >>> report = arrowmm.repair(path, os.path.join(folder, "t.arrow"))
    >>> report.batches, report.dropped_bytes > 0
    (0, True)
    >>> tmp.cleanup()
    """
    lock_fd = _lock_file(dst, lock_timeout, "repaired in place")
    src_fd = None
    try:
        if isinstance(src, (str, os.PathLike)) and not (
                lock_fd is not None and same_file(lock_fd, os.fspath(src))):
            src_fd = _lock_file(src, lock_timeout, "repaired")  # (dst's lock holds it otherwise)
        return _repair(src, dst, validate, progress, unfinished, src_fd)
    finally:
        for fd in (src_fd, lock_fd):
            if fd is not None:
                os.close(fd)  # (releases the lock, after the rename)


def _lock_file(path, timeout, purpose: str) -> Optional[int]:
    """A descriptor holding the append lock on ``path`` when it is an existing regular file
    (None when it does not exist yet, or is not a regular file: nothing appends to it)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return None
    try:
        if not os.path.isfile(path):
            return None
        _, fd = open_locked(path, timeout, flags=os.O_RDONLY,
                            holder="cannot repair: another process is appending to the file",
                            purpose=purpose)
    except FileNotFoundError:
        return None  # (removed meanwhile: nothing to wait for)
    return fd


def _locked_region(src, src_fd: Optional[int]):
    """``src`` mapped (or as given); when ``src_fd`` holds its lock, the mapping must be of the
    file locked, not of one renamed over the path since."""
    region = region_of(src)
    if src_fd is not None:
        mapping, own = mapped_file(region), os.fstat(src_fd)
        if mapping is not None and (mapping.device, mapping.inode) != (own.st_dev, own.st_ino):
            raise ArrowInvalid(f"{_describe(src)}: cannot repair, the file was replaced while "
                               f"it was being opened")
    return region


def _repair(src, dst, validate, progress, unfinished, src_fd=None) -> RepairReport:
    region = _locked_region(src, src_fd)
    size = region.size
    try:
        found = salvage_messages(region, validate=validate, unfinished=unfinished,
                                 progress=progress)
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"{_describe(src)}: cannot repair, {exc}") from None
    is_file, start, kept_end = found.is_file, found.start, found.kept_end
    reason = found.reason
    footer_metadata = None
    if found.damage_at is not None:
        dropped = size - found.damage_at
    elif kept_end == size:
        dropped = 0
        reason = (f"{'file' if is_file else 'stream'} ends after byte {size} without an "
                  f"end-of-stream marker" + (" or footer" if is_file else "")
                  + " (every message in it is complete)")
    else:
        eos_end = kept_end + (8 if _U32.unpack_from(region.view(kept_end, 4), 0)[0] == 0xFFFFFFFF else 4)
        dropped = 0
        if is_file:
            reason, footer_metadata, unfinished_bytes = _check_footer(
                region, eos_end, found.batch_blocks, found.dict_blocks)
            if unfinished_bytes:
                dropped = size - eos_end if unfinished else unfinished_bytes
            elif reason is not None and eos_end < size:
                dropped = size - eos_end
        elif eos_end < size:
            dropped = size - eos_end
            reason = f"{dropped} byte(s) after the end-of-stream marker at byte {kept_end}"

    write_atomically(dst, [MAGIC, b"\x00\x00", region.view(start, kept_end - start), EOS_BYTES,
                           *_footer_and_trailer(found.footer_bytes(footer_metadata))],
                     narrow_to=src if isinstance(src, (str, os.PathLike)) else None)
    return RepairReport(len(found.batch_blocks), found.rows, len(found.dict_blocks), dropped,
                        reason, "file" if is_file else "stream", _describe(src), os.fspath(dst))


def _footer_and_trailer(footer: bytes) -> list:
    return [footer, struct.pack("<i", len(footer)), MAGIC]


def _check_footer(region, eos_end: int, batch_rows, dict_rows):
    """(reason or None, footer custom metadata to keep, bytes of an interrupted append) for the
    footer after the stream of a file."""
    if eos_end == region.size:
        return "the file has its end-of-stream marker but no footer", None, 0
    try:
        footer_reader = FileReader(region)
    except ArrowError as exc:
        return f"damaged footer: {exc}", None, 0
    if footer_reader.unfinished_bytes:
        return (f"an append was interrupted: {footer_reader.unfinished_bytes} byte(s) after the "
                f"last complete footer"), footer_reader.footer.metadata, footer_reader.unfinished_bytes
    if footer_reader._footer_offset != eos_end:
        return (f"the footer starts at byte {footer_reader._footer_offset}, not just after the "
                f"end-of-stream marker (byte {eos_end})"), None, 0
    found = [(o, m & 0xFFFFFFFF, b) for o, m, b in footer_reader._blocks.tolist()]
    found_dicts = [(o, m & 0xFFFFFFFF, b) for o, m, b in footer_reader._dict_blocks.tolist()]
    if found != batch_rows or found_dicts != dict_rows:
        return (f"the footer's blocks ({len(found)} record batches, {len(found_dicts)} "
                f"dictionaries) do not match the messages in the file ({len(batch_rows)} "
                f"record batches, {len(dict_rows)} dictionaries)"), None, 0
    return None, footer_reader.footer.metadata, 0
