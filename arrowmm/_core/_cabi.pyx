"""The ABI of the Arrow C data and C stream interfaces: structs, release callbacks, capsules.

Why this module exists apart from the code that fills the structs: the structs' memory rules
(who frees what, on which thread, with or without the GIL) are the thread-safety-critical part
of every export, and they are the same whichever arrowmm object is exported.  Here they are
written once, knowing no arrowmm Python class: ``interop._cdata`` fills the structs from
arrowmm types and Arrays, ``ipc.read._batch_walk`` straight from IPC messages.

Memory: a struct filled by ``begin_owned`` holds a strong reference to its owner in its private
data; ``array_release`` drops it (taking the GIL only for that).  The structs of one exported
batch may instead live in one ``Arena`` holding the single reference that keeps the source
memory alive.  The C data interface lets a consumer move any child out and release it on its
own, on any thread, so the arena counts its live nodes atomically and the last release frees
it.  Release callbacks take no lock and may run on any thread.

The typed classes (``types``, ``arrays``) reach the functions that fill the structs
(``interop._cdata``, above them) through the hooks of ``arrowmm.hooks``.
"""
from cpython.bytes cimport PyBytes_AsString
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid, PyCapsule_New
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.errno cimport EINVAL, EIO, ENOMEM, ENOSYS
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import sys

from arrowmm.errors import ArrowInvalid

__all__ = []

cdef extern from "Python.h":
    int Py_IsInitialized() nogil


# == memory =================================================================================

cdef void* checked_calloc(size_t n, size_t size) except NULL:
    """``calloc`` (at least one element), raising MemoryError instead of returning NULL."""
    cdef void* p = calloc(n if n else 1, size)
    if p == NULL:
        raise MemoryError()
    return p


cdef char* dup_bytes(bytes b) except NULL:
    """A malloc'd, NUL-terminated copy of ``b`` (which may contain NULs)."""
    cdef Py_ssize_t n = len(b)
    cdef char* out = <char*>malloc(n + 1)
    if out == NULL:
        raise MemoryError()
    memcpy(out, <const char*>b, n)
    out[n] = 0
    return out


cdef inline int32_t _read_i32(const char* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


# == schemas ================================================================================

cdef void free_schema(ArrowSchema* s) noexcept nogil:
    """Release (if still live) and free a heap ArrowSchema."""
    if s != NULL:
        if s.release != NULL:
            s.release(s)
        free(s)


cdef void schema_release(ArrowSchema* s) noexcept nogil:
    """The release callback of every exported ArrowSchema: its children, its dictionary and
    its strings are heap copies it owns."""
    cdef int64_t i
    if s == NULL or s.release == NULL:
        return
    for i in range(s.n_children if s.children != NULL else 0):
        free_schema(s.children[i])
    free(s.children)
    free_schema(s.dictionary)
    free(<void*>s.format)
    free(<void*>s.name)
    free(<void*>s.metadata)
    s.release = NULL


cdef void _schema_capsule_destructor(object capsule) noexcept:
    free_schema(<ArrowSchema*>PyCapsule_GetPointer(capsule, "arrow_schema"))


cdef object schema_capsule(ArrowSchema* s):
    """An ``"arrow_schema"`` capsule owning the heap struct ``s`` (freed here on failure)."""
    try:
        return PyCapsule_New(s, "arrow_schema", _schema_capsule_destructor)
    except BaseException:
        free_schema(s)
        raise


cdef bytes encode_metadata(object metadata):
    """Custom metadata (a str -> str mapping) in the C interface encoding, or None for none.
    Keys and values that are not UTF-8 travel as read, their bytes kept as lone surrogates
    (Python's ``surrogateescape``), as everywhere arrowmm reads and writes metadata."""
    if not metadata:
        return None
    parts = [len(metadata).to_bytes(4, sys.byteorder, signed=True)]
    for k, v in metadata.items():
        for item in (k.encode("utf-8", "surrogateescape"),
                     v.encode("utf-8", "surrogateescape")):
            parts.append(len(item).to_bytes(4, sys.byteorder, signed=True))
            parts.append(item)
    return b"".join(parts)


cdef object decode_metadata(const char* md, str path):
    """The str -> str dict of C interface metadata (None for NULL); ``path`` names it in
    errors."""
    cdef int32_t n, i, size
    cdef Py_ssize_t pos = 4
    if md == NULL:
        return None
    n = _read_i32(md)
    if n < 0:
        raise ArrowInvalid(f"{path}: metadata has a negative entry count {n}")
    out = {}
    for i in range(n):
        key_value = []
        for what in ("key", "value"):
            size = _read_i32(md + pos)
            if size < 0:
                raise ArrowInvalid(f"{path}: metadata {what} {i} has negative length {size}")
            key_value.append(md[pos + 4:pos + 4 + size])
            pos += 4 + size
        key, value = key_value
        out[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
    return out


# == arrays: one heap struct per node =======================================================

cdef void free_array(ArrowArray* a) noexcept nogil:
    """Release (if still live) and free a heap ArrowArray."""
    if a != NULL:
        if a.release != NULL:
            a.release(a)
        free(a)


cdef void array_release(ArrowArray* a) noexcept nogil:
    """The release callback of a node made by ``begin_owned``: its heap children, dictionary,
    buffer list, and the reference to its owner (dropped with the GIL, if Python still runs)."""
    cdef int64_t i
    cdef ArrayPrivate* p
    if a == NULL or a.release == NULL:
        return
    for i in range(a.n_children if a.children != NULL else 0):
        free_array(a.children[i])  # NULL or moved (release NULL) children are skipped
    free(a.children)
    free_array(a.dictionary)
    free(<void*>a.buffers)
    p = <ArrayPrivate*>a.private_data
    if p != NULL:
        free(p.variadic_sizes)
        if p.owner != NULL and Py_IsInitialized():
            with gil:
                Py_XDECREF(p.owner)
        free(p)
    a.private_data = NULL
    a.release = NULL


cdef ArrayPrivate* begin_owned(ArrowArray* out, object owner) except NULL:
    """Zero ``out`` and make it a live node holding a reference to ``owner``; the caller fills
    the rest (buffers, children with ``checked_calloc``) and releases ``out`` if that raises."""
    cdef ArrayPrivate* p
    memset(out, 0, sizeof(ArrowArray))
    p = <ArrayPrivate*>checked_calloc(1, sizeof(ArrayPrivate))
    out.private_data = p
    out.release = array_release
    Py_INCREF(owner)
    p.owner = <PyObject*>owner
    return p


cdef void clear_array(ArrowArray* out) noexcept:
    """Release ``out`` if it is live, and zero it."""
    if out.release != NULL:
        out.release(out)
    memset(out, 0, sizeof(ArrowArray))


cdef void _array_capsule_destructor(object capsule) noexcept:
    free_array(<ArrowArray*>PyCapsule_GetPointer(capsule, "arrow_array"))


cdef object array_capsule(ArrowArray* a):
    """An ``"arrow_array"`` capsule owning the heap struct ``a`` (freed here on failure)."""
    try:
        return PyCapsule_New(a, "arrow_array", _array_capsule_destructor)
    except BaseException:
        free_array(a)
        raise


# == arrays: a whole batch's nodes in one arena =============================================

cdef extern from *:
    """
    static inline int64_t arrowmm_atomic_add(int64_t* p, int64_t v) {
        return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL);
    }
    """
    int64_t arrowmm_atomic_add(int64_t* p, int64_t v) nogil


cdef size_t node_bytes(int64_t n_children) noexcept nogil:
    """The arena bytes of one node with ``n_children`` children."""
    return sizeof(Node) + n_children * (sizeof(ArrowArray*) + sizeof(ArrowArray))


cdef Arena* arena_new(size_t size, PyObject* owner) except NULL:
    """An arena with room for ``size`` bytes of nodes, holding a reference to ``owner`` and the
    builder's count (drop it with ``arena_drop`` when done filling)."""
    cdef Arena* arena = <Arena*>checked_calloc(1, sizeof(Arena) + size)
    arena.refs = 1
    arena.size = size
    Py_INCREF(<object>owner)
    arena.owner = owner
    return arena


cdef void arena_drop(Arena* arena) noexcept nogil:
    """Drop one count; the last frees the arena and its owner's reference."""
    if arrowmm_atomic_add(&arena.refs, -1) == 0:
        if Py_IsInitialized():
            with gil:
                Py_XDECREF(arena.owner)
        free(arena)


cdef void _node_release(ArrowArray* a) noexcept nogil:
    """Release a node made by ``begin_node``: its children, its dictionary, its arena count."""
    cdef int64_t i
    if a == NULL or a.release == NULL:
        return
    for i in range(a.n_children):
        if a.children[i].release != NULL:  # (a child the consumer moved out has release NULL)
            a.children[i].release(a.children[i])
    free_array(a.dictionary)
    arena_drop((<Node*>a.private_data).arena)
    a.private_data = NULL
    a.release = NULL


cdef int begin_node(Arena* arena, ArrowArray* out, int64_t length, int64_t nulls, int n_buffers,
                    int n_children) except -1:
    """Set up ``out`` as a node of ``arena``, with room for up to 3 buffers and ``n_children``
    zeroed children (and, if set by the caller, a heap ``dictionary`` it frees)."""
    cdef size_t need = node_bytes(n_children)
    cdef Node* node
    cdef ArrowArray* kids
    cdef int i
    if need > arena.size - arena.used:
        raise ArrowInvalid(f"internal error: export arena of {arena.size} bytes is too small")
    node = <Node*>((<char*>arena) + sizeof(Arena) + arena.used)
    arena.used += need
    kids = <ArrowArray*>((<char*>node) + sizeof(Node) + n_children * sizeof(ArrowArray*))
    memset(out, 0, sizeof(ArrowArray))
    node.arena = arena
    arrowmm_atomic_add(&arena.refs, 1)
    out.private_data = node
    out.release = _node_release
    out.length = length
    out.null_count = nulls
    out.n_buffers = n_buffers
    out.buffers = node.buffers
    out.n_children = n_children
    out.children = <ArrowArray**>((<char*>node) + sizeof(Node))
    for i in range(n_children):
        out.children[i] = &kids[i]
    return 0


cdef int begin_alone(ArrowArray* out, PyObject* owner, int64_t length, int64_t nulls,
                     int n_buffers) except -1:
    """A childless node in an arena of its own, holding ``owner``."""
    cdef Arena* arena = arena_new(node_bytes(0), owner)
    try:
        begin_node(arena, out, length, nulls, n_buffers, 0)
    finally:
        arena_drop(arena)
    return 0


# == streams ================================================================================

cdef class StreamProducer:
    """The private data of an exported ArrowArrayStream: ``get_schema`` and ``get_next`` are
    filled in by subclasses; the last error and its errno are kept here, sticky."""

    cdef int fail(self, exc) noexcept:
        """Record ``exc`` as the last error; its errno, sticky for later calls."""
        self.last_error = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        self.error_code = (exc.errno if isinstance(exc, OSError) and exc.errno else
                           ENOMEM if isinstance(exc, MemoryError) else
                           ENOSYS if isinstance(exc, NotImplementedError) else
                           EINVAL if isinstance(exc, (ValueError, TypeError)) else EIO)
        return self.error_code

    cdef int get_schema(self, ArrowSchema* out) noexcept:
        return self.fail(NotImplementedError("stream without a schema"))

    cdef int get_next(self, ArrowArray* out) noexcept:
        return self.fail(NotImplementedError("stream without batches"))


# the callbacks a consumer calls, from any thread, with or without the GIL

cdef int _stream_get_schema(ArrowArrayStream* s, ArrowSchema* out) noexcept nogil:
    if s.private_data == NULL:
        return EINVAL
    with gil:
        return (<StreamProducer>s.private_data).get_schema(out)


cdef int _stream_get_next(ArrowArrayStream* s, ArrowArray* out) noexcept nogil:
    if s.private_data == NULL:
        return EINVAL
    with gil:
        producer = <StreamProducer>s.private_data
        if producer.error_code:
            return producer.error_code
        return producer.get_next(out)


cdef const char* _last_error_gil(StreamProducer producer) noexcept:
    return NULL if producer.last_error is None else PyBytes_AsString(producer.last_error)


cdef const char* _stream_get_last_error(ArrowArrayStream* s) noexcept nogil:
    if s.private_data == NULL:
        return NULL
    with gil:
        return _last_error_gil(<StreamProducer>s.private_data)


cdef void _stream_release(ArrowArrayStream* s) noexcept nogil:
    if s == NULL or s.release == NULL:
        return
    if s.private_data != NULL and Py_IsInitialized():
        with gil:
            Py_XDECREF(<PyObject*>s.private_data)
    s.private_data = NULL
    s.release = NULL


cdef void _stream_capsule_destructor(object capsule) noexcept:
    cdef ArrowArrayStream* s = <ArrowArrayStream*>PyCapsule_GetPointer(
        capsule, "arrow_array_stream")
    if s != NULL and s.release != NULL:
        s.release(s)
    free(s)


cdef object stream_capsule(StreamProducer producer):
    """An ``"arrow_array_stream"`` capsule whose callbacks call ``producer`` (held by the
    stream until its release)."""
    cdef ArrowArrayStream* s = <ArrowArrayStream*>checked_calloc(1, sizeof(ArrowArrayStream))
    Py_INCREF(producer)
    s.private_data = <void*>producer
    s.get_schema = _stream_get_schema
    s.get_next = _stream_get_next
    s.get_last_error = _stream_get_last_error
    s.release = _stream_release
    try:
        return PyCapsule_New(s, "arrow_array_stream", _stream_capsule_destructor)
    except BaseException:
        s.release(s)
        free(s)
        raise


# == import =================================================================================

cdef void* capsule_pointer(object capsule, const char* name) except NULL:
    """The pointer of a capsule named ``name``; ArrowInvalid for anything else."""
    if not PyCapsule_IsValid(capsule, name):
        raise ArrowInvalid(f"expected a PyCapsule named {(<bytes>name).decode()!r}, got "
                           f"{type(capsule).__name__}")
    return PyCapsule_GetPointer(capsule, name)


cdef class ImportedArray:
    """Owns an ArrowArray moved out of a capsule (or filled by a foreign stream); its
    ``release`` runs when this object is collected."""

    def __cinit__(self):
        self.c = <ArrowArray*>checked_calloc(1, sizeof(ArrowArray))

    def __dealloc__(self):
        free_array(self.c)
        self.c = NULL


cdef ImportedArray move_array(object capsule):
    """Move the ArrowArray out of an ``"arrow_array"`` capsule (which is left released)."""
    cdef ArrowArray* src = <ArrowArray*>capsule_pointer(capsule, "arrow_array")
    if src.release == NULL:
        raise ArrowInvalid("the ArrowArray capsule was already consumed (released)")
    cdef ImportedArray holder = ImportedArray()
    memcpy(holder.c, src, sizeof(ArrowArray))
    src.release = NULL
    return holder


cdef ArrowArrayStream* move_stream(object capsule, ArrowArrayStream* out) except NULL:
    """Move the ArrowArrayStream out of an ``"arrow_array_stream"`` capsule into ``out``."""
    cdef ArrowArrayStream* src = <ArrowArrayStream*>capsule_pointer(capsule, "arrow_array_stream")
    if src.release == NULL:
        raise ArrowInvalid("the ArrowArrayStream capsule was already consumed (released)")
    memcpy(out, src, sizeof(ArrowArrayStream))
    src.release = NULL
    return out
