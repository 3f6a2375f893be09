from libc.stdint cimport uint8_t, int64_t


cdef class Region:
    cdef Py_buffer _view
    cdef bint _has_view
    cdef const uint8_t* ptr
    cdef readonly Py_ssize_t size
    cdef readonly object owner
    cdef readonly str description
    cdef readonly str shared_name
    cdef object __weakref__

    cpdef BufferView view(self, int64_t offset, int64_t length, str what=*)


cdef class BufferView:
    cdef readonly Region region
    cdef const uint8_t* ptr
    cdef readonly Py_ssize_t offset
    cdef readonly Py_ssize_t size
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]
    cdef Py_ssize_t _exports

    cpdef BufferView slice(self, int64_t offset, int64_t length, str what=*)


cdef Region region_from_pointer(const uint8_t* ptr, Py_ssize_t size, object owner, str description)
