# Bounds-checked access to FlatBuffers tables, inline, for the Cython readers of metadata
# (_core/_flatbuf for message headers, format/_schema_walk for a schema's fields): every
# offset is checked against the buffer before it is followed.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy


cdef struct Table:
    const uint8_t* buf
    Py_ssize_t size
    Py_ssize_t pos       # table start
    Py_ssize_t vtable    # vtable start
    Py_ssize_t vt_size   # vtable byte size


cdef inline bint _fits(Py_ssize_t pos, Py_ssize_t n, Py_ssize_t size) noexcept nogil:
    return pos >= 0 and n >= 0 and pos <= size and n <= size - pos


cdef inline uint32_t _u32(const uint8_t* p) noexcept nogil:
    cdef uint32_t v
    memcpy(&v, p, 4)
    return v


cdef inline int32_t _i32(const uint8_t* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


cdef inline uint16_t _u16(const uint8_t* p) noexcept nogil:
    cdef uint16_t v
    memcpy(&v, p, 2)
    return v


cdef inline int64_t _i64(const uint8_t* p) noexcept nogil:
    cdef int64_t v
    memcpy(&v, p, 8)
    return v


cdef inline int _table_at(Table* t, const uint8_t* buf, Py_ssize_t size,
                          Py_ssize_t pos) noexcept nogil:
    """Set up ``t`` for the table at ``pos``; 0 on success, -1 if anything is out of range."""
    if not _fits(pos, 4, size):
        return -1
    cdef Py_ssize_t vt = pos - <Py_ssize_t>_i32(buf + pos)
    if not _fits(vt, 4, size):
        return -1
    cdef Py_ssize_t vt_size = _u16(buf + vt)
    if vt_size < 4 or vt_size % 2 or not _fits(vt, vt_size, size):
        return -1
    if not _fits(pos, _u16(buf + vt + 2), size):
        return -1
    t.buf = buf
    t.size = size
    t.pos = pos
    t.vtable = vt
    t.vt_size = vt_size
    return 0


cdef inline Py_ssize_t _field(Table* t, int slot, Py_ssize_t width) noexcept nogil:
    """Absolute position of field ``slot`` (0 when absent, -1 when out of range)."""
    cdef Py_ssize_t entry = 4 + 2 * slot
    if entry + 2 > t.vt_size:
        return 0
    cdef Py_ssize_t off = _u16(t.buf + t.vtable + entry)
    if off == 0:
        return 0
    if not _fits(t.pos + off, width, t.size):
        return -1
    return t.pos + off


cdef inline Py_ssize_t _deref(Table* t, Py_ssize_t at) noexcept nogil:
    """Follow the uoffset stored at ``at``; -1 when it leaves the buffer, is 0 (it would point
    at itself: a zeroed offset, which read as an empty vector or string) or lands off the
    4-byte alignment every table, vector and string has (FlatBuffers' verifier, which pyarrow
    runs, refuses both)."""
    cdef uint32_t step = _u32(t.buf + at)
    cdef Py_ssize_t target = at + <Py_ssize_t>step
    if step == 0 or target & 3:
        return -1
    return target if _fits(target, 4, t.size) else -1


cdef inline int _sub_table(Table* t, int slot, Table* out) noexcept nogil:
    """Set up ``out`` for the table in ``slot`` of ``t``: 1 found, 0 absent, -1 out of range."""
    cdef Py_ssize_t at = _field(t, slot, 4)
    if at <= 0:
        return <int>at
    at = _deref(t, at)
    if at < 0 or _table_at(out, t.buf, t.size, at) < 0:
        return -1
    return 1


cdef inline int _vector(Table* t, int slot, Py_ssize_t elem, Py_ssize_t* start,
                 Py_ssize_t* count) noexcept nogil:
    """Locate vector field ``slot``: 0 ok (absent gives count 0), -1 out of range."""
    start[0] = 0
    count[0] = 0
    cdef Py_ssize_t at = _field(t, slot, 4)
    if at == 0:
        return 0
    if at < 0:
        return -1
    cdef Py_ssize_t vec = _deref(t, at)
    if vec < 0:
        return -1
    cdef Py_ssize_t n = _u32(t.buf + vec)
    if n > (t.size - vec - 4) // elem:
        return -1
    start[0] = vec + 4
    count[0] = n
    return 0
