"""``arrowmm.unify_schemas``: one schema holding the fields of several, as pyarrow's
``unify_schemas`` merges them (the schemas of a dataset's files, of tables to concatenate).

Fields are matched by name, in the order each name first appears (the first schema may not
repeat a name).  A merged field is nullable when either is (or either is of type null), keeps
the first one's metadata, and the schema keeps the first schema's.  Types merge as pyarrow's
two ``promote_options`` say (Arrow C++'s ``Field::MergeOptions`` ``Defaults`` and
``Permissive``):

* ``"default"``: equal types; null with any type gives that type; structs merge their fields
  by name, maps their keys and items, lists and fixed-size lists of one kind their values;
  timestamps must agree on their zone.  Anything else is ``ArrowTypeError``;
* ``"permissive"`` also widens: integers and floats to the wider width; signed and unsigned
  integers to a signed type with a bit more (``uint64`` with a signed type gives ``int64``,
  as pyarrow); integers to floats (``float16`` holds an 8-bit integer, ``float32`` a 16-bit
  one, ``float64`` the rest) and decimals to floats; integers and decimals to a decimal that
  holds both; ``string``/``binary`` and their large and fixed-size forms to ``binary`` (large
  if either is); lists of any kind to a list (large if either is); dates to ``date64``;
  times, timestamps and durations to the finer unit; dictionaries of one ordering by index
  and value.

One deliberate difference: pyarrow gives an integer meeting a decimal one digit fewer than the
integer has (an ``int8`` meets ``decimal128(1, 0)`` as ``decimal128(2, 0)``, which cannot hold
127; an ``int64`` meets a ``decimal32`` with an error).  arrowmm counts every digit.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..errors import ArrowError, ArrowInvalid, ArrowTypeError
from .base import DataType
from .encoded import DictionaryType
from .fields import Field
from .nested import FixedSizeListType, ListType, MapType, StructType
from .primitive import BinaryType, DecimalType, FixedSizeBinaryType, FloatType, IntType, NullType
from .schema import Schema
from .temporal import DateType, DurationType, TimestampType, TimeType

__all__ = ["unify_schemas"]

_OPTIONS = ("default", "permissive")
_UNITS = ("s", "ms", "us", "ns")
#: decimal digits of an integer type's widest value, by (bit width, signed)
_INT_DIGITS = {(8, True): 3, (8, False): 3, (16, True): 5, (16, False): 5, (32, True): 10,
               (32, False): 10, (64, True): 19, (64, False): 20}
_DECIMAL_DIGITS = {32: 9, 64: 18, 128: 38, 256: 76}


def unify_schemas(schemas: Sequence[Schema], *, promote_options: str = "default") -> Schema:
    """One schema with every field of ``schemas``, merged by name: see the module."""
    if promote_options not in _OPTIONS:
        raise ValueError(f"Invalid promote_options: {promote_options}")
    schemas = list(schemas)
    if not schemas:
        raise ArrowInvalid("Must provide at least one schema to unify.")
    for s in schemas:
        if not isinstance(s, Schema):
            raise TypeError(f"unify_schemas takes arrowmm Schemas, got {type(s).__name__}")
    if len(set(schemas[0].names)) != len(schemas[0].names):
        raise ArrowInvalid("Can't unify schema with duplicate field names.")
    fields = _merged_fields(list(schemas[0].fields), [f for s in schemas[1:] for f in s],
                            promote_options == "permissive")
    return Schema(fields, schemas[0].metadata)


def _merged_fields(fields: list, more: list, permissive: bool) -> list:
    """``fields`` with each of ``more`` merged into the field of its name, or appended."""
    for f in more:
        at = [k for k, have in enumerate(fields) if have.name == f.name]
        if not at:
            fields.append(f)
        elif len(at) > 1:
            raise ArrowInvalid(f"Cannot merge field {f.name}: more than one field has that name")
        else:
            fields[at[0]] = _merge_fields(fields[at[0]], f, permissive)
    return fields


def _merge_fields(a: Field, b: Field, permissive: bool) -> Field:
    if a.equals(b):
        return a
    where = f"Unable to merge: Field {a.name} has incompatible types: {a.type} vs {b.type}"
    try:
        dtype = _merge_types(a.type, b.type, permissive)
    except ArrowError as e:
        raise type(e)(f"{where}: {e}") from None
    if dtype is None:
        raise ArrowTypeError(where)
    nullable = (a.nullable or b.nullable or isinstance(a.type, NullType)
                or isinstance(b.type, NullType))
    return Field(a.name, dtype, nullable, a.metadata)


def _merge_types(a: DataType, b: DataType, permissive: bool) -> Optional[DataType]:
    """The type both ``a`` and ``b`` become, or None where they have none."""
    if a == b:
        return a
    if isinstance(a, NullType):
        return b
    if isinstance(b, NullType):
        return a
    if permissive and type(a) is DictionaryType and type(b) is DictionaryType:
        return _merge_dictionaries(a, b, permissive)
    for merge in (_temporal, _numeric, _binary, _nested):
        out = merge(a, b, permissive)
        if out is not None:
            return out
    return None


def _finer(a: str, b: str) -> str:
    return a if _UNITS.index(a) >= _UNITS.index(b) else b


def _temporal(a: DataType, b: DataType, permissive: bool) -> Optional[DataType]:
    ta, tb = type(a), type(b)
    if ta is TimestampType and tb is TimestampType:
        if bool(a.tz) != bool(b.tz):
            raise ArrowTypeError("Cannot merge timestamp with timezone and timestamp without "
                                 "timezone")
        if a.tz != b.tz:
            raise ArrowTypeError("Cannot merge timestamps with differing timezones")
        return TimestampType(_finer(a.unit, b.unit), a.tz) if permissive else None
    if not permissive or ta is not tb:
        return None
    if ta is DateType:
        return DateType("ms")
    if ta is DurationType:
        return DurationType(_finer(a.unit, b.unit))
    if ta is TimeType:
        return TimeType(_finer(a.unit, b.unit))
    return None


def _decimal(precision: int, scale: int, bits: int) -> DecimalType:
    """The narrowest decimal of at least ``bits`` bits holding ``precision`` digits."""
    while bits < 256 and precision > _DECIMAL_DIGITS[bits]:
        bits *= 2
    return DecimalType(precision, scale, bits)


def _widen_decimals(a: DecimalType, b: DecimalType) -> DecimalType:
    scale = max(a.scale, b.scale)
    precision = max(a.precision + scale - a.scale, b.precision + scale - b.scale)
    return _decimal(precision, scale, max(a.bit_width, b.bit_width))


def _int_as_decimal(i: IntType) -> DecimalType:
    digits = _INT_DIGITS[i.bit_width, i.signed]
    return _decimal(digits, 0, 32)


def _signed_bits(width: int) -> IntType:
    for bits in (8, 16, 32):
        if width <= bits:
            return IntType(bits, True)
    return IntType(64, True)


def _numeric(a: DataType, b: DataType, permissive: bool) -> Optional[DataType]:
    if not permissive:
        return None
    ta, tb = type(a), type(b)
    if {ta, tb} == {DecimalType, FloatType}:
        return a if ta is FloatType else b
    if {ta, tb} == {DecimalType, IntType}:
        d, i = (a, b) if ta is DecimalType else (b, a)
        return _widen_decimals(d, _int_as_decimal(i))
    if ta is DecimalType and tb is DecimalType:
        return _widen_decimals(a, b)
    if ta is IntType and tb is IntType:
        if a.signed == b.signed:
            return a if a.bit_width >= b.bit_width else b
        u, s = (a, b) if not a.signed else (b, a)
        width = max(u.bit_width, s.bit_width) + (1 if u.bit_width >= s.bit_width else 0)
        return _signed_bits(width)
    if {ta, tb} == {IntType, FloatType}:
        f, i = (a, b) if ta is FloatType else (b, a)
        need = 16 if i.bit_width <= 8 else 32 if i.bit_width <= 16 else 64
        return FloatType(max(f.bit_width, need))
    if ta is FloatType and tb is FloatType:
        return a if a.bit_width >= b.bit_width else b
    return None


def _binary(a: DataType, b: DataType, permissive: bool) -> Optional[DataType]:
    if not permissive:
        return None
    ta, tb = type(a), type(b)
    if ta is FixedSizeBinaryType and tb is FixedSizeBinaryType:
        return BinaryType()
    if {ta, tb} == {FixedSizeBinaryType, BinaryType}:
        other = a if ta is BinaryType else b
        return BinaryType(large=other.large)
    if ta is BinaryType and tb is BinaryType:
        return BinaryType(a.utf8 and b.utf8, large=a.large or b.large)
    return None


def _merge_child(a: Field, b: Field, permissive: bool) -> Field:
    """A nested type's child ``a`` merged with ``b`` under ``a``'s name."""
    return _merge_fields(a, b.with_name(a.name) if b.name != a.name else b, permissive)


def _nested(a: DataType, b: DataType, permissive: bool) -> Optional[DataType]:
    ta, tb = type(a), type(b)
    if ta is FixedSizeListType and tb is FixedSizeListType:
        value = _merge_child(a.value_field, b.value_field, permissive)
        return FixedSizeListType(value, a.list_size) if a.list_size == b.list_size else \
            ListType(value)
    if ta in (ListType, FixedSizeListType) and tb in (ListType, FixedSizeListType):
        value = _merge_child(a.value_field, b.value_field, permissive)
        if not permissive and (ta is not tb or a.kind != b.kind):
            raise ArrowTypeError("Cannot merge lists unless promote_list=true")
        large = getattr(a, "large", False) or getattr(b, "large", False)
        return ListType(value, "large_list" if large else "list")
    if ta is MapType and tb is MapType:
        key = _merge_child(a.key_field, b.key_field, permissive)
        item = _merge_child(a.item_field, b.item_field, permissive)
        return MapType(key.type, item, a.keys_sorted and b.keys_sorted)
    if ta is StructType and tb is StructType:
        return StructType(_merged_fields(list(a.fields), list(b.fields), permissive))
    return None


def _merge_dictionaries(a: DictionaryType, b: DictionaryType, permissive: bool) -> DataType:
    if a.ordered != b.ordered:
        raise ArrowTypeError("Cannot merge ordered and unordered dictionary unless "
                             "promote_dictionary_ordered=true")
    index = _numeric(a.index_type, b.index_type, True)
    value = _merge_types(a.value_type, b.value_type, permissive)
    if value is None:
        raise ArrowTypeError("Could not merge dictionary value types")
    if index is None:
        raise ArrowTypeError("Could not merge dictionary index types")
    return DictionaryType(index, value, a.ordered and b.ordered)
