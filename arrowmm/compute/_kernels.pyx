# cython: language_level=3, boundscheck=False, wraparound=False
"""Whole-column kernels behind ``arrowmm.compute``: comparisons, set membership, Kleene logic
over masks, and selection (by mask) and take (by indices) of fixed-width values, bit-packed
booleans and validity bitmaps, and variable-length binary/string values.

Why here, in C: a filter over a mapped file selected rows as one Python ``slice`` per run of
rows (200,000 of them for a 1%-selective filter over 10M rows) and joined them in Python; here
each column costs one pass over its bytes with the GIL released, and no Python object per row.

Masks are numpy ``bool`` arrays, one byte a row (``values``, and ``valid`` or None: all
valid); a mask that selects rows is True where the row is kept.  Offsets are checked as they
are read (each value within the data buffer, not decreasing): a damaged offsets buffer raises
``ArrowInvalid`` naming the row, never reads outside the buffer.
"""

from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)
from libc.string cimport memcmp, memcpy, memset

from arrowmm._core._offsets cimport index_t as int_t, offset_t

import numpy as np

from arrowmm.errors import ArrowInvalid

__all__ = ["EQ", "NE", "LT", "LE", "GT", "GE", "compare_numeric", "compare_binary",
           "isin_binary", "kleene_and", "kleene_or", "filter_fixed", "filter_bits",
           "filter_binary", "take_fixed", "take_bits", "take_binary"]

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
    out = np.empty(n, dtype=np.bool_)
    cdef uint8_t[::1] o = out.view(np.uint8)
    if n:
        with nogil:
            _cmp_int(&x[0], n, op, s, &o[0])
    return out


def compare_float(const float_t[::1] x, int op, double scalar):
    """``x op scalar`` for floats ``x`` (IEEE: NaN compares false, except ``!=``)."""
    cdef Py_ssize_t n = x.shape[0]
    out = np.empty(n, dtype=np.bool_)
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
            return _UFUNCS[op](x, np.float64(scalar))
        return compare_float(x, op, float(scalar))
    return _UFUNCS[op](x, x.dtype.type(scalar))


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


cdef int64_t _compare_binary(const offset_t* offs, Py_ssize_t n, const uint8_t* data,
                             int64_t size, int op, const uint8_t* s, int64_t ns,
                             uint8_t* out) noexcept nogil:
    """-1 when every row was compared, else the row whose offsets are out of range."""
    cdef Py_ssize_t i
    cdef int64_t a, b
    for i in range(n):
        a = offs[i]
        b = offs[i + 1]
        if a < 0 or b < a or b > size:
            return i
        out[i] = _holds(_cmp_bytes(data + a, b - a, s, ns), op)
    return -1


def compare_binary(data, const offset_t[::1] offsets, int op, const uint8_t[::1] scalar):
    """``value op scalar`` for each binary/string value (bytewise, as pyarrow orders them):
    ``offsets`` the ``n + 1`` offsets of the rows into ``data``."""
    cdef const uint8_t[::1] d = _bytes_of(data)
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef int64_t bad = -1
    cdef uint8_t zero = 0
    out = np.empty(max(n, 0), dtype=np.bool_)
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
    out = np.empty(n, dtype=np.bool_)
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
    valid = np.empty(n, dtype=np.bool_)
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

cdef _bytes_of(obj):
    """``obj`` (a buffer-protocol object) as a 1-D uint8 memoryview, without copying."""
    if obj is None:
        return np.zeros(0, dtype=np.uint8)
    arr = np.frombuffer(obj, dtype=np.uint8) if not isinstance(obj, np.ndarray) else obj
    return arr.reshape(-1).view(np.uint8)


cdef _bad_offsets(offsets, int64_t row, int64_t size):
    raise ArrowInvalid(f"offsets of row {row}: [{offsets[row]}, {offsets[row + 1]}) is not "
                       f"within the {size}-byte data buffer (or decreases)")


cdef void _filter_fixed(const uint8_t* src, Py_ssize_t width, const uint8_t* mask,
                        Py_ssize_t n, uint8_t* dst) noexcept nogil:
    # (8, 4, 2, 1 bytes: every value is written where the next kept one goes, and the place
    # moves on only when it is kept: no branch to mispredict; ``dst`` has one spare value)
    cdef Py_ssize_t i, k = 0
    if width == 8:
        for i in range(n):
            (<uint64_t*>dst)[k] = (<const uint64_t*>src)[i]
            k += mask[i] != 0
    elif width == 4:
        for i in range(n):
            (<uint32_t*>dst)[k] = (<const uint32_t*>src)[i]
            k += mask[i] != 0
    elif width == 2:
        for i in range(n):
            (<uint16_t*>dst)[k] = (<const uint16_t*>src)[i]
            k += mask[i] != 0
    elif width == 1:
        for i in range(n):
            dst[k] = src[i]
            k += mask[i] != 0
    else:
        for i in range(n):
            if mask[i]:
                memcpy(dst + k * width, src + i * width, width)
                k += 1


cdef _mask_bytes(mask):
    """A mask (bool, one per row) as a 1-D uint8 array over the same memory."""
    arr = np.asarray(mask)
    if arr.ndim != 1 or arr.dtype.itemsize != 1:
        raise ArrowInvalid(f"selection: a mask is one bool per row, got {arr.dtype} of shape "
                           f"{arr.shape}")
    return arr.view(np.uint8)


def _check_mask(mask, Py_ssize_t count):
    # (numpy counts a bool mask in SIMD: 20x the speed of a byte loop; a mask is checked once
    # per column it selects from)
    cdef Py_ssize_t k = np.count_nonzero(mask)
    if k != count:
        raise ArrowInvalid(f"selection: the mask selects {k} rows, not {count}")


cdef inline uint64_t _word(const uint8_t* p) noexcept nogil:
    """Eight mask bytes as one word (unaligned; zero when none of the eight rows is kept)."""
    cdef uint64_t w
    memcpy(&w, p, 8)
    return w


cdef inline bint _sparse(Py_ssize_t count, Py_ssize_t n) noexcept nogil:
    """Whether few enough rows are kept for the sparse loops: below one in eight, a word of
    eight unkept rows is skipped at once, and the values of the rows skipped are never read
    (a 1%-selective filter reads 1/8 of a column's cache lines instead of all of them)."""
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


cdef Py_ssize_t _filter_fixed_sparse(const uint8_t* src, Py_ssize_t width, const uint8_t* mask,
                                     Py_ssize_t n, Py_ssize_t count,
                                     uint8_t* dst) noexcept nogil:
    """``_filter_fixed`` for a few kept rows: whole words of unkept rows skipped; at most
    ``count`` values written (the mask was counted, but it is the caller's memory)."""
    cdef Py_ssize_t i = 0, j, end, k = 0
    while i < n and k < count:
        if n - i >= 8 and _word(mask + i) == 0:
            i += 8
            continue
        end = i + 8 if n - i >= 8 else n
        for j in range(i, end):
            if mask[j] and k < count:
                _copy_value(dst + k * width, src + j * width, width)
                k += 1
        i = end
    return k


def filter_fixed(src, Py_ssize_t start, Py_ssize_t width, mask, Py_ssize_t count):
    """The ``width``-byte values ``start`` (a value index) on of ``src`` where ``mask`` (bool,
    one per row) is True, ``count`` of them, packed into new memory (uint8)."""
    cdef const uint8_t[::1] s = _bytes_of(src)
    marr = _mask_bytes(mask)
    cdef const uint8_t[::1] m = marr
    cdef Py_ssize_t n = m.shape[0]
    if width <= 0 or start < 0 or (s.shape[0] // width) - start < n:
        raise ArrowInvalid(f"selection: a {s.shape[0]}-byte buffer holds no {n} values of "
                           f"{width} bytes from value {start}")
    _check_mask(marr, count)
    spare = np.empty((count + 1) * width, dtype=np.uint8)  # (the branch-free loops' spare)
    cdef uint8_t[::1] o = spare
    if count:
        with nogil:
            if _sparse(count, n):
                _filter_fixed_sparse(&s[0] + start * width, width, &m[0], n, count, &o[0])
            else:
                _filter_fixed(&s[0] + start * width, width, &m[0], n, &o[0])
    return spare[:count * width]


def filter_bits(src, int64_t bit_offset, mask, Py_ssize_t count):
    """Bits ``bit_offset`` on of bitmap ``src`` where ``mask`` is True, ``count`` of them,
    packed from bit 0: (bitmap, number of bits set)."""
    cdef const uint8_t[::1] s = _bytes_of(src)
    marr = _mask_bytes(mask)
    cdef const uint8_t[::1] m = marr
    cdef Py_ssize_t n = m.shape[0], i
    cdef int64_t k = 0, ones = 0, bit
    if bit_offset < 0 or (s.shape[0] * 8) - bit_offset < n:
        raise ArrowInvalid(f"selection: a {s.shape[0]}-byte bitmap holds no {n} bits from "
                           f"bit {bit_offset}")
    _check_mask(marr, count)
    out = np.zeros((count + 7) // 8, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    cdef Py_ssize_t j, end
    with nogil:
        i = 0
        while i < n and k < count:
            if n - i >= 8 and _word(&m[0] + i) == 0:
                i += 8  # (eight unkept rows at once)
                continue
            end = i + 8 if n - i >= 8 else n
            for j in range(i, end):
                if m[j] and k < count:
                    bit = bit_offset + j
                    if (s[bit >> 3] >> (bit & 7)) & 1:
                        o[k >> 3] |= <uint8_t>(1 << (k & 7))
                        ones += 1
                    k += 1
            i = end
    return out, ones


cdef int64_t _filter_sizes(const offset_t* offs, Py_ssize_t n, const uint8_t* mask,
                           int64_t size, int64_t* total) noexcept nogil:
    """The bytes of the selected values (every row's offsets checked, selected or not)."""
    cdef Py_ssize_t i
    cdef int64_t a, b, t = 0
    for i in range(n):
        a = offs[i]
        b = offs[i + 1]
        if a < 0 or b < a or b > size:
            return i
        t += (b - a) * (mask[i] != 0)
    total[0] = t
    return -1


cdef void _filter_runs(const offset_t* offs, Py_ssize_t n, const uint8_t* mask,
                       const uint8_t* data, uint8_t* out, offset_t* new_offsets) noexcept nogil:
    """Each run of selected rows copied in one piece, its offsets shifted by one amount."""
    cdef Py_ssize_t i = 0, j, r, k = 0
    cdef int64_t at = 0, shift, length, c
    while i < n:
        if not mask[i]:
            i += 1
            continue
        j = i + 1
        while j < n and mask[j]:
            j += 1
        length = offs[j] - offs[i]
        if length > 16:
            memcpy(out + at, data + offs[i], length)
        else:  # (most runs are a short value or two: a call costs more than the copy)
            for c in range(length):
                out[at + c] = data[offs[i] + c]
        shift = at - offs[i]
        for r in range(i, j):
            k += 1
            new_offsets[k] = <offset_t>(offs[r + 1] + shift)
        at += length
        i = j


cdef int64_t _filter_sizes_sparse(const offset_t* offs, Py_ssize_t n, const uint8_t* mask,
                                  int64_t size, int64_t* total) noexcept nogil:
    """``_filter_sizes`` for a few kept rows: only the kept rows' offsets are read (and
    checked: within the data, not decreasing), whole words of unkept rows skipped."""
    cdef Py_ssize_t i = 0, j, end
    cdef int64_t a, b, t = 0
    while i < n:
        if n - i >= 8 and _word(mask + i) == 0:
            i += 8
            continue
        end = i + 8 if n - i >= 8 else n
        for j in range(i, end):
            if mask[j]:
                a = offs[j]
                b = offs[j + 1]
                if a < 0 or b < a or b > size:
                    return j
                t += b - a
        i = end
    total[0] = t
    return -1


cdef int64_t _filter_values_sparse(const offset_t* offs, Py_ssize_t n, const uint8_t* mask,
                                   const uint8_t* data, uint8_t* out, int64_t room,
                                   Py_ssize_t count, offset_t* new_offsets) noexcept nogil:
    """The kept values copied one by one (their offsets re-read and checked against the room
    left: the caller's memory may have changed since it was sized); -1, or the bad row."""
    cdef Py_ssize_t i = 0, j, end, k = 0
    cdef int64_t a, b, c, at = 0
    while i < n and k < count:
        if n - i >= 8 and _word(mask + i) == 0:
            i += 8
            continue
        end = i + 8 if n - i >= 8 else n
        for j in range(i, end):
            if mask[j] and k < count:
                a = offs[j]
                b = offs[j + 1]
                if a < 0 or b < a or b - a > room - at:
                    return j
                if b - a > 16:
                    memcpy(out + at, data + a, b - a)
                else:
                    for c in range(b - a):
                        out[at + c] = data[a + c]
                at += b - a
                k += 1
                new_offsets[k] = <offset_t>at
        i = end
    return -1


def filter_binary(const offset_t[::1] offsets, data, mask, Py_ssize_t count):
    """The binary/string values (``offsets``: the ``n + 1`` offsets of the rows) where
    ``mask`` is True: (new offsets from 0, of the same width; new data)."""
    cdef const uint8_t[::1] d = _bytes_of(data)
    marr = _mask_bytes(mask)
    cdef const uint8_t[::1] m = marr
    cdef Py_ssize_t n = m.shape[0]
    cdef int64_t total = 0, bad = -1
    cdef uint8_t zero = 0
    if offsets.shape[0] != n + 1:
        raise ArrowInvalid(f"selection: {offsets.shape[0]} offsets for {n} rows")
    _check_mask(marr, count)
    new_offsets = np.zeros(count + 1, dtype=np.asarray(offsets).dtype)
    cdef offset_t[::1] no = new_offsets
    cdef bint sparse = _sparse(count, n)
    if n:
        with nogil:
            if sparse:
                bad = _filter_sizes_sparse(&offsets[0], n, &m[0], d.shape[0], &total)
            else:
                bad = _filter_sizes(&offsets[0], n, &m[0], d.shape[0], &total)
    if bad >= 0:
        _bad_offsets(offsets, bad, d.shape[0])
    out = np.empty(total, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    if n and count:
        with nogil:
            if sparse:
                bad = _filter_values_sparse(&offsets[0], n, &m[0],
                                            &d[0] if d.shape[0] else &zero,
                                            &o[0] if total else &zero, total, count, &no[0])
            else:
                _filter_runs(&offsets[0], n, &m[0], &d[0] if d.shape[0] else &zero,
                             &o[0] if total else &zero, &no[0])
    if bad >= 0:
        _bad_offsets(offsets, bad, d.shape[0])
    return new_offsets, out


def take_fixed(src, Py_ssize_t start, Py_ssize_t width, const int64_t[::1] indices):
    """The ``width``-byte values at ``indices`` (checked by the caller to lie within the
    ``length`` values from value ``start``), packed into new memory (uint8)."""
    cdef const uint8_t[::1] s = _bytes_of(src)
    cdef Py_ssize_t n = indices.shape[0], i
    out = np.empty(n * width, dtype=np.uint8)
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
    out = np.empty(total, dtype=np.uint8)
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
