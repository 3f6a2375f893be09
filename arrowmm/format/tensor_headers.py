"""Tensor and SparseTensor message headers, decoded and encoded (the tensor side of the format).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import flatbuffers
import numpy as np

from .. import types as t
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ._fbs import Int as _Int
from ._fbs.FloatingPoint import FloatingPoint as FbFloatingPoint
from ._fbs.Int import Int as FbInt
from ._fbs.TensorDim import TensorDim as FbTensorDim
from .decode import (FLOAT_BITS, MessageHeader, MetadataVersion, check_vector, decode_text,
                     guarded, init_table, int_type, string_at, sub_table, union_table, unit_of)
from .fblayout import TYPE_MEMBERS, vector_table_at
from .encode import encode_type, finish_message

__all__ = ["TensorHeader", "SparseTensorHeader", "parse_tensor_header", "parse_sparse_tensor_header",
           "encode_tensor_message", "encode_sparse_tensor_message", "MAX_TENSOR_NDIM",
           "SPARSE_INDEX_COO", "SPARSE_INDEX_CSX", "SPARSE_INDEX_CSF"]

from ._fbs.SparseMatrixIndexCSX import SparseMatrixIndexCSX as FbSparseMatrixIndexCSX
from ._fbs.SparseTensor import SparseTensor as FbSparseTensor
from ._fbs.SparseTensorIndexCOO import SparseTensorIndexCOO as FbSparseTensorIndexCOO
from ._fbs.SparseTensorIndexCSF import SparseTensorIndexCSF as FbSparseTensorIndexCSF
from ._fbs.Tensor import Tensor as FbTensor
from ._fbs import (
    SparseMatrixIndexCSX as _SparseMatrixIndexCSX, SparseTensor as _SparseTensor,
    SparseTensorIndexCOO as _SparseTensorIndexCOO, SparseTensorIndexCSF as _SparseTensorIndexCSF,
    Tensor as _Tensor, TensorDim as _TensorDim,
)

#: Type union codes a tensor value may have (fixed-width numbers); others are not supported.
_TENSOR_TYPE_INT, _TENSOR_TYPE_FLOAT = 2, 3
#: The SparseTensorIndex union.
SPARSE_INDEX_COO, SPARSE_INDEX_CSX, SPARSE_INDEX_CSF = 1, 2, 3
#: Most axes of a tensor: numpy's own limit (NPY_MAXDIMS), so every readable tensor is viewable.
MAX_TENSOR_NDIM = 64


@dataclass(slots=True, eq=False)
class TensorHeader:
    """A Tensor message header: value type, shape, names, strides (None: row-major), data."""

    type: t.DataType
    shape: tuple  # of int (raw, may be negative)
    dim_names: tuple  # of str ("" = unnamed)
    strides: Optional[tuple]  # of int, or None
    data: tuple  # (offset, length) into the body


@dataclass(slots=True, eq=False)
class SparseTensorHeader:
    """A SparseTensor message header; ``index`` holds the raw fields of its sparse index.

    ``index_kind`` is "COO", "CSR", "CSC" or "CSF". ``index`` keys, by kind:
    COO: indices_type, indices_strides (tuple or None), indices (offset, length), canonical;
    CSR/CSC: indptr_type, indptr, indices_type, indices;
    CSF: indptr_type, indptr (tuple of pairs), indices_type, indices (tuple of pairs), axis_order.
    """

    type: t.DataType
    shape: tuple
    dim_names: tuple
    non_zero_length: int
    index_kind: str
    index: dict
    data: tuple


def _tensor_value_type(type_id: int, table, what: str) -> t.DataType:
    if table is None or type_id == 0:
        raise ArrowInvalid(f"{what}: tensor value type is missing (type union {type_id})")
    if type_id == _TENSOR_TYPE_INT:
        obj = init_table(FbInt, table)
        return int_type(obj.BitWidth(), obj.IsSigned(), what)
    if type_id == _TENSOR_TYPE_FLOAT:
        return t.FloatType(unit_of(FLOAT_BITS, init_table(FbFloatingPoint, table).Precision(), what,
                                 "float precision"))
    raise ArrowNotImplementedError(f"{what}: tensor value type union code {type_id} is not supported "
                                   f"(only integers and floating point numbers)")


#: the SparseTensorIndex union's members' tables
_SPARSE_INDEX_TABLES = {SPARSE_INDEX_COO: "SparseTensorIndexCOO", SPARSE_INDEX_CSX: "SparseMatrixIndexCSX",
                        SPARSE_INDEX_CSF: "SparseTensorIndexCSF"}


def _value_type_table(fb, what: str):
    """The (checked) type table of a Tensor's or SparseTensor's value type (field 1)."""
    return union_table(fb._tab, 1, TYPE_MEMBERS.get(fb.TypeType()), f"{what} value type")


def _index_int_type(obj, what: str) -> t.IntType:
    if obj is None:
        raise ArrowInvalid(f"{what} is missing")
    return int_type(obj.BitWidth(), obj.IsSigned(), what)


def _dims(fb, what: str):
    tab = fb._tab
    o = tab.Offset(8)  # shape: field 2
    if not o:
        raise ArrowInvalid(f"{what}: tensor shape is missing")
    n = check_vector(tab.VectorLen(o), tab, o, 4, f"{what} shape")
    if n > MAX_TENSOR_NDIM:
        raise ArrowInvalid(f"{what}: tensor has {n} dimensions, more than the {MAX_TENSOR_NDIM} "
                           f"numpy can view")
    sizes, names = [], []
    for i in range(n):
        dim = FbTensorDim()
        dim.Init(tab.Bytes, vector_table_at(tab, 2, i, "TensorDim", f"{what} shape dimension {i}"))
        sizes.append(dim.Size())
        names.append(decode_text(string_at(dim._tab, 6, f"{what} dimension {i} name"),
                                 f"{what} dimension {i} name"))
    return tuple(sizes), tuple(names)


def _int64_vector(tab, slot: int, what: str):
    o = tab.Offset(4 + 2 * slot)
    if not o:
        return None
    n = check_vector(tab.VectorLen(o), tab, o, 8, what)
    return tuple(int(v) for v in np.frombuffer(tab.Bytes, dtype="<i8", count=n, offset=tab.Vector(o)))


def _buffer_pair(buf, what: str):
    if buf is None:
        raise ArrowInvalid(f"{what} is missing")
    return (buf.Offset(), buf.Length())


def _buffer_pairs(tab, slot: int, what: str):
    o = tab.Offset(4 + 2 * slot)
    if not o:
        raise ArrowInvalid(f"{what} is missing")
    n = check_vector(tab.VectorLen(o), tab, o, 16, what)
    if n > MAX_TENSOR_NDIM:
        raise ArrowInvalid(f"{what}: {n} buffers, more than a {MAX_TENSOR_NDIM}-dimensional tensor has")
    flat = np.frombuffer(tab.Bytes, dtype="<i8", count=2 * n, offset=tab.Vector(o))
    return tuple((int(flat[2 * i]), int(flat[2 * i + 1])) for i in range(n))


@guarded("tensor")
def parse_tensor_header(table, what: str = "tensor") -> TensorHeader:
    """The Tensor header table of a message (``MessageRecord.header``) as a ``TensorHeader``."""
    if table is None:
        raise ArrowInvalid(f"{what}: Tensor header is missing")
    fb = init_table(FbTensor, table)
    value_type = _tensor_value_type(fb.TypeType(), _value_type_table(fb, what), what)
    shape, names = _dims(fb, what)
    strides = _int64_vector(fb._tab, 3, f"{what} strides")
    return TensorHeader(value_type, shape, names, strides, _buffer_pair(fb.Data(), f"{what}: data buffer"))


@guarded("sparse tensor")
def parse_sparse_tensor_header(table, what: str = "sparse tensor") -> SparseTensorHeader:
    """The SparseTensor header table of a message as a ``SparseTensorHeader``."""
    if table is None:
        raise ArrowInvalid(f"{what}: SparseTensor header is missing")
    fb = init_table(FbSparseTensor, table)
    value_type = _tensor_value_type(fb.TypeType(), _value_type_table(fb, what), what)
    shape, names = _dims(fb, what)
    kind_code = fb.SparseIndexType()
    index_table = union_table(fb._tab, 5, _SPARSE_INDEX_TABLES.get(kind_code), f"{what} sparse index")
    if index_table is None:
        raise ArrowInvalid(f"{what}: sparse index is missing (union code {kind_code})")
    if kind_code == SPARSE_INDEX_COO:
        coo = init_table(FbSparseTensorIndexCOO, index_table)
        kind = "COO"
        index = {"indices_type": _index_int_type(sub_table(FbInt, coo._tab, 0, f"{what} COO indicesType"), f"{what}: COO indicesType"),
                 "indices_strides": _int64_vector(coo._tab, 1, f"{what} COO indicesStrides"),
                 "indices": _buffer_pair(coo.IndicesBuffer(), f"{what}: COO indicesBuffer"),
                 "canonical": bool(coo.IsCanonical())}
    elif kind_code == SPARSE_INDEX_CSX:
        csx = init_table(FbSparseMatrixIndexCSX, index_table)
        axis = csx.CompressedAxis()
        if axis not in (0, 1):
            raise ArrowInvalid(f"{what}: unknown SparseMatrixCompressedAxis {axis}")
        kind = "CSR" if axis == 0 else "CSC"
        index = {"indptr_type": _index_int_type(sub_table(FbInt, csx._tab, 1, f"{what} {kind} indptrType"), f"{what}: {kind} indptrType"),
                 "indptr": _buffer_pair(csx.IndptrBuffer(), f"{what}: {kind} indptrBuffer"),
                 "indices_type": _index_int_type(sub_table(FbInt, csx._tab, 3, f"{what} {kind} indicesType"), f"{what}: {kind} indicesType"),
                 "indices": _buffer_pair(csx.IndicesBuffer(), f"{what}: {kind} indicesBuffer")}
    elif kind_code == SPARSE_INDEX_CSF:
        csf = init_table(FbSparseTensorIndexCSF, index_table)
        kind = "CSF"
        tab = csf._tab
        o = tab.Offset(12)
        if not o:
            raise ArrowInvalid(f"{what}: CSF axisOrder is missing")
        n = check_vector(tab.VectorLen(o), tab, o, 4, f"{what} CSF axisOrder")
        if n > MAX_TENSOR_NDIM:
            raise ArrowInvalid(f"{what}: CSF axisOrder has {n} entries, more than {MAX_TENSOR_NDIM}")
        axis_order = tuple(int(v) for v in np.frombuffer(tab.Bytes, dtype="<i4", count=n,
                                                         offset=tab.Vector(o)))
        index = {"indptr_type": _index_int_type(sub_table(FbInt, tab, 0, f"{what} CSF indptrType"), f"{what}: CSF indptrType"),
                 "indptr": _buffer_pairs(tab, 1, f"{what}: CSF indptrBuffers"),
                 "indices_type": _index_int_type(sub_table(FbInt, tab, 2, f"{what} CSF indicesType"), f"{what}: CSF indicesType"),
                 "indices": _buffer_pairs(tab, 3, f"{what}: CSF indicesBuffers"),
                 "axis_order": axis_order}
    else:
        raise ArrowInvalid(f"{what}: unknown sparse index type {kind_code}")
    return SparseTensorHeader(value_type, shape, names, fb.NonZeroLength(), kind, index,
                              _buffer_pair(fb.Data(), f"{what}: data buffer"))


def _encode_dims(b, shape, dim_names, start_vector):
    dims = []
    for i, size in enumerate(shape):
        name = b.CreateString(dim_names[i] if i < len(dim_names) else "")
        _TensorDim.Start(b)
        _TensorDim.AddSize(b, size)
        _TensorDim.AddName(b, name)
        dims.append(_TensorDim.End(b))
    start_vector(b, len(dims))
    for off in reversed(dims):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _encode_int(b, dtype: t.IntType) -> int:
    _Int.Start(b)
    _Int.AddBitWidth(b, dtype.bit_width)
    _Int.AddIsSigned(b, dtype.signed)
    return _Int.End(b)


def encode_tensor_message(value_type: t.DataType, shape, dim_names, strides, data_length: int,
                          version: int = MetadataVersion.V5) -> bytes:
    """The Message flatbuffer of a Tensor (data at body offset 0, ``data_length`` bytes)."""
    b = flatbuffers.Builder(256)
    type_code, type_table = encode_type(b, value_type)
    shape_vec = _encode_dims(b, shape, dim_names, _Tensor.StartShapeVector)
    strides_vec = b.CreateNumpyVector(np.asarray(strides, dtype="<i8").reshape(-1))
    _Tensor.Start(b)
    _Tensor.AddTypeType(b, type_code)
    _Tensor.AddType(b, type_table)
    _Tensor.AddShape(b, shape_vec)
    _Tensor.AddStrides(b, strides_vec)
    _Tensor.AddData(b, _fbs_buffer(b, 0, data_length))
    return finish_message(b, MessageHeader.Tensor, _Tensor.End(b), data_length, None, version)


def _fbs_buffer(b, offset: int, length: int) -> int:
    b.Prep(8, 16)
    b.PrependInt64(length)
    b.PrependInt64(offset)
    return b.Offset()


def _buffer_struct_vector(b, start_vector, pairs) -> int:
    start_vector(b, len(pairs))
    for offset, length in reversed(pairs):
        b.Prep(8, 16)
        b.PrependInt64(length)
        b.PrependInt64(offset)
    return b.EndVector()


def encode_sparse_tensor_message(value_type: t.DataType, shape, dim_names, non_zero_length: int,
                                 index_kind: str, index: dict, data, body_length: int,
                                 version: int = MetadataVersion.V5) -> bytes:
    """The Message flatbuffer of a SparseTensor; ``index`` as in ``SparseTensorHeader``."""
    b = flatbuffers.Builder(512)
    type_code, type_table = encode_type(b, value_type)
    shape_vec = _encode_dims(b, shape, dim_names, _SparseTensor.StartShapeVector)
    if index_kind == "COO":
        itype = _encode_int(b, index["indices_type"])
        strides_vec = b.CreateNumpyVector(np.asarray(index["indices_strides"], dtype="<i8").reshape(-1))
        _SparseTensorIndexCOO.Start(b)
        _SparseTensorIndexCOO.AddIndicesType(b, itype)
        _SparseTensorIndexCOO.AddIndicesStrides(b, strides_vec)
        _SparseTensorIndexCOO.AddIndicesBuffer(b, _fbs_buffer(b, *index["indices"]))
        _SparseTensorIndexCOO.AddIsCanonical(b, index["canonical"])
        kind_code, index_table = SPARSE_INDEX_COO, _SparseTensorIndexCOO.End(b)
    elif index_kind in ("CSR", "CSC"):
        ptype = _encode_int(b, index["indptr_type"])
        itype = _encode_int(b, index["indices_type"])
        _SparseMatrixIndexCSX.Start(b)
        _SparseMatrixIndexCSX.AddCompressedAxis(b, 0 if index_kind == "CSR" else 1)
        _SparseMatrixIndexCSX.AddIndptrType(b, ptype)
        _SparseMatrixIndexCSX.AddIndptrBuffer(b, _fbs_buffer(b, *index["indptr"]))
        _SparseMatrixIndexCSX.AddIndicesType(b, itype)
        _SparseMatrixIndexCSX.AddIndicesBuffer(b, _fbs_buffer(b, *index["indices"]))
        kind_code, index_table = SPARSE_INDEX_CSX, _SparseMatrixIndexCSX.End(b)
    elif index_kind == "CSF":
        ptype = _encode_int(b, index["indptr_type"])
        itype = _encode_int(b, index["indices_type"])
        indices_vec = _buffer_struct_vector(b, _SparseTensorIndexCSF.StartIndicesBuffersVector,
                                            index["indices"])
        indptr_vec = _buffer_struct_vector(b, _SparseTensorIndexCSF.StartIndptrBuffersVector,
                                           index["indptr"])
        order_vec = b.CreateNumpyVector(np.asarray(index["axis_order"], dtype="<i4").reshape(-1))
        _SparseTensorIndexCSF.Start(b)
        _SparseTensorIndexCSF.AddIndptrType(b, ptype)
        _SparseTensorIndexCSF.AddIndptrBuffers(b, indptr_vec)
        _SparseTensorIndexCSF.AddIndicesType(b, itype)
        _SparseTensorIndexCSF.AddIndicesBuffers(b, indices_vec)
        _SparseTensorIndexCSF.AddAxisOrder(b, order_vec)
        kind_code, index_table = SPARSE_INDEX_CSF, _SparseTensorIndexCSF.End(b)
    else:
        raise ArrowInvalid(f"unknown sparse index kind {index_kind!r}")
    _SparseTensor.Start(b)
    _SparseTensor.AddTypeType(b, type_code)
    _SparseTensor.AddType(b, type_table)
    _SparseTensor.AddShape(b, shape_vec)
    _SparseTensor.AddNonZeroLength(b, non_zero_length)
    _SparseTensor.AddSparseIndexType(b, kind_code)
    _SparseTensor.AddSparseIndex(b, index_table)
    _SparseTensor.AddData(b, _fbs_buffer(b, *data))
    return finish_message(b, MessageHeader.SparseTensor, _SparseTensor.End(b), body_length, None,
                           version)
