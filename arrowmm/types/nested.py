"""The nested types: lists (plain and large), list views, fixed-size lists, structs, maps and
unions.

Each holds its children as ``Field``s; ``str()`` prints them as pyarrow does.
"""
from __future__ import annotations

from ..errors import ArrowInvalid
from .base import DataType, cached_compare_key, native_dtype
from .fields import Field, as_field, child_key, field_items, lookup_field

__all__ = ["ListType", "ListViewType", "FixedSizeListType", "StructType", "MapType", "UnionType"]


class ListType(DataType):
    """list and large_list (``kind``): a list of ``value_field`` by offsets, 32- or 64-bit.

    The view layouts are a class of their own, ``ListViewType``: code that dispatches on the
    class cannot take a view's offsets and sizes for plain offsets."""

    __slots__ = ()
    _KINDS = ("list", "large_list")
    buffer_count = 2

    def __init__(self, value_field, kind: str = "list"):
        if kind not in self._KINDS:
            raise ArrowInvalid(f"list kind must be one of {self._KINDS}, got {kind!r}"
                               + (" (list views are ListViewType)" if kind.endswith("view") else ""))
        super().__init__(as_field(value_field, "item"), kind)

    value_field = property(lambda self: self._key[1])
    #: the values' type as pyarrow gives it: an extension type for an extension child (its
    #: layout is ``value_field.storage_type``)
    value_type = property(lambda self: self._key[1].type)
    kind = property(lambda self: self._key[2])
    large = property(lambda self: self._key[2] == "large_list")
    offset_dtype = property(lambda self: native_dtype("i8" if self.large else "i4"))
    children = property(lambda self: (self._key[1],))

    @classmethod
    def _unpickle(cls, value_field, kind="list"):
        # (pickles made while list views were kinds of this class name them so)
        if kind in ("list_view", "large_list_view"):
            return ListViewType(value_field, kind == "large_list_view")
        return cls(value_field, kind)

    _compare_key = cached_compare_key

    def _compare(self):
        return ("ListType", child_key(self._key[1], named=False), self._key[2])

    def __str__(self):
        return f"{self.kind}<{self.value_field._short()}>"


class ListViewType(DataType):
    """list_view and large_list_view (``large``): a list of ``value_field`` by an offset and a
    size per row, 32- or 64-bit (``list_view(t)``, ``large_list_view(t)``; pyarrow's
    ``ListViewType`` and ``LargeListViewType``)."""

    __slots__ = ()
    buffer_count = 3

    def __init__(self, value_field, large: bool = False):
        super().__init__(as_field(value_field, "item"), bool(large))

    value_field = property(lambda self: self._key[1])
    #: the values' type as pyarrow gives it (layout: ``value_field.storage_type``)
    value_type = property(lambda self: self._key[1].type)
    large = property(lambda self: self._key[2])
    #: ``"list_view"`` or ``"large_list_view"``, as the type prints
    kind = property(lambda self: "large_list_view" if self._key[2] else "list_view")
    offset_dtype = property(lambda self: native_dtype("i8" if self._key[2] else "i4"))
    children = property(lambda self: (self._key[1],))

    _compare_key = cached_compare_key

    def _compare(self):
        return ("ListViewType", child_key(self._key[1], named=False), self._key[2])

    def __str__(self):
        return f"{self.kind}<{self.value_field._short()}>"


class FixedSizeListType(DataType):
    """Lists of exactly ``list_size`` values of ``value_field``'s type
    (``fixed_size_list(t, n)`` or ``list_(t, n)``, as pyarrow's)."""
    __slots__ = ()
    buffer_count = 1

    def __init__(self, value_field, list_size: int):
        if list_size < 0:
            raise ArrowInvalid(f"fixed_size_list size must be >= 0, got {list_size}")
        super().__init__(as_field(value_field, "item"), int(list_size))

    value_field = property(lambda self: self._key[1])
    #: the values' type as pyarrow gives it: an extension type for an extension child (its
    #: layout is ``value_field.storage_type``)
    value_type = property(lambda self: self._key[1].type)
    list_size = property(lambda self: self._key[2])
    children = property(lambda self: (self._key[1],))

    _compare_key = cached_compare_key

    def _compare(self):
        return ("FixedSizeListType", child_key(self._key[1], named=False), self._key[2])

    def __str__(self):
        return f"fixed_size_list<{self.value_field._short()}>[{self.list_size}]"


class StructType(DataType):
    """Rows of named child fields (``struct([("a", int64()), ...])``, as
    ``pyarrow.struct``); ``len()`` and iteration give its fields."""
    __slots__ = ()
    buffer_count = 1

    def __init__(self, fields):
        super().__init__(tuple(as_field(f) for f in field_items(fields)))

    @classmethod
    def _of_fields(cls, fields: tuple) -> "StructType":
        """A struct of ``fields``, a tuple of Fields already (the schema reader's children):
        without ``__init__``'s conversions, a third of opening a wide schema of structs."""
        self = cls.__new__(cls)
        DataType.__init__(self, fields)
        return self

    fields = property(lambda self: self._key[1])
    children = property(lambda self: self._key[1])

    def field(self, i):
        """The child field at index ``i`` (negative from the end) or named ``i``; a name
        that is absent or repeated raises ``KeyError``, an index out of range ``IndexError``."""
        return lookup_field(self.fields, i, "struct")

    def __len__(self):
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    _compare_key = cached_compare_key

    def _compare(self):
        return ("StructType", tuple(map(child_key, self._key[1])))

    def __str__(self):
        return "struct<" + ", ".join(f._short() for f in self.fields) + ">"


class MapType(DataType):
    """A list of key/value structs; ``entries`` is the struct field."""

    __slots__ = ()
    buffer_count = 2
    offset_dtype = native_dtype("i4")
    kind = "list"

    def __init__(self, key, item=None, keys_sorted: bool = False, *, entries=None):
        if entries is None:
            key_field = as_field(key, "key")
            if key_field.nullable:
                key_field = key_field.with_nullable(False)
            entries = Field("entries", StructType([key_field, as_field(item, "value")]), False)
        if not (isinstance(entries.storage_type, StructType) and len(entries.storage_type.fields) == 2):
            raise ArrowInvalid(f"map entries must be a struct of two fields, got {entries.type}")
        super().__init__(entries, bool(keys_sorted))

    entries = property(lambda self: self._key[1])
    value_field = entries
    key_field = property(lambda self: self._key[1].storage_type.fields[0])
    item_field = property(lambda self: self._key[1].storage_type.fields[1])
    #: as pyarrow gives them: extension types for extension children (the layouts are the
    #: fields' ``storage_type``)
    key_type = property(lambda self: self.key_field.type)
    item_type = property(lambda self: self.item_field.type)
    keys_sorted = property(lambda self: self._key[2])
    children = property(lambda self: (self._key[1],))

    def _args(self):
        return (None, None, self.keys_sorted)

    def __reduce__(self):
        return (_rebuild_map, (self.entries, self.keys_sorted))

    _compare_key = cached_compare_key

    def _compare(self):
        return ("MapType", child_key(self.key_field, named=False),
                child_key(self.item_field, named=False), self._key[2])

    def __str__(self):
        key, item = self.key_field, self.item_field
        key_text = f"{key.type}" + ("" if key.name == "key" else f" ({key.name!r})")
        item_text = f"{item.type}" + ("" if item.name == "value" else f" ({item.name!r})")
        return f"map<{key_text}, {item_text}" + (", keys_sorted>" if self.keys_sorted else ">")


def _rebuild_map(entries, keys_sorted):
    return MapType(None, None, keys_sorted, entries=entries)


class UnionType(DataType):
    """Values each of one of several child types, chosen per row by a type code;
    ``mode`` is ``"sparse"`` or ``"dense"`` (``sparse_union(fields)``, ``dense_union(fields)``)."""
    __slots__ = ()

    def __init__(self, mode: str, fields, type_codes=None):
        if mode not in ("sparse", "dense"):
            raise ArrowInvalid(f"union mode must be 'sparse' or 'dense', got {mode!r}")
        fields = tuple(as_field(f) for f in field_items(fields))
        codes = tuple(range(len(fields))) if type_codes is None else tuple(int(c) for c in type_codes)
        if len(codes) != len(fields):
            raise ArrowInvalid(f"union has {len(fields)} children but {len(codes)} type codes")
        if any(not 0 <= c < 128 for c in codes) or len(set(codes)) != len(codes):
            raise ArrowInvalid(f"union type codes must be distinct and in [0, 128), got {codes}")
        super().__init__(mode, fields, codes)

    mode = property(lambda self: self._key[1])
    fields = property(lambda self: self._key[2])
    type_codes = property(lambda self: self._key[3])
    children = property(lambda self: self._key[2])
    buffer_count = property(lambda self: 2 if self._key[1] == "dense" else 1)
    #: pyarrow's count: the layout's validity buffer, which IPC leaves out, comes first
    num_buffers = property(lambda self: self.buffer_count + 1)

    def field(self, i):
        """The child field at index ``i`` (negative from the end) or named ``i``; a name
        that is absent or repeated raises ``KeyError``, an index out of range ``IndexError``."""
        return lookup_field(self.fields, i, "union")

    _compare_key = cached_compare_key

    def _compare(self):
        return ("UnionType", self._key[1], tuple(map(child_key, self._key[2])), self._key[3])

    def __str__(self):
        kids = ", ".join(f"{f._short()}={c}" for f, c in zip(self.fields, self.type_codes))
        return f"{self.mode}_union<{kids}>"
