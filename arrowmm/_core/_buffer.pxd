# The buffer protocol for a flat run of bytes, shared by the kernels' classes that expose
# memory (BufferView in _region, Block in _arena).  Declarations only: included by cimport.
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES


cdef inline void fill_byte_buffer(Py_buffer* buffer, object obj, void* ptr, Py_ssize_t size,
                                  bint readonly, int flags, Py_ssize_t* shape,
                                  Py_ssize_t* strides) noexcept:
    """Describe ``size`` bytes at ``ptr`` owned by ``obj`` as a 1-D ``uint8`` buffer
    (``shape``/``strides``: one-element arrays that live as long as ``obj``)."""
    shape[0] = size
    strides[0] = 1
    buffer.buf = ptr
    buffer.obj = obj
    buffer.len = size
    buffer.readonly = readonly
    buffer.itemsize = 1
    buffer.format = <char*>"B" if (flags & PyBUF_FORMAT) else NULL
    buffer.ndim = 1
    buffer.shape = shape if (flags & PyBUF_ND) else NULL
    buffer.strides = strides if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
    buffer.suboffsets = NULL
    buffer.internal = NULL
