# The fused integer types of Arrow's offsets and indices, declared once for every module that
# cimports them (``arrowmm.compute._kernels`` shares them with ``_offsets``).
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)

ctypedef fused offset_t:  # binary/list offsets
    int32_t
    int64_t

ctypedef fused index_t:  # dictionary indices, and any machine integer
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t
