"""A list of Python str (or bytes) and None to a string/binary array's buffers, in C.

Why: ``from_python._binaries`` spent ~25 us on 8 short strings (a null mask, the kinds seen,
the encoded values joined, their lengths, a cumsum), four times pyarrow.  Here one pass sizes
the values and one copies them into a single ``bytes``: offsets, then the validity bitmap
(when a value is None), then the data, three views of it.

Only exact ``str``, ``bytes`` (when asked) and None are taken: any other value, a str that is
not encodable as UTF-8 (a lone surrogate), or data past 32-bit offsets gives None, and the
caller's Python path converts the list, naming what does not fit.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.ref cimport PyObject
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset

from arrowmm._core._region cimport Region, region_from_pointer

cdef extern from "Python.h":
    bint PyUnicode_CheckExact(PyObject* o)
    bint PyBytes_CheckExact(PyObject* o)
    bint PyUnicode_IS_COMPACT_ASCII(PyObject* o)
    Py_ssize_t PyUnicode_GET_LENGTH(PyObject* o)
    void* PyUnicode_DATA(PyObject* o)

__all__ = ["pack_strings"]


def pack_strings(list values, bint large, bint take_bytes):
    """(validity view or None, offsets view, data view, null count) of ``values`` as a
    string/binary array (``large``: 64-bit offsets), or None when a value is not a str, None
    or (``take_bytes``) bytes, a str is not encodable, or the data overflows 32-bit offsets.

    ``values`` is copied first: its items are read twice, and a list the caller still holds
    could change between the passes (a finaliser run by an allocation here)."""
    cdef list items = list(values)  # non-ASCII str replaced below by their UTF-8 bytes
    cdef Py_ssize_t n = PyList_GET_SIZE(items), i
    cdef PyObject* v
    cdef int64_t total = 0, nulls = 0
    cdef int width = 8 if large else 4
    for i in range(n):
        v = PyList_GET_ITEM(items, i)
        if <object>v is None:
            nulls += 1
        elif PyUnicode_CheckExact(v):
            if PyUnicode_IS_COMPACT_ASCII(v):
                total += PyUnicode_GET_LENGTH(v)
            else:
                try:
                    encoded = (<str>v).encode("utf-8")
                except UnicodeEncodeError:
                    return None
                items[i] = encoded
                total += PyBytes_GET_SIZE(encoded)
        elif take_bytes and PyBytes_CheckExact(v):
            total += PyBytes_GET_SIZE(<object>v)
        else:
            return None
    if not large and total > INT32_MAX:
        return None
    cdef Py_ssize_t offsets_size = (n + 1) * width
    cdef Py_ssize_t bits_size = (n + 7) // 8 if nulls else 0
    # (data after the offsets and bitmap: each view starts where its type wants it aligned)
    out = PyBytes_FromStringAndSize(NULL, offsets_size + bits_size + total)
    cdef char* base = PyBytes_AS_STRING(out)
    cdef char* offsets = base
    cdef uint8_t* bits = <uint8_t*>(base + offsets_size)
    cdef char* data = base + offsets_size + bits_size
    cdef int64_t at = 0, size
    cdef int32_t at32
    if bits_size:
        memset(bits, 0, bits_size)  # (the pad bits past the last value stay zero)
    for i in range(n):
        if width == 4:
            at32 = <int32_t>at
            memcpy(offsets + 4 * i, &at32, 4)
        else:
            memcpy(offsets + 8 * i, &at, 8)
        v = PyList_GET_ITEM(items, i)
        if <object>v is None:
            continue
        if bits_size:
            bits[i >> 3] |= <uint8_t>(1 << (i & 7))
        if PyUnicode_CheckExact(v):
            size = PyUnicode_GET_LENGTH(v)
            memcpy(data + at, PyUnicode_DATA(v), size)
        else:
            size = PyBytes_GET_SIZE(<object>v)
            memcpy(data + at, PyBytes_AS_STRING(<object>v), size)
        at += size
    if width == 4:
        at32 = <int32_t>at
        memcpy(offsets + 4 * n, &at32, 4)
    else:
        memcpy(offsets + 8 * n, &at, 8)
    cdef Region region = region_from_pointer(<const uint8_t*>base, PyBytes_GET_SIZE(out), out,
                                             "bytes")
    validity = region.view(offsets_size, bits_size) if nulls else None
    return (validity, region.view(0, offsets_size), region.view(offsets_size + bits_size, total),
            nulls)
