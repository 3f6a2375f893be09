"""Reusable memory for decoded buffers.

Decompressing into fresh memory costs a page fault (and the kernel zeroing a
page) per 4 KiB written: measured, that is as much time as LZ4 decoding itself.
Allocators like jemalloc keep freed pages mapped and hand them out again; glibc
gives big allocations fresh mappings each time.  A ``Block`` is ``size`` bytes
of an anonymous mapping that, when the last reference to it goes (every numpy
array or view over it holds one, through the buffer protocol), returns to a
cache instead of being unmapped; the next block of the same size class reuses
its (already faulted) pages.

The policy, and why:

- **How much**: at most ``cache_limit()`` bytes of freed blocks, by default an
  eighth of physical memory, at least 256 MiB and at most 4 GiB
  (``ARROWMM_BLOCK_CACHE=<bytes>[k|m|g]`` at import, or ``cache_limit(n)``).
  One decoded batch of a few GiB (8 columns of 256 MiB: the high-ratio ZSTD
  benchmark) then decodes again into its own pages, as pyarrow's jemalloc
  does, instead of faulting 7 of its 8 columns in afresh each time.
- **Given back under memory pressure**: only the first ``cache_resident()``
  bytes of the cache (256 MiB) are kept as they are.  Any block that enters the
  cache beyond that is marked ``madvise(MADV_FREE)``: its pages stay mapped
  and are reused without a fault while memory is plentiful, but the kernel
  takes them back, without asking, as soon as something else needs the memory
  (they are then zero pages again on reuse).  So the bigger limit costs other
  programs nothing they would not get back when they need it.
- **Given back after idle time**: blocks unused for ``cache_idle()`` seconds
  (2 s) are unmapped, checked whenever a block is taken or returned; a program
  that stops reading keeps at most the resident part (and the lazily freed
  rest only until there is pressure), and ``clear_cache()`` drops it all.

The cache is process-global state changed without a lock of its own: every
change happens with the GIL held (``Block`` creation and deallocation), which
is what makes it thread-safe under a CPython with the GIL.  A free-threaded
build would need a lock here (see the README's thread-safety section).
"""
from libc.stdint cimport uint8_t, uintptr_t
from posix.mman cimport (MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, PROT_READ, PROT_WRITE,
                         mmap, munmap)
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from arrowmm._core._buffer cimport fill_byte_buffer

import numpy as np

import os

__all__ = ["Block", "empty", "cache_limit", "cache_resident", "cache_idle", "cache_info",
           "lazily_freed", "clear_cache", "default_cache_limit", "MIN_SIZE"]

cdef extern from "sys/mman.h" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE
    int MADV_FREE

#: Smaller outputs come from numpy (malloc reuses small heap chunks well by itself).
MIN_SIZE = 1 << 16
DEF _SLOTS = 1024  # (blocks cached at most: the bytes limit is what binds; 64 dropped part of
# one decoded table of 6 x 5 columns, ~72 blocks, and the next decode faulted it in again)
DEF _HUGE = 2 << 20




def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def default_cache_limit(physical=None, env=None) -> int:
    """The cache limit a process starts with: ``env`` (``ARROWMM_BLOCK_CACHE``: bytes, with
    an optional k/m/g suffix) if given, else an eighth of ``physical`` memory, clamped to
    [256 MiB, 4 GiB].  A malformed ``env`` raises ValueError naming it."""
    if env is not None and env.strip():
        text = env.strip().lower().rstrip("ib").rstrip("b")
        scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if scale > 1 else text
        if not digits.isdigit():
            raise ValueError(f"ARROWMM_BLOCK_CACHE={env!r}: expected a number of bytes, "
                             f"optionally with a k, m or g suffix (e.g. 512m)")
        return int(digits) * scale
    physical = _physical_memory() if physical is None else physical
    return min(max(physical // 8, 256 << 20), 4 << 30)


# The cache: parallel arrays of (address, mapped bytes, when returned, lazily freed?); taken
# newest first.
cdef void* _ptrs[_SLOTS]
cdef size_t _caps[_SLOTS]
cdef double _times[_SLOTS]
cdef bint _lazy[_SLOTS]
cdef int _count = 0
cdef size_t _cached = 0
cdef size_t _lazy_bytes = 0   # of _cached, in blocks marked MADV_FREE
cdef size_t _limit = default_cache_limit(env=os.environ.get("ARROWMM_BLOCK_CACHE"))
cdef size_t _resident = 256 << 20  # cached bytes kept as they are; beyond: MADV_FREE
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


cdef void _remove(int i) noexcept:
    """Take entry ``i`` out of the cache's arrays (not unmapped)."""
    global _count, _cached, _lazy_bytes
    _cached -= _caps[i]
    if _lazy[i]:
        _lazy_bytes -= _caps[i]
    _count -= 1
    _ptrs[i], _caps[i], _times[i], _lazy[i] = _ptrs[_count], _caps[_count], _times[_count], \
        _lazy[_count]


cdef void _drop(int i) noexcept:
    munmap(_ptrs[i], _caps[i])
    _remove(i)


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
        _remove(best)
        return p
    p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if p == MAP_FAILED:
        raise MemoryError(f"cannot map {cap} bytes")
    if cap >= _HUGE:
        madvise(p, cap, MADV_HUGEPAGE)  # as numpy does for big arrays: fewer faults and TLB misses
    return p


cdef void _give_back(void* p, size_t cap) noexcept:
    global _count, _cached, _lazy_bytes
    cdef double now = _now()
    cdef bint lazy = False
    _expire(now)
    while _count and (_count == _SLOTS or _cached + cap > _limit):
        _drop(_oldest())
    if cap > _limit:
        munmap(p, cap)
        return
    if _cached + cap > _resident:
        # beyond the resident part: the kernel may take the pages back under pressure
        # (reused without a fault otherwise); on a kernel without MADV_FREE they stay
        lazy = madvise(p, cap, MADV_FREE) == 0
    _ptrs[_count], _caps[_count], _times[_count], _lazy[_count] = p, cap, now, lazy
    _count += 1
    _cached += cap
    if lazy:
        _lazy_bytes += cap


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
    """The most bytes of freed blocks kept for reuse (default ``default_cache_limit()``); with
    ``limit``, set it (0: keep none; blocks over the limit are unmapped at once)."""
    global _limit
    if limit is not None:
        if limit < 0:
            raise ValueError(f"cache limit must be >= 0, got {limit}")
        _limit = limit
        while _count and _cached > _limit:
            _drop(_oldest())
    return _limit


def cache_resident(nbytes=None):
    """Cached bytes kept as they are (default 256 MiB); blocks cached beyond are marked
    ``MADV_FREE`` for the kernel to reclaim under memory pressure.  With ``nbytes``, set it
    (it applies to blocks given back from then on)."""
    global _resident
    if nbytes is not None:
        if nbytes < 0:
            raise ValueError(f"resident cache size must be >= 0, got {nbytes}")
        _resident = nbytes
    return _resident


def cache_idle(seconds=None):
    """Seconds a cached block may stay unused before it is unmapped (default 2); with
    ``seconds``, set it.  Checked whenever a block is taken or given back."""
    global _idle
    if seconds is not None:
        if not seconds >= 0:
            raise ValueError(f"idle time must be >= 0, got {seconds}")
        _idle = seconds
    return _idle


def cache_info():
    """(blocks, bytes) currently cached."""
    return _count, _cached


def lazily_freed():
    """Bytes of the cached blocks marked ``MADV_FREE`` (part of ``cache_info()[1]``)."""
    return _lazy_bytes


def clear_cache():
    """Unmap every cached block."""
    while _count:
        _drop(_count - 1)
