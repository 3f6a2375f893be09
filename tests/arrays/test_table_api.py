"""pyarrow's everyday table surface on arrowmm's classes (issue 32), pyarrow as the oracle:
``RecordBatch.filter`` / ``take`` / ``sort_by``, ``reader.tail``, ``DictionaryArray.indices``
as a property, ``to_pandas(columns=..., types_mapper=...)`` and ``Dataset.to_pandas``."""

import pandas as pd
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


# -- to_pandas(columns=..., types_mapper=...) and Dataset.to_pandas -------------------------

NULLABLE = {"int64": pd.Int64Dtype(), "string": pd.StringDtype(), "double": pd.Float64Dtype(),
            "bool": pd.BooleanDtype()}


def _mapper(seen=None):
    def types_mapper(dtype):
        if seen is not None:
            seen.append(dtype)
        return NULLABLE.get(str(dtype))
    return types_mapper


def _pandas_table():
    return pa.table({"a": pa.array([1, None, 2**62 + 1], pa.int64()), "b": ["x", None, "z"],
                     "c": [1.5, None, float("nan")], "d": [True, None, False],
                     "e": pa.array([1, 2, 3], pa.int16())})


def test_types_mapper_is_pyarrows_and_receives_arrowmm_types():
    pt = _pandas_table()
    table = arrowmm.Table.from_batches([arrowmm.record_batch(b) for b in pt.to_batches(2)])
    seen = []
    got = table.to_pandas(types_mapper=_mapper(seen))
    pd.testing.assert_frame_equal(got, pt.to_pandas(types_mapper=_mapper()))
    assert got["a"].tolist()[2] == 2**62 + 1  # (exact: no float detour)
    assert seen and all(isinstance(s, arrowmm.DataType) for s in seen)
    batch = arrowmm.record_batch(pt.to_batches()[0])
    pd.testing.assert_frame_equal(batch.to_pandas(types_mapper=_mapper()),
                                  pt.to_batches()[0].to_pandas(types_mapper=_mapper()))


def test_pandas_dict_idiom_with_pyarrow_keys_maps_as_in_pyarrow():
    # pandas' documented idiom: a dict keyed by pyarrow types.  arrowmm types never equal
    # pyarrow's, so before, every column silently took the default conversion.
    pt = _pandas_table()
    table = arrowmm.Table.from_batches([arrowmm.record_batch(b) for b in pt.to_batches()])
    mapping = {pa.int64(): pd.Int64Dtype(), pa.string(): pd.StringDtype(),
               pa.int16(): pd.Int16Dtype()}
    got = table.to_pandas(types_mapper=mapping.get)
    pd.testing.assert_frame_equal(got, pt.to_pandas(types_mapper=mapping.get))
    assert str(got["a"].dtype) == "Int64" and str(got["e"].dtype) == "Int16"
    mixed = {arrowmm.float64(): pd.Float64Dtype(), pa.bool_(): pd.BooleanDtype()}
    got = table.to_pandas(types_mapper=mixed.get)
    assert (str(got["c"].dtype), str(got["d"].dtype), str(got["a"].dtype)) == \
        ("Float64", "boolean", "float64")


@pytest.mark.parametrize("dtype", [pd.Int32Dtype(), pd.UInt8Dtype(), pd.Float32Dtype(),
                                   pd.Int64Dtype()], ids=str)
def test_types_mapper_casts_to_the_dtypes_width_as_pandas_does(dtype):
    for values in ([1, None, 3], [300, None], [-1], [1.5, None], [2.0, None]):
        pt = pa.table({"x": values})
        table = arrowmm.Table.from_batches([arrowmm.record_batch(pt.to_batches()[0])])
        try:
            want = pt.to_pandas(types_mapper=lambda _: dtype)
        except (pa.ArrowInvalid, TypeError) as exc:
            with pytest.raises(ValueError if isinstance(exc, pa.ArrowInvalid) else TypeError):
                table.to_pandas(types_mapper=lambda _: dtype)
            continue
        pd.testing.assert_frame_equal(table.to_pandas(types_mapper=lambda _: dtype), want)


def test_types_mapper_refuses_a_string_column_for_a_number_dtype_as_pandas():
    pt = pa.table({"s": ["1"]})
    with pytest.raises(TypeError):
        pt.to_pandas(types_mapper=lambda _: pd.Int64Dtype())
    with pytest.raises(TypeError, match="'s'"):
        arrowmm.record_batch(pt.to_batches()[0]).to_pandas(types_mapper=lambda _: pd.Int64Dtype())


def test_to_pandas_columns_selects_and_orders():
    pt = _pandas_table()
    table = arrowmm.Table.from_batches([arrowmm.record_batch(b) for b in pt.to_batches(2)])
    pd.testing.assert_frame_equal(table.to_pandas(columns=["e", "a"]),
                                  pt.select(["e", "a"]).to_pandas())
    pd.testing.assert_frame_equal(table.to_pandas(columns=[1]), pt.select([1]).to_pandas())
    with pytest.raises(KeyError, match="nope"):
        table.to_pandas(columns=["nope"])


def test_a_reader_to_pandas_takes_the_options(tmp_path):
    pt = _pandas_table()
    with arrowmm.open_file(_file(tmp_path, pt, 2)) as r:
        got = r.to_pandas(columns=["d", "b"], types_mapper=_mapper())
    pd.testing.assert_frame_equal(got, pt.select(["d", "b"]).to_pandas(types_mapper=_mapper()))


def test_dataset_to_pandas_is_pyarrow_datasets(tmp_path):
    import pyarrow.dataset as pds
    pt = _pandas_table()
    for k in range(2):
        with pa.ipc.new_file(str(tmp_path / f"part{k}.arrow"), pt.schema) as w:
            w.write_table(pt, max_chunksize=2)
    ds = arrowmm.dataset(str(tmp_path))
    oracle = pds.dataset(str(tmp_path), format="arrow")
    pd.testing.assert_frame_equal(ds.to_pandas(), oracle.to_table().to_pandas())
    got = ds.to_pandas(columns=["e", "b"], filter=arrowmm.field("e") > 1,
                       types_mapper=_mapper())
    want = oracle.to_table(columns=["e", "b"], filter=pds.field("e") > 1).to_pandas(
        types_mapper=_mapper())
    pd.testing.assert_frame_equal(got, want)
