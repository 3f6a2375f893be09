"""Dataset filters as expressions (and as tuples) against pyarrow.dataset, statistics pruning
kept for expressions, and a hypothesis test of random expressions over random data against
pyarrow's ``Table.filter``."""
from __future__ import annotations

import datetime
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrowmm
from arrowmm.dataset.filters import expression_dnf, normalize_filter, row_filter
from arrowmm.ipc.read.file_reader import FileReader

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pads = pytest.importorskip("pyarrow.dataset")
pq = pytest.importorskip("pyarrow.parquet")  # (filters_to_expression: the tuples' oracle)

F, P = arrowmm.field, pc.field


def _py(d):
    return {k: ["NaN" if isinstance(x, float) and math.isnan(x) else x for x in v]
            for k, v in d.items()}


def _table(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.1
    x = rng.random(n)
    x[rng.random(n) < 0.02] = np.nan
    return pa.table({
        "x": pa.array(x, mask=nulls),
        "i": pa.array(rng.integers(-50, 50, n), pa.int32(), mask=rng.random(n) < 0.1),
        "s": pa.array(["k%03d" % v for v in rng.integers(0, 200, n)], mask=rng.random(n) < 0.1),
        "b": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1),
        "ts": pa.array(rng.integers(0, 10**6, n).astype("datetime64[s]").astype("datetime64[us]"),
                       mask=rng.random(n) < 0.1),
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("filter")
    table = _table()
    plain, zstd = root / "plain.arrow", root / "zstd.arrow"
    for path, codec in ((plain, None), (zstd, "zstd")):
        with pa.ipc.new_file(str(path), table.schema,
                             options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
            for b in table.to_batches(max_chunksize=400):
                w.write_batch(b)
    return table, plain, zstd


EXPRESSIONS = [
    (F("x") > 0.9, P("x") > 0.9),
    (F("x") <= 0.1, P("x") <= 0.1),
    (F("i") == 7, P("i") == 7),
    (F("i") != 7, P("i") != 7),
    (F("s") < "k010", P("s") < "k010"),
    (F("s").isin(["k001", "k150", None]), P("s").isin(["k001", "k150", None])),
    (~F("s").isin(["k001", "k150"]), ~P("s").isin(["k001", "k150"])),
    (F("x").is_null(), P("x").is_null()),
    (F("i").is_valid() & (F("x") > 0.5), P("i").is_valid() & (P("x") > 0.5)),
    ((F("i") > 40) | (F("x") < 0.05) & ~(F("s") >= "k100"),
     (P("i") > 40) | (P("x") < 0.05) & ~(P("s") >= "k100")),
    (~(F("x") < 0.5), ~(P("x") < 0.5)),  # (no tuple form: NaN is neither < 0.5 nor >= 0.5)
    (F("b"), P("b")),
    (F("b") & (F("i") < 0), P("b") & (P("i") < 0)),
    (F("ts") >= datetime.datetime(1970, 1, 6), P("ts") >= pa.scalar(
        datetime.datetime(1970, 1, 6), pa.timestamp("us"))),
    (F("x") > 2.0, P("x") > 2.0),  # (no row: no batch survives)
]


@pytest.mark.parametrize("which", ["plain", "zstd"])
@pytest.mark.parametrize("k", range(len(EXPRESSIONS)))
def test_dataset_expressions_match_pyarrow_dataset(files, which, k):
    _, plain, zstd = files
    path = str(plain if which == "plain" else zstd)
    mine, theirs = EXPRESSIONS[k]
    expected = pads.dataset(path, format="ipc").to_table(filter=theirs)
    got = pa.table(arrowmm.dataset(path).to_table(filter=mine))
    assert got.schema == expected.schema
    assert _py(got.to_pydict()) == _py(expected.to_pydict())
    only = pa.table(arrowmm.dataset(path).to_table(filter=mine, columns=["ts", "i"]))
    assert only.to_pydict() == expected.select(["ts", "i"]).to_pydict()


@pytest.mark.parametrize("tuples", [
    [("x", ">", 0.5), ("s", "in", ["k001", "k002", "k150"])],
    [[("i", "<", -40)], [("s", "not in", ["k001"]), ("x", "<", 0.2)]],
    [("ts", "<", datetime.datetime(1970, 1, 3))],
])
def test_tuples_and_their_expression_read_the_same_rows(files, tuples):
    table, plain, _ = files
    ds = arrowmm.dataset(str(plain))
    rf = row_filter(tuples)
    by_tuples = pa.table(ds.to_table(filter=tuples))
    by_expression = pa.table(ds.to_table(filter=rf.expression))
    assert _py(by_tuples.to_pydict()) == _py(by_expression.to_pydict())
    expected = table.filter(pq.filters_to_expression(tuples))
    assert _py(by_tuples.to_pydict()) == _py(expected.to_pydict())


def test_dataset_filter_combines_expressions_and_tuples(files):
    table, plain, _ = files
    ds = arrowmm.dataset(str(plain)).filter(F("x") > 0.3)
    got = pa.table(ds.to_table(filter=[("i", ">=", 0)]))
    expected = table.filter((P("x") > 0.3) & (P("i") >= 0))
    assert _py(got.to_pydict()) == _py(expected.to_pydict())
    assert ds.count_rows(filter=~(F("s") < "k100")) == \
        table.filter((P("x") > 0.3) & ~(P("s") < "k100")).num_rows


def test_partition_columns_in_expressions(tmp_path):
    for part in ("a", "b", "c"):
        os.makedirs(tmp_path / f"k={part}")
        part_table = pa.table({"v": pa.array(range(10))})
        with pa.ipc.new_file(str(tmp_path / f"k={part}" / "0.arrow"), part_table.schema) as w:
            w.write_table(part_table)
    theirs = pads.dataset(str(tmp_path), format="ipc", partitioning="hive")
    ds = arrowmm.dataset(str(tmp_path), partitioning="hive")
    for mine, pyexpr in [((F("k") == "b") & (F("v") > 6), (P("k") == "b") & (P("v") > 6)),
                         (F("k").isin(["a", "c"]) | (F("v") == 0), P("k").isin(["a", "c"]) |
                          (P("v") == 0)),
                         (~(F("k") == "a"), ~(P("k") == "a"))]:
        got = pa.table(ds.to_table(filter=mine)).to_pydict()
        expected = theirs.to_table(filter=pyexpr).to_pydict()
        assert sorted(zip(got["k"], got["v"])) == sorted(zip(expected["k"], expected["v"]))


def test_filter_errors_name_the_column(files):
    _, plain, _ = files
    ds = arrowmm.dataset(str(plain))
    with pytest.raises(arrowmm.ArrowInvalid, match="'s'.*string"):
        ds.to_table(filter=F("s") > 3)
    with pytest.raises(arrowmm.ArrowInvalid, match="no column named 'nope'"):
        ds.to_table(filter=F("nope") > 3)
    with pytest.raises(arrowmm.ArrowInvalid, match="not bool"):
        ds.to_table(filter=F("x"))


def test_expressions_convert_to_terms_only_where_exact():
    dnf = expression_dnf((F("a") > 1) & ((F("b") == 2) | F("c").is_null()))
    assert [[(t.column, t.op, t.value) for t in g] for g in dnf] == \
        [[("a", ">", 1), ("b", "==", 2)], [("a", ">", 1), ("c", "is null", None)]]
    assert expression_dnf(~(F("a") > 1)) is None
    assert expression_dnf(~F("a").isin([1]))[0][0].op == "not in"
    assert [[(t.column, t.op) for t in g] for g in normalize_filter([("a", "=", 1)])] == \
        [[("a", "==")]]


def test_expression_filters_still_prune_by_statistics(tmp_path, monkeypatch):
    path = str(tmp_path / "stats.arrow")
    schema = arrowmm.schema([("id", arrowmm.int64()), ("y", arrowmm.float64())])
    with arrowmm.new_file(path, schema, statistics=True) as w:
        for b in range(20):
            w.write({"id": np.arange(100) + 100 * b, "y": np.zeros(100)})
    fetched = []
    original = FileReader.get_batch

    def counting(self, i, **options):
        fetched.append(i)
        return original(self, i, **options)
    monkeypatch.setattr(FileReader, "get_batch", counting)
    got = arrowmm.dataset(path).to_table(filter=(F("id") >= 1950) | (F("id") < 5))
    assert got.column("id").to_pylist() == list(range(5)) + list(range(1950, 2000))
    assert sorted(fetched) == [0, 19]


# -- random expressions over random data ----------------------------------------------------------
_COLUMNS = {"i": pa.int64(), "f": pa.float64(), "s": pa.string(), "b": pa.bool_()}
_VALUES = {"i": st.integers(-5, 5), "f": st.sampled_from([-1.0, 0.0, 0.5, 2.0, float("nan")]),
           "s": st.sampled_from(["", "a", "ab", "b", "zz"]), "b": st.booleans()}


@st.composite
def _leaf(draw):
    name = draw(st.sampled_from(sorted(_COLUMNS)))
    kind = draw(st.sampled_from(["cmp", "cmp", "isin", "null", "valid"]))
    if kind == "cmp":
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        value = draw(_VALUES[name])
        return (lambda f: {"==": f(name) == value, "!=": f(name) != value,
                           "<": f(name) < value, "<=": f(name) <= value,
                           ">": f(name) > value, ">=": f(name) >= value}[op])
    if kind == "isin":
        values = draw(st.lists(_VALUES[name] | st.none(), max_size=3))
        typed = pa.array(values, _COLUMNS[name])  # (pyarrow infers no type from [] or [None])
        return lambda f: f(name).isin(values if f is arrowmm.field else typed)
    return (lambda f: f(name).is_null()) if kind == "null" else (lambda f: f(name).is_valid())


def _tree(leaf):
    return st.recursive(leaf, lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda ab: lambda f: ab[0](f) & ab[1](f)),
        st.tuples(inner, inner).map(lambda ab: lambda f: ab[0](f) | ab[1](f)),
        inner.map(lambda a: lambda f: ~a(f))), max_leaves=5)


@st.composite
def _data(draw):
    n = draw(st.integers(0, 40))
    cols = {}
    for name, dtype in _COLUMNS.items():
        values = draw(st.lists(_VALUES[name] | st.none(), min_size=n, max_size=n))
        cols[name] = pa.array(values, dtype)
    return pa.table(cols)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_data(), build=_tree(_leaf()), cut=st.integers(0, 40), offset=st.integers(0, 5))
def test_random_expressions_filter_as_pyarrow_does(data, build, cut, offset):
    theirs = data.slice(min(offset, data.num_rows))  # (columns not starting at bit 0)
    cut = min(cut, theirs.num_rows)
    batches = [arrowmm.record_batch(b) for b in
               (theirs.slice(0, cut).combine_chunks().to_batches() +
                theirs.slice(cut).combine_chunks().to_batches())]
    schema = arrowmm.record_batch(theirs.slice(0, 0).combine_chunks()).schema
    mine = arrowmm.Table(schema, [b for b in batches if b.num_rows])
    got = pa.table(mine.filter(build(arrowmm.field)))
    expected = theirs.filter(build(pc.field))
    assert _py(got.to_pydict()) == _py(expected.to_pydict())


def _write_replacing(path, batches) -> None:
    """``batches`` (lists of x) with statistics, written beside ``path`` and renamed over it."""
    tmp = path.parent / ".tmp.arrow"  # (hidden: never one of the dataset's files)
    with arrowmm.new_file(tmp, arrowmm.schema([("x", arrowmm.int64())]), statistics=True) as w:
        for values in batches:
            w.write({"x": values})
    os.replace(tmp, path)


def test_a_dataset_scanned_again_after_its_file_is_replaced_judges_the_new_statistics(tmp_path):
    # (review, session 42) the statistics were kept per file index for the dataset's life:
    # the new file's batch 0 was pruned by the old batch 0's max of 2 ([30, 40] came back)
    path = tmp_path / "a.arrow"
    _write_replacing(path, [[1, 2], [3, 4]])
    ds = arrowmm.dataset(str(tmp_path))
    assert ds.to_table(filter=[("x", ">", 2)]).column("x").to_pylist() == [3, 4]
    _write_replacing(path, [[10, 20], [30, 40]])
    assert ds.to_table(filter=[("x", ">", 2)]).column("x").to_pylist() == [10, 20, 30, 40]


def test_a_dataset_scanned_again_after_an_append_reads_the_appended_rows(tmp_path):
    # (the kept statistics were one batch short: a raw IndexError)
    path = tmp_path / "a.arrow"
    _write_replacing(path, [[1, 2]])
    ds = arrowmm.dataset(str(tmp_path))
    assert ds.to_table(filter=[("x", ">", 1)]).column("x").to_pylist() == [2]
    with arrowmm.append_file(path) as w:
        w.write({"x": [50, 60]})
    assert ds.to_table(filter=[("x", ">", 1)]).column("x").to_pylist() == [2, 50, 60]


@pytest.mark.parametrize("new_batches", [8, 1], ids=["same-count", "fewer"])
def test_a_filtered_scan_of_a_file_replaced_midway_reads_one_version(tmp_path, new_batches):
    # (review, session 42) a filtered scan cuts a mapped file in parts, and each part opened
    # the path: replaced after the first batch, the scan gave [0, 1, 102, ..., 107], rows of
    # two files (fewer batches: a raw IndexError); now the part that meets the other file
    # says so, naming it
    path = tmp_path / "a.arrow"
    _write_replacing(path, [[i] for i in range(8)])
    batches = arrowmm.dataset(str(tmp_path)).to_batches(filter=[("x", ">=", 0)],
                                                        use_threads=False)
    got = [next(batches).column("x").to_pylist()[0]]
    _write_replacing(path, [[100 + i] for i in range(new_batches)])
    with pytest.raises(arrowmm.ArrowInvalid, match="a.arrow: replaced while the scan read it"):
        got += [b.column("x").to_pylist()[0] for b in batches]
    assert got == [0]


def _rewrite_in_place(path, batches) -> None:
    """``batches`` written into ``path``'s own inode (truncated, as pyarrow's ``new_file(path)``
    and pandas' ``to_feather`` write), its modification time first set far back, so that the
    rewrite's is another whatever the clock's grain."""
    os.utime(path, ns=(0, 0))
    new = path.parent / ".new.arrow"
    _write_replacing(new, batches)
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(new.read_bytes())
    new.unlink()


def test_a_filtered_scan_of_a_file_rewritten_in_place_reads_one_version(tmp_path):
    # (review, session 43: the same inode and size passed the check of (device, inode, size):
    # [10, 21, 22, ...], rows of two versions)
    path = tmp_path / "a.arrow"
    _write_replacing(path, [[10 + i] for i in range(8)])
    size, inode = os.path.getsize(path), os.stat(path).st_ino
    batches = arrowmm.dataset(str(tmp_path)).to_batches(filter=[("x", ">=", 0)],
                                                        use_threads=False)
    got = [next(batches).column("x").to_pylist()[0]]
    _rewrite_in_place(path, [[20 + i] for i in range(8)])
    assert (os.path.getsize(path), os.stat(path).st_ino) == (size, inode)
    with pytest.raises(arrowmm.ArrowInvalid, match="a.arrow: replaced while the scan read it"):
        got += [b.column("x").to_pylist()[0] for b in batches]
    assert got == [10]


def test_a_filtered_scan_of_a_file_replaced_by_a_stream_says_so(tmp_path):
    # (review, session 43: AttributeError, a stream reader had no file_identity)
    path = tmp_path / "a.arrow"
    _write_replacing(path, [[i] for i in range(8)])
    batches = arrowmm.dataset(str(tmp_path)).to_batches(filter=[("x", ">=", 0)],
                                                        use_threads=False)
    next(batches)
    tmp = tmp_path / ".tmp.arrow"
    arrowmm.write_stream(str(tmp), {"x": [100, 101]})
    os.replace(tmp, path)
    with pytest.raises(arrowmm.ArrowInvalid, match="a.arrow: replaced while the scan read it"):
        list(batches)


def test_a_file_with_an_unfinished_append_has_the_identity_of_its_file(tmp_path):
    # (review, session 43: its committed part is a view of the mapping, which had no identity,
    # so a scan or a Spark plan of such a file checked nothing)
    from arrowmm.ipc.read.trailer import IN_PROGRESS, STATE_OFFSET, aligned
    path = tmp_path / "log.arrow"
    arrowmm.write_file(str(path), {"x": [0, 1, 2]})
    committed = os.path.getsize(path)
    with arrowmm.append_file(str(path)) as w:
        w.write({"x": [3, 4]})
    with open(path, "r+b") as f:  # (what an append killed before its trailer leaves)
        f.seek(aligned(committed) + STATE_OFFSET)
        f.write(bytes([IN_PROGRESS]))
        f.truncate(os.path.getsize(path) - 10)
    with arrowmm.open_file(str(path), mmap=False) as unmapped, arrowmm.open_file(str(path)) as r:
        st = os.stat(path)
        expected = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        assert r.unfinished_bytes and r.num_rows == 3 and r.file_identity() == expected
        assert unmapped.file_identity() == expected


def test_a_filtered_scan_of_many_files_holds_few_open(tmp_path):
    # (a scan that kept each file's reader from planning held all 300 open before its first
    # batch: past the usual 1,024 descriptors, "Too many open files")
    for i in range(300):
        arrowmm.write_file(str(tmp_path / f"f{i:04d}.arrow"), {"x": list(range(10))})
    before = len(os.listdir("/proc/self/fd"))
    batches = arrowmm.dataset(str(tmp_path)).to_batches(filter=[("x", ">", 5)])
    next(batches)
    assert len(os.listdir("/proc/self/fd")) - before < 50
    batches.close()


def test_row_mask_calls_a_null_dictionary_value_null():
    # (review, session 43: the bitmap of the indices alone: "is null" missed index 1 -> null)
    import pyarrow as pa
    from arrowmm.dataset.filters import Term, row_mask
    d = arrowmm.array(pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None, 1, 3]),
                                                      pa.array(["a", None, "c", "a"])))
    assert d.to_pylist() == ["a", None, "c", None, None, "a"]
    assert row_mask(d, Term("d", "is null", None)).tolist() == [False, True, False, True, True,
                                                               False]
    assert row_mask(d, Term("d", "is not null", None)).tolist() == [True, False, True, False,
                                                                   False, True]


@pytest.mark.parametrize("filtered", [False, True])
def test_a_dataset_read_with_mmap_false_survives_a_file_truncated_under_its_scan(tmp_path,
                                                                                 filtered):
    # (review, session 43: a mapped file cut by another program killed the scan with SIGBUS,
    # and a dataset had no mmap=False: docs/reading.md's answer was open_file's alone)
    import subprocess
    import sys
    import textwrap
    path = tmp_path / "a.arrow"
    with arrowmm.new_file(str(path), arrowmm.schema([("x", arrowmm.int64())])) as w:
        for i in range(8):
            w.write({"x": list(range(i, i + 50_000))})
    child = textwrap.dedent(f"""
        import arrowmm
        ds = arrowmm.dataset({str(tmp_path)!r}, mmap=False)
        it = ds.to_batches(filter={[("x", ">=", 0)] if filtered else None!r}, use_threads=False)
        first = next(it).column("x").to_numpy().sum()
        open({str(path)!r}, "wb").close()  # (another program truncates it, as O_TRUNC does)
        try:
            for b in it:
                b.column("x").to_numpy().sum()
        except arrowmm.ArrowError as exc:
            print("refused:", " ".join(str(exc).split())[:200])
    """)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"the scan died (rc {proc.returncode}): {proc.stderr[-300:]}"
    assert proc.stdout.startswith("refused:") and "a.arrow" in proc.stdout, proc.stdout
    arrowmm.write_file(str(path), {"x": [1, 2, 3]})
    ds = arrowmm.dataset(str(tmp_path), mmap=False)
    assert ds.to_table(filter=[("x", ">", 1)]).column("x").to_pylist() == [2, 3]
