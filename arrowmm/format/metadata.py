"""FlatBuffers metadata -> frozen records: schemas, messages, record batch headers, footers.

The only module that imports the generated code in ``arrowmm.format._fbs``.  Struct
vectors (FieldNode, Buffer, Block) become numpy structured views over the
message bytes instead of one Python object per element, so a footer with
200,000 blocks costs what a footer with ten does.

Everything here reads untrusted bytes.  The FlatBuffers runtime is memory-safe
but can raise anything on garbage, so every entry point turns failures into
``ArrowInvalid`` naming what was being parsed; vector lengths are checked
against the bytes really present before anything iterates over them.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

import flatbuffers
import numpy as np

from .. import limits
from .. import types as t
from ._fbs.Date import Date as FbDate
from ._fbs.Decimal import Decimal as FbDecimal
from ._fbs.DictionaryBatch import DictionaryBatch as FbDictionaryBatch
from ._fbs.Duration import Duration as FbDuration
from ._fbs.Field import Field as FbField
from ._fbs.FixedSizeBinary import FixedSizeBinary as FbFixedSizeBinary
from ._fbs.FixedSizeList import FixedSizeList as FbFixedSizeList
from ._fbs.FloatingPoint import FloatingPoint as FbFloatingPoint
from ._fbs.Footer import Footer as FbFooter
from ._fbs.Int import Int as FbInt
from ._fbs.Interval import Interval as FbInterval
from ._fbs.Map import Map as FbMap
from ._fbs.Message import Message as FbMessage
from ._fbs.RecordBatch import RecordBatch as FbRecordBatch
from ._fbs.Schema import Schema as FbSchema
from ._fbs.Time import Time as FbTime
from ._fbs.Timestamp import Timestamp as FbTimestamp
from ._fbs.Union import Union as FbUnion
from .._core._flatbuf import peek_batch_message, schema_fields, struct_pairs
from .fbfields import Field as FastField
from .fbfields import Int as FastInt
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = [
    "FIELD_NODE", "BUFFER", "BLOCK", "MessageHeader", "MetadataVersion", "FEATURES", "schema_features",
    "RecordBatchHeader", "DictionaryBatchHeader", "MessageRecord", "FooterRecord",
    "parse_message", "parse_footer", "schema_from_fb",
    "encode_schema_message", "encode_batch_message", "encode_footer",
]

#: FieldNode { length: long; null_count: long }
FIELD_NODE = np.dtype([("length", "<i8"), ("null_count", "<i8")])
#: Buffer { offset: long; length: long }
BUFFER = np.dtype([("offset", "<i8"), ("length", "<i8")])
#: Block { offset: long; metaDataLength: int; (pad 4) bodyLength: long }
BLOCK = np.dtype({"names": ["offset", "metadata_length", "body_length"],
                  "formats": ["<i8", "<i4", "<i8"], "offsets": [0, 8, 16], "itemsize": 24})

# Deeper schemas, more fields and more custom metadata than ``arrowmm.limits`` allows are refused.


class MessageHeader:
    NONE, Schema, DictionaryBatch, RecordBatch, Tensor, SparseTensor = range(6)
    NAMES = ("NONE", "Schema", "DictionaryBatch", "RecordBatch", "Tensor", "SparseTensor")


class MetadataVersion:
    V1, V2, V3, V4, V5 = range(5)

    @staticmethod
    def parse(value) -> int:
        """``"V4"`` / ``"V5"`` (any case) or ``MetadataVersion.V4`` / ``.V5`` -> the enum value."""
        if isinstance(value, str) and value.upper() in ("V4", "V5"):
            return MetadataVersion.V4 if value.upper() == "V4" else MetadataVersion.V5
        if type(value) is int and value in (MetadataVersion.V4, MetadataVersion.V5):
            return value
        raise ArrowInvalid(f"metadata_version must be 'V4' or 'V5', got {value!r}")


#: Schema.features: Feature enum value -> name (0, UNUSED, is skipped when read).
FEATURES = {1: "DICTIONARY_REPLACEMENT", 2: "COMPRESSED_BODY"}
_FEATURE_CODE = {v: k for k, v in FEATURES.items()}


_COMPRESSION = {0: "lz4", 1: "zstd"}
_TIME_UNIT = {0: "s", 1: "ms", 2: "us", 3: "ns"}
_INTERVAL_UNIT = {0: "YEAR_MONTH", 1: "DAY_TIME", 2: "MONTH_DAY_NANO"}
_FLOAT_BITS = {0: 16, 1: 32, 2: 64}


@dataclass(slots=True, eq=False)
class RecordBatchHeader:
    """One RecordBatch message header: row count and the struct vectors as numpy views.

    ``nodes`` and ``buffers`` are ``StructPairs`` read in place from the message
    (``get(i)`` -> (length, null_count) / (offset, length));
    ``node_records`` / ``buffer_records`` give them as structured numpy views.
    """

    length: int
    nodes: object  # StructPairs of (length, null_count)
    buffers: object  # StructPairs of (offset, length)
    compression: Optional[str]  # None, "lz4" or "zstd"
    variadic_counts: object  # int64, one per view-typed node, depth-first

    @property
    def node_records(self) -> np.ndarray:
        return self.nodes.to_numpy(FIELD_NODE)

    @property
    def buffer_records(self) -> np.ndarray:
        return self.buffers.to_numpy(BUFFER)


@dataclass(slots=True, eq=False)
class DictionaryBatchHeader:
    """One DictionaryBatch message header: the id, its record batch, and whether it adds."""

    id: int
    data: RecordBatchHeader
    is_delta: bool


@dataclass(slots=True, eq=False)
class MessageRecord:
    """A parsed message: what it is, how long its body is, and its custom metadata."""

    version: int
    header_type: int
    header: object  # Schema | RecordBatchHeader | DictionaryBatchHeader | raw table
    body_length: int
    metadata: Optional[dict]
    features: tuple = ()  # Schema.features of a schema message, as names

    @property
    def kind(self) -> str:
        return MessageHeader.NAMES[self.header_type]


@dataclass(frozen=True)
class FooterRecord:
    version: int
    schema: t.Schema
    dictionaries: np.ndarray  # BLOCK records
    record_batches: np.ndarray  # BLOCK records
    metadata: Optional[dict]
    features: tuple = ()  # Schema.features, as names


# -- low-level helpers ---------------------------------------------------------------------

def _struct_vector(tab: flatbuffers.table.Table, slot: int, dtype: np.dtype, what: str) -> np.ndarray:
    """A numpy view of the struct vector in vtable ``slot`` (0-based field index)."""
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return np.empty(0, dtype=dtype)
    start = tab.Vector(o)
    n = tab.VectorLen(o)
    buf = tab.Bytes
    if n < 0 or start < 0 or start > len(buf) or n > (len(buf) - start) // dtype.itemsize:
        raise ArrowInvalid(f"{what}: vector of {n} {dtype.itemsize}-byte records at byte {start} "
                           f"overruns the {len(buf)}-byte metadata")
    return np.frombuffer(buf, dtype=dtype, count=n, offset=start)


def _pairs_vector(tab: flatbuffers.table.Table, slot: int, what: str):
    """The FieldNode / Buffer vector in ``slot`` as a ``StructPairs`` (same as the fast path)."""
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return struct_pairs(tab.Bytes, 0, 0)
    try:
        return struct_pairs(tab.Bytes, tab.Vector(o), tab.VectorLen(o))
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"{what}: {exc}") from None


def _check_vector(n: int, tab, o: int, elem_size: int, what: str) -> int:
    buf = tab.Bytes
    start = tab.Vector(o)
    if n < 0 or start < 0 or start > len(buf) or n > (len(buf) - start) // elem_size:
        raise ArrowInvalid(f"{what}: vector of {n} elements at byte {start} overruns the "
                           f"{len(buf)}-byte metadata")
    return n


def _table_vector_len(obj, slot: int, what: str) -> int:
    tab = obj._tab
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return 0
    return _check_vector(tab.VectorLen(o), tab, o, 4, what)


def _key_values(obj, what: str) -> Optional[dict]:
    n = _table_vector_len(obj, _KV_SLOT[type(obj)], what)
    if not n:
        return None
    out = {}
    size, cap = 0, limits.max_custom_metadata_size
    for j in range(n):
        kv = obj.CustomMetadata(j)
        key = kv.Key()
        value = kv.Value()
        size += len(key or b"") + len(value or b"")
        if size > cap:
            raise limits.exceeded("max_custom_metadata_size", size, f"{what}: custom metadata bytes "
                                  f"(keys and values, through entry {j} of {n})")
        out[_decode(key, what)] = _decode(value, what) if value is not None else ""
    return out


def _decode(raw: Optional[bytes], what: str) -> str:
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArrowInvalid(f"{what}: string is not valid UTF-8 ({exc})") from None


_KV_SLOT = {FbSchema: 2, FbField: 6, FastField: 6, FbMessage: 4, FbFooter: 4}


def _guard(what: str):
    """Decorator turning any parse failure into ArrowInvalid naming ``what``."""
    def wrap(fn):
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (ArrowInvalid, ArrowNotImplementedError):
                raise
            except (IndexError, struct.error, RecursionError, UnicodeDecodeError, TypeError,
                    ValueError, OverflowError, AttributeError, MemoryError) as exc:
                raise ArrowInvalid(f"malformed {what} metadata: {type(exc).__name__}: {exc}") from None
        inner.__name__ = fn.__name__
        inner.__doc__ = fn.__doc__
        return inner
    return wrap


# -- schema ------------------------------------------------------------------------------

def schema_features(fb: FbSchema, what: str = "schema") -> tuple:
    """The Feature names a Schema table declares; an unknown feature is refused, as the format
    intends (a reader must not guess at what a feature it does not know changes)."""
    tab = fb._tab
    o = tab.Offset(4 + 2 * 3)
    n = _check_vector(tab.VectorLen(o), tab, o, 8, f"{what} features") if o else 0
    out = []
    for i in range(n):
        code = fb.Features(i)
        if code == 0:
            continue
        name = FEATURES.get(code)
        if name is None:
            raise ArrowNotImplementedError(f"{what}: uses feature {code}, unknown to arrowmm "
                                           f"(known: {', '.join(FEATURES.values())})")
        if name not in out:
            out.append(name)
    return tuple(out)


def schema_from_fb(fb: FbSchema) -> t.Schema:
    """Turn a FlatBuffers Schema table into a ``types.Schema``."""
    endianness = "big" if fb.Endianness() == 1 else "little"
    n = _table_vector_len(fb, 1, "schema fields")
    # Each field of an honest schema owns a 4-byte slot of a fields/children vector, so the bytes
    # bound the field count.  Tables shared between parents (legal flatbuffers) could otherwise
    # describe 2**depth fields in a few hundred bytes.  A vector's length is taken from the
    # budget before any of its fields is read, so an oversized vector costs nothing to refuse.
    # [fields left, nesting limit, field limit, size of the metadata in bytes, fields at start]
    size = len(fb._tab.Bytes)
    start_budget = min(size // 4, limits.max_fields)
    budget = [start_budget, limits.max_nesting, limits.max_fields, size, start_budget]
    _claim_fields(budget, n, "schema fields")
    tab = fb._tab
    start = tab.Vector(tab.Offset(6)) if n else 0

    def other(i):
        return _field_from_fb(FastField(tab.Bytes, tab.Indirect(start + 4 * i)),
                              f"schema field {i}", 0, budget)

    # plain leaf fields are read in C (_flatbuf), the others here
    fields = schema_fields(tab.Bytes, start, n, t.Field, _LEAF_TYPES, _leaf_type, other) if n else []
    return t.Schema(fields, _key_values(fb, "schema metadata"), endianness)


_LEAF_TYPES = {}  # schema_fields' types: immutable, so one instance serves every field


def _leaf_type(type_id: int, a: int, b: int) -> t.DataType:
    """The type of a plain leaf field read by ``schema_fields`` (as ``_type_from_fb`` makes it)."""
    if type_id == 2:
        return t.IntType(a, bool(b))
    if type_id == 3:
        return t.FloatType(_FLOAT_BITS[a])
    if type_id == 1:
        return t.NullType()
    if type_id == 6:
        return t.BoolType()
    return t.BinaryType(utf8=type_id in (5, 20, 24), large=type_id in (19, 20),
                        view=type_id in (23, 24))


def _claim_fields(budget: list, n: int, path: str) -> None:
    """Take the ``n`` fields of a fields or children vector from ``budget`` (see
    ``schema_from_fb``) before walking them: refused by arithmetic when they do not fit."""
    left = budget[0] - n
    if left < 0:
        total = budget[4] - budget[0] + n  # fields of the schema counted so far, these included
        if total > budget[2]:
            raise limits.exceeded("max_fields", total, f"{path}: fields in the schema")
        raise ArrowInvalid(f"{path}: the schema describes more fields than its {budget[3]}-byte "
                           f"metadata can hold ({total:,} so far, at most {budget[3] // 4:,}: "
                           f"field tables shared between parents?)")
    budget[0] = left


def _field_from_fb(fb: FbField, path: str, depth: int, budget: list) -> t.Field:
    if fb is None:
        raise ArrowInvalid(f"{path}: missing field table")
    if depth > budget[1]:
        raise limits.exceeded("max_nesting", depth, f"{path}: type nesting depth")
    name = _decode(fb.Name(), path)
    path = f"{path} ({name!r})" if depth == 0 else f"{path}.{name}"
    n_children = _table_vector_len(fb, 5, f"{path} children")
    if n_children:
        _claim_fields(budget, n_children, f"{path} children")
    children = [_field_from_fb(fb.Children(i), path, depth + 1, budget) for i in range(n_children)]
    dtype = _type_from_fb(fb, children, path)
    metadata = _key_values(fb, f"{path} metadata")
    dictionary_id = None
    enc = fb.Dictionary()
    if enc is not None:
        dictionary_id = enc.Id()
        index = enc.IndexType()
        if index is None:
            index_type = t.IntType(32, True)
        else:
            index_type = _int_type(index.BitWidth(), index.IsSigned(), f"{path} dictionary index")
        if enc.DictionaryKind() != 0:
            raise ArrowNotImplementedError(f"{path}: dictionary kind {enc.DictionaryKind()}")
        dtype = t.DictionaryType(index_type, dtype, enc.IsOrdered())
    return t.Field(name, dtype, fb.Nullable(), metadata, dictionary_id)


def _int_type(bit_width, signed, path):
    if bit_width not in (8, 16, 32, 64):
        raise ArrowInvalid(f"{path}: integer bitWidth must be 8, 16, 32 or 64, got {bit_width}")
    return t.IntType(bit_width, signed)


def _init(cls, table):
    obj = _FAST.get(cls, cls)()
    obj.Init(table.Bytes, table.Pos)
    return obj


_FAST = {FbInt: FastInt}  # (fbfields: the per-field tables, read without the generated overhead)


def _need_children(path, name, children, count):
    if len(children) != count:
        raise ArrowInvalid(f"{path}: {name} needs {count} child field(s), found {len(children)}")


def _unit(mapping, value, path, what):
    try:
        return mapping[value]
    except KeyError:
        raise ArrowInvalid(f"{path}: unknown {what} {value}") from None


def _type_from_fb(fb: FbField, children, path) -> t.DataType:
    type_id = fb.TypeType()
    table = fb.Type()
    if table is None and type_id not in (1, 4, 5, 6, 13, 19, 20, 21, 23, 24, 25, 26, 12):
        raise ArrowInvalid(f"{path}: type {type_id} has no type table")
    if type_id == 1:
        return t.NullType()
    if type_id == 2:
        obj = _init(FbInt, table)
        return _int_type(obj.BitWidth(), obj.IsSigned(), path)
    if type_id == 3:
        return t.FloatType(_unit(_FLOAT_BITS, _init(FbFloatingPoint, table).Precision(), path, "float precision"))
    if type_id in (4, 5, 19, 20, 23, 24):
        return t.BinaryType(utf8=type_id in (5, 20, 24), large=type_id in (19, 20), view=type_id in (23, 24))
    if type_id == 6:
        return t.BoolType()
    if type_id == 7:
        obj = _init(FbDecimal, table)
        try:
            return t.DecimalType(obj.Precision(), obj.Scale(), obj.BitWidth())
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 8:
        return t.DateType("day" if _init(FbDate, table).Unit() == 0 else "ms")
    if type_id == 9:
        obj = _init(FbTime, table)
        try:
            return t.TimeType(_unit(_TIME_UNIT, obj.Unit(), path, "time unit"), obj.BitWidth())
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 10:
        obj = _init(FbTimestamp, table)
        tz = obj.Timezone()
        return t.TimestampType(_unit(_TIME_UNIT, obj.Unit(), path, "time unit"),
                               _decode(tz, path) if tz else None)
    if type_id == 11:
        return t.IntervalType(_unit(_INTERVAL_UNIT, _init(FbInterval, table).Unit(), path, "interval unit"))
    if type_id in (12, 21, 25, 26):
        _need_children(path, "a list", children, 1)
        kind = {12: "list", 21: "large_list", 25: "list_view", 26: "large_list_view"}[type_id]
        return t.ListType(children[0], kind)
    if type_id == 13:
        return t.StructType(children)
    if type_id == 14:
        obj = _init(FbUnion, table)
        n = _table_vector_len(obj, 1, f"{path} union typeIds")
        codes = [obj.TypeIds(i) for i in range(n)] if n else None
        try:
            return t.UnionType("dense" if obj.Mode() == 1 else "sparse", children, codes)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 15:
        width = _init(FbFixedSizeBinary, table).ByteWidth()
        if width < 0:
            raise ArrowInvalid(f"{path}: fixed_size_binary byteWidth {width} < 0")
        return t.FixedSizeBinaryType(width)
    if type_id == 16:
        _need_children(path, "a fixed_size_list", children, 1)
        size = _init(FbFixedSizeList, table).ListSize()
        if size < 0:
            raise ArrowInvalid(f"{path}: fixed_size_list listSize {size} < 0")
        return t.FixedSizeListType(children[0], size)
    if type_id == 17:
        _need_children(path, "a map", children, 1)
        try:
            return t.MapType(None, None, _init(FbMap, table).KeysSorted(), entries=children[0])
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 18:
        return t.DurationType(_unit(_TIME_UNIT, _init(FbDuration, table).Unit(), path, "time unit"))
    if type_id == 22:
        _need_children(path, "a run_end_encoded", children, 2)
        try:
            return t.RunEndEncodedType(children[0], children[1])
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    raise ArrowNotImplementedError(f"{path}: unknown type id {type_id}")


# -- messages ------------------------------------------------------------------------------

def _record_batch_from_fb(rb: FbRecordBatch, what: str) -> RecordBatchHeader:
    tab = rb._tab
    length = rb.Length()
    if length < 0:
        raise ArrowInvalid(f"{what}: negative record batch length {length}")
    nodes = _pairs_vector(tab, 1, f"{what} nodes")
    buffers = _pairs_vector(tab, 2, f"{what} buffers")
    compression = None
    comp = rb.Compression()
    if comp is not None:
        codec = comp.Codec()
        if codec not in _COMPRESSION:
            raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec}")
        if comp.Method() != 0:
            raise ArrowNotImplementedError(f"{what}: body compression method {comp.Method()}")
        compression = _COMPRESSION[codec]
    o = tab.Offset(12)
    if o:
        n = _check_vector(tab.VectorLen(o), tab, o, 8, f"{what} variadicBufferCounts")
        variadic = np.frombuffer(tab.Bytes, dtype="<i8", count=n, offset=tab.Vector(o))
    else:
        variadic = _NO_COUNTS
    return RecordBatchHeader(length, nodes, buffers, compression, variadic)


_NO_COUNTS = np.empty(0, dtype="<i8")


def _check_version(version: int, what: str) -> None:
    if not 0 <= version <= MetadataVersion.V5:
        raise ArrowNotImplementedError(f"{what}: unknown metadata version {version}")
    if version < MetadataVersion.V4:
        raise ArrowNotImplementedError(
            f"{what}: metadata version V{version + 1} is older than V4 (Arrow < 0.8), not supported")


def parse_message(buf, offset: int = 0, what: str = "message") -> MessageRecord:
    """Parse the Message flatbuffer whose root offset sits at ``buf[offset]``.

    Record batch and dictionary batch headers (the hot path of ``get_batch``)
    are read by the Cython reader in ``_flatbuf``; everything else, and any
    message with custom metadata, by the generated code.
    """
    if offset == 0:
        fast = peek_batch_message(buf)
        if isinstance(fast, str):
            raise ArrowInvalid(f"{what}: malformed message metadata: {fast}")
        if fast is not None:
            version, header_type, body_length, has_metadata, dict_id, is_delta, rb = fast
            _check_version(version, what)
            if body_length < 0:
                raise ArrowInvalid(f"{what}: negative bodyLength {body_length}")
            length, nodes, buffers, codec, method, variadic = rb
            if length < 0:
                raise ArrowInvalid(f"{what}: negative record batch length {length}")
            compression = None
            if codec >= 0:
                if codec not in _COMPRESSION:
                    raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec}")
                if method != 0:
                    raise ArrowNotImplementedError(f"{what}: body compression method {method}")
                compression = _COMPRESSION[codec]
            header = RecordBatchHeader(length, nodes, buffers, compression, variadic)
            if header_type == MessageHeader.DictionaryBatch:
                header = DictionaryBatchHeader(dict_id, header, is_delta)
            metadata = _message_metadata(buf, what) if has_metadata else None
            return MessageRecord(version, header_type, header, body_length, metadata)
    return _parse_message_slow(buf, offset, what)


@_guard("message")
def _message_metadata(buf, what: str) -> Optional[dict]:
    return _key_values(FbMessage.GetRootAs(buf, 0), f"{what} metadata")


@_guard("message")
def _parse_message_slow(buf, offset: int, what: str) -> MessageRecord:
    msg = FbMessage.GetRootAs(buf, offset)
    version = msg.Version()
    _check_version(version, what)
    header_type = msg.HeaderType()
    table = msg.Header()
    body_length = msg.BodyLength()
    if body_length < 0:
        raise ArrowInvalid(f"{what}: negative bodyLength {body_length}")
    if table is None and header_type != MessageHeader.NONE:
        raise ArrowInvalid(f"{what}: header of type {header_type} is missing")
    if header_type == MessageHeader.RecordBatch:
        header = _record_batch_from_fb(_init(FbRecordBatch, table), what)
    elif header_type == MessageHeader.DictionaryBatch:
        db = _init(FbDictionaryBatch, table)
        data = db.Data()
        if data is None:
            raise ArrowInvalid(f"{what}: dictionary batch without data")
        header = DictionaryBatchHeader(db.Id(), _record_batch_from_fb(data, what), db.IsDelta())
    elif header_type == MessageHeader.Schema:
        fb_schema = _init(FbSchema, table)
        header = schema_from_fb(fb_schema)
        return MessageRecord(version, header_type, header, body_length,
                             _key_values(msg, f"{what} metadata"), schema_features(fb_schema, what))
    elif header_type in (MessageHeader.Tensor, MessageHeader.SparseTensor):
        header = table
    else:
        raise ArrowInvalid(f"{what}: unknown message header type {header_type}")
    return MessageRecord(version, header_type, header, body_length, _key_values(msg, f"{what} metadata"))


@_guard("file footer")
def parse_footer(buf) -> FooterRecord:
    """Parse a File footer flatbuffer (the bytes between the last block and the trailer)."""
    footer = FbFooter.GetRootAs(buf, 0)
    version = footer.Version()
    fb_schema = footer.Schema()
    if fb_schema is None:
        raise ArrowInvalid("file footer has no schema")
    tab = footer._tab
    return FooterRecord(
        version,
        schema_from_fb(fb_schema),
        _struct_vector(tab, 2, BLOCK, "footer dictionary blocks"),
        _struct_vector(tab, 3, BLOCK, "footer record batch blocks"),
        _key_values(footer, "footer metadata"),
        schema_features(fb_schema, "footer schema"),
    )


# == encoding: records -> FlatBuffers (the writer's side) ===================================

from ._fbs import (  # noqa: E402  (builder functions of the generated modules)
    BodyCompression as _BodyCompression, Date as _Date, Decimal as _Decimal,
    DictionaryBatch as _DictionaryBatch, DictionaryEncoding as _DictionaryEncoding,
    Duration as _Duration, Field as _Field, FixedSizeBinary as _FixedSizeBinary,
    FixedSizeList as _FixedSizeList, FloatingPoint as _FloatingPoint, Footer as _Footer,
    Int as _Int, Interval as _Interval, KeyValue as _KeyValue, Map as _Map, Message as _Message,
    RecordBatch as _RecordBatch, Schema as _Schema, Time as _Time, Timestamp as _Timestamp,
    Union as _Union,
)

_UNIT_CODE = {v: k for k, v in _TIME_UNIT.items()}
_INTERVAL_CODE = {v: k for k, v in _INTERVAL_UNIT.items()}
_FLOAT_CODE = {v: k for k, v in _FLOAT_BITS.items()}
_CODEC_CODE = {v: k for k, v in _COMPRESSION.items()}


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
        _KeyValue.AddKey(b, key)
        _KeyValue.AddValue(b, value)
        items.append(_KeyValue.End(b))
    b.StartVector(4, len(items), 4)
    for off in reversed(items):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _encode_type(b, dtype: t.DataType):
    """(Type union code, table offset) for ``dtype`` (dictionary fields pass their value type)."""
    if isinstance(dtype, t.NullType):
        return 1, _empty_table(b)
    if isinstance(dtype, t.IntType):
        _Int.Start(b)
        _Int.AddBitWidth(b, dtype.bit_width)
        _Int.AddIsSigned(b, dtype.signed)
        return 2, _Int.End(b)
    if isinstance(dtype, t.FloatType):
        _FloatingPoint.Start(b)
        _FloatingPoint.AddPrecision(b, _FLOAT_CODE[dtype.bit_width])
        return 3, _FloatingPoint.End(b)
    if isinstance(dtype, t.BinaryType):
        code = {(False, False, False): 4, (True, False, False): 5, (False, True, False): 19,
                (True, True, False): 20, (False, False, True): 23, (True, False, True): 24}
        return code[(dtype.utf8, dtype.large, dtype.view)], _empty_table(b)
    if isinstance(dtype, t.BoolType):
        return 6, _empty_table(b)
    if isinstance(dtype, t.DecimalType):
        _Decimal.Start(b)
        _Decimal.AddPrecision(b, dtype.precision)
        _Decimal.AddScale(b, dtype.scale)
        _Decimal.AddBitWidth(b, dtype.bit_width)
        return 7, _Decimal.End(b)
    if isinstance(dtype, t.DateType):
        _Date.Start(b)
        _Date.AddUnit(b, 0 if dtype.unit == "day" else 1)
        return 8, _Date.End(b)
    if isinstance(dtype, t.TimeType):
        _Time.Start(b)
        _Time.AddUnit(b, _UNIT_CODE[dtype.unit])
        _Time.AddBitWidth(b, dtype.bit_width)
        return 9, _Time.End(b)
    if isinstance(dtype, t.TimestampType):
        tz = b.CreateString(dtype.tz) if dtype.tz else None
        _Timestamp.Start(b)
        _Timestamp.AddUnit(b, _UNIT_CODE[dtype.unit])
        if tz is not None:
            _Timestamp.AddTimezone(b, tz)
        return 10, _Timestamp.End(b)
    if isinstance(dtype, t.IntervalType):
        _Interval.Start(b)
        _Interval.AddUnit(b, _INTERVAL_CODE[dtype.unit])
        return 11, _Interval.End(b)
    if isinstance(dtype, t.MapType):
        _Map.Start(b)
        _Map.AddKeysSorted(b, dtype.keys_sorted)
        return 17, _Map.End(b)
    if isinstance(dtype, t.ListType):
        return {"list": 12, "large_list": 21, "list_view": 25, "large_list_view": 26}[dtype.kind], \
            _empty_table(b)
    if isinstance(dtype, t.StructType):
        return 13, _empty_table(b)
    if isinstance(dtype, t.UnionType):
        b.StartVector(4, len(dtype.type_codes), 4)
        for code in reversed(dtype.type_codes):
            b.PrependInt32(code)
        codes = b.EndVector()
        _Union.Start(b)
        _Union.AddMode(b, 1 if dtype.mode == "dense" else 0)
        _Union.AddTypeIds(b, codes)
        return 14, _Union.End(b)
    if isinstance(dtype, t.FixedSizeBinaryType):
        _FixedSizeBinary.Start(b)
        _FixedSizeBinary.AddByteWidth(b, dtype.byte_width)
        return 15, _FixedSizeBinary.End(b)
    if isinstance(dtype, t.FixedSizeListType):
        _FixedSizeList.Start(b)
        _FixedSizeList.AddListSize(b, dtype.list_size)
        return 16, _FixedSizeList.End(b)
    if isinstance(dtype, t.DurationType):
        _Duration.Start(b)
        _Duration.AddUnit(b, _UNIT_CODE[dtype.unit])
        return 18, _Duration.End(b)
    if isinstance(dtype, t.RunEndEncodedType):
        return 22, _empty_table(b)
    raise ArrowNotImplementedError(f"cannot encode type {dtype}")


def _encode_field(b, f: t.Field) -> int:
    dtype = f.type
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
        dtype = dtype.value_type
    name = b.CreateString(f.name)
    kids = [_encode_field(b, c) for c in dtype.children]
    b.StartVector(4, len(kids), 4)
    for off in reversed(kids):
        b.PrependUOffsetTRelative(off)
    children = b.EndVector()
    type_code, type_table = _encode_type(b, dtype)
    metadata = _encode_key_values(b, f.metadata)
    _Field.Start(b)
    _Field.AddName(b, name)
    _Field.AddNullable(b, f.nullable)
    _Field.AddTypeType(b, type_code)
    _Field.AddType(b, type_table)
    if encoding is not None:
        _Field.AddDictionary(b, encoding)
    _Field.AddChildren(b, children)
    if metadata is not None:
        _Field.AddCustomMetadata(b, metadata)
    return _Field.End(b)


def _encode_schema(b, schema: t.Schema, features=()) -> int:
    fields = [_encode_field(b, f) for f in schema.fields]
    b.StartVector(4, len(fields), 4)
    for off in reversed(fields):
        b.PrependUOffsetTRelative(off)
    vec = b.EndVector()
    metadata = _encode_key_values(b, schema.metadata)
    feature_vec = None
    if features:
        feature_vec = b.CreateNumpyVector(np.array([_FEATURE_CODE[f] for f in features], dtype="<i8"))
    _Schema.Start(b)
    _Schema.AddEndianness(b, 1 if schema.endianness == "big" else 0)
    _Schema.AddFields(b, vec)
    if metadata is not None:
        _Schema.AddCustomMetadata(b, metadata)
    if feature_vec is not None:
        _Schema.AddFeatures(b, feature_vec)
    return _Schema.End(b)


def _raw_vector(b, payload: bytes, elem_size: int, count: int, alignment: int = 8) -> int:
    """A vector of ``count`` structs whose little-endian bytes are ``payload`` (one copy)."""
    b.StartVector(elem_size, count, alignment)
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
        _BodyCompression.AddCodec(b, _CODEC_CODE[compression])
        _BodyCompression.AddMethod(b, 0)
        comp = _BodyCompression.End(b)
    _RecordBatch.Start(b)
    _RecordBatch.AddLength(b, length)
    _RecordBatch.AddNodes(b, node_vec)
    _RecordBatch.AddBuffers(b, buffer_vec)
    if comp is not None:
        _RecordBatch.AddCompression(b, comp)
    if variadic_vec is not None:
        _RecordBatch.AddVariadicBufferCounts(b, variadic_vec)
    return _RecordBatch.End(b)


def _finish_message(b, header_type: int, header: int, body_length: int, metadata, version) -> bytes:
    md = _encode_key_values(b, metadata)
    _Message.Start(b)
    _Message.AddVersion(b, version)
    _Message.AddHeaderType(b, header_type)
    _Message.AddHeader(b, header)
    _Message.AddBodyLength(b, body_length)
    if md is not None:
        _Message.AddCustomMetadata(b, md)
    b.Finish(_Message.End(b))
    return bytes(b.Output())


def encode_schema_message(schema: t.Schema, version: int = MetadataVersion.V5, features=()) -> bytes:
    """The Message flatbuffer of a Schema message (no framing); ``features``: Feature names."""
    b = flatbuffers.Builder(1024)
    return _finish_message(b, MessageHeader.Schema, _encode_schema(b, schema, features), 0, None,
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
        return _finish_message(b, MessageHeader.RecordBatch, rb, body_length, metadata, version)
    _DictionaryBatch.Start(b)
    _DictionaryBatch.AddId(b, dictionary_id)
    _DictionaryBatch.AddData(b, rb)
    _DictionaryBatch.AddIsDelta(b, is_delta)
    return _finish_message(b, MessageHeader.DictionaryBatch, _DictionaryBatch.End(b), body_length,
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
    _Footer.AddVersion(b, version)
    _Footer.AddSchema(b, sch)
    _Footer.AddDictionaries(b, dict_vec)
    _Footer.AddRecordBatches(b, batch_vec)
    if md is not None:
        _Footer.AddCustomMetadata(b, md)
    b.Finish(_Footer.End(b))
    return bytes(b.Output())


# == tensor and sparse tensor headers =======================================================
# Dense and sparse tensors are separate message types (not part of a stream or file of record
# batches); ``arrowmm.ipc.tensor`` / ``arrowmm.ipc.sparse_tensor`` read and write them.  Only the header
# is parsed here: every number is returned raw (and checked only for what the flatbuffer itself
# bounds); the tensor modules check them against the shape and the body.

from ._fbs.SparseMatrixIndexCSX import SparseMatrixIndexCSX as FbSparseMatrixIndexCSX  # noqa: E402
from ._fbs.SparseTensor import SparseTensor as FbSparseTensor  # noqa: E402
from ._fbs.SparseTensorIndexCOO import SparseTensorIndexCOO as FbSparseTensorIndexCOO  # noqa: E402
from ._fbs.SparseTensorIndexCSF import SparseTensorIndexCSF as FbSparseTensorIndexCSF  # noqa: E402
from ._fbs.Tensor import Tensor as FbTensor  # noqa: E402
from ._fbs import (  # noqa: E402
    SparseMatrixIndexCSX as _SparseMatrixIndexCSX, SparseTensor as _SparseTensor,
    SparseTensorIndexCOO as _SparseTensorIndexCOO, SparseTensorIndexCSF as _SparseTensorIndexCSF,
    Tensor as _Tensor, TensorDim as _TensorDim,
)

#: Type union codes a tensor value may have (fixed-width numbers); others are not supported.
_TENSOR_TYPE_INT, _TENSOR_TYPE_FLOAT = 2, 3
#: The SparseTensorIndex union.
SPARSE_INDEX_COO, SPARSE_INDEX_CSX, SPARSE_INDEX_CSF = 1, 2, 3
#: Most axes of a tensor: numpy's own limit (NPY_MAXDIMS), so every readable tensor is viewable.
MAX_TENSOR_NDIM = 64


@dataclass(slots=True, eq=False)
class TensorHeader:
    """A Tensor message header: value type, shape, names, strides (None: row-major), data."""

    type: t.DataType
    shape: tuple  # of int (raw, may be negative)
    dim_names: tuple  # of str ("" = unnamed)
    strides: Optional[tuple]  # of int, or None
    data: tuple  # (offset, length) into the body


@dataclass(slots=True, eq=False)
class SparseTensorHeader:
    """A SparseTensor message header; ``index`` holds the raw fields of its sparse index.

    ``index_kind`` is "COO", "CSR", "CSC" or "CSF". ``index`` keys, by kind:
    COO: indices_type, indices_strides (tuple or None), indices (offset, length), canonical;
    CSR/CSC: indptr_type, indptr, indices_type, indices;
    CSF: indptr_type, indptr (tuple of pairs), indices_type, indices (tuple of pairs), axis_order.
    """

    type: t.DataType
    shape: tuple
    dim_names: tuple
    non_zero_length: int
    index_kind: str
    index: dict
    data: tuple


def _tensor_value_type(type_id: int, table, what: str) -> t.DataType:
    if table is None or type_id == 0:
        raise ArrowInvalid(f"{what}: tensor value type is missing (type union {type_id})")
    if type_id == _TENSOR_TYPE_INT:
        obj = _init(FbInt, table)
        return _int_type(obj.BitWidth(), obj.IsSigned(), what)
    if type_id == _TENSOR_TYPE_FLOAT:
        return t.FloatType(_unit(_FLOAT_BITS, _init(FbFloatingPoint, table).Precision(), what,
                                 "float precision"))
    raise ArrowNotImplementedError(f"{what}: tensor value type union code {type_id} is not supported "
                                   f"(only integers and floating point numbers)")


def _index_int_type(obj, what: str) -> t.IntType:
    if obj is None:
        raise ArrowInvalid(f"{what} is missing")
    return _int_type(obj.BitWidth(), obj.IsSigned(), what)


def _dims(fb, what: str):
    tab = fb._tab
    o = tab.Offset(8)  # shape: field 2
    if not o:
        raise ArrowInvalid(f"{what}: tensor shape is missing")
    n = _check_vector(tab.VectorLen(o), tab, o, 4, f"{what} shape")
    if n > MAX_TENSOR_NDIM:
        raise ArrowInvalid(f"{what}: tensor has {n} dimensions, more than the {MAX_TENSOR_NDIM} "
                           f"numpy can view")
    sizes, names = [], []
    for i in range(n):
        dim = fb.Shape(i)
        if dim is None:
            raise ArrowInvalid(f"{what}: shape dimension {i} is missing")
        sizes.append(dim.Size())
        names.append(_decode(dim.Name(), f"{what} dimension {i} name"))
    return tuple(sizes), tuple(names)


def _int64_vector(tab, slot: int, what: str):
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return None
    n = _check_vector(tab.VectorLen(o), tab, o, 8, what)
    return tuple(int(v) for v in np.frombuffer(tab.Bytes, dtype="<i8", count=n, offset=tab.Vector(o)))


def _buffer_pair(buf, what: str):
    if buf is None:
        raise ArrowInvalid(f"{what} is missing")
    return (buf.Offset(), buf.Length())


def _buffer_pairs(tab, slot: int, what: str):
    o = tab.Offset(4 + 2 * slot)
    if not o:
        raise ArrowInvalid(f"{what} is missing")
    n = _check_vector(tab.VectorLen(o), tab, o, 16, what)
    if n > MAX_TENSOR_NDIM:
        raise ArrowInvalid(f"{what}: {n} buffers, more than a {MAX_TENSOR_NDIM}-dimensional tensor has")
    flat = np.frombuffer(tab.Bytes, dtype="<i8", count=2 * n, offset=tab.Vector(o))
    return tuple((int(flat[2 * i]), int(flat[2 * i + 1])) for i in range(n))


@_guard("tensor")
def parse_tensor_header(table, what: str = "tensor") -> TensorHeader:
    """The Tensor header table of a message (``MessageRecord.header``) as a ``TensorHeader``."""
    if table is None:
        raise ArrowInvalid(f"{what}: Tensor header is missing")
    fb = _init(FbTensor, table)
    value_type = _tensor_value_type(fb.TypeType(), fb.Type(), what)
    shape, names = _dims(fb, what)
    strides = _int64_vector(fb._tab, 3, f"{what} strides")
    return TensorHeader(value_type, shape, names, strides, _buffer_pair(fb.Data(), f"{what}: data buffer"))


@_guard("sparse tensor")
def parse_sparse_tensor_header(table, what: str = "sparse tensor") -> SparseTensorHeader:
    """The SparseTensor header table of a message as a ``SparseTensorHeader``."""
    if table is None:
        raise ArrowInvalid(f"{what}: SparseTensor header is missing")
    fb = _init(FbSparseTensor, table)
    value_type = _tensor_value_type(fb.TypeType(), fb.Type(), what)
    shape, names = _dims(fb, what)
    kind_code = fb.SparseIndexType()
    index_table = fb.SparseIndex()
    if index_table is None:
        raise ArrowInvalid(f"{what}: sparse index is missing (union code {kind_code})")
    if kind_code == SPARSE_INDEX_COO:
        coo = _init(FbSparseTensorIndexCOO, index_table)
        kind = "COO"
        index = {"indices_type": _index_int_type(coo.IndicesType(), f"{what}: COO indicesType"),
                 "indices_strides": _int64_vector(coo._tab, 1, f"{what} COO indicesStrides"),
                 "indices": _buffer_pair(coo.IndicesBuffer(), f"{what}: COO indicesBuffer"),
                 "canonical": bool(coo.IsCanonical())}
    elif kind_code == SPARSE_INDEX_CSX:
        csx = _init(FbSparseMatrixIndexCSX, index_table)
        axis = csx.CompressedAxis()
        if axis not in (0, 1):
            raise ArrowInvalid(f"{what}: unknown SparseMatrixCompressedAxis {axis}")
        kind = "CSR" if axis == 0 else "CSC"
        index = {"indptr_type": _index_int_type(csx.IndptrType(), f"{what}: {kind} indptrType"),
                 "indptr": _buffer_pair(csx.IndptrBuffer(), f"{what}: {kind} indptrBuffer"),
                 "indices_type": _index_int_type(csx.IndicesType(), f"{what}: {kind} indicesType"),
                 "indices": _buffer_pair(csx.IndicesBuffer(), f"{what}: {kind} indicesBuffer")}
    elif kind_code == SPARSE_INDEX_CSF:
        csf = _init(FbSparseTensorIndexCSF, index_table)
        kind = "CSF"
        tab = csf._tab
        o = tab.Offset(12)
        if not o:
            raise ArrowInvalid(f"{what}: CSF axisOrder is missing")
        n = _check_vector(tab.VectorLen(o), tab, o, 4, f"{what} CSF axisOrder")
        if n > MAX_TENSOR_NDIM:
            raise ArrowInvalid(f"{what}: CSF axisOrder has {n} entries, more than {MAX_TENSOR_NDIM}")
        axis_order = tuple(int(v) for v in np.frombuffer(tab.Bytes, dtype="<i4", count=n,
                                                         offset=tab.Vector(o)))
        index = {"indptr_type": _index_int_type(csf.IndptrType(), f"{what}: CSF indptrType"),
                 "indptr": _buffer_pairs(tab, 1, f"{what}: CSF indptrBuffers"),
                 "indices_type": _index_int_type(csf.IndicesType(), f"{what}: CSF indicesType"),
                 "indices": _buffer_pairs(tab, 3, f"{what}: CSF indicesBuffers"),
                 "axis_order": axis_order}
    else:
        raise ArrowInvalid(f"{what}: unknown sparse index type {kind_code}")
    return SparseTensorHeader(value_type, shape, names, fb.NonZeroLength(), kind, index,
                              _buffer_pair(fb.Data(), f"{what}: data buffer"))


def _encode_dims(b, shape, dim_names, start_vector):
    dims = []
    for i, size in enumerate(shape):
        name = b.CreateString(dim_names[i] if i < len(dim_names) else "")
        _TensorDim.Start(b)
        _TensorDim.AddSize(b, size)
        _TensorDim.AddName(b, name)
        dims.append(_TensorDim.End(b))
    start_vector(b, len(dims))
    for off in reversed(dims):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _encode_int(b, dtype: t.IntType) -> int:
    _Int.Start(b)
    _Int.AddBitWidth(b, dtype.bit_width)
    _Int.AddIsSigned(b, dtype.signed)
    return _Int.End(b)


def encode_tensor_message(value_type: t.DataType, shape, dim_names, strides, data_length: int,
                          version: int = MetadataVersion.V5) -> bytes:
    """The Message flatbuffer of a Tensor (data at body offset 0, ``data_length`` bytes)."""
    b = flatbuffers.Builder(256)
    type_code, type_table = _encode_type(b, value_type)
    shape_vec = _encode_dims(b, shape, dim_names, _Tensor.StartShapeVector)
    strides_vec = b.CreateNumpyVector(np.asarray(strides, dtype="<i8").reshape(-1))
    _Tensor.Start(b)
    _Tensor.AddTypeType(b, type_code)
    _Tensor.AddType(b, type_table)
    _Tensor.AddShape(b, shape_vec)
    _Tensor.AddStrides(b, strides_vec)
    _Tensor.AddData(b, _fbs_buffer(b, 0, data_length))
    return _finish_message(b, MessageHeader.Tensor, _Tensor.End(b), data_length, None, version)


def _fbs_buffer(b, offset: int, length: int) -> int:
    b.Prep(8, 16)
    b.PrependInt64(length)
    b.PrependInt64(offset)
    return b.Offset()


def _buffer_struct_vector(b, start_vector, pairs) -> int:
    start_vector(b, len(pairs))
    for offset, length in reversed(pairs):
        b.Prep(8, 16)
        b.PrependInt64(length)
        b.PrependInt64(offset)
    return b.EndVector()


def encode_sparse_tensor_message(value_type: t.DataType, shape, dim_names, non_zero_length: int,
                                 index_kind: str, index: dict, data, body_length: int,
                                 version: int = MetadataVersion.V5) -> bytes:
    """The Message flatbuffer of a SparseTensor; ``index`` as in ``SparseTensorHeader``."""
    b = flatbuffers.Builder(512)
    type_code, type_table = _encode_type(b, value_type)
    shape_vec = _encode_dims(b, shape, dim_names, _SparseTensor.StartShapeVector)
    if index_kind == "COO":
        itype = _encode_int(b, index["indices_type"])
        strides_vec = b.CreateNumpyVector(np.asarray(index["indices_strides"], dtype="<i8").reshape(-1))
        _SparseTensorIndexCOO.Start(b)
        _SparseTensorIndexCOO.AddIndicesType(b, itype)
        _SparseTensorIndexCOO.AddIndicesStrides(b, strides_vec)
        _SparseTensorIndexCOO.AddIndicesBuffer(b, _fbs_buffer(b, *index["indices"]))
        _SparseTensorIndexCOO.AddIsCanonical(b, index["canonical"])
        kind_code, index_table = SPARSE_INDEX_COO, _SparseTensorIndexCOO.End(b)
    elif index_kind in ("CSR", "CSC"):
        ptype = _encode_int(b, index["indptr_type"])
        itype = _encode_int(b, index["indices_type"])
        _SparseMatrixIndexCSX.Start(b)
        _SparseMatrixIndexCSX.AddCompressedAxis(b, 0 if index_kind == "CSR" else 1)
        _SparseMatrixIndexCSX.AddIndptrType(b, ptype)
        _SparseMatrixIndexCSX.AddIndptrBuffer(b, _fbs_buffer(b, *index["indptr"]))
        _SparseMatrixIndexCSX.AddIndicesType(b, itype)
        _SparseMatrixIndexCSX.AddIndicesBuffer(b, _fbs_buffer(b, *index["indices"]))
        kind_code, index_table = SPARSE_INDEX_CSX, _SparseMatrixIndexCSX.End(b)
    elif index_kind == "CSF":
        ptype = _encode_int(b, index["indptr_type"])
        itype = _encode_int(b, index["indices_type"])
        indices_vec = _buffer_struct_vector(b, _SparseTensorIndexCSF.StartIndicesBuffersVector,
                                            index["indices"])
        indptr_vec = _buffer_struct_vector(b, _SparseTensorIndexCSF.StartIndptrBuffersVector,
                                           index["indptr"])
        order_vec = b.CreateNumpyVector(np.asarray(index["axis_order"], dtype="<i4").reshape(-1))
        _SparseTensorIndexCSF.Start(b)
        _SparseTensorIndexCSF.AddIndptrType(b, ptype)
        _SparseTensorIndexCSF.AddIndptrBuffers(b, indptr_vec)
        _SparseTensorIndexCSF.AddIndicesType(b, itype)
        _SparseTensorIndexCSF.AddIndicesBuffers(b, indices_vec)
        _SparseTensorIndexCSF.AddAxisOrder(b, order_vec)
        kind_code, index_table = SPARSE_INDEX_CSF, _SparseTensorIndexCSF.End(b)
    else:
        raise ArrowInvalid(f"unknown sparse index kind {index_kind!r}")
    _SparseTensor.Start(b)
    _SparseTensor.AddTypeType(b, type_code)
    _SparseTensor.AddType(b, type_table)
    _SparseTensor.AddShape(b, shape_vec)
    _SparseTensor.AddNonZeroLength(b, non_zero_length)
    _SparseTensor.AddSparseIndexType(b, kind_code)
    _SparseTensor.AddSparseIndex(b, index_table)
    _SparseTensor.AddData(b, _fbs_buffer(b, *data))
    return _finish_message(b, MessageHeader.SparseTensor, _SparseTensor.End(b), body_length, None,
                           version)
