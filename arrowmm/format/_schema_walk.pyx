"""The fields vector of a Schema table read in C into ``types.Field`` objects: what
``format/decode.py``'s ``schema_from_fb`` calls for every schema, footer and schema message.

Every field is read whole here (children, type parameters, dictionary encoding, custom
metadata); a field found broken or beyond a limit is handed back to the Python reader
(``decode._field_from_fb``), which names the error and is the reference this walk is tested
against (``tests/format/``).  Every offset is checked against the buffer before it is
followed, as in ``_core/_flatbuf``.

Why it is fast on wide schemas (issue 34): what repeats is made once per walk, found again by
comparing bytes and identities in C, without a Python call, a key tuple or an int object per
field:

- childless types by a 64-bit key of their parameters (``int8``, ``utf8``, ...);
- nested and dictionary types by their parameters and their children's (or value type's)
  identities: 10^5 ``struct<a: int8>`` fields get one struct type, 10^5
  ``dictionary<int32, string>`` one dictionary type;
- child fields without metadata or dictionary encoding by their name's bytes, their type's
  identity and nullability (the ``a: int8`` of every struct above is one Field);
- custom metadata keys and values by their bytes (each field still gets a dict of its own:
  ``Field.metadata`` is a plain dict a user may change).

Types and fields are immutable, so one instance serves every place it is read.  A Field is
made by its type's allocator with its slots written directly (``types.Field`` declares them);
one whose metadata names no extension type refers to nothing that can lead back to it and is
left out of the cyclic collector.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memcmp
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF, Py_DECREF, Py_XDECREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from arrowmm._core._fbtable cimport (Table, _fits, _u32, _i32, _u16, _i64, _table_at, _field,
                                     _follow, _deref, _sub_table, _vector)

from arrowmm.types.extension import EXTENSION_NAME

__all__ = ["schema_fields"]


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    ctypedef PyObject* (*_allocfunc "allocfunc")(PyTypeObject*, Py_ssize_t)
    ctypedef struct _AllocSlot "PyTypeObject":
        _allocfunc tp_alloc
    ctypedef struct _MemberDef "PyMemberDef":
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct _MemberDescr "PyMemberDescrObject":
        _MemberDef* d_member


cdef extern from "structmember.h":
    enum:
        T_OBJECT
        T_OBJECT_EX
        READONLY


cdef enum:
    FIELD_NAME = 0
    FIELD_NULLABLE = 1
    FIELD_TYPE_TYPE = 2
    FIELD_TYPE = 3
    FIELD_DICTIONARY = 4
    FIELD_CHILDREN = 5
    FIELD_CUSTOM_METADATA = 6
    TYPE_INT = 2
    TYPE_FLOATING_POINT = 3
    TYPE_UNION = 14
    DICTIONARY = -1          # the memo's type id of a dictionary type
    MAX_CACHED_TYPES = 4096  # entries the caller's ``types`` dict may grow to
    MEMO_SLOTS = 256         # entries of each memo below (a power of two)
    MEMO_KIDS = 4            # children a nested type may have to be memoised


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
        return -1 if at < 0 else 0
    cdef Py_ssize_t spos = _deref(t, at)
    if spos < 0:
        return -1
    cdef uint32_t slen = _u32(t.buf + spos)
    # (its bytes and the NUL that ends every FlatBuffers string: a damaged length that cuts
    # the string short lands on another byte, so "price" cannot read as "pr")
    if slen >= <uint32_t>(t.size - spos - 4) or t.buf[spos + 4 + slen] != 0:
        return -1
    start[0] = spos + 4
    length[0] = slen
    return 1


# -- what the walk makes once -------------------------------------------------------------

cdef struct TypeEntry:
    bint nested          # a nested or dictionary type (else a leaf)
    int64_t key          # a leaf's key, or a nested type's id
    int64_t a, b, c      # a nested type's parameters
    Py_ssize_t n_kids
    PyObject* kids[MEMO_KIDS]  # children (Fields) or a dictionary's value type: strong
    PyObject* dtype            # strong; NULL for an empty entry


cdef struct ChildEntry:
    const uint8_t* name  # the name's bytes, in the walked buffer
    Py_ssize_t name_len
    PyObject* dtype      # strong
    bint nullable
    PyObject* field      # strong; NULL for an empty entry


cdef struct TextEntry:
    const uint8_t* data  # in the walked buffer
    Py_ssize_t length
    PyObject* text       # strong; NULL for an empty entry


cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    return h


cdef inline uint64_t _bytes_hash(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """FNV-1a of the first 32 and the last 8 bytes and the length (a memo's slot: entries are
    compared whole)."""
    cdef uint64_t h = 0xcbf29ce484222325ULL ^ <uint64_t>n
    cdef Py_ssize_t i, m = n if n < 32 else 32
    for i in range(m):
        h = (h ^ p[i]) * 0x100000001b3ULL
    if n > 32:
        for i in range(n - 8, n):
            h = (h ^ p[i]) * 0x100000001b3ULL
    return h


cdef inline void _put(PyObject** slot, object value) noexcept:
    """Store a new strong reference to ``value`` in ``slot``, releasing the one there."""
    Py_INCREF(value)
    Py_XDECREF(slot[0])
    slot[0] = <PyObject*>value


cdef class _SchemaWalk:
    """What one walk of a schema's fields shares: the bytes, the caller's class and caches, the
    limits, and the memos of what repeats (see the module docstring)."""
    cdef const uint8_t* buf
    cdef Py_ssize_t size
    cdef PyTypeObject* field_type
    cdef _allocfunc alloc
    cdef Py_ssize_t off[6]     # Field's slots: name, storage_type, nullable, storage_metadata,
                               # dictionary_id, _ext
    cdef object unresolved     # Field.UNRESOLVED_EXTENSION: _ext of a field whose metadata
                               # names an extension type
    cdef dict types            # the caller's: leaf params or key -> DataType, across walks
    cdef object make_type
    cdef Py_ssize_t left       # fields that may still be claimed (budget[0] while walking)
    cdef Py_ssize_t max_depth  # budget[1]
    cdef Py_ssize_t md_cap     # limits.max_custom_metadata_size
    cdef Py_ssize_t md_left    # metadata entries that may still be read (budget[5])
    cdef TypeEntry type_memo[MEMO_SLOTS]
    cdef ChildEntry child_memo[MEMO_SLOTS]
    cdef TextEntry text_memo[MEMO_SLOTS]
    # Behind the two memos keyed by identities (whose slots depend on addresses, so two
    # entries may take one slot in one run and not in the next): the same, exact, in dicts
    # consulted on a memo miss only, so a collision costs a lookup, never a new object.
    cdef dict nested_seen      # (type id, a, b, c, kids' ids) -> nested type
    cdef dict child_seen       # (name bytes, type's id, nullable) -> child Field

    def __dealloc__(self):
        cdef Py_ssize_t i, k
        for i in range(MEMO_SLOTS):
            for k in range(self.type_memo[i].n_kids):
                Py_XDECREF(self.type_memo[i].kids[k])
            Py_XDECREF(self.type_memo[i].dtype)
            Py_XDECREF(self.child_memo[i].dtype)
            Py_XDECREF(self.child_memo[i].field)
            Py_XDECREF(self.text_memo[i].text)


cdef inline void _clear_kids(TypeEntry* e) noexcept:
    cdef Py_ssize_t k
    for k in range(e.n_kids):
        Py_XDECREF(e.kids[k])
        e.kids[k] = NULL
    e.n_kids = 0


cdef object _text_at(_SchemaWalk w, Py_ssize_t start, Py_ssize_t length):
    """The str of the UTF-8 bytes at ``start`` (None when they are not UTF-8), made once per
    walk for bytes that repeat."""
    cdef TextEntry* e = &w.text_memo[_bytes_hash(w.buf + start, length) & (MEMO_SLOTS - 1)]
    if e.text != NULL and e.length == length and memcmp(e.data, w.buf + start, length) == 0:
        return <object>e.text
    try:
        text = PyUnicode_DecodeUTF8(<const char*>w.buf + start, length, NULL)
    except UnicodeDecodeError:
        return None
    e.data = w.buf + start
    e.length = length
    _put(&e.text, text)
    return text


cdef object _metadata(_SchemaWalk w, Table* ft, bint* ok):
    """A field's custom metadata as a new dict (None when it has none), as
    ``decode._key_values`` reads it; ``ok`` false for anything that function would refuse."""
    cdef Py_ssize_t start, n, i, pos, total = 0, s, length
    cdef Table kv
    cdef int found
    ok[0] = False
    if _vector(ft, FIELD_CUSTOM_METADATA, 4, &start, &n) < 0:
        return None
    if n == 0:
        ok[0] = True
        return None
    if n > w.md_left:  # (tables shared between fields: the Python reader names it)
        return None
    w.md_left -= n
    out = {}
    for i in range(n):
        pos = _deref(ft, start + 4 * i)
        if pos < 0 or _table_at(&kv, w.buf, w.size, pos) < 0:
            return None
        found = _string(&kv, 0, &s, &length)
        if found < 0:
            return None
        key = _text_at(w, s, length) if found else ""
        if key is None:
            return None
        total += length if found else 0
        found = _string(&kv, 1, &s, &length)
        if found < 0:
            return None
        value = _text_at(w, s, length) if found else ""
        if value is None:
            return None
        total += length if found else 0
        if total > w.md_cap:
            return None
        if key not in out:  # (a key given twice: the first value, as pyarrow's dict gives)
            out[key] = value
    ok[0] = True
    return out


cdef inline bint _no_table_type(int type_id) noexcept nogil:
    """Types whose reading needs no type table: Null, Bool, the binary / string types, and
    the nested types whose parameters are all in their children (as ``_type_from_fb``)."""
    return type_id == 1 or type_id == 4 or type_id == 5 or type_id == 6 or \
        type_id == 12 or type_id == 13 or type_id == 19 or type_id == 20 or \
        type_id == 21 or type_id == 23 or type_id == 24 or type_id == 25 or type_id == 26


cdef inline bint _has_children(int type_id) noexcept nogil:
    """Types made from their child fields (list kinds, struct, union, fixed_size_list, map,
    run_end_encoded)."""
    return type_id == 12 or type_id == 13 or type_id == 14 or type_id == 16 or \
        type_id == 17 or type_id == 21 or type_id == 22 or type_id == 25 or type_id == 26


cdef inline bint _type_table_ok(_SchemaWalk w, Table* ft) noexcept nogil:
    """A type without parameters may leave its type table out; one that is there must lie in
    the buffer (the Python reader follows it, and pyarrow refuses it otherwise)."""
    cdef Table tt
    return _sub_table(ft, FIELD_TYPE, &tt) >= 0


cdef object _type_params(_SchemaWalk w, Table* ft, int type_id):
    """The parameters of a field's type as a tuple ``(type_id, ...)`` read from its type
    table (the values the generated accessors give, defaults included), None when the table
    is missing where the type needs one, or out of range."""
    cdef Table tt
    cdef Py_ssize_t start, n, i, tz_start = 0, tz_len = 0
    cdef int64_t a = 0, b = 0, c = 0
    cdef int found
    if _no_table_type(type_id):
        return (type_id,) if _type_table_ok(w, ft) else None
    if _sub_table(ft, FIELD_TYPE, &tt) <= 0:
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
    if type_id == TYPE_UNION:  # mode, typeIds
        if _scalar(&tt, 0, 2, 0, &a) < 0 or _vector(&tt, 1, 4, &start, &n) < 0:
            return None
        if (a != 0 and a != 1) or (n == 0 and _field(&tt, 1, 4) != 0):
            return None  # (a mode not sparse or dense, typeIds present but empty: refused there)
        codes = [_i32(w.buf + start + 4 * i) for i in range(n)] if n else None
        return (type_id, a, codes)
    if type_id == 22:  # run_end_encoded: a table of no fields
        return (type_id,)
    return None  # (unknown ids: the Python reader names them)


cdef int _nested_param(_SchemaWalk w, Table* ft, int type_id, int64_t* a) noexcept nogil:
    """The one parameter a memoised nested type has (fixed_size_list's listSize, map's
    keysSorted as 0/1; 0 for the others), read as ``_type_params`` reads it: 0 ok, -1 for
    anything ``_type_params`` would not read (the memo is then skipped)."""
    cdef Table tt
    a[0] = 0
    if _no_table_type(type_id):
        return 0 if _type_table_ok(w, ft) else -1
    if type_id != 16 and type_id != 17 and type_id != 22:
        return -1  # (a union: its type ids are a list; made by make_type each time)
    if _sub_table(ft, FIELD_TYPE, &tt) <= 0:
        return -1
    if type_id == 16:
        return _scalar(&tt, 0, 4, 0, a)
    if type_id == 17:
        if _scalar(&tt, 0, 1, 0, a) < 0:
            return -1
        a[0] = a[0] != 0
    return 0


cdef int64_t _leaf_key(_SchemaWalk w, Table* ft, int type_id) noexcept nogil:
    """A key (>= 0) for the childless types of no or simple parameters (Int, FloatingPoint,
    Null, Bool, binary and string kinds), read without making a tuple: the hot case of wide
    plain schemas; -1 for the others (and anything out of range: the general path rechecks)."""
    cdef Table tt
    cdef int64_t a = 0, b = 0
    if type_id == TYPE_INT or type_id == TYPE_FLOATING_POINT:
        if _sub_table(ft, FIELD_TYPE, &tt) <= 0:
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


cdef object _leaf_type(_SchemaWalk w, int64_t key, Table* ft, int type_id):
    """The childless type of leaf ``key`` (see ``_leaf_key``): from the memo, the caller's
    ``types``, or made (None when ``make_type`` refuses it)."""
    cdef TypeEntry* e = &w.type_memo[_mix(<uint64_t>key) & (MEMO_SLOTS - 1)]
    if e.dtype != NULL and not e.nested and e.key == key:
        return <object>e.dtype
    dtype = w.types.get(key)
    if dtype is None:
        params = _type_params(w, ft, type_id)
        if params is None:
            return None
        try:
            dtype = w.make_type(params, [])
        except Exception:  # noqa (the Python reader raises its own error for it)
            return None
        # (always kept: leaf keys are a few dozen, and a ``types`` filled by other types
        # (timezones, decimal scales) must not make every later walk make its leaves anew)
        dtype = w.types.setdefault(key, dtype)
    _clear_kids(e)
    e.nested = False
    e.key = key
    _put(&e.dtype, dtype)
    return dtype




cdef object _nested_type(_SchemaWalk w, int64_t type_id, int64_t a, int64_t b, int64_t c,
                         list kids, Table* ft, object params):
    """The type of id ``type_id`` (``DICTIONARY`` for a dictionary: ``a, b, c`` its index bit
    width, signedness and ordering; else ``a`` is ``_nested_param``'s) over ``kids`` (child
    Fields, or a dictionary's value type): the one made before in this walk for the same
    parameters and the same kids (by identity), or ``make_type(params, kids)``.  ``params``
    None: the field ``ft``'s, read on a miss only (None returned when they cannot be read).
    Raises what ``make_type`` raises."""
    cdef Py_ssize_t n = len(kids), k
    cdef uint64_t h = _mix(<uint64_t>type_id * 0x9e3779b97f4a7c15ULL ^ <uint64_t>a
                           ^ (<uint64_t>b << 20) ^ (<uint64_t>c << 40) ^ (<uint64_t>n << 50))
    for k in range(n if n < MEMO_KIDS else MEMO_KIDS):
        h = _mix(h ^ <uint64_t><size_t><PyObject*>kids[k])
    cdef TypeEntry* e = &w.type_memo[h & (MEMO_SLOTS - 1)]
    cdef bint hit
    if n <= MEMO_KIDS and e.dtype != NULL and e.nested and e.n_kids == n and \
            e.key == type_id and e.a == a and e.b == b and e.c == c:
        hit = True
        for k in range(n):
            if e.kids[k] != <PyObject*>kids[k]:
                hit = False
                break
        if hit:
            return <object>e.dtype
    seen = (type_id, a, b, c, tuple([id(kid) for kid in kids]))  # (the kids live as long
    dtype = w.nested_seen.get(seen)                               # as the type holds them)
    if dtype is None:
        if params is None:
            params = _type_params(w, ft, <int>type_id)
            if params is None:
                return None
        dtype = w.make_type(params, kids)
        w.nested_seen[seen] = dtype
    if n <= MEMO_KIDS:
        _clear_kids(e)
        for k in range(n):
            kid = kids[k]
            Py_INCREF(kid)
            e.kids[k] = <PyObject*>kid
        e.n_kids = n
        e.nested = True
        e.key = type_id
        e.a = a
        e.b = b
        e.c = c
        _put(&e.dtype, dtype)
    return dtype


cdef object _walk_field(_SchemaWalk w, Py_ssize_t pos, Py_ssize_t depth):
    """The Field whose table is at ``pos``, read whole here (children, type, metadata,
    dictionary encoding); None for anything the Python reader must see (it raises the
    error, or reads what is rare)."""
    cdef Table ft
    cdef Py_ssize_t at, start, n, i, epos, name_start = 0, name_len = 0
    cdef int type_id, found
    cdef int64_t key, a
    cdef list children = None
    if depth > w.max_depth or _table_at(&ft, w.buf, w.size, pos) < 0:
        return None
    found = _string(&ft, FIELD_NAME, &name_start, &name_len)
    if found < 0:
        return None
    if _vector(&ft, FIELD_CHILDREN, 4, &start, &n) < 0:
        return None
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
    cdef TypeEntry* e
    if children is None:  # (the hot case of wide plain schemas: a leaf made before)
        key = _leaf_key(w, &ft, type_id)
        if key >= 0:
            e = &w.type_memo[_mix(<uint64_t>key) & (MEMO_SLOTS - 1)]
            if e.dtype != NULL and not e.nested and e.key == key:
                return _finish_field(w, &ft, found > 0, name_start, name_len, <object>e.dtype,
                                     depth)
    try:
        if children is not None:
            if not _has_children(type_id):
                return None  # (a leaf with children: the Python reader decides)
            if _nested_param(w, &ft, type_id, &a) == 0:
                dtype = _nested_type(w, type_id, a, 0, 0, children, &ft, None)
            else:
                params = _type_params(w, &ft, type_id)
                if params is None:
                    return None
                dtype = w.make_type(params, children)
        else:
            key = _leaf_key(w, &ft, type_id)
            if key >= 0:
                dtype = _leaf_type(w, key, &ft, type_id)
            else:
                params = _type_params(w, &ft, type_id)
                if params is None:
                    return None
                if _has_children(type_id):  # (a nested type without children)
                    dtype = w.make_type(params, [])
                else:
                    dtype = w.types.get(params)
                    if dtype is None:
                        dtype = w.make_type(params, [])
                        if len(w.types) < MAX_CACHED_TYPES:  # (timezones, decimal scales: a
                            dtype = w.types.setdefault(params, dtype)  # file may name new ones)
    except Exception:  # noqa (the Python reader raises its own error for it)
        return None
    if dtype is None:
        return None
    return _finish_field(w, &ft, found > 0, name_start, name_len, dtype, depth)


cdef object _finish_field(_SchemaWalk w, Table* ft, bint has_name, Py_ssize_t name_start,
                          Py_ssize_t name_len, object dtype, Py_ssize_t depth):
    """The Field of table ``ft`` once its name is located and its (value) type made: its
    metadata, dictionary encoding and nullability (None as in ``_walk_field``)."""
    cdef Table enc, it
    cdef Py_ssize_t at
    cdef int64_t dict_id = 0, bits = 32, signed = 1, ordered = 0, kind = 0
    cdef bint ok, has_dict, nullable
    cdef int found
    cdef ChildEntry* e = NULL
    metadata = _metadata(w, ft, &ok)
    if not ok:
        return None
    found = _sub_table(ft, FIELD_DICTIONARY, &enc)
    if found < 0:
        return None
    has_dict = found > 0
    if has_dict:
        if _scalar(&enc, 0, 8, 0, &dict_id) < 0 or _scalar(&enc, 2, 1, 0, &ordered) < 0 or \
                _scalar(&enc, 3, 2, 0, &kind) < 0 or kind != 0:
            return None
        found = _sub_table(&enc, 1, &it)
        if found < 0:
            return None
        if found and (_scalar(&it, 0, 4, 0, &bits) < 0 or _scalar(&it, 1, 1, 0, &signed) < 0):
            return None
        ordered = ordered != 0
        signed = signed != 0
        try:
            dtype = _nested_type(w, DICTIONARY, bits, signed, ordered, [dtype], NULL,
                                 (DICTIONARY, bits, signed != 0, ordered != 0))
        except Exception:  # noqa (as in _walk_field)
            return None
    at = _field(ft, FIELD_NULLABLE, 1)
    if at < 0:
        return None
    nullable = at != 0 and ft.buf[at] != 0
    if depth > 0 and metadata is None and not has_dict:
        # A child field like one read before in this walk is that field: fields are
        # immutable, and the type memo can then give every parent of the same children one
        # type (10^5 struct<a: int8> fields: one struct type).  Compared by the name's bytes
        # and the type's identity: the memo holds the type, so its id cannot be reused.
        e = &w.child_memo[_mix(_bytes_hash(w.buf + name_start, name_len)
                               ^ <uint64_t><size_t><PyObject*>dtype ^ nullable)
                          & (MEMO_SLOTS - 1)]
        if e.field != NULL and e.dtype == <PyObject*>dtype and e.nullable == nullable and \
                e.name_len == name_len and \
                memcmp(e.name, w.buf + name_start, name_len) == 0:
            return <object>e.field
        child_key = (PyBytes_FromStringAndSize(<const char*>w.buf + name_start, name_len),
                     id(dtype), nullable)  # (the field holds its type: the id stays its)
        field = w.child_seen.get(child_key)
        if field is not None:
            e.name = w.buf + name_start
            e.name_len = name_len
            e.nullable = nullable
            _put(&e.dtype, dtype)
            _put(&e.field, field)
            return field
    if has_name:
        try:
            name = PyUnicode_DecodeUTF8(<const char*>w.buf + name_start, name_len, NULL)
        except UnicodeDecodeError:
            return None
    else:
        name = ""
    cdef PyObject* made = w.alloc(w.field_type, 0)
    if made == NULL:
        raise MemoryError()
    field = <object>made
    Py_DECREF(field)  # (the cast took a reference of its own)
    _set(field, w.off[0], name)
    _set(field, w.off[1], dtype)
    _set(field, w.off[2], nullable)
    _set(field, w.off[3], metadata)
    _set(field, w.off[4], dict_id if has_dict else None)
    if metadata is not None and EXTENSION_NAME in <dict>metadata:
        # The extension type the metadata names is looked up on first use, as the class's
        # constructor leaves it.  Kept tracked by the collector: _ext will hold an object.
        _set(field, w.off[5], w.unresolved)
        return field
    _set(field, w.off[5], None)  # (no extension named: none to look up, ever)
    if e != NULL:
        e.name = w.buf + name_start
        e.name_len = name_len
        e.nullable = nullable
        _put(&e.dtype, dtype)
        _put(&e.field, field)
        w.child_seen[child_key] = field
    # Out of the cyclic collector: such a field refers only to a str, an immutable type made
    # before it, bools, an int, None and a dict of str, and its slots never change, so it can
    # be in no cycle (unless a program puts one in the metadata dict, which Field documents
    # as immutable: a leak then, never a wrong value); the collector's passes over 10^6
    # tracked fields were two thirds of opening such a schema, its passes over 10^5 fields
    # with metadata a sixth.
    PyObject_GC_UnTrack(<void*>field)
    return field


cdef inline void _set(object obj, Py_ssize_t offset, object value) noexcept:
    """Set the (empty) slot at byte ``offset`` of ``obj`` to ``value``."""
    Py_INCREF(value)
    (<PyObject**>((<char*><PyObject*>obj) + offset))[0] = <PyObject*>value


cdef Py_ssize_t _slot_offset(type cls, str name) except -1:
    """The byte offset in a ``cls`` object of its object slot ``name`` (from its class or a
    base), read from the slot's member descriptor."""
    for klass in cls.__mro__:
        descr = klass.__dict__.get(name)
        if descr is not None:
            if type(descr).__name__ != "member_descriptor":
                raise TypeError(f"{cls.__name__}.{name} is not a slot")
            member = (<_MemberDescr*><PyObject*>descr).d_member
            if member.type != T_OBJECT_EX and member.type != T_OBJECT:
                raise TypeError(f"{cls.__name__}.{name} is not an object slot")
            return member.offset
    raise TypeError(f"{cls.__name__} has no slot {name!r}")


def schema_fields(const uint8_t[::1] data, Py_ssize_t start, Py_ssize_t count, type field_cls,
                  dict types, object make_type, object other, list budget,
                  Py_ssize_t md_cap):
    """The ``count`` fields of the fields vector whose first uoffset is at ``start`` in
    ``data`` (checked by the caller to lie inside it), as a tuple.

    Each field is read whole here, its children, type, custom metadata and dictionary
    encoding included: a ``field_cls`` (``types.Field``, whose slots are written directly; a
    field with metadata gets ``field_cls.UNRESOLVED_EXTENSION``, as its constructor sets it)
    of a type made by ``make_type(params, children)``, where ``params`` is ``(type_id, ...)``
    as read from the type table (``(-1, index bit width, index signed, ordered)`` for a
    dictionary, whose one child is the value type).  Types without children are kept in
    ``types`` (params or a leaf's key -> DataType: types are immutable, so one instance
    serves every field, across walks).

    ``budget`` is ``format/decode.py``'s ``[fields left to claim, nesting limit, ...]``: a
    field's children are claimed from it as there, and a field read here takes its claims
    only once it is read whole, and its metadata entries from ``budget[5]``.  ``md_cap``
    bounds one field's metadata bytes.  A field that
    breaks a limit or a check, or that is rare (an unknown type), is ``other(index)``: the
    Python reader, which raises the error naming the field (and is the reference this reader
    is tested against)."""
    cdef const uint8_t* buf = &data[0] if data.shape[0] else NULL
    cdef Py_ssize_t size = data.shape[0], i, at, committed, md_committed
    cdef _SchemaWalk w = _SchemaWalk.__new__(_SchemaWalk)
    w.buf = buf
    w.size = size
    w.field_type = <PyTypeObject*>field_cls
    w.alloc = (<_AllocSlot*><PyObject*>field_cls).tp_alloc
    for i, name in enumerate(("name", "storage_type", "nullable", "storage_metadata",
                              "dictionary_id", "_ext")):
        w.off[i] = _slot_offset(field_cls, name)
    w.unresolved = field_cls.UNRESOLVED_EXTENSION
    w.types = types
    w.make_type = make_type
    w.max_depth = budget[1]
    w.md_cap = md_cap
    w.nested_seen = {}
    w.child_seen = {}
    w.left = budget[0]
    w.md_left = budget[5]
    out = PyTuple_New(count)
    for i in range(count):
        at = start + 4 * i
        field = None
        committed, md_committed = w.left, w.md_left
        if _fits(at, 4, size):
            at = _follow(buf, size, at)
            if at >= 0:
                field = _walk_field(w, at, 0)
        if field is None:  # (its claims dropped: the Python reader makes them again)
            budget[0], budget[5] = committed, md_committed
            field = other(i)
            w.left, w.md_left = budget[0], budget[5]
        Py_INCREF(field)
        PyTuple_SET_ITEM(out, i, field)
    budget[0], budget[5] = w.left, w.md_left
    return out
