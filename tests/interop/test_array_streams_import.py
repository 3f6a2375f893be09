"""A C stream of arrays (not record batches) imports (review 19: F5): a polars ``Series`` or a
pyarrow ``ChunkedArray`` exports only ``__arrow_c_stream__``, and ``array()``,
``chunked_array()`` and ``table({...})`` took none of them (pyarrow takes all three)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.interop._cdata import import_array_stream

pl = pytest.importorskip("polars", reason="polars is in the test extras; install them")


def _series():
    return pl.concat([pl.Series("x", [1, None]), pl.Series("x", [3])], rechunk=False)


def test_a_polars_series_as_array_chunked_array_and_table_column():
    series = _series()
    assert series.n_chunks() == 2
    assert arrowmm.array(series).to_pylist() == pa.array(series).to_pylist() == [1, None, 3]
    chunked = arrowmm.chunked_array(series)
    assert [c.to_pylist() for c in chunked.chunks] == [[1, None], [3]]  # (its chunks kept)
    assert chunked.type == arrowmm.int64()
    assert arrowmm.table({"x": series}).to_pylist() == pa.table({"x": series}).to_pylist()


def test_a_pyarrow_chunked_array_of_strings_and_an_arrowmm_one():
    chunked = pa.chunked_array([["a", None], [], ["é"]])
    assert arrowmm.array(chunked).to_pylist() == ["a", None, "é"]
    assert arrowmm.array(arrowmm.chunked_array(chunked)).to_pylist() == ["a", None, "é"]
    empty = arrowmm.array(pa.chunked_array([], pa.int32()))
    assert len(empty) == 0 and empty.type == arrowmm.int32()


def test_a_stream_of_extension_arrays_keeps_the_extension():
    chunked = pa.chunked_array([pa.array([b"\x00" * 16], pa.binary(16)).cast(pa.uuid())])
    out = arrowmm.chunked_array(chunked)
    assert str(out.type) == str(pa.uuid()) or "uuid" in str(out.type)
    assert arrowmm.array(chunked).to_pylist() == chunked.to_pylist()


def test_type_asks_the_producer_and_a_type_it_cannot_give_raises():
    with pytest.raises(arrowmm.ArrowError):
        arrowmm.array(pa.chunked_array([["a"]]), arrowmm.int64())


def test_a_type_the_producer_ignores_is_cast_to_as_pyarrow_does():
    # (polars ignores the requested schema: review 21, F1)
    series = _series()
    assert arrowmm.array(series, arrowmm.float64()).to_pylist() == \
        pa.array(series, pa.float64()).to_pylist() == [1.0, None, 3.0]
    chunked = arrowmm.chunked_array(series, arrowmm.float64())
    assert chunked.type == arrowmm.float64() and chunked.to_pylist() == [1.0, None, 3.0]
    strings = pl.Series("s", ["a", None])  # (a string_view stream)
    assert arrowmm.array(strings, arrowmm.string()).type == arrowmm.string()
    assert arrowmm.array(pa.array([1, 2]), arrowmm.float64()).to_pylist() == [1.0, 2.0]


def test_a_value_the_cast_cannot_hold_is_named():
    with pytest.raises(ArrowInvalid, match="300"):  # (not "casting is not supported")
        arrowmm.array(pa.chunked_array([[300]]), arrowmm.int8())


def test_a_stream_of_no_chunks_gives_an_empty_chunked_array_of_its_type():
    # (review 21, F3: "cannot construct ChunkedArray from empty vector and omitted type")
    empty = arrowmm.chunked_array(pa.chunked_array([], pa.int32()))
    assert empty.type == arrowmm.int32() and len(empty) == 0
    reader = pa.RecordBatchReader.from_batches(pa.schema([("x", pa.int64())]), [])
    assert str(arrowmm.chunked_array(reader).type) == "struct<x: int64>"


def test_a_chunk_with_decreasing_offsets_raises_arrow_invalid():
    good = pa.array(["ab", "cd"])
    offsets = pa.py_buffer(np.array([0, 3, 2], np.int32).tobytes())
    bad = pa.Array.from_buffers(pa.string(), 2, [None, offsets, good.buffers()[2]])
    chunked = pa.chunked_array([good, bad])  # (pyarrow's cheap validation lets it through)
    with pytest.raises(ArrowInvalid, match="offset"):
        arrowmm.array(chunked).to_pylist()
    with pytest.raises(ArrowInvalid, match="offset"):
        arrowmm.chunked_array(chunked).chunks[1].to_pylist()


def test_the_imported_stream_exports_again_as_an_array_stream():
    stream = import_array_stream(_series().__arrow_c_stream__())
    assert stream.field.type == arrowmm.int64()
    assert pa.chunked_array(stream).to_pylist() == [1, None, 3]
