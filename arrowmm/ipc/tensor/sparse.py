"""Sparse tensors: the IPC ``SparseTensor`` message (COO, CSR, CSC and CSF indexes).

Why here: like a dense tensor, a sparse tensor is one standalone message; its body holds the
index buffers and then the non-zero values.  Reading hands out read-only numpy views of those
buffers (zero-copy); ``to_dense()`` builds the dense array on request.

The layout written matches Arrow C++ (``SparseTensorSerializer`` in ``ipc/writer.cc``), the only
implementation that reads these messages:

* body buffers in order: COO ``indices, data``; CSR / CSC ``indptr, indices, data``;
  CSF ``indptr[0..ndim-2], indices[0..ndim-1], data``; each padded to 8 bytes;
* the Buffer length of a COO / CSR / CSC buffer, and of the data, is its padded byte size;
* the Buffer length of a CSF indptr / indices buffer is its *element count* (what Arrow C++
  writes and reads back as the level's size, although Buffer lengths elsewhere are bytes); the
  reader follows the same reading;
* the metadata is padded to 8 bytes (the default IPC alignment).

A hostile header can name any shape, count or buffer: every buffer must lie inside the body and
hold what the shape needs; indices must lie inside the shape; indptr must start at 0, never
decrease and end at the count of what it points into.  Failures are ``ArrowInvalid``.
"""
from __future__ import annotations


import numpy as np

from ... import limits
from ... import types as t
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ...format import MessageHeader, encode_sparse_tensor_message, parse_sparse_tensor_header
from ..core.files import open_sink
from .dense import (checked_shape, frame_message, little_endian, read_header_message,
                     row_major_strides, strided_view, tensor_value_type, Tensor)

__all__ = ["SparseCOOTensor", "SparseCSRMatrix", "SparseCSCMatrix", "SparseCSFTensor",
           "read_sparse_tensor", "write_sparse_tensor"]

#: Default IPC alignment (Arrow C++ IpcWriteOptions::Defaults) of metadata and body buffers.
_ALIGNMENT = 8


def _values(obj, what: str) -> tuple:
    """(type, 1-D little-endian values) from array-like ``obj``."""
    arr = np.asarray(obj)
    value_type = tensor_value_type(arr.dtype)
    if arr.dtype.kind == "b":
        arr = arr.view(np.uint8)
    return value_type, np.ascontiguousarray(arr.reshape(-1), dtype=little_endian(value_type))


def _index_array(obj, what: str) -> np.ndarray:
    arr = np.asarray(obj)
    if arr.dtype.kind not in "iu":
        raise ArrowInvalid(f"{what} must hold integers, not {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))


def _index_type(arr: np.ndarray) -> t.IntType:
    return t.IntType(arr.dtype.itemsize * 8, arr.dtype.kind == "i")


def _check_range(index: np.ndarray, upper: int, what: str) -> None:
    """Every value of ``index`` lies in [0, upper)."""
    if index.size == 0:
        return
    low, high = int(index.min()), int(index.max())
    if low < 0 or high >= upper:
        bad = low if low < 0 else high
        raise ArrowInvalid(f"{what}: index {bad} lies outside [0, {upper})")


def _check_indptr(indptr: np.ndarray, end: int, what: str) -> None:
    """``indptr`` starts at 0, never decreases and ends at ``end``."""
    if indptr.size == 0:
        raise ArrowInvalid(f"{what}: indptr is empty")
    first, last = int(indptr[0]), int(indptr[-1])
    if first != 0 or last != end:
        raise ArrowInvalid(f"{what}: indptr runs from {first} to {last}, expected 0 to {end}")
    if indptr.size > 1 and bool((indptr[1:] < indptr[:-1]).any()):
        at = int(np.argmax(indptr[1:] < indptr[:-1]))
        raise ArrowInvalid(f"{what}: indptr decreases at position {at + 1} "
                           f"({int(indptr[at])} -> {int(indptr[at + 1])})")


class _SparseTensor:
    """What every sparse layout shares: value type, shape, dim names and the non-zero values."""

    __slots__ = ("type", "shape", "_dim_names", "_data")
    kind = ""

    def _init(self, value_type, data, shape, dim_names):
        self.type = value_type
        self._data = data
        self.shape = tuple(int(s) for s in shape)
        names = () if dim_names is None else tuple(dim_names)
        if names and len(names) != len(self.shape):
            raise ArrowInvalid(f"{len(names)} dim_names for a {len(self.shape)}-dimensional tensor")
        self._dim_names = names

    @property
    def data(self) -> np.ndarray:
        """The non-zero values, in index order (read-only view for a tensor read from bytes)."""
        return self._data

    @property
    def non_zero_length(self) -> int:
        """The number of stored (non-zero) values."""
        return int(self._data.shape[0])

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements of the dense tensor (the product of ``shape``)."""
        return int(np.prod(self.shape, dtype=object)) if self.shape else 1

    @property
    def dim_names(self) -> list:
        return list(self._dim_names) if any(self._dim_names) else []

    def dim_name(self, i: int) -> str:
        """The name of dimension ``i``; ``""`` when the dimensions are unnamed."""
        return self._dim_names[i] if self._dim_names else ""

    def _coords_matrix(self) -> np.ndarray:  # pragma: no cover - each layout defines it
        """(nnz, ndim) int coordinates of the values."""
        raise NotImplementedError

    def to_dense(self) -> np.ndarray:
        """The dense array (a new, writable numpy array)."""
        dtype = little_endian(self.type)
        checked_shape(self.shape, dtype.itemsize, f"sparse {self.kind} tensor")
        try:
            dense = np.zeros(self.shape, dtype=dtype)
        except (MemoryError, ValueError) as exc:
            raise ArrowInvalid(f"sparse {self.kind} tensor of shape {self.shape}: the dense array "
                               f"cannot be allocated ({exc})") from None
        if self.non_zero_length and self.ndim == 0:
            dense[()] = self._data[0]
        elif self.non_zero_length:
            coords = self._coords_matrix()
            dense[tuple(coords[:, j] for j in range(self.ndim))] = self._data
        return dense

    def to_numpy(self):
        """pyarrow's ``to_numpy()``: the values as an (n, 1) column and the index arrays (COO:
        ``(data, coords)``; CSR/CSC: ``(data, indptr, indices)``; CSF: ``(data, [indptr...],
        [indices...])``), views where the tensor was read.  ``to_dense()`` gives the array."""
        return (self._data.reshape(-1, 1),) + self._index_arrays()

    def _index_arrays(self) -> tuple:  # pragma: no cover - each layout defines it
        raise NotImplementedError

    def to_tensor(self):
        """The dense values as an arrowmm ``Tensor`` (pyarrow's ``to_tensor()``)."""
        return Tensor.from_numpy(self.to_dense(), dim_names=self.dim_names or None)

    def equals(self, other) -> bool:
        """Same layout kind, type, shape and dense values."""
        return (type(other) is type(self) and self.type == other.type and self.shape == other.shape
                and bool(np.array_equal(self.to_dense(), other.to_dense())))

    __hash__ = None

    def __eq__(self, other):
        return self.equals(other) if isinstance(other, _SparseTensor) else NotImplemented

    def __repr__(self):
        return (f"<arrowmm.{type(self).__name__} type={self.type} shape={self.shape} "
                f"non_zero_length={self.non_zero_length}>")


class SparseCOOTensor(_SparseTensor):
    """Coordinate layout: an (nnz, ndim) matrix of coordinates and the nnz values.

    Examples
    --------
    >>> import numpy as np, arrowmm
    >>> s = arrowmm.SparseCOOTensor.from_dense_numpy(np.array([[0, 1], [2, 0]]))
    >>> s.coords.tolist(), s.data.tolist()
    ([[0, 1], [1, 0]], [1, 2])
    """

    __slots__ = ("_coords", "has_canonical_format")
    kind = "COO"

    def __init__(self, value_type, data, coords, shape, dim_names=None, canonical=False):
        self._init(value_type, data, shape, dim_names)
        self._coords = coords
        self.has_canonical_format = bool(canonical)

    @property
    def coords(self) -> np.ndarray:
        """(nnz, ndim) coordinates of the values."""
        return self._coords

    def _coords_matrix(self):
        return self._coords

    def _index_arrays(self) -> tuple:
        return (self._coords,)

    @classmethod
    def from_numpy(cls, data, coords, shape, dim_names=None) -> "SparseCOOTensor":
        """From values, an (nnz, ndim) coordinate matrix and the shape (checked)."""
        value_type, values = _values(data, "data")
        coords = _index_array(coords, "coords")
        shape = tuple(int(s) for s in shape)
        if coords.ndim != 2 or coords.shape != (values.shape[0], len(shape)):
            raise ArrowInvalid(f"coords of shape {coords.shape} do not fit {values.shape[0]} values "
                               f"of a {len(shape)}-dimensional tensor")
        checked_shape(shape, values.itemsize, "sparse COO tensor")
        for j, size in enumerate(shape):
            _check_range(coords[:, j], size, f"sparse COO tensor coordinate {j}")
        canonical = _lexsorted_unique(coords)
        return cls(value_type, values, coords, shape, dim_names, canonical)

    @classmethod
    def from_dense_numpy(cls, obj, dim_names=None) -> "SparseCOOTensor":
        """The non-zero values of a dense array (NaN counts as non-zero), in row-major order."""
        arr = np.asarray(obj)
        value_type = tensor_value_type(arr.dtype)
        coords = np.argwhere(arr != 0).astype("<i8")
        values = _values(arr[tuple(coords[:, j] for j in range(arr.ndim))], "data")[1]
        return cls(value_type, values, coords, arr.shape, dim_names, True)


def _lexsorted_unique(coords: np.ndarray) -> bool:
    if coords.shape[0] < 2 or coords.shape[1] == 0:
        return coords.shape[0] < 2
    a, b = coords[:-1], coords[1:]
    diff = (b.astype(np.int64) != a.astype(np.int64))
    first = np.argmax(diff, axis=1)
    any_diff = diff.any(axis=1)
    rows = np.arange(len(a))
    return bool(any_diff.all() and (b[rows, first] > a[rows, first]).all())


class _SparseCSX(_SparseTensor):
    """Compressed sparse row / column matrices."""

    __slots__ = ("_indptr", "_indices")
    axis = 0  # the compressed axis

    def __init__(self, value_type, data, indptr, indices, shape, dim_names=None):
        self._init(value_type, data, shape, dim_names)
        self._indptr = indptr
        self._indices = indices

    @property
    def indptr(self) -> np.ndarray:
        """The compressed index pointer: where each row's (CSR) or column's (CSC) entries start."""
        return self._indptr

    @property
    def indices(self) -> np.ndarray:
        """The column (CSR) or row (CSC) index of each stored value."""
        return self._indices

    def _index_arrays(self) -> tuple:
        return (self._indptr, self._indices)

    def _coords_matrix(self) -> np.ndarray:
        major = np.repeat(np.arange(self.shape[self.axis], dtype=np.int64),
                          np.diff(self._indptr.astype(np.int64)))
        minor = self._indices.astype(np.int64)
        return np.stack([major, minor] if self.axis == 0 else [minor, major], axis=1)

    @classmethod
    def _check(cls, shape, indptr, indices, nnz, what):
        if len(shape) != 2:
            raise ArrowInvalid(f"{what}: a sparse matrix has 2 dimensions, not {len(shape)}")
        if indptr.shape != (shape[cls.axis] + 1,):
            raise ArrowInvalid(f"{what}: indptr holds {indptr.size} entries, expected "
                               f"{shape[cls.axis] + 1}")
        if indices.shape != (nnz,):
            raise ArrowInvalid(f"{what}: indices hold {indices.size} entries, expected {nnz}")
        _check_indptr(indptr, nnz, what)
        _check_range(indices, shape[1 - cls.axis], what)

    @classmethod
    def from_numpy(cls, data, indptr, indices, shape, dim_names=None):
        """From values, indptr, indices and the shape (checked)."""
        value_type, values = _values(data, "data")
        indptr, indices = _index_array(indptr, "indptr"), _index_array(indices, "indices")
        shape = tuple(int(s) for s in shape)
        checked_shape(shape, values.itemsize, f"sparse {cls.kind} matrix")
        cls._check(shape, indptr, indices, values.shape[0], f"sparse {cls.kind} matrix")
        return cls(value_type, values, indptr, indices, shape, dim_names)

    @classmethod
    def from_dense_numpy(cls, obj, dim_names=None):
        """The non-zero values of a 2-d array, compressed along rows (CSR) or columns (CSC)."""
        arr = np.asarray(obj)
        if arr.ndim != 2:
            raise ArrowInvalid(f"a sparse matrix has 2 dimensions, not {arr.ndim}")
        major = arr if cls.axis == 0 else arr.T
        coords = np.argwhere(major != 0)
        values = major[coords[:, 0], coords[:, 1]]
        value_type, values = tensor_value_type(arr.dtype), _values(values, "data")[1]
        counts = np.bincount(coords[:, 0], minlength=major.shape[0]) if len(coords) else \
            np.zeros(major.shape[0], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype("<i8")
        return cls(value_type, values, indptr, coords[:, 1].astype("<i8"), arr.shape, dim_names)


class SparseCSRMatrix(_SparseCSX):
    """Compressed sparse row matrix: row i holds values ``indptr[i]`` to ``indptr[i+1]``."""

    __slots__ = ()
    kind = "CSR"
    axis = 0


class SparseCSCMatrix(_SparseCSX):
    """Compressed sparse column matrix: column j holds values ``indptr[j]`` to ``indptr[j+1]``."""

    __slots__ = ()
    kind = "CSC"
    axis = 1


class SparseCSFTensor(_SparseTensor):
    """Compressed sparse fiber: one tree level per axis (in ``axis_order``); a leaf is a value."""

    __slots__ = ("_indptr", "_indices", "axis_order")
    kind = "CSF"

    def __init__(self, value_type, data, indptr, indices, axis_order, shape, dim_names=None):
        self._init(value_type, data, shape, dim_names)
        self._indptr = list(indptr)
        self._indices = list(indices)
        self.axis_order = tuple(int(a) for a in axis_order)

    @property
    def indptr(self) -> list:
        """One index-pointer array per level but the last, in ``axis_order``."""
        return self._indptr

    @property
    def indices(self) -> list:
        """One index array per level, in ``axis_order``: the coordinates of stored values."""
        return self._indices

    def _index_arrays(self) -> tuple:
        return (list(self._indptr), list(self._indices))

    def _coords_matrix(self) -> np.ndarray:
        ndim, nnz = self.ndim, self.non_zero_length
        coords = np.empty((nnz, ndim), dtype=np.int64)
        node = np.arange(nnz, dtype=np.int64)
        coords[:, self.axis_order[-1]] = self._indices[-1].astype(np.int64)
        for d in range(ndim - 2, -1, -1):  # parent of each node: the last indptr entry <= it
            node = np.searchsorted(self._indptr[d].astype(np.int64), node, side="right") - 1
            coords[:, self.axis_order[d]] = self._indices[d].astype(np.int64)[node]
        return coords

    @staticmethod
    def _check(shape, indptr, indices, axis_order, nnz, what):
        ndim = len(shape)
        if ndim == 0:
            raise ArrowInvalid(f"{what}: a CSF tensor needs at least one dimension")
        if sorted(axis_order) != list(range(ndim)):
            raise ArrowInvalid(f"{what}: axisOrder {tuple(axis_order)} is not a permutation of "
                               f"the {ndim} axes")
        if len(indptr) != ndim - 1 or len(indices) != ndim:
            raise ArrowInvalid(f"{what}: {len(indptr)} indptr and {len(indices)} indices buffers "
                               f"for {ndim} dimensions (expected {ndim - 1} and {ndim})")
        if indices[-1].shape != (nnz,):
            raise ArrowInvalid(f"{what}: the last level holds {indices[-1].size} indices, "
                               f"expected non_zero_length {nnz}")
        for d in range(ndim):
            if indices[d].ndim != 1:
                raise ArrowInvalid(f"{what}: indices of level {d} are not 1-dimensional")
            _check_range(indices[d], shape[axis_order[d]], f"{what} level {d} indices")
        for d in range(ndim - 1):
            if indptr[d].shape != (indices[d].size + 1,):
                raise ArrowInvalid(f"{what}: indptr of level {d} holds {indptr[d].size} entries, "
                                   f"expected {indices[d].size + 1}")
            _check_indptr(indptr[d], indices[d + 1].size, f"{what} level {d}")

    @classmethod
    def from_numpy(cls, data, indptr, indices, axis_order, shape, dim_names=None):
        """From values, per-level indptr and indices, the axis order and the shape (checked)."""
        value_type, values = _values(data, "data")
        indptr = [_index_array(p, f"indptr[{d}]") for d, p in enumerate(indptr)]
        indices = [_index_array(i, f"indices[{d}]") for d, i in enumerate(indices)]
        shape = tuple(int(s) for s in shape)
        checked_shape(shape, values.itemsize, "sparse CSF tensor")
        cls._check(shape, indptr, indices, tuple(axis_order), values.shape[0], "sparse CSF tensor")
        return cls(value_type, values, indptr, indices, axis_order, shape, dim_names)

    @classmethod
    def from_dense_numpy(cls, obj, dim_names=None) -> "SparseCSFTensor":
        """The non-zero values of a dense array, one tree level per axis in axis order 0..n-1."""
        arr = np.asarray(obj)
        if arr.ndim == 0:
            raise ArrowInvalid("a CSF tensor needs at least one dimension")
        value_type = tensor_value_type(arr.dtype)
        coords = np.argwhere(arr != 0)  # row-major: lexicographic in axis order 0..n-1
        values = _values(arr[tuple(coords[:, j] for j in range(arr.ndim))], "data")[1]
        ndim, nnz = arr.ndim, coords.shape[0]
        starts = []  # per level, the rows where a new node (a new coordinate prefix) begins
        for d in range(ndim):
            new = np.ones(nnz, dtype=bool)
            if nnz > 1:
                new[1:] = (coords[1:, :d + 1] != coords[:-1, :d + 1]).any(axis=1)
            starts.append(np.flatnonzero(new))
        indices = [coords[starts[d], d].astype("<i8") for d in range(ndim)]
        indptr = [np.append(np.searchsorted(starts[d + 1], starts[d]), len(starts[d + 1])).astype("<i8")
                  for d in range(ndim - 1)]
        return cls(value_type, values, indptr, indices, range(ndim), arr.shape, dim_names)


# -- reading -----------------------------------------------------------------------------------

def _index_view(body, pair, itype: t.IntType, count: int, what: str, name: str) -> np.ndarray:
    dtype = little_endian(itype)
    return strided_view(body, pair, (count,), (dtype.itemsize,), dtype, what, name)


def read_sparse_tensor(source, offset: int = 0):
    """Read the SparseTensor message at ``offset`` of ``source``, zero-copy.

    ``source`` is a path (memory-mapped read-only), a ``Region`` or a buffer-protocol object.
    Returns a ``SparseCOOTensor``, ``SparseCSRMatrix``, ``SparseCSCMatrix`` or
    ``SparseCSFTensor`` whose index and value arrays are read-only views into ``source``.
    """
    what = f"sparse tensor at byte {offset}"
    message, _ = read_header_message(source, offset, MessageHeader.SparseTensor, what)
    header = parse_sparse_tensor_header(message.header, what)
    body = message.body
    dtype = little_endian(header.type)
    shape = header.shape
    checked_shape(shape, dtype.itemsize, what)
    nnz = header.non_zero_length
    if nnz < 0:
        raise ArrowInvalid(f"{what}: negative non_zero_length {nnz}")
    size = checked_shape(shape, 1, what)
    if nnz > size:
        raise ArrowInvalid(f"{what}: {nnz} non-zero values is more non-zero values than the "
                           f"{size} elements of shape {tuple(shape)}")
    data = strided_view(body, header.data, (nnz,), (dtype.itemsize,), dtype, what, "data")
    index = header.index
    kind = header.index_kind
    names = header.dim_names
    what = f"{what} ({kind})"
    if kind == "COO":
        itype = little_endian(index["indices_type"])
        ndim = len(shape)
        strides = index["indices_strides"]
        if not strides:
            strides = (itype.itemsize * ndim, itype.itemsize)
        elif len(strides) != 2:
            raise ArrowInvalid(f"{what}: indicesStrides has {len(strides)} entries, expected 2")
        coords = strided_view(body, index["indices"], (nnz, ndim), strides, itype, what, "indices")
        for j, size in enumerate(shape):
            _check_range(coords[:, j], size, f"{what} coordinate {j}")
        return SparseCOOTensor(header.type, data, coords, shape, names, index["canonical"])
    if kind in ("CSR", "CSC"):
        cls = SparseCSRMatrix if kind == "CSR" else SparseCSCMatrix
        if len(shape) != 2:
            raise ArrowInvalid(f"{what}: a sparse matrix has 2 dimensions, not {len(shape)}")
        indptr = _index_view(body, index["indptr"], index["indptr_type"], shape[cls.axis] + 1,
                             what, "indptr")
        indices = _index_view(body, index["indices"], index["indices_type"], nnz, what, "indices")
        cls._check(shape, indptr, indices, nnz, what)
        return cls(header.type, data, indptr, indices, shape, names)
    if kind == "CSF":
        # Arrow C++ records each level's element count as the Buffer length (see the docstring).
        def level(pair, itype, name):
            offset, count = pair
            if count < 0:
                raise ArrowInvalid(f"{what}: {name} buffer has negative length {count}")
            width = itype.bit_width // 8
            if count > (body.size // width):
                raise ArrowInvalid(f"{what}: {name} buffer of {count} {width}-byte elements is larger "
                                   f"than the {body.size}-byte body")
            return _index_view(body, (offset, count * width), itype, count, what, name)
        indptr = [level(p, index["indptr_type"], f"indptr[{d}]") for d, p in enumerate(index["indptr"])]
        indices = [level(p, index["indices_type"], f"indices[{d}]")
                   for d, p in enumerate(index["indices"])]
        SparseCSFTensor._check(shape, indptr, indices, index["axis_order"], nnz, what)
        return SparseCSFTensor(header.type, data, indptr, indices, index["axis_order"], shape, names)
    raise ArrowNotImplementedError(f"{what}: sparse index {kind}")  # pragma: no cover


# -- writing -----------------------------------------------------------------------------------

def _padded(nbytes: int) -> int:
    return (nbytes + _ALIGNMENT - 1) // _ALIGNMENT * _ALIGNMENT


def _payload(sparse) -> tuple:
    """(framed metadata, body parts, body length) laid out as Arrow C++ writes them."""
    if not isinstance(sparse, _SparseTensor):
        raise ArrowInvalid(f"expected an arrowmm sparse tensor, got {type(sparse).__name__}")
    parts, pairs, position = [], [], 0

    def add(arr: np.ndarray):
        nonlocal position
        raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        pairs.append((position, _padded(raw.nbytes)))
        parts.append(raw)
        pad = _padded(raw.nbytes) - raw.nbytes
        if pad:
            parts.append(b"\x00" * pad)
        position += _padded(raw.nbytes)
        return raw.nbytes

    kind = sparse.kind
    if kind == "COO":
        coords = np.ascontiguousarray(sparse.coords)
        add(coords)
        index = {"indices_type": _index_type(coords), "canonical": sparse.has_canonical_format,
                 "indices_strides": row_major_strides(coords.shape, coords.itemsize),
                 "indices": pairs[0]}
    elif kind in ("CSR", "CSC"):
        add(sparse.indptr)
        add(sparse.indices)
        index = {"indptr_type": _index_type(sparse.indptr), "indptr": pairs[0],
                 "indices_type": _index_type(sparse.indices), "indices": pairs[1]}
    else:
        counts = []
        for arr in sparse.indptr + sparse.indices:
            add(arr)
            counts.append(arr.size)
        level_pairs = [(offset, count) for (offset, _), count in zip(pairs, counts)]
        n_ptr = len(sparse.indptr)
        index = {"indptr_type": _index_type(sparse.indptr[0]) if n_ptr else t.IntType(64, True),
                 "indptr": level_pairs[:n_ptr], "indices_type": _index_type(sparse.indices[0]),
                 "indices": level_pairs[n_ptr:], "axis_order": sparse.axis_order}
        if any(arr.dtype != sparse.indptr[0].dtype for arr in sparse.indptr) or \
                any(arr.dtype != sparse.indices[0].dtype for arr in sparse.indices):
            raise ArrowInvalid("CSF indptr (and indices) arrays must share one integer type")
    add(sparse.data)
    metadata = encode_sparse_tensor_message(sparse.type, sparse.shape, sparse._dim_names,
                                            sparse.non_zero_length, kind, index, pairs[-1], position)
    if len(metadata) > limits.max_metadata_size:
        raise limits.exceeded("max_metadata_size", len(metadata), "sparse tensor metadata")
    return frame_message(metadata, _ALIGNMENT), parts, position


def write_sparse_tensor(sparse, sink) -> int:
    """Write ``sparse`` as one SparseTensor message to ``sink`` (a path or binary file-like).

    Returns the bytes written.
    """
    head, parts, body_length = _payload(sparse)
    out, target = open_sink(sink)
    try:
        out.write([head] + parts)
        out.flush()
    except BaseException:
        if target is not None:
            target.abort()  # a path keeps what it had
        raise
    if target is not None:
        target.commit()  # written beside the path, renamed over it (arrowmm.ipc.core.files)
    return len(head) + body_length


def get_sparse_tensor_size(sparse) -> int:
    """The bytes ``write_sparse_tensor`` would write for ``sparse``."""
    head, _, body_length = _payload(sparse)
    return len(head) + body_length
