"""Statistics added to the footer of an IPC file that has none: ``add_statistics``.

Why a pass of its own: files that pyarrow, polars or an old arrowmm wrote carry no
per-batch statistics, so ``arrowmm.dataset`` filters cannot skip their batches.  Rewriting
such a file through a writer would re-encode every batch (another compression, other
buffers); this pass keeps every message exactly as it is instead.  It reads each record
batch once, a column at a time (only the columns statistics describe are decoded, and a
batch's decoded columns are let go with it), computes what ``new_file(..., statistics=True)``
records (``arrowmm.ipc.core.statistics``), then copies the bytes before the first message (the
schema message) and every dictionary and record batch message byte for byte, in the file's
order, under a new footer: the old
footer's blocks at their new offsets, its custom metadata with the statistics added.  One
header is written anew: the first record batch's, which gains the statistics' stamp
(``arrowmm.ipc.core.statistics``: what binds them to these batches); its body is copied as it is.

The output goes through ``core.files.atomic_target`` (a hidden temporary renamed into place,
fsync'd): a crash leaves the destination as it was, and replacing the source itself
(``in_place=True``) never leaves it half-written.
"""
from __future__ import annotations

import os
import struct
from typing import Callable, Optional

from ... import types as t
from ..._core._region import Region
from ...errors import ArrowInvalid
from ...format import MetadataVersion, encode_batch_message, encode_footer
from .append import open_locked
from ..read.feather import is_feather_v1
from ..core.files import MAGIC, Sink, atomic_target, footer_blocks
from ..read.file_reader import FileReader
from ..read.reader_base import file_region, flat_blocks
from ..core.framing import read_message_at
from ..core.statistics import STAMP_KEY, column_statistics, encode_file_statistics, \
    new_statistics_id, supports_statistics, unique_names, without_statistics

__all__ = ["add_statistics", "file_statistics"]

_EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def _storage_type(dtype: t.DataType) -> t.DataType:
    """The type a column is stored as (an extension type's storage), which statistics describe."""
    return getattr(dtype, "storage_type", dtype) if isinstance(dtype, t.ExtensionType) else dtype


def file_statistics(reader, progress: Optional[Callable[[int], None]] = None) -> list:
    """Per record batch of ``reader`` (a file reader), ``{"rows", "columns"}`` as a file writer
    records them with ``statistics=True``: every column of a supported type decoded in turn,
    one batch at a time.  ``progress(batches done)`` is called after each batch."""
    names = reader.schema.names
    unique = unique_names(names)
    columns = [k for k, f in enumerate(reader.schema)
               if supports_statistics(_storage_type(f.type)) and f.name in unique]
    out = []
    for i in range(reader.num_record_batches):
        batch = reader.get_batch(i)
        described = {}
        for k in columns:
            try:
                described[names[k]] = column_statistics(batch.storage_column(k))
            except ArrowInvalid as exc:
                raise ArrowInvalid(f"record batch {i}, column {names[k]!r}: {exc}") from None
        out.append({"rows": batch.num_rows, "columns": described})
        del batch  # (its decoded columns go with it)
        if progress is not None:
            progress(i + 1)
    return out


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # (b does not exist yet)
        return False


def add_statistics(source, dest=None, *, in_place: bool = False, fsync: bool = True,
                   lock_timeout: Optional[float] = 30.0,
                   progress: Optional[Callable[[int], None]] = None) -> str:
    """Write the IPC file ``source`` to ``dest`` with per-batch statistics in its footer, every
    message body copied byte for byte; return the path written.

    The name says what it does to a file, as ``repair`` does: it adds (or recomputes) the
    statistics arrowmm's writers record with ``statistics=True`` (``arrowmm.ipc.core.statistics``),
    so that ``arrowmm.dataset`` filters skip batches of files pyarrow or polars wrote; the
    schema, dictionaries and record batches stay exactly as they are (compressed ones too),
    and so does the footer's other custom metadata.  Other readers ignore the statistics.

    ``dest``: a path, written through a temporary renamed into place (a new one gets the
    source's permission bits, less the umask; an existing one keeps its own).  Writing over
    ``source`` itself needs ``in_place=True`` (then ``dest`` may be left out): the original
    stays intact until the new file is complete and fsync'd, and a crash leaves only a hidden
    temporary beside it.  An existing ``dest`` is locked first (the advisory lock
    ``append_file`` and ``repair`` take), so an append to it waits, and in place the source
    is read under that lock: no append is lost under the rename (``TimeoutError`` after
    ``lock_timeout`` seconds; None waits as long as it takes).  ``progress(batches done)``
    is called as batches are read.  An append interrupted is left out (the committed
    content is copied).

    Raises ``ArrowInvalid`` for input that is not an IPC file (a stream: ``arrowmm convert``
    or ``write_file`` rewrite one with statistics; Feather V1 likewise) or is damaged, and
    the path errors ``open`` raises (``FileNotFoundError``, ``PermissionError``...).

    Examples
    --------
    >>> import arrowmm, tempfile, os
    >>> tmp = tempfile.TemporaryDirectory()
    >>> src, dst = os.path.join(tmp.name, "a.arrow"), os.path.join(tmp.name, "b.arrow")
    >>> arrowmm.write_file(src, {"x": [1, 2, 3]}, statistics=False)
    >>> arrowmm.add_statistics(src, dst) == os.path.realpath(dst)
    True
    >>> arrowmm.dataset(dst).count_rows(filter=[("x", ">", 5)])
    0
    >>> tmp.cleanup()
    """
    if not isinstance(source, (str, os.PathLike)):
        raise ArrowInvalid(f"add_statistics: source must be a path, got {type(source).__name__}")
    src = os.fspath(source)
    if dest is None:
        if not in_place:
            raise ArrowInvalid(f"add_statistics({src!r}): give a destination path, or "
                               f"in_place=True to replace the file itself")
        dst = src
    else:
        if not isinstance(dest, (str, os.PathLike)):
            raise ArrowInvalid(f"add_statistics: dest must be a path, got {type(dest).__name__}")
        dst = os.fspath(dest)
        same = _same_file(src, dst)
        if same and not in_place:
            raise ArrowInvalid(f"add_statistics: {dst!r} is the source file itself; pass "
                               f"in_place=True to replace it")
        if in_place and not same:
            raise ArrowInvalid(f"add_statistics: in_place=True writes over the source, but "
                               f"dest {dst!r} is another file (leave dest out)")
    lock_fd = _lock_destination(dst, lock_timeout)
    try:
        return _add_statistics(src, dst, fsync, progress)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)  # (releases the lock, after the rename)


def _lock_destination(dst: str, timeout: Optional[float]) -> Optional[int]:
    """A descriptor holding the append lock on ``dst`` when it is an existing regular file
    (None when it does not exist yet or is not a regular file: nothing appends to it)."""
    try:
        if not os.path.isfile(dst):
            return None
        _, fd = open_locked(dst, timeout, flags=os.O_RDONLY,
                            holder="cannot add statistics: another process is appending to "
                                   "the file",
                            purpose="rewritten with statistics")
    except FileNotFoundError:
        return None  # (removed meanwhile: nothing to wait for)
    return fd


def _add_statistics(src: str, dst: str, fsync: bool, progress) -> str:
    region = file_region(src)
    if is_feather_v1(region):
        raise ArrowInvalid(f"{src}: a Feather V1 file has no IPC messages to keep as they are; "
                           f"'arrowmm convert {src} OUT.arrow --statistics' (or "
                           f"arrowmm.write_file) writes it as an IPC file with statistics")
    stats_id = new_statistics_id()
    with FileReader(region) as reader:
        if reader.footer.version < MetadataVersion.V5:
            raise ArrowInvalid(f"{src}: a metadata V4 file cannot carry statistics: they need "
                               f"custom metadata in its first record batch message, which "
                               f"Arrow C++ (pyarrow) refuses in V4 messages; 'arrowmm convert "
                               f"{src} OUT.arrow --statistics' rewrites it as V5 with them")
        docs = file_statistics(reader, progress)
        parts, blocks = _copied_messages(region, reader, stats_id)
        footer_metadata = {**(without_statistics(reader.footer.metadata) or {}),
                           **encode_file_statistics(reader.schema, docs, stats_id,
                                                   blocks["batches"])}
        footer = encode_footer(reader.schema, footer_blocks(blocks["dictionaries"]),
                               footer_blocks(blocks["batches"]), footer_metadata,
                               reader.footer.version, reader.features)
        target = atomic_target(dst, narrow_to=src)  # (a new dst: at most src's permissions)
        try:
            Sink(None, target.fd).write([*parts, footer, struct.pack("<i", len(footer)), MAGIC])
        except BaseException:
            target.abort()
            raise
        target.commit(fsync=fsync)
    return target.path


def _stamped_header(region: Region, offset: int, body_len: int, stats_id: str) -> bytes:
    """The first record batch's message header (framed, a multiple of 8 bytes long) with
    ``STAMP_KEY: stats_id`` added to its custom metadata: the rest of the header as it was."""
    record = read_message_at(region, offset, 0, expected_body_length=body_len).record
    h = record.header
    metadata = {**(without_statistics(record.metadata) or {}), STAMP_KEY: stats_id}
    flat = encode_batch_message(h.length, h.node_records.view("<i8").reshape(-1),
                                h.buffer_records.view("<i8").reshape(-1), record.body_length,
                                h.compression, h.variadic_counts, metadata,
                                version=record.version)
    pad = -(8 + len(flat)) % 8
    return b"\xff\xff\xff\xff" + struct.pack("<i", len(flat) + pad) + flat + b"\x00" * pad


def _copied_messages(region: Region, reader: FileReader, stats_id: str):
    """(parts to write after the magic, the blocks of the new footer): what lies between the
    magic and the first message (the schema message, as its writer wrote it), then every
    dictionary and record batch message of ``reader``'s footer as views of ``region``, in
    the order they lie in the file, each starting 8-byte aligned (zero padding after a
    message whose length is not a multiple of 8), then an end-of-stream marker."""
    footer_start = _footer_start(region, reader)
    found = []
    for kind, rows in (("dictionaries", reader.footer.dictionaries),
                       ("batches", reader.footer.record_batches)):
        for i, row in enumerate(_block_rows(rows)):
            found.append((row, kind, i))
    found.sort(key=lambda x: x[0][0])
    first = found[0][0][0] if found else footer_start
    if not 8 <= first <= footer_start:
        raise ArrowInvalid(f"{region.description}: the first message's block is at byte "
                           f"{first}, outside the file's messages (bytes 8 to {footer_start})")
    parts = [MAGIC, b"\x00\x00", region.view(8, first - 8)]
    pos = first
    blocks = {"dictionaries": {}, "batches": {}}
    for (offset, meta_len, body_len), kind, i in found:
        what = f"{region.description}: {'dictionary' if kind == 'dictionaries' else 'record'} " \
               f"batch {i} (block at byte {offset})"
        if meta_len <= 0 or body_len < 0 or meta_len > footer_start - offset or \
                body_len > footer_start - offset - meta_len:
            raise ArrowInvalid(f"{what}: block (offset={offset}, metaDataLength={meta_len}, "
                               f"bodyLength={body_len}) lies outside the file's messages "
                               f"(bytes 8 to {footer_start})")
        pad = -pos % 8
        if pad:
            parts.append(b"\x00" * pad)
            pos += pad
        if kind == "batches" and i == 0:  # the stamp: the header anew, the body as it is
            header = _stamped_header(region, offset, body_len, stats_id)
            parts += [header, region.view(offset + meta_len, body_len)]
            meta_len = len(header)
        else:
            parts.append(region.view(offset, meta_len + body_len))
        blocks[kind][i] = (pos, meta_len, body_len)
        pos += meta_len + body_len
    if found:  # (without messages, what was copied ends with the source's own marker)
        parts.append(_EOS)
    return parts, {kind: [done[i] for i in range(len(done))] for kind, done in blocks.items()}


def _block_rows(blocks) -> list:
    """A footer's Block vector as ``(offset, metaDataLength, bodyLength)`` ints (the metadata
    length read as the int32 it is: its high bytes are padding)."""
    return [(offset, (meta & 0xFFFFFFFF) - ((meta & 0x80000000) << 1), body)
            for offset, meta, body in flat_blocks(blocks).tolist()]


def _footer_start(region: Region, reader: FileReader) -> int:
    """Where the footer of ``reader``'s committed content starts (its messages end there)."""
    end = region.size - getattr(reader, "unfinished_bytes", 0)
    footer_len = struct.unpack_from("<i", region.view(end - 10, 4).to_bytes())[0]
    return end - 10 - footer_len
