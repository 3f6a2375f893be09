"""IPC files behind file objects and fsspec filesystems, read by byte ranges (issue 18,
item 4): the answers are pyarrow's, and the bytes asked of the source are about the bytes
of what was touched."""
import io

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.dataset as pads
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.ipc.ranged import RangedFileReader, open_ranged

fsspec = pytest.importorskip("fsspec")


class CountingFile(io.BytesIO):
    """A file object that counts the bytes read from it."""

    def __init__(self, data):
        super().__init__(data)
        self.bytes = 0

    def read(self, n=-1):
        out = super().read(n)
        self.bytes += len(out)
        return out


def _wide(columns=100, rows=8192, batches=2):
    rng = np.random.default_rng(0)
    table = pa.table({f"c{k}": rng.random(rows * batches) for k in range(columns)})
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=rows)
    return table, sink.getvalue()


def test_one_column_of_100_reads_about_one_columns_bytes():
    table, data = _wide()
    f = CountingFile(data)
    with open_ranged(f, columns=["c7"]) as reader:
        opened = f.bytes
        got = pa.table(reader)
    assert got.equals(table.select(["c7"]))
    column_bytes = table.column("c7").nbytes
    assert opened < 0.01 * len(data)  # the footer and magic only
    # one column's bytes, plus the two batch headers (100 columns' nodes and buffers each)
    # and a little read-ahead
    assert column_bytes < f.bytes - opened < 1.3 * column_bytes
    assert f.bytes < 0.02 * len(data)
    assert reader.bytes_read == f.bytes


def test_every_type_reads_as_pyarrow_does(tmp_path):
    table = pa.table({
        "i": pa.array([1, None, 3] * 5, pa.int64()),
        "s": pa.array(["a", None, "ccc"] * 5),
        "l": pa.array([[1, 2], None, []] * 5),
        "d": pa.array(["x", "y", "x"] * 5).dictionary_encode(),
        "st": pa.array([{"a": 1}, None, {"a": 3}] * 5),
    })
    path = tmp_path / "t.arrow"
    with pa.ipc.new_file(str(path), table.schema,
                         options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(table, max_chunksize=4)
    with open(path, "rb") as f:
        with open_ranged(f) as reader:
            assert isinstance(reader, RangedFileReader)
            assert reader.num_rows == 15 and reader.num_record_batches == 4
            assert reader.read_all().to_pydict() == table.to_pydict()
            assert pa.table(reader).equals(table)
            assert reader.get_batch(-1).column("s").to_pylist() == table.column("s").to_pylist()[12:]
        assert not f.closed  # (the caller's file object stays open)


def test_fsspec_memory_and_local_filesystems(tmp_path):
    table, data = _wide(columns=10, rows=100)
    mem = fsspec.filesystem("memory")
    with mem.open("/bucket/t.arrow", "wb") as f:
        f.write(data)
    try:
        with open_ranged("memory://bucket/t.arrow", columns=["c1", "c0"]) as reader:
            assert pa.table(reader).equals(table.select(["c1", "c0"]))
        with open_ranged("/bucket/t.arrow", filesystem=mem) as reader:
            assert reader.read_all().to_pydict() == table.to_pydict()
    finally:
        mem.rm("/bucket", recursive=True)
    (tmp_path / "t.arrow").write_bytes(data)
    local = fsspec.filesystem("file")
    with open_ranged(str(tmp_path / "t.arrow"), filesystem=local, columns=[3]) as reader:
        assert reader.read_all().column("c3").to_pylist() == table.column("c3").to_pylist()


def test_damage_is_arrow_invalid():
    _, data = _wide(columns=3, rows=10)
    with pytest.raises(ArrowInvalid, match="magic"):
        open_ranged(io.BytesIO(data[:-3]))
    with pytest.raises(ArrowInvalid, match="seekable binary file object"):
        open_ranged(object())
    with pytest.raises(FileNotFoundError):
        open_ranged("memory://nowhere/t.arrow")
    reader = open_ranged(io.BytesIO(data))
    with pytest.raises(ArrowInvalid, match="maps nothing"):
        reader.memory()


def test_dataset_on_an_fsspec_filesystem_matches_the_local_one(tmp_path):
    mem = fsspec.filesystem("memory")
    schema = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.string())])
    try:
        for part in ("k=1", "k=2"):
            for f in range(2):
                local = tmp_path / part / f"{f}.arrow"
                local.parent.mkdir(exist_ok=True)
                with arrowmm.new_file(str(local), schema, statistics=True) as w:
                    w.write({"x": list(range(10 * f, 10 * f + 10)), "s": [part] * 10})
                    w.write({"x": [100 + f], "s": [None]})
                mem.pipe_file(f"/ds/{part}/{f}.arrow", local.read_bytes())
        mem.pipe_file("/ds/_hidden.arrow", b"not read")
        flt = [("x", ">=", 5), ("k", "==", 2)]
        remote = arrowmm.dataset("memory://ds", partitioning="hive")
        assert remote.files == ["/ds/k=1/0.arrow", "/ds/k=1/1.arrow", "/ds/k=2/0.arrow",
                                "/ds/k=2/1.arrow"]
        want = pads.dataset(str(tmp_path), format="ipc", partitioning="hive").to_table(
            filter=(pa.compute.field("x") >= 5) & (pa.compute.field("k") == 2))
        assert pa.table(remote.to_table(filter=flt)).equals(want)
        same = arrowmm.dataset("/ds", filesystem=mem, partitioning="hive")
        assert same.count_rows() == 44 and same.count_rows(filter=flt) == want.num_rows
        # a file in the IPC stream format is read as it comes
        stream = tmp_path / "s.arrows"
        with arrowmm.new_stream(str(stream), schema) as w:
            w.write({"x": [7, 8], "s": ["p", "q"]})
        mem.pipe_file("/ds/k=2/z.arrows", stream.read_bytes())
        assert arrowmm.dataset("memory://ds/k=2/z.arrows").to_table().to_pydict() == \
            {"x": [7, 8], "s": ["p", "q"]}
        assert arrowmm.dataset("memory://ds", partitioning="hive").count_rows(
            filter=[("x", "==", 8)]) == 3  # (the stream's row, k=1/0.arrow's and k=2/0.arrow's)
        mem.rm("/ds/k=2/z.arrows")
        # a Spark manifest on the filesystem is honoured as on a local disk
        mem.pipe_file("/ds/k=1/_SUCCESS", b'{"files": ["1.arrow"]}')
        assert arrowmm.dataset("memory://ds").files == ["/ds/k=1/1.arrow", "/ds/k=2/0.arrow",
                                                        "/ds/k=2/1.arrow"]
    finally:
        mem.rm("/ds", recursive=True)
