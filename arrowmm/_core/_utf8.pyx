"""UTF-8 validation for Arrow string columns.

Arrow ``utf8``/``large_utf8`` data must be valid UTF-8, but a file can hold
anything.  Decoding every value with Python just to validate is slow, so
these kernels check raw bytes in C (8-byte ASCII fast path) with the same
rules as Python's strict decoder: no overlong forms, no surrogates, nothing
above U+10FFFF, no truncated sequences.
"""
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint8_t, int32_t, int64_t
from arrowmm._core._bits cimport bit_is_set

import numpy as np

from arrowmm._core._bitmap import _byte_buffer, _offsets_array, _validity_buffer
from arrowmm.errors import ArrowInvalid

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* The bytes of s[0:n] before the first 64-byte block holding a byte
       above 0x7f, n if none does: 64 bytes OR-ed per step (vectorised by the
       compiler), the usual string column being all ASCII.  The blocks before
       end on a character boundary: a validator may start there. */
    static int64_t arrowmm_ascii_prefix(const uint8_t *s, int64_t n) {
        uint64_t acc = 0, w[8];
        int64_t i = 0;
        for (; i + 64 <= n; i += 64) {
            memcpy(w, s + i, 64);
            acc = w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7];
            if (acc & 0x8080808080808080ULL) return i;
        }
        acc = 0;
        for (int64_t j = i; j < n; j++) acc |= s[j];
        return (acc & 0x80) == 0 ? n : i;
    }
    /* Index of the first byte of the first invalid or truncated UTF-8
       sequence in s[0:n], or -1 if all of it is valid (Python's rules). */
    static int64_t arrowmm_utf8_invalid_at(const uint8_t *s, int64_t n) {
        int64_t i = 0;
        while (i < n) {
            uint8_t c, c1, lo, hi;
            if (n - i >= 8) {
                uint64_t w;
                memcpy(&w, s + i, 8);
                if ((w & 0x8080808080808080ULL) == 0) { i += 8; continue; }
            }
            c = s[i];
            if (c < 0x80) { i += 1; continue; }
            if (c < 0xC2) return i;                      /* continuation, C0, C1 */
            if (c < 0xE0) {
                if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80) return i;
                i += 2; continue;
            }
            if (c < 0xF0) {
                if (n - i < 3) return i;
                c1 = s[i + 1];
                lo = (c == 0xE0) ? 0xA0 : 0x80;          /* overlong */
                hi = (c == 0xED) ? 0x9F : 0xBF;          /* surrogates */
                if (c1 < lo || c1 > hi || (s[i + 2] & 0xC0) != 0x80) return i;
                i += 3; continue;
            }
            if (c < 0xF5) {
                if (n - i < 4) return i;
                c1 = s[i + 1];
                lo = (c == 0xF0) ? 0x90 : 0x80;          /* overlong */
                hi = (c == 0xF4) ? 0x8F : 0xBF;          /* > U+10FFFF */
                if (c1 < lo || c1 > hi || (s[i + 2] & 0xC0) != 0x80
                        || (s[i + 3] & 0xC0) != 0x80) return i;
                i += 4; continue;
            }
            return i;
        }
        return -1;
    }
    """
    int64_t arrowmm_utf8_invalid_at(const uint8_t *s, int64_t n) noexcept nogil
    int64_t arrowmm_ascii_prefix(const uint8_t *s, int64_t n) noexcept nogil

# The validator's C pointer, for other modules (arrowmm._core._offsets) to call nogil.
_utf8_invalid_at_capsule = PyCapsule_New(<void*>arrowmm_utf8_invalid_at,
                                         b"arrowmm._core._utf8.utf8_invalid_at", NULL)

ctypedef fused offset_t:
    int32_t
    int64_t

cdef enum:
    _BAD_OFFSETS = 1
    _BAD_UTF8 = 2


# ---------------------------------------------------------------- arguments

# ---------------------------------------------------------------- kernels

cdef inline bint _is_cont(uint8_t c) noexcept nogil:
    return (c & 0xC0) == 0x80


cdef bint _offsets_fall(const offset_t* o, int64_t length) noexcept nogil:
    """Whether some offset of o[0..length] is below the one before it: a branch-free pass over
    blocks the compiler vectorises (a loop that stops at the first drop is not), stopping at
    the end of the block of the first drop."""
    cdef int64_t i, start = 1, stop
    cdef int bad = 0
    while start <= length and not bad:
        stop = start + 4096 if length + 1 - start > 4096 else length + 1
        for i in range(start, stop):
            bad |= o[i] < o[i - 1]
        start = stop
    return bad != 0


cdef int64_t _slots_bad(const uint8_t[::1] data, const offset_t[::1] o, int64_t length,
                        const uint8_t[::1] bits, bint has_bits, int64_t bit_offset,
                        int* kind, int64_t* where) noexcept nogil:
    """First slot whose offsets or (non-null) bytes are bad, else -1.

    Fast path: validate data[o[0]:o[length]] as one run, then make sure no
    value boundary falls on a continuation byte; together these prove every
    value valid.  A run of ASCII (no continuation bytes at all) needs only
    the offsets in order.  Anything suspicious falls back to the exact
    per-slot check, which ignores null slots (as pyarrow does).
    """
    cdef int64_t n = data.shape[0]
    cdef int64_t run_start = o[0], run_end = o[length]
    cdef int64_t i, s, e, p, plain
    cdef bint suspicious = False
    cdef bint ascii = True
    if run_end > run_start:
        plain = arrowmm_ascii_prefix(&data[run_start], run_end - run_start)
        ascii = plain == run_end - run_start
        if not ascii:
            suspicious = arrowmm_utf8_invalid_at(&data[run_start + plain],
                                                 run_end - run_start - plain) >= 0
    if not suspicious and ascii:
        suspicious = _offsets_fall(&o[0], length)
    elif not suspicious:
        for i in range(1, length + 1):
            s = o[i - 1]
            e = o[i]
            if e < s or (e < run_end and _is_cont(data[e])):
                suspicious = True
                break
    if not suspicious:
        return -1
    for i in range(length):
        s = o[i]
        e = o[i + 1]
        if s < 0 or e < s or e > n:
            kind[0] = _BAD_OFFSETS
            return i
        if e == s or (has_bits and not bit_is_set(bits, bit_offset + i)):
            continue
        p = arrowmm_utf8_invalid_at(&data[s], e - s)
        if p >= 0:
            kind[0] = _BAD_UTF8
            where[0] = p
            return i
    return -1


cdef int64_t _run_slots(const offset_t[::1] o, const uint8_t[::1] data, int64_t length,
                        const uint8_t[::1] bits, bint has_bits, int64_t bit_offset,
                        int* kind, int64_t* where):
    cdef int64_t r
    with nogil:
        r = _slots_bad(data, o, length, bits, has_bits, bit_offset, kind, where)
    return r


# ---------------------------------------------------------------- API

def validate_utf8(buf):
    """True if the whole buffer is valid UTF-8 (same rules as ``bytes.decode``)."""
    b = _byte_buffer(buf, "buffer")
    cdef const uint8_t[::1] data = b
    cdef int64_t n = data.shape[0]
    cdef int64_t bad = -1
    if n == 0:
        return True
    with nogil:
        bad = arrowmm_utf8_invalid_at(&data[0], n)
    return bad < 0


def check_utf8_offsets(data, offsets, int64_t length, validity, int64_t bit_offset, what):
    """Raise ArrowInvalid naming the first non-null slot that is not valid UTF-8.

    Offsets are expected to be validated already, but are still checked
    against ``len(data)`` so that bad ones raise instead of reading out of
    bounds.
    """
    db = _byte_buffer(data, "data")
    cdef const uint8_t[::1] d = db
    arr = _offsets_array(offsets)
    cdef int64_t n = d.shape[0]
    cdef int64_t noff = arr.shape[0]
    cdef int64_t first, last, bad
    cdef int kind = 0
    cdef int64_t where = 0
    if length < 0:
        raise ArrowInvalid(f"UTF-8 check of {what!r}: length={length} < 0")
    if length == 0:
        return
    if noff - 1 < length:
        raise ArrowInvalid(
            f"offsets of {what!r}: {noff} offsets for length {length} "
            f"(need length+1={int(length) + 1})")
    vb = _validity_buffer(validity, bit_offset, length, what)
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    first = arr[0]
    last = arr[length]
    if first < 0 or last < first or last > n:
        raise ArrowInvalid(
            f"offsets of {what!r}: offset[0]={first}, offset[{length}]={last} "
            f"outside data of {n} bytes (need 0 <= offset[0] <= offset[{length}] <= {n})")
    if arr.dtype.itemsize == 4:
        bad = _run_slots[int32_t](arr, d, length, bits, vb is not None, bit_offset, &kind, &where)
    else:
        bad = _run_slots[int64_t](arr, d, length, bits, vb is not None, bit_offset, &kind, &where)
    if bad < 0:
        return
    s = int(arr[bad])
    e = int(arr[bad + 1])
    if kind == _BAD_OFFSETS:
        raise ArrowInvalid(
            f"offsets of {what!r}: offset[{bad}]={s}, offset[{bad + 1}]={e} "
            f"(need 0 <= offset[{bad}] <= offset[{bad + 1}] <= data size {n})")
    raise ArrowInvalid(
        f"UTF-8 of {what!r}: value[{bad}] (data[{s}:{e}]) is not valid UTF-8: "
        f"bad sequence at byte {where} of the value (byte 0x{d[s + where]:02x})")
