"""The Arrow C data and C stream interfaces, exchanged as PyCapsules.

Why this module exists: pyarrow, polars, duckdb and every other Arrow
implementation accept data through these three C structs (``ArrowSchema``,
``ArrowArray``, ``ArrowArrayStream``).  Exporting through them is what lets a
memory-mapped arrowmm batch reach those libraries without a copy; importing
through them lets arrowmm read their memory without a copy.

Export: buffer pointers are the addresses of arrowmm's ``BufferView``s, and
each exported ``ArrowArray`` (children included) holds a strong reference to
the arrowmm object it describes in its private data, so the mapping stays
alive until the consumer calls ``release``.  Release callbacks take no lock
and may run on any thread; they take the GIL only to drop that reference.

Import: the ``ArrowArray`` is moved out of its capsule into a heap struct
owned by a small object whose collection calls ``release``; each buffer
becomes a ``Region`` over the foreign pointer holding that object.  The C
interface carries no buffer sizes, so they are computed from the type, offset
and length, and everything that can be checked is (counts, signs, offsets)
before arrowmm's own structural validation runs.

Where the parts live: the structs, their release callbacks, the arena and the capsules are
``_core._cabi`` (shared with the IPC walk); this module fills them from arrowmm types and
Arrays, and reads foreign ones.  A lazy batch's undecoded columns are exported by the
``ColumnExporter`` its loader hands in (``ipc.read._batch_walk``), and a reader's stream by
``ipc.read._batch_walk``'s subclasses of ``BatchStream``: this module never imports the readers.
The typed classes' capsule methods (and ``Table``'s, ``ChunkedArray``'s streams) reach the
functions below through ``arrowmm.hooks``: this module sets those hooks at its end.
"""
from cpython.pyport cimport PY_SSIZE_T_MAX
from cpython.ref cimport PyObject
from libc.errno cimport EINVAL, ENOMEM, ENOSYS
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free
from libc.string cimport memset

from arrowmm._core._cabi cimport (
    FLAG_DICTIONARY_ORDERED, FLAG_MAP_KEYS_SORTED, FLAG_NULLABLE, Arena, ArrayPrivate, ArrowArray,
    ArrowArrayStream, ArrowSchema, ImportedArray, StreamProducer, array_capsule, arena_drop,
    arena_new, arrowmm_zero, begin_node, begin_owned, capsule_pointer, checked_calloc,
    decode_metadata, dup_bytes, encode_metadata, free_array, free_schema, move_array, move_stream,
    node_bytes, schema_capsule, schema_release, stream_capsule)
from arrowmm._core._region cimport BufferView, region_from_pointer

import sys

from arrowmm import hooks, limits, types as t
from arrowmm._core._region import empty_view
from arrowmm.arrays.array import Array, make_array
from arrowmm.arrays.batch import RecordBatch
from arrowmm.arrays.extension import wrap
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError
from arrowmm.interop.requests import (check_request_nulls, requested_array_field,
                                      requested_schema_for, served_array, served_batch)

__all__ = ["export_schema", "export_array", "export_batch", "export_stream", "export_array_stream",
           "import_schema", "import_field", "import_type", "import_array", "import_batch",
           "import_stream", "import_array_stream", "ImportedStream"]

_UNIT_LETTER = {"s": "s", "ms": "m", "us": "u", "ns": "n"}
_LETTER_UNIT = {v: k for k, v in _UNIT_LETTER.items()}
_INT_LETTER = {(8, True): "c", (8, False): "C", (16, True): "s", (16, False): "S",
               (32, True): "i", (32, False): "I", (64, True): "l", (64, False): "L"}
_LIST_FORMAT = {"list": "+l", "large_list": "+L"}
_LIST_KIND = {v: k for k, v in _LIST_FORMAT.items()}
_LIST_VIEW_FORMAT = {False: "+vl", True: "+vL"}
_LIST_VIEW_LARGE = {v: k for k, v in _LIST_VIEW_FORMAT.items()}
_INTERVAL_LETTER = {"YEAR_MONTH": "M", "DAY_TIME": "D", "MONTH_DAY_NANO": "n"}


# == formats ===============================================================================

_FORMATTERS = {
    t.NullType: lambda d: "n",
    t.BoolType: lambda d: "b",
    t.IntType: lambda d: _INT_LETTER[(d.bit_width, d.signed)],
    t.FloatType: lambda d: {16: "e", 32: "f", 64: "g"}[d.bit_width],
    t.DecimalType: lambda d: f"d:{d.precision},{d.scale}" + (
        "" if d.bit_width == 128 else f",{d.bit_width}"),
    t.FixedSizeBinaryType: lambda d: f"w:{d.byte_width}",
    t.BinaryType: lambda d: ("uU" if d.utf8 else "zZ")[d.large],
    t.BinaryViewType: lambda d: "vu" if d.utf8 else "vz",
    t.DateType: lambda d: "tdD" if d.unit == "day" else "tdm",
    t.TimeType: lambda d: "tt" + _UNIT_LETTER[d.unit],
    t.TimestampType: lambda d: f"ts{_UNIT_LETTER[d.unit]}:{d.tz or ''}",
    t.DurationType: lambda d: "tD" + _UNIT_LETTER[d.unit],
    t.IntervalType: lambda d: "ti" + _INTERVAL_LETTER[d.unit],
    t.ListType: lambda d: _LIST_FORMAT[d.kind],
    t.ListViewType: lambda d: _LIST_VIEW_FORMAT[d.large],
    t.FixedSizeListType: lambda d: f"+w:{d.list_size}",
    t.StructType: lambda d: "+s",
    t.MapType: lambda d: "+m",
    t.UnionType: lambda d: f"+u{d.mode[0]}:" + ",".join(map(str, d.type_codes)),
    t.DictionaryType: lambda d: _format(d.index_type),
    t.RunEndEncodedType: lambda d: "+r",
}


def _format(dtype):
    """The C data interface format string of an arrowmm type."""
    formatter = _FORMATTERS.get(type(dtype))
    if formatter is None:
        raise ArrowNotImplementedError(f"no C data interface format for type {dtype}")
    return formatter(dtype)


# formats that take no parameters and no children
_SIMPLE_TYPES = {_format(d): d for d in [
    t.null(), t.bool_(), t.int8(), t.uint8(), t.int16(), t.uint16(), t.int32(), t.uint32(),
    t.int64(), t.uint64(), t.float16(), t.float32(), t.float64(), t.binary(), t.large_binary(),
    t.binary_view(), t.string(), t.large_string(), t.string_view(), t.date32(), t.date64(),
    t.month_interval(), t.day_time_interval(), t.month_day_nano_interval(),
    *[t.TimeType(u) for u in _UNIT_LETTER], *[t.DurationType(u) for u in _UNIT_LETTER]]}


def _need_children(fmt, children, n, path):
    if len(children) != n:
        raise ArrowInvalid(f"{path}: format {fmt!r} needs {n} child(ren), the schema has "
                           f"{len(children)}")


def _parse_format(str fmt, list children, int64_t flags, str path):
    """The arrowmm type a format string (and its child fields) describe."""
    simple = _SIMPLE_TYPES.get(fmt)
    if simple is not None:
        _need_children(fmt, children, 0, path)
        return simple
    head, sep, tail = fmt.partition(":")
    if fmt.startswith("+"):
        if fmt in _LIST_KIND:
            _need_children(fmt, children, 1, path)
            return t.ListType(children[0], _LIST_KIND[fmt])
        if fmt in _LIST_VIEW_LARGE:
            _need_children(fmt, children, 1, path)
            return t.ListViewType(children[0], _LIST_VIEW_LARGE[fmt])
        if head == "+w" and sep:
            _need_children(fmt, children, 1, path)
            return t.FixedSizeListType(children[0], _int(tail, fmt, path))
        if fmt == "+s":
            return t.StructType(children)
        if fmt == "+m":
            _need_children(fmt, children, 1, path)
            return t.MapType(None, None, bool(flags & FLAG_MAP_KEYS_SORTED), entries=children[0])
        if head in ("+ud", "+us") and sep:
            codes = [_int(c, fmt, path) for c in tail.split(",")] if tail else []
            if len(codes) != len(children):
                raise ArrowInvalid(f"{path}: union format {fmt!r} lists {len(codes)} type codes "
                                   f"for {len(children)} children")
            return t.UnionType("dense" if head == "+ud" else "sparse", children, codes)
        if fmt == "+r":
            _need_children(fmt, children, 2, path)
            return t.RunEndEncodedType(children[0], children[1])
    else:
        _need_children(fmt, children, 0, path)
        if head == "d" and sep:
            parts = [_int(p, fmt, path) for p in tail.split(",")]
            if len(parts) in (2, 3):
                return t.DecimalType(*parts)
        elif head == "w" and sep:
            return t.FixedSizeBinaryType(_int(tail, fmt, path))
        elif len(head) == 3 and head[:2] == "ts" and head[2:] in _LETTER_UNIT and sep:
            return t.TimestampType(_LETTER_UNIT[head[2:]], tail or None)
    raise ArrowInvalid(f"{path}: unknown or malformed format string {fmt!r}")


def _int(str text, fmt, path):
    if not (text.isascii() and text.lstrip("-").isdigit() and len(text) < 20):
        raise ArrowInvalid(f"{path}: format string {fmt!r}: {text!r} is not an integer")
    return int(text)


# == schema export =========================================================================
cdef int _fill_schema(ArrowSchema* out, str name, object dtype, bint nullable,
                      object metadata) except -1:
    """Fill ``out`` (released by the caller if this raises: ``release`` is set first)."""
    cdef int64_t i
    memset(out, 0, sizeof(ArrowSchema))
    out.release = schema_release
    out.format = dup_bytes(_format(dtype).encode("ascii"))
    if "\0" in name:  # (read back as a C string, it would end there: another name, or a duplicate)
        raise ArrowInvalid(f"field {name!r}: a name holding a NUL character cannot cross the C "
                           f"data interface, whose names end at the first NUL")
    out.name = dup_bytes(name.encode("utf-8", "surrogateescape"))
    encoded = encode_metadata(metadata)
    if encoded is not None:
        out.metadata = dup_bytes(encoded)
    flags = FLAG_NULLABLE if nullable else 0
    children = ()
    if isinstance(dtype, t.DictionaryType):
        if dtype.ordered:
            flags |= FLAG_DICTIONARY_ORDERED
        out.dictionary = <ArrowSchema*>checked_calloc(1, sizeof(ArrowSchema))
        values = dtype.value_type
        if isinstance(values, t.ExtensionType):  # (its storage, named in the metadata)
            _fill_schema(out.dictionary, "", values.storage_type, True, values.field_metadata())
        else:
            _fill_schema(out.dictionary, "", values, True, None)
    else:
        children = dtype.children
        if isinstance(dtype, t.MapType) and dtype.keys_sorted:
            flags |= FLAG_MAP_KEYS_SORTED
    out.flags = flags
    out.children = <ArrowSchema**>checked_calloc(len(children), sizeof(ArrowSchema*))
    out.n_children = len(children)
    for i, f in enumerate(children):
        out.children[i] = <ArrowSchema*>checked_calloc(1, sizeof(ArrowSchema))
        _fill_schema(out.children[i], f.name, f.storage_type, f.nullable, f.storage_metadata)
    return 0


cdef int _export_schema_into(ArrowSchema* out, object obj) except -1:
    """Fill ``out`` from a DataType, Field or Schema; nothing is left allocated on error."""
    memset(out, 0, sizeof(ArrowSchema))
    try:
        if isinstance(obj, t.Schema):
            _fill_schema(out, "", t.StructType(obj.fields), False, obj.metadata)
        elif isinstance(obj, t.Field):
            _fill_schema(out, obj.name, obj.storage_type, obj.nullable, obj.storage_metadata)
        elif isinstance(obj, t.ExtensionType):  # (its storage, named in the metadata)
            _fill_schema(out, "", obj.storage_type, True, obj.field_metadata())
        elif isinstance(obj, t.DataType):
            _fill_schema(out, "", obj, True, None)
        else:
            raise ArrowInvalid(f"cannot export a schema from {type(obj).__name__}; expected an "
                               f"arrowmm DataType, Field or Schema")
    except BaseException:
        if out.release != NULL:
            out.release(out)
        raise
    return 0


def export_schema(obj):
    """Export a DataType, Field or Schema as an ``"arrow_schema"`` capsule.

    A Schema exports as a struct (``"+s"``) carrying the schema metadata.

    Parameters
    ----------
    obj : DataType, Field or Schema
    """
    cdef ArrowSchema* s = <ArrowSchema*>checked_calloc(1, sizeof(ArrowSchema))
    try:
        _export_schema_into(s, obj)
    except BaseException:
        free_schema(s)
        raise
    return schema_capsule(s)


# == array export ==========================================================================

cdef bint _has_validity(object dtype):
    return not isinstance(dtype, (t.NullType, t.UnionType, t.RunEndEncodedType))


cdef int fill_array(ArrowArray* out, object array, object owner) except -1:
    """Fill ``out`` from an arrowmm Array (released by the caller if this raises)."""
    cdef ArrayPrivate* p = begin_owned(out, owner)
    cdef int64_t i, n, nvar = 0
    cdef const uint8_t* ptr
    dtype = array.type
    out.length = array.length
    # nothing of an empty array is read, and pyarrow mis-sizes buffers of an empty array
    # with a non-zero offset (even its own), so empty arrays export at offset 0
    out.offset = array.offset if array.length else 0
    out.null_count = array.null_count
    bufs = array._buffers
    is_view = isinstance(dtype, t.BinaryViewType)
    n = len(bufs)
    if is_view:
        if n < 2:
            raise ArrowInvalid(f"{dtype} array has {n} buffers, at least 2 needed")
        nvar = n - 2
        n += 1
    elif n != dtype.buffer_count:
        raise ArrowInvalid(f"{dtype} array has {n} buffers, the C data interface needs "
                           f"{dtype.buffer_count}")
    out.buffers = <const void**>checked_calloc(n, sizeof(void*))
    out.n_buffers = n
    validity = _has_validity(dtype)
    for i, b in enumerate(bufs):
        ptr = <const uint8_t*>arrowmm_zero
        if b is None:
            if i == 0 and validity:
                ptr = NULL
        elif isinstance(b, BufferView):
            if (<BufferView>b).ptr != NULL:
                ptr = (<BufferView>b).ptr
        else:
            raise ArrowInvalid(f"{dtype} array buffer {i} is a {type(b).__name__}, "
                               f"not a BufferView")
        out.buffers[i] = <const void*>ptr
    if is_view:
        p.variadic_sizes = <int64_t*>checked_calloc(nvar, sizeof(int64_t))
        for i in range(nvar):
            b = bufs[2 + i]
            p.variadic_sizes[i] = 0 if b is None else (<BufferView>b).size
        out.buffers[n - 1] = <const void*>p.variadic_sizes
    out.children = <ArrowArray**>checked_calloc(len(array.children), sizeof(ArrowArray*))
    out.n_children = len(array.children)
    for i, child in enumerate(array.children):
        out.children[i] = <ArrowArray*>checked_calloc(1, sizeof(ArrowArray))
        fill_array(out.children[i], child, child)
    if isinstance(dtype, t.DictionaryType):
        if array.dictionary is None:
            raise ArrowInvalid(f"{dtype} array without a dictionary")
        out.dictionary = <ArrowArray*>checked_calloc(1, sizeof(ArrowArray))
        fill_array(out.dictionary, array.dictionary, array.dictionary)
    return 0


# Types whose full validation also checks each value's range (times within a day, date64 whole
# days, decimals within their precision).  A value out of range crashes no consumer and reads
# as itself, and pyarrow's own casts make such values (int64 -> date64): the export leaves
# those checks to what copies values into new data (writers, casts, sorts).
_RANGED_VALUES = (t.TimeType, t.DateType, t.DecimalType)
_holds_ranged = {}  # DataType -> whether one of _RANGED_VALUES lies in it


cdef bint _has_ranged(object dtype):
    found = _holds_ranged.get(dtype)
    if found is None:
        values = dtype.value_type if isinstance(dtype, t.DictionaryType) else None
        if isinstance(values, t.ExtensionType):
            values = values.storage_type
        found = isinstance(dtype, _RANGED_VALUES) or \
            any(_has_ranged(f.storage_type) for f in dtype.children) or \
            (values is not None and _has_ranged(values))
        _holds_ranged[dtype] = found
    return found


cdef int check_exported(object array, str path) except -1:
    """Raise ArrowInvalid (naming ``path`` and the slot) unless ``array`` passes the full
    validation arrowmm's own reads make, value ranges aside (above): offsets, UTF-8,
    dictionary indices, union ids and offsets, run ends, views, null counts against their
    bitmaps.  A consumer reads the values unchecked: a bad offset crashes it, a bad index
    reads as a null.  The verdict is kept on the array (``_validated``: once per array)."""
    if array._fully_valid:
        return 0
    if not _has_ranged(array.type):
        array._validated(path)
        return 0
    array._check_structure(path)
    array._check_null_count(path)
    if not isinstance(array.type, _RANGED_VALUES):
        array._check_full(path)
    for i, child in enumerate(array.children):
        check_exported(child, f"{path}.{array._child_name(i)}")
    if array.dictionary is not None:
        check_exported(array.dictionary, f"{path}.dictionary")
    return 0


cdef int export_array_into(ArrowArray* out, object array, object owner, str path) except -1:
    """Fill ``out`` once ``array`` passed ``check_exported``; nothing is left allocated (and no
    reference held) on error."""
    check_exported(array, path)
    try:
        fill_array(out, array, owner)
    except BaseException:
        if out.release != NULL:
            out.release(out)
        raise
    return 0


cdef object _new_array_capsule(object array, object owner):
    cdef ArrowArray* a = <ArrowArray*>checked_calloc(1, sizeof(ArrowArray))
    try:
        export_array_into(a, array, owner, "array")
    except BaseException:
        free_array(a)
        raise
    return array_capsule(a)


def _requested(requested_schema):
    """The Field a requested-schema capsule (or schema-bearing object) describes, or None."""
    if hasattr(requested_schema, "__arrow_c_schema__"):
        requested_schema = requested_schema.__arrow_c_schema__()
    return None if requested_schema is None else import_field(requested_schema)


def export_array(array, requested_schema=None):
    """Export an arrowmm Array as ``(schema capsule, array capsule)``, zero-copy.

    Parameters
    ----------
    array : Array
    requested_schema : PyCapsule, optional
        The PyCapsule interface's schema request.  A type with the array's
        layout (child names, nullability or metadata may differ) is served as
        asked; another type is served by casting to it, as pyarrow does (its
        errors when a value does not fit or the pair does not cast); a
        non-nullable request for data with nulls raises ``ArrowInvalid``.
    """
    wanted = _requested(requested_schema)
    if wanted is None:
        return export_schema(array.type), _new_array_capsule(array, array)
    field = requested_array_field(array.type, wanted)
    array = served_array(array, field, "array")
    check_request_nulls([field], [array], "array")
    return export_schema(field), _new_array_capsule(array, array)


# == batch export ==========================================================================

cdef class ColumnExporter:
    """Exports the undecoded columns of a lazy batch straight into C structs (subclassed in
    ``ipc.read._batch_walk``, which knows the IPC messages).  A batch's loader hands one in through
    ``loader.c_export(offset, num_rows)``: this module never imports the readers' layer."""

    cdef int fill_column(self, object loader, Py_ssize_t k, ArrowArray* out,
                         Arena* arena) except -1:
        return 0


cdef int _fill_batch(ArrowArray* out, object batch, str where) except -1:
    """Fill ``out`` with ``batch`` as a struct array (released by the caller if this raises):
    undecoded columns through the loader's column exporter when it can (it checks their
    values), the others through their Arrays, once these passed ``check_exported``.  ``where``
    names the batch in an error ("batch 3, " or "")."""
    cdef Py_ssize_t k, n = batch.num_columns
    cdef ColumnExporter exporter = None
    # the struct itself has no buffer: it keeps what the loader names alive (the message body),
    # not the batch, so the batch, its loader and its header are freed as soon as the export
    # is done (a table of 20,000 exported batches would otherwise keep 20,000 of each for the
    # garbage collector to scan)
    owner = batch
    loader = batch._loader
    if loader is not None:
        c_export = getattr(loader, "c_export", None)
        if c_export is not None:
            exporter, owner = c_export(batch._offset, batch.num_rows)
    if getattr(batch, "compression", None) is not None:
        # a compressed batch: its columns decompress together on the codec pool (GIL released,
        # each column once under its own lock) rather than one by one in the loop below
        batch.decode_columns()
    cdef Arena* arena = arena_new(
        node_bytes(n) if exporter is None else exporter.arena_bytes, <PyObject*>owner)
    try:
        begin_node(arena, out, batch.num_rows, 0, 1, n)
        columns = batch._columns
        decoded = []
        for k in range(n):
            if columns[k] is None and exporter is not None and \
                    exporter.fill_column(loader, k, out.children[k], arena):
                continue
            decoded.append((k, batch.storage_column(k)))
        # (validated once all are decoded: damage is reported as a read of the batch reports
        # it, a column's structure before any column's values)
        for k, column in decoded:
            check_exported(column, f"{where}column {k} ({batch.schema.field(k).name!r})")
            fill_array(out.children[k], column, column)
    finally:
        arena_drop(arena)
    return 0


cdef int export_batch_into(ArrowArray* out, object batch, str where) except -1:
    """Fill ``out`` with ``batch`` as a struct array; nothing is left allocated on error."""
    try:
        _fill_batch(out, batch, where)
    except BaseException:
        if out.release != NULL:
            out.release(out)
        raise
    return 0


cdef object _batch_capsule(object batch):
    cdef ArrowArray* a = <ArrowArray*>checked_calloc(1, sizeof(ArrowArray))
    try:
        export_batch_into(a, batch, "")
    except BaseException:
        free_array(a)
        raise
    return array_capsule(a)


def export_batch(batch, requested_schema=None):
    """Export a RecordBatch as ``(schema capsule, struct array capsule)``, zero-copy.

    The struct has ``num_rows`` rows and no validity; the schema keeps the
    batch's schema metadata.  The array's private data holds the batch.
    ``requested_schema``: as for ``export_array`` (columns of another type
    are cast); it must also name the batch's columns in order (``ArrowInvalid``
    otherwise).
    """
    wanted = _requested(requested_schema)
    schema = requested_schema_for(batch.schema, wanted)
    if wanted is not None:
        batch = served_batch(batch, schema)
        check_request_nulls(schema.fields, batch.storage_columns, "batch")
    return export_schema(schema), _batch_capsule(batch)


# == stream export =========================================================================

cdef class BatchStream(StreamProducer):
    """An exported stream of record batches: its schema, and where the batches come from (an
    iterator here; ``ipc.read._batch_walk`` subclasses it to walk a reader's messages)."""

    cdef int get_schema(self, ArrowSchema* out) noexcept:
        try:
            _export_schema_into(out, self.schema)
        except BaseException as exc:
            return self.fail(exc)
        return 0

    cdef object next_into(self, ArrowArray* out, bint walk):
        """The next RecordBatch (StopIteration at the end), or None when a subclass filled
        ``out`` itself (only when ``walk``: no request to check the batch against)."""
        return next(self.iterator)

    cdef int get_next(self, ArrowArray* out) noexcept:
        try:
            batch = self.next_into(out, not self.requested)
            if batch is None:
                self.produced += 1
                return 0
        except StopIteration:
            memset(out, 0, sizeof(ArrowArray))  # release = NULL: the end of the stream
            return 0
        except BaseException as exc:
            return self.fail(exc)
        try:
            if not isinstance(batch, RecordBatch):
                raise ArrowInvalid(f"stream iterator yielded a {type(batch).__name__}, "
                                   f"not an arrowmm RecordBatch")
            if batch.schema is not self.source_schema and \
                    not batch.schema.equals(self.source_schema):
                raise ArrowInvalid(f"batch schema {batch.schema.types} differs from the stream "
                                   f"schema {self.source_schema.types}")
            if self.requested:
                batch = served_batch(batch, self.schema)
                check_request_nulls(self.schema.fields, batch.storage_columns, "stream batch")
            export_batch_into(out, batch, f"batch {self.produced}, ")
        except BaseException as exc:
            return self.fail(exc)
        self.produced += 1
        return 0


cdef class _ArrayStream(StreamProducer):
    """An exported stream of arrays of one type (a chunked array's chunks)."""

    cdef object schema         # the type (or requested field) the consumer sees
    cdef object source_type    # the type every chunk must have
    cdef bint requested
    cdef object iterator
    cdef int64_t produced      # chunks handed out (the next one's number, in errors)

    cdef int get_schema(self, ArrowSchema* out) noexcept:
        try:
            _export_schema_into(out, self.schema)
        except BaseException as exc:
            return self.fail(exc)
        return 0

    cdef int get_next(self, ArrowArray* out) noexcept:
        try:
            array = next(self.iterator)
        except StopIteration:
            memset(out, 0, sizeof(ArrowArray))  # release = NULL: the end of the stream
            return 0
        except BaseException as exc:
            return self.fail(exc)
        try:
            if not isinstance(array, Array):
                raise ArrowInvalid(f"array stream iterator yielded a {type(array).__name__}, not "
                                   f"an arrowmm Array")
            if array.type != self.source_type:
                raise ArrowInvalid(f"array stream chunk is {array.type}, the stream "
                                   f"{self.source_type}")
            if self.requested:
                array = served_array(array, self.schema, "stream chunk")
                check_request_nulls([self.schema], [array], "stream chunk")
            export_array_into(out, array, array, f"stream chunk {self.produced}")
        except BaseException as exc:
            return self.fail(exc)
        self.produced += 1
        return 0


cdef object batch_stream_capsule(BatchStream stream, object schema, object batch_iterator,
                                 object requested_schema):
    """Set up ``stream`` for ``schema`` (and the request) and export it as a capsule;
    ``batch_iterator`` is what the base class's ``next_into`` reads (None for a subclass that
    reads its own)."""
    if not isinstance(schema, t.Schema):
        raise ArrowInvalid(f"stream schema must be an arrowmm Schema, got {type(schema).__name__}")
    wanted = _requested(requested_schema)
    stream.schema = requested_schema_for(schema, wanted)
    stream.source_schema = schema
    stream.requested = wanted is not None
    stream.iterator = None if batch_iterator is None else iter(batch_iterator)
    return stream_capsule(stream)


def export_stream(schema, batch_iterator, requested_schema=None):
    """Export batches as an ``"arrow_array_stream"`` capsule.

    The consumer's ``get_next`` pulls from ``batch_iterator`` (with the GIL);
    an exception from it becomes the stream's last error and an errno
    (``EINVAL`` for ``ValueError``, ``ENOSYS`` for ``NotImplementedError``,
    the ``OSError``'s own errno, else ``EIO``), and every later call fails too.

    Parameters
    ----------
    schema : Schema
    batch_iterator : iterable of RecordBatch
    requested_schema : PyCapsule, optional
        As for ``export_batch``; nulls in columns the request declares
        non-nullable fail the ``get_next`` call of that batch.
    """
    return batch_stream_capsule(BatchStream(), schema, batch_iterator, requested_schema)


def export_array_stream(dtype, arrays, requested_schema=None):
    """Export arrays of one type (a chunked array's chunks) as an ``"arrow_array_stream"``
    capsule whose schema is the type, not a struct: what ``pyarrow.chunked_array(obj)`` reads.

    ``requested_schema``: as for ``export_array``."""
    if not isinstance(dtype, t.DataType):
        raise ArrowInvalid(f"array stream type must be an arrowmm DataType, got "
                           f"{type(dtype).__name__}")
    wanted = _requested(requested_schema)
    stream = _ArrayStream()
    stream.schema = dtype if wanted is None else requested_array_field(dtype, wanted)
    stream.source_type = dtype
    stream.requested = wanted is not None
    stream.iterator = iter(arrays)
    return stream_capsule(stream)



# == schema import =========================================================================

cdef object _import_field_at(const ArrowSchema* s, str path, int depth):
    cdef int64_t i
    if depth > limits.max_nesting:
        raise limits.exceeded("max_nesting", depth, f"{path}: imported schema nesting depth")
    if s == NULL or s.release == NULL:
        raise ArrowInvalid(f"{path}: schema is NULL or already released")
    if s.format == NULL:
        raise ArrowInvalid(f"{path}: NULL format string")
    fmt_bytes = <bytes>s.format
    try:
        fmt = fmt_bytes.decode("ascii")
        name = (<bytes>s.name).decode("utf-8") if s.name != NULL else ""
    except UnicodeDecodeError as exc:
        raise ArrowInvalid(f"{path}: format or name is not valid text: {exc}") from None
    here = f"{path}.{name}" if depth else (name or path)
    if s.n_children < 0 or (s.n_children > 0 and s.children == NULL):
        raise ArrowInvalid(f"{here}: n_children is {s.n_children} with children at "
                           f"{'NULL' if s.children == NULL else 'a pointer'}")
    children = [_import_field_at(s.children[i], here, depth + 1) for i in range(s.n_children)]
    dtype = _parse_format(fmt, children, s.flags, here)
    if s.dictionary != NULL:
        if not isinstance(dtype, t.IntType):
            raise ArrowInvalid(f"{here}: dictionary-encoded with non-integer index format {fmt!r}")
        values = _import_field_at(s.dictionary, f"{here}.dictionary", depth + 1)
        dtype = t.DictionaryType(dtype, values.type, bool(s.flags & FLAG_DICTIONARY_ORDERED))
    return t.Field(name, dtype, bool(s.flags & FLAG_NULLABLE), decode_metadata(s.metadata, here))


def import_field(capsule):
    """The Field an ``"arrow_schema"`` capsule describes (the capsule keeps ownership).

    Raises
    ------
    ArrowInvalid
        For a released schema, an unknown or malformed format string, or
        child counts that do not fit the format.
    """
    cdef ArrowSchema* s = <ArrowSchema*>capsule_pointer(capsule, "arrow_schema")
    return _import_field_at(s, "schema", 0)


def import_type(capsule):
    """The DataType an ``"arrow_schema"`` capsule describes."""
    return import_field(capsule).type


def import_schema(capsule):
    """The Schema a struct (``"+s"``) ``"arrow_schema"`` capsule describes.

    The struct's fields become the schema's fields and its metadata the
    schema metadata (the form every producer uses for record batches).
    """
    f = import_field(capsule)
    if not isinstance(f.storage_type, t.StructType):
        raise ArrowInvalid(f"a record batch schema must be a struct, got {f.type}")
    return t.Schema(f.storage_type.fields, f.metadata)


# == array import ==========================================================================

cdef object _view(const ArrowArray* a, int64_t i, object size, object owner, str what,
                  bint optional=False):
    """A BufferView over buffer ``i`` of ``size`` bytes (None for NULL when ``optional``)."""
    cdef const uint8_t* ptr = <const uint8_t*>a.buffers[i]
    if size > PY_SSIZE_T_MAX:
        raise ArrowInvalid(f"{what}: {size} bytes is too large")
    if ptr == NULL:
        if optional:
            return None
        if size == 0:
            return empty_view()
        raise ArrowInvalid(f"{what}: NULL pointer for a {size}-byte buffer")
    return region_from_pointer(ptr, size, owner, what).view(0, size, what)


# the fixed-width classes _import_node reads one values buffer of byte_width a row for
_FIXED_WIDTH_IMPORTS = frozenset({
    t.IntType, t.FloatType, t.DecimalType, t.DateType, t.TimeType, t.TimestampType,
    t.DurationType, t.IntervalType, t.FixedSizeBinaryType})

#: the type classes ``_import_node`` has a branch for (tests/types/test_type_coverage.py checks every
#: concrete class is here; an unlisted class is refused by name, never read by a wrong branch)
IMPORTED_TYPES = _FIXED_WIDTH_IMPORTS | {
    t.NullType, t.BoolType, t.BinaryType, t.BinaryViewType, t.ListType, t.ListViewType,
    t.MapType, t.FixedSizeListType, t.StructType, t.UnionType, t.DictionaryType,
    t.RunEndEncodedType}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"C format of a type (export)": _FORMATTERS, "C array import": IMPORTED_TYPES}


cdef object _import_node(const ArrowArray* a, object dtype, object owner, str path, int depth):
    cdef int64_t i, nvar
    cdef const int64_t* sizes
    if depth > limits.max_nesting:
        raise limits.exceeded("max_nesting", depth, f"{path}: imported array nesting depth")
    if a == NULL or a.release == NULL:
        raise ArrowInvalid(f"{path}: array is NULL or already released")
    length, offset, null_count = a.length, a.offset, a.null_count
    if length < 0 or offset < 0 or null_count < -1 or null_count > length:
        raise ArrowInvalid(f"{path}: length {length}, offset {offset}, null count {null_count} "
                           f"(need length >= 0, offset >= 0, -1 <= null count <= length)")
    end = offset + length
    cls = type(dtype)
    if cls not in IMPORTED_TYPES:
        raise ArrowNotImplementedError(f"{path}: no C data import for type {dtype} "
                                       f"({cls.__name__})")
    if cls is t.BinaryViewType:
        if a.n_buffers < 3:
            raise ArrowInvalid(f"{path}: {dtype} needs at least 3 buffers (validity, views, "
                               f"sizes), has {a.n_buffers}")
        n_buffers = a.n_buffers
    else:
        n_buffers = dtype.buffer_count
        if isinstance(dtype, t.NullType) and a.n_buffers == 1:
            n_buffers = 1  # pre-1.0 producers export one (NULL) validity buffer
        if a.n_buffers != n_buffers:
            raise ArrowInvalid(f"{path}: {dtype} needs {n_buffers} buffers, has {a.n_buffers}")
    n_children = 0 if isinstance(dtype, t.DictionaryType) else len(dtype.children)
    if a.n_children != n_children:
        raise ArrowInvalid(f"{path}: {dtype} needs {n_children} children, has {a.n_children}")
    if (n_buffers and a.buffers == NULL) or (n_children and a.children == NULL):
        raise ArrowInvalid(f"{path}: NULL buffers or children array")
    bufs = []
    if _has_validity(dtype) and n_buffers:
        bufs.append(_view(a, 0, (end + 7) // 8, owner, f"{path}: validity", True))
        if bufs[0] is None and null_count > 0:
            raise ArrowInvalid(f"{path}: null count {null_count} without a validity bitmap")
    if cls is t.NullType:
        bufs = []
    elif cls is t.BoolType:
        bufs.append(_view(a, 1, (end + 7) // 8, owner, f"{path}: values"))
    elif cls is t.BinaryViewType:
        bufs.append(_view(a, 1, 16 * end, owner, f"{path}: views"))
        nvar = a.n_buffers - 3
        sizes = <const int64_t*>a.buffers[a.n_buffers - 1]
        if nvar and sizes == NULL:
            raise ArrowInvalid(f"{path}: NULL variadic sizes buffer for {nvar} data buffers")
        for i in range(nvar):
            if sizes[i] < 0:
                raise ArrowInvalid(f"{path}: variadic data buffer {i} has size {sizes[i]}")
            bufs.append(_view(a, 2 + i, sizes[i], owner, f"{path}: variadic data {i}"))
    elif cls is t.BinaryType or cls is t.ListType or cls is t.MapType:
        width = dtype.offset_dtype.itemsize
        # an empty array may come with no offsets at all: never read past what must exist
        offsets_size = 0 if length == 0 else (end + 1) * width
        offsets = _view(a, 1, offsets_size, owner, f"{path}: offsets")
        bufs.append(offsets)
        if cls is t.BinaryType:
            last = int.from_bytes(offsets.slice(end * width, width).to_bytes(), sys.byteorder,
                                  signed=True) if offsets_size else 0
            if last < 0:
                raise ArrowInvalid(f"{path}: last offset {last} is negative")
            bufs.append(_view(a, 2, last, owner, f"{path}: data"))
    elif cls is t.ListViewType:
        width = dtype.offset_dtype.itemsize
        bufs.append(_view(a, 1, end * width, owner, f"{path}: offsets"))
        bufs.append(_view(a, 2, end * width, owner, f"{path}: sizes"))
    elif cls is t.UnionType:
        bufs.append(_view(a, 0, end, owner, f"{path}: type ids"))
        if dtype.mode == "dense":
            bufs.append(_view(a, 1, 4 * end, owner, f"{path}: offsets"))
    elif cls is t.DictionaryType:
        bufs.append(_view(a, 1, end * dtype.index_type.byte_width, owner, f"{path}: indices"))
    elif cls in _FIXED_WIDTH_IMPORTS:
        bufs.append(_view(a, 1, end * dtype.byte_width, owner, f"{path}: values"))
    fields = dtype.children
    children = [_import_node(a.children[i], fields[i].storage_type, owner, f"{path}.{fields[i].name}",
                             depth + 1) for i in range(n_children)]
    dictionary = None
    if cls is t.DictionaryType:
        if a.dictionary == NULL:
            raise ArrowInvalid(f"{path}: dictionary-encoded array without a dictionary")
        values = dtype.value_type  # (an extension's values are its storage's)
        if isinstance(values, t.ExtensionType):
            values = values.storage_type
        dictionary = _import_node(a.dictionary, values, owner,
                                  f"{path}.dictionary", depth + 1)
    elif a.dictionary != NULL:
        raise ArrowInvalid(f"{path}: {dtype} array carries a dictionary")
    if cls is t.UnionType or cls is t.RunEndEncodedType:
        null_count = 0
    return make_array(dtype, length, bufs, children, null_count, offset, dictionary)


def import_array(schema_capsule, array_capsule):
    """An arrowmm Array over the memory of an ``"arrow_array"`` capsule (no copy).

    The ArrowArray is moved out of the capsule; its ``release`` runs when the
    last buffer view of the result is collected.  Buffer sizes are derived
    from the type, offset and length, then the array is structurally checked.

    Raises
    ------
    ArrowInvalid
        A bad schema, counts that do not fit the type, negative lengths or
        offsets, or a structure that fails validation.
    """
    field = import_field(schema_capsule)
    holder = move_array(array_capsule)
    array = _import_node(holder.c, field.storage_type, holder, "array", 0)
    array.validate(False, "array")
    return wrap(field.extension_type, array)  # (a registered extension named in the metadata)


cdef object _batch_from_struct(object schema, ImportedArray holder, str path):
    struct = _import_node(holder.c, t.StructType(schema.fields), holder, path, 0)
    struct.validate(False, path)
    if struct.null_count:
        raise ArrowInvalid(f"{path}: a record batch cannot come from a struct array with "
                           f"{struct.null_count} null(s)")
    columns = [c.slice(struct.offset, struct.length) for c in struct.children]
    return RecordBatch(schema, struct.length, columns)


def import_batch(schema_capsule, array_capsule):
    """A RecordBatch over a struct ``"arrow_array"`` capsule and its struct schema (no copy)."""
    schema = import_schema(schema_capsule)
    return _batch_from_struct(schema, move_array(array_capsule), "batch")


# == stream import =========================================================================

cdef class ImportedStream:
    """Record batches (or, from ``import_array_stream``, arrays) pulled from a foreign
    ``ArrowArrayStream``; iterate it.

    ``schema`` is read once at import.  The stream is released by ``close()``,
    at the end of iteration, after an error, or when this object is collected;
    batches already returned stay valid (each owns its own ArrowArray).  After
    an error every later ``next`` raises it again: the producer is not asked
    on (pyarrow's answers "end", or the next batch: either hides the loss).
    """

    cdef ArrowArrayStream* c
    cdef readonly object schema
    cdef readonly object field  # the stream's field (an array stream's type: any)
    cdef bint _arrays  # arrays, not record batches (``import_array_stream``)
    cdef int _count
    cdef object _failure  # the first error of get_next or of its batch, or None

    def __cinit__(self):
        self.c = <ArrowArrayStream*>checked_calloc(1, sizeof(ArrowArrayStream))

    def __dealloc__(self):
        self.close()
        free(self.c)
        self.c = NULL

    cdef object _error(self, int code, str what):
        cdef const char* msg = self.c.get_last_error(self.c) if self.c.get_last_error else NULL
        text = f"stream {what} failed (errno {code})" + (
            f": {(<bytes>msg).decode('utf-8', 'replace')}" if msg != NULL else "")
        cls = {EINVAL: ArrowInvalid, ENOSYS: ArrowNotImplementedError,
               ENOMEM: MemoryError}.get(code)
        return cls(text) if cls is not None else OSError(code, text)

    cdef int _read_schema(self) except -1:
        cdef ArrowSchema s
        cdef int rc
        memset(&s, 0, sizeof(ArrowSchema))
        with nogil:
            rc = self.c.get_schema(self.c, &s)
        if rc != 0:
            raise self._error(rc, "get_schema")
        try:
            f = _import_field_at(&s, "stream schema", 0)
        finally:
            if s.release != NULL:
                s.release(&s)
        self.field = f
        if self._arrays:
            return 0
        if not isinstance(f.storage_type, t.StructType):
            raise ArrowInvalid(f"a stream schema must be a struct, got {f.type}")
        self.schema = t.Schema(f.storage_type.fields, f.metadata)
        return 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._failure is not None:
            raise self._failure.with_traceback(None)
        if self.c.release == NULL:
            raise StopIteration
        try:
            return self._next_batch()
        except StopIteration:
            raise
        except Exception as exc:
            self._failure = exc
            self.close()
            raise

    cdef object _next_batch(self):
        cdef int rc
        holder = ImportedArray()
        with nogil:
            rc = self.c.get_next(self.c, holder.c)
        if rc != 0:
            raise self._error(rc, "get_next")
        if holder.c.release == NULL:
            self.close()
            raise StopIteration
        path = f"stream {'array' if self._arrays else 'batch'} {self._count}"
        if self._arrays:
            out = _import_node(holder.c, self.field.storage_type, holder, path, 0)
            out.validate(False, path)
            out = wrap(self.field.extension_type, out)
        else:
            out = _batch_from_struct(self.schema, holder, path)
        self._count += 1
        return out

    def read_all(self):
        """Every remaining batch, in order (a list)."""
        return list(self)

    def close(self):
        """Release the foreign stream now (idempotent: ``release`` runs exactly once)."""
        if self.c != NULL and self.c.release != NULL:
            self.c.release(self.c)
            self.c.release = NULL  # a producer that forgets to mark it released is not re-called

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __arrow_c_schema__(self):
        return export_schema(self.field if self._arrays else self.schema)

    def __arrow_c_stream__(self, requested_schema=None):
        if self._arrays:
            return export_array_stream(self.field.type, self, requested_schema)
        return export_stream(self.schema, self, requested_schema)


def import_stream(capsule):
    """An iterator of RecordBatch (with ``.schema``) over an ``"arrow_array_stream"`` capsule.

    The stream is moved out of the capsule.
    """
    cdef ImportedStream out = ImportedStream.__new__(ImportedStream)
    move_stream(capsule, out.c)
    out._read_schema()
    return out


def import_array_stream(capsule):
    """An iterator of Array (with ``.field``, whose type they all have) over an
    ``"arrow_array_stream"`` capsule of any type: a chunked array's stream (a pyarrow
    ``ChunkedArray``, a polars ``Series``), where ``import_stream`` takes record batches.

    The stream is moved out of the capsule.
    """
    cdef ImportedStream out = ImportedStream.__new__(ImportedStream)
    out._arrays = True
    move_stream(capsule, out.c)
    out._read_schema()
    return out


# the typed classes' capsule methods (types, arrays, tables) call these through the hooks
hooks.fill("export_c_schema", export_schema)
hooks.fill("export_c_array", export_array)
hooks.fill("export_c_batch", export_batch)
hooks.fill("export_c_stream", export_stream)
hooks.fill("export_c_array_stream", export_array_stream)
hooks.fill("import_c_array", import_array)
hooks.fill("import_c_batch", import_batch)
