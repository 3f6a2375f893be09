"""Dictionary arrays decoded and encoded by casts and by the writers' ``cast=True`` keep every
stored value exactly (review 15: 1 and 7): a round trip through Python values lost
``time64[ns]``'s nanoseconds (``datetime.time`` holds microseconds) and refused values past
``datetime``'s years."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm


def _mm_type(pa_type):
    return arrowmm.array(pa.nulls(0, pa_type)).type


def _cast(source: pa.Array, target, safe: bool = True) -> pa.Array:
    return pa.array(arrowmm.array(source).cast(_mm_type(target), safe=safe))


def _ints(array: pa.Array) -> list:
    """A temporal array's stored integers (past datetime's range too)."""
    return array.view(pa.int32() if array.type.bit_width == 32 else pa.int64()).to_pylist()


def _time_ns_dictionary() -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(
        pa.array([0, None, 1, 0], pa.int8()),
        pa.array([1, 86_399_999_999_999], pa.time64("ns")))


def _written(tmp_path, columns: dict, field_types: dict) -> pa.Table:
    """``columns`` written with ``cast=True`` to a file whose fields have ``field_types``,
    read back by pyarrow."""
    path = str(tmp_path / "cast.arrow")
    schema = arrowmm.schema(pa.schema(list(field_types.items())))
    batch = pa.record_batch(list(columns.values()), names=list(columns))
    with arrowmm.new_file(path, schema, cast=True) as writer:
        writer.write(arrowmm.record_batch(batch))
    return pa.ipc.open_file(path).read_all().combine_chunks()


@pytest.mark.parametrize("target", [pa.string(), pa.time64("ns"),
                                    pa.dictionary(pa.int16(), pa.string())], ids=str)
def test_dictionary_of_time64_ns_keeps_its_nanoseconds(target):
    source = _time_ns_dictionary()
    want = pc.cast(source, target)
    got = _cast(source, target)
    if pa.types.is_time(target):
        assert _ints(got) == _ints(want) == [1, None, 86_399_999_999_999, 1]
    else:
        assert got.to_pylist() == want.to_pylist()
        assert got.to_pylist()[:3] == ["00:00:00.000000001", None, "23:59:59.999999999"]


def test_dictionary_of_time64_ns_to_us_refuses_the_truncation_when_safe():
    source = _time_ns_dictionary()
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(source, pa.time64("us"))
    with pytest.raises(arrowmm.ArrowInvalid, match="would lose data: 1"):
        _cast(source, pa.time64("us"))


def test_sliced_and_empty_dictionaries_decode_their_own_rows():
    source = _time_ns_dictionary().slice(1, 3)
    assert _ints(_cast(source, pa.time64("ns"))) == [None, 86_399_999_999_999, 1]
    empty = pa.DictionaryArray.from_arrays(pa.array([None, None], pa.int8()),
                                           pa.array([], pa.time64("ns")))
    assert _cast(empty, pa.string()).to_pylist() == [None, None]


def test_writer_cast_true_writes_a_time64_ns_dictionary_exactly(tmp_path):
    column = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()),
                                            pa.array([1, 86_399_999_999_999], pa.time64("ns")))
    written = _written(tmp_path, {"t": column}, {"t": pa.time64("ns")})
    assert _ints(written["t"].chunk(0)) == [1, 86_399_999_999_999]


def test_writer_cast_true_encodes_values_into_a_dictionary_exactly(tmp_path):
    # keyed by datetime.time, 1 ns and 2 ns were one entry; floats stay keyed by their bits
    columns = {"t": pa.array([1, 2, None, 86_399_999_999_999, 2], pa.time64("ns")),
               "d": pa.array([1, 10**18, 1, 2, None], pa.duration("ns")),
               "f": pa.array([0.0, -0.0, float("nan"), 0.0, float("nan")], pa.float64())}
    written = _written(tmp_path, columns, {k: pa.dictionary(pa.int32(), v.type)
                                           for k, v in columns.items()})
    t, d, f = (written[k].chunk(0) for k in columns)
    assert (_ints(t.dictionary), t.indices.to_pylist()) == \
        ([1, 2, 86_399_999_999_999], [0, 1, None, 2, 1])
    assert (_ints(d.dictionary), d.indices.to_pylist()) == ([1, 10**18, 2], [0, 1, 0, 2, None])
    assert [str(v) for v in f.dictionary.to_pylist()] == ["0.0", "-0.0", "nan"]
    assert f.indices.to_pylist() == [0, 1, 2, 0, 2]


@pytest.mark.parametrize("values,target", [
    (pa.array([-86_400_000_000_000_000], pa.timestamp("us")), pa.string()),
    (pa.array([-86_400_000_000_000_000], pa.timestamp("us")), pa.date32()),
    (pa.array([3_000_000], pa.date32()), pa.string()),
], ids=["timestamp-string", "timestamp-date32", "date32-string"])
def test_dictionary_of_temporal_values_past_datetime_casts_as_pyarrow(values, target):
    # the message was about to_pylist(temporal='int'), a call the user did not make
    source = pa.DictionaryArray.from_arrays(pa.array([0, None, 0], pa.int8()), values)
    want = pc.cast(source, target)
    got = _cast(source, target)
    if pa.types.is_temporal(target):
        assert _ints(got) == _ints(want)
    else:
        assert got.to_pylist() == want.to_pylist()


def test_writer_cast_true_encodes_lists_and_structs_into_a_dictionary(tmp_path):
    # (their Python values are lists and dicts: keyed as they were, the write raised TypeError)
    columns = {"l": pa.array([[1.0], [-0.0], None, [1.0], [0.0]], pa.list_(pa.float64())),
               "s": pa.array([{"a": 1}, {"a": 2}, {"a": 1}, None, {"a": 2}],
                             pa.struct([("a", pa.int8())]))}
    written = _written(tmp_path, columns, {k: pa.dictionary(pa.int32(), v.type)
                                           for k, v in columns.items()})
    lists, structs = written["l"].chunk(0), written["s"].chunk(0)
    assert [str(v) for v in lists.dictionary.to_pylist()] == ["[1.0]", "[-0.0]", "[0.0]"]
    assert lists.indices.to_pylist() == [0, 1, None, 0, 2]
    assert structs.dictionary.to_pylist() == [{"a": 1}, {"a": 2}]
    assert structs.indices.to_pylist() == [0, 1, 0, None, 1]
