# Small inline readers the kernels share (declarations only: included by cimport).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t


cdef inline bint bit_is_set(const uint8_t[::1] bits, int64_t i) noexcept nogil:
    """Bit ``i`` of an LSB-first bitmap (a validity bit)."""
    return (bits[i >> 3] >> (i & 7)) & 1


cdef inline int32_t read_le32(const uint8_t[::1] b, int64_t p) noexcept nogil:
    """The little-endian int32 at byte ``p`` (a view's length or buffer index)."""
    return <int32_t>(<uint32_t>b[p] | (<uint32_t>b[p + 1] << 8)
                     | (<uint32_t>b[p + 2] << 16) | (<uint32_t>b[p + 3] << 24))
