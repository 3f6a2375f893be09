"""pandas DataFrames from record batches, as pyarrow's ``to_pandas()`` gives them.

Why this module exists: pandas is where most Arrow data ends up, and code that
moves from pyarrow to arrowmm expects the same frame: the same dtypes
(integers with nulls as float64, time-zone-aware timestamps, strings as
objects, dictionaries as ``Categorical``, nested values as numpy arrays /
dicts / lists of tuples) and the index that ``pandas`` metadata written by
``pyarrow.Table.from_pandas`` describes.  pandas is optional: it is imported
only when a conversion runs.
"""
from __future__ import annotations

import datetime
import json
import re
import uuid
from typing import List, Optional

import numpy as np

from .. import types as t
from .array import Array
from .extension import storage_of
from .concat import concat_arrays
from .empty import empty_array
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .numpy_compat import convert, object_array, with_nulls
from .decode_ahead import decoded_in_order
from .gather import gather_bases, gathered_column

__all__ = ["batches_to_pandas", "array_to_pandas", "column_positions", "array_to_series"]

_FIXED_OFFSET = re.compile(r"^([+-])(\d\d):(\d\d)$")


def _pandas():
    try:
        import pandas
    except ImportError:  # pragma: no cover - exercised only without pandas
        raise ArrowNotImplementedError("to_pandas() needs pandas (pip install pandas)") from None
    return pandas


def _tzinfo(tz: str):
    """The tzinfo pyarrow gives pandas for an Arrow time zone string (pytz when installed)."""
    m = _FIXED_OFFSET.match(tz)
    if m is None:
        return tz  # a tz database name: pandas resolves it as pyarrow does
    minutes = (int(m.group(2)) * 60 + int(m.group(3))) * (-1 if m.group(1) == "-" else 1)
    try:
        import pytz
        return pytz.FixedOffset(minutes)
    except ImportError:  # pragma: no cover
        return datetime.timezone(datetime.timedelta(minutes=minutes))


def _month_day_nano(array: Array) -> np.ndarray:
    pd = _pandas()
    return object_array(None if v is None else
                        pd.DateOffset(months=v.months, days=v.days, nanoseconds=v.nanoseconds)
                        for v in array.to_pylist())


def _uuid(array: Array) -> np.ndarray:
    return object_array(None if v is None else uuid.UUID(bytes=v) for v in array.to_pylist())


def _categorical(chunks: List[Array], dtype: t.DictionaryType):
    """One Categorical over dictionary chunks; their dictionaries unified in order of appearance
    (first dictionary first), as pyarrow unifies them."""
    pd = _pandas()
    if dtype.value_type.children or isinstance(dtype.value_type, t.RunEndEncodedType):
        raise ArrowNotImplementedError(f"no pandas conversion for {dtype}: Categorical "
                                       f"categories must be hashable, {dtype.value_type} values "
                                       f"are not")
    dictionaries = [_values(c.dictionary, None) for c in chunks]
    every = pd.Index(np.concatenate(dictionaries) if dictionaries else [])
    categories = every[every.notna()].unique()
    codes = []
    for chunk, dictionary in zip(chunks, dictionaries):
        remap = np.append(categories.get_indexer(pd.Index(dictionary)), -1)
        idx = chunk.indices.values().astype(np.int64)
        valid = chunk._valid_mask()
        if valid is not None:
            idx = np.where(valid, idx, -1)
        live = idx[idx >= 0]
        if live.size and int(live.max()) >= len(dictionary):
            raise ArrowInvalid(f"dictionary index {int(live.max())} out of range for a dictionary "
                               f"of {len(dictionary)} values")
        codes.append(remap[idx])  # -1 (null) indexes the appended -1
    all_codes = np.concatenate(codes) if codes else np.zeros(0, np.int64)
    return pd.Categorical.from_codes(all_codes, categories=categories, ordered=dtype.ordered)


def _factorized(array: Array, values):
    """``array`` (``values``: its column as ``_values`` gave it) as a Categorical whose
    categories come in order of first appearance, nulls missing: what pyarrow's
    ``categories=`` / ``strings_to_categorical=`` give (it dictionary-encodes the column
    first, so integer categories stay integers even when the column has nulls)."""
    pd = _pandas()
    valid = array._valid_mask() if array.null_count else None
    if valid is not None and isinstance(array.type, (t.IntType, t.FloatType)):
        codes = np.full(len(array), -1, dtype=np.int64)
        live, uniques = pd.factorize(array.values()[valid])
        codes[valid] = live
        return pd.Categorical.from_codes(codes, categories=pd.Index(uniques))
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=values.dtype))


def _values(array: Array, field: Optional[t.Field], deduplicate: bool = True):
    """One column's values as pyarrow's ``to_pandas`` gives them (before the Series is made);
    ``deduplicate``: equal strings / bytes share one object (``deduplicate_objects``)."""
    array = storage_of(array)  # (extension columns convert as their storage, uuid aside)
    dtype = array.type
    if isinstance(dtype, t.BinaryType) and hasattr(array, "to_objects"):
        return array.to_objects(deduplicate)
    if field is not None and field.extension_name == "arrow.uuid":
        return _uuid(array)
    if isinstance(dtype, t.DateType):  # pyarrow's default date_as_object=True
        return object_array(array.to_pylist())
    if isinstance(dtype, t.IntervalType) and dtype.unit == "MONTH_DAY_NANO":
        return _month_day_nano(array)
    if isinstance(dtype, t.TimestampType) and dtype.tz:
        pd = _pandas()
        naive = with_nulls(array.values().view(f"datetime64[{dtype.unit}]"), array._valid_mask())
        return pd.DatetimeIndex(naive).tz_localize("UTC").tz_convert(_tzinfo(dtype.tz)).array
    if isinstance(dtype, t.FixedSizeListType):  # a numpy array per row (not the 2-D view)
        return convert(array)
    if isinstance(dtype, t.UnionType) or (isinstance(dtype, t.IntervalType)
                                          and dtype.unit != "MONTH_DAY_NANO"):
        raise ArrowNotImplementedError(f"no pandas conversion for {dtype} (pyarrow has none)")
    return array.to_numpy(zero_copy_only=False)


_MASKED_KINDS = {"i": lambda bits: t.IntType(bits, True), "u": lambda bits: t.IntType(bits, False),
                 "f": t.FloatType, "b": lambda bits: t.BoolType()}
#: pandas' nullable dtypes: values plus a mask, made exactly (no float or object detour)
_MASKED_DTYPES = frozenset(["Int8Dtype", "Int16Dtype", "Int32Dtype", "Int64Dtype", "UInt8Dtype",
                            "UInt16Dtype", "UInt32Dtype", "UInt64Dtype", "Float32Dtype",
                            "Float64Dtype", "BooleanDtype"])


def _mapped(array: Array, field: t.Field, dtype):
    """``array`` as the pandas extension array of ``dtype`` (what a ``types_mapper`` gave).

    pandas' own nullable dtypes (``Int64``, ``Float32``, ``boolean``) are made exactly from
    the values and the validity, the values first cast safely to the dtype's width as pandas'
    ``__from_arrow__`` does (a string column for ``Int64`` is a TypeError there and here); any
    other dtype is made by ``pandas.array`` from the values pyarrow's default gives."""
    pd = _pandas()
    array = storage_of(array)
    numpy_type = getattr(dtype, "numpy_dtype", None)
    if type(dtype).__name__ in _MASKED_DTYPES and numpy_type is not None and \
            numpy_type.kind in _MASKED_KINDS:
        source = array.type
        if isinstance(source, t.DictionaryType) or isinstance(source, t.NullType):
            values = _values(array, field)
            return pd.array(values, dtype=dtype)
        if not isinstance(source, (t.IntType, t.FloatType, t.BoolType)) or \
                isinstance(source, t.BoolType) != (numpy_type.kind == "b"):
            raise TypeError(f"Expected array of {dtype} type, got {source} instead (column "
                            f"{field.name!r}: the types_mapper's dtype)")
        want = _MASKED_KINDS[numpy_type.kind](8 * numpy_type.itemsize)
        cast = array.cast(want) if source != want else array
        values = np.array(cast.values(), dtype=numpy_type)  # (a copy: pandas may write to it)
        mask = ~cast.validity_mask()
        values[mask] = 0 if numpy_type.kind != "b" else False
        return dtype.construct_array_type()(values, mask)
    return pd.array(_values(array, field), dtype=dtype)


def arrowmm_types_mapper(types_mapper):
    """``types_mapper`` as a function of arrowmm types.

    pandas' idiom is ``types_mapper={pa.int64(): pd.Int64Dtype()}.get``: a dict keyed by
    *pyarrow* types, which an arrowmm type never equals, so every column would silently take
    the default conversion.  A bound ``dict.get`` whose keys include foreign types (anything
    with ``__arrow_c_schema__``) is looked up by the type's ``str`` instead, which is
    pyarrow's own ``str`` and what pyarrow hashes types by; any other callable is returned
    as it is."""
    mapping = getattr(types_mapper, "__self__", None)
    if not (isinstance(mapping, dict) and getattr(types_mapper, "__name__", None) == "get"):
        return types_mapper
    if all(isinstance(k, t.DataType) or not hasattr(k, "__arrow_c_schema__") for k in mapping):
        return types_mapper
    by_name = {str(k): v for k, v in mapping.items() if hasattr(k, "__arrow_c_schema__")}
    return lambda dtype: mapping.get(dtype, by_name.get(str(dtype)))


def array_to_pandas(chunks: List[Array], field: t.Field, *, deduplicate_objects: bool = True,
                    categorical: bool = False, types_mapper=None):
    """A ``pandas.Series`` (named ``field.name``) of the concatenated ``chunks``; a dictionary
    column, or any column with ``categorical``, as a ``Categorical``; a column whose type
    ``types_mapper`` maps to a pandas dtype (not None), as that dtype."""
    pd = _pandas()
    dtype = types_mapper(field.type) if types_mapper is not None else None
    if dtype is not None:
        array = concat_arrays(chunks) if len(chunks) != 1 else chunks[0]
        return pd.Series(_mapped(array, field, dtype), name=field.name, copy=False)
    if isinstance(field.storage_type, t.DictionaryType):
        values = _categorical(chunks, field.storage_type)
    else:
        array = concat_arrays(chunks) if len(chunks) != 1 else chunks[0]
        values = _values(array, field, deduplicate_objects)
        if categorical and isinstance(values, np.ndarray) and values.ndim == 1:
            values = _factorized(storage_of(array), values)
    if isinstance(values, np.ndarray) and values.dtype == object:  # (said, not inferred:
        return pd.Series(values, name=field.name, copy=False, dtype=object)  # pandas would
    return pd.Series(values, name=field.name, copy=False)  # scan a million strings for dates)


def _pandas_metadata(schema: t.Schema) -> Optional[dict]:
    text = (schema.metadata or {}).get("pandas")
    if text is None:
        return None
    try:
        meta = json.loads(text)
    except (ValueError, RecursionError) as exc:  # (RecursionError: JSON nested too deep)
        raise ArrowInvalid(f"the schema's 'pandas' metadata is not JSON: {exc}") from None
    return meta if isinstance(meta, dict) else None


def column_positions(schema: t.Schema, columns, what: str = "to_pandas(columns=...)",
                     refuse: type = TypeError) -> List[int]:
    """Positions of ``columns`` (names or indices) in ``schema``, for ``to_pandas(columns=)``
    and ``Table.select`` (``what``): KeyError for a name not in it (or in it twice), IndexError
    for an index out of range, ``refuse`` for a lone name or index instead of a list."""
    if isinstance(columns, (str, int)):
        raise refuse(f"{what} takes a list of column names or indices, got {columns!r}")
    names = schema.names
    out = []
    for c in columns:
        if isinstance(c, str):
            hits = [k for k, n in enumerate(names) if n == c]
            if len(hits) != 1:
                raise KeyError(f"Field {c!r} does not exist in schema" if not hits else
                               f"Field {c!r} exists {len(hits)} times in schema")
            out.append(hits[0])
        else:
            k = int(c)
            if not -len(names) <= k < len(names):
                raise IndexError(f"column index {c} out of range for {len(names)} columns")
            out.append(k % len(names))
    return out


def batches_to_pandas(schema: t.Schema, batches, *, ignore_metadata: bool = False,
                      categories=None, strings_to_categorical: bool = False,
                      deduplicate_objects: bool = True, columns=None, types_mapper=None):
    """A DataFrame of ``batches`` (all of ``schema``), as pyarrow's ``Table.to_pandas()``.

    Parameters
    ----------
    ignore_metadata : bool
        Skip the ``pandas`` schema metadata (index columns, column names).
    categories : list of str, optional
        Names of columns to give as ``pandas.Categorical`` (categories in order of first
        appearance, as pyarrow's dictionary encoding orders them); dictionary columns are
        always categorical.  Names not in the schema are ignored, as pyarrow does.
    strings_to_categorical : bool
        Every string and binary column as a ``Categorical``.
    deduplicate_objects : bool
        Equal strings (and bytes) share one Python object (pyarrow's default): a column
        of few distinct values costs memory for those only.
    columns : list of str or int, optional
        Only these columns, in this order (names or indices): the others are not converted
        (nor decoded).
    types_mapper : callable, optional
        pyarrow's: called with each column's type, it returns a pandas ``ExtensionDtype`` for
        the column (``pandas.Int64Dtype()``, ``pandas.StringDtype()``, ...) or None for the
        default conversion.  It receives **arrowmm** types (``arrowmm.int64()``, whose
        ``str`` is pyarrow's), not pyarrow ones; pandas' ``{pa.int64(): dtype}.get`` idiom
        works as it does with pyarrow (the dict's pyarrow keys are matched by ``str``).
    """
    pd = _pandas()
    types_mapper = arrowmm_types_mapper(types_mapper)
    batches = list(batches)
    if any(b.compression is not None for b in batches):  # (a batch at a time, on the pool)
        batches = list(decoded_in_order(batches))
    num_rows = sum(b.num_rows for b in batches)
    wanted = set(categories or ())
    bases = gather_bases(batches)  # (many small IPC batches: each column copied once, in C)
    wanted_columns = range(len(schema)) if columns is None else column_positions(schema, columns)
    if columns is not None:
        fields = [schema.fields[k] for k in wanted_columns]
        schema = t.Schema(fields, schema.metadata, schema.endianness)
    columns = []
    for k, f in zip(wanted_columns, schema):
        if batches:
            whole = None if bases is None else gathered_column(batches, k, bases)
            chunks = [whole] if whole is not None else [b.column(k) for b in batches]
        else:
            chunks = [empty_array(f.type)]
        categorical = f.name in wanted or (strings_to_categorical and
                                           isinstance(f.type, (t.BinaryType, t.BinaryViewType)))
        columns.append(array_to_pandas(chunks, f, deduplicate_objects=deduplicate_objects,
                                       categorical=categorical, types_mapper=types_mapper))
    meta = None if ignore_metadata else _pandas_metadata(schema)
    names = list(schema.names)
    index = pd.RangeIndex(num_rows)
    columns_name = None
    if meta is not None:  # (columns and names become what the metadata describes)
        names, index, columns, columns_name = _apply_metadata(meta, names, columns, num_rows)
    # Object and Categorical columns were made here, for this frame: they go in as they are
    # (a million strings copied again cost as much as making them); the others may view
    # the source (read-only, or a caller's array) and are copied, as pyarrow's frames are.
    columns = [c if c.dtype == object or isinstance(c.dtype, pd.CategoricalDtype) else c.copy()
               for c in columns]
    frame = pd.concat(columns, axis=1, ignore_index=True, copy=False) if columns else \
        pd.DataFrame(index=pd.RangeIndex(num_rows))
    frame.columns = pd.Index(names, name=columns_name) if meta is not None else \
        pd.Index(names, dtype=object)
    frame.index = index
    return frame


def _restore_extension_dtype(series, numpy_type):
    """pandas' own nullable dtypes (``Int64``, ``boolean``, ``string``...) named by the metadata,
    restored as pyarrow restores them."""
    pd = _pandas()
    if not isinstance(numpy_type, str) or numpy_type in ("object", "category"):
        return series
    try:
        dtype = pd.api.types.pandas_dtype(numpy_type)
    except (TypeError, ValueError):
        return series
    if not isinstance(dtype, pd.api.extensions.ExtensionDtype) or \
            isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)):
        return series
    return series.astype(dtype)


def _apply_metadata(meta: dict, names, columns, num_rows):
    """Index columns and original column names from pyarrow's ``pandas`` metadata."""
    pd = _pandas()
    entries = [c for c in meta.get("columns", []) if isinstance(c, dict)]
    original = {c.get("field_name"): c.get("name") for c in entries}
    stored_dtype = {c.get("field_name"): c.get("numpy_type") for c in entries}
    columns = [_restore_extension_dtype(col, stored_dtype.get(name))
               for col, name in zip(columns, names)]
    index_specs = meta.get("index_columns", [])
    index_parts, index_names = [], []
    for spec in index_specs:
        if isinstance(spec, str) and spec in names:
            k = names.index(spec)
            index_parts.append(columns.pop(k))
            names.pop(k)
            index_names.append(original.get(spec))
        elif isinstance(spec, dict) and spec.get("kind") == "range":
            start, stop, step = spec.get("start", 0), spec.get("stop", 0), spec.get("step", 1)
            rng = pd.RangeIndex(start, stop, step, name=spec.get("name"))
            if len(rng) == num_rows and len(index_specs) == 1:
                index_parts, index_names = [rng], None
    if index_names is None:
        index = index_parts[0]
    elif len(index_parts) == 1:
        index = pd.Index(index_parts[0].array, name=index_names[0])
    elif index_parts:
        index = pd.MultiIndex.from_arrays(index_parts, names=index_names)
    else:
        index = pd.RangeIndex(num_rows)
    names = [original.get(n, n) for n in names]
    levels = meta.get("column_indexes") or [{}]
    level = levels[0] if len(levels) == 1 and isinstance(levels[0], dict) else {}
    label_type = level.get("numpy_type")
    if label_type not in (None, "object") and names:
        try:  # labels that were not strings (pyarrow stores them as text)
            names = list(pd.Index(names).astype(label_type))
        except (TypeError, ValueError):
            pass
    return names, index, columns, level.get("name")


class PandasConvertible:
    """``to_pandas`` written once for every object that has it: a record batch, the readers.

    A class gives its ``schema`` and ``_pandas_batches()`` (the batches the frame holds)."""

    __slots__ = ()

    def to_pandas(self, *, ignore_metadata: bool = False, categories=None,
                  strings_to_categorical: bool = False, deduplicate_objects: bool = True,
                  columns=None, types_mapper=None):
        """A ``pandas.DataFrame``, as pyarrow's ``to_pandas()`` gives it for the same data
        (dtypes and the index from ``pandas`` schema metadata included; a reader gives its
        remaining batches).  The options are pyarrow's (see ``batches_to_pandas``);
        ``columns`` selects columns first, ``types_mapper`` receives arrowmm types.  Needs
        pandas."""
        return batches_to_pandas(self.schema, self._pandas_batches(),
                                 ignore_metadata=ignore_metadata, categories=categories,
                                 strings_to_categorical=strings_to_categorical,
                                 deduplicate_objects=deduplicate_objects, columns=columns,
                                 types_mapper=types_mapper)


def array_to_series(array: Array):
    """``Array.to_pandas``: one array as an unnamed ``pandas.Series``, as pyarrow gives it."""
    series = array_to_pandas([array], t.Field("", array.type))
    series.name = None  # (pyarrow's Array.to_pandas names none)
    return series
