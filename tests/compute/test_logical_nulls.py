"""``is null`` / ``is not null`` and the other null-aware predicates on columns whose nulls live
below their own validity bitmap: a dictionary index pointing at a null dictionary value, a
run-end encoded run whose value is null, a (sparse or dense) union slot whose child value is
null.  Such a value reads as None, so every filter calls it null (``Array.logical_validity``),
as pyarrow 26's ``compute.is_null`` and its dataset filters do.  Before, the filters read the
column's own bitmap alone: ``is null`` missed these rows and ``is not null`` (or the negation
of a comparison) returned them."""
from __future__ import annotations

import pytest

import arrowmm
from arrowmm import compute
from arrowmm.compute import field
from arrowmm.ipc.core.statistics import batch_statistics

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pds = pytest.importorskip("pyarrow.dataset")


def _columns():
    """Columns of six rows whose nulls sit below their own bitmap, by name (pyarrow)."""
    strings = pa.array(["a", None, "c", "a"])
    return {
        # indices [0, 1, 2, null, 1, 3]: rows 1 and 4 are null through the dictionary
        "d": pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None, 1, 3], pa.int8()), strings),
        "r": pa.RunEndEncodedArray.from_arrays(pa.array([2, 4, 6], pa.int32()),
                                               pa.array([1, None, 3], pa.int64())),
        "s": pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1, 0, 1], pa.int8()),
                                       [pa.array([1, None, 3, 4, None, 6]),
                                        pa.array(["a", "b", None, None, "e", "f"])]),
        "u": pa.UnionArray.from_dense(pa.array([0, 1, 0, 1, 0, 1], pa.int8()),
                                      pa.array([0, 0, 1, 1, 2, 2], pa.int32()),
                                      [pa.array([1, None, None]), pa.array([None, "b", "c"])]),
        # a union whose child is such a dictionary: the nulls two levels down
        "n": pa.UnionArray.from_sparse(pa.array([0, 0, 1, 0, 1, 0], pa.int8()),
                                       [pa.DictionaryArray.from_arrays(
                                           pa.array([1, 0, 0, 3, 0, None], pa.int8()), strings),
                                        pa.array([7, 8, None, 9, 10, 11])]),
    }


def _table():
    cols = _columns()
    return pa.table({**cols, "i": pa.array(range(1, 7), pa.int64())})


def _valid(array) -> list:
    """``logical_validity`` as a list of bools (None means every value is valid)."""
    mask = array.logical_validity()
    return [True] * len(array) if mask is None else mask.tolist()


def test_logical_validity_is_pyarrows_is_valid_and_the_values_none(tmp_path):
    # read from a file (mapped buffers, not only imported ones), whole and sliced
    path = tmp_path / "nulls.arrow"
    table = _table()
    with pa.ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    batch = arrowmm.open_file(str(path)).get_batch(0)
    for name, ref in _columns().items():
        column = batch.column(name)
        for start, length in ((0, 6), (1, 4), (3, 3), (5, 1), (2, 0)):
            got, want = column.slice(start, length), ref.slice(start, length)
            values = got.to_pylist()
            assert values == want.to_pylist(), name
            assert _valid(got) == [v is not None for v in values], (name, start, length)
            if name != "n":
                assert _valid(got) == pc.is_valid(want).to_pylist(), (name, start, length)
    # pyarrow 26's is_valid of a union reads its child's bitmap alone, so a union slot whose
    # child is a dictionary index pointing at a null value is "valid" there, though it reads
    # as None: arrowmm follows the values
    n = _columns()["n"]
    assert n.to_pylist() == [None, "a", None, "a", 10, None]
    assert pc.is_valid(n).to_pylist() == [True, True, False, True, True, False]
    for name, ref in _columns().items():  # (null_count: the bitmap's count, as pyarrow's)
        assert batch.column(name).null_count == ref.null_count, name
    plain = arrowmm.array([1, None, 3])
    assert _valid(plain) == [True, False, True]
    assert arrowmm.array([1, 2]).logical_validity() is None
    assert _valid(arrowmm.nulls(2)) == [False, False]


def _kept(table, expr) -> list:
    return compute.filter(table, expr).column("i").to_pylist()


def test_null_tests_and_negated_comparisons_keep_the_rows_pyarrow_keeps():
    table = arrowmm.table(_table())
    ref = _table().drop_columns(["r"])  # (pyarrow's filters have no kernel for run-end
    # encoded columns; for "n" it reads the union's child's bitmap alone, see above)
    for name, column in _columns().items():
        values = column.to_pylist()
        nulls = [i + 1 for i, v in enumerate(values) if v is None]
        others = [i + 1 for i, v in enumerate(values) if v is not None]
        assert _kept(table, field(name).is_null()) == nulls, name
        assert _kept(table, field(name).is_valid()) == others, name
        assert _kept(table, ~field(name).is_null()) == others, name
        if name not in ("r", "n"):
            assert ref.filter(pc.field(name).is_null()).column("i").to_pylist() == nulls, name
    # a comparison with a null value is null, and so is its negation: the row is dropped
    pyarrow_rows = ref.filter(~(pc.field("d") == "a")).column("i").to_pylist()
    assert _kept(table, ~(field("d") == "a")) == pyarrow_rows == [3]
    assert _kept(table, ~(field("r") == 1)) == [5, 6]  # (the values [1, 1, None, None, 3, 3])
    # ``in`` matches a null value when the set holds None, wherever the null lives
    pyarrow_rows = ref.filter(pc.field("d").isin(["c", None])).column("i").to_pylist()
    assert _kept(table, field("d").isin(["c", None])) == pyarrow_rows == [2, 3, 4, 5]
    assert _kept(table, field("r").isin([3, None])) == [3, 4, 5, 6]
    assert _kept(table, ~field("r").isin([3])) == [1, 2, 3, 4]


def test_dataset_filters_and_statistics_agree_with_the_values(tmp_path):
    # written by arrowmm with statistics: none are recorded for these columns (no entry, so
    # no ``nulls`` count that could disagree with the values), and the verdicts on the
    # plain column ``i`` still prune; the rows are those whose value reads as None
    path = tmp_path / "stats.arrow"
    table = arrowmm.table(_table())
    with arrowmm.new_file(str(path), table.schema, statistics=True) as w:
        for batch in table.to_batches():
            w.write(batch)
            w.write(batch.slice(2, 3))
    assert set(batch_statistics(table.to_batches()[0])) == {"i"}
    values = {name: table.column(name).to_pylist() for name in _columns()}
    ds = arrowmm.dataset(str(path))
    rows = [i for i in range(1, 7)] + [3, 4, 5]
    for name, vals in values.items():
        vals = vals + vals[2:5]
        nulls = [i for i, v in zip(rows, vals) if v is None]
        assert ds.to_table(filter=[(name, "is null")]).column("i").to_pylist() == nulls, name
        assert ds.count_rows(filter=[(name, "is not null")]) == len(rows) - len(nulls), name
        kept = ds.to_table(filter=[(name, "is not null"), ("i", ">=", 3)])
        assert kept.column("i").to_pylist() == [i for i, v in zip(rows, vals)
                                                if v is not None and i >= 3], name
        kept = ds.to_table(filter=field(name).is_null() & (field("i") > 5))
        assert kept.column("i").to_pylist() == [i for i, v in zip(rows, vals)
                                                if v is None and i > 5], name
    # pyarrow.dataset over the same file agrees for the dictionary column
    ref = pds.dataset(str(path), format="arrow")
    kept = ref.to_table(filter=pc.field("d").is_null(), columns=["i"])
    assert kept.column("i").to_pylist() == [2, 4, 5, 4, 5]


def test_drop_null_drops_the_values_that_read_as_none():
    # pyarrow 26's drop_null keeps them (it reads the bitmap alone, while its is_null says
    # they are null): arrowmm follows the values, as its filters do
    for name, ref in _columns().items():
        array = arrowmm.array(ref)
        want = [v for v in ref.to_pylist() if v is not None]
        assert array.drop_null().to_pylist() == want, name
    d = _columns()["d"]
    assert d.drop_null().to_pylist() == ["a", None, "c", None, "a"]  # (pyarrow's, kept)


def test_an_index_offset_or_type_id_pointing_nowhere_is_an_error_not_a_verdict():
    # (the null test now follows indices, union offsets and type ids: a damaged one raises,
    # naming it, where the bitmap alone gave an answer before)
    children = [pa.array([1, None]), pa.array([None, "b"])]
    damaged = {
        r"index\[1\]=7 out of range for dictionary of length 2":
            pa.DictionaryArray.from_arrays(pa.array([0, 7, None], pa.int8()),
                                           pa.array(["a", None]), safe=False),
        r"offset\[1\]=9 >= length 2 of the child":
            pa.UnionArray.from_dense(pa.array([0, 1], pa.int8()), pa.array([0, 9], pa.int32()),
                                     children),
        r"type_id\[1\]=5 is not a type code of the union":
            pa.UnionArray.from_sparse(pa.array([0, 5], pa.int8()), children),
    }
    for message, column in damaged.items():
        batch = arrowmm.record_batch(pa.record_batch({"c": column}))
        with pytest.raises(arrowmm.ArrowInvalid, match=message):
            compute.filter(batch, field("c").is_null())
