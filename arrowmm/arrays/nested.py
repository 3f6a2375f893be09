"""The nested arrays, as ``types.nested`` holds their types: lists (list and large_list, map,
list views, fixed-size lists; their values converted to Python once, in bulk, and cut into
rows), structs (a child per field) and unions (sparse and dense: a type id per row picks the
child)."""
from __future__ import annotations

from typing import List

import numpy as np

from .._core._offsets import (check_dense_union_offsets, check_list_view, check_offsets,
                              check_union_type_ids)
from ..errors import ArrowInvalid
from .base import (Array, covered_mask, need_bytes, pylist_where_used, typed_view,
                   unbacked_rows)
from .numpy_compat import checked_list_offsets, convert as _convert
from .primitive import OffsetsMixin

__all__ = ["ListArray", "MapArray", "ListViewArray", "FixedSizeListArray", "StructArray",
           "UnionArray"]


def _rows_used(offs: np.ndarray, base: int, valid, size: int):
    """``used`` for ``pylist_where_used``: the child values the valid rows of a list cover."""
    def used():
        starts, ends = offs[:-1].astype(np.int64) - base, offs[1:].astype(np.int64) - base
        if valid is not None:
            starts, ends = starts[valid], ends[valid]
        return covered_mask(starts, ends, size)
    return used


def _rows_from_offsets(values: list, offs: np.ndarray, base: int, valid) -> list:
    starts = (offs[:-1] - base).tolist()
    ends = (offs[1:] - base).tolist()
    rows = [values[s:e] for s, e in zip(starts, ends)]
    if valid is not None:
        rows = [r if ok else None for r, ok in zip(rows, valid.tolist())]
    return rows


def _flattened_further(values: Array) -> Array:
    """``values`` flattened until they are not lists (``flatten(recursive=True)``)."""
    while isinstance(values, (ListArray, ListViewArray, FixedSizeListArray)) \
            and not isinstance(values, MapArray):
        values = values.flatten()
    return values


class ListArray(OffsetsMixin, Array):
    """list and large_list."""

    __slots__ = ()

    @property
    def values(self) -> Array:
        """The child array, whole (not sliced to this array's range)."""
        return self.children[0]

    def _check_structure(self, path):
        super()._check_structure(path)
        if len(self.children) != 1:
            raise ArrowInvalid(f"{path}: a list needs 1 child array, has {len(self.children)}")
        self._check_offsets_cheap(path, len(self.children[0]), f"{len(self.children[0])}-element child")

    def _check_full(self, path):
        check_offsets(self.value_offsets(), self.length, len(self.children[0]), path)

    def _values_extent(self):
        return len(self.children[0])

    def _covered_values(self) -> Array:
        """The child values from the first list's start to the last one's end, null slots'
        included (a slice of the child): what offsets rebased to zero index."""
        offs = self.value_offsets()
        return self.children[0].slice(int(offs[0]), int(offs[-1] - offs[0]))

    def flatten(self, recursive: bool = False) -> Array:
        """The values of the lists that are not null, in order, as pyarrow's ``flatten``: a
        null list's values are left out (a slice of the child, zero-copy, when no null list
        holds any).  ``recursive`` flattens until the values are not lists."""
        offs = checked_list_offsets(self)
        base = int(offs[0])
        part = self.children[0].slice(base, int(offs[-1]) - base)
        valid = self._valid_mask()
        if valid is not None:
            starts, ends = offs[:-1].astype(np.int64) - base, offs[1:].astype(np.int64) - base
            if (ends[~valid] > starts[~valid]).any():
                part = part.filter(covered_mask(starts[valid], ends[valid], len(part)))
        return _flattened_further(part) if recursive else part

    def _pylist(self, temporal):
        offs = checked_list_offsets(self)
        base = int(offs[0])
        valid = self._valid_mask()
        part = self.children[0].slice(base, int(offs[-1]) - base)
        values = pylist_where_used(part, temporal, _rows_used(offs, base, valid, len(part)),
                                    self.type.value_field)
        return _rows_from_offsets(values, offs, base, valid)


class MapArray(ListArray):
    """map<k, v>: a list of key/value structs; Python values are lists of (key, value) tuples."""

    __slots__ = ()

    def _check_full(self, path):
        super()._check_full(path)
        keys = self.children[0].children[0]
        if keys.null_count:
            raise ArrowInvalid(f"{path}: map keys contain {keys.null_count} null(s)")

    @property
    def keys(self) -> Array:
        """The keys of every map entry these maps cover, in order."""
        return self._covered_values().field(0)

    @property
    def items(self) -> Array:
        """The items (values) of every map entry these maps cover, in order."""
        return self._covered_values().field(1)

    def _pylist(self, temporal):
        offs = checked_list_offsets(self)
        base = int(offs[0])
        valid = self._valid_mask()
        entries = self.children[0].slice(base, int(offs[-1]) - base)
        used = _rows_used(offs, base, valid, len(entries))
        keys = pylist_where_used(entries.field(0), temporal, used, self.type.key_field)
        items = pylist_where_used(entries.field(1), temporal, used, self.type.item_field)
        pairs = list(zip(keys, items))
        return _rows_from_offsets(pairs, offs, base, valid)


class ListViewArray(Array):
    """list_view and large_list_view: per-slot offsets and sizes into the child."""

    __slots__ = ()

    @property
    def values(self) -> Array:
        """The child array the views point into."""
        return self.children[0]

    def value_offsets(self):
        """Where each list starts in the child values: a read-only numpy view."""
        return typed_view(self._buffers[1], self.type.offset_dtype, self.offset, self.length)

    def value_sizes(self):
        """How many child values each list holds: a read-only numpy view."""
        return typed_view(self._buffers[2], self.type.offset_dtype, self.offset, self.length)

    #: per-slot offsets into ``values``, a read-only numpy view (pyarrow's ``ListViewArray.offsets``)
    offsets = property(value_offsets)
    #: per-slot list sizes, a read-only numpy view (pyarrow's ``ListViewArray.sizes``)
    sizes = property(value_sizes)

    def _check_structure(self, path):
        super()._check_structure(path)
        width = self.type.offset_dtype.itemsize
        need = (self.offset + self.length) * width
        need_bytes(path, "list-view offsets", self._buffers[1].size, need)
        need_bytes(path, "list-view sizes", self._buffers[2].size, need)

    def _check_full(self, path):
        # every slot, null ones too, as pyarrow's full validation: its kernels (a cast to a
        # list) read a null slot's view, and one outside the child crashed the process
        check_list_view(self.value_offsets(), self.value_sizes(), self.length, len(self.children[0]),
                        None, self.offset, path)

    def flatten(self, recursive: bool = False) -> Array:
        """The values of the views that are not null, in slot order, as pyarrow's ``flatten``
        (a copy: views may overlap and come in any order)."""
        self._check_full(f"{self.type}")
        offs, sizes = self.value_offsets().astype(np.int64), self.value_sizes().astype(np.int64)
        valid = self._valid_mask()
        if valid is not None:
            offs, sizes = offs[valid], sizes[valid]
        total = int(sizes.sum())
        ends = np.cumsum(sizes)
        where = np.repeat(offs - (ends - sizes), sizes) + np.arange(total, dtype=np.int64)
        out = self.children[0].take(where)
        return _flattened_further(out) if recursive else out

    def _pylist(self, temporal):
        # every view, null slots' too, as _check_full: a negative size read as [] before
        self._check_full(f"{self.type}")
        valid = self._valid_mask()
        offs, sizes = self.value_offsets(), self.value_sizes()
        if valid is not None:
            offs, sizes = offs[valid], sizes[valid]
        child = self.children[0]
        if len(offs) == 0:
            return [None] * self.length
        starts, ends = offs.astype(np.int64), offs.astype(np.int64) + sizes
        nonempty = sizes > 0
        lo = int(starts[nonempty].min()) if nonempty.any() else 0
        hi = int(ends[nonempty].max()) if nonempty.any() else 0
        values = pylist_where_used(child.slice(lo, hi - lo), temporal,
                                    lambda: covered_mask(starts[nonempty] - lo, ends[nonempty] - lo, hi - lo),
                                    self.type.value_field)
        rows = [values[s - lo:e - lo] if e > s else [] for s, e in zip(starts.tolist(), ends.tolist())]
        if valid is None:
            return rows
        it = iter(rows)
        return [next(it) if ok else None for ok in valid.tolist()]


class FixedSizeListArray(Array):
    """Lists of ``type.list_size`` values each, held end to end in one child array."""

    __slots__ = ()

    @property
    def values(self) -> Array:
        """The child array holding every list's values, end to end (not sliced to this array)."""
        return self.children[0]

    def _check_structure(self, path):
        super()._check_structure(path)
        size = self.type.list_size
        if len(self.children) != 1:
            raise ArrowInvalid(f"{path}: a fixed_size_list needs 1 child array")
        if len(self.children[0]) < (self.offset + self.length) * size:
            raise ArrowInvalid(f"{path}: child has {len(self.children[0])} values, "
                               f"{(self.offset + self.length) * size} needed for "
                               f"{self.offset + self.length} lists of {size}")

    def _covered_values(self) -> Array:
        """The child values of these lists, null slots' included (a slice of the child)."""
        size = self.type.list_size
        return self.children[0].slice(self.offset * size, self.length * size)

    def flatten(self, recursive: bool = False) -> Array:
        """The values of the lists that are not null, as pyarrow's ``flatten`` (a slice of the
        child when none is null)."""
        part = self._covered_values()
        valid = self._valid_mask()
        if valid is not None and self.type.list_size:
            part = part.filter(np.repeat(valid, self.type.list_size))
        return _flattened_further(part) if recursive else part

    def to_numpy(self, zero_copy_only=True, writable=False):
        """A 2-D view (rows x list_size) when the child is fixed-width and nothing is null."""
        if self.null_count:
            if zero_copy_only:
                raise ArrowInvalid(f"{self.null_count} null list(s): a numpy view is impossible")
            return _convert(self)  # pyarrow's rows: a numpy array per list, None per null
        flat = self._covered_values().to_numpy(zero_copy_only, writable)
        if flat.dtype == object:  # rows of nested values: a 2-D object array would split them
            return _convert(self)
        return flat.reshape(self.length, self.type.list_size)

    def _pylist(self, temporal):
        size = self.type.list_size
        valid = self._valid_mask()
        values = pylist_where_used(self._covered_values(), temporal, lambda: np.repeat(
            np.ones(self.length, dtype=bool) if valid is None else valid, size), self.type.value_field)
        rows = [values[i * size:(i + 1) * size] for i in range(self.length)]
        return rows if valid is None else [r if ok else None for r, ok in zip(rows, valid.tolist())]


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

    def logical_validity(self):
        """Each slot takes the validity of the child value it selects (a union has no bitmap
        of its own), as pyarrow's ``is_valid``."""
        codes = self.type_codes()
        check_union_type_ids(codes, self._code_table(), "union")
        out = np.ones(self.length, dtype=bool)
        dense = self.type.mode == "dense"
        if dense:
            self._check_dense_offsets(str(self.type))
        for code, child in zip(self.type.type_codes, self.children):
            part = child if dense else child.slice(self.offset, self.length)
            cvalid = part.logical_validity()
            if cvalid is None:
                continue
            picks = np.flatnonzero(codes == code)
            if not dense:
                out[picks] = cvalid[picks]
                continue
            out[picks] = cvalid[self.value_offsets()[picks]]
        return None if out.all() else out

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

    def _check_dense_offsets(self, path):
        """Each offset inside its child and, per child, in order (the spec's "the offsets for
        each child are in order"): an offset going back would read a value another slot
        reads, with no error."""
        lengths = np.zeros(128, dtype=np.int64)
        for code, child in zip(self.type.type_codes, self.children):
            lengths[code] = len(child)
        check_dense_union_offsets(self.type_codes(), self.value_offsets(), lengths, path)

    def _check_full(self, path):
        check_union_type_ids(self.type_codes(), self._code_table(), path)
        if self.type.mode == "dense":
            self._check_dense_offsets(path)

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
        self._check_dense_offsets(str(self.type))
        offs = self.value_offsets()
        for code, child, f in zip(self.type.type_codes, self.children, self.type.fields):
            picks = np.flatnonzero(codes == code)
            if len(picks) == 0:
                continue
            sel = offs[picks]
            lo, hi = int(sel.min()), int(sel.max())
            vals = pylist_where_used(child.slice(lo, hi - lo + 1), temporal,
                                      lambda: np.isin(np.arange(lo, hi + 1), sel), f)
            for k, o in zip(picks.tolist(), sel.tolist()):
                out[k] = vals[o - lo]
        del code_list
        return out
