"""``arrowmm stats`` as a user expects (issue 32, item 6): null counts, minima and maxima of
every column, from the statistics the file records where it has them and computed where it
has not (``from`` says which), checked against ``pyarrow.compute``'s ``min_max`` and
``null_count``; temporal bounds printed as pyarrow prints them; ``--no-compute`` decodes
nothing and shows only what is recorded."""
import datetime
import decimal
import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm.ipc.core.statistics import MAX_BOUND_BYTES

ROWS = 40


def _stats(*args) -> dict:
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "stats", *map(str, args)],
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    if "--json" not in args:
        return proc.stdout.decode()
    return {c["name"]: c for c in json.loads(proc.stdout)["columns"]}


def _batch(seed: int) -> pa.RecordBatch:
    """A batch of every kind of column statistics describe, with nulls (and NaN)."""
    rng = np.random.default_rng(seed)
    n = rng.integers(-10**6, 10**6, ROWS)
    null = rng.random(ROWS) < 0.2

    def masked(values, dtype):
        if pa.types.is_temporal(dtype):  # (from their stored numbers)
            width = pa.int32() if dtype.bit_width == 32 else pa.int64()
            return pa.array(np.asarray(values), width, mask=null).view(dtype)
        return pa.array(values, dtype, mask=null)

    return pa.RecordBatch.from_pydict({
        "i8": masked((n % 100).astype(np.int8), pa.int8()),
        "u64": masked(np.abs(n).astype(np.uint64) * 10**12, pa.uint64()),
        "f32": masked(np.where(n % 7 == 0, np.nan, n / 8).astype(np.float32), pa.float32()),
        "f64": masked(n / 3, pa.float64()),
        "b": masked(n % 3 == 0, pa.bool_()),
        "s": masked([f"v{v}" for v in n], pa.string()),
        "ls": masked([f"é{v % 97}" for v in n], pa.large_string()),
        "bin": masked([int(v).to_bytes(4, "big", signed=True) for v in n], pa.binary()),
        "dec": masked([decimal.Decimal(int(v)).scaleb(-2) for v in n], pa.decimal128(12, 2)),
        "d32": masked(n % 20000, pa.date32()),
        "d64": masked((n % 20000) * 86_400_000, pa.date64()),
        "t32": masked(np.abs(n) % 86_400, pa.time32("s")),
        "t64": masked(np.abs(n) * 10**7 % (86_400 * 10**9), pa.time64("ns")),
        "ts": masked(n * 10**9 + 123, pa.timestamp("ns")),
        "tz": masked(n * 1000, pa.timestamp("ms", tz="Europe/Paris")),
        "lst": masked([[int(v)] for v in n], pa.list_(pa.int64())),
    })


@pytest.fixture(scope="module")
def pyarrow_file(tmp_path_factory):
    """A file pyarrow wrote (no statistics), 3 batches, and the table pyarrow reads."""
    path = tmp_path_factory.mktemp("stats") / "pa.arrow"
    batches = [_batch(seed) for seed in range(3)]
    with pa_ipc.new_file(str(path), batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return path, pa.Table.from_batches(batches)


def _printed(column: pa.ChunkedArray, value: pa.Scalar) -> str:
    """``value`` of ``column`` as pyarrow prints it inside an array."""
    one = column.filter(pc.equal(column, value)).combine_chunks()[:1]
    return one.to_string().splitlines()[1].strip()


def _expected(column: pa.ChunkedArray):
    """(min, max) of a column as ``arrowmm stats --json`` shows them, from pyarrow."""
    bounds = pc.min_max(column)
    low, high = bounds["min"], bounds["max"]
    dtype = column.type
    if pa.types.is_temporal(dtype):
        return _printed(column, low), _printed(column, high)
    if pa.types.is_decimal(dtype):
        return str(low.as_py()), str(high.as_py())
    if pa.types.is_binary(dtype):
        return low.as_py().hex(), high.as_py().hex()
    return low.as_py(), high.as_py()


def test_stats_computes_what_pyarrow_computes(pyarrow_file):
    path, table = pyarrow_file
    got = _stats(path, "--json")
    assert list(got) == table.column_names
    for name in table.column_names:
        column = table.column(name)
        assert got[name]["nulls"] == pc.count(column, mode="only_null").as_py() > 0, name
        assert got[name]["from"] == "computed", name
        if name == "lst":  # (nested: a null count only)
            assert "min" not in got[name] and "max" not in got[name]
            continue
        low, high = _expected(column)
        if name == "f32":  # (computed in double: the float32 values themselves)
            assert (np.float32(got[name]["min"]), np.float32(got[name]["max"])) == (low, high)
        else:
            assert (got[name]["min"], got[name]["max"]) == (low, high), name
    # temporal values as pyarrow prints them: every digit of the unit, a zone's instants as Z
    assert got["ts"]["max"].endswith(".000000123") and got["tz"]["min"].endswith("Z")
    text = _stats(path)
    line = next(row for row in text.splitlines() if row.startswith("tz "))
    assert _expected(table.column("tz"))[0] in line and "computed" in line


def test_no_compute_shows_only_what_the_file_records(pyarrow_file, tmp_path):
    path, table = pyarrow_file
    bare = _stats(path, "--json", "--no-compute")
    assert all(c["nulls"] is None and c["bytes"] is None and c["from"] is None and
               "min" not in c for c in bare.values())
    recorded = tmp_path / "recorded.arrow"
    arrowmm.ipc.add_statistics(path, recorded)
    got = _stats(recorded, "--json", "--no-compute")
    assert got["i8"]["from"] == "footer" and got["i8"]["nulls"] == table.column("i8").null_count
    assert (got["i8"]["min"], got["i8"]["max"]) == _expected(table.column("i8"))
    assert got["ts"]["min"] == _expected(table.column("ts"))[0]
    assert got["lst"]["nulls"] is None and got["lst"]["from"] is None  # (nothing recorded)


def test_each_column_says_where_its_values_came_from(tmp_path):
    """A footer that lacks a batch's maximum (a string too long to keep) has that batch's
    values computed: the column's ``from`` is ``footer+computed`` and the maximum the real
    one; ``--no-compute`` shows no bounds for it rather than partial ones."""
    path = tmp_path / "mixed.arrow"
    long = "z" * (MAX_BOUND_BYTES + 10)
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64()),
                                                ("s", arrowmm.string())]),
                          statistics=True) as w:
        w.write({"x": [1, 2], "s": ["a", "b"]})
        w.write({"x": [3, None], "s": ["c", long]})
    got = _stats(path, "--json")
    assert (got["x"]["from"], got["x"]["min"], got["x"]["max"], got["x"]["nulls"]) == \
        ("footer", 1, 3, 1)
    assert (got["s"]["from"], got["s"]["min"], got["s"]["max"]) == \
        ("footer+computed", "a", long)
    bare = _stats(path, "--json", "--no-compute")
    assert bare["s"]["from"] == "footer" and bare["s"]["nulls"] == 0
    assert "min" not in bare["s"] and "max" not in bare["s"]
    assert (bare["x"]["min"], bare["x"]["max"]) == (1, 3)


def test_recorded_bounds_of_a_stream_and_nan(tmp_path):
    """A stream's statistics are in its batch messages (``from``: messages); a float column
    whose values are all NaN or null has NaN bounds, as pyarrow's ``min_max`` gives."""
    path = tmp_path / "s.arrows"
    with arrowmm.new_stream(path, arrowmm.schema([("f", arrowmm.float64()),
                                                  ("when", arrowmm.date32())]),
                            statistics=True) as w:
        w.write({"f": [float("nan"), None], "when": [datetime.date(2024, 1, 2), None]})
    got = _stats(path, "--json")
    assert got["f"]["from"] == "messages" and got["f"]["min"] == "nan"  # (not null: a null)
    assert np.isnan(pc.min_max(pa.array([float("nan"), None])).as_py()["min"])
    assert got["when"]["min"] == got["when"]["max"] == "2024-01-02"
    text = _stats(path)
    assert any(row.split()[:1] == ["f"] and row.split()[-2:] == ["nan", "nan"]
               for row in text.splitlines()), text


def test_a_damaged_statistics_document_is_not_shown(tmp_path):
    """Recorded statistics of the wrong form (a string bound of an integer column, more nulls
    than rows, a document that is not JSON) are computed over, never shown or fatal."""
    path = tmp_path / "forged.arrow"
    forged = {"version": 1, "columns": ["x", "y"], "batches": [{"rows": 3, "columns": {
        "x": {"nulls": 0, "min": "abc", "max": [1]}, "y": {"nulls": 7, "min": 0, "max": 1}}}]}
    schema = arrowmm.schema([("x", arrowmm.int64()), ("y", arrowmm.int64())])
    for name, doc in (("forged", json.dumps(forged)), ("garbage", "{not json")):
        path = tmp_path / f"{name}.arrow"
        with arrowmm.new_file(path, schema, metadata={"arrowmm:statistics": doc}) as w:
            w.write({"x": [5, None, 7], "y": [1, 2, 3]})
        got = _stats(path, "--json")
        assert (got["x"]["from"], got["x"]["min"], got["x"]["max"], got["x"]["nulls"]) == \
            ("computed", 5, 7, 1)
        assert (got["y"]["from"], got["y"]["min"], got["y"]["max"], got["y"]["nulls"]) == \
            ("computed", 1, 3, 0)
