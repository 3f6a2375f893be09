"""Record batch columns -> one IPC message in a C pass: the writers' fast path.

Why: ``encoder.flatten_columns``, ``Encoder.batch`` and ``encode_batch_message`` spent ~10 us of
Python calls on a small batch (per column: nodes, buffers, offsets; per buffer: layout and
padding), several times what pyarrow spends on the whole write.  Here ``_walk`` collects the
FieldNodes and each buffer as (view, start, size) in C, and ``BatchEncoder.encode`` lays the
body out, fills the batch message's template (``format.encode.batch_message_template``) and
frames it: the bytes ``Encoder.batch`` gives (tests/ipc/test_fast_encode.py compares them).

Scope: native byte order, metadata V5, arrays whose type class is in ``_KINDS`` (what most
data is).  Any other array (unions, run-end encoded, views, an extension type inside a
nested one) makes the walk give up, and the caller takes ``encoder.flatten``.  Rare cases
inside a known type (a bitmap sliced at a bit offset, offsets that do not start at zero, an
empty array) go through ``encoder``'s helpers, which make the new memory; a range outside
its buffer goes through ``BufferView.slice``, which raises the ArrowInvalid naming it.

``write_batch`` is the writers' ``write``: the common batch (the writer's schema, no custom
metadata) goes from its checks to its count in one call into C, the Python around ``encode``
having cost more than it.
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.ref cimport PyObject
from libc.stdint cimport INT32_MAX, INT64_MAX, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset

from arrowmm._core._bits cimport load_offset
from arrowmm._core._region cimport BufferView

import sys
from types import MemberDescriptorType

from arrowmm import types as t
from arrowmm.arrays.base import Array
from arrowmm.arrays.batch import RecordBatch
from arrowmm._core._bitmap import slice_bitmap
from arrowmm._core._region import as_view
from arrowmm.format import MetadataVersion
from arrowmm.format.encode import batch_message_template

__all__ = ["BatchEncoder", "EncodedMessage", "write_batch", "walk_columns", "FAST_TYPES", "WALK_KINDS"]

cdef enum:
    _NULL = 1
    _FIXED = 2       # validity + ``width``-byte values
    _BOOL = 3        # validity + bits
    _BINARY = 4      # validity + ``width``-byte offsets + data
    _LIST = 5        # validity + offsets + the child's range (lists, large lists, maps)
    _FIXED_LIST = 6  # validity + the child's range
    _STRUCT = 7      # validity + each child over the struct's range
    _JOINED_BODY = 32 << 10  # (as encoder._JOINED_BODY: a bigger body goes out as its views)
    _MAX_DEPTH = 256  # (deeper arrays go to ``encoder.flatten``, which has Python's recursion
    #                    limit, where this walk's C stack has none)

#: every type class and its layout here; 0: not walked here (``encoder.flatten`` lays it out),
#: as for any class missing (``encoder.TYPE_TABLES`` lists this table: a new class is decided)
_KINDS = {
    t.NullType: _NULL, t.BoolType: _BOOL, t.BinaryType: _BINARY, t.ListType: _LIST,
    t.MapType: _LIST, t.FixedSizeListType: _FIXED_LIST, t.StructType: _STRUCT,
    **{cls: _FIXED for cls in (t.IntType, t.FloatType, t.DecimalType, t.DateType, t.TimeType,
                               t.TimestampType, t.DurationType, t.IntervalType,
                               t.FixedSizeBinaryType, t.DictionaryType)},
    t.BinaryViewType: 0, t.ListViewType: 0, t.UnionType: 0, t.RunEndEncodedType: 0}
WALK_KINDS = dict(_KINDS)
FAST_TYPES = frozenset(cls for cls, code in _KINDS.items() if code)

_LITTLE = sys.byteorder == "little"  # (templates are filled with little-endian int64s)
_PADS = [bytes(n) for n in range(64)]


#: The layout of the type objects seen lately, in a direct-mapped table by address: per slot
#: the type (held in ``_kind_types``, so the address is not reused while it is there), its
#: ``_KINDS`` code and width (value bytes, or offset bytes).  A batch's columns come back with
#: the same type objects, each found here without a Python call.
cdef enum:
    _KIND_SLOTS = 256
cdef PyObject* _kind_type[_KIND_SLOTS]
cdef int _kind_code[_KIND_SLOTS]
cdef int64_t _kind_width[_KIND_SLOTS]
cdef list _kind_types = [None] * _KIND_SLOTS


cdef int _kind_of(object dtype, int64_t* width) except -1:
    """``dtype``'s ``_KINDS`` code (0: not walked here) and, in ``width``, its width."""
    cdef Py_ssize_t slot = (<size_t><PyObject*>dtype >> 4) % _KIND_SLOTS
    cdef int64_t w = 0
    if _kind_type[slot] == <PyObject*>dtype:
        width[0] = _kind_width[slot]
        return _kind_code[slot]
    code = _KINDS.get(type(dtype), 0)
    if code == _FIXED:
        w = dtype.byte_width
    elif code == _BINARY or code == _LIST:
        w = dtype.offset_dtype.itemsize
    # (the slot is written whole without a Python call, so another thread sees it before or
    # after; then the list holds the type, releasing the one it held last)
    _kind_type[slot] = <PyObject*>dtype
    _kind_code[slot] = code
    _kind_width[slot] = w
    _kind_types[slot] = dtype
    width[0] = w
    return code


cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
    enum: T_OBJECT_EX

cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    ctypedef struct PyTypeObject:
        unsigned long tp_flags
        unsigned int tp_version_tag
    enum: Py_TPFLAGS_VALID_VERSION_TAG


#: Where the ``Array`` slots the walk reads sit in an array object (from their member
#: descriptors): read there, not by attribute lookups, which were most of a small batch's
#: encoding (6 a column, ~25 ns each).  Only for array classes whose lookups of these names
#: find these descriptors (``_reads_slots``): what ``getattr`` would return, without the search.
cdef Py_ssize_t _AT_TYPE, _AT_LENGTH, _AT_OFFSET, _AT_NULLS, _AT_BUFFERS, _AT_VALID
_SLOT_NAMES = ("type", "length", "offset", "_null_count", "_buffers", "_fully_valid")
_ARRAY_SLOTS = tuple(Array.__dict__[name] for name in _SLOT_NAMES)


cdef Py_ssize_t _slot_offset(descriptor) except -1:
    if type(descriptor) is not MemberDescriptorType \
            or (<PyMemberDescrObject*>descriptor).d_member.type != T_OBJECT_EX:
        raise TypeError(f"Array.{descriptor.__name__} is not a slot")  # (Array was changed)
    return (<PyMemberDescrObject*>descriptor).d_member.offset


_AT_TYPE, _AT_LENGTH, _AT_OFFSET, _AT_NULLS, _AT_BUFFERS, _AT_VALID = map(_slot_offset,
                                                                        _ARRAY_SLOTS)


cdef inline object _slot(object array, Py_ssize_t at, str name):
    """``getattr(array, name)`` for a slot at ``at`` of an array ``_reads_slots`` took."""
    cdef PyObject* value = (<PyObject**>((<char*><PyObject*>array) + at))[0]
    if value == NULL:  # (never set: the AttributeError getattr raises)
        return getattr(array, name)
    return <object>value


#: The array classes seen lately whose slots are read directly, by address as ``_kind_type``
#: (held in ``_slot_classes``), with the class's version tag when checked: CPython marks
#: the tag invalid when the class or a base is changed, and gives it a new one when it is
#: looked up next, so a slot shadowed since then is seen.
cdef enum:
    _CLASS_SLOTS = 64
cdef PyObject* _slot_class[_CLASS_SLOTS]
cdef unsigned int _slot_class_tag[_CLASS_SLOTS]
cdef list _slot_classes = [None] * _CLASS_SLOTS


cdef bint _reads_slots(object cls) except -1:
    """Whether arrays of class ``cls`` find ``_ARRAY_SLOTS`` for ``_SLOT_NAMES``."""
    cdef Py_ssize_t slot = (<size_t><PyObject*>cls >> 4) % _CLASS_SLOTS
    cdef unsigned int tag = (<PyTypeObject*>cls).tp_version_tag
    if (_slot_class[slot] == <PyObject*>cls and _slot_class_tag[slot] == tag and tag != 0
            and (<PyTypeObject*>cls).tp_flags & Py_TPFLAGS_VALID_VERSION_TAG):
        return True
    for name, descriptor in zip(_SLOT_NAMES, _ARRAY_SLOTS):
        if getattr(cls, name, None) is not descriptor:
            return False
    tag = (<PyTypeObject*>cls).tp_version_tag  # (given by the lookups, if it had none)
    if tag == 0 or not (<PyTypeObject*>cls).tp_flags & Py_TPFLAGS_VALID_VERSION_TAG:
        return True  # (checked now, not kept: CPython gives no more tags after 2**32 - 1)
    _slot_class[slot] = <PyObject*>cls  # (as ``_kind_of`` writes its table)
    _slot_class_tag[slot] = tag
    _slot_classes[slot] = cls
    return True


cdef struct _Piece:
    int64_t start  # in its view
    int64_t size


cdef class _Walk:
    """What one walk collected: (length, null count) per node, (view, start, size) per
    buffer (a None view: an absent buffer, size 0).  Used by one call at a time (a
    ``BatchEncoder`` keeps one between its calls, for its memory)."""
    cdef int64_t* nodes
    cdef Py_ssize_t n_nodes, cap_nodes
    cdef _Piece* pieces
    cdef Py_ssize_t n_pieces, cap_pieces
    cdef list views

    def __cinit__(self):
        self.views = []

    def __dealloc__(self):
        PyMem_Free(self.nodes)
        PyMem_Free(self.pieces)

    cdef int reset(self) except -1:
        """Empty, its memory kept for the next walk (the views released)."""
        self.n_nodes = self.n_pieces = 0
        del self.views[:]
        return 0

    cdef int node(self, int64_t length, int64_t nulls) except -1:
        cdef int64_t* grown
        if self.n_nodes == self.cap_nodes:
            self.cap_nodes = 2 * self.cap_nodes + 16
            grown = <int64_t*>PyMem_Realloc(self.nodes, self.cap_nodes * 2 * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            self.nodes = grown
        self.nodes[2 * self.n_nodes] = length
        self.nodes[2 * self.n_nodes + 1] = nulls
        self.n_nodes += 1
        return 0

    cdef int piece(self, object view, int64_t start, int64_t size) except -1:
        cdef _Piece* grown
        if self.n_pieces == self.cap_pieces:
            self.cap_pieces = 2 * self.cap_pieces + 32
            grown = <_Piece*>PyMem_Realloc(self.pieces, self.cap_pieces * sizeof(_Piece))
            if grown == NULL:
                raise MemoryError()
            self.pieces = grown
        self.pieces[self.n_pieces].start = start
        self.pieces[self.n_pieces].size = size
        self.n_pieces += 1
        self.views.append(view)
        return 0

    cdef int range(self, object buf, int64_t start, int64_t size) except -1:
        """``buf.slice(start, size)``, checked as it checks (its ArrowInvalid if outside)."""
        cdef BufferView view
        if type(buf) is not BufferView:
            return self.made(buf.slice(start, size))
        view = <BufferView>buf
        if start < 0 or size < 0 or start > view.size or size > view.size - start:
            view.slice(start, size)  # (raises, naming the range)
        return self.piece(view, start, size)

    cdef int made(self, object obj) except -1:
        """A buffer ``encoder``'s helpers made (or None)."""
        cdef BufferView view
        if obj is None:
            return self.piece(None, 0, 0)
        view = obj if type(obj) is BufferView else as_view(obj)
        return self.piece(view, 0, view.size)

    cdef int bits(self, object buf, int64_t offset, int64_t length) except -1:
        """``encoder._bits``: a bitmap of ``length`` bits from bit 0."""
        if buf is None:
            return self.piece(None, 0, 0)
        if offset % 8 == 0:
            return self.range(buf, offset // 8, (length + 7) // 8)
        return self.made(slice_bitmap(buf, offset, length))


cdef int _fixed(_Walk w, object buf, int64_t offset, int64_t length, int64_t width) except -1:
    if width and (offset > INT64_MAX // width or length > INT64_MAX // width):
        # (multiplied as Python ints, which do not wrap: the slice raises, naming the range)
        return w.made(buf.slice((<object>offset) * width, (<object>length) * width))
    return w.range(buf, offset * width, length * width)


cdef int _offsets(_Walk w, object array, object buf, int64_t offset, int64_t length,
                  int64_t width, int64_t* first, int64_t* last) except -1:
    """``encoder._offsets``: offsets from zero, and the (first, last) range they cover."""
    cdef BufferView view
    if length > 0 and type(buf) is BufferView:
        view = <BufferView>buf
        if 0 <= offset and offset < view.size // width - length:  # (offset + length + 1 fit)
            first[0] = load_offset(view.ptr, <int>width, offset)
            last[0] = load_offset(view.ptr, <int>width, offset + length)
            if first[0] == 0:
                return w.piece(view, offset * width, (length + 1) * width)
    from arrowmm.ipc.write.encoder import _offsets as rebased
    offs, lo, hi = rebased(array, buf)
    first[0] = lo
    last[0] = hi
    return w.made(offs)


cdef int _walk(_Walk w, object array, int depth) except -1:
    """``encoder.flatten`` of ``array`` into ``w`` (V5, native order); 1 if its type (or a
    child's) is not walked here, or it nests deeper than ``_MAX_DEPTH`` (``w`` is then to be
    dropped), else 0."""
    cdef int64_t width, offset, length, nulls, first = 0, last = 0
    cdef bint slots = _reads_slots(type(array))
    cdef int code = _kind_of(_slot(array, _AT_TYPE, "type") if slots else array.type, &width)
    if code == 0 or depth > _MAX_DEPTH:
        return 1
    if slots:
        offset = _slot(array, _AT_OFFSET, "offset")
        length = _slot(array, _AT_LENGTH, "length")
    else:
        offset = array.offset
        length = array.length
    if code == _NULL:
        return w.node(length, length)
    bufs = _slot(array, _AT_BUFFERS, "_buffers") if slots else array._buffers
    # (the walked types' arrays keep Array.null_count's cache)
    nulls = _slot(array, _AT_NULLS, "_null_count") if slots else array._null_count
    if nulls < 0:
        nulls = array.null_count
    w.node(length, nulls)
    if nulls:
        w.bits(bufs[0], offset, length)
    else:
        w.piece(None, 0, 0)
    if code == _FIXED:
        return _fixed(w, bufs[1], offset, length, width)
    if code == _BOOL:
        return w.bits(bufs[1], offset, length)
    if code == _BINARY:
        _offsets(w, array, bufs[1], offset, length, width, &first, &last)
        return w.range(bufs[2], first, last - first)
    if code == _LIST:
        _offsets(w, array, bufs[1], offset, length, width, &first, &last)
        return _walk(w, array.children[0].slice(first, last - first), depth + 1)
    if code == _FIXED_LIST:
        return _walk(w, array._covered_values(), depth + 1)
    for child in array.children:  # _STRUCT
        if _walk(w, child.slice(offset, length), depth + 1):
            return 1
    return 0


cdef int _walk_all(_Walk w, columns, bint validated) except -1:
    """Walk each of ``columns`` into ``w``: 1 if one is not walked here (or, ``validated``,
    has not passed full validation), else 0."""
    for array in columns:
        if validated and not (_slot(array, _AT_VALID, "_fully_valid")
                              if _reads_slots(type(array)) else array._fully_valid):
            return 1
        if _walk(w, array, 0):
            return 1
    return 0


cdef _Walk _walked(columns):
    cdef _Walk w = _Walk()
    return None if _walk_all(w, columns, False) else w


def walk_columns(columns):
    """(nodes, buffers) of ``columns`` as ``encoder.flatten`` gives them (a flat list of
    ints; views, or None), or None when a column's type is not walked here."""
    cdef _Walk w = _walked(columns)
    cdef Py_ssize_t i
    if w is None:
        return None
    nodes = [w.nodes[i] for i in range(2 * w.n_nodes)]
    buffers = []
    for i in range(w.n_pieces):
        view = w.views[i]
        if view is not None and (w.pieces[i].start or w.pieces[i].size != (<BufferView>view).size):
            view = (<BufferView>view).slice(w.pieces[i].start, w.pieces[i].size)
        buffers.append(view)
    return nodes, buffers


cdef class EncodedMessage:
    """One framed message: ``parts`` to write in order, and its Block numbers."""

    cdef readonly list parts
    cdef readonly int64_t metadata_length  # prefix + flatbuffer + padding
    cdef readonly int64_t body_length

    def __init__(self, list parts, int64_t metadata_length, int64_t body_length):
        self.parts = parts
        self.metadata_length = metadata_length
        self.body_length = body_length

    @property
    def nbytes(self):
        return self.metadata_length + self.body_length


cdef EncodedMessage _message(list parts, int64_t metadata_length, int64_t body_length):
    cdef EncodedMessage msg = EncodedMessage.__new__(EncodedMessage)
    msg.parts = parts
    msg.metadata_length = metadata_length
    msg.body_length = body_length
    return msg


cdef inline void _put_i64(char* p, int64_t value) noexcept:
    memcpy(p, &value, 8)  # (little-endian hosts only: see ``BatchEncoder``)


cdef inline void _put_i32(char* p, int32_t value) noexcept:
    memcpy(p, &value, 4)


cdef class _Template:
    """A batch message's template (``format.encode.batch_message_template``) and its shape:
    one object, so that a thread reading the encoder's current one sees all of it."""
    cdef bytes message
    cdef Py_ssize_t nodes, buffers
    cdef bint has_length, has_body
    cdef int64_t node_at, buffer_at, length_at, body_at  # (-1: left out of the message)


#: (nodes, buffers, has length, has body, version) -> _Template, for every writer
cdef dict _TEMPLATES = {}


cdef _Template _template(Py_ssize_t nodes, Py_ssize_t buffers, bint has_length, bint has_body,
                         version):
    key = (nodes, buffers, has_length, has_body, version)
    cdef _Template tpl = _TEMPLATES.get(key)
    if tpl is not None:
        return tpl
    message, node_at, buffer_at, length_at, body_at = batch_message_template(
        nodes, buffers, has_length, has_body, None, version)
    tpl = _Template.__new__(_Template)
    tpl.message = message
    tpl.nodes, tpl.buffers, tpl.has_length, tpl.has_body = nodes, buffers, has_length, has_body
    tpl.node_at, tpl.buffer_at = node_at, buffer_at
    tpl.length_at = -1 if length_at is None else length_at
    tpl.body_at = -1 if body_at is None else body_at
    if len(_TEMPLATES) >= 256:  # (a writer uses a few shapes: the ones in use come back)
        _TEMPLATES.clear()
    _TEMPLATES[key] = tpl
    return tpl


cdef class BatchEncoder:
    """``Encoder.batch`` of a record batch without custom metadata or compression, for
    metadata V5 in native (little-endian) order: ``encode`` returns the ``EncodedMessage``
    (None for columns it does not walk or that were not validated).  ``alignment`` and
    ``legacy_prefix`` as ``Encoder``'s."""

    cdef int64_t alignment
    cdef bint legacy_prefix
    cdef object version
    cdef _Template current  # the last template used (a writer's batches mostly share one)
    cdef _Walk spare  # a walk's memory, kept between batches (None while one is in use)

    def __init__(self, int64_t alignment=64, bint legacy_prefix=False,
                 version=MetadataVersion.V5):
        if not _LITTLE:
            raise NotImplementedError("BatchEncoder writes little-endian numbers")
        if alignment not in (8, 16, 32, 64):
            raise ValueError(f"alignment must be 8, 16, 32 or 64, got {alignment}")
        self.alignment = alignment
        self.legacy_prefix = legacy_prefix
        self.version = version
        self.spare = _Walk()

    def encode(self, columns, int64_t length, int64_t position):
        """The message of a record batch of ``length`` rows whose storage columns are
        ``columns``, starting at byte ``position`` of the output; None if a column's type is
        not walked here, or it has not passed full validation yet (``Array._validated``: what
        a writer does first, before it asks again)."""
        cdef int64_t sizes[2]
        framed = self._framed(columns, length, position, sizes)
        if framed is None:
            return None
        return _message([framed] if type(framed) is bytes else framed, sizes[0], sizes[1])

    cpdef bint emit(self, writer, batch) except -1:
        """Encode ``batch`` (a RecordBatch of the writer's schema, written without custom
        metadata, dictionaries or statistics: the caller's checks), hand its message to
        ``writer._sink`` (a ``files.Sink``), flush it and count it as ``_WriterBase``
        does (``num_record_batches``; a file's Block in ``_batch_blocks``): True; False when
        ``encode`` gives None (nothing written: the caller takes its checked path).

        An error of the sink leaves ``writer._failed`` set, as ``_WriterBase._put`` does: what
        was written is incomplete."""
        cdef list columns = batch._columns  # (the storage arrays, unless one is not decoded)
        for col in columns:
            if col is None:
                columns = batch.storage_columns
                break
        cdef int64_t sizes[2]
        sink = writer._sink
        start = sink.position
        framed = self._framed(columns, batch.num_rows, start, sizes)
        if framed is None:
            return False
        try:
            if type(framed) is not bytes:  # (a message and the views of a big body)
                sink.write(framed)
            else:
                write = sink._write_file
                if write is None:  # (a file descriptor: ``Sink.write``'s writev)
                    sink.write([framed])
                else:  # (``Sink.write`` of one bytes to a file object, inline)
                    written = write(framed)
                    if written is None or written == sizes[0] + sizes[1]:
                        sink.position = start + sizes[0] + sizes[1]
                    else:
                        sink.position = start + written
                        sink.write([memoryview(framed)[written:]])
            flush = sink._flush_file
            if flush is not None:
                flush()
        except BaseException as exc:
            writer._failed = exc
            raise
        if writer._file_format:
            writer._batch_blocks.append((start, sizes[0], sizes[1]))
        writer.num_record_batches += 1
        return True

    cdef object _framed(self, columns, int64_t length, int64_t position, int64_t* sizes):
        """``encode``'s message as ``_frame`` gives it, or None."""
        cdef _Walk w = self.spare
        if w is None:  # (another thread is in ``encode``: it has the spare)
            w = _Walk()
        self.spare = None
        try:
            if _walk_all(w, columns, True):
                return None
            return self._frame(w, length, position, sizes)
        finally:
            w.reset()
            self.spare = w

    cdef object _frame(self, _Walk w, int64_t length, int64_t position, int64_t* sizes):
        """The framed message of the walked columns: one bytes (a small body joined to it) or
        the parts to write in order; its metadata and body lengths in ``sizes``; None when
        its prefix cannot say its metadata length (``Encoder``'s framing raises)."""
        cdef Py_ssize_t i
        cdef int64_t body = 0, size, pad, prefix, meta_pad, metadata_length, align = self.alignment
        cdef Py_ssize_t meta_size
        cdef char* out
        cdef char* at
        cdef BufferView view
        for i in range(w.n_pieces):  # the body's layout: each buffer padded to the alignment
            body += w.pieces[i].size + (-w.pieces[i].size & (align - 1))
        cdef _Template tpl = self.current
        if (tpl is None or w.n_nodes != tpl.nodes or w.n_pieces != tpl.buffers
                or (length != 0) != tpl.has_length or (body != 0) != tpl.has_body):
            tpl = self.current = _template(w.n_nodes, w.n_pieces, length != 0, body != 0,
                                           self.version)
        meta_size = len(tpl.message)
        prefix = 4 if self.legacy_prefix else 8
        meta_pad = -(position + prefix + meta_size) & (align - 1)
        metadata_length = prefix + meta_size + meta_pad
        if metadata_length - prefix > INT32_MAX:
            return None
        joined = body <= _JOINED_BODY
        framed = PyBytes_FromStringAndSize(NULL, metadata_length + (body if joined else 0))
        out = PyBytes_AS_STRING(framed)
        if self.legacy_prefix:
            _put_i32(out, <int32_t>(metadata_length - 4))
        else:
            _put_i32(out, -1)
            _put_i32(out + 4, <int32_t>(metadata_length - 8))
        at = out + prefix
        memcpy(at, PyBytes_AS_STRING(tpl.message), meta_size)
        memcpy(at + tpl.node_at, w.nodes, 16 * w.n_nodes)
        body = 0
        for i in range(w.n_pieces):  # (offset, length) of each buffer in the body
            size = w.pieces[i].size
            _put_i64(at + tpl.buffer_at + 16 * i, body)
            _put_i64(at + tpl.buffer_at + 16 * i + 8, size)
            body += size + (-size & (align - 1))
        if tpl.length_at >= 0:
            _put_i64(at + tpl.length_at, length)
        if tpl.body_at >= 0:
            _put_i64(at + tpl.body_at, body)
        memset(at + meta_size, 0, meta_pad)
        if joined:
            at = out + metadata_length
            for i in range(w.n_pieces):
                size = w.pieces[i].size
                if size:
                    view = <BufferView>w.views[i]
                    memcpy(at, view.ptr + w.pieces[i].start, size)
                pad = -size & (align - 1)
                memset(at + size, 0, pad)
                at += size + pad
            sizes[0], sizes[1] = metadata_length, body
            return framed
        parts = [framed]
        for i in range(w.n_pieces):
            size = w.pieces[i].size
            if size:
                view = <BufferView>w.views[i]
                parts.append(view if w.pieces[i].start == 0 and size == view.size
                             else view.slice(w.pieces[i].start, size))
            pad = -size & (align - 1)
            if pad:
                parts.append(_PADS[pad])
        sizes[0], sizes[1] = metadata_length, body
        return parts



@cython.embedsignature(False)  # (its '*' in a docstring's first line reads as emphasis to the
# docs build; the signature comes from the function itself)
def write_batch(writer, batch, metadata=None, *, custom_metadata=None):
    """Write one record batch (an arrowmm RecordBatch or anything ``record_batch`` takes).

    ``metadata`` (or pyarrow's name, ``custom_metadata``): custom metadata
    of this record batch message; by default the batch's own.  A batch
    whose schema differs from the writer's, or whose fields sharing a
    dictionary id carry different dictionaries, raises ``ArrowInvalid`` and
    writes nothing.
    """
    # (``_WriterBase.write``, a method: a batch of the writer's schema, or of the one matched
    # last, without custom metadata, to a writer without dictionaries, statistics or casting,
    # goes from these checks to its count in C; any other to ``_write_checked``)
    if (metadata is None and custom_metadata is None and type(batch) is RecordBatch
            and not writer._closed and writer._failed is None and writer._plain
            and not batch.metadata):
        fast = writer._fast
        schema = batch.schema
        if fast is not None and (schema is writer.schema or schema is writer._matched):
            if (<BatchEncoder?>fast).emit(writer, batch):
                return
            return writer._write_coerced(batch, None, False)  # (validated there, then encoded)
    return writer._write_checked(batch, metadata, custom_metadata)
