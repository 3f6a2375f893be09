"""Dense tensors: the IPC ``Tensor`` message, read zero-copy and written as Arrow C++ writes it.

Why here: a tensor message is not part of a stream or file of record batches; it stands alone
(``pyarrow.ipc.write_tensor`` / ``read_tensor``), one message ``[0xFFFFFFFF][int32 size]
[Message flatbuffer, padded][body]`` whose body is the raw values.  Reading it from a memory
map should cost the header only, so ``read_tensor`` returns a ``Tensor`` whose ``to_numpy()`` is
a read-only numpy view with the header's strides straight into the mapping.

Everything in the header is hostile: the shape, the strides and the data buffer are checked
against each other and against the body (the furthest byte any index can reach, in exact
integer arithmetic) before numpy sees them.

Writing follows Arrow C++ (``WriteTensor``): the metadata is padded so that the body starts at
a multiple of 64 bytes; a tensor that is row- or column-major is written as it is (with its
strides), any other layout as a row-major copy; the body is the values, unpadded.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ... import limits
from ... import types as t
from ..._core._region import BufferView
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ..core.framing import read_message_at
from ...format import MessageHeader, encode_tensor_message, parse_tensor_header
from ..read.file_reader import region_of
from ..core.files import open_sink

__all__ = ["Tensor", "read_tensor", "write_tensor", "get_tensor_size", "tensor_value_type",
           "frame_message", "region_of"]

#: Arrow C++ pads a tensor's metadata so that its body starts at this alignment (kTensorAlignment).
TENSOR_ALIGNMENT = 64
_INT64_MAX = (1 << 63) - 1
_BYTE_ORDER_OK = ("<", "=", "|")


# -- shared with sparse_tensor -----------------------------------------------------------------

def tensor_value_type(dtype: np.dtype) -> t.DataType:
    """The arrowmm type of a numpy dtype a tensor may hold (bool is stored as uint8, as pyarrow)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return t.IntType(8, False)
    if dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8):
        return t.IntType(dtype.itemsize * 8, dtype.kind == "i")
    if dtype.kind == "f" and dtype.itemsize in (2, 4, 8):
        return t.FloatType(dtype.itemsize * 8)
    raise ArrowNotImplementedError(f"tensors hold integers or floating point numbers, not {dtype}")


def little_endian(dtype: t.DataType) -> np.dtype:
    """The numpy dtype of ``dtype``'s values as IPC stores them (little-endian)."""
    return np.dtype(dtype.numpy_dtype).newbyteorder("<")




def frame_message(metadata: bytes, alignment: int) -> bytes:
    """``[0xFFFFFFFF][int32 size][metadata][zero padding]`` padded to ``alignment`` bytes."""
    total = 8 + len(metadata)
    padded = (total + alignment - 1) // alignment * alignment
    return (b"\xff\xff\xff\xff" + (padded - 8).to_bytes(4, "little", signed=True) + metadata
            + b"\x00" * (padded - total))


def read_header_message(source, offset: int, kind: int, what: str):
    """(message, region) of the message of header type ``kind`` at ``offset`` of ``source``."""
    region = region_of(source)
    if type(offset) is not int or offset < 0:
        raise ArrowInvalid(f"{what}: offset must be a non-negative int, got {offset!r}")
    message = read_message_at(region, offset, 0)
    if message is None:
        raise ArrowInvalid(f"{what}: no message at byte {offset} of the {region.size}-byte "
                           f"{region.description} (end of stream)")
    if message.record.header_type != kind:
        raise ArrowInvalid(f"{what}: message at byte {offset} is a {message.kind} message, "
                           f"expected a {MessageHeader.NAMES[kind]}")
    return message, region


def checked_shape(shape: Sequence[int], itemsize: int, what: str) -> int:
    """The element count of ``shape`` (every size >= 0; the byte size fits in int64)."""
    count = 1
    for i, size in enumerate(shape):
        if size < 0:
            raise ArrowInvalid(f"{what}: dimension {i} has negative size {size}")
        count *= size
    if count * itemsize > _INT64_MAX:
        raise ArrowInvalid(f"{what}: shape {tuple(shape)} of {itemsize}-byte values is "
                           f"{count * itemsize} bytes, more than int64 can address")
    return count


def strided_view(body: BufferView, data, shape, strides, dtype: np.dtype, what: str,
                 name: str = "data") -> np.ndarray:
    """A read-only numpy view of ``shape`` / byte ``strides`` at buffer ``data`` of ``body``.

    ``data`` is (offset, length) into the body; the range must lie inside the body and every
    element any index can reach must lie inside the range.
    """
    offset, length = data
    if offset < 0 or length < 0 or offset > body.size or length > body.size - offset:
        raise ArrowInvalid(f"{what}: {name} buffer (offset {offset}, length {length}) lies outside "
                           f"the {body.size}-byte body")
    count = checked_shape(shape, dtype.itemsize, what)
    if len(strides) != len(shape):
        raise ArrowInvalid(f"{what}: {len(strides)} strides for {len(shape)} dimensions")
    for i, stride in enumerate(strides):
        if stride < 0:
            raise ArrowInvalid(f"{what}: negative stride {stride} on dimension {i} (not supported)")
        if stride > _INT64_MAX:
            raise ArrowInvalid(f"{what}: stride {stride} on dimension {i} overflows int64")
    if count == 0:  # nothing to read: keep the header's strides over no memory
        return np.lib.stride_tricks.as_strided(np.empty(0, dtype=dtype), tuple(shape),
                                               tuple(strides), writeable=False)
    # Exact integers: the last byte of the furthest element must lie inside the buffer.
    furthest = sum(stride * (size - 1) for stride, size in zip(strides, shape)) + dtype.itemsize
    if furthest > length:
        raise ArrowInvalid(f"{what}: shape {tuple(shape)} with strides {tuple(strides)} reaches "
                           f"byte {furthest} of the {name} buffer, which holds {length} bytes")
    view = body.slice(offset, length, f"{what} {name} buffer")
    out = np.ndarray(tuple(shape), dtype=dtype, buffer=view, offset=0, strides=tuple(strides))
    out.flags.writeable = False
    return out


def row_major_strides(shape: Sequence[int], itemsize: int) -> tuple:
    """Arrow C++'s row-major strides (all ``itemsize`` when the tensor is empty)."""
    if not shape or any(size == 0 for size in shape):
        return (itemsize,) * len(shape)
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _column_major_strides(shape, itemsize) -> tuple:
    return tuple(reversed(row_major_strides(tuple(reversed(shape)), itemsize)))


# -- Tensor ------------------------------------------------------------------------------------

class Tensor:
    """A dense n-dimensional array of fixed-width numbers: type, shape, byte strides, dim names.

    Made by ``read_tensor`` (a view into the source) or ``Tensor.from_numpy``.

    Examples
    --------
    >>> import numpy as np, arrowmm
    >>> t = arrowmm.Tensor.from_numpy(np.arange(6, dtype="int32").reshape(2, 3), ["x", "y"])
    >>> str(t.type), t.shape, t.strides, t.dim_names
    ('int32', (2, 3), (12, 4), ['x', 'y'])
    >>> import io
    >>> sink = io.BytesIO()
    >>> arrowmm.write_tensor(t, sink)
    280
    >>> arrowmm.read_tensor(sink.getvalue()).to_numpy()[1].tolist()
    [3, 4, 5]
    """

    __slots__ = ("type", "_array", "_dim_names")

    def __init__(self, value_type: t.DataType, array: np.ndarray, dim_names: Sequence[str] = ()):
        self.type = value_type
        self._array = array
        self._dim_names = tuple(dim_names)

    @classmethod
    def from_numpy(cls, obj, dim_names: Optional[Sequence[str]] = None) -> "Tensor":
        """Wrap a numpy array (no copy); negative strides are refused, as pyarrow does."""
        arr = np.asarray(obj)
        value_type = tensor_value_type(arr.dtype)
        if arr.dtype.kind == "b":
            arr = arr.view(np.uint8)
        if arr.dtype.byteorder not in _BYTE_ORDER_OK:
            raise ArrowNotImplementedError(f"big-endian tensor values ({arr.dtype}); tensors are "
                                           f"written little-endian")
        if any(s < 0 for s in arr.strides):
            raise ArrowInvalid(f"negative ndarray strides {arr.strides} are not supported")
        names = () if dim_names is None else tuple(dim_names)
        if names and len(names) != arr.ndim:
            raise ArrowInvalid(f"{len(names)} dim_names for a {arr.ndim}-dimensional array")
        if not all(isinstance(n, str) for n in names):
            raise ArrowInvalid(f"dim_names must be strings, got {names!r}")
        return cls(value_type, arr, names)

    @property
    def shape(self) -> tuple:
        """The size of each dimension."""
        return self._array.shape

    @property
    def strides(self) -> tuple:
        """Bytes between consecutive elements along each dimension, as numpy's."""
        return self._array.strides

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._array.ndim

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(self._array.size)

    @property
    def dim_names(self) -> list:
        """The dimensions' names; ``[]`` when they are unnamed."""
        return list(self._dim_names) if any(self._dim_names) else []

    def dim_name(self, i: int) -> str:
        """The name of dimension ``i``; ``""`` when the dimensions are unnamed."""
        return self._dim_names[i] if self._dim_names else ""

    @property
    def is_contiguous(self) -> bool:
        """Row-major or column-major, by Arrow's definition (exactly those strides)."""
        return self.is_row_major or self.is_column_major

    @property
    def is_row_major(self) -> bool:
        """Whether the elements are laid out in C (row-major) order."""
        return self.strides == row_major_strides(self.shape, self._array.itemsize)

    @property
    def is_column_major(self) -> bool:
        """Whether the elements are laid out in Fortran (column-major) order."""
        return self.strides == _column_major_strides(self.shape, self._array.itemsize)

    def to_numpy(self) -> np.ndarray:
        """The values as a numpy array: for a tensor read from bytes, a read-only view of them."""
        return self._array

    def equals(self, other: "Tensor") -> bool:
        """Same type, shape and values (layout and dim names aside, as pyarrow compares)."""
        if not isinstance(other, Tensor):
            return False
        return (self.type == other.type and self.shape == other.shape
                and bool(np.array_equal(self._array, other._array)))

    def __eq__(self, other):
        return self.equals(other) if isinstance(other, Tensor) else NotImplemented

    __hash__ = None

    def __repr__(self):
        return (f"<arrowmm.Tensor type={self.type} shape={self.shape} strides={self.strides}"
                f"{' dim_names=' + repr(self.dim_names) if self.dim_names else ''}>")


# -- reading -----------------------------------------------------------------------------------

def read_tensor(source, offset: int = 0) -> Tensor:
    """Read the Tensor message at ``offset`` of ``source``, zero-copy.

    ``source`` is a path (memory-mapped read-only), a ``Region`` or a buffer-protocol object.
    The numpy view of the result points into ``source`` and keeps it alive.
    """
    what = f"tensor at byte {offset}"
    message, _ = read_header_message(source, offset, MessageHeader.Tensor, what)
    header = parse_tensor_header(message.header, what)
    dtype = little_endian(header.type)
    itemsize = dtype.itemsize
    shape = header.shape
    checked_shape(shape, itemsize, what)
    strides = header.strides
    if strides is None or (not strides and shape):
        strides = row_major_strides(shape, itemsize)
    array = strided_view(message.body, header.data, shape, strides, dtype, what)
    return Tensor(header.type, array, header.dim_names)


# -- writing -----------------------------------------------------------------------------------

def _as_tensor(obj) -> Tensor:
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, np.ndarray):
        return Tensor.from_numpy(obj)
    raise ArrowInvalid(f"expected an arrowmm.Tensor or a numpy array, got {type(obj).__name__}")


def _payload(tensor: Tensor):
    """(framed metadata, body as a uint8 array) as Arrow C++'s WriteTensor lays them out."""
    arr = tensor.to_numpy()
    itemsize = arr.itemsize
    if tensor.is_row_major:
        strides, body = arr.strides, np.ascontiguousarray(arr)
    elif tensor.is_column_major:
        strides, body = arr.strides, np.ascontiguousarray(arr.T)  # same memory, no copy
    else:
        strides, body = row_major_strides(arr.shape, itemsize), np.ascontiguousarray(arr)
    body = body.reshape(-1).view(np.uint8)
    metadata = encode_tensor_message(tensor.type, arr.shape, tensor._dim_names, strides, body.nbytes)
    if len(metadata) > limits.max_metadata_size:
        raise limits.exceeded("max_metadata_size", len(metadata), "tensor metadata")
    return frame_message(metadata, TENSOR_ALIGNMENT), body


def write_tensor(tensor, sink) -> int:
    """Write ``tensor`` (a ``Tensor`` or numpy array) as one Tensor message; the bytes written.

    ``sink`` is a path or a binary file-like object.
    """
    head, body = _payload(_as_tensor(tensor))
    out, target = open_sink(sink)
    try:
        out.write([head, body] if body.nbytes else [head])
        out.flush()
    except BaseException:
        if target is not None:
            target.abort()  # a path keeps what it had
        raise
    if target is not None:
        target.commit()  # written beside the path, renamed over it (arrowmm.ipc.core.files)
    return len(head) + body.nbytes


def get_tensor_size(tensor) -> int:
    """The bytes ``write_tensor`` would write for ``tensor`` (nothing is copied)."""
    tensor = _as_tensor(tensor)
    arr = tensor.to_numpy()
    strides = arr.strides if tensor.is_contiguous else row_major_strides(arr.shape, arr.itemsize)
    metadata = encode_tensor_message(tensor.type, arr.shape, tensor._dim_names, strides, arr.nbytes)
    return len(frame_message(metadata, TENSOR_ALIGNMENT)) + arr.nbytes
