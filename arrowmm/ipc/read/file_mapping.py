"""A file mapped read-only, and positioned reads of the same file for bytes another process may cut.

Why: touching a mapped page past the end of a file that another process has
truncated kills the process with SIGBUS.  arrowmm's own tools cut only what an
interrupted append left after a file's committed end (``arrowmm.ipc.write.append``),
never committed bytes; but a reader that opens the file at that moment does not
yet know where the committed end is, and reads the tail to find out.  So the
open reads the tail through ``pread`` (``tail_reader``): a cut shows as a short
read, which ``FileChanged`` reports and the reader answers by mapping the file
again.  Once the committed end is known, the mapping is used only below it.

``map_file(path)`` maps like ``Region.from_path`` and remembers which file (path,
device, inode) it mapped, so that the positioned reads go to that same file and
never to one renamed over it since.  ``map_file(path, ends=True)`` (what
``open_file`` asks for) also reads the file's first bytes and its last ``ENDS_TAIL``
bytes with ``pread`` on the descriptor it maps, before closing it: the open's first
``tail_reader`` takes them, so the magic, the trailer and a footer of up to that size
are read without another ``open`` of the path and without touching (faulting in) the
mapping's first and last pages, which a schema-only open never needs (a 100-column file of
1,000 batches: 29 pages faulted in before, none now; with the rest of that change, its open
and schema took 0.58-0.72x pyarrow's time, 0.97-1.12x before).
"""
from __future__ import annotations

import errno
import fcntl
import mmap
import os
import stat
import time
from typing import Callable, Optional

from ..._core._region import BufferView, Region
from ...errors import ArrowInvalid

__all__ = ["FileChanged", "map_file", "mapped_file", "mapped_file_identity", "mapping_stale",
           "appender_holds", "changes_soon", "tail_reader", "TailRead", "ENDS_TAIL",
           "HEAD_BYTES", "first_bytes_of", "drop_ends"]

#: How many bytes of a file's end ``map_file(path, ends=True)`` reads with the mapping (a
#: trailer and a footer of a few hundred columns or a thousand batches).
ENDS_TAIL = 64 * 1024
#: How many bytes of a file's start it reads (the longest magic sniffed when opening).
HEAD_BYTES = 8

#: ``read(offset, length) -> bytes`` of exactly ``length`` bytes (else ``FileChanged``), and
#: ``read.close()`` when done
TailRead = Callable[[int, int], bytes]


class FileChanged(ArrowInvalid):
    """The file became shorter than its mapping while it was being opened (another process
    cut an unfinished append): the open starts again with a new mapping."""


class _FileMap(mmap.mmap):
    """An ``mmap`` that knows the file it maps (``path``, ``device``, ``inode``), and, mapped
    with ``ends``, the bytes its open reads first (``head``; ``tail`` from ``tail_start``),
    until the first ``tail_reader`` takes them."""

    path = ""
    device = inode = mtime_ns = ctime_ns = -1
    head = tail = None
    tail_start = 0


def map_file(path, ends: bool = False) -> Region:
    """``path`` mapped read-only as a ``Region`` (an empty file gives an empty region), the
    mapping remembering its file for ``tail_reader``; with ``ends``, the file's first
    ``HEAD_BYTES`` and last ``ENDS_TAIL`` bytes read by ``pread`` on the same descriptor,
    for the open (``first_bytes_of``, the first ``tail_reader``), and a FIFO, a character
    device (``/dev/stdin`` on a pipe) or a socket read whole instead of mapped (as
    ``reader_base.file_region`` reads them: they cannot be mapped)."""
    fspath = os.fspath(path)
    fd = os.open(fspath, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):  # (what open() raises: os.open opens a directory)
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), fspath)
        if ends and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or
                     stat.S_ISSOCK(st.st_mode)):
            with open(fd, "rb", closefd=False) as f:
                return Region(_read_whole_if_arrow(f), description=str(fspath))
        size = st.st_size
        if size == 0:
            return Region(b"", description=str(fspath))
        mapping = _FileMap(fd, 0, access=mmap.ACCESS_READ)
        if ends:
            n = min(size, ENDS_TAIL)
            tail = os.pread(fd, n, size - n)
            if len(tail) == n:  # (else cut since the fstat: the reads go to the file, and see it)
                mapping.tail, mapping.tail_start = tail, size - n
                mapping.head = tail[:HEAD_BYTES] if n == size else os.pread(fd, HEAD_BYTES, 0)
    finally:
        os.close(fd)
    mapping.path, mapping.device, mapping.inode = fspath, st.st_dev, st.st_ino
    mapping.mtime_ns, mapping.ctime_ns = st.st_mtime_ns, st.st_ctime_ns
    return Region(mapping, description=str(fspath))


def _read_whole_if_arrow(f) -> bytes:
    """What a pipe or device holds, read to its end when it begins as an IPC file
    (``ARROW1``) or a Feather V1 file (``FEA1``); otherwise only its first bytes, which the
    open refuses as no Arrow file: a device that never ends (``/dev/zero``) is not read until
    memory runs out."""
    head = f.read(6)
    if not (head.startswith(b"ARROW1") or head.startswith(b"FEA1")):
        return head
    return head + f.read()


def drop_ends(region: Region) -> None:
    """Let go of the ends ``map_file(ends=True)`` read, when no open will take them (a file
    that turned out not to be an IPC file: they would live as long as the mapping)."""
    owner = region.owner
    if type(owner) is _FileMap:
        owner.tail = owner.head = None


def first_bytes_of(region: Region, n: int) -> bytes:
    """The first ``n`` (at most ``HEAD_BYTES``) bytes of ``region`` (fewer when it is
    shorter): those ``map_file(ends=True)`` read, else the region's own."""
    owner = region.owner
    head = owner.head if type(owner) is _FileMap else None
    if head is not None and len(head) >= min(n, region.size) and len(owner) == region.size:
        return head[:n]
    return region.view(0, min(n, region.size)).to_bytes()


def mapped_file(region: Region):
    """The ``_FileMap`` behind ``region`` when it maps a whole file through ``map_file``."""
    owner = region.owner
    if isinstance(owner, _FileMap) and len(owner) == region.size:
        return owner
    return None


def changes_soon(now: Callable[[], tuple], then: tuple, patience: float) -> bool:
    """Whether ``now()`` (a file's size, or size and identity, from a fresh ``stat``; an
    ``OSError`` counts as a change) differs from ``then``, now or within ``patience`` seconds
    (``trailer.marker_wait``: an append marker seen half written)."""
    waited, pause = 0.0, 0.0005
    while True:
        try:
            if now() != then:
                return True
        except OSError:
            return True
        if waited >= patience:
            return False
        time.sleep(pause)
        waited, pause = waited + pause, min(pause * 2, 0.01)


def appender_holds(path) -> bool:
    """Whether another process holds the append lock (``flock(LOCK_EX)``, taken by every
    ``append_file`` before it writes anything) on the file at ``path`` (a path, or a descriptor:
    opened again through ``/proc/self/fd``, so this process's own locks are not touched).  A
    file nobody appends to cannot be in the middle of writing a marker: its end is not waited
    for.  When the lock cannot be tried, True (wait, as before)."""
    target = f"/proc/self/fd/{path}" if isinstance(path, int) else path
    try:
        fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)  # (releases the shared lock taken, if it was)
    return False


def mapping_stale(region: Region, patience: float = 0.0) -> bool:
    """Whether the file mapped whole behind ``region`` has, now or within ``patience`` seconds
    (``changes_soon``), another size or inode than the one mapped (False when ``region`` maps
    no whole file)."""
    mapping = mapped_file(region)
    if mapping is None:
        return False

    def now():
        st = os.stat(mapping.path)
        return st.st_size, st.st_dev, st.st_ino

    if patience and not appender_holds(mapping.path):
        patience = 0.0
    return changes_soon(now, (len(mapping), mapping.device, mapping.inode), patience)


def mapped_file_identity(region: Region) -> Optional[tuple]:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of the file mapped behind ``region`` (the
    whole file, also when ``region`` is a view of its first bytes: a file's committed part),
    or None when it maps no file.  A file rewritten in place keeps its inode and may keep its
    size (pyarrow's ``new_file(path)`` truncates and writes the same inode): its times tell it
    (the change time cannot be set back)."""
    owner = region.owner
    if isinstance(owner, BufferView):
        owner = owner.region.owner
    if not isinstance(owner, _FileMap):
        return None
    return (owner.device, owner.inode, len(owner), owner.mtime_ns, owner.ctime_ns)


def tail_reader(region: Region) -> TailRead:
    """How to read ``region``'s bytes where another process may cut them: positioned reads of
    the mapped file when ``region`` maps one (and the path still names it), else the bytes of
    the region itself (a buffer cannot shrink under its reader)."""
    mapping = mapped_file(region)
    if mapping is not None:
        tail = mapping.tail
        if tail is not None:  # (read with the mapping: taken once, by the open)
            mapping.tail = None
            return _EndsTail(tail, mapping.tail_start, mapping.head, region)
        try:
            fd = os.open(mapping.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            fd = -1
        if fd >= 0:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (mapping.device, mapping.inode):
                return _PreadTail(fd, region.size, region.description)
            os.close(fd)  # (replaced by a rename: nothing of ours cuts the file mapped here)

    return _RegionTail(region)


class _EndsTail:
    """The bytes ``map_file(ends=True)`` read: the file's ``head`` and its bytes from
    ``start`` on (``tail``); a read elsewhere goes to the file (``tail_reader``), opened for
    the first such read."""

    __slots__ = ("tail", "start", "head", "region", "_file")

    def __init__(self, tail: bytes, start: int, head: bytes, region: Region):
        self.tail, self.start, self.head, self.region = tail, start, head, region
        self._file = None

    def __call__(self, offset: int, length: int) -> bytes:
        at = offset - self.start
        if at >= 0 and length >= 0 and length <= len(self.tail) - at:
            return self.tail[at:at + length]
        if offset == 0 and 0 <= length <= len(self.head):
            return self.head[:length]
        read = self._file
        if read is None:
            read = self._file = tail_reader(self.region)  # (the ends are taken: the file)
        return read(offset, length)

    def close(self) -> None:
        read, self._file = self._file, None
        if read is not None:
            read.close()


class _RegionTail:
    """The bytes of a region that cannot shrink (a buffer, a mapping no tool of ours cuts)."""

    __slots__ = ("region",)

    def __init__(self, region: Region):
        self.region = region

    def __call__(self, offset: int, length: int) -> bytes:
        return self.region.view(offset, length).to_bytes()

    def close(self) -> None:
        pass


class _PreadTail:
    """``pread`` of a file descriptor, closed with the object; a short read is ``FileChanged``."""

    __slots__ = ("fd", "size", "name", "__weakref__")

    def __init__(self, fd: int, size: int, name: str):
        self.fd, self.size, self.name = fd, size, name

    def __call__(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or length > self.size - offset:
            raise ArrowInvalid(f"{self.name}: bytes [{offset}, {offset}+{length}) lie outside "
                               f"the {self.size}-byte file")
        data = os.pread(self.fd, length, offset)
        if len(data) != length:
            raise FileChanged(f"{self.name}: the file became shorter ({offset + len(data)} "
                              f"bytes or fewer) than its mapping ({self.size} bytes) while it "
                              f"was being opened")
        return data

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    __del__ = close
