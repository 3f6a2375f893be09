"""Fast conversion of Arrow values to Python objects (``to_pylist``).

A Python loop over numpy scalars and memoryview slices costs microseconds per
value; these loops build ``str``/``bytes`` straight from buffer pointers with
the C API.  Inputs are not trusted to have been validated: every offset, size
and buffer index is bounds-checked against the real buffer before it is used
(the offsets of null slots too), and bad ones raise ArrowInvalid naming the slot.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.stdint cimport uint8_t, int32_t, uint32_t, int64_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy
from arrowmm._core._bits cimport bit_is_set, read_le32

import numpy as np

from arrowmm._core._bitmap import _byte_buffer, _offsets_array, _validity_buffer
from arrowmm.errors import ArrowInvalid

ctypedef fused offset_t:
    int32_t
    int64_t


cdef inline object _make(const char* p, int64_t n, bint utf8):
    if utf8:
        return PyUnicode_DecodeUTF8(p, n, NULL)
    return PyBytes_FromStringAndSize(p, n)


cdef int _span_error(int64_t i, int64_t s, int64_t e, int64_t n) except -1:
    """Raise for value ``i`` whose offsets ``s .. e`` do not fit data of ``n`` bytes (one
    message for every loop that checks spans)."""
    raise ArrowInvalid(f"offsets: value[{i}] spans offset[{i}]={s} .. offset[{i + 1}]={e} "
                       f"(need 0 <= offset[{i}] <= offset[{i + 1}] <= data size {n})")


cdef int _view_padding_error(const uint8_t[::1] v, int64_t i, int64_t size) except -1:
    raise ArrowInvalid(f"binary views: view[{i}] holds {size} bytes inline, but its padding "
                       f"{bytes(v[16 * i + 4 + size:16 * i + 16])!r} is not zero")


cdef object _decode_error(object exc, int64_t i, str where):
    return ArrowInvalid(f"string value[{i}] ({where}) is not valid UTF-8: "
                        f"{exc.reason} at byte {exc.start} of the value")


cdef list _var_loop(const offset_t[::1] o, const uint8_t[::1] d, int64_t length,
                    const uint8_t[::1] bits, bint has_bits, int64_t bit_offset, bint utf8):
    cdef int64_t n = d.shape[0], i = 0, s, e
    cdef list out = [None] * length
    cdef object empty = "" if utf8 else b""
    try:
        for i in range(length):
            s = o[i]  # (every slot's span is checked, a null's too: a damaged offset beside
            e = o[i + 1]  # a null would otherwise shift its neighbour's value)
            if s < 0 or e < s or e > n:
                _span_error(i, s, e, n)
            if has_bits and not bit_is_set(bits, bit_offset + i):
                continue
            out[i] = empty if e == s else _make(<const char*>&d[s], e - s, utf8)
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, i, f"data[{o[i]}:{o[i + 1]}]") from None
    return out


cdef inline uint64_t _hash_bytes(const uint8_t* p, int64_t n) noexcept nogil:
    """FNV-1a, 8 bytes a step (short values dominate; any good spread will do)."""
    cdef uint64_t h = 14695981039346656037ULL ^ <uint64_t>n
    cdef uint64_t w
    cdef uint32_t w4
    cdef int64_t j = 0
    while j + 8 <= n:
        memcpy(&w, p + j, 8)
        h = (h ^ w) * 1099511628211ULL
        h ^= h >> 29
        j += 8
    if j + 4 <= n:  # (a tail of 4 to 7 bytes: four of them in one step)
        memcpy(&w4, p + j, 4)
        h = (h ^ w4) * 1099511628211ULL
        h ^= h >> 29
        j += 4
    while j < n:
        h = (h ^ p[j]) * 1099511628211ULL
        j += 1
    return h ^ (h >> 32)


cdef struct _Entry:
    int64_t start  # the value's bytes in the data buffer
    int64_t size
    uint64_t hash
    PyObject* obj  # the object made for it (borrowed from the output), NULL: a free slot


cdef object _var_loop_dedup(const offset_t[::1] o, const uint8_t[::1] d, int64_t length,
                            const uint8_t[::1] bits, bint has_bits, int64_t bit_offset, bint utf8):
    """``_var_loop`` into a numpy object array, equal values made once and shared (pyarrow's
    ``deduplicate_objects``): an open-addressing table of entries keyed by the bytes (each
    entry one 32-byte record, its hash compared before its bytes), grown at half full, so
    memory follows the distinct values, not the rows."""
    cdef int64_t n = d.shape[0], i = 0, s, e, size
    out = np.empty(length, dtype=object)  # (None everywhere: nulls stay so)
    cdef PyObject** dst = <PyObject**><uintptr_t>out.ctypes.data
    cdef object empty = "" if utf8 else b""
    cdef object value
    cdef PyObject* shared
    cdef Py_ssize_t cap = 1024, used = 0, slot
    cdef _Entry* table = NULL
    cdef _Entry* ent
    cdef uint64_t h
    cdef const uint8_t* base = &d[0] if n else NULL
    try:
        table = <_Entry*>calloc(cap, sizeof(_Entry))
        if table == NULL:
            raise MemoryError()
        for i in range(length):
            s = o[i]  # (every slot's span is checked, a null's too: a damaged offset beside
            e = o[i + 1]  # a null would otherwise shift its neighbour's value)
            if s < 0 or e < s or e > n:
                _span_error(i, s, e, n)
            if has_bits and not bit_is_set(bits, bit_offset + i):
                continue
            size = e - s
            if size == 0:
                shared = <PyObject*>empty
            else:
                h = _hash_bytes(base + s, size)
                slot = <Py_ssize_t>(h & <uint64_t>(cap - 1))
                while True:
                    ent = &table[slot]
                    if ent.obj == NULL or (ent.hash == h and ent.size == size and
                                           memcmp(base + ent.start, base + s, size) == 0):
                        break
                    slot = (slot + 1) & (cap - 1)
                if ent.obj != NULL:
                    shared = ent.obj
                else:
                    value = _make(<const char*>(base + s), size, utf8)
                    shared = <PyObject*>value
                    ent.start, ent.size, ent.hash, ent.obj = s, size, h, shared
                    used += 1
            Py_INCREF(<object>shared)
            Py_DECREF(<object>dst[i])  # (the None np.empty put there)
            dst[i] = shared  # (the output holds the reference the table borrows)
            if used * 2 > cap:
                _grow(&table, &cap)
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, i, f"data[{o[i]}:{o[i + 1]}]") from None
    finally:
        free(table)
    return out


cdef int _grow(_Entry** table, Py_ssize_t* cap) except -1:
    """Double the table of ``_var_loop_dedup``, re-inserting what it holds."""
    cdef Py_ssize_t old = cap[0], new = old * 2, k, slot
    cdef _Entry* nt = <_Entry*>calloc(new, sizeof(_Entry))
    if nt == NULL:
        raise MemoryError()
    for k in range(old):
        if table[0][k].obj != NULL:
            slot = <Py_ssize_t>(table[0][k].hash & <uint64_t>(new - 1))
            while nt[slot].obj != NULL:
                slot = (slot + 1) & (new - 1)
            nt[slot] = table[0][k]
    free(table[0])
    table[0], cap[0] = nt, new
    return 0


cdef object _var_to_list(data, offsets, int64_t length, validity, int64_t bit_offset,
                         bint utf8, bint dedup=False):
    db = _byte_buffer(data, "data")
    cdef const uint8_t[::1] d = db
    arr = _offsets_array(offsets)
    if length < 0:
        raise ArrowInvalid(f"length={length} < 0")
    if length == 0:
        return np.empty(0, dtype=object) if dedup else []
    if arr.shape[0] - 1 < length:
        raise ArrowInvalid(f"offsets: {arr.shape[0]} offsets for length {length} "
                           f"(need length+1={int(length) + 1})")
    vb = _validity_buffer(validity, bit_offset, length, "values")
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    if dedup:  # (a numpy object array, not a list)
        if arr.dtype.itemsize == 4:
            return _var_loop_dedup[int32_t](arr, d, length, bits, vb is not None, bit_offset, utf8)
        return _var_loop_dedup[int64_t](arr, d, length, bits, vb is not None, bit_offset, utf8)
    if arr.dtype.itemsize == 4:
        return _var_loop[int32_t](arr, d, length, bits, vb is not None, bit_offset, utf8)
    return _var_loop[int64_t](arr, d, length, bits, vb is not None, bit_offset, utf8)


def strings_to_list(data, offsets, int64_t length, validity=None, int64_t bit_offset=0):
    """Utf8/LargeUtf8 values as a list of str (None at null slots)."""
    return _var_to_list(data, offsets, length, validity, bit_offset, True)


def strings_to_objects_dedup(data, offsets, int64_t length, validity=None, int64_t bit_offset=0,
                             bint utf8=True):
    """``strings_to_list`` (``binaries_to_list`` with ``utf8`` False) as a numpy object array,
    equal values sharing one object, as pyarrow's ``to_pandas(deduplicate_objects=True)``
    gives them: memory follows the distinct values, and each is decoded once."""
    return _var_to_list(data, offsets, length, validity, bit_offset, utf8, True)


def binaries_to_list(data, offsets, int64_t length, validity=None, int64_t bit_offset=0):
    """Binary/LargeBinary values as a list of bytes (None at null slots)."""
    return _var_to_list(data, offsets, length, validity, bit_offset, False)


def fixed_binaries_to_list(data, int64_t byte_width, int64_t length, validity=None,
                           int64_t bit_offset=0):
    """FixedSizeBinary values as a list of bytes (None at null slots)."""
    db = _byte_buffer(data, "data")
    cdef const uint8_t[::1] d = db
    cdef int64_t i
    if byte_width < 0:
        raise ArrowInvalid(f"fixed-size binary: byte_width={byte_width} < 0")
    if length < 0:
        raise ArrowInvalid(f"fixed-size binary: length={length} < 0")
    if byte_width > 0 and length > d.shape[0] // byte_width:
        raise ArrowInvalid(
            f"fixed-size binary: length {length} * byte_width {byte_width} = "
            f"{int(length) * byte_width} bytes needed, data holds {d.shape[0]} bytes")
    vb = _validity_buffer(validity, bit_offset, length, "values")
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    cdef bint has_bits = vb is not None
    cdef list out = [None] * length
    for i in range(length):
        if has_bits and not bit_is_set(bits, bit_offset + i):
            continue
        if byte_width == 0:
            out[i] = b""
        else:
            out[i] = PyBytes_FromStringAndSize(<const char*>&d[i * byte_width], byte_width)
    return out


def views_to_list(views, int64_t length, validity, int64_t bit_offset, variadic_buffers,
                  bint utf8):
    """BinaryView/Utf8View values as a list of bytes or str (None at null slots), each view's
    prefix and inline padding checked against its value (pyarrow's full validation does)."""
    vbuf = _byte_buffer(views, "views")
    cdef const uint8_t[::1] v = vbuf
    cdef int64_t i = 0, base, size, bidx, off, nbuf, pad
    cdef Py_buffer* pins = NULL
    cdef Py_ssize_t pinned = 0
    cdef const char* p
    if length < 0:
        raise ArrowInvalid(f"binary views: length={length} < 0")
    if length > v.shape[0] // 16:
        raise ArrowInvalid(f"binary views: views buffer holds {v.shape[0]} bytes, "
                           f"length {length} needs 16*{length} = {16 * int(length)}")
    vb = _validity_buffer(validity, bit_offset, length, "values")
    cdef const uint8_t[::1] bits = vb if vb is not None else b""
    cdef bint has_bits = vb is not None
    buffers = list(variadic_buffers)
    nbuf = len(buffers)
    cdef list out = [None] * length
    cdef object empty = "" if utf8 else b""
    pins = <Py_buffer*>calloc(nbuf + 1, sizeof(Py_buffer))
    if pins == NULL:
        raise MemoryError()
    try:
        for pinned in range(nbuf):
            PyObject_GetBuffer(buffers[pinned], &pins[pinned], PyBUF_SIMPLE)
        pinned = nbuf
        for i in range(length):
            if has_bits and not bit_is_set(bits, bit_offset + i):
                continue
            base = 16 * i
            size = read_le32(v, base)
            if size < 0:
                raise ArrowInvalid(f"binary views: view[{i}] size={size} < 0")
            if size <= 12:
                for pad in range(base + 4 + size, base + 16):
                    if v[pad] != 0:
                        _view_padding_error(v, i, size)
                out[i] = empty if size == 0 else _make(<const char*>&v[base + 4], size, utf8)
                continue
            bidx = read_le32(v, base + 8)
            off = read_le32(v, base + 12)
            if bidx < 0 or bidx >= nbuf:
                raise ArrowInvalid(f"binary views: view[{i}] buffer_index={bidx} out of "
                                   f"range for {nbuf} variadic buffers")
            if off < 0 or size > pins[bidx].len - off:
                raise ArrowInvalid(
                    f"binary views: view[{i}] offset={off} size={size} outside variadic "
                    f"buffer {bidx} of length {pins[bidx].len}")
            p = <const char*>pins[bidx].buf + off
            if memcmp(p, &v[base + 4], 4) != 0:  # (what sorting and comparing read first)
                raise ArrowInvalid(f"binary views: view[{i}] prefix {bytes(v[base + 4:base + 8])!r} "
                                   f"!= its first 4 data bytes {bytes(p[:4])!r} in variadic "
                                   f"buffer {bidx} at offset {off}")
            out[i] = _make(p, size, utf8)
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, i, f"view[{i}]") from None
    finally:
        for i in range(pinned):
            PyBuffer_Release(&pins[i])
        free(pins)
    return out


def values_to_list(ndarray, validity=None, int64_t bit_offset=0):
    """``ndarray.tolist()`` with None at the slots ``validity`` marks null."""
    if not isinstance(ndarray, np.ndarray) or ndarray.ndim != 1:
        raise TypeError("values_to_list needs a 1-D numpy array")
    cdef list out = ndarray.tolist()
    if validity is None:
        return out
    cdef int64_t n = len(out), i = 0, pos
    vb = _validity_buffer(validity, bit_offset, n, "values")
    cdef const uint8_t[::1] bits = vb
    while i < n:
        pos = bit_offset + i
        if (pos & 7) == 0 and n - i >= 8 and bits[pos >> 3] == 0xFF:
            i += 8  # eight valid slots at once
            continue
        if not bit_is_set(bits, pos):
            out[i] = None
        i += 1
    return out
