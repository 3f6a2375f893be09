"""A dense union offset past its child and a string_view buffer index past the view's buffers
raise ``ArrowInvalid`` in concatenation and the take / filter built on it (review 16: F1, F3).

Concatenation shifts such references by what the earlier inputs hold, so one pointing past its
own input read a later input's value, and the result validated: ``take([700])`` of the union
gave ``[5]``, of the string_view ``['abcdefghijklmnop']``.  Each damage is built with pyarrow's
``Array.from_buffers``, written by its IPC writer (which does not validate), and refused by
pyarrow's ``validate(full=True)``: the oracle of "damaged".
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import ipc_bytes

N = 1000
BAD_ROW = 700


def _column(arr: pa.Array, codec, pa_why: str):
    """``arr`` as the one column of a file's batch, read by arrowmm; pyarrow refuses it."""
    data = ipc_bytes(pa.record_batch([arr], names=["c"]), compression=codec)
    with pytest.raises((pa.ArrowInvalid, pa.ArrowIndexError), match=pa_why):
        pa.ipc.open_file(data).get_batch(0).validate(full=True)
    return arrowmm.open_file(data).get_batch(0)


def _selected(batch, how):
    col = batch.column(0)
    mask = np.zeros(N, bool)
    mask[BAD_ROW] = True
    return {"take": lambda: col.take([BAD_ROW]),
            "take_two": lambda: col.take([BAD_ROW - 1, BAD_ROW]),
            "filter": lambda: col.filter(mask),
            "batch_take": lambda: batch.take([BAD_ROW]).column(0),
            "concat": lambda: arrowmm.concat_arrays([col.slice(BAD_ROW, 1), col.slice(0, 2)])}[how]


def _dense_union_offset_past_child() -> pa.Array:
    """N rows, all of child 'a' (int32 0..N-1); row BAD_ROW's offset is N + 5."""
    ids = np.zeros(N, np.int8)
    offsets = np.arange(N, dtype="<i4")
    offsets[BAD_ROW] = N + 5
    typ = pa.union([pa.field("a", pa.int32()), pa.field("b", pa.string())], mode="dense")
    return pa.Array.from_buffers(typ, N, [None, pa.py_buffer(ids), pa.py_buffer(offsets)],
                                 children=[pa.array(np.arange(N, dtype=np.int32)), pa.array(["x"])])


def _sparse_union_bad_type_id() -> pa.Array:
    ids = np.zeros(N, np.int8)
    ids[BAD_ROW] = 5
    typ = pa.union([pa.field("a", pa.int32()), pa.field("b", pa.string())], mode="sparse")
    return pa.Array.from_buffers(typ, N, [None, pa.py_buffer(ids)],
                                 children=[pa.array(np.arange(N, dtype=np.int32)),
                                           pa.array(["x"] * N)])


@pytest.mark.parametrize("codec", [None, "zstd"])
@pytest.mark.parametrize("how", ["take", "take_two", "filter", "batch_take", "concat"])
def test_dense_union_offset_past_its_child_is_refused_by_copies(codec, how):
    """Before: take gave [5] and [699, 5] (the offset landed in the second input's child),
    and the result passed arrowmm's export check and pyarrow's full validation."""
    batch = _column(_dense_union_offset_past_child(), codec, "offset larger than child length")
    assert batch.column(0).take([3, 699, 701]).to_pylist() == [3, 699, 701]  # rows around it
    where = r"concat_arrays input \d" if how == "concat" else r"take of dense_union"
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=rf"{where}.*offset\[\d+\]={N + 5} >= length {N}"):
        _selected(batch, how)()


@pytest.mark.parametrize("how", ["take", "concat"])
def test_sparse_union_bad_type_id_is_refused_by_copies(how):
    """The id is copied as it is (it stays bad), but concatenation refuses it where it is read,
    naming the input, as it refuses a dense union's."""
    batch = _column(_sparse_union_bad_type_id(), None, "invalid type id 5")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"concat_arrays input 0.*type_id\[\d+\]=5"):
        _selected(batch, how)()


def _view_buffer_index_past_buffers() -> pa.Array:
    """string_view of N long values in one data buffer; row BAD_ROW's view names buffer 1."""
    data = b"abcdefghijklmnop" * N
    views = np.zeros((N, 4), "<i4")
    views[:, 0] = 16
    views[:, 1] = np.frombuffer(b"abcd", "<i4")[0]
    views[:, 3] = np.arange(N, dtype="<i4") * 16
    views[BAD_ROW, 2] = 1
    return pa.Array.from_buffers(pa.string_view(), N,
                                 [None, pa.py_buffer(views), pa.py_buffer(data)])


@pytest.mark.parametrize("codec", [None, "lz4"])
@pytest.mark.parametrize("how", ["take", "filter", "batch_take", "concat"])
def test_string_view_buffer_index_past_its_buffers_is_refused_by_copies(codec, how):
    """Before: ['abcdefghijklmnop'] (index 1 named the next input's buffer 0), valid."""
    batch = _column(_view_buffer_index_past_buffers(), codec, "references buffer 1")
    assert batch.column(0).take([0, 999]).to_pylist() == ["abcdefghijklmnop"] * 2
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"concat_arrays input \d.*buffer_index=1 out of range"):
        _selected(batch, how)()

