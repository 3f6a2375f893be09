"""Records -> FlatBuffers metadata (encoding): the schema, record batch, dictionary and footer
messages the writers send.  A schema's tables are built with the generated builders in
``arrowmm.format._fbs`` (once per schema, then kept); the messages every batch and file send
are written directly, to the same bytes (``_Back``, below)."""
from __future__ import annotations

import copy
import struct
import threading
from typing import Optional

import flatbuffers
import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .decode import (BLOCK, COMPRESSION_NAMES, FEATURE_CODES, FLOAT_BITS, INTERVAL_UNITS,
                     TIME_UNITS, MessageHeader, MetadataVersion)

__all__ = ["encode_schema_message", "encode_batch_message", "batch_message_template",
           "encode_footer", "encode_type", "finish_message"]

from ._fbs import (  # (builder functions of the generated modules)
    Date as _Date, Decimal as _Decimal, DictionaryEncoding as _DictionaryEncoding,
    Duration as _Duration, Field as _Field, FixedSizeBinary as _FixedSizeBinary,
    FixedSizeList as _FixedSizeList, FloatingPoint as _FloatingPoint, Int as _Int,
    Interval as _Interval, KeyValue as _KeyValue, Map as _Map, Message as _Message,
    Schema as _Schema, Time as _Time, Timestamp as _Timestamp, Union as _Union,
)

_UNIT_CODE = {v: k for k, v in TIME_UNITS.items()}
_INTERVAL_CODE = {v: k for k, v in INTERVAL_UNITS.items()}
_FLOAT_CODE = {v: k for k, v in FLOAT_BITS.items()}
_CODEC_CODE = {v: k for k, v in COMPRESSION_NAMES.items()}


def _empty_table(b) -> int:
    b.StartObject(0)
    return b.EndObject()


def _encode_key_values(b, metadata: Optional[dict]):
    if not metadata:
        return None
    items = []
    for k, v in metadata.items():
        key = b.CreateString(str(k).encode("utf-8", "surrogateescape"))  # (bytes read that
        value = b.CreateString(str(v).encode("utf-8", "surrogateescape"))  # were not UTF-8)
        items.append(_table(b, _KeyValue, ("Value", value), ("Key", key)))
    return _offset_vector(b, items)


def _table(b, table, *fields) -> int:
    """One table of ``table``'s generated module with ``fields`` (``("BitWidth", 32)``, ...)
    added in the order given (flatc's ``Create*`` order, so the bytes match Arrow C++'s)."""
    table.Start(b)
    for name, value in fields:
        if value is not None:
            getattr(table, "Add" + name)(b, value)
    return table.End(b)


def _offset_vector(b, offsets) -> int:
    """A vector of the tables at ``offsets``, in that order."""
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _union_encode(b, dtype):
    b.StartVector(4, len(dtype.type_codes), 4)
    for code in reversed(dtype.type_codes):
        b.PrependInt32(code)
    codes = b.EndVector()
    return 14, _table(b, _Union, ("TypeIds", codes), ("Mode", 1 if dtype.mode == "dense" else 0))


def _timestamp_encode(b, dtype):
    tz = b.CreateString(dtype.tz) if dtype.tz else None
    return 10, _table(b, _Timestamp, ("Timezone", tz), ("Unit", _UNIT_CODE[dtype.unit]))


def _fields_of(code, table=None, fields=lambda dtype: ()):
    """The encoder of a type whose Type member is ``code``: an empty table, or ``table`` with
    ``fields(dtype)`` (a type whose table holds strings or vectors has an encoder of its own:
    they must be built before the table starts)."""
    if table is None:
        return lambda b, dtype: (code(dtype) if callable(code) else code, _empty_table(b))
    return lambda b, dtype: (code, _table(b, table, *fields(dtype)))


#: the Type union member of each type class and its table (a dictionary field is encoded as its
#: value type plus a DictionaryEncoding, by ``_encode_field``)
_TYPE_ENCODERS = {
    t.NullType: _fields_of(1),
    t.IntType: _fields_of(2, _Int, lambda d: (("BitWidth", d.bit_width), ("IsSigned", d.signed))),
    t.FloatType: _fields_of(3, _FloatingPoint,
                            lambda d: (("Precision", _FLOAT_CODE[d.bit_width]),)),
    t.BinaryType: _fields_of(lambda d: {(False, False): 4, (True, False): 5, (False, True): 19,
                                        (True, True): 20}[(d.utf8, d.large)]),
    t.BinaryViewType: _fields_of(lambda d: 24 if d.utf8 else 23),
    t.BoolType: _fields_of(6),
    t.DecimalType: _fields_of(7, _Decimal, lambda d: (("BitWidth", d.bit_width),
                                                      ("Scale", d.scale),
                                                      ("Precision", d.precision))),
    t.DateType: _fields_of(8, _Date, lambda d: (("Unit", 0 if d.unit == "day" else 1),)),
    t.TimeType: _fields_of(9, _Time, lambda d: (("BitWidth", d.bit_width),
                                                ("Unit", _UNIT_CODE[d.unit]))),
    t.TimestampType: _timestamp_encode,
    t.IntervalType: _fields_of(11, _Interval, lambda d: (("Unit", _INTERVAL_CODE[d.unit]),)),
    t.MapType: _fields_of(17, _Map, lambda d: (("KeysSorted", d.keys_sorted),)),
    t.ListType: _fields_of(lambda d: 21 if d.large else 12),
    t.ListViewType: _fields_of(lambda d: 26 if d.large else 25),
    t.StructType: _fields_of(13),
    t.UnionType: _union_encode,
    t.FixedSizeBinaryType: _fields_of(15, _FixedSizeBinary,
                                      lambda d: (("ByteWidth", d.byte_width),)),
    t.FixedSizeListType: _fields_of(16, _FixedSizeList, lambda d: (("ListSize", d.list_size),)),
    t.DurationType: _fields_of(18, _Duration, lambda d: (("Unit", _UNIT_CODE[d.unit]),)),
    t.RunEndEncodedType: _fields_of(22),
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"FlatBuffers Type of a type (encode)": _TYPE_ENCODERS}


def encode_type(b, dtype: t.DataType):
    """(Type union code, table offset) for ``dtype`` (dictionary fields pass their value type)."""
    encoder = _TYPE_ENCODERS.get(type(dtype))
    if encoder is None:
        raise ArrowNotImplementedError(f"cannot encode type {dtype} ({type(dtype).__name__})")
    return encoder(b, dtype)


def _encode_field(b, f: t.Field) -> int:
    # Arrow C++'s order (``FieldToFlatbufferVisitor::GetResult``), so the bytes are the same:
    # the children, the type table, the dictionary encoding, the metadata, the name, the
    # children vector; each table's fields added as flatc's ``Create*`` adds them (widest
    # first, then last declared first).
    dtype = f.storage_type
    value_type = dtype.value_type if isinstance(dtype, t.DictionaryType) else dtype
    kids = [_encode_field(b, c) for c in value_type.children]
    type_code, type_table = encode_type(b, value_type)
    encoding = None
    if isinstance(dtype, t.DictionaryType):
        if f.dictionary_id is None:
            raise ArrowInvalid(f"field {f.name!r}: dictionary-encoded field without a dictionary id")
        index = _table(b, _Int, ("BitWidth", dtype.index_type.bit_width),
                       ("IsSigned", dtype.index_type.signed))
        encoding = _table(b, _DictionaryEncoding, ("Id", f.dictionary_id), ("IndexType", index),
                          ("IsOrdered", dtype.ordered))
    metadata = _encode_key_values(b, _cpp_metadata_order(f.storage_metadata))
    name = b.CreateString(f.name)
    children = _offset_vector(b, kids)
    return _table(b, _Field, ("CustomMetadata", metadata), ("Children", children),
                  ("Dictionary", encoding), ("Type", type_table), ("Name", name),
                  ("TypeType", type_code), ("Nullable", f.nullable))


def _cpp_metadata_order(metadata):
    """A field's stored metadata with the extension's entries last, metadata before name,
    where Arrow C++ writes them (after the field's own metadata)."""
    if not metadata or t.EXTENSION_NAME not in metadata:
        return metadata
    out = {k: v for k, v in metadata.items() if k not in (t.EXTENSION_NAME, t.EXTENSION_METADATA)}
    if t.EXTENSION_METADATA in metadata:
        out[t.EXTENSION_METADATA] = metadata[t.EXTENSION_METADATA]
    out[t.EXTENSION_NAME] = metadata[t.EXTENSION_NAME]
    return out


def _encode_schema(b, schema: t.Schema, features=()) -> int:
    vec = _offset_vector(b, [_encode_field(b, f) for f in schema.fields])
    metadata = _encode_key_values(b, schema.metadata)
    feature_vec = None
    if features:
        feature_vec = b.CreateNumpyVector(np.array([FEATURE_CODES[f] for f in features], dtype="<i8"))
    return _table(b, _Schema, ("Features", feature_vec), ("CustomMetadata", metadata),
                  ("Fields", vec), ("Endianness", 1 if schema.endianness == "big" else 0))


#: The last few schemas encoded: (schema, features, the builder's tail bytes, the table's
#: offset, minalign, vtables), keyed by ``id(schema)`` (the entry holds the schema, so the id is
#: not reused while cached; schemas are immutable).  A file's schema is encoded twice, in its
#: first message and its footer, and writers of many files of one schema encode it again each
#: time: through the Python builder, 16 fields cost about 1 ms each time.
_SCHEMA_TAILS: dict = {}
_SCHEMA_TAILS_KEPT = 16
_SCHEMA_TAILS_LOCK = threading.Lock()


def _schema_tail(schema: t.Schema, features) -> tuple:
    """(the tail bytes of a builder holding only ``schema``'s table, that table's offset, the
    builder's minalign, its vtables): the state ``_encode_schema`` into an empty builder
    leaves, from the cache when ``schema`` (this object) was encoded lately."""
    features = tuple(features)
    hit = _SCHEMA_TAILS.get(id(schema))
    if hit is not None and hit[0] is schema and hit[1] == features:
        return hit[2:]
    b = flatbuffers.Builder(1024)
    sch = _encode_schema(b, schema, features)
    entry = (schema, features, bytes(b.Bytes[b.head:]), sch, b.minalign, copy.copy(b.vtables))
    with _SCHEMA_TAILS_LOCK:  # (writers in several threads)
        while len(_SCHEMA_TAILS) >= _SCHEMA_TAILS_KEPT:
            _SCHEMA_TAILS.pop(next(iter(_SCHEMA_TAILS)))
        _SCHEMA_TAILS[id(schema)] = entry
    return entry[2:]


def finish_message(b, header_type: int, header: int, body_length: int, metadata, version) -> bytes:
    md = _encode_key_values(b, metadata)
    b.Finish(_table(b, _Message, ("BodyLength", body_length), ("CustomMetadata", md),
                    ("Header", header), ("Version", version), ("HeaderType", header_type)))
    return bytes(b.Output())


# == the messages of every batch, written directly ==========================================
# A record batch or dictionary batch Message and the Footer have a fixed shape: a few scalars,
# vectors of 16- or 24-byte structs that are already numpy arrays, an optional key-value
# metadata vector.  The generic ``flatbuffers.Builder`` spends ~0.1 ms per message in Python
# calls on them; ``_Back`` runs the same algorithm (the same alignment, padding, field order
# and vtable sharing, so the same bytes: tests/format/test_encode_direct.py) with a few
# arithmetic steps per field into one preallocated bytearray.

_I8 = struct.Struct("<b")
_U8 = struct.Struct("<B")
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")


class _Back:
    """A flatbuffer built back to front as ``flatbuffers.Builder`` builds it (``o``: bytes
    written, counted from the end, where the builder's alignment is measured from); holds
    only what the messages below add.  ``capacity`` must bound what is added (512 bytes
    more than the vectors' and metadata's payloads do: a table takes at most ~60)."""

    __slots__ = ("buf", "end", "o", "minalign", "vtables", "slots", "object_end")

    def __init__(self, capacity: int, tail: bytes = b"", minalign: int = 1, vtables=None):
        self.buf = bytearray(capacity + len(tail))
        self.end = len(self.buf)
        if tail:
            self.buf[self.end - len(tail):] = tail
        self.o = len(tail)
        self.minalign = minalign
        self.vtables = dict(vtables) if vtables else {}

    def prep(self, size: int, additional: int = 0) -> None:
        """``Builder.Prep``: pad (the bytes are zero already) so that ``size`` is aligned
        after ``additional`` bytes."""
        if size > self.minalign:
            self.minalign = size
        self.o += -(self.o + additional) & (size - 1)

    def vector(self, payload: bytes, count: int, alignment: int) -> int:
        """``StartVector`` + the payload + ``EndVector``: the vector's offset."""
        n = len(payload)
        self.prep(4, n)
        self.prep(alignment, n)
        self.o += n
        at = self.end - self.o
        self.buf[at:at + n] = payload
        self.o += 4
        _U32.pack_into(self.buf, self.end - self.o, count)
        return self.o

    def string(self, data: bytes) -> int:
        """``CreateString`` of ``data`` (zero-terminated)."""
        self.prep(4, len(data) + 1)
        self.o += 1
        return self.vector(data, len(data), 1)

    def offsets(self, targets) -> int:
        """A vector of offsets to the tables at ``targets`` (``_offset_vector``)."""
        self.prep(4, 4 * len(targets))
        buf, end = self.buf, self.end
        for target in reversed(targets):
            self.o += 4
            _U32.pack_into(buf, end - self.o, self.o - target)
        self.o += 4
        _U32.pack_into(buf, end - self.o, len(targets))
        return self.o

    def start(self) -> None:
        self.slots = {}
        self.object_end = self.o

    def scalar(self, slot: int, packer: struct.Struct, value) -> None:
        """A scalar field, left out when it is zero (its default), as the builder does."""
        if value:
            size = packer.size
            self.prep(size)
            self.o += size
            packer.pack_into(self.buf, self.end - self.o, value)
            self.slots[slot] = self.o

    def offset(self, slot: int, target: Optional[int]) -> None:
        if target is not None:
            self.prep(4)
            self.o += 4
            _U32.pack_into(self.buf, self.end - self.o, self.o - target)
            self.slots[slot] = self.o

    def end_table(self) -> int:
        """``EndObject``: the soffset, then the vtable, or a pointer to an equal one."""
        self.prep(4)
        self.o += 4
        obj = self.o
        slots = self.slots
        key = tuple([obj - slots[i] if i in slots else 0
                     for i in range(max(slots, default=-1), -1, -1)] + [obj - self.object_end])
        vt = self.vtables.get(key)
        if vt is None:
            n = len(key) + 1
            self.o += 2 * n
            struct.pack_into(f"<{n}H", self.buf, self.end - self.o, 2 * n, *reversed(key))
            vt = self.vtables[key] = self.o
        _I32.pack_into(self.buf, self.end - obj, vt - obj)
        return obj

    def key_values(self, metadata: Optional[dict]) -> Optional[int]:
        """``_encode_key_values``."""
        if not metadata:
            return None
        items = []
        for k, v in metadata.items():
            key = self.string(str(k).encode("utf-8", "surrogateescape"))
            value = self.string(str(v).encode("utf-8", "surrogateescape"))
            self.start()
            self.offset(1, value)
            self.offset(0, key)
            items.append(self.end_table())
        return self.offsets(items)

    def finish(self, root: int) -> bytes:
        self.prep(self.minalign, 4)
        self.prep(4)
        self.o += 4
        _U32.pack_into(self.buf, self.end - self.o, self.o - root)
        return bytes(self.buf[self.end - self.o:])

    def message(self, header_type: int, header: int, body_length: int, metadata,
                version: int) -> bytes:
        """``finish_message``."""
        md = self.key_values(metadata)
        self.start()
        self.scalar(3, _I64, body_length)
        self.offset(4, md)
        self.offset(2, header)
        self.scalar(0, _I16, version)
        self.scalar(1, _U8, header_type)
        return self.finish(self.end_table())


def _metadata_room(metadata: Optional[dict]) -> int:
    """Bytes ``_Back.key_values`` may take for ``metadata`` (a bound: each string's length in
    UTF-8 is at most 4 bytes per character, plus padding, tables and vtable)."""
    if not metadata:
        return 0
    return sum(4 * (len(str(k)) + len(str(v))) + 48 for k, v in metadata.items()) + 32


#: Messages of one shape differ only in their payload bytes and the values of their scalars:
#: the shape (vector lengths, which scalars are zero and so left out, compression, version,
#: the schema for a footer) fixes every offset.  Each shape is built once with ``_Back`` and
#: kept as a template with where its payloads and scalars go; later messages of that shape are
#: the template with those patched in.  Keyed by shape (and ``id(schema)``: the entry holds
#: the schema, so the id is not reused while it is kept); a message with custom metadata is
#: built each time.
_TEMPLATES: dict = {}
_TEMPLATES_KEPT = 256
#: A message bigger than this is not kept as a template: a footer of a million batches or the
#: batch header of a million-field schema is built once a file, and 256 of them would hold
#: gigabytes.
_TEMPLATE_MAX_BYTES = 1 << 16


def _keep_template(key, entry) -> None:
    if sum(len(part) for part in entry if isinstance(part, bytes)) > _TEMPLATE_MAX_BYTES:
        return
    if len(_TEMPLATES) >= _TEMPLATES_KEPT:
        _TEMPLATES.clear()  # (a writer uses a few shapes: the ones in use come back at once)
    _TEMPLATES[key] = entry


def _at(size: int, o: Optional[int], skip: int = 0) -> Optional[int]:
    """Where, in a finished flatbuffer of ``size`` bytes, what ``_Back`` put at ``o`` (counted
    from the end) lies, ``skip`` bytes on (a vector's payload: 4, after its length); None for
    what was left out."""
    return None if o is None else size - o + skip


def _patched(template: bytes, payloads, scalars) -> bytes:
    out = bytearray(template)
    for at, data in payloads:
        if at is not None:
            out[at:at + len(data)] = data
    for at, value in scalars:
        if at is not None:
            _I64.pack_into(out, at, value)
    return bytes(out)


def encode_schema_message(schema: t.Schema, version: int = MetadataVersion.V5, features=()) -> bytes:
    """The Message flatbuffer of a Schema message (no framing); ``features``: Feature names."""
    features = tuple(features)
    key = ("schema", id(schema), features, version)
    hit = _TEMPLATES.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    tail, sch, minalign, vtables = _schema_tail(schema, features)
    out = _Back(64, tail, minalign, vtables).message(MessageHeader.Schema, sch, 0, None, version)
    _keep_template(key, (schema, out))
    return out


def _int64s(values) -> bytes:
    """Little-endian int64 bytes of a numpy array or a list of ints."""
    if isinstance(values, np.ndarray):
        return values.astype("<i8", copy=False).tobytes()
    return struct.pack(f"<{len(values)}q", *values)


def encode_batch_message(length: int, nodes: np.ndarray, buffers: np.ndarray, body_length: int,
                         compression: Optional[str] = None, variadic=None, metadata=None,
                         dictionary_id: Optional[int] = None, is_delta: bool = False,
                         version: int = MetadataVersion.V5) -> bytes:
    """The Message flatbuffer of a RecordBatch (or, with ``dictionary_id``, a DictionaryBatch).

    ``nodes`` and ``buffers`` are flat int64 arrays (or lists of ints): (length, null_count)
    and (offset, length) per record.
    """
    node_bytes = _int64s(nodes)
    buffer_bytes = _int64s(buffers)
    variadic_bytes = b""
    if variadic is not None and len(variadic):
        variadic_bytes = np.asarray(variadic, dtype="<i8").tobytes()
    if not metadata:
        template, (node_at, buffer_at, variadic_at, length_at, body_at, id_at) = _batch_template(
            len(node_bytes) // 16, len(buffer_bytes) // 16, len(variadic_bytes) // 8, compression,
            length != 0, body_length != 0,
            None if dictionary_id is None else (dictionary_id != 0, bool(is_delta)), version)
        return _patched(template, ((node_at, node_bytes), (buffer_at, buffer_bytes),
                                   (variadic_at, variadic_bytes)),
                        ((length_at, length), (body_at, body_length), (id_at, dictionary_id)))
    return _build_batch(length, node_bytes, buffer_bytes, variadic_bytes, body_length,
                        compression, metadata, dictionary_id, is_delta, version)[0]


def batch_message_template(nodes: int, buffers: int, has_length: bool, has_body: bool,
                           compression: Optional[str] = None,
                           version: int = MetadataVersion.V5) -> tuple:
    """(template, where its FieldNode vector's payload starts, where its Buffer vector's does,
    where its length is, where its bodyLength is) for a RecordBatch message of ``nodes``
    FieldNodes and ``buffers`` Buffers, without custom metadata: the bytes
    ``encode_batch_message`` gives once those numbers are written there (little-endian int64s;
    a length or bodyLength of zero is left out of the message, its place None).  For writers
    that fill it themselves (``ipc.write._flatten``)."""
    template, (node_at, buffer_at, _, length_at, body_at, _) = _batch_template(
        nodes, buffers, 0, compression, bool(has_length), bool(has_body), None, version)
    return template, node_at, buffer_at, length_at, body_at


def _batch_template(nodes: int, buffers: int, variadic: int, compression, has_length: bool,
                    has_body: bool, dictionary, version) -> tuple:
    """The template of a batch message of this shape (``dictionary``: None, or (whether the
    id is non-zero, is_delta)) and where its payloads and scalars go (see ``_TEMPLATES``)."""
    key = ("batch", nodes, buffers, variadic, compression, has_length, has_body, dictionary,
           version)
    hit = _TEMPLATES.get(key)
    if hit is not None:
        return hit
    # (built with zero payloads and scalars of 1 where they are not zero: patched in later)
    out, places = _build_batch(int(has_length), bytes(16 * nodes), bytes(16 * buffers),
                               bytes(8 * variadic), int(has_body), compression, None,
                               None if dictionary is None else int(dictionary[0]),
                               False if dictionary is None else dictionary[1], version)
    entry = (out, places)
    _keep_template(key, entry)
    return entry


def _build_batch(length, node_bytes, buffer_bytes, variadic_bytes, body_length, compression,
                 metadata, dictionary_id, is_delta, version) -> tuple:
    """(the message, where its payloads and scalars are: node, buffer and variadic vector
    payloads, length, bodyLength, dictionary id), built with ``_Back``."""
    w = _Back(512 + len(node_bytes) + len(buffer_bytes) + len(variadic_bytes)
              + _metadata_room(metadata))
    n_nodes, n_buffers = len(node_bytes) // 16, len(buffer_bytes) // 16
    node_vec = w.vector(node_bytes, n_nodes, 8 if n_nodes else 4)
    buffer_vec = w.vector(buffer_bytes, n_buffers, 8 if n_buffers else 4)
    variadic_vec = w.vector(variadic_bytes, len(variadic_bytes) // 8, 8) if variadic_bytes else None
    comp = None
    if compression is not None:
        w.start()
        w.scalar(1, _I8, 0)  # (Method: BUFFER, the default, left out)
        w.scalar(0, _I8, _CODEC_CODE[compression])
        comp = w.end_table()
    w.start()
    w.scalar(0, _I64, length)
    w.offset(4, variadic_vec)
    w.offset(3, comp)
    w.offset(2, buffer_vec)
    w.offset(1, node_vec)
    header = w.end_table()
    length_o = w.slots.get(0)
    header_type = MessageHeader.RecordBatch
    id_o = None
    if dictionary_id is not None:
        w.start()
        w.scalar(0, _I64, dictionary_id)
        w.offset(1, header)
        w.scalar(2, _U8, bool(is_delta))
        header = w.end_table()
        id_o = w.slots.get(0)
        header_type = MessageHeader.DictionaryBatch
    out = w.message(header_type, header, body_length, metadata, version)
    size = len(out)
    return out, (_at(size, node_vec, 4), _at(size, buffer_vec, 4), _at(size, variadic_vec, 4),
                 _at(size, length_o), _at(size, w.slots.get(3)), _at(size, id_o))  # (3:
    # BodyLength of the Message, the table ``message`` ended last)


def _block_bytes(blocks) -> bytes:
    if isinstance(blocks, bytes):
        if len(blocks) % BLOCK.itemsize:
            raise ArrowInvalid(f"footer blocks: {len(blocks)} bytes is not a whole number of "
                               f"{BLOCK.itemsize}-byte Blocks")
        return blocks
    return np.ascontiguousarray(blocks, BLOCK).tobytes()


def encode_footer(schema: t.Schema, dictionaries: np.ndarray, record_batches: np.ndarray,
                  metadata: Optional[dict] = None, version: int = MetadataVersion.V5,
                  features=()) -> bytes:
    """The File footer flatbuffer; ``dictionaries`` / ``record_batches`` are BLOCK arrays (or
    their bytes)."""
    features = tuple(features)
    dict_bytes = _block_bytes(dictionaries)
    batch_bytes = _block_bytes(record_batches)
    key = None
    if not metadata:
        key = ("footer", id(schema), features, version, len(dict_bytes), len(batch_bytes))
        hit = _TEMPLATES.get(key)
        if hit is not None and hit[0] is schema:
            _, template, dict_at, batch_at = hit
            return _patched(template, ((dict_at, dict_bytes), (batch_at, batch_bytes)), ())
    tail, sch, minalign, vtables = _schema_tail(schema, features)
    w = _Back(512 + len(dict_bytes) + len(batch_bytes) + _metadata_room(metadata), tail,
              minalign, vtables)
    dict_count, batch_count = len(dict_bytes) // BLOCK.itemsize, len(batch_bytes) // BLOCK.itemsize
    dict_vec = w.vector(dict_bytes, dict_count, 8 if dict_count else 4)
    batch_vec = w.vector(batch_bytes, batch_count, 8 if batch_count else 4)
    md = w.key_values(metadata)
    w.start()
    w.offset(4, md)
    w.offset(3, batch_vec)
    w.offset(2, dict_vec)
    w.offset(1, sch)
    w.scalar(0, _I16, version)
    out = w.finish(w.end_table())
    if key is not None:
        _keep_template(key, (schema, out, _at(len(out), dict_vec, 4), _at(len(out), batch_vec, 4)))
    return out


# == tensor and sparse tensor headers =======================================================
# Dense and sparse tensors are separate message types (not part of a stream or file of record
# batches); ``arrowmm.ipc.tensor`` (``dense`` and ``sparse``) reads and writes them.  Only the header
# is parsed here: every number is returned raw (and checked only for what the flatbuffer itself
# bounds); the tensor modules check them against the shape and the body.
