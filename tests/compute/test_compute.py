"""arrowmm.compute against pyarrow.compute: selection and take for every layout (with nulls,
offsets, empty and all-false / all-true masks), comparisons, Kleene logic, isin, is_null,
sort_by, Table.filter / take / tail, and the Expression object itself."""
from __future__ import annotations

import datetime
import decimal
import math
import pickle

import numpy as np
import pytest

import arrowmm
from arrowmm import compute
from arrowmm.compute import _kernels
from arrowmm.compute.predicate import evaluate
from arrowmm.compute.tables import batch_columns

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

RNG = np.random.default_rng(32)
N = 200


def _py(values):
    """Python values with NaN spelled so that it equals itself."""
    return ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in values]


def _same(mine, theirs):
    got = pa.array(mine)
    assert got.type == theirs.type
    assert _py(got.to_pylist()) == _py(theirs.to_pylist())


def _random_valid(n, p=0.2):
    return RNG.random(n) >= p


def _sample(dtype: pa.DataType, n: int = N) -> pa.Array:
    """``n`` random values of ``dtype``, about a fifth of them null."""
    valid = _random_valid(n)
    if pa.types.is_boolean(dtype):
        vals = (RNG.random(n) < 0.5).tolist()
    elif pa.types.is_integer(dtype):
        info = np.iinfo(dtype.to_pandas_dtype())
        vals = RNG.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).tolist()
    elif pa.types.is_floating(dtype):
        raw = RNG.normal(size=n)
        raw[RNG.random(n) < 0.05] = np.nan
        return pa.array(raw.astype(dtype.to_pandas_dtype()), dtype, mask=~valid)
    elif pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or \
            pa.types.is_string_view(dtype):
        vals = ["v%d" % RNG.integers(0, 30) * int(RNG.integers(0, 3)) for _ in range(n)]
    elif pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        vals = [bytes(RNG.integers(0, 256, RNG.integers(0, 6), dtype=np.uint8)) for _ in range(n)]
    elif pa.types.is_fixed_size_binary(dtype):
        vals = [bytes(RNG.integers(0, 256, dtype.byte_width, dtype=np.uint8)) for _ in range(n)]
    elif pa.types.is_date32(dtype):
        vals = [datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d))
                for d in RNG.integers(0, 100, n)]
    elif pa.types.is_date64(dtype):
        vals = [datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d))
                for d in RNG.integers(0, 100, n)]
    elif pa.types.is_timestamp(dtype):
        base = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc if dtype.tz else None)
        vals = [base + datetime.timedelta(seconds=int(s)) for s in RNG.integers(0, 1000, n)]
    elif pa.types.is_decimal(dtype):
        vals = [decimal.Decimal(int(v)) / 100 for v in RNG.integers(-10**6, 10**6, n)]
    elif pa.types.is_dictionary(dtype):
        return pa.array(["d%d" % v for v in RNG.integers(0, 5, n)], mask=~valid).dictionary_encode()
    elif pa.types.is_list(dtype):
        vals = [list(range(int(k))) for k in RNG.integers(0, 4, n)]
    elif pa.types.is_struct(dtype):
        vals = [{"a": int(v)} for v in RNG.integers(0, 9, n)]
    else:
        raise AssertionError(dtype)
    return pa.array([v if ok else None for v, ok in zip(vals, valid)], dtype)


TYPES = [pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
         pa.uint32(), pa.uint64(), pa.float32(), pa.float64(), pa.string(), pa.large_string(),
         pa.binary(), pa.large_binary(), pa.binary(3), pa.date32(), pa.date64(),
         pa.timestamp("us"), pa.timestamp("ns", tz="UTC"), pa.decimal128(12, 2),
         pa.dictionary(pa.int32(), pa.string()), pa.list_(pa.int32()),
         pa.struct([("a", pa.int64())]), pa.string_view()]


def _oracle(function, source, *args):
    """pyarrow's ``function`` of ``source`` (string views, which it has no kernel for here,
    through strings)."""
    if pa.types.is_string_view(source.type):
        return function(source.cast(pa.string()), *args).cast(source.type)
    return function(source, *args)


def _mask(n, kind):
    if kind == "all-true":
        return pa.array(np.ones(n, dtype=bool))
    if kind == "all-false":
        return pa.array(np.zeros(n, dtype=bool))
    return pa.array((RNG.random(n) < 0.4).tolist(), mask=~_random_valid(n, 0.1))


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@pytest.mark.parametrize("offset", [0, 3])
@pytest.mark.parametrize("kind", ["random", "all-true", "all-false"])
def test_filter_array_matches_pyarrow(dtype, offset, kind):
    source = _sample(dtype).slice(offset)  # (offset 3: bits that do not start at bit 0)
    mask = _mask(len(source), kind).slice(0)
    got = compute.filter(arrowmm.array(source), arrowmm.array(mask))
    _same(got, _oracle(pc.filter, source, mask))
    got.validate(full=True)


@pytest.mark.parametrize("dtype", TYPES, ids=str)
@pytest.mark.parametrize("offset", [0, 5])
def test_take_array_matches_pyarrow(dtype, offset):
    source = _sample(dtype).slice(offset)
    idx = RNG.integers(0, len(source), 300).tolist()
    idx[7] = None
    indices = pa.array(idx, pa.int64())
    got = compute.take(arrowmm.array(source), arrowmm.array(indices))
    _same(got, _oracle(pc.take, source, indices))
    got.validate(full=True)
    _same(compute.take(arrowmm.array(source), []),
          _oracle(pc.take, source, pa.array([], pa.int64())))


@pytest.mark.parametrize("dtype", [pa.int64(), pa.string(), pa.bool_()], ids=str)
def test_empty_arrays(dtype):
    empty = pa.array([], dtype)
    _same(compute.filter(arrowmm.array(empty), np.zeros(0, dtype=bool)), empty)
    _same(compute.take(arrowmm.array(empty), []), empty)


def test_take_out_of_range_and_mask_length_are_errors():
    a = arrowmm.array(pa.array([1, 2, 3]))
    with pytest.raises(IndexError):
        compute.take(a, [3])
    with pytest.raises(IndexError):
        compute.take(a, [-1])
    with pytest.raises(arrowmm.ArrowInvalid, match="same length"):
        compute.filter(a, [True])


def test_damaged_offsets_are_an_error_not_a_read_outside():
    """A string array whose offsets decrease or pass the data: ArrowInvalid naming the row."""
    offsets = np.array([0, 3, 1, 4], dtype=np.int32)
    data = np.frombuffer(b"abcd", dtype=np.uint8)
    mask = np.array([True, True, True])
    with pytest.raises(arrowmm.ArrowInvalid, match="row 1"):
        _kernels.filter_binary(offsets, data, mask, 3)
    with pytest.raises(arrowmm.ArrowInvalid, match="row 1"):
        _kernels.compare_binary(data, offsets, _kernels.EQ, np.frombuffer(b"a", np.uint8))
    with pytest.raises(arrowmm.ArrowInvalid, match="row 2"):
        _kernels.take_binary(np.array([0, 1, 2, 9], dtype=np.int64), data,
                             np.array([2], dtype=np.int64))
    with pytest.raises(arrowmm.ArrowInvalid, match="selects"):
        _kernels.filter_fixed(data, 0, 1, np.array([True, False, True, True]), 2)


# -- comparisons and logic ------------------------------------------------------------------------
OPS = {"==": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
       ">=": "greater_equal"}


def _evaluate(batch, expr):
    values, valid = evaluate(expr, batch_columns(batch), batch.num_rows)
    return [None if valid is not None and not ok else bool(v)
            for v, ok in zip(values, valid if valid is not None else [True] * len(values))]


def _compare(ref, op, value):
    return {"==": ref == value, "!=": ref != value, "<": ref < value, "<=": ref <= value,
            ">": ref > value, ">=": ref >= value}[op]


COMPARED = [
    (pa.int8(), [0, 5, -3, 2.5, -2.5, 127, 128, -129, 1e30, float("inf"), float("-inf"),
                 float("nan")]),
    (pa.uint8(), [0, 5, -1, 256, 254.5]),
    (pa.int64(), [0, 7, -7, 7.5, decimal.Decimal("3.5")]),
    (pa.uint64(), [0, 500, -1]),
    (pa.float32(), [0, 0.5, -0.25, float("nan"), float("inf")]),
    (pa.float64(), [0.1, -1, float("nan")]),
    (pa.bool_(), [True, False]),
    (pa.string(), ["v1", "", "v3v3", "zz"]),
    (pa.large_string(), ["v2", "v2v2"]),
    (pa.binary(), [b"", b"\x80", b"\x00\x01"]),
    (pa.date32(), [datetime.date(2000, 1, 20)]),
    (pa.date64(), [datetime.date(2000, 2, 1)]),
    (pa.timestamp("us"), [datetime.datetime(2020, 1, 1, 0, 5)]),
    (pa.timestamp("ns", tz="UTC"), [datetime.datetime(2020, 1, 1, 0, 5,
                                                      tzinfo=datetime.timezone.utc)]),
    (pa.dictionary(pa.int32(), pa.string()), ["d1", "d3"]),
    (pa.decimal128(12, 2), [decimal.Decimal("1.5")]),
]


def _expected_compare(column: pa.Array, op: str, value):
    """pyarrow's answer; for an integer column against a number it cannot hold exactly (a
    fraction, out of range, NaN, infinite), Python's exact answer (pyarrow casts both to double,
    or refuses)."""
    if pa.types.is_integer(column.type):
        info = np.iinfo(column.type.to_pandas_dtype())
        if not isinstance(value, int) or not info.min <= value <= info.max:
            f = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
                 "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
                 ">=": lambda a, b: a >= b}[op]
            return [None if v is None else bool(f(v, value)) for v in column.to_pylist()]
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return getattr(pc, OPS[op])(column, pa.scalar(value, column.type)).to_pylist()


@pytest.mark.parametrize("dtype,values", COMPARED, ids=[str(t) for t, _ in COMPARED])
@pytest.mark.parametrize("op", list(OPS))
def test_comparisons_match_pyarrow(dtype, values, op):
    column = _sample(dtype).slice(1)
    batch = arrowmm.record_batch({"c": arrowmm.array(column)})
    for value in values:
        got = _evaluate(batch, _compare(arrowmm.field("c"), op, value))
        assert got == _expected_compare(column, op, value), (op, value)


def test_comparison_with_null_is_null_and_drops_the_row():
    batch = arrowmm.record_batch({"c": arrowmm.array(pa.array([1, None, 3]))})
    assert _evaluate(batch, arrowmm.field("c") > None) == [None, None, None]
    t = arrowmm.Table.from_batches([batch])
    assert t.filter(arrowmm.field("c") == None).num_rows == 0  # noqa: E711


def test_kleene_logic_matches_pyarrow():
    a = pa.array([True, False, None] * 3)
    b = pa.array([True] * 3 + [False] * 3 + [None] * 3)
    batch = arrowmm.record_batch({"a": arrowmm.array(a), "b": arrowmm.array(b)})
    f = arrowmm.field
    assert _evaluate(batch, f("a") & f("b")) == pc.and_kleene(a, b).to_pylist()
    assert _evaluate(batch, f("a") | f("b")) == pc.or_kleene(a, b).to_pylist()
    assert _evaluate(batch, ~f("a")) == pc.invert(a).to_pylist()
    assert _evaluate(batch, f("a").is_null()) == pc.is_null(a).to_pylist()
    assert _evaluate(batch, f("a").is_valid()) == pc.is_valid(a).to_pylist()


@pytest.mark.parametrize("dtype,value_set", [
    (pa.int64(), [1, 5, None, 2.0, 2.5, 10**30]), (pa.int16(), [3, -3]),
    (pa.float64(), [0.5, float("nan")]), (pa.string(), ["v1", "", None]),
    (pa.binary(), [b""]), (pa.bool_(), [True]),
    (pa.date32(), [datetime.date(2000, 1, 3)]), (pa.timestamp("us"), [datetime.datetime(2020, 1, 1)]),
    (pa.dictionary(pa.int32(), pa.string()), ["d1", None]), (pa.large_string(), [])])
def test_isin_matches_pyarrow(dtype, value_set):
    column = _sample(dtype).slice(2)
    batch = arrowmm.record_batch({"c": arrowmm.array(column)})
    got = _evaluate(batch, arrowmm.field("c").isin(value_set))
    plain = column.cast(dtype.value_type) if pa.types.is_dictionary(dtype) else column
    exact = [v for v in value_set if not pa.types.is_integer(dtype) or v is None or
             (v == int(v) and abs(v) < 2**63)]  # (pyarrow refuses the others; none matches)
    expected = pc.is_in(plain, value_set=pa.array(exact, plain.type)).to_pylist()
    assert got == expected


def test_a_mistyped_value_is_an_error_naming_the_column():
    t = arrowmm.Table.from_batches([arrowmm.record_batch({"n": [1, 2], "s": ["a", "b"]})])
    with pytest.raises(arrowmm.ArrowInvalid, match="'n'.*int64.*number"):
        t.filter(arrowmm.field("n") > "1")
    with pytest.raises(arrowmm.ArrowInvalid, match="'s'.*string.*str"):
        t.filter(arrowmm.field("s").isin([1]))
    with pytest.raises(arrowmm.ArrowInvalid, match="not in the table"):
        t.filter(arrowmm.field("zz") > 1)
    with pytest.raises(arrowmm.ArrowInvalid, match="not bool"):
        t.filter(arrowmm.field("n"))


# -- tables ---------------------------------------------------------------------------------------
def _two_batch_table():
    n = 60
    data = {"i": _sample(pa.int32(), n), "f": _sample(pa.float64(), n),
            "s": _sample(pa.string(), n), "b": _sample(pa.bool_(), n),
            "l": _sample(pa.list_(pa.int32()), n)}
    theirs = pa.table(data)
    batches = [arrowmm.record_batch(theirs.slice(0, 25).to_batches()[0]),
               arrowmm.record_batch(theirs.slice(25).combine_chunks().to_batches()[0])]
    return arrowmm.Table.from_batches(batches), theirs


def _same_table(mine, theirs):
    got = pa.table(mine)
    assert got.schema == theirs.schema
    assert {k: _py(v) for k, v in got.to_pydict().items()} == \
        {k: _py(v) for k, v in theirs.to_pydict().items()}


def test_table_filter_by_expression_and_by_masks():
    mine, theirs = _two_batch_table()
    expr_pa = (pc.field("i") > 10) | pc.field("s").isin(["v1", "v2v2"]) & ~pc.field("b")
    expr = (arrowmm.field("i") > 10) | arrowmm.field("s").isin(["v1", "v2v2"]) & \
        ~arrowmm.field("b")
    _same_table(mine.filter(expr), theirs.filter(expr_pa))
    mask = _mask(len(theirs), "random")
    _same_table(mine.filter(mask), theirs.filter(mask))  # (a pyarrow array)
    _same_table(mine.filter(arrowmm.array(mask)), theirs.filter(mask))
    chunked = pa.chunked_array([mask.slice(0, 10), mask.slice(10)])
    _same_table(mine.filter(arrowmm.ChunkedArray([arrowmm.array(c) for c in chunked.chunks],
                                                 arrowmm.bool_())), theirs.filter(chunked))
    _same_table(mine.filter(np.zeros(len(theirs), dtype=bool)), theirs.slice(0, 0))
    assert mine.filter(np.ones(len(theirs), dtype=bool)).to_batches()[0] is mine.to_batches()[0]


def test_table_take_tail_and_sort_by():
    mine, theirs = _two_batch_table()
    idx = [0, 59, 30, None, 24, 25]
    _same_table(mine.take(idx), theirs.take(pa.array(idx, pa.int64())))
    _same_table(mine.tail(7), theirs.slice(len(theirs) - 7))
    _same_table(mine.tail(100), theirs)
    _same_table(mine.tail(0), theirs.slice(0, 0))
    for keys in ["i", [("f", "descending")], [("s", "ascending"), ("i", "descending")],
                 [("b", "descending"), ("f", "ascending")]]:
        _same_table(mine.sort_by(keys), theirs.sort_by(keys))
        assert compute.sort_indices(mine, keys if not isinstance(keys, str)
                                    else [(keys, "ascending")]).to_pylist() == \
            pc.sort_indices(theirs, sort_keys=keys if not isinstance(keys, str)
                            else [(keys, "ascending")]).to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="order"):
        mine.sort_by([("i", "up")])
    with pytest.raises(arrowmm.ArrowInvalid, match="sort key 'nope' is not a column"):
        mine.sort_by("nope")  # (pyarrow's ArrowInvalid: "Invalid sort key column")
    with pytest.raises(arrowmm.ArrowTypeError, match="'l'"):  # (pyarrow's, review 22: F5)
        mine.sort_by("l")


def test_batch_filter_keeps_extension_and_dictionary_columns():
    theirs = pa.table({"d": _sample(pa.dictionary(pa.int32(), pa.string()), 50),
                       "u": pa.array([bytes([i]) * 16 for i in range(50)], pa.uuid())})
    batch = arrowmm.record_batch(theirs.to_batches()[0])
    mask = _mask(50, "random")
    got = compute.filter(batch, arrowmm.array(mask))
    expected = theirs.filter(mask)
    assert pa.table(arrowmm.Table.from_batches([got])).equals(expected)


# -- the expression object ------------------------------------------------------------------------
def test_field_makes_a_field_with_a_type_and_a_reference_without():
    f = arrowmm.field("x", arrowmm.int32(), nullable=False)
    assert isinstance(f, arrowmm.Field) and f.type == arrowmm.int32() and not f.nullable
    e = arrowmm.field("x")
    assert isinstance(e, arrowmm.Expression) and compute.field("x").equals(e)
    with pytest.raises(arrowmm.ArrowInvalid, match="need a type"):
        arrowmm.field("x", nullable=False)


def test_expression_is_immutable_and_has_no_truth_value():
    e = (arrowmm.field("x") > 3) & arrowmm.field("y").isin([1, 2])
    assert str(e) == "((x > 3) and is_in(y, [1, 2]))"
    with pytest.raises(ValueError, match="no truth value"):
        bool(e)
    with pytest.raises(ValueError):
        1 < arrowmm.field("x") < 3  # noqa: B015  (Python's chained comparison uses bool)
    with pytest.raises(AttributeError):
        e.kind = "or"
    with pytest.raises(TypeError):
        hash(e)
    assert pickle.loads(pickle.dumps(e)).equals(e)
    assert not e.equals(arrowmm.field("x") > 3)
    assert (3 < arrowmm.field("x")).equals(arrowmm.field("x") > 3)
    assert e.field_names() == ["x", "y"]
    with pytest.raises(arrowmm.ArrowNotImplementedError):
        arrowmm.field("x") > arrowmm.field("y")
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.field("x") > [1]
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.field("x").isin("abc")


def test_docstring_examples_run():
    import doctest

    from arrowmm.compute import expression
    failed, attempted = doctest.testmod(expression)
    assert attempted > 0 and failed == 0
