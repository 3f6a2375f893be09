"""Records -> FlatBuffers metadata (encoding): the schema, record batch, dictionary and footer
messages the writers send, built with the generated builders in ``arrowmm.format._fbs``."""
from __future__ import annotations

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
        key, value = b.CreateString(str(k)), b.CreateString(str(v))
        _KeyValue.Start(b)
        _KeyValue.AddValue(b, value)
        _KeyValue.AddKey(b, key)
        items.append(_KeyValue.End(b))
    b.StartVector(4, len(items), 4)
    for off in reversed(items):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _null_encode(b, dtype):
    return 1, _empty_table(b)


def _int_encode(b, dtype):
    _Int.Start(b)
    _Int.AddBitWidth(b, dtype.bit_width)
    _Int.AddIsSigned(b, dtype.signed)
    return 2, _Int.End(b)


def _float_encode(b, dtype):
    _FloatingPoint.Start(b)
    _FloatingPoint.AddPrecision(b, _FLOAT_CODE[dtype.bit_width])
    return 3, _FloatingPoint.End(b)


def _binary_encode(b, dtype):
    return {(False, False): 4, (True, False): 5, (False, True): 19,
            (True, True): 20}[(dtype.utf8, dtype.large)], _empty_table(b)


def _binary_view_encode(b, dtype):
    return 24 if dtype.utf8 else 23, _empty_table(b)


def _bool_encode(b, dtype):
    return 6, _empty_table(b)


def _decimal_encode(b, dtype):
    _Decimal.Start(b)
    _Decimal.AddBitWidth(b, dtype.bit_width)
    _Decimal.AddScale(b, dtype.scale)
    _Decimal.AddPrecision(b, dtype.precision)
    return 7, _Decimal.End(b)


def _date_encode(b, dtype):
    _Date.Start(b)
    _Date.AddUnit(b, 0 if dtype.unit == "day" else 1)
    return 8, _Date.End(b)


def _time_encode(b, dtype):
    _Time.Start(b)
    _Time.AddBitWidth(b, dtype.bit_width)
    _Time.AddUnit(b, _UNIT_CODE[dtype.unit])
    return 9, _Time.End(b)


def _timestamp_encode(b, dtype):
    tz = b.CreateString(dtype.tz) if dtype.tz else None
    _Timestamp.Start(b)
    if tz is not None:
        _Timestamp.AddTimezone(b, tz)
    _Timestamp.AddUnit(b, _UNIT_CODE[dtype.unit])
    return 10, _Timestamp.End(b)


def _interval_encode(b, dtype):
    _Interval.Start(b)
    _Interval.AddUnit(b, _INTERVAL_CODE[dtype.unit])
    return 11, _Interval.End(b)


def _map_encode(b, dtype):
    _Map.Start(b)
    _Map.AddKeysSorted(b, dtype.keys_sorted)
    return 17, _Map.End(b)


def _list_encode(b, dtype):
    return 21 if dtype.large else 12, _empty_table(b)


def _list_view_encode(b, dtype):
    return 26 if dtype.large else 25, _empty_table(b)


def _struct_encode(b, dtype):
    return 13, _empty_table(b)


def _union_encode(b, dtype):
    b.StartVector(4, len(dtype.type_codes), 4)
    for code in reversed(dtype.type_codes):
        b.PrependInt32(code)
    codes = b.EndVector()
    _Union.Start(b)
    _Union.AddTypeIds(b, codes)
    _Union.AddMode(b, 1 if dtype.mode == "dense" else 0)
    return 14, _Union.End(b)


def _fixed_size_binary_encode(b, dtype):
    _FixedSizeBinary.Start(b)
    _FixedSizeBinary.AddByteWidth(b, dtype.byte_width)
    return 15, _FixedSizeBinary.End(b)


def _fixed_size_list_encode(b, dtype):
    _FixedSizeList.Start(b)
    _FixedSizeList.AddListSize(b, dtype.list_size)
    return 16, _FixedSizeList.End(b)


def _duration_encode(b, dtype):
    _Duration.Start(b)
    _Duration.AddUnit(b, _UNIT_CODE[dtype.unit])
    return 18, _Duration.End(b)


def _run_end_encoded_encode(b, dtype):
    return 22, _empty_table(b)


#: the Type union member of each type class (a dictionary field is encoded as its value type
#: plus a DictionaryEncoding, by ``_encode_field``)
_TYPE_ENCODERS = {
    t.NullType: _null_encode, t.IntType: _int_encode, t.FloatType: _float_encode,
    t.BinaryType: _binary_encode, t.BinaryViewType: _binary_view_encode, t.BoolType: _bool_encode,
    t.DecimalType: _decimal_encode, t.DateType: _date_encode, t.TimeType: _time_encode,
    t.TimestampType: _timestamp_encode, t.IntervalType: _interval_encode, t.MapType: _map_encode,
    t.ListType: _list_encode, t.ListViewType: _list_view_encode, t.StructType: _struct_encode,
    t.UnionType: _union_encode, t.FixedSizeBinaryType: _fixed_size_binary_encode,
    t.FixedSizeListType: _fixed_size_list_encode, t.DurationType: _duration_encode,
    t.RunEndEncodedType: _run_end_encoded_encode,
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
        _Int.Start(b)
        _Int.AddBitWidth(b, dtype.index_type.bit_width)
        _Int.AddIsSigned(b, dtype.index_type.signed)
        index = _Int.End(b)
        _DictionaryEncoding.Start(b)
        _DictionaryEncoding.AddId(b, f.dictionary_id)
        _DictionaryEncoding.AddIndexType(b, index)
        _DictionaryEncoding.AddIsOrdered(b, dtype.ordered)
        encoding = _DictionaryEncoding.End(b)
    metadata = _encode_key_values(b, _cpp_metadata_order(f.storage_metadata))
    name = b.CreateString(f.name)
    b.StartVector(4, len(kids), 4)
    for off in reversed(kids):
        b.PrependUOffsetTRelative(off)
    children = b.EndVector()
    _Field.Start(b)
    if metadata is not None:
        _Field.AddCustomMetadata(b, metadata)
    _Field.AddChildren(b, children)
    if encoding is not None:
        _Field.AddDictionary(b, encoding)
    _Field.AddType(b, type_table)
    _Field.AddName(b, name)
    _Field.AddTypeType(b, type_code)
    _Field.AddNullable(b, f.nullable)
    return _Field.End(b)


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
    fields = [_encode_field(b, f) for f in schema.fields]
    b.StartVector(4, len(fields), 4)
    for off in reversed(fields):
        b.PrependUOffsetTRelative(off)
    vec = b.EndVector()
    metadata = _encode_key_values(b, schema.metadata)
    feature_vec = None
    if features:
        feature_vec = b.CreateNumpyVector(np.array([FEATURE_CODES[f] for f in features], dtype="<i8"))
    _Schema.Start(b)
    if feature_vec is not None:
        _Schema.AddFeatures(b, feature_vec)
    if metadata is not None:
        _Schema.AddCustomMetadata(b, metadata)
    _Schema.AddFields(b, vec)
    _Schema.AddEndianness(b, 1 if schema.endianness == "big" else 0)
    return _Schema.End(b)


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
        _BodyCompression.Start(b)
        _BodyCompression.AddMethod(b, 0)
        _BodyCompression.AddCodec(b, _CODEC_CODE[compression])
        comp = _BodyCompression.End(b)
    _RecordBatch.Start(b)
    _RecordBatch.AddLength(b, length)
    if variadic_vec is not None:
        _RecordBatch.AddVariadicBufferCounts(b, variadic_vec)
    if comp is not None:
        _RecordBatch.AddCompression(b, comp)
    _RecordBatch.AddBuffers(b, buffer_vec)
    _RecordBatch.AddNodes(b, node_vec)
    return _RecordBatch.End(b)


def finish_message(b, header_type: int, header: int, body_length: int, metadata, version) -> bytes:
    md = _encode_key_values(b, metadata)
    _Message.Start(b)
    _Message.AddBodyLength(b, body_length)
    if md is not None:
        _Message.AddCustomMetadata(b, md)
    _Message.AddHeader(b, header)
    _Message.AddVersion(b, version)
    _Message.AddHeaderType(b, header_type)
    b.Finish(_Message.End(b))
    return bytes(b.Output())


def encode_schema_message(schema: t.Schema, version: int = MetadataVersion.V5, features=()) -> bytes:
    """The Message flatbuffer of a Schema message (no framing); ``features``: Feature names."""
    b = flatbuffers.Builder(1024)
    return finish_message(b, MessageHeader.Schema, _encode_schema(b, schema, features), 0, None,
                           version)


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
    _DictionaryBatch.Start(b)
    _DictionaryBatch.AddId(b, dictionary_id)
    _DictionaryBatch.AddData(b, rb)
    _DictionaryBatch.AddIsDelta(b, is_delta)
    return finish_message(b, MessageHeader.DictionaryBatch, _DictionaryBatch.End(b), body_length,
                           metadata, version)


def encode_footer(schema: t.Schema, dictionaries: np.ndarray, record_batches: np.ndarray,
                  metadata: Optional[dict] = None, version: int = MetadataVersion.V5,
                  features=()) -> bytes:
    """The File footer flatbuffer; ``dictionaries`` / ``record_batches`` are BLOCK arrays."""
    b = flatbuffers.Builder(1024 + 24 * (len(dictionaries) + len(record_batches)))
    sch = _encode_schema(b, schema, features)
    dict_vec = _raw_vector(b, np.ascontiguousarray(dictionaries, BLOCK).tobytes(), 24, len(dictionaries))
    batch_vec = _raw_vector(b, np.ascontiguousarray(record_batches, BLOCK).tobytes(), 24,
                            len(record_batches))
    md = _encode_key_values(b, metadata)
    _Footer.Start(b)
    if md is not None:
        _Footer.AddCustomMetadata(b, md)
    _Footer.AddRecordBatches(b, batch_vec)
    _Footer.AddDictionaries(b, dict_vec)
    _Footer.AddSchema(b, sch)
    _Footer.AddVersion(b, version)
    b.Finish(_Footer.End(b))
    return bytes(b.Output())


# == tensor and sparse tensor headers =======================================================
# Dense and sparse tensors are separate message types (not part of a stream or file of record
# batches); ``arrowmm.ipc.tensor`` (``dense`` and ``sparse``) reads and writes them.  Only the header
# is parsed here: every number is returned raw (and checked only for what the flatbuffer itself
# bounds); the tensor modules check them against the shape and the body.
