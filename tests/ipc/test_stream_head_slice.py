"""``StreamReader.head`` and ``slice`` over a stream return the next rows and leave the
rows after them to the next read: the part of the last batch they cut comes first (they
dropped it: review 24: F2)."""
import os
import threading

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm


def _stream_of_7_row_batches(rows: int = 30) -> bytes:
    table = pa.table({"i": pa.array(range(rows), pa.int64())})
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as w:
        for b in table.to_batches(max_chunksize=7):
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def _pipe(data: bytes):
    """The read end of a pipe, as a file object, fed ``data`` by a thread."""
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "wb") as f:
            f.write(data)
    threading.Thread(target=feed, daemon=True).start()
    return os.fdopen(r, "rb")


SOURCES = {"bytes": lambda d: d, "pipe": _pipe}


def _column(table) -> list:
    return table.column("i").to_pylist()


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_head_pages_through_a_stream_without_losing_rows(source):
    data = _stream_of_7_row_batches()
    with arrowmm.open_stream(SOURCES[source](data)) as r:
        pages = [_column(r.head(10)) for _ in range(4)]
    assert pages == [list(range(0, 10)), list(range(10, 20)), list(range(20, 30)), []]


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_the_rows_after_a_slice_are_read_next(source):
    data = _stream_of_7_row_batches()
    with arrowmm.open_stream(SOURCES[source](data)) as r:
        assert _column(r.slice(2, 3)) == [2, 3, 4]
        assert _column(r.slice(0, 0)) == []
        assert _column(r.head(4)) == [5, 6, 7, 8]
        assert [x for b in r for x in b.column("i").to_pylist()] == list(range(9, 30))


def test_an_export_after_head_starts_at_the_next_row():
    with arrowmm.open_stream(_stream_of_7_row_batches()) as r:
        r.head(3)
        assert pa.table(r).column("i").to_pylist() == list(range(3, 30))
