"""``ChunkedArray``: one column across the batches of a table, its chunks borrowed."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import numpy as np

from .. import hooks, types as t
from .array import Array
from .concat import concat_arrays
from ..errors import ArrowInvalid
from .pandas_compat import array_to_series, conversion_options
from .selection import as_indices, as_mask

__all__ = ["ChunkedArray", "aligned_pieces"]


def aligned_pieces(a: Sequence[Array], b: Sequence[Array]):
    """Pairs of equal-length slices of the chunks ``a`` and ``b`` (same total length) that
    cover both in order: how two chunkings of the same values are compared."""
    ia = ib = oa = ob = 0
    while ia < len(a) and ib < len(b):
        ca, cb = a[ia], b[ib]
        n = min(len(ca) - oa, len(cb) - ob)
        if n > 0:
            yield ca.slice(oa, n), cb.slice(ob, n)
        oa += n
        ob += n
        if oa >= len(ca):
            ia, oa = ia + 1, 0
        if ob >= len(cb):
            ib, ob = ib + 1, 0


class ChunkedArray:
    """Arrays of one type read as one: a column of a ``Table`` (a chunk per batch).

    Examples
    --------
    >>> import arrowmm
    >>> c = arrowmm.ChunkedArray([arrowmm.array([1, 2]), arrowmm.array([3])])
    >>> c.num_chunks, len(c), c.to_pylist()
    (2, 3, [1, 2, 3])
    """

    __slots__ = ("_chunks", "_type", "_length", "_name")

    def __init__(self, chunks: Sequence[Array], type: Optional[t.DataType] = None):  # noqa: A002
        chunks = list(chunks)
        if type is None:
            if not chunks:
                raise ArrowInvalid("a ChunkedArray of no chunks needs its type")
            type = chunks[0].type  # noqa: A001
        for k, c in enumerate(chunks):
            if not isinstance(c, Array):
                raise ArrowInvalid(f"chunk {k} is a {c.__class__.__name__}, not an arrowmm Array")
            if c.type != type:
                raise ArrowInvalid(f"chunk {k} is {c.type}, the chunked array {type}")
        self._chunks = chunks
        self._type = type
        self._length = sum(len(c) for c in chunks)
        self._name = None  # (a table's column: its name, which to_pandas gives its Series)

    @property
    def type(self) -> t.DataType:
        """The type every chunk has."""
        return self._type

    @property
    def chunks(self) -> List[Array]:
        """The chunks, in order."""
        return list(self._chunks)

    @property
    def num_chunks(self) -> int:
        """How many chunks there are."""
        return len(self._chunks)

    def iterchunks(self):
        """The chunks, one after another (``pyarrow.ChunkedArray.iterchunks``)."""
        return iter(self._chunks)

    def chunk(self, i: int) -> Array:
        """Chunk ``i`` (negative from the end), as ``pyarrow.ChunkedArray.chunk``."""
        return self._chunks[i]

    def __len__(self) -> int:
        return self._length

    def length(self) -> int:
        """The number of values across all chunks (``len()`` too)."""
        return self._length

    @property
    def null_count(self) -> int:
        """The number of nulls over all chunks."""
        return sum(c.null_count for c in self._chunks)

    def __iter__(self):
        for c in self._chunks:
            yield from c.to_pylist()

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._length)
            if step != 1:
                raise ArrowInvalid("a ChunkedArray slice takes no step")
            return self.slice(start, max(0, stop - start))
        k = int(i)
        if k < 0:
            k += self._length
        if not 0 <= k < self._length:
            raise IndexError(f"index {i} out of range for a chunked array of {self._length}")
        for c in self._chunks:
            if k < len(c):
                return c[k]
            k -= len(c)
        raise IndexError(f"index {i} out of range")  # (unreachable: lengths were summed)

    def slice(self, offset: int = 0, length: Optional[int] = None) -> "ChunkedArray":
        """Rows ``[offset, offset + length)``, zero-copy (chunks outside dropped)."""
        offset = int(offset)
        if offset < 0:
            raise ArrowInvalid(f"slice offset must be >= 0, got {offset}")
        offset = min(offset, self._length)
        length = self._length - offset if length is None else \
            max(0, min(int(length), self._length - offset))
        out = []
        for c in self._chunks:
            n = len(c)
            if length <= 0:
                break
            if offset >= n:
                offset -= n
                continue
            take = min(n - offset, length)
            out.append(c if (offset == 0 and take == n) else c.slice(offset, take))
            length -= take
            offset = 0
        return ChunkedArray(out, self._type)

    def cast(self, target_type: Union[t.DataType, str], safe: bool = True) -> "ChunkedArray":
        """Every chunk cast to ``target_type`` (a type or its name: ``Array.cast``; pyarrow's
        ``ChunkedArray.cast``)."""
        target_type = t.ensure_type(target_type)
        return ChunkedArray([c.cast(target_type, safe) for c in self._chunks], target_type)

    def combine_chunks(self) -> Array:
        """One array of every chunk (the chunk itself when there is one; else a copy)."""
        if len(self._chunks) == 1:
            return self._chunks[0]
        if not self._chunks:
            raise ArrowInvalid("combine_chunks() of a chunked array with no chunks")
        return concat_arrays(self._chunks)

    # -- selection (copies, as ``Array``'s) ----------------------------------------------------
    def filter(self, mask) -> "ChunkedArray":
        """The values where ``mask`` (a boolean array, chunked or not, numpy bool or a list, as
        long as this) is True, chunk by chunk; a null in the mask drops its value."""
        keep = as_mask(mask, self._length)
        out, at = [], 0
        for c in self._chunks:
            out.append(c.filter(keep[at:at + len(c)]))
            at += len(c)
        return ChunkedArray(out, self._type)

    def take(self, indices) -> "ChunkedArray":
        """The values at ``indices`` (as ``Array.take``), as one chunk."""
        if not self._chunks:
            as_indices(indices, 0)  # (raises unless there is no index)
            return ChunkedArray([], self._type)
        return ChunkedArray([self.combine_chunks().take(indices)], self._type)

    def drop_null(self) -> "ChunkedArray":
        """The values without the nulls, chunk by chunk (``Array.drop_null``)."""
        return ChunkedArray([c.drop_null() for c in self._chunks], self._type)

    # -- distinct values (the hash kernels of ``compute``) --------------------------------------
    def dictionary_encode(self, null_encoding: str = "mask") -> "ChunkedArray":
        """The values as dictionary arrays, chunk by chunk, sharing one dictionary of the
        distinct values, first seen first (``Array.dictionary_encode``)."""
        return hooks.dictionary_encode(self, null_encoding)

    def unique(self) -> Array:
        """The distinct values of every chunk, first seen first (``Array.unique``)."""
        return hooks.unique(self)

    def value_counts(self) -> Array:
        """The distinct values of every chunk and their counts (``Array.value_counts``)."""
        return hooks.value_counts(self)

    def to_pylist(self, *, temporal: str = "python") -> list:
        """Every chunk's values, in order, as one list (see ``Array.to_pylist``)."""
        out = []
        for c in self._chunks:
            out.extend(c.to_pylist(temporal=temporal))
        return out

    def to_numpy(self, zero_copy_only: bool = False, writable: bool = False) -> np.ndarray:
        """The values as numpy: a view of the mapping for one chunk of a fixed-width type,
        one copy (the chunks concatenated) otherwise.  ``zero_copy_only=True`` raises
        ``ArrowInvalid`` when there is more than one chunk."""
        chunks = self._chunks
        if len(chunks) == 1:
            return chunks[0].to_numpy(zero_copy_only=zero_copy_only, writable=writable)
        if zero_copy_only:
            raise ArrowInvalid(f"{len(chunks)} chunks have no single zero-copy view; use "
                               f"to_numpy(zero_copy_only=False) (one copy)")
        if not chunks:
            dtype = self._type.numpy_dtype
            return np.empty(0, dtype=dtype if dtype is not None else object)
        return concat_arrays(chunks).to_numpy(zero_copy_only=False, writable=writable)

    def to_pandas(self, *, date_as_object: bool = True, timestamp_as_object: bool = False,
                  integer_object_nulls: bool = False, maps_as_pydicts=None,
                  split_blocks: bool = False, self_destruct: bool = False):
        """A ``pandas.Series``, as pyarrow's ``ChunkedArray.to_pandas()``: named as the column
        when it is a table's, else unnamed, with its options (see ``Table.to_pandas``;
        ``split_blocks`` and ``self_destruct`` change nothing).  Needs pandas."""
        series = array_to_series(list(self._chunks), self._type, conversion_options(
            date_as_object, timestamp_as_object, integer_object_nulls, maps_as_pydicts))
        series.name = self._name
        return series

    def equals(self, other: "ChunkedArray") -> bool:
        """Same type and values, however each is cut into chunks."""
        if not isinstance(other, ChunkedArray) or self._type != other._type or \
                self._length != other._length:
            return False
        return all(x.equals(y) for x, y in aligned_pieces(self._chunks, other._chunks))

    def __eq__(self, other):
        return self.equals(other)

    __hash__ = None

    def __arrow_c_stream__(self, requested_schema=None):
        """The chunks as an Arrow C stream of arrays (``pyarrow.chunked_array(c)``, polars
        ``Series``), zero-copy."""
        return hooks.export_c_array_stream(self._type, list(self._chunks), requested_schema)

    def __repr__(self):
        return f"<arrowmm.ChunkedArray {self._type} chunks={len(self._chunks)} length={self._length}>"
