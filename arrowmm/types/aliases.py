"""Type names as strings, as pyarrow takes them: ``type_for_alias("int64")``, and a string
wherever a type is expected (``field("x", "int64")``, ``array.cast("string")``)."""
from __future__ import annotations

from functools import lru_cache
from typing import Dict

from .. import hooks
from .base import DataType

__all__ = ["type_for_alias", "ensure_type"]


@lru_cache(maxsize=1)
def _aliases() -> Dict[str, DataType]:
    """pyarrow's table of aliases (lower case), made once on first use (the factories module
    imports the one that imports this)."""
    from . import factories as f
    table = {"null": f.null(), "bool": f.bool_(), "boolean": f.bool_(),
             "halffloat": f.float16(), "float": f.float32(), "double": f.float64(),
             "string": f.string(), "str": f.string(), "utf8": f.string(), "binary": f.binary(),
             "large_string": f.large_string(), "large_str": f.large_string(),
             "large_utf8": f.large_string(), "large_binary": f.large_binary(),
             "binary_view": f.binary_view(), "string_view": f.string_view(),
             "date32": f.date32(), "date64": f.date64(), "date32[day]": f.date32(),
             "date64[ms]": f.date64(), "month_day_nano_interval": f.month_day_nano_interval()}
    for bits, factory in ((8, f.int8), (16, f.int16), (32, f.int32), (64, f.int64)):
        table[f"int{bits}"] = table[f"i{bits // 8}"] = factory()
    for bits, factory in ((8, f.uint8), (16, f.uint16), (32, f.uint32), (64, f.uint64)):
        table[f"uint{bits}"] = table[f"u{bits // 8}"] = factory()
    for bits, factory in ((16, f.float16), (32, f.float32), (64, f.float64)):
        table[f"float{bits}"] = table[f"f{bits // 8}"] = factory()
    for unit in ("s", "ms"):
        table[f"time32[{unit}]"] = f.time32(unit)
    for unit in ("us", "ns"):
        table[f"time64[{unit}]"] = f.time64(unit)
    for unit in ("s", "ms", "us", "ns"):
        table[f"timestamp[{unit}]"] = f.timestamp(unit)
        table[f"duration[{unit}]"] = f.duration(unit)
    return table


def type_for_alias(name: str) -> DataType:
    """The type a string names (case does not matter), as ``pyarrow.type_for_alias``:
    ``"int64"``, ``"i8"``, ``"double"``, ``"utf8"``, ``"timestamp[ms]"``, ...; ``ValueError``
    for a name that is not an alias (parameterised types such as ``"decimal128(5, 2)"`` or a
    zoned timestamp have none: use the factories)."""
    name = str(name).lower()
    try:
        return _aliases()[name]
    except KeyError:
        raise ValueError(f"No type alias for {name}") from None


def ensure_type(value) -> DataType:
    """``value`` if it is a type, the type it names if it is a string (``type_for_alias``),
    the type another library's type describes (a pyarrow type: ``__arrow_c_schema__``);
    ``TypeError`` otherwise, as pyarrow."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        return type_for_alias(value)
    if hasattr(value, "__arrow_c_schema__"):
        return hooks.import_c_type(value)
    raise TypeError(f"DataType expected, got {type(value)!r}")
