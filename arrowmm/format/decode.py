"""FlatBuffers metadata -> records (decoding): schemas, messages, record batch headers, footers.

With ``encode`` and ``tensor_headers`` beside it, the only modules that import the generated
code in ``arrowmm.format._fbs``.  Struct
vectors (FieldNode, Buffer, Block) become numpy structured views over the
message bytes instead of one Python object per element, so a footer with
200,000 blocks costs what a footer with ten does.

Everything here reads untrusted bytes.  The FlatBuffers runtime is memory-safe
but can raise anything on garbage, so every entry point turns failures into
``ArrowInvalid`` naming what was being parsed; vector lengths are checked
against the bytes really present before anything iterates over them.
"""
from __future__ import annotations

import contextlib
import gc
import struct
from dataclasses import dataclass
from typing import Optional

import flatbuffers
import numpy as np

from .. import limits
from .. import types as t
from ._fbs.BodyCompression import BodyCompression as FbBodyCompression
from ._fbs.Date import Date as FbDate
from ._fbs.Decimal import Decimal as FbDecimal
from ._fbs.DictionaryBatch import DictionaryBatch as FbDictionaryBatch
from ._fbs.DictionaryEncoding import DictionaryEncoding as FbDictionaryEncoding
from ._fbs.Duration import Duration as FbDuration
from ._fbs.Field import Field as FbField
from ._fbs.FixedSizeBinary import FixedSizeBinary as FbFixedSizeBinary
from ._fbs.FixedSizeList import FixedSizeList as FbFixedSizeList
from ._fbs.FloatingPoint import FloatingPoint as FbFloatingPoint
from ._fbs.Footer import Footer as FbFooter
from ._fbs.Int import Int as FbInt
from ._fbs.KeyValue import KeyValue as FbKeyValue
from ._fbs.Interval import Interval as FbInterval
from ._fbs.Map import Map as FbMap
from ._fbs.Message import Message as FbMessage
from ._fbs.RecordBatch import RecordBatch as FbRecordBatch
from ._fbs.Schema import Schema as FbSchema
from ._fbs.Time import Time as FbTime
from ._fbs.Timestamp import Timestamp as FbTimestamp
from ._fbs.Union import Union as FbUnion
from .._core._flatbuf import peek_batch_message, struct_pairs
from ._schema_walk import schema_fields
from .fblayout import HEADER_MEMBERS, TYPE_MEMBERS, sub_table_at, table_at, vector_table_at
from .fbfields import Field as FastField
from .fbfields import Int as FastInt
from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = [
    "FIELD_NODE", "BUFFER", "BLOCK", "MessageHeader", "MetadataVersion", "FEATURES", "schema_features",
    "RecordBatchHeader", "DictionaryBatchHeader", "MessageRecord", "FooterRecord",
    "parse_message", "parse_footer", "schema_from_fb",
    "COMPRESSION_NAMES", "FEATURE_CODES", "FLOAT_BITS", "INTERVAL_UNITS", "TIME_UNITS",
    "check_vector", "decode_text", "guarded", "init_table", "int_type", "unit_of", "string_at",
    "sub_table", "union_table",
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
FEATURE_CODES = {v: k for k, v in FEATURES.items()}


COMPRESSION_NAMES = {0: "lz4", 1: "zstd"}
TIME_UNITS = {0: "s", 1: "ms", 2: "us", 3: "ns"}
INTERVAL_UNITS = {0: "YEAR_MONTH", 1: "DAY_TIME", 2: "MONTH_DAY_NANO"}
FLOAT_BITS = {0: 16, 1: 32, 2: 64}


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

def _made(cls, buf, pos: Optional[int]):
    """A ``cls`` table object at ``pos`` (checked by ``fblayout``), None for None."""
    if pos is None:
        return None
    obj = _FAST.get(cls, cls)()
    obj.Init(buf, pos)
    return obj


def sub_table(cls, tab, slot: int, what: str):
    """The ``cls`` table in field ``slot`` (0-based) of ``tab``, checked as FlatBuffers'
    verifier checks it (``fblayout``); None when absent."""
    return _made(cls, tab.Bytes, sub_table_at(tab, slot, cls.__name__, what))


def _struct_vector(tab: flatbuffers.table.Table, slot: int, dtype: np.dtype, what: str) -> np.ndarray:
    """A numpy view of the struct vector in vtable ``slot`` (0-based field index)."""
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return np.empty(0, dtype=dtype)
    buf = tab.Bytes
    _check_offset(buf, tab.Pos + o, what)
    start = tab.Vector(o)
    n = tab.VectorLen(o)
    if n < 0 or start < 0 or start > len(buf) or n > (len(buf) - start) // dtype.itemsize:
        raise ArrowInvalid(f"{what}: vector of {n} {dtype.itemsize}-byte records at byte {start} "
                           f"overruns the {len(buf)}-byte metadata")
    return np.frombuffer(buf, dtype=dtype, count=n, offset=start)


def _check_offset(buf, at: int, what: str) -> None:
    """The uoffset at byte ``at`` must point forward to a 4-byte aligned place (FlatBuffers'
    verifier, which pyarrow runs, refuses the rest): a zeroed offset would read the offset
    itself as a vector's length, 0, and a damaged file as an empty one."""
    if at < 0 or at + 4 > len(buf):
        raise ArrowInvalid(f"{what}: offset at byte {at} lies outside the {len(buf)}-byte "
                           f"metadata")
    step = struct.unpack_from("<I", buf, at)[0]
    if step == 0 or (at + step) % 4:
        raise ArrowInvalid(f"{what}: offset {step} at byte {at} is zero or unaligned "
                           f"(damaged metadata)")


def _pairs_vector(tab: flatbuffers.table.Table, slot: int, what: str):
    """The FieldNode / Buffer vector in ``slot`` as a ``StructPairs`` (same as the fast path)."""
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return struct_pairs(tab.Bytes, 0, 0)
    _check_offset(tab.Bytes, tab.Pos + o, what)
    try:
        return struct_pairs(tab.Bytes, tab.Vector(o), tab.VectorLen(o))
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"{what}: {exc}") from None


def check_vector(n: int, tab, o: int, elem_size: int, what: str) -> int:
    """``n``, the length of the vector in field offset ``o`` of ``tab``, once its offset is
    checked (``_check_offset``) and its ``n`` elements of ``elem_size`` bytes lie in the
    metadata."""
    buf = tab.Bytes
    _check_offset(buf, tab.Pos + o, what)
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
    return check_vector(tab.VectorLen(o), tab, o, 4, what)


def _key_values(obj, what: str, budget: Optional[list] = None) -> Optional[dict]:
    """The custom metadata of ``obj`` (None when it has none); a key given twice keeps its first
    value, as pyarrow's dict does.  With a schema's ``budget``, its entries are taken from
    the entries the schema's bytes can hold (``schema_from_fb``)."""
    n = _table_vector_len(obj, _KV_SLOT[type(obj)], what)
    if not n:
        return None
    if budget is not None:
        if n > budget[5]:
            raise ArrowInvalid(f"{what}: the schema describes more custom metadata entries than "
                               f"its {budget[3]}-byte metadata can hold (at most "
                               f"{budget[3] // 4:,}: key-value tables shared between fields?)")
        budget[5] -= n
    out = {}
    size, cap = 0, limits.max_custom_metadata_size
    tab = obj._tab
    for j in range(n):
        kv = _made(FbKeyValue, tab.Bytes, vector_table_at(tab, _KV_SLOT[type(obj)], j, "KeyValue",
                                                           f"{what} entry {j}"))
        key = string_at(kv._tab, 4, f"{what}: custom metadata key {j}")
        value = string_at(kv._tab, 6, f"{what}: custom metadata value {j}")
        size += len(key or b"") + len(value or b"")
        if size > cap:
            raise limits.exceeded("max_custom_metadata_size", size, f"{what}: custom metadata bytes "
                                  f"(keys and values, through entry {j} of {n})")
        out.setdefault(_metadata_text(key), _metadata_text(value))
    return out


def _metadata_text(raw: Optional[bytes]) -> str:
    """A custom metadata key or value: pyarrow reads any bytes there (it keeps bytes), so
    bytes that are not UTF-8 are kept as lone surrogates (``surrogateescape``) and written
    back as they were."""
    return "" if raw is None else raw.decode("utf-8", "surrogateescape")


def string_at(tab, slot: int, what: str) -> Optional[bytes]:
    """The string in ``slot`` of table ``tab`` (None when absent), its declared length checked
    against the bytes there: the FlatBuffers runtime would cut an overlong one short, silently."""
    o = tab.Offset(slot)
    if not o:
        return None
    buf = tab.Bytes
    at = o + tab.Pos
    _check_offset(buf, at, what)
    at += struct.unpack_from("<I", buf, at)[0]
    if at + 4 > len(buf):
        raise ArrowInvalid(f"{what}: a string at byte {at} lies outside the {len(buf)}-byte "
                           f"metadata")
    length = struct.unpack_from("<I", buf, at)[0]
    if length >= len(buf) - at - 4:
        raise ArrowInvalid(f"{what}: a string of {length} bytes at byte {at} runs past the end "
                           f"of the {len(buf)}-byte metadata")
    if buf[at + 4 + length] != 0:
        raise ArrowInvalid(f"{what}: the string of {length} bytes at byte {at} does not end "
                           f"with the NUL FlatBuffers puts after every string (its length is "
                           f"damaged)")
    return bytes(buf[at + 4:at + 4 + length])


def decode_text(raw: Optional[bytes], what: str) -> str:
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArrowInvalid(f"{what}: string is not valid UTF-8 ({exc})") from None


_KV_SLOT = {FbSchema: 2, FbField: 6, FastField: 6, FbMessage: 4, FbFooter: 4}


def guarded(what: str):
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
    n = check_vector(tab.VectorLen(o), tab, o, 8, f"{what} features") if o else 0
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
    code = fb.Endianness()
    if code not in (0, 1):
        raise ArrowInvalid(f"schema: endianness {code} is neither Little (0) nor Big (1)")
    endianness = "big" if code == 1 else "little"
    n = _table_vector_len(fb, 1, "schema fields")
    # Each field of an honest schema owns a 4-byte slot of a fields/children vector, so the bytes
    # bound the field count.  Tables shared between parents (legal flatbuffers) could otherwise
    # describe 2**depth fields in a few hundred bytes.  A vector's length is taken from the
    # budget before any of its fields is read, so an oversized vector costs nothing to refuse.
    # Custom metadata entries are bounded the same way (each owns a 4-byte slot of a vector,
    # whatever the field limit): key-value vectors shared between fields could otherwise make
    # a few kilobytes read as millions of entries.
    # [fields left, nesting limit, field limit, size of the metadata in bytes, fields at start,
    #  metadata entries left]
    size = len(fb._tab.Bytes)
    start_budget = min(size // 4, limits.max_fields)
    budget = [start_budget, limits.max_nesting, limits.max_fields, size, start_budget, size // 4]
    _claim_fields(budget, n, "schema fields")
    tab = fb._tab
    start = tab.Vector(tab.Offset(6)) if n else 0

    def other(i):
        path = f"schema field {i}"
        return _field_from_fb(FastField(tab.Bytes, table_at("Field", tab.Bytes, start + 4 * i, path)),
                              path, 0, budget)

    # every field is read in C (_schema_walk), those it finds broken or beyond a limit here
    with _collector_paused(n >= _PAUSE_COLLECTOR_FROM):
        fields = schema_fields(tab.Bytes, start, n, t.Field, _WALKED_TYPES, _type_maker(), other,
                               budget, limits.max_custom_metadata_size) if n else []
    return t.Schema._of_fields(tuple(fields), _key_values(fb, "schema metadata"), endianness)


#: Schemas of this many fields or more are read with the cyclic collector paused: the walk
#: makes a few objects per field that can be in no cycle, and the collector's repeated passes
#: over them were half to two thirds of opening 10^5 struct or metadata fields.
_PAUSE_COLLECTOR_FROM = 10_000


@contextlib.contextmanager
def _collector_paused(pause: bool):
    """Pause the cyclic garbage collector's automatic runs for the block when ``pause``: its
    first threshold set to 0 (what turns them off), put back afterwards unless someone changed
    it meanwhile.  ``gc.disable()`` would do the same, but a program's own ``gc.disable()``
    from another thread meanwhile could not be told from ours and would be undone."""
    old = gc.get_threshold() if pause else None
    if old is None or old[0] == 0:
        yield
        return
    gc.set_threshold(0, *old[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == 0:
            gc.set_threshold(*old)


_WALKED_TYPES = {}  # schema_fields' childless types: immutable, so one instance serves every field
_LIST_KINDS = {12: "list", 21: "large_list"}
_LIST_VIEW_LARGE = {25: False, 26: True}


def _walked_type(params: tuple, children: list) -> t.DataType:
    """The type ``schema_fields`` read as ``params`` (``(type_id, ...)``, the type table's
    values) and ``children``, made as ``_type_from_fb`` makes it; any error sends the field to
    ``_field_from_fb``, which raises it naming the field."""
    type_id = params[0]
    if type_id == 2:
        return int_type(params[1], params[2], "")
    if type_id == 3:
        return t.FloatType(FLOAT_BITS[params[1]])
    if type_id in (4, 5, 19, 20):
        return t.BinaryType(utf8=type_id in (5, 20), large=type_id in (19, 20))
    if type_id in (23, 24):
        return t.BinaryViewType(utf8=type_id == 24)
    if type_id == 6:
        return t.BoolType()
    if type_id == 1:
        return t.NullType()
    if type_id == -1:  # a dictionary: index bit width, signed, ordered; the value type
        return t.DictionaryType(int_type(params[1], params[2], ""), children[0], params[3])
    if type_id == 7:
        return t.DecimalType(params[1], params[2], params[3])
    if type_id == 8:
        return t.DateType("day" if params[1] == 0 else "ms")
    if type_id == 9:
        return t.TimeType(TIME_UNITS[params[1]], params[2])
    if type_id == 10:
        return t.TimestampType(TIME_UNITS[params[1]], params[2])
    if type_id == 11:
        return t.IntervalType(INTERVAL_UNITS[params[1]])
    if type_id == 18:
        return t.DurationType(TIME_UNITS[params[1]])
    if type_id == 15:
        if params[1] < 0:
            raise ArrowInvalid("negative byteWidth")
        return t.FixedSizeBinaryType(params[1])
    if type_id in _LIST_KINDS:
        _need_children("", "a list", children, 1)
        return t.ListType(children[0], _LIST_KINDS[type_id])
    if type_id in _LIST_VIEW_LARGE:
        _need_children("", "a list view", children, 1)
        return t.ListViewType(children[0], _LIST_VIEW_LARGE[type_id])
    if type_id == 13:
        return t.StructType._of_fields(tuple(children))
    if type_id == 14:
        return t.UnionType("dense" if params[1] == 1 else "sparse", children, params[2])
    if type_id == 16:
        _need_children("", "a fixed_size_list", children, 1)
        if params[1] < 0:
            raise ArrowInvalid("negative listSize")
        return t.FixedSizeListType(children[0], params[1])
    if type_id == 17:
        _need_children("", "a map", children, 1)
        return t.MapType(None, None, params[1], entries=children[0])
    if type_id == 22:
        _need_children("", "a run_end_encoded", children, 2)
        return t.RunEndEncodedType(children[0], children[1])
    raise ArrowNotImplementedError(f"type id {type_id}")


def _type_maker():
    """``_walked_type`` with a cache for one schema walk: a wide schema's nested and dictionary
    fields mostly repeat one type (the walk gives repeated children as the same Field
    objects), so one instance serves them all.  Keyed by the children's identities: the entry
    holds the children, so their ids cannot be reused while it is there."""
    made = {}

    def make_type(params: tuple, children: list) -> t.DataType:
        if not children:
            return _walked_type(params, children)
        key = (params, tuple(map(id, children)))
        try:
            hit = made.get(key)
        except TypeError:  # (a union's type ids come as a list)
            return _walked_type(params, children)
        if hit is not None:
            return hit[1]
        dtype = _walked_type(params, children)
        made[key] = (children, dtype)
        return dtype
    return make_type


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
    name = decode_text(string_at(fb._tab, 4, f"{path}: name"), path)
    path = f"{path} ({name!r})" if depth == 0 else f"{path}.{name}"
    n_children = _table_vector_len(fb, 5, f"{path} children")
    if n_children:
        _claim_fields(budget, n_children, f"{path} children")
    tab = fb._tab
    children = [_field_from_fb(FastField(tab.Bytes, vector_table_at(tab, 5, i, "Field", f"{path} child {i}")),
                               path, depth + 1, budget) for i in range(n_children)]
    dtype = _type_from_fb(fb, children, path)
    metadata = _key_values(fb, f"{path} metadata", budget)
    dictionary_id = None
    enc = _made(FbDictionaryEncoding, tab.Bytes,
                sub_table_at(tab, 4, "DictionaryEncoding", f"{path} dictionary"))
    if enc is not None:
        dictionary_id = enc.Id()
        index = _made(FbInt, tab.Bytes, sub_table_at(enc._tab, 1, "Int", f"{path} dictionary index"))
        if index is None:
            index_type = t.IntType(32, True)
        else:
            index_type = int_type(index.BitWidth(), index.IsSigned(), f"{path} dictionary index")
        if enc.DictionaryKind() != 0:
            raise ArrowNotImplementedError(f"{path}: dictionary kind {enc.DictionaryKind()}")
        dtype = t.DictionaryType(index_type, dtype, enc.IsOrdered())
    return t.Field(name, dtype, fb.Nullable(), metadata, dictionary_id)


def int_type(bit_width, signed, path):
    if bit_width not in (8, 16, 32, 64):
        raise ArrowInvalid(f"{path}: integer bitWidth must be 8, 16, 32 or 64, got {bit_width}")
    return t.IntType(bit_width, signed)


def init_table(cls, table):
    obj = _FAST.get(cls, cls)()
    obj.Init(table.Bytes, table.Pos)
    return obj


_FAST = {FbInt: FastInt}  # (fbfields: the per-field tables, read without the generated overhead)


def _need_children(path, name, children, count):
    if len(children) != count:
        raise ArrowInvalid(f"{path}: {name} needs {count} child field(s), found {len(children)}")


def unit_of(mapping, value, path, what):
    try:
        return mapping[value]
    except KeyError:
        raise ArrowInvalid(f"{path}: unknown {what} {value}") from None


def union_table(tab, slot: int, name: Optional[str], what: str):
    """The table of the union value in ``slot`` of ``tab`` (None when absent), checked as the
    union member ``name``'s table (only its offset for a member unknown here: its reader
    refuses it)."""
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return None
    buf = tab.Bytes
    if name is None:
        _check_offset(buf, tab.Pos + o, what)
        pos = tab.Pos + o + struct.unpack_from("<I", buf, tab.Pos + o)[0]
    else:
        pos = table_at(name, buf, tab.Pos + o, what)
    return flatbuffers.table.Table(buf, pos)


#: the class each FlatBuffers Type union member decodes to (``_type_from_fb`` and
#: ``_walked_type``; a dictionary is a field's DictionaryEncoding, not a Type member)
DECODED_CLASSES = {
    1: t.NullType, 2: t.IntType, 3: t.FloatType, 4: t.BinaryType, 5: t.BinaryType,
    6: t.BoolType, 7: t.DecimalType, 8: t.DateType, 9: t.TimeType, 10: t.TimestampType,
    11: t.IntervalType, 12: t.ListType, 13: t.StructType, 14: t.UnionType,
    15: t.FixedSizeBinaryType, 16: t.FixedSizeListType, 17: t.MapType, 18: t.DurationType,
    19: t.BinaryType, 20: t.BinaryType, 21: t.ListType, 22: t.RunEndEncodedType,
    23: t.BinaryViewType, 24: t.BinaryViewType, 25: t.ListViewType, 26: t.ListViewType,
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py (the classes decoded)
TYPE_TABLES = {"FlatBuffers Type decoded to a type": frozenset(DECODED_CLASSES.values())
               | {t.DictionaryType}}


def _type_from_fb(fb: FbField, children, path) -> t.DataType:
    type_id = fb.TypeType()
    table = union_table(fb._tab, 3, TYPE_MEMBERS.get(type_id), f"{path} type")
    if table is None and type_id not in (1, 4, 5, 6, 13, 19, 20, 21, 23, 24, 25, 26, 12):
        raise ArrowInvalid(f"{path}: type {type_id} has no type table")
    if type_id == 1:
        return t.NullType()
    if type_id == 2:
        obj = init_table(FbInt, table)
        return int_type(obj.BitWidth(), obj.IsSigned(), path)
    if type_id == 3:
        return t.FloatType(unit_of(FLOAT_BITS, init_table(FbFloatingPoint, table).Precision(), path, "float precision"))
    if type_id in (4, 5, 19, 20):
        return t.BinaryType(utf8=type_id in (5, 20), large=type_id in (19, 20))
    if type_id in (23, 24):
        return t.BinaryViewType(utf8=type_id == 24)
    if type_id == 6:
        return t.BoolType()
    if type_id == 7:
        obj = init_table(FbDecimal, table)
        try:
            return t.DecimalType(obj.Precision(), obj.Scale(), obj.BitWidth())
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 8:
        return t.DateType("day" if init_table(FbDate, table).Unit() == 0 else "ms")
    if type_id == 9:
        obj = init_table(FbTime, table)
        try:
            return t.TimeType(unit_of(TIME_UNITS, obj.Unit(), path, "time unit"), obj.BitWidth())
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 10:
        obj = init_table(FbTimestamp, table)
        tz = string_at(obj._tab, 6, f"{path} timezone")
        return t.TimestampType(unit_of(TIME_UNITS, obj.Unit(), path, "time unit"),
                               decode_text(tz, path) if tz else None)
    if type_id == 11:
        return t.IntervalType(unit_of(INTERVAL_UNITS, init_table(FbInterval, table).Unit(), path, "interval unit"))
    if type_id in _LIST_KINDS:
        _need_children(path, "a list", children, 1)
        return t.ListType(children[0], _LIST_KINDS[type_id])
    if type_id in _LIST_VIEW_LARGE:
        _need_children(path, "a list view", children, 1)
        return t.ListViewType(children[0], _LIST_VIEW_LARGE[type_id])
    if type_id == 13:
        return t.StructType._of_fields(tuple(children))
    if type_id == 14:
        obj = init_table(FbUnion, table)
        n = _table_vector_len(obj, 1, f"{path} union typeIds")
        codes = [obj.TypeIds(i) for i in range(n)] if n or not obj.TypeIdsIsNone() else None
        mode = obj.Mode()
        if mode not in (0, 1):
            raise ArrowInvalid(f"{path}: union mode {mode} is neither Sparse (0) nor Dense (1)")
        try:
            return t.UnionType("dense" if mode == 1 else "sparse", children, codes)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 15:
        width = init_table(FbFixedSizeBinary, table).ByteWidth()
        if width < 0:
            raise ArrowInvalid(f"{path}: fixed_size_binary byteWidth {width} < 0")
        return t.FixedSizeBinaryType(width)
    if type_id == 16:
        _need_children(path, "a fixed_size_list", children, 1)
        size = init_table(FbFixedSizeList, table).ListSize()
        if size < 0:
            raise ArrowInvalid(f"{path}: fixed_size_list listSize {size} < 0")
        return t.FixedSizeListType(children[0], size)
    if type_id == 17:
        _need_children(path, "a map", children, 1)
        try:
            return t.MapType(None, None, init_table(FbMap, table).KeysSorted(), entries=children[0])
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    if type_id == 18:
        return t.DurationType(unit_of(TIME_UNITS, init_table(FbDuration, table).Unit(), path, "time unit"))
    if type_id == 22:
        _need_children(path, "a run_end_encoded", children, 2)
        try:
            return t.RunEndEncodedType(children[0], children[1])
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"{path}: {exc}") from None
    raise ArrowNotImplementedError(f"{path}: unknown type id {type_id}")


# -- messages ------------------------------------------------------------------------------

def _check_buffers_aligned(buffers, what: str) -> None:
    """Every buffer of a body starts at a multiple of 8 bytes (the IPC format pads each one;
    pyarrow refuses the rest): an offset moved by damage would read shifted values."""
    bad = buffers.first_unaligned(8)
    if bad >= 0:
        raise ArrowInvalid(f"{what}: buffer {bad} starts at body offset {buffers.get(bad)[0]}, "
                           f"not a multiple of 8 as the IPC format puts every buffer (damaged "
                           f"metadata?)")


def _record_batch_from_fb(rb: FbRecordBatch, what: str) -> RecordBatchHeader:
    tab = rb._tab
    length = rb.Length()
    if length < 0:
        raise ArrowInvalid(f"{what}: negative record batch length {length}")
    nodes = _pairs_vector(tab, 1, f"{what} nodes")
    buffers = _pairs_vector(tab, 2, f"{what} buffers")
    compression = None
    comp = _made(FbBodyCompression, tab.Bytes, sub_table_at(tab, 3, "BodyCompression",
                                                            f"{what} compression"))
    if comp is not None:
        codec = comp.Codec()
        if codec not in COMPRESSION_NAMES:
            raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec}")
        if comp.Method() != 0:
            raise ArrowNotImplementedError(f"{what}: body compression method {comp.Method()}")
        compression = COMPRESSION_NAMES[codec]
    o = tab.Offset(12)
    if o:
        n = check_vector(tab.VectorLen(o), tab, o, 8, f"{what} variadicBufferCounts")
        variadic = np.frombuffer(tab.Bytes, dtype="<i8", count=n, offset=tab.Vector(o))
    else:
        variadic = _NO_COUNTS
    _check_buffers_aligned(buffers, what)
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
            try:  # (the Python reader names the table, the field and the byte)
                _parse_message_slow(buf, offset, what)
            except ArrowNotImplementedError:
                pass
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
                if codec not in COMPRESSION_NAMES:
                    raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec}")
                if method != 0:
                    raise ArrowNotImplementedError(f"{what}: body compression method {method}")
                compression = COMPRESSION_NAMES[codec]
            _check_buffers_aligned(buffers, what)
            header = RecordBatchHeader(length, nodes, buffers, compression, variadic)
            if header_type == MessageHeader.DictionaryBatch:
                header = DictionaryBatchHeader(dict_id, header, is_delta)
            metadata = _message_metadata(buf, what) if has_metadata else None
            return MessageRecord(version, header_type, header, body_length, metadata)
    return _parse_message_slow(buf, offset, what)


@guarded("message")
def _message_metadata(buf, what: str) -> Optional[dict]:
    return _key_values(_made(FbMessage, buf, table_at("Message", buf, 0, what)), f"{what} metadata")


@guarded("message")
def _parse_message_slow(buf, offset: int, what: str) -> MessageRecord:
    msg = _made(FbMessage, buf, table_at("Message", buf, offset, what))
    version = msg.Version()
    _check_version(version, what)
    header_type = msg.HeaderType()
    table = union_table(msg._tab, 2, HEADER_MEMBERS.get(header_type), f"{what} header")
    body_length = msg.BodyLength()
    if body_length < 0:
        raise ArrowInvalid(f"{what}: negative bodyLength {body_length}")
    if table is None and header_type != MessageHeader.NONE:
        raise ArrowInvalid(f"{what}: header of type {header_type} is missing")
    if header_type == MessageHeader.RecordBatch:
        header = _record_batch_from_fb(init_table(FbRecordBatch, table), what)
    elif header_type == MessageHeader.DictionaryBatch:
        db = init_table(FbDictionaryBatch, table)
        data = _made(FbRecordBatch, buf, sub_table_at(db._tab, 1, "RecordBatch", f"{what} data"))
        if data is None:
            raise ArrowInvalid(f"{what}: dictionary batch without data")
        header = DictionaryBatchHeader(db.Id(), _record_batch_from_fb(data, what), db.IsDelta())
    elif header_type == MessageHeader.Schema:
        fb_schema = init_table(FbSchema, table)
        header = schema_from_fb(fb_schema)
        return MessageRecord(version, header_type, header, body_length,
                             _key_values(msg, f"{what} metadata"), schema_features(fb_schema, what))
    elif header_type in (MessageHeader.Tensor, MessageHeader.SparseTensor):
        header = table
    else:
        raise ArrowInvalid(f"{what}: unknown message header type {header_type}")
    return MessageRecord(version, header_type, header, body_length, _key_values(msg, f"{what} metadata"))


@guarded("file footer")
def parse_footer(buf) -> FooterRecord:
    """Parse a File footer flatbuffer (the bytes between the last block and the trailer)."""
    footer = _made(FbFooter, buf, table_at("Footer", buf, 0, "file footer"))
    version = footer.Version()
    fb_schema = _made(FbSchema, buf, sub_table_at(footer._tab, 1, "Schema", "file footer schema"))
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
