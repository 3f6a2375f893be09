"""Feather V1 gets one answer (issue 32, item 5): ``arrowmm.open`` and ``open_file`` (a path, a
buffer, a file object, standard input, ``mmap=False``, ``columns=``) and the commands ``info``, ``head``,
``stats``, ``validate`` and ``convert`` read it as ``open_file`` does, with the values
``pyarrow.feather.read_table`` gives."""
import datetime
import io
import json
import subprocess
import sys
import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.feather
import pytest

import arrowmm


def _table():
    return pa.table({
        "id": pa.array([3, None, 1, 7], pa.int64()),
        "name": pa.array(["b", "a", None, "c"]),
        "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5), None,
                        datetime.datetime(2020, 5, 6), datetime.datetime(2021, 1, 1)],
                       pa.timestamp("us", tz="UTC")),
        "x": pa.array([0.5, -1.5, None, 2.0]),
    })


@pytest.fixture
def v1(tmp_path):
    """(path of a Feather V1 file pyarrow wrote, what pyarrow reads from it)."""
    path = str(tmp_path / "v1.feather")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (pyarrow 25+ deprecates V1)
        pyarrow.feather.write_feather(_table(), path, version=1)
        expected = pyarrow.feather.read_table(path)
    return path, expected


def _run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "arrowmm", *map(str, args)], input=stdin,
                          capture_output=True, timeout=300)


@pytest.mark.parametrize("how", ["path", "bytes", "file object", "unseekable", "mmap=False"])
def test_open_reads_feather_v1_as_open_file_does(v1, how):
    path, expected = v1
    data = open(path, "rb").read()

    class Pipe(io.RawIOBase):  # (a file object that cannot seek: read whole)
        def __init__(self):
            self._f = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._f.readinto(b)

    source = {"path": path, "bytes": data, "file object": open(path, "rb"),
              "unseekable": Pipe(), "mmap=False": path}[how]
    with arrowmm.open(source, mmap=how != "mmap=False") as reader, \
            arrowmm.open_file(path) as reference:
        assert isinstance(reader, arrowmm.FeatherV1Reader)
        assert reader.read_all().to_pydict() == expected.to_pydict() == \
            reference.read_all().to_pydict()
    if how == "file object":
        source.close()


def test_feather_v1_columns_and_head(v1):
    path, expected = v1
    with arrowmm.open(path, columns=["x", "id"]) as reader:
        assert reader.schema.names == ["x", "id"]
        assert reader.read_all().to_pydict() == expected.select(["x", "id"]).to_pydict()
        assert reader.head(2).to_pydict() == expected.select(["x", "id"]).slice(0, 2).to_pydict()
    for mmap in (True, False):
        with arrowmm.open_file(path, columns=["name"], mmap=mmap) as reader:
            assert reader.read_all().to_pydict() == {"name": ["b", "a", None, "c"]}
    # a stream reader refuses it (as pyarrow's does), pointing to the readers that read it
    with pytest.raises(arrowmm.ArrowInvalid, match="arrowmm.open_file and arrowmm.open read it"):
        arrowmm.open_stream(path)
    with pytest.raises(arrowmm.ArrowInvalid, match="no column named 'nope'"):
        arrowmm.open(path, columns=["nope"])


def test_info_head_and_validate_on_feather_v1(v1):
    path, expected = v1
    info = _run("info", path, "--json")
    assert info.returncode == 0, info.stderr
    doc = json.loads(info.stdout)
    assert (doc["format"], doc["batches"], doc["rows"]) == ("feather_v1", 1, 4)
    assert [f["name"] for f in doc["fields"]] == expected.schema.names
    rows = [json.loads(line) for line in _run("head", path, "--json", "-n", "3",
                                              "--columns", "id,name").stdout.splitlines()]
    assert rows == expected.select(["id", "name"]).slice(0, 3).to_pylist()
    piped = _run("head", "-", "--columns", "name", stdin=open(path, "rb").read())
    assert piped.returncode == 0 and b"(4 rows)" in piped.stdout, piped.stderr
    valid = _run("validate", path, "--full")
    assert valid.returncode == 0 and b"valid Feather V1 file" in valid.stdout, valid.stderr


def test_stats_and_convert_on_feather_v1(v1, tmp_path):
    path, expected = v1
    doc = json.loads(_run("stats", path, "--json").stdout)
    assert doc["format"] == "feather_v1" and doc["rows"] == 4
    got = {c["name"]: c for c in doc["columns"]}
    for name in ("id", "x"):
        bounds = pc.min_max(expected[name]).as_py()
        assert (got[name]["min"], got[name]["max"]) == (bounds["min"], bounds["max"])
        assert got[name]["nulls"] == expected[name].null_count
        assert got[name]["from"] == "computed"
    assert got["ts"]["max"] == "2024-01-02 03:04:05.000000Z"  # (as pyarrow prints it)
    out = tmp_path / "v2.arrow"
    proc = _run("convert", path, out, "--statistics")
    assert proc.returncode == 0, proc.stderr
    assert pa.ipc.open_file(out).read_all().equals(expected)
    assert json.loads(_run("stats", out, "--json", "--no-compute").stdout)["columns"][0]["from"] \
        == "footer"
