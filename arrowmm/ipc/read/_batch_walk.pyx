"""The C data interface's export of IPC record batches straight from their messages.

Why: exporting a lazy batch through the Python loader builds an arrowmm Array (and its
BufferViews) for every node, only for ``interop._cdata.fill_array`` to read their pointers back: about
10 us per array, which dominates pyarrow.table(reader) on small batches.  This walk goes
from the message's FieldNode and Buffer vectors straight to ArrowArray structs.

Trust: the walk accepts a strict subset of what BatchLoader accepts.  It performs the same
bounds, size, alignment and offset checks (BatchLoader._buffer and the arrays'
_check_structure), and the value checks a column passes before it is exported
(``interop._cdata.check_exported``; a consumer reads these values unchecked): offsets that never
decrease, UTF-8 (the ASCII-fast whole-run pass), dictionary indices inside the dictionary,
null counts equal to the bitmap's.  On any doubt it gives up (returns 0) instead of raising:
the caller then decodes that column through the loader, which makes the copy the column
needs (re-alignment) or raises the precise ArrowInvalid.  Types it does not know
(views, unions, run-end encoded), compressed bodies and non-native byte order never
reach it.  tests/ipc/test_batch_walk.py checks both paths agree on every corpus file.

Where it plugs in: ``SchemaPlan.c_walk`` compiles a ``_WalkProgram`` (a ``ColumnExporter``), which
``BatchLoader.c_export`` hands to ``interop._cdata``'s batch export; ``export_file_batches`` and
``export_stream_batches`` are the readers' ``__arrow_c_stream__``.  The C structs and their
memory rules are ``_core._cabi``'s.  ``prove_decoded`` runs the same value checks over a
column the loader decompressed, as soon as it is decoded (tests/ipc/test_prove_decoded.py).
"""

from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport PyObject
from libc.stdint cimport (INT64_MAX, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t, uintptr_t)
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from arrowmm._core._bits cimport load_i64, load_offset
from arrowmm._core._offsets cimport index_t, offset_t
from arrowmm._core._cabi cimport (
    Arena, ArrowArray, arena_drop, arena_new, arrowmm_zero, begin_alone, begin_node,
    checked_calloc, clear_array, free_array, node_bytes)
from arrowmm._core._flatbuf cimport MessageInfo, StructPairs, peek_message
from arrowmm._core._region cimport BufferView, Region
from arrowmm.interop._cdata cimport (BatchStream, ColumnExporter, batch_stream_capsule,
                                     check_exported, fill_array)

import numpy as np

from arrowmm import limits, types as t
from arrowmm._core._utf8 import _utf8_invalid_at_capsule
from arrowmm.errors import ArrowInvalid
from arrowmm.format import MetadataVersion
from arrowmm.ipc.core.byteorder import NATIVE

# the package's one UTF-8 validator (``_core._utf8``), called nogil
ctypedef int64_t (*_utf8_fn)(const uint8_t* s, int64_t n) noexcept nogil
cdef _utf8_fn _utf8_invalid_at = <_utf8_fn>PyCapsule_GetPointer(
    _utf8_invalid_at_capsule, b"arrowmm._core._utf8.utf8_invalid_at")

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil

__all__ = ["compile_walk", "export_file_batches", "export_stream_batches", "file_batch_parts",
           "plain_fixed_parts", "overlapping_buffer", "blocks_apart", "prove_decoded"]


cdef inline Py_ssize_t _overlap(const uint8_t* buffers, Py_ssize_t n) noexcept nogil:
    """Index of the first non-empty buffer that starts before the non-empty one before it
    ends, or -1.  A body is its buffers written end to end, in order (the IPC format), so a
    buffer that does not start past its predecessor is a damaged header: read as it says, it
    would show other bytes of the body as its values."""
    cdef int64_t end = 0, offset, length
    cdef Py_ssize_t i
    for i in range(n):
        offset = load_i64(buffers + 16 * i)
        length = load_i64(buffers + 16 * i + 8)
        if length == 0:
            continue
        if offset < end or length < 0 or offset > INT64_MAX - length:
            return i
        end = offset + length
    return -1


def overlapping_buffer(StructPairs buffers):
    """``_overlap`` over a header's Buffer vector: the index of the first buffer out of order
    or overlapping the one before, or -1."""
    return _overlap(buffers.ptr, buffers.count)


cdef inline int64_t _clipped(int64_t v) noexcept nogil:
    return 0 if v < 0 else (v if v < (<int64_t>1 << 62) else (<int64_t>1 << 62))


def blocks_apart(const int64_t[:, ::1] batches, const int64_t[:, ::1] dictionaries):
    """Whether a footer's Blocks (``flat_blocks`` rows: offset, metaDataLength and its padding,
    bodyLength) each lie in file order within their list and every message ends before the
    next one in the file begins: what every writer writes, checked in one pass over both
    lists merged by offset.  False does not mean damage (a footer may list batches out of
    file order): ``reader_base.overlapping_blocks`` then looks closer."""
    cdef Py_ssize_t i = 0, j = 0, n = batches.shape[0], m = dictionaries.shape[0]
    cdef int64_t end = -1, start, stop, low32 = 0xFFFFFFFF
    cdef bint apart = True
    if (n and batches.shape[1] != 3) or (m and dictionaries.shape[1] != 3):
        return False
    with nogil:
        while i < n or j < m:
            if j >= m or (i < n and _clipped(batches[i, 0]) <= _clipped(dictionaries[j, 0])):
                start = _clipped(batches[i, 0])
                stop = start + (batches[i, 1] & low32) + _clipped(batches[i, 2])
                i += 1
            else:
                start = _clipped(dictionaries[j, 0])
                stop = start + (dictionaries[j, 1] & low32) + _clipped(dictionaries[j, 2])
                j += 1
            if start < end:
                apart = False
                break
            end = stop
    return apart

cdef enum:
    W_NULL = 1
    W_BOOL
    W_FIXED
    W_BINARY
    W_LIST
    W_FSL
    W_STRUCT
    W_DICT

cdef enum:
    F_UTF8 = 1       # W_BINARY: the values must be UTF-8
    F_SIGNED = 2     # W_DICT: the indices are signed
    F_MAP = 4        # W_LIST: a map, whose keys may not be null


cdef struct _Op:
    int kind
    int flags        # F_*
    int width        # bytes per value / per offset / per index
    int align        # required alignment of the values, offsets or indices
    int n_children
    int64_t list_size
    int dict_slot    # index into _WalkProgram.dict_ids


cdef class _WalkProgram(ColumnExporter):
    """A schema's fields as a flat depth-first list of ops, with each column's first op."""

    cdef _Op* ops
    cdef int n_ops
    cdef int* column_op
    cdef tuple node_starts
    cdef tuple buffer_starts
    cdef tuple dict_ids
    cdef list dict_exports  # a _DictionaryExport per dictionary-encoded field
    cdef Py_ssize_t total_nodes, total_buffers  # in a record batch of the schema

    def __dealloc__(self):
        free(self.ops)
        free(self.column_op)

    cdef int fill_column(self, object loader, Py_ssize_t k, ArrowArray* out,
                         Arena* arena) except -1:
        """Export column ``k`` of ``loader``'s batch into ``out``, its nodes in ``arena``: 1
        done, 0 give up (``out`` is then released and zeroed)."""
        return _walk_column(self, loader, k, out, arena)


def _walk_ops(field, list ops, list dicts):
    """Append ``field``'s ops; False when some type in it is not one the walk knows."""
    dtype = field.storage_type
    kind = type(dtype)
    if kind is t.NullType:
        ops.append((W_NULL, 0, 0, 1, 0, 0, -1))
    elif kind is t.BoolType:
        ops.append((W_BOOL, 0, 0, 1, 0, 0, -1))
    elif kind is t.FixedSizeBinaryType:
        ops.append((W_FIXED, 0, dtype.byte_width, 1, 0, 0, -1))
    elif isinstance(dtype, t.FixedWidthType):
        ops.append((W_FIXED, 0, dtype.byte_width, min(dtype.byte_width, 8), 0, 0, -1))
    elif kind is t.BinaryType:
        width = dtype.offset_dtype.itemsize
        ops.append((W_BINARY, F_UTF8 if dtype.utf8 else 0, width, width, 0, 0, -1))
    elif kind is t.ListType or kind is t.MapType:
        width = dtype.offset_dtype.itemsize
        ops.append((W_LIST, F_MAP if kind is t.MapType else 0, width, width, 1, 0, -1))
        return _walk_ops(dtype.value_field, ops, dicts)
    elif kind is t.FixedSizeListType:
        ops.append((W_FSL, 0, 0, 1, 1, dtype.list_size, -1))
        return _walk_ops(dtype.value_field, ops, dicts)
    elif kind is t.StructType:
        ops.append((W_STRUCT, 0, 0, 1, len(dtype.fields), 0, -1))
        return all(_walk_ops(f, ops, dicts) for f in dtype.fields)
    elif kind is t.DictionaryType and field.dictionary_id is not None:
        width = dtype.index_type.byte_width
        ops.append((W_DICT, F_SIGNED if dtype.index_type.signed else 0, width, width, 0, 0,
                    len(dicts)))
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
    prog.ops = <_Op*>checked_calloc(len(ops), sizeof(_Op))
    prog.n_ops = len(ops)
    prog.column_op = <int*>checked_calloc(len(starts), sizeof(int))
    for i, (kind, flags, width, align, n_children, list_size, dict_slot) in enumerate(ops):
        prog.ops[i] = _Op(kind, flags, width, align, n_children, list_size, dict_slot)
    for i, s in enumerate(starts):
        prog.column_op[i] = s
    prog.arena_bytes = node_bytes(len(starts)) + sum(node_bytes(op[4]) for op in ops)
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
            fill_array(&probe, array, array)  # the values every other export gives
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
            try:  # (once per dictionary: the verdict stays on the Array)
                check_exported(array, "dictionary")
            except ArrowInvalid:
                return 0  # the loader's path raises it, naming the batch and column
            snap = _DictionarySnapshot.__new__(_DictionarySnapshot)
            dtype = array.type
            snap.flat = not array.children and array.dictionary is None and \
                len(array._buffers) == dtype.buffer_count <= 3 and \
                not isinstance(dtype, t.BinaryViewType)  # (views own a sizes buffer)
            if snap.flat:
                snap._read(array)
            snap.array = array
            self.last = snap
        if not snap.flat:
            fill_array(out, array, array)
            return 1
        begin_alone(out, <PyObject*>array, snap.length, snap.null_count, snap.n_buffers)
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
    Arena* arena


cdef inline bint _holds(int64_t size, int64_t count, int64_t width) noexcept nogil:
    """size >= count * width, without overflow (count, width >= 0)."""
    return width == 0 or count <= size // width


cdef inline bint _holds_bits(int64_t size, int64_t bits) noexcept nogil:
    return bits // 8 + (bits % 8 != 0) <= size


cdef inline bint _next_node(_Walk* w, int64_t* length, int64_t* nulls) noexcept nogil:
    if w.ni >= w.n_nodes:
        return False
    length[0] = load_i64(w.nodes + 16 * w.ni)
    nulls[0] = load_i64(w.nodes + 16 * w.ni + 8)
    w.ni += 1
    return length[0] >= 0 and 0 <= nulls[0] <= length[0]


cdef inline bint _next_buffer(_Walk* w, int align, const void** ptr, int64_t* size) noexcept nogil:
    """The next buffer, checked against the body and aligned (False: leave it to the loader)."""
    cdef int64_t offset, length
    if w.bi >= w.n_buffers:
        return False
    offset = load_i64(w.buffers + 16 * w.bi)
    length = load_i64(w.buffers + 16 * w.bi + 8)
    w.bi += 1
    if offset < 0 or length < 0 or offset > w.body_size or length > w.body_size - offset or \
            offset & 7:  # (an offset off the format's 8-byte grid: the loader says so)
        return False
    size[0] = length
    if length == 0:
        ptr[0] = <const void*>arrowmm_zero  # nothing may be read; a consumer reading offsets[0] gets 0
        return True
    ptr[0] = <const void*>(w.body + offset)
    return align <= 1 or (<uintptr_t>ptr[0]) % align == 0


cdef int _walk(_Walk* w, ArrowArray* out, object lookup, tuple dict_ids, list dict_exports) except -1:
    """Fill ``out`` from the next node; 1 done, 0 give up (``out`` may be half filled)."""
    cdef _Op op = w.ops[w.oi]
    cdef int64_t length, nulls, size, dsize, first, last, child_len
    cdef const void* validity
    cdef const void* ptr
    cdef const void* data
    cdef int i
    cdef bint ok
    w.oi += 1
    if not _next_node(w, &length, &nulls):
        return 0
    if op.kind == W_NULL:
        begin_node(w.arena, out, length, length, 0, 0)
        return 1
    if not _next_buffer(w, 1, &validity, &size):
        return 0
    if size or nulls:  # (a count of 0 beside a bitmap is a claim too)
        if not _holds_bits(size, length) or \
                not _nulls_match(<const uint8_t*>validity, length, nulls):
            return 0
    if nulls == 0:
        validity = NULL
    if op.kind == W_BOOL or op.kind == W_FIXED or op.kind == W_DICT:
        if not _next_buffer(w, op.align, &ptr, &size):
            return 0
        if not (_holds_bits(size, length) if op.kind == W_BOOL else _holds(size, length, op.width)):
            return 0
        begin_node(w.arena, out, length, nulls, 2, 0)
        out.buffers[0] = validity
        out.buffers[1] = ptr
        if op.kind == W_DICT:
            try:
                dictionary = lookup(dict_ids[op.dict_slot])
            except Exception:  # missing or broken: the loader names it
                return 0
            out.dictionary = <ArrowArray*>checked_calloc(1, sizeof(ArrowArray))
            if not (<_DictionaryExport>dict_exports[op.dict_slot]).fill(out.dictionary, dictionary):
                return 0
            dsize = out.dictionary.length
            if length < _GIL_FREE_AT:
                return _indices_fit(ptr, op.width, op.flags & F_SIGNED, length, dsize,
                                    <const uint8_t*>validity)
            with nogil:
                ok = _indices_fit(ptr, op.width, op.flags & F_SIGNED, length, dsize,
                                  <const uint8_t*>validity)
            return ok
        return 1
    if op.kind == W_BINARY:
        if not _next_buffer(w, op.align, &ptr, &size) or not _next_buffer(w, 1, &data, &dsize):
            return 0
        if length < _GIL_FREE_AT:
            ok = _binary_ok(ptr, size, op.width, length, <const uint8_t*>data, dsize,
                            op.flags & F_UTF8)
        else:
            with nogil:
                ok = _binary_ok(ptr, size, op.width, length, <const uint8_t*>data, dsize,
                                op.flags & F_UTF8)
        if not ok:
            return 0
        begin_node(w.arena, out, length, nulls, 3, 0)
        out.buffers[0] = validity
        out.buffers[1] = ptr
        out.buffers[2] = data
        return 1
    if op.kind == W_LIST:
        if not _next_buffer(w, op.align, &ptr, &size):
            return 0
        begin_node(w.arena, out, length, nulls, 2, 1)
        out.buffers[0] = validity
        out.buffers[1] = ptr
        if not _walk(w, out.children[0], lookup, dict_ids, dict_exports):
            return 0
        if op.flags & F_MAP and out.children[0].n_children and \
                out.children[0].children[0].null_count:
            return 0  # (a null key: the loader names it)
        if not _offsets_fit(ptr, size, op.width, length, out.children[0].length):
            return 0
        if length < _GIL_FREE_AT:
            return _offsets_rise(ptr, op.width, length)
        with nogil:
            ok = _offsets_rise(ptr, op.width, length)
        return ok
    # fixed-size list and struct: validity, then children at least as long as they need
    begin_node(w.arena, out, length, nulls, 1, op.n_children)
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
    first = load_offset(<const uint8_t*>ptr, width, 0)
    last = load_offset(<const uint8_t*>ptr, width, length)
    return 0 <= first <= last <= target


# -- the value checks of a column's full validation, on the message's buffers ---------------
# (What ``Array._validated`` checks before values are read.  False: the loader's path runs
# that validation, which names the slot, or passes what these fast forms cannot prove, such
# as bad bytes under a null slot.)

cdef enum:
    _GIL_FREE_AT = 1 << 16  # values from which a check lets other threads run


cdef bint _nulls_match(const uint8_t* bits, int64_t length, int64_t nulls) noexcept nogil:
    """Whether the first ``length`` bits of the bitmap mark exactly ``nulls`` slots null."""
    cdef int64_t i, whole = length >> 3, words = whole >> 3, set_bits = 0
    cdef uint64_t word
    for i in range(words):
        memcpy(&word, bits + 8 * i, 8)
        set_bits += __builtin_popcountll(word)
    for i in range(8 * words, whole):
        set_bits += __builtin_popcountll(bits[i])
    if length & 7:
        set_bits += __builtin_popcountll(bits[whole] & ((1 << (length & 7)) - 1))
    return length - set_bits == nulls


cdef bint _offsets_rise(const void* ptr, int width, int64_t length) noexcept nogil:
    """Whether offsets 0..length never decrease (``_offsets_fit`` checked first and last)."""
    cdef const int32_t* o32 = <const int32_t*>ptr
    cdef const int64_t* o64 = <const int64_t*>ptr
    cdef int64_t i
    cdef int bad = 0
    if width == 4:
        for i in range(1, length + 1):
            bad |= o32[i] < o32[i - 1]
    else:
        for i in range(1, length + 1):
            bad |= o64[i] < o64[i - 1]
    return not bad


cdef bint _binary_ok(const void* ptr, int64_t size, int width, int64_t length,
                     const uint8_t* data, int64_t dsize, bint utf8) noexcept nogil:
    """Offsets in the data and never decreasing and, for ``utf8``, every value UTF-8, by
    ``_core._utf8``'s fast path: the bytes from the first offset to the last are valid and no
    value starts inside a character.  Each buffer is read once: the bytes (whole 64-byte
    blocks of ASCII skipped, then the validator from the first block that is not), then the
    offsets (in order, and, unless the bytes were all ASCII, none on a continuation byte)."""
    cdef int64_t first, last, ascii
    if not _offsets_fit(ptr, size, width, length, dsize):
        return False
    if not utf8 or length == 0:
        return _offsets_rise(ptr, width, length)
    first = load_offset(<const uint8_t*>ptr, width, 0)
    last = load_offset(<const uint8_t*>ptr, width, length)
    ascii = _ascii_blocks(data + first, last - first)
    if ascii == last - first:
        return _offsets_rise(ptr, width, length)
    # (the ASCII blocks end on a character boundary: the validator starts there)
    if _utf8_invalid_at(data + first + ascii, last - first - ascii) >= 0:
        return False
    if width == 4:
        return _offsets_rise_on_characters(<const int32_t*>ptr, length, data, last)
    return _offsets_rise_on_characters(<const int64_t*>ptr, length, data, last)


cdef int64_t _ascii_blocks(const uint8_t* s, int64_t n) noexcept nogil:
    """The bytes of s[0:n] before the first 64-byte block holding a byte above 0x7f (n when
    there is none): 64 bytes OR-ed a step, the usual column being all ASCII."""
    cdef uint64_t acc, word
    cdef int64_t i = 0, j
    while i + 64 <= n:
        acc = 0
        for j in range(8):
            memcpy(&word, s + i + 8 * j, 8)
            acc |= word
        if acc & <uint64_t>0x8080808080808080:
            return i
        i += 64
    acc = 0
    for j in range(i, n):
        acc |= s[j]
    return n if (acc & 0x80) == 0 else i


cdef bint _offsets_rise_on_characters(const offset_t* o, int64_t length, const uint8_t* data,
                                      int64_t last) noexcept nogil:
    """Whether offsets 0..length never decrease and none inside the bytes (before ``last``)
    falls on a UTF-8 continuation byte: one pass over the offsets."""
    cdef int64_t i
    for i in range(1, length + 1):
        if o[i] < o[i - 1] or (o[i] < last and (data[o[i]] & 0xC0) == 0x80):
            return False
    return True


cdef inline bint _indices_in(const index_t* idx, int64_t length, uint64_t limit,
                             const uint8_t* bits) noexcept nogil:
    """Whether every index (every non-null one, with ``bits``) is in [0, limit): a negative
    signed index wraps above any limit as uint64."""
    cdef int64_t i
    cdef int bad = 0
    for i in range(length):
        bad |= <uint64_t>idx[i] >= limit
    if not bad or bits == NULL:
        return not bad
    for i in range(length):
        if <uint64_t>idx[i] >= limit and (bits[i >> 3] >> (i & 7)) & 1:
            return False
    return True


cdef bint _indices_fit(const void* ptr, int width, bint signed, int64_t length,
                       int64_t dict_length, const uint8_t* bits) noexcept nogil:
    cdef uint64_t limit = <uint64_t>dict_length
    if width == 1:
        return _indices_in(<const int8_t*>ptr, length, limit, bits) if signed else \
            _indices_in(<const uint8_t*>ptr, length, limit, bits)
    if width == 2:
        return _indices_in(<const int16_t*>ptr, length, limit, bits) if signed else \
            _indices_in(<const uint16_t*>ptr, length, limit, bits)
    if width == 4:
        return _indices_in(<const int32_t*>ptr, length, limit, bits) if signed else \
            _indices_in(<const uint32_t*>ptr, length, limit, bits)
    return _indices_in(<const int64_t*>ptr, length, limit, bits) if signed else \
        _indices_in(<const uint64_t*>ptr, length, limit, bits)


# -- the same checks over a column the loader decoded ---------------------------------------
# (A compressed column is decompressed into new memory, and its export then validated it in
# Python on the caller's thread, reading every offset and byte again, the offsets twice.
# ``prove_decoded`` runs the walk's checks on the thread that decoded it, the bytes just
# written, and keeps the verdict on the Array, so every later export checks nothing.)

# the types ``_proved`` proves: no value ranges (times, dates, decimals), no dictionary
_FLAT_KINDS = frozenset({t.IntType, t.FloatType, t.BoolType, t.TimestampType, t.DurationType})
_PROVED_KINDS = _FLAT_KINDS | {t.BinaryType, t.ListType, t.MapType, t.StructType,
                               t.FixedSizeListType}


cdef bint _nulls_proved(object validity, int64_t length, int64_t nulls) except -1:
    """Whether the null count is the bitmap's (``Array._check_null_count``; an unknown count,
    -1, claims nothing)."""
    cdef BufferView bits
    cdef bint ok
    if validity is None or nulls < 0:
        return nulls <= 0 or validity is not None
    if not isinstance(validity, BufferView):
        return False
    bits = validity
    if not _holds_bits(bits.size, length):
        return False
    if length < _GIL_FREE_AT:
        return _nulls_match(bits.ptr, length, nulls)
    with nogil:
        ok = _nulls_match(bits.ptr, length, nulls)
    return ok


cdef bint _proved(object array) except -1:
    """Whether ``array`` (at offset 0, every node's structure checked as the loader checks it)
    passes ``validate(full=True)``, by the walk's checks; False proves nothing."""
    cdef int64_t length = array.length
    cdef int width
    cdef BufferView offsets, data
    cdef bint ok, utf8
    if array._fully_valid:
        return True
    dtype = array.type
    kind = type(dtype)
    bufs = array._buffers
    # (value ranges, dictionaries, views, unions, run ends: left to the export's check)
    if kind not in _PROVED_KINDS or array.offset or array.dictionary is not None or \
            not bufs or not _nulls_proved(bufs[0], length, array._null_count):
        return False
    children = array.children
    if kind in _FLAT_KINDS:
        return len(bufs) == 2 and not children  # (sizes: the loader's structure check)
    if kind is t.BinaryType or kind is t.ListType or kind is t.MapType:
        if not isinstance(bufs[1], BufferView):
            return False
        offsets = bufs[1]
        width = dtype.offset_dtype.itemsize
        if kind is t.BinaryType:
            if len(bufs) != 3 or children or not isinstance(bufs[2], BufferView):
                return False
            data = bufs[2]
            utf8 = dtype.utf8
            if length < _GIL_FREE_AT:
                return _binary_ok(offsets.ptr, offsets.size, width, length, data.ptr, data.size,
                                  utf8)
            with nogil:
                ok = _binary_ok(offsets.ptr, offsets.size, width, length, data.ptr, data.size,
                                utf8)
            return ok
        if len(bufs) != 2 or len(children) != 1 or \
                not _offsets_fit(offsets.ptr, offsets.size, width, length, len(children[0])):
            return False
        if length < _GIL_FREE_AT:
            ok = _offsets_rise(offsets.ptr, width, length)
        else:
            with nogil:
                ok = _offsets_rise(offsets.ptr, width, length)
        if not ok or (kind is t.MapType and (not children[0].children or
                                             children[0].children[0].null_count)):
            return False
        return _proved(children[0])
    if kind is t.StructType or kind is t.FixedSizeListType:
        if len(bufs) != 1:
            return False
        for child in children:
            if not _proved(child):
                return False
        return True
    return False


cdef int _keep_verdict(object array) except -1:
    array._fully_valid = True
    array._unchecked_claim = None  # (its null count was counted against its bitmap)
    for child in array.children:
        _keep_verdict(child)
    return 0


def prove_decoded(array):
    """Whether column ``array``, just built by the loader (offset 0, structure checked), passes
    ``validate(full=True)``, proved here in C (the GIL let go over large buffers); if so the
    verdict is kept on it and its children, so its exports and writes check nothing again.
    False proves nothing: they then run the full validation, which names what is wrong."""
    if not _proved(array):
        return False
    _keep_verdict(array)
    return True


cdef int _walk_column(_WalkProgram prog, object loader, Py_ssize_t k, ArrowArray* out,
                      Arena* arena) except -1:
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
        clear_array(out)
        raise
    if not ok:
        clear_array(out)
    return ok


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
    if _overlap(w.buffers, w.n_buffers) >= 0:
        return -1  # (the reader's loader names the buffer)
    w.body = region.ptr + body_start
    w.body_size = body_len
    w.arena = arena_new(prog.arena_bytes, <PyObject*>region)
    try:
        begin_node(w.arena, out, info.length, 0, 1, len(prog.node_starts))
        for k in range(out.n_children):
            w.oi = prog.column_op[k]
            w.ni = prog.node_starts[k]
            w.bi = prog.buffer_starts[k]
            if not _walk(&w, out.children[k], lookup, prog.dict_ids, prog.dict_exports) or \
                    out.children[k].length != info.length:
                ok = 0
                break
    except BaseException:
        clear_array(out)
        raise
    finally:
        arena_drop(w.arena)
    if not ok:
        clear_array(out)
        return -1
    return body_start + body_len


cdef inline int32_t _rd32(const uint8_t* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


cdef class _FileBatches(BatchStream):
    """A FileReader's batches, in order, from the footer's blocks: walked when plain, else
    read by ``get_batch``."""

    cdef _WalkProgram program       # the V5 plan's walk, or None
    cdef Py_ssize_t count
    cdef Py_ssize_t next_index
    cdef const uint8_t[::1] blocks  # (offset, metaDataLength, bodyLength) per batch
    cdef int64_t footer_offset
    cdef object dictionaries        # () -> the file's dictionaries (read at first use)
    cdef object get_batch           # (i) -> RecordBatch i, read by the reader
    cdef object mapping             # () -> the mapped Region, None once the reader is closed
    cdef object lookup              # the dictionaries' get, once they are read

    cdef object next_into(self, ArrowArray* out, bint walk):
        """None when the next batch was walked into ``out``, else the next RecordBatch read by
        the reader; StopIteration at the end.  ``walk`` False: always the latter."""
        cdef Py_ssize_t i = self.next_index
        cdef const uint8_t* p
        cdef int64_t offset, meta_len, body_len
        if i >= self.count:
            raise StopIteration
        self.next_index = i + 1
        region = self.mapping() if walk and self.program is not None else None
        if region is not None:
            p = &self.blocks[24 * i]
            offset = load_i64(p)
            meta_len = <int32_t><uint32_t>load_i64(p + 8)  # int32, 4 bytes of padding
            body_len = load_i64(p + 16)
            if 8 <= offset < self.footer_offset and meta_len > 0 and body_len >= 0 and \
                    self._dictionaries() and \
                    _walk_message(self.program, <Region?>region, offset, self.footer_offset,
                                  meta_len, body_len, self.lookup, out) >= 0:
                return None
        return self.get_batch(i)

    cdef bint _dictionaries(self):
        if self.lookup is None:
            try:
                self.lookup = self.dictionaries().get
            except Exception:  # get_batch raises it
                return False
        return True


def export_file_batches(schema, c_walk, blocks, int64_t footer_offset, mapping, dictionaries,
                        get_batch, requested_schema=None):
    """A FileReader's record batches, in order, as an ``"arrow_array_stream"`` capsule; the
    plain ones are walked from the mapping without making Python objects.

    Parameters
    ----------
    schema : Schema
    c_walk : the V5 ``SchemaPlan.c_walk`` of ``schema`` (None: read every batch)
    blocks : numpy array of the footer's record batch blocks (``(offset, metaDataLength,
        bodyLength)`` each, 24 bytes)
    footer_offset : int
        Where the footer starts: every message must end before it.
    mapping, dictionaries, get_batch : callables
        The reader's mapped file (a Region; None once it is closed: then nothing is walked, and
        ``get_batch`` raises), its dictionaries (a mapping by id), and its batch ``i``.  The
        stream holds these, not the mapping: closing the reader lets the mapping go.
    requested_schema : PyCapsule, optional
        As for ``interop._cdata.export_stream``.
    """
    cdef _FileBatches stream = _FileBatches()
    stream.program = c_walk
    stream.count = len(blocks)
    if stream.count:
        stream.blocks = blocks.reshape(-1).view(np.uint8)
    stream.footer_offset = footer_offset
    stream.dictionaries = dictionaries
    stream.get_batch = get_batch
    stream.mapping = mapping
    return batch_stream_capsule(stream, schema, None, requested_schema)


cdef class _WalkInto:
    """The ``walk`` a StreamReader is offered for one ``get_next``: it writes into that call's
    struct only.  One per call, never shared: two threads calling ``get_next`` at once (the
    reader refuses the second) must not see each other's struct."""

    cdef _WalkProgram program
    cdef ArrowArray* out  # NULL once the call is over

    def __call__(self, Region region, int64_t offset, int64_t end, lookup):
        """Walk the record batch message at ``offset`` of ``region`` (ending by ``end``) into
        the struct: the offset past it, or -1 (nothing written: the reader reads it)."""
        if self.out == NULL:
            raise RuntimeError("a stream export's walk is used after its get_next returned")
        return _walk_message(self.program, region, offset, end, -1, -1, lookup, self.out)


cdef class _StreamBatches(BatchStream):
    """A StreamReader's remaining batches.  The reader's ``next_for_export(walk)`` is the
    whole source: it offers the message at its position to ``walk`` (a ``_WalkInto``), which
    returns where the message ends, and keeps its own position; dictionary batches and
    anything unusual it reads itself."""

    cdef _WalkProgram program  # the V5 plan's walk, or None
    cdef object next_for_export

    cdef object next_into(self, ArrowArray* out, bint walk):
        cdef _WalkInto walker = None
        if walk and self.program is not None:
            walker = _WalkInto.__new__(_WalkInto)
            walker.program = self.program
            walker.out = out
        try:
            return self.next_for_export(walker)
        finally:
            if walker is not None:
                walker.out = NULL


def export_stream_batches(schema, c_walk, next_for_export, requested_schema=None):
    """A StreamReader's remaining record batches as an ``"arrow_array_stream"`` capsule.

    Parameters
    ----------
    schema : Schema
    c_walk : the V5 ``SchemaPlan.c_walk`` of ``schema`` (None: read every batch)
    next_for_export : callable
        ``next_for_export(walk)``: the reader's next record batch (StopIteration at the end),
        or None when ``walk(region, offset, end, lookup)`` walked the message at the reader's
        position (it returns the offset past it, or -1); ``walk`` may be None.
    requested_schema : PyCapsule, optional
        As for ``interop._cdata.export_stream``.
    """
    cdef _StreamBatches stream = _StreamBatches()
    stream.program = c_walk
    stream.next_for_export = next_for_export
    return batch_stream_capsule(stream, schema, None, requested_schema)


# -- the parts of every batch of a file, for gathering a column across them -------------------

cdef StructPairs _vector(Region region, int64_t start, Py_ssize_t count):
    cdef StructPairs v = StructPairs.__new__(StructPairs)
    v.owner = region
    v.ptr = region.ptr + start
    v.start = start
    v.count = count
    return v


def file_batch_parts(Region region, blocks, int64_t footer_offset, Py_ssize_t total_nodes,
                     Py_ssize_t total_buffers):
    """``(nodes, buffers, body, length)`` of each record batch block of a file, read in C
    from the message, for ``_core._gather`` (a column of every batch copied at once, without
    a message, loader or RecordBatch object per batch); None as soon as one message is not a
    plain one (what ``_walk_message`` accepts: V5, no custom metadata, uncompressed, the
    schema's counts of nodes and buffers, no variadic counts), which the reader then reads
    batch by batch and reports where it belongs.

    ``blocks``: the footer's ``(offset, metaDataLength, bodyLength)`` per batch (int64,
    24 bytes each); ``footer_offset``: where every message must end by."""
    cdef Py_ssize_t n = len(blocks), i
    cdef const uint8_t[::1] raw
    cdef const uint8_t* p
    cdef int64_t offset, meta_len, body_len, size = region.size, meta_size, meta_start, body_start
    cdef MessageInfo info
    cdef list out = []
    if n == 0:
        return out
    raw = blocks.reshape(-1).view(np.uint8)
    for i in range(n):
        p = &raw[24 * i]
        offset = load_i64(p)
        meta_len = <int32_t><uint32_t>load_i64(p + 8)
        body_len = load_i64(p + 16)
        if offset < 8 or offset >= footer_offset or meta_len <= 0 or body_len < 0 or \
                offset > size - 8 or offset > footer_offset - 8 or \
                _rd32(region.ptr + offset) != -1:
            return None
        meta_size = _rd32(region.ptr + offset + 4)
        meta_start = offset + 8
        if meta_size < 4 or meta_size > size - meta_start or \
                meta_size > limits.max_metadata_size:
            return None
        if peek_message(region.ptr + meta_start, meta_size, &info) != NULL:
            return None
        body_start = meta_start + meta_size
        if info.header_type != 3 or info.version != MetadataVersion.V5 or info.has_metadata or \
                info.codec != -1 or info.length < 0 or info.body_length != body_len or \
                body_len > footer_offset - body_start or body_start != offset + meta_len or \
                info.n_nodes != total_nodes or info.n_buffers != total_buffers or \
                info.n_variadic or \
                not _on_grid(region.ptr + meta_start + info.buffers_start, info.n_buffers):
            return None
        out.append((_vector(region, meta_start + info.nodes_start, info.n_nodes),
                    _vector(region, meta_start + info.buffers_start, info.n_buffers),
                    region.view(body_start, body_len), info.length))
    return out


cdef inline bint _on_grid(const uint8_t* buffers, Py_ssize_t n) noexcept nogil:
    """Whether each of the ``n`` Buffer records at ``buffers`` starts at a multiple of 8, as
    the format puts every buffer (one that does not: the reader reads that batch itself and
    says so)."""
    cdef Py_ssize_t i
    for i in range(n):
        if load_i64(buffers + 16 * i) & 7:
            return False
    return True


cdef inline bint _in_body(int64_t offset, int64_t length, Py_ssize_t size) noexcept nogil:
    return offset >= 0 and length >= 0 and offset <= size and length <= size - offset


def plain_fixed_parts(StructPairs nodes, StructPairs buffers, Py_ssize_t ni, Py_ssize_t bi,
                      int64_t batch_length, BufferView body, int64_t width, int64_t align):
    """``(null_count, validity or None, values)`` of a plain fixed-width column (one node, a
    validity and a values buffer) of an uncompressed native batch, or None when anything is
    unusual (a record out of its vector, a length other than the batch's, a buffer outside
    the body, too small or misaligned): the loader's walk then loads it or names what is wrong.

    Why in C: a 100-column batch read one column at a time paid about a microsecond per
    column in Python for these reads and checks alone (``BatchLoader._fixed_column``)."""
    cdef int64_t length, nulls, voff, vlen, off, size
    cdef const uint8_t* rec
    if ni < 0 or ni >= nodes.count or bi < 0 or bi + 1 >= buffers.count:
        return None
    rec = nodes.ptr + 16 * ni
    length = load_i64(rec)
    nulls = load_i64(rec + 8)
    if length != batch_length or length < 0 or nulls < 0 or nulls > length:
        return None
    rec = buffers.ptr + 16 * bi
    voff = load_i64(rec)
    vlen = load_i64(rec + 8)
    off = load_i64(rec + 16)
    size = load_i64(rec + 24)
    if not _in_body(voff, vlen, body.size) or not _in_body(off, size, body.size):
        return None
    if not _holds(size, length, width) or (nulls and not _holds_bits(vlen, length)):
        return None
    if size and align > 1 and (<uintptr_t>(body.ptr + off)) % align:
        return None
    values = body.slice(off, size)
    return (nulls, body.slice(voff, vlen) if nulls else None, values)
