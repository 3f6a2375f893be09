"""pyarrow's everyday table surface on arrowmm's classes (issue 32), pyarrow as the oracle:
``RecordBatch.filter`` / ``take`` / ``sort_by``, ``reader.tail``, ``DictionaryArray.indices``
as a property, ``to_pandas(columns=..., types_mapper=...)`` and ``Dataset.to_pandas``."""

import pyarrow as pa
import pytest

import arrowmm


def _batch():
    return pa.record_batch({"x": pa.array([3, None, 1, 2, 1], pa.int64()),
                            "f": pa.array([0.5, float("nan"), None, -1.0, 2.0]),
                            "s": pa.array(["a", "b", None, "d", "e"])})


def _same(got, want):
    """Same schema and values (NaN matching NaN, which pyarrow's ``equals`` refuses)."""
    got = pa.record_batch(got) if isinstance(got, arrowmm.RecordBatch) else pa.table(got)
    assert got.schema.equals(want.schema)
    assert repr(got.to_pydict()) == repr(want.to_pydict())


def _file(tmp_path, table, chunk):
    path = str(tmp_path / "t.arrow")
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table, max_chunksize=chunk)
    return path


# -- RecordBatch.filter / take / sort_by --------------------------------------------------

@pytest.mark.parametrize("mask", [[True, None, False, True, True], [False] * 5, [True] * 5])
def test_batch_filter_by_mask_is_pyarrows(mask):
    pb = _batch()
    got = arrowmm.record_batch(pb).filter(mask)
    assert isinstance(got, arrowmm.RecordBatch)
    _same(got, pb.filter(pa.array(mask, pa.bool_())))


def test_batch_filter_by_expression_is_pyarrows():
    pb = _batch()
    got = arrowmm.record_batch(pb).filter((arrowmm.field("x") > 1) | arrowmm.field("s").is_null())
    want = pb.filter((pa.compute.field("x") > 1) | pa.compute.field("s").is_null())
    _same(got, want)


def test_batch_filter_of_an_unknown_column_names_it():
    with pytest.raises(arrowmm.ArrowInvalid, match="'nope'"):
        arrowmm.record_batch(_batch()).filter(arrowmm.field("nope") > 1)


def test_batch_take_is_pyarrows():
    pb = _batch()
    got = arrowmm.record_batch(pb).take([4, 0, None, 0])
    _same(got, pb.take(pa.array([4, 0, None, 0], pa.int64())))
    with pytest.raises(IndexError):
        arrowmm.record_batch(pb).take([5])


@pytest.mark.parametrize("sorting", ["x", [("x", "descending")], [("f", "ascending")],
                                     [("x", "ascending"), ("s", "descending")]])
def test_batch_sort_by_is_pyarrows(sorting):
    pb = _batch()
    got = arrowmm.record_batch(pb).sort_by(sorting)
    assert isinstance(got, arrowmm.RecordBatch)
    _same(got, pb.sort_by(sorting))


def test_batch_sort_by_of_no_rows():
    pb = _batch().slice(0, 0)
    assert arrowmm.record_batch(pb).sort_by("x").num_rows == 0


# -- reader.tail ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 3, 4, 9, 10, 25])
def test_reader_tail_is_the_last_rows(tmp_path, n):
    table = pa.table({"x": list(range(10)), "s": [str(i) for i in range(10)]})
    with arrowmm.open_file(_file(tmp_path, table, 3)) as r:
        got = r.tail(n)
        assert isinstance(got, arrowmm.Table)
        _same(got, table.slice(max(10 - n, 0)))
        assert got.to_pydict() == r.read_all().tail(n).to_pydict()


def test_reader_tail_reads_only_the_last_batches(tmp_path):
    """The first batch's message is damaged: read_all fails, tail of the last rows does not."""
    table = pa.table({"x": list(range(10))})
    path = _file(tmp_path, table, 3)
    with arrowmm.open_file(path) as r:
        offset, _ = r.batch_extents()[0]
    with open(path, "r+b") as f:
        f.seek(offset + 8)
        f.write(b"\xff" * 16)  # the first batch's flatbuffer header
    with arrowmm.open_file(path) as r:
        with pytest.raises(arrowmm.ArrowInvalid):
            r.read_all().to_pydict()
        assert r.tail(7).to_pydict() == {"x": list(range(3, 10))}
        with pytest.raises(arrowmm.ArrowInvalid):
            r.tail(8).to_pydict()


def test_reader_tail_refuses_a_negative_count(tmp_path):
    with arrowmm.open_file(_file(tmp_path, pa.table({"x": [1]}), 3)) as r:
        with pytest.raises(arrowmm.ArrowInvalid, match="-1"):
            r.tail(-1)


# -- DictionaryArray.indices ---------------------------------------------------------------

def test_dictionary_indices_is_a_property_as_in_pyarrow():
    pa_arr = pa.array(["a", "b", None, "a"]).dictionary_encode()
    arr = arrowmm.array(pa_arr)
    assert isinstance(arr.indices, arrowmm.Array)
    assert arr.indices.to_pylist() == pa_arr.indices.to_pylist()
    assert str(arr.indices.type) == str(pa_arr.indices.type)
    assert arr.dictionary.to_pylist() == pa_arr.dictionary.to_pylist()
