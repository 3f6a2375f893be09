"""The arrays of several typed children side by side: structs (a child per field) and unions
(sparse and dense: a type id per row picks the child)."""
from __future__ import annotations

from typing import List

import numpy as np

from .._core._offsets import check_dense_union_offsets, check_union_type_ids
from ..errors import ArrowInvalid
from .base import Array, need_bytes, pylist_where_used, typed_view, unbacked_rows

__all__ = ["StructArray", "UnionArray"]


class StructArray(Array):
    """Rows of named child arrays, one per field of the struct type."""

    __slots__ = ()

    def field(self, i) -> Array:
        """Child ``i`` (index or name), sliced to this array's range."""
        if isinstance(i, str):
            names = [f.name for f in self.type.fields]
            if names.count(i) != 1:
                raise KeyError(f"struct has {names.count(i) or 'no'} field(s) named {i!r}")
            i = names.index(i)
        n = len(self.children)
        if not -n <= int(i) < n:
            raise IndexError(f"struct field index {i} out of range for {n} fields")
        return self.children[int(i)].slice(self.offset, self.length)

    def flatten(self) -> List[Array]:
        """Every child, each sliced to this array's rows (``pyarrow.StructArray.flatten``)."""
        return [self.field(i) for i in range(len(self.children))]

    def _check_structure(self, path):
        super()._check_structure(path)
        if len(self.children) != len(self.type.fields):
            raise ArrowInvalid(f"{path}: struct has {len(self.type.fields)} fields but "
                               f"{len(self.children)} child arrays")
        for f, c in zip(self.type.fields, self.children):
            if len(c) < self.offset + self.length:
                raise ArrowInvalid(f"{path}.{f.name}: child length {len(c)} < struct length "
                                   f"{self.offset + self.length}")

    def _pylist(self, temporal):
        names = [f.name for f in self.type.fields]
        valid = self._valid_mask()
        if len(set(names)) != len(names):
            if valid is not None and not valid.any() or not self.length:
                return [None] * self.length  # no row to convert (pyarrow raises per row too)
            raise ArrowInvalid(f"cannot convert {self.type} to dicts: duplicate field names; "
                               f"use .field(i) for each child")
        used = (lambda: np.ones(self.length, dtype=bool)) if valid is None else (lambda: valid)
        columns = [pylist_where_used(self.field(i), temporal, used, f)
                   for i, f in enumerate(self.type.fields)]
        rows = [dict(zip(names, vals)) for vals in zip(*columns)] if columns else \
            [{} for _ in range(unbacked_rows(self.length, "struct without fields"))]
        return rows if valid is None else [r if ok else None for r, ok in zip(rows, valid.tolist())]


class UnionArray(Array):
    """sparse_union / dense_union.  Buffers: (type_ids,) or (type_ids, offsets); no validity."""

    __slots__ = ()

    @property
    def null_count(self):
        """Always 0: a union has no validity bitmap (its children carry nulls)."""
        return 0

    @property
    def validity(self):
        """Always None: a union's nulls live in its children."""
        return None

    def type_codes(self) -> np.ndarray:
        """Each row's type code (which child holds it): a read-only int8 numpy view."""
        return typed_view(self._buffers[0], np.int8, self.offset, self.length)

    def value_offsets(self) -> np.ndarray:
        """Each row's index in its child, for dense unions (a read-only int32 numpy view);
        sparse unions raise ``ArrowInvalid``."""
        if self.type.mode != "dense":
            raise ArrowInvalid("sparse unions have no value offsets")
        return typed_view(self._buffers[1], "<i4", self.offset, self.length)

    def field(self, i) -> Array:
        """Child ``i``: sliced to this array's range for sparse unions, whole for dense ones."""
        child = self.children[int(i)]
        return child.slice(self.offset, self.length) if self.type.mode == "sparse" else child

    def _check_structure(self, path):
        if self.length < 0 or self.offset < 0:
            raise ArrowInvalid(f"{path}: negative length or offset")
        if len(self.children) != len(self.type.fields):
            raise ArrowInvalid(f"{path}: union has {len(self.type.fields)} fields but "
                               f"{len(self.children)} child arrays")
        end = self.offset + self.length
        need_bytes(path, "union type ids", self._buffers[0].size, end)
        if self.type.mode == "dense":
            need_bytes(path, "dense union offsets", self._buffers[1].size, end * 4)
        else:
            for f, c in zip(self.type.fields, self.children):
                if len(c) < end:
                    raise ArrowInvalid(f"{path}.{f.name}: sparse union child length {len(c)} < {end}")

    def _code_table(self):
        allowed = np.zeros(128, dtype=np.uint8)
        allowed[list(self.type.type_codes)] = 1
        return allowed

    def _check_full(self, path):
        check_union_type_ids(self.type_codes(), self._code_table(), path)
        if self.type.mode == "dense":
            lengths = np.zeros(128, dtype=np.int64)
            for code, child in zip(self.type.type_codes, self.children):
                lengths[code] = len(child)
            check_dense_union_offsets(self.type_codes(), self.value_offsets(), lengths, path)

    def _pylist(self, temporal):
        codes = self.type_codes()
        check_union_type_ids(codes, self._code_table(), "union")
        out = [None] * self.length
        code_list = codes.tolist()
        if self.type.mode == "sparse":
            for code, child, f in zip(self.type.type_codes, self.children, self.type.fields):
                picks = np.flatnonzero(codes == code)
                if len(picks) == 0:
                    continue
                vals = pylist_where_used(child.slice(self.offset, self.length), temporal,
                                          lambda: codes == code, f)
                for k in picks.tolist():
                    out[k] = vals[k]
            return out
        offs = self.value_offsets()
        for code, child, f in zip(self.type.type_codes, self.children, self.type.fields):
            picks = np.flatnonzero(codes == code)
            if len(picks) == 0:
                continue
            sel = offs[picks]
            lo, hi = int(sel.min()), int(sel.max())
            if lo < 0 or hi >= len(child):
                raise ArrowInvalid(f"dense union offset {lo if lo < 0 else hi} outside child of "
                                   f"length {len(child)}")
            vals = pylist_where_used(child.slice(lo, hi - lo + 1), temporal,
                                      lambda: np.isin(np.arange(lo, hi + 1), sel), f)
            for k, o in zip(picks.tolist(), sel.tolist()):
                out[k] = vals[o - lo]
        del code_list
        return out
