"""Tensor and SparseTensor IPC messages (arrowmm.ipc.tensor.dense, arrowmm.ipc.tensor.sparse).

pyarrow is the oracle for dense tensors both ways (it writes and reads them); for sparse tensors
pyarrow has no Python IPC, so arrowmm's layouts are compared with pyarrow's sparse objects built
from the same dense arrays, and the metadata is decoded with the generated flatbuffers code to
check that every buffer sits where the format (and Arrow C++'s writer) puts it.
"""
from __future__ import annotations

import io
import random

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import types as t
from arrowmm.format._fbs.Message import Message as FbMessage
from arrowmm.format._fbs.SparseMatrixIndexCSX import SparseMatrixIndexCSX as FbCSX
from arrowmm.format._fbs.SparseTensor import SparseTensor as FbSparseTensor
from arrowmm.format._fbs.SparseTensorIndexCOO import SparseTensorIndexCOO as FbCOO
from arrowmm.format._fbs.SparseTensorIndexCSF import SparseTensorIndexCSF as FbCSF
from arrowmm.format._fbs.Tensor import Tensor as FbTensor
from arrowmm.format import encode_sparse_tensor_message
from arrowmm.ipc.tensor.dense import frame_message

NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64"]


def pa_tensor_bytes(arr, dim_names=None) -> bytes:
    sink = pa.BufferOutputStream()
    tensor = pa.Tensor.from_numpy(arr, dim_names=dim_names) if dim_names else pa.Tensor.from_numpy(arr)
    pa.ipc.write_tensor(tensor, sink)
    return sink.getvalue().to_pybytes()


def mm_tensor_bytes(obj) -> bytes:
    out = io.BytesIO()
    n = arrowmm.write_tensor(obj, out)
    assert n == len(out.getvalue())
    return out.getvalue()


def decode_tensor(message: bytes):
    """(Tensor table, bodyLength, metadata size) decoded by the generated code."""
    assert message[:4] == b"\xff\xff\xff\xff"
    size = int.from_bytes(message[4:8], "little")
    msg = FbMessage.GetRootAs(message[8:8 + size], 0)
    header = msg.Header()
    return header, msg.BodyLength(), size, msg.HeaderType()


def tensor_fields(message: bytes) -> dict:
    header, body_length, size, header_type = decode_tensor(message)
    assert header_type == 4
    fb = FbTensor()
    fb.Init(header.Bytes, header.Pos)
    shape = [fb.Shape(i) for i in range(fb.ShapeLength())]
    return {"type": fb.TypeType(), "shape": [d.Size() for d in shape],
            "names": [d.Name() or b"" for d in shape],
            "strides": [fb.Strides(i) for i in range(fb.StridesLength())],
            "data": (fb.Data().Offset(), fb.Data().Length()), "body_length": body_length,
            "body_start": 8 + size}


def inside(arr: np.ndarray, start: int, size: int) -> bool:
    address = arr.__array_interface__["data"][0]
    return start <= address and address + max(arr.nbytes, 0) <= start + size


def test_pyarrow_cannot_write_negative_strides_and_neither_do_we():
    a = np.arange(6.0)[::-1]
    with pytest.raises(pa.ArrowInvalid):
        pa.Tensor.from_numpy(a)
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.Tensor.from_numpy(a)


# -- dense: pyarrow writes, arrowmm reads --------------------------------------------------------

def dense_cases():
    base = np.arange(24)
    for dtype in NUMERIC:
        yield dtype, base.astype(dtype).reshape(2, 3, 4), ["a", "b", "c"]
    yield "0-d", np.array(7.5), None
    yield "empty rows", np.zeros((0, 3), np.int32), None
    yield "empty cols", np.zeros((3, 0), np.float32), None
    yield "1-d", np.arange(5, dtype=np.int16), ["only"]
    yield "column-major", np.asfortranarray(base.reshape(4, 6).astype(np.float64)), ["r", "c"]
    yield "transposed", base.reshape(4, 6).astype(np.int64).T, None
    yield "strided", base.reshape(4, 6).astype(np.int32)[:, ::2], None
    yield "sliced", base.reshape(4, 6).astype(np.uint16)[1:3, 2:5], None
    yield "bool", base.reshape(4, 6) % 3 == 0, None


CASES = list(dense_cases())


@pytest.mark.parametrize("label,arr,names", CASES, ids=[c[0] for c in CASES])
def test_pyarrow_written_tensor_reads_equal_and_zero_copy(tmp_path, label, arr, names):
    data = pa_tensor_bytes(arr, names)
    expected = pa.ipc.read_tensor(pa.py_buffer(data))
    path = tmp_path / "t.arrow"
    path.write_bytes(data)
    region = arrowmm.Region.from_path(path)
    for source in (path, str(path), data, region):
        tensor = arrowmm.read_tensor(source)
        view = tensor.to_numpy()
        np.testing.assert_array_equal(view, expected.to_numpy())
        assert view.dtype == expected.to_numpy().dtype
        assert tensor.shape == tuple(expected.shape)
        assert tensor.strides == tuple(expected.strides)
        assert str(tensor.type) == str(expected.type)
        assert tensor.dim_names == [n for n in expected.dim_names if n] or not any(expected.dim_names)
        assert tensor.ndim == expected.ndim and tensor.size == expected.size
        assert tensor.is_contiguous == expected.is_contiguous
        assert not view.flags.writeable
    # zero-copy: the view's memory lies inside the mapping / the bytes object
    tensor = arrowmm.read_tensor(region)
    view = tensor.to_numpy()
    if view.size:
        assert inside(view, region.address, region.size)
        start = np.frombuffer(data, np.uint8).__array_interface__["data"][0]
        assert inside(arrowmm.read_tensor(data).to_numpy(), start, len(data))


def test_view_outlives_tensor_and_region(tmp_path):
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    path = tmp_path / "t.arrow"
    path.write_bytes(pa_tensor_bytes(arr))
    view = arrowmm.read_tensor(path).to_numpy()
    path.unlink()  # the mapping stays alive as long as the view does
    import gc
    gc.collect()
    np.testing.assert_array_equal(view, arr)


def test_read_at_offset_of_concatenated_messages():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.linspace(0, 1, 5)
    first, second = pa_tensor_bytes(a), pa_tensor_bytes(b)
    both = first + second
    np.testing.assert_array_equal(arrowmm.read_tensor(both).to_numpy(), a)
    np.testing.assert_array_equal(arrowmm.read_tensor(both, offset=len(first)).to_numpy(), b)


# -- dense: arrowmm writes, pyarrow reads ---------------------------------------------------------

@pytest.mark.parametrize("label,arr,names", CASES, ids=[c[0] for c in CASES])
def test_arrowmm_written_tensor_reads_in_pyarrow(tmp_path, label, arr, names):
    ours = mm_tensor_bytes(arrowmm.Tensor.from_numpy(arr, dim_names=names))
    theirs = pa_tensor_bytes(arr, names)
    got = pa.ipc.read_tensor(pa.py_buffer(ours))
    np.testing.assert_array_equal(got.to_numpy(), pa.Tensor.from_numpy(arr).to_numpy())
    ref = pa.ipc.read_tensor(pa.py_buffer(theirs))
    assert got.strides == ref.strides and got.shape == ref.shape and got.type == ref.type
    assert got.dim_names == ref.dim_names
    # the same layout: header fields, body start alignment and the body bytes themselves
    mine, pyarrows = tensor_fields(ours), tensor_fields(theirs)
    for key in ("type", "shape", "names", "strides", "data", "body_length"):
        assert mine[key] == pyarrows[key], key
    assert mine["body_start"] % 64 == 0 and pyarrows["body_start"] % 64 == 0
    assert ours[mine["body_start"]:] == theirs[pyarrows["body_start"]:]
    assert arrowmm.get_tensor_size(arr) == len(mm_tensor_bytes(arr))
    # and to a path
    path = tmp_path / "mine.arrow"
    assert arrowmm.write_tensor(arr, path) == path.stat().st_size
    np.testing.assert_array_equal(arrowmm.read_tensor(path).to_numpy(), got.to_numpy())


def test_sizes_match_pyarrow_where_the_flatbuffers_lay_out_alike():
    # The Python flatbuffers builder pads differently from the C++ one, so metadata sizes may
    # differ by an alignment step; for these shapes they agree, and so does the whole size.
    for arr in (np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(4, dtype=np.float16)):
        assert arrowmm.get_tensor_size(arr) == pa.ipc.get_tensor_size(pa.Tensor.from_numpy(arr))


def test_written_tensor_round_trips_through_arrowmm():
    arr = np.arange(60, dtype=np.uint32).reshape(3, 4, 5)[:, ::2, 1:]
    back = arrowmm.read_tensor(mm_tensor_bytes(arr))
    np.testing.assert_array_equal(back.to_numpy(), arr)
    assert back.equals(arrowmm.Tensor.from_numpy(arr)) and back.is_contiguous
    again = arrowmm.read_tensor(mm_tensor_bytes(back))  # a read tensor writes back unchanged
    np.testing.assert_array_equal(again.to_numpy(), arr)


# -- sparse --------------------------------------------------------------------------------------

def sparse_dense_cases():
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, size=(5, 7)) * (rng.random((5, 7)) < 0.3)
    yield "int64 5x7", x
    yield "float32", x.astype(np.float32)
    yield "float16", x.astype(np.float16)
    yield "uint8", np.abs(x).astype(np.uint8)
    yield "all zero", np.zeros((3, 4), np.float64)
    yield "dense", np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    yield "empty", np.zeros((0, 4), np.int16)


SPARSE = list(sparse_dense_cases())
KINDS = [(arrowmm.SparseCOOTensor, pa.SparseCOOTensor), (arrowmm.SparseCSRMatrix, pa.SparseCSRMatrix),
         (arrowmm.SparseCSCMatrix, pa.SparseCSCMatrix), (arrowmm.SparseCSFTensor, pa.SparseCSFTensor)]


def sparse_bytes(sparse) -> bytes:
    out = io.BytesIO()
    n = arrowmm.write_sparse_tensor(sparse, out)
    assert n == len(out.getvalue())
    return out.getvalue()


def pa_layout(p):
    """pyarrow's index and values, normalised: (data 1-D, [index arrays])."""
    parts = p.to_numpy()
    data = parts[0].reshape(-1)
    if isinstance(p, pa.SparseCOOTensor):
        return data, [parts[1]]
    if isinstance(p, pa.SparseCSFTensor):
        return data, list(parts[1]) + list(parts[2])
    return data, [parts[1], parts[2]]


def mm_layout(s):
    if isinstance(s, arrowmm.SparseCOOTensor):
        return s.data, [s.coords]
    if isinstance(s, arrowmm.SparseCSFTensor):
        return s.data, list(s.indptr) + list(s.indices)
    return s.data, [s.indptr, s.indices]


@pytest.mark.parametrize("kind,pa_kind", KINDS, ids=[k[0].__name__ for k in KINDS])
@pytest.mark.parametrize("label,dense", SPARSE, ids=[c[0] for c in SPARSE])
def test_sparse_matches_pyarrow_and_round_trips(kind, pa_kind, label, dense):
    ours = kind.from_dense_numpy(dense)
    theirs = pa_kind.from_dense_numpy(dense)
    assert ours.non_zero_length == theirs.non_zero_length
    assert ours.shape == tuple(theirs.shape)
    data, index = mm_layout(ours)
    pdata, pindex = pa_layout(theirs)
    np.testing.assert_array_equal(data, pdata)
    assert len(index) == len(pindex)
    for a, b in zip(index, pindex):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours.to_dense(), dense)
    np.testing.assert_array_equal(theirs.to_tensor().to_numpy(), ours.to_dense())

    message = sparse_bytes(ours)
    back = arrowmm.read_sparse_tensor(message)
    assert type(back) is kind and back.equals(ours)
    np.testing.assert_array_equal(back.to_dense(), dense)
    start = np.frombuffer(message, np.uint8).__array_interface__["data"][0]
    for arr in [back.data] + mm_layout(back)[1]:  # zero-copy views into the message
        assert not arr.flags.writeable
        if arr.size:
            assert inside(arr, start, len(message))


def test_sparse_3d_coo_and_csf_against_pyarrow():
    rng = np.random.default_rng(3)
    dense = rng.integers(0, 5, size=(3, 4, 5)) * (rng.random((3, 4, 5)) < 0.25)
    for kind, pa_kind in (KINDS[0], KINDS[3]):
        ours, theirs = kind.from_dense_numpy(dense), pa_kind.from_dense_numpy(dense)
        for a, b in zip(mm_layout(ours)[1], pa_layout(theirs)[1]):
            np.testing.assert_array_equal(a, b)
        back = arrowmm.read_sparse_tensor(sparse_bytes(ours))
        np.testing.assert_array_equal(back.to_dense(), dense)


def test_sparse_0d_coo():
    ours = arrowmm.SparseCOOTensor.from_dense_numpy(np.array(5.0))
    assert ours.shape == tuple(pa.SparseCOOTensor.from_dense_numpy(np.array(5.0)).shape) == ()
    np.testing.assert_array_equal(arrowmm.read_sparse_tensor(sparse_bytes(ours)).to_dense(), 5.0)


def sparse_header(message: bytes):
    header, body_length, size, header_type = decode_tensor(message)
    assert header_type == 5 and (8 + size) % 8 == 0
    fb = FbSparseTensor()
    fb.Init(header.Bytes, header.Pos)
    return fb, body_length, 8 + size


def test_sparse_metadata_puts_buffers_where_arrow_cpp_does():
    dense = np.array([[0, 1, 0], [2, 0, 3]], dtype=np.float64)
    pad = lambda n: (n + 7) // 8 * 8  # noqa: E731

    coo = arrowmm.SparseCOOTensor.from_dense_numpy(dense, dim_names=["r", "c"])
    msg = sparse_bytes(coo)
    fb, body_length, body_start = sparse_header(msg)
    assert fb.SparseIndexType() == 1 and fb.NonZeroLength() == 3
    assert [fb.Shape(i).Size() for i in range(2)] == [2, 3]
    assert [fb.Shape(i).Name() for i in range(2)] == [b"r", b"c"]
    index = FbCOO()
    index.Init(fb.SparseIndex().Bytes, fb.SparseIndex().Pos)
    assert index.IndicesType().BitWidth() == 64 and index.IsCanonical()
    assert [index.IndicesStrides(i) for i in range(2)] == [16, 8]
    ib, db = index.IndicesBuffer(), fb.Data()
    assert (ib.Offset(), ib.Length()) == (0, pad(3 * 2 * 8))
    assert (db.Offset(), db.Length()) == (pad(48), pad(24))
    assert body_length == 48 + 24
    body = msg[body_start:]
    np.testing.assert_array_equal(np.frombuffer(body, "<i8", 6, 0).reshape(3, 2), [[0, 1], [1, 0], [1, 2]])
    np.testing.assert_array_equal(np.frombuffer(body, "<f8", 3, 48), [1, 2, 3])

    for kind, axis in ((arrowmm.SparseCSRMatrix, 0), (arrowmm.SparseCSCMatrix, 1)):
        msg = sparse_bytes(kind.from_dense_numpy(dense.astype(np.int8)))
        fb, body_length, body_start = sparse_header(msg)
        index = FbCSX()
        index.Init(fb.SparseIndex().Bytes, fb.SparseIndex().Pos)
        assert fb.SparseIndexType() == 2 and index.CompressedAxis() == axis
        n_ptr = dense.shape[axis] + 1
        p, i, d = index.IndptrBuffer(), index.IndicesBuffer(), fb.Data()
        assert (p.Offset(), p.Length()) == (0, pad(8 * n_ptr))
        assert (i.Offset(), i.Length()) == (pad(8 * n_ptr), pad(24))
        assert (d.Offset(), d.Length()) == (pad(8 * n_ptr) + 24, pad(3))
        assert body_length == d.Offset() + d.Length()

    dense3 = np.zeros((2, 2, 2), np.int32)
    dense3[0, 0, 1], dense3[1, 1, 0] = 4, 5
    msg = sparse_bytes(arrowmm.SparseCSFTensor.from_dense_numpy(dense3))
    fb, body_length, body_start = sparse_header(msg)
    index = FbCSF()
    index.Init(fb.SparseIndex().Bytes, fb.SparseIndex().Pos)
    assert fb.SparseIndexType() == 3
    assert [index.AxisOrder(i) for i in range(3)] == [0, 1, 2]
    assert index.IndptrBuffersLength() == 2 and index.IndicesBuffersLength() == 3
    # Arrow C++ records element counts as the Buffer lengths of CSF levels
    ptr = [(index.IndptrBuffers(k).Offset(), index.IndptrBuffers(k).Length()) for k in range(2)]
    ind = [(index.IndicesBuffers(k).Offset(), index.IndicesBuffers(k).Length()) for k in range(3)]
    assert ptr == [(0, 3), (24, 3)]
    assert ind == [(48, 2), (64, 2), (80, 2)]
    assert (fb.Data().Offset(), fb.Data().Length()) == (96, 8)
    assert body_length == 104


# -- hostile input -------------------------------------------------------------------------------

def raw_tensor_message(body, value_type, shape, names, strides, data) -> bytes:
    """A Tensor message with any numbers (strides None: the vector left out)."""
    import flatbuffers
    from arrowmm.format.tensor_headers import (MessageHeader, _Tensor, _encode_dims, _fbs_buffer,
                                               encode_type, finish_message)
    b = flatbuffers.Builder(256)
    code, table = encode_type(b, value_type)
    dims = _encode_dims(b, shape, names, _Tensor.StartShapeVector)
    stride_vec = b.CreateNumpyVector(np.asarray(strides, dtype="<i8").reshape(-1)) if strides is not None else None
    _Tensor.Start(b)
    _Tensor.AddTypeType(b, code)
    _Tensor.AddType(b, table)
    _Tensor.AddShape(b, dims)
    if stride_vec is not None:
        _Tensor.AddStrides(b, stride_vec)
    _Tensor.AddData(b, _fbs_buffer(b, *data))
    meta = finish_message(b, MessageHeader.Tensor, _Tensor.End(b), len(body), None, 4)
    return frame_message(meta, 8) + body


BAD_TENSORS = [
    ("negative size", (-1, 3), None, (0, 24), "negative size"),
    ("product overflows int64", (1 << 31, 1 << 31, 4), None, (0, 24), "more than int64"),
    ("stride reaches past the buffer", (2, 3), (12, 8), (0, 24), "reaches byte"),
    ("huge stride", (2, 3), (1 << 62, 4), (0, 24), "reaches byte"),
    ("negative stride", (2, 3), (-12, 4), (0, 24), "negative stride"),
    ("strides count", (2, 3), (4,), (0, 24), "strides for 2 dimensions"),
    ("buffer past body", (2, 3), None, (8, 24), "outside"),
    ("negative buffer offset", (2, 3), None, (-8, 24), "outside"),
    ("buffer too short for shape", (2, 3), None, (0, 20), "reaches byte"),
]


@pytest.mark.parametrize("label,shape,strides,data,match", BAD_TENSORS, ids=[c[0] for c in BAD_TENSORS])
def test_hostile_tensor_headers_raise_arrow_invalid(label, shape, strides, data, match):
    message = raw_tensor_message(bytes(24), t.IntType(32, True), shape, (), strides, data)
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        arrowmm.read_tensor(message)


def test_unsupported_value_type_is_not_implemented():
    message = raw_tensor_message(bytes(8), t.BinaryType(utf8=True), (1,), (), None, (0, 8))
    with pytest.raises(arrowmm.ArrowNotImplementedError):
        arrowmm.read_tensor(message)
    with pytest.raises(arrowmm.ArrowNotImplementedError):
        arrowmm.Tensor.from_numpy(np.array(["a"]))


def test_wrong_header_type_and_truncation():
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, pa.schema([("x", pa.int32())])) as w:
        w.write_batch(pa.record_batch([pa.array([1, 2], pa.int32())], names=["x"]))
    stream = sink.getvalue().to_pybytes()
    with pytest.raises(arrowmm.ArrowInvalid, match="Schema message"):
        arrowmm.read_tensor(stream)
    with pytest.raises(arrowmm.ArrowInvalid, match="expected a SparseTensor"):
        arrowmm.read_sparse_tensor(pa_tensor_bytes(np.arange(3)))
    with pytest.raises(arrowmm.ArrowInvalid, match="expected a Tensor"):
        arrowmm.read_tensor(sparse_bytes(arrowmm.SparseCOOTensor.from_dense_numpy(np.eye(2))))
    data = pa_tensor_bytes(np.arange(6, dtype=np.int64))
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.read_tensor(data[:-1])
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.read_tensor(b"")
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.read_tensor(data, offset=-1)


def sparse_message(kind, index, shape, nnz, data, body, value_type=t.FloatType(64)) -> bytes:
    meta = encode_sparse_tensor_message(value_type, shape, (), nnz, kind, index, data, len(body))
    return frame_message(meta, 8) + body


I64 = t.IntType(64, True)


def coo(coords, shape, nnz=None, data_at=None, strides=None):
    coords = np.asarray(coords, dtype="<i8")
    nnz = coords.shape[0] if nnz is None else nnz
    body = coords.tobytes() + np.ones(coords.shape[0], "<f8").tobytes()
    index = {"indices_type": I64, "indices_strides": strides or (8 * len(shape), 8),
             "indices": (0, coords.nbytes), "canonical": False}
    return sparse_message("COO", index, shape, nnz, data_at or (coords.nbytes, 8 * coords.shape[0]), body)


def csr(indptr, indices, shape, nnz):
    ptr, ind = np.asarray(indptr, "<i8"), np.asarray(indices, "<i8")
    body = ptr.tobytes() + ind.tobytes() + np.ones(max(nnz, 0), "<f8").tobytes()
    index = {"indptr_type": I64, "indptr": (0, ptr.nbytes), "indices_type": I64,
             "indices": (ptr.nbytes, ind.nbytes)}
    return sparse_message("CSR", index, shape, nnz, (ptr.nbytes + ind.nbytes, 8 * max(nnz, 0)), body)


def csf(indptr, indices, axis_order, shape, nnz):
    parts, pos, ptr_pairs, ind_pairs = [], 0, [], []
    for arrays, pairs in ((indptr, ptr_pairs), (indices, ind_pairs)):
        for a in arrays:
            a = np.asarray(a, "<i8")
            pairs.append((pos, a.size))
            parts.append(a.tobytes())
            pos += a.nbytes
    body = b"".join(parts) + np.ones(nnz, "<f8").tobytes()
    index = {"indptr_type": I64, "indptr": ptr_pairs, "indices_type": I64, "indices": ind_pairs,
             "axis_order": axis_order}
    return sparse_message("CSF", index, shape, nnz, (pos, 8 * nnz), body)


BAD_SPARSE = [
    ("coo index out of range", coo([[0, 0], [2, 1]], (2, 2)), "outside"),
    ("coo negative index", coo([[0, -1]], (2, 2)), "outside"),
    ("coo nnz beyond buffers", coo([[0, 0]], (4, 4), nnz=5), "outside|reaches"),
    ("coo nnz beyond the shape", coo([[0], [0]], (1,)), "more non-zero values"),
    ("coo negative nnz", coo([[0, 0]], (2, 2), nnz=-1), "negative non_zero_length"),
    ("coo data outside body", coo([[0, 0]], (2, 2), data_at=(1 << 40, 8)), "outside"),
    ("coo strides outside", coo([[0, 0], [1, 1]], (2, 2), strides=(24, 8)), "reaches"),
    ("coo negative shape", coo([[0, 0]], (-2, 2)), "negative size"),
    ("csr non-monotonic indptr", csr([0, 2, 1], [0, 1, 0], (2, 2), 2), "from 0 to 1|decreases"),
    ("csr decreasing indptr", csr([0, 2, 1, 2], [0, 1], (3, 2), 2), "decreases"),
    ("csr indptr end", csr([0, 1, 3], [0, 1], (2, 2), 2), "expected 0 to 2"),
    ("csr indptr short", csr([0, 2], [0, 1], (2, 2), 2), "outside|reaches"),
    ("csr index out of range", csr([0, 1, 2], [0, 5], (2, 2), 2), "outside"),
    ("csr not a matrix", csr([0, 1, 2], [0, 1], (2, 2, 2), 2), "2 dimensions"),
    ("csf bad axis order", csf([[0, 1]], [[0], [1]], (0, 0), (2, 2), 1), "permutation"),
    ("csf indptr end", csf([[0, 2]], [[0], [1]], (0, 1), (2, 2), 1), "expected 0 to 1"),
    ("csf index out of range", csf([[0, 1]], [[3], [1]], (0, 1), (2, 2), 1), "outside"),
    ("csf level count", csf([], [[0], [1]], (0, 1), (2, 2), 1), "buffers"),
    ("csf huge level", csf([[0, 1]], [[0], [1]], (0, 1), (2, 2), 1)[:-8], "larger|outside|reaches|past"),
]


@pytest.mark.parametrize("label,message,match", BAD_SPARSE, ids=[c[0] for c in BAD_SPARSE])
def test_hostile_sparse_headers_raise_arrow_invalid(label, message, match):
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        arrowmm.read_sparse_tensor(message).to_dense()


def test_valid_hand_built_sparse_messages_read():
    np.testing.assert_array_equal(arrowmm.read_sparse_tensor(coo([[0, 1], [1, 0]], (2, 2))).to_dense(),
                                  [[0, 1], [1, 0]])
    np.testing.assert_array_equal(arrowmm.read_sparse_tensor(csr([0, 1, 2], [1, 0], (2, 2), 2)).to_dense(),
                                  [[0, 1], [1, 0]])
    np.testing.assert_array_equal(
        arrowmm.read_sparse_tensor(csf([[0, 1]], [[1], [0]], (0, 1), (2, 2), 1)).to_dense(), [[0, 0], [1, 0]])
    # axis order (1, 0): the first level is the column
    np.testing.assert_array_equal(
        arrowmm.read_sparse_tensor(csf([[0, 1]], [[1], [0]], (1, 0), (2, 2), 1)).to_dense(), [[0, 1], [0, 0]])


def valid_messages():
    rng = np.random.default_rng(11)
    dense = rng.integers(0, 4, size=(4, 5)) * (rng.random((4, 5)) < 0.4)
    dense3 = rng.integers(0, 4, size=(2, 3, 4)) * (rng.random((2, 3, 4)) < 0.4)
    yield "tensor pyarrow", pa_tensor_bytes(dense.astype(np.float32), ["a", "b"])
    yield "tensor arrowmm column-major", mm_tensor_bytes(np.asfortranarray(dense))
    yield "coo", sparse_bytes(arrowmm.SparseCOOTensor.from_dense_numpy(dense3))
    yield "csr", sparse_bytes(arrowmm.SparseCSRMatrix.from_dense_numpy(dense))
    yield "csc", sparse_bytes(arrowmm.SparseCSCMatrix.from_dense_numpy(dense.astype(np.int16)))
    yield "csf", sparse_bytes(arrowmm.SparseCSFTensor.from_dense_numpy(dense3))


def read_any(data: bytes):
    """Read ``data`` as whichever message it claims to be; touch every value."""
    try:
        tensor = arrowmm.read_tensor(data)
    except arrowmm.ArrowInvalid as exc:
        if "expected a Tensor" not in str(exc):
            raise
        sparse = arrowmm.read_sparse_tensor(data)
        dense = sparse.to_dense()
        return float(np.sum(dense, dtype=np.float64)) if dense.size < (1 << 24) else 0.0
    return float(np.sum(tensor.to_numpy(), dtype=np.float64))


@pytest.mark.parametrize("label,message", list(valid_messages()), ids=[c[0] for c in valid_messages()])
def test_sweep_prefixes_and_mutations(label, message):
    expected = read_any(message)
    for n in range(len(message)):
        try:
            read_any(message[:n])
        except (arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError):
            pass
    rng = random.Random(f"tensor-sweep-{label}")
    outcomes = {"read": 0, "refused": 0}
    for _ in range(300):
        mutated = bytearray(message)
        for _ in range(rng.choice((1, 1, 2, 4))):
            at = rng.randrange(len(mutated))
            mutated[at] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256), mutated[at] ^ 1))
        try:
            read_any(bytes(mutated))
            outcomes["read"] += 1
        except (arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError):
            outcomes["refused"] += 1
    assert read_any(message) == expected
    assert outcomes["read"] and outcomes["refused"]  # the mutations exercised both outcomes


def test_docstring_examples():
    import doctest
    import arrowmm.ipc.tensor.dense
    import arrowmm.ipc.tensor.sparse
    for module in (arrowmm.ipc.tensor.dense, arrowmm.ipc.tensor.sparse):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_unaligned_data_buffer_reads_by_value():
    # A data buffer at an odd body offset: numpy views it unaligned, values still right.
    values = np.arange(6, dtype="<i4")
    body = b"\x00" + values.tobytes() + bytes(7)
    message = raw_tensor_message(body, t.IntType(32, True), (2, 3), (), None, (1, 24))
    view = arrowmm.read_tensor(message).to_numpy()
    np.testing.assert_array_equal(view, values.reshape(2, 3))


def test_sparse_from_numpy_checks_its_arguments():
    s = arrowmm.SparseCSRMatrix.from_numpy([1.0, 2.0], [0, 1, 2], [1, 0], (2, 2))
    np.testing.assert_array_equal(s.to_dense(), [[0, 1], [2, 0]])
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.SparseCSRMatrix.from_numpy([1.0, 2.0], [0, 2, 1], [1, 0], (2, 2))
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.SparseCOOTensor.from_numpy([1.0], [[0, 2]], (2, 2))
    c = arrowmm.SparseCOOTensor.from_numpy([1.0, 2.0], [[1, 0], [0, 1]], (2, 2))
    assert not c.has_canonical_format
    np.testing.assert_array_equal(arrowmm.read_sparse_tensor(sparse_bytes(c)).to_dense(), [[0, 2], [1, 0]])
    f = arrowmm.SparseCSFTensor.from_numpy([3], [[0, 1]], [[1], [0]], (1, 0), (2, 2))
    np.testing.assert_array_equal(f.to_dense(), [[0, 3], [0, 0]])


@pytest.mark.parametrize("kind", ["COO", "CSR", "CSC", "CSF"])
def test_sparse_to_numpy_gives_what_pyarrow_gives(kind):
    """``to_numpy()`` returns pyarrow's tuple (values as a column, then the index arrays), so
    code written against pyarrow's sparse tensors ports; ``to_tensor()`` is the dense tensor."""
    dense = np.array([[0, 1.5, 0], [2.5, 0, 0], [0, 0, 3.5]])
    ours = getattr(arrowmm, _SPARSE_NAMES[kind]).from_dense_numpy(dense)
    theirs = getattr(pa, _SPARSE_NAMES[kind]).from_dense_numpy(dense)
    mine, want = ours.to_numpy(), theirs.to_numpy()
    assert len(mine) == len(want)
    for a, b in zip(mine, want):
        if isinstance(b, list):
            assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
        else:
            assert a.shape == b.shape and np.array_equal(a, b)
    np.testing.assert_array_equal(ours.to_tensor().to_numpy(), dense)


_SPARSE_NAMES = {"COO": "SparseCOOTensor", "CSR": "SparseCSRMatrix", "CSC": "SparseCSCMatrix",
                 "CSF": "SparseCSFTensor"}
