"""``arrowmm.dataset`` (issue 18, item 3): every answer compared with pyarrow.dataset on the
same files (schema, files, columns, filters, partition values, row order)."""
import datetime
import itertools
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

import arrowmm
from arrowmm import ArrowInvalid, ArrowNotImplementedError
from arrowmm.dataset.filters import Term, statistics_allow, statistics_verdicts
from arrowmm.dataset.scan import promotable
from tests.support.helpers import in_a_forked_child

SCHEMA = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.string()),
                         ("f", arrowmm.float64()), ("ts", arrowmm.timestamp("us")),
                         ("d", arrowmm.date32())])
PARTS = ["year=2020/city=paris", "year=2020/city=new%20york", "year=2021/city=paris",
         "year=2021/city=__HIVE_DEFAULT_PARTITION__", "year=10/city=oslo"]


def _rows(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, n)
    return {
        "x": [None if k % 7 == 3 else int(v) for k, v in enumerate(x)],
        "s": [None if k % 5 == 1 else f"s{int(v) % 13:02d}" for k, v in enumerate(x)],
        "f": [float("nan") if k % 11 == 4 else float(v) / 4 for k, v in enumerate(x)],
        "ts": [None if k % 9 == 2 else datetime.datetime(2024, 1, 1) + datetime.timedelta(
            hours=int(v)) for k, v in enumerate(x)],
        "d": [datetime.date(2024, 1, 1) + datetime.timedelta(days=int(v)) for v in x],
    }


@pytest.fixture
def hive(tmp_path):
    root = tmp_path / "data"
    for p, part in enumerate(PARTS):
        folder = root / part
        folder.mkdir(parents=True)
        for f in range(2):
            with arrowmm.new_file(str(folder / f"part-{f}.arrow"), SCHEMA, statistics=True) as w:
                for b in range(3):
                    w.write(_rows(100 * p + 10 * f + b, 8 + b))
    return str(root)


def _same(got, want):
    """arrowmm's table (or dataset) equals pyarrow's: schema, rows and order (NaN == NaN,
    which pyarrow's own ``equals`` denies)."""
    got = pa.table(got)
    assert got.schema.equals(want.schema), (got.schema, want.schema)
    nan = object()
    fix = lambda rows: [{k: nan if isinstance(v, float) and v != v else v for k, v in r.items()}
                        for r in rows]
    a, b = fix(got.to_pylist()), fix(want.to_pylist())
    assert len(a) == len(b)
    assert a == b
    return True


def _theirs(root, **kw):
    return pads.dataset(root, format="ipc", partitioning="hive", **kw)


def test_schema_files_and_full_scan_match_pyarrow(hive):
    mine, theirs = arrowmm.dataset(hive, partitioning="hive"), _theirs(hive)
    assert pa.schema(mine.schema).equals(theirs.schema)
    assert mine.files == theirs.files
    assert _same(mine.to_table(), theirs.to_table())
    assert _same(mine, theirs.to_table())  # the dataset's own C stream
    assert mine.count_rows() == theirs.count_rows() == 5 * 2 * (8 + 9 + 10)
    assert _same(mine.head(20, columns=["city", "x"]), theirs.head(20, columns=["city", "x"]))


FILTERS = [
    [("x", ">", 10)],
    [("x", "<=", -3), ("year", "==", 2020)],
    [("city", "in", ["paris", "oslo"]), ("s", "!=", "s03")],
    [("city", "not in", ["paris"])],
    [("x", "not in", [1, 2, 3, -4])],
    [("x", "in", [1, 2, 3, -4])],
    [[("x", "==", 7)], [("city", "=", "new york"), ("f", ">=", 2.5)]],
    [("s", ">=", "s05"), ("s", "<", "s09")],
    [("f", "<", 0.0)],
    [("f", "!=", 1.0)],
    [("ts", ">", datetime.datetime(2024, 1, 2, 3))],
    [("ts", "<=", datetime.datetime(2023, 12, 31, 20, 30))],
    [("d", "==", datetime.date(2024, 1, 5))],
    [("d", "in", [datetime.date(2024, 1, 5), datetime.date(2023, 12, 1)])],
    [("year", ">", 100)],
    [("x", ">", 1000)],
    [("x", "==", 2.5)],
    [("x", "<", 2.5)],
]


@pytest.mark.parametrize("flt", FILTERS, ids=str)
def test_filters_match_pyarrow(hive, flt):
    mine, theirs = arrowmm.dataset(hive, partitioning="hive"), _theirs(hive)
    expr = pq.filters_to_expression(flt)
    want = theirs.to_table(filter=expr)
    got = mine.to_table(filter=flt)
    assert _same(got, want)
    assert mine.count_rows(filter=flt) == theirs.count_rows(filter=expr) == want.num_rows
    cols = ["city", "f", "x"]
    assert _same(mine.to_table(columns=cols, filter=flt), theirs.to_table(columns=cols, filter=expr))


@pytest.mark.parametrize("op,column", [("is null", "x"), ("is not null", "s"),
                                       ("is null", "city"), ("is not null", "ts")])
def test_null_tests_match_pyarrow(hive, op, column):
    mine, theirs = arrowmm.dataset(hive, partitioning="hive"), _theirs(hive)
    expr = pc.field(column).is_null() if op == "is null" else pc.field(column).is_valid()
    assert _same(mine.to_table(filter=[(column, op)]), theirs.to_table(filter=expr))


def test_partition_values_prune_files_unopened(hive):
    # a file in a pruned partition is never opened: damage one and filter it away
    victim = os.path.join(hive, "year=2021", "city=paris", "part-0.arrow")
    with open(victim, "r+b") as f:
        f.truncate(100)  # (its footer gone: opening it fails)
    ds = arrowmm.dataset(hive, partitioning="hive")
    got = ds.to_table(filter=[("year", "==", 2020)])
    want = _theirs(hive).to_table(filter=pc.field("year") == 2020)
    assert got.num_rows > 0 and _same(got, want)
    with pytest.raises(ArrowInvalid):
        ds.to_table()  # (the damaged file is read when nothing rules it out)


def test_statistics_prune_batches_unread(tmp_path):
    path = str(tmp_path / "s.arrow")
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())]), statistics=True) as w:
        for b in range(3):
            w.write({"x": list(range(10 * b, 10 * b + 10))})
    data = bytearray(open(path, "rb").read())
    first = np.arange(10, dtype="<i8").tobytes()
    at = bytes(data).index(first)
    data[at:at + len(first)] = np.full(10, 25, dtype="<i8").tobytes()  # batch 0 now lies
    with open(path, "wb") as f:
        f.write(data)
    ds = arrowmm.dataset(path)
    # the footer says batch 0 holds 0..9, so it is skipped unread: its (false) 25s never show
    assert ds.to_table(filter=[("x", ">=", 20)]).column("x").to_pylist() == list(range(20, 30))
    assert ds.count_rows(filter=[("x", ">=", 20)]) == 10
    # read without a filter, the damaged values do show (the test really damaged batch 0)
    assert ds.to_table().column("x").to_pylist()[:10] == [25] * 10


def test_to_batches_is_lazy_and_in_order(hive):
    ds = arrowmm.dataset(hive, partitioning="hive")
    it = ds.to_batches(columns=["x"])
    first = next(it)
    assert first.schema.names == ["x"] and first.num_rows == 8
    rest = list(it)
    assert sum(b.num_rows for b in [first] + rest) == ds.count_rows()
    theirs = _theirs(hive).to_table(columns=["x"]).column("x").to_pylist()
    assert [v for b in [first] + rest for v in b.column("x").to_pylist()] == theirs


def test_sources_file_glob_and_list(hive):
    files = arrowmm.dataset(hive).files
    one = arrowmm.dataset(files[0])
    assert one.files == [files[0]] and one.schema.names == SCHEMA.names
    assert _same(one.to_table(), pads.dataset(files[0], format="ipc").to_table())
    listed = arrowmm.dataset(files[:3])
    assert listed.files == files[:3]
    assert listed.count_rows() == pads.dataset(files[:3], format="ipc").count_rows()
    globbed = arrowmm.dataset(os.path.join(hive, "year=2020", "*", "part-1.arrow"))
    assert globbed.files == sorted(f for f in files if "year=2020" in f and f.endswith("-1.arrow"))
    with pytest.raises(FileNotFoundError):
        arrowmm.dataset(os.path.join(hive, "missing"))
    with pytest.raises(ArrowInvalid, match="matches no file"):
        arrowmm.dataset(os.path.join(hive, "*.nothing"))


def _write(path, data, schema=None):
    table = pa.table(data, schema=schema)
    with pa.ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)


def test_spark_manifests_are_honoured(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("a.arrow", "b.arrow", "uncommitted.arrow"):
        _write(out / name, {"x": [len(name)]})
    (out / "_SUCCESS").write_text(json.dumps({"files": ["a.arrow", "b.arrow"]}))
    ds = arrowmm.dataset(str(out))
    assert [os.path.basename(f) for f in ds.files] == ["a.arrow", "b.arrow"]
    assert ds.count_rows() == 2
    log = out / "_arrowmm_log"
    log.mkdir()
    (log / f"{1:020d}.json").write_text(json.dumps(
        {"format": "arrowmm-manifest/1", "version": 1, "files": ["b.arrow"]}))
    ds = arrowmm.dataset(str(out))  # the log's latest version wins over _SUCCESS
    assert [os.path.basename(f) for f in ds.files] == ["b.arrow"]
    assert ds.to_table().to_pydict() == {"x": [7]}
    # a manifest below a walked folder is honoured too
    assert [os.path.basename(f) for f in arrowmm.dataset(str(tmp_path)).files] == ["b.arrow"]


def test_schemas_unified_or_refused(tmp_path):
    _write(tmp_path / "0.arrow", {"x": [1, 2], "y": ["a", "b"]})
    _write(tmp_path / "1.arrow", {"x": [3]})  # y missing: nulls, as pyarrow fills it
    got = arrowmm.dataset(str(tmp_path)).to_table()
    assert pa.table(got).equals(pads.dataset(str(tmp_path), format="ipc").to_table())
    assert got.to_pydict() == {"x": [1, 2, 3], "y": ["a", "b", None]}
    # a narrower integer is promoted, as pyarrow.dataset casts it
    _write(tmp_path / "2.arrow", {"x": pa.array([4, None], pa.int32()), "y": ["c", "d"]})
    got = arrowmm.dataset(str(tmp_path)).to_table(filter=[("x", ">", 2)])
    assert _same(got, pads.dataset(str(tmp_path), format="ipc").to_table(
        filter=pc.field("x") > 2))
    assert got.to_pydict() == {"x": [3, 4], "y": [None, "c"]}
    _write(tmp_path / "3.arrow", {"x": ["oops"], "y": ["e"]})
    with pytest.raises(ArrowInvalid, match=r"3\.arrow.*'x' is string.*int64"):
        arrowmm.dataset(str(tmp_path)).to_table()
    only = arrowmm.dataset(str(tmp_path), schema=arrowmm.schema([("y", arrowmm.string())]))
    assert only.to_table().to_pydict() == {"y": ["a", "b", None, "c", "d", "e"]}
    strict = arrowmm.schema([arrowmm.field("z", arrowmm.int64(), nullable=False)])
    with pytest.raises(ArrowInvalid, match="no column 'z'"):
        arrowmm.dataset(str(tmp_path), schema=strict).to_table()


def test_bad_arguments_are_arrow_invalid(hive):
    ds = arrowmm.dataset(hive, partitioning="hive")
    with pytest.raises(ArrowInvalid, match=r"no column named 'nope'"):
        ds.to_table(columns=["x", "nope"])
    with pytest.raises(ArrowInvalid, match=r"no column named 'nope'"):
        ds.to_table(filter=[("nope", "==", 1)])
    with pytest.raises(ArrowInvalid, match="operator"):
        ds.to_table(filter=[("x", "~", 1)])
    with pytest.raises(ArrowInvalid, match="list of values"):
        ds.to_table(filter=[("x", "in", 3)])
    with pytest.raises(ArrowInvalid, match="compares with a number, got str '3'"):
        ds.to_table(filter=[("x", "==", "3")])
    # a mistyped value on a partition column is refused too, not matched against nothing
    with pytest.raises(ArrowInvalid, match="'year' is int32"):
        ds.count_rows(filter=[("year", "==", "2020")])
    with pytest.raises(ArrowInvalid, match="'city' is string"):
        ds.to_batches(filter=[("city", "in", ["paris", 3])])
    with pytest.raises(ArrowInvalid, match="datetime.date"):
        ds.to_table(filter=[("d", ">", "2024-01-01")])  # (a datetime compares, as in pyarrow)
    with pytest.raises(ArrowInvalid, match="time-zone-aware"):
        ds.to_table(filter=[("ts", ">", datetime.datetime(2024, 1, 1,
                                                          tzinfo=datetime.timezone.utc))])
    with pytest.raises(ArrowInvalid, match="format"):
        arrowmm.dataset(hive, format="parquet")
    with pytest.raises(ArrowNotImplementedError, match="partitioning"):
        arrowmm.dataset(hive, partitioning="directory")
    with pytest.raises(ArrowInvalid, match="non-empty list"):
        ds.to_table(filter=[])


def test_stream_files_and_stream_statistics(tmp_path):
    path = str(tmp_path / "s.arrows")
    with arrowmm.new_stream(path, arrowmm.schema([("x", arrowmm.int64())]), statistics=True) as w:
        for b in range(4):
            w.write({"x": list(range(5 * b, 5 * b + 5))})
    ds = arrowmm.dataset(path)
    assert ds.count_rows() == 20
    assert ds.to_table(filter=[("x", "in", [3, 12, 19])]).to_pydict() == {"x": [3, 12, 19]}
    assert ds.head(7).column("x").to_pylist() == list(range(7))


@pytest.mark.parametrize("src,dst,ok", [
    ("int32", "int64", True), ("int64", "int32", False), ("uint32", "int64", True),
    ("uint32", "int32", False), ("int8", "uint16", False), ("int16", "float32", True),
    ("int32", "float32", False), ("int32", "float64", True), ("int64", "float64", False),
    ("float32", "float64", True), ("float64", "float32", False),
])
def test_promotions_are_exact_only(tmp_path, src, dst, ok):
    types = {"int8": arrowmm.int8(), "int16": arrowmm.int16(), "int32": arrowmm.int32(),
             "int64": arrowmm.int64(), "uint16": arrowmm.uint16(), "uint32": arrowmm.uint32(),
             "float32": arrowmm.float32(), "float64": arrowmm.float64()}
    assert promotable(types[src], types[dst]) is ok
    _write(tmp_path / "a.arrow", {"x": pa.array([1, None, 3], dst)})
    _write(tmp_path / "b.arrow", {"x": pa.array([100, None], src)})
    ds = arrowmm.dataset(str(tmp_path))
    if ok:
        got = ds.to_table()
        assert str(got.schema.field("x").type) == str(pa.schema(ds.schema).field("x").type)
        assert got.column("x").to_pylist() == [1, None, 3, 100, None]
    else:
        with pytest.raises(ArrowInvalid, match="do not all fit"):
            ds.to_table()


def test_filter_at_construction_and_dataset_filter_and_together(hive):
    flt, more = [[("year", "==", 2021)], [("x", "<", -40)]], [("s", ">", "s05")]
    ds = arrowmm.dataset(hive, partitioning="hive", filter=flt)
    theirs = _theirs(hive)
    a = pq.filters_to_expression(flt)
    b = pq.filters_to_expression(more)
    assert _same(ds.to_table(), theirs.to_table(filter=a))
    assert ds.count_rows() == theirs.count_rows(filter=a) > 0
    assert _same(ds.to_table(filter=more), theirs.to_table(filter=a & b))
    again = arrowmm.dataset(hive, partitioning="hive").filter(flt).filter(more)
    assert _same(again.to_table(columns=["x", "city"]),
                 theirs.to_table(columns=["x", "city"], filter=a & b))
    assert again.count_rows() == theirs.count_rows(filter=a & b)


def test_statistics_verdicts_agree_with_statistics_allow_batch_by_batch():
    """The per-file fast path gives statistics_allow's answer for every batch, hostile
    documents included."""
    docs = [None, "junk", {}, {"nulls": 0, "min": 1, "max": 5}, {"nulls": 3, "min": 1, "max": 5},
            {"nulls": 4, "min": None, "max": None}, {"nulls": -1, "min": 1, "max": 5},
            {"nulls": 0, "min": 2**63 - 1, "max": 2**63 - 1}, {"nulls": 0, "min": 1.5, "max": 2.5},
            {"nulls": 0, "min": "-inf", "max": "inf"}, {"nulls": 0, "min": 1, "max": 5, "nan": True},
            {"nulls": 0, "min": True, "max": 5}, {"nulls": 0, "max": 5}, {"nulls": 1.0, "min": 1, "max": 2}]
    rows = [4, 4, None, 4, "4"]
    values = [0, 1, 3, 5, 6, 2**63 - 1, 2**63, -2**63, 1.5, 2.0, float("nan"), float("inf"), True]
    for dtype in (arrowmm.int64(), arrowmm.uint8(), arrowmm.float64(), arrowmm.float32()):
        for op, v in itertools.product(["<", "<=", ">", ">=", "==", "!="], values):
            term = Term("x", op, v)
            batch_docs = [d for d, _ in itertools.product(docs, rows)]
            batch_rows = [n for _, n in itertools.product(docs, rows)]
            want = [statistics_allow(term, dtype, d, n) for d, n in zip(batch_docs, batch_rows)]
            assert statistics_verdicts(term, dtype, batch_docs, batch_rows) == want, (dtype, op, v)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork: POSIX only")
def test_a_scan_continued_in_a_forked_child_ends_or_says_why(hive):
    # The scan's read-ahead workers are threads, which a forked child does not have:
    # continuing the parent's scan there waited for ever on their queue.
    ds = arrowmm.dataset(hive, partitioning="hive")
    total = sum(b.num_rows for b in ds.to_batches())
    walk = iter(ds.to_batches())
    first = next(walk).num_rows
    in_child = in_a_forked_child(lambda: first + sum(b.num_rows for b in walk) == total)
    assert in_child in (0, 3), in_child
    assert first + sum(b.num_rows for b in walk) == total  # (the parent's scan goes on)


def test_file_urls_in_every_spelling_read_the_local_folder(tmp_path):
    """``file:`` URLs name local paths (``file:///d``, ``file:/d``, ``file://localhost/d``, in a
    list too), as Spark and pyarrow take them; they raised FileNotFoundError (the scheme was
    never stripped).  Another host's file: URL is refused, never read from this machine."""
    _write(tmp_path / "a.arrow", {"x": np.arange(3, dtype=np.int64), "s": list("abc")})
    folder = str(tmp_path)
    for url in (f"file://{folder}", f"file:{folder}", f"FILE://localhost{folder}",
                [f"file://{folder}/a.arrow"]):
        assert arrowmm.dataset(url).to_table().column("x").to_pylist() == [0, 1, 2], url
    with pytest.raises(ArrowInvalid, match="host 'elsewhere'"):
        arrowmm.dataset(f"file://elsewhere{folder}")
