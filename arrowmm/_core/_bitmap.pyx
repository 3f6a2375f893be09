"""Bit-level kernels for Arrow validity and boolean bitmaps.

Arrow packs booleans and validity flags LSB-first, eight per byte, starting at
an arbitrary bit offset (sliced arrays).  NumPy has no bit type and
``np.unpackbits`` cannot start mid-byte, so these kernels unpack, count,
re-pack and combine such bitmaps in C.  Offsets and lengths come from
untrusted files: every one is checked against the real buffer size before a
byte is read or an output is allocated.
"""
from libc.stdint cimport uint8_t, uint64_t, int64_t, INT64_MAX
from libc.string cimport memcpy

import numpy as np

from arrowmm.errors import ArrowInvalid

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(_MSC_VER) && !defined(__clang__)
    #include <intrin.h>
    #define __builtin_popcountll(x) ((int)__popcnt64(x))
    #endif
    static inline uint64_t arrowmm_load_le64(const uint8_t *p) {
        uint64_t v; memcpy(&v, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
    #endif
        return v;
    }
    static inline void arrowmm_store_le64(uint8_t *p, uint64_t v) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
    #endif
        memcpy(p, &v, 8);
    }
    """
    int __builtin_popcountll(unsigned long long x) noexcept nogil
    uint64_t arrowmm_load_le64(const uint8_t *p) noexcept nogil
    void arrowmm_store_le64(uint8_t *p, uint64_t v) noexcept nogil

# _EXPAND[b] holds, in little-endian byte order, eight bytes that are bit k of b.
cdef uint64_t _EXPAND[256]


cdef void _init_expand() noexcept:
    cdef int b, k
    cdef uint64_t w
    for b in range(256):
        w = 0
        for k in range(8):
            if (b >> k) & 1:
                w |= (<uint64_t>1) << (8 * k)
        _EXPAND[b] = w


_init_expand()


# ------------------------------------- argument checks (shared with _offsets, _utf8, _pylist)

def _byte_buffer(obj, str name="buffer"):
    """``obj`` as a 1-D unsigned-byte buffer without copying (read-only is fine)."""
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            raise TypeError(f"{name} must be a C-contiguous buffer")
        return obj.reshape(-1).view(np.uint8)
    mv = memoryview(obj)
    if not mv.c_contiguous:
        raise TypeError(f"{name} must be a C-contiguous buffer")
    if mv.ndim != 1 or mv.format != "B":
        mv = mv.cast("B")
    return mv


cdef int _check_bits(int64_t nbytes, int64_t bit_offset, int64_t length,
                     str name) except -1:
    """Raise unless bits [bit_offset, bit_offset + length) lie in ``nbytes`` bytes."""
    cdef int64_t avail = nbytes * 8 if nbytes <= INT64_MAX // 8 else INT64_MAX
    if bit_offset < 0:
        raise ArrowInvalid(f"{name}: bit_offset={bit_offset} < 0")
    if length < 0:
        raise ArrowInvalid(f"{name}: length={length} < 0")
    if bit_offset > avail or length > avail - bit_offset:
        raise ArrowInvalid(
            f"{name}: bit_offset {bit_offset} + length {length} = "
            f"{int(bit_offset) + length} bits needed, buffer holds {nbytes} bytes "
            f"({int(nbytes) * 8} bits)")
    return 0


def _offsets_array(obj):
    """``obj`` checked as a 1-D int32 or int64 offsets array, made contiguous."""
    if not isinstance(obj, np.ndarray) or obj.ndim != 1:
        raise TypeError("offsets must be a 1-D int32 or int64 numpy array")
    if obj.dtype.kind != "i" or obj.dtype.itemsize not in (4, 8) or not obj.dtype.isnative:
        raise TypeError(f"offsets must be int32 or int64, got {obj.dtype}")
    return np.ascontiguousarray(obj)


def _validity_buffer(validity, int64_t bit_offset, int64_t length, what):
    """Byte buffer of a validity bitmap checked to cover ``length`` bits (None stays None)."""
    if validity is None:
        return None
    b = _byte_buffer(validity, "validity")
    cdef const uint8_t[::1] bits = b
    _check_bits(bits.shape[0], bit_offset, length, f"validity bitmap of {what!r}")
    return b


# ---------------------------------------------------------------- kernels

cdef inline void _unpack(const uint8_t[::1] src, int64_t bit_off, int64_t length,
                         uint8_t[::1] out) noexcept nogil:
    cdef int64_t i = 0, pos
    while i < length and ((bit_off + i) & 7) != 0:
        pos = bit_off + i
        out[i] = (src[pos >> 3] >> (pos & 7)) & 1
        i += 1
    while length - i >= 8:
        arrowmm_store_le64(&out[i], _EXPAND[src[(bit_off + i) >> 3]])
        i += 8
    while i < length:
        pos = bit_off + i
        out[i] = (src[pos >> 3] >> (pos & 7)) & 1
        i += 1


cdef inline int64_t _count(const uint8_t[::1] src, int64_t bit_off,
                           int64_t length) noexcept nogil:
    cdef int64_t first, last, i, total = 0
    cdef int lo, hi
    if length == 0:
        return 0
    first = bit_off >> 3
    last = (bit_off + length - 1) >> 3
    lo = bit_off & 7
    hi = (bit_off + length - 1) & 7
    if first == last:
        return __builtin_popcountll(src[first] & (0xFF << lo) & (0xFF >> (7 - hi)))
    total = __builtin_popcountll(src[first] & (0xFF << lo) & 0xFF)
    total += __builtin_popcountll(src[last] & (0xFF >> (7 - hi)))
    i = first + 1
    while last - i >= 8:
        total += __builtin_popcountll(arrowmm_load_le64(&src[i]))
        i += 8
    while i < last:
        total += __builtin_popcountll(src[i])
        i += 1
    return total


cdef inline void _copy_bits(const uint8_t[::1] src, int64_t bit_off, int64_t length,
                            uint8_t[::1] dst) noexcept nogil:
    """dst[:ceil(length/8)] = bits [bit_off, bit_off+length) of src at offset 0, pad zero.

    Reads no source byte past the one holding bit ``bit_off + length - 1``.
    """
    cdef int64_t nout = (length + 7) >> 3
    cdef int64_t j = bit_off >> 3
    cdef int64_t k = 0, avail
    cdef int s = bit_off & 7
    cdef uint64_t w
    cdef uint8_t v
    if nout == 0:
        return
    if s == 0:
        memcpy(&dst[0], &src[j], <size_t>nout)
    else:
        # src[j : j + avail] are the bytes holding wanted bits (nout or nout + 1)
        avail = ((s + length - 1) >> 3) + 1
        # a word step reads src[j + k : j + k + 9]
        while avail - k >= 9:
            w = arrowmm_load_le64(&src[j + k])
            w = (w >> s) | ((<uint64_t>src[j + k + 8]) << (64 - s))
            arrowmm_store_le64(&dst[k], w)
            k += 8
        while k < nout:
            v = src[j + k] >> s
            if avail - k >= 2:
                v = v | <uint8_t>(src[j + k + 1] << (8 - s))
            dst[k] = v
            k += 1
    if length & 7:
        dst[nout - 1] &= <uint8_t>((1 << (length & 7)) - 1)


cdef inline void _pack(const uint8_t[::1] vals, uint8_t[::1] out) noexcept nogil:
    cdef int64_t n = vals.shape[0]
    cdef int64_t i = 0, k = 0
    cdef uint64_t w, t
    cdef uint8_t v
    cdef int j
    while n - i >= 8:
        w = arrowmm_load_le64(&vals[i])
        # high bit of each byte of t is set iff that byte of w is nonzero
        t = ((w & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL) | w
        t = (t >> 7) & 0x0101010101010101ULL
        # gather byte k's low bit into bit 56 + k
        out[k] = <uint8_t>((t * 0x0102040810204080ULL) >> 56)
        i += 8
        k += 1
    if i < n:
        v = 0
        j = 0
        while i < n:
            if vals[i] != 0:
                v |= <uint8_t>(1 << j)
            i += 1
            j += 1
        out[k] = v


cdef inline void _and_into(uint8_t[::1] dst, const uint8_t[::1] other) noexcept nogil:
    cdef int64_t n = dst.shape[0]
    cdef int64_t i = 0
    while n - i >= 8:
        arrowmm_store_le64(&dst[i], arrowmm_load_le64(&dst[i]) & arrowmm_load_le64(&other[i]))
        i += 8
    while i < n:
        dst[i] &= other[i]
        i += 1


# ---------------------------------------------------------------- API

def unpack_bitmap(buf, int64_t bit_offset, int64_t length):
    """Bits [bit_offset, bit_offset+length) of an LSB-first bitmap as a bool array."""
    b = _byte_buffer(buf, "bitmap")
    cdef const uint8_t[::1] src = b
    _check_bits(src.shape[0], bit_offset, length, "bitmap")
    out = np.empty(length, dtype=np.uint8)
    cdef uint8_t[::1] dst = out
    with nogil:
        _unpack(src, bit_offset, length, dst)
    return out.view(np.bool_)


def count_set_bits(buf, int64_t bit_offset, int64_t length):
    """Number of 1 bits among bits [bit_offset, bit_offset+length)."""
    b = _byte_buffer(buf, "bitmap")
    cdef const uint8_t[::1] src = b
    cdef int64_t n
    _check_bits(src.shape[0], bit_offset, length, "bitmap")
    with nogil:
        n = _count(src, bit_offset, length)
    return n


def slice_bitmap(buf, int64_t bit_offset, int64_t length):
    """Bits [bit_offset, bit_offset+length) re-packed at offset 0 (pad bits zero)."""
    b = _byte_buffer(buf, "bitmap")
    cdef const uint8_t[::1] src = b
    _check_bits(src.shape[0], bit_offset, length, "bitmap")
    out = np.empty((length + 7) // 8, dtype=np.uint8)
    cdef uint8_t[::1] dst = out
    with nogil:
        _copy_bits(src, bit_offset, length, dst)
    return out


def pack_bitmap(values):
    """Pack a 1-D bool/uint8 array (nonzero = 1) into (bitmap, set_count)."""
    arr = values if isinstance(values, np.ndarray) else np.asarray(values)
    if arr.ndim != 1:
        raise TypeError(f"pack_bitmap needs a 1-D array, got {arr.ndim}-D")
    if arr.dtype.kind not in "biu" or (arr.dtype.kind != "b" and arr.dtype.itemsize != 1):
        arr = arr != 0
    arr = np.ascontiguousarray(arr).view(np.uint8)
    cdef const uint8_t[::1] vals = arr
    cdef int64_t n = vals.shape[0]
    cdef int64_t set_count
    out = np.empty((n + 7) // 8, dtype=np.uint8)
    cdef uint8_t[::1] dst = out
    with nogil:
        _pack(vals, dst)
        set_count = _count(dst, 0, n)
    return out, set_count


def bitmap_and(a, int64_t a_off, b, int64_t b_off, int64_t length):
    """AND of two bitmaps (None = all set), re-packed at offset 0 (pad bits zero)."""
    cdef int64_t nout
    cdef const uint8_t[::1] src
    cdef uint8_t[::1] dst
    cdef uint8_t[::1] tmp
    if length < 0:
        raise ArrowInvalid(f"bitmap_and: length={length} < 0")
    nout = (length + 7) // 8
    if a is None and b is None:
        out = np.full(nout, 0xFF, dtype=np.uint8)
        if length & 7:
            out[nout - 1] = (1 << (length & 7)) - 1
        return out
    if a is None:
        return slice_bitmap(b, b_off, length)
    if b is None:
        return slice_bitmap(a, a_off, length)
    ba = _byte_buffer(a, "bitmap a")
    bb = _byte_buffer(b, "bitmap b")
    src = ba
    _check_bits(src.shape[0], a_off, length, "bitmap a")
    src = bb
    _check_bits(src.shape[0], b_off, length, "bitmap b")
    out = np.empty(nout, dtype=np.uint8)
    other = np.empty(nout, dtype=np.uint8)
    dst = out
    tmp = other
    src = ba
    with nogil:
        _copy_bits(src, a_off, length, dst)
    src = bb
    with nogil:
        _copy_bits(src, b_off, length, tmp)
        _and_into(dst, tmp)
    return out
