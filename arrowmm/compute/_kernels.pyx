# cython: language_level=3, boundscheck=False, wraparound=False
"""Whole-column kernels behind ``arrowmm.compute``: comparisons, set membership, Kleene logic
over masks, and selection (by mask) and take (by indices) of fixed-width values, bit-packed
booleans and validity bitmaps, and variable-length binary/string values.

Why here, in C: a filter over a mapped file selected rows as one Python ``slice`` per run of
rows (200,000 of them for a 1%-selective filter over 10M rows) and joined them in Python; here
each column costs one pass over its bytes with the GIL released, and no Python object per row.

Masks are numpy ``bool`` arrays, one byte a row (``values``, and ``valid`` or None: all
valid); a mask that selects rows is True where the row is kept, and the selection kernels
take it packed as bits (``pack_mask``: a ``Mask``, packed and counted once per filter, then
walked 64 rows a word by every column's kernel).  Offsets are checked as they are read
(each value within the data buffer, not decreasing): a damaged offsets buffer raises
``ArrowInvalid`` naming the row, never reads outside the buffer.

Outputs of 64 KiB or more (masks of whole batches, selected columns) come from ``_arena``:
pages a dropped result gave back are written again without a fault.  numpy's fresh memory
cost a page fault (and the kernel zeroing a page) per 4 KiB written: measured, 8-10% of a
ZSTD filter's time, and the same again when it was unmapped.
"""

from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)
from libc.string cimport memcmp, memcpy, memset
from cpython.buffer cimport (PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release,
                             PyObject_GetBuffer)

from arrowmm._core._offsets cimport index_t as int_t, offset_t

import numpy as np

from arrowmm._core import _arena
from arrowmm.errors import ArrowInvalid

__all__ = ["EQ", "NE", "LT", "LE", "GT", "GE", "compare_numeric", "compare_binary",
           "isin_binary", "kleene_and", "kleene_or", "Mask", "pack_mask", "filter_fixed",
           "filter_bits", "filter_binary", "take_fixed", "take_bits", "take_binary",
           "take_list_ranges"]

cdef enum:
    C_EQ = 0
    C_NE = 1
    C_LT = 2
    C_LE = 3
    C_GT = 4
    C_GE = 5

#: Comparison operators, as codes.
EQ = C_EQ
NE = C_NE
LT = C_LT
LE = C_LE
GT = C_GT
GE = C_GE

ctypedef fused float_t:
    float
    double


# ---------------------------------------------------------------- comparisons

cdef void _cmp_int(const int_t* x, Py_ssize_t n, int op, int_t s, uint8_t* out) noexcept nogil:
    cdef Py_ssize_t i
    if op == C_EQ:
        for i in range(n):
            out[i] = x[i] == s
    elif op == C_NE:
        for i in range(n):
            out[i] = x[i] != s
    elif op == C_LT:
        for i in range(n):
            out[i] = x[i] < s
    elif op == C_LE:
        for i in range(n):
            out[i] = x[i] <= s
    elif op == C_GT:
        for i in range(n):
            out[i] = x[i] > s
    else:
        for i in range(n):
            out[i] = x[i] >= s


cdef void _cmp_float(const float_t* x, Py_ssize_t n, int op, double s,
                     uint8_t* out) noexcept nogil:
    # (a float32 value is compared as a double: the scalar is a double, as in pyarrow)
    cdef Py_ssize_t i
    if op == C_EQ:
        for i in range(n):
            out[i] = <double>x[i] == s
    elif op == C_NE:
        for i in range(n):
            out[i] = <double>x[i] != s
    elif op == C_LT:
        for i in range(n):
            out[i] = <double>x[i] < s
    elif op == C_LE:
        for i in range(n):
            out[i] = <double>x[i] <= s
    elif op == C_GT:
        for i in range(n):
            out[i] = <double>x[i] > s
    else:
        for i in range(n):
            out[i] = <double>x[i] >= s


def compare_int(const int_t[::1] x, int op, scalar):
    """``x op scalar`` for integers ``x``; ``scalar`` must be an integer within ``x``'s range
    (the caller decides the comparisons it is outside of)."""
    cdef int_t s = scalar
    cdef Py_ssize_t n = x.shape[0]
    out = _empty(n, np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    if n:
        with nogil:
            _cmp_int(&x[0], n, op, s, &o[0])
    return out


def compare_float(const float_t[::1] x, int op, double scalar):
    """``x op scalar`` for floats ``x`` (IEEE: NaN compares false, except ``!=``)."""
    cdef Py_ssize_t n = x.shape[0]
    out = _empty(n, np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    if n:
        with nogil:
            _cmp_float(&x[0], n, op, scalar, &o[0])
    return out


_UFUNCS = {C_EQ: np.equal, C_NE: np.not_equal, C_LT: np.less, C_LE: np.less_equal,
           C_GT: np.greater, C_GE: np.greater_equal}


def compare_numeric(x, int op, scalar):
    """``x op scalar``, ``x`` a 1-D numpy array of a machine number type (an integer
    ``scalar`` within ``x``'s range).  float64 and integers go to numpy's comparison, whose
    SIMD loops run 5-6x faster than a scalar loop here (the compiler vectorizes none of the
    double-to-byte compares on a baseline x86-64 build); the scalar is first made a value of
    ``x``'s own type, exactly (it is in range), so numpy's casting rules decide nothing.
    float32 compares as double (pyarrow's semantics) in ``compare_float``."""
    if x.dtype.kind == "f":
        if x.dtype.itemsize == 8:
            return _UFUNCS[op](x, np.float64(scalar), out=_empty(x.shape[0], np.bool_))
        return compare_float(x, op, float(scalar))
    return _UFUNCS[op](x, x.dtype.type(scalar), out=_empty(x.shape[0], np.bool_))


cdef inline int _cmp_bytes(const uint8_t* a, int64_t na, const uint8_t* b,
                           int64_t nb) noexcept nogil:
    cdef int64_t m = na if na < nb else nb, i
    cdef int c = 0
    if m > 16:
        c = memcmp(a, b, m)
    else:  # (most values are short, and differ in their first bytes: a call costs more)
        for i in range(m):
            if a[i] != b[i]:
                return (<int>a[i]) - (<int>b[i])
    if c != 0:
        return c
    return (na > nb) - (na < nb)


cdef inline bint _holds(int c, int op) noexcept nogil:
    if op == C_EQ:
        return c == 0
    if op == C_NE:
        return c != 0
    if op == C_LT:
        return c < 0
    if op == C_LE:
        return c <= 0
    if op == C_GT:
        return c > 0
    return c >= 0


cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    /* Eight bytes at p as a big-endian number (any alignment). */
    static inline uint64_t arrowmm_load_be64(const uint8_t *p) {
        uint64_t w; memcpy(&w, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        return w;
    #elif defined(_MSC_VER) && !defined(__clang__)
        return _byteswap_uint64(w);
    #else
        return __builtin_bswap64(w);
    #endif
    }
    """
    uint64_t arrowmm_load_be64(const uint8_t *p) noexcept nogil


cdef inline uint64_t _head8(const uint8_t* p, int64_t length) noexcept nogil:
    """The first ``min(length, 8)`` bytes at ``p`` as a big-endian number (bytes past them
    zero): two heads compare as their bytes do.  Reads only those bytes."""
    cdef uint64_t w = 0
    cdef int64_t i, m = length if length < 8 else 8
    for i in range(m):
        w |= (<uint64_t>p[i]) << (56 - 8 * i)
    return w


cdef int64_t _compare_binary(const offset_t* offs, Py_ssize_t n, const uint8_t* data,
                             int64_t size, int op, const uint8_t* s, int64_t ns,
                             uint8_t* out) noexcept nogil:
    """-1 when every row was compared, else the row whose offsets are out of range.

    Each value's first 8 bytes are compared as one big-endian word with the scalar's (an
    8-byte load where the buffer has 8 bytes left, masked to the bytes both hold); only a
    tie over all 8 goes to ``_cmp_bytes``.  Measured 2-3x a byte loop on short strings,
    whose first differing byte, varying from row to row, cost a mispredicted branch.  The
    answer for a value below, equal to or above the scalar is looked up (``op`` is the same
    for every row), the mask of the bytes compared made without a branch: measured a sixth
    less time than a test of ``op`` per row."""
    cdef Py_ssize_t i
    cdef int64_t a, b, la, m
    cdef uint64_t sw = _head8(s, ns), x, y, keep, ones = ~(<uint64_t>0)
    cdef int c
    cdef uint8_t answer[3]  # (for a value below, equal to, above the scalar)
    answer[0] = _holds(-1, op)
    answer[1] = _holds(0, op)
    answer[2] = _holds(1, op)
    for i in range(n):
        a = offs[i]
        b = offs[i + 1]
        if a < 0 or b < a or b > size:
            return i
        la = b - a
        m = la if la < ns else ns
        m = m if m < 8 else 8
        if size - a >= 8:
            x = arrowmm_load_be64(data + a)
        else:
            x = _head8(data + a, la)
        keep = ~((ones >> (4 * m)) >> (4 * m))  # (the high m bytes; no shift by 64)
        x &= keep
        y = sw & keep
        if x != y:
            out[i] = answer[2 * (x > y)]
            continue
        if m < 8:  # (one of the two ends within the bytes compared: the shorter first)
            c = (la > ns) - (la < ns)
        else:
            c = _cmp_bytes(data + a + 8, la - 8, s + 8, ns - 8)
        out[i] = answer[1 + (c > 0) - (c < 0)]
    return -1


def compare_binary(data, const offset_t[::1] offsets, int op, const uint8_t[::1] scalar):
    """``value op scalar`` for each binary/string value (bytewise, as pyarrow orders them):
    ``offsets`` the ``n + 1`` offsets of the rows into ``data``."""
    cdef const uint8_t[::1] d = _bytes_of(data)
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef int64_t bad = -1
    cdef uint8_t zero = 0
    out = _empty(max(n, 0), np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    cdef const uint8_t* dp = &d[0] if d.shape[0] else &zero
    cdef const uint8_t* sp = &scalar[0] if scalar.shape[0] else &zero
    if n > 0:
        with nogil:
            bad = _compare_binary(&offsets[0], n, dp, d.shape[0], op, sp, scalar.shape[0],
                                  &o[0])
    if bad >= 0:
        _bad_offsets(offsets, bad, d.shape[0])
    return out


def isin_binary(data, const offset_t[::1] offsets, const uint8_t[::1] set_data,
                const int64_t[::1] set_offsets):
    """Whether each binary/string value is one of a set: the set's values sorted bytewise,
    without repeats, as ``set_offsets`` into ``set_data`` (a binary search per row)."""
    cdef const uint8_t[::1] d = _bytes_of(data)
    cdef Py_ssize_t n = offsets.shape[0] - 1, i
    cdef int64_t m = set_offsets.shape[0] - 1, lo, hi, mid, a, b
    cdef int64_t bad = -1, size = d.shape[0]
    cdef int c
    cdef uint8_t zero = 0
    out = np.zeros(max(n, 0), dtype=np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    cdef const uint8_t* dp = &d[0] if d.shape[0] else &zero
    cdef const uint8_t* sp = &set_data[0] if set_data.shape[0] else &zero
    if n <= 0 or m <= 0:
        return out
    with nogil:
        for i in range(n):
            a = offsets[i]
            b = offsets[i + 1]
            if a < 0 or b < a or b > size:
                bad = i
                break
            lo = 0
            hi = m
            while lo < hi:
                mid = (lo + hi) // 2
                c = _cmp_bytes(dp + a, b - a, sp + set_offsets[mid],
                               set_offsets[mid + 1] - set_offsets[mid])
                if c == 0:
                    o[i] = 1
                    break
                if c < 0:
                    hi = mid
                else:
                    lo = mid + 1
    if bad >= 0:
        _bad_offsets(offsets, bad, size)
    return out


# ---------------------------------------------------------------- Kleene logic

def kleene_and(const uint8_t[::1] a, av, const uint8_t[::1] b, bv):
    """``a AND b`` in Kleene's logic (false wins over null): (values, valid or None).
    ``av``/``bv``: the validity of ``a``/``b`` (bool arrays) or None (all valid)."""
    return _kleene(a, av, b, bv, 1)


def kleene_or(const uint8_t[::1] a, av, const uint8_t[::1] b, bv):
    """``a OR b`` in Kleene's logic (true wins over null): (values, valid or None)."""
    return _kleene(a, av, b, bv, 0)


cdef _kleene(const uint8_t[::1] a, av, const uint8_t[::1] b, bv, bint conj):
    cdef Py_ssize_t n = a.shape[0], i
    if b.shape[0] != n:
        raise ArrowInvalid(f"Kleene logic over masks of {n} and {b.shape[0]} rows")
    out = _empty(n, np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    cdef const uint8_t[::1] va
    cdef const uint8_t[::1] vb
    cdef uint8_t[::1] vo
    cdef uint8_t x, y, xv, yv
    if av is None and bv is None:
        with nogil:
            for i in range(n):
                o[i] = (a[i] & b[i]) if conj else (a[i] | b[i])
        return out, None
    va = np.ones(n, dtype=np.uint8) if av is None else np.asarray(av).view(np.uint8)
    vb = np.ones(n, dtype=np.uint8) if bv is None else np.asarray(bv).view(np.uint8)
    if va.shape[0] != n or vb.shape[0] != n:
        raise ArrowInvalid("Kleene logic: a validity mask is not as long as its values")
    valid = _empty(n, np.bool_)
    vo = valid.view(np.uint8)
    with nogil:
        for i in range(n):
            x = a[i] != 0
            y = b[i] != 0
            xv = va[i] != 0
            yv = vb[i] != 0
            if conj:
                if (xv and not x) or (yv and not y):
                    o[i] = 0
                    vo[i] = 1
                else:
                    o[i] = xv and yv
                    vo[i] = xv and yv
            else:
                if (xv and x) or (yv and y):
                    o[i] = 1
                    vo[i] = 1
                else:
                    o[i] = 0
                    vo[i] = xv and yv
    return out, valid


# ---------------------------------------------------------------- selection and take

cdef _empty(Py_ssize_t n, dtype):
    """``np.empty(n, dtype)``, from ``_arena`` when it is 64 KiB or more (see the module's
    docstring)."""
    dt = np.dtype(dtype)
    if n * dt.itemsize < _arena.MIN_SIZE:
        return np.empty(n, dtype=dt)
    return _arena.empty(n * dt.itemsize).view(dt)


cdef _bytes_of(obj):
    """``obj`` (a buffer-protocol object) as a 1-D uint8 memoryview, without copying."""
    if obj is None:
        return np.zeros(0, dtype=np.uint8)
    arr = np.frombuffer(obj, dtype=np.uint8) if not isinstance(obj, np.ndarray) else obj
    return arr.reshape(-1).view(np.uint8)


cdef uint8_t _NO_BYTES = 0


cdef int _acquire(obj, Py_buffer* view) except -1:
    """``obj``'s bytes (a buffer-protocol object; None: none) held in ``view`` until
    ``PyBuffer_Release(view)``: the kernels' inputs without the numpy views and typed
    memoryviews that ``_bytes_of`` makes (measured: 1-2 us a call, more than a kernel's loop
    over a 1%-selective 100,000-row mask).  A non-contiguous array is copied first."""
    if obj is None:
        memset(view, 0, sizeof(Py_buffer))  # (no owner: PyBuffer_Release does nothing)
        view.buf = &_NO_BYTES
        view.len = 0
        return 0
    try:
        PyObject_GetBuffer(obj, view, PyBUF_SIMPLE)
    except (BufferError, ValueError):  # (numpy: ValueError "ndarray is not C-contiguous")
        # (the copy is held by ``view`` until it is released)
        PyObject_GetBuffer(np.ascontiguousarray(obj), view, PyBUF_SIMPLE)
    return 0


cdef void* _address(arr) except NULL:
    """The first byte of ``arr``, an array made here (its memory stays put while it is
    referenced, so the buffer is not held); writable."""
    cdef Py_buffer view
    cdef void* at
    PyObject_GetBuffer(arr, &view, PyBUF_SIMPLE | PyBUF_WRITABLE)
    at = view.buf
    PyBuffer_Release(&view)
    return at if at != NULL else <void*>&_NO_BYTES


cdef _bad_offsets(offsets, int64_t row, int64_t size):
    raise ArrowInvalid(f"offsets of row {row}: [{offsets[row]}, {offsets[row + 1]}) is not "
                       f"within the {size}-byte data buffer (or decreases)")


cdef _mask_bytes(mask):
    """A mask (bool, one per row) as a 1-D uint8 array over the same memory."""
    arr = np.asarray(mask)
    if arr.ndim != 1 or arr.dtype.itemsize != 1:
        raise ArrowInvalid(f"selection: a mask is one bool per row, got {arr.dtype} of shape "
                           f"{arr.shape}")
    return arr.view(np.uint8)


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(_MSC_VER) && !defined(__clang__)
    #include <intrin.h>
    static inline int arrowmm_ctz64(uint64_t x) {
        unsigned long i; _BitScanForward64(&i, x); return (int)i;
    }
    #else
    #define arrowmm_ctz64(x) __builtin_ctzll(x)
    #endif
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    #define ARROWMM_SSE2 1
    #endif
    /* Eight mask bytes as a word whose bit 8*j is set when byte j (row j) is nonzero. */
    static inline uint64_t arrowmm_kept8(const uint8_t *p) {
        uint64_t w; memcpy(&w, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
    #endif
        w |= w >> 4; w |= w >> 2; w |= w >> 1;
        return w & 0x0101010101010101ULL;
    }
    /* 64 mask bytes as one word, bit j set when byte j is nonzero (SSE2: a compare and a
       movemask per 16 bytes; elsewhere eight bytes gathered by one multiply). */
    static inline uint64_t arrowmm_pack64(const uint8_t *p) {
    #ifdef ARROWMM_SSE2
        const __m128i z = _mm_setzero_si128();
        uint64_t a = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), z));
        uint64_t b = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), z));
        uint64_t c = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), z));
        uint64_t d = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), z));
        return ~(a | (b << 16) | (c << 32) | (d << 48));
    #else
        uint64_t w = 0;
        int j;
        for (j = 0; j < 8; j++)
            w |= ((arrowmm_kept8(p + 8 * j) * 0x0102040810204080ULL) >> 56) << (8 * j);
        return w;
    #endif
    }
    static inline int arrowmm_popcount64(uint64_t x) {
    #if defined(__POPCNT__)
        return (int)__builtin_popcountll(x);
    #else  /* (without -mpopcnt the builtin is a call into libgcc) */
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    #endif
    }
    /* The 64 * nwords mask bytes at p as nwords words (arrowmm_pack64); how many of the
       bytes are nonzero.  SSE2 counts the zero bytes as it packs, a byte counter per lane
       (the compare's -1 subtracted) summed every 63 words, before a lane can pass 255:
       a popcount per word, without the instruction on a baseline x86-64 build, cost more
       than the packing. */
    static int64_t arrowmm_pack_words(const uint8_t *p, int64_t nwords, uint64_t *out) {
    #ifdef ARROWMM_SSE2
        const __m128i z = _mm_setzero_si128();
        __m128i zeros = z, e0, e1, e2, e3, sums;
        int64_t zero_count = 0, i;
        int since = 0;
        for (i = 0; i < nwords; i++) {
            e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 64 * i)), z);
            e1 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 64 * i + 16)), z);
            e2 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 64 * i + 32)), z);
            e3 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 64 * i + 48)), z);
            out[i] = ~((uint64_t)(uint16_t)_mm_movemask_epi8(e0)
                       | ((uint64_t)(uint16_t)_mm_movemask_epi8(e1) << 16)
                       | ((uint64_t)(uint16_t)_mm_movemask_epi8(e2) << 32)
                       | ((uint64_t)(uint16_t)_mm_movemask_epi8(e3) << 48));
            zeros = _mm_sub_epi8(zeros, e0);
            zeros = _mm_sub_epi8(zeros, e1);
            zeros = _mm_sub_epi8(zeros, e2);
            zeros = _mm_sub_epi8(zeros, e3);
            if (++since == 63 || i == nwords - 1) {
                sums = _mm_sad_epu8(zeros, z);
                zero_count += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
                zeros = z;
                since = 0;
            }
        }
        return 64 * nwords - zero_count;
    #else
        int64_t count = 0, i;
        for (i = 0; i < nwords; i++) {
            out[i] = arrowmm_pack64(p + 64 * i);
            count += arrowmm_popcount64(out[i]);
        }
        return count;
    #endif
    }
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define ARROWMM_BIG_ENDIAN 1
    #else
    #define ARROWMM_BIG_ENDIAN 0
    #endif
    /* Eight bytes at p as a little-endian number (any alignment): bits 0-63 of a bitmap. */
    static inline uint64_t arrowmm_load_le64(const uint8_t *p) {
        uint64_t w; memcpy(&w, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
    #endif
        return w;
    }
    /* The bits set in n words.  A baseline x86-64 build has no popcnt instruction (the
       portable count is a dozen operations a word, the most of a mask's making): a copy of
       the loop compiled for it runs where the CPU has it. */
    static int64_t arrowmm_count_words_portable(const uint64_t *w, int64_t n) {
        int64_t count = 0, i;
        for (i = 0; i < n; i++)
            count += arrowmm_popcount64(w[i]);
        return count;
    }
    #if !defined(__POPCNT__) && (defined(__x86_64__) || defined(__i386__)) && \
        (defined(__GNUC__) || defined(__clang__))
    __attribute__((target("popcnt")))
    static int64_t arrowmm_count_words_popcnt(const uint64_t *w, int64_t n) {
        int64_t count = 0, i;
        for (i = 0; i < n; i++)
            count += __builtin_popcountll(w[i]);
        return count;
    }
    static int64_t arrowmm_count_words(const uint64_t *w, int64_t n) {
        static int has_popcnt = -1;
        if (has_popcnt < 0) {
            __builtin_cpu_init();
            has_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
        }
        return has_popcnt ? arrowmm_count_words_popcnt(w, n)
                          : arrowmm_count_words_portable(w, n);
    }
    #else
    #define arrowmm_count_words arrowmm_count_words_portable
    #endif
    """
    int arrowmm_ctz64(uint64_t x) noexcept nogil
    uint64_t arrowmm_load_le64(const uint8_t *p) noexcept nogil
    bint ARROWMM_BIG_ENDIAN
    int64_t arrowmm_count_words(const uint64_t *w, int64_t n) noexcept nogil
    uint64_t arrowmm_kept8(const uint8_t *p) noexcept nogil
    uint64_t arrowmm_pack64(const uint8_t *p) noexcept nogil
    int arrowmm_popcount64(uint64_t x) noexcept nogil
    int64_t arrowmm_pack_words(const uint8_t *p, int64_t nwords, uint64_t *out) noexcept nogil


cdef class Mask:
    """A selection mask packed as bits, with the number of rows it keeps: row ``i`` is bit
    ``i % 64`` of word ``i // 64`` (the last word's bits past ``length`` clear).  Made once
    per filter (``pack_mask``) and read by every column's kernel: a 1M-row mask is 125 KB to
    walk, 64 rows a word, instead of the 1 MB of its bools, and it is counted as it is
    packed.  Its words are read-only; the kernels still bound what they write by ``count``
    and refuse a mask that keeps another number of rows."""
    cdef object _words
    cdef const uint64_t* _ptr
    cdef readonly Py_ssize_t length
    cdef readonly Py_ssize_t count

    def __len__(self):
        return self.length

    @property
    def words(self):
        """The bits, as read-only uint64 words."""
        words = self._words.view()
        words.flags.writeable = False
        return words

    def indices(self):
        """The positions of the kept rows, ascending (int64)."""
        out = _empty(self.count, np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t k = 0, wi, nwords = (self.length + 63) // 64
        cdef uint64_t w
        with nogil:
            for wi in range(nwords):
                w = _word(self._ptr, wi, self.length)
                while w and k < self.count:
                    o[k] = wi * 64 + arrowmm_ctz64(w)
                    w &= w - 1
                    k += 1
        if k != self.count:
            raise ArrowInvalid(f"selection: the mask keeps {k} rows, not {self.count}")
        return out

    def __repr__(self):
        return f"<arrowmm Mask: {self.count} of {self.length} rows kept>"


cdef inline uint64_t _word(const uint64_t* words, Py_ssize_t wi, Py_ssize_t n) noexcept nogil:
    """Word ``wi`` of a mask of ``n`` rows, the bits past row ``n`` cleared (read again here:
    a row past the data is never selected, whatever the words hold)."""
    cdef Py_ssize_t left = n - wi * 64
    if left >= 64:
        return words[wi]
    return words[wi] & (((<uint64_t>1) << left) - 1)


def pack_mask(mask):
    """``mask`` (bool, one per row; a nonzero byte keeps its row) as a ``Mask``: packed and
    counted in one pass."""
    cdef const uint8_t[::1] m = _mask_bytes(mask)
    cdef Py_ssize_t n = m.shape[0], full = n // 64, j
    cdef Py_ssize_t count = 0
    cdef uint64_t tail = 0
    # (one word at least: an empty mask still has an address)
    words = _empty(max((n + 63) // 64, 1), np.uint64)
    cdef uint64_t* w = <uint64_t*>_address(words)
    with nogil:
        if full:
            count = arrowmm_pack_words(&m[0], full, &w[0])
        for j in range(full * 64, n):  # (the tail, a byte at a time: none read past the end)
            tail |= (<uint64_t>(m[j] != 0)) << (j - full * 64)
        if n % 64 or n == 0:
            w[full] = tail
            count += arrowmm_popcount64(tail)
    return _new_mask(words, n, count)


def mask_from_bits(values, int64_t bit_offset, Py_ssize_t n, validity=None,
                   int64_t validity_offset=0):
    """A ``Mask`` of ``n`` rows read from bitmap ``values`` from bit ``bit_offset`` (a boolean
    array's values, used as stored: not unpacked to a byte a row), a row whose bit of
    ``validity`` (from bit ``validity_offset``; None: every row valid) is clear dropped."""
    cdef Py_buffer vb, okb
    cdef bint checked = validity is not None
    cdef Py_ssize_t full = n // 64, wi, j
    cdef Py_ssize_t count = 0
    cdef uint64_t tail = 0
    cdef uint64_t* out
    cdef const uint8_t* v
    cdef const uint8_t* ok
    if n < 0 or bit_offset < 0 or validity_offset < 0:
        raise ArrowInvalid(f"selection: a mask of {n} rows from bit {bit_offset}")
    _acquire(values, &vb)
    try:
        _acquire(validity, &okb)
        try:
            if vb.len < (bit_offset + n + 7) // 8 or \
                    (checked and okb.len < (validity_offset + n + 7) // 8):
                raise ArrowInvalid(f"selection: a boolean mask of {n} rows needs "
                                   f"{(bit_offset + n + 7) // 8} bytes of values, has {vb.len}")
            # (sized once the bitmaps are known to hold the n rows)
            words = _empty(max((n + 63) // 64, 1), np.uint64)
            out = <uint64_t*>_address(words)
            v = <const uint8_t*>vb.buf
            ok = <const uint8_t*>okb.buf
            with nogil:
                if bit_offset % 8 == 0:  # (a batch's piece of a mask: its whole words copied)
                    memcpy(out, v + bit_offset // 8, full * 8)
                    if ARROWMM_BIG_ENDIAN:
                        for wi in range(full):
                            out[wi] = arrowmm_load_le64(<const uint8_t*>(out + wi))
                else:
                    for wi in range(full):  # (whole words: their bytes are inside the bitmaps)
                        out[wi] = _bits64(v, bit_offset + wi * 64)
                if checked:
                    for wi in range(full):
                        out[wi] &= _bits64(ok, validity_offset + wi * 64)
                count = arrowmm_count_words(out, full)
                for j in range(full * 64, n):  # (the tail, a bit at a time: none read past it)
                    if (v[(bit_offset + j) >> 3] >> ((bit_offset + j) & 7)) & 1 and (
                            not checked or (ok[(validity_offset + j) >> 3]
                                            >> ((validity_offset + j) & 7)) & 1):
                        tail |= (<uint64_t>1) << (j - full * 64)
                if n % 64 or n == 0:
                    out[full] = tail
                    count += arrowmm_popcount64(tail)
        finally:
            PyBuffer_Release(&okb)
    finally:
        PyBuffer_Release(&vb)
    return _new_mask(words, n, count)


cdef Mask _new_mask(words, Py_ssize_t n, Py_ssize_t count):
    """A ``Mask`` over ``words`` (made here, held by the mask alone: ``Mask.words`` gives
    read-only views of them)."""
    cdef Mask kept = Mask.__new__(Mask)
    kept._words = words
    kept._ptr = <const uint64_t*>_address(words)
    kept.length = n
    kept.count = count
    return kept


cdef Mask _kept(mask, Py_ssize_t count):
    """``mask`` (a ``Mask``, or bools packed here) checked to keep ``count`` rows."""
    cdef Mask kept = mask if isinstance(mask, Mask) else pack_mask(mask)
    if kept.count != count:
        raise ArrowInvalid(f"selection: the mask selects {kept.count} rows, not {count}")
    return kept


cdef _changed():
    raise ArrowInvalid("selection: the mask changed while the rows were selected")


cdef inline bint _sparse(Py_ssize_t count, Py_ssize_t n) noexcept nogil:
    """Whether few enough rows are kept for the sparse loops: below one in eight, only the
    kept rows are visited (a word of 64 unkept rows skipped at once), and the values of the
    rows skipped are never read (a 1%-selective filter reads 1/8 of a column's cache lines
    instead of all of them)."""
    return count <= n // 8


cdef inline void _copy_value(uint8_t* dst, const uint8_t* src, Py_ssize_t width) noexcept nogil:
    if width == 8:
        memcpy(dst, src, 8)
    elif width == 4:
        memcpy(dst, src, 4)
    elif width == 2:
        memcpy(dst, src, 2)
    elif width == 1:
        dst[0] = src[0]
    else:
        memcpy(dst, src, width)


DEF _GATHER = 64  # (kept rows found before their values are read: see _filter_fixed_sparse)


cdef inline void _gather_values(uint8_t* dst, const uint8_t* src, Py_ssize_t width,
                                const Py_ssize_t* rows, Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t t
    if width == 8:
        for t in range(m):
            memcpy(dst + t * 8, src + rows[t] * 8, 8)
    elif width == 4:
        for t in range(m):
            memcpy(dst + t * 4, src + rows[t] * 4, 4)
    else:
        for t in range(m):
            _copy_value(dst + t * width, src + rows[t] * width, width)


cdef Py_ssize_t _filter_fixed_sparse(const uint8_t* src, Py_ssize_t width, const uint64_t* words,
                                     Py_ssize_t n, Py_ssize_t count,
                                     uint8_t* dst) noexcept nogil:
    """``_filter_fixed`` for a few kept rows: only the kept rows visited (a word's set bits);
    at most ``count`` values written, the number kept returned (``count + 1``: more).  The
    kept rows are found ``_GATHER`` at a time and only then read, in a loop of independent
    loads: a column decoded a moment ago is mostly out of the cache again, and reading each
    value as it was found left one cache miss in flight at a time (measured: 8% of a ZSTD
    filter's time at 1%, 3x less read this way)."""
    cdef Py_ssize_t wi, k = 0, m = 0, nwords = (n + 63) // 64
    cdef Py_ssize_t rows[_GATHER]
    cdef uint64_t w
    for wi in range(nwords):
        w = _word(words, wi, n)
        while w:
            if k + m == count:
                return count + 1
            rows[m] = wi * 64 + arrowmm_ctz64(w)
            w &= w - 1
            m += 1
            if m == _GATHER:
                _gather_values(dst + k * width, src, width, rows, m)
                k += m
                m = 0
    _gather_values(dst + k * width, src, width, rows, m)
    return k + m


cdef Py_ssize_t _filter_fixed(const uint8_t* src, Py_ssize_t width, const uint64_t* words,
                              Py_ssize_t n, Py_ssize_t count, uint8_t* dst) noexcept nogil:
    """Many kept rows, a word (64 rows) at a time: all kept, one copy; a few, their set bits;
    else (8, 4, 2, 1 bytes) every value written where the next kept one goes, the place moving
    on only when it is kept: no branch to mispredict (``dst`` has one spare value).  The
    number kept, or ``count + 1``: more."""
    cdef Py_ssize_t wi, b, r, k = 0, nwords = (n + 63) // 64, rows
    cdef uint64_t w
    cdef int c
    for wi in range(nwords):
        w = _word(words, wi, n)
        c = arrowmm_popcount64(w)
        if k + c > count:
            return count + 1
        r = wi * 64
        rows = n - r if n - r < 64 else 64
        if c == 64:
            memcpy(dst + k * width, src + r * width, 64 * width)
            k += 64
        elif c < 16 or width not in (1, 2, 4, 8):
            while w:
                b = r + arrowmm_ctz64(w)
                w &= w - 1
                _copy_value(dst + k * width, src + b * width, width)
                k += 1
        elif width == 8:
            for b in range(rows):
                (<uint64_t*>dst)[k] = (<const uint64_t*>src)[r + b]
                k += (w >> b) & 1
        elif width == 4:
            for b in range(rows):
                (<uint32_t*>dst)[k] = (<const uint32_t*>src)[r + b]
                k += (w >> b) & 1
        elif width == 2:
            for b in range(rows):
                (<uint16_t*>dst)[k] = (<const uint16_t*>src)[r + b]
                k += (w >> b) & 1
        else:
            for b in range(rows):
                dst[k] = src[r + b]
                k += (w >> b) & 1
    return k


def filter_fixed(src, Py_ssize_t start, Py_ssize_t width, mask, Py_ssize_t count):
    """The ``width``-byte values ``start`` (a value index) on of ``src`` where ``mask`` (a
    ``Mask``, or bool one per row) keeps the row, ``count`` of them, packed into new memory
    (uint8)."""
    cdef Mask kept = _kept(mask, count)
    cdef Py_ssize_t n = kept.length, done = 0
    cdef Py_buffer sb
    cdef const uint8_t* values
    cdef uint8_t* o
    _acquire(src, &sb)
    try:
        if width <= 0 or start < 0 or (sb.len // width) - start < n:
            raise ArrowInvalid(f"selection: a {sb.len}-byte buffer holds no {n} values of "
                               f"{width} bytes from value {start}")
        spare = _empty((count + 1) * width, np.uint8)  # (the branch-free loops' spare)
        o = <uint8_t*>_address(spare)
        values = <const uint8_t*>sb.buf + start * width
        if count:
            with nogil:
                if _sparse(count, n):
                    done = _filter_fixed_sparse(values, width, kept._ptr, n, count, o)
                else:
                    done = _filter_fixed(values, width, kept._ptr, n, count, o)
    finally:
        PyBuffer_Release(&sb)
    if done != count:
        _changed()
    return spare[:count * width]


cdef inline uint64_t _bits64(const uint8_t* p, int64_t pos) noexcept nogil:
    """Bits ``pos`` to ``pos + 63`` of a bitmap, from bit 0 (the caller knows they are in
    it: only the bytes holding them are read)."""
    cdef int64_t first = pos >> 3, last = (pos + 63) >> 3
    cdef int shift = pos & 7
    cdef uint64_t lo = arrowmm_load_le64(p + first), hi = 0
    if last > first + 7:
        hi = p[last]
    return (lo >> shift) | ((hi << (64 - shift)) if shift else 0)


cdef inline void _put_bits64(uint8_t* out, int64_t at, uint64_t v) noexcept nogil:
    """OR 64 bits ``v`` into a zeroed bitmap from bit ``at`` (only the bytes they cover)."""
    cdef int64_t first = at >> 3, b
    cdef int shift = at & 7
    for b in range(8):
        out[first + b] |= <uint8_t>((v << shift) >> (8 * b))
    if shift:
        out[first + 8] |= <uint8_t>(v >> (64 - shift))


def filter_bits(src, int64_t bit_offset, mask, Py_ssize_t count):
    """Bits ``bit_offset`` on of bitmap ``src`` where ``mask`` (a ``Mask``, or bool one per
    row) keeps the row, ``count`` of them, packed from bit 0: (bitmap, number of bits set)."""
    cdef Mask kept = _kept(mask, count)
    cdef Py_ssize_t n = kept.length, wi, nwords = (n + 63) // 64, j
    cdef int64_t k = 0, ones = 0, bit
    cdef uint64_t w, v
    cdef Py_buffer sb
    cdef const uint8_t* sp
    cdef uint8_t* o
    _acquire(src, &sb)
    try:
        if bit_offset < 0 or (sb.len * 8) - bit_offset < n:
            raise ArrowInvalid(f"selection: a {sb.len}-byte bitmap holds no {n} bits from "
                               f"bit {bit_offset}")
        out = np.zeros((count + 7) // 8, dtype=np.uint8)
        if count == 0:
            return out, 0
        o = <uint8_t*>_address(out)
        sp = <const uint8_t*>sb.buf
        with nogil:
            for wi in range(nwords):
                w = _word(kept._ptr, wi, n)
                if w == ~(<uint64_t>0) and k + 64 <= count:  # (64 rows kept: their bits at once)
                    v = _bits64(sp, bit_offset + wi * 64)
                    _put_bits64(o, k, v)
                    ones += arrowmm_popcount64(v)
                    k += 64
                    continue
                while w:
                    if k == count:
                        k += 1
                        break
                    j = wi * 64 + arrowmm_ctz64(w)
                    w &= w - 1
                    bit = bit_offset + j
                    if (sp[bit >> 3] >> (bit & 7)) & 1:
                        o[k >> 3] |= <uint8_t>(1 << (k & 7))
                        ones += 1
                    k += 1
                if k > count:
                    break
    finally:
        PyBuffer_Release(&sb)
    if k != count:
        _changed()
    return out, ones


cdef inline bint _bad_value(int64_t a, int64_t b, int64_t size) noexcept nogil:
    return a < 0 or b < a or b > size


cdef inline int64_t _copy_rows(const offset_t* offs, const Py_ssize_t* rows, Py_ssize_t m,
                               const uint8_t* data, uint8_t* out, int64_t first,
                               int64_t last, int64_t* at, offset_t* new_offsets) noexcept nogil:
    """Rows ``rows[:m]``'s values appended at ``at[0]``, their ends written to
    ``new_offsets[1:m + 1]``: their offsets are read first, all of them, then their bytes
    (independent loads, so that their cache misses overlap).  A short value is copied as 16
    bytes where the data has them (``out`` has 16 spare bytes).  -1, or the bad row."""
    cdef int64_t a[_GATHER]
    cdef int64_t b[_GATHER]
    cdef int64_t c, wide = last - 16
    cdef Py_ssize_t t
    for t in range(m):
        a[t] = offs[rows[t]]
        b[t] = offs[rows[t] + 1]
    for t in range(m):
        if a[t] < first or b[t] < a[t] or b[t] > last or b[t] - a[t] > (last - first) - at[0]:
            return rows[t]
        if b[t] - a[t] <= 16 and a[t] <= wide:
            memcpy(out + at[0], data + a[t], 16)
        elif b[t] - a[t] > 16:
            memcpy(out + at[0], data + a[t], b[t] - a[t])
        else:
            for c in range(b[t] - a[t]):
                out[at[0] + c] = data[a[t] + c]
        at[0] += b[t] - a[t]
        new_offsets[t + 1] = <offset_t>at[0]
    return -1


cdef int64_t _filter_sparse(const offset_t* offs, Py_ssize_t n, const uint64_t* words,
                            const uint8_t* data, uint8_t* out, Py_ssize_t count,
                            offset_t* new_offsets, int64_t* total) noexcept nogil:
    """A few kept rows, in one pass over the mask's words: only the kept rows' offsets read
    (each kept value checked as it is copied; the room is the data's ``offs[n] - offs[0]``
    bytes, ``offs[n] <= size`` checked by the caller), ``_GATHER`` kept rows found before
    their offsets and bytes are read (``_filter_fixed_sparse``).  -1, the bad row, or -2:
    the mask keeps more rows than ``count``."""
    cdef Py_ssize_t wi, k = 0, m = 0, nwords = (n + 63) // 64
    cdef int64_t at = 0, first = offs[0], last = offs[n], bad
    cdef uint64_t w
    cdef Py_ssize_t rows[_GATHER]
    for wi in range(nwords):
        w = _word(words, wi, n)
        while w:
            if k + m == count:
                return -2
            rows[m] = wi * 64 + arrowmm_ctz64(w)
            w &= w - 1
            m += 1
            if m == _GATHER:
                bad = _copy_rows(offs, rows, m, data, out, first, last, &at, new_offsets + k)
                if bad >= 0:
                    return bad
                k += m
                m = 0
    bad = _copy_rows(offs, rows, m, data, out, first, last, &at, new_offsets + k)
    if bad >= 0:
        return bad
    if k + m != count:
        return -2
    total[0] = at
    return -1


cdef int64_t _filter_dense(const offset_t* offs, Py_ssize_t n, const uint64_t* words,
                           const uint8_t* data, uint8_t* out, Py_ssize_t count,
                           offset_t* new_offsets, int64_t* total) noexcept nogil:
    """Many kept rows, in one pass without a branch on the mask: each short value is copied
    as 16 bytes where the next kept one goes, and the place moves on by its length only when
    it is kept (and its offset is written where the next kept one's goes, so the offsets need
    one spare slot; the data 16 spare bytes).  Every row's offsets are checked against
    ``offs[0] <= a <= b <= offs[n]`` (``offs[n] <= size`` checked by the caller): the bytes
    written never pass ``offs[n] - offs[0]`` plus the spare.  -1, the bad row, or -2: the
    mask keeps another number of rows than ``count``."""
    cdef Py_ssize_t i, k = 0
    cdef int64_t a, b, length, at = 0, first = offs[0], last = offs[n]
    cdef int64_t wide = last - 16  # (a value starting at or before this has 16 bytes to read)
    cdef uint64_t w = 0
    cdef uint8_t keep
    for i in range(n):
        if i & 63 == 0:
            w = _word(words, i >> 6, n)
        a = offs[i]
        b = offs[i + 1]
        if a < first or b < a or b > last:
            return i
        length = b - a
        keep = (w >> (i & 63)) & 1
        if length <= 16 and a <= wide:
            memcpy(out + at, data + a, 16)
        elif keep:
            memcpy(out + at, data + a, length)
        at += length * keep
        new_offsets[k + 1] = <offset_t>at
        k += keep
        if k > count:  # (tested here, not on ``keep``, so that no branch follows the mask)
            return -2
    if k != count:
        return -2
    total[0] = at
    return -1


def filter_binary(offsets, data, mask, Py_ssize_t count):
    """The binary/string values (``offsets``: the ``n + 1`` offsets of the rows, int32 or
    int64) where ``mask`` (a ``Mask``, or bool one per row) keeps the row: (new offsets from
    0, of the same width; new data)."""
    # (chosen here by the offsets' width: a def function's fused-type dispatch cost as much as
    # a 1%-selective filter's loop over 100,000 rows)
    if not isinstance(offsets, np.ndarray):
        offsets = np.asarray(offsets)
    if offsets.dtype.itemsize == 4:
        return _filter_binary[int32_t](offsets, data, mask, count)
    if offsets.dtype.itemsize == 8:
        return _filter_binary[int64_t](offsets, data, mask, count)
    raise ArrowInvalid(f"selection: offsets are int32 or int64, not {offsets.dtype}")


cdef tuple _filter_binary(const offset_t[::1] offsets, data, mask, Py_ssize_t count):
    cdef Mask kept = _kept(mask, count)
    cdef Py_ssize_t n = kept.length
    cdef int64_t total = 0, bad = -1, size, first, last
    cdef Py_buffer db
    cdef const uint8_t* dp
    cdef offset_t* no
    cdef uint8_t* o
    cdef bint sparse = _sparse(count, n)
    offset_dtype = np.int32 if offset_t is int32_t else np.int64
    if offsets.shape[0] != n + 1:
        raise ArrowInvalid(f"selection: {offsets.shape[0]} offsets for {n} rows")
    if n == 0 or count == 0:
        return np.zeros(count + 1, dtype=offset_dtype), np.empty(0, np.uint8)
    # (one spare offset and 16 spare bytes: the dense loop writes a row's place before it
    # knows whether the row is kept)
    new_offsets = _empty(count + 2, offset_dtype)
    no = <offset_t*>_address(new_offsets)
    no[0] = 0
    _acquire(data, &db)
    try:
        dp, size = <const uint8_t*>db.buf, db.len
        first, last = offsets[0], offsets[n]
        if first < 0 or last < first or last > size:
            _bad_offsets(offsets, 0 if first < 0 or first > size else n - 1, size)
        # (the kept values fit the bytes of all the values: the output is sized so, and only
        # the pages written are ever touched)
        out = _empty(last - first + 16, np.uint8)
        o = <uint8_t*>_address(out)
        with nogil:
            if sparse:
                bad = _filter_sparse(&offsets[0], n, kept._ptr, dp, o, count, no, &total)
            else:
                bad = _filter_dense(&offsets[0], n, kept._ptr, dp, o, count, no, &total)
    finally:
        PyBuffer_Release(&db)
    if bad == -2:
        _changed()
    if bad >= 0:
        _bad_offsets(offsets, bad, size)
    if sparse:  # (a small result does not keep the data's whole allocation alive)
        return new_offsets[:count + 1], out[:total].copy()
    return new_offsets[:count + 1], out[:total]


def take_fixed(src, Py_ssize_t start, Py_ssize_t width, const int64_t[::1] indices):
    """The ``width``-byte values at ``indices`` (checked by the caller to lie within the
    ``length`` values from value ``start``), packed into new memory (uint8)."""
    cdef const uint8_t[::1] s = _bytes_of(src)
    cdef Py_ssize_t n = indices.shape[0], i
    out = _empty(n * width, np.uint8)
    cdef uint8_t[::1] o = out
    cdef const uint8_t* base
    _check_indices(indices, (s.shape[0] // width) - start if width > 0 else -1)
    if n == 0:
        return out
    base = &s[0] + start * width
    with nogil:
        if width == 8:
            for i in range(n):
                (<uint64_t*>&o[0])[i] = (<const uint64_t*>base)[indices[i]]
        elif width == 4:
            for i in range(n):
                (<uint32_t*>&o[0])[i] = (<const uint32_t*>base)[indices[i]]
        elif width == 1:
            for i in range(n):
                o[i] = base[indices[i]]
        else:
            for i in range(n):
                memcpy(&o[0] + i * width, base + indices[i] * width, width)
    return out


cdef _check_indices(const int64_t[::1] indices, int64_t limit):
    cdef Py_ssize_t i, bad = -1
    with nogil:
        for i in range(indices.shape[0]):
            if indices[i] < 0 or indices[i] >= limit:
                bad = i
                break
    if bad >= 0:
        raise ArrowInvalid(f"take: index {indices[bad]} (at {bad}) is outside the {max(limit, 0)} "
                           f"values the buffer holds")


def take_bits(src, int64_t bit_offset, const int64_t[::1] indices):
    """Bits ``bit_offset + indices`` of bitmap ``src``, packed from bit 0: (bitmap, set)."""
    cdef const uint8_t[::1] s = _bytes_of(src)
    cdef Py_ssize_t n = indices.shape[0], i
    cdef int64_t ones = 0, bit
    _check_indices(indices, s.shape[0] * 8 - bit_offset if bit_offset >= 0 else -1)
    out = np.zeros((n + 7) // 8, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    with nogil:
        for i in range(n):
            bit = bit_offset + indices[i]
            if (s[bit >> 3] >> (bit & 7)) & 1:
                o[i >> 3] |= <uint8_t>(1 << (i & 7))
                ones += 1
    return out, ones


def take_binary(const offset_t[::1] offsets, data, const int64_t[::1] indices):
    """The binary/string values at ``indices`` (``offsets``: the ``n + 1`` offsets of the
    rows): (new offsets from 0, of the same width; new data).  A total past the offsets'
    width raises ArrowInvalid (use the large type)."""
    cdef const uint8_t[::1] d = _bytes_of(data)
    cdef Py_ssize_t n = indices.shape[0], i, j
    cdef int64_t total = 0, a, b, at = 0, size = d.shape[0], bad = -1
    _check_indices(indices, offsets.shape[0] - 1)
    with nogil:
        for i in range(n):
            j = indices[i]
            a = offsets[j]
            b = offsets[j + 1]
            if a < 0 or b < a or b > size:
                bad = j
                break
            total += b - a
    if bad >= 0:
        _bad_offsets(offsets, bad, size)
    if offset_t is int32_t and total > 2**31 - 1:
        raise ArrowInvalid(f"take: {total} bytes of values do not fit 32-bit offsets (cast to "
                           f"the large type first)")
    new_offsets = np.zeros(n + 1, dtype=np.asarray(offsets).dtype)
    cdef offset_t[::1] no = new_offsets
    out = _empty(total, np.uint8)
    cdef uint8_t[::1] o = out
    with nogil:
        for i in range(n):
            j = indices[i]
            a = offsets[j]
            b = offsets[j + 1]
            if b > a:
                memcpy(&o[0] + at, &d[0] + a, b - a)
            at += b - a
            no[i + 1] = <offset_t>at
    return new_offsets, out


def take_list_ranges(const offset_t[::1] offsets, const int64_t[::1] rows, nulls,
                     int64_t child_length):
    """What taking lists ``rows`` (``offsets``: the ``n + 1`` offsets of the lists into a child
    of ``child_length`` values; ``nulls``: bool per row or None, a null row covering nothing)
    takes of their child: (the new offsets from 0, int64; the child positions they cover,
    int64; -1), or (None, None, the place in ``rows`` of the first row whose offsets are not
    within the child or decrease).  One pass over the rows' offsets, where numpy took five
    (gathers, a check, a cumulative sum, a repeat) and their temporaries."""
    cdef Py_ssize_t m = rows.shape[0], i
    cdef int64_t a, b, at = 0, t, bad = -1
    cdef const uint8_t[::1] skip
    cdef bint has_nulls = nulls is not None
    _check_indices(rows, offsets.shape[0] - 1)
    if has_nulls:
        skip = _mask_bytes(nulls)
        if skip.shape[0] != m:
            raise ArrowInvalid(f"take: {skip.shape[0]} null flags for {m} rows")
    new_offsets = _empty(m + 1, np.int64)
    cdef int64_t[::1] no = new_offsets
    starts = _empty(m, np.int64)
    cdef int64_t[::1] st = starts
    no[0] = 0
    with nogil:
        for i in range(m):
            a = offsets[rows[i]]
            b = offsets[rows[i] + 1]
            if a < 0 or b < a or b > child_length:
                bad = i
                break
            if has_nulls and skip[i]:
                b = a
            st[i] = a
            at += b - a
            no[i + 1] = at
    if bad >= 0:
        return None, None, bad
    picks = _empty(at, np.int64)
    cdef int64_t[::1] pk = picks
    with nogil:
        for i in range(m):
            a = st[i]
            for t in range(no[i + 1] - no[i]):
                pk[no[i] + t] = a + t
    return new_offsets, picks, -1
