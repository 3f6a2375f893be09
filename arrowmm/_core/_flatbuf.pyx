"""A bounds-checked FlatBuffers reader for the hot message headers.

``get_batch(i)`` parses one Message with a RecordBatch (or DictionaryBatch)
header.  The generated Python code does that with dozens of interpreted calls
per message; this module reads the same few fields in C: the message
version, header type and body length, the batch length, where the FieldNode,
Buffer and variadicBufferCounts vectors sit, and the compression codec.
``schema_fields`` reads the fields vector of a schema: every field (children,
type parameters, custom metadata, dictionary encoding) is read here, and a
field it finds broken or beyond a limit is left to the generated code
(``format/decode.py``), which names the error and is the reference this module
is tested against; footers and schema-level metadata stay there too.

Every offset is checked against the buffer before it is followed; a broken
table gives ``None`` plus a reason, never a read outside the bytes.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memcpy, memset
cimport cython
from cpython.object cimport PyObject, PyTypeObject, Py_TYPE
from cpython.unicode cimport PyUnicode_DecodeUTF8

import numpy as np

from arrowmm._core._region cimport Region
from arrowmm.errors import ArrowInvalid

__all__ = ["peek_batch_message", "StructPairs", "frame_at", "schema_fields"]

DEF MSG_VERSION = 0
DEF MSG_HEADER_TYPE = 1
DEF MSG_HEADER = 2
DEF MSG_BODY_LENGTH = 3
DEF MSG_CUSTOM_METADATA = 4

DEF HEADER_DICTIONARY_BATCH = 2
DEF HEADER_RECORD_BATCH = 3


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


cdef int _table_at(Table* t, const uint8_t* buf, Py_ssize_t size, Py_ssize_t pos) noexcept nogil:
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
    """Follow the uoffset stored at ``at``; -1 when it leaves the buffer."""
    cdef Py_ssize_t target = at + <Py_ssize_t>_u32(t.buf + at)
    return target if _fits(target, 4, t.size) else -1


cdef int _vector(Table* t, int slot, Py_ssize_t elem, Py_ssize_t* start, Py_ssize_t* count) noexcept nogil:
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


def frame_at(Region region, int64_t offset, Py_ssize_t index):
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
        return "record batch length out of range"
    if at:
        info.length = _i64(rb.buf + at)
    if _vector(rb, 1, 16, &info.nodes_start, &info.n_nodes) < 0:
        return "FieldNode vector out of range"
    if _vector(rb, 2, 16, &info.buffers_start, &info.n_buffers) < 0:
        return "Buffer vector out of range"
    at = _field(rb, 3, 4)
    if at < 0:
        return "compression table out of range"
    if at:
        pos = _deref(rb, at)
        if pos < 0 or _table_at(&comp, rb.buf, rb.size, pos) < 0:
            return "compression table out of range"
        info.codec = 0
        at = _field(&comp, 0, 1)
        if at < 0:
            return "compression codec out of range"
        if at:
            info.codec = (<const int8_t*>(comp.buf + at))[0]
        at = _field(&comp, 1, 1)
        if at < 0:
            return "compression method out of range"
        if at:
            info.method = (<const int8_t*>(comp.buf + at))[0]
    if _vector(rb, 4, 8, &info.variadic_start, &info.n_variadic) < 0:
        return "variadicBufferCounts vector out of range"
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
    if size < 8 or _table_at(&msg, buf, size, _u32(buf)) < 0:
        return "message table out of range"
    at = _field(&msg, MSG_VERSION, 2)
    if at < 0:
        return "version out of range"
    if at:
        info.version = <int16_t>_u16(buf + at)
    at = _field(&msg, MSG_HEADER_TYPE, 1)
    if at < 0:
        return "header type out of range"
    if at:
        info.header_type = buf[at]
    if info.header_type != HEADER_RECORD_BATCH and info.header_type != HEADER_DICTIONARY_BATCH:
        return NULL
    at = _field(&msg, MSG_BODY_LENGTH, 8)
    if at < 0:
        return "bodyLength out of range"
    if at:
        info.body_length = _i64(buf + at)
    at = _field(&msg, MSG_CUSTOM_METADATA, 4)
    if at < 0:
        return "custom metadata out of range"
    info.has_metadata = at != 0
    at = _field(&msg, MSG_HEADER, 4)
    if at <= 0:
        return "header missing or out of range"
    pos = _deref(&msg, at)
    if pos < 0 or _table_at(&hdr, buf, size, pos) < 0:
        return "header table out of range"
    if info.header_type == HEADER_DICTIONARY_BATCH:
        at = _field(&hdr, 0, 8)
        if at < 0:
            return "dictionary id out of range"
        if at:
            info.dict_id = _i64(buf + at)
        at = _field(&hdr, 2, 1)
        if at < 0:
            return "isDelta out of range"
        if at:
            info.is_delta = buf[at] != 0
        at = _field(&hdr, 1, 4)
        if at <= 0:
            return "dictionary batch data missing or out of range"
        pos = _deref(&hdr, at)
        if pos < 0 or _table_at(&rb, buf, size, pos) < 0:
            return "dictionary batch data table out of range"
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


# -- schemas: the fields vector ------------------------------------------------------------

DEF FIELD_NAME = 0
DEF FIELD_NULLABLE = 1
DEF FIELD_TYPE_TYPE = 2
DEF FIELD_TYPE = 3
DEF FIELD_DICTIONARY = 4
DEF FIELD_CHILDREN = 5
DEF FIELD_CUSTOM_METADATA = 6

DEF TYPE_INT = 2
DEF TYPE_FLOATING_POINT = 3


cdef inline bint _no_table_type(int type_id) noexcept nogil:
    """Types whose reading needs no type table: Null, Bool, the binary / string types, and
    the nested types whose parameters are all in their children (as ``_type_from_fb``)."""
    return type_id == 1 or type_id == 4 or type_id == 5 or type_id == 6 or \
        type_id == 12 or type_id == 13 or type_id == 19 or type_id == 20 or \
        type_id == 21 or type_id == 23 or type_id == 24 or type_id == 25 or type_id == 26


cdef inline bint _has_children(int type_id) noexcept nogil:
    """Types made from their child fields (list kinds, struct, union, fixed_size_list, map,
    run_end_encoded): made by the caller's ``make_type`` each time, never cached."""
    return type_id == 12 or type_id == 13 or type_id == 14 or type_id == 16 or \
        type_id == 17 or type_id == 21 or type_id == 22 or type_id == 25 or type_id == 26


DEF _MAX_CACHED_TYPES = 4096


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    ctypedef int (*_descr_set_fn)(PyObject*, PyObject*, PyObject*) except -1
    ctypedef struct _TypeSlots "PyTypeObject":
        _descr_set_fn tp_descr_set


cdef inline int _set_slot(object descr, object obj, object value) except -1:
    """``descr.__set__(obj, value)`` for a slot's member descriptor, without the attribute
    lookup ``setattr`` makes per call (six per field of a 10^6-field schema)."""
    return (<_TypeSlots*>Py_TYPE(descr)).tp_descr_set(<PyObject*>descr, <PyObject*>obj,
                                                      <PyObject*>value)


cdef class _SchemaWalk:
    """What one walk of a schema's fields shares: the bytes, the caller's classes and caches,
    and the limits (``budget`` is ``format/decode.py``'s list: fields left to claim, nesting
    limit, ...)."""
    cdef const uint8_t* buf
    cdef Py_ssize_t size
    cdef object field_cls
    cdef object new_field      # field_cls.__new__
    cdef object unresolved     # field_cls.UNRESOLVED_EXTENSION: _ext of a field with metadata
    cdef dict child_fields     # (name, id(type), nullable, ...) -> the child Field read first
    cdef tuple slots           # field_cls's member descriptors: name, storage_type, nullable,
                               # storage_metadata, dictionary_id, _ext
    cdef dict types
    cdef object make_type
    cdef Py_ssize_t left       # fields that may still be claimed (budget[0] while walking)
    cdef Py_ssize_t max_depth  # budget[1]
    cdef Py_ssize_t md_cap     # limits.max_custom_metadata_size


cdef int _scalar(Table* t, int slot, Py_ssize_t width, int64_t dflt, int64_t* out) noexcept nogil:
    """Read the little-endian integer of ``width`` bytes (1, 2, 4, 8; signed) in ``slot``,
    ``dflt`` when absent; -1 when out of range."""
    cdef Py_ssize_t at = _field(t, slot, width)
    if at < 0:
        return -1
    if at == 0:
        out[0] = dflt
    elif width == 1:
        out[0] = <int8_t>t.buf[at]
    elif width == 2:
        out[0] = <int16_t>_u16(t.buf + at)
    elif width == 4:
        out[0] = _i32(t.buf + at)
    else:
        out[0] = _i64(t.buf + at)
    return 0


cdef int _string(Table* t, int slot, Py_ssize_t* start, Py_ssize_t* length) noexcept nogil:
    """Locate the string in ``slot``: 1 found, 0 absent, -1 out of range (its declared length
    checked against the bytes, as ``decode.string_at`` does)."""
    cdef Py_ssize_t at = _field(t, slot, 4)
    if at <= 0:
        return at
    cdef Py_ssize_t spos = _deref(t, at)
    if spos < 0:
        return -1
    cdef uint32_t slen = _u32(t.buf + spos)
    if slen > <uint32_t>(t.size - spos - 4):
        return -1
    start[0] = spos + 4
    length[0] = slen
    return 1


cdef object _text(Table* t, int slot, bint* ok, Py_ssize_t* nbytes):
    """The string in ``slot`` decoded as UTF-8 ("" when absent); ``ok`` false when it is out
    of range or not UTF-8 (the Python reader names the error)."""
    cdef Py_ssize_t start = 0, length = 0
    cdef int found = _string(t, slot, &start, &length)
    ok[0] = found >= 0
    nbytes[0] = length if found > 0 else 0
    if found <= 0:
        return ""
    try:
        return PyUnicode_DecodeUTF8(<const char*>t.buf + start, length, NULL)
    except UnicodeDecodeError:
        ok[0] = False
        return None


cdef object _metadata(_SchemaWalk w, Table* ft, bint* ok):
    """A field's custom metadata as a dict (None when it has none), as ``decode._key_values``
    reads it; ``ok`` false for anything that function would refuse."""
    cdef Py_ssize_t start, n, i, at, pos, nbytes, total = 0
    cdef Table kv
    cdef bint good
    ok[0] = False
    if _vector(ft, FIELD_CUSTOM_METADATA, 4, &start, &n) < 0:
        return None
    if n == 0:
        ok[0] = True
        return None
    out = {}
    for i in range(n):
        at = start + 4 * i
        pos = _deref(ft, at)
        if pos < 0 or _table_at(&kv, w.buf, w.size, pos) < 0:
            return None
        key = _text(&kv, 0, &good, &nbytes)
        if not good:
            return None
        total += nbytes
        value = _text(&kv, 1, &good, &nbytes)
        if not good:
            return None
        total += nbytes
        if total > w.md_cap:
            return None
        out[key] = value
    ok[0] = True
    return out


cdef inline bint _type_table_ok(_SchemaWalk w, Table* ft) noexcept nogil:
    """A type without parameters may leave its type table out; one that is there must lie in
    the buffer (the Python reader follows it, and pyarrow refuses it otherwise)."""
    cdef Table tt
    cdef Py_ssize_t at = _field(ft, FIELD_TYPE, 4)
    if at < 0:
        return False
    if at == 0:
        return True
    at = _deref(ft, at)
    return at >= 0 and _table_at(&tt, w.buf, w.size, at) >= 0


cdef object _type_params(_SchemaWalk w, Table* ft, int type_id):
    """The parameters of a field's type as a tuple ``(type_id, ...)`` read from its type
    table (the values the generated accessors give, defaults included), None when the table
    is missing where the type needs one, or out of range."""
    cdef Table tt
    cdef Py_ssize_t at, tpos, start, n, i, tz_start = 0, tz_len = 0
    cdef int64_t a = 0, b = 0, c = 0
    cdef int found
    if _no_table_type(type_id):
        return (type_id,) if _type_table_ok(w, ft) else None
    at = _field(ft, FIELD_TYPE, 4)
    if at <= 0:
        return None
    tpos = _deref(ft, at)
    if tpos < 0 or _table_at(&tt, w.buf, w.size, tpos) < 0:
        return None
    if type_id == TYPE_INT:  # bitWidth, is_signed
        if _scalar(&tt, 0, 4, 0, &a) < 0 or _scalar(&tt, 1, 1, 0, &b) < 0:
            return None
        return (type_id, a, b != 0)
    if type_id == TYPE_FLOATING_POINT or type_id == 11 or type_id == 15 or type_id == 16 \
            or type_id == 17:  # precision; interval unit; byteWidth; listSize; keysSorted
        if _scalar(&tt, 0, 2 if type_id <= 11 else 4 if type_id <= 16 else 1, 0, &a) < 0:
            return None
        if type_id == 17:
            return (type_id, a != 0)
        return (type_id, a)
    if type_id == 7:  # decimal: precision, scale, bitWidth
        if _scalar(&tt, 0, 4, 0, &a) < 0 or _scalar(&tt, 1, 4, 0, &b) < 0 or \
                _scalar(&tt, 2, 4, 128, &c) < 0:
            return None
        return (type_id, a, b, c)
    if type_id == 8 or type_id == 18:  # date, duration: unit (default MILLISECOND)
        if _scalar(&tt, 0, 2, 1, &a) < 0:
            return None
        return (type_id, a)
    if type_id == 9:  # time: unit (default MILLISECOND), bitWidth (default 32)
        if _scalar(&tt, 0, 2, 1, &a) < 0 or _scalar(&tt, 1, 4, 32, &b) < 0:
            return None
        return (type_id, a, b)
    if type_id == 10:  # timestamp: unit, timezone
        if _scalar(&tt, 0, 2, 0, &a) < 0:
            return None
        found = _string(&tt, 1, &tz_start, &tz_len)
        if found < 0:
            return None
        if found == 0 or tz_len == 0:
            return (type_id, a, None)
        try:
            tz = PyUnicode_DecodeUTF8(<const char*>w.buf + tz_start, tz_len, NULL)
        except UnicodeDecodeError:
            return None
        return (type_id, a, tz)
    if type_id == 14:  # union: mode, typeIds
        if _scalar(&tt, 0, 2, 0, &a) < 0 or _vector(&tt, 1, 4, &start, &n) < 0:
            return None
        codes = [_i32(w.buf + start + 4 * i) for i in range(n)] if n else None
        return (type_id, a, codes)
    if type_id == 22:  # run_end_encoded: a table of no fields
        return (type_id,)
    return None  # (unknown ids: the Python reader names them)


cdef int64_t _leaf_key(_SchemaWalk w, Table* ft, int type_id) noexcept nogil:
    """A key (>= 0) for the childless types of no or simple parameters (Int, FloatingPoint,
    Null, Bool, binary and string kinds), read without making a tuple: the hot case of wide
    plain schemas; -1 for the others (and anything out of range: the general path rechecks)."""
    cdef Table tt
    cdef Py_ssize_t at, tpos
    cdef int64_t a = 0, b = 0
    if type_id == TYPE_INT or type_id == TYPE_FLOATING_POINT:
        at = _field(ft, FIELD_TYPE, 4)
        if at <= 0:
            return -1
        tpos = _deref(ft, at)
        if tpos < 0 or _table_at(&tt, w.buf, w.size, tpos) < 0:
            return -1
        if type_id == TYPE_INT:
            if _scalar(&tt, 0, 4, 0, &a) < 0 or _scalar(&tt, 1, 1, 0, &b) < 0:
                return -1
            if a != 8 and a != 16 and a != 32 and a != 64:
                return -1
        elif _scalar(&tt, 0, 2, 0, &a) < 0 or a < 0 or a > 2:
            return -1
        return (type_id << 16) | (a << 1) | (b != 0)
    if type_id == 1 or type_id == 4 or type_id == 5 or type_id == 6 or type_id == 19 or \
            type_id == 20 or type_id == 23 or type_id == 24:
        return type_id << 16 if _type_table_ok(w, ft) else -1
    return -1


cdef object _walk_field(_SchemaWalk w, Py_ssize_t pos, Py_ssize_t depth):
    """The Field whose table is at ``pos``, read whole here (children, type, metadata,
    dictionary encoding); None for anything the Python reader must see (it raises the
    error, or reads what is rare)."""
    cdef Table ft
    cdef Py_ssize_t at, start, n, i, nbytes, epos
    cdef int type_id
    cdef int64_t key
    cdef bint ok
    if depth > w.max_depth or _table_at(&ft, w.buf, w.size, pos) < 0:
        return None
    name = _text(&ft, FIELD_NAME, &ok, &nbytes)
    if not ok:
        return None
    if _vector(&ft, FIELD_CHILDREN, 4, &start, &n) < 0:
        return None
    children = None
    if n:
        if n > w.left:
            return None
        w.left -= n
        children = [None] * n
        for i in range(n):
            epos = _deref(&ft, start + 4 * i)
            if epos < 0:
                return None
            child = _walk_field(w, epos, depth + 1)
            if child is None:
                return None
            children[i] = child
    at = _field(&ft, FIELD_TYPE_TYPE, 1)
    if at < 0:
        return None
    type_id = ft.buf[at] if at else 0
    if children is None:
        key = _leaf_key(w, &ft, type_id)
        if key >= 0:
            dtype = w.types.get(key)
            if dtype is not None:
                return _finish_field(w, &ft, name, dtype, depth)
    params = _type_params(w, &ft, type_id)
    if params is None:
        return None
    try:
        if _has_children(type_id):
            dtype = w.make_type(params, children or [])
        elif children is not None:
            return None  # (a leaf with children: the Python reader decides)
        else:
            key = _leaf_key(w, &ft, type_id)
            cache_key = key if key >= 0 else params
            dtype = w.types.get(cache_key)
            if dtype is None:
                dtype = w.make_type(params, [])
                if len(w.types) < _MAX_CACHED_TYPES:  # (timezones, decimal scales: a file
                    dtype = w.types.setdefault(cache_key, dtype)  # may name ever new ones)
    except Exception:  # noqa (the Python reader raises its own error for it)
        return None
    return _finish_field(w, &ft, name, dtype, depth)


cdef object _finish_field(_SchemaWalk w, Table* ft_, object name, object dtype,
                          Py_ssize_t depth):
    """The Field of table ``ft_`` once its name and (value) type are read: its metadata,
    dictionary encoding and nullability (None as in ``_walk_field``)."""
    cdef Table ft = ft_[0]
    cdef Table enc, it
    cdef Py_ssize_t at, epos
    cdef int64_t dict_id = 0, bits = 32, signed = 1, ordered = 0, kind = 0
    cdef bint ok, has_dict
    metadata = _metadata(w, &ft, &ok)
    if not ok:
        return None
    at = _field(&ft, FIELD_DICTIONARY, 4)
    if at < 0:
        return None
    has_dict = at != 0
    if has_dict:
        epos = _deref(&ft, at)
        if epos < 0 or _table_at(&enc, w.buf, w.size, epos) < 0:
            return None
        if _scalar(&enc, 0, 8, 0, &dict_id) < 0 or _scalar(&enc, 2, 1, 0, &ordered) < 0 or \
                _scalar(&enc, 3, 2, 0, &kind) < 0 or kind != 0:
            return None
        at = _field(&enc, 1, 4)
        if at < 0:
            return None
        if at:
            epos = _deref(&enc, at)
            if epos < 0 or _table_at(&it, w.buf, w.size, epos) < 0:
                return None
            if _scalar(&it, 0, 4, 0, &bits) < 0 or _scalar(&it, 1, 1, 0, &signed) < 0:
                return None
        try:
            dtype = w.make_type((-1, bits, signed != 0, ordered != 0), [dtype])
        except Exception:  # noqa (as above)
            return None
    at = _field(&ft, FIELD_NULLABLE, 1)
    if at < 0:
        return None
    nullable = at != 0 and ft.buf[at] != 0
    key = None
    if depth > 0 and metadata is None and not has_dict:
        # A child field like one read before in this walk is that field: fields are
        # immutable, and make_type can then give every parent of the same children one type
        # (10^5 struct<a: int8> fields: one struct type).  Keyed by the type's identity: the
        # cached field holds its type, so the id cannot be reused meanwhile.
        key = (name, id(dtype), nullable)
        seen = w.child_fields.get(key)
        if seen is not None:
            return seen
    field = w.new_field(w.field_cls)
    slots = w.slots
    _set_slot(slots[0], field, name)
    _set_slot(slots[1], field, dtype)
    _set_slot(slots[2], field, nullable)
    _set_slot(slots[4], field, dict_id if has_dict else None)
    if metadata is not None:
        # str keys and values read whole above (freeze_metadata's result for them); the
        # extension type the metadata may name is looked up on first use, as the class's
        # constructor leaves it.  Kept tracked by the collector: _ext may later hold an object.
        _set_slot(slots[3], field, metadata)
        _set_slot(slots[5], field, w.unresolved)
        return field
    _set_slot(slots[3], field, None)
    _set_slot(slots[5], field, None)  # (no metadata: no extension)
    if key is not None:
        w.child_fields[key] = field
    # Out of the cyclic collector: such a field refers only to a str, an immutable type made
    # before it, bools and None, and its slots never change, so it can be in no cycle; the
    # collector's passes over 10^6 tracked fields were two thirds of opening such a schema.
    PyObject_GC_UnTrack(<void*>field)
    return field


def _member(cls, str name):
    """The member descriptor of slot ``name`` of ``cls`` (from its class or a base)."""
    for klass in cls.__mro__:
        descr = klass.__dict__.get(name)
        if descr is not None:
            if type(descr).__name__ != "member_descriptor":
                raise TypeError(f"{cls.__name__}.{name} is not a slot")
            return descr
    raise TypeError(f"{cls.__name__} has no slot {name!r}")


def schema_fields(const uint8_t[::1] data, Py_ssize_t start, Py_ssize_t count, object field_cls,
                  dict types, object make_type, object other, list budget,
                  Py_ssize_t md_cap):
    """The ``count`` fields of the fields vector whose first uoffset is at ``start`` in
    ``data`` (checked by the caller to lie inside it), as a list.

    Each field is read whole here, its children, type, custom metadata and dictionary
    encoding included: a ``field_cls`` (``types.Field``: its slots set directly; a field with
    metadata gets ``field_cls.UNRESOLVED_EXTENSION``, as its constructor sets it) of a type made
    by ``make_type(params, children)``, where ``params`` is ``(type_id, ...)`` as read from
    the type table (``(-1, index bit width, index signed, ordered)`` for a dictionary, whose
    one child is the value type).  Types without children are kept in ``types`` (params ->
    DataType: types are immutable, so one instance serves every field).

    ``budget`` is ``format/decode.py``'s ``[fields left to claim, nesting limit, ...]``: a
    field's children are claimed from it as there, and a field read here takes its claims
    only once it is read whole.  ``md_cap`` bounds one field's metadata bytes.  A field that
    breaks a limit or a check, or that is rare (run_end_encoded, an unknown type), is
    ``other(index)``: the Python reader, which raises the error naming the field (and is the
    reference this reader is tested against)."""
    cdef const uint8_t* buf = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t size = data.shape[0], i, at
    cdef _SchemaWalk w = _SchemaWalk.__new__(_SchemaWalk)
    w.buf = buf
    w.size = size
    w.field_cls = field_cls
    w.new_field = field_cls.__new__
    w.unresolved = field_cls.UNRESOLVED_EXTENSION
    w.child_fields = {}
    w.slots = tuple(_member(field_cls, n) for n in ("name", "storage_type", "nullable",
                                                    "storage_metadata", "dictionary_id", "_ext"))
    w.types = types
    w.make_type = make_type
    w.max_depth = budget[1]
    w.md_cap = md_cap
    out = [None] * count
    for i in range(count):
        at = start + 4 * i
        field = None
        w.left = budget[0]
        if _fits(at, 4, size):
            field = _walk_field(w, at + <Py_ssize_t>_u32(buf + at), 0)
        if field is not None:
            budget[0] = w.left
        else:
            field = other(i)
        out[i] = field
    return out
