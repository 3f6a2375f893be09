"""The field layout of every FlatBuffers table the Python readers open, and the one checked
way to open one.

Why: FlatBuffers' verifier, which pyarrow runs on every footer and message, refuses a table
whose vtable is malformed (odd byte size, off the 2-byte grid) and a field at an address
that is not a multiple of its size (an int16 at an odd byte takes half its bytes from the
next field).  The C readers check each field where they read it (``_core/_fbtable.pxd``);
the Python readers (footers, schemas, the messages the C reader leaves, tensor headers,
Feather V1) open each table through ``table_at``, which runs the same checks once for the
table and all its fields.  ``LAYOUTS`` holds each table's fields in slot order with their
widths, as the format's ``.fbs`` files declare them (``tests/format/test_fblayout.py``
checks it against the generated builders).
"""
from __future__ import annotations

from typing import Optional

from .._core._flatbuf import checked_table

__all__ = ["LAYOUTS", "TYPE_MEMBERS", "HEADER_MEMBERS", "table_at", "sub_table_at",
           "vector_table_at"]

_OFFSET = 4   # a string, vector, table or union value: a uoffset
_BUFFER = 16  # the Buffer struct (two int64: 8-aligned)

#: table name -> its fields in slot order, (name, width in bytes)
LAYOUTS = {
    # File.fbs
    "Footer": (("version", 2), ("schema", _OFFSET), ("dictionaries", _OFFSET),
               ("recordBatches", _OFFSET), ("custom_metadata", _OFFSET)),
    # Message.fbs
    "Message": (("version", 2), ("header_type", 1), ("header", _OFFSET), ("bodyLength", 8),
                ("custom_metadata", _OFFSET)),
    "RecordBatch": (("length", 8), ("nodes", _OFFSET), ("buffers", _OFFSET),
                    ("compression", _OFFSET), ("variadicBufferCounts", _OFFSET)),
    "BodyCompression": (("codec", 1), ("method", 1)),
    "DictionaryBatch": (("id", 8), ("data", _OFFSET), ("isDelta", 1)),
    # Schema.fbs
    "Schema": (("endianness", 2), ("fields", _OFFSET), ("custom_metadata", _OFFSET),
               ("features", _OFFSET)),
    "Field": (("name", _OFFSET), ("nullable", 1), ("type_type", 1), ("type", _OFFSET),
              ("dictionary", _OFFSET), ("children", _OFFSET), ("custom_metadata", _OFFSET)),
    "KeyValue": (("key", _OFFSET), ("value", _OFFSET)),
    "DictionaryEncoding": (("id", 8), ("indexType", _OFFSET), ("isOrdered", 1),
                           ("dictionaryKind", 2)),
    "Null": (), "Struct_": (), "List": (), "LargeList": (), "ListView": (),
    "LargeListView": (), "Binary": (), "Utf8": (), "LargeBinary": (), "LargeUtf8": (),
    "BinaryView": (), "Utf8View": (), "Bool": (), "RunEndEncoded": (),
    "FixedSizeList": (("listSize", 4),),
    "Map": (("keysSorted", 1),),
    "Union": (("mode", 2), ("typeIds", _OFFSET)),
    "Int": (("bitWidth", 4), ("is_signed", 1)),
    "FloatingPoint": (("precision", 2),),
    "Decimal": (("precision", 4), ("scale", 4), ("bitWidth", 4)),
    "Date": (("unit", 2),),
    "Time": (("unit", 2), ("bitWidth", 4)),
    "Timestamp": (("unit", 2), ("timezone", _OFFSET)),
    "Interval": (("unit", 2),),
    "Duration": (("unit", 2),),
    "FixedSizeBinary": (("byteWidth", 4),),
    # Tensor.fbs, SparseTensor.fbs
    "Tensor": (("type_type", 1), ("type", _OFFSET), ("shape", _OFFSET), ("strides", _OFFSET),
               ("data", _BUFFER)),
    "TensorDim": (("size", 8), ("name", _OFFSET)),
    "SparseTensor": (("type_type", 1), ("type", _OFFSET), ("shape", _OFFSET),
                     ("non_zero_length", 8), ("sparseIndex_type", 1),
                     ("sparseIndex", _OFFSET), ("data", _BUFFER)),
    "SparseTensorIndexCOO": (("indicesType", _OFFSET), ("indicesStrides", _OFFSET),
                             ("indicesBuffer", _BUFFER), ("isCanonical", 1)),
    "SparseMatrixIndexCSX": (("compressedAxis", 2), ("indptrType", _OFFSET),
                             ("indptrBuffer", _BUFFER), ("indicesType", _OFFSET),
                             ("indicesBuffer", _BUFFER)),
    "SparseTensorIndexCSF": (("indptrType", _OFFSET), ("indptrBuffers", _OFFSET),
                             ("indicesType", _OFFSET), ("indicesBuffers", _OFFSET),
                             ("axisOrder", _OFFSET)),
    # feather.fbs (Feather V1 files)
    "CTable": (("description", _OFFSET), ("num_rows", 8), ("columns", _OFFSET), ("version", 4),
               ("metadata", _OFFSET)),
    "Column": (("name", _OFFSET), ("values", _OFFSET), ("metadata_type", 1),
               ("metadata", _OFFSET), ("user_metadata", _OFFSET)),
    "PrimitiveArray": (("type", 1), ("encoding", 1), ("offset", 8), ("length", 8),
                       ("null_count", 8), ("total_bytes", 8)),
    "CategoryMetadata": (("levels", _OFFSET), ("ordered", 1)),
    "TimestampMetadata": (("unit", 1), ("timezone", _OFFSET)),
    "DateMetadata": (),
    "TimeMetadata": (("unit", 1),),
}

#: Schema.fbs ``Type`` union: member id -> its table
TYPE_MEMBERS = {
    1: "Null", 2: "Int", 3: "FloatingPoint", 4: "Binary", 5: "Utf8", 6: "Bool", 7: "Decimal",
    8: "Date", 9: "Time", 10: "Timestamp", 11: "Interval", 12: "List", 13: "Struct_",
    14: "Union", 15: "FixedSizeBinary", 16: "FixedSizeList", 17: "Map", 18: "Duration",
    19: "LargeBinary", 20: "LargeUtf8", 21: "LargeList", 22: "RunEndEncoded",
    23: "BinaryView", 24: "Utf8View", 25: "ListView", 26: "LargeListView",
}

#: Message.fbs ``MessageHeader`` union: member id -> its table
HEADER_MEMBERS = {1: "Schema", 2: "DictionaryBatch", 3: "RecordBatch", 4: "Tensor",
                 5: "SparseTensor"}

#: the layouts as ``checked_table`` takes them: (widths as bytes, field names)
_CHECKS = {name: (bytes(width for _, width in fields), tuple(field for field, _ in fields))
           for name, fields in LAYOUTS.items()}


def table_at(name: str, buf, at: int, what: str) -> int:
    """The position of the ``name`` table that the uoffset at byte ``at`` of ``buf`` points to
    (``at`` 0: the root table), the table and its fields checked as FlatBuffers' verifier
    checks them; ArrowInvalid naming ``what``, the table, the field and the byte otherwise."""
    widths, fields = _CHECKS[name]
    return checked_table(buf, at, widths, name, fields, what)


def sub_table_at(tab, slot: int, name: str, what: str) -> Optional[int]:
    """The position of the ``name`` table in field ``slot`` (0-based) of the table ``tab``
    (a ``flatbuffers`` ``Table``: ``Bytes``, ``Pos``, ``Offset``), checked; None when absent."""
    o = tab.Offset(4 + 2 * slot)
    return table_at(name, tab.Bytes, tab.Pos + o, what) if o else None


def vector_table_at(tab, slot: int, j: int, name: str, what: str) -> int:
    """The position of the ``name`` table element ``j`` of the vector of tables in field
    ``slot`` of ``tab`` points to, checked (the caller checked the vector and ``j``)."""
    return table_at(name, tab.Bytes, tab.Vector(tab.Offset(4 + 2 * slot)) + 4 * j, what)
