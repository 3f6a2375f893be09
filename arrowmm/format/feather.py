"""The metadata of Feather V1 files (``feather.fbs``, Arrow <= 0.16): decoded into records.

A Feather V1 file is ``FEA1``, the columns' data, a ``CTable`` flatbuffer, its int32 length
and ``FEA1`` again.  Each column is one ``PrimitiveArray`` (type, encoding, byte offset in the
file, length, null count, total bytes) plus optional type metadata (category levels,
timestamp unit and zone, date, time unit).  The tables are read by slot number with the
``flatbuffers`` runtime; every number stays unchecked here (the reader checks them against
the file), but a flatbuffer that points outside itself raises ArrowInvalid, and its tables,
offsets and strings get the IPC metadata's checks (``fblayout.table_at``,
``decode._check_offset``, ``decode.string_at``: what FlatBuffers' verifier refuses), so a
damaged length cannot read as a name nor a misaligned field as a number.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import List, Optional

import flatbuffers
from flatbuffers.table import Table

from ..errors import ArrowInvalid
from .decode import _check_offset, string_at
from .fblayout import table_at

__all__ = ["FEATHER_MAGIC", "FeatherArray", "FeatherColumn", "FeatherTable", "parse_feather_v1",
           "TYPE_NAMES"]

FEATHER_MAGIC = b"FEA1"

#: feather.fbs ``Type``
TYPE_NAMES = ("BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
              "FLOAT", "DOUBLE", "UTF8", "BINARY", "CATEGORY", "TIMESTAMP", "DATE", "TIME",
              "LARGE_UTF8", "LARGE_BINARY", "COMPLEX_FLOAT", "COMPLEX_DOUBLE")
_UNITS = ("s", "ms", "us", "ns")
_METADATA_KINDS = (None, "category", "timestamp", "date", "time")
_METADATA_TABLES = (None, "CategoryMetadata", "TimestampMetadata", "DateMetadata", "TimeMetadata")


@dataclass(frozen=True)
class FeatherArray:
    type: str
    dictionary_encoded: bool
    offset: int
    length: int
    null_count: int
    total_bytes: int


@dataclass(frozen=True)
class FeatherColumn:
    name: str
    values: FeatherArray
    kind: Optional[str]  # "category", "timestamp", "date", "time" or None
    levels: Optional[FeatherArray] = None
    ordered: bool = False
    unit: Optional[str] = None
    timezone: Optional[str] = None
    user_metadata: Optional[str] = None


@dataclass(frozen=True)
class FeatherTable:
    description: Optional[str]
    num_rows: int
    version: int
    columns: List[FeatherColumn]
    metadata: Optional[str]


def _offset(tab: Table, slot: int) -> int:
    return tab.Offset(4 + 2 * slot)


def _scalar(tab: Table, slot: int, kind, default):
    o = _offset(tab, slot)
    return tab.Get(kind, o + tab.Pos) if o else default


def _string(tab: Table, slot: int) -> Optional[str]:
    raw = string_at(tab, 4 + 2 * slot, "Feather V1 metadata")
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ArrowInvalid(f"Feather V1 metadata: string {raw[:40]!r} is not UTF-8") from None


def _child(tab: Table, slot: int, name: str) -> Optional[Table]:
    """The ``name`` table in ``slot`` of ``tab`` (checked), None when absent."""
    o = _offset(tab, slot)
    if not o:
        return None
    return Table(tab.Bytes, table_at(name, tab.Bytes, o + tab.Pos, "Feather V1 metadata"))


def _array(tab: Optional[Table], where: str) -> FeatherArray:
    if tab is None:
        raise ArrowInvalid(f"Feather V1 metadata: {where} has no values array")
    code = _scalar(tab, 0, flatbuffers.number_types.Int8Flags, 0)
    if not 0 <= code < len(TYPE_NAMES):
        raise ArrowInvalid(f"Feather V1 metadata: {where} has unknown type code {code}")
    return FeatherArray(
        TYPE_NAMES[code], _scalar(tab, 1, flatbuffers.number_types.Int8Flags, 0) == 1,
        _scalar(tab, 2, flatbuffers.number_types.Int64Flags, 0),
        _scalar(tab, 3, flatbuffers.number_types.Int64Flags, 0),
        _scalar(tab, 4, flatbuffers.number_types.Int64Flags, 0),
        _scalar(tab, 5, flatbuffers.number_types.Int64Flags, 0))


def _column(tab: Table, k: int) -> FeatherColumn:
    name = _string(tab, 0) or ""
    where = f"column {k} ({name!r})"
    values = _array(_child(tab, 1, "PrimitiveArray"), where)
    kind_code = _scalar(tab, 2, flatbuffers.number_types.Uint8Flags, 0)
    if not 0 <= kind_code < len(_METADATA_KINDS):
        raise ArrowInvalid(f"Feather V1 metadata: {where} has unknown type metadata {kind_code}")
    kind = _METADATA_KINDS[kind_code]
    meta = _child(tab, 3, _METADATA_TABLES[kind_code]) if kind else None
    user = _string(tab, 4)
    if kind == "category":
        if meta is None:
            raise ArrowInvalid(f"Feather V1 metadata: {where} is a category without levels")
        return FeatherColumn(name, values, kind, _array(_child(meta, 0, "PrimitiveArray"),
                                                        f"{where} levels"),
                             bool(_scalar(meta, 1, flatbuffers.number_types.BoolFlags, False)),
                             user_metadata=user)
    if kind in ("timestamp", "time"):
        unit_code = _scalar(meta, 0, flatbuffers.number_types.Int8Flags, 0) if meta else 0
        if not 0 <= unit_code < len(_UNITS):
            raise ArrowInvalid(f"Feather V1 metadata: {where} has unknown time unit {unit_code}")
        tz = _string(meta, 1) if meta is not None and kind == "timestamp" else None
        return FeatherColumn(name, values, kind, unit=_UNITS[unit_code], timezone=tz or None,
                             user_metadata=user)
    return FeatherColumn(name, values, kind, user_metadata=user)


def parse_feather_v1(buf: bytes) -> FeatherTable:
    """The ``CTable`` flatbuffer ``buf`` (the bytes before the length and trailing magic)."""
    try:
        if len(buf) < 8:
            raise ArrowInvalid(f"Feather V1 metadata of {len(buf)} bytes is too short")
        data = bytearray(buf)
        tab = Table(data, table_at("CTable", data, 0, "Feather V1 metadata"))
        o = _offset(tab, 2)
        columns = []
        if o:
            _check_offset(data, o + tab.Pos, "Feather V1 metadata")
            vec = tab.Vector(o)
            n = tab.VectorLen(o)
            if n < 0 or vec > len(buf) or n > (len(buf) - vec) // 4:
                raise ArrowInvalid(f"Feather V1 metadata: {n} columns do not fit in {len(buf)} bytes")
            for k in range(n):
                pos = table_at("Column", data, vec + 4 * k, f"Feather V1 metadata, column {k}")
                columns.append(_column(Table(data, pos), k))
        return FeatherTable(_string(tab, 0), _scalar(tab, 1, flatbuffers.number_types.Int64Flags, 0),
                            _scalar(tab, 3, flatbuffers.number_types.Int32Flags, 0), columns,
                            _string(tab, 4))
    except ArrowInvalid:
        raise
    except (struct.error, IndexError, ValueError, TypeError) as exc:
        raise ArrowInvalid(f"Feather V1 metadata is malformed: {exc}") from None
