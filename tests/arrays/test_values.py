"""Arrays, batches and readers behave like Python containers, as pyarrow's do: equality by
value (against arrowmm and pyarrow objects), slicing, negative indices, take, filter, select,
rename_columns, reprs, and subscriptable file readers.  Every answer is pyarrow's own."""
import datetime
import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

import arrowmm

DATA = {
    "i": [1, None, 3, 4, -5, 6],
    "f": [1.5, 7.25, None, -0.0, 1e20, 2.0],
    "s": ["a", "bb", None, "", "x\"y", "é"],
    "b": [True, False, None, True, True, False],
    "l": [[1, 2], None, [], [3], [4, 5, 6], None],
    "st": [{"p": 1, "q": "x"}, None, {"p": None, "q": "z"}, {"p": 4, "q": None},
           {"p": 5, "q": "w"}, {"p": 6, "q": "v"}],
    "d": [datetime.date(2020, 1, d) for d in range(1, 7)],
    "bin": [b"\x00a", b"", None, b"zz", b"\xff", b"q"],
}


@pytest.fixture
def pair(tmp_path):
    """The same batch read by arrowmm from a file pyarrow wrote, and pyarrow's own."""
    batch = pa.record_batch(DATA)
    path = tmp_path / "values.arrow"
    with pa.ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
        w.write_batch(batch.slice(2))
    with arrowmm.open_file(str(path)) as reader:
        yield reader, reader.get_batch(0), batch


def _same(mm, pa_arr):
    """arrowmm's values equal pyarrow's (NaN compared as NaN)."""
    got, want = mm.to_pylist(), pa_arr.to_pylist()
    assert repr(got) == repr(want)


# -- equality ----------------------------------------------------------------------------------
def test_arrays_compare_by_value(pair):
    _, batch, pa_batch = pair
    for name in ("i", "s", "b", "l", "st", "d", "bin"):
        col = batch[name]
        rebuilt = arrowmm.array(pa_batch.column(name))
        assert col == rebuilt and col.equals(rebuilt) and col is not rebuilt
        assert col == pa_batch.column(name) and col.equals(pa_batch.column(name))
        assert pa_batch.column(name).equals(pa.array(col))  # and back through pyarrow
        assert (col != rebuilt) is False
        changed = pa_batch.column(name).slice(1)
        assert (col == changed) is False and not col.equals(arrowmm.array(changed))


def test_equality_follows_pyarrow_on_types_nan_and_nulls():
    assert (arrowmm.array([1, 2]) == arrowmm.array(pa.array([1, 2], pa.int32()))) is \
        (pa.array([1, 2]) == pa.array([1, 2], pa.int32())) is False
    nan = arrowmm.array([float("nan")])
    assert nan.equals(nan) is pa.array([float("nan")]).equals(pa.array([float("nan")])) is False
    assert arrowmm.array([1, None]) != arrowmm.array([1, 0])
    assert (arrowmm.array([1, 2]) == [1, 2]) is (pa.array([1, 2]) == [1, 2]) is False
    with pytest.raises(TypeError):
        arrowmm.array([1]).equals([1])


def test_arrays_and_batches_are_unhashable_like_pyarrow(pair):
    _, batch, pa_batch = pair
    for obj, theirs in ((batch["i"], pa_batch.column("i")), (batch, pa_batch)):
        with pytest.raises(TypeError):
            hash(theirs)
        with pytest.raises(TypeError):
            hash(obj)


def test_batches_compare_by_value(pair):
    _, batch, pa_batch = pair
    assert batch == pa_batch and batch.equals(pa_batch)
    assert batch == arrowmm.record_batch(pa_batch)
    assert (batch == pa_batch.slice(1)) is False
    assert (batch == batch["i"]) is False and (batch == pa_batch.column("i")) is False
    renamed = pa_batch.rename_columns([n + "_" for n in pa_batch.schema.names])
    assert (batch == renamed) is (pa_batch == renamed) is False


# -- indexing and slicing ----------------------------------------------------------------------
@pytest.mark.parametrize("key", [slice(1, 3), slice(None, -2), slice(-3, None), slice(4, 1),
                                 slice(None, None, 2), slice(None, None, -1), slice(5, 0, -2),
                                 slice(10, 20)])
def test_array_slices_match_pyarrow(pair, key):
    _, batch, pa_batch = pair
    for name in DATA:
        got, want = batch[name][key], pa_batch.column(name)[key]
        _same(got, want)
        assert len(got) == len(want)


def test_contiguous_slices_are_zero_copy(pair):
    _, batch, _ = pair
    col = batch["i"]
    view = col[1:4]
    assert view.is_zero_copy
    assert view._buffers[1] is col._buffers[1]  # the same buffer, at an offset


@pytest.mark.parametrize("k", [0, 3, -1, -6])
def test_negative_and_positive_indices(pair, k):
    _, batch, pa_batch = pair
    for name in DATA:
        assert repr(batch[name][k]) == repr(pa_batch.column(name)[k].as_py())


def test_index_out_of_range_is_an_index_error(pair):
    _, batch, pa_batch = pair
    for k in (6, -7):
        with pytest.raises(IndexError):
            pa_batch.column("i")[k]
        with pytest.raises(IndexError):
            batch["i"][k]
    with pytest.raises(TypeError):
        batch["i"]["x"]


def test_batch_subscripts(pair):
    _, batch, pa_batch = pair
    assert batch["s"] == pa_batch["s"]
    assert batch[-1] == pa_batch[-1]
    for key in (slice(1, 3), slice(-2, None), slice(None, None, 2), slice(None, None, -1)):
        got, want = batch[key], pa_batch[key]
        assert got.to_pylist() == want.to_pylist() or repr(got.to_pylist()) == repr(want.to_pylist())
        assert got.num_rows == want.num_rows
    with pytest.raises(KeyError):
        batch["nope"]
    with pytest.raises(IndexError):
        batch[len(DATA)]
    assert len(batch) == len(pa_batch) == 6


def test_iteration_gives_python_values(pair):
    _, batch, pa_batch = pair
    for name in ("i", "s", "l"):
        assert list(batch[name]) == [v.as_py() for v in pa_batch.column(name)]


# -- take and filter ---------------------------------------------------------------------------
@pytest.mark.parametrize("indices", [[5, 0, 0, 2], [], [1, 2, 3], np.array([4, 4, 1]),
                                     [None, 3, None]])
def test_take_matches_pyarrow(pair, indices):
    _, batch, pa_batch = pair
    pa_indices = pa.array(indices, pa.int64())
    for name in DATA:
        _same(batch[name].take(indices), pa_batch.column(name).take(pa_indices))
        _same(batch[name].take(pa_indices), pa_batch.column(name).take(pa_indices))
    got, want = batch.take(indices), pa_batch.take(pa_indices)
    assert repr(got.to_pylist()) == repr(want.to_pylist())


def test_take_out_of_range_raises_like_pyarrow(pair):
    _, batch, pa_batch = pair
    for bad in ([6], [-1]):
        with pytest.raises(IndexError):
            pa_batch.column("i").take(pa.array(bad))
        with pytest.raises(IndexError, match="out of bounds"):
            batch["i"].take(bad)
        with pytest.raises(IndexError):
            batch.take(bad)
    with pytest.raises(arrowmm.ArrowInvalid, match="integers"):
        batch["i"].take(["a"])


def test_take_copies():
    a = arrowmm.array([1, 2, 3])
    assert not a.take([0, 1]).is_zero_copy


@pytest.mark.parametrize("mask", [
    [True, False, True, True, False, True],
    [None, True, False, None, True, True],
    [False] * 6,
])
def test_filter_matches_pyarrow(pair, mask):
    _, batch, pa_batch = pair
    pa_mask = pa.array(mask, pa.bool_())
    for name in DATA:
        want = pa_batch.column(name).filter(pa_mask)
        _same(batch[name].filter(pa_mask), want)  # a pyarrow mask, over the C data interface
        _same(batch[name].filter(arrowmm.array(pa_mask)), want)
        _same(batch[name].filter(mask), want)
        if None not in mask:
            _same(batch[name].filter(np.array(mask)), want)
    assert repr(batch.filter(pa_mask).to_pylist()) == repr(pa_batch.filter(pa_mask).to_pylist())


def test_filter_refuses_a_bad_mask(pair):
    _, batch, pa_batch = pair
    with pytest.raises(pa.ArrowInvalid):
        pa_batch.filter(pa.array([True]))
    with pytest.raises(arrowmm.ArrowInvalid, match="same length"):
        batch.filter(np.array([True]))
    with pytest.raises(arrowmm.ArrowInvalid, match="boolean"):
        batch["i"].filter(np.array([1, 0, 1, 0, 1, 0]))
    with pytest.raises(arrowmm.ArrowInvalid, match="boolean"):
        batch["i"].filter(arrowmm.array([1, 0, 1, 0, 1, 0]))


# -- columns -----------------------------------------------------------------------------------
def test_select_and_rename_columns(pair):
    _, batch, pa_batch = pair
    for cols in (["s", "i"], [2, 0], ["l"]):
        got, want = batch.select(cols), pa_batch.select(cols)
        assert got.schema.names == want.schema.names
        assert got == want
    with pytest.raises(KeyError):
        pa_batch.select(["nope"])
    with pytest.raises(KeyError):
        batch.select(["nope"])
    names = [n.upper() for n in DATA]
    assert batch.rename_columns(names).schema.names == pa_batch.rename_columns(names).schema.names
    assert batch.rename_columns(names) == pa_batch.rename_columns(names)
    mapping = {"i": "I", "s": "S"}
    assert batch.rename_columns(mapping).schema.names == pa_batch.rename_columns(mapping).schema.names
    with pytest.raises(pa.ArrowInvalid):
        pa_batch.rename_columns(["x"])
    with pytest.raises(arrowmm.ArrowInvalid, match="2 columns|8 columns"):
        batch.rename_columns(["x"])


def test_batch_rows(pair):
    _, batch, pa_batch = pair
    assert repr(batch.to_pylist()) == repr(pa_batch.to_pylist())


# -- repr --------------------------------------------------------------------------------------
def _body(text):
    """A repr without its first line (the class and address differ by library)."""
    return text.split("\n", 1)[1]


@pytest.mark.parametrize("values,typ", [
    (list(range(30)), pa.int64()),
    ([1, None, 3], pa.int32()),
    ([1.5, None, 1e20, 1e-7, 2.0, float("nan"), float("inf")], pa.float64()),
    (["a", None, "x\"y"], pa.string()),
    ([True, None, False], pa.bool_()),
    ([b"ab\x00", None], pa.binary()),
    ([], pa.int8()),
    ([[1, 2], None, []], pa.list_(pa.int64())),
])
def test_array_repr_lays_out_values_as_pyarrow(values, typ):
    theirs = pa.array(values, typ)
    ours = arrowmm.array(theirs)
    if pa.types.is_list(typ):  # nested values print on one line (pyarrow indents them)
        assert re.sub(r"\s+", "", _body(repr(ours))) == re.sub(r"\s+", "", _body(repr(theirs)))
    else:
        assert _body(repr(ours)) == _body(repr(theirs))
    assert repr(ours).startswith(f"<arrowmm.{type(ours).__name__} object at 0x")


def test_batch_repr_lays_out_columns_as_pyarrow():
    theirs = pa.record_batch({"x": list(range(30)), "s": ["a", None] * 15,
                              "f": [1.0, 2.5, float("nan")] * 10})
    ours = arrowmm.record_batch(theirs)
    assert _body(repr(ours)) == _body(repr(theirs))
    assert repr(ours).startswith("arrowmm.RecordBatch\n")


# -- readers -----------------------------------------------------------------------------------
def test_file_reader_is_subscriptable(pair):
    reader, _, pa_batch = pair
    assert len(reader) == reader.num_record_batches == 2
    assert reader[0] == pa_batch
    assert reader[-1] == pa_batch.slice(2)
    assert reader[1].num_rows == 4
    assert [b.num_rows for b in reader[:]] == [6, 4]
    assert [b.num_rows for b in reader[::-1]] == [4, 6]
    assert reader[5:] == []
    with pytest.raises(IndexError):
        reader[2]


# -- the README's section runs as written ------------------------------------------------------
def test_readme_values_section_runs(tmp_path, monkeypatch, capsys):
    readme = open(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "README.md"),
                  encoding="utf-8").read()
    start = readme.index("## Values: containers")
    section = readme[start:readme.index("\n## ", start + 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert "extension<arrow.uuid>" in capsys.readouterr().out


# -- a schema prints as pyarrow's -------------------------------------------------------------

PRINTED_SCHEMAS = {
    "nested and metadata": lambda: pa.schema(
        [pa.field("a", pa.struct([pa.field("x", pa.struct([("y", pa.struct([("z", pa.int8())]))]),
                                           metadata={"k": "v"})])),
         ("m", pa.map_(pa.string(), pa.int8())), ("r", pa.run_end_encoded(pa.int32(), pa.int8())),
         ("d", pa.dictionary(pa.int8(), pa.string())),
         pa.field("é", pa.int8(), False, metadata={"ü" * 3: "é" * 80, "short": "x"})],
        metadata={"s": "t" * 100, "k": "it's"}),
    "lists, unions, extensions": lambda: pa.schema(
        [("l", pa.list_(pa.field("item", pa.int8(), False, metadata={"a": "b"}))),
         ("u", pa.dense_union([pa.field("a", pa.int8()), pa.field("b", pa.string())])),
         ("t", pa.uuid()), ("fl", pa.list_(pa.uuid(), 2)),
         ("ft", pa.fixed_shape_tensor(pa.float32(), [2, 2]))]),
    "empty": lambda: pa.schema([]),
}


@pytest.mark.parametrize("name", sorted(PRINTED_SCHEMAS))
def test_schema_prints_as_pyarrows(name):
    theirs = PRINTED_SCHEMAS[name]()
    ours = arrowmm.read_schema(theirs.serialize())
    assert str(ours) == str(theirs)
    for kw in ({"show_field_metadata": False}, {"show_schema_metadata": False}):
        assert ours.to_string(**kw) == theirs.to_string(**kw), kw
    # (truncate_metadata=False: arrowmm prints every value whole; pyarrow 26 still cuts a line
    # past about 100 characters with "(... n chars omitted)")
    if name == "nested and metadata":
        assert "t" * 100 in ours.to_string(truncate_metadata=False)


def test_batch_repr_shows_the_schema_as_pyarrows_does():
    theirs = pa.record_batch([pa.array([1]), pa.array([{"a": 1}])], schema=pa.schema(
        [pa.field("x", pa.int64(), metadata={"q": "r"}), ("s", pa.struct([("a", pa.int64())]))],
        metadata={"a": "b"}))
    ours = arrowmm.record_batch(theirs)
    head = repr(theirs).split("----")[0].replace("pyarrow.", "arrowmm.")
    assert repr(ours).split("----")[0] == head  # (no metadata; children listed)
