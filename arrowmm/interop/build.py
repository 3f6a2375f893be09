"""Building arrowmm arrays and record batches from numpy arrays, Python values and Arrow producers.

* ``array(obj, type=None, *, mask=None, from_pandas=None)``: an ``Array`` from a numpy
  array (zero-copy when it is contiguous and numeric), a pandas Series / Index /
  ExtensionArray (by its dtype), a Python sequence (type inferred as ``pyarrow.array``
  infers it, or built as ``type``), an arrowmm ``Array``, or any object with
  ``__arrow_c_array__``.
* ``record_batch(data, schema=None, *, names=None, metadata=None)``: a ``RecordBatch``
  from ``{name: column}``, a list of columns with ``names=``, an arrowmm batch, or any
  object with ``__arrow_c_array__`` / ``__arrow_c_stream__``.

Errors are ``ArrowInvalid`` (values that do not fit, mixed types, ragged columns) or
``ArrowNotImplementedError`` (casts between Arrow types, unsupported numpy dtypes).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Optional

import numpy as np

from .. import hooks, types as t
from .._core._bitmap import pack_bitmap
from .from_python import convert, string_array, validity_from_mask
from .infer import (infer_type, is_pandas, numpy_dtype_to_arrow, pandas_kind, pandas_refusal,
                    pandas_type, pandas_values)
from .._core._region import as_view
from ..arrays.array import Array, PrimitiveArray, make_array
from ..arrays.batch import RecordBatch
from ..arrays.extension import ExtensionArray, storage_of
from ..errors import ArrowError, ArrowInvalid, ArrowNotImplementedError
from ._cdata import import_array
from ._cdata import import_batch
from ._cdata import import_stream
from ._cdata import import_array_stream
from ._cdata import import_schema
from ._cdata import import_type
from ..arrays.concat import concat_arrays
from ..arrays.empty import empty_array

__all__ = ["array", "record_batch"]

_NAT = np.iinfo(np.int64).min


def array(obj, type: t.DataType = None, *, mask=None,  # noqa: A002  (pyarrow.array's name)
          from_pandas: Optional[bool] = None) -> Array:
    """An arrowmm ``Array`` holding ``obj``.

    ``obj``: a 1-D numpy array (contiguous numeric arrays are wrapped without a copy;
    ``numpy.ma.MaskedArray`` masks become nulls), a pandas Series, Index or ExtensionArray
    (converted by its dtype, as pyarrow converts it), a Python sequence or iterable, an
    arrowmm ``Array`` (returned as is), or any object with ``__arrow_c_array__``
    (imported through the C data interface, zero-copy).  ``type`` forces the Arrow type;
    without it the type is inferred by pyarrow's rules.  ``mask``: True marks a null.
    ``from_pandas``: NaN (and NaT, pandas.NA) is null rather than a value; by default
    (None) for pandas input only, as in pyarrow.
    """
    if type is None and mask is None and not from_pandas:  # (the common inputs, directly)
        built = _plain(obj)
        if built is not None:
            return built
    if type is not None and not isinstance(type, t.DataType):
        raise ArrowInvalid(f"type must be an arrowmm DataType, got {type!r}")
    pandas_input = is_pandas(obj)
    if from_pandas is None:
        from_pandas = pandas_input
    if isinstance(type, t.ExtensionType):  # the storage built from the values, then viewed
        if isinstance(obj, Array) or hasattr(obj, "__arrow_c_array__"):
            return ExtensionArray.from_storage(type, obj)
        if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, np.ndarray, Mapping)):
            obj = [None if v is None else type.unwrap_value(v) for v in obj]
        return ExtensionArray.from_storage(type, array(obj, type.storage_type, mask=mask,
                                                       from_pandas=from_pandas))
    if isinstance(obj, Array):
        return _same_type(obj, type, mask)
    if pandas_input:
        return _from_pandas(obj, type, mask, from_pandas)
    if isinstance(obj, np.ndarray):
        return _from_numpy(obj, type, mask, from_pandas)
    if hasattr(obj, "__arrow_c_array__"):
        return _same_type(_import_array(obj, type), type, mask)
    if hasattr(obj, "__arrow_c_stream__"):  # (a chunked array, a polars Series: joined, as
        chunks, dtype = imported_chunks(obj, type)  # pyarrow.array joins them)
        joined = concat_arrays(chunks) if chunks else empty_array(dtype)
        return _same_type(joined, type, mask)
    if isinstance(obj, (str, bytes, bytearray, Mapping)) or not isinstance(obj, Iterable):
        raise ArrowInvalid(f"array() needs a sequence, a numpy array or an Arrow array, "
                           f"got {_name(obj)}")
    values = obj if isinstance(obj, list) else list(obj)
    if mask is not None:
        m = _check_mask(mask, len(values))
        values = [None if k else v for v, k in zip(values, m.tolist())]
    if type is None:
        type = infer_type(values, from_pandas)  # noqa: A001
        if isinstance(type, t.ExtensionType):  # (uuid.UUID values: built as given type=)
            return array(values, type, from_pandas=from_pandas)
        if type == t.string() and any(issubclass(k, (bytes, bytearray, memoryview))
                                      for k in set(map(_type_of, values))):
            type = t.binary()  # noqa: A001  (pyarrow's top-level str/bytes mix gives binary)
    return convert(values, type, from_pandas)


_type_of = type

#: native numpy dtypes whose arrays are wrapped as they are -> their Arrow type (types are
#: immutable: one object shared by every array made here)
_PLAIN_NUMPY = {np.dtype(k): numpy_dtype_to_arrow(np.dtype(k)) for k in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64)}
_STRING = t.string()


def _plain(obj) -> Optional[Array]:
    """``array(obj)`` for a contiguous 1-D numpy array of ints or floats (wrapped) or a list
    of str and None starting with a str (built in C), as the general path makes them; None
    for anything else."""
    kind = _type_of(obj)
    if kind is np.ndarray:
        natural = _PLAIN_NUMPY.get(obj.dtype)
        if natural is None or obj.ndim != 1 or not obj.flags.c_contiguous:
            return None
        # (every bit pattern of an int or float is a value: valid by construction)
        return PrimitiveArray(natural, len(obj), (None, as_view(obj)), (), 0)._mark_built()
    if kind is list and obj and _type_of(obj[0]) is str:  # (inferred: string, as pyarrow)
        return string_array(obj, _STRING)
    return None


def _name(obj) -> str:
    return type(obj).__name__


def _same_type(arr: Array, dtype, mask) -> Array:
    """``arr`` as ``dtype`` (cast, as ``pyarrow.array`` casts an Arrow array given a type)."""
    if mask is not None:
        raise ArrowInvalid("mask= applies to numpy arrays and Python sequences, not Arrow arrays")
    if dtype is not None and arr.type != dtype:
        return arr.cast(dtype)
    return arr


def imported_chunks(obj, dtype=None):
    """``(arrays, type)``: the chunks of ``obj``'s ``__arrow_c_stream__`` (a stream of arrays
    of any type: pyarrow's ``ChunkedArray``, polars' ``Series``; a record batch stream gives
    struct arrays), each imported zero-copy, and the stream's type.  ``dtype``: the type
    asked of the producer, and cast to by arrowmm where the producer gives another (polars
    ignores the request) or fails (arrowmm's cast then names the value it cannot cast)."""
    requested = None if dtype is None else dtype.__arrow_c_schema__()
    try:
        capsule = obj.__arrow_c_stream__(requested)
    except (NotImplementedError, TypeError, ValueError):  # (arrowmm casts, or says why)
        capsule = obj.__arrow_c_stream__()
    with import_array_stream(capsule) as stream:
        chunks, stream_type = list(stream), stream.field.type
    if dtype is None or stream_type == dtype:
        return chunks, stream_type
    return [c if c.type == dtype else c.cast(dtype) for c in chunks], dtype


def _import_array(obj, dtype) -> Array:
    requested = None
    if dtype is not None:
        requested = dtype.__arrow_c_schema__()
    try:
        capsules = obj.__arrow_c_array__(requested)
    except (NotImplementedError, TypeError, ValueError):
        capsules = obj.__arrow_c_array__()
    return import_array(*capsules)


def _check_mask(mask, n: int) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise ArrowInvalid(f"mask must be a bool array, got dtype {m.dtype}")
    if m.shape != (n,):
        raise ArrowInvalid(f"mask has shape {m.shape}, the values have length {n}")
    return m


# -- numpy --------------------------------------------------------------------------------

# numpy units Arrow lacks -> the unit they convert to exactly
_DATETIME_UNIT = {"Y": "D", "M": "D", "W": "D", "D": "D", "h": "s", "m": "s"}
_TIMEDELTA_UNIT = {"W": "s", "D": "s", "h": "s", "m": "s"}


def _from_numpy(arr: np.ndarray, dtype, mask, from_pandas) -> Array:
    if isinstance(arr, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(arr)
        arr = np.ma.getdata(arr)
        mask = masked if mask is None else (masked | _check_mask(mask, len(arr)))
    if arr.ndim != 1:
        raise ArrowInvalid(f"only 1-D numpy arrays convert to Arrow arrays, got shape {arr.shape}")
    n = len(arr)
    if mask is not None:
        mask = _check_mask(mask, n)
    kind = arr.dtype.kind
    if kind in "OUST":
        values = arr.tolist() if kind in "UST" else list(arr)
        if dtype is None and kind != "O":  # (the dtype says it, empty or not)
            dtype = t.binary() if kind == "S" else t.string()
        return array(values, dtype, mask=mask, from_pandas=from_pandas)
    if kind not in "biufmM":
        raise ArrowNotImplementedError(f"numpy dtype {arr.dtype} has no Arrow equivalent")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    arr = _supported_units(arr)
    natural = numpy_dtype_to_arrow(arr.dtype)
    if dtype is not None and dtype != natural:
        return _cast_numpy(arr, natural, dtype, mask, from_pandas)
    if kind in "mM":
        mask = _merge_nat(arr, mask)
    elif kind == "f" and from_pandas and mask is None:
        nan = np.isnan(arr)
        mask = nan if nan.any() else None
    return _numpy_array(arr, natural, mask)


def _supported_units(arr: np.ndarray) -> np.ndarray:
    """datetime64 / timedelta64 in a unit Arrow has (exact conversions only)."""
    kind = arr.dtype.kind
    if kind not in "mM":
        return arr
    unit, count = np.datetime_data(arr.dtype)
    if unit == "generic" or (kind == "m" and unit in ("Y", "M")):
        raise ArrowNotImplementedError(f"numpy {arr.dtype} has no Arrow equivalent")
    target = (_DATETIME_UNIT if kind == "M" else _TIMEDELTA_UNIT).get(unit, unit)
    if target == unit and count == 1:
        return arr
    return arr.astype(np.dtype(f"{'datetime64' if kind == 'M' else 'timedelta64'}[{target}]"))


def _numpy_array(arr: np.ndarray, dtype: t.DataType, mask) -> Array:
    """Wrap ``arr`` (native, 1-D, of ``dtype``'s layout) without copying when contiguous."""
    validity, nulls = validity_from_mask(mask)
    n = len(arr)
    if isinstance(dtype, t.BoolType):
        bits, _ = pack_bitmap(np.ascontiguousarray(arr, dtype=bool))
        data = as_view(bits)
    elif isinstance(dtype, t.DateType) and dtype.unit == "day":
        days = arr.view(np.int64)
        live = days if mask is None else days[~mask]
        if live.size and (live.min() < -2 ** 31 or live.max() >= 2 ** 31):
            raise ArrowInvalid("a datetime64[D] value is out of the date32 range")
        data = as_view(days.astype(np.int32))
    else:
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        if arr.dtype.kind in "mM":
            arr = arr.view(np.int64)
        data = as_view(arr)
    out = make_array(dtype, n, [validity, data], null_count=nulls)
    # every bit pattern of an int or float is a value, and bools were packed here: nothing the
    # caller's array holds, then or later, can make these invalid once the size is right
    # (times, date64 and decimals have value ranges: checked when written)
    if isinstance(dtype, t.BoolType) or (isinstance(dtype, _NUMBERS)
                                         and data.size == n * dtype.byte_width):
        out._mark_built()
    return out


_NUMBERS = (t.IntType, t.FloatType)
_INT_BACKED = (t.IntType, t.TimestampType, t.DurationType, t.DateType)  # times: via Python


def _merge_nat(arr, mask):
    nat = arr.view(np.int64) == _NAT
    if not nat.any():
        return mask
    return nat if mask is None else (mask | nat)


def _check_whole_days(millis: np.ndarray) -> None:
    """date64 counts milliseconds of whole days (the spec; readers refuse the rest)."""
    part = millis % 86_400_000 != 0
    if part.any():
        raise ArrowInvalid(f"value {int(millis[part][0])} is not a whole number of days in "
                           f"milliseconds (86400000), as date64 needs")


def _cast_numpy(arr, natural, dtype, mask, from_pandas) -> Array:
    """numpy values as another Arrow type: checked numeric / temporal casts, else via Python."""
    kind = arr.dtype.kind
    if kind == "f" and from_pandas and mask is None:
        nan = np.isnan(arr)
        mask = nan if nan.any() else None
    numeric = isinstance(dtype, t.FloatType) and kind in "biuf" or \
        isinstance(dtype, _INT_BACKED) and kind in ("biuf" if isinstance(dtype, t.IntType) else "iu")
    if numeric:
        target = dtype.numpy_dtype
        live = arr if mask is None else arr[~mask]
        if target.kind in "iu" and kind == "f":
            bad = ~np.isfinite(live) | (live != np.trunc(live))
            if bad.any():
                raise ArrowInvalid(f"float value {live[bad][0]!r} cannot be converted to {dtype} "
                                   f"without losing its fractional part")
        if target.kind in "iu" and live.size and kind != "b":  # (bools fit every int type)
            info = np.iinfo(target)
            lo, hi = live.min(), live.max()
            if kind == "f":  # (2**63 - 1 as a float is 2**63: compare with that bound, exact)
                out = lo < float(info.min) or hi >= 2.0 ** (info.bits - (info.kind == "i"))
            else:
                out = lo < info.min or hi > info.max
            if out:
                bad = lo if lo < info.min else hi
                raise ArrowInvalid(f"value {bad!r} out of range [{info.min}, {info.max}] of {dtype}")
        if isinstance(dtype, t.DateType) and dtype.unit == "ms":
            _check_whole_days(live)
        filled = arr if mask is None else np.where(mask, 0, arr)
        return _numpy_array(filled.astype(target), dtype, mask)
    temporal = {t.TimestampType: "M", t.DurationType: "m"}.get(type(dtype))
    if temporal == kind:
        mask = _merge_nat(arr, mask)
        out = arr.astype(f"{'datetime64' if kind == 'M' else 'timedelta64'}[{dtype.unit}]")
        same = (out.astype(arr.dtype) == arr) | np.isnat(arr)
        if not same.all():
            raise ArrowInvalid(f"converting {arr.dtype} to {dtype} would lose precision "
                               f"(value {arr[~same][0]!r})")
        return _numpy_array(out.view(np.int64), dtype, mask)
    values = list(arr)
    if mask is not None:
        values = [None if m else v for v, m in zip(values, mask.tolist())]
    return convert(values, dtype, from_pandas)


# -- pandas -------------------------------------------------------------------------------

def _from_pandas(obj, dtype, mask, from_pandas) -> Array:
    """A pandas Series / Index / ExtensionArray converted by its dtype, as pyarrow converts it
    (iterated as Python values it would lose the dtype, the nanoseconds and the NA mask)."""
    if mask is not None:
        mask = _check_mask(mask, len(obj))
    kind = pandas_kind(obj)
    values = pandas_values(obj)
    if kind == "numpy":
        return _from_numpy(np.asarray(obj), dtype, mask, from_pandas)
    if kind == "tz":  # the UTC instants, in the dtype's unit
        natural = pandas_type(obj)
        utc = values.to_numpy(dtype=f"datetime64[{natural.unit}]")
        return _from_numpy(utc, natural if dtype is None else dtype, mask, from_pandas)
    if kind == "categorical":
        return _from_categorical(values, dtype, mask, from_pandas)
    if kind == "masked":  # the data and its NA mask (a NaN in Float64 data stays a value)
        numpy_dtype = obj.dtype.numpy_dtype
        data = values.to_numpy(dtype=numpy_dtype, na_value=numpy_dtype.type(0))
        return _from_numpy(data, dtype, _either(np.asarray(values.isna()), mask), False)
    if kind == "string":
        strings = values.to_numpy(dtype=object, na_value=None).tolist()
        return array(strings, t.string() if dtype is None else dtype, mask=mask,
                     from_pandas=from_pandas)
    if kind == "arrow":  # pyarrow's memory already: imported as it is
        if mask is not None:
            raise ArrowInvalid("mask= does not apply to pyarrow-backed pandas data")
        chunked = values.__arrow_array__()
        chunks = [import_array(*c.__arrow_c_array__()) for c in chunked.chunks]
        out = concat_arrays(chunks) if len(chunks) > 1 else \
            chunks[0] if chunks else array([], pandas_type(obj))
        return out if dtype is None or out.type == dtype else out.cast(dtype)
    raise pandas_refusal(obj.dtype)


def _either(mask, other):
    return mask if other is None else (mask | other)


def _from_categorical(cat, dtype, mask, from_pandas) -> Array:
    """A dictionary array of ``cat``'s codes (code -1 is null) over its categories; with a
    ``dtype`` that is no dictionary type, the values the codes stand for."""
    codes = np.asarray(cat.codes)
    nulls = _either(codes < 0, mask)
    if dtype is not None and not isinstance(dtype, t.DictionaryType):
        dense = cat.categories.take(np.where(codes < 0, 0, codes)) if len(cat.categories) \
            else [None] * len(codes)
        return array(dense, dtype, mask=nulls, from_pandas=from_pandas)
    dtype = pandas_type(cat) if dtype is None else dtype
    dictionary = array(cat.categories, dtype.value_type)
    indices = _from_numpy(np.where(nulls, 0, codes), dtype.index_type, nulls, False)
    return make_array(dtype, len(codes), indices.buffers(), null_count=indices.null_count,
                      dictionary=dictionary)


# -- record batches -----------------------------------------------------------------------

def record_batch(data, schema: t.Schema = None, *, names=None, metadata=None) -> RecordBatch:
    """An arrowmm ``RecordBatch`` from columns or an Arrow producer.

    ``data``: ``{name: numpy array | list | Array}``; a list of columns with ``names=``
    (or ``schema=``); an arrowmm ``RecordBatch`` (returned as is); an object with
    ``__arrow_c_array__`` (a struct array / record batch) or ``__arrow_c_stream__`` (its
    batches concatenated into one).  ``schema`` fixes each column's type, nullability and
    metadata; ``metadata`` is the schema's custom metadata.
    """
    if schema is not None and not isinstance(schema, t.Schema):
        raise ArrowInvalid(f"schema must be an arrowmm Schema, got {schema!r}")
    if isinstance(data, RecordBatch):
        batch = data
    elif hasattr(data, "__arrow_c_array__"):
        batch = import_batch(*data.__arrow_c_array__())
    elif hasattr(data, "__arrow_c_stream__"):
        batch = _batch_from_stream(data)
    else:
        return _batch_from_columns(data, schema, names, metadata)
    if names is not None:
        raise ArrowInvalid("names= applies to a list of columns")
    return _conform(batch, schema, metadata)


def _batch_from_stream(obj) -> RecordBatch:
    stream = import_stream(obj.__arrow_c_stream__())
    batches = list(stream)
    schema = stream.schema
    if len(batches) == 1:
        return batches[0]
    if not batches:
        return RecordBatch(schema, 0, [array([], f.storage_type) for f in schema])
    columns = [concat_arrays([b.storage_column(k) for b in batches]) for k in range(len(schema))]
    return RecordBatch(schema, sum(b.num_rows for b in batches), columns)


def _conform(batch: RecordBatch, schema, metadata) -> RecordBatch:
    if schema is None and metadata is None:
        return batch
    if schema is None:
        schema = batch.schema
    if batch.schema.types != schema.types:
        raise ArrowNotImplementedError(f"casting a batch of\n{batch.schema}\nto\n{schema}\n"
                                       f"is not supported")
    if batch.schema.names != schema.names:
        raise ArrowInvalid(f"the batch has columns {batch.schema.names}, the schema {schema.names}")
    if metadata is not None:
        schema = schema.with_metadata(metadata)
    return _checked(schema, batch.storage_columns)


def _batch_from_columns(data, schema, names, metadata) -> RecordBatch:
    if _type_of(data) is dict and schema is None and names is None:
        return _batch_of_dict(data, metadata)
    if isinstance(data, Mapping):
        if names is not None:
            raise ArrowInvalid("names= applies to a list of columns, not a dict")
        if schema is not None:
            missing = [f.name for f in schema if f.name not in data]
            if missing:  # keys the schema does not name are left out, as pyarrow does
                raise ArrowInvalid(f"the dict has no column(s) {missing} named by the schema")
            columns = [data[f.name] for f in schema]
        else:
            names, columns = [str(k) for k in data], list(data.values())
    elif isinstance(data, (list, tuple)):
        columns = list(data)
        if schema is None and (names is None or len(names) != len(columns)):
            raise ArrowInvalid(f"a list of {len(columns)} columns needs names= (one per column) "
                               f"or schema=")
    else:
        raise ArrowInvalid(f"record_batch() takes a dict, a list of columns, a RecordBatch or an "
                           f"Arrow producer, got {_name(data)}")
    if schema is not None:
        if len(schema) != len(columns):
            raise ArrowInvalid(f"schema has {len(schema)} fields, got {len(columns)} columns")
        arrays = []
        for f, col in zip(schema, columns):
            arrays.append(_column(col, f.storage_type, f.name))
        if metadata is not None:
            schema = schema.with_metadata(metadata)
    else:
        arrays = [_column(col, None, n) for n, col in zip(names, columns)]
        schema = t.Schema([_field(str(n), a.type) for n, a in zip(names, arrays)], metadata)
    return _checked(schema, arrays)


def _batch_of_dict(data: dict, metadata) -> RecordBatch:
    """``record_batch({name: column})``: each field made from its array's type, so the
    types agree and every field is nullable; ``_checked``'s lengths check is what is left
    (and all of it for an extension array, whose field's type comes from the registry)."""
    arrays, fields = [], []
    for name, col in data.items():
        name = str(name)
        a = _column(col, None, name)
        arrays.append(a)
        fields.append(_field(name, a.type))
    schema = t.Schema._of_fields(tuple(fields), metadata)
    n = len(arrays[0]) if arrays else 0
    for a in arrays:
        if len(a) != n or isinstance(a, ExtensionArray):
            return _checked(schema, arrays)
    return RecordBatch(schema, n, arrays)


#: the fields ``record_batch`` made lately, by (name, type): batches built alike share their
#: field objects, so a writer sees at once that their schema is the one it checked last time
_FIELDS: dict = {}
_MAX_FIELDS = 1024


def _field(name: str, dtype: t.DataType) -> t.Field:
    """A nullable field without metadata (immutable, so shared), made once per name and flat
    type.  Types with children or a dictionary are made anew: their ``==`` ignores the list
    children's names and metadata, which the field must keep as the column has them; an
    extension type's field carries its metadata."""
    if dtype.children or isinstance(dtype, (t.DictionaryType, t.ExtensionType)):
        return t.Field(name, dtype)
    key = (name, dtype)
    field = _FIELDS.get(key)
    if field is None:
        if len(_FIELDS) >= _MAX_FIELDS:
            _FIELDS.clear()
        field = _FIELDS[key] = t.Field(name, dtype)
    return field


def _column(col, dtype, name) -> Array:
    try:
        return array(col, dtype)
    except ArrowError as exc:
        kind = ArrowNotImplementedError if isinstance(exc, ArrowNotImplementedError) else ArrowInvalid
        raise kind(f"column {name!r}: {exc}") from None


def _checked(schema: t.Schema, arrays) -> RecordBatch:
    lengths = [len(a) for a in arrays]
    if len(set(lengths)) > 1:
        detail = ", ".join(f"{f.name!r}: {n}" for f, n in zip(schema, lengths))
        raise ArrowInvalid(f"columns have different lengths ({detail})")
    for f, a in zip(schema, arrays):
        if storage_of(a).type != f.storage_type or (isinstance(a, ExtensionArray)
                                                    and a.type != f.extension_type):
            raise ArrowInvalid(f"column {f.name!r} is {a.type}, the schema says {f.type}")
        if not f.nullable and a.null_count:
            raise ArrowInvalid(f"column {f.name!r} is declared non-nullable but has "
                               f"{a.null_count} null(s)")
    return RecordBatch(schema, lengths[0] if lengths else 0, list(arrays))


def _schema_of_producer(obj) -> t.Schema:
    """The Schema an ``__arrow_c_schema__`` producer describes (a struct, as for batches)."""
    return import_schema(obj.__arrow_c_schema__())


def _type_of_producer(obj) -> t.DataType:
    """The DataType an ``__arrow_c_schema__`` producer describes (a field's: its type)."""
    return import_type(obj.__arrow_c_schema__())


hooks.fill("import_c_schema", _schema_of_producer)  # (``arrowmm.schema(pa_schema)`` works)
hooks.fill("import_c_type", _type_of_producer)  # (``chunked.cast(pa.int32())`` works)
hooks.fill("build_array", array)  # (columns given as lists or numpy arrays to tables)
