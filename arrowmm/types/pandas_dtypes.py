"""The dtype pandas gives a column of each Arrow type (``DataType.to_pandas_dtype``), as
pyarrow's ``to_pandas_dtype`` answers: numpy's where pyarrow has one, pandas' zoned dtype for
zoned timestamps, ``NotImplementedError`` where pyarrow raises it (times, intervals, structs,
dictionaries, large lists, views and extension types among them)."""
from __future__ import annotations

import datetime
import re

import numpy as np

from .base import DataType
from .encoded import DictionaryType
from .extension import ExtensionType
from .nested import ListType, MapType
from .primitive import (BinaryType, BinaryViewType, BoolType, DecimalType, FixedSizeBinaryType,
                        FloatType, IntType, NullType)
from .temporal import DateType, DurationType, TimestampType

__all__ = ["pandas_dtype"]

_OFFSET = re.compile(r"([+-])(\d\d):?(\d\d)\Z")


def _zone(tz: str):
    """A zone pandas takes: a fixed offset (``+01:00``) as a ``datetime.timezone``, else the
    name."""
    hit = _OFFSET.match(tz)
    if not hit:
        return tz
    delta = datetime.timedelta(hours=int(hit.group(2)), minutes=int(hit.group(3)))
    return datetime.timezone(-delta if hit.group(1) == "-" else delta)


def pandas_dtype(dtype: DataType):
    """``dtype.to_pandas_dtype()``: see the module's docstring."""
    kind = type(dtype)
    if isinstance(dtype, (ExtensionType, DictionaryType)):
        raise NotImplementedError(str(dtype))
    if kind in (IntType, FloatType):
        return dtype.numpy_dtype.type
    if kind is BoolType:
        return np.bool_
    if kind in (NullType, DecimalType, BinaryType, BinaryViewType, FixedSizeBinaryType, MapType):
        return np.object_
    if kind is ListType:
        if dtype.kind == "list":
            return np.object_
        raise NotImplementedError(str(dtype))
    if kind is DateType:
        return np.dtype("<M8[ms]")
    if kind is DurationType:
        return np.dtype(f"<m8[{dtype.unit}]")
    if kind is TimestampType:
        if not dtype.tz:
            return np.dtype(f"<M8[{dtype.unit}]")
        import pandas  # (only zoned timestamps need it, as in pyarrow)
        return pandas.DatetimeTZDtype(unit=dtype.unit, tz=_zone(dtype.tz))
    raise NotImplementedError(str(dtype))
