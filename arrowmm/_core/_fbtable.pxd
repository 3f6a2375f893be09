# Bounds-checked access to FlatBuffers tables, inline, for the Cython readers of metadata
# (_core/_flatbuf for message headers, format/_schema_walk for a schema's fields): every
# offset is checked against the buffer before it is followed, and a table and its fields as
# FlatBuffers' verifier checks them (which pyarrow runs on every footer and message):
# ``_table_at`` as its VerifyTableStart, ``_field`` as its VerifyField, ``_follow`` as its
# VerifyOffset.  ``_flatbuf.checked_table`` runs the same checks for the Python readers.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy


cdef enum:
    # what ``_table_at`` finds wrong (0: nothing), and ``_field``
    TABLE_OUT_OF_RANGE = -1   # the table's 4 bytes leave the buffer, or are not 4-aligned
    VTABLE_OUT_OF_RANGE = -2  # its vtable's first 4 bytes leave the buffer, or are not 2-aligned
    VTABLE_SIZE = -3          # the vtable's byte size is odd, under 4, or runs past the buffer
    TABLE_SIZE = -4           # the table's byte size is under 4 or runs past the buffer
    FIELD_OUT_OF_RANGE = -1   # a field's bytes leave the buffer
    FIELD_UNALIGNED = -2      # a field's address is not a multiple of its size (8 at most)


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
    """Set up ``t`` for the table at ``pos``; 0 on success, else what is wrong (a negative
    ``TABLE_*`` code).  FlatBuffers' verifier refuses a table off the 4-byte grid, a vtable
    off the 2-byte grid (vtables are arrays of uint16), of an odd byte size or past the
    buffer; a vtable too short for its own two sizes, or a table size under the 4 bytes of
    the table's vtable offset, no FlatBuffers builder writes: damage, refused too."""
    if not _fits(pos, 4, size) or pos & 3:
        return TABLE_OUT_OF_RANGE
    cdef Py_ssize_t vt = pos - <Py_ssize_t>_i32(buf + pos)
    if not _fits(vt, 4, size) or vt & 1:
        return VTABLE_OUT_OF_RANGE
    cdef Py_ssize_t vt_size = _u16(buf + vt)
    if vt_size < 4 or vt_size & 1 or not _fits(vt, vt_size, size):
        return VTABLE_SIZE
    cdef Py_ssize_t table_size = _u16(buf + vt + 2)
    if table_size < 4 or not _fits(pos, table_size, size):
        return TABLE_SIZE
    t.buf = buf
    t.size = size
    t.pos = pos
    t.vtable = vt
    t.vt_size = vt_size
    return 0


cdef inline Py_ssize_t _field(Table* t, int slot, Py_ssize_t width) noexcept nogil:
    """Absolute position of field ``slot`` of ``width`` bytes: 0 when absent,
    ``FIELD_OUT_OF_RANGE`` when its bytes leave the buffer, ``FIELD_UNALIGNED`` when its
    address is not a multiple of its width (of 8 for a wider struct): FlatBuffers' verifier
    refuses a misaligned scalar or offset (an int16 read from an odd address, where a damaged
    voffset put it, takes half its bytes from the next field)."""
    cdef Py_ssize_t entry = 4 + 2 * slot
    if entry + 2 > t.vt_size:
        return 0
    cdef Py_ssize_t off = _u16(t.buf + t.vtable + entry)
    if off == 0:
        return 0
    cdef Py_ssize_t at = t.pos + off
    if not _fits(at, width, t.size):
        return FIELD_OUT_OF_RANGE
    if at & ((width if width < 8 else 8) - 1):
        return FIELD_UNALIGNED
    return at


cdef inline Py_ssize_t _follow(const uint8_t* buf, Py_ssize_t size, Py_ssize_t at) noexcept nogil:
    """Follow the uoffset stored at ``at`` (which the caller checked lies in the buffer); -1
    when it leaves the buffer, is 0 (it would point at itself: a zeroed offset, which read as
    an empty vector or string) or lands off the 4-byte alignment every table, vector and
    string has (FlatBuffers' verifier, which pyarrow runs, refuses both)."""
    cdef uint32_t step = _u32(buf + at)
    cdef Py_ssize_t target = at + <Py_ssize_t>step
    if step == 0 or target & 3:
        return -1
    return target if _fits(target, 4, size) else -1


cdef inline Py_ssize_t _deref(Table* t, Py_ssize_t at) noexcept nogil:
    """``_follow`` the uoffset at ``at`` in ``t``'s buffer."""
    return _follow(t.buf, t.size, at)


cdef inline int _sub_table(Table* t, int slot, Table* out) noexcept nogil:
    """Set up ``out`` for the table in ``slot`` of ``t``: 1 found, 0 absent, -1 out of range."""
    cdef Py_ssize_t at = _field(t, slot, 4)
    if at <= 0:
        return -1 if at < 0 else 0
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
