"""Arrow data types, fields and schemas: frozen, hashable, printed as pyarrow prints them.

Each type also knows its physical layout (``buffer_count``, ``byte_width``),
which is the plan the loader follows when it walks a record batch.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterator, Mapping, Optional

import numpy as np

from ._core._cabi import exporter
from .errors import ArrowInvalid, ArrowKeyError

__all__ = [
    "DataType", "NullType", "BoolType", "IntType", "FloatType", "DecimalType",
    "DateType", "TimeType", "TimestampType", "DurationType", "IntervalType",
    "BinaryType", "FixedSizeBinaryType", "ListType", "FixedSizeListType",
    "StructType", "MapType", "UnionType", "DictionaryType", "RunEndEncodedType",
    "Field", "Schema",
    "null", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "string", "binary",
    "large_string", "large_binary", "string_view", "binary_view",
    "date32", "date64", "time32", "time64", "timestamp", "duration",
    "month_interval", "day_time_interval", "month_day_nano_interval",
    "decimal32", "decimal64", "decimal128", "decimal256", "fixed_size_binary",
    "list_", "large_list", "list_view", "large_list_view", "fixed_size_list",
    "struct", "map_", "sparse_union", "dense_union", "dictionary",
    "run_end_encoded", "field", "schema",
    "ExtensionType", "register_extension_type", "unregister_extension_type",
    "extension_type_of", "EXTENSION_NAME", "EXTENSION_METADATA", "register_schema_serializer",
    "register_schema_importer",
]


class DataType:
    """Base of every Arrow type.  Subclasses set ``_key`` for equality."""

    __slots__ = ("_key",)
    #: number of buffers one node of this type has in an IPC record batch (V5)
    buffer_count = 0
    #: bytes per value for fixed-width types, else None
    byte_width: Optional[int] = None
    #: numpy dtype of the values buffer for fixed-width types, else None
    numpy_dtype: Optional[np.dtype] = None

    def __init__(self, *key):
        object.__setattr__(self, "_key", (type(self).__name__,) + key)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return isinstance(other, DataType) and self._key == other._key

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"arrowmm.DataType({self})"

    def __reduce__(self):
        return (_rebuild_type, (str(self), type(self), self._args()))

    def _args(self):
        return self._key[1:]

    def __arrow_c_schema__(self):
        return exporter("schema")(self)

    @property
    def children(self) -> tuple:
        """Child fields of nested types (empty for the rest)."""
        return ()

    @property
    def id(self) -> str:
        return type(self).__name__


def _rebuild_type(_text, cls, args):
    return cls(*args)


@lru_cache(maxsize=None)
def _native(dtype: str) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


class NullType(DataType):
    __slots__ = ()
    buffer_count = 0

    def __init__(self):
        super().__init__()

    def __str__(self):
        return "null"


class BoolType(DataType):
    __slots__ = ()
    buffer_count = 2

    def __init__(self):
        super().__init__()

    def __str__(self):
        return "bool"


class _FixedWidth(DataType):
    __slots__ = ()
    buffer_count = 2


class IntType(_FixedWidth):
    __slots__ = ()

    def __init__(self, bit_width: int, signed: bool):
        if bit_width not in (8, 16, 32, 64):
            raise ArrowInvalid(f"integer bit width must be 8, 16, 32 or 64, got {bit_width}")
        super().__init__(bit_width, bool(signed))

    bit_width = property(lambda self: self._key[1])
    signed = property(lambda self: self._key[2])
    byte_width = property(lambda self: self._key[1] // 8)
    numpy_dtype = property(lambda self: _INT_DTYPES[self._key])

    def __str__(self):
        return f"{'' if self.signed else 'u'}int{self.bit_width}"


class FloatType(_FixedWidth):
    __slots__ = ()
    _NAMES = {16: "halffloat", 32: "float", 64: "double"}

    def __init__(self, bit_width: int):
        if bit_width not in self._NAMES:
            raise ArrowInvalid(f"float bit width must be 16, 32 or 64, got {bit_width}")
        super().__init__(bit_width)

    bit_width = property(lambda self: self._key[1])
    byte_width = property(lambda self: self._key[1] // 8)
    numpy_dtype = property(lambda self: _FLOAT_DTYPES[self._key])

    def __str__(self):
        return self._NAMES[self.bit_width]


# the hot path (to_numpy) looks these up by key instead of building dtypes
_INT_DTYPES = {("IntType", bits, signed): _native(f"{'i' if signed else 'u'}{bits // 8}")
               for bits in (8, 16, 32, 64) for signed in (True, False)}
_FLOAT_DTYPES = {("FloatType", bits): _native(f"f{bits // 8}") for bits in (16, 32, 64)}


class DecimalType(_FixedWidth):
    __slots__ = ()
    _MAX_PRECISION = {32: 9, 64: 18, 128: 38, 256: 76}

    def __init__(self, precision: int, scale: int, bit_width: int = 128):
        if bit_width not in self._MAX_PRECISION:
            raise ArrowInvalid(f"decimal bit width must be 32, 64, 128 or 256, got {bit_width}")
        if not 1 <= precision <= self._MAX_PRECISION[bit_width]:
            raise ArrowInvalid(
                f"decimal{bit_width} precision must be in [1, {self._MAX_PRECISION[bit_width]}], "
                f"got {precision}")
        super().__init__(precision, scale, bit_width)

    precision = property(lambda self: self._key[1])
    scale = property(lambda self: self._key[2])
    bit_width = property(lambda self: self._key[3])
    byte_width = property(lambda self: self._key[3] // 8)

    @property
    def numpy_dtype(self):
        bw = self.bit_width
        return _native(f"i{bw // 8}") if bw <= 64 else np.dtype(("V", bw // 8))

    def __str__(self):
        return f"decimal{self.bit_width}({self.precision}, {self.scale})"


_TIME_UNITS = ("s", "ms", "us", "ns")


def _check_unit(unit, allowed=_TIME_UNITS):
    if unit not in allowed:
        raise ArrowInvalid(f"time unit must be one of {allowed}, got {unit!r}")
    return unit


class DateType(_FixedWidth):
    __slots__ = ()

    def __init__(self, unit: str = "day"):
        super().__init__(_check_unit(unit, ("day", "ms")))

    unit = property(lambda self: self._key[1])
    bit_width = property(lambda self: 32 if self._key[1] == "day" else 64)
    byte_width = property(lambda self: 4 if self._key[1] == "day" else 8)
    numpy_dtype = property(lambda self: _native("i4" if self._key[1] == "day" else "i8"))

    def __str__(self):
        return "date32[day]" if self.unit == "day" else "date64[ms]"


class TimeType(_FixedWidth):
    __slots__ = ()

    def __init__(self, unit: str, bit_width: Optional[int] = None):
        _check_unit(unit)
        if bit_width is None:
            bit_width = 32 if unit in ("s", "ms") else 64
        if (bit_width == 32) != (unit in ("s", "ms")) or bit_width not in (32, 64):
            raise ArrowInvalid(f"time{bit_width} cannot have unit {unit!r}")
        super().__init__(unit, bit_width)

    unit = property(lambda self: self._key[1])
    bit_width = property(lambda self: self._key[2])
    byte_width = property(lambda self: self._key[2] // 8)
    numpy_dtype = property(lambda self: _native(f"i{self._key[2] // 8}"))

    def __str__(self):
        return f"time{self.bit_width}[{self.unit}]"


class TimestampType(_FixedWidth):
    __slots__ = ()
    byte_width = 8
    numpy_dtype = _native("i8")

    def __init__(self, unit: str, tz: Optional[str] = None):
        super().__init__(_check_unit(unit), tz or None)

    unit = property(lambda self: self._key[1])
    tz = property(lambda self: self._key[2])

    def __str__(self):
        return f"timestamp[{self.unit}, tz={self.tz}]" if self.tz else f"timestamp[{self.unit}]"


class DurationType(_FixedWidth):
    __slots__ = ()
    byte_width = 8
    numpy_dtype = _native("i8")

    def __init__(self, unit: str):
        super().__init__(_check_unit(unit))

    unit = property(lambda self: self._key[1])

    def __str__(self):
        return f"duration[{self.unit}]"


class IntervalType(_FixedWidth):
    __slots__ = ()
    _INFO = {
        "YEAR_MONTH": ("month_interval", 4, np.dtype("<i4")),
        "DAY_TIME": ("day_time_interval", 8, np.dtype([("days", "<i4"), ("milliseconds", "<i4")])),
        "MONTH_DAY_NANO": ("month_day_nano_interval", 16,
                           np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])),
    }

    def __init__(self, unit: str):
        if unit not in self._INFO:
            raise ArrowInvalid(f"interval unit must be one of {tuple(self._INFO)}, got {unit!r}")
        super().__init__(unit)

    unit = property(lambda self: self._key[1])
    byte_width = property(lambda self: self._INFO[self._key[1]][1])
    numpy_dtype = property(lambda self: self._INFO[self._key[1]][2])

    def __str__(self):
        return self._INFO[self.unit][0]


class BinaryType(DataType):
    """binary / string, their large (64-bit offset) and view variants."""

    __slots__ = ()

    def __init__(self, utf8: bool = False, large: bool = False, view: bool = False):
        if large and view:
            raise ArrowInvalid("a binary type is either large or a view, not both")
        super().__init__(bool(utf8), bool(large), bool(view))

    utf8 = property(lambda self: self._key[1])
    large = property(lambda self: self._key[2])
    view = property(lambda self: self._key[3])
    buffer_count = property(lambda self: 2 if self._key[3] else 3)
    offset_dtype = property(lambda self: _native("i8" if self._key[2] else "i4"))

    def __str__(self):
        base = "string" if self.utf8 else "binary"
        if self.view:
            return base + "_view"
        return "large_" + base if self.large else base


class FixedSizeBinaryType(_FixedWidth):
    __slots__ = ()

    def __init__(self, byte_width: int):
        if byte_width < 0:
            raise ArrowInvalid(f"fixed_size_binary byte width must be >= 0, got {byte_width}")
        super().__init__(int(byte_width))

    byte_width = property(lambda self: self._key[1])
    numpy_dtype = property(lambda self: np.dtype(("V", self._key[1])) if self._key[1] else None)

    def __str__(self):
        return f"fixed_size_binary[{self.byte_width}]"


class ListType(DataType):
    """list, large_list, list_view and large_list_view (``kind``)."""

    __slots__ = ()
    _KINDS = ("list", "large_list", "list_view", "large_list_view")

    def __init__(self, value_field, kind: str = "list"):
        if kind not in self._KINDS:
            raise ArrowInvalid(f"list kind must be one of {self._KINDS}, got {kind!r}")
        super().__init__(_as_field(value_field, "item"), kind)

    value_field = property(lambda self: self._key[1])
    value_type = property(lambda self: self._key[1].storage_type)  # the layout's
    kind = property(lambda self: self._key[2])
    large = property(lambda self: self._key[2].startswith("large"))
    view = property(lambda self: self._key[2].endswith("view"))
    buffer_count = property(lambda self: 3 if self.view else 2)
    offset_dtype = property(lambda self: _native("i8" if self.large else "i4"))
    children = property(lambda self: (self._key[1],))

    def __str__(self):
        return f"{self.kind}<{self.value_field._short()}>"


class FixedSizeListType(DataType):
    __slots__ = ()
    buffer_count = 1

    def __init__(self, value_field, list_size: int):
        if list_size < 0:
            raise ArrowInvalid(f"fixed_size_list size must be >= 0, got {list_size}")
        super().__init__(_as_field(value_field, "item"), int(list_size))

    value_field = property(lambda self: self._key[1])
    value_type = property(lambda self: self._key[1].storage_type)  # the layout's
    list_size = property(lambda self: self._key[2])
    children = property(lambda self: (self._key[1],))

    def __str__(self):
        return f"fixed_size_list<{self.value_field._short()}>[{self.list_size}]"


class StructType(DataType):
    __slots__ = ()
    buffer_count = 1

    def __init__(self, fields):
        super().__init__(tuple(_as_field(f) for f in _field_items(fields)))

    fields = property(lambda self: self._key[1])
    children = property(lambda self: self._key[1])

    def field(self, i):
        return _lookup_field(self.fields, i, "struct")

    def __len__(self):
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __str__(self):
        return "struct<" + ", ".join(f._short() for f in self.fields) + ">"


class MapType(DataType):
    """A list of key/value structs; ``entries`` is the struct field."""

    __slots__ = ()
    buffer_count = 2
    offset_dtype = _native("i4")
    kind = "list"

    def __init__(self, key, item=None, keys_sorted: bool = False, *, entries=None):
        if entries is None:
            key_field = _as_field(key, "key")
            if key_field.nullable:
                key_field = key_field.with_nullable(False)
            entries = Field("entries", StructType([key_field, _as_field(item, "value")]), False)
        if not (isinstance(entries.storage_type, StructType) and len(entries.storage_type.fields) == 2):
            raise ArrowInvalid(f"map entries must be a struct of two fields, got {entries.type}")
        super().__init__(entries, bool(keys_sorted))

    entries = property(lambda self: self._key[1])
    value_field = entries
    key_field = property(lambda self: self._key[1].storage_type.fields[0])
    item_field = property(lambda self: self._key[1].storage_type.fields[1])
    key_type = property(lambda self: self.key_field.storage_type)
    item_type = property(lambda self: self.item_field.storage_type)
    keys_sorted = property(lambda self: self._key[2])
    children = property(lambda self: (self._key[1],))

    def _args(self):
        return (None, None, self.keys_sorted)

    def __reduce__(self):
        return (_rebuild_map, (self.entries, self.keys_sorted))

    def __str__(self):
        key, item = self.key_field, self.item_field
        key_text = f"{key.type}" + ("" if key.name == "key" else f" ({key.name!r})")
        item_text = f"{item.type}" + ("" if item.name == "value" else f" ({item.name!r})")
        return f"map<{key_text}, {item_text}" + (", keys_sorted>" if self.keys_sorted else ">")


def _rebuild_map(entries, keys_sorted):
    return MapType(None, None, keys_sorted, entries=entries)


class UnionType(DataType):
    __slots__ = ()

    def __init__(self, mode: str, fields, type_codes=None):
        if mode not in ("sparse", "dense"):
            raise ArrowInvalid(f"union mode must be 'sparse' or 'dense', got {mode!r}")
        fields = tuple(_as_field(f) for f in _field_items(fields))
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

    def field(self, i):
        return _lookup_field(self.fields, i, "union")

    def __str__(self):
        kids = ", ".join(f"{f._short()}={c}" for f, c in zip(self.fields, self.type_codes))
        return f"{self.mode}_union<{kids}>"


class DictionaryType(DataType):
    __slots__ = ()
    buffer_count = 2

    def __init__(self, index_type, value_type, ordered: bool = False):
        if not isinstance(index_type, IntType):
            raise ArrowInvalid(f"dictionary index type must be an integer type, got {index_type}")
        if not isinstance(value_type, DataType):
            raise ArrowInvalid(f"dictionary value type must be a DataType, got {value_type!r}")
        super().__init__(index_type, value_type, bool(ordered))

    index_type = property(lambda self: self._key[1])
    value_type = property(lambda self: self._key[2])
    ordered = property(lambda self: self._key[3])
    byte_width = property(lambda self: self._key[1].byte_width)
    numpy_dtype = property(lambda self: self._key[1].numpy_dtype)

    def __str__(self):
        return (f"dictionary<values={self.value_type}, indices={self.index_type}, "
                f"ordered={int(self.ordered)}>")


class RunEndEncodedType(DataType):
    __slots__ = ()
    buffer_count = 0

    def __init__(self, run_end_type, value_type):
        run_ends = _as_field(run_end_type, "run_ends")
        if not (isinstance(run_ends.storage_type, IntType) and run_ends.storage_type.signed
                and run_ends.storage_type.bit_width in (16, 32, 64)):
            raise ArrowInvalid(f"run ends must be int16, int32 or int64, got {run_ends.type}")
        if run_ends.nullable:
            run_ends = run_ends.with_nullable(False)
        super().__init__(run_ends, _as_field(value_type, "values"))

    run_end_field = property(lambda self: self._key[1])
    value_field = property(lambda self: self._key[2])
    run_end_type = property(lambda self: self._key[1].storage_type)
    value_type = property(lambda self: self._key[2].storage_type)
    children = property(lambda self: self._key[1:3])

    def __str__(self):
        return f"run_end_encoded<run_ends: {self.run_end_type}, values: {self.value_field.type}>"


# -- extension types ---------------------------------------------------------------------------
#: The field metadata keys that carry an extension type through IPC and the C data interface.
EXTENSION_NAME = "ARROW:extension:name"
EXTENSION_METADATA = "ARROW:extension:metadata"


class ExtensionType(DataType):
    """A logical type over a storage type, as pyarrow's ``pyarrow.ExtensionType``.

    Subclass it like pyarrow's: call ``super().__init__(storage_type, extension_name)``,
    define ``__arrow_ext_serialize__(self) -> bytes`` and the classmethod
    ``__arrow_ext_deserialize__(cls, storage_type, serialized)``, and optionally
    ``__arrow_ext_class__(self)`` (the array class, an ``arrowmm.ExtensionArray`` subclass).
    Register an instance with ``arrowmm.register_extension_type`` so reads recognise it.

    A field made with one (``Field(name, ext_type)``) or read with its name in the metadata
    has it as ``Field.type``, as in pyarrow; the field stores ``storage_type`` (the layout
    every reader and writer follows) and names the extension in ``storage_metadata``
    (``ARROW:extension:name``, ``ARROW:extension:metadata``), and the arrays a batch hands
    out carry it as their ``type``.
    """

    __slots__ = ("_storage", "_name", "__dict__")

    def __init__(self, storage_type: DataType, extension_name: str):
        if not isinstance(storage_type, DataType) or isinstance(storage_type, ExtensionType):
            raise ArrowInvalid(f"an extension type's storage must be a plain arrowmm DataType, "
                               f"got {storage_type!r}")
        object.__setattr__(self, "_storage", storage_type)
        object.__setattr__(self, "_name", str(extension_name))

    def __setattr__(self, name, value):  # subclasses keep their parameters, as pyarrow's do
        object.__setattr__(self, name, value)

    @property
    def _key(self):
        return (type(self), self._name, self._storage, bytes(self.__arrow_ext_serialize__()))

    storage_type = property(lambda self: self._storage)
    extension_name = property(lambda self: self._name)
    buffer_count = property(lambda self: self._storage.buffer_count)
    byte_width = property(lambda self: self._storage.byte_width)

    @property
    def children(self) -> tuple:
        return self._storage.children

    def __arrow_ext_serialize__(self) -> bytes:
        raise NotImplementedError(f"{type(self).__name__} must define __arrow_ext_serialize__")

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: DataType, serialized: bytes):
        raise NotImplementedError(f"{cls.__name__} must define __arrow_ext_deserialize__")

    def __arrow_ext_class__(self):
        """The array class for this type; None means ``arrowmm.ExtensionArray``."""
        return None

    def field_metadata(self) -> dict:
        """The two metadata entries that name this type on a field."""
        serialized = bytes(self.__arrow_ext_serialize__())
        return {EXTENSION_NAME: self._name,
                EXTENSION_METADATA: serialized.decode("utf-8", "surrogateescape")}

    def wrap_value(self, value):
        """One storage value (a Python object, not None) as this type's Python value; the
        storage value itself unless a subclass says otherwise."""
        return value

    def unwrap_value(self, value):
        """One Python value of this type (not None) as its storage value, for building arrays
        from Python values; the value itself unless a subclass says otherwise."""
        return value

    def __reduce__(self):
        return (_rebuild_extension, (type(self), self._storage, bytes(self.__arrow_ext_serialize__())))

    def __str__(self):
        return f"extension<{self._name}<{type(self).__name__}>>"

    def __repr__(self):
        return f"{type(self).__name__}({self})"

    def __arrow_c_schema__(self):
        return exporter("schema")(Field("", self))


def _rebuild_extension(cls, storage, serialized):
    return cls.__arrow_ext_deserialize__(storage, serialized)


#: extension name -> the registered instance whose class deserializes that name
_EXTENSION_REGISTRY: dict = {}
#: (name, storage type, serialized) -> the deserialized type (or None when it did not fit)
_EXTENSION_CACHE: dict = {}


def register_extension_type(ext_type: ExtensionType) -> None:
    """Make reads (files, streams, the C data interface) recognise ``ext_type``'s name:
    pyarrow's ``register_extension_type``.  A name registered already raises ArrowKeyError
    (the canonical ``arrow.*`` types are registered when arrowmm is imported)."""
    if not isinstance(ext_type, ExtensionType):
        raise TypeError(f"register_extension_type takes an ExtensionType instance, got "
                        f"{type(ext_type).__name__}")
    name = ext_type.extension_name
    if name in _EXTENSION_REGISTRY:
        raise ArrowKeyError(f"A type extension with name {name} already defined")
    _EXTENSION_REGISTRY[name] = ext_type
    _EXTENSION_CACHE.clear()


def unregister_extension_type(type_name: str) -> None:
    """Forget the extension type registered under ``type_name`` (ArrowKeyError if none)."""
    if type_name not in _EXTENSION_REGISTRY:
        raise ArrowKeyError(f"No type extension with name {type_name} found")
    del _EXTENSION_REGISTRY[type_name]
    _EXTENSION_CACHE.clear()


def extension_type_of(field: "Field") -> Optional[ExtensionType]:
    """The extension type of ``field`` (``Field.type`` when that is one), or None: a field
    with no extension name, an unregistered name, or metadata its class refuses keeps its
    storage type and its metadata (pyarrow's reading of unknown extensions)."""
    return field.extension_type


def _resolve_extension(storage: DataType, md) -> Optional[ExtensionType]:
    """The registered extension type that ``md`` (a field's metadata as stored) names over
    ``storage``, or None."""
    if not md:
        return None
    name = md.get(EXTENSION_NAME)
    if name is None:
        return None
    serialized = md.get(EXTENSION_METADATA, "").encode("utf-8", "surrogateescape")
    key = (name, storage, serialized)
    try:
        return _EXTENSION_CACHE[key]
    except KeyError:
        pass
    proto = _EXTENSION_REGISTRY.get(name)
    ext = None
    if proto is not None:
        try:
            ext = type(proto).__arrow_ext_deserialize__(storage, serialized)
        except (ArrowInvalid, ValueError, TypeError, KeyError, RecursionError):
            ext = None  # (metadata the class refuses: read as the storage, metadata kept)
        if ext is not None and (not isinstance(ext, ExtensionType) or ext.storage_type != storage):
            ext = None
    if len(_EXTENSION_CACHE) > 4096:
        _EXTENSION_CACHE.clear()
    _EXTENSION_CACHE[key] = ext
    return ext


#: ``Field._ext`` before the field's extension type has been looked up
_UNRESOLVED = object()


class Field:
    """A named, typed column (or child), with nullability and custom metadata.

    As in pyarrow, ``type`` is the type users see: for an extension field (one made from an
    ``ExtensionType``, or one whose metadata names a registered extension) it is the
    extension type, and ``metadata`` leaves out the two ``ARROW:extension:*`` entries.
    What IPC and the C data interface carry is the storage field: ``storage_type`` (the
    physical layout every reader, writer and kernel follows; ``type`` for the other fields)
    and ``storage_metadata`` (the metadata with the extension entries).  Code that plans
    buffers reads ``storage_type``, so the meaning is plain at each call site.

    The extension type of a field read from metadata is looked up once, on first use: what is
    registered then decides, as pyarrow decides when it reads the schema.

    ``dictionary_id`` is the IPC dictionary id of a dictionary-encoded field;
    it is bookkeeping for the reader and writer and takes no part in equality.
    """

    __slots__ = ("name", "storage_type", "nullable", "storage_metadata", "dictionary_id", "_ext")

    def __init__(self, name: str, type: DataType, nullable: bool = True,
                 metadata: Optional[Mapping[str, str]] = None, dictionary_id: Optional[int] = None):
        if not isinstance(type, DataType):
            raise ArrowInvalid(f"field {name!r}: type must be an arrowmm DataType, got {type!r}")
        ext = _UNRESOLVED
        if isinstance(type, ExtensionType):  # stored as its storage, named in the metadata
            metadata = {**(dict(metadata) if metadata else {}), **type.field_metadata()}
            ext, type = type, type.storage_type
        set_ = object.__setattr__
        set_(self, "name", str(name))
        set_(self, "storage_type", type)
        set_(self, "nullable", bool(nullable))
        set_(self, "storage_metadata", _freeze_metadata(metadata))
        set_(self, "dictionary_id", dictionary_id)
        set_(self, "_ext", ext)

    def __setattr__(self, name, value):
        raise AttributeError("Field is immutable")

    @property
    def extension_type(self) -> Optional[ExtensionType]:
        """The field's extension type: the one it was made with, or the registered one its
        metadata names (None for plain fields and unregistered extensions)."""
        ext = self._ext
        if ext is _UNRESOLVED:  # (threads may both resolve it: the same answer, one is kept)
            ext = _resolve_extension(self.storage_type, self.storage_metadata)
            object.__setattr__(self, "_ext", ext)
        return ext

    @property
    def type(self) -> DataType:
        """The field's type as pyarrow gives it: the extension type for extension fields,
        else the storage type."""
        return self.extension_type or self.storage_type

    @property
    def logical_type(self) -> DataType:
        """Deprecated alias of ``type`` (kept from when ``type`` was the storage type)."""
        return self.type

    @property
    def metadata(self):
        """Custom metadata as pyarrow shows it: without the ``ARROW:extension:*`` entries
        when the field is an extension type (``storage_metadata`` keeps them)."""
        md = self.storage_metadata
        if md and self.extension_type is not None:
            md = {k: v for k, v in md.items() if k not in (EXTENSION_NAME, EXTENSION_METADATA)}
            return md or None
        return md

    def _cmp_key(self):
        md = tuple(sorted(self.storage_metadata.items())) if self.storage_metadata else None
        return (self.name, self.storage_type, self.nullable, md)

    def __eq__(self, other):
        return isinstance(other, Field) and self._cmp_key() == other._cmp_key()

    def __hash__(self):
        return hash(self._cmp_key())

    def __reduce__(self):
        return (Field, (self.name, self.type, self.nullable, self.metadata, self.dictionary_id))

    def equals(self, other, check_metadata: bool = False) -> bool:
        if check_metadata:
            return self == other
        return (isinstance(other, Field) and self.name == other.name
                and self.type == other.type and self.nullable == other.nullable)

    def with_type(self, type: DataType) -> "Field":
        return Field(self.name, type, self.nullable, self.metadata, self.dictionary_id)

    def with_storage_type(self, storage_type: DataType) -> "Field":
        """This field over another physical type, its stored metadata kept (the reader and
        writer use it to swap a layout, say a dictionary's index type)."""
        return Field(self.name, storage_type, self.nullable, self.storage_metadata,
                     self.dictionary_id)

    def with_nullable(self, nullable: bool) -> "Field":
        return Field(self.name, self.storage_type, nullable, self.storage_metadata,
                     self.dictionary_id)

    def with_name(self, name: str) -> "Field":
        return Field(name, self.type, self.nullable, self.metadata, self.dictionary_id)

    def with_metadata(self, metadata) -> "Field":
        return Field(self.name, self.type, self.nullable, metadata, self.dictionary_id)

    @property
    def extension_name(self) -> Optional[str]:
        """``ARROW:extension:name`` from the stored metadata, when the field names one
        (registered or not)."""
        md = self.storage_metadata
        return md.get(EXTENSION_NAME) if md else None

    def _short(self):
        return f"{self.name}: {self.type}{'' if self.nullable else ' not null'}"

    def __str__(self):
        return self._short()

    def __repr__(self):
        return f"arrowmm.Field<{self._short()}>"

    def __arrow_c_schema__(self):
        return exporter("schema")(self)


class Schema:
    """The fields of a record batch, in order, plus schema-level custom metadata."""

    __slots__ = ("fields", "metadata", "endianness", "_index", "_ext")

    def __init__(self, fields, metadata: Optional[Mapping[str, str]] = None,
                 endianness: str = "little"):
        set_ = object.__setattr__
        if hasattr(fields, "__arrow_c_schema__") and not isinstance(fields, (list, tuple, Mapping)):
            imported = _SCHEMA_IMPORTER["schema"](fields)  # (pyarrow's, polars', any producer's)
            fields, metadata = imported.fields, imported.metadata if metadata is None else metadata
        fields = tuple(_field_items(fields))
        if any(type(f) is not Field for f in fields):
            fields = tuple(map(_as_field, fields))
        set_(self, "fields", fields)
        set_(self, "metadata", _freeze_metadata(metadata))
        set_(self, "endianness", endianness)
        set_(self, "_index", None)  # name -> indices, made by the first lookup by name
        set_(self, "_ext", None)  # each field's extension type, resolved once on first use

    def extension_types(self) -> tuple:
        """Each field's registered extension type (None for the others), resolved once per
        schema: what is registered when the schema is first read decides, as in pyarrow."""
        ext = self._ext
        if ext is None:
            ext = tuple(extension_type_of(f) for f in self.fields)
            object.__setattr__(self, "_ext", ext)
        return ext

    def _name_index(self) -> dict:
        index = self._index
        if index is None:  # (threads may both build it: the same dict, one is kept)
            index = {}
            for i, f in enumerate(self.fields):
                index.setdefault(f.name, []).append(i)
            object.__setattr__(self, "_index", index)
        return index

    def __setattr__(self, name, value):
        raise AttributeError("Schema is immutable")

    @property
    def names(self) -> list:
        return [f.name for f in self.fields]

    @property
    def types(self) -> list:
        return [f.type for f in self.fields]

    def __len__(self):
        return len(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __getitem__(self, i):
        return self.field(i)

    def field(self, i) -> Field:
        index = self._name_index() if isinstance(i, str) else None
        return _lookup_field(self.fields, i, "schema", index)

    def get_field_index(self, name: str) -> int:
        """Index of the field called ``name``; -1 when absent or ambiguous (pyarrow's rule)."""
        hits = self._name_index().get(name, ())
        return hits[0] if len(hits) == 1 else -1

    def _cmp_key(self):
        md = tuple(sorted(self.metadata.items())) if self.metadata else None
        return (self.fields, md)

    def __eq__(self, other):
        return isinstance(other, Schema) and self._cmp_key() == other._cmp_key()

    def __hash__(self):
        return hash(self._cmp_key())

    def __reduce__(self):
        return (Schema, (self.fields, self.metadata, self.endianness))

    def equals(self, other, check_metadata: bool = False) -> bool:
        if check_metadata:
            return self == other
        return (isinstance(other, Schema) and len(self) == len(other)
                and all(a.equals(b) for a, b in zip(self.fields, other.fields)))

    def with_metadata(self, metadata) -> "Schema":
        return Schema(self.fields, metadata, self.endianness)

    def serialize(self) -> bytes:
        """The schema as one IPC schema message (pyarrow's ``Schema.serialize``);
        ``arrowmm.read_schema(buf)`` reads it."""
        return _SCHEMA_SERIALIZER["schema"](self)

    def to_string(self, truncate_metadata: bool = True, show_field_metadata: bool = True,
                  show_schema_metadata: bool = True) -> str:
        """The schema as pyarrow's ``Schema.to_string`` prints it: each field, the children of
        nested types (``child i, ...``), field and schema metadata, long values cut as Arrow
        C++ cuts them unless ``truncate_metadata=False``."""
        out = []
        options = (truncate_metadata, show_field_metadata)
        for f in self.fields:
            out.append("\n")
            _print_field(out, f, 0, options)
        if show_schema_metadata and self.metadata:
            out.append("\n-- schema metadata --")
            _print_metadata(out, self.metadata, 0, truncate_metadata)
        return "".join(out)[1:]

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return "arrowmm.Schema\n" + str(self)

    def __arrow_c_schema__(self):
        return exporter("schema")(self)


def _print_field(out: list, f: Field, indent: int, options) -> None:
    # (Arrow C++'s SchemaPrinter: a child line is indented by the parent's indent plus the
    # child's, so each level adds more than the one before, as pyarrow prints it)
    dtype = f.type
    out.append(f"{f.name}: {dtype}{'' if f.nullable else ' not null'}")
    kids = () if isinstance(dtype, (ExtensionType, DictionaryType)) else dtype.children
    for i, child in enumerate(kids):
        out.append("\n" + " " * indent + " " * (indent + 2) + f"child {i}, ")
        _print_field(out, child, indent + 2, options)
    if options[1] and f.metadata:
        out.append("\n" + " " * (indent + 2) + "-- field metadata --")
        _print_metadata(out, f.metadata, indent + 2, options[0])


def _print_metadata(out: list, metadata, indent: int, truncate: bool) -> None:
    for k, v in metadata.items():
        raw = v.encode("utf-8", "surrogateescape")
        keep = max(10, 70 - len(k.encode("utf-8", "surrogateescape")) - indent)
        text = f"'{v}'" if not truncate or len(raw) <= keep else \
            f"'{raw[:keep].decode('utf-8', 'replace')}' + {len(raw) - keep}"
        out.append("\n" + " " * indent + f"{k}: {text}")


#: ``Schema.serialize`` is written by ``arrowmm.ipc.messages``, which registers it here
_SCHEMA_SERIALIZER: dict = {}


#: ``Schema(obj)`` of an ``__arrow_c_schema__`` producer: ``arrowmm.interop`` registers it
_SCHEMA_IMPORTER: dict = {}


def register_schema_importer(import_schema) -> None:
    """Called by ``arrowmm.interop``: the function ``Schema(obj)`` reads a producer's schema
    with (``import_schema(obj) -> Schema``), as ``pyarrow.schema(obj)`` accepts one."""
    _SCHEMA_IMPORTER["schema"] = import_schema


def register_schema_serializer(serialize_schema) -> None:
    """Called by ``arrowmm.ipc.messages``: the function behind ``Schema.serialize``."""
    _SCHEMA_SERIALIZER["schema"] = serialize_schema


def _freeze_metadata(metadata):
    if not metadata:
        return None if metadata is None else {}
    out = {}
    for k, v in dict(metadata).items():
        if isinstance(k, (bytes, bytearray)):
            try:
                k = k.decode("utf-8")
            except UnicodeDecodeError:
                raise ArrowInvalid(f"metadata key {bytes(k)!r} is not valid UTF-8") from None
        else:
            k = str(k)
        v = v.decode("utf-8", "surrogateescape") if isinstance(v, (bytes, bytearray)) else str(v)
        out[k] = v
    return out


def _field_items(fields):
    if isinstance(fields, Mapping):
        return [Field(k, v) for k, v in fields.items()]
    return list(fields)


def _as_field(f, default_name: str = "") -> Field:
    if isinstance(f, Field):
        return f
    if isinstance(f, DataType):
        return Field(default_name, f)
    if isinstance(f, tuple) and len(f) == 2:
        return Field(f[0], f[1])
    raise ArrowInvalid(f"expected a Field, a DataType or a (name, type) pair, got {f!r}")


def _lookup_field(fields, i, what, index=None):
    if isinstance(i, str):
        hits = index.get(i, ()) if index is not None else [k for k, f in enumerate(fields) if f.name == i]
        if len(hits) != 1:
            raise KeyError(f"{what} has {'no' if not hits else len(hits)} field(s) named {i!r}")
        return fields[hits[0]]
    n = len(fields)
    k = int(i)
    if not -n <= k < n:
        raise IndexError(f"{what} field index {i} out of range for {n} fields")
    return fields[k]


# -- factory functions, named as pyarrow names them -------------------------------------------

null = NullType
bool_ = BoolType
int8 = lambda: IntType(8, True)  # noqa: E731
int16 = lambda: IntType(16, True)  # noqa: E731
int32 = lambda: IntType(32, True)  # noqa: E731
int64 = lambda: IntType(64, True)  # noqa: E731
uint8 = lambda: IntType(8, False)  # noqa: E731
uint16 = lambda: IntType(16, False)  # noqa: E731
uint32 = lambda: IntType(32, False)  # noqa: E731
uint64 = lambda: IntType(64, False)  # noqa: E731
float16 = lambda: FloatType(16)  # noqa: E731
float32 = lambda: FloatType(32)  # noqa: E731
float64 = lambda: FloatType(64)  # noqa: E731
binary = lambda: BinaryType(False)  # noqa: E731
string = lambda: BinaryType(True)  # noqa: E731
utf8 = string
large_binary = lambda: BinaryType(False, large=True)  # noqa: E731
large_string = lambda: BinaryType(True, large=True)  # noqa: E731
binary_view = lambda: BinaryType(False, view=True)  # noqa: E731
string_view = lambda: BinaryType(True, view=True)  # noqa: E731
date32 = lambda: DateType("day")  # noqa: E731
date64 = lambda: DateType("ms")  # noqa: E731
time32 = lambda unit: TimeType(unit, 32)  # noqa: E731
time64 = lambda unit: TimeType(unit, 64)  # noqa: E731
timestamp = TimestampType
duration = DurationType
month_interval = lambda: IntervalType("YEAR_MONTH")  # noqa: E731
day_time_interval = lambda: IntervalType("DAY_TIME")  # noqa: E731
month_day_nano_interval = lambda: IntervalType("MONTH_DAY_NANO")  # noqa: E731
decimal32 = lambda p, s=0: DecimalType(p, s, 32)  # noqa: E731
decimal64 = lambda p, s=0: DecimalType(p, s, 64)  # noqa: E731
decimal128 = lambda p, s=0: DecimalType(p, s, 128)  # noqa: E731
decimal256 = lambda p, s=0: DecimalType(p, s, 256)  # noqa: E731
fixed_size_binary = FixedSizeBinaryType
list_ = lambda t, list_size=-1: ListType(t) if list_size < 0 else FixedSizeListType(t, list_size)  # noqa: E731
large_list = lambda t: ListType(t, "large_list")  # noqa: E731
list_view = lambda t: ListType(t, "list_view")  # noqa: E731
large_list_view = lambda t: ListType(t, "large_list_view")  # noqa: E731
fixed_size_list = FixedSizeListType
struct = StructType
map_ = MapType
sparse_union = lambda fields, type_codes=None: UnionType("sparse", fields, type_codes)  # noqa: E731
dense_union = lambda fields, type_codes=None: UnionType("dense", fields, type_codes)  # noqa: E731
dictionary = DictionaryType
run_end_encoded = RunEndEncodedType
field = Field
schema = Schema
