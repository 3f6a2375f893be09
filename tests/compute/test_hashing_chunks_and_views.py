"""Distinct values and dictionary casts over the chunks of a dictionary column, and of views
(review 17): a column whose chunks carry several dictionaries (deltas, replacements, chunks
encoded apart) counted one value once per dictionary, and even chunks sharing one dictionary
had it appended to itself by ``concat_arrays``; a dictionary cast read the index of a null
slot (which may point anywhere) and raised numpy's IndexError; a column of no chunks gave a
dictionary array without a dictionary; views were refused.  Values against pyarrow's."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm

def _am(tmp_path, arr, name="x"):
    """``arr`` (pyarrow) as the arrowmm column read back from an IPC file."""
    path = str(tmp_path / f"{name}.arrow")
    batch = pa.record_batch([arr], names=["x"])
    with pa.ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
    return arrowmm.open_file(path).get_batch(0).column(0)


# -- F1 (wrong data): unique / value_counts of a chunked dictionary column whose chunks carry --
# different dictionaries (a file written with dictionary deltas, a stream with a replacement,
# or any ChunkedArray of independently encoded chunks).  hashing._whole (hashing.py:105)
# joins the chunks with combine_chunks, which concatenates the dictionaries ([a, b] + [a, b, c]
# -> [a, b, a, b, c]), and codes() keys a DictionaryArray by its *indices* (hashing.py:52):
# the same value under two chunks' indices is two entries.  value_counts says 'a' twice
# (2 and 1) where pyarrow says 'a': 3; unique returns 'a' and 'b' twice.

@pytest.mark.parametrize("writer", ["pyarrow", "arrowmm"])
def test_multi_batch_dictionary_file_value_counts(tmp_path, writer):
    # the ordinary case: two record batches sharing ONE dictionary (written once; arrowmm's
    # chunks even hold the same dictionary object): concat_arrays still appends it to itself
    d = pa.array(["a", "b"])
    b1 = pa.record_batch({"x": pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()), d)})
    b2 = pa.record_batch({"x": pa.DictionaryArray.from_arrays(pa.array([1, 1], pa.int32()), d)})
    path = str(tmp_path / "shared.arrow")
    opener = pa.ipc.new_file if writer == "pyarrow" else arrowmm.new_file
    with opener(path, b1.schema) as w:
        w.write_batch(b1)
        w.write_batch(b2)
    want = pa.ipc.open_file(path).read_all().column("x").value_counts().to_pylist()
    # pyarrow: [{'a', 2}, {'b', 3}]
    got = arrowmm.open_file(path).read_all().column("x").value_counts().to_pylist()
    # today: [{'a', 2}, {'b', 1}, {'b', 2}]
    assert got == want


def _delta_file(tmp_path):
    b1 = pa.record_batch({"x": pa.array(["a", "b", "a"]).dictionary_encode()})
    b2 = pa.record_batch({"x": pa.array(["a", "b", "c", "c"]).dictionary_encode()})
    path = str(tmp_path / "delta.arrow")
    with pa.ipc.new_file(path, b1.schema,
                         options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        w.write_batch(b1)
        w.write_batch(b2)
    return path


@pytest.mark.parametrize("op", ["value_counts", "unique"])
def test_chunked_dictionary_with_delta_dictionaries_counts_each_value_once(tmp_path, op):
    path = _delta_file(tmp_path)
    want = getattr(pa.ipc.open_file(path).read_all().column("x"), op)().to_pylist()
    # pyarrow: [{'a', 3}, {'b', 2}, {'c', 2}] / ['a', 'b', 'c']
    got = getattr(arrowmm.open_file(path).read_all().column("x"), op)().to_pylist()
    # today: [{'a', 2}, {'b', 1}, {'a', 1}, {'b', 1}, {'c', 2}] / ['a', 'b', 'a', 'b', 'c']
    assert got == want


def test_chunked_dictionary_stream_replacement_value_counts(tmp_path):
    b1 = pa.record_batch({"x": pa.array(["a", "b", "a"]).dictionary_encode()})
    b2 = pa.record_batch({"x": pa.array(["b", "z"]).dictionary_encode()})
    path = str(tmp_path / "repl.arrows")
    with pa.ipc.new_stream(path, b1.schema) as w:
        w.write_batch(b1)
        w.write_batch(b2)
    want = pa.ipc.open_stream(path).read_all().column("x").value_counts().to_pylist()
    got = arrowmm.open_stream(path).read_all().column("x").value_counts().to_pylist()
    assert got == want  # today 'b' is listed twice, 1 + 1


def test_chunked_array_of_separately_encoded_chunks_unique(tmp_path):
    c1 = pa.array(["a", "b", "a"]).dictionary_encode()
    c2 = pa.array(["b", "c", None]).dictionary_encode()
    want = pa.chunked_array([c1, c2]).unique().to_pylist()  # ['a', 'b', 'c', None]
    x1, x2 = _am(tmp_path, c1, "c1"), _am(tmp_path, c2, "c2")
    got = arrowmm.ChunkedArray([x1, x2], x1.type).unique().to_pylist()
    assert got == want  # today ['a', 'b', 'b', 'c', None]


# -- F2 (crash on valid data): a cast to another dictionary type, and cast=True writing into a --
# dictionary field, of a dictionary array whose *null* index slots hold values past the
# dictionary (valid Arrow: pyarrow's validate(full=True) passes, the slot is undefined).
# cast._encoded (cast.py:230) gathers `remap[idx]` over every slot, null ones included, before
# masking them: numpy IndexError "index 100 is out of bounds".  (A negative garbage index
# wraps silently and is masked afterwards, so only large ones crash.)

def _dict_with_garbage_null_index():
    valid = np.packbits([1, 0, 1, 0], bitorder="little")
    idx = pa.Array.from_buffers(pa.int8(), 4, [pa.py_buffer(valid.tobytes()),
                                               pa.py_buffer(np.array([0, 100, 1, -3], np.int8)
                                                            .tobytes())], null_count=2)
    arr = pa.DictionaryArray.from_arrays(idx, pa.array(["a", "b"]))
    arr.validate(full=True)  # valid
    return arr


@pytest.mark.parametrize("index_type", [pa.int32(), pa.int16()])
def test_cast_dictionary_with_garbage_null_index(tmp_path, index_type):
    arr = _dict_with_garbage_null_index()
    target = pa.dictionary(index_type, pa.string())
    want = arr.cast(target).to_pylist()  # ['a', None, 'b', None]
    x = _am(tmp_path, arr)
    assert x.to_pylist() == want
    got = x.cast(target)  # today: IndexError
    assert pa.array(got).to_pylist() == want


@pytest.mark.parametrize("source", ["pyarrow", "arrowmm"])
def test_cast_true_write_of_dictionary_with_garbage_null_index(tmp_path, source):
    arr = _dict_with_garbage_null_index()
    col = arr if source == "pyarrow" else _am(tmp_path, arr)
    path = str(tmp_path / "out.arrows")
    schema = pa.schema([("x", pa.dictionary(pa.int32(), pa.string()))])
    with arrowmm.new_stream(path, schema, cast=True) as w:
        w.write_batch(arrowmm.record_batch({"x": col}))  # today: IndexError
    assert pa.ipc.open_stream(path).read_all().column("x").to_pylist() == ["a", None, "b", None]


# -- F3 (crash on valid data): unique / value_counts of a dictionary column with no chunks ----
# (read_all() of a file with no record batch, or a Table.filter that drops every row: both give
# a zero-chunk ChunkedArray).  hashing._whole (hashing.py:101-103) builds the empty array with
# make_array(data.type, 0, _empty_buffers(...)) and no dictionary: unique() returns a
# DictionaryArray whose dictionary is None; its to_pylist raises TypeError ("object of type
# 'NoneType' has no len()"), value_counts() raises that TypeError itself, and its export
# raises "dictionary-encoded array without a dictionary".  pyarrow: [] and [].

def _empty_dictionary_column(tmp_path, how):
    if how == "empty file":
        schema = pa.schema([("x", pa.dictionary(pa.int32(), pa.string()))])
        path = str(tmp_path / "empty.arrow")
        with pa.ipc.new_file(path, schema):
            pass
        return arrowmm.open_file(path).read_all().column("x")
    batch = pa.record_batch({"x": pa.array(["a", "b"]).dictionary_encode()})
    path = str(tmp_path / "one.arrow")
    with pa.ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
    return arrowmm.open_file(path).read_all().filter(np.array([False, False])).column("x")


@pytest.mark.parametrize("how", ["empty file", "filter drops every row"])
@pytest.mark.parametrize("op", ["unique", "value_counts"])
def test_zero_chunk_dictionary_column_unique(tmp_path, how, op):
    col = _empty_dictionary_column(tmp_path, how)
    out = getattr(col, op)()  # value_counts: TypeError today
    assert out.to_pylist() == []  # unique: TypeError today
    assert pa.array(out).to_pylist() == []  # export: ArrowInvalid today


@pytest.mark.parametrize("op", ["unique", "value_counts", "dictionary_encode"])
@pytest.mark.parametrize("view", [pa.string_view(), pa.binary_view()])
def test_views_hash_by_their_bytes_as_the_flat_types_do(tmp_path, op, view):
    """pyarrow 26 turns the null of a view column into an empty value in ``unique`` /
    ``value_counts`` (it keeps it for string): arrowmm answers as pyarrow does for the flat
    type, a null kept."""
    flat = pa.string() if view == pa.string_view() else pa.binary()
    values = ["a", "b", None, "a", "a long string past twelve bytes", ""]
    values = values if flat == pa.string() else [v if v is None else v.encode() for v in values]
    want = getattr(pa.array(values, flat), op)().to_pylist()
    got = getattr(_am(tmp_path, pa.array(values, view)), op)()
    assert got.to_pylist() == want
