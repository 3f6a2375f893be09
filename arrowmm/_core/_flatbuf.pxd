from libc.stdint cimport int64_t, uint8_t


cdef struct MessageInfo:
    int version
    int header_type
    int64_t body_length
    bint has_metadata
    int64_t dict_id
    bint is_delta
    int64_t length            # the record batch's (or dictionary batch data's)
    Py_ssize_t nodes_start    # FieldNode vector: byte offset and count
    Py_ssize_t n_nodes
    Py_ssize_t buffers_start  # Buffer vector
    Py_ssize_t n_buffers
    int codec                 # -1: no compression
    int method
    Py_ssize_t variadic_start
    Py_ssize_t n_variadic


cdef const char* peek_message(const uint8_t* buf, Py_ssize_t size, MessageInfo* info) noexcept nogil


cdef class StructPairs:
    cdef readonly object owner
    cdef const uint8_t* ptr
    cdef readonly Py_ssize_t start
    cdef readonly Py_ssize_t count

    cpdef tuple get(self, Py_ssize_t i)
