"""A bounds-checked FlatBuffers reader for the hot message headers.

``get_batch(i)`` parses one Message with a RecordBatch (or DictionaryBatch)
header.  The generated Python code does that with dozens of interpreted calls
per message; this module reads the same few fields in C: the message
version, header type and body length, the batch length, where the FieldNode,
Buffer and variadicBufferCounts vectors sit, and the compression codec.
(A schema's fields are read by ``format/_schema_walk.pyx``.)

Every offset is checked against the buffer before it is followed; a broken
table gives ``None`` plus a reason, never a read outside the bytes.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy, memset
cimport cython

import numpy as np

from arrowmm._core._region cimport Region
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from arrowmm._core._fbtable cimport (Table, _fits, _u32, _i32, _u16, _i64, _table_at, _field,
                                     _follow, _deref, _vector, TABLE_OUT_OF_RANGE,
                                     VTABLE_OUT_OF_RANGE, VTABLE_SIZE, FIELD_OUT_OF_RANGE)
from arrowmm.errors import ArrowInvalid

__all__ = ["peek_batch_message", "StructPairs", "frame_at", "checked_table"]

DEF MSG_VERSION = 0
DEF MSG_HEADER_TYPE = 1
DEF MSG_HEADER = 2
DEF MSG_BODY_LENGTH = 3
DEF MSG_CUSTOM_METADATA = 4

DEF HEADER_DICTIONARY_BATCH = 2
DEF HEADER_RECORD_BATCH = 3



@cython.no_gc
cdef class StructPairs:
    """A FlatBuffers vector of 16-byte structs of two int64 (FieldNode, Buffer), read in place.

    Not tracked by the cyclic garbage collector (``no_gc``): it refers only to the bytes it
    reads (``owner``), which never refer back; two of them come with every batch header, and
    a ``read_all()`` of many small batches paid for their tracking in collector passes.

    ``get(i)`` returns one record as a tuple; ``to_numpy(dtype)`` the whole
    vector as a structured numpy view over the same bytes.
    """

    def __len__(self):
        return self.count

    cpdef tuple get(self, Py_ssize_t i):
        if i < 0 or i >= self.count:
            raise ArrowInvalid(f"record {i} requested from a vector of {self.count}")
        cdef const uint8_t* p = self.ptr + 16 * i
        return (_i64(p), _i64(p + 8))

    def first_unaligned(self, int64_t align):
        """The index of the first record whose first value (a Buffer's offset) is not a
        multiple of ``align``; -1 when every one is."""
        cdef Py_ssize_t i
        for i in range(self.count):
            if _i64(self.ptr + 16 * i) % align:
                return i
        return -1

    def to_numpy(self, dtype):
        if self.count == 0:
            return np.empty(0, dtype=dtype)
        return np.frombuffer(self.owner, dtype=dtype, count=self.count, offset=self.start)


cdef StructPairs _pairs(object owner, const uint8_t* base, Py_ssize_t start, Py_ssize_t count):
    cdef StructPairs v = StructPairs.__new__(StructPairs)
    v.owner = owner
    v.ptr = base + start
    v.start = start
    v.count = count
    return v


def struct_pairs(owner, Py_ssize_t start, Py_ssize_t count):
    """A ``StructPairs`` over ``count`` records at byte ``start`` of ``owner`` (checked)."""
    cdef const uint8_t[::1] mv = owner
    if start < 0 or count < 0 or start > mv.shape[0] or count > (mv.shape[0] - start) // 16:
        raise ArrowInvalid(f"vector of {count} 16-byte records at byte {start} overruns "
                           f"{mv.shape[0]} bytes")
    return _pairs(owner, &mv[0] if mv.shape[0] else NULL, start, count)


def frame_at(Region region not None, int64_t offset, Py_ssize_t index):
    """Locate the metadata of the message at ``offset``.

    Returns ``None`` at end-of-stream (a zero length, or the end of the
    region) or ``(metadata_start, metadata_size, legacy_prefix)``.
    """
    cdef Py_ssize_t size = region.size
    cdef const uint8_t* p
    cdef int32_t meta_size
    cdef bint legacy
    cdef Py_ssize_t meta_start
    if offset == size:
        return None
    if offset < 0 or offset > size or size - offset < 4:
        raise ArrowInvalid(f"message {index} at byte {offset}: truncated: "
                           f"{size - offset} byte(s) left, a length prefix needs 4")
    p = region.ptr + offset
    legacy = _u32(p) != <uint32_t>0xFFFFFFFF  # (cast: else a Python compare)
    if legacy:
        meta_size = _i32(p)
        meta_start = offset + 4
    else:
        if size - offset < 8:
            raise ArrowInvalid(f"message {index} at byte {offset}: truncated after the "
                               f"continuation marker")
        meta_size = _i32(p + 4)
        meta_start = offset + 8
    if meta_size == 0:
        return None
    if meta_size < 0:
        raise ArrowInvalid(f"message {index} at byte {offset}: negative metadata length {meta_size}")
    if meta_size > size - meta_start:
        raise ArrowInvalid(f"message {index} at byte {offset}: metadata of {meta_size} bytes "
                           f"runs past the end of the {size}-byte {region.description}")
    return (meta_start, meta_size, legacy)


cdef const char* _record_batch(Table* rb, MessageInfo* info) noexcept nogil:
    """Fill the batch fields of ``info`` from the RecordBatch table ``rb``; NULL, or what is
    broken."""
    cdef Py_ssize_t at, pos
    cdef Table comp
    at = _field(rb, 0, 8)
    if at < 0:
        return "RecordBatch.length out of range or misaligned"
    if at:
        info.length = _i64(rb.buf + at)
    if _vector(rb, 1, 16, &info.nodes_start, &info.n_nodes) < 0:
        return "RecordBatch.nodes out of range or misaligned"
    if _vector(rb, 2, 16, &info.buffers_start, &info.n_buffers) < 0:
        return "RecordBatch.buffers out of range or misaligned"
    at = _field(rb, 3, 4)
    if at < 0:
        return "RecordBatch.compression out of range or misaligned"
    if at:
        pos = _deref(rb, at)
        if pos < 0 or _table_at(&comp, rb.buf, rb.size, pos) < 0:
            return "BodyCompression table out of range"
        info.codec = 0
        at = _field(&comp, 0, 1)
        if at < 0:
            return "BodyCompression.codec out of range"
        if at:
            # (read unsigned: a damaged 0xff must stay an unknown codec, never -1, the "no
            # compression" this struct says when there is no compression table)
            info.codec = (<const uint8_t*>(comp.buf + at))[0]
        at = _field(&comp, 1, 1)
        if at < 0:
            return "BodyCompression.method out of range"
        if at:
            info.method = (<const int8_t*>(comp.buf + at))[0]
    if _vector(rb, 4, 8, &info.variadic_start, &info.n_variadic) < 0:
        return "RecordBatch.variadicBufferCounts out of range or misaligned"
    return NULL


cdef const char* peek_message(const uint8_t* buf, Py_ssize_t size, MessageInfo* info) noexcept nogil:
    """Read a Message flatbuffer of ``size`` bytes at ``buf`` into ``info``.

    Returns NULL when ``info`` is filled (``info.header_type`` says whether the header is a
    record or dictionary batch, the only ones read here), else what is broken.  Positions in
    ``info`` are byte offsets from ``buf``.
    """
    cdef Table msg, hdr, rb
    cdef Py_ssize_t at, pos
    memset(info, 0, sizeof(MessageInfo))
    info.codec = -1
    if size < 8:
        return "Message table out of range"
    pos = _follow(buf, size, 0)
    if pos < 0 or _table_at(&msg, buf, size, pos) < 0:
        return "Message table out of range"
    at = _field(&msg, MSG_VERSION, 2)
    if at < 0:
        return "Message.version out of range or misaligned"
    if at:
        info.version = <int16_t>_u16(buf + at)
    at = _field(&msg, MSG_HEADER_TYPE, 1)
    if at < 0:
        return "Message.header_type out of range"
    if at:
        info.header_type = buf[at]
    if info.header_type != HEADER_RECORD_BATCH and info.header_type != HEADER_DICTIONARY_BATCH:
        return NULL
    at = _field(&msg, MSG_BODY_LENGTH, 8)
    if at < 0:
        return "Message.bodyLength out of range or misaligned"
    if at:
        info.body_length = _i64(buf + at)
    at = _field(&msg, MSG_CUSTOM_METADATA, 4)
    if at < 0:
        return "Message.custom_metadata out of range or misaligned"
    info.has_metadata = at != 0
    at = _field(&msg, MSG_HEADER, 4)
    if at <= 0:
        return "Message.header missing, out of range or misaligned"
    pos = _deref(&msg, at)
    if pos < 0 or _table_at(&hdr, buf, size, pos) < 0:
        return "Message.header table out of range"
    if info.header_type == HEADER_DICTIONARY_BATCH:
        at = _field(&hdr, 0, 8)
        if at < 0:
            return "DictionaryBatch.id out of range or misaligned"
        if at:
            info.dict_id = _i64(buf + at)
        at = _field(&hdr, 2, 1)
        if at < 0:
            return "DictionaryBatch.isDelta out of range"
        if at:
            info.is_delta = buf[at] != 0
        at = _field(&hdr, 1, 4)
        if at <= 0:
            return "DictionaryBatch.data missing, out of range or misaligned"
        pos = _deref(&hdr, at)
        if pos < 0 or _table_at(&rb, buf, size, pos) < 0:
            return "DictionaryBatch.data table out of range"
    else:
        rb = hdr
    return _record_batch(&rb, info)


_NO_COUNTS = np.empty(0, dtype="<i8")


def peek_batch_message(object owner):
    """Read a Message flatbuffer whose header is a RecordBatch or DictionaryBatch.

    Returns ``None`` for other headers (the caller uses the generated code),
    a ``str`` describing the damage for a broken table, or a tuple
    ``(version, header_type, body_length, has_custom_metadata, dict_id,
    is_delta, batch)`` where ``batch`` is ``(length, nodes, buffers, codec,
    method, variadic counts)``, the vectors read in place from ``owner``.
    """
    cdef const uint8_t[::1] meta = owner
    cdef Py_ssize_t size = meta.shape[0]
    cdef const uint8_t* buf = &meta[0] if size else NULL
    cdef MessageInfo info
    cdef const char* broken = peek_message(buf, size, &info)
    if broken != NULL:
        return (<bytes>broken).decode()
    if info.header_type != HEADER_RECORD_BATCH and info.header_type != HEADER_DICTIONARY_BATCH:
        return None
    variadic = np.frombuffer(owner, dtype="<i8", count=info.n_variadic,
                             offset=info.variadic_start) if info.n_variadic else _NO_COUNTS
    batch = (info.length, _pairs(owner, buf, info.nodes_start, info.n_nodes),
             _pairs(owner, buf, info.buffers_start, info.n_buffers), info.codec, info.method,
             variadic)
    return (info.version, info.header_type, info.body_length, info.has_metadata, info.dict_id,
            info.is_delta, batch)


cdef str _table_problem(const uint8_t* buf, Py_ssize_t size, Py_ssize_t pos, int problem):
    """What ``_table_at`` found wrong (its ``problem``) with the table at ``pos``, in words."""
    if problem == TABLE_OUT_OF_RANGE:
        return "its 4-byte vtable offset lies outside the metadata or off the 4-byte grid"
    cdef Py_ssize_t vt = pos - <Py_ssize_t>_i32(buf + pos)
    if problem == VTABLE_OUT_OF_RANGE:
        return (f"its vtable at byte {vt} lies outside the metadata or at an odd byte (a vtable "
                f"is an array of uint16)")
    cdef Py_ssize_t n = _u16(buf + vt + 2 * (problem != VTABLE_SIZE))
    if problem == VTABLE_SIZE:
        what = "its vtable's byte size"
        return (f"{what} {n} is odd" if n & 1 else f"{what} {n} is under 4" if n < 4 else
                f"{what} {n} runs past the {size}-byte metadata from byte {vt}")
    return (f"its byte size (the vtable's second uint16) {n} is under 4" if n < 4 else
            f"its byte size (the vtable's second uint16) {n} runs past the {size}-byte metadata")


def checked_table(object owner, Py_ssize_t at, bytes widths, str name, tuple fields, object what):
    """The position of the ``name`` table the uoffset at byte ``at`` of ``owner`` points to
    (``at`` 0: the root table), checked as FlatBuffers' verifier (which pyarrow runs) checks
    a table: the offset not zero, 4-aligned and inside (VerifyOffset), the table and its
    vtable (VerifyTableStart, as ``_table_at``), and each field ``fields[i]`` present in the
    vtable inside the metadata at an address that is a multiple of its width ``widths[i]``
    (VerifyField, as ``_field``: 1, 2, 4 or 8 bytes for a scalar, 4 for an offset, 16 for a
    Buffer struct).  The Python readers call it once per table they open; raises
    ArrowInvalid naming ``what``, the table, the field and the byte."""
    cdef const uint8_t[::1] meta = owner
    cdef Py_ssize_t size = meta.shape[0], pos, at_field, slot
    cdef const uint8_t* buf = &meta[0] if size else NULL
    cdef const char* width = PyBytes_AS_STRING(widths)
    cdef Table t
    cdef int problem
    if not _fits(at, 4, size) or at & 3:
        raise ArrowInvalid(f"{what}: the offset of the {name} table at byte {at} lies outside "
                           f"the {size}-byte metadata or off the 4-byte grid")
    pos = _follow(buf, size, at)
    if pos < 0:
        raise ArrowInvalid(f"{what}: the offset {_u32(buf + at)} of the {name} table at byte "
                           f"{at} is zero, unaligned or leaves the {size}-byte metadata "
                           f"(damaged metadata)")
    problem = _table_at(&t, buf, size, pos)
    if problem < 0:
        raise ArrowInvalid(f"{what}: {name} table at byte {pos}: "
                           f"{_table_problem(buf, size, pos, problem)} (damaged metadata)")
    for slot in range(PyBytes_GET_SIZE(widths)):
        problem = <int>_field(&t, <int>slot, <unsigned char>width[slot])
        if problem >= 0:
            continue
        at_field = t.pos + _u16(buf + t.vtable + 4 + 2 * slot)
        if problem == FIELD_OUT_OF_RANGE:
            reason = f"its {<unsigned char>width[slot]} bytes run past the {size}-byte metadata"
        else:
            reason = (f"an address not a multiple of {min(<unsigned char>width[slot], 8)}, "
                      f"the alignment FlatBuffers' verifier requires of it")
        raise ArrowInvalid(f"{what}: {name}.{fields[slot]} at byte {at_field}: {reason} "
                           f"(damaged metadata)")
    return pos
