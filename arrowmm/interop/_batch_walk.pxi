# Included by _cdata.pyx.  The fast export of a record batch's undecoded columns.
#
# Why: exporting a lazy batch through the Python loader builds an arrowmm Array (and its
# BufferViews) for every node, only for _fill_array to read their pointers back: about
# 10 us per array, which dominates pyarrow.table(reader) on small batches.  This walk goes
# from the message's FieldNode and Buffer vectors straight to ArrowArray structs.
#
# Trust: the walk accepts a strict subset of what BatchLoader accepts.  It performs the same
# bounds, size, alignment and offset checks (BatchLoader._buffer and the arrays'
# _check_structure), and on any doubt it gives up (returns 0) instead of raising: the
# caller then decodes that column through the loader, which makes the copy the column
# needs (re-alignment) or raises the precise ArrowInvalid.  Types it does not know
# (views, unions, run-end encoded), compressed bodies and non-native byte order never
# reach it.  tests/test_batch_walk.py checks both paths agree on every corpus file.

from libc.stdint cimport uintptr_t

cdef enum:
    W_NULL = 1
    W_BOOL
    W_FIXED
    W_BINARY
    W_LIST
    W_FSL
    W_STRUCT
    W_DICT


cdef struct _Op:
    int kind
    int width        # bytes per value / per offset / per index
    int align        # required alignment of the values, offsets or indices
    int n_children
    int64_t list_size
    int dict_slot    # index into _WalkProgram.dict_ids


cdef class _WalkProgram:
    """A schema's fields as a flat depth-first list of ops, with each column's first op."""

    cdef _Op* ops
    cdef int n_ops
    cdef int* column_op
    cdef tuple node_starts
    cdef tuple buffer_starts
    cdef tuple dict_ids
    cdef list dict_exports  # a _DictionaryExport per dictionary-encoded field
    cdef size_t arena_bytes  # the nodes of a whole batch: the struct and every column
    cdef Py_ssize_t total_nodes, total_buffers  # in a record batch of the schema

    def __dealloc__(self):
        free(self.ops)
        free(self.column_op)


def _walk_ops(field, list ops, list dicts):
    """Append ``field``'s ops; False when some type in it is not one the walk knows."""
    dtype = field.storage_type
    kind = type(dtype)
    if kind is t.NullType:
        ops.append((W_NULL, 0, 1, 0, 0, -1))
    elif kind is t.BoolType:
        ops.append((W_BOOL, 0, 1, 0, 0, -1))
    elif kind is t.FixedSizeBinaryType:
        ops.append((W_FIXED, dtype.byte_width, 1, 0, 0, -1))
    elif isinstance(dtype, t._FixedWidth):
        ops.append((W_FIXED, dtype.byte_width, min(dtype.byte_width, 8), 0, 0, -1))
    elif kind is t.BinaryType and not dtype.view:
        width = dtype.offset_dtype.itemsize
        ops.append((W_BINARY, width, width, 0, 0, -1))
    elif (kind is t.ListType and not dtype.view) or kind is t.MapType:
        width = dtype.offset_dtype.itemsize
        ops.append((W_LIST, width, width, 1, 0, -1))
        return _walk_ops(dtype.value_field, ops, dicts)
    elif kind is t.FixedSizeListType:
        ops.append((W_FSL, 0, 1, 1, dtype.list_size, -1))
        return _walk_ops(dtype.value_field, ops, dicts)
    elif kind is t.StructType:
        ops.append((W_STRUCT, 0, 1, len(dtype.fields), 0, -1))
        return all(_walk_ops(f, ops, dicts) for f in dtype.fields)
    elif kind is t.DictionaryType and field.dictionary_id is not None:
        width = dtype.index_type.byte_width
        ops.append((W_DICT, width, width, 0, 0, len(dicts)))
        dicts.append((field.dictionary_id, dtype.value_type))
    else:
        return False
    return True


def compile_walk(plan):
    """The ``_WalkProgram`` of a ``SchemaPlan``, or None when the schema holds a type the walk
    leaves to the loader (views, unions, run-end encoded) or is not in native byte order."""
    schema = plan.schema
    if schema.endianness != NATIVE:
        return None
    cdef list ops = [], dicts = [], starts = []
    for f in schema.fields:
        starts.append(len(ops))
        if not _walk_ops(f, ops, dicts):
            return None
    cdef _WalkProgram prog = _WalkProgram.__new__(_WalkProgram)
    prog.ops = <_Op*>_calloc(len(ops), sizeof(_Op))
    prog.n_ops = len(ops)
    prog.column_op = <int*>_calloc(len(starts), sizeof(int))
    for i, (kind, width, align, n_children, list_size, dict_slot) in enumerate(ops):
        prog.ops[i] = _Op(kind, width, align, n_children, list_size, dict_slot)
    for i, s in enumerate(starts):
        prog.column_op[i] = s
    prog.arena_bytes = _node_bytes(len(starts)) + sum(_node_bytes(op[3]) for op in ops)
    prog.total_nodes, prog.total_buffers = plan.total_nodes, plan.total_buffers
    prog.node_starts = plan.node_starts
    prog.buffer_starts = plan.buffer_starts
    prog.dict_ids = tuple(d for d, _ in dicts)
    prog.dict_exports = [_DictionaryExport(v) for _, v in dicts]
    return prog


cdef class _DictionarySnapshot:
    """What ``_fill_array`` reads from one dictionary Array, made once and never changed (so a
    thread exporting with it never sees another thread's dictionary)."""

    cdef object array
    cdef bint flat         # no children: the fields below describe it whole
    cdef int64_t length, null_count, offset, n_buffers
    cdef const void* buffers[3]

    cdef int _read(self, object array) except -1:
        cdef ArrowArray probe
        cdef int64_t i
        memset(&probe, 0, sizeof(ArrowArray))
        try:
            _fill_array(&probe, array, array)  # the values every other export gives
            self.length, self.null_count, self.offset = probe.length, probe.null_count, probe.offset
            self.n_buffers = probe.n_buffers
            for i in range(probe.n_buffers):
                self.buffers[i] = probe.buffers[i]
        finally:
            if probe.release != NULL:
                probe.release(&probe)
        return 0


cdef class _DictionaryExport:
    """One dictionary field's values, exported batch after batch: what ``_fill_array`` reads
    from the Array is kept while the dictionary stays the same object.  Exports may run in
    several threads: each uses the snapshot it took, and a new dictionary replaces it whole."""

    cdef object value_type
    cdef _DictionarySnapshot last  # None: none yet

    def __init__(self, value_type):
        self.value_type = value_type

    cdef int fill(self, ArrowArray* out, object array) except -1:
        """Export ``array`` into ``out``: 1 done, 0 it is not of the field's value type."""
        cdef int i
        cdef _DictionarySnapshot snap = self.last
        if snap is None or array is not snap.array:
            if array.type != self.value_type:
                return 0
            snap = _DictionarySnapshot.__new__(_DictionarySnapshot)
            dtype = array.type
            snap.flat = not array.children and array.dictionary is None and \
                len(array._buffers) == dtype.buffer_count <= 3 and \
                not (isinstance(dtype, t.BinaryType) and dtype.view)  # (views own a sizes buffer)
            if snap.flat:
                snap._read(array)
            snap.array = array
            self.last = snap
        if not snap.flat:
            _fill_array(out, array, array)
            return 1
        _begin_alone(out, <PyObject*>array, snap.length, snap.null_count, snap.n_buffers)
        out.offset = snap.offset
        for i in range(snap.n_buffers):
            out.buffers[i] = snap.buffers[i]
        return 1


cdef struct _Walk:
    const _Op* ops
    int oi
    const uint8_t* nodes
    Py_ssize_t n_nodes
    Py_ssize_t ni
    const uint8_t* buffers
    Py_ssize_t n_buffers
    Py_ssize_t bi
    const uint8_t* body
    int64_t body_size
    _Arena* arena


cdef inline int64_t _rd64(const uint8_t* p) noexcept nogil:
    cdef int64_t v
    memcpy(&v, p, 8)
    return v


cdef inline int64_t _rd_offset(const uint8_t* p, int width, int64_t i) noexcept nogil:
    cdef int32_t v
    if width == 8:
        return _rd64(p + 8 * i)
    memcpy(&v, p + 4 * i, 4)
    return v


cdef inline bint _holds(int64_t size, int64_t count, int64_t width) noexcept nogil:
    """size >= count * width, without overflow (count, width >= 0)."""
    return width == 0 or count <= size // width


cdef inline bint _holds_bits(int64_t size, int64_t bits) noexcept nogil:
    return bits // 8 + (bits % 8 != 0) <= size


cdef inline bint _next_node(_Walk* w, int64_t* length, int64_t* nulls) noexcept nogil:
    if w.ni >= w.n_nodes:
        return False
    length[0] = _rd64(w.nodes + 16 * w.ni)
    nulls[0] = _rd64(w.nodes + 16 * w.ni + 8)
    w.ni += 1
    return length[0] >= 0 and 0 <= nulls[0] <= length[0]


cdef inline bint _next_buffer(_Walk* w, int align, const void** ptr, int64_t* size) noexcept nogil:
    """The next buffer, checked against the body and aligned (False: leave it to the loader)."""
    cdef int64_t offset, length
    if w.bi >= w.n_buffers:
        return False
    offset = _rd64(w.buffers + 16 * w.bi)
    length = _rd64(w.buffers + 16 * w.bi + 8)
    w.bi += 1
    if offset < 0 or length < 0 or offset > w.body_size or length > w.body_size - offset:
        return False
    size[0] = length
    if length == 0:
        ptr[0] = <const void*>_ZERO  # nothing may be read; a consumer reading offsets[0] gets 0
        return True
    ptr[0] = <const void*>(w.body + offset)
    return align <= 1 or (<uintptr_t>ptr[0]) % align == 0


# Memory: the structs of one exported batch (or column) live in one allocation, an arena
# holding the single reference that keeps the source memory alive.  The C data interface
# lets a consumer move any child out and release it on its own, on any thread, so the arena
# counts its live nodes atomically and the last release frees it.

cdef extern from *:
    """
    static inline int64_t arrowmm_atomic_add(int64_t* p, int64_t v) {
        return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL);
    }
    """
    int64_t arrowmm_atomic_add(int64_t* p, int64_t v) nogil


cdef struct _Arena:
    int64_t refs    # live nodes, plus one while the arena is being filled
    PyObject* owner
    size_t used
    size_t size


cdef struct _Node:
    # one node's private data; its children's pointers and structs follow it in the arena
    _Arena* arena
    const void* buffers[3]


cdef inline size_t _node_bytes(int64_t n_children) noexcept nogil:
    return sizeof(_Node) + n_children * (sizeof(ArrowArray*) + sizeof(ArrowArray))


cdef _Arena* _arena_new(size_t size, PyObject* owner) except NULL:
    """An arena with room for ``size`` bytes of nodes, holding a reference to ``owner`` and the
    builder's count (drop it with ``_arena_drop`` when done filling)."""
    cdef _Arena* arena = <_Arena*>_calloc(1, sizeof(_Arena) + size)
    arena.refs = 1
    arena.size = size
    Py_INCREF(<object>owner)
    arena.owner = owner
    return arena


cdef void _arena_drop(_Arena* arena) noexcept nogil:
    if arrowmm_atomic_add(&arena.refs, -1) == 0:
        if Py_IsInitialized():
            with gil:
                Py_XDECREF(arena.owner)
        free(arena)


cdef void _node_release(ArrowArray* a) noexcept nogil:
    """Release a node made by ``_begin``: its children, its dictionary, its arena count."""
    cdef int64_t i
    if a == NULL or a.release == NULL:
        return
    for i in range(a.n_children):
        if a.children[i].release != NULL:  # (a child the consumer moved out has release NULL)
            a.children[i].release(a.children[i])
    _free_array(a.dictionary)
    _arena_drop((<_Node*>a.private_data).arena)
    a.private_data = NULL
    a.release = NULL


cdef int _begin(_Arena* arena, ArrowArray* out, int64_t length, int64_t nulls, int n_buffers,
                int n_children) except -1:
    """Set up ``out`` as a node of ``arena``, with room for up to 3 buffers and ``n_children``
    zeroed children."""
    cdef size_t need = _node_bytes(n_children)
    cdef _Node* node
    cdef ArrowArray* kids
    cdef int i
    if need > arena.size - arena.used:
        raise ArrowInvalid(f"internal error: export arena of {arena.size} bytes is too small")
    node = <_Node*>((<char*>arena) + sizeof(_Arena) + arena.used)
    arena.used += need
    kids = <ArrowArray*>((<char*>node) + sizeof(_Node) + n_children * sizeof(ArrowArray*))
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
    out.children = <ArrowArray**>((<char*>node) + sizeof(_Node))
    for i in range(n_children):
        out.children[i] = &kids[i]
    return 0


cdef int _begin_alone(ArrowArray* out, PyObject* owner, int64_t length, int64_t nulls,
                      int n_buffers) except -1:
    """A childless node in an arena of its own, holding ``owner``."""
    cdef _Arena* arena = _arena_new(_node_bytes(0), owner)
    try:
        _begin(arena, out, length, nulls, n_buffers, 0)
    finally:
        _arena_drop(arena)
    return 0


cdef int _walk(_Walk* w, ArrowArray* out, object lookup, tuple dict_ids, list dict_exports) except -1:
    """Fill ``out`` from the next node; 1 done, 0 give up (``out`` may be half filled)."""
    cdef _Op op = w.ops[w.oi]
    cdef int64_t length, nulls, size, dsize, first, last, child_len
    cdef const void* validity
    cdef const void* ptr
    cdef const void* data
    cdef int i
    w.oi += 1
    if not _next_node(w, &length, &nulls):
        return 0
    if op.kind == W_NULL:
        _begin(w.arena, out, length, length, 0, 0)
        return 1
    if not _next_buffer(w, 1, &validity, &size):
        return 0
    if nulls == 0:
        validity = NULL
    elif not _holds_bits(size, length):
        return 0
    if op.kind == W_BOOL or op.kind == W_FIXED or op.kind == W_DICT:
        if not _next_buffer(w, op.align, &ptr, &size):
            return 0
        if not (_holds_bits(size, length) if op.kind == W_BOOL else _holds(size, length, op.width)):
            return 0
        _begin(w.arena, out, length, nulls, 2, 0)
        out.buffers[0] = validity
        out.buffers[1] = ptr
        if op.kind == W_DICT:
            try:
                dictionary = lookup(dict_ids[op.dict_slot])
            except Exception:  # missing or broken: the loader names it
                return 0
            out.dictionary = <ArrowArray*>_calloc(1, sizeof(ArrowArray))
            return (<_DictionaryExport>dict_exports[op.dict_slot]).fill(out.dictionary, dictionary)
        return 1
    if op.kind == W_BINARY:
        if not _next_buffer(w, op.align, &ptr, &size) or not _next_buffer(w, 1, &data, &dsize):
            return 0
        if not _offsets_fit(ptr, size, op.width, length, dsize):
            return 0
        _begin(w.arena, out, length, nulls, 3, 0)
        out.buffers[0] = validity
        out.buffers[1] = ptr
        out.buffers[2] = data
        return 1
    if op.kind == W_LIST:
        if not _next_buffer(w, op.align, &ptr, &size):
            return 0
        _begin(w.arena, out, length, nulls, 2, 1)
        out.buffers[0] = validity
        out.buffers[1] = ptr
        if not _walk(w, out.children[0], lookup, dict_ids, dict_exports):
            return 0
        return _offsets_fit(ptr, size, op.width, length, out.children[0].length)
    # fixed-size list and struct: validity, then children at least as long as they need
    _begin(w.arena, out, length, nulls, 1, op.n_children)
    out.buffers[0] = validity
    for i in range(op.n_children):
        if not _walk(w, out.children[i], lookup, dict_ids, dict_exports):
            return 0
        child_len = out.children[i].length
        if op.kind == W_FSL:
            if op.list_size and length > child_len // op.list_size:
                return 0
        elif child_len < length:
            return 0
    return 1


cdef bint _offsets_fit(const void* ptr, int64_t size, int width, int64_t length,
                       int64_t target) noexcept nogil:
    """The loader's cheap offsets check: length + 1 of them, first and last within the target."""
    cdef int64_t first, last
    if length == 0 and size == 0:
        return True
    if length >= size // width:  # room for length + 1 offsets
        return False
    first = _rd_offset(<const uint8_t*>ptr, width, 0)
    last = _rd_offset(<const uint8_t*>ptr, width, length)
    return 0 <= first <= last <= target


cdef object _walk_program(object batch):
    """The walk program for ``batch``'s undecoded columns, or None if they need the loader."""
    loader = batch._loader
    if type(loader) is not _loader_class() or batch._offset or loader.header.compression is not None:
        return None
    if batch.num_rows != loader.header.length:
        return None
    return loader.plan.c_walk


cdef int _walk_column(_WalkProgram prog, object loader, Py_ssize_t k, ArrowArray* out,
                      _Arena* arena) except -1:
    """Export column ``k`` of ``loader``'s batch into ``out``, its nodes in ``arena``: 1 done,
    0 give up (``out`` is then released and zeroed)."""
    cdef _Walk w
    cdef StructPairs nodes = loader.header.nodes
    cdef StructPairs buffers = loader.header.buffers
    cdef BufferView body = loader.body
    cdef int ok
    w.ops = prog.ops
    w.oi = prog.column_op[k]
    w.nodes = nodes.ptr
    w.n_nodes = nodes.count
    w.ni = prog.node_starts[k]
    w.buffers = buffers.ptr
    w.n_buffers = buffers.count
    w.bi = prog.buffer_starts[k]
    w.body = body.ptr
    w.body_size = body.size
    w.arena = arena
    try:
        ok = _walk(&w, out, loader.dictionaries, prog.dict_ids, prog.dict_exports)
        if ok and out.length != loader.header.length:
            ok = 0
    except BaseException:
        _clear(out)
        raise
    if not ok:
        _clear(out)
    return ok


cdef inline void _clear(ArrowArray* out) noexcept:
    if out.release != NULL:
        out.release(out)
    memset(out, 0, sizeof(ArrowArray))


cdef int _fill_batch(ArrowArray* out, object batch) except -1:
    """Fill ``out`` with ``batch`` as a struct array (released by the caller if this raises):
    undecoded columns through the walk when it can, the others through their Arrays."""
    cdef Py_ssize_t k, n = batch.num_columns
    # the struct itself has no buffer: it keeps the body alive, not the batch, so the batch,
    # its loader and its header are freed as soon as the export is done (a table of 20,000
    # exported batches would otherwise keep 20,000 of each for the garbage collector to scan)
    loader = batch._loader
    owner = loader.body if type(loader) is _loader_class() else batch
    prog = _walk_program(batch)
    cdef _Arena* arena = _arena_new(
        _node_bytes(n) if prog is None else (<_WalkProgram>prog).arena_bytes, <PyObject*>owner)
    try:
        _begin(arena, out, batch.num_rows, 0, 1, n)
        columns = batch._columns
        for k in range(n):
            if columns[k] is None and prog is not None and \
                    _walk_column(<_WalkProgram>prog, loader, k, out.children[k], arena):
                continue
            column = batch.storage_column(k)
            _fill_array(out.children[k], column, column)
    finally:
        _arena_drop(arena)
    return 0


# -- whole batches of a reader, straight from its mapping -----------------------------------
#
# The stream export of a reader (pyarrow.table(reader), polars, duckdb) reads every batch in
# order.  For a plain record batch message this reads the frame and the Message flatbuffer in
# C and walks the columns, so no Message, header, loader or RecordBatch object is made.  It
# repeats the checks of read_message_at, parse_message, BatchLoader (and, for files,
# FileReader._read_block), and leaves the message to the reader (which raises the precise
# error, or handles a dictionary batch) whenever one fails or the message is anything but a
# plain record batch: legacy framing, custom metadata, compression, a V4 message.

cdef int64_t _walk_message(_WalkProgram prog, Region region, int64_t offset, int64_t end,
                           int64_t block_meta_len, int64_t block_body_len, object lookup,
                           ArrowArray* out) except -2:
    """Walk the record batch message at ``offset`` (which must end by ``end``) into ``out``.

    Returns the offset just past the message, or -1: leave it to the reader.  ``lookup``
    gives a dictionary by id; ``block_*``: what a file footer's block says (-1 in a stream).
    """
    cdef int64_t size = region.size, meta_size, meta_start, body_start, body_len
    cdef MessageInfo info
    cdef _Walk w
    cdef Py_ssize_t k
    cdef int ok = 1
    if offset < 0 or offset > size - 8 or offset > end - 8 or \
            _rd32(region.ptr + offset) != -1:  # continuation marker
        return -1
    meta_size = _rd32(region.ptr + offset + 4)
    meta_start = offset + 8
    if meta_size < 4 or meta_size > size - meta_start or meta_size > limits.max_metadata_size:
        return -1
    if peek_message(region.ptr + meta_start, meta_size, &info) != NULL:
        return -1
    body_start = meta_start + meta_size
    body_len = info.body_length
    if info.header_type != 3 or info.version != MetadataVersion.V5 or info.has_metadata or \
            info.codec != -1 or info.length < 0 or body_len < 0 or body_len > end - body_start or \
            info.n_nodes != prog.total_nodes or info.n_buffers != prog.total_buffers or \
            info.n_variadic:
        return -1
    if block_body_len >= 0 and (body_len != block_body_len or body_start != offset + block_meta_len):
        return -1
    w.ops = prog.ops
    w.nodes = region.ptr + meta_start + info.nodes_start
    w.n_nodes = info.n_nodes
    w.buffers = region.ptr + meta_start + info.buffers_start
    w.n_buffers = info.n_buffers
    w.body = region.ptr + body_start
    w.body_size = body_len
    w.arena = _arena_new(prog.arena_bytes, <PyObject*>region)
    try:
        _begin(w.arena, out, info.length, 0, 1, len(prog.node_starts))
        for k in range(out.n_children):
            w.oi = prog.column_op[k]
            w.ni = prog.node_starts[k]
            w.bi = prog.buffer_starts[k]
            if not _walk(&w, out.children[k], lookup, prog.dict_ids, prog.dict_exports) or \
                    out.children[k].length != info.length:
                ok = 0
                break
    except BaseException:
        _clear(out)
        raise
    finally:
        _arena_drop(w.arena)
    if not ok:
        _clear(out)
        return -1
    return body_start + body_len


cdef inline int32_t _rd32(const uint8_t* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


cdef class _ReaderBatches:
    """A reader's batches as its stream export takes them: walked when plain, else read."""

    cdef object reader
    cdef _WalkProgram program  # the V5 plan's walk, or None

    def __init__(self, reader):
        self.reader = reader
        plan = reader._plan(MetadataVersion.V5)
        self.program = plan.c_walk

    cdef object next_into(self, ArrowArray* out, bint walk):
        """None when the next batch was walked into ``out``, else the next RecordBatch read by
        the reader; StopIteration at the end.  ``walk`` False: always the latter."""
        raise NotImplementedError


cdef class _FileBatches(_ReaderBatches):
    """A FileReader's batches, in order, from the footer's blocks."""

    cdef Py_ssize_t count
    cdef Py_ssize_t next_index
    cdef const uint8_t[::1] blocks  # (offset, metaDataLength, bodyLength) per batch
    cdef object lookup              # the dictionaries' get, once they are read

    def __init__(self, reader):
        super().__init__(reader)
        self.count = reader.num_record_batches
        if self.count:
            self.blocks = reader._blocks.reshape(-1).view(np.uint8)

    cdef object next_into(self, ArrowArray* out, bint walk):
        cdef Py_ssize_t i = self.next_index
        cdef const uint8_t* p
        cdef int64_t offset, meta_len, body_len, footer_offset
        if i >= self.count:
            raise StopIteration
        self.next_index = i + 1
        reader = self.reader
        if walk and self.program is not None and not reader._closed:
            p = &self.blocks[24 * i]
            offset = _rd64(p)
            meta_len = <int32_t>(<uint64_t>_rd64(p + 8) & 0xFFFFFFFF)  # int32, 4 bytes of padding
            body_len = _rd64(p + 16)
            footer_offset = reader._footer_offset
            if 8 <= offset < footer_offset and meta_len > 0 and body_len >= 0 and \
                    self._dictionaries() and \
                    _walk_message(self.program, reader._region, offset, footer_offset, meta_len,
                                  body_len, self.lookup, out) >= 0:
                return None
        return reader.get_batch(i)

    cdef bint _dictionaries(self):
        if self.lookup is None:
            try:
                self.lookup = self.reader._dictionaries().get
            except Exception:  # get_batch raises it
                return False
        return True


cdef class _StreamBatches(_ReaderBatches):
    """A StreamReader's remaining batches; dictionary batches and anything unusual go through
    the reader (which then reads the next record batch too)."""

    cdef object next_into(self, ArrowArray* out, bint walk):
        cdef int64_t end
        reader = self.reader
        reader._enter()  # one consumer at a time, as for read_next_batch
        try:
            region = reader._region
            if walk and self.program is not None and reader._file is None and region is not None \
                    and not reader._closed and not reader._done:
                stop = reader._end
                end = _walk_message(self.program, region, reader._pos,
                                    (<Region>region).size if stop is None else stop, -1, -1,
                                    reader._memo.get, out)
                if end >= 0:
                    reader._pos = end
                    reader._index += 1
                    return None
            return reader._read_next_batch()
        finally:
            reader._consumer.release()
