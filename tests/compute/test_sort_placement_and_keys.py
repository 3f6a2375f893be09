"""Sorting as pyarrow 26 sorts (review 18: 4-6): an array's sort key gives its order, nulls go
``at_start`` or ``at_end`` (per key, or ``null_placement`` for all), and a sort key that is no
column raises ArrowInvalid naming it."""
from __future__ import annotations

import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm import compute as ac

NAN = float("nan")
COLUMNS = {
    "floats": pa.array([3.0, None, 1.0, NAN, 2.0, None, NAN, 1.0]),
    "ints": pa.array([3, None, 1, 7, 2, None, 5, 1]),
    "strings": pa.array(["c", None, "a", "é", "b", None, "", "a"]),
    "dictionary": pa.array([3.0, None, 1.0, NAN, 2.0, None, NAN, 1.0]).dictionary_encode(),
    "struct": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}, {"a": 1, "b": None},
                        {"a": 0, "b": "z"}, {"a": 1, "b": "x"}, None, {"a": 2, "b": "w"}]),
}
KEYS = [(order, placement) for order in ("ascending", "descending")
        for placement in ("at_start", "at_end")]


def _pa_sort(data, *args, **kwargs):
    with warnings.catch_warnings():  # (pyarrow 25+ warns of null_placement beside the keys)
        warnings.simplefilter("ignore", FutureWarning)
        return pc.sort_indices(data, *args, **kwargs).to_pylist()


@pytest.mark.parametrize("order,placement", KEYS)
@pytest.mark.parametrize("name", COLUMNS)
def test_an_arrays_first_key_gives_order_and_placement(name, order, placement):
    column = COLUMNS[name]
    key = "b" if name == "struct" else "x"  # (a struct array's keys name its fields)
    expected = _pa_sort(column, [(key, order, placement)])
    assert ac.sort_indices(arrowmm.array(column), [(key, order, placement)]).to_pylist() == \
        expected
    chunked = arrowmm.chunked_array([arrowmm.array(column.slice(0, 3)),
                                     arrowmm.array(column.slice(3))])
    assert ac.sort_indices(chunked, [(key, order, placement)]).to_pylist() == expected
    assert ac.sort_indices(arrowmm.array(column), [(key, order)],
                           null_placement=placement).to_pylist() == expected


@pytest.mark.parametrize("order,placement", KEYS)
@pytest.mark.parametrize("name", ["floats", "ints", "strings", "struct"])
def test_tables_and_batches_sort_as_pyarrow_with_a_null_placement(name, order, placement):
    # (no dictionary: pyarrow's table sorts refuse them)
    table = pa.table({"k": COLUMNS[name], "i": pa.array(range(8))})
    ours = arrowmm.table(table)
    keys = [("k", order, placement), ("i", "descending")]
    expected = _pa_sort(table, keys)
    assert ac.sort_indices(ours, keys).to_pylist() == expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        by_option = table.sort_by([("k", order)], null_placement=placement)["i"].to_pylist()
    assert ours.sort_by([("k", order)], null_placement=placement).column("i").to_pylist() == \
        by_option
    batch = ours.to_batches()[0]
    assert batch.sort_by([("k", order)], null_placement=placement).column("i").to_pylist() == \
        by_option


def test_null_placement_overrides_every_keys():
    table = pa.table({"x": COLUMNS["floats"], "y": COLUMNS["ints"]})
    keys = [("x", "ascending", "at_start"), ("y", "descending", "at_end")]
    expected = _pa_sort(table, keys, null_placement="at_end")
    assert ac.sort_indices(arrowmm.table(table), keys, null_placement="at_end").to_pylist() == \
        expected
    assert expected != _pa_sort(table, keys)  # (the override changes the order)


def test_the_pyarrow_answers_differ_by_order_and_placement():
    # (a sort that ignored the order or the placement fails some row above)
    answers = {key: _pa_sort(COLUMNS["floats"], [("x",) + key]) for key in KEYS}
    assert len({tuple(v) for v in answers.values()}) == 4


@pytest.mark.parametrize("call", [
    lambda t: t.sort_by("zz"),
    lambda t: t.sort_by([("zz", "descending")]),
    lambda t: t.to_batches()[0].sort_by("zz"),
    lambda t: ac.sort_indices(t, [("zz", "ascending")]),
])
def test_a_sort_key_that_is_no_column_raises_arrow_invalid_naming_it(call):
    table = arrowmm.table({"x": [2, 1]})
    with pytest.raises(ArrowInvalid, match=r"sort key 'zz' is not a column; the columns are "
                                           r"\['x'\]"):
        call(table)


def test_a_sort_key_naming_two_columns_raises_arrow_invalid():
    table = arrowmm.table(pa.table([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"]))
    with pytest.raises(ArrowInvalid, match="sort key 'x' names 2 columns"):
        table.sort_by("x")


def test_a_struct_arrays_keys_name_its_fields():
    column = COLUMNS["struct"]
    keys = [("b", "descending"), ("a", "ascending", "at_start")]
    assert ac.sort_indices(arrowmm.array(column), keys).to_pylist() == _pa_sort(column, keys)
    with pytest.raises(ArrowInvalid, match="sort key 'x' is not a column; the columns are "):
        ac.sort_indices(arrowmm.array(column), [("x", "ascending")])


@pytest.mark.parametrize("keys,kwargs,match", [
    ("descending", {}, "expected a list of"),
    ([("x", "ascending", "first")], {}, "null placement 'first'"),
    ([("x", "ascending")], {"null_placement": "first"}, "null_placement 'first'"),
])
def test_bad_keys_of_an_array_raise_arrow_invalid(keys, kwargs, match):
    with pytest.raises(ArrowInvalid, match=match):
        ac.sort_indices(arrowmm.array([2, 1]), keys, **kwargs)
