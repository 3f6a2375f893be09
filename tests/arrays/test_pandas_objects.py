"""``to_pandas()`` of string and binary columns as pyarrow gives them: equal values share one
Python object (``deduplicate_objects``, on by default), ``categories=`` /
``strings_to_categorical=`` give Categoricals ordered as pyarrow's dictionary encoding, and
the Cython conversion behind it (``BinaryArray.to_objects``) checks what it reads."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid

pd = pytest.importorskip("pandas", reason="pandas is in the test extras; install them")


def words(n_rows: int, n_distinct: int, seed: int = 0, nulls: float = 0.1):
    rng = np.random.default_rng(seed)
    values = np.array([f"value-{i:06d}-{'x' * (i % 13)}" for i in range(n_distinct)], dtype=object)
    return pa.array(values[rng.integers(0, n_distinct, n_rows)], mask=rng.random(n_rows) < nulls)


@pytest.mark.parametrize("n_distinct", [1, 7, 1000, 50_000])
@pytest.mark.parametrize("large", [False, True])
def test_equal_strings_share_one_object(n_distinct, large):
    pa_arr = words(100_000, n_distinct)
    if large:
        pa_arr = pa_arr.cast(pa.large_string())
    got = arrowmm.array(pa_arr).to_objects()
    assert got.dtype == object and got.tolist() == pa_arr.to_pylist()
    first = {}
    for v in got:
        if v is not None:
            assert first.setdefault(v, v) is v  # every equal value is the same object
    assert len(first) <= n_distinct


def test_binary_slices_and_empty_values():
    pa_arr = pa.array([b"ab", b"", None, b"ab", b"\x00\xff", b""] * 50)
    arr = arrowmm.array(pa_arr)
    got = arr.to_objects()
    assert got.tolist() == pa_arr.to_pylist()
    assert got[0] is got[3] and isinstance(got[1], bytes)
    sliced = arr.slice(3, 100)
    assert sliced.to_objects().tolist() == pa_arr.slice(3, 100).to_pylist()
    assert arr.slice(0, 0).to_objects().tolist() == []


def test_without_deduplication_values_are_equal_but_not_shared():
    pa_arr = words(1000, 3, nulls=0)
    got = arrowmm.array(pa_arr).to_objects(deduplicate=False)
    assert got.tolist() == pa_arr.to_pylist()
    assert len({id(v) for v in got}) == 1000  # one object per row, as to_pylist gives


def test_invalid_utf8_is_refused_naming_the_value():
    good = pa.array(["ab", "cd", "ab"])
    validity, offsets, data = good.buffers()
    bad = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(b"ab\xff\xfeab")])
    with pytest.raises(ArrowInvalid, match=r"value\[1\].*UTF-8"):
        arrowmm.array(bad).to_objects()


def _table():
    rng = np.random.default_rng(3)
    n = 5000
    return pa.table({
        "s": words(n, 40, seed=1),
        "b": pa.array([None if i % 7 == 0 else bytes([i % 5]) * 3 for i in range(n)]),
        "i": pa.array(rng.integers(0, 9, n), mask=rng.random(n) < 0.1),
        "f": pa.array(rng.integers(0, 4, n) / 2.0),
        "d": pa.array(["p", "q", "r", "p"] * (n // 4)).dictionary_encode(),
    })


@pytest.mark.parametrize("options", [{}, {"deduplicate_objects": False},
                                     {"categories": ["s", "i", "f", "not-a-column"]},
                                     {"strings_to_categorical": True},
                                     {"strings_to_categorical": True, "categories": ["i"]}])
def test_to_pandas_options_match_pyarrow(tmp_path, options):
    table = _table()
    path = tmp_path / "t.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=2000)  # (several batches: chunks joined)
    expected = table.to_pandas(**options)
    with arrowmm.open_file(path) as r:
        got = r.to_pandas(**options)
        assert got.equals(expected)
        assert [str(d) for d in got.dtypes] == [str(d) for d in expected.dtypes]
        for c in got.columns:
            if isinstance(got[c].dtype, pd.CategoricalDtype):
                assert list(got[c].cat.categories) == list(expected[c].cat.categories)
        one = r.get_batch(0).to_pandas(**options)
        assert one.equals(table.to_batches(max_chunksize=2000)[0].to_pandas(**options))
    strings = got["s"].dropna() if not options.get("strings_to_categorical") and \
        "s" not in options.get("categories", ()) else None
    if strings is not None and options.get("deduplicate_objects", True):
        assert len({id(v) for v in strings}) <= 40
