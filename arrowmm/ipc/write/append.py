"""Adding record batches to an existing IPC file: ``append_file(path)``.

Why this layout: readers (arrowmm, pyarrow, polars) may have the file open or
mapped while it grows, so no byte of it is ever changed or cut.  The new
messages go after the old trailer (padded to 8 bytes), followed by an
end-of-stream marker and a new footer whose Blocks list the old batches and
the new ones; readers find a file's footer from its last bytes and read
batches by offset, so the old footer left in the middle is never looked at
(``arrowmm.ipc.read.trailer`` describes the layout).  The cost is the appended
bytes plus one footer (24 bytes per batch in the file, and the statistics):
never a copy of the old data.

Crash safety, in order:

1. ``fcntl.flock(LOCK_EX)`` on the file: appenders take turns (``lock_timeout``).
2. The file is opened as ``FileReader`` opens it: a tail left by an interrupted
   append is found (``FileReader.unfinished_bytes``) and cut away
   (``ftruncate`` to the committed end: those bytes were never part of a valid
   file, and no reader uses them; readers opening meanwhile read the tail with
   ``pread``, so the cut cannot kill them with SIGBUS).
3. The append marker (``arrowmm.ipc.read.trailer``): "an append from the old end is in
   progress", with the old footer's checksum; fsync.
4. Batches, end-of-stream and the new footer are written, then fsync'd.
5. Only then the 10-byte trailer (footer length, ``ARROW1``), then fsync; then the
   marker's state byte becomes "committed".

A SIGKILL (or power loss) before step 5 completes leaves the old file plus an
unfinished tail that its marker announces: arrowmm's readers open the committed
content; other readers (pyarrow, polars) look only at the last bytes and refuse the
file (``Not an Arrow file``) until the next ``append_file``,
``cut_unfinished_tail`` or ``arrowmm.repair(path, path)`` cuts the tail.  After step
5 every reader sees the new content.  A failed or aborted append cuts its own bytes
at once (the marker too, when the disk fills while it goes in), until its trailer is whole:
from then on the append is committed (readers may hold its batches), and an error in the
last steps leaves it.  Any other damaged tail is an error for every reader
(``docs/recovery.md``).
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import struct
import time
from typing import Optional

from ..._core._region import Region
from ...errors import ArrowInvalid
from ...format import MetadataVersion, encode_footer
from ..core.files import MAGIC, Sink, footer_blocks
from ..core.object_store import local_file_url, refuse_append
from ..read.file_reader import FileReader
from ..core.statistics import decode_file_statistics, encode_file_statistics, without_statistics
from ..read.trailer import COMMITTED, STATE_OFFSET, aligned, append_marker, footer_checksum
from .writer import FileWriter
from ...interop.cast import schema_difference  # (named here before, in ipc's append module)

__all__ = ["append_file", "AppendWriter", "cut_unfinished_tail", "schema_difference", "lock_file",
           "open_locked", "same_file"]

_LOCK_POLL = 0.02  # seconds between tries while waiting for another appender


def lock_file(fd: int, path: str, timeout: Optional[float],
              holder: str = "another process is appending to the file") -> None:
    """Take the exclusive advisory lock on ``fd``: wait for it (``timeout`` None), or up to
    ``timeout`` seconds, then raise ``TimeoutError`` naming the file.

    Appenders and in-place rewrites (``repair(path, path)``) take this same lock, so that a
    rewrite never renames a new file over one an appender is still writing (its batches
    would go to the replaced inode and be lost without an error)."""
    if timeout is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + max(0.0, timeout)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(errno.EWOULDBLOCK, f"{holder} (its lock was not released "
                                   f"within {timeout:g} s)",
                                   path) from None
            time.sleep(_LOCK_POLL)


def same_file(fd: int, path: str) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (same device and inode): False
    once another process renamed a new file over it (or removed it)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def open_locked(path, timeout: Optional[float], *, flags: int = os.O_RDWR,
                holder: str = "another process is appending to the file",
                purpose: str = "appended to"):
    """(real path, fd open with ``flags`` and locked) for an existing regular file.

    The lock is taken on the inode the path names *after* the lock is granted: when a
    rewrite replaced the file while this waited for it, the new file is opened and locked
    instead (else this would lock, and write to, a file no longer under the path)."""
    real = os.path.realpath(os.path.abspath(os.fspath(path)))
    for _ in range(100):
        fd = os.open(real, flags | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise ArrowInvalid(f"{real}: not a regular file; only an IPC file on disk can be "
                                   f"{purpose}")
            lock_file(fd, real, timeout, holder)
            if same_file(fd, real):
                return real, fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced while waiting: lock the file the path names now
    raise ArrowInvalid(f"{real}: the file kept being replaced while waiting for its lock")


def _open_locked(path, timeout):
    return open_locked(path, timeout)


def _map(fd: int, path: str) -> Region:
    """The file mapped through its own descriptor: a mapping keeps its descriptor (a dup) open
    as long as arrays use it, and the lock on ``fd``'s open file would live as long."""
    st = os.fstat(fd)
    if st.st_size == 0:
        raise ArrowInvalid(f"{path}: empty file, not an Arrow IPC file (new_file creates one)")
    region = Region.from_path(path)
    if (os.stat(path).st_ino, os.stat(path).st_dev) != (st.st_ino, st.st_dev):
        raise ArrowInvalid(f"{path}: the file was replaced while opening it for appending")
    return region


def cut_unfinished_tail(path, *, lock_timeout: Optional[float] = None) -> int:
    """Cut what an interrupted append left after the file's committed end; return the number
    of bytes cut (0 for a complete file).  Raises ``ArrowInvalid`` when the tail is damage
    rather than an append its marker announces (then ``arrowmm.repair`` salvages what it
    can: ``docs/recovery.md``)."""
    real, fd = _open_locked(path, lock_timeout)
    try:
        with FileReader(_map(fd, real)) as reader:
            cut = reader.unfinished_bytes
            end = os.fstat(fd).st_size - cut
        if cut:
            os.ftruncate(fd, end)
            os.fsync(fd)
        return cut
    finally:
        os.close(fd)  # (closing the descriptor releases the lock)


class AppendWriter(FileWriter):
    """A ``FileWriter`` that adds record batches to an existing IPC file (``append_file``).

    ``num_record_batches`` counts the batches this writer added; ``existing_batches`` those
    the file held before.
    """

    _caller = "append_file"  # (the function whose options an error names)

    def __init__(self, path, *, compression=None, compression_level=None, alignment=64,
                 emit_dictionary_deltas=False, statistics=None, fsync=True,
                 lock_timeout: Optional[float] = None, cast=False):
        real, fd = _open_locked(path, lock_timeout)
        self._fd = fd
        self._path = real
        self._pid = os.getpid()  # (a forked child's copy of the writer never cuts the file)
        try:
            reader = FileReader(_map(fd, real))
            self._reader = reader
            self.unfinished_bytes = reader.unfinished_bytes
            self._old_end = os.fstat(fd).st_size - reader.unfinished_bytes
            self._old_footer_crc = footer_checksum(
                reader._region.view(reader._footer_offset,
                                    self._old_end - reader._footer_offset).to_bytes())
            footer = reader.footer
            n_old = reader.num_record_batches
            doc = decode_file_statistics(footer.metadata, lambda: reader.batch_metadata(0)
                                         if n_old else None, footer.record_batches,
                                         reader.schema)
            old_meta = dict(without_statistics(footer.metadata) or {})
            has_stats = bool(doc and isinstance(doc.get("batches"), list)
                             and len(doc["batches"]) == n_old
                             and doc.get("columns") == reader.schema.names)
            if statistics is None:  # (none in a metadata V4 file: see ``new_file``)
                statistics = (has_stats or n_old == 0) and footer.version >= MetadataVersion.V5
            elif statistics and not has_stats and n_old:
                raise ArrowInvalid(
                    f"{real}: statistics=True, but the file has no arrowmm statistics for its "
                    f"{n_old} record batch(es) that check (written by another writer, without "
                    f"statistics or by an older arrowmm, or statistics damaged or copied "
                    f"from another file); computing them reads the whole file once: "
                    f"arrowmm.add_statistics(path) (arrowmm convert --statistics), or append "
                    f"without statistics")
            existing = reader.dictionaries() if len(footer.dictionaries) else {}
            old_batches = [(o, m & 0xFFFFFFFF, b) for o, m, b in footer.record_batches.tolist()]
            old_dicts = [(o, m & 0xFFFFFFFF, b) for o, m, b in footer.dictionaries.tolist()]
            self.existing_batches = n_old
            super().__init__(real, reader.schema, compression=compression,
                             compression_level=compression_level, alignment=alignment,
                             emit_dictionary_deltas=emit_dictionary_deltas,
                             statistics=statistics, fsync=fsync, cast=cast,
                             metadata_version=_version_name(footer.version),
                             endianness=reader.schema.endianness)  # (the file's order)
        except BaseException:
            if self._marker_at is None:
                self._release()
            else:  # (the disk filled, or Ctrl-C, while the marker went in: the file as it was)
                self._discard()
            raise
        self.features = tuple(sorted(set(self.features) | set(reader.features)))
        self._footer_metadata = old_meta or None
        self._written_dicts.update(existing)
        self._dict_blocks[:0] = old_dicts
        self._batch_blocks[:0] = old_batches
        if self._statistics is not None and has_stats:
            self._statistics[:0] = doc["batches"]
            self._statistics_id = doc["id"]  # (batch 0 carries it already)

    @property
    def path(self) -> str:
        """The path of the file being appended to."""
        return self._path

    _whose = "the file's"
    _marker_at = None  # where the append marker starts, once it is being written

    def _coerce(self, batch):
        try:
            return super()._coerce(batch)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{self._path}: {exc}") from exc

    def _open(self, sink):
        fd = self._fd
        size = os.fstat(fd).st_size
        if size > self._old_end:  # an interrupted append's bytes: never part of a valid file
            os.ftruncate(fd, self._old_end)
        start = aligned(self._old_end)
        os.lseek(fd, self._old_end, os.SEEK_SET)
        self._sink = Sink(None, fd, self._path)
        self._sink.position = self._old_end
        self._target = None
        # the marker first: until the new trailer, it is what says the bytes after the old
        # end are an append in progress, not damage (``arrowmm.ipc.read.trailer``)
        self._marker_at = start
        self._put([b"\x00" * (start - self._old_end),
                   append_marker(self._old_end, self._old_footer_crc)])
        if self._fsync:
            os.fsync(fd)

    def _describe(self) -> str:
        return repr(self._path)

    def _finish(self):
        if self.num_record_batches == 0:
            self._discard()  # nothing appended: no new generation (the file is as it was)
            return
        if not same_file(self._fd, self._path):
            raise ArrowInvalid(
                f"{self._path}: the file was replaced (renamed over or removed) while appending "
                f"to it, by a writer that did not take the append lock; the "
                f"{self.num_record_batches} batch(es) written went to the replaced file and "
                f"are not in {self._path}")
        self._put([self._encoder.eos()])
        footer_metadata = self._footer_metadata
        if self._statistics is not None:
            footer_metadata = {**(footer_metadata or {}),
                               **encode_file_statistics(self.schema, self._statistics,
                                                        self._statistics_id, self._batch_blocks)}
        footer = encode_footer(self.schema, footer_blocks(self._dict_blocks),
                               footer_blocks(self._batch_blocks), footer_metadata,
                               self._version, self.features)
        self._put([footer])
        if self._fsync:  # the trailer must not reach the disk before what it points at
            os.fsync(self._fd)
        self._trailer_end = self._sink.position + 4 + len(MAGIC)
        self._put([struct.pack("<i", len(footer)), MAGIC])
        if self._fsync:
            os.fsync(self._fd)
        os.pwrite(self._fd, bytes([COMMITTED]), self._marker_at + STATE_OFFSET)
        self._release()

    _trailer_end = None  # where the new trailer ends, once it is being written

    def _discard(self) -> None:
        """Cut what this writer wrote (the file is as it was) and release the file.

        Once the whole new trailer is in the file, the append is committed: readers may
        already hold its batches, so an error after it (Ctrl-C in its fsync, a failed state
        byte) only releases the file (the marker left "in progress" is read as stale).  In a
        process forked from the appender (its copy of the writer finalized when it exits) this
        only releases: the append is the parent's, still being written."""
        if self._fd is None:
            return
        try:
            if os.getpid() == self._pid and (self._trailer_end is None or
                                             os.fstat(self._fd).st_size < self._trailer_end):
                os.ftruncate(self._fd, self._old_end)
        finally:
            self._release()

    def _release(self) -> None:
        fd, self._fd = getattr(self, "_fd", None), None
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.close()
        if fd is not None:
            os.close(fd)  # (releases the lock)


def _version_name(version: int) -> str:
    return "V4" if version == 3 else "V5"


def append_file(path, *, compression=None, **options) -> AppendWriter:
    """A ``FileWriter`` that adds record batches to the IPC file at ``path``.

    Batches must have the file's schema (else ``ArrowInvalid`` saying how they differ).
    Dictionaries follow the file rules: a batch may reuse a dictionary the file holds; one
    that grew is written as a delta only with ``emit_dictionary_deltas=True``; one that
    changed is refused (a file cannot replace a dictionary).

    The old bytes are never changed: readers that have the file open or mapped keep their
    data, and a crash at any point leaves a file arrowmm opens with the old content or the
    new one (see the module docstring for what other readers see).  The cost grows with the
    appended bytes, not with the file's size.  The footer's custom metadata is kept;
    arrowmm statistics, when the file has them, are extended to the new batches.

    Parameters
    ----------
    path : str or os.PathLike
        An existing IPC file (symlinks are followed; its mode, owner and inode stay).
    compression : {None, "lz4", "zstd"}
        Codec of the new batches (a file may mix compressed and uncompressed batches).
    **options
        ``compression_level``, ``alignment``, ``emit_dictionary_deltas`` (as ``new_file``);
        ``statistics`` (None: as the file; True requires the file to have them);
        ``cast`` (True: batches are cast to the file's types where that is safe, e.g. a
        pandas categorical to the file's dictionary of other index and value types, encoded
        against the file's dictionary);
        ``fsync`` (True: data, then trailer, each fsync'd); ``lock_timeout`` (None: wait
        for another appender; seconds: then ``TimeoutError``).

    Examples
    --------
    >>> import arrowmm, tempfile, os
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "log.arrow")
    >>> with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())])) as w:
    ...     w.write({"x": [1, 2]})
    >>> with arrowmm.append_file(path) as w:
    ...     w.write({"x": [3]})
    >>> with arrowmm.open_file(path) as r:
    ...     r.read_all().column("x").to_pylist()
    [1, 2, 3]
    >>> tmp.cleanup()

    On an object store (a URL such as ``s3://bucket/key.arrow``, or ``filesystem=``) it raises
    ``ObjectStoreAppendError`` (an ``ArrowNotImplementedError``): objects are immutable; write
    a new file into a dataset folder instead.
    """
    refuse_append(path, options.pop("filesystem", None))
    path = local_file_url(path)
    return AppendWriter(path, compression=compression, **options)
