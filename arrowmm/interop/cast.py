"""The safe casts writers make with ``cast=True``, and the words for a schema that differs.

``cast_problem(got, want)`` says whether a column of type ``got`` can be written as ``want``
(None) or why not; ``cast_column`` does it, checking the values where the type alone does
not make the cast exact.  The casts, each value for value as pyarrow's safe ``cast``:

* integers to integers whose range holds every value (widening always does);
* floats to wider floats; integers to floats that hold every value exactly;
* between ``string``, ``large_string`` and ``string_view`` (``binary`` likewise);
* a dictionary to its value type (decoded), values to a dictionary (encoded), and a
  dictionary to one of other index and value types; where the writer already wrote a
  dictionary for the field, values are encoded against it (new values go at its end);
* a nullable column to a non-nullable field, when it holds no null.

Anything else (another temporal unit, nested types that differ) is refused with
``ArrowInvalid`` naming the field.  ``schema_difference(got, want)`` names the first
difference between two schemas, both types and what would fix it.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .. import types as t
from .._core._region import as_view
from ..arrays.array import Array, make_array
from ..arrays.batch import RecordBatch
from ..arrays.concat import concat_arrays
from ..errors import ArrowInvalid
from .from_python import binary_views, convert, validity_from_mask

__all__ = ["cast_problem", "cast_column", "cast_batch", "schema_difference"]

_MANTISSA = {2: 11, 4: 24, 8: 53}  # float width -> integers up to 2**this are exact


def _family(dtype) -> Optional[str]:
    if isinstance(dtype, t.IntType):
        return "int"
    if isinstance(dtype, t.FloatType):
        return "float"
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType)):
        return "string" if dtype.utf8 else "binary"
    return None


def cast_problem(got: t.DataType, want: t.DataType) -> Optional[str]:
    """None when ``cast=True`` casts ``got`` to ``want`` (values permitting), else why not."""
    if got == want:
        return None
    if isinstance(want, t.DictionaryType):
        value = got.value_type if isinstance(got, t.DictionaryType) else got
        why = cast_problem(value, want.value_type)
        return None if why is None else f"its values: {why}"
    if isinstance(got, t.DictionaryType):
        why = cast_problem(got.value_type, want)
        return None if why is None else f"its dictionary's values: {why}"
    a, b = _family(got), _family(want)
    if a == b == "int":
        return None
    if a == b == "float":
        if want.byte_width >= got.byte_width:
            return None
        return f"{got} to {want} may round; cast=True casts only where every value is kept"
    if a == "int" and b == "float":
        return None
    if a is not None and a == b:
        return None
    return (f"{got} to {want} is not a safe cast (cast=True casts integers, floats, string and "
            f"binary widths and views, and to and from dictionaries)")


def _valid(array: Array) -> Optional[np.ndarray]:
    return array.validity_mask() if array.null_count else None


def _validity(array: Array):
    """(validity buffer, null count) of ``array`` re-based to offset 0."""
    valid = _valid(array)
    return validity_from_mask(None if valid is None else ~valid)


def _numbers(array: Array, want, path: str) -> Array:
    values = np.asarray(array.values())  # a view of the mapping (offset applied)
    valid = _valid(array)
    live = values if valid is None else values[valid]
    dtype = want.numpy_dtype
    if isinstance(want, t.IntType):
        if live.size:
            info = np.iinfo(dtype)
            lo, hi = int(live.min()), int(live.max())
            if lo < info.min or hi > info.max:
                bad = lo if lo < info.min else hi
                raise ArrowInvalid(f"field {path!r}: cannot cast {array.type} to {want}: value "
                                   f"{bad} is outside {want}'s range [{info.min}, {info.max}]")
    elif isinstance(array.type, t.IntType) and live.size:
        limit = 2 ** _MANTISSA[want.byte_width]
        outside = np.flatnonzero((live > limit) | (live < -limit))
        if outside.size:
            raise ArrowInvalid(f"field {path!r}: cannot cast {array.type} to {want} exactly: "
                               f"value {int(live[outside[0]])} has no exact {want} (integers "
                               f"up to 2**{_MANTISSA[want.byte_width]} do)")
    out = values.astype(dtype)
    if valid is not None:
        out[~valid] = 0
    validity, nulls = _validity(array)
    return make_array(want, len(array), [validity, as_view(out)], null_count=nulls)


def _binaries(array: Array, want, path: str) -> Array:
    got = array.type
    got_view, want_view = isinstance(got, t.BinaryViewType), isinstance(want, t.BinaryViewType)
    if not got_view and not want_view:  # the offsets in the other width, the data as it is
        offsets = array.value_offsets()
        if not want.large and int(offsets[-1]) > np.iinfo(np.int32).max:
            raise ArrowInvalid(f"field {path!r}: cannot cast {got} to {want}: its "
                               f"{int(offsets[-1])} bytes of data overflow 32-bit offsets")
        validity, nulls = _validity(array)
        return make_array(want, len(array), [validity, as_view(offsets.astype(want.offset_dtype)),
                                             array.buffers()[2]], null_count=nulls)
    if not got_view:  # to views
        offsets = array.value_offsets().astype(np.int64)
        data = array.values[int(offsets[0]):int(offsets[-1])]
        valid = _valid(array)
        return binary_views(np.diff(offsets), data, want, None if valid is None else ~valid)
    return convert(array.to_pylist(), want)


def _decoded(array: Array) -> Array:
    """A dictionary array's values, one per row (nulls where the index is null)."""
    values = array.dictionary
    return convert(array.to_pylist(), values.type)


def _encoded(array: Array, want: t.DictionaryType, path: str, existing: Optional[Array]) -> Array:
    """``array`` (values, or a dictionary array) as ``want``, indices into ``existing`` where
    there is one (the values it lacks added at its end, first seen first)."""
    if isinstance(array.type, t.DictionaryType):
        dictionary = cast_column(array.dictionary, want.value_type, f"{path}.dictionary")
        indices = array.indices  # (a method today; pyarrow's is a property)
        indices = indices() if callable(indices) else indices
        idx = np.asarray(indices.values()).astype(np.int64)
    else:
        dictionary = cast_column(array, want.value_type, path)
        idx = np.arange(len(array), dtype=np.int64)
    known = existing.to_pylist() if existing is not None else []
    where = {}
    for k, v in enumerate(known):
        where.setdefault(v, k)
    new = []
    remap = np.empty(len(dictionary), dtype=np.int64)
    for k, v in enumerate(dictionary.to_pylist()):
        j = where.get(v)
        if j is None:
            j = where[v] = len(known) + len(new)
            new.append(v)
        remap[k] = j
    if existing is None:
        values = convert(new, want.value_type)
    elif new:
        values = concat_arrays([existing, convert(new, want.value_type)])
    else:
        values = existing  # the very dictionary written: nothing to send again
    limit = int(np.iinfo(want.index_type.numpy_dtype).max)
    if len(values) - 1 > limit:
        raise ArrowInvalid(f"field {path!r}: {len(values)} distinct values overflow the "
                           f"{want.index_type} indices of {want}")
    valid = _valid(array)
    out = remap[idx] if len(remap) else np.zeros(len(idx), np.int64)
    if valid is not None:
        out[~valid] = 0
    validity, nulls = _validity(array)
    indices = as_view(out.astype(want.index_type.numpy_dtype))
    return make_array(want, len(array), [validity, indices], null_count=nulls, dictionary=values)


def cast_column(array: Array, want: t.DataType, path: str,
                existing: Optional[Array] = None) -> Array:
    """``array`` as type ``want``, or ``ArrowInvalid`` naming ``path`` (see the module's list).

    ``existing``: for a dictionary ``want``, the dictionary already written for the field."""
    got = array.type
    if isinstance(want, t.DictionaryType):
        if got == want and (existing is None or array.dictionary is existing):
            return array
        why = cast_problem(got, want)
        if why is not None:
            raise ArrowInvalid(f"field {path!r}: cannot cast {got} to {want}: {why}")
        return _encoded(array, want, path, existing)
    if got == want:
        return array
    why = cast_problem(got, want)
    if why is not None:
        raise ArrowInvalid(f"field {path!r}: cannot cast {got} to {want}: {why}")
    if isinstance(got, t.DictionaryType):
        return cast_column(_decoded(array), want, path)
    if isinstance(want, (t.BinaryType, t.BinaryViewType)):
        return _binaries(array, want, path)
    return _numbers(array, want, path)


def cast_batch(batch: RecordBatch, schema: t.Schema, whose: str = "the writer's",
               existing: Callable[[int], Optional[Array]] = lambda k: None) -> RecordBatch:
    """``batch`` with ``schema``'s types (same names, in order), cast column by column.

    ``existing(k)``: the dictionary already written for column ``k``, if any."""
    got = batch.schema
    if got.names != schema.names:
        raise ArrowInvalid(f"cannot cast the batch: {schema_difference(got, schema, whose)}")
    columns = []
    for k, (f, want) in enumerate(zip(got, schema)):
        col = batch.storage_column(k)
        if f.type != want.type and (isinstance(f.type, t.ExtensionType)
                                    or isinstance(want.type, t.ExtensionType)):
            raise ArrowInvalid(f"field {want.name!r}: cannot cast {f.type} to {want.type}: "
                               f"extension types are not cast")
        col = cast_column(col, want.storage_type, want.name, existing(k))
        if not want.nullable and col.null_count:
            raise ArrowInvalid(f"field {want.name!r}: {col.null_count} null(s), but "
                               f"{whose} field is not nullable")
        columns.append(col)
    out = t.Schema(schema.fields, got.metadata, schema.endianness)
    return RecordBatch(out, batch.num_rows, columns, metadata=batch.metadata)


def schema_difference(got: t.Schema, want: t.Schema, whose: str = "the file's") -> str:
    """The first way the schema ``got`` differs from ``want``, with both types and a fix."""
    if got.names != want.names:
        if sorted(got.names) == sorted(want.names):
            return (f"the columns are {got.names} where {whose} are {want.names}: select them "
                    f"in {whose} order")
        n = min(len(got), len(want))
        k = next((k for k in range(n) if got.names[k] != want.names[k]), n)
        first = (f"column {k} is named {got.names[k]!r}, {whose} {want.names[k]!r}"
                 if k < n else f"{len(got)} column(s) where {whose} schema has {len(want)}")
        missing = [x for x in want.names if x not in got.names]
        extra = [x for x in got.names if x not in want.names]
        detail = "; ".join(x for x in (f"missing {missing}" if missing else "",
                                       f"not in {whose} schema: {extra}" if extra else "") if x)
        return (f"{first} ({detail + '; ' if detail else ''}{whose} columns are {want.names}): "
                f"rename or select columns to match")
    for a, b in zip(got, want):
        if a.type != b.type:
            why = cast_problem(a.type, b.type)
            fix = ("write with cast=True to cast it" if why is None
                   else f"cast=True cannot ({why}); convert the column before writing")
            return f"column {a.name!r} is {a.type}, {whose} is {b.type}: {fix}"
        if a.nullable and not b.nullable:
            return (f"column {a.name!r} is nullable, {whose} is not: write with cast=True "
                    f"(the column must then hold no null)")
        if b.nullable and not a.nullable:
            return (f"column {a.name!r} is not nullable, {whose} is nullable: write with "
                    f"cast=True")
    return "they differ in their metadata or dictionary ids"
