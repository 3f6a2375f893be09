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
never to one renamed over it since.
"""
from __future__ import annotations

import mmap
import os
from typing import Callable

from ..._core._region import Region
from ...errors import ArrowInvalid

__all__ = ["FileChanged", "map_file", "mapped_file", "tail_reader", "TailRead"]

#: ``read(offset, length) -> bytes`` of exactly ``length`` bytes (else ``FileChanged``), and
#: ``read.close()`` when done
TailRead = Callable[[int, int], bytes]


class FileChanged(ArrowInvalid):
    """The file became shorter than its mapping while it was being opened (another process
    cut an unfinished append): the open starts again with a new mapping."""


class _FileMap(mmap.mmap):
    """An ``mmap`` that knows the file it maps (``path``, ``device``, ``inode``)."""

    path = ""
    device = inode = -1


def map_file(path) -> Region:
    """``path`` mapped read-only as a ``Region`` (an empty file gives an empty region), the
    mapping remembering its file for ``tail_reader``."""
    fspath = os.fspath(path)
    with open(fspath, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size == 0:
            return Region(b"", description=str(fspath))
        mapping = _FileMap(f.fileno(), 0, access=mmap.ACCESS_READ)
    mapping.path, mapping.device, mapping.inode = fspath, st.st_dev, st.st_ino
    return Region(mapping, description=str(fspath))


def mapped_file(region: Region):
    """The ``_FileMap`` behind ``region`` when it maps a whole file through ``map_file``."""
    owner = region.owner
    if isinstance(owner, _FileMap) and len(owner) == region.size:
        return owner
    return None


def tail_reader(region: Region) -> TailRead:
    """How to read ``region``'s bytes where another process may cut them: positioned reads of
    the mapped file when ``region`` maps one (and the path still names it), else the bytes of
    the region itself (a buffer cannot shrink under its reader)."""
    mapping = mapped_file(region)
    if mapping is not None:
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
