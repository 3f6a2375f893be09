"""Reusable memory for decoded buffers.

Decompressing into fresh memory costs a page fault (and the kernel zeroing a
page) per 4 KiB written: measured, that is as much time as LZ4 decoding itself.
Allocators like jemalloc keep freed pages mapped and hand them out again; glibc
gives big allocations fresh mappings each time.  A ``Block`` is ``size`` bytes
of an anonymous mapping that, when the last reference to it goes (every numpy
array or view over it holds one, through the buffer protocol), returns to a
small cache instead of being unmapped; the next block of the same size class
reuses its (already faulted) pages.

The cache is bounded (``cache_limit``) and forgets blocks idle for longer than
two seconds (checked whenever a block is taken or returned), so a program
that stops reading does not keep the memory for long.
"""
from libc.stdint cimport uint8_t, uintptr_t
from posix.mman cimport (MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, PROT_READ, PROT_WRITE,
                         mmap, munmap)
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from arrowmm._core._buffer cimport fill_byte_buffer

import numpy as np

__all__ = ["Block", "empty", "cache_limit", "cache_info", "clear_cache", "MIN_SIZE"]

cdef extern from "sys/mman.h" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE

#: Smaller outputs come from numpy (malloc reuses small heap chunks well by itself).
MIN_SIZE = 1 << 16
DEF _SLOTS = 64
DEF _HUGE = 2 << 20


# The cache: parallel arrays of (address, mapped bytes, when returned); taken newest first.
cdef void* _ptrs[_SLOTS]
cdef size_t _caps[_SLOTS]
cdef double _times[_SLOTS]
cdef int _count = 0
cdef size_t _cached = 0
cdef size_t _limit = 256 << 20
cdef double _idle = 2.0  # seconds: cached blocks unused for longer are unmapped


cdef double _now() noexcept:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef size_t _size_class(size_t n) noexcept:
    """``n`` rounded up to a quarter of its power of two (at most 25% more), whole pages."""
    cdef size_t step = 4096
    while step * 8 <= n:
        step <<= 1
    return (n + step - 1) // step * step


cdef void _drop(int i) noexcept:
    global _count, _cached
    munmap(_ptrs[i], _caps[i])
    _cached -= _caps[i]
    _count -= 1
    _ptrs[i], _caps[i], _times[i] = _ptrs[_count], _caps[_count], _times[_count]


cdef int _oldest() noexcept:
    cdef int i, best = 0
    for i in range(1, _count):
        if _times[i] < _times[best]:
            best = i
    return best


cdef void _expire(double now) noexcept:
    cdef int i = _count - 1
    while i >= 0:
        if now - _times[i] > _idle:
            _drop(i)
        i -= 1


cdef void* _take(size_t cap) except? NULL:
    """A mapping of ``cap`` bytes: the most recently returned one of that size, else a new one."""
    global _count, _cached
    cdef int i, best = -1
    _expire(_now())
    for i in range(_count):
        if _caps[i] == cap and (best < 0 or _times[i] > _times[best]):
            best = i
    cdef void* p
    if best >= 0:
        p = _ptrs[best]
        _cached -= cap
        _count -= 1
        _ptrs[best], _caps[best], _times[best] = _ptrs[_count], _caps[_count], _times[_count]
        return p
    p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if p == MAP_FAILED:
        raise MemoryError(f"cannot map {cap} bytes")
    if cap >= _HUGE:
        madvise(p, cap, MADV_HUGEPAGE)  # as numpy does for big arrays: fewer faults and TLB misses
    return p


cdef void _give_back(void* p, size_t cap) noexcept:
    global _count, _cached
    cdef double now = _now()
    _expire(now)
    while _count and (_count == _SLOTS or _cached + cap > _limit):
        _drop(_oldest())
    if cap > _limit:
        munmap(p, cap)
        return
    _ptrs[_count], _caps[_count], _times[_count] = p, cap, now
    _count += 1
    _cached += cap


cdef class Block:
    """``size`` writable bytes exposed through the buffer protocol; when the block is
    collected its pages go back to the cache for the next block of the same size class."""

    cdef uint8_t* ptr
    cdef readonly Py_ssize_t size
    cdef size_t _cap
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]

    def __cinit__(self, Py_ssize_t size):
        if size < 0:
            raise ValueError(f"negative block size {size}")
        self._cap = _size_class(max(size, 1))
        self.ptr = <uint8_t*>_take(self._cap)
        self.size = size

    def __dealloc__(self):
        if self.ptr != NULL:
            _give_back(self.ptr, self._cap)
            self.ptr = NULL

    @property
    def address(self):
        return <uintptr_t>self.ptr

    def __len__(self):
        return self.size

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        fill_byte_buffer(buffer, self, <void*>self.ptr, self.size, 0, flags, self._shape,
                         self._strides)

    def __releasebuffer__(self, Py_buffer* buffer):
        pass


def empty(Py_ssize_t nbytes):
    """A writable uint8 numpy array of ``nbytes`` (page-aligned when at least ``MIN_SIZE``,
    then backed by a cached ``Block``; contents undefined)."""
    if nbytes < MIN_SIZE:
        return np.empty(max(nbytes, 1), dtype=np.uint8)[:nbytes]
    return np.frombuffer(Block(nbytes), dtype=np.uint8)


def cache_limit(limit=None):
    """The most bytes of freed blocks kept for reuse (default 256 MiB); with ``limit``, set it
    (0: keep none; blocks over the limit are unmapped at once)."""
    global _limit
    if limit is not None:
        if limit < 0:
            raise ValueError(f"cache limit must be >= 0, got {limit}")
        _limit = limit
        while _count and _cached > _limit:
            _drop(_oldest())
    return _limit


def cache_info():
    """(blocks, bytes) currently cached."""
    return _count, _cached


def clear_cache():
    """Unmap every cached block."""
    while _count:
        _drop(_count - 1)
