# The Arrow C data and C stream interfaces' ABI: the three structs, their release callbacks,
# the arena that holds a whole exported batch's structs, and the PyCapsules that carry them.
# Declarations only (the definitions are in _cabi.pyx): cimported by the modules that fill the
# structs (interop._cdata from arrowmm Arrays, ipc.read._batch_walk from IPC messages).
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t

cdef extern from *:
    """
    /* a non-NULL address exported for an absent data buffer (some consumers reject NULL) */
    static const int64_t arrowmm_zero[8] __attribute__((unused)) = {0, 0, 0, 0, 0, 0, 0, 0};
    """
    const int64_t arrowmm_zero[8]

cdef enum:
    FLAG_DICTIONARY_ORDERED = 1
    FLAG_NULLABLE = 2
    FLAG_MAP_KEYS_SORTED = 4

cdef struct ArrowSchema:
    const char* format
    const char* name
    const char* metadata
    int64_t flags
    int64_t n_children
    ArrowSchema** children
    ArrowSchema* dictionary
    void (*release)(ArrowSchema*) noexcept nogil
    void* private_data

cdef struct ArrowArray:
    int64_t length
    int64_t null_count
    int64_t offset
    int64_t n_buffers
    int64_t n_children
    const void** buffers
    ArrowArray** children
    ArrowArray* dictionary
    void (*release)(ArrowArray*) noexcept nogil
    void* private_data

cdef struct ArrowArrayStream:
    int (*get_schema)(ArrowArrayStream*, ArrowSchema*) noexcept nogil
    int (*get_next)(ArrowArrayStream*, ArrowArray*) noexcept nogil
    const char* (*get_last_error)(ArrowArrayStream*) noexcept nogil
    void (*release)(ArrowArrayStream*) noexcept nogil
    void* private_data

cdef struct ArrayPrivate:
    PyObject* owner           # strong reference to the exported object
    int64_t* variadic_sizes   # binary/string view: the trailing sizes buffer

cdef struct Arena:
    int64_t refs    # live nodes, plus one while the arena is being filled
    PyObject* owner
    size_t used
    size_t size

cdef struct Node:
    # one node's private data; its children's pointers and structs follow it in the arena
    Arena* arena
    const void* buffers[3]

# -- memory ---------------------------------------------------------------------------------
cdef void* checked_calloc(size_t n, size_t size) except NULL
cdef char* dup_bytes(bytes b) except NULL

# -- schemas --------------------------------------------------------------------------------
cdef void schema_release(ArrowSchema* s) noexcept nogil
cdef void free_schema(ArrowSchema* s) noexcept nogil
cdef object schema_capsule(ArrowSchema* s)
cdef bytes encode_metadata(object metadata)
cdef object decode_metadata(const char* md, str path)

# -- arrays: one heap struct per node, holding an owner -------------------------------------
cdef ArrayPrivate* begin_owned(ArrowArray* out, object owner) except NULL
cdef void array_release(ArrowArray* a) noexcept nogil
cdef void free_array(ArrowArray* a) noexcept nogil
cdef void clear_array(ArrowArray* out) noexcept
cdef object array_capsule(ArrowArray* a)

# -- arrays: a whole batch's nodes in one arena ----------------------------------------------
cdef size_t node_bytes(int64_t n_children) noexcept nogil
cdef Arena* arena_new(size_t size, PyObject* owner) except NULL
cdef void arena_drop(Arena* arena) noexcept nogil
cdef int begin_node(Arena* arena, ArrowArray* out, int64_t length, int64_t nulls, int n_buffers,
                    int n_children) except -1
cdef int begin_alone(ArrowArray* out, PyObject* owner, int64_t length, int64_t nulls,
                     int n_buffers) except -1

# -- streams --------------------------------------------------------------------------------
cdef class StreamProducer:
    # what an exported stream's callbacks call (with the GIL): subclasses fill the structs
    cdef bytes last_error
    cdef int error_code
    cdef int fail(self, exc) noexcept
    cdef int get_schema(self, ArrowSchema* out) noexcept
    cdef int get_next(self, ArrowArray* out) noexcept

cdef object stream_capsule(StreamProducer producer)

# -- import ---------------------------------------------------------------------------------
cdef void* capsule_pointer(object capsule, const char* name) except NULL

cdef class ImportedArray:
    # owns an ArrowArray moved out of a capsule (or filled by a stream); released when collected
    cdef ArrowArray* c

cdef ImportedArray move_array(object capsule)
cdef ArrowArrayStream* move_stream(object capsule, ArrowArrayStream* out) except NULL
