# Small inline readers the kernels share (declarations only: included by cimport).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memcpy


cdef inline bint bit_is_set(const uint8_t[::1] bits, int64_t i) noexcept nogil:
    """Bit ``i`` of an LSB-first bitmap (a validity bit)."""
    return (bits[i >> 3] >> (i & 7)) & 1


cdef inline int32_t read_le32(const uint8_t[::1] b, int64_t p) noexcept nogil:
    """The little-endian int32 at byte ``p`` (a view's length or buffer index)."""
    return <int32_t>(<uint32_t>b[p] | (<uint32_t>b[p + 1] << 8)
                     | (<uint32_t>b[p + 2] << 16) | (<uint32_t>b[p + 3] << 24))


cdef inline int64_t load_i64(const uint8_t* p) noexcept nogil:
    """The int64 at ``p`` (a FieldNode's or Buffer's number; native little-endian order)."""
    cdef int64_t v
    memcpy(&v, p, 8)
    return v


cdef inline int64_t load_offset(const uint8_t* p, int width, int64_t i) noexcept nogil:
    """Offset ``i`` of an offsets buffer at ``p`` of ``width`` (4 or 8) bytes each."""
    cdef int32_t v
    if width == 8:
        return load_i64(p + 8 * i)
    memcpy(&v, p + 4 * i, 4)
    return v
