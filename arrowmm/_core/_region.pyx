"""Regions of bytes and checked views into them.

A ``Region`` owns one ``Py_buffer`` over a memory-mapped file, a shared-memory
segment or any buffer-protocol object, or (``region_from_pointer``) borrows
foreign memory imported through the C data interface, holding the object that
releases it.  It is the only place where a number
read from a file becomes a pointer: ``Region.view`` and ``BufferView.slice``
check sign and overflow-safe bounds before a ``BufferView`` is formed.

Every ``BufferView`` holds its ``Region``, and every numpy array or
memoryview made from a ``BufferView`` holds the view, so memory stays mapped
for as long as anything points into it, whatever happens to the reader.
"""
import mmap as _mmap
import os

import numpy as np

from cpython.buffer cimport (
    PyBUF_SIMPLE,
    PyBUF_WRITABLE,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
cimport cython
from libc.stdint cimport int64_t, uint8_t, uintptr_t
from arrowmm._core._buffer cimport fill_byte_buffer

from arrowmm.errors import ArrowInvalid

__all__ = ["Region", "BufferView", "empty_view", "as_view"]


cdef class Region:
    """Bytes the library reads from, kept alive while anything views them.

    Parameters
    ----------
    obj : buffer-protocol object
        ``bytes``, ``bytearray``, ``memoryview``, ``mmap.mmap``, a C-contiguous
        numpy array, ...  Used without copying.
    description : str, optional
        What the bytes are (a path, "buffer"), used in error messages.

    Examples
    --------
    >>> r = Region(b"abcdefgh")
    >>> bytes(r.view(2, 3))
    b'cde'
    """

    def __cinit__(self, *args, **kwargs):
        self._has_view = False

    def __init__(self, obj, description=None):
        if self._has_view or self.owner is not None:
            raise ArrowInvalid("a Region is initialised once")
        try:
            PyObject_GetBuffer(obj, &self._view, PyBUF_SIMPLE)
        except (BufferError, TypeError) as exc:
            raise ArrowInvalid(
                f"expected a contiguous buffer-protocol object or a path, "
                f"got {type(obj).__name__}: {exc}") from None
        self._has_view = True
        self.ptr = <const uint8_t*>self._view.buf
        self.size = self._view.len
        self.owner = obj
        self.description = description if description is not None else type(obj).__name__

    def __dealloc__(self):
        if self._has_view:
            PyBuffer_Release(&self._view)
            self._has_view = False

    @staticmethod
    def from_path(path):
        """Map a file read-only.  An empty file gives an empty region."""
        fspath = os.fspath(path)
        with open(fspath, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return Region(b"", description=str(fspath))
            mapping = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
        return Region(mapping, description=str(fspath))

    @property
    def address(self):
        """Address of the first byte (for zero-copy checks)."""
        return <uintptr_t>self.ptr

    def __len__(self):
        return self.size

    def __repr__(self):
        return f"<arrowmm.Region {self.description!r} size={self.size}>"

    def mark_shared(self, str name not None):
        """Record that these bytes are the named shared-memory segment ``name``.

        Set once, by ``arrowmm.shm`` when it maps a segment: arrays, batches
        and readers over this Region then pickle by that name instead of by
        value.  ``shared_name`` is None for every other Region.
        """
        if self.shared_name is not None and self.shared_name != name:
            raise ArrowInvalid(f"region is already the shared segment {self.shared_name!r}, "
                               f"not {name!r}")
        self.shared_name = name

    cpdef BufferView view(self, int64_t offset, int64_t length, str what="buffer"):
        """A view of ``length`` bytes at ``offset``, checked against the region.

        Raises ``ArrowInvalid`` naming ``what`` if the range is negative or
        does not lie inside the region.
        """
        if offset < 0 or length < 0:
            raise ArrowInvalid(
                f"{what}: negative {'offset' if offset < 0 else 'length'} "
                f"(offset={offset}, length={length})")
        if offset > self.size or length > self.size - offset:
            raise ArrowInvalid(
                f"{what}: bytes [{offset}, {offset}+{length}) lie outside the "
                f"{self.size}-byte {self.description}")
        cdef BufferView v = BufferView.__new__(BufferView)
        v.region = self
        v.ptr = self.ptr + offset
        v.offset = offset
        v.size = length
        return v


cdef Region region_from_pointer(const uint8_t* ptr, Py_ssize_t size, object owner,
                                str description):
    """A Region over ``size`` bytes at ``ptr`` that some other producer owns.

    Used for memory imported through the Arrow C data interface: no
    ``Py_buffer`` is held (``_has_view`` stays False); ``owner`` is the object
    whose lifetime keeps ``ptr`` valid (it releases the foreign memory when it
    is collected), and the Region holds it.
    """
    if size < 0:
        raise ArrowInvalid(f"{description}: negative size {size}")
    if ptr == NULL and size != 0:
        raise ArrowInvalid(f"{description}: NULL pointer for {size} bytes")
    cdef Region r = Region.__new__(Region)
    r.ptr = ptr
    r.size = size
    r.owner = owner
    r.description = description
    return r


@cython.no_gc
cdef class BufferView:
    """A read-only range of a ``Region``; exposes the buffer protocol.

    Not tracked by the cyclic garbage collector (``no_gc``): a view refers only to its
    ``Region``, which never refers back to a view, so a view is never part of a cycle of
    arrowmm's making; and a wide batch makes one or two views per column, which the
    collector otherwise traversed on every pass (with 50 batches of 100 columns alive, about
    a third of the time of taking each column to numpy).  The tuples of buffers that hold only
    views and None are then untracked by CPython too.

    Only ``Region.view`` and ``BufferView.slice`` make these, after checking
    bounds.  ``address`` and ``size`` serve zero-copy assertions and the C
    data interface.
    """

    def __cinit__(self):
        self._exports = 0

    @property
    def address(self):
        return <uintptr_t>self.ptr

    def __len__(self):
        return self.size

    def __repr__(self):
        return f"<arrowmm.BufferView size={self.size} at {self.offset} of {self.region!r}>"

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        if flags & PyBUF_WRITABLE:
            raise BufferError("arrowmm buffers are read-only")
        fill_byte_buffer(buffer, self, <void*>self.ptr, self.size, 1, flags, self._shape,
                         self._strides)
        self._exports += 1

    def __releasebuffer__(self, Py_buffer* buffer):
        self._exports -= 1

    cpdef BufferView slice(self, int64_t offset, int64_t length, str what="buffer"):
        """A checked sub-range of this view."""
        if offset < 0 or length < 0 or offset > self.size or length > self.size - offset:
            raise ArrowInvalid(
                f"{what}: bytes [{offset}, {offset}+{length}) lie outside a "
                f"{self.size}-byte buffer")
        cdef BufferView v = BufferView.__new__(BufferView)
        v.region = self.region
        v.ptr = self.ptr + offset
        v.offset = self.offset + offset
        v.size = length
        return v

    def is_aligned(self, int alignment):
        """True when the first byte sits at a multiple of ``alignment``."""
        return alignment <= 1 or (<uintptr_t>self.ptr) % alignment == 0

    def to_bytes(self):
        """A copy of the bytes."""
        return (<const char*>self.ptr)[:self.size]

    def copy(self):
        """A view over a fresh, 64-byte aligned copy of these bytes."""
        return as_view(self, copy=True)

    def __eq__(self, other):
        if not isinstance(other, BufferView):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    def __hash__(self):
        return hash(self.to_bytes())


def _aligned_empty(Py_ssize_t nbytes):
    """A writable uint8 numpy array whose data is 64-byte aligned."""
    raw = np.empty(nbytes + 64, dtype=np.uint8)
    shift = (-raw.ctypes.data) % 64
    return raw[shift:shift + nbytes]


def as_view(obj, bint copy=False, description=None):
    """A ``BufferView`` over all of ``obj`` (a buffer-protocol object).

    With ``copy=True`` the bytes are first copied to a fresh 64-byte aligned
    array (used for misaligned, byte-swapped or decompressed buffers).
    """
    if copy:
        src = memoryview(obj).cast("B")
        out = _aligned_empty(len(src))
        out[:] = np.frombuffer(src, dtype=np.uint8)
        obj = out
    region = Region(obj, description=description)
    return region.view(0, region.size, "buffer")


_EMPTY = Region(_aligned_empty(64), description="empty buffer").view(0, 0)


def empty_view():
    """A zero-length view with a valid, 64-byte aligned, non-NULL address."""
    return _EMPTY
