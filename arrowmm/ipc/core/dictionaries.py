"""Dictionary state of a reader: which ids the schema uses, and their current values.

Streams replace a dictionary when a non-delta batch for its id arrives and
append to it on a delta; files take dictionaries from the footer in order,
apply deltas, and refuse a second non-delta batch for one id.
"""
from __future__ import annotations

import functools
import math
import struct
import threading
from typing import Dict, List, Optional

import numpy as np

from ... import limits
from ... import types as t
from ..._core._bitmap import pack_bitmap
from ...arrays.array import Array, make_array
from ...arrays.base import same_values
from ...arrays.batch import RecordBatch
from ...arrays.concat import concat_arrays
from ...arrays.empty import empty_array
from ...arrays.provenance import copied_view
from ...errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["dictionary_value_fields", "nested_dictionary_ids", "DictionaryMemo",
           "unify_batch_dictionaries"]


def dictionary_value_fields(schema: t.Schema) -> Dict[int, t.Field]:
    """id -> the field a dictionary batch of that id decodes (its value type), nested ones too."""
    out: Dict[int, t.Field] = {}

    def walk(f: t.Field):
        dtype = f.storage_type
        if isinstance(dtype, t.DictionaryType):
            if f.dictionary_id in out and out[f.dictionary_id].storage_type != dtype.value_type:
                raise ArrowInvalid(f"dictionary id {f.dictionary_id} is used for both "
                                   f"{out[f.dictionary_id].type} and {dtype.value_type}")
            out[f.dictionary_id] = t.Field("dictionary", dtype.value_type, True)
            for child in dtype.value_type.children:
                walk(child)
        else:
            for child in dtype.children:
                walk(child)

    for f in schema.fields:
        walk(f)
    return out


def nested_dictionary_ids(fields: Dict[int, t.Field]) -> Dict[int, tuple]:
    """id -> the ids of the dictionaries its values hold (not those their values hold), for the
    ids of ``dictionary_value_fields`` whose values hold any."""
    def held(dtype, out):
        for child in dtype.children:
            if isinstance(child.storage_type, t.DictionaryType):
                out.append(child.dictionary_id)
            else:
                held(child.storage_type, out)
        return out

    out = {}
    for dict_id, f in fields.items():
        ids = tuple(dict.fromkeys(held(f.storage_type, [])))
        if ids:
            out[dict_id] = ids
    return out


class _Generation:
    """One id's dictionary as one message left it: immutable, merged (deltas concatenated)
    at most once, on first use.

    A non-delta batch starts a generation that is its values; a delta makes a new generation
    that points at the one it extends.  Nothing ever writes into an older generation but its
    own merge, so a batch holding a generation sees exactly the dictionary in force at its
    place in the stream, whatever other threads read or apply meanwhile.  The merge drops the
    link to the previous generation: a chain is only as long as the deltas since the last
    generation anyone read, and a stream of n deltas each followed by a record batch costs
    n concatenations of two arrays, not O(n**2).
    """

    __slots__ = ("_state", "_lock")

    def __init__(self, values: Array, previous: "Optional[_Generation]" = None):
        # (previous generation or None, values): merged when previous is None.  Replaced as
        # a whole (one attribute store) so a reader never sees half of it.
        self._state = (previous, values)
        self._lock = threading.Lock()

    @property
    def last(self) -> Array:
        """The values this generation's message added (the whole dictionary, once merged)."""
        return self._state[1]

    def array(self, generations=None) -> Array:
        """The dictionary (``generations``: as ``_NestedGeneration.array``, not needed here)."""
        previous, values = self._state
        if previous is None:
            return values
        with self._lock:  # one merge, every caller gets the same array
            previous, values = self._state
            if previous is None:
                return values
            parts = [values]
            while previous is not None:
                previous, values = previous._state
                parts.append(values)
            merged = concat_arrays(parts[::-1])
            self._state = (None, merged)
            return merged


class _NestedGeneration:
    """A generation of an id whose values hold other dictionaries: its message's loader,
    decoded (and appended to the previous generation's values, a delta) against the
    dictionaries of each lookup, again only when those differ from the last decode's.

    Why: Arrow C++ binds the dictionaries a dictionary holds when a record batch is read, from
    the dictionaries in force then; a stream may replace an inner dictionary without sending
    the outer one again, or send the outer one before its inner one.
    """

    __slots__ = ("_loader", "_decoded", "_nested", "_previous", "_bound", "_lock")

    def __init__(self, loader, decoded: Optional[dict], nested: tuple, previous=None):
        self._loader = loader  # (a BatchLoader of the dictionary batch message)
        self._decoded = decoded  # (its buffers decompressed once: BatchLoader.prefetch)
        self._nested = nested
        self._previous = previous
        self._bound = None  # (the nested dictionaries, the values decoded against them)
        self._lock = threading.Lock()

    def part(self, dictionaries) -> Array:
        """The values this generation's message added, its nested dictionaries from
        ``dictionaries`` (id -> values)."""
        decoded = self._decoded  # (a walk pops what it takes: each gets its own copy)
        return self._loader.with_dictionaries(dictionaries).column(
            0, None if decoded is None else dict(decoded))

    def array(self, generations: dict) -> Array:
        held = tuple(_merged(generations.get(i), i, generations) for i in self._nested)
        bound = self._bound
        if bound is not None and _same_arrays(bound[0], held):
            return bound[1]
        with self._lock:  # (one decode per binding: every caller gets the same array)
            bound = self._bound
            if bound is not None and _same_arrays(bound[0], held):
                return bound[1]
            values = self.part(lambda i: _merged(generations.get(i), i, generations))
            if self._previous is not None:
                values = concat_arrays([self._previous.array(generations), values])
            self._bound = (held, values)
            return values


def _same_arrays(a: tuple, b: tuple) -> bool:
    return all(x is y for x, y in zip(a, b))


class DictionaryMemo:
    """Current dictionary values by id; ``snapshot`` freezes them for one record batch.

    Thread safety: ``apply`` and ``snapshot`` hold the memo's lock, so a snapshot is the state
    between two messages, never half of one; lookups (``get``, a snapshot) only read the memo
    and merge within a ``_Generation``, which no later message changes.  (The memo used to
    write a lookup's merged deltas back into its current state: a lookup racing a delta could
    put an older dictionary back in force, and later batches then read it.)
    """

    def __init__(self, schema: t.Schema, file_mode: bool):
        self.fields = dictionary_value_fields(schema)
        self.nesting = nested_dictionary_ids(self.fields)
        self.file_mode = file_mode
        self._current: Dict[int, "_Generation | _NestedGeneration"] = {}
        self._counts: Dict[int, int] = {}  # dictionary batches seen per id (arrowmm.limits)
        self._lock = threading.Lock()

    def field(self, dict_id: int, where: str) -> t.Field:
        try:
            return self.fields[dict_id]
        except KeyError:
            raise ArrowInvalid(f"{where}: dictionary id {dict_id} is not used by the schema "
                               f"(ids: {sorted(self.fields)})") from None

    def apply(self, dict_id: int, values: Array, is_delta: bool, where: str) -> None:
        """Dictionary batch ``values`` for ``dict_id`` (whole values: nested ones bound)."""
        self._store(dict_id, lambda previous: _Generation(values, previous), is_delta, where)

    def apply_loader(self, dict_id: int, loader, is_delta: bool, where: str) -> None:
        """A dictionary batch of an id whose values hold dictionaries (``nesting``), as the
        ``BatchLoader`` of its message: lookups bind those when they read it.  Its buffers are
        checked now, against empty dictionaries of the types it holds (those in force now may
        not be the ones a record batch binds, or not defined yet)."""
        generation_after = functools.partial(_NestedGeneration, loader, loader.prefetch((0,)),
                                             self.nesting[dict_id])
        generation_after(None).part(lambda i: empty_array(self.fields[i].type))
        self._store(dict_id, generation_after, is_delta, where)

    def _store(self, dict_id: int, generation_after, is_delta: bool, where: str) -> None:
        with self._lock:
            current = self._current.get(dict_id)
            count = self._counts.get(dict_id, 0) + 1
            if count > limits.max_dictionary_batches:
                raise limits.exceeded("max_dictionary_batches", count,
                                      f"{where}: dictionary batches for id {dict_id}")
            if is_delta:
                if current is None:
                    raise ArrowInvalid(f"{where}: delta for dictionary {dict_id}, which was never "
                                       f"sent")
                generation = generation_after(current)
            else:
                if current is not None and self.file_mode:
                    raise ArrowInvalid(f"{where}: a second non-delta dictionary batch for id "
                                       f"{dict_id}; the file format does not allow replacing a "
                                       f"dictionary")
                generation = generation_after(None)
            self._counts[dict_id] = count
            self._current[dict_id] = generation

    def get(self, dict_id: int) -> Array:
        """Dictionary ``dict_id`` as it stands now (deltas merged, nested ones bound now)."""
        return _merged(self._current.get(dict_id), dict_id, self._current)

    def latest_part(self, dict_id: int) -> Array:
        """The values the last message for ``dict_id`` brought (a delta's new part only)."""
        generation = self._current.get(dict_id)
        if generation is None:
            raise ArrowInvalid(f"dictionary {dict_id} is used before any dictionary batch defines it")
        if isinstance(generation, _NestedGeneration):  # (what is not defined yet: empty)
            return generation.part(lambda i: self.get(i) if self._defined_through(i)
                                   else empty_array(self.fields[i].type))
        return generation.last

    def _defined_through(self, dict_id: int) -> bool:
        """Whether ``dict_id`` and every dictionary its values hold (theirs too) are defined."""
        return dict_id in self._current and all(self._defined_through(i)
                                                for i in self.nesting.get(dict_id, ()))

    def defined(self) -> List[int]:
        """The ids a dictionary batch has defined so far."""
        with self._lock:
            return list(self._current)

    def merge_all(self) -> None:
        """Concatenate every dictionary's deltas now, so that later lookups only read."""
        with self._lock:
            current = list(self._current.values())
        for generation in current:
            if isinstance(generation, _Generation):  # (nested ones bind at their first lookup)
                generation.array()

    def snapshot(self):
        """A lookup bound to the dictionaries as they are now (later messages don't leak in)."""
        with self._lock:
            frozen = dict(self._current)

        def lookup(dict_id: int) -> Array:
            return _merged(frozen.get(dict_id), dict_id, frozen)
        return lookup


def _merged(generation, dict_id: int, generations: dict) -> Array:
    """``generation``'s dictionary, nested ones bound from ``generations`` (id -> generation)."""
    if generation is None:
        raise ArrowInvalid(f"dictionary {dict_id} is used before any dictionary batch defines it")
    return generation.array(generations)


# -- unifying the dictionaries of many batches (the writers' ``unify_dictionaries``) ----------

def _key(v):
    """A hashable stand-in for a dictionary value (NaN equals NaN, -0.0 differs from 0.0)."""
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else ("float", struct.pack("<d", v))
    if isinstance(v, (list, tuple)):
        return ("list", tuple(_key(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((k, _key(x)) for k, x in v.items()))
    return (type(v).__name__, v)


def unify_batch_dictionaries(batches: list, schema: t.Schema) -> list:
    """``batches`` with one dictionary per top-level dictionary id, indices remapped.

    The unified dictionary holds the first dictionary's values in order, then each value the
    next ones add, first seen first (as Arrow C++'s ``DictionaryUnifier``).  Ids whose
    dictionaries are already all equal are left alone (no copy).  A unified dictionary too
    long for a field's index type raises ``ArrowInvalid``; differing dictionaries below the
    top level, or holding dictionaries, ``ArrowNotImplementedError``.
    """
    by_id: Dict[int, List[int]] = {}
    for k, f in enumerate(schema.fields):
        if isinstance(f.storage_type, t.DictionaryType):
            by_id.setdefault(f.dictionary_id, []).append(k)
    columns = [list(b.storage_columns) for b in batches]
    for dict_id, fields in by_id.items():
        arrays = [(i, k, cols[k]) for i, cols in enumerate(columns) for k in fields]
        if not arrays:
            continue
        first = arrays[0][2].dictionary
        dicts = {id(a.dictionary): a.dictionary for _, _, a in arrays}
        if all(d is first or _equal(d, first) for d in dicts.values()):
            continue
        names = ", ".join(repr(schema.fields[k].name) for k in fields)
        if _holds_dictionary(first.type):
            raise ArrowNotImplementedError(f"unify_dictionaries: field(s) {names}: dictionaries "
                                           f"holding dictionaries are not unified")
        if _holds_union(first.type):  # (as Python values, children's values are one: 5 and a
            raise ArrowNotImplementedError(  # date of day 5 would merge; pyarrow refuses too)
                f"unify_dictionaries: field(s) {names}: dictionaries of {first.type} values "
                f"that differ are not unified (their union values are not compared by child)")
        unified, mappings = _unify(list(dicts.values()))
        for i, k, a in arrays:
            columns[i][k] = _remap(a, mappings[id(a.dictionary)], unified, schema.fields[k].name)
    _check_nested_unchanged(batches, schema)
    return [b if all(x is y for x, y in zip(cols, b.storage_columns))
            else RecordBatch(b.schema, b.num_rows, cols, metadata=b.metadata)
            for b, cols in zip(batches, columns)]


def _equal(a: Array, b: Array) -> bool:
    """The same values as a reader decodes them (a union's by child, floats by their bits)."""
    return same_values(a, b, exact=True)


def _holds_dictionary(dtype) -> bool:
    return isinstance(dtype, t.DictionaryType) or any(_holds_dictionary(c.storage_type) for c in dtype.children)


def _holds_union(dtype) -> bool:
    dtype = dtype.storage_type if isinstance(dtype, t.ExtensionType) else dtype
    return isinstance(dtype, t.UnionType) or any(_holds_union(c.type) for c in dtype.children)


def _unify(dicts: List[Array]):
    """(unified dictionary, {id(dictionary): old index -> new index})."""
    index: Dict[object, int] = {}
    runs = []  # (dictionary, start, stop) of the values each adds
    mappings = {}
    for d in dicts:
        mapping = np.empty(len(d), dtype=np.int64)
        run_start = None
        for i, v in enumerate(d.to_pylist(temporal="int")):
            k = _key(v)
            at = index.get(k)
            if at is None:
                at = index[k] = len(index)
                if run_start is None:
                    run_start = i
            elif run_start is not None:
                runs.append((d, run_start, i))
                run_start = None
            mapping[i] = at
        if run_start is not None:
            runs.append((d, run_start, len(d)))
        mappings[id(d)] = mapping
    unified = concat_arrays([d.slice(a, b - a) for d, a, b in runs])
    return unified, mappings


def _remap(a: Array, mapping: np.ndarray, unified: Array, name: str) -> Array:
    index_type = a.type.index_type
    top = np.iinfo(index_type.numpy_dtype).max
    if len(unified) - 1 > top:
        raise ArrowInvalid(f"unify_dictionaries: field {name!r}: the unified dictionary has "
                           f"{len(unified)} values, more than {index_type} indices address "
                           f"(largest index {top})")
    idx = a.indices.values().astype(np.int64)
    valid = a._valid_mask()
    live = idx if valid is None else idx[valid]
    if live.size and (int(live.min()) < 0 or int(live.max()) >= len(mapping)):
        raise ArrowInvalid(f"unify_dictionaries: field {name!r}: dictionary index "
                           f"{int(live.max()) if int(live.min()) >= 0 else int(live.min())} out of "
                           f"range for a dictionary of {len(mapping)} values")
    safe = idx if valid is None else np.where(valid, idx, 0)
    new = mapping[safe].astype(index_type.numpy_dtype) if len(mapping) else np.zeros(len(idx), index_type.numpy_dtype)
    validity = None
    if valid is not None:
        bitmap, _ = pack_bitmap(valid)
        validity = copied_view(bitmap, "unified dictionary")
    return make_array(a.type, len(a), [validity, copied_view(new, "unified dictionary")],
                      null_count=a.null_count, dictionary=unified)


def _check_nested_unchanged(batches: list, schema: t.Schema) -> None:
    """Dictionaries below the top level are not unified: refuse ones that differ."""
    seen: Dict[int, tuple] = {}

    def walk(arr: Array, f: t.Field, path: str, top: bool):
        if isinstance(f.storage_type, t.DictionaryType):
            if not top:
                got = seen.setdefault(f.dictionary_id, (arr.dictionary, path))
                if got[0] is not arr.dictionary and not _equal(got[0], arr.dictionary):
                    raise ArrowNotImplementedError(
                        f"unify_dictionaries: {path} is a dictionary below the top level whose "
                        f"dictionary differs between batches; only top-level dictionaries are "
                        f"unified")
            return
        for cf, child in zip(f.storage_type.children, arr.children):
            walk(child, cf, f"{path}.{cf.name}", False)

    for b in batches:
        for f, col in zip(schema.fields, b.storage_columns):
            walk(col, f, f.name, True)
