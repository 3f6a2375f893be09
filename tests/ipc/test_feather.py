"""Feather V1 files (``pyarrow.feather.write_feather(version=1)``) read by ``open_file`` with
pyarrow's values, zero-copy, and malformed ones refused with ArrowInvalid."""
import datetime
import io
import struct
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather
import pytest

import arrowmm


def _frame():
    return pd.DataFrame({
        "i64": pd.array([1, None, -3, 4], dtype="Int64"),
        "i8": np.array([1, 2, 3, -4], dtype=np.int8),
        "u32": np.array([0, 1, 2**32 - 1, 7], dtype=np.uint32),
        "f32": np.array([1.5, np.nan, -2.0, 0.0], dtype=np.float32),
        "f64": [1.25, None, 3.0, 1e300],
        "s": ["a", None, "ccc", ""],
        "bin": [b"\x00", b"xy", None, b""],
        "b": [True, False, None, True],
        "cat": pd.Categorical(["x", "y", None, "x"], ordered=True),
        "ts": pd.to_datetime(["2020-01-01", None, "2021-06-01T12:00:00", "1970-01-01"], format="ISO8601"),
        "tz": pd.to_datetime(["2020-01-01", "2020-01-02", None, "2020-01-04"]).tz_localize("UTC"),
        "d": [datetime.date(2020, 1, 1), None, datetime.date(1999, 12, 31), datetime.date(1970, 1, 1)],
    })


def _table():
    """The frame's columns, plus types only a table can give Feather V1 (its writer takes
    time32 but not time64, and large strings)."""
    table = pa.Table.from_pandas(_frame(), preserve_index=False)
    table = table.append_column("t", pa.array([3723000, None, 86399000, 0], pa.time32("ms")))
    return table.append_column("ls", pa.array(["x", None, "", "yy"], pa.large_string()))


@pytest.fixture
def v1_file(tmp_path):
    path = str(tmp_path / "v1.feather")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pyarrow.feather.write_feather(_table(), path, version=1)
        expected = pyarrow.feather.read_table(path)
    return path, expected


def test_open_file_reads_feather_v1_with_pyarrows_values(v1_file):
    path, expected = v1_file
    with open(path, "rb") as f:
        assert f.read(4) == b"FEA1"
    with arrowmm.open_file(path) as reader:
        assert reader.num_record_batches == len(reader) == 1
        assert reader.schema.names == expected.schema.names
        assert [str(ty) for ty in reader.schema.types] == [str(ty) for ty in expected.schema.types]
        batch = reader[0]
        batch.validate(full=True)
        got, want = batch.to_pylist(), expected.to_pylist()
        assert repr(got) == repr(want)
        assert pa.table(reader).equals(expected)
        assert reader.get_batch(-1) is batch and reader[:] == [batch]
        table = reader.read_all()  # a Table, as every reader's read_all
        assert isinstance(table, arrowmm.Table) and table.num_rows == expected.num_rows
        assert pa.table(table).equals(expected)
        with pytest.raises(IndexError):
            reader.get_batch(1)


def test_feather_v1_columns_are_views_of_the_mapping(v1_file):
    path, _ = v1_file
    data = np.fromfile(path, dtype=np.uint8)
    reader = arrowmm.open_file(data)
    view = reader[0]["i8"].to_numpy()
    assert data.ctypes.data <= view.ctypes.data < data.ctypes.data + data.size
    assert view.tolist() == [1, 2, 3, -4]


def _corrupt(path, tmp_path, edit):
    raw = bytearray(open(path, "rb").read())
    edit(raw)
    out = tmp_path / "bad.feather"
    out.write_bytes(bytes(raw))
    return str(out)


@pytest.mark.parametrize("edit,match", [
    (lambda raw: raw.__delitem__(slice(len(raw) - 2, None)), "truncated|end with"),
    (lambda raw: raw.__setitem__(slice(len(raw) - 8, len(raw) - 4), (10**6).to_bytes(4, "little")),
     "metadata length"),
    (lambda raw: raw.__setitem__(slice(len(raw) - 8, len(raw) - 4), (5).to_bytes(4, "little")),
     "Feather V1 metadata|metadata"),
])
def test_malformed_feather_v1_is_refused(v1_file, tmp_path, edit, match):
    path, _ = v1_file
    bad = _corrupt(path, tmp_path, edit)
    with pytest.raises(arrowmm.ArrowInvalid, match=match):
        arrowmm.open_file(bad)


def test_feather_v1_offsets_past_the_data_are_refused(v1_file, tmp_path):
    path, _ = v1_file
    raw = bytearray(open(path, "rb").read())
    meta_len = int.from_bytes(raw[-8:-4], "little")
    start = len(raw) - 8 - meta_len
    # every int64 in the metadata equal to a column's data offset, pushed past the file's end
    hits = 0
    for pos in range(start, len(raw) - 16):
        if int.from_bytes(raw[pos:pos + 8], "little") == 8:  # the first column starts at byte 8
            raw[pos:pos + 8] = (len(raw) * 4).to_bytes(8, "little")
            hits += 1
    assert hits
    out = tmp_path / "bad.feather"
    out.write_bytes(bytes(raw))
    with pytest.raises(arrowmm.ArrowInvalid):
        with arrowmm.open_file(str(out)) as reader:
            reader[0].to_pylist()


@pytest.mark.parametrize("length", [200, 0x7FFFFFFF])
def test_a_column_name_longer_than_the_metadata_is_refused(length):
    # (review, session 42: the flatbuffers runtime's Table.String is a slice that stops at the
    # end of the buffer, so a damaged length read as the column "name\0\0\0\0\x10\0$\0...";
    # pyarrow reads it unverified too, and crashes at 0x7fffffff)
    t = pa.table({"x": pa.array([1, 2, 3], pa.int64()), "name": pa.array([4, 5, 6], pa.int64())})
    sink = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pyarrow.feather.write_feather(t, sink, version=1)
    data = bytearray(sink.getvalue())
    i = data.index(b"\x04\x00\x00\x00name\x00")
    data[i:i + 4] = struct.pack("<I", length)
    with pytest.raises(arrowmm.ArrowInvalid, match="Feather V1 metadata: a string of"):
        arrowmm.open_file(bytes(data))
