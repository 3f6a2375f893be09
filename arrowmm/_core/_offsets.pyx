"""Structural validation of Arrow offsets, sizes, run ends, union and dictionary codes (and
of date64 values, which must be whole days).

Every integer that says where a value lives (list/binary offsets, list-view
sizes, run ends, union type codes and offsets, dictionary indices, binary
view headers) comes straight from an untrusted file.  Reading zero-copy
through them is only safe once they are proven to stay inside their buffers.
These kernels do that in C, one pass each, and report the first bad slot
with its value and the limit it broke.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t)
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy
from arrowmm._core._bits cimport bit_is_set, read_le32

import numpy as np

from arrowmm._core._bitmap import _byte_buffer, _validity_buffer
from arrowmm._core._utf8 import _utf8_invalid_at_capsule as _utf8_capsule
from arrowmm.errors import ArrowInvalid

# One UTF-8 validator for the package: _utf8 exports its C function in a capsule.
ctypedef int64_t (*_utf8_fn)(const uint8_t *s, int64_t n) noexcept nogil
cdef _utf8_fn _utf8_invalid_at = <_utf8_fn>PyCapsule_GetPointer(
    _utf8_capsule, b"arrowmm._core._utf8.utf8_invalid_at")

# (offset_t and index_t are declared in _offsets.pxd, shared with arrowmm.compute._kernels)
ctypedef fused sint_t:  # run ends (all three) and offsets (int32/int64)
    int16_t
    int32_t
    int64_t

cdef enum:
    _NEG_SIZE = 1
    _BAD_BUFFER = 2
    _NEG_OFFSET = 3
    _OUT_OF_RANGE = 4
    _BAD_PREFIX = 5
    _BAD_UTF8 = 6
    _BAD_CODE = 7
    _DECREASE = 8
    _BAD_PADDING = 9
    _CHUNK = 4096  # slots per branch-free scan block


# ---------------------------------------------------------------- arguments

cdef object _int_array(object obj, str name, str kinds, tuple sizes):
    """``obj`` as a contiguous native-endian 1-D numpy array of an allowed int dtype."""
    if not isinstance(obj, np.ndarray) or obj.ndim != 1:
        raise TypeError(f"{name} must be a 1-D numpy array")
    dt = obj.dtype
    if dt.kind not in kinds or dt.itemsize not in sizes or not dt.isnative:
        raise TypeError(f"{name} has unsupported dtype {dt}")
    return np.ascontiguousarray(obj)


cdef class _Buffers:
    """Pinned raw pointers and sizes of a list of buffer-protocol objects."""
    cdef Py_buffer* views
    cdef const uint8_t** ptrs
    cdef int64_t* lens
    cdef Py_ssize_t n
    cdef Py_ssize_t acquired

    def __cinit__(self, buffers):
        cdef Py_ssize_t i
        buffers = list(buffers)
        self.n = len(buffers)
        self.views = <Py_buffer*>calloc(self.n + 1, sizeof(Py_buffer))
        self.ptrs = <const uint8_t**>calloc(self.n + 1, sizeof(uint8_t*))
        self.lens = <int64_t*>calloc(self.n + 1, sizeof(int64_t))
        if self.views == NULL or self.ptrs == NULL or self.lens == NULL:
            raise MemoryError()
        for i in range(self.n):
            PyObject_GetBuffer(buffers[i], &self.views[i], PyBUF_SIMPLE)
            self.acquired = i + 1
            self.ptrs[i] = <const uint8_t*>self.views[i].buf
            self.lens[i] = self.views[i].len

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.views != NULL:
            for i in range(self.acquired):
                PyBuffer_Release(&self.views[i])
        free(self.views)
        free(self.ptrs)
        free(self.lens)


# ---------------------------------------------------------------- kernels

cdef inline int64_t _first_drop(const sint_t[::1] o, int64_t last, bint strict) noexcept nogil:
    """Smallest i in [1, last] with o[i] < o[i-1] (<= if strict), else -1.

    Scans branch-free blocks so the compiler can vectorise the common all-good case.
    """
    cdef int64_t start = 1, stop, i
    cdef int bad
    while start <= last:
        stop = start + _CHUNK if last + 1 - start > _CHUNK else last + 1
        bad = 0
        if strict:
            for i in range(start, stop):
                bad |= o[i] <= o[i - 1]
        else:
            for i in range(start, stop):
                bad |= o[i] < o[i - 1]
        if bad:
            for i in range(start, stop):
                if o[i] < o[i - 1] or (strict and o[i] == o[i - 1]):
                    return i
        start = stop
    return -1


cdef int64_t _drop_at(const sint_t[::1] o, int64_t last, bint strict):
    cdef int64_t r
    with nogil:
        r = _first_drop(o, last, strict)
    return r


cdef inline int64_t _list_view_loop(const offset_t[::1] off, const offset_t[::1] size,
                                    int64_t length, int64_t child_length,
                                    const uint8_t[::1] bits, bint has_bits,
                                    int64_t bit_offset) noexcept nogil:
    """First non-null i with off[i] < 0, size[i] < 0 or off[i] + size[i] > child, else -1."""
    cdef int64_t i, o, s
    for i in range(length):
        if has_bits and not bit_is_set(bits, bit_offset + i):
            continue
        o = off[i]
        s = size[i]
        if o < 0 or s < 0 or o > child_length - s:  # child_length - s cannot overflow
            return i
    return -1


cdef int64_t _list_view_bad(const offset_t[::1] off, const offset_t[::1] size,
                            int64_t length, int64_t child_length, const uint8_t[::1] bits,
                            bint has_bits, int64_t bit_offset):
    cdef int64_t r
    with nogil:
        r = _list_view_loop(off, size, length, child_length, bits, has_bits, bit_offset)
    return r


cdef inline int64_t _dict_loop(const index_t[::1] idx, uint64_t limit,
                               const uint8_t[::1] bits, bint has_bits,
                               int64_t bit_offset) noexcept nogil:
    """First non-null i with idx[i] outside [0, limit), else -1.

    Casting a negative signed index to uint64 wraps it above INT64_MAX, so a
    single unsigned comparison catches both ends (limit <= INT64_MAX).
    """
    cdef int64_t n = idx.shape[0], start = 0, stop, i
    cdef int bad
    if has_bits:
        for i in range(n):
            if <uint64_t>idx[i] >= limit and bit_is_set(bits, bit_offset + i):
                return i
        return -1
    while start < n:
        stop = start + _CHUNK if n - start > _CHUNK else n
        bad = 0
        for i in range(start, stop):
            bad |= <uint64_t>idx[i] >= limit
        if bad:
            for i in range(start, stop):
                if <uint64_t>idx[i] >= limit:
                    return i
        start = stop
    return -1


cdef int64_t _dict_bad(const index_t[::1] idx, uint64_t limit, const uint8_t[::1] bits,
                       bint has_bits, int64_t bit_offset):
    cdef int64_t r
    with nogil:
        r = _dict_loop(idx, limit, bits, has_bits, bit_offset)
    return r


cdef inline int64_t _type_ids_loop(const int8_t[::1] t, const uint8_t[::1] allowed) noexcept nogil:
    cdef int64_t i
    cdef int8_t c
    for i in range(t.shape[0]):
        c = t[i]
        if c < 0 or allowed[c] == 0:
            return i
    return -1


cdef inline int64_t _dense_loop(const int8_t[::1] t, const int32_t[::1] o,
                                const int64_t[::1] child_len, int* kind) noexcept nogil:
    """First slot with a negative code, offset outside [0, child length) or an
    offset below the previous one of the same code, else -1."""
    cdef int64_t last[128]
    cdef int64_t i
    cdef int8_t c
    cdef int32_t v
    for i in range(128):
        last[i] = 0
    for i in range(t.shape[0]):
        c = t[i]
        v = o[i]
        if c < 0:
            kind[0] = _BAD_CODE
        elif v < 0:
            kind[0] = _NEG_OFFSET
        elif v >= child_len[c]:
            kind[0] = _OUT_OF_RANGE
        elif v < last[c]:
            kind[0] = _DECREASE
        else:
            last[c] = v
            continue
        return i
    return -1


cdef uint64_t _HIGH_BITS = 0x8080808080808080  # (the high bit of each byte: not ASCII)


cdef inline int64_t _views_bad(const uint8_t[::1] v, int64_t length, const uint8_t[::1] bits,
                               bint has_bits, int64_t bit_offset, const uint8_t** ptrs,
                               const int64_t* lens, int64_t nbuf, bint utf8,
                               int* kind) noexcept nogil:
    cdef int64_t i, base, size, bidx, off
    cdef const uint8_t* p
    cdef uint64_t w0, w1, m0, m1
    for i in range(length):
        if has_bits and not bit_is_set(bits, bit_offset + i):
            continue
        base = 16 * i
        size = read_le32(v, base)
        if size < 0:
            kind[0] = _NEG_SIZE
            return i
        if size <= 12:
            # the 12 inline bytes as two little-endian words (native order, as load_i64): the
            # bytes after the value are zero (a size damaged short would read a cut value that
            # is otherwise valid), and a value of ASCII bytes is valid UTF-8 without the check
            memcpy(&w0, &v[base + 4], 8)
            w1 = 0
            memcpy(&w1, &v[base + 12], 4)
            if size >= 8:
                m0, m1 = ~(<uint64_t>0), ((<uint64_t>1) << (8 * (size - 8))) - 1
            else:
                m0, m1 = ((<uint64_t>1) << (8 * size)) - 1, 0
            if (w0 & ~m0) != 0 or (w1 & ~m1) != 0:
                kind[0] = _BAD_PADDING
                return i
            if utf8 and ((w0 | w1) & _HIGH_BITS) != 0 \
                    and _utf8_invalid_at(&v[base + 4], size) >= 0:
                kind[0] = _BAD_UTF8
                return i
            continue
        bidx = read_le32(v, base + 8)
        off = read_le32(v, base + 12)
        if bidx < 0 or bidx >= nbuf:
            kind[0] = _BAD_BUFFER
            return i
        if off < 0:
            kind[0] = _NEG_OFFSET
            return i
        if size > lens[bidx] - off:
            kind[0] = _OUT_OF_RANGE
            return i
        p = ptrs[bidx] + off
        if memcmp(&v[base + 4], p, 4) != 0:
            kind[0] = _BAD_PREFIX
            return i
        if utf8 and _utf8_invalid_at(p, size) >= 0:
            kind[0] = _BAD_UTF8
            return i
    return -1


# ---------------------------------------------------------------- API

def check_offsets(offsets, int64_t length, int64_t data_size, what):
    """Check offsets[0] >= 0, non-decreasing over [0, length], offsets[length] <= data_size."""
    arr = _int_array(offsets, "offsets", "i", (4, 8))
    cdef int64_t n = arr.shape[0]
    cdef int64_t bad
    if length < 0:
        raise ArrowInvalid(f"offsets of {what!r}: length={length} < 0")
    if data_size < 0:
        raise ArrowInvalid(f"offsets of {what!r}: data size={data_size} < 0")
    if n == 0 and length == 0:
        return  # an empty array may omit its offsets buffer (pyarrow accepts this)
    if n - 1 < length:
        raise ArrowInvalid(
            f"offsets of {what!r}: {n} offsets for length {length} "
            f"(need length+1={int(length) + 1})")
    if arr[0] < 0:
        raise ArrowInvalid(f"offsets of {what!r}: offset[0]={arr[0]} < 0 "
                           f"(offsets must be non-negative)")
    if arr.dtype.itemsize == 4:
        bad = _drop_at[int32_t](arr, length, False)
    else:
        bad = _drop_at[int64_t](arr, length, False)
    if bad >= 0:
        raise ArrowInvalid(
            f"offsets of {what!r}: offset[{bad}]={arr[bad]} < offset[{bad - 1}]="
            f"{arr[bad - 1]} (offsets must not decrease)")
    if arr[length] > data_size:
        raise ArrowInvalid(
            f"offsets of {what!r}: offset[{length}]={arr[length]} > data size "
            f"{data_size} (values must end inside the data buffer)")


def check_list_view(offsets, sizes, int64_t length, int64_t child_length, validity,
                    int64_t bit_offset, what):
    """Check every list view [offset, offset+size) lies inside the child; with ``validity``,
    only the non-null ones."""
    arr = _int_array(offsets, "offsets", "i", (4, 8))
    sz = _int_array(sizes, "sizes", "i", (4, 8))
    cdef int64_t bad
    if arr.dtype != sz.dtype:
        raise TypeError(f"offsets ({arr.dtype}) and sizes ({sz.dtype}) differ in dtype")
    if length < 0:
        raise ArrowInvalid(f"list-view of {what!r}: length={length} < 0")
    if child_length < 0:
        raise ArrowInvalid(f"list-view of {what!r}: child length={child_length} < 0")
    if arr.shape[0] < length or sz.shape[0] < length:
        raise ArrowInvalid(
            f"list-view of {what!r}: {arr.shape[0]} offsets and {sz.shape[0]} sizes "
            f"for length {length} (need {length} of each)")
    vb = _validity_buffer(validity, bit_offset, length, what)
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    if arr.dtype.itemsize == 4:
        bad = _list_view_bad[int32_t](arr, sz, length, child_length, bits,
                                      vb is not None, bit_offset)
    else:
        bad = _list_view_bad[int64_t](arr, sz, length, child_length, bits,
                                      vb is not None, bit_offset)
    if bad < 0:
        return
    o, s = int(arr[bad]), int(sz[bad])
    if o < 0:
        raise ArrowInvalid(f"list-view of {what!r}: offset[{bad}]={o} < 0 "
                           f"(offsets must be non-negative)")
    if s < 0:
        raise ArrowInvalid(f"list-view of {what!r}: size[{bad}]={s} < 0 "
                           f"(sizes must be non-negative)")
    raise ArrowInvalid(
        f"list-view of {what!r}: offset[{bad}]={o} + size[{bad}]={s} = {o + s} > "
        f"child length {child_length} (views must lie inside the child)")


def check_run_ends(run_ends, int64_t needed_end, what):
    """Check run ends are positive, strictly increasing and reach ``needed_end``."""
    arr = _int_array(run_ends, "run_ends", "i", (2, 4, 8))
    cdef int64_t n = arr.shape[0]
    cdef int64_t bad
    if needed_end < 0:
        raise ArrowInvalid(f"run ends of {what!r}: needed end={needed_end} < 0")
    if n == 0:
        if needed_end > 0:
            raise ArrowInvalid(
                f"run ends of {what!r}: 0 runs for logical end {needed_end} "
                f"(need at least 1 run)")
        return
    if arr[0] <= 0:
        raise ArrowInvalid(f"run ends of {what!r}: run_end[0]={arr[0]} <= 0 "
                           f"(run ends must be positive)")
    if arr.dtype.itemsize == 2:
        bad = _drop_at[int16_t](arr, n - 1, True)
    elif arr.dtype.itemsize == 4:
        bad = _drop_at[int32_t](arr, n - 1, True)
    else:
        bad = _drop_at[int64_t](arr, n - 1, True)
    if bad > 0:
        raise ArrowInvalid(
            f"run ends of {what!r}: run_end[{bad}]={arr[bad]} <= run_end[{bad - 1}]="
            f"{arr[bad - 1]} (run ends must strictly increase)")
    if arr[n - 1] < needed_end:
        raise ArrowInvalid(
            f"run ends of {what!r}: run_end[{n - 1}]={arr[n - 1]} < {needed_end} "
            f"(the last run must reach offset+length)")


cdef object _allowed_codes(allowed):
    arr = _int_array(allowed, "allowed", "ub", (1,))
    if arr.shape[0] != 128:
        raise ArrowInvalid(f"allowed type codes: need 128 entries, got {arr.shape[0]}")
    return arr.view(np.uint8)


def check_union_type_ids(type_ids, allowed, what):
    """Check every type id is a code the union declares (``allowed[code] == 1``)."""
    ids = _int_array(type_ids, "type_ids", "i", (1,))
    ok = _allowed_codes(allowed)
    cdef const int8_t[::1] t = ids
    cdef const uint8_t[::1] a = ok
    cdef int64_t bad
    with nogil:
        bad = _type_ids_loop(t, a)
    if bad >= 0:
        codes = np.flatnonzero(ok).tolist()
        raise ArrowInvalid(
            f"union type ids of {what!r}: type_id[{bad}]={t[bad]} is not a type code "
            f"of the union (allowed codes: {codes})")


def check_dense_union_offsets(type_ids, offsets, child_lengths, what):
    """Check 0 <= offset < child length per slot, non-decreasing per type code."""
    ids = _int_array(type_ids, "type_ids", "i", (1,))
    offs = _int_array(offsets, "offsets", "i", (4,))
    lens = _int_array(child_lengths, "child_lengths", "i", (8,))
    if lens.shape[0] != 128:
        raise ArrowInvalid(f"child lengths: need 128 entries, got {lens.shape[0]}")
    cdef const int8_t[::1] t = ids
    cdef const int32_t[::1] o = offs
    cdef const int64_t[::1] cl = lens
    cdef int64_t n = t.shape[0]
    cdef int64_t bad
    cdef int kind = 0
    cdef int8_t c
    cdef int32_t v
    if o.shape[0] < n:
        raise ArrowInvalid(
            f"dense union offsets of {what!r}: {o.shape[0]} offsets for {n} type ids "
            f"(need {n})")
    with nogil:
        bad = _dense_loop(t, o[:n], cl, &kind)
    if bad < 0:
        return
    c, v = t[bad], o[bad]
    head = f"dense union offsets of {what!r}: offset[{bad}]={v}"
    if kind == _BAD_CODE:
        raise ArrowInvalid(f"{head} has type_id[{bad}]={c} < 0 (type codes are 0..127)")
    if kind == _NEG_OFFSET:
        raise ArrowInvalid(f"{head} < 0 (offsets must be non-negative)")
    if kind == _OUT_OF_RANGE:
        raise ArrowInvalid(f"{head} >= length {cl[c]} of the child for type code {c} "
                           f"(offsets must be < child length)")
    prev = int(np.flatnonzero(ids[:bad] == c).max())
    raise ArrowInvalid(f"{head} < offset[{prev}]={o[prev]}, both type code {c} "
                       f"(offsets into one child must not decrease)")


cdef int64_t _partial_day_at(const int64_t[::1] ms, const uint8_t[::1] bits, bint has,
                             int64_t bit_offset) noexcept nogil:
    cdef int64_t i, n = ms.shape[0]
    for i in range(n):
        if ms[i] % 86400000 != 0 and (not has or bit_is_set(bits, bit_offset + i)):
            return i
    return -1


def first_partial_day(values, validity, int64_t bit_offset, what) -> int:
    """Index of the first non-null date64 value (milliseconds) that is not a whole number of
    days, else -1: a C loop where the divisor is a constant (numpy's ``%`` divides ten times
    slower).  pyarrow's full validation refuses such values."""
    arr = _int_array(values, "date64 values", "i", (8,))
    cdef const int64_t[::1] ms = arr
    vb = _validity_buffer(validity, bit_offset, arr.shape[0], what)
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    cdef bint has = vb is not None
    cdef int64_t bad
    with nogil:
        bad = _partial_day_at(ms, bits, has, bit_offset)
    return bad


def check_dictionary_indices(indices, validity, int64_t bit_offset, int64_t dict_length,
                             what):
    """Check every non-null dictionary index is in [0, dict_length)."""
    arr = _int_array(indices, "indices", "iu", (1, 2, 4, 8))
    cdef int64_t bad
    if dict_length < 0:
        raise ArrowInvalid(f"dictionary indices of {what!r}: dictionary length="
                           f"{dict_length} < 0")
    vb = _validity_buffer(validity, bit_offset, arr.shape[0], what)
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    cdef bint has = vb is not None
    cdef uint64_t lim = <uint64_t>dict_length
    key = (arr.dtype.kind, arr.dtype.itemsize)
    if key == ("i", 1):
        bad = _dict_bad[int8_t](arr, lim, bits, has, bit_offset)
    elif key == ("i", 2):
        bad = _dict_bad[int16_t](arr, lim, bits, has, bit_offset)
    elif key == ("i", 4):
        bad = _dict_bad[int32_t](arr, lim, bits, has, bit_offset)
    elif key == ("i", 8):
        bad = _dict_bad[int64_t](arr, lim, bits, has, bit_offset)
    elif key == ("u", 1):
        bad = _dict_bad[uint8_t](arr, lim, bits, has, bit_offset)
    elif key == ("u", 2):
        bad = _dict_bad[uint16_t](arr, lim, bits, has, bit_offset)
    elif key == ("u", 4):
        bad = _dict_bad[uint32_t](arr, lim, bits, has, bit_offset)
    else:
        bad = _dict_bad[uint64_t](arr, lim, bits, has, bit_offset)
    if bad >= 0:
        raise ArrowInvalid(
            f"dictionary indices of {what!r}: index[{bad}]={arr[bad]} out of range "
            f"for dictionary of length {dict_length} (must be in [0, {dict_length}))")


def check_binary_views(views, int64_t length, validity, int64_t bit_offset,
                       variadic_buffers, bint utf8, what):
    """Check every non-null 16-byte BinaryView header (and its UTF-8 if ``utf8``): sizes,
    buffer indices and ranges, prefixes, and the zero padding after an inline value."""
    vbuf = _byte_buffer(views, "views")
    cdef const uint8_t[::1] v = vbuf
    cdef int64_t nbytes = v.shape[0]
    cdef int64_t bad
    cdef int kind = 0
    if length < 0:
        raise ArrowInvalid(f"binary views of {what!r}: length={length} < 0")
    if length > nbytes // 16:
        raise ArrowInvalid(
            f"binary views of {what!r}: views buffer holds {nbytes} bytes, "
            f"length {length} needs 16*{length} = {16 * int(length)}")
    vb = _validity_buffer(validity, bit_offset, length, what)
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    cdef bint has = vb is not None
    cdef _Buffers bufs = _Buffers(variadic_buffers)
    with nogil:
        bad = _views_bad(v, length, bits, has, bit_offset, bufs.ptrs, bufs.lens,
                         bufs.n, utf8, &kind)
    if bad < 0:
        return
    base = 16 * bad
    size = read_le32(v, base)
    head = f"binary views of {what!r}: view[{bad}]"
    if kind == _NEG_SIZE:
        raise ArrowInvalid(f"{head} size={size} < 0 (sizes must be non-negative)")
    if kind == _BAD_PADDING:
        raise ArrowInvalid(f"{head} inline value of size={size} is followed by non-zero "
                           f"padding bytes {bytes(vbuf[base + 4 + size:base + 16])!r} (the "
                           f"{12 - size} bytes after an inline value must be zero)")
    if kind == _BAD_UTF8 and size <= 12:
        raise ArrowInvalid(f"{head} inline value {bytes(vbuf[base + 4:base + 4 + size])!r} "
                           f"(size={size}) is not valid UTF-8")
    bidx, off = read_le32(v, base + 8), read_le32(v, base + 12)
    if kind == _BAD_BUFFER:
        raise ArrowInvalid(f"{head} buffer_index={bidx} out of range for {bufs.n} "
                           f"variadic buffers (must be in [0, {bufs.n}))")
    if kind == _NEG_OFFSET:
        raise ArrowInvalid(f"{head} offset={off} < 0 (offsets must be non-negative)")
    blen = bufs.lens[bidx]
    if kind == _OUT_OF_RANGE:
        raise ArrowInvalid(
            f"{head} offset={off} + size={size} = {int(off) + size} > length {blen} "
            f"of variadic buffer {bidx} (views must lie inside their buffer)")
    data = (<const char*>bufs.ptrs[bidx])[off:off + 4]
    if kind == _BAD_PREFIX:
        raise ArrowInvalid(f"{head} prefix {bytes(vbuf[base + 4:base + 8])!r} != first 4 "
                           f"data bytes {data!r} (prefix must match the data)")
    raise ArrowInvalid(f"{head} value (size={size}, variadic buffer {bidx} at offset "
                       f"{off}) is not valid UTF-8")


# ---------------------------------------------------------------- statistics

cdef const uint8_t[::1] _NO_BITS = bytes(1)


cdef inline int _cmp_values(const uint8_t* a, int64_t na, const uint8_t* b, int64_t nb) noexcept nogil:
    """Byte order of two values (a prefix sorts first), as Spark and Python's str/bytes compare."""
    cdef int c = memcmp(a, b, <size_t>(na if na < nb else nb))
    if c:
        return c
    return (na > nb) - (na < nb)


cdef int64_t _extremes_loop(const uint8_t[::1] data, const offset_t[::1] o, int64_t length,
                            const uint8_t[::1] bits, int64_t bit_offset, bint has_bits,
                            int64_t* lo, int64_t* hi) noexcept nogil:
    """Rows of the smallest and largest non-null value into lo/hi; -1, or the first row whose
    offsets leave the data (its values are not compared)."""
    cdef int64_t i, start, end, size = data.shape[0]
    cdef int64_t lo_s = 0, lo_n = 0, hi_s = 0, hi_n = 0
    cdef const uint8_t* base = &data[0] if size else NULL
    lo[0] = hi[0] = -1
    for i in range(length):
        if has_bits and not bit_is_set(bits, bit_offset + i):
            continue
        start, end = o[i], o[i + 1]
        if start < 0 or end < start or end > size:
            return i
        if lo[0] < 0 or _cmp_values(base + start, end - start, base + lo_s, lo_n) < 0:
            lo[0], lo_s, lo_n = i, start, end - start
        if hi[0] < 0 or _cmp_values(base + start, end - start, base + hi_s, hi_n) > 0:
            hi[0], hi_s, hi_n = i, start, end - start
    return -1


def binary_extremes(data, offsets, int64_t length, validity, int64_t bit_offset, what):
    """Rows ``(lo, hi)`` of the smallest and largest non-null binary value in byte order (a
    prefix first), ``(-1, -1)`` when every value is null.  ``offsets``: the ``length + 1``
    int32 or int64 offsets of those rows into ``data``; one that leaves ``data`` raises
    ``ArrowInvalid`` naming ``what``."""
    cdef const uint8_t[::1] d = _byte_buffer(data, "data")
    cdef const uint8_t[::1] bits
    cdef bint has_bits = validity is not None
    cdef int64_t lo = -1, hi = -1, bad
    offs = _int_array(offsets, "offsets", "i", (4, 8))
    if len(offs) < length + 1:
        raise ArrowInvalid(f"{what}: {len(offs)} offsets for {length} values")
    if has_bits:
        bits = _validity_buffer(validity, bit_offset, length, what)
    else:
        bits = _NO_BITS
    cdef const int32_t[::1] o32
    cdef const int64_t[::1] o64
    if offs.dtype.itemsize == 4:
        o32 = offs
        with nogil:
            bad = _extremes_loop(d, o32, length, bits, bit_offset, has_bits, &lo, &hi)
    else:
        o64 = offs
        with nogil:
            bad = _extremes_loop(d, o64, length, bits, bit_offset, has_bits, &lo, &hi)
    if bad >= 0:
        raise ArrowInvalid(f"{what}: value {bad} has offsets [{int(offs[bad])}, "
                           f"{int(offs[bad + 1])}) outside the {d.shape[0]}-byte data")
    return lo, hi

