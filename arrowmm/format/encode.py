"""Records -> FlatBuffers metadata (encoding): the schema, record batch, dictionary and footer
messages the writers send, built with the generated builders in ``arrowmm.format._fbs``."""
from __future__ import annotations

import copy
import threading
from typing import Optional

import flatbuffers
import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .decode import (BLOCK, COMPRESSION_NAMES, FEATURE_CODES, FLOAT_BITS, INTERVAL_UNITS,
                     TIME_UNITS, MessageHeader, MetadataVersion)

__all__ = ["encode_schema_message", "encode_batch_message", "encode_footer", "encode_type",
           "finish_message"]

from ._fbs import (  # (builder functions of the generated modules)
    BodyCompression as _BodyCompression, Date as _Date, Decimal as _Decimal,
    DictionaryBatch as _DictionaryBatch, DictionaryEncoding as _DictionaryEncoding,
    Duration as _Duration, Field as _Field, FixedSizeBinary as _FixedSizeBinary,
    FixedSizeList as _FixedSizeList, FloatingPoint as _FloatingPoint, Footer as _Footer,
    Int as _Int, Interval as _Interval, KeyValue as _KeyValue, Map as _Map, Message as _Message,
    RecordBatch as _RecordBatch, Schema as _Schema, Time as _Time, Timestamp as _Timestamp,
    Union as _Union,
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


def _builder_with_schema(size: int, schema: t.Schema, features) -> tuple:
    """(a new builder holding only ``schema``'s table, that table's offset): the same state,
    byte for byte, as ``_encode_schema`` into an empty builder leaves."""
    features = tuple(features)
    hit = _SCHEMA_TAILS.get(id(schema))
    if hit is not None and hit[0] is schema and hit[1] == features:
        _, _, tail, sch, minalign, vtables = hit
        b = flatbuffers.Builder(max(size, 2 * len(tail)))
        b.head = len(b.Bytes) - len(tail)
        b.Bytes[b.head:] = tail
        b.minalign = minalign
        b.vtables = copy.copy(vtables)
        return b, sch
    b = flatbuffers.Builder(size)
    sch = _encode_schema(b, schema, features)
    entry = (schema, features, bytes(b.Bytes[b.head:]), sch, b.minalign, copy.copy(b.vtables))
    with _SCHEMA_TAILS_LOCK:  # (writers in several threads)
        while len(_SCHEMA_TAILS) >= _SCHEMA_TAILS_KEPT:
            _SCHEMA_TAILS.pop(next(iter(_SCHEMA_TAILS)))
        _SCHEMA_TAILS[id(schema)] = entry
    return b, sch


def _raw_vector(b, payload: bytes, elem_size: int, count: int, alignment: int = 8) -> int:
    """A vector of ``count`` structs whose little-endian bytes are ``payload`` (one copy).

    An empty one is aligned as its length alone (4), as Arrow C++'s builder leaves it (its
    footer's empty ``dictionaries``): the same bytes as pyarrow's."""
    b.StartVector(elem_size, count, alignment if count else 4)
    b.head = b.head - len(payload)
    b.Bytes[b.head:b.head + len(payload)] = payload
    return b.EndVector()


def _encode_record_batch(b, length: int, nodes: np.ndarray, buffers: np.ndarray,
                         compression: Optional[str], variadic) -> int:
    node_vec = _raw_vector(b, nodes.astype("<i8").tobytes(), 16, len(nodes) // 2)
    buffer_vec = _raw_vector(b, buffers.astype("<i8").tobytes(), 16, len(buffers) // 2)
    variadic_vec = None
    if variadic is not None and len(variadic):
        variadic_vec = b.CreateNumpyVector(np.asarray(variadic, dtype="<i8"))
    comp = None
    if compression is not None:
        comp = _table(b, _BodyCompression, ("Method", 0), ("Codec", _CODEC_CODE[compression]))
    return _table(b, _RecordBatch, ("Length", length), ("VariadicBufferCounts", variadic_vec),
                  ("Compression", comp), ("Buffers", buffer_vec), ("Nodes", node_vec))


def finish_message(b, header_type: int, header: int, body_length: int, metadata, version) -> bytes:
    md = _encode_key_values(b, metadata)
    b.Finish(_table(b, _Message, ("BodyLength", body_length), ("CustomMetadata", md),
                    ("Header", header), ("Version", version), ("HeaderType", header_type)))
    return bytes(b.Output())


def encode_schema_message(schema: t.Schema, version: int = MetadataVersion.V5, features=()) -> bytes:
    """The Message flatbuffer of a Schema message (no framing); ``features``: Feature names."""
    b, sch = _builder_with_schema(1024, schema, features)
    return finish_message(b, MessageHeader.Schema, sch, 0, None, version)


def encode_batch_message(length: int, nodes: np.ndarray, buffers: np.ndarray, body_length: int,
                         compression: Optional[str] = None, variadic=None, metadata=None,
                         dictionary_id: Optional[int] = None, is_delta: bool = False,
                         version: int = MetadataVersion.V5) -> bytes:
    """The Message flatbuffer of a RecordBatch (or, with ``dictionary_id``, a DictionaryBatch).

    ``nodes`` and ``buffers`` are flat int64 arrays: (length, null_count) and
    (offset, length) per record.
    """
    b = flatbuffers.Builder(256 + 16 * (len(nodes) + len(buffers)))
    rb = _encode_record_batch(b, length, nodes, buffers, compression, variadic)
    if dictionary_id is None:
        return finish_message(b, MessageHeader.RecordBatch, rb, body_length, metadata, version)
    header = _table(b, _DictionaryBatch, ("Id", dictionary_id), ("Data", rb),
                    ("IsDelta", is_delta))
    return finish_message(b, MessageHeader.DictionaryBatch, header, body_length, metadata,
                          version)


def encode_footer(schema: t.Schema, dictionaries: np.ndarray, record_batches: np.ndarray,
                  metadata: Optional[dict] = None, version: int = MetadataVersion.V5,
                  features=()) -> bytes:
    """The File footer flatbuffer; ``dictionaries`` / ``record_batches`` are BLOCK arrays."""
    b, sch = _builder_with_schema(1024 + 24 * (len(dictionaries) + len(record_batches)), schema,
                                  features)
    dict_vec = _raw_vector(b, np.ascontiguousarray(dictionaries, BLOCK).tobytes(), 24, len(dictionaries))
    batch_vec = _raw_vector(b, np.ascontiguousarray(record_batches, BLOCK).tobytes(), 24,
                            len(record_batches))
    md = _encode_key_values(b, metadata)
    b.Finish(_table(b, _Footer, ("CustomMetadata", md), ("RecordBatches", batch_vec),
                    ("Dictionaries", dict_vec), ("Schema", sch), ("Version", version)))
    return bytes(b.Output())


# == tensor and sparse tensor headers =======================================================
# Dense and sparse tensors are separate message types (not part of a stream or file of record
# batches); ``arrowmm.ipc.tensor`` (``dense`` and ``sparse``) reads and writes them.  Only the header
# is parsed here: every number is returned raw (and checked only for what the flatbuffer itself
# bounds); the tensor modules check them against the shape and the body.
