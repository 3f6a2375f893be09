"""``sort_by`` on dictionary-encoded keys against pyarrow's ``RecordBatch.sort_by``: rows in
the order of their values (not of their indices), a null index or a null value last, NaN as
pyarrow ranks a dictionary's values, alone or with other keys, sliced, and a table whose
batches have dictionaries of their own."""
from __future__ import annotations

import numpy as np
import pytest

import arrowmm

pa = pytest.importorskip("pyarrow")

RNG = np.random.default_rng(3207)
N = 301


def _dictionary_column(kind: str, n: int):
    """Indices in an order unlike the values' (so sorting by index would be wrong), some
    null, into a dictionary with a null value."""
    if kind == "string":
        values = pa.array(["pear", "apple", None, "fig", "kiwi", "banana"])
    elif kind == "int":
        values = pa.array([40, -3, None, 7, 0, 12], pa.int64())
    else:
        values = pa.array([2.5, float("nan"), None, -1.0, 0.0, float("inf")])
    indices = pa.array(RNG.integers(0, len(values), n), pa.int16(),
                       mask=RNG.random(n) < 0.1)
    return pa.DictionaryArray.from_arrays(indices, values)


def _batch(kind: str, n: int = N):
    return pa.record_batch({"d": _dictionary_column(kind, n),
                            "k": pa.array(RNG.integers(0, 3, n)),
                            "row": pa.array(np.arange(n))})


@pytest.mark.parametrize("kind", ["string", "int", "float"])
@pytest.mark.parametrize("order", ["ascending", "descending"])
@pytest.mark.parametrize("offset", [0, 7])
def test_a_dictionary_key_sorts_as_pyarrow_sorts_it(kind, order, offset):
    batch = _batch(kind).slice(offset)
    got = pa.record_batch(arrowmm.record_batch(batch).sort_by([("d", order)]))
    want = batch.sort_by([("d", order)])
    assert got.column("row").to_pylist() == want.column("row").to_pylist()
    assert got.column("d").indices.equals(want.column("d").indices)
    assert str(got.column("d").dictionary.to_pylist()) == \
        str(want.column("d").dictionary.to_pylist())  # (str: NaN == NaN)


@pytest.mark.parametrize("keys", [[("k", "ascending"), ("d", "descending")],
                                  [("d", "ascending"), ("k", "descending")]])
def test_a_dictionary_key_among_others_sorts_by_its_values(keys):
    """pyarrow's RecordBatch.sort_by refuses a dictionary among several keys
    (ArrowTypeError); arrowmm sorts it by its values: the oracle is the decoded column."""
    batch = _batch("string")
    plain = batch.set_column(0, "d", batch.column("d").cast(pa.string()))
    got = pa.record_batch(arrowmm.record_batch(batch).sort_by(keys))
    assert got.column("row").to_pylist() == plain.sort_by(keys).column("row").to_pylist()


def test_a_table_of_batches_with_their_own_dictionaries_sorts_by_the_values():
    """pyarrow's Table.sort_by refuses a dictionary key (ArrowNotImplementedError); its
    batches sort by value, and so does arrowmm's table: the oracle is the decoded column."""
    parts = [pa.array(["x", "a", None, "x"]).dictionary_encode(),
             pa.array(["b", "a", "zz", None, "b"]).dictionary_encode()]
    batches = [pa.record_batch({"d": p, "row": pa.array(range(10 * i, 10 * i + len(p)))})
               for i, p in enumerate(parts)]
    table = pa.Table.from_batches(batches)
    got = arrowmm.Table.from_batches([arrowmm.record_batch(b) for b in batches]).sort_by(
        [("d", "descending")])
    plain = table.set_column(0, "d", table.column("d").cast(pa.string()))
    want = plain.sort_by([("d", "descending")])
    assert pa.table(got).column("row").to_pylist() == want.column("row").to_pylist()
    assert pa.table(got).column("d").cast(pa.string()).to_pylist() == \
        want.column("d").to_pylist()


def test_a_dictionary_index_outside_its_dictionary_is_an_error():
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 5, 1], pa.int8()), pa.array(["a", "b"]),
                                         safe=False)
    batch = arrowmm.record_batch(pa.record_batch({"d": bad}))
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"'d'.*index\[1\]=5 out of range for dictionary of length 2"):
        batch.sort_by("d")
