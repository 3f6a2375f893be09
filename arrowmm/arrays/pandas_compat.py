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

import ast
import datetime
import json
import re
import uuid
from typing import List, NamedTuple, Optional

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

__all__ = ["batches_to_pandas", "array_to_pandas", "column_positions", "array_to_series",
           "ConversionOptions", "conversion_options", "raise_damage_named"]

_FIXED_OFFSET = re.compile(r"^([+-])(\d\d):(\d\d)$")


class ConversionOptions(NamedTuple):
    """pyarrow's ``to_pandas`` options that change how a column's values convert."""
    date_as_object: bool = True
    timestamp_as_object: bool = False
    integer_object_nulls: bool = False
    maps_as_pydicts: Optional[str] = None


_DEFAULT_OPTIONS = ConversionOptions()


def conversion_options(date_as_object=True, timestamp_as_object=False,
                       integer_object_nulls=False, maps_as_pydicts=None) -> ConversionOptions:
    """The options checked (``maps_as_pydicts`` is None, ``"lossy"`` or ``"strict"``)."""
    if maps_as_pydicts not in (None, "lossy", "strict"):
        raise ArrowInvalid(f"Invalid value for 'maps_as_pydicts': valid values are 'lossy', "
                           f"'strict' or `None` (default). Received {maps_as_pydicts!r}.")
    return ConversionOptions(bool(date_as_object), bool(timestamp_as_object),
                             bool(integer_object_nulls), maps_as_pydicts)


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


def _categorical(chunks: List[Array], dtype: t.DictionaryType,
                 options: ConversionOptions = _DEFAULT_OPTIONS):
    """One Categorical over dictionary chunks; their dictionaries unified in order of appearance
    (first dictionary first), as pyarrow unifies them."""
    pd = _pandas()
    if dtype.value_type.children or isinstance(dtype.value_type, t.RunEndEncodedType):
        raise ArrowNotImplementedError(f"no pandas conversion for {dtype}: Categorical "
                                       f"categories must be hashable, {dtype.value_type} values "
                                       f"are not")
    # only the valid entries convert: a null entry would make int64 categories float64
    # (rounded past 2**53); the slots pointing at it get code -1, as null slots do
    entries = [c.dictionary._valid_mask() for c in chunks]
    values_field = t.Field("values", dtype.value_type)  # (an arrow.uuid dictionary: UUIDs)
    dictionaries = [_values(c.dictionary if valid is None else c.dictionary.filter(valid),
                            values_field, options=options) for c, valid in zip(chunks, entries)]
    every = pd.Index(np.concatenate(dictionaries) if dictionaries else [])
    categories = every[every.notna()].unique()
    codes = []
    for chunk, dictionary, valid_entries in zip(chunks, dictionaries, entries):
        size = len(chunk.dictionary)
        remap = np.full(size + 1, -1, dtype=np.int64)  # (the last: null slots' -1 indexes it)
        where = slice(0, size) if valid_entries is None else np.flatnonzero(valid_entries)
        remap[where] = categories.get_indexer(pd.Index(dictionary))
        idx = chunk.indices.values().astype(np.int64)
        valid = chunk._valid_mask()
        live = idx if valid is None else idx[valid]
        if live.size and (int(live.min()) < 0 or int(live.max()) >= size):
            # (a negative one too: remap[-2] would read another entry's code)
            bad = int(live.min()) if int(live.min()) < 0 else int(live.max())
            raise ArrowInvalid(f"dictionary index {bad} out of range for a dictionary of "
                               f"{size} values")
        if valid is not None:
            idx = np.where(valid, idx, -1)
        codes.append(remap[idx])
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


def _holds_map(dtype: t.DataType) -> bool:
    """Whether a map lies anywhere inside ``dtype`` (``dtype`` itself not counted)."""
    inner = [f.type if isinstance(f, t.Field) else f for f in dtype.children]
    return any(isinstance(c, t.MapType) or _holds_map(c) for c in inner)


def _map_dicts(array: Array, name, options: ConversionOptions) -> np.ndarray:
    """A map column as one dict per row (``maps_as_pydicts``): a later duplicate key wins
    (``"lossy"``) or is refused (``"strict"``), as pyarrow's."""
    rows = convert(array, _element_converter(options))
    out = np.empty(len(rows), dtype=object)  # (None where the row is null)
    for i, row in enumerate(rows):
        if row is None:
            continue
        try:
            out[i] = entries = dict(row)
        except TypeError as exc:  # (a key numpy gives as an array: a list or struct key)
            raise ArrowInvalid(f"column {name!r}, row {i}: maps_as_pydicts needs hashable map "
                               f"keys: {exc}") from None
        if options.maps_as_pydicts == "strict" and len(entries) != len(row):
            raise ArrowInvalid(f"column {name!r}, row {i}: the map has {len(row)} entries but "
                               f"{len(entries)} distinct keys; maps_as_pydicts='strict' refuses "
                               f"to drop the duplicates ('lossy' keeps the last)")
    return out


def _option_bound(dtype: t.DataType, options: ConversionOptions) -> bool:
    """Whether ``options`` change how values of ``dtype`` inside a nested column convert (a
    date always does: ``to_pandas`` gives dates as objects where ``to_numpy`` gives
    datetime64[D]); dictionaries and run-end encoded values are not looked into."""
    if isinstance(dtype, t.ExtensionType):
        dtype = dtype.storage_type
    if isinstance(dtype, t.DateType):
        return True
    if isinstance(dtype, t.TimestampType):
        return options.timestamp_as_object and dtype.unit != "ns"
    if isinstance(dtype, t.IntType):
        return options.integer_object_nulls
    if isinstance(dtype, (t.DictionaryType, t.RunEndEncodedType)):
        return False
    return any(_option_bound(f.type, options) for f in dtype.children)


def _element_converter(options: ConversionOptions):
    """``convert``'s ``elements`` for ``to_pandas``: a nested column's children convert as
    pyarrow's ``to_pandas`` converts them under ``options`` (dates, timestamps, integers with
    nulls), the others as ``to_numpy`` converts them."""
    def elements(child):
        child = storage_of(child)
        dtype = child.type
        if not _option_bound(dtype, options):
            if isinstance(dtype, t.FixedSizeListType):  # (rows, not its 2-D view)
                return convert(child, elements)
            return child.to_numpy(zero_copy_only=False)
        if isinstance(dtype, t.DateType):
            if options.date_as_object:
                return object_array(child.to_pylist())
            return child.to_numpy(zero_copy_only=False).astype("datetime64[ms]")
        if isinstance(dtype, (t.TimestampType, t.IntType)):
            return object_array(child.to_pylist()) if child.null_count or \
                isinstance(dtype, t.TimestampType) else child.to_numpy(zero_copy_only=False)
        return convert(child, elements)
    return elements


def _values(array: Array, field: Optional[t.Field], deduplicate: bool = True,
            options: ConversionOptions = _DEFAULT_OPTIONS):
    """One column's values as pyarrow's ``to_pandas`` gives them (before the Series is made);
    ``deduplicate``: equal strings / bytes share one object (``deduplicate_objects``)."""
    array = storage_of(array)  # (extension columns convert as their storage, uuid aside)
    dtype = array.type
    if isinstance(dtype, t.BinaryType) and hasattr(array, "to_objects"):
        return array.to_objects(deduplicate)
    if field is not None and field.extension_name == "arrow.uuid" and \
            dtype == t.FixedSizeBinaryType(16):  # (the name over other storage: the storage)
        return _uuid(array)
    if isinstance(dtype, t.DateType):
        if options.date_as_object:
            return object_array(array.to_pylist())
        return array.to_numpy(zero_copy_only=False).astype("datetime64[ms]")  # (NaT stays)
    if isinstance(dtype, t.RunEndEncodedType) and not getattr(dtype.value_type, "tz", None):
        # decoded first, as pyarrow's, so the values' rules and options apply (dates as dates);
        # zoned timestamps aside: pyarrow gives them naive in UTC, as the path below does
        return _values(array.decoded(), None, deduplicate, options)
    if isinstance(dtype, t.IntervalType) and dtype.unit == "MONTH_DAY_NANO":
        return _month_day_nano(array)
    if options.timestamp_as_object and isinstance(dtype, t.TimestampType) and \
            dtype.unit != "ns":  # (a table's ns columns stay datetime64, as pyarrow's)
        return object_array(array.to_pylist())
    if options.integer_object_nulls and isinstance(dtype, t.IntType) and array.null_count:
        return object_array(array.to_pylist())
    if options.maps_as_pydicts is not None:
        name = None if field is None else field.name
        if isinstance(dtype, t.MapType):
            return _map_dicts(array, name, options)
        if _holds_map(dtype):
            raise ArrowNotImplementedError(f"column {name!r}: maps_as_pydicts converts map "
                                           f"columns, not maps inside {dtype}")
    if isinstance(dtype, t.TimestampType) and dtype.tz:
        pd = _pandas()
        naive = with_nulls(array.values().view(f"datetime64[{dtype.unit}]"), array._valid_mask())
        return pd.DatetimeIndex(naive).tz_localize("UTC").tz_convert(_tzinfo(dtype.tz)).array
    if isinstance(dtype, t.FixedSizeListType) or (dtype.children and not isinstance(
            dtype, (t.UnionType, t.DictionaryType, t.RunEndEncodedType)) and
            _option_bound(dtype, options)):  # (rows, not a list's 2-D view)
        return convert(array, _element_converter(options))
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
    if isinstance(dtype, pd.PeriodDtype):
        return _period(array, dtype)
    if isinstance(dtype, pd.IntervalDtype):
        return _interval(array, dtype)
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


def _period(array: Array, dtype):
    """A ``PeriodArray`` of the int64 ordinals pandas stores (its ``__from_arrow__``)."""
    pd = _pandas()
    if not isinstance(array.type, t.IntType):
        raise TypeError(f"{dtype} is stored as int64 ordinals, not {array.type}")
    ordinals = np.array(array.cast(t.int64()).values(), dtype=np.int64)  # (pandas keeps it)
    valid = array._valid_mask()
    if valid is not None:
        ordinals[~valid] = np.iinfo(np.int64).min  # (pandas' NaT ordinal)
    return pd.arrays.PeriodArray(ordinals, dtype=dtype)


def _interval(array: Array, dtype):
    """An ``IntervalArray`` of the ``left`` / ``right`` struct pandas stores (its
    ``__from_arrow__``); a null slot, or a null bound, is a missing interval (pandas' own
    reads a null's stored bounds as an interval)."""
    pd = _pandas()
    if not isinstance(array.type, t.StructType) or \
            [f.name for f in array.type.fields] != ["left", "right"]:
        raise TypeError(f"{dtype} is stored as struct<left, right>, not {array.type}")
    bounds = [array.field(k) for k in range(2)]
    left, right = (np.asarray(b.to_numpy(zero_copy_only=False), dtype=dtype.subtype)
                   for b in bounds)
    masks = [m for m in (array._valid_mask(), *(b._valid_mask() for b in bounds))
             if m is not None]
    if masks:
        missing = ~np.logical_and.reduce(masks)
        if left.dtype.kind in "iub":  # (no NaN in integers: pandas makes these float64)
            left, right = left.astype(np.float64), right.astype(np.float64)
        left[missing] = right[missing] = np.array("NaT" if left.dtype.kind in "mM" else np.nan,
                                                  dtype=left.dtype)
    return pd.arrays.IntervalArray.from_arrays(left, right, closed=dtype.closed)


def _extension_dtype(field: t.Field):
    """The pandas dtype of a column pandas wrote as its own Arrow extension type
    (``pandas.period``, ``pandas.interval``), which pyarrow restores (pandas registers both
    with pyarrow) whatever the ``pandas`` metadata says; None for any other column."""
    name = field.extension_name
    if name not in ("pandas.period", "pandas.interval"):
        return None
    pd = _pandas()
    text = field.storage_metadata.get(t.EXTENSION_METADATA, "")
    try:
        spec = json.loads(text)
        if name == "pandas.period":
            return pd.PeriodDtype(spec["freq"])
        subtype = field.storage_type.fields[0].type.to_pandas_dtype()  # (pandas' own choice)
        return pd.IntervalDtype(subtype, spec["closed"])
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            NotImplementedError) as exc:
        raise ArrowInvalid(f"column {field.name!r}: its {name} extension metadata {text!r} "
                           f"names no pandas dtype ({type(exc).__name__}: {exc})") from None


def _stored_dtypes(meta: dict, schema: t.Schema, categorical_names, strings_to_categorical):
    """Column name -> the pandas extension dtype the ``pandas`` metadata names for it, chosen
    as pyarrow chooses: only dtypes pandas can make from Arrow (``__from_arrow__``), a
    ``string`` dtype not for a column that becomes a Categorical; numpy dtypes, Categorical
    and zoned timestamps are the default conversion's already."""
    pd = _pandas()
    out = {}
    for entry in meta.get("columns", []):
        if not isinstance(entry, dict):
            continue
        name = entry.get("field_name", entry.get("name"))
        numpy_type = entry.get("numpy_type")
        if not isinstance(numpy_type, str) or numpy_type in _NUMPY_TYPES:
            continue
        try:
            dtype = pd.api.types.pandas_dtype(numpy_type)
        except (TypeError, ValueError):
            continue
        if not isinstance(dtype, pd.api.extensions.ExtensionDtype) or \
                isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)) or \
                not hasattr(dtype, "__from_arrow__"):
            continue
        if isinstance(dtype, pd.StringDtype) and (
                strings_to_categorical or name in categorical_names or
                any(f.name == name and isinstance(f.storage_type, t.DictionaryType)
                    for f in schema)):
            continue
        out[name] = dtype
    return out


#: numpy dtypes pyarrow does not look up as pandas dtypes (they are no extension dtype)
_NUMPY_TYPES = frozenset(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64", "float16", "float32", "float64", "object", "bool",
                          "category"])


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
                    categorical: bool = False, types_mapper=None, stored_dtype=None,
                    options: ConversionOptions = _DEFAULT_OPTIONS):
    """A ``pandas.Series`` (named ``field.name``) of the concatenated ``chunks``; a dictionary
    column, or any column with ``categorical``, as a ``Categorical``; a column whose type
    ``types_mapper`` maps to a pandas dtype (not None), as that dtype; else a pandas
    extension type's column (period, interval), or one ``stored_dtype`` (the ``pandas``
    metadata's) names, as that dtype."""
    pd = _pandas()
    dtype = types_mapper(field.type) if types_mapper is not None else None
    if dtype is not None:
        array = concat_arrays(chunks) if len(chunks) != 1 else chunks[0]
        return pd.Series(_mapped(array, field, dtype), name=field.name, copy=False)
    restored, source = _extension_dtype(field), f"its {field.extension_name} extension type"
    if restored is None:
        restored, source = stored_dtype, "the schema's 'pandas' metadata"
    if restored is not None:
        array = concat_arrays(chunks) if len(chunks) != 1 else chunks[0]
        try:
            values = _mapped(array, field, restored)
        except (TypeError, ValueError, ArithmeticError, ArrowNotImplementedError) as exc:
            raise ArrowInvalid(f"column {field.name!r}: its {field.type} values do not make "
                               f"the pandas dtype {restored} that {source} names "
                               f"({type(exc).__name__}: {exc})") from exc
        return pd.Series(values, name=field.name, copy=False)
    if isinstance(field.storage_type, t.DictionaryType):
        values = _categorical(chunks, field.storage_type, options)
    else:
        array = concat_arrays(chunks) if len(chunks) != 1 else chunks[0]
        values = _values(array, field, deduplicate_objects, options)
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


def raise_damage_named(cause: ArrowInvalid, batches, columns, first: int = 0) -> None:
    """Raise the error of the first of ``columns`` in ``batches`` (numbered from ``first``)
    whose full validation fails, naming its batch and column as the exports name them; return
    if none fails.  For a conversion that raised ``cause`` meeting damage in a column's values:
    the array's own message names no column, and over gathered batches a row of all of them."""
    for i, batch in enumerate(batches, first):
        for k in columns:
            where = f"batch {i}, column {k} ({batch.schema.field(k).name!r})"
            try:
                batch.column(k).validate(True, where)
            except ArrowInvalid as named:
                raise named from cause


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
                      deduplicate_objects: bool = True, columns=None, types_mapper=None,
                      options: ConversionOptions = _DEFAULT_OPTIONS):
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
    options : ConversionOptions
        pyarrow's ``date_as_object`` (True: ``datetime.date`` objects; False:
        ``datetime64[ms]``), ``timestamp_as_object`` (``datetime.datetime`` objects for
        timestamps in s, ms, us; ns columns stay ``datetime64[ns]``, as pyarrow's),
        ``integer_object_nulls`` (integers with nulls as Python ints and None, not float64)
        and ``maps_as_pydicts`` (``"lossy"`` / ``"strict"``: map columns as dicts, a
        duplicate key kept last or refused; maps inside other types are refused).
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
    meta = None if ignore_metadata else _pandas_metadata(schema)
    stored = {} if meta is None else _stored_dtypes(meta, schema, wanted, strings_to_categorical)
    columns = []
    for k, f in zip(wanted_columns, schema):
        if batches:
            whole = None if bases is None else gathered_column(batches, k, bases)
            chunks = [whole] if whole is not None else [b.column(k) for b in batches]
        else:
            chunks = [empty_array(f.type)]
        categorical = f.name in wanted or (strings_to_categorical and
                                           isinstance(f.type, (t.BinaryType, t.BinaryViewType)))
        try:
            columns.append(array_to_pandas(chunks, f, deduplicate_objects=deduplicate_objects,
                                           categorical=categorical, types_mapper=types_mapper,
                                           stored_dtype=stored.get(f.name), options=options))
        except ArrowInvalid as exc:
            raise_damage_named(exc, batches, [k])
            raise
    labels = pd.Index(list(schema.names), dtype=object)
    index = pd.RangeIndex(num_rows)
    if meta is not None:  # (columns and labels become what the metadata describes)
        labels, index, columns = _apply_metadata(meta, list(schema.names), columns, num_rows)
    # Object and Categorical columns were made here, for this frame: they go in as they are
    # (a million strings copied again cost as much as making them); the others may view
    # the source (read-only, or a caller's array) and are copied, as pyarrow's frames are.
    columns = [c if c.dtype == object or isinstance(c.dtype, pd.CategoricalDtype) else c.copy()
               for c in columns]
    frame = pd.concat(columns, axis=1, ignore_index=True, copy=False) if columns else \
        pd.DataFrame(index=pd.RangeIndex(num_rows))
    frame.columns = labels
    frame.index = index
    return frame


def _apply_metadata(meta: dict, names, columns, num_rows):
    """Index columns and the column labels (original names, their index's levels) from
    pyarrow's ``pandas`` metadata."""
    pd = _pandas()
    entries = [c for c in meta.get("columns", []) if isinstance(c, dict)]
    original = {c.get("field_name"): c.get("name") for c in entries}
    columns = list(columns)
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
    return _column_labels(meta, names), index, columns


def _typed_labels(labels, level: dict):
    """``labels`` as the dtype ``level`` (a ``column_indexes`` entry) names, where they take
    it (pyarrow stores labels that were not strings as text)."""
    pd = _pandas()
    labels = pd.Index(labels)
    label_type = level.get("numpy_type")
    if label_type not in (None, "object") and len(labels):
        try:
            return labels.astype(label_type)
        except (TypeError, ValueError):
            pass
    return labels


def _column_labels(meta: dict, names):
    """The frame's column labels: one level named as ``column_indexes`` names it, or a
    ``MultiIndex`` when it lists several (each name is then a tuple's text, as pyarrow
    writes it)."""
    pd = _pandas()
    levels = [lv if isinstance(lv, dict) else {} for lv in meta.get("column_indexes") or [{}]]
    if len(levels) == 1:
        return pd.Index(list(_typed_labels(names, levels[0])), name=levels[0].get("name"))
    tuples = []
    for name in names:
        try:
            label = ast.literal_eval(name)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            label = None
        if not (isinstance(label, tuple) and len(label) == len(levels)):
            raise ArrowInvalid(f"the 'pandas' metadata gives the columns {len(levels)} index "
                               f"levels, but column name {name!r} is no tuple of "
                               f"{len(levels)} labels")
        tuples.append(label)
    labels = pd.MultiIndex.from_tuples(tuples, names=[lv.get("name") for lv in levels])
    return pd.MultiIndex(levels=[_typed_labels(lv, spec) for lv, spec in
                                 zip(labels.levels, levels)],
                         codes=labels.codes, names=labels.names)


class PandasConvertible:
    """``to_pandas`` written once for every object that has it: a record batch, the readers.

    A class gives its ``schema`` and ``_pandas_batches()`` (the batches the frame holds)."""

    __slots__ = ()

    def to_pandas(self, *, ignore_metadata: bool = False, categories=None,
                  strings_to_categorical: bool = False, deduplicate_objects: bool = True,
                  columns=None, types_mapper=None, date_as_object: bool = True,
                  timestamp_as_object: bool = False, integer_object_nulls: bool = False,
                  maps_as_pydicts=None, split_blocks: bool = False,
                  self_destruct: bool = False):
        """A ``pandas.DataFrame``, as pyarrow's ``to_pandas()`` gives it for the same data
        (dtypes and the index from ``pandas`` schema metadata included; a reader gives its
        remaining batches).  The options are pyarrow's (see ``batches_to_pandas``);
        ``columns`` selects columns first, ``types_mapper`` receives arrowmm types;
        ``split_blocks`` and ``self_destruct`` (pyarrow's memory-layout hints) are accepted
        and change nothing.  Needs pandas."""
        return batches_to_pandas(self.schema, self._pandas_batches(),
                                 ignore_metadata=ignore_metadata, categories=categories,
                                 strings_to_categorical=strings_to_categorical,
                                 deduplicate_objects=deduplicate_objects, columns=columns,
                                 types_mapper=types_mapper,
                                 options=conversion_options(date_as_object, timestamp_as_object,
                                                            integer_object_nulls,
                                                            maps_as_pydicts))


def array_to_series(chunks: List[Array], dtype: t.DataType,
                    options: ConversionOptions = _DEFAULT_OPTIONS):
    """``Array.to_pandas`` / ``ChunkedArray.to_pandas``: the ``chunks`` (of ``dtype``; none
    for an empty column) as an unnamed ``pandas.Series``, as pyarrow gives it."""
    series = array_to_pandas(chunks or [empty_array(dtype)], t.Field("", dtype),
                             options=options)
    series.name = None  # (pyarrow's Array.to_pandas names none)
    if options.timestamp_as_object and isinstance(dtype, t.TimestampType) and \
            dtype.unit == "ns":  # (pyarrow's arrays, not tables, give ns as Timestamp objects)
        series = series.astype(object)
    return series
