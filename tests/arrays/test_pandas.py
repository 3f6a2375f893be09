"""``to_pandas`` on batches and readers gives the DataFrame pyarrow's ``to_pandas`` gives.

Each type is written to an IPC file (two batches with different dictionaries); pyarrow reads it
and converts, arrowmm reads it and converts; ``pandas.testing.assert_frame_equal`` compares
values, dtypes, index and column labels.  Where pyarrow refuses a type, arrowmm refuses too.
"""
from __future__ import annotations

import uuid

import numpy as np
import pytest

import pyarrow as pa
import pandas as pd
import arrowmm

from tests.support.integration_json import GOLD_CASES, GOLD_DIR, gold_path
from tests.interop.test_cdata import NAMES, _reversed, _table


@pytest.fixture(scope="module")
def ipc_file(tmp_path_factory):
    table = _table()
    second = pa.record_batch([_reversed(c.combine_chunks()) for c in table.columns],
                             schema=table.schema)
    path = tmp_path_factory.mktemp("pd") / "all.arrow"
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
        w.write_batch(second)
    return path


def _outcome(convert):
    try:
        return convert()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, arrowmm.ArrowError, ValueError) as exc:
        return exc


def _check(got, want):
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"pyarrow raises {want!r}, arrowmm converts"
        kind = NotImplementedError if isinstance(want, NotImplementedError) else ValueError
        assert isinstance(got, kind), f"pyarrow raises {want!r}, arrowmm {got!r}"
        return
    assert not isinstance(got, Exception), f"pyarrow converts, arrowmm raises {got!r}"
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("name", NAMES)
def test_reader_to_pandas_matches_pyarrow(ipc_file, name):
    """Both batches (dictionaries unified across them), through the file and stream readers."""
    want = _outcome(lambda: pa.ipc.open_file(ipc_file).read_all().select([name]).to_pandas())
    with arrowmm.open_file(ipc_file) as reader:
        k = reader.schema.names.index(name)
        schema = arrowmm.schema([reader.schema.field(k)], reader.schema.metadata)
        batches = [b.select([k]) for b in reader]
    got = _outcome(lambda: arrowmm.RecordBatchReader.from_batches(schema, batches).to_pandas())
    _check(got, want)
    one = _outcome(lambda: batches[1].slice(1, 4).to_pandas())
    if "list_view" in name:  # pyarrow 26 turns every row of a sliced list view into None
        want = pa.record_batch(batches[1]).to_pandas().iloc[1:5].reset_index(drop=True)
    else:
        want = _outcome(lambda: pa.record_batch(batches[1]).slice(1, 4).to_pandas())
    _check(one, want)


def test_whole_reader_and_stream_to_pandas(ipc_file, tmp_path):
    convertible = [n for n in NAMES if n not in ("time64ns", "sparse_union", "dense_union")]
    table = pa.ipc.open_file(ipc_file).read_all().select(convertible)
    path = tmp_path / "c.arrow"
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    want = table.to_pandas()
    with arrowmm.open_file(path) as reader:
        pd.testing.assert_frame_equal(reader.to_pandas(), want)
    stream = tmp_path / "c.arrows"
    with pa.ipc.new_stream(stream, table.schema) as w:
        w.write_table(table)
    with arrowmm.open_stream(stream) as reader:
        pd.testing.assert_frame_equal(reader.to_pandas(), want)
        assert reader.to_pandas().shape == (0, len(convertible))  # read to the end already


FRAMES = {
    "range_index": lambda: pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"]}),
    "range_index_step": lambda: pd.DataFrame({"a": [1, 2, 3]}, index=pd.RangeIndex(10, 16, 2, name="r")),
    "named_index": lambda: pd.DataFrame({"a": [1.5, 2, 3]}, index=pd.Index(list("pqr"), name="k")),
    "unnamed_index": lambda: pd.DataFrame({"a": [1, 2, 3]}, index=[5, 6, 7]),
    "multi_index": lambda: pd.DataFrame({"a": [1, 2, 3]}, index=pd.MultiIndex.from_arrays(
        [[1, 1, 2], ["u", "v", "w"]], names=["i", "j"])),
    "columns_name": lambda: pd.DataFrame({"a": [1, 2, 3]}).rename_axis("cols", axis=1),
    "categorical": lambda: pd.DataFrame({"c": pd.Categorical(["a", "b", None, "a"], ordered=True)}),
    "tz": lambda: pd.DataFrame({"t": pd.date_range("2020", periods=3, tz="Europe/Paris")}),
    "int_labels": lambda: pd.DataFrame({0: [1, 2], 1: ["a", "b"]}),
    "mixed": lambda: pd.DataFrame({"i": pd.array([1, None, 3], "Int64"), "f": [0.5, np.nan, 1],
                                   "d": pd.to_datetime(["2020-01-01", None, "2021-05-05"]),
                                   "td": pd.to_timedelta([1, None, 3], unit="s")}),
}


@pytest.mark.parametrize("name", FRAMES)
def test_pandas_metadata_round_trip(tmp_path, name):
    table = pa.Table.from_pandas(FRAMES[name]())
    path = tmp_path / "m.arrow"
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    want = pa.ipc.open_file(path).read_all().to_pandas()
    with arrowmm.open_file(path) as reader:
        pd.testing.assert_frame_equal(reader.to_pandas(), want)
        pd.testing.assert_frame_equal(reader.get_batch(0).to_pandas(),
                                      pa.ipc.open_file(path).get_batch(0).to_pandas())
        pd.testing.assert_frame_equal(reader.to_pandas(ignore_metadata=True),
                                      pa.ipc.open_file(path).read_all().to_pandas(ignore_metadata=True))


def test_extension_types(tmp_path):
    table = pa.table({
        "uuid": pa.array([uuid.UUID(int=7).bytes, None], pa.uuid()),
        "json": pa.array(['{"a": 1}', None], pa.json_()),
        "bool8": pa.array([1, None], pa.bool8()),
        "tensor": pa.ExtensionArray.from_storage(pa.fixed_shape_tensor(pa.int32(), (2,)),
                                                 pa.array([[1, 2], None], pa.list_(pa.int32(), 2))),
    })
    path = tmp_path / "e.arrow"
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    with arrowmm.open_file(path) as reader:
        pd.testing.assert_frame_equal(reader.to_pandas(), pa.ipc.open_file(path).read_all().to_pandas())


@pytest.mark.skipif(not GOLD_DIR.is_dir(), reason=f"gold files absent: {GOLD_DIR}")
@pytest.mark.parametrize("case", GOLD_CASES)
def test_gold_files_to_pandas(case):
    """Column by column; where pyarrow refuses dictionaries whose values hold nulls
    ("categories cannot be null"), arrowmm converts: those null values are NaN there."""
    oracle = pa.ipc.open_file(gold_path(case, "arrow_file")).read_all()
    with arrowmm.open_file(gold_path(case, "arrow_file")) as reader:
        batches = reader.read_all().to_batches()
        for k, field in enumerate(reader.schema):
            schema = arrowmm.schema([field], reader.schema.metadata)
            got = _outcome(lambda: arrowmm.RecordBatchReader.from_batches(
                schema, [b.select([k]) for b in batches]).to_pandas())
            want = _outcome(lambda: oracle.select([k]).to_pandas())
            if isinstance(want, ValueError) and "categories cannot be null" in str(want):
                if isinstance(got, arrowmm.ArrowNotImplementedError):  # nested values: unhashable
                    assert field.type.value_type.children
                    continue
                decoded = oracle.column(k).to_pylist()
                values = got.iloc[:, 0].astype(object).where(got.iloc[:, 0].notna(), None).tolist()
                assert values == decoded
                continue
            _check(got, want)


def test_array_to_pandas_is_pyarrows_series():
    cases = [pa.array([1, None, 3]), pa.array(["a", None]), pa.array([1.5, 2.0]),
             pa.array([True, None]),
             pa.ExtensionArray.from_storage(pa.uuid(), pa.array([uuid.UUID(int=1).bytes, None],
                                                                pa.binary(16))),
             pa.ExtensionArray.from_storage(pa.json_(), pa.array(['{"a":1}', None])),
             pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8()))]
    for theirs in cases:
        want, got = theirs.to_pandas(), arrowmm.array(theirs).to_pandas()
        assert got.equals(want) and got.dtype == want.dtype and got.name is want.name, theirs.type
