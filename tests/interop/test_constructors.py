"""``arrowmm.nulls``, ``repeat``, ``concat_arrays``, ``concat_batches``, ``infer_type``,
``utf8``/``large_utf8`` and the array helpers ``tolist``, ``drop_null``, ``iterchunks``, against
pyarrow's functions of those names: values, types and errors."""
import pyarrow as pa
import pytest

import arrowmm


@pytest.mark.parametrize("size, dtype", [(3, None), (0, None), (3, "int8"),
                                         (2, pa.list_(pa.int8())), (4, pa.string()),
                                         (2, pa.struct([("a", pa.int8())])), (2, pa.uuid()),
                                         (1000, pa.float64())])
def test_nulls_as_pyarrow(size, dtype):
    mine_type = dtype if dtype is None or isinstance(dtype, str) else \
        arrowmm.schema(pa.schema([("a", dtype)])).field("a").type
    got = arrowmm.nulls(size, mine_type)
    want = pa.nulls(size, dtype) if dtype is not None else pa.nulls(size)
    assert pa.array(got).equals(want)
    assert got.null_count == size or isinstance(got.type, arrowmm.StructType)


@pytest.mark.parametrize("value", [1, None, "a", 2.5, [1, 2], {"a": 1, "b": "x"}, True])
def test_repeat_as_pyarrow(value):
    assert pa.array(arrowmm.repeat(value, 3)).equals(pa.repeat(value, 3))
    assert len(arrowmm.repeat(value, 0)) == 0


@pytest.mark.parametrize("call", [lambda: arrowmm.nulls(-1), lambda: arrowmm.repeat(1, -1)])
def test_a_negative_size_is_refused(call):
    # (pyarrow makes a NullArray of length -1, or fails resizing a buffer)
    with pytest.raises(arrowmm.ArrowInvalid, match="size must be at least 0"):
        call()


def test_concat_arrays_as_pyarrow():
    a, b = arrowmm.array([1, None]), arrowmm.array([3])
    assert pa.array(arrowmm.concat_arrays([a, b])).equals(
        pa.concat_arrays([pa.array(a), pa.array(b)]))
    nested = [arrowmm.array([[1], None]), arrowmm.array([[2, 3]])]
    assert arrowmm.concat_arrays(nested).to_pylist() == [[1], None, [2, 3]]
    with pytest.raises(arrowmm.ArrowInvalid, match="must be identically typed, but int64 and "
                                                   "string were encountered"):
        arrowmm.concat_arrays([a, arrowmm.array(["x"])])
    with pytest.raises(arrowmm.ArrowInvalid, match="Must pass at least one array"):
        arrowmm.concat_arrays([])
    with pytest.raises(TypeError, match="should contain Array objects"):
        arrowmm.concat_arrays([a, [1]])


def test_concat_batches_as_pyarrow():
    b1 = arrowmm.record_batch({"a": [1, 2], "s": ["x", None]})
    b2 = arrowmm.record_batch({"a": [3], "s": ["z"]}).replace_schema_metadata({"k": "v"})
    got = arrowmm.concat_batches([b1, b2])
    want = pa.concat_batches([pa.record_batch(b1), pa.record_batch(b2)])
    assert pa.record_batch(got).equals(want)
    assert got.schema.metadata == want.schema.metadata
    with pytest.raises(arrowmm.ArrowInvalid, match="Schema of RecordBatch index 1 is"):
        arrowmm.concat_batches([b1, arrowmm.record_batch({"b": [1]})])
    with pytest.raises(arrowmm.ArrowInvalid, match="Must pass at least one recordbatch"):
        arrowmm.concat_batches([])


def test_the_other_names_pyarrow_users_type():
    assert arrowmm.utf8() == arrowmm.string() and arrowmm.large_utf8() == arrowmm.large_string()
    assert str(arrowmm.infer_type([1, None])) == str(pa.infer_type([1, None]))
    values = arrowmm.array([1, None, 3])
    assert values.tolist() == values.to_pylist() == pa.array([1, None, 3]).tolist()
    assert values.drop_null().to_pylist() == pa.array([1, None, 3]).drop_null().to_pylist()
    dense = arrowmm.array([1, 2])
    assert dense.drop_null() is dense
    assert len(arrowmm.nulls(3).drop_null()) == 0
    chunks = arrowmm.chunked_array([[1], [2, 3]])
    assert [c.to_pylist() for c in chunks.iterchunks()] == [[1], [2, 3]]
