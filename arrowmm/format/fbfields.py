"""Lean readers for the FlatBuffers tables a schema repeats per field (Field, Int).

Opening a 100-column file spent 90% of its 4 ms in the generated accessors:
each ``Offset`` call re-reads the vtable through three checked ``Get`` calls.
``Table`` here has the same reads with the same checks and results (a position
outside ``[0, 2**32)`` is a ``TypeError``, bytes past the end a
``struct.error``), but finds its vtable once.  ``Field`` and ``Int`` mirror the
generated accessors ``metadata`` uses; rarer tables (dictionary encodings,
key-values, other types) are still read by the generated code, from the same
``Bytes`` and ``Pos``.
"""
from __future__ import annotations

import struct

from ._fbs.DictionaryEncoding import DictionaryEncoding
from ._fbs.KeyValue import KeyValue

__all__ = ["Table", "Field", "Int"]

_U32 = struct.Struct("<I").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U16 = struct.Struct("<H").unpack_from
_U8 = struct.Struct("<B").unpack_from
_MAX = 0xFFFFFFFF


def _get(unpack, buf, off):
    if not 0 <= off <= _MAX:
        raise TypeError(f"bad number {off} for type uint32")
    return unpack(buf, off)[0]


class Table:
    """``flatbuffers.table.Table``'s reads, with the vtable looked up once."""

    __slots__ = ("Bytes", "Pos", "_vtable", "_vtable_end")

    def __init__(self, buf, pos):
        if not 0 <= pos <= _MAX:
            raise TypeError(f"bad number {pos} for type uint32")
        self.Bytes = buf
        self.Pos = pos
        self._vtable = None

    def Offset(self, slot):
        vtable = self._vtable
        if vtable is None:
            vtable = self.Pos - _get(_I32, self.Bytes, self.Pos)
            self._vtable_end = _get(_U16, self.Bytes, vtable)
            self._vtable = vtable
        if slot < self._vtable_end:
            return _get(_U16, self.Bytes, vtable + slot)
        return 0

    def Indirect(self, off):
        return off + _get(_U32, self.Bytes, off)

    def String(self, off):
        off += _get(_U32, self.Bytes, off)
        length = _get(_U32, self.Bytes, off)
        return bytes(self.Bytes[off + 4:off + 4 + length])

    def VectorLen(self, off):
        off += self.Pos
        off += _get(_U32, self.Bytes, off)
        return _get(_U32, self.Bytes, off)

    def Vector(self, off):
        off += self.Pos
        return off + _get(_U32, self.Bytes, off) + 4


class Field:
    """The accessors of the generated ``Field`` that ``metadata`` calls."""

    __slots__ = ("_tab",)

    def __init__(self, buf, pos):
        self._tab = Table(buf, pos)

    def Name(self):
        tab = self._tab
        o = tab.Offset(4)
        return tab.String(o + tab.Pos) if o else None

    def Nullable(self):
        tab = self._tab
        o = tab.Offset(6)
        return bool(_get(_U8, tab.Bytes, o + tab.Pos)) if o else False

    def TypeType(self):
        tab = self._tab
        o = tab.Offset(8)
        return _get(_U8, tab.Bytes, o + tab.Pos) if o else 0

    def Type(self):
        tab = self._tab
        o = tab.Offset(10)
        if not o:
            return None
        off = o + tab.Pos
        union = Table.__new__(Table)  # unchecked position, as the generated Union(): checked
        union.Bytes = tab.Bytes       # when (and if) the type's table is read
        union.Pos = off + _get(_U32, tab.Bytes, off)
        union._vtable = None
        return union

    def Dictionary(self):
        tab = self._tab
        o = tab.Offset(12)
        if not o:
            return None
        obj = DictionaryEncoding()
        obj.Init(tab.Bytes, tab.Indirect(o + tab.Pos))
        return obj

    def Children(self, j):
        tab = self._tab
        o = tab.Offset(14)
        if not o:
            return None
        return Field(tab.Bytes, tab.Indirect(tab.Vector(o) + j * 4))

    def CustomMetadata(self, j):
        tab = self._tab
        o = tab.Offset(16)
        if not o:
            return None
        obj = KeyValue()
        obj.Init(tab.Bytes, tab.Indirect(tab.Vector(o) + j * 4))
        return obj


class Int:
    """The generated ``Int``'s accessors."""

    __slots__ = ("_tab",)

    def Init(self, buf, pos):
        self._tab = Table(buf, pos)

    def BitWidth(self):
        tab = self._tab
        o = tab.Offset(4)
        return _get(_I32, tab.Bytes, o + tab.Pos) if o else 0

    def IsSigned(self):
        tab = self._tab
        o = tab.Offset(6)
        return bool(_get(_U8, tab.Bytes, o + tab.Pos)) if o else False
