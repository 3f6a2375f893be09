"""Arrow type inference for Python values, by pyarrow's rules for ``pa.array(list)``.

pyarrow counts the kinds of value it meets and then picks one type by a fixed
priority (list, struct, decimal, float, int, date, time, timestamp, duration,
bool, binary, string, interval, uuid).  It stops looking at a sequence at the first
bool, float, datetime, timedelta, date, time, bytes, str or UUID; ints, None,
Decimals, lists, dicts and numpy scalars never stop it.  Values that do not fit
the chosen type fail later, in conversion.  This module reproduces that, so
``arrowmm.array(x).type`` reads as ``pa.array(x).type`` does.
"""
from __future__ import annotations

import datetime as _dt
import sys
import uuid as _uuid
from itertools import chain
from decimal import Decimal

import numpy as np

from .. import types as t
from ..arrays.extension import uuid as _uuid_type
from ..errors import ArrowError, ArrowInvalid, ArrowNotImplementedError

__all__ = ["infer_type", "numpy_dtype_to_arrow", "tz_name", "decimal_digits",
           "is_month_day_nano", "is_null", "is_pandas", "pandas_kind", "pandas_values",
           "pandas_type", "pandas_refusal"]

_VALIDATE_EVERY = 100
_NONE = type(None)
_INT_KINDS = {int, _NONE}
_LIST_KINDS = {list, tuple, _NONE}
_DICT_KINDS = {dict, _NONE}
_BINARY = (bytes, bytearray, memoryview)

# pyarrow's NumPyDtypeUnifier: current dtype -> {new dtype: unified dtype}; absent = invalid mix.
_I = ("int8", "int16", "int32", "int64")
_U = ("uint8", "uint16", "uint32", "uint64")
_UNIFY = {
    "int8": {"int16": "int16", "int32": "int32", "int64": "int64", "float32": "float32",
             "float64": "float64"},
    "int16": {"int8": "int16", "int32": "int32", "int64": "int64", "uint8": "int16",
              "float32": "float32", "float64": "float64"},
    "int32": {"int8": "int32", "int16": "int32", "int64": "int64", "uint8": "int32",
              "uint16": "int32", "float32": "float64", "float64": "float64"},
    "int64": {**{k: "int64" for k in _I + _U[:3]}, "float32": "float64", "float64": "float64"},
    "uint8": {"uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "float32": "float32",
              "float64": "float64"},
    "uint16": {"uint8": "uint16", "uint32": "uint32", "uint64": "uint64", "float32": "float32",
               "float64": "float64"},
    "uint32": {"uint8": "uint32", "uint16": "uint32", "uint64": "uint64", "float32": "float64",
               "float64": "float64"},
    "uint64": {"uint8": "uint64", "uint16": "uint64", "uint32": "uint64", "float32": "float64",
               "float64": "float64"},
    "float16": {"float32": "float32", "float64": "float64"},
    "float32": {**{k: "float32" for k in _I + _U}, "float64": "float64"},
    "float64": {k: "float64" for k in _I + _U},
}

_DATETIME_UNITS = ("s", "ms", "us", "ns")


def numpy_dtype_to_arrow(dtype: np.dtype) -> t.DataType:
    """The Arrow type pyarrow gives a numpy dtype (bool, ints, floats, datetime64, timedelta64)."""
    dtype = np.dtype(dtype)
    kind = dtype.kind
    if kind == "b":
        return t.bool_()
    if kind in "iu":
        return t.IntType(dtype.itemsize * 8, kind == "i")
    if kind == "f" and dtype.itemsize in (2, 4, 8):
        return t.FloatType(dtype.itemsize * 8)
    if kind in "mM":
        unit, count = np.datetime_data(dtype)
        if count == 1 and unit in _DATETIME_UNITS:
            return t.timestamp(unit) if kind == "M" else t.duration(unit)
        if kind == "M" and count == 1 and unit == "D":
            return t.date32()
        raise ArrowNotImplementedError(f"numpy {dtype} has no Arrow equivalent "
                                       f"(units s, ms, us, ns{', D' if kind == 'M' else ''})")
    if kind == "U" or kind == "T":
        return t.string()
    if kind == "S":
        return t.binary()
    raise ArrowNotImplementedError(f"numpy dtype {dtype} has no Arrow equivalent")


def is_pandas(obj) -> bool:
    """Whether ``obj`` is a pandas Series, Index or ExtensionArray (a Categorical, an
    IntegerArray...).  pandas is not imported to ask: without it there is no pandas object."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return False
    return isinstance(obj, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray))


def pandas_kind(obj) -> str:
    """How a pandas object's dtype converts, as pyarrow converts it: "numpy" (numpy data, NaN
    and NaT null), "tz" (datetime64 with a time zone), "categorical" (a dictionary of its
    categories), "masked" (nullable Int64 / Float64 / boolean: data and NA mask), "string"
    (python-stored StringDtype), "arrow" (pyarrow-stored data, as it is), or "other"."""
    pd = sys.modules["pandas"]
    dtype = obj.dtype
    if isinstance(dtype, np.dtype):
        return "numpy"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "tz"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    values = pandas_values(obj)
    if isinstance(values, (pd.arrays.IntegerArray, pd.arrays.FloatingArray,
                           pd.arrays.BooleanArray)):
        return "masked"
    if isinstance(values, pd.arrays.ArrowExtensionArray):
        return "arrow"
    if isinstance(dtype, pd.StringDtype):
        return "string"
    return "other"


def pandas_values(obj):
    """The ExtensionArray (or numpy-backed array) under a Series or Index; ``obj`` itself
    otherwise."""
    pd = sys.modules["pandas"]
    return obj.array if isinstance(obj, (pd.Series, pd.Index)) else obj


def pandas_type(obj) -> t.DataType:
    """The Arrow type pyarrow gives a pandas Series / Index / ExtensionArray: its dtype's
    (int8 stays int8, datetime64[ns, tz] is timestamp[ns, tz], a categorical a dictionary of
    its categories' type with the codes' integer type); object dtype: inferred from the
    values, NaN / None / NA being nulls."""
    kind = pandas_kind(obj)
    dtype = obj.dtype
    if kind == "numpy":
        if dtype.kind == "O":
            return infer_type(list(obj), True)
        return numpy_dtype_to_arrow(dtype)
    if kind == "tz":
        return t.timestamp(dtype.unit, tz_name(dtype.tz))
    if kind == "categorical":
        codes = pandas_values(obj).codes
        return t.dictionary(numpy_dtype_to_arrow(codes.dtype), pandas_type(dtype.categories),
                            dtype.ordered)
    if kind == "masked":
        return numpy_dtype_to_arrow(dtype.numpy_dtype)
    if kind == "string":
        return t.string()
    if kind == "arrow":
        return t.ensure_type(pandas_values(obj).__arrow_array__().type)  # (a pyarrow type)
    raise pandas_refusal(dtype)


def pandas_refusal(dtype) -> ArrowNotImplementedError:
    """The error for pandas data of a dtype with no conversion (period, interval, sparse...)."""
    return ArrowNotImplementedError(
        f"pandas {dtype} data has no arrowmm array conversion (numpy, datetime with a time "
        f"zone, categorical, nullable, string and pyarrow-backed dtypes have); a DataFrame "
        f"holding it converts with arrowmm.table(df), by pandas' own Arrow export")


def tz_name(tzinfo) -> str:
    """The Arrow time zone string of a ``tzinfo``: an IANA key, "UTC" or "+HH:MM"."""
    if tzinfo is _dt.timezone.utc:
        return "UTC"
    for attr in ("key", "zone"):  # zoneinfo.ZoneInfo, pytz
        name = getattr(tzinfo, attr, None)
        if isinstance(name, str) and name:
            return name
    filename = getattr(tzinfo, "_filename", None)  # dateutil's tzfile: its zoneinfo file
    if type(tzinfo).__module__.startswith("dateutil") and isinstance(filename, str):
        key = filename.partition("zoneinfo/")[2] or filename  # (as pyarrow names it)
        if key and not key.startswith("/"):  # (a file elsewhere, /etc/localtime: no name)
            return key
    offset = tzinfo.utcoffset(None)
    if offset is None:
        raise ArrowInvalid(f"cannot name the time zone {tzinfo!r} (no key and no fixed offset)")
    if offset == _dt.timedelta(0) and tzinfo.tzname(None) == "UTC":  # (also dateutil's tzutc)
        return "UTC"
    secs = int(offset.total_seconds())
    sign = "-" if secs < 0 else "+"
    hours, rest = divmod(abs(secs), 3600)
    return f"{sign}{hours:02d}:{rest // 60:02d}"


def decimal_digits(value: Decimal):
    """(precision, scale) pyarrow infers for one Decimal (no negative scales)."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ArrowInvalid(f"cannot store {value!r} in a decimal type: it is not finite")
    if exponent < 0:
        return max(len(digits), -exponent), -exponent
    return len(digits) + exponent, 0


def is_month_day_nano(v) -> bool:
    """pyarrow's or arrowmm's MonthDayNano namedtuple."""
    return isinstance(v, tuple) and type(v).__name__ == "MonthDayNano" and len(v) == 3


def is_null(v, from_pandas: bool) -> bool:
    """None, or with ``from_pandas`` also float / Decimal NaN and pandas' NA and NaT."""
    if v is None:
        return True
    if not from_pandas:
        return False
    if isinstance(v, float):
        return v != v
    if isinstance(v, Decimal):
        return v.is_nan()
    return type(v).__name__ in ("NAType", "NaTType")


def _field_name(key) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        return key.decode("utf-8", "surrogateescape")
    raise ArrowInvalid(f"struct (dict) keys must be str or bytes, got {type(key).__name__} {key!r}")


class _Inferrer:
    """Counts of value kinds in one sequence (and its children), as pyarrow's TypeInferrer."""

    def __init__(self, from_pandas: bool):
        self.from_pandas = from_pandas
        self.total = self.none = self.bool = self.int = self.date = self.time = 0
        self.timestamp = self.duration = self.float = self.binary = self.unicode = 0
        self.decimal = self.list = self.struct = self.interval = self.numpy = self.uuid = 0
        self.tz = None
        self.np_dtype = None
        self.precision = self.scale = None
        self.child = None
        self.fields = {}

    # -- visiting -------------------------------------------------------------------------
    def visit_sequence(self, seq):
        """Visit ``seq`` until a value decides its type (pyarrow's early stop)."""
        seq = seq if isinstance(seq, list) else list(seq)
        if not self._visit_uniform(seq):
            for v in seq:
                if not self.visit(v):
                    break

    def visit_sequences(self, seqs):
        """``visit_sequence`` for each of ``seqs`` (the values of many lists)."""
        if not self._visit_uniform(list(chain.from_iterable(seqs))):
            for seq in seqs:
                self.visit_sequence(seq)

    def visit_all(self, values):
        """Visit every value, without stopping (struct fields)."""
        if not self._visit_uniform(values):
            for v in values:
                self.visit(v)

    def _visit_uniform(self, values) -> bool:
        """Count ``values`` in bulk when all are ints, all lists or all dicts (or None)."""
        kinds = set(map(type, values))
        n = len(values)
        if kinds <= _INT_KINDS:
            nones = values.count(None) if _NONE in kinds else 0
            self.total, self.none, self.int = self.total + n, self.none + nones, self.int + n - nones
            return True
        if kinds <= _LIST_KINDS or kinds <= _DICT_KINDS:
            items = [v for v in values if v is not None]
            self.total, self.none = self.total + n, self.none + n - len(items)
            if dict in kinds:
                self.struct += len(items)
                self._visit_dicts(items)
            else:
                self.list += len(items)
                self._child().visit_sequences(items)
            return True
        return False

    def _visit_dicts(self, dicts):
        columns = {}
        for d in dicts:
            for key, value in d.items():
                if type(key) is not str:
                    key = _field_name(key)
                col = columns.get(key)
                if col is None:
                    col = columns[key] = []
                    if key not in self.fields:
                        self.fields[key] = _Inferrer(self.from_pandas)
                col.append(value)
        for key, col in columns.items():
            self.fields[key].visit_all(col)

    def visit(self, v) -> bool:
        """Count ``v``; False when pyarrow would stop looking at this sequence."""
        self.total += 1
        keep = True
        if v is None or (self.from_pandas and is_null(v, True)):
            self.none += 1
        elif isinstance(v, bool):
            self.bool += 1
            keep = False
        elif isinstance(v, float):
            self.float += 1
            keep = False
        elif isinstance(v, int):
            self.int += 1
        elif isinstance(v, _dt.datetime):
            if not self.timestamp and v.tzinfo is not None:
                self.tz = tz_name(v.tzinfo)
            self.timestamp += 1
            keep = False
        elif isinstance(v, _dt.timedelta):
            self.duration += 1
            keep = False
        elif isinstance(v, _dt.date):
            self.date += 1
            keep = False
        elif isinstance(v, _dt.time):
            self.time += 1
            keep = False
        elif isinstance(v, _BINARY):
            self.binary += 1
            keep = False
        elif isinstance(v, str):
            self.unicode += 1
            keep = False
        elif isinstance(v, np.generic):
            self._visit_dtype(v.dtype)
        elif isinstance(v, (set, frozenset, type({}.values()))):
            self._visit_list(v)
        elif isinstance(v, np.ndarray):
            self._visit_ndarray(v)
        elif isinstance(v, dict):
            self._visit_dict(v)
        elif isinstance(v, (list, tuple)) and not is_month_day_nano(v):
            self._visit_list(v)
        elif isinstance(v, Decimal):
            self._visit_decimal(v)
        elif is_month_day_nano(v):
            self.interval += 1
        elif isinstance(v, _uuid.UUID):  # (arrow.uuid, as pyarrow infers it)
            self.uuid += 1
            keep = False
        else:
            raise ArrowInvalid(f"cannot infer an Arrow type for {v!r}: {type(v).__name__} "
                               f"values are not recognised (pass type=)")
        if self.total % _VALIDATE_EVERY == 0:
            self.validate()
        return keep

    def _visit_dtype(self, dtype):
        self.numpy += 1
        cur = self.np_dtype
        if cur is None:
            self.np_dtype = dtype
            return
        if cur == dtype:
            return
        if cur.kind == "M" or (cur.kind == "m" and dtype.kind == "m"):
            if dtype.kind == "M":
                raise ArrowInvalid(f"cannot mix numpy datetime64 units {np.datetime_data(cur)[0]} "
                                   f"and {np.datetime_data(dtype)[0]}")
            return  # pyarrow accepts the mix here; conversion decides
        if cur.kind not in "biuf":
            raise ArrowNotImplementedError(f"cannot unify numpy {cur} scalars with {dtype} ones")
        unified = _UNIFY.get(cur.name, {}).get(dtype.name)
        if unified is None:
            raise ArrowInvalid(f"cannot mix numpy dtypes {cur} and {dtype}")
        self.np_dtype = np.dtype(unified)

    def _child(self):
        if self.child is None:
            self.child = _Inferrer(self.from_pandas)
        return self.child

    def _visit_list(self, v):
        self.list += 1
        self._child().visit_sequence(v)

    def _visit_ndarray(self, v):
        if v.dtype.kind == "O":
            return self._visit_list(v)
        self.list += 1
        child = self._child()
        child.total += 1  # pyarrow counts an ndarray once, by its dtype
        child._visit_dtype(v.dtype)

    def _visit_dict(self, v):
        for key, value in v.items():
            if type(key) is not str:
                key = _field_name(key)
            sub = self.fields.get(key)
            if sub is None:
                sub = self.fields[key] = _Inferrer(self.from_pandas)
            sub.visit(value)
        self.struct += 1

    def _visit_decimal(self, v):
        p, s = decimal_digits(v)
        if self.precision is None:
            self.precision, self.scale = p, s
        else:
            scale = max(self.scale, s)
            whole = max(self.precision - self.scale, p - s)
            self.precision, self.scale = max(whole + scale, self.precision), scale
        self.decimal += 1

    def validate(self):
        if self.list and self.list + self.none != self.total:
            raise ArrowInvalid("cannot mix list and non-list, non-null values")
        if self.list:
            self.child.validate()
        elif self.struct:
            if self.struct + self.none != self.total:
                raise ArrowInvalid("cannot mix struct (dict) and non-struct, non-null values")
            for sub in self.fields.values():
                sub.validate()

    # -- the answer ----------------------------------------------------------------------
    def get_type(self) -> t.DataType:
        self.validate()
        if self.numpy:
            kind = self.np_dtype.kind
            if self.numpy + self.none == self.total:
                return numpy_dtype_to_arrow(self.np_dtype)
            if kind == "M":
                raise ArrowInvalid("numpy.datetime64 scalars cannot be mixed with other Python values")
            counter = {"b": "bool", "i": "int", "u": "int", "f": "float"}.get(kind)
            if counter == "float" and self.np_dtype.itemsize == 2:
                counter = None  # pyarrow leaves float16 uncounted
            if counter:
                setattr(self, counter, getattr(self, counter) + self.numpy)
        if self.list:
            return t.list_(self.child.get_type())
        if self.struct:
            return t.struct([t.field(k, sub.get_type()) for k, sub in self.fields.items()])
        if self.decimal:
            p, s = self.precision, self.scale
            if p > 76:
                raise ArrowInvalid(f"inferred decimal precision {p} exceeds the maximum of 76")
            return t.decimal256(p, s) if p > 38 else t.decimal128(p, s)
        for count, make in ((self.float, t.float64), (self.int, t.int64), (self.date, t.date32),
                            (self.time, lambda: t.time64("us")),
                            (self.timestamp, lambda: t.timestamp("us", self.tz)),
                            (self.duration, lambda: t.duration("us")), (self.bool, t.bool_),
                            (self.binary, t.binary), (self.unicode, t.string),
                            (self.interval, t.month_day_nano_interval),
                            (self.uuid, _uuid_type)):
            if count:
                return make()
        return t.null()


def infer_type(values, from_pandas: bool = False) -> t.DataType:
    """The Arrow type pyarrow's ``pa.array(values)`` would infer (``values``: a sequence; a
    pandas Series, Index or ExtensionArray: its dtype's type, see ``pandas_type``)."""
    if is_pandas(values):
        return pandas_type(values)
    inferrer = _Inferrer(from_pandas)
    values = values if isinstance(values, list) else list(values)
    if inferrer._visit_uniform(values):
        return inferrer.get_type()
    for i, v in enumerate(values):
        try:
            if not inferrer.visit(v):
                break
        except ArrowError as exc:
            raise type(exc)(f"{exc} (value at index {i})") from None
    return inferrer.get_type()
