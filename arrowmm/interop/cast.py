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

``cast_array(array, target_type, safe=True)`` is ``Array.cast`` (and so the ``cast`` of
chunked arrays, batches and tables): pyarrow's ``cast``, value for value, over the pairs
pyarrow casts between flat types (numbers and booleans, temporal units, dates and
timestamps, strings and binaries of every width and view, numbers to and from strings,
dictionaries, the null type to anything, extension arrays through their storage).
``safe=True`` raises ``ArrowInvalid`` where a value would not fit or would lose precision,
with pyarrow's words; ``safe=False`` wraps and truncates as pyarrow (C) does.  Pairs pyarrow
does not cast raise ``ArrowNotImplementedError`` ("Unsupported cast from X to Y").  Damage
(what ``validate(full=True)`` refuses) raises ``ArrowInvalid``, safe or not, before any cast
(``_check_input``): a cast would launder it into values that read as data.  Decimals
cast by ``decimal_cast``, lists, maps and structs by ``nested_cast``.  Dates, times, timestamps
and durations write text as pyarrow does (``temporal_text``; zoned ones in the zone's
wall-clock time, by ``zones``).  Strings parse to
timestamps and dates as pyarrow's ISO 8601 parser reads them (zone offsets with and without a
colon).  Numbers to and from strings are Cython passes over the whole buffers (``_cast.pyx``:
pyarrow's grammar, its shortest text of a float), as are strings to and from their views
(``text_views``, ``views_text``); the numeric and temporal casts are numpy passes.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

import numpy as np

from .. import hooks, types as t
from .._core._region import as_view
from .._core._offsets import check_binary_views, check_offsets
from .._core._utf8 import check_utf8_offsets
from ..arrays.array import Array, make_array
from ..arrays.extension import storage_of, wrap
from ..arrays.batch import RecordBatch
from ..arrays.concat import concat_arrays
from ..compute import hashing
from ..compute.selection import take_array
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ._cast import (exact_integers, first_outside, format_numbers, parse_texts, text_views,
                    views_text)
from .from_python import convert, validity_from_mask
from .decimal_cast import cast_decimal
from .nested_cast import cast_nested
from .temporal_text import format_dates, format_times, format_timestamps
from .zones import zone_offsets

__all__ = ["cast_problem", "cast_column", "cast_batch", "schema_difference", "cast_array"]

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
    if str(got) == str(want):  # (the text would name one type twice: say what differs)
        difference = _type_difference(got, want, "the target's")
        return f"{difference}, which cast=True does not change"
    return (f"{got} to {want} is not a safe cast (cast=True casts integers, floats, string and "
            f"binary widths and views, and to and from dictionaries)")


def _child_pairs(got: t.DataType, want: t.DataType) -> list:
    """The child fields of two types of one class, paired, each with what it is to its parent
    (a map's key and value, not its entries struct; none when the counts differ)."""
    if isinstance(got, t.MapType):
        return [("map key field", got.key_field, want.key_field),
                ("map value field", got.item_field, want.item_field)]
    kind = {t.StructType: "struct field", t.UnionType: "union field",
            t.RunEndEncodedType: "run-end encoded field"}.get(type(got), "list item field")
    if len(got.children) != len(want.children):
        return []
    return [(kind, a, b) for a, b in zip(got.children, want.children)]


def _first_difference(got: t.DataType, want: t.DataType, whose: str, path: tuple):
    """``(path, how)`` for the first nested field whose nullability, type parameters or
    extension differ (depth first, as ``==`` compares), or None."""
    if type(got) is not type(want) or str(got) != str(want):
        return path, f"is {got}, {whose} is {want}"
    if isinstance(got, t.ExtensionType):
        if got.storage_type != want.storage_type:
            return _first_difference(got.storage_type, want.storage_type, whose,
                                     path + ("extension storage",))
        return path, (f"has extension parameters {bytes(got.__arrow_ext_serialize__())!r}, "
                      f"{whose} {bytes(want.__arrow_ext_serialize__())!r}")
    if isinstance(got, t.DictionaryType):
        return _first_difference(got.value_type, want.value_type, whose,
                                 path + ("dictionary values",))
    for kind, a, b in _child_pairs(got, want):
        where = path + (f"{kind} {a.name!r}",)
        if a.nullable != b.nullable:
            return where, (f"is nullable, {whose} is not" if a.nullable else
                           f"is not nullable, {whose} is")
        if a.type != b.type:
            return _first_difference(a.type, b.type, whose, where)
    return None


def _type_difference(got: t.DataType, want: t.DataType, whose: str) -> str:
    """What differs between two unequal types whose text is the same (a map's or run-end
    encoded type's values print no nullability, an extension type neither its storage nor
    its parameters): the nested field, by its path, and how."""
    found = _first_difference(got, want, whose, ())
    if found is None:
        return f"{got} differs from {whose} {want} in a way its text does not show"
    path, how = found
    return f"its {' > '.join(path)} {how}" if path else f"it {how}"


def _valid(array: Array) -> Optional[np.ndarray]:
    return array.validity_mask() if array.null_count else None


def _validity(array: Array):
    """(validity buffer, null count) of ``array`` re-based to offset 0: its own bitmap where
    the offset is a whole byte (no copy), else repacked."""
    if not array.null_count:
        return None, 0
    if array.offset % 8 == 0 and array.validity is not None:
        start = array.offset // 8
        return array.validity.slice(start, min(array.validity.size - start,
                                               (len(array) + 7) // 8)), array.null_count
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
    _, offsets, buffers = text_layout(array)
    bits = array.validity if array.null_count else None
    try:
        if not got_view:  # views into the data buffer as it is (slices of it past 2 GiB)
            views, ranges = text_views(offsets, buffers[0], bits, array.offset)
        else:  # the views' bytes gathered into offsets and one data buffer
            offsets, data = views_text(offsets, buffers, bits, array.offset, len(array),
                                       want.large)
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"field {path!r}: cannot cast {got} to {want}: {exc}") from None
    validity, nulls = _validity(array)
    if not got_view:
        data = buffers[0]
        return make_array(want, len(array), [validity, as_view(views), *(
            data.slice(lo, hi - lo) for lo, hi in ranges.tolist())], null_count=nulls)
    return make_array(want, len(array), [validity, as_view(offsets), as_view(data)],
                      null_count=nulls)


def _decoded(array: Array) -> Array:
    """A dictionary array's values, one per row (nulls where the index is null): a take of
    the dictionary by the indices, which keeps every stored value (Python values would not:
    ``datetime.time`` drops nanoseconds, ``datetime`` ends at year 9999)."""
    values = array.dictionary
    if not len(values):  # (every index is null: a valid array has nothing to point at)
        return _nulls(len(array), values.type)
    return take_array(values, array.indices)


def _entry_key(value):
    """A dictionary entry's identity, as Arrow's hash table sees it: floats by their bits
    (``-0.0`` is not ``0.0``, and every NaN is one entry, where Python's ``==`` says
    ``-0.0 == 0.0`` and ``nan != nan``), lists and structs by their items (hashable)."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_entry_key(v) for v in value))
    if isinstance(value, dict):
        return ("struct", tuple((k, _entry_key(v)) for k, v in value.items()))
    return value


def _encoded(array: Array, want: t.DictionaryType, path: str, existing: Optional[Array]) -> Array:
    """``array`` (values, or a dictionary array) as ``want``, indices into ``existing`` where
    there is one (the values it lacks added at its end, first seen first)."""
    if isinstance(array.type, t.DictionaryType):
        dictionary = cast_column(array.dictionary, want.value_type, f"{path}.dictionary")
        idx = np.asarray(array.indices.values()).astype(np.int64)
    else:
        dictionary = cast_column(array, want.value_type, path)
        idx = np.arange(len(array), dtype=np.int64)
    from_values = not isinstance(array.type, t.DictionaryType)
    if hashing.hashable(dictionary.type):
        remap, firsts = _entries_hashed(dictionary, from_values, existing)
    else:
        remap, firsts = _entries_keyed(dictionary, from_values, existing)
    new = take_array(dictionary, np.array(firsts, dtype=np.int64))
    if existing is None:
        values = new
    elif len(firsts):
        values = concat_arrays([existing, new])
    else:
        values = existing  # the very dictionary written: nothing to send again
    limit = int(np.iinfo(want.index_type.numpy_dtype).max)
    if len(values) - 1 > limit:
        raise ArrowInvalid(f"field {path!r}: {len(values)} distinct values overflow the "
                           f"{want.index_type} indices of {want}")
    valid = _valid(array)
    if from_values:  # (``remap`` has a code per row already)
        out = remap
    else:
        if valid is not None:  # (a null slot's index may point anywhere: Arrow allows it)
            idx = np.where(valid, idx, 0)
        bad = np.flatnonzero((idx < 0) | (idx >= len(remap))) if len(idx) else idx
        if len(bad) and (valid is None or valid[bad].any()):
            row = int(bad[0] if valid is None else bad[valid[bad]][0])
            raise ArrowInvalid(f"field {path!r}: dictionary index {int(idx[row])} of row {row} "
                               f"is out of range for a dictionary of {len(remap)} values")
        out = remap[idx] if len(remap) else np.zeros(len(idx), np.int64)
    if valid is not None:
        out[~valid] = 0
    validity, nulls = _validity(array)
    indices = as_view(out.astype(want.index_type.numpy_dtype, copy=False))
    return make_array(want, len(array), [validity, indices], null_count=nulls, dictionary=values)


def _entries_hashed(dictionary: Array, from_values: bool, existing: Optional[Array]):
    """``_entries_keyed`` by the hash kernels of ``compute.hashing`` (values keyed by their
    bytes, floats by their bits: pyarrow's ``dictionary_encode``)."""
    codes, firsts, _ = hashing.codes(dictionary, not from_values)
    if existing is None:
        return codes, firsts
    remap = np.arange(len(firsts), dtype=np.int64)
    if len(existing) and len(firsts):
        # (the distinct entries hashed after ``existing``: an entry it holds is coded at its
        # first place there; the others, first seen first, go after it)
        both = concat_arrays([existing, take_array(dictionary, firsts)])
        both_codes, both_firsts, _ = hashing.codes(both, True)
        at = both_firsts[both_codes[len(existing):]]
        known = at < len(existing)
        remap = np.where(known, at, len(existing) + np.cumsum(~known) - 1)
        firsts = firsts[~known]
    else:
        remap += len(existing)
    return (remap[codes] if len(remap) else np.zeros(len(codes), np.int64)), firsts


def _entries_keyed(dictionary: Array, from_values: bool, existing: Optional[Array]):
    """Each of ``dictionary``'s rows' index in the dictionary written (``existing``'s entries,
    then the new ones, first seen first), and the rows of the new entries: keyed by Python
    value (``_entry_key``), for the values the hash kernels do not take."""
    # (keys from the stored integers of temporal values: datetime.time and timedelta drop
    # nanoseconds; the new entries are taken from ``dictionary`` as stored)
    known = existing.to_pylist(temporal="int") if existing is not None else []
    where = {}
    for k, v in enumerate(known):
        where.setdefault(_entry_key(v), k)
    firsts = []
    remap = np.empty(len(dictionary), dtype=np.int64)
    for k, v in enumerate(dictionary.to_pylist(temporal="int")):
        if v is None and from_values:  # (a null row: its index is masked, as pyarrow's)
            remap[k] = 0
            continue
        key = _entry_key(v)
        j = where.get(key)
        if j is None:
            j = where[key] = len(known) + len(firsts)
            firsts.append(k)
        remap[k] = j
    return remap, firsts


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
        if f.type != want.type or isinstance(want.type, t.DictionaryType):
            try:  # (damage raises before a cast can launder it, as in cast_array)
                col._validated(want.name)
            except ArrowInvalid as exc:
                raise ArrowInvalid(f"field {want.name!r}: cannot cast {f.type} to {want.type}: "
                                   f"{exc}") from None
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
            if str(a.type) == str(b.type):  # (the text would name one type twice)
                fix = ("write with cast=True to cast it" if why is None
                       else "cast=True does not change that; convert the column before writing")
                return (f"column {a.name!r} is {a.type} as {whose} is, but "
                        f"{_type_difference(a.type, b.type, whose)}: {fix}")
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


# -- Array.cast: pyarrow's cast ------------------------------------------------------------

_SCALE = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_DAY_S = 86_400
_MS_PER_DAY = 86_400_000
_I32, _I64 = np.iinfo(np.int32), np.iinfo(np.int64)


def _unsupported(got, want) -> ArrowNotImplementedError:
    return ArrowNotImplementedError(f"Unsupported cast from {got} to {want}")


def _with_values(array: Array, want, out: np.ndarray) -> Array:
    """``out`` (one value per row of ``array``) as an array of ``want``, ``array``'s nulls."""
    validity, nulls = _validity(array)
    if isinstance(want, t.BoolType):
        return make_array(want, len(out), [validity, as_view(
            np.packbits(out.astype(np.bool_), bitorder="little"))], null_count=nulls)
    return make_array(want, len(out), [validity, as_view(np.ascontiguousarray(
        out, dtype=want.numpy_dtype))], null_count=nulls)


def _reinterpreted(array: Array, want) -> Array:
    """The same buffers under ``want`` (same storage: int64 as timestamp, ...), zero-copy."""
    return make_array(want, len(array), array.buffers(), null_count=-1 if array.null_count else 0,
                      offset=array.offset)


def _live(array: Array, values: np.ndarray) -> np.ndarray:
    valid = _valid(array)
    return values if valid is None else values[valid]


def _zeroed(array: Array, values: np.ndarray) -> np.ndarray:
    """``values`` with the null slots set to 0 (whatever a null slot holds must not raise or
    leak into a result)."""
    valid = _valid(array)
    if valid is None:
        return values
    out = np.array(values)
    out[~valid] = 0
    return out


def _number_values(array: Array) -> np.ndarray:
    if isinstance(array.type, t.BoolType):
        return array.values()
    return np.asarray(array.values())


def _first_outside(values: np.ndarray, valid, lo: int, hi: int) -> int:
    """The first valid value outside ``[lo, hi]``, or -1 (numpy's vectorized min and max
    first where there is no null: one pass each, far quicker than the scalar scan)."""
    if valid is None and (not values.size or (lo <= values.min() and values.max() <= hi)):
        return -1
    return first_outside(values, valid, lo, hi)


def _cast_numbers(array: Array, want, safe: bool) -> Array:
    """Between numbers and booleans; ``safe`` checks each valid value in one pass
    (``_cast.first_outside`` / ``first_inexact``) and names the first that does not fit.
    Whatever sits under a null converts unchecked (numpy's wrap or garbage, never raised)."""
    got = array.type
    values = _number_values(array)
    if isinstance(want, t.BoolType):
        return _with_values(array, want, values != 0)
    valid = _valid(array)
    if isinstance(got, (t.IntType, t.BoolType)) and isinstance(want, t.IntType):
        if safe and isinstance(got, t.IntType):
            info, have = np.iinfo(want.numpy_dtype), np.iinfo(got.numpy_dtype)
            lo, hi = max(info.min, have.min), min(info.max, have.max)  # (pyarrow's words)
            k = _first_outside(values, valid, lo, hi) if (lo, hi) != (have.min, have.max) else -1
            if k >= 0:
                raise ArrowInvalid(f"Integer value {int(values[k])} not in range: {lo} to {hi}")
        return _with_values(array, want, values.astype(want.numpy_dtype))
    if isinstance(got, t.FloatType) and isinstance(want, t.IntType):
        info = np.iinfo(want.numpy_dtype)
        if safe:  # (checked and converted in one pass)
            wide = values.astype(np.float32) if got.byte_width == 2 else values
            out, k = exact_integers(wide, valid, float(info.min), float(info.max) + 1.0)
            if k >= 0:  # (pyarrow names a half float by its 16 bits as an integer)
                shown = int(values.view(np.uint16)[k]) if got.byte_width == 2 else \
                    f"{float(wide[k]):f}"
                raise ArrowInvalid(f"Float value {shown} was truncated converting to {want}")
            return _with_values(array, want, out.astype(want.numpy_dtype, copy=False))
        with np.errstate(invalid="ignore", over="ignore"):
            return _with_values(array, want, values.astype(want.numpy_dtype))
    if isinstance(got, t.IntType) and isinstance(want, t.FloatType):
        if safe:
            # (pyarrow checks a cast to float16 as one to float32 from integers of up to 32
            # bits, to float64 from 64-bit ones: 2049 rounds to 2048, 65520 becomes inf)
            width = want.byte_width if want.byte_width > 2 else max(4, got.byte_width)
            limit = 2 ** _MANTISSA[width]
            have = np.iinfo(got.numpy_dtype)
            lo, hi = max(-limit, int(have.min)), min(limit, int(have.max))  # (pyarrow's words)
            k = _first_outside(values, valid, lo, hi) if (lo, hi) != (have.min, have.max) else -1
            if k >= 0:
                raise ArrowInvalid(f"Integer value {int(values[k])} not in range: {lo} to "
                                   f"{limit}")
        with np.errstate(over="ignore"):
            return _with_values(array, want, values.astype(want.numpy_dtype))
    with np.errstate(over="ignore", invalid="ignore"):  # (float to float: rounds, overflows
        return _with_values(array, want, values.astype(want.numpy_dtype))  # to inf as pyarrow)


def _numbers_to_text(array: Array, want) -> Array:
    """Numbers, booleans as ``true``/``false``, written as pyarrow writes them (``_cast``'s
    ``format_numbers`` over the whole buffer; a half float as the double it is)."""
    got = array.type
    values = _number_values(array)
    if isinstance(got, t.BoolType):
        kind = "bool"
    elif isinstance(got, t.IntType):
        kind = "int" if got.signed else "uint"
    elif got.byte_width == 4:
        kind = "float32"
    else:
        kind, values = "float64", values.astype(np.float64, copy=False)
    return text_array(array, want, *format_numbers(values, _valid(array), kind))


def text_array(array: Array, want, offsets: np.ndarray, data: np.ndarray) -> Array:
    """The text of each row of ``array`` (int64 ``offsets`` into uint8 ``data``) as an array
    of ``want`` (string, large or view) with ``array``'s nulls."""
    got = array.type
    validity, nulls = _validity(array)
    if isinstance(want, t.BinaryViewType):  # (views into ``data``: slices of it past 2 GiB)
        views, ranges = text_views(offsets, data, validity, 0)
        return make_array(want, len(array), [validity, as_view(views), *(
            as_view(data[lo:hi]) for lo, hi in ranges.tolist())], null_count=nulls)
    if not want.large and int(offsets[-1]) > np.iinfo(np.int32).max:
        raise ArrowInvalid(f"cannot cast {got} to {want}: the {int(offsets[-1])} bytes of text "
                           f"overflow its 32-bit offsets (cast to large_string)")
    return make_array(want, len(array), [validity, as_view(offsets.astype(want.offset_dtype)),
                                         as_view(data)], null_count=nulls)


def _temporal_to_text(array: Array, want) -> Array:
    """Dates, times, timestamps and durations written as pyarrow writes them (durations as
    their integer count; the others by ``temporal_text``)."""
    got = array.type
    values = _zeroed(array, np.asarray(array.values()).astype(np.int64))
    valid = _valid(array)
    if isinstance(got, t.DurationType):
        text = format_numbers(values, valid, "int")
    elif isinstance(got, t.TimeType):
        text = format_times(values, got.unit, valid)
    elif isinstance(got, t.DateType):  # (date64: milliseconds to days toward zero, as pyarrow)
        text = format_dates(values, None, valid) if got.unit == "day" else \
            format_dates((values - np.fmod(values, _MS_PER_DAY)) // _MS_PER_DAY, values, valid)
    else:
        text = format_timestamps(values, got.unit, got.tz, valid)
    return text_array(array, want, *text)


def _parse_failure(text, want) -> ArrowInvalid:
    """pyarrow's words: the text as it is between quotes (not Python's repr of it)."""
    return ArrowInvalid(f"Failed to parse string: '{text}' as a scalar of type {want}")


def text_layout(array: Array) -> tuple:
    """(layout, offsets or view bytes, data buffers) of a string or binary array, as
    ``_cast.parse_texts`` reads them: 0 / 1 for 32 / 64-bit offsets, 2 for views."""
    if isinstance(array.type, t.BinaryViewType):
        buffers = array.buffers()
        views = np.frombuffer(buffers[1], dtype=np.uint8) if buffers[1] is not None else \
            np.zeros(0, np.uint8)
        return 2, views[16 * array.offset:16 * (array.offset + len(array))], buffers[2:]
    offsets = np.ascontiguousarray(array.value_offsets())
    return (1 if array.type.large else 0), offsets, [array.buffers()[2]]


def _text_to_numbers(array: Array, want) -> Array:
    """Strings parsed as pyarrow parses them (``_cast.parse_texts``, over the whole buffer):
    integers in decimal (``-`` but no ``+``, none for unsigned types) or ``0x`` hexadecimal (a
    bit pattern of the type's width), floats with a sign, exponent, ``nan`` or ``inf`` (a half
    float parsed as a float, then rounded, as pyarrow), booleans as ``true``/``false``/``1``/
    ``0`` in any case.  pyarrow names the last value it could not parse: so does this."""
    if isinstance(want, t.BoolType):
        kind, bits, dtype = "bool", 8, np.uint8
    elif isinstance(want, t.IntType):
        kind, bits, dtype = ("int" if want.signed else "uint"), 8 * want.byte_width, \
            want.numpy_dtype
    else:
        bits = 64 if want.byte_width == 8 else 32
        kind, dtype = "float", (np.float64 if bits == 64 else np.float32)
    layout, offsets, buffers = text_layout(array)
    out = np.zeros(len(array), dtype=dtype)
    bad = parse_texts(layout, offsets, buffers, len(array), _valid(array), kind, bits, out)
    if bad >= 0:
        if array.type.utf8 and layout != 2:  # (the parse checked their UTF-8: _check_input)
            check_utf8_offsets(buffers[0], offsets, len(array),
                               array.validity if array.null_count else None, array.offset,
                               f"cast({want})")
        text = array.slice(bad, 1).to_pylist()[0]
        if not array.type.utf8:
            text = text.decode("utf-8", "replace")
        if isinstance(want, t.BoolType):
            raise ArrowInvalid(f"Failed to parse value: {text}")
        raise _parse_failure(text, want)
    if isinstance(want, t.FloatType) and want.byte_width == 2:
        with np.errstate(over="ignore"):
            out = out.astype(np.float16)
    return _with_values(array, want, out)


def _cast_text(array: Array, want) -> Array:
    """Between string, binary and their large and view forms; to a string, UTF-8 checked."""
    got = array.type
    if want.utf8 and not got.utf8:
        if not isinstance(got, t.BinaryViewType):  # (in C, over the data the offsets reach)
            try:
                check_utf8_offsets(array.buffers()[2], array.value_offsets(), len(array),
                                   array.validity if array.null_count else None, array.offset,
                                   "array")
            except ArrowInvalid as exc:
                raise ArrowInvalid(f"Invalid UTF8 payload: {exc}") from None
        else:  # (in C, over the bytes the views hold)
            _, views, buffers = text_layout(array)
            try:
                check_binary_views(views, len(array), array.validity if array.null_count
                                   else None, array.offset, buffers, True, "array")
            except ArrowInvalid as exc:
                raise ArrowInvalid(f"Invalid UTF8 payload: {exc}") from None
    got_view, want_view = isinstance(got, t.BinaryViewType), isinstance(want, t.BinaryViewType)
    if got_view == want_view and getattr(got, "large", False) == getattr(want, "large", False):
        return _reinterpreted(array, want)
    return _binaries(array, want, "array")


def _valid_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _rescaled(values: np.ndarray, live: np.ndarray, got, want, frm: str, to: str,
              safe: bool) -> np.ndarray:
    """Counts of unit ``frm`` as counts of unit ``to``: a finer unit multiplies (out of range
    refused when ``safe``), a coarser one divides (a remainder refused when ``safe``; else
    truncated toward zero, as pyarrow's C division)."""
    a, b = _SCALE[frm], _SCALE[to]
    values = values.astype(np.int64)
    if a == b:
        return values
    if b > a:
        factor = b // a
        if safe and live.size:
            limit = np.iinfo(np.int64).max // factor
            bad = live[(live > limit) | (live < -limit)]
            if bad.size:
                raise ArrowInvalid(f"Casting from {got} to {want} would result in out of bounds "
                                   f"timestamp: {int(bad[0])}")
        with np.errstate(over="ignore"):
            return values * factor
    factor = a // b
    if safe and live.size:
        lost = live[live % factor != 0]
        if lost.size:
            raise ArrowInvalid(f"Casting from {got} to {want} would lose data: {int(lost[0])}")
    return (values - np.fmod(values, factor)) // factor


def _local(array: Array, values: np.ndarray, want, safe: bool) -> np.ndarray:
    """Timestamps as counts of their unit in their zone's wall-clock time (UTC without a zone);
    ``safe``: one that the zone's offset takes past int64 raises (pyarrow wraps it)."""
    got = array.type
    if not got.tz or got.tz in ("UTC", "+00:00", "Etc/UTC"):
        return values
    scale = _SCALE[got.unit]
    shift = zone_offsets(np.floor_divide(values, scale), got.tz) * scale  # (under a day)
    near = _DAY_S * scale  # (only a value within a day of int64's ends can be taken past)
    if safe and values.size and (values.max() > _I64.max - near or
                                 values.min() < _I64.min + near):
        past = np.flatnonzero(((shift > 0) & (values > _I64.max - shift)) |
                              ((shift < 0) & (values < _I64.min - shift)))
        if past.size:  # (null slots hold 0 here: never past)
            k = int(past[0])
            raise ArrowInvalid(f"Casting from {got} to {want} would result in out of bounds "
                               f"local time: slot {k} holds {int(values[k])}, past int64 "
                               f"in {got.tz}")
    with np.errstate(over="ignore"):
        return values + shift


def _days(array: Array, values: np.ndarray, want, safe: bool) -> np.ndarray:
    """Timestamps as the days of their wall-clock dates, in ``want``'s unit (days or ms), as
    pyarrow: a day count as int32, then times 86,400,000 for date64.  pyarrow wraps the int32
    (and so date64 too) past some 5.8 million years; ``safe`` raises there instead, naming the
    slot, for date32, and for date64 only where the milliseconds overflow int64."""
    got = array.type
    days = np.floor_divide(_local(array, values, want, safe), _SCALE[got.unit] * _DAY_S)
    if safe:
        lo, hi = (_I32.min, _I32.max) if want.unit == "day" else \
            (-(2**63 // _MS_PER_DAY), _I64.max // _MS_PER_DAY)
        k = _first_outside(days, _valid(array), lo, hi)
        if k >= 0:
            raise ArrowInvalid(f"Casting from {got} to {want} would result in out of bounds "
                               f"date: slot {k} holds {int(values[k])}, day {int(days[k])}, "
                               f"outside {want}'s days [{lo}, {hi}]")
    elif want.unit == "ms":
        days = days.astype(np.int32).astype(np.int64)  # (pyarrow's wrap)
    return days * _MS_PER_DAY if want.unit == "ms" else days


def _check_domain(array: Array, values: np.ndarray, want) -> None:
    """Integers (``values``, nulls zeroed) relabelled as ``want``: a time outside the day or a
    date64 that is not whole days raises, safe or not.  pyarrow relabels them unchecked, into
    an array its own full validation calls invalid."""
    if isinstance(want, t.TimeType):
        limit = _SCALE[want.unit] * _DAY_S
        k = _first_outside(values, _valid(array), 0, limit - 1)
        why = f"outside {want}'s [0, {limit})"
    elif isinstance(want, t.DateType) and want.unit == "ms":
        partial = np.flatnonzero(values % _MS_PER_DAY)  # (null slots hold 0: whole)
        k = int(partial[0]) if partial.size else -1
        why = f"not a whole number of days ({_MS_PER_DAY} ms)"
    else:
        return
    if k >= 0:
        raise ArrowInvalid(f"Casting from {array.type} to {want} would give an invalid {want}: "
                           f"slot {k} holds {int(values[k])}, {why}")


def _cast_temporal(array: Array, want, safe: bool) -> Array:
    got = array.type
    values = _zeroed(array, np.asarray(array.values()).astype(np.int64))
    live = _live(array, values)
    for a, b in ((got, want), (want, got)):  # (same-width signed integers: the storage)
        if isinstance(a, t.IntType) and a.signed and a.byte_width == b.byte_width and \
                isinstance(b, (t.TimestampType, t.DurationType, t.DateType, t.TimeType)):
            if b is want:
                _check_domain(array, values, want)
            return _reinterpreted(array, want)
    same = type(got) is type(want)
    if same and isinstance(got, (t.TimestampType, t.DurationType, t.TimeType)):
        return _with_values(array, want, _rescaled(values, live, got, want, got.unit, want.unit,
                                                   safe))
    if same and isinstance(got, t.DateType):
        if want.unit == "ms":
            return _with_values(array, want, values * _MS_PER_DAY)
        lost = live[live % _MS_PER_DAY != 0] if safe else live[:0]
        if lost.size:
            raise ArrowInvalid(f"Casting from {got} to {want} would lose data: {int(lost[0])}")
        days = (values - np.fmod(values, _MS_PER_DAY)) // _MS_PER_DAY
        k = _first_outside(days, _valid(array), _I32.min, _I32.max) if safe else -1
        if k >= 0:  # (pyarrow's words; past int32's days, some 5.8 million years)
            raise ArrowInvalid(f"Casting from {got} to {want} would lose data: "
                               f"{int(values[k])} (slot {k})")
        return _with_values(array, want, days)
    if isinstance(got, t.TimestampType) and isinstance(want, t.DateType):
        return _with_values(array, want, _days(array, values, want, safe))
    if isinstance(got, t.TimestampType) and isinstance(want, t.TimeType):
        day = _SCALE[got.unit] * _DAY_S
        of_day = np.mod(_local(array, values, want, safe), day)
        return _with_values(array, want, _rescaled(of_day, _live(array, of_day), got, want,
                                                   got.unit, want.unit, safe))
    if isinstance(got, t.DateType) and isinstance(want, t.TimestampType):
        ms = values * _MS_PER_DAY if got.unit == "day" else values
        return _with_values(array, want, _rescaled(ms, _live(array, ms), got, want, "ms",
                                                   want.unit, safe))
    if isinstance(got, t.TimeType) and isinstance(want, t.TimeType):
        return _with_values(array, want, _rescaled(values, live, got, want, got.unit, want.unit,
                                                   safe))
    raise _unsupported(got, want)


#: pyarrow's ISO 8601 timestamps: a date, then (after "T" or " ") hours, minutes, seconds
#: and a fraction, each optional after the one before; a zone offset only after a time
_ISO_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d)(?::(\d\d)(?::(\d\d)"
                            r"(?:\.(\d+))?)?)?((?:Z|[+-]\d\d(?::?\d\d)?))?)?\Z", re.ASCII)
_ZONE_OFFSET = re.compile(r"([+-])(\d\d)(?::?(\d\d))?\Z", re.ASCII)
_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_EXPECTED_ZONE = (": expected a zone offset. If these timestamps are in local time, cast to "
                  "timestamp without timezone, then call assume_timezone.")


def _zone_found(text: str) -> bool:
    """Whether pyarrow's ISO 8601 parser finds a zone offset in ``text``: after a date and a
    "T" or " ", a final "Z", or a valid ``+HH``, ``+HHMM`` or ``+HH:MM`` (either sign) ending
    the text; what its error messages go by, whatever the rest of the text holds."""
    if len(text) <= 11 or not _ISO_DATE.match(text) or text[10] not in "T ":
        return False
    rest = text[11:]
    if rest.endswith("Z"):
        return True
    for width in (3, 5, 6):
        if len(rest) > width and rest[-width] in "+-":
            z = _ZONE_OFFSET.match(rest[-width:])
            return z is not None and int(z.group(2)) <= 23 and int(z.group(3) or 0) <= 59
    return False


def _iso_value(text: str, want) -> tuple:
    """(count of ``want``'s unit since the epoch, whether the text has a zone offset), or
    (None, False) where pyarrow refuses the text."""
    m = _ISO_TIMESTAMP.match(text)
    if m is None:
        return None, False
    year, month, day, hour, minute, second, frac, zone = m.groups()
    offset = 0
    if zone is not None and zone != "Z":
        z = _ZONE_OFFSET.match(zone)
        if z is None:  # (the timestamp pattern admits only what this one matches)
            return None, False
        hours, minutes = int(z.group(2)), int(z.group(3) or 0)
        if hours > 23 or minutes > 59:
            return None, False
        offset = (hours * 3600 + minutes * 60) * (-1 if z.group(1) == "-" else 1)
    has_zone = zone is not None
    if (isinstance(want, t.DateType) and hour is not None) or \
            (frac is not None and len(frac) > _FRACTION_DIGITS.get(getattr(want, "unit", ""), 0)):
        return None, False
    days = _civil_days(int(year), int(month), int(day))
    clock = [int(x) if x is not None else 0 for x in (hour, minute, second)]
    if days is None or clock[0] > 23 or clock[1] > 59 or clock[2] > 59:
        return None, False
    seconds = days * _DAY_S + clock[0] * 3600 + clock[1] * 60 + clock[2] - offset
    if isinstance(want, t.DateType):
        return (days if want.unit == "day" else days * _MS_PER_DAY), has_zone
    scale = _SCALE[want.unit]
    whole = seconds * scale  # (pyarrow checks the whole seconds, then adds the fraction)
    value = whole + (int(frac) * scale // 10 ** len(frac) if frac else 0)
    if not (_I64.min <= whole <= _I64.max and value <= _I64.max):
        return None, False
    return value, has_zone


def _civil_days(year: int, month: int, day: int) -> Optional[int]:
    """Days from 1970-01-01 to a proleptic Gregorian date (year 0 included, as pyarrow's
    parser takes it), or None for a day its month does not have."""
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= month <= 12 or not 1 <= day <= (29 if month == 2 and leap else
                                                 (31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
                                                  30, 31)[month - 1]):
        return None
    y = year - (month <= 2)  # (Howard Hinnant's days_from_civil)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _text_to_temporal(array: Array, want) -> Array:
    """Strings parsed as pyarrow's ISO 8601 parser reads them into timestamps and dates: a
    zone offset (``Z``, ``+05``, ``+0530``, ``+05:30``) required for a timestamp with a time
    zone and refused without one (with pyarrow's words), at most the unit's fraction digits,
    a date alone for the date types.  The last value that does not parse is named."""
    zoned = isinstance(want, t.TimestampType) and bool(want.tz)
    out = np.zeros(len(array), dtype=np.int64 if not (isinstance(want, t.DateType) and
                                                     want.unit == "day") else np.int32)
    bad = None
    for i, text in enumerate(array.to_pylist()):
        if text is None:
            continue
        value, has_zone = _iso_value(text, want)
        if value is not None and has_zone == zoned:
            out[i] = value
            continue
        why = "" if isinstance(want, t.DateType) else \
            (_EXPECTED_ZONE if not _zone_found(text) else "") if zoned else \
            (": expected no zone offset." if _zone_found(text) else "")
        bad = ArrowInvalid(f"Failed to parse string: '{text}' as a scalar of type {want}{why}")
    if bad is not None:
        raise bad
    return _with_values(array, want, out)


def _decoded_as(array: Array, want, safe: bool) -> Array:
    """A dictionary array cast to a type that is not a dictionary, by pyarrow's rules: to
    null, all nulls; to a view type, unsupported; a value type that does not cast to
    ``want`` makes the pair invalid (not unsupported); a view-typed dictionary has no take."""
    got, value = array.type, array.type.value_type
    if isinstance(want, t.NullType):
        return _nulls(len(array), want)
    if isinstance(want, t.BinaryViewType):
        raise _unsupported(got, want)
    try:  # (whether the values cast at all: an empty probe)
        _cast(array.dictionary.slice(0, 0), want, safe)
    except ArrowNotImplementedError as exc:
        if str(exc).startswith("Unsupported cast"):  # (pyarrow cannot: not arrowmm's "not yet")
            raise ArrowInvalid(f"Cast type {want} incompatible with dictionary type "
                               f"{value}") from None
        raise
    if isinstance(value, t.BinaryViewType):
        raise ArrowNotImplementedError(f"Function 'array_take' has no kernel matching input "
                                       f"types ({value}, {got.index_type})")
    return _cast(_decoded(array), want, safe)


def _nulls(length: int, want) -> Array:
    return convert([None] * length, want)


_TEMPORAL = (t.TimestampType, t.DurationType, t.DateType, t.TimeType)
_NUMERIC = (t.IntType, t.FloatType, t.BoolType)
_TEXT = (t.BinaryType, t.BinaryViewType)  # binary and string, plain, large and view
_NESTED = (t.ListType, t.ListViewType, t.FixedSizeListType, t.MapType, t.StructType, t.UnionType)


def cast_array(array: Array, target_type: t.DataType, safe: bool = True) -> Array:
    """``array`` as ``target_type`` (``Array.cast``), as pyarrow's ``cast``: see the module."""
    if not isinstance(target_type, t.DataType):
        if not isinstance(target_type, str) and not hasattr(target_type, "__arrow_c_schema__"):
            raise TypeError(f"cast: target_type must be a DataType (arrowmm's, or one with "
                            f"__arrow_c_schema__: pyarrow's) or a type's name, got "
                            f"{type(target_type).__name__}")
        target_type = t.ensure_type(target_type)  # ("int64", pa.int64(): as pyarrow takes)
    if array.type == target_type:
        return array
    _check_input(array, target_type)
    return _cast(array, target_type, safe)


_PARSED = (t.IntType, t.FloatType, t.BoolType, t.DecimalType, t.TimestampType, t.DateType)


def _check_input(array: Array, want: t.DataType) -> None:
    """Damage (a date64 that is not a whole number of days, a time past one day, a decimal past
    its precision, invalid UTF-8, an index past its dictionary) raises, safe or not: a cast
    would launder it into values that read as data (text, another type's values).  Full
    validation, once per array (``Array._validated``), except for strings parsed as numbers,
    decimals or dates: no byte that is not UTF-8 parses (each grammar is ASCII), so the parse
    itself checks their UTF-8, and only their offsets and null count are checked here."""
    path = f"cast({want})"
    got = array.type
    if isinstance(got, t.BinaryType) and got.utf8 and isinstance(want, _PARSED) \
            and not array._fully_valid:
        array.validate(False, path)
        array._check_null_count(path)
        data = array.buffers()[2]
        check_offsets(array.value_offsets(), len(array), 0 if data is None else data.size, path)
    else:
        array._validated(path)


def _cast(array: Array, want: t.DataType, safe: bool) -> Array:
    """``cast_array`` of an array fully validated (``array`` or one made from it)."""
    got = array.type
    if got == want:
        return array
    array._nulls_bitmap()  # (counted against null_count once: a cast rebuilds the validity)
    if isinstance(got, t.ExtensionType):  # (as pyarrow: its storage is what is cast)
        return _cast(storage_of(array), want, safe)
    if isinstance(want, t.ExtensionType):
        return wrap(want, _cast(array, want.storage_type, safe))
    if isinstance(got, t.NullType):
        return _nulls(len(array), want)
    if isinstance(got, t.DictionaryType):
        if isinstance(want, t.DictionaryType):
            if want.value_type == got.value_type:
                return _encoded(array, t.DictionaryType(want.index_type, got.value_type,
                                                        want.ordered), "array", None)
            return _encoded(_cast(_decoded(array), want.value_type, safe), want, "array",
                            None)
        return _decoded_as(array, want, safe)
    if isinstance(want, t.DictionaryType):
        if not isinstance(got, t.BinaryType):  # (pyarrow encodes strings and binaries only,
            raise _unsupported(got, want)      # plain and large, cast to the value type)
        return _encoded(_cast(array, want.value_type, safe), want, "array", None)
    if isinstance(got, t.DecimalType) or isinstance(want, t.DecimalType):
        done = cast_decimal(array, want, safe)
        if done is None:
            raise _unsupported(got, want)
        return done
    if isinstance(got, _NUMERIC) and isinstance(want, _NUMERIC):
        if t.float16() in (got, want) and t.bool_() in (got, want):
            raise _unsupported(got, want)
        return _cast_numbers(array, want, safe)
    if isinstance(got, _TEXT) and isinstance(want, _TEXT):
        return _cast_text(array, want)
    if isinstance(got, t.FixedSizeBinaryType) and isinstance(want, _TEXT):
        values = array.to_pylist()
        if want.utf8:
            if any(v is not None and not _valid_utf8(v) for v in values):
                raise ArrowInvalid("Invalid UTF8 payload")
            values = [None if v is None else v.decode("utf-8") for v in values]
        return convert(values, want)
    if isinstance(got, _TEXT) and isinstance(want, t.FixedSizeBinaryType):
        values = [v.encode("utf-8") if isinstance(v, str) else v for v in array.to_pylist()]
        if any(v is not None and len(v) != want.byte_width for v in values):
            raise ArrowInvalid(f"Failed casting from {got} to {want}: widths must match")
        return convert(values, want)
    if isinstance(got, _NUMERIC) and isinstance(want, _TEXT) and want.utf8:
        return _numbers_to_text(array, want)
    if isinstance(got, _TEXT) and isinstance(want, _NUMERIC):
        if isinstance(got, t.BinaryViewType) and want == t.float16():
            raise _unsupported(got, want)  # (pyarrow parses half floats from offsets only)
        return _text_to_numbers(array, want)
    if isinstance(got, (*_TEMPORAL, t.IntType)) and isinstance(want, (*_TEMPORAL, t.IntType)):
        return _cast_temporal(array, want, safe)
    if isinstance(got, _TEXT) and isinstance(want, (t.TimestampType, t.DateType)):
        if not (isinstance(got, t.BinaryType) and got.utf8):  # (pyarrow: strings, plain and
            raise _unsupported(got, want)                      # large, only)
        return _text_to_temporal(array, want)
    if isinstance(got, _TEMPORAL) and isinstance(want, _TEXT) and want.utf8:
        return _temporal_to_text(array, want)
    if isinstance(got, (*_TEMPORAL, *_TEXT)) and isinstance(want, (*_TEMPORAL, *_TEXT)):
        raise _unsupported(got, want)  # (to binaries, strings to times and durations)
    if isinstance(got, _NESTED) and isinstance(want, _NESTED):  # (lists, structs, maps)
        done = cast_nested(array, want, safe, _cast)
        if done is not None:
            return done
    raise _unsupported(got, want)


hooks.fill("cast_array", cast_array)
