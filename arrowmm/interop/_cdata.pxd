# What interop._cdata shares with the Cython modules above it (ipc.read._batch_walk): filling an
# ArrowArray from an arrowmm Array (and the checks it passes first), the hook a lazy batch's
# loader hands in to export its undecoded columns, and the exported stream of batches a
# reader's walk subclasses.
from libc.stdint cimport int64_t

from arrowmm._core._cabi cimport Arena, ArrowArray, ArrowSchema, StreamProducer

cdef int fill_array(ArrowArray* out, object array, object owner) except -1
cdef int check_exported(object array, str path) except -1

cdef class ColumnExporter:
    cdef size_t arena_bytes  # the nodes of a whole batch: the struct and every column
    cdef int fill_column(self, object loader, Py_ssize_t k, ArrowArray* out,
                         Arena* arena) except -1

cdef class BatchStream(StreamProducer):
    cdef object schema         # the schema the consumer sees (the request's, if any)
    cdef object source_schema  # the schema every batch must have
    cdef bint requested
    cdef object iterator       # of RecordBatch (None for a subclass that reads its own)
    cdef int64_t produced      # batches handed out (the next one's number, in errors)
    cdef int get_schema(self, ArrowSchema* out) noexcept
    cdef int get_next(self, ArrowArray* out) noexcept
    cdef object next_into(self, ArrowArray* out, bint walk)

cdef object batch_stream_capsule(BatchStream stream, object schema, object batch_iterator,
                                 object requested_schema)
