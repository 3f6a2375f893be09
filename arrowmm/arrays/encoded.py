"""The encoded arrays: dictionary-encoded (indices into a dictionary array) and run-end-encoded
(run ends plus one value per run)."""
from __future__ import annotations

import numpy as np

from .._core._offsets import check_dictionary_indices, check_run_ends
from .. import types as t
from ..errors import ArrowInvalid
from .base import Array, extension_values, need_bytes
from .numpy_compat import convert
from .primitive import PrimitiveArray

__all__ = ["DictionaryArray", "RunEndEncodedArray"]


class DictionaryArray(Array):
    """Indices (buffers like an integer array) plus ``dictionary``, the values array."""

    __slots__ = ()

    @property
    def indices(self) -> Array:
        """The indices into the dictionary, as an integer array over the same buffers (a
        property, as pyarrow's ``DictionaryArray.indices``)."""
        return PrimitiveArray(self.type.index_type, self.length, self._buffers, (),
                              self._null_count, self.offset)

    def _check_structure(self, path):
        super()._check_structure(path)
        need_bytes(path, "dictionary indices", self._buffers[1].size,
              (self.offset + self.length) * self.type.index_type.byte_width)
        if self.dictionary is None:
            raise ArrowInvalid(f"{path}: dictionary-encoded array without a dictionary")

    def _check_full(self, path):
        check_dictionary_indices(self.indices.values(), self.validity if self.null_count else None,
                                 self.offset, len(self.dictionary), path)

    def logical_validity(self):
        """Valid where the index is valid and the dictionary value it points at is valid (as
        pyarrow's ``is_valid``; ``null_count`` counts null indices only, as pyarrow's)."""
        valid = self._valid_mask()
        dvalid = self.dictionary.logical_validity()
        if dvalid is None:
            return valid
        idx = self.indices.values()
        live = idx if valid is None else idx[valid]
        n = len(dvalid)
        if live.size and (int(live.min()) < 0 or int(live.max()) >= n):
            bad = int(live.min()) if int(live.min()) < 0 else int(live.max())
            raise ArrowInvalid(f"dictionary index {bad} out of range for a dictionary of {n} values")
        if valid is not None:
            idx = np.where(valid, idx, 0)  # (a null slot's index is not a position)
        out = np.take(dvalid, idx)
        if valid is not None:
            out &= valid
        return None if out.all() else out

    def _values_pylist(self, values: Array, temporal) -> list:
        """``values`` (of the dictionary) to Python as the value type gives them: an extension
        type's values through its conversion (a dictionary imported from pyarrow holds the
        storage: its values were the storage's, bytes for UUIDs, 1 for True), as the run-end
        encoded array's below."""
        out = values._pylist(temporal)
        value_type = self.type.value_type
        if isinstance(value_type, t.ExtensionType) and values.type != value_type:
            out = extension_values(out, t.Field("values", value_type))
        return out

    def dictionary_decode(self) -> list:
        """The values the indices point at, as a Python list (pyarrow's method returns an
        array; this is ``to_pylist()``)."""
        return self.to_pylist()

    def to_string(self) -> str:
        """As pyarrow lays a dictionary array out: the whole dictionary, then the indices."""
        def indented(array):
            return "\n".join("  " + line for line in array.to_string().split("\n"))
        return (f"\n-- dictionary:\n{indented(self.dictionary)}"
                f"\n-- indices:\n{indented(self.indices)}")

    def to_numpy(self, zero_copy_only=True, writable=False):
        if zero_copy_only:
            raise ArrowInvalid("dictionary arrays have no numpy view of their values; "
                               "use .indices.to_numpy() for the indices")
        return convert(self)  # the decoded values, converted as the dictionary's type converts

    def _pylist(self, temporal):
        idx = self.indices.values()
        valid = self._valid_mask()
        live = idx if valid is None else idx[valid]
        n = len(self.dictionary)
        if live.size and (int(live.min()) < 0 or int(live.max()) >= n):
            bad = int(live.min()) if int(live.min()) < 0 else int(live.max())
            raise ArrowInvalid(f"dictionary index {bad} out of range for a dictionary of {n} values")
        try:
            values = self._values_pylist(self.dictionary, temporal)
        except ArrowInvalid:
            # a dictionary value Python cannot hold (timestamp[ns] with nanoseconds, ...): like
            # pyarrow, convert only the values the indices use, so unused ones don't raise;
            # damage raises wherever it lies
            self.dictionary.validate(True, "dictionary")
            values = {i: self._values_pylist(self.dictionary.slice(i, 1), temporal)[0]
                      for i in np.unique(live).tolist()}
        if valid is None:
            return [values[i] for i in idx.tolist()]
        return [values[i] if ok else None for i, ok in zip(idx.tolist(), valid.tolist())]


class RunEndEncodedArray(Array):
    """Children: run_ends (int16/32/64, strictly increasing) and values."""

    __slots__ = ()

    @property
    def null_count(self):
        """Always 0: a run-end-encoded array has no validity bitmap (its values carry nulls)."""
        return 0

    @property
    def validity(self):
        """Always None: nulls live in ``values``, not in a bitmap."""
        return None

    @property
    def run_ends(self) -> Array:
        """The child holding where each run ends (exclusive row index)."""
        return self.children[0]

    @property
    def values(self) -> Array:
        """The child holding each run's value."""
        return self.children[1]

    def logical_validity(self):
        """Each row takes its run's value's validity (the array has no bitmap of its own)."""
        vvalid = self.values.logical_validity()
        if vvalid is None or self.length == 0:
            return None
        first, last, counts = self._runs()
        out = np.repeat(vvalid[first:last + 1], counts)
        return None if out.all() else out

    def decoded(self) -> Array:
        """Each row's value, one per row (a copy), as ``pyarrow.compute.run_end_decode``."""
        if self.length == 0:
            return self.values.slice(0, 0)
        first, last, counts = self._runs()
        return self.values.take(np.repeat(np.arange(first, last + 1, dtype=np.int64), counts))

    def _runs(self):
        """(first run, last run, rows of each run from first to last) of this slice."""
        ends = self.children[0].values()
        check_run_ends(ends, self.offset + self.length, "run ends")
        first = int(np.searchsorted(ends, self.offset, side="right"))
        last = int(np.searchsorted(ends, self.offset + self.length - 1, side="right"))
        bounds = np.minimum(ends[first:last + 1], self.offset + self.length) - self.offset
        return first, last, np.diff(np.concatenate(([0], bounds)))

    def _check_structure(self, path):
        if self.length < 0 or self.offset < 0:
            raise ArrowInvalid(f"{path}: negative length or offset")
        if len(self.children) != 2:
            raise ArrowInvalid(f"{path}: run_end_encoded needs 2 children, has {len(self.children)}")
        ends, values = self.children
        if len(ends) != len(values):
            raise ArrowInvalid(f"{path}: {len(ends)} run ends but {len(values)} values")
        if ends.null_count:
            raise ArrowInvalid(f"{path}: run ends contain nulls")
        need = self.offset + self.length
        if need and (len(ends) == 0 or int(ends.values()[-1]) < need):
            last = int(ends.values()[-1]) if len(ends) else 0
            raise ArrowInvalid(f"{path}: last run end {last} < offset + length {need}")

    def _check_full(self, path):
        check_run_ends(self.children[0].values(), self.offset + self.length, path)

    def _pylist(self, temporal):
        if self.length == 0:
            return []
        first, last, counts = self._runs()
        vals = extension_values(self.children[1].slice(first, last - first + 1)._pylist(temporal),
                                 self.type.value_field)
        out = []
        for v, c in zip(vals, counts.tolist()):
            out.extend([v] * c)
        return out
