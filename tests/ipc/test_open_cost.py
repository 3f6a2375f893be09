"""What opening a mapped IPC file costs (issue 34, row 5 of bench_paths): the magic, the trailer
and the footer are read with the mapping (``file_mapping.map_file(ends=True)``), so a
schema-only open faults in none of the mapping's pages, and every check of the open still
runs: a footer beyond the bytes read with the mapping, a damaged trailer, an append in
progress and a FIFO read as before."""
from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.ipc.read.file_mapping import ENDS_TAIL, map_file, tail_reader


def _write(path, batches: int, rows: int = 4, columns: int = 3) -> pa.Table:
    table = pa.table({f"c{k}": np.arange(rows, dtype=np.int64) + k for k in range(columns)})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        for _ in range(batches):
            w.write_table(table)
    return pa.ipc.open_file(str(path)).read_all()


def _resident(reader) -> int:
    got = reader.memory()["resident"]
    if got is None:
        pytest.skip("this platform does not say which pages of a mapping are resident")
    return got


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident pages: /proc/self/smaps")
def test_a_schema_only_open_touches_no_page_of_the_mapping(tmp_path):
    path = tmp_path / "t.arrow"
    _write(path, batches=1000)  # (a 300 KB file: its footer, 24 KB, is read with the mapping)
    with arrowmm.open_file(path) as r:
        assert r.schema.names == ["c0", "c1", "c2"] and r.num_record_batches == 1000
        assert _resident(r) == 0  # (before: the first and the last pages, and their neighbours)
        assert r.get_batch(-1).column(2).to_pylist() == [2, 3, 4, 5]
        assert _resident(r) > 0  # (a batch's bytes are read from the mapping)


@pytest.mark.parametrize("batches", [3000, 12000])  # footers of 72 KB and 288 KB
def test_footers_beyond_the_bytes_read_with_the_mapping_read_as_pyarrow_reads_them(tmp_path,
                                                                                    batches):
    path = tmp_path / "t.arrow"
    want = _write(path, batches=batches, rows=1, columns=1)
    assert os.path.getsize(path) > ENDS_TAIL
    with arrowmm.open_file(path) as r:
        assert r.num_record_batches == batches
        assert pa.table(r).equals(want)


def test_the_ends_read_with_the_mapping_serve_one_open_only(tmp_path):
    path = tmp_path / "t.arrow"
    _write(path, batches=2)
    region = map_file(path, ends=True)
    first = tail_reader(region)
    size = region.size
    assert first(size - 6, 6) == b"ARROW1" and first(0, 6) == b"ARROW1"
    first.close()
    with open(path, "r+b") as f:  # (the file changes after the open: a later reader sees it)
        f.seek(size - 6)
        f.write(b"XXXXXX")
    later = tail_reader(region)
    try:
        assert later(size - 6, 6) == b"XXXXXX"
    finally:
        later.close()


def test_a_damaged_trailer_is_still_refused_and_still_recovered(tmp_path):
    path = tmp_path / "t.arrow"
    want = _write(path, batches=3)
    data = bytearray(path.read_bytes())
    data[-12] ^= 0xFF  # (the footer length's bytes: the trailer no longer adds up)
    data[-8] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(arrowmm.ArrowInvalid, match="footer"):
        arrowmm.open_file(path)
    with arrowmm.open_file(path, recover=True) as r:
        assert r.recovery_error and pa.table(r).equals(want)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_path_is_read_whole(tmp_path):
    path = tmp_path / "t.arrow"
    want = _write(path, batches=2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # (the writer end: the file's bytes, then gone)
        try:
            with open(fifo, "wb") as w:
                w.write(path.read_bytes())
        finally:
            os._exit(0)
    try:
        with arrowmm.open_file(fifo) as r:
            assert pa.table(r).equals(want)
    finally:
        os.waitpid(pid, 0)


def test_threads_opening_one_file_and_sharing_a_reader_read_the_same_values(tmp_path):
    from concurrent.futures import ThreadPoolExecutor
    path = tmp_path / "t.arrow"
    want = _write(path, batches=200, rows=3)
    shared = arrowmm.open_file(path)

    def one(i):
        with arrowmm.open_file(path) as r:  # (each open takes the ends of its own mapping)
            own = r.get_batch(i % 200).column(i % 3).to_pylist()
        return own, shared.get_batch(i % 200).column(i % 3).to_pylist()

    with ThreadPoolExecutor(8) as pool:
        for i, (own, via_shared) in enumerate(pool.map(one, range(400))):
            assert own == via_shared == want.column(i % 3).to_pylist()[:3]
    shared.close()
