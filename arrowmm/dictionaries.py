"""Dictionary state of a reader: which ids the schema uses, and their current values.

Streams replace a dictionary when a non-delta batch for its id arrives and
append to it on a delta; files take dictionaries from the footer in order,
apply deltas, and refuse a second non-delta batch for one id.
"""
from __future__ import annotations

from typing import Dict, List

from . import limits
from . import types as t
from .arrays import Array
from .concat import concat_arrays
from .errors import ArrowInvalid

__all__ = ["dictionary_value_fields", "DictionaryMemo"]


def dictionary_value_fields(schema: t.Schema) -> Dict[int, t.Field]:
    """id -> the field a dictionary batch of that id decodes (its value type), nested ones too."""
    out: Dict[int, t.Field] = {}

    def walk(f: t.Field):
        dtype = f.type
        if isinstance(dtype, t.DictionaryType):
            if f.dictionary_id in out and out[f.dictionary_id].type != dtype.value_type:
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


class DictionaryMemo:
    """Current dictionary values by id; ``snapshot`` freezes them for one record batch."""

    def __init__(self, schema: t.Schema, file_mode: bool):
        self.fields = dictionary_value_fields(schema)
        self.file_mode = file_mode
        self._chunks: Dict[int, List[Array]] = {}
        self._merged: Dict[int, Array] = {}
        self._counts: Dict[int, int] = {}  # dictionary batches seen per id (arrowmm.limits)

    def field(self, dict_id: int, where: str) -> t.Field:
        try:
            return self.fields[dict_id]
        except KeyError:
            raise ArrowInvalid(f"{where}: dictionary id {dict_id} is not used by the schema "
                               f"(ids: {sorted(self.fields)})") from None

    def apply(self, dict_id: int, values: Array, is_delta: bool, where: str) -> None:
        chunks = self._chunks.get(dict_id)
        count = self._counts[dict_id] = self._counts.get(dict_id, 0) + 1
        if count > limits.max_dictionary_batches:
            raise limits.exceeded("max_dictionary_batches", count,
                                  f"{where}: dictionary batches for id {dict_id}")
        if is_delta:
            if chunks is None:
                raise ArrowInvalid(f"{where}: delta for dictionary {dict_id}, which was never sent")
            self._chunks[dict_id] = chunks + [values]
        else:
            if chunks is not None and self.file_mode:
                raise ArrowInvalid(f"{where}: a second non-delta dictionary batch for id {dict_id}; "
                                   f"the file format does not allow replacing a dictionary")
            self._chunks[dict_id] = [values]
        self._merged.pop(dict_id, None)

    def get(self, dict_id: int) -> Array:
        merged = self._merged.get(dict_id)
        if merged is None:
            chunks = self._chunks.get(dict_id)
            if chunks is None:
                raise ArrowInvalid(f"dictionary {dict_id} is used before any dictionary batch defines it")
            merged = concat_arrays(chunks)
            self._keep_merged(dict_id, chunks, merged)
        return merged

    def merge_all(self) -> None:
        """Concatenate every dictionary's deltas now, so that ``get`` only reads (a memo shared
        by threads then hands every one of them the same arrays)."""
        for dict_id in list(self._chunks):
            self.get(dict_id)

    def _keep_merged(self, dict_id: int, chunks: List[Array], merged: Array) -> None:
        """Remember ``merged`` as the one chunk of ``dict_id`` if its chunks are still ``chunks``.

        Chunk lists are replaced, never changed in place, so identity says "unchanged".  The
        next delta then concatenates two arrays, not every delta so far: a stream of n deltas
        each followed by a record batch costs O(n) concatenations instead of O(n**2).
        """
        if self._chunks.get(dict_id) is chunks:
            self._chunks[dict_id] = [merged]
            self._merged[dict_id] = merged

    def snapshot(self):
        """A lookup bound to the dictionaries as they are now (later replacements don't leak in)."""
        frozen = dict(self._chunks)  # the lists themselves are never changed in place
        merged = dict(self._merged)

        def lookup(dict_id: int) -> Array:
            got = merged.get(dict_id)
            if got is None:
                chunks = frozen.get(dict_id)
                if chunks is None:
                    raise ArrowInvalid(f"dictionary {dict_id} is used before any dictionary batch "
                                       f"defines it")
                got = merged[dict_id] = concat_arrays(chunks)
                self._keep_merged(dict_id, chunks, got)
            return got
        return lookup
